//! The one trace model every tracelogic reader fills and every analysis reads.
//!
//! A [`Trace`] is a set of [`RankTrace`]s (one per `MPI_COMM_WORLD` rank), each an ordered
//! stream of MPI [calls](Calls) stored column by column, plus the point-to-point operations
//! ([`P2p`]) and collective operations ([`Collectives`]) those calls carry. Names (MPI
//! functions, regions, call paths, metrics) are interned once per trace. Peers are always
//! world ranks: readers translate communicator-relative ranks through [`Communicator`]
//! membership before they store them, so analyses never see a communicator-local rank and
//! never learn which format a trace came from.
//!
//! The layout is columnar because real traces reach hundreds of millions of calls: a call
//! costs about 10 bytes (12 with threads), a point-to-point operation about 9 (13 on other
//! communicators than `MPI_COMM_WORLD`) ([`heap`]); durations are [`Narrow`] columns, 4 bytes
//! a row while they fit in 32 bits, entry times [`Stamps`] (about 4 bytes), completing calls
//! [`Completions`] (1 byte, the distance from the posting call), functions, call paths,
//! partners, tags and message sizes codes into the rank's distinct values ([`Dict`],
//! [`Sizes`]: about 1 byte each).

pub mod build;
pub mod cartesian;
pub mod column;
pub mod completions;
pub mod dict;
pub mod heap;
mod kinds;
pub mod matching;
pub mod narrow;
pub mod query;
pub mod renumber;
pub mod restrict;
pub mod sizes;
pub mod stamps;

pub use cartesian::CartTopology;
pub use column::Sparse;
pub use completions::Completions;
pub use dict::Dict;
pub use heap::{Bytes, HeapBytes};
pub use kinds::{is_one_sided, mpi_base_name, CallKind, CollectiveOp};
pub use matching::{match_messages, match_messages_earliest, Matching, Message, Sourced};
pub use narrow::Narrow;
pub use query::Selection;
pub use renumber::RenumberError;
pub use sizes::Sizes;
pub use stamps::Stamps;

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A rank in `MPI_COMM_WORLD` (0-based).
pub type Rank = u32;
/// A point in time, in nanoseconds since the trace's time origin.
pub type Time = u64;
/// Index into [`Trace::functions`].
pub type FuncId = u32;
/// Index into [`Trace::regions`].
pub type RegionId = u32;
/// Index into [`Trace::callpaths`]; [`NO_CALLPATH`] when the format records none.
pub type CallpathId = u32;
/// Index into [`Trace::comms`].
pub type CommId = u32;
/// Index of a call inside one [`RankTrace`]'s [`Calls`].
pub type CallIdx = u32;

/// Peer value of a receive whose source was `MPI_ANY_SOURCE` and could not be resolved.
pub const ANY_SOURCE: Rank = u32::MAX;
/// Tag value of a receive posted with `MPI_ANY_TAG` and not resolved from a status.
pub const ANY_TAG: i32 = -1;
/// Root value of a root-less collective.
pub const NO_ROOT: Rank = u32::MAX;
/// Call-path value when the format records no enclosing region.
pub const NO_CALLPATH: CallpathId = u32::MAX;
/// Request-completion value of a non-blocking operation that never completed in the trace.
pub const NOT_COMPLETED: CallIdx = u32::MAX;
/// The communicator id of `MPI_COMM_WORLD` in every trace (readers create it first).
pub const COMM_WORLD: CommId = 0;

/// An interning table: each distinct string is stored once and named by its index.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Interner {
    names: Vec<String>,
    #[serde(skip)]
    index: HashMap<String, u32>,
}

