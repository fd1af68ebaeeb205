//! A rank's events parsed into non-overlapping pattern occurrences, left to right
//! ([`parse_occurrences`]), and what the parse asks of a rank pattern: whether it is a loop body
//! and how long its loop's iterations are.

use super::main_loop::{self, innermost_main_loop, main_loop_besides};
use super::{inner_loops, steps, RankPattern};

/// How the ranks are parsed into pattern occurrences ([`parse_occurrences_in`]), also again by
/// [`super::unglue`]; the default is the plain parse.
#[derive(Clone, Copy, Default)]
pub struct ParseMode {
    /// The main loop's iterations taken at their starts (the innermost-first redo).
    pub main_first: bool,
    /// The main loop chosen by its iterations' events ([`innermost_main_loop`]); only with
    /// `main_first`.
    pub by_events: bool,
    /// Inner loops' exact copies taken as iterations, their outer loops yielding
    /// ([`inner_loops::nested_loops`]).
    pub nested: bool,
}

/// Non-overlapping occurrences covering a rank's events, left to right: at each position the
/// most frequent pattern starting there wins (ties: the longer), so repeated building blocks
/// (one sweep, one exchange) are preferred over their compositions. An occurrence of a rarer
/// pattern is not taken where the rank's main loop (the loop body, run three times in a row
/// somewhere, covering most events) starts inside it, unless it is an iteration of its own loop
/// (as long as one of its back-to-back copies, [`iteration_lengths`]): its first event stays a
/// single event and the parse goes on, so a composite seen twice, or a general-form occurrence
/// standing for a whole run of the main loop (OpenFOAM's pressure solve), cannot hide the main
/// loop it encloses, while composites holding other frequent parts (LU's set-up: two exchanges,
/// `l2norm` and a time step whose per-plane sends are counted 30 times) stay whole.
pub fn parse_occurrences(len: usize, patterns: &[RankPattern]) -> Vec<(u32, u32)> {
    parse_occurrences_with(len, patterns, false)
}

/// [`parse_occurrences`]; with `main_first`, an iteration of the main loop (an occurrence as
/// long as one of its back-to-back copies) is taken at its start over a shorter, more frequent
/// part starting there: the step, not its first exchange, once the loops are found innermost
/// first ([`super::tandem::reduce_nested`]).
pub fn parse_occurrences_with(len: usize, patterns: &[RankPattern], main_first: bool) -> Vec<(u32, u32)> {
    let mode = ParseMode {
        main_first,
        ..ParseMode::default()
    };
    parse_occurrences_in(len, None, patterns, mode)
}

