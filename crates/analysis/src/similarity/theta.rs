//! θ: rank transformation, metric correlation (PACPM Definitions 4–5), one property compared.

use super::{RunProperties, WorkMeasure};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// One property compared: the vectors to plot side by side (Figures 12–13) and `θ_i`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PropertyComparison {
    /// `temporal`, `volume` or `spatial`.
    pub property: String,
    /// Unit of the observed values.
    pub unit: String,
    /// Observed value per rank of the first run (`null`: infinite rate, sends without work).
    pub observed_a: Vec<Option<f64>>,
    /// Observed value of the second run's rank paired with each rank of the first.
    pub observed_b: Vec<Option<f64>>,
    /// Ranks (1 = largest, ties averaged) of `observed_a`.
    pub ranked_a: Vec<f64>,
    /// Ranks of `observed_b`.
    pub ranked_b: Vec<f64>,
    /// `θ_i`; not a number (`null` in JSON) when the property is left out of θ.
    #[serde(with = "nan_as_null")]
    pub theta: f64,
    /// Why the property is left out of θ (`None`: it is part of θ).
    pub note: Option<String>,
}

/// A property left out of θ, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    /// `temporal`, `volume` or `spatial`.
    pub property: String,
    /// Why: for each run without rank-order evidence, what it lacks.
    pub reason: String,
}

/// Significance level of the test of rank-order evidence ([`rank_order_evidence`]).
pub const EVIDENCE_ALPHA: f64 = 0.01;

/// Serialise a non-finite `f64` as `null` and read `null` back as not a number: an undefined θ
/// stays distinguishable from every value and survives a JSON round trip.
pub mod nan_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    /// `null` for a non-finite value.
    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        if x.is_finite() {
            s.serialize_f64(*x)
        } else {
            s.serialize_none()
        }
    }

    /// Not a number for `null`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}

/// Friedman's test of whether `parts[r][k]` (rank `r`, part `k` of the run) ranks the ranks in
/// the same order in every part: blocks are the parts, treatments the ranks, values ranked within
/// each part (ties averaged). Returns `(p, W)`: the p-value of Friedman's statistic corrected for
/// ties against χ² with `n − 1` degrees of freedom, and Kendall's coefficient of concordance `W`
/// (1: the same order in every part; 0: no agreement). Parts where every rank has the same value
/// carry no order and are skipped. `None` with fewer than two ranks, or when at most half the
/// parts (or fewer than two) order the ranks at all.
pub fn friedman(parts: &[Vec<f64>]) -> Option<(f64, f64)> {
    let n = parts.len();
    let k_all = parts.first().map_or(0, Vec::len);
    if n < 2 || parts.iter().any(|p| p.len() != k_all) {
        return None;
    }
    let mut sums = vec![0.0; n];
    let (mut squares, mut blocks) = (0.0, 0usize);
    for k in 0..k_all {
        let column: Vec<f64> = parts.iter().map(|p| p[k]).collect();
        let ranked = rank_transform(&column);
        if ranked.windows(2).all(|w| w[0] == w[1]) {
            continue;
        }
        blocks += 1;
        for (s, r) in sums.iter_mut().zip(&ranked) {
            *s += r;
        }
        squares += ranked.iter().map(|r| r * r).sum::<f64>();
    }
    // Step-to-step variation shows in every part; differences confined to a few parts are events
    // of the program (one exchange of another size), not variation: no test.
    if blocks < 2 || 2 * blocks <= k_all {
        return None;
    }
    let (nf, kf) = (n as f64, blocks as f64);
    let expected = kf * nf * (nf + 1.0) * (nf + 1.0) / 4.0;
    let between: f64 = sums.iter().map(|s| s * s).sum::<f64>() - kf * expected;
    let within = squares - expected;
    if within <= 0.0 {
        return None;
    }
    let q = ((nf - 1.0) * between / within).max(0.0);
    let p = chi_square_survival(q, nf - 1.0);
    Some((p, (q / (kf * (nf - 1.0))).clamp(0.0, 1.0)))
}

pub use crate::stats::chi_square_survival;

/// Whether one run's property carries rank-order evidence: `Err(why not)` when every rank has
/// the same value (a constant vector has no order, and Definition 4 is undefined for it), or
/// when `parts` (the property per rank and part of the run, see [`super::RunParts`]) do not
/// order the ranks consistently: Friedman's test ([`friedman`]) does not reject, at
/// [`EVIDENCE_ALPHA`], that the order changes at random from part to part. Then the totals'
/// order is step-to-step variation, which another run of the same program does not repeat.
pub fn rank_order_evidence(observed: &[Option<f64>], parts: Option<&[Vec<f64>]>) -> Result<(), String> {
    let key: Vec<f64> = observed.iter().map(|x| x.unwrap_or(f64::INFINITY)).collect();
    if key.windows(2).all(|w| w[0] == w[1] || (w[0].is_nan() && w[1].is_nan())) {
        let value = match observed.first() {
            Some(Some(x)) => format!("{x}"),
            Some(None) => "infinite".into(),
            None => "none".into(),
        };
        return Err(format!("constant (every rank {value})"));
    }
    // Parts shorter than a step of the program say nothing about its order (a part without a
    // compute gap has an infinite rate): test only when every rank has a few sends per part.
    let long_enough = |parts: &[Vec<f64>]| parts.iter().all(|p| p.len() >= 2);
    if let Some((p, w)) = parts.filter(|p| long_enough(p)).and_then(friedman) {
        if p >= EVIDENCE_ALPHA {
            return Err(format!(
                "no consistent rank order over the run (Friedman test over its {} parts: p = {p:.2} ≥ \
                 {EVIDENCE_ALPHA}, Kendall's W = {w:.2}): the ranks' differences are within step-to-step variation",
                parts.map_or(0, |p| p.first().map_or(0, Vec::len))
            ));
        }
    }
    Ok(())
}

