//! Pattern detection and phase segmentation throughput.
//!
//! `cargo bench -p tracelogic-analysis --bench patterns [-- EVENTS]` (default 10 M). Per-rank
//! detection runs on a Sweep3D-like symbol sequence (four sweeps of 30 repeats each, composed into
//! a global pattern, with a random event every few hundred), and the thesis' Tables 4.2/4.4 needed
//! 22 s for 2.15 M messages and 354 s for 5.3 M events. Segmentation runs on a 10 M-symbol pattern
//! sequence with three phases and noise. Whole-trace analysis (symbols, detection, construction)
//! runs on a generated 64-rank torus exchange, and on 4 ranks whose steps each hold a short
//! loop of collectives (an MC exchange between MD steps, as LAMMPS `fix gcmc`): thousands of
//! short tandem runs, each its own component in the run alignment.

use std::hint::black_box;
use std::time::Instant;
use tracelogic_analysis::patterns::suffix::maximal_repeats;
use tracelogic_analysis::patterns::tandem::reduce;
use tracelogic_analysis::patterns::{analyse, detect, PatternOptions};
use tracelogic_analysis::phases::segment;
use tracelogic_synth::{generate, Spec, TopologySpec};

/// CPU seconds used by this thread (Linux `/proc`, 10 ms ticks), so the figures hold per core
/// even when the machine is shared; `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Run `f`, print wall and CPU time with a throughput over `items`.
fn timed<T>(what: &str, items: usize, f: impl FnOnce() -> T) -> T {
    let (t, c) = (Instant::now(), cpu_seconds());
    let out = f();
    let wall = t.elapsed().as_secs_f64();
    let cpu = c.and_then(|c0| cpu_seconds().map(|c1| c1 - c0));
    match cpu {
        Some(cpu) => println!(
            "{what}: {items} in {wall:.3} s wall, {cpu:.2} s CPU = {:.1} M/s per core",
            items as f64 / cpu.max(0.01) / 1e6
        ),
        None => println!("{what}: {items} in {wall:.3} s = {:.1} M/s", items as f64 / wall / 1e6),
    }
    out
}

fn lcg(x: &mut u64) -> u64 {
    *x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *x >> 33
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let mut x = 1u64;
    let mut seq = Vec::with_capacity(n);
    let sweeps = [[0u32, 1], [0, 2], [1, 3], [0, 3]];
    'fill: loop {
        for s in &sweeps {
            for _ in 0..30 {
                if seq.len() >= n {
                    break 'fill;
                }
                seq.extend_from_slice(s);
                if lcg(&mut x).is_multiple_of(300) {
                    seq.push(4 + (lcg(&mut x) % 8) as u32);
                }
            }
        }
    }
    seq.truncate(n);
    let red = timed("tandem removal (events)", n, || reduce(&seq, 12, false));
    println!("  {} levels, {} -> {} symbols", red.levels.len(), n, red.sequence.len());
    let reps = timed(
        "maximal repeats of the reduced string (symbols)",
        red.sequence.len(),
        || maximal_repeats(&red.sequence, 12, 2),
    );
    println!("  {} maximal repeats", black_box(reps).len());
    let found = timed("per-rank detection (events)", n, || {
        detect(&seq, 12, None, &PatternOptions::default())
    });
    println!("  {} patterns", black_box(found).len());

    let mut phases = Vec::with_capacity(n);
    for i in 0..n {
        let block = i * 3 / n;
        let noise = lcg(&mut x).is_multiple_of(50);
        phases.push(if noise {
            9
        } else {
            (block * 3) as u32 + (lcg(&mut x) % 2) as u32
        });
    }
    let s = timed("segmentation (symbols)", n, || segment(&phases, 0.0));
    println!("  {} tree nodes, {} phases", s.tree.len(), s.phases.len());

    let spec = Spec {
        topology: TopologySpec::parse("torus:8x8").unwrap(),
        iterations: 2000,
        ..Default::default()
    };
    whole_trace(
        "whole trace, 64-rank torus, matching included (events)",
        &generate(&spec).unwrap(),
    );
    whole_trace(
        "whole trace, 4 ranks, a short loop of collectives in each of 20,000 steps (events)",
        &short_loops_between_steps(20_000),
    );
}

/// The whole analysis of `trace` (events, detection, matching, construction), timed over its
/// events.
fn whole_trace(what: &str, trace: &tracelogic_model::Trace) {
    let events: usize = trace.ranks.iter().map(|r| r.p2p.len() + r.collectives.len()).sum();
    let a = timed(what, events, || analyse(trace, &PatternOptions::default()));
    println!("  {} communication patterns", a.communication_patterns.len());
}

/// 4 ranks in a ring, `steps` steps: a send to the next rank and a receive from the previous,
/// then 3–8 (the same on every rank) repeats of `MPI_Allreduce`, `MPI_Bcast`.
fn short_loops_between_steps(steps: u64) -> tracelogic_model::Trace {
    use tracelogic_model::{CollectiveOp, P2pDir, Trace, COMM_WORLD, NO_CALLPATH};
    let n = 4u32;
    let mut t = Trace::new("text", "generated steps with short loops of collectives", n);
    let mut x = 7u64;
    let repeats: Vec<u64> = (0..steps).map(|_| 3 + lcg(&mut x) % 6).collect();
    for r in 0..n {
        let mut at = 0u64;
        let mut call = |t: &mut Trace, name: &str| {
            at += 100;
            t.push_call(r, name, at, at + 50, NO_CALLPATH, 0)
        };
        for &k in &repeats {
            let c = call(&mut t, "MPI_Send");
            t.push_p2p(r, c, c, P2pDir::Send, (r + 1) % n, 0, 0, 64);
            let c = call(&mut t, "MPI_Recv");
            t.push_p2p(r, c, c, P2pDir::Recv, (r + n - 1) % n, 0, 0, 64);
            for _ in 0..k {
                let c = call(&mut t, "MPI_Allreduce");
                t.push_collective(r, c, CollectiveOp::Allreduce, COMM_WORLD, 0, 8, 8);
                let c = call(&mut t, "MPI_Bcast");
                t.push_collective(r, c, CollectiveOp::Bcast, COMM_WORLD, 0, 8, 8);
            }
        }
    }
    t
}