/// [`parse_occurrences_with`] as `mode` says ([`ParseMode`]), with the rank's events, `seq`,
/// where known: then an inner loop's exact copies ([`inner_loops::nested_loops`]) are its
/// iterations and its outer loops yield where one starts inside them.
pub fn parse_occurrences_in(
    len: usize,
    seq: Option<&[u32]>,
    patterns: &[RankPattern],
    mode: ParseMode,
) -> Vec<(u32, u32)> {
    let ParseMode {
        main_first,
        by_events,
        nested,
    } = mode;
    let (nested_outer, nested_inner) = match seq {
        Some(_) if nested => inner_loops::nested_loops(patterns),
        _ => (vec![false; patterns.len()], Vec::new()),
    };
    // The rank's main loop: the loop body covering most events.
    let (main, in_main) = if by_events {
        innermost_main_loop(patterns)
    } else {
        let main = main_loop_besides(patterns, &nested_outer);
        let in_main = (0..patterns.len()).map(|k| Some(k) == main).collect();
        (main, in_main)
    };
    // (frequency, length, end, loop body) of the best pattern starting at each position, and
    // where an occurrence of the main loop body starts.
    let mut best: Vec<(u32, u32, u32, bool)> = vec![(0, 0, 0, false); len];
    let mut outer_at: Vec<bool> = vec![false; if nested_outer.iter().any(|&o| o) { len } else { 0 }];
    let mut main_at = vec![0u32; if main.is_some() { len } else { 0 }];
    let mut main_iterations: Vec<(u32, u32)> = Vec::new();
    // An outer loop's iteration is taken before the parts inside it (the inner loops stay in
    // the body): it ranks above every frequency.
    for (k, p) in patterns.iter().enumerate() {
        let lengths = iteration_lengths(p);
        let f = if p.outer { u32::MAX } else { p.frequency as u32 };
        for (&s, &e) in p.positions.iter().zip(&p.ends) {
            let looped = lengths.binary_search(&(e - s)).is_ok();
            let slot = &mut best[s as usize];
            if (f, e - s) > (slot.0, slot.1) {
                *slot = (f, e - s, e, looped);
                if let Some(o) = outer_at.get_mut(s as usize) {
                    *o = nested_outer[k];
                }
            }
            if in_main[k] {
                main_at[s as usize] = main_at[s as usize].max(e - s);
                if main_first && looped {
                    main_iterations.push((s, e));
                }
            }
        }
    }
    let main_frequency = main.map_or(0, |k| {
        if patterns[k].outer {
            u32::MAX
        } else {
            patterns[k].frequency as u32
        }
    });
    for (s, e) in main_iterations {
        let slot = &mut best[s as usize];
        if slot.1 < e - s {
            *slot = (main_frequency, e - s, e, true);
        }
    }
    // An inner loop's exact copies are its iterations: each is taken at its start over an
    // occurrence that is no iteration or is one of an outer loop holding it.
    let mut inner_at = vec![0u32; if outer_at.is_empty() { 0 } else { len }];
    if let Some(seq) = seq.filter(|_| !inner_at.is_empty()) {
        for unit in &nested_inner {
            let l = unit.len() as u32;
            let copies = steps::exact_copies(seq, unit);
            let frequency = copies.len() as u32;
            for s in copies {
                let at = s as usize;
                inner_at[at] = inner_at[at].max(l);
                let slot = &mut best[at];
                if (!slot.3 || outer_at[at] || slot.1 < l) && (slot.1 != l || !slot.3) {
                    *slot = (frequency, l, s + l, true);
                    outer_at[at] = false;
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut i = 0usize;
    while i < len {
        let (f, _, e, looped) = best[i];
        // A rarer occurrence that is no loop iteration yields where the main loop starts inside
        // it (MG's set-up followed by its whole V-cycle loop, twice, would otherwise hide the
        // halo exchanges).
        let inside = main_at.get(i + 1..e as usize);
        // With the loops found innermost first, an iteration of a rarer loop made mostly of the
        // main loop's iterations (a linear solve repeated exactly, around its CG loop) is that
        // loop run with its set-up, not a step of its own: it yields too.
        let mostly_main = || {
            let main_events: u32 = main_at[i..e as usize]
                .iter()
                .enumerate()
                .filter(|&(k, &l)| l > 0 && i + k + l as usize <= e as usize)
                .map(|(_, &l)| l)
                .sum();
            2 * main_events > e - i as u32
        };
        let outer_yields = || {
            outer_at.get(i).copied().unwrap_or(false)
                && inner_at
                    .get(i + 1..e as usize)
                    .is_some_and(|m| m.iter().any(|&l| l > 0))
        };
        let yields = (main_frequency > f
            && inside.is_some_and(|m| m.iter().any(|&l| l > 0))
            && (!looped || (main_first && mostly_main())))
            || outer_yields();
        if f > 0 && !yields {
            out.push((i as u32, e));
            i = e as usize;
        } else {
            i += 1;
        }
    }
    out
}

/// The lengths (events) of a pattern's occurrences that run at least three times back to back:
/// the lengths of its loop's iterations. Empty when the pattern is no loop body. In the general
/// form an occurrence of the same unit may stand for far more events (the unit of a deeper
/// tandem level, whose symbols are collapsed runs: on OpenFOAM's solver loop `Allreduce
/// exchange` two levels up holds 11 to 4,204 events, a whole linear solve with its 25 to 68
/// iterations); such an occurrence is no iteration of the loop.
fn iteration_lengths(p: &RankPattern) -> Vec<u32> {
    let mut lengths: Vec<u32> = main_loop::iteration_spans(p).iter().map(|&(s, e)| e - s).collect();
    lengths.sort_unstable();
    lengths.dedup();
    lengths
}

/// A pattern run at least three times in a row somewhere: the body of a loop (as the alignment
/// takes it), which keeps its parts whatever their counts. A tandem run of two (`Barrier`,
/// exchange, twice in MG's set-up) or a repeat far apart is a composite that may yield.
pub(super) fn is_loop_body(p: &RankPattern) -> bool {
    let mut adjacent = 0;
    for (end, next) in p.ends.iter().zip(p.positions.iter().skip(1)) {
        adjacent = if end == next { adjacent + 1 } else { 0 };
        if adjacent >= 2 {
            return true;
        }
    }
    false
}
