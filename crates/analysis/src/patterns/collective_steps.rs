//! Steps counted by their collectives: a loop whose iterations change form over the run.
//!
//! GROMACS with dynamic load balancing moves the cell boundaries every so often, after which some
//! pulses have nothing to send one way: their `MPI_Sendrecv` becomes a lone send on one rank and a
//! lone receive on its partner, and which ones changes with each move, rank by rank. Each regime's
//! step is then a loop of its own (a few to 40 iterations) whose body is no copy, no subsequence
//! and no supersequence of the others, so neither [`super::steps::fold_steps`] (iterations holding
//! the body) nor [`super::steps::fold_lacking`] (iterations inside a form) makes one loop of them,
//! and the per-rank parse takes whatever repeats longest.
//!
//! What still counts the steps is the step's collectives: a rank skips messages, never a collective
//! alone. The loop pattern's exact copies seed the loop ([`super::steps::seed_copies`]); where a
//! loop was folded before, only when none of its iterations holds the step's collectives twice
//! (LAMMPS's folded steps are not cut again; GROMACS on 18 ranks, one regime folded on every rank,
//! is cut). The *step* is the loop body over the same ranks, calling the same collectives as the
//! loop pattern, that covers most events while holding a whole step on every rank (each collective
//! as many times wherever it is called: a part cut at another rotation holds half a run of them);
//! its *forms* are the loop bodies over those ranks holding its collectives (another regime; a loop
//! of the set-up's reductions alone is not one), and the patterns holding a whole step with those
//! collectives whose every part follows or precedes an iteration of such a loop body on its rank (a
//! step variant recurring between iterations: GROMACS's neighbour-search steps on 8 ranks with load
//! balancing, 12 of 121 steps, lacking some exchanges and adding others). Only a step in at least
//! two forms is cut: a loop in one form is folded as far as its copies go, and around a solver's
//! iterations the stretches holding its collectives are its set-up (OpenFOAM's CG solves, GetDP's).
//! Each rank's step begins after its longest run of messages between two collectives
//! ([`natural_start`]); from there the rank's events are cut where each copy of the step's
//! collectives (`K`, in order, embedded greedily; GROMACS: PME's four `MPI_Alltoall`s) ends,
//! forward, and backward where the copy before ends; a piece is bounded by cuts on both sides (the
//! stretch before the first cut and after the last is no step). A piece is a step when its messages
//! go only to and from the partners the forms have there (at least one message where every form has
//! one), and its own collectives are laid out as in one form — the same ones in order, with
//! messages between two of them where the form has ([`Layout`]: three smoother iterations, each a
//! reduction between exchanges, hold a CG iteration's three reductions but not back to back);
//! collectives the step never calls may be added (a neighbour search's or an energy step's
//! reduction, the balancer's gathers). The pieces become iterations of the loop; an instance
//! holding a piece that is not one iteration on every rank of the step gives its pieces back;
//! construction runs again, and the fold is kept when the events in step patterns, less those in
//! instances seen once, exceed the loop pattern's. A loop without collectives has nothing to count
//! its steps by and is left alone. No length, count or share threshold: the collectives, their
//! layout and the partners decide.
//!
//! O(events) per rank for the cut, plus up to [`ROUNDS`] constructions.

use super::construct::{one_off_events, CommunicationAnalysis, EventNames};
use super::events::EventRef;
use super::fold::{FoldInput, Folded};
use super::steps::{
    instance_parts, is_looped, loop_pattern_in, seed_copies, steps_net_of_one_off, with_pieces, NOT_A_STEP,
};
use std::collections::BTreeMap;
use tracelogic_model::Rank;

/// Rounds of giving back the pieces of instances that are not steps.
const ROUNDS: usize = 3;

