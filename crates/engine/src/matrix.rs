//! The rank-to-rank communication matrix of a selection and its filtered binary form
//! (Logicalization §4.1).

use crate::{Engine, Result};
use serde::{Deserialize, Serialize};
pub use tracelogic_analysis::matrix::{CommMatrix, Entry, Filtered, Metric, MAX_DENSE_RANKS};
pub use tracelogic_analysis::waits::PairWait;
use tracelogic_model::Selection;

/// The matrix of a selection, filtered at a threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixReport {
    /// Source format name.
    pub format: String,
    /// Where the trace came from.
    pub source: String,
    /// Metric the threshold applied to.
    pub metric: Metric,
    /// Threshold in percent of the largest off-diagonal entry.
    pub threshold: f64,
    /// The matrix (sparse: the non-zero entries).
    pub matrix: CommMatrix,
    /// Which entries the threshold kept.
    pub filtered: Filtered,
    /// The selection applied (times absolute, in the trace's clock).
    pub selection: Selection,
    /// The measured waiting per (sender, receiver), when asked for
    /// ([`Engine::matrix_with_waiting`]; `tracelogic matrix --metric waiting`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<WaitingMatrix>,
}

/// The "waiting" metric of the matrix: per (sender, receiver) the late-sender time the receiver
/// spent waiting for the sender plus the late-receiver time the sender's blocking send spent
/// waiting for the receiver (the wait states of `docs/waits.md`, attributed to the pair).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitingMatrix {
    /// Side of the matrix (world ranks).
    pub ranks: u32,
    /// The pairs with some waiting, by sender then receiver.
    pub pairs: Vec<PairWait>,
    /// Sum over the pairs, seconds.
    pub total_s: f64,
}

impl WaitingMatrix {
    /// The waiting seconds from `sender` to `receiver` (0 for a pair without any).
    pub fn value(&self, sender: u32, receiver: u32) -> f64 {
        self.pairs
            .binary_search_by(|p| (p.sender, p.receiver).cmp(&(sender, receiver)))
            .map_or(0.0, |i| self.pairs[i].waiting_s())
    }

    /// Dense rows (`rows[sender][receiver]`, seconds), for displays of small matrices.
    pub fn dense_rows(&self) -> Vec<Vec<f64>> {
        let n = self.ranks as usize;
        let mut rows = vec![vec![0.0; n]; n];
        for p in &self.pairs {
            if let Some(v) = rows
                .get_mut(p.sender as usize)
                .and_then(|r| r.get_mut(p.receiver as usize))
            {
                *v += p.waiting_s();
            }
        }
        rows
    }
}

impl MatrixReport {
    /// Rank pairs with at least one message, self-sends included.
    pub fn nonzero_entries(&self) -> u64 {
        self.matrix.nonzero() as u64
    }

    /// True when the selection has no point-to-point traffic.
    pub fn is_empty(&self) -> bool {
        self.matrix.is_empty()
    }

    /// Why there is nothing to show, when there is nothing.
    pub fn nothing_found(&self) -> Option<&'static str> {
        self.is_empty()
            .then_some("no point-to-point traffic in the trace (or in the selection)")
    }
}

impl Engine {
    /// The matrix of the sends `selection` keeps (both ends selected), filtered on `metric` at
    /// `threshold_pct` percent of the largest off-diagonal entry (`tracelogic matrix`, the
    /// page's matrix view).
    pub fn matrix(&self, selection: &Selection, metric: Metric, threshold_pct: f64) -> Result<MatrixReport> {
        let selection = self.absolute(selection)?;
        let matrix = CommMatrix::from_trace(self.trace(), &selection);
        let filtered = matrix.filter(metric, threshold_pct);
        Ok(MatrixReport {
            format: self.trace().format.clone(),
            source: self.trace().source.clone(),
            metric,
            threshold: filtered.threshold_pct,
            matrix,
            filtered,
            selection,
            waiting: None,
        })
    }

