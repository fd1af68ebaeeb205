//! End-to-end tests of `tracelogic profile`, `waits` and `critical-path` on real samples: the
//! documented JSON fields (docs/cli.md), the figures against the `dumpi2ascii` dumps of the real
//! DUMPI tool (times per function, barrier and all-reduce waits, late senders computed here from
//! the dumped walltimes), text output naming the top function, and the selection honoured.

mod common;
use common::{code, json, run, sample, stderr};

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// One MPI call of a `dumpi2ascii` dump: function, entry and exit walltimes (ns), and its
/// integer arguments (`source`, `dest`...).
struct Call {
    func: String,
    enter: u64,
    exit: u64,
    args: BTreeMap<String, i64>,
}

/// `1296777956.737669000` as integer nanoseconds.
fn walltime(text: &str) -> u64 {
    let t = text.split(" at walltime ").nth(1).unwrap().split(',').next().unwrap();
    let (s, f) = t.split_once('.').unwrap();
    s.parse::<u64>().unwrap() * 1_000_000_000 + format!("{f:0<9}")[..9].parse::<u64>().unwrap()
}

/// The calls of every rank, from the dumps in `dir/expected` (one file per rank, in rank order).
fn dumped_calls(dir: &Path) -> Vec<Vec<Call>> {
    let mut files: Vec<_> = std::fs::read_dir(dir.join("expected"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let mut calls: Vec<Call> = Vec::new();
            for line in std::fs::read_to_string(f).unwrap().lines() {
                if let Some((func, _)) = line.split_once(" entering at walltime") {
                    calls.push(Call {
                        func: func.to_owned(),
                        enter: walltime(line),
                        exit: 0,
                        args: BTreeMap::new(),
                    });
                } else if line.contains(" returning at walltime") {
                    calls.last_mut().unwrap().exit = walltime(line);
                } else if let Some(rest) = line.strip_prefix("int ") {
                    if let Some((k, v)) = rest.split_once('=') {
                        if let (Some(c), Ok(v)) = (calls.last_mut(), v.parse::<i64>()) {
                            c.args.insert(k.to_owned(), v);
                        }
                    }
                }
            }
            calls
        })
        .collect()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn profile_times_per_function_agree_with_dumpi2ascii() {
    for name in ["sstmacro-dumpi-testtrace", "sstmacro-dumpi-testbgp"] {
        let dir = sample(name);
        let calls = dumped_calls(&dir);
        // Reference: calls, total time and per-rank totals per function, from the dumps.
        let mut reference: BTreeMap<&str, (u64, u64, Vec<u64>)> = BTreeMap::new();
        for (r, rank) in calls.iter().enumerate() {
            for c in rank {
                let e = reference.entry(&c.func).or_insert((0, 0, vec![0; calls.len()]));
                e.0 += 1;
                e.1 += c.exit - c.enter;
                e.2[r] += c.exit - c.enter;
            }
        }
        let o = run(&[&"profile", &dir, &"--json"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let v = json(&o);
        for key in [
            "ranks",
            "duration_s",
            "functions",
            "compute_s",
            "message_sizes",
            "bytes_over_time",
            "selection",
        ] {
            assert!(v.get(key).is_some(), "{name}: no `{key}`");
        }
        let functions = v["functions"].as_array().unwrap();
        assert_eq!(functions.len(), reference.len(), "{name}");
        for fun in functions {
            let fname = fun["name"].as_str().unwrap();
            let (n, total, per_rank) = &reference[fname];
            assert_eq!(fun["calls"].as_u64().unwrap(), *n, "{name} {fname}");
            assert!(close(f(&fun["total_s"]), *total as f64 * 1e-9), "{name} {fname}");
            assert!(close(f(&fun["mean_s"]), *total as f64 * 1e-9 / *n as f64));
            let max = *per_rank.iter().max().unwrap();
            let min = *per_rank.iter().min().unwrap();
            assert!(close(f(&fun["max_rank_s"]), max as f64 * 1e-9), "{name} {fname}");
            assert!(close(f(&fun["min_rank_s"]), min as f64 * 1e-9), "{name} {fname}");
            assert_eq!(per_rank[fun["max_rank"].as_u64().unwrap() as usize], max);
            assert_eq!(per_rank[fun["min_rank"].as_u64().unwrap() as usize], min);
            assert!(close(f(&fun["mean_rank_s"]), *total as f64 * 1e-9 / calls.len() as f64));
            assert!(f(&fun["share"]) >= 0.0 && f(&fun["share"]) <= 1.0);
        }
        // Sorted by total time; the text's first table row is the top function.
        let top = reference
            .iter()
            .max_by_key(|(k, v)| (v.1, std::cmp::Reverse(*k)))
            .unwrap()
            .0;
        assert_eq!(functions[0]["name"], *top, "{name}");
        let o = run(&[&"profile", &dir]);
        assert_eq!(code(&o), 0);
        let text = String::from_utf8(o.stdout).unwrap();
        let first_row = text
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("function"))
            .nth(1)
            .unwrap();
        assert!(first_row.trim_start().starts_with(top), "{text}");
    }
}

/// Wait states of the SST/macro test trace (4 ranks: a barrier, a ring of `MPI_Isend` /
/// `MPI_Recv`, a wait, an all-reduce) computed from the dumped walltimes with Scalasca's rules.
#[test]
fn waits_agree_with_the_dumped_walltimes() {
    let dir = sample("sstmacro-dumpi-testtrace");
    let calls = dumped_calls(&dir);
    let find = |r: usize, name: &str| calls[r].iter().find(|c| c.func == name).unwrap();
    let collective = |name: &str| -> f64 {
        let latest = (0..4).map(|r| find(r, name).enter).max().unwrap();
        (0..4)
            .map(|r| {
                let c = find(r, name);
                latest.min(c.exit).saturating_sub(c.enter)
            })
            .sum::<u64>() as f64
            * 1e-9
    };
    let mut late_sender = 0u64;
    let mut pairs = BTreeMap::new();
    for r in 0..4 {
        let recv = find(r, "MPI_Recv");
        let source = recv.args["source"] as usize;
        let send = find(source, "MPI_Isend");
        assert_eq!(send.args["dest"] as usize, r);
        let w = send.enter.min(recv.exit).saturating_sub(recv.enter);
        late_sender += w;
        if w > 0 {
            pairs.insert((source, r), w as f64 * 1e-9);
        }
    }
    let o = run(&[&"waits", &dir, &"--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    for key in [
        "late_sender_s",
        "late_receiver_s",
        "wait_nxn_s",
        "wait_barrier_s",
        "late_broadcast_s",
        "early_reduce_s",
        "by_rank",
        "by_function",
        "by_pair",
        "selection",
    ] {
        assert!(v.get(key).is_some(), "no `{key}`");
    }
    assert!(close(f(&v["wait_barrier_s"]), collective("MPI_Barrier")));
    assert!(close(f(&v["wait_nxn_s"]), collective("MPI_Allreduce")));
    assert!(close(f(&v["late_sender_s"]), late_sender as f64 * 1e-9));
    let got: BTreeMap<(usize, usize), f64> = v["by_pair"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                (
                    p["sender"].as_u64().unwrap() as usize,
                    p["receiver"].as_u64().unwrap() as usize,
                ),
                f(&p["late_sender_s"]),
            )
        })
        .collect();
    assert_eq!(got.keys().collect::<Vec<_>>(), pairs.keys().collect::<Vec<_>>());
    for (k, w) in &pairs {
        assert!(close(got[k], *w));
    }
    // The matrix's "waiting" metric: the same pairs (no blocking send waited for its receiver
    // here: late-receiver 0), as dense rows of seconds, their total and the CSV grid.
    let o = run(&[&"matrix", &dir, &"--metric", &"waiting", &"--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let m = json(&o);
    let listed = m["waiting_pairs"].as_array().unwrap();
    assert_eq!(listed.len(), pairs.len());
    for p in listed {
        let k = (
            p["sender"].as_u64().unwrap() as usize,
            p["receiver"].as_u64().unwrap() as usize,
        );
        assert!(close(f(&p["late_sender_s"]), pairs[&k]));
        assert_eq!(f(&p["late_receiver_s"]), 0.0);
    }
    let rows = m["waiting"].as_array().unwrap();
    for (s, row) in rows.iter().enumerate() {
        for (r, cell) in row.as_array().unwrap().iter().enumerate() {
            assert!(close(f(cell), pairs.get(&(s, r)).copied().unwrap_or(0.0)), "{s} → {r}");
        }
    }
    assert!(close(f(&m["total_waiting_s"]), late_sender as f64 * 1e-9));
    assert!(m.get("bytes").is_some(), "the bytes matrix is still there");
    let o = run(&[&"matrix", &dir, &"--metric", &"waiting", &"--csv"]);
    let csv = String::from_utf8(o.stdout).unwrap();
    assert_eq!(csv.lines().next(), Some("sender,0,1,2,3"));
    assert_eq!(csv.lines().count(), 5);
    assert_eq!(
        run(&[&"matrix", &dir]).stdout,
        run(&[&"matrix", &dir, &"--metric", &"bytes"]).stdout
    );
    assert_eq!(v["by_rank"].as_array().unwrap().len(), 4);
    // The barrier waits longest here; the text's function table starts with it.
    assert_eq!(v["by_function"][0]["name"], "MPI_Barrier");
    let o = run(&[&"waits", &dir]);
    let text = String::from_utf8(o.stdout).unwrap();
    let first_row = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("function"))
        .nth(1)
        .unwrap();
    assert!(first_row.trim_start().starts_with("MPI_Barrier"), "{text}");
}

#[test]
fn critical_path_spans_the_run_and_honours_the_selection() {
    let dir = sample("npb-lu.S.8");
    let o = run(&[&"critical-path", &dir, &"--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    for key in [
        "length_s",
        "by_rank",
        "by_function",
        "segments",
        "imbalance",
        "relation",
        "compute_share",
        "selection",
    ] {
        assert!(v.get(key).is_some(), "no `{key}`");
    }
    // DUMPI's clocks respect every dependency of this run: the path is as long as the run.
    let summary = json(&run(&[&"summary", &dir, &"--json"]));
    assert!((f(&v["length_s"]) - f(&summary["duration_s"])).abs() < 1e-6);
    // Segments tile the path from 0 to its length.
    let segments = v["segments"].as_array().unwrap();
    assert!(f(&segments[0]["start_s"]).abs() < 1e-12);
    for w in segments.windows(2) {
        assert!((f(&w[0]["end_s"]) - f(&w[1]["start_s"])).abs() < 1e-9);
    }
    assert!((f(&segments.last().unwrap()["end_s"]) - f(&v["length_s"])).abs() < 1e-9);
    let shares: f64 = v["by_rank"].as_array().unwrap().iter().map(|r| f(&r["share"])).sum();
    assert!((shares - 1.0).abs() < 1e-6, "{shares}");
    for r in v["by_rank"].as_array().unwrap() {
        assert!(r.get("gain_s").is_some() && r.get("rank").is_some());
    }
    let imbalance = &v["imbalance"];
    assert!(f(&imbalance["ratio"]) >= 1.0);
    let top = v["by_function"][0]["name"].as_str().unwrap().to_owned();
    let o = run(&[&"critical-path", &dir]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains(&format!("   {top} ")), "{text}");
    assert!(text.contains("load imbalance: computation max"), "{text}");

    // A window cutting messages at its start: the path of what it keeps, as long as the
    // window's own span (this used to be refused as a dependency cycle, exit code 2).
    let o = run(&[&"critical-path", &dir, &"--json", &"--from", &"1ms"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let windowed = json(&o);
    assert!(f(&windowed["length_s"]) > 0.0 && f(&windowed["length_s"]) < f(&v["length_s"]));

    // Ranks 0-1 only: the path stays on them, and the selection is reported.
    let o = run(&[&"critical-path", &dir, &"--json", &"--ranks", &"0-1"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    assert!(v["segments"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["rank"].as_u64().unwrap() < 2));
    assert_eq!(v["selection"]["ranks"], serde_json::json!([0, 1]));
    assert_eq!(v["imbalance"]["by_rank"].as_array().unwrap().len(), 2);
    let o = run(&[&"waits", &dir, &"--json", &"--ranks", &"0-1"]);
    let v = json(&o);
    assert!(v["by_pair"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["sender"].as_u64().unwrap() < 2 && p["receiver"].as_u64().unwrap() < 2));
    let o = run(&[&"profile", &dir, &"--json", &"--kind", &"collective"]);
    let v = json(&o);
    assert!(
        v["functions"].as_array().unwrap().iter().all(|fun| {
            let n = fun["name"].as_str().unwrap();
            ["MPI_Allreduce", "MPI_Barrier", "MPI_Bcast"].contains(&n)
        }),
        "{}",
        v["functions"]
    );
    // A selection the trace cannot take is refused.
    let o = run(&[&"waits", &dir, &"--ranks", &"8"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("rank 8"), "{}", stderr(&o));
}
