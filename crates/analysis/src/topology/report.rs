//! What identification reports: the options, the filter's figures, the candidate-elimination
//! stages, the match with each rank's place, near matches and components.

use super::cuts::AUTO_MIN_GAP;
pub use super::one_way::{OneWayPair, OneWaySetAside};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use tracelogic_graph::Graph;

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
    /// Automatic mode: one-way pairs (a gather, a one-time transfer) set aside from a matched
    /// graph because the two-way pairs alone match a simpler topology (`one_way.rs`); they are
    /// also in `removed`. `None` when no pair was set aside.
    #[serde(default)]
    pub one_way: Option<OneWaySetAside>,
    /// Automatic mode: the widest gap passed over because cutting there would split one
    /// exchange by message size ([`SizeSplit`]); the fields above describe the cut taken.
    #[serde(default)]
    pub size_split: Option<SizeSplit>,
}

/// A gap in the byte weights the automatic filter does not cut at: the cut would leave the
/// ranks in separate groups while the pairs it removes exchange at least half as many messages
/// as the kept pair that exchanges fewest. Such pairs take part in every step of the same
/// exchange; only their messages are smaller (halo faces of other areas in an irregular mesh
/// partition: Code_Saturne's 132-face and 12-face neighbours, 8.9x apart in bytes, 8,509
/// messages each).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeSplit {
    /// Ratio of the byte weights on either side of the gap.
    pub gap_ratio: f64,
    /// Pairs the cut would have kept.
    pub pairs_kept: usize,
    /// Groups of ranks the kept pairs would have formed.
    pub groups: usize,
    /// Messages (larger direction) of the kept pair that exchanges fewest.
    pub kept_messages: u64,
    /// Messages (larger direction) of the removed pair that exchanges most.
    pub removed_messages: u64,
}

impl SizeSplit {
    /// One sentence for people; the CLI and the page print it under the filter's figures.
    pub fn summary(&self) -> String {
        format!(
            "Not cut at the {:.1}x gap in bytes: its {} heaviest pairs would leave the ranks in {} separate groups, \
             while the pairs below it exchange as many messages ({} against at least {}): one exchange whose \
             messages differ in size, not traffic off the pattern.",
            self.gap_ratio, self.pairs_kept, self.groups, self.removed_messages, self.kept_messages
        )
    }
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
    /// Ranks the widest gap's cut left without an edge while every component of its graph
    /// matched a topology (the whole graph none): then only a count cut naming the whole graph
    /// with every rank in it is taken. Empty when the widest gap's graph matched nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_apart: Vec<u32>,
}

