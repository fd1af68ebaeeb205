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

mod best;
#[cfg(test)]
mod tests;

pub use best::{
    best_isomorphism, best_isomorphism_anchored, count_automorphisms, count_automorphisms_fixing, BestIsomorphism,
    NodeFeature,
};
