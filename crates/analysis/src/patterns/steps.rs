//! Iterations of a loop that are not identical are still iterations: a time step with
//! re-neighbouring (LAMMPS: ghost atoms exchanged and borders rebuilt, extra messages to the
//! same six neighbours) is one more occurrence of the time step, listed as a variant of it.
//!
//! The loop comes from the tandem repeats: the communication pattern covering most events
//! whose occurrences run back to back (at least three in a row on some rank) is the loop body;
//! on each of its ranks, its event string `B` (the rotation the alignment chose, the same
//! across ranks) marks the iterations that are exact copies. Between two consecutive copies
//! the events form a gap; the gap holds as many iterations as disjoint copies of `B` are
//! embedded in it in order (`B^n` a subsequence of the gap, greedy — which gives the largest
//! `n`): every iteration holds the whole body, in order, plus extra events. Each iteration
//! ends where the embedding of its copy ends (the first iteration of the gap starts at the
//! gap, each next one where the previous one ended); events after the last embedding are no
//! iteration and keep their own parse. A gap without the whole body (LAMMPS's thermo output,
//! five `Allreduce`s) is no iteration either. No length, count or share threshold is involved:
//! the body's events decide. Missing events are folded here in one case only: steps lacking
//! the same messages several in a row, where the cut stands ([`short_unit`]); others are left
//! to [`fold_lacking`], after construction, where their partners' messages place them.
//!
//! The iterations, joined through their messages as any occurrences, become instances; those
//! made of exactly one iteration on each of their ranks are *steps*, and steps over the same
//! ranks are one communication pattern whatever their events ([`super::construct_with_steps`]):
//! the most frequent form names it, the others are its variants with their counts.

use super::construct::{construct_with_iterations, CommunicationAnalysis};
use super::fold::{FoldInput, Folded};
use super::lacking_collectives::quiet_steps;
use super::{Events, Occurrences};

/// Events scanned per loop to choose where iterations begin (one pass over the loop's ranks
/// per rotation tried).
const ROTATION_BUDGET: usize = 1 << 26;

/// Per rank, occurrences and the loop each is an iteration of ([`NOT_A_STEP`]: none).
pub(super) type Steps = (Occurrences, Vec<Vec<u32>>);

/// Loop id of an occurrence that is no iteration.
pub const NOT_A_STEP: u32 = u32::MAX;

/// Each occurrence's loop: `loops` where a stage folded some, else [`NOT_A_STEP`] for every
/// occurrence (`loops` is empty, or parallel to `occurrences`).
pub(super) fn loop_flags(occurrences: &[Vec<(u32, u32)>], loops: &[Vec<u32>]) -> Vec<Vec<u32>> {
    if loops.iter().all(Vec::is_empty) {
        occurrences.iter().map(|o| vec![NOT_A_STEP; o.len()]).collect()
    } else {
        loops.to_vec()
    }
}

/// Loops tried at most (each costs up to a construction).
const MAX_LOOPS: usize = 16;

/// The loops' iterations folded into one pattern per loop ([module docs](self)): loops are
/// taken by the events they cover, most first (at most [`MAX_LOOPS`] tried); a loop is folded
/// when its iterations, variants included, cover more events than its exact copies did. `None`
/// when no loop was folded. The first stage: no loop is folded before it, so `loops` is not read.
pub(super) fn fold_steps(input: &FoldInput, folded: &Folded) -> Option<Folded> {
    let (trace, matching, events, ops) = input.parts();
    let occurrences: &[Vec<(u32, u32)>] = &folded.occurrences;
    let communication = &folded.communication;
    let mut state: Option<(Steps, CommunicationAnalysis)> = None;
    let mut tried: Vec<std::collections::BTreeMap<tracelogic_model::Rank, super::construct::EventNames>> = Vec::new();
    // The occurrences of each pattern in `tried`.
    let mut tried_occurrences: Vec<usize> = Vec::new();
    let mut loops = 0u32;
    while tried.len() < MAX_LOOPS {
        let (occ, flags, current) = match &state {
            Some(((o, f), c)) => (o.as_slice(), Some(f), c),
            None => (occurrences, None, communication),
        };
        let Some(loop_id) = loop_pattern(current, &tried) else {
            break;
        };
        // A loop whose body holds, on every rank, two or more copies of a loop body tried
        // before that runs more often is an outer loop of it (LAMMPS micelle: the stretch
        // from one neighbour-list rebuild to the next, some ten steps): folding it would make
        // the outer iterations the steps, and the stages after cut the steps themselves.
        let candidate = &current.patterns[loop_id];
        let outer = tried.iter().zip(&tried_occurrences).any(|(inner, occurrences)| {
            *occurrences > candidate.occurrences
                && candidate.events.iter().all(|(r, body)| {
                    inner
                        .get(r)
                        .is_some_and(|step| exact_copies(body.ids(), step.ids()).len() >= 2)
                })
        });
        tried.push(candidate.events.clone());
        tried_occurrences.push(candidate.occurrences);
        if outer {
            continue;
        }
        let none: Vec<Vec<u32>>;
        let flags = match flags {
            Some(f) => f,
            None => {
                none = occ.iter().map(|o| vec![NOT_A_STEP; o.len()]).collect();
                &none
            }
        };
        let Some((occ2, flags2)) = iterations(events, occ, flags, current, loop_id, loops) else {
            continue;
        };
        let redone = construct_with_iterations(trace, matching, events, ops, &occ2, &flags2, &[]);
        let before = current.patterns[loop_id].events_covered;
        let after = redone
            .patterns
            .iter()
            .zip(&redone.step_loops)
            .filter(|(p, &l)| l == loops && !p.variants.is_empty())
            .map(|(p, _)| p.events_covered)
            .max()
            .unwrap_or(0);
        if after > before {
            state = Some(((occ2, flags2), redone));
            loops += 1;
        }
    }
    state.map(|((occurrences, flags), communication)| Folded {
        occurrences,
        loops: flags,
        communication,
    })
}

