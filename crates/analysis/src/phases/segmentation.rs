//! Execution phases by recursive entropic segmentation (thesis ch. 5, §5.2.1, after Li 2002).
//!
//! The input is a sequence of symbols — one per communication-pattern occurrence, in time
//! order. A segment of length `N` with symbol counts `N_j` has Shannon entropy
//! `H = −Σ (N_j/N) log2(N_j/N)`. Cutting it so that the left part has `i` symbols gives the
//! Jensen–Shannon divergence `D_JS(i) = H − (i/N)·H_l − ((N−i)/N)·H_r`. The segment is cut at the
//! `i` of maximum divergence `D̂` when the segmentation strength
//! `s = (2N·D̂ − log2(N)·K) / (log2(N)·K)`, with `K = k_l + k_r + 1 − k` (distinct symbols left,
//! right and in the whole segment), exceeds the user's threshold `s0` (default 0, which is the
//! BIC criterion `D̂ > τ = log2(N)·K / 2N`); both halves are then segmented the same way.
//!
//! **Log base.** Everything uses base 2 (entropies in bits). The strength `s` does not depend on
//! the base; `τ` and `D_JS` do. With base 2 the thesis' Table 5.2 values of τ (0.5 for `N = 2`,
//! 0.25 for `N = 4`) are reproduced.
//!
//! **Cost.** Each segment is scanned once: the entropy of the growing left part and the
//! shrinking right part are updated in O(1) per position from the running sums `Σ c·log c`, so a
//! level of the tree costs O(N) (plus O(k) to set up the counts), not O(N²). The tree is built
//! with an explicit stack, so deep trees cannot overflow.
//!
//! **Conventions.** Positions are 0-based and segments half-open `[start, end)`. `cut` is the
//! first position of the right part. Ties in the maximum go to the leftmost cut. Tree nodes are
//! numbered as in the thesis' tables: a split numbers both children at once, then descends into
//! the left child first.

use super::xlogx::c_log2_c;
use serde::{Deserialize, Serialize};

/// One node of the segmentation tree (a row of the thesis' Table 5.8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Node number (0 = the whole sequence).
    pub id: usize,
    /// First position.
    pub start: usize,
    /// One past the last position.
    pub end: usize,
    /// Shannon entropy of the segment, in bits.
    pub entropy: f64,
    /// Maximum Jensen–Shannon divergence over all cuts (0 for a segment of length 1).
    pub djs: f64,
    /// Position of that cut (first position of the right part); `None` for length 1.
    pub cut: Option<usize>,
    /// BIC threshold τ = log2(N)·K / 2N at that cut (0 for length 1).
    pub tau: f64,
    /// Segmentation strength s at that cut; `None` for length 1.
    pub strength: Option<f64>,
    /// Parent node, `None` for the root.
    pub parent: Option<usize>,
    /// Child nodes `(left, right)` if the segment was cut.
    pub children: Option<(usize, usize)>,
}

impl Segment {
    /// Number of symbols in the segment.
    pub fn len(&self) -> usize {
        self.end - self.start
    }
    /// True for an empty segment (only the root of an empty sequence).
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// The full segmentation of a sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segmentation {
    /// Length of the sequence.
    pub sequence_length: usize,
    /// The strength threshold `s0` used.
    pub strength_threshold: f64,
    /// Every node of the tree, indexed by [`Segment::id`].
    pub tree: Vec<Segment>,
    /// Ids of the leaves (the phases), in sequence order.
    pub phases: Vec<usize>,
}

/// Shannon entropy in bits of a count vector summing to `n`. O(k).
pub fn entropy(counts: &[u64]) -> f64 {
    let n: u64 = counts.iter().sum();
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    n.log2() - counts.iter().filter(|&&c| c > 0).map(|&c| c_log2_c(c)).sum::<f64>() / n
}

/// Best cut of one segment and the divergence at every cut.
struct Scan {
    entropy: f64,
    best_cut: usize,
    best_djs: f64,
    k_left: usize,
    k_right: usize,
    k: usize,
}

