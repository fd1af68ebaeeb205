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
//!
//! The modules, in the order a run goes through them: [`cuts`] (which pairs become edges),
//! `search` (candidate elimination and proof), `placement` (each rank's coordinates and
//! directions), `near` (closest candidates when nothing matches), [`declared`] (the topology
//! the program declared, against the one observed: `MPI_Cart_create`, or row and column
//! communicators, [`comm_grid`]); [`report`] holds the result types.

pub mod comm_grid;
pub mod cuts;
pub mod declared;
pub mod grid_lines;
pub mod report;
pub mod sub_grid;

mod one_way;

mod candidate;
mod near;
mod placement;
mod search;

pub use cuts::{
    auto_threshold, candidate_cuts, fallback_cuts, first_auto_cut, pair_volumes, PairVolume, AUTO_MIN_GAP,
    FALLBACK_MIN_GAP, MAX_FALLBACK_CUTS,
};
pub use placement::place_ranks;
pub use report::*;
pub use tracelogic_graph;

use crate::matrix::{CommMatrix, Metric};
use cuts::{filter_matrix, filter_metric, SortedPairs};
use search::identify;
use std::collections::BTreeMap;
use tracelogic_graph::families::disjoint_cliques;
use tracelogic_graph::Graph;

/// Whether a report names a topology: the whole graph's match, or one for every component.
fn identified(r: &TopologyReport) -> bool {
    r.identification.matched.is_some()
        || (!r.components.is_empty() && r.components.iter().all(|c| c.identification.matched.is_some()))
}

/// Identify the topology of a run from its communication matrix.
///
/// With the automatic threshold, when the widest gap's graph identifies no topology, the other
/// cuts of [`fallback_cuts`] are tried in order and the first whose whole graph a topology
/// matches, or which is equal disjoint cliques ([`disjoint_cliques`]), is reported instead ([`FilterReport::fallback`] says which and why); identification
/// runs once more per cut tried, without near matches, only while nothing has matched.
pub fn identify_matrix(m: &CommMatrix, opts: &TopologyOptions) -> TopologyReport {
    identify_matrix_declared(m, opts, &|_| None)
}

/// [`identify_matrix`] knowing what the program declared: `grid_of(pairs)` names the process
/// grid whose rows and columns, declared by the program's communicators, hold every one of
/// `pairs` ([`declared::grid_holding`]), or `None`. When no cut of the automatic filter names
/// the graph, the graph of every pair is tried last if such a grid holds it: a pair the filter
/// found light is no stray traffic when it lies on a line the program declared (GROMACS on a 3x6
/// PME grid: the rows' antipodal pairs carry 808 bytes each, 1,647x below the rest, and without
/// them the rows are no cliques). Called only when every other cut failed.
pub fn identify_matrix_declared(
    m: &CommMatrix,
    opts: &TopologyOptions,
    grid_of: &dyn Fn(&[[u32; 2]]) -> Option<String>,
) -> TopologyReport {
    let sorted = SortedPairs::of(m, filter_metric(m));
    let total = sorted.total;
    // The pairs by message count, once: the first cut's size-split test and the fallback's
    // count cuts both read them (automatic mode on bytes only).
    let by_count =
        (opts.threshold == Threshold::Auto && sorted.metric == "bytes").then(|| SortedPairs::of(m, Metric::Messages));
    let counts: Option<BTreeMap<(u32, u32), u64>> = by_count
        .as_ref()
        .map(|c| c.pairs.iter().map(|p| ((p.0, p.1), p.2)).collect());
    let (keep, filter) = filter_matrix(&sorted, m.ranks(), opts.threshold, counts.as_ref());
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
    let found = by_cuts(m, opts, &sorted, by_count.as_ref(), keep, filter, &traffic, grid_of);
    match opts.threshold {
        Threshold::Auto => set_aside_one_way(m, found, opts, &traffic),
        Threshold::Percent(_) => found,
    }
}

