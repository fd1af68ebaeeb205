//! The logical trace of a run (Logicalization §4.3): one rank's calls rewritten so that every
//! point-to-point peer is a direction of the identified topology (`east`, `parent`, `bit2`...),
//! with collectives unchanged and waits linked to the requests they complete; a message of a
//! rank to itself is the direction `self` ([`SELF_DIRECTION`]). Expanding it for
//! any rank (a direction yields a call only where that neighbour exists) gives back a physical
//! trace that [`verify`] compares with the real one. [`Accuracy`] says how much traffic fell
//! outside the topology and was dropped.
//!
//! Which calls become records: point-to-point calls with at least one operation inside the
//! topology, completions (`MPI_Wait*`, `MPI_Test*`) of at least one such operation, collectives,
//! and `MPI_Init`/`MPI_Finalize`. Queries, probes, communicator management and completions of
//! dropped operations only are left out (counted in [`LogicalTrace::skipped_calls`]).
//!
//! Where no rank has every direction of the topology (a 4×2 grid has no rank with both a north
//! and a south neighbour), one rank of each class of ranks with the same directions is rewritten
//! and the classes are merged so that every class's expansion is its own sequence, in order
//! (`merge`); the classes and the ranks whose records make up the trace are reported.

use crate::topology::TopologyReport;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use tracelogic_graph::{Family, TopologySpec};
use tracelogic_model::{CallIdx, CallKind, CollectiveOp, P2pDir, Rank, Trace, ANY_SOURCE, NOT_COMPLETED, NO_ROOT};

mod canonical;
mod choice;
mod merge;

pub use choice::{
    agreement, place_by_first_contacts, ConsideredTopology, DirectionsFrom, PlacedBy, MAX_EQUIVALENTS, MAX_NEIGHBOURS,
    PROPAGATION_STEPS,
};

/// The direction of a message a rank sends to or receives from itself (NAS CG's diagonal
/// processes exchange with themselves, `exch_proc = me` in cg.f). It is a move in every topology
/// but exists only at the ranks that make it ([`LogicalTrace::self_ranks`]), so its operations
/// expand only there, and it never becomes an edge of the topology graph.
pub const SELF_DIRECTION: &str = "self";

/// Version tag of the JSON form of [`LogicalTrace`] and of the compressed program; bumped when
/// a field changes meaning (documented in `docs/logical.md`).
pub const SCHEMA: &str = "tracelogic-logical/1";

/// Which rank plays which node of which topology: what a logical trace is relative to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// The topology (family and dimensions).
    pub spec: TopologySpec,
    /// `node_of_rank[r]`: the topology node world rank `r` plays.
    pub node_of_rank: Vec<u32>,
}

impl Placement {
    /// The placement found by topology identification, made canonical ([`Placement::canonical`])
    /// so that the logical trace does not depend on which automorphism identification returned.
    /// Fails when nothing was identified, when the match is a user pattern (it has no
    /// directions), or when the mapping is incomplete.
    pub fn from_report(report: &TopologyReport) -> Result<Placement, String> {
        let id = &report.identification;
        let Some(m) = &id.matched else {
            return Err(if report.no_point_to_point {
                "the run has no point-to-point traffic, so it has no logical trace".into()
            } else {
                "no topology was identified for this run (see `tracelogic topology`)".into()
            });
        };
        let family = Family::from_name(&m.family)
            .ok_or_else(|| format!("topology `{}` is a user pattern without directions", m.label))?;
        let spec = TopologySpec::new(family, m.dims.clone())?;
        Ok(Placement::new(
            spec,
            report.identification.ranks,
            id.mapping.iter().map(|p| (p.rank, p.node)),
        )?
        .canonical())
    }

    /// A placement from `(rank, node)` pairs; every rank of `0..ranks` must get a distinct node.
    pub fn new(
        spec: TopologySpec,
        ranks: u32,
        pairs: impl IntoIterator<Item = (Rank, u32)>,
    ) -> Result<Placement, String> {
        if spec.num_nodes() != ranks {
            return Err(format!(
                "the topology {} has {} nodes but the run has {ranks} ranks",
                spec.label(),
                spec.num_nodes()
            ));
        }
        let mut node_of_rank = vec![u32::MAX; ranks as usize];
        let mut taken = vec![false; ranks as usize];
        for (r, u) in pairs {
            if r >= ranks || u >= ranks || std::mem::replace(&mut taken[u as usize], true) {
                return Err(format!("the rank mapping is not a permutation (rank {r} → node {u})"));
            }
            node_of_rank[r as usize] = u;
        }
        if let Some(r) = node_of_rank.iter().position(|&u| u == u32::MAX) {
            return Err(format!("rank {r} has no place in the topology"));
        }
        Ok(Placement { spec, node_of_rank })
    }

    /// Rank `r` plays node `r` (row-major), as in a skeleton or a row-major generated run.
    pub fn identity(spec: TopologySpec) -> Placement {
        let n = spec.num_nodes();
        Placement {
            spec,
            node_of_rank: (0..n).collect(),
        }
    }

    /// `rank_of_node[u]`: the rank playing node `u`.
    pub fn rank_of_node(&self) -> Vec<Rank> {
        let mut out = vec![0; self.node_of_rank.len()];
        for (r, &u) in self.node_of_rank.iter().enumerate() {
            out[u as usize] = r as Rank;
        }
        out
    }

    /// The direction names of the topology, in [`TopologySpec::directions`] order.
    pub fn direction_names(&self) -> Vec<String> {
        self.spec.directions().iter().map(|d| d.name()).collect()
    }

    /// The rank in direction `name` from `rank`, if that neighbour exists. Directions of the
    /// topology only: where [`SELF_DIRECTION`] exists is a fact of the run
    /// ([`LogicalTrace::self_ranks`]), not of the placement.
    pub fn neighbour(&self, rank: Rank, name: &str) -> Option<Rank> {
        let dir = self.spec.directions().into_iter().find(|d| d.name() == name)?;
        let v = self.spec.neighbour(*self.node_of_rank.get(rank as usize)?, &dir)?;
        self.rank_of_node().get(v as usize).copied()
    }

    /// Per rank: peer rank → the first direction (in topology order) that reaches it.
    fn direction_tables(&self) -> Vec<HashMap<Rank, String>> {
        let rank_of_node = self.rank_of_node();
        self.node_of_rank
            .iter()
            .map(|&u| {
                self.spec
                    .neighbours(u)
                    .into_iter()
                    .map(|(d, v)| (rank_of_node[v as usize], d.name()))
                    .collect()
            })
            .collect()
    }

    /// [`Placement::neighbour_tables`] with [`SELF_DIRECTION`] leading to the rank itself at
    /// `self_ranks` (the ranks that message themselves).
    fn neighbour_tables_with_self(&self, self_ranks: &[Rank]) -> Vec<HashMap<String, Rank>> {
        let mut tables = self.neighbour_tables();
        for &r in self_ranks {
            if let Some(table) = tables.get_mut(r as usize) {
                table.insert(SELF_DIRECTION.into(), r);
            }
        }
        tables
    }

    /// Per rank: direction name → neighbour rank, for the directions that exist there.
    fn neighbour_tables(&self) -> Vec<HashMap<String, Rank>> {
        let rank_of_node = self.rank_of_node();
        let dirs = self.spec.directions();
        self.node_of_rank
            .iter()
            .map(|&u| {
                dirs.iter()
                    .filter_map(|d| Some((d.name(), rank_of_node[self.spec.neighbour(u, d)? as usize])))
                    .collect()
            })
            .collect()
    }
}

/// Who the other side of an operation is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Partner {
    /// A logical direction of the topology (`east`, `parent`...).
    Direction(String),
    /// A world rank (physical traces of one rank).
    Rank(Rank),
    /// `MPI_ANY_SOURCE` that the trace could not resolve.
    Any,
}

impl Partner {
    /// Short text: the direction name, `P3` for rank 3 (the paper's notation), `any`.
    pub fn label(&self) -> String {
        match self {
            Partner::Direction(d) => d.clone(),
            Partner::Rank(r) => format!("P{r}"),
            Partner::Any => "any".into(),
        }
    }
}

/// One point-to-point operation of a record.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Operation {
    /// Send or receive.
    pub dir: P2pDir,
    /// To or from whom.
    pub partner: Partner,
    /// Message tag as recorded (`-1` = `MPI_ANY_TAG`).
    pub tag: i32,
    /// Message size in bytes.
    pub bytes: u64,
    /// Sizes on classes of ranks that send or receive this operation with other sizes than
    /// `bytes` (merged traces only: NAS LU's boundary ranks carry one point less per message).
    /// A rank whose existing directions are exactly an entry's `directions` uses its `bytes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bytes_by_class: Vec<ClassBytes>,
    /// Sizes on single ranks whose message differs from `bytes` (ScalaTrace's rank-parameterised
    /// records: NAS SP's solve messages follow a rank's cells, LU's wavefront messages its
    /// columns, a molecular-dynamics code's its atoms): one entry per size, ranks in increasing
    /// order, entries by increasing size. A rank listed here uses this size whatever
    /// `bytes_by_class` says. Filled after the merge from every rank's own trace
    /// ([`logicalize`]), so the expansion gives every rank its own sizes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bytes_by_rank: Vec<RankBytes>,
}

/// The size of an operation on some ranks (see [`Operation::bytes_by_rank`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RankBytes {
    /// Message size in bytes on these ranks.
    pub bytes: u64,
    /// World ranks, increasing.
    pub ranks: Vec<Rank>,
}

/// The size of an operation on the ranks of one class (see [`Operation::bytes_by_class`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ClassBytes {
    /// The directions the class has a neighbour in, in topology order.
    pub directions: Vec<String>,
    /// Message size in bytes on those ranks.
    pub bytes: u64,
}

impl Operation {
    /// The operation as a rank whose existing directions are `here` (sorted) executes it: its
    /// class's size, no per-class sizes left.
    pub fn for_class(&self, here: &[&str]) -> Operation {
        let bytes = self
            .bytes_by_class
            .iter()
            .find(|c| {
                let mut d: Vec<&str> = c.directions.iter().map(String::as_str).collect();
                d.sort_unstable();
                d == here
            })
            .map_or(self.bytes, |c| c.bytes);
        Operation {
            bytes,
            bytes_by_class: Vec::new(),
            bytes_by_rank: Vec::new(),
            ..self.clone()
        }
    }

