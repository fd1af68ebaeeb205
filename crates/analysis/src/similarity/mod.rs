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
//! Choices the paper leaves open (details and measurements in `docs/similarity.md`):
//! - **Work** is a hardware counter when both traces carry it for every rank (`PAPI_FP_OPS`,
//!   else `PAPI_TOT_INS`), else the compute time between MPI calls; [`Comparison::work_measure`]
//!   names the one used. A rank that sends without measurable work has an infinite rate
//!   (`null` in the observed vector) and ranks first.
//! - **No conventions**: a property that carries no rank-order evidence in one run or both is
//!   left out of θ ([`Comparison::left_out`] says which and why), never counted as 0 or 1:
//!   constant on every rank; an order that changes from part to part of the run (Friedman's
//!   test over [`RunParts`], [`rank_order_evidence`]); temporal measured in compute time, which
//!   depends on the machine and its load (the paper counts operations). θ is the mean of the
//!   `θ_i` left; when none is left θ is undefined (not a number, `null` in JSON) and the verdict
//!   rests on ε alone ([`Comparison::verdict_on`]).
//! - **Rank correspondence for θ**: θ compares rank `j` of one run with "its partner" in the
//!   other. The paper pairs equal rank numbers, which makes θ depend on how each run placed its
//!   processes. With the default alignment, when the two graphs are isomorphic the partner is
//!   the rank playing the same role in the graph: an isomorphism keeping every property's rank
//!   when there is one (one program under two numberings: θ = 1), else the isomorphism with the
//!   largest θ on the properties left in ([`tracelogic_graph::iso::best_isomorphism`] over all
//!   of them, within a step budget). When each run
//!   names a [`collective_root`] (the root of its broadcasts and reductions), only isomorphisms
//!   pairing the two roots are scored, which leaves chance agreement fewer pairings to pick
//!   from ([`PairingAnchor`]). Every renumbering of either run has the same set of isomorphisms
//!   (and roots) renamed, so θ and the verdict do not depend on the placement ([`Pairing`] says
//!   how the ranks were paired and whether the search was exhaustive). Graphs that are not
//!   isomorphic keep rank numbers ([`Alignment`]).
//! - Only point-to-point messages count, as in the paper; a receive stands for its send when
//!   the sender's record is missing. An optional filter drops low-volume pairs from the graph
//!   with the rule of `tracelogic topology`.

mod epsilon;
mod pairing;
mod properties;
mod theta;
mod verdict;

pub use epsilon::GraphComparison;
pub use pairing::*;
pub use properties::*;
pub use theta::*;

use crate::topology::Threshold;
use serde::{Deserialize, Serialize};
use tracelogic_graph::iso::{count_automorphisms, count_automorphisms_fixing, NodeFeature};
use tracelogic_graph::mcs::{common_edge_list, maximum_common_edge_subgraph, McsMethod, McsOptions};
use tracelogic_graph::Graph;
use tracelogic_model::Trace;

