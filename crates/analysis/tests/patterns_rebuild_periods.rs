//! Steps whose form changes at every neighbour-list rebuild: LAMMPS's `deposit` (4 ranks on a
//! 1x1x4 grid, non-periodic in z, atoms added every 100 steps) and `pour` (granular, atoms
//! poured into sub-domains that start empty) skip a ghost swap that carries no atoms, so each
//! rank's step loses or regains messages when the swaps are rebuilt, and keeps that form until
//! the next rebuild. Where the stretch from one rebuild to the next came three times back to
//! back, the reduction collapsed it before the steps inside it: a rank's main loop was that
//! period, written out with its steps, and the first pattern was one period per occurrence
//! (recorded, 5 Dec: deposit 149 × 4 ranks for 2,000 steps, pour 218 × 8 for 5,000). Truth here
//! is the generator's: the plain step is the first pattern over every rank, at least once per
//! two plain steps (before: once per period).

mod steps_support;

use tracelogic_model::{CollectiveOp, P2pDir, Trace, COMM_WORLD, NO_CALLPATH};

const RANKS: u32 = 4;

/// Rank `r`'s neighbours on the non-periodic chain `0 - 1 - 2 - 3`.
fn neighbours(r: u32) -> Vec<u32> {
    [r.checked_sub(1), (r + 1 < RANKS).then_some(r + 1)]
        .into_iter()
        .flatten()
        .collect()
}

/// Whether the ghost swap from `from` to `to` carries atoms in swap form `form`: form 0 all,
/// form 1 not out of rank 3 (empty), form 2 not out of ranks 0 and 3.
fn active(form: u32, from: u32, to: u32) -> bool {
    let _ = to;
    match form {
        0 => true,
        1 => from != 3,
        _ => from != 0 && from != 3,
    }
}

/// One step's events on rank `r` in swap form `form`: the rebuild check's `MPI_Allreduce`; on
/// a rebuild, a second one (as `pour`'s) and atom migration (count and data both ways with each
/// neighbour); the forward ghost
/// exchange (a send where the swap carries atoms, a receive where the neighbour's does) and the
/// reverse one (the other way round).
fn step_ops(r: u32, form: u32, rebuild: bool) -> Vec<Option<(P2pDir, u32)>> {
    let nb = neighbours(r);
    let mut ops = vec![None];
    if rebuild {
        ops.push(None);
        for &p in &nb {
            ops.extend(
                [
                    (P2pDir::Send, p),
                    (P2pDir::Recv, p),
                    (P2pDir::Send, p),
                    (P2pDir::Recv, p),
                ]
                .map(Some),
            );
        }
    }
    for &p in &nb {
        if active(form, r, p) {
            ops.push(Some((P2pDir::Send, p)));
        }
        if active(form, p, r) {
            ops.push(Some((P2pDir::Recv, p)));
        }
    }
    for &p in nb.iter().rev() {
        if active(form, p, r) {
            ops.push(Some((P2pDir::Send, p)));
        }
        if active(form, r, p) {
            ops.push(Some((P2pDir::Recv, p)));
        }
    }
    ops
}

/// Blocks of periods (a rebuild step and its plain steps) in one swap form, the form changing
/// from one block to the next: six periods of 9 steps back to back, then four of 7, 10, 8 and
/// 11 steps, in turn. Returns the trace, each rank's step starts and the number of rebuild
/// steps.
fn deposit_like(blocks: u32) -> (Trace, Vec<Vec<u32>>, u32) {
    let mut t = Trace::new("text", "generated steps changing form at each rebuild", RANKS);
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); RANKS as usize];
    let mut rebuilds = 0;
    let mut plan: Vec<(u32, bool)> = Vec::new();
    for b in 0..blocks {
        let form = b % 3;
        let lengths: &[usize] = if b % 2 == 0 { &[9; 6] } else { &[7, 10, 8, 11] };
        for &k in lengths {
            plan.push((form, true));
            plan.extend((0..k).map(|_| (form, false)));
            rebuilds += 1;
        }
    }
    for r in 0..RANKS {
        let mut events = 0u32;
        for (s, &(form, rebuild)) in plan.iter().enumerate() {
            starts[r as usize].push(events);
            let base = 10_000 * s as u64;
            for (j, op) in step_ops(r, form, rebuild).into_iter().enumerate() {
                let at = base + 100 * (j as u64 + 1) + 10 * r as u64;
                match op {
                    None => {
                        let c = t.push_call(r, "MPI_Allreduce", at, at + 5, NO_CALLPATH, 0);
                        t.push_collective(r, c, CollectiveOp::Allreduce, COMM_WORLD, 0, 8, 8);
                    }
                    Some((dir, peer)) => {
                        let name = if dir == P2pDir::Send { "MPI_Send" } else { "MPI_Irecv" };
                        let c = t.push_call(r, name, at, at + 5, NO_CALLPATH, 0);
                        t.push_p2p(r, c, c, dir, peer, 0, 0, 64);
                    }
                }
                events += 1;
            }
        }
    }
    let steps = plan.len() as u32;
    assert_eq!(starts[0].len() as u32, steps);
    (t, starts, rebuilds)
}

/// 6 blocks: 30 periods, 30 rebuild steps and 270 plain steps (before: 29 × 4 ranks, each
/// holding a period's steps; now 200 × 4).
#[test]
fn generated_steps_changing_form_at_each_rebuild_are_steps_not_periods() {
    let (t, starts, rebuilds) = deposit_like(6);
    let plain = starts[0].len() - rebuilds as usize;
    let a = tracelogic_analysis::patterns::analyse(&t, &tracelogic_analysis::patterns::PatternOptions::default());
    let first = &a.communication_patterns[0];
    let summary = steps_support::summary(&a);
    assert_eq!(first.ranks, (0..RANKS).collect::<Vec<u32>>(), "{summary:?}");
    // Behind: 200 of the 270 plain steps (docs/patterns.md).
    assert!(
        2 * first.occurrences >= plain && first.occurrences <= starts[0].len(),
        "{} occurrences for {plain} plain steps and {rebuilds} rebuilds; {summary:?}",
        first.occurrences
    );
    // Behind: one occurrence of the step still holds a block of steps on a rank (41 on
    // rank 0): a block whose form no loop pattern of the rank holds written out.
}
