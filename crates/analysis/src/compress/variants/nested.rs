//! **Nested** variant loops: an outer loop (a solver's time steps) whose iterations are equal
//! only once each is compressed on its own, with variant loops of its own (each step's solves
//! run a varying number of iterations). Tried once, on the folding already chosen
//! ([`super::super::with_nested`]); the loop is built by [`super::build`] with `nested`.

use super::super::{fold, FastMap, Item, Symbol, SymbolTable};
use super::{
    choices_nest_items, folded, keys_of, leaves, variant_loops, Candidate, Compress, Compressed, Iterations, Planned,
    MAX_ITERATION, MIN_ITERATIONS, MIN_PARTIAL,
};
use crate::logical::Record;

/// Variant loops whose iterations are **nested**: the iterations of an outer loop marked by one
/// of the [`nested_markers`], each compressed on its own with variant loops of its own
/// ([`nested_folded`]); tried once, on the folding already chosen ([`super::super::with_nested`]).
pub(in crate::compress) fn nested_loops(syms: &[u32], items: &[Item], records: &[Record]) -> Vec<Planned> {
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

/// One iteration compressed on its own as [`super::super::choose`] would, one level down: folded,
/// and with each variant loop of its own sequence (records and folded) in place and folded
/// when that is shorter and its choices do not nest ([`choices_nest_items`]), those without
/// partial iterations only.
pub(super) fn nested_folded(
    syms: &[u32],
    items: &[Item],
    records: &[Record],
    table: &mut SymbolTable,
) -> (Vec<u32>, Vec<Item>) {
    let plain = folded(syms, items, table);
    let mut best_length = super::super::length(&plain.1);
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
            let counted = super::super::length(&it);
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
pub(super) fn loops_run_once(iterations: &mut [Compressed], table: &SymbolTable) {
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
        // The symbols rewritten first, each replacement noted (where, how long); the items
        // (nested, costly to copy) only when the result is another iteration's.
        let mut s = syms.clone();
        let mut replaced: Vec<(usize, usize)> = Vec::new();
        for &(id, body) in &bodies {
            let mut j = 0;
            while j + body.len() <= s.len() {
                if s[j..j + body.len()] == *body {
                    s.splice(j..j + body.len(), [id]);
                    replaced.push((j, body.len()));
                }
                j += 1;
            }
        }
        if replaced.is_empty() || !seen.contains(&s) {
            continue;
        }
        for (j, len) in replaced {
            let once: Vec<Item> = items.splice(j..j + len, []).collect();
            items.insert(j, Item::Loop(vec![once]));
        }
        *syms = s;
    }
}

/// Ends tried for the last iteration of a nested variant loop ([`last_iteration`]).
const LAST_ENDS_TRIED: usize = 4;

/// The last iteration of a nested variant loop whose iterations `iterations` end at `end`:
/// the symbols from `end` up to an occurrence of the symbol every iteration ends with, the
/// [`LAST_ENDS_TRIED`] occurrences nearest the iterations' median length tried, the first
/// whose compression (`folded`) is one of the iterations'; its length in symbols and its
/// compression.
pub(super) fn last_iteration(
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

/// The last iteration of a nested variant loop as a **partial** one ([`super::build`]): what follows
/// `end` (up to twice the longest iteration) compressed on its own, its symbols up to where
/// they leave the iteration they follow longest, when that is at least half of it; the symbols
/// of `syms` it holds (its records' count) and the iteration.
pub(super) fn last_partial(
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

/// Whether the whole iterations of a nested variant loop are **one program** (a time step's
/// solves, each run a varying number of iterations): most of them (more than half) compress to
/// the same variant, and the symbols every whole variant executes are at least half of each
/// (`whole`: the whole variants, the first of the alignment `merged`; `which`: each whole
/// iteration's variant). OpenFOAM's icoFoam: 4 of its 5 whole steps compress alike, the first
/// differs in one solve's records. Iterations that are mostly different programs are phases of
/// the run cut at a record they happen to share (LAMMPS melt: 5 whole iterations, 4 variants),
/// which a flat loop of the steps says better, though the nested loop may be shorter.
pub(super) fn one_program(merged: &[(u32, u32)], whole: &[Vec<u32>], which: &[usize]) -> bool {
    let mut runs = vec![0usize; whole.len()];
    for &k in which {
        runs[k] += 1;
    }
    let all = (1u32 << whole.len()) - 1;
    let common = merged.iter().filter(|(_, mask)| mask & all == all).count();
    2 * runs.iter().max().unwrap_or(&0) > which.len() && whole.iter().all(|v| 2 * common >= v.len())
}
