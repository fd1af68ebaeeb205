//! How our valid patterns differ from the plain maximal repeats a suffix-array repeat finder
//! reports, on the thesis' worked examples (Figure 4.5 Sweep3D, Figure 4.7, Table 4.7).
//!
//! The plain finder here is independent of `patterns::suffix`: a suffix array by comparison sort,
//! LCPs by direct comparison, LCP intervals as right-maximal repeats, kept when left-maximal
//! (the textbook definition: a repeat whose occurrences cannot all be extended by the same symbol
//! on either side). It is cross-checked against the definition by brute force.

use std::collections::{BTreeMap, BTreeSet};
use tracelogic_analysis::patterns::{detect, name_patterns, PatternOptions};

/// Maximal repeats of `s` (each symbol one char) with their start positions, by suffix array and
/// LCP intervals.
fn maximal_repeats(s: &[u8]) -> BTreeMap<Vec<u8>, Vec<usize>> {
    let n = s.len();
    let mut sa: Vec<usize> = (0..n).collect();
    sa.sort_by(|&a, &b| s[a..].cmp(&s[b..]));
    let lcp: Vec<usize> = (0..n)
        .map(|i| {
            if i == 0 {
                return 0;
            }
            s[sa[i - 1]..]
                .iter()
                .zip(&s[sa[i]..])
                .take_while(|(x, y)| x == y)
                .count()
        })
        .collect();
    let mut out = BTreeMap::new();
    // Every LCP interval [lb, rb] with value h > 0: a right-maximal repeat of length h.
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)]; // (lcp value, left bound)
    for i in 1..=n {
        let h = if i < n { lcp[i] } else { 0 };
        let mut lb = i - 1;
        while stack.last().is_some_and(|&(v, _)| v > h) {
            let (v, l) = stack.pop().unwrap();
            let occ: Vec<usize> = sa[l..i].to_vec();
            let left: BTreeSet<Option<u8>> = occ.iter().map(|&p| p.checked_sub(1).map(|q| s[q])).collect();
            if left.len() > 1 || left.contains(&None) {
                let mut occ = occ;
                occ.sort_unstable();
                out.insert(s[occ[0]..occ[0] + v].to_vec(), occ);
            }
            lb = l;
        }
        if stack.last().is_none_or(|&(v, _)| v < h) {
            stack.push((h, lb));
        }
    }
    out
}

/// The same set by the definition: substrings occurring at least twice whose occurrences do not
/// all share the previous symbol, nor all the next one.
fn maximal_repeats_by_definition(s: &[u8]) -> BTreeSet<Vec<u8>> {
    let n = s.len();
    let mut out = BTreeSet::new();
    for len in 1..n {
        let mut seen: BTreeMap<&[u8], Vec<usize>> = BTreeMap::new();
        for p in 0..=n - len {
            seen.entry(&s[p..p + len]).or_default().push(p);
        }
        for (w, occ) in seen {
            if occ.len() < 2 {
                continue;
            }
            let left: BTreeSet<Option<u8>> = occ.iter().map(|&p| p.checked_sub(1).map(|q| s[q])).collect();
            let right: BTreeSet<Option<u8>> = occ.iter().map(|&p| s.get(p + len).copied()).collect();
            let left_max = left.len() > 1 || left.contains(&None);
            let right_max = right.len() > 1 || right.contains(&None);
            if left_max && right_max {
                out.insert(w.to_vec());
            }
        }
    }
    out
}

/// Our detector's patterns (general form: each pattern's first occurrence as written) and
/// frequencies.
fn ours(s: &[u8]) -> BTreeMap<Vec<u8>, usize> {
    let mut alphabet: Vec<u8> = s.to_vec();
    alphabet.sort_unstable();
    alphabet.dedup();
    let seq: Vec<u32> = s.iter().map(|c| alphabet.binary_search(c).unwrap() as u32).collect();
    let names: Vec<String> = alphabet.iter().map(|&c| (c as char).to_string()).collect();
    let mut p = detect(&seq, names.len() as u32, None, &PatternOptions::default());
    name_patterns(&mut p, &seq, &names);
    p.iter()
        .map(|q| (s[q.positions[0] as usize..q.ends[0] as usize].to_vec(), q.frequency))
        .collect()
}

fn text(keys: impl IntoIterator<Item = Vec<u8>>) -> Vec<String> {
    keys.into_iter().map(|k| String::from_utf8(k).unwrap()).collect()
}