impl Interner {
    /// Index of `name`, adding it if new.
    pub fn intern(&mut self, name: &str) -> u32 {
        if self.index.len() != self.names.len() {
            self.rebuild_index();
        }
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.to_owned());
        self.index.insert(name.to_owned(), i);
        i
    }
    /// Index of `name` if it was interned.
    pub fn get(&self, name: &str) -> Option<u32> {
        if self.index.len() == self.names.len() {
            self.index.get(name).copied()
        } else {
            self.names.iter().position(|n| n == name).map(|i| i as u32)
        }
    }
    /// The name behind an index.
    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
    /// Number of distinct names.
    pub fn len(&self) -> usize {
        self.names.len()
    }
    /// True when nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
    /// All names in index order.
    pub fn names(&self) -> &[String] {
        &self.names
    }
    pub(crate) fn names_vec(&self) -> &Vec<String> {
        &self.names
    }
    fn rebuild_index(&mut self) {
        self.index = self
            .names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i as u32))
            .collect();
    }
}

/// A communicator: its members as world ranks, in communicator-rank order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Communicator {
    /// A readable name (`MPI_COMM_WORLD`, `comm 3`, or the name the trace gives).
    pub name: String,
    /// `members[i]` is the world rank of communicator rank `i`.
    pub members: Vec<Rank>,
}

impl Communicator {
    /// World rank of communicator rank `local`, if it is a member.
    pub fn world_rank(&self, local: u32) -> Option<Rank> {
        self.members.get(local as usize).copied()
    }
    /// Communicator rank of world rank `world`, if it is a member.
    pub fn local_rank(&self, world: Rank) -> Option<u32> {
        self.members.iter().position(|&m| m == world).map(|i| i as u32)
    }
}

/// A thread of execution inside a rank (an OTF2 location, a Paraver thread, a DUMPI thread id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// The id the format uses (OTF2 location id, thread number...).
    pub id: u64,
    /// Readable name, e.g. `Master thread` or `THREAD 1.1.1`.
    pub name: String,
}

/// The calls of one rank, column by column; row `i` of every column is call `i`, in program order.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Calls {
    /// MPI function of the call (index into [`Trace::functions`]), e.g. `MPI_Isend`; about 1
    /// byte a call, a code into the rank's functions ([`Dict`]).
    pub func: Dict<FuncId>,
    /// Classification of the function.
    pub kind: Vec<CallKind>,
    /// Entry time, about 4 bytes a call ([`Stamps`]). Read with [`Calls::enter`] and
    /// [`Calls::enters`].
    pub enter: Stamps,
    /// Duration (exit − entry; 0 when the format records only one timestamp), 4 bytes a call
    /// up to 4.29 s ([`Narrow`]). Read the exit time with [`Calls::exit`].
    pub duration: Narrow,
    /// Enclosing user call path (regions entered and not yet left), or [`NO_CALLPATH`]; a code
    /// into the rank's call paths, nothing while every call has the same ([`Dict`]).
    pub callpath: Dict<CallpathId>,
    /// Index into [`RankTrace::locations`] of the thread that made the call; stored only when
    /// some call was made by another thread than the first ([`Sparse`]).
    pub location: Sparse<u16, 0>,
}

impl Calls {
    /// Number of calls.
    pub fn len(&self) -> usize {
        self.func.len()
    }
    /// True when the rank made no call.
    pub fn is_empty(&self) -> bool {
        self.func.is_empty()
    }
    /// Entry time of call `i` (panics past the end).
    #[inline]
    pub fn enter(&self, i: usize) -> Time {
        self.enter.at(i)
    }
    /// Entry time of call `i`, if there is one.
    #[inline]
    pub fn get_enter(&self, i: usize) -> Option<Time> {
        self.enter.get(i)
    }
    /// Entry times in call order.
    #[inline]
    pub fn enters(&self) -> stamps::Iter<'_> {
        self.enter.iter()
    }
    /// Exit time of call `i` (entry plus duration; panics past the end).
    #[inline]
    pub fn exit(&self, i: usize) -> Time {
        self.enter.at(i) + self.duration.at(i)
    }
    /// Exit time of call `i`, if there is one.
    #[inline]
    pub fn get_exit(&self, i: usize) -> Option<Time> {
        Some(self.enter.get(i)? + self.duration.get(i)?)
    }
    /// Exit time of the last call.
    pub fn last_exit(&self) -> Option<Time> {
        self.len().checked_sub(1).and_then(|i| self.get_exit(i))
    }
    /// Exit times in call order.
    pub fn exits(&self) -> impl DoubleEndedIterator<Item = Time> + ExactSizeIterator + Clone + '_ {
        self.enter.iter().zip(self.duration.iter()).map(|(a, d)| a + d)
    }
    /// Set the exit time of call `i` (clamped to its entry).
    pub fn set_exit(&mut self, i: usize, exit: Time) {
        self.duration.set(i, exit.saturating_sub(self.enter.at(i)));
    }
    /// Set the entry time of call `i`, keeping its exit time (the duration clamped at 0).
    pub fn set_enter_keep_exit(&mut self, i: usize, enter: Time) {
        let exit = self.exit(i);
        self.enter.set(i, enter);
        self.duration.set(i, exit.saturating_sub(enter));
    }
}

