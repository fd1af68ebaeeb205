//! The model layer: DUMPI records of all ranks → one [`Trace`].
//!
//! DUMPI stores communicator, group and request handles local to each rank's file, and peers
//! relative to the communicator of the call. Communicator membership can depend on every rank
//! (`MPI_Comm_split` orders members by the colour and key all ranks passed), so the reader works
//! in steps: each rank's file is read on its own ([`read_rank`], on any thread) into a part that
//! names every communicator by how it was derived (parent, how many creation calls on that parent
//! came before, split colour), which all member ranks agree on without knowing the members; the
//! parts are merged in rank order ([`Builder::merge`]); once all are merged the builder computes
//! the memberships in creation order and translates peers and roots to world ranks.

use super::raw::{BinFile, Header, Hot, HotHead, Interval, P2pArgs, Record, Status, Value};
use super::spec::{CALLS, END_OF_STREAM, FUNCTION_ENTER, FUNCTION_EXIT};
use crate::parallel::map_files;
use crate::{FormatError, NoProgress};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use tracelogic_model::build::RequestTable;
use tracelogic_model::{
    CallIdx, CallKind, CallpathId, CartTopology, CollectiveOp, CommId, Communicator, FuncId, Interner, Location,
    MetricSamples, P2pDir, Rank, RankTrace, RegionId, Trace, ANY_SOURCE, ANY_TAG, NOT_COMPLETED, NO_CALLPATH, NO_ROOT,
};

/// Maps looked up on every record (requests, handles, threads): foldhash instead of SipHash,
/// seeded per map so a hostile file still cannot choose colliding keys.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// DUMPI communicator handles with a fixed meaning.
const COMM_NULL: u16 = 1;
const COMM_WORLD: u16 = 2;
const COMM_SELF: u16 = 3;
/// DUMPI group handles with a fixed meaning.
const GROUP_EMPTY: u16 = 2;
/// DUMPI's `MPI_ANY_SOURCE` / `MPI_ANY_TAG`.
const DUMPI_ANY: i32 = -1;
/// Deepest user call path kept (deeper function entries are counted but not recorded).
const MAX_CALLPATH_DEPTH: usize = 64;
/// Most distinct call paths kept in a rank's part and in the trace (later new paths are recorded
/// as none).
const MAX_CALLPATHS: usize = 1 << 16;
/// Largest group expression kept (nodes); bigger ones count as unknown.
const MAX_GROUP_NODES: usize = 4096;
/// Progress is reported at least this often (bytes of records).
const PROGRESS_STEP: usize = 4 << 20;

/// Byte sizes of the built-in datatypes on an LP64 machine, used when a file's size table lacks
/// an entry or gives 0 for a type that has a size (libdumpi writes 0 for `MPI_LONG_LONG_INT`).
const BUILTIN_SIZES: [u64; 28] = [
    0, 0, 1, 1, 1, 1, 4, 2, 2, 4, 4, 8, 8, 4, 8, 16, 8, 8, 8, 1, 0, 0, 8, 12, 16, 6, 8, 32,
];

/// How a communicator was derived; identical on every member rank.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
enum Derivation {
    World,
    SelfOf(Rank),
    /// The `seq`-th creation call on `parent` (counted per rank, collective so equal on all).
    Derived {
        parent: u32,
        seq: u32,
        how: How,
    },
    /// A handle the trace uses without a recorded creation call.
    Unknown {
        rank: Rank,
        handle: u16,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "distributed",
    derive(serde::Serialize, serde::Deserialize),
    serde(from = "HowWire", into = "HowWire")
)]
enum How {
    Dup,
    Split(i32),
    Create,
    Cart,
    Graph,
    /// `MPI_Cart_sub` as seen by this world rank: each rank can compute its own sub-grid from
    /// the parent grid's dimensions, so the derivation is per rank and merged afterwards.
    CartSub(Rank),
    /// A creation whose membership DUMPI does not record (inter-communicators, spawn...).
    Untracked(#[cfg_attr(feature = "distributed", serde(skip))] &'static str),
}

/// [`How`] as a distributed read exchanges it: the name of an untracked creation owned.
#[cfg(feature = "distributed")]
#[derive(serde::Serialize, serde::Deserialize)]
enum HowWire {
    Dup,
    Split(i32),
    Create,
    Cart,
    Graph,
    CartSub(Rank),
    Untracked(String),
}

#[cfg(feature = "distributed")]
impl From<How> for HowWire {
    fn from(h: How) -> HowWire {
        match h {
            How::Dup => HowWire::Dup,
            How::Split(c) => HowWire::Split(c),
            How::Create => HowWire::Create,
            How::Cart => HowWire::Cart,
            How::Graph => HowWire::Graph,
            How::CartSub(r) => HowWire::CartSub(r),
            How::Untracked(n) => HowWire::Untracked(n.to_owned()),
        }
    }
}

#[cfg(feature = "distributed")]
impl From<HowWire> for How {
    fn from(h: HowWire) -> How {
        match h {
            HowWire::Dup => How::Dup,
            HowWire::Split(c) => How::Split(c),
            HowWire::Create => How::Create,
            HowWire::Cart => How::Cart,
            HowWire::Graph => How::Graph,
            HowWire::CartSub(r) => How::CartSub(r),
            // A handful per trace: leaked rather than kept by reference to the function table.
            HowWire::Untracked(n) => How::Untracked(Box::leak(n.into_boxed_str())),
        }
    }
}

/// A group, kept as the expression that built it so it can be evaluated once memberships are known.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
enum GroupExpr {
    Empty,
    OfComm(u32),
    Incl(Box<GroupExpr>, Vec<i32>),
    Excl(Box<GroupExpr>, Vec<i32>),
    RangeIncl(Box<GroupExpr>, Vec<Vec<i32>>),
    RangeExcl(Box<GroupExpr>, Vec<Vec<i32>>),
    Union(Box<GroupExpr>, Box<GroupExpr>),
    Intersection(Box<GroupExpr>, Box<GroupExpr>),
    Difference(Box<GroupExpr>, Box<GroupExpr>),
    Unknown,
}

impl GroupExpr {
    /// Number of nodes, to keep hostile chains of group calls small.
    fn nodes(&self) -> usize {
        match self {
            GroupExpr::Empty | GroupExpr::OfComm(_) | GroupExpr::Unknown => 1,
            GroupExpr::Incl(b, _) | GroupExpr::Excl(b, _) | GroupExpr::RangeIncl(b, _) | GroupExpr::RangeExcl(b, _) => {
                1 + b.nodes()
            }
            GroupExpr::Union(a, b) | GroupExpr::Intersection(a, b) | GroupExpr::Difference(a, b) => {
                1 + a.nodes() + b.nodes()
            }
        }
    }

    /// The same expression with communicator derivation `c` renamed `comms[c]`.
    fn renumbered(&self, comms: &[u32]) -> GroupExpr {
        let sub = |b: &GroupExpr| Box::new(b.renumbered(comms));
        match self {
            GroupExpr::Empty => GroupExpr::Empty,
            GroupExpr::Unknown => GroupExpr::Unknown,
            GroupExpr::OfComm(c) => GroupExpr::OfComm(comms[*c as usize]),
            GroupExpr::Incl(b, v) => GroupExpr::Incl(sub(b), v.clone()),
            GroupExpr::Excl(b, v) => GroupExpr::Excl(sub(b), v.clone()),
            GroupExpr::RangeIncl(b, v) => GroupExpr::RangeIncl(sub(b), v.clone()),
            GroupExpr::RangeExcl(b, v) => GroupExpr::RangeExcl(sub(b), v.clone()),
            GroupExpr::Union(a, b) => GroupExpr::Union(sub(a), sub(b)),
            GroupExpr::Intersection(a, b) => GroupExpr::Intersection(sub(a), sub(b)),
            GroupExpr::Difference(a, b) => GroupExpr::Difference(sub(a), sub(b)),
        }
    }
}

#[derive(Debug, Default)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
struct CommInfo {
    /// Split contributions: (key, world rank).
    split: Vec<(i32, Rank)>,
    /// Group of a `Comm_create`.
    group: Option<GroupExpr>,
    /// Number of members of a `Cart_create` / `Graph_create` (first n of the parent).
    size: Option<usize>,
    /// Grid dimensions of a `Cart_create`.
    cart_dims: Option<Vec<i32>>,
    /// Which dimensions of a `Cart_create` wrap around.
    cart_periods: Option<Vec<i32>>,
    /// Which grid dimensions a `Cart_sub` keeps.
    remain_dims: Option<Vec<i32>>,
    members: Option<Vec<Rank>>,
}

/// Bytes of a collective, resolved once the communicator size and this rank's place are known.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
enum CollBytes {
    Plain {
        sent: u64,
        recv: u64,
        sent_per_member: bool,
        recv_per_member: bool,
    },
    ByRoot {
        root: (u64, u64),
        other: (u64, u64),
    },
    ReduceScatter {
        counts: Vec<i32>,
        size: u64,
    },
}

#[derive(Debug, Clone, Copy)]
struct Template {
    dir: P2pDir,
    peer: i32,
    tag: i32,
    comm: u32,
    bytes: u64,
}

/// What the reader does with a call, decided once per DUMPI call id rather than by comparing
/// names on every record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Send,
    Isend,
    Recv,
    Irecv,
    Sendrecv,
    SendrecvReplace,
    PersistentInit,
    Start,
    Startall,
    Wait,
    Test,
    WaitOrTestAny,
    WaitOrTestAll,
    WaitOrTestSome,
    RequestFree,
    CommDup,
    CommSplit,
    CommCreate,
    CartCreate,
    CartSub,
    GraphCreate,
    Untracked,
    CommFree,
    CommGroup,
    GroupInclExcl,
    GroupRange,
    GroupCombine,
    GroupFree,
    Collective(CollectiveOp),
    Other,
}

