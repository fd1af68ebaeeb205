//! Execution phases (thesis ch. 5): the run's communication segmented into phases by recursive
//! Jensen–Shannon segmentation ([`segmentation`]) of what the run communicates ([`content`]), the
//! phases reported with their patterns, topology, collectives and imbalance ([`describe`]),
//! adjacent phases merged while not significantly different ([`merge`]).

use serde::{Deserialize, Serialize};

pub mod content;
pub mod describe;
pub mod kinds;
pub mod merge;
pub mod moved;
pub mod rates;
pub mod segmentation;
pub mod spans;
mod stages;
mod xlogx;

pub use describe::{Imbalance, PhaseTopology};
pub use merge::BoundaryTest;
pub use segmentation::*;

/// What the phase sequence does with communication outside any pattern (instances that contain
/// no per-rank pattern and happen once: start-up, one-off exchanges).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outside {
    /// One shared symbol for all of them (the default: initialisation and finalisation stay
    /// visible as phases of their own).
    Own,
    /// Left out of the sequence.
    Skip,
}

/// A rank's share of a phase: one stretch of the rank's events. On every rank the stretches of
/// successive phases follow one another and together hold every event of the rank
/// ([`spans::cuts`]: each boundary where the fewest of the rank's occurrence events fall on the
/// wrong side of it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankSpan {
    /// World rank.
    pub rank: tracelogic_model::Rank,
    /// First event of the rank in the phase (index in its event sequence).
    pub first_event: u32,
    /// Last event; the next phase on this rank begins at the one after it.
    pub last_event: u32,
    /// Entry time of the first event's call (ns).
    pub start: tracelogic_model::Time,
    /// Exit time of the last event's call (ns).
    pub end: tracelogic_model::Time,
}

/// One phase: a leaf of the segmentation tree mapped back to the run (§5.2.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// Tree node of the leaf.
    pub node: usize,
    /// First position in the pattern sequence.
    pub start: usize,
    /// One past the last position.
    pub end: usize,
    /// When the run is in this phase (ns, half-open): from the start of its first pattern
    /// occurrence to the start of the next phase's first occurrence (the last phase: to the
    /// latest end of any occurrence). The sequence is ordered by start time, so these intervals
    /// follow one another without gaps or overlap, as the segmentation's positions do.
    pub time: (tracelogic_model::Time, tracelogic_model::Time),
    /// Earliest start and latest end (ns) of its pattern occurrences over all ranks. Ranks reach
    /// a phase at different times, so this reaches past [`Phase::time`] into the next phase when
    /// a rank is still in this phase's last occurrence while another has begun the next one
    /// (NPB LU: rank 1 enters the set-up broadcasts 24 ms after rank 0 has left them).
    pub extent: (tracelogic_model::Time, tracelogic_model::Time),
    /// Per rank, where the phase lies: its stretch of the rank's events (ranks where it holds
    /// none left out), the stretches of all phases a partition of each rank's events.
    pub ranks: Vec<RankSpan>,
    /// Communication patterns in the phase with their occurrence counts (`None` = outside).
    pub patterns: Vec<(Option<usize>, usize)>,
    /// Innermost routine (region) of the calls in the phase with call counts, most first (empty
    /// when the trace records no call paths).
    pub routines: Vec<(String, u64)>,
    /// Leaves of the thesis' segmentation tree merged into this phase (one leaf when no merge
    /// happened), in order.
    #[serde(default)]
    pub leaves: Vec<usize>,
    /// The phase's point-to-point graph as the topology identification names it (`None` when
    /// not computed: [`PhaseOptions::describe`] off).
    #[serde(default)]
    pub topology: Option<PhaseTopology>,
    /// Collective calls in the phase by MPI function, most first.
    #[serde(default)]
    pub collectives: Vec<(String, u64)>,
    /// Load imbalance of the computation in the phase (`None` with fewer than two ranks, no
    /// compute time, or [`PhaseOptions::describe`] off).
    #[serde(default)]
    pub imbalance: Option<Imbalance>,
    /// Test of the boundary at the start of this phase (`None` for the first phase, or when
    /// leaves are not merged).
    #[serde(default)]
    pub boundary: Option<BoundaryTest>,
}

impl Phase {
    /// One line for a user: the topology label, or the collectives when there is no
    /// point-to-point traffic (`no point-to-point: MPI_Allreduce ×40, MPI_Barrier ×2`).
    pub fn summary(&self) -> String {
        summary(self.topology.as_ref(), &self.collectives)
    }

    /// Whether the phase begins at a stage boundary (docs/phases.md, step 6): the main loop
    /// stopped at a barrier and resumed, or began at its set-up's barrier; the program's own
    /// marker, not a change of what is communicated.
    pub fn begins_a_stage(&self) -> bool {
        self.boundary.is_some_and(|b| b.stage)
    }
}

/// What a shell says of a phase beginning at a stage boundary ([`Phase::begins_a_stage`]).
pub const STAGE_NOTE: &str = "new stage: every rank met at a barrier";

