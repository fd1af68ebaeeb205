//! Topology identification with proof and rank-to-coordinate mapping (seed 000 §4.2, issue 3).
//!
//! From the communication matrix: filter low-volume pairs (automatic threshold at the widest
//! relative gap of the sorted pair volumes, or a fixed percentage), build the undirected graph,
//! then eliminate candidate topologies in increasing cost — node and edge counts, sorted degree
//! sequence, colour refinement, spectrum — and prove the survivors by isomorphism with a
//! verified mapping (the paper's Table 7, with timings). Every candidate isomorphic to the
//! graph is an equivalent; the simplest is the match. When nothing matches, the closest
//! candidates are reported with the edges that differ. The method and its choices are in
//! `docs/topology.md`.

use crate::matrix::CommMatrix;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
pub use tracelogic_graph;
use tracelogic_graph::catalog::{candidates, simplicity};
use tracelogic_graph::invariants::{closed_walks, closed_walks_within, distance_profile, spectra_agree, spectrum};
use tracelogic_graph::iso::{isomorphism_coloured, IsoOptions, IsoOutcome};
use tracelogic_graph::near::align_bounded;
use tracelogic_graph::refine::{refine_joint, Colouring};
use tracelogic_graph::{Graph, TopologySpec};
use web_time::Instant;

/// How low-volume pairs are filtered out before the graph is built.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "mode", content = "percent")]
pub enum Threshold {
    /// Cut at the widest relative gap in the sorted pair volumes (see [`auto_threshold`]).
    Auto,
    /// Drop pairs whose larger directed entry is below this percentage of the largest entry
    /// of the matrix (the paper: 5; the rule of `tracelogic matrix`).
    Percent(f64),
}

/// A user-defined reference pattern (an edge list file, or the saved graph of another run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomPattern {
    /// Name shown in labels (usually the file name).
    pub name: String,
    /// The pattern's graph; node ids are its "coordinates".
    pub graph: Graph,
}

/// When the adjacency eigenvalues are computed for display (the spectrum plot). Elimination
/// does not need them once one candidate is left, and the dense O(n³) eigen-decomposition
/// would dominate the whole identification.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpectrumDisplay {
    /// Up to [`DISPLAY_SPECTRUM_NODES`] ranks (a few milliseconds natively).
    #[default]
    Auto,
    /// Up to `tracelogic_graph::invariants::SPECTRUM_MAX_NODES` ranks (the plot was asked for).
    Always,
    /// Never (only what elimination itself computes).
    Never,
}

/// Largest graph whose eigenvalues [`SpectrumDisplay::Auto`] computes for display.
pub const DISPLAY_SPECTRUM_NODES: u32 = 128;

/// Options of [`identify_matrix`] and [`identify_graph`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopologyOptions {
    /// Filtering rule.
    pub threshold: Threshold,
    /// User patterns tried alongside the built-in families.
    pub library: Vec<CustomPattern>,
    /// Step budget of each isomorphism search (`None`: [`IsoOptions::for_nodes`]).
    pub max_steps: Option<u64>,
    /// How many near matches to report when nothing matches exactly.
    pub near_matches: usize,
    /// When eigenvalues are computed for the spectrum plot.
    #[serde(default)]
    pub spectrum: SpectrumDisplay,
}

impl Default for TopologyOptions {
    fn default() -> Self {
        TopologyOptions {
            threshold: Threshold::Auto,
            library: Vec::new(),
            max_steps: None,
            near_matches: 3,
            spectrum: SpectrumDisplay::Auto,
        }
    }
}

/// A pair of ranks and the traffic between them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairTraffic {
    /// Lower rank.
    pub a: u32,
    /// Higher rank.
    pub b: u32,
    /// Bytes (or messages, see [`FilterReport::metric`]) exchanged in both directions.
    pub volume: u64,
    /// Share of all point-to-point traffic (0..1).
    pub share: f64,
}

/// What filtering kept and removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilterReport {
    /// `auto`, `fixed`, or `none` (the input was a bare graph).
    pub mode: String,
    /// `bytes`, or `messages` when no message carried a byte.
    pub metric: String,
    /// The threshold applied, in percent of the largest directed entry: a pair is kept when
    /// one of its two entries reaches it (the rule of `tracelogic matrix`).
    pub threshold_pct: f64,
    /// Largest directed entry of the matrix (the reference of `threshold_pct`).
    pub max_volume: u64,
    /// Communicating pairs before filtering.
    pub pairs_before: usize,
    /// Pairs kept as edges.
    pub pairs_kept: usize,
    /// The removed pairs, largest first.
    pub removed: Vec<PairTraffic>,
    /// Share of all traffic the removed pairs carried (0..1).
    pub removed_share: f64,
    /// Automatic mode: ratio between the volumes on either side of the chosen gap (`None` when
    /// no gap was wide enough and nothing was removed).
    pub gap_ratio: Option<f64>,
}

