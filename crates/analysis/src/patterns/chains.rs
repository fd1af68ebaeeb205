//! An instance never spans more than one iteration of a loop on any rank: instances that chain
//! a loop's iterations are split at the iterations' boundaries.
//!
//! A *chained* instance is a communication pattern seen once over several ranks whose parts
//! hold several exact copies of a loop body (the body of another pattern, run at least three
//! times back to back on some rank). It arises when the ranks' iterations are not all alike:
//! on GROMACS some ranks have steps with 1–3 messages fewer than the others, so their
//! occurrences are cut elsewhere, straddle their partners' steps and join them all into one
//! instance. The ranks' own copies of the loop body fix where iterations are; every other event
//! of the chained instance belongs to the iteration its messages and collectives lead to:
//!
//! 1. *Seeds*: on each rank of the instance, the exact copies of the loop pattern's events on
//!    that rank inside the instance's part.
//! 2. A union–find joins each seed's events, and every message and collective between events
//!    of the instance; a component holding a seed is an iteration. Every event in it belongs
//!    to that iteration: an event of a short step on one rank follows its partner's step,
//!    whatever events its own step lacks or adds.
//! 3. Events no seed reaches (a step every rank runs differently, as an energy step adding a
//!    reduction) form iterations of their own: on each rank, a maximal run of them is joined,
//!    and the runs connected through their messages are one iteration.
//! 4. Each rank's part is cut where the iteration of its events changes; the pieces are
//!    occurrences of the loop, joined again as steps of one loop (variants of its pattern,
//!    [`super::construct_with_steps`]).
//!
//! No length, count or share threshold: the ranks' exact copies and the messages decide. The
//! split is kept only when fewer events are left in instances seen once.

use super::construct::UnionFind;
use super::construct::{construct_with_iterations, CommunicationAnalysis};
use super::fold::{FoldInput, Folded};
use super::steps::{merged_pieces, NOT_A_STEP};
use super::Occurrences;

/// A rank and some of its occurrences.
type RankCopies = (u32, Vec<(u32, u32)>);

/// Maps consulted per event: foldhash (nothing here depends on their iteration order).
type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// Instances seen once over several ranks (the glued or chained ones).
pub(super) fn glued(c: &CommunicationAnalysis) -> Vec<bool> {
    c.patterns.iter().map(|p| p.is_one_off_over_ranks()).collect()
}

/// Events in instances seen once over several ranks.
pub(super) fn glued_events(c: &CommunicationAnalysis) -> u64 {
    c.patterns
        .iter()
        .zip(glued(c))
        .filter(|(_, g)| *g)
        .map(|(p, _)| p.events_covered)
        .sum()
}

/// Starts of the non-overlapping exact copies of `body` in `seq[lo..hi]`, left to right
/// (Knuth–Morris–Pratt, [`super::steps::exact_copies`]: O(hi − lo + |body|)).
fn copies_in(seq: &[u32], lo: usize, hi: usize, body: &[u32]) -> Vec<u32> {
    match seq.get(lo..hi) {
        Some(part) => super::steps::exact_copies(part, body)
            .into_iter()
            .map(|s| s + lo as u32)
            .collect(),
        None => Vec::new(),
    }
}

/// The chain split's local ids (numbered as events are claimed) with the rank, event and loop
/// group of each, stored as runs of consecutive ids over consecutive events of one rank and
/// group: a few runs a rank instead of three words an event (LU C 128: 16.5 M ids).
#[derive(Default)]
struct Runs {
    /// (first id, rank, first event, group) of each run, ids ascending.
    starts: Vec<(u32, u32, u32, u32)>,
    /// Number of ids.
    len: u32,
}

/// One run of [`Runs`]: ids `ids` are the events from `event` on of `rank`.
struct Run {
    ids: std::ops::Range<usize>,
    rank: u32,
    event: u32,
    group: u32,
}

impl Runs {
    /// The next id, for event `event` of rank `rank` claimed by group `group`.
    fn push(&mut self, rank: u32, event: u32, group: u32) -> u32 {
        let id = self.len;
        let continues = self
            .starts
            .last()
            .is_some_and(|&(first, r, e, g)| r == rank && g == group && e as u64 + (id - first) as u64 == event as u64);
        if !continues {
            self.starts.push((id, rank, event, group));
        }
        self.len += 1;
        id
    }

