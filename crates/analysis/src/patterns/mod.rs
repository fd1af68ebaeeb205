//! Communication patterns (thesis ch. 4): per-rank repeats, tandem removal, routine-directed
//! detection, approximate search, cross-rank construction and event graphs.
//!
//! **Events.** Each rank's point-to-point operations and collectives, in call order, become
//! symbols: `S2` (send to world rank 2), `R5` (receive from 5, `R*` for an unresolved wildcard)
//! and the MPI function of a collective (`MPI_Allreduce`). With the envelope, `:t<tag>:b<bytes>`
//! (and `:c<comm>` off `MPI_COMM_WORLD`, `:r<root>` for rooted collectives) is appended.
//!
//! **Per-rank patterns** ([`detect`]). The thesis' valid patterns are reproduced in two steps:
//! 1. tandem repeats are removed to a fixpoint ([`tandem::reduce`], §4.6); every repeated unit is
//!    a pattern whose copies are its occurrences (Sweep3D's `ab`, `ac`, `bd`, `ad` and, one level
//!    up, the whole `abababacacacbdbdbdadadad`; WRF's `abcd`);
//! 2. on the reduced sequence, maximal repeats come from a suffix array with LCP intervals
//!    ([`suffix`]); a repeat is kept when, taking longer repeats first, at least two of its
//!    non-overlapping occurrences are not inside an occurrence of a longer kept repeat (the
//!    thesis' frequency accounting of Algorithm 4.3: a prefix pattern's frequency drops by the
//!    occurrences its extension absorbs, and only frequencies above 1 remain).
//!
//! Patterns from both steps with the same symbols are one pattern; its occurrences are the union
//! (by start). In the default *general form* a run of copies reduces to one copy, so patterns
//! that differ only in loop counts are the same (`(ab)³c` and `(ab)²c` are both `abc`); with
//! `exact` a run becomes a token "unit × count" and counts must agree.
//!
//! **Routine-directed** (§4.4.1): where calls carry call paths, a change of enclosing call path
//! between consecutive events inserts a unique barrier symbol, so no pattern crosses a routine
//! boundary. [`RoutineComparison`] compares it with the plain syntactic detection.
//!
//! **Communication patterns** ([`construct`], Algorithm 4.7): each rank's events are parsed into
//! non-overlapping pattern occurrences; occurrences and single events are joined through matched
//! messages and collective instances into connected instances, and instances with the same
//! per-rank events form one communication pattern, with its occurrences in time.

pub mod align;
pub mod approx;
pub mod construct;
pub mod extrapolate;
pub mod file;
pub mod neighbourhood;
pub mod suffix;
pub mod tandem;
pub mod templates;

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use tracelogic_model::{CallIdx, P2pDir, Rank, Trace, ANY_SOURCE, COMM_WORLD, NO_CALLPATH, NO_ROOT};

pub use construct::{
    construct, event_graph, event_graphs, timeline, Arrow, CommunicationAnalysis, CommunicationPattern, EventGraph,
    GraphEvent, PatternTimeline, TimelineLane, TimelineSpan,
};

/// What one event of a rank is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventRef {
    /// Index into the rank's `P2p`.
    P2p(u32),
    /// Index into the rank's `Collectives`.
    Collective(u32),
}

/// The event sequence of one rank.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankEvents {
    /// World rank.
    pub rank: Rank,
    /// Interned symbol of each event (index into [`Events::names`]).
    pub symbols: Vec<u32>,
    /// The operation behind each event.
    pub events: Vec<EventRef>,
    /// The call that posted each event.
    pub calls: Vec<CallIdx>,
}

/// Every rank's events with one symbol table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Events {
    /// Symbol names, indexed by symbol id.
    pub names: Vec<String>,
    /// One entry per world rank.
    pub ranks: Vec<RankEvents>,
}

