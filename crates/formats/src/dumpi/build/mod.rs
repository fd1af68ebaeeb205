//! The model layer: DUMPI records of all ranks → one [`Trace`].
//!
//! DUMPI stores communicator, group and request handles local to each rank's file, and peers
//! relative to the communicator of the call. Communicator membership can depend on every rank
//! (`MPI_Comm_split` orders members by the colour and key all ranks passed), so the reader works
//! in steps: each rank's file is read on its own ([`read_rank`], on any thread, in [`rank`] and
//! [`operations`]) into a part that names every communicator by how it was derived
//! ([`communicators`]: parent, how many creation calls on that parent came before, split
//! colour), which all member ranks agree on without knowing the members; the parts are merged
//! in rank order ([`Builder::merge`], in [`merge`]); once all are merged the builder computes
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

mod communicators;
mod datatypes;
mod merge;
mod operations;
mod rank;

#[allow(unused_imports)]
pub(crate) use self::{communicators::*, datatypes::*, merge::*, operations::*, rank::*};

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
    /// Operations posted on a handle that was still open, oldest first, below the one the table
    /// holds: Open MPI hands every `MPI_Isend` it finishes at once the same completed request,
    /// so several sends of a step share one handle (Meep, OpenFOAM), each completed where the
    /// handle is listed as completed. The newest completes first, so an operation whose
    /// completion the trace lacks stays at the bottom instead of taking its successors'.
    shadowed: FastMap<i32, Vec<usize>>,
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
