//! Loops whose iterations are one of a few **variants** (an MD code's plain and reneighbouring
//! steps, a step with or without output): the loop body is the variants' common prefix, one
//! *arm* per distinct middle part, and their common suffix; each arm is a loop of its middle run
//! 0 or 1 times per iteration, so the choice made by each iteration is kept as data, the arm's
//! count sequence ([`Values`](super::Values), the way iteration-varying parameters are kept),
//! and expansion, the text form, the JSON and the C skeleton (a count table) need nothing new.
//!
//! Where the iterations are: an iteration starts at every occurrence of a *marker*, a record
//! identified by its shape and its sizes (the 4-byte `MPI_Allreduce` of LAMMPS's neighbour-list
//! check, not its thermo output's 8-byte ones). For every marker the segments between its
//! consecutive occurrences are compared by a rolling hash, and the longest run of segments
//! drawn from at most [`MAX_VARIANTS`] distinct ones (a sliding window, O(occurrences)) is
//! scored by the records it covers minus the records of its distinct segments. Every record is
//! the occurrence of one marker, so scoring all markers costs O(n). The best
//! [`MARKERS_TRIED`] markers are built (their segments folded on their own, so variants that
//! differ only in inner loop counts are one variant) and the caller keeps the shortest program.

mod nested;

use super::{fold, FastMap, Item, Node, Symbol, SymbolTable, Values};
use crate::logical::Record;
pub(super) use nested::nested_loops;
use nested::{last_iteration, last_partial, loops_run_once, nested_folded, one_program};

/// Most distinct iterations (variants) of one loop.
pub const MAX_VARIANTS: usize = 8;
/// The variant bounds candidates are looked for with ([`candidates`]), each keeping its own
/// best markers: a window of up to 8 variants finds LAMMPS PPPM's steps (two steps per
/// neighbour check, reneighbouring, thermo output and PPPM's own variants: 8 kinds), but its
/// scores rank other markers first on runs whose steps are 4 variants (lammps-melt-18 162 → 168
/// records with 8 alone), so both are built and the shortest program kept.
const VARIANT_BOUNDS: [usize; 2] = [4, MAX_VARIANTS];
/// Markers whose variant loop is built and compared: this many best scores, and the best of
/// up to this many other iteration counts.
pub const MARKERS_TRIED: usize = 3;
/// Longest period of an arm's choices (its 0/1 counts) that is still a choice: a longer
/// period is nested control flow (NAS CG's exchanges within its inner and outer iterations),
/// which loops say better than a long periodic choice table, so such a program is not kept.
pub const MAX_CHOICE_PERIOD: u32 = 16;
/// Fewest iterations a variant loop needs.
const MIN_ITERATIONS: usize = 3;
/// Longest iteration considered, in records.
const MAX_ITERATION: usize = 1 << 16;

/// A candidate: the marker's occurrences `positions[a..=b]` bound iterations `a..b`.
#[derive(Clone)]
struct Candidate {
    score: i64,
    positions: Vec<usize>,
    a: usize,
    b: usize,
}

fn key_of(sym: u32, r: &Record) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    sym.hash(&mut h);
    r.call.sizes().hash(&mut h);
    h.finish()
}

/// The marker key of each item: a record's shape and sizes, a loop's symbol.
fn keys_of(syms: &[u32], items: &[Item], records: &[Record]) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    syms.iter()
        .zip(items)
        .map(|(&s, item)| match item {
            Item::Leaf(i) => key_of(s, &records[*i]),
            Item::Loop(_) => {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                (u32::MAX, s).hash(&mut h);
                h.finish()
            }
        })
        .collect()
}

