//! Tandem (contiguous) repeat removal, thesis §4.6 (Algorithms 4.5 and 4.6), iterated to a
//! fixpoint and lossless.
//!
//! One level scans the sequence left to right. At position `i` the candidate periods are the
//! distances to the next occurrences of the bi-gram `s[i] s[i+1]` (Algorithm 4.6 takes the next
//! one; a few more are tried so that a bi-gram recurring inside the unit does not hide the
//! repeat). The first candidate `L` with `s[i..i+L] == s[i+L..i+2L]` (last symbols compared
//! first, as the thesis' `gram1`/`gram2` shortcut) is a tandem repeat; it is extended to all
//! `k ≥ 2` contiguous copies and replaced by one copy (general form, the thesis' choice) or by
//! one new token meaning "this unit `k` times" (exact form). Levels repeat until nothing changes,
//! because removing repeats can create new ones (`ab ab c ab c` → `ab c ab c` → `ab c`).
//!
//! Every collapse is recorded with its unit, its count and the original span of every copy, so
//! [`Reduction::expand`] gives back the original sequence exactly, and every unit is a pattern
//! whose occurrences are known in the original sequence.

use serde::{Deserialize, Serialize};

/// Longest unit tried (in symbols of the level being scanned).
pub const MAX_PERIOD: usize = 4096;
/// Symbols from here up are barriers (routine boundaries): unique, never part of a repeat.
pub const BARRIER: u32 = u32::MAX / 2;
/// Largest bi-gram table [`reduce_by_trace_ids`] keeps dense (entries).
const DENSE_BIGRAMS: usize = 1 << 22;
/// Alphabets up to this size find bi-gram recurrences through a table of `size²` last
/// positions (256 KiB at most) rather than by sorting ([`bigram_recurrences`]).
const SMALL_ALPHABET: usize = 256;
/// Bi-gram recurrences tried per position.
const CANDIDATES: usize = 4;

/// One run of contiguous copies replaced by one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Collapse {
    /// Position of the kept copy (or of the token) in this level's output.
    pub at: u32,
    /// The repeated unit, in this level's input symbols.
    pub unit: Vec<u32>,
    /// Number of contiguous copies (≥ 2).
    pub count: u32,
    /// Original `[start, end)` span of every copy.
    pub copies: Vec<(u32, u32)>,
}

/// A sequence with its tandem repeats removed, and how to undo it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reduction {
    /// The reduced sequence.
    pub sequence: Vec<u32>,
    /// Original `[start, end)` span of each reduced position (covering all collapsed copies).
    pub spans: Vec<(u32, u32)>,
    /// Original extent of the outermost collapsed run each reduced position belongs to (its own
    /// span when it never was in a run): a stretch of the reduced string stands for a clean
    /// original stretch only if it starts where its first position's run starts and ends where
    /// its last position's run ends.
    pub extents: Vec<(u32, u32)>,
    /// Collapses of each level, in level order.
    pub levels: Vec<Vec<Collapse>>,
    /// Exact form: each collapse became one token, numbered from `first_token` upwards in
    /// collapse order; `None` for the general form.
    pub first_token: Option<u32>,
    /// Symbols of the original sequence are `< first_token` in exact form (tokens follow).
    pub tokens: Vec<(Vec<u32>, u32)>,
}

impl Reduction {
    /// The original sequence, rebuilt from the reduced one and the collapse records.
    pub fn expand(&self) -> Vec<u32> {
        let mut seq = self.sequence.clone();
        for level in self.levels.iter().rev() {
            let mut prev = Vec::with_capacity(seq.len() * 2);
            let mut i = 0usize;
            for c in level {
                let at = c.at as usize;
                prev.extend_from_slice(&seq[i..at]);
                for _ in 0..c.count {
                    prev.extend_from_slice(&c.unit);
                }
                i = at + if self.first_token.is_some() { 1 } else { c.unit.len() };
            }
            prev.extend_from_slice(&seq[i..]);
            seq = prev;
        }
        seq
    }

    /// Total number of tandem repeats removed (collapses over all levels).
    pub fn collapses(&self) -> usize {
        self.levels.iter().map(Vec::len).sum()
    }
}