/// Direction of a point-to-point operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum P2pDir {
    /// This rank sends to `peer`.
    Send,
    /// This rank receives from `peer`.
    Recv,
}

/// Point-to-point operations of one rank (one per send or receive; `MPI_Sendrecv` gives two),
/// ordered by the call that posted them.
#[derive(Debug, Clone, Default)]
pub struct P2p {
    /// Call that posted the operation (`MPI_Send`, `MPI_Isend`, `MPI_Recv`, `MPI_Irecv`...).
    pub post: Vec<CallIdx>,
    /// Call that completed it: the post itself for blocking calls, the `MPI_Wait*`/`MPI_Test*`
    /// for non-blocking ones, [`NOT_COMPLETED`] if no completion was recorded. Stored as the
    /// distance from `post`, about 1 byte ([`Completions`]): read with [`P2p::complete`] /
    /// [`P2p::completes`], write with [`P2p::set_complete`]; change `post` only through
    /// [`P2p::renumber_calls`].
    pub complete: Completions,
    /// Send or receive.
    pub dir: Vec<P2pDir>,
    /// World rank of the partner ([`ANY_SOURCE`] for an unresolved wildcard receive); about 1
    /// byte an operation, a code into the rank's partners ([`Dict`]).
    pub peer: Dict<Rank>,
    /// Message tag ([`ANY_TAG`] for an unresolved wildcard); a code into the rank's tags, nothing
    /// while the rank uses one ([`Dict`]).
    pub tag: Dict<i32>,
    /// Communicator (index into [`Trace::comms`]); stored only when some operation is on
    /// another communicator than `MPI_COMM_WORLD` ([`Sparse`]).
    pub comm: Sparse<CommId, COMM_WORLD>,
    /// Message size in bytes (count × datatype size). For receives, the size actually received
    /// where the format records it, else the posted buffer size. About 1 byte an operation, a
    /// code into the rank's sizes ([`Sizes`]).
    pub bytes: Sizes,
}

impl P2p {
    /// Number of operations.
    pub fn len(&self) -> usize {
        self.post.len()
    }
    /// True when the rank has no point-to-point operation.
    pub fn is_empty(&self) -> bool {
        self.post.is_empty()
    }
    /// The call that completed operation `i` ([`NOT_COMPLETED`] if none; panics past the end).
    #[inline]
    pub fn complete(&self, i: usize) -> CallIdx {
        self.complete.at(i, self.post[i])
    }
    /// The call that completed operation `i`, if there is such an operation.
    #[inline]
    pub fn get_complete(&self, i: usize) -> Option<CallIdx> {
        (i < self.complete.len()).then(|| self.complete(i))
    }
    /// The completing calls in operation order.
    pub fn completes(&self) -> impl DoubleEndedIterator<Item = CallIdx> + ExactSizeIterator + Clone + '_ {
        (0..self.complete.len()).map(|i| self.complete(i))
    }
    /// Set the call that completed operation `i`.
    #[inline]
    pub fn set_complete(&mut self, i: usize, done: CallIdx) {
        self.complete.set(i, self.post[i], done);
    }
    /// Replace every posting and completing call `c` by `to(c)` ([`NOT_COMPLETED`] stays).
    pub fn renumber_calls(&mut self, mut to: impl FnMut(CallIdx) -> CallIdx) {
        let done: Vec<CallIdx> = self
            .completes()
            .map(|c| if c == NOT_COMPLETED { c } else { to(c) })
            .collect();
        self.post.iter_mut().for_each(|c| *c = to(*c));
        self.set_completes(done);
    }
    /// Replace the completing calls by `done`, one per operation in order.
    pub fn set_completes(&mut self, done: impl IntoIterator<Item = CallIdx>) {
        let mut col = Completions::default();
        col.reserve(self.post.len());
        for (&post, d) in self.post.iter().zip(done) {
            col.push(post, d);
        }
        assert_eq!(col.len(), self.post.len(), "one completion per operation");
        self.complete = col;
    }
}