/// The communication pattern covering most events among those with at least three
/// occurrences back to back on some rank (a loop body), not folded yet nor tried.
fn loop_pattern(
    c: &CommunicationAnalysis,
    tried: &[std::collections::BTreeMap<tracelogic_model::Rank, super::construct::EventNames>],
) -> Option<usize> {
    loop_pattern_in(c, &instance_parts(c), tried)
}

/// [`loop_pattern`] with the patterns' parts already listed ([`instance_parts`]).
pub(super) fn loop_pattern_in(
    c: &CommunicationAnalysis,
    parts: &[Vec<(u32, u32, u32)>],
    tried: &[std::collections::BTreeMap<tracelogic_model::Rank, super::construct::EventNames>],
) -> Option<usize> {
    let looped = is_looped;
    c.patterns
        .iter()
        .zip(parts)
        .filter(|(p, list)| {
            p.occurrences >= 3
                && c.step_loops.get(p.id).is_none_or(|&l| l == NOT_A_STEP)
                && !tried.contains(&p.events)
                && looped(list)
        })
        .max_by_key(|(p, _)| (p.events_covered, std::cmp::Reverse(p.id)))
        .map(|(p, _)| p.id)
}

/// Per rank of the loop pattern, its occurrences with the stretch from the first to the last
/// exact copy of the body cut into iterations: the copies, and the gaps between them cut where
/// their embedded copies of the body end; `None` when no gap holds one.
fn iterations(
    events: &Events,
    occurrences: &[Vec<(u32, u32)>],
    loops: &[Vec<u32>],
    c: &CommunicationAnalysis,
    loop_id: usize,
    this_loop: u32,
) -> Option<Steps> {
    // The body on each rank: its part of the first occurrence with the pattern's own events (a
    // pattern may hold its body at several rotations; one instance's parts are cut alike).
    let pattern = &c.patterns[loop_id];
    let own = |p: &super::construct::InstancePart| {
        let seq = &events.ranks[p.rank as usize].symbols[p.first_event as usize..=p.last_event as usize];
        pattern.events.get(&p.rank).is_some_and(|names| {
            names.len() == seq.len() && names.iter().zip(seq).all(|(n, &x)| n == events.names[x as usize])
        })
    };
    let first = c
        .instances
        .iter()
        .find(|i| i.pattern as usize == loop_id && i.parts.iter().all(own))?;
    let loop_events: usize = first
        .parts
        .iter()
        .map(|p| events.ranks[p.rank as usize].symbols.len())
        .sum();
    // Each rank's cut on its own (on every core natively), applied in the parts' order.
    let cuts = crate::logical::per_rank::each_index(first.parts.len(), |k| {
        let part = &first.parts[k];
        let r = part.rank as usize;
        let seq = &events.ranks[r].symbols;
        let body = &seq[part.first_event as usize..=part.last_event as usize];
        // Where an iteration begins is not fixed by the copies alone (any rotation of the body
        // repeats as well); the variants fix it: the rotation putting the most events in
        // iterations is taken (ties: the instance's own cut, then the one starting fewest events
        // earlier). Each rotation costs one pass over the rank's events; at most
        // ROTATION_BUDGET events are scanned over the loop's ranks.
        let collectives = events.ranks[r].collective_symbols();
        let m = body.len();
        let tries = m.min((ROTATION_BUDGET / loop_events.max(1)).max(1));
        let mut best: Option<Segmented> = None;
        for l in 0..tries {
            let rotated: Vec<u32> = (0..m).map(|i| body[(i + m - l) % m]).collect();
            if let Some(s) = segment(seq, &rotated, collectives, &occurrences[r], &loops[r]) {
                if best.as_ref().is_none_or(|b| s.covered > b.covered) {
                    best = Some(s);
                }
            }
        }
        best.map(|b| (r, b))
    });
    // Nothing is copied unless some gap holds an iteration.
    if !cuts.iter().flatten().any(|(_, best)| best.folded) {
        return None;
    }
    let mut out: Occurrences = occurrences.to_vec();
    let mut flags: Vec<Vec<u32>> = loops.to_vec();
    for (r, best) in cuts.into_iter().flatten() {
        (out[r], flags[r]) = merged(&occurrences[r], &loops[r], &best.kept, this_loop);
    }
    Some((out, flags))
}

/// One rank's loop cut into iterations ([`segment`]).
struct Segmented {
    /// (start, end, an exact copy) of each iteration kept, in order.
    kept: Vec<(u32, u32, bool)>,
    /// Whether some gap holds an iteration.
    folded: bool,
    /// Events in iterations.
    covered: usize,
}

