//! Communication patterns (thesis ch. 4): per-rank repeats, tandem removal, routine-directed
//! detection, approximate search, cross-rank construction and event graphs.
//!
//! **Events.** Each rank's point-to-point operations and collectives, in call order, become
//! symbols: `S2` (send to world rank 2), `R5` (receive from 5, `R*` for an unresolved wildcard)
//! and the MPI function of a collective (`MPI_Allreduce`). With the envelope, `:t<tag>:b<bytes>`
//! (and `:c<comm>` off `MPI_COMM_WORLD`, `:r<root>` for rooted collectives) is appended.
//!
//! **Per-rank patterns** ([`detect`]). The thesis' valid patterns are reproduced in two steps:
//! 1. tandem repeats are removed to a fixpoint ([`tandem::reduce`], §4.6); every repeated unit is
//!    a pattern whose copies are its occurrences (Sweep3D's `ab`, `ac`, `bd`, `ad` and, one level
//!    up, the whole `abababacacacbdbdbdadadad`; WRF's `abcd`);
//! 2. on the reduced sequence, maximal repeats come from a suffix array with LCP intervals
//!    ([`suffix`]); a repeat is kept when, taking longer repeats first, at least two of its
//!    non-overlapping occurrences are not inside an occurrence of a longer kept repeat (the
//!    thesis' frequency accounting of Algorithm 4.3: a prefix pattern's frequency drops by the
//!    occurrences its extension absorbs, and only frequencies above 1 remain).
//!
//! Patterns from both steps with the same symbols are one pattern; its occurrences are the union
//! (by start). In the default *general form* a run of copies reduces to one copy, so patterns
//! that differ only in loop counts are the same (`(ab)³c` and `(ab)²c` are both `abc`); with
//! `exact` a run becomes a token "unit × count" and counts must agree.
//!
//! **Routine-directed** (§4.4.1): where calls carry call paths, a change of enclosing call path
//! between consecutive events inserts a unique barrier symbol, so no pattern crosses a routine
//! boundary. [`RoutineComparison`] compares it with the plain syntactic detection.
//!
//! **Communication patterns** ([`construct`], Algorithm 4.7): each rank's events are parsed into
//! non-overlapping pattern occurrences; occurrences and single events are joined through matched
//! messages and collective instances into connected instances, and instances with the same
//! per-rank events form one communication pattern, with its occurrences in time.

pub mod align;
pub mod approx;
mod between;
mod chains;
mod collective_period;
mod collective_steps;
pub mod construct;
mod copies;
pub mod extrapolate;
pub mod file;
mod inner_loops;
mod iterations;
mod lacking_collectives;
mod main_loop;
pub mod neighbourhood;
mod parse;
pub mod steps;
pub mod suffix;
pub mod tandem;
pub mod templates;
mod trailing_collectives;

mod detect;
mod events;
mod fold;
mod search;
#[cfg(test)]
mod tests;

use main_loop::{innermost_main_loop, main_loop};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use tracelogic_model::{CallIdx, P2pDir, Rank, Trace, ANY_SOURCE, COMM_WORLD, NO_CALLPATH, NO_ROOT};

pub use construct::{
    construct, construct_with_steps, event_graph, event_graphs, timeline, Arrow, CommunicationAnalysis,
    CommunicationPattern, EventGraph, EventNames, GraphEvent, PatternTimeline, PatternVariant, TimelineLane,
    TimelineSpan,
};

pub use detect::*;
pub use events::*;
use parse::is_loop_body;
pub use parse::{parse_occurrences, parse_occurrences_in, parse_occurrences_with, ParseMode};
pub use search::*;

