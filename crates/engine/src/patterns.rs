//! Communication patterns (thesis ch. 4): per-rank repeats and the communication patterns
//! across ranks, and the approximate search of a user's pattern (thesis §4.5), extrapolated to
//! the run's topology when it names the small topology it was written for.

use crate::{Engine, Error, Result, Scope};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::rc::Rc;
use tracelogic_analysis::patterns::extrapolate::{classify, search_extrapolated};
pub use tracelogic_analysis::patterns::extrapolate::{ExtrapolatedSearch, NeighbourClass, Orientation};
pub use tracelogic_analysis::patterns::file::{parse_pattern_file, PatternFile};
pub use tracelogic_analysis::patterns::templates::{wavefront, Corner};
use tracelogic_analysis::patterns::{
    analyse_events, communication_of, event_graphs, rank_events, search_pattern, timeline,
};
pub use tracelogic_analysis::patterns::{
    CommunicationAnalysis, CommunicationPattern, EventGraph, Events, PatternOptions, PatternSearch, PatternTimeline,
    RoutineComparison,
};
pub use tracelogic_analysis::topology::tracelogic_graph::TopologySpec;
use tracelogic_analysis::topology::Threshold;
use tracelogic_model::{Rank, Selection, Trace};

/// Occurrences per pattern whose event graph a report carries.
pub const GRAPHS_PER_PATTERN: usize = 64;
/// Events over all event graphs of a report.
pub const MAX_GRAPH_EVENTS: usize = 50_000;
/// Ranks drawn in the patterns timeline.
pub const TIMELINE_LANES: usize = 256;
/// Spans per timeline lane before consecutive spans of one pattern are merged.
pub const TIMELINE_SPANS: usize = 1000;

/// What a kept pattern analysis was found for: the selection (absolute); always with the
/// default options (those of the phases).
pub(crate) type PatternsKey = Selection;

/// One per-rank pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankPatternOut {
    /// Its events.
    pub sequence: Vec<String>,
    /// The same, compact.
    pub compact: String,
    /// Occurrences.
    pub frequency: usize,
    /// Where each occurrence starts, in the rank's events.
    pub positions: Vec<u32>,
}

/// The communication patterns of a selection (`tracelogic patterns`, the page's patterns view).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternsReport {
    /// Where the trace came from.
    #[serde(default)]
    pub source: String,
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
    /// phases read theirs: with a time selection the timeline starts later.
    #[serde(default)]
    pub trace_start: u64,
    /// Per selected rank, its repeated sequences, most frequent first.
    #[serde(default)]
    pub rank_patterns: BTreeMap<Rank, Vec<RankPatternOut>>,
    /// Routine-directed against syntactic detection, where the trace records call paths.
    #[serde(default)]
    pub routine_comparison: Option<RoutineComparison>,
    /// The selection applied (times absolute).
    #[serde(default)]
    pub selection: Selection,
    /// Patterns to list by default: the first `shown_patterns` of `patterns` (each repeats and
    /// covers at least `min_share` of the events; `patterns` holds the repeating patterns by
    /// events covered, then the instances seen once over several ranks).
    #[serde(default)]
    pub shown_patterns: usize,
    /// Patterns hidden by default (covering less than `min_share` of the events each, or seen
    /// once over several ranks).
    #[serde(default)]
    pub hidden_patterns: usize,
    /// Of the hidden patterns, the instances seen once over several ranks.
    #[serde(default)]
    pub hidden_seen_once: usize,
    /// `hidden_seen_once`'s events over all events.
    #[serde(default)]
    pub hidden_seen_once_share: f64,
    /// Events the hidden patterns cover, together.
    #[serde(default)]
    pub hidden_events: u64,
    /// `hidden_events` over all events.
    #[serde(default)]
    pub hidden_share: f64,
    /// Share of the events below which a pattern is hidden.
    #[serde(default)]
    pub min_share: f64,
}

impl PatternsReport {
    /// The patterns to list by default (the first [`PatternsReport::shown_patterns`]).
    pub fn shown(&self) -> &[CommunicationPattern] {
        &self.patterns[..self.shown_patterns.min(self.patterns.len())]
    }

