//! Steps that lack the step's collectives, several in a row.
//!
//! A rank never skips a collective alone, but a program may skip one on every rank: LAMMPS
//! with `neigh_modify delay 5` checks whether to rebuild its neighbour lists (an
//! `MPI_Allreduce`) only from the fifth step after a rebuild, so the four steps after each
//! rebuild are the step's messages without its reduction. Having no reduction of their own,
//! they join the rebuild step when the chain split ([`super::chains`]) places events: one
//! iteration of five or six steps (held-out LAMMPS crack, 8 ranks, 5,000 steps, 101 rebuilds:
//! 93 such iterations, 4,587 occurrences for 5,001 steps).
//!
//! An iteration of a step pattern in another form than the pattern's own is cut into a run of
//! exact copies of the own form's messages (the form without its collectives, at its rotation)
//! in a row, with nothing but collectives between them (LAMMPS's minimiser, held-out
//! `indent.min` on 6 ranks: a line search's first evaluation is followed by three reductions,
//! the next by four or more; where the steps were cut at the collective period those two were
//! one piece), and the stretches before and after the run: each copy is a step, the stretch
//! before it one more when it holds the messages in order or ends with more than half of them,
//! the last ones, exactly (a rebuild step whose exchange and borders replace its first halo
//! exchange), else part of the first copy, and the stretch after the run likewise with the
//! first ones and the last copy (ANY_SOURCE receives in another order, held-out GetDP, hold
//! most messages but not in order, so the exact end is asked for). The run cut is the one
//! that makes most steps, then the longest: messages that repeat within themselves (LAMMPS
//! shear: forward and reverse exchanges with the same symbols) have copies at several phases,
//! and only one leaves the rebuild step its messages. At least two steps
//! are asked for, one of them a copy: a stretch holding the messages without an exact copy
//! beside it is one step in another form. Every rank must cut the instance into as many steps
//! (a collective skipped is skipped everywhere). The pieces become iterations of the loop,
//! construction runs again, and the cut is kept when the steps then cover no fewer events net
//! of those left in instances seen once. An instance of another pattern over the step's ranks
//! whose every part is the own form less some of its collectives, all its messages in order,
//! is a step too (LAMMPS peptide: once per rebuild, a step lacking both of its reductions), and
//! one whose every part is a run of such steps is as many steps (LAMMPS shear: the quiet steps
//! after a rebuild, cut off from the next check by a fix's reduction).
//! Where the own form's copies cut no instance alike on every rank, up to [`OTHER_FORMS`] other
//! forms seen twice or more are tried in turn, most frequent first (LAMMPS `friction`, 6 ranks:
//! on two ranks a swap sends once, not twice, in the steps after a rebuild, which are the
//! second form there; 1,880 → 1,993 steps of 2,000). On the analysis kept only
//! ([`fold_lacking_collectives_between`]), last, copies of the own form's messages with
//! collectives anywhere inside or between them (LAMMPS `obstacle`, 4 ranks: its step reduces
//! between its two halo exchanges, so a rebuild glued to the next step held no contiguous copy;
//! 2,313 → 2,498 of 2,500).
//! Where no loop was folded yet, the loop pattern's exact copies are seeded as its iterations
//! first. The stage runs after the chain split and again after the collective-period cut.
//! O(events of the variants' instances and of the instances over the step's ranks) plus one
//! construction.

use super::fold::{FoldInput, Folded};
use super::steps::{
    copies_of, instance_parts, is_subsequence, step_occurrences, steps_before, steps_net_of_one_off, with_pieces,
    LoopsOrSeeded, NOT_A_STEP,
};

/// How many of a step pattern's other forms (most frequent first) an iteration is tried
/// against when copies of the own form's messages do not cut it.
const OTHER_FORMS: usize = 3;

/// The iterations of step patterns that hold steps lacking the step's collectives cut into
/// those steps ([module docs](self)); `None` when none does or the cut explains less.
pub(super) fn fold_lacking_collectives(input: &FoldInput, state: &Folded) -> Option<Folded> {
    fold(input, state, false)
}

