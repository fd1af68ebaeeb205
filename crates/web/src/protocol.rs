//! Messages between the page and the analysis worker: typed requests ([`Request`],
//! [`AnalysisRequest`]) and typed answers ([`Response`], [`Answer`]), whose reports are the
//! engine's (`tracelogic_engine`), the same the CLI prints.
//!
//! Everything crossing the worker boundary is a plain serde value (gloo-worker encodes them
//! with bincode), so the page and the worker share these types and nothing else. An
//! [`Answer`] crosses as JSON text inside the bincode message: the reports use serde features
//! (flattened and tagged enums, fields skipped when empty) that bincode cannot carry. So does
//! the load's [`Summary`]: any engine report sent here must go as JSON text too (a test loads
//! every bundled sample and reads its answer back through bincode).

use crate::heatmap::Grid;
use crate::save::SavedTrace;
use serde::{Deserialize, Serialize};
use tracelogic_engine::compare::{Comparison, RunProperties, SimilarityMatrix};
pub use tracelogic_engine::critical_path::CriticalPathReport;
pub use tracelogic_engine::logical::LogicalView;
use tracelogic_engine::matrix::Metric;
pub use tracelogic_engine::patterns::{PatternsReport, SearchReport};
pub use tracelogic_engine::phases::PhasesReport;
pub use tracelogic_engine::profile::Profile;
use tracelogic_engine::replay::WhatIf;
use tracelogic_engine::summary::Summary;
use tracelogic_engine::timeline::{TimelineQuery, TimelineTile};
use tracelogic_engine::topology::{edgelist, CustomPattern, Graph, TopologyReport};
pub use tracelogic_engine::waits::WaitsReport;
use tracelogic_model::Selection;

/// One input file as the worker receives it: its path relative to what the user dropped, and
/// its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireFile {
    /// Relative path with `/` separators, e.g. `npb-lu.S.8/dumpi-0000.bin`.
    pub name: String,
    /// The file's content (encoded as one byte string, not a list of numbers).
    #[serde(with = "serde_bytes")]
    pub bytes: Vec<u8>,
}

/// Which matrix the page wants: the part of the trace, the metric shown and the filtering
/// threshold applied to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixRequest {
    /// Part of the trace whose sends are counted; `from` / `to` are relative to the trace's
    /// first event (the engine adds its start), as the CLI's `--from` / `--to`. Later
    /// analyses are restricted to it too.
    pub selection: Selection,
    /// Quantity drawn and filtered.
    pub metric: Metric,
    /// Low-volume threshold in percent (0 keeps every non-zero entry).
    pub threshold_pct: f64,
    /// Colour the heatmap by the measured waiting instead of `metric`: per (sender, receiver)
    /// the late-sender plus late-receiver nanoseconds ([`tracelogic_engine::matrix::WaitingMatrix`],
    /// `tracelogic matrix --metric waiting`). The threshold and the binary matrix stay on `metric`.
    #[serde(default)]
    pub waiting: bool,
}

impl Default for MatrixRequest {
    /// Everything, bytes, and the 5 % threshold of Logicalization §4.1 (also the CLI's default).
    fn default() -> Self {
        MatrixRequest {
            selection: Selection::default(),
            metric: Metric::Bytes,
            threshold_pct: 5.0,
            waiting: false,
        }
    }
}

/// A request from the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// Parse these files as one trace, then summarise it and build its matrix. The worker
    /// keeps the trace for later [`Request::Matrix`] requests.
    Load {
        /// What the user loaded (sample title, file or folder name), for display.
        label: String,
        /// The input files.
        files: Vec<WireFile>,
        /// The matrix to compute once the trace is read.
        matrix: MatrixRequest,
    },
    /// Run one analysis of the loaded trace (see [`AnalysisRequest`]), restricted to the
    /// selection it carries, so each answer belongs to the selection the page asked with.
    Analyse {
        /// Sequence number echoed in the answer, so the page can drop stale answers.
        seq: u64,
        /// What to compute.
        request: AnalysisRequest,
        /// Part of the trace analysed (the matrix filters' selection, times relative to the
        /// trace's first event); `None` analyses the whole trace.
        selection: Option<Selection>,
    },
    /// Recompute the matrix of the loaded trace.
    Matrix {
        /// Sequence number echoed in the answer, so the page can drop stale answers.
        seq: u64,
        /// What to compute.
        request: MatrixRequest,
    },
    /// One tile of the timeline view (the whole trace, whatever the selection).
    Timeline {
        /// Sequence number echoed in the answer, so the page can drop stale answers.
        seq: u64,
        /// The window, ranks and resolution.
        query: TimelineQuery,
    },
}

