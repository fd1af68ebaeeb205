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
mod length;
mod values;
mod variants;
pub use expand::{call_text, presence_text};
pub use length::{BranchLength, DirectionLength, LengthBreakdown, LoopLength};
pub use values::{RankValues, Values, MAX_LISTED};
pub use variants::{MARKERS_TRIED, MAX_VARIANTS};

/// Longest loop body tried, in symbols of the pass.
pub const MAX_PERIOD: usize = 4096;
/// Next occurrences of the same symbol tried as periods at each position.
const CANDIDATES: usize = 8;
/// Candidate periods tried per folding pass (each a hash comparison), and symbol comparisons
/// while promoting inline loop bodies: a pass stops looking for new periods once it is spent,
/// so compression stays bounded on any input; the count, not a clock, decides, so results are
/// reproducible.
pub const PASS_WORK: u64 = 100_000_000;

/// How [`compress_with`] keeps message sizes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompressOptions {
    /// Keep every message size (lists of any length) instead of summarising long patternless
    /// lists as [`Values::Stats`]; the expansion is then the trace exactly.
    pub exact_sizes: bool,
}

/// Compute time before a program record, over its occurrences, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Gap {
    /// Mean.
    pub mean_ns: u64,
    /// Smallest.
    pub min_ns: u64,
    /// Largest.
    pub max_ns: u64,
}

/// A node of the compressed program. Its JSON also gives a collective call's shown size sequence
/// as `collective_size` ([`Node::collective_size`]).
// Most nodes are calls (a loop holds calls), so boxing the call's shape would add an allocation
// to nearly every node for the few loop nodes' sake.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase", tag = "node")]
pub enum Node {
    /// One record, executed once per visit.
    Call {
        /// Pre-order number of the node in the program (stable id for views).
        id: u32,
        /// The call with its sizes set to 0.
        shape: LogicalCall,
        /// Sizes per visit, one sequence per entry of [`LogicalCall::sizes`].
        sizes: Vec<Values>,
        /// Tags per visit, one sequence per operation (a tag `t` is stored as `t as u32`, so
        /// `MPI_ANY_TAG` is 4294967295).
        tags: Vec<Values>,
        /// Compute time before the call.
        gap: Gap,
        /// Mean time in the call, ns.
        duration_ns: u64,
        /// Per operation, whether it runs per visit (1) or is skipped (0), as
        /// [`Values::ByRank`] over the ranks that skip it in some visit
        /// ([`crate::logical::Operation::absent_on`]); empty when every operation always runs.
        #[serde(default)]
        present: Vec<Values>,
    },
    /// A loop: its body `count` times per visit.
    Loop {
        /// Pre-order number of the node.
        id: u32,
        /// Iterations per visit.
        count: Values,
        /// The body.
        body: Vec<Node>,
    },
}

impl Node {
    /// For a collective call: the sequence of its sizes as the logical trace shows them
    /// ([`Collective::size`]: a broadcast's received bytes, or the root's sent bytes), one of its
    /// last two [`Node::Call::sizes`]; `None` for other nodes.
    pub fn collective_size(&self) -> Option<&Values> {
        let Node::Call { shape, sizes, .. } = self else {
            return None;
        };
        let (Some(c), [.., sent, recv]) = (&shape.collective, sizes.as_slice()) else {
            return None;
        };
        let zero = |v: &Values| *v == Values::Constant { value: 0 };
        Some(if Collective::size_is_received(c.op, zero(sent), zero(recv)) {
            recv
        } else {
            sent
        })
    }
}

impl Serialize for Node {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "lowercase", tag = "node")]
        enum Json<'a> {
            Call {
                id: u32,
                shape: &'a LogicalCall,
                sizes: &'a [Values],
                #[serde(skip_serializing_if = "Option::is_none")]
                collective_size: Option<&'a Values>,
                tags: &'a [Values],
                gap: &'a Gap,
                duration_ns: u64,
                #[serde(skip_serializing_if = "<[Values]>::is_empty")]
                present: &'a [Values],
            },
            Loop {
                id: u32,
                count: &'a Values,
                body: &'a [Node],
            },
        }
        let json = match self {
            Node::Call {
                id,
                shape,
                sizes,
                tags,
                gap,
                duration_ns,
                present,
            } => Json::Call {
                id: *id,
                shape,
                sizes,
                collective_size: self.collective_size(),
                tags,
                gap,
                duration_ns: *duration_ns,
                present,
            },
            Node::Loop { id, count, body } => Json::Loop { id: *id, count, body },
        };
        json.serialize(serializer)
    }
}