    /// The size rank `rank` sends or receives: its own ([`Operation::bytes_by_rank`]), else its
    /// class's (`here`: its existing directions, sorted), else `bytes`.
    pub fn bytes_on(&self, rank: Rank, here: &[&str]) -> u64 {
        self.bytes_by_rank
            .iter()
            .find(|e| e.ranks.binary_search(&rank).is_ok())
            .map_or_else(|| self.for_class(here).bytes, |e| e.bytes)
    }

    /// The operation as rank `rank` executes it ([`Operation::bytes_on`]), no tables left.
    pub fn for_rank(&self, rank: Rank, here: &[&str]) -> Operation {
        Operation {
            bytes: self.bytes_on(rank, here),
            bytes_by_class: Vec::new(),
            bytes_by_rank: Vec::new(),
            ..self.clone()
        }
    }
}

/// A collective operation of a record, as recorded (collectives are already logical). Its JSON
/// also carries `size` ([`Collective::size`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "CollectiveJson")]
pub struct Collective {
    /// Which collective.
    pub op: CollectiveOp,
    /// Root as a world rank, `None` for root-less collectives.
    pub root: Option<Rank>,
    /// Size of its communicator.
    pub comm_size: u32,
    /// Bytes this rank contributes.
    pub bytes_sent: u64,
    /// Bytes this rank receives.
    pub bytes_recv: u64,
}

/// [`Collective`] as JSON: its fields and the size a reader expects.
#[derive(Serialize)]
struct CollectiveJson {
    op: CollectiveOp,
    root: Option<Rank>,
    comm_size: u32,
    bytes_sent: u64,
    bytes_recv: u64,
    size: u64,
}

impl From<Collective> for CollectiveJson {
    fn from(c: Collective) -> CollectiveJson {
        CollectiveJson {
            size: c.size(),
            op: c.op,
            root: c.root,
            comm_size: c.comm_size,
            bytes_sent: c.bytes_sent,
            bytes_recv: c.bytes_recv,
        }
    }
}

impl Collective {
    /// The collective's message size as the logical trace shows it, the same whichever rank's
    /// record it is (a broadcast's root sends what every other rank receives; the bytes *sent*
    /// by a rank that is not the root are 0): the bytes received for a broadcast or a scatter
    /// (each rank's piece), the bytes sent (each rank's contribution) for the others, and the
    /// other side when that one is 0 (the root of a broadcast, an in-place root).
    pub fn size(&self) -> u64 {
        if Collective::size_is_received(self.op, self.bytes_sent == 0, self.bytes_recv == 0) {
            self.bytes_recv
        } else {
            self.bytes_sent
        }
    }

    /// Whether [`Collective::size`] is the received side, knowing only which sides are 0 (so
    /// that a compressed record's size sequence is one of its two sequences).
    pub fn size_is_received(op: CollectiveOp, sent_zero: bool, recv_zero: bool) -> bool {
        match op {
            CollectiveOp::Bcast | CollectiveOp::Scatter | CollectiveOp::Scatterv => !recv_zero || sent_zero,
            _ => sent_zero && !recv_zero,
        }
    }
}

/// What a record does, without timing: the part that loop compression and expansion compare.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LogicalCall {
    /// MPI function name (`MPI_Isend`).
    pub function: String,
    /// Its classification.
    pub kind: CallKind,
    /// Point-to-point operations it posts (two for `MPI_Sendrecv`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ops: Vec<Operation>,
    /// Its collective, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective: Option<Collective>,
    /// For completions: how many records back each record whose requests it completes is
    /// (1 = the previous record), increasing. Relative, so every iteration of a loop is equal.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completes: Vec<u32>,
    /// The ranks that execute this record, increasing, when not every rank that has one of its
    /// directions does (`None`): a branch of rank-dependent code (NAS LU's pintgr exchanges
    /// boundary values only on the ranks holding a global face, CG's and MG's classes order or
    /// skip operations differently). Set by the merge ([`logicalize`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_ranks: Option<Vec<Rank>>,
}

impl LogicalCall {
    /// Whether `rank` executes this record when it has one of its directions.
    pub fn runs_on(&self, rank: Rank) -> bool {
        self.only_ranks
            .as_ref()
            .is_none_or(|rs| rs.binary_search(&rank).is_ok())
    }

    /// Per operation, its per-rank sizes ([`Operation::bytes_by_rank`]).
    pub fn rank_tables(&self) -> Vec<Vec<RankBytes>> {
        self.ops.iter().map(|o| o.bytes_by_rank.clone()).collect()
    }

    /// The same call with each operation's per-rank sizes replaced by `tables` (one per
    /// operation).
    pub fn with_rank_tables(&self, tables: &[Vec<RankBytes>]) -> LogicalCall {
        let mut c = self.clone();
        for (o, t) in c.ops.iter_mut().zip(tables) {
            o.bytes_by_rank = t.clone();
        }
        c
    }

    /// The message sizes this call carries, in a fixed order: each operation's bytes, then the
    /// collective's sent and received bytes.
    pub fn sizes(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.ops.iter().map(|o| o.bytes).collect();
        if let Some(c) = &self.collective {
            v.push(c.bytes_sent);
            v.push(c.bytes_recv);
        }
        v
    }

    /// The tags of its operations, in order.
    pub fn tags(&self) -> Vec<i32> {
        self.ops.iter().map(|o| o.tag).collect()
    }

    /// The same call with the operation tags replaced by `tags`.
    pub fn with_tags(&self, tags: &[i32]) -> LogicalCall {
        let mut c = self.clone();
        for (o, &t) in c.ops.iter_mut().zip(tags) {
            o.tag = t;
        }
        c
    }

    /// The same call with every size and tag set to 0 (its shape, as loop compression sees it:
    /// sizes and tags that change from one iteration to the next are kept as values).
    pub fn shape(&self) -> LogicalCall {
        self.with_sizes(&vec![0; self.sizes().len()])
            .with_tags(&vec![0; self.ops.len()])
            .with_rank_tables(&vec![Vec::new(); self.ops.len()])
    }

    /// The same call with the sizes of [`LogicalCall::sizes`] replaced by `sizes`.
    pub fn with_sizes(&self, sizes: &[u64]) -> LogicalCall {
        let mut c = self.clone();
        let mut it = sizes.iter().copied();
        for o in &mut c.ops {
            o.bytes = it.next().unwrap_or(0);
        }
        if let Some(col) = &mut c.collective {
            col.bytes_sent = it.next().unwrap_or(0);
            col.bytes_recv = it.next().unwrap_or(0);
        }
        c
    }

    /// Table 5 style text: `MPI_Isend(east, 480 B, tag 3)`, `MPI_Waitall(-1, -2)`.
    pub fn text(&self) -> String {
        let mut args: Vec<String> = self
            .ops
            .iter()
            .map(|o| {
                let what = if self.ops.len() > 1 {
                    match o.dir {
                        P2pDir::Send => "to ",
                        P2pDir::Recv => "from ",
                    }
                } else {
                    ""
                };
                let by_class: String = o
                    .bytes_by_class
                    .iter()
                    .map(|c| format!(" ({} B on {})", c.bytes, c.directions.join("+")))
                    .chain(
                        o.bytes_by_rank
                            .iter()
                            .map(|e| format!(" ({} B on {})", e.bytes, ranks_text(&e.ranks))),
                    )
                    .collect();
                format!(
                    "{what}{}, {} B{by_class}, tag {}",
                    o.partner.label(),
                    o.bytes,
                    tag_text(o.tag)
                )
            })
            .collect();
        if let Some(c) = &self.collective {
            let mut s = format!("{} B", c.size());
            if let Some(r) = c.root {
                s.push_str(&format!(", root {r}"));
            }
            args.push(s);
        }
        if !self.completes.is_empty() {
            args.push(
                self.completes
                    .iter()
                    .map(|k| format!("-{k}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
        let only = self
            .only_ranks
            .as_ref()
            .map_or_else(String::new, |rs| format!(" only on {}", ranks_text(rs)));
        format!("{}({}){only}", self.function, args.join("; "))
    }
}

/// `ranks 0-3,8`: increasing ranks with runs as ranges.
pub fn ranks_text(ranks: &[Rank]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => ranks[i].to_string(),
            1 => format!("{},{}", ranks[i], ranks[j]),
            _ => format!("{}-{}", ranks[i], ranks[j]),
        });
        i = j + 1;
    }
    format!("rank{} {}", if ranks.len() == 1 { "" } else { "s" }, parts.join(","))
}

fn tag_text(tag: i32) -> String {
    if tag == tracelogic_model::ANY_TAG {
        "any".into()
    } else {
        tag.to_string()
    }
}

/// One record of a logical (or single-rank) trace: the call and where and when it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// What the call does.
    #[serde(flatten)]
    pub call: LogicalCall,
    /// Time since the end of the previous record on the same rank (compute, and calls that are
    /// not records), in ns; 0 for a rank's first record.
    pub gap_ns: u64,
    /// Time spent in the call, in ns.
    pub duration_ns: u64,
    /// The rank whose trace this record comes from.
    pub rank: Rank,
    /// Its call index in that rank's trace.
    pub call_index: CallIdx,
}

/// Point-to-point operations and bytes inside and outside the topology on one rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RankAccuracy {
    /// The rank.
    pub rank: Rank,
    /// Point-to-point operations (a `MPI_Sendrecv` counts two).
    pub calls: u64,
    /// Operations whose peer is not a topology neighbour (dropped from the logical trace).
    pub dropped_calls: u64,
    /// Bytes of all operations.
    pub bytes: u64,
    /// Bytes of the dropped operations.
    pub dropped_bytes: u64,
}