/// Routine boundaries of one rank: `true` after event `i` when event `i + 1` runs under another
/// call path. `None` when the rank's calls record no call path.
pub fn routine_boundaries(trace: &Trace, events: &RankEvents) -> Option<Vec<bool>> {
    let cp = &trace.ranks[events.rank as usize].calls.callpath;
    if events.calls.iter().all(|&c| cp[c as usize] == NO_CALLPATH) {
        return None;
    }
    let mut b = vec![false; events.calls.len()];
    for i in 0..events.calls.len().saturating_sub(1) {
        b[i] = cp[events.calls[i] as usize] != cp[events.calls[i + 1] as usize];
    }
    Some(b)
}

/// Syntactic detection against routine-directed detection on the ranks that have call paths
/// (thesis Tables 4.1 and 4.3, with the routine-directed patterns as the reference).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoutineComparison {
    /// Ranks with call paths.
    pub ranks: usize,
    /// Patterns found syntactically, summed over those ranks.
    pub syntactic: usize,
    /// Patterns found with routine boundaries.
    pub routine_directed: usize,
    /// Syntactic patterns that are also routine-directed patterns (same symbols).
    pub common: usize,
    /// `common / syntactic` (1 when nothing was found).
    pub precision: f64,
    /// `common / routine_directed` (1 when nothing was found).
    pub recall: f64,
}

/// Everything `tracelogic patterns` reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PatternAnalysis {
    /// The options used.
    pub options: Option<PatternOptions>,
    /// Per world rank, its patterns (most frequent first).
    pub rank_patterns: BTreeMap<Rank, Vec<RankPattern>>,
    /// Communication patterns across ranks: those that repeat, most events covered first,
    /// then instances seen once over several ranks ([`CommunicationAnalysis::repeating_first`]);
    /// all of them, the first [`PatternAnalysis::shown_patterns`] are the ones to list by default.
    pub communication_patterns: Vec<CommunicationPattern>,
    /// Events on all ranks.
    pub events: u64,
    /// Events inside a per-rank pattern occurrence chosen for construction.
    pub events_in_patterns: u64,
    /// Routine-directed against syntactic detection, where call paths exist.
    pub routine_comparison: Option<RoutineComparison>,
    /// Instances in time order, for phases and the timeline.
    #[serde(skip)]
    pub communication: CommunicationAnalysis,
    /// Patterns to list by default: those that repeat and cover at least
    /// [`PatternAnalysis::min_share`] of the events (they come first in
    /// `communication_patterns`, ids `0..shown_patterns`).
    #[serde(default)]
    pub shown_patterns: usize,
    /// Patterns hidden by default: covering less than `min_share` of the events each, or seen
    /// once over several ranks (no form of them repeats).
    #[serde(default)]
    pub hidden_patterns: usize,
    /// Of the hidden patterns, those seen once over several ranks.
    #[serde(default)]
    pub hidden_seen_once: usize,
    /// Events those cover, together.
    #[serde(default)]
    pub hidden_seen_once_events: u64,
    /// Events the hidden patterns cover, together.
    #[serde(default)]
    pub hidden_events: u64,
    /// `hidden_events` over all events.
    #[serde(default)]
    pub hidden_share: f64,
    /// Share of the events below which a pattern is hidden ([`MIN_SHARE`] by default; 0 shows
    /// every pattern).
    #[serde(default)]
    pub min_share: f64,
    /// The same analysis with its steps cut at the run's collective period, where that cut
    /// gives more steps than its best pattern has occurrences and explains more
    /// ([`collective_period::fold_collective_period_finer`]); taken in its place only when
    /// this analysis is the one kept ([`analyse_with`]).
    #[serde(skip)]
    pub finer: Option<Box<PatternAnalysis>>,
    /// The fold's final state, until the analysis to report is chosen ([`analyse_with`]).
    #[serde(skip)]
    pub fold_state: Option<Box<FoldState>>,
}

/// Default share of the events a communication pattern must cover to be listed: 1 %. On NAS MG
/// with 64 ranks, 112 of 120 patterns are one message between two ranks seen twice (4 events,
/// 0.007 % each); listing them first buried the exchange and the reductions.
pub const MIN_SHARE: f64 = 0.01;

