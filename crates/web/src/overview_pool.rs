//! The overview of an OTF2 trace computed by a pool of workers, one block of ranks each, as
//! `tracelogic-mpi overview` computes it with processes (docs/large-traces.md).
//!
//! The worker that holds the load (the page's worker) starts `k` helper workers from the same
//! script, hands each the page's `File` handles and its block, and merges their
//! [`OverviewPart`]s in rank order ([`overview_of_stream_parts`]): the serial overview's report,
//! exactly. Each helper streams its ranks one at a time, so memory per worker is that of the
//! serial overview. The page's worker computes no part itself: it stays free to pass the
//! handles to the helpers (a worker's messages go out only once it has started, which the
//! page's worker sees through its own event loop) and to merge.
//!
//! Cancelling the load ends the page's worker, and with it its helpers (a dedicated worker
//! lives as long as its owner).

use crate::protocol::{Failure, OverviewAnswer, ProgressReport, Response};
use crate::worker::{AnalysisWorker, FileSource, HandleCodec, Input, WorkerMessage, LOADER, OVERVIEW_BINS};
use gloo::worker::{HandlerId, Spawnable, WorkerBridge, WorkerScope};
use tracelogic_engine::overview::{overview_of_stream_parts, OverviewPart};

/// Most helper workers an overview starts.
pub const MAX_WORKERS: usize = 16;

/// How many workers compute an overview: `asked` when not 0, else the machine's logical cores
/// (`navigator.hardwareConcurrency`), at most [`MAX_WORKERS`].
pub fn pool_size(asked: u32) -> usize {
    let cores = if asked > 0 {
        asked as usize
    } else {
        hardware_concurrency()
    };
    cores.clamp(1, MAX_WORKERS)
}

#[cfg(target_arch = "wasm32")]
fn hardware_concurrency() -> usize {
    let navigator = js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).ok();
    navigator
        .and_then(|n| js_sys::Reflect::get(&n, &"hardwareConcurrency".into()).ok())
        .and_then(|c| c.as_f64())
        .filter(|c| c.is_finite() && *c >= 1.0)
        .map_or(1, |c| c as usize)
}

#[cfg(not(target_arch = "wasm32"))]
fn hardware_concurrency() -> usize {
    1
}

/// The block of `ranks` ranks of part `part` of `parts`: consecutive blocks, sizes differing by
/// at most one.
pub fn block(ranks: u32, part: u32, parts: u32) -> std::ops::Range<u32> {
    let (n, p, k) = (ranks as u64, part as u64, parts.max(1) as u64);
    (n * p / k) as u32..(n * (p + 1) / k) as u32
}

/// An overview under way in a pool of helper workers.
pub struct PoolOverview {
    /// The page's request this answers.
    pub id: HandlerId,
    label: String,
    files: u32,
    key: u64,
    parts: Vec<Option<OverviewPart>>,
    /// Bytes read so far by each helper, and in all.
    done: Vec<u64>,
    /// Helpers that have answered at least once, so have their message and the handles.
    heard: Vec<bool>,
    /// The progress last passed on to the page.
    shown: Option<ProgressReport>,
    total: u64,
    helpers: Vec<WorkerBridge<AnalysisWorker>>,
}

impl PoolOverview {
    /// Start `workers` helpers on the page's handle set `key` (`names`), each on its block of
    /// ranks; their answers come back as [`WorkerMessage::Part`] through `scope`.
    #[allow(clippy::too_many_arguments)] // what the load knows, passed on as it is
    pub fn start(
        scope: &WorkerScope<AnalysisWorker>,
        id: HandlerId,
        label: &str,
        key: u64,
        names: &[String],
        handles: js_sys::Array,
        total: u64,
        workers: usize,
    ) -> PoolOverview {
        // The handles go with every message this worker posts until the merge.
        crate::worker::offer_handles(key, handles);
        let helpers = (0..workers)
            .map(|i| {
                let scope = scope.clone();
                let bridge = AnalysisWorker::spawner()
                    .encoding::<HandleCodec>()
                    .callback(move |response| scope.send_message(WorkerMessage::Part { index: i, response }))
                    .spawn_with_loader(LOADER);
                bridge.send(Input::OverviewPart {
                    source: FileSource::Handles {
                        key,
                        names: names.to_vec(),
                    },
                    part: i as u32,
                    parts: workers as u32,
                });
                bridge
            })
            .collect();
        PoolOverview {
            id,
            label: label.to_owned(),
            files: names.len() as u32,
            key,
            parts: (0..workers).map(|_| None).collect(),
            done: vec![0; workers],
            heard: vec![false; workers],
            shown: None,
            total,
            helpers,
        }
    }