/// How much of the point-to-point traffic falls outside the topology (Logicalization §4.3, §5.2: the
/// inaccuracy of the logical trace).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Accuracy {
    /// Operations over all ranks.
    pub calls: u64,
    /// Dropped operations over all ranks.
    pub dropped_calls: u64,
    /// Bytes over all ranks.
    pub bytes: u64,
    /// Dropped bytes over all ranks.
    pub dropped_bytes: u64,
    /// `dropped_calls / calls` (0 without operations).
    pub dropped_calls_fraction: f64,
    /// `dropped_bytes / bytes` (0 without bytes).
    pub dropped_bytes_fraction: f64,
    /// Per rank, in rank order.
    pub per_rank: Vec<RankAccuracy>,
}

/// The topology a logical trace refers to, for display.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopologyInfo {
    /// Family name (`torus`, `stencil6`, ...).
    pub family: String,
    /// Dimensions.
    pub dims: Vec<u32>,
    /// Human label (`3x3 6-point stencil`).
    pub label: String,
    /// Direction names in topology order.
    pub directions: Vec<String>,
}

/// The logical trace of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogicalTrace {
    /// [`SCHEMA`].
    pub schema: String,
    /// Where the run came from.
    pub source: String,
    /// Number of world ranks.
    pub ranks: u32,
    /// The topology.
    pub topology: TopologyInfo,
    /// The placement the directions refer to (needed to expand).
    pub placement: Placement,
    /// Ranks whose traces were rewritten (one when a maximal rank's trace alone is kept).
    pub ranks_used: Vec<Rank>,
    /// True when `ranks_used[0]` has a neighbour in every direction.
    pub maximal: bool,
    /// The records, in program order.
    pub records: Vec<Record>,
    /// Calls of the used ranks that are not records (queries, probes, communicator set-up,
    /// completions of dropped operations only).
    pub skipped_calls: u64,
    /// Traffic outside the topology.
    pub accuracy: Accuracy,
    /// True when every rank uses, per direction and send/receive, exactly the tags the logical
    /// trace records for the directions it has (tags name directions or phases, not cells or
    /// ranks), so a replay may match receives by tag.
    #[serde(default)]
    pub tags_consistent: bool,
    /// The classes of ranks (same existing directions) whose sequences were merged, one
    /// representative each: when no rank is maximal, or when a maximal rank's trace alone does
    /// not reproduce every class (NAS LU's boundary sizes); empty when one rank was rewritten.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<RankClass>,
    /// Records of the merge that some class seeing them does not execute at that point
    /// (rank-dependent behaviour); 0 when every class's expansion is its own sequence.
    #[serde(default)]
    pub merge_conflicts: u64,
    /// Which of the topologies isomorphic to the identified one names the directions, and why
    /// ([`Placement::choose`]); `None` when the placement was given rather than chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directions_from: Option<DirectionsFrom>,
    /// Ranks that send or receive messages to or from themselves, where no direction of the
    /// topology leads back to them (NAS CG's diagonal processes), in rank order: the ranks at
    /// which [`SELF_DIRECTION`] exists. Empty when no rank does (then `self` is not among
    /// `topology.directions`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub self_ranks: Vec<Rank>,
    /// True when every rank's own message sizes were read from its trace into the records
    /// ([`Operation::bytes_by_rank`]; the per-class sizes of the merge are then folded into
    /// them): the expansion gives each rank the sizes it sent and received. False when the
    /// ranks were given (the trace of those ranks) or some rank's operations do not line up
    /// with its expansion (then verification shows which).
    #[serde(default)]
    pub sizes_fitted: bool,
    /// Operations of the records that carry per-rank sizes ([`Operation::bytes_by_rank`]).
    #[serde(default)]
    pub rank_sized_operations: u64,
    /// Records executed by some of the ranks that have their directions only
    /// ([`LogicalCall::only_ranks`]: rank-dependent branches of the program).
    #[serde(default)]
    pub branches: u64,
}

/// Classes of ranks (same directions, same logical sequence) beyond which the merge groups ranks
/// by their directions only (the merge costs O(records × classes²)).
pub const MAX_CLASSES: usize = 64;

/// Hash of a rank's logical sequence without sizes and tags ([`LogicalCall::shape`]): ranks
/// with the same directions and the same hash are one class of the merge. Equality only
/// matters (classes are ordered by facts of the processes), so the derived hash is enough.
fn structure_hash(records: &[Record]) -> u64 {
    use std::hash::{Hash, Hasher};
    // The fields of `LogicalCall::shape`, hashed in place (no clone per record).
    let mut h = std::hash::DefaultHasher::new();
    records.len().hash(&mut h);
    for r in records {
        let c = &r.call;
        c.function.hash(&mut h);
        c.kind.hash(&mut h);
        c.ops.len().hash(&mut h);
        for o in &c.ops {
            o.dir.hash(&mut h);
            o.partner.hash(&mut h);
            o.bytes_by_class.hash(&mut h);
        }
        c.completes.hash(&mut h);
        c.collective.as_ref().map(|k| (k.op, k.root, k.comm_size)).hash(&mut h);
        c.only_ranks.hash(&mut h);
    }
    h.finish()
}

/// Read every rank's own message sizes into the records: for each rank, the operations its
/// expansion executes are lined up with the operations of its own logical sequence
/// (`own_ops`, read when the ranks were grouped); where every rank's line up (same count, send/receive and direction at every
/// position), each operation gets the ranks whose size differs from its `bytes`
/// ([`Operation::bytes_by_rank`], which then replaces `bytes_by_class`) and `true` is returned.
/// Otherwise the records are left as they are and `false` is returned.
/// An operation of a rank's own logical sequence: send or receive, the index of its direction
/// among the trace's direction names (`u32::MAX` for a wildcard or a rank), its size.
type OpKey = (P2pDir, u32, u64);

fn partner_index(p: &Partner, names: &[String]) -> u32 {
    match p {
        Partner::Direction(d) => names.iter().position(|n| n == d).map_or(u32::MAX, |k| k as u32),
        _ => u32::MAX,
    }
}

/// The operations of `records` in order, as [`OpKey`]s.
fn op_keys_of(records: &[Record], names: &[String]) -> Vec<OpKey> {
    records
        .iter()
        .flat_map(|r| &r.call.ops)
        .map(|o| (o.dir, partner_index(&o.partner, names), o.bytes))
        .collect()
}

fn fit_rank_sizes(records: &mut [Record], names: &[String], coverage: &[Vec<bool>], own_ops: &[Vec<OpKey>]) -> bool {
    if own_ops.len() != coverage.len() {
        return false;
    }
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(k, n)| (n.as_str(), k)).collect();
    // (record, operation) → (rank, size) where the size is not the operation's `bytes`.
    let mut differs: HashMap<(usize, usize), Vec<(Rank, u64)>> = HashMap::new();
    for (r, cov) in coverage.iter().enumerate() {
        let rank = r as Rank;
        let mut here: Vec<&str> = names
            .iter()
            .zip(cov)
            .filter(|(_, &c)| c)
            .map(|(n, _)| n.as_str())
            .collect();
        here.sort_unstable();
        let visible = |o: &Operation| match &o.partner {
            Partner::Direction(d) => index.get(d.as_str()).is_some_and(|&k| cov[k]),
            _ => true,
        };
        let own = &own_ops[r];
        let mut k = 0usize;
        for (i, rec) in records.iter().enumerate() {
            if !rec.call.kind.is_p2p() || !rec.call.runs_on(rank) {
                continue;
            }
            for (j, o) in rec.call.ops.iter().enumerate() {
                if !visible(o) {
                    continue;
                }
                let Some(&(dir, at, bytes)) = own.get(k) else {
                    return false;
                };
                if dir != o.dir || at != partner_index(&o.partner, names) {
                    return false;
                }
                if bytes != o.bytes {
                    differs.entry((i, j)).or_default().push((rank, bytes));
                }
                k += 1;
            }
        }
        if k != own.len() {
            return false;
        }
    }
    for rec in records.iter_mut() {
        for o in &mut rec.call.ops {
            o.bytes_by_class.clear();
        }
    }
    for ((i, j), mut list) in differs {
        list.sort_unstable_by_key(|&(r, b)| (b, r));
        let mut table: Vec<RankBytes> = Vec::new();
        for (r, b) in list {
            match table.last_mut() {
                Some(e) if e.bytes == b => e.ranks.push(r),
                _ => table.push(RankBytes {
                    bytes: b,
                    ranks: vec![r],
                }),
            }
        }
        records[i].call.ops[j].bytes_by_rank = table;
    }
    true
}

/// Ranks with the same existing directions, merged as one sequence(merging when no
/// rank has every neighbour).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankClass {
    /// The representative whose trace was rewritten (its first member in the process-based
    /// order of [`logicalize`]).
    pub rank: Rank,
    /// Every rank of the class.
    pub ranks: Vec<Rank>,
    /// The directions the class has a neighbour in.
    pub directions: Vec<String>,
    /// Records of the logical trace taken from the representative.
    pub records: u64,
    /// Records of the logical trace this class sees but executes otherwise (other message
    /// sizes, another call, or nothing at that point): rank-dependent behaviour the merge
    /// could not keep. 0 when the class's expansion is its own sequence.
    pub conflicts: u64,
    /// False when the class disagreed with the others so much that leaving it out of the merge
    /// reproduces more operations overall; verification shows how it fares.
    #[serde(default = "yes")]
    pub merged: bool,
}

fn yes() -> bool {
    true
}

impl LogicalTrace {
    /// Records of the uncompressed logical trace (Table 1's "raw trace length").
    pub fn raw_length(&self) -> usize {
        self.records.len()
    }

    /// The records as the rank each came from executed them: directions replaced by that rank's
    /// neighbours (Table 5's physical column, record for record).
    pub fn physical_view(&self) -> Vec<LogicalCall> {
        let tables = self.placement.neighbour_tables_with_self(&self.self_ranks);
        self.records
            .iter()
            .map(|r| {
                let mut c = r.call.clone();
                for o in &mut c.ops {
                    if let Partner::Direction(d) = &o.partner {
                        if let Some(&p) = tables.get(r.rank as usize).and_then(|t| t.get(d)) {
                            o.partner = Partner::Rank(p);
                        }
                    }
                }
                c
            })
            .collect()
    }

