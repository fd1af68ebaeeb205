//! Closest alignment of two graphs with the same number of nodes: a bounded, greedy
//! common-subgraph search that reports the edges to remove and to add.
//!
//! Used when no candidate matches exactly: "a 4x4 torus missing the edge 3–7" is more useful
//! than "no match". The greedy follows the VF2++ order of the first graph and maps each node to
//! the unmatched node agreeing with the most already-matched neighbours; it is restarted from a
//! few roots and the alignment with the fewest differing edges wins. It gives an upper bound on
//! the edit distance, which is exact for the common case of a handful of stray or missing edges.

use crate::iso::matching_order;
use crate::refine::refine;
use crate::Graph;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;

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

fn greedy(g1: &Graph, g2: &Graph, order: &[u32], root_image: u32) -> Vec<u32> {
    let n = g1.num_nodes() as usize;
    let mut map1 = vec![NONE; n];
    let mut map2 = vec![NONE; n];
    // Unmatched g2 nodes by degree, for nodes with no usable neighbour (lazy removal).
    let max_deg = g2.max_degree() as usize;
    let mut by_degree: Vec<Vec<u32>> = vec![Vec::new(); max_deg + 1];
    for v in (0..n as u32).rev() {
        by_degree[g2.degree(v) as usize].push(v);
    }
    let mut score: Vec<u32> = vec![0; n];
    let mut touched: Vec<u32> = Vec::new();
    for (i, &u) in order.iter().enumerate() {
        touched.clear();
        for &x in g1.neighbors(u) {
            let img = map1[x as usize];
            if img == NONE {
                continue;
            }
            for &v in g2.neighbors(img) {
                if map2[v as usize] == NONE {
                    if score[v as usize] == 0 {
                        touched.push(v);
                    }
                    score[v as usize] += 1;
                }
            }
        }
        let du = g1.degree(u) as i64;
        let best = touched
            .iter()
            .copied()
            .max_by_key(|&v| (score[v as usize], Reverse((g2.degree(v) as i64 - du).abs()), Reverse(v)));
        for &v in &touched {
            score[v as usize] = 0;
        }
        let v = match best {
            Some(v) => v,
            None if i == 0 && map2[root_image as usize] == NONE => root_image,
            None => {
                // Closest degree among unmatched nodes.
                let mut pick = NONE;
                'outer: for delta in 0..=max_deg.max(du as usize) {
                    for d in [du - delta as i64, du + delta as i64] {
                        if d < 0 || d as usize > max_deg {
                            continue;
                        }
                        let bucket = &mut by_degree[d as usize];
                        while let Some(&v) = bucket.last() {
                            if map2[v as usize] == NONE {
                                pick = v;
                                break 'outer;
                            }
                            bucket.pop();
                        }
                    }
                }
                pick
            }
        };
        map1[u as usize] = v;
        map2[v as usize] = u;
    }
    map1
}

/// The best greedy alignment of `g1` onto `g2` over up to `roots × images` restarts, or `None`
/// if the node counts differ. O(restarts · (n + m) log Δ).
pub fn align(g1: &Graph, g2: &Graph, roots: usize, images: usize) -> Option<Alignment> {
    let n = g1.num_nodes();
    if n != g2.num_nodes() || n == 0 {
        return None;
    }
    let c1 = refine(g1, 8);
    let c2 = refine(g2, 8);
    let freq = |c: &[u32]| {
        let mut f = vec![0u32; c.iter().max().map_or(0, |&m| m as usize + 1)];
        for &x in c {
            f[x as usize] += 1;
        }
        f
    };
    let (f1, f2) = (freq(&c1), freq(&c2));
    let mut starts: Vec<u32> = (0..n).collect();
    starts.sort_by_key(|&u| (f1[c1[u as usize] as usize], Reverse(g1.degree(u)), u));
    let mut best: Option<Alignment> = None;
    for &root in starts.iter().take(roots) {
        // The order is that of g1 rooted at `root`: rotate the VF2++ order's root choice by
        // giving the root a unique rarest colour.
        let mut colours = c1.clone();
        let unique = f1.len() as u32;
        colours[root as usize] = unique;
        let mut rarity = f1.clone();
        rarity.push(0);
        let order = matching_order(g1, &colours, &rarity);
        let mut imgs: Vec<u32> = (0..n).collect();
        let d = g1.degree(root) as i64;
        imgs.sort_by_key(|&v| ((g2.degree(v) as i64 - d).abs(), f2[c2[v as usize] as usize], v));
        for &img in imgs.iter().take(images) {
            let mapping = greedy(g1, g2, &order, img);
            let a = differences(g1, g2, &mapping);
            if best.as_ref().is_none_or(|b| a.distance() < b.distance()) {
                let done = a.distance() == 0;
                best = Some(a);
                if done {
                    return best;
                }
            }
        }
    }
    best
}
