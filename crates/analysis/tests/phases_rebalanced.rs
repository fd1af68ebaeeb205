//! A loop whose ranks change partners: a 2x2x2 halo exchange whose rank-to-position map is
//! redrawn every 50 steps (as LAMMPS's `balance` / `fix balance` moves the sub-domain
//! boundaries, held-out `balance-8`: one logged `run`, 11 phases before step 3e's role rule).
//! Every rank keeps three neighbours and exchanges with each in the same order, whoever they
//! are: one phase from the set-up to the end (docs/phases.md, step 3e). Truth is the generator's.

use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside, PhaseAnalysis};
use tracelogic_model::{match_messages, CollectiveOp, P2pDir, Trace, COMM_WORLD, NO_CALLPATH};

/// A deterministic permutation of the 8 positions, drawn for redraw `k`.
fn positions(k: u64) -> [u32; 8] {
    let mut p = [0, 1, 2, 3, 4, 5, 6, 7];
    let mut x = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    for i in (1..8).rev() {
        x ^= x >> 31;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let j = (x % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}

/// Set-up broadcasts, `steps` steps of a halo exchange on a periodic 2x2x2 grid (per dimension
/// a send to the neighbour and a receive from it), the rank-to-position map redrawn every 50
/// steps with an `MPI_Allreduce` (the balancer's cost), closing reductions. Each step lasts
/// 10 µs.
fn rebalanced(steps: u32) -> Trace {
    let n = 8u32;
    let mut t = Trace::new("text", "generated halo exchange with rebalancing", n);
    for r in 0..n {
        let mut at = 0u64;
        let collective = |t: &mut Trace, name: &str, op: CollectiveOp, at: &mut u64| {
            let c = t.push_call(r, name, *at, *at + 5, NO_CALLPATH, 0);
            t.push_collective(r, c, op, COMM_WORLD, 0, 8, 8);
            *at += 100;
        };
        for _ in 0..20 {
            collective(&mut t, "MPI_Bcast", CollectiveOp::Bcast, &mut at);
        }
        let mut pos = positions(0);
        for s in 0..steps {
            if s > 0 && s % 50 == 0 {
                pos = positions(u64::from(s / 50));
                collective(&mut t, "MPI_Allreduce", CollectiveOp::Allreduce, &mut at);
            }
            let rank_at = |p: u32| pos.iter().position(|&q| q == p).unwrap() as u32;
            let me = pos[r as usize];
            for d in [1u32, 2, 4] {
                let peer = rank_at(me ^ d);
                for (dir, name) in [(P2pDir::Send, "MPI_Send"), (P2pDir::Recv, "MPI_Recv")] {
                    let c = t.push_call(r, name, at, at + 50, NO_CALLPATH, 0);
                    t.push_p2p(r, c, c, dir, peer, 0, 0, 64);
                    at += 1_000;
                }
            }
            at += 4_000;
        }
        for _ in 0..3 {
            collective(&mut t, "MPI_Allreduce", CollectiveOp::Allreduce, &mut at);
        }
    }
    t
}

/// The phases of `t` (default options), with the starts (ms from the run's start) of those
/// beginning inside the run (more than 5 % from either end), and the run's length in ms.
fn inner_cuts(t: &Trace) -> (PhaseAnalysis, Vec<f64>, f64) {
    let matching = match_messages(t);
    let events = rank_events(t, false);
    let a = analyse_events(t, &matching, &events, &PatternOptions::default());
    let p = detect_phases(t, &events, &a.communication, 0.0, Outside::Own);
    let (t0, t1) = t.span();
    let ms = |x: u64| (x - t0) as f64 / 1e6;
    let inside = |x: u64| x > t0 + (t1 - t0) / 20 && x + (t1 - t0) / 20 < t1;
    let cuts = p
        .phases
        .iter()
        .skip(1)
        .filter(|ph| inside(ph.time.0))
        .map(|ph| ms(ph.time.0))
        .collect();
    (p, cuts, ms(t1))
}

/// Where the phases begin (ms), for a failing assertion's message.
fn starts(p: &PhaseAnalysis, t: &Trace) -> Vec<f64> {
    p.phases
        .iter()
        .map(|ph| (ph.time.0 - t.span().0) as f64 / 1e6)
        .collect()
}

#[test]
fn a_loop_whose_ranks_change_partners_is_one_phase() {
    let t = rebalanced(1000);
    let (p, cuts, length) = inner_cuts(&t);
    assert!(cuts.is_empty(), "phases from {:?} ms of {length} ms", starts(&p, &t));
}

/// `steps` steps of a line exchange over ranks 1-2-3 of 4 (rank 2 in the middle sends to and
/// receives from both ends), then `steps` steps of the same exchange moved one rank on, over
/// 2-3-0 (StarPU's stencil after its data migration, held-out `starpu-4`), closing reductions.
/// Each step lasts 10 µs; ranks outside the line wait. No set-up: the run's windows are cut
/// first where they differ most, and a set-up in the first window alone is no significant cut
/// (p 0.03 of 100 windows), which stops the windows' segmentation before the move.
fn moved(steps: u32) -> Trace {
    let n = 4u32;
    let mut t = Trace::new("text", "generated line exchange moved to other ranks", n);
    for r in 0..n {
        let mut at = 0u64;
        let collective = |t: &mut Trace, name: &str, op: CollectiveOp, at: &mut u64| {
            let c = t.push_call(r, name, *at, *at + 5, NO_CALLPATH, 0);
            t.push_collective(r, c, op, COMM_WORLD, 0, 8, 8);
            *at += 100;
        };
        for shift in [0u32, 1] {
            let (left, middle, right) = ((1 + shift) % n, (2 + shift) % n, (3 + shift) % n);
            let peers: &[u32] = match r {
                _ if r == middle => &[left, right],
                _ if r == left || r == right => &[middle],
                _ => &[],
            };
            for _ in 0..steps {
                let step_end = at + 10_000;
                for &peer in peers {
                    for (dir, name) in [(P2pDir::Send, "MPI_Isend"), (P2pDir::Recv, "MPI_Irecv")] {
                        let c = t.push_call(r, name, at, at + 50, NO_CALLPATH, 0);
                        t.push_p2p(r, c, c, dir, peer, 0, 0, 4);
                        at += 1_000;
                    }
                }
                at = step_end;
            }
        }
        for _ in 0..3 {
            collective(&mut t, "MPI_Allreduce", CollectiveOp::Allreduce, &mut at);
        }
    }
    t
}

/// The same loop moved to other ranks is two phases (docs/phases.md, step 3e): the roles do not
/// change, the ranks doing the work do. One boundary inside the run, at the move (within 5 % of
/// the run), where the generator moved it.
#[test]
fn a_loop_moved_to_other_ranks_is_two_phases() {
    let t = moved(100);
    let (p, cuts, length) = inner_cuts(&t);
    assert_eq!(cuts.len(), 1, "phases from {:?} ms of {length} ms", starts(&p, &t));
    assert!(
        (cuts[0] - length / 2.0).abs() < length / 20.0,
        "cut at {} ms, the move halfway",
        cuts[0]
    );
    // Each phase says over which ranks its line runs (the closing reductions: no line).
    let over: Vec<_> = p
        .phases
        .iter()
        .filter_map(|ph| ph.topology.as_ref())
        .map(|t| t.over.clone())
        .take(2)
        .collect();
    assert_eq!(
        over,
        vec![vec![[1, 3]], vec![[0, 0], [2, 3]]],
        "{:?}",
        p.phases.iter().map(|ph| ph.summary()).collect::<Vec<_>>()
    );
    assert!(
        p.phases[0].summary().starts_with("3-node line over ranks 1-3"),
        "{}",
        p.phases[0].summary()
    );
}

/// A one-off message 0 -> 1, `steps` steps of an exchange between ranks 1 and 2, then `steps`
/// steps of the same exchange between 2 and 3 (StarPU's stencil on 8 ranks, held-out
/// `starpu-8`), closing reductions; 4 ranks, steps of 10 µs. Each rank numbers its peers in the
/// order it meets them: rank 1 meets 0 first, so its exchange with 2 is its second peer, as
/// rank 2's with 3; rank 2's with 1 and rank 3's with 2 are their first. Both halves then hold
/// the same event signatures, first and second peers alike: only the ranks differ.
fn handed_on(steps: u32) -> Trace {
    let n = 4u32;
    let mut t = Trace::new("text", "generated exchange handed on to the next rank", n);
    for r in 0..n {
        let mut at = 0u64;
        let message = |t: &mut Trace, dir: P2pDir, peer: u32, at: &mut u64| {
            let name = if dir == P2pDir::Send { "MPI_Isend" } else { "MPI_Irecv" };
            let c = t.push_call(r, name, *at, *at + 50, NO_CALLPATH, 0);
            t.push_p2p(r, c, c, dir, peer, 0, 0, 4);
            *at += 1_000;
        };
        match r {
            0 => message(&mut t, P2pDir::Send, 1, &mut at),
            1 => message(&mut t, P2pDir::Recv, 0, &mut at),
            _ => at += 1_000,
        }
        for pair in [(1u32, 2u32), (2, 3)] {
            let peer = match r {
                _ if r == pair.0 => Some(pair.1),
                _ if r == pair.1 => Some(pair.0),
                _ => None,
            };
            for _ in 0..steps {
                let step_end = at + 10_000;
                if let Some(peer) = peer {
                    message(&mut t, P2pDir::Send, peer, &mut at);
                    message(&mut t, P2pDir::Recv, peer, &mut at);
                }
                at = step_end;
            }
        }
        let c = t.push_call(r, "MPI_Allreduce", at, at + 5, NO_CALLPATH, 0);
        t.push_collective(r, c, CollectiveOp::Allreduce, COMM_WORLD, 0, 8, 8);
    }
    t
}

/// Work handed on to other ranks in the same roles, invisible to the event signatures, is two
/// phases (docs/phases.md, step 3f): one boundary inside the run, at the hand-over (within 5 %).
#[test]
fn an_exchange_handed_on_to_the_next_rank_is_two_phases() {
    let t = handed_on(100);
    let (p, cuts, length) = inner_cuts(&t);
    assert_eq!(cuts.len(), 1, "phases from {:?} ms of {length} ms", starts(&p, &t));
    assert!(
        (cuts[0] - length / 2.0).abs() < length / 20.0,
        "cut at {} ms, the hand-over halfway",
        cuts[0]
    );
    // A section boundary too, although both sides communicate alike.
    let at = p
        .phases
        .iter()
        .position(|ph| (ph.time.0 - t.span().0) as f64 / 1e6 == cuts[0]);
    assert!(
        p.sections.iter().any(|sec| Some(sec.phases.0) == at),
        "{:?}",
        p.sections
    );
}
