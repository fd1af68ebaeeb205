//! Inner loops written out in an outer loop's body. The tandem removal takes whichever repeat
//! its scan meets first; where an outer loop's iterations came back to back before the loop
//! inside them, it collapses the outer loop first and its body keeps the inner loop's copies as
//! they ran. A LAMMPS run whose neighbour lists are rebuilt every so many steps repeats the
//! stretch from one rebuild to the next, and where the sub-domains' ghost swaps change at each
//! rebuild (a swap with no atoms sends no message: `deposit`, `pour`) the step comes in a new
//! form after each rebuild, so that stretch, written out with its 8–20 steps, was a rank's main
//! loop, the step's own general-form occurrences spanned whole stretches, and the first pattern
//! was one rebuild period per occurrence (deposit on 4 ranks: 149 for 2,000 steps).
//!
//! [`nested_loops`] names the outer loops and the inner loops' bodies; the parse
//! ([`super::parse_occurrences_in`]) then takes each exact copy of an inner body as an
//! iteration and lets an outer loop's occurrence yield where such a copy starts inside it.
//! [`super::choose_nesting`] parses so only where the first pattern holds inner iterations
//! ([`holds_inner_iterations`]) and keeps the result where [`explains_inside`] says.

use std::collections::HashMap;

use super::{construct, is_loop_body, steps, Events, PatternAnalysis, RankPattern};
use tracelogic_model::Rank;

/// Copies back to back that make a loop: three, as a loop body is a pattern run three times in a
/// row ([`is_loop_body`]). Two would take a step made of two identical halves (LAMMPS's EAM and
/// `shear` steps) for a loop of halves.
const LOOP_COPIES: usize = 3;

/// Positions of `outer` inside runs of at least [`LOOP_COPIES`] back-to-back copies of some
/// rotation of `inner`. O(|outer| + |inner| · stretches).
pub(super) fn copies_cover(outer: &[u32], inner: &[u32]) -> usize {
    let l = inner.len();
    if l == 0 || outer.len() < LOOP_COPIES * l {
        return 0;
    }
    let key = |s: &[u32]| {
        let r = construct::least_rotation(s);
        s[r..].iter().chain(&s[..r]).copied().collect::<Vec<u32>>()
    };
    let want = key(inner);
    // A maximal stretch of `run` positions with `outer[k] == outer[k + l]` starting at `s` is
    // `run + l` symbols of period `l`: copies of `outer[s..s + l]`, whole ones counted.
    let mut covered = 0;
    let mut k = 0;
    while k + l < outer.len() {
        if outer[k] != outer[k + l] {
            k += 1;
            continue;
        }
        let s = k;
        while k + l < outer.len() && outer[k] == outer[k + l] {
            k += 1;
        }
        let run = k - s;
        if run >= (LOOP_COPIES - 1) * l && key(&outer[s..s + l]) == want {
            covered += (run + l) / l * l;
        }
    }
    covered
}

/// A rank's loops nested as they ran: per pattern, whether it is an *outer* loop, and the
/// bodies of the *inner* loops. A loop body is an outer loop when it is mostly (more than half
/// its events) runs of [`LOOP_COPIES`] or more back-to-back copies of a more frequent loop's
/// body: a period of neighbour-list rebuilds is its steps and one rebuild, but NAS LU's time
/// step is two sweeps of as many planes, the lower sending and the upper receiving, and a
/// sweep's plane is no iteration of it. Of the bodies it so holds, the longest
/// (then the most frequent) is its inner loop, so a step holding an exchange three times is not
/// taken for the loop of a period that holds the step. O(loops · patterns · body length).
pub(super) fn nested_loops(patterns: &[RankPattern]) -> (Vec<bool>, Vec<Vec<u32>>) {
    let mut outer = vec![false; patterns.len()];
    let mut inner = vec![false; patterns.len()];
    for (p, body) in patterns.iter().enumerate() {
        if body.outer || !is_loop_body(body) {
            continue;
        }
        let held = patterns
            .iter()
            .enumerate()
            .filter(|(_, q)| !q.outer && q.frequency > body.frequency && q.symbols.len() >= 2)
            .filter(|(_, q)| is_loop_body(q) && 2 * copies_cover(&body.symbols, &q.symbols) > body.symbols.len())
            .max_by_key(|(k, q)| (q.symbols.len(), q.frequency, std::cmp::Reverse(*k)));
        if let Some((q, _)) = held {
            outer[p] = true;
            inner[q] = true;
        }
    }
    let bodies = (0..patterns.len())
        .filter(|&k| inner[k])
        .map(|k| patterns[k].symbols.clone())
        .collect();
    (outer, bodies)
}

