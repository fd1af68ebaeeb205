//! Cartesian grids the program declared (`MPI_Cart_create` over every rank): their extents and
//! each rank's coordinates, and the placement of the match (or an equivalent of the same
//! extents) in them, a candidate the logical trace's direction choice scores like the others.

use super::Placement;
use tracelogic_graph::TopologySpec;
use tracelogic_model::{Rank, Trace};

/// A Cartesian grid the program declared over every rank of the run (`MPI_Cart_create` on a
/// communicator whose members are all the world ranks): the extents and each world rank's
/// coordinates. It places an equivalent of the same extents as the program numbers its own
/// processes, a candidate that first contacts cannot find when the program meets its partners in
/// rank order rather than in a fixed order of moves (LAMMPS's PPPM on 2x2x2 ranks: the graph is
/// K8, the 2x2x2 stencil's directions are the program's, but each rank exchanges with its
/// partners lowest rank first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredGrid {
    /// Extent of each dimension, as declared.
    pub dims: Vec<u32>,
    /// `coords_of_rank[r]`: world rank `r`'s coordinates in the grid.
    pub coords_of_rank: Vec<Vec<u32>>,
}

/// Every Cartesian grid `trace` declares over all its ranks, distinct, in declaration order.
pub fn declared_grids(trace: &Trace) -> Vec<DeclaredGrid> {
    let n = trace.num_ranks() as usize;
    let mut out: Vec<DeclaredGrid> = Vec::new();
    for t in &trace.cartesian {
        let Some(comm) = trace.comms.get(t.comm as usize) else {
            continue;
        };
        if comm.members.len() != n || t.coords.len() != n {
            continue;
        }
        let mut coords_of_rank: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut complete = true;
        for (i, &m) in comm.members.iter().enumerate() {
            match coords_of_rank.get_mut(m as usize) {
                Some(c) if c.is_empty() => *c = t.coords[i].clone(),
                _ => complete = false,
            }
        }
        let g = DeclaredGrid {
            dims: t.dims.clone(),
            coords_of_rank,
        };
        if complete && !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

/// `spec` placed by a declared grid of its extents, made canonical, when that placement carries
/// every edge of the run's graph onto an edge of `spec` (the graphs have as many edges, so it is
/// then an isomorphism).
pub(super) fn placement_by_grid(
    spec: &TopologySpec,
    grid: &DeclaredGrid,
    edges: &[[Rank; 2]],
) -> Result<Placement, String> {
    let n = grid.coords_of_rank.len() as u32;
    let mut pairs = Vec::with_capacity(n as usize);
    for (r, c) in grid.coords_of_rank.iter().enumerate() {
        let u = spec
            .node_at(c)
            .ok_or_else(|| format!("rank {r}'s declared coordinates {c:?} are outside {}", spec.label()))?;
        pairs.push((r as Rank, u));
    }
    let p = Placement::new(spec.clone(), n, pairs)?;
    let g = spec.graph();
    for &[a, b] in edges {
        let (Some(&u), Some(&v)) = (p.node_of_rank.get(a as usize), p.node_of_rank.get(b as usize)) else {
            return Err("an edge of the run names a rank outside the declared grid".into());
        };
        if !g.has_edge(u, v) {
            return Err(format!(
                "the declared grid does not carry ranks {a} and {b}, which communicate, onto neighbours"
            ));
        }
    }
    Ok(p.canonical())
}
