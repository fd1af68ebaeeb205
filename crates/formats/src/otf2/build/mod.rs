//! From OTF2 events to the tracelogic [`Trace`]: world ranks from the MPI location group
//! order, communicators with world-rank members, MPI calls from `MPI_*` Enter/Leave pairs,
//! point-to-point and collective operations from the MPI event records, metric samples.
//!
//! This module holds the state of a build (what every part shares, a part, the per-location
//! and per-rank state, the counters behind the warnings); its children hold the steps:
//! [`definitions`] (from the global definitions), [`parts`] (reading in parts and merging),
//! [`locations`] (the event loop), [`communicators`], [`operations`] (point-to-point,
//! collective and metric events), [`stage`] (rows staged and the final order) and [`partial`]
//! (streamed and distributed reads) and [`stepwise`] (a whole read fed one rank at a time).

use super::archive::Archive;
use super::defs::{GlobalDefs, LocalDefs, MAP_COMM, MAP_REGION, UNDEFINED_U32};
use super::events::{hot_p2p, hot_single, hot_timestamp, EventKind, LocationEvents, P2pPayload, HOT_WINDOW};
use crate::parallel::map_files;
use crate::{FormatError, InputFile, Progress, ProgressSink};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tracelogic_model::build::{CommTable, LocationRequests};
use tracelogic_model::{
    CallIdx, CallKind, CallpathId, CartTopology, CollectiveOp, CommId, Communicator, FuncId, Interner, Location,
    MetricSamples, P2pDir, Rank, RankTrace, RegionId, Time, Trace, ANY_SOURCE, ANY_TAG, COMM_WORLD, NOT_COMPLETED,
    NO_CALLPATH, NO_ROOT,
};

mod collective_bytes;
mod communicators;
mod definitions;
mod locations;
mod operations;
mod partial;
mod parts;
mod stage;
mod stepwise;

pub use self::partial::StreamPart;
pub use self::stepwise::StepwiseRead;
#[allow(unused_imports)]
pub(crate) use self::{communicators::*, definitions::*, locations::*, operations::*, partial::*, parts::*, stage::*};

/// Maps consulted on every event (communicators, requests): foldhash instead of SipHash, seeded
/// per map so a hostile file still cannot choose colliding keys.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

const PARADIGM_MPI: u8 = 4;
const GROUP_COMM_LOCATIONS: u8 = 4;
const GROUP_COMM_GROUP: u8 = 5;
const GROUP_COMM_SELF: u8 = 6;
const LOCATION_GROUP_PROCESS: u8 = 1;
/// `CollectiveRoot` SELF: the calling process is the root (inter-communicators).
const ROOT_SELF: u32 = u32::MAX - 1;
/// Call paths keep at most this many enclosing regions (the outermost ones).
const MAX_CALLPATH_DEPTH: usize = 128;
/// Region ids all call paths together may hold; later new paths are recorded as unknown,
/// so hostile nesting cannot make the model grow far beyond the input. (Small in unit tests,
/// so that they reach it.)
pub(super) const MAX_CALLPATH_STORAGE: usize = if cfg!(test) { 1 << 12 } else { 1 << 25 };
/// Events between two progress reports inside one location.
const PROGRESS_EVERY: u64 = 1 << 20;

/// Region facts the event loop needs, by position in the region table.
struct RegionInfo {
    name: String,
    mpi: bool,
}

/// What a part learnt about a region the first time one of its events named it.
#[derive(Clone, Copy)]
struct RegionSeen {
    /// An MPI function (a copy of [`RegionInfo::mpi`], next to what the event loop reads).
    mpi: bool,
    /// The part's region id of a user region ([`NO_REGION`] until seen).
    trace_region: RegionId,
    /// The part's interned MPI function and its kind, once a call of this region was seen.
    func: Option<(FuncId, CallKind)>,
}

/// `RegionSeen::trace_region` of a region not interned yet.
const NO_REGION: RegionId = u32::MAX;

/// What every part of the build reads and none changes: definitions, regions and the
/// communicators the definitions give.
struct Shared<'a> {
    archive: &'a Archive<'a>,
    defs: &'a GlobalDefs,
    clock: Clock,
    comms: FastMap<u32, CommMapping>,
    /// World ranks of the two groups of each inter-communicator.
    inter_groups: Vec<Vec<Rank>>,
    /// The communicators of the definitions, `MPI_COMM_WORLD` first.
    base_comms: CommTable,
    regions: Vec<RegionInfo>,
    /// Position of each region id in `regions` (`u32::MAX` for undefined ids), when the ids are
    /// dense enough to index directly; else the definitions' hash index is used.
    region_by_id: Vec<u32>,
    nranks: u32,
    /// Decode every event through the general decoder and its [`EventKind`] (the tests check
    /// that the direct path for the hot records gives the same trace).
    general_only: bool,
    /// The creator counts collective bytes as Score-P does: they are turned back into the
    /// calls' buffers ([`collective_bytes`]).
    score_p_bytes: bool,
}

