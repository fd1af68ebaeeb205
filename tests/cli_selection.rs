//! End-to-end tests of the selection flags on every analysis that restricts the trace before
//! analysing it (`patterns`, `phases`, `replay`, `logical`, `compare`), on the bundled NAS
//! samples: what each keeps, the `selection` object of their JSON, and empty or invalid
//! selections (exit 1 or 2 with a message, never a panic).
//!
//! The binary is found or built as in `tests/cli_end_to_end.rs` (`TRACELOGIC_BIN` overrides).

mod common;
use common::{code, json, run, sample, stderr};

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn ok_json(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Value {
    let o = run(args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    json(&o)
}

/// MPI function → calls of a sample, from `summary --json`.
fn calls_by_function(dir: &Path) -> BTreeMap<String, u64> {
    let v = ok_json(&[&"summary", &dir, &"--json"]);
    serde_json::from_value(v["calls_by_kind"].clone()).unwrap()
}

fn ranks_of(v: &Value) -> BTreeSet<u64> {
    v.as_array().unwrap().iter().map(|r| r.as_u64().unwrap()).collect()
}

#[test]
fn patterns_with_a_rank_selection_report_only_those_ranks() {
    let lu = sample("npb-lu.S.8");
    let all = ok_json(&[&"patterns", &lu, &"--json"]);
    let some = ok_json(&[&"patterns", &lu, &"--ranks", &"0-3", &"--json"]);
    assert_eq!(some["selection"]["ranks"], serde_json::json!([0, 1, 2, 3]));
    let keys: BTreeSet<u64> = some["rank_patterns"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.parse().unwrap())
        .collect();
    assert_eq!(keys, (0..4).collect());
    let cps = some["communication_patterns"].as_array().unwrap();
    assert!(!cps.is_empty());
    for p in cps {
        assert!(ranks_of(&p["ranks"]).iter().all(|&r| r < 4), "{}", p["ranks"]);
        for rank in p["events"].as_object().unwrap().keys() {
            assert!(rank.parse::<u64>().unwrap() < 4, "events of rank {rank}");
        }
    }
    // Ranks 0-3 make fewer calls than the whole run but keep their own streams whole.
    let events = |v: &Value| v["events"].as_u64().unwrap();
    assert!(events(&some) > 0 && events(&some) < events(&all));
    assert_eq!(
        all["rank_patterns"]["2"], some["rank_patterns"]["2"],
        "rank 2's own patterns do not depend on the other ranks"
    );
}

#[test]
fn phases_of_the_first_half_of_the_run_have_fewer_events() {
    let lu = sample("npb-lu.S.8");
    let s = ok_json(&[&"summary", &lu, &"--json"]);
    let (start, end) = (s["start_ns"].as_u64().unwrap(), s["end_ns"].as_u64().unwrap());
    let half = (end - start) / 2;
    let to = format!("{half}ns");
    let all = ok_json(&[&"phases", &lu, &"--json"]);
    let first = ok_json(&[&"phases", &lu, &"--from", &"0", &"--to", &to, &"--json"]);
    let second = ok_json(&[&"phases", &lu, &"--from", &to, &"--json"]);
    // Events inside the phases (each phase's first to last event per rank). Not the number of
    // pattern occurrences: a window cut mid-iteration leaves partial iterations as several
    // short occurrences, so a half can have a longer sequence than the whole run.
    let events = |v: &Value| -> u64 {
        v["phases"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["ranks"].as_array().unwrap())
            .map(|r| r["last_event"].as_u64().unwrap() + 1 - r["first_event"].as_u64().unwrap())
            .sum()
    };
    assert!(
        events(&first) > 0 && events(&first) < events(&all),
        "{} vs {}",
        events(&first),
        events(&all)
    );
    assert!(
        events(&second) > 0 && events(&second) < events(&all),
        "{} vs {}",
        events(&second),
        events(&all)
    );
    assert!(first["sequence_length"].as_u64().unwrap() > 0 && second["sequence_length"].as_u64().unwrap() > 0);
    assert_eq!(first["selection"]["from"], start);
    assert_eq!(first["selection"]["to"], start + half);
    for p in first["phases"].as_array().unwrap() {
        // Pattern occurrences start inside the window (their last call may end after it).
        assert!(p["time"][0].as_u64().unwrap() < start + half, "{p}");
    }
    for p in second["phases"].as_array().unwrap() {
        assert!(p["time"][0].as_u64().unwrap() >= start + half, "{p}");
    }
}

#[test]
fn replay_of_point_to_point_calls_ignores_collectives() {
    let mg = sample("npb-mg.S.8");
    let by_function = calls_by_function(&mg);
    let count = |names: &[&str]| {
        names
            .iter()
            .map(|n| by_function.get(*n).copied().unwrap_or(0))
            .sum::<u64>()
    };
    let replay = |extra: &[&str]| {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"replay", &mg, &"--network", &"10GbE", &"--json"];
        for a in extra {
            args.push(a);
        }
        ok_json(&args)
    };
    let all = replay(&[]);
    let p2p = replay(&["--kind", "p2p"]);
    let coll = replay(&["--kind", "collective"]);
    // The point-to-point calls, and the waits that complete them (completions follow their
    // operations), but no collective, MPI_Init or query.
    assert_eq!(
        p2p["calls"].as_u64().unwrap(),
        count(&["MPI_Irecv", "MPI_Send", "MPI_Wait"])
    );
    assert_eq!(p2p["messages"], all["messages"]);
    assert_eq!(
        coll["calls"].as_u64().unwrap(),
        count(&["MPI_Allreduce", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce"])
    );
    assert_eq!(coll["messages"], 0);
    for v in [&p2p, &coll] {
        for (warning, n) in v["warnings"].as_object().unwrap() {
            assert_eq!(n, 0, "{warning}");
        }
    }
    assert_eq!(
        p2p["selection"]["kinds"],
        serde_json::json!(["Send", "Isend", "Recv", "Irecv", "SendRecv"])
    );
    assert!(all["selection"]["kinds"].is_null());
}

#[test]
fn replay_of_a_window_measures_the_window() {
    let mg = sample("npb-mg.S.8");
    let v = ok_json(&[
        &"replay",
        &mg,
        &"--network",
        &"10GbE",
        &"--from",
        &"100ms",
        &"--to",
        &"300ms",
        &"--json",
    ]);
    let measured = v["measured_s"].as_f64().unwrap();
    // Spans are clipped to the window; a call entered before 300 ms may leave a little later.
    assert!((0.2..0.21).contains(&measured), "{measured}");
}

#[test]
fn logical_takes_the_selection_and_its_rank_list_is_from_ranks() {
    let mg = sample("npb-mg.S.8");
    let v = ok_json(&[&"logical", &mg, &"--from-ranks", &"3", &"--json"]);
    assert_eq!(v["ranks_used"], serde_json::json!([3]));
    assert!(v["selection"]["from"].is_null());
    // The rank list under the old flag name is refused with a pointer to the new one.
    let o = run(&[&"logical", &mg, &"--from", &"0,1"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--from-ranks"), "{}", stderr(&o));
    // Point-to-point only: the hypercube is still found and every rank reproduced.
    let p2p = ok_json(&[&"logical", &mg, &"--kind", &"p2p", &"--compress", &"--json"]);
    assert_eq!(p2p["topology"]["label"], v["topology"]["label"]);
    assert_eq!(p2p["verification"]["overall_share"], 1.0);
    // One rank's own trace in a window is shorter than the whole of it.
    let whole = ok_json(&[&"logical", &mg, &"--rank", &"0", &"--json"]);
    let part = ok_json(&[&"logical", &mg, &"--rank", &"0", &"--to", &"200ms", &"--json"]);
    let len = |v: &Value| v["raw_length"].as_u64().unwrap();
    assert!(len(&part) > 0 && len(&part) < len(&whole));
}

#[test]
fn compare_applies_the_selection_to_every_run() {
    let lu = sample("npb-lu.S.8");
    let mg = sample("npb-mg.S.8");
    let all = ok_json(&[&"compare", &lu, &mg, &"--json"]);
    let v = ok_json(&[&"compare", &lu, &mg, &"--ranks", &"0-3", &"--json"]);
    let sel = v["selections"].as_array().unwrap();
    assert_eq!(sel.len(), 2);
    for s in sel {
        assert_eq!(s["ranks"], serde_json::json!([0, 1, 2, 3]));
    }
    // Only edges touching ranks 0-3 remain, from the sends of those ranks.
    let edges = |v: &Value, which: &str| -> Vec<(u64, u64)> {
        v["graph"][which]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e[0].as_u64().unwrap(), e[1].as_u64().unwrap()))
            .collect()
    };
    for which in ["edges_a", "edges_b"] {
        let e = edges(&v, which);
        assert!(!e.is_empty());
        assert!(e.iter().all(|&(a, _)| a < 4), "{which}: {e:?}");
        assert!(e.len() < edges(&all, which).len(), "{which}");
    }
}

#[test]
fn every_analysis_prints_the_same_selection_object() {
    let mg = sample("npb-mg.S.8");
    let flags: [&dyn AsRef<std::ffi::OsStr>; 6] = [&"--ranks", &"0-5", &"--min-bytes", &"1", &"--to", &"400ms"];
    let mut shapes = Vec::new();
    for sub in ["patterns", "phases", "replay", "logical", "query"] {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&sub, &mg, &"--json"];
        args.extend(flags.iter().copied());
        let o = run(&args);
        assert_eq!(code(&o), 0, "{sub}: {}", stderr(&o));
        // logical finds no topology on 6 of 8 ranks: its directions are rank offsets.
        if sub == "logical" {
            assert_eq!(json(&o)["directions_from"]["placed_by"], "rank_offsets");
        }
        shapes.push((sub, json(&o)["selection"].clone()));
    }
    let lu = sample("npb-lu.S.8");
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"compare", &mg, &lu, &"--json"];
    args.extend(flags.iter().copied());
    shapes.push(("compare", ok_json(&args)["selections"][0].clone()));
    let (_, first) = &shapes[0];
    assert_eq!(first["ranks"], serde_json::json!([0, 1, 2, 3, 4, 5]));
    assert_eq!(first["min_bytes"], 1);
    assert_eq!(first["to"], 400_000_000);
    for (sub, s) in &shapes {
        assert_eq!(s, first, "{sub}");
    }
}

#[test]
fn an_empty_selection_answers_empty_and_a_bad_one_is_refused() {
    let lu = sample("npb-lu.S.8");
    let mg = sample("npb-mg.S.8");
    for sub in ["patterns", "phases", "replay", "logical", "compare"] {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&sub, &lu];
        if sub == "compare" {
            args.push(&mg);
        }
        let mut empty = args.clone();
        empty.extend([&"--from" as &dyn AsRef<std::ffi::OsStr>, &"100s"]);
        let o = run(&empty);
        assert_eq!(code(&o), 1, "{sub}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("selection keeps no MPI call") && stderr(&o).contains("after the end of the run"),
            "{sub}: {}",
            stderr(&o)
        );
        // Exit 1 always comes with its reason on stderr, beside the note.
        let reasons = stderr(&o)
            .lines()
            .filter(|l| l.starts_with("tracelogic:") && !l.contains("note:"))
            .count();
        assert!(reasons >= 1, "{sub} exits 1 without a reason: {}", stderr(&o));
        let mut bad = args.clone();
        bad.extend([&"--ranks" as &dyn AsRef<std::ffi::OsStr>, &"6-9"]);
        let o = run(&bad);
        assert_eq!(code(&o), 2, "{sub}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("rank 8 is not in the trace"),
            "{sub}: {}",
            stderr(&o)
        );
        let mut backwards = args.clone();
        backwards.extend([&"--from" as &dyn AsRef<std::ffi::OsStr>, &"2s", &"--to", &"1s"]);
        let o = run(&backwards);
        assert_eq!(code(&o), 2, "{sub}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("--from is later than --to"),
            "{sub}: {}",
            stderr(&o)
        );
    }
    // An empty answer is still a well-formed report.
    let o = run(&[&"patterns", &lu, &"--kind", &"probe", &"--json"]);
    assert_eq!(code(&o), 1);
    let v = json(&o);
    assert_eq!(v["events"], 0);
    assert_eq!(v["selection"]["kinds"], serde_json::json!(["Probe"]));
}