/// [`P2p`] as it is serialised: every column as a plain sequence (`P` and `C` the posting
/// and completing calls, owned when read, borrowed when written).
#[derive(Serialize, Deserialize)]
#[serde(rename = "P2p")]
struct P2pRows<P, C, D, R, T, K, B> {
    post: P,
    complete: C,
    dir: D,
    peer: R,
    tag: T,
    comm: K,
    bytes: B,
}

/// The completing calls of a [`P2p`] serialised as a `Vec<CallIdx>` is.
struct CompletesOf<'a>(&'a P2p);

impl Serialize for CompletesOf<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.completes())
    }
}

impl Serialize for P2p {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        P2pRows {
            post: &self.post,
            complete: CompletesOf(self),
            dir: &self.dir,
            peer: &self.peer,
            tag: &self.tag,
            comm: &self.comm,
            bytes: &self.bytes,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for P2p {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        type Owned =
            P2pRows<Vec<CallIdx>, Vec<CallIdx>, Vec<P2pDir>, Dict<Rank>, Dict<i32>, Sparse<CommId, COMM_WORLD>, Sizes>;
        let r = Owned::deserialize(d)?;
        if r.complete.len() != r.post.len() {
            return Err(serde::de::Error::custom(format!(
                "point-to-point table with {} posting calls and {} completions",
                r.post.len(),
                r.complete.len()
            )));
        }
        let mut p = P2p {
            post: r.post,
            complete: Completions::default(),
            dir: r.dir,
            peer: r.peer,
            tag: r.tag,
            comm: r.comm,
            bytes: r.bytes,
        };
        p.set_completes(r.complete);
        Ok(p)
    }
}

/// Collective operations of one rank, ordered by their call.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Collectives {
    /// The call (for non-blocking collectives, the initiating call).
    pub call: Vec<CallIdx>,
    /// Which collective.
    pub op: Vec<CollectiveOp>,
    /// Communicator; stored only when some operation is on another communicator than
    /// `MPI_COMM_WORLD` ([`Sparse`]).
    pub comm: Sparse<CommId, COMM_WORLD>,
    /// World rank of the root, or [`NO_ROOT`].
    pub root: Vec<Rank>,
    /// Bytes this rank contributes (send buffer).
    pub bytes_sent: Vec<u64>,
    /// Bytes this rank receives (receive buffer).
    pub bytes_recv: Vec<u64>,
}

impl Collectives {
    /// Number of collective operations.
    pub fn len(&self) -> usize {
        self.call.len()
    }
    /// True when the rank took part in no collective.
    pub fn is_empty(&self) -> bool {
        self.call.is_empty()
    }
}

/// Samples of one hardware counter or metric on one rank (OTF2 Metric events, DUMPI PAPI).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MetricSamples {
    /// Index into [`Trace::metrics`].
    pub metric: u32,
    /// Sample times.
    pub time: Vec<Time>,
    /// Sample values as recorded (accumulated counters stay accumulated).
    pub value: Vec<f64>,
}

