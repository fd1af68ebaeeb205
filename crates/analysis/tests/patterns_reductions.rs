//! MD steps around reductions that are not every step's: a thermo output's burst in mid-run,
//! steps before a fix starts reducing, a barostat's reductions after each step's own. Truth
//! from the generator: the step is the default pattern, over every rank, once per step, and no
//! occurrence holds two step starts.

mod steps_support;

use tracelogic_model::{P2pDir, Trace};

/// Rank `r`'s exchange on a generated 2×2 grid (partners `r ^ 1` along x, `r ^ 2` along y):
/// y, x, x, y, the lower rank of a pair receiving first (LAMMPS `peri` on 4 ranks).
fn exchange_2x2(r: u32) -> Vec<(P2pDir, u32)> {
    let pair = |p: u32| {
        if r < p {
            [(P2pDir::Recv, p), (P2pDir::Send, p)]
        } else {
            [(P2pDir::Send, p), (P2pDir::Recv, p)]
        }
    };
    [pair(r ^ 2), pair(r ^ 1), pair(r ^ 1), pair(r ^ 2)].concat()
}

/// LAMMPS `peri` (held out, peridynamics on 2×2 ranks, 200 steps): each step exchanges with
/// both partners and ends with a fix's `MPI_Allreduce`, except the first nine (the fix not yet
/// reducing); step 100's thermo output adds five reductions. Before, the steps of the first
/// half were rebuilt as an outer loop of one step and those of the second half left as lone
/// messages (92 of 200, here and on the recording); then the nine steps before the fix's first
/// reduction were lone exchanges (189 here, 181 on the recording). Now 198 of 200.
#[test]
fn generated_steps_after_a_thermo_burst_are_steps() {
    let (n, steps) = (4u32, 200u32);
    let mut t = Trace::new("text", "generated steps around a thermo burst", n);
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for r in 0..n {
        let mut events = 0u32;
        for s in 0..steps {
            starts[r as usize].push(events);
            let reductions = if s < 9 { 0 } else { 1 } + if s == 100 { 5 } else { 0 };
            events +=
                steps_support::push_step_with_reductions(&mut t, r, s as u64 * 10_000, &exchange_2x2(r), reductions);
        }
    }
    steps_support::assert_one_step_per_step(&t, n, steps, &starts);
    let a = tracelogic_analysis::patterns::analyse(&t, &tracelogic_analysis::patterns::PatternOptions::default());
    let first = a.communication_patterns[0].occurrences;
    assert!(
        first.abs_diff(200) <= 2,
        "{first} occurrences for 200 steps; {:?}",
        steps_support::summary(&a)
    );
}

/// LAMMPS `ellipse.gayberne` (held out, 2-D on 3×2 ranks): a run of 200 steps under a
/// barostat, each step's exchange followed by four reductions (the rebuild check's and three of
/// the barostat's), then a run of 200 steps with the check's alone; a rebuild every 8 to 19
/// steps migrates atoms first. Generated on a 4×2 grid. The parse's occurrences of the step end
/// at its exact copy, after the first reduction, so the other three were a pattern of their own
/// (165 × 3 reductions); now the step's own collectives right after it are part of it
/// (`trailing_collectives`), and no other pattern repeats.
#[test]
fn generated_steps_with_a_barostats_reductions_are_steps() {
    let (n, steps) = (8u32, 400u32);
    let rebuilds = steps_support::rebuild_steps(0x5eed_0003, steps, |last, draw| last + 8 + draw(12) as u32);
    let mut t = Trace::new("text", "generated steps with a barostat's reductions", n);
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for r in 0..n {
        let (right, left, other) = steps_support::partners_4x2(r);
        let (forward, reverse) = steps_support::halos_4x2(r);
        let mut events = 0u32;
        for s in 0..steps {
            starts[r as usize].push(events);
            let mut ops = Vec::new();
            if rebuilds.contains(&s) {
                ops.extend([
                    (P2pDir::Send, left),
                    (P2pDir::Recv, right),
                    (P2pDir::Send, other),
                    (P2pDir::Recv, other),
                ]);
            }
            ops.extend(forward);
            ops.extend(reverse);
            let reductions = if s < 200 { 4 } else { 1 };
            events += steps_support::push_step_with_reductions(&mut t, r, s as u64 * 10_000, &ops, reductions);
        }
    }
    steps_support::assert_one_step_per_step(&t, n, steps, &starts);
    let a = tracelogic_analysis::patterns::analyse(&t, &tracelogic_analysis::patterns::PatternOptions::default());
    assert!(
        a.shown().iter().skip(1).all(|p| p.occurrences < 10),
        "{:?}",
        steps_support::summary(&a)
    );
}
