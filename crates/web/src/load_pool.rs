//! A whole load of a DUMPI or OTF2 trace read by a pool of workers, one block of ranks each, as
//! the native reader reads the per-rank files on threads (docs/large-traces.md, "Every core").
//!
//! The page's worker starts `k` helper workers from the same script, hands each the page's `File`
//! handles and its block ([`block`](crate::overview_pool::block)); each helper reads the
//! definitions and its block's per-rank files and decodes them
//! ([`tracelogic_formats::distributed::read_block_source`]), and answers with its ranks' parts,
//! bincode as the distributed read exchanges them. The page's worker merges the parts in rank
//! order exactly as the distributed and threaded readers do
//! ([`tracelogic_formats::distributed::merge_blocks_source`], which reads the definitions again
//! but no event), then matches, summarises and builds the matrix as a load in one worker does.
//!
//! Cancelling ends the page's worker and its helpers with it; a helper's error (which names the
//! file) fails the load, and the page keeps what it had loaded before (each load runs in a fresh
//! worker).

use crate::overview_pool::block;
use crate::protocol::{Failure, MatrixRequest, ProgressReport, Response};
use crate::worker::{AnalysisWorker, FileSource, HandleCodec, Input, WorkerMessage, LOADER};
use gloo::worker::{HandlerId, Spawnable, WorkerBridge, WorkerScope};
use std::ops::Range;
use tracelogic_model::Rank;

/// The blocks of ranks of a pooled load: about equal rank counts, in rank order.
pub fn blocks(sizes: &[u64], processes: usize) -> Vec<Range<Rank>> {
    (0..processes as u32)
        .map(|p| block(sizes.len() as u32, p, processes as u32))
        .collect()
}

/// Whether the files `names` (plain files, no archive) are a trace whose per-rank files a pool
/// can read apart: an OTF2 archive (an anchor `.otf2` and `.evt` files) or a DUMPI trace (a
/// `.meta` file and `.bin` files), every name once.
pub fn poolable(names: &[String]) -> bool {
    let has = |suffix: &str| names.iter().any(|n| n.to_ascii_lowercase().ends_with(suffix));
    let mut seen = std::collections::HashSet::with_capacity(names.len());
    let unique = names.iter().all(|n| seen.insert(n.as_str()));
    unique && ((has(".otf2") && has(".evt")) || (has(".meta") && has(".bin")))
}

/// A whole load under way in a pool of helper workers.
pub struct PoolLoad {
    /// The page's request this answers.
    pub id: HandlerId,
    label: String,
    key: u64,
    names: Vec<String>,
    /// The page's `File` handles, for the merge (which reads the definitions again).
    handles: js_sys::Array,
    matrix: MatrixRequest,
    parts: Vec<Option<Vec<Vec<u8>>>>,
    done: Vec<u64>,
    heard: Vec<bool>,
    shown: Option<ProgressReport>,
    total: u64,
    helpers: Vec<WorkerBridge<AnalysisWorker>>,
}

/// What the page's worker does with a helper's answer.
pub enum Arrived {
    /// Nothing yet.
    Wait,
    /// Pass this on to the page (progress, or the load's failure).
    Answer(Response),
    /// Every block is in: merge them (the parts, in block order).
    Merge(Vec<Vec<Vec<u8>>>),
}

impl PoolLoad {
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
        matrix: &MatrixRequest,
        workers: usize,
    ) -> PoolLoad {
        crate::worker::offer_handles(key, handles.clone());
        let helpers = (0..workers)
            .map(|i| {
                let scope = scope.clone();
                let bridge = AnalysisWorker::spawner()
                    .encoding::<HandleCodec>()
                    .callback(move |mut response| {
                        // The parts came transferred beside the message: take them now, before
                        // another helper's message is decoded.
                        if let Response::LoadBlock(parts) = &mut response {
                            if parts.is_empty() {
                                *parts = crate::worker::take_posted_block();
                            }
                        }
                        scope.send_message(WorkerMessage::Part { index: i, response })
                    })
                    .spawn_with_loader(LOADER);
                bridge.send(Input::LoadBlock {
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
        PoolLoad {
            id,
            label: label.to_owned(),
            key,
            names: names.to_vec(),
            handles,
            matrix: matrix.clone(),
            parts: (0..workers).map(|_| None).collect(),
            done: vec![0; workers],
            heard: vec![false; workers],
            shown: None,
            total,
            helpers,
        }
    }

    /// Helper `index` answered `response`.
    pub fn arrived(&mut self, index: usize, response: Response) -> Arrived {
        let failed = |message: String| {
            Arrived::Answer(Response::Failed(Failure {
                message,
                cancelled: false,
            }))
        };
        if let Some(h) = self.heard.get_mut(index) {
            if !*h {
                *h = true;
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
                let workers = self.helpers.len();
                let p = ProgressReport {
                    stage: format!("reading the ranks in {workers} workers"),
                    bytes_done: self.done.iter().sum::<u64>().min(self.total),
                    bytes_total: self.total,
                };
                if !crate::worker::worth_reporting(self.shown.as_ref(), &p) {
                    return Arrived::Wait;
                }
                self.shown = Some(p.clone());
                Arrived::Answer(Response::Progress(p))
            }
            Response::LoadBlock(bytes) => {
                if let Some(slot) = self.parts.get_mut(index) {
                    *slot = Some(bytes.into_iter().map(serde_bytes::ByteBuf::into_vec).collect());
                }
                if self.parts.iter().any(Option::is_none) {
                    return Arrived::Wait;
                }
                Arrived::Merge(self.parts.iter_mut().map(|p| p.take().unwrap_or_default()).collect())
            }
            Response::Failed(f) => Arrived::Answer(Response::Failed(Failure {
                message: if f.message.starts_with(&self.label) {
                    f.message
                } else {
                    format!("{}: {}", self.label, f.message)
                },
                cancelled: f.cancelled,
            })),
            other => failed(format!(
                "{}: a worker answered {other:?} instead of its block of the trace",
                self.label
            )),
        }
    }

    /// The load's label, handle set, file names, handles and matrix request (for the merge).
    pub fn into_parts(self) -> (String, u64, Vec<String>, js_sys::Array, MatrixRequest) {
        (self.label, self.key, self.names, self.handles, self.matrix)
    }

    /// The handle set this load reads.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Number of helpers.
    pub fn workers(&self) -> usize {
        self.helpers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_dumpi_and_otf2_traces_are_pooled() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(poolable(&names(&["t/a.meta", "t/a-0000.bin", "t/a-0001.bin"])));
        assert!(poolable(&names(&[
            "t/traces.otf2",
            "t/traces.def",
            "t/traces/0.evt",
            "t/traces/0.def"
        ])));
        assert!(!poolable(&names(&["t/x.prv", "t/x.pcf", "t/x.row"])));
        assert!(!poolable(&names(&["t/a.meta", "t/a-0000.bin", "t/a-0000.bin"])));
        assert!(!poolable(&names(&["t/a.meta"])));
    }

    #[test]
    fn blocks_cover_every_rank_in_order() {
        let b = blocks(&[5; 7], 3);
        assert_eq!(b, vec![0..2, 2..4, 4..7]);
    }
}