    /// Table 5: physical and logical records side by side, one pair per line.
    pub fn side_by_side(&self) -> String {
        let physical: Vec<String> = self.physical_view().iter().map(LogicalCall::text).collect();
        let width = physical.iter().map(|p| p.chars().count()).max().unwrap_or(0).max(8);
        let mut out = format!("{:<width$}   LOGICAL TRACE\n", "PHYSICAL TRACE (rank: call)");
        for (p, r) in physical.iter().zip(&self.records) {
            let origin = format!("{}: {p}", r.rank);
            out.push_str(&format!("{origin:<w$}   {}\n", r.call.text(), w = width + 4));
        }
        out
    }

    /// Readable text, one record per line (Table 5's logical column).
    pub fn text(&self) -> String {
        let mut out = format!(
            "# logical trace of {} ({} ranks, {}), from rank{} {}\n",
            self.source,
            self.ranks,
            self.topology.label,
            if self.ranks_used.len() > 1 { "s" } else { "" },
            self.ranks_used
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        for r in &self.records {
            out.push_str(&r.call.text());
            out.push('\n');
        }
        out
    }
}

/// Count dropped operations per rank under `placement`. A message of a rank to itself is never
/// dropped: it is a move in every topology ([`SELF_DIRECTION`]).
pub fn accuracy(trace: &Trace, placement: &Placement) -> Accuracy {
    let tables = placement.direction_tables();
    let mut acc = Accuracy::default();
    for rt in &trace.ranks {
        let mut ra = RankAccuracy {
            rank: rt.rank,
            ..Default::default()
        };
        let table = tables.get(rt.rank as usize);
        for i in 0..rt.p2p.len() {
            let (peer, bytes) = (rt.p2p.peer[i], rt.p2p.bytes[i]);
            ra.calls += 1;
            ra.bytes = ra.bytes.saturating_add(bytes);
            let inside = peer == ANY_SOURCE || peer == rt.rank || table.is_some_and(|t| t.contains_key(&peer));
            if !inside {
                ra.dropped_calls += 1;
                ra.dropped_bytes = ra.dropped_bytes.saturating_add(bytes);
            }
        }
        acc.calls += ra.calls;
        acc.dropped_calls += ra.dropped_calls;
        acc.bytes = acc.bytes.saturating_add(ra.bytes);
        acc.dropped_bytes = acc.dropped_bytes.saturating_add(ra.dropped_bytes);
        acc.per_rank.push(ra);
    }
    acc.dropped_calls_fraction = fraction(acc.dropped_calls, acc.calls);
    acc.dropped_bytes_fraction = fraction(acc.dropped_bytes, acc.bytes);
    acc
}

fn fraction(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The records of one rank, with each peer rewritten by `partner` (`None`: the operation is
/// dropped). Returns the records and the number of calls left out.
fn records_of(trace: &Trace, rank: Rank, partner: &dyn Fn(Rank) -> Option<Partner>) -> (Vec<Record>, u64) {
    let rt = &trace.ranks[rank as usize];
    let calls = &rt.calls;
    let p = &rt.p2p;
    let n = calls.len();
    // Kept operations per posting call, and the posting calls each completion completes.
    let mut ops_at: HashMap<CallIdx, Vec<Operation>> = HashMap::new();
    let mut completes: HashMap<CallIdx, Vec<CallIdx>> = HashMap::new();
    for i in 0..p.len() {
        let Some(partner) = partner(p.peer[i]) else { continue };
        let post = p.post[i];
        if post as usize >= n {
            continue;
        }
        ops_at.entry(post).or_default().push(Operation {
            dir: p.dir[i],
            partner,
            tag: p.tag[i],
            bytes: p.bytes[i],
            bytes_by_class: Vec::new(),
            bytes_by_rank: Vec::new(),
        });
        let c = p.complete[i];
        if c != post && c != NOT_COMPLETED && (c as usize) < n {
            completes.entry(c).or_default().push(post);
        }
    }
    let coll_at: HashMap<CallIdx, usize> = rt.collectives.call.iter().enumerate().map(|(k, &c)| (c, k)).collect();
    let mut record_of_call: HashMap<CallIdx, u32> = HashMap::new();
    let mut out: Vec<Record> = Vec::new();
    let mut skipped = 0u64;
    let mut last_exit: Option<u64> = None;
    for c in 0..n as CallIdx {
        let kind = calls.kind[c as usize];
        let ops = ops_at.remove(&c).unwrap_or_default();
        let links = completes.remove(&c).unwrap_or_default();
        let keep = match kind {
            k if k.is_p2p() => !ops.is_empty(),
            CallKind::Completion => links.iter().any(|post| record_of_call.contains_key(post)),
            CallKind::Collective | CallKind::Lifecycle => true,
            _ => false,
        };
        if !keep {
            skipped += 1;
            continue;
        }
        let here = out.len() as u32;
        let mut back: Vec<u32> = links
            .iter()
            .filter_map(|post| record_of_call.get(post).map(|&r| here - r))
            .collect();
        back.sort_unstable();
        back.dedup();
        let collective = coll_at.get(&c).map(|&k| {
            let col = &rt.collectives;
            let comm = col.comm[k] as usize;
            Collective {
                op: col.op[k],
                root: (col.root[k] != NO_ROOT).then_some(col.root[k]),
                comm_size: trace.comms.get(comm).map_or(0, |m| m.members.len() as u32),
                bytes_sent: col.bytes_sent[k],
                bytes_recv: col.bytes_recv[k],
            }
        });
        let (enter, exit) = (calls.enter[c as usize], calls.exit[c as usize]);
        record_of_call.insert(c, here);
        out.push(Record {
            call: LogicalCall {
                function: trace.functions.name(calls.func[c as usize]).to_owned(),
                kind,
                ops,
                collective,
                completes: back,
                only_ranks: None,
            },
            gap_ns: last_exit.map_or(0, |e| enter.saturating_sub(e)),
            duration_ns: exit.saturating_sub(enter),
            rank,
            call_index: c,
        });
        last_exit = Some(exit);
    }
    (out, skipped)
}

/// The trace of one rank as records with peers as world ranks (`Partner::Rank`), every
/// point-to-point operation kept: what single-rank loop compression works on.
pub fn rank_records(trace: &Trace, rank: Rank) -> Result<Vec<Record>, String> {
    if rank >= trace.num_ranks() {
        return Err(format!(
            "rank {rank} is out of range (the trace has {} ranks)",
            trace.num_ranks()
        ));
    }
    let partner = |peer: Rank| {
        Some(if peer == ANY_SOURCE {
            Partner::Any
        } else {
            Partner::Rank(peer)
        })
    };
    Ok(records_of(trace, rank, &partner).0)
}

/// The records of `rank` with peers as world ranks, operations outside the topology of
/// `placement` dropped (a message to itself is inside: [`SELF_DIRECTION`]): what the expansion
/// of a logical trace must give back for that rank.
pub fn physical_records(trace: &Trace, placement: &Placement, rank: Rank) -> Result<Vec<Record>, String> {
    if rank >= trace.num_ranks() || rank as usize >= placement.node_of_rank.len() {
        return Err(format!(
            "rank {rank} is out of range (the trace has {} ranks)",
            trace.num_ranks()
        ));
    }
    let tables = placement.direction_tables();
    let table = &tables[rank as usize];
    let partner = |peer: Rank| {
        if peer == ANY_SOURCE {
            Some(Partner::Any)
        } else {
            (peer == rank || table.contains_key(&peer)).then_some(Partner::Rank(peer))
        }
    };
    Ok(records_of(trace, rank, &partner).0)
}

/// [`content_key`]: fewest calls last, then fewest operations, then the hash.
type ContentKey = (std::cmp::Reverse<usize>, std::cmp::Reverse<usize>, u64);

/// What a rank's trace looks like with its peers left out: calls, point-to-point operations,
/// and a hash of the functions called and of each operation's direction, tag and size in order.
/// The same process gives the same key under any numbering of the ranks, and on every platform:
/// the hash is fed fixed-width little-endian values only ([`fixed_width_hash`]), never a `usize`
/// or a derived enum hash (whose width is the pointer's: the page on wasm32 chose other
/// representatives than the CLI when ranks tied).
fn content_key(trace: &Trace, rank: Rank) -> ContentKey {
    let rt = &trace.ranks[rank as usize];
    (
        std::cmp::Reverse(rt.calls.len()),
        std::cmp::Reverse(rt.p2p.len()),
        fixed_width_hash(
            &rt.calls.func,
            rt.calls.kind.iter().map(|&k| k as i64),
            rt.p2p.dir.iter().map(|&d| d as i64),
            &rt.p2p.tag,
            &rt.p2p.bytes,
        ),
    )
}

/// SipHash-1-3 with zero keys ([`std::hash::DefaultHasher`]) over five sequences, each as its
/// length (8 bytes) then its elements (4 bytes for functions and tags, 8 for kinds, directions
/// and sizes), little-endian: on a 64-bit little-endian machine the bytes a derived `Hash` of
/// the slices writes, so the keys there are those of earlier sessions.
fn fixed_width_hash(
    func: &[u32],
    kind: impl ExactSizeIterator<Item = i64>,
    dir: impl ExactSizeIterator<Item = i64>,
    tag: &[i32],
    bytes: &[u64],
) -> u64 {
    use std::hash::Hasher;
    let mut h = std::hash::DefaultHasher::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut flush = |buf: &mut Vec<u8>| {
        h.write(buf);
        buf.clear();
    };
    buf.extend((func.len() as u64).to_le_bytes());
    func.iter().for_each(|x| buf.extend(x.to_le_bytes()));
    flush(&mut buf);
    buf.extend((kind.len() as u64).to_le_bytes());
    kind.for_each(|x| buf.extend(x.to_le_bytes()));
    flush(&mut buf);
    buf.extend((dir.len() as u64).to_le_bytes());
    dir.for_each(|x| buf.extend(x.to_le_bytes()));
    flush(&mut buf);
    buf.extend((tag.len() as u64).to_le_bytes());
    tag.iter().for_each(|x| buf.extend(x.to_le_bytes()));
    flush(&mut buf);
    buf.extend((bytes.len() as u64).to_le_bytes());
    bytes.iter().for_each(|x| buf.extend(x.to_le_bytes()));
    flush(&mut buf);
    h.finish()
}

/// Every rank, in the order in which the automatic choice prefers them as representatives: most
/// MPI calls, then most point-to-point operations, then the most ranks with the same
/// [`content_key`] (the sequence most processes execute, so the most ranks are reproduced when
/// ranks of a class differ only in message sizes: NAS LU class B's 6- and 7-column ranks, SP's
/// cells), then the key's hash, then the node the rank sits on. All but the last are facts of
/// the processes, not of their numbers, so the same process is chosen under any numbering
/// unless several processes are indistinguishable by their traces without peers (then the node
/// in the canonical placement decides).
fn representative_order(trace: &Trace, placement: &Placement, keys: Option<&[ContentKey]>) -> Vec<Rank> {
    let keys: Vec<ContentKey> = (0..trace.num_ranks())
        .map(|r| {
            keys.and_then(|k| k.get(r as usize).copied())
                .unwrap_or_else(|| content_key(trace, r))
        })
        .collect();
    let mut alike: HashMap<ContentKey, usize> = HashMap::new();
    for k in &keys {
        *alike.entry(*k).or_default() += 1;
    }
    let mut order: Vec<(_, _, _, u32, Rank)> = keys
        .iter()
        .enumerate()
        .map(|(r, k)| {
            (
                (k.0, k.1),
                std::cmp::Reverse(alike[k]),
                k.2,
                placement.node_of_rank[r],
                r as Rank,
            )
        })
        .collect();
    order.sort_unstable();
    order.into_iter().map(|(_, _, _, _, r)| r).collect()
}

/// The ranks with a point-to-point operation whose peer is the rank itself and whose `tables`
/// (peer → topology direction) do not reach themselves, in rank order: where [`SELF_DIRECTION`]
/// exists.
fn ranks_messaging_themselves(trace: &Trace, tables: &[HashMap<Rank, String>]) -> Vec<Rank> {
    trace
        .ranks
        .iter()
        .filter(|rt| {
            rt.p2p.peer.contains(&rt.rank) && !tables.get(rt.rank as usize).is_some_and(|t| t.contains_key(&rt.rank))
        })
        .map(|rt| rt.rank)
        .collect()
}

/// Classes of ranks with the same existing directions (`coverage`) and the same `structure`
/// (a hash of their logical sequence without sizes and tags, [`structure_hash`]; all 0 to group
/// by directions only), each represented by its first member in `order`; classes by most directions, then most members, then their
/// representatives' order. Members in rank order.
fn classes_in_order(order: &[Rank], coverage: &[Vec<bool>], structure: &[u64]) -> Vec<(Rank, Vec<Rank>)> {
    let mut by_cover: Vec<(&Vec<bool>, Vec<Rank>)> = Vec::new();
    let mut at: HashMap<(&Vec<bool>, u64), usize> = HashMap::new();
    for &r in order {
        let key = (&coverage[r as usize], structure.get(r as usize).copied().unwrap_or(0));
        match at.get(&key) {
            Some(&k) => by_cover[k].1.push(r),
            None => {
                at.insert(key, by_cover.len());
                by_cover.push((&coverage[r as usize], vec![r]));
            }
        }
    }
    let position: HashMap<Rank, usize> = order.iter().enumerate().map(|(i, &r)| (r, i)).collect();
    by_cover.sort_by_key(|(c, m)| {
        (
            std::cmp::Reverse(c.iter().filter(|&&x| x).count()),
            std::cmp::Reverse(m.len()),
            position[&m[0]],
        )
    });
    by_cover
        .into_iter()
        .map(|(_, mut m)| {
            let rep = m[0];
            m.sort_unstable();
            (rep, m)
        })
        .collect()
}

/// Ranks that have a neighbour in every direction some rank has (candidates for the logical
/// trace on their own).
pub fn maximal_ranks(placement: &Placement) -> Vec<Rank> {
    let dirs = placement.spec.directions();
    let cov: Vec<Vec<bool>> = placement
        .node_of_rank
        .iter()
        .map(|&u| dirs.iter().map(|d| placement.spec.neighbour(u, d).is_some()).collect())
        .collect();
    let exists: Vec<bool> = (0..dirs.len()).map(|k| cov.iter().any(|c| c[k])).collect();
    (0..cov.len())
        .filter(|&r| cov[r].iter().zip(&exists).all(|(&c, &e)| c || !e))
        .map(|r| r as Rank)
        .collect()
}

/// The logical trace of `trace` under `placement`: the trace of a maximal rank (or a merge of
/// several ranks covering every direction) with peers rewritten as directions.
pub fn logicalize(trace: &Trace, placement: &Placement) -> Result<LogicalTrace, String> {
    logicalize_ranks(trace, placement, None)
}

/// [`logicalize`] from the traces of the given ranks (merged in this order) instead of the
/// ranks chosen automatically.
pub fn logicalize_ranks(trace: &Trace, placement: &Placement, ranks: Option<&[Rank]>) -> Result<LogicalTrace, String> {
    logicalize_keyed(trace, placement, ranks, None)
}

/// [`logicalize_ranks`] with the ranks' [`content_key`]s already computed (by the placement
/// choice), or `None` to compute them.
fn logicalize_keyed(
    trace: &Trace,
    placement: &Placement,
    ranks: Option<&[Rank]>,
    keys: Option<&[ContentKey]>,
) -> Result<LogicalTrace, String> {
    let n = trace.num_ranks();
    if let Some(bad) = ranks.and_then(|rs| rs.iter().find(|&&r| r >= n)) {
        return Err(format!("rank {bad} is out of range (the trace has {n} ranks)"));
    }
    if ranks.is_some_and(|rs| rs.is_empty()) {
        return Err("no rank given to build the logical trace from".into());
    }
    if placement.node_of_rank.len() != n as usize {
        return Err(format!(
            "the placement has {} ranks but the trace has {n}",
            placement.node_of_rank.len()
        ));
    }
    if n == 0 {
        return Err("the trace has no ranks".into());
    }
    let dirs = placement.spec.directions();
    let mut tables = placement.direction_tables();
    let self_ranks = ranks_messaging_themselves(trace, &tables);
    // Every rank reaches itself in `self` (unless a direction of the topology leads back to it).
    for (r, table) in tables.iter_mut().enumerate() {
        table.entry(r as Rank).or_insert_with(|| SELF_DIRECTION.into());
    }
    // Directions that exist at each rank, as bit sets over `names`: the topology's, then
    // `self` when some rank messages itself.
    let mut names: Vec<String> = dirs.iter().map(|d| d.name()).collect();
    let mut coverage: Vec<Vec<bool>> = placement
        .node_of_rank
        .iter()
        .map(|&u| dirs.iter().map(|d| placement.spec.neighbour(u, d).is_some()).collect())
        .collect();
    if !self_ranks.is_empty() {
        names.push(SELF_DIRECTION.into());
        for (r, c) in coverage.iter_mut().enumerate() {
            c.push(self_ranks.binary_search(&(r as Rank)).is_ok());
        }
    }
    let exists: Vec<bool> = (0..names.len()).map(|k| coverage.iter().any(|c| c[k])).collect();
    let full = |r: usize| coverage[r].iter().zip(&exists).all(|(&c, &e)| c || !e);
    let rewrite = |r: Rank| {
        let table = &tables[r as usize];
        let partner = |peer: Rank| {
            if peer == ANY_SOURCE {
                Some(Partner::Any)
            } else {
                table.get(&peer).map(|d| Partner::Direction(d.clone()))
            }
        };
        records_of(trace, r, &partner)
    };
    // The ranks to rewrite, each with the ranks it stands for, chosen from placement-invariant
    // facts only (see [`representative_order`]). With a maximal rank and several classes, both
    // that rank alone and the merge of every class are candidates (`alone_first`).
    // Per rank (automatic choice only): its operations as (send/receive, direction index, size).
    let mut own_ops: Vec<Vec<OpKey>> = Vec::new();
    let (groups, alone_first): (Vec<(Rank, Vec<Rank>)>, bool) = match ranks {
        Some(rs) => (
            rs.iter()
                .map(|&r| {
                    let members = (0..n)
                        .filter(|&q| q == r || (coverage[q as usize] == coverage[r as usize] && !rs.contains(&q)))
                        .collect();
                    (r, members)
                })
                .collect(),
            false,
        ),
        None => {
            let order = representative_order(trace, placement, keys);
            // Ranks with the same directions but another logical sequence (NAS LU's pintgr on
            // the ranks holding a global face, CG's and MG's classes) are classes of their own,
            // so the merge gives each its own branches; beyond `MAX_CLASSES` the classes are by
            // directions only, as before.
            let mut structure: Vec<u64> = Vec::with_capacity(n as usize);
            for r in 0..n {
                let recs = rewrite(r).0;
                structure.push(structure_hash(&recs));
                own_ops.push(op_keys_of(&recs, &names));
            }
            let mut classes = classes_in_order(&order, &coverage, &structure);
            if classes.len() > MAX_CLASSES {
                classes = classes_in_order(&order, &coverage, &[]);
            }
            match order.iter().find(|&&r| full(r as usize)) {
                Some(&r) if classes.len() == 1 => (vec![(r, vec![r])], false),
                Some(_) => (classes, true),
                None => (classes, false),
            }
        }
    };
    let maximal = full(groups[0].0 as usize);
    let mut skipped = 0;
    let (mut records, used, classes, conflicts) = if groups.len() == 1 {
        let (recs, sk) = rewrite(groups[0].0);
        skipped += sk;
        (recs, vec![groups[0].0], Vec::new(), 0)
    } else {
        let mut class_traces = Vec::with_capacity(groups.len());
        let mut class_skipped = Vec::with_capacity(groups.len());
        for (r, members) in &groups {
            let (recs, sk) = rewrite(*r);
            class_skipped.push(sk);
            class_traces.push(merge::ClassTrace {
                rank: *r,
                members: {
                    let mut m = members.clone();
                    m.sort_unstable();
                    m
                },
                visible: coverage[*r as usize].clone(),
                records: recs,
            });
        }
        let weights: Vec<u64> = groups.iter().map(|(_, m)| m.len() as u64).collect();
        // A maximal rank's trace alone is kept when it reproduces every class as well as the
        // merge does (NAS BT, tori): the merge is taken only when the classes execute something
        // the maximal rank's expansion does not give them (NAS LU's shorter boundary messages).
        let alone_score = alone_first.then(|| merge::score(&class_traces[0].records, &class_traces, &names, &weights));
        let merged_best = match alone_score {
            Some(s) if s >= 1.0 => None,
            _ => {
                let (merged, included) = merge::merge_best(&class_traces, &names, &weights);
                let better =
                    alone_score.is_none_or(|s| merge::score(&merged.records, &class_traces, &names, &weights) > s);
                better.then_some((merged, included))
            }
        };
        match merged_best {
            None => {
                skipped += class_skipped[0];
                let rep = groups[0].0;
                (class_traces.swap_remove(0).records, vec![rep], Vec::new(), 0)
            }
            Some((merged, included)) => {
                skipped += class_skipped.iter().sum::<u64>();
                let classes: Vec<RankClass> = groups
                    .iter()
                    .zip(merged.contributed.iter().zip(&merged.class_conflicts))
                    .zip(included)
                    .map(|(((r, members), (&records, &conflicts)), merged)| RankClass {
                        rank: *r,
                        ranks: members.clone(),
                        directions: names
                            .iter()
                            .zip(&coverage[*r as usize])
                            .filter(|(_, &c)| c)
                            .map(|(d, _)| d.clone())
                            .collect(),
                        records,
                        conflicts,
                        merged,
                    })
                    .collect();
                let used: Vec<Rank> = match ranks {
                    Some(rs) => rs.to_vec(),
                    None => {
                        let mut by_share: Vec<&RankClass> = classes.iter().filter(|c| c.records > 0).collect();
                        by_share.sort_by_key(|c| (std::cmp::Reverse(c.records), c.rank));
                        by_share.iter().map(|c| c.rank).collect()
                    }
                };
                (merged.records, used, classes, merged.conflicts)
            }
        }
    };
    // Every rank's own message sizes (automatic choice only: given ranks mean "the trace of
    // these ranks").
    let sizes_fitted = ranks.is_none() && fit_rank_sizes(&mut records, &names, &coverage, &own_ops);
    let rank_sized_operations = records
        .iter()
        .flat_map(|r| &r.call.ops)
        .filter(|o| !o.bytes_by_rank.is_empty())
        .count() as u64;
    let branches = records.iter().filter(|r| r.call.only_ranks.is_some()).count() as u64;
    Ok(LogicalTrace {
        schema: SCHEMA.into(),
        source: trace.source.clone(),
        ranks: n,
        sizes_fitted,
        rank_sized_operations,
        branches,
        topology: TopologyInfo {
            family: placement.spec.family.name().into(),
            dims: placement.spec.dims.clone(),
            label: placement.spec.label(),
            directions: names,
        },
        placement: placement.clone(),
        ranks_used: used,
        maximal,
        records,
        skipped_calls: skipped,
        accuracy: accuracy(trace, placement),
        tags_consistent: false,
        classes,
        merge_conflicts: conflicts,
        directions_from: None,
        self_ranks,
    }
    .with_tag_check(trace, &tables))
}

/// The logical trace of `trace` under the placement [`Placement::choose`] picks from the
/// topology report (the identified match, or an isomorphic equivalent whose directions the
/// ranks agree on better), from the given ranks when `ranks` is `Some`; the choice is recorded
/// in [`LogicalTrace::directions_from`].
pub fn logicalize_identified(
    trace: &Trace,
    report: &TopologyReport,
    ranks: Option<&[Rank]>,
) -> Result<LogicalTrace, String> {
    let keys: Vec<ContentKey> = (0..trace.num_ranks()).map(|r| content_key(trace, r)).collect();
    let (placement, choice) = match choice::choose_keyed(trace, report, &keys) {
        Ok(chosen) => chosen,
        Err(_) if report.identification.matched.is_none() && !report.no_point_to_point => rank_offsets(trace, &keys)?,
        Err(e) => return Err(e),
    };
    let mut logical = logicalize_keyed(trace, &placement, ranks, Some(&keys))?;
    logical.directions_from = Some(choice);
    Ok(logical)
}

/// The placement of a run without an identified topology: rank `r` is node `r` of an
/// all-to-all of the run's ranks, whose direction `+k` leads to rank `(r + k) mod n`. Every
/// peer has a direction, so nothing is dropped, and the ranks of an SPMD program that talk to
/// the same relative partners share their records (the peers' relative encoding of ScalaTrace).
fn rank_offsets(trace: &Trace, keys: &[ContentKey]) -> Result<(Placement, choice::DirectionsFrom), String> {
    let n = trace.num_ranks();
    let spec = TopologySpec::new(Family::AllToAll, vec![n])?;
    let placement = Placement {
        spec,
        node_of_rank: (0..n).collect(),
    };
    let (agreed, total) = choice::agreement_keyed(trace, &placement, keys);
    let agreement = if total == 0 { 1.0 } else { agreed as f64 / total as f64 };
    let label = placement.spec.label();
    Ok((
        placement,
        choice::DirectionsFrom {
            topology: label,
            identified: "none".into(),
            agreement,
            identified_agreement: 0.0,
            considered: Vec::new(),
            reason: "rank offsets, as no topology was identified for this run (+k: the rank k further, \
                     modulo the ranks; the relative encoding of peers ScalaTrace uses)"
                .into(),
            placed_by: choice::PlacedBy::RankOffsets,
        },
    ))
}

type TagKey = (bool, String, i32);

impl LogicalTrace {
    fn with_tag_check(mut self, trace: &Trace, tables: &[HashMap<Rank, String>]) -> LogicalTrace {
        let logical: std::collections::HashSet<TagKey> = self
            .records
            .iter()
            .flat_map(|r| &r.call.ops)
            .filter_map(|o| match &o.partner {
                Partner::Direction(d) => Some((o.dir == P2pDir::Send, d.clone(), o.tag)),
                _ => None,
            })
            .collect();
        let neighbours = self.placement.neighbour_tables_with_self(&self.self_ranks);
        self.tags_consistent = trace.ranks.iter().all(|rt| {
            let table = &tables[rt.rank as usize];
            let p = &rt.p2p;
            let own: std::collections::HashSet<TagKey> = (0..p.len())
                .filter_map(|i| {
                    table
                        .get(&p.peer[i])
                        .map(|d| (p.dir[i] == P2pDir::Send, d.clone(), p.tag[i]))
                })
                .collect();
            let here = &neighbours[rt.rank as usize];
            let expected: std::collections::HashSet<TagKey> =
                logical.iter().filter(|k| here.contains_key(&k.1)).cloned().collect();
            own == expected
        });
        self
    }
}

/// Longest pair of sequences whose LCS is computed in one piece; longer ones (after their
/// common prefix and suffix) are compared window by window (proportional windows of this size),
/// which bounds the cost while keeping the result deterministic (a time deadline would make it
/// depend on machine load).
const DIFF_WINDOW: usize = 40_000;

/// Dense symbol ids for two sequences of hashable keys (so the diff compares integers).
fn symbols<K: std::hash::Hash + Eq>(a: &[K], b: &[K]) -> (Vec<u32>, Vec<u32>) {
    let mut ids: HashMap<&K, u32> = HashMap::new();
    let mut id = |k| {
        let next = ids.len() as u32;
        *ids.entry(k).or_insert(next)
    };
    let sa = a.iter().map(&mut id).collect();
    let sb = b.iter().map(&mut id).collect();
    (sa, sb)
}

/// One point-to-point operation of a physical trace, as `--expand-rank` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PhysicalCall {
    /// MPI function name (`MPI_Isend`); a `MPI_Sendrecv` gives two entries.
    pub kind: String,
    /// `send` or `recv`.
    pub direction: String,
    /// World rank of the partner, `None` for an unresolved `MPI_ANY_SOURCE`.
    pub peer: Option<Rank>,
    /// Message size in bytes.
    pub bytes: u64,
    /// Message tag.
    pub tag: i32,
}

impl PhysicalCall {
    /// What reproduction compares: function, direction, peer and size (not the tag).
    fn key(&self) -> (&str, &str, Option<Rank>, u64) {
        (&self.kind, &self.direction, self.peer, self.bytes)
    }
}

fn dir_name(d: P2pDir) -> &'static str {
    match d {
        P2pDir::Send => "send",
        P2pDir::Recv => "recv",
    }
}

/// The physical trace of `rank` generated from a logical trace: its records with directions
/// replaced by that rank's neighbours; operations along directions without a neighbour vanish,
/// a point-to-point call with no operation left vanishes, and a `MPI_Sendrecv` left with one half
/// becomes `MPI_Send` or `MPI_Recv` (what a program guarding the call by neighbour existence
/// does). Completions stay when at least one record they complete stays.
pub fn expand_records(logical: &LogicalTrace, rank: Rank) -> Result<Vec<LogicalCall>, String> {
    expand_calls(
        &logical.placement,
        &logical.self_ranks,
        logical.records.iter().map(|r| &r.call),
        rank,
    )
}

/// [`expand_records`] over any sequence of logical calls (e.g. a decompressed program), with
/// [`SELF_DIRECTION`] existing at `self_ranks` ([`LogicalTrace::self_ranks`]).
pub fn expand_calls<'a>(
    placement: &Placement,
    self_ranks: &[Rank],
    calls: impl IntoIterator<Item = &'a LogicalCall>,
    rank: Rank,
) -> Result<Vec<LogicalCall>, String> {
    let tables = placement.neighbour_tables_with_self(self_ranks);
    let Some(table) = tables.get(rank as usize) else {
        return Err(format!(
            "rank {rank} is out of range (the run has {} ranks)",
            tables.len()
        ));
    };
    Ok(expand_with(table, rank, calls))
}

