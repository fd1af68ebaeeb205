//! Graph isomorphism with an explicit, verified mapping, under a step budget.
//!
//! The search is VF2-like (extend a partial mapping node by node, backtrack on a contradiction)
//! with the VF2++ matching order: breadth-first from the most constrained node (rarest colour,
//! then highest degree), and inside each BFS level the node with the most already-ordered
//! neighbours first. Colours from joint colour refinement label the nodes. A node is only tried
//! against the unmatched neighbours of the image of one of its matched neighbours, must have
//! the same colour, must be adjacent to the images of all its matched neighbours and must have
//! exactly as many matched neighbours. Plain VF2 without an order explodes on randomly numbered
//! look-alikes; with the order the search is near-linear on grids,
//! tori and stencils, and a step budget turns the remaining bad cases into [`IsoOutcome::GaveUp`].

use crate::refine::{refine_from, refine_joint, Colouring};
use crate::Graph;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const NONE: u32 = u32::MAX;

/// Limits of one isomorphism search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IsoOptions {
    /// Candidate pairs tried before giving up.
    pub max_steps: u64,
    /// Rounds of colour refinement (more rounds: finer labels, more time).
    pub refine_rounds: usize,
}

impl IsoOptions {
    /// Defaults that scale with the graph: 32 million steps plus 256 per node (about half a
    /// second natively when a search gives up; what randomly numbered 2,304-node butterflies
    /// and 16,384-rank NAS CG need, 18 and 28 million); 32 refinement rounds.
    pub fn for_nodes(n: u32) -> IsoOptions {
        IsoOptions {
            max_steps: 32_000_000 + 256 * n as u64,
            refine_rounds: 32,
        }
    }
}

/// What an isomorphism search concluded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "outcome")]
pub enum IsoOutcome {
    /// The graphs are isomorphic: `mapping[u]` is the node of the second graph that node `u`
    /// of the first maps to; it was verified edge by edge.
    Isomorphic {
        /// Node of the second graph for each node of the first.
        mapping: Vec<u32>,
        /// Candidate pairs tried.
        steps: u64,
    },
    /// Proved different, with the first test that told them apart.
    NotIsomorphic {
        /// Which test failed (`node count`, `edge count`, `degree sequence`, `colour refinement`,
        /// `search`).
        reason: String,
        /// Candidate pairs tried.
        steps: u64,
    },
    /// The step budget ran out before the search concluded.
    GaveUp {
        /// Candidate pairs tried.
        steps: u64,
    },
}

impl IsoOutcome {
    /// The mapping, if isomorphic.
    pub fn mapping(&self) -> Option<&[u32]> {
        match self {
            IsoOutcome::Isomorphic { mapping, .. } => Some(mapping),
            _ => None,
        }
    }
}

/// Check that `mapping` is a bijection from the nodes of `g1` onto those of `g2` under which
/// every edge of `g1` is an edge of `g2` and both have the same number of edges (so no edge of
/// `g2` is left over). Returns the first problem found.
pub fn verify(g1: &Graph, g2: &Graph, mapping: &[u32]) -> Result<(), String> {
    let n = g1.num_nodes();
    if g2.num_nodes() != n || mapping.len() != n as usize {
        return Err(format!(
            "mapping covers {} nodes; the graphs have {} and {}",
            mapping.len(),
            n,
            g2.num_nodes()
        ));
    }
    let mut used = vec![false; n as usize];
    for (u, &v) in mapping.iter().enumerate() {
        if v >= n || std::mem::replace(&mut used[v as usize], true) {
            return Err(format!("node {u} maps to {v}, which is out of range or already used"));
        }
    }
    if g1.num_edges() != g2.num_edges() {
        return Err(format!("{} edges against {}", g1.num_edges(), g2.num_edges()));
    }
    for (u, v) in g1.edges() {
        if !g2.has_edge(mapping[u as usize], mapping[v as usize]) {
            return Err(format!(
                "edge {u}–{v} maps to {}–{}, which is not an edge",
                mapping[u as usize], mapping[v as usize]
            ));
        }
    }
    Ok(())
}

/// The VF2++ matching order of `g` for node labels `colours` whose class sizes are `rarity`
/// (smaller = more constrained).
pub fn matching_order(g: &Graph, colours: &[u32], rarity: &[u32]) -> Vec<u32> {
    let n = g.num_nodes() as usize;
    let root_key = |u: u32| (rarity[colours[u as usize] as usize], Reverse(g.degree(u)), u);
    // A connected graph needs only the first root: the others are sorted only when the first
    // component leaves nodes unordered.
    let first_root = (0..n as u32).min_by_key(|&u| root_key(u));
    let mut roots: Vec<u32> = Vec::new();
    let mut conn = vec![0u32; n];
    let mut level_of = vec![u32::MAX; n];
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut level_id = 0u32;
    let mut next_root = 0usize;
    // One BFS level, the next one, and the level's queue, reused.
    let (mut level, mut next): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    let mut heap: BinaryHeap<u128> = BinaryHeap::new();
    loop {
        let root = if order.is_empty() {
            match first_root {
                Some(r) => r,
                None => break,
            }
        } else {
            if order.len() == n {
                break;
            }
            if roots.is_empty() {
                roots = (0..n as u32).collect();
                roots.sort_unstable_by_key(|&u| root_key(u));
            }
            match roots[next_root..]
                .iter()
                .position(|&r| level_of[r as usize] == u32::MAX)
            {
                Some(k) => {
                    next_root += k + 1;
                    roots[next_root - 1]
                }
                None => break,
            }
        };
        level_of[root as usize] = level_id;
        level.clear();
        level.push(root);
        while !level.is_empty() {
            // Largest first by (connections, degree, commoner colour reversed, node reversed),
            // packed into one integer.
            let key = |u: u32, conn: &[u32]| {
                (conn[u as usize] as u128) << 96
                    | (g.degree(u) as u128) << 64
                    | ((u32::MAX - rarity[colours[u as usize] as usize]) as u128) << 32
                    | (u32::MAX - u) as u128
            };
            heap.clear();
            heap.extend(level.iter().map(|&u| key(u, &conn)));
            next.clear();
            while let Some(k) = heap.pop() {
                let (c, u) = ((k >> 96) as u32, u32::MAX - k as u32);
                if placed[u as usize] || c != conn[u as usize] {
                    continue;
                }
                placed[u as usize] = true;
                order.push(u);
                for &v in g.neighbors(u) {
                    conn[v as usize] += 1;
                    if level_of[v as usize] == u32::MAX {
                        level_of[v as usize] = level_id + 1;
                        next.push(v);
                    } else if level_of[v as usize] == level_id && !placed[v as usize] {
                        heap.push(key(v, &conn));
                    }
                }
            }
            level_id += 1;
            std::mem::swap(&mut level, &mut next);
        }
        level_id += 1;
    }
    order
}

