//! The whole load of an OTF2 folder of plain files, each rank decoded as soon as its event files
//! are in ([`tracelogic_formats::otf2::StepwiseRead`]): the browser reads the next slices of the
//! files while the worker decodes, where reading every file first left the worker idle during
//! the reads and the decoder idle until the last byte. Each rank's event files are dropped once
//! it is decoded, so the load holds the definitions and a few slices of events, not the folder.
//!
//! Anything else (another format, names given twice, a folder the reader would read in one part,
//! a read that must restart in one part, or an error before the first rank) falls back to the
//! whole read ([`read_handles`] then [`Session::load`]), which gives the answer or the error.

use super::*;
use crate::input::{append, changed, file_buffer, read_blobs, read_slices};
use tracelogic_formats::otf2::{Archive, StepwiseRead};
use tracelogic_formats::FormatError;
use tracelogic_model::Trace;

/// Stage reported while the ranks are read and decoded (a reading stage of the profile's split,
/// `bench/wasm-profile.mjs`).
const STAGE: &str = "reading and decoding the ranks in the worker";

/// A trace decoded by [`load`], for the worker to keep ([`WorkerMessage::Decoded`]).
pub struct Decoded {
    pub(super) id: HandlerId,
    pub(super) label: String,
    pub(super) matrix: MatrixRequest,
    pub(super) trace: Trace,
    pub(super) files: u32,
    pub(super) bytes: u64,
}

/// How a stepwise load ended.
enum Outcome {
    Decoded(Box<Trace>),
    /// Read the files whole instead.
    Whole,
    Failed(FormatError),
}

/// Whether the handle set of `names` is loaded stepwise: plain files (no archive) with one OTF2
/// anchor among them, loaded whole by one worker.
pub(super) fn stepwise(names: &[String], streams: bool, plan: &Plan, load_workers: usize) -> bool {
    streams && *plan == Plan::Whole && load_workers <= 1 && !names.iter().any(|n| streamed_by_name(n))
}

/// Load `handles` (named `names`) stepwise for bridge `id`, and tell the worker: the decoded
/// trace ([`WorkerMessage::Decoded`]), or its error, or (when the files are to be read whole)
/// the files read whole ([`WorkerMessage::Fetched`]).
pub(super) fn start(
    scope: &WorkerScope<AnalysisWorker>,
    id: HandlerId,
    job: Job,
    key: u64,
    names: Vec<String>,
    handles: Array,
) {
    let scope = scope.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let Job::Open { label, matrix, options } = job else {
            return;
        };
        let blobs: Vec<web_sys::Blob> = handles.iter().map(|h| h.unchecked_into()).collect();
        let outcome = load(&names, &blobs, &mut reporter(&scope, id)).await;
        let job = Job::Open {
            label: label.clone(),
            matrix: matrix.clone(),
            options,
        };
        let failed = |e: FormatError| Failure {
            message: e.to_string(),
            cancelled: e.cancelled,
        };
        match outcome {
            Outcome::Decoded(trace) => {
                let bytes = blobs.iter().map(|b| b.size() as u64).sum();
                let files = names.len() as u32;
                scope.send_message(WorkerMessage::Decoded(Box::new(Decoded {
                    id,
                    label,
                    matrix,
                    trace: *trace,
                    files,
                    bytes,
                })));
            }
            Outcome::Failed(e) => {
                scope.send_message(WorkerMessage::Fetched(Fetched {
                    id,
                    job,
                    files: Err(failed(e)),
                }));
            }
            Outcome::Whole => {
                RECEIVED.with(|r| r.borrow_mut().insert(key, handles));
                let Job::Open { label, options, .. } = &job else {
                    return;
                };
                let limit = options.full_load_limit;
                let files = read_handles(label, key, &names, limit, &mut reporter(&scope, id)).await;
                scope.send_message(WorkerMessage::Fetched(Fetched { id, job, files }));
            }
        }
    });
}