impl Op {
    /// `name` as the call table spells it (`Isend`), `mpi_name` as the trace will (`MPI_Isend`).
    fn of(name: &str, mpi_name: &str) -> Op {
        match name {
            "Send" | "Bsend" | "Ssend" | "Rsend" => Op::Send,
            "Isend" | "Ibsend" | "Issend" | "Irsend" => Op::Isend,
            "Recv" => Op::Recv,
            "Irecv" => Op::Irecv,
            "Sendrecv" => Op::Sendrecv,
            "Sendrecv_replace" => Op::SendrecvReplace,
            "Send_init" | "Bsend_init" | "Ssend_init" | "Rsend_init" | "Recv_init" => Op::PersistentInit,
            "Start" => Op::Start,
            "Startall" => Op::Startall,
            "Wait" => Op::Wait,
            "Test" => Op::Test,
            "Waitany" | "Testany" => Op::WaitOrTestAny,
            "Waitall" | "Testall" => Op::WaitOrTestAll,
            "Waitsome" | "Testsome" => Op::WaitOrTestSome,
            "Request_free" => Op::RequestFree,
            "Comm_dup" => Op::CommDup,
            "Comm_split" => Op::CommSplit,
            "Comm_create" => Op::CommCreate,
            "Cart_create" => Op::CartCreate,
            "Cart_sub" => Op::CartSub,
            "Graph_create" => Op::GraphCreate,
            "Intercomm_create"
            | "Intercomm_merge"
            | "Comm_accept"
            | "Comm_connect"
            | "Comm_spawn"
            | "Comm_spawn_multiple" => Op::Untracked,
            "Comm_free" | "Comm_disconnect" => Op::CommFree,
            "Comm_group" => Op::CommGroup,
            "Group_incl" | "Group_excl" => Op::GroupInclExcl,
            "Group_range_incl" | "Group_range_excl" => Op::GroupRange,
            "Group_union" | "Group_intersection" | "Group_difference" => Op::GroupCombine,
            "Group_free" => Op::GroupFree,
            _ => CollectiveOp::from_name(mpi_name).map_or(Op::Other, Op::Collective),
        }
    }
}

impl Op {
    /// The hot layout of a call, `None` for the calls the generic loop decodes.
    fn hot(self, name: &str) -> Option<Hot> {
        Some(match self {
            Op::Send => Hot::P2p {
                with_request: false,
                with_status: false,
            },
            Op::Recv => Hot::P2p {
                with_request: false,
                with_status: true,
            },
            Op::Isend | Op::Irecv | Op::PersistentInit => Hot::P2p {
                with_request: true,
                with_status: false,
            },
            Op::Wait => Hot::Wait { with_flag: false },
            Op::Test => Hot::Wait { with_flag: true },
            Op::WaitOrTestAll => Hot::All {
                with_flag: name == "Testall",
            },
            _ => return None,
        })
    }
}

/// Per-rank reading state.
#[derive(Default)]
struct RankState {
    /// Seconds added for 16-bit wraps of the record clock so far, and the last entry second.
    wrapped: u64,
    last_sec: u64,
    comms: FastMap<u16, u32>,
    groups: HashMap<u16, GroupExpr>,
    seq: HashMap<u32, u32>,
    /// Open requests (libdumpi numbers them upwards and they complete soon after they are
    /// posted, so the table's slots serve nearly every look-up).
    pending: RequestTable<i32>,
    persistent: FastMap<i32, Template>,
    threads: FastMap<u16, u16>,
    /// The last thread seen and its location index (records of one thread come in runs).
    last_thread: Option<(u16, u16)>,
    /// The last communicator handle looked up and its derivation (cleared when handles change).
    last_comm: Option<(u16, u32)>,
    /// What [`Builder::finish`] resolves once every rank is read.
    unresolved: Unresolved,
    regions: Vec<u32>,
    /// Function entries beyond [`MAX_CALLPATH_DEPTH`] not yet exited.
    regions_overflow: u32,
    callpath: CallpathId,
    metric_index: HashMap<u32, usize>,
}

/// The parts of a rank's operations that depend on other ranks (communicator memberships).
#[derive(Debug, Default)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
struct Unresolved {
    /// Operations posted with `MPI_ANY_SOURCE`, ascending. Until [`Builder::finish`] the
    /// peer column holds communicator-relative peers (`MPI_ANY_SOURCE` as `u32::MAX`).
    wildcards: Vec<usize>,
    /// Communicator-relative root and bytes of each collective.
    coll_fix: Vec<(i32, CollBytes)>,
    /// What the call and metric time columns hold until [`Builder::finish`]: the wall time in
    /// ns minus this base, wrapping (the base is a guess of the trace's origin made before the
    /// files are read; when it is right no time is rewritten).
    time_base: u64,
    /// Every point-to-point operation is on `MPI_COMM_WORLD` (derivation 0) with a world rank
    /// or the wildcard as its peer, so none needs translating when the world's members are the
    /// identity.
    all_world: bool,
}

/// Communicators by derivation, each with what its creation calls recorded, in first-use order.
#[derive(Debug, Default)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
struct Derivations {
    list: Vec<Derivation>,
    ids: HashMap<Derivation, u32>,
    infos: Vec<CommInfo>,
}

impl Derivations {
    fn intern(&mut self, d: Derivation) -> u32 {
        if let Some(&i) = self.ids.get(&d) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(d.clone());
        self.ids.insert(d, i);
        self.infos.push(CommInfo::default());
        i
    }
}

/// One rank's file read on its own, with names, call paths and communicator derivations
/// numbered in this rank's own first-use order. [`Builder::merge`] renumbers them into the
/// trace's tables; merging the parts in rank order numbers everything as one reader going
/// through the files in rank order would, so the trace does not depend on how many threads
/// read the files.
#[derive(Debug)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct RankPart {
    rank: Rank,
    trace: RankTrace,
    unresolved: Unresolved,
    functions: Vec<String>,
    regions: Vec<String>,
    /// Call paths as indices into `regions`.
    callpaths: Vec<Vec<RegionId>>,
    metrics: Vec<String>,
    comms: Derivations,
    warnings: HashMap<String, u64>,
    /// Earliest wall time of the rank's records (`u64::MAX` when it has none).
    min_time: u64,
    /// Communicator member entries this file can justify.
    members_budget: usize,
    /// The file's header (version, mesh coordinates), for the trace's facts.
    pub header: Header,
}

/// What only the owner of a rank needs of its [`RankPart`]: the event columns and the parts of
/// the operations still to resolve. The rest of the part (names, communicator derivations,
/// span, header) is what every process of a distributed read needs ([`crate::distributed`]).
#[cfg(feature = "distributed")]
pub(crate) struct Columns {
    trace: RankTrace,
    wildcards: Vec<usize>,
    coll_fix: Vec<(i32, CollBytes)>,
}

#[cfg(feature = "distributed")]
impl RankPart {
    /// The world rank the part is of.
    pub(crate) fn rank(&self) -> Rank {
        self.rank
    }

    /// Take the columns out, leaving the rank's number, locations and span.
    pub(crate) fn take_columns(&mut self) -> Columns {
        let light = RankTrace {
            rank: self.trace.rank,
            locations: self.trace.locations.clone(),
            span: self.trace.span,
            ..RankTrace::default()
        };
        Columns {
            trace: std::mem::replace(&mut self.trace, light),
            wildcards: std::mem::take(&mut self.unresolved.wildcards),
            coll_fix: std::mem::take(&mut self.unresolved.coll_fix),
        }
    }

    /// Put back what [`RankPart::take_columns`] took.
    pub(crate) fn restore_columns(&mut self, c: Columns) {
        self.trace = c.trace;
        self.unresolved.wildcards = c.wildcards;
        self.unresolved.coll_fix = c.coll_fix;
    }
}

/// Read rank `rank`'s file (one of `world` ranks) into a [`RankPart`], filling `columns` (empty,
/// usually [`reserved_columns`]); `general_only` decodes every record with the generic per-field
/// loop; times are stored minus `time_base` (see [`first_time`]). `advance` is told the bytes
/// read so far now and then and cancels the read by returning false.
#[allow(clippy::too_many_arguments)]
pub(crate) fn read_rank(
    rank: Rank,
    world: Rank,
    file: &BinFile,
    columns: RankTrace,
    time_base: u64,
    general_only: bool,
    advance: &mut dyn FnMut(u64) -> bool,
) -> Result<RankPart, FormatError> {
    let mut reader = RankReader {
        rank,
        rt: RankTrace { rank, ..columns },
        st: RankState {
            callpath: NO_CALLPATH,
            unresolved: Unresolved {
                time_base,
                all_world: true,
                ..Unresolved::default()
            },
            ..RankState::default()
        },
        world,
        functions: Interner::default(),
        regions: Interner::default(),
        callpaths: Vec::new(),
        callpath_ids: HashMap::new(),
        metrics: Interner::default(),
        comms: Derivations::default(),
        warnings: HashMap::new(),
        min_time: u64::MAX,
        call_ops: vec![None; END_OF_STREAM as usize + 1],
        hot: vec![None; END_OF_STREAM as usize + 1],
        span: (u64::MAX, 0),
        function_names: file.functions.iter().cloned().collect(),
        general_only,
    };
    reader.comms.intern(Derivation::World);
    reader.read_records(file, advance)?;
    Ok(RankPart {
        rank,
        trace: reader.rt,
        unresolved: reader.st.unresolved,
        functions: reader.functions.names().to_vec(),
        regions: reader.regions.names().to_vec(),
        callpaths: reader.callpaths,
        metrics: reader.metrics.names().to_vec(),
        comms: reader.comms,
        warnings: reader.warnings,
        min_time: reader.min_time,
        members_budget: file.len().saturating_mul(4).saturating_add(1 << 16),
        header: file.header.clone(),
    })
}

