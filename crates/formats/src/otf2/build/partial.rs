//! The reads that do not build the whole trace at once: streaming by rank, the first
//! timestamp, the rank of each location, and the distributed build of some ranks.

use super::*;

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
    let (mut info, part) = stream_part(archive, sizes, load, wanted, progress, sink)?;
    part.finish(&mut info);
    Ok(info)
}

/// What a stream of some of the ranks noticed besides them: the warnings and counters a
/// stream of every rank reports once, kept apart so that the streams of disjoint sets of
/// ranks, [`StreamPart::merge`]d in rank order, report what one stream of them all reports
/// ([`StreamPart::finish`]).
#[derive(Debug, Default)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
pub struct StreamPart {
    /// The archive's own warnings (the same in every part).
    archive: Vec<String>,
    /// Warnings of the definitions, keyed by location (the same in every part).
    definitions: Vec<(u32, String)>,
    /// Warnings of the ranks read, keyed by location, in the order they were read.
    ranks: Vec<(u32, String)>,
    counters: Counters,
    /// The earliest program command line seen, with its location.
    program: Option<(u32, String)>,
}

impl StreamPart {
    /// Add `other`, the part of ranks after this part's.
    pub fn merge(&mut self, mut other: StreamPart) {
        self.ranks.append(&mut other.ranks);
        self.counters.add(&other.counters);
        if let Some((at, cmd)) = other.program {
            if self.program.as_ref().is_none_or(|(first, _)| at < *first) {
                self.program = Some((at, cmd));
            }
        }
    }

    /// Put the warnings and the program line into `info`, as a stream of every rank gives them.
    pub fn finish(self, info: &mut crate::stream::StreamInfo) {
        if let Some((_, cmd)) = self.program {
            info.meta.push(("program".into(), cmd));
        }
        let mut warnings = self.definitions;
        warnings.extend(self.ranks);
        warnings.sort_by_key(|w| w.0);
        let mut all = self.archive;
        all.extend(warnings.into_iter().map(|w| w.1));
        self.counters.warn(&mut all);
        info.warnings = all;
    }
}

/// The event files [`stream_part`] reads for the ranks `wanted` keeps, in the order it reads
/// them (rank order; a rank's locations in definition order), so that a source paying per read
/// can read several ahead at once ([`crate::stream::FileSource::will_read`]).
pub(crate) fn event_files_in_order(
    archive: &Archive,
    wanted: &dyn Fn(Rank) -> bool,
) -> Result<Vec<usize>, FormatError> {
    let defs_name = archive.files[archive.defs_file].name.as_str();
    let (ranks_of_groups, nranks) = world_ranks(&archive.defs, defs_name)?;
    let (per_rank, _) = parts_by_rank(&archive.defs, &ranks_of_groups, nranks);
    Ok(per_rank
        .iter()
        .filter(|spec| wanted(spec.ranks[0]))
        .flat_map(|spec| spec.locations.iter().filter_map(|&(i, _)| archive.locations[i].evt))
        .collect())
}

/// [`stream`] without the final warnings: `info` has none yet (see [`StreamPart`]).
pub(crate) fn stream_part(
    archive: &Archive,
    sizes: &[u64],
    load: &mut dyn FnMut(usize) -> Result<Vec<u8>, FormatError>,
    wanted: &dyn Fn(Rank) -> bool,
    progress: &mut dyn ProgressSink,
    sink: &mut dyn crate::stream::RankSink,
) -> Result<(crate::stream::StreamInfo, StreamPart), FormatError> {
    let defs = &archive.defs;
    let defs_name = archive.files[archive.defs_file].name.as_str();
    let (ranks_of_groups, nranks) = world_ranks(defs, defs_name)?;
    let shared = Shared::new(archive, false, nranks, defs_name)?;
    let mut head = Trace::new("otf2", archive.anchor_name(), 0);
    add_meta(archive, &mut head);
    let (per_rank, definitions) = parts_by_rank(defs, &ranks_of_groups, nranks);
    let mut warnings = Vec::new();
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
    info.warnings = Vec::new();
    let part = StreamPart {
        archive: archive.warnings.clone(),
        definitions,
        ranks: warnings,
        counters,
        program,
    };
    Ok((info, part))
}

