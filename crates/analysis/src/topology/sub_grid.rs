//! Process grids declared by row and column communicators on part of the ranks.
//!
//! Applications that call ScaLAPACK or ELPA for one step often give it a group of their ranks
//! only: Quantum ESPRESSO diagonalises on its "ortho group" (a 2x2 grid of 4 of 8 ranks),
//! CP2K and NWChem likewise. BLACS then splits that group into rows and columns as it does the
//! whole world ([`super::comm_grid`]), so the trace holds P row communicators of Q ranks and Q
//! column communicators of P ranks whose union S is a proper subset of the ranks, every row
//! meeting every column in exactly one rank. Such a grid cannot name the run (the other ranks
//! talk too); it explains part of its graph, so it is listed with the pairs inside it that lie
//! in its rows, its columns or neither, and the pairs that leave it.
//!
//! Rows and columns are told apart as for a whole grid: the family whose line through S's
//! lowest rank holds that rank's lowest partner is the rows. Cost: for each pair of line sizes
//! (q, p) with 4 ≤ p · q < n, each line of size q and each line of size p through its lowest
//! rank, a greedy completion over the lines through each rank (at most [`MAX_STEPS`] steps).
//!
//! ```
//! use tracelogic_analysis::topology::sub_grid;
//! use tracelogic_model::Trace;
//! // Ranks 0, 2, 4, 6 of 8: rows {0, 2} and {4, 6}, columns {0, 4} and {2, 6}.
//! let mut t = Trace::new("ortho", "doc", 8);
//! for m in [vec![0, 2], vec![4, 6], vec![0, 4], vec![2, 6]] {
//!     t.add_comm("line", m);
//! }
//! let grids = sub_grid::find(&t, &[[0, 2], [0, 1]], &[]);
//! assert_eq!(grids.len(), 1);
//! assert_eq!(grids[0].label, "2x2 process grid on ranks 0, 2, 4, 6");
//! assert_eq!(grids[0].coords, vec![[0, 0], [0, 1], [1, 0], [1, 1]]);
//! assert_eq!((grids[0].pairs_in_rows, grids[0].pairs_leaving), (1, 1));
//! ```

use super::comm_grid::{member_sets, CommunicatorGrid};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use tracelogic_model::Trace;

/// Steps at most over all sizes: starts (a row and a column from one rank) tried and lines
/// examined while completing them (a guard against traces with thousands of communicators).
pub const MAX_STEPS: usize = 200_000;

/// Grids listed at most.
pub const MAX_GRIDS: usize = 8;

/// A P × Q process grid declared on `ranks`, a proper subset of the run's ranks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubGrid {
    /// P: the number of rows.
    pub rows: u32,
    /// Q: the number of columns.
    pub cols: u32,
    /// `2x2 process grid on ranks 0, 2, 4, 6`.
    pub label: String,
    /// The grid's world ranks, ascending.
    pub ranks: Vec<u32>,
    /// `[row, col]` of each of `ranks`, in the same order (lines numbered by their lowest rank).
    pub coords: Vec<[u32; 2]>,
    /// Observed (filtered) pairs of two grid ranks in one row.
    pub pairs_in_rows: usize,
    /// Observed pairs of two grid ranks in one column.
    pub pairs_in_cols: usize,
    /// Observed pairs of two grid ranks in neither.
    pub pairs_off_grid: usize,
    /// Observed pairs of a grid rank and a rank outside the grid.
    pub pairs_leaving: usize,
    /// One sentence for people.
    pub summary: String,
}

/// Every process grid that row and column communicators declare on part of `trace`'s ranks
/// (see the module documentation), at most [`MAX_GRIDS`], from lines that are no row or column
/// of the grids over every rank `whole` ([`super::comm_grid::find`]); `edges` are the observed
/// (filtered) communicating pairs.
pub fn find(trace: &Trace, edges: &[[u32; 2]], whole: &[CommunicatorGrid]) -> Vec<SubGrid> {
    search(trace, edges, whole).0
}

