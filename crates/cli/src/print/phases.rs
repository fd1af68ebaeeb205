//! What `tracelogic phases` prints.

use crate::common::{emit, print_json, seconds, table, CliError, Selected};
use tracelogic_engine::phases::PhasesReport;

/// Print `r` as JSON (the phase analysis, then `selection`) or text.
pub fn print(r: &PhasesReport, json: bool) -> Result<(), CliError> {
    if json {
        return print_json(&Selected {
            report: &r.analysis,
            selection: &r.selection,
        });
    }
    let text = text(r);
    emit(|out| out.write_all(text.as_bytes()))
}

/// The text of `tracelogic phases`: the phases table and, when ranks reach phases at different
/// times, the note that says so.
pub fn text(r: &PhasesReport) -> String {
    let p = &r.analysis;
    let mut o = format!(
        "{} pattern occurrences ({} patterns), {} phases at s0 = {}\n",
        p.sequence_length,
        r.patterns,
        p.phases.len(),
        r.strength
    );
    let rows = p
        .phases
        .iter()
        .map(|ph| {
            let pats: Vec<String> = ph
                .patterns
                .iter()
                .take(4)
                .map(|(id, n)| match id {
                    Some(id) => format!("#{id}x{n}"),
                    None => format!("outside x{n}"),
                })
                .collect();
            let routines: Vec<String> = ph.routines.iter().take(2).map(|r| r.0.clone()).collect();
            vec![
                ph.start.to_string(),
                ph.end.to_string(),
                seconds(ph.time.0),
                seconds(ph.time.1),
                seconds(ph.extent.1),
                pats.join(" "),
                routines.join(" "),
            ]
        })
        .collect();
    o += &table(
        &["start", "end", "from s", "to s", "last ends s", "patterns", "routines"],
        rows,
        &[0, 1, 2, 3, 4],
    );
    if let Some(note) = r.skew_note(seconds) {
        o += &note;
        o.push('\n');
    }
    o
}
