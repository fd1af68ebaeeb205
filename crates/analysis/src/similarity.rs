//! Similarity of two runs' communication patterns: the PACPM method (§3.2).
//!
//! A run is described per rank by three properties (Definitions 1–3): **temporal** = messages
//! sent per unit of work, **volume** = bytes sent, **spatial** = number of distinct partners;
//! and as a whole by its undirected **communication graph** (an edge per pair of ranks that
//! exchange point-to-point messages). Two runs with the same number of ranks are compared by
//! - `θ_i` (Definition 4): Pearson's correlation of the two rank-transformed property vectors
//!   (descending ranks, ties get their average rank), and `θ` their mean (Definition 5);
//! - `ε = 2|E_S| / (|E_G| + |E_H|)` (Definition 6), `S` a maximum common edge subgraph over all
//!   rank correspondences ([`tracelogic_graph::mcs`]);
//! - the pair is *similar* when both `θ` and `ε` reach a threshold (0.6 in the paper, §3.2.3).
//!
//! Choices the paper leaves open (details and examples in `docs/similarity.md`):
//! - **Work** is a hardware counter when both traces carry it for every rank (`PAPI_FP_OPS`,
//!   else `PAPI_TOT_INS`), else the compute time between MPI calls; [`Comparison::work_measure`]
//!   names the one used. A rank that sends without measurable work has an infinite rate
//!   (`null` in the observed vector) and ranks first.
//! - **Constant properties**: when a property is the same on every rank its ranked vector has
//!   no variance and Definition 4 divides by zero. Both runs constant → `θ_i = 1` (they agree
//!   that no rank stands out); one constant → `θ_i = 0` (no linear relation). This is what the
//!   paper's Table 4 shows (BT–SP spatial 1.000, BT–LU spatial 0.000).
//! - **Rank correspondence for θ**: θ compares rank `j` of one run with "its partner" in the
//!   other. The paper pairs equal rank numbers, which makes θ depend on how each run placed its
//!   processes. With the default alignment, when the two graphs are isomorphic the partner is
//!   the rank playing the same role in the graph: an isomorphism keeping every property's rank
//!   when there is one (one program under two placements: θ = 1), else the isomorphism with the
//!   largest θ ([`best_isomorphism`] over all of them, within a step budget). When each run
//!   names a [`collective_root`] (the root of its broadcasts and reductions), only isomorphisms
//!   pairing the two roots are scored, which leaves chance agreement fewer pairings to pick
//!   from ([`PairingAnchor`]). Every renumbering of either run has the same set of isomorphisms
//!   (and roots) renamed, so θ and the verdict do not depend on the placement ([`Pairing`] says
//!   how the ranks were paired and whether the search was exhaustive). Graphs that are not
//!   isomorphic keep rank numbers ([`Alignment`]).
//! - Only point-to-point messages count, as in the paper; a receive stands for its send when
//!   the sender's record is missing. An optional filter drops low-volume pairs from the graph
//!   with the rule of `tracelogic topology`.

use crate::topology::{auto_threshold, Threshold};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::HashMap;
use tracelogic_graph::iso::{
    best_isomorphism, best_isomorphism_anchored, count_automorphisms, count_automorphisms_fixing, isomorphism, verify,
    IsoOptions, NodeFeature,
};
use tracelogic_graph::mcs::{common_edge_list, maximum_common_edge_subgraph, McsMethod, McsOptions};
use tracelogic_graph::Graph;
use tracelogic_model::{CollectiveOp, P2pDir, Trace};

/// The paper's similarity threshold (§3.2.3, Figure 10).
pub const DEFAULT_THRESHOLD: f64 = 0.6;

/// What stands for `work_j` in the temporal property (Definition 1), best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum WorkMeasure {
    /// Floating-point operations (the paper's FLOP count), from the `PAPI_FP_OPS` counter.
    #[serde(rename = "PAPI_FP_OPS")]
    FpOps,
    /// Instructions, from the `PAPI_TOT_INS` counter.
    #[serde(rename = "PAPI_TOT_INS")]
    TotIns,
    /// Time spent outside MPI between a rank's first and last MPI call.
    #[serde(rename = "compute-time")]
    ComputeTime,
}

impl WorkMeasure {
    /// Every measure, in order of preference.
    pub const ALL: [WorkMeasure; 3] = [WorkMeasure::FpOps, WorkMeasure::TotIns, WorkMeasure::ComputeTime];

    /// The name used in output (`PAPI_FP_OPS`, `PAPI_TOT_INS`, `compute-time`).
    pub fn name(self) -> &'static str {
        match self {
            WorkMeasure::FpOps => "PAPI_FP_OPS",
            WorkMeasure::TotIns => "PAPI_TOT_INS",
            WorkMeasure::ComputeTime => "compute-time",
        }
    }

    /// Unit of the temporal property under this measure.
    pub fn temporal_unit(self) -> &'static str {
        match self {
            WorkMeasure::FpOps => "sends per 10^9 floating-point operations",
            WorkMeasure::TotIns => "sends per 10^9 instructions",
            WorkMeasure::ComputeTime => "sends per second of compute",
        }
    }

    /// Work units per displayed unit (10^9 events, or 10^9 ns = 1 s).
    fn scale(self) -> f64 {
        1e9
    }
}

/// Per-rank work under one measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankWork {
    /// The measure.
    pub measure: WorkMeasure,
    /// Work of each rank (counter events, or nanoseconds of compute).
    pub work: Vec<f64>,
}

/// The per-rank properties and the communication graph of one run: everything a comparison
/// needs, computed once per run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunProperties {
    /// Where the run came from (the trace's source).
    pub source: String,
    /// Number of ranks.
    pub ranks: u32,
    /// Point-to-point messages sent by each rank (`|sends_j|`).
    pub sends: Vec<u64>,
    /// Bytes sent by each rank (the volume property, Definition 2).
    pub volume: Vec<u64>,
    /// Distinct partners of each rank, sending or receiving (the spatial property, Definition 3);
    /// the rank's degree in [`RunProperties::edges`].
    pub spatial: Vec<u32>,
    /// Work per rank under every measure this run offers, best first.
    pub work: Vec<RankWork>,
    /// The communication graph: pairs `[a, b]`, `a < b`, that exchange messages (after the
    /// optional filter).
    pub edges: Vec<[u32; 2]>,
    /// Communicating pairs the filter removed.
    pub filtered_pairs: usize,
    /// Rooted collective operations (`MPI_Bcast`, `MPI_Reduce`, `MPI_Gather(v)`,
    /// `MPI_Scatter(v)` and their non-blocking forms) each rank was the root of, from its own
    /// records: the role a run names by itself, whatever its numbering ([`collective_root`]).
    #[serde(default)]
    pub roots: Vec<u64>,
}

