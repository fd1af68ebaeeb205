//! What each pattern occurrence communicates, independent of pattern labels.
//!
//! The pattern detection labels the same program activity differently from run to run: one
//! LAMMPS time step is one occurrence of a whole-step pattern in one step and forty single
//! messages, each its own pattern of two ranks, in the next; which one depends on timing, so the
//! DUMPI and the OTF2 recording of one program gave 2 and 6 phases. A mix test on pattern ids
//! sees those labels change and cuts there. Here each occurrence is instead the multiset
//! (*bag*) of its events' **signatures**: for a point-to-point event its direction (send or
//! receive), the MPI function that posted it and which of the rank's peers it goes to, numbered
//! in the order the rank first meets them (the rank's own view of its neighbours, unchanged when
//! ranks are renumbered); for a collective its MPI function. A whole step and the same step in forty pieces have the same bag in total.
//!
//! The statistics ([`Bags::test`]) compare the event mixes of two stretches of occurrences:
//! Jensen–Shannon divergence of the event signatures, its maximum over every occurrence
//! boundary of the union (the thesis' `D̂`), and a p-value from permutations of **whole
//! occurrences**: the occurrence, not the event, is the exchangeable unit, since the events of
//! one occurrence (one step of a loop) come together. Message sizes are left out on purpose:
//! molecular-dynamics steps send sizes that drift as atoms move (docs/phases.md).

use super::xlogx::c_log2_c;
use std::collections::HashMap;

use super::merge::{BoundaryTest, Mixes, FEW_PERMUTATIONS, FEW_PERMUTATIONS_FROM, PERMUTATIONS};

/// (signature, count) items of a union from which its permutation test evaluates its shuffles
/// in batches on two cores: below, one shuffle's scan costs about what starting a thread does
/// (tens of microseconds), so they run one after the other.
const PARALLEL_TEST_ITEMS: usize = 512;

mod signed;
pub use signed::{Signed, SignedEvent, SignedRanks};

/// Event-signature bags, one per sequence position (occurrence or window).
#[derive(Debug, Clone, Default)]
pub struct Bags {
    /// `items[offs[i]..offs[i + 1]]`: (signature, count) of position `i`, signatures ascending.
    offs: Vec<usize>,
    items: Vec<(u32, u64)>,
    /// Number of distinct signatures.
    alphabet: usize,
}

impl Bags {
    /// Build from explicit bags (tests, other callers): `bags[i]` lists the signatures of
    /// position `i` (repeats allowed).
    pub fn from_symbols(bags: &[Vec<u32>]) -> Bags {
        let mut b = Bags {
            offs: vec![0],
            ..Default::default()
        };
        for bag in bags {
            let mut v = bag.clone();
            v.sort_unstable();
            let first = b.items.len();
            for s in v {
                if b.items.len() > first && b.items.last().is_some_and(|l| l.0 == s) {
                    b.items.last_mut().expect("non-empty").1 += 1;
                } else {
                    b.items.push((s, 1));
                }
                b.alphabet = b.alphabet.max(s as usize + 1);
            }
            b.offs.push(b.items.len());
        }
        b
    }

    /// Every event of the instances `idx[i]` of `comm` as `(position, entry time of its call,
    /// signature id)`, and each id's signature ([`Signed::events`]).
    pub fn event_signatures(
        trace: &tracelogic_model::Trace,
        events: &crate::patterns::Events,
        comm: &crate::patterns::CommunicationAnalysis,
        idx: &[usize],
    ) -> (Vec<SignedEvent>, Vec<(u8, u32, u32)>) {
        let s = Signed::of(trace, events, comm, idx);
        let (ev, names) = s.events();
        (ev, names.to_vec())
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.offs.len() - 1
    }