/// The stretch of `seq` from the first to the last exact copy of `body` cut into iterations:
/// the copies, and the gaps between them cut where their embedded copies of the body end.
/// Iterations are kept where at least three run back to back (a loop; the force evaluations
/// of an energy minimisation, each between line-search reductions, are not one). `None`
/// without two copies, or where the stretch holds iterations of a loop folded before (`old`
/// occurrences, `old_loops`: of which loop each is an iteration).
fn segment(seq: &[u32], body: &[u32], collectives: &[u32], old: &[(u32, u32)], old_loops: &[u32]) -> Option<Segmented> {
    let m = body.len() as u32;
    let copies = exact_copies(seq, body);
    if copies.len() < 2 {
        return None;
    }
    let (lo, hi) = (copies[0], copies[copies.len() - 1] + m);
    if old
        .iter()
        .zip(old_loops)
        .any(|(o, &l)| l != NOT_A_STEP && o.1 > lo && o.0 < hi)
    {
        return None;
    }
    let mut kinds = body.to_vec();
    kinds.sort_unstable();
    kinds.dedup();
    let body_collectives: Vec<u32> = body
        .iter()
        .copied()
        .filter(|x| collectives.binary_search(x).is_ok())
        .collect();
    // The body's messages alone (none when it has no collective: a copy of them is a copy).
    let body_messages: Vec<u32> = if body_collectives.is_empty() {
        Vec::new()
    } else {
        body.iter()
            .copied()
            .filter(|x| collectives.binary_search(x).is_err())
            .collect()
    };
    // (start, end, a copy) of every iteration, in order.
    let mut iters: Vec<(u32, u32, bool)> = Vec::with_capacity(copies.len());
    for (k, &p) in copies.iter().enumerate() {
        iters.push((p, p + m, true));
        let Some(&next) = copies.get(k + 1) else {
            break;
        };
        let mut from = p + m;
        loop {
            // Steps lacking the body's collectives, several in a row (LAMMPS after a rebuild).
            if let Some((m, n)) = quiet_steps(seq, body, &body_messages, collectives, (from, next)) {
                iters.extend((0..n).map(|k| (from + k * m, from + (k + 1) * m, false)));
                from += n * m;
                continue;
            }
            // Steps lacking the same messages, several in a row (GROMACS 16 ranks: three steps
            // each 5 of 70 messages short; one embedding of the body would span them all).
            if let Some(unit) = short_unit(seq, body, &body_collectives, collectives, from, next) {
                let first = &seq[from as usize..(from + unit) as usize];
                let mut s = from;
                while s + unit <= next && &seq[s as usize..(s + unit) as usize] == first {
                    iters.push((s, s + unit, false));
                    s += unit;
                }
                from = s;
                continue;
            }
            let Some(e) = first_embedding(&seq[from as usize..next as usize], body) else {
                break;
            };
            // An iteration adds events of the body's own kinds and partners only (more
            // messages to the same neighbours, more reductions); a stretch holding other
            // communication is something else that happens to contain the body.
            let piece = &seq[from as usize..(from + e) as usize];
            if !piece.iter().all(|x| kinds.binary_search(x).is_ok()) {
                break;
            }
            iters.push((from, from + e, false));
            from += e;
        }
    }
    // Runs of back-to-back iterations; a loop is at least three in a row (as a loop body is,
    // `is_loop_body`).
    let mut kept: Vec<(u32, u32, bool)> = Vec::with_capacity(iters.len());
    let mut i = 0;
    while i < iters.len() {
        let mut j = i + 1;
        while j < iters.len() && iters[j - 1].1 == iters[j].0 {
            j += 1;
        }
        if j - i >= 3 {
            kept.extend_from_slice(&iters[i..j]);
        }
        i = j;
    }
    let folded = kept.iter().any(|i| !i.2);
    let covered = kept.iter().map(|i| (i.1 - i.0) as usize).sum();
    Some(Segmented { kept, folded, covered })
}

/// The length of a step lacking messages that starts at `from` and repeats right after it: a
/// stretch shorter than `body`, a subsequence of it, holding exactly its collectives
/// (`body_collectives`, in order; symbols in the sorted `collectives`) and some messages,
/// followed by an exact copy of itself, the two together no subsequence of the body (else the
/// body holds two of them: a loop of its own, not a step lacking messages). A rank skips
/// messages, never a collective alone (every rank of the communicator runs it), so the body's
/// collectives mark where such steps repeat; a body without collectives has none (LAMMPS's
/// thermo output, five `MPI_Allreduce`s in a row, holds no message). Candidate lengths: from
/// the stretch's first collective to the next events of the same symbol within two body
/// lengths. O(|body|) per candidate.
fn short_unit(
    seq: &[u32],
    body: &[u32],
    body_collectives: &[u32],
    collectives: &[u32],
    from: u32,
    to: u32,
) -> Option<u32> {
    let &c0 = body_collectives.first()?;
    let m = body.len();
    let window = &seq[from as usize..(from as usize + 2 * m).min(to as usize)];
    let a = window.iter().position(|&x| x == c0)?;
    window
        .iter()
        .enumerate()
        .skip(a + 1)
        .filter(|&(_, &x)| x == c0)
        .map(|(b, _)| b - a)
        .filter(|&len| len < m && 2 * len <= window.len())
        .find(|&len| {
            let unit = &window[..len];
            unit == &window[len..2 * len]
                && unit.iter().any(|x| collectives.binary_search(x).is_err())
                && is_subsequence(unit, body)
                && !is_subsequence(&window[..2 * len], body)
                && unit
                    .iter()
                    .copied()
                    .filter(|x| collectives.binary_search(x).is_ok())
                    .eq(body_collectives.iter().copied())
        })
        .map(|len| len as u32)
}

/// The kept iterations (of loop `this_loop`) merged with the `old` occurrences overlapping
/// none of them; built for the rotation chosen only.
fn merged(
    old: &[(u32, u32)],
    old_loops: &[u32],
    kept: &[(u32, u32, bool)],
    this_loop: u32,
) -> (Vec<(u32, u32)>, Vec<u32>) {
    let pieces: Vec<(u32, u32, u32)> = kept.iter().map(|&(s, e, _)| (s, e, this_loop)).collect();
    merged_pieces(old, old_loops, &pieces)
}

