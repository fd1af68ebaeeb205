//! The analysis worker: a `gloo-worker` around [`Session`] that keeps the loaded trace and
//! answers the page's typed requests with typed [`Response`]s (one engine call each).
//!
//! The worker, not the page, reads the input: the page hands it `File` handles (structured
//! clones, no bytes copied; see [`HandleCodec`]) or the URLs of a bundled sample, and the worker
//! reads them in slices with `FileReaderSync` on demand (or `fetch`), unpacking archives and
//! compressed files (tar, gzip, zstd, zip) as they stream in, so only the files the readers need
//! are held. The page's thread never holds a byte of the trace.
//!
//! Each load runs in a fresh worker (the page keeps the previous one until the new trace is
//! in), so a failed or cancelled load never loses the trace already shown.

use crate::input::{blob_files, blob_reader, prefetch_blobs, read_blobs, streamed_by_name};
use crate::protocol::{
    AnalysisAnswer, AnalysisRequest, Failure, MatrixRequest, ProgressReport, Request, Response, WireFile, WorkingReport,
};
use crate::session::Session;
use gloo::worker::{Codec, HandlerId, Worker, WorkerScope};
use js_sys::{Array, Uint8Array};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;
use tracelogic_formats::input::{InputFile, Unpacker};
use tracelogic_model::Selection;
use wasm_bindgen::{JsCast, JsValue};

/// Relative URL of the worker's loader script in the built site.
pub const LOADER: &str = "./worker_loader.js";

pub use crate::session::MAX_INPUT_BYTES;

mod handles;
mod messages;
mod parts;
mod stepwise;
mod whatif;
use handles::{fetch_urls, js_message, read_handles, RECEIVED};
pub use handles::{offer_chunk, offer_handles, post_block, release_handles, take_posted_block, HandleCodec};
pub use messages::{FileSource, Input, OpenOptions, Plan};

/// What the page shows when the worker dies without a word (a WebAssembly trap, most likely the
/// 4 GiB memory running out): the loader script posts it on the worker's `error` event.
pub const FATAL_MESSAGE: &str = "the analysis worker stopped: it most likely ran out of memory (a browser gives \
    WebAssembly at most 4 GiB; the tracelogic CLI has no such limit)";

/// How the failure a panic reports begins (the page restarts the worker on it).
pub const PANIC_PREFIX: &str = "internal error in the analysis worker";

/// The shape of gloo-worker's own worker-to-page message, to encode [`FATAL_MESSAGE`] as one
/// (bincode writes the variant index and the fields, never the type's name).
#[derive(Serialize)]
enum FromWorkerMirror {
    #[allow(dead_code)]
    WorkerLoaded,
    ProcessOutput(HandlerId, Response),
}

/// The message the loader script posts if the worker dies while answering bridge `id`.
pub fn fatal_message(id: HandlerId) -> Vec<u8> {
    let failed = Response::Failed(Failure {
        message: FATAL_MESSAGE.to_owned(),
        cancelled: false,
    });
    bincode::serialize(&FromWorkerMirror::ProcessOutput(id, failed)).expect("plain serde values")
}

