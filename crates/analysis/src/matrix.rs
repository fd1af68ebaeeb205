//! Rank-to-rank communication matrix and low-volume filtering (seed 000 §4.1).
//! To be implemented with the foundation issue.

use serde::{Deserialize, Serialize};

/// Which quantity a matrix counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Bytes sent.
    Bytes,
    /// Messages sent.
    Messages,
}

/// Point-to-point traffic between every pair of ranks; row = sender, column = receiver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommMatrix {
    /// Number of ranks (the matrices are `ranks × ranks`, row-major).
    pub ranks: u32,
    /// Bytes sent from row rank to column rank.
    pub bytes: Vec<u64>,
    /// Messages sent from row rank to column rank.
    pub messages: Vec<u64>,
}

/// The binary matrix left after removing low-volume entries, and what removing them cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Filtered {
    /// Threshold used, in percent.
    pub threshold_pct: f64,
    /// Metric the threshold applied to.
    pub metric: Metric,
    /// 0/1 per entry, row-major `ranks × ranks`.
    pub binary: Vec<u8>,
    /// Entries that were non-zero before filtering and are 0 after.
    pub removed_entries: u64,
    /// Share (0..1) of the metric's total carried by the removed entries.
    pub removed_share: f64,
}

impl CommMatrix {
    /// Build the matrix of the point-to-point sends in `selection`.
    pub fn from_trace(trace: &tracelogic_model::Trace, selection: &tracelogic_model::Selection) -> CommMatrix {
        let _ = (trace, selection);
        unimplemented!("matrix lands with the foundation issue")
    }

    /// Remove entries below `threshold_pct` percent (rule in `docs/cli.md`) and binarise.
    pub fn filter(&self, metric: Metric, threshold_pct: f64) -> Filtered {
        let _ = (metric, threshold_pct);
        unimplemented!("filtering lands with the foundation issue")
    }
}
