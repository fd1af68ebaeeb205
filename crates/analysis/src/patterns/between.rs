//! A step that both lacks and adds events, found between two steps.
//!
//! [`super::steps::fold_steps`] takes iterations that *add* events (the body embedded in them)
//! and [`super::steps::fold_lacking`] those that *lack* some (a subsequence of a form). A step
//! that does both is neither: GROMACS's neighbour-search steps (every 40th on 16 ranks)
//! redistribute atoms — more exchanges with the same neighbours, some exchanges replaced by
//! their lone halves — and add an `MPI_Allreduce`, so the per-rank parse cuts them into
//! messages and single collectives.
//!
//! What still marks such a stretch as a step is where it stands and what it holds: between two
//! consecutive steps of the loop on **every** rank of the step pattern, every instance with
//! events there lies wholly in those gaps (no message or collective leaves them), and on every
//! rank the gap holds, among the step's own collective symbols, exactly the collectives of one
//! form of the step on that rank (a rank skips messages, never a collective alone, so the
//! collectives count the steps: two steps' worth is not one step), at least one of them, and
//! messages only to and from the partners the step's forms have there, and a message on some
//! rank where every form of the step has one (a thermo output's reductions alone between two
//! steps are no step). Collectives the step never calls may be added (the neighbour search's
//! reduction). The gaps then become one
//! iteration of the loop on each rank, construction runs again, and the fold is kept when the
//! events in step patterns, less those in instances seen once, increase (matching the ranks'
//! occurrences again may regroup a few one-off messages of the set-up elsewhere). A loop
//! without collectives has nothing to count its steps by and is left alone (LAMMPS), as is the
//! stretch before the first step and after the last (no step on its other side). No length,
//! count or share threshold: the collectives and the partners decide.

use super::construct::CommunicationAnalysis;
use super::events::EventRef;
use super::fold::{FoldInput, Folded};
use super::steps::{steps_net_of_one_off, with_pieces, NOT_A_STEP};
use super::Events;

/// Folded occurrences, their loops and the analysis again; `None` when no gap is a step (or the
/// fold would not cover more events in steps, net of those left in one-off instances).
pub(super) fn fold_between(input: &FoldInput, state: &Folded) -> Option<Folded> {
    let events = input.events;
    let (occurrences, loops, c) = state.parts();
    if loops.iter().all(|l| l.is_empty()) {
        return None;
    }
    // The step pattern of each loop: the one holding its iterations that covers most events.
    let mut step_of: Vec<(u32, usize)> = Vec::new();
    for (p, &l) in c.step_loops.iter().enumerate() {
        if l == NOT_A_STEP {
            continue;
        }
        match step_of.iter_mut().find(|x| x.0 == l) {
            Some(x) if c.patterns[p].events_covered > c.patterns[x.1].events_covered => x.1 = p,
            Some(_) => {}
            None => step_of.push((l, p)),
        }
    }
    let mut pieces: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); occurrences.len()];
    for &(l, p) in &step_of {
        for (r, s, e) in gaps_that_are_steps(events, occurrences, loops, c, p) {
            pieces[r].push((s, e, l));
        }
    }
    if pieces.iter().all(|p| p.is_empty()) {
        return None;
    }
    // Two loops' gaps on one rank may overlap: `with_pieces` keeps the first.
    let folded = with_pieces(input, occurrences, loops, &mut pieces);
    // Net of what the construction run again leaves in instances seen once elsewhere (it
    // matches the ranks' occurrences anew, so small one-off instances of the set-up may change).
    let gain = steps_net_of_one_off;
    (gain(&folded.communication) > gain(c)).then_some(folded)
}

