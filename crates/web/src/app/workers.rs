//! The page's analysis workers: one per load (a spare one started ahead), the worker of the
//! trace on screen and what it needs to read the trace again when it dies, and the dispatch of
//! every worker answer to the page's state ([`super::state`]).

use super::*;

/// The platform side of the trace on screen: the worker that holds it.
pub(super) struct TraceWorker {
    pub bridge: WorkerBridge<AnalysisWorker>,
    /// How the trace was read: a new worker reads it again when this one dies.
    pub reload: Reload,
    /// A new worker is reading the trace again (the previous one died); requests wait in
    /// `queued` until it has.
    pub restarting: bool,
    pub queued: Vec<Input>,
    /// Where its files came from (to compute its overview).
    pub origin: Option<Origin>,
}

/// What a new worker needs to read the shown trace again.
pub(super) struct Reload {
    label: String,
    source: FileSource,
    /// The `File` handles of a dropped or picked input (offered again under the generation).
    handles: Option<Array>,
    /// How it was read (whole, or a part of it).
    options: OpenOptions,
}

impl TraceWorker {
    /// Send `input` to the worker, or keep it until a restarted worker has read the trace.
    pub fn send(&mut self, input: Input) {
        if self.restarting {
            self.queued.push(input);
        } else {
            self.bridge.send(input);
        }
    }
}

/// The platform side of a load under way: its worker and files.
#[derive(Default)]
pub(super) struct LoadIo {
    pub bridge: Option<WorkerBridge<AnalysisWorker>>,
    /// Files to keep in IndexedDB once the load succeeds (names, `File`s).
    pub keep: Option<(Vec<String>, Array)>,
    /// What the worker was asked to read, and how (kept to read it again if the worker dies).
    pub source: Option<(FileSource, OpenOptions)>,
    /// Where the files come from.
    pub origin: Option<Origin>,
}

/// Where a trace's files came from, to read them again: for its overview, or a part of it.
#[derive(Clone)]
pub(super) struct Origin {
    /// The load that first read them (an overview and a trace of the same input share it).
    pub id: u64,
    /// What the user loaded.
    pub label: String,
    pub files: OriginFiles,
}

#[derive(Clone)]
pub(super) enum OriginFiles {
    /// The page's `File` handles and their relative names.
    Handles(Vec<String>, Array),
    /// A bundled sample's URLs.
    Urls(Vec<(String, String)>),
}

impl Origin {
    /// The files as the source of load `key` (handles are offered to the worker under it).
    pub fn source(&self, key: u64) -> FileSource {
        match &self.files {
            OriginFiles::Handles(names, files) => {
                offer_handles(key, files.clone());
                FileSource::Handles {
                    key,
                    names: names.clone(),
                }
            }
            OriginFiles::Urls(urls) => FileSource::Urls(urls.clone()),
        }
    }
}

/// The overview on the page: the worker's answer and the files it came from.
pub(super) struct OverviewShown {
    pub answer: Rc<crate::protocol::OverviewAnswer>,
    pub origin: Option<Origin>,
}

/// A worker started ahead of the next load, so that a load does not wait for a worker to start
/// (fetch and compile its wasm: about 0.1 s). It answers the generation of the load that takes it.
pub(super) struct Spare {
    bridge: WorkerBridge<AnalysisWorker>,
    /// The generation its answers are tagged with: 0 (no load) until a load takes it.
    generation: Rc<Cell<u64>>,
}

/// How long after the page starts, or after a load ends, the spare worker is started (ms): late
/// enough not to slow the page's own start or the first analyses of a new trace.
pub(super) const SPARE_AFTER_START_MS: u32 = 100;
/// See [`SPARE_AFTER_START_MS`].
pub(super) const SPARE_AFTER_LOAD_MS: u32 = 1000;

/// Whether a worker's failure means its instance died: the loader's message on an uncaught
/// error (a WebAssembly trap, most likely out of memory) or a panic (which traps after reporting).
fn worker_died(message: &str) -> bool {
    message == FATAL_MESSAGE || message.starts_with(crate::worker::PANIC_PREFIX)
}

/// The page's clock (`performance.now()`, ms), or 0 without one.
fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

