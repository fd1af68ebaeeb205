//! Searching a pattern the user gives in every rank's events ([`search_pattern`]).

use super::*;

/// One occurrence of a searched communication pattern: connected windows on every rank of the
/// pattern, each within the allowed edit distance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchMatch {
    /// Earliest entry time (ns) of its calls.
    pub start: tracelogic_model::Time,
    /// Latest exit time.
    pub end: tracelogic_model::Time,
    /// Per pattern rank, the matched window.
    pub windows: BTreeMap<Rank, approx::ApproxMatch>,
    /// Sum of the windows' edit distances.
    pub edits: u32,
}

/// The result of searching a given pattern (thesis §4.5 then §4.7).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PatternSearch {
    /// Allowed edits per rank.
    pub max_edits: u32,
    /// Per rank of the pattern, the similar windows found on it.
    pub rank_matches: BTreeMap<Rank, Vec<approx::ApproxMatch>>,
    /// Filter counters per rank.
    pub rank_stats: BTreeMap<Rank, approx::ApproxStats>,
    /// Occurrences across ranks: windows joined through their messages, covering every rank
    /// of the pattern.
    pub matches: Vec<SearchMatch>,
}

/// Longest per-rank pattern [`search_pattern`] accepts.
pub const MAX_SEARCH_EVENTS: usize = 4096;

/// Search `pattern` (rank → event symbols, e.g. `S1 R4`) in the trace with at most `max_edits`
/// edits per rank, using bi-grams for the filter. Symbols the trace never uses match nothing
/// (they still count as edits).
pub fn search_pattern(
    trace: &Trace,
    matching: &tracelogic_model::Matching,
    events: &Events,
    pattern: &BTreeMap<Rank, Vec<String>>,
    max_edits: u32,
) -> Result<PatternSearch, String> {
    let mut extra: HashMap<&str, u32> = HashMap::new();
    let mut occurrences = vec![Vec::new(); events.ranks.len()];
    let mut out = PatternSearch {
        max_edits,
        ..Default::default()
    };
    for (&rank, syms) in pattern {
        let re = events
            .ranks
            .get(rank as usize)
            .ok_or_else(|| format!("pattern names rank {rank}, the trace has {} ranks", events.ranks.len()))?;
        if syms.is_empty() {
            return Err(format!("pattern rank {rank} has no events"));
        }
        if syms.len() > MAX_SEARCH_EVENTS {
            return Err(format!(
                "pattern rank {rank} has {} events; at most {MAX_SEARCH_EVENTS} are searched (each candidate costs length² to verify)",
                syms.len()
            ));
        }
        let ids: Vec<u32> = syms
            .iter()
            .map(|s| {
                events.symbol(s).unwrap_or_else(|| {
                    let next = events.names.len() as u32 + extra.len() as u32;
                    *extra.entry(s.as_str()).or_insert(next)
                })
            })
            .collect();
        let (m, stats) = approx::approximate_matches(&re.symbols, &ids, max_edits, 2);
        occurrences[rank as usize] = m.iter().map(|w| (w.start, w.start + w.len)).collect();
        out.rank_matches.insert(rank, m);
        out.rank_stats.insert(rank, stats);
    }
    // An occurrence needs a window on every rank of the pattern: without one somewhere there is
    // nothing to join (and orientation searches skip the construction).
    if out.rank_matches.values().any(Vec::is_empty) {
        return Ok(out);
    }
    let ops = construct::OpIndex::of(trace, events);
    let comm = construct::construct_with_iterations(trace, matching, events, &ops, &occurrences, &[], &[]);
    // Windows chained only by messages that cross an iteration boundary are cut as detection
    // cuts them (iterations matched by the majority of their messages), so a detected pattern
    // searched back is found as often as it was detected.
    let input = fold::FoldInput {
        trace,
        matching,
        events,
        ops: &ops,
        innermost: false,
    };
    let state = fold::Folded {
        occurrences,
        loops: Vec::new(),
        communication: comm,
    };
    let comm = match iterations::split_by_majority(&input, &state) {
        Some(split) => split.communication,
        None => state.communication,
    };
    for inst in &comm.instances {
        let mut windows = BTreeMap::new();
        for part in &inst.parts {
            if let Some(m) = out.rank_matches.get(&part.rank) {
                let i = m.partition_point(|w| w.start + w.len <= part.first_event);
                if let Some(w) = m.get(i).filter(|w| w.start <= part.last_event) {
                    windows.insert(part.rank, *w);
                }
            }
        }
        if windows.len() == pattern.len() {
            let edits = windows.values().map(|w| w.edits).sum();
            out.matches.push(SearchMatch {
                start: inst.start,
                end: inst.end,
                windows,
                edits,
            });
        }
    }
    Ok(out)
}
