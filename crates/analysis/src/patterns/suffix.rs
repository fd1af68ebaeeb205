//! Suffix array (prefix doubling with radix sort, O(n log n)), LCP array (Kasai, O(n)) and the
//! maximal repeats they reveal. Symbols are dense integers, so no byte-alphabet crate applies.

/// Suffix array of `s` (symbols `< alphabet`): `sa[j]` is the start of the `j`-th smallest suffix.
///
/// Prefix doubling: after round `h` suffixes are sorted by their first `2^h` symbols; each round
/// is two counting sorts, and the loop stops as soon as all ranks are distinct, so sequences
/// without long repeats finish in a few rounds.
pub fn suffix_array(s: &[u32], alphabet: usize) -> Vec<u32> {
    let n = s.len();
    if n == 0 {
        return Vec::new();
    }
    let buckets = alphabet.max(n) + 1;
    let mut cnt = vec![0u32; buckets];
    let mut sa = vec![0u32; n];
    let mut rank: Vec<u32> = s.to_vec();
    for &c in s {
        cnt[c as usize] += 1;
    }
    prefix_sums(&mut cnt);
    for i in (0..n).rev() {
        let c = s[i] as usize;
        cnt[c] -= 1;
        sa[cnt[c] as usize] = i as u32;
    }
    // Dense ranks of the first symbol.
    let mut tmp = vec![0u32; n];
    let mut classes = relabel(&sa, &mut tmp, |a, b| s[a] == s[b]);
    std::mem::swap(&mut rank, &mut tmp);
    let mut second = vec![0u32; n];
    let mut k = 1usize;
    while (classes as usize) < n {
        // Order by the second key: suffixes shorter than k first, then by sa shifted by k.
        let mut p = 0;
        for i in n - k..n {
            second[p] = i as u32;
            p += 1;
        }
        for &j in sa.iter() {
            if j as usize >= k {
                second[p] = j - k as u32;
                p += 1;
            }
        }
        // Stable counting sort by the first key.
        cnt[..classes as usize + 1].iter_mut().for_each(|c| *c = 0);
        for &r in &rank {
            cnt[r as usize] += 1;
        }
        prefix_sums(&mut cnt[..classes as usize + 1]);
        for &i in second.iter().rev() {
            let r = rank[i as usize] as usize;
            cnt[r] -= 1;
            sa[cnt[r] as usize] = i;
        }
        let key = |i: usize| (rank[i], if i + k < n { rank[i + k] as i64 } else { -1 });
        classes = relabel(&sa, &mut tmp, |a, b| key(a) == key(b));
        std::mem::swap(&mut rank, &mut tmp);
        k *= 2;
    }
    sa
}

fn prefix_sums(cnt: &mut [u32]) {
    let mut sum = 0;
    for c in cnt.iter_mut() {
        sum += *c;
        *c = sum;
    }
}

/// Give consecutive suffixes in `sa` the same class while `same` holds; returns the class count.
fn relabel(sa: &[u32], out: &mut [u32], same: impl Fn(usize, usize) -> bool) -> u32 {
    let mut class = 0u32;
    out[sa[0] as usize] = 0;
    for w in sa.windows(2) {
        if !same(w[0] as usize, w[1] as usize) {
            class += 1;
        }
        out[w[1] as usize] = class;
    }
    class + 1
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