/// Iterations that *lack* some of a step's events are steps too. A loop's steps need not hold
/// every event of its body: on GROMACS some ranks skip a neighbour's exchange in some steps
/// (1–15 messages fewer), so the per-rank parse cuts those steps as patterns of their own and
/// their instances — one iteration of the loop on the other ranks, joined to the short steps
/// through their messages — stay apart from the step pattern (and an exchange between two
/// short steps, cut into bi-grams by the parse, is an instance of its own). An instance over
/// exactly the step pattern's ranks whose every part is either one iteration of the loop or a
/// stretch — every event from the part's first to its last — that is a subsequence of one of
/// the step's forms on that rank is the same step, lacking events (as an iteration adding
/// events holds the body as a subsequence, [`fold_steps`]). At least one part must be an
/// iteration: the messages to a whole step place the short parts in it, so a stray exchange
/// whose events happen to be a subsequence of the step (an `MPI_Alltoall` in the set-up) is
/// no step. The stretches become iterations of the loop (an instance's all or none, none
/// overlapping another's), construction runs again, and the fold is kept when the step
/// patterns then cover more events and no more events are left in instances seen once. Where
/// no loop was folded (no iteration adds events: GROMACS on 16 ranks, parsed innermost first,
/// whose steps only ever lack events), the loop pattern's exact copies are its iterations
/// ([`seeded_loop`]) and the fold is kept when the step pattern then covers more events than
/// the loop pattern did. No length, count or share threshold: the events decide.
/// `loops[r][k]`: the loop occurrence `k` of rank `r` is an iteration of. `None` when nothing
/// was folded.
pub(super) fn fold_lacking(input: &FoldInput, state: &Folded) -> Option<Folded> {
    let events = input.events;
    let c = &state.communication;
    // No loop folded (no iteration adds events): the loop pattern's exact copies are its
    // iterations, and the steps lacking events are checked against its events.
    let looped = LoopsOrSeeded::of(events, state)?;
    let (occurrences, loops, seed) = looped.parts();
    // The step pattern of each loop: the pattern holding its iterations that covers most events.
    let mut step_of: Vec<(u32, usize)> = seed.map(|p| (0, p)).into_iter().collect();
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
    if step_of.is_empty() {
        return None;
    }
    step_of.sort_by_key(|&(l, p)| (std::cmp::Reverse(c.patterns[p].events_covered), l));
    let forms = |p: usize| -> Vec<&std::collections::BTreeMap<tracelogic_model::Rank, super::construct::EventNames>> {
        let pat = &c.patterns[p];
        if pat.variants.is_empty() {
            vec![&pat.events]
        } else {
            pat.variants.iter().map(|v| &v.events).collect()
        }
    };
    // Whether loop `x`'s step pattern covers fewer events than loop `l`'s.
    let covered = |x: u32| {
        step_of
            .iter()
            .find(|s| s.0 == x)
            .map(|s| c.patterns[s.1].events_covered)
    };
    let lesser = |x: u32, l: u32| matches!((covered(x), covered(l)), (Some(a), Some(b)) if a < b);
    // New iterations per rank: (start, end, loop).
    let mut pieces: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); occurrences.len()];
    // Per rank, the stretches claimed so far (start -> end).
    let mut claimed: Vec<std::collections::BTreeMap<u32, u32>> = vec![Default::default(); occurrences.len()];
    for inst in &c.instances {
        let q = inst.pattern as usize;
        if q >= c.patterns.len() || c.step_loops.get(q).is_some_and(|&l| l != NOT_A_STEP) || seed == Some(q) {
            continue;
        }
        for &(l, p) in &step_of {
            let step = &c.patterns[p];
            if step.ranks.len() != inst.parts.len() || !inst.parts.iter().zip(&step.ranks).all(|(q, &r)| q.rank == r) {
                continue;
            }
            let step_forms = forms(p);
            let mut whole = false;
            let mut short: Vec<(usize, u32, u32)> = Vec::new();
            let fits = inst.parts.iter().all(|part| {
                let r = part.rank as usize;
                let (s, e) = (part.first_event, part.last_event + 1);
                let (occ, fl) = (&occurrences[r], &loops[r]);
                // The rank's occurrences overlapping the part.
                let from = occ.partition_point(|o| o.1 <= s);
                let to = from + occ[from..].iter().take_while(|o| o.0 < e).count();
                if to == from + 1 && occ[from] == (s, e) && fl[from] == l {
                    whole = true;
                    return true;
                }
                // Every event from the part's first to its last, whatever instance it is in now
                // (a short step's exchange with another short step's rank is cut apart by the
                // per-rank parse: its own small instance).
                let seq = &events.ranks[r].symbols[s as usize..e as usize];
                // Occurrences inside the stretch only, none an iteration of another loop unless
                // that loop is lesser (its step pattern covers fewer events): a short step may
                // hold an inner loop of its own (GROMACS 12 ranks, 200 steps: on the ranks
                // lacking events, the first steps' repeated exchange folded as a loop).
                let inside = from == to || (occ[from].0 >= s && occ[to - 1].1 <= e);
                let free = inside && fl[from..to].iter().all(|&x| x == NOT_A_STEP || x == l || lesser(x, l));
                let lacks = step_forms.iter().any(|f| {
                    f.get(&part.rank)
                        .is_some_and(|b| b.len() >= seq.len() && is_subsequence(seq, b.ids()))
                });
                if free && lacks {
                    short.push((r, s, e));
                    true
                } else {
                    false
                }
            });
            if fits && whole && !short.is_empty() {
                let overlaps = short
                    .iter()
                    .any(|&(r, s, e)| claimed[r].range(..e).next_back().is_some_and(|(_, &end)| end > s));
                if !overlaps {
                    for (r, s, e) in short {
                        claimed[r].insert(s, e);
                        pieces[r].push((s, e, l));
                    }
                }
                break;
            }
        }
    }
    if pieces.iter().all(|p| p.is_empty()) {
        return None;
    }
    let folded = with_pieces(input, occurrences, loops, &mut pieces);
    let redone = &folded.communication;
    let one_off = |c: &CommunicationAnalysis| super::construct::one_off_events(&c.patterns);
    // Seeded: the loop pattern's events are what its steps covered before.
    let before = seed.map_or_else(|| events_in_steps(c), |p| c.patterns[p].events_covered);
    if events_in_steps(redone) <= before || one_off(redone) > one_off(c) {
        return None;
    }
    Some(folded)
}

