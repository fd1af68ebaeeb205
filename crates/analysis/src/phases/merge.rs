//! Merging adjacent segments whose pattern mix does not differ significantly.
//!
//! The thesis' recursive segmentation (§5.2.1) cuts while the BIC strength `s` is positive. `s`
//! counts as free parameters only the symbols a segment contains (`K = k_l + k_r + 1 − k`), so a
//! stretch of pairwise different symbols — one-off exchanges of a set-up, the coarse levels of a
//! multigrid cycle, the many small patterns of a benchmark's test section — has the smallest
//! penalty (`K = 1`) and the largest divergence at every cut, and is cut down to single symbols
//! (docs/phases.md). Those leaves are not evidence of phases: a pattern seen once or twice can sit
//! on either side of any cut.
//!
//! This step takes the leaves as candidate boundaries and removes, one at a time, the boundary
//! with the least evidence, until every boundary left is significant:
//!
//! 1. **Classes.** A symbol seen at least [`RECURRING`] times in the whole sequence is its own
//!    class; every rarer symbol (and the shared `outside` symbol, which stands for communication
//!    that happens once) falls into one *rare* class per size bucket (the caller's `rare_class`:
//!    by default one class). A single symbol seen once or twice can never make two sides differ
//!    significantly (it lies on one side with probability ≥ 1/2); lumped, a stretch of them can
//!    (a set-up made of one-off exchanges against a loop of one pattern).
//! 2. **Test of a boundary.** For two adjacent segments, H0 is that their union is one
//!    stationary mix. Statistic: the maximum Jensen–Shannon divergence over all cuts of the union
//!    (the thesis' `D̂`; taking the maximum accounts for the cut having been chosen where it is
//!    largest). p-value: a permutation test — the union's classes shuffled B = [`PERMUTATIONS`]
//!    times ([`FEW_PERMUTATIONS`] beyond [`FEW_PERMUTATIONS_FROM`]),
//!    `p = (1 + #{D̂_perm ≥ D̂}) / (1 + B)` — exact in distribution whatever the counts; the
//!    shuffling stops once `h = ⌈α(B + 1)⌉` shuffles reach `D̂`, after `m`, with `p = h/m`
//!    (Besag & Clifford's sequential p-value).
//!    Unions longer than [`EXACT_LIMIT`] use the likelihood-ratio statistic `G = 2N·D̂` (nats),
//!    χ² with `k − 1` degrees of freedom, Bonferroni-corrected for the `N − 1` cuts.
//! 3. **Keep** the boundary only when `p < α` ([`SIGNIFICANCE`]) **and** the thesis' strength
//!    at the boundary itself, on the classes, exceeds `s0` (BIC, Eq. 5.12).
//! 4. **Merge** the pair with the largest p (ties: the smaller strength, then the leftmost) and
//!    test the new segment against its neighbours again, until no boundary is left to remove.
//!
//! Deterministic: the shuffles use a fixed generator seeded by the union's position and length.

use super::xlogx::c_log2_c;
use std::cmp::Ordering;

/// Significance level α of a kept boundary.
pub const SIGNIFICANCE: f64 = 0.01;
/// Shuffles of the permutation test (p-values in steps of 1/1000).
pub const PERMUTATIONS: usize = 999;
/// Shuffles for unions longer than [`FEW_PERMUTATIONS_FROM`]: p in steps of 1/200, whose floor
/// 0.005 is still below [`SIGNIFICANCE`] (a Monte Carlo p-value `(1 + b)/(1 + B)` is valid for
/// any B; fewer shuffles only lose a little power), five times cheaper.
pub const FEW_PERMUTATIONS: usize = 199;
/// Union length from which [`FEW_PERMUTATIONS`] are drawn.
pub const FEW_PERMUTATIONS_FROM: usize = 1024;
/// Longest union tested by permutations; longer ones use the χ² approximation.
pub const EXACT_LIMIT: usize = 4096;
/// Occurrences from which a pattern is its own class in the test (fewer: rare).
pub const RECURRING: usize = 3;