/// Rank transformation (§3.2.1, Figure 3): the largest value gets rank 1, the next rank 2, ...;
/// equal values share the average of the ranks they span. Values that do not compare (NaN) count
/// as equal to their neighbours in the sort.
pub fn rank_transform<T: PartialOrd + Copy>(values: &[T]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    let desc = |i: &usize, j: &usize| values[*j].partial_cmp(&values[*i]).unwrap_or(Ordering::Equal);
    order.sort_by(desc);
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && desc(&order[start], &order[end]) == Ordering::Equal {
            end += 1;
        }
        // Positions start+1 ..= end share their mean.
        let shared = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = shared;
        }
        start = end;
    }
    ranks
}

/// The metric correlation coefficient `θ_i` of Definition 4 (Pearson's coefficient) of two
/// ranked vectors of equal length. Not a number when either vector is constant (no variance:
/// Definition 4 divides by zero, and a constant vector has no rank order to agree with). Empty
/// vectors count as constant.
pub fn metric_correlation(r: &[f64], s: &[f64]) -> f64 {
    assert_eq!(r.len(), s.len(), "ranked vectors of different lengths");
    let constant = |v: &[f64]| v.windows(2).all(|w| w[0] == w[1]);
    if constant(r) || constant(s) {
        return f64::NAN;
    }
    let n = r.len() as f64;
    let (mr, ms) = (r.iter().sum::<f64>() / n, s.iter().sum::<f64>() / n);
    let (mut rs, mut rr, mut ss) = (0.0, 0.0, 0.0);
    for (&x, &y) in r.iter().zip(s) {
        let (dx, dy) = (x - mr, y - ms);
        rs += dx * dy;
        rr += dx * dx;
        ss += dy * dy;
    }
    // One square root of the product: a perfect (anti)correlation gives exactly ±1.
    (rs / (rr * ss).sqrt()).clamp(-1.0, 1.0)
}

/// The communication correlation coefficient `θ` of Definition 5: the mean of the `θ_i` that
/// are defined (properties left out are not a number); not a number when none is.
pub fn communication_correlation(thetas: &[f64]) -> f64 {
    let defined: Vec<f64> = thetas.iter().copied().filter(|t| t.is_finite()).collect();
    if defined.is_empty() {
        return f64::NAN;
    }
    defined.iter().sum::<f64>() / defined.len() as f64
}

/// The measure both runs offer, best first.
pub(super) fn common_measure(a: &RunProperties, b: &RunProperties) -> (WorkMeasure, Vec<f64>, Vec<f64>) {
    for measure in WorkMeasure::ALL {
        let wa = a.work.iter().find(|w| w.measure == measure);
        let wb = b.work.iter().find(|w| w.measure == measure);
        if let (Some(wa), Some(wb)) = (wa, wb) {
            return (measure, wa.work.clone(), wb.work.clone());
        }
    }
    let zeros = |p: &RunProperties| vec![0.0; p.ranks as usize];
    (WorkMeasure::ComputeTime, zeros(a), zeros(b))
}

/// Temporal property: sends per displayed unit of work; `None` (infinite) for a rank that sends
/// without measurable work, 0 for a rank that sends nothing.
pub(super) fn temporal(sends: &[u64], work: &[f64], measure: WorkMeasure) -> Vec<Option<f64>> {
    sends
        .iter()
        .zip(work)
        .map(|(&s, &w)| {
            if s == 0 {
                Some(0.0)
            } else if w > 0.0 {
                Some(s as f64 * measure.scale() / w)
            } else {
                None
            }
        })
        .collect()
}

/// The temporal property of each part of one rank's run ([`super::RunParts`]): sends per unit
/// of compute time (0 without sends, infinite with sends and no compute time).
pub(super) fn temporal_of_parts(sends: &[u64], work: &[f64]) -> Vec<f64> {
    sends
        .iter()
        .zip(work)
        .map(|(&s, &w)| {
            if s == 0 {
                0.0
            } else if w > 0.0 {
                s as f64 / w
            } else {
                f64::INFINITY
            }
        })
        .collect()
}

