//! What-if replay (thesis ch. 6, Dimemas-style): the run's time predicted under other networks,
//! and what bounds it (computation, latency, bandwidth).

use crate::{Engine, Error, Result};
use serde::{Deserialize, Serialize};
use std::ops::Range;
pub use tracelogic_analysis::replay::pooled::ShareExecutor;
use tracelogic_analysis::replay::pooled::{what_if_shares, WhatIfTraversal};
use tracelogic_analysis::replay::{dropped_calls, what_if_restricted, Configuration};
pub use tracelogic_analysis::replay::{
    parse_scales, waiting_note, DroppedCalls, MessageTable, Network, Sweep, WhatIf, WhatIfOptions, MAX_CONFIGURATIONS,
    SEED_SCALES,
};
use tracelogic_model::Selection;

/// The networks and scales of a replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayRequest {
    /// Networks to predict for and classify on (empty: the presets).
    pub networks: Vec<Network>,
    /// Speed-up factors of the scaled set and the two sweeps (empty: [`SEED_SCALES`]).
    pub scales: Vec<f64>,
    /// Measured message times replacing Hockney's model; its network is added first and taken
    /// as the recording machine's.
    pub table: Option<MessageTable>,
    /// Network closest to the machine that recorded the trace (default: the first one).
    pub recorded_on: Option<String>,
    /// Keep each rank's breakdown.
    pub per_rank: bool,
}

impl Default for ReplayRequest {
    /// The presets at the seed scales, per-rank breakdowns kept (the page's what-if view).
    fn default() -> ReplayRequest {
        ReplayRequest {
            networks: Vec::new(),
            scales: Vec::new(),
            table: None,
            recorded_on: None,
            per_rank: true,
        }
    }
}

impl ReplayRequest {
    /// The presets plus a custom network of `latency_us` microseconds and `gbps` Gb/s.
    pub fn with_custom(latency_us: f64, gbps: f64) -> Result<ReplayRequest> {
        if !(latency_us.is_finite() && latency_us >= 0.0 && gbps.is_finite() && gbps > 0.0) {
            return Err(Error::Input(format!(
                "custom network: latency must be ≥ 0 µs and bandwidth > 0 Gb/s (got {latency_us} µs, {gbps} Gb/s)"
            )));
        }
        let mut networks = Network::presets();
        networks.push(Network {
            name: "custom".into(),
            latency_s: latency_us * 1e-6,
            bandwidth_bytes_per_s: gbps * 1e9 / 8.0,
        });
        Ok(ReplayRequest {
            networks,
            ..ReplayRequest::default()
        })
    }

    /// The replay's options, checked: at most [`MAX_CONFIGURATIONS`] configurations, and
    /// `recorded_on` one of the networks. Shells may check a request before reading a trace.
    pub fn options(&self) -> Result<WhatIfOptions> {
        let mut networks = if self.networks.is_empty() {
            Network::presets()
        } else {
            self.networks.clone()
        };
        if let Some(t) = &self.table {
            networks.insert(0, t.network());
        }
        let scales = if self.scales.is_empty() {
            SEED_SCALES.to_vec()
        } else {
            self.scales.clone()
        };
        let per_network = 1 + 3 * scales.iter().filter(|&&s| (s - 1.0).abs() > 1e-12).count();
        if networks.len() * per_network > MAX_CONFIGURATIONS {
            return Err(Error::Input(format!(
                "{} networks × {per_network} configurations each exceed the {MAX_CONFIGURATIONS} one replay holds",
                networks.len()
            )));
        }
        if let Some(name) = &self.recorded_on {
            if !networks.iter().any(|n| &n.name == name) {
                let known: Vec<&str> = networks.iter().map(|n| n.name.as_str()).collect();
                return Err(Error::Input(format!(
                    "--recorded-on: no network `{name}` among {}",
                    known.join(", ")
                )));
            }
        }
        Ok(WhatIfOptions {
            table: self.table.clone(),
            recorded_on: self.recorded_on.clone(),
            per_rank: self.per_rank,
            ..WhatIfOptions::new(networks, scales)
        })
    }
}

