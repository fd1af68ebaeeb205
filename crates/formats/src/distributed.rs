//! Reading one trace with several cooperating processes (the `distributed` feature; the MPI
//! shell `tracelogic-mpi` drives it).
//!
//! Each process decodes the per-rank files of its own block of ranks (DUMPI `.bin` files, the
//! `.evt` files of OTF2 locations) and nothing else. What every process needs to number things
//! as the serial reader does — the names, call paths and communicator derivations each part
//! met, its span and header — is exchanged without the event columns ([`Exchange::all_gather`]),
//! and every process merges the parts in the serial reader's order. The result, a
//! [`PartialTrace`], is the serial reader's trace with the event columns of other processes'
//! ranks left empty: same ranks, same communicators, same function, region, call-path and
//! communicator ids, same spans, metadata and warnings (so partial analyses of different
//! processes add up, and the columns gathered from all processes make the serial trace again).
//!
//! Formats without per-rank files (Paraver, Pipit CSV, text) are read whole by every process,
//! which then keeps only its block's columns.
//!
//! The exchange is a trait so that this crate needs no MPI: the MPI shell implements it with
//! `MPI_Allgatherv`; the tests implement it with threads.

use crate::stream::FileSource;
use crate::{detect, expand_archives, input, Format, FormatError, InputFile, NoProgress};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::ops::Range;
use tracelogic_model::{Rank, RankTrace, Trace};

/// How the processes of a distributed read talk to each other. Every process calls each
/// method at the same point of the read, in the same order.
pub trait Exchange {
    /// This process's index (0-based) and the number of processes.
    fn process(&self) -> (usize, usize);
    /// Every process's `mine`, in process order.
    fn all_gather(&mut self, mine: &[u8]) -> Vec<Vec<u8>>;
}

/// How the ranks are shared out: given the bytes of each rank's files, one block of ranks per
/// process, in process order, covering every rank once (the caller decides; `tracelogic-mpi`
/// cuts contiguous blocks of about equal bytes).
pub type Blocks<'a> = &'a dyn Fn(&[u64], usize) -> Vec<Range<Rank>>;

/// One process's view of a trace read by several ([module docs](self)).
#[derive(Debug)]
pub struct PartialTrace {
    /// The trace with only the event columns of `owned` ranks (the others keep their number,
    /// locations and span).
    pub trace: Trace,
    /// This process's ranks.
    pub owned: Range<Rank>,
    /// Every process's ranks, in process order.
    pub blocks: Vec<Range<Rank>>,
}

/// Read the trace of `files` (all of them, as the serial reader takes them) as this process of
/// `exchange`; errors are those of the serial reader, the same on every process (an error in
/// one process's files is exchanged, and the first in rank order wins).
pub fn read_partial(
    files: Vec<InputFile>,
    blocks: Blocks<'_>,
    exchange: &mut dyn Exchange,
) -> Result<PartialTrace, FormatError> {
    let files = expand_archives(files)?;
    if files.is_empty() {
        return Err(FormatError::new("(no input)", "no files were given"));
    }
    let (files, warnings) = input::drop_duplicates(files)?;
    let sizes: Vec<u64> = files.iter().map(|f| f.bytes.len() as u64).collect();
    let whole = |files: &[InputFile], i: usize| Ok(files[i].bytes.clone());
    read_loaded(files, &sizes, &whole, warnings, blocks, exchange)
}

/// Bytes read from the start of a per-rank file to tell what it is (the head it keeps in
/// memory until its process loads it whole).
const HEAD_BYTES: u64 = 4096;

/// [`read_partial`] from a [`FileSource`] that reads files on demand: every process reads
/// from it only the definitions (DUMPI `.meta`, the OTF2 anchor and `.def` files, every file
/// that is not a per-rank event file) and the per-rank event files of its own block (DUMPI
/// `.bin`, OTF2 `.evt`); of the others it reads the first bytes only (to tell what they are).
/// The answer is that of [`read_partial`] on all the files.
pub fn read_partial_source(
    source: &mut dyn FileSource,
    blocks: Blocks<'_>,
    exchange: &mut dyn Exchange,
) -> Result<PartialTrace, FormatError> {
    let Some((files, sizes)) = heads_of(source)? else {
        // The same name twice: the serial reader compares the copies, so read them all.
        let list = source.list().to_vec();
        let files = (0..list.len())
            .map(|i| Ok(InputFile::new(list[i].0.clone(), source.read(i)?)))
            .collect::<Result<Vec<_>, FormatError>>()?;
        return read_partial(files, blocks, exchange);
    };
    let source = std::cell::RefCell::new(source);
    let load = |files: &[InputFile], i: usize| {
        if (files[i].bytes.len() as u64) < sizes[i] {
            source.borrow_mut().read(i)
        } else {
            Ok(files[i].bytes.clone())
        }
    };
    read_loaded(files, &sizes, &load, Vec::new(), blocks, exchange)
}