impl Events {
    /// Symbol id of a name, if some event has it.
    pub fn symbol(&self, name: &str) -> Option<u32> {
        self.names.iter().position(|n| n == name).map(|i| i as u32)
    }
    /// Names of a symbol string.
    pub fn names_of(&self, symbols: &[u32]) -> Vec<String> {
        symbols.iter().map(|&s| self.names[s as usize].clone()).collect()
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct SymbolKey {
    kind: u8,
    peer: u32,
    tag: i64,
    bytes: u64,
    comm: u32,
}

/// The event symbols of every rank, interned once for the whole trace. O(events).
pub fn rank_events(trace: &Trace, with_envelope: bool) -> Events {
    let mut ids: HashMap<SymbolKey, u32> = HashMap::new();
    let mut names: Vec<String> = Vec::new();
    let mut ranks = Vec::with_capacity(trace.ranks.len());
    for rt in &trace.ranks {
        let (p, c) = (&rt.p2p, &rt.collectives);
        let mut out = RankEvents {
            rank: rt.rank,
            ..Default::default()
        };
        let total = p.len() + c.len();
        out.symbols.reserve_exact(total);
        out.events.reserve_exact(total);
        out.calls.reserve_exact(total);
        let (mut i, mut j) = (0usize, 0usize);
        while i < p.len() || j < c.len() {
            let take_p2p = j >= c.len() || (i < p.len() && p.post[i] <= c.call[j]);
            let (key, ev, call) = if take_p2p {
                let send = p.dir[i] == P2pDir::Send;
                let key = SymbolKey {
                    kind: if send { 0 } else { 1 },
                    peer: p.peer[i],
                    tag: if with_envelope { p.tag[i] as i64 } else { 0 },
                    bytes: if with_envelope { p.bytes[i] } else { 0 },
                    comm: if with_envelope { p.comm[i] } else { 0 },
                };
                i += 1;
                (key, EventRef::P2p(i as u32 - 1), p.post[i - 1])
            } else {
                let key = SymbolKey {
                    kind: 2,
                    peer: if with_envelope { c.root[j] } else { 0 },
                    tag: trace.ranks[rt.rank as usize].calls.func[c.call[j] as usize] as i64,
                    bytes: if with_envelope { c.bytes_sent[j] } else { 0 },
                    comm: if with_envelope { c.comm[j] } else { 0 },
                };
                j += 1;
                (key, EventRef::Collective(j as u32 - 1), c.call[j - 1])
            };
            let id = *ids.entry(key).or_insert_with(|| {
                names.push(symbol_name(trace, &key, with_envelope));
                names.len() as u32 - 1
            });
            out.symbols.push(id);
            out.events.push(ev);
            out.calls.push(call);
        }
        ranks.push(out);
    }
    Events { names, ranks }
}

fn symbol_name(trace: &Trace, k: &SymbolKey, with_envelope: bool) -> String {
    let mut s = match k.kind {
        0 => format!("S{}", k.peer),
        1 if k.peer == ANY_SOURCE => "R*".to_owned(),
        1 => format!("R{}", k.peer),
        _ => trace.functions.name(k.tag as u32).to_owned(),
    };
    if with_envelope {
        if k.kind < 2 {
            s += &format!(":t{}:b{}", k.tag, k.bytes);
        } else {
            if k.peer != NO_ROOT {
                s += &format!(":r{}", k.peer);
            }
            s += &format!(":b{}", k.bytes);
        }
        if k.comm != COMM_WORLD {
            s += &format!(":c{}", k.comm);
        }
    }
    s
}

/// How per-rank patterns are detected.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PatternOptions {
    /// General form (tandem runs reduced to one copy, the default) or exact form (`false`: a run
    /// keeps its count, `--no-tandem`).
    pub tandem: bool,
    /// Add tag, size, communicator and root to the symbols.
    pub with_envelope: bool,
    /// Shortest pattern reported, in events (the thesis' minimum is a bi-gram: 2).
    pub min_length: u32,
    /// Let changes of call path delimit patterns where the trace records call paths.
    pub routines: bool,
}

impl Default for PatternOptions {
    fn default() -> PatternOptions {
        PatternOptions {
            tandem: true,
            with_envelope: false,
            min_length: 2,
            routines: true,
        }
    }
}

/// One pattern of one rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankPattern {
    /// The pattern's symbols: its general form (exact form with `tandem = false`: tokens are
    /// expanded to their copies).
    pub sequence: Vec<String>,
    /// Its first occurrence with repeat counts, e.g. `(S1 S4)x3 R0`.
    pub compact: String,
    /// Number of occurrences.
    pub frequency: usize,
    /// First event of each occurrence (index into the rank's event sequence), ascending.
    pub positions: Vec<u32>,
    /// One past the last event of each occurrence.
    pub ends: Vec<u32>,
    /// Found as the unit of a tandem repeat.
    pub tandem: bool,
    /// Found as a maximal repeat of the reduced sequence.
    pub repeat: bool,
    /// The body of an outer loop: back-to-back exact copies whose inner loops the reduction
    /// had merged across iterations ([`outer_loops`], added where an instance was glued); the
    /// parse takes it before its parts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outer: bool,
    /// Symbol ids of `sequence` (exact form: with tokens expanded), for searching.
    #[serde(skip)]
    pub symbols: Vec<u32>,
}

/// Per-rank pattern detection on a symbol sequence, in event positions.
///
/// `seq` holds symbols `< alphabet`; `barrier_after[i]` (if given) marks a routine boundary after
/// event `i`. O(n log n) for the suffix array plus the output.
pub fn detect(seq: &[u32], alphabet: u32, barrier_after: Option<&[bool]>, opts: &PatternOptions) -> Vec<RankPattern> {
    // With routine boundaries: the symbol string with unique barriers, and the event behind each
    // position. Without: the events themselves.
    let mut event_of: Vec<u32> = Vec::new();
    let mut with_barriers: Vec<u32> = Vec::new();
    if let Some(bounds) = barrier_after {
        with_barriers.reserve(seq.len());
        event_of.reserve(seq.len());
        let mut barriers = 0u32;
        for (i, &x) in seq.iter().enumerate() {
            with_barriers.push(x);
            event_of.push(i as u32);
            if bounds[i] && i + 1 < seq.len() {
                with_barriers.push(tandem::BARRIER + barriers);
                event_of.push(u32::MAX);
                barriers += 1;
            }
        }
    }
    let s: &[u32] = if barrier_after.is_some() { &with_barriers } else { seq };
    let event = |p: u32| {
        if barrier_after.is_some() {
            event_of[p as usize]
        } else {
            p
        }
    };
    let red = tandem::reduce(s, alphabet, !opts.tandem);
    let mut acc: HashMap<Vec<u32>, Found> = HashMap::new();
    for level in &red.levels {
        for c in level {
            let e = match acc.get_mut(&c.unit) {
                Some(e) => e,
                None => acc.entry(c.unit.clone()).or_default(),
            };
            e.0.extend_from_slice(&c.copies);
            e.1 = true;
        }
    }
    // Maximal repeats of the reduced sequence, over dense symbols.
    let (d, distinct) = dense_symbols(&red.sequence);
    let mut repeats = suffix::maximal_repeats(&d, distinct, 2);
    repeats.sort_by(|a, b| b.length.cmp(&a.length).then(a.positions[0].cmp(&b.positions[0])));
    let mut reach = PrefixMax::new(d.len());
    for rep in repeats {
        let len = rep.length as usize;
        let key = &red.sequence[rep.positions[0] as usize..rep.positions[0] as usize + len];
        // An occurrence on the reduced string stands for the original span its elements cover;
        // when that span cuts through a collapsed run (the last copy of one run meeting the first
        // copy of the next, `..R3)x30 (S1..`), it is not an occurrence of the repeat.
        let genuine = |p: u32| {
            let (first, last) = (p as usize, p as usize + len - 1);
            red.extents[first].0 == red.spans[first].0 && red.extents[last].1 == red.spans[last].1
        };
        let mut occ = Vec::new();
        let mut next_free = 0u32;
        for &p in &rep.positions {
            if p >= next_free && genuine(p) {
                occ.push(p);
                next_free = p + rep.length;
            }
        }
        let free = occ
            .iter()
            .filter(|&&p| reach.max_upto(p as usize) < p + rep.length)
            .count();
        if occ.len() < 2 || free < 2 {
            continue;
        }
        for &p in &occ {
            reach.raise(p as usize, p + rep.length);
        }
        let e = acc.entry(key.to_vec()).or_default();
        for &p in &occ {
            e.0.push((red.spans[p as usize].0, red.spans[p as usize + len - 1].1));
        }
        e.2 = true;
    }
    complete_loop_bodies(s, &red, &mut acc, opts.min_length.max(2) as usize);
    let mut out = Vec::new();
    for (key, (mut occ, is_tandem, is_repeat)) in acc {
        if !occ.windows(2).all(|w| w[0] <= w[1]) {
            occ.sort_unstable();
        }
        occ.dedup_by_key(|o| o.0);
        if occ.len() < 2 {
            continue;
        }
        // To event positions (barriers are never inside an occurrence).
        let positions: Vec<u32> = occ.iter().map(|o| event(o.0)).collect();
        let ends: Vec<u32> = occ.iter().map(|o| event(o.1 - 1) + 1).collect();
        let symbols = expand_tokens(&key, &red, alphabet);
        if (symbols.len() as u32) < opts.min_length.max(2) {
            continue;
        }
        let first = &seq[positions[0] as usize..ends[0] as usize];
        out.push(RankPattern {
            sequence: Vec::new(),
            compact: String::new(),
            frequency: positions.len(),
            positions,
            ends,
            tandem: is_tandem,
            repeat: is_repeat,
            outer: false,
            symbols: if opts.tandem { symbols } else { first.to_vec() },
        });
    }
    out.sort_by(|a, b| {
        b.frequency
            .cmp(&a.frequency)
            .then(b.symbols.len().cmp(&a.symbols.len()))
            .then(a.positions[0].cmp(&b.positions[0]))
            .then(a.symbols.cmp(&b.symbols))
    });
    out
}

