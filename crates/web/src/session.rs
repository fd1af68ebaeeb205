//! The worker's core, free of any browser API: read the dropped files into a trace, keep it,
//! and answer matrix and analysis requests. Native tests drive it directly on the bundled samples.
//!
//! **Selections.** Every analysis runs on the trace restricted to the page's selection
//! ([`Trace::restrict`], the rule of the CLI's selection flags: docs/cli.md, "Selections"), with
//! times relative to the trace's first event. Each [`Request::Analyse`](crate::protocol::Request)
//! carries the selection the page asked with (the matrix filters), so an answer always belongs to
//! the selection it was asked for, whatever matrix request came between. The topology of a
//! rank selection is that of the traffic among the selected ranks, as `tracelogic topology
//! --ranks` and the matrix view count it (sends to other ranks are left out). The comparison views
//! compare whole runs (the runs compared before are kept as properties only, so a selection could
//! not reach them).

use crate::analyses::{LogicalKept, PatternsKept};
use crate::heatmap::{Grid, MAX_SIDE};
use crate::protocol::AnalysisRequest;
use crate::protocol::{Failure, LoadedTrace, MatrixRequest, MatrixView, ProgressReport, WireFile};
use std::cell::RefCell;
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::replay::dropped_calls;
use tracelogic_analysis::summary::{summarize, Summary};
use tracelogic_formats::{expand_archives, read_trace_with_progress, FormatError, InputFile, Progress, ProgressSink};
use tracelogic_model::{match_messages, P2pDir, Selection, Trace};

