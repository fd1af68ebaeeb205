//! Receives from `MPI_ANY_SOURCE` whose status the trace does not record, named from the
//! matching.
//!
//! A format resolves a wildcard receive from its completion's status (DUMPI, OTF2); a receive
//! completed without one (`MPI_STATUS_IGNORE`, or `MPI_Wait` after an `MPI_Cancel` that came
//! too late: hpcc's RandomAccess) stays [`ANY_SOURCE`]. [`with_matched_sources`] names the
//! sender of the message [`match_messages`] pairs it with, as the status would have: source,
//! tag (for `MPI_ANY_TAG`) and the bytes received (the message, at most the posted buffer).
//! Receives nothing matched (a cancel that succeeded) stay wildcards.

use super::match_messages;
use crate::{P2pDir, Trace, ANY_SOURCE, ANY_TAG};
use std::borrow::Cow;

/// `trace` with every matched receive from [`ANY_SOURCE`] naming its message's sender;
/// borrowed as it is when it has no receive from `ANY_SOURCE`.
pub fn with_matched_sources(trace: &Trace) -> Cow<'_, Trace> {
    let unresolved = trace.ranks.iter().any(|rt| {
        let p = &rt.p2p;
        (0..p.len()).any(|i| p.dir[i] == P2pDir::Recv && p.peer[i] == ANY_SOURCE)
    });
    if !unresolved {
        return Cow::Borrowed(trace);
    }
    let matching = match_messages(trace);
    let mut resolved = trace.clone();
    for m in &matching.messages {
        let (r, i) = (m.receiver as usize, m.recv_op as usize);
        if trace.ranks[r].p2p.peer[i] != ANY_SOURCE {
            continue;
        }
        let send = &trace.ranks[m.sender as usize].p2p;
        let (tag, bytes) = (send.tag[m.send_op as usize], send.bytes.at(m.send_op as usize));
        let p = &mut resolved.ranks[r].p2p;
        p.peer[i] = m.sender;
        if p.tag[i] == ANY_TAG {
            p.tag[i] = tag;
        }
        let posted = p.bytes.at(i);
        p.bytes.set(i, bytes.min(posted));
    }
    Cow::Owned(resolved)
}
