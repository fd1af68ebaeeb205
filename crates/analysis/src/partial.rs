//! Analyses computed by parts of the ranks and put together (`tracelogic-mpi`, docs/mpi.md).
//!
//! A process that holds the event columns of some ranks only (the other ranks present with
//! their span, without events, as the distributed reader leaves them) computes its part: the
//! counts of its ranks. The parts of ranks that together cover the trace, combined, give the
//! serial answer exactly: every quantity is an integer sum, a per-rank value or a minimum or
//! maximum, so neither the cut into parts nor the order of combining changes a bit.
//!
//! * [`summary_part`] / [`combine_summary`]: [`summarize`](crate::summary::summarize). The
//!   matched and unmatched counts come from matching by parts
//!   ([`tracelogic_model::matching::send_envelopes`] and
//!   [`match_envelopes`](tracelogic_model::matching::match_envelopes), the sends routed to
//!   their receivers' process): [`MatchCounts`].
//! * [`profile_part`] / [`combine_profile`]: [`profile_trace`](crate::profile::profile_trace),
//!   which is itself the combination of one part holding every rank.

use crate::profile::{ProfileOptions, ProfileReport};
use crate::summary::Summary;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use tracelogic_model::{P2pDir, Rank, Time, Trace};

/// A part's share of the matching: from its ranks as senders and as receivers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchCounts {
    /// Sends of the part's ranks addressed to a world rank of the trace.
    pub sends_to_ranks: u64,
    /// Sends of the part's ranks addressed elsewhere (never matched).
    pub sends_elsewhere: u64,
    /// Messages received by the part's ranks (matched sends).
    pub matched: u64,
    /// Receives of the part's ranks that no send fed.
    pub unmatched_recvs: u64,
}

/// The summary's counts over some ranks ([`summary_part`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SummaryPart {
    /// The ranks counted.
    pub ranks: Range<Rank>,
    /// Calls of each of them.
    pub calls_per_rank: Vec<u64>,
    /// Calls per function id (ids are the trace's, the same in every part).
    pub calls_by_function: Vec<u64>,
    /// Point-to-point bytes sent (saturating).
    pub p2p_bytes: u64,
    /// Point-to-point sends.
    pub p2p_messages: u64,
    /// Point-to-point receives.
    pub p2p_receives: u64,
    /// Collective operations.
    pub collective_ops: u64,
    /// Bytes contributed to collectives (saturating).
    pub collective_bytes: u64,
    /// The part's share of the matching.
    pub matching: MatchCounts,
    /// Point-to-point (sends, bytes) by communicator id.
    #[serde(default)]
    pub comm_sends: Vec<(u64, u64)>,
    /// The first of its ranks whose calls come from several threads at once
    /// ([`crate::summary::concurrent_threads`]).
    #[serde(default)]
    pub concurrent_threads: Option<String>,
}

/// The summary's counts over the ranks `ranks` of `trace` (only their columns are read).
pub fn summary_part(trace: &Trace, ranks: Range<Rank>, matching: MatchCounts) -> SummaryPart {
    let mut s = SummaryPart {
        ranks: ranks.clone(),
        calls_by_function: vec![0; trace.functions.len()],
        matching,
        ..Default::default()
    };
    for rt in trace.ranks.iter().filter(|rt| ranks.contains(&rt.rank)) {
        crate::summary::count_comm_sends(rt, &mut s.comm_sends);
        if s.concurrent_threads.is_none() {
            s.concurrent_threads = crate::summary::concurrent_threads_of(rt, &trace.functions);
        }
        s.calls_per_rank.push(rt.calls.len() as u64);
        for &f in &rt.calls.func {
            if let Some(c) = s.calls_by_function.get_mut(f as usize) {
                *c += 1;
            }
        }
        let p = &rt.p2p;
        for i in 0..p.len() {
            match p.dir[i] {
                P2pDir::Send => {
                    s.p2p_messages += 1;
                    s.p2p_bytes = s.p2p_bytes.saturating_add(p.bytes.at(i));
                }
                P2pDir::Recv => s.p2p_receives += 1,
            }
        }
        s.collective_ops += rt.collectives.len() as u64;
        s.collective_bytes = rt
            .collectives
            .bytes_sent
            .iter()
            .fold(s.collective_bytes, |t, &b| t.saturating_add(b));
    }
    s
}