/// Expansion with the rank's direction → neighbour table already built.
fn expand_with<'a>(
    table: &HashMap<String, Rank>,
    rank: Rank,
    calls: impl IntoIterator<Item = &'a LogicalCall>,
) -> Vec<LogicalCall> {
    let mut directions: Vec<&str> = table.keys().map(String::as_str).collect();
    directions.sort_unstable();
    let mut out: Vec<LogicalCall> = Vec::new();
    // Index in `out` of each logical record's image, if it has one.
    let mut image: Vec<Option<usize>> = Vec::new();
    for call in calls {
        let here = image.len();
        if !call.runs_on(rank) {
            image.push(None);
            continue;
        }
        let kept = restrict_call(call, |o| {
            let partner = match &o.partner {
                Partner::Direction(d) => Partner::Rank(*table.get(d)?),
                other => other.clone(),
            };
            Some(Operation {
                partner,
                ..o.for_rank(rank, &directions)
            })
        });
        let kept = kept.and_then(|mut c| {
            if call.completes.is_empty() {
                return Some(c);
            }
            let pos = out.len();
            let mut back: Vec<u32> = call
                .completes
                .iter()
                .filter_map(|&k| here.checked_sub(k as usize).and_then(|j| image[j]))
                .map(|t| (pos - t) as u32)
                .collect();
            back.sort_unstable();
            back.dedup();
            if back.is_empty() {
                return None;
            }
            c.completes = back;
            Some(c)
        });
        let kept = kept.map(|mut c| {
            c.only_ranks = None;
            c
        });
        image.push(kept.as_ref().map(|_| out.len()));
        out.extend(kept);
    }
    out
}

