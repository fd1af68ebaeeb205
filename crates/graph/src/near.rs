//! Closest alignment of two graphs with the same number of nodes: a bounded, greedy
//! common-subgraph search that reports the edges to remove and to add.
//!
//! Used when no candidate matches exactly: "a 4x4 torus missing the edge 3–7" is more useful
//! than "no match". The greedy follows the VF2++ order of the first graph and maps each node to
//! the unmatched node agreeing with the most already-matched neighbours; it is restarted from a
//! few roots and the alignment with the fewest differing edges wins. It gives an upper bound on
//! the edit distance, which is exact for the common case of a handful of stray or missing edges.

use crate::iso::matching_order;
use crate::refine::refine_joint;
use crate::Graph;
use serde::{Deserialize, Serialize};

const NONE: u32 = u32::MAX;

/// An alignment of `g1` onto `g2` and the edges where they differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alignment {
    /// Node of `g2` for each node of `g1`.
    pub mapping: Vec<u32>,
    /// Edges of `g1` (as `g1` node pairs) that are not edges of `g2` under the mapping.
    pub extra: Vec<(u32, u32)>,
    /// Edges of `g2` whose preimages (as `g1` node pairs) are not edges of `g1`.
    pub missing: Vec<(u32, u32)>,
}

impl Alignment {
    /// Number of edges to add or remove to turn `g1` into `g2`.
    pub fn distance(&self) -> usize {
        self.extra.len() + self.missing.len()
    }
}

/// Differences of `g1` and `g2` under `mapping` (a bijection of `g1`'s nodes onto `g2`'s).
pub fn differences(g1: &Graph, g2: &Graph, mapping: &[u32]) -> Alignment {
    let mut inverse = vec![NONE; g2.num_nodes() as usize];
    for (u, &v) in mapping.iter().enumerate() {
        inverse[v as usize] = u as u32;
    }
    let extra = g1
        .edges()
        .filter(|&(u, v)| !g2.has_edge(mapping[u as usize], mapping[v as usize]))
        .collect();
    let missing = g2
        .edges()
        .map(|(a, b)| {
            let (u, v) = (inverse[a as usize], inverse[b as usize]);
            (u.min(v), u.max(v))
        })
        .filter(|&(u, v)| !g1.has_edge(u, v))
        .collect();
    Alignment {
        mapping: mapping.to_vec(),
        extra,
        missing,
    }
}

/// How one bounded search ended.
enum Bounded {
    Found(Vec<u32>),
    /// Every mapping within the distance was refuted.
    Exhausted,
    /// The step budget ran out first.
    GaveUp,
}

/// Depth-first search for a mapping of `g1` onto `g2` that differs in at most `k` edges,
/// following `order` (a VF2++ order of `g1`), cheapest candidates first.
fn bounded_search(g1: &Graph, g2: &Graph, order: &[u32], k: usize, max_steps: u64) -> Bounded {
    let n = g1.num_nodes() as usize;
    let mut position = vec![0usize; n];
    for (i, &u) in order.iter().enumerate() {
        position[u as usize] = i;
    }
    let mut map1 = vec![NONE; n];
    let mut map2 = vec![NONE; n];
    let mut mark = vec![0u32; n];
    let mut stamp = 0u32;
    // Per depth: candidate list (cost, node), next index, cost paid at this depth.
    let mut cands: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    let mut next = vec![0usize; n];
    let mut paid = vec![0usize; n + 1];
    let mut total = 0usize;
    let mut steps = 0u64;
    let mut depth = 0usize;
    let mut fresh = true;
    loop {
        if depth == n {
            return Bounded::Found(map1);
        }
        let u = order[depth];
        if fresh {
            stamp += 1;
            let mut list = Vec::new();
            let earlier: Vec<u32> = g1
                .neighbors(u)
                .iter()
                .copied()
                .filter(|&x| position[x as usize] < depth)
                .collect();
            // Every candidate examined counts as a step, so the budget bounds the time.
            let mut examined = 0u64;
            let mut consider = |v: u32, list: &mut Vec<(usize, u32)>| {
                if map2[v as usize] != NONE || mark[v as usize] == stamp {
                    return;
                }
                mark[v as usize] = stamp;
                examined += 1;
                let agree = earlier.iter().filter(|&&x| g2.has_edge(map1[x as usize], v)).count();
                let matched = g2.neighbors(v).iter().filter(|&&w| map2[w as usize] != NONE).count();
                let cost = (earlier.len() - agree) + (matched - agree);
                if total + cost <= k {
                    list.push((cost, v));
                }
            };
            if earlier.is_empty() {
                for v in 0..n as u32 {
                    consider(v, &mut list);
                }
            } else {
                for &x in &earlier {
                    for &v in g2.neighbors(map1[x as usize]) {
                        consider(v, &mut list);
                    }
                }
            }
            steps += examined;
            if steps > max_steps {
                return Bounded::GaveUp;
            }
            let du = g1.degree(u);
            list.sort_by_key(|&(c, v)| (c, g2.degree(v).abs_diff(du), v));
            cands[depth] = list;
            next[depth] = 0;
            fresh = false;
        }
        if next[depth] < cands[depth].len() {
            let (cost, v) = cands[depth][next[depth]];
            next[depth] += 1;
            steps += 1;
            if steps > max_steps {
                return Bounded::GaveUp;
            }
            map1[u as usize] = v;
            map2[v as usize] = u;
            paid[depth] = cost;
            total += cost;
            depth += 1;
            fresh = true;
            continue;
        }
        if depth == 0 {
            return Bounded::Exhausted;
        }
        depth -= 1;
        let w = order[depth];
        map2[map1[w as usize] as usize] = NONE;
        map1[w as usize] = NONE;
        total -= paid[depth];
    }
}

