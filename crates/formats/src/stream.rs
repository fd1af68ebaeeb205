//! Traces read one rank at a time, for traces larger than memory (`docs/large-traces.md`).
//!
//! A [`FileSource`] lists a trace's files and gives the bytes of one file (or its first bytes)
//! when asked, so a reader can hold one rank's files at a time: files on disk
//! ([`DiskFiles`], native builds), files already in memory ([`MemoryFiles`]), or browser files
//! read slice by slice in the web worker.
//!
//! [`stream_ranks`] hands every rank to a sink as it is built and drops it; [`read_ranks`]
//! builds a trace holding only chosen ranks. OTF2 (one event file per location) is streamed:
//! only the definitions and the event files of the rank at hand are in memory. The other formats
//! are read whole and then handed over rank by rank (the same answers, without the memory bound).

use crate::otf2::Archive;
use crate::{FormatError, InputFile, NoProgress, ProgressSink};
use tracelogic_model::{Communicator, Interner, Rank, RankTrace, Time, Trace};

/// The files of one trace, read on demand.
pub trait FileSource {
    /// Every file: its name relative to the trace's root (`traces/0.evt`) and its size.
    fn list(&self) -> &[(String, u64)];
    /// The bytes of file `index` (position in [`FileSource::list`]).
    fn read(&mut self, index: usize) -> Result<Vec<u8>, FormatError>;
    /// At most the first `len` bytes of file `index`.
    fn read_head(&mut self, index: usize, len: u64) -> Result<Vec<u8>, FormatError> {
        let mut bytes = self.read(index)?;
        bytes.truncate(usize::try_from(len).unwrap_or(usize::MAX));
        Ok(bytes)
    }
    /// The files a reader is about to read whole, in the order it will read them: a source
    /// that pays per read (a browser's `FileReaderSync`) may read several of them at once.
    fn will_read(&mut self, _order: &[usize]) {}
}

/// Files already in memory as a [`FileSource`].
pub struct MemoryFiles {
    files: Vec<InputFile>,
    list: Vec<(String, u64)>,
}

impl MemoryFiles {
    /// The files (archives already unpacked, see [`crate::expand_archives`]).
    pub fn new(files: Vec<InputFile>) -> MemoryFiles {
        let list = files.iter().map(|f| (f.name.clone(), f.bytes.len() as u64)).collect();
        MemoryFiles { files, list }
    }

    /// The files back.
    pub fn into_files(self) -> Vec<InputFile> {
        self.files
    }
}

impl FileSource for MemoryFiles {
    fn list(&self) -> &[(String, u64)] {
        &self.list
    }
    fn read(&mut self, index: usize) -> Result<Vec<u8>, FormatError> {
        Ok(self.files[index].bytes.clone())
    }
    fn read_head(&mut self, index: usize, len: u64) -> Result<Vec<u8>, FormatError> {
        let b = &self.files[index].bytes;
        Ok(b[..b.len().min(usize::try_from(len).unwrap_or(usize::MAX))].to_vec())
    }
}

/// Files on disk as a [`FileSource`] (native builds).
#[cfg(not(target_arch = "wasm32"))]
pub struct DiskFiles {
    paths: Vec<std::path::PathBuf>,
    list: Vec<(String, u64)>,
}

#[cfg(not(target_arch = "wasm32"))]
impl DiskFiles {
    /// The files named on a command line, folders listed recursively (named as
    /// [`crate::input::read_paths`] names them). `None` when one of them is an archive or a
    /// compressed file: those are only read whole.
    pub fn open(paths: &[std::path::PathBuf]) -> Result<Option<DiskFiles>, FormatError> {
        let found = crate::input::list_paths(paths)?;
        let mut list = Vec::with_capacity(found.len());
        let mut files = Vec::with_capacity(found.len());
        for (name, path) in found {
            let io = |e: std::io::Error| FormatError::new(&path.display().to_string(), e.to_string());
            let len = std::fs::metadata(&path).map_err(io)?.len();
            let mut head = Vec::with_capacity(512);
            use std::io::Read;
            std::fs::File::open(&path)
                .map_err(io)?
                .take(512)
                .read_to_end(&mut head)
                .map_err(io)?;
            if crate::input::is_archive(&name, &head) {
                return Ok(None);
            }
            list.push((name, len));
            files.push(path);
        }
        Ok(Some(DiskFiles { paths: files, list }))
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl DiskFiles {
    /// The bytes of file `index`, from any thread.
    pub fn read_at(&self, index: usize) -> Result<Vec<u8>, FormatError> {
        let path = &self.paths[index];
        std::fs::read(path).map_err(|e| FormatError::new(&path.display().to_string(), e.to_string()))
    }
}

/// The whole trace of `source`, as [`crate::read_trace_with_progress`] of all its files gives
/// it, holding fewer file bytes on the way: an OTF2 trace's event files are read rank by rank
/// on the threads that build the ranks, and each is dropped once its rank is built, so the read
/// holds the definitions, the model and the event files of the ranks being built, not every
/// file at once. Other inputs, and OTF2 archives too small to read on several threads, are read
/// whole.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_whole(source: &mut DiskFiles, progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    if streams(source) {
        let mut names = std::collections::HashSet::new();
        let unique = source.list().iter().all(|(n, _)| names.insert(n.as_str()));
        let head = otf2_head(source)?;
        if unique && crate::input::detect(&head).ok() == Some(crate::Format::Otf2) {
            let sizes: Vec<u64> = source.list().iter().map(|(_, s)| *s).collect();
            let disk: &DiskFiles = source;
            if let Some(mut trace) = crate::otf2::read_on_demand(&head, &sizes, &|i| disk.read_at(i), progress)? {
                trace.shrink_to_fit();
                return Ok(trace);
            }
        }
    }
    crate::read_trace_with_progress(read_all(source)?, progress)
}

