//! Pattern detection and phase segmentation throughput.
//!
//! `cargo bench -p tracelogic-analysis --bench patterns [-- EVENTS]` (default 10 M). Per-rank
//! detection runs on a Sweep3D-like symbol sequence (four sweeps of 30 repeats each, composed into
//! a global pattern, with a random event every few hundred), and the thesis' Tables 4.2/4.4 needed
//! 22 s for 2.15 M messages and 354 s for 5.3 M events. Segmentation runs on a 10 M-symbol pattern
//! sequence with three phases and noise. Whole-trace analysis (symbols, detection, construction)
//! runs on a generated 64-rank torus exchange.

use std::hint::black_box;
use std::time::Instant;
use tracelogic_analysis::patterns::suffix::maximal_repeats;
use tracelogic_analysis::patterns::tandem::reduce;
use tracelogic_analysis::patterns::{analyse, detect, PatternOptions};
use tracelogic_analysis::phases::segment;
use tracelogic_synth::{generate, Spec, TopologySpec};

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
    let t = Instant::now();
    let red = reduce(&seq, 12, false);
    let t_reduce = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let reps = maximal_repeats(&red.sequence, 12, 2);
    println!(
        "  tandem removal {:.3} s ({} levels, {} -> {} symbols); maximal repeats of the rest {:.3} s ({})",
        t_reduce,
        red.levels.len(),
        n,
        red.sequence.len(),
        t.elapsed().as_secs_f64(),
        black_box(reps).len()
    );
    let t = Instant::now();
    let found = detect(&seq, 12, None, &PatternOptions::default());
    let dt = t.elapsed().as_secs_f64();
    println!(
        "per-rank detection: {} events in {:.3} s = {:.1} M events/s, {} patterns",
        n,
        dt,
        n as f64 / dt / 1e6,
        black_box(found).len()
    );

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
    let t = Instant::now();
    let s = segment(&phases, 0.0);
    let dt = t.elapsed().as_secs_f64();
    println!(
        "segmentation: {} symbols in {:.3} s, {} tree nodes, {} phases",
        n,
        dt,
        s.tree.len(),
        s.phases.len()
    );

    let spec = Spec {
        topology: TopologySpec::parse("torus:8x8").unwrap(),
        iterations: 2000,
        ..Default::default()
    };
    let trace = generate(&spec).unwrap();
    let events: u64 = trace
        .ranks
        .iter()
        .map(|r| (r.p2p.len() + r.collectives.len()) as u64)
        .sum();
    let t = Instant::now();
    let a = analyse(&trace, &PatternOptions::default());
    let dt = t.elapsed().as_secs_f64();
    println!(
        "whole trace (64-rank torus, matching included): {} events in {:.3} s = {:.1} M events/s, {} communication patterns",
        events,
        dt,
        events as f64 / dt / 1e6,
        a.communication_patterns.len()
    );
}
