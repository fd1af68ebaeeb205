//! Maximum common edge subgraph of two graphs over all node correspondences (PACPM,
//! Definition 6): the bijection of nodes under which the most edges of one graph land on edges
//! of the other. Its edge count `|E_S|` gives the graph similarity `ε = 2|E_S| / (|E_G| + |E_H|)`.
//!
//! The search goes from cheap to costly and stops as soon as the best correspondence found
//! reaches a proven upper bound:
//! 1. identical edge sets (the identity), then the isomorphism engine of [`crate::iso`] when
//!    node count, edge count and degree sequence agree (`ε = 1` with a verified mapping);
//! 2. the upper bound of the degree sequences: under any bijection a node keeps at most
//!    `min(deg_G(u), deg_H(π u))` edges, and pairing both degree sequences sorted the same way
//!    maximises that sum, so `|E_S| ≤ ½ Σ min(sorted)`;
//! 3. lower bounds: the identity, and a greedy that follows the VF2++ order of one graph and
//!    maps each node to the free node agreeing with most already-mapped neighbours (restarted from
//!    a few roots), each polished by a swap local search;
//! 4. branch and bound over the same order, every free node of the other graph a candidate,
//!    pruned by a bound that pairs the free nodes' degrees towards mapped nodes and towards free
//!    nodes (the same sorted-pairing argument as step 2, kept up to date incrementally).
//!
//! Every step counts against one step budget, so a large graph gives a lower bound with the best
//! upper bound known ([`CommonSubgraph::exact`] is false), never an endless search. The result
//! does not depend on argument order: the pair is put in a canonical order before searching and
//! the mapping inverted back.

use crate::iso::{isomorphism, matching_order, IsoOptions, IsoOutcome};
use crate::refine::refine;
use crate::Graph;
use serde::{Deserialize, Serialize};

const NONE: u32 = u32::MAX;

/// Limits of one common-subgraph search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct McsOptions {
    /// Elementary steps (candidate pairs tried, swaps evaluated) before the search settles for
    /// the best correspondence found so far.
    pub max_steps: u64,
}

impl McsOptions {
    /// Defaults that scale with the graph: 2 million steps plus 256 per node, at most 16 million
    /// (a few seconds natively; beyond, the result is a bound however long one searches).
    pub fn for_nodes(n: u32) -> McsOptions {
        McsOptions {
            max_steps: (2_000_000 + 256 * n as u64).min(16_000_000),
        }
    }
}

/// Which stage of the search settled the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum McsMethod {
    /// The graphs have the same edges; the identity keeps them all.
    Identical,
    /// The isomorphism engine found a verified mapping: every edge is kept.
    Isomorphism,
    /// A heuristic correspondence reached the degree-sequence upper bound, which proves it best.
    Bound,
    /// Branch and bound explored the whole search space: the result is the maximum.
    BranchAndBound,
    /// The step budget ran out: the result is a lower bound.
    BoundedSearch,
}

/// A maximum (or, when the budget ran out, the best found) common edge subgraph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommonSubgraph {
    /// For each node `u` of the first graph, the node of the second it corresponds to, or
    /// `u32::MAX` when the second graph has fewer nodes and `u` corresponds to none.
    pub mapping: Vec<u32>,
    /// `|E_S|`: edges of the first graph whose image is an edge of the second.
    pub common_edges: usize,
    /// A proven upper bound on `|E_S|` over all correspondences (equal to `common_edges` when
    /// exact).
    pub upper_bound: usize,
    /// True when `common_edges` is proven maximal.
    pub exact: bool,
    /// Edges of the first graph.
    pub edges_first: usize,
    /// Edges of the second graph.
    pub edges_second: usize,
    /// The stage that settled the result.
    pub method: McsMethod,
    /// Steps spent.
    pub steps: u64,
}

impl CommonSubgraph {
    /// `ε = 2|E_S| / (|E_G| + |E_H|)` of the correspondence found (a lower bound unless
    /// [`CommonSubgraph::exact`]); 1 when neither graph has an edge (nothing differs).
    pub fn epsilon(&self) -> f64 {
        ratio(self.common_edges, self.edges_first + self.edges_second)
    }

