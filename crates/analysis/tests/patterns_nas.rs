//! The main iteration pattern of the three NAS samples (MG class S on 8 ranks, LU class S on 8,
//! BT class S on 9), with collectives among the events (the default) and point-to-point only.
//! Expected counts come from the benchmarks' structure (NPB 3.x sources, class S parameters), not
//! from a run of this code.

mod common;

use common::sample;
use tracelogic_analysis::patterns::{
    analyse_events, rank_events, CommunicationPattern, PatternAnalysis, PatternOptions,
};
use tracelogic_model::{match_messages, Trace};

/// Patterns of the trace, optionally with its collectives removed (`--kind p2p`).
fn analyse(mut trace: Trace, p2p_only: bool) -> PatternAnalysis {
    if p2p_only {
        for r in &mut trace.ranks {
            r.collectives = Default::default();
        }
    }
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    analyse_events(&trace, &matching, &events, &PatternOptions::default())
}

fn total_events(p: &CommunicationPattern) -> usize {
    p.events.values().map(|e| e.len()).sum()
}

/// The most frequent communication pattern built from per-rank patterns.
fn main_pattern(a: &PatternAnalysis) -> &CommunicationPattern {
    a.communication_patterns
        .iter()
        .filter(|p| p.from_rank_patterns)
        .max_by_key(|p| (p.occurrences, total_events(p)))
        .expect("a communication pattern")
}

/// MG, 32³ points on a 2x2x2 process grid: `comm3` posts two receives and two sends along each
/// of the three axes (the two neighbours of a periodic axis of length 2 are one rank): 12 events
/// per rank, 96 in all. Levels lt = 5, so one V-cycle (`mg3P`) calls `comm3` 4 times going down
/// (`rprj3`), once at the bottom (`psinv`) and twice on each of the 4 levels going up (`resid`,
/// `psinv`): 13, and the `resid` after it makes 14 per iteration. nit = 4 iterations plus the
/// untimed warm-up iteration: 70; `zran3` and the first `resid` before the warm-up and again
/// before the timed loop: 4 more. The thesis (§4.8.2.1.3) counts MG's exchange in every context
/// the same way (109 on class A, 16 ranks).
#[test]
fn npb_mg_halo_exchange_every_comm3() {
    for p2p_only in [false, true] {
        let a = analyse(sample("npb-mg.S.8"), p2p_only);
        let main = main_pattern(&a);
        assert_eq!(main.ranks, (0..8).collect::<Vec<u32>>(), "p2p only: {p2p_only}");
        assert_eq!(total_events(main), 96, "p2p only: {p2p_only}");
        assert!(main.events.values().all(|e| e.len() == 12));
        assert_eq!(main.occurrences, 5 * 14 + 4, "p2p only: {p2p_only}");
        // Every rank's exchange is a per-rank pattern found once per `comm3`.
        for (rank, ps) in &a.rank_patterns {
            assert_eq!(ps[0].frequency, 74, "rank {rank}");
            assert_eq!(ps[0].sequence.len(), 12, "rank {rank}");
        }
    }
}

/// BT, 3x3 processes, 60 time steps plus the dummy step `adi` makes before the loop: 61. Per
/// step and rank: `copy_faces` exchanges with the 6 neighbours of the multi-partition (6
/// receives, 6 sends), and each of the x/y/z solves passes its 3 cells' boundaries forward and
/// back (2 sends and 2 receives each way): 12 + 3 × 8 = 36 events, 324 on 9 ranks.
#[test]
fn npb_bt_time_step_61_times() {
    for p2p_only in [false, true] {
        let a = analyse(sample("npb-bt.S.9"), p2p_only);
        let main = main_pattern(&a);
        assert_eq!(main.ranks.len(), 9);
        assert_eq!(total_events(main), 324, "p2p only: {p2p_only}");
        assert_eq!(main.occurrences, 61, "p2p only: {p2p_only}");
    }
}