/// The match with one-way pairs set aside (`one_way.rs`), when the two-way pairs alone match a
/// simpler topology; else `found` unchanged.
fn set_aside_one_way(
    m: &CommMatrix,
    found: TopologyReport,
    opts: &TopologyOptions,
    traffic: &dyn Fn(u32, u32) -> PairTraffic,
) -> TopologyReport {
    let Some(first) = found.identification.matched.as_ref() else {
        return found;
    };
    let Some(simple) = one_way::match_simplicity(first) else {
        return found;
    };
    let g = Graph::from_edges(m.ranks(), found.edges.iter().map(|e| (e[0], e[1])));
    let Some((two_way, pairs, gap)) = one_way::two_way_part(m, &g) else {
        return found;
    };
    let identity: Vec<u32> = (0..m.ranks()).collect();
    // Only a match is kept: no near matches of a graph that matches nothing (as the fallback).
    let trial = TopologyOptions {
        near_matches: 0,
        ..opts.clone()
    };
    let id = identify(&two_way, &identity, traffic, &trial);
    let simpler = id
        .matched
        .as_ref()
        .and_then(one_way::match_simplicity)
        .is_some_and(|s| s < simple);
    if !simpler {
        return found;
    }
    // Every pair set aside was an edge, so a communicating pair of `sorted`.
    let mut filter = found.filter.clone();
    for p in &pairs {
        let t = traffic(p.from, p.to);
        filter.removed_share += t.share;
        filter.removed.push(t);
    }
    filter
        .removed
        .sort_by(|x, y| y.volume.cmp(&x.volume).then((x.a, x.b).cmp(&(y.a, y.b))));
    filter.pairs_kept = two_way.num_edges();
    filter.one_way = Some(OneWaySetAside {
        pairs,
        message_gap: gap,
        with_them: first.label.clone(),
    });
    report(&two_way, filter, false, traffic, opts, Some(id))
}