/// [`find`], and whether the search ran to its end (`false`: [`MAX_STEPS`] ran out and a grid
/// beyond them may be missing; reaching [`MAX_GRIDS`] is not counted as unfinished).
pub fn search(trace: &Trace, edges: &[[u32; 2]], whole: &[CommunicatorGrid]) -> (Vec<SubGrid>, bool) {
    let n = trace.num_ranks() as usize;
    // A line belongs to one grid: the rows and columns of a grid over every rank are no one
    // else's (GROMACS's PME columns with its domain decomposition's pairs are no grid).
    let mut taken: BTreeSet<Vec<u32>> = BTreeSet::new();
    for g in whole {
        for axis in 0..2 {
            let mut lines: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
            for (rank, c) in g.coords.iter().enumerate() {
                lines.entry(c[axis]).or_default().push(rank as u32);
            }
            taken.extend(lines.into_values());
        }
    }
    let mut sets = member_sets(trace);
    for by_size in sets.values_mut() {
        by_size.retain(|members, _| !taken.contains(members));
    }
    let index: BTreeMap<usize, SizeIndex<'_>> = sets.iter().map(|(&size, sets)| (size, SizeIndex::of(sets))).collect();
    let mut found: Vec<SubGrid> = Vec::new();
    let mut seen: BTreeSet<Vec<Vec<u32>>> = BTreeSet::new();
    let mut budget = MAX_STEPS;
    'sizes: for (&q, rows_index) in &index {
        for (&p, cols_index) in &index {
            if p * q >= n || p * q < 4 {
                continue;
            }
            for r0 in rows_index.lines.iter().copied() {
                for c0 in lines_starting(cols_index, r0[0]).filter(|c| *c != r0) {
                    if budget == 0 || found.len() >= MAX_GRIDS {
                        break 'sizes;
                    }
                    budget -= 1;
                    if r0.iter().filter(|m| c0.binary_search(m).is_ok()).count() != 1 {
                        continue;
                    }
                    let Some((rows, cols)) = complete(r0, c0, rows_index, cols_index, &mut budget) else {
                        continue;
                    };
                    let Some(g) = grid(&rows, &cols, edges) else {
                        continue;
                    };
                    // One grid per set of lines (the same lines come back with the sizes swapped).
                    let mut lines: Vec<Vec<u32>> = rows.iter().chain(cols.iter()).map(|l| l.to_vec()).collect();
                    lines.sort();
                    if seen.insert(lines) {
                        found.push(g);
                    }
                }
            }
        }
    }
    (found, budget > 0)
}

/// The lines of one size (member sets, ascending), with the lines through each rank and those
/// starting at each rank, in the same order.
struct SizeIndex<'a> {
    lines: Vec<&'a [u32]>,
    through: BTreeMap<u32, Vec<&'a [u32]>>,
    starting: BTreeMap<u32, Vec<&'a [u32]>>,
}

impl<'a> SizeIndex<'a> {
    fn of(sets: &'a BTreeMap<Vec<u32>, Vec<u32>>) -> Self {
        let mut index = SizeIndex {
            lines: Vec::new(),
            through: BTreeMap::new(),
            starting: BTreeMap::new(),
        };
        for line in sets.keys() {
            index.lines.push(line);
            index.starting.entry(line[0]).or_default().push(line);
            for &m in line {
                index.through.entry(m).or_default().push(line);
            }
        }
        index
    }
}

/// The lines of `index` whose lowest rank is `first`.
fn lines_starting<'a, 'b>(index: &'b SizeIndex<'a>, first: u32) -> impl Iterator<Item = &'a [u32]> + 'b {
    index.starting.get(&first).into_iter().flatten().copied()
}

/// Lines of a grid (member ranks, ascending).
type Lines<'a> = Vec<&'a [u32]>;

