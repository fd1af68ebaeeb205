//! Load imbalance of the computation: per rank, the time between its MPI calls over the run
//! or inside a time window (a phase), its maximum over its mean, and the ranks that compute
//! markedly more than the others (`docs/profile.md`).
//!
//! * **Computation** of a rank is the time between consecutive MPI calls (exit of one, enter of
//!   the next), clipped to the window `[from, to)` of the selection, so that a phase counts
//!   only what it contains. Ranks outside the selection's ranks are left out.
//! * **Ratio** `max / mean` over the selected ranks that recorded calls (1 = perfectly
//!   balanced); `imbalance_pct = (max / mean − 1) · 100`, the percent imbalance λ of Pearce et
//!   al. (ICS 2012): how much longer the phase takes than it would with the work spread evenly.
//! * **Late ranks**: computation above Tukey's upper fence `Q3 + 1.5 · IQR` of the per-rank
//!   computations, and above the mean — the standard outlier rule, which needs no threshold
//!   chosen for a trace: in a balanced run it flags nothing, and one rank computing more than
//!   the spread of the others is flagged.
//!
//! One pass over the calls: O(calls).

use crate::profile::secs;
use serde::{Deserialize, Serialize};
use tracelogic_model::{Rank, Selection, Time, Trace};

/// The load imbalance of a run or a phase, as `tracelogic imbalance --json` prints it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImbalanceReport {
    /// Start of the window, seconds from the trace's first event.
    pub from_s: f64,
    /// End of the window, seconds from the trace's first event.
    pub to_s: f64,
    /// Largest computation of a rank in the window.
    pub max_s: f64,
    /// Mean computation per rank.
    pub mean_s: f64,
    /// `max_s / mean_s` (1 when balanced, 0 when nothing computes).
    pub ratio: f64,
    /// `(ratio − 1) · 100`.
    pub imbalance_pct: f64,
    /// Rank with the largest computation (lowest on ties).
    pub max_rank: Rank,
    /// Ranks computing above Tukey's upper fence and the mean, by decreasing computation.
    pub late_ranks: Vec<Rank>,
    /// Per selected rank with calls: its computation in the window.
    pub by_rank: Vec<RankCompute>,
    /// Ranks with calls left out of the comparison (not of `by_rank`): the masters of a star or
    /// master–worker run ([`masters_of`]), which hand out work and wait, so their computation
    /// is a role, not imbalance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<Rank>,
}

impl ImbalanceReport {
    /// What the CLI and the page add when masters were left out: `among workers (masters 0, 1
    /// apart)`; `None` when every rank was compared.
    pub fn left_out_note(&self) -> Option<String> {
        left_out_note(&self.left_out)
    }
}

/// `among workers (masters 0, 1 apart)` for the ranks `left_out`; `None` when there are none.
pub fn left_out_note(left_out: &[Rank]) -> Option<String> {
    (!left_out.is_empty()).then(|| {
        let apart: Vec<String> = left_out.iter().map(|r| r.to_string()).collect();
        format!("among workers (masters {} apart)", apart.join(", "))
    })
}

/// The world ranks at the centres of a star or the masters of a master–worker match of a
/// topology report of world ranks (the whole run's, or a selection's: its matrix keeps world
/// rank numbers); empty for any other topology.
pub fn masters_of(report: &crate::topology::TopologyReport) -> Vec<Rank> {
    let world: Vec<Rank> = (0..report.identification.mapping.len() as Rank).collect();
    hub_ranks(report, &world)
}

/// The world ranks at the centres of a star or the masters of a master–worker match (`world`:
/// local rank → world rank); empty for any other report.
pub fn hub_ranks(report: &crate::topology::TopologyReport, world: &[Rank]) -> Vec<Rank> {
    let Some(m) = &report.identification.matched else {
        return Vec::new();
    };
    let hubs = tracelogic_graph::Family::from_name(&m.family)
        .and_then(|f| tracelogic_graph::TopologySpec::new(f, m.dims.clone()).ok())
        .map_or(0, |s| s.hubs());
    let mut out: Vec<Rank> = report
        .identification
        .mapping
        .iter()
        .filter(|p| p.node < hubs)
        .filter_map(|p| world.get(p.rank as usize).copied())
        .collect();
    out.sort_unstable();
    out
}