/// Scan `seq` (symbols `< alphabet`), calling `each(i, djs)` for every cut `i` in `1..N`
/// (left part of length `i`). O(N + alphabet) using `counts` as scratch (left zeroed on return).
fn scan(seq: &[u32], counts_left: &mut [u64], counts_right: &mut [u64], mut each: impl FnMut(usize, f64)) -> Scan {
    let n = seq.len();
    for &s in seq {
        counts_right[s as usize] += 1;
    }
    let mut k = 0;
    let mut sum_right = 0.0; // Σ c log c over the right part
    for &s in seq {
        // Each distinct symbol once: count it when seen with its full count still in place.
        let c = counts_right[s as usize];
        if c > 0 && counts_left[s as usize] == 0 {
            k += 1;
            sum_right += c_log2_c(c);
            counts_left[s as usize] = 1; // mark as seen
        }
    }
    for &s in seq {
        counts_left[s as usize] = 0;
    }
    let total = n as f64;
    let h = if n == 0 { 0.0 } else { total.log2() - sum_right / total };
    let mut sum_left = 0.0;
    let (mut k_left, mut k_right) = (0usize, k);
    let mut best = Scan {
        entropy: h,
        best_cut: 0,
        best_djs: f64::NEG_INFINITY,
        k_left: 0,
        k_right: 0,
        k,
    };
    for (idx, &s) in seq.iter().enumerate().take(n.saturating_sub(1)) {
        let s = s as usize;
        let cl = counts_left[s];
        sum_left += c_log2_c(cl + 1) - c_log2_c(cl);
        if cl == 0 {
            k_left += 1;
        }
        counts_left[s] = cl + 1;
        let cr = counts_right[s];
        sum_right += c_log2_c(cr - 1) - c_log2_c(cr);
        if cr == 1 {
            k_right -= 1;
        }
        counts_right[s] = cr - 1;
        let i = idx + 1;
        let (li, ri) = (i as f64, (n - i) as f64);
        let h_left = li.log2() - sum_left / li;
        let h_right = ri.log2() - sum_right / ri;
        let djs = h - (li / total) * h_left - (ri / total) * h_right;
        each(i, djs);
        if djs > best.best_djs + 1e-12 {
            best.best_djs = djs;
            best.best_cut = i;
            best.k_left = k_left;
            best.k_right = k_right;
        }
    }
    for &s in seq {
        counts_left[s as usize] = 0;
        counts_right[s as usize] = 0;
    }
    best
}

/// Jensen–Shannon divergence at every cut of `seq[start..end]`: entry `j` is the divergence when
/// the left part is `seq[start..start + j + 1]`. Empty for segments shorter than 2. O(N + k).
pub fn divergence_curve(seq: &[u32], start: usize, end: usize) -> Vec<f64> {
    let part = &seq[start..end];
    let alphabet = part.iter().map(|&s| s as usize + 1).max().unwrap_or(0);
    let (mut l, mut r) = (vec![0; alphabet], vec![0; alphabet]);
    let mut out = Vec::with_capacity(part.len().saturating_sub(1));
    scan(part, &mut l, &mut r, |_, d| out.push(d));
    out
}

/// Entropy (bits) of a sliding window of `width` symbols: entry `j` covers
/// `seq[j..j + width]`. Empty if the sequence is shorter than the window. O(N + k).
pub fn window_entropy(seq: &[u32], width: usize) -> Vec<f64> {
    if width == 0 || seq.len() < width {
        return Vec::new();
    }
    let alphabet = seq.iter().map(|&s| s as usize + 1).max().unwrap_or(0);
    let mut counts = vec![0u64; alphabet];
    let mut sum = 0.0;
    let w = width as f64;
    fn add(counts: &mut [u64], sum: &mut f64, s: u32, delta: i64) {
        let c = counts[s as usize];
        let c2 = (c as i64 + delta) as u64;
        *sum += c_log2_c(c2) - c_log2_c(c);
        counts[s as usize] = c2;
    }
    for &s in &seq[..width] {
        add(&mut counts, &mut sum, s, 1);
    }
    let mut out = Vec::with_capacity(seq.len() - width + 1);
    out.push(w.log2() - sum / w);
    for j in width..seq.len() {
        add(&mut counts, &mut sum, seq[j], 1);
        add(&mut counts, &mut sum, seq[j - width], -1);
        out.push(w.log2() - sum / w);
    }
    out
}