    /// The waiting matrix of the part of the trace `selection` keeps: the pairs of the wait
    /// states ([`Engine::waits`], messages paired as the whole trace recorded them).
    pub fn waiting_matrix(&self, selection: &Selection) -> Result<WaitingMatrix> {
        let w = self.waits(selection)?;
        let pairs: Vec<PairWait> = w.report.by_pair.into_iter().filter(|p| p.waiting_s() > 0.0).collect();
        Ok(WaitingMatrix {
            ranks: w.ranks,
            total_s: pairs.iter().map(PairWait::waiting_s).sum(),
            pairs,
        })
    }

    /// [`Engine::matrix`] with the [`WaitingMatrix`] of the same selection in `waiting`.
    pub fn matrix_with_waiting(
        &self,
        selection: &Selection,
        metric: Metric,
        threshold_pct: f64,
    ) -> Result<MatrixReport> {
        let mut report = self.matrix(selection, metric, threshold_pct)?;
        report.waiting = Some(self.waiting_matrix(selection)?);
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::sample_engine;
    use tracelogic_analysis::matrix::Metric;
    use tracelogic_model::Selection;

    #[test]
    fn matrix_selection_times_are_relative_to_the_first_event() {
        let engine = sample_engine("npb-lu.S.8");
        let (start, end) = engine.trace().span();
        let half = (end - start) / 2;
        let relative = Selection {
            to: Some(half),
            ..Selection::default()
        };
        let r = engine.matrix(&relative, Metric::Bytes, 5.0).unwrap();
        let absolute = Selection {
            to: Some(start + half),
            ..Selection::default()
        };
        // Counted independently: the bytes of the sends posted in the first half.
        let expected: u64 = engine
            .trace()
            .ranks
            .iter()
            .flat_map(|rt| {
                (0..rt.p2p.len())
                    .filter(move |&i| {
                        rt.p2p.dir[i] == tracelogic_model::P2pDir::Send
                            && rt.calls.enter(rt.p2p.post[i] as usize) < start + half
                    })
                    .map(move |i| rt.p2p.bytes.at(i))
            })
            .sum();
        assert_eq!(r.matrix.total(Metric::Bytes), expected);
        assert_eq!(r.selection, absolute);
        let all = engine.matrix(&Selection::all(), Metric::Bytes, 5.0).unwrap();
        assert!(r.matrix.total(Metric::Bytes) < all.matrix.total(Metric::Bytes));
        assert_eq!(all.matrix.total(Metric::Bytes), engine.summary().p2p_bytes);
    }

    /// The waiting matrix is the wait states' pairs: its cells add up to the late-sender plus
    /// late-receiver totals of `waits` (each late receive counted once, at its latest sender;
    /// each late receiver at its receiver), and it rides along the bytes matrix unchanged.
    #[test]
    fn waiting_matrix_adds_up_to_the_point_to_point_wait_states() {
        for name in ["npb-lu.S.8", "npb-mg.S.8", "npb-bt.S.9"] {
            let engine = sample_engine(name);
            let w = engine.waits(&Selection::all()).unwrap();
            let m = engine
                .matrix_with_waiting(&Selection::all(), Metric::Bytes, 5.0)
                .unwrap();
            let waiting = m.waiting.as_ref().unwrap();
            let expected = w.report.totals.late_sender_s + w.report.totals.late_receiver_s;
            assert!((waiting.total_s - expected).abs() < 1e-9 * expected.max(1.0), "{name}");
            let dense: f64 = waiting.dense_rows().iter().flatten().sum();
            assert!((dense - expected).abs() < 1e-9 * expected.max(1.0), "{name}");
            // Only pairs that exchanged messages wait for each other.
            for p in &waiting.pairs {
                assert!(m.matrix.get(p.sender, p.receiver).is_some(), "{name}: {p:?}");
                assert_eq!(waiting.value(p.sender, p.receiver), p.waiting_s());
            }
            let plain = engine.matrix(&Selection::all(), Metric::Bytes, 5.0).unwrap();
            assert_eq!(plain.matrix, m.matrix);
            assert!(plain.waiting.is_none());
        }
    }
}