/// Outcome of the test of one boundary.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BoundaryTest {
    /// p-value of "no change point in the union".
    pub p: f64,
    /// The thesis' strength at the boundary itself, on the classes.
    pub strength: f64,
    /// A stage boundary (docs/phases.md, step 6): the program stopped its loop and
    /// synchronised every rank with `MPI_Barrier`, or began its loop at its set-up's barrier;
    /// kept whatever `p` (the mixes of two stages of one loop do not differ).
    #[serde(default)]
    pub stage: bool,
}

impl BoundaryTest {
    /// Whether the boundary stands at level `alpha` and threshold `s0`.
    pub fn keeps(&self, alpha: f64, s0: f64) -> bool {
        self.p < alpha && self.strength > s0
    }
}

/// What the merge steps need of a sequence: a test of a boundary between two adjacent
/// stretches and how different two stretches' mixes are. Implemented by a class sequence
/// (`[u32]`, one class per position: this module's tests) and by the event bags of
/// [`super::content`] (the phases' default).
pub trait Mixes {
    /// Test of the boundary `cut` between `start..cut` and `cut..end` at level `alpha`.
    fn test(&self, start: usize, cut: usize, end: usize, alpha: f64) -> BoundaryTest;
    /// Jensen–Shannon divergence (bits) of the two stretches' mixes with equal weights.
    fn divergence(&self, a: std::ops::Range<usize>, b: std::ops::Range<usize>) -> f64;
    /// Number of positions.
    fn positions(&self) -> usize;
    /// How much communication positions `r` hold, for the share a phase must reach
    /// ([`merge_short`]): one per position here; the events for [`super::content::Bags`].
    fn weight(&self, r: std::ops::Range<usize>) -> f64 {
        r.len() as f64
    }
}

impl Mixes for [u32] {
    fn test(&self, start: usize, cut: usize, end: usize, alpha: f64) -> BoundaryTest {
        test_boundary(self, start, cut, end, alpha)
    }
    fn divergence(&self, a: std::ops::Range<usize>, b: std::ops::Range<usize>) -> f64 {
        mix_divergence(&self[a], &self[b])
    }
    fn positions(&self) -> usize {
        self.len()
    }
}

impl Mixes for Vec<u32> {
    fn test(&self, start: usize, cut: usize, end: usize, alpha: f64) -> BoundaryTest {
        test_boundary(self, start, cut, end, alpha)
    }
    fn divergence(&self, a: std::ops::Range<usize>, b: std::ops::Range<usize>) -> f64 {
        mix_divergence(&self[a], &self[b])
    }
    fn positions(&self) -> usize {
        self.len()
    }
}

/// Map a symbol sequence to test classes: symbols with at least [`RECURRING`] occurrences keep
/// their own class; the others (and `rare_symbol`, when given: the shared outside symbol) go to
/// `rare_class(position)` (a small number, so that rare occurrences of different sizes can stay
/// apart). Returns the class sequence (dense ids).
pub fn classes(seq: &[u32], rare_symbol: Option<u32>, rare_class: impl Fn(usize) -> u32) -> Vec<u32> {
    let alphabet = seq.iter().map(|&s| s as usize + 1).max().unwrap_or(0);
    let mut count = vec![0usize; alphabet];
    for &s in seq {
        count[s as usize] += 1;
    }
    // Dense ids: rare classes first as (u32::MAX - bucket) keys, then recurring symbols.
    let mut ids: std::collections::HashMap<(bool, u32), u32> = Default::default();
    seq.iter()
        .enumerate()
        .map(|(i, &s)| {
            let key = if count[s as usize] < RECURRING || Some(s) == rare_symbol {
                (true, rare_class(i))
            } else {
                (false, s)
            };
            let n = ids.len() as u32;
            *ids.entry(key).or_insert(n)
        })
        .collect()
}

/// `c·log2(c)` for `c` in `0..=n` (a table: the permutation test evaluates it 2N times per
/// shuffle).
fn xlog2x_table(n: usize) -> Vec<f64> {
    (0..=n as u64).map(c_log2_c).collect()
}