/// The loop's steps cut by their collectives ([module docs](self)); `None` when an iteration of a
/// loop folded before holds the step's collectives twice, no loop body calls the loop pattern's
/// collectives on every rank, the step has one form, no piece is new, or the fold would not put
/// more events in steps net of those left in instances seen once.
pub(super) fn fold_collective_steps(input: &FoldInput, state: &Folded) -> Option<Folded> {
    let events = input.events;
    let (occurrences, loops, c) = state.parts();
    // The loop pattern's exact copies seed loop 0; a loop folded before keeps its iterations
    // whole (the per-rank check below).
    let was_folded = loops.iter().any(|l| !l.is_empty());
    let (old_occ, old_loops) = (occurrences, loops);
    let parts = instance_parts(c);
    let p = loop_pattern_in(c, &parts, &[])?;
    let ranks = &c.patterns[p].ranks;
    let collective_symbols: BTreeMap<Rank, &[u32]> = ranks
        .iter()
        .map(|&r| (r, events.ranks[r as usize].collective_symbols()))
        .collect();
    // A form's collectives on a rank, sorted (a rotation of the step has the same).
    let collectives_of = |r: Rank, names: &EventNames| -> Vec<u32> {
        let set = &collective_symbols[&r];
        let mut col: Vec<u32> = names
            .ids()
            .iter()
            .copied()
            .filter(|x| set.binary_search(x).is_ok())
            .collect();
        col.sort_unstable();
        col
    };
    // Candidates: the loop pattern and every loop body over the same ranks.
    let candidates: Vec<usize> = (0..c.patterns.len())
        .filter(|&q| {
            q == p || (c.patterns[q].ranks == *ranks && c.patterns[q].occurrences >= 3 && is_looped(&parts[q]))
        })
        .collect();
    // The step: the candidate covering most events whose every rank holds a whole step, each
    // collective as many times wherever it is called (one rank's part of a step cut at another
    // rotation holds half of a run of collectives).
    let whole = |q: usize| {
        let mut count: BTreeMap<u32, usize> = BTreeMap::new();
        c.patterns[q].events.iter().all(|(&r, names)| {
            let col = collectives_of(r, names);
            !col.is_empty()
                && col
                    .chunk_by(|a, b| a == b)
                    .all(|run| *count.entry(run[0]).or_insert(run.len()) == run.len())
        })
    };
    // The loop pattern's collectives on each rank, once each: a candidate calls the same ones
    // (the loop pattern at another rotation or in another regime, not another loop).
    let kinds = |q: usize| -> Vec<(Rank, Vec<u32>)> {
        c.patterns[q]
            .events
            .iter()
            .map(|(&r, names)| {
                let mut col = collectives_of(r, names);
                col.dedup();
                (r, col)
            })
            .collect()
    };
    let loop_kinds = kinds(p);
    if loop_kinds.iter().any(|(_, col)| col.is_empty()) {
        return None;
    }
    let &q = candidates
        .iter()
        .filter(|&&q| whole(q) && kinds(q) == loop_kinds)
        .max_by_key(|&&q| (c.patterns[q].events_covered, std::cmp::Reverse(q)))?;
    let step = &c.patterns[q];
    // The step's forms: the candidates holding its collectives on every rank (another regime of
    // the step; a loop of the set-up's reductions alone is not one).
    let same_collectives = |f: &BTreeMap<Rank, EventNames>| {
        f.len() == step.events.len()
            && f.iter().all(|(&r, names)| {
                step.events
                    .get(&r)
                    .is_some_and(|own| collectives_of(r, names) == collectives_of(r, own))
            })
    };
    // Where the step sends messages, a form holds some too: a rank skips messages, never a
    // collective alone, so collectives alone between steps (held-out LAMMPS `dipole`: its
    // thermo output's reductions, 72 lone `MPI_Allreduce`s in 1,000 steps) are no step.
    let messages =
        |f: &BTreeMap<Rank, EventNames>| f.iter().any(|(&r, names)| names.len() > collectives_of(r, names).len());
    let step_messages = messages(&step.events);
    let same_collectives = |f: &BTreeMap<Rank, EventNames>| same_collectives(f) && (!step_messages || messages(f));
    let looped: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&f| same_collectives(&c.patterns[f].events))
        .collect();
    // A form need not be a loop: a step variant recurring between the loop's iterations
    // (GROMACS's neighbour-search steps, every `nstlist` steps, lacking some exchanges and
    // adding others) is one when it holds a whole step and each of its parts on each rank
    // follows or precedes an iteration of a looped form there.
    let between = |g: usize| {
        parts[g].iter().all(|&(r, a, b)| {
            looped.iter().any(|&f| {
                let list = &parts[f];
                let i = list.partition_point(|y| (y.0, y.1) < (r, a));
                let before = i > 0 && list[i - 1].0 == r && list[i - 1].2 + 1 == a;
                let after = list.binary_search_by_key(&(r, b + 1), |y| (y.0, y.1)).is_ok();
                before || after
            })
        })
    };
    let forms: Vec<&BTreeMap<Rank, EventNames>> = (0..c.patterns.len())
        .filter(|&g| {
            looped.contains(&g)
                || (!candidates.contains(&g)
                    && c.patterns[g].ranks == *ranks
                    && c.patterns[g].occurrences >= 3
                    && whole(g)
                    && same_collectives(&c.patterns[g].events)
                    && between(g))
        })
        .map(|g| &c.patterns[g].events)
        .collect();
    // A loop in one form is folded already as far as its copies go (a solver's iterations: the
    // stretches around them that hold its collectives are its set-up, not steps).
    if forms.len() < 2 {
        return None;
    }
    // Each rank's step start and the step's collectives there (`K`), from the loop's first
    // iteration on the rank: its part in the step pattern's first instance.
    let mut starts: BTreeMap<Rank, (usize, Vec<u32>)> = BTreeMap::new();
    let first = c.instances.iter().find(|i| i.pattern as usize == q)?;
    for &rank in &step.ranks {
        let re = &events.ranks[rank as usize];
        let Some((s0, e0)) = first
            .parts
            .iter()
            .find(|q| q.rank == rank)
            .map(|q| (q.first_event as usize, q.last_event as usize + 1))
        else {
            continue;
        };
        let is_collective = |i: usize| matches!(re.events[i], EventRef::Collective(_));
        let (j, k) = natural_start(&re.symbols[s0..e0], |i| is_collective(s0 + i))?;
        // Where loops were folded: no folded iteration may hold the step's collectives twice (a
        // cut would split it: LAMMPS's 50 folded steps into 140 pieces); folded forms that are
        // single steps (GROMACS on 18 ranks, a regime folded on every rank) are cut as any.
        if was_folded {
            let r = rank as usize;
            for (o, &lp) in old_occ[r].iter().zip(&old_loops[r]) {
                let (a, b) = (o.0 as usize, o.1 as usize);
                let seq = &re.symbols[..b];
                if lp != NOT_A_STEP && forward_cut(seq, &k, a).and_then(|x| forward_cut(seq, &k, x)).is_some() {
                    return None;
                }
            }
        }
        starts.insert(rank, (s0 + j, k));
    }
    let (occurrences, loops) = seed_copies(events, occurrences, c, p);
    let (occurrences, loops, l) = (occurrences.as_slice(), loops.as_slice(), 0u32);
    let mut pieces: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); occurrences.len()];
    for &rank in &step.ranks {
        let r = rank as usize;
        let re = &events.ranks[r];
        let is_collective = |i: usize| matches!(re.events[i], EventRef::Collective(_));
        let symbols = &collective_symbols[&rank];
        let collective = |x: u32| symbols.binary_search(&x).is_ok();
        let mut own: Vec<u32> = Vec::new();
        let mut form_layouts: Vec<Layout> = Vec::new();
        // Whether every form holds a message here (then so must a step).
        let mut messages = true;
        for f in &forms {
            if let Some(names) = f.get(&rank) {
                let ids = names.ids();
                own.extend_from_slice(ids);
                messages &= ids.iter().any(|&x| !collective(x));
                let Some((j, _)) = natural_start(ids, |i| collective(ids[i])) else {
                    continue;
                };
                let rotated: Vec<u32> = ids[j..].iter().chain(&ids[..j]).copied().collect();
                let shape = layout(&rotated, |i| collective(rotated[i]), |i| !collective(rotated[i]));
                if !form_layouts.contains(&shape) {
                    form_layouts.push(shape);
                }
            }
        }
        own.sort_unstable();
        own.dedup();
        let Some((anchor, k)) = starts.get(&rank) else { continue };
        let (anchor, seq) = (*anchor, &re.symbols);
        let mut cuts = backward_cuts(seq, k, anchor);
        cuts.reverse();
        cuts.push(anchor);
        let mut at = anchor;
        while let Some(next) = forward_cut(seq, k, at) {
            cuts.push(next);
            at = next;
        }
        let old: std::collections::HashSet<(u32, u32)> = occurrences[r]
            .iter()
            .zip(&loops[r])
            .filter(|(_, &x)| x == l)
            .map(|(o, _)| *o)
            .collect();
        let fits: Vec<bool> = cuts
            .windows(2)
            .map(|w| {
                let (s, e) = (w[0], w[1]);
                let piece = &seq[s..e];
                let messages_fit = piece
                    .iter()
                    .enumerate()
                    .all(|(i, x)| is_collective(s + i) || own.binary_search(x).is_ok());
                let shape = layout(
                    piece,
                    |i| is_collective(s + i) && own.binary_search(&piece[i]).is_ok(),
                    |i| !is_collective(s + i),
                );
                let has_message = !messages || (0..piece.len()).any(|i| !is_collective(s + i));
                messages_fit && has_message && form_layouts.contains(&shape)
            })
            .collect();
        for (i, w) in cuts.windows(2).enumerate() {
            let (s, e) = (w[0] as u32, w[1] as u32);
            if fits[i] && !old.contains(&(s, e)) {
                pieces[r].push((s, e, l));
            }
        }
    }
    let gain = steps_net_of_one_off;
    // The loop pattern's events are what its steps covered before.
    let before = c.patterns[p].events_covered as i64 - one_off_events(&c.patterns) as i64;
    for _ in 0..ROUNDS {
        if pieces.iter().all(|p| p.is_empty()) {
            return None;
        }
        let folded = with_pieces(input, occurrences, loops, &mut pieces);
        if !give_back(&folded.communication, &step.ranks, l, &mut pieces) {
            return (gain(&folded.communication) > before).then_some(folded);
        }
    }
    None
}