    /// True without positions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn bag(&self, i: usize) -> &[(u32, u64)] {
        &self.items[self.offs[i]..self.offs[i + 1]]
    }

    /// Events of positions `a..b`, by signature.
    fn counts(&self, r: std::ops::Range<usize>) -> HashMap<u32, u64> {
        let mut c = HashMap::new();
        for i in r {
            for &(s, n) in self.bag(i) {
                *c.entry(s).or_insert(0) += n;
            }
        }
        c
    }

    /// D_JS (bits) at every boundary of `order` (positions in that order), its maximum and
    /// where; `left` is zeroed scratch of `alphabet` (left zeroed on return). `at` limits the
    /// scan to one boundary (after `at` positions) when given.
    fn scan(
        &self,
        order: &[usize],
        all: &[u64],
        sum_all: f64,
        total: u64,
        left: &mut [u64],
        at: Option<usize>,
    ) -> (f64, usize) {
        let (from, to) = match at {
            Some(k) => (k, k),
            None => (1, order.len() - 1),
        };
        self.scan_between(order, (all, sum_all, total), left, (from, to), false)
    }

    /// D_JS (bits) at the boundaries `from..=to` of `order` (after that many positions) in one
    /// pass: the largest (leftmost on ties within 1e-12, each value clamped at 0 first when
    /// `clamp_each`) and where. `left` is zeroed scratch of `alphabet`, left zeroed on return.
    /// O(events of `order[..to]`).
    fn scan_between(
        &self,
        order: &[usize],
        (all, sum_all, total): (&[u64], f64, u64),
        left: &mut [u64],
        (from, to): (usize, usize),
        clamp_each: bool,
    ) -> (f64, usize) {
        let n = total as f64;
        let h = n.log2() - sum_all / n;
        let (mut sum_l, mut sum_r, mut n_l) = (0.0, sum_all, 0u64);
        let (mut best, mut best_at) = (f64::NEG_INFINITY, 0);
        for (j, &i) in order.iter().enumerate().take(to) {
            for &(s, c) in self.bag(i) {
                let s = s as usize;
                let (l0, r0) = (left[s], all[s] - left[s]);
                left[s] += c;
                sum_l += c_log2_c(l0 + c) - c_log2_c(l0);
                sum_r += c_log2_c(r0 - c) - c_log2_c(r0);
                n_l += c;
            }
            if j + 1 < from {
                continue;
            }
            let mut d = if n_l == 0 || n_l == total {
                0.0
            } else {
                h - (c_log2_c(n_l) - sum_l) / n - (c_log2_c(total - n_l) - sum_r) / n
            };
            if clamp_each {
                d = d.max(0.0);
            }
            if d > best + 1e-12 {
                best = d;
                best_at = j + 1;
            }
        }
        for &i in &order[..to] {
            for &(s, _) in self.bag(i) {
                left[s as usize] = 0;
            }
        }
        (best.max(0.0), best_at)
    }

    /// True when one side of the cut `c` of `a..e` has an event signature the other side
    /// lacks: a change of *what* is communicated, not only of how often.
    pub fn support_differs(&self, a: usize, c: usize, e: usize) -> bool {
        let (l, r) = (self.counts(a..c), self.counts(c..e));
        l.keys().any(|s| !r.contains_key(s)) || r.keys().any(|s| !l.contains_key(s))
    }

    /// Totals of a range: counts by signature (dense over `alphabet`), Σ c·log2 c, events,
    /// distinct signatures.
    fn totals(&self, r: std::ops::Range<usize>) -> (Vec<u64>, f64, u64, usize) {
        let mut all = vec![0u64; self.alphabet];
        for i in r {
            for &(s, c) in self.bag(i) {
                all[s as usize] += c;
            }
        }
        let sum = all.iter().map(|&c| c_log2_c(c)).sum();
        let total = all.iter().sum();
        let k = all.iter().filter(|&&c| c > 0).count();
        (all, sum, total, k)
    }

    /// The occurrence boundary of `start..end` where the event mixes of the two sides differ
    /// most (leftmost on ties): `start + i`, or `None` for fewer than two positions.
    pub fn best_cut(&self, start: usize, end: usize) -> Option<usize> {
        if end < start + 2 {
            return None;
        }
        let (all, sum, total, _) = self.totals(start..end);
        if total == 0 {
            return None;
        }
        let order: Vec<usize> = (start..end).collect();
        let mut left = vec![0u64; self.alphabet];
        let (_, at) = self.scan(&order, &all, sum, total, &mut left, None);
        Some(start + at.max(1))
    }

    /// The boundary of `start..end` in `lo..=hi` where the event mixes of the two sides
    /// differ most (leftmost on ties), `None` when no boundary lies in that range.
    pub fn best_cut_in(&self, start: usize, end: usize, lo: usize, hi: usize) -> Option<usize> {
        let (lo, hi) = (lo.max(start + 1), hi.min(end.saturating_sub(1)));
        if end < start + 2 || lo > hi {
            return None;
        }
        let (all, sum_all, total, _) = self.totals(start..end);
        if total == 0 {
            return Some(lo);
        }
        let mut left = vec![0u64; self.alphabet];
        let order: Vec<usize> = (start..end).collect();
        // One pass over `start..hi`, not one per candidate boundary.
        let (_, at) = self.scan_between(
            &order,
            (&all, sum_all, total),
            &mut left,
            (lo - start, hi - start),
            true,
        );
        Some(start + at)
    }

    /// The boundary in `lo..=hi` under which the positions `lo..=hi` are likeliest drawn from two
    /// mixes: those before it from `left`, those from it on from `right` (counts by signature;
    /// each probability smoothed by half an event). Leftmost on ties; `None` for an empty range.
    pub fn likeliest_cut_in(&self, lo: usize, hi: usize, left: &[u64], right: &[u64]) -> Option<usize> {
        if lo > hi || hi > self.len() {
            return None;
        }
        let k = self.alphabet.max(1) as f64;
        let (n_left, n_right): (u64, u64) = (left.iter().sum(), right.iter().sum());
        let log_p = |m: &[u64], n: u64, s: u32| {
            ((m.get(s as usize).copied().unwrap_or(0) as f64 + 0.5) / (n as f64 + 0.5 * k)).ln()
        };
        // Gain in log-likelihood of moving positions lo..c from the right mix to the left one.
        let (mut best, mut best_at, mut gain) = (0.0f64, lo, 0.0f64);
        for c in lo..hi {
            gain += self
                .bag(c)
                .iter()
                .map(|&(s, n)| n as f64 * (log_p(left, n_left, s) - log_p(right, n_right, s)))
                .sum::<f64>();
            if gain > best + 1e-9 {
                best = gain;
                best_at = c + 1;
            }
        }
        Some(best_at)
    }

    /// The thesis' recursive segmentation (§5.2.1) of the positions `a..e` with a condition on
    /// the pieces: each segment `x..y` is cut at its boundary `c` of largest divergence while
    /// that cut is significant with whole positions permuted ([`Bags::test_at`], `p < alpha`,
    /// strength > `s0`), the two sides differ in which signatures occur and `worth(x, c, y)`
    /// holds. Returns the cuts in order with their tests.
    pub fn segment_within(
        &self,
        a: usize,
        e: usize,
        alpha: f64,
        s0: f64,
        worth: impl Fn(usize, usize, usize) -> bool,
    ) -> Vec<(usize, BoundaryTest)> {
        let mut out = Vec::new();
        let mut stack = vec![(a, e)];
        while let Some((x, y)) = stack.pop() {
            let Some(c) = self.best_cut(x, y) else { continue };
            if !worth(x, c, y) || !self.support_differs(x, c, y) {
                continue;
            }
            let t = self.test_at(x, c, y, alpha, false);
            if t.keeps(alpha, s0) {
                out.push((c, t));
                stack.push((x, c));
                stack.push((c, y));
            }
        }
        out.sort_by_key(|c| c.0);
        out
    }

    /// The boundary of `start..end` in `lo..=hi` where the mixes of the two sides differ most
    /// with **equal weights** (Jensen–Shannon divergence of the two normalised mixes, whatever
    /// their sizes; leftmost on ties): the edge of a short set-up or end against a long loop,
    /// which the size-weighted divergence would move into the loop. `None` when no boundary
    /// lies in the range.
    pub fn most_different_in(&self, start: usize, end: usize, lo: usize, hi: usize) -> Option<usize> {
        let (lo, hi) = (lo.max(start + 1), hi.min(end.saturating_sub(1)));
        if end < start + 2 || lo > hi {
            return None;
        }
        let (all, _, total, _) = self.totals(start..end);
        let mut left = vec![0u64; self.alphabet];
        for i in start..lo {
            for &(s, c) in self.bag(i) {
                left[s as usize] += c;
            }
        }
        let h = |p: f64| if p > 0.0 { -p * p.log2() } else { 0.0 };
        let mut best: Option<(f64, usize)> = None;
        for c in lo..=hi {
            if c > lo {
                for &(s, n) in self.bag(c - 1) {
                    left[s as usize] += n;
                }
            }
            let nl: u64 = left.iter().sum();
            let nr = total - nl;
            if nl == 0 || nr == 0 {
                continue;
            }
            let (mut hm, mut hl, mut hr) = (0.0, 0.0, 0.0);
            for (s, &a) in all.iter().enumerate() {
                if a == 0 {
                    continue;
                }
                let (pl, pr) = (left[s] as f64 / nl as f64, (a - left[s]) as f64 / nr as f64);
                hm += h((pl + pr) / 2.0);
                hl += h(pl);
                hr += h(pr);
            }
            let d = hm - (hl + hr) / 2.0;
            if best.is_none_or(|(b, _)| d > b + 1e-12) {
                best = Some((d, c));
            }
        }
        best.map(|(_, c)| c)
    }

    /// Test the boundary `cut` of `start..end`: p-value of "the occurrences of the union are
    /// exchangeable" with the maximum divergence over every boundary as statistic
    /// (`fixed = false`, a chosen cut) or the divergence at `cut` itself (`fixed = true`, a cut
    /// given in advance), by permutations of whole occurrences with Besag & Clifford's
    /// sequential stopping at `alpha`; and the thesis' strength at `cut` (N = events,
    /// K = k_l + k_r + 1 − k over signatures).
    pub fn test_at(&self, start: usize, cut: usize, end: usize, alpha: f64, fixed: bool) -> BoundaryTest {
        let units = end.saturating_sub(start);
        let (all, sum_all, total, k) = self.totals(start..end);
        if units < 2 || cut <= start || cut >= end || total == 0 || k <= 1 {
            return BoundaryTest {
                p: 1.0,
                strength: -1.0,
                stage: false,
            };
        }
        let mut left = vec![0u64; self.alphabet];
        let order: Vec<usize> = (start..end).collect();
        let (d_cut, _) = self.scan(&order, &all, sum_all, total, &mut left, Some(cut - start));
        let kl = self.counts(start..cut).values().filter(|&&c| c > 0).count();
        let kr = self.counts(cut..end).values().filter(|&&c| c > 0).count();
        let strength = super::segmentation_strength(total.max(2) as usize, kl + kr + 1 - k, d_cut);
        // A cut given in advance: the divergence at one boundary depends on one side's counts
        // only (the other's are the rest), so each order sums the smaller side (the end of a
        // main loop: a few occurrences against thousands).
        let k = cut - start;
        let side = |pool: &[usize], left: &mut [u64]| {
            let (from, to) = if k <= units - k { (0, k) } else { (k, units) };
            let o = &pool[from..to];
            self.scan_between(o, (&all, sum_all, total), left, (o.len(), o.len()), false)
                .0
        };
        let observed = if fixed {
            side(&order, &mut left)
        } else {
            self.scan(&order, &all, sum_all, total, &mut left, None).0
        };
        // A cut given in advance scans one side only, so it affords the full resolution: with
        // 199 shuffles one order reaching the statistic already gives p = 0.01 = α.
        let shuffles = if units > FEW_PERMUTATIONS_FROM && !fixed {
            FEW_PERMUTATIONS
        } else {
            PERMUTATIONS
        };
        let give_up = (alpha * (shuffles + 1) as f64).ceil().max(1.0) as usize;
        let mut rng = super::merge::SplitMix(((start as u64) << 32) ^ ((cut as u64) << 16) ^ (end as u64) ^ 0xB465_u64);
        let statistic = |pool: &[usize], left: &mut [u64]| {
            if fixed {
                side(pool, left)
            } else {
                self.scan(pool, &all, sum_all, total, left, None).0
            }
        };
        // The shuffles are drawn in order, one from the last; with enough events to scan, a
        // batch of them is evaluated on two cores natively and the stopping rule applied to
        // their statistics in order, so p is what one shuffle after the other gives (the batch
        // past the stop is wasted). Batches grow from 8, as a cut that is not significant
        // stops after a few shuffles.
        let parallel = self.offs[end] - self.offs[start] >= PARALLEL_TEST_ITEMS;
        let mut other_left = if parallel {
            vec![0u64; self.alphabet]
        } else {
            Vec::new()
        };
        let mut pool = order;
        let mut at_least = 0usize;
        let mut m = 0usize;
        let mut batch = if parallel { 8 } else { 1 };
        while m < shuffles {
            let b = batch.min(shuffles - m);
            let mut pools: Vec<Vec<usize>> = Vec::with_capacity(b);
            for _ in 0..b {
                for i in (1..units).rev() {
                    pool.swap(i, rng.below(i + 1));
                }
                pools.push(pool.clone());
            }
            let each = |pools: &[Vec<usize>], left: &mut [u64]| -> Vec<f64> {
                pools.iter().map(|p| statistic(p, left)).collect()
            };
            let ds = if b > 1 {
                let (first, second) = pools.split_at(b / 2);
                let other = &mut other_left;
                let (later, mut ds) = crate::logical::per_rank::both(|| each(second, other), || each(first, &mut left));
                ds.extend(later);
                ds
            } else {
                each(&pools, &mut left)
            };
            for d in ds {
                m += 1;
                if d >= observed - 1e-12 {
                    at_least += 1;
                    if at_least >= give_up {
                        return BoundaryTest {
                            p: (give_up as f64 / m as f64).min(1.0),
                            strength,
                            stage: false,
                        };
                    }
                }
            }
            if parallel {
                batch = (batch * 2).min(64);
            }
        }
        BoundaryTest {
            p: (at_least + 1) as f64 / (shuffles + 1) as f64,
            strength,
            stage: false,
        }
    }

    /// The thesis' recursive segmentation (§5.2.1) on the event mixes, with its significance
    /// as the stop rule: a segment is cut at its boundary of largest divergence while that cut
    /// is significant ([`Bags::test_at`], `p < alpha`) and its strength exceeds `s0`. Returns
    /// the boundaries (`0`, the cuts in order, `len`).
    pub fn segment(&self, alpha: f64, s0: f64) -> Vec<usize> {
        let mut cuts = vec![0, self.len()];
        let mut stack = vec![(0usize, self.len())];
        while let Some((a, b)) = stack.pop() {
            let Some(c) = self.best_cut(a, b) else { continue };
            if self.test_at(a, c, b, alpha, false).keeps(alpha, s0) {
                cuts.push(c);
                stack.push((a, c));
                stack.push((c, b));
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        cuts
    }
}

impl Mixes for Bags {
    fn test(&self, start: usize, cut: usize, end: usize, alpha: f64) -> BoundaryTest {
        self.test_at(start, cut, end, alpha, false)
    }
    fn divergence(&self, a: std::ops::Range<usize>, b: std::ops::Range<usize>) -> f64 {
        // Every sum in the order of the signature ids, so that the result does not depend on a
        // hash map's order (its last bits decide which neighbour a short phase joins).
        let norm = |c: HashMap<u32, u64>| {
            let t: u64 = c.values().sum();
            let mut v: Vec<(u32, f64)> = c.into_iter().map(|(s, n)| (s, n as f64 / t.max(1) as f64)).collect();
            v.sort_unstable_by_key(|x| x.0);
            v
        };
        let (pa, pb) = (norm(self.counts(a)), norm(self.counts(b)));
        let h = |it: &mut dyn Iterator<Item = f64>| -> f64 { it.filter(|&x| x > 0.0).map(|x| -x * x.log2()).sum() };
        let get = |v: &[(u32, f64)], k: u32| v.binary_search_by_key(&k, |x| x.0).map_or(0.0, |i| v[i].1);
        let mut keys: Vec<u32> = pa.iter().chain(&pb).map(|x| x.0).collect();
        keys.sort_unstable();
        keys.dedup();
        let mid = h(&mut keys.iter().map(|&k| (get(&pa, k) + get(&pb, k)) / 2.0));
        (mid - (h(&mut pa.iter().map(|x| x.1)) + h(&mut pb.iter().map(|x| x.1))) / 2.0).max(0.0)
    }
    fn positions(&self) -> usize {
        self.len()
    }
    fn weight(&self, r: std::ops::Range<usize>) -> f64 {
        self.items[self.offs[r.start]..self.offs[r.end]]
            .iter()
            .map(|&(_, c)| c as f64)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random bags over a small alphabet, a long run of one mix then another.
    fn random_bags(seed: u64, n: usize) -> Bags {
        let mut rng = super::super::merge::SplitMix(seed);
        let bags: Vec<Vec<u32>> = (0..n)
            .map(|i| {
                let k = 1 + rng.below(6);
                let shift = if i > n * 2 / 3 { 3 } else { 0 };
                (0..k).map(|_| (rng.below(5) + shift) as u32).collect()
            })
            .collect();
        Bags::from_symbols(&bags)
    }

    /// Divergence at one boundary summed from scratch over the two sides (no running sums).
    fn divergence_at(b: &Bags, order: &[usize], k: usize) -> f64 {
        let mut l = vec![0u64; b.alphabet];
        let mut all = vec![0u64; b.alphabet];
        for (j, &i) in order.iter().enumerate() {
            for &(s, c) in b.bag(i) {
                all[s as usize] += c;
                if j < k {
                    l[s as usize] += c;
                }
            }
        }
        let h = |v: &[u64]| {
            let n: u64 = v.iter().sum();
            v.iter()
                .filter(|&&c| c > 0)
                .map(|&c| -(c as f64 / n as f64) * (c as f64 / n as f64).log2())
                .sum::<f64>()
        };
        let r: Vec<u64> = all.iter().zip(&l).map(|(a, x)| a - x).collect();
        let (nl, n) = (l.iter().sum::<u64>() as f64, all.iter().sum::<u64>() as f64);
        h(&all) - nl / n * h(&l) - (n - nl) / n * h(&r)
    }

    /// The one-pass best boundary in a range is a maximum of the divergences computed from
    /// scratch at each boundary, and a boundary's divergence summed over
    /// its smaller side equals the one summed over its left side.
    #[test]
    fn one_pass_scans_equal_the_divergence_from_scratch() {
        for seed in 1..40u64 {
            let b = random_bags(seed, 30 + (seed as usize * 7) % 50);
            let n = b.len();
            let (lo, hi) = (1 + (seed as usize) % 5, n - 1 - (seed as usize) % 4);
            let order: Vec<usize> = (0..n).collect();
            let d: Vec<f64> = (lo..=hi).map(|c| divergence_at(&b, &order, c)).collect();
            let max = d.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let got = b.best_cut_in(0, n, lo, hi).unwrap();
            assert!((d[got - lo] - max).abs() < 1e-9, "seed {seed}: cut {got} not a maximum");
            let (all, sum_all, total, _) = b.totals(0..n);
            let mut left = vec![0u64; b.alphabet];
            for k in [1, n / 2, n - 1] {
                let whole = b.scan(&order, &all, sum_all, total, &mut left, Some(k)).0;
                let right = &order[k..];
                let side = b
                    .scan_between(
                        right,
                        (&all, sum_all, total),
                        &mut left,
                        (right.len(), right.len()),
                        false,
                    )
                    .0;
                assert!((whole - side).abs() < 1e-9, "seed {seed} k {k}: {whole} vs {side}");
                assert!((whole - divergence_at(&b, &order, k).max(0.0)).abs() < 1e-9);
                assert!(left.iter().all(|&c| c == 0), "scratch left dirty");
            }
        }
    }

    /// One step as one occurrence of five events, or the same step in five single-event
    /// occurrences: the event mix is the same, so a loop of whole steps followed by a loop of
    /// fragmented steps is one segment; a loop of other events after it is cut off exactly.
    #[test]
    fn fragmented_steps_mix_like_whole_steps() {
        let step = vec![0u32, 1, 2, 3, 4];
        let mut bags: Vec<Vec<u32>> = Vec::new();
        for k in 0..40 {
            if k % 3 == 0 {
                bags.push(step.clone());
            } else {
                bags.extend(step.iter().map(|&s| vec![s]));
            }
        }
        let loop_end = bags.len();
        for _ in 0..30 {
            bags.push(vec![5, 6]);
        }
        let b = Bags::from_symbols(&bags);
        assert_eq!(b.segment(0.01, 0.0), vec![0, loop_end, bags.len()]);
    }

    /// Fewer positions than windows (step 3c): twelve whole steps of a grid exchange, then ten
    /// rounds of one collective, then a loop whose steps come whole or in pieces. The
    /// collectives are cut off at both ends exactly; the loop of pieces is not cut (its mix at
    /// whole periods is stationary, a cut inside it is no change of which signatures occur).
    #[test]
    fn few_occurrences_cut_where_the_signatures_change() {
        let mut bags: Vec<Vec<u32>> = vec![vec![0, 1, 2, 3]; 12];
        bags.extend(std::iter::repeat_n(vec![4], 10));
        let loop_start = bags.len();
        for k in 0..20 {
            if k % 2 == 0 {
                bags.push(vec![5, 6, 7]);
            } else {
                bags.extend([vec![5], vec![6], vec![7]]);
            }
        }
        let b = Bags::from_symbols(&bags);
        let all = |_: usize, _: usize, _: usize| true;
        let cuts: Vec<usize> = b
            .segment_within(0, bags.len(), 0.01, 0.0, all)
            .iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(cuts, vec![12, loop_start]);
        // The loop alone: no cut anywhere.
        assert!(b.segment_within(loop_start, bags.len(), 0.01, 0.0, all).is_empty());
        // A piece that is not worth a phase stops the cut there: with more than 10 positions
        // asked of each phase, the loop is cut off, the 10 collectives stay with the grid.
        let long = |x: usize, c: usize, y: usize| c - x > 10 && y - c > 10;
        let cuts: Vec<usize> = b
            .segment_within(0, bags.len(), 0.01, 0.0, long)
            .iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(cuts, vec![loop_start]);
    }

    /// Hand-checked: bags `{a}`, `{a}`, `{b}`, `{b}`. The best cut is in the middle with
    /// D_JS = 1; of the 24 orders of the four occurrences, those with both `a` on one side
    /// reach it at some boundary: `a a b b`, `b b a a` and their within-side swaps, 8 of 24,
    /// so p ≈ 1/3 (Monte Carlo).
    /// The permutation test's p, its shuffles evaluated in batches (on two cores where the
    /// union is large), against one shuffle after the other with the stopping rule after each:
    /// equal, whether the cut is significant (every shuffle drawn) or not (an early stop).
    #[test]
    fn batched_permutations_equal_one_shuffle_after_another() {
        let sequential = |b: &Bags, start: usize, cut: usize, end: usize, alpha: f64, fixed: bool| {
            let units = end - start;
            let (all, sum_all, total, _) = b.totals(start..end);
            let mut left = vec![0u64; b.alphabet];
            let k = cut - start;
            let statistic = |pool: &[usize], left: &mut [u64]| {
                if fixed {
                    let (from, to) = if k <= units - k { (0, k) } else { (k, units) };
                    let o = &pool[from..to];
                    b.scan_between(o, (&all, sum_all, total), left, (o.len(), o.len()), false)
                        .0
                } else {
                    b.scan(pool, &all, sum_all, total, left, None).0
                }
            };
            let mut pool: Vec<usize> = (start..end).collect();
            let observed = statistic(&pool, &mut left);
            let shuffles = if units > FEW_PERMUTATIONS_FROM && !fixed {
                FEW_PERMUTATIONS
            } else {
                PERMUTATIONS
            };
            let give_up = (alpha * (shuffles + 1) as f64).ceil().max(1.0) as usize;
            let mut rng = super::super::merge::SplitMix(
                ((start as u64) << 32) ^ ((cut as u64) << 16) ^ (end as u64) ^ 0xB465_u64,
            );
            let mut at_least = 0;
            for m in 1..=shuffles {
                for i in (1..units).rev() {
                    pool.swap(i, rng.below(i + 1));
                }
                if statistic(&pool, &mut left) >= observed - 1e-12 {
                    at_least += 1;
                    if at_least >= give_up {
                        return (give_up as f64 / m as f64).min(1.0);
                    }
                }
            }
            (at_least + 1) as f64 / (shuffles + 1) as f64
        };
        let mut parallel = false;
        for seed in 1..6u64 {
            // Large enough for batches on two cores, and a small union one shuffle at a time.
            for n in [40, 400 + 50 * seed as usize] {
                let b = random_bags(seed, n);
                parallel |= b.offs[n] - b.offs[0] >= PARALLEL_TEST_ITEMS;
                // The change of mix (significant), an arbitrary cut (not), and a sub-range.
                for (start, cut, end) in [(0, n * 2 / 3 + 1, n), (0, n / 3, n), (n / 5, n / 2, n * 3 / 5)] {
                    for alpha in [0.01, 0.2] {
                        for fixed in [false, true] {
                            let got = b.test_at(start, cut, end, alpha, fixed).p;
                            let want = sequential(&b, start, cut, end, alpha, fixed);
                            assert_eq!(got, want, "seed {seed} n {n} {start}..{cut}..{end} α {alpha} {fixed}");
                        }
                    }
                }
            }
        }
        assert!(parallel, "no union large enough for batches on two cores");
    }

    #[test]
    fn permutation_p_by_hand() {
        let b = Bags::from_symbols(&[vec![0], vec![0], vec![1], vec![1]]);
        assert_eq!(b.best_cut(0, 4), Some(2));
        let t = b.test_at(0, 2, 4, 1.0, false);
        assert!((t.p - 1.0 / 3.0).abs() < 0.05, "{t:?}");
        // Strength at the cut: N = 4 events, K = 1 + 1 + 1 − 2 = 1, s = (8·1 − 2)/2 = 3.
        assert!((t.strength - 3.0).abs() < 1e-9);
        // A union of one signature: nothing to test.
        let one = Bags::from_symbols(&[vec![0, 0], vec![0]]);
        assert_eq!(one.test_at(0, 1, 2, 0.01, false).p, 1.0);
    }
}
