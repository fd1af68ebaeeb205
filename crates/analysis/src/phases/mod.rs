//! Execution phases by recursive entropic segmentation (thesis ch. 5, §5.2.1, after Li 2002).
//!
//! The input is a sequence of symbols — one per communication-pattern occurrence, in time
//! order. A segment of length `N` with symbol counts `N_j` has Shannon entropy
//! `H = −Σ (N_j/N) log2(N_j/N)`. Cutting it so that the left part has `i` symbols gives the
//! Jensen–Shannon divergence `D_JS(i) = H − (i/N)·H_l − ((N−i)/N)·H_r`. The segment is cut at the
//! `i` of maximum divergence `D̂` when the segmentation strength
//! `s = (2N·D̂ − log2(N)·K) / (log2(N)·K)`, with `K = k_l + k_r + 1 − k` (distinct symbols left,
//! right and in the whole segment), exceeds the user's threshold `s0` (default 0, which is the
//! BIC criterion `D̂ > τ = log2(N)·K / 2N`); both halves are then segmented the same way.
//!
//! **Log base.** Everything uses base 2 (entropies in bits). The strength `s` does not depend on
//! the base; `τ` and `D_JS` do. With base 2 the thesis' Table 5.2 values of τ (0.5 for `N = 2`,
//! 0.25 for `N = 4`) are reproduced.
//!
//! **Cost.** Each segment is scanned once: the entropy of the growing left part and the
//! shrinking right part are updated in O(1) per position from the running sums `Σ c·log c`, so a
//! level of the tree costs O(N) (plus O(k) to set up the counts), not O(N²). The tree is built
//! with an explicit stack, so deep trees cannot overflow.
//!
//! **Conventions.** Positions are 0-based and segments half-open `[start, end)`. `cut` is the
//! first position of the right part. Ties in the maximum go to the leftmost cut. Tree nodes are
//! numbered as in the thesis' tables: a split numbers both children at once, then descends into
//! the left child first.

use serde::{Deserialize, Serialize};

pub mod content;
pub mod describe;
pub mod kinds;
pub mod merge;

pub use describe::{Imbalance, PhaseTopology};
pub use merge::BoundaryTest;

/// One node of the segmentation tree (a row of the thesis' Table 5.8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Node number (0 = the whole sequence).
    pub id: usize,
    /// First position.
    pub start: usize,
    /// One past the last position.
    pub end: usize,
    /// Shannon entropy of the segment, in bits.
    pub entropy: f64,
    /// Maximum Jensen–Shannon divergence over all cuts (0 for a segment of length 1).
    pub djs: f64,
    /// Position of that cut (first position of the right part); `None` for length 1.
    pub cut: Option<usize>,
    /// BIC threshold τ = log2(N)·K / 2N at that cut (0 for length 1).
    pub tau: f64,
    /// Segmentation strength s at that cut; `None` for length 1.
    pub strength: Option<f64>,
    /// Parent node, `None` for the root.
    pub parent: Option<usize>,
    /// Child nodes `(left, right)` if the segment was cut.
    pub children: Option<(usize, usize)>,
}

impl Segment {
    /// Number of symbols in the segment.
    pub fn len(&self) -> usize {
        self.end - self.start
    }
    /// True for an empty segment (only the root of an empty sequence).
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// The full segmentation of a sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segmentation {
    /// Length of the sequence.
    pub sequence_length: usize,
    /// The strength threshold `s0` used.
    pub strength_threshold: f64,
    /// Every node of the tree, indexed by [`Segment::id`].
    pub tree: Vec<Segment>,
    /// Ids of the leaves (the phases), in sequence order.
    pub phases: Vec<usize>,
}

/// Shannon entropy in bits of a count vector summing to `n`. O(k).
pub fn entropy(counts: &[u64]) -> f64 {
    let n: u64 = counts.iter().sum();
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    n.log2() - counts.iter().filter(|&&c| c > 0).map(|&c| xlog2x(c)).sum::<f64>() / n
}

