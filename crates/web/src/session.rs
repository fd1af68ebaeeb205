//! The worker's core, free of any browser API: read the dropped files into a trace, hold it in a
//! [`tracelogic_engine::Engine`], and answer each typed request with one engine call. Native
//! tests drive it directly on the bundled samples.
//!
//! **Selections.** Every analysis runs on the part of the trace the page's selection keeps (the
//! engine's rule, the CLI's selection flags: docs/cli.md, "Selections"), times relative to the
//! trace's first event. Each [`Request::Analyse`](crate::protocol::Request) carries the
//! selection the page asked with (the matrix filters), so an answer always belongs to the
//! selection it was asked for, whatever matrix request came between. The comparison views
//! compare whole runs (the runs compared before are kept as properties only, so a selection
//! could not reach them).

use crate::heatmap::{Grid, MAX_SIDE};
use crate::protocol::{
    AnalysisRequest, Answer, CompareResult, Failure, LoadedTrace, LogicalDownload, MatrixRequest, MatrixView,
    ProgressReport, WireFile, MAX_COMPARE_DRAWN,
};
use std::cell::RefCell;
use tracelogic_engine::compare::RunsReport;
use tracelogic_engine::logical::{CompressOptions, LogicalReport};
use tracelogic_engine::patterns::{PatternOptions, SearchRequest};
use tracelogic_engine::phases::Outside;
use tracelogic_engine::replay::ReplayRequest;
use tracelogic_engine::topology::{Graph, Threshold, TopologyOptions};
use tracelogic_engine::{Engine, FieldWords};
use tracelogic_formats::{expand_archives, read_trace_with_progress, FormatError, InputFile, Progress, ProgressSink};
use tracelogic_model::{Selection, Trace};

/// A loaded trace, kept by the worker between requests.
#[derive(Debug)]
pub struct Session {
    engine: Engine,
    /// The logical trace of the last logical analysis and its selection (as the page sent it),
    /// for the view's downloads, which stay here instead of travelling with the answer.
    logical: RefCell<Option<(Selection, CompressOptions, LogicalReport)>>,
}

/// The outcome of [`Session::load`]: the session and what the page shows first.
#[derive(Debug)]
pub struct Loaded {
    /// The kept trace.
    pub session: Session,
    /// Its summary and input size.
    pub trace: LoadedTrace,
    /// The matrix asked for with the load.
    pub matrix: MatrixView,
}

/// Forwards reader progress as [`ProgressReport`]s and adds the stages that follow reading.
struct Stages<'a> {
    report: &'a mut dyn FnMut(ProgressReport) -> bool,
    bytes_total: u64,
}

impl ProgressSink for Stages<'_> {
    fn report(&mut self, progress: &Progress) -> bool {
        (self.report)(ProgressReport {
            stage: progress.stage.clone(),
            bytes_done: progress.bytes_done,
            bytes_total: progress.bytes_total,
        })
    }
}

impl Stages<'_> {
    /// Report a stage after reading (all bytes consumed); false if the caller cancelled.
    fn stage(&mut self, stage: &str) -> bool {
        (self.report)(ProgressReport {
            stage: stage.to_owned(),
            bytes_done: self.bytes_total,
            bytes_total: self.bytes_total,
        })
    }
}

/// What the page says when a selection keeps nothing.
const EMPTY_SELECTION: &str = "the selection keeps no MPI call of this trace (see the matrix view's filters)";

impl Session {
    /// Read `files` as one trace, match its messages, summarise it and build the matrix of
    /// `matrix`. `report` sees every stage; returning false cancels.
    ///
    /// Errors carry the reader's message (file, byte offset or line, what was wrong).
    pub fn load(
        label: &str,
        files: Vec<WireFile>,
        matrix: &MatrixRequest,
        report: &mut dyn FnMut(ProgressReport) -> bool,
    ) -> Result<Loaded, Failure> {
        Session::load_with_limit(label, files, matrix, report, MAX_INPUT_BYTES)
    }