/// Everything one rank did.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RankTrace {
    /// World rank.
    pub rank: Rank,
    /// Threads / locations of the rank; `Calls::location` indexes this.
    pub locations: Vec<Location>,
    /// MPI calls in program order.
    pub calls: Calls,
    /// Point-to-point operations.
    pub p2p: P2p,
    /// Collective operations.
    pub collectives: Collectives,
    /// Counter samples, one series per metric.
    pub metrics: Vec<MetricSamples>,
    /// First and last timestamp seen on this rank (any event, not only MPI calls); `None`
    /// when the rank recorded nothing.
    pub span: Option<(Time, Time)>,
}

/// A whole run: all ranks, communicators and interned names.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Trace {
    /// Short name of the format it was read from (`otf2`, `dumpi`, `paraver`, `csv`, `text`,
    /// `generated`). For display only: analyses must not depend on it.
    pub format: String,
    /// Where it came from (file or folder name), for messages.
    pub source: String,
    /// One entry per world rank; `ranks[r].rank == r`.
    pub ranks: Vec<RankTrace>,
    /// Communicators; index [`COMM_WORLD`] is `MPI_COMM_WORLD`.
    pub comms: Vec<Communicator>,
    /// MPI function names (MPI standard spelling, e.g. `MPI_Waitall`).
    pub functions: Interner,
    /// User region names (functions, loops) from Enter/Leave or event records.
    pub regions: Interner,
    /// Call paths: each a list of regions from outermost to innermost.
    pub callpaths: Vec<Vec<RegionId>>,
    /// Metric names (e.g. `PAPI_TOT_INS`).
    pub metrics: Interner,
    /// Free-form facts from the file headers (host, tracer version, clock resolution...).
    pub meta: Vec<(String, String)>,
    /// Things the reader noticed but could work around (shown to the user).
    pub warnings: Vec<String>,
    /// Cartesian process topologies the program declared (`MPI_Cart_create`), in the order read.
    #[serde(default)]
    pub cartesian: Vec<CartTopology>,
    /// [`CallKind`] of each interned function, filled lazily by [`Trace::push_call`] so that a
    /// function name is classified once, not once per call.
    #[serde(skip)]
    kind_cache: Vec<CallKind>,
    /// Call path → id, so interning is O(path length) however many paths a trace has.
    #[serde(skip)]
    callpath_index: HashMap<Vec<RegionId>, CallpathId>,
    /// (name, members) → communicator id, for the same reason.
    #[serde(skip)]
    comm_index: HashMap<(String, Vec<Rank>), CommId>,
}

impl Trace {
    /// An empty trace of `n` ranks with `MPI_COMM_WORLD` defined.
    pub fn new(format: &str, source: &str, n: u32) -> Trace {
        Trace {
            format: format.to_owned(),
            source: source.to_owned(),
            ranks: (0..n)
                .map(|r| RankTrace {
                    rank: r,
                    ..Default::default()
                })
                .collect(),
            comms: vec![Communicator {
                name: "MPI_COMM_WORLD".into(),
                members: (0..n).collect(),
            }],
            ..Default::default()
        }
    }

    /// Number of world ranks.
    pub fn num_ranks(&self) -> u32 {
        self.ranks.len() as u32
    }

    /// Total number of MPI call records.
    pub fn num_calls(&self) -> u64 {
        self.ranks.iter().map(|r| r.calls.len() as u64).sum()
    }

    /// Earliest and latest timestamp over all ranks (0, 0 for an empty trace).
    pub fn span(&self) -> (Time, Time) {
        self.ranks
            .iter()
            .filter_map(|r| r.span)
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
            .unwrap_or((0, 0))
    }

    /// Name of the MPI function of call `i` on rank `r`.
    pub fn call_name(&self, r: Rank, i: CallIdx) -> &str {
        self.functions.name(self.ranks[r as usize].calls.func[i as usize])
    }

    /// The [`CallKind`] of interned function `f` (classified once per function).
    pub fn function_kind(&mut self, f: FuncId) -> CallKind {
        while self.kind_cache.len() <= f as usize {
            let name = self.functions.name(self.kind_cache.len() as u32);
            self.kind_cache.push(CallKind::classify(name));
        }
        self.kind_cache[f as usize]
    }