/// A named topology, as shown to users.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyMatch {
    /// Family name (`grid`, `torus`, `stencil6`, `hypercube`, ..., or `custom`).
    pub family: String,
    /// Dimensions (`[4, 4]`, `[3]` for a 3-cube, `[n]` for one-size families and customs).
    pub dims: Vec<u32>,
    /// Human label, e.g. `4x4 6-point stencil`.
    pub label: String,
}

/// One row of the candidate-elimination table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    /// `generated`, `nodes and edges`, `degree sequence`, `colour refinement`, `distance
    /// profile`, `spectrum`, `isomorphism` (and `near matches` when nothing matched).
    pub name: String,
    /// Candidates left after this stage.
    pub candidates: usize,
    /// Their labels (at most 64 listed).
    pub survivors: Vec<String>,
    /// Time spent in this stage.
    pub milliseconds: f64,
    /// Why the stage did not run (then `milliseconds` is 0 and the candidates pass through).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// A neighbour of a rank in the identified topology, with its logical direction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Neighbour {
    /// Direction name (`east`, `north`, `southwest`, `up`, `+d3`, `parent`, `bit2`, ...).
    pub direction: String,
    /// The neighbouring rank.
    pub rank: u32,
}

/// Where a rank sits in the identified topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankPlace {
    /// The rank.
    pub rank: u32,
    /// Its node in the reference numbering (row-major for Cartesian families).
    pub node: u32,
    /// Its coordinates (see `TopologySpec::coords`).
    pub coords: Vec<u32>,
    /// Its neighbours by direction.
    pub neighbours: Vec<Neighbour>,
}

/// A candidate that almost matches, with the edges that differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NearMatch {
    /// The candidate.
    pub topology: TopologyMatch,
    /// Edges to add plus edges to remove.
    pub distance: usize,
    /// Communicating pairs the candidate does not have, with their traffic.
    pub extra_edges: Vec<PairTraffic>,
    /// Pairs the candidate has that do not communicate (after filtering), with the traffic
    /// filtering removed from them, if any.
    pub missing_edges: Vec<PairTraffic>,
    /// The alignment used: rank → candidate node.
    pub mapping: Vec<u32>,
    /// True when a search for a closer alignment to this candidate ran out of its step budget:
    /// `distance` is then an upper bound, not proved the smallest.
    pub budget_exhausted: bool,
}

/// The identification of one connected graph (or of the whole graph).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identification {
    /// Number of ranks (nodes).
    pub ranks: u32,
    /// Number of edges.
    pub edge_count: usize,
    /// The simplest isomorphic candidate, or `None`.
    #[serde(rename = "match")]
    pub matched: Option<TopologyMatch>,
    /// Every candidate isomorphic to the graph, simplest first (includes the match).
    pub equivalents: Vec<TopologyMatch>,
    /// Candidate elimination, stage by stage.
    pub stages: Vec<Stage>,
    /// Rank → coordinates and directions in the match (empty without a match).
    pub mapping: Vec<RankPlace>,
    /// Candidates whose isomorphism search ran out of budget (neither proved nor refuted).
    pub gave_up: Vec<String>,
    /// Closest candidates when nothing matched.
    pub near_matches: Vec<NearMatch>,
    /// Candidates the near-match search ran out of step budget on without finding an
    /// alignment within the distance limit (they may be as close as the ones listed, or
    /// closer); empty when the search covered every candidate it tried.
    pub near_match_gave_up: Vec<String>,
    /// Closed-walk counts `tr(A^k)`, k = 1.., modulo 2^64 (the scalable spectral invariant);
    /// empty when the spectrum stage was skipped.
    pub walk_counts: Vec<u64>,
    /// Adjacency eigenvalues of the graph, increasing (see [`SpectrumDisplay`]).
    pub spectrum: Option<Vec<f64>>,
    /// Eigenvalues of the matched candidate (equal to `spectrum` when matched; for plotting).
    pub candidate_spectrum: Option<Vec<f64>>,
}

/// A connected component analysed on its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Component {
    /// Its ranks, increasing; node `i` of the component is `ranks[i]`.
    pub ranks: Vec<u32>,
    /// Its identification (mapping ranks are global ranks).
    pub identification: Identification,
}

/// The full result of `tracelogic topology`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopologyReport {
    /// True when the run has no point-to-point traffic at all (collectives only, like NAS EP/FT).
    pub no_point_to_point: bool,
    /// Filtering figures.
    pub filter: FilterReport,
    /// The edges of the filtered graph, `[a, b]` with `a < b`.
    pub edges: Vec<[u32; 2]>,
    /// Ranks left without any edge.
    pub isolated_ranks: Vec<u32>,
    /// Identification of the whole graph (ranks with no edge included); its `ranks` is the
    /// number of ranks in the run (flattened, so the JSON has one `ranks` field).
    #[serde(flatten)]
    pub identification: Identification,
    /// When the graph is disconnected: each component of two or more ranks, identified alone.
    pub components: Vec<Component>,
}

