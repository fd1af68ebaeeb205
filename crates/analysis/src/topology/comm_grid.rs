//! A process grid the program declared by its row and column communicators.
//!
//! Dense linear algebra (ScaLAPACK's BLACS, HPL, ELPA) lays its ranks out on a P × Q grid and
//! creates one communicator per row and one per column (`MPI_Comm_split` by row and by column;
//! BLACS_GRIDINIT does exactly that), without `MPI_Cart_create`. Those communicators are a
//! declaration as good as a Cartesian one: the rows are P disjoint groups of Q ranks, the
//! columns Q disjoint groups of P, and every row meets every column in exactly one rank. Which
//! ranks exchange point-to-point messages is only part of the grid's traffic (BLACS broadcasts
//! along a row by a ring or by `MPI_Bcast` on the row communicator, pivots are swapped along a
//! column), so the point-to-point graph alone names a torus, a hypercube or nothing where the
//! program has a P × Q grid.
//!
//! [`find`] looks for such pairs of communicator families over all ranks of the trace (both
//! extents at least 2), from the communicators' members only (no format-specific derivation).
//! Rows and columns cannot be told apart by their members (the rows of a row-major P × Q grid
//! are the columns of a column-major Q × P one), so the family whose group through the lowest
//! rank holds its lowest partner is read as the rows, as `families::process_grid` reads a
//! graph: a row-major grid (rank = row · Q + col, BLACS's default) comes back as it is.
//! Coordinates number the rows and the columns by their lowest rank. Two grids declared on the
//! same ranks are both reported; each family of lines belongs to one grid only.
//!
//! Cost: O(C · s log s) to collect the C communicators' member sets, then per factorisation
//! P · Q of the rank count one greedy completion per line through rank 0 (over the lines
//! through each rank) and one check per pair of such lines, at most [`MAX_STEPS`] ranks
//! examined in all: a trace declaring thousands of overlapping lines ends the search there
//! ([`search`] says so) instead of running for many minutes.
//!
//! ```
//! use tracelogic_analysis::topology::comm_grid;
//! use tracelogic_model::Trace;
//! // A 2x3 grid, row-major: rows {0,1,2} {3,4,5}, columns {0,3} {1,4} {2,5}.
//! let mut t = Trace::new("blacs", "doc", 6);
//! for m in [vec![0, 1, 2], vec![3, 4, 5], vec![0, 3], vec![1, 4], vec![2, 5]] {
//!     t.add_comm("line", m);
//! }
//! let (grids, complete) = comm_grid::search(&t, &[[0, 1], [0, 3]], comm_grid::MAX_STEPS);
//! assert!(complete);
//! assert_eq!(grids[0].label, "2x3 process grid");
//! assert!(grids[0].row_major && grids[0].agrees);
//! ```

use super::grid_lines::CommTraffic;
use crate::matrix::CommMatrix;
use serde::{Deserialize, Serialize};
use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};
use tracelogic_model::{Selection, Trace};

/// Distinct member sets examined per size at most (a guard against traces with thousands of
/// communicators; a grid beyond them is not found).
const MAX_SETS_PER_SIZE: usize = 4096;

/// Ranks examined at most by one [`find`] (lines' members while completing families, pairs of
/// lines through rank 0, grids compared with the traffic): a few tenths of a second.
pub const MAX_STEPS: usize = 20_000_000;

