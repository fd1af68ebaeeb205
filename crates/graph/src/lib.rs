//! Graph algorithms for tracelogic over plain undirected graphs: the reference topology
//! families ([`families`]), and (with the topology issue) invariants, spectra, isomorphism with
//! a mapping, and common subgraphs. One engine, used by topology, similarity and patterns alike.

pub mod families;

pub use families::{Direction, Family, TopologySpec};
use serde::{Deserialize, Serialize};

/// A simple undirected graph on nodes `0..n`, stored as sorted adjacency lists (CSR).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Graph {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Graph {
    /// Build from an edge list; self-loops and duplicate edges (in either direction) are dropped.
    ///
    /// O(n + m log m).
    pub fn from_edges(n: u32, edges: impl IntoIterator<Item = (u32, u32)>) -> Graph {
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for (u, v) in edges {
            assert!(u < n && v < n, "edge ({u}, {v}) outside 0..{n}");
            if u != v {
                pairs.push((u, v));
                pairs.push((v, u));
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        let mut offsets = vec![0u32; n as usize + 1];
        for &(u, _) in &pairs {
            offsets[u as usize + 1] += 1;
        }
        for i in 0..n as usize {
            offsets[i + 1] += offsets[i];
        }
        Graph {
            offsets,
            targets: pairs.into_iter().map(|(_, v)| v).collect(),
        }
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> u32 {
        (self.offsets.len() - 1) as u32
    }

    /// Number of (undirected) edges.
    pub fn num_edges(&self) -> usize {
        self.targets.len() / 2
    }

    /// Sorted neighbours of `u`.
    pub fn neighbors(&self, u: u32) -> &[u32] {
        &self.targets[self.offsets[u as usize] as usize..self.offsets[u as usize + 1] as usize]
    }

    /// Degree of `u`.
    pub fn degree(&self, u: u32) -> u32 {
        self.offsets[u as usize + 1] - self.offsets[u as usize]
    }

    /// True if `u` and `v` are adjacent. O(log degree).
    pub fn has_edge(&self, u: u32, v: u32) -> bool {
        self.neighbors(u).binary_search(&v).is_ok()
    }

    /// Every edge once, as `(u, v)` with `u < v`, in increasing order.
    pub fn edges(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.num_nodes()).flat_map(move |u| self.neighbors(u).iter().filter(move |&&v| u < v).map(move |&v| (u, v)))
    }

    /// The same graph with node `u` renamed `perm[u]`.
    pub fn relabel(&self, perm: &[u32]) -> Graph {
        assert_eq!(perm.len(), self.num_nodes() as usize);
        Graph::from_edges(
            self.num_nodes(),
            self.edges().map(|(u, v)| (perm[u as usize], perm[v as usize])),
        )
    }
}
