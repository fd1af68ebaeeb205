//! End-to-end tests of `tracelogic convert`: real samples read in one format, written in
//! another (optionally restricted and renumbered) and read back by `tracelogic` itself, and bad
//! renumberings refused with a message (exit 2).

mod common;
use common::{code, json, run, sample, stderr};

use serde_json::Value;
use std::path::Path;

fn ok_json(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Value {
    let o = run(args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    json(&o)
}

fn summary(path: &Path) -> Value {
    ok_json(&[&"summary", &path, &"--json"])
}

/// The summary fields that do not name the file or format.
fn content(s: &Value) -> Value {
    let mut s = s.clone();
    let o = s.as_object_mut().unwrap();
    o.remove("source");
    o.remove("format");
    s
}

#[test]
fn every_writer_round_trips_a_real_sample() {
    let dir = tempfile::tempdir().unwrap();
    let original = summary(&sample("npb-mg.S.8"));
    for (format, out) in [("text", "mg.txt"), ("dumpi", "mg-dumpi"), ("otf2", "mg-otf2")] {
        let out = dir.path().join(out);
        let report = ok_json(&[
            &"convert",
            &sample("npb-mg.S.8"),
            &"--format",
            &format,
            &"--out",
            &out,
            &"--json",
        ]);
        assert_eq!(report["from"], "dumpi");
        assert_eq!(report["to"], format);
        assert_eq!(report["ranks"], 8);
        assert_eq!(report["calls"], original["calls"]);
        assert!(report["permutation"].is_null());
        let files = report["files"].as_array().unwrap();
        assert!(!files.is_empty());
        for f in files {
            let path = Path::new(f["path"].as_str().unwrap());
            assert_eq!(std::fs::metadata(path).unwrap().len(), f["bytes"].as_u64().unwrap());
        }
        let back = summary(&out);
        assert_eq!(back["format"], format);
        for field in [
            "ranks",
            "calls",
            "calls_per_rank",
            "p2p_bytes",
            "p2p_messages",
            "matched_messages",
        ] {
            assert_eq!(back[field], original[field], "{format}: {field}");
        }
    }
}

#[test]
fn renumbering_permutes_the_matrix_and_reverse_twice_is_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let bt = sample("npb-bt.S.9");
    let once = dir.path().join("bt-rev.txt");
    let report = ok_json(&[
        &"convert",
        &bt,
        &"--format",
        &"text",
        &"--out",
        &once,
        &"--renumber",
        &"reverse",
        &"--json",
    ]);
    let perm: Vec<usize> = report["permutation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(perm, (0..9).rev().collect::<Vec<_>>());
    let matrix = |p: &Path| ok_json(&[&"matrix", &p, &"--json"]);
    let (m, r) = (matrix(&bt), matrix(&once));
    let rows = |v: &Value| -> Vec<Vec<u64>> {
        v["bytes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect())
            .collect()
    };
    let (a, b) = (rows(&m), rows(&r));
    assert_eq!(a.len(), 9);
    for s in 0..9 {
        for d in 0..9 {
            assert_eq!(a[s][d], b[perm[s]][perm[d]], "{s}->{d}");
        }
    }
    // Per-rank call counts move with their process.
    let (sa, sb) = (summary(&bt), summary(&once));
    for r in 0..9 {
        assert_eq!(sa["calls_per_rank"][r], sb["calls_per_rank"][perm[r]]);
    }
    let twice = dir.path().join("bt-rev-rev.txt");
    ok_json(&[
        &"convert",
        &once,
        &"--format",
        &"text",
        &"--out",
        &twice,
        &"--renumber",
        &"reverse",
        &"--json",
    ]);
    assert_eq!(content(&summary(&twice)), content(&sa));
    assert_eq!(rows(&matrix(&twice)), a);
}

#[test]
fn a_placement_file_and_a_selection_are_applied_in_that_order() {
    let dir = tempfile::tempdir().unwrap();
    let placement = dir.path().join("placement.txt");
    std::fs::write(&placement, "# new rank of each rank\n3\n2\n1\n0\n").unwrap();
    let out = dir.path().join("t.txt");
    let report = ok_json(&[
        &"convert",
        &sample("sstmacro-dumpi-testtrace"),
        &"--format",
        &"text",
        &"--out",
        &out,
        &"--renumber",
        &placement,
        &"--ranks",
        &"0",
        &"--json",
    ]);
    assert_eq!(report["permutation"], serde_json::json!([3, 2, 1, 0]));
    assert_eq!(report["selection"]["ranks"], serde_json::json!([0]));
    let s = summary(&out);
    // Only original rank 0 kept its calls; it is rank 3 now.
    let calls: Vec<u64> = s["calls_per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(calls.len(), 4);
    assert!(calls[3] > 0, "{calls:?}");
    assert_eq!(calls[..3], [0, 0, 0], "{calls:?}");
    assert_eq!(calls[3], report["calls"].as_u64().unwrap());
}

#[test]
fn bad_renumberings_and_outputs_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.txt");
    let lu = sample("npb-lu.S.8");
    let short = dir.path().join("short.txt");
    std::fs::write(&short, "0\n1\n").unwrap();
    let repeated = dir.path().join("repeated.txt");
    std::fs::write(&repeated, "0\n1\n2\n3\n4\n5\n6\n6\n").unwrap();
    let words = dir.path().join("words.txt");
    std::fs::write(&words, "0\n1\nseven\n").unwrap();
    for (renumber, expected) in [
        (short.to_str().unwrap(), "names 2 ranks but the trace has 8"),
        (repeated.to_str().unwrap(), "ranks 6 and 7 would both become 6"),
        (words.to_str().unwrap(), "line 3: `seven` is not a rank number"),
        ("random:-1", "is not a whole number"),
        ("/no/such/placement", "cannot read it as a file"),
    ] {
        let o = run(&[
            &"convert",
            &lu,
            &"--format",
            &"text",
            &"--out",
            &out,
            &"--renumber",
            &renumber,
        ]);
        assert_eq!(code(&o), 2, "{renumber}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{renumber}: {}", stderr(&o));
        assert!(!out.exists(), "{renumber}: nothing is written on error");
    }
    let o = run(&[&"convert", &lu, &"--format", &"text", &"--out", &dir.path()]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("must be a file for the text format"),
        "{}",
        stderr(&o)
    );
    let o = run(&[&"convert", &lu, &"--format", &"paraver", &"--out", &out]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}
