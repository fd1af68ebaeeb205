//! OTF2 (Score-P's Open Trace Format 2) reader and writer, written from the OTF2 format as the
//! official OTF2 library (3.0) defines and writes it.
//!
//! Two layers:
//! - [`archive`]: the archive as OTF2 sees it — anchor, global definitions, per-location local
//!   definitions and event files, events decoded with clock-offset correction and local→global
//!   id mapping applied, per location or merged in time order (as the official reader does).
//! - [`read`]: the tracelogic [`Trace`] built from those events: world ranks, communicators with
//!   world-rank members, MPI calls from `MPI_*` Enter/Leave pairs, point-to-point and collective
//!   operations, metric samples.
//!
//! [`write`] produces an archive that this reader and the official OTF2 library both read.

pub mod archive;
mod buffer;
mod build;
pub mod defs;
pub mod events;
#[cfg(test)]
mod tests;
mod writer;

pub use archive::Archive;
pub use writer::{write, write_repeated, write_with_chunk_size};

use crate::parallel::reader_threads;
use crate::{FormatError, InputFile, Progress, ProgressSink};
use tracelogic_model::Trace;

/// Read an OTF2 archive given as its files named by relative path (`traces.otf2`,
/// `traces.def`, `traces/0.evt`, `traces/0.def`...); other files in the set are ignored.
///
/// Refuses compressed and SION archives. Every error names the file and the byte offset.
///
/// Natively the locations of different ranks are decoded on [`reader_threads`] threads when
/// the archive is large enough for it to pay; the trace is the same with any number of threads.
pub fn read(files: &[InputFile], progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    let event_bytes: u64 = files
        .iter()
        .filter(|f| f.name.ends_with(".evt"))
        .map(|f| f.bytes.len() as u64)
        .sum();
    let threads = if event_bytes < build::PARALLEL_FROM_BYTES {
        1
    } else {
        reader_threads()
    };
    read_with(files, progress, false, threads)
}

/// [`read`] on `threads` threads, with every event decoded by the general decoder when
/// `general_only` (the tests check that the direct path for the hot records and any number of
/// threads give the same trace and the same errors).
fn read_with(
    files: &[InputFile],
    progress: &mut dyn ProgressSink,
    general_only: bool,
    threads: usize,
) -> Result<Trace, FormatError> {
    let start = Progress {
        stage: "reading OTF2 definitions".into(),
        bytes_done: 0,
        bytes_total: files.iter().map(|f| f.bytes.len() as u64).sum(),
    };
    if !progress.report(&start) {
        return Err(FormatError::cancelled("(otf2 archive)"));
    }
    let archive = Archive::open(files)?;
    let mut trace = build::build(&archive, progress, general_only, threads)?;
    if !archive.warnings.is_empty() {
        let mut warnings = archive.warnings;
        warnings.append(&mut trace.warnings);
        trace.warnings = warnings;
    }
    Ok(trace)
}

/// [`read`] of an archive whose event files are empty in `files`: each rank's are loaded
/// (`load(i)`, file `i` of true size `sizes[i]`) on the thread that builds the rank and dropped
/// once it is built. `None` when the archive is too small to read on several threads: then it
/// is read whole ([`read`]).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn read_on_demand(
    files: &[InputFile],
    sizes: &[u64],
    load: &(dyn Fn(usize) -> Result<Vec<u8>, FormatError> + Sync),
    progress: &mut dyn ProgressSink,
) -> Result<Option<Trace>, FormatError> {
    let event_bytes: u64 = files
        .iter()
        .zip(sizes)
        .filter(|(f, _)| f.name.ends_with(".evt"))
        .map(|(_, &s)| s)
        .sum();
    let threads = reader_threads();
    if event_bytes < build::PARALLEL_FROM_BYTES || threads < 2 {
        return Ok(None);
    }
    let start = Progress {
        stage: "reading OTF2 definitions".into(),
        bytes_done: 0,
        bytes_total: sizes.iter().sum(),
    };
    if !progress.report(&start) {
        return Err(FormatError::cancelled("(otf2 archive)"));
    }
    let archive = Archive::open(files)?;
    let events = build::OnDemand { sizes, load };
    let Some(mut trace) = build::build_on_demand(&archive, &events, progress, threads)? else {
        return Ok(None);
    };
    if !archive.warnings.is_empty() {
        let mut warnings = archive.warnings;
        warnings.append(&mut trace.warnings);
        trace.warnings = warnings;
    }
    Ok(Some(trace))
}

pub use build::StepwiseRead;
pub use build::StreamPart;
/// The streaming entry points of [`crate::stream`].
pub(crate) use build::{definition_warnings, event_files_in_order, first_time, stream, stream_part};

/// The world rank of each location of `archive` (`None` for a location of no MPI rank), and
/// the number of ranks.
pub(crate) fn location_ranks(archive: &Archive) -> Result<(Vec<Option<tracelogic_model::Rank>>, u32), FormatError> {
    build::location_ranks(archive)
}

/// The trace of an archive already opened (event files of locations whose `evt` was cleared are
/// not read: their ranks come out empty).
pub(crate) fn read_archive(archive: &Archive, progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    let event_bytes: u64 = archive
        .locations
        .iter()
        .filter_map(|l| l.evt)
        .map(|e| archive.files[e].bytes.len() as u64)
        .sum();
    let threads = if event_bytes < build::PARALLEL_FROM_BYTES {
        1
    } else {
        reader_threads()
    };
    let mut trace = build::build(archive, progress, false, threads)?;
    if !archive.warnings.is_empty() {
        let mut warnings = archive.warnings.clone();
        warnings.append(&mut trace.warnings);
        trace.warnings = warnings;
    }
    Ok(trace)
}

/// [`read`] as one process of a distributed read ([`crate::distributed`]).
#[cfg(feature = "distributed")]
pub(crate) fn read_partial(
    files: &[InputFile],
    sizes: &[u64],
    load: crate::distributed::Load<'_>,
    blocks: crate::distributed::Blocks<'_>,
    exchange: &mut dyn crate::distributed::Exchange,
) -> Result<(Trace, Vec<std::ops::Range<tracelogic_model::Rank>>), FormatError> {
    let archive = Archive::open(files)?;
    let (mut trace, all) = build::build_partial(&archive, sizes, load, blocks, exchange, reader_threads())?;
    if !archive.warnings.is_empty() {
        let mut warnings = archive.warnings;
        warnings.append(&mut trace.warnings);
        trace.warnings = warnings;
    }
    Ok((trace, all))
}

/// Process `process`'s block of a distributed read, read on its own
/// ([`crate::distributed::read_block_source`]).
#[cfg(feature = "distributed")]
pub(crate) fn read_block(
    files: &[InputFile],
    sizes: &[u64],
    load: crate::distributed::Load<'_>,
    blocks: crate::distributed::Blocks<'_>,
    process: (usize, usize),
    progress: &mut dyn ProgressSink,
) -> Result<Vec<Vec<u8>>, FormatError> {
    let archive = Archive::open(files)?;
    build::read_block(&archive, sizes, load, blocks, process, reader_threads(), progress)
}