impl PatternAnalysis {
    /// Hide the patterns covering less than `share` of the events and, unless `share` is 0
    /// (show all), the instances seen once over several ranks; set the `shown_patterns` and
    /// `hidden_*` fields. The list holds the repeating patterns by events covered, then the
    /// instances seen once, so the shown patterns are a prefix of it.
    pub fn set_min_share(&mut self, share: f64) {
        let share = if share.is_finite() { share.max(0.0) } else { 0.0 };
        let total = self.events.max(1) as f64;
        let shown = self
            .communication_patterns
            .iter()
            .take_while(|p| p.events_covered as f64 >= share * total && (share == 0.0 || !p.repeats_no_form()))
            .count();
        let hidden = &self.communication_patterns[shown..];
        self.min_share = share;
        self.shown_patterns = shown;
        self.hidden_patterns = hidden.len();
        self.hidden_events = hidden.iter().map(|p| p.events_covered).sum();
        let once = || hidden.iter().filter(|p| p.repeats_no_form());
        self.hidden_seen_once = once().count();
        self.hidden_seen_once_events = once().map(|p| p.events_covered).sum();
        self.hidden_share = if self.events == 0 {
            0.0
        } else {
            self.hidden_events as f64 / self.events as f64
        };
    }

    /// The patterns to list: the first [`PatternAnalysis::shown_patterns`].
    pub fn shown(&self) -> &[CommunicationPattern] {
        &self.communication_patterns[..self.shown_patterns.min(self.communication_patterns.len())]
    }
}

/// Detect per-rank and communication patterns of a trace.
pub fn analyse(trace: &Trace, opts: &PatternOptions) -> PatternAnalysis {
    let matching = tracelogic_model::match_messages(trace);
    let events = rank_events(trace, opts.with_envelope);
    analyse_events(trace, &matching, &events, opts)
}

/// [`analyse`] on events already extracted and messages already matched.
pub fn analyse_events(
    trace: &Trace,
    matching: &tracelogic_model::Matching,
    events: &Events,
    opts: &PatternOptions,
) -> PatternAnalysis {
    analyse_with(trace, matching, events, opts, true)
}

/// The communication patterns of [`analyse_events`] alone (what the phases segment): the
/// same instances, without the routine comparison's second, plain detection on ranks with
/// call paths.
pub fn communication_of(
    trace: &Trace,
    matching: &tracelogic_model::Matching,
    events: &Events,
    opts: &PatternOptions,
) -> CommunicationAnalysis {
    analyse_with(trace, matching, events, opts, false).communication
}

/// [`analyse_events`], comparing routine-directed with plain detection when `compare`.
///
/// **One loop level on every rank.** The tandem removal takes whichever repeat its scan meets
/// first, so where an outer loop's body starts with an event of its own (an MD period's extra
/// reduction, GROMACS's neighbour-search step) the period is collapsed before the step inside
/// it; the step's occurrences then span whole runs of periods, ranks parse at different
/// levels, and their messages chain the run into one instance (docs/patterns.md, *An MD
/// loop*). When no form of the first pattern is seen twice — an instance seen once over several
/// ranks, or a "loop" whose iterations all differ (GROMACS on 16 ranks: three stretches of
/// about 50 steps, [`CommunicationPattern::repeats_no_form`]) — the analysis is redone with
/// loops removed innermost first and the main loop's iterations taken at their starts
/// ([`parse_occurrences_with`]); it is kept only when fewer events are left in instances seen
/// once and the pattern explaining most explains no less (the chain split's own test).
fn analyse_with(
    trace: &Trace,
    matching: &tracelogic_model::Matching,
    events: &Events,
    opts: &PatternOptions,
    compare: bool,
) -> PatternAnalysis {
    let mut chosen = choose_nesting(trace, matching, events, opts, compare);
    if let Some(finer) = chosen.finer.take() {
        chosen = *finer;
    }
    // On the analysis kept, not before the choice: it would change which parse wins (LAMMPS
    // `threebody`: the first parse's steps covered more and the redo that finds 403 steps of
    // 400 was no longer tried; 272 in two forms).
    trailing_collectives::join_to_steps(trace, matching, events, &mut chosen);
    if chosen.communication.repeating_first() {
        chosen.communication_patterns = chosen.communication.patterns.clone();
        chosen.set_min_share(chosen.min_share);
    }
    chosen
}

