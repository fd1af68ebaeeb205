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
//! An iteration of a step pattern in another form than the pattern's own is cut where, on
//! every rank, it holds at least two exact copies of the own form's messages (the form without
//! its collectives, at its rotation) in a row, with nothing but collectives between them
//! (LAMMPS's minimiser, held-out `indent.min` on 6 ranks: a line search's first evaluation is
//! followed by three reductions, the next by four or more; where the steps were cut at the
//! collective period those two were one piece): each copy is a step, the stretch before them
//! one more when it holds the messages in order (the rebuild step), else part of the first
//! copy, and the stretch after them likewise with the last. Every rank must cut the instance
//! into as many steps (a collective skipped is skipped everywhere). Two copies in a row are
//! asked for, as [`super::steps`] asks of steps lacking messages: one copy of the messages
//! inside a longer step is not evidence of a step. The pieces become iterations of the loop,
//! construction runs again, and the cut is kept when the steps then cover no fewer events net
//! of those left in instances seen once. An instance of another pattern over the step's ranks
//! whose every part is the own form less some of its collectives, all its messages in order,
//! is a step too (LAMMPS peptide: once per rebuild, a step lacking both of its reductions).
//! Where no loop was folded yet, the loop pattern's exact copies are seeded as its iterations
//! first. The stage runs after the chain split and again after the collective-period cut.
//! O(events of the variants' instances and of the instances over the step's ranks) plus one
//! construction.

use super::construct::CommunicationAnalysis;
use super::fold::{FoldInput, Folded};
use super::steps::{exact_copies, is_subsequence, steps_net_of_one_off, with_pieces, LoopsOrSeeded, NOT_A_STEP};