/// The rows through each member of `c0` and the columns through each member of `r0`, each
/// the first line of its size holding that rank and disjoint from those chosen; `None` unless
/// rows and columns cover the same ranks, or when `budget` (lines examined) runs out.
fn complete<'a>(
    r0: &'a [u32],
    c0: &'a [u32],
    rows_index: &SizeIndex<'a>,
    cols_index: &SizeIndex<'a>,
    budget: &mut usize,
) -> Option<(Lines<'a>, Lines<'a>)> {
    let mut family = |through: &[u32], anchor: &'a [u32], index: &SizeIndex<'a>| {
        let mut used: BTreeSet<u32> = anchor.iter().copied().collect();
        let mut chosen: Vec<&'a [u32]> = vec![anchor];
        for &r in through {
            if anchor.contains(&r) {
                continue;
            }
            let mut pick = None;
            for &line in index.through.get(&r).into_iter().flatten() {
                *budget = budget.checked_sub(1)?;
                if line.iter().all(|m| !used.contains(m)) {
                    pick = Some(line);
                    break;
                }
            }
            let line = pick?;
            used.extend(line.iter().copied());
            chosen.push(line);
        }
        Some((chosen, used))
    };
    let (cols, in_cols) = family(r0, c0, cols_index)?;
    let (rows, in_rows) = family(c0, r0, rows_index)?;
    (in_cols == in_rows).then_some((rows, cols))
}

/// The grid of `rows` and `cols` (every row meeting every column once), compared with `edges`.
fn grid(rows: &[&[u32]], cols: &[&[u32]], edges: &[[u32; 2]]) -> Option<SubGrid> {
    let mut ranks: Vec<u32> = rows.iter().flat_map(|r| r.iter().copied()).collect();
    ranks.sort_unstable();
    if ranks.windows(2).any(|w| w[0] == w[1]) || ranks.len() != rows.len() * cols.len() {
        return None;
    }
    let number = |family: &[&[u32]]| -> BTreeMap<u32, u32> {
        let mut order: Vec<&[u32]> = family.to_vec();
        order.sort_by_key(|l| l[0]);
        let mut of = BTreeMap::new();
        for (i, l) in order.iter().enumerate() {
            for &m in l.iter() {
                of.insert(m, i as u32);
            }
        }
        of
    };
    let (row_of, col_of) = (number(rows), number(cols));
    let mut cells = BTreeSet::new();
    for r in &ranks {
        if !cells.insert((*row_of.get(r)?, *col_of.get(r)?)) {
            return None;
        }
    }
    let (row_of, col_of, p, q) = if super::comm_grid::first_are_rows(rows, cols, ranks[0]) {
        (row_of, col_of, rows.len() as u32, cols.len() as u32)
    } else {
        (col_of, row_of, cols.len() as u32, rows.len() as u32)
    };
    let coords: Vec<[u32; 2]> = ranks.iter().map(|r| [row_of[r], col_of[r]]).collect();
    let (mut in_rows, mut in_cols, mut off, mut leaving) = (0, 0, 0, 0);
    for &[a, b] in edges {
        match (row_of.get(&a), row_of.get(&b)) {
            (Some(ra), Some(rb)) => {
                if ra == rb {
                    in_rows += 1;
                } else if col_of[&a] == col_of[&b] {
                    in_cols += 1;
                } else {
                    off += 1;
                }
            }
            (None, None) => {}
            _ => leaving += 1,
        }
    }
    let list = ranks.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let label = format!("{p}x{q} process grid on ranks {list}");
    let summary = format!(
        "row and column communicators declare a {label}; point-to-point pairs: {in_rows} in rows, {in_cols} \
         in columns, {off} between its ranks off the grid, {leaving} to ranks outside it."
    );
    Some(SubGrid {
        rows: p,
        cols: q,
        label,
        ranks,
        coords,
        pairs_in_rows: in_rows,
        pairs_in_cols: in_cols,
        pairs_off_grid: off,
        pairs_leaving: leaving,
        summary,
    })
}
