//! The page's state and its pure transitions: what is loading, the trace on screen, the view,
//! the matrix selection, each view's analysis and the messages shown.
//!
//! Nothing here touches the browser: the [`App`](super::App) component holds the platform side
//! (worker bridges, `File` handles, IndexedDB, the address bar) as the `io` of a [`Load`] and a
//! [`Shown`] trace, and turns what these transitions return (a [`Request`] to send, a view to
//! ask again) into messages. So the rules of the page — stale answers are dropped, a failed or
//! cancelled load keeps the trace on screen, a new selection drops the answers of the previous
//! one, the address names the whole state — are native unit tests (below).

use crate::protocol::{
    AnalysisAnswer, AnalysisRequest, Failure, LoadedTrace, MatrixRequest, MatrixView as MatrixResult, ProgressReport,
    ReferenceLibrary, Request, TimelineAnswer, WorkingReport,
};
use crate::route::Route;
use crate::samples::Sample;
use crate::text;
use crate::views::{AnalysisState, Focus, View};
use std::collections::HashMap;
use std::rc::Rc;
use tracelogic_engine::timeline::TimelineQuery;

/// The answer of every analysis once the shown trace's worker died and a new one could not read
/// the trace again.
pub(super) const STOPPED: &str =
    "the analysis worker of this trace stopped and a new one could not read it again (most likely \
    out of memory); open the trace again to run further analyses";

/// Said after a worker's death when a new worker reads the trace again.
pub(super) const RESTARTED: &str = "A new worker is reading the trace again: the other views keep working.";

/// Most stages kept in the load log (one per file read, then the readers' stages).
pub(super) const MAX_LOG_STAGES: usize = 200;

/// The shortest time between two drawings of a load's progress (ms): ten a second look smooth.
pub(super) const PROGRESS_EVERY_MS: f64 = 100.0;

/// A load under way: first the page reads the files, then a fresh worker parses them. `Io` is
/// what the platform side keeps for it (the worker, the files).
pub(super) struct Load<Io> {
    pub generation: u64,
    pub label: String,
    pub progress: ProgressReport,
    /// Every stage reported so far (shown afterwards as "how this trace was read").
    pub stages: Vec<String>,
    /// The bundled sample being loaded, if it is one.
    pub sample: Option<&'static Sample>,
    /// When the progress was last drawn (`performance.now()`, ms), see [`PROGRESS_EVERY_MS`].
    pub progress_drawn_at: f64,
    /// The navigation state to restore once the trace is in (start-up, back/forward).
    pub route: Option<Route>,
    pub io: Io,
}

/// The trace on screen. `Io` is the worker that holds it.
pub(super) struct Shown<Io> {
    pub generation: u64,
    pub trace: Rc<LoadedTrace>,
    pub matrix: Rc<MatrixResult>,
    /// The worker died twice (the new worker died while reading the trace again, most likely
    /// out of memory): the trace stays on screen, new analyses answer at once.
    pub stopped: bool,
    /// The timeline view's latest tile.
    pub timeline: Option<Rc<TimelineAnswer>>,
    pub io: Io,
}

/// What a new matrix request changes: the request to send to the shown trace's worker, and
/// whether the selection changed (the shown view then asks for its analysis again).
#[derive(Debug, PartialEq)]
pub(super) struct MatrixChange {
    pub send: Option<Request>,
    pub reselected: bool,
}

/// What an analysis answer does.
#[derive(Debug, PartialEq)]
pub(super) enum Answered {
    /// No view waits for it (stale, or its view's answers were dropped): nothing to draw.
    Stale,
    /// Its view shows it.
    Shown,
    /// A run read from files joins the runs compared before: this request compares them all.
    CompareAgain(AnalysisRequest),
}

