//! `otf2::StepwiseRead` (the web worker's whole load, decoding each rank as its event files
//! arrive) against the whole read (`read_trace`, checked against the official OTF2 reader
//! elsewhere): the same trace, ids and warnings included, on every OTF2 trace of tests/data, and
//! the same error for a cut event file.

use std::path::{Path, PathBuf};
use tracelogic_formats::input::read_paths;
use tracelogic_formats::otf2::{Archive, StepwiseRead};
use tracelogic_formats::{expand_archives, read_trace, FormatError, InputFile};
use tracelogic_model::Trace;

const TRACES: &[&str] = &[
    "samples/pyotf2-generated-4rank",
    "samples/pyotf2-generated-multichunk",
    "samples/pipit-ping-pong-otf2",
    "samples/pipit-ping-pong-otf2-papi",
    "apps/otf2-cc-npb-lu.S.4/trace.tar.zst",
    "apps/otf2-hpcc-4/trace.tar.zst",
    "apps/otf2-lammps-melt-12-xzy/trace.tar.zst",
    "apps/otf2-lammps-melt-8/trace.tar.zst",
    "apps/otf2-npb-bt.S.9/trace.tar.zst",
    "apps/otf2-npb-cg.S.8/trace.tar.zst",
    "apps/otf2-npb-mg.S.16/trace.tar.zst",
];

fn files_of(name: &str) -> Vec<InputFile> {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(name);
    expand_archives(read_paths(&[path]).unwrap()).unwrap()
}

/// The stepwise read of `files`, each part's event files handed in as the worker hands them
/// (from the files' own bytes); `None` when the archive is read in one part.
fn stepwise(files: &[InputFile]) -> Result<Option<Trace>, FormatError> {
    let head: Vec<InputFile> = files
        .iter()
        .map(|f| {
            let bytes = if f.name.ends_with(".evt") {
                Vec::new()
            } else {
                f.bytes.clone()
            };
            InputFile::new(f.name.clone(), bytes)
        })
        .collect();
    let sizes: Vec<u64> = files.iter().map(|f| f.bytes.len() as u64).collect();
    let archive = Archive::open(&head)?;
    let Some(mut read) = StepwiseRead::new(&archive, &sizes)? else {
        return Ok(None);
    };
    assert_eq!(read.bytes_total(), sizes.iter().sum::<u64>());
    for part in 0..read.parts() {
        let events = read
            .event_files(part)
            .into_iter()
            .map(|i| (i, files[i].bytes.clone()))
            .collect();
        read.read_next(events, &mut |_| true)?;
    }
    read.finish()
}

#[test]
fn the_stepwise_read_is_the_whole_read() {
    let mut stepped = 0;
    for name in TRACES {
        let files = files_of(name);
        let whole = read_trace(files.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(whole.format, "otf2", "{name}");
        let Some(trace) = stepwise(&files).unwrap_or_else(|e| panic!("{name} stepwise: {e}")) else {
            assert_eq!(
                whole.num_ranks(),
                1,
                "{name}: only a one-rank trace is read in one part"
            );
            continue;
        };
        stepped += 1;
        assert!(
            serde_json::to_string(&trace).unwrap() == serde_json::to_string(&whole).unwrap(),
            "{name}: the stepwise read differs from the whole read"
        );
    }
    assert!(stepped >= 9, "only {stepped} traces were read stepwise");
}

#[test]
fn a_cut_event_file_fails_as_the_whole_read_fails() {
    for name in ["samples/pyotf2-generated-4rank", "apps/otf2-npb-cg.S.8/trace.tar.zst"] {
        let mut files = files_of(name);
        // Cut two ranks' event files in the middle of a record: the error of the first in
        // location order comes first, whatever part it is in.
        let events: Vec<usize> = (0..files.len()).filter(|&i| files[i].name.ends_with(".evt")).collect();
        for &i in [events[events.len() - 1], events[1]].iter() {
            let cut = files[i].bytes.len() / 2 + 1;
            files[i].bytes.truncate(cut);
        }
        let whole = read_trace(files.clone()).expect_err("a cut event file is an error");
        let stepped = stepwise(&files).expect_err("a cut event file is an error");
        assert_eq!(stepped.to_string(), whole.to_string(), "{name}");
    }
}

#[test]
fn parts_must_all_be_read() {
    let files = files_of("apps/otf2-npb-cg.S.8/trace.tar.zst");
    let head: Vec<InputFile> = files
        .iter()
        .map(|f| {
            InputFile::new(
                f.name.clone(),
                if f.name.ends_with(".evt") {
                    Vec::new()
                } else {
                    f.bytes.clone()
                },
            )
        })
        .collect();
    let sizes: Vec<u64> = files.iter().map(|f| f.bytes.len() as u64).collect();
    let archive = Archive::open(&head).unwrap();
    let read = StepwiseRead::new(&archive, &sizes)
        .unwrap()
        .expect("8 ranks are read in parts");
    let e = read.finish().expect_err("no part was read");
    assert!(e.to_string().contains("0 of 8 parts were read"), "{e}");
}