/// The analysis [`analyse_with`] keeps: [`analyse_nested`] as the loops are found, or redone
/// innermost first where the pattern explaining most repeats no form or is not the run's loop.
///
/// Then, where the first pattern is an outer loop of the ranks' loops (its parts hold three
/// back-to-back copies of an inner loop's body on their rank), the ranks parsed again with
/// those inner loops' copies as iterations ([`inner_loops`]), kept where it wins as
/// [`inner_loops::explains_inside`] says.
fn choose_nesting(
    trace: &Trace,
    matching: &tracelogic_model::Matching,
    events: &Events,
    opts: &PatternOptions,
    compare: bool,
) -> PatternAnalysis {
    let analyse = |mode| analyse_nested(trace, matching, events, opts, compare, mode);
    let first = analyse(ParseMode::default());
    let outer_first = inner_loops::holds_inner_iterations(&first, events);
    let best = choose_level(trace, matching, events, opts, compare, first);
    if !outer_first {
        return best;
    }
    let by_inner = analyse(ParseMode {
        nested: true,
        ..ParseMode::default()
    });
    if inner_loops::explains_inside(&by_inner, &best) {
        by_inner
    } else {
        best
    }
}

/// [`choose_nesting`] before the inner loops: `first`, or the innermost-first redo.
fn choose_level(
    trace: &Trace,
    matching: &tracelogic_model::Matching,
    events: &Events,
    opts: &PatternOptions,
    compare: bool,
    first: PatternAnalysis,
) -> PatternAnalysis {
    let glued = |a: &PatternAnalysis| construct::one_off_events(&a.communication_patterns);
    let most = |a: &PatternAnalysis| a.communication_patterns.first().map_or(0, |p| p.events_covered);
    // Only where the pattern a view shows first repeats no form, where it is not the run's loop
    // (an outer loop was collapsed before the loop inside it and another pattern runs more
    // often than the first: a solver's reductions alone, its iterations' messages apart), or
    // where an outer loop was taken whole ([`outer_loops`]: NAS MG's V-cycles, but also a
    // Newton loop's solves that happen to be exact copies). Elsewhere the loops were found, and
    // the redo would cost a second analysis (NAS LU C on 128 ranks: 6.4 → 8.6-12 s).
    let one_off = first
        .communication_patterns
        .first()
        .is_some_and(|p| p.repeats_no_form());
    let pats = || first.rank_patterns.values().flatten();
    let outer_whole = pats().any(|p| p.outer);
    let not_the_loop = first.communication_patterns.split_first().is_some_and(|(top, rest)| {
        rest.iter().any(|p| p.occurrences > top.occurrences) && pats().any(spans_outer_copies)
    });
    if !one_off && !not_the_loop && !outer_whole {
        return first;
    }
    let analyse = |mode| analyse_nested(trace, matching, events, opts, compare, mode);
    let nested = analyse(ParseMode {
        main_first: true,
        ..ParseMode::default()
    });
    // Kept where its first pattern covers no less and, net of the events left in one-off
    // instances, more (both counted in events): a solver's CG iterations found in every linear
    // solve, not their messages alone with the reductions left as lone events, are worth a few
    // more events glued in the set-ups between solves. Against an outer loop taken whole it must
    // also leave no more events in one-off instances: the outer iterations are the steps where
    // the inner loop found first explains the run less well (NAS MG 16: 64 fine-level exchanges
    // cover 12,288 events against the 4 V-cycles' 10,112 but leave 672 in one-off instances
    // against 216), and not where only some solves were copies (GetDP: 6 solves of 8 as whole
    // copies leave 11,136 events one-off, the CG iterations in every solve 397).
    // The outer loop's guard holds only where the first pattern is that coarser loop, its
    // occurrences at least twice the events of the redo's first: where both are the same step
    // (LAMMPS `peri`: its first half's steps rebuilt as an outer loop of one step, the second
    // half's left as lone messages, 92 steps of 200 against the redo's 181), the redo's 40
    // events more in one-off instances do not outweigh the steps it finds.
    let net = |a: &PatternAnalysis| most(a) as i64 - glued(a) as i64;
    let glued_first = glued(&first);
    let per_occurrence = |a: &PatternAnalysis| {
        a.communication_patterns
            .first()
            .map_or(0, |p| p.events_covered / p.occurrences.max(1) as u64)
    };
    let first_per_occurrence = per_occurrence(&first);
    let beats = |a: &PatternAnalysis, b: &PatternAnalysis| {
        let coarser = first_per_occurrence >= 2 * per_occurrence(a);
        let beats_outer = one_off || !outer_whole || !coarser || glued(a) <= glued_first;
        most(a) >= most(b) && net(a) > net(b) && beats_outer
    };
    // The redo again with each rank's main loop taken as the innermost loop whose iterations
    // cover most events, at any rotation ([`innermost_main_loop`]), where that is another loop
    // on some rank; kept on the same terms against the better of the two before it. Debian's
    // LAMMPS `in.melt` (no collective in most steps, each step `X X Y Y Z Z | Z Z Y Y X X`
    // with its three neighbours) reads `X Y Z Y` in the general form, so the parse's main loop
    // was one pair of messages and the step came out as 2-rank pieces (355 × 2 ranks for 250
    // steps; now 250 × 8); repeated by a `label`/`jump` loop, whole runs (3 × 8 ranks for
    // 1,000 steps; now 1,000 × 8). Only a second choice: where the general form's length
    // measures the main loop well (GROMACS 16/150's step), the first redo stays.
    let differs = nested.rank_patterns.values().any(|pats| {
        let (main, in_main) = innermost_main_loop(pats);
        main.is_some() && main_loop(pats).is_none_or(|k| !in_main[k])
    });
    let best = if beats(&nested, &first) { nested } else { first };
    if !differs {
        return best;
    }
    let by_events = analyse(ParseMode {
        main_first: true,
        by_events: true,
        nested: false,
    });
    if beats(&by_events, &best) {
        by_events
    } else {
        best
    }
}

