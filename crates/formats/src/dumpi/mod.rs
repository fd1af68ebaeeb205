//! SST DUMPI traces: a `PREFIX.meta` text file plus one big-endian `PREFIX-NNNN.bin` per rank.
//!
//! Two layers:
//! - [`raw`] parses one `.bin` file (index, header, datatype sizes, PAPI labels, function names)
//!   and yields its call records with times, thread and every argument decoded, as stored. It is
//!   what a conformance test compares with `dumpi2ascii`.
//! - [`read`] turns the records of all ranks into the shared [`Trace`] model: MPI standard call
//!   names, wall times in ns from the earliest wall time of the set, point-to-point operations
//!   with world-rank peers and bytes from each file's datatype size table, requests linked to the
//!   call that completed them, collectives, communicators followed through `Comm_dup`,
//!   `Comm_split`, `Comm_create`, the group calls, `Cart_create`/`Cart_sub` (row-major, no
//!   reordering), PAPI counters as metrics, and user function enter/exit records as call paths.
//!
//! [`write()`] produces files in the current libdumpi layout that both this reader and the
//! official `libundumpi` read back.

mod build;
pub mod raw;
pub mod spec;
#[cfg(test)]
mod tests;
mod write;

pub use write::write;

use crate::{FormatError, InputFile, Progress, ProgressSink};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use tracelogic_model::{RankTrace, Trace};

/// The facts of a `.meta` file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Meta {
    /// All `key=value` pairs in file order.
    pub entries: Vec<(String, String)>,
    /// Number of ranks (`numprocs`).
    pub numprocs: u32,
    /// Prefix of the per-rank files, relative to the metafile's folder (`fileprefix`).
    pub fileprefix: String,
}

/// Parse a DUMPI `.meta` file.
pub fn parse_meta(file: &InputFile) -> Result<Meta, FormatError> {
    let text = std::str::from_utf8(&file.bytes)
        .map_err(|e| FormatError::at_offset(&file.name, e.valid_up_to() as u64, "metafile is not UTF-8 text"))?;
    let mut meta = Meta::default();
    let mut numprocs_line = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(FormatError::at_line(
                &file.name,
                i as u64 + 1,
                format!("expected key=value, found {:?}", excerpt(line)),
            ));
        };
        let (k, v) = (k.trim().to_owned(), v.trim().to_owned());
        match k.as_str() {
            "numprocs" => {
                meta.numprocs = v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    FormatError::at_line(
                        &file.name,
                        i as u64 + 1,
                        format!("numprocs must be a positive number, found {v:?}"),
                    )
                })?;
                numprocs_line = Some(i);
            }
            "fileprefix" => meta.fileprefix = v.clone(),
            _ => {}
        }
        meta.entries.push((k, v));
    }
    if numprocs_line.is_none() {
        return Err(FormatError::new(&file.name, "metafile has no numprocs line"));
    }
    Ok(meta)
}

/// Find the per-rank files of a trace: `DIR/PREFIX-<rank>.bin` for the rank-number width for
/// which all `numprocs` files exist (libdumpi pads to 4 digits).
fn rank_files<'f>(
    meta_file: &InputFile,
    meta: &Meta,
    files: &'f [InputFile],
) -> Result<Vec<&'f InputFile>, FormatError> {
    let by_name: HashMap<&str, &InputFile> = files.iter().map(|f| (f.name.as_str(), f)).collect();
    let dir = meta_file.name.rfind('/').map_or("", |i| &meta_file.name[..=i]);
    let stem = meta_file.name[dir.len()..]
        .strip_suffix(".meta")
        .unwrap_or(&meta_file.name[dir.len()..]);
    let n = meta.numprocs;
    let mut prefixes = vec![meta.fileprefix.rsplit('/').next().unwrap_or("").to_owned()];
    if !meta.fileprefix.is_empty() && meta.fileprefix.contains('/') {
        prefixes.insert(0, meta.fileprefix.clone());
    }
    prefixes.push(stem.to_owned());
    for prefix in prefixes.iter().filter(|p| !p.is_empty()) {
        let name = |w: usize, r: u32| format!("{dir}{prefix}-{r:0w$}.bin");
        // `w` is a minimum width, as libdumpi's `%04d`: rank 10000 of a 10,001-rank run is
        // `-10000.bin` beside `-0000.bin`.
        for w in [4usize, 1, 2, 3, 5, 6, 7, 8, 9, 10] {
            let found: Option<Vec<&InputFile>> = (0..n).map(|r| by_name.get(name(w, r).as_str()).copied()).collect();
            if let Some(v) = found {
                return Ok(v);
            }
        }
    }
    let prefix = prefixes.iter().find(|p| !p.is_empty()).cloned().unwrap_or_default();
    let missing = (0..n)
        .map(|r| format!("{dir}{prefix}-{r:04}.bin"))
        .find(|f| !by_name.contains_key(f.as_str()))
        .unwrap_or_else(|| format!("{dir}{prefix}-NNNN.bin"));
    Err(FormatError::new(
        &missing,
        format!(
            "rank file missing: {} says numprocs={n} but this file is not among the inputs",
            meta_file.name
        ),
    ))
}

