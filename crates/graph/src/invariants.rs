//! Spectral invariants: the adjacency spectrum (dense eigen-decomposition, for moderate sizes)
//! and exact closed-walk counts (spectral moments, for any size).
//!
//! `tr(A^k)` is the number of closed walks of length k and equals `Σ λ_i^k`: the first moments of
//! the spectrum, exact integers, computable sparsely. `(A^k)_vv = ⟨A^a e_v, A^b e_v⟩` with
//! `a + b = k`, so each node only needs its ball of radius ⌈k/2⌉: O(n · ball · Δ), linear in n
//! for the bounded-degree topologies of parallel codes. Sums wrap modulo 2^64, which keeps the
//! value a graph invariant (equal for isomorphic graphs) while never overflowing.

use crate::Graph;
use serde::{Deserialize, Serialize};

/// Largest graph whose full spectrum is computed (O(n³) dense eigen-decomposition; about
/// 1 s at n = 1024 natively, five times that in a browser, so it is kept for display-sized
/// graphs).
pub const SPECTRUM_MAX_NODES: u32 = 512;

/// Closed-walk counts `tr(A^k)` for `k = 1..=max_len`, wrapping modulo 2^64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WalkCounts {
    /// `counts[k-1] = tr(A^k) mod 2^64`.
    pub counts: Vec<u64>,
}

/// Closed-walk counts of lengths `1..=2·half`, or `None` when more than `op_budget` sparse
/// multiply-adds would be needed (dense graphs); callers then retry with a smaller `half`.
pub fn closed_walks(g: &Graph, half: usize, op_budget: u64) -> Option<WalkCounts> {
    let n = g.num_nodes() as usize;
    let max_len = 2 * half;
    let mut counts = vec![0u64; max_len];
    // vecs[j]: A^j e_v as (dense values, touched indices); reset after each node.
    let mut vals: Vec<Vec<u64>> = vec![vec![0u64; n]; half + 1];
    let mut touched: Vec<Vec<u32>> = vec![Vec::new(); half + 1];
    let mut ops = 0u64;
    for v in 0..n {
        vals[0][v] = 1;
        touched[0].push(v as u32);
        for j in 1..=half {
            let (lo, hi) = vals.split_at_mut(j);
            let (src, dst) = (&lo[j - 1], &mut hi[0]);
            let (tlo, thi) = touched.split_at_mut(j);
            for &x in &tlo[j - 1] {
                let w = src[x as usize];
                for &y in g.neighbors(x) {
                    if dst[y as usize] == 0 {
                        thi[0].push(y);
                    }
                    dst[y as usize] = dst[y as usize].wrapping_add(w);
                }
                ops += g.degree(x) as u64;
            }
            if ops > op_budget {
                return None;
            }
        }
        // (A^k)_vv = ⟨A^a e_v, A^b e_v⟩ for a = ⌊k/2⌋, b = ⌈k/2⌉.
        for k in 1..=max_len {
            let (a, b) = (k / 2, k - k / 2);
            let dot = touched[a].iter().fold(0u64, |acc, &x| {
                acc.wrapping_add(vals[a][x as usize].wrapping_mul(vals[b][x as usize]))
            });
            counts[k - 1] = counts[k - 1].wrapping_add(dot);
        }
        for j in 0..=half {
            for &x in &touched[j] {
                vals[j][x as usize] = 0;
            }
            touched[j].clear();
        }
    }
    Some(WalkCounts { counts })
}

/// Closed-walk counts up to length 8, shortening to 6, 4, 2 when the graph is too dense for
/// `op_budget` operations.
pub fn closed_walks_within(g: &Graph, op_budget: u64) -> WalkCounts {
    // Walks of half-length 2 or more cost at least Σ deg² operations: skip hopeless attempts.
    let level2: u64 = (0..g.num_nodes()).map(|u| (g.degree(u) as u64).pow(2)).sum();
    let top = if level2 > op_budget { 1 } else { 4 };
    for half in (1..=top).rev() {
        if let Some(w) = closed_walks(g, half, op_budget) {
            return w;
        }
    }
    // Length 1 and 2 need no walk: tr(A) = 0 and tr(A²) = 2m.
    WalkCounts {
        counts: vec![0, 2 * g.num_edges() as u64],
    }
}

/// The adjacency eigenvalues in increasing order (nalgebra `SymmetricEigen`), or `None` above
/// [`SPECTRUM_MAX_NODES`].
pub fn spectrum(g: &Graph) -> Option<Vec<f64>> {
    let n = g.num_nodes() as usize;
    if g.num_nodes() > SPECTRUM_MAX_NODES {
        return None;
    }
    let mut a = nalgebra::DMatrix::<f64>::zeros(n, n);
    for (u, v) in g.edges() {
        a[(u as usize, v as usize)] = 1.0;
        a[(v as usize, u as usize)] = 1.0;
    }
    let mut ev: Vec<f64> = nalgebra::SymmetricEigen::new(a).eigenvalues.iter().copied().collect();
    ev.sort_by(f64::total_cmp);
    Some(ev)
}

/// True if two sorted spectra agree within 1e-6 (relative to the largest magnitude).
pub fn spectra_agree(a: &[f64], b: &[f64]) -> bool {
    let scale = a.iter().chain(b).fold(1.0f64, |m, x| m.max(x.abs()));
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-6 * scale)
}

/// Number of nodes at each distance from `root` (breadth-first levels; unreachable nodes are
/// not counted). For a vertex-transitive graph this profile is the same from every node, so it
/// separates, for example, tori of different aspect ratios that agree on all short walks.
pub fn distance_profile(g: &Graph, root: u32) -> Vec<u32> {
    let n = g.num_nodes() as usize;
    let mut dist = vec![u32::MAX; n];
    let mut queue = vec![root];
    dist[root as usize] = 0;
    let mut profile = vec![1u32];
    let mut i = 0;
    while i < queue.len() {
        let u = queue[i];
        i += 1;
        let d = dist[u as usize] + 1;
        for &v in g.neighbors(u) {
            if dist[v as usize] == u32::MAX {
                dist[v as usize] = d;
                queue.push(v);
                if profile.len() <= d as usize {
                    profile.push(0);
                }
                profile[d as usize] += 1;
            }
        }
    }
    profile
}
