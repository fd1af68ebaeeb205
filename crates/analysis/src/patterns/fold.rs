//! What the loop-folding stages share: their fixed context ([`FoldInput`]) and the state they
//! pass on from one to the next ([`Folded`]), so every stage has one signature ([`Stage`]) and
//! [`super::analyse_nested`] runs them as a list.

use super::construct::{CommunicationAnalysis, OpIndex};
use super::{Events, Occurrences};
use tracelogic_model::{Matching, Trace};

/// The context every fold stage reads and none changes: the trace, its matched messages, the
/// ranks' events, the index of their operations, and whether the ranks were parsed innermost
/// first (the retry of [`super::analyse_nested`]). Grouped so the stages need not each list
/// them all.
#[derive(Clone, Copy)]
pub(super) struct FoldInput<'a> {
    pub trace: &'a Trace,
    pub matching: &'a Matching,
    pub events: &'a Events,
    pub ops: &'a OpIndex,
    pub innermost: bool,
}

/// What the fold stages transform, one stage's result the next one's start: per rank, the
/// occurrences; `loops[r][k]`, the loop occurrence `k` of rank `r` is an iteration of
/// ([`super::steps::NOT_A_STEP`]: none; empty: no loop folded yet); and the communication
/// analysis constructed from them.
pub(super) struct Folded {
    pub occurrences: Occurrences,
    pub loops: Vec<Vec<u32>>,
    pub communication: CommunicationAnalysis,
}

impl<'a> FoldInput<'a> {
    /// The trace, its matching, the ranks' events and the operation index, in that order.
    pub fn parts(&self) -> (&'a Trace, &'a Matching, &'a Events, &'a OpIndex) {
        (self.trace, self.matching, self.events, self.ops)
    }
}

/// A [`Folded`] borrowed: its occurrences, loops and communication analysis.
type FoldedParts<'s> = (&'s [Vec<(u32, u32)>], &'s [Vec<u32>], &'s CommunicationAnalysis);

impl Folded {
    /// The occurrences, the loops and the communication analysis, borrowed.
    pub fn parts(&self) -> FoldedParts<'_> {
        (&self.occurrences, &self.loops, &self.communication)
    }
}

/// One fold stage: the new state, or `None` when it changes nothing (the state stands).
pub(super) type Stage = fn(&FoldInput, &Folded) -> Option<Folded>;