/// The paper's similarity threshold (§3.2.3, Figure 10).
pub const DEFAULT_THRESHOLD: f64 = 0.6;
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
    /// Communication correlation coefficient: the mean of the three below that are defined; not
    /// a number (`null` in JSON) when every property is left out ([`Comparison::left_out`]).
    #[serde(with = "theta::nan_as_null")]
    pub theta: f64,
    /// `θ` of the temporal property (not a number when left out).
    #[serde(with = "theta::nan_as_null")]
    pub theta_temporal: f64,
    /// `θ` of the volume property (not a number when left out).
    #[serde(with = "theta::nan_as_null")]
    pub theta_volume: f64,
    /// `θ` of the spatial property (not a number when left out).
    #[serde(with = "theta::nan_as_null")]
    pub theta_spatial: f64,
    /// Properties left out of θ because one run or both carry no rank-order evidence in them
    /// (constant, or an order that changes from part to part of the run), and why.
    #[serde(default)]
    pub left_out: Vec<LeftOut>,
    /// What the verdict rests on: θ and ε, or ε alone when every property is left out.
    #[serde(default)]
    pub verdict_on: VerdictBasis,
    /// Graph similarity of the best correspondence found (exact when `epsilon_exact`).
    pub epsilon: f64,
    /// True when `epsilon` is proven maximal; otherwise it is a lower bound.
    pub epsilon_exact: bool,
    /// Proven upper bound on `ε` (equal to `epsilon` when exact).
    pub epsilon_upper: f64,
    /// `θ ≥ threshold` and `ε ≥ threshold`; when θ is undefined, `ε = 1` ([`VerdictBasis`]).
    pub similar: bool,
    /// False when `similar` could change with the exact `ε` (it lies between `epsilon` and
    /// `epsilon_upper`, on both sides of the threshold), or when `θ` is below the threshold
    /// and the best-pairing search ran out of steps (`pairing.exhaustive` false), or when the
    /// verdict rests on ε alone and both graphs are complete ([`Comparison::graphs_complete`])
    /// or empty ([`Comparison::graphs_empty`]), or when a similar verdict's θ is no larger than chance ([`Comparison::theta_at_chance`]).
    pub classification_certain: bool,
    /// The verdict in words, with the reasons it is uncertain: what every shell shows.
    #[serde(default)]
    pub verdict: String,
    /// Why the verdict is not certain, one reason each (empty when `classification_certain`).
    #[serde(default)]
    pub uncertain_because: Vec<String>,
    /// Properties on which one run gives every rank the same value (within its own spread) while
    /// the other orders its ranks beyond its spread (and the graphs are not both regular). The
    /// constant run carries no rank order, so the property is left out of θ (Kendall's τ and
    /// Spearman's ρ are 0/0 there; counting it 0, as Somers' d would, lets a convention decide
    /// the verdict) and a *similar* verdict is flagged uncertain.
    #[serde(default)]
    pub contrasted: Vec<String>,
    /// Both graphs are complete (every rank exchanges messages with every other): ε = 1 for any
    /// two such runs, so with θ undefined nothing tells their patterns apart and the verdict on ε
    /// alone is not certain.
    #[serde(default)]
    pub graphs_complete: bool,
    /// Neither run sends a point-to-point message (collectives only, as Elk's k-point broadcasts
    /// or NAS EP and FT): both graphs are empty and every property is 0 on every rank, so ε = 1
    /// and θ is undefined for any two such runs, and the verdict on ε alone is not certain.
    #[serde(default)]
    pub graphs_empty: bool,
    /// With [`Comparison::graphs_empty`] and collectives in either run: how alike the runs'
    /// sequences of collective operations are, `1 − JSD` (base 2) of their consecutive pairs of
    /// collectives counted over the ranks ([`RunProperties::collective_mix`]; 1: the same shares;
    /// 0: no pair in common). The verdict then rests on it
    /// ([`VerdictBasis::CollectiveMix`]). `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective_mix_similarity: Option<f64>,
    /// How alike the runs' sequences of communication operations are: `1 − JSD` (base 2) of
    /// their consecutive pairs of operations counted over the ranks
    /// ([`RunProperties::operation_mix`]; 1: the same shares, 0: no pair in common). A similar
    /// verdict also needs it to reach the threshold: PACPM's properties count how much and to
    /// whom, not how, and two programs with one graph and one order of ranks may exchange their
    /// bytes by wavefront sends (NAS LU) or by non-blocking halo exchanges and reductions
    /// (NAS CG, Meep). `None` when either run has no communication operation (or its
    /// properties were stored without the mix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_mix_similarity: Option<f64>,
    /// The operation mix alone decided a verdict of not similar that θ and ε (or the rule of
    /// [`Comparison::verdict_on`]) would have called similar.
    #[serde(default)]
    pub operation_mix_differs: bool,
    /// Every pair of ranks communicates in both runs (no filter asked for), so the graphs,
    /// ε and the spatial property were taken after `tracelogic topology`'s first cut (the
    /// widest gap in pair volumes), which dropped pairs in at least one run
    /// ([`RunProperties::auto_graph`]): light pairs linking everyone say nothing of a pattern.
    #[serde(default)]
    pub complete_graphs_filtered: bool,
    /// θ comes from the best-isomorphism pairing and is no larger than `pairing.theta_chance`,
    /// what the same maximisation reaches with values unrelated to the ranks' roles: the freedom
    /// of pairing, not the runs, made θ, so θ is no evidence and a *similar* verdict is not
    /// certain (a verdict of not similar stands: the freedom can only raise θ). Always so on two
    /// complete graphs without an anchor (every pairing is an isomorphism, so the best one pairs
    /// the values by size whatever the roles).
    #[serde(default)]
    pub theta_at_chance: bool,
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