/// The first cut's report, or the first fallback cut's that matches (see [`identify_matrix`] and
/// [`identify_matrix_declared`]).
#[allow(clippy::too_many_arguments)]
fn by_cuts(
    m: &CommMatrix,
    opts: &TopologyOptions,
    sorted: &SortedPairs,
    by_count: Option<&SortedPairs>,
    keep: usize,
    filter: FilterReport,
    traffic: &dyn Fn(u32, u32) -> PairTraffic,
    grid_of: &dyn Fn(&[[u32; 2]]) -> Option<String>,
) -> TopologyReport {
    let no_p2p = sorted.pairs.is_empty();
    let mut first = report(&sorted.graph(m.ranks(), keep), filter, no_p2p, traffic, opts, None);
    if opts.threshold != Threshold::Auto || no_p2p || first.identification.matched.is_some() {
        return first;
    }
    // Every component matched but ranks were set apart: only a count cut that names the whole
    // graph, every rank in it, replaces that answer. A master handing out jobs sends many small
    // messages: the bytes set it apart, the counts do not (mplrs on 8 ranks: its master's
    // pairs are 0.6–0.9 % of the bytes and 157–359 messages, as many as the consumer's).
    let components_only = identified(&first);
    let (volumes, endpoints) = sorted.weights_and_ends();
    // Ranks with traffic (`isolated_ranks` also lists silent ones).
    let mut talks = vec![false; m.ranks() as usize];
    for &(a, b) in &endpoints {
        talks[a as usize] = true;
        talks[b as usize] = true;
    }
    let set_apart: Vec<u32> = if components_only {
        first
            .isolated_ranks
            .iter()
            .copied()
            .filter(|&r| talks[r as usize])
            .collect()
    } else {
        Vec::new()
    };
    if components_only && set_apart.is_empty() {
        return first;
    }
    let cuts: Vec<(usize, Option<f64>)> = if components_only {
        Vec::new()
    } else {
        fallback_cuts(&volumes, &endpoints, m.ranks(), keep)
    };
    // Then cuts of the message counts (when bytes were cut): one-time bulk transfers (a
    // gather of results, a redistribution) can weigh as much in bytes as the exchange repeated
    // every step, and sit far below it in messages (PETSc's `-dm_view` gathers to rank 0).
    let count_cuts: Vec<(usize, Option<f64>)> = by_count.map_or_else(Vec::new, |c| {
        let (w, e) = c.weights_and_ends();
        let all = candidate_cuts(&w, &e, m.ranks(), FALLBACK_MIN_GAP);
        // As for bytes: no pair below the widest gap of at least AUTO_MIN_GAP is taken back
        // (DOLFINx on 4 ranks: a set-up pair of 12 messages against 268-280 on the halo pairs).
        let bound = all.first().filter(|c| c.1 >= AUTO_MIN_GAP).map_or(usize::MAX, |c| c.0);
        all.into_iter()
            .filter(|c| c.0 <= bound)
            .take(MAX_FALLBACK_CUTS)
            .map(|(k, g)| (k, Some(g)))
            .collect()
    });
    // Last, every pair, when a grid the program declared holds them all (not where components
    // matched: that answer stands); asked only once every other cut has failed.
    let every_pair = || -> Option<String> {
        if components_only || sorted.pairs.len() <= keep {
            return None;
        }
        let pairs: Vec<[u32; 2]> = sorted.pairs.iter().map(|p| [p.0, p.1]).collect();
        grid_of(&pairs)
    };
    let mut fallback = CutFallback {
        widest: CutTried {
            pairs_kept: keep,
            threshold_pct: first.filter.threshold_pct,
            gap_ratio: first.filter.gap_ratio,
            removed_share: first.filter.removed_share,
            matched: None,
            milliseconds: first.identification.timings.total_ms,
            metric: sorted.metric.into(),
            declared_by: None,
        },
        tried: Vec::new(),
        taken: None,
        set_apart,
    };
    let trial = TopologyOptions {
        near_matches: 0,
        ..opts.clone()
    };
    let identity: Vec<u32> = (0..m.ranks()).collect();
    // One cut tried: its report when it names the whole graph.
    let mut attempt = |pairs: &SortedPairs, keep: usize, gap_ratio: Option<f64>, declared_by: Option<String>| {
        let g = pairs.graph(m.ranks(), keep);
        let id = identify(&g, &identity, traffic, &trial);
        // Equal disjoint cliques (each of at least 3 ranks) are a named structure too: groups
        // of ranks that only talk among themselves, such as MrBayes's independent runs, whose
        // chains swap states within a run, once a rank's light gathers to rank 0 are cut.
        let cliques = if id.matched.is_none() && !components_only {
            disjoint_cliques(&g)
        } else {
            None
        };
        let filter = pairs.report("auto", keep, pairs.cut_pct(keep), gap_ratio);
        fallback.tried.push(CutTried {
            pairs_kept: keep,
            threshold_pct: filter.threshold_pct,
            gap_ratio,
            removed_share: filter.removed_share,
            matched: id
                .matched
                .as_ref()
                .map(|t| t.label.clone())
                .or_else(|| cliques.as_ref().map(|c| c.label())),
            milliseconds: id.timings.total_ms,
            metric: pairs.metric.into(),
            declared_by,
        });
        let whole =
            !components_only || (id.matched.is_some() && (0..m.ranks()).all(|r| !talks[r as usize] || g.degree(r) > 0));
        ((id.matched.is_some() || cliques.is_some()) && whole).then(|| {
            fallback.taken = Some(fallback.tried.len() - 1);
            report(&g, filter, false, traffic, opts, Some(id))
        })
    };
    // The byte cuts (fewer pairs than the widest), then the count cuts, then every pair on a
    // declared grid.
    let tries = cuts
        .into_iter()
        .map(|c| (sorted, c))
        .chain(count_cuts.into_iter().filter_map(|c| Some((by_count?, c))));
    let mut found = None;
    for (pairs, (keep, gap_ratio)) in tries {
        found = attempt(pairs, keep, gap_ratio, None);
        if found.is_some() {
            break;
        }
    }
    if found.is_none() {
        if let Some(grid) = every_pair() {
            found = attempt(sorted, sorted.pairs.len(), None, Some(grid));
        }
    }
    match found {
        Some(mut found) => {
            found.filter.fallback = Some(fallback);
            found
        }
        None => {
            if !components_only && !fallback.tried.is_empty() {
                first.filter.fallback = Some(fallback);
            }
            first
        }
    }
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
        one_way: None,
        size_split: None,
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
    let cliques = match &identification.matched {
        None if !no_p2p => disjoint_cliques(g).map(|c| CliqueGroups {
            label: c.label(),
            count: c.count,
            size: c.size,
            layout: c.layout,
        }),
        _ => None,
    };
    TopologyReport {
        no_point_to_point: no_p2p,
        filter,
        edges: g.edges().map(|(a, b)| [a, b]).collect(),
        isolated_ranks,
        identification,
        placed_by: crate::logical::PlacedBy::Identification,
        components,
        cliques,
        declared: Vec::new(),
        name_as_declared: None,
        communicator_grids: Vec::new(),
        sub_grids: Vec::new(),
        grid_search_incomplete: false,
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

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_graph::catalog::candidates;
    use tracelogic_graph::TopologySpec;

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