/// Where a step begins in one iteration `body` (`collective(i)`: event `i` is a collective):
/// after the longest run of messages between two collectives, taken cyclically (a step's
/// messages come before its collectives, the iteration may have been cut anywhere), and the
/// collectives of the body rotated to begin there. `None` without collectives.
fn natural_start(body: &[u32], collective: impl Fn(usize) -> bool) -> Option<(usize, Vec<u32>)> {
    let m = body.len();
    let at: Vec<usize> = (0..m).filter(|&i| collective(i)).collect();
    if at.is_empty() {
        return None;
    }
    // The run after collective `a` up to the next (cyclically), longest first, then earliest.
    let mut best = (0usize, 0usize);
    for (n, &a) in at.iter().enumerate() {
        let next = at.get(n + 1).copied().unwrap_or(at[0] + m);
        let run = next - a - 1;
        if n == 0 || run > best.0 {
            best = (run, (a + 1) % m);
        }
    }
    let j = best.1;
    let k = (0..m)
        .map(|i| (i + j) % m)
        .filter(|&i| collective(i))
        .map(|i| body[i])
        .collect();
    Some((j, k))
}

/// A step's collectives in order, and whether messages run between each two consecutive ones
/// (a CG iteration's three reductions back to back, a smoother's one between exchanges: three
/// smoother iterations hold the CG's collectives, not their layout).
type Layout = (Vec<u32>, Vec<bool>);