#[cfg(not(target_arch = "wasm32"))]
impl FileSource for DiskFiles {
    fn list(&self) -> &[(String, u64)] {
        &self.list
    }
    fn read(&mut self, index: usize) -> Result<Vec<u8>, FormatError> {
        self.read_at(index)
    }
    fn read_head(&mut self, index: usize, len: u64) -> Result<Vec<u8>, FormatError> {
        use std::io::Read;
        let path = &self.paths[index];
        let io = |e: std::io::Error| FormatError::new(&path.display().to_string(), e.to_string());
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .map_err(io)?
            .take(len)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        Ok(bytes)
    }
}

/// What a streamed read knows besides the ranks.
#[derive(Debug, Clone, Default)]
pub struct StreamInfo {
    /// Format name (`otf2`...).
    pub format: String,
    /// Where the trace came from.
    pub source: String,
    /// World ranks.
    pub ranks: u32,
    /// The run's span as the format announces it before any event (OTF2's clock properties).
    pub span_hint: Option<(Time, Time)>,
    /// Communicators of the definitions.
    pub comms: Vec<Communicator>,
    /// Facts from the headers.
    pub meta: Vec<(String, String)>,
    /// What the reader noticed.
    pub warnings: Vec<String>,
}

/// Receives the ranks of a streamed read.
pub trait RankSink {
    /// Before the first rank: the trace's rank count, announced span, communicators and
    /// header facts (the warnings come with the answer of the read).
    fn begin(&mut self, info: &StreamInfo);
    /// One rank, with the names of its calls' function ids.
    fn rank(&mut self, rank: &RankTrace, functions: &Interner);
}

/// The one OTF2 anchor among the files, if any.
fn otf2_anchor(list: &[(String, u64)]) -> Option<usize> {
    let mut anchors = list.iter().enumerate().filter(|(_, (n, _))| n.ends_with(".otf2"));
    let first = anchors.next()?.0;
    anchors.next().is_none().then_some(first)
}

/// Every file of `source` in memory except the OTF2 event files (`.evt`), which stay empty.
fn otf2_head(source: &mut dyn FileSource) -> Result<Vec<InputFile>, FormatError> {
    let list = source.list().to_vec();
    let mut files = Vec::with_capacity(list.len());
    for (i, (name, _)) in list.iter().enumerate() {
        let bytes = if name.ends_with(".evt") {
            Vec::new()
        } else {
            source.read(i)?
        };
        files.push(InputFile::new(name.clone(), bytes));
    }
    Ok(files)
}

/// Every file of `source` in memory.
fn read_all(source: &mut dyn FileSource) -> Result<Vec<InputFile>, FormatError> {
    let list = source.list().to_vec();
    let mut files = Vec::with_capacity(list.len());
    for (i, (name, _)) in list.iter().enumerate() {
        files.push(InputFile::new(name.clone(), source.read(i)?));
    }
    Ok(files)
}

/// True when the trace of `source` is read one rank at a time (OTF2 with plain files).
pub fn streams(source: &dyn FileSource) -> bool {
    otf2_anchor(source.list()).is_some()
}