impl CutFallback {
    /// One sentence for people: that the widest gap's graph matched nothing, and which cut was
    /// taken instead (or that none of those tried matched either). The CLI and the web view
    /// show it under the filtering figures.
    pub fn summary(&self) -> String {
        let cut = |c: &CutTried| match (c.gap_ratio, &c.declared_by) {
            (None, Some(grid)) => format!(
                "keeping every pair, each in a row or column of the {grid} the program's communicators declare,"
            ),
            (None, None) => "keeping every pair".to_owned(),
            (Some(g), _) if c.metric == self.widest.metric => format!("the {g:.1}x gap"),
            (Some(g), _) => format!("the {g:.1}x gap in {}", c.metric),
        };
        let first = match self.widest.gap_ratio {
            Some(g) => format!("the widest gap ({g:.1}x, {} pairs kept)", self.widest.pairs_kept),
            None => format!("keeping every pair (no gap of {AUTO_MIN_GAP}x or more was cut)"),
        };
        let first = if self.set_apart.is_empty() {
            format!("{first} identified no topology")
        } else {
            let ranks: Vec<String> = self.set_apart.iter().map(u32::to_string).collect();
            format!(
                "{first} matched its components only, setting rank(s) {} apart",
                ranks.join(", ")
            )
        };
        match self.taken.and_then(|i| self.tried.get(i).map(|c| (i, c))) {
            Some((i, c)) => format!(
                "{first}; {} ({} pairs kept, {:.3} % of the traffic removed) is the first \
                 of the other cuts that names the whole graph ({} tried).",
                cut(c),
                c.pairs_kept,
                100.0 * c.removed_share,
                i + 1
            ),
            None => format!(
                "{first}, nor did the {} other cut(s) tried: {}.",
                self.tried.len(),
                self.tried.iter().map(cut).collect::<Vec<_>>().join(", ")
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
    /// What the cut's weights count: `bytes`, or `messages` (after every cut of the bytes
    /// failed, or for a trace whose messages carry no byte).
    #[serde(default = "bytes_metric")]
    pub metric: String,
    /// For the cut keeping every pair tried last: the process grid the program's communicators
    /// declare whose rows and columns hold every pair (`3x6 process grid`); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_by: Option<String>,
}

fn bytes_metric() -> String {
    "bytes".into()
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
    /// When no topology matched the whole graph and it is equal disjoint cliques (every rank
    /// talking to all of its group and nobody else): their name, the rows (or the columns) of a
    /// process grid — a phase of dense linear algebra that only uses one of the two.
    #[serde(default)]
    pub cliques: Option<CliqueGroups>,
    /// The Cartesian topologies the program declared (`MPI_Cart_create`), each compared with
    /// the observed graph; filled from the trace by [`super::declared::attach`] (empty for a
    /// bare matrix or graph, and for a trace that declares none).
    #[serde(default)]
    pub declared: Vec<super::declared::DeclaredTopology>,
    /// The name to give the run's topology when a declared one agrees with the whole observed
    /// graph: its label in the declared extents ("2x2x3 torus", where identification's simplest
    /// name is "4x3 torus"); `None` otherwise (the match's label stands).
    #[serde(default)]
    pub name_as_declared: Option<String>,
    /// The process grids declared by row and column communicators (BLACS, HPL: no
    /// `MPI_Cart_create`), each compared with the observed graph; filled by
    /// [`super::declared::attach`]. When one agrees and no Cartesian declaration names the run,
    /// `name_as_declared` is its label (`2x3 process grid`).
    #[serde(default)]
    pub communicator_grids: Vec<super::comm_grid::CommunicatorGrid>,
    /// Process grids that row and column communicators declare on part of the ranks
    /// (Quantum ESPRESSO's ortho group: ScaLAPACK on 4 of 8 ranks); listed, never the run's
    /// name. Filled by [`super::declared::attach`].
    #[serde(default)]
    pub sub_grids: Vec<super::sub_grid::SubGrid>,
    /// The search for those grids stopped at its step budget (a trace declaring thousands of
    /// overlapping communicators): a grid beyond it is not listed.
    #[serde(default)]
    pub grid_search_incomplete: bool,
}

impl TopologyReport {
    /// The filtered graph in words, as both shells print it (`Graph:`): ranks, edges and the
    /// ranks without an edge, told apart by why: `without traffic` (no point-to-point message at
    /// all, or none in a selection) or `set apart by the filter` (every pair of theirs lies
    /// below the cut: a master that sends its workers a few bytes, [`super::cuts::minor_ranks`]).
    pub fn graph_line(&self) -> String {
        let counted = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut line = format!(
            "{}, {}",
            counted(self.identification.ranks as usize, "rank", "ranks"),
            counted(self.edges.len(), "edge", "edges")
        );
        let cut: std::collections::BTreeSet<u32> = self.filter.removed.iter().flat_map(|p| [p.a, p.b]).collect();
        let (set_apart, silent): (Vec<u32>, Vec<u32>) = self.isolated_ranks.iter().partition(|r| cut.contains(r));
        if !silent.is_empty() {
            line.push_str(&format!(", {} without traffic", counted(silent.len(), "rank", "ranks")));
        }
        if !set_apart.is_empty() {
            let listed: Vec<String> = set_apart.iter().take(8).map(u32::to_string).collect();
            let more = if set_apart.len() > 8 { ", …" } else { "" };
            line.push_str(&format!(
                ", {} set apart by the filter ({}{more})",
                counted(set_apart.len(), "rank", "ranks"),
                listed.join(", ")
            ));
        }
        line
    }

    /// What both shells say under the declared grids when their search stopped early.
    pub fn grid_search_note(&self) -> Option<String> {
        self.grid_search_incomplete.then(|| {
            "Declared grids: the search over the trace's communicators stopped at its step budget; a grid \
             declared beyond it is not listed."
                .to_string()
        })
    }

    /// What follows the declared name (`name_as_declared`), as both shells show it: `declared by
    /// MPI_Cart_create; identified as 4x3 torus`, or for a grid no shape of the library matches
    /// `declared by its row and column communicators; no shape of the library matches: 4
    /// point-to-point pairs lie off the grid (26.6 % of the bytes)`. `None` without a declared
    /// name.
    pub fn declared_note(&self) -> Option<String> {
        let name = self.name_as_declared.as_ref()?;
        let by = if self.declared.iter().any(|d| &d.label == name) {
            "MPI_Cart_create"
        } else {
            "its row and column communicators"
        };
        let component = match self.components.as_slice() {
            [c] => c.identification.matched.as_ref().map(|m| (m, &c.ranks)),
            _ => None,
        };
        Some(match (&self.identification.matched, component) {
            (Some(m), _) => format!("declared by {by}; identified as {}", m.label),
            // One group of ranks talks, the others have no edge (a master set apart).
            (None, Some((m, ranks))) => {
                let listed: Vec<String> = ranks.iter().map(u32::to_string).collect();
                format!(
                    "declared by {by}; identified as {} on ranks {}",
                    m.label,
                    listed.join(",")
                )
            }
            (None, None) => {
                let off = self.communicator_grids.iter().find(|g| &g.label == name);
                match off.filter(|g| g.pairs_off_grid > 0) {
                    Some(g) => format!(
                        "declared by {by}; no shape of the library matches: {} point-to-point pair{} off the \
                         grid ({:.1} % of the bytes)",
                        g.pairs_off_grid,
                        if g.pairs_off_grid == 1 { " lies" } else { "s lie" },
                        100.0 * g.off_grid_share
                    ),
                    None => format!("declared by {by}; no shape of the library matches"),
                }
            }
        })
    }
}

/// Equal disjoint cliques named as the rows or columns of a process grid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CliqueGroups {
    /// `rows of a 2x4 process grid`, `columns of a 4x3 process grid`, or `3 disjoint 4-rank
    /// all-to-alls (the rows or columns of a process grid)`.
    pub label: String,
    /// Number of cliques.
    pub count: u32,
    /// Ranks per clique.
    pub size: u32,
    /// Whether the cliques are consecutive ranks (`rows`), ranks equal modulo their count
    /// (`columns`), or neither (`unordered`).
    pub layout: tracelogic_graph::families::CliqueLayout,
}