/// The wall time in ns (else CPU time) of the first record of `file`, as the reader computes it,
/// or `None` when the file has no readable first record. The earliest over all rank files is
/// nearly always the trace's origin, so the reader stores times minus it from the start and
/// usually need not rewrite them once the true origin is known.
pub(crate) fn first_time(file: &BinFile) -> Option<u64> {
    let mut rec = Record::empty();
    if !file.records().head_into(&mut rec).ok()? {
        return None;
    }
    let iv = rec.wall.or(rec.cpu)?;
    Some(iv.start.ns())
}

/// The calls, point-to-point and collective operations `file`'s footer counts, or `None` when
/// it has no footer. The counts are only a hint: they are capped by what the record stream's
/// size can hold, and the columns still grow if a file has more records than its footer says.
fn reservation(file: &BinFile) -> Option<(usize, usize, usize)> {
    let counts = file.call_counts()?;
    // No record of a call is shorter than 3 bytes plus its time stamps; 16 bytes per call keeps
    // a hostile footer from reserving more than the file can hold.
    let most = file.stream_len() / 16;
    let (mut calls, mut p2p, mut colls) = (0usize, 0usize, 0usize);
    for spec in CALLS
        .iter()
        .filter(|c| counts.get(c.id as usize).is_some_and(|&n| n > 0))
    {
        let n = counts[spec.id as usize] as usize;
        calls = calls.saturating_add(n);
        match Op::of(spec.name, &mpi_name(spec.name)) {
            Op::Send | Op::Isend | Op::Recv | Op::Irecv | Op::Start => p2p = p2p.saturating_add(n),
            Op::Sendrecv | Op::SendrecvReplace => p2p = p2p.saturating_add(n.saturating_mul(2)),
            Op::Collective(_) => colls = colls.saturating_add(n),
            _ => {}
        }
    }
    Some((calls.min(most), p2p.min(most), colls.min(most)))
}

/// Rank `rank`'s columns with room for what `file`'s footer counts ([`read_rank`] fills them).
/// The reader makes them on the calling thread before the reading threads start: glibc gives
/// each new thread its own heap, grown one `mprotect` at a time per allocation that does not
/// fit, and those calls (about 900 for the 80 MB benchmark set) serialise against the other
/// reading thread's page faults. Reserved here, the columns come from the main heap or their
/// own mappings, made before the threads run.
pub(crate) fn reserved_columns(rank: Rank, file: &BinFile) -> RankTrace {
    let mut rt = RankTrace {
        rank,
        ..RankTrace::default()
    };
    if let Some((calls, p2p, colls)) = reservation(file) {
        rt.reserve(calls, p2p, colls);
    }
    rt
}

/// The name the trace gives a DUMPI call (`MPI_Isend`, `MPIO_File_open`).
fn mpi_name(call: &str) -> String {
    match call.strip_prefix("DUMPIO_") {
        Some(io) => format!("MPIO_{io}"),
        None => format!("MPI_{call}"),
    }
}

/// Reads the records of one rank's file.
struct RankReader {
    rank: Rank,
    /// Number of world ranks.
    world: Rank,
    rt: RankTrace,
    st: RankState,
    functions: Interner,
    regions: Interner,
    callpaths: Vec<Vec<RegionId>>,
    callpath_ids: HashMap<Vec<RegionId>, CallpathId>,
    metrics: Interner,
    comms: Derivations,
    warnings: HashMap<String, u64>,
    min_time: u64,
    /// What to do with each DUMPI call id, its interned MPI name and its kind, found on first use.
    call_ops: Vec<Option<(Op, FuncId, CallKind)>>,
    /// The hot layout of each DUMPI call id seen so far that has one (none at all when
    /// `general_only`): [`raw::Records::hot_head`](super::raw::Records::hot_head) decodes the
    /// heads of those records in one go.
    hot: Vec<Option<Hot>>,
    /// Earliest entry and latest exit of the calls appended so far (`(u64::MAX, 0)` before the
    /// first); folded into the rank's span at the end of the file.
    span: (u64, u64),
    /// Function names of the file, by address.
    function_names: HashMap<u64, String>,
    /// Decode every record with the generic per-field loop (the hot decoders are skipped); the
    /// tests compare both paths.
    general_only: bool,
}

impl RankReader {
    fn warn(&mut self, msg: String) {
        *self.warnings.entry(msg).or_default() += 1;
    }

    #[inline(always)]
    fn comm(&mut self, handle: u16) -> u32 {
        let st = &mut self.st;
        if let Some((h, c)) = st.last_comm {
            if h == handle {
                return c;
            }
        }
        if let Some(&c) = st.comms.get(&handle) {
            st.last_comm = Some((handle, c));
            return c;
        }
        let d = match handle {
            COMM_WORLD => Derivation::World,
            COMM_SELF => Derivation::SelfOf(self.rank),
            _ => Derivation::Unknown {
                rank: self.rank,
                handle,
            },
        };
        let c = self.comms.intern(d);
        self.st.comms.insert(handle, c);
        c
    }

    /// Register the creation of `newcomm` from `oldcomm` on this rank.
    fn derive(&mut self, oldcomm: u16, newcomm: u16, how: How) -> Option<u32> {
        let parent = self.comm(oldcomm);
        let seq_ref = self.st.seq.entry(parent).or_default();
        let seq = *seq_ref;
        *seq_ref += 1;
        if newcomm <= COMM_NULL {
            return None;
        }
        let c = self.comms.intern(Derivation::Derived { parent, seq, how });
        self.st.comms.insert(newcomm, c);
        self.st.last_comm = None;
        Some(c)
    }

    fn set_group(&mut self, handle: u16, e: GroupExpr) {
        let e = if e.nodes() > MAX_GROUP_NODES {
            self.warn(format!(
                "rank {}: group built from too many group calls; treated as unknown",
                self.rank
            ));
            GroupExpr::Unknown
        } else {
            e
        };
        self.st.groups.insert(handle, e);
    }

    fn group(&self, handle: u16) -> GroupExpr {
        if handle == GROUP_EMPTY {
            return GroupExpr::Empty;
        }
        self.st.groups.get(&handle).cloned().unwrap_or(GroupExpr::Unknown)
    }

    /// Read every record of `file` into this part. `advance(bytes)` is told how far into the
    /// file the read is now and then; when it returns false the read stops as cancelled.
    fn read_records(&mut self, file: &BinFile, advance: &mut dyn FnMut(u64) -> bool) -> Result<(), FormatError> {
        let sizes: Vec<u64> = (0..file.type_sizes.len().max(BUILTIN_SIZES.len()))
            .map(|i| {
                let s = file.type_sizes.get(i).copied().unwrap_or(0).max(0) as u64;
                if s == 0 && i < BUILTIN_SIZES.len() {
                    BUILTIN_SIZES[i]
                } else {
                    s
                }
            })
            .collect();
        if file.type_sizes.is_empty() {
            self.warn(format!(
                "{}: no datatype size table; built-in sizes of a 64-bit machine assumed",
                file.name
            ));
        }
        self.reserve(file);
        // A slot per 64 bytes of records, at most 4096 (32 KiB): libdumpi's handles are
        // consecutive, so this many can be pending at once before two share a slot.
        self.st.pending = RequestTable::with_slots((file.stream_len() / 64).clamp(1, 4096));
        let mut records = file.records();
        let mut next_report = PROGRESS_STEP;
        let mut rec = Record::empty();
        let mut statuses: Vec<Status> = Vec::new();
        let mut requests: Vec<i32> = Vec::new();
        loop {
            if let Some(h) = records.hot_head(&self.hot) {
                let pos = records.position();
                if pos >= next_report {
                    next_report = pos + PROGRESS_STEP;
                    if !advance(pos as u64) {
                        return Err(FormatError::cancelled(file.name));
                    }
                }
                self.hot_record(&mut records, h, &sizes, &mut statuses, &mut requests)?;
                continue;
            }
            if !records.head_into(&mut rec)? {
                break;
            }
            let pos = records.position();
            if pos >= next_report {
                next_report = pos + PROGRESS_STEP;
                if !advance(pos as u64) {
                    return Err(FormatError::cancelled(file.name));
                }
            }
            let hot = match rec.call {
                FUNCTION_ENTER | FUNCTION_EXIT => None,
                _ if self.general_only => None,
                id => {
                    self.call_op(id);
                    self.hot[id as usize]
                }
            };
            // One decoder per hot layout; every other record takes the generic field loop.
            match hot {
                None => {
                    records.args_into(&mut rec)?;
                    self.record(file, &sizes, &rec);
                }
                Some(layout) => {
                    let (op, call) = self.begin_call(file, &rec);
                    let head = HotHead {
                        call: rec.call,
                        hot: layout,
                        mask: rec.mask,
                        thread: rec.thread,
                        time: None,
                    };
                    self.hot_args(&mut records, head, op, call, &sizes, &mut statuses, &mut requests)?;
                }
            }
        }
        if self.span.0 <= self.span.1 {
            self.rt.extend_span(self.span.0, self.span.1);
        }
        let pending = self.st.pending.len();
        if pending > 0 {
            self.warn(format!(
                "rank {}: {pending} non-blocking operation(s) never completed in the trace",
                self.rank
            ));
        }
        Ok(())
    }

