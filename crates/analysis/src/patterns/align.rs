//! Aligning the copies of loop bodies across ranks before construction.
//!
//! A rank's tandem run starts where that rank's repetition starts, which need not be where its
//! partners' iterations start: on NPB LU, rank 1's loop body comes out as
//! `S2 R2 S0 S5 R5 … R0`, its last receive belonging to the exchange of the *next* iteration of
//! rank 0. Joined through their messages, such copies chain every iteration into one instance.
//!
//! A run of `k` adjacent equal occurrences with period `L` can be cut at any rotation `r < L`.
//! With rotations `r_A`, `r_B`, a message between runs A and B links copy
//! `⌊(p_A − start_A − r_A) / L_A⌋` to copy `⌊(p_B − start_B − r_B) / L_B⌋`; the copies line up
//! when that difference is the same for all their messages. Runs are visited breadth-first from
//! a longest one, and each run reached takes a rotation that makes the most messages with all its
//! already placed neighbours agree: of those, 0, else one keeping every copy whole (below), else
//! the smallest. The root is cut at 0 or, when the events before it repeat the tail of its unit,
//! where that repetition starts, whichever visit agrees better and then keeps more copies whole
//! (NPB LU's `[exchange, lower sweep, upper sweep]` is found from the second exchange on, the
//! first step's sweeps parsed with the barrier before them: cut before the sweeps, every rank
//! keeps every step but the last, which holds reductions). The visit order is fixed
//! by facts of the processes, not rank numbers (longest first, then the one whose first call
//! enters latest; neighbours in the same order); up to [`ROOT_TRIALS`] equally long runs are
//! tried as root and the visit on which the most sampled messages agree is kept. Rotated runs
//! keep `k − 1` whole copies; the events before the first cut stay single events and the last,
//! partial copy stays one occurrence — unless the `L − r` events before the run are the unit's
//! tail (they may end the occurrence before the run, which is cut short), when the cut moves
//! there and all `k` copies stay whole. Copies of a rotated unit outside
//! any run are cut at the same rotation where the events around them allow.

use super::construct::OpIndex;
use super::Events;
use std::collections::VecDeque;
use tracelogic_model::{Matching, Trace};

/// Classes of messages scored per pair of runs at most (more are sampled evenly).
const SAMPLES: usize = 4096;
/// Equally long runs tried as the root of one breadth-first placement.
const ROOT_TRIALS: usize = 8;

/// The new occurrences of a rotated run: index of its first old occurrence, new spans, how far
/// the occurrences before it move with it (0 when its cut moved earlier), the run's index, and
/// its rotation (how many events after the run its partial last copy may take to be whole).
type Replacement = (usize, Vec<(u32, u32)>, u32, usize, u32);

/// The runs one visit placed and their rotations.
type Placement = Vec<(usize, u32)>;

/// Two runs (indices) and the classes of messages between them: a representative message
/// (event positions in each run) and how many messages the class holds.
type RunPair = ((u32, u32), Vec<Class>);

/// A class of messages between two runs: one message (event in the first run, event in the
/// second) standing for every message at the same offsets into both runs' periods whose copies
/// differ by as much, and their number. Such messages line up, or not, together under every
/// pair of rotations, so scoring the classes weighted by their size is scoring every message.
type Class = ((u32, u32), u32);

struct Run {
    rank: usize,
    /// Index of the first occurrence of the run in the rank's list.
    first: usize,
    copies: usize,
    start: u32,
    period: u32,
}

/// Occurrences (per rank, sorted, non-overlapping) with runs rotated into line across ranks.
pub fn align_runs(
    trace: &Trace,
    matching: &Matching,
    events: &Events,
    occurrences: &[Vec<(u32, u32)>],
) -> Vec<Vec<(u32, u32)>> {
    align_runs_with(trace, matching, events, &OpIndex::of(trace, events), occurrences)
}