/// Outer loops whose iterations the general form glued: back-to-back exact copies of a block.
///
/// A loop whose body begins and ends with the same inner loop (NAS MG's V-cycle on 16 ranks:
/// `C C C x y C×9` per iteration, `C` the fine-level halo exchange) reduces, in the general form,
/// to runs of `C` that merge across iterations (`C×3 x y C×12 x y C×12 … C×9`), so the outer
/// loop is found one level up at a rotation (`y C×12 x`) that starts inside an iteration, and
/// its copies are then cut differently on different ranks and chained into one instance. For
/// every pattern with back-to-back occurrences of one length `p` holding an inner loop (a
/// tandem repeat inside the copy), the stretch of the rank's events where
/// `seq[i] = seq[i + p]` is extended from its first copy both ways as far as it holds: where
/// that stretch holds more whole copies than the run (`k ≥ 2`; a rotation of the same count is
/// the run's own business — Figure 4.5 as printed, whose first global copy lacks its last
/// `ad`, reads `dadada…` twice at another rotation), they are the outer loop's iterations, starting where the periodicity starts — after
/// the set-up, which differs from the loop's tail. The body is in event symbols and may span
/// routine boundaries (an iteration of the caller's loop). O(stretch) per run tried.
pub fn outer_loops(seq: &[u32], alphabet: u32, patterns: &[RankPattern]) -> Vec<OuterLoop> {
    let mut out: Vec<OuterLoop> = Vec::new();
    let mut covered: Vec<(usize, usize)> = Vec::new();
    for pat in patterns {
        let mut j = 0;
        while j < pat.positions.len() {
            let (start, len) = (pat.positions[j] as usize, (pat.ends[j] - pat.positions[j]) as usize);
            let mut end = j + 1;
            while end < pat.positions.len()
                && pat.positions[end] == pat.ends[end - 1]
                && (pat.ends[end] - pat.positions[end]) as usize == len
            {
                end += 1;
            }
            let run = end - j;
            j = end;
            if run < 2 || len < 4 || covered.iter().any(|&(a, b)| start >= a && start < b) {
                continue;
            }
            // Nested: the body holds an inner loop.
            let body = &seq[start..start + len];
            if tandem::reduce(body, alphabet, true).collapses() == 0 {
                continue;
            }
            let p = len;
            let ok = |i: usize| i + p < seq.len() && seq[i] == seq[i + p];
            let (mut lo, mut hi) = (start, start);
            while ok(hi) {
                hi += 1;
            }
            while lo > 0 && ok(lo - 1) {
                lo -= 1;
            }
            let k = (hi + p - lo) / p;
            if k < 2 || k <= run {
                continue;
            }
            covered.push((lo, lo + k * p));
            let copies = (0..k)
                .map(|c| ((lo + c * p) as u32, (lo + (c + 1) * p) as u32))
                .collect();
            out.push((seq[lo..lo + p].to_vec(), copies));
        }
    }
    // The same body found from two patterns or stretches: one pattern, copies united.
    out.sort_by(|a, b| a.0.cmp(&b.0).then(a.1[0].cmp(&b.1[0])));
    let mut merged: Vec<OuterLoop> = Vec::new();
    for (unit, copies) in out {
        match merged.last_mut() {
            Some((u, c)) if *u == unit => {
                c.extend(copies);
                c.sort_unstable();
                c.dedup();
            }
            _ => merged.push((unit, copies)),
        }
    }
    merged
}