    /// A record whose head [`raw::Records::hot_head`](super::raw::Records::hot_head) decoded:
    /// the call is appended from the head, then its arguments are decoded by the layout's
    /// decoder.
    #[inline(always)]
    fn hot_record(
        &mut self,
        records: &mut super::raw::Records,
        h: HotHead,
        sizes: &[u64],
        statuses: &mut Vec<Status>,
        requests: &mut Vec<i32>,
    ) -> Result<(), FormatError> {
        let (enter, exit) = self.times_of(h.time);
        let (op, func, kind) = self.call_op(h.call);
        let loc = self.location(h.thread);
        let callpath = self.st.callpath;
        let call = self.append_call(func, kind, enter, exit, callpath, loc);
        self.hot_args(records, h, op, call, sizes, statuses, requests)
    }

    /// Decode the arguments of a hot record whose call is `call` and act on them.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn hot_args(
        &mut self,
        records: &mut super::raw::Records,
        h: HotHead,
        op: Op,
        call: CallIdx,
        sizes: &[u64],
        statuses: &mut Vec<Status>,
        requests: &mut Vec<i32>,
    ) -> Result<(), FormatError> {
        match h.hot {
            Hot::P2p {
                with_request,
                with_status,
            } => {
                let spec = super::spec::call_spec(h.call).expect("hot ids are known calls");
                let a = records.p2p_args(spec, h.mask, with_request, with_status, statuses)?;
                let recv_init = op == Op::PersistentInit && spec.name == "Recv_init";
                self.p2p_call(call, op, recv_init, a, sizes, statuses.first());
            }
            Hot::Wait { with_flag } => {
                let (request, flag) = records.wait_args(h.mask, with_flag, statuses)?;
                if flag != 0 {
                    self.complete(request, call, statuses.first());
                }
            }
            Hot::All { with_flag } => {
                let flag = records.requests_args(h.mask, with_flag, requests, statuses)?;
                if flag != 0 {
                    self.complete_all(call, requests, statuses);
                }
            }
        }
        Ok(())
    }

    /// Entry and exit of a record in ns (wall clock, else CPU clock). DUMPI stores seconds in 16
    /// bits above a per-file bias, so they wrap after 18.2 hours: a jump back by more than half
    /// the range is taken as a wrap.
    #[inline]
    fn times(&mut self, rec: &Record) -> (u64, u64) {
        self.times_of(rec.wall.or(rec.cpu))
    }

    /// [`RankReader::times`] of the interval a record carries (wall clock, else CPU clock).
    #[inline(always)]
    fn times_of(&mut self, interval: Option<Interval>) -> (u64, u64) {
        const WRAP: u64 = 1 << 16;
        let Some(iv) = interval else {
            let t = self.st.last_sec.saturating_mul(1_000_000_000);
            return (t, t);
        };
        let st = &mut self.st;
        let mut start = iv.start.sec + st.wrapped;
        if start + WRAP / 2 < st.last_sec {
            st.wrapped += WRAP;
            start += WRAP;
        }
        st.last_sec = start;
        let mut stop = iv.stop.sec + st.wrapped;
        if stop + WRAP / 2 < start {
            stop += WRAP;
        }
        let ns = |sec: u64, nsec: u32| sec.saturating_mul(1_000_000_000).saturating_add(nsec as u64);
        let (a, b) = (ns(start, iv.start.nsec), ns(stop, iv.stop.nsec));
        self.min_time = self.min_time.min(a);
        (a, b)
    }

    #[inline(always)]
    fn location(&mut self, thread: u16) -> u16 {
        let st = &mut self.st;
        if let Some((t, loc)) = st.last_thread {
            if t == thread {
                return loc;
            }
        }
        let rt = &mut self.rt;
        let loc = *st.threads.entry(thread).or_insert_with(|| {
            rt.locations.push(Location {
                id: thread as u64,
                name: format!("thread {thread}"),
            });
            (rt.locations.len() - 1) as u16
        });
        st.last_thread = Some((thread, loc));
        loc
    }

    /// What to do with call id `id`, its interned MPI name and its kind (found on first use).
    #[inline]
    fn call_op(&mut self, id: u16) -> (Op, FuncId, CallKind) {
        match self.call_ops[id as usize] {
            Some(known) => known,
            None => self.first_call_op(id),
        }
    }

    #[cold]
    fn first_call_op(&mut self, id: u16) -> (Op, FuncId, CallKind) {
        let spec = super::spec::call_spec(id).expect("ids come from decoded records");
        let name = mpi_name(spec.name);
        let func = self.functions.intern(&name);
        let known = (Op::of(spec.name, &name), func, CallKind::classify(&name));
        self.call_ops[id as usize] = Some(known);
        if !self.general_only && id != FUNCTION_ENTER && id != FUNCTION_EXIT {
            self.hot[id as usize] = known.0.hot(spec.name);
        }
        known
    }

    /// Reserve the rank's columns for the calls the file's footer counts, so that they are
    /// allocated once instead of grown by doubling and copying. The counts are only a hint: they
    /// are capped by what the record stream's size can hold, and the columns still grow if a
    /// file has more records than its footer says.
    fn reserve(&mut self, file: &BinFile) {
        let Some(counts) = file.call_counts() else { return };
        // The calls the footer counts are looked up in id order, so the part names functions
        // in the same order whatever its records hold.
        for spec in CALLS
            .iter()
            .filter(|c| counts.get(c.id as usize).is_some_and(|&n| n > 0))
        {
            self.call_op(spec.id);
        }
        let (calls, p2p, colls) = reservation(file).unwrap_or_default();
        self.rt.reserve(calls, p2p, colls);
        self.st.unresolved.coll_fix.reserve(colls);
    }

    /// Append a call to the rank's columns (what `RankTrace::push_call` does, inlined here
    /// with the span kept in two plain fields until the end of the file).
    #[inline(always)]
    fn append_call(
        &mut self,
        func: FuncId,
        kind: CallKind,
        enter: u64,
        exit: u64,
        callpath: CallpathId,
        location: u16,
    ) -> CallIdx {
        let exit = exit.max(enter);
        let base = self.st.unresolved.time_base;
        let c = &mut self.rt.calls;
        let idx = c.func.len() as CallIdx;
        c.func.push(func);
        c.kind.push(kind);
        c.enter.push(enter.wrapping_sub(base));
        c.exit.push(exit.wrapping_sub(base));
        c.callpath.push(callpath);
        c.location.push(location);
        self.span = (self.span.0.min(enter), self.span.1.max(exit));
        idx
    }

    /// Append the call of `rec` (head decoded) to the rank: times, thread, call path, PAPI
    /// values. Returns what to do with it and its index.
    #[inline]
    fn begin_call(&mut self, file: &BinFile, rec: &Record) -> (Op, CallIdx) {
        let (enter, exit) = self.times(rec);
        let (op, func, kind) = self.call_op(rec.call);
        let loc = self.location(rec.thread);
        let callpath = self.st.callpath;
        let call = self.append_call(func, kind, enter, exit, callpath, loc);
        if !rec.perf.is_empty() {
            self.perf(file, rec, enter, exit.max(enter));
        }
        (op, call)
    }

    /// Complete the operations of `requests` (`MPI_Waitall`, a successful `MPI_Testall`),
    /// using the statuses when there is one per request.
    fn complete_all(&mut self, call: CallIdx, requests: &[i32], statuses: &[Status]) {
        let with_status = statuses.len() == requests.len();
        for (i, &req) in requests.iter().enumerate() {
            self.complete(req, call, if with_status { statuses.get(i) } else { None });
        }
    }

    /// The point-to-point calls of the fixed layout, whichever decoder read them.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn p2p_call(&mut self, call: CallIdx, op: Op, recv_init: bool, a: P2pArgs, sizes: &[u64], status: Option<&Status>) {
        let bytes = (a.count.max(0) as u64).saturating_mul(sizes.get(a.datatype as usize).copied().unwrap_or(0));
        match op {
            Op::Send => {
                let c = self.comm(a.comm);
                self.post(call, call, P2pDir::Send, a.peer, a.tag, c, bytes);
            }
            Op::Isend => {
                let c = self.comm(a.comm);
                let o = self.post(call, NOT_COMPLETED, P2pDir::Send, a.peer, a.tag, c, bytes);
                self.track(a.request, o);
            }
            Op::Recv => {
                let c = self.comm(a.comm);
                let o = self.post(call, call, P2pDir::Recv, a.peer, a.tag, c, bytes);
                if let (Some(o), Some(s)) = (o, status) {
                    self.resolve_recv(o, s);
                }
            }
            Op::Irecv => {
                let c = self.comm(a.comm);
                let o = self.post(call, NOT_COMPLETED, P2pDir::Recv, a.peer, a.tag, c, bytes);
                self.track(a.request, o);
            }
            Op::PersistentInit => {
                let t = Template {
                    dir: if recv_init { P2pDir::Recv } else { P2pDir::Send },
                    peer: a.peer,
                    tag: a.tag,
                    comm: self.comm(a.comm),
                    bytes,
                };
                self.st.persistent.insert(a.request, t);
            }
            _ => unreachable!("only the fixed point-to-point layouts come here"),
        }
    }

    fn record(&mut self, file: &BinFile, sizes: &[u64], rec: &Record) {
        if rec.call == FUNCTION_ENTER || rec.call == FUNCTION_EXIT {
            let (enter, _) = self.times(rec);
            self.user_function(rec, enter);
            return;
        }
        let spec = rec.spec();
        let (op, call) = self.begin_call(file, rec);
        let size = |dt: i64| -> u64 { sizes.get(dt.max(0) as usize).copied().unwrap_or(0) };
        let int = |n: &str| rec.int(n).unwrap_or(0);
        let bytes = |count: &str, dt: &str| (int(count).max(0) as u64).saturating_mul(size(int(dt)));
        let handle = |n: &str| rec.int(n).unwrap_or(0) as u16;
        let status = rec.statuses().first().copied();
        let p2p_args = |peer: &str| P2pArgs {
            count: int("count") as i32,
            datatype: int("datatype") as u16,
            peer: int(peer) as i32,
            tag: int("tag") as i32,
            comm: handle("comm"),
            request: int("request") as i32,
        };
        match op {
            Op::Send | Op::Isend | Op::Recv | Op::Irecv | Op::PersistentInit => {
                let recv = matches!(op, Op::Recv | Op::Irecv) || spec.name == "Recv_init";
                let a = p2p_args(if recv { "source" } else { "dest" });
                self.p2p_call(call, op, spec.name == "Recv_init", a, sizes, status.as_ref());
            }
            Op::Sendrecv => {
                let c = self.comm(handle("comm"));
                self.post(
                    call,
                    call,
                    P2pDir::Send,
                    int("dest") as i32,
                    int("sendtag") as i32,
                    c,
                    bytes("sendcount", "sendtype"),
                );
                let op = self.post(
                    call,
                    call,
                    P2pDir::Recv,
                    int("source") as i32,
                    int("recvtag") as i32,
                    c,
                    bytes("recvcount", "recvtype"),
                );
                if let (Some(op), Some(s)) = (op, status) {
                    self.resolve_recv(op, &s);
                }
            }
            Op::SendrecvReplace => {
                let c = self.comm(handle("comm"));
                let b = bytes("count", "datatype");
                self.post(
                    call,
                    call,
                    P2pDir::Send,
                    int("dest") as i32,
                    int("sendtag") as i32,
                    c,
                    b,
                );
                let op = self.post(
                    call,
                    call,
                    P2pDir::Recv,
                    int("source") as i32,
                    int("recvtag") as i32,
                    c,
                    b,
                );
                if let (Some(op), Some(s)) = (op, status) {
                    self.resolve_recv(op, &s);
                }
            }
            Op::Start => self.start(call, int("request") as i32),
            Op::Startall => {
                for &req in rec.ints("requests").unwrap_or(&[]) {
                    self.start(call, req);
                }
            }
            Op::Wait => self.complete(int("request") as i32, call, status.as_ref()),
            Op::Test => {
                if int("flag") != 0 {
                    self.complete(int("request") as i32, call, status.as_ref());
                }
            }
            Op::WaitOrTestAny => {
                let reqs = rec.ints("requests").unwrap_or(&[]);
                let idx = int("index");
                let done = spec.name == "Waitany" || int("flag") != 0;
                if done && idx >= 0 && (idx as usize) < reqs.len() {
                    self.complete(reqs[idx as usize], call, status.as_ref());
                }
            }
            Op::WaitOrTestAll => {
                if spec.name == "Waitall" || int("flag") != 0 {
                    self.complete_all(call, rec.ints("requests").unwrap_or(&[]), rec.statuses());
                }
            }
            Op::WaitOrTestSome => {
                let reqs = rec.ints("requests").unwrap_or(&[]);
                let st = rec.statuses();
                for (j, &i) in rec.ints("indices").unwrap_or(&[]).iter().enumerate() {
                    if i >= 0 && (i as usize) < reqs.len() {
                        self.complete(reqs[i as usize], call, st.get(j));
                    }
                }
            }
            Op::RequestFree => {
                let req = int("request") as i32;
                self.st.pending.remove(req);
                self.st.persistent.remove(&req);
            }
            Op::CommDup => {
                self.derive(handle("oldcomm"), handle("newcomm"), How::Dup);
            }
            Op::CommSplit => {
                let color = int("color") as i32;
                if let Some(c) = self.derive(handle("oldcomm"), handle("newcomm"), How::Split(color)) {
                    self.comms.infos[c as usize].split.push((int("key") as i32, self.rank));
                }
            }
            Op::CommCreate => {
                let g = self.group(handle("group"));
                if let Some(c) = self.derive(handle("oldcomm"), handle("newcomm"), How::Create) {
                    self.comms.infos[c as usize].group.get_or_insert(g);
                }
            }
            Op::CartCreate => {
                let dims = rec.ints("dims").unwrap_or(&[]).to_vec();
                let n = dims.iter().map(|&d| d.max(0) as u64).fold(1u64, u64::saturating_mul);
                if let Some(c) = self.derive(handle("oldcomm"), handle("newcomm"), How::Cart) {
                    self.comms.infos[c as usize]
                        .size
                        .get_or_insert(n.min(usize::MAX as u64) as usize);
                    self.comms.infos[c as usize].cart_dims.get_or_insert(dims);
                    let periods = rec.ints("periods").unwrap_or(&[]).to_vec();
                    self.comms.infos[c as usize].cart_periods.get_or_insert(periods);
                }
            }
            Op::CartSub => {
                let remain = rec.ints("remain_dims").unwrap_or(&[]).to_vec();
                if let Some(c) = self.derive(handle("oldcomm"), handle("newcomm"), How::CartSub(self.rank)) {
                    self.comms.infos[c as usize].remain_dims = Some(remain);
                }
            }
            Op::GraphCreate => {
                let n = int("nodes").max(0) as usize;
                if let Some(c) = self.derive(handle("oldcomm"), handle("newcomm"), How::Graph) {
                    self.comms.infos[c as usize].size.get_or_insert(n);
                }
            }
            Op::Untracked => {
                let (old, new) = match spec.name {
                    "Intercomm_create" => ("localcomm", "newcomm"),
                    "Intercomm_merge" => ("comm", "newcomm"),
                    _ => ("oldcomm", "newcomm"),
                };
                self.warn(format!(
                    "MPI_{} is not followed: operations on the communicators it creates are left out",
                    spec.name
                ));
                self.derive(handle(old), handle(new), How::Untracked(spec.name));
            }
            Op::CommFree => {
                let h = handle("comm");
                self.st.comms.remove(&h);
                self.st.last_comm = None;
            }
            Op::CommGroup => {
                let c = self.comm(handle("comm"));
                self.set_group(handle("group"), GroupExpr::OfComm(c));
            }
            Op::GroupInclExcl => {
                let g = Box::new(self.group(handle("group")));
                let ranks = rec.ints("ranks").unwrap_or(&[]).to_vec();
                let e = if spec.name == "Group_incl" {
                    GroupExpr::Incl(g, ranks)
                } else {
                    GroupExpr::Excl(g, ranks)
                };
                self.set_group(handle("newgroup"), e);
            }
            Op::GroupRange => {
                let g = Box::new(self.group(handle("group")));
                let ranges = match rec.arg("ranges") {
                    Some(Value::IntRows(v)) => v.clone(),
                    _ => Vec::new(),
                };
                let e = if spec.name == "Group_range_incl" {
                    GroupExpr::RangeIncl(g, ranges)
                } else {
                    GroupExpr::RangeExcl(g, ranges)
                };
                self.set_group(handle("newgroup"), e);
            }
            Op::GroupCombine => {
                let a = Box::new(self.group(handle("group1")));
                let b = Box::new(self.group(handle("group2")));
                let e = match spec.name {
                    "Group_union" => GroupExpr::Union(a, b),
                    "Group_intersection" => GroupExpr::Intersection(a, b),
                    _ => GroupExpr::Difference(a, b),
                };
                self.set_group(handle("newgroup"), e);
            }
            Op::GroupFree => {
                let h = handle("group");
                self.st.groups.remove(&h);
            }
            Op::Collective(op) => self.collective(call, op, rec, &size),
            Op::Other => {}
        }
    }

    fn collective(&mut self, call: CallIdx, op: CollectiveOp, rec: &Record, size: &dyn Fn(i64) -> u64) {
        let int = |n: &str| rec.int(n).unwrap_or(0);
        let b = |count: &str, dt: &str| (int(count).max(0) as u64).saturating_mul(size(int(dt)));
        let sum = |counts: &str, dt: &str| -> u64 {
            rec.ints(counts)
                .unwrap_or(&[])
                .iter()
                .map(|&c| c.max(0) as u64)
                .sum::<u64>()
                .saturating_mul(size(int(dt)))
        };
        let plain = |sent, recv| CollBytes::Plain {
            sent,
            recv,
            sent_per_member: false,
            recv_per_member: false,
        };
        let mut root = -1;
        let bytes = match op {
            CollectiveOp::Barrier => plain(0, 0),
            CollectiveOp::Bcast => {
                root = int("root") as i32;
                let n = b("count", "datatype");
                CollBytes::ByRoot {
                    root: (n, 0),
                    other: (0, n),
                }
            }
            CollectiveOp::Reduce => {
                root = int("root") as i32;
                let n = b("count", "datatype");
                CollBytes::ByRoot {
                    root: (n, n),
                    other: (n, 0),
                }
            }
            CollectiveOp::Allreduce | CollectiveOp::Scan | CollectiveOp::Exscan => {
                let n = b("count", "datatype");
                plain(n, n)
            }
            CollectiveOp::Gather => {
                root = int("root") as i32;
                CollBytes::Plain {
                    sent: b("sendcount", "sendtype"),
                    recv: b("recvcount", "recvtype"),
                    sent_per_member: false,
                    recv_per_member: true,
                }
            }
            CollectiveOp::Gatherv => {
                root = int("root") as i32;
                plain(b("sendcount", "sendtype"), sum("recvcounts", "recvtype"))
            }
            CollectiveOp::Scatter => {
                root = int("root") as i32;
                CollBytes::Plain {
                    sent: b("sendcount", "sendtype"),
                    recv: b("recvcount", "recvtype"),
                    sent_per_member: true,
                    recv_per_member: false,
                }
            }
            CollectiveOp::Scatterv => {
                root = int("root") as i32;
                plain(sum("sendcounts", "sendtype"), b("recvcount", "recvtype"))
            }
            CollectiveOp::Allgather => CollBytes::Plain {
                sent: b("sendcount", "sendtype"),
                recv: b("recvcount", "recvtype"),
                sent_per_member: false,
                recv_per_member: true,
            },
            CollectiveOp::Allgatherv => plain(b("sendcount", "sendtype"), sum("recvcounts", "recvtype")),
            CollectiveOp::Alltoall => CollBytes::Plain {
                sent: b("sendcount", "sendtype"),
                recv: b("recvcount", "recvtype"),
                sent_per_member: true,
                recv_per_member: true,
            },
            CollectiveOp::Alltoallv => plain(sum("sendcounts", "sendtype"), sum("recvcounts", "recvtype")),
            CollectiveOp::Alltoallw => {
                let w = |counts: &str, types: &str| -> u64 {
                    let c = rec.ints(counts).unwrap_or(&[]);
                    let t = rec.ints(types).unwrap_or(&[]);
                    c.iter().zip(t).fold(0u64, |acc, (&c, &t)| {
                        acc.saturating_add((c.max(0) as u64).saturating_mul(size(t as i64)))
                    })
                };
                plain(w("sendcounts", "sendtypes"), w("recvcounts", "recvtypes"))
            }
            CollectiveOp::ReduceScatter | CollectiveOp::ReduceScatterBlock => CollBytes::ReduceScatter {
                counts: rec.ints("recvcounts").unwrap_or(&[]).to_vec(),
                size: size(int("datatype")),
            },
            CollectiveOp::Other => plain(0, 0),
        };
        let comm = self.comm(rec.int("comm").unwrap_or(COMM_WORLD as i64) as u16);
        self.rt.push_collective(call, op, comm, NO_ROOT, 0, 0);
        self.st.unresolved.coll_fix.push((root, bytes));
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn post(
        &mut self,
        call: CallIdx,
        complete: CallIdx,
        dir: P2pDir,
        peer: i32,
        tag: i32,
        comm: u32,
        bytes: u64,
    ) -> Option<usize> {
        if peer < 0 && !(dir == P2pDir::Recv && peer == DUMPI_ANY) {
            // MPI_PROC_NULL (stored as the MPI library's raw value): no message.
            return None;
        }
        let tag = if tag == DUMPI_ANY && dir == P2pDir::Recv {
            ANY_TAG
        } else {
            tag
        };
        let op = self.rt.p2p.len();
        let world = comm == 0 && ((peer as u32) < self.world || peer == DUMPI_ANY);
        self.st.unresolved.all_world &= world;
        self.rt.push_p2p(call, complete, dir, peer as u32, tag, comm, bytes);
        if peer == DUMPI_ANY {
            self.st.unresolved.wildcards.push(op);
        }
        Some(op)
    }

    #[inline(always)]
    fn track(&mut self, request: i32, op: Option<usize>) {
        if let Some(op) = op {
            self.st.pending.insert(request, op);
        }
    }

    fn start(&mut self, call: CallIdx, request: i32) {
        let Some(t) = self.st.persistent.get(&request).copied() else {
            return;
        };
        let op = self.post(call, NOT_COMPLETED, t.dir, t.peer, t.tag, t.comm, t.bytes);
        self.track(request, op);
    }

    #[inline(always)]
    fn complete(&mut self, request: i32, call: CallIdx, status: Option<&Status>) {
        let Some(op) = self.st.pending.remove(request) else {
            return;
        };
        self.rt.p2p.complete[op] = call;
        if let Some(s) = status {
            if self.rt.p2p.dir[op] == P2pDir::Recv {
                self.resolve_recv(op, s);
            }
        }
    }

    /// Use a receive's status where it is plausible: the source for a wildcard receive, the tag
    /// for a wildcard tag, and the bytes actually received (at most the posted buffer).
    fn resolve_recv(&mut self, op: usize, s: &Status) {
        if s.cancelled != 0 || s.source < 0 {
            return;
        }
        let p = &mut self.rt.p2p;
        if p.peer[op] as i32 == DUMPI_ANY {
            p.peer[op] = s.source as u32;
            self.st.unresolved.all_world &= (s.source as u32) < self.world;
        } else if p.peer[op] as i32 != s.source {
            return;
        }
        if p.tag[op] == ANY_TAG && s.tag >= 0 {
            p.tag[op] = s.tag;
        }
        if s.bytes >= 0 && (s.bytes as u64) <= p.bytes[op] {
            p.bytes[op] = s.bytes as u64;
        }
    }

    fn user_function(&mut self, rec: &Record, time: u64) {
        self.rt.extend_span(time, time);
        let addr = rec.int("fn").unwrap_or(0) as u64;
        let st = &mut self.st;
        if rec.call == FUNCTION_ENTER {
            if st.regions.len() >= MAX_CALLPATH_DEPTH {
                st.regions_overflow += 1;
                return;
            }
            let name = match self.function_names.get(&addr) {
                Some(n) => n.clone(),
                None => format!("0x{addr:x}"),
            };
            let region = self.regions.intern(&name);
            st.regions.push(region);
        } else if st.regions_overflow > 0 {
            st.regions_overflow -= 1;
            return;
        } else {
            st.regions.pop();
        }
        st.callpath = if st.regions.is_empty() {
            NO_CALLPATH
        } else if let Some(&id) = self.callpath_ids.get(&st.regions) {
            id
        } else if self.callpaths.len() < MAX_CALLPATHS {
            self.callpaths.push(st.regions.clone());
            let id = (self.callpaths.len() - 1) as CallpathId;
            self.callpath_ids.insert(st.regions.clone(), id);
            id
        } else {
            NO_CALLPATH
        };
    }

    fn perf(&mut self, file: &BinFile, rec: &Record, enter: u64, exit: u64) {
        for (i, &(at_entry, at_exit)) in rec.perf.iter().enumerate() {
            let label = file
                .perf_labels
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("PAPI counter {i}"));
            let m = self.metrics.intern(&label);
            let rt = &mut self.rt;
            let series = *self.st.metric_index.entry(m).or_insert_with(|| {
                rt.metrics.push(MetricSamples {
                    metric: m,
                    ..Default::default()
                });
                rt.metrics.len() - 1
            });
            let s = &mut rt.metrics[series];
            let base = self.st.unresolved.time_base;
            s.time.extend([enter.wrapping_sub(base), exit.wrapping_sub(base)]);
            s.value.extend([at_entry as f64, at_exit as f64]);
        }
    }
}