/// What a verdict rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictBasis {
    /// θ and ε both reach the threshold (PACPM §3.2.3).
    #[default]
    ThetaAndEpsilon,
    /// θ is undefined (every property left out): similar only when the graphs are isomorphic
    /// (ε = 1). Why not ε ≥ threshold: the threshold bounds a point of the (θ, ε) plane, and
    /// without θ nothing per rank says two different graphs carry one pattern; in PACPM's
    /// Tables 3 and 4 every pair with ε = 1 is similar and every pair with ε < 1 (up to 0.737)
    /// is not, whatever its θ, and unrelated real runs share 0.63–0.91 of their edges (NAS SP
    /// and CG on 16 ranks, LU and MG on 8).
    EpsilonAlone,
    /// Neither run sends a point-to-point message, so both graphs are empty (ε = 1) and θ is
    /// undefined; PACPM measures nothing else, so the runs are compared by their mix of
    /// collective operations: similar when [`Comparison::collective_mix_similarity`] reaches the
    /// threshold. Without it any two collectives-only programs (Elk's k-point broadcasts,
    /// NEURON's spike exchange by `MPI_Allgather`) would be similar.
    CollectiveMix,
}

/// `1 − JSD` (base 2) of two runs' consecutive pairs of collective operations
/// ([`Comparison::collective_mix_similarity`]); `None` when neither run has any. O(pairs).
fn mix_similarity(
    a: &std::collections::BTreeMap<String, u64>,
    b: &std::collections::BTreeMap<String, u64>,
) -> Option<f64> {
    let (ta, tb) = (a.values().sum::<u64>() as f64, b.values().sum::<u64>() as f64);
    if ta == 0.0 && tb == 0.0 {
        return None;
    }
    if ta == 0.0 || tb == 0.0 {
        return Some(0.0);
    }
    let ops: std::collections::BTreeSet<_> = a.keys().chain(b.keys()).collect();
    let mut jsd = 0.0;
    for op in ops {
        let p = a.get(op).copied().unwrap_or(0) as f64 / ta;
        let q = b.get(op).copied().unwrap_or(0) as f64 / tb;
        let m = (p + q) / 2.0;
        for x in [p, q] {
            if x > 0.0 {
                jsd += 0.5 * x * (x / m).log2();
            }
        }
    }
    Some((1.0 - jsd).clamp(0.0, 1.0))
}

/// `θ`, `ε` and the verdict of one pair, as a cell of [`SimilarityMatrix::matrix`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MatrixCell {
    /// Communication correlation coefficient (not a number, `null`, when undefined).
    #[serde(with = "theta::nan_as_null")]
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

/// Sends each rank needs per part of its run ([`RunParts`]) for the test of rank-order
/// evidence: a part shorter than a step of the program (a few sends) says nothing about its order.
pub const MIN_SENDS_PER_PART: u64 = 4;

/// What one property's per-rank values in the two runs say about their rank orders.
#[derive(Debug, Clone, PartialEq)]
enum Evidence {
    /// Both runs order their ranks: `θ_i` is Pearson's coefficient of the ranked vectors.
    Both,
    /// One run gives every rank the same value (within its own spread) while the other orders
    /// its ranks beyond its spread, and the graphs give ranks roles (not both regular): none of
    /// the property is left out of θ and a similar verdict is uncertain ([`Comparison::contrasted`]). Why.
    Contrasted(String),
    /// Left out of θ: one run or both carry no rank-order evidence. Why.
    LeftOut(String),
}

