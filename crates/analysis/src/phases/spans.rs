//! Each rank's events partitioned among the phases (docs/phases.md, "Phases on each rank"):
//! phase `k` holds, on a rank, one stretch of its events, and the stretches of successive
//! phases follow one another. A rank's parts of the occurrences of two phases can interleave
//! (ranks reach a phase at different times; a rank's part of one occurrence can reach into the
//! next), so each boundary is placed on each rank where the fewest of the rank's occurrence
//! parts (at their first events) fall on the wrong side of it.

use std::collections::BTreeMap;
use tracelogic_model::Rank;

/// One rank's occurrence parts: inclusive event ranges with the phase of their occurrence.
pub type Parts = Vec<(u32, u32, usize)>;

/// No phase: an event outside every occurrence of the sequence.
const NONE: u32 = u32::MAX;

/// The phase of each of a rank's `n` events that begins a part of an occurrence: the part's
/// first event carries the phase of its occurrence, the other events none. A part is the unit,
/// as an occurrence is the segmentation's unit: its range runs from its first to its last event
/// and the events between can belong to other occurrences (hpcc glues LatencyBandwidth into one
/// occurrence whose parts hold its 288 ping-pongs; a long Meep part holds whole occurrences of
/// the next step), so counting a range's events would let one long part outweigh the many it
/// holds.
pub fn labels(n: u32, parts: &[(u32, u32, usize)]) -> Vec<u32> {
    let mut out = vec![NONE; n as usize];
    for &(a, _, p) in parts {
        if let Some(x) = out.get_mut(a as usize) {
            *x = (*x).min(p as u32);
        }
    }
    out
}

/// Where each phase begins on a rank whose events have the phases `labels` ([`labels`]; `u32::MAX`
/// none) and were posted by the calls `calls`, phases `0..phases`: `cuts[k]` is phase `k`'s first event, `cuts[0] = 0` and
/// `cuts[phases] = n`, non-decreasing, so phase `k` holds events `cuts[k]..cuts[k + 1]` and every
/// event is in exactly one phase.
///
/// Boundary `b` (between phases `b − 1` and `b`) is the cut `c` that puts the fewest labelled
/// events on the wrong side: those of phase `≥ b` before `c` and of phase `< b` at or after `c`
/// (summed over the boundaries, each counts the number of phases it is moved by). Among equal
/// costs the latest cut: unlabelled events stay with the phase before them, so a phase begins on
/// a rank with the first event of one of its parts. Only cuts between two calls are taken: the
/// events of one call stay in one phase. A
/// boundary with no event of the rank on one side is at the rank's start (none before: the
/// rank's events before its first phase belong to it) or end (none after). Cuts chosen so do not
/// decrease with `b` (the cost's increment per event falls as `b` grows); they are also forced
/// not to. O(phases + overlap) after one pass.
pub fn cuts(labels: &[u32], calls: &[u32], phases: usize) -> Vec<u32> {
    let n = labels.len() as u32;
    let mut cuts = vec![0u32; phases + 1];
    if phases == 0 {
        return cuts;
    }
    cuts[phases] = n;
    // A cut between two events of one call (`MPI_Sendrecv`'s send and receive) would split
    // the call between two phases.
    let allowed = |c: u32| c == 0 || c >= n || calls.get(c as usize - 1) != calls.get(c as usize);
    // first[b]: the earliest event of phase ≥ b; last[b]: the latest of phase < b.
    let mut first = vec![u32::MAX; phases + 1];
    let mut last: Vec<Option<u32>> = vec![None; phases + 1];
    for (i, &p) in labels.iter().enumerate() {
        let p = p as usize;
        if p < phases {
            first[p] = first[p].min(i as u32);
            last[p + 1] = Some(i as u32);
        }
    }
    for b in (0..phases).rev() {
        first[b] = first[b].min(first[b + 1]);
    }
    for b in 1..=phases {
        last[b] = last[b].max(last[b - 1]);
    }
    for b in 1..phases {
        let (lo, hi) = (first[b], last[b]);
        cuts[b] = match hi {
            _ if lo == u32::MAX => n,
            None => 0,
            Some(hi) => {
                // The cost falls before min(lo, hi + 1) and rises after max(lo, hi + 1): the
                // least cost at a cut between two calls lies between the nearest such cuts.
                let (mut a, mut e) = (lo.min(hi + 1), lo.max(hi + 1));
                while !allowed(a) {
                    a -= 1;
                }
                while !allowed(e) {
                    e += 1;
                }
                // Cost at cut c relative to the cost at a: events a..c of phase ≥ b (now before
                // the cut) less those of phase < b (no longer after it).
                let (mut best, mut at, mut cost) = (0i64, a, 0i64);
                for c in a..e {
                    let p = labels[c as usize];
                    if p != NONE && (p as usize) < phases {
                        cost += if p as usize >= b { 1 } else { -1 };
                    }
                    if cost <= best && allowed(c + 1) {
                        best = cost;
                        at = c + 1;
                    }
                }
                at
            }
        };
    }
    for b in 1..=phases {
        cuts[b] = cuts[b].max(cuts[b - 1]).min(n);
    }
    cuts
}

