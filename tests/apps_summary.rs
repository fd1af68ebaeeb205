//! `tracelogic summary` on the real application runs of `tests/data/apps` against counts taken at
//! recording time with the tracer's own decoder: `expected/dumpi2ascii-counts.txt`, written by
//! `tools/record/dumpi-counts.sh` (an awk pipeline over `dumpi2ascii` of SST DUMPI 13.0.0):
//! calls per MPI function and per rank, point-to-point sends, their bytes (count × size of the
//! predefined datatype) and receives. The OTF2 runs (`otf2-*`, recorded with tools/otf2-tracer)
//! are checked the same way against `expected/otf2-print-counts.txt`, counted with the official
//! OTF2 reader `otf2-print` by `tools/record/otf2-counts.sh`.

mod common;
use common::{code, json, run, stderr};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The counts file of one run.
#[derive(Default)]
struct Counts {
    calls: BTreeMap<String, u64>,
    calls_total: u64,
    rank_calls: Vec<u64>,
    sends: u64,
    send_bytes: u64,
    sends_unknown_type: u64,
    receives: u64,
}

/// The counts file a run has: the DUMPI decoder's or the official OTF2 reader's.
fn counts_file(dir: &Path) -> Option<PathBuf> {
    ["expected/dumpi2ascii-counts.txt", "expected/otf2-print-counts.txt"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.exists())
}

fn counts(dir: &Path) -> Counts {
    let text = std::fs::read_to_string(counts_file(dir).unwrap()).unwrap();
    let mut c = Counts::default();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let num = |s: &str| s.parse::<u64>().unwrap_or_else(|_| panic!("not a count: {line}"));
        match w.as_slice() {
            ["calls", f, n] => {
                c.calls.insert(f.to_string(), num(n));
            }
            ["calls_total", n] => c.calls_total = num(n),
            ["rank_calls", r, n] => {
                assert_eq!(num(r) as usize, c.rank_calls.len(), "ranks in order");
                c.rank_calls.push(num(n));
            }
            ["p2p_sends", n] => c.sends = num(n),
            ["p2p_send_bytes", n] => c.send_bytes = num(n),
            ["p2p_sends_unknown_type", n] => c.sends_unknown_type = num(n),
            ["p2p_receives", n] => c.receives = num(n),
            _ => panic!("unexpected line in the counts file: {line}"),
        }
    }
    assert!(!c.rank_calls.is_empty(), "no per-rank counts");
    c
}

fn app_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| counts_file(p).is_some())
        .collect();
    dirs.sort();
    dirs
}

fn trace_of(dir: &Path) -> PathBuf {
    ["dumpi.tar.zst", "trace.tar.zst"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.exists())
        .unwrap_or_else(|| dir.to_path_buf())
}

fn is_otf2(dir: &Path) -> bool {
    dir.join("expected/otf2-print-counts.txt").exists()
}

fn check(dir: &Path) {
    let name = dir.file_name().unwrap().to_string_lossy();
    let want = counts(dir);
    let o = run(&[&"summary", &trace_of(dir), &"--json"]);
    assert_eq!(code(&o), 0, "{name}: {}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["format"], if is_otf2(dir) { "otf2" } else { "dumpi" }, "{name}");
    assert_eq!(v["ranks"].as_u64(), Some(want.rank_calls.len() as u64), "{name}: ranks");
    let by_kind: BTreeMap<String, u64> = serde_json::from_value(v["calls_by_kind"].clone()).unwrap();
    assert_eq!(by_kind, want.calls, "{name}: calls by function");
    assert_eq!(v["calls"].as_u64(), Some(want.calls_total), "{name}: calls");
    let per_rank: Vec<u64> = serde_json::from_value(v["calls_per_rank"].clone()).unwrap();
    assert_eq!(per_rank, want.rank_calls, "{name}: calls per rank");
    assert_eq!(
        v["p2p_messages"].as_u64(),
        Some(want.sends),
        "{name}: point-to-point sends"
    );
    assert_eq!(
        v["p2p_receives"].as_u64(),
        Some(want.receives),
        "{name}: point-to-point receives"
    );
    let bytes = v["p2p_bytes"].as_u64().unwrap();
    if want.sends_unknown_type == 0 {
        assert_eq!(bytes, want.send_bytes, "{name}: point-to-point bytes");
    } else {
        // Sends of derived datatypes (hpcc's HPL and PTRANS, QE) carry bytes the decoder cannot
        // size (the reader sizes them by the types' constructors, docs/formats.md).
        assert!(
            bytes > want.send_bytes,
            "{name}: {bytes} bytes, the predefined-type sends alone carry {}",
            want.send_bytes
        );
    }
}

#[test]
fn every_recorded_run_is_in_this_test() {
    let names: Vec<String> = app_dirs()
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.len() >= 11, "recorded runs with counts: {names:?}");
    assert!(
        names.iter().filter(|n| n.starts_with("otf2-")).count() >= 3,
        "OTF2 runs with counts: {names:?}"
    );
}

#[test]
fn summary_of_lammps_runs_agrees_with_dumpi2ascii() {
    for d in app_dirs()
        .iter()
        .filter(|d| d.file_name().unwrap().to_string_lossy().starts_with("lammps-"))
    {
        check(d);
    }
}

#[test]
fn summary_of_hpcc_runs_agrees_with_dumpi2ascii() {
    for d in app_dirs()
        .iter()
        .filter(|d| d.file_name().unwrap().to_string_lossy().starts_with("hpcc-"))
    {
        check(d);
    }
}

#[test]
fn summary_of_nas_runs_agrees_with_dumpi2ascii() {
    for d in app_dirs()
        .iter()
        .filter(|d| d.file_name().unwrap().to_string_lossy().starts_with("npb-"))
    {
        check(d);
    }
}

#[test]
fn summary_of_meep_runs_agrees_with_dumpi2ascii() {
    for d in app_dirs()
        .iter()
        .filter(|d| d.file_name().unwrap().to_string_lossy().starts_with("meep-"))
    {
        check(d);
    }
}

#[test]
fn summary_of_otf2_runs_agrees_with_otf2_print() {
    for d in app_dirs()
        .iter()
        .filter(|d| d.file_name().unwrap().to_string_lossy().starts_with("otf2-"))
    {
        check(d);
    }
}
