//! Suffix array (SA-IS, linear time), LCP array (Kasai, O(n)) and the maximal repeats they
//! reveal. Symbols are dense integers (event-symbol ids), so the byte-alphabet crates (`suffix`,
//! `divsufsort`) do not apply; `sais_drum` stops at 65,536 symbols, and `libsais` is C (the
//! `libsais-rs` translation is marked experimental by its authors), hence this implementation.

/// Marks a free slot of the suffix array while it is being built.
const EMPTY: u32 = u32::MAX;

/// Suffix array of `s`: `sa[j]` is the start of the `j`-th smallest suffix (a suffix that is a
/// prefix of another sorts first).
///
/// SA-IS (Nong, Zhang & Chan, *Two efficient algorithms for linear time suffix array
/// construction*, IEEE TC 2011): the suffixes are typed S or L, the leftmost-S (LMS) substrings
/// are sorted by one induced sort, named, and the reduced string of their names is sorted
/// recursively when two names coincide; a second induced sort from the sorted LMS suffixes gives
/// the array. O(n) time for any alphabet. `alphabet` is the caller's bound on the symbols; the
/// symbols' actual range is used, and a range wider than the sequence is first renumbered densely
/// so the bucket tables never exceed the larger of the sequence's length and 256. Sequences hold fewer than 2³² − 1
/// symbols (positions are `u32`).
pub fn suffix_array(s: &[u32], alphabet: usize) -> Vec<u32> {
    let n = s.len();
    assert!(n < EMPTY as usize, "suffix_array: {n} symbols do not fit u32 positions");
    let mut sa = vec![EMPTY; n];
    let Some(&max) = s.iter().max() else {
        return sa;
    };
    // The caller's bound only matters through the symbols it bounds.
    let _ = alphabet;
    let range = max as usize + 1;
    if range > n.max(256) {
        let mut distinct = s.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        let dense: Vec<u32> = s
            .iter()
            .map(|c| distinct.binary_search(c).unwrap_or_default() as u32)
            .collect();
        sais(&dense, &mut sa, distinct.len());
    } else {
        sais(s, &mut sa, range);
    }
    sa
}

/// `starts[c]`: the first slot of symbol `c`'s bucket in the suffix array.
fn bucket_starts(counts: &[u32], starts: &mut [u32]) {
    let mut sum = 0;
    for (b, &c) in starts.iter_mut().zip(counts) {
        *b = sum;
        sum += c;
    }
}

/// `ends[c]`: one past the last slot of symbol `c`'s bucket.
fn bucket_ends(counts: &[u32], ends: &mut [u32]) {
    let mut sum = 0;
    for (b, &c) in ends.iter_mut().zip(counts) {
        sum += c;
        *b = sum;
    }
}

/// SA-IS of `t` (symbols `< k`) into `sa` (same length), with a virtual sentinel after the
/// last symbol that is smaller than every symbol.
fn sais(t: &[u32], sa: &mut [u32], k: usize) {
    let n = t.len();
    match n {
        0 => return,
        1 => {
            sa[0] = 0;
            return;
        }
        _ => {}
    }
    // S-type: the suffix is smaller than the next one. The last suffix is L (the sentinel follows).
    let mut stype = vec![false; n];
    for i in (0..n - 1).rev() {
        stype[i] = t[i] < t[i + 1] || (t[i] == t[i + 1] && stype[i + 1]);
    }
    let is_lms = |i: usize| i > 0 && stype[i] && !stype[i - 1];
    let mut counts = vec![0u32; k];
    for &c in t {
        counts[c as usize] += 1;
    }
    let mut bucket = vec![0u32; k];

    // Stage 1: LMS suffixes at their buckets' ends, one induced sort: the LMS substrings are sorted.
    sa.fill(EMPTY);
    bucket_ends(&counts, &mut bucket);
    for (i, &c) in t.iter().enumerate().skip(1) {
        if is_lms(i) {
            let c = c as usize;
            bucket[c] -= 1;
            sa[bucket[c] as usize] = i as u32;
        }
    }
    induce(t, sa, &stype, &counts, &mut bucket);

    // The sorted LMS substrings to the front, then their names at `m + position / 2` (LMS
    // positions are at least two apart, so the slots differ).
    let mut m = 0;
    for i in 0..n {
        let j = sa[i] as usize;
        if is_lms(j) {
            sa[m] = j as u32;
            m += 1;
        }
    }
    sa[m..].fill(EMPTY);
    let mut names = 0u32;
    let mut previous = None;
    for i in 0..m {
        let p = sa[i] as usize;
        if previous.is_none_or(|q| !lms_substrings_equal(t, &stype, q, p)) {
            names += 1;
        }
        previous = Some(p);
        sa[m + p / 2] = names - 1;
    }
    // The reduced string (names in text order) to the last m slots.
    let mut j = n;
    for i in (m..n).rev() {
        if sa[i] != EMPTY {
            j -= 1;
            sa[j] = sa[i];
        }
    }

    // Stage 2: sort the reduced string's suffixes, recursively when names repeat.
    let (sa1, rest) = sa.split_at_mut(m);
    let s1 = &mut rest[n - 2 * m..];
    if (names as usize) < m {
        sais(s1, sa1, names as usize);
    } else {
        for (i, &c) in s1.iter().enumerate() {
            sa1[c as usize] = i as u32;
        }
    }
    // Back to text positions: the LMS positions in text order replace the reduced string.
    let mut j = 0;
    for i in 1..n {
        if is_lms(i) {
            s1[j] = i as u32;
            j += 1;
        }
    }
    for p in sa1.iter_mut() {
        *p = s1[*p as usize];
    }
    sa[m..].fill(EMPTY);

    // Stage 3: the sorted LMS suffixes at their buckets' ends (from the last, so none is
    // overwritten before it moves), and the final induced sort.
    bucket_ends(&counts, &mut bucket);
    for i in (0..m).rev() {
        let p = sa[i];
        sa[i] = EMPTY;
        let c = t[p as usize] as usize;
        bucket[c] -= 1;
        sa[bucket[c] as usize] = p;
    }
    induce(t, sa, &stype, &counts, &mut bucket);
}

