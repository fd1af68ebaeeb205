//! The ground truth of a generated trace: what an analysis of it should find.

use crate::spec::{Spec, Style};
use serde::{Deserialize, Serialize};
use tracelogic_graph::TopologySpec;
use tracelogic_model::{Rank, Time};

/// Everything the generator knows about a trace it wrote: the spec it came from, which
/// topology node each rank plays, and where each phase lies. Written by `tracelogic generate
/// --truth FILE` so tests and workshops can check topology identification, mappings, filtering
/// and phase detection against it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Truth {
    /// The spec, with every default filled in (feeding it back regenerates the same trace).
    pub spec: Spec,
    /// Number of world ranks (the node count of the largest phase topology).
    pub ranks: u32,
    /// `node_of_rank[r]`: the topology node world rank r plays (row-major node numbers, see
    /// `tracelogic_graph::families`).
    pub node_of_rank: Vec<u32>,
    /// Ranks not on their row-major node (`node_of_rank[r] != r`).
    pub moved_ranks: u32,
    /// Per-rank compute multipliers drawn for [`Spec::imbalance`]; empty when balanced.
    pub compute_factor: Vec<f64>,
    /// One entry per phase, in execution order.
    pub phases: Vec<PhaseTruth>,
    /// MPI calls in the trace.
    pub calls: u64,
    /// Point-to-point messages (sends) in the trace, noise included.
    pub messages: u64,
}

impl Truth {
    /// `rank_of_node[u]`: the world rank playing topology node u (inverse of
    /// [`Truth::node_of_rank`]).
    pub fn rank_of_node(&self) -> Vec<Rank> {
        let mut out = vec![0; self.node_of_rank.len()];
        for (r, &u) in self.node_of_rank.iter().enumerate() {
            out[u as usize] = r as Rank;
        }
        out
    }
}

/// One phase as generated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseTruth {
    /// Its topology, e.g. `torus:4x4`.
    #[serde(with = "crate::spec::topology_text")]
    pub topology: TopologySpec,
    /// Readable name of the topology, e.g. `4x4 torus`.
    pub label: String,
    /// Exchange style.
    pub style: Style,
    /// Iterations.
    pub iterations: u32,
    /// Main message size in bytes (before per-direction overrides).
    pub bytes: u64,
    /// Entry time of the phase's first call on any rank.
    pub start_ns: Time,
    /// Exit time of the phase's last call on any rank.
    pub end_ns: Time,
    /// Pattern messages of the phase (noise excluded).
    pub messages: u64,
    /// The off-topology low-volume links (one message per iteration each).
    pub noise: Vec<NoiseLink>,
}

/// A noise link: `sender` sends `bytes` to `receiver` once per iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoiseLink {
    /// Sending world rank.
    pub sender: Rank,
    /// Receiving world rank (not a topology neighbour of the sender).
    pub receiver: Rank,
    /// Size of each message.
    pub bytes: u64,
}
