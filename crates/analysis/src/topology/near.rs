//! Near matches: when nothing matches, the closest candidates aligned by a bounded search,
//! with the edges that differ (docs/topology.md §5).

use super::candidate::Candidate;
use super::report::{NearMatch, PairTraffic};
use std::collections::BTreeMap;
use tracelogic_graph::invariants::distance_profile;
use tracelogic_graph::near::align_bounded;
use tracelogic_graph::Graph;

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

/// L1 distance between two distance profiles (missing levels count as 0).
fn profile_distance(a: &[u32], b: &[u32]) -> u64 {
    (0..a.len().max(b.len()))
        .map(|i| a.get(i).copied().unwrap_or(0).abs_diff(b.get(i).copied().unwrap_or(0)) as u64)
        .sum()
}

/// Closest candidates: the ones with the smallest degree-sequence lower bound are aligned with
/// a bounded greedy search; the best alignments are reported with their differing edges, and
/// the candidates whose search ran out of budget without an alignment are named.
pub(super) fn near_matches(
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
