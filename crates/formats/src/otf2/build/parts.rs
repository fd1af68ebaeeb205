//! The build in parts: locations grouped by rank into parts read on several threads, each
//! part numbering names, call paths and communicators in its own first-use order, then merged
//! in location order so the trace does not depend on the number of threads.

use super::*;

/// Archives whose event and local definition files hold less than this many bytes are read on
/// the calling thread whatever the threads asked: starting threads would cost more than it saves.
pub(crate) const PARALLEL_FROM_BYTES: u64 = 1 << 20;

/// One part per MPI rank holding its locations in definition order (parts in the order their
/// ranks' first locations come), and a warning for each location with events that belongs to
/// no rank. What the threaded, streamed and distributed reads split a trace by.
pub(super) fn parts_by_rank(
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
    build_in(archive, None, progress, general_only, threads)?
        .ok_or_else(|| FormatError::new(archive.anchor_name(), "the archive's event files were not read"))
}

/// Event files read by the build itself: each part's on its reading thread when the part
/// starts, dropped once the part is built, so a whole read holds the event bytes of the parts
/// being read, not the archive's (`sizes` are the files' true sizes; the archive was opened on
/// its files with the event files empty).
pub(crate) struct OnDemand<'a> {
    pub(crate) sizes: &'a [u64],
    pub(crate) load: &'a (dyn Fn(usize) -> Result<Vec<u8>, FormatError> + Sync),
}

/// [`build`] with the event files loaded part by part ([`OnDemand`]); `None` when the read
/// would be made in one part (few ranks, threads or bytes, or call paths over the budget):
/// then the caller reads the event files whole and calls [`build`]. Native only: the page reads
/// files through its own sources.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn build_on_demand(
    archive: &Archive,
    events: &OnDemand<'_>,
    progress: &mut dyn ProgressSink,
    threads: usize,
) -> Result<Option<Trace>, FormatError> {
    build_in(archive, Some(events), progress, false, threads)
}

fn build_in(
    archive: &Archive,
    on_demand: Option<&OnDemand<'_>>,
    progress: &mut dyn ProgressSink,
    general_only: bool,
    threads: usize,
) -> Result<Option<Trace>, FormatError> {
    let files = archive.files;
    let bytes_total: u64 = match on_demand {
        Some(o) => o.sizes.iter().sum(),
        None => files.iter().map(|f| f.bytes.len() as u64).sum(),
    };
    let Begun {
        mut trace,
        shared,
        per_rank,
        whole,
        location_warnings,
    } = begin(archive, general_only)?;
    let head = files[archive.anchor_file].bytes.len() as u64 + files[archive.defs_file].bytes.len() as u64;
    let parallel = threads > 1 && parts_pay(&shared, &per_rank, bytes_total);
    let parts = match parallel {
        true => read_parts_loading(&shared, &per_rank, threads, progress, files, on_demand)?
            .map(|parts| per_rank.into_iter().zip(parts).collect()),
        false => None,
    };
    let parts = match parts {
        Some(parts) => parts,
        None if on_demand.is_some() => return Ok(None),
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
    Ok(Some(trace))
}

/// What a build knows before reading any event: the trace with its definitions (meta,
/// communicators, Cartesian topologies, the definitions' warnings), what the parts share, one
/// part per rank ([`parts_by_rank`]), every location as one part, and the warnings of locations
/// of no rank.
pub(super) struct Begun<'a> {
    pub(super) trace: Trace,
    pub(super) shared: Shared<'a>,
    pub(super) per_rank: Vec<PartSpec>,
    pub(super) whole: PartSpec,
    pub(super) location_warnings: Vec<(u32, String)>,
}

/// The start of every whole build of `archive` ([`Begun`]).
pub(super) fn begin<'a>(archive: &'a Archive<'a>, general_only: bool) -> Result<Begun<'a>, FormatError> {
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
    Ok(Begun {
        trace,
        shared,
        per_rank,
        whole,
        location_warnings,
    })
}

/// Whether reading `per_rank` as parts and merging them pays for an archive of `bytes_total`
/// bytes: more than one part, and each part setting up its own view of the region table costs
/// less than the read (with many parts and many regions, more than a few per input byte, one
/// part it is).
pub(super) fn parts_pay(shared: &Shared, per_rank: &[PartSpec], bytes_total: u64) -> bool {
    let setup = (per_rank.len() as u64).saturating_mul(shared.regions.len() as u64);
    per_rank.len() > 1 && setup <= bytes_total.saturating_mul(4).max(1 << 24)
}

/// Rows to reserve in a rank's call and point-to-point columns for location `index`: the events
/// the definitions announce over three (a call is at least an Enter and a Leave, a
/// point-to-point operation at least one event), capped by what the event file can hold (an
/// event takes at least 2 bytes).
pub(super) fn reserved_rows(shared: &Shared, files: &[InputFile], index: usize) -> usize {
    reserved_rows_sized(shared, &|f| files[f].bytes.len() as u64, index)
}

/// [`reserved_rows`] with the size of file `f` being `size(f)`.
pub(super) fn reserved_rows_sized(shared: &Shared, size: &dyn Fn(usize) -> u64, index: usize) -> usize {
    let Some(evt) = shared.archive.locations[index].evt else {
        return 0;
    };
    let announced = shared.defs.locations.items[index].number_of_events;
    let events_most = size(evt) / 2;
    announced.min(events_most) as usize / 3
}