/// Merges the ranks' parts in rank order, then resolves communicators.
pub(crate) struct Builder {
    trace: Trace,
    comms: Derivations,
    ranks: Vec<Unresolved>,
    warnings: HashMap<String, u64>,
    min_time: u64,
    callpath_ids: HashMap<Vec<u32>, CallpathId>,
    /// Communicator member entries stored so far, and the most allowed for this input.
    members_stored: usize,
    members_budget: usize,
    /// Translate every operation's peer and communicator one by one, even on a world
    /// communicator whose members are the identity (the tests compare both ways).
    pub general_only: bool,
}

impl Builder {
    pub fn new(source: &str, n: u32) -> Builder {
        let mut b = Builder {
            trace: Trace::new("dumpi", source, n),
            comms: Derivations::default(),
            ranks: (0..n).map(|_| Unresolved::default()).collect(),
            warnings: HashMap::new(),
            min_time: u64::MAX,
            callpath_ids: HashMap::new(),
            members_stored: 0,
            members_budget: 0,
            general_only: false,
        };
        b.comms.intern(Derivation::World);
        b
    }

    fn warn(&mut self, msg: String) {
        *self.warnings.entry(msg).or_default() += 1;
    }

    /// Add a rank's part: its names, call paths, metrics and communicator derivations are
    /// interned in the part's first-use order, and its columns renumbered to the trace's ids.
    /// Parts must come in rank order for the ids to be those of a read in rank order.
    pub fn merge(&mut self, part: RankPart) {
        let functions: Vec<FuncId> = part.functions.iter().map(|n| self.trace.functions.intern(n)).collect();
        let regions: Vec<RegionId> = part.regions.iter().map(|n| self.trace.regions.intern(n)).collect();
        let callpaths: Vec<CallpathId> = part
            .callpaths
            .iter()
            .map(|local| {
                let path: Vec<RegionId> = local.iter().map(|&g| regions[g as usize]).collect();
                if let Some(&id) = self.callpath_ids.get(&path) {
                    id
                } else if self.trace.callpaths.len() < MAX_CALLPATHS {
                    let id = self.trace.callpaths.len() as CallpathId;
                    self.trace.callpaths.push(path.clone());
                    self.callpath_ids.insert(path, id);
                    id
                } else {
                    NO_CALLPATH
                }
            })
            .collect();
        let metrics: Vec<u32> = part.metrics.iter().map(|n| self.trace.metrics.intern(n)).collect();
        // A derivation's parent is always interned before it, so one pass renumbers both.
        let mut comms: Vec<u32> = Vec::with_capacity(part.comms.list.len());
        for d in part.comms.list {
            let d = match d {
                Derivation::Derived { parent, seq, how } => Derivation::Derived {
                    parent: comms[parent as usize],
                    seq,
                    how,
                },
                other => other,
            };
            comms.push(self.comms.intern(d));
        }
        for (&id, info) in comms.iter().zip(part.comms.infos) {
            let into = &mut self.comms.infos[id as usize];
            into.split.extend(info.split);
            if let Some(g) = info.group {
                into.group.get_or_insert_with(|| g.renumbered(&comms));
            }
            if let Some(s) = info.size {
                into.size.get_or_insert(s);
            }
            if let Some(d) = info.cart_dims {
                into.cart_dims.get_or_insert(d);
            }
            if let Some(p) = info.cart_periods {
                into.cart_periods.get_or_insert(p);
            }
            if info.remain_dims.is_some() {
                into.remain_dims = info.remain_dims;
            }
        }
        let mut rt = part.trace;
        renumber(&mut rt.calls.func, &functions);
        renumber(&mut rt.calls.callpath, &callpaths);
        renumber(&mut rt.p2p.comm, &comms);
        renumber(&mut rt.collectives.comm, &comms);
        for m in &mut rt.metrics {
            m.metric = metrics[m.metric as usize];
        }
        for (w, count) in part.warnings {
            *self.warnings.entry(w).or_default() += count;
        }
        self.min_time = self.min_time.min(part.min_time);
        self.members_budget = self.members_budget.saturating_add(part.members_budget);
        let r = part.rank as usize;
        self.trace.ranks[r] = rt;
        self.ranks[r] = part.unresolved;
    }

