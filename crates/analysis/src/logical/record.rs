//! What a logical trace is made of: records, their calls, operations, partners and collectives.

#[allow(unused_imports)]
use super::*;

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
    /// Ranks that skip this operation here although they execute the record (increasing): a
    /// `MPI_Sendrecv` of which some ranks run one half only in some iterations (GROMACS sends
    /// no halo message when a domain has no atoms to send, `MPI_Send` or `MPI_Recv` instead),
    /// so that the iteration is still the same program. Set by the merge; loop compression
    /// keeps it per visit as [`crate::compress::Node::Call`]'s `present`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absent_on: Vec<Rank>,
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
        Operation {
            bytes: self.class_bytes(here),
            bytes_by_class: Vec::new(),
            bytes_by_rank: Vec::new(),
            absent_on: Vec::new(),
            ..self.clone()
        }
    }

    /// The size a rank whose existing directions are `here` (sorted) sends or receives: its
    /// class's ([`Operation::bytes_by_class`]), else `bytes`. Nothing is copied.
    pub fn class_bytes(&self, here: &[&str]) -> u64 {
        if self.bytes_by_class.is_empty() {
            return self.bytes;
        }
        self.bytes_by_class
            .iter()
            .find(|c| same_directions(&c.directions, here))
            .map_or(self.bytes, |c| c.bytes)
    }

    /// The size rank `rank` sends or receives: its own ([`Operation::bytes_by_rank`]), else its
    /// class's (`here`: its existing directions, sorted), else `bytes`.
    pub fn bytes_on(&self, rank: Rank, here: &[&str]) -> u64 {
        self.bytes_by_rank
            .iter()
            .find(|e| e.ranks.binary_search(&rank).is_ok())
            .map_or_else(|| self.class_bytes(here), |e| e.bytes)
    }

    /// The operation as rank `rank` executes it ([`Operation::bytes_on`]), no tables left.
    pub fn for_rank(&self, rank: Rank, here: &[&str]) -> Operation {
        // Field by field: `..self.clone()` would copy the size tables only to drop them (on a
        // 16.6 M-call run that copying was a quarter of the logical trace's time).
        Operation {
            dir: self.dir,
            partner: self.partner.clone(),
            tag: self.tag,
            bytes: self.bytes_on(rank, here),
            bytes_by_class: Vec::new(),
            bytes_by_rank: Vec::new(),
            absent_on: Vec::new(),
        }
    }

    /// Whether rank `rank` executes this operation where it executes its record (not listed in
    /// [`Operation::absent_on`]).
    pub fn runs_on(&self, rank: Rank) -> bool {
        self.absent_on.is_empty() || self.absent_on.binary_search(&rank).is_err()
    }
}

/// Whether `directions` sorted are `here` (sorted): the same names as often. Few directions
/// are compared pairwise without a copy (the merge's score asks this for every operation of
/// every class), many sorted.
pub(super) fn same_directions(directions: &[String], here: &[&str]) -> bool {
    if directions.len() != here.len() {
        return false;
    }
    if directions.len() > 16 {
        let mut d: Vec<&str> = directions.iter().map(String::as_str).collect();
        d.sort_unstable();
        return d == here;
    }
    // Equal lengths, and every name of `here` as often in both: the same multiset.
    here.iter()
        .all(|h| directions.iter().filter(|d| d.as_str() == *h).count() == here.iter().filter(|x| *x == h).count())
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
    /// On a communicator of fewer ranks than the run: the root's rank in that communicator, the
    /// root argument the program passes. Records compare it instead of `root` (GROMACS gathers
    /// on each pair of ranks to the pair's first rank: one record, not one per pair); each
    /// rank's world root is then `root` or its entry in `root_by_rank`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_in_comm: Option<u32>,
    /// Ranks whose world root differs from `root` (merged records whose ranks sit on different
    /// communicators), by root; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub root_by_rank: Vec<RankRoot>,
    /// Size of its communicator.
    pub comm_size: u32,
    /// Bytes this rank contributes.
    pub bytes_sent: u64,
    /// Bytes this rank receives.
    pub bytes_recv: u64,
}

