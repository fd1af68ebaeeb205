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
//! repeat until nothing folds, so inner loops become symbols of outer ones. A pass costs
//! O(n · candidates · period) in the worst case and O(n) on traces without long near-repeats.
//!
//! Compressed length = call records + loop headers of the program (Table 1 counts records).
//! Compute gaps are summarised per program record (mean, min, max): they feed the skeleton; the
//! sizes are exact.

use crate::logical::{Collective, LogicalCall, RankBytes, Record};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use tracelogic_model::Rank;

mod variants;
pub use variants::{MARKERS_TRIED, MAX_VARIANTS};

/// Longest loop body tried, in symbols of the pass.
pub const MAX_PERIOD: usize = 4096;
/// Next occurrences of the same symbol tried as periods at each position.
const CANDIDATES: usize = 8;
/// Symbol comparisons allowed per folding pass (a fraction of a second in a release build): an adversarial trace
/// (long near-repeats that differ only at their end) stops looking for new periods once it is
/// spent, so compression stays bounded; the count, not a clock, decides, so results are
/// reproducible.
pub const PASS_WORK: u64 = 100_000_000;

/// A sequence of numbers (one per occurrence of a program record, in execution order), stored
/// compactly. `value(i)` is the i-th number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "form")]
pub enum Values {
    /// The same number every time.
    Constant {
        /// The number.
        value: u64,
    },
    /// `first + step · i`.
    Range {
        /// Value of occurrence 0.
        first: u64,
        /// Difference between consecutive occurrences.
        step: i64,
    },
    /// A shorter sequence repeated: `value(i) = unit.value(i mod period)`.
    Cycle {
        /// Length of the repeated part.
        period: u32,
        /// The repeated part.
        unit: Box<Values>,
    },
    /// Every number listed.
    List {
        /// The numbers.
        values: Vec<u64>,
    },
    /// Numbers that follow no pattern, summarised ([`CompressOptions::exact_sizes`] off, more
    /// than [`MAX_LISTED`] distinct ones: message sizes that change from step to step, as a molecular
    /// dynamics code's ghost-atom exchanges). `value(i)` spreads `total` evenly over the `count`
    /// occurrences (`total / count`, one more on the first `total % count`), so the expansion
    /// carries exactly the recorded volume.
    Stats {
        /// Occurrences.
        count: u64,
        /// Smallest.
        min: u64,
        /// Mean, rounded down (`total / count`).
        mean: u64,
        /// Largest.
        max: u64,
        /// Sum over the occurrences.
        total: u64,
    },
    /// Numbers that depend on the rank (per-rank message sizes,
    /// [`crate::logical::Operation::bytes_by_rank`]): `default` on every rank not listed, and
    /// each group of ranks its own sequence.
    #[serde(rename = "by_rank")]
    ByRank {
        /// The sequence of the ranks not listed (the record's own sizes).
        default: Box<Values>,
        /// Groups of ranks with their sequence, by first rank.
        ranks: Vec<RankValues>,
    },
}

/// A sequence of numbers on some ranks ([`Values::ByRank`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RankValues {
    /// World ranks, increasing.
    pub ranks: Vec<Rank>,
    /// Their sequence.
    pub values: Values,
}

/// Most distinct message sizes a list keeps as it is when [`CompressOptions::exact_sizes`] is
/// off; a list without a pattern and with more distinct sizes becomes [`Values::Stats`]. A few
/// distinct sizes in an irregular order are the program's control flow (NAS CG's loop body
/// carries 8 B reductions and 2800 B vector pieces in the order of its phases) and stay exact;
/// a size that takes a new value at most steps (a molecular-dynamics code's ghost atoms) is
/// data, summarised, so the program does not grow with the number of steps.
pub const MAX_LISTED: usize = 16;

/// How [`compress_with`] keeps message sizes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompressOptions {
    /// Keep every message size (lists of any length) instead of summarising long patternless
    /// lists as [`Values::Stats`]; the expansion is then the trace exactly.
    pub exact_sizes: bool,
}