/// [`fold_lacking_collectives`] where, last, copies of the own form's messages may also have
/// collectives inside or between them ([`split_between_collectives`]): run once, on the
/// analysis kept ([`super::trailing_collectives::join_to_steps`]), since inside each parse the
/// steps it adds change which parse wins (held-out LAMMPS `indent`, 4 ranks: the first parse
/// then won, and its rebuilds glued to their quiet steps left 2,795 steps of 3,000).
pub(super) fn fold_lacking_collectives_between(input: &FoldInput, state: &Folded) -> Option<Folded> {
    fold(input, state, true)
}

/// [`fold_lacking_collectives`], or with `between` [`fold_lacking_collectives_between`].
fn fold(input: &FoldInput, state: &Folded, between: bool) -> Option<Folded> {
    let events = input.events;
    let c = &state.communication;
    // No loop folded yet (the parse gave the loop's forms as one pattern's variants): the
    // loop pattern's exact copies are its iterations, as [`super::steps::fold_lacking`] seeds.
    let looped = LoopsOrSeeded::of(events, state)?;
    let (occurrences, loops, seed) = looped.parts();
    let step_loop = |q: usize| looped.step_loop(c, q);
    let mut pieces: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); occurrences.len()];
    let mut any = false;
    // Per pattern, its instances' parts, listed once where quiet runs are looked for.
    let mut step_parts: Option<Vec<Vec<(u32, u32, u32)>>> = None;
    for (q, p) in c.patterns.iter().enumerate() {
        let l = step_loop(q);
        if l == NOT_A_STEP {
            continue;
        }
        // In the innermost-first retry; on the analysis kept, after a parse that did not look
        // for them, only runs beside a barrier ([`quiet_runs_beside`]).
        if input.innermost || between {
            let parts = step_parts.get_or_insert_with(|| instance_parts(c));
            let at_barrier = !input.innermost;
            any |= quiet_runs_beside(events, (occurrences, loops), p, &parts[q], l, at_barrier, &mut pieces);
        }
        if p.variants.is_empty() {
            continue;
        }
        // Each rank's collectives, and the own form's messages there.
        let collectives: std::collections::BTreeMap<usize, &[u32]> = p
            .events
            .keys()
            .map(|&r| (r as usize, events.ranks[r as usize].collective_symbols()))
            .collect();
        // A form's messages on rank `r`, and how many collectives it holds before the first.
        let messages_and_lead = |form: &std::collections::BTreeMap<u32, super::EventNames>, r: usize| {
            let collective = &collectives[&r];
            form.get(&(r as u32)).map_or((Vec::new(), 0), |names| {
                let ids = names.ids();
                let lead = ids.iter().take_while(|x| collective.binary_search(x).is_ok()).count();
                let messages = messages_among(ids, collective).collect();
                (messages, lead)
            })
        };
        let own: std::collections::BTreeMap<usize, Vec<u32>> = p
            .events
            .keys()
            .map(|&r| (r as usize, messages_and_lead(&p.events, r as usize).0))
            .collect();
        let leads: std::collections::BTreeMap<usize, usize> = p
            .events
            .keys()
            .map(|&r| (r as usize, messages_and_lead(&p.events, r as usize).1))
            .collect();
        // One part of an instance cut into steps lacking collectives, copies of the messages
        // `body` (`lead` collectives before the first in the form).
        let split_with = |part: &super::construct::InstancePart, body: &[u32], lead: usize| {
            let r = part.rank as usize;
            let span = (part.first_event, part.last_event + 1);
            let collective = collectives.get(&r).copied().unwrap_or(&[]);
            split_lacking_collectives(&events.ranks[r].symbols, span, body, collective, lead)
        };
        let split_part = |part: &super::construct::InstancePart| {
            let r = part.rank as usize;
            let body = own.get(&r).map_or(&[][..], Vec::as_slice);
            split_with(part, body, leads.get(&r).copied().unwrap_or(0))
        };
        // The other forms seen twice or more, most frequent first, whose copies a rank's quiet
        // steps may be where the own form's are not (LAMMPS `friction` on 6 ranks: the steps
        // after a rebuild are its second form on two ranks, a swap there sending once, not
        // twice).
        let others: Vec<&std::collections::BTreeMap<u32, super::EventNames>> = p
            .variants
            .iter()
            .skip(1)
            .filter(|v| v.occurrences >= 2)
            .take(OTHER_FORMS)
            .map(|v| &v.events)
            .collect();
        for inst in c.instances.iter().filter(|i| i.pattern as usize == q && i.variant != 0) {
            let cut_by = |split: &dyn Fn(&super::construct::InstancePart) -> Vec<(u32, u32)>| {
                let cut: Vec<(usize, Vec<(u32, u32)>)> = inst
                    .parts
                    .iter()
                    .map(|part| (part.rank as usize, split(part)))
                    .collect();
                let k = cut.first().map_or(0, |(_, s)| s.len());
                (k >= 2 && cut.iter().all(|(_, s)| s.len() == k)).then_some(cut)
            };
            let cut = cut_by(&split_part)
                .or_else(|| {
                    others.iter().find_map(|form| {
                        cut_by(&|part: &super::construct::InstancePart| {
                            let (body, lead) = messages_and_lead(form, part.rank as usize);
                            split_with(part, &body, lead)
                        })
                    })
                })
                .or_else(|| {
                    if !between {
                        return None;
                    }
                    // Last, copies of the own form's messages with collectives anywhere
                    // between them (LAMMPS `obstacle` on 4 ranks: its step reduces between
                    // its forward and reverse halo exchanges, so a rebuild step glued to the
                    // next step holds no contiguous copy).
                    cut_by(&|part: &super::construct::InstancePart| {
                        let r = part.rank as usize;
                        let body = own.get(&r).map_or(&[][..], Vec::as_slice);
                        let collective = collectives.get(&r).copied().unwrap_or(&[]);
                        let span = (part.first_event, part.last_event + 1);
                        let lead = leads.get(&r).copied().unwrap_or(0);
                        split_between_collectives(&events.ranks[r].symbols, span, body, collective, lead)
                    })
                });
            let Some(cut) = cut else {
                continue;
            };
            any = true;
            for (r, split) in cut {
                pieces[r].extend(split.into_iter().map(|(s, e)| (s, e, l)));
            }
        }
        // Steps lacking collectives on every rank of the step that are an instance of their
        // own (LAMMPS: a step lacking both of its reductions once per rebuild; or the steps
        // between a rebuild and its next check, cut off by a fix's reduction): every part is
        // one or more stretches, each holding exactly the own form's messages, in order, as a
        // subsequence of the own form, as many on every rank.
        let quiet_one = |r: usize, (a, b): (u32, u32), whole: bool| {
            let seq = &events.ranks[r].symbols[a as usize..b as usize];
            let (Some(body), Some(form), Some(collective)) =
                (own.get(&r), p.events.get(&(r as u32)), collectives.get(&r))
            else {
                return false;
            };
            // A step of collectives alone has no messages to recognise it by.
            !body.is_empty()
                && (seq.len() < form.len() || !whole)
                && messages_among(seq, collective).eq(body.iter().copied())
                && is_subsequence(seq, form.ids())
        };
        let quiet = |part: &super::construct::InstancePart| -> Option<Vec<(u32, u32)>> {
            let r = part.rank as usize;
            let span = (part.first_event, part.last_event + 1);
            if quiet_one(r, span, true) {
                return Some(vec![span]);
            }
            let split = split_part(part);
            // A stretch's messages, and the own form's on the rank.
            let body = own.get(&r).map_or(&[][..], Vec::as_slice);
            let messages_in = |(a, b): (u32, u32)| -> Vec<u32> {
                let collective = collectives.get(&r).copied().unwrap_or(&[]);
                messages_among(&events.ranks[r].symbols[a as usize..b as usize], collective).collect()
            };
            // On the analysis kept, the first stretch may be the rebuild step the quiet steps
            // follow: all the own form's messages in order among more (LAMMPS `gayberne`, 8
            // ranks, its neighbour lists checked from the tenth step after a rebuild: a
            // rebuild and the steps up to its first check were an instance of their own; 946
            // → 975 steps of 1,000). And the last may be the beginning of the next step, more
            // than half its messages (the instance ends inside that step, at the own form's
            // rotation), or a whole quiet step and then that beginning (LAMMPS `peri`, 4 ranks:
            // its one rebuild and eight quiet steps, 189 → 198 steps of 200).
            let rebuild = |piece| {
                let m = messages_in(piece);
                !body.is_empty() && m.len() > body.len() && is_subsequence(body, &m)
            };
            let begins = |piece| {
                let m = messages_in(piece);
                let after_copy = m.starts_with(body) && body.starts_with(&m[body.len()..]);
                after_copy || (2 * m.len() > body.len() && body.starts_with(&m))
            };
            let last = split.len().saturating_sub(1);
            let steps = split.iter().enumerate().all(|(k, &piece)| {
                quiet_one(r, piece, false)
                    || (between && k == 0 && rebuild(piece))
                    || (between && k == last && k > 0 && begins(piece))
            });
            (split.len() >= 2 && steps).then_some(split)
        };
        for inst in c.instances.iter().filter(|i| {
            step_loop(i.pattern as usize) == NOT_A_STEP
                && i.parts.len() == p.ranks.len()
                && i.parts.iter().zip(&p.ranks).all(|(part, &r)| part.rank == r)
        }) {
            let Some(cut) = inst.parts.iter().map(quiet).collect::<Option<Vec<_>>>() else {
                continue;
            };
            if cut.iter().any(|s| s.len() != cut[0].len()) {
                continue;
            }
            any = true;
            for (part, split) in inst.parts.iter().zip(cut) {
                pieces[part.rank as usize].extend(split.into_iter().map(|(a, b)| (a, b, l)));
            }
        }
    }
    if !any {
        return None;
    }
    // Before: seeded, the loop pattern's occurrences and events are the steps.
    let (net_before, steps_before) = steps_before(c, seed);
    let folded = with_pieces(input, occurrences, loops, &mut pieces);
    let fc = &folded.communication;
    (steps_net_of_one_off(fc) >= net_before && step_occurrences(fc) > steps_before).then_some(folded)
}

