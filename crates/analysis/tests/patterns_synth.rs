//! Communication patterns on generated traces with known structure (tracelogic_synth).

use std::collections::BTreeMap;
use tracelogic_analysis::patterns::{
    analyse, analyse_events, event_graph, rank_events, search_pattern, PatternOptions,
};
use tracelogic_model::{match_messages, P2pDir, Trace};
use tracelogic_synth::{generate, Spec, Style, TopologySpec};

fn spec(topology: &str, style: Style, iterations: u32) -> Spec {
    Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        style,
        iterations,
        ..Default::default()
    }
}

/// Nearest-neighbour exchange on a 4x4 torus: one communication pattern over all 16 ranks,
/// once per iteration, 4 sends and 4 receives per rank.
#[test]
fn torus_exchange_one_pattern_per_iteration() {
    let trace = generate(&spec("torus:4x4", Style::Isend, 25)).unwrap();
    let a = analyse(&trace, &PatternOptions::default());
    assert_eq!(a.communication_patterns.len(), 1, "{:#?}", a.communication_patterns);
    let p = &a.communication_patterns[0];
    assert_eq!(p.occurrences, 25);
    assert_eq!(p.ranks, (0..16).collect::<Vec<u32>>());
    assert!(p.events.values().all(|e| e.len() == 8));
    assert!(p.positions.windows(2).all(|w| w[0] < w[1]));
    for ps in a.rank_patterns.values() {
        assert_eq!(ps.len(), 1);
        assert_eq!(ps[0].frequency, 25);
    }
}

/// LU-like wavefront on a 4x4 grid without call paths: the forward and reverse sweeps always
/// follow each other, so the run has one global pattern (both sweeps), once per iteration, with
/// one send and one receive per grid edge and direction (2 × 24 messages).
#[test]
fn wavefront_global_pattern() {
    let trace = generate(&spec("grid:4x4", Style::Wavefront, 12)).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    assert_eq!(a.communication_patterns.len(), 1);
    let p = &a.communication_patterns[0];
    assert_eq!(p.occurrences, 12);
    let n: usize = p.events.values().map(|e| e.len()).sum();
    assert_eq!(n, 96);
    // Event graph: 48 arrows, each from a send to a receive later in logical time.
    let g = event_graph(&trace, &matching, &events, &a.communication, 0, 3).unwrap();
    assert_eq!(g.events.len(), 96);
    assert_eq!(g.arrows.len(), 48);
    for ar in &g.arrows {
        assert!(g.events[ar.from].symbol.starts_with('S') && g.events[ar.to].symbol.starts_with('R'));
        assert!(g.events[ar.to].logical > g.events[ar.from].logical);
        assert!(g.events[ar.to].end >= g.events[ar.from].time);
    }
    // A sweep crosses the 4x4 grid diagonally: at least 6 hops forward and 6 back.
    assert!(g.logical_width >= 13, "{}", g.logical_width);
}

/// Mark each event's call with the sweep it belongs to (forward: sends to higher ranks,
/// receives from lower ones), as a tracer recording `sweep_forward`/`sweep_reverse` would.
fn with_sweep_routines(mut trace: Trace) -> Trace {
    let fwd = trace.regions.intern("sweep_forward");
    let rev = trace.regions.intern("sweep_reverse");
    let (cf, cr) = (trace.intern_callpath(&[fwd]), trace.intern_callpath(&[rev]));
    for rt in &mut trace.ranks {
        for i in 0..rt.p2p.len() {
            let forward = match rt.p2p.dir[i] {
                P2pDir::Send => rt.p2p.peer[i] > rt.rank,
                P2pDir::Recv => rt.p2p.peer[i] < rt.rank,
            };
            rt.calls
                .callpath
                .set(rt.p2p.post[i] as usize, if forward { cf } else { cr });
        }
    }
    trace
}

/// With the sweeps' routines recorded, routine-directed detection splits the global pattern into
/// the two sweeps, each once per iteration (thesis Table 4.5: one count per sweep direction).
#[test]
fn wavefront_sweeps_with_routines() {
    let trace = with_sweep_routines(generate(&spec("grid:4x4", Style::Wavefront, 12)).unwrap());
    let a = analyse(&trace, &PatternOptions::default());
    let mut occ: Vec<usize> = a.communication_patterns.iter().map(|p| p.occurrences).collect();
    occ.sort();
    assert_eq!(occ, vec![12, 12], "{:#?}", a.communication_patterns);
    for p in &a.communication_patterns {
        let n: usize = p.events.values().map(|e| e.len()).sum();
        assert_eq!(n, 48, "one sweep: one message per grid edge");
    }
    let c = a.routine_comparison.expect("call paths present");
    // Each rank's stream is (forward reverse)^12: syntactically one loop body per rank, with
    // routines its two sweeps; no syntactic pattern is a sweep (precision 0 against the sweeps,
    // like the suffix-tree rows of Tables 4.1/4.3 that report compositions).
    assert_eq!(
        (c.ranks, c.syntactic, c.routine_directed, c.common),
        (16, 16, 32, 0),
        "{c:?}"
    );
}