    /// Evaluate a group to world ranks, given the members of communicators resolved so far.
    fn eval(&self, g: &GroupExpr) -> Option<Vec<Rank>> {
        let pick = |base: &[Rank], idx: &[i32]| -> Option<Vec<Rank>> {
            idx.iter()
                .map(|&i| base.get(usize::try_from(i).ok()?).copied())
                .collect()
        };
        let ranges = |base: &[Rank], rows: &[Vec<i32>]| -> Option<Vec<usize>> {
            let mut out = Vec::new();
            for row in rows {
                let [first, last, stride] = row[..] else { return None };
                if stride == 0 {
                    return None;
                }
                let mut i = first as i64;
                while (stride > 0 && i <= last as i64) || (stride < 0 && i >= last as i64) {
                    if i < 0 || i as usize >= base.len() || out.len() > base.len() {
                        return None;
                    }
                    out.push(i as usize);
                    i += stride as i64;
                }
            }
            Some(out)
        };
        Some(match g {
            GroupExpr::Empty => Vec::new(),
            GroupExpr::OfComm(c) => self.comms.infos[*c as usize].members.clone()?,
            GroupExpr::Incl(b, idx) => pick(&self.eval(b)?, idx)?,
            GroupExpr::Excl(b, idx) => {
                let base = self.eval(b)?;
                base.iter()
                    .enumerate()
                    .filter(|(i, _)| !idx.contains(&(*i as i32)))
                    .map(|(_, &m)| m)
                    .collect()
            }
            GroupExpr::RangeIncl(b, rows) => {
                let base = self.eval(b)?;
                ranges(&base, rows)?.into_iter().map(|i| base[i]).collect()
            }
            GroupExpr::RangeExcl(b, rows) => {
                let base = self.eval(b)?;
                let drop = ranges(&base, rows)?;
                base.iter()
                    .enumerate()
                    .filter(|(i, _)| !drop.contains(i))
                    .map(|(_, &m)| m)
                    .collect()
            }
            GroupExpr::Union(a, b) => {
                let mut a = self.eval(a)?;
                for m in self.eval(b)? {
                    if !a.contains(&m) {
                        a.push(m);
                    }
                }
                a
            }
            GroupExpr::Intersection(a, b) => {
                let b = self.eval(b)?;
                self.eval(a)?.into_iter().filter(|m| b.contains(m)).collect()
            }
            GroupExpr::Difference(a, b) => {
                let b = self.eval(b)?;
                self.eval(a)?.into_iter().filter(|m| !b.contains(m)).collect()
            }
            GroupExpr::Unknown => return None,
        })
    }