/// Maximum D_JS (bits) over all cuts of `part`, using `left`/`right` as zeroed scratch counts
/// (left zeroed on return) and `table` from [`xlog2x_table`] of at least `part.len()`.
fn max_divergence(part: &[u32], left: &mut [u64], right: &mut [u64], table: &[f64]) -> f64 {
    let n = part.len();
    if n < 2 {
        return 0.0;
    }
    let xlog2x = |c: u64| table[c as usize];
    let mut sum_right = 0.0;
    for &s in part {
        right[s as usize] += 1;
    }
    for &s in part {
        let c = right[s as usize];
        if c > 0 && left[s as usize] == 0 {
            sum_right += xlog2x(c);
            left[s as usize] = 1;
        }
    }
    for &s in part {
        left[s as usize] = 0;
    }
    let total = n as f64;
    let h = total.log2() - sum_right / total;
    let mut sum_left = 0.0;
    let mut best = 0.0f64;
    for (idx, &s) in part.iter().enumerate().take(n - 1) {
        let s = s as usize;
        let cl = left[s];
        sum_left += xlog2x(cl + 1) - xlog2x(cl);
        left[s] = cl + 1;
        let cr = right[s];
        sum_right += xlog2x(cr - 1) - xlog2x(cr);
        right[s] = cr - 1;
        // (i/N)·H_l = (i·log2 i − Σ_l c·log2 c)/N, and the same on the right.
        let i = idx + 1;
        let d = h - (table[i] - sum_left) / total - (table[n - i] - sum_right) / total;
        best = best.max(d);
    }
    for &s in part {
        left[s as usize] = 0;
        right[s as usize] = 0;
    }
    best
}

/// D_JS (bits) and the thesis' `K` at the cut `at` of `part`.
fn divergence_at(part: &[u32], at: usize, alphabet: usize) -> (f64, usize) {
    let count = |p: &[u32]| {
        let mut c = vec![0u64; alphabet];
        p.iter().for_each(|&s| c[s as usize] += 1);
        c
    };
    let (l, r, all) = (count(&part[..at]), count(&part[at..]), count(part));
    let k = |c: &[u64]| c.iter().filter(|&&x| x > 0).count();
    let n = part.len() as f64;
    let d =
        super::entropy(&all) - at as f64 / n * super::entropy(&l) - (part.len() - at) as f64 / n * super::entropy(&r);
    (d.max(0.0), k(&l) + k(&r) + 1 - k(&all))
}

/// SplitMix64: a small, fixed generator (results must not depend on a crate's version).
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below 2^-32 for our sizes).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }
}

/// Test the boundary at `cut` between `classes[start..cut]` and `classes[cut..end]`, at level
/// `alpha` (used only to stop shuffling once the p-value cannot fall below it).
pub fn test_boundary(classes: &[u32], start: usize, cut: usize, end: usize, alpha: f64) -> BoundaryTest {
    let part = &classes[start..end];
    let n = part.len();
    let alphabet = part.iter().map(|&s| s as usize + 1).max().unwrap_or(0);
    let k = {
        let mut seen = vec![false; alphabet];
        part.iter()
            .filter(|&&s| !std::mem::replace(&mut seen[s as usize], true))
            .count()
    };
    if k <= 1 || cut <= start || cut >= end {
        return BoundaryTest {
            p: 1.0,
            // A union of one class: D_JS = 0 at every cut, s = −1 (Eq. 5.12).
            strength: -1.0,
            stage: false,
        };
    }
    let (d_cut, k_param) = divergence_at(part, cut - start, alphabet);
    let strength = super::segmentation_strength(n, k_param, d_cut);
    let (mut left, mut right) = (vec![0u64; alphabet], vec![0u64; alphabet]);
    let table = xlog2x_table(n);
    let observed = max_divergence(part, &mut left, &mut right, &table);
    let p = if n > EXACT_LIMIT {
        // G = 2N·D̂ in nats, χ²(k − 1), Bonferroni over the N − 1 cuts.
        let g = 2.0 * n as f64 * observed * std::f64::consts::LN_2;
        ((n - 1) as f64 * chi2_sf(g, (k - 1) as f64)).min(1.0)
    } else {
        let mut rng = SplitMix(((start as u64) << 32) ^ (end as u64) ^ 0x05EE_D0F9_A5E5);
        let mut pool = part.to_vec();
        let shuffles = if n > FEW_PERMUTATIONS_FROM {
            FEW_PERMUTATIONS
        } else {
            PERMUTATIONS
        };
        let mut at_least = 0usize;
        // Sequential stopping (Besag & Clifford 1991): once `give_up` shuffles reach the
        // observed value after `m` shuffles, p = give_up / m (p ≥ alpha then); otherwise the
        // plain Monte Carlo p-value. Both keep the test valid and rank weak boundaries by how
        // weak they are (a pair that every order reproduces gets p = 1).
        let give_up = (alpha * (shuffles + 1) as f64).ceil().max(1.0) as usize;
        let mut stopped = None;
        for m in 1..=shuffles {
            for i in (1..n).rev() {
                pool.swap(i, rng.below(i + 1));
            }
            if max_divergence(&pool, &mut left, &mut right, &table) >= observed - 1e-12 {
                at_least += 1;
                if at_least >= give_up {
                    stopped = Some(m);
                    break;
                }
            }
        }
        match stopped {
            Some(m) => (give_up as f64 / m as f64).min(1.0),
            None => (at_least + 1) as f64 / (shuffles + 1) as f64,
        }
    };
    BoundaryTest {
        p,
        strength,
        stage: false,
    }
}

