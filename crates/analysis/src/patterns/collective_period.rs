//! Steps cut at the run's collective period, where no pattern explains anything.
//!
//! The other fold stages start from a loop the per-rank parse found: a pattern that runs three
//! times in a row somewhere. When a step changes form nearly every time it runs, the parse finds
//! only fragments of two or three messages and no loop at all: GROMACS with dynamic load
//! balancing (held-out 12 ranks, 200 steps, recorded 4 Dec: rank 0 ran its step in 23 forms, a
//! lone `MPI_Send` or `MPI_Recv` for a pulse with nothing to send one way, an extra pulse to one
//! side only), where the patterns came out as 187 fragments, none covering 1 % of the events.
//!
//! What still marks the steps is the collectives, which every rank of a communicator calls the
//! same number of times. On each rank the *step's collectives* are the maximal run of collectives
//! (with no message between them) that recurs most often, at least three times (GROMACS: PME's
//! four `MPI_Alltoall`s, 201 times, against the energy `MPI_Allreduce`'s 20); the rank is cut
//! after every maximal run holding them (as a subsequence: an added reduction beside them keeps
//! the cut). The pieces between two cuts are the steps when every rank of the step cuts as many
//! (the most frequent count over the ranks that cut, at least three; other ranks are left as
//! they are); the stretch before the first cut and after the last is set-up and wrap-up. A piece
//! is not a step when it holds more than twice the rank's median piece's events and other
//! collectives or partners than the short pieces (another stage of the run between two calls of
//! the same collectives, not a rebuild's longer exchange), a barrier most pieces do not call
//! (a stage begins), or a message whose symbol no other piece of the rank has (a one-off
//! exchange). The pieces become iterations of one loop (the folded loop they lie in, else a
//! new one: [`loop_of_pieces`]),
//! instances holding a piece that is not one step on every rank give theirs back, and the
//! result is kept when its step pattern covers at least [`super::MIN_SHARE`] of the events and
//! more events net of those left in instances seen once than the patterns before.
//!
//! Only where the state's best repeating pattern covers less than [`super::MIN_SHARE`] of the
//! events (the patterns shown would be none), so runs whose loops were found keep their
//! patterns; and, last in the innermost-first redo, where the instances seen once hold more
//! events than the best pattern seen twice or more (LAMMPS `balance`, held out, 8 ranks: steps
//! whose partners change with every rebalancing; 1,072 → 7,080 of 10,000 steps).
//! O(events) per rank, plus up to three constructions.

use super::collective_steps::give_back;
use super::construct::{one_off_events, CommunicationAnalysis};
use super::events::EventRef;
use super::fold::{FoldInput, Folded};
use super::steps::{is_subsequence, steps_net_of_one_off, with_pieces, NOT_A_STEP};
use std::collections::{HashMap, HashSet};
use tracelogic_model::Rank;

/// Rounds of giving back the pieces of instances that are not steps.
const ROUNDS: usize = 3;

/// The run's steps cut at its collective period ([module docs](self)); `None` where a pattern
/// already covers [`super::MIN_SHARE`] of the events, no ranks cut alike, or the cut explains
/// no more.
pub(super) fn fold_collective_period(input: &FoldInput, state: &Folded) -> Option<Folded> {
    cut_at_collective_period(input, state, false)
}

/// The same cut, last, where the instances seen once hold more events than the best pattern
/// seen twice or more (LAMMPS `balance`: recursive bisection every 50 steps changes every
/// rank's neighbours, and a third of the run is one instance chained across steps). Run after
/// every other stage of the innermost-first redo only ([`super::analyse_nested`]), so that a
/// loop the redo finds (GROMACS 16/150: its steps, glued in the first parse) is taken first.
pub(super) fn fold_collective_period_over_one_offs(input: &FoldInput, state: &Folded) -> Option<Folded> {
    cut_at_collective_period(input, state, true)
}

/// The same cut, last in every parse, where it cuts more steps than the pattern explaining
/// most has occurrences: that pattern's instances, or instances of others beside them, hold
/// several steps (LAMMPS `rigid`: two steps and the few messages between them; held-out LAMMPS
/// `colloid`, 8 ranks, 2,500 steps with 657 neighbour-list rebuilds: runs of ordinary steps
/// between rebuilds were chained into 1,064 instances in 21 forms; cut, 2,500 steps in 2 forms,
/// more events explained and fewer left in instances seen once). Kept under the same rule.
pub(super) fn fold_collective_period_finer(input: &FoldInput, state: &Folded) -> Option<Folded> {
    cut(input, state, false, true)
}

