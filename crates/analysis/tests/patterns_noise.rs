//! The pattern list is ordered by what each pattern explains and hides the noise: generated NAS
//! MG on 64 ranks (tracelogic_synth's `mg`, NPB 3.3 partners) had 120 communication patterns,
//! 112 of which were one message between two ranks at a coarse multigrid level, seen twice —
//! pieces of the V-cycles that the parse cut differently on different ranks. With the timed
//! V-cycles one pattern per iteration (docs/patterns.md, *Outer loops*) 8 patterns are left, and
//! the default one is the V-cycle, once per timed iteration of the generated program (class S:
//! 4, NPB's `nit`). Coverage is recounted here from the instances and each pattern's per-rank
//! events (its instance's form, for a loop's iterations in several forms), not taken from the
//! pattern's own figure.

use std::collections::BTreeMap;
use tracelogic_analysis::patterns::{analyse_events, construct::OUTSIDE, rank_events, PatternOptions, MIN_SHARE};
use tracelogic_model::match_messages;
use tracelogic_synth::{generate_nas, NasBenchmark, NasClass, NasSpec};

#[test]
fn mg_64_default_pattern_covers_most_and_noise_is_hidden() {
    let (trace, _) = generate_nas(&NasSpec::new(NasBenchmark::Mg, NasClass::S, 64)).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let mut a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    // Events covered per pattern: its events on every rank times its occurrences, counted
    // from the instances.
    let mut covered: BTreeMap<usize, u64> = BTreeMap::new();
    for inst in a.communication.instances.iter().filter(|i| i.pattern != OUTSIDE) {
        let p = &a.communication_patterns[inst.pattern as usize];
        // A loop's iterations in several forms: the instance's own form's events.
        let events = p.variants.get(inst.variant as usize).map_or(&p.events, |v| &v.events);
        *covered.entry(p.id).or_default() += events.values().map(|e| e.len() as u64).sum::<u64>();
    }
    let most = covered.values().copied().max().unwrap();
    assert_eq!(covered[&0], most, "the default pattern explains most");
    for p in &a.communication_patterns {
        assert_eq!(p.events_covered, covered[&p.id], "pattern {}", p.id);
    }
    assert!(a
        .communication_patterns
        .windows(2)
        .all(|w| w[0].events_covered >= w[1].events_covered));
    // The default pattern is the V-cycle on every rank, once per timed iteration.
    let spec = NasSpec::new(NasBenchmark::Mg, NasClass::S, 64);
    let v = &a.communication_patterns[0];
    assert_eq!(v.ranks.len(), 64);
    assert_eq!(v.occurrences, 4, "{spec:?}");
    assert!(
        v.positions.windows(2).all(|w| w[0] < w[1]),
        "one iteration after the other"
    );
    // Every two-rank, two-occurrence message left is hidden; what is shown covers ≥ 1 % each.
    let pairs = a
        .communication_patterns
        .iter()
        .filter(|p| p.ranks.len() == 2 && p.occurrences == 2)
        .count();
    assert!(a.hidden_patterns >= pairs, "{} hidden", a.hidden_patterns);
    assert_eq!(a.shown_patterns + a.hidden_patterns, a.communication_patterns.len());
    let total = a.events as f64;
    assert!(a.shown().iter().all(|p| p.events_covered as f64 >= MIN_SHARE * total));
    let hidden = &a.communication_patterns[a.shown_patterns..];
    assert!(hidden
        .iter()
        .all(|p| (p.events_covered as f64) < MIN_SHARE * total || p.repeats_no_form()));
    assert!(a.shown().iter().all(|p| !p.repeats_no_form()));
    let hidden_events: u64 = hidden.iter().map(|p| covered[&p.id]).sum();
    assert_eq!(a.hidden_events, hidden_events);
    assert!((a.hidden_share - hidden_events as f64 / total).abs() < 1e-12);
    assert!(a.hidden_share < 0.05, "{}", a.hidden_share);
    // The option to show them all.
    a.set_min_share(0.0);
    assert_eq!(
        (a.shown_patterns, a.hidden_patterns),
        (a.communication_patterns.len(), 0)
    );
}
