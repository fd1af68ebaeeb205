//! From OTF2 events to the tracelogic [`Trace`]: world ranks from the MPI location group
//! order, communicators with world-rank members, MPI calls from `MPI_*` Enter/Leave pairs,
//! point-to-point and collective operations from the MPI event records, metric samples.

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

/// OTF2 `CollectiveOp` enum → model collective (handles and windows become `Other`).
fn collective_from_enum(op: u8) -> CollectiveOp {
    use CollectiveOp::*;
    match op {
        0 => Barrier,
        1 => Bcast,
        2 => Gather,
        3 => Gatherv,
        4 => Scatter,
        5 => Scatterv,
        6 => Allgather,
        7 => Allgatherv,
        8 => Alltoall,
        9 => Alltoallv,
        10 => Alltoallw,
        11 => Allreduce,
        12 => Reduce,
        13 => ReduceScatter,
        14 => Scan,
        15 => Exscan,
        16 => ReduceScatterBlock,
        _ => Other,
    }
}

/// Model collective → OTF2 `CollectiveOp` enum (used by the writer).
pub(crate) fn collective_to_enum(op: CollectiveOp) -> u8 {
    (0..=16).find(|&e| collective_from_enum(e) == op).unwrap_or(0)
}

/// How an OTF2 communicator maps to model communicators.
#[derive(Debug, Clone, Copy)]
enum CommMapping {
    /// One model communicator for every rank.
    Fixed(CommId),
    /// `MPI_COMM_SELF`-like: a one-member communicator per rank.
    PerRank,
    /// An inter-communicator: one model communicator over both groups; a peer is a rank of
    /// the group the caller is not in.
    Inter { id: CommId, a: usize, b: usize },
}

/// Ticks → nanoseconds since the trace start.
#[derive(Debug, Clone, Copy)]
struct Clock {
    offset: u64,
    resolution: u64,
}

impl Clock {
    #[inline(always)]
    fn ns(self, t: u64) -> Time {
        let d = t.saturating_sub(self.offset);
        if self.resolution == 1_000_000_000 {
            return d;
        }
        ((d as u128 * 1_000_000_000 + self.resolution as u128 / 2) / self.resolution as u128) as Time
    }
}

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
#[derive(Default)]
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

/// Archives whose event and local definition files hold less than this many bytes are read on
/// the calling thread whatever the threads asked: starting threads would cost more than it saves.
pub(crate) const PARALLEL_FROM_BYTES: u64 = 1 << 20;

/// One part per MPI rank holding its locations in definition order (parts in the order their
/// ranks' first locations come), and a warning for each location with events that belongs to
/// no rank. What the threaded, streamed and distributed reads split a trace by.
fn parts_by_rank(
    defs: &GlobalDefs,
    ranks_of_groups: &HashMap<u32, Rank>,
    nranks: u32,
) -> (Vec<PartSpec>, Vec<(u32, String)>) {
    let mut warnings = Vec::new();
    let mut per_rank: Vec<PartSpec> = Vec::new();
    let mut part_of_rank = vec![usize::MAX; nranks as usize];
    for (i, loc) in defs.locations.items.iter().enumerate() {
        let Some(&rank) = ranks_of_groups.get(&loc.group) else {
            if loc.number_of_events > 0 {
                warnings.push((
                    i as u32,
                    format!(
                        "location {} ({}) belongs to no MPI rank; its {} events were not read",
                        loc.id,
                        defs.string(loc.name),
                        loc.number_of_events
                    ),
                ));
            }
            continue;
        };
        let p = &mut part_of_rank[rank as usize];
        if *p == usize::MAX {
            *p = per_rank.len();
            per_rank.push(PartSpec {
                ranks: vec![rank],
                locations: Vec::new(),
            });
        }
        per_rank[*p].locations.push((i, 0));
    }
    (per_rank, warnings)
}

/// Build the trace of `archive`.
///
/// With one thread every location is read in one part, in location order, with progress per
/// location. With `threads > 1` the locations of each rank form a part (requests completed on
/// another location of the rank and multi-location call order stay inside it); the parts are
/// read on up to `threads` threads and merged in location order, each table's items in the
/// order of their first use, so the trace (ids included) and the error are the ones the
/// single-part read gives.
pub(crate) fn build(
    archive: &Archive,
    progress: &mut dyn ProgressSink,
    general_only: bool,
    threads: usize,
) -> Result<Trace, FormatError> {
    let defs = &archive.defs;
    let defs_name = archive.files[archive.defs_file].name.as_str();
    let (ranks_of_groups, nranks) = world_ranks(defs, defs_name)?;
    let mut trace = Trace::new("otf2", archive.anchor_name(), nranks);
    add_meta(archive, &mut trace);
    let shared = Shared::new(archive, general_only, nranks, defs_name)?;
    trace.comms = shared.base_comms.comms.clone();
    add_cartesian(defs, &shared, &mut trace);
    if !defs.unknown_records.is_empty() {
        let ids: Vec<String> = defs
            .unknown_records
            .iter()
            .take(5)
            .map(|(id, off)| format!("{id} at byte {off}"))
            .collect();
        trace.warnings.push(format!(
            "{defs_name}: skipped {} definition records with unknown ids ({})",
            defs.unknown_records.len(),
            ids.join(", ")
        ));
    }

    let files = archive.files;
    let bytes_total: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    let head = files[archive.anchor_file].bytes.len() as u64 + files[archive.defs_file].bytes.len() as u64;
    let (per_rank, location_warnings) = parts_by_rank(defs, &ranks_of_groups, nranks);
    let whole = PartSpec {
        ranks: (0..nranks).collect(),
        locations: defs
            .locations
            .items
            .iter()
            .enumerate()
            .filter_map(|(i, loc)| ranks_of_groups.get(&loc.group).map(|&r| (i, r as usize)))
            .collect(),
    };
    // Each part sets up its own view of the region table: with many parts and many regions
    // (more than a few per input byte) that would cost more than the read, so one part it is.
    let setup = (per_rank.len() as u64).saturating_mul(shared.regions.len() as u64);
    let parallel = threads > 1 && per_rank.len() > 1 && setup <= bytes_total.saturating_mul(4).max(1 << 24);
    let parts = match parallel {
        true => {
            read_parts(&shared, &per_rank, threads, progress)?.map(|parts| per_rank.into_iter().zip(parts).collect())
        }
        false => None,
    };
    let parts = match parts {
        Some(parts) => parts,
        None => {
            let part = read_in_one_part(&shared, &whole, progress, head, bytes_total)?;
            vec![(whole, part)]
        }
    };
    merge(&mut trace, parts, location_warnings);
    progress.report(&Progress {
        stage: "done".into(),
        bytes_done: bytes_total,
        bytes_total,
    });
    Ok(trace)
}

/// Rows to reserve in a rank's call and point-to-point columns for location `index`: the events
/// the definitions announce over three (a call is at least an Enter and a Leave, a
/// point-to-point operation at least one event), capped by what the event file can hold (an
/// event takes at least 2 bytes).
fn reserved_rows(shared: &Shared, files: &[InputFile], index: usize) -> usize {
    let Some(evt) = shared.archive.locations[index].evt else {
        return 0;
    };
    let announced = shared.defs.locations.items[index].number_of_events;
    let events_most = (files[evt].bytes.len() / 2) as u64;
    announced.min(events_most) as usize / 3
}

/// Least event bytes of a rank whose columns [`read_parts`] reserves on the calling thread
/// before the reading threads start. glibc gives each new thread its own heap, grown one
/// `mprotect` at a time, and those calls serialise against the other thread's page faults;
/// reserved before the threads run, the columns come from the main heap or their own mappings.
/// Below this size reserving costs the calling thread more than it saves.
pub(super) const RESERVE_ON_CALLER_BYTES: u64 = 256 << 10;

/// Bytes of the files of a part's locations (event and local definition files), the size of
/// file `f` being `size(f)`.
fn part_bytes_of(archive: &Archive, spec: &PartSpec, size: &dyn Fn(usize) -> u64) -> u64 {
    spec.locations
        .iter()
        .flat_map(|&(i, _)| [archive.locations[i].evt, archive.locations[i].def])
        .flatten()
        .map(size)
        .sum()
}

/// Read every location in one part on the calling thread, reporting each location and
/// progress inside its event file; `head` is the bytes read before the locations.
fn read_in_one_part(
    shared: &Shared,
    spec: &PartSpec,
    progress: &mut dyn ProgressSink,
    head: u64,
    bytes_total: u64,
) -> Result<Part, FormatError> {
    let run = Run {
        several: false,
        callpath_storage: AtomicUsize::new(0),
        failed_at: AtomicUsize::new(usize::MAX),
    };
    let archive = shared.archive;
    let mut report = |index: usize, inside: Option<u64>, before: u64| {
        let stage = match inside {
            None => {
                let loc = &shared.defs.locations.items[index];
                format!("reading location {} ({} events)", loc.id, loc.number_of_events)
            }
            Some(_) => {
                let evt = archive.locations[index]
                    .evt
                    .map_or("", |f| archive.files[f].name.as_str());
                format!("reading {evt}")
            }
        };
        progress.report(&Progress {
            stage,
            bytes_done: head + before + inside.unwrap_or(0),
            bytes_total,
        })
    };
    let mut part = read_part(shared, &run, spec, None, &mut report, archive.files)?;
    match part.failure.take() {
        Some((_, e)) => Err(e),
        None => Ok(part),
    }
}

/// Read the parts on up to `threads` threads, in part order. `None` when the call paths of the
/// parts together passed the budget (only a read in one part knows which paths it keeps).
fn read_parts(
    shared: &Shared,
    specs: &[PartSpec],
    threads: usize,
    progress: &mut dyn ProgressSink,
) -> Result<Option<Vec<Part>>, FormatError> {
    read_parts_in(shared, specs, threads, progress, shared.archive.files)
}

/// [`read_parts`] with the event files' bytes taken from `files` (the archive's files at the
/// same positions; see [`read_part`]).
fn read_parts_in(
    shared: &Shared,
    specs: &[PartSpec],
    threads: usize,
    progress: &mut dyn ProgressSink,
    files: &[InputFile],
) -> Result<Option<Vec<Part>>, FormatError> {
    let run = Run {
        several: true,
        callpath_storage: AtomicUsize::new(0),
        failed_at: AtomicUsize::new(usize::MAX),
    };
    let sizes: Vec<u64> = specs
        .iter()
        .map(|s| part_bytes_of(shared.archive, s, &|f| files[f].bytes.len() as u64))
        .collect();
    let reserved: Vec<Mutex<Option<Vec<RankTrace>>>> = specs
        .iter()
        .zip(&sizes)
        .map(|(spec, &size)| {
            Mutex::new((size >= RESERVE_ON_CALLER_BYTES).then(|| {
                let mut ranks = empty_ranks(spec);
                for &(index, slot) in &spec.locations {
                    let rows = reserved_rows(shared, files, index);
                    ranks[slot].reserve(rows, rows, 0);
                }
                ranks
            }))
        })
        .collect();
    let anchor = shared.archive.anchor_name();
    let mut parts = map_files(
        specs,
        &sizes,
        threads,
        &|i| format!("reading the locations of rank {}", specs[i].ranks[0]),
        &|_| anchor.to_owned(),
        progress,
        |i, spec, advance| {
            let ranks = reserved[i].lock().ok().and_then(|mut r| r.take());
            read_part(
                shared,
                &run,
                spec,
                ranks,
                &mut |_, inside, before| advance(before + inside.unwrap_or(0)),
                files,
            )
        },
    )?;
    if parts.iter().any(|p| p.over_budget) {
        return Ok(None);
    }
    let first_failure = parts
        .iter_mut()
        .filter_map(|p| p.failure.take())
        .min_by_key(|(index, _)| *index);
    match first_failure {
        Some((_, e)) => Err(e),
        None => Ok(Some(parts)),
    }
}