/// [`fold_collective_period`], or with `over_one_offs` [`fold_collective_period_over_one_offs`].
fn cut_at_collective_period(input: &FoldInput, state: &Folded, over_one_offs: bool) -> Option<Folded> {
    cut(input, state, over_one_offs, false)
}

/// The cut at the collective period, in the mode of [`fold_collective_period`],
/// [`fold_collective_period_over_one_offs`] or (`finer`) [`fold_collective_period_finer`].
fn cut(input: &FoldInput, state: &Folded, over_one_offs: bool, finer: bool) -> Option<Folded> {
    let events = input.events;
    let (occurrences, loops, c) = state.parts();
    let total: u64 = events.ranks.iter().map(|r| r.symbols.len() as u64).sum();
    let explained = |c: &CommunicationAnalysis| c.explaining_most().map_or(0, |(_, p)| p.events_covered);
    let enough = |covered: u64| covered as f64 >= super::MIN_SHARE * total as f64;
    let repeating = || {
        let best = c
            .patterns
            .iter()
            .filter(|p| p.occurrences >= 2)
            .map(|p| p.events_covered)
            .max();
        best.unwrap_or(0) >= one_off_events(&c.patterns)
    };
    let top = c.explaining_most();
    let top_occurrences = top.map_or(0, |(_, p)| p.occurrences);
    if total == 0 || (!finer && enough(explained(c)) && (!over_one_offs || repeating())) {
        return None;
    }
    // Each rank's cut pieces.
    let cut: Vec<Vec<(u32, u32)>> = events
        .ranks
        .iter()
        .map(|re| {
            let collective: Vec<bool> = re.events.iter().map(|e| matches!(e, EventRef::Collective(_))).collect();
            joined_halves(&re.symbols, &collective, period_pieces(&re.symbols, &collective))
        })
        .collect();
    // The ranks of the step: those cutting the most frequent number of pieces (ties: more).
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for p in cut.iter().filter(|p| p.len() >= 3) {
        *counts.entry(p.len()).or_default() += 1;
    }
    let (&n, &ranks_cutting) = counts.iter().max_by_key(|&(&len, &ranks)| (ranks, len))?;
    if ranks_cutting < 2 {
        return None;
    }
    if finer && n <= top_occurrences {
        return None;
    }
    let ranks: Vec<Rank> = events
        .ranks
        .iter()
        .zip(&cut)
        .filter(|(_, p)| p.len() == n)
        .map(|(re, _)| re.rank)
        .collect();
    // A finer cut refines the loop already found and does not extend it: on each rank, only the
    // pieces holding more than half the rank's median piece inside the stretch from the start
    // of its first instance of the best pattern to the end of its last. LAMMPS's set-up before
    // the first step migrates atoms and rebuilds borders as a rebuild step does, between two of
    // the input's reductions, and is no step; the loop's instances may start an event before
    // a cut or inside the first step (their rotation), and the last step's piece may run on
    // into the wrap-up's messages (held-out `body`: 1,000 steps, not 999 or 1,001).
    let mut within: HashMap<Rank, (u32, u32)> = HashMap::new();
    // Per rank, the best pattern's parts (first event, end), in order.
    let mut parts: HashMap<Rank, Vec<(u32, u32)>> = HashMap::new();
    if let (true, Some((k, _))) = (finer, top) {
        for part in c
            .instances
            .iter()
            .filter(|i| i.pattern as usize == k)
            .flat_map(|i| &i.parts)
        {
            let span = within.entry(part.rank).or_insert((u32::MAX, 0));
            *span = (span.0.min(part.first_event), span.1.max(part.last_event + 1));
            parts
                .entry(part.rank)
                .or_default()
                .push((part.first_event, part.last_event + 1));
        }
        parts.values_mut().for_each(|p| p.sort_unstable());
        // The loop's stretch takes in the instances beside it that hold several steps (on
        // every rank of such an instance).
        for (rank, glued) in glued_parts(c, Some(k), events, &cut, true) {
            let span = within.entry(rank).or_insert((u32::MAX, 0));
            for (first, end, _) in glued {
                *span = (span.0.min(first), span.1.max(end));
            }
        }
    }
    let barriers = events.barrier_symbols();
    let mut pieces: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); events.ranks.len()];
    for (r, (re, own)) in events.ranks.iter().zip(&cut).enumerate() {
        if own.len() != n {
            continue;
        }
        let collective = |i: usize| matches!(re.events[i], EventRef::Collective(_));
        let mut lengths: Vec<u32> = own.iter().map(|&(s, e)| e - s).collect();
        lengths.sort_unstable();
        let median = lengths[lengths.len() / 2];
        // A piece shorter than half the median counts when it lies inside and runs back to back
        // with two copies of itself or more (a loop's iterations: LAMMPS `rigid`'s steps whose
        // bodies are far from every boundary, one message each way and the reduction); alone it
        // is set-up (PPPM's grid set-up at each `run`, one exchange and reduction a dimension).
        let looping = back_to_back(&re.symbols, own);
        let inside = |s: u32, e: u32| {
            within.get(&re.rank).is_none_or(|&(first, end)| {
                let least = if looping.contains(&(s, e)) { e - s } else { median };
                2 * e.min(end).saturating_sub(s.max(first)) > least
            })
        };
        let barrier = |i: usize| barriers[re.symbols[i] as usize];
        pieces[r] = steps_among(&re.symbols, own, collective, barrier)
            .into_iter()
            .filter(|&(s, e)| inside(s, e))
            .map(|(s, e)| (s, e, NOT_A_STEP))
            .collect();
    }
    let l = loop_of_pieces(occurrences, loops, &pieces);
    pieces.iter_mut().flatten().for_each(|p| p.2 = l);
    // The finer cut must split the best pattern's instances: more of its pieces lie in them
    // (by their middle event) than there are parts of them. Pieces between instances (LAMMPS's
    // set-up of each further `run` in a loop of runs) do not make a cut finer.
    if finer {
        let mut in_parts = 0usize;
        for (re, own) in events.ranks.iter().zip(&pieces) {
            let Some(ps) = parts.get(&re.rank) else { continue };
            in_parts += own
                .iter()
                .filter(|&&(s, e, _)| holding_middle(ps, |&(first, end)| (first, end), (s, e)).is_some())
                .count();
        }
        let kept: Vec<Vec<(u32, u32)>> = pieces
            .iter()
            .map(|p| p.iter().map(|&(s, e, _)| (s, e)).collect())
            .collect();
        let glued: usize = glued_parts(c, top.map(|t| t.0), events, &kept, false)
            .values()
            .flatten()
            .map(|&(_, _, h)| h)
            .sum();
        if in_parts <= parts.values().map(Vec::len).sum::<usize>() && glued == 0 {
            return None;
        }
    }
    // Occurrences in no loop yet where no stage folded one.
    let flags: Vec<Vec<u32>> = super::steps::loop_flags(occurrences, loops);
    let net = steps_net_of_one_off;
    let before = explained(c) as i64 - one_off_events(&c.patterns) as i64;
    for _ in 0..ROUNDS {
        if pieces.iter().all(|p| p.is_empty()) {
            return None;
        }
        let folded = with_pieces(input, occurrences, &flags, &mut pieces);
        if !give_back(&folded.communication, &ranks, l, &mut pieces) {
            let fc = &folded.communication;
            return (enough(explained(fc)) && net(fc) > before).then_some(folded);
        }
    }
    None
}