/// Remove tandem repeats of `seq` until none is left. `exact` keeps repeat counts in the reduced
/// symbols (a run becomes a token `≥ alphabet`); otherwise runs shrink to one copy of their unit.
/// Symbols `≥ BARRIER` are barriers that never take part in a repeat.
///
/// The reduction runs on the sequence's own symbols renumbered densely (trace-wide symbol ids
/// grow with the rank count, one rank uses a few of them), so its time and memory depend on `seq`
/// alone; the result is in the caller's symbols, the same as [`reduce_by_trace_ids`] gives.
pub fn reduce(seq: &[u32], alphabet: u32, exact: bool) -> Reduction {
    reduce_nested(seq, alphabet, exact, false)
}

/// [`reduce`], or with `innermost` the loops innermost first: a repeat whose unit holds a
/// shorter tandem repeat waits for a later level, when that repeat is one copy. Without it the
/// scan takes whichever repeat starts first, so an outer loop whose body starts with a
/// non-repeated event (an MD period's extra reduction) is collapsed before the loop inside it,
/// which is then found in the kept copy only, its occurrences spanning all the copies.
pub fn reduce_nested(seq: &[u32], alphabet: u32, exact: bool, innermost: bool) -> Reduction {
    let (local, originals) = renumber(seq, |x| x >= BARRIER);
    let distinct = originals.len() as u32;
    let mut red = reduce_with(&local, distinct, exact, innermost, bigram_recurrences);
    let to_caller = |x: u32| match x {
        x if x < distinct => originals[x as usize],
        x if x < BARRIER => alphabet + (x - distinct),
        x => x,
    };
    let translate = |symbols: &mut Vec<u32>| symbols.iter_mut().for_each(|x| *x = to_caller(*x));
    translate(&mut red.sequence);
    red.levels.iter_mut().flatten().for_each(|c| translate(&mut c.unit));
    red.tokens.iter_mut().for_each(|(unit, _)| translate(unit));
    red.first_token = exact.then_some(alphabet);
    red
}

/// [`reduce`] on the caller's symbol ids as they are, with the bi-gram table sized by the
/// largest id (dense up to 4M entries, a hash map above): the implementation before the
/// renumbering, whose cost grows with the trace's alphabet. Kept as the reference the tests
/// compare [`reduce`] with.
#[doc(hidden)]
pub fn reduce_by_trace_ids(seq: &[u32], alphabet: u32, exact: bool) -> Reduction {
    reduce_with(seq, alphabet, exact, false, bigram_recurrences_by_id_table)
}

fn reduce_with(
    seq: &[u32],
    alphabet: u32,
    exact: bool,
    innermost: bool,
    recurrences: fn(&[u32]) -> Vec<u32>,
) -> Reduction {
    let mut cur: Vec<u32> = seq.to_vec();
    let mut spans: Vec<(u32, u32)> = (0..seq.len() as u32).map(|i| (i, i + 1)).collect();
    let mut extents = spans.clone();
    let mut levels = Vec::new();
    let mut tokens: Vec<(Vec<u32>, u32)> = Vec::new();
    let mut token_ids: std::collections::HashMap<(Vec<u32>, u32), u32> = Default::default();
    loop {
        let next_same = recurrences(&cur);
        let (next, next_spans, next_extents, collapses) = one_level(
            &cur,
            &next_same,
            &spans,
            &extents,
            (exact, innermost),
            alphabet,
            &mut tokens,
            &mut token_ids,
        );
        if collapses.is_empty() {
            break;
        }
        levels.push(collapses);
        cur = next;
        spans = next_spans;
        extents = next_extents;
    }
    Reduction {
        sequence: cur,
        spans,
        extents,
        levels,
        first_token: exact.then_some(alphabet),
        tokens,
    }
}

/// Symbols renumbered densely in order of first appearance, except those `keep` leaves as they
/// are; returns the renumbered sequence and the original symbol of each new id. O(n) time and
/// memory whatever the symbols' range: a table indexed by symbol while the range is within a
/// small multiple of the length, a hash map beyond.
pub(crate) fn renumber(seq: &[u32], keep: impl Fn(u32) -> bool) -> (Vec<u32>, Vec<u32>) {
    let mut out = Vec::with_capacity(seq.len());
    let mut originals = Vec::new();
    let bound = seq
        .iter()
        .copied()
        .filter(|&x| !keep(x))
        .max()
        .map_or(0, |m| m as usize + 1);
    if bound <= 4 * seq.len() + 4096 {
        let mut id = vec![u32::MAX; bound];
        for &x in seq {
            if keep(x) {
                out.push(x);
                continue;
            }
            let slot = &mut id[x as usize];
            if *slot == u32::MAX {
                *slot = originals.len() as u32;
                originals.push(x);
            }
            out.push(*slot);
        }
    } else {
        let mut id: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
        for &x in seq {
            if keep(x) {
                out.push(x);
                continue;
            }
            let next = originals.len() as u32;
            let local = *id.entry(x).or_insert(next);
            if local == next {
                originals.push(x);
            }
            out.push(local);
        }
    }
    (out, originals)
}

