//! Re-rolling a loop whose iterations are equal up to inner counts when those counts repeat
//! every few iterations: the program's step is then those few iterations together.
//!
//! Folding keeps iterations that differ only in inner loop counts as one loop whose counts are
//! a sequence per visit ("iterations equal up to inner counts"), which is right when the counts
//! are data (a solver's iterations per time step). But a time step made of several groups of
//! the same shape — Gerris's step: five groups of halo exchanges, 8, 25, 4, 2 and 25 of them,
//! each followed by a few reductions — folds as one loop of 503 groups whose counts
//! `{4, 25, 4, 2, 25, 8, …}` are listed, not as the 100 steps of its log. Here a top-level loop
//! is cut into steps of `period` iterations (after `offset` iterations written out before it,
//! and the iterations left over after it) when that describes it in fewer numbers: records and
//! loop headers plus the numbers the loops' count sequences store ([`Values::stored`]). The
//! listed counts then become constants, or short cycles where a step differs every few steps.
//!
//! Cost: O(`MAX_PERIOD`² · iterations · loops in the body) per top-level loop.

use super::*;

/// Longest step tried, in iterations of the loop re-rolled.
pub(super) const MAX_PERIOD: usize = 16;

/// `items` with each top-level loop re-rolled where that is cheaper ([`plan`]), or `None` when
/// no loop is (so a caller holding the items borrowed copies nothing).
pub(super) fn rerolled(items: &[Item]) -> Option<Vec<Item>> {
    let plans: Vec<Option<(usize, usize)>> = items
        .iter()
        .map(|item| match item {
            Item::Loop(its) => plan(its),
            Item::Leaf(_) => None,
        })
        .collect();
    if plans.iter().all(Option::is_none) {
        return None;
    }
    let mut out = Vec::with_capacity(items.len());
    for (item, plan) in items.iter().zip(plans) {
        match (item, plan) {
            (Item::Loop(its), Some((period, offset))) => {
                let steps = (its.len() - offset) / period;
                let end = offset + steps * period;
                out.extend(its[..offset].iter().flatten().cloned());
                out.push(Item::Loop(
                    its[offset..end].chunks(period).map(|step| step.concat()).collect(),
                ));
                out.extend(its[end..].iter().flatten().cloned());
            }
            (item, _) => out.push(item.clone()),
        }
    }
    Some(out)
}

/// The count of the inner loop `it` (0 for a record).
fn count_of(it: &Item) -> u64 {
    match it {
        Item::Loop(its) => its.len() as u64,
        Item::Leaf(_) => 0,
    }
}

/// For the loop of iterations `its`: the `(period, offset)` whose re-rolling — the first
/// `offset` iterations written out, a loop of steps of `period` iterations, the iterations left
/// over written out — costs fewer numbers than the loop as it is; `None` when none does.
fn plan(its: &[Vec<Item>]) -> Option<(usize, usize)> {
    let n = its.len();
    let first = its.first()?;
    let inner: Vec<usize> = (0..first.len())
        .filter(|&m| matches!(first[m], Item::Loop(_)))
        .collect();
    let counts: Vec<Vec<u64>> = inner
        .iter()
        .map(|&m| its.iter().map(|it| count_of(&it[m])).collect())
        .collect();
    // Nothing varies; or a variant loop, whose arms run 0 or 1 times per iteration (its
    // choices are the variants' business, `variants`).
    if counts.iter().all(|c| c.iter().all(|&v| v == c[0])) || counts.iter().any(|c| c.contains(&0)) {
        return None;
    }
    // Records and loop headers of one iteration (the same for every iteration).
    let body = length(first);
    let before = 1 + body + counts.iter().map(|c| Values::compress(c).stored()).sum::<usize>();
    let mut best: Option<(usize, usize, usize)> = None;
    for period in 2..=MAX_PERIOD.min(n / 2) {
        for offset in 0..period {
            let steps = (n - offset) / period;
            if steps < 2 {
                continue;
            }
            let outside = n - steps * period;
            // Written-out iterations: their records, and each inner loop's count once.
            let mut cost = 1 + period * body + outside * (body + inner.len());
            for c in &counts {
                for j in 0..period {
                    let seq: Vec<u64> = (0..steps).map(|g| c[offset + g * period + j]).collect();
                    cost += Values::compress(&seq).stored();
                }
            }
            if cost < best.map_or(before, |b| b.0) {
                best = Some((cost, period, offset));
            }
        }
    }
    best.map(|(_, period, offset)| (period, offset))
}