/// A phase's or section's line: its topology label, with its three most frequent collectives,
/// or `collectives: …` when it has no point-to-point traffic.
fn summary(topology: Option<&PhaseTopology>, collectives: &[(String, u64)]) -> String {
    let coll = || {
        collectives
            .iter()
            .take(3)
            .map(|(n, c)| format!("{n} ×{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match topology {
        Some(t) if t.ranks >= 2 => {
            let label = match t.over_ranks() {
                Some(over) => format!("{} {over}", t.label),
                None => t.label.clone(),
            };
            if collectives.is_empty() {
                label
            } else {
                format!("{label}; {}", coll())
            }
        }
        _ if !collectives.is_empty() => format!("collectives: {}", coll()),
        Some(t) => t.label.clone(),
        None => String::new(),
    }
}

/// How [`detect_phases_with`] segments and describes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PhaseOptions {
    /// The thesis' strength threshold `s0` (0 = the BIC rule).
    pub strength: f64,
    /// What happens to communication outside any pattern.
    pub outside: Outside,
    /// Significance level α of a phase boundary ([`merge`]); 1 or more keeps every leaf of the
    /// thesis' tree as a phase (no merging).
    pub significance: f64,
    /// Identify each phase's topology and measure its imbalance.
    pub describe: bool,
    /// Smallest share of the run a reported phase holds, of its time or of its pattern
    /// occurrences (docs/phases.md, "Phases worth reporting"): once the significant boundaries
    /// are found, a phase below it in both is merged into the neighbour whose pattern mix is
    /// closest to its own, shortest first. 0 keeps every
    /// significant phase; not applied when the leaves are kept (`significance` ≥ 1).
    #[serde(default = "default_min_share")]
    pub min_share: f64,
}

/// Default of [`PhaseOptions::min_share`].
fn default_min_share() -> f64 {
    MIN_SHARE
}

/// Default smallest share of the run's time or occurrences a phase holds: 1 %, the precision
/// asked of a phase boundary when it is checked against a program's dated log (docs/phases.md).
pub const MIN_SHARE: f64 = 0.01;

impl Default for PhaseOptions {
    fn default() -> Self {
        PhaseOptions {
            strength: 0.0,
            outside: Outside::Own,
            significance: merge::SIGNIFICANCE,
            describe: true,
            min_share: MIN_SHARE,
        }
    }
}

/// Phases of a run from its communication patterns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseAnalysis {
    /// Length of the pattern sequence.
    pub sequence_length: usize,
    /// Strength threshold `s0`.
    pub strength_threshold: f64,
    /// How outside communication was handled.
    pub outside: Outside,
    /// The segmentation tree (Table 5.8's rows).
    pub tree: Vec<Segment>,
    /// The leaves in order.
    pub phases: Vec<Phase>,
    /// The symbol sequence (pattern id per occurrence; outside = number of patterns).
    pub sequence: Vec<u32>,
    /// Leaves of the thesis' segmentation tree (the phases before merging).
    #[serde(default)]
    pub leaves: usize,
    /// The top level: runs of phases whose kinds of communication do not differ significantly,
    /// each lasting at least [`PhaseOptions::min_share`] of the run's time (docs/phases.md,
    /// "Sections"). Empty when the leaves are kept or `min_share` is 0.
    #[serde(default)]
    pub sections: Vec<Section>,
    /// Significance level α the boundaries were tested at (≥ 1: leaves not merged).
    #[serde(default)]
    pub significance: f64,
}

impl PhaseAnalysis {
    /// `D_JS` at every cut of tree node `node` (entry `j`: cut after `j + 1` symbols of the node),
    /// to plot its curve with [`Segment::cut`] marked. Empty for an unknown node or length < 2.
    pub fn curve(&self, node: usize) -> Vec<f64> {
        match self.tree.get(node) {
            Some(s) => divergence_curve(&self.sequence, s.start, s.end),
            None => Vec::new(),
        }
    }
    /// Entropy (bits) of a window of `width` pattern occurrences sliding along the run.
    pub fn window_entropy(&self, width: usize) -> Vec<f64> {
        window_entropy(&self.sequence, width)
    }

    /// How the boundaries were kept, for the shells' headers: `boundaries significant at α =
    /// 0.01`, and `; 2 stage boundaries at a barrier every rank met` when step 6 cut the
    /// main loop or began it at its set-up's barrier.
    pub fn boundaries_note(&self) -> String {
        let stages = self.phases.iter().filter(|p| p.begins_a_stage()).count();
        let mut note = format!("boundaries significant at α = {}", self.significance);
        if stages > 0 {
            note += &format!(
                "; {stages} stage {} at a barrier every rank met",
                if stages == 1 { "boundary" } else { "boundaries" }
            );
        }
        note
    }
}