    /// Intern a call path given as region ids (outermost first).
    pub fn intern_callpath(&mut self, path: &[RegionId]) -> CallpathId {
        if self.callpath_index.len() != self.callpaths.len() {
            self.callpath_index = self
                .callpaths
                .iter()
                .enumerate()
                .map(|(i, p)| (p.clone(), i as CallpathId))
                .collect();
        }
        if let Some(&i) = self.callpath_index.get(path) {
            return i;
        }
        let id = self.callpaths.len() as CallpathId;
        self.callpaths.push(path.to_vec());
        self.callpath_index.insert(path.to_vec(), id);
        id
    }

    /// Append a call to rank `r` and return its index; the function name is interned and
    /// classified. Extends the rank's span.
    pub fn push_call(
        &mut self,
        r: Rank,
        func: &str,
        enter: Time,
        exit: Time,
        callpath: CallpathId,
        location: u16,
    ) -> CallIdx {
        let f = self.functions.intern(func);
        let kind = self.function_kind(f);
        self.ranks[r as usize].push_call(f, kind, enter, exit, callpath, location)
    }

    /// Append a point-to-point operation to rank `r` ([`RankTrace::push_p2p`]).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn push_p2p(
        &mut self,
        r: Rank,
        post: CallIdx,
        complete: CallIdx,
        dir: P2pDir,
        peer: Rank,
        tag: i32,
        comm: CommId,
        bytes: u64,
    ) {
        self.ranks[r as usize].push_p2p(post, complete, dir, peer, tag, comm, bytes);
    }

    /// Append a collective operation to rank `r` ([`RankTrace::push_collective`]).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn push_collective(
        &mut self,
        r: Rank,
        call: CallIdx,
        op: CollectiveOp,
        comm: CommId,
        root: Rank,
        bytes_sent: u64,
        bytes_recv: u64,
    ) {
        self.ranks[r as usize].push_collective(call, op, comm, root, bytes_sent, bytes_recv);
    }

    /// Add a communicator (or return the existing one with the same members and name).
    pub fn add_comm(&mut self, name: &str, members: Vec<Rank>) -> CommId {
        build::comms::intern(&mut self.comms, &mut self.comm_index, 0, (name.to_owned(), members))
    }

    /// Sort every rank's point-to-point and collective operations by posting call
    /// ([`RankTrace::normalise_order`]). Readers call this once at the end when they could not
    /// append in order.
    pub fn normalise_order(&mut self) {
        for rt in &mut self.ranks {
            rt.normalise_order();
        }
    }
}

impl RankTrace {
    /// Sort the rank's point-to-point and collective operations by posting call, keeping the
    /// relative order of operations posted by the same call (a check, O(operations), when they
    /// already are). A reader that builds ranks on several threads calls it on each.
    pub fn normalise_order(&mut self) {
        let p = &mut self.p2p;
        if p.post.windows(2).any(|w| w[0] > w[1]) {
            let mut perm: Vec<usize> = (0..p.post.len()).collect();
            perm.sort_by_key(|&i| p.post[i]);
            let done: Vec<CallIdx> = perm.iter().map(|&i| p.complete(i)).collect();
            p.post = perm.iter().map(|&i| p.post[i]).collect();
            p.set_completes(done);
            p.dir = perm.iter().map(|&i| p.dir[i]).collect();
            p.peer = perm.iter().map(|&i| p.peer[i]).collect();
            p.tag = perm.iter().map(|&i| p.tag[i]).collect();
            p.comm = perm.iter().map(|&i| p.comm[i]).collect();
            p.bytes = perm.iter().map(|&i| p.bytes.at(i)).collect();
        }
        let c = &mut self.collectives;
        if c.call.windows(2).any(|w| w[0] > w[1]) {
            let mut perm: Vec<usize> = (0..c.call.len()).collect();
            perm.sort_by_key(|&i| c.call[i]);
            c.call = perm.iter().map(|&i| c.call[i]).collect();
            c.op = perm.iter().map(|&i| c.op[i]).collect();
            c.comm = perm.iter().map(|&i| c.comm[i]).collect();
            c.root = perm.iter().map(|&i| c.root[i]).collect();
            c.bytes_sent = perm.iter().map(|&i| c.bytes_sent[i]).collect();
            c.bytes_recv = perm.iter().map(|&i| c.bytes_recv[i]).collect();
        }
    }

