//! LU: the 2D wavefront of SSOR sweeps and `exchange_3`.

use super::*;

pub(super) const FROM_S: i32 = 1;
pub(super) const FROM_N: i32 = 2;
pub(super) const FROM_E: i32 = 3;
pub(super) const FROM_W: i32 = 4;

/// LU's process grid `xdim × ydim` (`proc_grid`): `ydim` the largest divisor of n not above √n.
pub fn lu_grid(n: u32) -> (u32, u32) {
    let mut ydim = ((n as f64).sqrt() + 0.001) as u32;
    while ydim > 1 && !n.is_multiple_of(ydim) {
        ydim -= 1;
    }
    let ydim = ydim.max(1);
    (n / ydim, ydim)
}

pub(super) fn lu(class: NasClass, n: u32, iterations: u32) -> Result<Job, String> {
    if !n.is_power_of_two() {
        return Err(format!("NAS LU runs on a power-of-two number of ranks, not {n}"));
    }
    let grid = grid_size(NasBenchmark::Lu, class);
    let (xdim, ydim) = lu_grid(n);
    if grid / xdim < 3 || grid / ydim < 3 {
        return Err(format!(
            "NAS LU class {class} on {n} ranks ({xdim}x{ydim} processes): sub-domains of {}x{} points are too small (subdomain needs at least 3; use a larger class)",
            grid / xdim,
            grid / ydim
        ));
    }
    let planes = grid as u64 - 2;
    let estimate = check_calls(n, planes * 8 + 32, iterations, 64)?;
    // comm_solve is MPI_COMM_WORLD itself in NPB 3.3 (the recorded run has no other).
    let solve = WORLD;
    let programs = (0..n)
        .map(|id| {
            let (row, col) = (id % xdim, id / xdim);
            let north = (row > 0).then(|| id - 1);
            let south = (row + 1 < xdim).then(|| id + 1);
            let west = (col > 0).then(|| id - xdim);
            let east = (col + 1 < ydim).then(|| id + xdim);
            let share = |total: u32, parts: u32, k: u32| total / parts + u32::from(k < total % parts);
            let (nx, ny, nz) = (
                share(grid, xdim, row) as u64,
                share(grid, ydim, col) as u64,
                grid as u64,
            );
            let ist = if north.is_none() { 2 } else { 1 };
            let iend = if south.is_none() { nx - 1 } else { nx };
            let jst = if west.is_none() { 2 } else { 1 };
            let jend = if east.is_none() { ny - 1 } else { ny };
            let ns_bytes = 8 * 5 * (jend + 1 - jst);
            let ew_bytes = 8 * 5 * (iend + 1 - ist);
            let plane_work = nx * ny * 20;
            let mut prog = Program::default();
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_size");
            prog.plain("MPI_Comm_rank");
            for bytes in [4, 4, 4, 8, 8, 40, 4, 4, 4, 4] {
                prog.collective(CollectiveOp::Bcast, solve, bytes);
            }
            let exchange_3 = |prog: &mut Program| {
                let (ns, ew) = (8 * 10 * ny * nz, 8 * 10 * nx * nz);
                for (from, to, tag, bytes) in [
                    (north, south, FROM_N, ns),
                    (south, north, FROM_S, ns),
                    (west, east, FROM_W, ew),
                    (east, west, FROM_E, ew),
                ] {
                    let r = from.map(|f| prog.irecv(f, tag, solve, bytes));
                    if let Some(t) = to {
                        prog.send(t, tag, solve, bytes);
                    }
                    if r.is_some() {
                        prog.wait(r);
                    }
                }
                prog.compute(nx * ny * nz * 10);
            };
            let ssor = |prog: &mut Program, niter: u32, itmax: u32| {
                exchange_3(prog);
                prog.collective(CollectiveOp::Allreduce, solve, 40);
                prog.collective(CollectiveOp::Barrier, solve, 0);
                for istep in 1..=niter {
                    for _ in 0..planes {
                        if let Some(f) = north {
                            prog.recv(f, FROM_N, solve, ns_bytes);
                        }
                        if let Some(f) = west {
                            prog.recv(f, FROM_W, solve, ew_bytes);
                        }
                        prog.compute(plane_work);
                        if let Some(t) = south {
                            prog.send(t, FROM_N, solve, ns_bytes);
                        }
                        if let Some(t) = east {
                            prog.send(t, FROM_W, solve, ew_bytes);
                        }
                    }
                    for _ in 0..planes {
                        if let Some(f) = south {
                            prog.recv(f, FROM_S, solve, ns_bytes);
                        }
                        if let Some(f) = east {
                            prog.recv(f, FROM_E, solve, ew_bytes);
                        }
                        prog.compute(plane_work);
                        if let Some(t) = north {
                            prog.send(t, FROM_S, solve, ns_bytes);
                        }
                        if let Some(t) = west {
                            prog.send(t, FROM_E, solve, ew_bytes);
                        }
                    }
                    if istep % itmax == 0 {
                        prog.collective(CollectiveOp::Allreduce, solve, 40);
                    }
                    exchange_3(prog);
                    if istep % itmax == 0 || istep == itmax {
                        prog.collective(CollectiveOp::Allreduce, solve, 40);
                    }
                }
                prog.collective(CollectiveOp::Allreduce, solve, 8);
            };
            exchange_3(&mut prog);
            ssor(&mut prog, 1, iterations);
            ssor(&mut prog, iterations, iterations);
            prog.collective(CollectiveOp::Allreduce, solve, 40);
            for _ in 0..3 {
                prog.collective(CollectiveOp::Allreduce, solve, 8);
            }
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec!["MPI_COMM_WORLD".into()],
        topology: (n > 1).then(|| {
            let dims: Vec<String> = [xdim, ydim].iter().filter(|&&d| d > 1).map(u32::to_string).collect();
            TopologySpec::parse(&format!("grid:{}", dims.join("x"))).expect("a valid grid")
        }),
    })
}
