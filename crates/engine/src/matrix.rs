//! The rank-to-rank communication matrix of a selection and its filtered binary form
//! (Logicalization §4.1).

use crate::{Engine, Result};
use serde::{Deserialize, Serialize};
pub use tracelogic_analysis::matrix::{CommMatrix, Entry, Filtered, Metric, MAX_DENSE_RANKS};
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
        })
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
                            && rt.calls.enter[rt.p2p.post[i] as usize] < start + half
                    })
                    .map(move |i| rt.p2p.bytes[i])
            })
            .sum();
        assert_eq!(r.matrix.total(Metric::Bytes), expected);
        assert_eq!(r.selection, absolute);
        let all = engine.matrix(&Selection::all(), Metric::Bytes, 5.0).unwrap();
        assert!(r.matrix.total(Metric::Bytes) < all.matrix.total(Metric::Bytes));
        assert_eq!(all.matrix.total(Metric::Bytes), engine.summary().p2p_bytes);
    }
}
