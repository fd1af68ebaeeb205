//! Which pairs become edges: the pair weights of the matrix, the automatic threshold at the
//! widest gap, a fixed percentage, and the fallback cuts tried when the first graph matches
//! nothing (docs/topology.md §1).

use super::report::{FilterReport, PairTraffic, SizeSplit, Threshold};
use crate::matrix::{CommMatrix, Metric};
use std::collections::BTreeMap;
use tracelogic_graph::Graph;

/// Communicating pairs `(a, b, weight, volume)` with `a < b`: `weight` is the larger of the two
/// directed entries (what thresholds compare, as in `CommMatrix::filter`), `volume` the traffic
/// in both directions. Sorted by weight, largest first. Bytes, or messages when no message
/// carried a byte.
pub fn pair_volumes(m: &CommMatrix) -> (Vec<PairVolume>, &'static str) {
    pair_volumes_by(m, filter_metric(m))
}

/// What the filter's first cut weighs: bytes, or messages when no message carried a byte.
pub(super) fn filter_metric(m: &CommMatrix) -> Metric {
    if m.total(Metric::Bytes) == 0 {
        Metric::Messages
    } else {
        Metric::Bytes
    }
}

/// [`pair_volumes`] by `metric`.
pub fn pair_volumes_by(m: &CommMatrix, metric: Metric) -> (Vec<PairVolume>, &'static str) {
    // Each unordered pair once, in O(ranks + entries): rank a's row (a → b) is merged with its
    // column (b → a), both by increasing b, keeping b > a. The column is a counting sort of the
    // entries by receiver; entries come by increasing sender, so each column's senders increase.
    let n = m.ranks() as usize;
    let mut col_start = vec![0usize; n + 1];
    for e in m.entries() {
        col_start[e.to as usize + 1] += 1;
    }
    for r in 0..n {
        col_start[r + 1] += col_start[r];
    }
    let mut fill = col_start.clone();
    let mut column = vec![(0u32, 0u64); m.nonzero()];
    for e in m.entries() {
        let k = &mut fill[e.to as usize];
        column[*k] = (e.from, e.value(metric));
        *k += 1;
    }
    let mut pairs = Vec::new();
    for a in 0..m.ranks() {
        let mut out = m
            .row(a)
            .filter(|e| e.to > a)
            .map(|e| (e.to, e.value(metric)))
            .peekable();
        let col = &column[col_start[a as usize]..col_start[a as usize + 1]];
        let mut inc = col.iter().copied().filter(|&(b, _)| b > a).peekable();
        loop {
            let (b, x, y) = match (out.peek().copied(), inc.peek().copied()) {
                (None, None) => break,
                (Some((b, x)), Some((c, y))) if b == c => {
                    out.next();
                    inc.next();
                    (b, x, y)
                }
                (Some((b, x)), Some((c, _))) if b < c => {
                    out.next();
                    (b, x, 0)
                }
                (Some((b, x)), None) => {
                    out.next();
                    (b, x, 0)
                }
                (_, Some((c, y))) => {
                    inc.next();
                    (c, 0, y)
                }
            };
            if x > 0 || y > 0 {
                pairs.push((a, b, x.max(y), x.saturating_add(y)));
            }
        }
    }
    pairs.sort_by(|x, y| y.2.cmp(&x.2).then((x.0, x.1).cmp(&(y.0, y.1))));
    let name = match metric {
        Metric::Bytes => "bytes",
        Metric::Messages => "messages",
    };
    (pairs, name)
}

/// Smallest gap the automatic threshold cuts at. Genuine patterns vary by small factors — a
/// periodic extent of 2 doubles a pair (its +1 and −1 neighbours coincide), halo faces differ
/// in area — while stray traffic sits far below (Logicalization MG-16: 190×; small MG runs: 2–7 % of
/// the largest entry).
pub const AUTO_MIN_GAP: f64 = 5.0;

/// Smallest gap a fallback cut sits at (see [`fallback_cuts`]). Below 2× the two sides are one
/// pattern's spread (halo faces of different areas, a doubled periodic pair), not two levels of
/// traffic; NAS MG class S on 128 ranks separates its torus from its coarse-level pairs by only
/// 4.4×.
pub const FALLBACK_MIN_GAP: f64 = 2.0;

/// Most cuts tried after the widest gap's graph matched nothing: each costs one identification,
/// and beyond the few widest gaps a cut sits inside a pattern's own spread.
pub const MAX_FALLBACK_CUTS: usize = 8;