/// The answer to a [`Request::Timeline`] (bincode all the way: tiles are plain data).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineAnswer {
    /// Sequence number of the request.
    pub seq: u64,
    /// The query answered.
    pub query: TimelineQuery,
    /// The tile, or the error to show.
    pub tile: Result<TimelineTile, String>,
}

/// One analysis of the loaded trace, as a view asks for it. The worker answers with
/// [`Response::Analysis`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AnalysisRequest {
    /// `tracelogic_analysis::topology` on the whole run's matrix, with the built-in families only
    /// (the page sends [`AnalysisRequest::TopologyWithLibrary`] instead once its reference
    /// library holds a pattern: see [`AnalysisRequest::with_library`]).
    Topology {
        /// Filtering threshold in percent of the largest entry; `None` is the automatic gap.
        threshold_pct: Option<f64>,
    },
    /// The same identification with the user's reference patterns as `custom` candidates (what
    /// the CLI's `--library FILE` does).
    TopologyWithLibrary {
        /// Filtering threshold in percent of the largest entry; `None` is the automatic gap.
        threshold_pct: Option<f64>,
        /// The page's reference library.
        library: ReferenceLibrary,
    },
    /// The logical trace, its loop-compressed program, verification and C skeleton.
    Logical {
        /// Keep every message size in the program (`tracelogic logical --exact-sizes`) instead
        /// of a histogram or statistics of sizes the data choose.
        #[serde(default)]
        exact_sizes: bool,
    },
    /// One download of the logical view, kept in the worker since the last
    /// [`AnalysisRequest::Logical`] of the same selection; the answer is the file's text as it
    /// is (not JSON).
    LogicalDownload {
        /// Which file.
        which: LogicalDownload,
    },
    /// Communication patterns and the per-rank repeated sequences.
    Patterns,
    /// Approximate search of a user's pattern (thesis §4.5), the engine's pattern search that
    /// `tracelogic match` runs too: the text of a pattern file (docs/patterns.md), extrapolated
    /// to the run's topology when it names the small topology it was written for.
    Match {
        /// The pattern file's text (JSON: rank → event symbols, optional `topology`).
        pattern: String,
        /// Edits allowed per rank (edit distance of each rank's window to its events).
        max_edits: u32,
    },
    /// Phase detection at segmentation strength `s0`.
    Phases {
        /// The strength `s0` (0 cuts wherever the divergence is significant).
        strength: f64,
    },
    /// The what-if replay on the preset networks, plus one custom network when given.
    WhatIf {
        /// Custom network: latency in microseconds and bandwidth in Gb/s.
        custom: Option<(f64, f64)>,
    },
    /// Compare the loaded trace with a second one.
    Compare {
        /// What the user loaded as the second trace.
        label: String,
        /// Its files.
        files: Vec<WireFile>,
    },
    /// Write the trace (restricted to the page's selection) in `format`, its ranks renumbered
    /// as asked, for download ("Save trace as…" in the summary view; `tracelogic convert`).
    SaveAs {
        /// Output format.
        format: crate::save::SaveFormat,
        /// Rank renumbering.
        renumbering: crate::save::Renumbering,
    },
    /// The time profile (`tracelogic profile`).
    Profile,
    /// Wait states and the critical path with the load imbalance (`tracelogic waits`,
    /// `tracelogic critical-path`), with the what-if classification when `what_if`.
    Waits {
        /// Also replay the run on the first preset network and relate its classification.
        what_if: bool,
    },
    /// The whole run's critical path as the timeline overlays it: every segment, compact
    /// ([`PathOverlay`]; the waits view's answer keeps only the longest segments).
    CriticalPathOverlay,
    /// Compare the loaded trace with runs compared before, from their properties alone (no
    /// trace sent again): how three or more runs get their similarity matrix, and how a run is
    /// removed from the set.
    CompareRuns {
        /// The runs, as earlier [`CompareResult`]s returned them.
        runs: Vec<RunProperties>,
        /// Why a run offered last was not added, shown with the answer.
        refused: Option<String>,
    },
}