/// Record `tracelogic:NAME` on the calling thread's performance timeline (`performance.mark`),
/// so a profile of a load (`bench/wasm-ingest.mjs --profile`) can split its time into the stages
/// the worker went through and the page's share. A no-op off the browser and where the timeline
/// is missing.
pub fn mark(name: &str) {
    #[cfg(target_arch = "wasm32")]
    {
        let global = js_sys::global();
        let performance = match global.dyn_ref::<web_sys::WorkerGlobalScope>() {
            Some(scope) => scope.performance(),
            None => global.dyn_ref::<web_sys::Window>().and_then(|w| w.performance()),
        };
        if let Some(performance) = performance {
            let _ = performance.mark(&format!("tracelogic:{name}"));
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = name;
}

/// Leave the fatal message for the loader script (`self.__tracelogicFatal`), or clear it.
fn arm_fatal(id: Option<HandlerId>) {
    let value: JsValue = match id {
        Some(id) => Uint8Array::from(fatal_message(id).as_slice()).into(),
        None => JsValue::NULL,
    };
    let _ = js_sys::Reflect::set(&js_sys::global(), &"__tracelogicFatal".into(), &value);
}

pub use crate::input::SLICE_BYTES;

/// What to do with files once a fetch finished.
#[derive(Debug)]
pub enum Job {
    /// A load.
    Open {
        label: String,
        matrix: MatrixRequest,
        options: Box<OpenOptions>,
    },
    /// A comparison.
    Compare { seq: u64, request: AnalysisRequest },
}

/// The worker's own messages: the files of a load or comparison are read (fetched, or read from
/// the page's `File` handles), or could not be.
pub struct Fetched {
    id: HandlerId,
    job: Job,
    files: Result<Vec<WireFile>, Failure>,
}

/// The worker's own messages.
pub enum WorkerMessage {
    /// The files of a load or comparison are read.
    Fetched(Fetched),
    /// Helper `index` of the overview pool answered.
    Part {
        /// The helper.
        index: usize,
        /// Its answer.
        response: Response,
    },
    /// Helper `index` of a pooled what-if answered.
    WhatIf {
        /// The helper.
        index: usize,
        /// Its answer.
        response: Response,
    },
    /// A whole load decoded rank by rank as its files arrived ([`stepwise`]): match, summarise,
    /// answer.
    Decoded(Box<stepwise::Decoded>),
    /// Idle after a timeline tile: build what the first zoom needs
    /// (`Engine::timeline_prepare_zoom`).
    PrepareTimeline,
}

/// The worker: holds at most one trace.
pub struct AnalysisWorker {
    session: Option<Session>,
    /// An overview under way in a pool of helpers.
    pool: Option<crate::overview_pool::PoolOverview>,
    /// A whole load under way in a pool of helpers.
    load_pool: Option<crate::load_pool::PoolLoad>,
    /// Workers for the what-if ([`OpenOptions::whatif_workers`] of the last load).
    whatif_workers: u32,
    /// A what-if under way in a pool of helpers.
    whatif_pool: Option<crate::whatif_pool::PoolWhatIf>,
    /// A helper of a pooled what-if: its share of the configurations and their clocks.
    share: Option<whatif::Share>,
}

thread_local! {
    /// Where a panic is reported: the scope and the bridge whose request was running.
    static PANIC_TARGET: RefCell<Option<(WorkerScope<AnalysisWorker>, HandlerId)>> = const { RefCell::new(None) };
}

/// Report panics to the page as a failed request, so a bug in a reader or an analysis shows
/// up as a message rather than a worker that silently stops answering.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        // The panic is reported here; the trap that follows must not report it again.
        arm_fatal(None);
        let message = format!("{PANIC_PREFIX}: {info}");
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

/// The refusal of an input of `total` bytes, or `None` when it fits under [`MAX_INPUT_BYTES`].
pub fn too_large(label: &str, total: u64) -> Option<String> {
    crate::session::too_large(label, total, MAX_INPUT_BYTES, "")
}

/// Leave the size of the worker's WebAssembly memory in `self.__tracelogicMemoryBytes`, for the
/// browser tests and measurements that read it from the worker (wasm memory only grows, so after
/// a load it is the peak of that load).
pub(crate) fn record_memory() -> u64 {
    let bytes = wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .map(|m| m.buffer().unchecked_into::<js_sys::ArrayBuffer>().byte_length() as f64)
        .unwrap_or(0.0);
    let _ = js_sys::Reflect::set(
        &js_sys::global(),
        &"__tracelogicMemoryBytes".into(),
        &JsValue::from_f64(bytes),
    );
    bytes as u64
}

/// The progress sink of a load answering bridge `id`: every new stage is marked on the worker's
/// timeline ([`mark`]) and reports worth sending ([`worth_reporting`]) go to the page. Never cancels
/// (the page cancels by ending the worker).
fn reporter(scope: &WorkerScope<AnalysisWorker>, id: HandlerId) -> impl FnMut(ProgressReport) -> bool + '_ {
    let mut last: Option<ProgressReport> = None;
    move |p: ProgressReport| {
        if last.as_ref().is_none_or(|l| l.stage != p.stage) {
            mark(&p.stage);
        }
        if worth_reporting(last.as_ref(), &p) {
            scope.respond(id, Response::Progress(p.clone()));
            last = Some(p);
        }
        true
    }
}

/// The progress sink of analysis request `seq` answering bridge `id`: a [`WorkingReport`]
/// to the page at each new stage and each new whole percent ([`worth_showing`]).
fn working_reporter(
    scope: WorkerScope<AnalysisWorker>,
    id: HandlerId,
    seq: u64,
) -> impl FnMut(&tracelogic_engine::progress::Step) + 'static {
    let mut last: Option<tracelogic_engine::progress::Step> = None;
    move |step| {
        if worth_showing(last.as_ref(), step) {
            last = Some(*step);
            scope.respond(id, Response::Working(WorkingReport::of(seq, step)));
        }
    }
}