/// Merge adjacent segments (given by their boundaries, `bounds[0] = 0`, last = length) until
/// every boundary left is significant. Returns the kept boundaries (a subsequence of `bounds`)
/// and the test of each kept inner boundary.
pub fn merge<M: Mixes + ?Sized>(classes: &M, bounds: &[usize], alpha: f64, s0: f64) -> (Vec<usize>, Vec<BoundaryTest>) {
    if bounds.len() <= 2 {
        return (bounds.to_vec(), Vec::new());
    }
    // Doubly linked list of segments by their start boundary index.
    let m = bounds.len() - 1;
    let mut alive = vec![true; m];
    let mut prev: Vec<Option<usize>> = (0..m).map(|i| i.checked_sub(1)).collect();
    let mut next: Vec<Option<usize>> = (0..m).map(|i| (i + 1 < m).then_some(i + 1)).collect();
    let mut end: Vec<usize> = bounds[1..].to_vec();
    // Test of the boundary at the start of segment j (between prev[j] and j).
    let mut test: Vec<Option<BoundaryTest>> = vec![None; m];
    let run = |a: usize, b: usize, e: usize| classes.test(a, b, e, alpha);
    for j in 1..m {
        test[j] = Some(run(bounds[j - 1], bounds[j], end[j]));
    }
    loop {
        // The weakest removable boundary: largest p, then smallest strength, then leftmost.
        let mut pick: Option<(usize, BoundaryTest)> = None;
        for j in (1..m).filter(|&j| alive[j] && prev[j].is_some()) {
            let t = test[j].expect("tested");
            if t.keeps(alpha, s0) {
                continue;
            }
            let better = match pick {
                None => true,
                Some((_, b)) => match t.p.partial_cmp(&b.p).unwrap_or(Ordering::Equal) {
                    Ordering::Greater => true,
                    Ordering::Less => false,
                    Ordering::Equal => t.strength < b.strength,
                },
            };
            if better {
                pick = Some((j, t));
            }
        }
        let Some((j, _)) = pick else { break };
        // Merge segment j into its predecessor.
        let i = prev[j].expect("has a predecessor");
        end[i] = end[j];
        next[i] = next[j];
        if let Some(k) = next[j] {
            prev[k] = Some(i);
        }
        alive[j] = false;
        if let Some(h) = prev[i] {
            test[i] = Some(run(bounds[h], bounds[i], end[i]));
        }
        if let Some(k) = next[i] {
            test[k] = Some(run(bounds[i], bounds[k], end[k]));
        }
    }
    let mut kept = Vec::new();
    let mut tests = Vec::new();
    for j in (0..m).filter(|&j| alive[j]) {
        kept.push(bounds[j]);
        if j > 0 {
            tests.push(test[j].expect("tested"));
        }
    }
    kept.push(*bounds.last().expect("non-empty"));
    (kept, tests)
}