/// Read the locations of one part. `report(location, offset inside its event file or None at
/// its start, bytes of the part's earlier locations)` returns false to cancel. A location that
/// fails ends the part with [`Part::failure`]; only cancellation is an `Err`. The event files'
/// bytes are taken from `files` (the archive's files, or a set of the same names holding only
/// the part's event files when ranks are streamed one at a time).
fn read_part(
    shared: &Shared,
    run: &Run,
    spec: &PartSpec,
    ranks: Option<Vec<RankTrace>>,
    report: &mut dyn FnMut(usize, Option<u64>, u64) -> bool,
    files: &[InputFile],
) -> Result<Part, FormatError> {
    let slots = spec.ranks.len();
    let base = &shared.base_comms;
    let mut b = Builder {
        shared,
        run,
        files,
        part: Part {
            ranks: ranks.unwrap_or_else(|| empty_ranks(spec)),
            comms: CommTable::starting_at(base.first + base.comms.len() as CommId),
            ..Default::default()
        },
        lazy_comms: FastMap::default(),
        self_comms: FastMap::default(),
        regions: shared
            .regions
            .iter()
            .map(|r| RegionSeen {
                mpi: r.mpi,
                trace_region: NO_REGION,
                func: None,
            })
            .collect(),
        callpath_index: HashMap::new(),
        metric_series: vec![HashMap::new(); slots],
        requests: (0..slots).map(|_| RankRequests::default()).collect(),
        at_location: 0,
        last_comm: None,
        local_regions: Vec::new(),
        stage: Stage::default(),
    };
    let archive = shared.archive;
    let defs_name = archive.files[archive.defs_file].name.as_str();
    let mut multi_location = vec![false; slots];
    let mut done = 0u64;
    for &(index, slot) in &spec.locations {
        if run.failed_at.load(Ordering::Relaxed) < index {
            break;
        }
        if run.several && (b.part.over_budget || run.callpath_storage.load(Ordering::Relaxed) > MAX_CALLPATH_STORAGE) {
            b.part.over_budget = true;
            break;
        }
        if !report(index, None, done) {
            return Err(FormatError::cancelled(archive.anchor_name()));
        }
        b.at_location = index as u32;
        let loc = &shared.defs.locations.items[index];
        let rank = spec.ranks[slot];
        let rt = &mut b.part.ranks[slot];
        if rt.locations.len() >= u16::MAX as usize {
            let e = FormatError::at_offset(
                defs_name,
                loc.offset,
                format!("rank {rank} has more than {} locations", u16::MAX),
            );
            b.fail(index, e);
            break;
        }
        let loc_index = rt.locations.len() as u16;
        rt.locations.push(Location {
            id: loc.id,
            name: shared.defs.string(loc.name).to_owned(),
        });
        if loc_index > 0 {
            multi_location[slot] = true;
        }
        let here = (rank, slot, loc_index);
        if let Err(e) = b.read_location(index, here, report, done) {
            if e.cancelled {
                return Err(e);
            }
            b.fail(index, e);
            break;
        }
        let lf = &archive.locations[index];
        for f in [lf.evt, lf.def].into_iter().flatten() {
            done += files[f].bytes.len() as u64;
        }
    }
    if b.part.failure.is_some() || b.part.over_budget {
        return Ok(b.part);
    }
    b.finish_requests();
    for (rt, multi) in b.part.ranks.iter_mut().zip(multi_location) {
        if multi {
            sort_calls_by_entry(rt);
        }
        p2p_in_posting_order(rt);
        rt.normalise_order();
    }
    Ok(b.part)
}

/// The part's ranks with no columns yet, by slot.
fn empty_ranks(spec: &PartSpec) -> Vec<RankTrace> {
    spec.ranks
        .iter()
        .map(|&rank| RankTrace {
            rank,
            ..Default::default()
        })
        .collect()
}

/// The items of one table over all parts as (first-use location, part, id in the part),
/// in the order a read in one part would have interned them.
fn first_use_order(parts: &[(PartSpec, Part)], table: impl Fn(&FirstUse) -> &[u32]) -> Vec<(u32, u32, u32)> {
    let mut order: Vec<(u32, u32, u32)> = parts
        .iter()
        .enumerate()
        .flat_map(|(p, (_, part))| {
            table(&part.first_use)
                .iter()
                .enumerate()
                .map(move |(id, &loc)| (loc, p as u32, id as u32))
        })
        .collect();
    // A location belongs to one part, so the keys are distinct.
    order.sort_unstable();
    order
}

/// Intern the names of one table of every part into `into` in first-use order; the map from
/// each part's ids to the trace's.
fn merge_names(
    parts: &[(PartSpec, Part)],
    table: impl Fn(&FirstUse) -> &[u32],
    names: impl Fn(&Part) -> &Interner,
    into: &mut Interner,
) -> Vec<Vec<u32>> {
    let mut map: Vec<Vec<u32>> = parts.iter().map(|(_, p)| vec![0; names(p).len()]).collect();
    for (_, p, id) in first_use_order(parts, table) {
        map[p as usize][id as usize] = into.intern(names(&parts[p as usize].1).name(id));
    }
    map
}

/// Put the parts into `trace`: names, call paths and communicators in first-use order, the
/// ranks with their ids renumbered, warnings in location order.
fn merge(trace: &mut Trace, parts: Vec<(PartSpec, Part)>, mut warnings: Vec<(u32, String)>) {
    let functions = merge_names(&parts, |f| &f.functions, |p| &p.functions, &mut trace.functions);
    let regions = merge_names(&parts, |f| &f.regions, |p| &p.regions, &mut trace.regions);
    let metrics = merge_names(&parts, |f| &f.metrics, |p| &p.metrics, &mut trace.metrics);
    let mut callpaths: Vec<Vec<CallpathId>> = parts.iter().map(|(_, p)| vec![0; p.callpaths.len()]).collect();
    let mut path = Vec::new();
    for (_, p, id) in first_use_order(&parts, |f| &f.callpaths) {
        let (p, id) = (p as usize, id as usize);
        path.clear();
        path.extend(parts[p].1.callpaths[id].iter().map(|&r| regions[p][r as usize]));
        callpaths[p][id] = trace.intern_callpath(&path);
    }
    let mut comms: Vec<Vec<CommId>> = parts.iter().map(|(_, p)| vec![0; p.comms.comms.len()]).collect();
    for (_, p, id) in first_use_order(&parts, |f| &f.comms) {
        let c = &parts[p as usize].1.comms.comms[id as usize];
        comms[p as usize][id as usize] = trace.add_comm(&c.name, c.members.clone());
    }
    let mut counters = Counters::default();
    let mut program: Option<(u32, String)> = None;
    for (p, (spec, part)) in parts.into_iter().enumerate() {
        warnings.extend(part.warnings);
        counters.add(&part.counters);
        if let Some((at, cmd)) = part.program {
            if program.as_ref().is_none_or(|(first, _)| at < *first) {
                program = Some((at, cmd));
            }
        }
        let renumber = Renumbering {
            functions: &functions[p],
            callpaths: &callpaths[p],
            comms_first: part.comms.first,
            comms: &comms[p],
            metrics: &metrics[p],
        };
        for (slot, mut rt) in part.ranks.into_iter().enumerate() {
            renumber.apply(&mut rt);
            trace.ranks[spec.ranks[slot] as usize] = rt;
        }
    }
    if let Some((_, cmd)) = program {
        trace.meta.push(("program".into(), cmd));
    }
    warnings.sort_by_key(|w| w.0);
    trace.warnings.extend(warnings.into_iter().map(|w| w.1));
    counters.warn(&mut trace.warnings);
}

/// A part's ids → the trace's.
struct Renumbering<'m> {
    functions: &'m [FuncId],
    callpaths: &'m [CallpathId],
    comms_first: CommId,
    comms: &'m [CommId],
    metrics: &'m [u32],
}

impl Renumbering<'_> {
    fn apply(&self, rt: &mut RankTrace) {
        fn identity(map: &[u32], first: u32) -> bool {
            map.iter().enumerate().all(|(i, &m)| m == first + i as u32)
        }
        if !identity(self.functions, 0) {
            rt.calls.func.iter_mut().for_each(|f| *f = self.functions[*f as usize]);
        }
        if !identity(self.callpaths, 0) {
            for c in rt.calls.callpath.iter_mut().filter(|c| **c != NO_CALLPATH) {
                *c = self.callpaths[*c as usize];
            }
        }
        if !identity(self.comms, self.comms_first) {
            let first = self.comms_first;
            for c in rt.p2p.comm.iter_mut().chain(rt.collectives.comm.iter_mut()) {
                if *c >= first {
                    *c = self.comms[(*c - first) as usize];
                }
            }
        }
        if !identity(self.metrics, 0) {
            rt.metrics
                .iter_mut()
                .for_each(|m| m.metric = self.metrics[m.metric as usize]);
        }
    }
}

/// World rank of each location group: its position in the MPI COMM_LOCATIONS group, or else
/// the order of process location groups.
fn world_ranks(defs: &GlobalDefs, file: &str) -> Result<(HashMap<u32, Rank>, u32), FormatError> {
    let mut ranks = HashMap::new();
    let mpi_locations = defs
        .groups
        .items
        .iter()
        .find(|g| g.kind == GROUP_COMM_LOCATIONS && g.paradigm == PARADIGM_MPI);
    if let Some(g) = mpi_locations {
        for (rank, &loc_id) in g.members.iter().enumerate() {
            let loc = defs.locations.get(loc_id).ok_or_else(|| {
                FormatError::at_offset(
                    file,
                    g.offset,
                    format!("MPI location group lists undefined location {loc_id}"),
                )
            })?;
            ranks.entry(loc.group).or_insert(rank as Rank);
        }
        return Ok((ranks, g.members.len() as u32));
    }
    let processes: Vec<u32> = defs
        .location_groups
        .items
        .iter()
        .filter(|g| g.kind == LOCATION_GROUP_PROCESS)
        .map(|g| g.id)
        .collect();
    let groups = if processes.is_empty() {
        defs.location_groups.items.iter().map(|g| g.id).collect()
    } else {
        processes
    };
    for (rank, g) in groups.iter().enumerate() {
        ranks.insert(*g, rank as Rank);
    }
    Ok((ranks, groups.len() as u32))
}