/// Whether an analysis step is worth a message to the page: a new stage, or a new whole
/// percent of a counted one (at most about a hundred messages per stage).
pub fn worth_showing(
    last: Option<&tracelogic_engine::progress::Step>,
    next: &tracelogic_engine::progress::Step,
) -> bool {
    match last {
        None => true,
        Some(l) => l.stage != next.stage || l.percent() != next.percent(),
    }
}

/// A worker progress reporter as the readers' [`ProgressSink`](tracelogic_formats::ProgressSink).
struct Reports<'a>(&'a mut dyn FnMut(ProgressReport) -> bool);

impl tracelogic_formats::ProgressSink for Reports<'_> {
    fn report(&mut self, p: &tracelogic_formats::Progress) -> bool {
        (self.0)(ProgressReport {
            stage: p.stage.clone(),
            bytes_done: p.bytes_done,
            bytes_total: p.bytes_total,
        })
    }
}

/// The overview of the trace `source` gives, in [`OVERVIEW_BINS`] time bins, as the page's
/// Overview view shows it.
fn overview_of(
    label: &str,
    source: &mut dyn tracelogic_formats::stream::FileSource,
    report: &mut dyn FnMut(ProgressReport) -> bool,
) -> Response {
    let files = source.list().len() as u32;
    match tracelogic_engine::overview::overview(source, OVERVIEW_BINS, &mut Reports(report)) {
        Ok(r) => {
            let mut answer = crate::protocol::OverviewAnswer::new(label, files, r);
            answer.worker_memory_bytes = record_memory();
            Response::Overview(Box::new(answer))
        }
        Err(e) => Response::Failed(Failure {
            message: format!("{label}: {e}"),
            cancelled: e.cancelled,
        }),
    }
}

/// Time bins of the page's overview (the CLI's default, so its counts and bins are
/// `tracelogic overview --json`'s).
pub const OVERVIEW_BINS: usize = tracelogic_engine::overview::DEFAULT_BINS;

impl AnalysisWorker {
    /// Files read into memory (fetched, or read whole from the page's handles): loaded whole,
    /// or their overview, or a part of them, as `options` plan it.
    fn open_files(
        &mut self,
        scope: &WorkerScope<Self>,
        id: HandlerId,
        label: &str,
        files: Result<Vec<WireFile>, Failure>,
        matrix: &MatrixRequest,
        options: &OpenOptions,
    ) -> Response {
        let files = match files {
            Ok(f) => f,
            Err(f) => return Response::Failed(f),
        };
        let total = files.iter().map(|f| f.bytes.len() as u64).sum();
        let inputs: Vec<InputFile> = files.into_iter().map(|f| InputFile::new(f.name, f.bytes)).collect();
        let mut memory = tracelogic_formats::stream::MemoryFiles::new(inputs);
        let streams = tracelogic_formats::stream::streams(&memory);
        match options.plan(label, total, streams) {
            Plan::TooLarge(message) => Response::Failed(Failure {
                message,
                cancelled: false,
            }),
            Plan::Overview => overview_of(label, &mut memory, &mut reporter(scope, id)),
            Plan::Part(selection) => self.load_part(scope, id, label, &mut memory, &selection, matrix),
            Plan::Whole => {
                let files = memory
                    .into_files()
                    .into_iter()
                    .map(|f| WireFile {
                        name: f.name,
                        bytes: f.bytes,
                    })
                    .collect();
                self.load(scope, id, label, Ok(files), matrix)
            }
        }
    }