/// The downloads of the logical view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LogicalDownload {
    /// The logical trace as JSON (`tracelogic logical --json`).
    Json,
    /// The logical trace as text, one record per line.
    Text,
    /// The C skeleton.
    Skeleton,
}

impl LogicalDownload {
    /// The file name the page saves it as.
    pub fn file_name(self) -> &'static str {
        match self {
            LogicalDownload::Json => "logical.json",
            LogicalDownload::Text => "logical.txt",
            LogicalDownload::Skeleton => "skeleton.c",
        }
    }

    /// Its media type.
    pub fn mime(self) -> &'static str {
        match self {
            LogicalDownload::Json => "application/json",
            LogicalDownload::Text => "text/plain",
            LogicalDownload::Skeleton => "text/x-c",
        }
    }
}

impl AnalysisRequest {
    /// The page's name for the state the answer goes to (`topology`, `logical`, ...; the
    /// views' [`crate::views::View::id`]). The worker never reads it: it matches the request.
    pub fn kind(&self) -> &'static str {
        match self {
            AnalysisRequest::Topology { .. } | AnalysisRequest::TopologyWithLibrary { .. } => "topology",
            AnalysisRequest::Logical { .. } => "logical",
            AnalysisRequest::LogicalDownload { .. } => "logical-download",
            AnalysisRequest::Patterns => "patterns",
            AnalysisRequest::Match { .. } => "match",
            AnalysisRequest::Phases { .. } => "phases",
            AnalysisRequest::WhatIf { .. } => "whatif",
            AnalysisRequest::Compare { .. } | AnalysisRequest::CompareRuns { .. } => "compare",
            AnalysisRequest::SaveAs { .. } => "save",
            AnalysisRequest::Profile => "profile",
            AnalysisRequest::Waits { .. } => "waits",
            AnalysisRequest::CriticalPathOverlay => "critical-path-overlay",
        }
    }

    /// `self` with `library` attached when it is a topology request and the library holds a
    /// pattern; any other request unchanged.
    pub fn with_library(self, library: &ReferenceLibrary) -> AnalysisRequest {
        match self {
            AnalysisRequest::Topology { threshold_pct }
            | AnalysisRequest::TopologyWithLibrary { threshold_pct, .. }
                if !library.patterns.is_empty() =>
            {
                AnalysisRequest::TopologyWithLibrary {
                    threshold_pct,
                    library: library.clone(),
                }
            }
            AnalysisRequest::TopologyWithLibrary { threshold_pct, .. } => AnalysisRequest::Topology { threshold_pct },
            other => other,
        }
    }
}

/// A user's reference pattern: a communication graph saved from a run ("save this run's graph
/// as a reference pattern") or read from an edge-list file. Plain data, so the page can store it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReferencePattern {
    /// Name shown in topology labels (`custom pattern NAME (n nodes)`).
    pub name: String,
    /// Number of nodes (ranks of the run it came from).
    pub ranks: u32,
    /// Its edges `[a, b]`, 0-based, `a < b`.
    pub edges: Vec<[u32; 2]>,
}

impl ReferencePattern {
    /// Read an edge list (the format of `tracelogic topology --library` and `--save-graph`);
    /// errors name `source` and the line at fault.
    pub fn from_edge_list(name: &str, text: &str, source: &str) -> Result<ReferencePattern, String> {
        let graph = edgelist::parse(text, source)?;
        Ok(ReferencePattern {
            name: name.to_owned(),
            ranks: graph.num_nodes(),
            edges: graph.edges().map(|(a, b)| [a, b]).collect(),
        })
    }

    /// The pattern as an edge-list file that `tracelogic topology --library FILE` reads back.
    pub fn edge_list(&self) -> Result<String, String> {
        let comment = format!(
            "tracelogic reference pattern {} ({} ranks, {} edges)",
            self.name,
            self.ranks,
            self.edges.len()
        );
        Ok(edgelist::write(&self.graph()?, Some(&comment)))
    }