/// The start of `line` for an error message: at most 60 characters, `…` when cut (a corrupt
/// metafile's line may be megabytes of binary).
fn excerpt(line: &str) -> String {
    let mut chars = line.chars();
    let head: String = chars.by_ref().take(60).collect();
    if chars.next().is_some() {
        head + "…"
    } else {
        head
    }
}

/// Most file names one warning lists before saying how many more there are.
const NAMES_LISTED: usize = 5;

/// Most seconds a rank file's header start time may be from the `.meta`'s `startime` before the
/// file is suspected to come from another run (libdumpi writes one start time for all ranks; two
/// runs started seconds apart differ by at least that).
const START_TIME_SLACK_S: u64 = 2;

/// `a, b, c (and N more)` for a warning.
fn list_names(names: &[&str]) -> String {
    let shown = names[..names.len().min(NAMES_LISTED)].join(", ");
    match names.len().saturating_sub(NAMES_LISTED) {
        0 => shown,
        more => format!("{shown} (and {more} more)"),
    }
}

/// A warning naming the DUMPI rank files among the inputs that are not rank files of this trace
/// (another run's files in the same folder, or a rank beyond `numprocs` left by an earlier, larger
/// run): they are not read, and the user should know the answer ignores them.
fn unused_rank_files(meta_file: &InputFile, meta: &Meta, files: &[InputFile], bins: &[&InputFile]) -> Option<String> {
    let used: std::collections::HashSet<&str> = bins.iter().map(|f| f.name.as_str()).collect();
    let unused: Vec<&str> = files
        .iter()
        .filter(|f| f.bytes.starts_with(&raw::MAGIC) && !used.contains(f.name.as_str()))
        .map(|f| f.name.as_str())
        .collect();
    if unused.is_empty() {
        return None;
    }
    Some(format!(
        "{} DUMPI rank file{} among the inputs {} not among the {} rank files {} names (numprocs={}) and {} ignored: {}",
        unused.len(),
        if unused.len() == 1 { "" } else { "s" },
        if unused.len() == 1 { "is" } else { "are" },
        meta.numprocs,
        meta_file.name,
        meta.numprocs,
        if unused.len() == 1 { "was" } else { "were" },
        list_names(&unused)
    ))
}

/// A warning naming the rank files whose header start time is more than [`START_TIME_SLACK_S`]
/// from the `.meta`'s `startime`: a rank file of another run renamed into the set reads without
/// any error but gives wrong matches and times. Only each file's header is looked at.
fn foreign_rank_files(
    meta_file: &InputFile,
    meta: &Meta,
    bins: &[&InputFile],
    starts: &[Option<u64>],
) -> Option<String> {
    let start = meta
        .entries
        .iter()
        .find(|(k, _)| k == "startime")
        .and_then(|(_, v)| v.parse::<u64>().ok())?;
    let odd: Vec<(&str, u64)> = bins
        .iter()
        .zip(starts)
        .filter_map(|(f, t)| Some((f.name.as_str(), (*t)?)))
        .filter(|&(_, t)| t.abs_diff(start) > START_TIME_SLACK_S)
        .collect();
    let (first, t) = *odd.first()?;
    let names: Vec<&str> = odd.iter().map(|&(n, _)| n).collect();
    let what = if odd.len() == 1 {
        format!("{first}'s header says tracing started at {t}")
    } else {
        format!(
            "{} rank files ({}) have headers whose start time differs, e.g. {first}'s {t}",
            odd.len(),
            list_names(&names)
        )
    };
    Some(format!(
        "{what}, {} s from startime={start} in {}: {} from another run? \
         Messages and times mixing two runs are wrong",
        t.abs_diff(start),
        meta_file.name,
        if odd.len() == 1 { "is it" } else { "are they" }
    ))
}