/// Hand every rank of the trace of `source` to `sink` (with the names of its function ids),
/// one at a time. OTF2 is streamed; other formats are read whole first (module documentation).
pub fn stream_ranks(
    source: &mut dyn FileSource,
    progress: &mut dyn ProgressSink,
    sink: &mut dyn RankSink,
) -> Result<StreamInfo, FormatError> {
    if streams(source) {
        let head = otf2_head(source)?;
        let archive = Archive::open(&head)?;
        let sizes: Vec<u64> = source.list().iter().map(|(_, s)| *s).collect();
        source.will_read(&crate::otf2::event_files_in_order(&archive, &|_| true)?);
        return crate::otf2::stream(&archive, &sizes, &mut |i| source.read(i), &|_| true, progress, sink);
    }
    let trace = crate::read_trace_with_progress(read_all(source)?, progress)?;
    let info = StreamInfo {
        format: trace.format.clone(),
        source: trace.source.clone(),
        ranks: trace.num_ranks(),
        span_hint: Some(trace.span()),
        comms: trace.comms.clone(),
        meta: trace.meta.clone(),
        warnings: trace.warnings.clone(),
    };
    sink.begin(&info);
    for rt in &trace.ranks {
        sink.rank(rt, &trace.functions);
    }
    Ok(info)
}

pub use crate::otf2::StreamPart;

/// [`stream_ranks`] of only the ranks `wanted` keeps (given the trace's rank count and a rank),
/// for reading a trace by parts without holding any part's event model (`tracelogic-mpi
/// overview`, the page's workers): the returned info has no warnings yet; the [`StreamPart`]s
/// of disjoint sets of ranks, merged in rank order and finished ([`StreamPart::finish`]), give
/// the warnings and program line one stream of every rank reports. Only the local definitions
/// of the wanted ranks' locations are read ([`otf2_head_of_ranks`]). Only OTF2 with plain files
/// streams ([`streams`]); any other input is an error.
pub fn stream_ranks_part(
    source: &mut dyn FileSource,
    wanted: &dyn Fn(u32, Rank) -> bool,
    progress: &mut dyn ProgressSink,
    sink: &mut dyn RankSink,
) -> Result<(StreamInfo, StreamPart), FormatError> {
    if !streams(source) {
        let name = source
            .list()
            .first()
            .map_or_else(|| "input".to_owned(), |f| f.0.clone());
        return Err(FormatError::new(
            &name,
            "only an OTF2 trace (an anchor file with its definitions and event files) is read by parts one rank at a time",
        ));
    }
    let (head, parsed, ranks) = otf2_head_of_ranks(source, wanted)?;
    let archive = Archive::open_selected(&head, &|i| parsed[i])?;
    let sizes: Vec<u64> = source.list().iter().map(|(_, s)| *s).collect();
    let wanted = |r: Rank| wanted(ranks, r);
    source.will_read(&crate::otf2::event_files_in_order(&archive, &wanted)?);
    crate::otf2::stream_part(&archive, &sizes, &mut |i| source.read(i), &wanted, progress, sink)
}

/// The files of the OTF2 trace of `source` (an anchor among them: [`streams`]) that a read of
/// the ranks `wanted` keeps needs in memory: every file but the event files and the local
/// definitions of other ranks' locations; with which locations' local definitions are read
/// (by position in the global definitions) and the trace's rank count. Each of `k` workers
/// reading a block of ranks thus reads its own locations' `.def` files, not all of them. When
/// a location with events has no `.def`, every `.def` is read: the archive's warning about
/// the missing one names what the others hold.
fn otf2_head_of_ranks(
    source: &mut dyn FileSource,
    wanted: &dyn Fn(u32, Rank) -> bool,
) -> Result<(Vec<InputFile>, Vec<bool>, u32), FormatError> {
    let list = source.list().to_vec();
    let anchor = otf2_anchor(&list).map_or("", |i| list[i].0.as_str());
    let folder = format!("{}/", anchor.strip_suffix(".otf2").unwrap_or(anchor));
    let local_def = |name: &str| name.starts_with(&folder) && name.ends_with(".def");
    let mut files = Vec::with_capacity(list.len());
    for (i, (name, _)) in list.iter().enumerate() {
        let bytes = if name.ends_with(".evt") || local_def(name) {
            Vec::new()
        } else {
            source.read(i)?
        };
        files.push(InputFile::new(name.clone(), bytes));
    }
    let (read, parsed, ranks) = {
        let archive = Archive::open_selected(&files, &|_| false)?;
        let missing = archive.locations.iter().any(|l| l.evt.is_some() && l.def.is_none());
        let (rank_of, ranks) = crate::otf2::location_ranks(&archive)?;
        let parsed: Vec<bool> = rank_of
            .iter()
            .map(|r| missing || r.is_some_and(|r| wanted(ranks, r)))
            .collect();
        let read: Vec<usize> = archive
            .locations
            .iter()
            .zip(&parsed)
            .filter(|(_, &p)| p)
            .filter_map(|(l, _)| l.def)
            .collect();
        (read, parsed, ranks)
    };
    for i in read {
        files[i].bytes = source.read(i)?;
    }
    Ok((files, parsed, ranks))
}

