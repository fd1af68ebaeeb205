//! The page shell: input (drop zone, pickers, sample menu), progress and cancel, errors, the
//! navigation bar and the current view.
//!
//! Every load runs in its own worker. The page keeps the worker of the trace on screen until a
//! new load succeeds, so a failed or cancelled load leaves the shown trace (and its worker,
//! which answers matrix requests) untouched. Cancelling drops the loading worker at once; the
//! page is free immediately.

use crate::input::{self, Source};
use crate::protocol::{
    AnalysisAnswer, AnalysisRequest, LoadedTrace, MatrixRequest, MatrixView as MatrixResult, ProgressReport, Request,
    Response, WireFile,
};
use crate::samples::{self, Sample, StartChoice, SAMPLES};
use crate::text;
use crate::views::compare::CompareView;
use crate::views::logical::LogicalView;
use crate::views::matrix::MatrixView;
use crate::views::patterns::PatternsView;
use crate::views::phases::PhasesView;
use crate::views::summary::SummaryView;
use crate::views::topology::TopologyView;
use crate::views::whatif::WhatIfView;
use crate::views::{AnalysisState, Focus, View};
use crate::worker::{AnalysisWorker, LOADER};
use gloo::worker::{Spawnable, WorkerBridge};
use std::collections::HashMap;
use std::rc::Rc;
use web_sys::{DragEvent, HtmlInputElement, HtmlSelectElement};
use yew::html::Scope;
use yew::prelude::*;

/// The trace on screen and the worker that holds it.
struct Current {
    generation: u64,
    bridge: WorkerBridge<AnalysisWorker>,
    trace: Rc<LoadedTrace>,
    matrix: Rc<MatrixResult>,
}

/// A load under way: first the page reads the files, then a fresh worker parses them.
struct Loading {
    generation: u64,
    label: String,
    bridge: Option<WorkerBridge<AnalysisWorker>>,
    progress: ProgressReport,
}

/// Messages of [`App`].
pub enum Msg {
    /// Files or folders were dropped or picked.
    Sources(Vec<Source>),
    /// The user picked a bundled sample.
    Sample(&'static Sample),
    /// The page read part of the input.
    ReadProgress(u64, ProgressReport),
    /// The page read all input; hand it to a worker.
    Read(u64, String, Vec<WireFile>),
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
    /// The second trace of a comparison is read; hand it to the worker.
    CompareRead(u64, String, Vec<WireFile>),
    /// The rank, pattern or phase selected in one view (carried to the others).
    Focus(Focus),
    /// A drag entered or left the drop zone.
    Dragging(bool),
    /// Close the error message.
    DismissError,
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
    dragging: bool,
    analyses: HashMap<&'static str, AnalysisState>,
    analysis_seq: u64,
    focus: Focus,
}

fn location() -> Option<web_sys::Location> {
    web_sys::window().map(|w| w.location())
}

/// Remember the chosen sample in the address (`#sample=ID`), or forget it for other input.
fn set_sample_in_address(sample: Option<&Sample>) {
    let Some(window) = web_sys::window() else { return };
    let loc = window.location();
    let base = format!(
        "{}{}",
        loc.pathname().unwrap_or_default(),
        loc.search().unwrap_or_default()
    );
    let url = match sample {
        Some(s) => format!("{base}#sample={}", s.id),
        None => base,
    };
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}

impl App {
    fn start_load(&mut self, label: String) -> u64 {
        self.generation += 1;
        self.loading = Some(Loading {
            generation: self.generation,
            label,
            bridge: None,
            progress: ProgressReport {
                stage: "reading files".into(),
                bytes_done: 0,
                bytes_total: 0,
            },
        });
        self.notice = None;
        self.generation
    }

    fn is_loading(&self, generation: u64) -> bool {
        self.loading.as_ref().is_some_and(|l| l.generation == generation)
    }