/// Runs of quiet steps at the loop's ends: on each rank of step pattern `p` (loop `l`, its
/// instances' parts `step_parts` as [`instance_parts`] lists them), the back
/// to back exact copies of its own form's messages (the form less its collectives, at its
/// rotation) in no iteration of any loop and no step, whose run ends where the rank's first
/// step begins or begins where its last step ends, are steps lacking the step's collectives
/// (LAMMPS `peri`: the first nine steps, before a fix reduces, were cut by the parse into single
/// exchanges, each an instance of two ranks). Added to `pieces`; `true` when any was; the
/// fold's rule decides whether they are kept. Only in the innermost-first retry, whose parse
/// leaves such runs as pairs of messages: taken in the first parse they kept the retry from
/// being tried (LAMMPS `threebody`, four runs: 402 steps of 400 became 385). With
/// `at_barrier` (on the analysis kept, where the parse was not the retry), only a run that a
/// barrier directly precedes (before the first step) or follows (after the last): a stage's
/// first steps, which LAMMPS with `neigh_modify delay 5` runs without the rebuild check after
/// the `run`'s barrier (held-out `airebo`: 46 → 50 steps of 50; `msst` 192 → 201 of 200,
/// `atm` 24 → 25 of 25); elsewhere such copies can be another solver's exchanges beside the
/// loop (OpenFOAM `cavity`: the smoother's halo exchanges beside the CG iterations, 86 more
/// "steps"). O(events of the step's ranks).
#[allow(clippy::too_many_arguments)]
fn quiet_runs_beside(
    events: &super::Events,
    (occurrences, loops): super::steps::OccurrencesAndLoops,
    p: &super::CommunicationPattern,
    step_parts: &[(u32, u32, u32)],
    l: u32,
    at_barrier: bool,
    pieces: &mut [Vec<(u32, u32, u32)>],
) -> bool {
    let barriers = if at_barrier {
        events.barrier_symbols()
    } else {
        Vec::new()
    };
    let mut any = false;
    for (&r, form) in &p.events {
        // The rank's parts of the step pattern's instances (any form), sorted.
        let here = step_parts.partition_point(|x| x.0 < r)..step_parts.partition_point(|x| x.0 <= r);
        let parts: Vec<(u32, u32)> = step_parts[here]
            .iter()
            .map(|&(_, first, last)| (first, last + 1))
            .collect();
        let r = r as usize;
        let collective = events.ranks[r].collective_symbols();
        let body: Vec<u32> = messages_among(form.ids(), collective).collect();
        if body.is_empty() || body.len() == form.len() {
            continue;
        }
        let (occ, fl) = (&occurrences[r], &loops[r]);
        let m = body.len() as u32;
        // Whether [s, e) overlaps an iteration of any loop or a step of any form.
        let in_loop = |s: u32, e: u32| {
            let i = occ.partition_point(|o| o.1 <= s);
            let j = parts.partition_point(|o| o.1 <= s);
            occ[i..]
                .iter()
                .zip(&fl[i..])
                .take_while(|(o, _)| o.0 < e)
                .any(|(_, &x)| x != NOT_A_STEP)
                || parts.get(j).is_some_and(|o| o.0 < e)
        };
        // The rank's first step's begin and last step's end: iterations of `l` and parts of
        // the step pattern's instances.
        let iterations = occ.iter().zip(fl).filter(|(_, &x)| x == l).map(|(o, _)| *o);
        let first = iterations.clone().map(|o| o.0).chain(parts.iter().map(|o| o.0)).min();
        let last = iterations.map(|o| o.1).chain(parts.iter().map(|o| o.1)).max();
        let copies: Vec<u32> = copies_of(&events.ranks[r].symbols, &body, false)
            .into_iter()
            .filter(|&s| !in_loop(s, s + m))
            .collect();
        let symbols = &events.ranks[r].symbols;
        let barrier_at = |i: Option<u32>| {
            !at_barrier
                || i.and_then(|i| symbols.get(i as usize))
                    .is_some_and(|&x| barriers[x as usize])
        };
        for run in copies.chunk_by(|a, b| b - a == m) {
            let (a, b) = (run[0], run[run.len() - 1] + m);
            let leading = first == Some(b) && barrier_at(a.checked_sub(1));
            let trailing = last == Some(a) && barrier_at(Some(b));
            if leading || trailing {
                any = true;
                pieces[r].extend(run.iter().map(|&s| (s, s + m, l)));
            }
        }
    }
    any
}