/// Every cut the automatic filter may take, widest gap first (equal gaps: the one keeping fewer
/// pairs first): `(pairs kept, gap ratio)` for each cut between two distinct consecutive sorted
/// pair weights that keeps an edge at every rank that has traffic (so the dominant pattern is
/// never cut away), but for [`minor_ranks`], and whose ratio `v_i / v_{i+1}` is at least `min_gap`.
pub fn candidate_cuts(volumes_desc: &[u64], pairs: &[(u32, u32)], ranks: u32, min_gap: f64) -> Vec<(usize, f64)> {
    let minor = minor_ranks(volumes_desc, pairs, ranks);
    let mut touched = minor.clone();
    let total = {
        let mut t = vec![false; ranks as usize];
        for &(a, b) in pairs {
            t[a as usize] = true;
            t[b as usize] = true;
        }
        t.iter().zip(&minor).filter(|&(&x, &m)| x && !m).count()
    };
    let mut covered = 0;
    let mut cuts = Vec::new();
    for i in 0..volumes_desc.len().saturating_sub(1) {
        for r in [pairs[i].0, pairs[i].1] {
            if !std::mem::replace(&mut touched[r as usize], true) {
                covered += 1;
            }
        }
        if covered < total || volumes_desc[i + 1] == volumes_desc[i] {
            continue;
        }
        let ratio = volumes_desc[i] as f64 / volumes_desc[i + 1].max(1) as f64;
        if ratio >= min_gap {
            cuts.push((i + 1, ratio));
        }
    }
    cuts.sort_by(|x, y| y.1.total_cmp(&x.1));
    cuts
}

/// Ranks outside the pattern: a strict minority of the ranks with traffic whose heaviest pair
/// weighs at least [`AUTO_MIN_GAP`]× less than the heaviest pair of every other rank (the widest
/// such gap among the ranks' heaviest pairs). A cut may leave them without an edge: the master
/// of a master-worker code that sends a worker 4 bytes once (held-out ESyS-Particle, its
/// workers a 2x2 grid of 0.4–1 MB pairs) is not part of the workers' grid. `true` per rank.
pub fn minor_ranks(volumes_desc: &[u64], pairs: &[(u32, u32)], ranks: u32) -> Vec<bool> {
    // Heaviest pair of each rank: the first pair (weights descending) that touches it.
    let mut heaviest: Vec<Option<u64>> = vec![None; ranks as usize];
    for (&(a, b), &w) in pairs.iter().zip(volumes_desc) {
        for r in [a, b] {
            heaviest[r as usize].get_or_insert(w);
        }
    }
    let mut maxima: Vec<u64> = heaviest.iter().flatten().copied().collect();
    maxima.sort_unstable_by(|x, y| y.cmp(x));
    let with_traffic = maxima.len();
    // The widest gap between consecutive maxima that leaves a strict minority below it.
    let mut best: Option<(f64, u64)> = None;
    for i in 0..with_traffic.saturating_sub(1) {
        let (hi, lo) = (maxima[i], maxima[i + 1]);
        // Ranks below the gap: with_traffic − (i + 1); above: i + 1. Below must be fewer.
        if hi == lo || with_traffic - (i + 1) > i {
            continue;
        }
        let ratio = hi as f64 / lo.max(1) as f64;
        if ratio >= AUTO_MIN_GAP && best.is_none_or(|(r, _)| ratio > r) {
            best = Some((ratio, lo));
        }
    }
    match best {
        None => vec![false; ranks as usize],
        Some((_, below)) => heaviest.iter().map(|h| h.is_some_and(|w| w <= below)).collect(),
    }
}

/// The automatic threshold: the widest relative gap `v_i / v_{i+1}` between consecutive sorted
/// pair volumes, among cuts that keep an edge at every rank that has traffic (so the dominant
/// pattern is never cut away), and only if the gap is at least [`AUTO_MIN_GAP`]×. Returns how
/// many pairs to keep and the gap ratio, or `None` (keep everything).
pub fn auto_threshold(volumes_desc: &[u64], pairs: &[(u32, u32)], ranks: u32) -> Option<(usize, f64)> {
    candidate_cuts(volumes_desc, pairs, ranks, AUTO_MIN_GAP)
        .first()
        .copied()
}