/// The BIC threshold τ = log2(N)·K / 2N (thesis Eq. 5.11) of a segment of `n` symbols whose
/// cut has `k` free parameters (`K = k_l + k_r + 1 − k`): the maximum divergence must exceed it
/// for the cut to pay for the parameters it adds. Bits, as the thesis' tables.
pub fn bic_threshold(n: usize, k: usize) -> f64 {
    let nf = n as f64;
    nf.log2() * k as f64 / (2.0 * nf)
}

/// The segmentation strength s = (2N·D̂ − log2(N)·K) / (log2(N)·K) (thesis Eq. 5.12) of a cut of
/// divergence `djs` with `k` free parameters in a segment of `n` symbols: how far `2N·D̂` clears
/// the BIC penalty, relative to it. Independent of the log base; `s > 0` is `D̂ > τ`.
pub fn segmentation_strength(n: usize, k: usize, djs: f64) -> f64 {
    let nf = n as f64;
    let bic = nf.log2() * k as f64;
    (2.0 * nf * djs - bic) / bic
}

/// Segment `seq` recursively, cutting while the strength exceeds `s0` (0 = the BIC rule).
///
/// Symbols are small integers (dense ids of patterns). O(N · depth) time, O(N + k) extra space.
///
/// ```
/// use tracelogic_analysis::phases::segment;
/// // Two homogeneous halves: one cut in the middle, two phases.
/// let seq = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];
/// let s = segment(&seq, 0.0);
/// assert_eq!(s.tree[0].cut, Some(8));
/// assert_eq!(s.phases.len(), 2);
/// ```
pub fn segment(seq: &[u32], s0: f64) -> Segmentation {
    let alphabet = seq.iter().map(|&s| s as usize + 1).max().unwrap_or(0);
    let (mut left, mut right) = (vec![0u64; alphabet], vec![0u64; alphabet]);
    let mut tree = vec![Segment {
        id: 0,
        start: 0,
        end: seq.len(),
        entropy: 0.0,
        djs: 0.0,
        cut: None,
        tau: 0.0,
        strength: None,
        parent: None,
        children: None,
    }];
    let mut stack = vec![0usize];
    while let Some(id) = stack.pop() {
        let (start, end) = (tree[id].start, tree[id].end);
        let n = end - start;
        let sc = scan(&seq[start..end], &mut left, &mut right, |_, _| {});
        tree[id].entropy = sc.entropy;
        if n < 2 {
            continue;
        }
        let k_param = sc.k_left + sc.k_right + 1 - sc.k;
        let strength = segmentation_strength(n, k_param, sc.best_djs);
        let node = &mut tree[id];
        node.djs = sc.best_djs;
        node.cut = Some(start + sc.best_cut);
        node.tau = bic_threshold(n, k_param);
        node.strength = Some(strength);
        if strength > s0 {
            let (l, r) = (tree.len(), tree.len() + 1);
            let cut = start + sc.best_cut;
            tree[id].children = Some((l, r));
            for (cid, (a, b)) in [(l, (start, cut)), (r, (cut, end))] {
                tree.push(Segment {
                    id: cid,
                    start: a,
                    end: b,
                    entropy: 0.0,
                    djs: 0.0,
                    cut: None,
                    tau: 0.0,
                    strength: None,
                    parent: Some(id),
                    children: None,
                });
            }
            stack.push(r);
            stack.push(l);
        }
    }
    let mut phases: Vec<usize> = tree.iter().filter(|s| s.children.is_none()).map(|s| s.id).collect();
    phases.sort_by_key(|&i| tree[i].start);
    Segmentation {
        sequence_length: seq.len(),
        strength_threshold: s0,
        tree,
        phases,
    }
}