/// The closest alignment of `g1` onto `g2` differing in at most `max_distance` edges, found by
/// iterative deepening on the number of differing edges (from `min_distance`, a lower bound
/// such as the degree-sequence one, in steps of two: the distance has the parity of the
/// edge-count difference), each round bounded by `max_steps`. The order follows the
/// graph with fewer edges (its edges are likely all in the other), and both directions are
/// tried. `None` if the node counts differ or nothing was found within the bounds.
pub fn align(g1: &Graph, g2: &Graph, min_distance: usize, max_distance: usize, max_steps: u64) -> Option<Alignment> {
    align_bounded(g1, g2, min_distance, max_distance, max_steps).alignment
}

/// What [`align_bounded`] found, and whether a step budget cut the search short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlignSearch {
    /// The closest alignment found within the bounds, if any.
    pub alignment: Option<Alignment>,
    /// True when some search round ran out of steps before refuting its distance: a closer
    /// alignment than the one returned (or one where none was returned) may exist.
    pub budget_exhausted: bool,
}

/// [`align`], also telling whether the step budget was exhausted, so a caller can say that
/// the answer is an upper bound rather than the closest alignment.
pub fn align_bounded(g1: &Graph, g2: &Graph, min_distance: usize, max_distance: usize, max_steps: u64) -> AlignSearch {
    let n = g1.num_nodes();
    let mut out = AlignSearch {
        alignment: None,
        budget_exhausted: false,
    };
    if n != g2.num_nodes() || n == 0 {
        return out;
    }
    let joint = refine_joint(&[g1, g2], 8);
    let order_of = |g: &Graph, c: &[u32], f: &[u32]| {
        let rarity: Vec<u32> = f.iter().map(|&x| x.max(1)).collect();
        matching_order(g, c, &rarity)
    };
    let o1 = order_of(g1, &joint.colours[0], &joint.histogram(0));
    let o2 = order_of(g2, &joint.colours[1], &joint.histogram(1));
    let sparser_first = g1.num_edges() <= g2.num_edges();
    // extra − missing = m1 − m2, so the distance has the parity of |m1 − m2|.
    let parity = g1.num_edges().abs_diff(g2.num_edges()) % 2;
    let start = min_distance + (min_distance % 2 != parity) as usize;
    for k in (start..=max_distance).step_by(2) {
        for forward in [sparser_first, !sparser_first] {
            let found = if forward {
                bounded_search(g1, g2, &o1, k, max_steps)
            } else {
                match bounded_search(g2, g1, &o2, k, max_steps) {
                    Bounded::Found(inv) => {
                        let mut m = vec![0u32; n as usize];
                        for (v, &u) in inv.iter().enumerate() {
                            m[u as usize] = v as u32;
                        }
                        Bounded::Found(m)
                    }
                    other => other,
                }
            };
            match found {
                Bounded::Found(mapping) => {
                    out.alignment = Some(differences(g1, g2, &mapping));
                    return out;
                }
                Bounded::GaveUp => out.budget_exhausted = true,
                Bounded::Exhausted => {}
            }
        }
    }
    out
}
