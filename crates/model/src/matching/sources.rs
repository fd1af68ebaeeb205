//! Receives from `MPI_ANY_SOURCE` whose status the trace does not record, named from the
//! matching.
//!
//! A format resolves a wildcard receive from its completion's status (DUMPI, OTF2); a receive
//! completed without one (`MPI_STATUS_IGNORE`, or `MPI_Wait` after an `MPI_Cancel` that came
//! too late: hpcc's RandomAccess) stays [`ANY_SOURCE`]. [`Sourced`] names the sender of the
//! message the matching pairs it with, as the status would have: source, tag (for
//! `MPI_ANY_TAG`) and the bytes received (the message, at most the posted buffer). Receives
//! nothing matched (a cancel that succeeded) stay wildcards.

use super::{match_messages, Matching};
use crate::{P2pDir, Trace, ANY_SOURCE, ANY_TAG};
use std::borrow::Cow;
use std::ops::Deref;

/// A trace whose matched receives from [`ANY_SOURCE`] name their message's sender; the trace
/// itself, borrowed, when it has no receive from `ANY_SOURCE`.
///
/// The engine makes it from the matching it holds ([`Sourced::new`]); `From<&Trace>` matches
/// the trace itself (for callers without one: tests, benches).
#[derive(Debug, Clone)]
pub struct Sourced<'a>(Cow<'a, Trace>);

impl<'a> Sourced<'a> {
    /// `trace` with its wildcard receives named from `matching` (the matching of this very
    /// trace), asked for only when the trace has such a receive.
    pub fn new<'m>(trace: &'a Trace, matching: impl FnOnce() -> &'m Matching) -> Sourced<'a> {
        if !has_wildcard_receives(trace) {
            return Sourced(Cow::Borrowed(trace));
        }
        Sourced(Cow::Owned(named(trace, matching())))
    }

    /// The trace.
    pub fn trace(&self) -> &Trace {
        &self.0
    }
}

impl Deref for Sourced<'_> {
    type Target = Trace;
    fn deref(&self) -> &Trace {
        &self.0
    }
}

impl<'a> From<&'a Trace> for Sourced<'a> {
    /// `trace` with its wildcard receives named from its own [`match_messages`].
    fn from(trace: &'a Trace) -> Sourced<'a> {
        if !has_wildcard_receives(trace) {
            return Sourced(Cow::Borrowed(trace));
        }
        Sourced(Cow::Owned(named(trace, &match_messages(trace))))
    }
}

impl<'a> From<&'a Sourced<'_>> for Sourced<'a> {
    /// Borrowed again.
    fn from(sourced: &'a Sourced<'_>) -> Sourced<'a> {
        Sourced(Cow::Borrowed(sourced.trace()))
    }
}

/// Whether some receive of `trace` is from [`ANY_SOURCE`].
fn has_wildcard_receives(trace: &Trace) -> bool {
    trace.ranks.iter().any(|rt| {
        let p = &rt.p2p;
        (0..p.len()).any(|i| p.dir[i] == P2pDir::Recv && p.peer[i] == ANY_SOURCE)
    })
}

/// A copy of `trace` with every matched receive from [`ANY_SOURCE`] naming its message's
/// sender.
fn named(trace: &Trace, matching: &Matching) -> Trace {
    let mut resolved = trace.clone();
    for m in &matching.messages {
        let (r, i) = (m.receiver as usize, m.recv_op as usize);
        if trace.ranks[r].p2p.peer[i] != ANY_SOURCE {
            continue;
        }
        let send = &trace.ranks[m.sender as usize].p2p;
        let (tag, bytes) = (send.tag[m.send_op as usize], send.bytes.at(m.send_op as usize));
        let p = &mut resolved.ranks[r].p2p;
        p.peer.set(i, m.sender);
        if p.tag[i] == ANY_TAG {
            p.tag.set(i, tag);
        }
        let posted = p.bytes.at(i);
        p.bytes.set(i, bytes.min(posted));
    }
    resolved
}