/// Communicating pairs `(a, b, weight, volume)` with `a < b`: `weight` is the larger of the two
/// directed entries (what thresholds compare, as in `CommMatrix::filter`), `volume` the traffic
/// in both directions. Sorted by weight, largest first. Bytes, or messages when no message
/// carried a byte.
pub fn pair_volumes(m: &CommMatrix) -> (Vec<PairVolume>, &'static str) {
    let n = m.ranks as usize;
    let total_bytes = m.bytes.iter().fold(0u64, |t, &b| t.saturating_add(b));
    let (vals, metric) = if total_bytes == 0 {
        (&m.messages, "messages")
    } else {
        (&m.bytes, "bytes")
    };
    let at = |i: usize, j: usize| vals.get(i * n + j).copied().unwrap_or(0);
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let (x, y) = (at(i, j), at(j, i));
            if x > 0 || y > 0 {
                pairs.push((i as u32, j as u32, x.max(y), x.saturating_add(y)));
            }
        }
    }
    pairs.sort_by(|x, y| y.2.cmp(&x.2).then((x.0, x.1).cmp(&(y.0, y.1))));
    (pairs, metric)
}

/// Smallest gap the automatic threshold cuts at. Genuine patterns vary by small factors — a
/// periodic extent of 2 doubles a pair (its +1 and −1 neighbours coincide), halo faces differ
/// in area — while stray traffic sits far below (seed 000 MG-16: 190×; small MG runs: 2–7 % of
/// the largest entry).
pub const AUTO_MIN_GAP: f64 = 5.0;

/// The automatic threshold: the widest relative gap `v_i / v_{i+1}` between consecutive sorted
/// pair volumes, among cuts that keep an edge at every rank that has traffic (so the dominant
/// pattern is never cut away), and only if the gap is at least [`AUTO_MIN_GAP`]×. Returns how many pairs to
/// keep and the gap ratio, or `None` (keep everything).
pub fn auto_threshold(volumes_desc: &[u64], pairs: &[(u32, u32)], ranks: u32) -> Option<(usize, f64)> {
    let mut touched = vec![false; ranks as usize];
    let total = {
        let mut t = vec![false; ranks as usize];
        for &(a, b) in pairs {
            t[a as usize] = true;
            t[b as usize] = true;
        }
        t.iter().filter(|&&x| x).count()
    };
    let mut covered = 0;
    let mut best: Option<(usize, f64)> = None;
    for i in 0..volumes_desc.len().saturating_sub(1) {
        for r in [pairs[i].0, pairs[i].1] {
            if !std::mem::replace(&mut touched[r as usize], true) {
                covered += 1;
            }
        }
        if covered < total || volumes_desc[i + 1] == volumes_desc[i] {
            continue;
        }
        let ratio = volumes_desc[i] as f64 / volumes_desc[i + 1].max(1) as f64;
        if ratio >= AUTO_MIN_GAP && best.is_none_or(|(_, r)| ratio > r) {
            best = Some((i + 1, ratio));
        }
    }
    best
}

/// A pair of ranks `(a, b)`, `a < b`, its weight (larger directed entry) and volume (sum).
pub type PairVolume = (u32, u32, u64, u64);

fn filter_matrix(m: &CommMatrix, threshold: Threshold) -> (FilterReport, Vec<(u32, u32)>, Vec<PairVolume>) {
    let (pairs, metric) = pair_volumes(m);
    let total: u128 = pairs.iter().map(|p| p.3 as u128).sum();
    let max_volume = pairs.first().map_or(0, |p| p.2);
    let share = |v: u64| if total == 0 { 0.0 } else { v as f64 / total as f64 };
    let volumes: Vec<u64> = pairs.iter().map(|p| p.2).collect();
    let (keep, threshold_pct, gap_ratio, mode) = match threshold {
        Threshold::Percent(pct) => {
            let keep = pairs
                .iter()
                .take_while(|p| p.2 as f64 * 100.0 >= pct * max_volume as f64)
                .count();
            (keep, pct, None, "fixed")
        }
        Threshold::Auto => {
            let endpoints: Vec<(u32, u32)> = pairs.iter().map(|p| (p.0, p.1)).collect();
            match auto_threshold(&volumes, &endpoints, m.ranks) {
                Some((keep, ratio)) => {
                    // Halfway (geometrically) across the gap.
                    let cut = (volumes[keep - 1] as f64 * volumes[keep] as f64).sqrt();
                    (keep, 100.0 * cut / max_volume as f64, Some(ratio), "auto")
                }
                None => (pairs.len(), 0.0, None, "auto"),
            }
        }
    };
    let removed: Vec<PairTraffic> = pairs[keep..]
        .iter()
        .map(|&(a, b, _, v)| PairTraffic {
            a,
            b,
            volume: v,
            share: share(v),
        })
        .collect();
    let report = FilterReport {
        mode: mode.into(),
        metric: metric.into(),
        threshold_pct,
        max_volume,
        pairs_before: pairs.len(),
        pairs_kept: keep,
        removed_share: removed.iter().fold(0.0, |acc, r| acc + r.share),
        removed,
        gap_ratio,
    };
    let kept = pairs[..keep].iter().map(|p| (p.0, p.1)).collect();
    (report, kept, pairs)
}