/// The one `.meta` file among `files`, or the error saying why there is none or several.
fn the_meta_file(files: &[InputFile]) -> Result<&InputFile, FormatError> {
    let metas: Vec<&InputFile> = files.iter().filter(|f| f.name.ends_with(".meta")).collect();
    Ok(match metas[..] {
        [m] => m,
        [] => {
            let first_bin = files.iter().find(|f| f.bytes.starts_with(&raw::MAGIC));
            let named = first_bin.or(files.first()).map_or("(input)", |f| f.name.as_str());
            return Err(FormatError::new(
                named,
                "no DUMPI .meta file among the inputs: a DUMPI trace is read from its PREFIX.meta with \
                 all its PREFIX-NNNN.bin rank files (give the trace's folder)",
            ));
        }
        _ => {
            let names: Vec<&str> = metas.iter().map(|m| m.name.as_str()).collect();
            let copies = if metas.iter().all(|m| m.bytes == metas[0].bytes) {
                " (the same content: one trace given twice, from a folder and an archive?)"
            } else {
                ""
            };
            return Err(FormatError::new(
                metas[1].name.as_str(),
                format!(
                    "several DUMPI .meta files ({}){copies}: give one trace at a time",
                    names.join(", ")
                ),
            ));
        }
    })
}

/// The facts of the `.meta` file and of rank 0's header (`header0`), with the mesh
/// coordinates of the ranks that have some (`rank:x,y,z`), as trace metadata.
fn add_facts(trace: &mut Trace, meta: &Meta, header0: Option<raw::Header>, coords: &[String]) {
    for (k, v) in &meta.entries {
        if matches!(
            k.as_str(),
            "hostname" | "numprocs" | "username" | "startime" | "fileprefix"
        ) {
            let key = if k == "startime" { "start time" } else { k.as_str() };
            trace.meta.push((key.to_owned(), v.clone()));
        }
    }
    if let Some(h) = header0 {
        let (a, b, c) = h.version;
        trace.meta.push(("dumpi version".into(), format!("{a}.{b}.{c}")));
        if !coords.is_empty() {
            trace
                .meta
                .push(("mesh coordinates (rank:x,y,z)".into(), coords.join(" ")));
        }
        if !h.mesh_size.is_empty() {
            let dims: Vec<String> = h.mesh_size.iter().map(|d| d.to_string()).collect();
            trace.meta.push(("mesh size".into(), dims.join("x")));
        }
    }
}

/// Read a DUMPI trace (one `.meta` file and its per-rank `.bin` files) into the model.
pub fn read(files: &[InputFile], progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    read_with(files, progress, false)
}

/// [`read`], with every record decoded by the generic per-field loop and every peer translated
/// one by one when `general_only` (the tests check that the fast paths give the same trace and
/// the same errors).
fn read_with(files: &[InputFile], progress: &mut dyn ProgressSink, general_only: bool) -> Result<Trace, FormatError> {
    read_on_threads(files, progress, general_only, None)
}

/// Least bytes of rank files per reading thread: below this, starting threads costs more than
/// it saves, and a small trace is read in rank order with progress inside every file.
const MIN_BYTES_PER_THREAD: u64 = 1 << 20;

/// Least size of a rank file whose columns are reserved on the calling thread before the reading
/// threads start (`build::reserved_columns`); a smaller file's columns are reserved by its
/// reading thread. Reserving costs a page fault per column on the thread that does it (the
/// allocator writes its header), which for thousands of small files outweighs what it saves.
const RESERVE_ON_CALLER_BYTES: usize = 256 << 10;