/// The root of a run's rooted collectives: the rank that was root of strictly more of them
/// than any other (`roots` as in [`RunProperties::roots`]); `None` when no rank was root, or
/// when several share the largest count. Why: a program roots its broadcasts and reductions at
/// one process (NAS: process 0) whatever world rank plays it, so it names that process
/// independently of the placement, and it is not a property θ measures.
pub fn collective_root(roots: &[u64]) -> Option<u32> {
    let max = *roots.iter().max()?;
    let mut at = roots
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c == max)
        .map(|(r, _)| r as u32);
    let first = at.next()?;
    (max > 0 && at.next().is_none()).then_some(first)
}

/// How ranks of the second run are paired with ranks of the first for `θ`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Alignment {
    /// When the graphs are isomorphic, the isomorphism that maximises θ (ranks paired by the
    /// role they play in the graph, whatever their numbers); otherwise rank numbers (see
    /// `docs/similarity.md`).
    #[default]
    Auto,
    /// Always rank `j` with rank `j` (the paper).
    Rank,
    /// As `Auto` when the graphs are isomorphic; otherwise the correspondence of the
    /// common-subgraph search (the identity when it keeps as many edges).
    Graph,
}

/// Options of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareOptions {
    /// A pair is similar when `θ` and `ε` both reach this value.
    pub threshold: f64,
    /// Drop low-volume pairs from the communication graph (`None`: every communicating pair is
    /// an edge, as in the paper).
    pub filter: Option<Threshold>,
    /// Rank correspondence for `θ`.
    pub alignment: Alignment,
    /// Step budget of the common-subgraph search (`None`: [`McsOptions::for_nodes`]).
    pub max_steps: Option<u64>,
    /// Step budget of the search for the pairing that maximises θ among the isomorphisms of the
    /// graphs (`None`: [`pairing_steps_for`]).
    #[serde(default)]
    pub max_pairing_steps: Option<u64>,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            threshold: DEFAULT_THRESHOLD,
            filter: None,
            alignment: Alignment::Auto,
            max_steps: None,
            max_pairing_steps: None,
        }
    }
}

/// Default step budget of the best-pairing search on `n` ranks: [`PAIRING_STEPS_BASE`] plus
/// [`PAIRING_STEPS_PER_RANK`] per rank: 20–25 million steps a second natively, so at most
/// about 1 s at 1,024 ranks and 2 s at 4,096 (measured in `docs/similarity.md`); BT against SP
/// at 1,024 ranks needs 9–15 million.
pub fn pairing_steps_for(n: u32) -> u64 {
    PAIRING_STEPS_BASE + PAIRING_STEPS_PER_RANK * u64::from(n)
}

/// Fixed part of [`pairing_steps_for`].
pub const PAIRING_STEPS_BASE: u64 = 20_000_000;
/// Per-rank part of [`pairing_steps_for`].
pub const PAIRING_STEPS_PER_RANK: u64 = 4_096;

/// How the ranks of the second run were chosen to stand beside the ranks of the first in θ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairedBy {
    /// Rank `j` with rank `j`, Definition 4 as the paper applies it (`--align rank`, or graphs
    /// that are not isomorphic under `auto`).
    RankNumber,
    /// An isomorphism of the graphs under which every rank keeps its position in temporal,
    /// volume and send count: the runs are one program under two placements, θ = 1.
    SameProperties,
    /// The isomorphism of the graphs with the largest θ: each rank is paired with the rank that
    /// plays its role in the other run's graph, the roles chosen to agree best.
    BestIsomorphism,
    /// The correspondence of the common-subgraph search (`--align graph`, graphs not
    /// isomorphic).
    CommonSubgraph,
}

/// The rank pairing behind θ, and how it was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pairing {
    /// How the pairing was chosen.
    pub by: PairedBy,
    /// `ranks[j]`: the rank of the second run paired with rank `j` of the first.
    pub ranks: Vec<u32>,
    /// θ with rank `j` paired with rank `j` (the paper's reading), to set beside `θ`.
    pub theta_by_rank: f64,
    /// Isomorphisms of the graphs scored in full by the best-pairing search (0 when none ran;
    /// the others were proven no better by its bound).
    pub isomorphisms_scored: u64,
    /// Steps of that search.
    pub steps: u64,
    /// False when the best-pairing search ran out of steps: `θ` is then the best of the
    /// pairings it scored, a lower bound on the best over all isomorphisms. True otherwise.
    pub exhaustive: bool,
    /// With a best-isomorphism pairing on at most [`CHANCE_MAX_RANKS`] ranks: the mean best θ
    /// over [`CHANCE_SHUFFLES`] shuffles of the second run's per-rank values, i.e. what the same
    /// maximisation reaches with values unrelated to the ranks' roles (NAS BT against SP: 0.57
    /// on 16 ranks, 0.51 on 64; independent random values on 16-rank tori and stencils 0.65).
    /// `None` otherwise, or when a shuffle's search ran out of steps. An estimate: it moves by
    /// about 0.01 with the placement, θ does not. With an anchored pairing the shuffles are
    /// searched under the same anchor.
    pub theta_chance: Option<f64>,
    /// The roles the runs name themselves (the roots of their rooted collectives) and whether
    /// the best-pairing search was restricted to the isomorphisms pairing them.
    #[serde(default)]
    pub anchor: PairingAnchor,
}

/// The anchor of a best-isomorphism pairing: each run's root of its rooted collectives
/// ([`collective_root`]). When both runs have one and some isomorphism of the graphs maps one
/// onto the other, only those isomorphisms are scored, which leaves far fewer pairings for
/// chance agreement to pick from (12 of 192 on a 4x4 periodic 6-point stencil).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairingAnchor {
    /// The first run's collective root (`None`: no rooted collective, or no single rank roots
    /// most of them).
    pub rank_a: Option<u32>,
    /// The second run's collective root.
    pub rank_b: Option<u32>,
    /// True when the best-pairing search scored only isomorphisms mapping `rank_a` to `rank_b`.
    pub used: bool,
    /// Why the anchor was not used (`None` when it was, or when no best-pairing search ran).
    pub unused_because: Option<String>,
    /// Isomorphisms of the graphs (automorphisms of the first run's graph), when a best-pairing
    /// search ran on at most [`ANCHOR_COUNT_MAX_RANKS`] ranks and counting them finished within
    /// [`ANCHOR_COUNT_STEPS`].
    pub isomorphisms: Option<u64>,
    /// Of those, the ones mapping the anchor onto the anchor (the stabiliser of `rank_a`), counted
    /// likewise when the anchor was used.
    pub anchored_isomorphisms: Option<u64>,
}

impl PairingAnchor {
    /// One phrase for the CLI and the web: the roots paired and how many isomorphisms pair
    /// them (`anchored on the collective roots, rank 0 with rank 5: 12 of 192 isomorphisms`),
    /// or why the search was not anchored.
    pub fn summary(&self) -> String {
        match (self.used, self.rank_a, self.rank_b) {
            (true, Some(ra), Some(rb)) => {
                let counts = match (self.anchored_isomorphisms, self.isomorphisms) {
                    (Some(k), Some(all)) => format!(": {k} of {all} isomorphisms"),
                    _ => String::new(),
                };
                format!("anchored on the collective roots, rank {ra} with rank {rb}{counts}")
            }
            _ => {
                let over = self
                    .isomorphisms
                    .map(|all| format!(", all {all} isomorphisms"))
                    .unwrap_or_default();
                match &self.unused_because {
                    Some(why) => format!("not anchored{over}: {why}"),
                    None => format!("not anchored{over}"),
                }
            }
        }
    }
}