/// Steps lacking some of the body's collectives, back to back at `from` (ending by `to`): the
/// length of the step and how many run (at least two; `None` otherwise). A step is a stretch
/// `V`, a subsequence of `body` shorter than it, holding all of the body's messages (`V`
/// without its collectives, symbols in the sorted `collectives`, equals `messages`), followed
/// by exact copies of itself: LAMMPS's steps after a rebuild lack the rebuild check's
/// reduction but keep another one (a fix's), so `V` is the body less one collective. Where
/// [`super::steps`] cuts a gap between two copies of the body. O(|body|²) per call.
pub(super) fn quiet_steps(
    seq: &[u32],
    body: &[u32],
    messages: &[u32],
    collectives: &[u32],
    (from, to): (u32, u32),
) -> Option<(u32, u32)> {
    if messages.is_empty() {
        return None;
    }
    let window = &seq[from as usize..to as usize];
    (messages.len()..body.len())
        .filter(|&len| 2 * len <= window.len())
        .find(|&len| {
            let v = &window[..len];
            v == &window[len..2 * len]
                && messages_among(v, collectives).eq(messages.iter().copied())
                && is_subsequence(v, body)
        })
        .map(|len| {
            let v = &window[..len];
            let runs = window.chunks_exact(len).take_while(|c| *c == v).count();
            (len as u32, runs as u32)
        })
}