/// A loaded trace, kept by the worker between requests.
#[derive(Debug)]
pub struct Session {
    trace: Trace,
    /// The trace restricted to a selection (absolute times), kept for the next analysis of the
    /// same selection: the views of one selection share one restricted copy.
    restricted: RefCell<Option<(Selection, Trace)>>,
    /// The logical trace of the last logical analysis and its selection (as the page sent it),
    /// for the view's downloads, which stay here instead of travelling with the answer.
    logical: RefCell<Option<(Selection, LogicalKept)>>,
    /// The pattern analysis of the last patterns or phases view and its selection (as the page
    /// sent it): the phases view of that selection, at any strength, starts from it.
    patterns: RefCell<Option<(Selection, PatternsKept)>>,
    /// Pattern analyses run so far (see [`Session::pattern_analyses`]).
    pattern_analyses: std::cell::Cell<u64>,
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
        if !stages.stage("matching messages") {
            return Err(cancelled());
        }
        let matching = match_messages(&trace);
        if !stages.stage("summarising") {
            return Err(cancelled());
        }
        let summary: Summary = summarize(&trace, &matching);
        if !stages.stage("building the matrix") {
            return Err(cancelled());
        }
        let session = Session::new(trace);
        let matrix = session.matrix(0, matrix);
        let trace = LoadedTrace {
            label: label.to_owned(),
            source: session.trace.source.clone(),
            files: file_count,
            bytes: bytes_total,
            summary,
        };
        Ok(Loaded { session, trace, matrix })
    }

    /// A session keeping `trace`, with nothing selected yet (everything).
    pub fn new(trace: Trace) -> Session {
        Session {
            trace,
            restricted: RefCell::new(None),
            logical: RefCell::new(None),
            patterns: RefCell::new(None),
            pattern_analyses: std::cell::Cell::new(0),
        }
    }

    /// `selection` with its times, given relative to the trace's first event as the CLI's
    /// `--from` / `--to` are, made absolute.
    fn absolute(&self, selection: &Selection) -> Selection {
        let start = self.trace.span().0;
        Selection {
            from: selection.from.map(|t| start.saturating_add(t)),
            to: selection.to.map(|t| start.saturating_add(t)),
            ..selection.clone()
        }
    }

    /// The matrix of `request` and its filtered form, as the view draws them, tagged with `seq`.
    pub fn matrix(&self, seq: u64, request: &MatrixRequest) -> MatrixView {
        let selection = self.absolute(&request.selection);
        let matrix = CommMatrix::from_trace(&self.trace, &selection);
        let filtered = matrix.filter(request.metric, request.threshold_pct);
        let values = matrix.entry_values(request.metric);
        MatrixView {
            seq,
            request: request.clone(),
            grid: Grid::new(&matrix, &filtered, request.metric, MAX_SIDE),
            nonzero_entries: values.iter().filter(|&&v| v > 0).count() as u64,
            kept_entries: filtered.kept_entries,
            removed_entries: filtered.removed_entries,
            removed_share: filtered.removed_share,
        }
    }

    /// Run one analysis of the whole kept trace; the result is its view's JSON (see
    /// [`crate::analyses`]).
    pub fn analyse(&self, request: &AnalysisRequest) -> Result<String, String> {
        self.analyse_selected(request, &Selection::all())
    }

    /// Run one analysis of the kept trace restricted to `selection` (times relative to the
    /// trace's first event). Comparisons ignore the selection: they compare whole runs.
    pub fn analyse_selected(&self, request: &AnalysisRequest, selection: &Selection) -> Result<String, String> {
        let whole_runs = matches!(
            request,
            AnalysisRequest::Compare { .. } | AnalysisRequest::CompareRuns { .. }
        );
        if whole_runs || *selection == Selection::all() {
            return self.analyse_kept(&self.trace, request, selection);
        }
        let asked = selection;
        let selection = self.absolute(selection);
        let mut cache = self.restricted.borrow_mut();
        // The previous copy is dropped before a new one is built: at most one is held.
        let kept = match cache.take() {
            Some((s, t)) if s == selection => (s, t),
            other => {
                drop(other);
                let restricted = self.trace.restrict(&selection);
                (selection, restricted)
            }
        };
        let (selection, restricted) = &*cache.insert(kept);
        if restricted.num_calls() == 0 {
            return Err("the selection keeps no MPI call of this trace (see the matrix view's filters)".into());
        }
        let topology = matches!(
            request,
            AnalysisRequest::Topology { .. } | AnalysisRequest::TopologyWithLibrary { .. }
        );
        if topology && (selection.ranks.is_some() || selection.comm.is_some()) {
            // The topology of a rank selection is that of the traffic among those ranks, as
            // `tracelogic topology --ranks` and the matrix view count it.
            return crate::analyses::analyse(&sends_among_selected(restricted, selection), request);
        }
        if let AnalysisRequest::WhatIf { custom } = request {
            // What the selection dropped keeps its recorded time instead of turning into
            // computation, as in `tracelogic replay` with selection flags.
            let dropped = dropped_calls(&self.trace, restricted).map_err(|e| e.to_string())?;
            let report = crate::analyses::replay_restricted(restricted, &dropped, *custom)?;
            return serde_json::to_string(&report).map_err(|e| format!("cannot encode the result: {e}"));
        }
        self.analyse_kept(restricted, request, asked)
    }

    /// [`crate::analyses::analyse`] of `trace` (the part `selection` keeps), keeping the logical
    /// trace of a logical analysis for its downloads; a download of another selection's (or
    /// of none yet) builds it again.
    fn analyse_kept(&self, trace: &Trace, request: &AnalysisRequest, selection: &Selection) -> Result<String, String> {
        match request {
            AnalysisRequest::Logical => {
                self.logical.replace(None);
                let (result, kept) = crate::analyses::logical_kept(trace)?;
                self.logical.replace(Some((selection.clone(), kept)));
                serde_json::to_string(&result).map_err(|e| format!("cannot encode the result: {e}"))
            }
            AnalysisRequest::LogicalDownload { which } => {
                let mut cache = self.logical.borrow_mut();
                if let Some((s, kept)) = &*cache {
                    if s == selection {
                        return kept.download(*which);
                    }
                }
                *cache = None;
                let (_, kept) = crate::analyses::logical_kept(trace)?;
                let (_, kept) = cache.insert((selection.clone(), kept));
                kept.download(*which)
            }
            AnalysisRequest::Patterns => {
                self.patterns.replace(None);
                self.pattern_analyses.set(self.pattern_analyses.get() + 1);
                let (mut result, kept) = crate::analyses::patterns_kept(trace);
                result.trace_start = self.trace.span().0;
                self.patterns.replace(Some((selection.clone(), kept)));
                serde_json::to_string(&result).map_err(|e| format!("cannot encode the result: {e}"))
            }
            AnalysisRequest::Phases { strength } => {
                crate::analyses::check_strength(*strength)?;
                let mut cache = self.patterns.borrow_mut();
                let kept = match cache.take() {
                    Some((s, kept)) if s == *selection => kept,
                    other => {
                        drop(other);
                        self.pattern_analyses.set(self.pattern_analyses.get() + 1);
                        PatternsKept::find(trace)
                    }
                };
                let (_, kept) = cache.insert((selection.clone(), kept));
                let result = crate::analyses::phases_of(trace, kept, *strength)?;
                serde_json::to_string(&result).map_err(|e| format!("cannot encode the result: {e}"))
            }
            AnalysisRequest::Match { pattern, max_edits } => {
                // Times read from the whole trace's start, as the phases view and the CLI read them.
                let start = self.trace.span().0;
                let result = crate::analyses::pattern_search_from(trace, pattern, *max_edits, start)?;
                serde_json::to_string(&result).map_err(|e| format!("cannot encode the result: {e}"))
            }
            _ => crate::analyses::analyse(trace, request),
        }
    }

    /// The kept trace.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// How many times this session matched messages and found patterns for the patterns or
    /// phases view (a phases view of the selection of the last one reuses its analysis).
    pub fn pattern_analyses(&self) -> u64 {
        self.pattern_analyses.get()
    }
}