/// Largest rank count for which [`PairingAnchor::isomorphisms`] is counted: enumerating a group
/// costs about `|Aut| · n · degree` steps (the 16x16 6-point stencil, 3,072 automorphisms, 117 ms).
pub const ANCHOR_COUNT_MAX_RANKS: u32 = 256;
/// Step budget of each count in [`PairingAnchor`].
pub const ANCHOR_COUNT_STEPS: u64 = 4_000_000;

/// Shuffles averaged in [`Pairing::theta_chance`].
pub const CHANCE_SHUFFLES: u64 = 8;
/// Largest rank count for which [`Pairing::theta_chance`] is estimated: beyond, unrelated values
/// stay well below the threshold (0.40–0.43 on 16x16 stencils) and the shuffled searches, which
/// prune less than the real one, cost the most (0.7 s at 256 ranks against 28 ms).
pub const CHANCE_MAX_RANKS: u32 = 128;

/// One property compared: the vectors to plot side by side (Figures 12–13) and `θ_i`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PropertyComparison {
    /// `temporal`, `volume` or `spatial`.
    pub property: String,
    /// Unit of the observed values.
    pub unit: String,
    /// Observed value per rank of the first run (`null`: infinite rate, sends without work).
    pub observed_a: Vec<Option<f64>>,
    /// Observed value of the second run's rank paired with each rank of the first.
    pub observed_b: Vec<Option<f64>>,
    /// Ranks (1 = largest, ties averaged) of `observed_a`.
    pub ranked_a: Vec<f64>,
    /// Ranks of `observed_b`.
    pub ranked_b: Vec<f64>,
    /// `θ_i`.
    pub theta: f64,
    /// Set when a vector is constant and the convention decided `θ_i`.
    pub note: Option<String>,
}

/// The two communication graphs and their common subgraph, ready to draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphComparison {
    /// Edges of the first run's graph.
    pub edges_a: Vec<[u32; 2]>,
    /// Edges of the second run's graph.
    pub edges_b: Vec<[u32; 2]>,
    /// For each rank of the first run, the rank of the second it corresponds to in the common
    /// subgraph.
    pub mapping: Vec<u32>,
    /// Edges of the first graph kept in the common subgraph (first run's rank numbers).
    pub common_edges: Vec<[u32; 2]>,
    /// `|E_S|`.
    pub common: usize,
    /// Proven upper bound on `|E_S|`.
    pub upper_bound: usize,
    /// The search stage that settled `|E_S|`.
    pub method: McsMethod,
    /// Search steps spent.
    pub steps: u64,
}

/// The comparison of two runs (the output contract of `tracelogic compare`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Index of the first run among those compared.
    pub first: usize,
    /// Index of the second run.
    pub second: usize,
    /// Source of the first run.
    pub a: String,
    /// Source of the second run.
    pub b: String,
    /// Ranks of each run.
    pub ranks: u32,
    /// Communication correlation coefficient (mean of the three below).
    pub theta: f64,
    /// `θ` of the temporal property.
    pub theta_temporal: f64,
    /// `θ` of the volume property.
    pub theta_volume: f64,
    /// `θ` of the spatial property.
    pub theta_spatial: f64,
    /// Graph similarity of the best correspondence found (exact when `epsilon_exact`).
    pub epsilon: f64,
    /// True when `epsilon` is proven maximal; otherwise it is a lower bound.
    pub epsilon_exact: bool,
    /// Proven upper bound on `ε` (equal to `epsilon` when exact).
    pub epsilon_upper: f64,
    /// `θ ≥ threshold` and `ε ≥ threshold`.
    pub similar: bool,
    /// False when `similar` could change with the exact `ε` (it lies between `epsilon` and
    /// `epsilon_upper`, on both sides of the threshold), or when `θ` is below the threshold
    /// and the best-pairing search ran out of steps (`pairing.exhaustive` false).
    pub classification_certain: bool,
    /// The threshold used.
    pub threshold: f64,
    /// What measured work in the temporal property (`PAPI_FP_OPS`, `PAPI_TOT_INS`,
    /// `compute-time`).
    pub work_measure: WorkMeasure,
    /// How ranks were paired for `θ`: `rank` (rank numbers) or `graph` (a graph correspondence);
    /// [`Comparison::pairing`] says which and why.
    pub alignment: String,
    /// The rank pairing behind `θ`.
    pub pairing: Pairing,
    /// Temporal, volume and spatial, in that order.
    pub properties: Vec<PropertyComparison>,
    /// The graphs and their common subgraph.
    pub graph: GraphComparison,
}

/// `θ`, `ε` and the verdict of one pair, as a cell of [`SimilarityMatrix::matrix`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MatrixCell {
    /// Communication correlation coefficient.
    pub theta: f64,
    /// Graph similarity (lower bound unless `epsilon_exact`).
    pub epsilon: f64,
    /// True when `epsilon` is proven maximal.
    pub epsilon_exact: bool,
    /// Both reach the threshold.
    pub similar: bool,
}

/// Every pair of several runs, and the symmetric matrix of their cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimilarityMatrix {
    /// Sources of the runs, in input order.
    pub runs: Vec<String>,
    /// Threshold used.
    pub threshold: f64,
    /// Each pair `first < second`, in order.
    pub pairs: Vec<Comparison>,
    /// `matrix[i][j]`: the pair of runs `i` and `j`; the diagonal is a run against itself
    /// (`θ = ε = 1`, similar).
    pub matrix: Vec<Vec<MatrixCell>>,
}

/// Work per rank from a counter: accumulated counters (never decreasing) count from the start
/// of measurement, so the last value; anything else holds per-interval values, so the sum.
/// `None` unless every rank has a sample of the counter.
fn counter_work(trace: &Trace, name: &str) -> Option<Vec<f64>> {
    let id = trace
        .metrics
        .names()
        .iter()
        .position(|m| m.eq_ignore_ascii_case(name))? as u32;
    trace
        .ranks
        .iter()
        .map(|rt| {
            let series: Vec<&[f64]> = rt
                .metrics
                .iter()
                .filter(|s| s.metric == id && !s.value.is_empty())
                .map(|s| s.value.as_slice())
                .collect();
            if series.is_empty() {
                return None;
            }
            Some(
                series
                    .iter()
                    .map(|v| {
                        if v.windows(2).all(|w| w[0] <= w[1]) {
                            v[v.len() - 1]
                        } else {
                            v.iter().sum()
                        }
                    })
                    .filter(|x| x.is_finite())
                    .sum(),
            )
        })
        .collect()
}