/// Jensen–Shannon divergence (bits) of the class mixes of `a` and `b` with equal weights: how
/// different two stretches' mixes are, whatever their lengths (0 = the same mix, 1 = disjoint).
pub fn mix_divergence(a: &[u32], b: &[u32]) -> f64 {
    let alphabet = a.iter().chain(b).map(|&s| s as usize + 1).max().unwrap_or(0);
    let (mut ca, mut cb) = (vec![0f64; alphabet], vec![0f64; alphabet]);
    a.iter().for_each(|&s| ca[s as usize] += 1.0 / a.len() as f64);
    b.iter().for_each(|&s| cb[s as usize] += 1.0 / b.len() as f64);
    let h = |p: &mut dyn Iterator<Item = f64>| -> f64 { p.filter(|&x| x > 0.0).map(|x| -x * x.log2()).sum() };
    let mid = h(&mut ca.iter().zip(&cb).map(|(x, y)| (x + y) / 2.0));
    (mid - (h(&mut ca.iter().copied()) + h(&mut cb.iter().copied())) / 2.0).max(0.0)
}

/// Merge phases holding less than `min_share` of the run (time and weight) into a neighbour
/// (docs/phases.md, "Phases worth reporting"). `bounds` and `tests` are [`merge`]'s result; `starts[i]` is the start time
/// of position `i` (non-decreasing), `last_end` the run's last end. A phase lasts from its first
/// position's start to the next phase's (the last: to `last_end`). While a phase holds less than
/// `min_share` of the run's time **and** less than `min_share` of the weight ([`Mixes::weight`]:
/// positions of a class sequence, events of [`super::content::Bags`]), the shortest (leftmost on
/// ties) is merged into the neighbour
/// whose class mix is closest ([`mix_divergence`]; ties: the left one); the boundaries next to
/// the merged phase are tested again. Returns the kept boundaries and the tests of the inner
/// ones.
pub fn merge_short<M: Mixes + ?Sized>(
    classes: &M,
    starts: &[u64],
    last_end: u64,
    bounds: Vec<usize>,
    tests: Vec<BoundaryTest>,
    min_share: f64,
    alpha: f64,
) -> (Vec<usize>, Vec<BoundaryTest>) {
    merge_short_by(classes, starts, last_end, bounds, tests, min_share, alpha, true)
}

/// [`merge_short`], where a phase holding `min_share` of the weight passes only when
/// `by_occurrences` (false: time alone, the sections' rule, docs/phases.md "Sections").
#[allow(clippy::too_many_arguments)]
pub fn merge_short_by<M: Mixes + ?Sized>(
    classes: &M,
    starts: &[u64],
    last_end: u64,
    bounds: Vec<usize>,
    tests: Vec<BoundaryTest>,
    min_share: f64,
    alpha: f64,
    by_occurrences: bool,
) -> (Vec<usize>, Vec<BoundaryTest>) {
    let (mut bounds, mut tests) = (bounds, tests);
    if bounds.len() <= 2 || starts.is_empty() {
        return (bounds, tests);
    }
    let first = starts[0];
    let total = last_end.saturating_sub(first) as f64;
    let limit = min_share * total;
    loop {
        let m = bounds.len() - 1;
        if m < 2 {
            break;
        }
        let at = |k: usize| if k == m { last_end } else { starts[bounds[k]] };
        // A phase passes when it holds `min_share` of the time or of the occurrences; the one
        // failing with the smallest share of time goes first.
        let shortest = (0..m)
            .filter(|&k| {
                !by_occurrences
                    || classes.weight(bounds[k]..bounds[k + 1]) < min_share * classes.weight(0..classes.positions())
            })
            .map(|k| (k, at(k + 1).saturating_sub(at(k)) as f64))
            .filter(|&(_, d)| d < limit)
            .min_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(Ordering::Equal));
        let Some((k, _)) = shortest else { break };
        let part = |j: usize| bounds[j]..bounds[j + 1];
        let into_left = match (k.checked_sub(1), (k + 1 < m).then_some(k + 1)) {
            (Some(l), Some(r)) => classes.divergence(part(l), part(k)) <= classes.divergence(part(k), part(r)),
            (Some(_), None) => true,
            _ => false,
        };
        // Remove the boundary at the start of phase k (into the left) or of phase k + 1.
        remove_boundary(
            classes,
            &mut bounds,
            &mut tests,
            if into_left { k } else { k + 1 },
            alpha,
        );
    }
    (bounds, tests)
}