/// How many warnings a whole read of `archive` gives from its definitions alone, after the
/// archive's own warnings, that [`stream`] leaves out (declared Cartesian topologies that do
/// not fit the trace, definition records with unknown ids).
pub(crate) fn definition_warnings(archive: &Archive) -> Result<usize, FormatError> {
    let defs = &archive.defs;
    let defs_name = archive.files[archive.defs_file].name.as_str();
    let (_, nranks) = world_ranks(defs, defs_name)?;
    let shared = Shared::new(archive, false, nranks, defs_name)?;
    let mut trace = Trace::new("otf2", archive.anchor_name(), nranks);
    add_meta(archive, &mut trace);
    trace.comms = shared.base_comms.comms.clone();
    add_cartesian(defs, &shared, &mut trace);
    Ok(trace.warnings.len() + usize::from(!defs.unknown_records.is_empty()))
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
        let mut events =
            crate::otf2::events::LocationEvents::new(name, &bytes, archive.anchor.chunk_size_events, &l.local)?;
        // Times in a location's file never decrease: its first event is its earliest.
        if let Some(Ok(ev)) = events.next() {
            let t = clock.ns(ev.time);
            first = Some(first.map_or(t, |f| f.min(t)));
        }
    }
    Ok(first)
}

/// The world rank of each location of `archive`, in location order.
pub(crate) fn location_ranks(archive: &Archive) -> Result<(Vec<Option<Rank>>, u32), FormatError> {
    let defs_name = archive.files[archive.defs_file].name.as_str();
    let (ranks_of_groups, nranks) = world_ranks(&archive.defs, defs_name)?;
    let ranks = archive
        .defs
        .locations
        .items
        .iter()
        .map(|l| ranks_of_groups.get(&l.group).copied())
        .collect();
    Ok((ranks, nranks))
}

/// The archive's files with only the event files of `specs` loaded whole (`load`), the others
/// empty, and whether every load succeeded.
#[cfg(feature = "distributed")]
fn own_event_files(
    archive: &Archive,
    specs: &[PartSpec],
    load: crate::distributed::Load<'_>,
) -> (Vec<InputFile>, Result<(), FormatError>) {
    let mut files: Vec<InputFile> = archive
        .files
        .iter()
        .map(|f| InputFile::new(f.name.clone(), Vec::new()))
        .collect();
    let loaded = specs
        .iter()
        .flat_map(|s| s.locations.iter().filter_map(|&(i, _)| archive.locations[i].evt))
        .try_for_each(|e| {
            files[e].bytes = load(archive.files, e)?;
            Ok(())
        });
    (files, loaded)
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
    let (files, loaded) = own_event_files(archive, &my_specs, load);
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

/// What process `process` of `processes` of [`build_partial`] sends at its one exchange (its
/// block's parts, or its error), read on its own and with the parts' columns kept: the answer of
/// a block read by a worker that cannot exchange while it reads
/// ([`crate::distributed::read_block_source`]). `build_partial` on another process, fed these
/// answers, merges the whole trace.
#[cfg(feature = "distributed")]
pub(crate) fn read_block(
    archive: &Archive,
    file_sizes: &[u64],
    load: crate::distributed::Load<'_>,
    blocks: crate::distributed::Blocks<'_>,
    (process, processes): (usize, usize),
    threads: usize,
    progress: &mut dyn ProgressSink,
) -> Result<Vec<Vec<u8>>, FormatError> {
    let defs = &archive.defs;
    let defs_name = archive.files[archive.defs_file].name.as_str();
    let (ranks_of_groups, nranks) = world_ranks(defs, defs_name)?;
    let shared = Shared::new(archive, false, nranks, defs_name)?;
    let (per_rank, _) = parts_by_rank(defs, &ranks_of_groups, nranks);
    let mut sizes = vec![0u64; nranks as usize];
    for spec in &per_rank {
        sizes[spec.ranks[0] as usize] = part_bytes_of(archive, spec, &|f| file_sizes[f]);
    }
    let all = crate::distributed::checked_blocks(blocks, &sizes, processes);
    let mine = all[process].clone();
    let (my_specs, my_index): (Vec<PartSpec>, Vec<usize>) = per_rank
        .into_iter()
        .enumerate()
        .filter(|(_, s)| mine.contains(&s.ranks[0]))
        .map(|(i, s)| (s, i))
        .unzip();
    let (files, loaded) = own_event_files(archive, &my_specs, load);
    let read = loaded.and_then(|()| read_parts_in(&shared, &my_specs, threads, progress, &files));
    if let Err(e) = &read {
        if e.cancelled {
            return Err(e.clone());
        }
    }
    let own: Result<Vec<(usize, Part)>, FormatError> = read.and_then(|parts| {
        parts
            .map(|parts| my_index.into_iter().zip(parts).collect())
            .ok_or_else(|| {
                FormatError::new(
                    archive.anchor_name(),
                    "too many call paths for a distributed read (the serial reader reads this trace in one part)",
                )
            })
    });
    Ok(vec![bincode::serialize(&own).expect("a part serialises")])
}
