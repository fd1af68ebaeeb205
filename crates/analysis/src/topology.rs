//! Topology identification with proof and rank-to-coordinate mapping (Logicalization §4.2).
//!
//! From the communication matrix: filter low-volume pairs (automatic threshold at the widest
//! relative gap of the sorted pair volumes, or a fixed percentage), build the undirected graph,
//! then eliminate candidate topologies in increasing cost — node and edge counts, sorted degree
//! sequence, colour refinement, spectrum — and prove the survivors by isomorphism with a
//! verified mapping (the paper's Table 7, with timings). Every candidate isomorphic to the
//! graph is an equivalent; the simplest is the match. When nothing matches, the closest
//! candidates are reported with the edges that differ. The method and its choices are in
//! `docs/topology.md`.

use crate::matrix::{CommMatrix, Metric};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::time::Duration;
pub use tracelogic_graph;
use tracelogic_graph::catalog::{candidates, simplicity};
use tracelogic_graph::closed_form::PrimeFactor;
use tracelogic_graph::invariants::{
    closed_walks, closed_walks_within, distance_profile, spectra_agree, spectrum, SPECTRUM_MAX_NODES,
};
use tracelogic_graph::iso::{isomorphism_coloured, IsoOptions, IsoOutcome};
use tracelogic_graph::near::align_bounded;
use tracelogic_graph::refine::{refine_joint, Colouring};
use tracelogic_graph::{Direction, Family, Graph, TopologySpec};
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
    /// Automatic mode: the other cuts tried because the widest gap's graph identified no
    /// topology (`None` when it did, when no other cut qualified, and in fixed mode). When one
    /// of them identified a topology, the fields above describe that cut.
    #[serde(default)]
    pub fallback: Option<CutFallback>,
}

/// The automatic filter's second chance: a threshold is only a means, and a match proves the
/// graph, so when the widest gap's graph matches nothing the other qualifying cuts (see
/// [`fallback_cuts`]) are tried, widest gap first, and the first whose graph a topology matches
/// is taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CutFallback {
    /// The widest gap's cut (keeping every pair when no gap reached [`AUTO_MIN_GAP`]), whose
    /// graph matched no topology.
    pub widest: CutTried,
    /// The other cuts in the order tried, up to the first that identified a topology.
    pub tried: Vec<CutTried>,
    /// Index in `tried` of the cut taken, or `None` when none identified a topology (the
    /// report then describes the widest gap's cut).
    pub taken: Option<usize>,
}