/// The iteration `[start, end)` of `seq` cut into steps lacking the body's collectives
/// ([module docs](self)); `messages` is the body without its collectives, `collectives` the
/// rank's collective symbols (sorted) and `lead` how many collectives the body holds before
/// its first message. Copies of the messages run "in a row" when only collectives lie between
/// them (LAMMPS's minimiser: a line-search force evaluation followed by three reductions, the
/// next by four); those between two copies go to the earlier copy, but the last `lead` to the
/// later one. The iteration whole when no run of copies makes two steps. O(end − start +
/// |messages|), plus the collectives after each copy.
pub(super) fn split_lacking_collectives(
    seq: &[u32],
    (start, end): (u32, u32),
    messages: &[u32],
    collectives: &[u32],
    lead: usize,
) -> Vec<(u32, u32)> {
    let whole = vec![(start, end)];
    let m = messages.len() as u32;
    if m == 0 {
        return whole;
    }
    let piece = &seq[start as usize..end as usize];
    let n = piece.len();
    let mu = m as usize;
    // Where a copy of the messages starts, and from each such start the run of copies in a
    // row: how many and where the last ends (right to left, so each start is read once).
    let mut starts = vec![false; n];
    for o in copies_of(piece, messages, true) {
        starts[o as usize] = true;
    }
    let is_copy = |o: usize| starts.get(o).copied().unwrap_or(false);
    let mut run: Vec<(u32, usize)> = vec![(0, 0); n + 1];
    for o in (0..n).rev() {
        if !is_copy(o) {
            continue;
        }
        let mut q = o + mu;
        while q < n && collectives.binary_search(&piece[q]).is_ok() && !is_copy(q) {
            q += 1;
        }
        run[o] = if q < n && is_copy(q) {
            (run[q].0 + 1, run[q].1)
        } else {
            (1, o + mu)
        };
    }
    // The stretch before a run is a step of its own when it holds the messages in order, or
    // ends with more than half of them, the last ones, exactly (a rebuild step whose exchange
    // and borders replace its first halo exchange; glued to the first copy it would make a
    // piece of more than one and a half steps). The stretch after a run likewise, starting
    // with the first ones.
    let half = mu / 2 + 1;
    let before_from = subsequence_end(messages.iter(), piece.iter()).unwrap_or(usize::MAX);
    let after_to = subsequence_end(messages.iter().rev(), piece.iter().rev()).map_or(0, |k| n - k);
    let before_is_step = |o: usize| o >= before_from || (o >= half && piece[o - half..o] == messages[mu - half..]);
    let after_is_step = |e: usize| e <= after_to || (e + half <= n && piece[e..e + half] == messages[..half]);
    // The run that makes most steps, stretches before and after counted; then the longest run;
    // then the first. A body repeating within itself (LAMMPS shear: forward and reverse
    // exchanges with the same symbols) has copies at several phases: the one that leaves the
    // rebuild step its own messages is the cut.
    let steps_of = |o: usize| {
        let (count, after) = run[o];
        count as usize + usize::from(o > 0 && before_is_step(o)) + usize::from(after < n && after_is_step(after))
    };
    let Some(first) = (0..n)
        .filter(|&o| run[o].0 >= 1 && steps_of(o) >= 2)
        .max_by_key(|&o| (steps_of(o), run[o].0, std::cmp::Reverse(o)))
    else {
        return whole;
    };
    let mut copies: Vec<u32> = vec![first as u32];
    while let Some(&last) = copies.last() {
        if (copies.len() as u32) == run[first].0 {
            break;
        }
        let mut q = last as usize + mu;
        while !is_copy(q) {
            q += 1;
        }
        copies.push(q as u32);
    }
    let count = copies.len();
    let mut cuts: Vec<u32> = vec![start + copies[0]];
    for w in copies.windows(2) {
        let gap = w[1] - (w[0] + m);
        cuts.push(start + w[1] - gap.min(lead as u32));
    }
    let after = copies[count - 1] + m;
    cuts.push(start + after);
    // The stretch before the copies: a step of its own as above.
    if copies[0] > 0 {
        if before_is_step(copies[0] as usize) {
            cuts.insert(0, start);
        } else {
            cuts[0] = start;
        }
    }
    // And the stretch after them.
    if start + after < end {
        if after_is_step(after as usize) {
            cuts.push(end);
        } else {
            *cuts.last_mut().expect("two copies") = end;
        }
    }
    cuts.windows(2).map(|w| (w[0], w[1])).collect()
}