/// The summary of `trace` (its definitions, spans and warnings: the columns are not read) from
/// `parts` covering each of its ranks once, in rank order: what
/// [`summarize`](crate::summary::summarize) gives on the whole trace.
pub fn combine_summary(trace: &Trace, parts: &[SummaryPart]) -> Summary {
    let mut by_func = vec![0u64; trace.functions.len()];
    let mut s = Summary {
        format: trace.format.clone(),
        source: trace.source.clone(),
        ranks: trace.num_ranks(),
        ..Default::default()
    };
    let mut m = MatchCounts::default();
    let mut per_comm: Vec<(u64, u64)> = Vec::new();
    for part in parts {
        if per_comm.len() < part.comm_sends.len() {
            per_comm.resize(part.comm_sends.len(), (0, 0));
        }
        for (t, &(n, b)) in per_comm.iter_mut().zip(&part.comm_sends) {
            *t = (t.0 + n, t.1.saturating_add(b));
        }
        s.calls_per_rank.extend(&part.calls_per_rank);
        for (t, &c) in by_func.iter_mut().zip(&part.calls_by_function) {
            *t += c;
        }
        s.p2p_bytes = s.p2p_bytes.saturating_add(part.p2p_bytes);
        s.p2p_messages += part.p2p_messages;
        s.p2p_receives += part.p2p_receives;
        s.collective_ops += part.collective_ops;
        s.collective_bytes = s.collective_bytes.saturating_add(part.collective_bytes);
        m.sends_to_ranks += part.matching.sends_to_ranks;
        m.sends_elsewhere += part.matching.sends_elsewhere;
        m.matched += part.matching.matched;
        m.unmatched_recvs += part.matching.unmatched_recvs;
    }
    s.calls = s.calls_per_rank.iter().sum();
    crate::summary::trace_wide(trace, &mut s, &by_func, &per_comm);
    s.matched_messages = m.matched;
    s.unmatched_sends = m.sends_elsewhere + m.sends_to_ranks.saturating_sub(m.matched);
    s.unmatched_recvs = m.unmatched_recvs;
    s.warnings = trace.warnings.clone();
    s.threads = parts
        .iter()
        .find_map(|p| p.concurrent_threads.as_deref())
        .map(crate::summary::concurrent_threads_warning);
    s
}

/// The span of the ranks `ranks` of `trace` (as [`Trace::span`] over them; `None` when none
/// has one): the span of the whole trace is the smallest start and largest end over the parts.
pub fn ranks_span(trace: &Trace, ranks: Range<Rank>) -> Option<(Time, Time)> {
    trace
        .ranks
        .iter()
        .filter(|rt| ranks.contains(&rt.rank))
        .filter_map(|r| r.span)
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
}

/// The profile's sums over some ranks ([`profile_part`]), in nanoseconds and bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfilePart {
    /// The ranks counted.
    pub ranks: Range<Rank>,
    /// Calls per function id.
    pub calls: Vec<u64>,
    /// Time per function id.
    pub total: Vec<u64>,
    /// Time per (function id, rank of the part): `per_rank[f * ranks.len() + (r - ranks.start)]`.
    pub per_rank: Vec<u64>,
    /// Time between MPI calls, per rank of the part.
    pub compute: Vec<u64>,
    /// Whether each rank of the part recorded a call.
    pub active: Vec<bool>,
    /// Time in MPI calls.
    pub mpi: u64,
    /// Log2 size histogram of the sends: (count, bytes) per bin.
    pub p2p_sizes: Vec<(u64, u64)>,
    /// Log2 size histogram of the collective operations.
    pub collective_sizes: Vec<(u64, u64)>,
    /// Bytes sent per time bin.
    pub p2p_time: Vec<u64>,
    /// Bytes contributed to collectives per time bin.
    pub collective_time: Vec<u64>,
}

/// The profile's sums over the ranks `ranks` of `trace`, with `span` the span of the whole
/// trace (the time bins count from it; [`ranks_span`] of every part together).
pub fn profile_part(trace: &Trace, ranks: Range<Rank>, span: (Time, Time), options: &ProfileOptions) -> ProfilePart {
    crate::profile::part(trace, ranks, span, options)
}

/// The profile of `trace` (its definitions: the columns are not read) from `parts` covering
/// each of its ranks once, in rank order, made with the trace's `span` and `options`: what
/// [`profile_trace`](crate::profile::profile_trace) gives on the whole trace.
pub fn combine_profile(
    trace: &Trace,
    parts: &[ProfilePart],
    span: (Time, Time),
    options: &ProfileOptions,
) -> ProfileReport {
    crate::profile::combine(trace, parts, span, options)
}