/// [`read_with`] on `threads` threads (by default [`crate::parallel::reader_threads`], fewer
/// for a small trace): the rank files are read on their own, then merged in rank order, so the
/// trace and the error (the first failing file in rank order) do not depend on the number of
/// threads (the tests compare 1 with several).
fn read_on_threads(
    files: &[InputFile],
    progress: &mut dyn ProgressSink,
    general_only: bool,
    threads: Option<usize>,
) -> Result<Trace, FormatError> {
    let meta_file = the_meta_file(files)?;
    let meta = parse_meta(meta_file)?;
    let bins = rank_files(meta_file, &meta, files)?;
    let mut warnings: Vec<String> = unused_rank_files(meta_file, &meta, files, &bins).into_iter().collect();
    let sizes: Vec<u64> = bins.iter().map(|f| f.bytes.len() as u64).collect();
    let bytes_total: u64 = sizes.iter().sum();
    let threads = threads.unwrap_or_else(|| {
        let most = usize::try_from(bytes_total / MIN_BYTES_PER_THREAD).unwrap_or(usize::MAX);
        crate::parallel::reader_threads().min(most).max(1)
    });
    let source = meta_file.name.strip_suffix(".meta").unwrap_or(&meta_file.name);
    // Each file's sections, and the columns of the large ones reserved on this thread (see
    // `build::reserved_columns`); a file that does not parse is parsed again on its reading
    // thread, which reports the error as for any file.
    let parsed: Vec<Option<raw::BinFile>> = bins
        .iter()
        .map(|f| raw::BinFile::parse(&f.name, &f.bytes).ok())
        .collect();
    let columns: Vec<Mutex<RankTrace>> = parsed
        .iter()
        .enumerate()
        .map(|(r, bin)| match bin {
            Some(b) if b.len() >= RESERVE_ON_CALLER_BYTES => Mutex::new(build::reserved_columns(r as u32, b)),
            _ => Mutex::new(RankTrace::default()),
        })
        .collect();
    let starts: Vec<Option<u64>> = parsed.iter().map(|b| Some(b.as_ref()?.header.start_time)).collect();
    warnings.extend(foreign_rank_files(meta_file, &meta, &bins, &starts));
    // The earliest first record over the files: the reader stores times minus it, and the
    // origin is nearly always it (the general path stores plain times, as a check).
    let time_base = if general_only {
        0
    } else {
        parsed.iter().flatten().filter_map(build::first_time).min().unwrap_or(0)
    };
    let world = meta.numprocs;
    let parts = crate::parallel::map_files(
        &bins,
        &sizes,
        threads,
        &|r| format!("reading rank {r}"),
        &|r| bins[r].name.clone(),
        progress,
        |r, f, advance| {
            let reparsed;
            let bin = match &parsed[r] {
                Some(bin) => bin,
                None => {
                    reparsed = raw::BinFile::parse(&f.name, &f.bytes)?;
                    &reparsed
                }
            };
            let columns = std::mem::take(&mut *columns[r].lock().unwrap_or_else(PoisonError::into_inner));
            build::read_rank(r as u32, world, bin, columns, time_base, general_only, advance)
        },
    )?;
    let mut b = build::Builder::new(source, meta.numprocs);
    b.general_only = general_only;
    let mut header0 = None;
    let mut coords: Vec<String> = Vec::new();
    for (r, part) in parts.into_iter().enumerate() {
        if !part.header.mesh_coords.is_empty() {
            let c: Vec<String> = part.header.mesh_coords.iter().map(|x| x.to_string()).collect();
            coords.push(format!("{r}:{}", c.join(",")));
        }
        if header0.is_none() {
            header0 = Some(part.header.clone());
        }
        b.merge(part);
    }
    let mut trace = b.finish(threads)?;
    add_facts(&mut trace, &meta, header0, &coords);
    if !warnings.is_empty() {
        warnings.append(&mut trace.warnings);
        trace.warnings = warnings;
    }
    let done = Progress {
        stage: "done".into(),
        bytes_done: bytes_total,
        bytes_total,
    };
    if !progress.report(&done) {
        return Err(FormatError::cancelled(&meta_file.name));
    }
    Ok(trace)
}

#[cfg(feature = "distributed")]
/// Rank `rank` of a block, decoded from its file: the parse kept from the first pass
/// (`parsed`), or the file parsed again when it was not kept.
fn decode_rank(
    rank: tracelogic_model::Rank,
    world: tracelogic_model::Rank,
    parsed: Option<&raw::BinFile>,
    file: &InputFile,
    time_base: u64,
    advance: &mut dyn FnMut(u64) -> bool,
) -> Result<build::RankPart, FormatError> {
    let reparsed;
    let bin = match parsed {
        Some(bin) => bin,
        None => {
            reparsed = raw::BinFile::parse(&file.name, &file.bytes)?;
            &reparsed
        }
    };
    build::read_rank(rank, world, bin, RankTrace::default(), time_base, false, advance)
}