/// [`align_runs`] with the operations' events found already.
pub(crate) fn align_runs_with(
    trace: &Trace,
    matching: &Matching,
    events: &Events,
    ops: &OpIndex,
    occurrences: &[Vec<(u32, u32)>],
) -> Vec<Vec<(u32, u32)>> {
    let mut runs: Vec<Run> = Vec::new();
    let mut run_of: Vec<Vec<u32>> = Vec::with_capacity(occurrences.len());
    for (r, occ) in occurrences.iter().enumerate() {
        let seq = &events.ranks[r].symbols;
        let mut of = vec![u32::MAX; seq.len()];
        let mut i = 0;
        while i < occ.len() {
            let (s, e) = occ[i];
            let l = e - s;
            let mut j = i + 1;
            while j < occ.len()
                && occ[j].0 == occ[j - 1].1
                && occ[j].1 - occ[j].0 == l
                && seq[occ[j].0 as usize..occ[j].1 as usize] == seq[s as usize..e as usize]
            {
                j += 1;
            }
            if j - i >= 3 {
                let id = runs.len() as u32;
                runs.push(Run {
                    rank: r,
                    first: i,
                    copies: j - i,
                    start: s,
                    period: l,
                });
                for x in s..occ[j - 1].1 {
                    of[x as usize] = id;
                }
            }
            i = j;
        }
        run_of.push(of);
    }
    if runs.len() < 2 {
        return occurrences.to_vec();
    }
    // Sampled messages between runs (skipping each run's first and last copy).
    let inner = |run: &Run, p: u32| p >= run.start + run.period && p < run.start + (run.copies as u32 - 1) * run.period;
    // Per pair of runs, its messages (event in the first, event in the second), both
    // directions: each half of the matching's messages on its own core natively, then merged
    // (a pair's messages are sorted before use, so the halves' order does not matter).
    let between = |messages: &[tracelogic_model::Message]| -> Vec<Vec<(u32, Vec<Class>)>> {
        // `out[a]`: the runs `a` meets and their messages (a run meets few others, so a short
        // list, not a map).
        let mut out: Vec<Vec<(u32, Vec<Class>)>> = vec![Vec::new(); runs.len()];
        let mut push = |a: u32, b: u32, m: Class| {
            let list = &mut out[a as usize];
            match list.iter_mut().find(|x| x.0 == b) {
                Some(x) => x.1.push(m),
                None => list.push((b, vec![m])),
            }
        };
        for m in messages {
            let (sa, sb) = (m.sender as usize, m.receiver as usize);
            let (pa, pb) = (ops.p2p(sa)[m.send_op as usize], ops.p2p(sb)[m.recv_op as usize]);
            if pa == u32::MAX || pb == u32::MAX {
                continue;
            }
            let (ra, rb) = (run_of[sa][pa as usize], run_of[sb][pb as usize]);
            if ra == u32::MAX || rb == u32::MAX || ra == rb {
                continue;
            }
            if !inner(&runs[ra as usize], pa) || !inner(&runs[rb as usize], pb) {
                continue;
            }
            push(ra, rb, ((pa, pb), 1));
            push(rb, ra, ((pb, pa), 1));
        }
        out
    };
    let all = &matching.messages;
    let (later, earlier) =
        crate::logical::per_rank::both(|| between(&all[all.len() / 2..]), || between(&all[..all.len() / 2]));
    let mut pairs: Vec<RunPair> = Vec::new();
    for (a, (mut mine, theirs)) in earlier.into_iter().zip(later).enumerate() {
        for (b, v) in theirs {
            match mine.iter_mut().find(|x| x.0 == b) {
                Some(x) => x.1.extend(v),
                None => mine.push((b, v)),
            }
        }
        pairs.extend(mine.into_iter().map(|(b, v)| ((a as u32, b), v)));
    }
    // Every message in its class (the first of each, in event order, stands for it), then, past
    // SAMPLES classes, classes sampled evenly in event order (not the matching's
    // sender-by-sender order, which follows rank numbers). Pairs in key order, each one's index
    // at hand. Sampling messages instead (256 evenly spaced, until 4 Dec) could miss the few
    // that fix a rotation: on NPB LU class W over 16 ranks a time step holds 62 sweep messages
    // per pair for 2 of the halo exchange, the samples fell on the sweeps, and the steps were
    // cut where the exchange of one step joined the next (9,631 plane occurrences for 301 steps).
    let classify = |pairs: &mut [RunPair]| {
        for ((a, b), v) in pairs.iter_mut() {
            let (ra, rb) = (&runs[*a as usize], &runs[*b as usize]);
            // The messages of one direction come in order, so the list is a few ascending runs,
            // which the stable sort merges in linear time (equal entries are identical, so the
            // order is that of any sort).
            v.sort();
            let key = |&((pa, pb), _): &Class| {
                let (oa, ob) = ((pa - ra.start) as i64, (pb - rb.start) as i64);
                let (la, lb) = (ra.period as i64, rb.period as i64);
                (oa % la, ob % lb, oa / la - ob / lb)
            };
            let mut index: std::collections::HashMap<(i64, i64, i64), usize, foldhash::fast::RandomState> =
                Default::default();
            let mut classes: Vec<Class> = Vec::new();
            for m in v.iter() {
                let n = classes.len();
                let at = *index.entry(key(m)).or_insert(n);
                if at == n {
                    classes.push(*m);
                } else {
                    classes[at].1 += 1;
                }
            }
            if classes.len() > SAMPLES {
                let step = classes.len() as f64 / SAMPLES as f64;
                classes = (0..SAMPLES).map(|i| classes[(i as f64 * step) as usize]).collect();
            }
            *v = classes;
        }
    };
    // Each pair on its own: the pairs holding the first half of the messages on this core, the
    // rest on another natively.
    let messages: usize = pairs.iter().map(|p| p.1.len()).sum();
    let mut seen = 0;
    let half = pairs
        .iter()
        .position(|p| {
            seen += p.1.len();
            seen * 2 >= messages
        })
        .map_or(pairs.len(), |k| k + 1);
    let (first, second) = pairs.split_at_mut(half);
    crate::logical::per_rank::both(|| classify(second), || classify(first));
    // Runs in the order of preference as roots and as BFS neighbours: longest, then latest entry
    // time of the first call (a root that enters its loop last cuts the copies after every rank
    // has entered its own, so set-up stays out of the first copy), then rank's position. Lengths
    // and times are facts of the process, so a renumbering of the ranks visits the same runs in
    // the same order.
    let first_entry = |run: &Run| -> u64 {
        let re = &events.ranks[run.rank];
        let call = re.calls[run.start as usize] as usize;
        trace.ranks[re.rank as usize].calls.enter(call)
    };
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|&i| {
        let run = &runs[i];
        (
            std::cmp::Reverse(run.copies as u64 * run.period as u64),
            std::cmp::Reverse(first_entry(run)),
            i,
        )
    });
    let mut preference = vec![0usize; runs.len()];
    for (k, &i) in order.iter().enumerate() {
        preference[i] = k;
    }
    // Per run, its neighbours (run, index of their pair) in order of preference.
    let mut neighbours: Vec<Vec<(u32, usize)>> = vec![Vec::new(); runs.len()];
    for (k, &((a, b), _)) in pairs.iter().enumerate() {
        neighbours[a as usize].push((b, k));
    }
    neighbours
        .iter_mut()
        .for_each(|n| n.sort_unstable_by_key(|&(b, _)| preference[b as usize]));
    let pair_runs = |k: usize| {
        let ((b, c), sampled) = &pairs[k];
        (&runs[*b as usize], &runs[*c as usize], sampled.as_slice())
    };
    // Where the events before a run may join its first copy: after the occurrence before it,
    // or, when that one is no copy of a loop, after its first event (it is cut short).
    let free_from = |run: &Run| match run.first.checked_sub(1).map(|k| occurrences[run.rank][k]) {
        Some((s, _)) if run_of[run.rank][s as usize] == u32::MAX => s + 1,
        Some((_, e)) => e,
        None => 0,
    };
    // Per run, how many events before it (from `free_from` on) repeat the tail of its unit
    // ([`lead`]): at a rotation from `period − lead` on, the run's first copy starts among them
    // and every copy is whole.
    let leads: Vec<u32> = runs
        .iter()
        .map(|run| lead(&events.ranks[run.rank].symbols, run, free_from(run)))
        .collect();
    let whole_from = |i: usize| (leads[i] > 0).then(|| runs[i].period - leads[i]);
    // Copies a run keeps whole at rotation `rot`: all at 0 or from `whole_from` on, else all
    // but its last, which the events after the run may complete.
    let whole = |i: usize, rot: u32| -> usize {
        let run = &runs[i];
        if rot == 0 || whole_from(i).is_some_and(|w| rot >= w) {
            return run.copies;
        }
        let seq = &events.ranks[run.rank].symbols;
        let end = (run.start + run.copies as u32 * run.period) as usize;
        let unit = &seq[run.start as usize..run.start as usize + rot as usize];
        run.copies - 1 + usize::from(seq.get(end..end + rot as usize) == Some(unit))
    };
    // Among rotations that agree equally: 0, then those keeping every copy whole, then the rest.
    let preferred = |i: usize, rot: u32| (rot != 0, whole_from(i).is_none_or(|w| rot < w), rot);
    // Breadth-first placement from `root` at rotation `at` of every run it reaches; the runs
    // placed, in visit order.
    let place = |root: usize, at: u32, rotation: &mut Vec<Option<u32>>| -> Vec<usize> {
        rotation[root] = Some(at);
        let mut visited = vec![root];
        let mut queue = VecDeque::from([root as u32]);
        while let Some(a) = queue.pop_front() {
            for &(b, _) in &neighbours[a as usize] {
                if rotation[b as usize].is_some() {
                    continue;
                }
                // Score every rotation of b against all its neighbours already placed.
                let mut scores = vec![0usize; runs[b as usize].period as usize];
                for &(c, k) in &neighbours[b as usize] {
                    if let Some(rc) = rotation[c as usize] {
                        let (run_b, run_c, sampled) = pair_runs(k);
                        add_agreement_by_rotation(run_b, run_c, sampled, rc, &mut scores);
                    }
                }
                let most = scores.iter().copied().max().unwrap_or(0);
                rotation[b as usize] = (0..runs[b as usize].period)
                    .filter(|&rb| scores[rb as usize] == most)
                    .min_by_key(|&rb| preferred(b as usize, rb));
                if rotation[b as usize].is_some() {
                    visited.push(b as usize);
                }
                queue.push_back(b);
            }
        }
        visited
    };
    // Agreement over every pair of runs placed by one visit (`placed`, marked in `mark`): each
    // pair once, from its smaller run. O(the visit's pairs), not O(all pairs), so that a trace
    // of many short runs in many components (LAMMPS gcmc: an MC exchange between steps) is not
    // quadratic in its runs.
    let total = |rotation: &[Option<u32>], placed: &[usize], mark: &[bool]| -> usize {
        placed
            .iter()
            .flat_map(|&b| neighbours[b].iter().map(move |&(c, k)| (b, c as usize, k)))
            .filter(|&(b, c, _)| b < c && mark[c])
            .map(|(b, c, k)| {
                let (run_b, run_c, sampled) = pair_runs(k);
                agreement(
                    run_b,
                    run_c,
                    sampled,
                    rotation[b].unwrap_or(0),
                    rotation[c].unwrap_or(0),
                )
            })
            .sum()
    };
    let length = |i: usize| runs[i].copies as u64 * runs[i].period as u64;
    let mut rotation: Vec<Option<u32>> = vec![None; runs.len()];
    let mut mark = vec![false; runs.len()];
    for (k, &root) in order.iter().enumerate() {
        if rotation[root].is_some() {
            continue;
        }
        // Every unplaced run as long as the root is tried as root (up to ROOT_TRIALS); the visit
        // whose placed runs agree on the most sampled messages is kept (ties: the preferred root).
        // `order` is by length first, so the equally long runs follow the root.
        let mut best: Option<((usize, usize), Placement)> = None;
        let candidates: Vec<usize> = order[k..]
            .iter()
            .copied()
            .take_while(|&i| length(i) == length(root))
            .filter(|&i| rotation[i].is_none())
            .take(ROOT_TRIALS)
            .collect();
        for cand in candidates {
            // The candidate at rotation 0 and, when events before it repeat its unit's tail, cut
            // where its repetition starts: that one kept if it agrees as well and keeps more
            // copies whole. Each trial is placed in `rotation` and taken back out.
            for at in std::iter::once(0).chain(whole_from(cand)) {
                let placed = place(cand, at, &mut rotation);
                placed.iter().for_each(|&i| mark[i] = true);
                let kept = placed.iter().map(|&i| whole(i, rotation[i].unwrap_or(0))).sum();
                let score = (total(&rotation, &placed, &mark), kept);
                let trial: Vec<(usize, u32)> = placed.iter().map(|&i| (i, rotation[i].unwrap_or(0))).collect();
                for &i in &placed {
                    mark[i] = false;
                    rotation[i] = None;
                }
                if best.as_ref().is_none_or(|(s, _)| score > *s) {
                    best = Some((score, trial));
                }
            }
        }
        if let Some((_, trial)) = best {
            for (i, r) in trial {
                rotation[i] = Some(r);
            }
        }
    }
    let mut out: Vec<Vec<(u32, u32)>> = occurrences.to_vec();
    let mut replaced: Vec<Vec<Replacement>> = vec![Vec::new(); occurrences.len()];
    // Per rank, the unit and rotation of each rotated run, for its isolated copies.
    let mut rotated_units: Vec<Vec<(usize, u32)>> = vec![Vec::new(); occurrences.len()];
    for (i, run) in runs.iter().enumerate() {
        let rot = rotation[i].unwrap_or(0);
        if rot == 0 {
            continue;
        }
        rotated_units[run.rank].push((i, rot));
        let end = run.start + run.copies as u32 * run.period;
        // Cutting `period − rot` events earlier is the same rotation; when those events are the
        // unit's tail (`rot ≥ whole_from`), every copy stays whole (LU: the exchange's first
        // receive just before a run whose body starts at its second event). They may end the
        // occurrence before the run, which is then cut short (`free_from`); the run's last
        // `back` events stay one occurrence, as a partial last copy does.
        let back = run.period - rot;
        if whole_from(i).is_some_and(|w| rot >= w) {
            let mut occ: Vec<(u32, u32)> = (0..run.copies as u32)
                .map(|j| {
                    (
                        run.start - back + j * run.period,
                        run.start - back + (j + 1) * run.period,
                    )
                })
                .collect();
            occ.push((end - back, end));
            replaced[run.rank].push((run.first, occ, 0, i, rot));
        } else {
            let mut occ: Vec<(u32, u32)> = (0..run.copies as u32 - 1)
                .map(|j| (run.start + rot + j * run.period, run.start + rot + (j + 1) * run.period))
                .collect();
            occ.push((run.start + rot + (run.copies as u32 - 1) * run.period, end));
            replaced[run.rank].push((run.first, occ, rot, i, rot));
        }
    }
    for (r, reps) in replaced.into_iter().enumerate() {
        if reps.is_empty() {
            continue;
        }
        let old = &occurrences[r];
        let mut new = Vec::with_capacity(old.len());
        let mut i = 0;
        let seq = &events.ranks[r].symbols;
        let mut tails: Vec<(usize, usize, u32)> = Vec::new();
        for (first, occ, shift, run, tail) in reps {
            let floor = new.len();
            new.extend_from_slice(&old[i..first]);
            // A run whose first copy moved back into the occurrence before it: that one ends
            // where the copy starts.
            if let (Some(prev), Some(&(s, _))) = (new.last_mut(), occ.first()) {
                prev.1 = prev.1.min(s);
            }
            // The occurrences leading without a gap into a run cut `shift` events later are cut
            // as much later (on NPB LU the first time steps and the exchanges between them, whose
            // last send opens the partners' next step).
            let mut next = old[first].0;
            for o in new[floor..].iter_mut().rev() {
                if shift == 0 || o.1 != next || run_of[r][o.0 as usize] != u32::MAX {
                    break;
                }
                next = o.0;
                *o = (o.0 + shift, o.1 + shift);
            }
            i = first + runs[run].copies;
            new.extend(occ);
            if tail > 0 {
                tails.push((new.len() - 1, run, tail));
            }
        }
        new.extend_from_slice(&old[i..]);
        // A run cut at rotation `shift`: its partial last copy is whole when the `shift` events
        // after the run open the unit again; the occurrences leading on from the run without a gap
        // then move as much later (the next run's cut already placed, so nothing overlaps).
        for (k, run, shift) in tails {
            let run = &runs[run];
            let end = run.start + run.copies as u32 * run.period;
            let unit = &seq[run.start as usize..(run.start + run.period) as usize];
            let mut j = k + 1;
            let mut reach = end;
            while j < new.len() && new[j].0 == reach && run_of[r][new[j].0 as usize] == u32::MAX {
                reach = new[j].1;
                j += 1;
            }
            let limit = new.get(j).map_or(seq.len() as u32, |o| o.0);
            if new[k].1 == end
                && reach + shift <= limit
                && seq[end as usize..(end + shift) as usize] == unit[..shift as usize]
            {
                new[k].1 = end + shift;
                for o in &mut new[k + 1..j] {
                    *o = (o.0 + shift, o.1 + shift);
                }
            }
        }
        out[r] = new;
    }
    for (r, units) in rotated_units.iter().enumerate() {
        if !units.is_empty() {
            shift_isolated_copies(&events.ranks[r].symbols, &runs, units, &run_of[r], &mut out[r]);
        }
    }
    out
}

