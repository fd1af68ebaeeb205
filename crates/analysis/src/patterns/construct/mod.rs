//! Communication pattern construction (thesis §4.7, Algorithm 4.7) and event graphs.
//!
//! The events of every rank are nodes of one union–find: the events of one per-rank pattern
//! occurrence are joined, a send is joined with the receive that consumed it, and the `j`-th
//! collective of a communicator is joined across its members. A connected set is one *instance*:
//! the partner patterns (PPL) and partner single events (PEL) of the thesis are exactly what the
//! joins pull in. Instances whose per-rank event strings are equal are occurrences of one
//! communication pattern. Instances that contain no per-rank pattern occurrence and happen once
//! are *outside* any pattern (they stay in [`CommunicationAnalysis::instances`] with
//! [`OUTSIDE`]). O(events · α) plus hashing the instance signatures.

use super::{EventRef, Events};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Maps consulted per event, component and collective: foldhash instead of SipHash (nothing
/// here depends on their iteration order).
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
use tracelogic_model::{Matching, Rank, Time, Trace};

mod event_graph;
mod lanes;
mod names;
mod op_index;
pub use event_graph::{event_graph, event_graphs, example_events, Arrow, EventGraph, GraphEvent};
pub use lanes::{timeline, PatternTimeline, TimelineLane, TimelineSpan};
pub use names::{EventNames, Names};
pub(crate) use op_index::{op_events, OpIndex, UnionFind};

/// Pattern id of instances outside any communication pattern.
pub const OUTSIDE: u32 = u32::MAX;
/// Instances per pattern whose events are kept for event graphs.
pub const KEPT_EXAMPLES: usize = 64;

/// A pattern of communication across ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommunicationPattern {
    /// Index in [`CommunicationAnalysis::patterns`].
    pub id: usize,
    /// World ranks involved, ascending.
    pub ranks: Vec<Rank>,
    /// Each rank's events, in order (symbol ids over the analysis' name table; serialized as
    /// the names).
    pub events: BTreeMap<Rank, EventNames>,
    /// Number of occurrences.
    pub occurrences: usize,
    /// Start time (ns) of each occurrence, ascending.
    pub positions: Vec<Time>,
    /// `[start, end]` time of each occurrence.
    pub spans: Vec<(Time, Time)>,
    /// First event index of the first occurrence on each rank.
    pub first_events: BTreeMap<Rank, u32>,
    /// True when built around per-rank pattern occurrences (false: a repeated exchange of single
    /// events).
    pub from_rank_patterns: bool,
    /// Events its occurrences cover on all ranks: occurrences × events per occurrence (what
    /// the pattern explains; patterns are listed by it, most first).
    #[serde(default)]
    pub events_covered: u64,
    /// The forms of one loop iteration when its iterations differ (a step with re-neighbouring
    /// or output besides the plain step; [`super::steps`]): the pattern's own form (`events`)
    /// first, then the others, most frequent first. Their occurrences add up to
    /// `occurrences`. Empty when every occurrence has the same events.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<PatternVariant>,
}

impl CommunicationPattern {
    /// An instance seen once over several ranks, built from per-rank occurrences: what chained
    /// messages glue into one (the chain split's and the loop-level redo's target).
    pub fn is_one_off_over_ranks(&self) -> bool {
        self.occurrences == 1 && self.from_rank_patterns && self.ranks.len() >= 2
    }

    /// A pattern over several ranks none of whose forms is seen twice: an instance seen once
    /// ([`Self::is_one_off_over_ranks`]), or a loop whose iterations all differ, also rank by
    /// rank (GROMACS on 16 ranks: three stretches of about 50 MD steps each, glued as ranks parse
    /// at different loop levels, folded as "iterations" in three forms). What repeats is inside
    /// it, not it. A loop whose iterations differ as a whole, but where some rank runs one part
    /// twice, repeats: its ranks skip or add messages independently, so the combination over the
    /// ranks is new each time but each rank's step is not (GROMACS with dynamic load balancing).
    pub fn repeats_no_form(&self) -> bool {
        let once = if self.variants.is_empty() {
            self.occurrences == 1
        } else {
            self.variants.iter().all(|v| v.occurrences == 1) && !self.repeats_on_a_rank()
        };
        once && self.from_rank_patterns && self.ranks.len() >= 2
    }

    /// Whether two forms ([`Self::variants`]) have the same events on some rank. O(forms × their
    /// events).
    fn repeats_on_a_rank(&self) -> bool {
        let mut seen: std::collections::HashSet<(Rank, Vec<&str>)> = std::collections::HashSet::new();
        self.variants.iter().any(|v| {
            v.events.iter().any(|(&r, names)| {
                let key = (
                    r,
                    names
                        .ids()
                        .iter()
                        .map(|&i| names.table()[i as usize].as_str())
                        .collect(),
                );
                !seen.insert(key)
            })
        })
    }
}

