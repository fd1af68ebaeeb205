//! The page shell: input (drop zone, pickers, sample menu), progress and cancel, errors, the
//! navigation bar and the current view.
//!
//! Every load runs in its own worker. The page keeps the worker of the trace on screen until a
//! new load succeeds, so a failed or cancelled load leaves the shown trace (and its worker,
//! which answers matrix requests) untouched. Cancelling drops the loading worker at once; the
//! page is free immediately.
//!
//! The page never reads a trace's bytes: it hands the worker `File` handles or a sample's URLs
//! (see [`crate::worker`]). The navigation state lives in the address's fragment
//! ([`crate::route`]), the last trace and the settings in IndexedDB ([`crate::persist`]), and
//! keys 1–9, 0 and the arrows switch views (`?` shows them).

use crate::export::ExportBar;
use crate::input::{self, Source};
use crate::persist::{self, StoredComparison, StoredTrace};
use crate::protocol::{
    AnalysisAnswer, AnalysisRequest, LoadedTrace, MatrixRequest, MatrixView as MatrixResult, ProgressReport,
    ReferenceLibrary, Request, Response,
};
use crate::report::{self, ReportSource};
use crate::route::{self, Route};
use crate::samples::{self, Sample, StartChoice, SAMPLES};
use crate::text;
use crate::tour;
use crate::views::compare::CompareView;
use crate::views::logical::LogicalView;
use crate::views::matrix::MatrixView;
use crate::views::overview::OverviewView;
use crate::views::pattern_search::PatternSearch;
use crate::views::patterns::PatternsView;
use crate::views::phases::PhasesView;
use crate::views::profile::ProfileView;
use crate::views::summary::SummaryView;
use crate::views::topology::TopologyView;
use crate::views::tour::TourPanel;
use crate::views::waits::WaitsView;
use crate::views::whatif::WhatIfView;
use crate::views::{AnalysisState, Focus, View};
use crate::worker::{
    offer_handles, release_handles, AnalysisWorker, FileSource, HandleCodec, Input, OpenOptions, FATAL_MESSAGE, LOADER,
    MAX_INPUT_BYTES,
};
use gloo::worker::{Spawnable, WorkerBridge};
use js_sys::Array;
use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{DragEvent, HtmlInputElement, HtmlSelectElement};
use yew::html::Scope;
use yew::prelude::*;

mod address;
mod help;
mod loading;

use help::*;

/// The trace on screen and the worker that holds it.
struct Current {
    generation: u64,
    bridge: WorkerBridge<AnalysisWorker>,
    trace: Rc<LoadedTrace>,
    matrix: Rc<MatrixResult>,
    /// The worker died twice (the new worker died while reading the trace again, most likely
    /// out of memory): the trace stays on screen, new analyses answer at once.
    stopped: bool,
    /// The timeline view's latest tile.
    timeline: Option<Rc<crate::protocol::TimelineAnswer>>,
    /// How the trace was read: a new worker reads it again when this one dies.
    reload: Reload,
    /// A new worker is reading the trace again (the previous one died); requests wait in
    /// `queued` until it has.
    restarting: bool,
    queued: Vec<Input>,
    /// Where its files came from (to compute its overview).
    origin: Option<Origin>,
}

/// What a new worker needs to read the shown trace again.
struct Reload {
    label: String,
    source: FileSource,
    /// The `File` handles of a dropped or picked input (offered again under the generation).
    handles: Option<Array>,
    /// How it was read (whole, or a part of it).
    options: OpenOptions,
}

impl Current {
    /// Send `input` to the worker, or keep it until a restarted worker has read the trace.
    fn send(&mut self, input: Input) {
        if self.restarting {
            self.queued.push(input);
        } else {
            self.bridge.send(input);
        }
    }
}

/// Where a trace's files came from, to read them again: for its overview, or a part of it.
#[derive(Clone)]
struct Origin {
    /// The load that first read them (an overview and a trace of the same input share it).
    id: u64,
    /// What the user loaded.
    label: String,
    files: OriginFiles,
}

#[derive(Clone)]
enum OriginFiles {
    /// The page's `File` handles and their relative names.
    Handles(Vec<String>, Array),
    /// A bundled sample's URLs.
    Urls(Vec<(String, String)>),
}