    /// What the default listing hides: `112 more patterns covering 0.8 % of events hidden`,
    /// and of them the instances seen once over several ranks (`9 more patterns covering 38.2 %
    /// of events hidden, 9 of them seen once over several ranks (38.2 %)`); `None` when nothing
    /// is hidden. The CLI and the page print it as it is.
    pub fn hidden_note(&self) -> Option<String> {
        (self.hidden_patterns > 0).then(|| {
            let mut note = format!(
                "{} more {} covering {:.1} % of events hidden",
                self.hidden_patterns,
                if self.hidden_patterns == 1 {
                    "pattern"
                } else {
                    "patterns"
                },
                100.0 * self.hidden_share
            );
            if self.hidden_seen_once > 0 {
                note += &format!(
                    ", {} of them seen once over several ranks ({:.1} %)",
                    self.hidden_seen_once,
                    100.0 * self.hidden_seen_once_share
                );
            }
            note
        })
    }

    /// Why there is nothing to show, when nothing repeats.
    pub fn nothing_found(&self) -> Option<String> {
        (self.patterns.is_empty() && self.rank_patterns.values().all(Vec::is_empty))
            .then(|| format!("nothing repeats in {}: no rank's events contain a repeat", self.source))
    }
}

/// The part of a pattern analysis the phases segment: every rank's events and the communication
/// pattern instances. Kept by the engine per selection, whichever of the patterns and phases
/// found it first, so the phases at another strength do not find the patterns again.
#[derive(Debug, Clone)]
pub struct PatternsKept {
    pub(crate) events: Events,
    pub(crate) communication: CommunicationAnalysis,
}

impl Engine {
    /// Communication patterns and per-rank repeats of `selection` with `options`, the event
    /// graphs of their first occurrences and the timeline of the run (`tracelogic patterns`,
    /// the page's patterns view). Occurrence times read from the trace's first event.
    pub fn patterns(&self, selection: &Selection, options: &PatternOptions) -> Result<PatternsReport> {
        let scope = self.scope(selection)?;
        let trace = scope.trace();
        let matching = scope.matching();
        self.kept.pattern_analyses.set(self.kept.pattern_analyses.get() + 1);
        let events = rank_events(trace, options.with_envelope);
        let a = analyse_events(trace, matching, &events, options);
        let rank_patterns = a
            .rank_patterns
            .iter()
            .filter(|&(&r, _)| scope.selection.selects_rank(trace, r))
            .map(|(&r, ps)| {
                let v = ps
                    .iter()
                    .map(|p| RankPatternOut {
                        sequence: p.sequence.clone(),
                        compact: p.compact.clone(),
                        frequency: p.frequency,
                        positions: p.positions.clone(),
                    })
                    .collect();
                (r, v)
            })
            .collect();
        let report = PatternsReport {
            source: trace.source.clone(),
            events: a.events,
            events_in_patterns: a.events_in_patterns,
            graphs: event_graphs(
                trace,
                matching,
                &events,
                &a.communication,
                GRAPHS_PER_PATTERN,
                MAX_GRAPH_EVENTS,
            ),
            timeline: timeline(trace, &a.communication, TIMELINE_LANES, TIMELINE_SPANS),
            patterns: a.communication_patterns,
            trace_start: self.start(),
            rank_patterns,
            routine_comparison: a.routine_comparison,
            selection: scope.selection.clone(),
            shown_patterns: a.shown_patterns,
            hidden_patterns: a.hidden_patterns,
            hidden_seen_once: a.hidden_seen_once,
            hidden_seen_once_share: a.hidden_seen_once_events as f64 / a.events.max(1) as f64,
            hidden_events: a.hidden_events,
            hidden_share: a.hidden_share,
            min_share: a.min_share,
        };
        if *options == PatternOptions::default() {
            let kept = PatternsKept {
                events,
                communication: a.communication,
            };
            *self.kept.patterns.borrow_mut() = Some((scope.selection, Rc::new(kept)));
        }
        Ok(report)
    }

    /// The pattern analysis of `scope` with the default options, found once per selection.
    pub(crate) fn patterns_kept(&self, scope: &Scope<'_>) -> Rc<PatternsKept> {
        self.patterns_kept_and(scope, |_, _| ()).0
    }