impl CommunicationAnalysis {
    /// The pattern explaining most (events covered) among those some form of which repeats,
    /// with its index (ties: the earlier); what the fold stages refine. O(patterns).
    pub fn explaining_most(&self) -> Option<(usize, &CommunicationPattern)> {
        self.patterns
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.repeats_no_form())
            .max_by_key(|(k, p)| (p.events_covered, std::cmp::Reverse(*k)))
    }

    /// Reorder the patterns so that those some form of which repeats come first, then those
    /// none of whose forms is seen twice ([`CommunicationPattern::repeats_no_form`]: an
    /// instance seen once over several ranks), each group still by events covered. Such an
    /// instance is not a repetition but what messages chained together where the program's
    /// repetitions did not line up (a direct solver's factorisation, whose `MPI_ANY_SOURCE`
    /// receives take the messages in another order each time; a master serving its workers in
    /// data order); listed first by its size, it hid every pattern that does repeat. Ids are
    /// renumbered (patterns, instances, examples, step loops) and instances stay in time order.
    /// Returns whether anything moved.
    pub fn repeating_first(&mut self) -> bool {
        let n = self.patterns.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&p| self.patterns[p].repeats_no_form());
        if order.iter().enumerate().all(|(i, &p)| i == p) {
            return false;
        }
        let mut new_id = vec![0u32; n];
        for (i, &p) in order.iter().enumerate() {
            new_id[p] = i as u32;
        }
        fn take<T>(v: &mut Vec<T>, order: &[usize]) -> Vec<T> {
            let mut old: Vec<Option<T>> = std::mem::take(v).into_iter().map(Some).collect();
            order
                .iter()
                .map(|&p| old[p].take().expect("each pattern once"))
                .collect()
        }
        self.patterns = take(&mut self.patterns, &order);
        for (i, p) in self.patterns.iter_mut().enumerate() {
            p.id = i;
        }
        if self.examples.len() == n {
            self.examples = take(&mut self.examples, &order);
        }
        if self.step_loops.len() == n {
            self.step_loops = take(&mut self.step_loops, &order);
        }
        for inst in &mut self.instances {
            if inst.pattern != OUTSIDE {
                inst.pattern = new_id[inst.pattern as usize];
            }
        }
        self.instances.sort_by_key(|inst| (inst.start, inst.end, inst.pattern));
        true
    }
}

/// Events left in instances seen once over several ranks
/// ([`CommunicationPattern::is_one_off_over_ranks`]).
pub fn one_off_events(patterns: &[CommunicationPattern]) -> u64 {
    patterns
        .iter()
        .filter(|p| p.is_one_off_over_ranks())
        .map(|p| p.events_covered)
        .sum()
}

/// One form of a communication pattern whose occurrences are iterations of one loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternVariant {
    /// Occurrences of this form.
    pub occurrences: usize,
    /// Each rank's events in this form.
    pub events: BTreeMap<Rank, EventNames>,
    /// Events per occurrence (all ranks) beyond the pattern's own form (0 for the form itself).
    pub extra_events: i64,
}

/// One part of an instance: its events on one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstancePart {
    /// World rank.
    pub rank: Rank,
    /// First event (index in the rank's events).
    pub first_event: u32,
    /// Last event.
    pub last_event: u32,
    /// Entry time of the first event's call.
    pub start: Time,
    /// Exit time of the last event's call.
    pub end: Time,
}

/// One connected instance of communication.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Instance {
    /// Communication pattern id, or [`OUTSIDE`].
    pub pattern: u32,
    /// Earliest entry time of its calls.
    pub start: Time,
    /// Latest exit time.
    pub end: Time,
    /// Per-rank parts, by rank.
    pub parts: Vec<InstancePart>,
    /// Index of its form in the pattern's [`CommunicationPattern::variants`] (0: the pattern's
    /// own form, also when it has no variants).
    #[serde(default)]
    pub variant: u32,
}

/// The result of construction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommunicationAnalysis {
    /// Communication patterns, most events covered first (ties: most occurrences, then
    /// earliest first occurrence).
    pub patterns: Vec<CommunicationPattern>,
    /// Every instance, ordered by start time (then end time, then pattern).
    pub instances: Vec<Instance>,
    /// Events of the first [`KEPT_EXAMPLES`] occurrences of each pattern, as runs `(rank,
    /// first event, one past the last)` by rank then event ([`example_events`] lists them).
    pub examples: Vec<Vec<Vec<(Rank, u32, u32)>>>,
    /// Per pattern, the loop whose iterations it holds ([`super::steps::NOT_A_STEP`]: none).
    #[serde(default)]
    pub step_loops: Vec<u32>,
}