/// One rank's computation in the window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankCompute {
    /// World rank.
    pub rank: Rank,
    /// Seconds between its MPI calls inside the window.
    pub compute_s: f64,
}

/// The `q`-quantile of sorted values, by linear interpolation between closest ranks.
fn quantile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let x = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
    sorted[lo] as f64 + (sorted[hi] as f64 - sorted[lo] as f64) * (x - lo as f64)
}

/// Load imbalance of the ranks `selection` selects, inside its time window (`from`/`to`, as
/// absolute trace times like every selection; the whole run when absent). The kind and size
/// filters do not apply: computation is what lies between any two calls.
pub fn imbalance(trace: &Trace, selection: &Selection) -> ImbalanceReport {
    imbalance_among(trace, selection, &[])
}

/// [`imbalance`] with the ranks `left_out` (the run's masters, [`masters_of`]) not compared:
/// max, mean and late ranks are among the others, every rank's computation is still listed.
/// When that would leave no rank to compare, every rank is compared.
pub fn imbalance_among(trace: &Trace, selection: &Selection, left_out: &[Rank]) -> ImbalanceReport {
    let (t0, t1) = trace.span();
    let from: Time = selection.from.unwrap_or(t0).max(t0);
    let to: Time = selection.to.unwrap_or(t1.saturating_add(1)).min(t1).max(from);
    let mut by_rank = Vec::new();
    let mut values = Vec::new();
    let marks = crate::profile::lifecycle_marks(trace);
    for rt in &trace.ranks {
        if !selection.selects_rank(trace, rt.rank) {
            continue;
        }
        let c = &rt.calls;
        let len = c.enter.len().min(c.duration.len());
        if len == 0 {
            continue;
        }
        // Between `MPI_Init` and `MPI_Finalize` (the profile's computation).
        let computing = crate::profile::computing_calls(&marks, len.min(c.func.len()), |i| c.func[i]);
        if computing.is_empty() {
            continue;
        }
        let mut compute = 0u64;
        let mut prev = c.exit(computing.start);
        for i in computing.start + 1..computing.end {
            let (a, b) = (prev.max(from), c.enter(i).min(to));
            compute += b.saturating_sub(a);
            prev = prev.max(c.exit(i));
        }
        by_rank.push(RankCompute {
            rank: rt.rank,
            compute_s: secs(compute),
        });
        values.push((compute, rt.rank));
    }
    let apart = |r: &Rank| left_out.contains(r);
    let mut left: Vec<Rank> = Vec::new();
    if values.iter().any(|(_, r)| !apart(r)) {
        left = values.iter().map(|v| v.1).filter(apart).collect();
        left.sort_unstable();
        values.retain(|(_, r)| !apart(r));
    }
    let n = values.len().max(1) as f64;
    let total: u64 = values.iter().map(|v| v.0).sum();
    let mean = total as f64 / n;
    let (max, max_rank) = values.iter().fold((0u64, Rank::MAX), |best, &(v, r)| {
        if v > best.0 || best.1 == Rank::MAX {
            (v, r)
        } else {
            best
        }
    });
    let mut sorted: Vec<u64> = values.iter().map(|v| v.0).collect();
    sorted.sort_unstable();
    let (q1, q3) = (quantile(&sorted, 0.25), quantile(&sorted, 0.75));
    let fence = q3 + 1.5 * (q3 - q1);
    let mut late: Vec<(u64, Rank)> = values
        .iter()
        .filter(|&&(v, _)| v as f64 > fence && v as f64 > mean)
        .copied()
        .collect();
    late.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let ratio = if mean > 0.0 { max as f64 / mean } else { 0.0 };
    ImbalanceReport {
        from_s: secs(from - t0),
        to_s: secs(to - t0),
        max_s: secs(max),
        mean_s: mean / 1e9,
        ratio,
        imbalance_pct: if mean > 0.0 { (ratio - 1.0) * 100.0 } else { 0.0 },
        max_rank: if values.is_empty() { 0 } else { max_rank },
        late_ranks: late.into_iter().map(|v| v.1).collect(),
        by_rank,
        left_out: left,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        assert_eq!(quantile(&[1, 2, 3, 4, 5], 0.25), 2.0);
        assert_eq!(quantile(&[1, 2, 3, 4], 0.75), 3.25);
        assert_eq!(quantile(&[], 0.5), 0.0);
    }
}
