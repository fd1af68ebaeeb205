//! Graph algorithms for tracelogic over plain undirected graphs: the reference topology
//! families ([`families`]) and the candidates of a given size ([`catalog`]), invariants and
//! spectra ([`invariants`]), colour refinement ([`refine`]), isomorphism with a verified mapping
//! under a step budget ([`iso`]), closest matches with their differing edges ([`near`]) and the
//! plain edge-list file format ([`edgelist`]). One engine, used by topology, similarity and
//! patterns alike.

pub mod catalog;
pub mod closed_form;
pub mod edgelist;
pub mod families;
pub mod invariants;
pub mod iso;
pub mod mcs;
pub mod near;
pub mod refine;

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

    /// Build from an edge list whose node ids may be out of range: an error names the first
    /// offending edge instead of panicking (for edges read from files).
    pub fn try_from_edges(n: u32, edges: impl IntoIterator<Item = (u32, u32)>) -> Result<Graph, String> {
        let edges: Vec<(u32, u32)> = edges.into_iter().collect();
        if let Some((i, &(u, v))) = edges.iter().enumerate().find(|(_, &(u, v))| u >= n || v >= n) {
            return Err(format!("edge {} ({u}, {v}) names a node outside 0..{n}", i + 1));
        }
        Ok(Graph::from_edges(n, edges))
    }

    /// How many nodes have each degree.
    pub fn degree_histogram(&self) -> std::collections::BTreeMap<u32, u64> {
        // Counted in a table first: a map update per node was a visible part of identifying
        // thousands of ranks.
        let mut counts: Vec<u64> = Vec::new();
        for w in self.offsets.windows(2) {
            let d = (w[1] - w[0]) as usize;
            if d >= counts.len() {
                counts.resize(d + 1, 0);
            }
            counts[d] += 1;
        }
        counts
            .into_iter()
            .enumerate()
            .filter(|&(_, c)| c > 0)
            .map(|(d, c)| (d as u32, c))
            .collect()
    }

    /// Largest degree (0 for a graph without edges).
    pub fn max_degree(&self) -> u32 {
        (0..self.num_nodes()).map(|u| self.degree(u)).max().unwrap_or(0)
    }

    /// Connected components, each as its sorted node list, largest first (ties by first node).
    pub fn components(&self) -> Vec<Vec<u32>> {
        let n = self.num_nodes() as usize;
        let mut seen = vec![false; n];
        let mut out = Vec::new();
        for s in 0..n {
            if seen[s] {
                continue;
            }
            seen[s] = true;
            let mut comp = vec![s as u32];
            let mut i = 0;
            while i < comp.len() {
                for &v in self.neighbors(comp[i]) {
                    if !seen[v as usize] {
                        seen[v as usize] = true;
                        comp.push(v);
                    }
                }
                i += 1;
            }
            if comp.len() == n {
                // Connected: every node, already known in order.
                return vec![(0..n as u32).collect()];
            }
            comp.sort_unstable();
            out.push(comp);
        }
        out.sort_by(|a, b| b.len().cmp(&a.len()).then(a[0].cmp(&b[0])));
        out
    }

    /// The subgraph induced by `nodes` (renumbered `0..nodes.len()` in the given order).
    pub fn induced(&self, nodes: &[u32]) -> Graph {
        let mut index = vec![u32::MAX; self.num_nodes() as usize];
        for (i, &u) in nodes.iter().enumerate() {
            index[u as usize] = i as u32;
        }
        let edges = nodes.iter().flat_map(|&u| {
            let index = &index;
            self.neighbors(u)
                .iter()
                .filter(move |&&v| index[v as usize] != u32::MAX)
                .map(move |&v| (index[u as usize], index[v as usize]))
        });
        Graph::from_edges(nodes.len() as u32, edges.collect::<Vec<_>>())
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