    /// A load of the page's handle set `key`: an OTF2 folder of plain files over the limit (or
    /// whose overview or part was asked for) is read one rank at a time straight from the
    /// handles ([`crate::input::blob_files`]), never whole. `None` when the files are to be read
    /// whole instead ([`AnalysisWorker::read`]).
    fn open_streamed(
        &mut self,
        scope: &WorkerScope<Self>,
        id: HandlerId,
        key: u64,
        names: &[String],
        job: &Job,
    ) -> Option<Option<Response>> {
        let Job::Open { label, matrix, options } = job else {
            return None;
        };
        let handles = RECEIVED.with(|r| r.borrow().get(&key).cloned())?;
        if handles.length() as usize != names.len() || names.iter().any(|n| streamed_by_name(n)) {
            return None;
        }
        let failed = |message: String| {
            Some(Some(Response::Failed(Failure {
                message,
                cancelled: false,
            })))
        };
        let (blobs, reader) = match blobs_and_reader(&handles) {
            Ok(b) => b,
            Err(e) => return failed(format!("{label}: {e}")),
        };
        let total: u64 = blobs.iter().map(|b| b.size() as u64).sum();
        let mut source = blob_files(names, blobs.clone(), reader.clone());
        let streams = tracelogic_formats::stream::streams(&source);
        let plan = options.plan(label, total, streams);
        let workers = crate::overview_pool::pool_size(options.workers);
        if streams && plan == Plan::Overview && workers > 1 {
            // The helpers read everything; this worker only merges.
            reporter(scope, id)(ProgressReport {
                stage: format!("starting {workers} workers"),
                bytes_done: 0,
                bytes_total: total,
            });
            RECEIVED.with(|r| r.borrow_mut().remove(&key));
            self.pool = Some(crate::overview_pool::PoolOverview::start(
                scope, id, label, key, names, handles, total, workers,
            ));
            return Some(None);
        }
        let load_workers = crate::overview_pool::pool_size(options.load_workers);
        if plan == Plan::Whole && load_workers > 1 && crate::load_pool::poolable(names) {
            // The helpers read and decode the ranks; this worker merges.
            reporter(scope, id)(ProgressReport {
                stage: format!("starting {load_workers} workers"),
                bytes_done: 0,
                bytes_total: total,
            });
            RECEIVED.with(|r| r.borrow_mut().remove(&key));
            self.load_pool = Some(crate::load_pool::PoolLoad::start(
                scope,
                id,
                label,
                key,
                names,
                handles,
                total,
                matrix,
                load_workers,
            ));
            return Some(None);
        }
        if stepwise::stepwise(names, streams, &plan, load_workers) {
            RECEIVED.with(|r| r.borrow_mut().remove(&key));
            let job = Job::Open {
                label: label.clone(),
                matrix: matrix.clone(),
                options: options.clone(),
            };
            stepwise::start(scope, id, job, key, names.to_vec(), handles);
            return Some(None);
        }
        if streams && matches!(plan, Plan::Overview | Plan::Part(_)) {
            reporter(scope, id)(ProgressReport {
                stage: "reading the definitions in the worker".into(),
                bytes_done: 0,
                bytes_total: total,
            });
            if let Err(e) = prefetch_blobs(&mut source, &blobs, &reader) {
                return failed(e.to_string());
            }
        }
        let answer = match plan {
            Plan::Overview if streams => overview_of(label, &mut source, &mut reporter(scope, id)),
            Plan::Part(selection) if streams => self.load_part(scope, id, label, &mut source, &selection, matrix),
            Plan::TooLarge(message) => Response::Failed(Failure {
                message,
                cancelled: false,
            }),
            _ => return None,
        };
        RECEIVED.with(|r| r.borrow_mut().remove(&key));
        Some(Some(answer))
    }

    /// Parse `files` as the worker's trace and answer with its summary and matrix.
    fn load(
        &mut self,
        scope: &WorkerScope<Self>,
        id: HandlerId,
        label: &str,
        files: Result<Vec<WireFile>, Failure>,
        matrix: &MatrixRequest,
    ) -> Response {
        let mut report = reporter(scope, id);
        let files = match files {
            Ok(f) => f,
            Err(f) => return Response::Failed(f),
        };
        let loaded = Session::load(label, files, matrix, &mut report);
        record_memory();
        self.keep(loaded)
    }