/// Identify the topology of a run from its communication matrix.
pub fn identify_matrix(m: &CommMatrix, opts: &TopologyOptions) -> TopologyReport {
    let (filter, kept, pairs) = filter_matrix(m, opts.threshold);
    let total: u128 = pairs.iter().map(|p| p.3 as u128).sum();
    let volume: BTreeMap<(u32, u32), u64> = pairs.iter().map(|&(a, b, _, v)| ((a, b), v)).collect();
    let traffic = move |a: u32, b: u32| {
        let (a, b) = (a.min(b), a.max(b));
        let v = volume.get(&(a, b)).copied().unwrap_or(0);
        PairTraffic {
            a,
            b,
            volume: v,
            share: if total == 0 { 0.0 } else { v as f64 / total as f64 },
        }
    };
    let g = Graph::from_edges(m.ranks, kept);
    let no_p2p = pairs.is_empty();
    report(g, filter, no_p2p, &traffic, opts)
}

/// Identify the topology of a bare graph (an edge list from another tool); no filtering.
pub fn identify_graph(g: &Graph, opts: &TopologyOptions) -> TopologyReport {
    let filter = FilterReport {
        mode: "none".into(),
        metric: "edges".into(),
        threshold_pct: 0.0,
        max_volume: 1,
        pairs_before: g.num_edges(),
        pairs_kept: g.num_edges(),
        removed: Vec::new(),
        removed_share: 0.0,
        gap_ratio: None,
    };
    let m = g.num_edges().max(1) as f64;
    let traffic = |a: u32, b: u32| {
        let on = g.has_edge(a, b);
        PairTraffic {
            a: a.min(b),
            b: a.max(b),
            volume: on as u64,
            share: if on { 1.0 / m } else { 0.0 },
        }
    };
    report(g.clone(), filter, g.num_edges() == 0, &traffic, opts)
}

fn report(
    g: Graph,
    filter: FilterReport,
    no_p2p: bool,
    traffic: &dyn Fn(u32, u32) -> PairTraffic,
    opts: &TopologyOptions,
) -> TopologyReport {
    let n = g.num_nodes();
    let identity: Vec<u32> = (0..n).collect();
    let identification = if no_p2p {
        empty_identification(&g)
    } else {
        identify(&g, &identity, traffic, opts)
    };
    let comps = g.components();
    let isolated_ranks: Vec<u32> = comps.iter().filter(|c| c.len() == 1).map(|c| c[0]).collect();
    let components = if comps.len() > 1 && !no_p2p {
        comps
            .iter()
            .filter(|c| c.len() > 1)
            .map(|c| Component {
                ranks: c.clone(),
                identification: identify(&g.induced(c), c, traffic, opts),
            })
            .collect()
    } else {
        Vec::new()
    };
    TopologyReport {
        no_point_to_point: no_p2p,
        filter,
        edges: g.edges().map(|(a, b)| [a, b]).collect(),
        isolated_ranks,
        identification,
        components,
    }
}

fn empty_identification(g: &Graph) -> Identification {
    Identification {
        ranks: g.num_nodes(),
        edge_count: g.num_edges(),
        matched: None,
        equivalents: Vec::new(),
        stages: Vec::new(),
        mapping: Vec::new(),
        gave_up: Vec::new(),
        near_matches: Vec::new(),
        near_match_gave_up: Vec::new(),
        walk_counts: Vec::new(),
        spectrum: None,
        candidate_spectrum: None,
    }
}

/// A candidate: a family member or a user pattern.
#[derive(Clone)]
enum Candidate<'a> {
    Spec(TopologySpec),
    Custom(&'a CustomPattern),
}

