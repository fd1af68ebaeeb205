//! A step's own collectives repeated beside it: part of the step.
//!
//! Under a barostat (LAMMPS `fix npt`) every step ends with four reductions where the same run's
//! steps without it end with the rebuild check's one. The general form reads both as one
//! step, but the parse's occurrences of the step end at its exact copy, so the other three
//! reductions of every barostat step came out as a pattern of their own (held-out
//! `ellipse.gayberne` on 6 ranks: 130 × 6 ranks beside 347 steps of 400; `gayberne` on 8
//! ranks: 901 steps of 1,000, 946 with the join).
//!
//! An instance of a pattern that is no step, over exactly the step pattern's ranks, whose every
//! part holds only collectives that the step's own form holds on that rank, no more events than
//! that form, and that on every rank directly follows an iteration of the step's loop (or else
//! directly precedes one), is joined to that iteration. Not where it precedes the step and ends
//! a run of its own pattern's parts: the last of a loop's first steps that lack its messages
//! (LAMMPS `pour` before the particles arrive) would join the first step and move the phase
//! boundary from the `run`'s barrier to where the messages begin. The joined stretches are put
//! in as the iterations ([`super::steps::with_pieces`]) and the patterns constructed again; the
//! result is kept when no step is lost, the first pattern keeps its occurrences, and the steps,
//! net of events left in instances seen once, cover more. It runs once, on the analysis kept
//! ([`join_to_steps`]), not inside each parse, where covering more changes which parse wins.
//! O(events of the instances over the step's ranks + log of the occurrences per part) plus
//! one construction.

use super::construct::{CommunicationAnalysis, OpIndex};
use super::fold::{self, FoldInput, Folded};
use super::steps::{
    instance_parts, step_occurrences, steps_before, steps_net_of_one_off, with_pieces, LoopsOrSeeded, NOT_A_STEP,
};
use super::{Events, PatternAnalysis};
use tracelogic_model::{Matching, Trace};

/// [`super::copies::fold_copies`], [`super::lacking_collectives::fold_lacking_collectives_between`]
/// and [`fold_trailing_collectives`], in that order, on the analysis kept (its fold state, which
/// it then drops): `analysis` changed only where one of them is kept.
pub(super) fn join_to_steps(trace: &Trace, matching: &Matching, events: &Events, analysis: &mut PatternAnalysis) {
    let Some(kept) = analysis.fold_state.take() else {
        return;
    };
    let super::FoldState {
        occurrences,
        loops,
        innermost,
    } = *kept;
    let ops = OpIndex::of(trace, events);
    let input = FoldInput {
        trace,
        matching,
        events,
        ops: &ops,
        innermost,
    };
    let state = Folded {
        occurrences,
        loops,
        communication: std::mem::take(&mut analysis.communication),
    };
    // The iterations made of copies of one step cut into those steps; then those holding
    // steps that lack the step's collectives, copies with collectives between them allowed;
    // then the step's own collectives beside it joined. Each kept where it explains more.
    let stages: [fold::Stage; 3] = [
        super::copies::fold_copies,
        super::lacking_collectives::fold_lacking_collectives_between,
        fold_trailing_collectives,
    ];
    let mut state = state;
    let mut changed = false;
    for stage in stages {
        if let Some(next) = stage(&input, &state) {
            state = next;
            changed = true;
        }
    }
    if !changed {
        analysis.communication = state.communication;
        return;
    }
    let kept = state;
    let share = analysis.min_share;
    analysis.set_fold_state(kept, innermost);
    analysis.fold_state = None;
    analysis.set_min_share(share);
}