impl Origin {
    /// The files as the source of load `key` (handles are offered to the worker under it).
    fn source(&self, key: u64) -> FileSource {
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
struct OverviewShown {
    answer: Rc<crate::protocol::OverviewAnswer>,
    origin: Option<Origin>,
}

/// The page's full-load limit: inputs over it get the Overview view. [`MAX_INPUT_BYTES`], or less
/// when the page's address has `?full-load-limit=BYTES` or the page sets
/// `window.__tracelogicFullLoadLimit` before it starts (tests; never more than
/// [`MAX_INPUT_BYTES`]).
pub fn full_load_limit() -> u64 {
    let Some(window) = web_sys::window() else {
        return MAX_INPUT_BYTES;
    };
    let set = js_sys::Reflect::get(&window, &"__tracelogicFullLoadLimit".into())
        .ok()
        .and_then(|v| v.as_f64());
    let asked = window
        .location()
        .search()
        .ok()
        .and_then(|s| web_sys::UrlSearchParams::new_with_str(&s).ok())
        .and_then(|p| p.get("full-load-limit"))
        .and_then(|v| v.trim().parse::<f64>().ok());
    match set.or(asked) {
        Some(v) if v.is_finite() && v >= 0.0 => (v as u64).min(MAX_INPUT_BYTES),
        _ => MAX_INPUT_BYTES,
    }
}

/// A worker started ahead of the next load, so that a load does not wait for a worker to start
/// (fetch and compile its wasm: about 0.1 s). It answers the generation of the load that takes it.
struct Spare {
    bridge: WorkerBridge<AnalysisWorker>,
    /// The generation its answers are tagged with: 0 (no load) until a load takes it.
    generation: Rc<Cell<u64>>,
}

/// How long after the page starts, or after a load ends, the spare worker is started (ms): late
/// enough not to slow the page's own start or the first analyses of a new trace.
const SPARE_AFTER_START_MS: u32 = 100;
/// See [`SPARE_AFTER_START_MS`].
const SPARE_AFTER_LOAD_MS: u32 = 1000;

/// A load under way: first the page reads the files, then a fresh worker parses them.
struct Loading {
    generation: u64,
    label: String,
    bridge: Option<WorkerBridge<AnalysisWorker>>,
    progress: ProgressReport,
    /// Every stage reported so far (shown afterwards as "how this trace was read").
    stages: Vec<String>,
    /// The bundled sample being loaded, if it is one.
    sample: Option<&'static Sample>,
    /// Files to keep in IndexedDB once the load succeeds (names, `File`s).
    keep: Option<(Vec<String>, Array)>,
    /// When the progress was last drawn (`performance.now()`, ms), see [`PROGRESS_EVERY_MS`].
    progress_drawn_at: f64,
    /// The navigation state to restore once the trace is in (start-up, back/forward).
    route: Option<Route>,
    /// What the worker was asked to read, and how (kept to read it again if the worker dies).
    source: Option<(FileSource, OpenOptions)>,
    /// Where the files come from.
    origin: Option<Origin>,
}

/// Messages of [`App`].
pub enum Msg {
    /// Files or folders were dropped or picked.
    Sources(Vec<Source>),
    /// The user picked a bundled sample.
    Sample(&'static Sample),
    /// The dropped or picked input is listed (names and `File` handles, no bytes read).
    Listed(u64, String, Vec<(String, web_sys::File)>),
    /// What IndexedDB kept from the last visit (and whether to load its trace).
    Restored(Box<Restored>),
    /// Delete everything kept in IndexedDB.
    Forget,
    /// IndexedDB deleted everything (or could not).
    Forgotten(Result<(), String>),
    /// IndexedDB answered a store or a delete: what is kept now (label, bytes), or an error.
    Kept(Result<Option<(String, u64)>, String>),
    /// IndexedDB answered a store or delete of compared runs: what is kept now, or an error.
    KeptCompared(Result<Option<StoredComparison>, String>),
    /// A key was pressed outside a text field.
    Key(String),
    /// Back or forward moved to another address fragment.
    Popped(Route),
    /// Show or hide the keyboard help.
    Help(bool),
    /// Reading the input failed before any worker saw it.
    ReadFailed(u64, String),
    /// A worker answered.
    Worker(u64, Response),
    /// Stop the running load.
    Cancel,
    /// Show another view.
    Show(View),
    /// New metric or threshold for the matrix.
    Matrix(MatrixRequest),
    /// Run an analysis of the loaded trace for its view.
    Analyse(AnalysisRequest),
    /// Compare the loaded trace with a bundled sample.
    CompareSample(&'static Sample),
    /// Compare the loaded trace with dropped or picked files.
    CompareSources(Vec<Source>),
    /// The files of a further trace to compare are listed (or could not be).
    CompareListed(String, Result<Vec<(String, web_sys::File)>, String>),
    /// The rank, pattern or phase selected in one view (carried to the others).
    Focus(Focus),
    /// Ask for a timeline tile.
    Timeline(tracelogic_engine::timeline::TimelineQuery),
    /// A drag entered or left the drop zone.
    Dragging(bool),
    /// Close the error message.
    DismissError,
    /// The topology reference library changed (saved, deleted or loaded patterns).
    Library(ReferenceLibrary),
    /// Write the HTML report of every analysis (computes the missing ones first).
    Report,
    /// The report file was saved (its name) or could not be written.
    ReportDone(Result<String, String>),
    /// Go to a step of the workshop tour (`None` ends it).
    Tour(Option<usize>),
    /// Start the spare worker for the next load, if none is there and no load is running.
    PrepareWorker,
    /// Show the overview (true) or the loaded trace's views (false).
    ShowOverview(bool),
    /// Compute the overview of the loaded trace's input (or show it, when it is there).
    OverviewOfTrace,
    /// Load the part of the overview's trace the selection keeps.
    LoadPart(tracelogic_model::Selection),
}

/// What the last visit left in IndexedDB.
pub struct Restored {
    /// Load the stored trace (the address named no sample).
    load: bool,
    trace: Option<StoredTrace>,
    settings: Option<String>,
    library: Option<String>,
    compared: Option<StoredComparison>,
}

/// The tracelogic page.
pub struct App {
    generation: u64,
    current: Option<Current>,
    loading: Option<Loading>,
    error: Option<String>,
    notice: Option<String>,
    view: View,
    matrix_request: MatrixRequest,
    matrix_seq: u64,
    /// Number of the latest timeline tile asked for.
    timeline_seq: u64,
    dragging: bool,
    analyses: HashMap<&'static str, AnalysisState>,
    analysis_seq: u64,
    focus: Focus,
    /// The user's topology reference patterns, sent with every topology identification.
    library: ReferenceLibrary,
    /// Runs compared before the comparison under way, to merge with its answer.
    compare_merge: Option<Vec<tracelogic_analysis::similarity::RunProperties>>,
    /// The bundled sample on screen, if the trace is one (written to the address).
    sample: Option<&'static Sample>,
    /// The stages of the shown trace's load.
    load_log: Vec<String>,
    /// The trace kept in IndexedDB for the next visit (label, bytes).
    stored: Option<(String, u64)>,
    /// The compared runs kept in IndexedDB (`None` also until the last visit's state arrived).
    stored_compared: Option<StoredComparison>,
    /// The last visit's state arrived from IndexedDB (until then nothing stored is replaced).
    restored_seen: bool,
    /// Sequence number of the last comparison answer whose runs were stored (or dropped), so
    /// each answer is looked at once and "forget" is not undone by a later, unrelated answer.
    compare_kept_seq: u64,
    /// The library as last stored (JSON), to store it again only when it changed.
    stored_library: String,
    /// The settings fragment as last stored.
    stored_settings: String,
    /// Settings or a library are kept in IndexedDB (since the last "forget").
    settings_kept: bool,
    /// The keyboard help is open.
    help: bool,
    /// Where focus goes once the page is drawn: into the help dialog, or back to its opener.
    help_focus: HelpFocus,
    /// The element that had focus when the help opened, focused again when it closes.
    help_opener: Option<web_sys::HtmlElement>,
    /// Comparison files offered to the worker under this key until it answers.
    compare_key: Option<u64>,
    /// Window listeners (keys, back/forward), alive as long as the page.
    listeners: Vec<Closure<dyn FnMut(web_sys::Event)>>,
    /// The user asked for the HTML report; it is written once every analysis has answered.
    report_wanted: bool,
    /// The step of the workshop tour on screen.
    tour: Option<usize>,
    /// The worker the next load takes.
    spare: Option<Spare>,
    /// The overview computed last (an input over the full-load limit, or asked for).
    overview: Option<OverviewShown>,
    /// The overview is on screen instead of the loaded trace's views.
    show_overview: bool,
}

fn location() -> Option<web_sys::Location> {
    web_sys::window().map(|w| w.location())
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
    fn worker_for(&mut self, link: &Scope<App>, generation: u64) -> WorkerBridge<AnalysisWorker> {
        match self.spare.take() {
            Some(spare) => {
                spare.generation.set(generation);
                spare.bridge
            }
            None => Self::spawn_worker(link, Rc::new(Cell::new(generation))),
        }
    }

    /// Start a spare worker in `delay_ms`, unless one is there or a load runs by then.
    fn prepare_spare(&self, link: &Scope<App>, delay_ms: u32) {
        if self.spare.is_some() {
            return;
        }
        let link = link.clone();
        gloo::timers::callback::Timeout::new(delay_ms, move || link.send_message(Msg::PrepareWorker)).forget();
    }

    fn on_worker(&mut self, ctx: &Context<Self>, generation: u64, response: Response) -> bool {
        if self.is_loading(generation) {
            match response {
                Response::Progress(p) => {
                    let Some(l) = self.loading.as_mut() else { return false };
                    if l.stages.last() != Some(&p.stage) {
                        log_stage(&mut l.stages, &p.stage);
                    }
                    l.progress = p;
                    // Every report is kept; the page draws at most one every PROGRESS_EVERY_MS,
                    // so its rendering does not take a core from the worker (2 cores here).
                    let now = now_ms();
                    if now - l.progress_drawn_at < PROGRESS_EVERY_MS {
                        return false;
                    }
                    l.progress_drawn_at = now;
                }
                Response::Overview(answer) => {
                    let loading = self.loading.take().expect("checked above");
                    release_handles(generation);
                    // The worker holds no trace: it ends with its bridge, dropped here.
                    self.overview = Some(OverviewShown {
                        answer: Rc::from(answer),
                        origin: loading.origin,
                    });
                    self.show_overview = true;
                    self.load_log = loading.stages;
                    self.error = None;
                    self.prepare_spare(ctx.link(), SPARE_AFTER_LOAD_MS);
                }
                Response::Loaded { mut trace, matrix } => {
                    crate::worker::mark("page received the trace");
                    let loading = self.loading.take().expect("checked above");
                    release_handles(generation);
                    let Some(bridge) = loading.bridge else { return false };
                    let (source, options) = loading
                        .source
                        .clone()
                        .unwrap_or_else(|| (FileSource::Urls(Vec::new()), OpenOptions::default()));
                    let handles = loading.keep.as_ref().map(|(_, files)| files.clone()).or_else(|| {
                        loading.origin.as_ref().and_then(|o| match &o.files {
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
                        |o: &OverviewShown| o.origin.as_ref().map(|o| o.id) == loading.origin.as_ref().map(|o| o.id);
                    if !self.overview.as_ref().is_some_and(same_input) {
                        self.overview = None;
                    }
                    self.show_overview = false;
                    trace.label = text::trace_name(&trace.label, &trace.source);
                    self.loaded(ctx, &trace.label, loading.sample, loading.stages, loading.keep);
                    self.matrix_request = matrix.request.clone();
                    self.matrix_seq = 0;
                    self.analyses.clear();
                    self.focus = Focus::default();
                    self.current = Some(Current {
                        generation,
                        bridge,
                        trace: Rc::from(trace),
                        matrix: Rc::from(matrix),
                        stopped: false,
                        timeline: None,
                        reload,
                        restarting: false,
                        queued: Vec::new(),
                        origin: loading.origin,
                    });
                    self.error = None;
                    if let Some(route) = loading.route {
                        self.apply_route(ctx, route);
                    }
                    self.ensure_analysis(self.view);
                    self.restore_compared();
                    self.prepare_spare(ctx.link(), SPARE_AFTER_LOAD_MS);
                }
                Response::Failed(f) => {
                    release_handles(generation);
                    self.prepare_spare(ctx.link(), SPARE_AFTER_LOAD_MS);
                    let label = self.loading.take().map(|l| l.label).unwrap_or_default();
                    if f.cancelled {
                        self.notice = Some(format!("Loading {label} was cancelled."));
                    } else {
                        self.error = Some(f.message);
                    }
                }
                Response::Matrix(_) | Response::Analysis(_) | Response::Timeline(_) => return false,
            }
            return true;
        }
        let Some(current) = self.current.as_mut().filter(|c| c.generation == generation) else {
            return false;
        };
        if current.restarting {
            return self.on_restarted(response);
        }
        match response {
            Response::Matrix(m) if m.seq == self.matrix_seq => current.matrix = Rc::from(m),
            Response::Timeline(t) if t.seq == self.timeline_seq => current.timeline = Some(Rc::from(t)),
            Response::Analysis(a) => {
                if self.answered_view(&a) == Some("compare") {
                    if let Some(key) = self.compare_key.take() {
                        release_handles(key);
                    }
                }
                return self.on_analysis(*a);
            }
            Response::Failed(f) => {
                // A worker panic answers whatever was running: no pending view waits forever.
                for state in self.analyses.values_mut().filter(|s| s.pending) {
                    state.pending = false;
                    state.result = Some(Rc::new(Err(f.message.clone())));
                }
                if worker_died(&f.message) {
                    // The dead worker's instance cannot answer again: a new one reads the trace
                    // again (the files stay with the page) and takes the requests from there.
                    self.restart_worker(ctx.link());
                    self.error = Some(format!("{} {RESTARTED}", f.message));
                } else {
                    self.error = Some(f.message);
                }
            }
            _ => return false,
        }
        true
    }

    /// Start a new worker for the shown trace, which reads it again as it was first read.
    fn restart_worker(&mut self, link: &Scope<App>) {
        let matrix = MatrixRequest {
            selection: Default::default(),
            ..self.matrix_request.clone()
        };
        let Some(c) = self.current.as_mut() else { return };
        if let Some(handles) = &c.reload.handles {
            offer_handles(c.generation, handles.clone());
        }
        let bridge = Self::spawn_worker(link, Rc::new(Cell::new(c.generation)));
        bridge.send(Input::Open {
            label: c.reload.label.clone(),
            source: c.reload.source.clone(),
            matrix,
            options: c.reload.options.clone(),
        });
        c.bridge = bridge;
        c.restarting = true;
    }

    /// An answer of the worker that reads the shown trace again after the previous one died.
    fn on_restarted(&mut self, response: Response) -> bool {
        let Some(c) = self.current.as_mut() else { return false };
        match response {
            Response::Loaded { .. } => {
                release_handles(c.generation);
                c.restarting = false;
                for input in std::mem::take(&mut c.queued) {
                    c.bridge.send(input);
                }
                true
            }
            Response::Failed(f) => {
                // Reading the trace again failed too: stop, and answer every request at once.
                release_handles(c.generation);
                c.restarting = false;
                c.stopped = true;
                c.queued.clear();
                for state in self.analyses.values_mut().filter(|s| s.pending) {
                    state.pending = false;
                    state.result = Some(Rc::new(Err(STOPPED.to_owned())));
                }
                self.error = Some(format!("{} ({STOPPED})", f.message));
                true
            }
            _ => false,
        }
    }

    /// The view whose request `answer` answers (its state holds the request's number).
    fn answered_view(&self, answer: &AnalysisAnswer) -> Option<&'static str> {
        self.analyses
            .iter()
            .find(|(_, s)| s.seq == answer.seq)
            .map(|(view, _)| *view)
    }

    fn on_analysis(&mut self, answer: AnalysisAnswer) -> bool {
        let Some(view) = self.answered_view(&answer) else {
            return false;
        };
        if view == "compare" {
            // A run read from files joins the runs compared before: one more request, from properties.
            let earlier = self.compare_merge.take().unwrap_or_default();
            if let Some(next) = crate::views::compare::merge_request(earlier, &answer.answer) {
                self.analyse(next);
                return true;
            }
        }
        let Some(state) = self.analyses.get_mut(view) else {
            return false;
        };
        state.pending = false;
        state.result = Some(Rc::new(answer.answer));
        true
    }

    /// Send `request` to the worker of the shown trace and mark its view as waiting.
    fn analyse(&mut self, request: AnalysisRequest) {
        let Some(c) = &self.current else { return };
        let request = request.with_library(&self.library);
        self.analysis_seq += 1;
        let state = self.analyses.entry(request.kind()).or_default();
        state.seq = self.analysis_seq;
        state.pending = true;
        if c.stopped {
            state.pending = false;
            state.result = Some(Rc::new(Err(STOPPED.to_owned())));
            return;
        }
        state.request = (!matches!(
            request,
            AnalysisRequest::Compare { .. } | AnalysisRequest::CompareRuns { .. }
        ))
        .then(|| request.clone());
        let selection = Some(self.matrix_request.selection.clone());
        let seq = self.analysis_seq;
        if let Some(c) = self.current.as_mut() {
            c.send(Input::Request(Request::Analyse {
                seq,
                request,
                selection,
            }));
        }
    }

    /// Ask the worker of the shown trace for a timeline tile.
    fn timeline(&mut self, query: tracelogic_engine::timeline::TimelineQuery) {
        let Some(c) = self.current.as_mut() else { return };
        self.timeline_seq += 1;
        c.send(Input::Request(Request::Timeline {
            seq: self.timeline_seq,
            query,
        }));
    }

    /// Ask for the analysis of `view` when it has none yet.
    fn ensure_analysis(&mut self, view: View) {
        let Some(request) = view.default_request() else { return };
        if !self.analyses.contains_key(request.kind()) {
            self.analyse(request);
        }
    }

    fn view_input(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let on_drop = link.callback(|e: DragEvent| {
            e.prevent_default();
            match e.data_transfer() {
                Some(data) => Msg::Sources(input::sources_from_drop(&data)),
                None => Msg::Sources(Vec::new()),
            }
        });
        let on_drag_over = link.callback(|e: DragEvent| {
            e.prevent_default();
            Msg::Dragging(true)
        });
        let on_drag_leave = link.callback(|_: DragEvent| Msg::Dragging(false));
        let on_pick = link.batch_callback(|e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            let sources = input.files().map(|f| input::sources_from_list(&f)).unwrap_or_default();
            input.set_value("");
            (!sources.is_empty()).then_some(Msg::Sources(sources))
        });
        let on_sample = link.batch_callback(|e: Event| {
            let select: HtmlSelectElement = e.target_unchecked_into();
            let chosen = samples::find(&select.value());
            select.set_value("");
            chosen.map(Msg::Sample)
        });
        let class = classes!("dropzone", self.dragging.then_some("dragging"));
        html! {
            <section class="input" aria-label="Load a trace">
                <div class={class} id="dropzone" ondrop={on_drop} ondragover={on_drag_over.clone()}
                    ondragenter={on_drag_over} ondragleave={on_drag_leave}>
                    <p class="hint">{ "Drop trace files, a trace folder or an archive (.tar, .tar.gz, .tar.zst, .zip) here" }</p>
                    <p class="formats">{ "OTF2 · SST DUMPI · Paraver · Pipit CSV · tracelogic text" }</p>
                    <div class="pickers">
                        <label class="button">
                            { "Choose files…" }
                            <input id="pick-files" class="visually-hidden" type="file" multiple=true onchange={on_pick.clone()} />
                        </label>
                        <label class="button">
                            { "Choose a folder…" }
                            <input id="pick-folder" class="visually-hidden" type="file" webkitdirectory=true onchange={on_pick} />
                        </label>
                        <label class="sample-menu">
                            <span>{ "Try a sample:" }</span>
                            <select id="sample" onchange={on_sample}>
                                <option value="" selected=true>{ "choose…" }</option>
                                { for SAMPLES.iter().map(|s| html! { <option value={s.id}>{ s.title }</option> }) }
                            </select>
                        </label>
                        <button type="button" class="secondary" id="take-tour"
                            onclick={ctx.link().callback(|_| Msg::Tour(Some(0)))}>{ "Take the tour" }</button>
                    </div>
                </div>
                { self.view_stored(ctx) }
                { self.view_progress(ctx) }
                { self.view_messages(ctx) }
            </section>
        }
    }

    fn mark_compare_loading(&mut self, label: &str) {
        if let Some(runs) = crate::views::compare::compared_runs(self.analyses.get("compare")) {
            self.compare_merge = Some(runs);
        }
        let state = self.analyses.entry("compare").or_default();
        state.pending = true;
        state.request = None;
        state.loading = Some(label.to_owned());
    }

    fn view_progress(&self, ctx: &Context<Self>) -> Html {
        let Some(l) = &self.loading else { return Html::default() };
        let p = &l.progress;
        let bar = if p.bytes_total > 0 {
            html! { <progress id="progress-bar" max={p.bytes_total.to_string()} value={p.bytes_done.to_string()}></progress> }
        } else {
            html! { <progress id="progress-bar"></progress> }
        };
        let amount = if p.bytes_total > 0 {
            format!("{} of {}", text::bytes(p.bytes_done), text::bytes(p.bytes_total))
        } else {
            text::bytes(p.bytes_done)
        };
        html! {
            <div class="progress" role="status" aria-live="polite" id="progress">
                <div class="progress-label"><strong>{ format!("Loading {}", l.label) }</strong>{ format!(": {}", p.stage) }</div>
                { bar }
                <span class="amount">{ amount }</span>
                <button type="button" id="cancel" onclick={ctx.link().callback(|_| Msg::Cancel)}>{ "Cancel" }</button>
            </div>
        }
    }

    fn view_messages(&self, ctx: &Context<Self>) -> Html {
        html! {
            <>
                if let Some(e) = &self.error {
                    <div class="error" role="alert" id="error">
                        <p><strong>{ "Could not load the trace. " }</strong>{ e }</p>
                        if self.current.is_some() {
                            <p class="kept">{ "The trace shown below is still loaded." }</p>
                        }
                        <button type="button" onclick={ctx.link().callback(|_| Msg::DismissError)}>{ "Dismiss" }</button>
                    </div>
                }
                if let Some(n) = &self.notice {
                    <div class="notice" role="status" id="notice"><p>{ n }</p></div>
                }
            </>
        }
    }

    /// The Overview view with its header, when it is on screen.
    fn view_overview(&self, ctx: &Context<Self>) -> Option<Html> {
        let shown = self.overview.as_ref().filter(|_| self.show_overview)?;
        let a = &shown.answer;
        let o = &a.report.overview;
        let back = self.current.as_ref().map(|c| {
            html! {
                <button type="button" id="overview-back" class="secondary"
                    onclick={ctx.link().callback(|_| Msg::ShowOverview(false))}>{ format!("Back to {}", c.trace.label) }</button>
            }
        });
        let why = if a.report.input_bytes > full_load_limit() {
            format!(
                "Too large to load whole in the browser ({} over the page's limit of {}): this overview was read one rank at a time.",
                text::bytes(a.report.input_bytes),
                text::bytes(full_load_limit())
            )
        } else {
            "The overview of the whole input, read one rank at a time.".to_owned()
        };
        Some(html! {
            <>
                <div class="trace-header" id="overview-header" data-label={a.label.clone()}>
                    <h2 class="trace-title">{ format!("Overview of {}", a.label) }</h2>
                    <p>{ format!("{} · {} · {} · {}", o.format, o.source, text::counted(a.files.into(), "file", "files"), text::bytes(a.report.input_bytes)) }</p>
                    <p class="note" id="overview-why">{ why }</p>
                    { self.view_load_log() }
                    { for back }
                </div>
                <div id="view-content" tabindex="-1">
                    <OverviewView answer={a.clone()} on_load={ctx.link().callback(Msg::LoadPart)}
                        busy={self.loading.is_some()} limit={MAX_INPUT_BYTES} />
                </div>
            </>
        })
    }

    fn view_trace(&self, ctx: &Context<Self>) -> Html {
        if let Some(overview) = self.view_overview(ctx) {
            return overview;
        }
        let Some(c) = &self.current else {
            return html! { <p class="empty">{ "No trace loaded yet: drop one above or try a sample." }</p> };
        };
        let t = &c.trace;
        let nav = View::ALL.iter().map(|&v| {
            let current = (v == self.view).then_some("page");
            html! {
                <li><button type="button" id={format!("nav-{}", v.id())} aria-current={current}
                    onclick={ctx.link().callback(move |_| Msg::Show(v))}>{ v.title() }</button></li>
            }
        });
        let body = match self.view {
            View::Summary => html! {
                <SummaryView trace={t.clone()} save={self.analyses.get("save").cloned().unwrap_or_default()}
                    on_request={ctx.link().callback(Msg::Analyse)} />
            },
            View::Matrix => html! {
                <MatrixView result={c.matrix.clone()} request={self.matrix_request.clone()}
                    on_request={ctx.link().callback(Msg::Matrix)} focus={self.focus.clone()}
                    on_focus={ctx.link().callback(Msg::Focus)} ranks={t.summary.ranks}
                    length_ns={t.summary.end_ns.saturating_sub(t.summary.start_ns)}
                    topology_threshold={self.analyses.get(View::Topology.id()).and_then(topology_threshold)} />
            },
            v => {
                let state = self.analyses.get(v.id()).cloned().unwrap_or_default();
                let on_request = ctx.link().callback(Msg::Analyse);
                let on_focus = ctx.link().callback(Msg::Focus);
                let focus = self.focus.clone();
                match v {
                    View::Topology => {
                        let library = self.library.clone();
                        let on_library = ctx.link().callback(Msg::Library);
                        html! { <TopologyView {state} {on_request} {focus} {on_focus} manage_library=true {library} {on_library} label={t.label.clone()}
                        matrix_threshold={Some(self.matrix_request.threshold_pct)} /> }
                    }
                    View::Logical => {
                        let download = self.analyses.get("logical-download").cloned();
                        let name = self.file_prefix();
                        html! { <LogicalView {state} {on_request} {focus} {on_focus} {download} {name} /> }
                    }
                    View::Patterns => {
                        let search = self.analyses.get("match").cloned();
                        html! {
                            <PatternsView state={state.clone()} on_request={on_request.clone()} focus={focus.clone()} {on_focus}>
                                <PatternSearch state={search} patterns={state} {focus} {on_request} />
                            </PatternsView>
                        }
                    }
                    View::Phases => {
                        html! { <PhasesView {state} {on_request} {focus} {on_focus} trace_start_ns={Some(t.summary.start_ns)} /> }
                    }
                    View::WhatIf => html! { <WhatIfView {state} {on_request} {focus} {on_focus} /> },
                    View::Profile => html! { <ProfileView {state} {on_request} {focus} {on_focus} /> },
                    View::Waits => html! { <WaitsView {state} {on_request} {focus} {on_focus} /> },
                    View::Timeline => html! {
                        <crate::views::timeline::TimelineView answer={c.timeline.clone()}
                            on_query={ctx.link().callback(Msg::Timeline)} request={self.matrix_request.clone()}
                            on_select={ctx.link().callback(Msg::Matrix)} ranks={t.summary.ranks}
                            length_ns={t.summary.end_ns.saturating_sub(t.summary.start_ns)}
                            topology_nodes={self.analyses.get(View::Topology.id()).and_then(crate::views::timeline::topology_nodes)}
                            path={self.analyses.get("critical-path-overlay").and_then(|s| s.result.clone())}
                            on_request={ctx.link().callback(Msg::Analyse)} />
                    },
                    _ => {
                        let on_sample = ctx.link().callback(Msg::CompareSample);
                        let on_sources = ctx.link().callback(Msg::CompareSources);
                        html! { <CompareView {state} {on_request} {on_sample} {on_sources} label={t.label.clone()} /> }
                    }
                }
            }
        };
        html! {
            <>
                <div class="trace-header" id="trace" data-label={t.label.clone()}>
                    <h2 class="trace-title">{ &t.label }</h2>
                    <p>{ format!("{} · {} · {} file{} · {}", t.summary.format, t.source,
                        t.files, if t.files == 1 { "" } else { "s" }, text::bytes(t.bytes)) }</p>
                    { self.view_load_log() }
                </div>
                <nav class="views" aria-label="Views"><ul>
                    { for nav }
                    if c.origin.is_some() {
                        <li><button type="button" id="nav-overview" title="The overview of the whole input: counts, functions, activity of every rank over time; pick a part to load"
                            onclick={ctx.link().callback(|_| Msg::OverviewOfTrace)}>{ "Overview" }</button></li>
                    }
                </ul></nav>
                { self.view_exports(ctx, c) }
                { self.view_selection_note() }
                <div id="view-content" tabindex="-1">{ body }</div>
            </>
        }
    }
}

impl Component for App {
    type Message = Msg;
    type Properties = ();

    fn create(ctx: &Context<Self>) -> Self {
        let mut app = App {
            generation: 0,
            current: None,
            loading: None,
            error: None,
            notice: None,
            view: View::Summary,
            matrix_request: MatrixRequest::default(),
            matrix_seq: 0,
            timeline_seq: 0,
            dragging: false,
            analyses: HashMap::new(),
            analysis_seq: 0,
            focus: Focus::default(),
            library: ReferenceLibrary::default(),
            compare_merge: None,
            sample: None,
            load_log: Vec::new(),
            stored: None,
            stored_compared: None,
            restored_seen: false,
            compare_kept_seq: 0,
            stored_library: serde_json::to_string(&ReferenceLibrary::default()).unwrap_or_default(),
            stored_settings: String::new(),
            settings_kept: false,
            help: false,
            help_focus: HelpFocus::Stay,
            help_opener: None,
            compare_key: None,
            listeners: Vec::new(),
            report_wanted: false,
            tour: None,
            spare: None,
            overview: None,
            show_overview: false,
        };
        app.start(ctx);
        app
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Self::Message) -> bool {
        match msg {
            Msg::Sources(sources) => {
                self.dragging = false;
                self.read_sources(ctx.link(), sources);
            }
            Msg::Sample(s) => self.fetch_sample(ctx.link(), s, None),
            Msg::Listed(generation, label, files) => self.open_listed(ctx, generation, label, files),
            Msg::Restored(restored) => self.restored(ctx, *restored),
            Msg::Forget => {
                let link = ctx.link().clone();
                wasm_bindgen_futures::spawn_local(async move {
                    link.send_message(Msg::Forgotten(persist::forget_all().await));
                });
            }
            Msg::Forgotten(result) => match result {
                Ok(()) => {
                    self.stored = None;
                    self.stored_compared = None;
                    self.settings_kept = false;
                    self.notice = Some(
                        "Stored traces and settings forgotten: the next visit starts afresh. \
                         The trace on screen stays until you close the page."
                            .into(),
                    );
                }
                Err(e) => self.error = Some(e),
            },
            Msg::Kept(result) => match result {
                Ok(kept) => self.stored = kept,
                Err(e) => self.notice = Some(format!("The trace could not be kept for the next visit ({e}).")),
            },
            Msg::KeptCompared(result) => match result {
                Ok(kept) => self.stored_compared = kept,
                Err(e) => {
                    self.stored_compared = None;
                    self.notice = Some(format!("The compared runs could not be kept for the next visit ({e})."));
                }
            },
            // Esc stops a load under way, as its Cancel button does (the help, when open, closes first).
            Msg::Key(key) if key == "Escape" && !self.help && self.loading.is_some() => {
                ctx.link().send_message(Msg::Cancel);
                return false;
            }
            Msg::Key(key) => return self.on_key(key),
            Msg::Popped(route) => {
                let sample = route.sample.as_deref().and_then(samples::find);
                match sample {
                    Some(s) if self.sample.map(|c| c.id) != Some(s.id) => self.fetch_sample(ctx.link(), s, Some(route)),
                    _ => self.apply_route(ctx, route),
                }
            }
            Msg::Help(open) => self.set_help(open),
            Msg::ReadFailed(generation, message) => {
                if !self.is_loading(generation) {
                    return false;
                }
                self.loading = None;
                self.error = Some(message);
            }
            Msg::Worker(generation, response) => {
                let changed = self.on_worker(ctx, generation, response);
                if changed {
                    self.keep_compared(ctx);
                }
                self.sync_address();
                return changed;
            }
            Msg::Cancel => {
                if let Some(l) = self.loading.take() {
                    self.notice = Some(format!("Loading {} was cancelled.", l.label));
                }
                self.prepare_spare(ctx.link(), SPARE_AFTER_LOAD_MS);
            }
            Msg::Show(v) => {
                self.view = v;
                self.ensure_analysis(v);
            }
            Msg::Analyse(request) => self.analyse(request),
            Msg::Focus(f) => self.focus = f,
            Msg::Timeline(q) => {
                self.timeline(q);
                return false;
            }
            Msg::CompareSample(sample) => {
                self.mark_compare_loading(sample.title);
                self.compare_from(sample.title.to_owned(), FileSource::Urls(sample_urls(sample)));
            }
            Msg::CompareSources(sources) => {
                if sources.is_empty() {
                    return false;
                }
                let label = input::label(&sources);
                self.mark_compare_loading(&label);
                let link = ctx.link().clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let listed = input::files_of(sources).await;
                    link.send_message(Msg::CompareListed(label, listed));
                });
            }
            Msg::CompareListed(label, listed) => match listed {
                Ok(listed) => {
                    self.generation += 1;
                    let key = self.generation;
                    let (names, files): (Vec<String>, Array) = (
                        listed.iter().map(|(n, _)| n.clone()).collect(),
                        listed.iter().map(|(_, f)| wasm_bindgen::JsValue::from(f)).collect(),
                    );
                    offer_handles(key, files);
                    if let Some(old) = self.compare_key.replace(key) {
                        release_handles(old);
                    }
                    self.compare_from(label, FileSource::Handles { key, names });
                }
                Err(message) => {
                    let state = self.analyses.entry("compare").or_default();
                    state.pending = false;
                    state.loading = None;
                    state.result = Some(Rc::new(Err(message)));
                }
            },
            Msg::Matrix(request) => {
                let reselected = request.selection != self.matrix_request.selection;
                self.matrix_request = request.clone();
                if let Some(c) = self.current.as_mut() {
                    self.matrix_seq += 1;
                    c.send(Input::Request(Request::Matrix {
                        seq: self.matrix_seq,
                        request,
                    }));
                }
                if reselected {
                    // The worker restricts every analysis to the matrix selection (session.rs):
                    // answers of the previous selection are dropped and the shown view asks again.
                    // The critical-path overlay is the whole run's, whatever the selection.
                    self.analyses
                        .retain(|kind, _| *kind == "compare" || *kind == "critical-path-overlay");
                    self.ensure_analysis(self.view);
                }
            }
            Msg::Dragging(d) => {
                if self.dragging == d {
                    return false;
                }
                self.dragging = d;
            }
            Msg::DismissError => self.error = None,
            Msg::Report => self.report_wanted = true,
            Msg::ReportDone(done) => {
                self.report_wanted = false;
                self.notice = Some(match done {
                    Ok(name) => format!("Saved the report as {name}."),
                    Err(e) => format!("The report could not be written: {e}"),
                });
            }
            Msg::Tour(step) => self.tour_step(ctx, step),
            Msg::PrepareWorker => {
                if self.spare.is_none() && self.loading.is_none() {
                    let generation = Rc::new(Cell::new(0));
                    let bridge = Self::spawn_worker(ctx.link(), generation.clone());
                    self.spare = Some(Spare { bridge, generation });
                }
                return false;
            }
            Msg::ShowOverview(show) => self.show_overview = show && self.overview.is_some(),
            Msg::OverviewOfTrace => {
                let Some(origin) = self.current.as_ref().and_then(|c| c.origin.clone()) else {
                    return false;
                };
                if self.overview.as_ref().and_then(|o| o.origin.as_ref()).map(|o| o.id) == Some(origin.id) {
                    self.show_overview = true;
                } else {
                    let options = OpenOptions {
                        overview: true,
                        ..self.open_options()
                    };
                    self.reopen(ctx, &origin, origin.label.clone(), options);
                }
            }
            Msg::LoadPart(selection) => {
                let Some(origin) = self.overview.as_ref().and_then(|o| o.origin.clone()) else {
                    return false;
                };
                let label = format!("{} ({})", origin.label, text::selection(&selection));
                let options = OpenOptions {
                    part: Some(selection),
                    ..self.open_options()
                };
                self.reopen(ctx, &origin, label, options);
            }
            Msg::Library(library) => {
                self.library = library;
                if let Some(request) = self.analyses.get("topology").and_then(|s| s.request.clone()) {
                    self.analyse(request);
                }
            }
        }
        if self.report_wanted {
            // The report's analyses, asked again if something dropped them (a new selection).
            for v in report::analysis_views() {
                self.ensure_analysis(v);
            }
        }
        self.sync_address();
        true
    }

    fn rendered(&mut self, _ctx: &Context<Self>, _first_render: bool) {
        let document = web_sys::window().and_then(|w| w.document());
        let by_id = |id: &str| {
            document
                .as_ref()
                .and_then(|d| d.get_element_by_id(id))
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        };
        let target = match std::mem::replace(&mut self.help_focus, HelpFocus::Stay) {
            HelpFocus::Stay => return,
            HelpFocus::Into => by_id("help-close"),
            HelpFocus::Back => self
                .help_opener
                .take()
                .filter(|e| e.is_connected())
                .or_else(|| by_id("help-button")),
        };
        if let Some(target) = target {
            let _ = target.focus();
        }
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let state = if self.loading.is_some() { "loading" } else { "idle" };
        html! {
            <div class={classes!("app", self.tour.is_some().then_some("touring"))} data-state={state}>
                <a class="skip-link" href="#view-content" onclick={Callback::from(skip_to_view)}>{ "Skip to the view" }</a>
                <header class="topbar" inert={self.help}>
                    <h1>{ "tracelogic" }</h1>
                    <p class="tagline">{ "What MPI ranks said to each other, from a communication trace." }</p>
                    <button type="button" class="help-button" id="help-button" aria-haspopup="dialog"
                        title="Keyboard shortcuts (?)" onclick={ctx.link().callback(|_| Msg::Help(true))}>{ "?" }</button>
                </header>
                { self.view_help(ctx) }
                <main inert={self.help}>
                    { self.view_input(ctx) }
                    { self.view_trace(ctx) }
                </main>
                { self.view_tour(ctx) }
            </div>
        }
    }
}

/// The answer of every analysis once the shown trace's worker died and a new one could not read
/// the trace again.
const STOPPED: &str = "the analysis worker of this trace stopped and a new one could not read it again (most likely \
    out of memory); open the trace again to run further analyses";

/// Said after a worker's death when a new worker reads the trace again.
const RESTARTED: &str = "A new worker is reading the trace again: the other views keep working.";

/// Whether a worker's failure means its instance died: the loader's message on an uncaught
/// error (a WebAssembly trap, most likely out of memory) or a panic (which traps after reporting).
fn worker_died(message: &str) -> bool {
    message == FATAL_MESSAGE || message.starts_with(crate::worker::PANIC_PREFIX)
}

/// Most stages kept in the load log (one per file read, then the readers' stages).
const MAX_LOG_STAGES: usize = 200;

/// The shortest time between two drawings of a load's progress (ms): ten a second look smooth.
const PROGRESS_EVERY_MS: f64 = 100.0;

/// The page's clock (`performance.now()`, ms), or 0 without one.
fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

/// Add `stage` to a load log; a full log keeps its start, an ellipsis, and the latest stage.
fn log_stage(stages: &mut Vec<String>, stage: &str) {
    if stages.len() < MAX_LOG_STAGES {
        stages.push(stage.to_owned());
    } else {
        stages[MAX_LOG_STAGES - 2] = "…".to_owned();
        stages[MAX_LOG_STAGES - 1] = stage.to_owned();
    }
}

/// Absolute URLs of a sample's files (the worker resolves nothing against the page's address).
fn sample_urls(sample: &Sample) -> Vec<(String, String)> {
    let base = location().and_then(|l| l.href().ok()).unwrap_or_default();
    sample
        .files
        .iter()
        .map(|f| {
            let relative = sample.url(f);
            let url = web_sys::Url::new_with_base(&relative, &base)
                .map(|u| u.href())
                .unwrap_or(relative);
            (format!("{}/{}", sample.id, f), url)
        })
        .collect()
}

/// Platform side of the page: loading through the worker, the address fragment, IndexedDB and
/// the keyboard.
impl App {
    /// First trace and listeners: the sample the address names, else the trace the last visit
    /// stored, else the default sample.
    fn start(&mut self, ctx: &Context<Self>) {
        let (search, hash) = location()
            .map(|l| (l.search().unwrap_or_default(), l.hash().unwrap_or_default()))
            .unwrap_or_default();
        let route = Route::parse(&hash);
        let named = route.sample.is_some() || search.contains("sample=");
        self.apply_settings(&route);
        let mut load_stored = false;
        match samples::start_choice(&search, &hash) {
            StartChoice::Sample(s) if named => self.fetch_sample(ctx.link(), s, Some(route.clone())),
            StartChoice::Sample(_) => load_stored = true,
            StartChoice::Empty => {}
            StartChoice::Unknown(id) => {
                self.error = Some(format!("There is no bundled sample named “{id}”."));
            }
        }
        let link = ctx.link().clone();
        let settings_in_address = route.has_settings();
        wasm_bindgen_futures::spawn_local(async move {
            // Storage can be unavailable (private windows, blocked cookies): start as if empty.
            let trace = persist::load_trace().await.ok().flatten();
            let settings = persist::load_settings()
                .await
                .ok()
                .flatten()
                .filter(|_| !settings_in_address);
            let library = persist::load_value("library").await.ok().flatten();
            let compared = persist::load_compared().await.ok().flatten();
            link.send_message(Msg::Restored(Box::new(Restored {
                load: load_stored,
                trace,
                settings,
                library,
                compared,
            })));
        });
        self.listen(ctx);
        self.prepare_spare(ctx.link(), SPARE_AFTER_START_MS);
    }

    /// Key presses (outside text fields) and back/forward.
    fn listen(&mut self, ctx: &Context<Self>) {
        let Some(window) = web_sys::window() else { return };
        let link = ctx.link().clone();
        let on_key = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
            let Some(e) = e.dyn_ref::<web_sys::KeyboardEvent>() else {
                return;
            };
            if e.ctrl_key() || e.alt_key() || e.meta_key() || e.default_prevented() {
                return;
            }
            let target = e.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok());
            let tag = target.as_ref().map(|el| el.tag_name()).unwrap_or_default();
            let input_type = target
                .as_ref()
                .and_then(|el| el.get_attribute("type"))
                .unwrap_or_default();
            let key = e.key();
            if !route::key_reaches_page(&tag, &input_type, &key) {
                return;
            }
            link.send_message(Msg::Key(key));
        });
        let link = ctx.link().clone();
        let on_pop = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
            let hash = location().and_then(|l| l.hash().ok()).unwrap_or_default();
            link.send_message(Msg::Popped(Route::parse(&hash)));
        });
        let _ = window.add_event_listener_with_callback("keydown", on_key.as_ref().unchecked_ref());
        let _ = window.add_event_listener_with_callback("popstate", on_pop.as_ref().unchecked_ref());
        self.listeners.push(on_key);
        self.listeners.push(on_pop);
    }

    /// What the last visit stored arrived.
    fn restored(&mut self, ctx: &Context<Self>, restored: Restored) {
        self.settings_kept = restored.settings.is_some() || restored.library.is_some();
        if let Some(settings) = &restored.settings {
            self.stored_settings = settings.clone();
            let route = Route::parse(settings);
            self.apply_settings(&route);
            if let Some(l) = self.loading.as_mut() {
                l.route.get_or_insert(route);
            }
        }
        if let Some(json) = &restored.library {
            if let Ok(library) = serde_json::from_str::<ReferenceLibrary>(json) {
                self.stored_library = json.clone();
                self.library = library;
            }
        }
        self.stored = restored.trace.as_ref().map(|t| (t.label.clone(), t.bytes));
        self.stored_compared = restored.compared;
        self.restored_seen = true;
        self.restore_compared();
        if !restored.load || self.loading.is_some() || self.current.is_some() {
            return;
        }
        match restored.trace {
            Some(t) => {
                let route = Route::parse(&self.stored_settings);
                let generation = self.start_load(t.label.clone(), None, Some(route));
                let origin = Origin {
                    id: generation,
                    label: t.label.clone(),
                    files: OriginFiles::Handles(t.names.clone(), t.files.clone()),
                };
                offer_handles(generation, t.files);
                let source = FileSource::Handles {
                    key: generation,
                    names: t.names,
                };
                self.open(ctx.link(), generation, t.label, source, self.open_options());
                if let Some(l) = self.loading.as_mut() {
                    l.origin = Some(origin);
                }
            }
            None => {
                let default = samples::start_choice("", "");
                if let StartChoice::Sample(s) = default {
                    self.fetch_sample(ctx.link(), s, None);
                }
            }
        }
    }

    fn on_key(&mut self, key: String) -> bool {
        match key.as_str() {
            "?" => self.set_help(!self.help),
            "Escape" if self.help => self.set_help(false),
            // The help is modal: keys do not switch the views behind it.
            _ if self.help => return false,
            k => {
                let Some(v) = self.current.as_ref().and(route::view_for_key(k, self.view)) else {
                    return false;
                };
                self.view = v;
                self.ensure_analysis(v);
                self.sync_address();
            }
        }
        true
    }

    /// Compare the shown trace with the files of `source`, which its worker reads.
    fn compare_from(&mut self, label: String, source: FileSource) {
        let Some(c) = &self.current else { return };
        let request = AnalysisRequest::Compare {
            label,
            files: Vec::new(),
        };
        self.analysis_seq += 1;
        let state = self.analyses.entry(request.kind()).or_default();
        state.seq = self.analysis_seq;
        state.pending = true;
        if c.stopped {
            state.pending = false;
            state.loading = None;
            state.result = Some(Rc::new(Err(STOPPED.to_owned())));
            return;
        }
        state.request = None;
        let seq = self.analysis_seq;
        if let Some(c) = self.current.as_mut() {
            c.send(Input::Compare { seq, source, request });
        }
    }

    /// Above every view while a selection is active: what it keeps, so no view's figures are
    /// mistaken for the whole run's (the CLI prints its selection in each report).
    fn view_selection_note(&self) -> Html {
        let described = text::selection(&self.matrix_request.selection);
        if described.is_empty() {
            return Html::default();
        }
        html! {
            <p class="note selection-note" id="selection-note" role="status">
                { format!("Selection active: {described}. Every view shows only the selected calls; the Matrix view's Selection form changes or clears it.") }
            </p>
        }
    }

    /// How the shown trace was read: every stage, from the worker's reading to the matrix.
    fn view_load_log(&self) -> Html {
        if self.load_log.is_empty() {
            return Html::default();
        }
        let in_worker = self.load_log.iter().any(|s| s.ends_with("in the worker"));
        html! {
            <details class="load-log" id="load-log" data-read-in={if in_worker { "worker" } else { "page" }}>
                <summary>{ "How it was read" }</summary>
                <ol>{ for self.load_log.iter().map(|s| html! { <li>{ s }</li> }) }</ol>
            </details>
        }
    }

    /// What this browser keeps for the next visit, with the button that forgets it.
    fn view_stored(&self, ctx: &Context<Self>) -> Html {
        let compared = self
            .stored_compared
            .as_ref()
            .and_then(|c| serde_json::from_str::<Vec<serde_json::Value>>(&c.runs).ok())
            .map_or(0, |runs| runs.len());
        let runs = match compared {
            0 => String::new(),
            1 => "1 compared run".to_owned(),
            n => format!("{n} compared runs"),
        };
        let what = match &self.stored {
            Some((label, bytes)) if compared > 0 => format!(
                "Kept in this browser for the next visit: {label} ({}) and {runs}.",
                text::bytes(*bytes)
            ),
            Some((label, bytes)) => format!(
                "Kept in this browser for the next visit: {label} ({}).",
                text::bytes(*bytes)
            ),
            None if compared > 0 => format!("Kept in this browser for the next visit: {runs}."),
            None if self.settings_kept => "Your view settings are kept in this browser.".to_owned(),
            None => return Html::default(),
        };
        html! {
            <div class="stored" id="stored" data-compared={compared.to_string()}>
                <p>{ what }</p>
                <button type="button" id="forget" onclick={ctx.link().callback(|_| Msg::Forget)}>{ "Forget stored traces" }</button>
            </div>
        }
    }

    /// The keyboard shortcuts, opened with `?`.
    fn view_help(&self, ctx: &Context<Self>) -> Html {
        if !self.help {
            return Html::default();
        }
        let keys = View::ALL
            .iter()
            .enumerate()
            .map(|(i, v)| html! { <tr><td><kbd>{ (i + 1) % 10 }</kbd></td><td>{ v.title() }</td></tr> });
        html! {
            <div class="help-overlay" id="help" role="dialog" aria-modal="true" aria-labelledby="help-title"
                aria-describedby="help-note" onkeydown={Callback::from(trap_tab)}>
                <div class="help-box">
                    <h2 id="help-title">{ "Keyboard shortcuts" }</h2>
                    <table>
                        <tbody>
                            { for keys }
                            <tr><td><kbd>{ "←" }</kbd>{ " " }<kbd>{ "→" }</kbd></td><td>{ "Previous / next view" }</td></tr>
                            <tr><td><kbd>{ "?" }</kbd></td><td>{ "Show or hide this help" }</td></tr>
                            <tr><td><kbd>{ "Esc" }</kbd></td><td>{ "Close this help; cancel a load under way" }</td></tr>
                        </tbody>
                    </table>
                    <p id="help-note">{ "The address keeps the view and the selection: bookmark it, or use back and forward." }</p>
                    <button type="button" id="help-close" onclick={ctx.link().callback(|_| Msg::Help(false))}>{ "Close" }</button>
                </div>
            </div>
        }
    }
}

