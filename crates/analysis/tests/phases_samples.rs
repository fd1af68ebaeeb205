//! Phases of the real NPB LU sample (class S, 8 ranks, 50 time steps: `SOURCES.md` in
//! tests/data/samples) mapped back to time: the phases follow one another, and where a phase's
//! occurrences reach into the next phase it is because ranks reach the phase at different times.

use std::path::PathBuf;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, detect_phases_with, Outside, PhaseOptions};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::match_messages;

#[test]
fn npb_lu_phase_times_follow_one_another() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples/npb-lu.S.8");
    let trace = read_trace(load_paths(&[dir]).unwrap()).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    // The thesis' leaves, not merged: the set-up broadcasts are a leaf of their own.
    let leaves = PhaseOptions {
        significance: 1.0,
        ..PhaseOptions::default()
    };
    let p = detect_phases_with(&trace, &events, &a.communication, &leaves);
    assert!(p.phases.len() > 2);
    let first = &a.communication.instances[0];
    let last_end = a.communication.instances.iter().map(|i| i.end).max().unwrap();
    assert_eq!(p.phases[0].time.0, first.start);
    assert_eq!(p.phases.last().unwrap().time.1, last_end);
    for (k, ph) in p.phases.iter().enumerate() {
        assert!(ph.time.0 <= ph.time.1, "phase {k}: {:?}", ph.time);
        assert_eq!(ph.time.0, ph.extent.0, "phase {k}");
        // Its extent is that of its occurrences: they all begin inside its interval.
        let occurrences = &a.communication.instances[ph.start..ph.end];
        assert!(occurrences.iter().all(|i| i.start >= ph.time.0 && i.start <= ph.time.1));
        assert_eq!(ph.extent.1, occurrences.iter().map(|i| i.end).max().unwrap());
    }
    for w in p.phases.windows(2) {
        assert_eq!(w[0].time.1, w[1].time.0);
    }
    // Phase 0 is LU's set-up: ten broadcasts of the input parameters from rank 0. Rank 0 leaves
    // them before any other rank enters them, and begins the next phase at once, so the phase's
    // extent (until the last rank leaves the broadcasts) reaches far into phase 1's interval.
    // Per rank, the two phases are still in order.
    let setup = &p.phases[0];
    assert_eq!((setup.start, setup.end), (0, 10));
    let id = setup.patterns[0].0.unwrap();
    assert!(a.communication_patterns[id]
        .events
        .values()
        .all(|e| e == &vec!["MPI_Bcast".to_string()]));
    assert!(setup.extent.1 > p.phases[1].time.0 + 10_000_000, "{:?}", setup.extent);
    let rank0 = setup.ranks.iter().find(|r| r.rank == 0).unwrap();
    assert!(setup.ranks.iter().filter(|r| r.rank != 0).all(|r| r.start > rank0.end));
    for r in &setup.ranks {
        let next = p.phases[1].ranks.iter().find(|n| n.rank == r.rank).unwrap();
        assert!(r.end <= next.start, "rank {}: {r:?} then {next:?}", r.rank);
    }
}

fn sample(
    name: &str,
) -> (
    tracelogic_model::Trace,
    tracelogic_analysis::patterns::PatternAnalysis,
    tracelogic_analysis::phases::PhaseAnalysis,
) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/samples")
        .join(name);
    let trace = read_trace(load_paths(&[dir]).unwrap()).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let p = detect_phases(&trace, &events, &a.communication, 0.0, Outside::Own);
    (trace, a, p)
}

/// Share of the run's duration (first to last occurrence) a phase covers.
fn share(p: &tracelogic_analysis::phases::PhaseAnalysis, k: usize) -> f64 {
    let (a, b) = (p.phases[0].time.0, p.phases.last().unwrap().time.1);
    let t = p.phases[k].time;
    (t.1 - t.0) as f64 / (b - a) as f64
}

