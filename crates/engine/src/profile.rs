//! The time profile of a selection (`docs/profile.md`): time per MPI function with its spread
//! over the ranks, computation per rank, message-size histograms and bytes over time — the
//! summary table of mpiP and of Scalasca's and Vampir's function summaries.

use crate::{Engine, Result};
use serde::{Deserialize, Serialize};
use tracelogic_analysis::profile::profile_trace;
pub use tracelogic_analysis::profile::{
    BytesOverTime, FunctionProfile, MessageSizes, ProfileOptions, ProfileReport, SizeBin,
};
use tracelogic_model::Selection;

/// The profile of a selection (`tracelogic profile`, the page's profile view).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// The profile: `ranks`, `duration_s`, `functions`, `compute_s`, `message_sizes`,
    /// `bytes_over_time` at the top level of the JSON.
    #[serde(flatten)]
    pub report: ProfileReport,
    /// Where the trace came from.
    pub source: String,
    /// The selection applied (times absolute).
    pub selection: Selection,
}

impl Profile {
    /// Why there is nothing to show, when the selection has no MPI call.
    pub fn nothing_found(&self) -> Option<String> {
        self.report.functions.is_empty().then(|| {
            format!(
                "{}: no MPI call to profile in the trace (or in the selection)",
                self.source
            )
        })
    }
}

impl Engine {
    /// The time profile of the part of the trace `selection` keeps ([`Engine::scope`]: the
    /// trace restricted as for every other use case).
    pub fn profile(&self, selection: &Selection, options: &ProfileOptions) -> Result<Profile> {
        let scope = self.scope(selection)?;
        Ok(Profile {
            report: profile_trace(scope.trace(), options),
            source: scope.trace().source.clone(),
            selection: scope.selection,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::sample_engine;
    use tracelogic_analysis::profile::{profile, ProfileOptions};
    use tracelogic_model::{CallKind, Selection};

    #[test]
    fn the_profile_is_the_analysis_of_the_same_selection() {
        let engine = sample_engine("npb-lu.S.8");
        let options = ProfileOptions::default();
        let whole = engine.profile(&Selection::all(), &options).unwrap();
        assert_eq!(whole.report, profile(engine.trace(), &Selection::all(), &options));
        // Every call of the trace is in one function's line.
        let calls: u64 = whole.report.functions.iter().map(|f| f.calls).sum();
        assert_eq!(calls, engine.trace().num_calls());
        assert_eq!(whole.nothing_found(), None);

        let (start, end) = engine.trace().span();
        let part = Selection {
            ranks: Some(vec![0, 1, 2, 3]),
            to: Some((end - start) / 2),
            kinds: Some(vec![
                CallKind::Send,
                CallKind::Recv,
                CallKind::Isend,
                CallKind::Irecv,
                CallKind::Completion,
            ]),
            ..Selection::default()
        };
        let selected = engine.profile(&part, &options).unwrap();
        let absolute = engine.absolute(&part).unwrap();
        assert_eq!(selected.selection, absolute);
        assert_eq!(selected.report, profile(engine.trace(), &absolute, &options));
        // The selection is honoured: only the four ranks call, in the first half, and fewer
        // calls than the whole run.
        let sel_calls: u64 = selected.report.functions.iter().map(|f| f.calls).sum();
        assert!(sel_calls > 0 && sel_calls < calls, "{sel_calls} of {calls}");
        assert!(selected.report.functions.iter().all(|f| f.max_rank < 4));
        assert!(selected.report.compute_s[4..].iter().all(|&c| c == 0.0));
        assert!(!selected.report.functions.iter().any(|f| f.name.contains("Allreduce")));
    }
}
