//! FT, IS and EP: the benchmarks that communicate by collectives (and IS's one line).

use super::*;

pub(super) fn ft(class: NasClass, n: u32, iterations: u32) -> Result<Job, String> {
    if !n.is_power_of_two() {
        return Err(format!("NAS FT runs on a power-of-two number of ranks, not {n}"));
    }
    let (nx, ny, nz): (u64, u64, u64) = match class {
        NasClass::S => (64, 64, 64),
        NasClass::W => (128, 128, 32),
        NasClass::A => (256, 256, 128),
        NasClass::B => (512, 256, 256),
        NasClass::C => (512, 512, 512),
    };
    if n as u64 > ny * nz {
        return Err(format!(
            "NAS FT class {class} has a {nx}x{ny}x{nz} grid: too small for {n} ranks"
        ));
    }
    let estimate = check_calls(n, 8, iterations, 32)?;
    // The whole complex grid crosses the network once per transpose: each rank sends its share.
    let share = 16 * nx * ny * nz / n as u64;
    let slice1 = 1u32;
    let programs = (0..n)
        .map(|_| {
            let mut prog = Program::default();
            let transpose = |prog: &mut Program| {
                prog.compute(share / 8);
                prog.collective(CollectiveOp::Alltoall, slice1, share);
                prog.compute(share / 8);
            };
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_size");
            prog.plain("MPI_Comm_rank");
            prog.collective(CollectiveOp::Bcast, WORLD, 4);
            prog.collective(CollectiveOp::Bcast, WORLD, 4);
            prog.plain("MPI_Comm_split");
            prog.compute(share / 4);
            transpose(&mut prog);
            prog.collective(CollectiveOp::Barrier, WORLD, 0);
            prog.compute(share / 4);
            transpose(&mut prog);
            for _ in 0..iterations {
                prog.compute(share / 8);
                transpose(&mut prog);
                prog.collective(CollectiveOp::Reduce, WORLD, 16);
            }
            prog.collective(CollectiveOp::Reduce, WORLD, 8);
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec!["MPI_COMM_WORLD".into(), "commslice1 (split of MPI_COMM_WORLD)".into()],
        topology: None,
    })
}

pub(super) fn is(class: NasClass, n: u32, iterations: u32) -> Result<Job, String> {
    if !n.is_power_of_two() {
        return Err(format!("NAS IS runs on a power-of-two number of ranks, not {n}"));
    }
    let total_keys: u64 = match class {
        NasClass::S => 1 << 16,
        NasClass::W => 1 << 20,
        NasClass::A => 1 << 23,
        NasClass::B => 1 << 25,
        NasClass::C => 1 << 27,
    };
    if n > 1024 {
        return Err(format!("NAS IS runs on at most 1024 ranks (its buckets), not {n}"));
    }
    let estimate = check_calls(n, 4, iterations, 16)?;
    let keys = 4 * total_keys / n as u64;
    let work = WORLD;
    let programs = (0..n)
        .map(|me| {
            let mut prog = Program::default();
            let rank = |prog: &mut Program| {
                prog.compute(keys / 4);
                prog.collective(CollectiveOp::Allreduce, work, 4 * (1024 + 5));
                prog.collective(CollectiveOp::Alltoall, work, 4 * n as u64);
                prog.collective(CollectiveOp::Alltoallv, work, keys);
                prog.compute(keys / 4);
            };
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_rank");
            prog.plain("MPI_Comm_size");
            prog.collective(CollectiveOp::Bcast, work, 4);
            prog.compute(keys);
            rank(&mut prog);
            for _ in 0..iterations {
                rank(&mut prog);
            }
            prog.collective(CollectiveOp::Reduce, work, 8);
            // full_verify: the largest key goes to the next rank.
            let r = (me > 0).then(|| prog.irecv(me - 1, 1000, work, 4));
            if me + 1 < n {
                prog.send(me + 1, 1000, work, 4);
            }
            if r.is_some() {
                prog.wait(r);
            }
            prog.collective(CollectiveOp::Reduce, work, 4);
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec!["MPI_COMM_WORLD".into()],
        topology: (n > 1).then(|| TopologySpec::parse(&format!("line:{n}")).expect("a valid line")),
    })
}

pub(super) fn ep(n: u32) -> Result<Job, String> {
    let estimate = check_calls(n, 0, 0, 10)?;
    let programs = (0..n)
        .map(|_| {
            let mut prog = Program::default();
            prog.plain("MPI_Init");
            prog.plain("MPI_Comm_rank");
            prog.plain("MPI_Comm_size");
            prog.collective(CollectiveOp::Bcast, WORLD, 4);
            prog.collective(CollectiveOp::Barrier, WORLD, 0);
            prog.compute(1_000_000);
            for bytes in [8, 8, 80, 8] {
                prog.collective(CollectiveOp::Allreduce, WORLD, bytes);
            }
            prog.steps.push(Step::Finalize);
            prog
        })
        .collect();
    Ok(Job {
        programs,
        estimate,
        comms: vec!["MPI_COMM_WORLD".into()],
        topology: None,
    })
}