/// [`split_lacking_collectives`] on the iteration's messages alone (its collectives left out),
/// so that copies of `messages` may have collectives anywhere inside or between them; each cut
/// placed back before the message it falls on, the last `lead` of the collectives before that
/// message going with it, the others with the piece before. The iteration whole where that
/// makes fewer than two steps. O(end − start + |messages|).
pub(super) fn split_between_collectives(
    seq: &[u32],
    (start, end): (u32, u32),
    messages: &[u32],
    collectives: &[u32],
    lead: usize,
) -> Vec<(u32, u32)> {
    let at: Vec<u32> = (start..end)
        .filter(|&i| collectives.binary_search(&seq[i as usize]).is_err())
        .collect();
    let only: Vec<u32> = at.iter().map(|&i| seq[i as usize]).collect();
    let cut = split_lacking_collectives(&only, (0, only.len() as u32), messages, &[], 0);
    if cut.len() < 2 {
        return vec![(start, end)];
    }
    let mut bounds: Vec<u32> = cut[1..]
        .iter()
        .map(|&(j, _)| {
            let (here, before) = (at[j as usize], at[j as usize - 1]);
            here - (here - before - 1).min(lead as u32)
        })
        .collect();
    bounds.insert(0, start);
    bounds.push(end);
    bounds.windows(2).map(|w| (w[0], w[1])).collect()
}

