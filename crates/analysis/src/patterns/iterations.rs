//! Loop iterations matched across ranks by the majority of their messages.
//!
//! Every rank of a glued instance (a communication pattern seen once over several ranks) may
//! run its loop as back-to-back exact copies, and yet the instance chains all of them: a few
//! messages cross an iteration boundary whatever rotation the ranks' loops are cut at (Meep:
//! rank 7's sends to rank 5 and rank 3's to rank 0 are posted one step ahead of the partner's
//! receive for a third of the steps). Union–find follows every message, so one crossing pair
//! is enough to join iteration `k` to `k + 1`.
//!
//! The rule: an instance never spans two iterations of a loop on any rank, and which copy on
//! one rank is the same iteration as which copy on another is what *most* of their messages
//! say.
//!
//! 1. On each rank of the glued instance, the longest run of at least three back-to-back equal
//!    occurrences inside its part: the rank's loop copies, numbered `0, 1, …`. Every rank of the
//!    instance must have one.
//! 2. For each pair of ranks exchanging messages between their copies, the most frequent
//!    difference of copy numbers (ties: the smaller in size). Runs are ordered by facts of the
//!    process, never by rank number: most events, then the latest entry into the first copy (as
//!    the alignment orders them). From the first, runs are placed along the pairs with most
//!    messages first (a maximum spanning tree, ties by that order), so copy `i` of rank `r` is
//!    iteration `i + offset[r]`, and a renumbered run gets the same iterations.
//! 3. Construction again with every event's iteration decided first (that of its copy, or
//!    none): events of one iteration are joined, and so are events of none; a message or
//!    collective between two iterations is not followed; a set of events of no iteration then
//!    joins the iteration most of its messages and collectives lead to ([`Joins`]). So the
//!    instances do not depend on the order of the joins (which follows rank numbers). The
//!    copies are steps of one loop, so iterations whose forms differ are variants of one
//!    pattern ([`super::construct::construct_with_iterations`]).
//!
//! Kept only when fewer events are left in instances seen once. No length, count or share
//! threshold: the ranks' copies and the majority of their messages decide.

use super::chains::{glued, glued_events};
use super::construct::{construct_with_iterations, UnionFind};
use super::fold::{FoldInput, Folded};
use super::steps::NOT_A_STEP;
use super::{Events, Occurrences};
use std::collections::HashMap;

/// The iteration of every event (global ids, `offset[r]` the first of rank `r`): that of the
/// occurrence holding it, [`NOT_A_STEP`] for none. Empty when no occurrence has one.
pub(super) fn event_iterations(occurrences: &[Vec<(u32, u32)>], iterations: &[Vec<u32>], offset: &[u32]) -> Vec<u32> {
    if !iterations.iter().flatten().any(|&t| t != NOT_A_STEP) {
        return Vec::new();
    }
    let mut tag = vec![NOT_A_STEP; *offset.last().unwrap_or(&0) as usize];
    for (r, (occ, its)) in occurrences.iter().zip(iterations).enumerate() {
        for (&(s, e), &t) in occ.iter().zip(its) {
            if t != NOT_A_STEP {
                tag[(offset[r] + s) as usize..(offset[r] + e) as usize].fill(t);
            }
        }
    }
    tag
}

/// Joins of events that never put two iterations in one set, whatever the order of the joins:
/// events of one iteration are joined, and so are events of none; a join between two
/// iterations is dropped; a set of events of no iteration joins, at [`Joins::finish`], the
/// iteration most of its joins lead to (ties: the first iteration).
pub(super) struct Joins<'a> {
    tag: &'a [u32],
    /// The union–find's set of each event (its segment).
    set: &'a [u32],
    deferred: Vec<(u32, u32)>,
}

impl<'a> Joins<'a> {
    /// `tag`: [`event_iterations`] (empty: every join is made); `set`: the union–find element
    /// of each event.
    pub(super) fn new(tag: &'a [u32], set: &'a [u32]) -> Self {
        Joins {
            tag,
            set,
            deferred: Vec::new(),
        }
    }