/// Least event bytes of a rank whose columns [`read_parts_in`] reserves on the calling thread
/// before the reading threads start. glibc gives each new thread its own heap, grown one
/// `mprotect` at a time, and those calls serialise against the other thread's page faults;
/// reserved before the threads run, the columns come from the main heap or their own mappings.
/// Below this size reserving costs the calling thread more than it saves.
pub(in crate::otf2) const RESERVE_ON_CALLER_BYTES: u64 = 256 << 10;

/// Bytes of the files of a part's locations (event and local definition files), the size of
/// file `f` being `size(f)`.
pub(super) fn part_bytes_of(archive: &Archive, spec: &PartSpec, size: &dyn Fn(usize) -> u64) -> u64 {
    spec.locations
        .iter()
        .flat_map(|&(i, _)| [archive.locations[i].evt, archive.locations[i].def])
        .flatten()
        .map(size)
        .sum()
}

/// Read every location in one part on the calling thread, reporting each location and
/// progress inside its event file; `head` is the bytes read before the locations.
pub(super) fn read_in_one_part(
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

/// Read the parts on up to `threads` threads, in part order, with the event files' bytes taken
/// from `files` (the archive's files at the same positions; see [`read_part`]). `None` when the
/// call paths of the parts together passed the budget (only a read in one part knows which
/// paths it keeps).
#[cfg_attr(not(feature = "distributed"), allow(dead_code))]
pub(super) fn read_parts_in(
    shared: &Shared,
    specs: &[PartSpec],
    threads: usize,
    progress: &mut dyn ProgressSink,
    files: &[InputFile],
) -> Result<Option<Vec<Part>>, FormatError> {
    read_parts_loading(shared, specs, threads, progress, files, None)
}

/// [`read_parts_in`], the event files of each part loaded when it starts when `on_demand`
/// says so ([`OnDemand`]; `files` then has them empty).
pub(super) fn read_parts_loading(
    shared: &Shared,
    specs: &[PartSpec],
    threads: usize,
    progress: &mut dyn ProgressSink,
    files: &[InputFile],
    on_demand: Option<&OnDemand<'_>>,
) -> Result<Option<Vec<Part>>, FormatError> {
    let size = |f: usize| match on_demand {
        Some(o) => o.sizes[f],
        None => files[f].bytes.len() as u64,
    };
    let run = Run {
        several: true,
        callpath_storage: AtomicUsize::new(0),
        failed_at: AtomicUsize::new(usize::MAX),
    };
    let sizes: Vec<u64> = specs.iter().map(|s| part_bytes_of(shared.archive, s, &size)).collect();
    let reserved: Vec<Mutex<Option<Vec<RankTrace>>>> = specs
        .iter()
        .zip(&sizes)
        .map(|(spec, &bytes)| {
            Mutex::new((bytes >= RESERVE_ON_CALLER_BYTES).then(|| {
                let mut ranks = empty_ranks(spec);
                for &(index, slot) in &spec.locations {
                    let rows = reserved_rows_sized(shared, &size, index);
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
            let mut report = |_: usize, inside: Option<u64>, before: u64| advance(before + inside.unwrap_or(0));
            let Some(o) = on_demand else {
                return read_part(shared, &run, spec, ranks, &mut report, files);
            };
            // The part's own event files, at their positions (the others empty and unnamed:
            // no allocation), dropped when the part is built.
            let mut mine: Vec<InputFile> = files
                .iter()
                .map(|_| InputFile::new(String::new(), Vec::new()))
                .collect();
            for &(index, _) in &spec.locations {
                if let Some(e) = shared.archive.locations[index].evt {
                    mine[e] = InputFile::new(files[e].name.clone(), (o.load)(e)?);
                }
            }
            read_part(shared, &run, spec, ranks, &mut report, &mine)
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
pub(super) fn read_part(
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
pub(super) fn empty_ranks(spec: &PartSpec) -> Vec<RankTrace> {
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
pub(super) fn first_use_order(parts: &[(PartSpec, Part)], table: impl Fn(&FirstUse) -> &[u32]) -> Vec<(u32, u32, u32)> {
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
pub(super) fn merge_names(
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
pub(super) fn merge(trace: &mut Trace, parts: Vec<(PartSpec, Part)>, mut warnings: Vec<(u32, String)>) {
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
pub(super) struct Renumbering<'m> {
    pub(super) functions: &'m [FuncId],
    pub(super) callpaths: &'m [CallpathId],
    pub(super) comms_first: CommId,
    pub(super) comms: &'m [CommId],
    pub(super) metrics: &'m [u32],
}

impl Renumbering<'_> {
    pub(super) fn apply(&self, rt: &mut RankTrace) {
        fn identity(map: &[u32], first: u32) -> bool {
            map.iter().enumerate().all(|(i, &m)| m == first + i as u32)
        }
        if !identity(self.functions, 0) {
            rt.calls.func.map_values(|f| self.functions[f as usize]);
        }
        if !identity(self.callpaths, 0) {
            rt.calls.callpath.map_values(|c| {
                if c != NO_CALLPATH {
                    self.callpaths[c as usize]
                } else {
                    c
                }
            });
        }
        if !identity(self.comms, self.comms_first) {
            let first = self.comms_first;
            // MPI_COMM_WORLD, the columns' fill value, is below `first` and stays.
            for c in rt
                .p2p
                .comm
                .stored_mut()
                .iter_mut()
                .chain(rt.collectives.comm.stored_mut().iter_mut())
            {
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