/// Induce the L-type suffixes from left to right, then the S-type ones from right to left.
fn induce(t: &[u32], sa: &mut [u32], stype: &[bool], counts: &[u32], bucket: &mut [u32]) {
    let n = t.len();
    bucket_starts(counts, bucket);
    // The suffix before the virtual sentinel is L-type and the first of its bucket.
    let c = t[n - 1] as usize;
    sa[bucket[c] as usize] = (n - 1) as u32;
    bucket[c] += 1;
    for i in 0..n {
        let j = sa[i];
        if j != EMPTY && j > 0 && !stype[j as usize - 1] {
            let c = t[j as usize - 1] as usize;
            sa[bucket[c] as usize] = j - 1;
            bucket[c] += 1;
        }
    }
    bucket_ends(counts, bucket);
    for i in (0..n).rev() {
        let j = sa[i];
        if j != EMPTY && j > 0 && stype[j as usize - 1] {
            let c = t[j as usize - 1] as usize;
            bucket[c] -= 1;
            sa[bucket[c] as usize] = j - 1;
        }
    }
}

/// Whether the LMS substrings at `p` and `q` (up to and including the next LMS position) are
/// equal in symbols and types; one that reaches the sentinel equals no other.
fn lms_substrings_equal(t: &[u32], stype: &[bool], p: usize, q: usize) -> bool {
    let n = t.len();
    let is_lms = |i: usize| i > 0 && stype[i] && !stype[i - 1];
    let (mut a, mut b) = (p, q);
    loop {
        if a == n || b == n || t[a] != t[b] || stype[a] != stype[b] {
            return false;
        }
        if a > p && (is_lms(a) || is_lms(b)) {
            return is_lms(a) && is_lms(b);
        }
        a += 1;
        b += 1;
    }
}

/// LCP array: `lcp[j]` is the longest common prefix of suffixes `sa[j-1]` and `sa[j]` (`lcp[0] = 0`).
pub fn lcp_array(s: &[u32], sa: &[u32]) -> Vec<u32> {
    let n = s.len();
    let mut rank = vec![0u32; n];
    for (j, &i) in sa.iter().enumerate() {
        rank[i as usize] = j as u32;
    }
    let mut lcp = vec![0u32; n];
    let mut h = 0usize;
    for i in 0..n {
        let r = rank[i] as usize;
        if r > 0 {
            let j = sa[r - 1] as usize;
            while i + h < n && j + h < n && s[i + h] == s[j + h] {
                h += 1;
            }
            lcp[r] = h as u32;
            h = h.saturating_sub(1);
        } else {
            h = 0;
        }
    }
    lcp
}

/// A maximal repeat: a substring occurring at least twice that can be extended neither to the
/// left (its occurrences are preceded by different symbols, or one starts the sequence) nor to
/// the right (they are followed by different symbols).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaximalRepeat {
    /// Length in symbols.
    pub length: u32,
    /// Start positions, ascending.
    pub positions: Vec<u32>,
}