/// [`read`] as one process of a distributed read ([`crate::distributed`]): this process decodes
/// the rank files of its block only; the parts without their columns are exchanged so that every
/// process merges and resolves them as [`read`] does. Returns the trace (other blocks' columns
/// empty) and every process's block.
#[cfg(feature = "distributed")]
pub(crate) fn read_partial(
    files: &[InputFile],
    file_sizes: &[u64],
    load: crate::distributed::Load<'_>,
    blocks: crate::distributed::Blocks<'_>,
    exchange: &mut dyn crate::distributed::Exchange,
) -> Result<(Trace, Vec<std::ops::Range<tracelogic_model::Rank>>), FormatError> {
    use crate::distributed::{checked_blocks, gather_results};
    let meta_file = the_meta_file(files)?;
    let meta = parse_meta(meta_file)?;
    let bins = rank_files(meta_file, &meta, files)?;
    let mut warnings: Vec<String> = unused_rank_files(meta_file, &meta, files, &bins).into_iter().collect();
    // The rank files may hold their first bytes only (crate::distributed::read_partial_source):
    // their true sizes cut the blocks, and a process loads its own files whole.
    let index: std::collections::HashMap<&str, usize> =
        files.iter().enumerate().map(|(i, f)| (f.name.as_str(), i)).collect();
    let bin_index: Vec<usize> = bins.iter().map(|f| index[f.name.as_str()]).collect();
    let sizes: Vec<u64> = bin_index.iter().map(|&i| file_sizes[i]).collect();
    let (me, processes) = exchange.process();
    let all = checked_blocks(blocks, &sizes, processes);
    let mine = all[me].clone();
    let my_bytes: u64 = mine.clone().map(|r| sizes[r as usize]).sum();
    let threads = {
        let most = usize::try_from(my_bytes / MIN_BYTES_PER_THREAD).unwrap_or(usize::MAX);
        crate::parallel::reader_threads().min(most).max(1)
    };
    let source = meta_file.name.strip_suffix(".meta").unwrap_or(&meta_file.name);
    let loaded: Result<Vec<InputFile>, FormatError> = mine
        .clone()
        .map(|r| {
            let i = bin_index[r as usize];
            Ok(InputFile::new(files[i].name.clone(), load(files, i)?))
        })
        .collect();
    let (loaded, load_error) = match loaded {
        Ok(l) => (l, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let my_bins: Vec<&InputFile> = loaded.iter().collect();
    let parsed: Vec<Option<raw::BinFile>> = my_bins
        .iter()
        .map(|f| raw::BinFile::parse(&f.name, &f.bytes).ok())
        .collect();
    // The time base of the serial reader: the earliest first record over all files.
    let my_first: Result<Option<u64>, FormatError> = match load_error {
        Some(e) => Err(e),
        None => Ok(parsed.iter().flatten().filter_map(build::first_time).min()),
    };
    let time_base = gather_results(exchange, &my_first)?
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(0);
    let world = meta.numprocs;
    let my_sizes: Vec<u64> = my_bins.iter().map(|f| f.bytes.len() as u64).collect();
    let first = mine.start;
    let decoded = crate::parallel::map_files(
        &my_bins,
        &my_sizes,
        threads,
        &|i| format!("reading rank {}", first as usize + i),
        &|i| my_bins[i].name.clone(),
        &mut crate::NoProgress,
        |i, f, advance| decode_rank(first + i as u32, world, parsed[i].as_ref(), f, time_base, advance),
    );
    // Every process learns every part without its columns (or the first error in rank order).
    let (mut own, columns) = match decoded {
        Ok(mut parts) => {
            let columns: Vec<build::Columns> = parts.iter_mut().map(|p| p.take_columns()).collect();
            (Ok(parts), columns)
        }
        Err(e) => (Err(e), Vec::new()),
    };
    let light = gather_results(exchange, &own)?;
    if let Ok(parts) = &mut own {
        for (p, c) in parts.iter_mut().zip(columns) {
            p.restore_columns(c);
        }
    }
    let mut own = own.unwrap_or_default().into_iter();
    let mut b = build::Builder::new(source, meta.numprocs);
    let mut header0 = None;
    let mut coords: Vec<String> = Vec::new();
    let mut starts: Vec<Option<u64>> = Vec::with_capacity(bins.len());
    for (p, parts) in light.into_iter().enumerate() {
        for part in parts {
            let part = if p == me { own.next().expect("own part") } else { part };
            let r = part.rank();
            starts.push(Some(part.header.start_time));
            if !part.header.mesh_coords.is_empty() {
                let c: Vec<String> = part.header.mesh_coords.iter().map(|x| x.to_string()).collect();
                coords.push(format!("{r}:{}", c.join(",")));
            }
            if header0.is_none() {
                header0 = Some(part.header.clone());
            }
            b.merge(part);
        }
    }
    warnings.extend(foreign_rank_files(meta_file, &meta, &bins, &starts));
    let mut trace = b.finish(threads)?;
    add_facts(&mut trace, &meta, header0, &coords);
    if !warnings.is_empty() {
        warnings.append(&mut trace.warnings);
        trace.warnings = warnings;
    }
    Ok((trace, all))
}

/// What process `process` of `processes` of [`read_partial`] sends at its two exchanges (the
/// earliest first record of its files, then its ranks' parts, or its error), read on its own and
/// with the parts' columns kept: the answer of a block read by a worker that cannot exchange
/// while it reads ([`crate::distributed::read_block_source`]). The parts' times are stored minus
/// the block's own earliest record (the trace's origin is only known once every block is in);
/// the merge moves them to the origin as it does for every part.
#[cfg(feature = "distributed")]
pub(crate) fn read_block(
    files: &[InputFile],
    file_sizes: &[u64],
    load: crate::distributed::Load<'_>,
    blocks: crate::distributed::Blocks<'_>,
    (process, processes): (usize, usize),
    progress: &mut dyn ProgressSink,
) -> Result<Vec<Vec<u8>>, FormatError> {
    let meta_file = the_meta_file(files)?;
    let meta = parse_meta(meta_file)?;
    let bins = rank_files(meta_file, &meta, files)?;
    let index: std::collections::HashMap<&str, usize> =
        files.iter().enumerate().map(|(i, f)| (f.name.as_str(), i)).collect();
    let bin_index: Vec<usize> = bins.iter().map(|f| index[f.name.as_str()]).collect();
    let sizes: Vec<u64> = bin_index.iter().map(|&i| file_sizes[i]).collect();
    let all = crate::distributed::checked_blocks(blocks, &sizes, processes);
    let mine = all[process].clone();
    let my_bytes: u64 = mine.clone().map(|r| sizes[r as usize]).sum();
    let threads = {
        let most = usize::try_from(my_bytes / MIN_BYTES_PER_THREAD).unwrap_or(usize::MAX);
        crate::parallel::reader_threads().min(most).max(1)
    };
    let loaded: Result<Vec<InputFile>, FormatError> = mine
        .clone()
        .map(|r| {
            let i = bin_index[r as usize];
            Ok(InputFile::new(files[i].name.clone(), load(files, i)?))
        })
        .collect();
    let encode = |first: &Result<Option<u64>, FormatError>, parts: &Result<Vec<build::RankPart>, FormatError>| {
        vec![
            bincode::serialize(first).expect("a time serialises"),
            bincode::serialize(parts).expect("a part serialises"),
        ]
    };
    let loaded = match loaded {
        Ok(l) => l,
        Err(e) => return Ok(encode(&Err(e.clone()), &Err(e))),
    };
    let parsed: Vec<Option<raw::BinFile>> = loaded
        .iter()
        .map(|f| raw::BinFile::parse(&f.name, &f.bytes).ok())
        .collect();
    let my_first = parsed.iter().flatten().filter_map(build::first_time).min();
    let time_base = my_first.unwrap_or(0);
    let world = meta.numprocs;
    let my_sizes: Vec<u64> = loaded.iter().map(|f| f.bytes.len() as u64).collect();
    let first = mine.start;
    let decoded = crate::parallel::map_files(
        &loaded,
        &my_sizes,
        threads,
        &|i| format!("reading rank {}", first as usize + i),
        &|i| loaded[i].name.clone(),
        progress,
        |i, f, advance| decode_rank(first + i as u32, world, parsed[i].as_ref(), f, time_base, advance),
    );
    if let Err(e) = &decoded {
        if e.cancelled {
            return Err(e.clone());
        }
    }
    Ok(encode(&Ok(my_first), &decoded))
}
