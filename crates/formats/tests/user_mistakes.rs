//! User mistakes that used to read without a word and give a wrong answer: a rank file given twice
//! with different content, another run's rank files in the folder, an OTF2 location without its
//! local definitions, a Paraver trace without its `.pcf` or cut short, and the input messages that
//! did not name what they were about. Each now gives an error or a warning naming the file.

use std::path::{Path, PathBuf};
use tracelogic_formats::input::read_paths;
use tracelogic_formats::{read_trace, InputFile};
use tracelogic_model::Trace;

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples")
}

const LU: &str = "npb-lu.S.8";
const LU_PREFIX: &str = "dumpi-2026.11.22.08.59.38";
const MG: &str = "npb-mg.S.8";
const MG_PREFIX: &str = "dumpi-2026.11.22.08.59.44";
const BT: &str = "npb-bt.S.9";
const LULESH: &str = "lulesh_7+1_with_uncores_sockets1+2.chop8";

/// A sample folder's files as the CLI reads them (named by their path inside the folder).
fn folder(name: &str) -> Vec<InputFile> {
    read_paths(&[samples().join(name)]).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn rank_file(prefix: &str, rank: u32) -> String {
    format!("{prefix}-{rank:04}.bin")
}

fn bytes_of(files: &[InputFile], name: &str) -> Vec<u8> {
    files
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("{name} is not among the files"))
        .bytes
        .clone()
}

fn warned(trace: &Trace, parts: &[&str]) -> bool {
    trace.warnings.iter().any(|w| parts.iter().all(|p| w.contains(p)))
}

/// The Paraver sample kept with the tests, by file name.
fn lulesh() -> Vec<InputFile> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/paraver/profet-paraver-lulesh");
    read_paths(&[dir]).expect("lulesh sample")
}

fn with_prv_text(text: &str) -> Vec<InputFile> {
    let mut files = lulesh();
    let prv = format!("{LULESH}.prv");
    files.iter_mut().find(|f| f.name == prv).expect("prv").bytes = text.as_bytes().to_vec();
    files
}

fn lulesh_prv_text() -> String {
    String::from_utf8(bytes_of(&lulesh(), &format!("{LULESH}.prv"))).expect("text")
}

#[test]
fn a_rank_file_given_twice_with_different_content_is_refused_in_either_order() {
    let lu = folder(LU);
    let mg = folder(MG);
    let name = rank_file(LU_PREFIX, 3);
    let foreign = InputFile::new(name.clone(), bytes_of(&mg, &rank_file(MG_PREFIX, 3)));
    let mut after = lu.clone();
    after.push(foreign.clone());
    let mut before = vec![foreign];
    before.extend(lu);
    for files in [after, before] {
        let err = read_trace(files).expect_err("two different rank-3 files must not read");
        assert_eq!(err.file, name, "{err}");
        assert!(err.message.contains("two different files of this name"), "{err}");
    }
}

#[test]
fn an_identical_copy_is_read_once_with_a_warning() {
    let lu = folder(LU);
    let alone = read_trace(lu.clone()).expect("LU");
    let name = rank_file(LU_PREFIX, 3);
    let mut files = lu.clone();
    files.push(InputFile::new(name.clone(), bytes_of(&lu, &name)));
    let twice = read_trace(files).expect("an identical copy reads");
    assert!(warned(&twice, &[&name, "given twice"]), "{:?}", twice.warnings);
    assert_eq!(twice.num_calls(), alone.num_calls());
    assert_eq!(twice.ranks.len(), alone.ranks.len());
}

#[test]
fn two_different_files_of_one_name_on_disk_are_refused_naming_both_paths() {
    let mg = folder(MG);
    let other = tempfile::tempdir().expect("temporary folder");
    let name = rank_file(LU_PREFIX, 3);
    std::fs::write(other.path().join(&name), bytes_of(&mg, &rank_file(MG_PREFIX, 3))).expect("write");
    let lu_dir = samples().join(LU);
    for paths in [
        [lu_dir.clone(), other.path().to_path_buf()],
        [other.path().to_path_buf(), lu_dir.clone()],
    ] {
        let err = read_paths(&paths).expect_err("two different files named alike must not read");
        let text = err.to_string();
        assert_eq!(err.file, paths[1].join(&name).display().to_string(), "{text}");
        assert!(text.contains(&paths[0].join(&name).display().to_string()), "{text}");
        assert!(text.contains("different content"), "{text}");
    }
}