/// A P × Q process grid declared by row and column communicators, compared with the traffic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommunicatorGrid {
    /// P: the number of rows (each of `cols` ranks).
    pub rows: u32,
    /// Q: the number of columns (each of `rows` ranks).
    pub cols: u32,
    /// `2x3 process grid`.
    pub label: String,
    /// `[row, col]` of every world rank (rows and columns numbered by their lowest rank).
    pub coords: Vec<[u32; 2]>,
    /// Every rank is `row · cols + col` (BLACS's default `Row-major` order).
    pub row_major: bool,
    /// Every rank is `col · rows + row`.
    pub column_major: bool,
    /// Communicators over exactly one row (a program may create several per row).
    pub row_communicators: usize,
    /// Communicators over exactly one column.
    pub col_communicators: usize,
    /// Collective calls on the row communicators, counted per rank.
    pub row_collective_calls: u64,
    /// Collective calls on the column communicators, counted per rank.
    pub col_collective_calls: u64,
    /// Observed (filtered) communicating pairs inside one row.
    pub pairs_in_rows: usize,
    /// Observed communicating pairs inside one column.
    pub pairs_in_cols: usize,
    /// Observed communicating pairs in neither (at most 64 listed in `off_grid`).
    pub pairs_off_grid: usize,
    /// Such pairs, world ranks.
    pub off_grid: Vec<[u32; 2]>,
    /// The share of the run's point-to-point bytes (every pair, before filtering) sent between
    /// ranks that share neither a row nor a column (0 when `pairs_off_grid` is 0).
    #[serde(default)]
    pub off_grid_share: f64,
    /// Every observed pair lies in a row or a column, and both rows and columns carry traffic
    /// (point-to-point pairs or collectives on their communicators).
    pub agrees: bool,
    /// One sentence for people.
    pub summary: String,
}

impl CommunicatorGrid {
    /// What [`agrees`](Self::agrees) says of the pairs the grid was found with, of other
    /// `pairs` (world ranks): every one lies in one row or one column, and both rows and
    /// columns carry traffic (pairs among `pairs`, or collectives on their communicators). A
    /// phase of the run is named by its declared grid this way (`phases::describe`).
    pub fn holds(&self, pairs: &[[u32; 2]]) -> bool {
        let (mut rows, mut cols) = (self.row_collective_calls > 0, self.col_collective_calls > 0);
        let on_grid = pairs.iter().all(|&[a, b]| {
            match (self.coords.get(a as usize), self.coords.get(b as usize)) {
                (Some(x), Some(y)) if x[0] == y[0] => rows = true,
                (Some(x), Some(y)) if x[1] == y[1] => cols = true,
                _ => return false,
            }
            true
        });
        on_grid && rows && cols
    }
}

/// The distinct member sets (sorted) of `trace`'s communicators, by size, each with the ids of
/// the communicators that have it.
pub(super) fn member_sets(trace: &Trace) -> BTreeMap<usize, BTreeMap<Vec<u32>, Vec<u32>>> {
    let n = trace.num_ranks();
    let mut by_size: BTreeMap<usize, BTreeMap<Vec<u32>, Vec<u32>>> = BTreeMap::new();
    for (id, c) in trace.comms.iter().enumerate() {
        let s = c.members.len();
        if s < 2 || s >= n as usize || c.members.iter().any(|&m| m >= n) {
            continue;
        }
        let mut m = c.members.clone();
        m.sort_unstable();
        m.dedup();
        if m.len() != s {
            continue;
        }
        let sets = by_size.entry(s).or_default();
        if sets.len() < MAX_SETS_PER_SIZE || sets.contains_key(&m) {
            sets.entry(m).or_default().push(id as u32);
        }
    }
    by_size
}

/// The lines of one size (member sets, ascending) through each rank: through rank 0 every
/// line holding it (the anchors), through any other rank only lines without rank 0 (a family
/// holds one line through rank 0, its anchor, so no other can join it).
fn lines_through(n: usize, sets: &BTreeMap<Vec<u32>, Vec<u32>>) -> Vec<Vec<&[u32]>> {
    let mut through: Vec<Vec<&[u32]>> = vec![Vec::new(); n];
    for line in sets.keys() {
        if line[0] == 0 {
            through[0].push(line);
        } else {
            for &m in line {
                through[m as usize].push(line);
            }
        }
    }
    through
}

/// Takes `k` steps from `budget`, or empties it and says `None` when fewer are left.
fn spend(budget: &mut usize, k: usize) -> Option<()> {
    match budget.checked_sub(k) {
        Some(left) => {
            *budget = left;
            Some(())
        }
        None => {
            *budget = 0;
            None
        }
    }
}