    /// [`Engine::patterns_kept`], and `beside(trace, events)`: work that needs the trace's
    /// events but not the patterns (the phases' signed events). When the patterns are not kept
    /// yet it runs natively on a thread of its own beside the message matching and the pattern
    /// detection, whose longest stretches use one core; on wasm, and when they are kept, after.
    pub(crate) fn patterns_kept_and<T: Send>(
        &self,
        scope: &Scope<'_>,
        beside: impl FnOnce(&Trace, &Events) -> T + Send,
    ) -> (Rc<PatternsKept>, T) {
        if let Some((s, kept)) = &*self.kept.patterns.borrow() {
            if *s == scope.selection {
                return (kept.clone(), beside(scope.trace(), &kept.events));
            }
        }
        // The previous analysis is dropped before the next one is found.
        *self.kept.patterns.borrow_mut() = None;
        self.kept.pattern_analyses.set(self.kept.pattern_analyses.get() + 1);
        let opts = PatternOptions::default();
        let trace = scope.trace();
        let events = rank_events(trace, opts.with_envelope);
        #[cfg(not(target_arch = "wasm32"))]
        let (communication, other) = std::thread::scope(|s| {
            let other = s.spawn(|| beside(trace, &events));
            let communication = communication_of(trace, scope.matching(), &events, &opts);
            (
                communication,
                other.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
            )
        });
        #[cfg(target_arch = "wasm32")]
        let (communication, other) = (
            communication_of(trace, scope.matching(), &events, &opts),
            beside(trace, &events),
        );
        let kept = Rc::new(PatternsKept { events, communication });
        *self.kept.patterns.borrow_mut() = Some((scope.selection.clone(), kept.clone()));
        (kept, other)
    }
}

/// A pattern to search for, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    /// The pattern: per rank its event symbols (`S1`, `R0`), and the small topology it was
    /// written for, if any (then it is extrapolated to the run's identified topology).
    pub pattern: PatternFile,
    /// What to call the pattern in messages (its file, or "the pattern").
    pub name: String,
    /// Edits (insertions, deletions, substitutions) allowed per rank.
    pub max_edits: u32,
    /// Traffic threshold of the run's topology identification when extrapolating.
    pub threshold: Threshold,
    /// Symbols carry tag and size (the pattern must use the same spelling).
    pub with_envelope: bool,
}

impl SearchRequest {
    /// The pattern file `text` (docs/patterns.md), named "the pattern", searched with at most
    /// `max_edits` edits per rank and the automatic threshold, as the page asks.
    pub fn from_text(text: &str, max_edits: u32) -> Result<SearchRequest> {
        let pattern = parse_pattern_file(text).map_err(|e| Error::Input(format!("the pattern: {e}")))?;
        Ok(SearchRequest {
            pattern,
            name: "the pattern".into(),
            max_edits,
            threshold: Threshold::Auto,
            with_envelope: false,
        })
    }
}

/// The outcome of a pattern search (`tracelogic match`, the page's search form).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchReport {
    /// First timestamp of the whole trace (ns): match times read from it.
    pub trace_start: u64,
    /// The search, with how the pattern was extrapolated. Not flattened: serde's flatten
    /// cannot read back maps keyed by rank.
    pub search: ExtrapolatedSearch,
    /// The pattern was extrapolated from the small topology it names.
    #[serde(default)]
    pub extrapolated: bool,
    /// The selection searched (times absolute).
    #[serde(default)]
    pub selection: Selection,
}

impl SearchReport {
    /// Why there is nothing to show, when the pattern was not found.
    pub fn nothing_found(&self) -> Option<String> {
        self.search.search.matches.is_empty().then(|| {
            format!(
                "the pattern was not found with at most {} edits per rank",
                self.search.search.max_edits
            )
        })
    }
}

impl Engine {
    /// Search `request`'s pattern in `selection` (times of the matches read from the whole
    /// trace's start). A pattern naming a small Cartesian topology is extrapolated to the run's
    /// topology, placed as the logical trace places it ([`Engine::placement`]).
    pub fn pattern_search(&self, selection: &Selection, request: &SearchRequest) -> Result<SearchReport> {
        let file = &request.pattern;
        let small = file
            .topology
            .as_ref()
            .map(|t| classify(&file.events, t).map_err(|e| Error::Input(format!("{}: {e}", request.name))))
            .transpose()?;
        let scope = self.scope(selection)?;
        let trace = scope.trace();
        if let Some(e) = file.peer_outside(trace.num_ranks()).filter(|_| small.is_none()) {
            return Err(Error::Input(format!("{}: {e}", request.name)));
        }
        let matching = scope.matching();
        let events = rank_events(trace, request.with_envelope);
        let search = match &small {
            Some(small) => {
                let (placement, from) = self.placement_of(&scope, request.threshold)?;
                let mut search = search_extrapolated(trace, matching, &events, small, &placement, request.max_edits)
                    .map_err(|e| Error::Input(format!("{}: {e}", trace.source)))?;
                search.directions_from = Some(from);
                search
            }
            None => ExtrapolatedSearch {
                search: search_pattern(trace, matching, &events, &file.events, request.max_edits)
                    .map_err(Error::Input)?,
                ..Default::default()
            },
        };
        Ok(SearchReport {
            trace_start: self.start(),
            search,
            extrapolated: small.is_some(),
            selection: scope.selection,
        })
    }

