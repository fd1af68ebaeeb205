//! The worker side of the analysis views: each [`AnalysisRequest`] run on the loaded trace and
//! shaped into what its view draws. Pure functions over the trace; native tests call them on the
//! bundled samples.

use crate::protocol::{AnalysisRequest, LogicalDownload, ReferenceLibrary, WireFile};
use serde::{Deserialize, Serialize};
use tracelogic_analysis::compress::{compress, Program};
use tracelogic_analysis::logical::{
    logicalize_identified, place_by_first_contacts, verify, Accuracy, DirectionsFrom, LogicalTrace, Placement,
    RankClass, TopologyInfo, Verification,
};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::patterns::extrapolate::{classify, search_extrapolated, ExtrapolatedSearch};
use tracelogic_analysis::patterns::file::parse_pattern_file;
use tracelogic_analysis::patterns::{
    analyse_events, event_graphs, rank_events, search_pattern, timeline, CommunicationAnalysis, CommunicationPattern,
    EventGraph, Events, PatternAnalysis, PatternOptions, PatternTimeline,
};
use tracelogic_analysis::phases::{detect_phases, divergence_curve, Outside, PhaseAnalysis};
use tracelogic_analysis::replay::{what_if_restricted, DroppedCalls, Network, WhatIf, WhatIfOptions, SEED_SCALES};
use tracelogic_analysis::similarity::{compare_runs, run_properties, CompareOptions, RunProperties, SimilarityMatrix};
use tracelogic_analysis::skeleton::skeleton_c;
use tracelogic_analysis::topology::tracelogic_graph::Graph;
use tracelogic_analysis::topology::{
    identify_graph, identify_matrix, CustomPattern, Threshold, TopologyOptions, TopologyReport,
};
use tracelogic_formats::{read_trace, InputFile};
use tracelogic_model::{match_messages, Matching, Selection, Trace};

/// Most points of one divergence curve sent to the page (longer curves are sampled evenly,
/// keeping the cut).
pub const MAX_CURVE_POINTS: usize = 400;

/// What the logical-trace view shows: figures, the program, the side-by-side text and the
/// merged classes. The three downloads (the logical trace as JSON and as text, the C skeleton:
/// tens of MB on a large run) stay in the worker ([`LogicalKept`]); the page asks for one with
/// [`AnalysisRequest::LogicalDownload`] when its button is pressed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogicalResult {
    /// The topology the trace is expressed in.
    pub topology: TopologyInfo,
    /// Ranks the logical trace was taken from.
    pub ranks_used: Vec<u32>,
    /// Whether a single rank had every neighbour.
    pub maximal: bool,
    /// Dropped calls and bytes, per rank.
    pub accuracy: Accuracy,
    /// How much of every rank's calls the expansion reproduces.
    pub verification: Verification,
    /// The loop-compressed program.
    pub program: Program,
    /// Physical and logical calls side by side (Table 5).
    pub side_by_side: String,
    /// Without a maximal rank: the classes of ranks merged (empty otherwise).
    pub classes: Vec<RankClass>,
    /// Records some class sees but executes otherwise (rank-dependent behaviour).
    pub merge_conflicts: u64,
    /// Why there is no C skeleton (`None`: it can be downloaded).
    pub no_skeleton: Option<String>,
    /// Which isomorphic topology names the directions, and why (`None` before the choice ran).
    pub directions_from: Option<DirectionsFrom>,
    /// Ranks that message themselves, where the direction `self` exists (NAS CG's diagonal).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub self_ranks: Vec<u32>,
}

/// The logical trace behind a [`LogicalResult`], kept in the worker for its downloads.
#[derive(Debug, Clone)]
pub struct LogicalKept {
    logical: LogicalTrace,
    skeleton: Result<String, String>,
}

impl LogicalKept {
    /// The text of download `which`: the logical trace as JSON (as `tracelogic logical --json`
    /// writes it) or as text, or the C skeleton.
    pub fn download(&self, which: LogicalDownload) -> Result<String, String> {
        match which {
            LogicalDownload::Json => {
                serde_json::to_string_pretty(&self.logical).map_err(|e| format!("cannot encode the logical trace: {e}"))
            }
            LogicalDownload::Text => Ok(self.logical.text()),
            LogicalDownload::Skeleton => self.skeleton.clone(),
        }
    }
}

/// What the phases view shows: the analysis and one divergence curve per segment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhasesResult {
    /// The segmentation and its phases.
    pub analysis: PhaseAnalysis,
    /// Per segment of `analysis.tree`: `(position, divergence)` points, at most
    /// [`MAX_CURVE_POINTS`].
    pub curves: Vec<Vec<(usize, f64)>>,
    /// Number of communication patterns (phases name them by id).
    pub patterns: usize,
}

/// What the patterns view shows (also its JSON export).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternsResult {
    /// Communication events in the trace.
    pub events: u64,
    /// Events inside some pattern occurrence.
    pub events_in_patterns: u64,
    /// The communication patterns.
    pub patterns: Vec<CommunicationPattern>,
    /// Per pattern id, the event graphs of its first occurrences (at most
    /// [`GRAPHS_PER_PATTERN`], [`MAX_GRAPH_EVENTS`] events in all).
    #[serde(default)]
    pub graphs: Vec<Vec<EventGraph>>,
    /// The whole run, one lane per rank, coloured by pattern.
    #[serde(default)]
    pub timeline: PatternTimeline,
    /// First timestamp of the whole trace (ns), from which occurrence times are read, as the
    /// phases view and the CLI read theirs: with a time selection the timeline starts later.
    #[serde(default)]
    pub trace_start: u64,
}