    /// Ids for the `count` events from `event` on of rank `rank` claimed by group `group`:
    /// [`Runs::push`] of each in turn; the first id.
    fn push_range(&mut self, rank: u32, event: u32, count: u32, group: u32) -> u32 {
        let first = self.len;
        if count > 0 {
            self.push(rank, event, group);
            self.len += count - 1;
        }
        first
    }

    fn len(&self) -> usize {
        self.len as usize
    }

    fn iter(&self) -> impl Iterator<Item = Run> + '_ {
        self.starts.iter().enumerate().map(|(k, &(first, rank, event, group))| {
            let end = self.starts.get(k + 1).map_or(self.len, |x| x.0);
            Run {
                ids: first as usize..end as usize,
                rank,
                event,
                group,
            }
        })
    }

    /// Every id in order with its rank, event and group.
    fn each(&self) -> impl Iterator<Item = (usize, u32, u32, u32)> + '_ {
        self.iter().flat_map(|run| {
            let first = run.ids.start;
            run.ids
                .map(move |id| (id, run.rank, run.event + (id - first) as u32, run.group))
        })
    }

    /// Maximal ranges of ids of one rank and one group.
    fn blocks(&self) -> Vec<std::ops::Range<usize>> {
        let mut out: Vec<std::ops::Range<usize>> = Vec::new();
        let mut last = None;
        for run in self.iter() {
            match out.last_mut() {
                Some(b) if last == Some((run.rank, run.group)) => b.end = run.ids.end,
                _ => out.push(run.ids.clone()),
            }
            last = Some((run.rank, run.group));
        }
        out
    }

    /// The ids of group `group` (claimed in one stretch: the groups claim their events in turn).
    fn ids_of_group(&self, group: u32) -> std::ops::Range<u32> {
        let first = self.starts.iter().find(|x| x.3 == group).map_or(self.len, |x| x.0);
        let end = self.starts.iter().find(|x| x.3 > group).map_or(self.len, |x| x.0);
        first..end.max(first)
    }
}

/// The distinct kinds (rank, symbol) of a loop pattern's body on each of its ranks, numbered
/// `0..len`: a piece of events holds the body's kinds when it sets all their bits.
struct BodyKinds {
    /// Per rank of the pattern (ascending): its distinct symbols with their bit, by symbol.
    ranks: Vec<(u32, Vec<(u32, u32)>)>,
    len: usize,
}

impl BodyKinds {
    fn of(pattern: &super::CommunicationPattern) -> BodyKinds {
        let mut len = 0;
        let ranks = pattern
            .ranks
            .iter()
            .map(|r| {
                let mut xs: Vec<u32> = pattern.events[r].ids().to_vec();
                xs.sort_unstable();
                xs.dedup();
                let numbered = xs
                    .into_iter()
                    .map(|x| {
                        len += 1;
                        (x, len as u32 - 1)
                    })
                    .collect();
                (*r, numbered)
            })
            .collect();
        BodyKinds { ranks, len }
    }

    /// Words of a piece's bits.
    fn words(&self) -> usize {
        self.len.div_ceil(64)
    }

    /// The kinds on rank `r` (by symbol, with their bits); empty off the pattern's ranks.
    fn on_rank(&self, r: u32) -> &[(u32, u32)] {
        match self.ranks.binary_search_by_key(&r, |x| x.0) {
            Ok(i) => &self.ranks[i].1,
            Err(_) => &[],
        }
    }

    /// Whether `bits` hold every kind.
    fn all_in(&self, bits: &[u64]) -> bool {
        (0..self.len).all(|b| bits[b / 64] & (1 << (b % 64)) != 0)
    }
}

