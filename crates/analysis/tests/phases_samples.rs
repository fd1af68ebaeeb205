//! Phases of the real NPB LU sample (class S, 8 ranks, 50 time steps: `SOURCES.md` in
//! tests/data/samples) mapped back to time: the phases follow one another, and where a phase's
//! occurrences reach into the next phase it is because ranks reach the phase at different times.

use std::path::PathBuf;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside};
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
    let p = detect_phases(&trace, &events, &a.communication, 0.0, Outside::Own);
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