/// The cuts tried, in order, when the automatic cut keeping `widest_kept` pairs gave a graph no
/// topology matches: the other cuts at gaps of at least [`FALLBACK_MIN_GAP`]× that keep fewer
/// pairs, widest first, at most [`MAX_FALLBACK_CUTS`]. Never more pairs: the widest cut, when it
/// removed any, sits at a gap of at least [`AUTO_MIN_GAP`]×, and pairs that much lighter are not
/// taken back to make a graph some topology matches (held-out DOLFINx on 4 ranks: its four
/// halo pairs, 487× above a set-up message, matched nothing, and the message made them a
/// `2x2 6-point stencil`; held-out MUMPS on 8: eleven 8-byte pairs, 170× below, made the
/// factorization's 17 pairs an `8-node all-to-all`).
pub fn fallback_cuts(
    volumes_desc: &[u64],
    pairs: &[(u32, u32)],
    ranks: u32,
    widest_kept: usize,
) -> Vec<(usize, Option<f64>)> {
    let mut cuts: Vec<(usize, Option<f64>)> = candidate_cuts(volumes_desc, pairs, ranks, FALLBACK_MIN_GAP)
        .into_iter()
        .filter(|&(keep, _)| keep < widest_kept)
        .map(|(keep, ratio)| (keep, Some(ratio)))
        .collect();
    cuts.truncate(MAX_FALLBACK_CUTS);
    cuts
}

/// A pair of ranks `(a, b)`, `a < b`, its weight (larger directed entry) and volume (sum).
pub type PairVolume = (u32, u32, u64, u64);

/// The pairs of a matrix, sorted by weight (see [`pair_volumes`]), with what cutting them costs.
pub(super) struct SortedPairs {
    pub(super) pairs: Vec<PairVolume>,
    pub(super) metric: &'static str,
    /// Both directions' traffic of every pair.
    pub(super) total: u128,
}

impl SortedPairs {
    /// The pairs of `m` by `metric`, with their total.
    pub(super) fn of(m: &CommMatrix, metric: Metric) -> SortedPairs {
        let (pairs, metric) = pair_volumes_by(m, metric);
        let total = pairs.iter().map(|p| p.3 as u128).sum();
        SortedPairs { pairs, metric, total }
    }

    /// Weights, largest first, and endpoints of the pairs (what the cuts read).
    pub(super) fn weights_and_ends(&self) -> (Vec<u64>, Vec<(u32, u32)>) {
        (
            self.pairs.iter().map(|p| p.2).collect(),
            self.pairs.iter().map(|p| (p.0, p.1)).collect(),
        )
    }

    fn share(&self, v: u64) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            v as f64 / self.total as f64
        }
    }

    fn max_volume(&self) -> u64 {
        self.pairs.first().map_or(0, |p| p.2)
    }

    /// The cut keeping the `keep` heaviest pairs, in percent of the largest entry: the
    /// geometric middle of the gap it sits in, 0 when every pair is kept.
    pub(super) fn cut_pct(&self, keep: usize) -> f64 {
        if keep == 0 || keep >= self.pairs.len() {
            return 0.0;
        }
        let cut = (self.pairs[keep - 1].2 as f64 * self.pairs[keep].2 as f64).sqrt();
        100.0 * cut / self.max_volume() as f64
    }

    pub(super) fn report(&self, mode: &str, keep: usize, threshold_pct: f64, gap_ratio: Option<f64>) -> FilterReport {
        let removed: Vec<PairTraffic> = self.pairs[keep..]
            .iter()
            .map(|&(a, b, _, v)| PairTraffic {
                a,
                b,
                volume: v,
                share: self.share(v),
            })
            .collect();
        FilterReport {
            mode: mode.into(),
            metric: self.metric.into(),
            threshold_pct,
            max_volume: self.max_volume(),
            pairs_before: self.pairs.len(),
            pairs_kept: keep,
            removed_share: removed.iter().fold(0.0, |acc, r| acc + r.share),
            removed,
            gap_ratio,
            fallback: None,
            size_split: None,
            one_way: None,
        }
    }

    pub(super) fn graph(&self, ranks: u32, keep: usize) -> Graph {
        Graph::from_edges(ranks, self.pairs[..keep].iter().map(|p| (p.0, p.1)))
    }
}

/// The filter's first cut: how many pairs it keeps and its report. `counts` (automatic mode
/// on bytes): every pair's message weight, for [`size_split`]; the widest gap that splits one
/// exchange by size is passed over for the next that does not (or none).
pub(super) fn filter_matrix(
    sorted: &SortedPairs,
    ranks: u32,
    threshold: Threshold,
    counts: Option<&BTreeMap<(u32, u32), u64>>,
) -> (usize, FilterReport) {
    let pairs = &sorted.pairs;
    let max_volume = sorted.max_volume();
    match threshold {
        Threshold::Percent(pct) => {
            let keep = pairs
                .iter()
                .take_while(|p| p.2 as f64 * 100.0 >= pct * max_volume as f64)
                .count();
            (keep, sorted.report("fixed", keep, pct, None))
        }
        Threshold::Auto => {
            let (volumes, endpoints) = sorted.weights_and_ends();
            let messages: Option<Vec<u64>> =
                counts.map(|c| pairs.iter().map(|p| c.get(&(p.0, p.1)).copied().unwrap_or(0)).collect());
            let (taken, passed_over) = first_auto_cut(&volumes, &endpoints, messages.as_deref(), ranks);
            let (keep, mut report) = match taken {
                Some((keep, ratio)) => (keep, sorted.report("auto", keep, sorted.cut_pct(keep), Some(ratio))),
                None => (pairs.len(), sorted.report("auto", pairs.len(), 0.0, None)),
            };
            report.size_split = passed_over;
            (keep, report)
        }
    }
}