/// The time-ordered symbol sequence of pattern occurrences, and the instance behind each symbol.
pub fn pattern_sequence(comm: &crate::patterns::CommunicationAnalysis, outside: Outside) -> (Vec<u32>, Vec<usize>) {
    let own = comm.patterns.len() as u32;
    let mut seq = Vec::with_capacity(comm.instances.len());
    let mut idx = Vec::with_capacity(comm.instances.len());
    for (i, inst) in comm.instances.iter().enumerate() {
        if inst.pattern == crate::patterns::construct::OUTSIDE {
            if outside == Outside::Skip {
                continue;
            }
            seq.push(own);
        } else {
            seq.push(inst.pattern);
        }
        idx.push(i);
    }
    (seq, idx)
}

/// Segment the pattern sequence of `comm` with threshold `s0`, merge leaves whose pattern mix
/// does not differ significantly ([`merge`], α = [`merge::SIGNIFICANCE`]), and describe each
/// phase (topology, collectives, imbalance). [`detect_phases_with`] with the default options
/// and this `s0` and `outside`.
pub fn detect_phases(
    trace: &tracelogic_model::Trace,
    events: &crate::patterns::Events,
    comm: &crate::patterns::CommunicationAnalysis,
    s0: f64,
    outside: Outside,
) -> PhaseAnalysis {
    let opts = PhaseOptions {
        strength: s0,
        outside,
        ..PhaseOptions::default()
    };
    detect_phases_with(trace, events, comm, &opts)
}

/// Size bucket of an instance for the merge test's rare classes: `⌈log2(ranks)⌉`, so that
/// one-off exchanges between two ranks and one-off steps of the whole run stay apart.
fn rank_bucket(ranks: usize) -> u32 {
    usize::BITS - ranks.max(1).saturating_sub(1).leading_zeros()
}

/// A section: consecutive phases whose kinds of communication ([`kinds`]) do not differ
/// significantly, lasting at least [`PhaseOptions::min_share`] of the run (docs/phases.md,
/// "Sections").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// Its phases: `phases[first..end]` of [`PhaseAnalysis::phases`].
    pub phases: (usize, usize),
    /// First position in the pattern sequence.
    pub start: usize,
    /// One past the last position.
    pub end: usize,
    /// From its first phase's start to its last phase's end (ns, half-open; as
    /// [`Phase::time`]).
    pub time: (tracelogic_model::Time, tracelogic_model::Time),
    /// Test of the boundary at its start on the kind classes (`None` for the first section).
    pub boundary: Option<BoundaryTest>,
    /// The section's own point-to-point graph (all its phases' events) as the topology
    /// identification names it, like [`Phase::topology`]: a section is named by its own
    /// communication, not by its phases' (`None` when [`PhaseOptions::describe`] is off).
    #[serde(default)]
    pub topology: Option<PhaseTopology>,
    /// Collective calls in the section by MPI function, most first (as [`Phase::collectives`]).
    #[serde(default)]
    pub collectives: Vec<(String, u64)>,
}

impl Section {
    /// One line for a user, as [`Phase::summary`]: the topology label of the section's own
    /// point-to-point graph and its collectives (`2x4 process grid (rows and columns);
    /// MPI_Bcast ×7`), or `collectives: …`.
    pub fn summary(&self) -> String {
        summary(self.topology.as_ref(), &self.collectives)
    }
}

/// The sections' boundaries (a subset of the phases' `bounds`) and the tests of the inner ones:
/// the phases' boundaries tested again with the occurrences classed by their kind of
/// communication, then sections shorter than `min_share` of the run's time merged into the
/// neighbour of the closest kind mix. `None` when the leaves are kept or `min_share` is 0.
fn section_bounds(
    comm: &crate::patterns::CommunicationAnalysis,
    seq: &[u32],
    idx: &[usize],
    bounds: &[usize],
    counts: Option<&[Vec<u64>]>,
    opts: &PhaseOptions,
) -> Option<(Vec<usize>, Vec<merge::BoundaryTest>)> {
    if opts.significance >= 1.0 || opts.min_share <= 0.0 || seq.is_empty() {
        return None;
    }
    let (kind, nkinds) = kinds::pattern_kinds(comm);
    let kseq: Vec<u32> = seq
        .iter()
        .map(|&s| kind.get(s as usize).copied().unwrap_or(nkinds as u32))
        .collect();
    let starts: Vec<tracelogic_model::Time> = idx.iter().map(|&i| comm.instances[i].start).collect();
    let last_end = idx.iter().map(|&i| comm.instances[i].end).max().unwrap_or(0);
    let own = (opts.outside == Outside::Own).then_some(nkinds as u32);
    let classes = merge::classes(&kseq, own, |i| rank_bucket(comm.instances[idx[i]].parts.len()));
    let (b, t) = merge::merge(&classes, bounds, opts.significance, opts.strength);
    let (b, t) = merge::merge_short_by(
        &classes,
        &starts,
        last_end,
        b,
        t,
        opts.min_share,
        opts.significance,
        false,
    );
    let Some(counts) = counts else {
        return Some((b, t));
    };
    Some(kinds::merge_slight(&classes, bounds, counts, b, t, opts.significance))
}