/// Occurrences per pattern whose event graph is sent to the page.
pub const GRAPHS_PER_PATTERN: usize = 64;
/// Events over all event graphs sent to the page.
pub const MAX_GRAPH_EVENTS: usize = 50_000;
/// Ranks drawn in the patterns timeline.
pub const TIMELINE_LANES: usize = 256;
/// Spans per timeline lane before consecutive spans of one pattern are merged.
pub const TIMELINE_SPANS: usize = 1000;

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
    pub fn latest(&self) -> Option<&tracelogic_analysis::similarity::Comparison> {
        let m = self.matrix.as_ref()?;
        m.pairs.iter().rev().find(|c| c.first == 0)
    }
}

fn to_json<T: Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string(value).map_err(|e| format!("cannot encode the result: {e}"))
}

/// Run `request` on `trace` and return its view's result as JSON (a logical download: the file's text as it is).
pub fn analyse(trace: &Trace, request: &AnalysisRequest) -> Result<String, String> {
    match request {
        AnalysisRequest::Topology { threshold_pct } => to_json(&placed(trace, topology(trace, *threshold_pct))),
        AnalysisRequest::TopologyWithLibrary { threshold_pct, library } => {
            to_json(&placed(trace, topology_with_library(trace, *threshold_pct, library)?))
        }
        AnalysisRequest::Logical => to_json(&logical(trace)?),
        AnalysisRequest::LogicalDownload { which } => logical_kept(trace)?.1.download(*which),
        AnalysisRequest::Patterns => to_json(&patterns(trace)),
        AnalysisRequest::Match { pattern, max_edits } => to_json(&pattern_search(trace, pattern, *max_edits)?),
        AnalysisRequest::Phases { strength } => to_json(&phases(trace, *strength)?),
        AnalysisRequest::WhatIf { custom } => to_json(&replay(trace, *custom)?),
        AnalysisRequest::Compare { label, files } => to_json(&compare_with(trace, label, files)),
        AnalysisRequest::CompareRuns { runs, refused } => to_json(&compare_all(trace, runs.clone(), refused.clone())),
        AnalysisRequest::SaveAs { format, renumbering } => {
            to_json(&crate::save::save_trace(trace, *format, *renumbering)?)
        }
    }
}

/// The topology view's report: the mapping placed from the ranks' first contacts when the
/// proved isomorphism is not the program's layout, as `tracelogic topology` shows it
/// ([`place_by_first_contacts`]). The logical trace keeps identification's report, whose own
/// placement step says how it placed the ranks.
fn placed(trace: &Trace, mut report: TopologyReport) -> TopologyReport {
    place_by_first_contacts(trace, &mut report);
    report
}

/// The topology report of the whole run at `threshold_pct` (`None`: automatic).
pub fn topology(trace: &Trace, threshold_pct: Option<f64>) -> TopologyReport {
    topology_with(trace, threshold_pct, Vec::new())
}

/// The topology report with the page's reference patterns among the candidates (as `custom`),
/// as `tracelogic topology --library FILE...` gives it. Fails when a stored pattern is broken.
pub fn topology_with_library(
    trace: &Trace,
    threshold_pct: Option<f64>,
    library: &ReferenceLibrary,
) -> Result<TopologyReport, String> {
    Ok(topology_with(trace, threshold_pct, library.custom_patterns()?))
}

fn topology_with(trace: &Trace, threshold_pct: Option<f64>, library: Vec<CustomPattern>) -> TopologyReport {
    let m = CommMatrix::from_trace(trace, &Selection::all());
    let threshold = threshold_pct.map_or(Threshold::Auto, Threshold::Percent);
    identify_matrix(
        &m,
        &TopologyOptions {
            threshold,
            library,
            ..TopologyOptions::default()
        },
    )
}

/// The logical trace on the automatically identified topology, as `tracelogic logical` builds it.
pub fn logical(trace: &Trace) -> Result<LogicalResult, String> {
    logical_kept(trace).map(|(result, _)| result)
}

/// [`logical`] and the logical trace its downloads are made from.
pub fn logical_kept(trace: &Trace) -> Result<(LogicalResult, LogicalKept), String> {
    let report = topology(trace, None);
    // The placement's errors (nothing identified, a user pattern) say why there is none.
    Placement::from_report(&report).map_err(|e| format!("no logical trace: {e}"))?;
    let logical = logicalize_identified(trace, &report, None)?;
    let verification = verify(trace, &logical)?;
    let program = compress(&logical.records);
    let skeleton = skeleton_c(&logical, &program);
    let result = LogicalResult {
        topology: logical.topology.clone(),
        ranks_used: logical.ranks_used.clone(),
        maximal: logical.maximal,
        accuracy: logical.accuracy.clone(),
        verification,
        side_by_side: logical.side_by_side(),
        classes: logical.classes.clone(),
        merge_conflicts: logical.merge_conflicts,
        no_skeleton: skeleton.as_ref().err().cloned(),
        directions_from: logical.directions_from.clone(),
        self_ranks: logical.self_ranks.clone(),
        program,
    };
    Ok((result, LogicalKept { logical, skeleton }))
}