/// `trace` without the sends addressed to ranks outside `selection`'s ranks and communicator
/// (receives and calls are kept), so its whole matrix is the matrix of the selection.
fn sends_among_selected(trace: &Trace, selection: &Selection) -> Trace {
    let selected: Vec<bool> = (0..trace.num_ranks())
        .map(|r| selection.selects_rank(trace, r))
        .collect();
    let mut out = trace.clone();
    for rt in &mut out.ranks {
        let p = &mut rt.p2p;
        let keep: Vec<bool> = (0..p.len())
            .map(|i| p.dir[i] == P2pDir::Recv || selected.get(p.peer[i] as usize).copied().unwrap_or(false))
            .collect();
        if keep.iter().all(|&k| k) {
            continue;
        }
        fn retain<T: Copy>(column: &mut Vec<T>, keep: &[bool]) {
            let mut i = 0;
            column.retain(|_| {
                i += 1;
                keep.get(i - 1).copied().unwrap_or(false)
            });
        }
        retain(&mut p.post, &keep);
        retain(&mut p.complete, &keep);
        retain(&mut p.dir, &keep);
        retain(&mut p.peer, &keep);
        retain(&mut p.tag, &keep);
        retain(&mut p.comm, &keep);
        retain(&mut p.bytes, &keep);
    }
    out
}