/// Searching the detected global pattern finds every iteration exactly; a rank with one event
/// replaced by one the trace never has needs one edit.
#[test]
fn search_wavefront_pattern() {
    let trace = generate(&spec("grid:4x4", Style::Wavefront, 12)).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let mut pattern: BTreeMap<u32, Vec<String>> = a.communication_patterns[0]
        .events
        .iter()
        .map(|(&r, e)| (r, e.to_vec()))
        .collect();
    let exact = search_pattern(&trace, &matching, &events, &pattern, 0).unwrap();
    assert_eq!(exact.matches.len(), 12);
    assert!(exact.matches.iter().all(|m| m.edits == 0));
    pattern.get_mut(&5).unwrap()[0] = "S99".into();
    let none = search_pattern(&trace, &matching, &events, &pattern, 0).unwrap();
    assert!(none.rank_matches[&5].is_empty());
    assert!(none.matches.is_empty());
    let one = search_pattern(&trace, &matching, &events, &pattern, 1).unwrap();
    assert_eq!(one.matches.len(), 12);
    assert!(one.matches.iter().all(|m| m.edits == 1 && m.windows[&5].edits == 1));
    assert!(search_pattern(
        &trace,
        &matching,
        &events,
        &BTreeMap::from([(99, vec!["S1".into()])]),
        0
    )
    .is_err());
}

/// The wavefront written for the run's 4x4 grid (§4.5 extrapolation, Table 4.6 layout) is found
/// once per iteration in each direction. Written in Table 4.6's order (west before north) it is
/// not found exactly: the generator receives north first.
#[test]
fn extrapolated_wavefront_found_per_iteration() {
    use tracelogic_analysis::patterns::templates::{wavefront, Corner};
    let trace = generate(&spec("grid:4x4", Style::Wavefront, 12)).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    for corner in [Corner::TopLeft, Corner::BottomRight] {
        let pattern = wavefront(4, 4, corner, true, None).unwrap();
        let found = search_pattern(&trace, &matching, &events, &pattern, 0).unwrap();
        assert_eq!(found.matches.len(), 12, "{corner:?}");
        let swapped = wavefront(4, 4, corner, false, None).unwrap();
        assert!(search_pattern(&trace, &matching, &events, &swapped, 0)
            .unwrap()
            .matches
            .is_empty());
    }
    // Sweeps from the other two corners do not exist in an LU-like run.
    let other = wavefront(4, 4, Corner::TopRight, true, None).unwrap();
    assert!(search_pattern(&trace, &matching, &events, &other, 0)
        .unwrap()
        .matches
        .is_empty());
}

/// Degenerate traces: no events, or ranks that never repeat, give empty results, not panics.
#[test]
fn empty_and_tiny_traces() {
    use tracelogic_analysis::phases::{detect_phases, Outside};
    let empty = Trace::new("generated", "empty", 3);
    let matching = match_messages(&empty);
    let events = rank_events(&empty, true);
    let a = analyse_events(&empty, &matching, &events, &PatternOptions::default());
    assert!(a.communication_patterns.is_empty() && a.rank_patterns.values().all(Vec::is_empty));
    let p = detect_phases(&empty, &events, &a.communication, 0.0, Outside::Own);
    assert_eq!((p.sequence_length, p.phases.len()), (0, 1));
    assert!(p.curve(0).is_empty() && p.curve(7).is_empty());
    assert!(event_graph(&empty, &matching, &events, &a.communication, 0, 0).is_none());
    // One iteration of a blocking ring: nothing repeats on a rank; every message is its own
    // instance, all alike, so they form one communication pattern of single events.
    let one = generate(&spec("ring:8", Style::Blocking, 1)).unwrap();
    let a = analyse(&one, &PatternOptions::default());
    assert!(a.rank_patterns.values().all(Vec::is_empty), "{:#?}", a.rank_patterns);
    assert_eq!(a.events, 32);
    assert!(a.communication_patterns.iter().all(|p| !p.from_rank_patterns));
}

