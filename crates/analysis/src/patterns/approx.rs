//! Approximate pattern matching, thesis §4.5 (Algorithm 4.4): windows of the pattern's length
//! slide over a rank's events; a window is verified by edit distance only when it shares enough
//! n-grams with the pattern (the Jokinen–Ukkonen lemma: a string within `k` edits of a length-`m`
//! pattern shares at least `m − n + 1 − k·n` of its n-grams). After a match the search jumps to
//! the next adjacent window, so matches do not overlap. A window whose distance is within `2k`
//! but above `k` is retried with the shorter lengths `m − k .. m − 1` (the thesis' post-step).
//!
//! The shared-n-gram count is kept incrementally (multiset intersection, O(1) per step), so the
//! filter costs O(N) per rank and only candidate windows pay the O(m²) verification.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One window of a rank's events within the allowed edit distance of the pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApproxMatch {
    /// First event of the window.
    pub start: u32,
    /// Window length (the pattern's, or shorter after the post-step).
    pub len: u32,
    /// Edit distance to the pattern.
    pub edits: u32,
}

/// Counters of the search, to show what the filter saved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApproxStats {
    /// Windows considered.
    pub windows: u64,
    /// Windows that passed the n-gram filter and were verified by edit distance.
    pub verified: u64,
}

/// Levenshtein distance between two symbol strings (insert, delete, substitute cost 1).
pub fn edit_distance(a: &[u32], b: &[u32]) -> u32 {
    let mut prev: Vec<u32> = (0..=b.len() as u32).collect();
    let mut cur = vec![0u32; b.len() + 1];
    for (i, &x) in a.iter().enumerate() {
        cur[0] = i as u32 + 1;
        for (j, &y) in b.iter().enumerate() {
            let sub = prev[j] + u32::from(x != y);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Windows of `text` within `k` edits of `pattern`, using `n`-grams (the thesis uses 2) to filter.
pub fn approximate_matches(text: &[u32], pattern: &[u32], k: u32, n: usize) -> (Vec<ApproxMatch>, ApproxStats) {
    let m = pattern.len();
    let mut stats = ApproxStats::default();
    let mut out = Vec::new();
    if m == 0 || text.len() < m.saturating_sub(k as usize).max(1) {
        return (out, stats);
    }
    let n = n.clamp(1, m);
    // Pattern n-grams with multiplicities.
    let mut want: HashMap<&[u32], i64> = HashMap::new();
    for g in pattern.windows(n) {
        *want.entry(g).or_default() += 1;
    }
    let threshold = m as i64 - n as i64 + 1 - k as i64 * n as i64;
    let mut have: HashMap<&[u32], i64> = HashMap::new();
    let mut shared = 0i64;
    let grams_in = |start: usize, end: usize| start..(end + 1).saturating_sub(n);
    let mut win_start = 0usize;
    let mut loaded_to = 0usize; // n-grams starting in [win_start, loaded_to) are counted
    let last_start = text.len().saturating_sub(m);
    let mut i = 0usize;
    while i <= last_start {
        stats.windows += 1;
        // Slide the counted n-gram range to [i, i + m - n].
        let range = grams_in(i, i + m);
        while win_start < range.start {
            if win_start < loaded_to {
                let g = &text[win_start..win_start + n];
                if let Some(&w) = want.get(g) {
                    let h = have.get_mut(g).expect("counted");
                    *h -= 1;
                    if *h < w {
                        shared -= 1;
                    }
                }
            }
            win_start += 1;
        }
        loaded_to = loaded_to.max(win_start);
        while loaded_to < range.end {
            let g = &text[loaded_to..loaded_to + n];
            if let Some(&w) = want.get(g) {
                let h = have.entry(g).or_default();
                if *h < w {
                    shared += 1;
                }
                *h += 1;
            }
            loaded_to += 1;
        }
        if shared >= threshold {
            stats.verified += 1;
            let d = edit_distance(pattern, &text[i..i + m]);
            let mut best = (d <= k).then_some((m, d));
            if best.is_none() && d <= 2 * k {
                for len in (m.saturating_sub(k as usize).max(1)..m).rev() {
                    let d2 = edit_distance(pattern, &text[i..i + len]);
                    if d2 <= k && best.map(|(_, b)| d2 < b).unwrap_or(true) {
                        best = Some((len, d2));
                    }
                }
            }
            if let Some((len, d)) = best {
                out.push(ApproxMatch {
                    start: i as u32,
                    len: len as u32,
                    edits: d,
                });
                i += len;
                continue;
            }
        }
        i += 1;
    }
    (out, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance(&[1, 2, 3], &[1, 2, 3]), 0);
        assert_eq!(edit_distance(&[1, 2, 3], &[1, 3]), 1);
        assert_eq!(edit_distance(&[], &[4, 5]), 2);
        assert_eq!(edit_distance(&[1, 2, 3, 4], &[2, 1, 3, 5]), 3);
    }
}