/// The phases' boundaries and the tests of the inner ones, from what the occurrences
/// communicate ([`content`]): the recursive segmentation on the event mixes with its
/// significance as stop rule, adjacent segments merged while their mixes do not differ
/// significantly ([`merge::merge`]), then phases worth reporting ([`merge::merge_short`]),
/// all on the same event mixes.
fn phase_bounds(
    trace: &tracelogic_model::Trace,
    events: &crate::patterns::Events,
    comm: &crate::patterns::CommunicationAnalysis,
    idx: &[usize],
    opts: &PhaseOptions,
    ranks: Option<content::SignedRanks>,
) -> PhaseBounds {
    let (alpha, s0) = (opts.significance, opts.strength);
    if idx.is_empty() {
        // No occurrence: one empty phase, as the thesis' tree of an empty sequence is one leaf.
        return (vec![0, 0], Vec::new(), None, Vec::new());
    }
    let ranks = ranks.unwrap_or_else(|| content::SignedRanks::of(trace, events));
    let signed = content::Signed::of_ranks(trace, events, comm, idx, ranks);
    let occ = content::Bags::of_instances(&signed);
    if opts.min_share <= 0.0 || idx.len() < 2 {
        // No resolution asked: every significant change between occurrences.
        let cuts = occ.segment(alpha, s0);
        let (bounds, tests) = merge::merge(&occ, &cuts, alpha, s0);
        let counts = signed.coarse_counts(&bounds);
        return (bounds, tests, Some(counts), Vec::new());
    }
    let starts: Vec<tracelogic_model::Time> = idx.iter().map(|&i| comm.instances[i].start).collect();
    let last_end = idx.iter().map(|&i| comm.instances[i].end).max().unwrap_or(0);
    let bins = (1.0 / opts.min_share).round().clamp(2.0, 10_000.0) as usize;
    let ctx = Windows {
        signed: &signed,
        starts: &starts,
        last_end,
        occ: &occ,
        bins,
        alpha,
        s0,
    };
    // Hierarchical (docs/phases.md, step 3b): the run in windows of `min_share` of its time,
    // then each phase found holding at least one occurrence per window in windows of
    // `min_share` of its events, while cuts are found.
    // Step 3c: the occurrences `a..e` as the exchangeable unit; the cut of largest divergence
    // is kept where what is communicated changes, significant with whole occurrences permuted,
    // each side lasting at least `min_share` of the run.
    let share = ((last_end - starts[0]) as f64 * opts.min_share) as tracelogic_model::Time;
    let end_of = |y: usize| if y == idx.len() { last_end } else { starts[y] };
    let worth = |x: usize, c: usize, y: usize| starts[c] - starts[x] >= share && end_of(y) - starts[c] >= share;
    let mut cuts: Vec<(usize, merge::BoundaryTest)> = Vec::new();
    let mut todo = vec![(0usize, idx.len(), 0usize)];
    while let Some((a, e, depth)) = todo.pop() {
        if depth > MAX_DEPTH {
            continue;
        }
        if depth > 0 && e - a < ctx.bins {
            // Fewer occurrences than windows.
            cuts.extend(occ.segment_within(a, e, alpha, s0, worth));
            continue;
        }
        let mut sub = ctx.cuts(a, e);
        if depth == 0 && sub.is_empty() {
            // A whole run whose windows show no significant change: the occurrences decide
            // (step 3c), whatever their number. The windows' silence is no evidence of one
            // phase when a few windows hold most of the events (held-out MUMPS on 8 ranks: 48
            // of 100 windows hold events, 9 of them 1,470 of the 3,178, one 641), so that a
            // random order of the windows reaches the divergence of the real change (p 0.048);
            // a loop is not cut by 3c (its signatures do not change). Each phase found is
            // refined as below the windows' cuts (3b, 3c).
            let found = occ.segment_within(a, e, alpha, s0, worth);
            let mut prev = a;
            for &(c, t) in &found {
                todo.push((prev, c, depth + 1));
                cuts.push((c, t));
                prev = c;
            }
            if !found.is_empty() {
                todo.push((prev, e, depth + 1));
            }
            continue;
        }
        if depth > 0 {
            // Below the run's resolution only a change of what is communicated: a loop seen
            // in windows shorter than its period varies in its mix, not in its signatures.
            let mut prev = a;
            sub.retain(|&(c, _)| {
                let keep = c >= prev + 2 && e >= c + 2 && ctx.occ.support_differs(prev, c, e);
                if keep {
                    prev = c;
                }
                keep
            });
        }
        let mut prev = a;
        for &(c, t) in &sub {
            todo.push((prev, c, depth + 1));
            cuts.push((c, t));
            prev = c;
        }
        if !sub.is_empty() {
            todo.push((prev, e, depth + 1));
        }
    }
    cuts.sort_by_key(|c| c.0);
    cuts.dedup_by_key(|c| c.0);
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(cuts.iter().map(|c| c.0))
        .chain(std::iter::once(idx.len()))
        .collect();
    let tests = cuts.iter().map(|c| c.1).collect();
    // Phases worth reporting (step 3d): the refinement's cuts (3b) have no share rule, so a
    // phase holding less than `min_share` of the run's time and of its events joins the
    // neighbour of the closest mix, shortest first (CP2K's end of MD: 8 phases on 4 ranks, 5
    // of them under 1 %).
    let (bounds, tests) = merge::merge_short(&occ, &starts, last_end, bounds, tests, opts.min_share, alpha);
    // Step 3e: a change of rate is not a phase (`rates`): sides that do the same things at other
    // rates are one phase (a LAMMPS run's neighbour-list rebuilds more frequent while its box
    // deforms), before the main loop's edges are looked for.
    let by_rank = |b: &[usize]| moved::rank_counts(comm, idx, trace.ranks.len(), b);
    let sides = rates::SideCounts {
        signatures: signed.counts(&bounds),
        roles: signed.role_counts(&bounds),
        ranks: by_rank(&bounds),
    };
    let (bounds, tests) = rates::merge_rate_changes(&occ, sides, bounds, tests, opts.min_share, alpha);
    let (bounds, tests) = rates::place_at_changes(&occ, &signed, by_rank, bounds, tests, opts.min_share, alpha);
    // Step 3f: work moved to other ranks inside a phase, in the same roles (`moved`).
    let test = |a: usize, c: usize, e: usize| occ.test_at(a, c, e, alpha, false);
    let (bounds, tests) = moved::split_moved(by_rank, &starts, last_end, share, bounds, tests, opts.min_share, test);
    let (bounds, tests) = loop_edges(&occ, &starts, last_end, bounds, tests, opts);
    // Step 6: the main loop begins at the barrier that ends its set-up when what follows the
    // barrier does what the loop does.
    let (bounds, tests, begun) = stages::loop_begins_at_barrier(
        trace,
        &signed,
        &occ,
        &starts,
        last_end,
        by_rank,
        bounds,
        tests,
        opts.min_share,
        alpha,
    );
    let counts = signed.coarse_counts(&bounds);
    // Step 6: stages of one loop, cut where the program synchronises between them; each cut
    // with the test of its two sides' mixes, for the record (they need not differ); then the
    // loop's begin if placed at the set-up's barrier.
    let pattern = |i: usize| comm.instances[idx[i]].pattern;
    let stages = stages::stage_cuts(trace, &signed, &starts, last_end, pattern, &bounds, opts.min_share)
        .into_iter()
        .map(|c| {
            let at = bounds.partition_point(|&b| b <= c);
            let t = occ.test_at(bounds[at - 1], c, bounds[at], alpha, true);
            (c, merge::BoundaryTest { stage: true, ..t })
        })
        .chain(begun)
        .collect();
    (bounds, tests, Some(counts), stages)
}

