//! A collective's bytes as Score-P counts them, back to the buffers of the call.
//!
//! The model's `bytes_sent` / `bytes_recv` of a collective are this rank's send and receive
//! buffers as the call gave them (count × datatype size; `MPI_Alltoall` and the root of
//! `MPI_Scatter` send a block per member, `MPI_Allgather` and the root of `MPI_Gather` receive
//! one): what SST DUMPI records and what a C skeleton needs to call the same function again.
//! Score-P's MPI adapter writes something else into OTF2's `MpiCollectiveEnd`: the data this rank
//! moves to and from every member (`scorep_mpi_coll_bytes_*` in Score-P's `scorep_mpi_coll.c`):
//! an `MPI_Allreduce` of `b` bytes on `N` ranks is `N·b` sent and `N·b` received, the root of an
//! `MPI_Bcast` sends `N·b`, the root of an `MPI_Reduce` receives `N·b`, an `MPI_Allgather` sends
//! `N·b`, an `MPI_Scan` at rank `me` sends `(N − me)·b` and receives `(me + 1)·b`; with
//! `MPI_IN_PLACE` the rank's own block is left out (`N − 1` where `N` was). Read as they are,
//! the same program recorded by both tracers had `MPI_Allreduce(4 B)` in one logical trace and
//! `MPI_Allreduce(32 B)` in the other on 8 ranks, and a skeleton from the OTF2 trace reduced 8
//! times the data.
//!
//! [`buffer_bytes`] inverts Score-P's formulas. Where a count alone cannot tell whether the call
//! was in place (`MPI_Allreduce`, `MPI_Allgather`: `x = N·b` or `x = (N − 1)·b`), the reading
//! with all `N` blocks is taken when `x` is a multiple of `N`, else the in-place one when `x` is a
//! multiple of `N − 1`, else the count is kept as it is: an in-place call whose buffer is itself
//! a multiple of `N` bytes is read as `(N − 1)/N` of its size. Everything else (`MPI_Barrier`,
//! `MPI_Alltoall(v/w)`, `MPI_Gather(v)`, `MPI_Scatter(v)`) is
//! the same in both conventions and kept. Only archives whose creator names Score-P are converted
//! ([`counts_as_score_p`]); other writers' counts are the writer's (tracelogic's own writer
//! stores the model's buffers) and are read as they are.
//!
//! Cost: O(1) per collective.

use tracelogic_model::CollectiveOp;

/// Whether an archive's creator (its anchor file's) counts collective bytes as Score-P does:
/// Score-P itself (`Score-P 8.4`) and tools that say they write its layout (tools/otf2-tracer:
/// `tracelogic_otf2 (PMPI, Score-P layout)`). Other writers' counts are read as they are
/// (tracelogic's own writer stores the model's buffers; OTF2's Python writer whatever its
/// program passes).
pub(crate) fn counts_as_score_p(creator: &str) -> bool {
    creator.to_ascii_lowercase().contains("score-p")
}

/// This rank's place in the collective, as much as [`buffer_bytes`] needs of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place {
    /// Members of the communicator.
    pub members: u64,
    /// Whether this rank is the root.
    pub is_root: bool,
    /// This rank's rank in the communicator, when known (only `MPI_Scan`/`MPI_Exscan` need it).
    pub me: Option<u64>,
}

/// `x / d` when `d` divides `x` (and is not 0).
fn exact(x: u64, d: u64) -> Option<u64> {
    (d > 0 && x.is_multiple_of(d)).then(|| x / d)
}

/// The one block behind `x = N·b` (all blocks) or `x = (N − 1)·b` (in place); `x` if neither.
fn block(x: u64, n: u64) -> u64 {
    exact(x, n).or_else(|| exact(x, n.saturating_sub(1))).unwrap_or(x)
}