/// The page's state. `L` and `S` are the platform parts of a load and of the trace on screen
/// (`()` in the tests).
pub(super) struct PageState<L, S> {
    /// Number of the latest load (answers of other loads' workers are dropped).
    pub generation: u64,
    pub loading: Option<Load<L>>,
    pub current: Option<Shown<S>>,
    pub error: Option<String>,
    pub notice: Option<String>,
    pub view: View,
    pub matrix_request: MatrixRequest,
    pub matrix_seq: u64,
    /// Number of the latest timeline tile asked for.
    pub timeline_seq: u64,
    pub analyses: HashMap<&'static str, AnalysisState>,
    pub analysis_seq: u64,
    pub focus: Focus,
    /// The user's topology reference patterns, sent with every topology identification.
    pub library: ReferenceLibrary,
    /// Runs compared before the comparison under way, to merge with its answer.
    pub compare_merge: Option<Vec<tracelogic_analysis::similarity::RunProperties>>,
    /// The bundled sample on screen, if the trace is one (written to the address).
    pub sample: Option<&'static Sample>,
    /// The stages of the shown trace's load.
    pub load_log: Vec<String>,
}

impl<L, S> Default for PageState<L, S> {
    fn default() -> Self {
        PageState {
            generation: 0,
            loading: None,
            current: None,
            error: None,
            notice: None,
            view: View::Summary,
            matrix_request: MatrixRequest::default(),
            matrix_seq: 0,
            timeline_seq: 0,
            analyses: HashMap::new(),
            analysis_seq: 0,
            focus: Focus::default(),
            library: ReferenceLibrary::default(),
            compare_merge: None,
            sample: None,
            load_log: Vec::new(),
        }
    }
}

/// Add `stage` to a load log; a full log keeps its start, an ellipsis, and the latest stage.
pub(super) fn log_stage(stages: &mut Vec<String>, stage: &str) {
    if stages.len() < MAX_LOG_STAGES {
        stages.push(stage.to_owned());
    } else {
        stages[MAX_LOG_STAGES - 2] = "…".to_owned();
        stages[MAX_LOG_STAGES - 1] = stage.to_owned();
    }
}