/// The ranks' occurrences with each rank's `pieces` `(start, end, loop)` put in as iterations
/// of their loops, and the communication patterns constructed again. `pieces` is left sorted
/// and disjoint: of overlapping pieces (two loops or two step patterns claiming one stretch)
/// the first is kept.
pub(super) fn with_pieces(
    input: &FoldInput,
    occurrences: &[Vec<(u32, u32)>],
    loops: &[Vec<u32>],
    pieces: &mut [Vec<(u32, u32, u32)>],
) -> Folded {
    let (trace, matching, events, ops) = input.parts();
    let mut out: Occurrences = occurrences.to_vec();
    let mut flags: Vec<Vec<u32>> = loops.to_vec();
    for (r, new) in pieces.iter_mut().enumerate() {
        if new.is_empty() {
            continue;
        }
        new.sort_unstable();
        let mut end = 0;
        new.retain(|&(s, e, _)| {
            let keep = s >= end;
            if keep {
                end = e;
            }
            keep
        });
        (out[r], flags[r]) = merged_pieces(&occurrences[r], &loops[r], new);
    }
    let redone = construct_with_iterations(trace, matching, events, ops, &out, &flags, &[]);
    Folded {
        occurrences: out,
        loops: flags,
        communication: redone,
    }
}

/// Events in steps less those left in instances seen once: what a fold stage must increase
/// (or keep) to be kept.
pub(super) fn steps_net_of_one_off(c: &CommunicationAnalysis) -> i64 {
    events_in_steps(c) as i64 - super::construct::one_off_events(&c.patterns) as i64
}

/// Occurrences of the patterns whose occurrences are a loop's iterations: the steps.
pub(super) fn step_occurrences(c: &CommunicationAnalysis) -> usize {
    c.patterns
        .iter()
        .zip(&c.step_loops)
        .filter(|(_, &l)| l != NOT_A_STEP)
        .map(|(p, _)| p.occurrences)
        .sum()
}

/// What a fold stage starts from, as ([`steps_net_of_one_off`], [`step_occurrences`]); where
/// the loop pattern `seed` was seeded (no loop folded), its events net of those in instances
/// seen once and its occurrences.
pub(super) fn steps_before(c: &CommunicationAnalysis, seed: Option<usize>) -> (i64, usize) {
    match seed {
        Some(s) => {
            let one_off = super::construct::one_off_events(&c.patterns) as i64;
            (c.patterns[s].events_covered as i64 - one_off, c.patterns[s].occurrences)
        }
        None => (steps_net_of_one_off(c), step_occurrences(c)),
    }
}

/// Events covered by the patterns whose occurrences are a loop's iterations.
pub(super) fn events_in_steps(c: &CommunicationAnalysis) -> u64 {
    c.patterns
        .iter()
        .zip(&c.step_loops)
        .filter(|(_, &l)| l != NOT_A_STEP)
        .map(|(p, _)| p.events_covered)
        .sum()
}

/// Occurrences, their loops, and the seeded loop pattern ([`LoopsOrSeeded::parts`]).
pub(super) type LoopParts<'a> = (&'a [Vec<(u32, u32)>], &'a [Vec<u32>], Option<usize>);

/// Every rank's occurrences and the loop each is an iteration of ([`Folded::loops`]).
pub(super) type OccurrencesAndLoops<'a> = (&'a [Vec<(u32, u32)>], &'a [Vec<u32>]);

/// A state's occurrences and loops, or where no loop was folded the loop pattern's exact
/// copies seeded as its iterations ([`seeded_loop`]).
pub(super) enum LoopsOrSeeded<'s> {
    /// The state's own.
    Folded(&'s [Vec<(u32, u32)>], &'s [Vec<u32>]),
    /// The loop pattern, and the occurrences with its copies as iterations of loop 0.
    Seeded(usize, Occurrences, Vec<Vec<u32>>),
}

impl<'s> LoopsOrSeeded<'s> {
    /// `None` where no loop was folded and no pattern is a loop body.
    pub(super) fn of(events: &Events, state: &'s Folded) -> Option<Self> {
        let (occurrences, loops, c) = state.parts();
        if loops.iter().all(|l| l.is_empty()) {
            let (p, occ, flags) = seeded_loop(events, occurrences, c)?;
            Some(Self::Seeded(p, occ, flags))
        } else {
            Some(Self::Folded(occurrences, loops))
        }
    }

    /// The occurrences, their loops, and the seeded loop pattern (`None` when folded).
    pub(super) fn parts(&self) -> LoopParts<'_> {
        match self {
            Self::Folded(o, l) => (o, l, None),
            Self::Seeded(p, o, l) => (o, l, Some(*p)),
        }
    }

    /// The loop pattern `q` of `c` is the step of ([`NOT_A_STEP`]: none); the seeded pattern
    /// is loop 0's.
    pub(super) fn step_loop(&self, c: &CommunicationAnalysis, q: usize) -> u32 {
        match self {
            Self::Seeded(s, ..) if *s == q => 0,
            _ => c.step_loops.get(q).copied().unwrap_or(NOT_A_STEP),
        }
    }
}