impl Values {
    /// The most compact form of `list` (constant, range of at least 3, cycle, or list).
    pub fn compress(list: &[u64]) -> Values {
        let Some(&first) = list.first() else {
            return Values::Constant { value: 0 };
        };
        if list.iter().all(|&v| v == first) {
            return Values::Constant { value: first };
        }
        if list.len() >= 3 {
            let step = (list[1] as i128 - first as i128) as i64;
            if list.windows(2).all(|w| w[1] as i128 - w[0] as i128 == step as i128) {
                return Values::Range { first, step };
            }
        }
        let period = smallest_period(list);
        if period * 2 <= list.len() {
            return Values::Cycle {
                period: period as u32,
                unit: Box::new(Values::compress(&list[..period])),
            };
        }
        Values::List { values: list.to_vec() }
    }

    /// `compress(list)`, summarised as [`Values::Stats`] when it is a list longer than
    /// [`MAX_LISTED`] and `exact` is false.
    pub fn compress_sizes(list: &[u64], exact: bool) -> Values {
        let v = Values::compress(list);
        match v {
            Values::List { ref values } if !exact && distinct_above(values, MAX_LISTED) => {
                let total = values.iter().fold(0u64, |a, &b| a.saturating_add(b));
                let count = values.len() as u64;
                Values::Stats {
                    count,
                    min: values.iter().copied().min().unwrap_or(0),
                    mean: total / count,
                    max: values.iter().copied().max().unwrap_or(0),
                    total,
                }
            }
            v => v,
        }
    }

    /// The i-th number on rank `rank` ([`Values::ByRank`]; other forms are the same on every
    /// rank).
    pub fn value_on(&self, rank: Rank, i: u64) -> u64 {
        match self {
            Values::ByRank { default, ranks } => ranks
                .iter()
                .find(|g| g.ranks.binary_search(&rank).is_ok())
                .map_or_else(|| default.value(i), |g| g.values.value(i)),
            other => other.value(i),
        }
    }

    /// The i-th number.
    pub fn value(&self, i: u64) -> u64 {
        match self {
            Values::Stats { count, total, .. } => {
                let count = (*count).max(1);
                total / count + u64::from(i < total % count)
            }
            Values::ByRank { default, .. } => default.value(i),
            Values::Constant { value } => *value,
            Values::Range { first, step } => (*first as i128 + *step as i128 * i as i128) as u64,
            Values::Cycle { period, unit } => unit.value(i % (*period).max(1) as u64),
            Values::List { values } => values.get(i as usize).copied().unwrap_or(0),
        }
    }

    /// Readable form: `480`, `8..+8`, `{8, 16, 32}`, `({8, 16})*`.
    pub fn text(&self) -> String {
        match self {
            Values::Constant { value } => value.to_string(),
            Values::Range { first, step } => format!("{first}{step:+}/iter"),
            Values::Cycle { unit, .. } => format!("({})*", unit.text()),
            Values::List { values } => {
                let shown: Vec<String> = values.iter().take(8).map(|v| v.to_string()).collect();
                let more = if values.len() > 8 {
                    format!(", … {} values", values.len())
                } else {
                    String::new()
                };
                format!("{{{}{more}}}", shown.join(", "))
            }
            Values::Stats {
                count, min, mean, max, ..
            } => format!("~{mean} [{min}..{max}, {count}×]"),
            Values::ByRank { default, ranks } => {
                let mut s = default.text();
                for g in ranks.iter().take(4) {
                    s.push_str(&format!(
                        " ({} on {})",
                        g.values.text(),
                        crate::logical::ranks_text(&g.ranks)
                    ));
                }
                if ranks.len() > 4 {
                    s.push_str(&format!(" (… {} more groups of ranks)", ranks.len() - 4));
                }
                s
            }
        }
    }

    /// Largest value over the first `n` occurrences.
    pub fn max_over(&self, n: u64) -> u64 {
        match self {
            Values::Constant { value } => *value,
            Values::Range { first, step } => {
                if *step >= 0 {
                    self.value(n.saturating_sub(1))
                } else {
                    *first
                }
            }
            Values::Cycle { period, unit } => unit.max_over((*period as u64).min(n)),
            Values::List { values } => values.iter().take(n as usize).copied().max().unwrap_or(0),
            Values::Stats { count, total, max, .. } => {
                if n >= *count {
                    *max
                } else {
                    // `value` gives at most the mean rounded up.
                    (*max).min(total.div_ceil((*count).max(1)))
                }
            }
            Values::ByRank { default, ranks } => ranks
                .iter()
                .map(|g| g.values.max_over(n))
                .fold(default.max_over(n), u64::max),
        }
    }
}

