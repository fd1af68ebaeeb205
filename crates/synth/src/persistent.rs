//! A program exchanging through persistent requests, as PETSc's vector scatters do: requests set
//! up once (`MPI_Recv_init`, `MPI_Send_init`), then per step one `MPI_Startall` of the
//! receives, one of the sends and an `MPI_Waitall`. The readers post a persistent request's
//! operation at each start (as Score-P records it), so one start posts several operations.

use tracelogic_model::{P2pDir, Trace, NO_CALLPATH};

/// An operation as posted: (a send, peer, bytes).
pub type Posted = (bool, u32, u64);

/// A ring of `ranks` ranks exchanging with both neighbours for `steps` steps, `800 + 8·step`
/// bytes a message (10 µs per call and 10 µs between calls). Returns the trace and, per rank,
/// the operations posted in order.
pub fn persistent_ring(ranks: u32, steps: u64) -> (Trace, Vec<Vec<Posted>>) {
    let mut t = Trace::new("text", "persistent ring", ranks);
    let mut posted = vec![Vec::new(); ranks as usize];
    for r in 0..ranks {
        let (left, right) = ((r + ranks - 1) % ranks, (r + 1) % ranks);
        let mut clock = 0;
        let mut call = |t: &mut Trace, name: &str| {
            clock += 20_000;
            t.push_call(r, name, clock, clock + 10_000, NO_CALLPATH, 0)
        };
        call(&mut t, "MPI_Init");
        for name in ["MPI_Recv_init", "MPI_Recv_init", "MPI_Send_init", "MPI_Send_init"] {
            call(&mut t, name);
        }
        for step in 0..steps {
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