/// `next[i]`: the next `j > i` with the same bi-gram `s[j] s[j+1]` as `s[i] s[i+1]` (`u32::MAX`
/// if none); bi-grams touching a barrier have none. Over a small alphabet (at most
/// [`SMALL_ALPHABET`] symbols: a table of every bi-gram's last position fits the cache) one
/// backward pass through that table; otherwise positions are grouped by bi-gram with two stable
/// counting sorts (second symbol, then first), so O(n + largest symbol) time and memory: linear
/// for the densely renumbered sequences [`reduce`] passes. Where the table applies (LU C 128:
/// every sequence) its single pass takes a fifth of the sorts' time (9.4 → 2.0 % of the
/// patterns' profile).
fn bigram_recurrences(s: &[u32]) -> Vec<u32> {
    match alphabet_bound(s) {
        0 => vec![u32::MAX; s.len()],
        bound if bound <= SMALL_ALPHABET => bigram_recurrences_by_table(s, bound),
        bound => bigram_recurrences_sorted(s, bound),
    }
}

/// One more than the largest symbol of `s` that is no barrier (0: none).
fn alphabet_bound(s: &[u32]) -> usize {
    s.iter()
        .copied()
        .filter(|&x| x < BARRIER)
        .max()
        .map_or(0, |m| m as usize + 1)
}

/// [`bigram_recurrences`] by one backward pass through a table of every bi-gram's last position
/// (`bound²` entries). O(n + bound²).
fn bigram_recurrences_by_table(s: &[u32], bound: usize) -> Vec<u32> {
    let n = s.len();
    let mut next_same = vec![u32::MAX; n];
    let mut last = vec![u32::MAX; bound * bound];
    for i in (0..n.saturating_sub(1)).rev() {
        let (a, b) = (s[i], s[i + 1]);
        if a >= BARRIER || b >= BARRIER {
            continue;
        }
        let slot = &mut last[a as usize * bound + b as usize];
        next_same[i] = *slot;
        *slot = i as u32;
    }
    next_same
}

/// [`bigram_recurrences`] by two counting sorts over an alphabet of `bound` symbols.
fn bigram_recurrences_sorted(s: &[u32], bound: usize) -> Vec<u32> {
    let n = s.len();
    let mut next_same = vec![u32::MAX; n];
    let starts: Vec<u32> = (0..n.saturating_sub(1) as u32)
        .filter(|&i| s[i as usize] < BARRIER && s[i as usize + 1] < BARRIER)
        .collect();
    let mut count = vec![0u32; bound + 1];
    let mut sorted = vec![0u32; starts.len()];
    let mut by_second = vec![0u32; starts.len()];
    let mut counting_sort = |from: &[u32], to: &mut [u32], key: &dyn Fn(u32) -> usize| {
        count.iter_mut().for_each(|c| *c = 0);
        for &i in from {
            count[key(i) + 1] += 1;
        }
        for k in 1..count.len() {
            count[k] += count[k - 1];
        }
        for &i in from {
            let slot = &mut count[key(i)];
            to[*slot as usize] = i;
            *slot += 1;
        }
    };
    counting_sort(&starts, &mut by_second, &|i| s[i as usize + 1] as usize);
    counting_sort(&by_second, &mut sorted, &|i| s[i as usize] as usize);
    for w in sorted.windows(2) {
        let (i, j) = (w[0] as usize, w[1] as usize);
        if s[i] == s[j] && s[i + 1] == s[j + 1] {
            next_same[i] = j as u32;
        }
    }
    next_same
}

/// [`bigram_recurrences`] as it was computed before the renumbering: a table indexed by the
/// pair of symbol ids, its side the largest id in the sequence (a hash map past 4M entries).
fn bigram_recurrences_by_id_table(s: &[u32]) -> Vec<u32> {
    let n = s.len();
    let bound = alphabet_bound(s);
    if bound * bound <= DENSE_BIGRAMS {
        return bigram_recurrences_by_table(s, bound);
    }
    let mut next_same = vec![u32::MAX; n];
    let mut last: std::collections::HashMap<(u32, u32), u32> = std::collections::HashMap::new();
    for i in (0..n.saturating_sub(1)).rev() {
        if s[i] >= BARRIER || s[i + 1] >= BARRIER {
            continue;
        }
        if let Some(j) = last.insert((s[i], s[i + 1]), i as u32) {
            next_same[i] = j;
        }
    }
    next_same
}

