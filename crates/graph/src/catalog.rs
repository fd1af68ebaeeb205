//! Which family members could have `n` nodes: every factorisation for grids and tori (any
//! number of dimensions), 2D factorisations for 6/8-point stencils, 3D ones for 7/19/27-point
//! stencils, 2D ones for process grids (rows and columns), and the one-parameter families (ring, line, star, all-to-all, binary and
//! binomial trees, hypercube, butterfly) where `n` fits.
//!
//! Dimension orders that give the same graph are listed once (extents non-increasing); the
//! 1-dimensional grid and torus are listed as `line` and `ring`.

use crate::families::{Family, TopologySpec};

/// Every factorisation of `n` into factors ≥ 2, each in non-increasing order.
pub fn factorisations(n: u32) -> Vec<Vec<u32>> {
    fn rec(rest: u32, max: u32, cur: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if rest == 1 {
            if !cur.is_empty() {
                out.push(cur.clone());
            }
            return;
        }
        let mut f = max.min(rest);
        while f >= 2 {
            if rest / f * f == rest {
                cur.push(f);
                rec(rest / f, f, cur, out);
                cur.pop();
            }
            f -= 1;
        }
    }
    let mut out = Vec::new();
    if n >= 2 {
        rec(n, n, &mut Vec::new(), &mut out);
    }
    out
}

/// Most masters a [`Family::MasterWorker`] candidate has.
pub const MAX_MASTERS: u32 = 4;

/// Candidate topologies with `n` nodes, in [`Family::ALL`] order then by dimensions.
pub fn candidates(n: u32) -> Vec<TopologySpec> {
    let mut out = Vec::new();
    let mut push = |family: Family, dims: Vec<u32>| {
        if let Ok(s) = TopologySpec::new(family, dims) {
            if s.num_nodes() == n {
                out.push(s);
            }
        }
    };
    if n == 0 {
        return Vec::new();
    }
    let facts = factorisations(n);
    for f in &facts {
        if f.len() >= 2 {
            push(Family::Grid, f.clone());
            push(Family::Torus, f.clone());
        }
    }
    for f in facts.iter().filter(|f| f.len() == 2) {
        push(Family::ProcessGrid, f.clone());
    }
    for f in facts.iter().filter(|f| f.len() == 2) {
        for fam in [
            Family::Stencil6,
            Family::Stencil6Mesh,
            Family::Stencil8,
            Family::Stencil8Mesh,
        ] {
            push(fam, f.clone());
        }
    }
    for f in facts.iter().filter(|f| f.len() == 3) {
        for fam in [
            Family::Stencil7,
            Family::Stencil7Mesh,
            Family::Stencil19,
            Family::Stencil19Mesh,
            Family::Stencil27,
            Family::Stencil27Mesh,
        ] {
            push(fam, f.clone());
        }
    }
    if n >= 2 && n.is_power_of_two() {
        push(Family::Hypercube, vec![n.trailing_zeros()]);
    }
    if n >= 2 {
        push(Family::BinaryTree, vec![n]);
        push(Family::AllToAll, vec![n]);
        push(Family::Line, vec![n]);
        push(Family::Star, vec![n]);
        push(Family::BinomialTree, vec![n]);
    }
    if n >= 3 {
        push(Family::Ring, vec![n]);
    }
    // Few masters: a run with more hubs than this is not a master–worker program.
    for m in 2..=MAX_MASTERS.min(n / 2) {
        push(Family::MasterWorker, vec![m, n]);
    }
    for k in 3..n.saturating_sub(1).min(256) {
        push(Family::KaryTree, vec![k, n]);
    }
    if let Some(grid) = crate::families::nas_cg_grid(n).filter(|_| n >= 2) {
        push(Family::NasCg, grid.to_vec());
    }
    for k in 1..=24u32 {
        if ((k as u64 + 1) << k) == n as u64 {
            push(Family::Butterfly, vec![k]);
        }
    }
    for fan_outs in tree_fan_outs(n) {
        push(Family::Tree, fan_outs);
    }
    out.sort_by_key(|s| Family::ALL.iter().position(|&f| f == s.family));
    out
}

/// The fan-out sequences `[b1, …, bL]` (L ≥ 2, each b ≥ 2, not all equal) of the level-complete
/// trees with `n` nodes: `n − 1 = b1 + b1·b2 + … = b1·(1 + b2·(1 + …))`. A single level is a
/// star and equal fan-outs a complete k-ary tree, which those families name. The sequences
/// follow a chain of divisors of `n − 1`, so there are few (O(d(n)^depth), depth ≤ log2 n).
pub fn tree_fan_outs(n: u32) -> Vec<Vec<u32>> {
    fn rec(m: u32, cur: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        // The next fan-out b divides m; either it is the last level (m = b) or the rest of the
        // tree below each of the b nodes has m / b − 1 nodes.
        for b in 2..=m.min(255) {
            if !m.is_multiple_of(b) {
                continue;
            }
            cur.push(b);
            if m == b {
                if cur.len() >= 2 && cur.iter().any(|&x| x != cur[0]) {
                    out.push(cur.clone());
                }
            } else if m / b > 2 {
                rec(m / b - 1, cur, out);
            }
            cur.pop();
        }
    }
    let mut out = Vec::new();
    if n >= 4 {
        rec(n - 1, &mut Vec::new(), &mut out);
    }
    out
}

/// How simple a topology is to name, lower first: fewer parameters, then a fixed family
/// preference (rings and lines before hypercubes, grids before tori, tori before stencils);
/// NAS CG after every generic family (a 4-rank CG run is a 4-node line).
/// Equivalent matches are reported under the simplest one.
pub fn simplicity(spec: &TopologySpec) -> (usize, usize) {
    const PREFERENCE: [Family; 25] = [
        Family::Ring,
        Family::Line,
        Family::Star,
        Family::MasterWorker,
        Family::AllToAll,
        Family::Hypercube,
        Family::BinaryTree,
        Family::KaryTree,
        Family::Tree,
        Family::BinomialTree,
        Family::Grid,
        Family::Torus,
        Family::ProcessGrid,
        Family::Stencil6,
        Family::Stencil6Mesh,
        Family::Stencil8,
        Family::Stencil8Mesh,
        Family::Stencil7,
        Family::Stencil7Mesh,
        Family::Stencil19,
        Family::Stencil19Mesh,
        Family::Stencil27,
        Family::Stencil27Mesh,
        Family::Butterfly,
        Family::NasCg,
    ];
    // NAS CG is one application's pattern: any generic family isomorphic to it names the run.
    let params = match spec.family {
        Family::KaryTree => 2,
        Family::NasCg => usize::MAX - 1,
        _ => spec.dims.len(),
    };
    (
        params,
        PREFERENCE
            .iter()
            .position(|&f| f == spec.family)
            .unwrap_or(PREFERENCE.len()),
    )
}
