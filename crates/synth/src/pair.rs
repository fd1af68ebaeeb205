//! Two ranks exchanging one message each way per step (`MPI_Sendrecv`), one size per step: the
//! smallest trace whose message sizes a test chooses, as a program whose sizes the data choose.

use tracelogic_model::{P2pDir, Trace, NO_CALLPATH};

/// Ranks 0 and 1, one `MPI_Sendrecv` each per entry of `sizes` (that many bytes each way,
/// tag 0; 5 ns in the call, 10 ns per step).
pub fn sendrecv_pair(sizes: &[u64]) -> Trace {
    let mut t = Trace::new("text", "sendrecv pair", 2);
    for (step, &bytes) in sizes.iter().enumerate() {
        let clock = 10 * step as u64;
        for r in 0..2u32 {
            let c = t.push_call(r, "MPI_Sendrecv", clock, clock + 5, NO_CALLPATH, 0);
            t.push_p2p(r, c, c, P2pDir::Send, 1 - r, 0, 0, bytes);
            t.push_p2p(r, c, c, P2pDir::Recv, 1 - r, 0, 0, bytes);
        }
    }
    t
}

/// `n` sizes, multiples of 8 from 8 to `8·distinct`, in an order without pattern (a linear
/// congruential generator from `seed`).
pub fn scrambled_sizes(n: usize, distinct: u64, seed: u64) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            8 * (1 + (x >> 33) % distinct.max(1))
        })
        .collect()
}
