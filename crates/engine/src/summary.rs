//! What is in a trace: ranks, calls by kind, bytes, duration, communicators, unmatched messages.

use crate::Engine;
use serde::Serialize;
use tracelogic_analysis::summary::summarize;
pub use tracelogic_analysis::summary::{CommunicatorInfo, Summary};
pub use tracelogic_model::{Bytes, HeapBytes};

/// The heap the trace held takes (`tracelogic summary --memory`).
#[derive(Debug, Clone, Serialize)]
pub struct ModelMemory {
    /// MPI calls of the trace.
    pub calls: u64,
    /// The event model by table ([`tracelogic_model::Trace::heap_bytes`]).
    pub model: HeapBytes,
    /// The matched messages, when they were matched.
    pub matching: Bytes,
    /// Model and matching bytes in use per call.
    pub used_per_call: f64,
    /// Model and matching bytes allocated per call.
    pub allocated_per_call: f64,
}

impl Engine {
    /// The overview of the whole trace held (`tracelogic summary`, the page's summary view).
    pub fn summary(&self) -> Summary {
        summarize(self.trace(), self.matching())
    }

    /// The heap the trace held and its matching (if computed) take, by table.
    pub fn model_memory(&self) -> ModelMemory {
        let model = self.trace().heap_bytes();
        let matching = self
            .matching_if_done()
            .map_or(Bytes::default(), |m| Bytes::of(&m.messages));
        let total = model.total() + matching;
        let calls = self.trace().num_calls();
        let per = |b: u64| if calls == 0 { 0.0 } else { b as f64 / calls as f64 };
        ModelMemory {
            calls,
            model,
            matching,
            used_per_call: per(total.used),
            allocated_per_call: per(total.allocated),
        }
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
