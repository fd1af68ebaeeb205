//! Persistent requests in the logical trace: `MPI_Send_init`/`MPI_Recv_init` post nothing, each
//! `MPI_Startall` posts the requests' operations again (the DUMPI and OTF2 readers record them so,
//! as Score-P does), and the `MPI_Waitall` after it completes them. PETSc's vector scatters
//! (PetscSF) exchange every halo this way: its traces' logical trace expanded to 30 of 930
//! point-to-point operations per rank, the starts and their waits were dropped. Checked on a
//! hand-built ring exchange: every rank's expansion gives back the operations the test posted,
//! in order, and the verification says so.

use tracelogic_analysis::logical::{expand_records, logicalize, physical_calls, verify, Placement};
use tracelogic_model::{P2pDir, Trace, NO_CALLPATH};
use tracelogic_synth::TopologySpec;

const RANKS: u32 = 4;
const STEPS: u64 = 6;

/// A 4-rank ring: per step each rank starts its two persistent receives (one `MPI_Startall`),
/// then its two persistent sends (another), then waits for all four. Returns the trace and, per
/// rank, the operations posted, in order: (sent, peer, bytes).
fn persistent_ring() -> (Trace, Vec<Vec<(bool, u32, u64)>>) {
    let mut t = Trace::new("text", "persistent ring", RANKS);
    let mut posted = vec![Vec::new(); RANKS as usize];
    for r in 0..RANKS {
        let (left, right) = ((r + RANKS - 1) % RANKS, (r + 1) % RANKS);
        let mut clock = 0;
        let mut call = |t: &mut Trace, name: &str| {
            clock += 10;
            t.push_call(r, name, clock, clock + 5, NO_CALLPATH, 0)
        };
        call(&mut t, "MPI_Init");
        for name in ["MPI_Recv_init", "MPI_Recv_init", "MPI_Send_init", "MPI_Send_init"] {
            call(&mut t, name);
        }
        for step in 0..STEPS {
            let bytes = 800 + 8 * step;
            let recvs = call(&mut t, "MPI_Startall");
            let sends = call(&mut t, "MPI_Startall");
            let wait = call(&mut t, "MPI_Waitall");
            for (post, dir, peer) in [
                (recvs, P2pDir::Recv, left),
                (recvs, P2pDir::Recv, right),
                (sends, P2pDir::Send, right),
                (sends, P2pDir::Send, left),
            ] {
                t.push_p2p(r, post, wait, dir, peer, 7, 0, bytes);
                posted[r as usize].push((dir == P2pDir::Send, peer, bytes));
            }
        }
        for _ in 0..4 {
            call(&mut t, "MPI_Request_free");
        }
        call(&mut t, "MPI_Finalize");
    }
    (t, posted)
}

#[test]
fn persistent_starts_expand_to_every_operation_on_every_rank() {
    let (trace, posted) = persistent_ring();
    let placement = Placement::identity(TopologySpec::parse("ring:4").unwrap());
    let logical = logicalize(&trace, &placement).unwrap();
    for r in 0..RANKS {
        let expanded: Vec<(bool, u32, u64)> = physical_calls(&expand_records(&logical, r).unwrap())
            .iter()
            .map(|c| (c.direction == "send", c.peer.expect("a neighbour"), c.bytes))
            .collect();
        assert_eq!(expanded, posted[r as usize], "rank {r}");
    }
    let v = verify(&trace, &logical).unwrap();
    assert!(v.ranks_structure_differs.is_empty(), "{v:?}");
    assert!(v.ranks_bytes_differ.is_empty(), "{v:?}");
    assert_eq!(v.overall_share, 1.0);
    // The waits stay: one completion record per step on every rank.
    let waits = logical
        .records
        .iter()
        .filter(|r| r.call.function == "MPI_Waitall")
        .count();
    assert_eq!(waits as u64, STEPS);
}