    fn read_sources(&mut self, link: &Scope<App>, sources: Vec<Source>) {
        if sources.is_empty() {
            self.error = Some("Nothing to load: the drop held no files.".into());
            return;
        }
        let label = input::label(&sources);
        let generation = self.start_load(label.clone());
        set_sample_in_address(None);
        let link = link.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let listed = match input::files_of(sources).await {
                Ok(l) => l,
                Err(e) => return link.send_message(Msg::ReadFailed(generation, e)),
            };
            if listed.is_empty() {
                return link.send_message(Msg::ReadFailed(
                    generation,
                    format!("{label}: the folder holds no files"),
                ));
            }
            let total: u64 = listed.iter().map(|(_, f)| f.size() as u64).sum();
            let mut files = Vec::with_capacity(listed.len());
            let mut done = 0u64;
            for (name, file) in &listed {
                link.send_message(Msg::ReadProgress(
                    generation,
                    ProgressReport {
                        stage: format!("reading {name}"),
                        bytes_done: done,
                        bytes_total: total,
                    },
                ));
                match input::read(name, file).await {
                    Ok(f) => {
                        done += f.bytes.len() as u64;
                        files.push(f);
                    }
                    Err(e) => return link.send_message(Msg::ReadFailed(generation, e)),
                }
            }
            link.send_message(Msg::Read(generation, label, files));
        });
    }

    fn fetch_sample(&mut self, link: &Scope<App>, sample: &'static Sample) {
        let generation = self.start_load(sample.title.to_owned());
        set_sample_in_address(Some(sample));
        let link = link.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let mut files = Vec::with_capacity(sample.files.len());
            let mut done = 0u64;
            for name in sample.files {
                link.send_message(Msg::ReadProgress(
                    generation,
                    ProgressReport {
                        stage: format!("fetching {name}"),
                        bytes_done: done,
                        bytes_total: 0,
                    },
                ));
                match input::fetch_sample_file(sample, name).await {
                    Ok(f) => {
                        done += f.bytes.len() as u64;
                        files.push(f);
                    }
                    Err(e) => return link.send_message(Msg::ReadFailed(generation, e)),
                }
            }
            link.send_message(Msg::Read(generation, sample.title.to_owned(), files));
        });
    }

    fn spawn_worker(link: &Scope<App>, generation: u64) -> WorkerBridge<AnalysisWorker> {
        let link = link.clone();
        AnalysisWorker::spawner()
            .callback(move |response| link.send_message(Msg::Worker(generation, response)))
            .spawn_with_loader(LOADER)
    }

    fn on_worker(&mut self, generation: u64, response: Response) -> bool {
        if self.is_loading(generation) {
            match response {
                Response::Progress(p) => {
                    if let Some(l) = self.loading.as_mut() {
                        l.progress = p;
                    }
                }
                Response::Loaded { trace, matrix } => {
                    let loading = self.loading.take().expect("checked above");
                    let Some(bridge) = loading.bridge else { return false };
                    self.matrix_request = matrix.request.clone();
                    self.matrix_seq = 0;
                    self.analyses.clear();
                    self.focus = Focus::default();
                    self.current = Some(Current {
                        generation,
                        bridge,
                        trace: Rc::from(trace),
                        matrix: Rc::from(matrix),
                    });
                    self.error = None;
                    self.ensure_analysis(self.view);
                }
                Response::Failed(f) => {
                    let label = self.loading.take().map(|l| l.label).unwrap_or_default();
                    if f.cancelled {
                        self.notice = Some(format!("Loading {label} was cancelled."));
                    } else {
                        self.error = Some(f.message);
                    }
                }
                Response::Matrix(_) | Response::Analysis(_) => return false,
            }
            return true;
        }
        let Some(current) = self.current.as_mut().filter(|c| c.generation == generation) else {
            return false;
        };
        match response {
            Response::Matrix(m) if m.seq == self.matrix_seq => current.matrix = Rc::from(m),
            Response::Analysis(a) => return self.on_analysis(*a),
            Response::Failed(f) => {
                // A worker panic answers whatever was running: no pending view waits forever.
                for state in self.analyses.values_mut().filter(|s| s.pending) {
                    state.pending = false;
                    state.result = Some(Rc::new(Err(f.message.clone())));
                }
                self.error = Some(f.message);
            }
            _ => return false,
        }
        true
    }

    fn on_analysis(&mut self, answer: AnalysisAnswer) -> bool {
        let Some(state) = self.analyses.values_mut().find(|s| s.seq == answer.seq) else {
            return false;
        };
        state.pending = false;
        state.result = Some(Rc::new(answer.result));
        true
    }

    /// Send `request` to the worker of the shown trace and mark its view as waiting.
    fn analyse(&mut self, request: AnalysisRequest) {
        let Some(c) = &self.current else { return };
        self.analysis_seq += 1;
        let state = self.analyses.entry(request.kind()).or_default();
        state.seq = self.analysis_seq;
        state.pending = true;
        state.request = (!matches!(request, AnalysisRequest::Compare { .. })).then(|| request.clone());
        c.bridge.send(Request::Analyse {
            seq: self.analysis_seq,
            request,
        });
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
                    <p class="hint">{ "Drop trace files, a trace folder or an archive (.tar, .tar.gz, .zip) here" }</p>
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
                    </div>
                </div>
                { self.view_progress(ctx) }
                { self.view_messages(ctx) }
            </section>
        }
    }

    fn mark_compare_loading(&mut self, label: &str) {
        let state = self.analyses.entry("compare").or_default();
        state.pending = true;
        state.request = None;
        state.result = None;
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

    fn view_trace(&self, ctx: &Context<Self>) -> Html {
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
            View::Summary => html! { <SummaryView trace={t.clone()} /> },
            View::Matrix => html! {
                <MatrixView result={c.matrix.clone()} request={self.matrix_request.clone()}
                    on_request={ctx.link().callback(Msg::Matrix)} />
            },
            v => {
                let state = self.analyses.get(v.id()).cloned().unwrap_or_default();
                let on_request = ctx.link().callback(Msg::Analyse);
                let on_focus = ctx.link().callback(Msg::Focus);
                let focus = self.focus.clone();
                match v {
                    View::Topology => html! { <TopologyView {state} {on_request} {focus} {on_focus} /> },
                    View::Logical => html! { <LogicalView {state} {on_request} {focus} {on_focus} /> },
                    View::Patterns => html! { <PatternsView {state} {on_request} {focus} {on_focus} /> },
                    View::Phases => html! { <PhasesView {state} {on_request} {focus} {on_focus} /> },
                    View::WhatIf => html! { <WhatIfView {state} {on_request} {focus} {on_focus} /> },
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
                </div>
                <nav class="views" aria-label="Views"><ul>{ for nav }</ul></nav>
                { body }
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
            dragging: false,
            analyses: HashMap::new(),
            analysis_seq: 0,
            focus: Focus::default(),
        };
        let (search, hash) = location()
            .map(|l| (l.search().unwrap_or_default(), l.hash().unwrap_or_default()))
            .unwrap_or_default();
        match samples::start_choice(&search, &hash) {
            StartChoice::Sample(s) => app.fetch_sample(ctx.link(), s),
            StartChoice::Empty => {}
            StartChoice::Unknown(id) => {
                app.error = Some(format!("There is no bundled sample named “{id}”."));
            }
        }
        app
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Self::Message) -> bool {
        match msg {
            Msg::Sources(sources) => {
                self.dragging = false;
                self.read_sources(ctx.link(), sources);
            }
            Msg::Sample(s) => self.fetch_sample(ctx.link(), s),
            Msg::ReadProgress(generation, p) => match self.loading.as_mut() {
                Some(l) if l.generation == generation => l.progress = p,
                _ => return false,
            },
            Msg::Read(generation, label, files) => {
                if !self.is_loading(generation) {
                    return false;
                }
                let bridge = Self::spawn_worker(ctx.link(), generation);
                bridge.send(Request::Load {
                    label,
                    files,
                    matrix: MatrixRequest {
                        selection: Default::default(),
                        ..self.matrix_request.clone()
                    },
                });
                if let Some(l) = self.loading.as_mut() {
                    l.bridge = Some(bridge);
                    l.progress.stage = "parsing".into();
                }
            }
            Msg::ReadFailed(generation, message) => {
                if !self.is_loading(generation) {
                    return false;
                }
                self.loading = None;
                self.error = Some(message);
            }
            Msg::Worker(generation, response) => return self.on_worker(generation, response),
            Msg::Cancel => {
                if let Some(l) = self.loading.take() {
                    self.notice = Some(format!("Loading {} was cancelled.", l.label));
                }
            }
            Msg::Show(v) => {
                self.view = v;
                self.ensure_analysis(v);
            }
            Msg::Analyse(request) => self.analyse(request),
            Msg::Focus(f) => self.focus = f,
            Msg::CompareSample(sample) => {
                self.generation += 1;
                let generation = self.generation;
                self.mark_compare_loading(sample.title);
                let link = ctx.link().clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let mut files = Vec::with_capacity(sample.files.len());
                    for name in sample.files {
                        match input::fetch_sample_file(sample, name).await {
                            Ok(f) => files.push(f),
                            Err(e) => {
                                return link.send_message(Msg::CompareRead(
                                    generation,
                                    format!("error:{e}"),
                                    Vec::new(),
                                ))
                            }
                        }
                    }
                    link.send_message(Msg::CompareRead(generation, sample.title.to_owned(), files));
                });
            }
            Msg::CompareSources(sources) => {
                if sources.is_empty() {
                    return false;
                }
                self.generation += 1;
                let generation = self.generation;
                let label = input::label(&sources);
                self.mark_compare_loading(&label);
                let link = ctx.link().clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let listed = match input::files_of(sources).await {
                        Ok(l) => l,
                        Err(e) => {
                            return link.send_message(Msg::CompareRead(generation, format!("error:{e}"), Vec::new()))
                        }
                    };
                    let mut files = Vec::with_capacity(listed.len());
                    for (name, file) in &listed {
                        match input::read(name, file).await {
                            Ok(f) => files.push(f),
                            Err(e) => {
                                return link.send_message(Msg::CompareRead(
                                    generation,
                                    format!("error:{e}"),
                                    Vec::new(),
                                ))
                            }
                        }
                    }
                    link.send_message(Msg::CompareRead(generation, label, files));
                });
            }
            Msg::CompareRead(_, label, files) => {
                if let Some(message) = label.strip_prefix("error:") {
                    let state = self.analyses.entry("compare").or_default();
                    state.pending = false;
                    state.result = Some(Rc::new(Err(message.to_owned())));
                } else {
                    self.analyse(AnalysisRequest::Compare { label, files });
                }
            }
            Msg::Matrix(request) => {
                self.matrix_request = request.clone();
                if let Some(c) = &self.current {
                    self.matrix_seq += 1;
                    c.bridge.send(Request::Matrix {
                        seq: self.matrix_seq,
                        request,
                    });
                }
            }
            Msg::Dragging(d) => {
                if self.dragging == d {
                    return false;
                }
                self.dragging = d;
            }
            Msg::DismissError => self.error = None,
        }
        true
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let state = if self.loading.is_some() { "loading" } else { "idle" };
        html! {
            <div class="app" data-state={state}>
                <header class="topbar">
                    <h1>{ "tracelogic" }</h1>
                    <p class="tagline">{ "What MPI ranks said to each other, from a communication trace." }</p>
                </header>
                <main>
                    { self.view_input(ctx) }
                    { self.view_trace(ctx) }
                </main>
            </div>
        }
    }
}
