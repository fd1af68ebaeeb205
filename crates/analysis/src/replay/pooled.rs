//! The what-if replay with its configurations executed elsewhere (the page's pool of workers,
//! which share no memory): [`WhatIfTraversal::new`] traverses the trace once and streams its
//! instructions as bytes; each share of the configurations ([`WhatIfTraversal::shares`]) is
//! executed by a [`ShareExecutor`]; [`WhatIfTraversal::finish`] makes of their final states
//! the report [`super::what_if_restricted`] gives, bit for bit.

pub use super::engine::ShareExecutor;
use super::engine::{self, Traversal};
use super::{assemble, check_configurations, configurations, outside_model_ns, Configuration, DroppedCalls};
use super::{ReplayError, WhatIf, WhatIfOptions};
use std::ops::Range;
use tracelogic_model::{Matching, Rank, Trace};

/// The configurations of `options`, checked as a replay checks them, cut into the shares of
/// `executors` executors (fewer when there are few configurations: at least 4 each).
pub fn what_if_shares(
    options: &WhatIfOptions,
    executors: usize,
) -> Result<(Vec<Configuration>, Vec<Range<usize>>), ReplayError> {
    if options.networks.is_empty() {
        return Err(ReplayError("no network to predict for".into()));
    }
    let configs = configurations(&options.networks, &options.scales);
    check_configurations(&configs)?;
    let shares = engine::shares(configs.len(), executors.max(1));
    Ok((configs, shares))
}

/// A what-if whose trace is traversed, waiting for its shares' final states.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIfTraversal {
    traversal: Traversal,
    outside: f64,
    options: WhatIfOptions,
}

impl WhatIfTraversal {
    /// Traverse `trace` (restricted to a selection that dropped `dropped`) for `options`, handing
    /// the encoded instructions to `hand` in order, each chunk to go to every share's executor.
    pub fn new(
        trace: &Trace,
        dropped: &DroppedCalls,
        matching: &Matching,
        options: &WhatIfOptions,
        hand: &mut dyn FnMut(&[u8]),
    ) -> Result<WhatIfTraversal, ReplayError> {
        what_if_shares(options, 1)?;
        let traversal = engine::traverse(trace, dropped, matching, options.table.as_ref(), hand);
        let outside = outside_model_ns(trace, dropped, 0..trace.ranks.len() as Rank) as f64 * 1e-9;
        Ok(WhatIfTraversal {
            traversal,
            outside,
            options: options.clone(),
        })
    }

    /// Ranks the executors keep clocks for.
    pub fn ranks(&self) -> usize {
        self.traversal.ranks
    }

    /// The report, from the final state of each share's executor in the order of `shares`
    /// ([`what_if_shares`] with the same options).
    pub fn finish(self, shares: &[Range<usize>], states: &[Vec<f64>]) -> Result<WhatIf, ReplayError> {
        let (configs, _) = what_if_shares(&self.options, 1)?;
        let replay = self.traversal.finish(&configs, shares, states, self.options.per_rank)?;
        Ok(assemble(replay, self.outside, &self.options))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{dropped_calls, what_if_restricted, Network, SEED_SCALES};
    use tracelogic_model::{match_messages, CallKind, Selection};

    /// Streamed through bytes to executors of 1, 2 and 5 shares, the what-if of the BT and MG
    /// samples (whole, and MG without its collectives) equals the one-process replay, bit for bit.
    #[test]
    fn streamed_shares_equal_the_replay_in_one_process() {
        for name in ["npb-bt.S.9", "npb-mg.S.8"] {
            let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/data/samples")
                .join(name);
            let trace = tracelogic_formats::read_trace(tracelogic_formats::fs::load_paths(&[dir]).unwrap()).unwrap();
            let p2p = Selection {
                kinds: Some(vec![
                    CallKind::Send,
                    CallKind::Recv,
                    CallKind::Isend,
                    CallKind::Irecv,
                    CallKind::Completion,
                ]),
                ..Selection::all()
            };
            let restricted = trace.restrict(&p2p);
            let dropped = dropped_calls(&trace, &restricted).unwrap();
            let options = WhatIfOptions {
                per_rank: true,
                ..WhatIfOptions::new(Network::presets(), SEED_SCALES.to_vec())
            };
            for (t, d) in [(&trace, DroppedCalls::default()), (&restricted, dropped)] {
                let matching = match_messages(t);
                let whole = what_if_restricted(t, &d, &matching, &options).unwrap();
                for n in [1, 2, 5] {
                    let (configs, shares) = what_if_shares(&options, n).unwrap();
                    assert_eq!(shares.len(), n, "{name}");
                    let mut executors: Vec<ShareExecutor> = shares
                        .iter()
                        .map(|s| ShareExecutor::new(&configs[s.clone()], t.ranks.len()))
                        .collect();
                    let mut chunks = 0;
                    let traversal = WhatIfTraversal::new(t, &d, &matching, &options, &mut |bytes| {
                        chunks += 1;
                        for e in &mut executors {
                            e.run(bytes).unwrap();
                        }
                    })
                    .unwrap();
                    assert!(chunks >= 1);
                    let states: Vec<Vec<f64>> = executors.into_iter().map(ShareExecutor::into_state).collect();
                    assert_eq!(traversal.finish(&shares, &states).unwrap(), whole, "{name}, {n} shares");
                }
            }
        }
    }

    #[test]
    fn states_that_do_not_fit_the_shares_are_refused() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples/npb-mg.S.8");
        let trace = tracelogic_formats::read_trace(tracelogic_formats::fs::load_paths(&[dir]).unwrap()).unwrap();
        let options = WhatIfOptions::new(Network::presets(), SEED_SCALES.to_vec());
        let matching = match_messages(&trace);
        let traversal =
            WhatIfTraversal::new(&trace, &DroppedCalls::default(), &matching, &options, &mut |_| {}).unwrap();
        let (_, shares) = what_if_shares(&options, 2).unwrap();
        let e = traversal
            .clone()
            .finish(&shares, &[vec![0.0; 3], vec![0.0; 3]])
            .unwrap_err();
        assert!(e.0.contains("values for 8 ranks"), "{e}");
        assert!(traversal.finish(&shares[..1], &[Vec::new()]).is_err());
    }
}
