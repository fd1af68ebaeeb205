//! Helpers for the tests that check loop iterations against a generator's or a log's step
//! starts (event indices where each step begins on each rank).

use tracelogic_analysis::patterns::PatternAnalysis;

/// The first three communication patterns as (occurrences, ranks, events covered), for
/// assertion messages.
pub fn summary(a: &PatternAnalysis) -> Vec<(usize, usize, u64)> {
    a.communication_patterns
        .iter()
        .take(3)
        .map(|p| (p.occurrences, p.ranks.len(), p.events_covered))
        .collect()
}

/// The instance part holding the most step starts: (pattern id, rank, starts inside it), `None`
/// when there are no instances. `starts[rank]` are that rank's step starts, ascending.
pub fn most_steps_in_one_part(a: &PatternAnalysis, starts: &[Vec<u32>]) -> Option<(u32, u32, usize)> {
    a.communication
        .instances
        .iter()
        .flat_map(|inst| inst.parts.iter().map(move |p| (inst.pattern, p)))
        .map(|(pattern, p)| {
            let s = &starts[p.rank as usize];
            let inside = s.partition_point(|&x| x <= p.last_event) - s.partition_point(|&x| x < p.first_event);
            (pattern, p.rank, inside)
        })
        .max_by_key(|&(_, _, inside)| inside)
}