    /// `ε` of the upper bound: no correspondence can do better.
    pub fn epsilon_upper(&self) -> f64 {
        ratio(self.upper_bound, self.edges_first + self.edges_second)
    }
}

fn ratio(common: usize, total: usize) -> f64 {
    if total == 0 {
        1.0
    } else {
        2.0 * common as f64 / total as f64
    }
}

/// Edges of `g` (as `g` node pairs `(u, v)`, `u < v`) whose image under `mapping` is an edge
/// of `h`: the common subgraph, drawn on `g`. Nodes mapped to `u32::MAX` keep no edge.
pub fn common_edge_list(g: &Graph, h: &Graph, mapping: &[u32]) -> Vec<(u32, u32)> {
    g.edges()
        .filter(|&(u, v)| {
            let (a, b) = (mapping[u as usize], mapping[v as usize]);
            a != NONE && b != NONE && a < h.num_nodes() && b < h.num_nodes() && h.has_edge(a, b)
        })
        .collect()
}

/// Number of edges of `g` whose image under `mapping` is an edge of `h`.
pub fn common_edge_count(g: &Graph, h: &Graph, mapping: &[u32]) -> usize {
    common_edge_list(g, h, mapping).len()
}

/// Largest possible sum of `min(a_i, b_π(i))` over bijections: pair the two sequences, given as
/// histograms (`hist[d]` = how many entries equal `d`), sorted the same way. Shorter histograms
/// count as padded with zeros.
fn paired_min(hist_a: &[u32], hist_b: &[u32]) -> u64 {
    let (mut i, mut j) = (hist_a.len(), hist_b.len());
    let (mut left_a, mut left_b) = (0u32, 0u32);
    let mut sum = 0u64;
    loop {
        while left_a == 0 && i > 0 {
            i -= 1;
            left_a = hist_a[i];
        }
        while left_b == 0 && j > 0 {
            j -= 1;
            left_b = hist_b[j];
        }
        if left_a == 0 || left_b == 0 || i == 0 || j == 0 {
            return sum;
        }
        let take = left_a.min(left_b);
        sum += take as u64 * i.min(j) as u64;
        left_a -= take;
        left_b -= take;
    }
}

fn degree_hist(g: &Graph) -> Vec<u32> {
    let mut h = vec![0u32; g.max_degree() as usize + 1];
    for u in 0..g.num_nodes() {
        h[g.degree(u) as usize] += 1;
    }
    h
}

/// The degree-sequence upper bound on `|E_S|`: `⌊½ Σ min(sorted degrees)⌋` (never more than the
/// smaller edge count). Graphs with different node counts are compared as if padded with
/// isolated nodes.
pub fn degree_sequence_bound(g: &Graph, h: &Graph) -> usize {
    (paired_min(&degree_hist(g), &degree_hist(h)) / 2) as usize
}

/// `g` with isolated nodes added up to `n` nodes.
fn padded(g: &Graph, n: u32) -> Graph {
    if g.num_nodes() == n {
        g.clone()
    } else {
        Graph::from_edges(n, g.edges())
    }
}

/// A key ordering graphs totally, so the search runs on the same (first, second) pair whichever
/// way round it was asked.
fn canonical_key(g: &Graph) -> (usize, u32, Vec<(u32, u32)>) {
    (g.num_edges(), g.num_nodes(), g.edges().collect())
}

