//! BT and SP: the multi-partition, `copy_faces` and the pipelined solves.

use super::*;

pub(super) const EAST: i32 = 2000;
pub(super) const WEST: i32 = 3000;
pub(super) const NORTH: i32 = 4000;
pub(super) const SOUTH: i32 = 5000;
pub(super) const BOTTOM: i32 = 6000;
pub(super) const TOP: i32 = 7000;

/// One process's cells: coordinates and sizes per axis, by cell index.
pub(super) struct Cells {
    p: u32,
    coord: Vec<[u32; 3]>,
    size: Vec<[u32; 3]>,
}

impl Cells {
    fn new(process: u32, p: u32, grid: u32) -> Cells {
        let (i, j) = (process % p, process / p);
        let mut coord = Vec::with_capacity(p as usize);
        for c in 0..p {
            coord.push([(i + c) % p, (j + p - c % p) % p, c]);
        }
        let size = coord
            .iter()
            .map(|cc| {
                let mut s = [0u32; 3];
                for d in 0..3 {
                    let (base, excess) = (grid / p, grid % p);
                    s[d] = if cc[d] < excess { base + 1 } else { base };
                }
                s
            })
            .collect();
        Cells { p, coord, size }
    }

    /// The cell in plane `stage` along `axis`.
    fn slice(&self, axis: usize, stage: u32) -> usize {
        self.coord.iter().position(|c| c[axis] == stage).unwrap_or(0)
    }

    /// Interior extent of cell c along `axis` (its size without the domain boundary point).
    fn interior(&self, c: usize, axis: usize) -> u64 {
        let s = self.size[c][axis] as u64;
        let lo = u64::from(self.coord[c][axis] == 0);
        let hi = u64::from(self.coord[c][axis] == self.p - 1);
        s.saturating_sub(lo + hi)
    }

    fn points(&self) -> u64 {
        self.size
            .iter()
            .map(|s| s.iter().map(|&x| x as u64).product::<u64>())
            .sum()
    }
}

pub(super) fn multipartition(b: NasBenchmark, class: NasClass, n: u32, iterations: u32) -> Result<Job, String> {
    let p = (n as f64).sqrt().round() as u32;
    if p * p != n {
        return Err(format!(
            "NAS {} runs on a square number of ranks (4, 9, 16, 25, 36, 64, 121...), not {n}",
            b.name().to_uppercase()
        ));
    }
    let grid = grid_size(b, class);
    if grid / p < 3 {
        return Err(format!(
            "NAS {} class {class} on {n} ranks: cells of {} points are too small (make_set needs at least 3; use a larger class)",
            b.name().to_uppercase(),
            grid / p
        ));
    }
    // copy_faces 13 calls, each solve 8 per stage and direction.
    let estimate = check_calls(n, 16 + 24 * p as u64, iterations, 64)?;
    let (setup, solve, rhs) = (1u32, 2u32, 3u32);
    let max_cell = (grid / p + 1) as u64;
    let programs = (0..n)
        .map(|me| {
            let cells = Cells::new(me, p, grid);
            let (i, j) = (me % p, me / p);
            let at = |x: u32, y: u32| (x % p) + p * (y % p);
            let succ = [at(i + 1, j), at(i, j + 1), at(i + p - 1, j + 1)];
            let pred = [at(i + p - 1, j), at(i, j + p - 1), at(i + 1, j + p - 1)];
            let mut prog = Program::default();
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_size");
            prog.plain("MPI_Comm_rank");
            prog.plain("MPI_Comm_split");
            prog.plain("MPI_Comm_size");
            prog.plain("MPI_Comm_dup");
            prog.plain("MPI_Comm_dup");
            for bytes in [4, 8, 12, 4, 4, 4] {
                prog.collective(CollectiveOp::Bcast, setup, bytes);
            }
            let adi = |prog: &mut Program| {
                copy_faces(prog, &cells, n, &succ, &pred, rhs);
                for axis in 0..3 {
                    match b {
                        NasBenchmark::Bt => bt_solve(prog, &cells, axis, succ[axis], pred[axis], solve, max_cell),
                        _ => sp_solve(prog, &cells, axis, succ[axis], pred[axis], solve),
                    }
                }
                prog.compute(cells.points());
            };
            adi(&mut prog);
            prog.collective(CollectiveOp::Barrier, setup, 0);
            for _ in 0..iterations {
                adi(&mut prog);
            }
            prog.collective(CollectiveOp::Allreduce, setup, 40);
            copy_faces(&mut prog, &cells, n, &succ, &pred, rhs);
            prog.collective(CollectiveOp::Allreduce, setup, 40);
            prog.collective(CollectiveOp::Reduce, setup, 8);
            prog.collective(CollectiveOp::Barrier, setup, 0);
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec![
            "MPI_COMM_WORLD".into(),
            "comm_setup (split of MPI_COMM_WORLD)".into(),
            "comm_solve (dup of comm_setup)".into(),
            "comm_rhs (dup of comm_setup)".into(),
        ],
        topology: (n > 1).then(|| TopologySpec::parse(&format!("stencil6:{p}x{p}")).expect("a valid stencil")),
    })
}

