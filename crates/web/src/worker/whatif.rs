//! The what-if in a pool of helper workers ([`crate::whatif_pool`]): the page's worker starts
//! the pool, traverses and merges; each helper executes its share of the configurations.

use super::*;
use crate::whatif_pool::{PoolWhatIf, Step};
use tracelogic_analysis::replay::Configuration;
use tracelogic_engine::replay::ShareExecutor;

/// A helper's share of a pooled what-if.
pub(super) struct Share {
    configs: Vec<Configuration>,
    /// Made with the first chunk, which tells the ranks.
    executor: Option<ShareExecutor>,
    /// A chunk did not execute (reported once).
    failed: bool,
}

fn failure(message: String) -> Response {
    Response::Failed(Failure {
        message,
        cancelled: false,
    })
}

impl AnalysisWorker {
    /// Start the what-if `request` of `selection` in a pool of helpers when it is one, the
    /// page allows more than one worker and there is a selection to replay; else give the
    /// request back to be answered here.
    pub(super) fn start_pooled_whatif(
        &mut self,
        scope: &WorkerScope<Self>,
        id: HandlerId,
        seq: u64,
        request: AnalysisRequest,
        selection: Option<Selection>,
    ) -> Result<(), Box<(AnalysisRequest, Option<Selection>)>> {
        let workers = crate::overview_pool::pool_size(self.whatif_workers);
        let (AnalysisRequest::WhatIf { custom }, Some(session), true) = (&request, &self.session, workers > 1) else {
            return Err(Box::new((request, selection)));
        };
        let Ok(replay) = crate::session::replay_request(*custom) else {
            return Err(Box::new((request, selection)));
        };
        let engine = session.engine();
        // An empty selection, or one that does not read, is answered (refused) here.
        if let Some(s) = &selection {
            if *s != Selection::all() && engine.selected_calls(s).map_or(true, |n| n == 0) {
                return Err(Box::new((request, selection)));
            }
        }
        mark("worker starting the what-if's workers");
        match PoolWhatIf::start(
            scope,
            engine,
            id,
            seq,
            request.clone(),
            selection.clone(),
            replay,
            workers,
        ) {
            Some(pool) => {
                // A what-if still under way is superseded: its helpers end with it.
                self.whatif_pool = Some(pool);
                Ok(())
            }
            None => Err(Box::new((request, selection))),
        }
    }

    /// Helper `index` of the pooled what-if answered: traverse once every helper is ready,
    /// answer the page once every share is in, replay alone if a helper failed.
    pub(super) fn whatif_arrived(&mut self, scope: &WorkerScope<Self>, index: usize, response: Response) {
        let Some(pool) = self.whatif_pool.as_mut() else {
            return;
        };
        let (id, seq) = (pool.id, pool.seq);
        PANIC_TARGET.with(|t| *t.borrow_mut() = Some((scope.clone(), id)));
        arm_fatal(Some(id));
        let answer = match pool.arrived(index, response) {
            Step::Wait => return,
            Step::Traverse => match &self.session {
                Some(session) => {
                    // The traversal reports the replay's progress as the one worker's does; the
                    // helpers then finish their shares (not counted: each runs on its own).
                    let traversed =
                        tracelogic_engine::progress::watch(working_reporter(scope.clone(), id, seq), || {
                            pool.traverse(session.engine())
                        });
                    if traversed.is_err() {
                        None
                    } else {
                        let stage = format!("the what-if's {} workers finishing their shares", pool.workers());
                        let waiting = WorkingReport {
                            seq,
                            stage,
                            done: 0,
                            total: 0,
                        };
                        scope.respond(id, Response::Working(waiting));
                        return;
                    }
                }
                None => None,
            },
            Step::Answer(answer) => Some(*answer),
            Step::Alone => None,
        };
        let Some(pool) = self.whatif_pool.take() else {
            return;
        };
        let response = match answer {
            Some(answer) => {
                // For the browser tests: the pool that answered.
                let workers = JsValue::from_f64(pool.workers() as f64);
                let _ = js_sys::Reflect::set(&js_sys::global(), &"__tracelogicWhatIfPool".into(), &workers);
                Response::Analysis(Box::new(AnalysisAnswer { seq, answer }))
            }
            None => {
                mark("worker replaying the what-if alone");
                self.analyse(scope, id, seq, pool.request, pool.selection.as_ref())
            }
        };
        mark("worker answering");
        scope.respond(id, response);
        mark("worker answered");
    }

    /// A helper: keep the share `configs` of a pooled what-if.
    pub(super) fn replay_share(&mut self, configs: Vec<Configuration>) -> Response {
        if configs.is_empty() {
            return failure("a share of a what-if without configurations".into());
        }
        self.share = Some(Share {
            configs,
            executor: None,
            failed: false,
        });
        Response::ReplayReady
    }

    /// A helper: execute the chunk posted beside the message; `None` unless it failed.
    pub(super) fn replay_chunk(&mut self, ranks: u32) -> Option<Response> {
        let chunks = take_posted_block();
        let Some(share) = self.share.as_mut() else {
            return Some(failure("a chunk of a what-if came before its share".into()));
        };
        if share.failed {
            return None;
        }
        let configs = &share.configs;
        let executor = share
            .executor
            .get_or_insert_with(|| ShareExecutor::new(configs, ranks as usize));
        for chunk in &chunks {
            if let Err(e) = executor.run(chunk) {
                share.failed = true;
                return Some(failure(format!("a worker of the what-if: {e}")));
            }
        }
        None
    }

    /// A helper: every chunk is in; answer the share's final clocks.
    pub(super) fn replay_end(&mut self, ranks: u32) -> Response {
        match self.share.take() {
            Some(Share {
                configs,
                executor,
                failed: false,
            }) => Response::ReplayState(
                executor
                    .unwrap_or_else(|| ShareExecutor::new(&configs, ranks as usize))
                    .into_state(),
            ),
            Some(_) => failure("a worker of the what-if failed".into()),
            None => failure("the end of a what-if came before its share".into()),
        }
    }
}