    /// [`Session::load`] with another input limit than [`MAX_INPUT_BYTES`]: the input and, once
    /// archives are unpacked, their content must each stay within `max_input_bytes`.
    pub fn load_with_limit(
        label: &str,
        files: Vec<WireFile>,
        matrix: &MatrixRequest,
        report: &mut dyn FnMut(ProgressReport) -> bool,
        max_input_bytes: u64,
    ) -> Result<Loaded, Failure> {
        let file_count = files.len() as u32;
        let bytes_total: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
        if let Some(message) = too_large(label, bytes_total, max_input_bytes, "") {
            return Err(Failure {
                message,
                cancelled: false,
            });
        }
        let inputs = files.into_iter().map(|f| InputFile::new(f.name, f.bytes)).collect();
        // Archives are unpacked first, so their content is held to the same limit as plain files.
        let inputs = expand_archives(inputs).map_err(failure)?;
        let unpacked: u64 = inputs.iter().map(|f| f.bytes.len() as u64).sum();
        if let Some(message) = too_large(label, unpacked, max_input_bytes, " once unpacked") {
            return Err(Failure {
                message,
                cancelled: false,
            });
        }
        let mut stages = Stages { report, bytes_total };
        let trace = read_trace_with_progress(inputs, &mut stages).map_err(failure)?;
        let engine = Engine::new(trace, FieldWords::Labels);
        Session::from_engine(label, engine, file_count, bytes_total, matrix, stages.report)
    }

    /// A session keeping `engine` (a trace read whole, or a part of one:
    /// `tracelogic_engine::overview::load_part`), answering as [`Session::load`] does: messages
    /// matched, the summary, the matrix of `matrix`. `files` and `bytes` are the input's.
    pub fn from_engine(
        label: &str,
        engine: Engine,
        file_count: u32,
        bytes_total: u64,
        matrix: &MatrixRequest,
        report: &mut dyn FnMut(ProgressReport) -> bool,
    ) -> Result<Loaded, Failure> {
        let mut stages = Stages { report, bytes_total };
        if !stages.stage("matching messages") {
            return Err(cancelled());
        }
        let session = Session {
            engine,
            logical: RefCell::new(None),
        };
        session.engine.matching();
        if !stages.stage("summarising") {
            return Err(cancelled());
        }
        let summary = session.engine.summary();
        if !stages.stage("building the matrix") {
            return Err(cancelled());
        }
        let matrix = session.matrix(0, matrix)?;
        let trace = LoadedTrace {
            label: label.to_owned(),
            source: session.engine.trace().source.clone(),
            files: file_count,
            bytes: bytes_total,
            summary,
            workers: 1,
        };
        Ok(Loaded { session, trace, matrix })
    }

    /// A session keeping `trace`.
    pub fn new(trace: Trace) -> Session {
        Session {
            engine: Engine::new(trace, FieldWords::Labels),
            logical: RefCell::new(None),
        }
    }

    /// The matrix of `request` and its filtered form, as the view draws them, tagged with `seq`.
    pub fn matrix(&self, seq: u64, request: &MatrixRequest) -> Result<MatrixView, Failure> {
        let r = if request.waiting {
            self.engine
                .matrix_with_waiting(&request.selection, request.metric, request.threshold_pct)
        } else {
            self.engine
                .matrix(&request.selection, request.metric, request.threshold_pct)
        }
        .map_err(|e| Failure {
            message: e.to_string(),
            cancelled: false,
        })?;
        let values = r.matrix.entry_values(request.metric);
        let mut grid = Grid::new(&r.matrix, &r.filtered, request.metric, MAX_SIDE);
        if let Some(w) = &r.waiting {
            grid = grid.with_values(
                w.pairs
                    .iter()
                    .map(|p| (p.sender, p.receiver, (p.waiting_s() * 1e9).round() as u64)),
            );
        }
        Ok(MatrixView {
            seq,
            request: request.clone(),
            grid,
            nonzero_entries: values.iter().filter(|&&v| v > 0).count() as u64,
            kept_entries: r.filtered.kept_entries,
            removed_entries: r.filtered.removed_entries,
            removed_share: r.filtered.removed_share,
        })
    }