/// The phases' boundaries, the tests of the inner ones, each phase's events by coarse
/// signature ([`content::Signed::coarse_counts`]; `None` without occurrences), and the stage
/// boundaries (step 6), each a section boundary too: the cuts inside the phases, not yet among
/// the boundaries, and the main loop's begin when placed at its set-up's barrier (already one).
type PhaseBounds = (
    Vec<usize>,
    Vec<merge::BoundaryTest>,
    Option<Vec<Vec<u64>>>,
    Vec<(usize, merge::BoundaryTest)>,
);

/// `cuts` inserted into `bounds` (first 0, ascending) and their tests into `tests` (one per
/// inner boundary); a cut already a boundary is left as it is.
fn insert_cuts(bounds: &mut Vec<usize>, tests: &mut Vec<merge::BoundaryTest>, cuts: &[(usize, merge::BoundaryTest)]) {
    for &(c, t) in cuts {
        let at = bounds.partition_point(|&b| b < c);
        if bounds.get(at) != Some(&c) {
            bounds.insert(at, c);
            tests.insert(at - 1, t);
        }
    }
}

/// Levels of refinement below the run's windows (each a factor `1 / min_share` finer).
const MAX_DEPTH: usize = 3;

/// What the windowed segmentation of a stretch of occurrences needs.
struct Windows<'a> {
    signed: &'a content::Signed,
    starts: &'a [tracelogic_model::Time],
    last_end: tracelogic_model::Time,
    occ: &'a content::Bags,
    bins: usize,
    alpha: f64,
    s0: f64,
}

