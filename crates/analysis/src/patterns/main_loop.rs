//! A rank's main loop, which the parse lets no rarer pattern cut into
//! ([`super::parse_occurrences_with`]): the loop body covering most events by its general form
//! ([`main_loop`]), or, in the redo that chooses loops by what their iterations cover, the
//! innermost loop whose iterations cover most events at any rotation ([`innermost_main_loop`]).

use std::collections::BTreeMap;

use super::{construct, is_loop_body, RankPattern};

/// The loop body covering most events, as the parse takes it: most frequency × length of the
/// general form (ties: the first). `None` when the rank has no loop.
pub(super) fn main_loop(patterns: &[RankPattern]) -> Option<usize> {
    main_loop_besides(patterns, &[])
}

/// [`main_loop`] among the patterns not marked in `skip` (the outer loops of nested loops,
/// `inner_loops::nested_loops`: a period of rebuilds is no main loop when its steps are).
pub(super) fn main_loop_besides(patterns: &[RankPattern], skip: &[bool]) -> Option<usize> {
    patterns
        .iter()
        .enumerate()
        .filter(|&(i, p)| is_loop_body(p) && !p.outer && !skip.get(i).copied().unwrap_or(false))
        .max_by_key(|(i, p)| (p.frequency * p.symbols.len(), std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
}

/// The occurrences of a pattern that run at least three times back to back: its loop's
/// iterations, as `[start, end)` event ranges, ascending.
pub(super) fn iteration_spans(p: &RankPattern) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    let mut j = 0;
    while j < p.positions.len() {
        let mut end = j + 1;
        while end < p.positions.len() && p.positions[end] == p.ends[end - 1] {
            end += 1;
        }
        if end - j >= 3 {
            out.extend((j..end).map(|k| (p.positions[k], p.ends[k])));
        }
        j = end;
    }
    out
}

/// Events of `spans` (ascending, `[start, end)`) inside the union of `cover` (ascending by
/// start, possibly overlapping). O((|spans| + |cover|) log |cover|).
fn covered_events(spans: &[(u32, u32)], cover: &[(u32, u32)]) -> u64 {
    // The union of `cover`, as disjoint ranges with prefix sums of their lengths.
    let mut union: Vec<(u32, u32)> = Vec::new();
    for &(s, e) in cover {
        match union.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => union.push((s, e)),
        }
    }
    let mut before = Vec::with_capacity(union.len() + 1);
    before.push(0u64);
    for &(s, e) in &union {
        before.push(before[before.len() - 1] + (e - s) as u64);
    }
    // Events of the union below `x`.
    let below = |x: u32| {
        let i = union.partition_point(|u| u.1 <= x);
        before[i] + union.get(i).map_or(0, |u| x.saturating_sub(u.0) as u64)
    };
    spans.iter().map(|&(s, e)| below(e) - below(s)).sum()
}

/// One rotation class of a rank's loops ([`innermost_main_loop`]): its members (pattern
/// indices), their frequency, their iteration spans ([`iteration_spans`], ascending) and the
/// events of those.
type LoopClass = (Vec<usize>, usize, Vec<(u32, u32)>, u64);

/// The main loop of a rank whose loops were found innermost first ([`tandem::reduce_nested`]):
/// its index and, per pattern, whether it is that loop's body at some rotation. A loop's
/// bodies at every rotation are one loop (the reduction starts each run of copies where the
/// run starts, so the stretches between two LAMMPS neighbour-list rebuilds give the step at
/// two rotations), scored by the events of their iterations (occurrences run at least three
/// times back to back), not by the general form's length: a step whose forward and reverse
/// halo exchanges collapse to `X Y Z Y` stands for 24 events. A loop is an *outer* loop of
/// another, more frequent one when the other's iterations hold more than half of its
/// iterations' events (a whole run of 250 time steps with its set-up, repeated by a
/// `label`/`jump` loop; a linear solve around its CG iterations, as the parse's own
/// `mostly_main`): the inner loop is the main loop, as the innermost-first redo means.
/// `(None, all false)` when the rank has no loop.
pub(super) fn innermost_main_loop(patterns: &[RankPattern]) -> (Option<usize>, Vec<bool>) {
    let loops: Vec<usize> = (0..patterns.len())
        .filter(|&k| !patterns[k].outer && is_loop_body(&patterns[k]))
        .collect();
    // Rotation classes: the loops with the same least rotation of their symbols.
    let mut classes: BTreeMap<Vec<u32>, Vec<usize>> = BTreeMap::new();
    for &k in &loops {
        let sy = &patterns[k].symbols;
        let r = construct::least_rotation(sy);
        let key: Vec<u32> = sy[r..].iter().chain(&sy[..r]).copied().collect();
        classes.entry(key).or_default().push(k);
    }
    // Per class: its members, frequency, iteration spans (ascending) and their events.
    let classes: Vec<LoopClass> = classes
        .into_values()
        .map(|members| {
            let frequency = members.iter().map(|&k| patterns[k].frequency).sum();
            let mut spans: Vec<(u32, u32)> = members.iter().flat_map(|&k| iteration_spans(&patterns[k])).collect();
            spans.sort_unstable();
            let events = spans.iter().map(|&(s, e)| (e - s) as u64).sum();
            (members, frequency, spans, events)
        })
        .collect();
    // Most events first (ties: the class of the earliest pattern).
    let mut order: Vec<usize> = (0..classes.len()).collect();
    order.sort_by_key(|&c| (std::cmp::Reverse(classes[c].3), classes[c].0[0]));
    let outer = |c: usize| {
        let (_, f, spans, events) = &classes[c];
        classes
            .iter()
            .any(|(_, g, cover, _)| g > f && 2 * covered_events(spans, cover) > *events)
    };
    let Some(main) = order.into_iter().find(|&c| !outer(c)) else {
        return (None, vec![false; patterns.len()]);
    };
    let members = &classes[main].0;
    let mut in_main = vec![false; patterns.len()];
    for &k in members {
        in_main[k] = true;
    }
    // The member whose iterations cover most stands for the loop (its frequency ranks it).
    let rep = members.iter().copied().max_by_key(|&k| {
        let ev: u64 = iteration_spans(&patterns[k]).iter().map(|&(s, e)| (e - s) as u64).sum();
        (ev, std::cmp::Reverse(k))
    });
    (rep, in_main)
}