    /// Compute memberships, translate peers and roots, shift times to the earliest wall time; the
    /// ranks are resolved on up to `threads` threads.
    pub fn finish(mut self, threads: usize) -> Result<Trace, FormatError> {
        let n = self.trace.num_ranks();
        // Parents are always interned before their children, so one pass in id order suffices.
        let mut comm_ids: Vec<Option<CommId>> = vec![None; self.comms.list.len()];
        // Communicators derived per rank (Cart_sub and dups of them): the collective that made
        // them, so that the ranks of one sub-grid share one communicator id.
        let mut per_rank_key: Vec<Option<Vec<u32>>> = vec![None; self.comms.list.len()];
        let mut per_rank_ids: HashMap<(Vec<u32>, Vec<Rank>), CommId> = HashMap::new();
        for i in 0..self.comms.list.len() {
            if let Derivation::Derived { parent, seq, how } = &self.comms.list[i] {
                per_rank_key[i] = match (how, &per_rank_key[*parent as usize]) {
                    (How::CartSub(_), None) => Some(vec![*parent, *seq]),
                    (How::Dup, Some(k)) => Some([k.as_slice(), &[u32::MAX, *seq]].concat()),
                    _ => None,
                };
            }
            let members = match self.comms.list[i].clone() {
                Derivation::World => Some((0..n).collect()),
                Derivation::SelfOf(r) => Some(vec![r]),
                Derivation::Unknown { .. } => None,
                Derivation::Derived { parent, how, .. } => {
                    let pm = self.comms.infos[parent as usize].members.clone();
                    let parent_per_rank = per_rank_key[parent as usize].is_some();
                    match (how, pm) {
                        (_, None) | (How::Untracked(_), _) => None,
                        (How::Dup, Some(pm)) if parent_per_rank => Some(pm),
                        (_, Some(_)) if parent_per_rank => {
                            self.warn(
                                "communicators derived from a MPI_Cart_sub result (other than dups) are not followed"
                                    .into(),
                            );
                            None
                        }
                        (How::CartSub(me), Some(pm)) => {
                            let dims = self.comms.infos[parent as usize].cart_dims.as_deref();
                            let remain = self.comms.infos[i].remain_dims.as_deref();
                            match (dims, remain) {
                                (Some(d), Some(k)) => cart_sub_members(&pm, d, k, me),
                                _ => None,
                            }
                        }
                        (How::Dup, Some(pm)) => Some(pm),
                        (How::Split(_), Some(pm)) => {
                            let mut v: Vec<(i32, usize, Rank)> = Vec::new();
                            let mut ok = true;
                            for &(key, w) in &self.comms.infos[i].split {
                                match pm.iter().position(|&m| m == w) {
                                    Some(old) => v.push((key, old, w)),
                                    None => ok = false,
                                }
                            }
                            v.sort();
                            ok.then(|| v.into_iter().map(|x| x.2).collect())
                        }
                        (How::Create, Some(_)) => self.comms.infos[i].group.as_ref().and_then(|g| self.eval(g)),
                        (How::Cart | How::Graph, Some(pm)) => {
                            let k = self.comms.infos[i].size.unwrap_or(pm.len()).min(pm.len());
                            Some(pm[..k].to_vec())
                        }
                    }
                }
            };
            let members = match members {
                Some(m) if self.members_stored.saturating_add(m.len()) > self.members_budget => {
                    self.warn(
                        "more communicator members than the input size can justify; later communicators are left out"
                            .into(),
                    );
                    None
                }
                other => other,
            };
            self.members_stored += members.as_ref().map_or(0, Vec::len);
            self.comms.infos[i].members = members.clone();
            comm_ids[i] = match (&self.comms.list[i], members) {
                (Derivation::World, _) => Some(tracelogic_model::COMM_WORLD),
                (Derivation::SelfOf(_), Some(m)) => Some(self.trace.add_comm("MPI_COMM_SELF", m)),
                (_, Some(m))
                    if per_rank_key[i]
                        .as_ref()
                        .is_some_and(|k| per_rank_ids.contains_key(&(k.clone(), m.clone()))) =>
                {
                    per_rank_key[i].clone().and_then(|k| per_rank_ids.get(&(k, m)).copied())
                }
                (d, Some(m)) => {
                    let name = match d {
                        Derivation::Derived { parent, how, .. } => {
                            let p = match comm_ids[*parent as usize] {
                                Some(tracelogic_model::COMM_WORLD) => "MPI_COMM_WORLD".to_owned(),
                                Some(c) => format!("comm {c}"),
                                None => "an unknown communicator".to_owned(),
                            };
                            let id = self.trace.comms.len();
                            match how {
                                How::Dup => format!("comm {id} (dup of {p})"),
                                How::Split(c) => format!("comm {id} (split of {p}, colour {c})"),
                                How::Create => format!("comm {id} (created from {p})"),
                                How::Cart => format!("comm {id} (cartesian, from {p})"),
                                How::Graph => format!("comm {id} (graph, from {p})"),
                                How::CartSub(_) => format!("comm {id} (sub-grid of {p})"),
                                How::Untracked(_) => format!("comm {id}"),
                            }
                        }
                        _ => format!("comm {}", self.trace.comms.len()),
                    };
                    let id = self.trace.comms.len() as CommId;
                    if let Some(k) = per_rank_key[i].clone() {
                        per_rank_ids.insert((k, m.clone()), id);
                    }
                    let declared = match d {
                        Derivation::Derived { how: How::Cart, .. } => {
                            self.comms.infos[i].cart_dims.as_ref().map(|dims| {
                                let periods = self.comms.infos[i].cart_periods.clone().unwrap_or_default();
                                let dims: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
                                let periods: Vec<bool> = periods.iter().map(|&p| p != 0).collect();
                                CartTopology::row_major(id, &dims, &periods, m.len())
                            })
                        }
                        _ => None,
                    };
                    self.trace.comms.push(Communicator { name, members: m });
                    if let Some(Err(e)) = declared.map(|t| t.and_then(|t| self.trace.add_cartesian(t))) {
                        self.warn(format!("MPI_Cart_create: {e}; the declared topology is left out"));
                    }
                    Some(id)
                }
                (_, None) => None,
            };
        }

        // Times relative to the earliest wall time of the set.
        let origin = if self.min_time == u64::MAX { 0 } else { self.min_time };
        // Each rank's operations are resolved on their own, on the readers' threads.
        let ranks: Vec<Mutex<(RankTrace, Unresolved)>> = std::mem::take(&mut self.trace.ranks)
            .into_iter()
            .zip(std::mem::take(&mut self.ranks))
            .map(Mutex::new)
            .collect();
        let sizes: Vec<u64> = ranks
            .iter()
            .map(|m| {
                let g = m.lock().unwrap_or_else(PoisonError::into_inner);
                (g.0.calls.len() + g.0.p2p.len() + g.0.collectives.len()) as u64
            })
            .collect();
        let (comm_ids, infos) = (&comm_ids, &self.comms.infos);
        let world_ranks = (!self.general_only
            && matches!(
                (&self.comms.list[0], comm_ids[0], &infos[0].members),
                (Derivation::World, Some(tracelogic_model::COMM_WORLD), Some(m))
                    if m.iter().enumerate().all(|(i, &w)| w == i as Rank)
            ))
        .then_some(n);
        let counts = map_files(
            &ranks,
            &sizes,
            threads,
            &|r| format!("resolving rank {r}"),
            &|r| format!("rank {r}"),
            &mut NoProgress,
            |r, m, _| {
                let mut g = m.lock().unwrap_or_else(PoisonError::into_inner);
                let (rt, st) = &mut *g;
                Ok(resolve_rank(
                    r as Rank,
                    rt,
                    std::mem::take(st),
                    comm_ids,
                    infos,
                    world_ranks,
                    origin,
                ))
            },
        )?;
        self.trace.ranks = ranks
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner).0)
            .collect();
        let dropped: u64 = counts.iter().map(|c| c.0).sum();
        let bad_root: u64 = counts.iter().map(|c| c.1).sum();
        if dropped > 0 {
            self.warn(format!(
                "{dropped} operation(s) left out: their communicator's members or their peer could not be determined"
            ));
        }
        if bad_root > 0 {
            self.warn(format!(
                "{bad_root} collective(s) name a root outside their communicator"
            ));
        }

        let mut warnings: Vec<(String, u64)> = self.warnings.into_iter().collect();
        warnings.sort();
        for (w, count) in warnings {
            self.trace
                .warnings
                .push(if count > 1 { format!("{w} ({count} times)") } else { w });
        }
        // Every operation is appended when its call is, so each rank's operations are already
        // in posting order (the model's `normalise_order` would only check that, on one thread).
        debug_assert!(self.trace.ranks.iter().all(|rt| {
            rt.p2p.post.windows(2).all(|w| w[0] <= w[1]) && rt.collectives.call.windows(2).all(|w| w[0] <= w[1])
        }));
        Ok(self.trace)
    }
}