#[test]
fn the_same_folder_or_file_given_twice_is_read_once() {
    let lu_dir = samples().join(LU);
    let once = read_paths(std::slice::from_ref(&lu_dir)).expect("LU");
    let twice = read_paths(&[lu_dir.clone(), lu_dir.clone()]).expect("LU twice");
    assert_eq!(twice, once);
    let with_member = read_paths(&[lu_dir.clone(), lu_dir.join(rank_file(LU_PREFIX, 5))]).expect("LU and a member");
    assert_eq!(with_member, once);
    let trace = read_trace(twice).expect("the folder given twice reads as the trace");
    assert_eq!(trace.num_ranks(), 8);
}

#[test]
fn an_empty_folder_is_named() {
    let empty = tempfile::tempdir().expect("temporary folder");
    let err = read_paths(&[empty.path().to_path_buf()]).expect_err("an empty folder is no trace");
    assert_eq!(err.file, empty.path().display().to_string(), "{err}");
    assert!(err.message.contains("holds no files"), "{err}");
}

#[test]
fn a_rank_file_without_its_meta_is_named() {
    let name = rank_file(LU_PREFIX, 3);
    let err = read_trace(vec![InputFile::new(name.clone(), bytes_of(&folder(LU), &name))]).expect_err("no .meta");
    assert_eq!(err.file, name, "{err}");
    assert!(err.message.contains("no DUMPI .meta file"), "{err}");
}

