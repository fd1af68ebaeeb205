//! What `tracelogic convert` prints.

use crate::common::{emit, print_json, CliError};
use serde::Serialize;
use std::path::{Path, PathBuf};
use tracelogic_engine::convert::Converted;
use tracelogic_model::{Rank, Selection};

/// What `convert` wrote, as `--json` prints it.
#[derive(Debug, Serialize)]
pub struct Document {
    /// The trace read (file or folder name).
    pub source: String,
    /// Format it was read from.
    pub from: String,
    /// Format written (`text`, `dumpi`, `otf2`).
    pub to: String,
    /// Files written, with their sizes in bytes.
    pub files: Vec<Written>,
    /// World ranks of the written trace.
    pub ranks: u32,
    /// MPI calls written.
    pub calls: u64,
    /// `permutation[r]` is the new number of original rank r; `null` without `--renumber`.
    pub permutation: Option<Vec<Rank>>,
    /// The selection applied before renumbering (original rank numbers, absolute times).
    pub selection: Selection,
}

/// One file written.
#[derive(Debug, Serialize)]
pub struct Written {
    /// Its path.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
}

/// Print what was written (`written`: paths and sizes) as JSON or as one line.
pub fn print(c: &Converted, written: Vec<(PathBuf, u64)>, out: &Path, json: bool) -> Result<(), CliError> {
    let report = Document {
        source: c.source.clone(),
        from: c.from.clone(),
        to: c.to.name().into(),
        files: written
            .into_iter()
            .map(|(path, bytes)| Written { path, bytes })
            .collect(),
        ranks: c.ranks,
        calls: c.calls,
        permutation: c.permutation.clone(),
        selection: c.selection.clone(),
    };
    if json {
        return print_json(&report);
    }
    let bytes: u64 = report.files.iter().map(|f| f.bytes).sum();
    let renumbered = if report.permutation.is_some() {
        ", ranks renumbered"
    } else {
        ""
    };
    emit(|out_| {
        writeln!(
            out_,
            "converted {} ({}) to {}: {} ranks, {} calls{renumbered}; wrote {} file(s), {bytes} bytes, to {}",
            report.source,
            report.from,
            report.to,
            report.ranks,
            report.calls,
            report.files.len(),
            out.display()
        )
    })
}