/// The complement graph (every non-adjacent pair becomes an edge). O(n²).
pub fn complement(g: &Graph) -> Graph {
    let n = g.num_nodes();
    let edges: Vec<(u32, u32)> = (0..n)
        .flat_map(|u| (u + 1..n).filter(move |&v| !g.has_edge(u, v)).map(move |v| (u, v)))
        .collect();
    Graph::from_edges(n, edges)
}

/// Decide whether `g1` and `g2` are isomorphic and, if so, return a verified mapping.
pub fn isomorphism(g1: &Graph, g2: &Graph, opts: IsoOptions) -> IsoOutcome {
    isomorphism_coloured(g1, g2, None, opts)
}

/// [`isomorphism`] reusing a joint colouring of `[g1, g2]` the caller already computed
/// (candidate elimination refines each pair once; refining again here doubled the cost on
/// grids, whose refinement runs many rounds). Any joint refinement, however coarse, is valid.
pub fn isomorphism_coloured(g1: &Graph, g2: &Graph, colouring: Option<&Colouring>, opts: IsoOptions) -> IsoOutcome {
    let not = |reason: &str, steps| IsoOutcome::NotIsomorphic {
        reason: reason.into(),
        steps,
    };
    let n = g1.num_nodes();
    if n != g2.num_nodes() {
        return not("node count", 0);
    }
    if g1.num_edges() != g2.num_edges() {
        return not("edge count", 0);
    }
    if g1.degree_histogram() != g2.degree_histogram() {
        return not("degree sequence", 0);
    }
    // Dense graphs have sparse complements with the same isomorphisms, and constrain the search
    // far better that way (a matched-neighbour count says little when nearly all are adjacent).
    let pairs = n as u64 * (n as u64).saturating_sub(1) / 2;
    if 2 * g1.num_edges() as u64 > pairs {
        let (c1, c2) = (complement(g1), complement(g2));
        return match isomorphism(&c1, &c2, opts) {
            IsoOutcome::Isomorphic { mapping, steps } => match verify(g1, g2, &mapping) {
                Ok(()) => IsoOutcome::Isomorphic { mapping, steps },
                Err(e) => not(&format!("internal error: complement mapping invalid: {e}"), steps),
            },
            other => other,
        };
    }
    let colouring = match colouring {
        Some(c) if c.colours.len() == 2 && c.colours[0].len() == n as usize && c.colours[1].len() == n as usize => {
            Cow::Borrowed(c)
        }
        _ => Cow::Owned(refine_joint(&[g1, g2], opts.refine_rounds)),
    };
    if !colouring.histograms_agree() {
        return not("colour refinement", 0);
    }
    // Plain search first (near-linear on grids, tori, stencils); if it stalls, fall back to
    // individualisation–refinement: each fixed pair is propagated to the whole graph by
    // refinement, which resolves structures (butterflies...) where a wrong early choice of the
    // plain search is only detected far away.
    // The ordered search proves grids, tori, stencils and trees in about one step per node and
    // edge end; when it needs many times that it is lost in a symmetric structure (hypercube
    // rows of NAS CG, butterflies), where individualisation–refinement does better with the
    // rest of the budget.
    let linear = 16 * (n as u64 + 2 * g1.num_edges() as u64) + 10_000;
    let first = (opts.max_steps / 4 * 3).min(linear);
    let mut steps = 0u64;
    match search(g1, g2, &colouring, first) {
        Search::Found(mapping, s) => return finish(g1, g2, mapping, s),
        Search::Exhausted(s) => return not("search", s),
        Search::GaveUp(s) => steps += s,
    }
    let mut budget = Budget {
        left: opts.max_steps.saturating_sub(steps),
        used: steps,
        deepest: 0,
    };
    match individualise(g1, g2, colouring.into_owned(), opts.refine_rounds.max(64), &mut budget) {
        Search::Found(mapping, _) => finish(g1, g2, mapping, budget.used),
        Search::Exhausted(_) => not("search", budget.used),
        Search::GaveUp(_) => IsoOutcome::GaveUp { steps: budget.used },
    }
}

/// Steps left and used across an individualisation–refinement search.
struct Budget {
    left: u64,
    used: u64,
    /// Most levels individualisation–refinement held at once.
    deepest: usize,
}

impl Budget {
    fn spend(&mut self, s: u64) -> bool {
        self.used += s;
        self.left = self.left.saturating_sub(s);
        self.left > 0
    }
}