/// Files read by their first bytes or whole, and the true size of each.
type Heads = (Vec<InputFile>, Vec<u64>);

/// The files of `source` as [`read_partial_source`] first reads them: per-rank event files
/// (DUMPI `.bin`, OTF2 `.evt`) by their first bytes only, every other file whole; and the true
/// size of each. `None` when a name comes twice (the serial reader compares the copies).
fn heads_of(source: &mut dyn FileSource) -> Result<Option<Heads>, FormatError> {
    let list = source.list().to_vec();
    let mut names = std::collections::HashSet::with_capacity(list.len());
    if list.iter().any(|(name, _)| !names.insert(name.as_str())) {
        return Ok(None);
    }
    if list.is_empty() {
        return Err(FormatError::new("(no input)", "no files were given"));
    }
    let mut files = Vec::with_capacity(list.len());
    let mut sizes = Vec::with_capacity(list.len());
    for (i, (name, size)) in list.iter().enumerate() {
        let lower = name.to_ascii_lowercase();
        let bytes = if lower.ends_with(".bin") || lower.ends_with(".evt") {
            let head = InputFile::new(name.clone(), source.read_head(i, HEAD_BYTES)?);
            if input::is_rank_file(&head) && (head.bytes.len() as u64) < *size {
                head.bytes
            } else {
                source.read(i)?
            }
        } else {
            source.read(i)?
        };
        sizes.push(if (bytes.len() as u64) < *size {
            *size
        } else {
            bytes.len() as u64
        });
        files.push(InputFile::new(name.clone(), bytes));
    }
    Ok(Some((files, sizes)))
}

/// Process `process` of `processes` of a distributed read, done alone: for readers whose
/// processes cannot wait for each other while they read (the web page's pool of workers, which
/// answer by message). It reads from `source` what [`read_partial_source`] reads (the
/// definitions and its own block's per-rank files) and returns what that process would send at
/// each exchange, in order, with one difference: its ranks' event columns are kept. Whoever
/// collects every process's answer makes the serial reader's trace of them
/// ([`merge_blocks_source`]). Only DUMPI and OTF2 traces (per-rank files) are read this way.
/// `progress` sees the block's files decoded (bytes of the block's files); false cancels.
pub fn read_block_source(
    source: &mut dyn FileSource,
    blocks: Blocks<'_>,
    process: usize,
    processes: usize,
    progress: &mut dyn crate::ProgressSink,
) -> Result<Vec<Vec<u8>>, FormatError> {
    assert!(process < processes, "a process of the read");
    let Some((files, sizes)) = heads_of(source)? else {
        return Err(FormatError::new(
            &source.list()[0].0,
            "the same file name is given twice; such a trace is read in one worker",
        ));
    };
    let source = std::cell::RefCell::new(source);
    let load = |files: &[InputFile], i: usize| {
        if (files[i].bytes.len() as u64) < sizes[i] {
            source.borrow_mut().read(i)
        } else {
            Ok(files[i].bytes.clone())
        }
    };
    match detect(&files)? {
        Format::Dumpi => crate::dumpi::read_block(&files, &sizes, &load, blocks, (process, processes), progress),
        Format::Otf2 => crate::otf2::read_block(&files, &sizes, &load, blocks, (process, processes), progress),
        Format::Paraver | Format::PipitCsv | Format::Text => Err(FormatError::new(
            &files[0].name,
            "only DUMPI and OTF2 traces (per-rank files) are read a block of ranks at a time",
        )),
    }
}

/// The serial reader's trace of `source` from the answers of [`read_block_source`] of every
/// process (`parts[p]` is process `p`'s of `parts.len()`, all with the same `blocks`). Reads the
/// definitions of `source` and the first bytes of its per-rank files, never their events.
/// The error is the serial reader's, or the first process's in process order (as in
/// [`read_partial`]).
pub fn merge_blocks_source(
    source: &mut dyn FileSource,
    blocks: Blocks<'_>,
    parts: Vec<Vec<Vec<u8>>>,
) -> Result<Trace, FormatError> {
    // The merge is one more process of the read, after the others, with no rank of its own:
    // every exchange gives it the blocks' parts, columns included, so it merges the whole trace.
    let with_merger = |sizes: &[u64], processes: usize| {
        let mut all = blocks(sizes, processes - 1);
        all.push(sizes.len() as Rank..sizes.len() as Rank);
        all
    };
    let mut replay = Replay { parts, round: 0 };
    read_partial_source(source, &with_merger, &mut replay).map(|p| p.trace)
}

