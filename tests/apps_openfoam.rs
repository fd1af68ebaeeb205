//! OpenFOAM's icoFoam on 8 irregular subdomains (`tests/data/apps/openfoam-cavity-8`, recorded by
//! `tools/record/openfoam-cavity.sh`): a program nobody tuned tracelogic for, on a non-Cartesian
//! placement (a Voronoi partition of the mesh). Checked against the application's own account:
//! `decomposePar`'s log (which subdomains share faces), icoFoam's log (time steps) and the
//! tracer's decoder (`expected/dumpi2ascii-counts.txt`).

mod common;
use common::{code, json, run};

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps/openfoam-cavity-8")
}

fn trace() -> PathBuf {
    dir().join("dumpi.tar.zst")
}

/// The pairs of subdomains that share faces, from `decomposePar`'s log ("Processor P" then
/// "Number of faces shared with processor Q = N").
fn face_pairs() -> BTreeSet<(u64, u64)> {
    let log = std::fs::read_to_string(dir().join("log.decomposePar")).unwrap();
    let mut pairs = BTreeSet::new();
    let mut current = None;
    for line in log.lines().map(str::trim) {
        if let Some(p) = line.strip_prefix("Processor ").and_then(|p| p.parse::<u64>().ok()) {
            current = Some(p);
        }
        if let (Some(p), Some(rest)) = (current, line.strip_prefix("Number of faces shared with processor ")) {
            let q: u64 = rest.split_whitespace().next().unwrap().parse().unwrap();
            pairs.insert((p.min(q), p.max(q)));
        }
    }
    pairs
}

/// A count from the decoder's counts file.
fn decoded(name: &str) -> u64 {
    common::apps::decoded_count(&dir(), name)
}

fn logged_steps() -> u64 {
    let log = std::fs::read_to_string(dir().join("stdout.txt")).unwrap();
    log.lines().filter(|l| l.starts_with("Time = ")).count() as u64
}

/// The halo exchanges follow the partition: every pair of subdomains sharing faces
/// communicates, and no library shape is claimed for an irregular partition.
#[test]
fn the_communication_graph_holds_every_pair_of_subdomains_sharing_faces() {
    let pairs = face_pairs();
    assert!(pairs.len() >= 10, "{pairs:?}");
    let o = run(&[&"topology", &trace(), &"--json"]);
    let v = json(&o);
    assert_eq!(code(&o), 1, "no topology of the library fits an irregular partition");
    assert_eq!(v["match"], Value::Null);
    let edges: BTreeSet<(u64, u64)> = v["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let (a, b) = (e[0].as_u64().unwrap(), e[1].as_u64().unwrap());
            (a.min(b), a.max(b))
        })
        .collect();
    let missing: Vec<_> = pairs.difference(&edges).collect();
    assert!(
        missing.is_empty(),
        "face pairs without an edge: {missing:?} (edges {edges:?})"
    );
    // Four more pairs exchange ~2.4 KB in set-up and a few bytes per step: few edges beyond.
    assert!(edges.len() <= pairs.len() + 4, "{edges:?} against {pairs:?}");
}

/// The logical trace expands back to every rank's calls and bytes as the decoder counts them,
/// and compresses at least twentyfold.
#[test]
fn the_logical_trace_is_exact_and_compressed() {
    let o = run(&[&"logical", &trace(), &"--compress", &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let per_rank = v["verification"]["per_rank"].as_array().unwrap();
    assert_eq!(per_rank.len(), 8);
    for r in per_rank {
        assert_eq!(r["structure_exact"], true, "{r}");
        assert_eq!(r["bytes_exact"], true, "{r}");
    }
    let calls: u64 = per_rank.iter().map(|r| r["real_calls"].as_u64().unwrap()).sum();
    let bytes: u64 = per_rank.iter().map(|r| r["real_bytes"].as_u64().unwrap()).sum();
    assert_eq!(calls, decoded("p2p_sends") + decoded("p2p_receives"));
    // Sent and received: each message's bytes on both of its ranks.
    assert_eq!(bytes, 2 * decoded("p2p_send_bytes"));
    let (raw, compressed) = (
        v["raw_length"].as_u64().unwrap(),
        v["compressed_length"].as_u64().unwrap(),
    );
    assert!(compressed * 20 <= raw, "{raw} records -> {compressed}");
}

/// The time steps are one loop run as many times as the log has steps.
#[test]
fn the_time_steps_are_one_loop() {
    let o = run(&[&"logical", &trace(), &"--compress", &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let steps = logged_steps();
    assert!(steps >= 3, "{steps} steps in the log");
    let counts: Vec<u64> = v["program"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["node"] == "loop" && n["count"]["form"] == "constant")
        .map(|n| n["count"]["value"].as_u64().unwrap())
        .collect();
    assert!(
        counts.contains(&steps),
        "a top-level loop of {steps} iterations (the log's time steps); loops {counts:?}"
    );
}

/// Set-up and the time-step loop are different phases, and the loop is one phase: the phase
/// holding the time steps holds nearly every `MPI_Allreduce` (the solvers' residuals).
#[test]
fn the_time_steps_are_one_phase_after_the_set_up() {
    let o = run(&[&"phases", &trace(), &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let phases = v["phases"].as_array().unwrap();
    assert!((2..=3).contains(&phases.len()), "{} phases", phases.len());
    let allreduce = |p: &Value| -> u64 {
        p["collectives"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c[0] == "MPI_Allreduce")
            .map(|c| c[1].as_u64().unwrap())
            .sum()
    };
    let total: u64 = phases.iter().map(allreduce).sum();
    // Collectives counted once per instance (all 8 ranks take part).
    assert_eq!(
        total * 8,
        decoded("calls MPI_Allreduce"),
        "every Allreduce in some phase"
    );
    let main = phases.iter().map(allreduce).max().unwrap();
    assert!(
        main * 100 >= total * 95,
        "the loop phase holds {main} of {total} Allreduce"
    );
    assert!(allreduce(&phases[0]) * 100 < total, "the first phase is the set-up");
}