/// The steps with the instances of their own collectives beside them joined to them
/// ([module docs](self)); `None` when there are none or the join explains no more.
pub(super) fn fold_trailing_collectives(input: &FoldInput, state: &Folded) -> Option<Folded> {
    let events = input.events;
    let c = &state.communication;
    let looped = LoopsOrSeeded::of(events, state)?;
    let (occurrences, loops, seed) = looped.parts();
    let step_loop = |q: usize| looped.step_loop(c, q);
    let mut pieces: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); occurrences.len()];
    let mut any = false;
    let parts = instance_parts(c);
    for (q, p) in c.patterns.iter().enumerate() {
        let l = step_loop(q);
        if l == NOT_A_STEP {
            continue;
        }
        // The collectives of the step's own form, per rank (sorted).
        let own: std::collections::BTreeMap<u32, Vec<u32>> = p
            .events
            .iter()
            .map(|(&r, names)| {
                let collective = events.ranks[r as usize].collective_symbols();
                let mut mine: Vec<u32> = names
                    .ids()
                    .iter()
                    .copied()
                    .filter(|x| collective.binary_search(x).is_ok())
                    .collect();
                mine.sort_unstable();
                mine.dedup();
                (r, mine)
            })
            .collect();
        if own.values().any(Vec::is_empty) {
            continue;
        }
        // The iteration of loop `l` on rank `r` ending at `at`, or else beginning at `end`
        // where no part of the same pattern ends at `at` (the last of a run of steps lacking
        // the step's messages: LAMMPS `pour` before the particles arrive, whose first step
        // would then begin off the `run`'s barrier), joined to the stretch between.
        let beside = |r: usize, at: u32, end: u32, same: &[(u32, u32, u32)]| -> Option<(u32, u32)> {
            let (occ, fl) = (&occurrences[r], &loops[r]);
            let i = occ.partition_point(|o| o.1 < at);
            if occ.get(i).is_some_and(|o| o.1 == at) && fl.get(i) == Some(&l) {
                return Some((occ[i].0, end));
            }
            let run = at > 0 && same.binary_search_by(|x| (x.0, x.2).cmp(&(r as u32, at - 1))).is_ok();
            let j = occ.partition_point(|o| o.0 < end);
            (!run && occ.get(j).is_some_and(|o| o.0 == end) && fl.get(j) == Some(&l)).then(|| (at, occ[j].1))
        };
        for inst in c.instances.iter().filter(|i| {
            step_loop(i.pattern as usize) == NOT_A_STEP
                && i.parts.len() == p.ranks.len()
                && i.parts.iter().zip(&p.ranks).all(|(part, &r)| part.rank == r)
        }) {
            let joined: Option<Vec<(usize, (u32, u32))>> = inst
                .parts
                .iter()
                .map(|part| {
                    let r = part.rank as usize;
                    let mine = own.get(&part.rank)?;
                    let form = p.events.get(&part.rank)?.ids().len();
                    let (a, b) = (part.first_event, part.last_event + 1);
                    // A few of the step's collectives, not a stretch of steps lacking its
                    // messages (LAMMPS `pour`'s quiet steps before particles arrive).
                    let only_own = (b - a) as usize <= form
                        && events.ranks[r].symbols[a as usize..b as usize]
                            .iter()
                            .all(|x| mine.binary_search(x).is_ok());
                    only_own
                        .then(|| beside(r, a, b, parts.get(inst.pattern as usize).map_or(&[], Vec::as_slice)))
                        .flatten()
                        .map(|s| (r, s))
                })
                .collect();
            let Some(joined) = joined else {
                continue;
            };
            any = true;
            for (r, (a, b)) in joined {
                pieces[r].push((a, b, l));
            }
        }
    }
    if !any {
        return None;
    }
    let (net_before, steps_before) = steps_before(c, seed);
    let folded = with_pieces(input, occurrences, loops, &mut pieces);
    let fc = &folded.communication;
    // The pattern a view shows first must keep its occurrences: a join that makes two forms of
    // one step two patterns is no gain even where it covers more.
    let first = |c: &CommunicationAnalysis| c.patterns.first().map_or(0, |p| p.occurrences);
    let kept = steps_net_of_one_off(fc) > net_before && step_occurrences(fc) >= steps_before;
    (kept && first(fc) >= first(c)).then_some(folded)
}
