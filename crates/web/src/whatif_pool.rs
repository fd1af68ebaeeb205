//! The what-if replay spread over a pool of helper workers, as the native replay spreads its
//! configurations over threads (docs/replay.md §7).
//!
//! The page's worker, which holds the trace, starts `k` helpers from the same script and hands
//! each its share of the configurations ([`Input::ReplayShare`]); once every helper has started
//! and answered, it traverses the selection once ([`Engine::replay_streamed`]) and posts each
//! chunk of encoded instructions to every helper ([`Input::ReplayChunk`], the bytes beside the
//! message: [`offer_chunk`]); each helper executes them over its share
//! ([`tracelogic_engine::replay::ShareExecutor`]) and answers its final clocks
//! ([`Response::ReplayState`]), which the page's worker merges in order into the report one
//! worker gives, bit for bit.
//!
//! A helper that fails (or cannot start) makes the page's worker replay alone, as it does on one
//! core. The helpers end with the pool, or with the page's worker when a new load replaces it.

use crate::protocol::{AnalysisRequest, Answer, Response};
use crate::worker::{offer_chunk, AnalysisWorker, HandleCodec, Input, WorkerMessage, LOADER};
use gloo::worker::{HandlerId, Spawnable, WorkerBridge, WorkerScope};
use tracelogic_engine::replay::{ReplayRequest, StreamedReplay};
use tracelogic_engine::Engine;
use tracelogic_model::Selection;

/// A what-if under way in a pool of helper workers.
pub struct PoolWhatIf {
    /// The page's request this answers.
    pub id: HandlerId,
    /// Its sequence number.
    pub seq: u64,
    /// The analysis asked for, to replay alone if the pool fails.
    pub request: AnalysisRequest,
    /// The selection it replays.
    pub selection: Option<Selection>,
    replay: ReplayRequest,
    helpers: Vec<WorkerBridge<AnalysisWorker>>,
    ready: Vec<bool>,
    streamed: Option<StreamedReplay>,
    states: Vec<Option<Vec<f64>>>,
}

/// What the page's worker does after a helper's answer.
pub enum Step {
    /// Nothing yet.
    Wait,
    /// Every helper is ready: traverse ([`PoolWhatIf::traverse`]).
    Traverse,
    /// The report (or its error) to answer with.
    Answer(Box<Result<Answer, String>>),
    /// A helper failed: replay in this worker alone.
    Alone,
}

impl PoolWhatIf {
    /// Start one helper per share of the configurations of `replay` (`engine`'s
    /// [`Engine::replay_shares`] for `workers`); `None` when there would be fewer than two.
    #[allow(clippy::too_many_arguments)] // what the request knows, passed on as it is
    pub fn start(
        scope: &WorkerScope<AnalysisWorker>,
        engine: &Engine,
        id: HandlerId,
        seq: u64,
        request: AnalysisRequest,
        selection: Option<Selection>,
        replay: ReplayRequest,
        workers: usize,
    ) -> Option<PoolWhatIf> {
        let shares = engine.replay_shares(&replay, workers).ok()?;
        if shares.len() < 2 {
            return None;
        }
        let helpers: Vec<_> = shares
            .into_iter()
            .enumerate()
            .map(|(i, configs)| {
                let scope = scope.clone();
                let bridge = AnalysisWorker::spawner()
                    .encoding::<HandleCodec>()
                    .callback(move |response| scope.send_message(WorkerMessage::WhatIf { index: i, response }))
                    .spawn_with_loader(LOADER);
                bridge.send(Input::ReplayShare { configs });
                bridge
            })
            .collect();
        let n = helpers.len();
        Some(PoolWhatIf {
            id,
            seq,
            request,
            selection,
            replay,
            helpers,
            ready: vec![false; n],
            streamed: None,
            states: vec![None; n],
        })
    }

    /// Helper `index` answered `response`.
    pub fn arrived(&mut self, index: usize, response: Response) -> Step {
        match response {
            Response::ReplayReady => {
                if let Some(r) = self.ready.get_mut(index) {
                    *r = true;
                }
                if self.streamed.is_none() && self.ready.iter().all(|&r| r) {
                    Step::Traverse
                } else {
                    Step::Wait
                }
            }
            Response::ReplayState(state) => {
                if let Some(s) = self.states.get_mut(index) {
                    *s = Some(state);
                }
                if self.states.iter().any(Option::is_none) {
                    return Step::Wait;
                }
                let Some(streamed) = self.streamed.take() else {
                    return Step::Alone;
                };
                let states: Vec<Vec<f64>> = self.states.iter_mut().map(|s| s.take().unwrap_or_default()).collect();
                crate::worker::mark("worker merging the what-if's shares");
                Step::Answer(Box::new(
                    streamed
                        .finish(&states)
                        .map(|r| Answer::WhatIf(r.report))
                        .map_err(String::from),
                ))
            }
            // A helper that failed, or answered something else: the pool is no good.
            _ => Step::Alone,
        }
    }

    /// Traverse the selection in `engine`, posting every chunk of instructions to every
    /// helper, then the end; the error when the selection cannot be replayed.
    pub fn traverse(&mut self, engine: &Engine) -> Result<(), String> {
        let selection = self.selection.clone().unwrap_or_else(Selection::all);
        let helpers = &self.helpers;
        let mut replayed = 0;
        crate::worker::mark("worker traversing the what-if");
        let streamed = engine.replay_streamed(&selection, &self.replay, helpers.len(), &mut |ranks, bytes| {
            replayed = ranks;
            offer_chunk(Some(bytes));
            for h in helpers {
                h.send(Input::ReplayChunk { ranks: ranks as u32 });
            }
            offer_chunk(None);
        });
        crate::worker::mark("worker traversed the what-if");
        let streamed = streamed.map_err(String::from)?;
        for h in helpers {
            h.send(Input::ReplayEnd { ranks: replayed as u32 });
        }
        self.streamed = Some(streamed);
        Ok(())
    }

    /// Number of helpers.
    pub fn workers(&self) -> usize {
        self.helpers.len()
    }
}