/// Individualisation–refinement (as in nauty/bliss, without automorphism pruning): try a short
/// ordered search under the current colours; if it stalls, pick the smallest non-trivial colour
/// class, fix its first node of `g1` against each same-coloured node of `g2` in turn, refine,
/// and go one level deeper. Each refinement is charged its work (nodes and edge ends of both
/// graphs per round), so the budget bounds the time.
///
/// The levels are kept on an explicit stack, not the call stack: a hostile graph (one whose
/// individualisations keep agreeing, as in strongly regular look-alikes) can make the search go
/// as deep as the budget allows — thousands of levels — and a recursion that deep overflows a
/// thread's stack (a browser worker's is small). [`Budget::deepest`] records how deep it went.
fn individualise(g1: &Graph, g2: &Graph, colouring: Colouring, rounds: usize, budget: &mut Budget) -> Search {
    /// One level: the colouring it individualises from, the node of `g1` fixed and its
    /// colour, and the next node of `g2` to try against it.
    struct Level {
        colouring: Colouring,
        u: u32,
        target: u32,
        next: u32,
    }
    let n = g1.num_nodes() as u64;
    // One refinement round touches every node and edge of both graphs.
    let round_cost = 2 * (n + 2 * g1.num_edges() as u64);
    let quick = 4 * n + 1_000;
    let mut stack: Vec<Level> = Vec::new();
    let mut entering = Some(colouring);
    loop {
        if let Some(colouring) = entering.take() {
            // A new level: a short ordered search first, then individualise if it stalls.
            let mut exhausted = false;
            match search(g1, g2, &colouring, quick.min(budget.left)) {
                Search::Found(m, s) => {
                    budget.spend(s);
                    return Search::Found(m, s);
                }
                Search::Exhausted(s) => {
                    budget.spend(s);
                    if stack.is_empty() {
                        return Search::Exhausted(s);
                    }
                    exhausted = true;
                }
                Search::GaveUp(s) => {
                    if !budget.spend(s) {
                        return Search::GaveUp(0);
                    }
                }
            }
            if !exhausted {
                let sizes = colouring.histogram(0);
                let target = (0..colouring.classes)
                    .filter(|&c| sizes[c as usize] > 1)
                    .min_by_key(|&c| sizes[c as usize]);
                if let Some(target) = target {
                    let u = colouring.colours[0]
                        .iter()
                        .position(|&c| c == target)
                        .expect("class member") as u32;
                    stack.push(Level {
                        colouring,
                        u,
                        target,
                        next: 0,
                    });
                    budget.deepest = budget.deepest.max(stack.len());
                }
            }
        }
        // Try the next image of the deepest level's fixed node; when none is left, that level
        // is exhausted and its parent tries its next one.
        let Some(level) = stack.last_mut() else {
            return Search::Exhausted(0);
        };
        let c2 = &level.colouring.colours[1];
        let Some(v) = (level.next..g2.num_nodes()).find(|&v| c2[v as usize] == level.target) else {
            stack.pop();
            continue;
        };
        level.next = v + 1;
        if budget.left < round_cost {
            return Search::GaveUp(0);
        }
        let fresh = level.colouring.classes;
        let mut initial = level.colouring.colours.clone();
        initial[0][level.u as usize] = fresh;
        initial[1][v as usize] = fresh;
        let refined = refine_from(&[g1, g2], &initial, rounds);
        if !budget.spend(round_cost * refined.rounds.max(1) as u64) {
            return Search::GaveUp(0);
        }
        if refined.histograms_agree() {
            entering = Some(refined);
        }
    }
}

fn finish(g1: &Graph, g2: &Graph, mapping: Vec<u32>, steps: u64) -> IsoOutcome {
    match verify(g1, g2, &mapping) {
        Ok(()) => IsoOutcome::Isomorphic { mapping, steps },
        // The search only accepts consistent pairs, so this is a bug; report it, never hide it.
        Err(e) => IsoOutcome::NotIsomorphic {
            reason: format!("internal error: search produced an invalid mapping: {e}"),
            steps,
        },
    }
}

/// Result of one depth-first search.
enum Search {
    Found(Vec<u32>, u64),
    Exhausted(u64),
    GaveUp(u64),
}

/// The ordered depth-first search under `colouring` (colours of `g1` then `g2`).
fn search(g1: &Graph, g2: &Graph, colouring: &Colouring, max_steps: u64) -> Search {
    let n = g1.num_nodes();
    let (c1, c2) = (&colouring.colours[0], &colouring.colours[1]);
    let rarity = colouring.histogram(1);
    // Members of each colour class in g2: the candidates for a node with no matched neighbour.
    let mut class_start = vec![0usize; colouring.classes as usize + 1];
    for &c in c2 {
        class_start[c as usize + 1] += 1;
    }
    for i in 0..colouring.classes as usize {
        class_start[i + 1] += class_start[i];
    }
    let mut fill = class_start.clone();
    let mut class_members = vec![0u32; n as usize];
    for (v, &c) in c2.iter().enumerate() {
        class_members[fill[c as usize]] = v as u32;
        fill[c as usize] += 1;
    }

    let order = matching_order(g1, c1, &rarity);
    let mut position = vec![0u32; n as usize];
    for (i, &u) in order.iter().enumerate() {
        position[u as usize] = i as u32;
    }
    // For each position: the neighbours placed before it (flat), and the one whose image's
    // neighbours are the candidates.
    let mut earlier_start = Vec::with_capacity(n as usize + 1);
    let mut earlier: Vec<u32> = Vec::new();
    let mut parent = Vec::with_capacity(n as usize);
    earlier_start.push(0);
    for (i, &u) in order.iter().enumerate() {
        let start = earlier.len();
        earlier.extend(
            g1.neighbors(u)
                .iter()
                .copied()
                .filter(|&x| (position[x as usize] as usize) < i),
        );
        parent.push(earlier.get(start).copied().unwrap_or(NONE));
        earlier_start.push(earlier.len());
    }

    let mut map1 = vec![NONE; n as usize];
    let mut map2 = vec![NONE; n as usize];
    let mut next_try = vec![0usize; n as usize + 1];
    let mut fresh = true;
    // Below these indices every neighbour of a g2 node (every member of a class) is matched:
    // candidates are scanned from there, so the leaves of a hub cost O(1) each, not O(degree).
    // Lowered again when a node is unmatched.
    let mut first_free = vec![0u32; n as usize];
    let mut class_first_free: Vec<usize> = class_start[..colouring.classes as usize].to_vec();
    let mut class_position = vec![0usize; n as usize];
    for (i, &v) in class_members.iter().enumerate() {
        class_position[v as usize] = i;
    }
    let mut depth = 0usize;
    let mut steps = 0u64;
    'search: loop {
        if depth == n as usize {
            break;
        }
        let u = order[depth];
        let cands: &[u32] = if parent[depth] == NONE {
            let c = c1[u as usize] as usize;
            if fresh {
                let ff = &mut class_first_free[c];
                while *ff < class_start[c + 1] && map2[class_members[*ff] as usize] != NONE {
                    *ff += 1;
                }
                next_try[depth] = *ff - class_start[c];
            }
            &class_members[class_start[c]..class_start[c + 1]]
        } else {
            let img = map1[parent[depth] as usize];
            let list = g2.neighbors(img);
            if fresh {
                let ff = &mut first_free[img as usize];
                while (*ff as usize) < list.len() && map2[list[*ff as usize] as usize] != NONE {
                    *ff += 1;
                }
                next_try[depth] = *ff as usize;
            }
            list
        };
        fresh = false;
        let before = &earlier[earlier_start[depth]..earlier_start[depth + 1]];
        while next_try[depth] < cands.len() {
            let v = cands[next_try[depth]];
            next_try[depth] += 1;
            if map2[v as usize] != NONE {
                continue;
            }
            steps += 1;
            if steps > max_steps {
                return Search::GaveUp(steps - 1);
            }
            if c2[v as usize] != c1[u as usize] {
                continue;
            }
            if !before.iter().all(|&x| g2.has_edge(map1[x as usize], v)) {
                continue;
            }
            let matched = g2.neighbors(v).iter().filter(|&&w| map2[w as usize] != NONE).count();
            if matched != before.len() {
                continue;
            }
            map1[u as usize] = v;
            map2[v as usize] = u;
            depth += 1;
            fresh = true;
            continue 'search;
        }
        // Every candidate failed: undo the previous choice and try its next candidate.
        if depth == 0 {
            return Search::Exhausted(steps);
        }
        depth -= 1;
        let w = order[depth];
        let vw = map1[w as usize];
        map2[vw as usize] = NONE;
        map1[w as usize] = NONE;
        for &x in g2.neighbors(vw) {
            if let Ok(pos) = g2.neighbors(x).binary_search(&vw) {
                first_free[x as usize] = first_free[x as usize].min(pos as u32);
            }
        }
        let c = c2[vw as usize] as usize;
        class_first_free[c] = class_first_free[c].min(class_position[vw as usize]);
    }
    Search::Found(map1, steps)
}