/// A replay of a selection (`tracelogic replay`, the page's what-if view).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// The predictions, breakdowns and classification.
    pub report: WhatIf,
    /// The selection replayed (times absolute).
    pub selection: Selection,
    /// Where the trace came from.
    pub source: String,
}

impl ReplayReport {
    /// Why there is nothing to show, when the selection has no call to replay.
    pub fn nothing_found(&self) -> Option<String> {
        (self.report.calls == 0).then(|| {
            let what = if self.selection == Selection::all() {
                "the trace"
            } else {
                "the selection"
            };
            format!("{}: {what} has no MPI calls to replay", self.source)
        })
    }
}

impl Engine {
    /// Replay `selection` under `request`'s networks. What the selection dropped keeps its
    /// recorded time (the "not replayed" term) instead of turning into computation
    /// (docs/replay.md §1).
    pub fn replay(&self, selection: &Selection, request: &ReplayRequest) -> Result<ReplayReport> {
        let options = request.options()?;
        let scope = self.scope(selection)?;
        let dropped = if scope.is_whole() {
            DroppedCalls::default()
        } else {
            dropped_calls(self.trace(), scope.trace()).map_err(|e| Error::Input(e.to_string()))?
        };
        let report = what_if_restricted(scope.trace(), &dropped, scope.matching(), &options)
            .map_err(|e| Error::Input(e.to_string()))?;
        Ok(ReplayReport {
            report,
            source: scope.trace().source.clone(),
            selection: scope.selection,
        })
    }
}

/// A replay whose configurations are executed elsewhere, in shares (the page's pool of
/// workers, which share no memory): [`Engine::replay_shares`] gives each executor its share,
/// [`Engine::replay_streamed`] traverses the selection once and streams the instructions every
/// executor runs ([`ShareExecutor`]), and [`StreamedReplay::finish`] makes of the shares' final
/// states the report [`Engine::replay`] gives, bit for bit.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamedReplay {
    traversal: WhatIfTraversal,
    shares: Vec<Range<usize>>,
    selection: Selection,
    source: String,
}

impl StreamedReplay {
    /// The report, from each share's final state ([`ShareExecutor::into_state`]) in order.
    pub fn finish(self, states: &[Vec<f64>]) -> Result<ReplayReport> {
        let report = self
            .traversal
            .finish(&self.shares, states)
            .map_err(|e| Error::Input(format!("{}: {e}", self.source)))?;
        Ok(ReplayReport {
            report,
            selection: self.selection,
            source: self.source,
        })
    }
}

impl Engine {
    /// The configurations of `request` in the shares `executors` executors replay (fewer when
    /// there are few configurations), in order.
    pub fn replay_shares(&self, request: &ReplayRequest, executors: usize) -> Result<Vec<Vec<Configuration>>> {
        let (configs, shares) =
            what_if_shares(&request.options()?, executors).map_err(|e| Error::Input(e.to_string()))?;
        Ok(shares.into_iter().map(|s| configs[s].to_vec()).collect())
    }