/// Exact copies of first-level loop bodies outside their own runs become occurrences too.
///
/// A tandem unit's occurrences are the copies of its runs; the same body executed once between
/// other calls (MG's halo exchange after a `Barrier` or before `norm2u3`'s two `Allreduce`s) is
/// the same behaviour and is counted, as the thesis counts MG's `comm3` in every context. A copy
/// is added only where it meets no run (of any level) whose unit is at least as frequent — the
/// unit's own runs included, so copies never overlap: inside a loop body that repeats more often
/// than the unit (LU's exchange inside each time step) the enclosing body is the behaviour and
/// the unit stays a part of it; across the copies of another loop of the same count (Sweep3D's
/// `x y` run followed by `y x`, where `y x` also reads inside the first run) it is no copy at
/// all. Units of the first level are in the sequence's own symbols, so the search is exact;
/// deeper units (general forms with inner runs) keep the occurrences the reduction gave them.
/// One left-to-right scan with the units indexed by their first bi-gram: O(n + matches × unit
/// length × levels).
fn complete_loop_bodies(s: &[u32], red: &tandem::Reduction, acc: &mut HashMap<Vec<u32>, Found>, min_len: usize) {
    let Some(level) = red.levels.first() else {
        return;
    };
    let mut units: Vec<&[u32]> = Vec::new();
    let mut seen: std::collections::HashSet<&[u32]> = Default::default();
    for c in level {
        if c.unit.len() >= min_len && seen.insert(&c.unit) {
            units.push(&c.unit);
        }
    }
    if units.is_empty() {
        return;
    }
    let frequency = |occ: &mut Vec<(u32, u32)>| {
        if !occ.windows(2).all(|w| w[0] <= w[1]) {
            occ.sort_unstable();
        }
        occ.dedup_by_key(|o| o.0);
        occ.len() as u32
    };
    // Each level's runs, disjoint and in order: extent and the frequency of their unit.
    let mut unit_freq: HashMap<&[u32], u32> = HashMap::new();
    let mut runs: Vec<Vec<(u32, u32, u32)>> = Vec::with_capacity(red.levels.len());
    for lvl in &red.levels {
        let mut this = Vec::with_capacity(lvl.len());
        for c in lvl {
            let f = match unit_freq.get(c.unit.as_slice()) {
                Some(&f) => f,
                None => {
                    let f = acc.get_mut(&c.unit).map_or(0, |e| frequency(&mut e.0));
                    unit_freq.insert(&c.unit, f);
                    f
                }
            };
            this.push((c.copies[0].0, c.copies[c.copies.len() - 1].1, f));
        }
        runs.push(this);
    }
    let (local, originals) = tandem::renumber(s, |x| x >= tandem::BARRIER);
    let distinct = originals.len();
    let mut index: HashMap<u32, u32> = HashMap::with_capacity(distinct);
    for (i, &o) in originals.iter().enumerate() {
        index.insert(o, i as u32);
    }
    // Units by their first bi-gram (dense table for small local alphabets, else by first symbol).
    let by_bigram = distinct * distinct <= 1 << 20;
    let slot = |a: u32, b: u32| {
        if by_bigram {
            (a as usize) * distinct + b as usize
        } else {
            a as usize
        }
    };
    let mut lists: Vec<Vec<usize>> = vec![Vec::new(); if by_bigram { distinct * distinct } else { distinct }];
    for (u, unit) in units.iter().enumerate() {
        lists[slot(index[&unit[0]], index[&unit[1]])].push(u);
    }
    // Each unit's known occurrences (sorted by the frequency pass), walked with a cursor.
    let known: Vec<Vec<(u32, u32)>> = units
        .iter()
        .map(|u| std::mem::take(&mut acc.get_mut(*u).expect("every unit is a pattern").0))
        .collect();
    let freq: Vec<u32> = known.iter().map(|k| k.len() as u32).collect();
    let mut cursor = vec![0usize; units.len()];
    let mut run_cursor = vec![0usize; runs.len()];
    let mut next_free = vec![0usize; units.len()];
    let mut found: Vec<Vec<(u32, u32)>> = vec![Vec::new(); units.len()];
    for p in 0..s.len().saturating_sub(1) {
        let (x, y) = (local[p], local[p + 1]);
        if x >= tandem::BARRIER || y >= tandem::BARRIER {
            continue;
        }
        for &u in &lists[slot(x, y)] {
            let unit = units[u];
            let m = unit.len();
            if p < next_free[u] || p + m > s.len() || s[p + m - 1] != unit[m - 1] || s[p..p + m] != *unit {
                continue;
            }
            next_free[u] = p + m;
            let k = &known[u];
            while cursor[u] < k.len() && (k[cursor[u]].0 as usize) < p {
                cursor[u] += 1;
            }
            if k.get(cursor[u]).is_some_and(|o| o.0 as usize == p) {
                continue;
            }
            let mut blocked = false;
            for (level_runs, at) in runs.iter().zip(&mut run_cursor) {
                while *at < level_runs.len() && (level_runs[*at].1 as usize) <= p {
                    *at += 1;
                }
                blocked |= level_runs[*at..]
                    .iter()
                    .take_while(|r| (r.0 as usize) < p + m)
                    .any(|r| r.2 >= freq[u]);
            }
            if !blocked {
                found[u].push((p as u32, (p + m) as u32));
            }
        }
    }
    for ((unit, occ), new) in units.iter().zip(known).zip(found) {
        let occ = if new.is_empty() {
            occ
        } else {
            let mut merged = Vec::with_capacity(occ.len() + new.len());
            let (mut i, mut j) = (0, 0);
            while i < occ.len() || j < new.len() {
                if j == new.len() || (i < occ.len() && occ[i] < new[j]) {
                    merged.push(occ[i]);
                    i += 1;
                } else {
                    merged.push(new[j]);
                    j += 1;
                }
            }
            merged
        };
        acc.get_mut(*unit).expect("every unit is a pattern").0 = occ;
    }
}

/// Renumber symbols densely in order of first appearance; returns the count of distinct ones.
/// O(n) whatever the symbols' range (barriers and tokens included).
fn dense_symbols(seq: &[u32]) -> (Vec<u32>, usize) {
    let (out, originals) = tandem::renumber(seq, |_| false);
    (out, originals.len())
}

/// Fill [`RankPattern::sequence`] and [`RankPattern::compact`] with symbol names.
pub fn name_patterns(patterns: &mut [RankPattern], seq: &[u32], names: &[String]) {
    for p in patterns {
        p.sequence = p.symbols.iter().map(|&s| names[s as usize].clone()).collect();
        p.compact = compact_text(&seq[p.positions[0] as usize..p.ends[0] as usize], names);
    }
}

fn expand_tokens(key: &[u32], red: &tandem::Reduction, alphabet: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut stack: Vec<u32> = key.iter().rev().copied().collect();
    while let Some(x) = stack.pop() {
        match red.first_token {
            Some(t) if x >= t.max(alphabet) && ((x - t) as usize) < red.tokens.len() => {
                let (unit, count) = &red.tokens[(x - t) as usize];
                for _ in 0..*count {
                    stack.extend(unit.iter().rev());
                }
            }
            _ => out.push(x),
        }
    }
    out
}

/// A symbol string written with its tandem repeats as `(unit)xK`, nested where runs nest.
pub fn compact_text(symbols: &[u32], names: &[String]) -> String {
    let alphabet = names.len() as u32;
    let red = tandem::reduce(symbols, alphabet, true);
    fn render(x: u32, red: &tandem::Reduction, alphabet: u32, names: &[String], out: &mut Vec<String>) {
        if x >= alphabet {
            let (unit, count) = &red.tokens[(x - alphabet) as usize];
            let mut inner = Vec::new();
            for &u in unit {
                render(u, red, alphabet, names, &mut inner);
            }
            out.push(format!("({})x{}", inner.join(" "), count));
        } else {
            out.push(names[x as usize].clone());
        }
    }
    let mut out = Vec::new();
    for &x in &red.sequence {
        render(x, &red, alphabet, names, &mut out);
    }
    out.join(" ")
}

/// Prefix maximum over positions, raised point by point (Fenwick tree).
struct PrefixMax {
    tree: Vec<u32>,
}