fn add_meta(archive: &Archive, trace: &mut Trace) {
    let a = &archive.anchor;
    let c = &archive.defs.clock;
    let meta = &mut trace.meta;
    meta.push((
        "otf2 version".into(),
        format!("{}.{}.{}", a.version.0, a.version.1, a.version.2),
    ));
    for (k, v) in [
        ("creator", &a.creator),
        ("machine", &a.machine_name),
        ("description", &a.description),
    ] {
        if !v.is_empty() {
            meta.push((k.into(), v.clone()));
        }
    }
    meta.push(("timer resolution (ticks/s)".into(), c.timer_resolution.to_string()));
    meta.push(("global offset (ticks)".into(), c.global_offset.to_string()));
    meta.push(("trace length (ticks)".into(), c.trace_length.to_string()));
    if let Some(rt) = c.realtime_timestamp {
        meta.push(("realtime timestamp (ns since epoch)".into(), rt.to_string()));
    }
    meta.push(("locations".into(), archive.defs.locations.len().to_string()));
    meta.push(("trace id".into(), format!("{:016x}", a.trace_id)));
    for (k, v) in &a.properties {
        meta.push((k.clone(), v.clone()));
    }
}

/// Put a rank's point-to-point operations in posting order (receives whose completion came
/// before their request, and multi-threaded ranks, are out of order): a stable counting sort over the posting call indices, linear where the model's
/// `normalise_order` sorts by comparison (its check then finds them in order).
fn p2p_in_posting_order(rt: &mut RankTrace) {
    let p = &mut rt.p2p;
    if !p.post.windows(2).any(|w| w[0] > w[1]) {
        return;
    }
    let calls = rt.calls.len();
    if p.post.len() > u32::MAX as usize || p.post.iter().any(|&c| c as usize >= calls) {
        return;
    }
    // starts[c] = first slot of the operations posted by call c.
    let mut starts = vec![0u32; calls + 1];
    for &c in &p.post {
        starts[c as usize + 1] += 1;
    }
    for c in 0..calls {
        starts[c + 1] += starts[c];
    }
    let mut perm = vec![0u32; p.post.len()];
    for (i, &c) in p.post.iter().enumerate() {
        let slot = &mut starts[c as usize];
        perm[*slot as usize] = i as u32;
        *slot += 1;
    }
    fn gather<T: Copy>(col: &mut Vec<T>, perm: &[u32]) {
        *col = perm.iter().map(|&i| col[i as usize]).collect();
    }
    gather(&mut p.post, &perm);
    gather(&mut p.complete, &perm);
    gather(&mut p.dir, &perm);
    gather(&mut p.peer, &perm);
    gather(&mut p.tag, &perm);
    gather(&mut p.comm, &perm);
    gather(&mut p.bytes, &perm);
}

/// Reorder the calls of a rank with several threads by entry time (stable, so each thread
/// keeps its order) and renumber the operations that refer to them.
fn sort_calls_by_entry(rt: &mut RankTrace) {
    let c = &mut rt.calls;
    let mut perm: Vec<usize> = (0..c.len()).collect();
    perm.sort_by_key(|&i| c.enter[i]);
    if perm.iter().enumerate().all(|(a, &b)| a == b) {
        return;
    }
    let mut new_index = vec![0 as CallIdx; perm.len()];
    for (new, &old) in perm.iter().enumerate() {
        new_index[old] = new as CallIdx;
    }
    c.func = perm.iter().map(|&i| c.func[i]).collect();
    c.kind = perm.iter().map(|&i| c.kind[i]).collect();
    c.enter = perm.iter().map(|&i| c.enter[i]).collect();
    c.exit = perm.iter().map(|&i| c.exit[i]).collect();
    c.callpath = perm.iter().map(|&i| c.callpath[i]).collect();
    c.location = perm.iter().map(|&i| c.location[i]).collect();
    let renumber = |i: &mut CallIdx| {
        if *i != NOT_COMPLETED {
            *i = new_index[*i as usize];
        }
    };
    rt.p2p.post.iter_mut().for_each(renumber);
    rt.p2p.complete.iter_mut().for_each(renumber);
    rt.collectives.call.iter_mut().for_each(renumber);
}

impl<'a> Shared<'a> {
    /// The definitions' facts every part reads: regions, communicators, the clock.
    fn new(
        archive: &'a Archive<'a>,
        general_only: bool,
        nranks: u32,
        defs_name: &str,
    ) -> Result<Shared<'a>, FormatError> {
        let defs = &archive.defs;
        let regions = defs
            .regions
            .items
            .iter()
            .map(|r| {
                let name = defs.string(r.name).to_owned();
                RegionInfo {
                    mpi: is_mpi_region(&name, r.paradigm),
                    name,
                }
            })
            .collect();
        let mut region_by_id = Vec::new();
        let max_id = defs.regions.items.iter().map(|r| r.id as usize).max().unwrap_or(0);
        if max_id < 4 * defs.regions.items.len() + 1024 {
            region_by_id = vec![u32::MAX; max_id + 1];
            for (pos, r) in defs.regions.items.iter().enumerate() {
                region_by_id[r.id as usize] = pos as u32;
            }
        }
        let mut base_comms = CommTable::default();
        base_comms.add(("MPI_COMM_WORLD".into(), (0..nranks).collect()));
        let mut shared = Shared {
            archive,
            defs,
            clock: Clock {
                offset: defs.clock.global_offset,
                resolution: defs.clock.timer_resolution,
            },
            comms: FastMap::default(),
            inter_groups: Vec::new(),
            base_comms,
            regions,
            region_by_id,
            nranks,
            general_only,
        };
        shared.define_comms(defs_name, nranks)?;
        Ok(shared)
    }

    /// Communicators with world-rank members; the one over all ranks in order becomes
    /// `MPI_COMM_WORLD` (id 0), other MPI communicators follow in definition order.
    fn define_comms(&mut self, file: &str, nranks: u32) -> Result<(), FormatError> {
        let defs = self.defs;
        let mut world_found = false;
        for cm in &defs.comms.items {
            let g = defs.groups.get(cm.group).expect("validated by GlobalDefs::parse");
            if g.kind == GROUP_COMM_SELF {
                self.comms.insert(cm.id, CommMapping::PerRank);
                continue;
            }
            if g.kind != GROUP_COMM_GROUP {
                continue;
            }
            let mut members = Vec::with_capacity(g.members.len());
            for &m in &g.members {
                if m >= nranks as u64 {
                    return Err(FormatError::at_offset(
                        file,
                        g.offset,
                        format!(
                            "group {} of communicator {} lists rank {m}, but there are {nranks} ranks",
                            g.id, cm.id
                        ),
                    ));
                }
                members.push(m as Rank);
            }
            let is_world = members.len() == nranks as usize && members.iter().enumerate().all(|(i, &m)| i as Rank == m);
            if !world_found && is_world && cm.parent == UNDEFINED_U32 && g.paradigm == PARADIGM_MPI {
                world_found = true;
                self.comms.insert(cm.id, CommMapping::Fixed(COMM_WORLD));
                continue;
            }
            if g.paradigm != PARADIGM_MPI && g.paradigm != 0 {
                continue; // e.g. Score-P's "Process x Threads" measurement communicator
            }
            let id = self.base_comms.add((self.comm_name(cm.id), members));
            self.comms.insert(cm.id, CommMapping::Fixed(id));
        }
        for ic in &defs.inter_comms.items {
            let mut sides = Vec::with_capacity(2);
            for gid in [ic.group_a, ic.group_b] {
                let g = defs.groups.get(gid).expect("validated by GlobalDefs::parse");
                let members: Option<Vec<Rank>> = g
                    .members
                    .iter()
                    .map(|&m| (m < nranks as u64).then_some(m as Rank))
                    .collect();
                let Some(members) = members else {
                    return Err(FormatError::at_offset(
                        file,
                        g.offset,
                        format!(
                            "group {gid} of inter-communicator {} lists a rank outside 0..{nranks}",
                            ic.id
                        ),
                    ));
                };
                sides.push(members);
            }
            let mut all = sides[0].clone();
            all.extend(sides[1].iter().filter(|m| !sides[0].contains(m)));
            let name = match defs.string(ic.name) {
                "" => format!("intercomm {}", ic.id),
                n => n.to_owned(),
            };
            let id = self.base_comms.add((name, all));
            let a = self.inter_groups.len();
            self.inter_groups.extend(sides);
            self.comms.insert(ic.id, CommMapping::Inter { id, a, b: a + 1 });
        }
        Ok(())
    }

    fn comm_name(&self, id: u32) -> String {
        let cm = self.defs.comms.get(id).expect("caller checked");
        match self.defs.string(cm.name) {
            "" => format!("comm {id}"),
            n => n.to_owned(),
        }
    }
}

impl Builder<'_, '_> {
    /// The first location ending in an error: the part stops there.
    fn fail(&mut self, index: usize, e: FormatError) {
        self.run.failed_at.fetch_min(index, Ordering::Relaxed);
        self.part.failure = Some((index, e));
    }

    /// Model communicator of OTF2 communicator `comm` as seen by `rank`, and for an
    /// inter-communicator the remote group (index into `inter_groups`) its peers belong to.
    #[inline(always)]
    fn comm(&mut self, comm: u32, rank: Rank, file: &str, offset: u64) -> Result<(CommId, Option<usize>), FormatError> {
        if let Some((c, r, found)) = self.last_comm {
            if c == comm && r == rank {
                return Ok(found);
            }
        }
        let found = self.resolve_comm(comm, rank, file, offset)?;
        self.last_comm = Some((comm, rank, found));
        Ok(found)
    }

    /// [`Builder::comm`] without the cache.
    fn resolve_comm(
        &mut self,
        comm: u32,
        rank: Rank,
        file: &str,
        offset: u64,
    ) -> Result<(CommId, Option<usize>), FormatError> {
        if let Some(&CommMapping::Inter { id, a, b }) = self.shared.comms.get(&comm) {
            let remote = if self.shared.inter_groups[a].contains(&rank) {
                b
            } else {
                a
            };
            return Ok((id, Some(remote)));
        }
        self.intra_comm(comm, rank, file, offset).map(|id| (id, None))
    }

    fn intra_comm(&mut self, comm: u32, rank: Rank, file: &str, offset: u64) -> Result<CommId, FormatError> {
        match self.shared.comms.get(&comm) {
            Some(CommMapping::Fixed(id)) => Ok(*id),
            Some(CommMapping::Inter { id, .. }) => Ok(*id),
            Some(CommMapping::PerRank) => match self.self_comms.get(&rank) {
                Some(&id) => Ok(id),
                None => {
                    let id = self.add_comm("MPI_COMM_SELF", vec![rank]);
                    self.self_comms.insert(rank, id);
                    Ok(id)
                }
            },
            None => {
                if let Some(&id) = self.lazy_comms.get(&comm) {
                    return Ok(id);
                }
                // Defined but not an MPI communicator group (or not defined at all).
                let defs = self.shared.defs;
                let Some(cm) = defs.comms.get(comm) else {
                    return Err(FormatError::at_offset(
                        file,
                        offset,
                        format!("event refers to undefined communicator {comm}"),
                    ));
                };
                let g = defs.groups.get(cm.group).expect("validated by GlobalDefs::parse");
                let n = self.shared.nranks as u64;
                let members: Vec<Rank> = g.members.iter().filter(|&&m| m < n).map(|&m| m as Rank).collect();
                let id = self.add_comm(&self.shared.comm_name(comm), members);
                self.lazy_comms.insert(comm, id);
                Ok(id)
            }
        }
    }