/// LU, 4x2 processes, 12³ points: a time step is the 2D halo exchange of `rhs` (both directions
/// of the 10 grid edges: 20 messages) and the two wavefront sweeps (one message per edge and
/// k-plane, 10 planes: 100 messages each way): 220 messages, 440 events. `ssor(1)` before the
/// timed `ssor(50)` is a dummy step, so the thesis' count is 51 (§4.8.2.1.1, 251 for 250 steps).
///
/// Point-to-point only, every rank's step (exchange + both sweeps) is found 51 times, also where
/// `ssor` starts with its own exchange (`X X W`), and after alignment across ranks all 51 are
/// instances: the isolated first steps and the exchanges between them are cut at their run's
/// rotation, and the run's last copy is completed by the exchange after it.
///
/// With collectives, `l2norm`'s `Allreduce` (and a `Barrier`) stand between the exchange and the
/// sweeps of each `ssor`'s first step, and between the sweeps and the exchange of the last step:
/// the exchange-then-sweeps body is contiguous in steps 2–50 of `ssor(50)` only, 49 times.
#[test]
fn npb_lu_time_step_51_times_without_collectives() {
    let a = analyse(sample("npb-lu.S.8"), true);
    for (rank, ps) in &a.rank_patterns {
        let step = ps
            .iter()
            .find(|p| p.frequency == 51)
            .unwrap_or_else(|| panic!("rank {rank}: {ps:#?}"));
        // 20 + 20 sweep events and the exchange with the rank's 2 or 3 grid neighbours.
        let n = step.sequence.len();
        assert!(n == 44 || n == 66, "rank {rank}: {n}");
    }
    let main = main_pattern(&a);
    assert_eq!(total_events(main), 440);
    assert_eq!(main.occurrences, 51);
    // No instance joins two steps (all 51 were chained into one of 21,560 events before).
    let biggest = a.communication_patterns.iter().map(total_events).max().unwrap();
    assert!(biggest < 2 * 440, "{biggest}");
    let d = analyse(sample("npb-lu.S.8"), false);
    let main = main_pattern(&d);
    assert_eq!(total_events(main), 440);
    assert_eq!(main.occurrences, 49);
    for (rank, ps) in &d.rank_patterns {
        assert!(ps.iter().any(|p| p.frequency == 49 || p.frequency == 48), "rank {rank}");
    }
}

/// The cuts the alignment moves (earlier, later, chains of occurrences before and after a run,
/// isolated copies) leave every rank's occurrences in order, apart and inside its events: on the
/// three samples with and without collectives, and on generated wavefront and exchange runs with
/// random rank numbering, whose loop bodies start mid-iteration on many ranks.
#[test]
fn aligned_occurrences_stay_ordered_and_apart() {
    use tracelogic_analysis::patterns::{align::align_runs, detect, parse_occurrences};
    use tracelogic_synth::{generate, Numbering, Spec, Style, TopologySpec};
    let mut traces: Vec<(String, Trace)> = Vec::new();
    for name in ["npb-mg.S.8", "npb-lu.S.8", "npb-bt.S.9"] {
        for p2p_only in [false, true] {
            let mut t = sample(name);
            if p2p_only {
                for r in &mut t.ranks {
                    r.collectives = Default::default();
                }
            }
            traces.push((format!("{name} p2p {p2p_only}"), t));
        }
    }
    for (topology, style) in [
        ("grid:5x4", Style::Wavefront),
        ("torus:4x4", Style::Isend),
        ("grid:3x6", Style::Sendrecv),
    ] {
        for seed in 0..3 {
            let spec = Spec {
                topology: TopologySpec::parse(topology).unwrap(),
                style,
                iterations: 9,
                numbering: Numbering::Random,
                seed,
                ..Default::default()
            };
            traces.push((format!("{topology} {style:?} {seed}"), generate(&spec).unwrap()));
        }
    }
    let mut moved = 0;
    for (label, trace) in &traces {
        let matching = match_messages(trace);
        let events = rank_events(trace, false);
        let alphabet = events.names.len() as u32;
        let occurrences: Vec<Vec<(u32, u32)>> = events
            .ranks
            .iter()
            .map(|re| {
                let p = detect(&re.symbols, alphabet, None, &PatternOptions::default());
                parse_occurrences(re.symbols.len(), &p)
            })
            .collect();
        let aligned = align_runs(trace, &matching, &events, &occurrences);
        for (r, occ) in aligned.iter().enumerate() {
            let n = events.ranks[r].symbols.len() as u32;
            for w in occ.windows(2) {
                assert!(w[0].1 <= w[1].0, "{label}, rank {r}: {w:?}");
            }
            assert!(occ.iter().all(|&(s, e)| s < e && e <= n), "{label}, rank {r}");
            moved += occ.iter().filter(|o| !occurrences[r].contains(o)).count();
        }
    }
    // The alignment does move cuts on these traces (else the check above proves nothing).
    assert!(moved > 0);
}