/// The call's (send, receive) buffer bytes of a collective whose `MpiCollectiveEnd` recorded
/// Score-P's `(sent, received)` (module documentation).
pub(crate) fn buffer_bytes(op: CollectiveOp, place: Place, sent: u64, received: u64) -> (u64, u64) {
    let n = place.members;
    if n == 0 {
        return (sent, received);
    }
    match op {
        CollectiveOp::Allreduce => {
            let b = block(sent.max(received), n);
            (b, b)
        }
        // The root receives its own block: `b` (none in place: it is already in the buffer).
        CollectiveOp::Bcast if place.is_root => {
            let b = if received > 0 { received } else { block(sent, n) };
            (b, 0)
        }
        CollectiveOp::Reduce if place.is_root => {
            let b = if sent > 0 { sent } else { block(received, n) };
            (b, b)
        }
        // Every member's block is received, the rank's own too (in place it is already there).
        CollectiveOp::Allgather => {
            let b = block(sent.max(received), n);
            (b, b.saturating_mul(n))
        }
        CollectiveOp::Allgatherv => match (exact(sent, n), exact(sent, n.saturating_sub(1))) {
            (Some(b), _) => (b, received),
            (None, Some(b)) => (b, received.saturating_add(b)),
            _ => (sent, received),
        },
        CollectiveOp::ReduceScatter | CollectiveOp::ReduceScatterBlock => (sent, block(received, n)),
        CollectiveOp::Scan | CollectiveOp::Exscan => {
            let b = scan_block(op, place, sent, received);
            (b, b)
        }
        _ => (sent, received),
    }
}

/// `b` of a scan at rank `me`: `((N − me)·b, (me + 1)·b)`, in place (and always for `MPI_Exscan`)
/// `((N − me − 1)·b, me·b)`, the reading with all blocks first (an in-place scan at the middle
/// rank of an odd `N` fits both). Counts that fit neither (a tracer that writes `(b, b)`) are
/// `b` when equal, else the larger.
fn scan_block(op: CollectiveOp, place: Place, sent: u64, received: u64) -> u64 {
    let n = place.members;
    let fits = |send_blocks: u64, recv_blocks: u64| -> Option<u64> {
        let b = if recv_blocks > 0 {
            exact(received, recv_blocks)?
        } else {
            exact(sent, send_blocks)?
        };
        (send_blocks.checked_mul(b) == Some(sent) && recv_blocks.checked_mul(b) == Some(received)).then_some(b)
    };
    if let Some(me) = place.me.filter(|&me| me < n) {
        let all = (op == CollectiveOp::Scan).then(|| fits(n - me, me + 1)).flatten();
        if let Some(b) = all.or_else(|| fits(n - me - 1, me)).filter(|&b| b > 0) {
            return b;
        }
    }
    sent.max(received)
}

#[cfg(test)]
mod tests {
    use super::*;
    use CollectiveOp::*;

    /// Score-P's counts for an intra-communicator, written out from `scorep_mpi_coll.c`
    /// (`coll_bytes_all_to_one`, `one_to_all`, `alltoall`, `allgather(v)`, `scan`, ...): this
    /// rank's (sent, received) for a call with one block of `b` bytes.
    fn scorep(op: CollectiveOp, n: u64, me: u64, root: u64, b: u64, inplace: bool) -> (u64, u64) {
        let at_root = me == root;
        match (op, inplace) {
            (Barrier, _) => (0, 0),
            (Allreduce | Allgather, false) => (n * b, n * b),
            (Allreduce | Allgather, true) => ((n - 1) * b, (n - 1) * b),
            (Bcast, _) if at_root => (n * b, b),
            (Bcast, _) => (0, b),
            (Reduce, false) if at_root => (b, n * b),
            (Reduce, true) if at_root => (0, (n - 1) * b),
            (Reduce, _) => (b, 0),
            (ReduceScatterBlock, false) => (n * b, n * b),
            (ReduceScatterBlock, true) => ((n - 1) * b, (n - 1) * b),
            (Scan, false) => ((n - me) * b, (me + 1) * b),
            (Scan, true) | (Exscan, _) => ((n - me - 1) * b, me * b),
            _ => unreachable!("not used below"),
        }
    }

