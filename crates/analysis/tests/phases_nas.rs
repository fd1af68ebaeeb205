//! Phases of generated NAS MG skeletons on 32 and 64 ranks (tracelogic_synth's `mg`, NPB 3.3
//! partners and order). The program is: 7 input broadcasts, `zran3` (a barrier, 40
//! `MPI_Allreduce`s, a barrier, a halo exchange), norms, the warm-up V-cycle, `zran3` again, the
//! timed V-cycles, the final norm. Its coarse-level exchanges between two ranks were patterns
//! of one or two occurrences, which the thesis' tree cut into single leaves (17 and 34 leaves);
//! with the timed V-cycles one pattern per iteration (docs/patterns.md, *Outer loops*) both
//! give 11 leaves. The phases must be a handful, beginning with the broadcasts and the first
//! `zran3`.

use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside};
use tracelogic_model::match_messages;
use tracelogic_synth::{generate_nas, NasBenchmark, NasClass, NasSpec};

fn check(ranks: u32) {
    let (trace, _) = generate_nas(&NasSpec::new(NasBenchmark::Mg, NasClass::S, ranks)).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let p = detect_phases(&trace, &events, &a.communication, 0.0, Outside::Own);
    let summary: Vec<String> = p.phases.iter().map(|ph| ph.summary()).collect();
    assert!(
        p.phases.len() <= 7,
        "{ranks} ranks: {} phases: {summary:?}",
        p.phases.len()
    );
    assert!(p.leaves > p.phases.len(), "{} leaves", p.leaves);
    assert_eq!(
        p.phases[0].collectives.first().map(|c| c.0.as_str()),
        Some("MPI_Bcast"),
        "{summary:?}"
    );
    assert!(p.phases[0].collectives.contains(&("MPI_Bcast".to_owned(), 7)));
    assert!(
        p.phases[1].collectives.contains(&("MPI_Allreduce".to_owned(), 40)),
        "{summary:?}"
    );
    assert_eq!(
        p.phases[1].topology.as_ref().unwrap().ranks,
        0,
        "zran3 has no point-to-point"
    );
}

#[test]
fn mg_32_ranks_a_handful_of_phases() {
    check(32);
}

#[test]
fn mg_64_ranks_a_handful_of_phases() {
    check(64);
}