impl CutFallback {
    /// One sentence for people: that the widest gap's graph matched nothing, and which cut was
    /// taken instead (or that none of those tried matched either). The CLI and the web view
    /// show it under the filtering figures.
    pub fn summary(&self) -> String {
        let cut = |gap: Option<f64>| gap.map_or("keeping every pair".to_owned(), |g| format!("the {g:.1}x gap"));
        let first = match self.widest.gap_ratio {
            Some(g) => format!("the widest gap ({g:.1}x, {} pairs kept)", self.widest.pairs_kept),
            None => format!("keeping every pair (no gap of {AUTO_MIN_GAP}x or more)"),
        };
        match self.taken.and_then(|i| self.tried.get(i).map(|c| (i, c))) {
            Some((i, c)) => format!(
                "{first} identified no topology; {} ({} pairs kept, {:.3} % of the traffic removed) is the first \
                 of the other cuts that does ({} tried).",
                cut(c.gap_ratio),
                c.pairs_kept,
                100.0 * c.removed_share,
                i + 1
            ),
            None => format!(
                "{first} identified no topology, nor did the {} other cut(s) tried: {}.",
                self.tried.len(),
                self.tried
                    .iter()
                    .map(|c| cut(c.gap_ratio))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// One cut of the sorted pair weights and what identification made of its graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CutTried {
    /// Pairs kept as edges (the heaviest ones).
    pub pairs_kept: usize,
    /// The cut, in percent of the largest directed entry (geometric middle of the gap; 0 when
    /// every pair is kept).
    pub threshold_pct: f64,
    /// Ratio of the weights on either side of the cut (`None`: every pair kept).
    pub gap_ratio: Option<f64>,
    /// Share of all traffic the pairs below the cut carry (0..1).
    pub removed_share: f64,
    /// Label of the topology that matched the cut's graph, if any.
    #[serde(rename = "match")]
    pub matched: Option<String>,
    /// Time identification took on this cut's graph.
    pub milliseconds: f64,
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
    /// Direction name (`east`, `north`, `southwest`, `up`, `+d3`, `parent`, `bit2`, ...); the
    /// fixed words are shared, not copied per neighbour (a report names every neighbour of
    /// every rank).
    pub direction: Cow<'static, str>,
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
    /// Time spent outside the elimination stages, so that `stages` plus these add up to the
    /// whole identification.
    #[serde(default)]
    pub timings: IdentificationTimings,
}

/// Where the time of an identification went besides its [`Stage`]s, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdentificationTimings {
    /// Eigenvalues computed for display only (see [`SpectrumDisplay`]); 0 when none were, or
    /// when the spectrum stage computed them for elimination.
    pub display_spectrum_ms: f64,
    /// Turning the proved mapping into rank places with coordinates and directions.
    pub mapping_ms: f64,
    /// The whole identification, stages included.
    pub total_ms: f64,
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
    /// Where `mapping` comes from: the isomorphism identification proved (`identification`), or
    /// the ranks' own first contacts (`first_contacts`, set by
    /// [`crate::logical::place_by_first_contacts`]) when the graph has more automorphisms than
    /// the topology's geometry and the proved isomorphism is not the program's layout.
    #[serde(default)]
    pub placed_by: crate::logical::PlacedBy,
    /// When the graph is disconnected: each component of two or more ranks, identified alone.
    pub components: Vec<Component>,
}

/// Communicating pairs `(a, b, weight, volume)` with `a < b`: `weight` is the larger of the two
/// directed entries (what thresholds compare, as in `CommMatrix::filter`), `volume` the traffic
/// in both directions. Sorted by weight, largest first. Bytes, or messages when no message
/// carried a byte.
pub fn pair_volumes(m: &CommMatrix) -> (Vec<PairVolume>, &'static str) {
    let metric = if m.total(Metric::Bytes) == 0 {
        Metric::Messages
    } else {
        Metric::Bytes
    };
    // Each unordered pair once, in O(ranks + entries): rank a's row (a → b) is merged with its
    // column (b → a), both by increasing b, keeping b > a. The column is a counting sort of the
    // entries by receiver; entries come by increasing sender, so each column's senders increase.
    let n = m.ranks() as usize;
    let mut col_start = vec![0usize; n + 1];
    for e in m.entries() {
        col_start[e.to as usize + 1] += 1;
    }
    for r in 0..n {
        col_start[r + 1] += col_start[r];
    }
    let mut fill = col_start.clone();
    let mut column = vec![(0u32, 0u64); m.nonzero()];
    for e in m.entries() {
        let k = &mut fill[e.to as usize];
        column[*k] = (e.from, e.value(metric));
        *k += 1;
    }
    let mut pairs = Vec::new();
    for a in 0..m.ranks() {
        let mut out = m
            .row(a)
            .filter(|e| e.to > a)
            .map(|e| (e.to, e.value(metric)))
            .peekable();
        let col = &column[col_start[a as usize]..col_start[a as usize + 1]];
        let mut inc = col.iter().copied().filter(|&(b, _)| b > a).peekable();
        loop {
            let (b, x, y) = match (out.peek().copied(), inc.peek().copied()) {
                (None, None) => break,
                (Some((b, x)), Some((c, y))) if b == c => {
                    out.next();
                    inc.next();
                    (b, x, y)
                }
                (Some((b, x)), Some((c, _))) if b < c => {
                    out.next();
                    (b, x, 0)
                }
                (Some((b, x)), None) => {
                    out.next();
                    (b, x, 0)
                }
                (_, Some((c, y))) => {
                    inc.next();
                    (c, 0, y)
                }
            };
            if x > 0 || y > 0 {
                pairs.push((a, b, x.max(y), x.saturating_add(y)));
            }
        }
    }
    pairs.sort_by(|x, y| y.2.cmp(&x.2).then((x.0, x.1).cmp(&(y.0, y.1))));
    let name = match metric {
        Metric::Bytes => "bytes",
        Metric::Messages => "messages",
    };
    (pairs, name)
}

/// Smallest gap the automatic threshold cuts at. Genuine patterns vary by small factors — a
/// periodic extent of 2 doubles a pair (its +1 and −1 neighbours coincide), halo faces differ
/// in area — while stray traffic sits far below (Logicalization MG-16: 190×; small MG runs: 2–7 % of
/// the largest entry).
pub const AUTO_MIN_GAP: f64 = 5.0;

/// Smallest gap a fallback cut sits at (see [`fallback_cuts`]). Below 2× the two sides are one
/// pattern's spread (halo faces of different areas, a doubled periodic pair), not two levels of
/// traffic; NAS MG class S on 128 ranks separates its torus from its coarse-level pairs by only
/// 4.4×.
pub const FALLBACK_MIN_GAP: f64 = 2.0;

/// Most cuts tried after the widest gap's graph matched nothing: each costs one identification,
/// and beyond the few widest gaps a cut sits inside a pattern's own spread.
pub const MAX_FALLBACK_CUTS: usize = 8;

/// Every cut the automatic filter may take, widest gap first (equal gaps: the one keeping fewer
/// pairs first): `(pairs kept, gap ratio)` for each cut between two distinct consecutive sorted
/// pair weights that keeps an edge at every rank that has traffic (so the dominant pattern is
/// never cut away) and whose ratio `v_i / v_{i+1}` is at least `min_gap`.
pub fn candidate_cuts(volumes_desc: &[u64], pairs: &[(u32, u32)], ranks: u32, min_gap: f64) -> Vec<(usize, f64)> {
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
    let mut cuts = Vec::new();
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
        if ratio >= min_gap {
            cuts.push((i + 1, ratio));
        }
    }
    cuts.sort_by(|x, y| y.1.total_cmp(&x.1));
    cuts
}

/// The automatic threshold: the widest relative gap `v_i / v_{i+1}` between consecutive sorted
/// pair volumes, among cuts that keep an edge at every rank that has traffic (so the dominant
/// pattern is never cut away), and only if the gap is at least [`AUTO_MIN_GAP`]×. Returns how
/// many pairs to keep and the gap ratio, or `None` (keep everything).
pub fn auto_threshold(volumes_desc: &[u64], pairs: &[(u32, u32)], ranks: u32) -> Option<(usize, f64)> {
    candidate_cuts(volumes_desc, pairs, ranks, AUTO_MIN_GAP)
        .first()
        .copied()
}

/// The cuts tried, in order, when the automatic cut keeping `widest_kept` pairs gave a graph no
/// topology matches: the other cuts at gaps of at least [`FALLBACK_MIN_GAP`]×, widest first,
/// then keeping every pair (`gap = None`) if the widest cut removed any, at most
/// [`MAX_FALLBACK_CUTS`] in all.
pub fn fallback_cuts(
    volumes_desc: &[u64],
    pairs: &[(u32, u32)],
    ranks: u32,
    widest_kept: usize,
) -> Vec<(usize, Option<f64>)> {
    let mut cuts: Vec<(usize, Option<f64>)> = candidate_cuts(volumes_desc, pairs, ranks, FALLBACK_MIN_GAP)
        .into_iter()
        .filter(|&(keep, _)| keep != widest_kept)
        .map(|(keep, ratio)| (keep, Some(ratio)))
        .collect();
    if widest_kept < volumes_desc.len() {
        cuts.push((volumes_desc.len(), None));
    }
    cuts.truncate(MAX_FALLBACK_CUTS);
    cuts
}

/// A pair of ranks `(a, b)`, `a < b`, its weight (larger directed entry) and volume (sum).
pub type PairVolume = (u32, u32, u64, u64);

/// The pairs of a matrix, sorted by weight (see [`pair_volumes`]), with what cutting them costs.
struct SortedPairs {
    pairs: Vec<PairVolume>,
    metric: &'static str,
    /// Both directions' traffic of every pair.
    total: u128,
}

impl SortedPairs {
    fn share(&self, v: u64) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            v as f64 / self.total as f64
        }
    }

    fn max_volume(&self) -> u64 {
        self.pairs.first().map_or(0, |p| p.2)
    }

    /// The cut keeping the `keep` heaviest pairs, in percent of the largest entry: the
    /// geometric middle of the gap it sits in, 0 when every pair is kept.
    fn cut_pct(&self, keep: usize) -> f64 {
        if keep == 0 || keep >= self.pairs.len() {
            return 0.0;
        }
        let cut = (self.pairs[keep - 1].2 as f64 * self.pairs[keep].2 as f64).sqrt();
        100.0 * cut / self.max_volume() as f64
    }

    fn report(&self, mode: &str, keep: usize, threshold_pct: f64, gap_ratio: Option<f64>) -> FilterReport {
        let removed: Vec<PairTraffic> = self.pairs[keep..]
            .iter()
            .map(|&(a, b, _, v)| PairTraffic {
                a,
                b,
                volume: v,
                share: self.share(v),
            })
            .collect();
        FilterReport {
            mode: mode.into(),
            metric: self.metric.into(),
            threshold_pct,
            max_volume: self.max_volume(),
            pairs_before: self.pairs.len(),
            pairs_kept: keep,
            removed_share: removed.iter().fold(0.0, |acc, r| acc + r.share),
            removed,
            gap_ratio,
            fallback: None,
        }
    }

    fn graph(&self, ranks: u32, keep: usize) -> Graph {
        Graph::from_edges(ranks, self.pairs[..keep].iter().map(|p| (p.0, p.1)))
    }
}