/// Stationary runs give few phases. NPB BT (9 ranks): the input broadcasts, the 60 time steps
/// with the dummy step before them (the step pattern's 61 occurrences, docs/patterns.md), the
/// verification — three phases, where the thesis' tree has more leaves. NPB LU (8 ranks): at
/// most six, as its program has stages (NPB 3.x `lu.f`: `read_input`'s broadcasts, the set-up
/// exchanges and `l2norm`, the warm-up `ssor(1)` — one step, its sweeps per plane —, `ssor`'s
/// first step, its steps, `error`/`pintgr`/`verify`); one phase is exactly the 49 time steps found
/// as the global pattern and spans more than 85 % of the run (49 of the 50 steps: the last holds
/// `ssor`'s residual reductions).
#[test]
fn stationary_runs_give_few_phases() {
    let (_, a, p) = sample("npb-bt.S.9");
    assert_eq!(
        p.phases.len(),
        3,
        "{:?}",
        p.phases.iter().map(|x| (x.start, x.end)).collect::<Vec<_>>()
    );
    let step = a
        .communication_patterns
        .iter()
        .find(|c| c.occurrences == 61)
        .unwrap()
        .id;
    let holds = p
        .phases
        .iter()
        .position(|ph| ph.patterns.contains(&(Some(step), 61)))
        .unwrap();
    assert!(share(&p, holds) > 0.95, "{}", share(&p, holds));
    assert!(p.phases[0].topology.as_ref().unwrap().ranks == 0 && p.phases[0].collectives[0].0 == "MPI_Bcast");

    let (_, a, p) = sample("npb-lu.S.8");
    assert!(
        p.phases.len() <= 6 && p.leaves > 2 * p.phases.len(),
        "{} phases of {} leaves",
        p.phases.len(),
        p.leaves
    );
    let step = a
        .communication_patterns
        .iter()
        .find(|c| c.occurrences == 49)
        .unwrap()
        .id;
    let holds = p
        .phases
        .iter()
        .position(|ph| ph.patterns.contains(&(Some(step), 49)))
        .unwrap();
    // LU's source runs one untimed SSOR iteration before the timer; its sweeps (patterns seen 10
    // times each, the lone step's planes) may fall on either side of the boundary.
    assert_eq!(p.phases[holds].patterns[0], (Some(step), 49));
    assert!(share(&p, holds) > 0.85, "{}", share(&p, holds));
    // LU runs on a 4x2 process grid: the loop phase's graph is identified as one.
    assert_eq!(p.phases[holds].topology.as_ref().unwrap().label, "4x2 grid");
}

/// NPB MG (8 ranks): the phases follow the program (NPB 3.x `mg.f`): the input broadcasts; the
/// first `zran3` (its 40 `MPI_Allreduce`s, no point-to-point); the warm-up V-cycle; the second
/// `zran3` (40 again); the four timed V-cycles, whose halo exchange (`comm3`, 14 per cycle) is
/// in one phase 56 times; the end. At most eight phases.
#[test]
fn npb_mg_phases_follow_the_program() {
    let (_, a, p) = sample("npb-mg.S.8");
    assert!(p.phases.len() <= 8, "{}", p.phases.len());
    let zran3: Vec<usize> = p
        .phases
        .iter()
        .enumerate()
        .filter(|(_, ph)| {
            ph.topology.as_ref().unwrap().ranks == 0
                && ph.collectives.iter().any(|c| c == &("MPI_Allreduce".to_owned(), 40))
        })
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        zran3.len(),
        2,
        "{:?}",
        p.phases.iter().map(|x| x.summary()).collect::<Vec<_>>()
    );
    assert_eq!(p.phases[0].collectives[0].0, "MPI_Bcast");
    // The halo exchange: 74 occurrences of 96 events (docs/patterns.md, NAS samples).
    let exchange = a
        .communication_patterns
        .iter()
        .find(|c| c.occurrences == 74 && c.events.values().map(|e| e.len()).sum::<usize>() == 96)
        .unwrap();
    let timed = p
        .phases
        .iter()
        .position(|ph| ph.patterns.contains(&(Some(exchange.id), 56)))
        .unwrap();
    assert!(timed > zran3[1] && timed < p.phases.len() - 1);
}
