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
    /// `θ_i`.
    pub theta: f64,
    /// Set when a vector is constant and the convention decided `θ_i`.
    pub note: Option<String>,
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
/// ranked vectors of equal length. A constant vector has no variance: both constant gives 1,
/// one constant gives 0 (see the module documentation). Empty vectors count as constant.
pub fn metric_correlation(r: &[f64], s: &[f64]) -> f64 {
    assert_eq!(r.len(), s.len(), "ranked vectors of different lengths");
    let constant = |v: &[f64]| v.windows(2).all(|w| w[0] == w[1]);
    match (constant(r), constant(s)) {
        (true, true) => return 1.0,
        (true, false) | (false, true) => return 0.0,
        (false, false) => {}
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

/// The communication correlation coefficient `θ` of Definition 5: the mean of the `θ_i`.
pub fn communication_correlation(thetas: &[f64]) -> f64 {
    if thetas.is_empty() {
        return 0.0;
    }
    thetas.iter().sum::<f64>() / thetas.len() as f64
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

pub(super) fn compare_property(
    property: &str,
    unit: &str,
    observed_a: Vec<Option<f64>>,
    observed_b: Vec<Option<f64>>,
) -> PropertyComparison {
    let key = |v: &Vec<Option<f64>>| -> Vec<f64> { v.iter().map(|x| x.unwrap_or(f64::INFINITY)).collect() };
    let ranked_a = rank_transform(&key(&observed_a));
    let ranked_b = rank_transform(&key(&observed_b));
    let theta = metric_correlation(&ranked_a, &ranked_b);
    let constant = |v: &[f64]| v.windows(2).all(|w| w[0] == w[1]);
    let note = match (constant(&ranked_a), constant(&ranked_b)) {
        (true, true) => Some("constant in both runs: θ = 1 by convention".to_string()),
        (true, false) => Some("constant in the first run only: θ = 0 by convention".to_string()),
        (false, true) => Some("constant in the second run only: θ = 0 by convention".to_string()),
        (false, false) => None,
    };
    PropertyComparison {
        property: property.into(),
        unit: unit.into(),
        observed_a,
        observed_b,
        ranked_a,
        ranked_b,
        theta,
        note,
    }
}