/// Compared runs across reloads ([`crate::views::compare::keep_after`], [`persist::save_compared`]).
impl App {
    /// Recompare the trace on screen with the runs the last visit kept for it, unless it is
    /// already compared.
    fn restore_compared(&mut self) {
        let (Some(c), Some(kept)) = (&self.current, &self.stored_compared) else {
            return;
        };
        if self.analyses.contains_key("compare") {
            return;
        }
        let owner = crate::views::compare::owner_key(&c.trace);
        if let Some(request) = crate::views::compare::restore_request(&owner, &kept.owner, &kept.runs) {
            self.analyse(request);
        }
    }

    /// Store or drop the compared runs after the compare view's answer changed them.
    fn keep_compared(&mut self, ctx: &Context<Self>) {
        let Some(c) = self.current.as_ref().filter(|_| self.restored_seen) else {
            return;
        };
        let Some(state) = self.analyses.get("compare").filter(|s| !s.pending) else {
            return;
        };
        if state.seq == self.compare_kept_seq {
            return;
        }
        self.compare_kept_seq = state.seq;
        let owner = crate::views::compare::owner_key(&c.trace);
        let kept = self
            .stored_compared
            .as_ref()
            .map(|k| (k.owner.as_str(), k.runs.as_str()));
        let link = ctx.link().clone();
        match crate::views::compare::keep_after(Some(state), &owner, kept) {
            crate::views::compare::Keep::Nothing => {}
            crate::views::compare::Keep::Forget => {
                self.stored_compared = None;
                wasm_bindgen_futures::spawn_local(async move {
                    link.send_message(Msg::KeptCompared(persist::forget_compared().await.map(|_| None)));
                });
            }
            crate::views::compare::Keep::Save(runs) => {
                let kept = StoredComparison {
                    owner,
                    bytes: runs.len() as u64,
                    runs,
                };
                // Marked as kept at once, so the same answer is not stored twice.
                self.stored_compared = Some(kept.clone());
                wasm_bindgen_futures::spawn_local(async move {
                    let saved = persist::save_compared(&kept.owner, &kept.runs).await;
                    link.send_message(Msg::KeptCompared(match saved {
                        Ok(true) => Ok(Some(kept)),
                        Ok(false) => Err(format!(
                            "{} of properties beside the stored trace exceed the {} kept in all",
                            text::bytes(kept.bytes),
                            text::bytes(persist::MAX_STORED_BYTES)
                        )),
                        Err(e) => Err(e),
                    }));
                });
            }
        }
    }
}