type Level = (Vec<u32>, Vec<(u32, u32)>, Vec<(u32, u32)>, Vec<Collapse>);

/// One left-to-right pass; `next_same` is [`bigram_recurrences`] of `s`.
#[allow(clippy::too_many_arguments)]
fn one_level(
    s: &[u32],
    next_same: &[u32],
    spans: &[(u32, u32)],
    extents: &[(u32, u32)],
    (exact, innermost): (bool, bool),
    alphabet: u32,
    tokens: &mut Vec<(Vec<u32>, u32)>,
    token_ids: &mut std::collections::HashMap<(Vec<u32>, u32), u32>,
) -> Level {
    let n = s.len();
    let mut out = Vec::with_capacity(n);
    let mut out_spans = Vec::with_capacity(n);
    let mut out_extents = Vec::with_capacity(n);
    let mut collapses = Vec::new();
    let mut i = 0usize;
    while i < n {
        let mut found = None;
        let mut j = next_same[i];
        for _ in 0..CANDIDATES {
            if j == u32::MAX {
                break;
            }
            let l = j as usize - i;
            if l > MAX_PERIOD || i + 2 * l > n {
                break;
            }
            if s[i + l - 1] == s[i + 2 * l - 1] && s[i..i + l] == s[i + l..i + 2 * l] {
                found = Some(l);
                break;
            }
            j = next_same[j as usize];
        }
        let found = found.filter(|&l| !innermost || !holds_repeat(s, next_same, i, i + l));
        let Some(l) = found else {
            out.push(s[i]);
            out_spans.push(spans[i]);
            out_extents.push(extents[i]);
            i += 1;
            continue;
        };
        let mut k = 2usize;
        while i + (k + 1) * l <= n && s[i + k * l..i + (k + 1) * l] == s[i..i + l] {
            k += 1;
        }
        let unit = s[i..i + l].to_vec();
        let copies: Vec<(u32, u32)> = (0..k)
            .map(|c| (spans[i + c * l].0, spans[i + c * l + l - 1].1))
            .collect();
        let at = out.len() as u32;
        let extent = (spans[i].0, spans[i + k * l - 1].1);
        if exact {
            let key = (unit.clone(), k as u32);
            let next_id = alphabet + tokens.len() as u32;
            let id = *token_ids.entry(key.clone()).or_insert_with(|| {
                tokens.push(key);
                next_id
            });
            out.push(id);
            out_spans.push(extent);
            out_extents.push(extent);
        } else {
            for t in 0..l {
                out.push(s[i + t]);
                out_spans.push((spans[i + t].0, spans[i + (k - 1) * l + t].1));
                out_extents.push(extent);
            }
        }
        collapses.push(Collapse {
            at,
            unit,
            count: k as u32,
            copies,
        });
        i += k * l;
    }
    (out, out_spans, out_extents, collapses)
}

