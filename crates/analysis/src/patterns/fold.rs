//! What the loop-folding stages share: their fixed context ([`FoldInput`]) and the state they
//! pass on from one to the next ([`Folded`]), so every stage has one signature ([`Stage`]) and
//! [`super::analyse_nested`] runs them as a list.

use super::construct::{CommunicationAnalysis, OpIndex};
use super::{Events, Occurrences};
use tracelogic_model::{Matching, Trace};

/// The context every fold stage reads and none changes: the trace, its matched messages, the
/// ranks' events and the index of their operations. Grouped so the stages need not each list
/// all four.
#[derive(Clone, Copy)]
pub(super) struct FoldInput<'a> {
    pub trace: &'a Trace,
    pub matching: &'a Matching,
    pub events: &'a Events,
    pub ops: &'a OpIndex,
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

/// One fold stage: the new state, or `None` when it changes nothing (the state stands).
pub(super) type Stage = fn(&FoldInput, &Folded) -> Option<Folded>;