/// The export bar, the HTML report and the workshop tour ([`crate::export`], [`crate::report`],
/// [`crate::tour`]).
impl App {
    /// Show step `step` of the tour: its sample (loaded unless on screen or loading) in its view.
    fn tour_step(&mut self, ctx: &Context<Self>, step: Option<usize>) {
        self.tour = step;
        let Some(step) = step.and_then(|i| tour::STEPS.get(i)) else {
            return;
        };
        let Some(sample) = samples::find(step.sample) else {
            return;
        };
        let loading = self.loading.as_ref().and_then(|l| l.sample);
        if self.sample != Some(sample) && loading != Some(sample) {
            self.fetch_sample(ctx.link(), sample, None);
        }
        self.view = step.view;
        self.ensure_analysis(step.view);
    }

    /// The export bar above the view, and the off-screen views of a report being written.
    fn view_exports(&self, ctx: &Context<Self>, c: &Current) -> Html {
        let source = (self.report_wanted && report::ready(&self.analyses)).then(|| {
            html! {
                <ReportSource trace={c.trace.clone()} matrix={c.matrix.clone()} matrix_request={self.matrix_request.clone()}
                    analyses={Rc::new(self.analyses.clone())} on_done={ctx.link().callback(Msg::ReportDone)} />
            }
        });
        html! {
            <>
                <ExportBar view={self.view.id()} on_report={ctx.link().callback(|_| Msg::Report)} report_busy={self.report_wanted}
                    file_prefix={self.file_prefix()} />
                { source.unwrap_or_default() }
            </>
        }
    }

    fn view_tour(&self, ctx: &Context<Self>) -> Html {
        match self.tour {
            Some(step) => html! { <TourPanel {step} on_step={ctx.link().callback(Msg::Tour)} /> },
            None => Html::default(),
        }
    }
}

/// The Topology view's cut as the Matrix view names it (`auto 18.33 %, 192 pairs`), read from
/// its answer when it has one.
fn topology_threshold(state: &AnalysisState) -> Option<String> {
    let Ok(crate::protocol::Answer::Topology(report)) = state.result.as_deref()? else {
        return None;
    };
    let f = &report.filter;
    Some(format!(
        "{} {:.2} %, {} pairs",
        f.mode,
        f.threshold_pct,
        text::count(f.pairs_kept as u64)
    ))
}
