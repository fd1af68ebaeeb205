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
    let (files, mut warnings) = input::drop_duplicates(files)?;
    let format = detect(&files)?;
    let (mut trace, all) = match format {
        Format::Dumpi => crate::dumpi::read_partial(&files, blocks, exchange)?,
        Format::Otf2 => crate::otf2::read_partial(&files, blocks, exchange)?,
        Format::Paraver | Format::PipitCsv | Format::Text => {
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
    for (p, b) in all.iter().enumerate() {
        let r: Result<T, FormatError> = bincode::deserialize(b)
            .unwrap_or_else(|e| panic!("process {p} sent a part that does not deserialise: {e}"));
        out.push(r?);
    }
    Ok(out)
}
