//! Input sets: files, archives, and format detection.
//!
//! To be implemented (foundation issue): tar / tar.gz / zip expansion with size limits, and
//! detection of the format from content.

use crate::FormatError;

/// One input file held in memory, named by its path relative to the input root (for an
/// archive, its path inside the archive; for a folder, its path inside the folder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputFile {
    /// Relative path with `/` separators, e.g. `traces/0.evt`.
    pub name: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
}

impl InputFile {
    /// A file from its name and content.
    pub fn new(name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> InputFile {
        InputFile {
            name: name.into(),
            bytes: bytes.into(),
        }
    }
}

/// The trace formats tracelogic reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// OTF2 archive: anchor `.otf2`, global `.def`, per-location `.evt` / `.def`.
    Otf2,
    /// SST DUMPI: `.meta` plus one `.bin` per rank.
    Dumpi,
    /// Paraver `.prv` (+ `.pcf`, `.row`).
    Paraver,
    /// Pipit's CSV export.
    PipitCsv,
    /// tracelogic's native text format (`docs/formats.md` of this repository).
    Text,
}

impl Format {
    /// Short name used in summaries and JSON (`otf2`, `dumpi`, `paraver`, `csv`, `text`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Otf2 => "otf2",
            Format::Dumpi => "dumpi",
            Format::Paraver => "paraver",
            Format::PipitCsv => "csv",
            Format::Text => "text",
        }
    }
}

/// Replace every archive in `files` by its members (recursively), leaving other files as they are.
pub fn expand_archives(files: Vec<InputFile>) -> Result<Vec<InputFile>, FormatError> {
    Ok(files)
}

/// Decide which format a set of files is in, from content first.
pub fn detect(files: &[InputFile]) -> Result<Format, FormatError> {
    let _ = files;
    Err(FormatError::new("(input)", "format detection is not implemented yet"))
}