/// The loop of a run where no loop was folded ([`fold_steps`] found no iteration adding
/// events): the loop pattern ([`loop_pattern`]), and the rank's occurrences with, on each of
/// its ranks, every exact copy of its events there that is made of whole occurrences put in
/// their place as an iteration of loop 0 (a step the parse cut into two occurrences is one
/// iteration; a copy an occurrence crosses is not cut out of it).
pub(super) fn seeded_loop(
    events: &Events,
    occurrences: &[Vec<(u32, u32)>],
    c: &CommunicationAnalysis,
) -> Option<(usize, Occurrences, Vec<Vec<u32>>)> {
    let p = loop_pattern(c, &[])?;
    let (occ, flags) = seed_copies(events, occurrences, c, p);
    Some((p, occ, flags))
}

/// [`seeded_loop`] for the loop pattern `p`: the occurrences with its exact copies made of
/// whole occurrences put in as iterations of loop 0, and the loop of each occurrence.
pub(super) fn seed_copies(
    events: &Events,
    occurrences: &[Vec<(u32, u32)>],
    c: &CommunicationAnalysis,
    p: usize,
) -> (Occurrences, Vec<Vec<u32>>) {
    let mut occ: Occurrences = occurrences.to_vec();
    let mut flags: Vec<Vec<u32>> = occurrences.iter().map(|o| vec![NOT_A_STEP; o.len()]).collect();
    for (&r, body) in &c.patterns[p].events {
        let r = r as usize;
        let old = &occurrences[r];
        // Whether an occurrence runs across the boundary before event `x`.
        let crosses = |x: u32| {
            let i = old.partition_point(|o| o.1 <= x);
            i < old.len() && old[i].0 < x
        };
        let m = body.len() as u32;
        let pieces: Vec<(u32, u32, u32)> = exact_copies(&events.ranks[r].symbols, body.ids())
            .into_iter()
            .filter(|&s| !crosses(s) && !crosses(s + m))
            .map(|s| (s, s + m, 0))
            .collect();
        (occ[r], flags[r]) = merged_pieces(&occurrences[r], &flags[r], &pieces);
    }
    (occ, flags)
}

/// Whether `a` is a subsequence of `b` (in order, not necessarily contiguous).
pub(super) fn is_subsequence(a: &[u32], b: &[u32]) -> bool {
    let mut it = b.iter();
    a.iter().all(|x| it.any(|y| y == x))
}

/// A rank's occurrences with `new` pieces `(start, end, loop)` (sorted, disjoint) put in place
/// of the occurrences they overlap.
pub(super) fn merged_pieces(
    old: &[(u32, u32)],
    old_loops: &[u32],
    new: &[(u32, u32, u32)],
) -> (Vec<(u32, u32)>, Vec<u32>) {
    let mut occ = Vec::with_capacity(old.len() + new.len());
    let mut fl = Vec::with_capacity(old.len() + new.len());
    let mut k = 0;
    for (&o, &l) in old.iter().zip(old_loops) {
        while k < new.len() && new[k].1 <= o.0 {
            occ.push((new[k].0, new[k].1));
            fl.push(new[k].2);
            k += 1;
        }
        if k < new.len() && new[k].0 < o.1 {
            continue;
        }
        occ.push(o);
        fl.push(l);
    }
    for n in &new[k..] {
        occ.push((n.0, n.1));
        fl.push(n.2);
    }
    (occ, fl)
}

/// The Knuth–Morris–Pratt prefix function of `body`: for each `i`, the length of the longest
/// proper prefix of `body[..=i]` that is also its suffix. O(|body|).
pub(super) fn prefix_function(body: &[u32]) -> Vec<usize> {
    let mut fail = vec![0usize; body.len()];
    let mut k = 0;
    for i in 1..body.len() {
        while k > 0 && body[i] != body[k] {
            k = fail[k - 1];
        }
        if body[i] == body[k] {
            k += 1;
        }
        fail[i] = k;
    }
    fail
}

/// Starts of the non-overlapping exact copies of `body` in `seq`, left to right (Knuth–Morris–
/// Pratt, O(|seq| + |body|)).
pub(super) fn exact_copies(seq: &[u32], body: &[u32]) -> Vec<u32> {
    copies_of(seq, body, false)
}

/// Starts of the exact copies of `body` in `seq`, left to right, overlapping ones included when
/// `overlapping` (else each copy starts after the last ended); none when `body` is empty.
///
/// Candidates are compared directly first (a loop's copies lie back to back, so most of the
/// scan jumps a whole body at a time and compares it with one `memcmp`). The comparisons are
/// charged to a budget of `4·|seq| + |body|` symbols; past it Knuth–Morris–Pratt scans the
/// rest, so the worst case stays O(|seq| + |body|) (a body like `aaab` in `aaaa…`). The copies
/// are the same either way: the leftmost copy, then the leftmost starting at or after where
/// the last one began (`overlapping`) or ended.
pub(super) fn copies_of(seq: &[u32], body: &[u32], overlapping: bool) -> Vec<u32> {
    let m = body.len();
    let mut out = Vec::new();
    if m == 0 || seq.len() < m {
        return out;
    }
    /// Symbols compared one by one before the rest of a candidate is compared at once.
    const HEAD: usize = 8;
    let head = m.min(HEAD);
    let mut budget = 4 * seq.len() + m;
    let last = seq.len() - m;
    let mut i = 0;
    while i <= last {
        if seq[i] != body[0] {
            i += 1;
            continue;
        }
        let (cost, found) = if seq[i..i + head] != body[..head] {
            (head, false)
        } else {
            (m, seq[i + head..i + m] == body[head..])
        };
        if found {
            out.push(i as u32);
        }
        let next = if found && !overlapping { i + m } else { i + 1 };
        match budget.checked_sub(cost) {
            Some(left) => budget = left,
            None => {
                let rest = kmp_copies(&seq[next..], body, overlapping);
                out.extend(rest.into_iter().map(|s| s + next as u32));
                return out;
            }
        }
        i = next;
    }
    out
}