/// A partition of `0..n` into `anchor` and other lines: for each rank not yet covered, in
/// order, the first line through it disjoint from those chosen; `None` when some rank has
/// none, or when `budget` (ranks examined) runs out.
fn partition<'a>(
    n: usize,
    through: &[Vec<&'a [u32]>],
    anchor: &'a [u32],
    budget: &mut usize,
) -> Option<Vec<&'a [u32]>> {
    let mut owner = vec![usize::MAX; n];
    for &r in anchor {
        owner[r as usize] = 0;
    }
    let mut chosen: Vec<&[u32]> = vec![anchor];
    for r in 0..n {
        spend(budget, 1)?;
        if owner[r] != usize::MAX {
            continue;
        }
        let mut pick = None;
        for &line in &through[r] {
            spend(budget, line.len())?;
            if line.iter().all(|&m| owner[m as usize] == usize::MAX) {
                pick = Some(line);
                break;
            }
        }
        let line = pick?;
        for &m in line {
            owner[m as usize] = chosen.len();
        }
        chosen.push(line);
    }
    Some(chosen)
}

/// Each line through rank 0 completed greedily to a family ([`partition`]), with its anchor;
/// `None` when `budget` ran out.
#[allow(clippy::type_complexity)]
fn families<'a>(n: usize, through: &[Vec<&'a [u32]>], budget: &mut usize) -> Option<Vec<(&'a [u32], Vec<&'a [u32]>)>> {
    let mut out = Vec::new();
    for &anchor in &through[0] {
        let family = partition(n, through, anchor, budget);
        if *budget == 0 {
            return None;
        }
        out.extend(family.map(|f| (anchor, f)));
    }
    Some(out)
}

/// What the grids are compared with: the observed pairs, the traffic on each communicator and,
/// only when some pair lies off a grid, the run's whole matrix (for the bytes off it).
struct Observed<'a> {
    trace: &'a Trace,
    edges: &'a [[u32; 2]],
    traffic: CommTraffic,
    matrix: OnceCell<CommMatrix>,
}

impl Observed<'_> {
    fn matrix(&self) -> &CommMatrix {
        self.matrix
            .get_or_init(|| CommMatrix::from_trace(self.trace, &Selection::all()))
    }
}

/// The share of `matrix`'s bytes between ranks in neither the same row nor the same column.
fn off_grid_share(matrix: &CommMatrix, coords: &[[u32; 2]]) -> f64 {
    let (mut off, mut all) = (0u64, 0u64);
    for e in matrix.entries() {
        let (Some(a), Some(b)) = (coords.get(e.from as usize), coords.get(e.to as usize)) else {
            continue;
        };
        all += e.bytes;
        if a[0] != b[0] && a[1] != b[1] {
            off += e.bytes;
        }
    }
    if all == 0 {
        0.0
    } else {
        off as f64 / all as f64
    }
}

/// Every process grid over all of `trace`'s ranks that its communicators declare (see the
/// module documentation); `edges` are the observed (filtered) communicating pairs. A search
/// cut short by [`MAX_STEPS`] returns what it found: [`search`] says whether it finished.
pub fn find(trace: &Trace, edges: &[[u32; 2]]) -> Vec<CommunicatorGrid> {
    search(trace, edges, MAX_STEPS).0
}

