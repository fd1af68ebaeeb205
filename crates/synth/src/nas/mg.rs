//! MG: multigrid on a 3D periodic process grid (`setup`, `comm3`, `comm3_ex`).

use super::*;

/// What `setup` in mg.f computes for one process, per level `k` (index k − 1) and axis.
pub(super) struct MgLevels {
    /// Points + 2 ghost layers along each axis.
    pub(super) m: Vec<[u64; 3]>,
    pub(super) dead: Vec<bool>,
    pub(super) take_ex: Vec<[bool; 3]>,
    pub(super) give_ex: Vec<[bool; 3]>,
    /// Neighbour along each axis towards −1 and +1.
    pub(super) nbr: Vec<[[u32; 2]; 3]>,
}

/// MG's process grid `pi1 × pi2 × pi3` (`setup`).
pub fn mg_grid(n: u32) -> [u32; 3] {
    let log_p = n.trailing_zeros();
    let dx = log_p / 3;
    let dy = (log_p - dx) / 2;
    let (p1, p2) = (1u32 << dx, 1u32 << dy);
    [p1, p2, n / (p1 * p2)]
}

pub(super) fn mg_setup(me: u32, n: u32, lt: u32, grid: u64) -> MgLevels {
    let pi = mg_grid(n);
    let idi = [me % pi[0], (me / pi[0]) % pi[1], me / (pi[0] * pi[1])];
    let levels = lt as usize;
    let mut out = MgLevels {
        m: vec![[0; 3]; levels],
        dead: vec![false; levels],
        take_ex: vec![[false; 3]; levels],
        give_ex: vec![[false; 3]; levels],
        nbr: vec![[[0; 2]; 3]; levels],
    };
    let mut next = [1u64; 3];
    for k in (1..=levels).rev() {
        let ng = grid >> (levels - k);
        let mut mi = [0u64; 3];
        for ax in 0..3 {
            let (p, id) = (pi[ax] as u64, idi[ax] as u64);
            mi[ax] = 2 + ((id + 1) * ng) / p - (id * ng) / p;
            let mip = 2 + ((next[ax] + id + 1) * ng) / p - ((next[ax] + id) * ng) / p;
            if mip == 2 || mi[ax] == 2 {
                next[ax] *= 2;
            }
            if k < levels {
                if mip == 2 && mi[ax] == 3 {
                    out.give_ex[k][ax] = true;
                }
                if mip == 3 && mi[ax] == 2 {
                    out.take_ex[k][ax] = true;
                }
            }
        }
        out.dead[k - 1] = mi.contains(&2);
        out.m[k - 1] = mi;
        for ax in 0..3 {
            let p = pi[ax] as i64;
            for (d, sign) in [(0usize, -1i64), (1, 1)] {
                let moved = (idi[ax] as i64 + sign * next[ax] as i64).rem_euclid(p) as u32;
                let mut c = idi;
                c[ax] = moved;
                out.nbr[k - 1][ax][d] = c[0] + pi[0] * (c[1] + pi[1] * c[2]);
            }
        }
    }
    out
}

pub(super) fn msg_type(axis: usize, dir: i32) -> i32 {
    100 * (dir + 2 + 10 * (axis as i32 + 1))
}