/// The loop the `pieces` are iterations of: the folded loop whose iterations hold most of their
/// middle events, else a new one (0 where none was folded). A loop folded before may be
/// another stage of the run than the steps the cut finds (held-out LAMMPS `cmap`: the input's
/// broadcasts, seven iterations before the run; as loop 0 with the steps, they were counted
/// as seven more steps). O(pieces · log occurrences).
fn loop_of_pieces(occurrences: &[Vec<(u32, u32)>], loops: &[Vec<u32>], pieces: &[Vec<(u32, u32, u32)>]) -> u32 {
    let mut held: HashMap<u32, usize> = HashMap::new();
    let mut next = 0u32;
    for ((occ, flags), own) in occurrences.iter().zip(loops).zip(pieces) {
        let mut iterations: Vec<(u32, u32, u32)> = occ
            .iter()
            .zip(flags)
            .filter(|(_, &l)| l != NOT_A_STEP)
            .map(|(&(s, e), &l)| (s, e, l))
            .collect();
        iterations.sort_unstable();
        next = next.max(iterations.iter().map(|x| x.2 + 1).max().unwrap_or(0));
        for &(s, e, _) in own {
            if let Some(k) = holding_middle(&iterations, |x| (x.0, x.1), (s, e)) {
                *held.entry(iterations[k].2).or_default() += 1;
            }
        }
    }
    held.into_iter()
        .max_by_key(|&(l, n)| (n, std::cmp::Reverse(l)))
        .map_or(next, |(l, _)| l)
}