/// NPB CG class S on 8 ranks (corpus `otf2-npb-cg.S.8`, 2x4 process grid): `conj_grad` runs
/// `cgitmax = 25` iterations (cg.f, a constant), each a matrix-vector product (row reduction
/// over `l2npcols = 2` partners and the transpose exchange: 3 receive/send pairs) and two dot
/// products (2 pairs each): 14 events per rank. After its loop it computes the residual with one
/// more product and dot product, which with the next call's first dot product `rho = r.r` are
/// the same 14 exchanges: 26 per call. It is called once before the timed loop and `niter` times
/// in it (the log's "Iterations: 15"). Wanted: the iteration on every rank, (niter + 1) × 26
/// times. Before chained instances were split at the loop's iterations, five calls were one
/// occurrence of 31 % of the events and the iteration 208 times.
#[test]
fn npb_cg_iteration_once_per_conj_grad_iteration() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps/otf2-npb-cg.S.8");
    let log = std::fs::read_to_string(dir.join("stdout.txt")).unwrap();
    let niter: usize = log
        .lines()
        .find_map(|l| l.trim().strip_prefix("Iterations:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("Iterations in the log");
    let files = tracelogic_formats::fs::load_paths(&[dir]).unwrap();
    let trace = tracelogic_formats::read_trace(files).unwrap();
    let a = analyse(trace, false);
    let first = &a.communication_patterns[0];
    assert_eq!(first.ranks, (0..8).collect::<Vec<u32>>());
    assert!(first.events.values().all(|e| e.len() == 14), "{:?}", first.events);
    assert_eq!(first.occurrences, (niter + 1) * (25 + 1));
    // No instance seen once holds a whole call any more.
    assert!(a
        .communication_patterns
        .iter()
        .filter(|p| p.occurrences == 1)
        .all(|p| p.events_covered * 100 < a.events));
}

/// NPB LU on 16 ranks (4x4), generated with 20 time steps at classes S (12³ points) and W (33³):
/// the time step is the first pattern whatever the number of planes its sweeps pipeline
/// (`nz − 2`: 10 and 31). Rank 0, a corner, sends to its two neighbours on every plane of the
/// lower sweep, receives from them on every plane of the upper one and exchanges the halo once
/// (NPB 3.x `blts`, `buts`, `exchange_3`): 4 · planes + 4 events a step. Steps: 20 and the warm-up
/// `ssor(1)`, less the warm-up, apart from any run, and the last, which holds `ssor`'s residual
/// reductions (as on the recorded LU S: 49 of 51; 48 until 4 Dec, when `ssor`'s first step stayed
/// with the barrier before it). Until 4 Dec class W gave 671 occurrences of one plane: the
/// alignment scored 256 sampled messages a pair of ranks, which fell on the sweeps and missed
/// the halo exchange (2 messages a step for 62), so each step was cut with the next one's
/// exchange and the steps chained.
#[test]
fn lu_time_step_is_the_pattern_whatever_the_planes_its_sweeps_pipeline() {
    use tracelogic_synth::{generate_nas, NasBenchmark, NasClass, NasSpec};
    for (class, planes) in [(NasClass::S, 10), (NasClass::W, 31)] {
        let spec = NasSpec {
            iterations: Some(20),
            ..NasSpec::new(NasBenchmark::Lu, class, 16)
        };
        let (trace, _) = generate_nas(&spec).unwrap();
        let a = analyse(trace, false);
        let top = &a.communication_patterns[0];
        assert_eq!(top.events[&0].len(), 4 * planes + 4, "{class:?}: {:?}", top.events[&0]);
        assert!((19..=21).contains(&top.occurrences), "{class:?}: {}", top.occurrences);
        assert_eq!(top.ranks.len(), 16);
    }
}