/// One per-node feature of both graphs for [`best_isomorphism`]: `(values on g1's nodes,
/// values on g2's nodes)`.
pub type NodeFeature = (Vec<f64>, Vec<f64>);

/// The best isomorphism [`best_isomorphism`] found, and how far its search went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BestIsomorphism {
    /// Node of the second graph for each node of the first (verified).
    pub mapping: Vec<u32>,
    /// Its score `Σ_k Σ_u f_k(u) · g_k(mapping[u])`.
    pub score: f64,
    /// Isomorphisms scored in full (the rest of the group was pruned by the bound, or not
    /// reached when the budget ran out).
    pub scored: u64,
    /// Candidate pairs tried.
    pub steps: u64,
    /// True when every isomorphism was scored or proven no better: `score` is the maximum (to
    /// 1e-9). False when the step budget ran out first: `score` is the best of those scored.
    pub exhaustive: bool,
}

/// Among all isomorphisms of `g1` onto `g2`, one that maximises the separable score
/// `Σ_k Σ_u features[k].0[u] · features[k].1[π(u)]` — e.g. a sum of Pearson correlations of
/// per-node properties, which is linear in the pairing once each vector is centred and scaled.
/// `seeds` are known isomorphisms (the ones that do not verify are ignored); the best of them is
/// the starting incumbent, so the answer is never worse than a seed.
///
/// Why: when two graphs are isomorphic, the isomorphism a search returns is one of
/// `|Aut(g1)|`; properties compared node by node depend on which one, and only the best (or the
/// full set) is independent of how the nodes are numbered.
///
/// The search enumerates isomorphisms depth-first in the VF2++ matching order under joint colour
/// refinement (the same feasibility rules as [`isomorphism`]), candidates of each component's
/// first node in decreasing order of their own score, and prunes a partial mapping whose score
/// plus, for every node not yet mapped, its best product with any same-coloured node cannot beat
/// the incumbent. On lattices (grids, tori, stencils) the first two or three choices force the
/// rest, so the work is about `|Aut| · n · degree` steps before pruning. `None` when the graphs
/// are not isomorphic, or no isomorphism was found within `max_steps` and no seed verifies.
pub fn best_isomorphism(
    g1: &Graph,
    g2: &Graph,
    features: &[NodeFeature],
    seeds: &[&[u32]],
    max_steps: u64,
) -> Option<BestIsomorphism> {
    best_isomorphism_anchored(g1, g2, features, seeds, &[], max_steps)
}

/// [`best_isomorphism`] restricted to the isomorphisms that map each `anchors[i].0` of `g1` to
/// `anchors[i].1` of `g2`; seeds that do not are ignored. Why: when both graphs name a node by
/// something other than its place in the graph (the root of a run's rooted collectives), only
/// the correspondences that keep it are plausible, and maximising over fewer of them lets less
/// agreement arise by chance. `None` when no such isomorphism exists (or none was found within
/// `max_steps` and no seed qualifies), or when an anchor is out of range or repeated.
pub fn best_isomorphism_anchored(
    g1: &Graph,
    g2: &Graph,
    features: &[NodeFeature],
    seeds: &[&[u32]],
    anchors: &[(u32, u32)],
    max_steps: u64,
) -> Option<BestIsomorphism> {
    let n = g1.num_nodes() as usize;
    if features.iter().any(|(a, b)| a.len() != n || b.len() != n) || !anchors_valid(g1, g2, anchors) {
        return None;
    }
    let score_of = |m: &[u32]| -> f64 {
        features
            .iter()
            .map(|(a, b)| (0..n).map(|u| a[u] * b[m[u] as usize]).sum::<f64>())
            .sum()
    };
    let mut best: Option<(Vec<u32>, f64)> = None;
    for seed in seeds {
        let keeps = anchors.iter().all(|&(u, v)| seed.get(u as usize) == Some(&v));
        if keeps && verify(g1, g2, seed).is_ok() {
            let s = score_of(seed);
            if best.as_ref().is_none_or(|(_, b)| s > *b) {
                best = Some((seed.to_vec(), s));
            }
        }
    }
    let mut out = scan_isomorphisms(g1, g2, features, best, max_steps, true, anchors)?;
    out.score = score_of(&out.mapping);
    Some(out)
}

/// Count the automorphisms of `g` that fix every node of `fixed` (the stabiliser of those
/// nodes), by enumeration: `(count, complete)` as [`count_automorphisms`]. Why: it is how many
/// pairings [`best_isomorphism_anchored`] chooses among when the anchors are `fixed` (12 of the
/// 192 automorphisms of the 4x4 periodic 6-point stencil fix a node).
pub fn count_automorphisms_fixing(g: &Graph, fixed: &[u32], max_steps: u64) -> (u64, bool) {
    let anchors: Vec<(u32, u32)> = fixed.iter().map(|&u| (u, u)).collect();
    if !anchors_valid(g, g, &anchors) {
        return (0, true);
    }
    match scan_isomorphisms(g, g, &[], None, max_steps, false, &anchors) {
        Some(b) => (b.scored, b.exhaustive),
        None => (0, false),
    }
}

/// Anchors name nodes of both graphs, each node at most once.
fn anchors_valid(g1: &Graph, g2: &Graph, anchors: &[(u32, u32)]) -> bool {
    let distinct = |pick: fn(&(u32, u32)) -> u32| {
        let mut v: Vec<u32> = anchors.iter().map(pick).collect();
        v.sort_unstable();
        v.dedup();
        v.len() == anchors.len()
    };
    anchors.iter().all(|&(u, v)| u < g1.num_nodes() && v < g2.num_nodes()) && distinct(|a| a.0) && distinct(|a| a.1)
}