/// All maximal repeats of `s` of length at least `min_length`, from the LCP intervals of its
/// suffix array (each right-maximal repeat is one interval; left-maximality is checked on the
/// preceding symbols). O(n) plus the positions returned.
pub fn maximal_repeats(s: &[u32], alphabet: usize, min_length: u32) -> Vec<MaximalRepeat> {
    let n = s.len();
    if n < 2 {
        return Vec::new();
    }
    let sa = suffix_array(s, alphabet);
    let lcp = lcp_array(s, &sa);
    let mut out = Vec::new();
    // Stack of (lcp value, left boundary) of open intervals.
    let mut stack: Vec<(u32, usize)> = vec![(0, 0)];
    let min_length = min_length.max(1);
    for j in 1..=n {
        let cur = if j < n { lcp[j] } else { 0 };
        let mut lb = j - 1;
        while let Some(&(h, l)) = stack.last() {
            if h <= cur {
                break;
            }
            stack.pop();
            lb = l;
            // Interval [l, j-1] with lcp h.
            if h >= min_length {
                let occ = &sa[l..j];
                let first_left = if occ[0] == 0 {
                    None
                } else {
                    Some(s[occ[0] as usize - 1])
                };
                let left_diverse =
                    first_left.is_none() || occ.iter().any(|&p| p == 0 || Some(s[p as usize - 1]) != first_left);
                if left_diverse {
                    let mut positions = occ.to_vec();
                    positions.sort_unstable();
                    out.push(MaximalRepeat { length: h, positions });
                }
            }
        }
        if stack.last().map(|&(h, _)| h < cur).unwrap_or(true) {
            stack.push((cur, lb));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_sa(s: &[u32]) -> Vec<u32> {
        let mut v: Vec<u32> = (0..s.len() as u32).collect();
        v.sort_by(|&a, &b| s[a as usize..].cmp(&s[b as usize..]));
        v
    }

    #[test]
    fn suffix_array_matches_naive_sort() {
        let mut x = 12345u64;
        for len in [1usize, 2, 3, 7, 50, 300] {
            for alphabet in [1u32, 2, 5] {
                let s: Vec<u32> = (0..len)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        ((x >> 33) % alphabet as u64) as u32
                    })
                    .collect();
                assert_eq!(suffix_array(&s, alphabet as usize), naive_sa(&s), "{s:?}");
            }
        }
    }

    /// Kasai's LCP by definition: common prefix of each suffix with the one before it.
    fn naive_lcp(s: &[u32], sa: &[u32]) -> Vec<u32> {
        let mut lcp = vec![0; sa.len()];
        for j in 1..sa.len() {
            let (a, b) = (&s[sa[j - 1] as usize..], &s[sa[j] as usize..]);
            lcp[j] = a.iter().zip(b).take_while(|(x, y)| x == y).count() as u32;
        }
        lcp
    }

    fn check(s: &[u32], alphabet: usize) {
        let sa = suffix_array(s, alphabet);
        assert_eq!(sa, naive_sa(s), "{s:?}");
        assert_eq!(lcp_array(s, &sa), naive_lcp(s, &sa), "{s:?}");
    }

    /// Strings that stress the recursion: one symbol repeated (every LMS substring equal),
    /// periodic strings (names repeat at every level), Fibonacci words (the deepest recursion
    /// for their length), and symbols far above the length (the dense renumbering).
    #[test]
    fn suffix_array_of_structured_strings() {
        for n in [1usize, 2, 3, 4, 5, 17, 256, 1000] {
            check(&vec![0; n], 1);
            check(&vec![7; n], 8);
            for period in [[0u32, 1].as_slice(), &[1, 0], &[0, 0, 1], &[2, 1, 0], &[1, 2, 1, 0, 1]] {
                let s: Vec<u32> = period.iter().copied().cycle().take(n).collect();
                check(&s, 3);
            }
        }
        let (mut a, mut b) = (vec![0u32], vec![0u32, 1]);
        while b.len() < 3000 {
            let next = [b.clone(), a].concat();
            a = b;
            b = next;
            check(&b, 2);
        }
        check(&[u32::MAX - 1, 5, u32::MAX - 1, 5, 0, 1 << 30], 0);
        check(&[3, 3, 3, 2, 2, 2, 1, 1, 1, 0], 4);
        check(&(0..500).rev().collect::<Vec<u32>>(), 500);
        check(&(0..500).collect::<Vec<u32>>(), 500);
    }

    #[cfg(not(target_arch = "wasm32"))]
    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(300))]

            #[test]
            fn small_alphabets(s in prop::collection::vec(0u32..3, 0..400)) {
                check(&s, 3);
            }

            #[test]
            fn large_alphabets(s in prop::collection::vec(0u32..100_000, 0..400)) {
                check(&s, 100_000);
            }

            #[test]
            fn runs_of_symbols(runs in prop::collection::vec((0u32..4, 1usize..40), 0..30)) {
                let s: Vec<u32> = runs.iter().flat_map(|&(c, len)| std::iter::repeat_n(c, len)).collect();
                check(&s, 4);
            }

            #[test]
            fn periodic_with_noise(
                unit in prop::collection::vec(0u32..5, 1..8),
                copies in 1usize..60,
                noise in prop::collection::vec((0usize..500, 0u32..8), 0..4),
            ) {
                let mut s: Vec<u32> = unit.iter().copied().cycle().take(unit.len() * copies).collect();
                for (at, c) in noise {
                    if !s.is_empty() {
                        let at = at % s.len();
                        s[at] = c;
                    }
                }
                check(&s, 8);
            }
        }
    }

    #[test]
    fn lcp_and_repeats_of_a_small_string() {
        // "abcab": maximal repeat "ab" at 0 and 3.
        let s = [0, 1, 2, 0, 1];
        let sa = suffix_array(&s, 3);
        let lcp = lcp_array(&s, &sa);
        assert_eq!(sa, vec![3, 0, 4, 1, 2]);
        assert_eq!(lcp, vec![0, 2, 0, 1, 0]);
        let reps = maximal_repeats(&s, 3, 1);
        assert_eq!(
            reps,
            vec![MaximalRepeat {
                length: 2,
                positions: vec![0, 3]
            }]
        );
    }
}