/// `copy_faces`: the six face buffers to the successors and predecessors, then `MPI_Waitall`.
pub(super) fn copy_faces(prog: &mut Program, cells: &Cells, n: u32, succ: &[u32; 3], pred: &[u32; 3], comm: u32) {
    if n == 1 {
        prog.compute(cells.points());
        return;
    }
    let p = cells.p;
    // Doubles sent towards +axis and −axis: two layers of 5 components of every face that has
    // a neighbouring cell.
    let mut size = [[0u64; 2]; 3];
    for (c, s) in cells.size.iter().enumerate() {
        for (axis, towards) in size.iter_mut().enumerate() {
            let face: u64 = (0..3).filter(|&d| d != axis).map(|d| s[d] as u64).product();
            if cells.coord[c][axis] != p - 1 {
                towards[0] += 2 * 5 * face;
            }
            if cells.coord[c][axis] != 0 {
                towards[1] += 2 * 5 * face;
            }
        }
    }
    let tags = [(EAST, WEST), (NORTH, SOUTH), (TOP, BOTTOM)];
    let mut reqs = Vec::with_capacity(12);
    for axis in 0..3 {
        let (plus, minus) = tags[axis];
        reqs.push(prog.irecv(succ[axis], minus, comm, 8 * size[axis][0]));
        reqs.push(prog.irecv(pred[axis], plus, comm, 8 * size[axis][1]));
    }
    for axis in 0..3 {
        let (plus, minus) = tags[axis];
        reqs.push(prog.isend(succ[axis], plus, comm, 8 * size[axis][0]));
        reqs.push(prog.isend(pred[axis], minus, comm, 8 * size[axis][1]));
    }
    prog.waitall(&reqs);
    prog.compute(cells.points());
}

/// The two coordinates of a cell other than `axis`, as BT folds them into its solve tags.
pub(super) fn cross_tag(cells: &Cells, c: usize, axis: usize) -> i32 {
    let others: Vec<u32> = (0..3).filter(|&d| d != axis).map(|d| cells.coord[c][d]).collect();
    (others[0] + others[1] * cells.p) as i32
}

/// BT's pipelined block-tridiagonal solve along `axis` (`x_solve`, `y_solve`, `z_solve`).
pub(super) fn bt_solve(prog: &mut Program, cells: &Cells, axis: usize, succ: u32, pred: u32, comm: u32, max_cell: u64) {
    let p = cells.p;
    let (forward_tag, backward_tag) = [(WEST, EAST), (SOUTH, NORTH), (BOTTOM, TOP)][axis];
    let forward_bytes = 8 * max_cell * max_cell * 30;
    let backward_bytes = 8 * max_cell * max_cell * 5;
    let mut pending: Option<u32> = None;
    for stage in 0..p {
        let c = cells.slice(axis, stage);
        let cell_work = cells.size[c].iter().map(|&x| x as u64).product::<u64>() * 4;
        let tag = forward_tag + cross_tag(cells, c, axis);
        if stage > 0 {
            let r = prog.irecv(pred, tag, comm, forward_bytes);
            prog.wait(pending.take());
            prog.wait(Some(r));
        }
        prog.compute(cell_work);
        if stage + 1 < p {
            pending = Some(prog.isend(succ, tag, comm, forward_bytes));
        }
    }
    for stage in (0..p).rev() {
        let c = cells.slice(axis, stage);
        let cell_work = cells.size[c].iter().map(|&x| x as u64).product::<u64>();
        let tag = backward_tag + cross_tag(cells, c, axis);
        if stage + 1 < p {
            let r = prog.irecv(succ, tag, comm, backward_bytes);
            prog.wait(pending.take());
            prog.wait(Some(r));
        }
        prog.compute(cell_work);
        if stage > 0 {
            pending = Some(prog.isend(pred, tag, comm, backward_bytes));
        }
    }
}

/// SP's pipelined Thomas solve along `axis`: each stage's receive is completed together with
/// the previous stage's send by one `MPI_Waitall`.
pub(super) fn sp_solve(prog: &mut Program, cells: &Cells, axis: usize, succ: u32, pred: u32, comm: u32) {
    let p = cells.p;
    let face = |c: usize| -> u64 { (0..3).filter(|&d| d != axis).map(|d| cells.interior(c, d)).product() };
    let mut pending: Option<u32> = None;
    for stage in 0..p {
        let c = cells.slice(axis, stage);
        let cell_work = cells.size[c].iter().map(|&x| x as u64).product::<u64>() * 2;
        if stage > 0 {
            let r = prog.irecv(pred, 0, comm, 8 * 22 * face(c));
            prog.compute(cell_work / 2);
            let reqs: Vec<u32> = [Some(r), pending.take()].into_iter().flatten().collect();
            prog.waitall(&reqs);
        }
        prog.compute(cell_work);
        if stage + 1 < p {
            pending = Some(prog.isend(succ, 0, comm, 8 * 22 * face(c)));
        }
    }
    for stage in (0..p).rev() {
        let c = cells.slice(axis, stage);
        let cell_work = cells.size[c].iter().map(|&x| x as u64).product::<u64>();
        if stage + 1 < p {
            let r = prog.irecv(succ, 0, comm, 8 * 10 * face(c));
            prog.compute(cell_work / 2);
            let reqs: Vec<u32> = [Some(r), pending.take()].into_iter().flatten().collect();
            prog.waitall(&reqs);
        }
        prog.compute(cell_work);
        if stage > 0 {
            pending = Some(prog.isend(pred, 0, comm, 8 * 10 * face(c)));
        }
    }
}