/// Copies of a rotated run's unit outside any run (the first time steps of NPB LU, separated from
/// the loop by set-up) are cut at the same rotation, by moving them `rot` events later or
/// `period − rot` earlier, whichever keeps them a copy of the rotated unit without overlapping
/// their neighbours; otherwise they stay. Unshifted, such a copy holds the first event of its
/// partners' next step and chains both steps into one instance.
fn shift_isolated_copies(seq: &[u32], runs: &[Run], units: &[(usize, u32)], run_of: &[u32], occ: &mut [(u32, u32)]) {
    for k in 0..occ.len() {
        let (s, e) = occ[k];
        if run_of[s as usize] != u32::MAX {
            continue;
        }
        let Some(&(run, rot)) = units.iter().find(|&&(i, _)| {
            let run = &runs[i];
            e - s == run.period
                && seq[s as usize..e as usize] == seq[run.start as usize..(run.start + run.period) as usize]
        }) else {
            continue;
        };
        let (unit, period) = (&seq[s as usize..e as usize], runs[run].period);
        let before = if k > 0 { occ[k - 1].1 } else { 0 };
        let after = occ.get(k + 1).map_or(seq.len() as u32, |o| o.0);
        let back = period - rot;
        if s >= before + back && seq[(s - back) as usize..s as usize] == unit[rot as usize..] {
            occ[k] = (s - back, e - back);
        } else if e + rot <= after && seq[e as usize..(e + rot) as usize] == unit[..rot as usize] {
            occ[k] = (s + rot, e + rot);
        }
    }
}

