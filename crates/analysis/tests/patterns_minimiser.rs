//! Patterns of an energy minimisation: force evaluations followed by a varying number of
//! reductions (LAMMPS `minimize`, held-out `indent.min` on 6 ranks: 1,738 evaluations on
//! rank 0, each a ghost-atom exchange and its reverse, then 3 to 13 `MPI_Allreduce`s as the
//! line search decides; docs/patterns.md, *Loop iterations that differ*).

mod steps_support;

use tracelogic_model::{P2pDir, Trace};

/// A minimiser on 6 ranks in a 3x2 torus, 400 force evaluations in two runs of `minimize`.
/// Each evaluation exchanges ghost atoms with both neighbours along x, twice with its one
/// neighbour along y (both sides of a 2-rank dimension are the same rank), and the forces
/// back along x, then reduces; as in the log of `indent.min`, an iteration is two
/// evaluations, the first followed by `a` reductions, the second by `a + 3` (its line
/// search's and convergence tests), `a` = 3 in the first run and 4 in the second (a fix adds
/// its energy), and every tenth iteration 6 more (thermo output). Every 15 to 30 evaluations
/// a rebuild migrates atoms first (one more exchange each way). Truth from the generator: the
/// evaluation is the default pattern, over every rank, once per evaluation (± 5), and no
/// occurrence holds two evaluation starts. Fails today: the per-rank parse takes the first
/// run's iterations (`A X A6 X A A`, 100 × 6 ranks) as the step and leaves the second run's
/// 200 evaluations in fragments; the held-out run takes another path (no loop found, steps cut
/// at the collective period, then at copies of the messages) and passes
/// (`patterns_steps::lammps_heldout_step_as_often_as_the_log_says`: 1,718 for 1,724).
#[test]
#[ignore = "not built: two minimiser runs of different reduction counts are parsed as one run's iterations and fragments (docs/patterns.md)"]
fn generated_line_search_evaluations_are_one_step_each() {
    let (n, evaluations) = (6u32, 400u32);
    let mut x = 0x5eed_u64;
    let mut draw = |m: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    // Each evaluation's reductions, and whether it rebuilds.
    let mut plan: Vec<(u32, bool)> = Vec::new();
    let mut next_rebuild = 0;
    for iteration in 0..evaluations / 2 {
        let a = if iteration < evaluations / 4 { 3 } else { 4 };
        let thermo = if iteration % 10 == 0 { 6 } else { 0 };
        for reductions in [a, a + 3 + thermo] {
            let rebuild = plan.len() as u32 == next_rebuild;
            if rebuild {
                next_rebuild += 15 + draw(16) as u32;
            }
            plan.push((reductions, rebuild));
        }
    }
    plan.truncate(evaluations as usize);
    let mut t = Trace::new("text", "generated minimiser", n);
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for r in 0..n {
        let (i, j) = (r % 3, r / 3);
        let (right, left, other) = ((i + 1) % 3 + 3 * j, (i + 2) % 3 + 3 * j, i + 3 * (1 - j));
        let mut events = 0u32;
        for (s, &(reductions, rebuild)) in plan.iter().enumerate() {
            starts[r as usize].push(events);
            let base = s as u64 * 10_000;
            let mut ops = Vec::new();
            if rebuild {
                ops.extend([
                    (P2pDir::Send, left),
                    (P2pDir::Recv, right),
                    (P2pDir::Send, other),
                    (P2pDir::Recv, other),
                ]);
            }
            // Forward communication, then the reverse of the forces.
            let x = [
                (P2pDir::Recv, left),
                (P2pDir::Send, right),
                (P2pDir::Recv, right),
                (P2pDir::Send, left),
            ];
            ops.extend(x);
            ops.extend([
                (P2pDir::Recv, other),
                (P2pDir::Send, other),
                (P2pDir::Recv, other),
                (P2pDir::Send, other),
            ]);
            ops.extend(x);
            events += steps_support::push_step_with_reductions(&mut t, r, base, &ops, reductions);
        }
    }
    steps_support::assert_one_step_per_step(&t, n, evaluations, &starts);
}