/// Count the automorphisms of `g` by enumerating them (no pruning): `(count, complete)`;
/// `complete` is false when `max_steps` ran out and `count` is only those found. Why: the size
/// of the group [`best_isomorphism`] searches tells whether it can be exhaustive (a 4x4 periodic
/// 6-point stencil has far more automorphisms than its 16 translations times its rotations and
/// reflections).
pub fn count_automorphisms(g: &Graph, max_steps: u64) -> (u64, bool) {
    count_automorphisms_fixing(g, &[], max_steps)
}

/// The depth-first enumeration behind [`best_isomorphism`] and [`count_automorphisms`];
/// `prune` turns the bound on; only isomorphisms mapping each `anchors[i].0` to `anchors[i].1`
/// are enumerated (each anchor pair starts with a colour of its own before refinement).
fn scan_isomorphisms(
    g1: &Graph,
    g2: &Graph,
    features: &[NodeFeature],
    incumbent: Option<(Vec<u32>, f64)>,
    max_steps: u64,
    prune: bool,
    anchors: &[(u32, u32)],
) -> Option<BestIsomorphism> {
    let nn = g1.num_nodes();
    let n = nn as usize;
    let failed = |incumbent: Option<(Vec<u32>, f64)>, steps, exhaustive| {
        incumbent.map(|(mapping, score)| BestIsomorphism {
            mapping,
            score,
            scored: 0,
            steps,
            exhaustive,
        })
    };
    if nn != g2.num_nodes() || g1.num_edges() != g2.num_edges() || g1.degree_histogram() != g2.degree_histogram() {
        return None;
    }
    // Dense graphs are searched through their sparse complements (the same isomorphisms).
    let pairs = n as u64 * (n as u64).saturating_sub(1) / 2;
    let complements;
    let (g1, g2) = if 2 * g1.num_edges() as u64 > pairs {
        complements = (complement(g1), complement(g2));
        (&complements.0, &complements.1)
    } else {
        (g1, g2)
    };
    let colouring = if anchors.is_empty() {
        refine_joint(&[g1, g2], 32)
    } else {
        // Degree classes as refine_joint starts, each anchor pair apart from all of them.
        let k = anchors.len() as u32 + 1;
        let initial = |g: &Graph, pick: fn(&(u32, u32)) -> u32| -> Vec<u32> {
            let mut c: Vec<u32> = (0..g.num_nodes()).map(|u| g.degree(u).saturating_mul(k)).collect();
            for (i, a) in anchors.iter().enumerate() {
                c[pick(a) as usize] = g.degree(pick(a)).saturating_mul(k) + i as u32 + 1;
            }
            c
        };
        refine_from(&[g1, g2], &[initial(g1, |a| a.0), initial(g2, |a| a.1)], 32)
    };
    if !colouring.histograms_agree() {
        return None;
    }
    let (c1, c2) = (&colouring.colours[0], &colouring.colours[1]);
    let classes = colouring.classes as usize;
    let weight = |u: usize, v: usize| -> f64 { features.iter().map(|(a, b)| a[u] * b[v]).sum() };
    // Per colour and feature, the extreme values in g2: the best product any node of g1 can get.
    let mut high = vec![vec![f64::NEG_INFINITY; features.len()]; classes];
    let mut low = vec![vec![f64::INFINITY; features.len()]; classes];
    for v in 0..n {
        let c = c2[v] as usize;
        for (k, (_, b)) in features.iter().enumerate() {
            high[c][k] = high[c][k].max(b[v]);
            low[c][k] = low[c][k].min(b[v]);
        }
    }
    let best_product = |u: usize| -> f64 {
        let c = c1[u] as usize;
        features
            .iter()
            .enumerate()
            .map(|(k, (a, _))| {
                if a[u] >= 0.0 {
                    a[u] * high[c][k]
                } else {
                    a[u] * low[c][k]
                }
            })
            .sum()
    };
    let rarity = colouring.histogram(1);
    let order = matching_order(g1, c1, &rarity);
    let mut position = vec![0usize; n];
    for (i, &u) in order.iter().enumerate() {
        position[u as usize] = i;
    }
    // remaining[d]: the bound on what nodes order[d..] can still add.
    let mut remaining = vec![0.0; n + 1];
    for d in (0..n).rev() {
        remaining[d] = remaining[d + 1] + best_product(order[d] as usize);
    }
    let mut earlier_start = Vec::with_capacity(n + 1);
    let mut earlier: Vec<u32> = Vec::new();
    let mut parent = Vec::with_capacity(n);
    earlier_start.push(0);
    for (i, &u) in order.iter().enumerate() {
        let start = earlier.len();
        earlier.extend(g1.neighbors(u).iter().copied().filter(|&x| position[x as usize] < i));
        parent.push(earlier.get(start).copied().unwrap_or(NONE));
        earlier_start.push(earlier.len());
    }
    // A component's first node may go to any node of its colour: best products first.
    let roots: Vec<Vec<u32>> = (0..n)
        .map(|d| {
            if parent[d] != NONE {
                return Vec::new();
            }
            let u = order[d] as usize;
            let mut cands: Vec<u32> = (0..nn).filter(|&v| c2[v as usize] == c1[u]).collect();
            if prune {
                let w: Vec<f64> = cands.iter().map(|&v| weight(u, v as usize)).collect();
                let mut idx: Vec<usize> = (0..cands.len()).collect();
                idx.sort_by(|&x, &y| w[y].total_cmp(&w[x]).then(x.cmp(&y)));
                cands = idx.into_iter().map(|i| cands[i]).collect();
            }
            cands
        })
        .collect();
    let slack = |s: f64| 1e-9 * (1.0 + s.abs());
    let mut incumbent = incumbent;
    if prune {
        if let Some((_, s)) = &incumbent {
            if *s + slack(*s) >= remaining[0] {
                return failed(incumbent, 0, true);
            }
        }
    }
    let mut map1 = vec![NONE; n];
    let mut map2 = vec![NONE; n];
    let mut next_try = vec![0usize; n + 1];
    let mut partial = vec![0.0; n + 1];
    let (mut depth, mut steps, mut scored) = (0usize, 0u64, 0u64);
    let mut fresh = true;
    'search: loop {
        if depth == n {
            scored += 1;
            let s = partial[n];
            if incumbent.as_ref().is_none_or(|(_, b)| s > *b + slack(*b)) {
                incumbent = Some((map1.clone(), s));
                if prune && s + slack(s) >= remaining[0] {
                    break 'search;
                }
            }
        } else {
            let u = order[depth];
            let cands: &[u32] = if parent[depth] == NONE {
                &roots[depth]
            } else {
                g2.neighbors(map1[parent[depth] as usize])
            };
            if fresh {
                next_try[depth] = 0;
            }
            let before = &earlier[earlier_start[depth]..earlier_start[depth + 1]];
            while next_try[depth] < cands.len() {
                let v = cands[next_try[depth]];
                next_try[depth] += 1;
                if map2[v as usize] != NONE || c2[v as usize] != c1[u as usize] {
                    continue;
                }
                steps += 1;
                if steps > max_steps {
                    return incumbent.map(|(mapping, score)| BestIsomorphism {
                        mapping,
                        score,
                        scored,
                        steps: steps - 1,
                        exhaustive: false,
                    });
                }
                if !before.iter().all(|&x| g2.has_edge(map1[x as usize], v)) {
                    continue;
                }
                let matched = g2.neighbors(v).iter().filter(|&&w| map2[w as usize] != NONE).count();
                if matched != before.len() {
                    continue;
                }
                let p = partial[depth] + weight(u as usize, v as usize);
                if prune {
                    if let Some((_, b)) = &incumbent {
                        if p + remaining[depth + 1] <= *b + slack(*b) {
                            continue;
                        }
                    }
                }
                partial[depth + 1] = p;
                map1[u as usize] = v;
                map2[v as usize] = u;
                depth += 1;
                fresh = true;
                continue 'search;
            }
        }
        // Every candidate at this depth is done (or a leaf was scored): undo the last choice.
        if depth == 0 {
            break;
        }
        depth -= 1;
        fresh = false;
        let w = order[depth];
        map2[map1[w as usize] as usize] = NONE;
        map1[w as usize] = NONE;
    }
    incumbent.map(|(mapping, score)| BestIsomorphism {
        mapping,
        score,
        scored,
        steps,
        exhaustive: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};

    /// The previous matching order: every root sorted up front, tuple keys in the heap.
    fn matching_order_sorting_every_root(g: &Graph, colours: &[u32], rarity: &[u32]) -> Vec<u32> {
        let n = g.num_nodes() as usize;
        let mut roots: Vec<u32> = (0..n as u32).collect();
        roots.sort_by_key(|&u| (rarity[colours[u as usize] as usize], Reverse(g.degree(u)), u));
        let mut conn = vec![0u32; n];
        let mut level_of = vec![u32::MAX; n];
        let mut placed = vec![false; n];
        let mut order = Vec::with_capacity(n);
        let mut level_id = 0u32;
        for &root in &roots {
            if level_of[root as usize] != u32::MAX {
                continue;
            }
            level_of[root as usize] = level_id;
            let mut level = vec![root];
            while !level.is_empty() {
                let key = |u: u32, conn: &[u32]| {
                    (
                        conn[u as usize],
                        g.degree(u),
                        Reverse(rarity[colours[u as usize] as usize]),
                        Reverse(u),
                    )
                };
                let mut heap: BinaryHeap<_> = level.iter().map(|&u| key(u, &conn)).collect();
                let mut next = Vec::new();
                while let Some((c, _, _, Reverse(u))) = heap.pop() {
                    if placed[u as usize] || c != conn[u as usize] {
                        continue;
                    }
                    placed[u as usize] = true;
                    order.push(u);
                    for &v in g.neighbors(u) {
                        conn[v as usize] += 1;
                        if level_of[v as usize] == u32::MAX {
                            level_of[v as usize] = level_id + 1;
                            next.push(v);
                        } else if level_of[v as usize] == level_id && !placed[v as usize] {
                            heap.push(key(v, &conn));
                        }
                    }
                }
                level_id += 1;
                level = next;
            }
            level_id += 1;
        }
        order
    }

    #[test]
    fn matching_order_equals_sorting_every_root() {
        // Sparse random graphs have many components (isolated nodes included), so the roots
        // after the first are exercised; few colours give ties on rarity and degree.
        let mut rng = StdRng::seed_from_u64(21);
        for trial in 0..300 {
            let n = rng.gen_range(0..120u32);
            let m = if n == 0 { 0 } else { rng.gen_range(0..2 * n as usize) };
            let edges: Vec<(u32, u32)> = (0..m).map(|_| (rng.gen_range(0..n), rng.gen_range(0..n))).collect();
            let g = Graph::from_edges(n, edges);
            let classes = 1 + trial % 4;
            let colours: Vec<u32> = (0..n).map(|_| rng.gen_range(0..classes)).collect();
            let mut rarity = vec![0u32; classes as usize];
            for &c in &colours {
                rarity[c as usize] += 1;
            }
            let order = matching_order(&g, &colours, &rarity);
            assert_eq!(
                order,
                matching_order_sorting_every_root(&g, &colours, &rarity),
                "trial {trial}"
            );
            let mut seen = order.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "trial {trial}: not a permutation");
        }
    }

    fn cycle(n: u32) -> Graph {
        Graph::from_edges(n, (0..n).map(|u| (u, (u + 1) % n)))
    }

    #[test]
    fn automorphism_counts_of_known_groups() {
        let k333 = Graph::from_edges(
            9,
            (0..9u32).flat_map(|u| (u + 1..9).filter(move |v| v % 3 != u % 3).map(move |v| (u, v))),
        );
        let q4 = Graph::from_edges(16, (0..16u32).flat_map(|u| (0..4).map(move |b| (u, u ^ (1 << b)))));
        let petersen = Graph::from_edges(
            10,
            (0..5u32).flat_map(|i| [(i, (i + 1) % 5), (i, i + 5), (5 + i, 5 + (i + 2) % 5)]),
        );
        let star = Graph::from_edges(6, (1..6u32).map(|v| (0, v)));
        let k5 = Graph::from_edges(5, (0..5u32).flat_map(|u| (u + 1..5).map(move |v| (u, v))));
        let path = Graph::from_edges(7, (0..6u32).map(|u| (u, u + 1)));
        for (name, g, expected) in [
            ("C12", cycle(12), 24),
            ("K3,3,3", k333, 6 * 6 * 6 * 6),
            ("Q4", q4, 16 * 24),
            ("Petersen", petersen, 120),
            ("K1,5", star, 120),
            ("K5", k5, 120),
            ("P7", path, 2),
        ] {
            assert_eq!(count_automorphisms(&g, 10_000_000), (expected, true), "{name}");
        }
        // A budget too small to finish says so.
        let (found, complete) = count_automorphisms(&cycle(12), 30);
        assert!(!complete && found < 24, "{found}");
    }

    #[test]
    fn best_isomorphism_is_the_maximum_over_all_permutations() {
        fn permutations(n: usize) -> Vec<Vec<u32>> {
            if n == 0 {
                return vec![Vec::new()];
            }
            let mut out = Vec::new();
            for p in permutations(n - 1) {
                for i in 0..n {
                    let mut q = p.clone();
                    q.insert(i, (n - 1) as u32);
                    out.push(q);
                }
            }
            out
        }
        let mut rng = StdRng::seed_from_u64(7);
        for trial in 0..120 {
            let n = rng.gen_range(1..=7u32);
            let m = rng.gen_range(0..=(n * (n - 1) / 2) as usize);
            let g1 = Graph::from_edges(n, (0..m).map(|_| (rng.gen_range(0..n), rng.gen_range(0..n))));
            let mut shuffle: Vec<u32> = (0..n).collect();
            for i in (1..n as usize).rev() {
                shuffle.swap(i, rng.gen_range(0..=i));
            }
            let g2 = g1.relabel(&shuffle);
            let features: Vec<NodeFeature> = (0..1 + trial % 3)
                .map(|_| {
                    let mut f = || (0..n).map(|_| rng.gen_range(-2..=2) as f64).collect::<Vec<f64>>();
                    (f(), f())
                })
                .collect();
            let score = |m: &[u32]| -> f64 {
                features
                    .iter()
                    .map(|(a, b)| (0..n as usize).map(|u| a[u] * b[m[u] as usize]).sum::<f64>())
                    .sum()
            };
            let all = permutations(n as usize);
            let isos: Vec<&Vec<u32>> = all.iter().filter(|p| verify(&g1, &g2, p).is_ok()).collect();
            let max = isos.iter().map(|p| score(p)).fold(f64::NEG_INFINITY, f64::max);
            let found = best_isomorphism(&g1, &g2, &features, &[], 1_000_000).expect("isomorphic");
            assert!(found.exhaustive, "trial {trial}");
            verify(&g1, &g2, &found.mapping).unwrap();
            assert_eq!(found.score, score(&found.mapping), "trial {trial}");
            assert!(
                (found.score - max).abs() < 1e-9,
                "trial {trial}: {} vs {max}",
                found.score
            );
            // Without pruning every isomorphism is visited.
            let (count, complete) = count_automorphisms(&g1, 1_000_000);
            assert_eq!((count, complete), (isos.len() as u64, true), "trial {trial}");
            // A seed that is no isomorphism is ignored; a graph that is not isomorphic gives None.
            let identity: Vec<u32> = (0..n).collect();
            let seeded = best_isomorphism(&g1, &g2, &features, &[&identity], 1_000_000).unwrap();
            assert!((seeded.score - max).abs() < 1e-9, "trial {trial}");
        }
        let path = Graph::from_edges(4, [(0, 1), (1, 2), (2, 3)]);
        let star = Graph::from_edges(4, [(0, 1), (0, 2), (0, 3)]);
        assert_eq!(best_isomorphism(&path, &star, &[], &[], 1_000), None);
    }

    #[test]
    fn anchored_best_isomorphism_is_the_maximum_over_the_permutations_keeping_the_anchor() {
        let mut rng = StdRng::seed_from_u64(17);
        let mut restricted = 0;
        for trial in 0..150 {
            let n = rng.gen_range(2..=7u32);
            let m = rng.gen_range(0..=(n * (n - 1) / 2) as usize);
            let g1 = Graph::from_edges(n, (0..m).map(|_| (rng.gen_range(0..n), rng.gen_range(0..n))));
            let mut shuffle: Vec<u32> = (0..n).collect();
            for i in (1..n as usize).rev() {
                shuffle.swap(i, rng.gen_range(0..=i));
            }
            let g2 = g1.relabel(&shuffle);
            let features: Vec<NodeFeature> = (0..2)
                .map(|_| {
                    let mut f = || (0..n).map(|_| rng.gen_range(-3..=3) as f64).collect::<Vec<f64>>();
                    (f(), f())
                })
                .collect();
            let score = |m: &[u32]| -> f64 {
                features
                    .iter()
                    .map(|(a, b)| (0..n as usize).map(|u| a[u] * b[m[u] as usize]).sum::<f64>())
                    .sum()
            };
            // Any pair of nodes as the anchor: mapped to each other or not at all.
            let anchor = (rng.gen_range(0..n), rng.gen_range(0..n));
            let mut all = vec![Vec::new()];
            for k in 0..n {
                all = all
                    .into_iter()
                    .flat_map(|p: Vec<u32>| {
                        (0..=p.len()).map(move |i| {
                            let mut q = p.clone();
                            q.insert(i, k);
                            q
                        })
                    })
                    .collect();
            }
            let keeping: Vec<&Vec<u32>> = all
                .iter()
                .filter(|p| p[anchor.0 as usize] == anchor.1 && verify(&g1, &g2, p).is_ok())
                .collect();
            let found = best_isomorphism_anchored(&g1, &g2, &features, &[], &[anchor], 1_000_000);
            let Some(found) = found else {
                assert!(
                    keeping.is_empty(),
                    "trial {trial}: {} isomorphisms keep {anchor:?}",
                    keeping.len()
                );
                continue;
            };
            restricted += 1;
            assert!(found.exhaustive, "trial {trial}");
            assert_eq!(found.mapping[anchor.0 as usize], anchor.1, "trial {trial}");
            verify(&g1, &g2, &found.mapping).unwrap();
            let max = keeping.iter().map(|p| score(p)).fold(f64::NEG_INFINITY, f64::max);
            assert!(
                (found.score - max).abs() < 1e-9,
                "trial {trial}: {} vs {max}",
                found.score
            );
            // The stabiliser of a node has as many elements as isomorphisms keep that node's image.
            let image_of_anchor = anchor.0;
            let fixing = all
                .iter()
                .filter(|p| p[image_of_anchor as usize] == image_of_anchor && verify(&g1, &g1, p).is_ok())
                .count();
            assert_eq!(
                count_automorphisms_fixing(&g1, &[image_of_anchor], 1_000_000),
                (fixing as u64, true),
                "trial {trial}"
            );
            // A seed that moves the anchor is ignored even when it scores more.
            if let Some(moving) = all
                .iter()
                .find(|p| p[anchor.0 as usize] != anchor.1 && verify(&g1, &g2, p).is_ok())
            {
                let seeded = best_isomorphism_anchored(&g1, &g2, &features, &[moving], &[anchor], 1_000_000).unwrap();
                assert_eq!(seeded.mapping[anchor.0 as usize], anchor.1, "trial {trial}");
            }
        }
        assert!(
            restricted > 30,
            "only {restricted} trials had an isomorphism keeping the anchor"
        );
        let g = cycle(5);
        assert_eq!(
            best_isomorphism_anchored(&g, &g, &[], &[], &[(0, 5)], 1_000),
            None,
            "out of range"
        );
        assert_eq!(
            best_isomorphism_anchored(&g, &g, &[], &[], &[(0, 1), (2, 1)], 1_000),
            None,
            "one node anchored twice"
        );
    }

    #[test]
    fn stabilisers_of_known_groups() {
        // 4x4 periodic 6-point stencil: neighbours (±1, 0), (0, ±1), ±(1, 1).
        let stencil = Graph::from_edges(
            16,
            (0..16u32).flat_map(|r| {
                let (x, y) = (r % 4, r / 4);
                let at = |dx: u32, dy: u32| ((y + dy) % 4) * 4 + (x + dx) % 4;
                [(r, at(1, 0)), (r, at(0, 1)), (r, at(1, 1))]
            }),
        );
        let q4 = Graph::from_edges(16, (0..16u32).flat_map(|u| (0..4).map(move |b| (u, u ^ (1 << b)))));
        let star = Graph::from_edges(6, (1..6u32).map(|v| (0, v)));
        let path = Graph::from_edges(7, (0..6u32).map(|u| (u, u + 1)));
        assert_eq!(count_automorphisms(&stencil, 10_000_000), (192, true));
        for (name, g, fixed, expected) in [
            ("4x4 6-point stencil, one node", &stencil, vec![5u32], 12),
            ("C12, one node", &cycle(12), vec![3], 2),
            ("C12, two adjacent nodes", &cycle(12), vec![3, 4], 1),
            ("Q4, one node", &q4, vec![0], 24),
            ("K1,5, the centre", &star, vec![0], 120),
            ("K1,5, a leaf", &star, vec![2], 24),
            ("P7, the middle", &path, vec![3], 2),
            ("P7, an end", &path, vec![0], 1),
            ("nothing fixed", &cycle(12), vec![], 24),
        ] {
            assert_eq!(
                count_automorphisms_fixing(g, &fixed, 10_000_000),
                (expected, true),
                "{name}"
            );
        }
    }

    /// The 4x4 rook's graph K4□K4 and the Shrikhande graph: both strongly regular (16, 6, 2, 2),
    /// so colour refinement never tells them apart, nor any individualisation of one node.
    fn rook_and_shrikhande() -> (Graph, Graph) {
        let rook = Graph::from_edges(
            16,
            (0..16u32).flat_map(|u| {
                (u + 1..16)
                    .filter(move |v| v / 4 == u / 4 || v % 4 == u % 4)
                    .map(move |v| (u, v))
            }),
        );
        let at = |x: u32, y: u32| x % 4 + 4 * (y % 4);
        let shrikhande = Graph::from_edges(
            16,
            (0..16u32).flat_map(|u| {
                let (x, y) = (u % 4, u / 4);
                [
                    (at(x, y), at(x + 1, y)),
                    (at(x, y), at(x, y + 1)),
                    (at(x, y), at(x + 1, y + 1)),
                ]
            }),
        );
        (rook, shrikhande)
    }

    fn disjoint_union(parts: &[&Graph]) -> Graph {
        let mut edges = Vec::new();
        let mut base = 0;
        for p in parts {
            edges.extend(p.edges().map(|(u, v)| (u + base, v + base)));
            base += p.num_nodes();
        }
        Graph::from_edges(base, edges)
    }

    #[test]
    fn individualisation_is_not_bounded_by_the_call_stack() {
        // 64 rook graphs and 64 Shrikhande graphs against the same with one rook graph swapped
        // for a Shrikhande graph, randomly numbered: not isomorphic, and every individualisation
        // keeps the colour histograms equal, so the search goes hundreds of levels deep before
        // its budget runs out. It runs on a thread with a 64 KiB stack (a recursion per level
        // needs more), and says it gave up or refuted, never overflows.
        let (rook, shrikhande) = rook_and_shrikhande();
        let a: Vec<&Graph> = (0..128).map(|i| if i % 2 == 0 { &rook } else { &shrikhande }).collect();
        let mut b = a.clone();
        b[0] = &shrikhande;
        let (g1, g2) = (disjoint_union(&a), disjoint_union(&b));
        let mut rng = StdRng::seed_from_u64(7);
        let mut perm: Vec<u32> = (0..g2.num_nodes()).collect();
        perm.shuffle(&mut rng);
        let g2 = g2.relabel(&perm);
        let worker = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || {
                let colouring = refine_joint(&[&g1, &g2], 32);
                let mut budget = Budget {
                    left: 32_000_000,
                    used: 0,
                    deepest: 0,
                };
                let found = matches!(individualise(&g1, &g2, colouring, 64, &mut budget), Search::Found(..));
                let whole = isomorphism(&g1, &g2, IsoOptions::for_nodes(g1.num_nodes()));
                (found, budget.deepest, whole)
            })
            .unwrap();
        let (found, deepest, whole) = worker.join().expect("no stack overflow");
        assert!(!found);
        assert!(deepest >= 150, "only {deepest} levels: the case no longer tests depth");
        assert!(whole.mapping().is_none(), "{whole:?}");
        // The same search on isomorphic inputs still finds (and verifies) a mapping.
        let (g1, g3) = (disjoint_union(&a), disjoint_union(&a).relabel(&perm));
        assert!(isomorphism(&g1, &g3, IsoOptions::for_nodes(g1.num_nodes()))
            .mapping()
            .is_some());
        assert!(matches!(
            isomorphism(&rook, &shrikhande, IsoOptions::for_nodes(16)),
            IsoOutcome::NotIsomorphic { .. }
        ));
    }
}
