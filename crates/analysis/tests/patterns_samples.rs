//! Communication patterns and phases of the real NPB LU sample (class S, 8 ranks on a 4x2
//! process grid, 50 time steps, 12³ points: `SOURCES.md` in tests/data/samples).

mod common;

use common::sample;
use tracelogic_analysis::patterns::construct::OUTSIDE;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside};
use tracelogic_model::match_messages;

/// LU's time step: a halo exchange with every grid neighbour (10 edges of the 4x2 grid, both
/// directions: 20 messages) and the two wavefront sweeps, one message per edge and per k-plane
/// (12 − 2 = 10 planes: 100 messages each way) — 220 messages, 440 events on all 8 ranks. The
/// global pattern is found once per time step; the first step merges with set-up and the last
/// with the final residual exchange on some ranks, so at least 47 of the 50 steps are whole.
#[test]
fn npb_lu_global_pattern_once_per_time_step() {
    let trace = sample("npb-lu.S.8");
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let top = &a.communication_patterns[0];
    assert_eq!(top.ranks, (0..8).collect::<Vec<u32>>());
    let n: usize = top.events.values().map(|e| e.len()).sum();
    assert_eq!(n, 440);
    assert!((47..=50).contains(&top.occurrences), "{}", top.occurrences);
    // Every per-rank loop body repeats once per step (tandem units of the main loop).
    for (rank, ps) in &a.rank_patterns {
        assert!(
            ps.iter().any(|p| (47..=50).contains(&p.frequency)),
            "rank {rank}: {ps:#?}"
        );
    }
    // Phases: the time-step loop is one phase holding every occurrence of the global pattern,
    // which dominates its events (it also holds `ssor(1)`'s untimed iteration, the same
    // exchanges in other pattern labels: one occurrence per k-plane sweep, so counted by events,
    // not occurrences).
    let p = detect_phases(&trace, &events, &a.communication, 0.0, Outside::Own);
    let loop_phase = p
        .phases
        .iter()
        .find(|ph| ph.patterns.iter().any(|&(id, _)| id == Some(0)))
        .unwrap();
    assert_eq!(loop_phase.patterns[0], (Some(0), top.occurrences));
    let events_of = |id: Option<usize>| {
        let c = a.communication_patterns.iter().find(|c| Some(c.id) == id);
        c.expect("only pattern occurrences in the loop phase")
            .events
            .values()
            .map(|e| e.len())
            .sum::<usize>()
    };
    let others: usize = loop_phase.patterns[1..].iter().map(|&(id, k)| k * events_of(id)).sum();
    assert!(others * 10 < top.occurrences * n, "{:?}", loop_phase.patterns);
    // The root's curve peaks at its cut; skipping outside communication shortens the sequence by
    // exactly the outside instances.
    let curve = p.curve(0);
    let cut = p.tree[0].cut.unwrap() - p.tree[0].start;
    let peak = curve.iter().cloned().fold(f64::MIN, f64::max);
    assert_eq!(curve[cut - 1], peak);
    let outside = a
        .communication
        .instances
        .iter()
        .filter(|i| i.pattern == OUTSIDE)
        .count();
    assert!(outside > 0);
    let skipped = detect_phases(&trace, &events, &a.communication, 0.0, Outside::Skip);
    assert_eq!(skipped.sequence_length + outside, p.sequence_length);
    assert!(skipped
        .sequence
        .iter()
        .all(|&s| (s as usize) < a.communication_patterns.len()));
}