/// The maximum common edge subgraph of `g` and `h` over all bijections of their nodes (graphs
/// with different node counts are padded with isolated nodes), within `opts.max_steps`.
pub fn maximum_common_edge_subgraph(g: &Graph, h: &Graph, opts: McsOptions) -> CommonSubgraph {
    let n = g.num_nodes().max(h.num_nodes());
    let swap = canonical_key(g) > canonical_key(h);
    let (first, second) = if swap { (h, g) } else { (g, h) };
    let (a, b) = (padded(first, n), padded(second, n));
    let found = search(&a, &b, opts);
    // Back to the caller's order and node counts.
    let mapping_ab = found.mapping;
    let mapping_gh: Vec<u32> = if swap {
        let mut inv = vec![NONE; n as usize];
        for (u, &v) in mapping_ab.iter().enumerate() {
            inv[v as usize] = u as u32;
        }
        inv
    } else {
        mapping_ab
    };
    let mapping: Vec<u32> = mapping_gh[..g.num_nodes() as usize]
        .iter()
        .map(|&v| if v < h.num_nodes() { v } else { NONE })
        .collect();
    CommonSubgraph {
        common_edges: found.common,
        upper_bound: found.upper,
        exact: found.common == found.upper,
        edges_first: g.num_edges(),
        edges_second: h.num_edges(),
        method: found.method,
        steps: found.steps,
        mapping,
    }
}

struct Found {
    mapping: Vec<u32>,
    common: usize,
    upper: usize,
    method: McsMethod,
    steps: u64,
}

fn search(a: &Graph, b: &Graph, opts: McsOptions) -> Found {
    let n = a.num_nodes();
    let identity: Vec<u32> = (0..n).collect();
    let settled = |mapping: Vec<u32>, common: usize, method, steps| Found {
        mapping,
        common,
        upper: common,
        method,
        steps,
    };
    if a == b {
        return settled(identity, a.num_edges(), McsMethod::Identical, 0);
    }
    let upper = degree_sequence_bound(a, b);
    let mut steps = 0u64;
    if a.num_edges() == b.num_edges() && upper == a.num_edges() {
        // Equal degree sequences (the bound is tight only then): try for an isomorphism.
        let iso_opts = IsoOptions {
            max_steps: opts.max_steps / 2,
            refine_rounds: 32,
        };
        match isomorphism(a, b, iso_opts) {
            IsoOutcome::Isomorphic { mapping, steps } => {
                return settled(mapping, a.num_edges(), McsMethod::Isomorphism, steps)
            }
            IsoOutcome::NotIsomorphic { steps: s, .. } | IsoOutcome::GaveUp { steps: s } => steps += s,
        }
    }
    let budget = opts.max_steps.saturating_sub(steps);
    let mut state = Search::new(a, b, budget);
    let mut best = identity.clone();
    let mut best_common = common_edge_count(a, b, &identity);
    // The first greedy always runs (it is linear), whatever the budget; the identity is
    // polished last, as numbering alike is the exception between different runs.
    for (i, root) in state.greedy_roots().into_iter().enumerate() {
        if best_common == upper || (i > 0 && state.out_of_budget()) {
            break;
        }
        let greedy = state.greedy(root);
        let (mapping, common) = state.local_search(greedy);
        if common > best_common {
            (best, best_common) = (mapping, common);
        }
    }
    if best_common < upper && !state.out_of_budget() {
        let polished = state.local_search(identity);
        if polished.1 > best_common {
            (best, best_common) = polished;
        }
    }
    if best_common == upper {
        let used = steps + state.steps;
        return Found {
            mapping: best,
            common: best_common,
            upper,
            method: McsMethod::Bound,
            steps: used,
        };
    }
    let mut upper = upper;
    if upper == a.num_edges() {
        // Could the sparser graph fit whole inside the other? Search only for such an embedding
        // (a branch losing one edge is cut at once), with half of what is left of the budget.
        let share = state.steps + (state.budget - state.steps.min(state.budget)) / 2;
        let complete = state.branch_and_bound(&mut best, &mut best_common, upper - 1, true, share);
        if best_common == upper {
            return Found {
                mapping: best,
                common: best_common,
                upper,
                method: if complete {
                    McsMethod::BranchAndBound
                } else {
                    McsMethod::Bound
                },
                steps: steps + state.steps,
            };
        }
        if complete {
            // Proven: no embedding exists.
            upper -= 1;
        }
    }
    let budget = state.budget;
    let complete = state.branch_and_bound(&mut best, &mut best_common, 0, false, budget);
    Found {
        mapping: best,
        common: best_common,
        upper: if complete { best_common } else { upper.max(best_common) },
        method: if complete {
            McsMethod::BranchAndBound
        } else {
            McsMethod::BoundedSearch
        },
        steps: steps + state.steps,
    }
}