impl Windows<'_> {
    /// The significant cuts inside the occurrences `a..e` (positions strictly between), with
    /// their tests: the stretch in `bins` windows (the whole run: of equal time; a phase: of
    /// equal numbers of events, so a stretch whose events crowd into a few moments is still
    /// seen at `bins` points), segmented and merged on the windows' event mixes, each window
    /// boundary refined at the occurrences.
    fn cuts(&self, a: usize, e: usize) -> Vec<(usize, merge::BoundaryTest)> {
        if e < a + 2 {
            return Vec::new();
        }
        let from = self.starts[a];
        let to = if e == self.signed.len() {
            self.last_end
        } else {
            self.starts[e]
        };
        let span = to.saturating_sub(from).max(1) + 1;
        let bins = self.bins;
        let by_events = (a, e) != (0, self.signed.len());
        let (win, ev_at) = if by_events {
            content::Bags::of_event_windows(self.signed, a..e, bins, to)
        } else {
            (
                content::Bags::of_windows(self.signed, a..e, (from, from + span), bins),
                Vec::new(),
            )
        };
        let cuts = win.segment(self.alpha, self.s0);
        let (wb, wtests) = merge::merge(&win, &cuts, self.alpha, self.s0);
        // Window boundary k as a time, and the first position starting at or after a time.
        let at = |k: usize| {
            if by_events {
                ev_at[k.min(bins)]
            } else {
                from + (span as f64 * k as f64 / bins as f64) as tracelogic_model::Time
            }
        };
        let first_from = |t: tracelogic_model::Time| a + self.starts[a..e].partition_point(|&s| s < t);
        // The event mixes of the window segments, each event in the segment its call was entered
        // in (the events of one occurrence can fall on both sides of a window boundary).
        let bounds: Vec<tracelogic_model::Time> = wb.iter().map(|&w| at(w)).collect();
        // Counted over two halves of the positions on two cores natively, the counts summed.
        let count = |r: std::ops::Range<usize>| {
            let mut mixes: Vec<Vec<u64>> = vec![vec![0; self.signed.alphabet()]; wb.len().saturating_sub(1)];
            for (t, sig) in self.signed.with_ids(r) {
                if by_events && t > to {
                    continue;
                }
                let j = bounds.partition_point(|&b| b <= t).saturating_sub(1);
                if let Some(m) = mixes.get_mut(j) {
                    m[sig as usize] += 1;
                }
            }
            mixes
        };
        let mid = a + (e - a) / 2;
        let (later, mut mixes) = crate::logical::per_rank::both(|| count(mid..e), || count(a..mid));
        for (m, l) in mixes.iter_mut().zip(later) {
            for (x, y) in m.iter_mut().zip(l) {
                *x += y;
            }
        }
        let mut out: Vec<(usize, merge::BoundaryTest)> = Vec::new();
        for k in 1..wb.len().saturating_sub(1) {
            // Refined at the occurrences: within one window either side of the window boundary,
            // the occurrence boundary under which the occurrences there are likeliest drawn from
            // the mixes of the two window segments (docs/phases.md, step 4).
            // When the likeliest cut lies at an end of that range, the range widens by a
            // window on that side (never past the neighbouring window boundaries) until the
            // likelihood's maximum lies inside it: a gap of idle windows (a late rank) must not
            // truncate the climb and leave a stretch's last occurrences on the wrong side.
            let prev = out.last().map_or(a, |c| c.0);
            let next = first_from(at(wb[k + 1])).min(e);
            let (floor, ceil) = (prev + 1, next.saturating_sub(1));
            let (mut below, mut above) = (1, 1);
            let mut found = None;
            loop {
                let lo = first_from(at(wb[k].saturating_sub(below))).max(floor);
                let hi = first_from(at((wb[k] + above).min(bins))).min(ceil);
                let Some(c) = self.occ.likeliest_cut_in(lo, hi, &mixes[k - 1], &mixes[k]) else {
                    break;
                };
                found = Some(c);
                let widen_below = c == lo && lo > floor && wb[k] - below > wb[k - 1];
                let widen_above = c == hi && hi < ceil && wb[k] + above < wb[k + 1];
                if !widen_below && !widen_above {
                    break;
                }
                below += usize::from(widen_below);
                above += usize::from(widen_above);
            }
            if let Some(c) = found {
                if c > prev && c < e {
                    out.push((c, wtests[k - 1]));
                }
            }
        }
        out
    }
}

/// The main loop's set-up and end (docs/phases.md, "Set-up and end of the main loop"): the
/// longest phase in time, when it begins (ends) the run, may begin with a set-up (end with a
/// wind-down) shorter than the windows' resolution (NPB: the input broadcasts before the first
/// iteration, the verification after the last). Each is split off when it holds less than
/// `min_share` of the run's events and the cut at its edge, the one of largest divergence among
/// such cuts with equal weights, is significant at the occurrences (the event mixes, whole
/// occurrences permuted).
fn loop_edges(
    occ: &content::Bags,
    starts: &[tracelogic_model::Time],
    last_end: tracelogic_model::Time,
    mut bounds: Vec<usize>,
    mut tests: Vec<merge::BoundaryTest>,
    opts: &PhaseOptions,
) -> (Vec<usize>, Vec<merge::BoundaryTest>) {
    use merge::Mixes;
    let m = bounds.len() - 1;
    let Some(k) = stages::main_loop(&bounds, starts, last_end) else {
        return (bounds, tests);
    };
    let (a, e) = (bounds[k], bounds[k + 1]);
    let small = opts.min_share * occ.weight(0..occ.len());
    // Largest prefix and suffix holding less than `small` events.
    let mut lo = a;
    while lo + 1 < e && occ.weight(a..lo + 1) < small {
        lo += 1;
    }
    let mut hi = e;
    while hi > a + 1 && occ.weight(hi - 1..e) < small {
        hi -= 1;
    }
    // At least one occurrence: a set-up (end) made of one occurrence holding more than
    // `min_share` of the events is still a set-up (LAMMPS with RCB balancing: its input
    // broadcasts and first balance are one occurrence of 144 of 13,802 events, its statistics
    // one of 282).
    if e >= a + 2 {
        lo = lo.max(a + 1);
        hi = hi.min(e - 1);
    }
    let mut new_cuts: Vec<(usize, merge::BoundaryTest)> = Vec::new();
    // A set-up only when the loop begins the run, an end only when it ends it: a phase before
    // or after it already is the set-up or the end.
    let (first, last) = (k == 0, k + 1 == m);
    if let Some(c) = occ.best_cut_in(a, e, a + 1, lo).filter(|_| first) {
        let t = occ.test_at(a, c, e, opts.significance, true);
        if t.keeps(opts.significance, opts.strength) {
            new_cuts.push((c, t));
        }
    }
    let a2 = new_cuts.first().map_or(a, |c| c.0);
    if let Some(c) = occ.best_cut_in(a2, e, hi, e - 1).filter(|_| last) {
        let t = occ.test_at(a2, c, e, opts.significance, true);
        if t.keeps(opts.significance, opts.strength) && c > a2 {
            new_cuts.push((c, t));
        }
    }
    insert_cuts(&mut bounds, &mut tests, &new_cuts);
    (bounds, tests)
}

