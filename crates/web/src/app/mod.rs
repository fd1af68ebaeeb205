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
//!
//! Layout: [`state`] is the page's state and its pure transitions (unit-tested natively);
//! this file is the Yew component (its messages and their dispatch); [`render`] draws the
//! state; [`workers`] starts the workers and takes their answers; [`loading`] reads dropped,
//! picked or bundled input; [`address`] keeps the address and the keys; [`storage`] what
//! IndexedDB keeps across visits; [`help`] the keyboard help and focus.

use crate::export::ExportBar;
use crate::input::{self, Source};
use crate::persist::{self, StoredComparison, StoredTrace};
use crate::protocol::{AnalysisRequest, MatrixRequest, ReferenceLibrary, Response};
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
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{DragEvent, HtmlInputElement, HtmlSelectElement};
use yew::html::Scope;
use yew::prelude::*;

mod address;
mod help;
mod loading;
mod render;
mod state;
mod storage;
mod workers;

use help::*;
use loading::sample_urls;
use state::{Answered, PageState, Shown};
use workers::*;

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
    /// What the page shows and its rules ([`state`]); loads and the shown trace carry their
    /// workers and files.
    state: PageState<LoadIo, TraceWorker>,
    dragging: bool,
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

/// A number the page was given: `window[global]`, set before the page starts, else the
/// address's `?param=` (tests, and users who want another setting).
fn page_setting(global: &str, param: &str) -> Option<f64> {
    let window = web_sys::window()?;
    let set = js_sys::Reflect::get(&window, &global.into())
        .ok()
        .and_then(|v| v.as_f64());
    set.or_else(|| {
        window
            .location()
            .search()
            .ok()
            .and_then(|s| web_sys::UrlSearchParams::new_with_str(&s).ok())
            .and_then(|p| p.get(param))
            .and_then(|v| v.trim().parse::<f64>().ok())
    })
}

/// The page's full-load limit: inputs over it get the Overview view. [`MAX_INPUT_BYTES`], or less
/// when the page's address has `?full-load-limit=BYTES` or the page sets
/// `window.__tracelogicFullLoadLimit` before it starts (tests; never more than
/// [`MAX_INPUT_BYTES`]).
pub fn full_load_limit() -> u64 {
    match page_setting("__tracelogicFullLoadLimit", "full-load-limit") {
        Some(v) if v.is_finite() && v >= 0.0 => (v as u64).min(MAX_INPUT_BYTES),
        _ => MAX_INPUT_BYTES,
    }
}

/// Workers that compute an overview: 0 (as many as the machine has cores) unless the page's
/// address has `?overview-workers=N` or the page sets `window.__tracelogicOverviewWorkers`
/// before it starts (tests, and users who want to keep cores free).
pub fn overview_workers() -> u32 {
    match page_setting("__tracelogicOverviewWorkers", "overview-workers") {
        Some(v) if v.is_finite() && v >= 1.0 => v.min(crate::overview_pool::MAX_WORKERS as f64) as u32,
        _ => 0,
    }
}

/// Workers that read a whole DUMPI or OTF2 load, one block of ranks each
/// ([`crate::load_pool`]): 1 (the load's worker alone: on the 2-core machines measured the pool
/// was slower, docs/large-traces.md) unless the page's address has `?load-workers=N` (0: as many
/// as the machine has cores) or the page sets `window.__tracelogicLoadWorkers` before it starts.
pub fn load_workers() -> u32 {
    match page_setting("__tracelogicLoadWorkers", "load-workers") {
        Some(v) if v.is_finite() && v >= 0.0 => v.min(crate::overview_pool::MAX_WORKERS as f64) as u32,
        _ => 1,
    }
}

/// Workers that execute the what-if's configurations, one share each
/// ([`crate::whatif_pool`]): 1 (the page's worker replays alone: on the 2-core machine measured
/// the pool was slower, docs/replay.md §7) unless the page's address has `?whatif-workers=N` (0:
/// as many as the machine has cores) or the page sets `window.__tracelogicWhatIfWorkers` before
/// it starts.
pub fn whatif_workers() -> u32 {
    match page_setting("__tracelogicWhatIfWorkers", "whatif-workers") {
        Some(v) if v.is_finite() && v >= 0.0 => v.min(crate::overview_pool::MAX_WORKERS as f64) as u32,
        _ => 1,
    }
}