/// The filter's first cut: how many pairs it keeps and its report.
fn filter_matrix(sorted: &SortedPairs, ranks: u32, threshold: Threshold) -> (usize, FilterReport) {
    let pairs = &sorted.pairs;
    let max_volume = sorted.max_volume();
    match threshold {
        Threshold::Percent(pct) => {
            let keep = pairs
                .iter()
                .take_while(|p| p.2 as f64 * 100.0 >= pct * max_volume as f64)
                .count();
            (keep, sorted.report("fixed", keep, pct, None))
        }
        Threshold::Auto => {
            let volumes: Vec<u64> = pairs.iter().map(|p| p.2).collect();
            let endpoints: Vec<(u32, u32)> = pairs.iter().map(|p| (p.0, p.1)).collect();
            match auto_threshold(&volumes, &endpoints, ranks) {
                Some((keep, ratio)) => (keep, sorted.report("auto", keep, sorted.cut_pct(keep), Some(ratio))),
                None => (pairs.len(), sorted.report("auto", pairs.len(), 0.0, None)),
            }
        }
    }
}

/// Whether a report names a topology: the whole graph's match, or one for every component.
fn identified(r: &TopologyReport) -> bool {
    r.identification.matched.is_some()
        || (!r.components.is_empty() && r.components.iter().all(|c| c.identification.matched.is_some()))
}

/// Identify the topology of a run from its communication matrix.
///
/// With the automatic threshold, when the widest gap's graph identifies no topology, the other
/// cuts of [`fallback_cuts`] are tried in order and the first whose whole graph a topology
/// matches is reported instead ([`FilterReport::fallback`] says which and why); identification
/// runs once more per cut tried, without near matches, only while nothing has matched.
pub fn identify_matrix(m: &CommMatrix, opts: &TopologyOptions) -> TopologyReport {
    let (pairs, metric) = pair_volumes(m);
    let total: u128 = pairs.iter().map(|p| p.3 as u128).sum();
    let sorted = SortedPairs { pairs, metric, total };
    let (keep, filter) = filter_matrix(&sorted, m.ranks(), opts.threshold);
    let volume: BTreeMap<(u32, u32), u64> = sorted.pairs.iter().map(|&(a, b, _, v)| ((a, b), v)).collect();
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
    let no_p2p = sorted.pairs.is_empty();
    let mut first = report(&sorted.graph(m.ranks(), keep), filter, no_p2p, &traffic, opts, None);
    if opts.threshold != Threshold::Auto || no_p2p || identified(&first) {
        return first;
    }
    let volumes: Vec<u64> = sorted.pairs.iter().map(|p| p.2).collect();
    let endpoints: Vec<(u32, u32)> = sorted.pairs.iter().map(|p| (p.0, p.1)).collect();
    let cuts = fallback_cuts(&volumes, &endpoints, m.ranks(), keep);
    if cuts.is_empty() {
        return first;
    }
    let mut fallback = CutFallback {
        widest: CutTried {
            pairs_kept: keep,
            threshold_pct: first.filter.threshold_pct,
            gap_ratio: first.filter.gap_ratio,
            removed_share: first.filter.removed_share,
            matched: None,
            milliseconds: first.identification.timings.total_ms,
        },
        tried: Vec::new(),
        taken: None,
    };
    let trial = TopologyOptions {
        near_matches: 0,
        ..opts.clone()
    };
    let identity: Vec<u32> = (0..m.ranks()).collect();
    for (keep, gap_ratio) in cuts {
        let g = sorted.graph(m.ranks(), keep);
        let id = identify(&g, &identity, &traffic, &trial);
        let filter = sorted.report("auto", keep, sorted.cut_pct(keep), gap_ratio);
        fallback.tried.push(CutTried {
            pairs_kept: keep,
            threshold_pct: filter.threshold_pct,
            gap_ratio,
            removed_share: filter.removed_share,
            matched: id.matched.as_ref().map(|t| t.label.clone()),
            milliseconds: id.timings.total_ms,
        });
        if id.matched.is_some() {
            fallback.taken = Some(fallback.tried.len() - 1);
            let mut found = report(&g, filter, false, &traffic, opts, Some(id));
            found.filter.fallback = Some(fallback);
            return found;
        }
    }
    first.filter.fallback = Some(fallback);
    first
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
        fallback: None,
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
    report(g, filter, g.num_edges() == 0, &traffic, opts, None)
}