/// Loading: start, progress, failure, cancel, success.
impl<L, S> PageState<L, S> {
    /// A new load (its platform part empty until the page has handed it the files): its
    /// generation. The trace on screen stays until it succeeds.
    pub fn start_load(&mut self, label: String, sample: Option<&'static Sample>, route: Option<Route>) -> u64
    where
        L: Default,
    {
        self.generation += 1;
        self.loading = Some(Load {
            generation: self.generation,
            label,
            progress: ProgressReport {
                stage: "listing files".into(),
                bytes_done: 0,
                bytes_total: 0,
            },
            stages: Vec::new(),
            sample,
            progress_drawn_at: f64::NEG_INFINITY,
            route,
            io: L::default(),
        });
        self.notice = None;
        self.generation
    }

    /// Load `generation` is the one under way.
    pub fn is_loading(&self, generation: u64) -> bool {
        self.loading.as_ref().is_some_and(|l| l.generation == generation)
    }

    /// A progress report of the load under way at `now_ms`: every stage is logged; whether to
    /// draw it (at most one drawing every [`PROGRESS_EVERY_MS`], so the page's rendering does
    /// not take a core from the worker).
    pub fn progress(&mut self, p: ProgressReport, now_ms: f64) -> bool {
        let Some(l) = self.loading.as_mut() else { return false };
        if l.stages.last() != Some(&p.stage) {
            log_stage(&mut l.stages, &p.stage);
        }
        l.progress = p;
        if now_ms - l.progress_drawn_at < PROGRESS_EVERY_MS {
            return false;
        }
        l.progress_drawn_at = now_ms;
        true
    }

    /// The load under way failed or was cancelled (in the worker): the trace on screen stays.
    pub fn load_failed(&mut self, f: Failure) -> Option<Load<L>> {
        let load = self.loading.take();
        let label = load.as_ref().map(|l| l.label.as_str()).unwrap_or_default();
        if f.cancelled {
            self.notice = Some(format!("Loading {label} was cancelled."));
        } else {
            self.error = Some(f.message);
        }
        load
    }

    /// Reading the input of load `generation` failed on the page, before a worker saw it;
    /// false (nothing changes) when that load is no longer the one under way.
    pub fn read_failed(&mut self, generation: u64, message: String) -> bool {
        if !self.is_loading(generation) {
            return false;
        }
        self.loading = None;
        self.error = Some(message);
        true
    }

    /// The user stopped the load under way.
    pub fn cancel(&mut self) -> Option<Load<L>> {
        let load = self.loading.take();
        if let Some(l) = &load {
            self.notice = Some(format!("Loading {} was cancelled.", l.label));
        }
        load
    }

    /// Put the trace that load `generation` read on screen (its worker `io`): the previous
    /// trace's analyses, selection and focus go, the matrix settings are the answer's, and
    /// `route` (if any) is applied. True when the route changed the matrix settings (the page
    /// then asks for that matrix).
    pub fn show_loaded(
        &mut self,
        generation: u64,
        mut trace: LoadedTrace,
        matrix: MatrixResult,
        load: (Option<&'static Sample>, Vec<String>, Option<Route>),
        io: S,
    ) -> bool {
        let (sample, stages, route) = load;
        trace.label = text::trace_name(&trace.label, &trace.source);
        self.sample = sample;
        self.load_log = stages;
        self.matrix_request = matrix.request.clone();
        self.matrix_seq = 0;
        self.analyses.clear();
        self.focus = Focus::default();
        self.current = Some(Shown {
            generation,
            trace: Rc::from(trace),
            matrix: Rc::from(matrix),
            stopped: false,
            timeline: None,
            io,
        });
        self.error = None;
        route.is_some_and(|route| self.apply_route(route))
    }
}

/// Analyses, matrix and timeline requests, and their answers.
impl<L, S> PageState<L, S> {
    /// Give view `kind` the next request number and mark it waiting; when the shown trace's
    /// worker `stopped`, answer it with [`STOPPED`] at once instead (`None`).
    fn number(&mut self, kind: &'static str, stopped: bool) -> Option<&mut AnalysisState> {
        self.analysis_seq += 1;
        let state = self.analyses.entry(kind).or_default();
        state.seq = self.analysis_seq;
        state.pending = !stopped;
        state.working = None;
        if stopped {
            state.loading = None;
            state.result = Some(Rc::new(Err(STOPPED.to_owned())));
            return None;
        }
        Some(state)
    }

    /// Mark `request`'s view as waiting and number it: the request to send to the shown trace's
    /// worker, or `None` without a trace, or when its worker stopped (the view then shows
    /// [`STOPPED`] at once).
    pub fn begin_analysis(&mut self, request: AnalysisRequest) -> Option<Request> {
        let stopped = self.current.as_ref()?.stopped;
        let request = request.with_library(&self.library);
        let state = self.number(request.kind(), stopped)?;
        // Comparisons carry a whole trace: not kept.
        state.request = (!matches!(
            request,
            AnalysisRequest::Compare { .. } | AnalysisRequest::CompareRuns { .. }
        ))
        .then(|| request.clone());
        Some(Request::Analyse {
            seq: self.analysis_seq,
            request,
            selection: Some(self.matrix_request.selection.clone()),
        })
    }

    /// Number a comparison of the shown trace with the files of a further trace `label`: its
    /// number and request (without files), or `None` as [`PageState::begin_analysis`].
    pub fn begin_compare(&mut self, label: String) -> Option<(u64, AnalysisRequest)> {
        let stopped = self.current.as_ref()?.stopped;
        let request = AnalysisRequest::Compare {
            label,
            files: Vec::new(),
        };
        let state = self.number(request.kind(), stopped)?;
        state.request = None;
        Some((self.analysis_seq, request))
    }

    /// The compare view reads a further trace `label`: the runs it shows now are merged with
    /// that trace's answer.
    pub fn mark_compare_loading(&mut self, label: &str) {
        if let Some(runs) = crate::views::compare::compared_runs(self.analyses.get("compare")) {
            self.compare_merge = Some(runs);
        }
        let state = self.analyses.entry("compare").or_default();
        state.pending = true;
        state.request = None;
        state.loading = Some(label.to_owned());
    }

    /// Listing the further trace's files failed: the compare view shows why.
    pub fn compare_failed(&mut self, message: String) {
        let state = self.analyses.entry("compare").or_default();
        state.pending = false;
        state.loading = None;
        state.result = Some(Rc::new(Err(message)));
    }

    /// The request `view` makes when it has no analysis yet.
    pub fn missing_analysis(&self, view: View) -> Option<AnalysisRequest> {
        view.default_request().filter(|r| !self.analyses.contains_key(r.kind()))
    }

    /// The view whose request `answer` answers (its state holds the request's number).
    pub fn answered_view(&self, answer: &AnalysisAnswer) -> Option<&'static str> {
        self.analyses
            .iter()
            .find(|(_, s)| s.seq == answer.seq)
            .map(|(view, _)| *view)
    }

    /// An analysis answer of the shown trace's worker.
    pub fn take_answer(&mut self, answer: AnalysisAnswer) -> Answered {
        let Some(view) = self.answered_view(&answer) else {
            return Answered::Stale;
        };
        if view == "compare" {
            let earlier = self.compare_merge.take().unwrap_or_default();
            if let Some(next) = crate::views::compare::merge_request(earlier, &answer.answer) {
                return Answered::CompareAgain(next);
            }
        }
        let Some(state) = self.analyses.get_mut(view) else {
            return Answered::Stale;
        };
        state.pending = false;
        state.working = None;
        state.result = Some(Rc::new(answer.answer));
        Answered::Shown
    }

    /// Where the worker is with analysis request `report.seq`: kept on the view waiting for
    /// it (the page redraws); a report of an answered or superseded request changes nothing.
    pub fn working(&mut self, report: WorkingReport) -> bool {
        match self.analyses.values_mut().find(|s| s.seq == report.seq && s.pending) {
            Some(state) if state.working.as_ref() != Some(&report) => {
                state.working = Some(report);
                true
            }
            _ => false,
        }
    }

    /// Every view waiting for an answer gets `message` instead (no pending view waits forever).
    pub fn fail_pending(&mut self, message: &str) {
        for state in self.analyses.values_mut().filter(|s| s.pending) {
            state.pending = false;
            state.result = Some(Rc::new(Err(message.to_owned())));
        }
    }

    /// The shown trace's worker failed with `message` (`died`: its instance cannot answer
    /// again, and a new one reads the trace again): waiting views get the message, the trace
    /// stays.
    pub fn worker_failed(&mut self, message: String, died: bool) {
        self.fail_pending(&message);
        self.error = Some(if died {
            format!("{message} {RESTARTED}")
        } else {
            message
        });
    }

    /// Reading the trace again after its worker died failed too (`message`): the trace stays
    /// on screen, and every analysis, now and later, answers [`STOPPED`].
    pub fn stop(&mut self, message: &str) {
        if let Some(c) = self.current.as_mut() {
            c.stopped = true;
        }
        self.fail_pending(STOPPED);
        self.error = Some(format!("{message} ({STOPPED})"));
    }

    /// A new metric, threshold or selection for the matrix. A new selection drops the answers
    /// of the previous one (the worker restricts every analysis to it), except the comparison
    /// (whole runs) and the critical-path overlay (the whole run's, whatever the selection).
    pub fn set_matrix(&mut self, request: MatrixRequest) -> MatrixChange {
        let reselected = request.selection != self.matrix_request.selection;
        self.matrix_request = request.clone();
        let send = self.current.as_ref().map(|_| {
            self.matrix_seq += 1;
            Request::Matrix {
                seq: self.matrix_seq,
                request,
            }
        });
        if reselected {
            self.analyses
                .retain(|kind, _| *kind == "compare" || *kind == "critical-path-overlay");
        }
        MatrixChange { send, reselected }
    }

    /// A matrix answer: shown when it answers the latest request.
    pub fn matrix_answer(&mut self, m: MatrixResult) -> bool {
        match self.current.as_mut() {
            Some(c) if m.seq == self.matrix_seq => {
                c.matrix = Rc::from(m);
                true
            }
            _ => false,
        }
    }

    /// Number a timeline tile request, when a trace is on screen.
    pub fn timeline_request(&mut self, query: TimelineQuery) -> Option<Request> {
        self.current.as_ref()?;
        self.timeline_seq += 1;
        Some(Request::Timeline {
            seq: self.timeline_seq,
            query,
        })
    }

    /// What the timeline's pattern and phase colourings are found on: the selection every
    /// view uses and the strength of the Phases view's last request (0, its default, before).
    pub fn timeline_groups(&self) -> tracelogic_engine::timeline::GroupSource {
        let strength = match self.analyses.get("phases").and_then(|a| a.request.as_ref()) {
            Some(AnalysisRequest::Phases { strength }) => *strength,
            _ => 0.0,
        };
        tracelogic_engine::timeline::GroupSource {
            selection: self.matrix_request.selection.clone(),
            strength,
        }
    }

    /// A timeline tile: shown when it answers the latest request.
    pub fn timeline_answer(&mut self, t: TimelineAnswer) -> bool {
        match self.current.as_mut() {
            Some(c) if t.seq == self.timeline_seq => {
                c.timeline = Some(Rc::from(t));
                true
            }
            _ => false,
        }
    }
}

/// The address: the page state as a [`Route`] and back.
impl<L, S> PageState<L, S> {
    /// Take the view, threshold and metric of `route` (before any trace is in).
    pub fn apply_settings(&mut self, route: &Route) {
        if let Some(v) = route.view {
            self.view = v;
        }
        if let Some(t) = route.threshold {
            self.matrix_request.threshold_pct = t;
        }
        if let Some(m) = route.metric {
            self.matrix_request.metric = m;
        }
        if route.waiting {
            self.matrix_request.waiting = true;
            self.matrix_request.metric = tracelogic_engine::matrix::Metric::Bytes;
        }
    }