fn xlog2x(c: u64) -> f64 {
    if c <= 1 {
        0.0
    } else {
        let c = c as f64;
        c * c.log2()
    }
}

/// Best cut of one segment and the divergence at every cut.
struct Scan {
    entropy: f64,
    best_cut: usize,
    best_djs: f64,
    k_left: usize,
    k_right: usize,
    k: usize,
}

/// Scan `seq` (symbols `< alphabet`), calling `each(i, djs)` for every cut `i` in `1..N`
/// (left part of length `i`). O(N + alphabet) using `counts` as scratch (left zeroed on return).
fn scan(seq: &[u32], counts_left: &mut [u64], counts_right: &mut [u64], mut each: impl FnMut(usize, f64)) -> Scan {
    let n = seq.len();
    for &s in seq {
        counts_right[s as usize] += 1;
    }
    let mut k = 0;
    let mut sum_right = 0.0; // Σ c log c over the right part
    for &s in seq {
        // Each distinct symbol once: count it when seen with its full count still in place.
        let c = counts_right[s as usize];
        if c > 0 && counts_left[s as usize] == 0 {
            k += 1;
            sum_right += xlog2x(c);
            counts_left[s as usize] = 1; // mark as seen
        }
    }
    for &s in seq {
        counts_left[s as usize] = 0;
    }
    let total = n as f64;
    let h = if n == 0 { 0.0 } else { total.log2() - sum_right / total };
    let mut sum_left = 0.0;
    let (mut k_left, mut k_right) = (0usize, k);
    let mut best = Scan {
        entropy: h,
        best_cut: 0,
        best_djs: f64::NEG_INFINITY,
        k_left: 0,
        k_right: 0,
        k,
    };
    for (idx, &s) in seq.iter().enumerate().take(n.saturating_sub(1)) {
        let s = s as usize;
        let cl = counts_left[s];
        sum_left += xlog2x(cl + 1) - xlog2x(cl);
        if cl == 0 {
            k_left += 1;
        }
        counts_left[s] = cl + 1;
        let cr = counts_right[s];
        sum_right += xlog2x(cr - 1) - xlog2x(cr);
        if cr == 1 {
            k_right -= 1;
        }
        counts_right[s] = cr - 1;
        let i = idx + 1;
        let (li, ri) = (i as f64, (n - i) as f64);
        let h_left = li.log2() - sum_left / li;
        let h_right = ri.log2() - sum_right / ri;
        let djs = h - (li / total) * h_left - (ri / total) * h_right;
        each(i, djs);
        if djs > best.best_djs + 1e-12 {
            best.best_djs = djs;
            best.best_cut = i;
            best.k_left = k_left;
            best.k_right = k_right;
        }
    }
    for &s in seq {
        counts_left[s as usize] = 0;
        counts_right[s as usize] = 0;
    }
    best
}

/// Jensen–Shannon divergence at every cut of `seq[start..end]`: entry `j` is the divergence when
/// the left part is `seq[start..start + j + 1]`. Empty for segments shorter than 2. O(N + k).
pub fn divergence_curve(seq: &[u32], start: usize, end: usize) -> Vec<f64> {
    let part = &seq[start..end];
    let alphabet = part.iter().map(|&s| s as usize + 1).max().unwrap_or(0);
    let (mut l, mut r) = (vec![0; alphabet], vec![0; alphabet]);
    let mut out = Vec::with_capacity(part.len().saturating_sub(1));
    scan(part, &mut l, &mut r, |_, d| out.push(d));
    out
}

/// Entropy (bits) of a sliding window of `width` symbols: entry `j` covers
/// `seq[j..j + width]`. Empty if the sequence is shorter than the window. O(N + k).
pub fn window_entropy(seq: &[u32], width: usize) -> Vec<f64> {
    if width == 0 || seq.len() < width {
        return Vec::new();
    }
    let alphabet = seq.iter().map(|&s| s as usize + 1).max().unwrap_or(0);
    let mut counts = vec![0u64; alphabet];
    let mut sum = 0.0;
    let w = width as f64;
    fn add(counts: &mut [u64], sum: &mut f64, s: u32, delta: i64) {
        let c = counts[s as usize];
        let c2 = (c as i64 + delta) as u64;
        *sum += xlog2x(c2) - xlog2x(c);
        counts[s as usize] = c2;
    }
    for &s in &seq[..width] {
        add(&mut counts, &mut sum, s, 1);
    }
    let mut out = Vec::with_capacity(seq.len() - width + 1);
    out.push(w.log2() - sum / w);
    for j in width..seq.len() {
        add(&mut counts, &mut sum, seq[j], 1);
        add(&mut counts, &mut sum, seq[j - width], -1);
        out.push(w.log2() - sum / w);
    }
    out
}