/// Whether every rank has the same value.
fn constant(v: &[Option<f64>]) -> bool {
    v.windows(2).all(|w| w[0] == w[1])
}

/// One run's property ready to compare: observed values, the pairs of ranks the run cannot tell
/// apart ([`spread_ties`]) and the ranks under those ties ([`rank_with_ties`]).
struct Ranked {
    observed: Vec<Option<f64>>,
    parts: Option<Vec<Vec<f64>>>,
    ranked: Vec<f64>,
}

impl Ranked {
    fn new(observed: Vec<Option<f64>>, parts: Option<Vec<Vec<f64>>>) -> Ranked {
        let key: Vec<f64> = observed.iter().map(|x| x.unwrap_or(f64::INFINITY)).collect();
        let ties = spread_ties(parts.as_deref());
        let ranked = rank_with_ties(&key, ties.as_deref());
        Ranked {
            observed,
            parts,
            ranked,
        }
    }

    /// Rank-order evidence ([`rank_order_evidence`]), and not every pair of ranks tied within
    /// the run's spread.
    fn evidence(&self) -> Result<(), String> {
        rank_order_evidence(&self.observed, self.parts.as_deref())?;
        if self.ranked.windows(2).all(|w| w[0] == w[1]) {
            return Err(format!(
                "every pair of ranks differs by less than the run's own spread (their difference changes from part \
                 to part of the run by more than it amounts to, effect size < {TIE_EFFECT_SIZE})"
            ));
        }
        Ok(())
    }

    /// No rank stands apart: the same value everywhere, or every pair tied.
    fn flat(&self) -> bool {
        constant(&self.observed) || self.ranked.windows(2).all(|w| w[0] == w[1])
    }
}

/// What a property says about the two runs' rank orders ([`Evidence`]). `regular`: both runs'
/// graphs give every rank the same number of partners, so the graphs give no rank a role of its
/// own: an order among such ranks (the boundary cells of SP's multi-partition) against a run
/// where every rank has the same value is left out.
fn evidence(a: &Ranked, b: &Ranked, regular: bool) -> Evidence {
    let (ea, eb) = (a.evidence(), b.evidence());
    let opposed = |which: &str, x: &str| {
        Evidence::Contrasted(format!(
            "{which} run: {x}, while the other run orders its ranks beyond its spread: left out of θ (no order \
             to compare with), and a similar verdict is uncertain"
        ))
    };
    match (ea, eb) {
        (Ok(()), Ok(())) => Evidence::Both,
        (Err(x), Ok(())) if a.flat() && !regular => opposed("first", &x),
        (Ok(()), Err(y)) if b.flat() && !regular => opposed("second", &y),
        (Err(x), Ok(())) => Evidence::LeftOut(format!("first run: {x}")),
        (Ok(()), Err(y)) => Evidence::LeftOut(format!("second run: {y}")),
        (Err(x), Err(y)) if x == y => Evidence::LeftOut(format!("both runs: {x}")),
        (Err(x), Err(y)) => Evidence::LeftOut(format!("first run: {x}; second run: {y}")),
    }
}

/// One property compared under `ev`, the second run's ranks paired by `pair`.
fn compare_evidence(property: (&str, &str), a: &Ranked, b: &Ranked, pair: &[u32], ev: &Evidence) -> PropertyComparison {
    let observed_b = pair.iter().map(|&j| b.observed[j as usize]).collect();
    let ranked_b = pair.iter().map(|&j| b.ranked[j as usize]).collect();
    compare_property(
        property,
        (a.observed.clone(), observed_b),
        (a.ranked.clone(), ranked_b),
        ev.left_out(),
        matches!(ev, Evidence::Contrasted(_)),
    )
}

