//! Open MPI hands every `MPI_Isend` it finishes at once the same completed request, so several
//! sends open at the same time share one handle. Meep (`tests/data/apps/meep-8`, recorded under
//! Open MPI 4.1.4 with SST DUMPI) posts up to seven sends a step on one handle
//! (`dumpi2ascii`: `MPI_Request request=[10]` seven times, then `MPI_Waitsome` over
//! `requests=[…, 10, 10, 11, 10, 10, 10, 10, 10]`). The decoder lists as many completed
//! `MPI_Waitsome` indices as the rank posted `MPI_Isend`s and `MPI_Irecv`s (rank 0: 116 + 240 =
//! 356, rank 3: 238 + 190 = 428, and so on): Meep completes every request it posts, each in an
//! `MPI_Waitsome`. The reader must give every operation that completion, not only the last send
//! posted on a shared handle.

use std::path::Path;
use tracelogic_formats::input::read_paths;
use tracelogic_formats::{expand_archives, read_trace};
use tracelogic_model::{P2pDir, NOT_COMPLETED};

#[test]
fn sends_sharing_open_mpis_completed_request_each_get_their_waitsome() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps/meep-8/dumpi.tar.zst");
    let t = read_trace(expand_archives(read_paths(&[path]).unwrap()).unwrap()).unwrap();
    assert_eq!(t.num_ranks(), 8);
    // Per rank (sends, receives) posted, from dumpi2ascii.
    let posted = [
        (116, 240),
        (178, 178),
        (190, 238),
        (238, 190),
        (190, 238),
        (238, 190),
        (178, 178),
        (240, 116),
    ];
    for (rt, &(sends, recvs)) in t.ranks.iter().zip(&posted) {
        let p = &rt.p2p;
        let n = |d: P2pDir| p.dir.iter().filter(|&&x| x == d).count();
        assert_eq!((n(P2pDir::Send), n(P2pDir::Recv)), (sends, recvs), "rank {}", rt.rank);
        for (op, c) in p.completes().enumerate() {
            assert_ne!(
                c, NOT_COMPLETED,
                "rank {} operation {op} ({:?}) has no completion",
                rt.rank, p.dir[op]
            );
            assert_eq!(
                t.call_name(rt.rank, c),
                "MPI_Waitsome",
                "rank {} operation {op}",
                rt.rank
            );
            assert!(
                c > p.post[op],
                "rank {} operation {op} completes after its post",
                rt.rank
            );
        }
    }
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}