/// Communication patterns with the default options, as `tracelogic patterns` finds them.
pub fn patterns(trace: &Trace) -> PatternsResult {
    patterns_kept(trace).0
}

/// [`patterns`] and what the phases view needs of the same analysis ([`PatternsKept`]), so a
/// session answers the phases view of that selection without finding the patterns again. Its
/// `trace_start` is `trace`'s own; a session analysing a selection sets the whole trace's.
pub fn patterns_kept(trace: &Trace) -> (PatternsResult, PatternsKept) {
    let (matching, events, a) = pattern_analysis(trace);
    let result = PatternsResult {
        events: a.events,
        events_in_patterns: a.events_in_patterns,
        graphs: event_graphs(
            trace,
            &matching,
            &events,
            &a.communication,
            GRAPHS_PER_PATTERN,
            MAX_GRAPH_EVENTS,
        ),
        timeline: timeline(trace, &a.communication, TIMELINE_LANES, TIMELINE_SPANS),
        patterns: a.communication_patterns,
        trace_start: trace.span().0,
    };
    let kept = PatternsKept {
        events,
        communication: a.communication,
    };
    (result, kept)
}

/// Messages matched, events interned and patterns found with the default options.
fn pattern_analysis(trace: &Trace) -> (Matching, Events, PatternAnalysis) {
    let matching = match_messages(trace);
    let opts = PatternOptions::default();
    let events = rank_events(trace, opts.with_envelope);
    let analysis = analyse_events(trace, &matching, &events, &opts);
    (matching, events, analysis)
}

/// What the pattern-search form shows: the search (extrapolated when the pattern names a small
/// topology) and the trace's first timestamp, so times read from the start of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// First timestamp of the trace (ns).
    pub trace_start: u64,
    /// The search (with how the pattern was extrapolated), as `tracelogic match --json`
    /// reports it. Not flattened: serde's flatten cannot read back maps keyed by rank.
    pub search: ExtrapolatedSearch,
}

/// Search the pattern file `text` with at most `max_edits` edits per rank, as `tracelogic
/// match --pattern FILE --max-edits K` does (automatic threshold for the run's topology when
/// the pattern is extrapolated).
pub fn pattern_search(trace: &Trace, text: &str, max_edits: u32) -> Result<SearchResult, String> {
    pattern_search_from(trace, text, max_edits, trace.span().0)
}

/// [`pattern_search`] of a trace restricted to a selection, its answer's times read from
/// `trace_start`: the first timestamp of the whole trace, from which the phases view and the
/// CLI count too (the restricted trace's own first call may come later).
pub fn pattern_search_from(
    trace: &Trace,
    text: &str,
    max_edits: u32,
    trace_start: u64,
) -> Result<SearchResult, String> {
    let file = parse_pattern_file(text).map_err(|e| format!("the pattern: {e}"))?;
    if let Some(e) = file.peer_outside(trace.num_ranks()).filter(|_| file.topology.is_none()) {
        return Err(format!("the pattern: {e}"));
    }
    let matching = match_messages(trace);
    let events = rank_events(trace, false);
    let search = match &file.topology {
        Some(small_topology) => {
            let small = classify(&file.events, small_topology).map_err(|e| format!("the pattern: {e}"))?;
            let report = topology(trace, None);
            let (placement, from) =
                Placement::choose(trace, &report).map_err(|e| format!("cannot extrapolate the pattern: {e}"))?;
            let mut search = search_extrapolated(trace, &matching, &events, &small, &placement, max_edits)?;
            search.directions_from = Some(from);
            search
        }
        None => ExtrapolatedSearch {
            search: search_pattern(trace, &matching, &events, &file.events, max_edits)?,
            ..Default::default()
        },
    };
    Ok(SearchResult { trace_start, search })
}

/// Evenly sampled `(cut, divergence)` points of the curve of a segment starting at `start`
/// (entry `j` is the cut at `start + j + 1`), always keeping the cut `keep` when inside.
fn sample_curve(curve: &[f64], start: usize, keep: Option<usize>) -> Vec<(usize, f64)> {
    let step = curve.len().div_ceil(MAX_CURVE_POINTS).max(1);
    let mut points: Vec<(usize, f64)> = curve
        .iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0 || *i + 1 == curve.len())
        .map(|(i, &d)| (start + 1 + i, d))
        .collect();
    if let Some(k) = keep {
        if k > start && k - start <= curve.len() && !points.iter().any(|p| p.0 == k) {
            points.push((k, curve[k - start - 1]));
            points.sort_by_key(|p| p.0);
        }
    }
    points
}

/// The part of a pattern analysis the phases view segments: every rank's events and the
/// communication pattern instances. Kept by the session per selection, whichever of the
/// patterns and phases views found it first, so moving the strength slider or opening the
/// phases view after the patterns view does not match messages and find patterns again.
#[derive(Debug, Clone)]
pub struct PatternsKept {
    events: Events,
    communication: CommunicationAnalysis,
}

impl PatternsKept {
    /// The pattern analysis the phases view needs, with the default options (those of
    /// [`patterns`], without its event graphs and timeline).
    pub fn find(trace: &Trace) -> PatternsKept {
        let (_, events, a) = pattern_analysis(trace);
        PatternsKept {
            events,
            communication: a.communication,
        }
    }
}

/// Phases at strength `s0`, with every segment's divergence curve.
pub fn phases(trace: &Trace, s0: f64) -> Result<PhasesResult, String> {
    check_strength(s0)?;
    phases_of(trace, &PatternsKept::find(trace), s0)
}