/// The [`Layout`] of `seq`: its events where `collective(i)` (the step's own collectives) and,
/// between each two, whether some event is a message (`message(i)`). O(|seq|).
fn layout(seq: &[u32], collective: impl Fn(usize) -> bool, message: impl Fn(usize) -> bool) -> Layout {
    let mut col = Vec::new();
    let mut between = Vec::new();
    let mut seen = false;
    for (i, &x) in seq.iter().enumerate() {
        if collective(i) {
            if !col.is_empty() {
                between.push(seen);
            }
            col.push(x);
            seen = false;
        } else if message(i) {
            seen = true;
        }
    }
    (col, between)
}

/// One past the end of the first copy of `k` embedded greedily in `seq` from `from`.
fn forward_cut(seq: &[u32], k: &[u32], from: usize) -> Option<usize> {
    let mut j = 0;
    for (i, &x) in seq.iter().enumerate().skip(from) {
        if x == k[j] {
            j += 1;
            if j == k.len() {
                return Some(i + 1);
            }
        }
    }
    None
}

/// The cuts before `anchor`, nearest first: each piece holds one copy of `k` (embedded from its
/// end backwards) and starts after the last event of `k` before that copy; none past the first
/// copy of `k` in the rank.
fn backward_cuts(seq: &[u32], k: &[u32], anchor: usize) -> Vec<usize> {
    let last = k[k.len() - 1];
    let mut out = Vec::new();
    let mut end = anchor;
    loop {
        // The copy of `k` ending at or before `end`, found from the back.
        let mut j = k.len();
        let mut i = end;
        while j > 0 && i > 0 {
            i -= 1;
            if seq[i] == k[j - 1] {
                j -= 1;
            }
        }
        if j > 0 {
            break;
        }
        // The previous copy's last event bounds the piece.
        let Some(prev) = seq[..i].iter().rposition(|&x| x == last) else {
            break;
        };
        out.push(prev + 1);
        end = prev + 1;
    }
    out
}