impl Candidate<'_> {
    fn describe(&self) -> TopologyMatch {
        match self {
            Candidate::Spec(s) => TopologyMatch {
                family: s.family.name().into(),
                dims: s.dims.clone(),
                label: s.label(),
            },
            Candidate::Custom(c) => TopologyMatch {
                family: "custom".into(),
                dims: vec![c.graph.num_nodes()],
                label: format!("custom pattern {} ({} nodes)", c.name, c.graph.num_nodes()),
            },
        }
    }

    fn edge_count(&self) -> u64 {
        match self {
            Candidate::Spec(s) => s.edge_count(),
            Candidate::Custom(c) => c.graph.num_edges() as u64,
        }
    }

    fn degrees(&self) -> BTreeMap<u32, u64> {
        match self {
            Candidate::Spec(s) => s.degree_histogram(),
            Candidate::Custom(c) => c.graph.degree_histogram(),
        }
    }

    fn graph(&self) -> Graph {
        match self {
            Candidate::Spec(s) => s.graph(),
            Candidate::Custom(c) => c.graph.clone(),
        }
    }

    fn simplicity(&self) -> (usize, usize) {
        match self {
            Candidate::Spec(s) => simplicity(s),
            Candidate::Custom(_) => (usize::MAX, 0),
        }
    }
}

/// Walk-count work allowed for the graph (sparse multiply-adds; ~30 ms natively); candidates
/// get four times as much at the same length and are not compared on walks beyond that.
const WALK_BUDGET: u64 = 30_000_000;

/// Candidate nodes whose distance profile is compared with the app's (non-transitive
/// candidates with a larger colour class skip the test).
const PROFILE_MAX_ROOTS: usize = 16;

/// Largest number of differing edges a near match may have.
const NEAR_MAX_DISTANCE: u64 = 6;
/// Step budget of each near-match search round, plus 4 per node and edge end (a step is a
/// candidate examined; a successful alignment examines about the degree per node).
const NEAR_STEPS_BASE: u64 = 20_000;

/// Lower bound of the edit distance from the degree histograms: half the L1 distance of the
/// sorted degree sequences, and the edge-count difference.
fn degree_distance(a: &BTreeMap<u32, u64>, b: &BTreeMap<u32, u64>, ma: u64, mb: u64) -> u64 {
    let expand = |h: &BTreeMap<u32, u64>| -> Vec<(u32, u64)> { h.iter().map(|(&d, &c)| (d, c)).collect() };
    let (ea, eb) = (expand(a), expand(b));
    let (mut i, mut j, mut ra, mut rb, mut l1) = (0, 0, 0u64, 0u64, 0u64);
    while i < ea.len() && j < eb.len() {
        if ra == 0 {
            ra = ea[i].1;
        }
        if rb == 0 {
            rb = eb[j].1;
        }
        let take = ra.min(rb);
        l1 += take * ea[i].0.abs_diff(eb[j].0) as u64;
        ra -= take;
        rb -= take;
        if ra == 0 {
            i += 1;
        }
        if rb == 0 {
            j += 1;
        }
    }
    l1.div_ceil(2).max(ma.abs_diff(mb))
}