/// Join per-rank occurrences (`occurrences[r]`: non-overlapping `[start, end)` event ranges of
/// rank `r`) into communication patterns.
pub fn construct(
    trace: &Trace,
    matching: &Matching,
    events: &Events,
    occurrences: &[Vec<(u32, u32)>],
) -> CommunicationAnalysis {
    construct_with_steps(trace, matching, events, occurrences, &[])
}

/// [`construct`] where some occurrences are iterations of a loop (`steps[r][k]`: the loop
/// occurrence `k` of rank `r` is an iteration of, [`super::steps::NOT_A_STEP`] for none;
/// empty: none are). Instances made of exactly one iteration of one loop on each of their
/// ranks are *steps*; steps of one loop over the same ranks whose events differ are forms of
/// one pattern, named by the most frequent ([`CommunicationPattern::variants`]).
pub fn construct_with_steps(
    trace: &Trace,
    matching: &Matching,
    events: &Events,
    occurrences: &[Vec<(u32, u32)>],
    steps: &[Vec<u32>],
) -> CommunicationAnalysis {
    let ops = OpIndex::of(trace, events);
    construct_with_iterations(trace, matching, events, &ops, occurrences, steps, &[])
}

/// One component's instance as [`construct_with_iterations`] builds it, before its signature
/// is numbered.
struct Built {
    parts: Vec<InstancePart>,
    /// Whether it holds a per-rank pattern occurrence.
    patterned: bool,
    /// The loop whose iteration it is ([`super::steps::NOT_A_STEP`]: none).
    step: u32,
}