    /// The pattern as a candidate of the identification (an error when an edge names a node
    /// outside `0..ranks`, e.g. a stored library edited by hand).
    pub fn custom(&self) -> Result<CustomPattern, String> {
        Ok(CustomPattern {
            name: self.name.clone(),
            graph: self.graph()?,
        })
    }

    fn graph(&self) -> Result<Graph, String> {
        if self.ranks == 0 || self.ranks > edgelist::MAX_NODES {
            return Err(format!(
                "reference pattern {}: node count {} must be between 1 and {}",
                self.name,
                self.ranks,
                edgelist::MAX_NODES
            ));
        }
        Graph::try_from_edges(self.ranks, self.edges.iter().map(|e| (e[0], e[1])))
            .map_err(|e| format!("reference pattern {}: {e}", self.name))
    }
}

/// The page's reference patterns, tried in every topology identification of any trace loaded.
/// It lives in the page's state (`PageState::library` in app/state.rs) as this plain serde value, so it can
/// be stored and restored as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReferenceLibrary {
    /// The patterns, in the order saved.
    pub patterns: Vec<ReferencePattern>,
}

impl ReferenceLibrary {
    /// Add `pattern`, replacing a pattern of the same name.
    pub fn save(&mut self, pattern: ReferencePattern) {
        match self.patterns.iter_mut().find(|p| p.name == pattern.name) {
            Some(p) => *p = pattern,
            None => self.patterns.push(pattern),
        }
    }

    /// Remove the pattern named `name` (nothing when there is none).
    pub fn remove(&mut self, name: &str) {
        self.patterns.retain(|p| p.name != name);
    }

    /// Every pattern as an identification candidate.
    pub fn custom_patterns(&self) -> Result<Vec<CustomPattern>, String> {
        self.patterns.iter().map(ReferencePattern::custom).collect()
    }
}

/// Most ranks of a run whose graph the compare view draws (and lays out in the worker).
pub const MAX_COMPARE_DRAWN: u32 = 1024;

/// What the compare view shows: the loaded trace (run 0) against every run added so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareResult {
    /// The runs compared with the loaded trace (runs 1.. of `matrix`), in the order added;
    /// `source` is the label the user gave. The page sends them back with the next request.
    pub others: Vec<RunProperties>,
    /// Every pair among the loaded trace and `others`; `None` while there is no other run.
    pub matrix: Option<SimilarityMatrix>,
    /// Position in a `[0, 1]²` box of every rank of each run of `matrix` (same order), from its
    /// identified topology where there is one, else on a circle; empty for runs of more than
    /// [`MAX_COMPARE_DRAWN`] ranks.
    pub layouts: Vec<Vec<(f64, f64)>>,
    /// Why the last run offered was not added (unreadable, another number of ranks); the
    /// comparison of the runs before it stays.
    pub refused: Option<String>,
}

impl CompareResult {
    /// The pair of the loaded trace with the latest run added.
    pub fn latest(&self) -> Option<&Comparison> {
        let m = self.matrix.as_ref()?;
        m.pairs.iter().rev().find(|c| c.first == 0)
    }
}

/// The report of one [`AnalysisRequest`], typed: one variant per kind of request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Answer {
    /// [`AnalysisRequest::Topology`] and [`AnalysisRequest::TopologyWithLibrary`].
    Topology(TopologyReport),
    /// [`AnalysisRequest::Logical`]: what the view shows (the logical trace stays in the worker).
    Logical(LogicalView),
    /// [`AnalysisRequest::LogicalDownload`]: the file's text as it is.
    Download(String),
    /// [`AnalysisRequest::Patterns`].
    Patterns(PatternsReport),
    /// [`AnalysisRequest::Match`].
    Search(SearchReport),
    /// [`AnalysisRequest::Phases`].
    Phases(PhasesReport),
    /// [`AnalysisRequest::WhatIf`].
    WhatIf(WhatIf),
    /// [`AnalysisRequest::Compare`] and [`AnalysisRequest::CompareRuns`].
    Compare(CompareResult),
    /// [`AnalysisRequest::SaveAs`].
    Saved(SavedTrace),
    /// The analysis ran and has nothing to show, with the reason (a run without point-to-point
    /// traffic has no logical trace): a note in the view, not an error.
    NothingFound(String),
    /// [`AnalysisRequest::Profile`].
    Profile(Profile),
    /// [`AnalysisRequest::Waits`].
    Waits(WaitsAnswer),
    /// [`AnalysisRequest::CriticalPathOverlay`].
    PathOverlay(PathOverlay),
}