impl Evidence {
    /// The reason a property is not compared as both runs order it (left out, or contrasted).
    fn left_out(&self) -> Option<String> {
        match self {
            Evidence::LeftOut(why) | Evidence::Contrasted(why) => Some(why.clone()),
            Evidence::Both => None,
        }
    }
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
    // Two complete graphs are isomorphic whatever the programs: compare them as `topology`
    // would filter them, where one of them loses a pair to the widest volume gap.
    if opts.filter.is_none()
        && a.graph_complete()
        && b.graph_complete()
        && (a.auto_graph.is_some() || b.auto_graph.is_some())
    {
        let filtered = |p: &RunProperties| p.auto_graph.as_ref().map_or_else(|| p.clone(), |g| p.with_graph(g));
        let mut c = compare_properties(&filtered(a), &filtered(b), opts)?;
        c.complete_graphs_filtered = true;
        (c.verdict, c.uncertain_because) = verdict::verdict_words(&c);
        return Ok(c);
    }
    let n = a.ranks;
    let graph_of = |p: &RunProperties| Graph::from_edges(n, p.edges.iter().map(|e| (e[0], e[1])));
    let (ga, gb) = (graph_of(a), graph_of(b));
    let mcs_opts = opts
        .max_steps
        .map_or_else(|| McsOptions::for_nodes(n), |max_steps| McsOptions { max_steps });
    let mcs = maximum_common_edge_subgraph(&ga, &gb, mcs_opts);
    let identity: Vec<u32> = (0..n).collect();
    let isomorphic = matches!(mcs.method, McsMethod::Identical | McsMethod::Isomorphism);
    // The graphs the pairing reads roles from: the runs' own, or — when those are not
    // isomorphic, no filter was asked for and `topology`'s first cut drops light pairs in either
    // run — the cut graphs when those are (set-up messages between ranks that are no neighbours
    // differ from run to run: DOLFINx's two recordings of one input, whose partitioner swapped
    // two ranks, paired by number). ε stays on the runs' own graphs.
    let cut_graphs = (!isomorphic
        && opts.filter.is_none()
        && opts.alignment != Alignment::Rank
        && (a.auto_graph.is_some() || b.auto_graph.is_some()))
    .then(|| {
        let cut = |p: &RunProperties| {
            p.auto_graph.as_ref().map_or_else(
                || graph_of(p),
                |g| Graph::from_edges(n, g.edges.iter().map(|e| (e[0], e[1]))),
            )
        };
        let (ca, cb) = (cut(a), cut(b));
        let m = maximum_common_edge_subgraph(&ca, &cb, mcs_opts);
        matches!(m.method, McsMethod::Identical | McsMethod::Isomorphism).then_some((ca, cb, m.mapping))
    })
    .flatten();
    let paired_on_cut_graphs = cut_graphs.is_some();
    // Borrowed: the runs' own graphs are not copied when no cut graphs are used.
    let (pa, pb, iso_mapping): (&Graph, &Graph, &[u32]) = match &cut_graphs {
        Some((ca, cb, m)) => (ca, cb, m),
        None => (&ga, &gb, &mcs.mapping),
    };
    let (measure, work_a, work_b) = common_measure(a, b);
    let (temporal_a, temporal_b) = (
        temporal(&a.sends, &work_a, measure),
        temporal(&b.sends, &work_b, measure),
    );
    let as_f64 = |v: &[u64]| -> Vec<Option<f64>> { v.iter().map(|&x| Some(x as f64)).collect() };
    let (volume_a, volume_b) = (as_f64(&a.volume), as_f64(&b.volume));
    let spatial = |p: &RunProperties| -> Vec<Option<f64>> { p.spatial.iter().map(|&x| Some(x as f64)).collect() };
    let (spatial_a, spatial_b) = (spatial(a), spatial(b));
    // Which properties carry rank-order evidence in both runs (the others are left out of θ).
    let temporal_parts = |p: &RunProperties| {
        p.parts.as_ref().map(|parts| {
            parts
                .sends
                .iter()
                .zip(&parts.work)
                .map(|(s, w)| temporal_of_parts(s, w))
                .collect::<Vec<Vec<f64>>>()
        })
    };
    let volume_parts = |p: &RunProperties| {
        p.parts.as_ref().map(|parts| {
            parts
                .volume
                .iter()
                .map(|v| v.iter().map(|&x| x as f64).collect())
                .collect::<Vec<Vec<f64>>>()
        })
    };
    // Runs too short for parts of a few sends each are tested for constancy only.
    let testable = |p: &RunProperties| p.sends.iter().all(|&s| s >= MIN_SENDS_PER_PART * PARTS as u64);
    let temporal_parts = |p: &RunProperties| temporal_parts(p).filter(|_| testable(p));
    let volume_parts = |p: &RunProperties| volume_parts(p).filter(|_| testable(p));
    let regular = constant(&spatial_a) && constant(&spatial_b);
    let (rt_a, rt_b) = (
        Ranked::new(temporal_a.clone(), temporal_parts(a)),
        Ranked::new(temporal_b.clone(), temporal_parts(b)),
    );
    let (rv_a, rv_b) = (
        Ranked::new(volume_a.clone(), volume_parts(a)),
        Ranked::new(volume_b.clone(), volume_parts(b)),
    );
    let (rs_a, rs_b) = (
        Ranked::new(spatial_a.clone(), None),
        Ranked::new(spatial_b.clone(), None),
    );
    let ev_temporal = if measure == WorkMeasure::ComputeTime {
        Evidence::LeftOut(format!(
            "work is compute time in {} (no hardware counter in both runs): time depends on the machine, its load and \
             where each process ran, not on the program alone (PACPM Definition 1 counts operations)",
            if a.work.iter().any(|w| w.measure != WorkMeasure::ComputeTime)
                || b.work.iter().any(|w| w.measure != WorkMeasure::ComputeTime)
            {
                "one run"
            } else {
                "both runs"
            }
        ))
    } else {
        evidence(&rt_a, &rt_b, regular)
    };
    let ev_volume = evidence(&rv_a, &rv_b, regular);
    let ev_spatial = evidence(&rs_a, &rs_b, regular);
    // Only properties both runs order steer the pairing (a contrasted one is left out).
    let (steer_temporal, steer_volume) = (ev_temporal == Evidence::Both, ev_volume == Evidence::Both);
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
    } else if isomorphic || paired_on_cut_graphs {
        let key = |v: &[Option<f64>]| -> Vec<f64> { v.iter().map(|x| x.unwrap_or(f64::INFINITY)).collect() };
        let counts = |v: &[u64]| -> Vec<f64> { v.iter().map(|&x| x as f64).collect() };
        let volume_sends = [
            (counts(&a.volume), counts(&b.volume)),
            (counts(&a.sends), counts(&b.sends)),
        ];
        let mut all = volume_sends.to_vec();
        all.push((key(&temporal_a), key(&temporal_b)));
        let (la, lb) = joint_labels(&all, n as usize);
        // Spatial is the same under every isomorphism; properties left out do not steer.
        let features: Vec<NodeFeature> = [
            steer_temporal.then(|| correlation_feature(&rt_a.ranked, &rt_b.ranked)),
            steer_volume.then(|| correlation_feature(&rv_a.ranked, &rv_b.ranked)),
        ]
        .into_iter()
        .flatten()
        .flatten()
        .collect();
        let budget = opts.max_pairing_steps.unwrap_or_else(|| pairing_steps_for(n));
        if let Some(m) = same_properties_pairing(pa, pb, &la, &lb) {
            // Keeping every rank's place may be chance too where the graphs allow any pairing
            // (complete graphs): what the best pairing reaches with shuffled values says.
            if n <= CHANCE_MAX_RANKS && !features.is_empty() {
                chance_inputs = Some((features, budget));
            }
            (PairedBy::SameProperties, m)
        } else {
            let seeds: Vec<&[u32]> = vec![&identity, &iso_mapping];
            let labels = joint_labels(&volume_sends, n as usize);
            let anchored = match (anchor.rank_a, anchor.rank_b) {
                (Some(ra), Some(rb)) => {
                    let best = best_theta_pairing(pa, pb, &features, &seeds, &labels, &[(ra, rb)], budget);
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
            let found = anchored.or_else(|| best_theta_pairing(pa, pb, &features, &seeds, &labels, &[], budget));
            if found.is_some() && n <= ANCHOR_COUNT_MAX_RANKS {
                let all = count_automorphisms(pa, ANCHOR_COUNT_STEPS);
                anchor.isomorphisms = all.1.then_some(all.0);
                if let (true, Some(ra)) = (anchor.used, anchor.rank_a) {
                    let fixing = count_automorphisms_fixing(pa, &[ra], ANCHOR_COUNT_STEPS);
                    anchor.anchored_isomorphisms = fixing.1.then_some(fixing.0);
                }
            }
            match found {
                Some(best) => {
                    search = (best.scored, best.steps, best.exhaustive);
                    if best.exhaustive && n <= CHANCE_MAX_RANKS && !features.is_empty() {
                        chance_inputs = Some((features, budget));
                    }
                    (PairedBy::BestIsomorphism, best.ranks)
                }
                // Isomorphic by the common-subgraph search, so its mapping is one.
                None => (PairedBy::CommonSubgraph, iso_mapping.to_vec()),
            }
        }
    } else if opts.alignment == Alignment::Graph && common_edge_list(&ga, &gb, &identity).len() < mcs.common_edges {
        (PairedBy::CommonSubgraph, mcs.mapping.clone())
    } else {
        (PairedBy::RankNumber, identity.clone())
    };
    let by_graph = pair != identity;
    // θ as the paper pairs ranks.
    let theta_by_rank = if by_graph {
        communication_correlation(&[
            compare_evidence(("", ""), &rt_a, &rt_b, &identity, &ev_temporal).theta,
            compare_evidence(("", ""), &rv_a, &rv_b, &identity, &ev_volume).theta,
            compare_evidence(("", ""), &rs_a, &rs_b, &identity, &ev_spatial).theta,
        ])
    } else {
        f64::NAN
    };
    let left_out: Vec<LeftOut> = [
        ("temporal", &ev_temporal),
        ("volume", &ev_volume),
        ("spatial", &ev_spatial),
    ]
    .into_iter()
    .filter_map(|(property, ev)| match ev {
        Evidence::LeftOut(reason) | Evidence::Contrasted(reason) => Some(LeftOut {
            property: property.into(),
            reason: reason.clone(),
        }),
        _ => None,
    })
    .collect();
    let contrasted: Vec<String> = [
        ("temporal", &ev_temporal),
        ("volume", &ev_volume),
        ("spatial", &ev_spatial),
    ]
    .into_iter()
    .filter(|(_, ev)| matches!(ev, Evidence::Contrasted(_)))
    .map(|(property, _)| property.to_owned())
    .collect();
    let properties = vec![
        compare_evidence(("temporal", measure.temporal_unit()), &rt_a, &rt_b, &pair, &ev_temporal),
        compare_evidence(("volume", "bytes sent"), &rv_a, &rv_b, &pair, &ev_volume),
        compare_evidence(("spatial", "distinct partners"), &rs_a, &rs_b, &pair, &ev_spatial),
    ];
    let thetas: Vec<f64> = properties.iter().map(|p| p.theta).collect();
    let theta = communication_correlation(&thetas);
    let kept = thetas.iter().filter(|t| t.is_finite()).count();
    let theta_by_rank = if by_graph { theta_by_rank } else { theta };
    let epsilon = mcs.epsilon();
    let epsilon_upper = mcs.epsilon_upper();
    let t = opts.threshold;
    // No point-to-point message in either run: two empty graphs, equal whatever the programs.
    let graphs_empty = n >= 2 && a.edges.is_empty() && b.edges.is_empty();
    let collective_mix_similarity = if graphs_empty && !theta.is_finite() {
        mix_similarity(&a.collective_mix, &b.collective_mix)
    } else {
        None
    };
    let verdict_on = if theta.is_finite() {
        VerdictBasis::ThetaAndEpsilon
    } else if collective_mix_similarity.is_some() {
        VerdictBasis::CollectiveMix
    } else {
        VerdictBasis::EpsilonAlone
    };
    // With θ undefined, ε alone must show the same graph up to renumbering (see VerdictBasis);
    // two runs of collectives only must also agree in their mix of collectives.
    let pacpm_similar = if theta.is_finite() {
        theta >= t && epsilon >= t
    } else {
        epsilon >= 1.0 && collective_mix_similarity.is_none_or(|m| m >= t)
    };
    // How the runs communicate must agree too ([`Comparison::operation_mix_similarity`]).
    // A run without any (or properties stored before the mix was recorded) has no say.
    let operation_mix_similarity = if a.operation_mix.is_empty() || b.operation_mix.is_empty() {
        None
    } else {
        mix_similarity(&a.operation_mix, &b.operation_mix)
    };
    let operation_mix_differs = pacpm_similar && operation_mix_similarity.is_some_and(|m| m < t);
    let similar = pacpm_similar && !operation_mix_differs;
    let (scored, steps, exhaustive) = search;
    // θ = (score + the θ_i no pairing changes) / kept, the same θ_i for shuffled values.
    let theta_chance = chance_inputs.and_then(|(features, budget)| {
        let score: f64 = features
            .iter()
            .map(|(fa, fb)| fa.iter().zip(&pair).map(|(x, &j)| x * fb[j as usize]).sum::<f64>())
            .sum();
        let fixed = kept as f64 * theta - score;
        let seeds: Vec<&[u32]> = vec![&iso_mapping];
        let anchors: Vec<(u32, u32)> = match (anchor.used, anchor.rank_a, anchor.rank_b) {
            (true, Some(ra), Some(rb)) => vec![(ra, rb)],
            _ => Vec::new(),
        };
        chance_score(pa, pb, &features, &seeds, &anchors, budget).map(|s| ((s + fixed) / kept as f64).clamp(-1.0, 1.0))
    });
    // Every pair of ranks communicates in both runs: any two such runs have ε = 1.
    let pairs = u64::from(n) * u64::from(n - 1) / 2;
    let graphs_complete = n >= 2 && a.edges.len() as u64 == pairs && b.edges.len() as u64 == pairs;
    let bounds_certain = if theta.is_finite() {
        (mcs.exact || pacpm_similar || theta < t || epsilon_upper < t)
            && (exhaustive || pacpm_similar || epsilon_upper < t)
    } else {
        (mcs.exact || pacpm_similar || epsilon_upper < 1.0)
            && !graphs_complete
            && (!graphs_empty || collective_mix_similarity.is_some())
    };
    // The maximum over pairings reaches θ with shuffled values too (1e-12: the same maximum
    // summed in another order).
    let theta_at_chance = theta.is_finite() && theta_chance.is_some_and(|chance| theta <= chance + 1e-12);
    // The operation mix is exact: when it alone says not similar, no bound of θ or ε can change that.
    let classification_certain =
        operation_mix_differs || bounds_certain && (!pacpm_similar || (contrasted.is_empty() && !theta_at_chance));
    let mut c = Comparison {
        first: 0,
        second: 1,
        a: a.source.clone(),
        b: b.source.clone(),
        ranks: n,
        theta,
        theta_temporal: thetas[0],
        theta_volume: thetas[1],
        theta_spatial: thetas[2],
        left_out,
        verdict_on,
        epsilon,
        epsilon_exact: mcs.exact,
        epsilon_upper,
        similar,
        classification_certain,
        verdict: String::new(),
        uncertain_because: Vec::new(),
        graphs_complete,
        graphs_empty,
        collective_mix_similarity,
        operation_mix_similarity,
        operation_mix_differs,
        complete_graphs_filtered: false,
        theta_at_chance,
        contrasted,
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
            on_cut_graphs: paired_on_cut_graphs && by != PairedBy::RankNumber,
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
    };
    (c.verdict, c.uncertain_because) = verdict::verdict_words(&c);
    Ok(c)
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