/// The plain finder agrees with the definition on the examples and on pseudo-random strings.
#[test]
fn suffix_array_repeats_are_the_maximal_repeats() {
    let mut x = 99u64;
    let mut strings: Vec<Vec<u8>> = vec![
        b"abababacacacbdbdbdadadad".repeat(3),
        b"abcd".repeat(9),
        b"bcdebcdbcdbcdfbcd".to_vec(),
        b"aaaa".to_vec(),
    ];
    for _ in 0..50 {
        let len = 1 + (x >> 59) as usize * 3;
        strings.push(
            (0..len)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    b"abc"[(x >> 62) as usize % 3]
                })
                .collect(),
        );
    }
    for s in strings {
        let sa: BTreeSet<Vec<u8>> = maximal_repeats(&s).into_keys().collect();
        assert_eq!(sa, maximal_repeats_by_definition(&s), "{}", String::from_utf8_lossy(&s));
    }
}

/// Figure 4.5 (Sweep3D, the global pattern `G` three times): the plain maximal repeats are 16
/// strings. Three are single symbols; of the 13 of length ≥ 2, ten are the suffix-tree noise the
/// thesis removes (`da`, `aba`, `dad`, `acac`, `bdbd`, `dada`, `ababa`, `dadad`, `dadada` and the
/// double copy `GG`), and only `ac`, `bd` and `G` are valid patterns. `ab` and `ad` are missing:
/// `ab` is always followed by `a` and `ad` always preceded by `d`, so neither is maximal. Our
/// detector returns exactly `ab`, `ac`, `bd`, `ad` (9 each) and `G` (3).
#[test]
fn figure_4_5_plain_repeats_are_noise() {
    let global = "abababacacacbdbdbdadadad";
    let s = global.repeat(3).into_bytes();
    let plain = maximal_repeats(&s);
    let mine = ours(&s);
    let by_length = |keys: Vec<String>| {
        let mut k = keys;
        k.sort_by(|a, b| a.len().cmp(&b.len()).then(a.cmp(b)));
        k
    };
    let double = global.repeat(2);
    assert_eq!(
        by_length(text(plain.keys().cloned())),
        vec![
            "a", "b", "d", "ac", "bd", "da", "aba", "dad", "acac", "bdbd", "dada", "ababa", "dadad", "dadada", global,
            &double
        ]
    );
    let count = |w: &str| plain[w.as_bytes()].len();
    assert_eq!(
        (count("a"), count("da"), count("dada"), count(global), count(&double)),
        (27, 11, 8, 3, 2)
    );
    assert_eq!(
        by_length(text(mine.keys().cloned())),
        vec!["ab", "ac", "ad", "bd", global]
    );
    assert!(mine.iter().all(|(k, &f)| f == if k.len() == 2 { 9 } else { 3 }));
    let plain_set: BTreeSet<Vec<u8>> = plain.keys().filter(|k| k.len() >= 2).cloned().collect();
    let mine_set: BTreeSet<Vec<u8>> = mine.keys().cloned().collect();
    assert_eq!(
        by_length(text(plain_set.intersection(&mine_set).cloned())),
        vec!["ac", "bd", global]
    );
    assert_eq!(
        by_length(text(mine_set.difference(&plain_set).cloned())),
        vec!["ab", "ad"]
    );
    assert_eq!(plain_set.difference(&mine_set).count(), 10, "noise of length >= 2");
}

/// Table 4.7 (WRF, `abcd` nine times): the plain finder reports the thesis' 8 suffix-tree
/// repeats, `(abcd)^1 … (abcd)^8`; our only pattern is `abcd`, 9 times.
#[test]
fn table_4_7_plain_repeats_are_the_eight_powers() {
    let s = b"abcd".repeat(9);
    let plain: Vec<String> = text(maximal_repeats(&s).into_keys());
    let mut want: Vec<String> = (1..=8).map(|k| "abcd".repeat(k)).collect();
    want.sort();
    assert_eq!(plain, want);
    let mine = ours(&s);
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[&b"abcd".to_vec()], 9);
}

/// Figure 4.7 (`S2 S3 R2` five times among `S5`, `S4`): the plain finder adds the double copy
/// `S2 S3 R2 S2 S3 R2` (twice, overlapping) next to `S2 S3 R2`; we report the unit only.
#[test]
fn figure_4_7_plain_repeats_add_the_double_copy() {
    // a = S2, b = S3, c = R2, x = S5, y = S4.
    let s = b"abcxabcabcabcyabc";
    let plain: Vec<String> = text(maximal_repeats(s).into_keys());
    assert_eq!(plain, vec!["abc", "abcabc"]);
    assert_eq!(maximal_repeats(s)[&b"abcabc".to_vec()], vec![4, 7]);
    let mine = ours(s);
    assert_eq!(text(mine.keys().cloned()), vec!["abc"]);
    assert_eq!(mine[&b"abc".to_vec()], 5);
}