/// Nanoseconds outside MPI between each rank's first call entry and last call exit: the gaps
/// of the union of its call intervals (threads' calls may overlap).
fn compute_time(trace: &Trace) -> Vec<f64> {
    trace
        .ranks
        .iter()
        .map(|rt| {
            let c = &rt.calls;
            let mut intervals: Vec<(u64, u64)> = c.enter.iter().copied().zip(c.exit.iter().copied()).collect();
            if intervals.windows(2).any(|w| w[0].0 > w[1].0) {
                intervals.sort_unstable();
            }
            let mut gaps = 0u64;
            let mut reach: Option<u64> = None;
            for (enter, exit) in intervals {
                if let Some(r) = reach {
                    gaps += enter.saturating_sub(r);
                }
                reach = Some(reach.map_or(exit, |r| r.max(exit)));
            }
            gaps as f64
        })
        .collect()
}

/// Directed traffic `from → to` as recorded: sends by `from`, receives by `to`.
#[derive(Default, Clone, Copy)]
struct Directed {
    sent_bytes: u64,
    sent_messages: u64,
    received_bytes: u64,
    received_messages: u64,
}

/// The per-rank properties and communication graph of `trace`. `filter` drops low-volume pairs
/// from the graph (and so from the spatial property) with the rule of `tracelogic topology`.
pub fn run_properties(trace: &Trace, filter: Option<Threshold>) -> RunProperties {
    let n = trace.num_ranks();
    let mut sends = vec![0u64; n as usize];
    let mut volume = vec![0u64; n as usize];
    let mut directed: HashMap<(u32, u32), Directed> = HashMap::new();
    for rt in &trace.ranks {
        let r = rt.rank;
        let p = &rt.p2p;
        for i in 0..p.len() {
            let peer = p.peer[i];
            match p.dir[i] {
                P2pDir::Send => {
                    sends[r as usize] += 1;
                    volume[r as usize] = volume[r as usize].saturating_add(p.bytes[i]);
                    if peer < n && peer != r {
                        let d = directed.entry((r, peer)).or_default();
                        d.sent_bytes = d.sent_bytes.saturating_add(p.bytes[i]);
                        d.sent_messages += 1;
                    }
                }
                P2pDir::Recv => {
                    if peer < n && peer != r {
                        let d = directed.entry((peer, r)).or_default();
                        d.received_bytes = d.received_bytes.saturating_add(p.bytes[i]);
                        d.received_messages += 1;
                    }
                }
            }
        }
    }
    // A direction's traffic is what its sender recorded, or its receiver when the sender
    // recorded nothing.
    let by_bytes = directed.values().any(|d| d.sent_bytes > 0 || d.received_bytes > 0);
    let weight = |d: &Directed| match (by_bytes, d.sent_messages > 0) {
        (true, true) => d.sent_bytes,
        (true, false) => d.received_bytes,
        (false, true) => d.sent_messages,
        (false, false) => d.received_messages,
    };
    let mut pairs: HashMap<(u32, u32), u64> = HashMap::new();
    for (&(from, to), d) in &directed {
        let w = pairs.entry((from.min(to), from.max(to))).or_insert(0);
        *w = (*w).max(weight(d));
    }
    let mut pairs: Vec<((u32, u32), u64)> = pairs.into_iter().collect();
    pairs.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    let keep = match filter {
        None => pairs.len(),
        Some(Threshold::Percent(pct)) => {
            let max = pairs.first().map_or(0, |p| p.1) as f64;
            pairs.iter().take_while(|p| p.1 as f64 * 100.0 >= pct * max).count()
        }
        Some(Threshold::Auto) => {
            let volumes: Vec<u64> = pairs.iter().map(|p| p.1).collect();
            let endpoints: Vec<(u32, u32)> = pairs.iter().map(|p| p.0).collect();
            auto_threshold(&volumes, &endpoints, n).map_or(pairs.len(), |(keep, _)| keep)
        }
    };
    let mut edges: Vec<[u32; 2]> = pairs[..keep].iter().map(|&((a, b), _)| [a, b]).collect();
    edges.sort_unstable();
    let mut spatial = vec![0u32; n as usize];
    for &[a, b] in &edges {
        spatial[a as usize] += 1;
        spatial[b as usize] += 1;
    }
    let mut work = Vec::new();
    for measure in WorkMeasure::ALL {
        let w = match measure {
            WorkMeasure::FpOps | WorkMeasure::TotIns => counter_work(trace, measure.name()),
            WorkMeasure::ComputeTime => Some(compute_time(trace)),
        };
        if let Some(work_per_rank) = w {
            work.push(RankWork {
                measure,
                work: work_per_rank,
            });
        }
    }
    RunProperties {
        source: trace.source.clone(),
        ranks: n,
        sends,
        volume,
        spatial,
        work,
        edges,
        filtered_pairs: pairs.len() - keep,
        roots: collective_roots(trace),
    }
}

/// Per rank, the rooted collective operations it recorded itself as the root of (one count per
/// operation, whatever the other members recorded).
fn collective_roots(trace: &Trace) -> Vec<u64> {
    let rooted = |op: CollectiveOp| {
        matches!(
            op,
            CollectiveOp::Bcast
                | CollectiveOp::Reduce
                | CollectiveOp::Gather
                | CollectiveOp::Gatherv
                | CollectiveOp::Scatter
                | CollectiveOp::Scatterv
        )
    };
    trace
        .ranks
        .iter()
        .map(|rt| {
            let c = &rt.collectives;
            c.op.iter()
                .zip(&c.root)
                .filter(|&(&op, &root)| rooted(op) && root == rt.rank)
                .count() as u64
        })
        .collect()
}

/// Rank transformation (§3.2.1, Figure 3): the largest value gets rank 1, the next rank 2, ...;
/// equal values share the average of the ranks they span. Values that do not compare (NaN) count
/// as equal to their neighbours in the sort.
pub fn rank_transform<T: PartialOrd + Copy>(values: &[T]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    let desc = |i: &usize, j: &usize| values[*j].partial_cmp(&values[*i]).unwrap_or(Ordering::Equal);
    order.sort_by(desc);
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && desc(&order[start], &order[end]) == Ordering::Equal {
            end += 1;
        }
        // Positions start+1 ..= end share their mean.
        let shared = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = shared;
        }
        start = end;
    }
    ranks
}

/// The metric correlation coefficient `θ_i` of Definition 4 (Pearson's coefficient) of two
/// ranked vectors of equal length. A constant vector has no variance: both constant gives 1,
/// one constant gives 0 (see the module documentation). Empty vectors count as constant.
pub fn metric_correlation(r: &[f64], s: &[f64]) -> f64 {
    assert_eq!(r.len(), s.len(), "ranked vectors of different lengths");
    let constant = |v: &[f64]| v.windows(2).all(|w| w[0] == w[1]);
    match (constant(r), constant(s)) {
        (true, true) => return 1.0,
        (true, false) | (false, true) => return 0.0,
        (false, false) => {}
    }
    let n = r.len() as f64;
    let (mr, ms) = (r.iter().sum::<f64>() / n, s.iter().sum::<f64>() / n);
    let (mut rs, mut rr, mut ss) = (0.0, 0.0, 0.0);
    for (&x, &y) in r.iter().zip(s) {
        let (dx, dy) = (x - mr, y - ms);
        rs += dx * dy;
        rr += dx * dx;
        ss += dy * dy;
    }
    // One square root of the product: a perfect (anti)correlation gives exactly ±1.
    (rs / (rr * ss).sqrt()).clamp(-1.0, 1.0)
}