/// [`copies_of`] by Knuth–Morris–Pratt alone, O(|seq| + |body|).
fn kmp_copies(seq: &[u32], body: &[u32], overlapping: bool) -> Vec<u32> {
    let m = body.len();
    let mut out = Vec::new();
    if m == 0 {
        return out;
    }
    let fail = prefix_function(body);
    let mut j = 0;
    for (i, &x) in seq.iter().enumerate() {
        while j > 0 && x != body[j] {
            j = fail[j - 1];
        }
        if x == body[j] {
            j += 1;
        }
        if j == m {
            out.push((i + 1 - m) as u32);
            j = if overlapping { fail[m - 1] } else { 0 };
        }
    }
    out
}

/// Ends (exclusive, relative to `gap`) of the greedy in-order embeddings of `body` in `gap`,
/// one after the other: the `k`-th ends where the `k`-th copy of `body` is complete at the
/// earliest, so their number is the largest `n` with `body^n` a subsequence of `gap`. O(|gap|).
#[cfg(test)]
fn embeddings(gap: &[u32], body: &[u32]) -> Vec<u32> {
    let mut ends = Vec::new();
    let mut from = 0;
    while let Some(e) = first_embedding(&gap[from as usize..], body) {
        from += e;
        ends.push(from);
    }
    ends
}

/// The end (exclusive) of the greedy embedding of `body` in `gap`: where a copy of `body` is
/// complete at the earliest. Taken one after the other from each end (`embeddings`, tested
/// against a brute force), the ends give the largest number of disjoint copies. O(end).
fn first_embedding(gap: &[u32], body: &[u32]) -> Option<u32> {
    let mut j = 0;
    for (i, &x) in gap.iter().enumerate() {
        if body.get(j) == Some(&x) {
            j += 1;
            if j == body.len() {
                return Some(i as u32 + 1);
            }
        }
    }
    None
}

/// Per pattern, its instances' parts `(rank, first event, last event)`, sorted.
pub(super) fn instance_parts(c: &CommunicationAnalysis) -> Vec<Vec<(u32, u32, u32)>> {
    let mut parts: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); c.patterns.len()];
    for inst in &c.instances {
        if let Some(list) = parts.get_mut(inst.pattern as usize) {
            list.extend(inst.parts.iter().map(|p| (p.rank, p.first_event, p.last_event)));
        }
    }
    for list in &mut parts {
        list.sort_unstable();
    }
    parts
}

