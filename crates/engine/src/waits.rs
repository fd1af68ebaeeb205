//! Wait states of a selection with Scalasca's definitions (`docs/waits.md`): late sender and
//! receiver, wait at N×N and at barriers, late broadcast, early reduce; per rank, function and
//! (sender, receiver) pair.

use crate::{Engine, Result};
use serde::{Deserialize, Serialize};
use tracelogic_analysis::waits::{polling, wait_states_paired};
pub use tracelogic_analysis::waits::{FunctionWaits, PairWait, Polling, RankWaits, WaitReport, Waits};
use tracelogic_model::Selection;

/// The wait states of a selection (`tracelogic waits`, the page's waits view).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitsReport {
    /// The six totals at the top level of the JSON, then `by_rank`, `by_function`, `by_pair`,
    /// `clock_violations`.
    #[serde(flatten)]
    pub report: WaitReport,
    /// World ranks of the trace (the side of the waiting matrix).
    pub ranks: u32,
    /// Time inside MPI calls, summed over ranks (what the waiting is a part of).
    pub mpi_s: f64,
    /// Time in non-blocking probes and in tests that completed nothing: waiting by polling,
    /// which is none of the six wait states ([`Polling`]); `None` only in reports that did
    /// not measure it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polling: Option<Polling>,
    /// Where the trace came from.
    pub source: String,
    /// The selection applied (times absolute).
    pub selection: Selection,
}

impl WaitsReport {
    /// The pairs with the largest late-sender waits, at most `n`, largest first (then by
    /// sender, receiver); pairs with late-receiver time only are left out.
    pub fn top_pairs(&self, n: usize) -> Vec<PairWait> {
        let mut pairs: Vec<PairWait> = self
            .report
            .by_pair
            .iter()
            .filter(|p| p.late_sender_s > 0.0)
            .copied()
            .collect();
        pairs.sort_by(|a, b| {
            b.late_sender_s
                .total_cmp(&a.late_sender_s)
                .then((a.sender, a.receiver).cmp(&(b.sender, b.receiver)))
        });
        pairs.truncate(n);
        pairs
    }
}

impl Engine {
    /// The wait states of the part of the trace `selection` keeps (messages matched again on
    /// it, as every use case of a selection).
    pub fn waits(&self, selection: &Selection) -> Result<WaitsReport> {
        let scope = self.scope(selection)?;
        let trace = scope.trace();
        let (matching, sequence) = scope.pairing();
        let report = wait_states_paired(trace, matching, sequence);
        let mpi_ns: u64 = trace.ranks.iter().flat_map(|r| r.calls.duration.iter()).sum();
        Ok(WaitsReport {
            report,
            ranks: trace.num_ranks(),
            mpi_s: mpi_ns as f64 * 1e-9,
            polling: Some(polling(trace)),
            source: trace.source.clone(),
            selection: scope.selection,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::sample_engine;
    use tracelogic_analysis::waits::wait_states;
    use tracelogic_model::Selection;

    #[test]
    fn wait_states_are_the_analysis_of_the_same_selection() {
        let engine = sample_engine("npb-lu.S.8");
        let whole = engine.waits(&Selection::all()).unwrap();
        assert_eq!(whole.report, wait_states(engine.trace(), &Selection::all()));
        // LU's pipeline waits for its upstream neighbours: late senders are there.
        assert!(whole.report.totals.late_sender_s > 0.0);
        assert!(whole.report.totals.total_s() <= whole.mpi_s);
        let ranks: f64 = whole.report.by_rank.iter().map(|r| r.waits.late_sender_s).sum();
        assert!((ranks - whole.report.totals.late_sender_s).abs() < 1e-9);

        let part = Selection {
            ranks: Some(vec![0, 1, 2, 3]),
            ..Selection::default()
        };
        let selected = engine.waits(&part).unwrap();
        let absolute = engine.absolute(&part).unwrap();
        assert_eq!(selected.report, wait_states(engine.trace(), &absolute));
        // Only messages among ranks 0-3 remain: every pair is inside the selection.
        assert!(!selected.report.by_pair.is_empty());
        assert!(selected.report.by_pair.iter().all(|p| p.sender < 4 && p.receiver < 4));
        assert!(selected.report.by_rank[4..].iter().all(|r| r.waits.total_s() == 0.0));
        let top = whole.top_pairs(3);
        assert_eq!(top.len(), 3);
        let largest = whole.report.by_pair.iter().map(|p| p.late_sender_s).fold(0.0, f64::max);
        assert_eq!(top[0].late_sender_s, largest);
        assert!(top[0].late_sender_s >= top[1].late_sender_s && top[1].late_sender_s >= top[2].late_sender_s);
    }
}