/// [`find`] with at most `steps` ranks examined: the grids found and whether the search ran to
/// its end (`false`: the budget ran out and a grid beyond it may be missing).
pub fn search(trace: &Trace, edges: &[[u32; 2]], steps: usize) -> (Vec<CommunicatorGrid>, bool) {
    let n = trace.num_ranks() as usize;
    if n < 4 {
        return (Vec::new(), true);
    }
    let sets = member_sets(trace);
    let mut found: Vec<CommunicatorGrid> = Vec::new();
    let mut seen: BTreeSet<Vec<[u32; 2]>> = BTreeSet::new();
    let observed = Observed {
        trace,
        edges,
        traffic: CommTraffic::of(trace),
        matrix: OnceCell::new(),
    };
    let mut budget = steps;
    let complete = 'sizes: {
        for a in 2..=n / 2 {
            if !n.is_multiple_of(a) {
                continue;
            }
            let b = n / a;
            if a > b {
                continue;
            }
            let (Some(sa), Some(sb)) = (sets.get(&a), sets.get(&b)) else {
                continue;
            };
            let (ta, tb) = (lines_through(n, sa), lines_through(n, sb));
            let (Some(fas), Some(fbs)) = (families(n, &ta, &mut budget), families(n, &tb, &mut budget)) else {
                break 'sizes false;
            };
            // Every pair of families whose lines through rank 0 meet only there.
            for (ga, fa) in &fas {
                for (gb, fb) in &fbs {
                    if spend(&mut budget, ga.len() + n).is_none() {
                        break 'sizes false;
                    }
                    if ga.iter().filter(|m| gb.binary_search(m).is_ok()).count() != 1 {
                        continue;
                    }
                    if let Some(g) = grid_of(n, fa, fb, sa, sb, &observed) {
                        if seen.insert(g.coords.clone()) {
                            found.push(g);
                        }
                    }
                }
            }
        }
        true
    };
    (one_grid_per_family(found), complete)
}

/// Keep each family of lines in one grid: a program that declares two grids on the same ranks
/// (ScaLAPACK's drivers run 2x3, then 3x2) also leaves a grid whose rows are one declaration's
/// lines and whose columns the other's. Row- or column-major grids are kept first, then the
/// others, in the order found, each only if neither of its families (ranks' row numbers,
/// ranks' column numbers, lines numbered by their lowest rank) is in a grid already kept.
fn one_grid_per_family(mut found: Vec<CommunicatorGrid>) -> Vec<CommunicatorGrid> {
    found.sort_by_key(|g| !(g.row_major || g.column_major));
    let mut used: BTreeSet<Vec<u32>> = BTreeSet::new();
    found.retain(|g| {
        let rows: Vec<u32> = g.coords.iter().map(|c| c[0]).collect();
        let cols: Vec<u32> = g.coords.iter().map(|c| c[1]).collect();
        if used.contains(&rows) || used.contains(&cols) {
            return false;
        }
        used.insert(rows);
        used.insert(cols);
        true
    });
    found
}

/// Whether lines `a` (not `b`) are a grid's rows: the family whose line through the grid's
/// lowest rank `low` holds that rank's lowest partner, so that a row-major grid (BLACS's
/// default) comes back as it is. Shared by whole grids and grids on part of the ranks.
pub(super) fn first_are_rows(a: &[&[u32]], b: &[&[u32]], low: u32) -> bool {
    let partner = |l: &[u32]| l.iter().copied().find(|&m| m != low).unwrap_or(u32::MAX);
    let through = |f: &[&[u32]]| f.iter().find(|l| l.contains(&low)).map_or(u32::MAX, |l| partner(l));
    through(a) <= through(b)
}

