//! Loop compression of a logical (or single-rank) trace into nested repeats `[ ... ]^n`, the way
//! Logicalization §1 writes them, losing nothing expansion needs.
//!
//! Records are compared by their *shape* (the call with its message sizes and tags set to 0 and
//! its completion links relative), so an iteration whose sizes or tags change is still an
//! iteration of the same loop; sizes and tags are kept per record of the loop body as [`Values`]
//! sequences (a
//! constant, an arithmetic range, a cycle, or a list). Loop counts are values too, so a loop
//! whose inner count changes from one outer iteration to the next still folds.
//!
//! Folding (a compact tandem-repeat compressor, written here because the patterns module offered
//! no callable nesting repeat finder when this was written): scan left to right; at position `i`
//! try as periods the distances to the next few occurrences of the same symbol (up to
//! [`MAX_PERIOD`]); the first period whose next copy is equal starts a run, which is extended to
//! all contiguous copies and replaced by one loop symbol (a loop's identity is its body). Passes
//! repeat until nothing folds, so inner loops become symbols of outer ones. Copies are compared
//! by polynomial hashes (`SliceHashes`), a run exactly before it folds, so finding the periods
//! of a pass costs O(n · candidates), and the inner-loops-first check O(period) at each position
//! that has one.
//!
//! Compressed length = call records + loop headers of the program (Table 1 counts records).
//! Compute gaps are summarised per program record (mean, min, max): they feed the skeleton; the
//! sizes are exact.

use crate::logical::{Collective, LogicalCall, RankBytes, Record};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use tracelogic_model::Rank;

mod expand;
mod fold;
mod length;
mod nodes;
mod program;
mod reroll;
pub(crate) mod values;
mod variants;
pub use expand::{call_text, presence_text};
#[cfg(test)]
use fold::plan_pass;
use fold::{fold, leaf_sequence, shape_ids, FastMap, Item, SliceHashes, Symbol, SymbolTable};
pub use length::{BranchLength, DirectionLength, LengthBreakdown, LoopLength};
use nodes::{absent_at, finish, length, rank_tables_at};
use program::{count_nodes, id_bound, renumber};
pub use program::{Gap, Node, Program};
pub use values::{RankValues, Values, MAX_LISTED, MAX_STORED};
pub use variants::{MARKERS_TRIED, MAX_VARIANTS};

/// Longest loop body tried, in symbols of the pass.
pub const MAX_PERIOD: usize = 4096;
/// Candidate periods tried per folding pass (each a hash comparison), and symbol comparisons
/// while promoting inline loop bodies: a pass stops looking for new periods once it is spent,
/// so compression stays bounded on any input; the count, not a clock, decides, so results are
/// reproducible.
pub const PASS_WORK: u64 = 100_000_000;

/// How [`compress_with`] keeps message sizes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompressOptions {
    /// Keep every message size (runs or lists of any length) instead of summarising sizes the
    /// data choose as [`Values::Histogram`] or [`Values::Stats`]; the expansion is then the
    /// trace exactly.
    pub exact_sizes: bool,
}

/// Compress `records` into nested loops, long patternless size lists summarised
/// ([`CompressOptions::default`]).
pub fn compress(records: &[Record]) -> Program {
    compress_with(records, &CompressOptions::default())
}

/// Compress `records` into nested loops.
///
/// A sequence made of **blocks** — maximal runs of records executed by the same ranks
/// ([`LogicalCall::only_ranks`]), each rank set in one run only, as the merge's per-class blocks
/// are — is compressed block by block and the programs put one after the other. No symbol
/// occurs in two such blocks (`only_ranks` is part of a record's shape), so no loop of the
/// whole sequence spans two of them and the blocks' programs together are never longer than
/// the whole sequence's; but a program gets one variant loop ([`variants`]) per compression,
/// so compressed together only one block's steps folded (LAMMPS PPPM on 8 ranks: 8 blocks of
/// about 14,000 records, 19,218 compressed at 40 + 30 steps; each block alone folds its steps).
pub fn compress_with(records: &[Record], options: &CompressOptions) -> Program {
    let Some(blocks) = blocks(records) else {
        return compress_one(records, options);
    };
    // Each block on a core of its own (natively), then put one after the other.
    let parts =
        crate::logical::per_rank::each_index(blocks.len(), |k| compress_one(&records[blocks[k].clone()], options));
    Program::of_nodes(records.len(), concatenated(parts))
}

/// The nodes of the blocks' programs `parts`, one after the other, each block's loop ids
/// renumbered past the ones before it.
fn concatenated(parts: Vec<Program>) -> Vec<Node> {
    let mut nodes: Vec<Node> = Vec::new();
    for part in parts {
        let offset = id_bound(&nodes) as u32;
        nodes.extend(part.nodes.into_iter().map(|mut n| {
            renumber(&mut n, offset);
            n
        }));
    }
    nodes
}