/// The best candidates over every marker of the sequence `syms` with marker keys `keys`,
/// iterations drawn from at most `max_variants` distinct ones.
fn candidates(syms: &[u32], keys: &[u64], max_variants: usize) -> Vec<Candidate> {
    let hashes = super::SliceHashes::of(syms);
    let hash = |l: usize, r: usize| hashes.of_slice(l, r);
    let mut by_key: FastMap<u64, Vec<usize>> = FastMap::default();
    let mut order: Vec<u64> = Vec::new();
    for (i, &k) in keys.iter().enumerate() {
        by_key
            .entry(k)
            .or_insert_with(|| {
                order.push(k);
                Vec::new()
            })
            .push(i);
    }
    let mut out: Vec<Candidate> = Vec::new();
    // Buffers of the window's starts, reused for every end (allocated once).
    let mut starts: Vec<usize> = Vec::new();
    for k in order {
        let positions = &by_key[&k];
        if positions.len() < MIN_ITERATIONS + 1 {
            continue;
        }
        let segs: Vec<(u64, usize)> = positions.windows(2).map(|w| (hash(w[0], w[1]), w[1] - w[0])).collect();
        // Sliding window of segments with at most MAX_VARIANTS distinct ones.
        let mut counts: FastMap<u64, usize> = FastMap::default();
        let mut last: FastMap<u64, usize> = FastMap::default();
        let seg_len: FastMap<u64, usize> = segs.iter().copied().collect();
        let mut lo = 0usize;
        let mut best: Option<(i64, usize, usize)> = None;
        for hi in 0..segs.len() {
            let (h, len) = segs[hi];
            if len > MAX_ITERATION {
                counts.clear();
                last.clear();
                lo = hi + 1;
                continue;
            }
            *counts.entry(h).or_insert(0) += 1;
            while counts.len() > max_variants {
                let h0 = segs[lo].0;
                let c0 = counts.get_mut(&h0).expect("in the window");
                *c0 -= 1;
                if *c0 == 0 {
                    counts.remove(&h0);
                }
                lo += 1;
            }
            last.insert(h, hi);
            // The best start for this end: the leftmost one, or just after the last occurrence
            // of a variant (dropping it and every variant not seen since).
            starts.clear();
            starts.push(lo);
            starts.extend(counts.keys().map(|h| last[h] + 1));
            starts.sort_unstable();
            starts.dedup();
            for &start in &starts {
                if start > hi + 1 || hi + 1 - start < MIN_ITERATIONS {
                    continue;
                }
                // The variants seen since `start`: how many, and their lengths together.
                let (mut kept, mut lens) = (0i64, 0i64);
                for h in counts.keys().filter(|h| last[h] >= start) {
                    kept += 1;
                    lens += seg_len[h] as i64;
                }
                if kept < 2 {
                    continue;
                }
                let covered = (positions[hi + 1] - positions[start]) as i64;
                let score = covered - lens - kept;
                if best.is_none_or(|(s, _, _)| score > s) {
                    best = Some((score, start, hi + 1));
                }
            }
        }
        if let Some((score, a, b)) = best {
            if score > 0 {
                out.push(Candidate {
                    score,
                    positions: positions.clone(),
                    a,
                    b,
                });
            }
        }
    }
    out.sort_by(|x, y| y.score.cmp(&x.score).then(x.positions[x.a].cmp(&y.positions[y.a])));
    // Markers a few records apart cut the same iterations at other phases and score alike, and
    // the best phase shows only once built (the top scores). The best of each other iteration
    // count is tried too, so that the loops tried differ (NAS BT's solves, three per step, and
    // its time steps).
    let mut seen = std::collections::HashSet::new();
    let mut kept = Vec::new();
    let mut others = Vec::new();
    for (k, c) in out.into_iter().enumerate() {
        let new_count = seen.insert(c.b - c.a);
        if k < MARKERS_TRIED {
            kept.push(c);
        } else if new_count && others.len() < MARKERS_TRIED {
            others.push(c);
        }
    }
    kept.extend(others);
    kept
}

/// Whether some loop of `nodes` run 0 or 1 times per visit has choices periodic with a period
/// above [`MAX_CHOICE_PERIOD`].
pub(super) fn choices_nest(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::Call { .. } => false,
        Node::Loop { count, body, .. } => long_choice(count) || choices_nest(body),
    })
}