    /// World rank of communicator rank `local` in `comm` (in the remote group for an
    /// inter-communicator).
    #[inline]
    fn world(
        &self,
        (comm, remote): (CommId, Option<usize>),
        local: u32,
        what: &str,
        file: &str,
        offset: u64,
    ) -> Result<Rank, FormatError> {
        if local == UNDEFINED_U32 {
            return Ok(ANY_SOURCE);
        }
        // MPI_COMM_WORLD's members are the world ranks in order.
        if comm == COMM_WORLD && remote.is_none() && local < self.shared.nranks {
            return Ok(local);
        }
        let c = self.communicator(comm);
        let found = match remote {
            Some(g) => self.shared.inter_groups[g].get(local as usize).copied(),
            None => c.world_rank(local),
        };
        found.ok_or_else(|| not_a_member(c, local, what, file, offset))
    }

    #[inline]
    fn region(&self, id: u32, file: &str, offset: u64) -> Result<usize, FormatError> {
        let shared = self.shared;
        let found = if shared.region_by_id.is_empty() {
            shared.defs.regions.position(id)
        } else {
            shared
                .region_by_id
                .get(id as usize)
                .filter(|&&p| p != u32::MAX)
                .map(|&p| p as usize)
        };
        found.ok_or_else(|| FormatError::at_offset(file, offset, format!("event refers to undefined region {id}")))
    }

    /// The communicator behind a model id (the definitions' or one this part created).
    fn communicator(&self, id: CommId) -> &Communicator {
        let base = &self.shared.base_comms.comms;
        match base.get(id as usize) {
            Some(c) => c,
            None => &self.part.comms.comms[id as usize - base.len()],
        }
    }

    /// Add a communicator met in events (or find it among the definitions' and the part's).
    fn add_comm(&mut self, name: &str, members: Vec<Rank>) -> CommId {
        let key = (name.to_owned(), members);
        if let Some(id) = self.shared.base_comms.find(&key) {
            return id;
        }
        let known = self.part.comms.comms.len();
        let id = self.part.comms.add(key);
        if self.part.comms.comms.len() > known {
            self.part.first_use.comms.push(self.at_location);
        }
        id
    }

    /// The part's id of MPI function `name` and its kind, interning and classifying it once.
    fn function(&mut self, name: &str) -> (FuncId, CallKind) {
        let part = &mut self.part;
        let f = part.functions.intern(name);
        if f as usize == part.function_kinds.len() {
            part.function_kinds.push(CallKind::classify(name));
            part.first_use.functions.push(self.at_location);
        }
        (f, part.function_kinds[f as usize])
    }

    /// Append a call of MPI function `name` to the rank in `slot`.
    #[allow(clippy::too_many_arguments)]
    fn push_named_call(
        &mut self,
        slot: usize,
        name: &str,
        enter: Time,
        exit: Time,
        path: CallpathId,
        loc: u16,
    ) -> CallIdx {
        let (f, kind) = self.function(name);
        let exit = exit.max(enter);
        let rt = &mut self.part.ranks[slot];
        rt.extend_span(enter, exit);
        self.stage.push_call(
            rt,
            CallRow {
                func: f,
                kind,
                enter,
                exit,
                callpath: path,
                location: loc,
            },
        )
    }

    /// The call path of the open user regions, interned through a hash index (the model's
    /// linear [`Trace::intern_callpath`] would be quadratic), depth- and size-limited.
    #[inline(always)]
    fn callpath(&mut self, st: &mut LocationState) -> CallpathId {
        match st.path {
            Some(p) => p,
            None => self.new_callpath(st),
        }
    }

    /// [`Builder::callpath`] after the open user regions changed.
    #[inline(never)]
    fn new_callpath(&mut self, st: &mut LocationState) -> CallpathId {
        let path = if st.user_path.len() > MAX_CALLPATH_DEPTH {
            self.part.counters.deep_paths += 1;
            &st.user_path[..MAX_CALLPATH_DEPTH]
        } else {
            &st.user_path[..]
        };
        let p = match self.callpath_index.get(path) {
            Some(&p) => p,
            None => {
                let need = path.len() + 1;
                let before = self.run.callpath_storage.fetch_add(need, Ordering::Relaxed);
                if before + path.len() > MAX_CALLPATH_STORAGE {
                    if self.run.several {
                        self.part.over_budget = true;
                    } else {
                        self.run.callpath_storage.fetch_sub(need, Ordering::Relaxed);
                    }
                    self.part.counters.dropped_paths += 1;
                    NO_CALLPATH
                } else {
                    let p = self.part.callpaths.len() as CallpathId;
                    self.part.callpaths.push(path.to_vec());
                    self.part.first_use.callpaths.push(self.at_location);
                    self.callpath_index.insert(path.to_vec(), p);
                    p
                }
            }
        };
        st.path = Some(p);
        p
    }

    /// The innermost open MPI call, or a new call named `name` at `t` for MPI events recorded
    /// outside any MPI region.
    #[inline(always)]
    fn current_call(&mut self, st: &mut LocationState, here: Here, name: &str, t: Time) -> CallIdx {
        match st.open_calls.last() {
            Some(&c) => c,
            None => self.call_outside_mpi(st, here, name, t),
        }
    }

    /// [`Builder::current_call`] outside any MPI region: a call of its own.
    #[inline(never)]
    fn call_outside_mpi(&mut self, st: &mut LocationState, here: Here, name: &str, t: Time) -> CallIdx {
        let path = self.callpath(st);
        self.push_named_call(here.slot, name, t, t, path, here.loc)
    }

    /// Read the events of location `index`, of the rank in `slot` as its location `loc`;
    /// `report` as for [`read_part`], `before` the part's bytes before this location. The
    /// rank's new rows go through [`Builder::stage`], written to its columns when it fills and
    /// when the location ends (whether it was read whole or not).
    fn read_location(
        &mut self,
        index: usize,
        (rank, slot, loc): (Rank, usize, u16),
        report: &mut dyn FnMut(usize, Option<u64>, u64) -> bool,
        before: u64,
    ) -> Result<(), FormatError> {
        self.stage.begin(&self.part.ranks[slot]);
        let result = self.read_location_events(index, (rank, slot, loc), report, before);
        self.stage.flush(&mut self.part.ranks[slot]);
        result
    }

    /// [`Builder::read_location`] with the stage open.
    fn read_location_events(
        &mut self,
        index: usize,
        (rank, slot, loc): (Rank, usize, u16),
        report: &mut dyn FnMut(usize, Option<u64>, u64) -> bool,
        before: u64,
    ) -> Result<(), FormatError> {
        let archive = self.shared.archive;
        let Some(mut events) = archive.events_in(index, self.files)? else {
            return Ok(());
        };
        let file = events.file_name();
        let rows = reserved_rows(self.shared, self.files, index);
        self.part.ranks[slot].reserve(rows, rows, 0);
        let mut st = LocationState::default();
        self.local_regions.clear();
        let mut seen = Seen {
            n: 0,
            first: Time::MAX,
            latest: Time::MIN,
            last: 0,
        };
        let here = Here { rank, slot, loc, file };
        let clock = self.shared.clock;
        let hot = !self.shared.general_only;
        loop {
            if hot {
                self.hot_run(&mut events, &mut st, here, &mut seen, (index, report, before))?;
            }
            let Some((id, at)) = events.next_record()? else {
                break;
            };
            let off = at as u64;
            let t = clock.ns(events.time());
            seen.event(t);
            if seen.n.is_multiple_of(PROGRESS_EVERY) && !report(index, Some(off), before) {
                return Err(FormatError::cancelled(file));
            }
            // The hot records the whole-record decoder left (chunk ends, attribute lists, rare
            // encodings) go straight from their payload to the columns; the rest through the
            // general decoder and its EventKind.
            match id {
                12 if hot => {
                    let region = events.region_payload()?;
                    self.enter(&mut st, here, region, t, off)?;
                }
                13 if hot => {
                    let region = events.region_payload()?;
                    self.leave(&mut st, here, region, t, off)?;
                }
                14 | 18 if hot => {
                    let p = events.p2p_payload(id, false)?;
                    self.blocking(&mut st, here, id == 14, p, t, off)?;
                }
                15 if hot => {
                    let p = events.p2p_payload(id, true)?;
                    self.isend(&mut st, here, p, t, off)?;
                }
                16 if hot => {
                    let request = events.request_payload()?;
                    self.isend_complete(&mut st, here, request, t);
                }
                17 if hot => {
                    let request = events.request_payload()?;
                    self.irecv_request(&mut st, here, request, t);
                }
                19 if hot => {
                    let p = events.p2p_payload(id, true)?;
                    self.irecv(&mut st, here, p, t, off)?;
                }
                _ => {
                    let kind = events.decode(id)?;
                    self.event(&mut st, here, kind, t, off)?;
                }
            }
            events.drop_attributes();
        }
        if seen.n > 0 {
            self.part.ranks[slot].extend_span(seen.first, seen.latest);
        }
        self.end_location(&mut st, index, slot, seen.last, &events);
        Ok(())
    }