/// `call` as a rank executes it: each operation mapped by `keep` (`None`: that rank has no
/// neighbour in its direction, the operation vanishes). A point-to-point call left without
/// operations vanishes; a `MPI_Sendrecv` that lost one of its two halves becomes `MPI_Send` or
/// `MPI_Recv` (what a program guarding the call by neighbour existence does). Other calls are
/// kept as they are. Expansion and the merge of rank classes share this rule.
pub(crate) fn restrict_call(
    call: &LogicalCall,
    keep: impl FnMut(&Operation) -> Option<Operation>,
) -> Option<LogicalCall> {
    if !call.kind.is_p2p() {
        return Some(call.clone());
    }
    let ops: Vec<Operation> = call.ops.iter().filter_map(keep).collect();
    if ops.is_empty() {
        return None;
    }
    let mut out = LogicalCall { ops, ..call.clone() };
    if call.kind == CallKind::SendRecv && out.ops.len() == 1 && call.ops.len() == 2 {
        let (function, kind) = match out.ops[0].dir {
            P2pDir::Send => ("MPI_Send", CallKind::Send),
            P2pDir::Recv => ("MPI_Recv", CallKind::Recv),
        };
        out.function = function.into();
        out.kind = kind;
    }
    Some(out)
}

/// The point-to-point operations of expanded calls, in order (the `--expand-rank` list).
pub fn physical_calls(calls: &[LogicalCall]) -> Vec<PhysicalCall> {
    calls
        .iter()
        .flat_map(|c| {
            c.ops.iter().map(move |o| PhysicalCall {
                kind: c.function.clone(),
                direction: dir_name(o.dir).into(),
                peer: match o.partner {
                    Partner::Rank(r) => Some(r),
                    _ => None,
                },
                bytes: o.bytes,
                tag: o.tag,
            })
        })
        .collect()
}

