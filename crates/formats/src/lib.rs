//! Many trace formats in, one [`Trace`] out.
//!
//! Readers work on in-memory files ([`InputFile`]) so the same code serves the CLI (files from
//! disk), the web worker (files dropped in the page) and tests. [`read_trace`] takes any mix of
//! files — several per-rank files, the files of a folder, or one archive — unpacks archives,
//! detects the format from content (names only break ties), and hands the set to the one
//! reader for that format. Every error names the file and where in it things went wrong.

pub mod csv;
#[cfg(feature = "distributed")]
pub mod distributed;
pub mod dumpi;
mod error;
#[cfg(not(target_arch = "wasm32"))]
pub mod fs;
pub mod input;
pub mod otf2;
pub mod pack;
pub mod parallel;
pub mod paraver;
pub mod stream;
pub mod text;

pub use error::FormatError;
pub use input::{detect, expand_archives, Format, InputFile};
use tracelogic_model::Trace;

/// What a reader reports while it works, so a UI can show progress and offer cancel.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Current stage, e.g. `reading definitions`, `reading rank 3`, `matching messages`.
    pub stage: String,
    /// Bytes consumed so far over all input files.
    pub bytes_done: u64,
    /// Total bytes of all input files.
    pub bytes_total: u64,
}

/// Receives [`Progress`] reports; returning `false` cancels the read (the reader then returns
/// [`FormatError::cancelled`]).
pub trait ProgressSink {
    /// Called every so often (at least once per file, at most every few MB).
    fn report(&mut self, progress: &Progress) -> bool;
}

impl<F: FnMut(&Progress) -> bool> ProgressSink for F {
    fn report(&mut self, progress: &Progress) -> bool {
        self(progress)
    }
}

/// A sink that ignores progress and never cancels.
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn report(&mut self, _: &Progress) -> bool {
        true
    }
}

/// Read one trace from a set of files (per-rank files, a folder's content, or archives).
pub fn read_trace(files: Vec<InputFile>) -> Result<Trace, FormatError> {
    read_trace_with_progress(files, &mut NoProgress)
}

/// [`read_trace`] with progress reports and cancellation.
pub fn read_trace_with_progress(files: Vec<InputFile>, progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    let files = expand_archives(files)?;
    if files.is_empty() {
        return Err(FormatError::new("(no input)", "no files were given"));
    }
    let (files, mut warnings) = input::drop_duplicates(files)?;
    let format = detect(&files)?;
    let mut trace = match format {
        Format::Otf2 => otf2::read(&files, progress),
        Format::Dumpi => dumpi::read(&files, progress),
        Format::Paraver => paraver::read(&files, progress),
        Format::PipitCsv => csv::read(&files, progress),
        Format::Text => text::read(&files, progress),
    }?;
    if !warnings.is_empty() {
        warnings.append(&mut trace.warnings);
        trace.warnings = warnings;
    }
    // Readers reserve by estimates and grow by doubling: hand back no spare capacity (a shrink
    // in place or a remapping, not a copy, under the system allocators).
    trace.shrink_to_fit();
    Ok(trace)
}