/// Identify one graph whose node `i` is rank `ranks[i]`.
fn identify(
    g: &Graph,
    ranks: &[u32],
    traffic: &dyn Fn(u32, u32) -> PairTraffic,
    opts: &TopologyOptions,
) -> Identification {
    let n = g.num_nodes();
    let m = g.num_edges() as u64;
    let mut stages = Vec::new();
    // `start` is the stage's start, or why it was skipped.
    let mut stage = |name: &str, start: Result<Instant, &String>, survivors: &[Candidate]| {
        stages.push(Stage {
            name: name.into(),
            candidates: survivors.len(),
            survivors: survivors.iter().take(64).map(|c| c.describe().label).collect(),
            milliseconds: start.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3),
            skipped: start.err().cloned(),
        });
    };

    let t = Instant::now();
    let all: Vec<Candidate> = candidates(n)
        .into_iter()
        .map(Candidate::Spec)
        .chain(
            opts.library
                .iter()
                .filter(|c| c.graph.num_nodes() == n)
                .map(Candidate::Custom),
        )
        .collect();
    stage("generated", Ok(t), &all);

    let t = Instant::now();
    let mut left: Vec<Candidate> = all.iter().filter(|c| c.edge_count() == m).cloned().collect();
    stage("nodes and edges", Ok(t), &left);

    let t = Instant::now();
    let degrees = g.degree_histogram();
    left.retain(|c| c.degrees() == degrees);
    stage("degree sequence", Ok(t), &left);

    let t = Instant::now();
    // Two regular graphs of the same size and degree are never told apart by refinement: the
    // candidates of a regular graph skip straight to a trivial colouring, and their graphs are
    // only built once the distance profile (computed from coordinates for Cartesian families)
    // has kept them.
    let regular = degrees.len() <= 1;
    let mut lazy: Vec<Option<Graph>> = left.iter().map(|c| (!regular).then(|| c.graph())).collect();
    let mut colourings: Vec<Colouring> = lazy
        .iter()
        .map(|h| match h {
            Some(h) => refine_joint(&[g, h], 32),
            None => Colouring {
                colours: vec![vec![0; n as usize], vec![0; n as usize]],
                classes: 1,
                rounds: 0,
            },
        })
        .collect();
    let keep: Vec<bool> = colourings.iter().map(Colouring::histograms_agree).collect();
    retain_pairs(&mut left, &mut lazy, &keep);
    retain_mask(&mut colourings, &keep);
    stage("colour refinement", Ok(t), &left);

    // An isomorphism maps the app's most distinctive node to a candidate node of the same
    // colour with the same distance profile; for vertex-transitive candidates any node will do.
    let t = Instant::now();
    let mut profiles: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    let keep: Vec<bool> = left
        .iter()
        .zip(lazy.iter_mut())
        .zip(&colourings)
        .map(|((c, h), col)| {
            let hist = col.histogram(0);
            let Some(root) = (0..n).min_by_key(|&u| (hist[col.colours[0][u as usize] as usize], u)) else {
                return true;
            };
            let mine = profiles.entry(root).or_insert_with(|| distance_profile(g, root));
            let colour = col.colours[0][root as usize];
            if let Candidate::Spec(s) = c {
                if h.is_none() && s.is_vertex_transitive() {
                    if let Some(theirs) = s.implicit_distance_profile(0, Some(mine)) {
                        return theirs == *mine;
                    }
                }
            }
            let h = h.get_or_insert_with(|| c.graph());
            let transitive = matches!(c, Candidate::Spec(s) if s.is_vertex_transitive());
            let images: Vec<u32> = (0..n)
                .filter(|&v| col.colours[1][v as usize] == colour)
                .take(if transitive { 1 } else { PROFILE_MAX_ROOTS + 1 })
                .collect();
            if images.len() > PROFILE_MAX_ROOTS {
                return true;
            }
            images.iter().any(|&v| distance_profile(h, v) == *mine)
        })
        .collect();
    retain_pairs(&mut left, &mut lazy, &keep);
    retain_mask(&mut colourings, &keep);
    let mut graphs: Vec<Graph> = lazy
        .into_iter()
        .zip(&left)
        .map(|(h, c)| h.unwrap_or_else(|| c.graph()))
        .collect();
    stage("distance profile", Ok(t), &left);

    // A quick, near-linear isomorphism search settles most candidates at once (ordered search
    // on grids, tori, stencils, hypercubes costs about one step per node and edge end): proved,
    // or refuted. Only the ones it leaves undecided go through the spectrum stage and the full
    // search. With one candidate left the full search runs directly.
    let iso_opts = IsoOptions {
        max_steps: opts.max_steps.unwrap_or(IsoOptions::for_nodes(n).max_steps),
        ..IsoOptions::for_nodes(n)
    };
    let t_quick = Instant::now();
    let settled: Vec<Option<IsoOutcome>> = if left.len() > 1 {
        let quick = IsoOptions {
            max_steps: (4 * (n as u64 + 2 * m) + 1_000).min(iso_opts.max_steps),
            ..iso_opts
        };
        graphs
            .iter()
            .zip(&colourings)
            .map(|(h, col)| match isomorphism_coloured(g, h, Some(col), quick) {
                IsoOutcome::GaveUp { .. } => None,
                done => Some(done),
            })
            .collect()
    } else {
        vec![None; left.len()]
    };
    let quick_time = t_quick.elapsed();

    // The spectrum stage only eliminates; when nothing is left undecided the isomorphism has
    // decided alone, and the eigenvalues are computed for display only if wanted.
    let display = match opts.spectrum {
        SpectrumDisplay::Auto => n <= DISPLAY_SPECTRUM_NODES,
        SpectrumDisplay::Always => true,
        SpectrumDisplay::Never => false,
    };
    let undecided = settled.iter().filter(|s| s.is_none()).count();
    let mut walk_counts = Vec::new();
    let app_spectrum;
    let mut kept_spectra: Vec<Option<Vec<f64>>>;
    let mut settled_kept = settled;
    if undecided == 0 || left.len() <= 1 {
        app_spectrum = if display { spectrum(g) } else { None };
        // Candidates a quick search refuted leave here (they are not isomorphic).
        let keep: Vec<bool> = settled_kept
            .iter()
            .map(|s| !matches!(s, Some(IsoOutcome::NotIsomorphic { .. })))
            .collect();
        retain_pairs(&mut left, &mut graphs, &keep);
        retain_mask(&mut colourings, &keep);
        retain_mask(&mut settled_kept, &keep);
        kept_spectra = graphs
            .iter()
            .map(|h| if app_spectrum.is_some() { spectrum(h) } else { None })
            .collect();
        let reason = match left.len() {
            0 if keep.is_empty() => "no candidate left".to_string(),
            1 if keep.len() == 1 => "one candidate left: the isomorphism decides".to_string(),
            _ => format!(
                "the isomorphism search settled all {} candidates in near-linear time",
                keep.len()
            ),
        };
        stage("spectrum", Err(&reason), &left);
    } else {
        let t = Instant::now();
        let walks = closed_walks_within(g, WALK_BUDGET);
        let half = walks.counts.len() / 2;
        app_spectrum = if display { spectrum(g) } else { None };
        let mut cand_spectra: Vec<Option<Vec<f64>>> = Vec::new();
        let keep: Vec<bool> = graphs
            .iter()
            .zip(&settled_kept)
            .map(|(h, settled)| {
                let s = if app_spectrum.is_some() { spectrum(h) } else { None };
                let same = match settled {
                    Some(IsoOutcome::Isomorphic { .. }) => true,
                    Some(_) => false,
                    None => {
                        let same_walks = if half >= 1 {
                            closed_walks(h, half, 4 * WALK_BUDGET).is_none_or(|w| w == walks)
                        } else {
                            true
                        };
                        same_walks
                            && match (&app_spectrum, &s) {
                                (Some(a), Some(b)) => spectra_agree(a, b),
                                _ => true,
                            }
                    }
                };
                cand_spectra.push(s);
                same
            })
            .collect();
        kept_spectra = cand_spectra
            .into_iter()
            .zip(&keep)
            .filter(|(_, &k)| k)
            .map(|(s, _)| s)
            .collect();
        retain_pairs(&mut left, &mut graphs, &keep);
        retain_mask(&mut colourings, &keep);
        retain_mask(&mut settled_kept, &keep);
        walk_counts = walks.counts;
        stage("spectrum", Ok(t), &left);
    }

    // The isomorphism stage's time includes the quick searches above.
    let t = Instant::now();
    let t = t.checked_sub(quick_time).unwrap_or(t);
    let mut proved: Vec<(Candidate, Vec<u32>, Option<Vec<f64>>)> = Vec::new();
    let mut gave_up = Vec::new();
    for ((((c, h), s), col), settled) in left
        .iter()
        .zip(&graphs)
        .zip(kept_spectra.iter_mut())
        .zip(&colourings)
        .zip(settled_kept)
    {
        let outcome = match settled {
            Some(done) => done,
            None => isomorphism_coloured(g, h, Some(col), iso_opts),
        };
        match outcome {
            IsoOutcome::Isomorphic { mapping, .. } => proved.push((c.clone(), mapping, s.take())),
            IsoOutcome::GaveUp { steps } => {
                gave_up.push(format!("{} (gave up after {steps} steps)", c.describe().label))
            }
            IsoOutcome::NotIsomorphic { .. } => {}
        }
    }
    proved.sort_by_key(|(c, _, _)| c.simplicity());
    let survivors: Vec<Candidate> = proved.iter().map(|p| p.0.clone()).collect();
    stage("isomorphism", Ok(t), &survivors);

    let mut out = Identification {
        ranks: n,
        edge_count: m as usize,
        matched: None,
        equivalents: survivors.iter().map(Candidate::describe).collect(),
        stages,
        mapping: Vec::new(),
        gave_up,
        near_matches: Vec::new(),
        near_match_gave_up: Vec::new(),
        walk_counts,
        spectrum: app_spectrum,
        candidate_spectrum: None,
    };
    if let Some((best, mapping, s)) = proved.into_iter().next() {
        out.matched = Some(best.describe());
        out.mapping = places(&best, &mapping, ranks);
        out.candidate_spectrum = s;
    } else if opts.near_matches > 0 {
        let t = Instant::now();
        let undecided: Vec<String> = left
            .iter()
            .map(|c| c.describe().label)
            .filter(|l| out.gave_up.iter().any(|g| g.starts_with(l.as_str())))
            .collect();
        (out.near_matches, out.near_match_gave_up) =
            near_matches(g, ranks, &all, traffic, opts.near_matches, &undecided);
        out.stages.push(Stage {
            name: "near matches".into(),
            candidates: out.near_matches.len(),
            survivors: out.near_matches.iter().map(|c| c.topology.label.clone()).collect(),
            milliseconds: t.elapsed().as_secs_f64() * 1e3,
            skipped: None,
        });
    }
    out
}