impl Component for App {
    type Message = Msg;
    type Properties = ();

    fn create(ctx: &Context<Self>) -> Self {
        let mut app = App {
            state: PageState::default(),
            dragging: false,
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
                    self.state.notice = Some(
                        "Stored traces and settings forgotten: the next visit starts afresh. \
                         The trace on screen stays until you close the page."
                            .into(),
                    );
                }
                Err(e) => self.state.error = Some(e),
            },
            Msg::Kept(result) => match result {
                Ok(kept) => self.stored = kept,
                Err(e) => self.state.notice = Some(format!("The trace could not be kept for the next visit ({e}).")),
            },
            Msg::KeptCompared(result) => match result {
                Ok(kept) => self.stored_compared = kept,
                Err(e) => {
                    self.stored_compared = None;
                    self.state.notice = Some(format!("The compared runs could not be kept for the next visit ({e})."));
                }
            },
            // Esc stops a load under way, as its Cancel button does (the help, when open, closes first).
            Msg::Key(key) if key == "Escape" && !self.help && self.state.loading.is_some() => {
                ctx.link().send_message(Msg::Cancel);
                return false;
            }
            Msg::Key(key) => return self.on_key(key),
            Msg::Popped(route) => {
                let sample = route.sample.as_deref().and_then(samples::find);
                match sample {
                    Some(s) if self.state.sample.map(|c| c.id) != Some(s.id) => {
                        self.fetch_sample(ctx.link(), s, Some(route))
                    }
                    _ => self.apply_route(ctx, route),
                }
            }
            Msg::Help(open) => self.set_help(open),
            Msg::ReadFailed(generation, message) => {
                if !self.state.read_failed(generation, message) {
                    return false;
                }
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
                self.state.cancel();
                self.prepare_spare(ctx.link(), SPARE_AFTER_LOAD_MS);
            }
            Msg::Show(v) => {
                self.state.view = v;
                self.ensure_analysis(v);
            }
            Msg::Analyse(request) => self.analyse(request),
            Msg::Focus(f) => self.state.focus = f,
            Msg::Timeline(q) => {
                self.timeline(q);
                return false;
            }
            Msg::CompareSample(sample) => {
                self.state.mark_compare_loading(sample.title);
                self.compare_from(sample.title.to_owned(), FileSource::Urls(sample_urls(sample)));
            }
            Msg::CompareSources(sources) => {
                if sources.is_empty() {
                    return false;
                }
                let label = input::label(&sources);
                self.state.mark_compare_loading(&label);
                let link = ctx.link().clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let listed = input::files_of(sources).await;
                    link.send_message(Msg::CompareListed(label, listed));
                });
            }
            Msg::CompareListed(label, listed) => match listed {
                Ok(listed) => {
                    self.state.generation += 1;
                    let key = self.state.generation;
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
                Err(message) => self.state.compare_failed(message),
            },
            Msg::Matrix(request) => {
                let change = self.state.set_matrix(request);
                if let Some(request) = change.send {
                    self.send(Input::Request(request));
                }
                if change.reselected {
                    // The worker restricts every analysis to the matrix selection (session.rs):
                    // the shown view asks again.
                    self.ensure_analysis(self.state.view);
                }
            }
            Msg::Dragging(d) => {
                if self.dragging == d {
                    return false;
                }
                self.dragging = d;
            }
            Msg::DismissError => self.state.error = None,
            Msg::Report => self.report_wanted = true,
            Msg::ReportDone(done) => {
                self.report_wanted = false;
                self.state.notice = Some(match done {
                    Ok(name) => format!("Saved the report as {name}."),
                    Err(e) => format!("The report could not be written: {e}"),
                });
            }
            Msg::Tour(step) => self.tour_step(ctx, step),
            Msg::PrepareWorker => {
                self.spawn_spare(ctx.link());
                return false;
            }
            Msg::ShowOverview(show) => self.show_overview = show && self.overview.is_some(),
            Msg::OverviewOfTrace => {
                let Some(origin) = self.state.current.as_ref().and_then(|c| c.io.origin.clone()) else {
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
                self.state.library = library;
                if let Some(request) = self.state.analyses.get("topology").and_then(|s| s.request.clone()) {
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
        let state = if self.state.loading.is_some() {
            "loading"
        } else {
            "idle"
        };
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
