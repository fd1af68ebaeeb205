//! `tracelogic-mpi`: tracelogic as an MPI program (docs/mpi.md). This library is its MPI-free
//! part, tested without MPI: how the ranks of a trace are shared out among the processes
//! ([`partition`]), how the processes' partial results are put together ([`merge`]) and how
//! they match messages by parts ([`reduce`]). The
//! binary (`src/main.rs`, feature `mpi`) adds the MPI calls and the CLI's own subcommand code.

pub mod merge;
pub mod partition;
pub mod reduce;