/// The blocks of `records` ([`compress_with`]): two or more maximal runs of records with the
/// same [`LogicalCall::only_ranks`], no rank set (nor `None`) in two runs; `None` otherwise.
fn blocks(records: &[Record]) -> Option<Vec<std::ops::Range<usize>>> {
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, r) in records.iter().enumerate() {
        match runs.last_mut() {
            Some(run) if records[run.start].call.only_ranks == r.call.only_ranks => run.end = i + 1,
            _ => runs.push(i..i + 1),
        }
    }
    if runs.len() < 2 {
        return None;
    }
    let mut seen = std::collections::HashSet::new();
    runs.iter()
        .all(|r| seen.insert(&records[r.start].call.only_ranks))
        .then_some(runs)
}

/// The ranges of [`blocks`], or the whole sequence as one.
fn block_ranges(records: &[Record]) -> Vec<std::ops::Range<usize>> {
    blocks(records).unwrap_or_else(|| std::iter::once(0..records.len()).collect())
}

/// [`compress_with`] of one sequence: the folding chosen without building a program (a
/// variant loop's choices are read from its items), then its program, built once.
fn compress_one(records: &[Record], options: &CompressOptions) -> Program {
    let shapes = shape_ids(records);
    let (items, length) = choose(records, &shapes);
    let (items, _) = with_nested(records, &shapes, length).unwrap_or((items, length));
    let items = reroll::rerolled(&items).unwrap_or(items);
    let length = nodes::length(&items);
    let program = finish(records, &items, options);
    debug_assert_eq!(program.compressed_length, length, "length counts what finish builds");
    program
}

/// A folding: the folded items and their compressed length ([`length`]).
type Chosen = (Vec<Item>, usize);

/// The shortest folding of `records` whose shapes are `shapes` ([`shape_ids`]), no program
/// built (a variant loop's choices are read from its items,
/// [`variants::choices_nest_items`]). Nested variant loops are not tried ([`with_nested`]).
fn choose(records: &[Record], shapes: &[u32]) -> Chosen {
    let mut table: SymbolTable = SymbolTable::default();
    let (mut syms, mut items) = leaf_sequence(shapes, &mut table);
    let (mut syms2, mut items2, mut table2) = (syms.clone(), items.clone(), table.clone());
    let (leaf_syms, leaf_items) = (syms.clone(), items.clone());
    fold(&mut syms, &mut items, &mut table, false);
    // Candidates are compared by their compressed length, counted on the folded items
    // ([`length`], what [`finish`] would count); a shorter one is kept unless its variant
    // loops' choices nest ([`variants::choices_nest_items`]).
    let mut best: Option<Chosen> = None;
    let mut best_length = length(&items);
    // Iterations that differ only in their inner loop counts (an iterative solver's inner steps
    // per outer step): folded again with inner loops strictly first and the bodies of known loops
    // found inline (an inner loop run once) made loops of one iteration; kept when shorter.
    if fold(&mut syms2, &mut items2, &mut table2, true) {
        let varying = length(&items2);
        if varying < best_length {
            best_length = varying;
            best = Some((items2, varying));
        }
    }
    // Iterations that are one of a few variants (`variants`), marked on the records (steps
    // whose inner loops run the same counts) or on the plainly folded sequence (iterations whose
    // inner loops run varying counts): kept when shorter.
    // Ties keep the first: the folded sequence's markers (outer loops) before the records'.
    // One symbol table for both (the folded sequence's loops are in `table`); each candidate
    // built, folded and dropped before the next (one copy of the sequence held).
    let plain = variants::variant_loops(&syms, &items, records);
    let leaf = variants::variant_loops(&leaf_syms, &leaf_items, records);
    let tried = (plain.iter().map(|p| (p, &syms, &items))).chain(leaf.iter().map(|p| (p, &leaf_syms, &leaf_items)));
    for (planned, level_syms, level_items) in tried {
        let Some((mut s, mut it)) = planned.build(level_syms, level_items, records, &mut table) else {
            continue;
        };
        fold(&mut s, &mut it, &mut table, false);
        if let Some(c) = shorter(records, it, best_length) {
            best_length = c.1;
            best = Some(c);
        }
    }
    best.unwrap_or((items, best_length))
}

/// The folded items `it` of a candidate of [`choose`] as the folding kept, when they are
/// shorter than `best_length` and no variant loop's choices nest ([`variants::choices_nest`]
/// of their program, read from the items: it depends on loop counts only, not on the options
/// the program is built with).
fn shorter(records: &[Record], it: Vec<Item>, best_length: usize) -> Option<Chosen> {
    let counted = length(&it);
    if counted >= best_length {
        return None;
    }
    let nest = variants::choices_nest_items(&it);
    if cfg!(debug_assertions) {
        let nodes = finish(records, &it, &CompressOptions::default()).nodes;
        debug_assert_eq!(nest, variants::choices_nest(&nodes), "choices read from the items");
    }
    (!nest).then_some((it, counted))
}