/// The communication correlation coefficient `θ` of Definition 5: the mean of the `θ_i`.
pub fn communication_correlation(thetas: &[f64]) -> f64 {
    if thetas.is_empty() {
        return 0.0;
    }
    thetas.iter().sum::<f64>() / thetas.len() as f64
}

/// The measure both runs offer, best first.
fn common_measure(a: &RunProperties, b: &RunProperties) -> (WorkMeasure, Vec<f64>, Vec<f64>) {
    for measure in WorkMeasure::ALL {
        let wa = a.work.iter().find(|w| w.measure == measure);
        let wb = b.work.iter().find(|w| w.measure == measure);
        if let (Some(wa), Some(wb)) = (wa, wb) {
            return (measure, wa.work.clone(), wb.work.clone());
        }
    }
    let zeros = |p: &RunProperties| vec![0.0; p.ranks as usize];
    (WorkMeasure::ComputeTime, zeros(a), zeros(b))
}

/// Temporal property: sends per displayed unit of work; `None` (infinite) for a rank that sends
/// without measurable work, 0 for a rank that sends nothing.
fn temporal(sends: &[u64], work: &[f64], measure: WorkMeasure) -> Vec<Option<f64>> {
    sends
        .iter()
        .zip(work)
        .map(|(&s, &w)| {
            if s == 0 {
                Some(0.0)
            } else if w > 0.0 {
                Some(s as f64 * measure.scale() / w)
            } else {
                None
            }
        })
        .collect()
}

fn compare_property(
    property: &str,
    unit: &str,
    observed_a: Vec<Option<f64>>,
    observed_b: Vec<Option<f64>>,
) -> PropertyComparison {
    let key = |v: &Vec<Option<f64>>| -> Vec<f64> { v.iter().map(|x| x.unwrap_or(f64::INFINITY)).collect() };
    let ranked_a = rank_transform(&key(&observed_a));
    let ranked_b = rank_transform(&key(&observed_b));
    let theta = metric_correlation(&ranked_a, &ranked_b);
    let constant = |v: &[f64]| v.windows(2).all(|w| w[0] == w[1]);
    let note = match (constant(&ranked_a), constant(&ranked_b)) {
        (true, true) => Some("constant in both runs: θ = 1 by convention".to_string()),
        (true, false) => Some("constant in the first run only: θ = 0 by convention".to_string()),
        (false, true) => Some("constant in the second run only: θ = 0 by convention".to_string()),
        (false, false) => None,
    };
    PropertyComparison {
        property: property.into(),
        unit: unit.into(),
        observed_a,
        observed_b,
        ranked_a,
        ranked_b,
        theta,
        note,
    }
}

/// One property's per-rank values in run a and in run b.
type PropertyPair = (Vec<f64>, Vec<f64>);

/// A label per rank of both runs: the same label for ranks with the same rank (descending, ties
/// averaged, within their own run) in every one of the given properties, so the labels survive a
/// change of problem size that keeps the order. `properties` holds pairs (run a's vector, run
/// b's vector).
fn joint_labels(properties: &[PropertyPair], n: usize) -> (Vec<u32>, Vec<u32>) {
    let key = |pick: &dyn Fn(&PropertyPair) -> &Vec<f64>| -> Vec<Vec<u64>> {
        let ranked: Vec<Vec<f64>> = properties.iter().map(|p| rank_transform(pick(p))).collect();
        // Ranks are multiples of ½: doubled they are exact integers.
        (0..n)
            .map(|j| ranked.iter().map(|r| (2.0 * r[j]) as u64).collect())
            .collect()
    };
    let (ka, kb) = (key(&|p| &p.0), key(&|p| &p.1));
    let mut distinct: Vec<&Vec<u64>> = ka.iter().chain(&kb).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let label = |k: &[Vec<u64>]| -> Vec<u32> {
        k.iter()
            .map(|x| distinct.binary_search(&x).unwrap_or(0) as u32)
            .collect()
    };
    (label(&ka), label(&kb))
}

/// The isomorphism of `ga` onto `gb` that keeps labels when every rank of `a` has its own label:
/// the labels alone then decide the pairing, which is kept if it is an isomorphism.
fn forced_by_labels(ga: &Graph, gb: &Graph, la: &[u32], lb: &[u32]) -> Option<Vec<u32>> {
    let mut by_label: HashMap<u32, u32> = HashMap::with_capacity(lb.len());
    for (v, &l) in lb.iter().enumerate() {
        if by_label.insert(l, v as u32).is_some() {
            return None;
        }
    }
    let mapping: Vec<u32> = la.iter().map(|l| by_label.remove(l)).collect::<Option<_>>()?;
    verify(ga, gb, &mapping).ok()?;
    Some(mapping)
}

/// An isomorphism of `ga` onto `gb` under which every rank keeps its label (its ranks in temporal,
/// volume and send count): the identity when it is one, else the labels alone when every rank
/// has its own, else the labelled isomorphism search. A run against any renumbering of itself
/// pairs each process with itself, or with one indistinguishable from it in graph and
/// properties.
fn same_properties_pairing(ga: &Graph, gb: &Graph, la: &[u32], lb: &[u32]) -> Option<Vec<u32>> {
    if ga == gb && la == lb {
        return Some((0..ga.num_nodes()).collect());
    }
    forced_by_labels(ga, gb, la, lb).or_else(|| label_preserving_isomorphism(ga, gb, la, lb))
}

/// The feature of one property for [`best_isomorphism`]: each run's ranked vector centred and
/// scaled to unit length, so that the score of a pairing is that property's `θ_i` (Pearson's
/// coefficient, whose denominator does not depend on the pairing). `None` when either vector is
/// constant: `θ_i` is then fixed by convention whatever the pairing.
fn correlation_feature(observed_a: &[Option<f64>], observed_b: &[Option<f64>]) -> Option<NodeFeature> {
    let key = |v: &[Option<f64>]| -> Vec<f64> { v.iter().map(|x| x.unwrap_or(f64::INFINITY)).collect() };
    let unit = |v: &[Option<f64>]| -> Option<Vec<f64>> {
        let ranked = rank_transform(&key(v));
        let mean = ranked.iter().sum::<f64>() / ranked.len() as f64;
        let centred: Vec<f64> = ranked.iter().map(|r| r - mean).collect();
        let norm = centred.iter().map(|x| x * x).sum::<f64>().sqrt();
        (norm > 0.0).then(|| centred.iter().map(|x| x / norm).collect())
    };
    Some((unit(observed_a)?, unit(observed_b)?))
}

/// The best-θ isomorphism and what its search did.
struct BestPairing {
    ranks: Vec<u32>,
    scored: u64,
    steps: u64,
    exhaustive: bool,
}