    /// Helper `index` answered `response`: the progress to show or the page's answer once every
    /// part is in (or one failed); `None` while waiting.
    pub fn arrived(&mut self, index: usize, response: Response) -> Option<Response> {
        let failed = |message: String| {
            Some(Response::Failed(Failure {
                message,
                cancelled: false,
            }))
        };
        if let Some(h) = self.heard.get_mut(index) {
            if !*h {
                *h = true;
                // Every helper has its message: the handles need not go with this worker's
                // messages any more (each message to the page would clone them all again).
                if self.heard.iter().all(|&h| h) {
                    crate::worker::release_handles(self.key);
                }
            }
        }
        match response {
            Response::Progress(p) => {
                if let Some(d) = self.done.get_mut(index) {
                    *d = p.bytes_done;
                }
                if !self.heard.iter().all(|&h| h) {
                    return None;
                }
                let workers = self.helpers.len();
                let p = ProgressReport {
                    stage: format!("reading the ranks in {workers} workers"),
                    bytes_done: self.done.iter().sum(),
                    bytes_total: self.total,
                };
                if !crate::worker::worth_reporting(self.shown.as_ref(), &p) {
                    return None;
                }
                self.shown = Some(p.clone());
                Some(Response::Progress(p))
            }
            Response::OverviewPart(bytes) => {
                let part = match bincode::deserialize::<OverviewPart>(&bytes) {
                    Ok(p) => p,
                    Err(e) => return failed(format!("{}: a worker's part does not decode: {e}", self.label)),
                };
                if let Some(slot) = self.parts.get_mut(index) {
                    *slot = Some(part);
                }
                if self.parts.iter().any(Option::is_none) {
                    return None;
                }
                let parts = self.parts.iter_mut().map(|p| p.take().expect("every part is in"));
                Some(match overview_of_stream_parts(parts) {
                    Ok(report) => {
                        let mut answer = OverviewAnswer::new(&self.label, self.files, report);
                        answer.worker_memory_bytes = crate::worker::record_memory();
                        answer.workers = self.helpers.len() as u32;
                        Response::Overview(Box::new(answer))
                    }
                    Err(e) => {
                        return failed(format!(
                            "{}: the workers' parts do not make one overview: {e}",
                            self.label
                        ))
                    }
                })
            }
            Response::Failed(f) => Some(Response::Failed(f)),
            other => failed(format!(
                "{}: a worker answered {other:?} instead of its part of the overview",
                self.label
            )),
        }
    }

    /// The handle set this overview reads.
    pub fn key(&self) -> u64 {
        self.key
    }
}

/// A helper's answer to [`Input::OverviewPart`]: the part of the ranks `block(.., part,
/// parts)` of the trace the files give, streamed one rank at a time, as bincode.
pub fn part_answer(
    source: &mut dyn tracelogic_formats::stream::FileSource,
    part: u32,
    parts: u32,
    progress: &mut dyn tracelogic_formats::ProgressSink,
) -> Response {
    let owned = move |ranks: u32| block(ranks, part, parts);
    match tracelogic_engine::overview::overview_part(source, OVERVIEW_BINS, &owned, progress) {
        Ok(p) => match bincode::serialize(&p) {
            Ok(bytes) => Response::OverviewPart(bytes),
            Err(e) => Response::Failed(Failure {
                message: format!("a part of the overview does not encode: {e}"),
                cancelled: false,
            }),
        },
        Err(e) => Response::Failed(Failure {
            message: e.to_string(),
            cancelled: e.cancelled,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_every_rank_once_in_order() {
        for ranks in [0u32, 1, 5, 16, 4096] {
            for parts in 1..=9u32 {
                let blocks: Vec<_> = (0..parts).map(|p| block(ranks, p, parts)).collect();
                assert_eq!(blocks[0].start, 0);
                assert_eq!(blocks.last().unwrap().end, ranks);
                for w in blocks.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                }
                let sizes: Vec<u32> = blocks.iter().map(|b| b.end - b.start).collect();
                assert!(
                    sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1,
                    "{sizes:?}"
                );
            }
        }
    }

    #[test]
    fn the_pool_size_is_what_was_asked_within_bounds() {
        assert_eq!(pool_size(3), 3);
        assert_eq!(pool_size(100), MAX_WORKERS);
        assert_eq!(pool_size(0), 1, "off the browser the machine's cores are unknown");
    }
}
