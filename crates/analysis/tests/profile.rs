//! The time profile and the load imbalance against independent readings: per-function times,
//! call counts and computation per rank summed from the official tools' dumps of the real
//! samples (dumpi2ascii for the SST/macro DUMPI traces, the PyPI otf2 3.2 reader for the
//! Score-P ping-pong), parsed here on their own, and from the official DUMPI reader (PyPI
//! pydumpi 0.1.3, `tests/tools/dumpi_times.py`) on the NPB runs — skipped when pydumpi is not
//! installed unless `TRACELOGIC_REQUIRE_PY=1`; message sizes read off the dump by hand;
//! imbalance of a program with a planted late rank.
//!
//! `large_generated_trace_timings` (ignored) times every analysis of this branch on a NAS LU
//! skeleton: `cargo test --release -p tracelogic-analysis --test profile -- --ignored --nocapture`
//! (`TRACELOGIC_LU=CLASS,RANKS,ITERATIONS`, default `A,128,20`).

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use tracelogic_analysis::imbalance::imbalance;
use tracelogic_analysis::profile::{profile, ProfileOptions, ProfileReport, SizeBin};
use tracelogic_model::Selection;
use tracelogic_synth::delays::{late_rank, run};

fn samples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples")
}

/// `1296777956.737669000` -> ns, exactly.
fn walltime_ns(s: &str) -> u64 {
    let (sec, frac) = s.split_once('.').unwrap_or((s, "0"));
    let frac = format!("{frac:0<9}");
    sec.parse::<u64>().unwrap() * 1_000_000_000 + frac[..9].parse::<u64>().unwrap()
}

/// Per function (calls, total ns) and per rank the time between consecutive calls, from the
/// `X entering at walltime A` / `X returning at walltime B` lines of dumpi2ascii dumps.
struct Independent {
    functions: BTreeMap<String, (u64, u64)>,
    compute: Vec<u64>,
}

fn read_dumpi_dumps(sample: &str) -> Independent {
    let dir = samples().join(sample).join("expected");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".dumpi2ascii.txt"))
        .collect();
    files.sort();
    let mut out = Independent {
        functions: BTreeMap::new(),
        compute: Vec::new(),
    };
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let mut open: Option<(String, u64)> = None;
        let mut last_exit: Option<u64> = None;
        let mut compute = 0;
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.len() < 5 || words[3] != "walltime" {
                continue;
            }
            let t = walltime_ns(words[4].trim_end_matches(','));
            match words[1] {
                "entering" => {
                    if let Some(x) = last_exit {
                        compute += t - x;
                    }
                    open = Some((words[0].to_owned(), t));
                }
                "returning" => {
                    let (name, enter) = open.take().expect("a return follows an entry");
                    assert_eq!(name, words[0]);
                    let e = out.functions.entry(name).or_default();
                    e.0 += 1;
                    e.1 += t - enter;
                    last_exit = Some(t);
                }
                _ => {}
            }
        }
        out.compute.push(compute);
    }
    out
}

fn compare(p: &ProfileReport, ind: &Independent, tolerance_per_call_ns: f64, what: &str) {
    assert_eq!(p.functions.len(), ind.functions.len(), "{what}: functions");
    for f in &p.functions {
        let &(calls, ns) = ind
            .functions
            .get(&f.name)
            .unwrap_or_else(|| panic!("{what}: {} not in the dump", f.name));
        assert_eq!(f.calls, calls, "{what}: calls of {}", f.name);
        let tol = tolerance_per_call_ns * calls as f64 * 1e-9 + 1e-12;
        assert!(
            (f.total_s - ns as f64 * 1e-9).abs() <= tol,
            "{what}: {} {} s vs {} ns",
            f.name,
            f.total_s,
            ns
        );
        assert!((f.mean_s * calls as f64 - f.total_s).abs() < 1e-12);
        assert!(f.min_rank_s <= f.mean_rank_s + 1e-15 && f.mean_rank_s <= f.max_rank_s + 1e-15);
    }
    assert_eq!(p.compute_s.len(), ind.compute.len(), "{what}: ranks");
    for (r, (&got, &want)) in p.compute_s.iter().zip(&ind.compute).enumerate() {
        let calls: u64 = ind.functions.values().map(|v| v.0).sum();
        let tol = tolerance_per_call_ns * calls as f64 * 1e-9 + 1e-12;
        assert!(
            (got - want as f64 * 1e-9).abs() <= tol,
            "{what}: compute of rank {r}: {got} vs {want} ns"
        );
    }
}

