//! Meep, MIT's FDTD electromagnetics solver (Debian's `meep-openmpi`), on a 2-D waveguide on 8
//! ranks for 12 time steps (`tests/data/apps/meep-8`, recorded by `tools/record/meep.sh`): a
//! program nobody tuned tracelogic for. Meep cuts the cell into one box of voxels per process and
//! exchanges the boxes' boundary fields every time step with `MPI_Isend`/`MPI_Irecv`/
//! `MPI_Waitsome`. Checked against the program's own account: the chunk layout Meep writes itself
//! (`expected/chunk-layout.txt`), its step count (`expected/steps.txt`), its log lines dated on
//! the trace's clock (`expected/log-times.tsv`) and the tracer's decoder (`expected/perrank.txt`,
//! `expected/dumpi2ascii-counts.txt`, `expected/late-sender.txt`).

mod common;
use common::{code, json, run};

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn dir() -> PathBuf {
    common::apps::app_dir("meep-8")
}

fn trace() -> PathBuf {
    dir().join("dumpi.tar.zst")
}

fn expected(name: &str) -> String {
    std::fs::read_to_string(dir().join("expected").join(name)).unwrap()
}

/// Each rank's box from Meep's chunk layout: `(x0, x1, y0, y1)` in pixels.
fn boxes() -> Vec<(i64, i64, i64, i64)> {
    expected("chunk-layout.txt")
        .lines()
        .filter_map(|l| l.strip_prefix("box "))
        .enumerate()
        .map(|(i, l)| {
            let v: Vec<i64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            assert_eq!(v[0], i as i64, "boxes in rank order");
            (v[1], v[2], v[3], v[4])
        })
        .collect()
}

/// The pairs of boxes of `kind` (`face` or `corner`) in Meep's chunk layout.
fn layout_pairs(kind: &str) -> BTreeSet<(usize, usize)> {
    expected("chunk-layout.txt")
        .lines()
        .filter_map(|l| l.strip_prefix(kind))
        .map(|l| {
            let v: Vec<usize> = l.split_whitespace().take(2).map(|x| x.parse().unwrap()).collect();
            (v[0], v[1])
        })
        .collect()
}

