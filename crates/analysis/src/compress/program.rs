//! The compressed program: its nodes (calls and loops), their JSON form, length and depth.

use super::*;

/// Compute time before a program record, over its occurrences, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Gap {
    /// Mean.
    pub mean_ns: u64,
    /// Smallest.
    pub min_ns: u64,
    /// Largest.
    pub max_ns: u64,
}

/// A node of the compressed program. Its JSON also gives a collective call's shown size sequence
/// as `collective_size` ([`Node::collective_size`]).
// Most nodes are calls (a loop holds calls), so boxing the call's shape would add an allocation
// to nearly every node for the few loop nodes' sake.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase", tag = "node")]
pub enum Node {
    /// One record, executed once per visit.
    Call {
        /// Pre-order number of the node in the program (stable id for views).
        id: u32,
        /// The call with its sizes set to 0.
        shape: LogicalCall,
        /// Sizes per visit, one sequence per entry of [`LogicalCall::sizes`].
        sizes: Vec<Values>,
        /// Tags per visit, one sequence per operation (a tag `t` is stored as `t as u32`, so
        /// `MPI_ANY_TAG` is 4294967295).
        tags: Vec<Values>,
        /// Compute time before the call.
        gap: Gap,
        /// Mean time in the call, ns.
        duration_ns: u64,
        /// Per operation, whether it runs per visit (1) or is skipped (0), as
        /// [`Values::ByRank`] over the ranks that skip it in some visit
        /// ([`crate::logical::Operation::absent_on`]); empty when every operation always runs.
        #[serde(default)]
        present: Vec<Values>,
    },
    /// A loop: its body `count` times per visit.
    Loop {
        /// Pre-order number of the node.
        id: u32,
        /// Iterations per visit.
        count: Values,
        /// The body.
        body: Vec<Node>,
    },
}

impl Node {
    /// For a collective call: the sequence of its sizes as the logical trace shows them
    /// ([`Collective::size`]: a broadcast's received bytes, or the root's sent bytes), one of its
    /// last two [`Node::Call::sizes`]; `None` for other nodes.
    pub fn collective_size(&self) -> Option<&Values> {
        let Node::Call { shape, sizes, .. } = self else {
            return None;
        };
        let (Some(c), [.., sent, recv]) = (&shape.collective, sizes.as_slice()) else {
            return None;
        };
        let zero = |v: &Values| *v == Values::Constant { value: 0 };
        Some(if Collective::size_is_received(c.op, zero(sent), zero(recv)) {
            recv
        } else {
            sent
        })
    }
}

impl Serialize for Node {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "lowercase", tag = "node")]
        enum Json<'a> {
            Call {
                id: u32,
                shape: &'a LogicalCall,
                sizes: &'a [Values],
                #[serde(skip_serializing_if = "Option::is_none")]
                collective_size: Option<&'a Values>,
                tags: &'a [Values],
                gap: &'a Gap,
                duration_ns: u64,
                #[serde(skip_serializing_if = "<[Values]>::is_empty")]
                present: &'a [Values],
            },
            Loop {
                id: u32,
                count: &'a Values,
                body: &'a [Node],
            },
        }
        let json = match self {
            Node::Call {
                id,
                shape,
                sizes,
                tags,
                gap,
                duration_ns,
                present,
            } => Json::Call {
                id: *id,
                shape,
                sizes,
                collective_size: self.collective_size(),
                tags,
                gap,
                duration_ns: *duration_ns,
                present,
            },
            Node::Loop { id, count, body } => Json::Loop { id: *id, count, body },
        };
        json.serialize(serializer)
    }
}

/// A loop-compressed trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Program {
    /// Records of the uncompressed trace.
    pub raw_length: usize,
    /// Call records plus loop headers of the program.
    pub compressed_length: usize,
    /// `raw_length / compressed_length` (1 for an empty trace).
    pub ratio: f64,
    /// Deepest loop nesting.
    pub depth: usize,
    /// The program.
    pub nodes: Vec<Node>,
}

impl Program {
    /// The program of `nodes` for a trace of `raw_length` records, its length, ratio and depth
    /// counted from the nodes.
    pub(super) fn of_nodes(raw_length: usize, nodes: Vec<Node>) -> Program {
        let compressed_length = count_nodes(&nodes);
        Program {
            raw_length,
            compressed_length,
            ratio: if compressed_length == 0 {
                1.0
            } else {
                raw_length as f64 / compressed_length as f64
            },
            depth: depth(&nodes),
            nodes,
        }
    }
}

/// Add `offset` to the ids of `node` and its body.
pub(super) fn renumber(node: &mut Node, offset: u32) {
    match node {
        Node::Call { id, .. } => *id += offset,
        Node::Loop { id, body, .. } => {
            *id += offset;
            for n in body {
                renumber(n, offset);
            }
        }
    }
}

pub(super) fn count_nodes(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::Call { .. } => 1,
            Node::Loop { body, .. } => 1 + count_nodes(body),
        })
        .sum()
}

pub(super) fn depth(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::Call { .. } => 0,
            Node::Loop { body, .. } => 1 + depth(body),
        })
        .max()
        .unwrap_or(0)
}

/// Largest node id + 1.
pub(super) fn id_bound(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::Call { id, .. } => *id as usize + 1,
            Node::Loop { id, body, .. } => (*id as usize + 1).max(id_bound(body)),
        })
        .max()
        .unwrap_or(0)
}