/// The gaps `(rank, start, end)` between consecutive steps of pattern `p` that are one step
/// ([module docs](self)).
fn gaps_that_are_steps(
    events: &Events,
    occurrences: &[Vec<(u32, u32)>],
    loops: &[Vec<u32>],
    c: &CommunicationAnalysis,
    p: usize,
) -> Vec<(usize, u32, u32)> {
    let step = &c.patterns[p];
    let ranks: Vec<usize> = step.ranks.iter().map(|&r| r as usize).collect();
    if ranks.is_empty() {
        return Vec::new();
    }
    // The step's instances, each as its parts' (first, one past the last) event on the
    // step's ranks, in the order of the first rank's parts.
    let mut steps: Vec<Vec<(u32, u32)>> = c
        .instances
        .iter()
        .filter(|i| i.pattern as usize == p && i.parts.len() == ranks.len())
        .filter(|i| i.parts.iter().zip(&ranks).all(|(q, &r)| q.rank as usize == r))
        .map(|i| i.parts.iter().map(|q| (q.first_event, q.last_event + 1)).collect())
        .collect();
    steps.sort_by_key(|s| s[0]);
    // Candidate gaps: consecutive steps in the same order on every rank, something between
    // them on every rank.
    let mut gaps: Vec<Vec<(u32, u32)>> = Vec::new();
    for w in steps.windows(2) {
        let gap: Vec<(u32, u32)> = w[0].iter().zip(&w[1]).map(|(a, b)| (a.1, b.0)).collect();
        if gap.iter().all(|&(s, e)| s < e) {
            gaps.push(gap);
        }
    }
    if gaps.is_empty() {
        return Vec::new();
    }
    // Per step rank, the collective symbols of each form, the step's collective and partner
    // symbols.
    let forms: Vec<&std::collections::BTreeMap<tracelogic_model::Rank, super::construct::EventNames>> =
        if step.variants.is_empty() {
            vec![&step.events]
        } else {
            step.variants.iter().map(|v| &v.events).collect()
        };
    let is_collective = |r: usize, i: usize| matches!(events.ranks[r].events[i], EventRef::Collective(_));
    struct RankForms {
        collectives: Vec<Vec<u32>>,
        own: Vec<u32>,
        /// Per form, whether its part on the rank holds a message.
        messages: Vec<bool>,
    }
    let per_rank: Vec<RankForms> = ranks
        .iter()
        .map(|&r| {
            let symbols = events.ranks[r].collective_symbols();
            let collective_symbol = |x: u32| symbols.binary_search(&x).is_ok();
            let mut collectives: Vec<Vec<u32>> = Vec::new();
            let mut own: Vec<u32> = Vec::new();
            let mut messages = vec![false; forms.len()];
            for (k, f) in forms.iter().enumerate() {
                if let Some(names) = f.get(&(r as tracelogic_model::Rank)) {
                    own.extend_from_slice(names.ids());
                    messages[k] = names.ids().iter().any(|&x| !collective_symbol(x));
                    let col: Vec<u32> = names.ids().iter().copied().filter(|&x| collective_symbol(x)).collect();
                    if !collectives.contains(&col) {
                        collectives.push(col);
                    }
                }
            }
            own.sort_unstable();
            own.dedup();
            RankForms {
                collectives,
                own,
                messages,
            }
        })
        .collect();
    // Whether every form of the step exchanges a message on some rank.
    let forms_exchange = (0..forms.len()).all(|k| per_rank.iter().any(|f| f.messages[k]));
    // Closed: every instance with a part in a gap lies wholly in that gap, on step ranks only.
    let slot: std::collections::HashMap<usize, usize> = ranks.iter().enumerate().map(|(k, &r)| (r, k)).collect();
    let mut ok = vec![true; gaps.len()];
    for inst in &c.instances {
        let mut inside: Vec<usize> = Vec::new();
        let mut outside = false;
        for q in &inst.parts {
            let Some(&k) = slot.get(&(q.rank as usize)) else {
                outside = true;
                continue;
            };
            let (first, last) = (q.first_event, q.last_event);
            let i = gaps.partition_point(|g| g[k].1 <= first);
            if gaps.get(i).is_some_and(|g| g[k].0 <= first && last < g[k].1) {
                inside.push(i);
                continue;
            }
            outside = true;
            // Across the edges of the gaps it overlaps: none of them is closed.
            for (j, g) in gaps.iter().enumerate().skip(i) {
                if g[k].0 > last {
                    break;
                }
                ok[j] = false;
            }
        }
        inside.sort_unstable();
        inside.dedup();
        if outside || inside.len() > 1 {
            for g in inside {
                ok[g] = false;
            }
        }
    }
    let mut out = Vec::new();
    for (g, gap) in gaps.iter().enumerate() {
        if !ok[g] {
            continue;
        }
        let fits = ranks.iter().zip(gap).zip(&per_rank).all(|((&r, &(s, e)), forms)| {
            let seq = &events.ranks[r].symbols[s as usize..e as usize];
            // Occurrences there: inside the gap and iterations of no loop.
            let occ = &occurrences[r];
            let from = occ.partition_point(|o| o.1 <= s);
            let free = occ[from..]
                .iter()
                .zip(&loops[r][from..])
                .take_while(|(o, _)| o.0 < e)
                .all(|(o, &l)| o.0 >= s && o.1 <= e && l == NOT_A_STEP);
            // Messages only with the step's partners; the step's collectives those of one form.
            let messages_fit = seq
                .iter()
                .enumerate()
                .all(|(i, x)| is_collective(r, s as usize + i) || forms.own.binary_search(x).is_ok());
            let col: Vec<u32> = seq
                .iter()
                .enumerate()
                .filter(|&(i, x)| is_collective(r, s as usize + i) && forms.own.binary_search(x).is_ok())
                .map(|(_, &x)| x)
                .collect();
            free && messages_fit && !col.is_empty() && forms.collectives.contains(&col)
        });
        // A stretch of collectives alone is no step of a loop whose forms exchange messages
        // (LAMMPS micelle: a thermo output's reductions between two steps).
        let messages = ranks
            .iter()
            .zip(gap)
            .any(|(&r, &(s, e))| (s..e).any(|i| !is_collective(r, i as usize)));
        if fits && (messages || !forms_exchange) {
            out.extend(ranks.iter().zip(gap).map(|(&r, &(s, e))| (r, s, e)));
        }
    }
    out
}
