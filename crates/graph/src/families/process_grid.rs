//! The row/column process grid of dense linear algebra (HPL, ScaLAPACK, SUMMA): `P × Q` ranks,
//! each talking to its whole row and its whole column — the rook's graph `K_P □ K_Q`.
//!
//! Its automorphisms are every permutation of the rows times every permutation of the columns
//! (`P!·Q!`), and the transpose too when `P = Q`: an isomorphism proves the family but says
//! nothing about which rank is in which row. [`process_grid`] reads the rows and columns from
//! the graph itself, with one fixed rule (below), so the same labelled graph always gets the
//! same layout and a row-major numbering is recovered as it is. [`disjoint_cliques`] names a
//! graph of equal, disjoint cliques (a phase that only uses rows, or only columns).

use super::{Family, TopologySpec};
use crate::iso::verify;
use crate::Graph;
use serde::{Deserialize, Serialize};

/// Where each node of a graph sits in the process grid it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessGridLayout {
    /// `process-grid` with `[P, Q]`: `P` rows of `Q` ranks, oriented by the rule of
    /// [`process_grid`].
    pub spec: TopologySpec,
    /// `node_of[u]`: the grid node (`row·Q + col`) of graph node `u`.
    pub node_of: Vec<u32>,
}

/// The rows and columns of `g` when it is a process grid (`K_P □ K_Q`, `P, Q ≥ 2`), `None`
/// otherwise. The rule, for one answer among the grid's automorphisms:
///
/// - every edge lies in exactly one line (a row or a column): the edge `u–v` with the nodes
///   adjacent to both;
/// - the row of node 0 is its line through its lowest neighbour (so with the row-major
///   numbering `rank = row·Q + col` of HPL and `MPI_Cart_create`, ranks 0 and 1 share a row);
///   its other line is its column; `Q` is the row's length and `P` the column's;
/// - columns are numbered by the increasing order of their node in row 0, rows by the increasing
///   order of their node in column 0 (node 0 is at (0, 0)).
///
/// The layout is checked edge by edge against the family's graph before it is returned.
/// O(n·(P + Q)·log degree).
pub fn process_grid(g: &Graph) -> Option<ProcessGridLayout> {
    let n = g.num_nodes();
    if n < 4 {
        return None;
    }
    let a = 0u32;
    let &b = g.neighbors(a).first()?;
    let common =
        |x: u32, y: u32| -> Vec<u32> { g.neighbors(x).iter().copied().filter(|&z| g.has_edge(y, z)).collect() };
    let mut row: Vec<u32> = [a, b].into_iter().chain(common(a, b)).collect();
    row.sort_unstable();
    let mut column: Vec<u32> = std::iter::once(a)
        .chain(g.neighbors(a).iter().copied().filter(|x| row.binary_search(x).is_err()))
        .collect();
    column.sort_unstable();
    let (p, q) = (column.len() as u32, row.len() as u32);
    if p < 2 || q < 2 || p.checked_mul(q) != Some(n) {
        return None;
    }
    // The unique member of `line` that is `x` or adjacent to it.
    let along = |line: &[u32], x: u32| -> Option<u32> {
        if let Ok(i) = line.binary_search(&x) {
            return Some(i as u32);
        }
        let mut hits = line.iter().enumerate().filter(|&(_, &m)| g.has_edge(m, x));
        let (i, _) = hits.next()?;
        hits.next().is_none().then_some(i as u32)
    };
    let mut node_of = Vec::with_capacity(n as usize);
    for x in 0..n {
        let (r, c) = if row.binary_search(&x).is_ok() {
            (0, along(&row, x)?)
        } else if column.binary_search(&x).is_ok() {
            (along(&column, x)?, 0)
        } else {
            (along(&column, x)?, along(&row, x)?)
        };
        node_of.push(r * q + c);
    }
    let spec = TopologySpec::new(Family::ProcessGrid, vec![p, q]).ok()?;
    verify(g, &spec.graph(), &node_of).ok()?;
    Some(ProcessGridLayout { spec, node_of })
}