impl PrefixMax {
    fn new(n: usize) -> PrefixMax {
        PrefixMax { tree: vec![0; n + 1] }
    }
    fn raise(&mut self, pos: usize, value: u32) {
        let mut i = pos + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].max(value);
            i += i & i.wrapping_neg();
        }
    }
    fn max_upto(&self, pos: usize) -> u32 {
        let mut i = pos + 1;
        let mut m = 0;
        while i > 0 {
            m = m.max(self.tree[i]);
            i -= i & i.wrapping_neg();
        }
        m
    }
}

/// An outer loop's body (event symbols) and the `[start, end)` span of each iteration.
pub type OuterLoop = (Vec<u32>, Vec<(u32, u32)>);

/// Per rank, non-overlapping `[start, end)` occurrences.
type Occurrences = Vec<Vec<(u32, u32)>>;

/// Occurrence spans of one pattern key, and whether it came from tandem units / repeats.
type Found = (Vec<(u32, u32)>, bool, bool);

/// Routine boundaries of one rank: `true` after event `i` when event `i + 1` runs under another
/// call path. `None` when the rank's calls record no call path.
pub fn routine_boundaries(trace: &Trace, events: &RankEvents) -> Option<Vec<bool>> {
    let cp = &trace.ranks[events.rank as usize].calls.callpath;
    if events.calls.iter().all(|&c| cp[c as usize] == NO_CALLPATH) {
        return None;
    }
    let mut b = vec![false; events.calls.len()];
    for i in 0..events.calls.len().saturating_sub(1) {
        b[i] = cp[events.calls[i] as usize] != cp[events.calls[i + 1] as usize];
    }
    Some(b)
}

/// Syntactic detection against routine-directed detection on the ranks that have call paths
/// (thesis Tables 4.1 and 4.3, with the routine-directed patterns as the reference).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoutineComparison {
    /// Ranks with call paths.
    pub ranks: usize,
    /// Patterns found syntactically, summed over those ranks.
    pub syntactic: usize,
    /// Patterns found with routine boundaries.
    pub routine_directed: usize,
    /// Syntactic patterns that are also routine-directed patterns (same symbols).
    pub common: usize,
    /// `common / syntactic` (1 when nothing was found).
    pub precision: f64,
    /// `common / routine_directed` (1 when nothing was found).
    pub recall: f64,
}

/// Everything `tracelogic patterns` reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PatternAnalysis {
    /// The options used.
    pub options: Option<PatternOptions>,
    /// Per world rank, its patterns (most frequent first).
    pub rank_patterns: BTreeMap<Rank, Vec<RankPattern>>,
    /// Communication patterns across ranks, most events covered first (all of them; the first
    /// [`PatternAnalysis::shown_patterns`] are the ones to list by default).
    pub communication_patterns: Vec<CommunicationPattern>,
    /// Events on all ranks.
    pub events: u64,
    /// Events inside a per-rank pattern occurrence chosen for construction.
    pub events_in_patterns: u64,
    /// Routine-directed against syntactic detection, where call paths exist.
    pub routine_comparison: Option<RoutineComparison>,
    /// Instances in time order, for phases and the timeline.
    #[serde(skip)]
    pub communication: CommunicationAnalysis,
    /// Patterns to list by default: those covering at least [`PatternAnalysis::min_share`] of
    /// the events (they come first in `communication_patterns`, ids `0..shown_patterns`).
    #[serde(default)]
    pub shown_patterns: usize,
    /// Patterns hidden by default (covering less than `min_share` of the events each).
    #[serde(default)]
    pub hidden_patterns: usize,
    /// Events the hidden patterns cover, together.
    #[serde(default)]
    pub hidden_events: u64,
    /// `hidden_events` over all events.
    #[serde(default)]
    pub hidden_share: f64,
    /// Share of the events below which a pattern is hidden ([`MIN_SHARE`] by default; 0 shows
    /// every pattern).
    #[serde(default)]
    pub min_share: f64,
}

/// Default share of the events a communication pattern must cover to be listed: 1 %. On NAS MG
/// with 64 ranks, 112 of 120 patterns are one message between two ranks seen twice (4 events,
/// 0.007 % each); listing them first buried the exchange and the reductions.
pub const MIN_SHARE: f64 = 0.01;

impl PatternAnalysis {
    /// Hide the patterns covering less than `share` of the events (0: show all) and set the
    /// `shown_patterns`/`hidden_*` fields. The list is ordered by events covered, so the shown
    /// patterns are a prefix of it.
    pub fn set_min_share(&mut self, share: f64) {
        let share = if share.is_finite() { share.max(0.0) } else { 0.0 };
        let total = self.events.max(1) as f64;
        let shown = self
            .communication_patterns
            .iter()
            .take_while(|p| p.events_covered as f64 >= share * total)
            .count();
        let hidden = &self.communication_patterns[shown..];
        self.min_share = share;
        self.shown_patterns = shown;
        self.hidden_patterns = hidden.len();
        self.hidden_events = hidden.iter().map(|p| p.events_covered).sum();
        self.hidden_share = if self.events == 0 {
            0.0
        } else {
            self.hidden_events as f64 / self.events as f64
        };
    }

    /// The patterns to list: the first [`PatternAnalysis::shown_patterns`].
    pub fn shown(&self) -> &[CommunicationPattern] {
        &self.communication_patterns[..self.shown_patterns.min(self.communication_patterns.len())]
    }
}

/// Detect per-rank and communication patterns of a trace.
pub fn analyse(trace: &Trace, opts: &PatternOptions) -> PatternAnalysis {
    let matching = tracelogic_model::match_messages(trace);
    let events = rank_events(trace, opts.with_envelope);
    analyse_events(trace, &matching, &events, opts)
}

