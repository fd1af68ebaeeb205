//! What is in a trace: ranks, calls by kind, bytes, duration, communicators, unmatched messages.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tracelogic_model::{is_one_sided, CallKind, Matching, P2pDir, RankTrace, Trace};

/// Overview of a trace, as `tracelogic summary --json` prints it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Source format name (`otf2`, `dumpi`, ...).
    pub format: String,
    /// Where the trace came from (file or folder name).
    pub source: String,
    /// Number of world ranks.
    pub ranks: u32,
    /// Total MPI call records.
    pub calls: u64,
    /// Calls per rank.
    pub calls_per_rank: Vec<u64>,
    /// MPI function name → number of calls.
    pub calls_by_kind: BTreeMap<String, u64>,
    /// Point-to-point bytes sent over all ranks.
    pub p2p_bytes: u64,
    /// Point-to-point send operations.
    pub p2p_messages: u64,
    /// Point-to-point receive operations.
    pub p2p_receives: u64,
    /// Collective operations over all ranks (one per rank taking part).
    pub collective_ops: u64,
    /// Bytes contributed to collectives over all ranks.
    pub collective_bytes: u64,
    /// Wall-clock span of the trace in seconds.
    pub duration_s: f64,
    /// Earliest timestamp of the trace, in nanoseconds.
    pub start_ns: u64,
    /// Latest timestamp of the trace, in nanoseconds.
    pub end_ns: u64,
    /// Communicators: name and size.
    pub communicators: Vec<CommunicatorInfo>,
    /// Sends matched with their receive.
    pub matched_messages: u64,
    /// Sends no receive matched.
    pub unmatched_sends: u64,
    /// Receives no send matched.
    pub unmatched_recvs: u64,
    /// One-sided (RMA) data-movement calls (`MPI_Put`, `MPI_Get`, `MPI_Accumulate`...): counted,
    /// not modelled as messages, so their traffic is in no matrix or message analysis.
    #[serde(default)]
    pub one_sided_calls: u64,
    /// Reader warnings.
    pub warnings: Vec<String>,
    /// The first rank whose calls come from several threads at once ([`concurrent_threads`]),
    /// with what that does to the analyses; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<String>,
}

/// A communicator as the summary lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommunicatorInfo {
    /// Name.
    pub name: String,
    /// Number of member ranks.
    pub size: u32,
    /// Point-to-point send operations made on it (over all ranks).
    #[serde(default)]
    pub p2p_sends: u64,
    /// Bytes of those sends (saturating).
    #[serde(default)]
    pub p2p_bytes: u64,
}

/// Adds the point-to-point sends of `rt` and their bytes to `per_comm[comm]` (grown as needed).
pub(crate) fn count_comm_sends(rt: &tracelogic_model::RankTrace, per_comm: &mut Vec<(u64, u64)>) {
    let p = &rt.p2p;
    for i in 0..p.len() {
        if p.dir[i] == P2pDir::Send {
            let c = p.comm[i] as usize;
            if per_comm.len() <= c {
                per_comm.resize(c + 1, (0, 0));
            }
            per_comm[c].0 += 1;
            per_comm[c].1 = per_comm[c].1.saturating_add(p.bytes.at(i));
        }
    }
}

