//! Selections of calls and messages (thesis ch. 3, §3.5.2): by ranks, time window, message
//! size and call kind. Every analysis accepts a [`Selection`].

use crate::{CallKind, Rank, Time};
use serde::{Deserialize, Serialize};

/// Which part of a trace to look at. The default selects everything.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// Only these world ranks (`None` = all).
    pub ranks: Option<Vec<Rank>>,
    /// Only calls entered at or after this time.
    pub from: Option<Time>,
    /// Only calls entered before this time.
    pub to: Option<Time>,
    /// Only operations of at least this many bytes.
    pub min_bytes: Option<u64>,
    /// Only operations of at most this many bytes.
    pub max_bytes: Option<u64>,
    /// Only calls of these kinds (`None` = all).
    pub kinds: Option<Vec<CallKind>>,
}
