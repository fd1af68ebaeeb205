//! The JSON documents of the reports: what `tracelogic <subcommand> --json` prints and what the
//! Python and JavaScript packages return, built here once so every front end gives the same
//! document. A report whose document is the report itself (summary, topology, profile, …) has
//! no function here; the others are one function each.

mod logical;
mod matrix;

pub use logical::{expansion, logical, rank_program, ExpansionDocument, LogicalDocument, RankDocument};
pub use matrix::{matrix, Cell, DenseRow, DenseRows, EntryList, MatrixDocument, WaitingRows, MAX_MATRIX_RANKS};

use crate::patterns::{CommunicationPattern, PatternsReport, RankPatternOut, RoutineComparison};
use crate::phases::PhasesReport;
use serde::Serialize;
use std::collections::BTreeMap;
use tracelogic_model::{Rank, Selection};

/// A report with the selection it was computed on: the report's own fields, then `selection`
/// (the [`Selection`] object `query` prints too, times absolute in the trace's clock).
#[derive(Debug, Serialize)]
pub struct Selected<'a, T: Serialize> {
    /// The report.
    #[serde(flatten)]
    pub report: &'a T,
    /// The selection applied.
    pub selection: &'a Selection,
}

/// The document of `tracelogic patterns --json`: every pattern (the text lists the shown ones),
/// with the `hidden_*` fields saying which the default listing hides, then the selection.
#[derive(Debug, Serialize)]
pub struct PatternsDocument<'a> {
    /// Events of the selection.
    pub events: u64,
    /// Events inside per-rank pattern occurrences.
    pub events_in_patterns: u64,
    /// Every communication pattern, most events covered first.
    pub communication_patterns: &'a [CommunicationPattern],
    /// Each rank's own patterns.
    pub rank_patterns: &'a BTreeMap<Rank, Vec<RankPatternOut>>,
    /// Routine-directed against syntactic patterns, when the trace has routines.
    pub routine_comparison: &'a Option<RoutineComparison>,
    /// Patterns the default listing shows.
    pub shown_patterns: usize,
    /// Patterns it hides (each under `min_share` of the events, or seen once over several
    /// ranks).
    pub hidden_patterns: usize,
    /// Of them, the instances seen once over several ranks.
    pub hidden_seen_once: usize,
    /// Their events over all events.
    pub hidden_seen_once_share: f64,
    /// Events the hidden patterns cover.
    pub hidden_events: u64,
    /// `hidden_events` over `events_in_patterns`.
    pub hidden_share: f64,
    /// The share under which a pattern is hidden.
    pub min_share: f64,
    /// The selection applied.
    pub selection: &'a Selection,
}

/// The document of `r`.
pub fn patterns(r: &PatternsReport) -> PatternsDocument<'_> {
    PatternsDocument {
        events: r.events,
        events_in_patterns: r.events_in_patterns,
        communication_patterns: &r.patterns,
        rank_patterns: &r.rank_patterns,
        routine_comparison: &r.routine_comparison,
        shown_patterns: r.shown_patterns,
        hidden_patterns: r.hidden_patterns,
        hidden_seen_once: r.hidden_seen_once,
        hidden_seen_once_share: r.hidden_seen_once_share,
        hidden_events: r.hidden_events,
        hidden_share: r.hidden_share,
        min_share: r.min_share,
        selection: &r.selection,
    }
}

/// The document of `tracelogic phases --json`: the phase analysis, then the selection.
pub fn phases(r: &PhasesReport) -> Selected<'_, crate::phases::PhaseAnalysis> {
    Selected {
        report: &r.analysis,
        selection: &r.selection,
    }
}