/// Read the definitions, then every rank's event files in the order the reader takes them,
/// decoding each rank once its files are in while the next slices are read.
async fn load(names: &[String], blobs: &[web_sys::Blob], report: &mut dyn FnMut(ProgressReport) -> bool) -> Outcome {
    let mut seen = std::collections::HashSet::new();
    if !names.iter().all(|n| seen.insert(n.as_str())) {
        return Outcome::Whole;
    }
    let sizes: Vec<u64> = blobs.iter().map(|b| b.size() as u64).collect();
    let bytes_total: u64 = sizes.iter().sum();
    // The definitions, anchor and other small files, read whole first.
    let head_files: Vec<usize> = (0..names.len()).filter(|&i| !names[i].ends_with(".evt")).collect();
    let head_names: Vec<String> = head_files.iter().map(|&i| names[i].clone()).collect();
    let head_blobs: Vec<web_sys::Blob> = head_files.iter().map(|&i| blobs[i].clone()).collect();
    let mut read_before = 0u64;
    let head_bytes = {
        let mut progress = |_: usize, done: u64| {
            read_before = done;
            report(ProgressReport {
                stage: "reading the definitions in the worker".into(),
                bytes_done: done,
                bytes_total,
            })
        };
        match read_blobs(&head_names, &head_blobs, &mut progress).await {
            Ok(b) => b,
            Err(e) if e.cancelled => return Outcome::Failed(e),
            Err(_) => return Outcome::Whole,
        }
    };
    let mut head: Vec<InputFile> = names.iter().map(|n| InputFile::new(n.clone(), Vec::new())).collect();
    for (&i, bytes) in head_files.iter().zip(head_bytes) {
        head[i].bytes = bytes;
    }
    if tracelogic_formats::detect(&head).ok() != Some(tracelogic_formats::Format::Otf2) {
        return Outcome::Whole;
    }
    let Ok(archive) = Archive::open(&head) else {
        return Outcome::Whole;
    };
    let Ok(Some(mut read)) = StepwiseRead::new(&archive, &sizes) else {
        return Outcome::Whole;
    };
    // Every part's event files, in the reader's order, and how many of them end each part.
    let mut order: Vec<usize> = Vec::new();
    let mut part_ends: Vec<usize> = Vec::with_capacity(read.parts());
    for part in 0..read.parts() {
        order.extend(read.event_files(part));
        part_ends.push(order.len());
    }
    let order_names: Vec<String> = order.iter().map(|&i| names[i].clone()).collect();
    let order_blobs: Vec<web_sys::Blob> = order.iter().map(|&i| blobs[i].clone()).collect();
    // The event files of the part being filled, by position in `order`.
    let mut filling: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut next_part = 0usize;
    let mut done = read_before;
    let mut decode_failed: Option<FormatError> = None;
    let mut on_part = |chunk: &crate::input::Chunk, array: &js_sys::Uint8Array| -> Result<(), FormatError> {
        let file = chunk.file;
        let name = &order_names[file];
        if filling.last().is_none_or(|(f, _)| *f != file) {
            filling.push((file, file_buffer(name, order_blobs[file].size() as u64)?));
        }
        let buffer = &mut filling.last_mut().expect("the file being filled").1;
        if !append(buffer, array) {
            return Err(changed(name, chunk, array.length()));
        }
        done += chunk.end - chunk.start;
        if !report(ProgressReport {
            stage: STAGE.into(),
            bytes_done: done,
            bytes_total,
        }) {
            return Err(FormatError::cancelled(name));
        }
        // Files complete in order: every one before this, and this one once full (an empty
        // file has no chunk). Decode every part whose files are all in.
        let filled = buffer.len() == buffer.capacity();
        let complete = if filled { file + 1 } else { file };
        while next_part < part_ends.len() && part_ends[next_part] <= complete {
            let end = part_ends[next_part];
            let taken = filling.iter().take_while(|(f, _)| *f < end).count();
            let events: Vec<(usize, Vec<u8>)> = filling.drain(..taken).map(|(f, bytes)| (order[f], bytes)).collect();
            if let Err(e) = read.read_next(events, &mut |_| true) {
                decode_failed = Some(e);
                return Err(FormatError::cancelled(name));
            }
            next_part += 1;
        }
        Ok(())
    };
    let read_all = read_slices(&order_names, &order_blobs, &mut on_part).await;
    if let Some(e) = decode_failed {
        return Outcome::Failed(e);
    }
    if let Err(e) = read_all {
        return Outcome::Failed(e);
    }
    // Parts left: their event files were all empty.
    while read.parts_read() < read.parts() {
        let part = read.parts_read();
        let events = read.event_files(part).into_iter().map(|i| (i, Vec::new())).collect();
        if let Err(e) = read.read_next(events, &mut |_| true) {
            return Outcome::Failed(e);
        }
    }
    match read.finish() {
        Ok(Some(trace)) => Outcome::Decoded(Box::new(trace)),
        Ok(None) => Outcome::Whole,
        Err(e) => Outcome::Failed(e),
    }
}
