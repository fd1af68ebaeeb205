//! The agreement that names the logical trace's directions counts moves apart from sizes: a
//! program that makes the same moves on every rank with sizes the data choose (LAMMPS's ghost
//! atoms: a periodic 2x2x2 grid, each swap a count exchange then the atoms) agrees fully by
//! moves, whatever its sizes, and says so (docs/logical.md, "Scoring"). Truth: the generator's
//! program below, the same sequence of (kind, neighbour dimension) on every rank.

use tracelogic_analysis::logical::{agreement, logicalize_identified, verify};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{declared, identify_matrix, TopologyOptions};
use tracelogic_model::{CallIdx, CartTopology, CollectiveOp, P2pDir, Selection, Trace, COMM_WORLD, NO_CALLPATH};

/// A small deterministic generator (splitmix64) for the data: how many atoms a rank sends, 1-20.
fn atoms(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    1 + (z >> 8) % 20
}

/// `steps` steps on 8 ranks in MPI's row-major 2x2x2 periodic grid (declared with
/// `MPI_Cart_create`): per dimension and side, an `MPI_Sendrecv` of the 4-byte count with the
/// neighbour (the same rank both sides), then `MPI_Irecv`, `MPI_Send` and `MPI_Wait` of the
/// atoms; then an `MPI_Allreduce`.
fn halo(steps: u64) -> Trace {
    let n = 8u32;
    let mut t = Trace::new(
        "text",
        "generated halo of data-chosen sizes on a periodic 2x2x2 grid",
        n,
    );
    let count =
        |r: u32, step: u64, dim: u32, side: u32| atoms(((step * 8 + r as u64) * 3 + dim as u64) * 2 + side as u64);
    for r in 0..n {
        let mut at = 0u64;
        let call = |t: &mut Trace, name: &str, at: &mut u64| {
            let c = t.push_call(r, name, *at, *at + 50, NO_CALLPATH, 0);
            *at += 100;
            c
        };
        for step in 0..steps {
            for dim in 0..3u32 {
                // Row-major: the last dimension varies fastest, so dimension d flips bit 2 - d.
                let peer = r ^ (1 << (2 - dim));
                for side in 0..2u32 {
                    let c = call(&mut t, "MPI_Sendrecv", &mut at);
                    t.push_p2p(r, c, c, P2pDir::Send, peer, 0, COMM_WORLD, 4);
                    t.push_p2p(r, c, c, P2pDir::Recv, peer, 0, COMM_WORLD, 4);
                    let (mine, theirs) = (count(r, step, dim, side), count(peer, step, dim, side));
                    // The receive is recorded at its post, completed by the `MPI_Wait` after
                    // the send (as the readers record it).
                    let post = call(&mut t, "MPI_Irecv", &mut at);
                    t.push_p2p(
                        r,
                        post,
                        post + 2 as CallIdx,
                        P2pDir::Recv,
                        peer,
                        0,
                        COMM_WORLD,
                        48 * theirs,
                    );
                    let s = call(&mut t, "MPI_Send", &mut at);
                    t.push_p2p(r, s, s, P2pDir::Send, peer, 0, COMM_WORLD, 48 * mine);
                    let w = call(&mut t, "MPI_Wait", &mut at);
                    assert_eq!(w, post + 2);
                }
            }
            let c = call(&mut t, "MPI_Allreduce", &mut at);
            t.push_collective(r, c, CollectiveOp::Allreduce, COMM_WORLD, 0, 8, 8);
        }
    }
    let comm = t.add_comm("cart", (0..n).collect());
    for r in 0..n {
        let end = t.ranks[r as usize].calls.last_exit().unwrap_or(0);
        t.push_call(r, "MPI_Cart_create", end + 10, end + 20, NO_CALLPATH, 0);
    }
    t.add_cartesian(CartTopology::row_major(comm, &[2, 2, 2], &[true; 3], n as usize).unwrap())
        .unwrap();
    t
}

#[test]
fn moves_agree_fully_whatever_the_sizes() {
    let trace = halo(40);
    let m = CommMatrix::from_trace(&trace, &Selection::all());
    let mut report = identify_matrix(&m, &TopologyOptions::default());
    declared::attach(&trace, &mut report);
    assert_eq!(
        report.identification.matched.as_ref().map(|m| m.label.as_str()),
        Some("3-dimensional hypercube (2x2x2 grid)")
    );
    let l = logicalize_identified(&trace, &report, None).expect("logical trace");
    let from = l.directions_from.as_ref().expect("directions chosen");
    assert_eq!(l.topology.directions, vec!["bit0", "bit1", "bit2"], "{}", from.reason);
    // Every operation's move agrees with the reference rank's; of the sizes only the 4-byte
    // counts (half the operations) and the atoms that happen to be as many.
    let (agreed, total) = agreement(&trace, &l.placement);
    assert_eq!(agreed.moves, total, "{agreed:?}");
    assert!(agreed.sized < total * 2 / 3, "{agreed:?} of {total}");
    // What the shells print is the moves' share: full, not the sizes' chance agreement.
    assert_eq!(from.agreement, 1.0, "{}", from.reason);
    assert!(from.contest.is_none(), "{:?}", from.contest);
    let v = verify(&trace, &l).expect("verification");
    assert!(v.ranks_below_full.is_empty(), "{v:?}");
}