/// Segment, merge and describe (see [`detect_phases`]).
pub fn detect_phases_with(
    trace: &tracelogic_model::Trace,
    events: &crate::patterns::Events,
    comm: &crate::patterns::CommunicationAnalysis,
    opts: &PhaseOptions,
) -> PhaseAnalysis {
    detect_phases_from(trace, events, comm, opts, None)
}

/// Whether [`detect_phases_from`] reads every rank's signed events ([`content::SignedRanks`]),
/// so that a caller finds them beside the pattern detection only when they are read: the phases'
/// boundaries are tested on the event mixes unless the thesis' leaves are kept.
pub fn reads_signed_ranks(opts: &PhaseOptions) -> bool {
    opts.significance < 1.0
}

/// [`detect_phases_with`], with every rank's signed events `ranks` of this trace and these
/// events when found before (natively beside the pattern detection: they do not depend on
/// the patterns); `None` finds them here.
pub fn detect_phases_from(
    trace: &tracelogic_model::Trace,
    events: &crate::patterns::Events,
    comm: &crate::patterns::CommunicationAnalysis,
    opts: &PhaseOptions,
    ranks: Option<content::SignedRanks>,
) -> PhaseAnalysis {
    crate::progress::step("segmenting by divergence", 0, 0);
    let (seq, idx) = pattern_sequence(comm, opts.outside);
    let seg = segment(&seq, opts.strength);
    let leaf_bounds: Vec<usize> = seg
        .phases
        .iter()
        .map(|&l| seg.tree[l].start)
        .chain(std::iter::once(seq.len()))
        .collect();
    let (mut bounds, mut tests, counts, stage_cuts) = if reads_signed_ranks(opts) {
        phase_bounds(trace, events, comm, &idx, opts, ranks)
    } else {
        (leaf_bounds.clone(), Vec::new(), None, Vec::new())
    };
    let mut section_bounds = section_bounds(comm, &seq, &idx, &bounds, counts.as_deref(), opts);
    // Stage boundaries are the program's own: boundaries of phases and of sections whatever
    // their mixes (step 6).
    insert_cuts(&mut bounds, &mut tests, &stage_cuts);
    if let Some((sb, st)) = section_bounds.as_mut() {
        insert_cuts(sb, st, &stage_cuts);
        // Work moved to other ranks (steps 3e, 3f) is a change of section too, whatever the
        // kinds of communication on both sides (the same roles on other ranks).
        insert_cuts(
            sb,
            st,
            &moved::moved_bounds(comm, &idx, trace.ranks.len(), &bounds, &tests, opts.min_share),
        );
    }
    let nphases = bounds.len().saturating_sub(1);
    // Every rank's occurrence parts with their phase, then each rank's events cut into one
    // stretch per phase ([`spans`]).
    let mut rank_parts: std::collections::BTreeMap<u32, spans::Parts> = Default::default();
    for (k, w) in bounds.windows(2).enumerate() {
        for &i in &idx[w[0]..w[1]] {
            for part in &comm.instances[i].parts {
                rank_parts
                    .entry(part.rank)
                    .or_default()
                    .push((part.first_event, part.last_event, k));
            }
        }
    }
    let cuts = spans::partition(&rank_parts, nphases, |r| {
        events.ranks.get(r as usize).map_or(&[][..], |re| &re.calls[..])
    });
    drop(rank_parts);
    let mut phases = Vec::with_capacity(nphases);
    // Each phase's traffic, kept to describe the sections (theirs is their phases' summed).
    let mut phase_traffic: Vec<describe::Traffic> = Vec::new();
    // Process grids declared by row and column communicators name the phases they are.
    let grids = if opts.describe {
        crate::topology::comm_grid::find(trace, &[])
    } else {
        Vec::new()
    };
    for (k, w) in bounds.windows(2).enumerate() {
        let (start, end) = (w[0], w[1]);
        let leaves: Vec<usize> = seg
            .phases
            .iter()
            .copied()
            .filter(|&l| seg.tree[l].start >= start && seg.tree[l].end <= end)
            .collect();
        // The smallest tree node holding the whole phase.
        let mut node = leaves.first().copied().unwrap_or(0);
        while seg.tree[node].start > start || seg.tree[node].end < end {
            match seg.tree[node].parent {
                Some(p) => node = p,
                None => break,
            }
        }
        let mut counts: std::collections::BTreeMap<u32, usize> = Default::default();
        let mut extent = (u64::MAX, 0u64);
        for &i in &idx[start..end] {
            let inst = &comm.instances[i];
            *counts.entry(inst.pattern).or_default() += 1;
            extent = (extent.0.min(inst.start), extent.1.max(inst.end));
        }
        if start == end {
            extent = (0, 0);
        }
        // The phase on each rank: its stretch of the rank's events.
        let mut ranks: Vec<RankSpan> = Vec::new();
        let mut spans: std::collections::BTreeMap<u32, Vec<(u32, u32)>> = Default::default();
        let mut routines: std::collections::HashMap<u32, u64> = Default::default();
        for (&r, c) in &cuts {
            let (a, e) = (c[k], c[k + 1]);
            if a >= e {
                continue;
            }
            let re = &events.ranks[r as usize];
            let calls = &trace.ranks[r as usize].calls;
            let (c0, c1) = (re.calls[a as usize] as usize, re.calls[e as usize - 1] as usize);
            ranks.push(RankSpan {
                rank: r,
                first_event: a,
                last_event: e - 1,
                start: calls.enter(c0),
                end: calls.exit(c1),
            });
            spans.insert(r, vec![(a, e - 1)]);
            for ev in a..e {
                let cp = calls.callpath[re.calls[ev as usize] as usize];
                if let Some(&region) = trace.callpaths.get(cp as usize).and_then(|p| p.last()) {
                    *routines.entry(region).or_default() += 1;
                }
            }
        }
        let mut routines: Vec<(String, u64)> = routines
            .into_iter()
            .map(|(r, n)| (trace.regions.name(r).to_owned(), n))
            .collect();
        routines.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut patterns: Vec<(Option<usize>, usize)> = counts
            .into_iter()
            .map(|(p, n)| ((p != crate::patterns::construct::OUTSIDE).then_some(p as usize), n))
            .collect();
        patterns.sort_by_key(|p| std::cmp::Reverse(p.1));
        let (topology, collectives, imbalance) = if opts.describe {
            let traffic = describe::Traffic::of(trace, events, &spans);
            let (t, c) = traffic.describe(&grids, trace.ranks.len() as u32);
            if section_bounds.is_some() {
                phase_traffic.push(traffic);
            }
            // A star's or master–worker phase's masters wait for their workers by role.
            let imbalance = describe::imbalance(trace, events, &spans, &t.masters);
            (Some(t), c, imbalance)
        } else {
            (None, Vec::new(), None)
        };
        phases.push(Phase {
            node,
            start,
            end,
            // Set below, once the next phase's start is known.
            time: extent,
            extent,
            ranks,
            patterns,
            routines,
            leaves,
            topology,
            collectives,
            imbalance,
            boundary: k.checked_sub(1).and_then(|b| tests.get(b).copied()),
        });
    }
    let last_end = phases.iter().map(|p| p.extent.1).max().unwrap_or(0);
    for k in 0..phases.len() {
        let to = phases.get(k + 1).map_or(last_end, |next| next.extent.0);
        phases[k].time = (phases[k].extent.0, to.max(phases[k].extent.0));
    }
    let sections = match section_bounds {
        Some((sb, tests)) => sb
            .windows(2)
            .enumerate()
            .map(|(k, w)| {
                let first = bounds.iter().position(|&b| b == w[0]).expect("a phase boundary");
                let last = bounds.iter().position(|&b| b == w[1]).expect("a phase boundary");
                let (topology, collectives) = if opts.describe {
                    // The phases share no event: the section's traffic is theirs summed.
                    let mut traffic = describe::Traffic::default();
                    for t in &phase_traffic[first..last] {
                        traffic.add(t);
                    }
                    let (t, c) = traffic.describe(&grids, trace.ranks.len() as u32);
                    (Some(t), c)
                } else {
                    (None, Vec::new())
                };
                Section {
                    topology,
                    collectives,
                    phases: (first, last),
                    start: w[0],
                    end: w[1],
                    time: (phases[first].time.0, phases[last - 1].time.1),
                    boundary: k.checked_sub(1).and_then(|b| tests.get(b).copied()),
                }
            })
            .collect(),
        None => Vec::new(),
    };
    PhaseAnalysis {
        sections,
        sequence_length: seq.len(),
        strength_threshold: opts.strength,
        outside: opts.outside,
        tree: seg.tree,
        leaves: seg.phases.len(),
        significance: opts.significance,
        phases,
        sequence: seq,
    }
}

#[cfg(test)]
mod tests;