/// Per rank, the parts of other patterns' instances than `top` holding two of the rank's
/// `pieces` or more (by their middle event), with how many; with `whole`, every part of an
/// instance with such a part. Steps glued into one instance beside the loop found (LAMMPS
/// `rigid`: two steps' reductions and the few messages between them as a pattern of their own;
/// its first steps, before the loop's first instance, one instance seen once).
/// O(parts · log parts + pieces · log parts).
fn glued_parts(
    c: &CommunicationAnalysis,
    top: Option<usize>,
    events: &super::events::Events,
    pieces: &[Vec<(u32, u32)>],
    whole: bool,
) -> HashMap<Rank, Vec<(u32, u32, usize)>> {
    // Per rank, (first event, end, instance).
    let mut parts: HashMap<Rank, Vec<(u32, u32, usize)>> = HashMap::new();
    for (k, instance) in c.instances.iter().enumerate() {
        if Some(instance.pattern as usize) == top {
            continue;
        }
        for part in &instance.parts {
            parts
                .entry(part.rank)
                .or_default()
                .push((part.first_event, part.last_event + 1, k));
        }
    }
    let mut held: HashMap<(Rank, usize), usize> = HashMap::new();
    let mut glued_instances = HashSet::new();
    for (re, own) in events.ranks.iter().zip(pieces) {
        let Some(ps) = parts.get_mut(&re.rank) else { continue };
        ps.sort_unstable();
        for &piece in own {
            if let Some(k) = holding_middle(ps, |x| (x.0, x.1), piece) {
                let h = held.entry((re.rank, k)).or_default();
                *h += 1;
                if *h >= 2 {
                    glued_instances.insert(ps[k].2);
                }
            }
        }
    }
    let mut glued: HashMap<Rank, Vec<(u32, u32, usize)>> = HashMap::new();
    for (rank, ps) in &parts {
        for (j, &(first, end, instance)) in ps.iter().enumerate() {
            let h = held.get(&(*rank, j)).copied().unwrap_or(0);
            if h >= 2 || (whole && glued_instances.contains(&instance)) {
                glued.entry(*rank).or_default().push((first, end, h));
            }
        }
    }
    glued
}

/// The piece's symbols at the events `keep` takes (its messages, or its collectives), in order.
fn picked(symbols: &[u32], (s, e): (u32, u32), keep: impl Fn(usize) -> bool) -> Vec<u32> {
    (s as usize..e as usize)
        .filter(|&i| keep(i))
        .map(|i| symbols[i])
        .collect()
}

/// Which of `spans` (disjoint, in order; `bounds` gives a span's first event and end) holds the
/// middle event of the piece `s..e`. O(log spans).
fn holding_middle<T>(spans: &[T], bounds: impl Fn(&T) -> (u32, u32), (s, e): (u32, u32)) -> Option<usize> {
    let mid = s + (e - s) / 2;
    let k = spans.partition_point(|x| bounds(x).0 <= mid);
    (k > 0 && mid < bounds(&spans[k - 1]).1).then(|| k - 1)
}

/// The pieces in runs that repeat one piece, or two in turn, three times or more back to back
/// (`pieces` in order): a loop's iterations, also where every other step differs (a rebuild
/// every second step: LAMMPS granular `pour.drum`). O(events).
fn back_to_back(symbols: &[u32], pieces: &[(u32, u32)]) -> HashSet<(u32, u32)> {
    let body = |&(s, e): &(u32, u32)| &symbols[s as usize..e as usize];
    let mut looping = HashSet::new();
    for period in 1..=2 {
        // A run: pieces start.. each equal to the one `period` before it.
        let mut start = 0;
        for k in period..=pieces.len() {
            if k < pieces.len() && body(&pieces[k]) == body(&pieces[k - period]) {
                continue;
            }
            // pieces[start..k] repeat with this period.
            if k - start >= 3 * period {
                looping.extend(pieces[start..k].iter().copied());
            }
            start = k + 1 - period;
        }
    }
    looping
}

/// A rank's pieces between consecutive cuts at its step's collectives (`collective[i]`: event
/// `i` is a collective): the maximal run of collectives recurring most often (ties: the longer,
/// then the earlier), at least three times; a cut after every maximal run holding it as a
/// subsequence. Empty when no run recurs three times. O(events).
fn period_pieces(symbols: &[u32], collective: &[bool]) -> Vec<(u32, u32)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < symbols.len() {
        if !collective[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < symbols.len() && collective[i] {
            i += 1;
        }
        runs.push((start, i));
    }
    let mut seen: HashMap<&[u32], (usize, usize)> = HashMap::new();
    for (k, &(s, e)) in runs.iter().enumerate() {
        seen.entry(&symbols[s..e]).or_insert((0, k)).0 += 1;
    }
    let Some((unit, _)) = seen
        .iter()
        .filter(|(_, &(count, _))| count >= 3)
        .max_by_key(|(run, &(count, first))| (count, run.len(), std::cmp::Reverse(first)))
    else {
        return Vec::new();
    };
    let cuts: Vec<u32> = runs
        .iter()
        .filter(|&&(s, e)| is_subsequence(unit, &symbols[s..e]))
        .map(|&(_, e)| e as u32)
        .collect();
    cuts.windows(2).map(|w| (w[0], w[1])).collect()
}