/// [`construct_with_steps`] where some occurrences carry an iteration number
/// (`iterations[r][k]`, [`super::steps::NOT_A_STEP`] for none; empty: none do): a message or
/// collective joining two sets that hold different iterations is not followed, so an instance
/// never spans two iterations ([`super::iterations`]).
pub(crate) fn construct_with_iterations(
    trace: &Trace,
    matching: &Matching,
    events: &Events,
    ops: &OpIndex,
    occurrences: &[Vec<(u32, u32)>],
    steps: &[Vec<u32>],
    iterations: &[Vec<u32>],
) -> CommunicationAnalysis {
    use super::steps::NOT_A_STEP;
    // Per rank, (first event, last event, loop) of each iteration, ordered by first event (of
    // two with one first event the later listed counts); looked up by binary search.
    let step_at: Vec<Vec<(u32, u32, u32)>> = steps
        .iter()
        .zip(occurrences)
        .map(|(loops, occ)| {
            let mut at: Vec<(u32, u32, u32)> = occ
                .iter()
                .zip(loops)
                .filter(|(_, &l)| l != NOT_A_STEP)
                .map(|(&(s, e), &l)| (s, e - 1, l))
                .collect();
            if !at.windows(2).all(|w| w[0].0 < w[1].0) {
                at.sort_by_key(|x| x.0);
                let mut last_wins: Vec<(u32, u32, u32)> = Vec::with_capacity(at.len());
                for x in at {
                    match last_wins.last_mut() {
                        Some(l) if l.0 == x.0 => *l = x,
                        _ => last_wins.push(x),
                    }
                }
                at = last_wins;
            }
            at
        })
        .collect();
    let mut offset = Vec::with_capacity(events.ranks.len() + 1);
    let mut total = 0u32;
    for re in &events.ranks {
        offset.push(total);
        total += re.symbols.len() as u32;
    }
    offset.push(total);
    // The events of one occurrence are always in one set: the union–find runs over
    // *segments* — each occurrence (overlapping ones merged) and each event outside every
    // occurrence, numbered in event order — not over events.
    let (seg_start, seg_patterned, seg_of) = segments(events, occurrences, &offset);
    let nseg = seg_patterned.len();
    let mut uf = UnionFind((0..nseg as u32).collect());
    // (last event, loop) of the iteration starting where each segment starts, if any: a part
    // of an instance starts where a segment does, so that is the only iteration it can be.
    let mut seg_step: Vec<(u32, u32)> = Vec::new();
    if step_at.iter().any(|at| !at.is_empty()) {
        seg_step = vec![(u32::MAX, NOT_A_STEP); nseg];
        for (r, at) in step_at.iter().enumerate().take(events.ranks.len()) {
            let n = events.ranks[r].symbols.len() as u32;
            for &(s, last, l) in at.iter().filter(|x| x.0 < n) {
                let g = offset[r] + s;
                let sg = seg_of[g as usize];
                if seg_start[sg as usize] == g {
                    seg_step[sg as usize] = (last, l);
                }
            }
        }
    }
    drop(step_at);
    // The iteration of each event (only when some occurrence has one): decided before any
    // join, so the instances do not depend on the order of unions ([`super::iterations`]).
    let etag = super::iterations::event_iterations(occurrences, iterations, &offset);
    // The loop of each iteration number.
    let mut loop_of_iteration: FastMap<u32, u32> = FastMap::default();
    if !etag.is_empty() {
        for (its, loops) in iterations.iter().zip(steps) {
            for (&t, &l) in its.iter().zip(loops) {
                if t != NOT_A_STEP && l != NOT_A_STEP {
                    loop_of_iteration.insert(t, l);
                }
            }
        }
    }
    let mut joins = super::iterations::Joins::new(&etag, &seg_of);
    for m in &matching.messages {
        let a = ops.p2p(m.sender as usize)[m.send_op as usize];
        let b = ops.p2p(m.receiver as usize)[m.recv_op as usize];
        if a != u32::MAX && b != u32::MAX {
            joins.join(&mut uf, offset[m.sender as usize] + a, offset[m.receiver as usize] + b);
        }
    }
    // The `j`-th collective of a communicator on all members: with numbered iterations, the
    // members of each iteration are joined among themselves, and through their first member
    // to the members of no iteration.
    let mut coll_first: FastMap<(u32, u32, u32), u32> = FastMap::default();
    let mut groups: FastMap<(u32, u32), Vec<u32>> = FastMap::default();
    for (r, re) in events.ranks.iter().enumerate() {
        let c = &trace.ranks[re.rank as usize].collectives;
        let mut seen: FastMap<u32, u32> = FastMap::default();
        for j in 0..c.len() {
            let nth = seen.entry(c.comm[j]).or_default();
            let ev = offset[r] + ops.collectives(r)[j];
            match coll_first.entry((c.comm[j], *nth, joins.iteration(ev))) {
                std::collections::hash_map::Entry::Occupied(o) => joins.join(&mut uf, *o.get(), ev),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(ev);
                    if !etag.is_empty() {
                        groups.entry((c.comm[j], *nth)).or_default().push(ev);
                    }
                }
            }
            *nth += 1;
        }
    }
    for firsts in groups.values() {
        for (i, &a) in firsts.iter().enumerate() {
            for &b in &firsts[i + 1..] {
                joins.join(&mut uf, a, b);
            }
        }
    }
    joins.finish(&mut uf);
    drop(seg_of);
    // Dense component ids (in order of their first event), then segments grouped by component
    // (ascending, so their events ascend).
    let mut comp_of_root = vec![u32::MAX; nseg];
    let mut comp = vec![0u32; nseg];
    let mut ncomp = 0u32;
    for g in 0..nseg as u32 {
        let r = uf.find(g);
        if comp_of_root[r as usize] == u32::MAX {
            comp_of_root[r as usize] = ncomp;
            ncomp += 1;
        }
        comp[g as usize] = comp_of_root[r as usize];
    }
    drop(comp_of_root);
    drop(uf);
    let mut start = vec![0u32; ncomp as usize + 1];
    for &c in &comp {
        start[c as usize + 1] += 1;
    }
    for i in 0..ncomp as usize {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut members = vec![0u32; nseg];
    for g in 0..nseg as u32 {
        let c = comp[g as usize] as usize;
        members[fill[c] as usize] = g;
        fill[c] += 1;
    }
    drop(comp);
    drop(fill);
    let rank_of = |g: u32| offset.partition_point(|&o| o <= g) - 1;
    // The rank of `g` from the rank `r` of an earlier event of the same component (events of a
    // component ascend): a step forward instead of a binary search per event.
    let rank_from = |mut r: usize, g: u32| {
        while offset[r + 1] <= g {
            r += 1;
        }
        r
    };
    // Each component's instance: its parts, its signature `key` (per part a marker, the rank,
    // then its events' symbols), whether it holds an occurrence and the loop whose iteration
    // it is. Read-only, so the components are built in two stretches on two cores natively
    // ([`crate::logical::per_rank::both`]); their signatures are numbered in component order.
    let build = |c: usize, key: &mut Vec<u32>| -> Built {
        let segs = &members[start[c] as usize..start[c + 1] as usize];
        let mut parts: Vec<InstancePart> = Vec::new();
        // The first segment of each part.
        let mut part_seg: Vec<u32> = Vec::new();
        let mut patterned = false;
        let mut r = segs.first().map_or(0, |&sg| rank_of(seg_start[sg as usize]));
        for &sg in segs {
            let (g0, g1) = (seg_start[sg as usize], seg_start[sg as usize + 1]);
            r = rank_from(r, g0);
            let (i0, i1) = (g0 - offset[r], g1 - offset[r]);
            let re = &events.ranks[r];
            // Earliest entry and latest exit of the segment's calls.
            let (t0, t1) = ops.span(trace, events, r, i0 as usize, i1 as usize);
            patterned |= seg_patterned[sg as usize];
            let symbols = &re.symbols[i0 as usize..i1 as usize];
            match parts.last_mut() {
                Some(p) if p.rank == re.rank => {
                    p.last_event = i1 - 1;
                    p.start = p.start.min(t0);
                    p.end = p.end.max(t1);
                    key.extend_from_slice(symbols);
                }
                _ => {
                    key.push(u32::MAX);
                    key.push(re.rank);
                    key.extend_from_slice(symbols);
                    part_seg.push(sg);
                    parts.push(InstancePart {
                        rank: re.rank,
                        first_event: i0,
                        last_event: i1 - 1,
                        start: t0,
                        end: t1,
                    });
                }
            }
        }
        // The loop of the iteration that part `k` is exactly, if any.
        let loop_of = |k: usize| {
            seg_step
                .get(part_seg[k] as usize)
                .filter(|&&(last, _)| last == parts[k].last_event)
                .map_or(NOT_A_STEP, |&(_, l)| l)
        };
        // With numbered iterations, an instance holding one is a step of its loop whatever
        // else its messages attached (it holds no other iteration).
        let numbered = if etag.is_empty() {
            None
        } else {
            segs.iter()
                .flat_map(|&sg| seg_start[sg as usize]..seg_start[sg as usize + 1])
                .map(|g| etag[g as usize])
                .find(|&t| t != NOT_A_STEP)
                .and_then(|t| loop_of_iteration.get(&t).copied())
        };
        let step = match numbered {
            Some(l) => l,
            None => {
                let step = if parts.is_empty() { NOT_A_STEP } else { loop_of(0) };
                if (0..parts.len()).all(|k| loop_of(k) == step) {
                    step
                } else {
                    NOT_A_STEP
                }
            }
        };
        Built { parts, patterned, step }
    };
    // The second stretch starts at the component where about half of the events lie before.
    let split = {
        let half = total as u64 / 2;
        let mut seen = 0u64;
        let mut c = 0usize;
        while c < ncomp as usize && seen < half {
            for &sg in &members[start[c] as usize..start[c + 1] as usize] {
                seen += (seg_start[sg as usize + 1] - seg_start[sg as usize]) as u64;
            }
            c += 1;
        }
        c
    };
    // Signatures.
    let mut sig_ids: FastMap<Vec<u32>, u32> = FastMap::default();
    let mut sig_list: Vec<Vec<u32>> = Vec::new();
    let mut sig_patterned: Vec<bool> = Vec::new();
    let mut sig_count: Vec<u32> = Vec::new();
    let mut sig_first: Vec<(Time, Time)> = Vec::new();
    let mut sig_step: Vec<u32> = Vec::new();
    let mut instances: Vec<(u32, Instance)> = Vec::with_capacity(ncomp as usize);
    // The component's instance under its signature's id.
    let mut add = |c: usize, key: &[u32], built: Built| {
        let id = match sig_ids.get(key) {
            Some(&id) => id,
            None => {
                let id = sig_list.len() as u32;
                sig_ids.insert(key.to_vec(), id);
                sig_list.push(key.to_vec());
                sig_patterned.push(false);
                sig_count.push(0);
                sig_first.push((Time::MAX, Time::MAX));
                sig_step.push(NOT_A_STEP);
                id
            }
        };
        let Built { parts, patterned, step } = built;
        if step != NOT_A_STEP && sig_step[id as usize] == NOT_A_STEP {
            sig_step[id as usize] = step;
        }
        sig_patterned[id as usize] |= patterned;
        sig_count[id as usize] += 1;
        let s = parts.iter().map(|p| p.start).min().unwrap_or(0);
        let e = parts.iter().map(|p| p.end).max().unwrap_or(0);
        sig_first[id as usize] = sig_first[id as usize].min((s, e));
        instances.push((
            c as u32,
            Instance {
                pattern: id,
                start: s,
                end: e,
                parts,
                variant: 0,
            },
        ));
    };
    // The second stretch: every component built, its keys one after another.
    let later = || {
        let mut keys: Vec<u32> = Vec::new();
        let mut built: Vec<(usize, Built)> = Vec::with_capacity(ncomp as usize - split);
        for c in split..ncomp as usize {
            let b = build(c, &mut keys);
            built.push((keys.len(), b));
        }
        (keys, built)
    };
    let ((keys, later_built), ()) = crate::logical::per_rank::both(later, || {
        let mut key = Vec::new();
        for c in 0..split {
            key.clear();
            let b = build(c, &mut key);
            add(c, &key, b);
        }
    });
    let mut from = 0;
    for (c, (to, b)) in (split..).zip(later_built) {
        add(c, &keys[from..to], b);
        from = to;
    }
    drop(keys);
    // One loop body seen at two alignments is one pattern: a per-rank loop is cut into
    // occurrences wherever its parse happens to start, and a one-off exchange between two
    // stretches of the loop shifts that start (NAS CG: `R0 S0 (R1 S1)x3` in one outer
    // iteration, `R1 S1 R0 S0 R1 S1 R1 S1` in the next). Signatures built from per-rank pattern
    // occurrences whose every rank's string is a rotation of the other's are merged into the
    // one seen most often (ties: first seen); its strings name the pattern.
    let alias = rotation_aliases(&sig_list, &sig_patterned, &sig_count, &sig_first);
    for s in 0..sig_list.len() {
        let a = alias[s] as usize;
        if a != s {
            sig_patterned[a] |= sig_patterned[s];
            sig_count[a] += std::mem::take(&mut sig_count[s]);
            sig_first[a] = sig_first[a].min(sig_first[s]);
            sig_patterned[s] = false;
            if sig_step[a] == NOT_A_STEP {
                sig_step[a] = sig_step[s];
            }
            sig_step[s] = NOT_A_STEP;
        }
    }
    for (_, inst) in instances.iter_mut() {
        inst.pattern = alias[inst.pattern as usize];
    }
    // Iterations of one loop over the same ranks are one pattern whatever their events: the
    // most frequent form names it, the others are its variants (`forms[main]`: main first).
    let rank_set = |sig: &[u32]| -> Vec<u32> {
        let mut ranks = Vec::new();
        let mut k = 0;
        while k < sig.len() {
            if sig[k] == u32::MAX {
                ranks.push(sig[k + 1]);
                k += 2;
            } else {
                k += 1;
            }
        }
        ranks
    };
    let mut main_of: Vec<u32> = (0..sig_list.len() as u32).collect();
    let mut forms: FastMap<u32, Vec<u32>> = FastMap::default();
    {
        let mut groups: FastMap<(u32, Vec<u32>), Vec<u32>> = FastMap::default();
        for s in 0..sig_list.len() {
            if sig_step[s] != NOT_A_STEP && sig_count[s] > 0 && alias[s] as usize == s {
                groups
                    .entry((sig_step[s], rank_set(&sig_list[s])))
                    .or_default()
                    .push(s as u32);
            }
        }
        for (_, mut group) in groups {
            if group.len() < 2 {
                continue;
            }
            group.sort_by_key(|&s| (std::cmp::Reverse(sig_count[s as usize]), sig_first[s as usize], s));
            let main = group[0];
            for &s in &group[1..] {
                main_of[s as usize] = main;
                sig_patterned[main as usize] |= sig_patterned[s as usize];
            }
            forms.insert(main, group);
        }
    }
    let form_index: FastMap<u32, u32> = forms
        .values()
        .flat_map(|g| g.iter().enumerate().map(|(i, &s)| (s, i as u32)))
        .collect();
    for (_, inst) in instances.iter_mut() {
        inst.variant = form_index.get(&inst.pattern).copied().unwrap_or(0);
        inst.pattern = main_of[inst.pattern as usize];
    }
    let sig_len = |s: u32| {
        let sig = &sig_list[s as usize];
        let ranks = sig.iter().filter(|&&x| x == u32::MAX).count();
        (sig.len() - 2 * ranks) as u64
    };
    let group_count: Vec<u32> = (0..sig_list.len() as u32)
        .map(|s| match forms.get(&s) {
            Some(g) => g.iter().map(|&f| sig_count[f as usize]).sum(),
            None if main_of[s as usize] != s => 0,
            None => sig_count[s as usize],
        })
        .collect();
    // Keep signatures that are patterns; order by what they explain — the events their
    // occurrences cover on all ranks — then by occurrences, then by the time of the first
    // occurrence (not by discovery order, which follows rank numbers). A signature holds, per
    // rank, a marker and the rank before that rank's events.
    let covered = |s: u32| match forms.get(&s) {
        Some(g) => g.iter().map(|&f| sig_count[f as usize] as u64 * sig_len(f)).sum(),
        None => sig_count[s as usize] as u64 * sig_len(s),
    };
    let mut kept: Vec<u32> = (0..sig_list.len() as u32)
        .filter(|&s| main_of[s as usize] == s && (sig_patterned[s as usize] || group_count[s as usize] >= 2))
        .collect();
    kept.sort_by_key(|&s| {
        (
            std::cmp::Reverse(covered(s)),
            std::cmp::Reverse(group_count[s as usize]),
            sig_first[s as usize],
            s,
        )
    });
    let mut new_id = vec![OUTSIDE; sig_list.len()];
    for (i, &s) in kept.iter().enumerate() {
        new_id[s as usize] = i as u32;
    }
    instances.sort_by_key(|(_, inst)| (inst.start, inst.end, new_id[inst.pattern as usize]));
    let table: std::sync::Arc<[String]> = events.names.clone().into();
    let mut patterns: Vec<CommunicationPattern> = kept
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let named = |s: u32| {
                let mut ev: BTreeMap<Rank, EventNames> = BTreeMap::new();
                for (rank, part) in rank_parts(&sig_list[s as usize]) {
                    ev.insert(rank, EventNames::new(part.to_vec(), table.clone()));
                }
                ev
            };
            let ev = named(s);
            let variants = forms.get(&s).map_or_else(Vec::new, |g| {
                g.iter()
                    .map(|&f| PatternVariant {
                        occurrences: sig_count[f as usize] as usize,
                        events: named(f),
                        extra_events: sig_len(f) as i64 - sig_len(s) as i64,
                    })
                    .collect()
            });
            CommunicationPattern {
                id: i,
                ranks: ev.keys().copied().collect(),
                events: ev,
                occurrences: 0,
                positions: Vec::new(),
                spans: Vec::new(),
                first_events: BTreeMap::new(),
                from_rank_patterns: sig_patterned[s as usize],
                events_covered: covered(s),
                variants,
            }
        })
        .collect();
    let mut examples: Vec<Vec<Vec<(Rank, u32, u32)>>> = vec![Vec::new(); patterns.len()];
    let mut out_instances = Vec::with_capacity(instances.len());
    for (c, mut inst) in instances {
        inst.pattern = new_id[inst.pattern as usize];
        if inst.pattern != OUTSIDE {
            let p = &mut patterns[inst.pattern as usize];
            if p.occurrences == 0 {
                p.first_events = inst.parts.iter().map(|q| (q.rank, q.first_event)).collect();
            }
            p.occurrences += 1;
            p.positions.push(inst.start);
            p.spans.push((inst.start, inst.end));
            let ex = &mut examples[inst.pattern as usize];
            if ex.len() < KEPT_EXAMPLES {
                let segs = &members[start[c as usize] as usize..start[c as usize + 1] as usize];
                let mut r = segs.first().map_or(0, |&sg| rank_of(seg_start[sg as usize]));
                let mut runs: Vec<(Rank, u32, u32)> = Vec::new();
                for &sg in segs {
                    let (g0, g1) = (seg_start[sg as usize], seg_start[sg as usize + 1]);
                    r = rank_from(r, g0);
                    let (rank, i0, i1) = (events.ranks[r].rank, g0 - offset[r], g1 - offset[r]);
                    match runs.last_mut() {
                        Some(last) if last.0 == rank && last.2 == i0 => last.2 = i1,
                        _ => runs.push((rank, i0, i1)),
                    }
                }
                ex.push(runs);
            }
        }
        out_instances.push(inst);
    }
    let step_loops = kept.iter().map(|&s| sig_step[s as usize]).collect();
    CommunicationAnalysis {
        patterns,
        instances: out_instances,
        examples,
        step_loops,
    }
}

