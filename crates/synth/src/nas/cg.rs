//! CG: row reductions by recursive halving and the transpose exchange.

use super::*;

/// CG's process grid `nprows × npcols` (npbparams: `npcols = nprows` or `2·nprows`).
pub fn cg_grid(n: u32) -> (u32, u32) {
    let k = n.trailing_zeros();
    let rows = 1u32 << (k / 2);
    (rows, n / rows)
}

/// What `setup_submatrix_info` computes for process `me`.
pub(super) struct CgProc {
    exch_proc: u32,
    send_len: u64,
    reduce_exch_proc: Vec<u32>,
    reduce_send_lengths: Vec<u64>,
    reduce_recv_lengths: Vec<u64>,
    rows: u64,
    cols: u64,
}

pub(super) fn cg_setup(me: u32, na: u64, nprows: u32, npcols: u32) -> CgProc {
    let proc_row = me / npcols;
    let proc_col = me - proc_row * npcols;
    let (pr, pc) = (proc_row as u64, proc_col as u64);
    let (nr, nc) = (nprows as u64, npcols as u64);
    let (firstrow, lastrow, firstcol, lastcol);
    if na / nc * nc == na {
        let col_size = na / nc;
        firstcol = pc * col_size + 1;
        lastcol = firstcol - 1 + col_size;
        let row_size = na / nr;
        firstrow = pr * row_size + 1;
        lastrow = firstrow - 1 + row_size;
    } else {
        let extra = na - na / nr * nr;
        if pr < extra {
            let row_size = na / nr + 1;
            firstrow = pr * row_size + 1;
            lastrow = firstrow - 1 + row_size;
        } else {
            let row_size = na / nr;
            firstrow = extra * (row_size + 1) + (pr - extra) * row_size + 1;
            lastrow = firstrow - 1 + row_size;
        }
        if nc == nr {
            let extra = na - na / nc * nc;
            if pc < extra {
                let col_size = na / nc + 1;
                firstcol = pc * col_size + 1;
                lastcol = firstcol - 1 + col_size;
            } else {
                let col_size = na / nc;
                firstcol = extra * (col_size + 1) + (pc - extra) * col_size + 1;
                lastcol = firstcol - 1 + col_size;
            }
        } else {
            let half = nc / 2;
            let extra = na - na / half * half;
            let (col_size, first) = if pc / 2 < extra {
                let s = na / half + 1;
                (s, (pc / 2) * s + 1)
            } else {
                let s = na / half;
                (s, extra * (s + 1) + (pc / 2 - extra) * s + 1)
            };
            if me.is_multiple_of(2) {
                firstcol = first;
                lastcol = first - 1 + (col_size - 1) / 2 + 1;
            } else {
                firstcol = first + (col_size - 1) / 2 + 1;
                lastcol = firstcol - 1 + col_size / 2;
            }
        }
    }
    let nrows_local = lastrow - firstrow + 1;
    let send_len = if nc == nr {
        nrows_local
    } else if me.is_multiple_of(2) {
        nrows_local.div_ceil(2)
    } else {
        nrows_local / 2
    };
    let exch_proc = if npcols == nprows {
        (me % nprows) * nprows + me / nprows
    } else {
        2 * ((me / 2) % nprows * nprows + me / 2 / nprows) + me % 2
    };
    let l2npcols = npcols.trailing_zeros() as usize;
    let mut reduce_exch_proc = Vec::with_capacity(l2npcols);
    let mut div = npcols;
    for _ in 0..l2npcols {
        let j = (proc_col + div / 2) % div + proc_col / div * div;
        reduce_exch_proc.push(proc_row * npcols + j);
        div /= 2;
    }
    let mut reduce_send_lengths = vec![0; l2npcols];
    let mut reduce_recv_lengths = vec![0; l2npcols];
    for i in (0..l2npcols).rev() {
        if nr == nc {
            reduce_send_lengths[i] = send_len;
            reduce_recv_lengths[i] = nrows_local;
        } else {
            reduce_recv_lengths[i] = send_len;
            reduce_send_lengths[i] = if i + 1 == l2npcols {
                nrows_local - send_len
            } else {
                send_len
            };
        }
    }
    CgProc {
        exch_proc,
        send_len,
        reduce_exch_proc,
        reduce_send_lengths,
        reduce_recv_lengths,
        rows: nrows_local,
        cols: lastcol - firstcol + 1,
    }
}