    /// The iteration of event `g` ([`NOT_A_STEP`]: none).
    pub(super) fn iteration(&self, g: u32) -> u32 {
        self.tag.get(g as usize).copied().unwrap_or(NOT_A_STEP)
    }

    /// Join `a` and `b` (or decide at [`Joins::finish`]).
    pub(super) fn join(&mut self, uf: &mut UnionFind, a: u32, b: u32) {
        let (ta, tb) = (self.iteration(a), self.iteration(b));
        if ta == tb {
            uf.union(self.set[a as usize], self.set[b as usize]);
        } else if ta == NOT_A_STEP {
            self.deferred.push((a, b));
        } else if tb == NOT_A_STEP {
            self.deferred.push((b, a));
        }
    }

    /// Each set of events of no iteration joins the iteration most of its deferred joins lead
    /// to (ties: the smallest number).
    pub(super) fn finish(self, uf: &mut UnionFind) {
        if self.deferred.is_empty() {
            return;
        }
        let mut votes: HashMap<(u32, u32), u32> = HashMap::new();
        for &(free, numbered) in &self.deferred {
            *votes
                .entry((uf.find(self.set[free as usize]), self.tag[numbered as usize]))
                .or_default() += 1;
        }
        let mut chosen: HashMap<u32, (u32, u32)> = HashMap::new();
        for (&(root, t), &n) in &votes {
            let best = chosen.entry(root).or_insert((n, t));
            if (n, std::cmp::Reverse(t)) > (best.0, std::cmp::Reverse(best.1)) {
                *best = (n, t);
            }
        }
        // Roots are read before any of these unions changes them.
        let decided: Vec<(u32, u32)> = self
            .deferred
            .iter()
            .filter(|&&(free, numbered)| chosen[&uf.find(self.set[free as usize])].1 == self.tag[numbered as usize])
            .copied()
            .collect();
        for (free, numbered) in decided {
            uf.union(self.set[free as usize], self.set[numbered as usize]);
        }
    }
}

/// The longest run (most events) of at least three back-to-back equal occurrences of `occ`
/// inside `[lo, hi)`: indices `first..end` in `occ`.
pub(super) fn longest_run(seq: &[u32], occ: &[(u32, u32)], lo: u32, hi: u32) -> Option<(usize, usize)> {
    let from = occ.partition_point(|o| o.0 < lo);
    let to = occ.partition_point(|o| o.1 <= hi);
    let mut best: Option<(usize, usize, u32)> = None;
    let mut i = from;
    while i < to {
        let (s, e) = occ[i];
        let body = &seq[s as usize..e as usize];
        let mut j = i + 1;
        while j < to
            && occ[j].0 == occ[j - 1].1
            && occ[j].1 - occ[j].0 == e - s
            && seq[occ[j].0 as usize..occ[j].1 as usize] == *body
        {
            j += 1;
        }
        let events = occ[j - 1].1 - s;
        if j - i >= 3 && best.is_none_or(|b| events > b.2) {
            best = Some((i, j, events));
        }
        i = j;
    }
    best.map(|b| (b.0, b.1))
}