/// The segments of the union–find: each rank's occurrences (overlapping ones merged into one)
/// and each event outside them, in global event order (`offset[r]`: the first event of rank
/// `r`). Returns each segment's first event (and `total` after the last), whether it is an
/// occurrence, and the segment of every event.
fn segments(events: &Events, occurrences: &[Vec<(u32, u32)>], offset: &[u32]) -> (Vec<u32>, Vec<bool>, Vec<u32>) {
    let total = *offset.last().unwrap_or(&0);
    let mut seg_of = vec![0u32; total as usize];
    let mut starts: Vec<u32> = Vec::new();
    let mut patterned: Vec<bool> = Vec::new();
    for (r, re) in events.ranks.iter().enumerate() {
        let n = re.symbols.len() as u32;
        let given = occurrences.get(r).map_or(&[][..], |o| o.as_slice());
        let sorted;
        let occ = if given.windows(2).all(|w| w[0] <= w[1]) {
            given
        } else {
            sorted = {
                let mut o = given.to_vec();
                o.sort_unstable();
                o
            };
            &sorted
        };
        let (base, mut i, mut k) = (offset[r], 0u32, 0usize);
        while i < n {
            while k < occ.len() && (occ[k].1 <= i || occ[k].0 >= occ[k].1) {
                k += 1;
            }
            if k < occ.len() && occ[k].0 <= i {
                let mut end = occ[k].1;
                k += 1;
                while k < occ.len() && occ[k].0 < end {
                    end = end.max(occ[k].1);
                    k += 1;
                }
                let id = starts.len() as u32;
                seg_of[(base + i) as usize..(base + end) as usize].fill(id);
                starts.push(base + i);
                patterned.push(true);
                i = end;
            } else {
                let next = occ.get(k).map_or(n, |o| o.0.min(n));
                for e in i..next {
                    seg_of[(base + e) as usize] = starts.len() as u32;
                    starts.push(base + e);
                    patterned.push(false);
                }
                i = next;
            }
        }
    }
    starts.push(total);
    (starts, patterned, seg_of)
}