/// [`analyse`] on events already extracted and messages already matched.
pub fn analyse_events(
    trace: &Trace,
    matching: &tracelogic_model::Matching,
    events: &Events,
    opts: &PatternOptions,
) -> PatternAnalysis {
    let alphabet = events.names.len() as u32;
    let mut rank_patterns = BTreeMap::new();
    let mut comparison = RoutineComparison::default();
    let mut any_routines = false;
    for re in &events.ranks {
        let bounds = if opts.routines {
            routine_boundaries(trace, re)
        } else {
            None
        };
        let mut pats = detect(&re.symbols, alphabet, bounds.as_deref(), opts);
        if bounds.is_some() {
            any_routines = true;
            let plain = detect(&re.symbols, alphabet, None, opts);
            let keys: std::collections::HashSet<&Vec<u32>> = pats.iter().map(|p| &p.symbols).collect();
            comparison.ranks += 1;
            comparison.syntactic += plain.len();
            comparison.routine_directed += pats.len();
            comparison.common += plain.iter().filter(|p| keys.contains(&p.symbols)).count();
        }
        name_patterns(&mut pats, &re.symbols, &events.names);
        rank_patterns.insert(re.rank, pats);
    }
    let routine_comparison = any_routines.then(|| {
        let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
        comparison.precision = ratio(comparison.common, comparison.syntactic);
        comparison.recall = ratio(comparison.common, comparison.routine_directed);
        comparison
    });
    let occurrences: Vec<Vec<(u32, u32)>> = events
        .ranks
        .iter()
        .map(|re| parse_occurrences(re.symbols.len(), &rank_patterns[&re.rank]))
        .collect();
    let occurrences = align::align_runs(trace, matching, events, &occurrences);
    let communication = construct(trace, matching, events, &occurrences);
    let (occurrences, communication) = match unglue(trace, matching, events, &mut rank_patterns, &communication) {
        Some(redone) => redone,
        None => (occurrences, communication),
    };
    let events_in_patterns = occurrences.iter().flatten().map(|o| (o.1 - o.0) as u64).sum();
    let mut analysis = PatternAnalysis {
        options: Some(*opts),
        rank_patterns,
        communication_patterns: communication.patterns.clone(),
        events: events.ranks.iter().map(|r| r.symbols.len() as u64).sum(),
        events_in_patterns,
        routine_comparison,
        communication,
        ..PatternAnalysis::default()
    };
    analysis.set_min_share(MIN_SHARE);
    analysis
}

/// One glued instance — a communication pattern seen once, over several ranks — that is, on
/// every one of its ranks, inside `k ≥ 2` back-to-back iterations of an outer loop
/// ([`outer_loops`]) with the same `k` everywhere: the ranks' loops were cut at different
/// rotations and chained through their messages (NAS MG on 16 ranks: the four timed V-cycles as
/// one occurrence of 8,928 events). The outer loop bodies become per-rank patterns
/// ([`RankPattern::outer`], taken first by the parse) on those ranks, and the ranks are parsed,
/// aligned and joined again: the body is then a pattern with one occurrence per iteration, the
/// inner loops inside it. Only glued instances trigger this, so runs whose loops were already
/// cut alike keep their patterns, and the new cut is kept only when fewer events are left in
/// one-off instances. `None` (patterns unchanged) otherwise.
fn unglue(
    trace: &Trace,
    matching: &tracelogic_model::Matching,
    events: &Events,
    rank_patterns: &mut BTreeMap<Rank, Vec<RankPattern>>,
    communication: &CommunicationAnalysis,
) -> Option<(Occurrences, CommunicationAnalysis)> {
    let alphabet = events.names.len() as u32;
    let glued: Vec<bool> = communication
        .patterns
        .iter()
        .map(|p| p.occurrences == 1 && p.from_rank_patterns && p.ranks.len() >= 2)
        .collect();
    let mut candidates: HashMap<Rank, Vec<OuterLoop>> = HashMap::new();
    let mut chosen: BTreeMap<Rank, Vec<usize>> = BTreeMap::new();
    for inst in &communication.instances {
        if !glued.get(inst.pattern as usize).copied().unwrap_or(false) {
            continue;
        }
        let mut picks: Vec<(Rank, usize)> = Vec::with_capacity(inst.parts.len());
        let mut k = None;
        for part in &inst.parts {
            let r = part.rank;
            let cands = candidates
                .entry(r)
                .or_insert_with(|| outer_loops(&events.ranks[r as usize].symbols, alphabet, &rank_patterns[&r]));
            // The part itself spans at least two iterations' worth of events (a glued instance
            // of one iteration — NAS CG's outer iteration seen once at another alignment — is
            // not a repetition to split).
            let hit = cands.iter().position(|(body, copies)| {
                copies[0].0 <= part.last_event
                    && copies[copies.len() - 1].1 > part.first_event
                    && (part.last_event - part.first_event + 1) as usize >= 2 * body.len()
            });
            match hit {
                Some(i) if k.is_none_or(|k| k == cands[i].1.len()) => {
                    k = Some(cands[i].1.len());
                    picks.push((r, i));
                }
                _ => {
                    picks.clear();
                    break;
                }
            }
        }
        for (r, i) in picks {
            let c = chosen.entry(r).or_default();
            if !c.contains(&i) {
                c.push(i);
            }
        }
    }
    if chosen.is_empty() {
        return None;
    }
    let saved = rank_patterns.clone();
    for (r, picks) in &chosen {
        let seq = &events.ranks[*r as usize].symbols;
        let pats = rank_patterns.get_mut(r).expect("every rank has patterns");
        for &i in picks {
            let (symbols, copies) = candidates[r][i].clone();
            pats.retain(|p| p.symbols != symbols);
            let mut p = vec![RankPattern {
                sequence: Vec::new(),
                compact: String::new(),
                frequency: copies.len(),
                positions: copies.iter().map(|c| c.0).collect(),
                ends: copies.iter().map(|c| c.1).collect(),
                tandem: true,
                repeat: false,
                outer: true,
                symbols,
            }];
            name_patterns(&mut p, seq, &events.names);
            pats.extend(p);
        }
        pats.sort_by(|a, b| {
            b.frequency
                .cmp(&a.frequency)
                .then(b.symbols.len().cmp(&a.symbols.len()))
                .then(a.positions[0].cmp(&b.positions[0]))
                .then(a.symbols.cmp(&b.symbols))
        });
    }
    let occurrences: Vec<Vec<(u32, u32)>> = events
        .ranks
        .iter()
        .map(|re| parse_occurrences(re.symbols.len(), &rank_patterns[&re.rank]))
        .collect();
    let occurrences = align::align_runs(trace, matching, events, &occurrences);
    let redone = construct(trace, matching, events, &occurrences);
    // Kept only where fewer events are left in one-off instances: on a rank whose loop is cut
    // anew, a partner's composite may chain more than before (HPCC's latency/bandwidth rings).
    let glued_events = |c: &CommunicationAnalysis| -> u64 {
        c.patterns
            .iter()
            .filter(|p| p.occurrences == 1 && p.from_rank_patterns && p.ranks.len() >= 2)
            .map(|p| p.events_covered)
            .sum()
    };
    if glued_events(&redone) >= glued_events(communication) {
        *rank_patterns = saved;
        return None;
    }
    Some((occurrences, redone))
}

