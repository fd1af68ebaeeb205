//! The analysis worker: a `gloo-worker` around [`Session`] that keeps the loaded trace and
//! answers the page's [`Request`]s with [`Response`]s.
//!
//! Each load runs in a fresh worker (the page keeps the previous one until the new trace is
//! in), so a failed or cancelled load never loses the trace already shown.

use crate::protocol::{AnalysisAnswer, Failure, ProgressReport, Request, Response};
use crate::session::Session;
use gloo::worker::{HandlerId, Worker, WorkerScope};
use std::cell::RefCell;

/// Relative URL of the worker's loader script in the built site.
pub const LOADER: &str = "./worker_loader.js";

/// The worker: holds at most one trace.
pub struct AnalysisWorker {
    session: Option<Session>,
}

thread_local! {
    /// Where a panic is reported: the scope and the bridge whose request was running.
    static PANIC_TARGET: RefCell<Option<(WorkerScope<AnalysisWorker>, HandlerId)>> = const { RefCell::new(None) };
}

/// Report panics to the page as a failed request, so a bug in a reader or an analysis shows
/// up as a message rather than a worker that silently stops answering.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = format!("internal error in the analysis worker: {info}");
        PANIC_TARGET.with(|t| {
            if let Ok(t) = t.try_borrow() {
                if let Some((scope, id)) = t.as_ref() {
                    scope.respond(
                        *id,
                        Response::Failed(Failure {
                            message,
                            cancelled: false,
                        }),
                    );
                }
            }
        });
    }));
}

/// Whether a progress report is worth sending: a new stage, or at least 1 % more bytes.
pub fn worth_reporting(last: Option<&ProgressReport>, next: &ProgressReport) -> bool {
    match last {
        None => true,
        Some(l) => {
            l.stage != next.stage
                || next.bytes_done.saturating_sub(l.bytes_done) >= (next.bytes_total / 100).max(1)
                || (next.bytes_done == next.bytes_total && l.bytes_done != next.bytes_done)
        }
    }
}

impl Worker for AnalysisWorker {
    type Message = ();
    type Input = Request;
    type Output = Response;

    fn create(_scope: &WorkerScope<Self>) -> Self {
        install_panic_hook();
        AnalysisWorker { session: None }
    }

    fn update(&mut self, _scope: &WorkerScope<Self>, _msg: Self::Message) {}

    fn received(&mut self, scope: &WorkerScope<Self>, msg: Self::Input, id: HandlerId) {
        PANIC_TARGET.with(|t| *t.borrow_mut() = Some((scope.clone(), id)));
        let answer = match msg {
            Request::Load { label, files, matrix } => {
                let mut last: Option<ProgressReport> = None;
                let mut report = |p: ProgressReport| {
                    if worth_reporting(last.as_ref(), &p) {
                        scope.respond(id, Response::Progress(p.clone()));
                        last = Some(p);
                    }
                    true
                };
                match Session::load(&label, files, &matrix, &mut report) {
                    Ok(loaded) => {
                        self.session = Some(loaded.session);
                        Response::Loaded {
                            trace: Box::new(loaded.trace),
                            matrix: Box::new(loaded.matrix),
                        }
                    }
                    Err(f) => Response::Failed(f),
                }
            }
            Request::Analyse { seq, request } => match &self.session {
                Some(s) => Response::Analysis(Box::new(AnalysisAnswer {
                    seq,
                    kind: request.kind().to_owned(),
                    result: s.analyse(&request),
                })),
                None => Response::Failed(Failure {
                    message: "no trace is loaded".into(),
                    cancelled: false,
                }),
            },
            Request::Matrix { seq, request } => match &self.session {
                Some(s) => Response::Matrix(Box::new(s.matrix(seq, &request))),
                None => Response::Failed(Failure {
                    message: "no trace is loaded".into(),
                    cancelled: false,
                }),
            },
        };
        scope.respond(id, answer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(stage: &str, done: u64) -> ProgressReport {
        ProgressReport {
            stage: stage.into(),
            bytes_done: done,
            bytes_total: 1000,
        }
    }

    #[test]
    fn progress_is_throttled_to_stages_and_percent_steps() {
        assert!(worth_reporting(None, &p("reading", 0)));
        assert!(!worth_reporting(Some(&p("reading", 0)), &p("reading", 5)));
        assert!(worth_reporting(Some(&p("reading", 0)), &p("reading", 10)));
        assert!(worth_reporting(Some(&p("reading", 5)), &p("matching", 5)));
        assert!(worth_reporting(Some(&p("reading", 995)), &p("reading", 1000)));
        assert!(!worth_reporting(Some(&p("reading", 1000)), &p("reading", 1000)));
    }
}