/// Summarise `trace`, with the unmatched counts taken from `matching`.
pub fn summarize(trace: &Trace, matching: &Matching) -> Summary {
    let mut by_func = vec![0u64; trace.functions.len()];
    let mut per_comm = Vec::new();
    let mut s = Summary {
        format: trace.format.clone(),
        source: trace.source.clone(),
        ranks: trace.num_ranks(),
        calls: trace.num_calls(),
        ..Default::default()
    };
    for rt in &trace.ranks {
        count_comm_sends(rt, &mut per_comm);
        s.calls_per_rank.push(rt.calls.len() as u64);
        for &f in &rt.calls.func {
            if let Some(c) = by_func.get_mut(f as usize) {
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
    trace_wide(trace, &mut s, &by_func, &per_comm);
    s.matched_messages = matching.messages.len() as u64;
    s.unmatched_sends = matching.unmatched_sends;
    s.unmatched_recvs = matching.unmatched_recvs;
    s.warnings = trace.warnings.clone();
    s.threads = concurrent_threads(trace).map(|w| concurrent_threads_warning(&w));
    s
}

/// The first rank whose calls come from several threads (`Calls::location`) at once: a call
/// entered before an earlier call had left. A program calling MPI from several threads
/// (`MPI_THREAD_MULTIPLE`, e.g. PT-Scotch's `dgord`) interleaves the threads' calls in the
/// rank's record; read as one sequence they can wait for each other in a circle or show
/// computation that never was. Threads taking turns (no overlap) still form one program order,
/// and so do threads of which all but one only call what [`CallKind::classify`] calls `Other`
/// (local questions, datatypes: StarPU's application thread asks `MPI_Comm_rank` while its
/// progress thread communicates).
pub fn concurrent_threads(trace: &Trace) -> Option<String> {
    trace
        .ranks
        .iter()
        .find_map(|rt| concurrent_threads_of(rt, &trace.functions))
}

/// [`concurrent_threads`] of one rank (`functions`: the trace's function names).
pub(crate) fn concurrent_threads_of(rt: &RankTrace, functions: &tracelogic_model::Interner) -> Option<String> {
    let c = &rt.calls;
    if !c.location.is_stored() {
        return None;
    }
    let n = c
        .func
        .len()
        .min(c.enter.len())
        .min(c.duration.len())
        .min(c.location.len());
    let threads: std::collections::BTreeSet<u16> = c.location.iter().take(n).copied().collect();
    if threads.len() < 2 {
        return None;
    }
    // Per function id, whether it neither communicates nor completes anything (classified once
    // per id).
    let mut local: Vec<Option<bool>> = vec![None; functions.len()];
    let mut is_local = |f: u32| -> bool {
        match local.get_mut(f as usize) {
            Some(known) => *known.get_or_insert_with(|| CallKind::classify(functions.name(f)) == CallKind::Other),
            None => false,
        }
    };
    let mut latest_exit: Option<u64> = None;
    let mut overlapping = 0usize;
    for i in (0..n).filter(|&i| !is_local(c.func[i])) {
        if latest_exit.is_some_and(|x| c.enter(i) < x) {
            overlapping += 1;
        }
        latest_exit = Some(latest_exit.map_or(c.exit(i), |x| x.max(c.exit(i))));
    }
    (overlapping > 0).then(|| {
        format!(
            "rank {}'s MPI calls come from {} threads at once ({overlapping} of its {n} calls enter before an \
             earlier call has left; MPI_THREAD_MULTIPLE)",
            rt.rank,
            threads.len()
        )
    })
}

/// The summary's [`Summary::threads`] for [`concurrent_threads`]' finding `w`.
pub(crate) fn concurrent_threads_warning(w: &str) -> String {
    format!(
        "{w}: the analyses read each rank's calls as one sequence (critical-path refuses the trace; \
         waits, profile's computation, replay and the logical trace mix the threads)"
    )
}

/// The fields of a summary read off the whole trace rather than its ranks' events: calls by
/// function name from the counts per function id, the span, the communicators (with the sends
/// `per_comm` counted on each: (sends, bytes) by communicator id). Shared by [`summary`] and the
/// combination of per-rank parts (`partial::combine_summary`).
pub(crate) fn trace_wide(trace: &Trace, s: &mut Summary, by_func: &[u64], per_comm: &[(u64, u64)]) {
    for (f, &count) in by_func.iter().enumerate() {
        if count > 0 {
            let name = trace.functions.name(f as u32);
            if is_one_sided(name) {
                s.one_sided_calls += count;
            }
            *s.calls_by_kind.entry(name.to_owned()).or_default() += count;
        }
    }
    let (start, end) = trace.span();
    s.start_ns = start;
    s.end_ns = end;
    s.duration_s = end.saturating_sub(start) as f64 / 1e9;
    s.communicators = trace
        .comms
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (p2p_sends, p2p_bytes) = per_comm.get(i).copied().unwrap_or_default();
            CommunicatorInfo {
                name: c.name.clone(),
                size: c.members.len() as u32,
                p2p_sends,
                p2p_bytes,
            }
        })
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_model::{match_messages, CollectiveOp, NO_CALLPATH, NO_ROOT};

    #[test]
    fn counts_calls_bytes_and_unmatched() {
        let mut t = Trace::new("test", "two.txt", 2);
        t.push_call(0, "MPI_Init", 1_000, 2_000, NO_CALLPATH, 0);
        let c = t.push_call(0, "MPI_Isend", 3_000, 3_100, NO_CALLPATH, 0);
        let w = t.push_call(0, "MPI_Wait", 3_200, 3_300, NO_CALLPATH, 0);
        t.push_p2p(0, c, w, P2pDir::Send, 1, 0, 0, 64);
        let c = t.push_call(0, "MPI_Isend", 4_000, 4_100, NO_CALLPATH, 0);
        t.push_p2p(0, c, c, P2pDir::Send, 1, 9, 0, 16);
        let c = t.push_call(1, "MPI_Recv", 2_500, 3_500, NO_CALLPATH, 0);
        t.push_p2p(1, c, c, P2pDir::Recv, 0, 0, 0, 64);
        let c = t.push_call(1, "MPI_Allreduce", 5_000, 1_001_000, NO_CALLPATH, 0);
        t.push_collective(1, c, CollectiveOp::Allreduce, 0, NO_ROOT, 8, 8);
        t.push_call(1, "MPI_Put", 1_001_000, 1_001_000, NO_CALLPATH, 0);
        t.push_call(1, "PMPI_Rget_accumulate", 1_001_000, 1_001_000, NO_CALLPATH, 0);
        t.push_call(1, "MPI_Get_count", 1_001_000, 1_001_000, NO_CALLPATH, 0);
        t.add_comm("row", vec![1]);
        t.warnings.push("clock skew".into());

        let s = summarize(&t, &match_messages(&t));
        assert_eq!((s.ranks, s.calls), (2, 9));
        assert_eq!(s.calls_per_rank, vec![4, 5]);
        // MPI_Put and MPI_Rget_accumulate move data one-sidedly, MPI_Get_count does not.
        assert_eq!(s.one_sided_calls, 2);
        assert_eq!(s.calls_by_kind["MPI_Isend"], 2);
        assert_eq!(s.calls_by_kind["MPI_Allreduce"], 1);
        assert_eq!(s.calls_by_kind.len(), 8);
        assert_eq!((s.p2p_messages, s.p2p_bytes, s.p2p_receives), (2, 80, 1));
        assert_eq!((s.collective_ops, s.collective_bytes), (1, 8));
        assert_eq!((s.matched_messages, s.unmatched_sends, s.unmatched_recvs), (1, 1, 0));
        assert_eq!((s.start_ns, s.end_ns), (1_000, 1_001_000));
        assert!((s.duration_s - 0.001).abs() < 1e-12);
        assert_eq!(s.communicators.len(), 2);
        assert_eq!(s.communicators[1].size, 1);
        assert_eq!(s.warnings, vec!["clock skew".to_string()]);
        let json = serde_json::to_value(&s).unwrap();
        for field in [
            "ranks",
            "calls",
            "calls_by_kind",
            "unmatched_sends",
            "unmatched_recvs",
            "format",
        ] {
            assert!(json.get(field).is_some(), "missing {field}");
        }
    }

    #[test]
    fn empty_trace() {
        let t = Trace::new("text", "empty", 0);
        let s = summarize(&t, &match_messages(&t));
        assert_eq!((s.ranks, s.calls, s.duration_s), (0, 0, 0.0));
        assert!(s.calls_by_kind.is_empty());
    }
}