/// More than `bound` distinct numbers in `values`.
fn distinct_above(values: &[u64], bound: usize) -> bool {
    let mut seen: std::collections::HashSet<u64> = std::collections::HashSet::new();
    values.iter().any(|&v| {
        seen.insert(v);
        seen.len() > bound
    })
}

/// Smallest p such that `s[i] == s[i - p]` for all i ≥ p (prefix function).
fn smallest_period(s: &[u64]) -> usize {
    let n = s.len();
    let mut pi = vec![0usize; n];
    for i in 1..n {
        let mut k = pi[i - 1];
        while k > 0 && s[i] != s[k] {
            k = pi[k - 1];
        }
        if s[i] == s[k] {
            k += 1;
        }
        pi[i] = k;
    }
    n - pi.last().copied().unwrap_or(0)
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
            } => Json::Call {
                id: *id,
                shape,
                sizes,
                collective_size: self.collective_size(),
                tags,
                gap,
                duration_ns: *duration_ns,
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

/// Where a program's compressed length goes, to compare it with Logicalization Table 1 and say
/// what the extra records are ([`Program::breakdown`]). Lengths count call records and loop
/// headers, as [`Program::compressed_length`] does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LengthBreakdown {
    /// Call records outside every loop (set-up, verification, final reductions).
    pub outside_loops: usize,
    /// Each top-level loop with its length (header included), in program order.
    pub loops: Vec<LoopLength>,
    /// Call records executed by some ranks only ([`LogicalCall::only_ranks`]: a class-specific
    /// branch or block), per set of ranks, most records first; anywhere in the program.
    pub branches: Vec<BranchLength>,
    /// Call records with an operation in an offset direction (a peer outside the topology), per
    /// direction; anywhere in the program.
    pub offsets: Vec<DirectionLength>,
}

/// A top-level loop of [`LengthBreakdown`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopLength {
    /// The loop's node id.
    pub id: u32,
    /// Its iterations per visit.
    pub count: Values,
    /// Call records and loop headers, its own header included.
    pub length: usize,
    /// Of those, call records executed by some ranks only.
    pub branch_records: usize,
}

/// Call records executed by one set of ranks only ([`LengthBreakdown::branches`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchLength {
    /// The ranks, increasing.
    pub ranks: Vec<Rank>,
    /// Call records.
    pub records: usize,
}

/// Call records using one offset direction ([`LengthBreakdown::offsets`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectionLength {
    /// The direction's name.
    pub direction: String,
    /// Call records.
    pub records: usize,
}

impl Program {
    /// Where the compressed length goes; `offsets` names the offset directions
    /// ([`crate::logical::LogicalTrace::offset_directions`]).
    pub fn breakdown(&self, offsets: &[String]) -> LengthBreakdown {
        fn walk(nodes: &[Node], offsets: &[String], branches: &mut Vec<BranchLength>, dirs: &mut [usize]) -> usize {
            let mut only = 0;
            for n in nodes {
                match n {
                    Node::Call { shape, .. } => {
                        if let Some(rs) = &shape.only_ranks {
                            only += 1;
                            match branches.iter_mut().find(|b| &b.ranks == rs) {
                                Some(b) => b.records += 1,
                                None => branches.push(BranchLength {
                                    ranks: rs.clone(),
                                    records: 1,
                                }),
                            }
                        }
                        for (k, d) in offsets.iter().enumerate() {
                            if shape
                                .ops
                                .iter()
                                .any(|o| matches!(&o.partner, crate::logical::Partner::Direction(x) if x == d))
                            {
                                dirs[k] += 1;
                            }
                        }
                    }
                    Node::Loop { body, .. } => only += walk(body, offsets, branches, dirs),
                }
            }
            only
        }
        let mut b = LengthBreakdown::default();
        let mut dirs = vec![0usize; offsets.len()];
        for n in &self.nodes {
            match n {
                Node::Call { .. } => {
                    b.outside_loops += 1;
                    walk(std::slice::from_ref(n), offsets, &mut b.branches, &mut dirs);
                }
                Node::Loop { id, count, body } => {
                    let branch_records = walk(body, offsets, &mut b.branches, &mut dirs);
                    b.loops.push(LoopLength {
                        id: *id,
                        count: count.clone(),
                        length: 1 + count_nodes(body),
                        branch_records,
                    });
                }
            }
        }
        b.branches
            .sort_by(|x, y| y.records.cmp(&x.records).then_with(|| x.ranks.cmp(&y.ranks)));
        b.offsets = offsets
            .iter()
            .zip(dirs)
            .filter(|(_, n)| *n > 0)
            .map(|(d, records)| DirectionLength {
                direction: d.clone(),
                records,
            })
            .collect();
        b
    }
}