#[test]
fn another_run_s_rank_files_in_the_folder_are_named_as_ignored() {
    let lu = folder(LU);
    let clean = read_trace(lu.clone()).expect("LU");
    assert!(clean.warnings.is_empty(), "{:?}", clean.warnings);
    let mut files = lu;
    files.extend(folder(MG).into_iter().filter(|f| f.name.ends_with(".bin")));
    let trace = read_trace(files).expect("LU with MG's rank files beside it");
    assert_eq!(trace.num_calls(), clean.num_calls());
    assert!(
        warned(
            &trace,
            &[
                "8 DUMPI rank files",
                "ignored",
                &rank_file(MG_PREFIX, 0),
                "(and 3 more)"
            ]
        ),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn a_rank_beyond_numprocs_left_by_a_larger_run_is_named_as_ignored() {
    let lu = folder(LU);
    let mut files: Vec<InputFile> = (0..8)
        .map(|r| InputFile::new(rank_file("run", r), bytes_of(&lu, &rank_file(LU_PREFIX, r))))
        .collect();
    files.push(InputFile::new("run.meta", bytes_of(&lu, &format!("{LU_PREFIX}.meta"))));
    let bt = folder(BT);
    let stale = bt
        .iter()
        .find(|f| f.name.ends_with("-0008.bin"))
        .expect("BT has rank 8");
    files.push(InputFile::new(rank_file("run", 8), stale.bytes.clone()));
    let trace = read_trace(files).expect("an 8-rank run with a stale rank-8 file");
    assert_eq!(trace.num_ranks(), 8);
    assert!(
        warned(&trace, &["1 DUMPI rank file", "run-0008.bin", "numprocs=8", "ignored"]),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn a_rank_file_of_another_run_renamed_in_is_suspected_from_its_start_time() {
    let mut files = folder(LU);
    let name = rank_file(LU_PREFIX, 3);
    let foreign = bytes_of(&folder(MG), &rank_file(MG_PREFIX, 3));
    files.iter_mut().find(|f| f.name == name).expect("rank 3").bytes = foreign;
    let trace = read_trace(files).expect("a renamed rank file still reads");
    // MG's header says 1795337984, LU's .meta startime=1795337978.
    assert!(
        warned(
            &trace,
            &[&name, "1795337984", "6 s from startime=1795337978", "another run"]
        ),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn an_otf2_location_without_its_local_definitions_is_named() {
    let full = folder("pipit-ping-pong-otf2");
    let clean = read_trace(full.clone()).expect("ping-pong");
    assert!(!warned(&clean, &["local definitions"]), "{:?}", clean.warnings);
    let files: Vec<InputFile> = full.into_iter().filter(|f| f.name != "traces/1.def").collect();
    let trace = read_trace(files).expect("an archive without one local .def still reads");
    assert!(
        warned(
            &trace,
            &[
                "traces/1.def",
                "location 1",
                "missing",
                "traces/0.def holds id mapping tables",
                "global ids"
            ]
        ),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn a_paraver_trace_without_its_pcf_says_so() {
    let pcf = format!("{LULESH}.pcf");
    let files: Vec<InputFile> = lulesh().into_iter().filter(|f| f.name != pcf).collect();
    let trace = read_trace(files).expect("a .prv alone still reads");
    assert_eq!(trace.num_calls(), 0);
    let first = trace.warnings.first().expect("a warning");
    assert!(
        first.contains("no .pcf file") && first.contains(&pcf),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn a_paraver_trace_cut_at_a_line_end_is_flagged_as_shorter_than_its_header() {
    let text = lulesh_prv_text();
    let complete = read_trace(with_prv_text(&text)).expect("lulesh");
    assert!(!warned(&complete, &["truncated"]), "{:?}", complete.warnings);
    // The first 100,000 bytes, up to the end of the line they end in (as an interrupted copy).
    let end = text[..100_000].rfind('\n').expect("a line end") + 1;
    let lines = text[..end].lines().count();
    let trace = read_trace(with_prv_text(&text[..end])).expect("the cut file still reads");
    assert!(
        warned(
            &trace,
            &[
                &format!("looks truncated after line {lines}"),
                "the header says the run lasted 0.567454 s"
            ]
        ),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn a_paraver_record_cut_inside_a_number_is_reported_with_its_line() {
    let text = lulesh_prv_text();
    // An event record in the middle whose last value has several digits: cut its last digit.
    let (start, line) = text
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .filter_map(|s| Some((s, text[s..].lines().next()?)))
        .filter(|(_, l)| l.starts_with("2:") && l.rsplit(':').next().is_some_and(|v| v.len() >= 3))
        .nth(200)
        .expect("an event record");
    let cut = &text[..start + line.len() - 1];
    let line_no = cut.lines().count();
    let trace = read_trace(with_prv_text(cut)).expect("a record cut inside its last number still parses");
    assert!(
        warned(&trace, &[&format!("line {line_no}"), "ends in the middle of a record"]),
        "{:?}",
        trace.warnings
    );
    // Cut where the record no longer parses: the error at that line says the file ends there.
    let cut = &text[..start + 3];
    let err = read_trace(with_prv_text(cut)).expect_err("a record cut after its type");
    assert_eq!(err.line, Some(line_no as u64), "{err}");
    assert!(err.message.contains("the file ends inside this line"), "{err}");
}

#[test]
fn one_dumpi_trace_given_twice_under_two_folder_names_says_so() {
    let lu = folder(LU);
    let mut files = lu.clone();
    files.extend(
        lu.into_iter()
            .map(|f| InputFile::new(format!("{LU}/{}", f.name), f.bytes)),
    );
    let err = read_trace(files).expect_err("two copies of one trace");
    assert_eq!(err.file, format!("{LU}/{LU_PREFIX}.meta"), "{err}");
    assert!(err.message.contains("the same content: one trace given twice"), "{err}");
}

/// A trace named by its main file alone (`otf2-print traces.otf2`, Vampir and Pipit take the
/// anchor; a DUMPI run's `.meta`): the siblings it names are read with it, so the trace equals
/// the one read from its folder; a main file without its siblings still names what is missing.
#[test]
fn a_trace_named_by_its_main_file_reads_its_siblings() {
    for (dir, main) in [
        ("pyotf2-generated-4rank", "traces.otf2"),
        ("sstmacro-dumpi-testtrace", "testtrace.meta"),
        (LU, &*format!("{LU_PREFIX}.meta")),
    ] {
        let whole = read_trace(folder(dir)).unwrap();
        let alone = read_paths(&[samples().join(dir).join(main)]).unwrap_or_else(|e| panic!("{dir}/{main}: {e}"));
        let from_main = read_trace(alone).unwrap_or_else(|e| panic!("{dir}/{main}: {e}"));
        assert_eq!(from_main.num_calls(), whole.num_calls(), "{dir}/{main}");
        assert_eq!(from_main.ranks.len(), whole.ranks.len(), "{dir}/{main}");
        for (a, b) in from_main.ranks.iter().zip(&whole.ranks) {
            assert_eq!(a.calls.enter, b.calls.enter, "{dir}/{main}");
            assert_eq!(a.calls.func, b.calls.func, "{dir}/{main}");
        }
    }
    // An anchor copied alone: its definitions are not there, and the error says so.
    let tmp = std::env::temp_dir().join(format!("tl-anchor-alone-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::copy(
        samples().join("pyotf2-generated-4rank/traces.otf2"),
        tmp.join("traces.otf2"),
    )
    .unwrap();
    let e = read_trace(read_paths(&[tmp.join("traces.otf2")]).unwrap())
        .unwrap_err()
        .to_string();
    std::fs::remove_dir_all(&tmp).ok();
    assert!(e.contains("traces.def"), "{e}");
}