    /// Traverse `selection` for `request`, handing `hand` the ranks replayed and each chunk of
    /// encoded instructions, in order, for every one of the executors of
    /// [`Engine::replay_shares`] with the same `executors`.
    pub fn replay_streamed(
        &self,
        selection: &Selection,
        request: &ReplayRequest,
        executors: usize,
        hand: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<StreamedReplay> {
        let options = request.options()?;
        let (_, shares) = what_if_shares(&options, executors).map_err(|e| Error::Input(e.to_string()))?;
        let scope = self.scope(selection)?;
        let dropped = if scope.is_whole() {
            DroppedCalls::default()
        } else {
            dropped_calls(self.trace(), scope.trace()).map_err(|e| Error::Input(e.to_string()))?
        };
        let ranks = scope.trace().ranks.len();
        let traversal = WhatIfTraversal::new(scope.trace(), &dropped, scope.matching(), &options, &mut |bytes| {
            hand(ranks, bytes)
        })
        .map_err(|e| Error::Input(e.to_string()))?;
        Ok(StreamedReplay {
            traversal,
            shares,
            source: scope.trace().source.clone(),
            selection: scope.selection,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_engine;

    #[test]
    fn the_custom_network_is_added_and_nonsense_refused() {
        let e = sample_engine("npb-mg.S.8");
        let base = e.replay(&Selection::all(), &ReplayRequest::default()).unwrap().report;
        let names: Vec<&str> = base.classification.iter().map(|c| c.network.as_str()).collect();
        let presets: Vec<String> = Network::presets().into_iter().map(|n| n.name).collect();
        assert_eq!(names, presets);
        let custom = e
            .replay(&Selection::all(), &ReplayRequest::with_custom(20.0, 10.0).unwrap())
            .unwrap()
            .report;
        assert_eq!(custom.classification.last().unwrap().network, "custom");
        let c = custom
            .configurations
            .iter()
            .find(|c| c.configuration.network == "custom")
            .unwrap();
        assert!((c.configuration.latency_s - 20e-6).abs() < 1e-15);
        assert!((c.configuration.bandwidth_bytes_per_s - 1.25e9).abs() < 1e-3);
        assert!(ReplayRequest::with_custom(1.0, 0.0).is_err());
        let bad = ReplayRequest {
            recorded_on: Some("Myrinet".into()),
            ..ReplayRequest::default()
        };
        let m = bad.options().unwrap_err().to_string();
        assert!(m.contains("Myrinet") && m.contains("10GbE"), "{m}");
    }

    /// The page's pooled what-if: two and three executors fed the streamed bytes give the report
    /// of one replay, whole and for a selection.
    #[test]
    fn a_streamed_replay_in_shares_is_the_replay() {
        let e = sample_engine("npb-mg.S.8");
        let request = ReplayRequest::with_custom(20.0, 10.0).unwrap();
        let ranks_2_to_5 = Selection {
            ranks: Some(vec![2, 3, 4, 5]),
            ..Selection::default()
        };
        for selection in [Selection::all(), ranks_2_to_5] {
            let one = e.replay(&selection, &request).unwrap();
            for n in [2, 3] {
                let shares = e.replay_shares(&request, n).unwrap();
                assert_eq!(shares.len(), n);
                assert_eq!(
                    shares.iter().map(Vec::len).sum::<usize>(),
                    one.report.configurations.len()
                );
                let mut executors: Vec<Option<ShareExecutor>> = Vec::new();
                executors.resize_with(n, || None);
                let streamed = e
                    .replay_streamed(&selection, &request, n, &mut |ranks, bytes| {
                        for (x, share) in executors.iter_mut().zip(&shares) {
                            x.get_or_insert_with(|| ShareExecutor::new(share, ranks))
                                .run(bytes)
                                .unwrap();
                        }
                    })
                    .unwrap();
                let states: Vec<Vec<f64>> = executors.into_iter().map(|x| x.unwrap().into_state()).collect();
                assert_eq!(streamed.finish(&states).unwrap(), one, "{n} executors");
            }
        }
    }

    #[test]
    fn point_to_point_of_mg_keeps_the_dropped_collectives_out_of_computation() {
        use tracelogic_model::CallKind::*;
        let e = sample_engine("npb-mg.S.8");
        let p2p = Selection {
            kinds: Some(vec![Send, Isend, Recv, Irecv, SendRecv, Completion]),
            ..Selection::default()
        };
        let part = e.replay(&p2p, &ReplayRequest::default()).unwrap();
        let restricted = e.trace().restrict(&p2p);
        let plain = Engine::new(restricted, crate::FieldWords::Labels)
            .replay(&Selection::all(), &ReplayRequest::default())
            .unwrap();
        let base = |w: &WhatIf| w.configurations[0].breakdown;
        // MG's collectives took time: it is "not replayed", and no longer computation.
        assert!(base(&part.report).not_replayed_s > 0.0);
        assert!(base(&part.report).compute_s < base(&plain.report).compute_s);
        assert_eq!(base(&plain.report).not_replayed_s, 0.0);
        // Collectives only: no message replayed, every collective call kept.
        let collectives = Selection {
            kinds: Some(vec![Collective]),
            ..Selection::default()
        };
        let c = e.replay(&collectives, &ReplayRequest::default()).unwrap();
        assert_eq!(c.report.messages, 0);
        let counted: u64 = e.trace().ranks.iter().map(|r| r.collectives.len() as u64).sum();
        assert_eq!(c.report.calls, counted);
        assert_eq!(c.nothing_found(), None);
    }
}