/// The BIC threshold τ = log2(N)·K / 2N (thesis Eq. 5.11) of a segment of `n` symbols whose
/// cut has `k` free parameters (`K = k_l + k_r + 1 − k`): the maximum divergence must exceed it
/// for the cut to pay for the parameters it adds. Bits, as the thesis' tables.
pub fn bic_threshold(n: usize, k: usize) -> f64 {
    let nf = n as f64;
    nf.log2() * k as f64 / (2.0 * nf)
}

/// The segmentation strength s = (2N·D̂ − log2(N)·K) / (log2(N)·K) (thesis Eq. 5.12) of a cut of
/// divergence `djs` with `k` free parameters in a segment of `n` symbols: how far `2N·D̂` clears
/// the BIC penalty, relative to it. Independent of the log base; `s > 0` is `D̂ > τ`.
pub fn segmentation_strength(n: usize, k: usize, djs: f64) -> f64 {
    let nf = n as f64;
    let bic = nf.log2() * k as f64;
    (2.0 * nf * djs - bic) / bic
}

/// Segment `seq` recursively, cutting while the strength exceeds `s0` (0 = the BIC rule).
///
/// Symbols are small integers (dense ids of patterns). O(N · depth) time, O(N + k) extra space.
///
/// ```
/// use tracelogic_analysis::phases::segment;
/// // Two homogeneous halves: one cut in the middle, two phases.
/// let seq = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];
/// let s = segment(&seq, 0.0);
/// assert_eq!(s.tree[0].cut, Some(8));
/// assert_eq!(s.phases.len(), 2);
/// ```
pub fn segment(seq: &[u32], s0: f64) -> Segmentation {
    let alphabet = seq.iter().map(|&s| s as usize + 1).max().unwrap_or(0);
    let (mut left, mut right) = (vec![0u64; alphabet], vec![0u64; alphabet]);
    let mut tree = vec![Segment {
        id: 0,
        start: 0,
        end: seq.len(),
        entropy: 0.0,
        djs: 0.0,
        cut: None,
        tau: 0.0,
        strength: None,
        parent: None,
        children: None,
    }];
    let mut stack = vec![0usize];
    while let Some(id) = stack.pop() {
        let (start, end) = (tree[id].start, tree[id].end);
        let n = end - start;
        let sc = scan(&seq[start..end], &mut left, &mut right, |_, _| {});
        tree[id].entropy = sc.entropy;
        if n < 2 {
            continue;
        }
        let k_param = sc.k_left + sc.k_right + 1 - sc.k;
        let strength = segmentation_strength(n, k_param, sc.best_djs);
        let node = &mut tree[id];
        node.djs = sc.best_djs;
        node.cut = Some(start + sc.best_cut);
        node.tau = bic_threshold(n, k_param);
        node.strength = Some(strength);
        if strength > s0 {
            let (l, r) = (tree.len(), tree.len() + 1);
            let cut = start + sc.best_cut;
            tree[id].children = Some((l, r));
            for (cid, (a, b)) in [(l, (start, cut)), (r, (cut, end))] {
                tree.push(Segment {
                    id: cid,
                    start: a,
                    end: b,
                    entropy: 0.0,
                    djs: 0.0,
                    cut: None,
                    tau: 0.0,
                    strength: None,
                    parent: Some(id),
                    children: None,
                });
            }
            stack.push(r);
            stack.push(l);
        }
    }
    let mut phases: Vec<usize> = tree.iter().filter(|s| s.children.is_none()).map(|s| s.id).collect();
    phases.sort_by_key(|&i| tree[i].start);
    Segmentation {
        sequence_length: seq.len(),
        strength_threshold: s0,
        tree,
        phases,
    }
}

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