/// Drops the pieces of instances that hold one but are not a step of loop `l` over `ranks`;
/// whether any was dropped.
pub(super) fn give_back(
    c: &CommunicationAnalysis,
    ranks: &[Rank],
    l: u32,
    pieces: &mut [Vec<(u32, u32, u32)>],
) -> bool {
    let mut drop: Vec<Vec<bool>> = pieces.iter().map(|p| vec![false; p.len()]).collect();
    let mut any = false;
    for inst in &c.instances {
        let is_step = c.step_loops.get(inst.pattern as usize) == Some(&l)
            && inst.parts.len() == ranks.len()
            && inst.parts.iter().zip(ranks).all(|(q, &r)| q.rank == r);
        if is_step {
            continue;
        }
        for q in &inst.parts {
            let list = &pieces[q.rank as usize];
            let from = list.partition_point(|x| x.0 < q.first_event);
            for (k, x) in list.iter().enumerate().skip(from) {
                if x.0 > q.last_event {
                    break;
                }
                drop[q.rank as usize][k] = true;
                any = true;
            }
        }
    }
    for (list, d) in pieces.iter_mut().zip(drop) {
        let mut it = d.into_iter();
        list.retain(|_| !it.next().unwrap_or(false));
    }
    any
}

#[cfg(test)]
mod tests {
    use super::super::steps::is_subsequence as subsequence;
    use super::{backward_cuts, forward_cut, layout, natural_start};

    /// On random strings over small alphabets, every piece between consecutive cuts (backward
    /// and forward of a random anchor) holds the collectives `k` once: as a subsequence, and
    /// not twice over (`k` followed by `k` is no subsequence of it); cuts strictly increase.
    #[test]
    fn every_piece_holds_the_collectives_once() {
        let mut rng = crate::phases::merge::SplitMix(7);
        let mut next = |n: u64| rng.below(n as usize) as u64;
        for _ in 0..2000 {
            let len = 1 + next(60) as usize;
            let alphabet = 2 + next(3);
            let seq: Vec<u32> = (0..len).map(|_| next(alphabet) as u32).collect();
            let k: Vec<u32> = (0..1 + next(3)).map(|_| next(alphabet) as u32).collect();
            let anchor = next(len as u64 + 1) as usize;
            let mut cuts = backward_cuts(&seq, &k, anchor);
            cuts.reverse();
            cuts.push(anchor);
            let mut at = anchor;
            while let Some(c) = forward_cut(&seq, &k, at) {
                cuts.push(c);
                at = c;
            }
            let twice: Vec<u32> = k.iter().chain(&k).copied().collect();
            for w in cuts.windows(2) {
                assert!(w[0] < w[1], "{seq:?} {k:?} {cuts:?}");
                let piece = &seq[w[0]..w[1]];
                assert!(subsequence(&k, piece), "{seq:?} {k:?} {cuts:?}");
                assert!(!subsequence(&twice, piece), "{seq:?} {k:?} {cuts:?}");
            }
        }
    }

    /// A step begins after its longest run of messages (0 a collective, 1 a message): the
    /// iteration cut at `A m m A A A` begins at the messages, its collectives `A A A A`.
    #[test]
    fn a_step_begins_after_its_collectives() {
        let body = [0, 1, 1, 0, 0, 0];
        assert_eq!(natural_start(&body, |i| body[i] == 0), Some((1, vec![0, 0, 0, 0])));
        assert_eq!(natural_start(&[1, 1], |_| false), None);
    }

    /// A CG iteration's reductions back to back against three smoother iterations, each a
    /// reduction between exchanges (`H` = 1, `A` = 0): the same collectives, another layout.
    #[test]
    fn layout_tells_back_to_back_reductions_from_interleaved_ones() {
        let cg = [1, 0, 0, 0];
        let smoother = [1, 1, 0, 1, 1, 0, 1, 1, 0];
        let of = |s: &[u32]| layout(s, |i| s[i] == 0, |i| s[i] == 1);
        assert_eq!(of(&cg), (vec![0, 0, 0], vec![false, false]));
        assert_eq!(of(&smoother), (vec![0, 0, 0], vec![true, true]));
    }
}