#[test]
fn skeleton_of_point_to_point_calls_has_no_collectives() {
    let dir = tempfile::tempdir().unwrap();
    let (all, p2p) = (dir.path().join("all.c"), dir.path().join("p2p.c"));
    let mg = sample("npb-mg.S.8");
    for (out, extra) in [(&all, None), (&p2p, Some("p2p"))] {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"skeleton", &mg, &"-o", out];
        if let Some(kind) = &extra {
            args.extend([&"--kind" as &dyn AsRef<std::ffi::OsStr>, kind]);
        }
        let o = run(&args);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    let collectives = |p: &Path| {
        let c = std::fs::read_to_string(p).unwrap();
        ["MPI_Allreduce(", "MPI_Barrier(", "MPI_Bcast(", "MPI_Reduce("]
            .iter()
            .map(|f| c.matches(f).count())
            .sum::<usize>()
    };
    assert!(collectives(&all) > 0, "MG's skeleton replays its collectives");
    assert_eq!(collectives(&p2p), 0, "--kind p2p leaves them out");
    assert!(
        std::fs::read_to_string(&p2p).unwrap().contains("MPI_Isend")
            || std::fs::read_to_string(&p2p).unwrap().contains("MPI_Send")
    );
}

#[test]
fn topology_of_a_run_without_point_to_point_traffic_says_so_once() {
    let lu = sample("npb-lu.S.8");
    let o = run(&[&"topology", &lu, &"--kind", &"collective"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("no point-to-point traffic"), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("no topology of the library matches"),
        "{}",
        stderr(&o)
    );
}
