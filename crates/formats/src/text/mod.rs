//! tracelogic's native text format: one MPI call per line, easy to write by hand.
//!
//! The format carries every field of the [`Trace`] model, so [`write()`] followed by [`read`]
//! gives back the same trace (same ids, same order). The complete grammar, every key and a
//! hand-written example are in `docs/formats.md` of the repository; in short:
//!
//! ```text
//! #tracelogic-text 1
//! ranks 2
//! 0 0 1.5us MPI_Send send=1 tag=7 bytes=1024
//! 1 0 2us   MPI_Recv recv=0 tag=7 bytes=1024
//! ```
//!
//! Reading is a single pass over the bytes: lines and tokens are slices of the input, and
//! names are interned once, so the only allocations are the model's own columns.

use crate::{FormatError, InputFile, Progress, ProgressSink};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use tracelogic_model::{
    CallKind, CollectiveOp, CommId, FuncId, Location, MetricSamples, P2pDir, Rank, Time, Trace, ANY_SOURCE, ANY_TAG,
    COMM_WORLD, NOT_COMPLETED, NO_CALLPATH, NO_ROOT,
};

/// Maps consulted on every call line (function names, open requests): foldhash instead of
/// SipHash, seeded per map so a hostile file still cannot choose colliding keys.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Typical length of a call line (`0 10500 11000 MPI_Irecv recv=3 tag=0 bytes=4096 req=0`), to
/// reserve the model's columns from the file size.
const CALL_LINE_BYTES: usize = 64;

/// First line of every native text trace (followed by a space and the format version).
pub const MAGIC: &str = "#tracelogic-text";
/// The format version this module reads and writes.
pub const VERSION: u32 = 1;

/// Every collective operation with the spelling used by `coll=`.
const COLLECTIVE_OPS: [(&str, CollectiveOp); 18] = [
    ("Barrier", CollectiveOp::Barrier),
    ("Bcast", CollectiveOp::Bcast),
    ("Gather", CollectiveOp::Gather),
    ("Gatherv", CollectiveOp::Gatherv),
    ("Scatter", CollectiveOp::Scatter),
    ("Scatterv", CollectiveOp::Scatterv),
    ("Allgather", CollectiveOp::Allgather),
    ("Allgatherv", CollectiveOp::Allgatherv),
    ("Alltoall", CollectiveOp::Alltoall),
    ("Alltoallv", CollectiveOp::Alltoallv),
    ("Alltoallw", CollectiveOp::Alltoallw),
    ("Reduce", CollectiveOp::Reduce),
    ("Allreduce", CollectiveOp::Allreduce),
    ("ReduceScatter", CollectiveOp::ReduceScatter),
    ("ReduceScatterBlock", CollectiveOp::ReduceScatterBlock),
    ("Scan", CollectiveOp::Scan),
    ("Exscan", CollectiveOp::Exscan),
    ("Other", CollectiveOp::Other),
];

/// Every call kind with the spelling used by `kind=`.
const CALL_KINDS: [(&str, CallKind); 11] = [
    ("Send", CallKind::Send),
    ("Isend", CallKind::Isend),
    ("Recv", CallKind::Recv),
    ("Irecv", CallKind::Irecv),
    ("SendRecv", CallKind::SendRecv),
    ("Completion", CallKind::Completion),
    ("Probe", CallKind::Probe),
    ("Collective", CallKind::Collective),
    ("Communicator", CallKind::Communicator),
    ("Lifecycle", CallKind::Lifecycle),
    ("Other", CallKind::Other),
];

fn op_name(op: CollectiveOp) -> &'static str {
    COLLECTIVE_OPS
        .iter()
        .find(|(_, o)| *o == op)
        .map(|(n, _)| *n)
        .unwrap_or("Other")
}

fn kind_name(kind: CallKind) -> &'static str {
    CALL_KINDS
        .iter()
        .find(|(_, k)| *k == kind)
        .map(|(n, _)| *n)
        .unwrap_or("Other")
}

// ------------------------------------------------------------------------------------------
// Writing
// ------------------------------------------------------------------------------------------

mod fast_line;
mod lex;
mod reader;
#[cfg(test)]
mod tests;
mod write;

use fast_line::*;
use lex::*;
use reader::*;
pub use write::write;