    /// The model's buffers for the same call, as the DUMPI reader derives them from its counts.
    fn buffers(op: CollectiveOp, n: u64, me: u64, root: u64, b: u64) -> (u64, u64) {
        match op {
            Barrier => (0, 0),
            Allreduce | Scan | Exscan => (b, b),
            Allgather => (b, n * b),
            Bcast if me == root => (b, 0),
            Bcast => (0, b),
            Reduce if me == root => (b, b),
            Reduce => (b, 0),
            ReduceScatterBlock => (n * b, b),
            _ => unreachable!("not used below"),
        }
    }

    #[test]
    fn score_p_counts_read_back_as_the_call_buffers() {
        // Blocks that are not multiples of N: every reading is exact, in place or not.
        for n in [2u64, 3, 4, 8, 16] {
            for b in [4u64, 5, 7, 12, 1000].into_iter().filter(|b| b % n != 0) {
                for me in [0, 1, n - 1] {
                    let root = 1 % n;
                    for op in [
                        Barrier,
                        Allreduce,
                        Allgather,
                        Bcast,
                        Reduce,
                        ReduceScatterBlock,
                        Scan,
                        Exscan,
                    ] {
                        for inplace in [false, true] {
                            if op == Scan && inplace && 2 * me + 1 == n {
                                // The middle rank of an odd N: ((N − me − 1)·b, me·b) is also
                                // ((N − me)·b', (me + 1)·b') for b' = b·me/(me + 1).
                                continue;
                            }
                            let (s, r) = scorep(op, n, me, root, b, inplace);
                            let place = Place {
                                members: n,
                                is_root: me == root,
                                me: Some(me),
                            };
                            let want = buffers(op, n, me, root, b);
                            let got = buffer_bytes(op, place, s, r);
                            let got = if op == ReduceScatterBlock && inplace {
                                // Score-P's in-place sent side leaves out the rank's own block.
                                (want.0, got.1)
                            } else {
                                got
                            };
                            assert_eq!(got, want, "{op:?} n={n} me={me} b={b} inplace={inplace}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn an_in_place_allreduce_of_a_multiple_of_n_bytes_reads_as_all_blocks() {
        // 8 B in place on 4 ranks: Score-P writes 24, which is also 4 blocks of 6 B.
        let place = Place {
            members: 4,
            is_root: false,
            me: Some(2),
        };
        assert_eq!(buffer_bytes(Allreduce, place, 24, 24), (6, 6));
        // Not in place: 32 = 4 × 8.
        assert_eq!(buffer_bytes(Allreduce, place, 32, 32), (8, 8));
    }

    #[test]
    fn only_score_p_archives_are_converted() {
        assert!(counts_as_score_p("Score-P 8.4"));
        assert!(counts_as_score_p("tracelogic_otf2 (PMPI, Score-P layout)"));
        assert!(!counts_as_score_p("tracelogic"));
        assert!(!counts_as_score_p(""));
    }

    #[test]
    fn counts_in_neither_convention_are_kept() {
        let place = Place {
            members: 4,
            is_root: false,
            me: Some(1),
        };
        // 7 is neither 4·b nor 3·b.
        assert_eq!(buffer_bytes(Allreduce, place, 7, 7), (7, 7));
        // A tracer that writes a scan's buffers as (b, b).
        assert_eq!(buffer_bytes(Scan, place, 8, 8), (8, 8));
        // Alltoall, Gather, Scatter: the same in both conventions.
        assert_eq!(buffer_bytes(Alltoall, place, 64, 64), (64, 64));
        assert_eq!(buffer_bytes(Gather, place, 16, 0), (16, 0));
        // No members known.
        let none = Place {
            members: 0,
            is_root: false,
            me: None,
        };
        assert_eq!(buffer_bytes(Allreduce, none, 32, 32), (32, 32));
    }
}