/// The message symbols among `ids`: those not in the rank's `collective` symbols (sorted).
fn messages_among<'a>(ids: &'a [u32], collective: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
    ids.iter().copied().filter(|x| collective.binary_search(x).is_err())
}

/// How many items of `seq` a greedy embedding of `sub` (in order) takes: the shortest prefix
/// of `seq` holding `sub` as a subsequence; `None` when none does. O(|seq|).
fn subsequence_end<'a>(mut sub: impl Iterator<Item = &'a u32>, seq: impl Iterator<Item = &'a u32>) -> Option<usize> {
    let mut want = sub.next();
    for (i, x) in seq.enumerate() {
        match want {
            None => return Some(i),
            Some(w) if w == x => want = sub.next(),
            _ => {}
        }
        if want.is_none() {
            return Some(i + 1);
        }
    }
    want.is_none().then_some(0)
}

#[cfg(test)]
mod tests {
    use super::{quiet_steps, split_between_collectives, split_lacking_collectives};

    /// Body `7 1 2 8` (collectives 7, 8): `1 2 8` twice is two steps lacking `7`; `1 2` three
    /// times, three lacking both; one copy, a stretch lacking a message, or one with the
    /// collectives in another order is none.
    #[test]
    fn quiet_steps_are_the_body_less_some_collectives_repeated() {
        let (body, messages, collectives) = ([7, 1, 2, 8], [1, 2], [7, 8]);
        let q = |seq: &[u32]| quiet_steps(seq, &body, &messages, &collectives, (0, seq.len() as u32));
        assert_eq!(q(&[1, 2, 8, 1, 2, 8, 7]), Some((3, 2)));
        assert_eq!(q(&[1, 2, 1, 2, 1, 2, 7, 1, 2, 8]), Some((2, 3)));
        assert_eq!(q(&[1, 2, 8, 7, 1, 2]), None);
        assert_eq!(q(&[1, 8, 1, 8]), None);
        assert_eq!(q(&[8, 1, 2, 8, 1, 2]), None);
    }