/// A rank's `pieces` with each two back to back, different, whose messages, the first's then
/// the second's, are exactly the messages of a whole piece, joined: a step that calls its
/// collectives twice is cut in two by the collective period, where other steps (the same
/// exchanges, one run of collectives) are one piece. The whole is the rank's most frequent
/// piece (seen three times or more; LAMMPS `coreshell`'s first run: the Ewald sum's reductions
/// after the forward exchange, a thermostat's after the reverse one, where the later runs
/// reduce once), or any piece seen three times where the run changes once from the whole to
/// the halves (or back) and each half comes beside the other in most of its occurrences
/// (granular `pour.drum` after its first rebalancing: a second reduction between a rebuild's
/// atom migration and its borders). Otherwise two different steps back to back that are
/// sometimes one piece (a collective between them skipped) stay two: held-out LAMMPS
/// `dreiding` (a rebuild and the step after it, wholes and pairs in turn) lost 39 of its 100
/// steps, and `indent.min` (halves only in company of others) 312 of 1,713, when they were
/// joined. O(events).
fn joined_halves(symbols: &[u32], collective: &[bool], pieces: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    let own: Vec<Vec<u32>> = pieces.iter().map(|&p| picked(symbols, p, |i| !collective[i])).collect();
    // Each non-empty message list: its count and its first and last piece.
    let mut seen: HashMap<&[u32], (usize, usize, usize)> = HashMap::new();
    for (k, m) in own.iter().enumerate().filter(|(_, m)| !m.is_empty()) {
        let entry = seen.entry(m.as_slice()).or_insert((0, k, k));
        *entry = (entry.0 + 1, entry.1, k);
    }
    let most_frequent = seen
        .iter()
        .filter(|(_, c)| c.0 >= 3)
        .max_by_key(|(m, &(count, first, _))| (count, m.len(), std::cmp::Reverse(first)))
        .map(|(&m, _)| m);
    let adjacent = |k: usize| k + 1 < pieces.len() && pieces[k].1 == pieces[k + 1].0;
    // Each pair of different message lists making a whole seen three times: its count, first
    // and last place, and the whole.
    type Pair<'a> = (&'a [u32], &'a [u32]);
    let mut pairs: HashMap<Pair, (usize, usize, usize, &[u32])> = HashMap::new();
    for k in (0..pieces.len()).filter(|&k| adjacent(k)) {
        let (a, b) = (own[k].as_slice(), own[k + 1].as_slice());
        if a.is_empty() || b.is_empty() || a == b {
            continue;
        }
        if let Some(entry) = pairs.get_mut(&(a, b)) {
            entry.0 += 1;
            entry.2 = k;
            continue;
        }
        let joined: Vec<u32> = a.iter().chain(b).copied().collect();
        if let Some((whole, _)) = seen.get_key_value(joined.as_slice()).filter(|(_, c)| c.0 >= 3) {
            pairs.insert((a, b), (1, k, k, whole));
        }
    }
    let halves = |a: &[u32], b: &[u32]| {
        pairs.get(&(a, b)).is_some_and(|&(together, first, last, whole)| {
            let (_, whole_first, whole_last) = seen[whole];
            let mostly = |half: &[u32]| 2 * together > seen[half].0;
            most_frequent == Some(whole) || (mostly(a) && mostly(b) && (whole_last < first || last < whole_first))
        })
    };
    let mut out = Vec::with_capacity(pieces.len());
    let mut k = 0;
    while k < pieces.len() {
        if adjacent(k) && halves(&own[k], &own[k + 1]) {
            out.push((pieces[k].0, pieces[k + 1].1));
            k += 2;
        } else {
            out.push(pieces[k]);
            k += 1;
        }
    }
    out
}