/// Among the isomorphisms of `ga` onto `gb` that map each `anchors[i].0` onto `anchors[i].1`,
/// the one that maximises θ (the sum of the temporal and volume `θ_i`; spatial is the same
/// under every isomorphism), starting from the known ones in `seeds`. When the budget runs out
/// first, an isomorphism keeping every rank's volume and send-count ranks (if there is one and
/// it keeps the anchors) is tried too, and the better is kept.
fn best_theta_pairing(
    ga: &Graph,
    gb: &Graph,
    features: &[NodeFeature],
    seeds: &[&[u32]],
    volume_sends: &(Vec<u32>, Vec<u32>),
    anchors: &[(u32, u32)],
    max_steps: u64,
) -> Option<BestPairing> {
    let found = if anchors.is_empty() {
        best_isomorphism(ga, gb, features, seeds, max_steps)?
    } else {
        best_isomorphism_anchored(ga, gb, features, seeds, anchors, max_steps)?
    };
    let mut best = BestPairing {
        ranks: found.mapping,
        scored: found.scored,
        steps: found.steps,
        exhaustive: found.exhaustive,
    };
    if !best.exhaustive {
        let score = |m: &[u32]| -> f64 {
            features
                .iter()
                .map(|(a, b)| a.iter().zip(m).map(|(x, &j)| x * b[j as usize]).sum::<f64>())
                .sum()
        };
        if let Some(m) = same_properties_pairing(ga, gb, &volume_sends.0, &volume_sends.1) {
            let keeps = anchors.iter().all(|&(u, v)| m[u as usize] == v);
            if keeps && score(&m) > score(&best.ranks) {
                best.ranks = m;
            }
        }
    }
    Some(best)
}

/// The mean, over [`CHANCE_SHUFFLES`] fixed shuffles of the second run's feature values, of the
/// best score over the isomorphisms of `ga` onto `gb` (those keeping `anchors` when given);
/// `None` when a search runs out of its share of `max_steps`.
fn chance_score(
    ga: &Graph,
    gb: &Graph,
    features: &[NodeFeature],
    seeds: &[&[u32]],
    anchors: &[(u32, u32)],
    max_steps: u64,
) -> Option<f64> {
    let n = ga.num_nodes();
    let mut total = 0.0;
    for k in 0..CHANCE_SHUFFLES {
        let shuffle = tracelogic_model::renumber::random_permutation(n, k + 1);
        let shuffled: Vec<NodeFeature> = features
            .iter()
            .map(|(fa, fb)| (fa.clone(), shuffle.iter().map(|&j| fb[j as usize]).collect()))
            .collect();
        let steps = max_steps / CHANCE_SHUFFLES;
        let best = if anchors.is_empty() {
            best_isomorphism(ga, gb, &shuffled, seeds, steps)?
        } else {
            best_isomorphism_anchored(ga, gb, &shuffled, seeds, anchors, steps)?
        };
        if !best.exhaustive {
            return None;
        }
        total += best.score;
    }
    Some(total / CHANCE_SHUFFLES as f64)
}

/// Among the isomorphisms of `ga` onto `gb`, one that maps every rank to a rank of the same
/// label, if the isomorphism engine finds one: each label `l` becomes a pendant path of `l + 1`
/// extra nodes, and an isomorphism of the decorated graphs that maps ranks to ranks and is an
/// isomorphism of the plain graphs is returned. `None` when the labels cannot be kept, when
/// the decoration would exceed 2^16 extra nodes, or when the search gives up.
fn label_preserving_isomorphism(ga: &Graph, gb: &Graph, la: &[u32], lb: &[u32]) -> Option<Vec<u32>> {
    let n = ga.num_nodes();
    let extra: u64 = la.iter().map(|&l| l as u64 + 1).sum();
    if extra > 1 << 16 {
        return None;
    }
    let decorate = |g: &Graph, labels: &[u32]| {
        let mut edges: Vec<(u32, u32)> = g.edges().collect();
        let mut next = n;
        for (u, &l) in labels.iter().enumerate() {
            let mut prev = u as u32;
            for _ in 0..=l {
                edges.push((prev, next));
                prev = next;
                next += 1;
            }
        }
        Graph::from_edges(next, edges)
    };
    let (da, db) = (decorate(ga, la), decorate(gb, lb));
    let found = isomorphism(&da, &db, IsoOptions::for_nodes(da.num_nodes()));
    let mapping: Vec<u32> = found.mapping()?[..n as usize].to_vec();
    if mapping.iter().any(|&v| v >= n) || verify(ga, gb, &mapping).is_err() {
        return None;
    }
    Some(mapping)
}

