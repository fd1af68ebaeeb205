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

use super::{fold, FastMap, Item, Node, Symbol, SymbolTable, Values};
use crate::logical::Record;

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
            let mut starts: Vec<usize> = std::iter::once(lo).chain(counts.keys().map(|h| last[h] + 1)).collect();
            starts.sort_unstable();
            starts.dedup();
            for start in starts {
                if start > hi + 1 || hi + 1 - start < MIN_ITERATIONS {
                    continue;
                }
                let kept: Vec<u64> = counts.keys().copied().filter(|h| last[h] >= start).collect();
                if kept.len() < 2 {
                    continue;
                }
                let lens: i64 = kept.iter().map(|h| seg_len[h] as i64).sum();
                let covered = (positions[hi + 1] - positions[start]) as i64;
                let score = covered - lens - kept.len() as i64;
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

/// [`choices_nest`] of the program the folded `items` build ([`super::build`]'s recursion over
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

/// Variant loops whose iterations are **nested**: the iterations of an outer loop marked by one
/// of the [`nested_markers`], each compressed on its own with variant loops of its own
/// ([`nested_folded`]); tried once, on the folding already chosen ([`super::with_nested`]).
pub(super) fn nested_loops(syms: &[u32], items: &[Item], records: &[Record]) -> Vec<Planned> {
    let keys = keys_of(syms, items, records);
    nested_markers(&keys)
        .into_iter()
        .map(|positions| Planned {
            partial: false,
            nested: true,
            candidate: Candidate {
                score: 0,
                a: 0,
                b: positions.len() - 1,
                positions,
            },
        })
        .collect()
}

/// Most occurrences of a marker whose iterations are compressed on their own
/// ([`nested_markers`]).
const MAX_NESTED_OCCURRENCES: usize = 64;
/// Markers whose iterations are compressed on their own, per sequence.
const NESTED_MARKERS: usize = 2;

/// Markers of an **outer loop** whose iterations are compressed on their own, with variant
/// loops of their own ([`nested_folded`]): an iterative solver's time steps, each step's
/// solves a variant loop of their iterations, are equal only once each step is compressed
/// (OpenFOAM's icoFoam: the steps' segments differ in every solve's iteration count, and the
/// whole sequence folded at once cuts the solves at other places step by step). The markers of
/// at most [`MAX_NESTED_OCCURRENCES`] occurrences (few, long iterations) spanning at least half
/// of the sequence, for each of the [`NESTED_MARKERS`] fewest occurrence counts: the one
/// spanning most and the one occurring first (markers a few records apart cut the same
/// iterations at another rotation: the first record repeated is where a loop after a set-up
/// starts, the one spanning most where its last iteration ends furthest); each occurrence
/// list, in order.
fn nested_markers(keys: &[u64]) -> Vec<Vec<usize>> {
    let n = keys.len();
    let mut by_key: FastMap<u64, Vec<usize>> = FastMap::default();
    for (i, &k) in keys.iter().enumerate() {
        let v = by_key.entry(k).or_default();
        if v.len() <= MAX_NESTED_OCCURRENCES {
            v.push(i);
        }
    }
    let mut found: Vec<Vec<usize>> = by_key
        .into_values()
        .filter(|p| (MIN_ITERATIONS + 1..=MAX_NESTED_OCCURRENCES).contains(&p.len()))
        .filter(|p| 2 * (p[p.len() - 1] - p[0]) >= n)
        .filter(|p| p.windows(2).all(|w| w[1] - w[0] <= MAX_ITERATION))
        .collect();
    // Fewest occurrences first, then spanning most, then the earliest (reproducible whatever
    // the map's order).
    found.sort_by_key(|p| (p.len(), std::cmp::Reverse(p[p.len() - 1] - p[0]), p[0]));
    let mut chosen: Vec<Vec<usize>> = Vec::new();
    for group in found.chunk_by(|a, b| a.len() == b.len()).take(NESTED_MARKERS) {
        let spanning = &group[0];
        chosen.push(spanning.clone());
        if let Some(first) = group.iter().min_by_key(|p| p[0]).filter(|p| p[0] != spanning[0]) {
            chosen.push(first.clone());
        }
    }
    chosen
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

/// One iteration compressed on its own as [`super::choose`] would, one level down: folded,
/// and with each variant loop of its own sequence (records and folded) in place and folded
/// when that is shorter and its choices do not nest ([`choices_nest_items`]), those without
/// partial iterations only.
fn nested_folded(syms: &[u32], items: &[Item], records: &[Record], table: &mut SymbolTable) -> (Vec<u32>, Vec<Item>) {
    let plain = folded(syms, items, table);
    let mut best_length = super::length(&plain.1);
    let mut best: Option<(Vec<u32>, Vec<Item>)> = None;
    let levels = [(syms, items), (&plain.0[..], &plain.1[..])];
    for (level_syms, level_items) in levels {
        // Without partial iterations (a step's own ends): half the cost.
        for planned in variant_loops(level_syms, level_items, records)
            .iter()
            .filter(|p| !p.partial)
        {
            let Some((mut s, mut it)) = planned.build(level_syms, level_items, records, table) else {
                continue;
            };
            fold(&mut s, &mut it, table, false);
            let counted = super::length(&it);
            if counted < best_length && !choices_nest_items(&it) {
                best_length = counted;
                best = Some((s, it));
            }
        }
    }
    best.unwrap_or(plain)
}

/// Iterations of a nested variant loop in which an inner loop ran **once** (its body inline:
/// a solve that converged in one iteration, where the other time steps iterate) become that
/// loop run once when that makes them equal to another iteration: the same program, its
/// count 1 kept as data like any other count. Bodies are tried longest first; an iteration is
/// changed only when the result is another iteration's compression.
fn loops_run_once(iterations: &mut [Compressed], table: &SymbolTable) {
    let used: std::collections::HashSet<u32> = iterations
        .iter()
        .flat_map(|(s, items)| {
            s.iter()
                .zip(items)
                .filter(|(_, i)| matches!(i, Item::Loop(_)))
                .map(|(&s, _)| s)
        })
        .collect();
    if used.is_empty() {
        return;
    }
    let mut bodies: Vec<(u32, &[u32])> = table
        .iter()
        .filter_map(|(sym, &id)| match sym {
            Symbol::Loop(body) if used.contains(&id) && !body.is_empty() => Some((id, &body[..])),
            _ => None,
        })
        .collect();
    bodies.sort_by_key(|(id, body)| (std::cmp::Reverse(body.len()), *id));
    let seen: std::collections::HashSet<Vec<u32>> = iterations.iter().map(|(s, _)| s.clone()).collect();
    for (syms, items) in iterations.iter_mut() {
        let (mut s, mut it) = (syms.clone(), items.clone());
        for &(id, body) in &bodies {
            let mut j = 0;
            while j + body.len() <= s.len() {
                if s[j..j + body.len()] == *body {
                    let once: Vec<Item> = it.splice(j..j + body.len(), []).collect();
                    it.insert(j, Item::Loop(vec![once]));
                    s.splice(j..j + body.len(), [id]);
                }
                j += 1;
            }
        }
        if s != *syms && seen.contains(&s) {
            (*syms, *items) = (s, it);
        }
    }
}

/// Leaves of an item.
fn leaves(item: &Item) -> usize {
    match item {
        Item::Leaf(_) => 1,
        Item::Loop(its) => its.iter().flatten().map(leaves).sum(),
    }
}

/// Ends tried for the last iteration of a nested variant loop ([`last_iteration`]).
const LAST_ENDS_TRIED: usize = 4;

/// An iteration compressed: its symbols and items.
type Compressed = (Vec<u32>, Vec<Item>);
/// How the iterations of a loop are compressed ([`folded`] or [`nested_folded`]).
type Compress<'a> = &'a dyn Fn(&[u32], &[Item], &mut SymbolTable) -> Compressed;
/// The iterations of a loop, compressed.
type Iterations = Vec<Compressed>;

/// The last iteration of a nested variant loop whose iterations `iterations` end at `end`:
/// the symbols from `end` up to an occurrence of the symbol every iteration ends with, the
/// [`LAST_ENDS_TRIED`] occurrences nearest the iterations' median length tried, the first
/// whose compression (`folded`) is one of the iterations'; its length in symbols and its
/// compression.
fn last_iteration(
    syms: &[u32],
    items: &[Item],
    c: &Candidate,
    end: usize,
    iterations: &Iterations,
    folded: Compress,
    table: &mut SymbolTable,
) -> Option<(usize, Compressed)> {
    let p = &c.positions;
    let last_sym = syms[end - 1];
    if (c.a..c.b).any(|i| syms[p[i + 1] - 1] != last_sym) {
        return None;
    }
    let mut lens: Vec<usize> = (c.a..c.b).map(|i| p[i + 1] - p[i]).collect();
    lens.sort_unstable();
    let typical = lens[lens.len() / 2];
    let reach = (syms.len() - end).min(2 * lens[lens.len() - 1]);
    let mut ends: Vec<usize> = (1..=reach).filter(|&k| syms[end + k - 1] == last_sym).collect();
    ends.sort_by_key(|&k| (k.abs_diff(typical), k));
    ends.truncate(LAST_ENDS_TRIED);
    ends.into_iter().find_map(|k| {
        let last = folded(&syms[end..end + k], &items[end..end + k], table);
        iterations.iter().any(|(v, _)| *v == last.0).then_some((k, last))
    })
}

/// The last iteration of a nested variant loop as a **partial** one ([`build`]): what follows
/// `end` (up to twice the longest iteration) compressed on its own, its symbols up to where
/// they leave the iteration they follow longest, when that is at least half of it; the symbols
/// of `syms` it holds (its records' count) and the iteration.
fn last_partial(
    syms: &[u32],
    items: &[Item],
    end: usize,
    iterations: &Iterations,
    folded: Compress,
    table: &mut SymbolTable,
) -> Option<(usize, Compressed)> {
    let longest: usize = iterations
        .iter()
        .map(|(_, it)| it.iter().map(leaves).sum::<usize>())
        .max()?;
    let reach = items[end..]
        .iter()
        .scan(0usize, |held, i| {
            let before = *held;
            *held += leaves(i);
            (before < 2 * longest).then_some(())
        })
        .count();
    let (tail, tail_items) = folded(&syms[end..end + reach], &items[end..end + reach], table);
    let (lcp, k) = iterations
        .iter()
        .enumerate()
        .map(|(k, (v, _))| (v.iter().zip(&tail).take_while(|(a, b)| a == b).count(), k))
        .max()?;
    if lcp < MIN_PARTIAL {
        return None;
    }
    // Up to the last symbol of that iteration (what follows the loop left out).
    let v = &iterations[k].0;
    let lcp = lcp.max(tail.iter().rposition(|s| v.contains(s)).map_or(0, |j| j + 1));
    let records: usize = tail_items[..lcp].iter().map(leaves).sum();
    let mut held = 0;
    let used = items[end..]
        .iter()
        .take_while(|i| {
            let take = held < records;
            if take {
                held += leaves(i);
            }
            take
        })
        .count();
    (held == records).then(|| (used, (tail[..lcp].to_vec(), tail_items[..lcp].to_vec())))
}

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

/// Whether the whole iterations of a nested variant loop are **one program** (a time step's
/// solves, each run a varying number of iterations): most of them (more than half) compress to
/// the same variant, and the symbols every whole variant executes are at least half of each
/// (`whole`: the whole variants, the first of the alignment `merged`; `which`: each whole
/// iteration's variant). OpenFOAM's icoFoam: 4 of its 5 whole steps compress alike, the first
/// differs in one solve's records. Iterations that are mostly different programs are phases of
/// the run cut at a record they happen to share (LAMMPS melt: 5 whole iterations, 4 variants),
/// which a flat loop of the steps says better, though the nested loop may be shorter.
fn one_program(merged: &[(u32, u32)], whole: &[Vec<u32>], which: &[usize]) -> bool {
    let mut runs = vec![0usize; whole.len()];
    for &k in which {
        runs[k] += 1;
    }
    let all = (1u32 << whole.len()) - 1;
    let common = merged.iter().filter(|(_, mask)| mask & all == all).count();
    2 * runs.iter().max().unwrap_or(&0) > which.len() && whole.iter().all(|v| 2 * common >= v.len())
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