/// Glued instances cut into iterations numbered by the majority of their messages ([module
/// docs](self)). `loops[r][k]`: the loop occurrence `k` of rank `r` is an iteration of (empty:
/// none). `None` when nothing is glued, no glued instance has loop copies on two ranks, or the
/// cut leaves as many events in instances seen once.
pub(super) fn split_by_majority(input: &FoldInput, state: &Folded) -> Option<Folded> {
    let (trace, matching, events, ops) = input.parts();
    let (occurrences, loops, c) = state.parts();
    let is_glued = glued(c);
    let mut flags: Vec<Vec<u32>> = super::steps::loop_flags(occurrences, loops);
    let mut next_loop = flags
        .iter()
        .flatten()
        .chain(&c.step_loops)
        .filter(|&&l| l != NOT_A_STEP)
        .map(|&l| l + 1)
        .max()
        .unwrap_or(0);
    let mut tags: Vec<Vec<u32>> = occurrences.iter().map(|o| vec![NOT_A_STEP; o.len()]).collect();
    // Iteration numbers; each instance's leave one free on both sides for its partial copies.
    let mut next_tag = 1u32;
    let mut any = false;
    for inst in &c.instances {
        if !is_glued.get(inst.pattern as usize).copied().unwrap_or(false) {
            continue;
        }
        // 1. Each rank's loop copies inside its part.
        let runs: Vec<(usize, usize, usize)> = inst
            .parts
            .iter()
            .filter_map(|q| {
                let r = q.rank as usize;
                let seq = &events.ranks[r].symbols;
                longest_run(seq, &occurrences[r], q.first_event, q.last_event + 1).map(|(a, b)| (r, a, b))
            })
            .collect();
        // Every rank of the instance runs its loop there (NPB LU's last step, glued with the
        // final residual, has a run on two of eight ranks only: the per-plane sweep messages).
        if runs.len() < 2 || runs.len() < inst.parts.len() {
            continue;
        }
        // Each run's rank among the runs by facts of the process, not its number: most events,
        // then the latest entry into its first copy (as the alignment orders runs), so a
        // renumbered run places the same runs the same way.
        let entry = |r: usize, e: u32| -> u64 {
            let re = &events.ranks[r];
            trace.ranks[re.rank as usize].calls.enter(re.calls[e as usize] as usize)
        };
        let mut by_fact: Vec<usize> = (0..runs.len()).collect();
        by_fact.sort_by_key(|&k| {
            let (r, a, b) = runs[k];
            let occ = &occurrences[r];
            (
                std::cmp::Reverse(occ[b - 1].1 - occ[a].0),
                std::cmp::Reverse(entry(r, occ[a].0)),
                k,
            )
        });
        let mut order = vec![0usize; runs.len()];
        for (i, &k) in by_fact.iter().enumerate() {
            order[k] = i;
        }
        // Copy number of each event inside a run, per rank of the instance.
        let mut copy_at: HashMap<usize, (usize, Vec<(u32, u32)>)> = HashMap::new();
        for (k, &(r, a, b)) in runs.iter().enumerate() {
            copy_at.insert(r, (k, occurrences[r][a..b].to_vec()));
        }
        let copy_of = |r: usize, e: u32| -> Option<(usize, i64)> {
            let (k, copies) = copy_at.get(&r)?;
            let i = copies.partition_point(|o| o.1 <= e);
            (i < copies.len() && copies[i].0 <= e).then_some((*k, i as i64))
        };
        // 2. Per pair of runs, how often each difference of copy numbers occurs.
        let mut diffs: HashMap<(usize, usize), HashMap<i64, u32>> = HashMap::new();
        for m in &matching.messages {
            let (a, b) = (m.sender as usize, m.receiver as usize);
            if !copy_at.contains_key(&a) || !copy_at.contains_key(&b) || a == b {
                continue;
            }
            let ea = ops.p2p(a)[m.send_op as usize];
            let eb = ops.p2p(b)[m.recv_op as usize];
            if ea == u32::MAX || eb == u32::MAX {
                continue;
            }
            let (Some((ka, ia)), Some((kb, ib))) = (copy_of(a, ea), copy_of(b, eb)) else {
                continue;
            };
            let (key, d) = if order[ka] < order[kb] {
                ((ka, kb), ia - ib)
            } else {
                ((kb, ka), ib - ia)
            };
            *diffs.entry(key).or_default().entry(d).or_default() += 1;
        }
        // The most frequent difference per pair (ties: the smaller in size, then the smaller),
        // with its count; pairs are oriented and ordered by the runs' facts.
        let mut edges: Vec<(u32, usize, usize, i64)> = diffs
            .into_iter()
            .map(|(k, h)| {
                let (d, n) = h
                    .into_iter()
                    .max_by_key(|&(d, n)| (n, std::cmp::Reverse((d.abs(), d))))
                    .expect("non-empty");
                (n, k.0, k.1, d)
            })
            .collect();
        edges.sort_by_key(|&(n, a, b, _)| (std::cmp::Reverse(n), order[a], order[b]));
        // Offsets along a maximum spanning tree from the first run by its facts.
        let root = by_fact[0];
        let mut offset: Vec<Option<i64>> = vec![None; runs.len()];
        offset[root] = Some(0);
        loop {
            // The heaviest edge between a placed and an unplaced run.
            let next = edges
                .iter()
                .find(|&&(_, a, b, _)| offset[a].is_some() != offset[b].is_some());
            let Some(&(_, a, b, d)) = next else { break };
            // copy(a) - copy(b) = d for one iteration: offset[b] = offset[a] + d.
            match (offset[a], offset[b]) {
                (Some(oa), None) => offset[b] = Some(oa + d),
                (None, Some(ob)) => offset[a] = Some(ob - d),
                _ => unreachable!(),
            }
        }
        let placed: Vec<usize> = (0..runs.len()).filter(|&k| offset[k].is_some()).collect();
        if placed.len() < 2 {
            continue;
        }
        let low = placed
            .iter()
            .map(|&k| offset[k].expect("placed"))
            .min()
            .expect("placed");
        let lid = next_loop;
        next_loop += 1;
        let mut width = 0u32;
        for &k in &placed {
            let (r, a, b) = runs[k];
            let o = (offset[k].expect("placed") - low) as u32;
            for (i, j) in (a..b).enumerate() {
                tags[r][j] = next_tag + o + i as u32;
                if flags[r][j] == NOT_A_STEP {
                    flags[r][j] = lid;
                }
                width = width.max(o + i as u32 + 1);
            }
        }
        next_tag += width + 2;
        any = true;
    }
    if !any {
        return None;
    }
    let occurrences = with_partial_copies(events, occurrences, &mut flags, &mut tags);
    let redone = construct_with_iterations(trace, matching, events, ops, &occurrences, &flags, &tags);
    if glued_events(&redone) >= glued_events(c) {
        return None;
    }
    Some(Folded {
        occurrences,
        loops: flags,
        communication: redone,
    })
}