/// The real point-to-point operations of `rank`, in order, and whether each lies inside the
/// topology of `placement` (a message to itself does: [`SELF_DIRECTION`]).
pub fn real_calls(trace: &Trace, placement: &Placement, rank: Rank) -> Vec<(PhysicalCall, bool)> {
    let tables = placement.direction_tables();
    real_with(trace, tables.get(rank as usize), rank)
}

/// [`real_calls`] with the rank's peer → direction table already built (empty for a rank
/// outside the trace).
fn real_with(trace: &Trace, table: Option<&HashMap<Rank, String>>, rank: Rank) -> Vec<(PhysicalCall, bool)> {
    let Some(rt) = trace.ranks.get(rank as usize) else {
        return Vec::new();
    };
    let p = &rt.p2p;
    (0..p.len())
        .map(|i| {
            let peer = p.peer[i];
            let post = p.post[i];
            let kind = rt
                .calls
                .func
                .get(post as usize)
                .map_or_else(|| "MPI_Unknown".to_owned(), |&f| trace.functions.name(f).to_owned());
            let inside = peer == ANY_SOURCE || peer == rank || table.is_some_and(|t| t.contains_key(&peer));
            (
                PhysicalCall {
                    kind,
                    direction: dir_name(p.dir[i]).into(),
                    peer: (peer != ANY_SOURCE).then_some(peer),
                    bytes: p.bytes[i],
                    tag: p.tag[i],
                },
                inside,
            )
        })
        .collect()
}

/// How well the expansion of the logical trace reproduces one rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankReproduction {
    /// The rank.
    pub rank: Rank,
    /// Its real point-to-point operations.
    pub real_calls: u64,
    /// Those inside the topology.
    pub real_in_topology: u64,
    /// Operations of the expansion.
    pub expanded_calls: u64,
    /// Operations equal in function, direction, peer and size, in the same order (longest
    /// common subsequence of the two lists).
    pub reproduced: u64,
    /// `reproduced / max(real, expanded)`: 1 when the expansion is the real trace exactly.
    pub share: f64,
    /// The same against the real operations inside the topology only.
    pub share_in_topology: f64,
    /// STRUCTURE: operations equal in function, direction and peer, in the same order (longest
    /// common subsequence without sizes), against the real operations inside the topology (the
    /// operations outside are [`Accuracy`]'s dropped ones).
    #[serde(default)]
    pub structure_reproduced: u64,
    /// `structure_reproduced / max(real in topology, expanded)`.
    #[serde(default)]
    pub structure_share: f64,
    /// The expansion's operations are the real ones inside the topology, one for one, in
    /// function, direction, peer and order.
    #[serde(default)]
    pub structure_exact: bool,
    /// ... and in size as well: the rank's sends and receives are reproduced exactly.
    #[serde(default)]
    pub bytes_exact: bool,
    /// VOLUME: bytes of the real operations inside the topology (sent and received).
    #[serde(default)]
    pub real_bytes: u64,
    /// Bytes of the expansion's operations.
    #[serde(default)]
    pub expanded_bytes: u64,
    /// `|expanded_bytes - real_bytes| / real_bytes` (0 when both are 0).
    #[serde(default)]
    pub volume_error: f64,
}

/// Verification by expansion over all ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// Per rank, in rank order.
    pub per_rank: Vec<RankReproduction>,
    /// Ranks whose share is below 1.
    pub ranks_below_full: Vec<Rank>,
    /// Reproduced operations over all ranks divided by the sum of `max(real, expanded)`.
    pub overall_share: f64,
    /// STRUCTURE over all ranks: `structure_reproduced` summed over the sum of `max(real in
    /// topology, expanded)`.
    #[serde(default)]
    pub structure_share: f64,
    /// Ranks whose structure is not exact ([`RankReproduction::structure_exact`]).
    #[serde(default)]
    pub ranks_structure_differs: Vec<Rank>,
    /// Ranks whose structure is exact but some size is not ([`RankReproduction::bytes_exact`]).
    #[serde(default)]
    pub ranks_bytes_differ: Vec<Rank>,
    /// VOLUME over all ranks: bytes of the real operations inside the topology.
    #[serde(default)]
    pub real_bytes: u64,
    /// Bytes of every rank's expansion.
    #[serde(default)]
    pub expanded_bytes: u64,
    /// `|expanded_bytes - real_bytes| / real_bytes` over all ranks.
    #[serde(default)]
    pub volume_error: f64,
    /// Largest per-rank [`RankReproduction::volume_error`].
    #[serde(default)]
    pub max_volume_error: f64,
    /// Ranks whose volume is off by more than [`VOLUME_TOLERANCE`].
    #[serde(default)]
    pub ranks_volume_off: Vec<Rank>,
}

/// Relative volume error beyond which a rank counts in [`Verification::ranks_volume_off`]: 1 %,
/// the accuracy asked of a trace whose sizes are summarised by their statistics (sizes that
/// change from step to step; see `compress`), where the structure is kept exact.
pub const VOLUME_TOLERANCE: f64 = 0.01;

fn volume_error(expanded: u64, real: u64) -> f64 {
    if real == 0 {
        if expanded == 0 {
            0.0
        } else {
            1.0
        }
    } else {
        (expanded as f64 - real as f64).abs() / real as f64
    }
}

/// Length of the longest common subsequence of `a` and `b`: their common prefix and suffix
/// (always part of some LCS), plus the middles' LCS by rapidfuzz's bit-parallel algorithm,
/// O(n·m/64), exact when the middles together are at most [`DIFF_WINDOW`] long and otherwise
/// summed over proportional windows of that size. Myers' O((n+m)·D) diff was 95 % of a
/// 47 s verification when an expansion differed much from the real sequence (large D).
fn lcs_len<K: std::hash::Hash + Eq>(a: &[K], b: &[K]) -> u64 {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    let common = (prefix + suffix) as u64;
    if a.is_empty() || b.is_empty() {
        return common;
    }
    let (sa, sb) = symbols(a, b);
    let windows = (sa.len() + sb.len()).div_ceil(DIFF_WINDOW).max(1);
    common
        + (0..windows)
            .map(|w| {
                let (a0, a1) = (sa.len() * w / windows, sa.len() * (w + 1) / windows);
                let (b0, b1) = (sb.len() * w / windows, sb.len() * (w + 1) / windows);
                rapidfuzz::distance::lcs_seq::similarity(sa[a0..a1].iter().copied(), sb[b0..b1].iter().copied()) as u64
            })
            .sum::<u64>()
}