impl LengthBreakdown {
    /// One line: `outside loops 12; loops 44 (x61), 13 (x2); branches 4 on ranks 0,3; offsets
    /// (+2,0,0) 12`.
    pub fn text(&self) -> String {
        let loops: Vec<String> = self
            .loops
            .iter()
            .map(|l| {
                let only = if l.branch_records > 0 {
                    format!(", {} branch", l.branch_records)
                } else {
                    String::new()
                };
                format!("{} (x{}{only})", l.length, l.count.text())
            })
            .collect();
        let mut s = format!(
            "{} outside loops; {} top-level loop{}{}{}",
            self.outside_loops,
            self.loops.len(),
            if self.loops.len() == 1 { "" } else { "s" },
            if loops.is_empty() { "" } else { ": " },
            loops.join(", ")
        );
        if !self.branches.is_empty() {
            let parts: Vec<String> = self
                .branches
                .iter()
                .map(|b| {
                    let rs: Vec<String> = b.ranks.iter().map(|r| r.to_string()).collect();
                    format!("{} on ranks {}", b.records, rs.join(","))
                })
                .collect();
            s.push_str(&format!("; records of some ranks only: {}", parts.join("; ")));
        }
        if !self.offsets.is_empty() {
            let parts: Vec<String> = self
                .offsets
                .iter()
                .map(|d| format!("{} {}", d.direction, d.records))
                .collect();
            s.push_str(&format!("; records with offset directions: {}", parts.join(", ")));
        }
        s
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
pub fn compress_with(records: &[Record], options: &CompressOptions) -> Program {
    let mut shapes: HashMap<LogicalCall, u32> = HashMap::new();
    let mut table: HashMap<Symbol, u32> = HashMap::new();
    let intern = |s: Symbol, table: &mut HashMap<Symbol, u32>| {
        let next = table.len() as u32;
        *table.entry(s).or_insert(next)
    };
    let mut syms: Vec<u32> = Vec::with_capacity(records.len());
    let mut items: Vec<Item> = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        let next = shapes.len() as u32;
        let shape = *shapes.entry(r.call.shape()).or_insert(next);
        syms.push(intern(Symbol::Leaf(shape), &mut table));
        items.push(Item::Leaf(i));
    }
    let (mut syms2, mut items2, mut table2) = (syms.clone(), items.clone(), table.clone());
    let (leaf_syms, leaf_items) = (syms.clone(), items.clone());
    fold(&mut syms, &mut items, &mut table, false);
    let mut best = finish(records, &items, options);
    // Iterations that differ only in their inner loop counts (an iterative solver's inner steps
    // per outer step): folded again with inner loops strictly first and the bodies of known loops
    // found inline (an inner loop run once) made loops of one iteration; kept when shorter.
    if fold(&mut syms2, &mut items2, &mut table2, true) {
        let varying = finish(records, &items2, options);
        if varying.compressed_length < best.compressed_length {
            best = varying;
        }
    }
    // Iterations that are one of a few variants (`variants`), marked on the records (steps
    // whose inner loops run the same counts) or on the plainly folded sequence (iterations whose
    // inner loops run varying counts): kept when shorter.
    // Ties keep the first: the folded sequence's markers (outer loops) before the records'.
    // One symbol table for both (the folded sequence's loops are in `table`).
    let mut tried = variants::variant_loops(&syms, &items, records, &mut table);
    tried.extend(variants::variant_loops(&leaf_syms, &leaf_items, records, &mut table));
    for (mut s, mut it) in tried {
        fold(&mut s, &mut it, &mut table, false);
        let program = finish(records, &it, options);
        if program.compressed_length < best.compressed_length && !variants::choices_nest(&program.nodes) {
            best = program;
        }
    }
    best
}

/// Fold tandem repeats of `syms` (and `items` alongside) until none is left. With `varying`,
/// each pass first makes the inline bodies of known loops loops of one iteration
/// ([`promote_inline_bodies`]) and postpones a run while a shorter one starts anywhere inside
/// it ([`plan_pass_with`]); returns whether `varying` promoted anything.
fn fold(syms: &mut Vec<u32>, items: &mut Vec<Item>, table: &mut HashMap<Symbol, u32>, varying: bool) -> bool {
    let mut promoted = false;
    let intern = |s: Symbol, table: &mut HashMap<Symbol, u32>| {
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
fn promote_inline_bodies(syms: &mut Vec<u32>, items: &mut Vec<Item>, table: &HashMap<Symbol, u32>) -> bool {
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
    let compressed_length = count_nodes(&nodes);
    Program {
        raw_length: records.len(),
        compressed_length,
        ratio: if compressed_length == 0 {
            1.0
        } else {
            records.len() as f64 / compressed_length as f64
        },
        depth: depth(&nodes),
        nodes,
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
    let mut last: HashMap<u32, usize> = HashMap::new();
    for i in (0..n).rev() {
        if let Some(j) = last.insert(s[i], i) {
            next_same[i] = j;
        }
    }
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
                let same = s[i..i + p]
                    .iter()
                    .zip(&s[i + p..i + 2 * p])
                    .take_while(|(a, b)| a == b)
                    .count();
                work += same as u64 + 1;
                if same == p {
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
        if p == usize::MAX || blocked {
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

impl Program {
    /// The calls of the uncompressed trace, rebuilt (exactly the input's calls; gaps are not
    /// part of a call). Refuses to produce more than `limit` calls (a hostile program could
    /// describe billions).
    pub fn expand(&self, limit: usize) -> Result<Vec<LogicalCall>, String> {
        let mut visits = vec![0u64; id_bound(&self.nodes)];
        let mut out = Vec::new();
        expand_into(&self.nodes, &mut visits, &mut out, limit)?;
        Ok(out)
    }

    /// Readable text: one call per line, loops as `[` … `]^n`, indented by depth.
    pub fn text(&self) -> String {
        let mut out = String::new();
        text_into(&self.nodes, 0, &mut out);
        out
    }
}

fn expand_into(nodes: &[Node], visits: &mut [u64], out: &mut Vec<LogicalCall>, limit: usize) -> Result<(), String> {
    for n in nodes {
        match n {
            Node::Call {
                id, shape, sizes, tags, ..
            } => {
                if out.len() >= limit {
                    return Err(format!("the program expands to more than {limit} records"));
                }
                let k = visits[*id as usize];
                visits[*id as usize] += 1;
                let v: Vec<u64> = sizes.iter().map(|s| s.value(k)).collect();
                let t: Vec<i32> = tags.iter().map(|s| s.value(k) as u32 as i32).collect();
                let mut call = shape.with_sizes(&v).with_tags(&t);
                if sizes.iter().any(|s| matches!(s, Values::ByRank { .. })) {
                    call = call.with_rank_tables(&rank_tables_at(sizes, shape.ops.len(), k));
                }
                out.push(call);
            }
            Node::Loop { id, count, body } => {
                let k = visits[*id as usize];
                visits[*id as usize] += 1;
                for _ in 0..count.value(k) {
                    expand_into(body, visits, out, limit)?;
                }
            }
        }
    }
    Ok(())
}

/// A call's text with its size and tag sequences in place of the sizes and tags.
pub fn call_text(shape: &LogicalCall, sizes: &[Values], tags: &[Values]) -> String {
    // Render with placeholder sizes and tags, then substitute the sequences' texts.
    let mut marked: Vec<u64> = (0..sizes.len() as u64).map(|k| u64::MAX - k).collect();
    // A collective shows one of its two sequences (`Collective::size`): the other is marked 0.
    if let (Some(c), [.., sent, recv]) = (&shape.collective, sizes) {
        let zero = |v: &Values| *v == Values::Constant { value: 0 };
        let hidden = if Collective::size_is_received(c.op, zero(sent), zero(recv)) {
            2
        } else {
            1
        };
        if let Some(at) = marked.len().checked_sub(hidden) {
            marked[at] = 0;
        }
    }
    let tag_marks: Vec<i32> = (0..tags.len() as i32).map(|k| i32::MIN + k).collect();
    let mut s = shape.with_sizes(&marked).with_tags(&tag_marks).text();
    for (k, v) in sizes.iter().enumerate() {
        s = s.replacen(&(u64::MAX - k as u64).to_string(), &v.text(), 1);
    }
    for (k, v) in tags.iter().enumerate() {
        let text = match v {
            Values::Constant { value } => (*value as u32 as i32).to_string().replace("-1", "any"),
            other => other.text(),
        };
        s = s.replacen(&(i32::MIN + k as i32).to_string(), &text, 1);
    }
    s
}

fn text_into(nodes: &[Node], indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    for n in nodes {
        match n {
            Node::Call { shape, sizes, tags, .. } => {
                out.push_str(&pad);
                out.push_str(&call_text(shape, sizes, tags));
                out.push('\n');
            }
            Node::Loop { count, body, .. } => {
                out.push_str(&pad);
                out.push_str("[\n");
                text_into(body, indent + 1, out);
                out.push_str(&pad);
                out.push_str(&format!("]^{}\n", count.text()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(functions: &[&str]) -> Vec<Record> {
        functions
            .iter()
            .enumerate()
            .map(|(i, f)| Record {
                call: LogicalCall {
                    function: f.to_string(),
                    kind: tracelogic_model::CallKind::Completion,
                    ops: Vec::new(),
                    collective: None,
                    completes: Vec::new(),
                    only_ranks: None,
                },
                gap_ns: 0,
                duration_ns: 0,
                rank: 0,
                call_index: i as u32,
            })
            .collect()
    }

    /// A loop body's first records repeated before the loop and, after one other record, after
    /// it (NAS LU's first exchange before its time steps; BT's error norm and last right-hand
    /// side after them) join the loop as partial iterations: `I X Y Z [X Y Z W (B)]^k R X Y Z F`
    /// with B in the first step only. Bound counted from the construction: I and F, the loop
    /// header, the body's four records, the one-off B and R, and one arm header per run of
    /// records not every iteration executes (W, B, R): 12, where the loop without partial
    /// iterations needs 16 (the two copies of X Y Z outside it); constant in k.
    #[test]
    fn repeated_loop_prefixes_join_the_loop() {
        let mut lengths = Vec::new();
        for k in [4, 40] {
            let mut f = vec!["I", "X", "Y", "Z", "X", "Y", "Z", "W", "B"];
            for _ in 1..k {
                f.extend(["X", "Y", "Z", "W"]);
            }
            f.extend(["R", "X", "Y", "Z", "F"]);
            let p = compress(&records(&f));
            expands_exactly(&p, &f);
            assert!(
                p.compressed_length <= 12,
                "k = {k}: {}\n{}",
                p.compressed_length,
                p.text()
            );
            lengths.push(p.compressed_length);
        }
        assert_eq!(lengths[0], lengths[1]);
    }

    /// The breakdown counts what the program is made of, read off its construction: `I [A B
    /// C]^6 [D]^3 F` with B executed by ranks 1 and 2 only and C sent to an offset direction.
    #[test]
    fn breakdown_counts_loops_branches_and_offsets() {
        let mut functions = vec!["I"];
        for _ in 0..6 {
            functions.extend(["A", "B", "C"]);
        }
        functions.extend(["D", "D", "D", "F"]);
        let mut recs = records(&functions);
        for r in recs.iter_mut() {
            match r.call.function.as_str() {
                "B" => r.call.only_ranks = Some(vec![1, 2]),
                "C" => {
                    r.call.kind = tracelogic_model::CallKind::Send;
                    r.call.ops = vec![crate::logical::Operation {
                        dir: tracelogic_model::P2pDir::Send,
                        partner: crate::logical::Partner::Direction("(+2,0)".into()),
                        tag: 0,
                        bytes: 8,
                        bytes_by_class: Vec::new(),
                        bytes_by_rank: Vec::new(),
                    }];
                }
                _ => {}
            }
        }
        let p = compress(&recs);
        let b = p.breakdown(&["(+2,0)".to_string(), "(0,+2)".to_string()]);
        assert_eq!(b.outside_loops, 2, "{}", p.text());
        let loops: Vec<(usize, usize)> = b.loops.iter().map(|l| (l.length, l.branch_records)).collect();
        assert_eq!(loops, vec![(4, 1), (2, 0)]);
        assert_eq!(
            b.outside_loops + loops.iter().map(|l| l.0).sum::<usize>(),
            p.compressed_length
        );
        assert_eq!(b.branches.len(), 1);
        assert_eq!((b.branches[0].ranks.clone(), b.branches[0].records), (vec![1, 2], 1));
        assert_eq!(b.offsets.len(), 1, "a direction no record uses is left out");
        assert_eq!((b.offsets[0].direction.as_str(), b.offsets[0].records), ("(+2,0)", 1));
        assert!(
            b.text().contains("2 top-level loops: 4 (x6, 1 branch), 2 (x3)"),
            "{}",
            b.text()
        );
    }

    /// `A [X Y]^k B` for each k of `counts`, with `tail` after B in the iterations listed.
    fn outer(counts: &[usize], odd: Option<usize>) -> Vec<&'static str> {
        let mut f = vec!["Init"];
        for (i, &k) in counts.iter().enumerate() {
            f.push("A");
            for _ in 0..k {
                f.extend(["X", "Y"]);
            }
            f.push(if odd == Some(i) { "C" } else { "B" });
        }
        f.push("Finalize");
        f
    }

    fn expands_exactly(p: &Program, functions: &[&str]) {
        expands_exactly_up_to(p, functions, 1000);
    }

    fn expands_exactly_up_to(p: &Program, functions: &[&str], limit: usize) {
        let back: Vec<String> = p.expand(limit).unwrap().into_iter().map(|c| c.function).collect();
        assert_eq!(back, functions, "{}", p.text());
    }

    /// The loop of the program's top level, its count and its inner loop's count.
    fn outer_and_inner(p: &Program) -> Option<(&Values, &Values)> {
        p.nodes.iter().find_map(|n| match n {
            Node::Loop { count, body, .. } => body.iter().find_map(|b| match b {
                Node::Loop { count: inner, .. } => Some((count, inner)),
                Node::Call { .. } => None,
            }),
            Node::Call { .. } => None,
        })
    }

    #[test]
    fn iterations_differing_in_inner_counts_fold() {
        for counts in [[3usize, 5, 2, 4], [3, 1, 2, 4], [2, 1, 5, 1]] {
            let f = outer(&counts, None);
            let p = compress(&records(&f));
            expands_exactly(&p, &f);
            let (count, inner) = outer_and_inner(&p).unwrap_or_else(|| panic!("{counts:?}: {}", p.text()));
            assert_eq!(*count, Values::Constant { value: 4 }, "{counts:?}: {}", p.text());
            assert_eq!(*inner, Values::compress(&counts.map(|k| k as u64)), "{counts:?}");
            // Init, loop header, A, inner header, X, Y, B, Finalize.
            assert_eq!(p.compressed_length, 8, "{counts:?}: {}", p.text());
        }
    }

    /// Iterations that differ in a record (`C` for `B` in one of them) are variants of one
    /// loop: `[A [X Y]^k [B]^{1,1,0,1} [C]^{0,0,1,0}]^4` (before variant loops they did not fold).
    /// Iterations that also differ in their inner counts are not found this way (the raw
    /// iterations are all distinct, and the plain fold has already folded some of them).
    #[test]
    fn iterations_differing_in_a_record_fold_as_variants() {
        for counts in [[3usize, 3, 3, 3], [2, 2, 2, 2]] {
            let f = outer(&counts, Some(2));
            let p = compress(&records(&f));
            expands_exactly(&p, &f);
            let four = p.nodes.iter().find_map(|n| match n {
                Node::Loop { count, body, .. } => Some((count, body)),
                Node::Call { .. } => None,
            });
            let (count, body) = four.unwrap_or_else(|| panic!("{counts:?}: {}", p.text()));
            assert_eq!(*count, Values::Constant { value: 4 }, "{counts:?}: {}", p.text());
            // The B and C arms: run once by the iterations that execute them, 0 times by the others.
            let mut arms: Vec<(&str, Values)> = body
                .iter()
                .filter_map(|b| match b {
                    Node::Loop { count, body, .. } => match body.as_slice() {
                        [Node::Call { shape, .. }] if shape.function != "X" => {
                            Some((shape.function.as_str(), count.clone()))
                        }
                        _ => None,
                    },
                    Node::Call { .. } => None,
                })
                .collect();
            arms.sort_by_key(|a| a.0);
            assert_eq!(
                arms,
                vec![
                    ("B", Values::compress(&[1, 1, 0, 1])),
                    ("C", Values::compress(&[0, 0, 1, 0]))
                ],
                "{counts:?}: {}",
                p.text()
            );
            // Init, loop header, A, inner header, X, Y, two arm headers, B, C, Finalize.
            assert_eq!(p.compressed_length, 11, "{counts:?}: {}", p.text());
        }
    }

    /// A step loop with two kinds of step at irregular intervals and output every third step
    /// (LAMMPS's plain and reneighbouring steps, thermo output): one loop of the step count, its
    /// length the same for 30 and 300 steps, expanding exactly.
    #[test]
    fn steps_of_a_few_kinds_fold_into_one_loop() {
        let steps = |n: usize| {
            let mut f = vec!["Init", "Setup", "Setup"];
            for step in 1..=n {
                f.push("Check");
                if (step * 7) % 11 < 3 {
                    f.extend(["Exchange", "Borders", "Reverse"]);
                } else {
                    f.extend(["Forward", "Reverse"]);
                }
                if step % 3 == 0 {
                    f.extend(["Thermo", "Thermo"]);
                }
            }
            f.extend(["Stats", "Finalize"]);
            f
        };
        let mut lengths = Vec::new();
        for n in [30, 300] {
            let f = steps(n);
            let p = compress(&records(&f));
            expands_exactly_up_to(&p, &f, 10_000);
            let step_loop = p.nodes.iter().find_map(|node| match node {
                Node::Loop { count, body, .. }
                    if matches!(&body[0], Node::Call { shape, .. } if shape.function == "Check") =>
                {
                    Some(count.clone())
                }
                _ => None,
            });
            assert_eq!(
                step_loop,
                Some(Values::Constant { value: n as u64 }),
                "{n}: {}",
                p.text()
            );
            lengths.push(p.compressed_length);
        }
        assert_eq!(lengths[0], lengths[1]);
    }

    #[test]
    fn values_pick_the_compact_form() {
        assert_eq!(Values::compress(&[5, 5, 5]), Values::Constant { value: 5 });
        assert_eq!(Values::compress(&[8, 16, 24, 32]), Values::Range { first: 8, step: 8 });
        let c = Values::compress(&[1, 7, 3, 1, 7, 3, 1, 7]);
        assert!(matches!(c, Values::Cycle { period: 3, .. }), "{c:?}");
        let l = Values::compress(&[4, 9, 1]);
        assert!(matches!(l, Values::List { .. }));
        for list in [
            vec![1u64, 7, 3, 1, 7, 3, 1, 7],
            vec![9, 8, 7, 6],
            vec![4, 9, 1],
            vec![3, 3, 5, 3, 3, 5],
        ] {
            let v = Values::compress(&list);
            let back: Vec<u64> = (0..list.len() as u64).map(|i| v.value(i)).collect();
            assert_eq!(back, list, "{v:?}");
        }
    }

    #[test]
    fn adversarial_near_repeats_stay_bounded() {
        // 120 copies of a 4000-symbol body whose last symbol changes every copy: every candidate
        // compares nearly 4000 symbols before it fails.
        let body: Vec<u32> = (0..3999).collect();
        let mut s = Vec::new();
        for k in 0..120u32 {
            s.extend_from_slice(&body);
            s.push(10_000 + k);
        }
        let t = std::time::Instant::now();
        assert!(plan_pass(&s).is_empty());
        assert!(t.elapsed().as_secs() < 60);
    }

    #[test]
    fn smallest_period_of_partial_repeat() {
        assert_eq!(smallest_period(&[1, 2, 1, 2, 1]), 2);
        assert_eq!(smallest_period(&[1, 2, 3]), 3);
    }

    #[test]
    fn plan_finds_runs() {
        // a b a b a b c
        assert_eq!(plan_pass(&[0, 1, 0, 1, 0, 1, 2]), vec![(0, 2, 3)]);
        // a b c a b c a b c with a spurious candidate inside
        assert_eq!(plan_pass(&[0, 1, 0, 0, 1, 0, 0, 1, 0]), vec![(0, 3, 3)]);
    }
}