/// Compare two runs from their properties (compute those once per run with
/// [`run_properties`]). Fails when the rank counts differ or a run has no rank, or when the
/// threshold is not a number.
pub fn compare_properties(a: &RunProperties, b: &RunProperties, opts: &CompareOptions) -> Result<Comparison, String> {
    if a.ranks != b.ranks {
        return Err(format!(
            "cannot compare {} ({} ranks) with {} ({} ranks): runs must have the same number of ranks",
            a.source, a.ranks, b.source, b.ranks
        ));
    }
    if a.ranks == 0 {
        return Err(format!(
            "cannot compare {} and {}: they have no ranks",
            a.source, b.source
        ));
    }
    if !opts.threshold.is_finite() {
        return Err(format!("threshold {} is not a number", opts.threshold));
    }
    let n = a.ranks;
    let graph_of = |p: &RunProperties| Graph::from_edges(n, p.edges.iter().map(|e| (e[0], e[1])));
    let (ga, gb) = (graph_of(a), graph_of(b));
    let mcs_opts = opts
        .max_steps
        .map_or_else(|| McsOptions::for_nodes(n), |max_steps| McsOptions { max_steps });
    let mcs = maximum_common_edge_subgraph(&ga, &gb, mcs_opts);
    let identity: Vec<u32> = (0..n).collect();
    let (measure, work_a, work_b) = common_measure(a, b);
    let (temporal_a, temporal_b) = (
        temporal(&a.sends, &work_a, measure),
        temporal(&b.sends, &work_b, measure),
    );
    let isomorphic = matches!(mcs.method, McsMethod::Identical | McsMethod::Isomorphism);
    let as_f64 = |v: &[u64]| -> Vec<Option<f64>> { v.iter().map(|&x| Some(x as f64)).collect() };
    let (volume_a, volume_b) = (as_f64(&a.volume), as_f64(&b.volume));
    let mut search = (0u64, 0u64, true);
    // (features, seeds' budget) of a best-isomorphism pairing, for the chance level.
    let mut chance_inputs: Option<(Vec<NodeFeature>, u64)> = None;
    let mut anchor = PairingAnchor {
        rank_a: collective_root(&a.roots),
        rank_b: collective_root(&b.roots),
        ..PairingAnchor::default()
    };
    let (by, pair): (PairedBy, Vec<u32>) = if opts.alignment == Alignment::Rank {
        (PairedBy::RankNumber, identity.clone())
    } else if isomorphic {
        let key = |v: &[Option<f64>]| -> Vec<f64> { v.iter().map(|x| x.unwrap_or(f64::INFINITY)).collect() };
        let counts = |v: &[u64]| -> Vec<f64> { v.iter().map(|&x| x as f64).collect() };
        let volume_sends = [
            (counts(&a.volume), counts(&b.volume)),
            (counts(&a.sends), counts(&b.sends)),
        ];
        let mut all = volume_sends.to_vec();
        all.push((key(&temporal_a), key(&temporal_b)));
        let (la, lb) = joint_labels(&all, n as usize);
        if let Some(m) = same_properties_pairing(&ga, &gb, &la, &lb) {
            (PairedBy::SameProperties, m)
        } else {
            let features: Vec<NodeFeature> = [
                correlation_feature(&temporal_a, &temporal_b),
                correlation_feature(&volume_a, &volume_b),
            ]
            .into_iter()
            .flatten()
            .collect();
            let budget = opts.max_pairing_steps.unwrap_or_else(|| pairing_steps_for(n));
            let seeds: Vec<&[u32]> = vec![&identity, &mcs.mapping];
            let labels = joint_labels(&volume_sends, n as usize);
            let anchored = match (anchor.rank_a, anchor.rank_b) {
                (Some(ra), Some(rb)) => {
                    let best = best_theta_pairing(&ga, &gb, &features, &seeds, &labels, &[(ra, rb)], budget);
                    if best.is_none() {
                        anchor.unused_because = Some(format!(
                            "no isomorphism of the graphs mapping rank {ra} onto rank {rb} was found (the roots play \
                             different roles in the graphs, or the search ran out of steps first)"
                        ));
                    }
                    best
                }
                (ra, rb) => {
                    let missing = |r: Option<u32>, which: &str| {
                        r.is_none()
                            .then(|| format!("the {which} run has no single root of rooted collectives"))
                    };
                    anchor.unused_because = Some(
                        [missing(ra, "first"), missing(rb, "second")]
                            .into_iter()
                            .flatten()
                            .collect::<Vec<_>>()
                            .join("; "),
                    );
                    None
                }
            };
            anchor.used = anchored.is_some();
            let found = anchored.or_else(|| best_theta_pairing(&ga, &gb, &features, &seeds, &labels, &[], budget));
            if found.is_some() && n <= ANCHOR_COUNT_MAX_RANKS {
                let all = count_automorphisms(&ga, ANCHOR_COUNT_STEPS);
                anchor.isomorphisms = all.1.then_some(all.0);
                if let (true, Some(ra)) = (anchor.used, anchor.rank_a) {
                    let fixing = count_automorphisms_fixing(&ga, &[ra], ANCHOR_COUNT_STEPS);
                    anchor.anchored_isomorphisms = fixing.1.then_some(fixing.0);
                }
            }
            match found {
                Some(best) => {
                    search = (best.scored, best.steps, best.exhaustive);
                    if best.exhaustive && n <= CHANCE_MAX_RANKS {
                        chance_inputs = Some((features, budget));
                    }
                    (PairedBy::BestIsomorphism, best.ranks)
                }
                // Isomorphic by the common-subgraph search, so its mapping is one.
                None => (PairedBy::CommonSubgraph, mcs.mapping.clone()),
            }
        }
    } else if opts.alignment == Alignment::Graph && common_edge_list(&ga, &gb, &identity).len() < mcs.common_edges {
        (PairedBy::CommonSubgraph, mcs.mapping.clone())
    } else {
        (PairedBy::RankNumber, identity.clone())
    };
    let by_graph = pair != identity;
    let aligned = |v: &[Option<f64>]| -> Vec<Option<f64>> { pair.iter().map(|&j| v[j as usize]).collect() };

    let spatial = |p: &RunProperties| -> Vec<Option<f64>> { p.spatial.iter().map(|&x| Some(x as f64)).collect() };
    // θ as the paper pairs ranks, before the vectors move into the comparison.
    let theta_by_rank = if by_graph {
        let theta_i = |x: &[Option<f64>], y: &[Option<f64>]| compare_property("", "", x.to_vec(), y.to_vec()).theta;
        communication_correlation(&[
            theta_i(&temporal_a, &temporal_b),
            theta_i(&volume_a, &volume_b),
            theta_i(&spatial(a), &spatial(b)),
        ])
    } else {
        f64::NAN
    };
    let properties = vec![
        compare_property("temporal", measure.temporal_unit(), temporal_a, aligned(&temporal_b)),
        compare_property("volume", "bytes sent", volume_a, aligned(&volume_b)),
        compare_property("spatial", "distinct partners", spatial(a), aligned(&spatial(b))),
    ];
    let thetas: Vec<f64> = properties.iter().map(|p| p.theta).collect();
    let theta = communication_correlation(&thetas);
    let theta_by_rank = if by_graph { theta_by_rank } else { theta };
    let epsilon = mcs.epsilon();
    let epsilon_upper = mcs.epsilon_upper();
    let t = opts.threshold;
    let similar = theta >= t && epsilon >= t;
    let (scored, steps, exhaustive) = search;
    // θ = (score + the parts no pairing changes) / 3, the same parts for shuffled values.
    let theta_chance = chance_inputs.and_then(|(features, budget)| {
        let score: f64 = features
            .iter()
            .map(|(fa, fb)| fa.iter().zip(&pair).map(|(x, &j)| x * fb[j as usize]).sum::<f64>())
            .sum();
        let fixed = 3.0 * theta - score;
        let seeds: Vec<&[u32]> = vec![&mcs.mapping];
        let anchors: Vec<(u32, u32)> = match (anchor.used, anchor.rank_a, anchor.rank_b) {
            (true, Some(ra), Some(rb)) => vec![(ra, rb)],
            _ => Vec::new(),
        };
        chance_score(&ga, &gb, &features, &seeds, &anchors, budget).map(|s| ((s + fixed) / 3.0).clamp(-1.0, 1.0))
    });
    let classification_certain =
        (mcs.exact || similar || theta < t || epsilon_upper < t) && (exhaustive || similar || epsilon_upper < t);
    Ok(Comparison {
        first: 0,
        second: 1,
        a: a.source.clone(),
        b: b.source.clone(),
        ranks: n,
        theta,
        theta_temporal: thetas[0],
        theta_volume: thetas[1],
        theta_spatial: thetas[2],
        epsilon,
        epsilon_exact: mcs.exact,
        epsilon_upper,
        similar,
        classification_certain,
        threshold: t,
        work_measure: measure,
        alignment: if by_graph { "graph" } else { "rank" }.into(),
        pairing: Pairing {
            by,
            ranks: pair,
            theta_by_rank,
            isomorphisms_scored: scored,
            steps,
            exhaustive,
            theta_chance,
            anchor: if by == PairedBy::BestIsomorphism {
                anchor
            } else {
                PairingAnchor {
                    used: false,
                    unused_because: None,
                    isomorphisms: None,
                    anchored_isomorphisms: None,
                    ..anchor
                }
            },
        },
        properties,
        graph: GraphComparison {
            edges_a: a.edges.clone(),
            edges_b: b.edges.clone(),
            common_edges: common_edge_list(&ga, &gb, &mcs.mapping)
                .into_iter()
                .map(|(u, v)| [u, v])
                .collect(),
            mapping: mcs.mapping,
            common: mcs.common_edges,
            upper_bound: mcs.upper_bound,
            method: mcs.method,
            steps: mcs.steps,
        },
    })
}

