//! The reference topology families: what a grid, torus, stencil, hypercube, tree, ring or
//! all-to-all of given dimensions is, node by node, with coordinates and named directions.
//!
//! This is the one definition used by the generator (to write traces of a known topology),
//! by topology identification (to build candidate graphs and report mappings) and by the
//! logical trace (to name directions).
//!
//! Conventions:
//! - Nodes of Cartesian families are numbered row-major with dimension 0 varying fastest:
//!   `node = c0 + d0·(c1 + d1·(c2 + ...))`.
//! - In 2D, `+dim0` is `east`, `−dim0` `west`, `+dim1` `south`, `−dim1` `north` (rows grow
//!   downwards), and diagonals combine them (`southwest` = (−1, +1)). In 3D, `+dim2` is `up` and
//!   `−dim2` `down`. Beyond, directions are written `+d3`, `-d4`.
//! - `stencil6` is the 2D periodic 6-point stencil of NAS BT/SP's multi-partition scheme
//!   (Logicalization, Table 5): the four axis neighbours plus the `northeast`/`southwest` diagonal,
//!   with wrap-around. `stencil8` is the periodic 8-point (Moore) neighbourhood. The `-mesh`
//!   variants do not wrap.
//! - A `binary-tree` of n nodes is heap-numbered: the children of `i` are `2i+1` and `2i+2`.
//! - A `binomial-tree` of n nodes is the tree of MPI's binomial broadcast and gather rooted at 0:
//!   the parent of `i > 0` is `i` with its highest set bit cleared, the children of `i` are
//!   `i + 2^j` for every `2^j > i` below n (direction `Child(j)`: round `j` of the broadcast on
//!   every rank). For n = 2^k it is the binomial tree B_k.
//! - A `tree` of fan-outs `b1 x b2 x …` is complete level by level: the root has `b1` children,
//!   each of them `b2`, …; nodes are numbered level by level (`tree:2x4`: root 0, 1–2, 3–10).
//! - A `hypercube` of dimension d is the 2×…×2 grid of 2^d nodes (neighbours differ in one bit).
//! - `nas-cg` is the exchange pattern of NPB CG (cg.f, `setup_submatrix_info`): ranks on an
//!   `nprows × npcols` grid numbered `proc_row·npcols + proc_col`, each exchanging with the
//!   recursive-doubling partners of its row (`proc_col xor 2^k`) and with one transpose partner.
//! - `process-grid` is the row/column process grid of dense linear algebra (HPL, ScaLAPACK,
//!   SUMMA): `P × Q` ranks numbered `row·Q + col`, each talking to its whole row and its whole
//!   column — the rook's graph `K_P □ K_Q` ([`process_grid`] finds its rows and columns);
//!   directions are relative and cyclic, `in-row+k` and `in-col+k`.
//! - `master-worker` is `m` masters (nodes `0..m`) each talking to every worker (`m..n`), the
//!   masters not to each other nor the workers among themselves: the complete bipartite graph
//!   `K_{m,n−m}`, a star with `m` centres (mplrs: a master handing out jobs and a consumer
//!   collecting output). Directions name the role: `master{i}` from a worker, `worker{j}` from
//!   a master (`j` counted from the first worker), so every worker has the same directions.

use crate::Graph;
use serde::{Deserialize, Serialize};
use std::fmt;

mod direction;
mod nas_cg;
mod process_grid;
mod spec;
pub use direction::*;
pub use nas_cg::*;
pub use process_grid::{disjoint_cliques, process_grid, CliqueLayout, DisjointCliques, ProcessGridLayout};
pub use spec::*;

/// A kind of topology; with dimensions it becomes a [`TopologySpec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Cartesian mesh without wrap-around, any number of dimensions.
    Grid,
    /// Cartesian mesh with wrap-around in every dimension.
    Torus,
    /// Periodic 2D 6-point stencil (axis neighbours + one diagonal pair), as NAS BT/SP.
    Stencil6,
    /// Non-periodic 2D 6-point stencil.
    Stencil6Mesh,
    /// Periodic 2D 8-point stencil (axis neighbours + both diagonals).
    Stencil8,
    /// Non-periodic 2D 8-point stencil.
    Stencil8Mesh,
    /// 2^d nodes, neighbours differ in one bit. `dims = [d]`.
    Hypercube,
    /// Heap-numbered binary tree. `dims = [n]`.
    BinaryTree,
    /// Every node talks to every other. `dims = [n]`.
    AllToAll,
    /// A cycle. `dims = [n]`.
    Ring,
    /// A path (1D grid). `dims = [n]`.
    Line,
    /// Periodic 3D 7-point stencil (the six face neighbours; the same graph as a 3D torus).
    Stencil7,
    /// Non-periodic 3D 7-point stencil (the same graph as a 3D grid).
    Stencil7Mesh,
    /// Periodic 3D 19-point stencil (faces and edges of the 3×3×3 cube around a node).
    Stencil19,
    /// Non-periodic 3D 19-point stencil.
    Stencil19Mesh,
    /// Periodic 3D 27-point stencil (the full 3×3×3 cube around a node).
    Stencil27,
    /// Non-periodic 3D 27-point stencil.
    Stencil27Mesh,
    /// Heap-numbered k-ary tree: the children of `i` are `k·i+1 ..= k·i+k`. `dims = [k, n]`.
    KaryTree,
    /// One centre (node 0) talking to every other node. `dims = [n]`.
    Star,
    /// Butterfly network of dimension k: k+1 levels of 2^k rows; node `level·2^k + row` is linked
    /// to `(level+1, row)` and `(level+1, row xor 2^level)`. `dims = [k]`.
    Butterfly,
    /// The NAS CG pattern on `nprows × npcols` ranks (both powers of two, `npcols` equal to
    /// `nprows` or twice it): row partners of a recursive-doubling reduction plus one transpose
    /// partner. `dims = [nprows, npcols]`.
    NasCg,
    /// The row/column process grid of dense linear algebra: `P × Q` ranks, each talking to
    /// every rank of its row and of its column (the rook's graph `K_P □ K_Q`). `dims = [P, Q]`
    /// (rows, columns); node `row·Q + col`.
    ProcessGrid,
    /// A rooted tree whose every node at depth `l` has `dims[l]` children (`dims` = fan-out per
    /// level from the root, each 2..=255; the last level are leaves). Reduction and broadcast
    /// trees of uneven fan-in, as NPB DT's black hole and white hole graphs (fan-in 4 then 2);
    /// nodes are numbered level by level, children of one parent consecutive. `dims = [b1, …]`.
    Tree,
    /// `m` masters (nodes `0..m`), each talking to every worker (`m..n`); masters do not talk
    /// to one another nor workers among themselves (the complete bipartite graph `K_{m,n−m}`;
    /// `m = 1` is the star). `dims = [m, n]`, `2 ≤ m < n − m`.
    MasterWorker,
    /// The tree of MPI's binomial broadcast and gather rooted at 0 (the binomial tree B_k for
    /// n = 2^k): the parent of `i > 0` is `i − 2^⌊log2 i⌋`, the children of `i` are `i + 2^j`
    /// for every `2^j > i` with `i + 2^j < n`. `dims = [n]`.
    BinomialTree,
}