pub(super) fn cg(class: NasClass, n: u32, iterations: u32) -> Result<Job, String> {
    if !n.is_power_of_two() {
        return Err(format!("NAS CG runs on a power-of-two number of ranks, not {n}"));
    }
    let (na, nonzer): (u64, u64) = match class {
        NasClass::S => (1400, 7),
        NasClass::W => (7000, 8),
        NasClass::A => (14000, 11),
        NasClass::B => (75000, 13),
        NasClass::C => (150000, 15),
    };
    let (nprows, npcols) = cg_grid(n);
    if (nprows as u64) > na / 2 {
        return Err(format!("NAS CG class {class} has {na} rows: too few for {n} ranks"));
    }
    let l2 = npcols.trailing_zeros() as u64;
    let estimate = check_calls(n, 27 * (9 * l2 + 3) + 10, iterations, 16)?;
    let programs = (0..n)
        .map(|me| {
            let cp = cg_setup(me, na, nprows, npcols);
            let mut prog = Program::default();
            let exchange = |prog: &mut Program, partner: u32, tag: i32, recv: u64, send: u64| {
                let r = prog.irecv(partner, tag, WORLD, 8 * recv);
                prog.send(partner, tag, WORLD, 8 * send);
                prog.wait(Some(r));
            };
            let scalar_reduce = |prog: &mut Program, doubles: u64| {
                for (i, &partner) in cp.reduce_exch_proc.iter().enumerate() {
                    exchange(prog, partner, i as i32 + 1, doubles, doubles);
                }
            };
            let matvec = |prog: &mut Program| {
                prog.compute(cp.rows * nonzer * nonzer / 4 + cp.rows);
                for i in (0..cp.reduce_exch_proc.len()).rev() {
                    exchange(
                        prog,
                        cp.reduce_exch_proc[i],
                        i as i32 + 1,
                        cp.reduce_recv_lengths[i],
                        cp.reduce_send_lengths[i],
                    );
                }
                if npcols > 1 {
                    exchange(prog, cp.exch_proc, 1, cp.cols, cp.send_len);
                }
            };
            let conj_grad = |prog: &mut Program| {
                prog.compute(cp.cols);
                scalar_reduce(prog, 1);
                for _ in 0..25 {
                    matvec(prog);
                    prog.compute(cp.cols);
                    scalar_reduce(prog, 1);
                    prog.compute(2 * cp.cols);
                    scalar_reduce(prog, 1);
                    prog.compute(cp.cols);
                }
                matvec(prog);
                prog.compute(cp.cols);
                scalar_reduce(prog, 1);
            };
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_rank");
            prog.plain("MPI_Comm_size");
            prog.collective(CollectiveOp::Bcast, WORLD, 4);
            prog.compute(cp.rows * nonzer * 10);
            conj_grad(&mut prog);
            scalar_reduce(&mut prog, 2);
            prog.collective(CollectiveOp::Barrier, WORLD, 0);
            for _ in 0..iterations {
                conj_grad(&mut prog);
                scalar_reduce(&mut prog, 2);
                prog.compute(cp.cols);
            }
            prog.collective(CollectiveOp::Reduce, WORLD, 8);
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec!["MPI_COMM_WORLD".into()],
        topology: (n > 1).then(|| TopologySpec::parse(&format!("nas-cg:{nprows}x{npcols}")).expect("a valid CG grid")),
    })
}