    /// Keep a loaded trace's session (nothing kept on a failure, so the trace shown before
    /// stays) and the page's answer to its load.
    fn keep(&mut self, loaded: Result<crate::session::Loaded, Failure>) -> Response {
        match loaded {
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

    /// Keep a trace decoded stepwise ([`stepwise`]) as [`AnalysisWorker::load`] keeps one read
    /// whole: messages matched, the summary and the matrix answered.
    fn keep_decoded(&mut self, scope: &WorkerScope<Self>, d: stepwise::Decoded) {
        PANIC_TARGET.with(|t| *t.borrow_mut() = Some((scope.clone(), d.id)));
        arm_fatal(Some(d.id));
        let engine = tracelogic_engine::Engine::new(d.trace, tracelogic_engine::FieldWords::Labels);
        let loaded = Session::from_engine(
            &d.label,
            engine,
            d.files,
            d.bytes,
            &d.matrix,
            &mut reporter(scope, d.id),
        );
        record_memory();
        let answer = self.keep(loaded);
        mark("worker answering");
        scope.respond(d.id, answer);
        mark("worker answered");
    }

    /// The answer to analysis request `seq`; meanwhile the engine's progress steps worth
    /// showing go to the page ([`working_reporter`]).
    fn analyse(
        &self,
        scope: &WorkerScope<Self>,
        id: HandlerId,
        seq: u64,
        request: AnalysisRequest,
        selection: Option<&Selection>,
    ) -> Response {
        match &self.session {
            Some(s) => {
                let answer =
                    tracelogic_engine::progress::watch(working_reporter(scope.clone(), id, seq), || match selection {
                        Some(selection) => s.analyse_selected(&request, selection),
                        None => s.analyse(&request),
                    });
                Response::Analysis(Box::new(AnalysisAnswer { seq, answer }))
            }
            None => no_trace(),
        }
    }

    fn compare(
        &self,
        scope: &WorkerScope<Self>,
        id: HandlerId,
        seq: u64,
        mut request: AnalysisRequest,
        files: Result<Vec<WireFile>, Failure>,
    ) -> Response {
        match files.map_err(|f| f.message) {
            Ok(read) => {
                if let AnalysisRequest::Compare { files, .. } = &mut request {
                    *files = read;
                }
                self.analyse(scope, id, seq, request, None)
            }
            Err(message) => Response::Analysis(Box::new(AnalysisAnswer {
                seq,
                answer: Err(message),
            })),
        }
    }

    /// Start fetching `urls` for `job`; the answer comes through [`Worker::update`].
    fn fetch(scope: &WorkerScope<Self>, id: HandlerId, job: Job, urls: Vec<(String, String)>) {
        let scope = scope.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let files = fetch_urls(urls).await.map_err(|message| Failure {
                message,
                cancelled: false,
            });
            scope.send_message(WorkerMessage::Fetched(Fetched { id, job, files }));
        });
    }

    /// Start reading the page's handle set `key` for `job` ([`read_handles`]); the answer comes
    /// through [`Worker::update`]. Reads are asynchronous (`Blob.arrayBuffer()`), so the worker's
    /// thread copies each slice into wasm memory while the browser reads the next ones.
    fn read(scope: &WorkerScope<Self>, id: HandlerId, job: Job, key: u64, names: Vec<String>) {
        let scope = scope.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let files = match &job {
                Job::Open { label, options, .. } => {
                    read_handles(label, key, &names, options.full_load_limit, &mut reporter(&scope, id)).await
                }
                Job::Compare { .. } => {
                    read_handles("the compared trace", key, &names, MAX_INPUT_BYTES, &mut |_| true).await
                }
            };
            scope.send_message(WorkerMessage::Fetched(Fetched { id, job, files }));
        });
    }
}

fn no_trace() -> Response {
    Response::Failed(Failure {
        message: "no trace is loaded".into(),
        cancelled: false,
    })
}

impl Worker for AnalysisWorker {
    type Message = WorkerMessage;
    type Input = Input;
    type Output = Response;

    fn create(_scope: &WorkerScope<Self>) -> Self {
        mark("worker started");
        install_panic_hook();
        AnalysisWorker {
            session: None,
            pool: None,
            load_pool: None,
            whatif_workers: 0,
            whatif_pool: None,
            share: None,
        }
    }

    fn update(&mut self, scope: &WorkerScope<Self>, msg: Self::Message) {
        let Fetched { id, job, files } = match msg {
            WorkerMessage::Fetched(f) => f,
            WorkerMessage::Decoded(d) => return self.keep_decoded(scope, *d),
            WorkerMessage::Part { index, response } => return self.part_arrived(scope, index, response),
            WorkerMessage::WhatIf { index, response } => return self.whatif_arrived(scope, index, response),
            WorkerMessage::PrepareTimeline => {
                if let Some(s) = &self.session {
                    mark("worker preparing the timeline's zoom");
                    s.engine().timeline_prepare_zoom();
                    mark("worker prepared the timeline's zoom");
                }
                return;
            }
        };
        PANIC_TARGET.with(|t| *t.borrow_mut() = Some((scope.clone(), id)));
        arm_fatal(Some(id));
        let answer = match job {
            Job::Open { label, matrix, options } => self.open_files(scope, id, &label, files, &matrix, &options),
            Job::Compare { seq, request } => self.compare(scope, id, seq, request, files),
        };
        mark("worker answering");
        scope.respond(id, answer);
        mark("worker answered");
    }