fn report(
    g: &Graph,
    filter: FilterReport,
    no_p2p: bool,
    traffic: &dyn Fn(u32, u32) -> PairTraffic,
    opts: &TopologyOptions,
    identified: Option<Identification>,
) -> TopologyReport {
    let n = g.num_nodes();
    let identity: Vec<u32> = (0..n).collect();
    let identification = match identified {
        _ if no_p2p => empty_identification(g),
        Some(id) => id,
        None => identify(g, &identity, traffic, opts),
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
        placed_by: crate::logical::PlacedBy::Identification,
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
        timings: IdentificationTimings::default(),
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

    /// [`Candidate::describe`]'s label alone.
    fn label(&self) -> String {
        match self {
            Candidate::Spec(s) => s.label(),
            Candidate::Custom(_) => self.describe().label,
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
    let started = Instant::now();
    let n = g.num_nodes();
    let m = g.num_edges() as u64;
    let mut stages = Vec::new();
    // `start` is the stage's start, or why it was skipped; `twins` are the candidates known to be
    // isomorphic to a survivor, listed with it.
    let mut stage = |name: &str, start: Result<Instant, &String>, survivors: &[Candidate], twins: &Twins| {
        let (candidates, labels) = twins.expand(survivors);
        stages.push(Stage {
            name: name.into(),
            candidates,
            survivors: labels,
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
    let mut twins = Twins::default();
    stage("generated", Ok(t), &all, &twins);

    let t = Instant::now();
    let mut left: Vec<Candidate> = all.iter().filter(|c| c.edge_count() == m).cloned().collect();
    stage("nodes and edges", Ok(t), &left, &twins);

    let t = Instant::now();
    let degrees = g.degree_histogram();
    left.retain(|c| c.degrees() == degrees);
    stage("degree sequence", Ok(t), &left, &twins);

    let t = Instant::now();
    // Candidates with the same prime factors are the same graph: only the simplest goes through
    // the remaining stages, and the others share its fate.
    twins = Twins::group(&mut left);
    let grouping = t.elapsed();

    let iso_opts = IsoOptions {
        max_steps: opts.max_steps.unwrap_or(IsoOptions::for_nodes(n).max_steps),
        ..IsoOptions::for_nodes(n)
    };
    // About what an ordered proof of grids, tori, stencils and hypercubes costs.
    let quick = IsoOptions {
        max_steps: (4 * (n as u64 + 2 * m) + 1_000).min(iso_opts.max_steps),
        ..iso_opts
    };
    // The spectrum stage only eliminates; when nothing is left undecided the isomorphism has
    // decided alone, and the eigenvalues are computed for display after it, if wanted.
    let display = match opts.spectrum {
        SpectrumDisplay::Auto => n <= DISPLAY_SPECTRUM_NODES,
        SpectrumDisplay::Always => true,
        SpectrumDisplay::Never => false,
    };

    // One candidate left after the degree sequence (2D grids of any size: the corners and the
    // boundary pin the extents): the later invariants can only refute it, which the proof does
    // too. A quick ordered search under the degree colours (any joint colouring is valid for
    // the search) proves it in about one step per node and edge end, where joint refinement of
    // a grid runs its full 32 rounds first (most of an 8,100-rank identification). Exhausting
    // that search refutes the candidate; only when it runs out of its budget do the refinement,
    // the distance profile and the full search run as for several candidates.
    let t_first = Instant::now();
    let mut prebuilt: Option<Graph> = None;
    let mut decided: Option<(Graph, Colouring, IsoOutcome)> = None;
    if left.len() == 1 {
        let h = left[0].graph();
        let by_degree = refine_joint(&[g, &h], 0);
        match isomorphism_coloured(g, &h, Some(&by_degree), quick) {
            IsoOutcome::GaveUp { .. } => prebuilt = Some(h),
            done => decided = Some((h, by_degree, done)),
        }
    }
    let first_try = t_first.elapsed();

    let narrowed = match decided {
        Some((h, colouring, done)) => {
            let with_twins = twins.expand(&left).0;
            let reason = if with_twins > 1 {
                format!(
                    "{with_twins} candidates left, all the same product of paths and cycles: the isomorphism \
                     decides with one proof"
                )
            } else {
                "one candidate left: the isomorphism decides".to_string()
            };
            for name in ["colour refinement", "distance profile", "spectrum"] {
                stage(name, Err(&reason), &left, &twins);
            }
            Narrowed {
                graphs: vec![h],
                colourings: vec![Rc::new(colouring)],
                settled: vec![Some(done)],
                spectra: vec![None],
                quick_time: first_try + grouping,
                display_pending: display,
                walk_counts: Vec::new(),
                app_spectrum: None,
            }
        }
        None => {
            let t = Instant::now();
            let t = t.checked_sub(grouping).unwrap_or(t);
            let mut narrowed = narrow(
                g,
                &mut left,
                prebuilt,
                &twins,
                Elimination {
                    quick,
                    display,
                    refinement_start: t,
                    regular: degrees.len() <= 1,
                },
                &mut stage,
            );
            narrowed.quick_time += first_try;
            narrowed
        }
    };
    let Narrowed {
        graphs,
        colourings,
        settled: settled_kept,
        spectra: mut kept_spectra,
        quick_time,
        display_pending,
        walk_counts,
        app_spectrum,
    } = narrowed;

    // The isomorphism stage's time includes the quick searches above.
    let t = Instant::now();
    let t = t.checked_sub(quick_time).unwrap_or(t);
    let mut proved: Vec<Proved> = Vec::new();
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
            IsoOutcome::Isomorphic { mapping, .. } => {
                proved.extend(twins.of(c).map(|t| (Candidate::Spec(t.clone()), None, None)));
                proved.push((c.clone(), Some(mapping), s.take()));
            }
            IsoOutcome::GaveUp { steps } => {
                for label in std::iter::once(c.label()).chain(twins.of(c).map(TopologySpec::label)) {
                    gave_up.push(format!("{label} (gave up after {steps} steps)"));
                }
            }
            IsoOutcome::NotIsomorphic { .. } => {}
        }
    }
    // Simplest first; a group's representative is its simplest member, so the match has a mapping.
    twins.sort(&mut proved, |p| &p.0);
    let survivors: Vec<Candidate> = proved.iter().map(|p| p.0.clone()).collect();
    stage("isomorphism", Ok(t), &survivors, &Twins::default());

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
        timings: IdentificationTimings::default(),
    };
    let best = proved.into_iter().find(|p| p.1.is_some());
    if display_pending {
        let t = Instant::now();
        // Isomorphic graphs have the same eigenvalues: the match's closed form, when its family
        // has one, replaces the dense decomposition of the graph.
        let closed = match &best {
            Some((Candidate::Spec(s), _, _)) => s.closed_form_spectrum(SPECTRUM_MAX_NODES),
            _ => None,
        };
        out.spectrum = closed.or_else(|| spectrum(g));
        out.timings.display_spectrum_ms = t.elapsed().as_secs_f64() * 1e3;
    }
    if let Some((best, Some(mapping), s)) = best {
        let t = Instant::now();
        out.matched = Some(best.describe());
        out.mapping = places(&best, &mapping, ranks);
        out.candidate_spectrum = if display_pending { out.spectrum.clone() } else { s };
        out.timings.mapping_ms = t.elapsed().as_secs_f64() * 1e3;
    } else if opts.near_matches > 0 {
        let t = Instant::now();
        let undecided: Vec<String> = left
            .iter()
            .flat_map(|c| std::iter::once(c.label()).chain(twins.of(c).map(TopologySpec::label)))
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
    out.timings.total_ms = started.elapsed().as_secs_f64() * 1e3;
    out
}

/// What the elimination stages after the degree sequence leave for the isomorphism stage, one
/// entry per candidate left in each list.
struct Narrowed {
    graphs: Vec<Graph>,
    colourings: Vec<Rc<Colouring>>,
    /// The quick search's outcome, `None` where it gave up (the full search decides).
    settled: Vec<Option<IsoOutcome>>,
    /// Candidate eigenvalues, when the spectrum stage computed them for display.
    spectra: Vec<Option<Vec<f64>>>,
    /// Time of the quick searches (reported in the isomorphism stage).
    quick_time: Duration,
    /// Eigenvalues are wanted for display and were not computed by the spectrum stage.
    display_pending: bool,
    walk_counts: Vec<u64>,
    app_spectrum: Option<Vec<f64>>,
}

/// Settings of [`narrow`].
struct Elimination {
    /// Budget of the quick isomorphism searches.
    quick: IsoOptions,
    /// Eigenvalues are computed for display.
    display: bool,
    /// When the colour refinement stage began.
    refinement_start: Instant,
    /// The graph is regular (one degree).
    regular: bool,
}

/// The signature of the stage recorder of [`identify`].
type StageRecorder<'r> = dyn FnMut(&str, Result<Instant, &String>, &[Candidate], &Twins) + 'r;

/// Colour refinement, distance profile, quick isomorphism searches and the spectrum stage on
/// the candidates `left` (which it narrows); `prebuilt` is the first candidate's graph when it
/// was already built.
fn narrow(
    g: &Graph,
    left: &mut Vec<Candidate>,
    prebuilt: Option<Graph>,
    twins: &Twins,
    limits: Elimination,
    stage: &mut StageRecorder,
) -> Narrowed {
    let n = g.num_nodes();
    // Two regular graphs of the same size and degree are never told apart by refinement: the
    // candidates of a regular graph share one trivial colouring, and their graphs are only built
    // once the distance profile (computed from the structure for Cartesian families and
    // hypercubes) has kept them.
    let regular = limits.regular;
    let trivial = Rc::new(Colouring {
        colours: vec![vec![0; n as usize], vec![0; n as usize]],
        classes: 1,
        rounds: 0,
    });
    let mut lazy: Vec<Option<Graph>> = left.iter().map(|c| (!regular).then(|| c.graph())).collect();
    if let (Some(h), Some(slot)) = (prebuilt, lazy.first_mut()) {
        *slot = Some(h);
    }
    let mut colourings: Vec<Rc<Colouring>> = lazy
        .iter()
        .map(|h| match h {
            Some(h) => Rc::new(refine_joint(&[g, h], 32)),
            None => Rc::clone(&trivial),
        })
        .collect();
    // The shared trivial colouring agrees by construction (counting its histograms once per
    // candidate was 2.5 ms of 146 regular candidates at 8,100 ranks).
    let keep: Vec<bool> = colourings
        .iter()
        .map(|c| Rc::ptr_eq(c, &trivial) || c.histograms_agree())
        .collect();
    retain_pairs(left, &mut lazy, &keep);
    retain_mask(&mut colourings, &keep);
    stage("colour refinement", Ok(limits.refinement_start), left, twins);

    // An isomorphism maps the app's most distinctive node to a candidate node of the same
    // colour with the same distance profile; for vertex-transitive candidates any node will do.
    let t = Instant::now();
    let mut profiles: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    let keep: Vec<bool> = left
        .iter()
        .zip(lazy.iter_mut())
        .zip(&colourings)
        .map(|((c, h), col)| {
            let root = if Rc::ptr_eq(col, &trivial) {
                (n > 0).then_some(0)
            } else {
                let hist = col.histogram(0);
                (0..n).min_by_key(|&u| (hist[col.colours[0][u as usize] as usize], u))
            };
            let Some(root) = root else {
                return true;
            };
            let mine = profiles.entry(root).or_insert_with(|| distance_profile(g, root));
            let colour = col.colours[0][root as usize];
            if let Candidate::Spec(s) = c {
                if h.is_none() && s.is_vertex_transitive() {
                    if let Some(theirs) = s.structural_distance_profile(0, Some(mine)) {
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
    retain_pairs(left, &mut lazy, &keep);
    retain_mask(&mut colourings, &keep);
    let mut graphs: Vec<Graph> = lazy
        .into_iter()
        .zip(left.iter())
        .map(|(h, c)| h.unwrap_or_else(|| c.graph()))
        .collect();
    stage("distance profile", Ok(t), left, twins);

    // A quick, near-linear isomorphism search settles most candidates at once (ordered search
    // on grids, tori, stencils, hypercubes costs about one step per node and edge end): proved,
    // or refuted. Only the ones it leaves undecided go through the spectrum stage and the full
    // search. With one candidate left the full search runs directly.
    let t_quick = Instant::now();
    let settled: Vec<Option<IsoOutcome>> = if left.len() > 1 {
        graphs
            .iter()
            .zip(&colourings)
            .map(|(h, col)| match isomorphism_coloured(g, h, Some(col), limits.quick) {
                IsoOutcome::GaveUp { .. } => None,
                done => Some(done),
            })
            .collect()
    } else {
        vec![None; left.len()]
    };
    let quick_time = t_quick.elapsed();

    let undecided = settled.iter().filter(|s| s.is_none()).count();
    let mut walk_counts = Vec::new();
    let mut app_spectrum = None;
    let mut display_pending = false;
    let kept_spectra: Vec<Option<Vec<f64>>>;
    let mut settled_kept = settled;
    if undecided == 0 || left.len() <= 1 {
        display_pending = limits.display;
        // Candidates a quick search refuted leave here (they are not isomorphic).
        let keep: Vec<bool> = settled_kept
            .iter()
            .map(|s| !matches!(s, Some(IsoOutcome::NotIsomorphic { .. })))
            .collect();
        retain_pairs(left, &mut graphs, &keep);
        retain_mask(&mut colourings, &keep);
        retain_mask(&mut settled_kept, &keep);
        kept_spectra = vec![None; left.len()];
        let with_twins = twins.expand(left).0;
        let reason = match left.len() {
            0 if keep.is_empty() => "no candidate left".to_string(),
            1 if keep.len() == 1 && with_twins > 1 => format!(
                "the isomorphism search settled all {with_twins} candidates with one proof: the other {} are \
                 the same product of paths and cycles",
                with_twins - 1
            ),
            1 if keep.len() == 1 => "one candidate left: the isomorphism decides".to_string(),
            _ => format!(
                "the isomorphism search settled all {} candidates in near-linear time",
                keep.len()
            ),
        };
        stage("spectrum", Err(&reason), left, twins);
    } else {
        let t = Instant::now();
        let walks = closed_walks_within(g, WALK_BUDGET);
        let half = walks.counts.len() / 2;
        app_spectrum = if limits.display { spectrum(g) } else { None };
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
        retain_pairs(left, &mut graphs, &keep);
        retain_mask(&mut colourings, &keep);
        retain_mask(&mut settled_kept, &keep);
        walk_counts = walks.counts;
        stage("spectrum", Ok(t), left, twins);
    }

    Narrowed {
        graphs,
        colourings,
        settled: settled_kept,
        spectra: kept_spectra,
        quick_time,
        display_pending,
        walk_counts,
        app_spectrum,
    }
}

/// A candidate proved isomorphic to the graph: its mapping (`None` for a twin of the proved
/// representative) and its eigenvalues when the spectrum stage computed them.
type Proved<'a> = (Candidate<'a>, Option<Vec<u32>>, Option<Vec<f64>>);

/// Candidates known to be isomorphic to a representative candidate because both are Cartesian
/// products of the same paths and cycles (see `tracelogic_graph::closed_form`), with every
/// candidate's position in the generated list (to list them in that order).
#[derive(Default)]
struct Twins {
    of: BTreeMap<TopologySpec, Vec<TopologySpec>>,
    position: HashMap<TopologySpec, usize>,
}

impl Twins {
    /// Keep in `left` only the simplest candidate of each group with equal prime factors, and
    /// remember the others as its twins.
    fn group(left: &mut Vec<Candidate>) -> Twins {
        let mut groups: HashMap<Vec<PrimeFactor>, Vec<(usize, TopologySpec)>> = HashMap::new();
        for (i, c) in left.iter().enumerate() {
            if let Candidate::Spec(s) = c {
                if let Some(f) = s.prime_factors() {
                    groups.entry(f).or_default().push((i, s.clone()));
                }
            }
        }
        let mut twins = Twins::default();
        if groups.values().all(|g| g.len() == 1) {
            return twins;
        }
        // `left` is in generation order and every later survivor comes from it, so its
        // positions order the lists as the generated ones do.
        twins.position = left
            .iter()
            .enumerate()
            .filter_map(|(i, c)| match c {
                Candidate::Spec(s) => Some((s.clone(), i)),
                Candidate::Custom(_) => None,
            })
            .collect();
        let mut keep = vec![true; left.len()];
        for mut members in groups.into_values().filter(|g| g.len() > 1) {
            members.sort_by_key(|(_, s)| (simplicity(s), twins.position.get(s).copied()));
            let (_, rep) = members.remove(0);
            members.sort_by_key(|(_, s)| twins.position.get(s).copied());
            for (i, _) in &members {
                keep[*i] = false;
            }
            twins.of.insert(rep, members.into_iter().map(|(_, s)| s).collect());
        }
        retain_mask(left, &keep);
        twins
    }

    /// The twins of `c` (none for a custom pattern or a candidate without twins).
    fn of<'s>(&'s self, c: &Candidate) -> impl Iterator<Item = &'s TopologySpec> + 's {
        let list = match c {
            Candidate::Spec(s) => self.of.get(s).map(Vec::as_slice).unwrap_or(&[]),
            Candidate::Custom(_) => &[],
        };
        list.iter()
    }

    /// How many candidates `survivors` and their twins are, and the first 64 labels in the
    /// order they were generated.
    fn expand(&self, survivors: &[Candidate]) -> (usize, Vec<String>) {
        if self.of.is_empty() {
            return (
                survivors.len(),
                survivors.iter().take(64).map(Candidate::label).collect(),
            );
        }
        // Labels are formatted for the 64 listed only.
        let mut listed: Vec<(usize, Result<&Candidate, &TopologySpec>)> = survivors
            .iter()
            .enumerate()
            .flat_map(|(k, c)| {
                std::iter::once((self.order(c, k), Ok(c))).chain(
                    self.of(c)
                        .map(move |t| (self.position.get(t).copied().unwrap_or(usize::MAX), Err(t))),
                )
            })
            .collect();
        listed.sort_by_key(|l| l.0);
        let count = listed.len();
        let labels = listed
            .into_iter()
            .take(64)
            .map(|(_, c)| c.map_or_else(TopologySpec::label, Candidate::label))
            .collect();
        (count, labels)
    }

    /// Where `c` (the `k`-th survivor) was generated: custom patterns come after every family.
    fn order(&self, c: &Candidate, k: usize) -> usize {
        match c {
            Candidate::Spec(s) => self.position.get(s).copied().unwrap_or(usize::MAX),
            Candidate::Custom(_) => self.position.len() + k,
        }
    }

    /// Sort proved candidates simplest first, ties in generation order.
    fn sort<T>(&self, items: &mut [T], candidate: impl Fn(&T) -> &Candidate) {
        if self.of.is_empty() {
            items.sort_by_key(|p| candidate(p).simplicity());
        } else {
            items.sort_by_key(|p| {
                let c = candidate(p);
                let k = match c {
                    Candidate::Spec(s) => self.position.get(s).copied().unwrap_or(usize::MAX),
                    Candidate::Custom(_) => usize::MAX,
                };
                (c.simplicity(), k)
            });
        }
    }
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

/// Rank → coordinates and neighbours by direction of `spec` when world rank `r` plays node
/// `node_of_rank[r]` (a bijection onto the nodes of `spec`): the `mapping` rows of a
/// [`TopologyReport`] for a placement found some other way than identification's isomorphism.
pub fn place_ranks(spec: &TopologySpec, node_of_rank: &[u32]) -> Vec<RankPlace> {
    let ranks: Vec<u32> = (0..node_of_rank.len() as u32).collect();
    places(&Candidate::Spec(spec.clone()), node_of_rank, &ranks)
}

fn places(c: &Candidate, mapping: &[u32], ranks: &[u32]) -> Vec<RankPlace> {
    let mut rank_of_node = vec![0u32; mapping.len()];
    for (i, &node) in mapping.iter().enumerate() {
        rank_of_node[node as usize] = ranks[i];
    }
    let s = match c {
        Candidate::Spec(s) => s,
        Candidate::Custom(p) => return custom_places(p, mapping, ranks, &rank_of_node),
    };
    if s.family == Family::Star {
        return mapping
            .iter()
            .enumerate()
            .map(|(i, &node)| RankPlace {
                rank: ranks[i],
                node,
                coords: s.coords(node),
                neighbours: s
                    .neighbours(node)
                    .iter()
                    .map(|(d, v)| Neighbour {
                        direction: direction_name(d),
                        rank: rank_of_node[*v as usize],
                    })
                    .collect(),
            })
            .collect();
    }
    if s.family == Family::Hypercube {
        // Direction k flips bit k: every rank has all d neighbours, all different.
        let names: Vec<Cow<'static, str>> = s.directions().iter().map(direction_name).collect();
        return mapping
            .iter()
            .enumerate()
            .map(|(i, &node)| RankPlace {
                rank: ranks[i],
                node,
                coords: s.coords(node),
                neighbours: names
                    .iter()
                    .enumerate()
                    .map(|(k, name)| Neighbour {
                        direction: name.clone(),
                        rank: rank_of_node[(node ^ (1 << k)) as usize],
                    })
                    .collect(),
            })
            .collect();
    }
    if !s.family.is_cartesian() {
        // The directions and their names once (as `TopologySpec::neighbours`: first direction
        // reaching a node wins).
        let directions = s.directions();
        let names: Vec<Cow<'static, str>> = directions.iter().map(direction_name).collect();
        // `named_by[v] == i`: node v is already a neighbour of the i-th rank (constant time per
        // neighbour; a hypercube of 65,536 ranks has 16 per rank).
        let mut named_by = vec![u32::MAX; mapping.len()];
        return mapping
            .iter()
            .enumerate()
            .map(|(i, &node)| {
                let mut neighbours: Vec<Neighbour> = Vec::with_capacity(directions.len());
                for (d, name) in directions.iter().zip(&names) {
                    if let Some(v) = s.neighbour(node, d) {
                        if std::mem::replace(&mut named_by[v as usize], i as u32) != i as u32 {
                            neighbours.push(Neighbour {
                                direction: name.clone(),
                                rank: rank_of_node[v as usize],
                            });
                        }
                    }
                }
                RankPlace {
                    rank: ranks[i],
                    node,
                    coords: s.coords(node),
                    neighbours,
                }
            })
            .collect();
    }
    // Cartesian families: the directions and their names once, and each neighbour from the
    // node's coordinates by strides (as `TopologySpec::neighbours`: first direction reaching a
    // node wins, the node itself is not its neighbour).
    let offsets = s.offsets();
    let names: Vec<Cow<'static, str>> = offsets
        .iter()
        .map(|o| direction_name(&Direction::Offset(o.clone())))
        .collect();
    let periodic = s.family.periodic();
    let mut strides = vec![1i64; s.dims.len()];
    for k in 1..s.dims.len() {
        strides[k] = strides[k - 1] * s.dims[k - 1] as i64;
    }
    mapping
        .iter()
        .enumerate()
        .map(|(i, &node)| {
            let coords = s.coords(node);
            let mut neighbours: Vec<Neighbour> = Vec::with_capacity(offsets.len());
            'offsets: for (o, name) in offsets.iter().zip(&names) {
                let mut v = node as i64;
                for (k, &step) in o.iter().enumerate() {
                    if step == 0 {
                        continue;
                    }
                    let d = s.dims[k] as i64;
                    let x = coords[k] as i64 + step as i64;
                    let wrapped = if (0..d).contains(&x) { x } else { x.rem_euclid(d) };
                    if !periodic && wrapped != x {
                        continue 'offsets;
                    }
                    v += (wrapped - coords[k] as i64) * strides[k];
                }
                let v = v as u32;
                // Ranks and nodes are in one-to-one correspondence: a node already named has its
                // rank among the neighbours.
                let rank = rank_of_node[v as usize];
                if v != node && !neighbours.iter().any(|nb| nb.rank == rank) {
                    neighbours.push(Neighbour {
                        direction: name.clone(),
                        rank,
                    });
                }
            }
            RankPlace {
                rank: ranks[i],
                node,
                coords,
                neighbours,
            }
        })
        .collect()
}

/// A direction's name, shared when it is a fixed word.
fn direction_name(d: &Direction) -> Cow<'static, str> {
    d.static_name().map_or_else(|| Cow::Owned(d.name()), Cow::Borrowed)
}

/// Rank places of a custom pattern: its node ids are the coordinates.
fn custom_places(p: &CustomPattern, mapping: &[u32], ranks: &[u32], rank_of_node: &[u32]) -> Vec<RankPlace> {
    mapping
        .iter()
        .enumerate()
        .map(|(i, &node)| RankPlace {
            rank: ranks[i],
            node,
            coords: vec![node],
            neighbours: p
                .graph
                .neighbors(node)
                .iter()
                .map(|&v| Neighbour {
                    direction: Cow::Owned(format!("node{v}")),
                    rank: rank_of_node[v as usize],
                })
                .collect(),
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
            if lb == 0 && !undecided.contains(&c.label()) {
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
                gave_up.push(c.label());
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

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_graph::catalog::candidates;

    #[test]
    fn places_name_the_neighbours_of_the_family_definition() {
        // The Cartesian fast path against `TopologySpec::neighbours`, small extents included
        // (where two offsets reach the same node, or the node itself).
        let mut checked = 0;
        for n in [1u32, 2, 4, 6, 8, 9, 12, 18, 27, 36, 64] {
            for spec in candidates(n) {
                let mapping: Vec<u32> = (0..n).rev().collect();
                let ranks: Vec<u32> = (0..n).map(|r| r + 100).collect();
                let got = places(&Candidate::Spec(spec.clone()), &mapping, &ranks);
                for (i, place) in got.iter().enumerate() {
                    let node = mapping[i];
                    assert_eq!(place.rank, ranks[i]);
                    assert_eq!(place.coords, spec.coords(node), "{}", spec.label());
                    let expected: Vec<(String, u32)> = spec
                        .neighbours(node)
                        .into_iter()
                        .map(|(d, v)| (d.name(), ranks[(n - 1 - v) as usize]))
                        .collect();
                    let named: Vec<(String, u32)> = place
                        .neighbours
                        .iter()
                        .map(|nb| (nb.direction.to_string(), nb.rank))
                        .collect();
                    assert_eq!(named, expected, "{} node {node}", spec.label());
                }
                checked += 1;
            }
        }
        assert!(checked > 100, "{checked}");
    }

    #[test]
    fn equivalents_are_every_candidate_the_isomorphism_search_proves() {
        // Equivalents found through equal prime factors (one proof per group) against proving
        // every candidate one by one.
        use tracelogic_graph::catalog::simplicity;
        use tracelogic_graph::iso::{isomorphism, IsoOptions, IsoOutcome};
        for spec in [
            "hypercube:6",
            "torus:4x4",
            "torus:8x4x2",
            "grid:2x2x2",
            "torus:3x3",
            "ring:4",
            "grid:6x4",
        ] {
            let spec = TopologySpec::parse(spec).unwrap();
            let g = spec.graph();
            let n = g.num_nodes();
            let perm: Vec<u32> = (0..n).map(|u| (u * 7 + 3) % n).collect();
            let g = if n.is_multiple_of(7) { g } else { g.relabel(&perm) };
            let report = identify_graph(&g, &TopologyOptions::default());
            let got: Vec<String> = report
                .identification
                .equivalents
                .iter()
                .map(|e| e.label.clone())
                .collect();
            let mut expected: Vec<(usize, TopologySpec)> = candidates(n)
                .into_iter()
                .enumerate()
                .filter(|(_, c)| {
                    matches!(
                        isomorphism(&g, &c.graph(), IsoOptions::for_nodes(n)),
                        IsoOutcome::Isomorphic { .. }
                    )
                })
                .collect();
            expected.sort_by_key(|(i, c)| (simplicity(c), *i));
            let expected: Vec<String> = expected.iter().map(|(_, c)| c.label()).collect();
            assert_eq!(got, expected, "{}", spec.label());
            assert_eq!(report.identification.matched.as_ref().unwrap().label, expected[0]);
            assert!(report.identification.gave_up.is_empty());
            let stages = &report.identification.stages;
            assert_eq!(stages.last().unwrap().candidates, expected.len());
        }
    }
}