/// A rank's share of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankSpan {
    /// World rank.
    pub rank: tracelogic_model::Rank,
    /// First event of the rank in the phase (index in its event sequence).
    pub first_event: u32,
    /// Last event.
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
    /// Per rank, where the phase lies.
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
}

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
            if collectives.is_empty() {
                t.label.clone()
            } else {
                format!("{}; {}", t.label, coll())
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
    Some(merge::merge_short_by(
        &classes,
        &starts,
        last_end,
        b,
        t,
        opts.min_share,
        opts.significance,
        false,
    ))
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
) -> (Vec<usize>, Vec<merge::BoundaryTest>) {
    let (alpha, s0) = (opts.significance, opts.strength);
    if idx.is_empty() {
        // No occurrence: one empty phase, as the thesis' tree of an empty sequence is one leaf.
        return (vec![0, 0], Vec::new());
    }
    let occ = content::Bags::of_instances(trace, events, comm, idx);
    if opts.min_share <= 0.0 || idx.len() < 2 {
        // No resolution asked: every significant change between occurrences.
        let cuts = occ.segment(alpha, s0);
        return merge::merge(&occ, &cuts, alpha, s0);
    }
    let starts: Vec<tracelogic_model::Time> = idx.iter().map(|&i| comm.instances[i].start).collect();
    let last_end = idx.iter().map(|&i| comm.instances[i].end).max().unwrap_or(0);
    let bins = (1.0 / opts.min_share).round().clamp(2.0, 10_000.0) as usize;
    let ctx = Windows {
        trace,
        events,
        comm,
        idx,
        starts: &starts,
        last_end,
        occ: &occ,
        bins,
        alpha,
        s0,
    };
    // Hierarchical (docs/phases.md, step 2b): the run in windows of `min_share` of its time,
    // then each phase found holding at least one occurrence per window in windows of
    // `min_share` of its events, while cuts are found.
    let mut cuts: Vec<(usize, merge::BoundaryTest)> = Vec::new();
    let mut todo = vec![(0usize, idx.len(), 0usize)];
    while let Some((a, e, depth)) = todo.pop() {
        if depth > MAX_DEPTH {
            continue;
        }
        if depth > 0 && e - a < ctx.bins {
            // Fewer occurrences than windows (step 3c): the occurrences are the exchangeable
            // unit; the cut of largest divergence is kept where what is communicated changes,
            // significant with whole occurrences permuted, each side lasting at least
            // `min_share` of the run.
            let share = ((last_end - starts[0]) as f64 * opts.min_share) as tracelogic_model::Time;
            let end_of = |y: usize| if y == idx.len() { last_end } else { starts[y] };
            let worth = |x: usize, c: usize, y: usize| starts[c] - starts[x] >= share && end_of(y) - starts[c] >= share;
            cuts.extend(occ.segment_within(a, e, alpha, s0, worth));
            continue;
        }
        let mut sub = ctx.cuts(a, e);
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
    loop_edges(&occ, &starts, last_end, bounds, tests, opts)
}

/// Levels of refinement below the run's windows (each a factor `1 / min_share` finer).
const MAX_DEPTH: usize = 3;

/// What the windowed segmentation of a stretch of occurrences needs.
struct Windows<'a> {
    trace: &'a tracelogic_model::Trace,
    events: &'a crate::patterns::Events,
    comm: &'a crate::patterns::CommunicationAnalysis,
    idx: &'a [usize],
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
        let to = if e == self.idx.len() {
            self.last_end
        } else {
            self.starts[e]
        };
        let span = to.saturating_sub(from).max(1) + 1;
        let bins = self.bins;
        let by_events = (a, e) != (0, self.idx.len());
        let (win, ev_at) = if by_events {
            content::Bags::of_event_windows(self.trace, self.events, self.comm, &self.idx[a..e], bins)
        } else {
            (
                content::Bags::of_windows(
                    self.trace,
                    self.events,
                    self.comm,
                    &self.idx[a..e],
                    (from, from + span),
                    bins,
                ),
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
        let mut out: Vec<(usize, merge::BoundaryTest)> = Vec::new();
        for k in 1..wb.len().saturating_sub(1) {
            // Refined at the occurrences: within one window either side of the window boundary,
            // where the event mixes of the neighbouring phases differ most.
            let prev = out.last().map_or(a, |c| c.0);
            let next = first_from(at(wb[k + 1])).min(e);
            let (lo, hi) = (first_from(at(wb[k] - 1)), first_from(at(wb[k] + 1)));
            if let Some(c) = self.occ.best_cut_in(prev, next, lo, hi) {
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
    let time = |k: usize| {
        let to = if k + 1 == m { last_end } else { starts[bounds[k + 1]] };
        to.saturating_sub(starts[bounds[k]])
    };
    let Some(k) = (0..m).max_by_key(|&k| (time(k), std::cmp::Reverse(k))) else {
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
    for (c, t) in new_cuts.into_iter().rev() {
        let at = bounds.partition_point(|&b| b < c);
        if bounds.get(at) != Some(&c) {
            bounds.insert(at, c);
            tests.insert(at - 1, t);
        }
    }
    (bounds, tests)
}

/// Segment, merge and describe (see [`detect_phases`]).
pub fn detect_phases_with(
    trace: &tracelogic_model::Trace,
    events: &crate::patterns::Events,
    comm: &crate::patterns::CommunicationAnalysis,
    opts: &PhaseOptions,
) -> PhaseAnalysis {
    let (seq, idx) = pattern_sequence(comm, opts.outside);
    let seg = segment(&seq, opts.strength);
    let leaf_bounds: Vec<usize> = seg
        .phases
        .iter()
        .map(|&l| seg.tree[l].start)
        .chain(std::iter::once(seq.len()))
        .collect();
    let (bounds, tests) = if opts.significance < 1.0 {
        phase_bounds(trace, events, comm, &idx, opts)
    } else {
        (leaf_bounds.clone(), Vec::new())
    };
    let section_bounds = section_bounds(comm, &seq, &idx, &bounds, opts);
    let mut phases = Vec::with_capacity(bounds.len().saturating_sub(1));
    // Each phase's event ranges per rank, kept to describe the sections.
    let mut phase_spans: Vec<std::collections::BTreeMap<u32, Vec<(u32, u32)>>> = Vec::new();
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
        let mut ranks: std::collections::BTreeMap<u32, RankSpan> = Default::default();
        let mut spans: std::collections::BTreeMap<u32, Vec<(u32, u32)>> = Default::default();
        let mut counts: std::collections::BTreeMap<u32, usize> = Default::default();
        let mut routines: std::collections::HashMap<u32, u64> = Default::default();
        let mut extent = (u64::MAX, 0u64);
        for &i in &idx[start..end] {
            let inst = &comm.instances[i];
            *counts.entry(inst.pattern).or_default() += 1;
            extent = (extent.0.min(inst.start), extent.1.max(inst.end));
            for part in &inst.parts {
                spans
                    .entry(part.rank)
                    .or_default()
                    .push((part.first_event, part.last_event));
                let e = ranks.entry(part.rank).or_insert(RankSpan {
                    rank: part.rank,
                    first_event: part.first_event,
                    last_event: part.last_event,
                    start: part.start,
                    end: part.end,
                });
                e.first_event = e.first_event.min(part.first_event);
                e.last_event = e.last_event.max(part.last_event);
                e.start = e.start.min(part.start);
                e.end = e.end.max(part.end);
                let re = &events.ranks[part.rank as usize];
                let calls = &trace.ranks[part.rank as usize].calls;
                for ev in part.first_event..=part.last_event {
                    let cp = calls.callpath[re.calls[ev as usize] as usize];
                    if let Some(&region) = trace.callpaths.get(cp as usize).and_then(|p| p.last()) {
                        *routines.entry(region).or_default() += 1;
                    }
                }
            }
        }
        if start == end {
            extent = (0, 0);
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
            let (t, c) = describe::topology(trace, events, &spans);
            (Some(t), c, describe::imbalance(trace, events, &spans))
        } else {
            (None, Vec::new(), None)
        };
        if opts.describe && section_bounds.is_some() {
            phase_spans.push(spans);
        }
        phases.push(Phase {
            node,
            start,
            end,
            // Set below, once the next phase's start is known.
            time: extent,
            extent,
            ranks: ranks.into_values().collect(),
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
                    let mut spans: std::collections::BTreeMap<u32, Vec<(u32, u32)>> = Default::default();
                    for ps in &phase_spans[first..last] {
                        for (&r, v) in ps {
                            spans.entry(r).or_default().extend_from_slice(v);
                        }
                    }
                    let (t, c) = describe::topology(trace, events, &spans);
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
mod tests {
    use super::*;

    /// Step 5 with a set-up and an end of one occurrence each, larger than `min_share` of the
    /// run's events (LAMMPS with RCB balancing: the input broadcasts in one occurrence of 144 of
    /// 13,802 events, the statistics' reductions in one of 282): a loop of 300 steps of four
    /// exchanges, a first occurrence of 60 broadcasts and a last of 80 reductions (1.5 % and
    /// 2 % of the events). Each is split off; the loop alone is not cut.
    #[test]
    fn set_up_and_end_of_one_large_occurrence() {
        let mut bags: Vec<Vec<u32>> = vec![vec![0; 60]];
        bags.extend(std::iter::repeat_n(vec![1, 2, 3, 4], 300));
        bags.push(vec![5; 80]);
        let occ = content::Bags::from_symbols(&bags);
        let starts: Vec<tracelogic_model::Time> = (0..bags.len() as u64).map(|i| i * 1000).collect();
        let last_end = starts.last().copied().unwrap_or(0) + 1000;
        let opts = PhaseOptions::default();
        let (b, t) = loop_edges(&occ, &starts, last_end, vec![0, bags.len()], Vec::new(), &opts);
        assert_eq!(b, vec![0, 1, bags.len() - 1, bags.len()]);
        assert!(t.iter().all(|t| t.keeps(opts.significance, opts.strength)), "{t:?}");
        let loop_only = content::Bags::from_symbols(&bags[1..301]);
        let (lb, _) = loop_edges(&loop_only, &starts[..300], 300_000, vec![0, 300], Vec::new(), &opts);
        assert_eq!(lb, vec![0, 300]);
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Worked by hand, in the spirit of the thesis' Figure 5.2: `a a a a b b b b`.
    /// H = 1 bit. Cut after 4: both halves pure, D_JS = 1. K = 1 + 1 + 1 − 2 = 1,
    /// τ = log2(8)·1 / 16 = 3/16, s = (2·8·1 − 3) / 3 = 13/3.
    /// Cut after 3: H_r = H(1/5, 4/5) = 0.7219…, D_JS = 1 − 5/8·0.7219 = 0.5488.
    #[test]
    fn hand_checked_two_block_example() {
        let seq = [0, 0, 0, 0, 1, 1, 1, 1];
        let s = segment(&seq, 0.0);
        let root = &s.tree[0];
        assert!(close(root.entropy, 1.0));
        assert!(close(root.djs, 1.0));
        assert_eq!(root.cut, Some(4));
        assert!(close(root.tau, 3.0 / 16.0));
        assert!(close(root.strength.unwrap(), 13.0 / 3.0));
        let curve = divergence_curve(&seq, 0, 8);
        let h_1_5 = -(0.2f64 * 0.2f64.log2() + 0.8 * 0.8f64.log2());
        assert!(close(curve[2], 1.0 - 5.0 / 8.0 * h_1_5));
        assert!(close(curve[3], 1.0));
        // Pure halves: D_JS = 0 everywhere, K = 1, s = −1 < 0: they stay leaves.
        assert_eq!(s.phases, vec![1, 2]);
        let left = &s.tree[1];
        assert_eq!((left.start, left.end, left.parent), (0, 4, Some(0)));
        assert!(close(left.djs, 0.0));
        assert!(close(left.strength.unwrap(), -1.0));
    }

    /// `a b` has H = 1; the only cut gives two pure halves, D_JS = 1, K = 1 + 1 + 1 − 2 = 1,
    /// τ = log2(2)/4 = 0.25, s = (4 − 1)/1 = 3: cut. A single `a a` has K = 2, τ = 0.5, s = −1.
    #[test]
    fn length_two_segments() {
        let s = segment(&[0, 1], 0.0);
        assert!(close(s.tree[0].tau, 0.25));
        assert!(close(s.tree[0].strength.unwrap(), 3.0));
        assert_eq!(s.phases.len(), 2);
        let s = segment(&[3, 3], 0.0);
        assert!(close(s.tree[0].tau, 0.5));
        assert!(close(s.tree[0].strength.unwrap(), -1.0));
        assert_eq!(s.phases, vec![0]);
    }

    #[test]
    fn three_phases_found_at_their_boundaries() {
        // init (mixed symbols 0..3), a long solve loop of (4 5 6), finalise (7 8).
        let mut seq: Vec<u32> = vec![0, 1, 2, 3, 1, 0, 2, 3, 0, 1];
        let solve_start = seq.len();
        for _ in 0..200 {
            seq.extend([4, 5, 6]);
        }
        let fin_start = seq.len();
        seq.extend([7, 8, 7, 8, 7, 8, 7, 8]);
        let s = segment(&seq, 0.0);
        let bounds: Vec<usize> = s.phases.iter().map(|&p| s.tree[p].start).collect();
        assert!(bounds.contains(&solve_start), "{bounds:?}");
        assert!(bounds.contains(&fin_start), "{bounds:?}");
        // The solve loop is one homogeneous phase.
        assert!(s
            .phases
            .iter()
            .any(|&p| s.tree[p].start == solve_start && s.tree[p].end == fin_start));
    }

    #[test]
    fn higher_threshold_gives_fewer_phases() {
        let mut seq = Vec::new();
        for block in 0..6u32 {
            for i in 0..(20 + 7 * block) {
                seq.push(block % 3 + (i % 2) * 3);
            }
        }
        let fine = segment(&seq, 0.0).phases.len();
        let coarse = segment(&seq, 2.0).phases.len();
        assert!(coarse <= fine && fine > 1, "fine {fine} coarse {coarse}");
    }

    #[test]
    fn divergence_matches_direct_formula() {
        let seq = [2, 0, 1, 1, 0, 2, 2, 2, 1, 0, 0, 3];
        let curve = divergence_curve(&seq, 0, seq.len());
        let counts = |part: &[u32]| {
            let mut c = vec![0u64; 4];
            part.iter().for_each(|&s| c[s as usize] += 1);
            c
        };
        let n = seq.len() as f64;
        let h = entropy(&counts(&seq));
        for (j, &d) in curve.iter().enumerate() {
            let i = j + 1;
            let direct =
                h - i as f64 / n * entropy(&counts(&seq[..i])) - (n - i as f64) / n * entropy(&counts(&seq[i..]));
            assert!(close(d, direct), "cut {i}: {d} vs {direct}");
        }
    }

    #[test]
    fn window_entropy_matches_direct() {
        let seq = [0, 1, 0, 2, 2, 2, 1, 0];
        let w = window_entropy(&seq, 3);
        assert_eq!(w.len(), 6);
        for (j, &e) in w.iter().enumerate() {
            let mut c = [0u64; 3];
            seq[j..j + 3].iter().for_each(|&s| c[s as usize] += 1);
            assert!(close(e, entropy(&c)));
        }
    }

    #[test]
    fn empty_and_single() {
        let s = segment(&[], 0.0);
        assert_eq!(s.phases, vec![0]);
        let s = segment(&[5], 0.0);
        assert_eq!(s.tree[0].cut, None);
        assert_eq!(s.phases, vec![0]);
    }
}