/// Start of the least rotation of `s` (two-pointer minimum-expression algorithm, O(n)).
pub(super) fn least_rotation(s: &[u32]) -> usize {
    let n = s.len();
    // `x < 2n` below: one subtraction instead of a division.
    let at = |x: usize| if x >= n { s[x - n] } else { s[x] };
    let (mut i, mut j, mut k) = (0usize, 1usize, 0usize);
    while i < n && j < n && k < n {
        let (a, b) = (at(i + k), at(j + k));
        if a == b {
            k += 1;
            continue;
        }
        if a > b {
            i += k + 1;
        } else {
            j += k + 1;
        }
        if i == j {
            j += 1;
        }
        k = 0;
    }
    i.min(j)
}

/// A signature with each rank's string rotated to its least rotation (ranks and their order
/// kept): equal for two signatures exactly when every rank's string of one is a rotation of
/// the same rank's string of the other.
fn rotation_key(sig: &[u32]) -> Vec<u32> {
    let mut key = Vec::with_capacity(sig.len());
    for (rank, part) in rank_parts(sig) {
        key.extend_from_slice(&[u32::MAX, rank]);
        let r = least_rotation(part);
        key.extend_from_slice(&part[r..]);
        key.extend_from_slice(&part[..r]);
    }
    key
}