    /// Decode the records of the current chunk whole, straight from its bytes, while they are
    /// timestamps and hot records in their common encoding with [`HOT_WINDOW`] bytes of chunk
    /// left; stops before the first other record (the caller reads it the general way). Each
    /// region id is resolved once per location ([`Builder::local_region`]); timestamps are
    /// converted once, not once per event.
    #[inline(never)]
    fn hot_run(
        &mut self,
        events: &mut LocationEvents,
        st: &mut LocationState,
        here: Here,
        seen: &mut Seen,
        (index, report, before): (usize, &mut Report, u64),
    ) -> Result<(), FormatError> {
        let (bytes, base) = events.hot_bytes();
        if bytes.len() < HOT_WINDOW {
            return Ok(());
        }
        let local = events.local_defs();
        let offsets = local.clock_offsets.len() >= 2;
        let clock = self.shared.clock;
        let mut raw = events.raw_time();
        let mut ticks = events.time();
        let mut t = clock.ns(ticks);
        let mut p = 0;
        let Seen {
            mut n,
            mut first,
            mut latest,
            mut last,
        } = *seen;
        let n0 = n;
        // One event at `t`, record at `$p`: counted, its time kept, progress reported.
        macro_rules! event {
            ($p:expr) => {{
                n += 1;
                last = t;
                first = first.min(t);
                latest = latest.max(t);
                if n.is_multiple_of(PROGRESS_EVERY) && !report(index, Some((base + $p) as u64), before) {
                    break Err(FormatError::cancelled(here.file));
                }
            }};
        }
        let result = loop {
            let Some(window) = bytes.get(p..p + HOT_WINDOW) else {
                break Ok(());
            };
            let window: &[u8; HOT_WINDOW] = window.try_into().expect("HOT_WINDOW bytes");
            let off = (base + p) as u64;
            let id = window[0];
            let done = match id {
                0x05 => {
                    let (r, len) = hot_timestamp(window);
                    raw = r;
                    ticks = if offsets { local.correct(r) } else { r };
                    t = clock.ns(ticks);
                    p += len;
                    continue;
                }
                12 | 13 => {
                    let Some((region, len)) = hot_single(window, 4) else {
                        break Ok(());
                    };
                    event!(p);
                    let pos = match self.local_region(local, region as u32, here.file, off) {
                        Ok(pos) => pos,
                        Err(e) => break Err(e),
                    };
                    match id {
                        12 => self.enter_at(st, here, pos, t),
                        _ => self.leave_at(st, here, t),
                    }
                    p += len;
                    continue;
                }
                16 | 17 => {
                    let Some((request, len)) = hot_single(window, 8) else {
                        break Ok(());
                    };
                    event!(p);
                    match id {
                        16 => self.isend_complete(st, here, request, t),
                        _ => self.irecv_request(st, here, request, t),
                    }
                    p += len;
                    continue;
                }
                14 | 18 => {
                    let Some((mut payload, len)) = hot_p2p(window, bytes.len() - p, false) else {
                        break Ok(());
                    };
                    event!(p);
                    payload.comm = local.map32(MAP_COMM, payload.comm);
                    p += len;
                    self.blocking(st, here, id == 14, payload, t, off)
                }
                15 | 19 => {
                    let Some((mut payload, len)) = hot_p2p(window, bytes.len() - p, true) else {
                        break Ok(());
                    };
                    event!(p);
                    payload.comm = local.map32(MAP_COMM, payload.comm);
                    p += len;
                    match id {
                        15 => self.isend(st, here, payload, t, off),
                        _ => self.irecv(st, here, payload, t, off),
                    }
                }
                _ => break Ok(()),
            };
            if let Err(e) = done {
                break Err(e);
            }
        };
        *seen = Seen { n, first, latest, last };
        events.skip_decoded(p, n - n0, raw, ticks);
        result
    }

    /// Position in the region table of the location's local region id `id`: a table load once
    /// the location met the id, else mapped and looked up as the general path does (its error
    /// for an undefined region included).
    #[inline(always)]
    fn local_region(&mut self, local: &LocalDefs, id: u32, file: &str, off: u64) -> Result<usize, FormatError> {
        match self.local_regions.get(id as usize) {
            Some(&pos) if pos != u32::MAX => Ok(pos as usize),
            _ => self.resolve_local_region(local, id, file, off),
        }
    }

    /// [`Builder::local_region`] for an id the location has not met: remembered when the id is
    /// small enough for a table (ids at most a few times the region count, as definitions
    /// number them), so that a hostile id cannot make the table huge.
    #[cold]
    #[inline(never)]
    fn resolve_local_region(&mut self, local: &LocalDefs, id: u32, file: &str, off: u64) -> Result<usize, FormatError> {
        let pos = self.region(local.map32(MAP_REGION, id), file, off)?;
        let id = id as usize;
        if id < 4 * self.shared.regions.len() + 1024 {
            if self.local_regions.len() <= id {
                self.local_regions.resize(id + 1, u32::MAX);
            }
            self.local_regions[id] = pos as u32;
        }
        Ok(pos)
    }

    /// Any event, by its decoded kind (the general path).
    fn event(
        &mut self,
        st: &mut LocationState,
        here: Here,
        kind: EventKind,
        t: Time,
        off: u64,
    ) -> Result<(), FormatError> {
        let Here { slot, loc, file, .. } = here;
        let p2p = |peer, comm, tag, length, request| P2pPayload {
            peer,
            comm,
            tag,
            length,
            request,
        };
        match kind {
            EventKind::Enter { region } => self.enter(st, here, region, t, off)?,
            EventKind::Leave { region } => self.leave(st, here, region, t, off)?,
            EventKind::MpiSend {
                receiver,
                comm,
                tag,
                length,
            } => self.blocking(st, here, true, p2p(receiver, comm, tag, length, 0), t, off)?,
            EventKind::MpiRecv {
                sender,
                comm,
                tag,
                length,
            } => self.blocking(st, here, false, p2p(sender, comm, tag, length, 0), t, off)?,
            EventKind::MpiIsend {
                receiver,
                comm,
                tag,
                length,
                request,
            } => self.isend(st, here, p2p(receiver, comm, tag, length, request), t, off)?,
            EventKind::MpiIsendComplete { request } => self.isend_complete(st, here, request, t),
            EventKind::MpiIrecvRequest { request } => self.irecv_request(st, here, request, t),
            EventKind::MpiIrecv {
                sender,
                comm,
                tag,
                length,
                request,
            } => self.irecv(st, here, p2p(sender, comm, tag, length, request), t, off)?,
            EventKind::MpiRequestCancelled { request } => {
                let reqs = &mut self.requests[slot];
                if reqs.isends.take(request, loc).is_none() {
                    if let Some(row) = reqs.irecvs.take(request, loc) {
                        reqs.cancelled_recvs.push(row);
                    }
                }
            }
            EventKind::MpiCollectiveBegin => st.collective_begin = Some(t),
            EventKind::MpiCollectiveEnd {
                op,
                comm,
                root,
                sent,
                received,
            } => {
                let begin = st.collective_begin.take().unwrap_or(t);
                let call = st.open_calls.last().copied();
                self.collective(here, st, call, begin, t, (op, comm, root, sent, received), off)?;
            }
            EventKind::NonBlockingCollectiveRequest { request } => {
                let start = (st.open_calls.last().copied(), t);
                self.requests[slot].collectives.insert(request, loc, start);
            }
            EventKind::NonBlockingCollectiveComplete {
                op,
                comm,
                root,
                sent,
                received,
                request,
            } => {
                let (call, begin) = match self.requests[slot].collectives.take(request, loc) {
                    Some((call, begin)) => (call, begin),
                    None => (st.open_calls.last().copied(), t),
                };
                self.collective(here, st, call, begin, t, (op, comm, root, sent, received), off)?;
            }
            EventKind::Metric { metric, values } => self.metric(slot, metric, &values, t, file, off)?,
            EventKind::ProgramBegin { name, arguments } if self.part.program.is_none() => {
                let defs = self.shared.defs;
                let mut cmd = defs.string(name).to_owned();
                for a in arguments {
                    cmd.push(' ');
                    cmd.push_str(defs.string(a));
                }
                self.part.program = Some((self.at_location, cmd));
            }
            EventKind::Unknown { .. } => self.part.counters.unknown_events += 1,
            _ => {}
        }
        Ok(())
    }

    /// Enter of region id `region` (global).
    #[inline]
    fn enter(&mut self, st: &mut LocationState, here: Here, region: u32, t: Time, off: u64) -> Result<(), FormatError> {
        let pos = self.region(region, here.file, off)?;
        self.enter_at(st, here, pos, t);
        Ok(())
    }

    /// Enter of the region at `pos` in the region table: a call if the region is an MPI
    /// function, else one more level of the call path.
    #[inline]
    fn enter_at(&mut self, st: &mut LocationState, here: Here, pos: usize, t: Time) {
        let Here { slot, loc, .. } = here;
        let shared = self.shared;
        if self.regions[pos].mpi {
            let path = self.callpath(st);
            let (func, kind) = match self.regions[pos].func {
                Some(known) => known,
                None => {
                    let known = self.function(&shared.regions[pos].name);
                    self.regions[pos].func = Some(known);
                    known
                }
            };
            let row = CallRow {
                func,
                kind,
                enter: t,
                exit: t,
                callpath: path,
                location: loc,
            };
            let c = self.stage.push_call(&mut self.part.ranks[slot], row);
            st.open_calls.push(c);
            st.stack.push(Some(c));
        } else {
            let mut rid = self.regions[pos].trace_region;
            if rid == NO_REGION {
                rid = self.part.regions.intern(&shared.regions[pos].name);
                if rid as usize == self.part.first_use.regions.len() {
                    self.part.first_use.regions.push(self.at_location);
                }
                self.regions[pos].trace_region = rid;
            }
            st.user_path.push(rid);
            st.path = None;
            st.stack.push(None);
        }
    }

    /// Leave of region id `region` (global; checked to be defined).
    #[inline]
    fn leave(&mut self, st: &mut LocationState, here: Here, region: u32, t: Time, off: u64) -> Result<(), FormatError> {
        self.region(region, here.file, off)?;
        self.leave_at(st, here, t);
        Ok(())
    }

    /// Leave: the innermost open call ends, or one level of the call path is left.
    #[inline]
    fn leave_at(&mut self, st: &mut LocationState, here: Here, t: Time) {
        let slot = here.slot;
        match st.stack.pop() {
            None => self.part.counters.unbalanced_leaves += 1,
            Some(Some(c)) => {
                st.open_calls.pop();
                self.stage.end_call(&mut self.part.ranks[slot], c, t);
            }
            Some(None) => {
                st.user_path.pop();
                st.path = None;
            }
        }
    }

    /// A blocking send (`send`) or receive: one operation, completed by its own call.
    #[inline]
    fn blocking(
        &mut self,
        st: &mut LocationState,
        here: Here,
        send: bool,
        p: P2pPayload,
        t: Time,
        off: u64,
    ) -> Result<(), FormatError> {
        let Here { rank, slot, file, .. } = here;
        let (name, dir, role) = if send {
            ("MPI_Send", P2pDir::Send, "receiver")
        } else {
            ("MPI_Recv", P2pDir::Recv, "sender")
        };
        let call = self.current_call(st, here, name, t);
        let comm = self.comm(p.comm, rank, file, off)?;
        let peer = self.world(comm, p.peer, role, file, off)?;
        let row = P2pRow {
            post: call,
            complete: call,
            dir,
            peer,
            tag: p.tag as i32,
            comm: comm.0,
            bytes: p.length,
        };
        self.stage.push_p2p(&mut self.part.ranks[slot], row);
        Ok(())
    }

    /// A non-blocking send, completed now if its completion came first.
    #[inline]
    fn isend(
        &mut self,
        st: &mut LocationState,
        here: Here,
        p: P2pPayload,
        t: Time,
        off: u64,
    ) -> Result<(), FormatError> {
        let Here {
            rank, slot, loc, file, ..
        } = here;
        let P2pPayload {
            peer: receiver,
            comm,
            tag,
            length,
            request,
        } = p;
        let call = self.current_call(st, here, "MPI_Isend", t);
        let comm = self.comm(comm, rank, file, off)?;
        let peer = self.world(comm, receiver, "receiver", file, off)?;
        let op = self.stage.p2p_len();
        let reqs = &mut self.requests[slot];
        let complete = match reqs.early_send_completions.take(request, loc) {
            Some(c) => c,
            None => {
                reqs.isends.insert(request, loc, op);
                NOT_COMPLETED
            }
        };
        let row = P2pRow {
            post: call,
            complete,
            dir: P2pDir::Send,
            peer,
            tag: tag as i32,
            comm: comm.0,
            bytes: length,
        };
        self.stage.push_p2p(&mut self.part.ranks[slot], row);
        Ok(())
    }