/// Whether a loop's count sequence is a choice (0 or 1 per visit) periodic with a period
/// above [`MAX_CHOICE_PERIOD`].
fn long_choice(count: &Values) -> bool {
    fn long_cycle(v: &Values) -> bool {
        match v {
            Values::Cycle { period, unit } => *period > MAX_CHOICE_PERIOD || long_cycle(unit),
            _ => false,
        }
    }
    let choice = matches!(count, Values::Cycle { period, .. } if count.max_over(*period as u64) <= 1);
    choice && long_cycle(count)
}

/// [`choices_nest`] of the program the folded `items` build ([`super::nodes::build`]'s recursion over
/// the loops' counts only, no record's values).
pub(super) fn choices_nest_items(items: &[Item]) -> bool {
    fn nest(occurrences: &[&Item]) -> bool {
        let Item::Loop(_) = occurrences[0] else {
            return false;
        };
        let loops = || {
            occurrences.iter().map(|o| match o {
                Item::Loop(its) => its,
                Item::Leaf(_) => unreachable!("occurrences share a symbol"),
            })
        };
        let counts: Vec<u64> = loops().map(|its| its.len() as u64).collect();
        if long_choice(&Values::compress(&counts)) {
            return true;
        }
        let period = loops().find_map(|its| its.first().map(Vec::len)).unwrap_or(0);
        (0..period).any(|k| {
            let inner: Vec<&Item> = loops().flat_map(|its| its.iter().map(move |it| &it[k])).collect();
            nest(&inner)
        })
    }
    items.iter().any(|i| nest(&[i]))
}

/// Sequences (`syms`, `items`) with one variant loop in place for each of the best markers
/// scored on the segments' raw symbols ([`Planned::build`]); the caller folds the rest and
/// compares.
pub(super) fn variant_loops(syms: &[u32], items: &[Item], records: &[Record]) -> Vec<Planned> {
    let keys = keys_of(syms, items, records);
    let mut found: Vec<Candidate> = Vec::new();
    for bound in VARIANT_BOUNDS {
        for c in candidates(syms, &keys, bound) {
            let same = |d: &Candidate| d.a == c.a && d.b == c.b && d.positions == c.positions;
            if !found.iter().any(same) {
                found.push(c);
            }
        }
    }
    found
        .into_iter()
        .flat_map(|c| {
            [false, true].map(|partial| Planned {
                partial,
                nested: false,
                candidate: Candidate { score: 0, ..c.clone() },
            })
        })
        .collect()
}

/// A variant loop to build ([`Planned::build`]): a marker's iterations, with or without a
/// partial iteration.
pub(super) struct Planned {
    partial: bool,
    /// Iterations compressed with variant loops of their own ([`nested_folded`]).
    nested: bool,
    candidate: Candidate,
}

impl Planned {
    /// The sequence (`syms`, `items`, those [`variant_loops`] was given) with this variant loop
    /// in place, or `None` ([`build`]). Built one at a time by the caller, so that only one
    /// such copy of the sequence is held.
    pub(super) fn build(
        &self,
        syms: &[u32],
        items: &[Item],
        records: &[Record],
        table: &mut SymbolTable,
    ) -> Option<(Vec<u32>, Vec<Item>)> {
        let inner = self.nested.then_some(records);
        build(syms, items, &self.candidate, table, self.partial, inner)
    }
}

fn intern(s: Symbol, table: &mut SymbolTable) -> u32 {
    let next = table.len() as u32;
    *table.entry(s).or_insert(next)
}

/// One iteration folded on its own: its symbols and items.
fn folded(syms: &[u32], items: &[Item], table: &mut SymbolTable) -> (Vec<u32>, Vec<Item>) {
    let mut s = syms.to_vec();
    let mut items = items.to_vec();
    fold(&mut s, &mut items, table, false);
    (s, items)
}

