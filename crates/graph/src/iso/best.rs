//! The best of all isomorphisms under a separable score, and counting automorphisms: the
//! search of [`super`] enumerating every isomorphism instead of stopping at the first.

use super::*;

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