/// Non-overlapping occurrences covering a rank's events, left to right: at each position the
/// most frequent pattern starting there wins (ties: the longer), so repeated building blocks
/// (one sweep, one exchange) are preferred over their compositions. An occurrence of a rarer
/// pattern that is no loop body is not taken where the rank's main loop (the loop body, run three
/// times in a row somewhere, covering most events) starts inside it: its first event stays a
/// single event and the parse goes on, so a composite seen twice cannot hide the main loop it
/// encloses, while composites holding other frequent parts (LU's set-up: two exchanges, `l2norm`
/// and a time step whose per-plane sends are counted 30 times) stay whole.
pub fn parse_occurrences(len: usize, patterns: &[RankPattern]) -> Vec<(u32, u32)> {
    // The rank's main loop: the loop body covering most events.
    let main = patterns
        .iter()
        .enumerate()
        .filter(|(_, p)| is_loop_body(p) && !p.outer)
        .max_by_key(|(i, p)| (p.frequency * p.symbols.len(), std::cmp::Reverse(*i)))
        .map(|(i, _)| i);
    // (frequency, length, end, loop body) of the best pattern starting at each position, and
    // where an occurrence of the main loop body starts.
    let mut best: Vec<(u32, u32, u32, bool)> = vec![(0, 0, 0, false); len];
    let mut main_at = vec![false; if main.is_some() { len } else { 0 }];
    // An outer loop's iteration is taken before the parts inside it (the inner loops stay in
    // the body): it ranks above every frequency.
    for (k, p) in patterns.iter().enumerate() {
        let looped = is_loop_body(p);
        let f = if p.outer { u32::MAX } else { p.frequency as u32 };
        for (&s, &e) in p.positions.iter().zip(&p.ends) {
            let slot = &mut best[s as usize];
            if (f, e - s) > (slot.0, slot.1) {
                *slot = (f, e - s, e, looped);
            }
            if Some(k) == main {
                main_at[s as usize] = true;
            }
        }
    }
    let main_frequency = main.map_or(0, |k| {
        if patterns[k].outer {
            u32::MAX
        } else {
            patterns[k].frequency as u32
        }
    });
    let mut out = Vec::new();
    let mut i = 0usize;
    while i < len {
        let (f, _, e, looped) = best[i];
        // A rarer composite that is no loop body yields where the main loop starts inside it
        // (MG's set-up followed by its whole V-cycle loop, twice, would otherwise hide the halo
        // exchanges).
        let yields = !looped && main_frequency > f && main_at.get(i + 1..e as usize).is_some_and(|m| m.contains(&true));
        if f > 0 && !yields {
            out.push((i as u32, e));
            i = e as usize;
        } else {
            i += 1;
        }
    }
    out
}

/// A pattern run at least three times in a row somewhere: the body of a loop (as the alignment
/// takes it), which keeps its parts whatever their counts. A tandem run of two (`Barrier`,
/// exchange, twice in MG's set-up) or a repeat far apart is a composite that may yield.
fn is_loop_body(p: &RankPattern) -> bool {
    let mut adjacent = 0;
    for (end, next) in p.ends.iter().zip(p.positions.iter().skip(1)) {
        adjacent = if end == next { adjacent + 1 } else { 0 };
        if adjacent >= 2 {
            return true;
        }
    }
    false
}

/// One occurrence of a searched communication pattern: connected windows on every rank of the
/// pattern, each within the allowed edit distance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchMatch {
    /// Earliest entry time (ns) of its calls.
    pub start: tracelogic_model::Time,
    /// Latest exit time.
    pub end: tracelogic_model::Time,
    /// Per pattern rank, the matched window.
    pub windows: BTreeMap<Rank, approx::ApproxMatch>,
    /// Sum of the windows' edit distances.
    pub edits: u32,
}

/// The result of searching a given pattern (thesis §4.5 then §4.7).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PatternSearch {
    /// Allowed edits per rank.
    pub max_edits: u32,
    /// Per rank of the pattern, the similar windows found on it.
    pub rank_matches: BTreeMap<Rank, Vec<approx::ApproxMatch>>,
    /// Filter counters per rank.
    pub rank_stats: BTreeMap<Rank, approx::ApproxStats>,
    /// Occurrences across ranks: windows joined through their messages, covering every rank
    /// of the pattern.
    pub matches: Vec<SearchMatch>,
}

/// Longest per-rank pattern [`search_pattern`] accepts.
pub const MAX_SEARCH_EVENTS: usize = 4096;