/// Leaves of an item.
fn leaves(item: &Item) -> usize {
    match item {
        Item::Leaf(_) => 1,
        Item::Loop(its) => its.iter().flatten().map(leaves).sum(),
    }
}

/// An iteration compressed: its symbols and items.
type Compressed = (Vec<u32>, Vec<Item>);
/// How the iterations of a loop are compressed ([`folded`] or [`nested_folded`]).
type Compress<'a> = &'a dyn Fn(&[u32], &[Item], &mut SymbolTable) -> Compressed;
/// The iterations of a loop, compressed.
type Iterations = Vec<Compressed>;

/// Fewest symbols a partial iteration ([`build`] with `partial`) has.
const MIN_PARTIAL: usize = 2;

/// The variant loop of candidate `c`. With `partial`, also a **partial iteration** at either
/// end: the segment just before the loop when it is a proper prefix of an iteration (NAS LU's
/// first exchange before its time steps), and after the loop the longest proper prefix of an
/// iteration that the rest starts with at the marker's next occurrence, the fewer records
/// before it taken along (NAS BT's error-norm reduction and the exchange of the verification's
/// last right-hand side): each is one more iteration whose remaining records are arms run 0
/// times (its extra records an arm of its own), so a loop body's first records repeated before
/// or after the loop cost arm headers instead of their own records; `None` when there is none
/// (the caller has the loop without).
fn build(
    syms: &[u32],
    items: &[Item],
    c: &Candidate,
    table: &mut SymbolTable,
    partial: bool,
    nested: Option<&[Record]>,
) -> Option<(Vec<u32>, Vec<Item>)> {
    let p = &c.positions;
    let folded = |s: &[u32], it: &[Item], table: &mut SymbolTable| match nested {
        Some(records) => nested_folded(s, it, records, table),
        None => folded(s, it, table),
    };
    let mut iterations: Vec<(Vec<u32>, Vec<Item>)> = Vec::with_capacity(c.b - c.a);
    let (mut shortest, mut longest) = (usize::MAX, 0);
    for i in c.a..c.b {
        let it = folded(&syms[p[i]..p[i + 1]], &items[p[i]..p[i + 1]], table);
        (shortest, longest) = (shortest.min(it.0.len()), longest.max(it.0.len()));
        // Nested, iterations of one program share at least half of each ([`one_program`]):
        // none is more than twice as long as another.
        if nested.is_some() && longest > 2 * shortest {
            return None;
        }
        iterations.push(it);
    }
    let mut start = p[c.a];
    // Iterations (program order) that are partial.
    let mut partials: Vec<usize> = Vec::new();
    if partial && c.a > 0 {
        let (ps, pe) = (p[c.a - 1], p[c.a]);
        let front = folded(&syms[ps..pe], &items[ps..pe], table);
        if front.0.len() >= MIN_PARTIAL
            && iterations
                .iter()
                .any(|(v, _)| v.len() > front.0.len() && v.starts_with(&front.0))
        {
            iterations.insert(0, front);
            partials.push(0);
            start = ps;
        }
    }
    let mut end = p[c.b];
    // The last iteration: the longest variant the rest of the sequence starts with (the loop's
    // last iteration is followed by what comes after the loop, not by another marker).
    let mut raw: Vec<&[u32]> = (c.a..c.b).map(|i| &syms[p[i]..p[i + 1]]).collect();
    raw.sort_by_key(|r| std::cmp::Reverse(r.len()));
    raw.dedup();
    if let Some(v) = raw.iter().find(|v| syms[end..].starts_with(v)) {
        iterations.push(folded(&syms[end..end + v.len()], &items[end..end + v.len()], table));
        end += v.len();
    } else if nested.is_some() {
        // Compressed on its own, the last iteration ends where the others do (with the symbol
        // before the marker): the ends nearest an iteration's typical length are tried.
        if let Some(last) = last_iteration(syms, items, c, end, &iterations, &folded, table) {
            end += last.0;
            iterations.push(last.1);
        } else if let Some((used, last)) = last_partial(syms, items, end, &iterations, &folded, table) {
            // Or a partial one: what follows compressed, up to where it leaves every
            // iteration (icoFoam's last time step, without what precedes a next one).
            end += used;
            partials.push(iterations.len());
            iterations.push(last);
        }
    } else {
        // The last iteration may differ from the others in its inner loop counts: fold what
        // follows (a few iterations' length of it) and look for a folded variant at its start.
        let reach = (syms.len() - end).min(4 * raw.first().map_or(0, |r| r.len()));
        // Placeholders number the items, so that the folded tail says how many it consumed.
        let marks: Vec<Item> = (0..reach).map(Item::Leaf).collect();
        let (tail, marked) = folded(&syms[end..end + reach], &marks, table);
        let variant = iterations
            .iter()
            .map(|(v, _)| v)
            .filter(|v| tail.starts_with(v))
            .max_by_key(|v| v.len())
            .cloned();
        if let Some(v) = variant {
            let used: usize = marked.iter().take(v.len()).map(leaves).sum();
            let last = folded(&syms[end..end + used], &items[end..end + used], table);
            end += used;
            if last.0 == v {
                iterations.push(last);
            } else {
                return None;
            }
        }
    }
    if partial {
        // From the next occurrence of the marker (a few records after the loop, fewer than
        // the prefix: they become an arm of this iteration, as NAS BT's error-norm
        // reduction before its last right-hand side).
        let q = p.iter().copied().find(|&q| q >= end).unwrap_or(end);
        let rest = &syms[q..];
        let lcp = raw
            .iter()
            .map(|v| v.iter().zip(rest).take_while(|(x, y)| x == y).count().min(v.len() - 1))
            .max()
            .unwrap_or(0);
        if lcp >= MIN_PARTIAL && q - end < lcp {
            partials.push(iterations.len());
            iterations.push(folded(&syms[end..q + lcp], &items[end..q + lcp], table));
            end = q + lcp;
        }
    }
    if partial && partials.is_empty() {
        return None;
    }
    if nested.is_some() {
        loops_run_once(&mut iterations, table);
    }
    // Distinct folded iterations, in order of appearance, the partial ones last (the body is
    // aligned on the whole iterations first).
    let mut variants: Vec<Vec<u32>> = Vec::new();
    let mut which: Vec<usize> = vec![0; iterations.len()];
    let mut whole_variants = 0;
    let whole = (0..iterations.len()).filter(|k| !partials.contains(k));
    for (n, k) in whole.chain(partials.iter().copied()).enumerate() {
        if n == iterations.len() - partials.len() {
            whole_variants = variants.len();
        }
        let s = &iterations[k].0;
        match variants.iter().position(|v| v == s) {
            Some(x) => which[k] = x,
            None => {
                which[k] = variants.len();
                variants.push(s.clone());
            }
        }
    }
    if partials.is_empty() {
        whole_variants = variants.len();
    }
    // Nested, iterations equal once compressed are one loop (their inner counts differ).
    let fewest = if nested.is_some() { 1 } else { 2 };
    if variants.len() < fewest || variants.len() > MAX_VARIANTS + partials.len() {
        return None;
    }
    // The body: every variant aligned on the ones before it (longest common subsequence), each
    // symbol with the set of variants that execute it (a bit mask).
    let mut merged: Vec<(u32, u32)> = variants[0].iter().map(|&s| (s, 1)).collect();
    for (j, v) in variants.iter().enumerate().skip(1) {
        merged = align(&merged, v, 1 << j);
    }
    let whole_which: Vec<usize> = (0..iterations.len())
        .filter(|k| !partials.contains(k))
        .map(|k| which[k])
        .collect();
    if nested.is_some() && !one_program(&merged, &variants[..whole_variants], &whole_which) {
        return None;
    }
    // Runs of symbols executed by the same variants: inline when every variant executes them,
    // else an arm (a loop run once by the variants that execute it, 0 times by the others).
    let all = (1u32 << variants.len()) - 1;
    let mut blocks: Vec<(u32, Vec<u32>)> = Vec::new();
    for &(s, mask) in &merged {
        match blocks.last_mut() {
            Some((m, syms)) if *m == mask => syms.push(s),
            _ => blocks.push((mask, vec![s])),
        }
    }
    let mut body: Vec<u32> = Vec::new();
    for (mask, syms) in &blocks {
        if *mask == all {
            body.extend(syms);
        } else {
            body.push(intern(Symbol::Loop(syms.clone()), table));
        }
    }
    let its: Vec<Vec<Item>> = iterations
        .into_iter()
        .zip(&which)
        .map(|((_, items), &k)| {
            let bit = 1u32 << k;
            let mut items = items.into_iter();
            let mut out: Vec<Item> = Vec::new();
            for (mask, syms) in &blocks {
                if *mask == all {
                    out.extend(items.by_ref().take(syms.len()));
                } else if mask & bit != 0 {
                    out.push(Item::Loop(vec![items.by_ref().take(syms.len()).collect()]));
                } else {
                    out.push(Item::Loop(Vec::new()));
                }
            }
            debug_assert!(items.next().is_none(), "every item of the iteration placed");
            out
        })
        .collect();
    let mut next_syms = syms[..start].to_vec();
    next_syms.push(intern(Symbol::Loop(body), table));
    next_syms.extend_from_slice(&syms[end..]);
    let mut next_items: Vec<Item> = items[..start].to_vec();
    next_items.push(Item::Loop(its));
    next_items.extend_from_slice(&items[end..]);
    Some((next_syms, next_items))
}

