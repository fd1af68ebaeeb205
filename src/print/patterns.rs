//! What `tracelogic patterns` prints.

use crate::common::{emit, print_json, seconds, table, CliError};
use tracelogic_engine::documents;
use tracelogic_engine::patterns::PatternsReport;

/// Print `r` as JSON (every pattern, with the `hidden_*` fields) or text (the shown patterns;
/// with `all` every pattern).
pub fn print(r: &PatternsReport, all: bool, json: bool) -> Result<(), CliError> {
    if json {
        print_json(&documents::patterns(r))
    } else {
        emit(|out| out.write_all(text(r, all).as_bytes()))
    }
}

/// The line saying what the default listing hides ([`PatternsReport::hidden_note`]) and
/// `(--all shows them)`. `None` when nothing is hidden.
pub fn hidden_line(r: &PatternsReport) -> Option<String> {
    r.hidden_note().map(|note| format!("{note} (--all shows them)"))
}

/// The text of `tracelogic patterns`: the shown patterns (with `all`, every pattern).
pub fn text(r: &PatternsReport, all: bool) -> String {
    let listed = if all { &r.patterns[..] } else { r.shown() };
    let mut o = format!(
        "{} events, {} inside per-rank pattern occurrences; {} communication patterns\n",
        r.events,
        r.events_in_patterns,
        r.patterns.len()
    );
    let rows = listed
        .iter()
        .take(if all { usize::MAX } else { 30 })
        .map(|p| {
            let n: usize = p.events.values().map(|e| e.len()).sum();
            vec![
                p.id.to_string(),
                p.occurrences.to_string(),
                p.ranks.len().to_string(),
                n.to_string(),
                seconds(p.positions.first().copied().unwrap_or(0)),
            ]
        })
        .collect();
    if listed.is_empty() && !r.patterns.is_empty() {
        o += "no communication pattern repeats and covers at least ";
        o += &format!("{:.0} % of the events\n", 100.0 * r.min_share);
    } else {
        o += &table(
            &["pattern", "occurrences", "ranks", "events", "first at s"],
            rows,
            &[0, 1, 2, 3, 4],
        );
    }
    for p in listed.iter().filter(|p| !p.variants.is_empty()) {
        let counts: Vec<String> = p.variants.iter().map(|v| v.occurrences.to_string()).collect();
        o += &format!(
            "pattern {}: iterations of one loop in {} forms, {} occurrences (its own events first; --json lists them)\n",
            p.id,
            p.variants.len(),
            counts.join(" + ")
        );
    }
    if !all {
        if let Some(line) = hidden_line(r) {
            o += &line;
            o.push('\n');
        }
        if listed.len() > 30 {
            o += &format!("(first 30 of {} shown patterns)\n", listed.len());
        }
    }
    o += "per-rank patterns (most frequent first)\n";
    let mut rows = Vec::new();
    for (rank, ps) in &r.rank_patterns {
        for p in ps.iter().take(5) {
            let mut text = p.compact.clone();
            if text.len() > 60 {
                text.truncate(57);
                text += "...";
            }
            rows.push(vec![rank.to_string(), p.frequency.to_string(), text]);
        }
    }
    o += &table(&["rank", "frequency", "first occurrence"], rows, &[0, 1]);
    if let Some(c) = &r.routine_comparison {
        o += &format!(
            "routine-directed: {} patterns, syntactic {}, common {} (precision {:.0} %, recall {:.0} %)\n",
            c.routine_directed,
            c.syntactic,
            c.common,
            100.0 * c.precision,
            100.0 * c.recall
        );
    }
    o
}