impl Family {
    /// Every family, in the order candidates are listed.
    pub const ALL: [Family; 25] = [
        Family::Grid,
        Family::Torus,
        Family::Stencil6,
        Family::Stencil6Mesh,
        Family::Stencil8,
        Family::Stencil8Mesh,
        Family::Hypercube,
        Family::BinaryTree,
        Family::AllToAll,
        Family::Ring,
        Family::Line,
        Family::Stencil7,
        Family::Stencil7Mesh,
        Family::Stencil19,
        Family::Stencil19Mesh,
        Family::Stencil27,
        Family::Stencil27Mesh,
        Family::KaryTree,
        Family::Star,
        Family::Butterfly,
        Family::NasCg,
        Family::ProcessGrid,
        Family::Tree,
        Family::MasterWorker,
        Family::BinomialTree,
    ];

    /// The name used in JSON and on the command line (`grid`, `stencil6`, `binary-tree`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Family::Grid => "grid",
            Family::Torus => "torus",
            Family::Stencil6 => "stencil6",
            Family::Stencil6Mesh => "stencil6-mesh",
            Family::Stencil8 => "stencil8",
            Family::Stencil8Mesh => "stencil8-mesh",
            Family::Hypercube => "hypercube",
            Family::BinaryTree => "binary-tree",
            Family::AllToAll => "all-to-all",
            Family::Ring => "ring",
            Family::Line => "line",
            Family::Stencil7 => "stencil7",
            Family::Stencil7Mesh => "stencil7-mesh",
            Family::Stencil19 => "stencil19",
            Family::Stencil19Mesh => "stencil19-mesh",
            Family::Stencil27 => "stencil27",
            Family::Stencil27Mesh => "stencil27-mesh",
            Family::KaryTree => "kary-tree",
            Family::Star => "star",
            Family::Butterfly => "butterfly",
            Family::NasCg => "nas-cg",
            Family::ProcessGrid => "process-grid",
            Family::Tree => "tree",
            Family::MasterWorker => "master-worker",
            Family::BinomialTree => "binomial-tree",
        }
    }

    /// Parse a family name as [`Family::name`] writes it.
    pub fn from_name(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }

    /// True for families whose nodes are Cartesian coordinates and whose directions are offsets
    /// (grids, tori, lines and the 2D/3D stencils).
    pub fn is_cartesian(self) -> bool {
        matches!(
            self,
            Family::Grid
                | Family::Torus
                | Family::Stencil6
                | Family::Stencil6Mesh
                | Family::Stencil8
                | Family::Stencil8Mesh
                | Family::Line
                | Family::Stencil7
                | Family::Stencil7Mesh
                | Family::Stencil19
                | Family::Stencil19Mesh
                | Family::Stencil27
                | Family::Stencil27Mesh
        )
    }

    /// True for Cartesian families that wrap around in every dimension.
    pub fn periodic(self) -> bool {
        matches!(
            self,
            Family::Torus
                | Family::Stencil6
                | Family::Stencil8
                | Family::Stencil7
                | Family::Stencil19
                | Family::Stencil27
        )
    }

    fn is_stencil2d(self) -> bool {
        matches!(
            self,
            Family::Stencil6 | Family::Stencil6Mesh | Family::Stencil8 | Family::Stencil8Mesh
        )
    }

    fn is_stencil3d(self) -> bool {
        matches!(
            self,
            Family::Stencil7
                | Family::Stencil7Mesh
                | Family::Stencil19
                | Family::Stencil19Mesh
                | Family::Stencil27
                | Family::Stencil27Mesh
        )
    }
}

#[cfg(test)]
mod tests;