/// State of one build shared by the parts running at the same time.
struct Run {
    /// More than one part: a part whose call paths would pass the budget stops and asks for
    /// the build in one part, which alone knows which paths come first.
    several: bool,
    /// Region ids held by the call paths of all parts.
    callpath_storage: AtomicUsize,
    /// Index of the earliest location whose read failed (`usize::MAX` if none): parts stop
    /// before later locations, whose errors cannot come first.
    failed_at: AtomicUsize,
}

/// The locations one part reads, in location order, and the ranks they belong to.
struct PartSpec {
    /// World rank of each of the part's rank slots.
    ranks: Vec<Rank>,
    /// (location index, rank slot) in location order.
    locations: Vec<(usize, usize)>,
}

/// Location of the first use of each item a part interned, by table (the key that orders
/// the items of all parts as a build in one part would have interned them).
#[derive(Default)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
struct FirstUse {
    functions: Vec<u32>,
    regions: Vec<u32>,
    callpaths: Vec<u32>,
    comms: Vec<u32>,
    metrics: Vec<u32>,
}

/// The trace of some ranks, built from their locations alone: columns plus the names,
/// call paths and communicators the part met, numbered in its own first-use order.
#[derive(Default)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
struct Part {
    /// The ranks, by slot.
    ranks: Vec<RankTrace>,
    functions: Interner,
    function_kinds: Vec<CallKind>,
    regions: Interner,
    callpaths: Vec<Vec<RegionId>>,
    /// Communicators created by events (ids after the definitions' ones).
    comms: CommTable,
    metrics: Interner,
    first_use: FirstUse,
    /// The program's command line from the first ProgramBegin, and its location.
    program: Option<(u32, String)>,
    /// Warnings about single locations, with the location's index.
    warnings: Vec<(u32, String)>,
    counters: Counters,
    /// The first failing location of the part and its error.
    failure: Option<(usize, FormatError)>,
    /// The call-path budget was exceeded with several parts: the build must be done in one.
    over_budget: bool,
}

/// Builds one part from its locations' events.
struct Builder<'s, 'a> {
    shared: &'s Shared<'a>,
    run: &'s Run,
    /// Where the event files' bytes are (see [`read_part`]).
    files: &'s [InputFile],
    part: Part,
    /// Communicators first met in events (no MPI group in the definitions), as OTF2 id → id.
    lazy_comms: FastMap<u32, CommId>,
    self_comms: FastMap<Rank, CommId>,
    regions: Vec<RegionSeen>,
    callpath_index: HashMap<Vec<RegionId>, CallpathId>,
    /// Per slot: metric id → its series in the rank's metrics.
    metric_series: Vec<HashMap<u32, usize>>,
    /// Per slot.
    requests: Vec<RankRequests>,
    /// Index of the location being read: the first-use key of what is interned now.
    at_location: u32,
    /// The last communicator resolved: (OTF2 id, rank, what [`Builder::comm`] gave); the
    /// answer for a pair never changes, and consecutive events nearly always name the same.
    last_comm: Option<(u32, Rank, (CommId, Option<usize>))>,
    /// Position in the region table of each local region id the location being read met
    /// (`u32::MAX` for ids not met yet); cleared per location, whose id maps differ.
    local_regions: Vec<u32>,
    /// The newest calls and operations of the rank being read, not yet in its columns.
    stage: Stage,
}

/// Oddities counted over the whole trace and reported once as warnings.
#[derive(Debug, Default)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
struct Counters {
    unknown_events: u64,
    unbalanced_leaves: u64,
    unclosed_calls: u64,
    unmatched_completions: u64,
    uncompleted_receives: u64,
    deep_paths: u64,
    dropped_paths: u64,
}

/// A completed non-blocking receive whose posting request was not seen (yet).
struct OrphanRecv {
    /// Order of arrival, so leftovers are listed deterministically.
    seq: u64,
    call: CallIdx,
    peer: Rank,
    tag: i32,
    comm: CommId,
    length: u64,
}