pub(super) fn mg(class: NasClass, n: u32, iterations: u32) -> Result<Job, String> {
    if !n.is_power_of_two() {
        return Err(format!("NAS MG runs on a power-of-two number of ranks, not {n}"));
    }
    let grid: u64 = match class {
        NasClass::S => 32,
        NasClass::W => 128,
        NasClass::A | NasClass::B => 256,
        NasClass::C => 512,
    };
    let lt = grid.trailing_zeros();
    let pi = mg_grid(n);
    if pi.iter().any(|&p| p as u64 > grid) {
        return Err(format!(
            "NAS MG class {class} has a {grid}³ grid: too small for {n} ranks"
        ));
    }
    let estimate = check_calls(n, 4 * 18 * lt as u64 + 40, iterations, 200)?;
    let programs = (0..n)
        .map(|me| {
            let lv = mg_setup(me, n, lt, grid);
            let levels = lt as usize;
            let mut prog = Program::default();
            let comm3 = |prog: &mut Program, k: usize| {
                let m = lv.m[k - 1];
                prog.compute(m.iter().product::<u64>());
                if n == 1 || lv.dead[k - 1] {
                    return;
                }
                let face = [(m[1] - 2) * (m[2] - 2), m[0] * (m[2] - 2), m[0] * m[1]];
                for (ax, &f) in face.iter().enumerate() {
                    let nbr = lv.nbr[k - 1][ax];
                    let from_plus = prog.irecv(nbr[1], msg_type(ax, -1), WORLD, 8 * f);
                    let from_minus = prog.irecv(nbr[0], msg_type(ax, 1), WORLD, 8 * f);
                    prog.send(nbr[1], msg_type(ax, 1), WORLD, 8 * f);
                    prog.send(nbr[0], msg_type(ax, -1), WORLD, 8 * f);
                    prog.wait(Some(from_plus));
                    prog.wait(Some(from_minus));
                }
            };
            let comm3_ex = |prog: &mut Program, k: usize| {
                let m = lv.m[k - 1];
                prog.compute(m.iter().product::<u64>());
                if n == 1 {
                    return;
                }
                let face = [m[1] * m[2], m[0] * m[2], m[0] * m[1]];
                for (ax, &f) in face.iter().enumerate() {
                    let nbr = lv.nbr[k - 1][ax];
                    if lv.take_ex[k - 1][ax] {
                        let from_plus = prog.irecv(nbr[1], msg_type(ax, -1), WORLD, 8 * 2 * f);
                        let from_minus = prog.irecv(nbr[0], msg_type(ax, 1), WORLD, 8 * 2 * f);
                        prog.wait(Some(from_plus));
                        prog.wait(Some(from_minus));
                    }
                    if lv.give_ex[k - 1][ax] {
                        prog.send(nbr[1], msg_type(ax, 1), WORLD, 8 * 2 * f);
                        prog.send(nbr[0], msg_type(ax, -1), WORLD, 8 * f);
                    }
                }
            };
            let norm2u3 = |prog: &mut Program| {
                prog.collective(CollectiveOp::Allreduce, WORLD, 8);
                prog.collective(CollectiveOp::Allreduce, WORLD, 8);
            };
            let zran3 = |prog: &mut Program| {
                prog.compute(lv.m[levels - 1].iter().product::<u64>());
                prog.collective(CollectiveOp::Barrier, WORLD, 0);
                for _ in 0..10 {
                    for bytes in [8, 16, 8, 16] {
                        prog.collective(CollectiveOp::Allreduce, WORLD, bytes);
                    }
                }
                prog.collective(CollectiveOp::Barrier, WORLD, 0);
                comm3(prog, levels);
            };
            let mg3p = |prog: &mut Program| {
                for k in (2..=levels).rev() {
                    comm3(prog, k - 1);
                }
                comm3(prog, 1);
                for k in 2..levels {
                    comm3_ex(prog, k);
                    comm3(prog, k);
                    comm3(prog, k);
                }
                comm3_ex(prog, levels);
                comm3(prog, levels);
                comm3(prog, levels);
            };
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_rank");
            prog.plain("MPI_Comm_size");
            prog.collective(CollectiveOp::Barrier, WORLD, 0);
            for bytes in [4, 4, 4, 4, 4, 32, 4] {
                prog.collective(CollectiveOp::Bcast, WORLD, bytes);
            }
            zran3(&mut prog);
            norm2u3(&mut prog);
            comm3(&mut prog, levels);
            norm2u3(&mut prog);
            mg3p(&mut prog);
            comm3(&mut prog, levels);
            zran3(&mut prog);
            prog.collective(CollectiveOp::Barrier, WORLD, 0);
            comm3(&mut prog, levels);
            norm2u3(&mut prog);
            for _ in 0..iterations {
                mg3p(&mut prog);
                comm3(&mut prog, levels);
            }
            norm2u3(&mut prog);
            prog.collective(CollectiveOp::Reduce, WORLD, 8);
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    let dims: Vec<String> = pi.iter().filter(|&&d| d > 1).map(u32::to_string).collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec!["MPI_COMM_WORLD".into()],
        topology: (!dims.is_empty()).then(|| {
            let family = if dims.len() == 1 { "ring" } else { "torus" };
            TopologySpec::parse(&format!("{family}:{}", dims.join("x"))).expect("a valid torus")
        }),
    })
}