/// A loop-compressed trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Program {
    /// Records of the uncompressed trace.
    pub raw_length: usize,
    /// Call records plus loop headers of the program.
    pub compressed_length: usize,
    /// `raw_length / compressed_length` (1 for an empty trace).
    pub ratio: f64,
    /// Deepest loop nesting.
    pub depth: usize,
    /// The program.
    pub nodes: Vec<Node>,
}

impl Program {
    /// The program of `nodes` for a trace of `raw_length` records, its length, ratio and depth
    /// counted from the nodes.
    fn of_nodes(raw_length: usize, nodes: Vec<Node>) -> Program {
        let compressed_length = count_nodes(&nodes);
        Program {
            raw_length,
            compressed_length,
            ratio: if compressed_length == 0 {
                1.0
            } else {
                raw_length as f64 / compressed_length as f64
            },
            depth: depth(&nodes),
            nodes,
        }
    }
}

/// A hash map through the multiply-rotate word hash (keys compared for equality only).
type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<crate::logical::FastHasher>>;
/// Symbols (a record's shape, a loop's body) by number.
type SymbolTable = FastMap<Symbol, u32>;

/// A call compared and hashed as its shape ([`LogicalCall::shape`]: sizes, tags and per-rank
/// size tables left out; the per-class size tables kept) without building the shape (three
/// copies of every record).
struct ShapeOf<'a>(&'a LogicalCall);

impl PartialEq for ShapeOf<'_> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0, other.0);
        a.function == b.function
            && a.kind == b.kind
            && a.ops.len() == b.ops.len()
            && a.ops
                .iter()
                .zip(&b.ops)
                .all(|(x, y)| x.dir == y.dir && x.partner == y.partner && x.bytes_by_class == y.bytes_by_class)
            && match (&a.collective, &b.collective) {
                (None, None) => true,
                (Some(x), Some(y)) => {
                    x.op == y.op
                        && x.root == y.root
                        && x.root_in_comm == y.root_in_comm
                        && x.root_by_rank == y.root_by_rank
                        && x.comm_size == y.comm_size
                }
                _ => false,
            }
            && a.completes == b.completes
            && a.only_ranks == b.only_ranks
    }
}

impl Eq for ShapeOf<'_> {}

impl std::hash::Hash for ShapeOf<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let c = self.0;
        c.function.hash(h);
        c.kind.hash(h);
        c.ops.len().hash(h);
        for o in &c.ops {
            o.dir.hash(h);
            o.partner.hash(h);
            o.bytes_by_class.hash(h);
        }
        if let Some(x) = &c.collective {
            (x.op, x.root, x.root_in_comm, &x.root_by_rank, x.comm_size).hash(h);
        }
        c.completes.hash(h);
        c.only_ranks.hash(h);
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Symbol {
    Leaf(u32),
    Loop(Vec<u32>),
}

/// An occurrence during folding: a record, or a loop with all its iterations.
#[derive(Clone)]
enum Item {
    Leaf(usize),
    Loop(Vec<Vec<Item>>),
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
    let mut nodes: Vec<Node> = Vec::new();
    for range in blocks {
        let part = compress_one(&records[range.clone()], options);
        let offset = id_bound(&nodes) as u32;
        nodes.extend(part.nodes.into_iter().map(|mut n| {
            renumber(&mut n, offset);
            n
        }));
    }
    Program::of_nodes(records.len(), nodes)
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

/// Add `offset` to the ids of `node` and its body.
fn renumber(node: &mut Node, offset: u32) {
    match node {
        Node::Call { id, .. } => *id += offset,
        Node::Loop { id, body, .. } => {
            *id += offset;
            for n in body {
                renumber(n, offset);
            }
        }
    }
}

/// [`compress_with`] of one sequence.
fn compress_one(records: &[Record], options: &CompressOptions) -> Program {
    let shapes = shape_ids(records);
    let chosen = choose(records, &shapes, Some(options));
    match with_nested(records, &shapes, chosen.length(), Some(options)).unwrap_or(chosen) {
        Chosen::Built(program, _) => program,
        Chosen::Items(items, length) => {
            let program = finish(records, &items, options);
            debug_assert_eq!(program.compressed_length, length, "length counts what finish builds");
            program
        }
    }
}

/// Each record's shape ([`LogicalCall::shape`]) as a number, in order of first occurrence;
/// shapes are compared without being built.
fn shape_ids(records: &[Record]) -> Vec<u32> {
    let mut shapes: FastMap<ShapeOf, u32> = FastMap::default();
    records
        .iter()
        .map(|r| {
            let next = shapes.len() as u32;
            *shapes.entry(ShapeOf(&r.call)).or_insert(next)
        })
        .collect()
}

/// The folding [`compress_one`] keeps: the program when it had to be built to be chosen (a
/// variant loop: whether its choices nest is read from its nodes), else the folded items; each
/// with its compressed length.
enum Chosen {
    Built(Program, Vec<Item>),
    Items(Vec<Item>, usize),
}

impl Chosen {
    fn length(&self) -> usize {
        match self {
            Chosen::Built(p, _) => p.compressed_length,
            Chosen::Items(_, length) => *length,
        }
    }