/// Of a rank's cut pieces, those that are steps: at most twice the median piece's events, or
/// the same messages as such a piece (only its collectives more: a rebuild step followed by
/// more reductions than usual), or a short piece's collectives with messages to its partners
/// only (a rebuild's exchange); no barrier (`barrier(i)`) most short pieces do not call (but in
/// the rank's last piece); and every message's symbol in some other piece too ([module
/// docs](self)). O(events).
fn steps_among(
    symbols: &[u32],
    pieces: &[(u32, u32)],
    collective: impl Fn(usize) -> bool,
    barrier: impl Fn(usize) -> bool,
) -> Vec<(u32, u32)> {
    let mut lengths: Vec<u32> = pieces.iter().map(|&(s, e)| e - s).collect();
    lengths.sort_unstable();
    let Some(&median) = lengths.get(lengths.len() / 2) else {
        return Vec::new();
    };
    // Pieces each message symbol occurs in (counted once per piece).
    let mut in_pieces: HashMap<u32, (usize, usize)> = HashMap::new();
    for (k, &(s, e)) in pieces.iter().enumerate() {
        for (i, &x) in symbols.iter().enumerate().take(e as usize).skip(s as usize) {
            if collective(i) {
                continue;
            }
            let entry = in_pieces.entry(x).or_insert((0, usize::MAX));
            if entry.1 != k {
                *entry = (entry.0 + 1, k);
            }
        }
    }
    let messages = |&p: &(u32, u32)| picked(symbols, p, |i| !collective(i));
    let collectives = |&p: &(u32, u32)| picked(symbols, p, &collective);
    let short = |&(s, e): &(u32, u32)| e - s <= 2 * median;
    let short_pieces: Vec<(u32, u32)> = pieces.iter().copied().filter(short).collect();
    let short_messages: HashSet<Vec<u32>> = short_pieces.iter().map(messages).collect();
    let short_collectives: HashSet<Vec<u32>> = short_pieces.iter().map(collectives).collect();
    let short_symbols: HashSet<u32> = short_messages.iter().flatten().copied().collect();
    // The collectives most short pieces call (in more than half of them). A piece calling a
    // barrier most do not is no step, as a barrier every rank meets begins a stage (the
    // phases' rule): the last piece of one stage runs on through the end of that stage and the
    // set-up of the next (LAMMPS between a `minimize` and the next `run`: its closing run of
    // collectives is one run, cut after its last reduction). Other collectives steps call now
    // and then (an energy reduction every tenth step) keep their pieces. The rank's last piece
    // is exempt: the last step's runs on through the run's closing statistics, and the wrap-up
    // follows no step.
    let mut calling: HashMap<u32, usize> = HashMap::new();
    for p in &short_pieces {
        let mut own = collectives(p);
        own.sort_unstable();
        own.dedup();
        own.into_iter().for_each(|x| *calling.entry(x).or_default() += 1);
    }
    let usual = |i: usize| 2 * calling.get(&symbols[i]).copied().unwrap_or(0) > short_pieces.len();
    // A long piece calling a short piece's collectives and messaging only as short pieces do is
    // a step with more messages (a neighbour-list rebuild's exchange and borders), not another
    // stage of the run, which calls collectives of its own.
    let rebuild = |p: &(u32, u32)| {
        short_collectives.contains(&collectives(p)) && messages(p).iter().all(|x| short_symbols.contains(x))
    };
    let last = pieces.last().copied();
    pieces
        .iter()
        .copied()
        .filter(|p| {
            (Some(*p) == last || (p.0 as usize..p.1 as usize).all(|i| !barrier(i) || usual(i)))
                && (short(p) || short_messages.contains(&messages(p)) || rebuild(p))
                && (p.0 as usize..p.1 as usize).all(|i| collective(i) || in_pieces[&symbols[i]].0 >= 2)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{back_to_back, joined_halves, loop_of_pieces, period_pieces, steps_among, NOT_A_STEP};

    /// Messages 1–3, collectives 7 (a transpose, four times) and 8 (a reduction): the unit is
    /// the run `7 7 7 7` (three times) rather than `8` (twice) and, in a run with a reduction
    /// beside it, still cuts; the stretch before the first cut is set-up.
    #[test]
    fn the_most_frequent_collective_run_cuts_the_steps() {
        let seq = [
            8, 1, 7, 7, 7, 7, 1, 2, 8, 3, 7, 7, 7, 7, 8, 1, 2, 7, 7, 7, 7, 3, 7, 7, 7, 7,
        ];
        let collective: Vec<bool> = seq.iter().map(|&x| x >= 7).collect();
        assert_eq!(period_pieces(&seq, &collective), vec![(6, 15), (15, 21), (21, 26)]);
        // No run recurs three times: nothing is cut.
        assert!(period_pieces(&seq[..15], &collective[..15]).is_empty());
    }

    /// A piece over twice the median calling collectives of its own (another stage of the run),
    /// or with a message no other piece has, is no step; one over twice the median with a short
    /// piece's messages and more collectives is, and so is one calling a short piece's
    /// collectives with more messages to the same partners (a rebuild's exchange).
    #[test]
    fn long_pieces_and_one_off_messages_are_no_steps() {
        let seq = [1, 2, 7, 1, 2, 7, 1, 9, 7, 1, 2, 1, 8, 2, 1, 2, 1, 2, 7, 1, 2, 7];
        let collective = |i: usize| seq[i] == 7 || seq[i] == 8;
        let pieces = [(0, 3), (3, 6), (6, 9), (9, 19), (19, 22)];
        let steps = steps_among(&seq, &pieces, collective, |_| false);
        assert_eq!(steps, vec![(0, 3), (3, 6), (19, 22)]);
        let seq = [1, 2, 7, 1, 2, 7, 1, 2, 7, 7, 7, 7, 7, 1, 2, 7];
        let pieces = [(0, 3), (3, 6), (6, 13), (13, 16)];
        let steps = steps_among(&seq, &pieces, |i| seq[i] == 7, |_| false);
        assert_eq!(steps, pieces.to_vec());
        // The rebuild: 1 2 1 2 1 2 1 2 before the step's one collective.
        let seq = [1, 2, 7, 1, 2, 7, 1, 2, 7, 1, 2, 1, 2, 1, 2, 1, 2, 7, 1, 2, 7];
        let pieces = [(0, 3), (3, 6), (6, 9), (9, 18), (18, 21)];
        let steps = steps_among(&seq, &pieces, |i| seq[i] == 7, |_| false);
        assert_eq!(steps, pieces.to_vec());
        // Long pieces messaging a partner no short piece has are no rebuilds.
        let seq = [
            1, 2, 7, 1, 2, 7, 1, 2, 7, 1, 2, 3, 2, 3, 2, 1, 2, 7, 1, 2, 7, 1, 3, 2, 3, 1, 2, 1, 2, 7,
        ];
        let pieces = [(0, 3), (3, 6), (6, 9), (9, 18), (18, 21), (21, 30)];
        let steps = steps_among(&seq, &pieces, |i| seq[i] == 7, |_| false);
        assert_eq!(steps, vec![(0, 3), (3, 6), (6, 9), (18, 21)]);
        // A short piece calling a barrier (8) most pieces do not call is no step (a stage
        // begins), but the last piece is; another collective (9) now and then keeps its piece.
        let seq = [1, 2, 7, 1, 2, 7, 1, 2, 7, 8, 7, 1, 2, 9, 7, 1, 2, 7, 8];
        let pieces = [(0, 3), (3, 6), (6, 11), (11, 15), (15, 19)];
        let steps = steps_among(&seq, &pieces, |i| seq[i] >= 7, |i| seq[i] == 8);
        assert_eq!(steps, vec![(0, 3), (3, 6), (11, 15), (15, 19)]);
    }

    /// Three identical pieces or more back to back are a loop's, and so are two in turn three
    /// times; fewer are not.
    #[test]
    fn pieces_back_to_back() {
        let seq = [1, 7, 1, 7, 1, 7, 2, 7, 2, 7, 1, 7];
        let pieces: Vec<(u32, u32)> = (0..6).map(|k| (2 * k, 2 * k + 2)).collect();
        let mut looping: Vec<(u32, u32)> = back_to_back(&seq, &pieces).into_iter().collect();
        looping.sort_unstable();
        assert_eq!(looping, vec![(0, 2), (2, 4), (4, 6)]);
        // Two pieces in turn three times (`3 7` and `1 2 7`, a rebuild every other step) are
        // a loop's; twice, not.
        let seq = [
            3, 7, 1, 2, 7, 3, 7, 1, 2, 7, 3, 7, 1, 2, 7, 4, 7, 3, 7, 1, 2, 7, 3, 7, 1, 2, 7,
        ];
        let pieces = [
            (0, 2),
            (2, 5),
            (5, 7),
            (7, 10),
            (10, 12),
            (12, 15),
            (15, 17),
            (17, 19),
            (19, 22),
            (22, 24),
            (24, 27),
        ];
        let mut looping: Vec<(u32, u32)> = back_to_back(&seq, &pieces).into_iter().collect();
        looping.sort_unstable();
        assert_eq!(looping, pieces[..6].to_vec());
    }

    /// The cut's pieces are iterations of the folded loop whose iterations hold most of their
    /// middle events; of a new loop where they lie in none (a loop folded before that is
    /// another stage of the run), and of loop 0 where no loop was folded.
    #[test]
    fn pieces_join_the_loop_they_lie_in_or_a_new_one() {
        let n = NOT_A_STEP;
        // Two ranks; loop 0 runs at events 0–30 (set-up), loop 1 at 100–160.
        let occurrences = vec![
            vec![
                (0, 10),
                (10, 20),
                (20, 30),
                (50, 60),
                (100, 120),
                (120, 140),
                (140, 160)
            ];
            2
        ];
        let loops = vec![vec![0, 0, 0, n, 1, 1, 1]; 2];
        // Pieces inside loop 1's iterations, one in no iteration: loop 1.
        let pieces = vec![vec![(100, 121, n), (121, 141, n), (50, 60, n)]; 2];
        assert_eq!(loop_of_pieces(&occurrences, &loops, &pieces), 1);
        // Pieces after every iteration (steps the parse found no loop in): a new loop, 2.
        let pieces = vec![vec![(200, 220, n), (220, 240, n)]; 2];
        assert_eq!(loop_of_pieces(&occurrences, &loops, &pieces), 2);
        // Nothing folded: loop 0.
        let unfolded = vec![vec![n; 7]; 2];
        assert_eq!(loop_of_pieces(&occurrences, &unfolded, &pieces), 0);
        // Most pieces in loop 0's iterations: loop 0.
        let pieces = vec![vec![(0, 10, n), (10, 20, n), (120, 140, n)]; 2];
        assert_eq!(loop_of_pieces(&occurrences, &loops, &pieces), 0);
    }

    /// Messages 1 (forward exchange) and 2 (reverse), reduction 7: three steps `1 7 2 7` then
    /// four `2 1 7` (the second run's steps at the cut's rotation). The first run's steps are
    /// cut in two (the stretch before the first cut is set-up); halves back to back whose
    /// messages make the most frequent piece's (`2 1`) are joined, the first run's last reverse
    /// half, before a whole piece, is not: 7 pieces for 7 steps. Nothing is joined where halves
    /// are the most frequent pieces.
    #[test]
    fn halves_of_the_usual_step_are_one_piece() {
        let seq = [1, 7, 2, 7, 1, 7, 2, 7, 1, 7, 2, 7, 2, 1, 7, 2, 1, 7, 2, 1, 7, 2, 1, 7];
        let collective: Vec<bool> = seq.iter().map(|&x| x == 7).collect();
        let pieces = period_pieces(&seq, &collective);
        assert_eq!(pieces.len(), 9);
        let joined = joined_halves(&seq, &collective, pieces);
        assert_eq!(
            joined,
            vec![(2, 6), (6, 10), (10, 12), (12, 15), (15, 18), (18, 21), (21, 24)]
        );
        // Only the first run: `1 7` and `2 7` pieces each as frequent, no whole step: kept.
        let pieces = period_pieces(&seq[..12], &collective[..12]);
        assert_eq!(joined_halves(&seq[..12], &collective[..12], pieces.clone()), pieces);
    }

    /// Messages 1 and 2 with one reduction 7 a step (`1 2 7`), then the same step reducing
    /// twice (`1 7 2 7`) from some point on: the halves are joined although they, not the whole,
    /// are the most frequent pieces. Where wholes and pairs come in turn they are not (two
    /// different steps, a collective between them sometimes skipped), nor where a half mostly
    /// comes in other company.
    #[test]
    fn halves_after_a_change_of_the_step_are_one_piece() {
        let seq = [
            1, 2, 7, 1, 2, 7, 1, 2, 7, 1, 2, 7, 1, 7, 2, 7, 1, 7, 2, 7, 1, 7, 2, 7, 1, 7, 2, 7,
        ];
        let collective: Vec<bool> = seq.iter().map(|&x| x == 7).collect();
        let pieces = period_pieces(&seq, &collective);
        assert_eq!(pieces.len(), 11);
        assert_eq!(
            joined_halves(&seq, &collective, pieces),
            vec![(3, 6), (6, 9), (9, 12), (12, 16), (16, 20), (20, 24), (24, 28)]
        );
        // In turn: whole, pair, whole, pair, ... (after the set-up's whole).
        let seq = [
            1, 2, 7, 1, 7, 2, 7, 1, 2, 7, 1, 7, 2, 7, 1, 2, 7, 1, 7, 2, 7, 1, 2, 7, 1, 7, 2, 7,
        ];
        let collective: Vec<bool> = seq.iter().map(|&x| x == 7).collect();
        let pieces = period_pieces(&seq, &collective);
        assert_eq!(joined_halves(&seq, &collective, pieces.clone()), pieces);
        // After the change the first half mostly comes alone (`1 7 1 7 2 7`): not joined.
        let seq = [
            1, 2, 7, 1, 2, 7, 1, 2, 7, 1, 2, 7, 1, 7, 1, 7, 2, 7, 1, 7, 1, 7, 2, 7, 1, 7, 1, 7, 2, 7,
        ];
        let collective: Vec<bool> = seq.iter().map(|&x| x == 7).collect();
        let pieces = period_pieces(&seq, &collective);
        assert_eq!(joined_halves(&seq, &collective, pieces.clone()), pieces);
    }
}