    /// A non-blocking send's completion.
    #[inline]
    fn isend_complete(&mut self, st: &mut LocationState, here: Here, request: u64, t: Time) {
        let Here { slot, loc, .. } = here;
        let call = self.current_call(st, here, "MPI_Wait", t);
        let reqs = &mut self.requests[slot];
        match reqs.isends.take(request, loc) {
            Some(op) => self.stage.complete(&mut self.part.ranks[slot], op, call),
            None => reqs.early_send_completions.insert(request, loc, call),
        }
    }

    /// A non-blocking receive posted: its operation is appended now, in posting order, and
    /// completed by [`Builder::irecv`] (or removed if it never completes).
    #[inline]
    fn irecv_request(&mut self, st: &mut LocationState, here: Here, request: u64, t: Time) {
        let Here { slot, loc, .. } = here;
        let call = self.current_call(st, here, "MPI_Irecv", t);
        let reqs = &mut self.requests[slot];
        let row = match reqs.early_recvs.take(request, loc) {
            Some(o) => P2pRow {
                post: call,
                complete: o.call,
                dir: P2pDir::Recv,
                peer: o.peer,
                tag: o.tag,
                comm: o.comm,
                bytes: o.length,
            },
            None => {
                reqs.irecvs.insert(request, loc, self.stage.p2p_len());
                P2pRow {
                    post: call,
                    complete: NOT_COMPLETED,
                    dir: P2pDir::Recv,
                    peer: ANY_SOURCE,
                    tag: ANY_TAG,
                    comm: COMM_WORLD,
                    bytes: 0,
                }
            }
        };
        self.stage.push_p2p(&mut self.part.ranks[slot], row);
    }

    /// A non-blocking receive completed: its operation, posted by the request's call.
    #[inline]
    fn irecv(
        &mut self,
        st: &mut LocationState,
        here: Here,
        p: P2pPayload,
        t: Time,
        off: u64,
    ) -> Result<(), FormatError> {
        let Here {
            rank, slot, loc, file, ..
        } = here;
        let P2pPayload {
            peer: sender,
            comm,
            tag,
            length,
            request,
        } = p;
        let post = self.requests[slot].irecvs.take(request, loc);
        let name = if post.is_some() { "MPI_Wait" } else { "MPI_Irecv" };
        let call = self.current_call(st, here, name, t);
        let comm = self.comm(comm, rank, file, off)?;
        let peer = self.world(comm, sender, "sender", file, off)?;
        match post {
            Some(row) => {
                let received = (call, peer, tag as i32, comm.0, length);
                self.stage.receive(&mut self.part.ranks[slot], row, received);
            }
            None => self.requests[slot].early_recvs.insert(
                request,
                loc,
                OrphanRecv {
                    seq: off,
                    call,
                    peer,
                    tag: tag as i32,
                    comm: comm.0,
                    length,
                },
            ),
        }
        Ok(())
    }