/// The automatic filter's first cut: among the gaps of at least [`AUTO_MIN_GAP`]× (see
/// [`candidate_cuts`]) that do not split one exchange by message size ([`size_split`], when
/// `messages` gives each pair's message weight in the order of `volumes_desc`), the widest —
/// with messages, the one whose smaller of its byte gap and its message gap (the kept pair that
/// exchanges fewest messages over the removed pair that exchanges most) is widest: a level of
/// traffic differs in how often pairs exchange, not only in what they carry (held-out GPAW on a
/// 2x2 domain grid: one diagonal pair 45× below the faces in bytes and 51× in messages, the other
/// diagonal 52× below it in bytes but 2.3× in messages; the widest byte gap kept the first
/// diagonal, a `2x2 6-point stencil`). `None` keeps every pair. Also returns the widest gap
/// passed over, if any. `topology` and `compare` (its complete-graph cut) both cut here.
pub fn first_auto_cut(
    volumes_desc: &[u64],
    pairs: &[(u32, u32)],
    messages: Option<&[u64]>,
    ranks: u32,
) -> (Option<(usize, f64)>, Option<SizeSplit>) {
    let mut passed_over = None;
    let mut best: Option<((usize, f64), f64)> = None;
    for (keep, ratio) in candidate_cuts(volumes_desc, pairs, ranks, AUTO_MIN_GAP) {
        match messages.and_then(|m| size_split(pairs, m, ranks, keep, ratio)) {
            // Reported only when wider than every cut that does not split (what was passed over).
            Some(split) if best.is_none() => {
                passed_over.get_or_insert(split);
            }
            Some(_) => {}
            None => {
                // A level boundary is a gap in how often pairs exchange as well as in what they
                // carry: among the byte gaps, the one whose smaller of the two gaps is widest.
                let score = messages.map_or(ratio, |m| ratio.min(count_gap(m, keep)));
                if best.is_none_or(|(_, s)| score > s) {
                    best = Some(((keep, ratio), score));
                }
            }
        }
    }
    (best.map(|(cut, _)| cut), passed_over)
}

/// Messages of the kept pair that exchanges fewest over those of the removed pair that
/// exchanges most, for the cut keeping the `keep` heaviest pairs (by bytes).
fn count_gap(messages: &[u64], keep: usize) -> f64 {
    let kept = messages[..keep].iter().copied().min().unwrap_or(0);
    let removed = messages[keep..].iter().copied().max().unwrap_or(0);
    kept as f64 / removed.max(1) as f64
}

/// Whether the cut keeping the `keep` heaviest pairs splits one exchange by message size (see
/// [`SizeSplit`]): the kept pairs form two or more groups of ranks, and the removed pair that
/// exchanges most messages exchanges at least 1/[`FALLBACK_MIN_GAP`] of the messages of the
/// kept pair that exchanges fewest — below that factor two sides are one pattern's spread, as
/// for the fallback's cuts. Stray traffic that a connected pattern sheds (NAS MG's coarse
/// levels, hypre's corner exchanges) is cut as before: the pattern stays one group.
/// O(pairs + ranks).
fn size_split(pairs: &[(u32, u32)], messages: &[u64], ranks: u32, keep: usize, gap_ratio: f64) -> Option<SizeSplit> {
    let kept_messages = messages.get(..keep)?.iter().copied().min()?;
    let removed_messages = messages.get(keep..)?.iter().copied().max()?;
    if (removed_messages as f64) * FALLBACK_MIN_GAP < kept_messages as f64 {
        return None;
    }
    let groups = Graph::from_edges(ranks, pairs[..keep].iter().copied())
        .components()
        .iter()
        .filter(|c| c.len() > 1)
        .count();
    (groups > 1).then_some(SizeSplit {
        gap_ratio,
        pairs_kept: keep,
        groups,
        kept_messages,
        removed_messages,
    })
}