/// Whether some part of the first pattern's instances holds, on its rank, [`LOOP_COPIES`]
/// back-to-back exact copies of an inner loop's body ([`nested_loops`]): the pattern is then an
/// outer loop of that rank's loop, each such occurrence several of its iterations.
/// O(events of the first pattern's ranks · inner bodies).
pub(super) fn holds_inner_iterations(first: &PatternAnalysis, events: &Events) -> bool {
    let communication = &first.communication;
    if communication.patterns.is_empty() {
        return false;
    }
    // Per rank, its inner loops' exact copies as `[start, end)`, ascending.
    let mut copies: HashMap<Rank, Vec<(u32, u32)>> = HashMap::new();
    for inst in communication.instances.iter().filter(|i| i.pattern == 0) {
        for part in &inst.parts {
            let spans = copies.entry(part.rank).or_insert_with(|| {
                let seq = &events.ranks[part.rank as usize].symbols;
                let (_, bodies) = nested_loops(&first.rank_patterns[&part.rank]);
                let mut spans: Vec<(u32, u32)> = bodies
                    .iter()
                    .flat_map(|b| {
                        let l = b.len() as u32;
                        steps::exact_copies(seq, b).into_iter().map(move |s| (s, s + l))
                    })
                    .collect();
                spans.sort_unstable();
                spans
            });
            let from = spans.partition_point(|c| c.0 < part.first_event);
            let mut run = 0;
            let mut end = None;
            for &(s, e) in spans[from..].iter().take_while(|c| c.1 <= part.last_event + 1) {
                run = if end == Some(s) { run + 1 } else { 1 };
                end = Some(e);
                if run >= LOOP_COPIES {
                    return true;
                }
            }
        }
    }
    false
}

/// Whether `inner`, parsed with the inner loops' copies as iterations, explains the run better
/// than `best`: its first pattern occurs at least [`LOOP_COPIES`] times as often (the old first
/// pattern's occurrences hold, on average, a loop of the new one's) and it leaves no more events
/// in one-off instances. The events the first pattern covers are not compared: an outer
/// loop's occurrence covers its special iterations too (the rebuild step, which the inner
/// analysis leaves to a pattern of its own), so it always covers more. LAMMPS `micelle` (the
/// first pattern already the step, 1,998 of 2,000; parsed this way 1,856, more events one-off),
/// NAS MG 16's V-cycles (64 exchanges leave 672 events one-off against 216) stay.
pub(super) fn explains_inside(inner: &PatternAnalysis, best: &PatternAnalysis) -> bool {
    let occurrences = |a: &PatternAnalysis| a.communication_patterns.first().map_or(0, |p| p.occurrences);
    let glued = |a: &PatternAnalysis| construct::one_off_events(&a.communication_patterns);
    occurrences(inner) >= LOOP_COPIES * occurrences(best).max(1) && glued(inner) <= glued(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_copies_at_any_rotation_are_held() {
        // A period: a rebuild (9, 8) then the step (1, 2, 3) four times, written from its 2.
        let period = [9, 8, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1];
        assert!(copies_cover(&period, &[1, 2, 3]) > 0);
        assert!(copies_cover(&period, &[3, 1, 2]) > 0);
        // Two copies are no loop: a step of two identical halves.
        assert_eq!(copies_cover(&[1, 2, 1, 2, 5], &[1, 2]), 0);
        assert_eq!(copies_cover(&period, &[1, 3, 2]), 0);
    }

    #[test]
    fn an_outer_loop_is_mostly_copies_of_its_inner_loop() {
        // A rebuild (9, 8) then the step (1, 2, 3) four times: 12 of 14 positions are copies.
        let period = [9, 8, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3];
        assert_eq!(copies_cover(&period, &[1, 2, 3]), 12);
        // NAS LU's time step on a corner rank: the lower sweep sends to both neighbours on each
        // of 4 planes, the upper receives from them, then the halo: each sweep's plane loop is
        // 8 of 20 positions, no more than half, so neither is an iteration of the step.
        let step = [1, 4, 1, 4, 1, 4, 1, 4, 2, 5, 2, 5, 2, 5, 2, 5, 1, 2, 4, 5];
        assert_eq!(copies_cover(&step, &[1, 4]), 8);
        assert_eq!(copies_cover(&step, &[2, 5]), 8);
        assert!(2 * copies_cover(&step, &[1, 4]) <= step.len());
        // Fewer than three copies cover nothing.
        assert_eq!(copies_cover(&[7, 1, 2, 1, 2, 7], &[1, 2]), 0);
    }
}