/// Expand the logical trace for every rank and compare with the real trace.
pub fn verify(trace: &Trace, logical: &LogicalTrace) -> Result<Verification, String> {
    let neighbours = logical.placement.neighbour_tables_with_self(&logical.self_ranks);
    let directions = logical.placement.direction_tables();
    let mut per_rank = Vec::new();
    let (mut num, mut den) = (0u64, 0u64);
    let (mut s_num, mut s_den, mut total_real, mut total_expanded) = (0u64, 0u64, 0u64, 0u64);
    for r in 0..trace.num_ranks() {
        let table = neighbours.get(r as usize).ok_or_else(|| {
            format!(
                "rank {r} is out of range (the placement has {} ranks)",
                neighbours.len()
            )
        })?;
        let expanded = physical_calls(&expand_with(table, r, logical.records.iter().map(|x| &x.call)));
        let real = real_with(trace, directions.get(r as usize), r);
        let ek: Vec<_> = expanded.iter().map(PhysicalCall::key).collect();
        let rk: Vec<_> = real.iter().map(|(c, _)| c.key()).collect();
        let rin: Vec<_> = real
            .iter()
            .filter(|(_, inside)| *inside)
            .map(|(c, _)| c.key())
            .collect();
        let reproduced = lcs_len(&ek, &rk);
        let reproduced_in = lcs_len(&ek, &rin);
        let share = |x: u64, a: usize, b: usize| {
            let d = a.max(b) as u64;
            if d == 0 {
                1.0
            } else {
                x as f64 / d as f64
            }
        };
        num += reproduced;
        den += ek.len().max(rk.len()) as u64;
        let es: Vec<_> = ek.iter().map(|k| (k.0, k.1, k.2)).collect();
        let rs: Vec<_> = rin.iter().map(|k| (k.0, k.1, k.2)).collect();
        let structure_reproduced = if es == rs { es.len() as u64 } else { lcs_len(&es, &rs) };
        s_num += structure_reproduced;
        s_den += es.len().max(rs.len()) as u64;
        // Saturating: a hostile trace may claim sizes near u64::MAX.
        let real_bytes: u64 = rin.iter().fold(0u64, |a, k| a.saturating_add(k.3));
        let expanded_bytes: u64 = ek.iter().fold(0u64, |a, k| a.saturating_add(k.3));
        total_real = total_real.saturating_add(real_bytes);
        total_expanded = total_expanded.saturating_add(expanded_bytes);
        per_rank.push(RankReproduction {
            rank: r,
            real_calls: rk.len() as u64,
            real_in_topology: rin.len() as u64,
            expanded_calls: ek.len() as u64,
            reproduced,
            share: share(reproduced, ek.len(), rk.len()),
            share_in_topology: share(reproduced_in, ek.len(), rin.len()),
            structure_reproduced,
            structure_share: share(structure_reproduced, es.len(), rs.len()),
            structure_exact: es == rs,
            bytes_exact: ek == rin,
            real_bytes,
            expanded_bytes,
            volume_error: volume_error(expanded_bytes, real_bytes),
        });
    }
    Ok(Verification {
        ranks_below_full: per_rank.iter().filter(|p| p.share < 1.0).map(|p| p.rank).collect(),
        ranks_structure_differs: per_rank.iter().filter(|p| !p.structure_exact).map(|p| p.rank).collect(),
        ranks_bytes_differ: per_rank
            .iter()
            .filter(|p| p.structure_exact && !p.bytes_exact)
            .map(|p| p.rank)
            .collect(),
        ranks_volume_off: per_rank
            .iter()
            .filter(|p| p.volume_error > VOLUME_TOLERANCE)
            .map(|p| p.rank)
            .collect(),
        max_volume_error: per_rank.iter().map(|p| p.volume_error).fold(0.0, f64::max),
        per_rank,
        overall_share: if den == 0 { 1.0 } else { num as f64 / den as f64 },
        structure_share: if s_den == 0 { 1.0 } else { s_num as f64 / s_den as f64 },
        real_bytes: total_real,
        expanded_bytes: total_expanded,
        volume_error: volume_error(total_expanded, total_real),
    })
}

#[cfg(test)]
mod tests {
    //! The verification's LCS against Myers' exact diff (the previous implementation), and the
    //! representative tie-break hash pinned to fixed-width bytes.

    use super::*;

    /// The previous `lcs_len`: Myers over the same proportional windows of the whole sequences.
    pub(super) fn myers_lcs(a: &[u32], b: &[u32]) -> u64 {
        let windows = (a.len() + b.len()).div_ceil(DIFF_WINDOW).max(1);
        let mut n = 0;
        for w in 0..windows {
            let (a0, a1) = (a.len() * w / windows, a.len() * (w + 1) / windows);
            let (b0, b1) = (b.len() * w / windows, b.len() * (w + 1) / windows);
            for op in similar::capture_diff_deadline(similar::Algorithm::Myers, a, a0..a1, b, b0..b1, None) {
                if let similar::DiffOp::Equal { len, .. } = op {
                    n += len as u64;
                }
            }
        }
        n
    }

    /// xorshift64: reproducible pseudo-random symbols without a dependency.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn bit_parallel_lcs_equals_myers_on_random_sequences() {
        let mut s = 0x9e37_79b9_7f4a_7c15;
        for case in 0..400 {
            let alphabet = 1 + next(&mut s) % 6;
            let len_a = (next(&mut s) % 300) as usize;
            let a: Vec<u32> = (0..len_a).map(|_| (next(&mut s) % alphabet) as u32).collect();
            // Half the cases: `b` is `a` edited (shared prefix/suffix, a few changes).
            let b: Vec<u32> = if case % 2 == 0 {
                let mut b = a.clone();
                for _ in 0..next(&mut s) % 8 {
                    if b.is_empty() {
                        break;
                    }
                    let i = (next(&mut s) as usize) % b.len();
                    match next(&mut s) % 3 {
                        0 => b[i] = (next(&mut s) % alphabet) as u32,
                        1 => {
                            b.remove(i);
                        }
                        _ => b.insert(i, (next(&mut s) % alphabet) as u32),
                    }
                }
                b
            } else {
                let len_b = (next(&mut s) % 300) as usize;
                (0..len_b).map(|_| (next(&mut s) % alphabet) as u32).collect()
            };
            assert_eq!(lcs_len(&a, &b), myers_lcs(&a, &b), "case {case}: {a:?} / {b:?}");
        }
    }

    #[test]
    fn bit_parallel_lcs_equals_myers_on_real_expansions() {
        // LU 32 class A from its maximal rank alone: the boundary ranks' expansions differ
        // from their real sequences in every wavefront message (the 47 s case's shape).
        let spec = tracelogic_synth::NasSpec {
            iterations: Some(1),
            ..tracelogic_synth::NasSpec::new(tracelogic_synth::NasBenchmark::Lu, tracelogic_synth::NasClass::A, 32)
        };
        let (trace, _) = tracelogic_synth::generate_nas(&spec).unwrap();
        let placement = Placement::new(TopologySpec::parse("grid:8x4").unwrap(), 32, (0..32).map(|r| (r, r))).unwrap();
        let alone = logicalize_ranks(&trace, &placement, Some(&[9])).unwrap();
        let mut differing = 0;
        for r in 0..32 {
            let table = &placement.neighbour_tables_with_self(&[])[r as usize];
            let expanded = physical_calls(&expand_with(table, r, alone.records.iter().map(|x| &x.call)));
            let real = real_calls(&trace, &placement, r);
            let ek: Vec<_> = expanded.iter().map(PhysicalCall::key).collect();
            let rk: Vec<_> = real.iter().map(|(c, _)| c.key()).collect();
            let (sa, sb) = symbols(&ek, &rk);
            differing += usize::from(sa != sb);
            assert_eq!(lcs_len(&ek, &rk), myers_lcs(&sa, &sb), "rank {r}");
        }
        assert_eq!(differing, 20, "the 20 boundary ranks differ");
    }

    #[test]
    fn content_key_hashes_fixed_width_bytes() {
        let mut t = Trace::new("test", "pin", 1);
        let send = t.functions.intern("MPI_Send");
        let recv = t.functions.intern("MPI_Recv");
        let rt = &mut t.ranks[0];
        rt.calls.func = vec![send, recv];
        rt.calls.kind = vec![tracelogic_model::CallKind::Send, tracelogic_model::CallKind::Recv];
        rt.p2p.dir = vec![P2pDir::Send, P2pDir::Recv];
        rt.p2p.tag = vec![7, -1];
        rt.p2p.bytes = vec![80, 1 << 33];
        // The bytes written by hand: each sequence as u64 length then its elements.
        let mut bytes: Vec<u8> = Vec::new();
        bytes.extend(2u64.to_le_bytes());
        bytes.extend(send.to_le_bytes());
        bytes.extend(recv.to_le_bytes());
        bytes.extend(2u64.to_le_bytes());
        bytes.extend((tracelogic_model::CallKind::Send as i64).to_le_bytes());
        bytes.extend((tracelogic_model::CallKind::Recv as i64).to_le_bytes());
        bytes.extend(2u64.to_le_bytes());
        bytes.extend(0i64.to_le_bytes());
        bytes.extend(1i64.to_le_bytes());
        bytes.extend(2u64.to_le_bytes());
        bytes.extend(7i32.to_le_bytes());
        bytes.extend((-1i32).to_le_bytes());
        bytes.extend(2u64.to_le_bytes());
        bytes.extend(80u64.to_le_bytes());
        bytes.extend((1u64 << 33).to_le_bytes());
        assert_eq!(bytes.len(), 8 + 8 + 8 + 16 + 8 + 16 + 8 + 8 + 8 + 16);
        let mut h = std::hash::DefaultHasher::new();
        std::hash::Hasher::write(&mut h, &bytes);
        let key = content_key(&t, 0);
        assert_eq!(key.2, std::hash::Hasher::finish(&h));
        assert_eq!(key.0 .0, 2);
        // On a 64-bit little-endian machine this is the derived hash of the slices the key used
        // before, so native answers (the CLI's representative) are unchanged.
        #[cfg(all(target_pointer_width = "64", target_endian = "little"))]
        {
            use std::hash::Hash;
            let rt = &t.ranks[0];
            let mut d = std::hash::DefaultHasher::new();
            rt.calls.func.hash(&mut d);
            rt.calls.kind.hash(&mut d);
            rt.p2p.dir.hash(&mut d);
            rt.p2p.tag.hash(&mut d);
            rt.p2p.bytes.hash(&mut d);
            assert_eq!(key.2, std::hash::Hasher::finish(&d));
        }
    }
}