/// Search state shared by the greedy, the local search and branch and bound.
struct Search<'g> {
    a: &'g Graph,
    b: &'g Graph,
    order: Vec<u32>,
    budget: u64,
    steps: u64,
}

impl<'g> Search<'g> {
    fn new(a: &'g Graph, b: &'g Graph, budget: u64) -> Search<'g> {
        let n = a.num_nodes() as usize;
        let order = matching_order(a, &vec![0; n], &[1]);
        Search {
            a,
            b,
            order,
            budget,
            steps: 0,
        }
    }

    fn out_of_budget(&self) -> bool {
        self.steps >= self.budget
    }

    /// Nodes of `b` to map the first node of the order to: one per colour class of `b` (colour
    /// refinement), closest degree first, at most 8.
    fn greedy_roots(&self) -> Vec<u32> {
        let Some(&u0) = self.order.first() else {
            return Vec::new();
        };
        let colours = refine(self.b, 8);
        let du = self.a.degree(u0);
        let mut nodes: Vec<u32> = (0..self.b.num_nodes()).collect();
        nodes.sort_by_key(|&v| (self.b.degree(v).abs_diff(du), v));
        let mut seen = std::collections::HashSet::new();
        nodes
            .into_iter()
            .filter(|&v| seen.insert(colours[v as usize]))
            .take(8)
            .collect()
    }

    /// Follow the order, mapping each node to the free node of `b` agreeing with most of its
    /// mapped neighbours (closest degree on ties; a free node of closest degree when none agrees).
    fn greedy(&mut self, root: u32) -> Vec<u32> {
        let (a, b) = (self.a, self.b);
        let n = a.num_nodes() as usize;
        let mut map_a = vec![NONE; n];
        let mut map_b = vec![NONE; n];
        // Free nodes of b by degree, removed lazily.
        let mut by_degree: Vec<Vec<u32>> = vec![Vec::new(); b.max_degree() as usize + 1];
        for v in (0..n as u32).rev() {
            by_degree[b.degree(v) as usize].push(v);
        }
        let mut count = vec![0u32; n];
        let mut touched: Vec<u32> = Vec::new();
        for (i, &u) in self.order.iter().enumerate() {
            let chosen = if i == 0 {
                root
            } else {
                touched.clear();
                for &x in a.neighbors(u) {
                    let img = map_a[x as usize];
                    if img == NONE {
                        continue;
                    }
                    for &v in b.neighbors(img) {
                        if map_b[v as usize] == NONE {
                            if count[v as usize] == 0 {
                                touched.push(v);
                            }
                            count[v as usize] += 1;
                        }
                    }
                }
                self.steps += touched.len() as u64 + 1;
                let du = a.degree(u);
                let best = touched.iter().copied().max_by_key(|&v| {
                    (
                        count[v as usize],
                        std::cmp::Reverse(b.degree(v).abs_diff(du)),
                        std::cmp::Reverse(v),
                    )
                });
                for &v in &touched {
                    count[v as usize] = 0;
                }
                match best {
                    Some(v) => v,
                    None => closest_free(&mut by_degree, &map_b, du),
                }
            };
            map_a[u as usize] = chosen;
            map_b[chosen as usize] = u;
        }
        map_a
    }

    /// Common edges at `u` if it were mapped to `v`, with the images in `map` except that
    /// `moved` (another node) would be mapped to `moved_to`.
    fn kept_at(&self, map: &[u32], u: u32, v: u32, moved: u32, moved_to: u32) -> usize {
        self.a
            .neighbors(u)
            .iter()
            .filter(|&&x| {
                let img = if x == moved { moved_to } else { map[x as usize] };
                self.b.has_edge(v, img)
            })
            .count()
    }

    /// Gain in common edges from exchanging the images of `u1` and `u2`.
    fn swap_gain(&self, map: &[u32], u1: u32, u2: u32) -> i64 {
        let (v1, v2) = (map[u1 as usize], map[u2 as usize]);
        let shared = self.a.has_edge(u1, u2) as i64;
        let before = self.kept_at(map, u1, v1, NONE, NONE) as i64 + self.kept_at(map, u2, v2, NONE, NONE) as i64
            - shared * self.b.has_edge(v1, v2) as i64;
        let after = self.kept_at(map, u1, v2, u2, v1) as i64 + self.kept_at(map, u2, v1, u1, v2) as i64
            - shared * self.b.has_edge(v2, v1) as i64;
        after - before
    }

    /// Hill climbing by swaps: for every lost edge `u–x`, try moving `u` next to the image of
    /// `x` (swapping with the node there); repeat until no swap gains or the budget runs out.
    fn local_search(&mut self, mut map: Vec<u32>) -> (Vec<u32>, usize) {
        let (a, b) = (self.a, self.b);
        let n = a.num_nodes();
        let mut inv = vec![NONE; n as usize];
        for (u, &v) in map.iter().enumerate() {
            inv[v as usize] = u as u32;
        }
        let mut improved = true;
        while improved && !self.out_of_budget() {
            improved = false;
            'nodes: for u1 in 0..n {
                self.steps += 1;
                if self.out_of_budget() {
                    break;
                }
                for &x in a.neighbors(u1) {
                    let target = map[x as usize];
                    if b.has_edge(map[u1 as usize], target) {
                        continue;
                    }
                    for &v2 in b.neighbors(target) {
                        if v2 == map[u1 as usize] {
                            continue;
                        }
                        self.steps += 1;
                        if self.out_of_budget() {
                            break 'nodes;
                        }
                        let u2 = inv[v2 as usize];
                        // A swap costs the two degrees: charged, so a hub cannot stretch a step.
                        self.steps += (a.degree(u1) + a.degree(u2)) as u64 / 16;
                        if self.swap_gain(&map, u1, u2) > 0 {
                            let v1 = map[u1 as usize];
                            map[u1 as usize] = v2;
                            map[u2 as usize] = v1;
                            inv[v2 as usize] = u1;
                            inv[v1 as usize] = u2;
                            improved = true;
                            continue 'nodes;
                        }
                    }
                }
            }
        }
        let common = common_edge_count(a, b, &map);
        (map, common)
    }

    /// Exhaustive search with pruning, improving `best` in place. Returns true when it finished
    /// within the budget (then `best` is a maximum).
    /// Only correspondences keeping more than `floor` edges (and more than `best_common`) are
    /// sought; `embed` restricts the candidates to those keeping every edge (for `floor` one
    /// below the first graph's edge count). Stops when `self.steps` reaches `until`.
    fn branch_and_bound(
        &mut self,
        best: &mut Vec<u32>,
        best_common: &mut usize,
        floor: usize,
        embed: bool,
        until: u64,
    ) -> bool {
        let until = until.min(self.budget);
        if self.steps >= until {
            return false;
        }
        let start = (*best_common).max(floor);
        let mut bb = BranchAndBound::new(self.a, self.b, &self.order, start, best.clone());
        bb.embed = embed;
        let left = until - self.steps;
        let complete = bb.run(left);
        self.steps += bb.steps;
        // Only a correspondence the search found replaces the best (not the floor it started at).
        if bb.best_common > start {
            *best_common = bb.best_common;
            *best = bb.best;
        }
        complete
    }
}

fn closest_free(by_degree: &mut [Vec<u32>], map_b: &[u32], d: u32) -> u32 {
    let top = by_degree.len() as i64 - 1;
    for dist in 0..=top.max(0) {
        for cand in [d as i64 - dist, d as i64 + dist] {
            if cand < 0 || cand > top {
                continue;
            }
            let bucket = &mut by_degree[cand as usize];
            while let Some(&v) = bucket.last() {
                if map_b[v as usize] == NONE {
                    return v;
                }
                bucket.pop();
            }
        }
    }
    unreachable!("a free node of b exists while nodes of a remain unmapped")
}

mod branch_bound;
use branch_bound::BranchAndBound;

#[cfg(test)]
mod tests;