    /// Calls left open at the end of a location end at its last event; the event count is
    /// checked against the definitions.
    fn end_location(
        &mut self,
        st: &mut LocationState,
        index: usize,
        slot: usize,
        last_time: Time,
        events: &LocationEvents,
    ) {
        while let Some(frame) = st.stack.pop() {
            if let Some(c) = frame {
                self.part.counters.unclosed_calls += 1;
                self.stage.end_call(&mut self.part.ranks[slot], c, last_time);
            }
        }
        let announced = self.shared.defs.locations.items[index].number_of_events;
        if announced != 0 && announced != events.events_read() {
            let warning = format!(
                "{}: {} events read, the definitions announce {announced}",
                events.file_name(),
                events.events_read()
            );
            self.part.warnings.push((index as u32, warning));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn collective(
        &mut self,
        here: Here,
        st: &mut LocationState,
        call: Option<CallIdx>,
        begin: Time,
        t: Time,
        (op, comm, root, sent, received): (u8, u32, u32, u64, u64),
        off: u64,
    ) -> Result<(), FormatError> {
        let Here {
            rank, slot, loc, file, ..
        } = here;
        let comm = self.comm(comm, rank, file, off)?;
        let (part, stage) = (&self.part, &self.stage);
        let call_name = |c: CallIdx| part.functions.name(stage.func(&part.ranks[slot], c));
        let from_region = call.and_then(|c| tracelogic_model::CollectiveOp::from_name(call_name(c)));
        let op = from_region.unwrap_or_else(|| collective_from_enum(op));
        let call = match call {
            Some(c) => c,
            None => {
                let path = self.callpath(st);
                self.push_named_call(slot, op.mpi_name(), begin, t, path, loc)
            }
        };
        let root = match root {
            UNDEFINED_U32 => NO_ROOT,
            ROOT_SELF => rank,
            r if r > ROOT_SELF => NO_ROOT,
            r => self.world(comm, r, "root", file, off)?,
        };
        self.part.ranks[slot].push_collective(call, op, comm.0, root, sent, received);
        Ok(())
    }

    fn metric(
        &mut self,
        slot: usize,
        metric: u32,
        values: &[(u8, u64)],
        t: Time,
        file: &str,
        off: u64,
    ) -> Result<(), FormatError> {
        let defs = self.shared.defs;
        let class = defs
            .metric_classes
            .get(metric)
            .or_else(|| {
                defs.metric_instances
                    .get(metric)
                    .and_then(|i| defs.metric_classes.get(i.class))
            })
            .ok_or_else(|| {
                FormatError::at_offset(file, off, format!("Metric event refers to undefined metric {metric}"))
            })?;
        for (i, &(ty, raw)) in values.iter().enumerate() {
            let name = match class.members.get(i).and_then(|&m| defs.metric_members.get(m)) {
                Some(m) => defs.string(m.name).to_owned(),
                None => format!("metric {metric}[{i}]"),
            };
            let value = match ty {
                8 => raw as i64 as f64,
                10 => f64::from_bits(raw),
                _ => raw as f64,
            };
            let id = self.part.metrics.intern(&name);
            if id as usize == self.part.first_use.metrics.len() {
                self.part.first_use.metrics.push(self.at_location);
            }
            let rt = &mut self.part.ranks[slot];
            let series = *self.metric_series[slot].entry(id).or_insert_with(|| {
                rt.metrics.push(MetricSamples {
                    metric: id,
                    ..Default::default()
                });
                rt.metrics.len() - 1
            });
            rt.metrics[series].time.push(t);
            rt.metrics[series].value.push(value);
        }
        Ok(())
    }

    /// Requests still open when every location was read: receives completed without a seen
    /// request are posted by their completing call; the rest are counted for the warnings.
    fn finish_requests(&mut self) {
        for (slot, reqs) in std::mem::take(&mut self.requests).into_iter().enumerate() {
            let mut early: Vec<(u16, OrphanRecv)> = reqs.early_recvs.into_all();
            early.sort_by_key(|(loc, o)| (*loc, o.seq));
            let rt = &mut self.part.ranks[slot];
            self.part.counters.uncompleted_receives += reqs.irecvs.len() as u64;
            let mut unreceived = reqs.cancelled_recvs;
            unreceived.extend(reqs.irecvs.into_all().into_iter().map(|(_, row)| row));
            rt.p2p.remove_rows(&unreceived);
            for (_, o) in early {
                rt.push_p2p(o.call, o.call, P2pDir::Recv, o.peer, o.tag, o.comm, o.length);
            }
            self.part.counters.unmatched_completions += reqs.early_send_completions.len() as u64;
        }
    }
}

/// Rows a [`Stage`] holds per table before it writes them to the rank's columns: 256 rows of
/// 32 bytes per table, 16 KiB together, stay in the first-level cache (64 and 2,048 rows
/// measured the same).
const STAGE_ROWS: usize = 256;

/// One call on its way to the rank's [`Calls`](tracelogic_model::Calls) columns.
#[derive(Clone, Copy)]
struct CallRow {
    enter: Time,
    exit: Time,
    func: FuncId,
    callpath: CallpathId,
    location: u16,
    kind: CallKind,
}

/// One point-to-point operation on its way to the rank's [`P2p`] columns.
#[derive(Clone, Copy)]
struct P2pRow {
    bytes: u64,
    post: CallIdx,
    complete: CallIdx,
    peer: Rank,
    tag: i32,
    comm: CommId,
    dir: P2pDir,
}

/// The newest calls and point-to-point operations of the rank whose location is being read,
/// row by row, written to the rank's columns one column at a time when [`STAGE_ROWS`] are
/// staged and when the location ends. Most later fields (a call's exit at its Leave, a
/// non-blocking operation's completion at its Wait) then land in the staged row, and each
/// column is written once, in one sequential run per flush: about 2 % less one-thread CPU than
/// appending every row straight to its six or seven columns (the interleaved column streams
/// themselves were not the cost: see docs/performance.md, seventh session). Rows are numbered
/// as if appended directly (the rank's rows before the stage, then the staged ones), and a
/// later field is set wherever its row is by then.
#[derive(Default)]
struct Stage {
    /// Calls in the rank's columns; `calls[0]` is call `calls_from`.
    calls_from: usize,
    calls: Vec<CallRow>,
    /// Operations in the rank's columns; `p2p[0]` is operation `p2p_from`.
    p2p_from: usize,
    p2p: Vec<P2pRow>,
}

impl Stage {
    /// Start staging the rows of the rank whose columns are `rt`'s (nothing may be staged).
    fn begin(&mut self, rt: &RankTrace) {
        debug_assert!(self.calls.is_empty() && self.p2p.is_empty());
        self.calls_from = rt.calls.len();
        self.p2p_from = rt.p2p.len();
        self.calls.reserve(STAGE_ROWS);
        self.p2p.reserve(STAGE_ROWS);
    }

    /// Append a call and return its index in the rank (the span is the caller's).
    #[inline(always)]
    fn push_call(&mut self, rt: &mut RankTrace, row: CallRow) -> CallIdx {
        if self.calls.len() == STAGE_ROWS {
            self.flush_calls(rt);
        }
        self.calls.push(row);
        (self.calls_from + self.calls.len() - 1) as CallIdx
    }

    /// Operations of the rank so far, staged ones included: the index the next one gets.
    #[inline(always)]
    fn p2p_len(&self) -> usize {
        self.p2p_from + self.p2p.len()
    }

    /// Append a point-to-point operation.
    #[inline(always)]
    fn push_p2p(&mut self, rt: &mut RankTrace, row: P2pRow) {
        if self.p2p.len() == STAGE_ROWS {
            self.flush_p2p(rt);
        }
        self.p2p.push(row);
    }

    /// Call `c` ends at `t` (not before its entry).
    #[inline(always)]
    fn end_call(&mut self, rt: &mut RankTrace, c: CallIdx, t: Time) {
        match (c as usize).checked_sub(self.calls_from) {
            Some(i) => {
                let row = &mut self.calls[i];
                row.exit = t.max(row.enter);
            }
            None => {
                let calls = &mut rt.calls;
                calls.exit[c as usize] = t.max(calls.enter[c as usize]);
            }
        }
    }

    /// The function of call `c`.
    fn func(&self, rt: &RankTrace, c: CallIdx) -> FuncId {
        match (c as usize).checked_sub(self.calls_from) {
            Some(i) => self.calls[i].func,
            None => rt.calls.func[c as usize],
        }
    }

    /// Operation `op` is completed by call `call`.
    #[inline(always)]
    fn complete(&mut self, rt: &mut RankTrace, op: usize, call: CallIdx) {
        match op.checked_sub(self.p2p_from) {
            Some(i) => self.p2p[i].complete = call,
            None => rt.p2p.complete[op] = call,
        }
    }

    /// Receive `op` is completed by `call`, with what it received: (call, peer, tag,
    /// communicator, bytes).
    #[inline(always)]
    fn receive(
        &mut self,
        rt: &mut RankTrace,
        op: usize,
        (call, peer, tag, comm, bytes): (CallIdx, Rank, i32, CommId, u64),
    ) {
        match op.checked_sub(self.p2p_from) {
            Some(i) => {
                let row = &mut self.p2p[i];
                row.complete = call;
                row.peer = peer;
                row.tag = tag;
                row.comm = comm;
                row.bytes = bytes;
            }
            None => {
                let p = &mut rt.p2p;
                p.complete[op] = call;
                p.peer[op] = peer;
                p.tag[op] = tag;
                p.comm[op] = comm;
                p.bytes[op] = bytes;
            }
        }
    }

    /// Write the staged calls to the rank's columns, one column after the other.
    #[inline(never)]
    fn flush_calls(&mut self, rt: &mut RankTrace) {
        let (rows, c) = (&self.calls, &mut rt.calls);
        c.func.extend(rows.iter().map(|r| r.func));
        c.kind.extend(rows.iter().map(|r| r.kind));
        c.enter.extend(rows.iter().map(|r| r.enter));
        c.exit.extend(rows.iter().map(|r| r.exit));
        c.callpath.extend(rows.iter().map(|r| r.callpath));
        c.location.extend(rows.iter().map(|r| r.location));
        self.calls_from += rows.len();
        self.calls.clear();
    }

    /// Write the staged operations to the rank's columns, one column after the other.
    #[inline(never)]
    fn flush_p2p(&mut self, rt: &mut RankTrace) {
        let (rows, p) = (&self.p2p, &mut rt.p2p);
        p.post.extend(rows.iter().map(|r| r.post));
        p.complete.extend(rows.iter().map(|r| r.complete));
        p.dir.extend(rows.iter().map(|r| r.dir));
        p.peer.extend(rows.iter().map(|r| r.peer));
        p.tag.extend(rows.iter().map(|r| r.tag));
        p.comm.extend(rows.iter().map(|r| r.comm));
        p.bytes.extend(rows.iter().map(|r| r.bytes));
        self.p2p_from += rows.len();
        self.p2p.clear();
    }

    /// Write everything staged to the rank's columns.
    fn flush(&mut self, rt: &mut RankTrace) {
        self.flush_calls(rt);
        self.flush_p2p(rt);
    }
}

/// The error of a peer or root that is not a rank of its communicator.
#[cold]
fn not_a_member(c: &Communicator, local: u32, what: &str, file: &str, offset: u64) -> FormatError {
    FormatError::at_offset(
        file,
        offset,
        format!(
            "{what} {local} is not a rank of communicator '{}' ({} members)",
            c.name,
            c.members.len()
        ),
    )
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

#[cfg(test)]
mod posting_order_tests {
    use super::p2p_in_posting_order;
    use tracelogic_model::{P2pDir, Trace, COMM_WORLD, NOT_COMPLETED, NO_CALLPATH};

    #[test]
    fn counting_sort_gives_the_models_stable_posting_order() {
        let mut t = Trace::new("otf2", "t", 2);
        for k in 0..6u64 {
            t.push_call(0, "MPI_Irecv", 10 * k, 10 * k + 5, NO_CALLPATH, 0);
        }
        // Receives appended out of posting order, two posted by the same call (ties keep
        // their order), one never completed.
        for (i, &(post, tag)) in [(4, 1), (1, 2), (4, 3), (0, 4), (5, 5), (1, 6), (2, 7)]
            .iter()
            .enumerate()
        {
            let complete = if i == 3 { NOT_COMPLETED } else { post };
            t.push_p2p(0, post, complete, P2pDir::Recv, 1, tag, COMM_WORLD, 8 * tag as u64);
        }
        let mut by_model = t.clone();
        by_model.normalise_order();
        p2p_in_posting_order(&mut t.ranks[0]);
        assert_eq!(t.ranks[0].p2p.post, vec![0, 1, 1, 2, 4, 4, 5]);
        assert_eq!(t.ranks[0].p2p.tag, vec![4, 2, 6, 7, 1, 3, 5]);
        assert_eq!(
            serde_json::to_string(&t).expect("serialises"),
            serde_json::to_string(&by_model).expect("serialises")
        );
    }
}

#[cfg(test)]
mod posting_order_random_tests {
    use super::p2p_in_posting_order;
    use tracelogic_model::{P2pDir, Trace, NO_CALLPATH};

    #[test]
    fn counting_sort_gives_the_models_order_on_long_random_tables() {
        let mut seed = 0x9e37_79b9_u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for (calls, ops) in [(1u64, 50u32), (300, 5000), (5000, 300), (2000, 2000)] {
            let mut t = Trace::new("otf2", "t", 1);
            for k in 0..calls {
                t.push_call(0, "MPI_Irecv", k, k + 1, NO_CALLPATH, 0);
            }
            for i in 0..ops {
                let post = next(calls) as u32;
                let dir = if i % 3 == 0 { P2pDir::Send } else { P2pDir::Recv };
                t.push_p2p(
                    0,
                    post,
                    post + next(2) as u32,
                    dir,
                    i,
                    i as i32,
                    next(4) as u32,
                    i as u64,
                );
            }
            let mut by_model = t.clone();
            by_model.normalise_order();
            p2p_in_posting_order(&mut t.ranks[0]);
            assert_eq!(
                serde_json::to_string(&t).expect("serialises"),
                serde_json::to_string(&by_model).expect("serialises"),
                "{calls} calls, {ops} operations"
            );
        }
    }
}

/// The Cartesian topologies of the definitions (`CartTopology` with its `CartDimension`s, and
/// `CartCoordinate`s when every member has one; otherwise MPI's row-major rule) on the
/// communicators of the trace; a definition that does not fit becomes a warning.
fn add_cartesian(defs: &GlobalDefs, shared: &Shared, trace: &mut Trace) {
    for (id, comm, dim_ids) in &defs.cart_topologies {
        let fail = |trace: &mut Trace, why: String| {
            trace.warnings.push(format!(
                "Cartesian topology {id}: {why}; the declared topology is left out"
            ))
        };
        let Some(&CommMapping::Fixed(c)) = shared.comms.get(comm) else {
            fail(
                trace,
                format!("communicator {comm} is not an MPI communicator of the trace"),
            );
            continue;
        };
        let mut dims = Vec::with_capacity(dim_ids.len());
        let mut periods = Vec::with_capacity(dim_ids.len());
        for d in dim_ids {
            match defs.cart_dimensions.iter().find(|x| x.0 == *d) {
                Some(&(_, size, periodic)) => {
                    dims.push(size as i64);
                    periods.push(periodic);
                }
                None => {
                    dims.clear();
                    break;
                }
            }
        }
        let members = trace.comms.get(c as usize).map_or(0, |m| m.members.len());
        let mut t = match CartTopology::row_major(c, &dims, &periods, members) {
            Ok(t) => t,
            Err(e) => {
                fail(trace, e);
                continue;
            }
        };
        let mut recorded: Vec<Option<&Vec<u32>>> = vec![None; members];
        for (topo, rank, coords) in &defs.cart_coordinates {
            if topo == id {
                if let Some(slot) = recorded.get_mut(*rank as usize) {
                    *slot = Some(coords);
                }
            }
        }
        if members > 0 && recorded.iter().all(Option::is_some) {
            t.coords = recorded.into_iter().map(|c| c.expect("checked").clone()).collect();
            t.coords_recorded = true;
        }
        if let Err(e) = trace.add_cartesian(t) {
            fail(trace, e);
        }
    }
}

#[cfg(test)]
mod stage_tests {
    use super::{CallRow, P2pRow, Stage, STAGE_ROWS};
    use tracelogic_model::{CallKind, P2pDir, RankTrace, NOT_COMPLETED};

    /// Calls and operations appended, ended and completed through a [`Stage`] (flushed when
    /// full, between locations and at random points) leave the same columns as the same steps
    /// applied straight to the columns, whether the row changed later is still staged or
    /// already written.
    #[test]
    fn staged_rows_give_the_columns_of_direct_appends() {
        let mut seed = 0x9e37_79b9_u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let (mut staged, mut direct) = (RankTrace::default(), RankTrace::default());
        let mut stage = Stage::default();
        stage.begin(&staged);
        let (mut flushes, mut late_in_columns) = (0, 0);
        for step in 0..(12 * STAGE_ROWS as u64) {
            match next(10) {
                0..=2 => {
                    let row = CallRow {
                        enter: step * 10,
                        exit: step * 10,
                        func: next(5) as u32,
                        callpath: next(3) as u32,
                        location: next(2) as u16,
                        kind: CallKind::Isend,
                    };
                    let c = stage.push_call(&mut staged, row);
                    let d = direct.push_call(row.func, row.kind, row.enter, row.exit, row.callpath, row.location);
                    assert_eq!(c, d, "step {step}");
                }
                3..=5 => {
                    let row = P2pRow {
                        bytes: next(1 << 20),
                        post: step as u32,
                        complete: NOT_COMPLETED,
                        peer: next(64) as u32,
                        tag: next(9) as i32,
                        comm: 0,
                        dir: if next(2) == 0 { P2pDir::Send } else { P2pDir::Recv },
                    };
                    assert_eq!(stage.p2p_len(), direct.p2p.len(), "step {step}");
                    stage.push_p2p(&mut staged, row);
                    let r = row;
                    direct.push_p2p(r.post, r.complete, r.dir, r.peer, r.tag, r.comm, r.bytes);
                }
                6 if !direct.calls.is_empty() => {
                    let n = direct.calls.len() as u64;
                    let c = (n - 1 - next(n.min(2 * STAGE_ROWS as u64))) as u32;
                    late_in_columns += usize::from((c as usize) < staged.calls.len());
                    let t = (step * 10 + next(30)).saturating_sub(15);
                    stage.end_call(&mut staged, c, t);
                    let calls = &mut direct.calls;
                    calls.exit[c as usize] = t.max(calls.enter[c as usize]);
                    assert_eq!(stage.func(&staged, c), direct.calls.func[c as usize]);
                }
                7 | 8 if !direct.p2p.is_empty() => {
                    let n = direct.p2p.len() as u64;
                    let op = (n - 1 - next(n.min(2 * STAGE_ROWS as u64))) as usize;
                    late_in_columns += usize::from(op < staged.p2p.len());
                    let call = step as u32;
                    if next(2) == 0 {
                        stage.complete(&mut staged, op, call);
                        direct.p2p.complete[op] = call;
                    } else {
                        let got = (call, next(64) as u32, next(9) as i32, 1, next(100));
                        stage.receive(&mut staged, op, got);
                        let p = &mut direct.p2p;
                        (p.complete[op], p.peer[op], p.tag[op], p.comm[op], p.bytes[op]) = got;
                    }
                }
                _ => {
                    if next(20) == 0 {
                        stage.flush(&mut staged);
                        stage.begin(&staged);
                        flushes += 1;
                    }
                }
            }
        }
        stage.flush(&mut staged);
        assert!(
            flushes > 3 && late_in_columns > 100,
            "{flushes} flushes, {late_in_columns} late"
        );
        let (a, b) = (&staged.calls, &direct.calls);
        assert_eq!(
            (&a.func, &a.kind, &a.enter, &a.exit),
            (&b.func, &b.kind, &b.enter, &b.exit)
        );
        assert_eq!((&a.callpath, &a.location), (&b.callpath, &b.location));
        let (a, b) = (&staged.p2p, &direct.p2p);
        assert_eq!(
            (&a.post, &a.complete, &a.dir, &a.peer),
            (&b.post, &b.complete, &b.dir, &b.peer)
        );
        assert_eq!((&a.tag, &a.comm, &a.bytes), (&b.tag, &b.comm, &b.bytes));
    }
}

/// The ranks of `archive` one at a time, for a reader that never holds the whole trace.
///
/// `archive` is opened on a file set whose event files may be empty: `load(i)` gives the bytes
/// of file `i` when a rank's locations are read, and they are dropped once `sink` has seen the
/// rank. Each rank is built as the parallel read builds it (one part per rank), so its calls
/// and operations are those [`build`] gives; `sink` gets the rank with its part's function
/// names. Ranks for which `wanted` is false are skipped without reading their files.
pub(crate) fn stream(
    archive: &Archive,
    sizes: &[u64],
    load: &mut dyn FnMut(usize) -> Result<Vec<u8>, FormatError>,
    wanted: &dyn Fn(Rank) -> bool,
    progress: &mut dyn ProgressSink,
    sink: &mut dyn crate::stream::RankSink,
) -> Result<crate::stream::StreamInfo, FormatError> {
    let defs = &archive.defs;
    let defs_name = archive.files[archive.defs_file].name.as_str();
    let (ranks_of_groups, nranks) = world_ranks(defs, defs_name)?;
    let shared = Shared::new(archive, false, nranks, defs_name)?;
    let mut head = Trace::new("otf2", archive.anchor_name(), 0);
    add_meta(archive, &mut head);
    let (per_rank, mut warnings) = parts_by_rank(defs, &ranks_of_groups, nranks);
    let clock = shared.clock;
    let end = clock.ns(defs.clock.global_offset.saturating_add(defs.clock.trace_length));
    let mut info = crate::stream::StreamInfo {
        format: "otf2".into(),
        source: archive.anchor_name().to_owned(),
        ranks: nranks,
        span_hint: (end > 0).then_some((0, end)),
        comms: shared.base_comms.comms.clone(),
        meta: std::mem::take(&mut head.meta),
        warnings: Vec::new(),
    };
    sink.begin(&info);
    let bytes_total: u64 = sizes.iter().sum();
    let mut files: Vec<InputFile> = archive
        .files
        .iter()
        .map(|f| InputFile::new(f.name.clone(), Vec::new()))
        .collect();
    let mut done = 0u64;
    let mut counters = Counters::default();
    let mut program: Option<(u32, String)> = None;
    for spec in &per_rank {
        let rank = spec.ranks[0];
        if !wanted(rank) {
            continue;
        }
        let evts: Vec<usize> = spec
            .locations
            .iter()
            .filter_map(|&(i, _)| archive.locations[i].evt)
            .collect();
        for &e in &evts {
            files[e].bytes = load(e)?;
        }
        let run = Run {
            several: false,
            callpath_storage: AtomicUsize::new(0),
            failed_at: AtomicUsize::new(usize::MAX),
        };
        let stage = format!("reading the locations of rank {rank}");
        let mut report = |_: usize, inside: Option<u64>, before: u64| {
            progress.report(&Progress {
                stage: stage.clone(),
                bytes_done: done + before + inside.unwrap_or(0),
                bytes_total,
            })
        };
        let mut part = read_part(&shared, &run, spec, None, &mut report, &files)?;
        if let Some((_, e)) = part.failure.take() {
            return Err(e);
        }
        if let Some(rt) = part.ranks.first() {
            sink.rank(rt, &part.functions);
        }
        counters.add(&part.counters);
        warnings.append(&mut part.warnings);
        if let Some((at, cmd)) = part.program.take() {
            if program.as_ref().is_none_or(|(first, _)| at < *first) {
                program = Some((at, cmd));
            }
        }
        for &e in &evts {
            done += sizes[e];
            files[e].bytes = Vec::new();
        }
    }
    if let Some((_, cmd)) = program {
        info.meta.push(("program".into(), cmd));
    }
    warnings.sort_by_key(|w| w.0);
    let mut all = archive.warnings.clone();
    all.extend(warnings.into_iter().map(|w| w.1));
    counters.warn(&mut all);
    info.warnings = all;
    Ok(info)
}

/// The first event time (ns, as the trace's spans count) over every location of `archive`,
/// read from the start of each event file only: `head(i)` gives the first bytes of file `i`.
/// `None` when no location has an event.
pub(crate) fn first_time(
    archive: &Archive,
    head: &mut dyn FnMut(usize) -> Result<Vec<u8>, FormatError>,
) -> Result<Option<Time>, FormatError> {
    let clock = Clock {
        offset: archive.defs.clock.global_offset,
        resolution: archive.defs.clock.timer_resolution,
    };
    let mut first: Option<Time> = None;
    for l in &archive.locations {
        let Some(e) = l.evt else { continue };
        let bytes = head(e)?;
        if bytes.is_empty() {
            continue;
        }
        let name = &archive.files[e].name;
        let mut events = super::events::LocationEvents::new(name, &bytes, archive.anchor.chunk_size_events, &l.local)?;
        // Times in a location's file never decrease: its first event is its earliest.
        if let Some(Ok(ev)) = events.next() {
            let t = clock.ns(ev.time);
            first = Some(first.map_or(t, |f| f.min(t)));
        }
    }
    Ok(first)
}

/// The world rank of each location of `archive`, in location order.
pub(crate) fn location_ranks(archive: &Archive) -> Result<Vec<Option<Rank>>, FormatError> {
    let defs_name = archive.files[archive.defs_file].name.as_str();
    let (ranks_of_groups, _) = world_ranks(&archive.defs, defs_name)?;
    Ok(archive
        .defs
        .locations
        .items
        .iter()
        .map(|l| ranks_of_groups.get(&l.group).copied())
        .collect())
}

/// [`build`] as one process of a distributed read ([`crate::distributed`]): the locations of
/// each rank are one part, as in a threaded read; this process reads the parts of its block of
/// ranks, every process learns every part without its columns and merges them all as
/// [`build`] does. Returns the trace (other blocks' columns empty) and every process's block.
#[cfg(feature = "distributed")]
pub(crate) fn build_partial(
    archive: &Archive,
    file_sizes: &[u64],
    load: crate::distributed::Load<'_>,
    blocks: crate::distributed::Blocks<'_>,
    exchange: &mut dyn crate::distributed::Exchange,
    threads: usize,
) -> Result<(Trace, Vec<std::ops::Range<Rank>>), FormatError> {
    use crate::distributed::{checked_blocks, gather_results, take_columns};
    let defs = &archive.defs;
    let defs_name = archive.files[archive.defs_file].name.as_str();
    let (ranks_of_groups, nranks) = world_ranks(defs, defs_name)?;
    let mut trace = Trace::new("otf2", archive.anchor_name(), nranks);
    add_meta(archive, &mut trace);
    let shared = Shared::new(archive, false, nranks, defs_name)?;
    trace.comms = shared.base_comms.comms.clone();
    add_cartesian(defs, &shared, &mut trace);
    if !defs.unknown_records.is_empty() {
        let ids: Vec<String> = defs
            .unknown_records
            .iter()
            .take(5)
            .map(|(id, off)| format!("{id} at byte {off}"))
            .collect();
        trace.warnings.push(format!(
            "{defs_name}: skipped {} definition records with unknown ids ({})",
            defs.unknown_records.len(),
            ids.join(", ")
        ));
    }
    let (per_rank, location_warnings) = parts_by_rank(defs, &ranks_of_groups, nranks);
    let mut sizes = vec![0u64; nranks as usize];
    for spec in &per_rank {
        sizes[spec.ranks[0] as usize] = part_bytes_of(archive, spec, &|f| file_sizes[f]);
    }
    let (me, processes) = exchange.process();
    let all = checked_blocks(blocks, &sizes, processes);
    let mine = all[me].clone();
    let (my_specs, my_index): (Vec<PartSpec>, Vec<usize>) = per_rank
        .iter()
        .enumerate()
        .filter(|(_, s)| mine.contains(&s.ranks[0]))
        .map(|(i, s)| {
            (
                PartSpec {
                    ranks: s.ranks.clone(),
                    locations: s.locations.clone(),
                },
                i,
            )
        })
        .unzip();
    // The event files may hold their first bytes only (crate::distributed::read_partial_source):
    // this process loads its own whole, in a set of the archive's names.
    let mut files: Vec<InputFile> = archive
        .files
        .iter()
        .map(|f| InputFile::new(f.name.clone(), Vec::new()))
        .collect();
    let loaded: Result<(), FormatError> = my_specs
        .iter()
        .flat_map(|s| s.locations.iter().filter_map(|&(i, _)| archive.locations[i].evt))
        .try_for_each(|e| {
            files[e].bytes = load(archive.files, e)?;
            Ok(())
        });
    let read = loaded.and_then(|()| read_parts_in(&shared, &my_specs, threads, &mut crate::NoProgress, &files));
    let read = read.and_then(|parts| {
        parts.ok_or_else(|| {
            FormatError::new(
                archive.anchor_name(),
                "too many call paths for a distributed read (the serial reader reads this trace in one part)",
            )
        })
    });
    let (mut own, columns) = match read {
        Ok(mut parts) => {
            let columns: Vec<Vec<RankTrace>> = parts
                .iter_mut()
                .map(|p| p.ranks.iter_mut().map(take_columns).collect())
                .collect();
            (Ok(my_index.into_iter().zip(parts).collect::<Vec<_>>()), columns)
        }
        Err(e) => (Err(e), Vec::new()),
    };
    let light = gather_results(exchange, &own)?;
    if let Ok(parts) = &mut own {
        for ((_, p), c) in parts.iter_mut().zip(columns) {
            p.ranks = c;
        }
    }
    let own = own.unwrap_or_default();
    let mut by_index: Vec<Option<Part>> = (0..per_rank.len()).map(|_| None).collect();
    for (p, parts) in light.into_iter().enumerate() {
        if p != me {
            for (i, part) in parts {
                by_index[i] = Some(part);
            }
        }
    }
    for (i, part) in own {
        by_index[i] = Some(part);
    }
    let parts: Vec<(PartSpec, Part)> = per_rank
        .into_iter()
        .zip(by_index)
        .map(|(spec, part)| (spec, part.expect("every rank's part was read by its process")))
        .collect();
    merge(&mut trace, parts, location_warnings);
    Ok((trace, all))
}