/// Search `pattern` (rank → event symbols, e.g. `S1 R4`) in the trace with at most `max_edits`
/// edits per rank, using bi-grams for the filter. Symbols the trace never uses match nothing
/// (they still count as edits).
pub fn search_pattern(
    trace: &Trace,
    matching: &tracelogic_model::Matching,
    events: &Events,
    pattern: &BTreeMap<Rank, Vec<String>>,
    max_edits: u32,
) -> Result<PatternSearch, String> {
    let mut extra: HashMap<&str, u32> = HashMap::new();
    let mut occurrences = vec![Vec::new(); events.ranks.len()];
    let mut out = PatternSearch {
        max_edits,
        ..Default::default()
    };
    for (&rank, syms) in pattern {
        let re = events
            .ranks
            .get(rank as usize)
            .ok_or_else(|| format!("pattern names rank {rank}, the trace has {} ranks", events.ranks.len()))?;
        if syms.is_empty() {
            return Err(format!("pattern rank {rank} has no events"));
        }
        if syms.len() > MAX_SEARCH_EVENTS {
            return Err(format!(
                "pattern rank {rank} has {} events; at most {MAX_SEARCH_EVENTS} are searched (each candidate costs length² to verify)",
                syms.len()
            ));
        }
        let ids: Vec<u32> = syms
            .iter()
            .map(|s| {
                events.symbol(s).unwrap_or_else(|| {
                    let next = events.names.len() as u32 + extra.len() as u32;
                    *extra.entry(s.as_str()).or_insert(next)
                })
            })
            .collect();
        let (m, stats) = approx::approximate_matches(&re.symbols, &ids, max_edits, 2);
        occurrences[rank as usize] = m.iter().map(|w| (w.start, w.start + w.len)).collect();
        out.rank_matches.insert(rank, m);
        out.rank_stats.insert(rank, stats);
    }
    // An occurrence needs a window on every rank of the pattern: without one somewhere there is
    // nothing to join (and orientation searches skip the construction).
    if out.rank_matches.values().any(Vec::is_empty) {
        return Ok(out);
    }
    let comm = construct(trace, matching, events, &occurrences);
    for inst in &comm.instances {
        let mut windows = BTreeMap::new();
        for part in &inst.parts {
            if let Some(m) = out.rank_matches.get(&part.rank) {
                let i = m.partition_point(|w| w.start + w.len <= part.first_event);
                if let Some(w) = m.get(i).filter(|w| w.start <= part.last_event) {
                    windows.insert(part.rank, *w);
                }
            }
        }
        if windows.len() == pattern.len() {
            let edits = windows.values().map(|w| w.edits).sum();
            out.matches.push(SearchMatch {
                start: inst.start,
                end: inst.end,
                windows,
                edits,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions_of(patterns: &[RankPattern], symbols: &[u32]) -> Vec<u32> {
        patterns
            .iter()
            .find(|p| p.symbols == symbols)
            .map(|p| p.positions.clone())
            .unwrap_or_default()
    }

    /// An outer loop whose body begins and ends with the same inner loop: the general form
    /// merges the inner runs across iterations; the outer loop is found with one copy per
    /// iteration, starting after the set-up. A rotation with as many copies as the run is not.
    #[test]
    fn outer_loop_iterations_start_where_the_loop_starts() {
        // set-up 7 8, then 4 × (C C x y C C C) with C = 0 1, then 9.
        let mut s = vec![7, 8];
        for _ in 0..4 {
            s.extend([0, 1, 0, 1, 5, 6, 0, 1, 0, 1, 0, 1]);
        }
        s.push(9);
        let p = detect(&s, 10, None, &PatternOptions::default());
        let outer = outer_loops(&s, 10, &p);
        assert_eq!(outer.len(), 1, "{outer:?}");
        assert_eq!(outer[0].0, s[2..14].to_vec());
        assert_eq!(outer[0].1, vec![(2, 14), (14, 26), (26, 38), (38, 50)]);
        // The same loop entered at the inner loop's tail (`1` before it): the body still starts
        // where the periodicity starts.
        let mut t = vec![7, 1];
        t.extend_from_slice(&s[2..]);
        let p = detect(&t, 10, None, &PatternOptions::default());
        let outer = outer_loops(&t, 10, &p);
        assert_eq!(outer[0].1.len(), 4, "{outer:?}");
        // A loop without inner loops is left to the tandem runs.
        let plain: Vec<u32> = (0..6).flat_map(|_| [0, 1, 2, 3]).collect();
        let p = detect(&plain, 4, None, &PatternOptions::default());
        assert!(outer_loops(&plain, 4, &p).is_empty());
    }

    /// A loop body executed once between other calls is an occurrence like its runs' copies.
    #[test]
    fn loop_body_outside_its_runs_is_an_occurrence() {
        // 5 (0 1)x3 6 (0 1) 7 7 (0 1)x4 6
        let s = [5, 0, 1, 0, 1, 0, 1, 6, 0, 1, 7, 7, 0, 1, 0, 1, 0, 1, 0, 1, 6];
        let p = detect(&s, 8, None, &PatternOptions::default());
        assert_eq!(positions_of(&p, &[0, 1]), vec![1, 3, 5, 8, 12, 14, 16, 18]);
    }

    /// Inside a body that repeats more often than the unit, the unit stays part of that body.
    #[test]
    fn unit_inside_a_more_frequent_body_is_not_added() {
        // (0 1)x2 then (2 0 1 3)x5: `0 1` inside each step is part of the step.
        let mut s = vec![0, 1, 0, 1];
        for _ in 0..5 {
            s.extend([2, 0, 1, 3]);
        }
        let p = detect(&s, 4, None, &PatternOptions::default());
        assert_eq!(positions_of(&p, &[0, 1]), vec![0, 2]);
        assert_eq!(positions_of(&p, &[2, 0, 1, 3]).len(), 5);
    }

    fn pattern(symbols: Vec<u32>, occurrences: &[(u32, u32)]) -> RankPattern {
        RankPattern {
            sequence: Vec::new(),
            compact: String::new(),
            frequency: occurrences.len(),
            positions: occurrences.iter().map(|o| o.0).collect(),
            ends: occurrences.iter().map(|o| o.1).collect(),
            tandem: true,
            repeat: false,
            outer: false,
            symbols,
        }
    }

    /// A rare composite starting before a more frequent pattern does not swallow it; one starting
    /// with the frequent pattern loses at its start; a frequent composite keeps its parts.
    #[test]
    fn rarer_composite_yields_to_frequent_pattern_inside() {
        // Set-up event, then a loop of 4 exchanges (2 events each), twice: the composite
        // `b (x y)` occurs twice and spans each loop.
        let composite = pattern(vec![9, 0, 1], &[(0, 9), (9, 18)]);
        let exchange = pattern(
            vec![0, 1],
            &[(1, 3), (3, 5), (5, 7), (7, 9), (10, 12), (12, 14), (14, 16), (16, 18)],
        );
        let occ = parse_occurrences(18, &[composite, exchange.clone()]);
        assert_eq!(
            occ,
            exchange
                .positions
                .iter()
                .zip(&exchange.ends)
                .map(|(&s, &e)| (s, e))
                .collect::<Vec<_>>()
        );
        // A step seen 3 times containing a part seen twice keeps the step.
        let step = pattern(vec![0, 1, 2, 3], &[(0, 4), (4, 8), (8, 12)]);
        let part = pattern(vec![1, 2], &[(1, 3), (5, 7)]);
        assert_eq!(
            parse_occurrences(12, &[step.clone(), part]),
            vec![(0, 4), (4, 8), (8, 12)]
        );
        // A loop body (three copies in a row) keeps a part counted more often elsewhere.
        let part = pattern(vec![1, 2], &[(1, 3), (5, 7), (9, 11), (12, 14), (14, 16)]);
        assert_eq!(
            parse_occurrences(16, &[step, part]),
            vec![(0, 4), (4, 8), (8, 12), (12, 14), (14, 16)]
        );
    }
}