/// Every rank's occurrence parts, by phase, into [`cuts`] per rank: the ranks with at least one
/// part and their cuts. `calls(rank)` is the call of each of the rank's events.
pub fn partition<'a>(
    parts: &BTreeMap<Rank, Parts>,
    phases: usize,
    calls: impl Fn(Rank) -> &'a [u32],
) -> BTreeMap<Rank, Vec<u32>> {
    parts
        .iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(&r, p)| {
            let calls = calls(r);
            (r, cuts(&labels(calls.len() as u32, p), calls, phases))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{cuts, labels, NONE};

    /// The cost of a cut, counted event by event (the rule's definition).
    fn cost(labels: &[u32], b: usize, c: u32) -> usize {
        labels
            .iter()
            .enumerate()
            .filter(|&(i, &p)| p != NONE && if p as usize >= b { (i as u32) < c } else { i as u32 >= c })
            .count()
    }

    /// Hand-made ranks: disjoint phases, interleaved parts, one long part holding the next
    /// phase's parts (hpcc, Meep), a phase without a part on the rank, a rank first in a later
    /// phase. The labels are as written by hand; each cut has the least cost over all cuts
    /// (brute force) and is the latest such; the cuts partition the events.
    #[test]
    fn each_boundary_displaces_the_fewest_parts() {
        const X: u32 = NONE;
        type Case<'a> = (u32, &'a [(u32, u32, usize)], usize, &'a [u32], &'a [u32]);
        let cases: [Case; 7] = [
            // Disjoint: phase 1 begins at its first part.
            (
                6,
                &[(0, 1, 0), (2, 2, 0), (3, 5, 1)],
                2,
                &[0, X, 0, 1, X, X],
                &[0, 3, 6],
            ),
            // A part of phase 1 (at 2) among phase 0's: phase 0 keeps it.
            (
                8,
                &[(0, 1, 0), (2, 2, 1), (3, 3, 0), (4, 4, 0), (5, 7, 1)],
                2,
                &[0, X, 1, 0, 0, 1, X, X],
                &[0, 5, 8],
            ),
            // Phase 0's long part 1..8 holds phase 1's three parts: phase 1 begins at the first.
            (
                9,
                &[(0, 0, 0), (1, 8, 0), (2, 3, 1), (4, 5, 1), (6, 7, 1)],
                2,
                &[0, 0, 1, X, 1, X, 1, X, X],
                &[0, 2, 9],
            ),
            // Phase 1 has no part on this rank: an empty stretch.
            (4, &[(0, 1, 0), (2, 3, 2)], 3, &[0, X, 2, X], &[0, 2, 2, 4]),
            // The rank first takes part in phase 1: its earlier events are phase 1's.
            (5, &[(1, 2, 1), (3, 4, 2)], 3, &[X, 1, X, 2, X], &[0, 0, 3, 5]),
            // No part at all: everything in the first phase (the caller leaves such ranks out).
            (3, &[], 2, &[X, X, X], &[0, 3, 3]),
            // Events 2 and 3 are one call (a send-receive) whose receive begins phase 1's part:
            // the cut moves before the call.
            (5, &[(0, 2, 0), (3, 4, 1)], 2, &[0, X, X, 1, X], &[0, 2, 5]),
        ];
        for (n, parts, phases, want_labels, want) in cases {
            // One call per event, but events 2 and 3 share one in the last case.
            let calls: Vec<u32> = (0..n)
                .map(|i| if n == 5 && want[1] == 2 && i >= 3 { i - 1 } else { i })
                .collect();
            let allowed = |c: u32| c == 0 || c == n || calls[c as usize - 1] != calls[c as usize];
            let l = labels(n, parts);
            assert_eq!(l, want_labels, "{parts:?}");
            let got = cuts(&l, &calls, phases);
            assert_eq!(got, want, "{parts:?}");
            for (b, &cut) in got.iter().enumerate().take(phases).skip(1) {
                let before = l.iter().any(|&p| p != X && (p as usize) < b);
                let after = l.iter().any(|&p| p != X && p as usize >= b);
                if before && after {
                    let least = (0..=n).filter(|&c| allowed(c)).map(|c| cost(&l, b, c)).min().unwrap();
                    let latest = (0..=n)
                        .filter(|&c| allowed(c) && cost(&l, b, c) == least)
                        .max()
                        .unwrap();
                    assert_eq!(cut, latest, "boundary {b} of {parts:?}");
                }
            }
            for ev in 0..n {
                let holders = got.windows(2).filter(|w| w[0] <= ev && ev < w[1]).count();
                assert_eq!(holders, 1, "event {ev} of {parts:?}");
            }
        }
    }
}