/// A loop body's occurrences overlap one another: the reduction collapsed an outer loop before
/// the loop inside it, so each occurrence of the inner body spans from its copy in the first
/// outer iteration to its copy in the last (a CG iteration over two identical linear solves:
/// its 7 events read as the 2,425 of a whole solve). O(occurrences).
fn spans_outer_copies(p: &RankPattern) -> bool {
    p.tandem
        && p.ends
            .iter()
            .zip(p.positions.iter().skip(1))
            .any(|(&e, &next)| next < e)
}

/// [`analyse_with`] with tandem repeats removed innermost first and the main loop's
/// iterations taken at their starts when `mode.main_first` (the ranks parsed as `mode` says).
fn analyse_nested(
    trace: &Trace,
    matching: &tracelogic_model::Matching,
    events: &Events,
    opts: &PatternOptions,
    compare: bool,
    mode: ParseMode,
) -> PatternAnalysis {
    let innermost = mode.main_first;
    let alphabet = events.names.len() as u32;
    let mut rank_patterns = BTreeMap::new();
    let mut comparison = RoutineComparison::default();
    let mut any_routines = false;
    // Each rank's detection on its own (on every core natively), summed in rank order.
    let detected = crate::logical::per_rank::each_index_counted("finding each rank's loops", events.ranks.len(), |r| {
        let re = &events.ranks[r];
        let bounds = if opts.routines {
            routine_boundaries(trace, re)
        } else {
            None
        };
        let mut pats = detect_nested(&re.symbols, alphabet, bounds.as_deref(), opts, innermost);
        // (syntactic, routine-directed, common) where the rank has routines.
        let compared = (compare && bounds.is_some()).then(|| {
            let plain = detect_nested(&re.symbols, alphabet, None, opts, innermost);
            let keys: std::collections::HashSet<&Vec<u32>> = pats.iter().map(|p| &p.symbols).collect();
            let common = plain.iter().filter(|p| keys.contains(&p.symbols)).count();
            (plain.len(), pats.len(), common)
        });
        name_patterns(&mut pats, &re.symbols, &events.names);
        let occurrences = parse_occurrences_in(re.symbols.len(), Some(&re.symbols), &pats, mode);
        (pats, compared, occurrences)
    });
    let mut occurrences: Vec<Vec<(u32, u32)>> = Vec::with_capacity(events.ranks.len());
    for (re, (pats, compared, occ)) in events.ranks.iter().zip(detected) {
        if let Some((syntactic, routine_directed, common)) = compared {
            any_routines = true;
            comparison.ranks += 1;
            comparison.syntactic += syntactic;
            comparison.routine_directed += routine_directed;
            comparison.common += common;
        }
        rank_patterns.insert(re.rank, pats);
        occurrences.push(occ);
    }
    let routine_comparison = any_routines.then(|| {
        let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
        comparison.precision = ratio(comparison.common, comparison.syntactic);
        comparison.recall = ratio(comparison.common, comparison.routine_directed);
        comparison
    });
    crate::progress::step("joining the ranks' loops into patterns", 0, 0);
    let ops = construct::OpIndex::of(trace, events);
    let occurrences = align::align_runs_with(trace, matching, events, &ops, &occurrences);
    let communication = construct::construct_with_iterations(trace, matching, events, &ops, &occurrences, &[], &[]);
    let (occurrences, communication) =
        match unglue(trace, matching, events, &ops, &mut rank_patterns, &communication, mode) {
            Some(redone) => redone,
            None => (occurrences, communication),
        };
    let input = fold::FoldInput {
        trace,
        matching,
        events,
        ops: &ops,
        innermost,
    };
    let mut state = fold::Folded {
        occurrences,
        loops: Vec::new(),
        communication,
    };
    // In this order, each stage on the previous one's result (kept as it is where a stage
    // changes nothing).
    let stages: [fold::Stage; 9] = [
        // Iterations of the main loop that differ from its body by extra events (re-neighbouring)
        // are occurrences of it too, listed as its variants.
        steps::fold_steps,
        // An instance never spans more than one iteration of a loop on any rank: instances that
        // chain a loop's iterations (ranks whose iterations lack or add events) are split at them.
        chains::split_chains,
        // Steps lacking the step's collectives several in a row (LAMMPS between a neighbour
        // list rebuild and its next check), which the chain split joined to one iteration, are
        // steps of their own.
        lacking_collectives::fold_lacking_collectives,
        // Steps lacking some of the loop body's events (a neighbour's exchange skipped on some
        // ranks) are steps of the loop too, where their partners run one iteration.
        steps::fold_lacking,
        // A stretch between two steps on every rank of the step, holding one step's collectives
        // and messages to the step's partners only, is a step that both lacks and adds events.
        between::fold_between,
        // Loop copies still chained by messages crossing an iteration boundary: iterations are
        // matched across ranks by the majority of their messages, and no instance spans two.
        iterations::split_by_majority,
        // Steps whose form changes over the run (load balancing: exchanges become lone halves)
        // are steps of the main loop, counted by their collectives; folded iterations stay
        // whole.
        collective_steps::fold_collective_steps,
        // Where still no pattern explains a share of the events (a step in a new form nearly
        // every time), the steps are cut at the run's collective period.
        collective_period::fold_collective_period,
        // Steps cut at the collective period that hold several steps lacking some of the
        // step's collectives (LAMMPS's minimiser: a line-search evaluation with three
        // reductions, the next with four) are those steps.
        lacking_collectives::fold_lacking_collectives,
    ];
    for stage in stages {
        if let Some(next) = stage(&input, &state) {
            state = next;
        }
    }
    // Where instances seen once still outweigh the best repeating pattern (steps whose
    // partners change with every rebalancing, chained across steps), the same cut; in the
    // innermost-first redo only, so that a loop the redo finds (GROMACS 16/150) comes first.
    if innermost {
        if let Some(next) = collective_period::fold_collective_period_over_one_offs(&input, &state) {
            state = next;
        }
    }
    // Where the run's collective period cuts more steps than the pattern explaining most has
    // occurrences (its instances hold several steps: LAMMPS `colloid`, a rebuild every few
    // steps), the same cut, kept under the same rule, as the alternative taken when this
    // analysis is the one kept.
    let finer = collective_period::fold_collective_period_finer(&input, &state);
    let analysis_of = |state: fold::Folded, rank_patterns, routine_comparison| {
        let mut analysis = PatternAnalysis {
            options: Some(*opts),
            rank_patterns,
            events: events.ranks.iter().map(|r| r.symbols.len() as u64).sum(),
            routine_comparison,
            ..PatternAnalysis::default()
        };
        analysis.set_fold_state(state, innermost);
        analysis
    };
    let finer = finer.map(|f| Box::new(analysis_of(f, rank_patterns.clone(), routine_comparison.clone())));
    PatternAnalysis {
        finer,
        ..analysis_of(state, rank_patterns, routine_comparison)
    }
}