/// `merged` (symbols with the mask of the variants executing them) aligned with `v` by a
/// longest common subsequence: common symbols get `bit`, the others of `v` are inserted with
/// `bit` alone, before the unmatched ones of `merged` at the same place.
///
/// The walk reads `lcs(i, j)`, the LCS length of `merged[i..]` and `v[j..]`, from a
/// bit-parallel table ([`SuffixLcs`]: one bit per cell, 64 cells per word operation) instead of
/// a table of `u32`s: the same walk, so the same alignment, at a 32nd of the memory (an
/// iteration of 31,000 records, OpenFOAM's merged time step, needed a 4 GB table).
fn align(merged: &[(u32, u32)], v: &[u32], bit: u32) -> Vec<(u32, u32)> {
    let (n, m) = (merged.len(), v.len());
    let a: Vec<u32> = merged.iter().map(|&(s, _)| s).collect();
    let lcs = SuffixLcs::new(&a, v);
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(n + m);
    while i < n || j < m {
        // Equal symbols always extend the LCS of the suffixes by one: the diagonal is taken.
        if i < n && j < m && merged[i].0 == v[j] {
            out.push((v[j], merged[i].1 | bit));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs.get(i, j + 1) >= lcs.get(i + 1, j)) {
            out.push((v[j], bit));
            j += 1;
        } else {
            out.push(merged[i]);
            i += 1;
        }
    }
    out
}