/// Whether `s[from..to]` holds a tandem repeat as [`one_level`] finds them (the first of a
/// position's bi-gram recurrences whose two copies are equal), both copies inside.
fn holds_repeat(s: &[u32], next_same: &[u32], from: usize, to: usize) -> bool {
    (from..to).any(|t| {
        let mut j = next_same[t];
        for _ in 0..CANDIDATES {
            if j == u32::MAX {
                return false;
            }
            let l = j as usize - t;
            if t + 2 * l > to {
                return false;
            }
            if s[t + l - 1] == s[t + 2 * l - 1] && s[t..t + l] == s[t + l..t + 2 * l] {
                return true;
            }
            j = next_same[j as usize];
        }
        false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(text: &str) -> Vec<u32> {
        text.bytes().map(|b| (b - b'a') as u32).collect()
    }

    /// Thesis Figure 4.11: `abcdabcdabcdmabcd` → `abcdmabcd`, tandem `abcd` copies at 4 and 8
    /// removed (the kept copy is at 0).
    #[test]
    fn figure_4_11() {
        let s = sym("abcdabcdabcdmabcd");
        let r = reduce(&s, 26, false);
        assert_eq!(r.sequence, sym("abcdmabcd"));
        assert_eq!(r.levels.len(), 1);
        let c = &r.levels[0][0];
        assert_eq!((c.at, c.count, c.unit.clone()), (0, 3, sym("abcd")));
        assert_eq!(c.copies, vec![(0, 4), (4, 8), (8, 12)]);
        assert_eq!(r.expand(), s);
    }

    /// Extents: `(ab)x3 c (ab)x2`: the run elements carry their run's whole extent, `c` its own.
    #[test]
    fn extents_mark_runs() {
        let r = reduce(&sym("abababcabab"), 26, false);
        assert_eq!(r.sequence, sym("abcab"));
        assert_eq!(r.spans[1], (1, 6));
        assert_eq!(&r.extents[..3], &[(0, 6), (0, 6), (6, 7)]);
        assert_eq!(r.extents[4], (7, 11));
    }

    /// An MD-like loop, `(9 (a b a b c d)x4)x3 (9 (a b c d)x4)x2`: scanning left to right, the
    /// period's first event `9` recurs before the step does, so the plain reduction collapses
    /// the period first and finds the step inside the kept copy, its "copies" reaching from the
    /// kept period into the last one. Innermost first, every run's copies are back to back,
    /// each ending where the next begins, as a run's copies are, and expand to the input.
    #[test]
    fn innermost_first_runs_are_back_to_back_copies() {
        let mut s = Vec::new();
        for (step, periods) in [("ababcd", 3), ("abcd", 2)] {
            for _ in 0..periods {
                s.extend(sym("z"));
                for _ in 0..4 {
                    s.extend(sym(step));
                }
            }
        }
        let contiguous = |r: &Reduction| {
            r.levels
                .iter()
                .flatten()
                .all(|c| c.copies.windows(2).all(|w| w[0].1 == w[1].0))
        };
        let plain = reduce(&s, 26, false);
        assert!(!contiguous(&plain), "{:?}", plain.levels);
        for exact in [false, true] {
            let r = reduce_nested(&s, 26, exact, true);
            assert!(contiguous(&r), "{:?}", r.levels);
            assert_eq!(r.expand(), s);
        }
        // The step (general form `a b c d`) is a unit whose copies are the 20 steps.
        let r = reduce_nested(&s, 26, false, true);
        let steps: usize = r
            .levels
            .iter()
            .flatten()
            .filter(|c| c.unit == sym("abcd"))
            .map(|c| c.copies.len())
            .sum();
        assert_eq!(steps, 20);
    }

    #[test]
    fn fixpoint_and_exact_tokens() {
        let s = sym("ababcababcx");
        let g = reduce(&s, 26, false);
        assert_eq!(g.sequence, sym("abcx"));
        assert_eq!(g.expand(), s);
        let e = reduce(&s, 26, true);
        assert_eq!(e.expand(), s);
        assert_eq!(e.sequence.len(), 2);
        assert_eq!(e.sequence[1], sym("x")[0]);
    }

    /// The table and the counting sorts give every position's next equal bi-gram alike, and
    /// both as a naive scan does: random sequences over alphabets on both sides of
    /// [`SMALL_ALPHABET`], with barriers.
    #[test]
    fn bigram_recurrences_by_table_and_by_sort_match_a_naive_scan() {
        let mut rng = crate::phases::merge::SplitMix(7);
        let mut next = |n: u64| rng.below(n as usize) as u64;
        for case in 0..400 {
            let alphabet = [2, 5, 40, SMALL_ALPHABET as u64, 600][case % 5];
            let n = next(200) as usize;
            let s: Vec<u32> = (0..n)
                .map(|_| {
                    if next(10) == 0 {
                        BARRIER + next(3) as u32
                    } else {
                        next(alphabet) as u32
                    }
                })
                .collect();
            let naive: Vec<u32> = (0..n)
                .map(|i| {
                    if i + 1 >= n || s[i] >= BARRIER || s[i + 1] >= BARRIER {
                        return u32::MAX;
                    }
                    (i + 1..n - 1)
                        .find(|&j| s[j] == s[i] && s[j + 1] == s[i + 1])
                        .map_or(u32::MAX, |j| j as u32)
                })
                .collect();
            assert_eq!(bigram_recurrences(&s), naive, "case {case}");
            let bound = alphabet_bound(&s).max(1);
            assert_eq!(bigram_recurrences_sorted(&s, bound), naive, "case {case}");
            assert_eq!(bigram_recurrences_by_table(&s, bound), naive, "case {case}");
        }
    }
}