    /// Run one analysis of the whole kept trace.
    pub fn analyse(&self, request: &AnalysisRequest) -> Result<Answer, String> {
        self.analyse_selected(request, &Selection::all())
    }

    /// Run one analysis of the part of the kept trace `selection` keeps (times relative to the
    /// trace's first event): one engine call per request. Comparisons ignore the selection:
    /// they compare whole runs.
    pub fn analyse_selected(&self, request: &AnalysisRequest, selection: &Selection) -> Result<Answer, String> {
        let engine = &self.engine;
        let whole_runs = matches!(
            request,
            AnalysisRequest::Compare { .. }
                | AnalysisRequest::CompareRuns { .. }
                | AnalysisRequest::CriticalPathOverlay
        );
        if !whole_runs && *selection != Selection::all() && engine.selected_calls(selection)? == 0 {
            return Err(EMPTY_SELECTION.into());
        }
        let topology = |threshold_pct: Option<f64>, library| -> Result<Answer, String> {
            let options = TopologyOptions {
                threshold: threshold_pct.map_or(Threshold::Auto, Threshold::Percent),
                library,
                ..TopologyOptions::default()
            };
            Ok(Answer::Topology(engine.topology(selection, &options)?))
        };
        Ok(match request {
            AnalysisRequest::Topology { threshold_pct } => topology(*threshold_pct, Vec::new())?,
            AnalysisRequest::TopologyWithLibrary { threshold_pct, library } => {
                topology(*threshold_pct, library.custom_patterns()?)?
            }
            AnalysisRequest::Logical { exact_sizes } => {
                self.logical.replace(None);
                let options = CompressOptions {
                    exact_sizes: *exact_sizes,
                };
                match engine.logical_with(selection, Threshold::Auto, &[], &options) {
                    // A run without point-to-point traffic (NAS FT) has no logical trace: an
                    // answer, not a failure.
                    Err(tracelogic_engine::Error::NothingFound(m)) => Answer::NothingFound(m),
                    report => {
                        let report = report?;
                        let view = report.view();
                        self.logical.replace(Some((selection.clone(), options, report)));
                        Answer::Logical(view)
                    }
                }
            }
            AnalysisRequest::LogicalDownload { which } => Answer::Download(self.download(*which, selection)?),
            AnalysisRequest::Patterns => {
                let mut report = engine.patterns(selection, &PatternOptions::default())?;
                // The view draws the communication patterns; every rank's own repeats (with the
                // position of each occurrence) would only weigh on the answer.
                report.rank_patterns.clear();
                Answer::Patterns(report)
            }
            AnalysisRequest::Match { pattern, max_edits } => {
                let search = SearchRequest::from_text(pattern, *max_edits)?;
                Answer::Search(engine.pattern_search(selection, &search)?)
            }
            AnalysisRequest::Phases { strength } => {
                Answer::Phases(engine.phases(selection, *strength, Outside::Own)?)
            }
            AnalysisRequest::WhatIf { custom } => {
                Answer::WhatIf(engine.replay(selection, &replay_request(*custom)?)?.report)
            }
            AnalysisRequest::Compare { label, files } => {
                let files = files
                    .iter()
                    .map(|f| InputFile::new(f.name.clone(), f.bytes.clone()))
                    .collect();
                Answer::Compare(drawn(engine.compare_with_files(label, files)))
            }
            AnalysisRequest::CompareRuns { runs, refused } => {
                Answer::Compare(drawn(engine.compare_with_runs(runs.clone(), refused.clone())))
            }
            AnalysisRequest::SaveAs { format, renumbering } => {
                Answer::Saved(crate::save::save_trace(engine, selection, *format, *renumbering)?)
            }
            AnalysisRequest::Profile => Answer::Profile(engine.profile(selection, &Default::default())?),
            AnalysisRequest::Waits { what_if } => {
                Answer::Waits(crate::views::waits::answer(engine, selection, *what_if)?)
            }
            // The timeline's clock counts from the whole trace's first event: the whole run's path.
            AnalysisRequest::CriticalPathOverlay => Answer::PathOverlay(crate::protocol::PathOverlay::of(
                &engine.critical_path(&Selection::all(), false)?.path,
            )),
        })
    }