/// A signature's rank parts in order: (rank, its symbols). A part is a marker (`u32::MAX`),
/// the rank, then its symbols up to the next marker.
pub(super) fn rank_parts(sig: &[u32]) -> impl Iterator<Item = (Rank, &[u32])> {
    let mut k = 0;
    std::iter::from_fn(move || {
        if k >= sig.len() {
            return None;
        }
        let end = sig[k + 2..]
            .iter()
            .position(|&x| x == u32::MAX)
            .map_or(sig.len(), |e| k + 2 + e);
        let part = (sig[k + 1], &sig[k + 2..end]);
        k = end;
        Some(part)
    })
}

/// A hash of a signature that every rotation of its ranks' strings keeps: per rank part, its
/// rank, its length and the sum of its symbols' mixed bits (a sum ignores their order), the
/// parts in order. Signatures that are rotations of each other have one class; signatures of
/// one class need not be rotations (the full [`rotation_key`] decides).
fn rotation_class(sig: &[u32]) -> u64 {
    let mix = |x: u64| {
        let x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^ (x >> 29)
    };
    let mut h = 0u64;
    for (rank, part) in rank_parts(sig) {
        let sum = part.iter().fold(0u64, |a, &x| a.wrapping_add(mix(x as u64 + 1)));
        for v in [rank as u64, part.len() as u64, sum] {
            h = mix(h.rotate_left(17) ^ v);
        }
    }
    h
}