    fn received(&mut self, scope: &WorkerScope<Self>, msg: Self::Input, id: HandlerId) {
        mark("worker received a request");
        PANIC_TARGET.with(|t| *t.borrow_mut() = Some((scope.clone(), id)));
        arm_fatal(Some(id));
        if let Input::Open { options, .. } = &msg {
            self.whatif_workers = options.whatif_workers;
        }
        let answer = match msg {
            Input::Open {
                label,
                source,
                matrix,
                options,
            } => match source {
                FileSource::Urls(urls) => {
                    scope.respond(
                        id,
                        Response::Progress(ProgressReport {
                            stage: "fetching in the worker".into(),
                            bytes_done: 0,
                            bytes_total: 0,
                        }),
                    );
                    let options = Box::new(options);
                    return Self::fetch(scope, id, Job::Open { label, matrix, options }, urls);
                }
                FileSource::Handles { key, names } => {
                    let options = Box::new(options);
                    let job = Job::Open { label, matrix, options };
                    match self.open_streamed(scope, id, key, &names, &job) {
                        Some(Some(answer)) => answer,
                        // An overview pool answers when its helpers have.
                        Some(None) => return,
                        None => return Self::read(scope, id, job, key, names),
                    }
                }
            },
            Input::OverviewPart { source, part, parts } => self.overview_part(scope, id, source, part, parts),
            Input::LoadBlock { source, part, parts } => match self.load_block(scope, id, source, part, parts) {
                Some(answer) => answer,
                None => return,
            },
            Input::Compare { seq, source, request } => match source {
                FileSource::Urls(urls) => return Self::fetch(scope, id, Job::Compare { seq, request }, urls),
                FileSource::Handles { key, names } => {
                    return Self::read(scope, id, Job::Compare { seq, request }, key, names);
                }
            },
            Input::Request(Request::Load { label, files, matrix }) => self.load(scope, id, &label, Ok(files), &matrix),
            Input::Request(Request::Analyse {
                seq,
                request,
                selection,
            }) => match self.start_pooled_whatif(scope, id, seq, request, selection) {
                Ok(()) => return,
                Err(back) => self.analyse(scope, id, seq, back.0, back.1.as_ref()),
            },
            Input::ReplayShare { configs } => self.replay_share(configs),
            Input::ReplayChunk { ranks } => match self.replay_chunk(ranks) {
                None => return,
                Some(failed) => failed,
            },
            Input::ReplayEnd { ranks } => self.replay_end(ranks),
            Input::Request(Request::Matrix { seq, request }) => match &self.session {
                Some(s) => match s.matrix(seq, &request) {
                    Ok(m) => Response::Matrix(Box::new(m)),
                    Err(f) => Response::Failed(f),
                },
                None => no_trace(),
            },
            Input::Request(Request::Timeline { seq, query }) => match &self.session {
                Some(s) => {
                    let answer = Response::Timeline(Box::new(crate::protocol::TimelineAnswer {
                        seq,
                        tile: s.engine().timeline(&query).map_err(String::from),
                        query,
                    }));
                    mark("worker answering");
                    scope.respond(id, answer);
                    mark("worker answered");
                    // The first whole-run tile is drawn without the receive side of the index;
                    // build it once the answer is sent and the worker is idle (a timer, so
                    // requests already queued go first), not in the first zoom's answer.
                    if s.engine().timeline_zoom_pending() {
                        let scope = scope.clone();
                        gloo::timers::callback::Timeout::new(0, move || {
                            scope.send_message(WorkerMessage::PrepareTimeline)
                        })
                        .forget();
                    }
                    return;
                }
                None => no_trace(),
            },
        };
        mark("worker answering");
        scope.respond(id, answer);
        mark("worker answered");
    }
}

/// The page's files behind `handles` as blobs, with a synchronous reader for them (a worker
/// reads its files with `FileReaderSync`); the error is the browser's message.
fn blobs_and_reader(handles: &Array) -> Result<(Vec<web_sys::Blob>, web_sys::FileReaderSync), String> {
    let blobs = handles.iter().map(|h| h.unchecked_into()).collect();
    let reader = web_sys::FileReaderSync::new().map_err(|e| js_message(&e))?;
    Ok((blobs, reader))
}

#[cfg(test)]
mod tests;
