//! ε: the two communication graphs and their maximum common edge subgraph (PACPM Definition 6).

use serde::{Deserialize, Serialize};
use tracelogic_graph::mcs::McsMethod;

/// The two communication graphs and their common subgraph, ready to draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphComparison {
    /// Edges of the first run's graph.
    pub edges_a: Vec<[u32; 2]>,
    /// Edges of the second run's graph.
    pub edges_b: Vec<[u32; 2]>,
    /// For each rank of the first run, the rank of the second it corresponds to in the common
    /// subgraph.
    pub mapping: Vec<u32>,
    /// Edges of the first graph kept in the common subgraph (first run's rank numbers).
    pub common_edges: Vec<[u32; 2]>,
    /// `|E_S|`.
    pub common: usize,
    /// Proven upper bound on `|E_S|`.
    pub upper_bound: usize,
    /// The search stage that settled `|E_S|`.
    pub method: McsMethod,
    /// Search steps spent.
    pub steps: u64,
}