/// How the cliques of [`DisjointCliques`] sit in the rank numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CliqueLayout {
    /// Clique `i` is the ranks `i·size ..< (i+1)·size`: the rows of a `count × size` grid
    /// numbered row-major.
    Rows,
    /// Rank `x` is in clique `x mod count`: the columns of a `size × count` grid numbered
    /// row-major.
    Columns,
    /// Neither: rows or columns of a grid numbered some other way.
    Unordered,
}

/// A graph that is `count` disjoint cliques of `size` nodes each, covering every node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisjointCliques {
    /// Number of cliques.
    pub count: u32,
    /// Nodes per clique.
    pub size: u32,
    /// Rows, columns, or neither in the numbering.
    pub layout: CliqueLayout,
}

impl DisjointCliques {
    /// `rows of a 2x4 process grid`, `columns of a 4x2 process grid`, or `2 disjoint 4-rank
    /// all-to-alls (the rows or columns of a process grid)`.
    pub fn label(&self) -> String {
        let (k, s) = (self.count, self.size);
        match self.layout {
            CliqueLayout::Rows => format!("rows of a {k}x{s} process grid"),
            CliqueLayout::Columns => format!("columns of a {s}x{k} process grid"),
            CliqueLayout::Unordered => {
                format!("{k} disjoint {s}-rank all-to-alls (the rows or columns of a process grid)")
            }
        }
    }
}