fn retain_mask<T>(items: &mut Vec<T>, keep: &[bool]) {
    let mut i = 0;
    items.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

fn retain_pairs<T>(left: &mut Vec<Candidate>, graphs: &mut Vec<T>, keep: &[bool]) {
    let mut i = 0;
    left.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    let mut i = 0;
    graphs.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

fn places(c: &Candidate, mapping: &[u32], ranks: &[u32]) -> Vec<RankPlace> {
    let mut rank_of_node = vec![0u32; mapping.len()];
    for (i, &node) in mapping.iter().enumerate() {
        rank_of_node[node as usize] = ranks[i];
    }
    mapping
        .iter()
        .enumerate()
        .map(|(i, &node)| match c {
            Candidate::Spec(s) => RankPlace {
                rank: ranks[i],
                node,
                coords: s.coords(node),
                neighbours: s
                    .neighbours(node)
                    .into_iter()
                    .map(|(d, v)| Neighbour {
                        direction: d.name(),
                        rank: rank_of_node[v as usize],
                    })
                    .collect(),
            },
            Candidate::Custom(p) => RankPlace {
                rank: ranks[i],
                node,
                coords: vec![node],
                neighbours: p
                    .graph
                    .neighbors(node)
                    .iter()
                    .map(|&v| Neighbour {
                        direction: format!("node{v}"),
                        rank: rank_of_node[v as usize],
                    })
                    .collect(),
            },
        })
        .collect()
}

/// L1 distance between two distance profiles (missing levels count as 0).
fn profile_distance(a: &[u32], b: &[u32]) -> u64 {
    (0..a.len().max(b.len()))
        .map(|i| a.get(i).copied().unwrap_or(0).abs_diff(b.get(i).copied().unwrap_or(0)) as u64)
        .sum()
}

/// Closest candidates: the ones with the smallest degree-sequence lower bound are aligned with
/// a bounded greedy search; the best alignments are reported with their differing edges, and
/// the candidates whose search ran out of budget without an alignment are named.
fn near_matches(
    g: &Graph,
    ranks: &[u32],
    all: &[Candidate],
    traffic: &dyn Fn(u32, u32) -> PairTraffic,
    count: usize,
    undecided: &[String],
) -> (Vec<NearMatch>, Vec<String>) {
    let degrees = g.degree_histogram();
    let m = g.num_edges() as u64;
    let limit = NEAR_MAX_DISTANCE.min((m / 4).max(1));
    // A typical node of the graph (most common degree): its distance profile should be close to
    // that of any node of a vertex-transitive candidate the graph nearly equals, and far from the
    // profile of look-alikes (tori of other aspect ratios share every local invariant).
    let common_degree = degrees.iter().max_by_key(|(&d, &c)| (c, d)).map_or(0, |(&d, _)| d);
    let typical = (0..g.num_nodes()).find(|&u| g.degree(u) == common_degree).unwrap_or(0);
    let profile = distance_profile(g, typical);
    let mut bounded: Vec<(u64, u64, &Candidate, Option<Graph>)> = all
        .iter()
        .filter_map(|c| {
            let mut lb = degree_distance(&degrees, &c.degrees(), m, c.edge_count());
            if lb == 0 && !undecided.contains(&c.describe().label) {
                // Refuted by the exact stages, so at least one edge differs.
                lb = 1;
            }
            if lb > limit {
                return None;
            }
            let h = c.graph();
            let proxy = match c {
                Candidate::Spec(s) if s.is_vertex_transitive() => profile_distance(&profile, &distance_profile(&h, 0)),
                _ => 0,
            };
            Some((lb, proxy, c, Some(h)))
        })
        .collect();
    bounded.sort_by_key(|(lb, proxy, c, _)| (*lb, *proxy, c.simplicity()));
    let steps = NEAR_STEPS_BASE + 4 * (g.num_nodes() as u64 + 2 * m);
    let mut found: Vec<NearMatch> = Vec::new();
    let mut gave_up: Vec<String> = Vec::new();
    for (lb, _, c, h) in bounded.iter_mut().take(count * 2) {
        // Sorted by lower bound: once the best alignment is within the next bound, no later
        // candidate can be closer (equally close ones are not searched: each costs a budget).
        if found.len() >= count || found.first().is_some_and(|f| f.distance as u64 <= *lb) {
            break;
        }
        let h = h.take().expect("graph built once");
        let search = align_bounded(g, &h, *lb as usize, limit as usize, steps);
        let Some(a) = search.alignment else {
            if search.budget_exhausted {
                gave_up.push(c.describe().label);
            }
            continue;
        };
        let rank = |u: u32| ranks[u as usize];
        found.push(NearMatch {
            topology: c.describe(),
            distance: a.distance(),
            extra_edges: a.extra.iter().map(|&(u, v)| traffic(rank(u), rank(v))).collect(),
            missing_edges: a.missing.iter().map(|&(u, v)| traffic(rank(u), rank(v))).collect(),
            mapping: a.mapping,
            budget_exhausted: search.budget_exhausted,
        });
        found.sort_by_key(|nm| nm.distance);
    }
    found.retain(|nm| nm.distance as u64 <= limit);
    found.sort_by_key(|nm| nm.distance);
    found.truncate(count);
    (found, gave_up)
}