    /// The rank of each node of a `columns` x `rows` grid as the logical trace places the run
    /// (its identified topology at `threshold`), when that placement is a grid, torus or stencil
    /// of these dimensions; `None` (row-major ranks) otherwise. A wavefront template is written
    /// for these ranks.
    pub fn grid_ranks(&self, columns: u32, rows: u32, threshold: Threshold) -> Option<Vec<Rank>> {
        let (placement, _) = self.placement(&Selection::all(), threshold).ok()?;
        if placement.spec.dims != [columns, rows] || placement.node_of_rank.len() != (columns * rows) as usize {
            return None;
        }
        let mut rank_of_node = vec![Rank::MAX; placement.node_of_rank.len()];
        for (rank, &node) in placement.node_of_rank.iter().enumerate() {
            *rank_of_node.get_mut(node as usize)? = rank as Rank;
        }
        (!rank_of_node.contains(&Rank::MAX)).then_some(rank_of_node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_engine;
    use crate::FieldWords;

    #[test]
    fn lu_patterns_have_graphs_and_a_lane_per_rank() {
        let e = sample_engine("npb-lu.S.8");
        let r = e.patterns(&Selection::all(), &PatternOptions::default()).unwrap();
        assert!(!r.patterns.is_empty());
        assert!(r.events_in_patterns <= r.events);
        assert_eq!(r.graphs.len(), r.patterns.len());
        for (p, graphs) in r.patterns.iter().zip(&r.graphs) {
            assert!(graphs.len() <= p.occurrences.min(GRAPHS_PER_PATTERN));
            for (i, g) in graphs.iter().enumerate() {
                assert_eq!((g.pattern, g.occurrence), (p.id, i));
                assert_eq!(g.events.len(), p.events.values().map(|e| e.len()).sum::<usize>());
            }
        }
        assert_eq!(r.timeline.lanes.len(), 8);
        let spans: usize = r.timeline.lanes.iter().map(|l| l.spans.len()).sum();
        let parts: usize = r.patterns.iter().map(|p| p.occurrences * p.ranks.len()).sum();
        assert_eq!(spans, parts, "every rank's part of every occurrence is a span");
        assert_eq!(r.nothing_found(), None);
    }

    /// The report carries the shown/hidden split of the analysis, whose hidden patterns are
    /// exactly those covering less than 1 % of the events (counted here from the list).
    #[test]
    fn the_report_splits_shown_and_hidden_patterns_at_one_percent() {
        use tracelogic_synth::{Clock, NasBenchmark, NasClass, NasSpec, Numbering};
        let spec = NasSpec {
            benchmark: NasBenchmark::Mg,
            class: NasClass::S,
            ranks: 64,
            iterations: None,
            numbering: Numbering::RowMajor,
            seed: 0,
            clock: Clock::default(),
        };
        let e = Engine::new(tracelogic_synth::generate_nas(&spec).unwrap().0, FieldWords::Flags);
        let r = e.patterns(&Selection::all(), &PatternOptions::default()).unwrap();
        // Hidden: under 1 % of the events, or an instance seen once over several ranks.
        let small: Vec<&CommunicationPattern> = r
            .patterns
            .iter()
            .filter(|p| (p.events_covered as f64) < 0.01 * r.events as f64 || p.repeats_no_form())
            .collect();
        assert!(!small.is_empty(), "MG on 64 ranks has one-off exchanges");
        assert_eq!(r.hidden_patterns, small.len());
        assert_eq!(r.shown_patterns + r.hidden_patterns, r.patterns.len());
        assert_eq!(r.hidden_events, small.iter().map(|p| p.events_covered).sum::<u64>());
        assert_eq!(r.shown().len(), r.shown_patterns);
        assert!(r.shown().iter().all(|p| !small.iter().any(|q| q.id == p.id)));
        let once = small.iter().filter(|p| p.repeats_no_form()).count();
        assert_eq!(r.hidden_seen_once, once);
        let note = r.hidden_note().expect("something hidden");
        assert!(
            note.starts_with(&format!("{} more patterns covering", small.len())),
            "{note}"
        );
        assert_eq!(note.contains("seen once over several ranks"), once > 0, "{note}");
        assert_eq!(r.min_share, 0.01);
    }

    #[test]
    fn analyses_see_only_the_selected_ranks() {
        let e = sample_engine("npb-lu.S.8");
        let ranks = |r: &PatternsReport| -> std::collections::BTreeSet<u32> {
            r.patterns.iter().flat_map(|p| p.ranks.iter().copied()).collect()
        };
        let opts = PatternOptions::default();
        let whole = e.patterns(&Selection::all(), &opts).unwrap();
        let sel = |r: Vec<u32>| Selection {
            ranks: Some(r),
            ..Selection::default()
        };
        let low = e.patterns(&sel(vec![0, 1, 2, 3]), &opts).unwrap();
        let high = e.patterns(&sel(vec![4, 5, 6, 7]), &opts).unwrap();
        assert_eq!(ranks(&whole), (0..8).collect());
        assert_eq!(ranks(&low), (0..4).collect());
        assert_eq!(ranks(&high), (4..8).collect());
        assert_eq!(low.events + high.events, whole.events);
        assert!(low.rank_patterns.keys().all(|&r| r < 4));
    }

    #[test]
    fn a_detected_pattern_searched_back_is_found_at_least_as_often_and_times_count_from_the_start() {
        let e = sample_engine("npb-lu.S.8");
        let (start, end) = e.trace().span();
        let later = Selection {
            from: Some((end - start) / 2),
            ..Selection::default()
        };
        let found = e.patterns(&later, &PatternOptions::default()).unwrap();
        assert_eq!(found.trace_start, start);
        assert!(found.timeline.start >= start + (end - start) / 2);
        let p = found.patterns.iter().max_by_key(|p| p.occurrences).unwrap();
        let request = SearchRequest::from_text(&serde_json::to_string(&p.events).unwrap(), 0).unwrap();
        let part = e.pattern_search(&later, &request).unwrap();
        let matches = &part.search.search.matches;
        // The events are the pattern's own form; iterations of other forms are its variants.
        let own_form = p.variants.first().map_or(p.occurrences, |v| v.occurrences);
        assert!(matches.len() >= own_form, "{} < {own_form}", matches.len());
        assert!(matches
            .iter()
            .all(|m| m.edits == 0 && m.start >= start + (end - start) / 2));
        assert_eq!(part.trace_start, start);
        let whole = e.pattern_search(&Selection::all(), &request).unwrap();
        assert!(whole.search.search.matches.len() > matches.len());
        assert!(
            whole.search.from_topology.is_empty(),
            "no extrapolation without a topology"
        );
        // A pattern naming the small grid it was written for is extrapolated to the run's.
        let small = r#"{"topology": "grid:4x2", "events": {"1": ["S0", "S2"], "2": ["S1", "S3"]}}"#;
        let r = e
            .pattern_search(&Selection::all(), &SearchRequest::from_text(small, 1).unwrap())
            .unwrap();
        assert!(r.extrapolated && !r.search.to_topology.is_empty());
        let bad = SearchRequest::from_text("{\"0\": [\"S1\"", 0).unwrap_err();
        assert!(bad.message().starts_with("the pattern: not JSON at line 1"), "{bad}");
    }

    #[test]
    fn a_hypercube_match_is_extrapolated_to_the_torus_it_is_isomorphic_to() {
        let spec = tracelogic_synth::Spec {
            topology: tracelogic_synth::TopologySpec::parse("torus:4x4").unwrap(),
            iterations: 2,
            ..tracelogic_synth::Spec::default()
        };
        let e = Engine::new(tracelogic_synth::generate(&spec).unwrap(), FieldWords::Labels);
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
        let r = e
            .pattern_search(&Selection::all(), &SearchRequest::from_text(&pattern, 0).unwrap())
            .unwrap();
        assert_eq!(r.search.to_topology, "4x4 torus");
        let from = r.search.directions_from.expect("the placement says why");
        assert_eq!(from.identified, "4-dimensional hypercube (2x2x2x2 grid)");
        assert_eq!(r.search.search.matches.len(), 2, "one occurrence per iteration");
    }
}
