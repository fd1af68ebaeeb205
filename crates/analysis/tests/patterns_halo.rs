//! A time step that is a halo exchange and nothing else: Debian's stock LAMMPS example
//! `examples/melt/in.melt` (`neigh_modify every 20 check no`) on a 2x2x2 processor grid calls no
//! collective in most steps, only the forward and reverse ghost exchanges with the rank's three
//! neighbours (each twice, the grid being 2 wide), and every 20th step rebuilds the neighbour
//! lists (atom migration and borders instead of the forward exchange). Per rank a step is
//! `X X Y Y Z Z | Z Z Y Y X X`: its messages repeat within themselves, the general form reads
//! `X Y Z Y`, and the stretches between two rebuilds give the step at two rotations. Recorded
//! (held-out melt-8, docs/corpus.md, 5 Dec) the first pattern was 355 × 2 ranks, a piece of the
//! exchange, for 250 steps: the innermost-first redo (`patterns::choose_nesting`) took one pair
//! of messages as each rank's main loop. Truth here is the generator's: the step is the first
//! pattern, over every rank, once per step, and no occurrence holds two step starts.

mod steps_support;

use tracelogic_model::{CollectiveOp, P2pDir, Trace, COMM_WORLD, NO_CALLPATH};

/// Rank `r`'s neighbours on a periodic 2x2x2 grid, one per dimension.
fn neighbours(r: u32) -> [u32; 3] {
    [r ^ 1, r ^ 2, r ^ 4]
}

/// Appends a collective call to rank `r` of `t` at `at` ns.
fn collective(t: &mut Trace, r: u32, name: &str, op: CollectiveOp, at: u64) {
    let c = t.push_call(r, name, at, at + 5, NO_CALLPATH, 0);
    t.push_collective(r, c, op, COMM_WORLD, 0, 8, 8);
}

/// Appends the messages `ops` (kind, peer) to rank `r` of `t` from `base` ns; the events added.
fn messages(t: &mut Trace, r: u32, base: u64, ops: &[(P2pDir, u32)]) -> u32 {
    for (j, &(dir, peer)) in ops.iter().enumerate() {
        let at = base + 100 * (j as u64 + 1) + 10 * r as u64;
        let name = if dir == P2pDir::Send { "MPI_Send" } else { "MPI_Irecv" };
        let c = t.push_call(r, name, at, at + 5, NO_CALLPATH, 0);
        t.push_p2p(r, c, c, dir, peer, 0, 0, 64);
    }
    ops.len() as u32
}

/// One step's messages on rank `r`: with `rebuild`, atom migration (per dimension a count
/// exchanged then the data, `S R R S`) and borders (the same twice per dimension) in place of
/// the forward exchange (per dimension twice `R S`), as recorded; then
/// the reverse exchange (dimensions in reverse order, twice each, `R S`).
fn step_ops(r: u32, rebuild: bool) -> Vec<(P2pDir, u32)> {
    let nb = neighbours(r);
    let mut ops = Vec::new();
    if rebuild {
        for copies in [1, 2] {
            for &p in &nb {
                for _ in 0..copies {
                    ops.extend([
                        (P2pDir::Send, p),
                        (P2pDir::Recv, p),
                        (P2pDir::Recv, p),
                        (P2pDir::Send, p),
                    ]);
                }
            }
        }
    } else {
        for &p in &nb {
            for _ in 0..2 {
                ops.extend([(P2pDir::Recv, p), (P2pDir::Send, p)]);
            }
        }
    }
    for &p in nb.iter().rev() {
        for _ in 0..2 {
            ops.extend([(P2pDir::Recv, p), (P2pDir::Send, p)]);
        }
    }
    ops
}

/// `runs` runs of `steps` steps each on 8 ranks (2x2x2), each run preceded by a set-up
/// (broadcasts, reductions and a rebuild's messages) and followed by reductions; the neighbour
/// lists are rebuilt every 20th step and the thermo output reduces five values every 50th.
/// Returns the trace and each rank's step starts.
fn melt(runs: u32, steps: u32) -> (Trace, Vec<Vec<u32>>) {
    let n = 8u32;
    let mut t = Trace::new("text", "generated halo exchange without collectives", n);
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for r in 0..n {
        let mut events = 0u32;
        let mut base = 0u64;
        for _ in 0..runs {
            for j in 0..6 {
                collective(&mut t, r, "MPI_Bcast", CollectiveOp::Bcast, base + 10 * j);
                events += 1;
            }
            for j in 0..4 {
                collective(&mut t, r, "MPI_Allreduce", CollectiveOp::Allreduce, base + 100 + 10 * j);
                events += 1;
            }
            base += 10_000;
            events += messages(&mut t, r, base, &step_ops(r, true));
            base += 10_000;
            for s in 1..=steps {
                starts[r as usize].push(events);
                events += messages(&mut t, r, base, &step_ops(r, s % 20 == 0));
                base += 10_000;
                if s % 50 == 0 {
                    for j in 0..5 {
                        collective(&mut t, r, "MPI_Allreduce", CollectiveOp::Allreduce, base + 10 * j);
                        events += 1;
                    }
                    base += 10_000;
                }
            }
            for j in 0..3 {
                collective(&mut t, r, "MPI_Allreduce", CollectiveOp::Allreduce, base + 10 * j);
                events += 1;
            }
            base += 10_000;
        }
    }
    (t, starts)
}

/// One run of 250 steps (`in.melt`, held-out `melt-8`: 355 × 2 ranks before).
#[test]
fn generated_halo_exchange_without_collectives_is_one_step_pattern() {
    let (t, starts) = melt(1, 250);
    steps_support::assert_one_step_per_step(&t, 8, 250, &starts);
}

/// Four identical runs (`run 250` in a `label`/`jump` loop, held-out `melt-loop4-8`: the first
/// pattern was 3 × 8 ranks, each a whole run, whose set-up and steps repeat exactly; now 1,000 ×
/// 8 ranks there). Fails here, 4 × 8 ranks (whole runs): every run is an exact copy, so the
/// first analysis' pattern repeats, no rank pattern's occurrences span outer copies and no loop
/// was taken whole, and the innermost-first redo that finds the steps is never tried (on the
/// recording the runs' occurrences span outer copies and it is). Tried and not kept: redoing
/// where each part of the first pattern is mostly iterations of a more frequent loop of its
/// rank — the first analysis finds no step loop here, only the pairs of messages (15 % of a
/// run).
#[test]
#[ignore = "not built: identical whole runs repeated exactly never trigger the innermost-first redo"]
fn generated_identical_runs_of_halo_steps_are_steps_not_runs() {
    let (t, starts) = melt(4, 250);
    steps_support::assert_one_step_per_step(&t, 8, 1000, &starts);
}