/// The iterations of step patterns that hold steps lacking the step's collectives cut into
/// those steps ([module docs](self)); `None` when none does or the cut explains less.
pub(super) fn fold_lacking_collectives(input: &FoldInput, state: &Folded) -> Option<Folded> {
    let events = input.events;
    let c = &state.communication;
    // No loop folded yet (the parse gave the loop's forms as one pattern's variants): the
    // loop pattern's exact copies are its iterations, as [`super::steps::fold_lacking`] seeds.
    let looped = LoopsOrSeeded::of(events, state)?;
    let (occurrences, loops, seed) = looped.parts();
    let step_loop = |q: usize| match seed {
        Some(s) if s == q => 0,
        _ => c.step_loops.get(q).copied().unwrap_or(NOT_A_STEP),
    };
    let mut pieces: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); occurrences.len()];
    let mut any = false;
    for (q, p) in c.patterns.iter().enumerate() {
        let l = step_loop(q);
        if l == NOT_A_STEP || p.variants.is_empty() {
            continue;
        }
        // Each rank's collectives, and the own form's messages there.
        let collectives: std::collections::BTreeMap<usize, Vec<u32>> = p
            .events
            .keys()
            .map(|&r| (r as usize, events.ranks[r as usize].collective_symbols()))
            .collect();
        let messages = |r: usize| -> Vec<u32> {
            let collective = &collectives[&r];
            p.events.get(&(r as u32)).map_or_else(Vec::new, |names| {
                names
                    .ids()
                    .iter()
                    .copied()
                    .filter(|x| collective.binary_search(x).is_err())
                    .collect()
            })
        };
        let own: std::collections::BTreeMap<usize, Vec<u32>> =
            p.events.keys().map(|&r| (r as usize, messages(r as usize))).collect();
        for inst in c.instances.iter().filter(|i| i.pattern as usize == q && i.variant != 0) {
            let cut: Vec<(usize, Vec<(u32, u32)>)> = inst
                .parts
                .iter()
                .map(|part| {
                    let r = part.rank as usize;
                    let span = (part.first_event, part.last_event + 1);
                    let empty = Vec::new();
                    let body = own.get(&r).unwrap_or(&empty);
                    let collective = collectives.get(&r).unwrap_or(&empty);
                    let lead = p.events.get(&part.rank).map_or(0, |names| {
                        let ids = names.ids().iter();
                        ids.take_while(|x| collective.binary_search(x).is_ok()).count()
                    });
                    let seq = &events.ranks[r].symbols;
                    let split = split_lacking_collectives(seq, span, body, collective, lead);
                    (r, split)
                })
                .collect();
            let k = cut.first().map_or(0, |(_, s)| s.len());
            if k < 2 || cut.iter().any(|(_, s)| s.len() != k) {
                continue;
            }
            any = true;
            for (r, split) in cut {
                pieces[r].extend(split.into_iter().map(|(s, e)| (s, e, l)));
            }
        }
        // A single step lacking collectives on every rank of the step (LAMMPS: a step lacking
        // both of its reductions once per rebuild) is an instance of its own: every part holds
        // exactly the own form's messages, in order, and is a subsequence of the own form.
        let quiet = |part: &super::construct::InstancePart| {
            let r = part.rank as usize;
            let seq = &events.ranks[r].symbols[part.first_event as usize..=part.last_event as usize];
            let (Some(body), Some(form), Some(collective)) =
                (own.get(&r), p.events.get(&part.rank), collectives.get(&r))
            else {
                return false;
            };
            // A step of collectives alone has no messages to recognise it by.
            !body.is_empty()
                && seq.len() < form.len()
                && seq
                    .iter()
                    .copied()
                    .filter(|x| collective.binary_search(x).is_err())
                    .eq(body.iter().copied())
                && is_subsequence(seq, form.ids())
        };
        for inst in c.instances.iter().filter(|i| {
            step_loop(i.pattern as usize) == NOT_A_STEP
                && i.parts.len() == p.ranks.len()
                && i.parts.iter().zip(&p.ranks).all(|(part, &r)| part.rank == r)
                && i.parts.iter().all(quiet)
        }) {
            any = true;
            for part in &inst.parts {
                pieces[part.rank as usize].push((part.first_event, part.last_event + 1, l));
            }
        }
    }
    if !any {
        return None;
    }
    let net = steps_net_of_one_off;
    let steps = |c: &CommunicationAnalysis| {
        c.patterns
            .iter()
            .zip(&c.step_loops)
            .filter(|(_, &l)| l != NOT_A_STEP)
            .map(|(p, _)| p.occurrences)
            .sum::<usize>()
    };
    // Before: seeded, the loop pattern's occurrences and events are the steps.
    let (net_before, steps_before) = match seed {
        Some(s) => {
            let one_off = super::construct::one_off_events(&c.patterns) as i64;
            (c.patterns[s].events_covered as i64 - one_off, c.patterns[s].occurrences)
        }
        None => (net(c), steps(c)),
    };
    let folded = with_pieces(input, occurrences, loops, &mut pieces);
    let fc = &folded.communication;
    (net(fc) >= net_before && steps(fc) > steps_before).then_some(folded)
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
                && v.iter()
                    .copied()
                    .filter(|x| collectives.binary_search(x).is_err())
                    .eq(messages.iter().copied())
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
/// later one. The iteration whole when it holds no two copies in a row. O(end − start).
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
    let only_collectives = |from: u32, to: u32| {
        piece[from as usize..to as usize]
            .iter()
            .all(|x| collectives.binary_search(x).is_ok())
    };
    // The longest run of copies in a row (the first of equal length), as (first, count) of
    // indices into `copies`.
    let copies = exact_copies(piece, messages);
    let (mut best, mut run) = ((0usize, 0usize), (0usize, 0usize));
    for (k, &p) in copies.iter().enumerate() {
        run = if k > 0 && only_collectives(copies[k - 1] + m, p) {
            (run.0, run.1 + 1)
        } else {
            (k, 1)
        };
        if run.1 > best.1 {
            best = run;
        }
    }
    let (first, count) = best;
    if count < 2 {
        return whole;
    }
    let copies = &copies[first..first + count];
    let mut cuts: Vec<u32> = vec![start + copies[0]];
    for w in copies.windows(2) {
        let gap = w[1] - (w[0] + m);
        cuts.push(start + w[1] - gap.min(lead as u32));
    }
    let after = copies[count - 1] + m;
    cuts.push(start + after);
    // The stretch before the copies: a step of its own when it holds the messages.
    if copies[0] > 0 {
        if is_subsequence(messages, &piece[..copies[0] as usize]) {
            cuts.insert(0, start);
        } else {
            cuts[0] = start;
        }
    }
    // And the stretch after them.
    if start + after < end {
        if is_subsequence(messages, &piece[after as usize..]) {
            cuts.push(end);
        } else {
            *cuts.last_mut().expect("two copies") = end;
        }
    }
    cuts.windows(2).map(|w| (w[0], w[1])).collect()
}

#[cfg(test)]
mod tests {
    use super::{quiet_steps, split_lacking_collectives};

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
        // Copies apart by a message, or one copy: whole.
        let split = |seq: &[u32], collectives: &[u32], lead| {
            split_lacking_collectives(seq, (0, seq.len() as u32), &[1, 2], collectives, lead)
        };
        assert_eq!(split(&[1, 2, 9, 1, 2], &[], 0), vec![(0, 5)]);
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
}
