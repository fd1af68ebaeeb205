//! The trace builder every reader writes through: what sits between a format's decoder and
//! the [model](crate), written once instead of once per reader (the way Perfetto's importers
//! write through shared trackers rather than each keeping its own tables).
//!
//! * [`requests`] — open non-blocking requests: a post (`MPI_Isend`, `MPI_Irecv`, a persistent
//!   start) opens a request under its handle, a completion (`MPI_Wait*`, `MPI_Test*`) closes it
//!   and learns which operation it completes. [`RequestTable`] holds one open request per handle
//!   (DUMPI; [`RequestsByRank`] one per rank for the text and Pipit CSV readers, which read
//!   ranks interleaved); [`LocationRequests`] holds requests whose ids are per thread but
//!   may be completed by another thread of the rank (OTF2 as Score-P writes it).
//! * [`comms`] — communicator translation: [`CommTable`] interns communicators by (name,
//!   members) so a communicator met again (a `dup` of the same group, a split's colour on each
//!   rank) gets the same id, and translates a communicator-local rank to its world rank.
//!   [`Trace::add_comm`](crate::Trace::add_comm) is the same table over a whole trace.
//! * [`rows`] — dropping rows from the columnar model: `retain_rows` on [`Calls`](crate::Calls),
//!   [`P2p`](crate::P2p), [`Collectives`](crate::Collectives) and
//!   [`MetricSamples`](crate::MetricSamples) (in place, for readers) and `select_rows` (a copy,
//!   for [restrictions](crate::restrict)): every column of a table at once, so a column added
//!   to the model cannot be forgotten by one of the places that drop rows.
//!
//! What stays in a reader is what its format alone says: how its records name requests,
//! communicators and groups (OTF2 definitions, DUMPI's splits and dups evaluated over group
//! expressions, Paraver's communicator records), and which rows it drops and why.

pub mod comms;
pub mod requests;
pub mod rows;

pub use comms::CommTable;
pub use requests::{LocationRequests, RequestKey, RequestTable, RequestsByRank};