/// How many of the events just before `run`, from `free` on, repeat the tail of its unit (fewer
/// than a period): at every rotation `r ≥ period − lead` the run's first copy starts before it
/// and every copy is whole. O(period).
fn lead(seq: &[u32], run: &Run, free: u32) -> u32 {
    let (start, period) = (run.start as usize, run.period as usize);
    (0..(period - 1).min(start.saturating_sub(free as usize)))
        .take_while(|&t| seq[start - 1 - t] == seq[start - 1 - t + period])
        .count() as u32
}

/// The copy of `run`, cut at rotation `rot`, that holds event `p` (negative before the cut).
fn copy_of(run: &Run, rot: u32, p: u32) -> i64 {
    (p as i64 - run.start as i64 - rot as i64).div_euclid(run.period as i64)
}

/// Messages between `run_b` and `run_c` (classes of them, [`Class`]) whose copies line up under
/// rotations `rb`, `rc`: the number of messages at the most frequent difference of copy numbers.
fn agreement(run_b: &Run, run_c: &Run, sampled: &[Class], rb: u32, rc: u32) -> usize {
    let sampled = &sampled[..sampled.len().min(SAMPLES)];
    let mut differences: Vec<(i64, u32)> = sampled
        .iter()
        .map(|&((pb, pc), w)| (copy_of(run_b, rb, pb) - copy_of(run_c, rc, pc), w))
        .collect();
    differences.sort_unstable();
    differences
        .chunk_by(|x, y| x.0 == y.0)
        .map(|c| c.iter().map(|&(_, w)| w as usize).sum::<usize>())
        .max()
        .unwrap_or(0)
}