/// Compare two traces (see [`compare_properties`]).
pub fn compare(a: &Trace, b: &Trace, opts: &CompareOptions) -> Result<Comparison, String> {
    compare_properties(&run_properties(a, opts.filter), &run_properties(b, opts.filter), opts)
}

/// Compare every pair of `runs` (at least two) and build the similarity matrix.
pub fn compare_runs(runs: &[RunProperties], opts: &CompareOptions) -> Result<SimilarityMatrix, String> {
    if runs.len() < 2 {
        return Err(format!("need at least two runs to compare, got {}", runs.len()));
    }
    if let Some(odd) = runs.iter().find(|r| r.ranks != runs[0].ranks) {
        let counts: Vec<String> = runs
            .iter()
            .map(|r| format!("{} ({} ranks)", r.source, r.ranks))
            .collect();
        return Err(format!(
            "cannot compare {} with {}: runs must have the same number of ranks; got {}",
            runs[0].source,
            odd.source,
            counts.join(", ")
        ));
    }
    let k = runs.len();
    let itself = MatrixCell {
        theta: 1.0,
        epsilon: 1.0,
        epsilon_exact: true,
        similar: true,
    };
    let mut matrix = vec![vec![itself; k]; k];
    let mut pairs = Vec::with_capacity(k * (k - 1) / 2);
    for i in 0..k {
        for j in i + 1..k {
            let mut c = compare_properties(&runs[i], &runs[j], opts)?;
            (c.first, c.second) = (i, j);
            let cell = MatrixCell {
                theta: c.theta,
                epsilon: c.epsilon,
                epsilon_exact: c.epsilon_exact,
                similar: c.similar,
            };
            matrix[i][j] = cell;
            matrix[j][i] = cell;
            pairs.push(c);
        }
    }
    Ok(SimilarityMatrix {
        runs: runs.iter().map(|r| r.source.clone()).collect(),
        threshold: opts.threshold,
        pairs,
        matrix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_model::NO_CALLPATH;

    /// A run with these edges and nothing else (properties from the edges alone).
    fn run_of(source: &str, ranks: u32, edges: Vec<[u32; 2]>) -> RunProperties {
        let mut spatial = vec![0u32; ranks as usize];
        for &[a, b] in &edges {
            spatial[a as usize] += 1;
            spatial[b as usize] += 1;
        }
        RunProperties {
            source: source.into(),
            ranks,
            sends: spatial.iter().map(|&d| u64::from(d)).collect(),
            volume: spatial.iter().map(|&d| 100 * u64::from(d)).collect(),
            spatial,
            work: Vec::new(),
            edges,
            filtered_pairs: 0,
            roots: Vec::new(),
        }
    }

    #[test]
    fn highlighted_common_edges_are_the_common_subgraph_in_both_graphs() {
        // A 3x3 grid (12 edges) against a 3x3 torus (18 edges) numbered in another order: the
        // grid fits inside the torus, so |E_S| = 12 and ε = 24/30 exactly.
        let grid: Vec<[u32; 2]> = (0..9u32)
            .flat_map(|r| {
                let right = (r % 3 < 2).then_some([r, r + 1]);
                let down = (r < 6).then_some([r, r + 3]);
                right.into_iter().chain(down)
            })
            .collect();
        let perm = [4u32, 7, 1, 8, 0, 5, 2, 6, 3];
        let mut torus: Vec<[u32; 2]> = (0..9u32)
            .flat_map(|r| {
                let (x, y) = (r % 3, r / 3);
                [[r, y * 3 + (x + 1) % 3], [r, ((y + 1) % 3) * 3 + x]]
            })
            .map(|[a, b]| {
                let (a, b) = (perm[a as usize], perm[b as usize]);
                [a.min(b), a.max(b)]
            })
            .collect();
        torus.sort_unstable();
        let (a, b) = (run_of("grid", 9, grid.clone()), run_of("torus", 9, torus.clone()));
        for (first, second) in [(&a, &b), (&b, &a)] {
            let c = compare_properties(first, second, &CompareOptions::default()).unwrap();
            let g = &c.graph;
            assert!(c.epsilon_exact);
            assert_eq!(g.common, 12);
            assert!((c.epsilon - 0.8).abs() < 1e-12);
            assert_eq!(g.common_edges.len(), g.common, "one highlighted edge per common edge");
            let mut images = Vec::new();
            for &[u, v] in &g.common_edges {
                assert!(
                    first.edges.contains(&[u, v]),
                    "{u}-{v} is not an edge of {}",
                    first.source
                );
                let (x, y) = (g.mapping[u as usize], g.mapping[v as usize]);
                let image = [x.min(y), x.max(y)];
                assert!(
                    second.edges.contains(&image),
                    "{u}-{v} -> {x}-{y} is not an edge of {}",
                    second.source
                );
                images.push(image);
            }
            images.sort_unstable();
            images.dedup();
            assert_eq!(
                images.len(),
                g.common,
                "the correspondence is one-to-one on the common edges"
            );
            let mut mapped = g.mapping.clone();
            mapped.sort_unstable();
            assert_eq!(
                mapped,
                (0..9).collect::<Vec<u32>>(),
                "the correspondence is a bijection of the ranks"
            );
        }
    }

    #[test]
    fn compute_time_is_the_gaps_between_calls_of_all_threads() {
        let mut t = Trace::new("test", "t", 1);
        t.push_call(0, "MPI_Init", 0, 10, NO_CALLPATH, 0);
        t.push_call(0, "MPI_Send", 50, 60, NO_CALLPATH, 0);
        // A second thread's call overlapping the first gap.
        t.push_call(0, "MPI_Recv", 20, 30, NO_CALLPATH, 1);
        t.push_call(0, "MPI_Finalize", 100, 120, NO_CALLPATH, 0);
        assert_eq!(compute_time(&t), vec![(20 - 10 + 50 - 30 + 100 - 60) as f64]);
    }

    #[test]
    fn counters_accumulated_or_per_interval() {
        let mut t = Trace::new("test", "t", 2);
        let id = t.metrics.intern("papi_fp_ops");
        t.ranks[0].metrics.push(tracelogic_model::MetricSamples {
            metric: id,
            time: vec![1, 2, 3],
            value: vec![5.0, 7.0, 12.0],
        });
        assert_eq!(counter_work(&t, "PAPI_FP_OPS"), None, "rank 1 has no sample");
        t.ranks[1].metrics.push(tracelogic_model::MetricSamples {
            metric: id,
            time: vec![1, 2, 3],
            value: vec![4.0, 1.0, 3.0],
        });
        assert_eq!(counter_work(&t, "PAPI_FP_OPS"), Some(vec![12.0, 8.0]));
        assert_eq!(counter_work(&t, "PAPI_TOT_INS"), None);
    }
}
