//! Synthetic SPMD traces of known communication topologies, for tests, benchmarks and workshops.
//!
//! [`generate`] turns a [`Spec`] — a topology from `tracelogic_graph::families`, a rank
//! numbering, iterations, message sizes, compute time, an exchange [`Style`], periodic
//! collectives, optional low-volume noise and optional phases — into a
//! [`tracelogic_model::Trace`] of format `generated`. [`generate_with_truth`] also returns the
//! [`Truth`]: which topology node each rank plays, where each phase lies in time and which
//! links are noise, so tests can check topology identification, mapping, filtering and phase
//! detection against what was really generated.
//!
//! Every family is generated from its directions, including NAS CG (`nas-cg:4x8`): each rank
//! sends along `row-bit0`, `row-bit1`, ... (its recursive-doubling row partners) and
//! `transpose` (none on CG's diagonal), so CG-like traces with any rank numbering need nothing
//! CG-specific here; `direction_bytes` sets the transpose message apart (cg.f sends half the
//! rows to it when `npcols = 2·nprows`).
//!
//! # What the program does
//!
//! Every rank calls `MPI_Init`, runs the phases one after the other and calls `MPI_Finalize`.
//! In each iteration of a phase it computes for `compute_ns` (times its imbalance factor), then
//! exchanges one message with the neighbour along every direction of the topology that has one
//! (tag = index of the direction in `TopologySpec::directions`, so a receiver can tell an east
//! message from a west one even when both come from the same rank), then its part of the noise
//! (`MPI_Irecv`/`MPI_Isend`/`MPI_Waitall`, tag 32767), then any collective due after this
//! iteration (`(iteration + 1) % every == 0`). The wavefront style instead computes inside its
//! two sweeps. All messages and collectives use `MPI_COMM_WORLD`; every send has exactly one
//! matching receive, so [`tracelogic_model::match_messages`] leaves nothing unmatched.
//!
//! # Clock model
//!
//! Each rank has a clock starting at 0 (`MPI_Init` enters at 0). With `o` = overhead, `L` =
//! latency and `x(b) = ⌈b / bandwidth⌉`:
//! - every call lasts at least `o`; a send (`MPI_Send`, `MPI_Isend`, the send half of
//!   `MPI_Sendrecv`) lasts `o + x(b)` (sends are eager: they never wait for the receiver);
//! - a message entered at `s` arrives at `s + L + x(b)`;
//! - a receive (`MPI_Recv`, the receive half of `MPI_Sendrecv`, the `MPI_Waitall` completing
//!   `MPI_Irecv`s) exits `o` after the later of its entry and the arrivals it waits for;
//! - a collective exits, on every rank, `o + ⌈log2 n⌉ · (L + x(b))` after the last rank entered;
//!   `MPI_Finalize` exits `o` after the last rank entered.
//!
//! Times are integer nanoseconds, so a receive never completes before its message was sent.
//!
//! # Numbering
//!
//! Nodes are numbered row-major (see `tracelogic_graph::families`); [`Numbering`] decides which
//! rank plays which node: the identity, a random permutation, or a partial renumbering of a
//! given share of the ranks (Logicalization §5.3). Random choices come from a seeded SplitMix64, so
//! the same spec gives the same trace on every platform.
//!
//! Cost: O(calls) time and about 30 bytes per call plus 40 per point-to-point operation; a
//! spec whose trace would exceed 200 million calls is refused before anything is allocated.

pub mod delays;
mod generator;
pub mod nas;
mod numbering;
pub mod pair;
pub mod persistent;
mod rng;
mod spec;
mod truth;
mod units;

pub use generator::generate_with_truth;
pub use nas::{generate_nas, NasBenchmark, NasClass, NasSpec, NasTruth};
pub use spec::{Clock, CollectiveSpec, Noise, Numbering, Phase, Spec, Style};
/// The topology types a [`Spec`] names, re-exported so users of the generator need no other crate.
pub use tracelogic_graph::{Direction, Family, TopologySpec};
pub use truth::{NoiseLink, PhaseTruth, Truth};
pub use units::format_duration_ns;

use tracelogic_model::Trace;

/// Generate the trace `spec` describes (format `generated`). See [`generate_with_truth`] for
/// the ground truth as well.
pub fn generate(spec: &Spec) -> Result<Trace, String> {
    generate_with_truth(spec).map(|(trace, _)| trace)
}
