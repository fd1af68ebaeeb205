//! What is in a trace: ranks, calls by kind, bytes, duration, communicators, unmatched messages.

use crate::Engine;
use tracelogic_analysis::summary::summarize;
pub use tracelogic_analysis::summary::{CommunicatorInfo, Summary};

impl Engine {
    /// The overview of the whole trace held (`tracelogic summary`, the page's summary view).
    pub fn summary(&self) -> Summary {
        summarize(self.trace(), self.matching())
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::sample_engine;

    #[test]
    fn lu_summary_counts_every_call_once() {
        let engine = sample_engine("npb-lu.S.8");
        let s = engine.summary();
        assert_eq!((s.format.as_str(), s.ranks), ("dumpi", 8));
        assert_eq!(s.calls, s.calls_per_rank.iter().sum::<u64>());
        assert_eq!(s.calls, engine.trace().num_calls());
        assert_eq!(s.matched_messages, engine.matching().messages.len() as u64);
    }
}