/// Read a native text trace from its files (exactly one file must start with the magic line).
///
/// Errors name the file and 1-based line: unknown keywords or keys, numbers out of range,
/// ranks, communicators, call paths or requests used before they are defined.
pub fn read(files: &[InputFile], progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    let texts: Vec<&InputFile> = files
        .iter()
        .filter(|f| {
            let b = f.bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&f.bytes);
            b.starts_with(MAGIC.as_bytes())
        })
        .collect();
    let file = match texts.as_slice() {
        [f] => *f,
        [] => {
            let name = files.first().map(|f| f.name.as_str()).unwrap_or("(no input)");
            return Err(FormatError::at_line(
                name,
                1,
                format!("the first line must be `{MAGIC} {VERSION}`"),
            ));
        }
        [a, b, ..] => {
            return Err(FormatError::new(
                &b.name,
                format!(
                    "several text traces were given (`{}` and `{}`); give one",
                    a.name, b.name
                ),
            ))
        }
    };
    read_one(file, progress)
}

pub(super) fn read_one(file: &InputFile, progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    read_one_with(file, progress, true)
}

/// [`read_one`], with the plain-line fast path on or off.
pub(super) fn read_one_with(
    file: &InputFile,
    progress: &mut dyn ProgressSink,
    fast: bool,
) -> Result<Trace, FormatError> {
    let name = file.name.as_str();
    let bytes = file.bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&file.bytes);
    let total = file.bytes.len() as u64;
    let mut reader = Reader::new(name, fast);
    let start = Progress {
        stage: "reading calls".into(),
        bytes_done: 0,
        bytes_total: total,
    };
    if !progress.report(&start) {
        return Err(FormatError::cancelled(name));
    }
    let mut next_report = 4u64 << 20;
    let mut pos = 0usize;
    let mut line_no = 0u64;
    while pos < bytes.len() {
        line_no += 1;
        let line_start = pos;
        if line_start as u64 >= next_report {
            next_report = line_start as u64 + (4 << 20);
            let p = Progress {
                stage: "reading calls".into(),
                bytes_done: line_start as u64,
                bytes_total: total,
            };
            if !progress.report(&p) {
                return Err(FormatError::cancelled(name));
            }
        }
        if line_no > 1 && reader.fast && reader.has_ranks && bytes[line_start].is_ascii_digit() {
            if let Some((done, len)) = reader.fast_call(LineWords::new(&bytes[line_start..])) {
                done.map_err(|m| FormatError::at_line(reader.file, line_no, m))?;
                // Past the line's `\n` or `\r\n` (the fast path stopped at one, or at the end).
                let end = line_start + len;
                pos = end + if bytes.get(end) == Some(&b'\r') { 2 } else { 1 };
                continue;
            }
        }
        let end = memchr::memchr(b'\n', &bytes[pos..])
            .map(|i| pos + i)
            .unwrap_or(bytes.len());
        let raw = &bytes[pos..end];
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        pos = end + 1;
        let line = std::str::from_utf8(raw).map_err(|e| {
            FormatError::at_line(
                name,
                line_no,
                format!("not UTF-8 text (byte {} of the line)", e.valid_up_to() + 1),
            )
        })?;
        if line_no == 1 {
            check_magic(line).map_err(|m| FormatError::at_line(name, 1, m))?;
            continue;
        }
        reader
            .line(line, bytes.len() - pos.min(bytes.len()))
            .map_err(|m| FormatError::at_line(reader.file, line_no, m))?;
    }
    if line_no == 0 {
        return Err(FormatError::at_line(name, 1, "the file is empty"));
    }
    if !reader.has_ranks {
        return Err(FormatError::at_line(name, line_no, "the file has no `ranks N` line"));
    }
    let mut trace = reader.trace;
    for (r, a, b) in reader.spans {
        trace.ranks[r as usize].span = Some((a, b));
    }
    if !reader.explicit_source {
        trace.source = name.to_owned();
    }
    Ok(trace)
}

impl Reader<'_> {
    pub(super) fn line(&mut self, line: &str, remaining: usize) -> Result<(), String> {
        let mut lx = Lexer::new(line);
        let Some(first) = lx.next_token()? else {
            return Ok(());
        };
        if first.value.is_some() {
            return Err(format!("a line cannot start with `{}=`", first.key));
        }
        if first.key.as_bytes().first().is_some_and(u8::is_ascii_digit) {
            self.call(&first.key, &mut lx)
        } else {
            self.directive(&first.key, &mut lx, remaining)
        }
    }
}

pub(super) fn check_magic(line: &str) -> Result<(), String> {
    let rest = line
        .strip_prefix(MAGIC)
        .ok_or_else(|| format!("the first line must be `{MAGIC} {VERSION}`"))?;
    let v = rest.trim();
    match v.parse::<u32>() {
        Ok(VERSION) => Ok(()),
        Ok(other) => Err(format!(
            "text format version {other} is not supported (this reader reads {VERSION})"
        )),
        Err(_) => Err(format!("the first line must be `{MAGIC} {VERSION}`, found `{line}`")),
    }
}
