//! Every minimised fuzzer crasher in `tests/data/regressions/` (see docs/reliability.md) read
//! again: through the generic entry point [`read_trace`] and through the reader of the fuzz
//! target that found it (the file name's prefix), each must give a trace or an error that names
//! a file and says what is wrong — never a panic.
//!
//! The files are fuzz inputs as the targets take them: `read_csv-*` and `read_text-*` are one
//! file's bytes; every other prefix is a *pack* (for each file: name, NUL, little-endian `u32`
//! length, bytes; a truncated last file keeps what is there), the format of `tracelogic_formats::pack`.
//! Hand-made hostile inputs (decompression bombs, header counts far beyond the file) sit
//! alongside. A `NAME.expect` file pins the outcome: `trace`, or a phrase the error must contain.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use tracelogic_formats::pack::unpack;
use tracelogic_formats::{csv, dumpi, otf2, paraver, read_trace, text, FormatError, InputFile, NoProgress};
use tracelogic_model::Trace;

/// The input set of a crasher and the reader of the target that found it.
type Reader = fn(&[InputFile]) -> Result<Trace, FormatError>;

fn target_of(name: &str, bytes: &[u8]) -> (Vec<InputFile>, Option<Reader>) {
    let target = name.split('-').next().unwrap_or("");
    let single = |file: &str| vec![InputFile::new(file, bytes.to_vec())];
    match target {
        "read_csv" => (single("trace.csv"), Some(|f| csv::read(f, &mut NoProgress))),
        "read_text" => (single("trace.txt"), Some(|f| text::read(f, &mut NoProgress))),
        "read_otf2" => (unpack(bytes), Some(|f| otf2::read(f, &mut NoProgress))),
        "read_dumpi" => (unpack(bytes), Some(|f| dumpi::read(f, &mut NoProgress))),
        "read_paraver" => (unpack(bytes), Some(|f| paraver::read(f, &mut NoProgress))),
        _ => (unpack(bytes), None),
    }
}

/// A trace, or an error that says which file and what (and matches `expect`, if given);
/// anything else fails the test.
fn check(what: &str, expect: Option<&str>, result: std::thread::Result<Result<Trace, FormatError>>) -> Option<Trace> {
    match result {
        Ok(Ok(trace)) => {
            if let Some(phrase) = expect.filter(|&e| e != "trace") {
                panic!("{what}: read as a trace, expected an error saying `{phrase}`");
            }
            Some(trace)
        }
        Ok(Err(e)) => {
            assert!(!e.file.is_empty(), "{what}: error names no file: {e}");
            assert!(!e.message.trim().is_empty(), "{what}: error says nothing: {e}");
            if let Some(phrase) = expect {
                assert!(e.to_string().contains(phrase), "{what}: expected `{phrase}`, got: {e}");
            }
            None
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("{what}: panicked: {msg}");
        }
    }
}

#[test]
fn every_fuzzer_crasher_reads_as_a_trace_or_an_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/regressions");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("the regressions folder exists")
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            p.is_file() && name.starts_with("read_") && !name.ends_with(".expect")
        })
        .collect();
    entries.sort();
    assert!(!entries.is_empty(), "no crasher in {}", dir.display());
    for path in &entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap();
        let expect = std::fs::read_to_string(dir.join(format!("{name}.expect"))).ok();
        let expect = expect.as_deref().map(str::trim);
        let (files, reader) = target_of(&name, &bytes);
        let generic = files.clone();
        check(
            &format!("{name} via read_trace"),
            expect,
            catch_unwind(move || read_trace(generic)),
        );
        if let Some(reader) = reader {
            let trace = check(
                &format!("{name} via its reader"),
                expect,
                catch_unwind(AssertUnwindSafe(|| reader(&files))),
            );
            // The text target also requires an accepted trace to write and read back unchanged.
            if let (Some(trace), true) = (trace, name.starts_with("read_text")) {
                let written = text::write(&trace);
                let again = text::read(&[InputFile::new("again.txt", written.clone())], &mut NoProgress)
                    .unwrap_or_else(|e| panic!("{name}: written trace does not read back: {e}"));
                assert_eq!(text::write(&again), written, "{name}: write -> read -> write differs");
            }
        }
    }
}