/// A folding of `records` shorter than `best_length` (the one [`choose`] chose) with a
/// **nested** variant loop in place ([`variants::nested_loops`]: an outer loop whose iterations are equal once each
/// is compressed on its own). Tried once on the folding a caller keeps, not on every candidate
/// it compares ([`Folding::of`] leaves them out, [`Folding::program`] adds them).
fn with_nested(records: &[Record], shapes: &[u32], best_length: usize) -> Option<Chosen> {
    let mut table: SymbolTable = SymbolTable::default();
    let (leaf_syms, leaf_items) = leaf_sequence(shapes, &mut table);
    let (mut syms, mut items) = (leaf_syms.clone(), leaf_items.clone());
    fold(&mut syms, &mut items, &mut table, false);
    let plain = variants::nested_loops(&syms, &items, records);
    let leaf = variants::nested_loops(&leaf_syms, &leaf_items, records);
    let tried = (plain.iter().map(|p| (p, &syms, &items))).chain(leaf.iter().map(|p| (p, &leaf_syms, &leaf_items)));
    let mut best: Option<Chosen> = None;
    for (planned, level_syms, level_items) in tried {
        let Some((mut s, mut it)) = planned.build(level_syms, level_items, records, &mut table) else {
            continue;
        };
        fold(&mut s, &mut it, &mut table, false);
        let shortest = best.as_ref().map_or(best_length, |c| c.1);
        if let Some(c) = shorter(records, it, shortest) {
            best = Some(c);
        }
    }
    best
}

/// The folding of a record sequence, kept to build its program later from records that differ
/// only in what folding does not compare (sizes, tags, per-rank size tables): the merge chooses
/// among candidate merges by their compressed length, and the chosen one is compressed after
/// every rank's sizes were read into it ([`Folding::program`]).
pub struct Folding {
    /// Each record's shape number ([`shape_ids`], per block).
    shapes: Vec<u32>,
    /// Per block ([`blocks`], or the whole sequence): its range, its folded items and their
    /// compressed length.
    parts: Vec<(std::ops::Range<usize>, Vec<Item>, usize)>,
    /// The compressed length, nested variant loops left out ([`with_nested`]: tried once the
    /// folding is kept, by [`Folding::program`]; it only shortens the program).
    pub compressed_length: usize,
}

impl Folding {
    /// The folding of `records` as [`compress`] chooses it, nested variant loops left out,
    /// without building the program.
    ///
    /// Blocks are folded each on a core of its own (natively): no loop crosses a block, and a
    /// block holds its ranks' records only, so the blocks together hold no more than the whole
    /// (the logical trace of LAMMPS `balance` on 8 ranks: its 2.5 M records as 8 blocks).
    pub fn of(records: &[Record]) -> Folding {
        let ranges = block_ranges(records);
        let folded = crate::logical::per_rank::each_index(ranges.len(), |k| {
            let part = &records[ranges[k].clone()];
            let ids = shape_ids(part);
            let (items, length) = choose(part, &ids);
            (ids, items, length)
        });
        let mut shapes = Vec::with_capacity(records.len());
        let mut parts = Vec::with_capacity(ranges.len());
        let mut compressed_length = 0;
        for (range, (ids, items, length)) in ranges.into_iter().zip(folded) {
            compressed_length += length;
            shapes.extend(ids);
            parts.push((range, items, length));
        }
        Folding {
            shapes,
            parts,
            compressed_length,
        }
    }

    /// [`compress`] of `records` through this folding when they fold as the records it was
    /// made from (the same blocks and the same shapes, record for record: then every choice
    /// of [`compress`] is the same), else `compress` itself.
    pub fn program(&self, records: &[Record]) -> Program {
        self.program_with(records, &CompressOptions::default())
    }

    /// [`Folding::program`] with `options` (as [`compress_with`]).
    pub fn program_with(&self, records: &[Record], options: &CompressOptions) -> Program {
        let same_blocks = block_ranges(records);
        let same = same_blocks.len() == self.parts.len()
            && same_blocks.iter().zip(&self.parts).all(|(a, (b, _, _))| a == b)
            && self
                .parts
                .iter()
                .all(|(range, _, _)| shape_ids(&records[range.clone()])[..] == self.shapes[range.clone()]);
        if !same {
            return compress_with(records, options);
        }
        let parts = crate::logical::per_rank::each_index(self.parts.len(), |k| {
            let (range, items, length) = &self.parts[k];
            let (part, shapes) = (&records[range.clone()], &self.shapes[range.clone()]);
            let nested = with_nested(part, shapes, *length).map(|(nested, _)| nested);
            let chosen = nested.as_deref().unwrap_or(items);
            match reroll::rerolled(chosen) {
                Some(rerolled) => finish(part, &rerolled, options),
                None => finish(part, chosen, options),
            }
        });
        let program = Program::of_nodes(records.len(), concatenated(parts));
        debug_assert_eq!(
            program,
            compress_with(records, options),
            "the folding's program is compress's"
        );
        program
    }
}

#[cfg(test)]
mod tests;