/// The lengths of the longest common subsequences of every pair of suffixes `a[i..]`, `b[j..]`,
/// as bit rows (Crochemore, Iliopoulos, Pinzon and Reid, "A fast and practical bit-vector
/// algorithm for the longest common subsequence problem", 2001; Hyyrö 2004): over the reversed
/// sequences, row `t` has bit `k` clear when the LCS of `a`'s last `t` symbols with `b`'s last
/// `k + 1` is one longer than with its last `k`, so an LCS length is a count of clear bits.
struct SuffixLcs {
    /// Words per row.
    words: usize,
    /// Rows `0..=a.len()` (row `t`: after the last `t` symbols of `a`).
    rows: Vec<u64>,
    n: usize,
    m: usize,
}

impl SuffixLcs {
    fn new(a: &[u32], b: &[u32]) -> SuffixLcs {
        let (n, m) = (a.len(), b.len());
        let words = m.div_ceil(64);
        // Positions (in reversed `b`) of each symbol of `b`, as a bit mask.
        let mut masks: FastMap<u32, Vec<u64>> = FastMap::default();
        for (k, s) in b.iter().rev().enumerate() {
            masks.entry(*s).or_insert_with(|| vec![0; words])[k / 64] |= 1 << (k % 64);
        }
        let mut rows = vec![u64::MAX; (n + 1) * words];
        let mut u = vec![0u64; words];
        for t in 1..=n {
            let (done, rest) = rows.split_at_mut(t * words);
            let prev = &done[(t - 1) * words..];
            let row = &mut rest[..words];
            let Some(mask) = masks.get(&a[n - t]) else {
                row.copy_from_slice(prev);
                continue;
            };
            for w in 0..words {
                u[w] = prev[w] & mask[w];
            }
            // V' = (V + U) | (V - U), where V - U = V & !U (U's bits are V's).
            let mut carry = false;
            for w in 0..words {
                let (s1, c1) = prev[w].overflowing_add(u[w]);
                let (s2, c2) = s1.overflowing_add(u64::from(carry));
                carry = c1 || c2;
                row[w] = s2 | (prev[w] & !u[w]);
            }
        }
        SuffixLcs { words, rows, n, m }
    }