    /// Show what `route` says: view, focus, matrix settings. The address names the whole
    /// state: a key it leaves out is the default (an empty fragment is the summary), so Back to
    /// such an entry shows it instead of keeping the current view and pushing it again. True
    /// when the matrix settings changed (the page then asks for that matrix).
    pub fn apply_route(&mut self, route: Route) -> bool {
        let before = (
            self.matrix_request.threshold_pct,
            self.matrix_request.metric,
            self.matrix_request.waiting,
        );
        let default = MatrixRequest::default();
        self.view = route.view.unwrap_or(View::Summary);
        self.matrix_request.threshold_pct = route.threshold.unwrap_or(default.threshold_pct);
        self.matrix_request.metric = route.metric.unwrap_or(default.metric);
        self.matrix_request.waiting = route.waiting;
        self.focus = route.focus;
        before
            != (
                self.matrix_request.threshold_pct,
                self.matrix_request.metric,
                self.matrix_request.waiting,
            )
    }

    /// The navigation state of the page.
    pub fn route(&self) -> Route {
        let default = MatrixRequest::default();
        Route {
            sample: self.sample.map(|s| s.id.to_owned()),
            view: (self.view != View::Summary).then_some(self.view),
            threshold: (self.matrix_request.threshold_pct != default.threshold_pct)
                .then_some(self.matrix_request.threshold_pct),
            metric: (self.matrix_request.metric != default.metric).then_some(self.matrix_request.metric),
            waiting: self.matrix_request.waiting,
            focus: self.focus.clone(),
        }
    }

    /// The start of every downloaded file's name: the bundled sample's id, or the loaded
    /// trace's name as a file name part (`npb-lu.S.8-logical.json`, `npb-lu.S.8-matrix-bytes.csv`).
    pub fn file_prefix(&self) -> String {
        match (&self.current, self.sample) {
            (_, Some(s)) => s.id.to_owned(),
            (Some(c), None) => text::file_stem(&c.trace.label),
            (None, None) => String::new(),
        }
    }
}

#[cfg(test)]
mod tests;