/// One property compared from its observed and ranked vectors (`ranked_*` as [`rank_with_ties`]
/// gives them, the second run's already paired): `θ_i` is Pearson's coefficient of the ranks
/// unless `left_out` (undefined; also a `contrasted` property, [`super::Comparison::contrasted`]:
/// a constant run carries no rank order, and the rule is never to count it as 0 or 1).
pub(super) fn compare_property(
    (property, unit): (&str, &str),
    (observed_a, observed_b): (Vec<Option<f64>>, Vec<Option<f64>>),
    (ranked_a, ranked_b): (Vec<f64>, Vec<f64>),
    left_out: Option<String>,
    contrasted: bool,
) -> PropertyComparison {
    let theta = if contrasted || left_out.is_some() {
        f64::NAN
    } else {
        metric_correlation(&ranked_a, &ranked_b)
    };
    PropertyComparison {
        property: property.into(),
        unit: unit.into(),
        observed_a,
        observed_b,
        ranked_a,
        ranked_b,
        theta,
        note: left_out,
    }
}

/// Effect size below which two ranks' difference counts as a tie ([`spread_ties`]): their total
/// shares differ by less than one part-to-part standard deviation of their difference.
pub const TIE_EFFECT_SIZE: f64 = 1.0;

/// Ranks up to which [`spread_ties`] looks at every pair (a pair table of `n²` entries); larger
/// runs keep exact ties only.
pub const SPREAD_TIES_MAX_RANKS: usize = 4096;

/// Which pairs of ranks a run cannot tell apart in one property: `ties[i][j]` when the two ranks'
/// difference lies within the run's own spread. From `parts[r][k]` (the property of rank `r` in
/// part `k` of the run, [`super::RunParts`]): each part's values are taken as shares of that
/// part's mean over ranks (a phase that moves every rank alike cancels), and for a pair the
/// per-part differences of shares `d_k` give their mean `d̄` and sample deviation `s`; the pair is
/// tied when `|d̄| < TIE_EFFECT_SIZE · s`: the difference changes from part to part by more than
/// it amounts to, so another run of the program (other steps, another length) may order the two
/// either way. Exactly equal totals are always tied. `None` (only exact ties) without parts, with
/// fewer than four parts of nonzero mean, or when at most half of those order the ranks at all.
pub fn spread_ties(parts: Option<&[Vec<f64>]>) -> Option<Vec<Vec<bool>>> {
    let parts = parts?;
    let n = parts.len();
    let k_all = parts.first().map_or(0, Vec::len);
    if !(2..=SPREAD_TIES_MAX_RANKS).contains(&n) || parts.iter().any(|p| p.len() != k_all) {
        return None;
    }
    let means: Vec<f64> = (0..k_all)
        .map(|k| parts.iter().map(|p| p[k]).sum::<f64>() / n as f64)
        .collect();
    let used: Vec<usize> = (0..k_all).filter(|&k| means[k].is_finite() && means[k] > 0.0).collect();
    // As in Friedman's test: a difference confined to a few parts (one exchange of another
    // size, hpcc's benchmarks) is an event of the program, not variation.
    let ordering = used
        .iter()
        .filter(|&&k| parts.iter().any(|p| p[k] != parts[0][k]))
        .count();
    if used.len() < 4 || 2 * ordering <= used.len() {
        return None;
    }
    let share: Vec<Vec<f64>> = parts
        .iter()
        .map(|p| used.iter().map(|&k| p[k] / means[k]).collect())
        .collect();
    if share.iter().flatten().any(|x| !x.is_finite()) {
        return None;
    }
    let m = used.len() as f64;
    let mut ties = vec![vec![false; n]; n];
    for i in 0..n {
        ties[i][i] = true;
        for j in i + 1..n {
            let d: Vec<f64> = share[i].iter().zip(&share[j]).map(|(x, y)| x - y).collect();
            let mean = d.iter().sum::<f64>() / m;
            let sd = (d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (m - 1.0)).sqrt();
            let tied = mean.abs() < TIE_EFFECT_SIZE * sd;
            ties[i][j] = tied;
            ties[j][i] = tied;
        }
    }
    Some(ties)
}

/// Rank transformation with ties given per pair (largest = 1): rank `i` is 1 + the number of
/// ranks with a larger value not tied with it + half the number tied with it, the mean rank of a
/// group of equal values when ties are exact equality ([`rank_transform`]); `ties` need not be
/// transitive. Equal values are always tied; infinite values equal each other.
pub fn rank_with_ties(values: &[f64], ties: Option<&[Vec<bool>]>) -> Vec<f64> {
    let Some(ties) = ties else {
        return rank_transform(values);
    };
    let n = values.len();
    (0..n)
        .map(|i| {
            let mut rank = 1.0;
            for j in (0..n).filter(|&j| j != i) {
                let equal = values[i] == values[j] || (values[i].is_nan() && values[j].is_nan());
                if equal || ties[i][j] {
                    rank += 0.5;
                } else if values[j] > values[i] {
                    rank += 1.0;
                }
            }
            rank
        })
        .collect()
}