/// Chained instances split at their iterations ([module docs](self)). `loops[r][k]`: the loop
/// occurrence `k` of rank `r` is an iteration of ([`NOT_A_STEP`]: none; empty: no loop
/// folded yet). `None` when no instance is chained or the split leaves as many events in
/// instances seen once.
pub(super) fn split_chains(input: &FoldInput, state: &Folded) -> Option<Folded> {
    let (trace, matching, events, ops) = input.parts();
    let (occurrences, loops, c) = state.parts();
    let is_glued = glued(c);
    if !is_glued.iter().any(|&g| g) {
        return None;
    }
    // Per pattern, its instances' parts (rank, first, last), sorted: which patterns are loops.
    let parts = super::steps::instance_parts(c);
    let looped = super::steps::is_looped;
    // Loop patterns, most events covered first.
    let mut candidates: Vec<usize> = (0..c.patterns.len())
        .filter(|&p| !is_glued[p] && c.patterns[p].occurrences >= 3 && looped(&parts[p]))
        .collect();
    candidates.sort_by_key(|&p| (std::cmp::Reverse(c.patterns[p].events_covered), p));
    if candidates.is_empty() {
        return None;
    }
    let mut is_loop = vec![false; c.patterns.len()];
    for &p in &candidates {
        is_loop[p] = true;
    }
    let nranks = events.ranks.len();
    // Per chained instance, its loop: the loop pattern over the same ranks covering most
    // events, when two exact copies of its events lie on one rank of the instance.
    // (loop pattern, instances)
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    // Per rank, the loop copies of chained instances no group splits (see below).
    let mut left_whole: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nranks];
    for (k, inst) in c.instances.iter().enumerate() {
        if !is_glued.get(inst.pattern as usize).copied().unwrap_or(false) {
            continue;
        }
        // The main loop over the instance's ranks only: a smaller loop inside a one-off
        // stretch (NPB LU's set-up) is no iteration of the run's loop.
        let main = candidates.iter().copied().find(|&p| {
            let pat = &c.patterns[p];
            pat.ranks.len() == inst.parts.len() && inst.parts.iter().all(|q| pat.ranks.binary_search(&q.rank).is_ok())
        });
        let found = main.filter(|&p| {
            let pat = &c.patterns[p];
            inst.parts.iter().any(|q| {
                let seq = &events.ranks[q.rank as usize].symbols;
                pat.events.get(&q.rank).is_some_and(|body| {
                    copies_in(seq, q.first_event as usize, q.last_event as usize + 1, body.ids()).len() >= 2
                })
            })
        });
        match found {
            Some(p) => match groups.iter_mut().find(|g| g.0 == p) {
                Some(g) => g.1.push(k),
                None => groups.push((p, vec![k])),
            },
            None => {
                // Left to the split by the ranks' majority ([`super::iterations`]) when every
                // rank runs a loop inside it: those copies stay whole here.
                let runs: Option<Vec<RankCopies>> = inst
                    .parts
                    .iter()
                    .map(|q| {
                        let seq = &events.ranks[q.rank as usize].symbols;
                        let occ = &occurrences[q.rank as usize];
                        super::iterations::longest_run(seq, occ, q.first_event, q.last_event + 1)
                            .map(|(a, b)| (q.rank, occ[a..b].to_vec()))
                    })
                    .collect();
                if let Some(runs) = runs.filter(|r| r.len() >= 2) {
                    for (r, copies) in runs {
                        left_whole[r as usize].extend(copies);
                    }
                }
            }
        }
    }
    if groups.is_empty() {
        return None;
    }
    // The loop explaining most takes its territory first.
    groups.sort_by_key(|g| (std::cmp::Reverse(c.patterns[g.0].events_covered), g.0));
    // Per loop, its seeds (rank, start, end): on each of its ranks the exact copies of its
    // events there and the occurrences already folded as its iterations; its territory on a
    // rank: the chained instances' parts and the stretch from the first seed to the last.
    let mut seeds: Vec<Vec<(u32, u32, u32)>> = Vec::with_capacity(groups.len());
    let mut local: Vec<Vec<u32>> = vec![Vec::new(); nranks];
    // Local ids -> (rank, event, index in `groups`), in runs of consecutive events.
    let mut runs = Runs::default();
    for (gi, (p, insts)) in groups.iter().enumerate() {
        let pat = &c.patterns[*p];
        let folded = c.step_loops.get(*p).copied().unwrap_or(NOT_A_STEP);
        // Instances of loops explaining more than this one stay whole (NAS MG's V-cycles, when
        // this loop is the halo exchange inside them).
        let mut protected: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nranks];
        for inst in &c.instances {
            let q = inst.pattern as usize;
            if q < c.patterns.len() && is_loop[q] && c.patterns[q].events_covered > pat.events_covered {
                for part in &inst.parts {
                    protected[part.rank as usize].push((part.first_event, part.last_event + 1));
                }
            }
        }
        // So do the copies of a loop, longer than this one's body, that a chained instance no
        // group splits holds on every rank (hypre's PCG iterations: a smaller exchange loop
        // seeded across the whole run would cut them on some ranks, and the majority split
        // then finds no run there).
        for &r in &pat.ranks {
            if let Some(body) = pat.events.get(&r) {
                let m = body.len() as u32;
                protected[r as usize].extend(left_whole[r as usize].iter().filter(|o| o.1 - o.0 > m));
            }
            protected[r as usize].sort_unstable();
        }
        let is_protected = |r: u32, ev: u32| {
            let guard = &protected[r as usize];
            let i = guard.partition_point(|g| g.0 <= ev);
            i > 0 && guard[i - 1].1 > ev
        };
        // Each rank's seeds, found on every core natively (a search of the rank's events).
        let found = crate::logical::per_rank::each_index(pat.ranks.len(), |k| {
            let r = pat.ranks[k];
            let seq = &events.ranks[r as usize].symbols;
            let body = pat.events[&r].ids();
            let mut here: Vec<(u32, u32)> = copies_in(seq, 0, seq.len(), body)
                .into_iter()
                .map(|s| (s, s + body.len() as u32))
                .collect();
            if folded != NOT_A_STEP {
                if let (Some(occ), Some(fl)) = (occurrences.get(r as usize), loops.get(r as usize)) {
                    here.extend(occ.iter().zip(fl).filter(|(_, &l)| l == folded).map(|(o, _)| *o));
                }
            }
            here.retain(|&(s, e)| !(s..e).any(|ev| is_protected(r, ev)));
            here
        });
        let mut mine = Vec::new();
        for (&r, here) in pat.ranks.iter().zip(found) {
            let seq = &events.ranks[r as usize].symbols;
            // (start, end, whether protected events are left out).
            let mut spans: Vec<(u32, u32, bool)> = Vec::new();
            if let (Some(lo), Some(hi)) = (here.iter().map(|h| h.0).min(), here.iter().map(|h| h.1).max()) {
                spans.push((lo, hi, true));
            }
            for &k in insts {
                for q in c.instances[k].parts.iter().filter(|q| q.rank == r) {
                    spans.push((q.first_event, q.last_event + 1, false));
                }
            }
            spans.sort_unstable();
            let l = &mut local[r as usize];
            if l.is_empty() {
                *l = vec![u32::MAX; seq.len()];
            }
            for (s, e, guarded) in spans {
                let claimable = |l: &[u32], ev: u32| l[ev as usize] == u32::MAX && !(guarded && is_protected(r, ev));
                // Each stretch of claimable events takes consecutive ids.
                let mut ev = s;
                while ev < e {
                    if !claimable(l, ev) {
                        ev += 1;
                        continue;
                    }
                    let from = ev;
                    while ev < e && claimable(l, ev) {
                        ev += 1;
                    }
                    let first = runs.push_range(r, from, ev - from, gi as u32);
                    for (id, x) in (first..).zip(from..ev) {
                        l[x as usize] = id;
                    }
                }
            }
            mine.extend(here.into_iter().map(|(s, e)| (r, s, e)));
        }
        seeds.push(mine);
    }
    let n = runs.len();
    // The ids of each loop group: one range, as the groups claim their events in turn.
    let group_ids: Vec<std::ops::Range<u32>> = (0..groups.len() as u32).map(|gi| runs.ids_of_group(gi)).collect();
    let id_of = |r: usize, e: u32| {
        local
            .get(r)
            .and_then(|l| l.get(e as usize))
            .copied()
            .unwrap_or(u32::MAX)
    };
    // Links: matched messages and the j-th collective of a communicator, between local events.
    let has_local = |r: usize| !local[r].is_empty();
    // The messages' links in message order, the two halves of the messages on two cores
    // natively.
    let message_links = |ms: &[tracelogic_model::Message]| {
        let mut links: Vec<(u32, u32)> = Vec::with_capacity(ms.len());
        for m in ms {
            if !has_local(m.sender as usize) || !has_local(m.receiver as usize) {
                continue;
            }
            let (ea, eb) = (
                ops.p2p(m.sender as usize)[m.send_op as usize],
                ops.p2p(m.receiver as usize)[m.recv_op as usize],
            );
            if ea == u32::MAX || eb == u32::MAX {
                continue;
            }
            let (la, lb) = (id_of(m.sender as usize, ea), id_of(m.receiver as usize, eb));
            if la != u32::MAX && lb != u32::MAX {
                links.push((la, lb));
            }
        }
        links
    };
    let (first_half, second_half) = matching.messages.split_at(matching.messages.len() / 2);
    let (later, mut links) =
        crate::logical::per_rank::both(|| message_links(second_half), || message_links(first_half));
    links.extend_from_slice(&later);
    drop(later);
    let mut first_of: FastMap<(u32, u32), u32> = FastMap::default();
    for r in (0..nranks).filter(|&r| has_local(r)) {
        let coll = &trace.ranks[events.ranks[r].rank as usize].collectives;
        let mut seen: FastMap<u32, u32> = FastMap::default();
        for j in 0..coll.len() {
            let nth = seen.entry(coll.comm[j]).or_default();
            let key = (coll.comm[j], *nth);
            *nth += 1;
            let e = ops.collectives(r)[j];
            if e == u32::MAX {
                continue;
            }
            let l = id_of(r, e);
            if l == u32::MAX {
                continue;
            }
            match first_of.entry(key) {
                std::collections::hash_map::Entry::Occupied(f) => links.push((*f.get(), l)),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(l);
                }
            }
        }
    }
    // 1–2. Seeds joined, and everything their links reach.
    let mut uf = UnionFind((0..n as u32).collect());
    let mut seeded = vec![false; n];
    for (gi, mine) in seeds.iter().enumerate() {
        for &(r, s, e) in mine {
            let first = id_of(r as usize, s);
            if first == u32::MAX || !group_ids[gi].contains(&first) {
                continue;
            }
            for ev in s..e {
                let l = id_of(r as usize, ev);
                if l == u32::MAX || !group_ids[gi].contains(&l) {
                    continue;
                }
                seeded[l as usize] = true;
                uf.union(first, l);
            }
        }
    }
    for &(a, b) in &links {
        uf.union(a, b);
    }
    // Whether a component holds a seed, flagged at its root in place of `seeded`: a root is the
    // smallest id of its component, so it is read before any of its members flags it. Each
    // id's root is found once, kept in `label`, which then keeps the roots of seeded ones.
    let mut has_seed = seeded;
    let mut label: Vec<u32> = Vec::with_capacity(n);
    for l in 0..n as u32 {
        let root = uf.find(l);
        if has_seed[l as usize] {
            has_seed[root as usize] = true;
        }
        label.push(root);
    }
    for root in label.iter_mut() {
        if !has_seed[*root as usize] {
            *root = u32::MAX;
        }
    }
    drop(has_seed);
    // Unreached events between two events of one iteration on their rank belong to it (a
    // message between two short-step ranks inside their steps), and so do their partners; to a
    // fixpoint (each round labels more events, so at most `n` rounds, in practice a few).
    loop {
        let mut changed = false;
        // Each block: the ids of one rank claimed by one loop group.
        for block in runs.blocks() {
            let mut l = block.start;
            while l < block.end {
                if label[l] != u32::MAX {
                    l += 1;
                    continue;
                }
                let mut e = l;
                while e < block.end && label[e] == u32::MAX {
                    e += 1;
                }
                // The run l..e of unreached events on one rank of one instance, contiguous in
                // the part (local ids follow the events): the labels on both sides.
                let before = (l > block.start).then(|| label[l - 1]);
                let after = (e < block.end).then(|| label[e]);
                if let (Some(a), Some(b)) = (before, after) {
                    if a == b && a != u32::MAX {
                        label[l..e].fill(a);
                        changed = true;
                    }
                }
                l = e;
            }
        }
        if !changed {
            break;
        }
        loop {
            let mut spread = false;
            for &(a, b) in &links {
                let (la, lb) = (label[a as usize], label[b as usize]);
                if la != u32::MAX && lb == u32::MAX {
                    label[b as usize] = la;
                    spread = true;
                } else if lb != u32::MAX && la == u32::MAX {
                    label[a as usize] = lb;
                    spread = true;
                }
            }
            if !spread {
                break;
            }
        }
    }
    // 3. The rest: each rank's runs of unreached events, joined through their links (in the
    // first union–find's memory).
    let mut uf2 = uf;
    for (l, parent) in uf2.0.iter_mut().enumerate() {
        *parent = l as u32;
    }
    for run in runs.iter() {
        for l in run.ids.start + 1..run.ids.end {
            if label[l] == u32::MAX && label[l - 1] == u32::MAX {
                uf2.union(l as u32 - 1, l as u32);
            }
        }
    }
    for &(a, b) in &links {
        if label[a as usize] == u32::MAX && label[b as usize] == u32::MAX {
            uf2.union(a, b);
        }
    }
    for l in 0..n as u32 {
        if label[l as usize] == u32::MAX {
            // Ids of the second kind above every first-kind id.
            label[l as usize] = n as u32 + uf2.find(l);
        }
    }
    // 4. Each rank's part cut where the label changes.
    // The loop of each loop pattern: the one it was folded as, else a new one per pattern.
    let mut next_loop = loops
        .iter()
        .flatten()
        .chain(&c.step_loops)
        .filter(|&&l| l != NOT_A_STEP)
        .map(|&l| l + 1)
        .max()
        .unwrap_or(0);
    let mut new_loops: Vec<(usize, u32)> = Vec::new();
    let mut loop_id = |p: usize| -> u32 {
        match c.step_loops.get(p) {
            Some(&l) if l != NOT_A_STEP => l,
            _ => match new_loops.iter().find(|x| x.0 == p) {
                Some(&(_, l)) => l,
                None => {
                    new_loops.push((p, next_loop));
                    next_loop += 1;
                    next_loop - 1
                }
            },
        }
    };
    let mut out: Occurrences = occurrences.to_vec();
    let mut flags: Vec<Vec<u32>> = super::steps::loop_flags(occurrences, loops);
    // New pieces per rank: (start, end, loop).
    let mut pieces: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); nranks];
    // Every instance of the loop pattern outside the chained ones is an iteration too.
    let mut loop_parts: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); nranks];
    let lids: Vec<u32> = groups.iter().map(|g| loop_id(g.0)).collect();
    // Events no seed reaches form an iteration when they hold, on every rank of the loop, every
    // kind of event of its body there (a first step whose exchanges run in another order);
    // otherwise (an energy reduction between two steps, set-up) they are occurrences of their
    // own, no iterations. Per piece of unreached events (its label): its loop and which of the
    // body's kinds (rank, symbol) it holds, one bit each ([`BodyKinds`]), not a set of every
    // kind seen (8.3 M events in 111 pieces on LU C 128); runs of consecutive ids share a
    // label, so the map of pieces is consulted once per run.
    let bodies: Vec<BodyKinds> = groups.iter().map(|g| BodyKinds::of(&c.patterns[g.0])).collect();
    let mut hole_index: FastMap<u32, u32> = FastMap::default();
    // (label, loop) of each piece, and the bits of its loop body's kinds it holds.
    let mut holes: Vec<(u32, u32)> = Vec::new();
    let mut held: Vec<Vec<u64>> = Vec::new();
    for run in runs.iter() {
        let symbols = &events.ranks[run.rank as usize].symbols;
        let mut previous: Option<(u32, u32)> = None;
        // The body's kinds on this rank for the piece's loop: (loop, kinds).
        let mut kinds: Option<(u32, &[(u32, u32)])> = None;
        let mut last_symbol = None;
        for (id, e) in run.ids.clone().zip(run.event..) {
            if (label[id] as usize) < n {
                continue;
            }
            let k = match previous {
                Some((l, k)) if l == label[id] => k,
                _ => {
                    let next = holes.len() as u32;
                    let k = *hole_index.entry(label[id]).or_insert(next);
                    if k == next {
                        holes.push((label[id], run.group));
                        held.push(vec![0; bodies[run.group as usize].words()]);
                    }
                    previous = Some((label[id], k));
                    last_symbol = None;
                    k
                }
            };
            let g = holes[k as usize].1;
            let on_rank = match kinds {
                Some((kg, on)) if kg == g => on,
                _ => {
                    let on = bodies[g as usize].on_rank(run.rank);
                    kinds = Some((g, on));
                    on
                }
            };
            let x = symbols[e as usize];
            if last_symbol == Some(x) || on_rank.is_empty() {
                continue;
            }
            last_symbol = Some(x);
            if let Ok(i) = on_rank.binary_search_by_key(&x, |b| b.0) {
                let bit = on_rank[i].1 as usize;
                held[k as usize][bit / 64] |= 1 << (bit % 64);
            }
        }
    }
    drop(hole_index);
    let iteration_hole: FastMap<u32, bool> = holes
        .iter()
        .zip(&held)
        .map(|(&(l, gi), bits)| (l, bodies[gi as usize].all_in(bits)))
        .collect();
    let close = |run: Option<(u32, u32, u32, u32, u32)>, pieces: &mut Vec<Vec<(u32, u32, u32)>>| {
        if let Some((r, s, e, l, gi)) = run {
            let gi = gi as usize;
            let flag = if (l as usize) < n || iteration_hole.get(&l).copied().unwrap_or(false) {
                lids[gi]
            } else {
                NOT_A_STEP
            };
            pieces[r as usize].push((s, e, flag));
        }
    };
    // Each rank's territory cut where the label changes (local ids follow the events):
    // (rank, start, end, label, loop) of the run being cut.
    let mut run: Option<(u32, u32, u32, u32, u32)> = None;
    for (id, r, e, gi) in runs.each() {
        let l = label[id];
        match run {
            Some((rr, _, ref mut t, cur, g)) if rr == r && *t == e && cur == l && g == gi => *t = e + 1,
            _ => {
                close(run.take(), &mut pieces);
                run = Some((r, e, e + 1, l, gi));
            }
        }
    }
    close(run.take(), &mut pieces);
    // Every instance of a loop pattern is an iteration too.
    for (gi, (p, _)) in groups.iter().enumerate() {
        for &(r, s, e) in &parts[*p] {
            loop_parts[r as usize].push((s, e + 1, lids[gi]));
        }
    }
    for r in 0..nranks {
        if pieces[r].is_empty() && loop_parts[r].is_empty() {
            continue;
        }
        pieces[r].sort_unstable();
        // Flag the loop pattern's own occurrences.
        for &(s, e, lid) in &loop_parts[r] {
            if let Ok(i) = out[r].binary_search(&(s, e)) {
                if flags[r][i] == NOT_A_STEP {
                    flags[r][i] = lid;
                }
            }
        }
        if pieces[r].is_empty() {
            continue;
        }
        // Occurrences a piece overlaps are dropped (the pieces cover the chained parts whole).
        let (occ, fl) = merged_pieces(&out[r], &flags[r], &pieces[r]);
        out[r] = occ;
        flags[r] = fl;
    }
    let redone = construct_with_iterations(trace, matching, events, ops, &out, &flags, &[]);
    // Kept when fewer events are left in instances seen once and the pattern explaining most
    // explains no less (re-cutting a loop folded with its variants at another loop's copies
    // would undo the fold).
    let most = |c: &CommunicationAnalysis| c.patterns.iter().map(|p| p.events_covered).max().unwrap_or(0);
    if glued_events(&redone) >= glued_events(c) || most(&redone) < most(c) {
        return None;
    }
    Some(Folded {
        occurrences: out,
        loops: flags,
        communication: redone,
    })
}