/// Translate rank `r`'s point-to-point peers and collective roots to world ranks and its
/// communicators to the trace's (`comm_ids` and `infos` by derivation; `world_ranks` is the
/// number of world ranks when derivation 0's members are the identity), dropping the operations
/// whose communicator or peer is unknown; fill in the collectives' bytes that depend on the
/// communicator; shift its times by `origin`. Returns the operations dropped and the collectives
/// whose root lies outside their communicator.
fn resolve_rank(
    r: Rank,
    rt: &mut RankTrace,
    st: Unresolved,
    comm_ids: &[Option<CommId>],
    infos: &[CommInfo],
    world_ranks: Option<Rank>,
    origin: u64,
) -> (u64, u64) {
    let mut dropped = 0u64;
    let mut bad_root = 0u64;
    // Point-to-point: translate peers; drop operations whose communicator is unknown. An
    // operation on `MPI_COMM_WORLD` (derivation 0) whose peer is a world rank or the wildcard
    // stays as it is when the world's members are the identity, so the translation starts at
    // the first other one (on a trace that only uses the world, nothing is written).
    let p = &mut rt.p2p;
    let n = world_ranks.unwrap_or(0);
    let first = match world_ranks {
        Some(_) if st.all_world => p.len(),
        Some(_) => p
            .comm
            .iter()
            .zip(&p.peer)
            .position(|(&d, &peer)| d != 0 || (peer >= n && peer != DUMPI_ANY as u32))
            .unwrap_or(p.len()),
        None => 0,
    };
    let mut keep = vec![true; if first < p.len() { p.len() } else { 0 }];
    for (i, keep) in keep.iter_mut().enumerate().skip(first) {
        let local = p.peer[i] as i32;
        let d = p.comm[i] as usize;
        let members = infos[d].members.as_deref();
        match (comm_ids[d], members) {
            (Some(cid), Some(m)) => {
                p.comm[i] = cid;
                p.peer[i] = if local == DUMPI_ANY {
                    ANY_SOURCE
                } else {
                    match m.get(local as usize) {
                        Some(&w) => w,
                        // A status source outside the communicator: keep the wildcard.
                        None if st.wildcards.binary_search(&i).is_ok() => ANY_SOURCE,
                        None => {
                            *keep = false;
                            continue;
                        }
                    }
                };
            }
            _ => *keep = false,
        }
    }
    if keep.iter().any(|k| !k) {
        dropped += keep.iter().filter(|k| !**k).count() as u64;
        p.retain_rows(&keep);
    }
    // Collectives: roots to world ranks, bytes that depend on the communicator.
    let c = &mut rt.collectives;
    let mut keep = vec![true; c.len()];
    for (i, (root, bytes)) in st.coll_fix.into_iter().enumerate() {
        let d = c.comm[i] as usize;
        let (Some(cid), Some(m)) = (comm_ids[d], infos[d].members.as_deref()) else {
            keep[i] = false;
            continue;
        };
        c.comm[i] = cid;
        let size = m.len() as u64;
        // This rank's place in the communicator, looked for only by the collectives whose bytes
        // depend on it (a search over the members; on the identity world it is the rank).
        let me = || match world_ranks {
            Some(_) if d == 0 => Some(r as usize),
            _ => m.iter().position(|&w| w == r),
        };
        c.root[i] = if root >= 0 {
            match m.get(root as usize) {
                Some(&w) => w,
                None => {
                    bad_root += 1;
                    NO_ROOT
                }
            }
        } else {
            NO_ROOT
        };
        let (s, v) = match bytes {
            CollBytes::Plain {
                sent,
                recv,
                sent_per_member,
                recv_per_member,
            } => (
                if sent_per_member {
                    sent.saturating_mul(size)
                } else {
                    sent
                },
                if recv_per_member {
                    recv.saturating_mul(size)
                } else {
                    recv
                },
            ),
            CollBytes::ByRoot { root: at_root, other } => {
                if root >= 0 && me() == Some(root as usize) {
                    at_root
                } else {
                    other
                }
            }
            CollBytes::ReduceScatter { counts, size: ts } => {
                let total: u64 = counts.iter().map(|&x| x.max(0) as u64).sum::<u64>().saturating_mul(ts);
                let mine = me()
                    .and_then(|i| counts.get(i))
                    .map_or(0, |&x| (x.max(0) as u64).saturating_mul(ts));
                (total, mine)
            }
        };
        c.bytes_sent[i] = s;
        c.bytes_recv[i] = v;
    }
    if keep.iter().any(|k| !k) {
        dropped += keep.iter().filter(|k| !**k).count() as u64;
        c.retain_rows(&keep);
    }

    // The time columns hold each time minus the base (wrapping); every time is at least the
    // origin, so adding base - origin (wrapping) leaves each at its time minus the origin.
    let shift = st.time_base.wrapping_sub(origin);
    if shift != 0 {
        for t in rt.calls.enter.iter_mut().chain(rt.calls.exit.iter_mut()) {
            *t = t.wrapping_add(shift);
        }
        for m in &mut rt.metrics {
            for t in &mut m.time {
                *t = t.wrapping_add(shift);
            }
        }
    }
    rt.span = rt
        .span
        .map(|(a, b)| (a.saturating_sub(origin), b.saturating_sub(origin)));
    (dropped, bad_root)
}

/// Replace every id of `column` by `map[id]` (ids outside `map`, such as [`NO_CALLPATH`], stay).
/// Nothing is written when `map` is the identity, as it is for the first rank and usually for
/// the others.
fn renumber(column: &mut [u32], map: &[u32]) {
    if map.iter().enumerate().all(|(i, &id)| id == i as u32) {
        return;
    }
    for id in column {
        if let Some(&to) = map.get(*id as usize) {
            *id = to;
        }
    }
}

/// Members of the sub-grid of world rank `me` when `MPI_Cart_sub` keeps the dimensions flagged
/// in `remain` of a grid with `dims` over `parent` (row-major ranks, no reordering): the grid
/// ranks whose coordinates agree with `me`'s in every dropped dimension, in grid-rank order.
fn cart_sub_members(parent: &[Rank], dims: &[i32], remain: &[i32], me: Rank) -> Option<Vec<Rank>> {
    if dims.is_empty() || dims.len() != remain.len() || dims.iter().any(|&d| d <= 0) {
        return None;
    }
    let size = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d as usize))?;
    if size > parent.len() {
        return None;
    }
    let coords = |mut l: usize| -> Vec<usize> {
        let mut c = vec![0; dims.len()];
        for i in (0..dims.len()).rev() {
            c[i] = l % dims[i] as usize;
            l /= dims[i] as usize;
        }
        c
    };
    let mine = coords(parent[..size].iter().position(|&m| m == me)?);
    let dropped = |c: &[usize]| -> Vec<usize> { (0..dims.len()).filter(|&i| remain[i] == 0).map(|i| c[i]).collect() };
    let key = dropped(&mine);
    Some(
        (0..size)
            .filter(|&l| dropped(&coords(l)) == key)
            .map(|l| parent[l])
            .collect(),
    )
}