    /// The LCS length of `a[i..]` and `b[j..]`.
    fn get(&self, i: usize, j: usize) -> usize {
        let (t, len) = (self.n - i, self.m - j);
        let row = &self.rows[t * self.words..(t + 1) * self.words];
        let full = len / 64;
        let mut ones: usize = row[..full].iter().map(|w| w.count_ones() as usize).sum();
        if len % 64 != 0 {
            ones += (row[full] & ((1u64 << (len % 64)) - 1)).count_ones() as usize;
        }
        len - ones
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The alignment as it was computed before the bit rows: the full table of `u32`s.
    fn align_by_table(merged: &[(u32, u32)], v: &[u32], bit: u32) -> Vec<(u32, u32)> {
        let (n, m) = (merged.len(), v.len());
        let mut lcs = vec![vec![0u32; m + 1]; n + 1];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i][j] = if merged[i].0 == v[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::with_capacity(n + m);
        while i < n || j < m {
            if i < n && j < m && merged[i].0 == v[j] && lcs[i][j] == lcs[i + 1][j + 1] + 1 {
                out.push((v[j], merged[i].1 | bit));
                i += 1;
                j += 1;
            } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
                out.push((v[j], bit));
                j += 1;
            } else {
                out.push(merged[i]);
                i += 1;
            }
        }
        out
    }

    #[test]
    fn bit_rows_align_as_the_table_does() {
        // A small linear congruential generator: lengths across word boundaries (0 to 200),
        // alphabets of 1 to 6 symbols, so that ties and long runs of equal symbols occur.
        let mut x: u64 = 12345;
        let mut next = |k: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % k
        };
        for case in 0..400 {
            let alphabet = 1 + next(6);
            let n = next(if case % 4 == 0 { 200 } else { 70 }) as usize;
            let m = next(if case % 3 == 0 { 200 } else { 70 }) as usize;
            let merged: Vec<(u32, u32)> = (0..n).map(|_| (next(alphabet) as u32, 1 + next(3) as u32)).collect();
            let v: Vec<u32> = (0..m).map(|_| next(alphabet) as u32).collect();
            assert_eq!(align(&merged, &v, 8), align_by_table(&merged, &v, 8), "case {case}");
            let a: Vec<u32> = merged.iter().map(|p| p.0).collect();
            let lcs = SuffixLcs::new(&a, &v);
            for i in (0..=n).step_by(7) {
                for j in (0..=m).step_by(5) {
                    let table = align_by_table(&merged[i..], &v[j..], 8)
                        .iter()
                        .filter(|p| p.1 & 8 != 0 && p.1 != 8)
                        .count();
                    assert_eq!(lcs.get(i, j), table, "case {case} at {i}, {j}");
                }
            }
        }
    }
}