/// Most critical-path segments sent to the page (the longest ones, in path order): a run of
/// millions of calls has millions of segments, which the view cannot draw anyway.
pub const MAX_PAGE_SEGMENTS: usize = 5_000;

/// What the waits view shows: the wait states, and the critical path (its own error when the
/// happens-before graph has a cycle, the wait states still shown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitsAnswer {
    /// The wait states of the selection.
    pub waits: WaitsReport,
    /// The critical path, at most [`MAX_PAGE_SEGMENTS`] of its segments.
    pub critical_path: Result<CriticalPathReport, String>,
    /// Segments of the whole path (more than `critical_path` holds when it was cut).
    pub segments_total: usize,
}

/// One piece of the critical path for the timeline: `(rank, start ns, end ns, computation)`,
/// times since the trace's first event (the timeline's clock), as a JSON array of four.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverlaySegment(pub u32, pub u64, pub u64, pub bool);

impl OverlaySegment {
    /// World rank.
    pub fn rank(&self) -> u32 {
        self.0
    }
    /// Start, ns since the trace's first event.
    pub fn start(&self) -> u64 {
        self.1
    }
    /// End, ns since the trace's first event.
    pub fn end(&self) -> u64 {
        self.2
    }
    /// True for computation, false for an MPI call.
    pub fn compute(&self) -> bool {
        self.3
    }
}

/// The whole run's critical path as the timeline draws it over the rank lanes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathOverlay {
    /// Its segments in path order (a change of rank between two is a dependency followed: a
    /// message or a collective).
    pub segments: Vec<OverlaySegment>,
    /// Its length, ns.
    pub length_ns: u64,
}

impl PathOverlay {
    /// The overlay of `path` (the engine's critical path of the whole trace).
    pub fn of(path: &tracelogic_engine::critical_path::CriticalPath) -> PathOverlay {
        let ns = |s: f64| (s * 1e9).round().max(0.0) as u64;
        PathOverlay {
            segments: path
                .segments
                .iter()
                .map(|s| OverlaySegment(s.rank, ns(s.start_s), ns(s.end_s), s.kind == "compute"))
                .collect(),
            length_ns: ns(path.length_s),
        }
    }
}

/// A report a view reads out of an [`Answer`] (`None` for an answer of another kind).
pub trait FromAnswer: Sized {
    /// The report `answer` carries.
    fn from_answer(answer: &Answer) -> Option<Self>;
}

macro_rules! from_answer {
    ($($variant:ident => $type:ty),* $(,)?) => {
        $(impl FromAnswer for $type {
            fn from_answer(answer: &Answer) -> Option<Self> {
                match answer {
                    Answer::$variant(r) => Some(r.clone()),
                    _ => None,
                }
            }
        })*
    };
}

from_answer! {
    Topology => TopologyReport,
    Logical => LogicalView,
    Download => String,
    Patterns => PatternsReport,
    Search => SearchReport,
    Phases => PhasesReport,
    WhatIf => WhatIf,
    Compare => CompareResult,
    Saved => SavedTrace,
    Profile => Profile,
    Waits => WaitsAnswer,
    PathOverlay => PathOverlay,
}

/// The answer to an [`AnalysisRequest`]: the report, or the error to show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalysisAnswer {
    /// Sequence number of the request.
    pub seq: u64,
    /// The report, or the error to show.
    #[serde(with = "json_text")]
    pub answer: Result<Answer, String>,
}