/// A loop: some rank runs three of the pattern's parts back to back (sorted parts, as
/// [`instance_parts`] gives them).
pub(super) fn is_looped(list: &[(u32, u32, u32)]) -> bool {
    let mut adjacent = 0;
    for w in list.windows(2) {
        adjacent = if w[0].0 == w[1].0 && w[0].2 + 1 == w[1].1 {
            adjacent + 1
        } else {
            0
        };
        if adjacent >= 2 {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{embeddings, exact_copies, short_unit};

    /// The copies (direct comparison, Knuth–Morris–Pratt past its budget) against a naive
    /// left-to-right scan, overlapping or not, on random strings over small alphabets: bodies
    /// that overlap themselves, bodies longer than the directly compared head, and runs of one
    /// symbol that exhaust the budget (`aaab` in `aaaa…`) included.
    #[test]
    fn exact_copies_match_a_naive_scan() {
        use super::{copies_of, kmp_copies};
        let mut state = 11u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % n) as u32
        };
        let naive = |seq: &[u32], body: &[u32], overlapping: bool| {
            let m = body.len();
            let mut out = Vec::new();
            let mut i = 0;
            while i + m <= seq.len() {
                if seq[i..i + m] == body[..] {
                    out.push(i as u32);
                    i += if overlapping { 1 } else { m };
                } else {
                    i += 1;
                }
            }
            out
        };
        let mut budget_spent = 0;
        fn random(next: &mut impl FnMut(u64) -> u32, len: usize, alphabet: u64) -> Vec<u32> {
            (0..len).map(|_| next(alphabet)).collect()
        }
        for round in 0..4000 {
            let (seq, body) = match round % 4 {
                0 => {
                    let (len, m) = (next(40) as usize, 1 + next(4) as usize);
                    (random(&mut next, len, 3), random(&mut next, m, 3))
                }
                1 => {
                    let (len, m) = (next(200) as usize, 1 + next(20) as usize);
                    (random(&mut next, len, 2), random(&mut next, m, 2))
                }
                2 => {
                    // Mostly one symbol, a different last one: every candidate nearly matches.
                    let (len, alphabet, m) = (next(400) as usize, 1 + next(2) as u64, 9 + next(30) as usize);
                    let mut body = vec![0; m];
                    body[m - 1] = 1;
                    (random(&mut next, len, alphabet), body)
                }
                _ => {
                    // `0^k 1 0^k` in blocks `0^j 1` with j near k: copies overlap by k zeros.
                    let k = 4 + next(9) as usize;
                    let mut seq = Vec::new();
                    while seq.len() < 300 {
                        let j = k - 1 + next(3) as usize;
                        seq.extend(std::iter::repeat_n(0, j));
                        seq.push(1);
                    }
                    (seq, [vec![0; k], vec![1], vec![0; k]].concat())
                }
            };
            for overlapping in [false, true] {
                let want = naive(&seq, &body, overlapping);
                assert_eq!(
                    copies_of(&seq, &body, overlapping),
                    want,
                    "{seq:?} {body:?} {overlapping}"
                );
                assert_eq!(
                    kmp_copies(&seq, &body, overlapping),
                    want,
                    "{seq:?} {body:?} {overlapping}"
                );
            }
            if overlapping_scan_over_budget(&seq, &body) {
                budget_spent += 1;
            }
            assert_eq!(exact_copies(&seq, &body), naive(&seq, &body, false));
        }
        // The fallback ran: in some rounds the overlapping scan's comparisons exceed the budget.
        assert!(budget_spent > 100, "{budget_spent}");

        /// Whether the overlapping scan (every candidate compared) runs past its budget.
        fn overlapping_scan_over_budget(seq: &[u32], body: &[u32]) -> bool {
            let m = body.len();
            if m == 0 || seq.len() < m {
                return false;
            }
            let head = m.min(8);
            let cost: usize = (0..=seq.len() - m)
                .filter(|&i| seq[i] == body[0])
                .map(|i| if seq[i..i + head] == body[..head] { m } else { head })
                .sum();
            cost > 4 * seq.len() + m
        }
    }

    /// The greedy embeddings against a brute force over every cut of the gap into pieces that
    /// each hold the body as a subsequence.
    #[test]
    fn embeddings_count_the_most_whole_bodies() {
        fn subseq(b: &[u32], g: &[u32]) -> bool {
            let mut it = g.iter();
            b.iter().all(|x| it.any(|y| y == x))
        }
        // Most pieces each holding `body`, by brute force over the first cut.
        fn most(g: &[u32], body: &[u32]) -> usize {
            (1..=g.len())
                .filter(|&e| subseq(body, &g[..e]))
                .map(|e| 1 + most(&g[e..], body))
                .max()
                .unwrap_or(0)
        }
        let body = [1, 2, 1, 3];
        let mut state = 7u64;
        for _ in 0..300 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = ((state >> 33) % 13) as usize;
            let gap: Vec<u32> = (0..n)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((state >> 33) % 4) as u32
                })
                .collect();
            let ends = embeddings(&gap, &body);
            assert_eq!(ends.len(), most(&gap, &body), "{gap:?}");
            let mut from = 0;
            for &e in &ends {
                assert!(subseq(&body, &gap[from as usize..e as usize]), "{gap:?} {ends:?}");
                from = e;
            }
        }
        // A re-neighbouring step of LAMMPS (rank 0 of 8, shortened): the body once, in order,
        // with extra exchanges before it.
        let (r4, s4, r2, s2, a) = (0, 1, 2, 3, 9);
        let step = [s4, r4, r4, s4, s2, r2, r2, s2, r4, s4, r2, s2, a];
        assert_eq!(embeddings(&step, &[r4, s4, r2, s2, a]), vec![13]);
        // Thermo output between two steps: no iteration.
        assert!(embeddings(&[a, a, a, a, a], &[r4, s4, r2, s2, a]).is_empty());
    }

    /// Steps lacking the same messages in a row (GROMACS 16 ranks): found at the cut, and not
    /// where the repeat is collectives alone, a loop inside the body, or no subsequence of it.
    #[test]
    fn short_units_are_steps_lacking_messages_in_a_row() {
        // Messages 1-6, collectives 9 (an Alltoall) and 8 (an Allreduce).
        let collectives = [8, 9];
        let body = [1, 2, 3, 4, 5, 6, 9, 9];
        let short = [1, 2, 5, 6, 9, 9]; // the exchange 3-4 skipped
        let mut seq: Vec<u32> = Vec::new();
        for _ in 0..3 {
            seq.extend_from_slice(&short);
        }
        seq.extend_from_slice(&body);
        let bc = [9, 9];
        assert_eq!(short_unit(&seq, &body, &bc, &collectives, 0, seq.len() as u32), Some(6));
        // Once only: no repeat, no unit.
        let once: Vec<u32> = short.iter().chain(&body).copied().collect();
        assert_eq!(short_unit(&once, &body, &bc, &collectives, 0, once.len() as u32), None);
        // A stretch lacking a collective is no step of the body.
        let no_coll = [1, 2, 3, 4, 5, 6, 9, 1, 2, 3, 4, 5, 6, 9];
        assert_eq!(short_unit(&no_coll, &body, &bc, &collectives, 0, 14), None);
        // Collectives alone (thermo output's reductions) hold no message.
        let body2 = [1, 2, 8, 3, 4];
        let thermo = [8, 8, 8, 8, 8, 1, 2, 8, 3, 4];
        assert_eq!(short_unit(&thermo, &body2, &[8], &collectives, 0, 10), None);
        // A body of two like steps: one step repeated is the body's own loop, not a short step.
        let two = [1, 2, 9, 1, 2, 9];
        let steps = [1, 2, 9, 1, 2, 9, 1, 2, 9, 1, 2, 9];
        assert_eq!(short_unit(&steps, &two, &[9, 9], &collectives, 0, 12), None);
        // A body without collectives has no short steps.
        assert_eq!(short_unit(&[1, 2, 1, 2], &[1, 2, 3], &[], &collectives, 0, 4), None);
    }
}