    fn into_items(self) -> Vec<Item> {
        match self {
            Chosen::Built(_, items) | Chosen::Items(items, _) => items,
        }
    }
}

/// The shortest folding of `records` whose shapes are `shapes` ([`shape_ids`]). With
/// `build: None` no program is built (a variant loop's choices are read from its items,
/// [`variants::choices_nest_items`]): the caller only wants the folding and its length.
/// Nested variant loops are not tried ([`with_nested`]).
fn choose(records: &[Record], shapes: &[u32], build: Option<&CompressOptions>) -> Chosen {
    let mut table: SymbolTable = SymbolTable::default();
    let (mut syms, mut items) = leaf_sequence(shapes, &mut table);
    let (mut syms2, mut items2, mut table2) = (syms.clone(), items.clone(), table.clone());
    let (leaf_syms, leaf_items) = (syms.clone(), items.clone());
    fold(&mut syms, &mut items, &mut table, false);
    // Candidates are compared by their compressed length, counted on the folded items
    // ([`length`], what [`finish`] would count); only a candidate that is shorter is built,
    // where its nodes decide ([`variants::choices_nest`]), and the one kept at the end.
    let mut best: Option<Chosen> = None;
    let mut best_length = length(&items);
    // Iterations that differ only in their inner loop counts (an iterative solver's inner steps
    // per outer step): folded again with inner loops strictly first and the bodies of known loops
    // found inline (an inner loop run once) made loops of one iteration; kept when shorter.
    if fold(&mut syms2, &mut items2, &mut table2, true) {
        let varying = length(&items2);
        if varying < best_length {
            best_length = varying;
            best = Some(Chosen::Items(items2, varying));
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
        if let Some(c) = shorter(records, it, best_length, build) {
            best_length = c.length();
            best = Some(c);
        }
    }
    best.unwrap_or(Chosen::Items(items, best_length))
}

/// The records' symbols and items before any folding (one leaf per record).
fn leaf_sequence(shapes: &[u32], table: &mut SymbolTable) -> (Vec<u32>, Vec<Item>) {
    let mut syms: Vec<u32> = Vec::with_capacity(shapes.len());
    for &shape in shapes {
        let next = table.len() as u32;
        syms.push(*table.entry(Symbol::Leaf(shape)).or_insert(next));
    }
    (syms, (0..shapes.len()).map(Item::Leaf).collect())
}

/// The folded items `it` of a candidate of [`choose`] as the folding kept, when they are
/// shorter than `best_length` and no variant loop's choices nest ([`variants::choices_nest`]).
fn shorter(records: &[Record], it: Vec<Item>, best_length: usize, build: Option<&CompressOptions>) -> Option<Chosen> {
    let counted = length(&it);
    if counted >= best_length {
        return None;
    }
    match build {
        Some(options) => {
            let program = finish(records, &it, options);
            debug_assert_eq!(program.compressed_length, counted, "length counts what finish builds");
            (!variants::choices_nest(&program.nodes)).then_some(Chosen::Built(program, it))
        }
        None => {
            let nest = variants::choices_nest_items(&it);
            if let Some(o) = cfg!(debug_assertions).then(CompressOptions::default) {
                let nodes = finish(records, &it, &o).nodes;
                debug_assert_eq!(nest, variants::choices_nest(&nodes), "choices read from the items");
            }
            (!nest).then_some(Chosen::Items(it, counted))
        }
    }
}

/// A folding of `records` shorter than `best_length` (the one [`choose`] chose) with a
/// **nested** variant loop in place ([`variants::nested_loops`]: an outer loop whose iterations are equal once each
/// is compressed on its own). Tried once on the folding a caller keeps, not on every candidate
/// it compares ([`Folding::of`] leaves them out, [`Folding::program`] adds them).
fn with_nested(
    records: &[Record],
    shapes: &[u32],
    best_length: usize,
    build: Option<&CompressOptions>,
) -> Option<Chosen> {
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
        let shortest = best.as_ref().map_or(best_length, Chosen::length);
        if let Some(c) = shorter(records, it, shortest, build) {
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
    pub fn of(records: &[Record]) -> Folding {
        let ranges = block_ranges(records);
        let mut shapes = Vec::with_capacity(records.len());
        let mut parts = Vec::with_capacity(ranges.len());
        let mut compressed_length = 0;
        for range in ranges {
            let part = &records[range.clone()];
            let ids = shape_ids(part);
            let chosen = choose(part, &ids, None);
            let length = chosen.length();
            compressed_length += length;
            shapes.extend(ids);
            parts.push((range, chosen.into_items(), length));
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
        let options = CompressOptions::default();
        let same_blocks = block_ranges(records);
        let same = same_blocks.len() == self.parts.len()
            && same_blocks.iter().zip(&self.parts).all(|(a, (b, _, _))| a == b)
            && self
                .parts
                .iter()
                .all(|(range, _, _)| shape_ids(&records[range.clone()])[..] == self.shapes[range.clone()]);
        if !same {
            return compress_with(records, &options);
        }
        let mut nodes: Vec<Node> = Vec::new();
        for (range, items, length) in &self.parts {
            let (part, shapes) = (&records[range.clone()], &self.shapes[range.clone()]);
            let part = match with_nested(part, shapes, *length, Some(&options)) {
                Some(Chosen::Built(program, _)) => program,
                Some(Chosen::Items(nested, _)) => finish(part, &nested, &options),
                None => finish(part, items, &options),
            };
            let offset = id_bound(&nodes) as u32;
            nodes.extend(part.nodes.into_iter().map(|mut n| {
                renumber(&mut n, offset);
                n
            }));
        }
        let program = Program::of_nodes(records.len(), nodes);
        debug_assert_eq!(
            program,
            compress_with(records, &options),
            "the folding's program is compress's"
        );
        program
    }
}

/// The compressed length of the program of `items` (call records plus loop headers), counted
/// as [`finish`] builds it ([`build`]'s recursion without its values): equal to its
/// `compressed_length`.
fn length(items: &[Item]) -> usize {
    items.iter().map(|i| length_of(&[i])).sum()
}

/// Nodes of [`build`] of `occurrences` (occurrences of one symbol).
fn length_of(occurrences: &[&Item]) -> usize {
    match occurrences[0] {
        Item::Leaf(_) => 1,
        Item::Loop(_) => {
            let period = occurrences
                .iter()
                .find_map(|o| match o {
                    Item::Loop(its) => its.first().map(Vec::len),
                    Item::Leaf(_) => None,
                })
                .unwrap_or(0);
            let body: usize = (0..period)
                .map(|k| {
                    let inner: Vec<&Item> = occurrences
                        .iter()
                        .flat_map(|o| match o {
                            Item::Loop(its) => its.iter().map(move |it| &it[k]),
                            Item::Leaf(_) => unreachable!("occurrences share a symbol"),
                        })
                        .collect();
                    length_of(&inner)
                })
                .sum();
            1 + body
        }
    }
}

/// Fold tandem repeats of `syms` (and `items` alongside) until none is left. With `varying`,
/// each pass first makes the inline bodies of known loops loops of one iteration
/// ([`promote_inline_bodies`]) and postpones a run while a shorter one starts anywhere inside
/// it ([`plan_pass_with`]); returns whether `varying` promoted anything.
fn fold(syms: &mut Vec<u32>, items: &mut Vec<Item>, table: &mut SymbolTable, varying: bool) -> bool {
    let mut promoted = false;
    let intern = |s: Symbol, table: &mut SymbolTable| {
        let next = table.len() as u32;
        *table.entry(s).or_insert(next)
    };
    loop {
        if varying && promote_inline_bodies(syms, items, table) {
            promoted = true;
        }
        let plan = plan_pass_with(syms, varying);
        if plan.is_empty() {
            break;
        }
        let mut next_syms = Vec::with_capacity(syms.len());
        let mut next_items = Vec::with_capacity(items.len());
        let mut it = std::mem::take(items).into_iter();
        let mut pos = 0usize;
        for (start, period, count) in plan {
            while pos < start {
                next_items.push(it.next().expect("plan within the sequence"));
                next_syms.push(syms[pos]);
                pos += 1;
            }
            let body = syms[start..start + period].to_vec();
            let iterations: Vec<Vec<Item>> = (0..count).map(|_| it.by_ref().take(period).collect()).collect();
            next_syms.push(intern(Symbol::Loop(body), table));
            next_items.push(Item::Loop(iterations));
            pos += period * count;
        }
        next_items.extend(it);
        next_syms.extend_from_slice(&syms[pos..]);
        *syms = next_syms;
        *items = next_items;
    }
    promoted
}

/// Replace every inline copy of a known loop's body in `syms` (outside that loop) by a loop of
/// that body run once, longest body first, left to right; whether any was replaced.
fn promote_inline_bodies(syms: &mut Vec<u32>, items: &mut Vec<Item>, table: &SymbolTable) -> bool {
    // Loop bodies by first symbol, longest first.
    let mut bodies: HashMap<u32, Vec<(&[u32], u32)>> = HashMap::new();
    for (s, &id) in table {
        if let Symbol::Loop(body) = s {
            if let Some(&first) = body.first() {
                bodies.entry(first).or_default().push((body.as_slice(), id));
            }
        }
    }
    for v in bodies.values_mut() {
        v.sort_unstable_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.1.cmp(&b.1)));
    }
    let n = syms.len();
    let mut work = 0u64;
    let mut hits: Vec<(usize, usize, u32)> = Vec::new();
    let mut i = 0;
    while i < n {
        let found = bodies.get(&syms[i]).and_then(|cands| {
            cands.iter().find(|(body, _)| {
                work += body.len().min(n - i) as u64;
                work <= PASS_WORK && i + body.len() <= n && syms[i..i + body.len()] == **body
            })
        });
        match found {
            Some(&(body, id)) => {
                hits.push((i, body.len(), id));
                i += body.len();
            }
            None => i += 1,
        }
    }
    if hits.is_empty() {
        return false;
    }
    let mut next_syms = Vec::with_capacity(n);
    let mut next_items = Vec::with_capacity(n);
    let mut it = std::mem::take(items).into_iter();
    let mut pos = 0;
    for (start, len, id) in hits {
        while pos < start {
            next_items.push(it.next().expect("hit within the sequence"));
            next_syms.push(syms[pos]);
            pos += 1;
        }
        let iteration: Vec<Item> = it.by_ref().take(len).collect();
        pos += len;
        // Right after a loop of the same body: one more iteration of it.
        if next_syms.last() == Some(&id) {
            if let Some(Item::Loop(its)) = next_items.last_mut() {
                its.push(iteration);
                continue;
            }
        }
        next_items.push(Item::Loop(vec![iteration]));
        next_syms.push(id);
    }
    next_items.extend(it);
    next_syms.extend_from_slice(&syms[pos..]);
    *syms = next_syms;
    *items = next_items;
    true
}

/// The program of the folded `items`.
fn finish(records: &[Record], items: &[Item], options: &CompressOptions) -> Program {
    let mut id = 0u32;
    let nodes: Vec<Node> = items.iter().map(|i| build(&[i], records, &mut id, options)).collect();
    Program::of_nodes(records.len(), nodes)
}

/// Polynomial hashes of every slice of a symbol sequence in O(1) after O(n) set-up: equal
/// slices have equal hashes (unequal ones collide with probability about n/2^64, so a caller
/// compares the symbols before it relies on an equality).
pub(super) struct SliceHashes {
    prefix: Vec<u64>,
    power: Vec<u64>,
}

impl SliceHashes {
    const BASE: u64 = 0x9E37_79B9_7F4A_7C15 | 1;

    pub(super) fn of(syms: &[u32]) -> Self {
        let n = syms.len();
        let mut prefix = vec![0u64; n + 1];
        let mut power = vec![1u64; n + 1];
        for (k, &x) in syms.iter().enumerate() {
            prefix[k + 1] = prefix[k].wrapping_mul(Self::BASE).wrapping_add(x as u64 + 1);
            power[k + 1] = power[k].wrapping_mul(Self::BASE);
        }
        SliceHashes { prefix, power }
    }

    /// The hash of `syms[l..r]`.
    pub(super) fn of_slice(&self, l: usize, r: usize) -> u64 {
        self.prefix[r].wrapping_sub(self.prefix[l].wrapping_mul(self.power[r - l]))
    }
}

/// Runs to fold in one pass: `(start, period, copies)`, increasing and disjoint.
#[cfg(test)]
fn plan_pass(s: &[u32]) -> Vec<(usize, usize, usize)> {
    plan_pass_with(s, false)
}

/// [`plan_pass`]; `strict` postpones a run while a shorter repeat starts anywhere inside it
/// (not only inside its first copy), so that `B A X Y B A X Y X Y` folds `[X Y]^2` first.
fn plan_pass_with(s: &[u32], strict: bool) -> Vec<(usize, usize, usize)> {
    let n = s.len();
    let mut next_same = vec![usize::MAX; n];
    let mut last: FastMap<u32, usize> = FastMap::default();
    for i in (0..n).rev() {
        if let Some(j) = last.insert(s[i], i) {
            next_same[i] = j;
        }
    }
    // Two copies are compared by their polynomial hashes (O(1) a candidate, where comparing
    // symbols cost the length of their common prefix: long near-repeats, CP2K's, made that most
    // of the folding); a run is compared symbol by symbol before it is folded.
    let hashes = SliceHashes::of(s);
    let hash = |l: usize, r: usize| hashes.of_slice(l, r);
    // Smallest period found at each position.
    let mut work = 0u64;
    let best: Vec<usize> = (0..n)
        .map(|i| {
            let mut j = next_same[i];
            for _ in 0..CANDIDATES {
                if j == usize::MAX || work > PASS_WORK {
                    break;
                }
                let p = j - i;
                if p > MAX_PERIOD || i + 2 * p > n {
                    break;
                }
                work += 1;
                if hash(i, i + p) == hash(i + p, i + 2 * p) {
                    return p;
                }
                j = next_same[j];
            }
            usize::MAX
        })
        .collect();
    let mut plan = Vec::new();
    let mut i = 0;
    while i < n {
        let p = best[i];
        // Inner loops first: a shorter repeat lying inside the first copy folds in this pass,
        // the outer one in a later pass (otherwise `A X X A X X` would fold as `[A X X]^2`
        // before `[X]^2`, and the nesting would depend on the iteration count).
        let blocked = p != usize::MAX && (i + 1..i + p).any(|j| best[j] < p && j + 2 * best[j] <= i + p);
        if p == usize::MAX || blocked || s[i..i + p] != s[i + p..i + 2 * p] {
            i += 1;
            continue;
        }
        let mut k = 2;
        while i + (k + 1) * p <= n && s[i + k * p..i + (k + 1) * p] == s[i..i + p] {
            k += 1;
        }
        if strict && (i + 1..i + k * p).any(|j| best[j] < p) {
            i += 1;
            continue;
        }
        plan.push((i, p, k));
        i += k * p;
    }
    plan
}

/// The program node of a set of occurrences of the same symbol.
fn build(occurrences: &[&Item], records: &[Record], id: &mut u32, options: &CompressOptions) -> Node {
    let my_id = *id;
    *id += 1;
    match occurrences[0] {
        Item::Leaf(first) => {
            let recs: Vec<&Record> = occurrences
                .iter()
                .map(|o| match o {
                    Item::Leaf(i) => &records[*i],
                    Item::Loop(_) => unreachable!("occurrences share a symbol"),
                })
                .collect();
            let slots = records[*first].call.sizes().len();
            let mut per_slot: Vec<Vec<u64>> = vec![Vec::with_capacity(recs.len()); slots];
            for r in &recs {
                for (k, v) in r.call.sizes().into_iter().enumerate().take(slots) {
                    per_slot[k].push(v);
                }
            }
            let ops = records[*first].call.ops.len();
            let mut per_tag: Vec<Vec<u64>> = vec![Vec::with_capacity(recs.len()); ops];
            for r in &recs {
                for (k, t) in r.call.tags().into_iter().enumerate().take(ops) {
                    per_tag[k].push(t as u32 as u64);
                }
            }
            let gaps: Vec<u64> = recs.iter().map(|r| r.gap_ns).collect();
            let n = recs.len().max(1) as u128;
            Node::Call {
                id: my_id,
                shape: records[*first].call.shape(),
                sizes: per_slot
                    .iter()
                    .enumerate()
                    .map(|(k, v)| {
                        let default = Values::compress_sizes(v, options.exact_sizes);
                        if k < ops {
                            by_rank(&recs, k, v, default, options.exact_sizes)
                        } else {
                            default
                        }
                    })
                    .collect(),
                tags: per_tag.iter().map(|v| Values::compress(v)).collect(),
                gap: Gap {
                    mean_ns: (gaps.iter().map(|&g| g as u128).sum::<u128>() / n) as u64,
                    min_ns: gaps.iter().copied().min().unwrap_or(0),
                    max_ns: gaps.iter().copied().max().unwrap_or(0),
                },
                duration_ns: (recs.iter().map(|r| r.duration_ns as u128).sum::<u128>() / n) as u64,
                present: presence(&recs, ops),
            }
        }
        Item::Loop(_) => {
            // A variant loop's arm may run 0 times in some occurrences (`variants`).
            let period = occurrences
                .iter()
                .find_map(|o| match o {
                    Item::Loop(its) => its.first().map(Vec::len),
                    Item::Leaf(_) => None,
                })
                .unwrap_or(0);
            let counts: Vec<u64> = occurrences
                .iter()
                .map(|o| match o {
                    Item::Loop(its) => its.len() as u64,
                    Item::Leaf(_) => unreachable!("occurrences share a symbol"),
                })
                .collect();
            let body = (0..period)
                .map(|k| {
                    let inner: Vec<&Item> = occurrences
                        .iter()
                        .flat_map(|o| match o {
                            Item::Loop(its) => its.iter().map(move |it| &it[k]),
                            Item::Leaf(_) => unreachable!("occurrences share a symbol"),
                        })
                        .collect();
                    build(&inner, records, id, options)
                })
                .collect();
            Node::Loop {
                id: my_id,
                count: Values::compress(&counts),
                body,
            }
        }
    }
}

/// The sizes of operation `k` over `recs` (`defaults`, compressed as `default`) with the
/// per-rank sizes of [`crate::logical::Operation::bytes_by_rank`]: each listed rank's sequence
/// (its own size where listed, else the default), ranks with equal sequences grouped.
fn by_rank(recs: &[&Record], k: usize, defaults: &[u64], default: Values, exact: bool) -> Values {
    let mut listed: Vec<Rank> = recs
        .iter()
        .filter_map(|r| r.call.ops.get(k))
        .flat_map(|o| o.bytes_by_rank.iter().flat_map(|e| e.ranks.iter().copied()))
        .collect();
    if listed.is_empty() {
        return default;
    }
    listed.sort_unstable();
    listed.dedup();
    // Each listed rank's own sizes as (occurrence, size), read from the tables once: looking
    // every rank up in every occurrence's table was ranks × occurrences × entries binary
    // searches. Tables whose ranks are not increasing (hand-written) are looked up as before.
    let sorted = recs
        .iter()
        .filter_map(|r| r.call.ops.get(k))
        .all(|o| o.bytes_by_rank.iter().all(|e| e.ranks.windows(2).all(|w| w[0] < w[1])));
    let mut own: Vec<Vec<(usize, u64)>> = vec![Vec::new(); if sorted { listed.len() } else { 0 }];
    if sorted {
        for (i, r) in recs.iter().enumerate() {
            for e in r.call.ops.get(k).map_or(&[][..], |o| &o.bytes_by_rank[..]) {
                for rank in &e.ranks {
                    let Ok(x) = listed.binary_search(rank) else { continue };
                    // The first entry naming a rank is its size (`find` below).
                    if own[x].last().is_none_or(|&(j, _)| j != i) {
                        own[x].push((i, e.bytes));
                    }
                }
            }
        }
    }
    let mut groups: Vec<RankValues> = Vec::new();
    let mut at: HashMap<Values, usize> = HashMap::new();
    // Ranks with the same own sizes have the same sequence: compressed once (NAS LU's ranks
    // share a handful of boundary sizes).
    let mut seen: HashMap<&[(usize, u64)], Values> = HashMap::new();
    for (x, rank) in listed.into_iter().enumerate() {
        if let Some(v) = sorted.then(|| seen.get(&own[x][..])).flatten() {
            if *v != default {
                let g = at[v];
                groups[g].ranks.push(rank);
            }
            continue;
        }
        let seq: Vec<u64> = if sorted {
            let mut seq = defaults[..defaults.len().min(recs.len())].to_vec();
            for &(i, b) in &own[x] {
                if let Some(v) = seq.get_mut(i) {
                    *v = b;
                }
            }
            seq
        } else {
            recs.iter()
                .zip(defaults)
                .map(|(r, &d)| {
                    r.call
                        .ops
                        .get(k)
                        .and_then(|o| o.bytes_by_rank.iter().find(|e| e.ranks.binary_search(&rank).is_ok()))
                        .map_or(d, |e| e.bytes)
                })
                .collect()
        };
        let v = Values::compress_sizes(&seq, exact);
        if sorted {
            seen.insert(&own[x][..], v.clone());
        }
        if v == default {
            continue;
        }
        match at.get(&v) {
            Some(&g) => groups[g].ranks.push(rank),
            None => {
                at.insert(v.clone(), groups.len());
                groups.push(RankValues {
                    ranks: vec![rank],
                    values: v,
                });
            }
        }
    }
    if groups.is_empty() {
        return default;
    }
    Values::ByRank {
        default: Box::new(default),
        ranks: groups,
    }
}

/// Per operation of `recs` (occurrences of one record, `ops` operations), whether each rank
/// runs it per occurrence ([`crate::logical::Operation::absent_on`]): `constant 1` by default
/// and, for ranks that skip it somewhere, their sequence of 1 (runs) and 0 (skips), ranks with
/// equal sequences grouped; empty when no rank skips any operation.
fn presence(recs: &[&Record], ops: usize) -> Vec<Values> {
    if recs.iter().all(|r| r.call.ops.iter().all(|o| o.absent_on.is_empty())) {
        return Vec::new();
    }
    let always = Values::Constant { value: 1 };
    (0..ops)
        .map(|k| {
            // Per rank that skips it somewhere: the occurrences it skips.
            let mut skips: std::collections::BTreeMap<Rank, Vec<usize>> = Default::default();
            for (i, r) in recs.iter().enumerate() {
                for &rank in r.call.ops.get(k).map_or(&[][..], |o| &o.absent_on[..]) {
                    skips.entry(rank).or_default().push(i);
                }
            }
            if skips.is_empty() {
                return always.clone();
            }
            let mut groups: Vec<RankValues> = Vec::new();
            let mut at: HashMap<Vec<usize>, usize> = HashMap::new();
            for (rank, list) in skips {
                match at.get(&list) {
                    Some(&g) => groups[g].ranks.push(rank),
                    None => {
                        let mut seq = vec![1u64; recs.len()];
                        for &i in &list {
                            seq[i] = 0;
                        }
                        at.insert(list, groups.len());
                        groups.push(RankValues {
                            ranks: vec![rank],
                            values: Values::compress(&seq),
                        });
                    }
                }
            }
            Values::ByRank {
                default: Box::new(always.clone()),
                ranks: groups,
            }
        })
        .collect()
}

/// Per operation, the ranks that skip occurrence `k` of a call whose presence is `present`
/// (the inverse of [`presence`]).
fn absent_at(present: &[Values], k: u64) -> Vec<Vec<Rank>> {
    present
        .iter()
        .map(|v| {
            let Values::ByRank { ranks, .. } = v else {
                return Vec::new();
            };
            let mut list: Vec<Rank> = ranks
                .iter()
                .filter(|g| g.values.value(k) == 0)
                .flat_map(|g| g.ranks.iter().copied())
                .collect();
            list.sort_unstable();
            list
        })
        .collect()
}

/// The per-rank size tables of occurrence `k` of a call whose sizes are `sizes` (the inverse of
/// [`by_rank`]): per operation, the ranks whose value differs from the default, by size.
fn rank_tables_at(sizes: &[Values], ops: usize, k: u64) -> Vec<Vec<RankBytes>> {
    sizes
        .iter()
        .take(ops)
        .map(|v| {
            let Values::ByRank { default, ranks } = v else {
                return Vec::new();
            };
            let d = default.value(k);
            let mut list: Vec<(u64, Rank)> = ranks
                .iter()
                .flat_map(|g| {
                    let b = g.values.value(k);
                    g.ranks.iter().filter(move |_| b != d).map(move |&r| (b, r))
                })
                .collect();
            list.sort_unstable();
            let mut table: Vec<RankBytes> = Vec::new();
            for (b, r) in list {
                match table.last_mut() {
                    Some(e) if e.bytes == b => e.ranks.push(r),
                    _ => table.push(RankBytes {
                        bytes: b,
                        ranks: vec![r],
                    }),
                }
            }
            table
        })
        .collect()
}

fn count_nodes(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::Call { .. } => 1,
            Node::Loop { body, .. } => 1 + count_nodes(body),
        })
        .sum()
}

fn depth(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::Call { .. } => 0,
            Node::Loop { body, .. } => 1 + depth(body),
        })
        .max()
        .unwrap_or(0)
}

/// Largest node id + 1.
fn id_bound(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::Call { id, .. } => *id as usize + 1,
            Node::Loop { id, body, .. } => (*id as usize + 1).max(id_bound(body)),
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