impl PatternAnalysis {
    /// Take the fold's final `state` (parsed innermost first or not): its communication
    /// analysis, the events its occurrences cover, the patterns shown, and the state itself for
    /// the stages that run on the analysis kept ([`trailing_collectives`]).
    fn set_fold_state(&mut self, state: fold::Folded, innermost: bool) {
        let fold::Folded {
            occurrences,
            loops,
            communication,
        } = state;
        self.events_in_patterns = occurrences.iter().flatten().map(|o| (o.1 - o.0) as u64).sum();
        self.communication_patterns = communication.patterns.clone();
        self.communication = communication;
        self.fold_state = Some(Box::new(FoldState {
            occurrences,
            loops,
            innermost,
        }));
        self.set_min_share(MIN_SHARE);
    }
}

/// What the fold stages ended with, kept on an analysis until [`analyse_with`] has chosen the
/// one to report: each rank's occurrences, the loop each is an iteration of, and whether the
/// ranks were parsed innermost first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FoldState {
    occurrences: Occurrences,
    loops: Vec<Vec<u32>>,
    innermost: bool,
}

/// One glued instance — a communication pattern seen once, over several ranks — that is, on
/// every one of its ranks, inside `k ≥ 2` back-to-back iterations of an outer loop
/// ([`outer_loops`]) with the same `k` everywhere: the ranks' loops were cut at different
/// rotations and chained through their messages (NAS MG on 16 ranks: the four timed V-cycles as
/// one occurrence of 8,928 events). The outer loop bodies become per-rank patterns
/// ([`RankPattern::outer`], taken first by the parse) on those ranks, and the ranks are parsed,
/// aligned and joined again: the body is then a pattern with one occurrence per iteration, the
/// inner loops inside it. Only glued instances trigger this, so runs whose loops were already
/// cut alike keep their patterns, and the new cut is kept only when fewer events are left in
/// one-off instances. `None` (patterns unchanged) otherwise.
pub(super) fn unglue(
    trace: &Trace,
    matching: &tracelogic_model::Matching,
    events: &Events,
    ops: &construct::OpIndex,
    rank_patterns: &mut BTreeMap<Rank, Vec<RankPattern>>,
    communication: &CommunicationAnalysis,
    mode: ParseMode,
) -> Option<(Occurrences, CommunicationAnalysis)> {
    let alphabet = events.names.len() as u32;
    let glued: Vec<bool> = communication
        .patterns
        .iter()
        .map(|p| p.is_one_off_over_ranks())
        .collect();
    let mut candidates: HashMap<Rank, Vec<OuterLoop>> = HashMap::new();
    let mut chosen: BTreeMap<Rank, Vec<usize>> = BTreeMap::new();
    for inst in &communication.instances {
        if !glued.get(inst.pattern as usize).copied().unwrap_or(false) {
            continue;
        }
        let mut picks: Vec<(Rank, usize)> = Vec::with_capacity(inst.parts.len());
        let mut k = None;
        for part in &inst.parts {
            let r = part.rank;
            let cands = candidates
                .entry(r)
                .or_insert_with(|| outer_loops(&events.ranks[r as usize].symbols, alphabet, &rank_patterns[&r]));
            // The part itself spans at least two iterations' worth of events (a glued instance
            // of one iteration — NAS CG's outer iteration seen once at another alignment — is
            // not a repetition to split).
            let hit = cands.iter().position(|(body, copies)| {
                copies[0].0 <= part.last_event
                    && copies[copies.len() - 1].1 > part.first_event
                    && (part.last_event - part.first_event + 1) as usize >= 2 * body.len()
            });
            match hit {
                Some(i) if k.is_none_or(|k| k == cands[i].1.len()) => {
                    k = Some(cands[i].1.len());
                    picks.push((r, i));
                }
                _ => {
                    picks.clear();
                    break;
                }
            }
        }
        for (r, i) in picks {
            let c = chosen.entry(r).or_default();
            if !c.contains(&i) {
                c.push(i);
            }
        }
    }
    if chosen.is_empty() {
        return None;
    }
    let saved = rank_patterns.clone();
    for (r, picks) in &chosen {
        let seq = &events.ranks[*r as usize].symbols;
        let pats = rank_patterns.get_mut(r).expect("every rank has patterns");
        for &i in picks {
            let (symbols, copies) = candidates[r][i].clone();
            pats.retain(|p| p.symbols != symbols);
            let mut p = vec![RankPattern {
                sequence: Vec::new(),
                compact: String::new(),
                frequency: copies.len(),
                positions: copies.iter().map(|c| c.0).collect(),
                ends: copies.iter().map(|c| c.1).collect(),
                tandem: true,
                repeat: false,
                outer: true,
                symbols,
            }];
            name_patterns(&mut p, seq, &events.names);
            pats.extend(p);
        }
        pats.sort_by(|a, b| {
            b.frequency
                .cmp(&a.frequency)
                .then(b.symbols.len().cmp(&a.symbols.len()))
                .then(a.positions[0].cmp(&b.positions[0]))
                .then(a.symbols.cmp(&b.symbols))
        });
    }
    let occurrences: Vec<Vec<(u32, u32)>> = events
        .ranks
        .iter()
        .map(|re| parse_occurrences_in(re.symbols.len(), Some(&re.symbols), &rank_patterns[&re.rank], mode))
        .collect();
    let occurrences = align::align_runs_with(trace, matching, events, ops, &occurrences);
    let redone = construct::construct_with_iterations(trace, matching, events, ops, &occurrences, &[], &[]);
    // Kept only where fewer events are left in one-off instances: on a rank whose loop is cut
    // anew, a partner's composite may chain more than before (HPCC's latency/bandwidth rings).
    if construct::one_off_events(&redone.patterns) >= construct::one_off_events(&communication.patterns) {
        *rank_patterns = saved;
        return None;
    }
    Some((occurrences, redone))
}
