//! Per-rank patterns: tandem removal, maximal repeats and the outer loops of a rank's
//! sequence ([`detect`], [`outer_loops`]).

use super::*;

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
    detect_nested(seq, alphabet, barrier_after, opts, false)
}

/// [`detect`], with `innermost` removing tandem repeats innermost first
/// ([`tandem::reduce_nested`]).
pub fn detect_nested(
    seq: &[u32],
    alphabet: u32,
    barrier_after: Option<&[bool]>,
    opts: &PatternOptions,
    innermost: bool,
) -> Vec<RankPattern> {
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
    let red = tandem::reduce_nested(s, alphabet, !opts.tandem, innermost);
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
pub(super) fn complete_loop_bodies(
    s: &[u32],
    red: &tandem::Reduction,
    acc: &mut HashMap<Vec<u32>, Found>,
    min_len: usize,
) {
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
pub(super) fn dense_symbols(seq: &[u32]) -> (Vec<u32>, usize) {
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

pub(super) fn expand_tokens(key: &[u32], red: &tandem::Reduction, alphabet: u32) -> Vec<u32> {
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
pub(super) struct PrefixMax {
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
pub(super) type Occurrences = Vec<Vec<(u32, u32)>>;

/// Occurrence spans of one pattern key, and whether it came from tandem units / repeats.
pub(super) type Found = (Vec<(u32, u32)>, bool, bool);