/// Requests of one rank across its locations (locations are read one after the other).
#[derive(Default)]
struct RankRequests {
    /// Posted sends: index of their operation in the rank's p2p table.
    isends: LocationRequests<usize>,
    /// Posted receives: the row of their operation in the rank's p2p table, appended when the
    /// request is posted (so that operations are appended in posting order) and filled in
    /// when the receive completes.
    irecvs: LocationRequests<usize>,
    /// Rows of receives whose request was cancelled, removed when the rank is done.
    cancelled_recvs: Vec<usize>,
    /// Started non-blocking collectives: the starting call (if inside one) and time.
    collectives: LocationRequests<(Option<CallIdx>, Time)>,
    /// Send completions seen before their send: the completing call.
    early_send_completions: LocationRequests<CallIdx>,
    /// Receive completions seen before their request.
    early_recvs: LocationRequests<OrphanRecv>,
}

/// The location an event belongs to, passed to the event handlers.
#[derive(Clone, Copy)]
struct Here<'f> {
    rank: Rank,
    /// The rank's slot in the part.
    slot: usize,
    loc: u16,
    /// Event file name, for errors.
    file: &'f str,
}

/// What the events of one location showed so far: their number and times.
#[derive(Clone, Copy)]
struct Seen {
    /// Events read.
    n: u64,
    /// Earliest and latest event time.
    first: Time,
    latest: Time,
    /// Time of the last event.
    last: Time,
}

impl Seen {
    #[inline(always)]
    fn event(&mut self, t: Time) {
        self.n += 1;
        self.last = t;
        self.first = self.first.min(t);
        self.latest = self.latest.max(t);
    }
}

/// The progress callback of [`read_part`]: (location, offset inside its event file or `None`
/// at its start, bytes of the part's earlier locations) → false to cancel.
type Report<'r> = dyn FnMut(usize, Option<u64>, u64) -> bool + 'r;

/// Per-location state of the event loop.
#[derive(Default)]
struct LocationState {
    /// Open regions: the call index of an MPI call, `None` for a user region.
    stack: Vec<Option<CallIdx>>,
    /// Regions of the open non-MPI frames (model region ids).
    user_path: Vec<RegionId>,
    path: Option<CallpathId>,
    open_calls: Vec<CallIdx>,
    collective_begin: Option<Time>,
}

fn is_mpi_region(name: &str, paradigm: u8) -> bool {
    paradigm == PARADIGM_MPI || name.starts_with("MPI_") || name.starts_with("PMPI_")
}

/// The MPI function an MPI region names: TAU names its MPI regions `MPI_Send()`, Score-P and
/// our writers `MPI_Send`; the call is the same function either way.
fn mpi_function_name(name: &str) -> &str {
    let t = name.trim();
    t.strip_suffix("()").map(str::trim_end).unwrap_or(t)
}

impl Counters {
    fn add(&mut self, o: &Counters) {
        self.unknown_events += o.unknown_events;
        self.unbalanced_leaves += o.unbalanced_leaves;
        self.unclosed_calls += o.unclosed_calls;
        self.unmatched_completions += o.unmatched_completions;
        self.uncompleted_receives += o.uncompleted_receives;
        self.deep_paths += o.deep_paths;
        self.dropped_paths += o.dropped_paths;
    }

    /// One warning per kind of oddity seen.
    fn warn(&self, w: &mut Vec<String>) {
        let c = self;
        if c.unknown_events > 0 {
            w.push(format!("skipped {} event records with unknown ids", c.unknown_events));
        }
        if c.unbalanced_leaves > 0 {
            w.push(format!(
                "{} Leave events without a matching Enter were ignored",
                c.unbalanced_leaves
            ));
        }
        if c.unclosed_calls > 0 {
            w.push(format!(
                "{} MPI calls were never left; they end at their location's last event",
                c.unclosed_calls
            ));
        }
        if c.unmatched_completions > 0 {
            w.push(format!(
                "{} MpiIsendComplete events name no pending MpiIsend request",
                c.unmatched_completions
            ));
        }
        if c.deep_paths > 0 {
            w.push(format!(
                "{} MPI calls were nested in more than {MAX_CALLPATH_DEPTH} regions; their call paths keep the outermost {MAX_CALLPATH_DEPTH}",
                c.deep_paths
            ));
        }
        if c.dropped_paths > 0 {
            w.push(format!(
                "{} MPI calls have no call path: the trace has more distinct call paths than tracelogic keeps",
                c.dropped_paths
            ));
        }
        if c.uncompleted_receives > 0 {
            w.push(format!(
                "{} receive requests (MpiIrecvRequest) never completed; their sender is unknown, so they are not listed",
                c.uncompleted_receives
            ));
        }
    }
}