/// For every signature, the signature it is merged into: itself, or — for signatures built
/// from per-rank pattern occurrences — the most frequent patterned signature equal to it up to
/// a rotation of each rank's string (ties: the earliest first occurrence `first`, then the
/// first seen; times, not rank numbers, so that renumbering ranks picks the same one).
///
/// Only signatures sharing their [`rotation_class`] with another are rotated: a signature
/// alone in its class is a rotation of no other and names itself (LU C 128's chained instance,
/// 8 M events, is rotated no more).
fn rotation_aliases(sigs: &[Vec<u32>], patterned: &[bool], count: &[u32], first: &[(Time, Time)]) -> Vec<u32> {
    let class: Vec<u64> = sigs
        .iter()
        .enumerate()
        .map(|(s, sig)| if patterned[s] { rotation_class(sig) } else { 0 })
        .collect();
    let mut in_class: FastMap<u64, u32> = FastMap::default();
    for (s, &c) in class.iter().enumerate() {
        if patterned[s] {
            *in_class.entry(c).or_default() += 1;
        }
    }
    let mut best: FastMap<Vec<u32>, u32> = FastMap::default();
    let mut key_of: Vec<Option<Vec<u32>>> = vec![None; sigs.len()];
    for (s, sig) in sigs.iter().enumerate() {
        if !patterned[s] || in_class[&class[s]] < 2 {
            continue;
        }
        let key = rotation_key(sig);
        best.entry(key.clone())
            .and_modify(|b| {
                let (c, f) = (count[*b as usize], first[*b as usize]);
                if count[s] > c || (count[s] == c && first[s] < f) {
                    *b = s as u32;
                }
            })
            .or_insert(s as u32);
        key_of[s] = Some(key);
    }
    key_of
        .into_iter()
        .enumerate()
        .map(|(s, k)| k.map_or(s as u32, |k| best[&k]))
        .collect()
}

#[cfg(test)]
mod tests;