/// The time of a dated log line (`expected/log-times.tsv`, seconds since the trace's first event).
fn logged_time(name: &str) -> f64 {
    expected("log-times.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|f| f[0] == name)
        .unwrap_or_else(|| panic!("no line {name} in log-times.tsv"))[3]
        .parse()
        .unwrap()
}

fn logged_steps() -> u64 {
    let s = expected("steps.txt");
    let w: Vec<&str> = s.split_whitespace().collect();
    assert_eq!(w[2], "steps", "{s}");
    w[3].parse().unwrap()
}

/// `RANK SENDS BYTES RECEIVES` per rank from dumpi2ascii.
fn decoded_per_rank() -> Vec<[u64; 3]> {
    expected("perrank.txt")
        .lines()
        .map(|l| {
            let v: Vec<u64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            [v[1], v[2], v[3]]
        })
        .collect()
}

/// The communication graph is the boxes sharing a face in Meep's layout (4 x 2 boxes); the boxes
/// touching only at a corner exchange a few bytes too (the Yee grid's staggered components) and
/// are exactly the pairs the filter removes. The proved mapping puts every rank at its box's place
/// in the grid, up to the grid's mirror symmetries.
#[test]
fn the_graph_is_the_boxes_sharing_a_face_in_meeps_layout() {
    let o = run(&[&"topology", &trace(), &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let faces = layout_pairs("face ");
    let corners = layout_pairs("corner ");
    assert_eq!(faces.len(), 10);
    assert_eq!(corners.len(), 6);
    assert_eq!(common::apps::topology_edges(&v), faces);
    let removed: BTreeSet<(usize, usize)> = v["filter"]["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let (a, b) = (p["a"].as_u64().unwrap() as usize, p["b"].as_u64().unwrap() as usize);
            (a.min(b), a.max(b))
        })
        .collect();
    assert_eq!(removed, corners, "the corner pairs are filtered");
    assert_eq!(v["match"]["family"], "grid", "{}", v["match"]);
    let b = boxes();
    let xs: BTreeSet<i64> = b.iter().map(|b| b.0).collect();
    let ys: BTreeSet<i64> = b.iter().map(|b| b.2).collect();
    let dims: Vec<u64> = v["match"]["dims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .collect();
    assert_eq!(
        dims,
        vec![xs.len() as u64, ys.len() as u64],
        "named as Meep's 4 x 2 boxes"
    );
    let place = |set: &BTreeSet<i64>, x: i64| set.iter().position(|&s| s == x).unwrap() as u64;
    for (axis, set) in [(0, &xs), (1, &ys)] {
        let n = set.len() as u64;
        let mut ways = BTreeSet::new();
        for m in v["mapping"].as_array().unwrap() {
            let r = m["rank"].as_u64().unwrap() as usize;
            let at = place(set, if axis == 0 { b[r].0 } else { b[r].2 });
            let c = m["coords"][axis].as_u64().unwrap();
            assert!(
                c == at || c == n - 1 - at,
                "rank {r} axis {axis}: coordinate {c}, box place {at}"
            );
            ways.insert(c == at);
        }
        assert_eq!(ways.len(), 1, "axis {axis}: one orientation for every rank");
    }
}

/// The logical trace expands back to every rank's sends, bytes and receives as the decoder counts
/// them, the corner exchanges kept as offset directions.
#[test]
fn the_logical_trace_is_exact_with_the_decoders_counts() {
    let o = run(&[&"logical", &trace(), &"--compress", &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let per_rank = v["verification"]["per_rank"].as_array().unwrap();
    let truth = decoded_per_rank();
    assert_eq!(per_rank.len(), truth.len());
    for r in per_rank {
        assert_eq!(r["structure_exact"], true, "{r}");
        assert_eq!(r["bytes_exact"], true, "{r}");
        let t = truth[r["rank"].as_u64().unwrap() as usize];
        assert_eq!(r["real_calls"].as_u64().unwrap(), t[0] + t[2], "sends + receives: {r}");
    }
    let sent: u64 = truth.iter().map(|t| t[1]).sum();
    let bytes: u64 = per_rank.iter().map(|r| r["real_bytes"].as_u64().unwrap()).sum();
    assert_eq!(bytes, 2 * sent, "every byte sent and received");
    assert_eq!(sent, common::apps::decoded_count(&dir(), "p2p_send_bytes"));
    assert_eq!(v["dropped_calls_fraction"].as_f64().unwrap(), 0.0);
}

/// Rank 3's expansion (an interior box: east, west, north and two corners) sends, carries and
/// receives what the decoder counts on that rank.
#[test]
fn an_interior_ranks_expansion_is_its_decoded_traffic() {
    let o = run(&[&"logical", &trace(), &"--expand-rank", &"3", &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let calls = v["calls"].as_array().unwrap();
    let sends: Vec<&Value> = calls
        .iter()
        .filter(|c| c["direction"] == "send" && !c["peer"].is_null())
        .collect();
    let recvs = calls.iter().filter(|c| c["direction"] == "recv").count() as u64;
    let t = decoded_per_rank()[3];
    assert_eq!(sends.len() as u64, t[0]);
    assert_eq!(sends.iter().map(|c| c["bytes"].as_u64().unwrap()).sum::<u64>(), t[1]);
    assert_eq!(recvs, t[2]);
}

/// Scalasca's late sender, computed by `tools/record/late-sender.py` from the decoder's output
/// (each receive matched to its send in posting order, the `MPI_Waitsome` that completed it
/// found by its request, the largest wait of a call counted once): `waits` gives every rank's
/// figure to the nanosecond.
#[test]
fn late_sender_waiting_is_the_decoders_to_the_nanosecond() {
    let o = run(&[&"waits", &trace(), &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let mut total = 0u64;
    for line in expected("late-sender.txt").lines() {
        let (who, ns) = line.split_once(' ').unwrap();
        let ns: u64 = ns.parse().unwrap();
        if who == "total" {
            assert_eq!(ns, total);
            assert!((v["late_sender_s"].as_f64().unwrap() - ns as f64 / 1e9).abs() < 1e-9);
            continue;
        }
        total += ns;
        let r: usize = who.parse().unwrap();
        let got = v["by_rank"][r]["late_sender_s"].as_f64().unwrap();
        assert!(
            (got - ns as f64 / 1e9).abs() < 1e-9,
            "rank {r}: {got} s, decoder {ns} ns"
        );
    }
    assert!(total > 0, "Meep's ranks waited for late senders");
}

/// Meep's stages: MPI start-up, the structure (its log's "Initializing structure" ... "time for
/// set_epsilon", with the only `MPI_Barrier`), the fields' set-up (`MPI_Allreduce`s, no
/// point-to-point), then the time steps. The sections are exactly set-up and time steps: the
/// first without point-to-point and holding the Barrier, the second beginning after the log's
/// `set_epsilon` line and before its "run 0 finished" line, on Meep's 4 x 2 boxes.
#[test]
fn set_up_and_time_steps_are_two_sections_where_the_log_dates_them() {
    let o = run(&[&"phases", &trace(), &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let sections = v["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 2, "{}", v["sections"]);
    let (setup, steps) = (&sections[0], &sections[1]);
    assert_eq!(setup["topology"]["messages"], 0, "{setup}");
    assert!(
        setup["collectives"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c[0] == "MPI_Barrier"),
        "{setup}"
    );
    let start = steps["time"][0].as_f64().unwrap() / 1e9;
    let (epsilon, finished) = (logged_time("epsilon"), logged_time("finished"));
    assert!(
        epsilon < start && start < finished,
        "steps from {start} s; log: set_epsilon {epsilon} s, finished {finished} s"
    );
    assert_eq!(steps["topology"]["family"], "grid", "{steps}");
    assert_eq!(steps["topology"]["ranks"], 8);
    // Each rank's events are cut into one stretch per phase, so a message is counted in exactly
    // one phase, even where a rank's parts of two occurrences overlap: the phases' messages, and
    // the sections', add up to the decoder's sends.
    let sends: u64 = decoded_per_rank().iter().map(|r| r[0]).sum();
    let phases = v["phases"].as_array().unwrap();
    for parts in [sections, phases] {
        let n: u64 = parts
            .iter()
            .map(|p| p["topology"]["messages"].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(n, sends, "messages over {} parts", parts.len());
    }
    // On every rank the phases' stretches follow one another: phase k + 1 begins at the event
    // after phase k's last, and no two overlap in time.
    for r in 0..8u64 {
        let spans: Vec<&Value> = phases
            .iter()
            .flat_map(|p| p["ranks"].as_array().unwrap().iter().filter(|s| s["rank"] == r))
            .collect();
        assert_eq!(spans[0]["first_event"], 0, "rank {r}");
        for w in spans.windows(2) {
            let next = w[0]["last_event"].as_u64().unwrap() + 1;
            assert_eq!(
                w[1]["first_event"].as_u64().unwrap(),
                next,
                "rank {r}: {} then {}",
                w[0],
                w[1]
            );
            assert!(
                w[0]["end"].as_u64().unwrap() <= w[1]["start"].as_u64().unwrap(),
                "rank {r}"
            );
        }
    }
}

/// Every rank's most frequent pattern is its time step, found in every step but one (the first
/// steps also carry `MPI_Allreduce`s of Meep's set-up, so one of them differs).
#[test]
fn every_ranks_main_pattern_is_its_time_step() {
    let o = run(&[&"patterns", &trace(), &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let steps = logged_steps();
    assert_eq!(steps, 12);
    let per_rank = v["rank_patterns"].as_object().unwrap();
    assert_eq!(per_rank.len(), 8);
    for (r, ps) in per_rank {
        let top = ps
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["frequency"].as_u64().unwrap())
            .max()
            .unwrap();
        assert_eq!(top, steps - 1, "rank {r}");
    }
}

/// The first communication pattern is the time step, as often as Meep's log says (one step may
/// join the set-up's exchange: a step is cut where the ranks' loop copies are, and the first
/// copy on some ranks starts inside the set-up). A few messages cross a step boundary whatever
/// the cut; iterations are matched by most of their messages (docs/patterns.md).
#[test]
fn the_time_step_is_a_communication_pattern_as_often_as_the_log_says() {
    let o = run(&[&"patterns", &trace(), &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let steps = logged_steps();
    let first = &v["communication_patterns"][0];
    let occ = first["occurrences"].as_u64().unwrap();
    assert!(occ + 1 >= steps && occ <= steps, "{occ} occurrences for {steps} steps");
}

/// The time steps fold into one loop of about Meep's step count whose body holds the boundary
/// exchange (`MPI_Isend`): the `MPI_Waitsome` calls completing a step's messages, 1 to 4 of them
/// as timing decides, are one completion record (docs/logical.md, step 4). (The set-up's twelve
/// `MPI_Allreduce`s make a loop of 12 too, which is why the body is checked.)
#[test]
fn the_time_steps_fold_into_one_loop() {
    fn has_isend(n: &Value) -> bool {
        n["shape"]["function"] == "MPI_Isend" || n["body"].as_array().is_some_and(|b| b.iter().any(has_isend))
    }
    fn step_loops(nodes: &[Value], steps: u64, out: &mut Vec<u64>) {
        for n in nodes {
            if n["node"] == "loop" {
                let c = n["count"]["value"].as_u64().unwrap_or(0);
                if n["count"]["form"] == "constant" && c + 2 >= steps && c <= steps && has_isend(n) {
                    out.push(c);
                }
                if let Some(b) = n["body"].as_array() {
                    step_loops(b, steps, out);
                }
            }
        }
    }
    let o = run(&[&"logical", &trace(), &"--compress", &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let steps = logged_steps();
    let mut found = Vec::new();
    step_loops(v["program"]["nodes"].as_array().unwrap(), steps, &mut found);
    assert!(
        !found.is_empty(),
        "no loop of about {steps} iterations holding MPI_Isend"
    );
}