/// What [`stream_ranks`] says of the trace of `source` that a whole read of it
/// ([`crate::read_trace`]) does not, from the definitions alone (no event file is read), so that
/// a trace read otherwise (by parts, `tracelogic-mpi`) reports what the stream reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Announced {
    /// The span announced before any rank ([`StreamInfo::span_hint`], OTF2's clock
    /// properties); `None` for the formats read whole (theirs is the read trace's span).
    pub span: Option<(Time, Time)>,
    /// The whole read's warnings the stream leaves out: those of the definitions alone
    /// (declared Cartesian topologies that do not fit, unknown definition records), which come
    /// right after the archive's own warnings.
    pub left_out: std::ops::Range<usize>,
}

impl Announced {
    /// The warnings [`stream_ranks`] reports, from the whole read's `warnings`.
    pub fn stream_warnings(&self, mut warnings: Vec<String>) -> Vec<String> {
        let end = self.left_out.end.min(warnings.len());
        warnings.drain(self.left_out.start.min(end)..end);
        warnings
    }
}

/// [`Announced`] for the trace of `source`.
pub fn announced(source: &mut dyn FileSource) -> Result<Announced, FormatError> {
    if !streams(source) {
        return Ok(Announced::default());
    }
    struct Nothing;
    impl RankSink for Nothing {
        fn begin(&mut self, _: &StreamInfo) {}
        fn rank(&mut self, _: &RankTrace, _: &Interner) {}
    }
    let head = otf2_head(source)?;
    let archive = Archive::open(&head)?;
    let info = crate::otf2::stream(
        &archive,
        &[],
        &mut |_| Ok(Vec::new()),
        &|_| false,
        &mut NoProgress,
        &mut Nothing,
    )?;
    let first = archive.warnings.len();
    let left_out = first..first + crate::otf2::definition_warnings(&archive)?;
    Ok(Announced {
        span: info.span_hint,
        left_out,
    })
}

/// Bytes read from the start of each OTF2 event file to find its first event.
const HEAD_BYTES: u64 = 16 << 10;

/// The trace of `source` holding only the ranks `ranks` (every rank when `all`; the others
/// present, without events), and the first event time of the whole trace (what times of a
/// selection count from). For OTF2 only the event files of those ranks are read in full, and of
/// the others their first bytes; other formats are read whole.
pub fn read_ranks(
    source: &mut dyn FileSource,
    ranks: &[Rank],
    all: bool,
    progress: &mut dyn ProgressSink,
) -> Result<(Trace, Time), FormatError> {
    if all || !streams(source) {
        let trace = crate::read_trace_with_progress(read_all(source)?, progress)?;
        let start = trace.span().0;
        return Ok((trace, start));
    }
    let mut files = otf2_head(source)?;
    let (wanted_files, start) = {
        let archive = Archive::open(&files)?;
        let start = crate::otf2::first_time(&archive, &mut |i| source.read_head(i, HEAD_BYTES))?;
        let (ranks_of, _) = crate::otf2::location_ranks(&archive)?;
        let most = ranks_of.iter().flatten().max().map_or(0, |&r| r as usize + 1);
        let mut wanted_rank = vec![false; most];
        for &r in ranks {
            if let Some(w) = wanted_rank.get_mut(r as usize) {
                *w = true;
            }
        }
        let wanted: Vec<usize> = archive
            .locations
            .iter()
            .zip(&ranks_of)
            .filter(|(_, r)| r.is_some_and(|r| wanted_rank.get(r as usize) == Some(&true)))
            .filter_map(|(l, _)| l.evt)
            .collect();
        (wanted, start)
    };
    source.will_read(&wanted_files);
    for &i in &wanted_files {
        files[i].bytes = source.read(i)?;
    }
    let mut read = vec![false; files.len()];
    for &i in &wanted_files {
        read[i] = true;
    }
    let mut archive = Archive::open(&files)?;
    for l in &mut archive.locations {
        if l.evt.is_some_and(|e| !read[e]) {
            l.evt = None;
        }
    }
    let trace = crate::otf2::read_archive(&archive, progress)?;
    let start = start.unwrap_or_else(|| trace.span().0);
    Ok((trace, start))
}

/// [`read_ranks`] without progress.
pub fn read_ranks_quietly(source: &mut dyn FileSource, ranks: &[Rank]) -> Result<(Trace, Time), FormatError> {
    read_ranks(source, ranks, false, &mut NoProgress)
}