/// The phases view's strength `s0` is a number ≥ 0 (checked before any analysis runs).
pub(crate) fn check_strength(s0: f64) -> Result<(), String> {
    if !s0.is_finite() || s0 < 0.0 {
        return Err(format!("the strength s0 must be a number ≥ 0, got {s0}"));
    }
    Ok(())
}

/// [`phases`] from the pattern analysis `kept` of the same `trace`.
pub fn phases_of(trace: &Trace, kept: &PatternsKept, s0: f64) -> Result<PhasesResult, String> {
    check_strength(s0)?;
    let analysis = detect_phases(trace, &kept.events, &kept.communication, s0, Outside::Own);
    let curves = analysis
        .tree
        .iter()
        .map(|seg| {
            let curve = divergence_curve(&analysis.sequence, seg.start, seg.end);
            sample_curve(&curve, seg.start, seg.cut)
        })
        .collect();
    Ok(PhasesResult {
        analysis,
        curves,
        patterns: kept.communication.patterns.len(),
    })
}

/// The what-if replay on the preset networks and, when given, a custom network
/// (latency in µs, bandwidth in Gb/s).
pub fn replay(trace: &Trace, custom: Option<(f64, f64)>) -> Result<WhatIf, String> {
    replay_restricted(trace, &DroppedCalls::default(), custom)
}

/// [`replay`] of a trace restricted to a selection, with the communication the selection
/// `dropped` kept at its recorded duration as the "not replayed" term instead of becoming
/// computation (`tracelogic replay` with selection flags; docs/replay.md §1).
pub fn replay_restricted(trace: &Trace, dropped: &DroppedCalls, custom: Option<(f64, f64)>) -> Result<WhatIf, String> {
    let mut networks = Network::presets();
    if let Some((latency_us, gbps)) = custom {
        if !(latency_us.is_finite() && latency_us >= 0.0 && gbps.is_finite() && gbps > 0.0) {
            return Err(format!(
                "custom network: latency must be ≥ 0 µs and bandwidth > 0 Gb/s (got {latency_us} µs, {gbps} Gb/s)"
            ));
        }
        networks.push(Network {
            name: "custom".into(),
            latency_s: latency_us * 1e-6,
            bandwidth_bytes_per_s: gbps * 1e9 / 8.0,
        });
    }
    let matching = match_messages(trace);
    let options = WhatIfOptions {
        per_rank: true,
        ..WhatIfOptions::new(networks, SEED_SCALES.to_vec())
    };
    what_if_restricted(trace, dropped, &matching, &options).map_err(|e| e.to_string())
}

/// Read `files` as a second run and compare the loaded trace with it. A run that cannot be read
/// or compared is refused (named in [`CompareResult::refused`]). The page adds the runs compared
/// before with [`AnalysisRequest::CompareRuns`] (see `views::compare::merge_request`).
pub fn compare_with(trace: &Trace, label: &str, files: &[WireFile]) -> CompareResult {
    let inputs = files
        .iter()
        .map(|f| InputFile::new(f.name.clone(), f.bytes.clone()))
        .collect();
    let other = match read_trace(inputs) {
        Ok(t) => t,
        Err(e) => return compare_all(trace, Vec::new(), Some(format!("cannot read {label}: {e}"))),
    };
    let mut added = run_properties(&other, None);
    added.source = label.to_owned();
    if added.ranks != trace.num_ranks() {
        let refused = format!(
            "cannot compare with {label} ({} ranks): runs must have the same number of ranks as the loaded trace ({})",
            added.ranks,
            trace.num_ranks()
        );
        return compare_all(trace, Vec::new(), Some(refused));
    }
    compare_all(trace, vec![added], None)
}

/// Compare the loaded trace with `others` (each pair, as `tracelogic compare A B C...` does) and
/// lay out every run's graph. Others of another rank count than the loaded trace are dropped
/// and named in `refused`.
pub fn compare_all(trace: &Trace, mut others: Vec<RunProperties>, mut refused: Option<String>) -> CompareResult {
    let n = trace.num_ranks();
    if let Some(e) = others.iter().find_map(|r| consistent(r).err()) {
        refused.get_or_insert(e);
        others.retain(|r| consistent(r).is_ok());
    }
    if let Some(odd) = others.iter().find(|r| r.ranks != n) {
        refused.get_or_insert_with(|| format!("{} has {} ranks, the loaded trace {n}", odd.source, odd.ranks));
        others.retain(|r| r.ranks == n);
    }
    if others.is_empty() {
        return CompareResult {
            others,
            matrix: None,
            layouts: Vec::new(),
            refused,
        };
    }
    let mut runs = Vec::with_capacity(others.len() + 1);
    runs.push(run_properties(trace, None));
    runs.extend(others.iter().cloned());
    let (matrix, refused) = match compare_runs(&runs, &CompareOptions::default()) {
        Ok(m) => (Some(m), refused),
        Err(e) => (None, Some(e)),
    };
    CompareResult {
        layouts: runs.iter().map(graph_layout).collect(),
        others,
        matrix,
        refused,
    }
}