impl App {
    /// A fresh worker whose answers are tagged with the generation in `generation` when they arrive.
    fn spawn_worker(link: &Scope<App>, generation: Rc<Cell<u64>>) -> WorkerBridge<AnalysisWorker> {
        let link = link.clone();
        let mut spawner = AnalysisWorker::spawner().encoding::<HandleCodec>();
        spawner
            .callback(move |response| link.send_message(Msg::Worker(generation.get(), response)))
            .spawn_with_loader(LOADER)
    }

    /// The worker for load `generation`: the spare if there is one, else a fresh one.
    pub(super) fn worker_for(&mut self, link: &Scope<App>, generation: u64) -> WorkerBridge<AnalysisWorker> {
        match self.spare.take() {
            Some(spare) => {
                spare.generation.set(generation);
                spare.bridge
            }
            None => Self::spawn_worker(link, Rc::new(Cell::new(generation))),
        }
    }

    /// Start a spare worker in `delay_ms`, unless one is there or a load runs by then.
    pub(super) fn prepare_spare(&self, link: &Scope<App>, delay_ms: u32) {
        if self.spare.is_some() {
            return;
        }
        let link = link.clone();
        gloo::timers::callback::Timeout::new(delay_ms, move || link.send_message(Msg::PrepareWorker)).forget();
    }

    /// Start the spare worker now, if none is there and no load runs.
    pub(super) fn spawn_spare(&mut self, link: &Scope<App>) {
        if self.spare.is_none() && self.state.loading.is_none() {
            let generation = Rc::new(Cell::new(0));
            let bridge = Self::spawn_worker(link, generation.clone());
            self.spare = Some(Spare { bridge, generation });
        }
    }

    /// An answer of the worker of load `generation`: whether the page changed.
    pub(super) fn on_worker(&mut self, ctx: &Context<Self>, generation: u64, response: Response) -> bool {
        if self.state.is_loading(generation) {
            return self.on_load_answer(ctx, generation, response);
        }
        let Some(current) = self.state.current.as_ref().filter(|c| c.generation == generation) else {
            return false;
        };
        if current.io.restarting {
            return self.on_restarted(response);
        }
        match response {
            Response::Matrix(m) => self.state.matrix_answer(*m),
            Response::Timeline(t) => self.state.timeline_answer(*t),
            Response::Working(w) => self.state.working(w),
            Response::Analysis(a) => {
                if self.state.answered_view(&a) == Some("compare") {
                    if let Some(key) = self.compare_key.take() {
                        release_handles(key);
                    }
                }
                match self.state.take_answer(*a) {
                    Answered::Stale => false,
                    Answered::Shown => true,
                    Answered::CompareAgain(next) => {
                        self.analyse(next);
                        true
                    }
                }
            }
            Response::Failed(f) => {
                // A worker panic answers whatever was running: no pending view waits forever.
                let died = worker_died(&f.message);
                if died {
                    // The dead worker's instance cannot answer again: a new one reads the trace
                    // again (the files stay with the page) and takes the requests from there.
                    self.restart_worker(ctx.link());
                }
                self.state.worker_failed(f.message, died);
                true
            }
            _ => false,
        }
    }