/// `g` as equal disjoint cliques of at least 3 nodes, at least 2 of them, covering every node
/// (a phase of a process grid that only uses rows, or only columns); `None` otherwise. Cliques
/// of 2 (pairs) are not named: a perfect matching is any pairwise exchange. O(n + m).
pub fn disjoint_cliques(g: &Graph) -> Option<DisjointCliques> {
    let n = g.num_nodes();
    let comps = g.components();
    let size = comps.first()?.len() as u32;
    let count = comps.len() as u32;
    if size < 3 || count < 2 || comps.iter().any(|c| c.len() as u32 != size) {
        return None;
    }
    // Equal components of `size` nodes where every node has `size − 1` neighbours are cliques.
    if (0..n).any(|u| g.degree(u) != size - 1) {
        return None;
    }
    let rows = comps.iter().all(|c| c.iter().all(|&x| x / size == c[0] / size));
    let columns = comps.iter().all(|c| c.iter().all(|&x| x % count == c[0] % count));
    let layout = if rows {
        CliqueLayout::Rows
    } else if columns {
        CliqueLayout::Columns
    } else {
        CliqueLayout::Unordered
    };
    Some(DisjointCliques { count, size, layout })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::seq::SliceRandom;
    use rand::SeedableRng;

    /// The grid written from its definition (same row or same column), independently of the
    /// family's directions.
    fn rook(p: u32, q: u32) -> Graph {
        let n = p * q;
        Graph::from_edges(
            n,
            (0..n).flat_map(|u| {
                (u + 1..n)
                    .filter(move |&v| v / q == u / q || v % q == u % q)
                    .map(move |v| (u, v))
            }),
        )
    }

    fn permutations(n: u32) -> Vec<Vec<u32>> {
        let mut out = vec![vec![]];
        for k in 0..n {
            out = out
                .into_iter()
                .flat_map(|p: Vec<u32>| {
                    (0..=k as usize).map(move |i| {
                        let mut q = p.clone();
                        q.insert(i, k);
                        q
                    })
                })
                .collect();
        }
        out
    }

    /// Checks the layout of `rook(p, q)` renumbered by `perm` (node u → perm[u]) against the
    /// rule: ranks in one true row are in one found row (or all in one found column when the
    /// rule transposed the grid), the found row of the lowest rank holds its lowest neighbour,
    /// and rows and columns are numbered by their lowest-rank members as documented.
    fn check(p: u32, q: u32, perm: &[u32]) {
        let g = rook(p, q).relabel(perm);
        let layout = process_grid(&g).unwrap_or_else(|| panic!("{p}x{q} {perm:?}: not found"));
        let [fp, fq] = [layout.spec.dims[0], layout.spec.dims[1]];
        let found = |x: u32| (layout.node_of[x as usize] / fq, layout.node_of[x as usize] % fq);
        let mut truth = vec![(0, 0); (p * q) as usize];
        for u in 0..p * q {
            truth[perm[u as usize] as usize] = (u / q, u % q);
        }
        // Orientation: the lowest rank's lowest neighbour shares its found row.
        let low = *g.neighbors(0).first().unwrap();
        assert_eq!(found(low).0, found(0).0, "{p}x{q}: orientation rule");
        assert_eq!(found(0), (0, 0));
        let transposed = truth[low as usize].1 == truth[0].1 && truth[low as usize].0 != truth[0].0;
        assert_eq!((fp, fq), if transposed { (q, p) } else { (p, q) });
        for x in 0..p * q {
            for y in 0..p * q {
                let (tx, ty) = (truth[x as usize], truth[y as usize]);
                let (same_row, same_col) = if transposed {
                    (tx.1 == ty.1, tx.0 == ty.0)
                } else {
                    (tx.0 == ty.0, tx.1 == ty.1)
                };
                assert_eq!(found(x).0 == found(y).0, same_row, "{p}x{q} {perm:?}: rows of {x}, {y}");
                assert_eq!(
                    found(x).1 == found(y).1,
                    same_col,
                    "{p}x{q} {perm:?}: columns of {x}, {y}"
                );
            }
        }
        // Columns increase with their rank in row 0, rows with their rank in column 0.
        let mut in_row0: Vec<(u32, u32)> = (0..p * q)
            .filter(|&x| found(x).0 == 0)
            .map(|x| (x, found(x).1))
            .collect();
        in_row0.sort_unstable();
        assert!(
            in_row0.iter().enumerate().all(|(i, &(_, c))| c == i as u32),
            "{in_row0:?}"
        );
        let mut in_col0: Vec<(u32, u32)> = (0..p * q)
            .filter(|&x| found(x).1 == 0)
            .map(|x| (x, found(x).0))
            .collect();
        in_col0.sort_unstable();
        assert!(
            in_col0.iter().enumerate().all(|(i, &(_, r))| r == i as u32),
            "{in_col0:?}"
        );
    }

    #[test]
    fn rows_and_columns_under_every_numbering_of_small_grids() {
        // Every numbering of 2x2, 2x3, 3x2 and 2x4 (40,320), and of 3x3 (362,880 is too many
        // for a debug test: every 7th).
        for (p, q) in [(2, 2), (2, 3), (3, 2), (2, 4), (4, 2)] {
            for perm in permutations(p * q) {
                check(p, q, &perm);
            }
        }
        for (i, perm) in permutations(9).into_iter().enumerate() {
            if i % 7 == 0 {
                check(3, 3, &perm);
            }
        }
    }

    #[test]
    fn rows_and_columns_under_random_numberings_of_larger_grids() {
        let mut rng = StdRng::seed_from_u64(11);
        for (p, q) in [(4, 4), (2, 8), (8, 2), (3, 5), (6, 4), (16, 16), (5, 7)] {
            for _ in 0..20 {
                let mut perm: Vec<u32> = (0..p * q).collect();
                perm.shuffle(&mut rng);
                check(p, q, &perm);
            }
        }
    }

    #[test]
    fn row_major_and_column_major_numberings_are_recovered() {
        for (p, q) in [(2, 4), (4, 2), (3, 3), (4, 6)] {
            let g = rook(p, q);
            let layout = process_grid(&g).unwrap();
            assert_eq!(layout.spec.dims, vec![p, q]);
            assert_eq!(layout.node_of, (0..p * q).collect::<Vec<_>>());
            // Column-major: rank = col·P + row; then ranks 0 and 1 share a column of the
            // original, which the rule calls a row: the Q x P grid, row-major again.
            let colmajor: Vec<u32> = (0..p * q).map(|u| (u % q) * p + u / q).collect();
            let layout = process_grid(&g.relabel(&colmajor)).unwrap();
            assert_eq!(layout.spec.dims, vec![q, p]);
            assert_eq!(layout.node_of, (0..p * q).collect::<Vec<_>>());
        }
    }

    #[test]
    fn other_graphs_are_not_process_grids() {
        // Look-alikes: the Shrikhande graph (strongly regular like the 4x4 grid), tori, the
        // hypercube, K_n, a grid with one edge removed.
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
        assert!(process_grid(&shrikhande).is_none());
        for s in [
            "torus:4x4",
            "torus:5x3",
            "hypercube:4",
            "all-to-all:8",
            "grid:4x2",
            "stencil8:4x4",
        ] {
            assert!(process_grid(&TopologySpec::parse(s).unwrap().graph()).is_none(), "{s}");
        }
        let g = rook(3, 4);
        let cut: Vec<(u32, u32)> = g.edges().filter(|&e| e != (0, 1)).collect();
        assert!(process_grid(&Graph::from_edges(12, cut)).is_none());
        // Small tori and the prism are process grids (K2□K2 = C4, K3□K3 = 3x3 torus).
        assert_eq!(
            process_grid(&TopologySpec::parse("torus:3x3").unwrap().graph())
                .unwrap()
                .spec
                .dims,
            vec![3, 3]
        );
    }

    #[test]
    fn the_family_is_the_grid_of_rows_and_columns() {
        for (p, q) in [(1, 5), (2, 2), (2, 4), (3, 5), (4, 4), (7, 3)] {
            let spec = TopologySpec::new(Family::ProcessGrid, vec![p, q]).unwrap();
            assert_eq!(spec.graph(), rook(p, q), "{p}x{q}");
            assert_eq!(spec.edge_count(), rook(p, q).num_edges() as u64);
            assert_eq!(spec.degree_histogram(), rook(p, q).degree_histogram());
            assert_eq!(spec.label(), format!("{p}x{q} process grid (rows and columns)"));
            for u in 0..p * q {
                for (d, v) in spec.neighbours(u) {
                    let back = spec.opposite(u, &d).unwrap();
                    assert_eq!(spec.neighbour(v, &back), Some(u), "{p}x{q} {u} {d}");
                }
            }
        }
        assert_eq!(
            TopologySpec::parse("process-grid:2x4")
                .unwrap()
                .neighbours(5)
                .iter()
                .map(|(d, v)| (d.name(), *v))
                .collect::<Vec<_>>(),
            vec![
                ("in-row+1".into(), 6),
                ("in-row+2".into(), 7),
                ("in-row+3".into(), 4),
                ("in-col+1".to_string(), 1)
            ]
        );
    }

    #[test]
    fn disjoint_cliques_are_named_rows_or_columns() {
        let rows = Graph::from_edges(8, rook(2, 4).edges().filter(|&(u, v)| u / 4 == v / 4));
        let cols = Graph::from_edges(8, rook(2, 4).edges().filter(|&(u, v)| u % 4 == v % 4));
        let r = disjoint_cliques(&rows).unwrap();
        assert_eq!(r.label(), "rows of a 2x4 process grid");
        // Columns of 2 ranks are pairs: not named.
        assert!(disjoint_cliques(&cols).is_none());
        let cols = Graph::from_edges(12, rook(3, 4).edges().filter(|&(u, v)| u % 4 == v % 4));
        assert_eq!(
            disjoint_cliques(&cols).unwrap().label(),
            "columns of a 3x4 process grid"
        );
        let perm: Vec<u32> = (0..12).map(|u| (u * 5) % 12).collect();
        let mixed = Graph::from_edges(12, rook(3, 4).edges().filter(|&(u, v)| u / 4 == v / 4)).relabel(&perm);
        assert_eq!(disjoint_cliques(&mixed).unwrap().layout, CliqueLayout::Unordered);
        // Unequal cliques, a clique plus an isolated rank, a whole grid: not disjoint cliques.
        let unequal = Graph::from_edges(
            7,
            [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (5, 6), (3, 5), (3, 6), (4, 6)],
        );
        assert!(disjoint_cliques(&unequal).is_none());
        let lonely = Graph::from_edges(4, [(0, 1), (1, 2), (0, 2)]);
        assert!(disjoint_cliques(&lonely).is_none());
        assert!(disjoint_cliques(&rook(3, 3)).is_none());
        let cycles = Graph::from_edges(8, [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4)]);
        assert!(disjoint_cliques(&cycles).is_none());
    }
}