/// An [`Answer`] as JSON text in the bincode message; text that does not read back becomes the
/// error the view shows, never a failed message.
mod json_text {
    use super::Answer;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(answer: &Result<Answer, String>, s: S) -> Result<S::Ok, S::Error> {
        let text = serde_json::to_string(answer).map_err(serde::ser::Error::custom)?;
        s.serialize_str(&text)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Result<Answer, String>, D::Error> {
        let text = String::deserialize(d)?;
        Ok(serde_json::from_str(&text).unwrap_or_else(|e| Err(format!("unreadable answer: {e}"))))
    }
}

/// A [`Summary`] as JSON text in the bincode message.
mod summary_json {
    use super::Summary;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(summary: &Summary, s: S) -> Result<S::Ok, S::Error> {
        let text = serde_json::to_string(summary).map_err(serde::ser::Error::custom)?;
        s.serialize_str(&text)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Summary, D::Error> {
        let text = String::deserialize(d)?;
        serde_json::from_str(&text).map_err(serde::de::Error::custom)
    }
}

/// Where a running load is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressReport {
    /// Stage, e.g. `reading rank 3` or `matching messages`.
    pub stage: String,
    /// Bytes consumed so far.
    pub bytes_done: u64,
    /// Bytes to consume in total.
    pub bytes_total: u64,
}

/// Where a running analysis is (`tracelogic_engine::progress`): sent while the worker
/// computes the answer to request `seq`, at each new stage and each whole percent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkingReport {
    /// The request being answered.
    pub seq: u64,
    /// The stage ("verifying by expansion").
    pub stage: String,
    /// Units done; 0 with `total` 0 when the stage is not counted.
    pub done: u64,
    /// Units in all, or 0.
    pub total: u64,
}

impl WorkingReport {
    /// The report of `step` of request `seq`.
    pub fn of(seq: u64, step: &tracelogic_engine::progress::Step) -> WorkingReport {
        WorkingReport {
            seq,
            stage: step.stage.to_owned(),
            done: step.done,
            total: step.total,
        }
    }

    /// "verifying by expansion, 41 %", or the stage alone when it is not counted (the CLI's
    /// stage line says the same: [`tracelogic_engine::progress::describe`]).
    pub fn text(&self) -> String {
        tracelogic_engine::progress::describe(&self.stage, self.done, self.total)
    }
}

/// The summary of a freshly loaded trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedTrace {
    /// What the user loaded.
    pub label: String,
    /// Where the reader says the trace came from.
    pub source: String,
    /// Number of input files and their total size, for the header line.
    pub files: u32,
    /// Total input bytes.
    pub bytes: u64,
    /// Overview of the trace, carried as JSON text: the summary skips absent fields in its
    /// JSON (`threads`), which bincode, writing no field names, cannot read back.
    #[serde(with = "summary_json")]
    pub summary: Summary,
    /// Workers that read it (a pool, one block of ranks each: [`crate::load_pool`]); 0 or 1:
    /// the load's worker alone.
    #[serde(default)]
    pub workers: u32,
}

/// What the matrix view draws for one [`MatrixRequest`]: the requested metric per cell and
/// which cells survive the threshold, at most [`MAX_SIDE`](crate::heatmap::MAX_SIDE) cells per
/// side. The worker sends this rather than the full `ranks × ranks` matrices, which for
/// thousands of ranks would be hundreds of MB.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixView {
    /// Sequence number of the request (0 for the matrix sent with a load).
    pub seq: u64,
    /// The request this answers.
    pub request: MatrixRequest,
    /// The cells.
    pub grid: Grid,
    /// Rank pairs with traffic before the threshold.
    pub nonzero_entries: u64,
    /// Rank pairs kept by the threshold.
    pub kept_entries: u64,
    /// Rank pairs the threshold removed.
    pub removed_entries: u64,
    /// Share (0..1) of the metric's total carried by the removed pairs.
    pub removed_share: f64,
}

/// What failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The message to show: for reader errors the file, byte offset or line, and what was wrong.
    pub message: String,
    /// True when the user cancelled rather than something going wrong.
    pub cancelled: bool,
}