    /// An answer of the worker of the load under way (`generation`).
    fn on_load_answer(&mut self, ctx: &Context<Self>, generation: u64, response: Response) -> bool {
        match response {
            Response::Progress(p) => return self.state.progress(p, now_ms()),
            Response::Overview(answer) => {
                let loading = self.state.loading.take().expect("checked above");
                release_handles(generation);
                // The worker holds no trace: it ends with its bridge, dropped here.
                self.overview = Some(OverviewShown {
                    answer: Rc::from(answer),
                    origin: loading.io.origin,
                });
                self.show_overview = true;
                self.state.load_log = loading.stages;
                self.state.error = None;
                self.prepare_spare(ctx.link(), SPARE_AFTER_LOAD_MS);
            }
            Response::Loaded { trace, matrix } => {
                crate::worker::mark("page received the trace");
                let loading = self.state.loading.take().expect("checked above");
                release_handles(generation);
                let io = loading.io;
                let Some(bridge) = io.bridge else { return false };
                let (source, options) = io
                    .source
                    .clone()
                    .unwrap_or_else(|| (FileSource::Urls(Vec::new()), OpenOptions::default()));
                let handles = io.keep.as_ref().map(|(_, files)| files.clone()).or_else(|| {
                    io.origin.as_ref().and_then(|o| match &o.files {
                        OriginFiles::Handles(_, files) => Some(files.clone()),
                        OriginFiles::Urls(_) => None,
                    })
                });
                let reload = Reload {
                    label: loading.label.clone(),
                    source,
                    handles,
                    options,
                };
                let same_input =
                    |o: &OverviewShown| o.origin.as_ref().map(|o| o.id) == io.origin.as_ref().map(|o| o.id);
                if !self.overview.as_ref().is_some_and(same_input) {
                    self.overview = None;
                }
                self.show_overview = false;
                let worker = TraceWorker {
                    bridge,
                    reload,
                    restarting: false,
                    queued: Vec::new(),
                    origin: io.origin,
                };
                let matrix_changed = self.state.show_loaded(
                    generation,
                    *trace,
                    *matrix,
                    (loading.sample, loading.stages, loading.route),
                    worker,
                );
                if let Some(c) = &self.state.current {
                    self.keep_trace(ctx, &c.trace.label.clone(), io.keep);
                }
                if matrix_changed {
                    ctx.link().send_message(Msg::Matrix(self.state.matrix_request.clone()));
                }
                self.ensure_analysis(self.state.view);
                self.restore_compared();
                self.prepare_spare(ctx.link(), SPARE_AFTER_LOAD_MS);
            }
            Response::Failed(f) => {
                release_handles(generation);
                self.prepare_spare(ctx.link(), SPARE_AFTER_LOAD_MS);
                self.state.load_failed(f);
            }
            Response::Matrix(_)
            | Response::Analysis(_)
            | Response::Working(_)
            | Response::Timeline(_)
            | Response::OverviewPart(_)
            | Response::LoadBlock(_)
            | Response::ReplayReady
            | Response::ReplayState(_) => return false,
        }
        true
    }

    /// Start a new worker for the shown trace, which reads it again as it was first read.
    fn restart_worker(&mut self, link: &Scope<App>) {
        let matrix = MatrixRequest {
            selection: Default::default(),
            ..self.state.matrix_request.clone()
        };
        let Some(c) = self.state.current.as_mut() else { return };
        let w = &mut c.io;
        if let Some(handles) = &w.reload.handles {
            offer_handles(c.generation, handles.clone());
        }
        let bridge = Self::spawn_worker(link, Rc::new(Cell::new(c.generation)));
        bridge.send(Input::Open {
            label: w.reload.label.clone(),
            source: w.reload.source.clone(),
            matrix,
            options: w.reload.options.clone(),
        });
        w.bridge = bridge;
        w.restarting = true;
    }

    /// An answer of the worker that reads the shown trace again after the previous one died.
    fn on_restarted(&mut self, response: Response) -> bool {
        let Some(c) = self.state.current.as_mut() else {
            return false;
        };
        match response {
            Response::Loaded { .. } => {
                release_handles(c.generation);
                c.io.restarting = false;
                for input in std::mem::take(&mut c.io.queued) {
                    c.io.bridge.send(input);
                }
                true
            }
            Response::Failed(f) => {
                // Reading the trace again failed too: stop, and answer every request at once.
                release_handles(c.generation);
                c.io.restarting = false;
                c.io.queued.clear();
                self.state.stop(&f.message);
                true
            }
            _ => false,
        }
    }

    /// Send `request` to the worker of the shown trace and mark its view as waiting.
    pub(super) fn analyse(&mut self, request: AnalysisRequest) {
        if let Some(request) = self.state.begin_analysis(request) {
            self.send(Input::Request(request));
        }
    }

    /// Ask the worker of the shown trace for a timeline tile.
    pub(super) fn timeline(&mut self, query: tracelogic_engine::timeline::TimelineQuery) {
        if let Some(request) = self.state.timeline_request(query) {
            self.send(Input::Request(request));
        }
    }

    /// Ask for the analysis of `view` when it has none yet.
    pub(super) fn ensure_analysis(&mut self, view: View) {
        if let Some(request) = self.state.missing_analysis(view) {
            self.analyse(request);
        }
    }

    /// Compare the shown trace with the files of `source`, which its worker reads.
    pub(super) fn compare_from(&mut self, label: String, source: FileSource) {
        if let Some((seq, request)) = self.state.begin_compare(label) {
            self.send(Input::Compare { seq, source, request });
        }
    }

    /// Send `input` to the worker of the shown trace (kept while a new one reads it again).
    pub(super) fn send(&mut self, input: Input) {
        if let Some(c) = self.state.current.as_mut() {
            c.io.send(input);
        }
    }
}