/// The world root of a collective on some ranks (see [`Collective::root_by_rank`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RankRoot {
    /// World rank of the root on these ranks.
    pub root: Rank,
    /// World ranks, increasing.
    pub ranks: Vec<Rank>,
}

/// [`Collective`] as JSON: its fields and the size a reader expects.
#[derive(Serialize)]
pub(super) struct CollectiveJson {
    op: CollectiveOp,
    root: Option<Rank>,
    #[serde(skip_serializing_if = "Option::is_none")]
    root_in_comm: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    root_by_rank: Vec<RankRoot>,
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
            root_in_comm: c.root_in_comm,
            root_by_rank: c.root_by_rank,
            comm_size: c.comm_size,
            bytes_sent: c.bytes_sent,
            bytes_recv: c.bytes_recv,
        }
    }
}

impl Collective {
    /// The root as records compare it: its rank in the communicator where the record has one
    /// ([`Collective::root_in_comm`]), else its world rank (the flag says which).
    pub fn root_key(&self) -> (Option<u32>, bool) {
        match self.root_in_comm {
            Some(k) => (Some(k), true),
            None => (self.root, false),
        }
    }

    /// The world root on rank `rank` ([`Collective::root_by_rank`], else `root`).
    pub fn root_on(&self, rank: Rank) -> Option<Rank> {
        self.root_by_rank
            .iter()
            .find(|e| e.ranks.binary_search(&rank).is_ok())
            .map_or(self.root, |e| Some(e.root))
    }

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
    /// For a run of `MPI_Waitsome` / `MPI_Testsome` / `MPI_Waitany` / `MPI_Testany` /
    /// `MPI_Test` calls kept as one record (`completion_sets`): how many calls of the run
    /// completed a request (timing, not program: a per-visit value like a size, see
    /// [`LogicalCall::sizes`]). `None` for every other record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<u64>,
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

    /// The values this call carries per visit, in a fixed order: each operation's bytes, then the
    /// collective's sent and received bytes, then a completion run's number of calls
    /// ([`LogicalCall::calls`]). Loop compression keeps each as a sequence over the visits.
    pub fn sizes(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.ops.iter().map(|o| o.bytes).collect();
        if let Some(c) = &self.collective {
            v.push(c.bytes_sent);
            v.push(c.bytes_recv);
        }
        v.extend(self.calls);
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
            .with_absent(&vec![Vec::new(); self.ops.len()])
    }

    /// Per operation, the ranks that skip it ([`Operation::absent_on`]).
    pub fn absent_tables(&self) -> Vec<Vec<Rank>> {
        self.ops.iter().map(|o| o.absent_on.clone()).collect()
    }

    /// The same call with each operation's [`Operation::absent_on`] replaced by `absent` (one
    /// per operation).
    pub fn with_absent(&self, absent: &[Vec<Rank>]) -> LogicalCall {
        let mut c = self.clone();
        for (o, a) in c.ops.iter_mut().zip(absent) {
            o.absent_on = a.clone();
        }
        c
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
        if let Some(k) = &mut c.calls {
            *k = it.next().unwrap_or(0);
        }
        c
    }

    /// Table 5 style text: `MPI_Isend(east, 480 B, tag 3)`, `MPI_Waitall(-1 -2)`,
    /// `MPI_Waitsome(-1 -2 -3 -4; calls 3)`.
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
                    .chain((!o.absent_on.is_empty()).then(|| format!(" (not on {})", ranks_text(&o.absent_on))))
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
            match (c.root_in_comm, c.root) {
                (Some(k), _) => s.push_str(&format!(", root {k} of {}", c.comm_size)),
                (None, Some(r)) => s.push_str(&format!(", root {r}")),
                (None, None) => {}
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
        if let Some(k) = self.calls {
            args.push(format!("calls {k}"));
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

pub(super) fn tag_text(tag: i32) -> String {
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