/// Remove the inner boundary `bounds[at]` (`1 ≤ at < bounds.len() − 1`) with its test, and test
/// again the boundaries at the start and end of the merged phase.
pub(super) fn remove_boundary<M: Mixes + ?Sized>(
    classes: &M,
    bounds: &mut Vec<usize>,
    tests: &mut Vec<BoundaryTest>,
    at: usize,
    alpha: f64,
) {
    bounds.remove(at);
    tests.remove(at - 1);
    for j in [at - 1, at] {
        if j >= 1 && j + 1 < bounds.len() {
            tests[j - 1] = classes.test(bounds[j - 1], bounds[j], bounds[j + 1], alpha);
        }
    }
}

/// Upper tail `P(X ≥ x)` of the χ² distribution with `df` degrees of freedom
/// ([`crate::stats::chi_square_survival`]).
pub fn chi2_sf(x: f64, df: f64) -> f64 {
    if df <= 0.0 {
        return 1.0;
    }
    crate::stats::chi_square_survival(x, df)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::ln_gamma;

    /// χ² upper tails against tabulated critical values (any statistics table): P(X ≥ 3.841)
    /// = 0.05 for 1 df, P(X ≥ 9.210) = 0.01 for 2 df, P(X ≥ 18.307) = 0.05 for 10 df; and the
    /// closed form for 2 df, e^{−x/2}.
    #[test]
    fn chi2_tail_matches_tables() {
        assert!((chi2_sf(3.841, 1.0) - 0.05).abs() < 2e-4);
        assert!((chi2_sf(9.210, 2.0) - 0.01).abs() < 2e-4);
        assert!((chi2_sf(18.307, 10.0) - 0.05).abs() < 2e-4);
        for x in [0.1, 1.0, 5.0, 30.0] {
            assert!((chi2_sf(x, 2.0) - (-x / 2.0f64).exp()).abs() < 1e-12);
        }
        // ln Γ at integers is ln((n − 1)!).
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
    }

    /// `a a b b`: the only arrangements whose best cut is as divergent as the observed perfect
    /// split are `aabb` and `bbaa`, 2 of the 6 orders, so p ≈ 1/3 (by hand): no evidence.
    /// Twelve of each: p at its floor 1/1000.
    #[test]
    fn permutation_p_by_hand() {
        let t = test_boundary(&[0, 0, 1, 1], 0, 2, 4, 1.0);
        assert!((t.p - 1.0 / 3.0).abs() < 0.05, "{t:?}");
        let mut seq = vec![0u32; 12];
        seq.extend([1u32; 12]);
        let t = test_boundary(&seq, 0, 12, 24, SIGNIFICANCE);
        assert!((t.p - 0.001).abs() < 1e-12, "{t:?}");
        assert!(t.keeps(SIGNIFICANCE, 0.0));
    }

    /// Pairwise different symbols carry no evidence: every order has the same best cut.
    #[test]
    fn distinct_symbols_merge_into_one() {
        let seq: Vec<u32> = (0..20).collect();
        let cls = classes(&seq, None, |_| 0);
        assert!(cls.iter().all(|&c| c == cls[0]));
        let bounds: Vec<usize> = (0..=20).collect();
        let (kept, _) = merge(&cls, &bounds, SIGNIFICANCE, 0.0);
        assert_eq!(kept, vec![0, 20]);
    }

    /// Short phases (by hand): a loop `a` ×100 over 100 s, then `b` ×3 in 0.3 s, then `c` ×100
    /// over 100 s. At 1 % (2.003 s, 2.03 occurrences) `b` passes by its occurrences (3 ≥ 2.03);
    /// at 2 % (4.06 occurrences) it fails both, and its mix is disjoint from both neighbours
    /// (divergence 1 each), so it joins the left one. `a` and `c` pass by time.
    #[test]
    fn short_phase_joins_its_closest_neighbour() {
        let mut cls = vec![0u32; 100];
        cls.extend([1u32; 3]);
        cls.extend([2u32; 100]);
        let s = 1_000_000_000u64;
        let mut starts: Vec<u64> = (0..100).map(|i| i * s).collect();
        starts.extend((0..3).map(|i| 100 * s + i * s / 10));
        starts.extend((0..100).map(|i| 100 * s + 3 * s / 10 + i * s));
        let last_end = starts[202] + s;
        let bounds = vec![0, 100, 103, 203];
        let tests = vec![test_boundary(&cls, 0, 100, 103, SIGNIFICANCE); 2];
        let (kept, t) = merge_short(
            &cls,
            &starts,
            last_end,
            bounds.clone(),
            tests.clone(),
            0.01,
            SIGNIFICANCE,
        );
        assert_eq!(kept, bounds);
        assert_eq!(t.len(), 2);
        let (kept, t) = merge_short(&cls, &starts, last_end, bounds, tests, 0.02, SIGNIFICANCE);
        assert_eq!(kept, vec![0, 103, 203]);
        assert_eq!(t.len(), 1);
        assert!(t[0].p < SIGNIFICANCE, "{t:?}");
        // The tail `b` mixed with `c`: closer to the right neighbour.
        let mixed: Vec<u32> = (0..100).map(|i| if i % 2 == 0 { 1 } else { 2 }).collect();
        assert!(mix_divergence(&[1, 1, 1], &mixed) < mix_divergence(&[1, 1, 1], &[0; 100]));
        assert!((mix_divergence(&[0, 0], &[1]) - 1.0).abs() < 1e-12);
        assert!(mix_divergence(&[0, 1], &[1, 0, 1, 0]).abs() < 1e-12);
    }

    /// The sections' rule is time alone: a burst of 30 occurrences in 0.3 s between two loops
    /// of 100 s holds 15 % of the occurrences but 0.15 % of the time. Phases keep it (by its
    /// occurrences); sections merge it, into the neighbour whose mix it shares.
    #[test]
    fn sections_go_by_time_alone() {
        let mut cls = vec![0u32; 100];
        cls.extend([1u32; 30]);
        cls.extend((0..70).map(|i| 1 + (i % 2)));
        let s = 1_000_000_000u64;
        let mut starts: Vec<u64> = (0..100).map(|i| i * s).collect();
        starts.extend((0..30).map(|i| 100 * s + i * s / 100));
        starts.extend((0..70).map(|i| 100 * s + 3 * s / 10 + i * s));
        let last_end = starts[199] + s;
        let bounds = vec![0, 100, 130, 200];
        let tests = vec![test_boundary(&cls, 0, 100, 130, SIGNIFICANCE); 2];
        let by_occ = merge_short_by(
            &cls,
            &starts,
            last_end,
            bounds.clone(),
            tests.clone(),
            0.01,
            SIGNIFICANCE,
            true,
        );
        assert_eq!(by_occ.0, bounds);
        let by_time = merge_short_by(&cls, &starts, last_end, bounds, tests, 0.01, SIGNIFICANCE, false);
        assert_eq!(by_time.0, vec![0, 100, 200]);
        assert_eq!(by_time.1.len(), 1);
    }

    /// A set-up of ten one-off symbols, a loop of one pattern ×48, a tail of five one-offs:
    /// three segments, whatever the finer leaves given.
    #[test]
    fn one_offs_around_a_loop() {
        let mut seq: Vec<u32> = (10..20).collect();
        seq.extend([0u32; 48]);
        seq.extend(20..25);
        let cls = classes(&seq, None, |_| 0);
        let mut bounds: Vec<usize> = (0..=10).collect();
        bounds.extend([58, 59, 60, 61, 62, 63]);
        let (kept, tests) = merge(&cls, &bounds, SIGNIFICANCE, 0.0);
        assert_eq!(kept, vec![0, 10, 58, 63]);
        assert!(tests.iter().all(|t| t.p < SIGNIFICANCE));
    }
}