/// A run's properties as the comparison indexes them: one value per rank in every vector and
/// edges between existing ranks (runs come back from the page, which may have stored them).
fn consistent(run: &RunProperties) -> Result<(), String> {
    let n = run.ranks as usize;
    let lengths = [run.sends.len(), run.volume.len(), run.spatial.len()];
    if lengths.iter().any(|&l| l != n) || run.work.iter().any(|w| w.work.len() != n) {
        return Err(format!(
            "{}: its properties do not have one value per rank ({n} ranks)",
            run.source
        ));
    }
    if let Some([a, b]) = run
        .edges
        .iter()
        .find(|&&[a, b]| a >= run.ranks || b >= run.ranks || a == b)
    {
        return Err(format!(
            "{}: edge {a}-{b} is not between two of its {n} ranks",
            run.source
        ));
    }
    Ok(())
}

/// Where to draw each rank of `run`: the topology view's layout of its identified topology
/// (grids and tori on their coordinates, trees by depth), else a circle.
fn graph_layout(run: &RunProperties) -> Vec<(f64, f64)> {
    if run.ranks > MAX_COMPARE_DRAWN {
        return Vec::new();
    }
    let g = Graph::from_edges(run.ranks, run.edges.iter().map(|e| (e[0], e[1])));
    let report = identify_graph(&g, &TopologyOptions::default());
    crate::views::topology::layout(&report)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::samples::find;
    use std::path::Path;

    /// The bundled sample `id` as the worker receives it.
    pub(crate) fn sample_files(id: &str) -> Vec<WireFile> {
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

    /// The bundled sample `id`, read.
    pub(crate) fn sample_trace(id: &str) -> Trace {
        let files = sample_files(id);
        read_trace(files.into_iter().map(|f| InputFile::new(f.name, f.bytes)).collect()).unwrap()
    }

    fn run<T: serde::de::DeserializeOwned>(trace: &Trace, request: AnalysisRequest) -> T {
        let json = analyse(trace, &request).unwrap_or_else(|e| panic!("{request:?}: {e}"));
        serde_json::from_str(&json).unwrap()
    }

    #[test]
    fn topology_answer_places_every_rank_and_follows_the_threshold() {
        let lu = sample_trace("npb-lu.S.8");
        let auto: TopologyReport = run(&lu, AnalysisRequest::Topology { threshold_pct: None });
        assert_eq!(auto.identification.matched.as_ref().unwrap().label, "4x2 grid");
        let mut ranks: Vec<u32> = auto.identification.mapping.iter().map(|p| p.rank).collect();
        ranks.sort_unstable();
        assert_eq!(ranks, (0..8).collect::<Vec<_>>());
        let fixed: TopologyReport = run(
            &lu,
            AnalysisRequest::Topology {
                threshold_pct: Some(60.0),
            },
        );
        assert_eq!(fixed.filter.mode, "fixed");
        assert!(fixed.filter.pairs_kept < auto.filter.pairs_kept);
        assert_eq!(
            fixed.filter.pairs_kept + fixed.filter.removed.len(),
            fixed.filter.pairs_before
        );
    }

    #[test]
    fn phase_curves_peak_at_the_cut() {
        let lu = sample_trace("npb-lu.S.8");
        let r: PhasesResult = run(&lu, AnalysisRequest::Phases { strength: 0.0 });
        assert!(!r.analysis.phases.is_empty());
        assert_eq!(r.curves.len(), r.analysis.tree.len());
        for (seg, curve) in r.analysis.tree.iter().zip(&r.curves) {
            assert!(curve.len() <= MAX_CURVE_POINTS + 1);
            assert!(curve.iter().all(|p| p.0 > seg.start && p.0 < seg.end));
            if let Some(cut) = seg.cut {
                let at_cut = curve.iter().find(|p| p.0 == cut).expect("the cut is kept").1;
                assert!(
                    (at_cut - seg.djs).abs() < 1e-9,
                    "segment {}: D at cut {at_cut} vs max {}",
                    seg.id,
                    seg.djs
                );
                assert!(curve.iter().all(|p| p.1 <= seg.djs + 1e-9));
            }
        }
        let coarse: PhasesResult = run(&lu, AnalysisRequest::Phases { strength: 10.0 });
        assert!(coarse.analysis.phases.len() <= r.analysis.phases.len());
        assert!(analyse(&lu, &AnalysisRequest::Phases { strength: f64::NAN }).is_err());
    }

    #[test]
    fn sampled_curves_stay_bounded_and_keep_the_cut() {
        let curve: Vec<f64> = (0..5000).map(|i| (i % 997) as f64).collect();
        let points = sample_curve(&curve, 100, Some(100 + 997));
        assert!(points.len() <= MAX_CURVE_POINTS + 2);
        assert!(points.iter().any(|p| p.0 == 1097 && p.1 == 996.0));
        assert!(points.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(points.first().unwrap().0, 101);
        assert_eq!(points.last().unwrap().0, 100 + 5000);
    }

    #[test]
    fn what_if_adds_the_custom_network_and_refuses_nonsense() {
        let mg = sample_trace("npb-mg.S.8");
        let base: WhatIf = run(&mg, AnalysisRequest::WhatIf { custom: None });
        let names: Vec<&str> = base.classification.iter().map(|c| c.network.as_str()).collect();
        let presets: Vec<String> = Network::presets().into_iter().map(|n| n.name).collect();
        assert_eq!(names, presets);
        let custom: WhatIf = run(
            &mg,
            AnalysisRequest::WhatIf {
                custom: Some((20.0, 10.0)),
            },
        );
        assert_eq!(custom.classification.last().unwrap().network, "custom");
        let c = custom
            .configurations
            .iter()
            .find(|c| c.configuration.network == "custom")
            .unwrap();
        assert!((c.configuration.latency_s - 20e-6).abs() < 1e-15);
        assert!((c.configuration.bandwidth_bytes_per_s - 1.25e9).abs() < 1e-3);
        assert!(analyse(
            &mg,
            &AnalysisRequest::WhatIf {
                custom: Some((1.0, 0.0))
            }
        )
        .is_err());
    }

    #[test]
    fn logical_answer_of_a_torus_of_fours_uses_the_torus_directions() {
        // A 4x4 torus is the 4-cube: identified as the hypercube, named by the torus's moves.
        let spec = tracelogic_synth::Spec {
            topology: tracelogic_synth::TopologySpec::parse("torus:4x4").unwrap(),
            iterations: 4,
            ..tracelogic_synth::Spec::default()
        };
        let trace = tracelogic_synth::generate(&spec).unwrap();
        let r: LogicalResult = run(&trace, AnalysisRequest::Logical);
        let from = r.directions_from.expect("the choice says why");
        assert_eq!(from.identified, "4-dimensional hypercube (2x2x2x2 grid)");
        assert_eq!(from.topology, "4x4 torus");
        assert_eq!(r.topology.label, "4x4 torus");
        assert_eq!(r.verification.overall_share, 1.0);
    }

    #[test]
    fn pattern_search_extrapolates_to_the_torus_a_hypercube_match_is_isomorphic_to() {
        // The 4x4 torus is identified as the 4-cube; a pattern written for a 3x3 torus is
        // extrapolated to the torus the logical view also uses, not refused as non-Cartesian.
        let spec = tracelogic_synth::Spec {
            topology: tracelogic_synth::TopologySpec::parse("torus:4x4").unwrap(),
            iterations: 2,
            ..tracelogic_synth::Spec::default()
        };
        let trace = tracelogic_synth::generate(&spec).unwrap();
        // The generator's halo: receive from west, east, north, south, then send east, west,
        // south, north.
        let at = |x: i32, y: i32| x.rem_euclid(3) + 3 * y.rem_euclid(3);
        let halo: Vec<String> = (0..9)
            .map(|r| {
                let (x, y) = (r % 3, r / 3);
                let peers = [
                    ('R', at(x - 1, y)),
                    ('R', at(x + 1, y)),
                    ('R', at(x, y - 1)),
                    ('R', at(x, y + 1)),
                    ('S', at(x + 1, y)),
                    ('S', at(x - 1, y)),
                    ('S', at(x, y + 1)),
                    ('S', at(x, y - 1)),
                ];
                let events: Vec<String> = peers.iter().map(|(k, p)| format!("\"{k}{p}\"")).collect();
                format!("\"{r}\": [{}]", events.join(", "))
            })
            .collect();
        let pattern = format!(r#"{{"topology": "torus:3x3", "events": {{{}}}}}"#, halo.join(", "));
        let r: SearchResult = run(&trace, AnalysisRequest::Match { pattern, max_edits: 0 });
        assert_eq!(r.search.to_topology, "4x4 torus");
        let from = r.search.directions_from.expect("the placement says why");
        assert_eq!(from.identified, "4-dimensional hypercube (2x2x2x2 grid)");
        assert_eq!(r.search.search.matches.len(), 2, "one occurrence per iteration");
    }

    #[test]
    fn topology_view_places_a_renumbered_bt_from_first_contacts() {
        let bt = sample_trace("npb-bt.S.9");
        let renumbered = bt
            .renumber_ranks(&tracelogic_model::renumber::random_permutation(9, 7))
            .unwrap();
        let r: TopologyReport = run(&renumbered, AnalysisRequest::Topology { threshold_pct: None });
        assert_eq!(r.placed_by, tracelogic_analysis::logical::PlacedBy::FirstContacts);
        let plain = topology(&renumbered, None);
        assert_eq!(plain.placed_by, tracelogic_analysis::logical::PlacedBy::Identification);
        assert_ne!(r.identification.mapping, plain.identification.mapping);
        assert_eq!(r.identification.matched, plain.identification.matched);
    }

    #[test]
    fn logical_answer_names_the_ranks_that_message_themselves() {
        let spec = tracelogic_synth::NasSpec {
            iterations: Some(1),
            ..tracelogic_synth::NasSpec::new(tracelogic_synth::NasBenchmark::Mg, tracelogic_synth::NasClass::S, 4)
        };
        let (mg4, _) = tracelogic_synth::generate_nas(&spec).unwrap();
        let r: serde_json::Value = run(&mg4, AnalysisRequest::Logical);
        let own: Vec<u64> = (0..4u32)
            .filter(|&rank| mg4.ranks[rank as usize].p2p.peer.contains(&rank))
            .map(u64::from)
            .collect();
        assert!(!own.is_empty());
        let listed: Vec<u64> = r["self_ranks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(listed, own);
    }

    #[test]
    fn logical_answer_has_verification_and_skeleton() {
        let bt = sample_trace("npb-bt.S.9");
        let r: LogicalResult = run(&bt, AnalysisRequest::Logical);
        assert_eq!(r.verification.per_rank.len(), 9);
        assert!(r.program.compressed_length < r.program.raw_length);
        assert_eq!(r.no_skeleton, None);
        assert!(!r.side_by_side.is_empty());
        let download = |which| analyse(&bt, &AnalysisRequest::LogicalDownload { which }).unwrap();
        assert!(download(LogicalDownload::Skeleton).contains("MPI_Init"));
        let json: serde_json::Value = serde_json::from_str(&download(LogicalDownload::Json)).unwrap();
        assert_eq!(json["records"].as_array().unwrap().len(), r.program.raw_length);
        assert_eq!(json["classes"].as_array().map_or(0, Vec::len), r.classes.len());
        assert_eq!(json["merge_conflicts"].as_u64().unwrap_or(0), r.merge_conflicts);
        let text = download(LogicalDownload::Text);
        assert!(text.starts_with("# logical trace of "));
        assert_eq!(text.lines().count(), 1 + r.program.raw_length);
    }

    #[test]
    fn compare_with_itself_is_similar_and_bad_input_names_the_file() {
        let lu = sample_trace("npb-lu.S.8");
        let request = AnalysisRequest::Compare {
            label: "LU again".into(),
            files: sample_files("npb-lu.S.8"),
        };
        let r: CompareResult = run(&lu, request);
        let c = r.latest().expect("one pair");
        assert!(c.similar);
        assert!((c.theta - 1.0).abs() < 1e-9 && (c.epsilon - 1.0).abs() < 1e-9);
        assert_eq!(r.others[0].source, "LU again");
        let bad = AnalysisRequest::Compare {
            label: "junk".into(),
            files: vec![WireFile {
                name: "junk.bin".into(),
                bytes: vec![0xff; 17],
            }],
        };
        let refused: CompareResult = run(&lu, bad);
        assert!(refused.refused.as_deref().unwrap().contains("junk"), "{refused:?}");
        assert!(refused.others.is_empty() && refused.latest().is_none());
    }

    #[test]
    fn runs_added_one_by_one_give_the_similarity_matrix_and_drawable_graphs() {
        use crate::views::compare::merge_request;
        let lu = sample_trace("npb-lu.S.8");
        let answer = |request: &AnalysisRequest| analyse(&lu, request);
        let compare = |label: &str, id: &str| AnalysisRequest::Compare {
            label: label.into(),
            files: sample_files(id),
        };
        let first_json = answer(&compare("MG", "npb-mg.S.8"));
        let first: CompareResult = serde_json::from_str(first_json.as_ref().unwrap()).unwrap();
        assert!(
            merge_request(Vec::new(), &first_json).is_none(),
            "a first run needs no merge"
        );
        // BT has 9 ranks: refused, MG stays.
        let bt = answer(&compare("BT", "npb-bt.S.9"));
        let merged = merge_request(first.others.clone(), &bt).expect("a merge keeps MG");
        let refused: CompareResult = run(&lu, merged);
        assert!(refused.refused.as_deref().unwrap().contains("same number of ranks"));
        assert_eq!(refused.others.len(), 1);
        let again = answer(&compare("LU again", "npb-lu.S.8"));
        let three: CompareResult = run(&lu, merge_request(refused.others.clone(), &again).unwrap());
        assert!(three.refused.is_none());
        let m = three.matrix.as_ref().unwrap();
        assert_eq!(m.runs, vec![lu.source.clone(), "MG".into(), "LU again".into()]);
        assert_eq!(m.pairs.len(), 3);
        assert_eq!(three.layouts.len(), 3);
        assert!(three.layouts.iter().all(|l| l.len() == 8));
        // LU against MG is the same pair whether MG was alone or one of two.
        let before = first.latest().unwrap();
        let lu_mg = m.pairs.iter().find(|c| c.first == 0 && c.second == 1).unwrap();
        assert_eq!(lu_mg.epsilon, before.epsilon);
        assert_eq!(lu_mg.theta, before.theta);
        assert!(m.matrix[0][2].similar && (m.matrix[0][2].epsilon - 1.0).abs() < 1e-12);
        assert_eq!(three.latest().unwrap().second, 2);
        // Removing a run recomputes from the properties alone.
        let removed: CompareResult = run(
            &lu,
            AnalysisRequest::CompareRuns {
                runs: vec![three.others[1].clone()],
                refused: None,
            },
        );
        assert_eq!(removed.matrix.as_ref().unwrap().runs.len(), 2);
        let cleared: CompareResult = run(
            &lu,
            AnalysisRequest::CompareRuns {
                runs: Vec::new(),
                refused: None,
            },
        );
        assert!(cleared.matrix.is_none() && cleared.refused.is_none());
        // A trace that could not even be fetched keeps the runs before, with the reason.
        let lost = merge_request(three.others.clone(), &Err("cannot fetch x".into())).unwrap();
        let kept: CompareResult = run(&lu, lost);
        assert_eq!(kept.others.len(), 2);
        assert_eq!(kept.refused.as_deref(), Some("cannot fetch x"));
        // Runs that do not hold together are refused, not compared (no panic in the worker).
        let mut broken = three.others[0].clone();
        broken.edges.push([2, 99]);
        let mut short = three.others[1].clone();
        short.volume.pop();
        for (bad, what) in [(broken, "edge 2-99"), (short, "one value per rank")] {
            let r: CompareResult = run(
                &lu,
                AnalysisRequest::CompareRuns {
                    runs: vec![bad, three.others[1].clone()],
                    refused: None,
                },
            );
            assert!(r.refused.as_deref().unwrap().contains(what), "{:?}", r.refused);
            assert_eq!(r.others.len(), 1, "the run that holds together stays");
            assert_eq!(r.matrix.as_ref().unwrap().runs.len(), 2);
        }
    }

    #[test]
    fn a_saved_graph_becomes_a_custom_candidate_of_later_identifications() {
        let mg = sample_trace("npb-mg.S.8");
        let report = topology(&mg, None);
        let mut library = ReferenceLibrary::default();
        let pattern = crate::protocol::ReferencePattern {
            name: "MG graph".into(),
            ranks: report.identification.ranks,
            edges: report.edges.clone(),
        };
        let text = pattern.edge_list().unwrap();
        let back = crate::protocol::ReferencePattern::from_edge_list("MG graph", &text, "mg.txt").unwrap();
        assert_eq!(back, pattern, "the downloaded edge list reads back as the same pattern");
        library.save(pattern);
        let request = AnalysisRequest::Topology { threshold_pct: None }.with_library(&library);
        let with: TopologyReport = run(&mg, request);
        assert!(
            with.identification
                .equivalents
                .iter()
                .any(|e| e.family == "custom" && e.label.contains("MG graph")),
            "{:?}",
            with.identification.equivalents
        );
        assert_ne!(
            with.identification.matched.as_ref().unwrap().family,
            "custom",
            "built-ins stay simplest"
        );
        let lu: TopologyReport = run(
            &sample_trace("npb-lu.S.8"),
            AnalysisRequest::Topology { threshold_pct: None }.with_library(&library),
        );
        assert!(lu.identification.equivalents.iter().all(|e| e.family != "custom"));
        let broken = ReferenceLibrary {
            patterns: vec![crate::protocol::ReferencePattern {
                name: "broken".into(),
                ranks: 2,
                edges: vec![[0, 5]],
            }],
        };
        let e = analyse(
            &mg,
            &AnalysisRequest::Topology { threshold_pct: None }.with_library(&broken),
        )
        .unwrap_err();
        assert!(e.contains("broken") && e.contains("outside"), "{e}");
        assert_eq!(
            AnalysisRequest::Topology {
                threshold_pct: Some(3.0)
            }
            .with_library(&ReferenceLibrary::default()),
            AnalysisRequest::Topology {
                threshold_pct: Some(3.0)
            }
        );
    }

    #[test]
    fn patterns_answer_lists_the_communication_patterns() {
        let lu = sample_trace("npb-lu.S.8");
        let r: PatternsResult = run(&lu, AnalysisRequest::Patterns);
        assert!(!r.patterns.is_empty());
        assert!(r.events_in_patterns <= r.events);
        assert!(r
            .patterns
            .iter()
            .all(|p| p.occurrences >= 1 && p.positions.len() == p.occurrences));
        // Event graphs of the occurrences, in step with the patterns; one timeline lane per rank.
        assert_eq!(r.graphs.len(), r.patterns.len());
        for (p, graphs) in r.patterns.iter().zip(&r.graphs) {
            assert!(graphs.len() <= p.occurrences.min(GRAPHS_PER_PATTERN));
            for (i, g) in graphs.iter().enumerate() {
                assert_eq!((g.pattern, g.occurrence), (p.id, i));
                assert_eq!(g.ranks, p.ranks);
                assert_eq!(g.events.len(), p.events.values().map(Vec::len).sum::<usize>());
            }
        }
        assert_eq!(r.graphs[0].len(), r.patterns[0].occurrences.min(GRAPHS_PER_PATTERN));
        assert_eq!(r.timeline.lanes.len(), 8);
        let spans: usize = r.timeline.lanes.iter().map(|l| l.spans.len()).sum();
        let parts: usize = r.patterns.iter().map(|p| p.occurrences * p.ranks.len()).sum();
        assert_eq!(spans, parts, "every rank's part of every occurrence is a span");
    }

    #[test]
    fn a_detected_pattern_searched_back_is_found_at_least_as_often() {
        let trace = sample_trace("npb-lu.S.8");
        let found: PatternsResult = run(&trace, AnalysisRequest::Patterns);
        let p = found.patterns.iter().max_by_key(|p| p.occurrences).unwrap();
        let pattern = serde_json::to_string(&p.events).unwrap();
        let r: SearchResult = run(&trace, AnalysisRequest::Match { pattern, max_edits: 0 });
        assert!(
            r.search.search.matches.len() >= p.occurrences,
            "{} < {}",
            r.search.search.matches.len(),
            p.occurrences
        );
        assert!(r
            .search
            .search
            .matches
            .iter()
            .all(|m| m.edits == 0 && m.start >= r.trace_start));
        assert!(r.search.from_topology.is_empty(), "no extrapolation without a topology");
        // A pattern naming the small grid it was written for is extrapolated to the run's.
        let small = r#"{"topology": "grid:4x2", "events": {"1": ["S0", "S2"], "2": ["S1", "S3"]}}"#;
        let r: SearchResult = run(
            &trace,
            AnalysisRequest::Match {
                pattern: small.into(),
                max_edits: 1,
            },
        );
        assert!(!r.search.to_topology.is_empty());
        let bad = analyse(
            &trace,
            &AnalysisRequest::Match {
                pattern: "{\"0\": [\"S1\"".into(),
                max_edits: 0,
            },
        );
        assert!(bad.unwrap_err().starts_with("the pattern: not JSON at line 1"));
    }
}