/// The grid of two families of groups (sizes a and b, a · b = n) if every group of one meets
/// every group of the other in exactly one rank.
fn grid_of(
    n: usize,
    fa: &[&[u32]],
    fb: &[&[u32]],
    sa: &BTreeMap<Vec<u32>, Vec<u32>>,
    sb: &BTreeMap<Vec<u32>, Vec<u32>>,
    observed: &Observed<'_>,
) -> Option<CommunicatorGrid> {
    let (edges, traffic) = (observed.edges, &observed.traffic);
    let index = |family: &[&[u32]]| {
        let mut of = vec![u32::MAX; n];
        let mut order: Vec<&[u32]> = family.to_vec();
        order.sort_by_key(|g| g[0]);
        for (i, g) in order.iter().enumerate() {
            for &m in g.iter() {
                of[m as usize] = i as u32;
            }
        }
        of
    };
    let (ia, ib) = (index(fa), index(fb));
    let mut cell = vec![false; fa.len() * fb.len()];
    for r in 0..n {
        let c = ia[r] as usize * fb.len() + ib[r] as usize;
        if ia[r] == u32::MAX || ib[r] == u32::MAX || std::mem::replace(&mut cell[c], true) {
            return None;
        }
    }
    let a_is_rows = first_are_rows(fa, fb, 0);
    let (rows_of, cols_of, row_family, col_family, row_sets, col_sets) = if a_is_rows {
        (&ia, &ib, fa, fb, sa, sb)
    } else {
        (&ib, &ia, fb, fa, sb, sa)
    };
    let (p, q) = (row_family.len() as u32, col_family.len() as u32);
    let coords: Vec<[u32; 2]> = (0..n).map(|r| [rows_of[r], cols_of[r]]).collect();
    let row_major = coords.iter().enumerate().all(|(r, c)| (c[0] * q + c[1]) as usize == r);
    let column_major = coords.iter().enumerate().all(|(r, c)| (c[1] * p + c[0]) as usize == r);
    let comms_of = |family: &[&[u32]], sets: &BTreeMap<Vec<u32>, Vec<u32>>| -> (usize, u64, u64) {
        let mut count = 0;
        let (mut calls, mut sends) = (0u64, 0u64);
        for g in family {
            for &id in sets.get(*g).map(Vec::as_slice).unwrap_or(&[]) {
                count += 1;
                let [c, _, s, _] = traffic.get(id as usize);
                calls += c;
                sends += s;
            }
        }
        (count, calls, sends)
    };
    let (row_communicators, row_collective_calls, _) = comms_of(row_family, row_sets);
    let (col_communicators, col_collective_calls, _) = comms_of(col_family, col_sets);
    let (mut pairs_in_rows, mut pairs_in_cols, mut off) = (0, 0, Vec::new());
    for &[x, y] in edges {
        let (cx, cy) = (coords[x as usize], coords[y as usize]);
        if cx[0] == cy[0] {
            pairs_in_rows += 1;
        } else if cx[1] == cy[1] {
            pairs_in_cols += 1;
        } else {
            off.push([x.min(y), x.max(y)]);
        }
    }
    let pairs_off_grid = off.len();
    off.truncate(64);
    let rows_talk = pairs_in_rows > 0 || row_collective_calls > 0;
    let cols_talk = pairs_in_cols > 0 || col_collective_calls > 0;
    let agrees = pairs_off_grid == 0 && rows_talk && cols_talk;
    let label = format!("{p}x{q} process grid");
    let order = if row_major {
        format!("row-major: rank = row·{q} + col")
    } else if column_major {
        format!("column-major: rank = col·{p} + row")
    } else {
        "neither row- nor column-major".to_string()
    };
    let mut summary = format!(
        "row and column communicators declare a {label} ({order}; {row_communicators} row and \
         {col_communicators} column communicators, {row_collective_calls} and {col_collective_calls} \
         collective calls on them); point-to-point pairs: {pairs_in_rows} in rows, {pairs_in_cols} in columns"
    );
    let off_grid_share = if pairs_off_grid > 0 {
        off_grid_share(observed.matrix(), &coords)
    } else {
        0.0
    };
    if pairs_off_grid > 0 {
        summary.push_str(&format!(
            ", {pairs_off_grid} off the grid ({:.1} % of the bytes)",
            100.0 * off_grid_share
        ));
    }
    summary.push('.');
    Some(CommunicatorGrid {
        rows: p,
        cols: q,
        label,
        coords,
        row_major,
        column_major,
        row_communicators,
        col_communicators,
        row_collective_calls,
        col_collective_calls,
        pairs_in_rows,
        pairs_in_cols,
        pairs_off_grid,
        off_grid: off,
        off_grid_share,
        agrees,
        summary,
    })
}
