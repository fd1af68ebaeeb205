//! Cost models of collective operations (Thakur, Rabenseifner & Gropp 2005, "Optimization of
//! collective communication operations in MPICH", IJHPCA 19(1)).
//!
//! Every model is a number of communication steps, each moving the same number of bytes, so a
//! collective costs `steps · (α + m·β)` under Hockney's model and `steps · (α + B(m)·β)` under a
//! message table. The reduction arithmetic (the γ term of Thakur et al.) is not modelled: it is
//! computation the network does not change.

use tracelogic_model::CollectiveOp;

/// The communication schedule of one collective: `steps` rounds of `bytes_per_step` bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CollectiveSchedule {
    /// Number of sequential message rounds (the α coefficient).
    pub steps: f64,
    /// Bytes each round moves.
    pub bytes_per_step: f64,
}

/// ⌈log₂ p⌉ for p ≥ 1.
fn ceil_log2(p: u32) -> f64 {
    (32 - (p.max(1) - 1).leading_zeros()) as f64
}

/// Schedule of `op` over `p` ranks where `n` is the largest per-rank buffer (the larger of the
/// bytes sent and received, over all members; for gathers and all-to-alls that is the whole
/// gathered or sent buffer).
///
/// | operation | algorithm | time |
/// |---|---|---|
/// | barrier | dissemination / recursive doubling | ⌈log p⌉ α |
/// | bcast, reduce | binomial tree | ⌈log p⌉ (α + nβ) |
/// | allreduce | recursive doubling | ⌈log p⌉ (α + nβ) |
/// | scan, exscan | recursive doubling | ⌈log p⌉ (α + nβ) |
/// | gather(v), scatter(v) | binomial tree | ⌈log p⌉ α + (p−1)/p · nβ |
/// | allgather(v) | Bruck (recursive doubling for powers of two) | ⌈log p⌉ α + (p−1)/p · nβ |
/// | reduce_scatter(_block) | recursive halving | ⌈log p⌉ α + (p−1)/p · nβ |
/// | alltoall(v, w) | pairwise exchange | (p−1)(α + (n/p)β) |
/// | neighbourhood / other | one exchange | α + nβ |
pub fn schedule(op: CollectiveOp, p: u32, n: f64) -> CollectiveSchedule {
    use CollectiveOp::*;
    if p <= 1 {
        return CollectiveSchedule {
            steps: 0.0,
            bytes_per_step: 0.0,
        };
    }
    let lg = ceil_log2(p);
    let pf = p as f64;
    let (steps, bytes_per_step) = match op {
        Barrier => (lg, 0.0),
        Bcast | Reduce | Allreduce | Scan | Exscan => (lg, n),
        Gather | Gatherv | Scatter | Scatterv | Allgather | Allgatherv | ReduceScatter | ReduceScatterBlock => {
            (lg, (pf - 1.0) / pf * n / lg)
        }
        Alltoall | Alltoallv | Alltoallw => (pf - 1.0, n / pf),
        Other => (1.0, n),
    };
    CollectiveSchedule { steps, bytes_per_step }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hockney(s: CollectiveSchedule, alpha: f64, beta: f64) -> f64 {
        s.steps * (alpha + s.bytes_per_step * beta)
    }

    #[test]
    fn models_match_thakur_formulas() {
        let (a, b) = (1e-6, 1e-9);
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * y.abs().max(1e-12);
        assert!(close(
            hockney(schedule(CollectiveOp::Bcast, 8, 1000.0), a, b),
            3.0 * (a + 1000.0 * b)
        ));
        assert!(close(
            hockney(schedule(CollectiveOp::Bcast, 9, 1000.0), a, b),
            4.0 * (a + 1000.0 * b)
        ));
        assert!(close(hockney(schedule(CollectiveOp::Barrier, 16, 0.0), a, b), 4.0 * a));
        assert!(close(
            hockney(schedule(CollectiveOp::Alltoall, 4, 4000.0), a, b),
            3.0 * (a + 1000.0 * b)
        ));
        assert!(close(
            hockney(schedule(CollectiveOp::Allgather, 8, 8000.0), a, b),
            3.0 * a + 7000.0 * b
        ));
        assert_eq!(schedule(CollectiveOp::Allreduce, 1, 1e6).steps, 0.0);
    }
}
