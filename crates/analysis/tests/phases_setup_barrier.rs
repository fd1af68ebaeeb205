//! A loop whose first steps lack part of its communication, timed from a barrier: input
//! broadcasts, an `MPI_Barrier` (where LAMMPS starts a `run`'s clock), a first stretch of steps
//! with a reduction only and one gather (held-out LAMMPS `pour`: no halo message until poured
//! particles reach a rank's neighbours; `fix pour` gathers once), then the steps with their
//! halo exchange. One logged stage from the barrier to the end: the set-up's phase ends at the
//! barrier, not where the halo begins (docs/phases.md, step 6). Truth is the generator's.

use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside};
use tracelogic_model::{match_messages, CollectiveOp, P2pDir, Trace, COMM_WORLD, NO_CALLPATH};

/// 20 set-up broadcasts (5 µs apart), a barrier at `barrier_at` ns, `quiet` steps of an
/// `MPI_Allreduce` only (the first followed by an `MPI_Allgather`), then `steps` steps of a
/// halo exchange on a periodic 2x2x2 grid and an `MPI_Allreduce`; each step lasts 10 µs.
/// Returns the trace and the barrier's time.
fn poured(quiet: u32, steps: u32) -> (Trace, u64) {
    let n = 8u32;
    let mut t = Trace::new("text", "generated loop whose first steps send no halo", n);
    let mut barrier_at = 0;
    for r in 0..n {
        let mut at = 0u64;
        let collective = |t: &mut Trace, name: &str, op: CollectiveOp, at: &mut u64, gap: u64| {
            let c = t.push_call(r, name, *at, *at + 500, NO_CALLPATH, 0);
            t.push_collective(r, c, op, COMM_WORLD, 0, 8, 8);
            *at += gap;
        };
        for _ in 0..20 {
            collective(&mut t, "MPI_Bcast", CollectiveOp::Bcast, &mut at, 5_000);
        }
        barrier_at = at;
        collective(&mut t, "MPI_Barrier", CollectiveOp::Barrier, &mut at, 1_000);
        for s in 0..quiet {
            collective(&mut t, "MPI_Allreduce", CollectiveOp::Allreduce, &mut at, 10_000);
            if s == 0 {
                collective(&mut t, "MPI_Allgather", CollectiveOp::Allgather, &mut at, 1_000);
            }
        }
        for _ in 0..steps {
            for d in [1u32, 2, 4] {
                for (dir, name) in [(P2pDir::Send, "MPI_Send"), (P2pDir::Recv, "MPI_Recv")] {
                    let c = t.push_call(r, name, at, at + 50, NO_CALLPATH, 0);
                    t.push_p2p(r, c, c, dir, r ^ d, 0, 0, 64);
                    at += 1_000;
                }
            }
            collective(&mut t, "MPI_Allreduce", CollectiveOp::Allreduce, &mut at, 4_000);
        }
        collective(&mut t, "MPI_Barrier", CollectiveOp::Barrier, &mut at, 1_000);
        for _ in 0..3 {
            collective(&mut t, "MPI_Reduce", CollectiveOp::Reduce, &mut at, 5_000);
        }
    }
    (t, barrier_at)
}

#[test]
fn the_set_up_ends_at_the_barrier_that_starts_the_loop() {
    let (t, barrier_at) = poured(100, 900);
    let matching = match_messages(&t);
    let events = rank_events(&t, false);
    let a = analyse_events(&t, &matching, &events, &PatternOptions::default());
    let p = detect_phases(&t, &events, &a.communication, 0.0, Outside::Own);
    let (t0, t1) = t.span();
    let tol = (t1 - t0) / 100;
    let starts: Vec<f64> = p.phases.iter().map(|ph| (ph.time.0 - t0) as f64 / 1e6).collect();
    let msg = format!(
        "phases from {starts:?} ms of {} ms, barrier at {} ms",
        (t1 - t0) as f64 / 1e6,
        (barrier_at - t0) as f64 / 1e6
    );
    // A boundary at the barrier (within 1 % of the run), a stage boundary: placed by the
    // program's marker ...
    let at_barrier = p.phases.iter().skip(1).find(|ph| ph.time.0.abs_diff(barrier_at) <= tol);
    assert!(at_barrier.is_some_and(|ph| ph.begins_a_stage()), "{msg}");
    // ... and a section boundary (a stage boundary is one, whatever the sections' kinds).
    let start = at_barrier.unwrap().start;
    assert!(p.sections.iter().any(|s| s.start == start), "{msg}");
    // ... and none inside the stage it starts, but for the run's own end.
    let inside = |x: u64| x > barrier_at + tol && x + (t1 - t0) / 20 < t1;
    assert!(p.phases.iter().skip(1).all(|ph| !inside(ph.time.0)), "{msg}");
}
