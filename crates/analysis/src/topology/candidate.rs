//! A candidate topology: a family member of the catalogue or a user's pattern.

use super::report::{CustomPattern, TopologyMatch};
use std::collections::BTreeMap;
use tracelogic_graph::catalog::simplicity;
use tracelogic_graph::{Graph, TopologySpec};

/// A candidate: a family member or a user pattern.
#[derive(Clone)]
pub(super) enum Candidate<'a> {
    Spec(TopologySpec),
    Custom(&'a CustomPattern),
}

impl Candidate<'_> {
    pub(super) fn describe(&self) -> TopologyMatch {
        match self {
            Candidate::Spec(s) => TopologyMatch {
                family: s.family.name().into(),
                dims: s.dims.clone(),
                label: s.label(),
            },
            Candidate::Custom(c) => TopologyMatch {
                family: "custom".into(),
                dims: vec![c.graph.num_nodes()],
                label: format!("custom pattern {} ({} nodes)", c.name, c.graph.num_nodes()),
            },
        }
    }

    /// [`Candidate::describe`]'s label alone.
    pub(super) fn label(&self) -> String {
        match self {
            Candidate::Spec(s) => s.label(),
            Candidate::Custom(_) => self.describe().label,
        }
    }

    pub(super) fn edge_count(&self) -> u64 {
        match self {
            Candidate::Spec(s) => s.edge_count(),
            Candidate::Custom(c) => c.graph.num_edges() as u64,
        }
    }

    pub(super) fn degrees(&self) -> BTreeMap<u32, u64> {
        match self {
            Candidate::Spec(s) => s.degree_histogram(),
            Candidate::Custom(c) => c.graph.degree_histogram(),
        }
    }

    pub(super) fn graph(&self) -> Graph {
        match self {
            Candidate::Spec(s) => s.graph(),
            Candidate::Custom(c) => c.graph.clone(),
        }
    }

    pub(super) fn simplicity(&self) -> (usize, usize) {
        match self {
            Candidate::Spec(s) => simplicity(s),
            Candidate::Custom(_) => (usize::MAX, 0),
        }
    }
}