    /// Messages `1 2`, a reduction `9`: a rebuild step `9 9 1 3 2 1 2`, four steps without the
    /// reduction, the next step's reduction at the end. Cut into the rebuild and four steps,
    /// the last with the reduction; one copy alone, or copies apart, are not cut.
    #[test]
    fn runs_of_the_messages_alone_are_steps() {
        let seq = [9, 9, 1, 3, 2, 1, 2, 1, 2, 1, 2, 1, 2, 9];
        let (a, b) = (0u32, seq.len() as u32);
        assert_eq!(
            split_lacking_collectives(&seq, (a, b), &[1, 2], &[9], 0),
            vec![(0, 5), (5, 7), (7, 9), (9, 11), (11, 14)]
        );
        // The stretch before the copies without the messages joins the first copy.
        let seq2 = [9, 3, 1, 2, 1, 2, 9];
        assert_eq!(
            split_lacking_collectives(&seq2, (0, 7), &[1, 2], &[9], 0),
            vec![(0, 4), (4, 7)]
        );
        // Offsets: a piece inside a longer sequence.
        let seq3 = [5, 5, 1, 2, 1, 2, 5];
        assert_eq!(
            split_lacking_collectives(&seq3, (2, 6), &[1, 2], &[5], 0),
            vec![(2, 4), (4, 6)]
        );
        // One copy and a stretch holding most of the messages (here all: there are two) is
        // two steps; one copy alone, or beside a stretch holding fewer, is whole.
        let split = |seq: &[u32], collectives: &[u32], lead| {
            split_lacking_collectives(seq, (0, seq.len() as u32), &[1, 2], collectives, lead)
        };
        assert_eq!(split(&[1, 2, 9, 1, 2], &[], 0), vec![(0, 2), (2, 5)]);
        assert_eq!(split(&[1, 2, 9, 1], &[], 0), vec![(0, 4)]);
        assert_eq!(split(&[9, 1, 2, 9], &[9], 0), vec![(0, 4)]);
        // Copies apart by collectives only (a force evaluation with three reductions, the
        // next with four): each copy a step, the collectives with the copy before them, or
        // the last `lead` of them with the copy after.
        assert_eq!(
            split(&[1, 2, 9, 9, 9, 1, 2, 9, 9, 9, 9], &[9], 0),
            vec![(0, 5), (5, 11)]
        );
        assert_eq!(split(&[9, 1, 2, 9, 9, 9, 1, 2, 9, 9], &[9], 1), vec![(0, 5), (5, 10)]);
    }

    /// Messages that repeat within themselves (`1 2 2 1` twice: LAMMPS shear's forward and
    /// reverse exchanges) have exact copies at two phases. A rebuild step `9 3 1 3 2` ending
    /// with the last seven of them, then two quiet steps: the copies that leave the rebuild
    /// its own messages are the cut (three steps), not the first copies found (two, the
    /// rebuild's tail glued to the first).
    #[test]
    fn self_overlapping_messages_are_cut_where_most_steps_hold_them() {
        let messages = [1, 2, 2, 1, 1, 2, 2, 1];
        let mut seq = vec![9, 3, 1, 3, 2];
        seq.extend_from_slice(&messages[1..]);
        seq.extend_from_slice(&messages);
        seq.extend_from_slice(&messages);
        assert_eq!(seq.len(), 28);
        assert_eq!(
            split_lacking_collectives(&seq, (0, 28), &messages, &[9], 0),
            vec![(0, 12), (12, 20), (20, 28)]
        );
        // Without the rebuild's tail the first copies are the cut, as before.
        let plain: Vec<u32> = [&[9, 3][..], &messages, &messages].concat();
        assert_eq!(
            split_lacking_collectives(&plain, (0, 18), &messages, &[9], 0),
            vec![(0, 10), (10, 18)]
        );
    }

    /// Messages `1 2 1 2` with the step's reduction `9` between its halves (`1 2 9 1 2`): a
    /// rebuild step (`3 4` first) glued to the next step holds no contiguous copy, but with
    /// the collectives left out two copies and the rebuild's stretch before them, which joins
    /// the first: two steps, cut before the second copy's first message, its reduction with
    /// it (lead 0: the reductions before the cut stay with the first piece). Copies far apart
    /// by messages are no run; one copy is whole.
    #[test]
    fn copies_with_collectives_inside_are_steps() {
        let seq = [3, 4, 1, 2, 9, 1, 2, 1, 2, 9, 1, 2];
        let split =
            |seq: &[u32], lead| split_between_collectives(seq, (0, seq.len() as u32), &[1, 2, 1, 2], &[9], lead);
        assert_eq!(split(&seq, 0), vec![(0, 7), (7, 12)]);
        let seq = [3, 4, 1, 2, 9, 1, 2, 9, 1, 2, 9, 1, 2];
        assert_eq!(split(&seq, 0), vec![(0, 8), (8, 13)]);
        assert_eq!(split(&seq, 1), vec![(0, 7), (7, 13)]);
        assert_eq!(split(&[1, 2, 9, 1, 2], 0), vec![(0, 5)]);
        // Inside a longer sequence: offsets kept.
        let seq = [5, 5, 1, 2, 9, 1, 2, 1, 2, 9, 1, 2, 5];
        assert_eq!(
            split_between_collectives(&seq, (2, 12), &[1, 2, 1, 2], &[5, 9], 0),
            vec![(2, 7), (7, 12)]
        );
    }
}