/// Each run of numbered copies extended by one iteration before its first copy and after its
/// last where a copy's length of events there is in no occurrence: the rotation the alignment
/// cut the run at leaves a whole iteration there as single events (Meep), which belongs to the
/// iteration before (after) the run, not to whatever its messages reach first.
fn with_partial_copies(
    events: &Events,
    occurrences: &[Vec<(u32, u32)>],
    flags: &mut [Vec<u32>],
    tags: &mut [Vec<u32>],
) -> Occurrences {
    let mut out: Occurrences = Vec::with_capacity(occurrences.len());
    for (r, occ) in occurrences.iter().enumerate() {
        let (t, f) = (&tags[r], &flags[r]);
        let mut o2 = Vec::with_capacity(occ.len() + 2);
        let (mut t2, mut f2) = (Vec::with_capacity(occ.len() + 2), Vec::with_capacity(occ.len() + 2));
        for k in 0..occ.len() {
            let numbered = t[k] != NOT_A_STEP;
            let first = numbered && (k == 0 || t[k - 1] == NOT_A_STEP);
            let len = occ[k].1 - occ[k].0;
            if first && t[k] > 0 {
                let free = if k == 0 { 0 } else { occ[k - 1].1 };
                if occ[k].0 >= free + len {
                    let s = occ[k].0 - len;
                    o2.push((s, occ[k].0));
                    t2.push(t[k] - 1);
                    f2.push(f[k]);
                }
            }
            o2.push(occ[k]);
            t2.push(t[k]);
            f2.push(f[k]);
            let last = numbered && (k + 1 == occ.len() || t[k + 1] == NOT_A_STEP);
            if last {
                let end = occ.get(k + 1).map_or(events.ranks[r].symbols.len() as u32, |n| n.0);
                if end >= occ[k].1 + len {
                    o2.push((occ[k].1, occ[k].1 + len));
                    t2.push(t[k] + 1);
                    f2.push(f[k]);
                }
            }
        }
        out.push(o2);
        tags[r] = t2;
        flags[r] = f2;
    }
    out
}
