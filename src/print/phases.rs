//! What `tracelogic phases` prints.

use crate::common::{emit, print_json, seconds, table, CliError};
use tracelogic_engine::documents;
use tracelogic_engine::phases::PhasesReport;

/// Print `r` as JSON (the phase analysis, then `selection`) or text.
pub fn print(r: &PhasesReport, json: bool) -> Result<(), CliError> {
    if json {
        return print_json(&documents::phases(r));
    }
    let text = text(r);
    emit(|out| out.write_all(text.as_bytes()))
}

/// The header of `tracelogic phases`: how many phases from how many leaves of the thesis'
/// segmentation tree, and the significance level the boundaries were tested at.
pub fn header(r: &PhasesReport) -> String {
    let p = &r.analysis;
    if p.significance >= 1.0 {
        format!(
            "{} phases: the thesis' leaves, not merged (--significance 1)",
            p.phases.len()
        )
    } else {
        format!(
            "{} phases from {} leaves ({})",
            p.phases.len(),
            p.leaves,
            p.boundaries_note()
        )
    }
}

/// One line per phase: what it does (topology label or collectives), its imbalance and late
/// ranks. `phase 2 [40..90): 4x4 torus; MPI_Allreduce ×3; imbalance 1.21 (late ranks 3, 7)`.
pub fn phase_line(k: usize, ph: &tracelogic_engine::phases::Phase) -> String {
    let mut parts = Vec::new();
    if ph.begins_a_stage() {
        parts.push(tracelogic_engine::phases::STAGE_NOTE.to_string());
    }
    let summary = ph.summary();
    if !summary.is_empty() {
        parts.push(summary);
    }
    if let Some(im) = &ph.imbalance {
        let mut i = format!("imbalance {:.2}", im.max_over_mean);
        if !im.late.is_empty() {
            let late: Vec<String> = im.late.iter().map(|r| r.to_string()).collect();
            i += &format!(" (late ranks {})", late.join(", "));
        }
        if let Some(note) = im.left_out_note() {
            i += &format!(" {note}");
        }
        parts.push(i);
    }
    if parts.is_empty() {
        parts.push("not described".into());
    }
    format!("phase {k} [{}..{}): {}", ph.start, ph.end, parts.join("; "))
}

/// The text of `tracelogic phases`: the header, the phases table, one line per phase (what it
/// does, imbalance) and, when ranks reach phases at different times, the note that says so.
pub fn text(r: &PhasesReport) -> String {
    let p = &r.analysis;
    let mut o = header(r);
    o.push('\n');
    o += &format!(
        "{} pattern occurrences ({} patterns), s0 = {}\n",
        p.sequence_length, r.patterns, r.strength
    );
    let rows = p
        .phases
        .iter()
        .enumerate()
        .map(|(k, ph)| {
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
                k.to_string(),
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
        &[
            "phase",
            "start",
            "end",
            "from s",
            "to s",
            "last ends s",
            "patterns",
            "routines",
        ],
        rows,
        &[0, 1, 2, 3, 4, 5],
    );
    for (k, ph) in p.phases.iter().enumerate() {
        o += &phase_line(k, ph);
        o.push('\n');
    }
    o += &sections_text(p);
    if let Some(note) = r.skew_note(seconds) {
        o += &note;
        o.push('\n');
    }
    o
}

/// The section level (docs/phases.md, "Sections"): one line per section with its phases and
/// times; empty when there is none (the thesis' leaves, `--min-share 0`).
pub fn sections_text(p: &tracelogic_engine::phases::PhaseAnalysis) -> String {
    if p.sections.is_empty() {
        return String::new();
    }
    let mut o = format!(
        "{} sections (phases grouped while their kind of communication does not change significantly; each lasts at least --min-share of the run):\n",
        p.sections.len()
    );
    for (k, s) in p.sections.iter().enumerate() {
        let (a, b) = s.phases;
        let which = if b - a == 1 {
            format!("phase {a}")
        } else {
            format!("phases {a}–{}", b - 1)
        };
        let what = s.summary();
        let what = if what.is_empty() {
            String::new()
        } else {
            format!(": {what}")
        };
        o += &format!(
            "section {k}: {which}, {}–{} s{what}\n",
            seconds(s.time.0),
            seconds(s.time.1)
        );
    }
    o
}