/// An answer from the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Response {
    /// A load is under way.
    Progress(ProgressReport),
    /// A load finished.
    Loaded {
        /// The summary.
        trace: Box<LoadedTrace>,
        /// The matrix asked for in the load request.
        matrix: Box<MatrixView>,
    },
    /// A [`Request::Matrix`] finished.
    Matrix(Box<MatrixView>),
    /// A [`Request::Timeline`] finished.
    Timeline(Box<TimelineAnswer>),
    /// A [`Request::Analyse`] is under way ([`WorkingReport`]).
    Working(WorkingReport),
    /// A [`Request::Analyse`] finished (or failed: the trace stays loaded either way).
    Analysis(Box<AnalysisAnswer>),
    /// A request failed; the worker still holds the trace it had before (if any).
    Failed(Failure),
    /// A load computed the overview of its input instead of loading it whole (the input is over
    /// the full-load limit, or the page asked for it): the worker holds no trace.
    Overview(Box<OverviewAnswer>),
    /// A helper of an overview pool computed its part (bincode of
    /// `tracelogic_engine::overview::OverviewPart`); only the page's worker receives it.
    OverviewPart(Vec<u8>),
    /// A helper of a pooled load read its block of ranks: what it would send at each exchange of
    /// the distributed read, columns included
    /// (`tracelogic_formats::distributed::read_block_source`); only the page's worker receives it.
    LoadBlock(Vec<serde_bytes::ByteBuf>),
    /// A helper of a pooled what-if holds its share of the configurations
    /// ([`crate::whatif_pool`]); only the page's worker receives it.
    ReplayReady,
    /// A helper of a pooled what-if executed every instruction: its share's final clocks
    /// (`tracelogic_engine::replay::ShareExecutor::into_state`).
    ReplayState(Vec<f64>),
}

/// The overview of a trace (`tracelogic overview`, `docs/large-traces.md`) as the page's Overview
/// view shows it: the streamed report without its communication matrix (only its number of
/// communicating pairs), the topology identified from the matrix, and what was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverviewAnswer {
    /// What the user loaded.
    pub label: String,
    /// Number of input files.
    pub files: u32,
    /// The report (its matrix emptied), carried as JSON text: the engine's report uses serde
    /// features the worker channel's bincode does not support.
    #[serde(with = "overview_json")]
    pub report: tracelogic_engine::overview::OverviewReport,
    /// Communicating (sender, receiver) pairs of the matrix.
    pub pairs: u64,
    /// The topology line: the identified topology, or why none was.
    pub topology: String,
    /// Size of the worker's WebAssembly memory once the overview was computed (it only grows:
    /// the pass's peak), 0 off the browser.
    pub worker_memory_bytes: u64,
    /// Workers that read the ranks (an OTF2 folder is read by a pool, one block of ranks each:
    /// `crate::overview_pool`); 1 when the page's worker read it alone.
    pub workers: u32,
}

impl OverviewAnswer {
    /// The answer for `report` of the input `label` (`files` files): the topology line as
    /// `tracelogic overview` prints it, the matrix left out.
    pub fn new(label: &str, files: u32, mut report: tracelogic_engine::overview::OverviewReport) -> OverviewAnswer {
        let topology = match &report.topology.identification.matched {
            Some(m) => m.label.clone(),
            None => tracelogic_engine::topology::verdict(&report.topology)
                .why_not
                .unwrap_or_else(|| "none identified".into()),
        };
        let pairs = report.overview.matrix.nonzero() as u64;
        let ranks = report.overview.matrix.ranks();
        report.overview.matrix =
            tracelogic_analysis::matrix::CommMatrix::from_entries(ranks, std::iter::empty()).expect("an empty matrix");
        report.topology.components.clear();
        OverviewAnswer {
            label: label.to_owned(),
            files,
            report,
            pairs,
            topology,
            worker_memory_bytes: 0,
            workers: 1,
        }
    }
}

mod overview_json {
    use serde::{Deserialize, Deserializer, Serializer};
    use tracelogic_engine::overview::OverviewReport;

    pub fn serialize<S: Serializer>(report: &OverviewReport, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&serde_json::to_string(report).map_err(serde::ser::Error::custom)?)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<OverviewReport, D::Error> {
        let text = String::deserialize(d)?;
        serde_json::from_str(&text).map_err(serde::de::Error::custom)
    }
}