    /// Widen the rank's span to cover `[a, b]`.
    #[inline]
    pub fn extend_span(&mut self, a: Time, b: Time) {
        self.span = Some(match self.span {
            None => (a.min(b), a.max(b)),
            Some((lo, hi)) => (lo.min(a), hi.max(b)),
        });
    }

    /// Reserve room for `calls` more calls, `p2p` more point-to-point and `collectives` more
    /// collective operations, so that a reader that knows (or estimates) the counts up front
    /// allocates each column once instead of growing it by doubling and copying.
    pub fn reserve(&mut self, calls: usize, p2p: usize, collectives: usize) {
        let c = &mut self.calls;
        c.func.reserve(calls);
        c.kind.reserve(calls);
        c.enter.reserve(calls);
        c.duration.reserve(calls);
        c.callpath.reserve(calls);
        c.location.reserve(calls);
        let p = &mut self.p2p;
        p.post.reserve(p2p);
        p.complete.reserve(p2p);
        p.dir.reserve(p2p);
        p.peer.reserve(p2p);
        p.tag.reserve(p2p);
        p.comm.reserve(p2p);
        p.bytes.reserve(p2p);
        let k = &mut self.collectives;
        k.call.reserve(collectives);
        k.op.reserve(collectives);
        k.comm.reserve(collectives);
        k.root.reserve(collectives);
        k.bytes_sent.reserve(collectives);
        k.bytes_recv.reserve(collectives);
    }

    /// Append a call whose function is already interned and classified, and return its index
    /// (what [`Trace::push_call`] does after interning the name: readers that resolve each
    /// function once call this on their hot path). The exit is clamped to the entry; the span
    /// grows to cover the call.
    #[inline]
    pub fn push_call(
        &mut self,
        func: FuncId,
        kind: CallKind,
        enter: Time,
        exit: Time,
        callpath: CallpathId,
        location: u16,
    ) -> CallIdx {
        let exit = exit.max(enter);
        let c = &mut self.calls;
        let idx = c.func.len() as CallIdx;
        c.func.push(func);
        c.kind.push(kind);
        c.enter.push(enter);
        c.duration.push(exit - enter);
        c.callpath.push(callpath);
        c.location.push(location);
        self.extend_span(enter, exit);
        idx
    }

    /// Append a point-to-point operation: posted by call `post`, completed by call `complete`
    /// (readers that build one rank on its own, e.g. on a reading thread, call this).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn push_p2p(
        &mut self,
        post: CallIdx,
        complete: CallIdx,
        dir: P2pDir,
        peer: Rank,
        tag: i32,
        comm: CommId,
        bytes: u64,
    ) {
        let p = &mut self.p2p;
        p.post.push(post);
        p.complete.push(post, complete);
        p.dir.push(dir);
        p.peer.push(peer);
        p.tag.push(tag);
        p.comm.push(comm);
        p.bytes.push(bytes);
    }

    /// Append a collective operation made by call `call`.
    #[inline]
    pub fn push_collective(
        &mut self,
        call: CallIdx,
        op: CollectiveOp,
        comm: CommId,
        root: Rank,
        bytes_sent: u64,
        bytes_recv: u64,
    ) {
        let c = &mut self.collectives;
        c.call.push(call);
        c.op.push(op);
        c.comm.push(comm);
        c.root.push(root);
        c.bytes_sent.push(bytes_sent);
        c.bytes_recv.push(bytes_recv);
    }
}