    /// The text of download `which` of the logical trace of `selection`: the kept one when it
    /// is that selection's (with the options the view last asked for), else built again.
    fn download(&self, which: LogicalDownload, selection: &Selection) -> Result<String, String> {
        let mut kept = self.logical.borrow_mut();
        if kept.as_ref().is_none_or(|(s, _, _)| s != selection) {
            let options = kept.take().map(|(_, o, _)| o).unwrap_or_default();
            let report = self.engine.logical_with(selection, Threshold::Auto, &[], &options)?;
            *kept = Some((selection.clone(), options, report));
        }
        let (_, _, report) = kept.as_ref().expect("kept above");
        match which {
            LogicalDownload::Json => report.json(),
            LogicalDownload::Text => Ok(report.text()),
            LogicalDownload::Skeleton => report.skeleton().map(str::to_owned).map_err(str::to_owned),
        }
    }

    /// The kept trace.
    pub fn trace(&self) -> &Trace {
        self.engine.trace()
    }

    /// The engine holding it.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// How many times this session found communication patterns for the patterns or phases
    /// view (a phases view of the selection of the last one reuses its analysis).
    pub fn pattern_analyses(&self) -> u64 {
        self.engine.pattern_analyses()
    }
}

/// The compare view's result: the engine's comparison and where to draw each run's graph.
fn drawn(r: RunsReport) -> CompareResult {
    CompareResult {
        layouts: r.runs.iter().map(graph_layout).collect(),
        others: r.others,
        matrix: r.matrix,
        refused: r.refused,
    }
}

/// Where to draw each rank of `run`: the topology view's layout of its identified topology
/// (grids and tori on their coordinates, trees by depth), else a circle.
fn graph_layout(run: &tracelogic_engine::compare::RunProperties) -> Vec<(f64, f64)> {
    if run.ranks > MAX_COMPARE_DRAWN {
        return Vec::new();
    }
    let g = Graph::from_edges(run.ranks, run.edges.iter().map(|e| (e[0], e[1])));
    let report = tracelogic_engine::topology::of_graph(&g, &TopologyOptions::default());
    crate::topology_layout::layout(&report)
}

/// Most input bytes one trace may have in the browser (1 GiB), counted both as given and once
/// archives are unpacked. The worker holds the input while the readers build the trace next to
/// it, and a wasm32 worker addresses at most 4 GiB: measured in headless Chromium, a 0.97 GB
/// DUMPI set (25 M calls) opened and every analysis ran, while a 1.46 GB set (38 M calls) ran
/// out of memory while its ranks were parsed (docs/notes/performance-history.md, "Web app").
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// The refusal of an input of `total` bytes over `limit` (`what` says which size: "" or
/// " once unpacked"), or `None` when it fits.
pub fn too_large(label: &str, total: u64, limit: u64, what: &str) -> Option<String> {
    (total > limit).then(|| {
        format!(
            "{label}: too large: {total} bytes{what}, limit {limit} (the browser's 4 GiB WebAssembly memory must \
             hold the files and the trace built from them; the tracelogic CLI has no such limit)"
        )
    })
}

fn failure(e: FormatError) -> Failure {
    Failure {
        message: e.to_string(),
        cancelled: e.cancelled,
    }
}

fn cancelled() -> Failure {
    Failure {
        message: "cancelled".into(),
        cancelled: true,
    }
}

/// The replay of the what-if view: the presets, plus the custom network `(latency µs, Gb/s)`
/// when given.
pub fn replay_request(custom: Option<(f64, f64)>) -> Result<ReplayRequest, String> {
    Ok(match custom {
        Some((latency_us, gbps)) => ReplayRequest::with_custom(latency_us, gbps)?,
        None => ReplayRequest::default(),
    })
}

#[cfg(test)]
pub(crate) mod tests;