/// Randomised: a three-rank exchange inserted K times at random points among one-off messages
/// (unique tags, so with the envelope they never repeat) is found as exactly one communication
/// pattern with K occurrences, at the inserted times.
#[test]
fn inserted_communication_pattern_found_exactly() {
    use tracelogic_model::{COMM_WORLD, NO_CALLPATH};
    let mut x = 4242u64;
    let mut next = |m: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    for round in 0..20 {
        let k = 2 + next(29) as usize;
        let mut t = Trace::new("generated", "inserted", 6);
        let mut clock = 0u64;
        let mut tag = 100;
        let mut starts = Vec::new();
        let send = |t: &mut Trace, clock: &mut u64, from: u32, to: u32, tag: i32| {
            *clock += 10;
            let c = t.push_call(from, "MPI_Send", *clock, *clock + 5, NO_CALLPATH, 0);
            t.push_p2p(from, c, c, P2pDir::Send, to, tag, COMM_WORLD, 64);
            *clock += 10;
            let c = t.push_call(to, "MPI_Recv", *clock, *clock + 5, NO_CALLPATH, 0);
            t.push_p2p(to, c, c, P2pDir::Recv, from, tag, COMM_WORLD, 64);
        };
        let mut inserted = 0;
        while inserted < k {
            if next(3) == 0 {
                starts.push(clock + 10);
                for (a, b) in [(0, 1), (1, 2), (2, 1), (1, 0)] {
                    send(&mut t, &mut clock, a, b, 7);
                }
                inserted += 1;
            } else {
                let a = next(6) as u32;
                let b = (a + 1 + next(5) as u32) % 6;
                send(&mut t, &mut clock, a, b, tag);
                tag += 1;
            }
        }
        let opts = PatternOptions {
            with_envelope: true,
            ..Default::default()
        };
        let a = analyse(&t, &opts);
        let found: Vec<_> = a
            .communication_patterns
            .iter()
            .filter(|p| p.from_rank_patterns)
            .collect();
        assert_eq!(found.len(), 1, "round {round}: {:#?}", a.communication_patterns);
        let p = found[0];
        assert_eq!(p.ranks, vec![0, 1, 2]);
        let sizes: Vec<usize> = p.events.values().map(|e| e.len()).collect();
        assert_eq!(sizes, vec![2, 4, 2]);
        assert_eq!(p.occurrences, k, "round {round}");
        assert_eq!(p.positions, starts, "round {round}");
    }
}

/// Sweep3D (§4.8.1.1, Figures 4.14/4.15) on a 3x2 grid: sweeps from the four corners, each
/// repeated 30 times in a row, the four together 12 times. Exactly four communication patterns,
/// the sweeps, each 30 × 12 = 360 times, each with one message per grid edge (7 edges: 14 events).
#[test]
fn sweep3d_four_sweeps_exact_counts() {
    use tracelogic_analysis::patterns::templates::{wavefront, Corner};
    use tracelogic_model::{COMM_WORLD, NO_CALLPATH};
    let (columns, rows) = (3u32, 2u32);
    let corners = [
        Corner::BottomRight,
        Corner::TopLeft,
        Corner::BottomLeft,
        Corner::TopRight,
    ];
    let mut t = Trace::new("generated", "sweep3d", columns * rows);
    let mut clock = 0u64;
    let (repeats, iterations) = (30, 12);
    for _ in 0..iterations {
        for corner in corners {
            let pattern = wavefront(columns, rows, corner, false, None).unwrap();
            // Visit ranks by distance from the sweep's corner so every receive follows its send.
            let (cx, cy) = match corner {
                Corner::TopLeft => (0, 0),
                Corner::TopRight => (columns - 1, 0),
                Corner::BottomLeft => (0, rows - 1),
                Corner::BottomRight => (columns - 1, rows - 1),
            };
            let mut order: Vec<u32> = (0..columns * rows).collect();
            order.sort_by_key(|&r| (r % columns).abs_diff(cx) + (r / columns).abs_diff(cy));
            for _ in 0..repeats {
                for &r in &order {
                    for ev in &pattern[&r] {
                        clock += 10;
                        let peer: u32 = ev[1..].parse().unwrap();
                        let (name, dir) = if ev.starts_with('S') {
                            ("MPI_Send", P2pDir::Send)
                        } else {
                            ("MPI_Recv", P2pDir::Recv)
                        };
                        let c = t.push_call(r, name, clock, clock + 5, NO_CALLPATH, 0);
                        t.push_p2p(r, c, c, dir, peer, 0, COMM_WORLD, 1024);
                    }
                }
            }
        }
    }
    let a = analyse(&t, &PatternOptions::default());
    assert_eq!(a.communication_patterns.len(), 4, "{:#?}", a.communication_patterns);
    for p in &a.communication_patterns {
        assert_eq!(p.occurrences, repeats * iterations);
        assert_eq!(p.ranks.len(), 6);
        assert_eq!(p.events.values().map(|e| e.len()).sum::<usize>(), 14);
    }
    // Per rank: the four sweep units (360 copies each) and the global pattern (12 copies).
    for (rank, ps) in &a.rank_patterns {
        let mut freq: Vec<usize> = ps.iter().map(|p| p.frequency).collect();
        freq.sort();
        assert_eq!(freq, vec![12, 360, 360, 360, 360], "rank {rank}: {ps:#?}");
    }
}
