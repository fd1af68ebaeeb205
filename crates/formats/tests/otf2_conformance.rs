//! Conformance of the low-level OTF2 layer with the official reader: the events of each sample
//! archive, rendered in the text format of `crates/formats/tests/tools/otf2_reference_dump.py`, must equal
//! the dump the OTF2 3.2 library produced (`expected/otf2-3.2-reader-dump.txt`) line by line; for
//! the multi-chunk sample, the summary of `otf2_reference_summary.py`.

#[path = "otf2_support.rs"]
mod support;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use support::{dump, load, py_float, py_str, samples};
use tracelogic_formats::otf2::events::EventKind;
use tracelogic_formats::otf2::Archive;

fn assert_same_lines(ours: &[String], expected_path: &Path) {
    let expected = std::fs::read_to_string(expected_path).unwrap();
    let expected: Vec<&str> = expected.lines().collect();
    for (i, (a, b)) in ours.iter().zip(&expected).enumerate() {
        assert_eq!(a, b, "line {} of {} differs", i + 1, expected_path.display());
    }
    assert_eq!(
        ours.len(),
        expected.len(),
        "line count differs from {}",
        expected_path.display()
    );
}

fn check_dump(sample: &str) {
    let files = load(sample);
    let ours = dump(&files);
    assert_same_lines(&ours, &samples().join(sample).join("expected/otf2-3.2-reader-dump.txt"));
}

#[test]
fn score_p_ping_pong_matches_the_official_reader() {
    check_dump("pipit-ping-pong-otf2");
}

#[test]
fn score_p_ping_pong_with_papi_metrics_matches_the_official_reader() {
    check_dump("pipit-ping-pong-otf2-papi");
}

#[test]
fn pyotf2_four_rank_archive_matches_the_official_reader() {
    check_dump("pyotf2-generated-4rank");
}

#[test]
fn multichunk_archive_matches_the_official_summary() {
    let files = load("pyotf2-generated-multichunk");
    let a = Archive::open(&files).unwrap();
    let d = &a.defs;
    let mut out = vec!["# produced by PyPI otf2 3.2 reader".to_string()];
    let mut counts: BTreeMap<u64, BTreeMap<&str, u64>> = BTreeMap::new();
    let mut tsum: HashMap<u64, u64> = HashMap::new();
    let mut lsum: HashMap<u64, u64> = HashMap::new();
    let mut idx: HashMap<u64, u64> = HashMap::new();
    for item in a.merged_events().unwrap() {
        let (l, e) = item.unwrap();
        let (name, extra, len) = match &e.kind {
            EventKind::Enter { region } => (
                "Enter",
                format!(" region={}", d.string(d.regions.get(*region).unwrap().name)),
                0,
            ),
            EventKind::Leave { region } => (
                "Leave",
                format!(" region={}", d.string(d.regions.get(*region).unwrap().name)),
                0,
            ),
            EventKind::MpiSend {
                receiver, tag, length, ..
            } => (
                "MpiSend",
                format!(" receiver={receiver} tag={tag} len={length}"),
                *length,
            ),
            other => panic!("unexpected event {other:?}"),
        };
        *counts.entry(l).or_default().entry(name).or_default() += 1;
        *tsum.entry(l).or_default() += e.time;
        *lsum.entry(l).or_default() += len;
        let i = idx.entry(l).or_default();
        if i.is_multiple_of(997) {
            out.push(format!("sample loc={l} index={i} t={} {name}{extra}", e.time));
        }
        *i += 1;
    }
    for (l, c) in &counts {
        let c: Vec<String> = c.iter().map(|(k, v)| format!("'{k}': {v}")).collect();
        out.push(format!(
            "location {l} total={} counts={{{}}} sum_time={} sum_msg_length={}",
            idx[l],
            c.join(", "),
            tsum[l],
            lsum[l]
        ));
    }
    let expected = samples().join("pyotf2-generated-multichunk/expected");
    let path = std::fs::read_dir(&expected).unwrap().next().unwrap().unwrap().path();
    assert_same_lines(&out, &path);
    // The sample exists to cross a chunk boundary: make sure it does.
    for l in &a.locations {
        let evt = &a.files[l.evt.unwrap()];
        assert!(
            evt.bytes.len() as u64 > a.anchor.chunk_size_events,
            "{} fits in one chunk",
            evt.name
        );
    }
}

#[test]
fn python_float_repr_matches_python() {
    assert_eq!(py_float(1.0), "1.0");
    assert_eq!(py_float(0.1), "0.1");
    assert_eq!(py_float(1e16), "1e+16");
    assert_eq!(py_float(1.5e-7), "1.5e-07");
    assert_eq!(py_str("it's"), "\"it's\"");
}

#[test]
fn multichunk_full_dump_matches_the_official_reader_when_available() {
    // Both locations share every timestamp: this also pins the order of equal-time events.
    if !support::python_otf2_available() {
        return;
    }
    let dir = support::TempDir::new("multichunk-dump");
    let out = dir.0.join("dump.txt");
    let sample = samples().join("pyotf2-generated-multichunk");
    support::run_python(
        &support::tool("otf2_reference_dump.py"),
        &[&sample.join("traces.otf2"), &out],
    );
    assert_same_lines(&dump(&load("pyotf2-generated-multichunk")), &out);
}

#[test]
fn equal_time_events_of_many_locations_merge_as_the_official_reader_does() {
    if !support::python_otf2_available() {
        return;
    }
    for n in [3u32, 5, 8, 13] {
        let dir = support::TempDir::new(&format!("ties{n}"));
        let archive = dir.0.join("archive");
        let n_arg = n.to_string();
        support::run_python(&support::tool("otf2_gen_ties.py"), &[&archive, Path::new(&n_arg)]);
        let out = dir.0.join("dump.txt");
        support::run_python(
            &support::tool("otf2_reference_dump.py"),
            &[&archive.join("traces.otf2"), &out],
        );
        assert_same_lines(&dump(&support::load_dir(&archive)), &out);
    }
}