#[test]
fn per_function_times_equal_the_dumpi2ascii_dumps() {
    for sample in ["sstmacro-dumpi-testtrace", "sstmacro-dumpi-testbgp"] {
        let t = common::sample(sample);
        let p = profile(&t, &Selection::all(), &ProfileOptions::default());
        compare(&p, &read_dumpi_dumps(sample), 0.0, sample);
    }
}

/// Per-function times of the DUMPI files of `sample` from the official reader (pydumpi, via
/// `tests/tools/dumpi_times.py`); `None` when pydumpi is missing and `TRACELOGIC_REQUIRE_PY`
/// is not 1.
fn pydumpi_times(sample: &str) -> Option<Independent> {
    use std::process::Command;
    let required = std::env::var("TRACELOGIC_REQUIRE_PY").is_ok_and(|v| v == "1");
    let has = Command::new("python3")
        .args(["-c", "import pydumpi"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        assert!(
            !required,
            "TRACELOGIC_REQUIRE_PY=1 but python3 cannot import pydumpi (pip install pydumpi==0.1.3)"
        );
        eprintln!("note: pydumpi not installed; skipping the cross-check of {sample} with the official reader");
        return None;
    }
    let mut bins: Vec<PathBuf> = std::fs::read_dir(samples().join(sample))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    bins.sort();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/tools/dumpi_times.py");
    let out = Command::new("python3").arg(script).args(&bins).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let files: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut ind = Independent {
        functions: BTreeMap::new(),
        compute: Vec::new(),
    };
    for f in files.as_array().unwrap() {
        for (name, v) in f["functions"].as_object().unwrap() {
            let e = ind.functions.entry(name.clone()).or_default();
            e.0 += v[0].as_u64().unwrap();
            e.1 += v[1].as_u64().unwrap();
        }
        ind.compute.push(f["gaps_ns"].as_u64().unwrap());
    }
    Some(ind)
}

#[test]
fn per_function_times_equal_the_official_dumpi_reader() {
    for sample in ["npb-lu.S.8", "npb-mg.S.8", "npb-bt.S.9", "sstmacro-dumpi-testbgp"] {
        let Some(ind) = pydumpi_times(sample) else { return };
        let t = common::sample(sample);
        let p = profile(&t, &Selection::all(), &ProfileOptions::default());
        compare(&p, &ind, 0.0, sample);
    }
}

#[test]
fn per_function_times_equal_the_otf2_reader_dump() {
    // `event loc=L t=T Enter region=Region#N(MPI_X)` / `Leave ...`, ticks at the clock's
    // resolution after the offset; each time rounds to the ns on reading, so a call may differ
    // by 1 ns.
    let text =
        std::fs::read_to_string(samples().join("pipit-ping-pong-otf2/expected/otf2-3.2-reader-dump.txt")).unwrap();
    let field = |line: &str, key: &str| -> u64 {
        let at = line.find(key).unwrap() + key.len();
        line[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let clock = text.lines().find(|l| l.starts_with("clock_properties")).unwrap();
    let (res, offset) = (field(clock, "timer_resolution="), field(clock, "global_offset="));
    let ns = |ticks: u64| (ticks - offset) as f64 * 1e9 / res as f64;
    let mut ind = Independent {
        functions: BTreeMap::new(),
        compute: vec![0, 0],
    };
    let mut open: [Option<(String, f64)>; 2] = [None, None];
    let mut last_exit: [Option<f64>; 2] = [None, None];
    let mut compute = [0f64; 2];
    let mut exact = BTreeMap::<String, f64>::new();
    for line in text.lines().filter(|l| l.starts_with("event ")) {
        let loc = field(line, "loc=") as usize;
        let t = ns(field(line, " t="));
        let name = line.split('(').nth(1).map(|s| s.trim_end_matches(')').to_owned());
        let Some(name) = name.filter(|n| n.starts_with("MPI_")) else {
            continue;
        };
        if line.contains(" Enter ") {
            if let Some(x) = last_exit[loc] {
                compute[loc] += t - x;
            }
            open[loc] = Some((name, t));
        } else if line.contains(" Leave ") {
            let (n, enter) = open[loc].take().unwrap();
            assert_eq!(n, name);
            ind.functions.entry(name.clone()).or_default().0 += 1;
            *exact.entry(name).or_default() += t - enter;
            last_exit[loc] = Some(t);
        }
    }
    for (name, v) in &exact {
        ind.functions.get_mut(name).unwrap().1 = v.round() as u64;
    }
    ind.compute = compute.iter().map(|c| c.round() as u64).collect();
    let t = common::sample("pipit-ping-pong-otf2");
    let p = profile(&t, &Selection::all(), &ProfileOptions::default());
    compare(&p, &ind, 2.0, "ping-pong");
    // The ping-pong sends 16 KiB, 32 KiB ... 2 MiB each way: one message per log2 bin, 2 each.
    let bins: Vec<SizeBin> = p.message_sizes.p2p.clone();
    assert_eq!(bins.len(), 8);
    for (k, b) in bins.iter().enumerate() {
        let size = 16384u64 << k;
        assert_eq!(
            (b.lo_bytes, b.hi_bytes, b.count, b.bytes),
            (size, 2 * size, 2, 2 * size)
        );
    }
}

#[test]
fn message_sizes_of_the_sstmacro_test_trace() {
    // The dump: each rank MPI_Isend of 1 MPI_INT (4 bytes), one MPI_Barrier (no data), one
    // MPI_Allreduce of 1 MPI_INT.
    let t = common::sample("sstmacro-dumpi-testtrace");
    let p = profile(&t, &Selection::all(), &ProfileOptions { time_bins: 4 });
    assert_eq!(
        p.message_sizes.p2p,
        vec![SizeBin {
            lo_bytes: 4,
            hi_bytes: 8,
            count: 4,
            bytes: 16
        }]
    );
    assert_eq!(
        p.message_sizes.collective,
        vec![
            SizeBin {
                lo_bytes: 0,
                hi_bytes: 0,
                count: 4,
                bytes: 0
            },
            SizeBin {
                lo_bytes: 4,
                hi_bytes: 8,
                count: 4,
                bytes: 16
            },
        ]
    );
    assert_eq!(p.bytes_over_time.p2p_bytes.iter().sum::<u64>(), 16);
    assert_eq!(p.bytes_over_time.collective_bytes.iter().sum::<u64>(), 16);
    // The run lasts 5557 µs (see tests/critical_path.rs); 4 bins of 1389.25 µs: the Isends
    // (at 9674..9754, i.e. 2005..2085 µs from the start) and the allreduce (2141..2240 µs)
    // fall in the second bin.
    assert_eq!(p.bytes_over_time.p2p_bytes, vec![0, 16, 0, 0]);
    assert_eq!(p.bytes_over_time.collective_bytes, vec![0, 16, 0, 0]);
    assert!((p.duration_s - 5557e-6).abs() < 1e-12);
}

#[test]
fn imbalance_of_a_planted_late_rank() {
    // 4 ranks, 3 iterations of compute + MPI_Allreduce, rank 2 computing 15000 ns where the
    // others compute 10000: 45000 vs 30000 ns, mean 33750, ratio 4/3. Tukey: Q1 = 30000,
    // Q3 = 33750, fence 39375: rank 2 is late, nobody else.
    let t = run(&late_rank(4, 3, 10_000, 2, 5_000)).unwrap();
    let r = imbalance(&t, &Selection::all());
    assert!((r.max_s - 45e-6).abs() < 1e-15 && (r.mean_s - 33.75e-6).abs() < 1e-15);
    assert!((r.ratio - 4.0 / 3.0).abs() < 1e-12);
    assert!((r.imbalance_pct - 100.0 / 3.0).abs() < 1e-9);
    assert_eq!((r.max_rank, r.late_ranks.clone()), (2, vec![2]));
    // The profile's computation per rank is the same quantity.
    let p = profile(&t, &Selection::all(), &ProfileOptions::default());
    for c in &r.by_rank {
        assert_eq!(c.compute_s, p.compute_s[c.rank as usize]);
    }
    // The second iteration as a phase: [17000, 33000): 10000 vs 15000 ns.
    let phase = Selection {
        from: Some(17_000),
        to: Some(33_000),
        ..Selection::default()
    };
    let r = imbalance(&t, &phase);
    assert!((r.max_s - 15e-6).abs() < 1e-15 && (r.mean_s - 11.25e-6).abs() < 1e-15);
    assert_eq!(r.late_ranks, vec![2]);
    // A balanced run flags nobody.
    let even = run(&late_rank(4, 3, 10_000, 2, 0)).unwrap();
    let r = imbalance(&even, &Selection::all());
    assert!((r.ratio - 1.0).abs() < 1e-12);
    assert!(r.late_ranks.is_empty());
}

#[test]
#[ignore]
fn large_generated_trace_timings() {
    use std::time::Instant;
    use tracelogic_analysis::critical_path::critical_path_matched;
    use tracelogic_analysis::profile::profile_trace;
    use tracelogic_analysis::waits::wait_states_matched;
    use tracelogic_synth::{generate_nas, NasBenchmark, NasClass, NasSpec};
    let conf = std::env::var("TRACELOGIC_LU").unwrap_or_else(|_| "A,128,20".into());
    let parts: Vec<&str> = conf.split(',').collect();
    let class = match parts[0] {
        "S" => NasClass::S,
        "W" => NasClass::W,
        "A" => NasClass::A,
        "B" => NasClass::B,
        _ => NasClass::C,
    };
    let mut spec = NasSpec::new(NasBenchmark::Lu, class, parts[1].parse().unwrap());
    spec.iterations = Some(parts[2].parse().unwrap());
    let start = Instant::now();
    let (trace, _) = generate_nas(&spec).unwrap();
    println!(
        "LU {conf}: {} calls generated in {:?}",
        trace.num_calls(),
        start.elapsed()
    );
    let start = Instant::now();
    let matching = tracelogic_model::match_messages(&trace);
    println!("matching: {:?}", start.elapsed());
    let start = Instant::now();
    let p = profile_trace(&trace, &ProfileOptions::default());
    println!("profile: {:?} ({} functions)", start.elapsed(), p.functions.len());
    let start = Instant::now();
    let w = wait_states_matched(&trace, &matching);
    println!("waits: {:?} ({:.3} s waiting)", start.elapsed(), w.totals.total_s());
    let start = Instant::now();
    let i = imbalance(&trace, &Selection::all());
    println!("imbalance: {:?} (ratio {:.3})", start.elapsed(), i.ratio);
    let start = Instant::now();
    let g = tracelogic_analysis::critical_path::HappensBefore::build(&trace, &matching).unwrap();
    println!(
        "happens-before graph, longest path, slacks: {:?} ({} nodes)",
        start.elapsed(),
        g.node_count()
    );
    drop(g);
    let start = Instant::now();
    let cp = critical_path_matched(&trace, &matching).unwrap();
    println!(
        "critical path with gains: {:?} ({:.6} s, {} segments, {} ranks with computation on it, {} gains within the budget, {} positive)",
        start.elapsed(),
        cp.length_s,
        cp.segments.len(),
        cp.by_rank.iter().filter(|r| r.gain_s != Some(0.0)).count(),
        cp.by_rank.iter().filter(|r| r.gain_s.is_some_and(|g| g > 0.0) ).count() + cp.by_rank.iter().filter(|r| r.gain_s == Some(0.0)).count() - cp.by_rank.iter().filter(|r| r.gain_s == Some(0.0)).count(),
        cp.by_rank.iter().filter(|r| r.gain_s.is_some_and(|g| g > 0.0)).count()
    );
}
