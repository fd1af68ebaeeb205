//! What is in a trace: ranks, calls by kind, bytes, duration, communicators, unmatched messages.
//! To be implemented with the foundation issue.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Overview of a trace, as `tracelogic summary --json` prints it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Source format name (`otf2`, `dumpi`, ...).
    pub format: String,
    /// Number of world ranks.
    pub ranks: u32,
    /// Total MPI call records.
    pub calls: u64,
    /// Calls per rank.
    pub calls_per_rank: Vec<u64>,
    /// MPI function name → number of calls.
    pub calls_by_kind: BTreeMap<String, u64>,
    /// Point-to-point bytes sent over all ranks.
    pub p2p_bytes: u64,
    /// Point-to-point send operations.
    pub p2p_messages: u64,
    /// Bytes contributed to collectives over all ranks.
    pub collective_bytes: u64,
    /// Wall-clock span of the trace in seconds.
    pub duration_s: f64,
    /// Communicators: name and size.
    pub communicators: Vec<CommunicatorInfo>,
    /// Sends no receive matched.
    pub unmatched_sends: u64,
    /// Receives no send matched.
    pub unmatched_recvs: u64,
    /// Reader warnings.
    pub warnings: Vec<String>,
}

/// A communicator as the summary lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommunicatorInfo {
    /// Name.
    pub name: String,
    /// Number of member ranks.
    pub size: u32,
}

/// Summarise `trace`, with the unmatched counts taken from `matching`.
pub fn summarize(trace: &tracelogic_model::Trace, matching: &tracelogic_model::Matching) -> Summary {
    let _ = (trace, matching);
    unimplemented!("summary lands with the foundation issue")
}