/// Most input bytes one trace may have in the browser (1 GiB), counted both as given and once
/// archives are unpacked. The worker holds the input while the readers build the trace next to
/// it, and a wasm32 worker addresses at most 4 GiB: measured in headless Chromium, a 0.97 GB
/// DUMPI set (25 M calls) opened and every analysis ran, while a 1.46 GB set (38 M calls) ran
/// out of memory while its ranks were parsed (docs/performance.md, "Web app").
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::AnalysisRequest;
    use crate::samples::{find, SAMPLES};
    use std::path::Path;
    use tracelogic_analysis::matrix::Metric;

    fn sample_files(id: &str) -> Vec<WireFile> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web/samples").join(id);
        find(id)
            .unwrap()
            .files
            .iter()
            .map(|f| WireFile {
                name: format!("{id}/{f}"),
                bytes: std::fs::read(root.join(f)).unwrap(),
            })
            .collect()
    }

    fn load(id: &str, files: Vec<WireFile>) -> (Result<Loaded, Failure>, Vec<ProgressReport>) {
        let mut reports = Vec::new();
        let result = Session::load(id, files, &MatrixRequest::default(), &mut |p| {
            reports.push(p);
            true
        });
        (result, reports)
    }

    #[test]
    fn lu_sample_loads_with_summary_and_matrix() {
        let files = sample_files("npb-lu.S.8");
        let total: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
        let (result, reports) = load("LU", files);
        let loaded = result.unwrap();
        let s = &loaded.trace.summary;
        assert_eq!(s.format, "dumpi");
        assert_eq!(s.ranks, 8);
        assert_eq!(s.calls, s.calls_per_rank.iter().sum::<u64>());
        assert_eq!(s.calls, loaded.session.trace().num_calls());
        assert_eq!((loaded.trace.files, loaded.trace.bytes), (9, total));
        let m = &loaded.matrix;
        assert_eq!((m.grid.ranks, m.grid.side, m.grid.block), (8, 8, 1));
        assert_eq!(m.request, MatrixRequest::default());
        assert_eq!(m.grid.values.iter().sum::<u64>(), s.p2p_bytes);
        let full = CommMatrix::from_trace(loaded.session.trace(), &Default::default());
        assert_eq!(m.grid.values, full.dense_rows(Metric::Bytes).concat());
        assert_eq!(m.nonzero_entries, full.entries().filter(|e| e.bytes > 0).count() as u64);
        let stages: Vec<&str> = reports.iter().map(|r| r.stage.as_str()).collect();
        let after_read = ["matching messages", "summarising", "building the matrix"];
        assert!(stages.ends_with(&after_read), "stages {stages:?}");
        assert!(reports.iter().all(|r| r.bytes_done <= r.bytes_total), "{reports:?}");
        assert_eq!(reports.last().unwrap().bytes_total, total);
    }

    #[test]
    fn matrix_requests_follow_metric_and_threshold() {
        let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
        let request = MatrixRequest {
            metric: Metric::Messages,
            threshold_pct: 100.0,
            ..MatrixRequest::default()
        };
        let view = loaded.session.matrix(7, &request);
        assert_eq!(view.seq, 7);
        let full = CommMatrix::from_trace(loaded.session.trace(), &Default::default());
        let filtered = full.filter(Metric::Messages, 100.0);
        assert_eq!(view.grid.values, full.dense_rows(Metric::Messages).concat());
        let kept: Vec<bool> = filtered.dense_rows(&full).concat().iter().map(|&b| b == 1).collect();
        assert_eq!(view.grid.kept, kept);
        assert_eq!(view.removed_entries, filtered.removed_entries);
        assert_eq!(view.removed_share, filtered.removed_share);
        let kept_at_0 = loaded.session.matrix(
            8,
            &MatrixRequest {
                threshold_pct: 0.0,
                ..request.clone()
            },
        );
        let ones = |v: &MatrixView| v.grid.kept.iter().filter(|&&k| k).count() as u64;
        assert!(ones(&kept_at_0) >= ones(&view));
        assert_eq!(ones(&view), view.kept_entries);
        assert_eq!(
            kept_at_0.kept_entries,
            kept_at_0.nonzero_entries - kept_at_0.removed_entries
        );
    }

    #[test]
    fn matrix_selection_times_are_relative_to_the_first_event() {
        let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
        let trace = loaded.session.trace();
        let (start, end) = trace.span();
        let half = (end - start) / 2;
        let request = |selection: Selection| MatrixRequest {
            selection,
            ..MatrixRequest::default()
        };
        // Ranks: only sends by and to ranks 0 and 1.
        let ranks = loaded.session.matrix(
            1,
            &request(Selection {
                ranks: Some(vec![0, 1]),
                ..Selection::default()
            }),
        );
        let nonzero: Vec<(u32, u32)> = (0..8u32)
            .flat_map(|r| (0..8u32).map(move |c| (r, c)))
            .filter(|&(r, c)| ranks.grid.values[(r * 8 + c) as usize] > 0)
            .collect();
        assert_eq!(nonzero, vec![(0, 1), (1, 0)]);
        // Time: the first half of the run, given relative to its start, equals the absolute selection.
        let relative = loaded.session.matrix(
            2,
            &request(Selection {
                to: Some(half),
                ..Selection::default()
            }),
        );
        let absolute = CommMatrix::from_trace(
            trace,
            &Selection {
                to: Some(start + half),
                ..Selection::default()
            },
        );
        assert_eq!(relative.grid.values, absolute.dense_rows(Metric::Bytes).concat());
        let all = CommMatrix::from_trace(trace, &Selection::default());
        let sum = |v: &[u64]| v.iter().sum::<u64>();
        assert!(sum(&relative.grid.values) > 0 && sum(&relative.grid.values) < all.total(Metric::Bytes));
    }

    #[test]
    fn logical_downloads_come_from_the_selection_they_are_asked_with() {
        use crate::analyses::LogicalResult;
        use crate::protocol::LogicalDownload;
        let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
        let session = &loaded.session;
        let json = |selection: &Selection| -> serde_json::Value {
            let text = session
                .analyse_selected(
                    &AnalysisRequest::LogicalDownload {
                        which: LogicalDownload::Json,
                    },
                    selection,
                )
                .unwrap();
            serde_json::from_str(&text).unwrap()
        };
        let (start, end) = session.trace().span();
        let low = Selection {
            to: Some((end - start) / 2),
            ..Selection::default()
        };
        let whole: LogicalResult = serde_json::from_str(&session.analyse(&AnalysisRequest::Logical).unwrap()).unwrap();
        let kept = json(&Selection::all());
        assert_eq!(kept["records"].as_array().unwrap().len(), whole.program.raw_length);
        // Asked for another selection than the kept one, the download is that selection's.
        let part: LogicalResult =
            serde_json::from_str(&session.analyse_selected(&AnalysisRequest::Logical, &low).unwrap()).unwrap();
        assert_ne!(part.program.raw_length, whole.program.raw_length);
        assert_eq!(json(&Selection::all()), kept);
        assert_eq!(json(&low)["records"].as_array().unwrap().len(), part.program.raw_length);
    }

    #[test]
    fn analyses_see_only_the_selected_ranks() {
        use crate::analyses::PatternsResult;
        let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
        let session = &loaded.session;
        let patterns =
            |json: Result<String, String>| -> PatternsResult { serde_json::from_str(&json.unwrap()).unwrap() };
        let whole = patterns(session.analyse(&AnalysisRequest::Patterns));
        let ranks = |r: &PatternsResult| -> std::collections::BTreeSet<u32> {
            r.patterns.iter().flat_map(|p| p.ranks.iter().copied()).collect()
        };
        assert_eq!(ranks(&whole), (0..8).collect());
        let low = Selection {
            ranks: Some(vec![0, 1, 2, 3]),
            ..Selection::default()
        };
        let high = Selection {
            ranks: Some(vec![4, 5, 6, 7]),
            ..Selection::default()
        };
        let first = patterns(session.analyse_selected(&AnalysisRequest::Patterns, &low));
        assert_eq!(ranks(&first), (0..4).collect());
        assert!(first.events > 0 && first.events < whole.events);
        // A matrix request for other ranks in between changes nothing: an analysis answers for
        // the selection it carries, not for the latest matrix's.
        session.matrix(
            1,
            &MatrixRequest {
                selection: high.clone(),
                ..MatrixRequest::default()
            },
        );
        assert_eq!(
            patterns(session.analyse_selected(&AnalysisRequest::Patterns, &low)),
            first
        );
        assert_eq!(patterns(session.analyse(&AnalysisRequest::Patterns)), whole);
        let last = patterns(session.analyse_selected(&AnalysisRequest::Patterns, &high));
        assert_eq!(ranks(&last), (4..8).collect());
        assert_eq!(first.events + last.events, whole.events);
    }

    #[test]
    fn pattern_times_of_a_time_selection_count_from_the_whole_trace_start() {
        use crate::analyses::{PatternsResult, SearchResult};
        let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
        let session = &loaded.session;
        let (start, end) = session.trace().span();
        let later = Selection {
            from: Some((end - start) / 2),
            ..Selection::default()
        };
        let found: PatternsResult =
            serde_json::from_str(&session.analyse_selected(&AnalysisRequest::Patterns, &later).unwrap()).unwrap();
        assert_eq!(found.trace_start, start);
        assert!(
            found.timeline.start >= start + (end - start) / 2,
            "the timeline is the selection's: {} from {start}",
            found.timeline.start
        );
        let p = found.patterns.iter().max_by_key(|p| p.occurrences).unwrap();
        let request = AnalysisRequest::Match {
            pattern: serde_json::to_string(&p.events).unwrap(),
            max_edits: 0,
        };
        let searched: SearchResult =
            serde_json::from_str(&session.analyse_selected(&request, &later).unwrap()).unwrap();
        assert_eq!(searched.trace_start, start);
        let matches = &searched.search.search.matches;
        assert!(!matches.is_empty());
        assert!(matches.iter().all(|m| m.start >= start + (end - start) / 2));
        let whole: SearchResult = serde_json::from_str(&session.analyse(&request).unwrap()).unwrap();
        assert_eq!(whole.trace_start, start);
        assert!(whole.search.search.matches.len() > matches.len());
    }

    #[test]
    fn the_topology_of_a_rank_selection_is_that_of_the_traffic_among_those_ranks() {
        use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
        let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
        let trace = loaded.session.trace();
        let selection = Selection {
            ranks: Some(vec![0, 1, 2, 3]),
            ..Selection::default()
        };
        let answer: serde_json::Value = serde_json::from_str(
            &loaded
                .session
                .analyse_selected(&AnalysisRequest::Topology { threshold_pct: None }, &selection)
                .unwrap(),
        )
        .unwrap();
        // What `tracelogic topology --ranks 0-3` identifies: the matrix of the selection.
        let cli = identify_matrix(&CommMatrix::from_trace(trace, &selection), &TopologyOptions::default());
        assert_eq!(answer["edges"], serde_json::to_value(&cli.edges).unwrap());
        let edges = answer["edges"].as_array().unwrap();
        assert!(!edges.is_empty());
        for e in edges {
            assert!(e[0].as_u64().unwrap() < 4 && e[1].as_u64().unwrap() < 4, "{e}");
        }
    }

    #[test]
    fn phases_start_from_the_pattern_analysis_of_the_same_selection() {
        use crate::analyses::phases;
        let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
        let session = &loaded.session;
        let trace = session.trace();
        // The selection of the kept analysis and the number of analyses run so far.
        let kept = || -> (Selection, u64) {
            let cache = session.patterns.borrow();
            let (selection, _) = cache.as_ref().expect("a pattern analysis is kept");
            (selection.clone(), session.pattern_analyses())
        };
        // Answers as the page gets them (JSON text: compared as text, floats exactly).
        let phases_at = |strength: f64, selection: &Selection| -> String {
            session
                .analyse_selected(&AnalysisRequest::Phases { strength }, selection)
                .unwrap()
        };
        let expected = |trace: &Trace, strength: f64| serde_json::to_string(&phases(trace, strength).unwrap()).unwrap();
        let low_selection = || {
            let (start, end) = trace.span();
            Selection {
                to: Some((end - start) / 2),
                ..Selection::default()
            }
        };
        let length = |answer: &str| -> u64 {
            let v: serde_json::Value = serde_json::from_str(answer).unwrap();
            v["analysis"]["sequence_length"].as_u64().unwrap()
        };
        session.analyse(&AnalysisRequest::Patterns).unwrap();
        assert_eq!(kept(), (Selection::all(), 1));
        // The phases view after the patterns view, at any strength: the same answer as phases
        // found from scratch, from the analysis the patterns view kept.
        for strength in [0.0, 0.5, 2.0] {
            assert_eq!(phases_at(strength, &Selection::all()), expected(trace, strength));
            assert_eq!(kept(), (Selection::all(), 1));
        }
        assert!(session
            .analyse_selected(&AnalysisRequest::Phases { strength: -1.0 }, &low_selection())
            .unwrap_err()
            .contains("strength"));
        assert_eq!(kept(), (Selection::all(), 1));
        // Another selection: its own analysis replaces the kept one, and is reused in turn.
        let (start, end) = trace.span();
        let low = low_selection();
        let restricted = trace.restrict(&Selection {
            to: Some(start + (end - start) / 2),
            ..Selection::default()
        });
        let part = phases_at(0.0, &low);
        assert_eq!(part, expected(&restricted, 0.0));
        assert_ne!(length(&part), length(&phases_at(0.0, &Selection::all())));
        // (low: the second analysis; the whole trace after it: the third)
        assert_eq!(kept(), (Selection::all(), 3));
        session.analyse_selected(&AnalysisRequest::Patterns, &low).unwrap();
        assert_eq!(kept(), (low.clone(), 4));
        assert_eq!(phases_at(1.0, &low), expected(&restricted, 1.0));
        assert_eq!(kept(), (low, 4));
    }

    #[test]
    fn analysis_windows_are_relative_to_the_first_event() {
        use crate::analyses::PhasesResult;
        let loaded = load("MG", sample_files("npb-mg.S.8")).0.unwrap();
        let session = &loaded.session;
        let trace = session.trace();
        let (start, end) = trace.span();
        let half = (end - start) / 2;
        let first_half = Selection {
            to: Some(half),
            ..Selection::default()
        };
        let request = AnalysisRequest::Phases { strength: 0.0 };
        let answer: PhasesResult =
            serde_json::from_str(&session.analyse_selected(&request, &first_half).unwrap()).unwrap();
        let absolute = trace.restrict(&Selection {
            to: Some(start + half),
            ..Selection::default()
        });
        let expected = crate::analyses::phases(&absolute, 0.0).unwrap();
        assert_eq!(answer.analysis.sequence, expected.analysis.sequence);
        assert!(answer.analysis.sequence_length > 0);
        for phase in &answer.analysis.phases {
            assert!(
                phase.time.0 < start + half,
                "phase at {:?} outside the window",
                phase.time
            );
        }
        // What-if on collectives only replays no message.
        let collectives = Selection {
            kinds: Some(vec![tracelogic_model::CallKind::Collective]),
            ..Selection::default()
        };
        let whatif: serde_json::Value = serde_json::from_str(
            &session
                .analyse_selected(&AnalysisRequest::WhatIf { custom: None }, &collectives)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(whatif["messages"], 0);
        assert_eq!(whatif["calls"], 816);
    }

    #[test]
    fn what_if_of_point_to_point_keeps_the_dropped_collectives_out_of_computation() {
        use tracelogic_analysis::replay::WhatIf;
        use tracelogic_model::CallKind::*;
        let loaded = load("MG", sample_files("npb-mg.S.8")).0.unwrap();
        let session = &loaded.session;
        let p2p = Selection {
            kinds: Some(vec![Send, Isend, Recv, Irecv, SendRecv, Completion]),
            ..Selection::default()
        };
        let request = AnalysisRequest::WhatIf { custom: None };
        let answer: WhatIf = serde_json::from_str(&session.analyse_selected(&request, &p2p).unwrap()).unwrap();
        // The same as the core's replay of the restriction with what it dropped.
        let restricted = session.trace().restrict(&session.absolute(&p2p));
        let dropped = dropped_calls(session.trace(), &restricted).unwrap();
        let expected = crate::analyses::replay_restricted(&restricted, &dropped, None).unwrap();
        let plain = crate::analyses::replay(&restricted, None).unwrap();
        let base = |w: &WhatIf| w.configurations[0].breakdown;
        assert_eq!(base(&answer), base(&expected));
        // MG's collectives took time: it is "not replayed", and no longer computation.
        assert!(base(&answer).not_replayed_s > 0.0, "{:?}", base(&answer));
        assert!(
            base(&answer).compute_s < base(&plain).compute_s,
            "{:?} vs {:?}",
            base(&answer),
            base(&plain)
        );
        assert_eq!(base(&plain).not_replayed_s, 0.0);
    }

    #[test]
    fn an_empty_selection_is_an_error_for_every_analysis_not_a_panic() {
        let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
        let empty = Selection {
            from: Some(3_600_000_000_000),
            ..Selection::default()
        };
        for request in [
            AnalysisRequest::Topology { threshold_pct: None },
            AnalysisRequest::Logical,
            AnalysisRequest::Patterns,
            AnalysisRequest::Phases { strength: 0.0 },
            AnalysisRequest::WhatIf { custom: None },
        ] {
            let e = loaded.session.analyse_selected(&request, &empty).unwrap_err();
            assert!(e.contains("selection keeps no MPI call"), "{request:?}: {e}");
        }
        // Ranks the trace does not have select nothing either.
        let absent = Selection {
            ranks: Some(vec![99]),
            ..Selection::default()
        };
        assert!(loaded
            .session
            .analyse_selected(&AnalysisRequest::Patterns, &absent)
            .is_err());
    }

    /// 65,536 ranks were refused when the matrix was dense (64 GiB); the sparse matrix loads
    /// them, and the heatmap groups them into 512-rank blocks from the non-zero entries.
    #[test]
    fn a_trace_of_65536_ranks_loads_and_its_heatmap_is_grouped() {
        let text = "#tracelogic-text 1\nranks 65536\nfunction 0 MPI_Send\n\
                    65535 10 20 MPI_Send send=0 tag=0 bytes=64\n\
                    1 30 40 MPI_Send send=1023 tag=0 bytes=8\n";
        let files = vec![WireFile {
            name: "huge.txt".into(),
            bytes: text.as_bytes().to_vec(),
        }];
        let loaded = load("huge", files).0.unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!(loaded.trace.summary.ranks, 65_536);
        let m = &loaded.matrix;
        assert_eq!((m.grid.ranks, m.grid.block, m.grid.side), (65_536, 512, 128));
        assert_eq!(
            m.grid.value(127, 0),
            64,
            "65535 → 0 lands in the last row's first block"
        );
        assert_eq!(m.grid.value(0, 1), 8, "1 → 1023 lands in the second column block");
        assert_eq!(m.grid.values.iter().sum::<u64>(), 72);
        assert_eq!((m.nonzero_entries, m.kept_entries, m.removed_entries), (2, 2, 0));
    }

    #[test]
    fn inputs_over_the_limit_are_refused_as_given_and_once_unpacked() {
        use std::io::Write;
        let csv = sample_files("pipit-csv").remove(0);
        let size = csv.bytes.len() as u64;
        let Err(err) = Session::load_with_limit(
            "csv",
            vec![csv.clone()],
            &MatrixRequest::default(),
            &mut |_| true,
            size - 1,
        ) else {
            panic!("an input over the limit was accepted")
        };
        assert!(
            err.message
                .starts_with(&format!("csv: too large: {size} bytes, limit {}", size - 1)),
            "{}",
            err.message
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&csv.bytes).unwrap();
        let packed = WireFile {
            name: "ping-pong-csv.csv.gz".into(),
            bytes: gz.finish().unwrap(),
        };
        let packed_size = packed.bytes.len() as u64;
        assert!(packed_size < size);
        let limit = packed_size.max(size / 2);
        let Err(err) = Session::load_with_limit(
            "gz",
            vec![packed.clone()],
            &MatrixRequest::default(),
            &mut |_| true,
            limit,
        ) else {
            panic!("an archive unpacking over the limit was accepted")
        };
        assert!(
            err.message
                .starts_with(&format!("gz: too large: {size} bytes once unpacked, limit {limit}")),
            "{}",
            err.message
        );
        let loaded = Session::load_with_limit("gz", vec![packed], &MatrixRequest::default(), &mut |_| true, size)
            .unwrap_or_else(|f| panic!("{}", f.message));
        assert!(loaded.trace.summary.calls > 0);
        assert_eq!(too_large("x", MAX_INPUT_BYTES, MAX_INPUT_BYTES, ""), None);
    }

    #[test]
    fn every_bundled_sample_loads() {
        for s in SAMPLES {
            let (result, _) = load(s.id, sample_files(s.id));
            let loaded = result.unwrap_or_else(|f| panic!("sample {} fails to load: {}", s.id, f.message));
            assert!(loaded.trace.summary.ranks > 0, "sample {}", s.id);
            assert!(loaded.trace.summary.calls > 0, "sample {}", s.id);
        }
    }

    #[test]
    fn truncated_file_error_names_the_file() {
        let mut files = sample_files("npb-lu.S.8");
        let victim = files.iter_mut().find(|f| f.name.ends_with("-0003.bin")).unwrap();
        victim.bytes.truncate(victim.bytes.len() / 2);
        let name = victim.name.rsplit('/').next().unwrap().to_owned();
        let failure = load("LU", files).0.unwrap_err();
        assert!(!failure.cancelled);
        assert!(failure.message.contains(&name), "{}", failure.message);
    }

    #[test]
    fn unknown_input_is_an_error_not_a_panic() {
        let files = vec![WireFile {
            name: "notes.txt".into(),
            bytes: b"hello, this is not a trace\n".to_vec(),
        }];
        let failure = load("notes", files).0.unwrap_err();
        assert!(!failure.cancelled);
        assert!(!failure.message.is_empty());
        let failure = load("nothing", Vec::new()).0.unwrap_err();
        assert!(!failure.message.is_empty());
    }

    #[test]
    fn cancelling_stops_the_load() {
        for stop_at in ["matching messages", "summarising", "building the matrix"] {
            let result = Session::load("LU", sample_files("npb-lu.S.8"), &MatrixRequest::default(), &mut |p| {
                p.stage != stop_at
            });
            let failure = result.unwrap_err();
            assert!(failure.cancelled, "stopping at {stop_at}");
        }
        let result = Session::load("LU", sample_files("npb-lu.S.8"), &MatrixRequest::default(), &mut |_| {
            false
        });
        assert!(result.unwrap_err().cancelled, "stopping at the first report");
    }
}