/// Add [`agreement`] of every rotation `rb` of `run_b` (`scores[rb]`, one per rotation up to
/// its period) with `run_c` at rotation `rc`. A message at offset `q·L + m` into `run_b` is in
/// copy `q` for rotations up to `m` and in copy `q − 1` after, so one sweep over the rotations
/// moves each class once between two counts: O(L · d + S log S) for S classes taking d
/// distinct differences, where scoring each rotation apart sorts the classes L times.
fn add_agreement_by_rotation(run_b: &Run, run_c: &Run, sampled: &[Class], rc: u32, scores: &mut [usize]) {
    let sampled = &sampled[..sampled.len().min(SAMPLES)];
    let period = run_b.period as i64;
    // Per class: the last rotation keeping its difference at rotation 0, the difference, and
    // its weight.
    let mut at_zero: Vec<(u32, i64, u32)> = sampled
        .iter()
        .map(|&((pb, pc), w)| {
            let offset = pb as i64 - run_b.start as i64;
            (
                offset.rem_euclid(period) as u32,
                copy_of(run_b, 0, pb) - copy_of(run_c, rc, pc),
                w,
            )
        })
        .collect();
    at_zero.sort_unstable();
    let mut values: Vec<i64> = at_zero.iter().flat_map(|&(_, d, _)| [d, d - 1]).collect();
    values.sort_unstable();
    values.dedup();
    let slot = |d: i64| values.binary_search(&d).expect("every difference has a slot");
    let mut counts = vec![0usize; values.len()];
    for &(_, d, w) in at_zero.iter() {
        counts[slot(d)] += w as usize;
    }
    let mut moved = 0;
    for (rb, score) in scores.iter_mut().enumerate() {
        while moved < at_zero.len() && (at_zero[moved].0 as usize) < rb {
            let (_, d, w) = at_zero[moved];
            counts[slot(d)] -= w as usize;
            counts[slot(d - 1)] += w as usize;
            moved += 1;
        }
        *score += counts.iter().copied().max().unwrap_or(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sweep over rotations gives, rotation by rotation, the agreement counted apart: runs of
    /// several periods and starts, samples from every copy (including before the cut and past
    /// the run) and every rotation of the other run.
    #[test]
    fn agreement_by_rotation_equals_agreement_of_each_rotation() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |bound: u32| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound as u64) as u32
        };
        for case in 0..300 {
            let run = |period: u32, start: u32| Run {
                rank: 0,
                first: 0,
                copies: 6,
                start,
                period,
            };
            let run_b = run(1 + next(20), next(50));
            let run_c = run(1 + next(20), next(50));
            let samples = if case % 10 == 0 { SAMPLES } else { next(40) as usize };
            let sampled: Vec<Class> = (0..samples)
                .map(|_| ((next(6 * run_b.period + 60), next(6 * run_c.period + 60)), 1 + next(5)))
                .collect();
            let rc = next(run_c.period);
            let mut scores = vec![0usize; run_b.period as usize];
            add_agreement_by_rotation(&run_b, &run_c, &sampled, rc, &mut scores);
            for (rb, &score) in scores.iter().enumerate() {
                assert_eq!(
                    score,
                    agreement(&run_b, &run_c, &sampled, rb as u32, rc),
                    "case {case}, rotation {rb}"
                );
            }
        }
    }
}