/// The exchange of [`merge_blocks_source`]: what each block's process sent, round by round.
struct Replay {
    parts: Vec<Vec<Vec<u8>>>,
    round: usize,
}

impl Exchange for Replay {
    fn process(&self) -> (usize, usize) {
        (self.parts.len(), self.parts.len() + 1)
    }

    fn all_gather(&mut self, mine: &[u8]) -> Vec<Vec<u8>> {
        let round = self.round;
        self.round += 1;
        let mut all: Vec<Vec<u8>> = self
            .parts
            .iter_mut()
            .map(|p| p.get_mut(round).map(std::mem::take).unwrap_or_default())
            .collect();
        all.push(mine.to_vec());
        all
    }
}

/// How a reader gets the whole bytes of file `i` of the files it was given (which may hold only
/// the first bytes of the per-rank files: [`read_partial_source`]).
pub(crate) type Load<'a> = &'a dyn Fn(&[InputFile], usize) -> Result<Vec<u8>, FormatError>;

/// The read of [`read_partial`] on files whose per-rank files may be heads only: `sizes` are
/// the true sizes (they cut the blocks), `load` gives a file's whole bytes.
fn read_loaded(
    files: Vec<InputFile>,
    sizes: &[u64],
    load: Load<'_>,
    mut warnings: Vec<String>,
    blocks: Blocks<'_>,
    exchange: &mut dyn Exchange,
) -> Result<PartialTrace, FormatError> {
    let format = detect(&files)?;
    let (mut trace, all) = match format {
        Format::Dumpi => crate::dumpi::read_partial(&files, sizes, load, blocks, exchange)?,
        Format::Otf2 => crate::otf2::read_partial(&files, sizes, load, blocks, exchange)?,
        Format::Paraver | Format::PipitCsv | Format::Text => {
            let files = files
                .iter()
                .enumerate()
                .map(|(i, f)| Ok(InputFile::new(f.name.clone(), load(&files, i)?)))
                .collect::<Result<Vec<_>, FormatError>>()?;
            let mut trace = crate::read_trace_with_progress(files, &mut NoProgress)?;
            let sizes: Vec<u64> = trace.ranks.iter().map(|r| r.calls.len() as u64).collect();
            let all = checked_blocks(blocks, &sizes, exchange.process().1);
            let owned = all[exchange.process().0].clone();
            for rt in &mut trace.ranks {
                if !owned.contains(&rt.rank) {
                    take_columns(rt);
                }
            }
            // The warnings are already in the trace.
            return Ok(PartialTrace {
                trace,
                owned,
                blocks: all,
            });
        }
    };
    if !warnings.is_empty() {
        warnings.append(&mut trace.warnings);
        trace.warnings = warnings;
    }
    let owned = all[exchange.process().0].clone();
    Ok(PartialTrace {
        trace,
        owned,
        blocks: all,
    })
}

/// `blocks(sizes, processes)`, checked: one block per process, contiguous and in rank order
/// (process 0 first), together every rank once.
pub(crate) fn checked_blocks(blocks: Blocks<'_>, sizes: &[u64], processes: usize) -> Vec<Range<Rank>> {
    let all = blocks(sizes, processes);
    assert_eq!(all.len(), processes, "one block of ranks per process");
    let mut next = 0;
    for b in &all {
        assert!(
            b.start == next && b.end >= b.start,
            "blocks are contiguous, in rank order"
        );
        next = b.end;
    }
    assert_eq!(next as usize, sizes.len(), "the blocks cover every rank");
    all
}

/// Take a rank's event columns out, leaving its number, locations and span.
pub fn take_columns(rt: &mut RankTrace) -> RankTrace {
    let light = RankTrace {
        rank: rt.rank,
        locations: rt.locations.clone(),
        span: rt.span,
        ..RankTrace::default()
    };
    std::mem::replace(rt, light)
}

/// Every process's `mine` (its value or its error), or the error of the first process in
/// process order that has one: so every process sees the same outcome.
pub(crate) fn gather_results<T: Serialize + DeserializeOwned>(
    exchange: &mut dyn Exchange,
    mine: &Result<T, FormatError>,
) -> Result<Vec<T>, FormatError> {
    let bytes = bincode::serialize(mine).expect("a part serialises");
    let all = exchange.all_gather(&bytes);
    let mut out = Vec::with_capacity(all.len());
    // Each process's bytes are dropped once decoded (a merge holds the columns of every part).
    for (p, b) in all.into_iter().enumerate() {
        let r: Result<T, FormatError> = bincode::deserialize(&b)
            .unwrap_or_else(|e| panic!("process {p} sent a part that does not deserialise: {e}"));
        out.push(r?);
    }
    Ok(out)
}
