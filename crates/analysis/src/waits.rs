//! Wait states measured from the recorded timestamps, with Scalasca's definitions (Geimer et al.
//! 2010; the patterns of Scalasca's trace analyser), `docs/waits.md`:
//!
//! * **Late sender**: a blocking receive (`MPI_Recv`, the receive of `MPI_Sendrecv`) or a wait
//!   completing a non-blocking receive (`MPI_Wait*`, not `MPI_Test*`) entered before the matching
//!   send's posting call: `min(send enter, call exit) − call enter`. A call completing several
//!   receives (`MPI_Waitall`) counts the largest of them once, attributed to that latest sender.
//! * **Late receiver**: a blocking send (`MPI_Send`, `MPI_Ssend`, `MPI_Rsend`) or an `MPI_Wait`
//!   completing a non-blocking send that was still inside the call when the receive was posted
//!   (exit > the receive's posting enter: it waited for the receiver, as a synchronous or
//!   rendezvous send does; Scalasca also counts a send leaving at that very instant):
//!   `receive enter − send call enter`.
//! * **Wait at N×N**: `MPI_Allreduce`, `MPI_Allgather(v)`, `MPI_Alltoall`,
//!   `MPI_Reduce_scatter(_block)`: `min(latest member enter, exit) − enter` on every member.
//!   (`MPI_Alltoallv/w` are left out as in Scalasca: their members need not synchronise.)
//! * **Wait at barrier**: the same for `MPI_Barrier`.
//! * **Late broadcast** (1-to-N: `MPI_Bcast`, `MPI_Scatter(v)`): a non-root entered before the
//!   root: `min(root enter, exit) − enter`.
//! * **Early reduce** (N-to-1: `MPI_Reduce`, `MPI_Gather(v)`): the root entered before any
//!   sender: `min(earliest non-root enter, root exit) − root enter` (Scalasca's rule: the time
//!   before any data could have been sent).
//!
//! Collective instances are the `k`-th collective of each member on a communicator (MPI orders
//! collectives per communicator), as the replay counts them. Non-blocking collectives count in
//! that order but wait in their completion call, which the model does not record: they carry
//! no wait state. One pass over the messages and one over the collective records: O(calls +
//! operations), plus a sort of the late receives.

use crate::profile::{secs, selected};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use tracelogic_model::{
    match_messages, CallIdx, CallKind, CollectiveOp, CommId, Matching, Rank, Selection, Trace, NOT_COMPLETED,
};

/// Waiting time per wait state, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Waits {
    /// Receives waiting for a send not yet posted.
    pub late_sender_s: f64,
    /// Blocking sends waiting for the receive to be posted.
    pub late_receiver_s: f64,
    /// Time in all-to-all collectives before the last member arrived.
    pub wait_nxn_s: f64,
    /// Time in barriers before the last member arrived.
    pub wait_barrier_s: f64,
    /// Non-roots of 1-to-N collectives waiting for the root.
    pub late_broadcast_s: f64,
    /// Roots of N-to-1 collectives waiting for the first sender.
    pub early_reduce_s: f64,
}

impl Waits {
    /// Sum of the six wait states.
    pub fn total_s(&self) -> f64 {
        self.late_sender_s
            + self.late_receiver_s
            + self.wait_nxn_s
            + self.wait_barrier_s
            + self.late_broadcast_s
            + self.early_reduce_s
    }
}

/// One rank's waiting time (the rank that waited).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankWaits {
    /// World rank.
    pub rank: Rank,
    /// Its waiting time per wait state.
    #[serde(flatten)]
    pub waits: Waits,
}

/// Waiting time inside one MPI function (the call that waited).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionWaits {
    /// MPI function, e.g. `MPI_Recv`.
    pub name: String,
    /// Waiting time inside it per wait state.
    #[serde(flatten)]
    pub waits: Waits,
}

/// The measured waiting between one sender and one receiver: the receiver's late-sender time
/// for this sender, and the sender's late-receiver time for this receiver.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairWait {
    /// The sending rank (row of the matrix).
    pub sender: Rank,
    /// The receiving rank (column).
    pub receiver: Rank,
    /// Seconds the receiver waited for this late sender.
    pub late_sender_s: f64,
    /// Seconds the sender's blocking send (or `MPI_Wait`) waited for this late receiver.
    #[serde(default)]
    pub late_receiver_s: f64,
}

impl PairWait {
    /// Late-sender plus late-receiver seconds: the pair's cell of the waiting matrix.
    pub fn waiting_s(&self) -> f64 {
        self.late_sender_s + self.late_receiver_s
    }
}

/// Wait states of a trace, as `tracelogic waits --json` prints them: the totals' six fields at
/// the top level, then per rank, per function and per (sender, receiver) pair.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitReport {
    /// Totals over the run.
    #[serde(flatten)]
    pub totals: Waits,
    /// Per world rank (every rank of the trace, in order).
    pub by_rank: Vec<RankWaits>,
    /// Per MPI function with some waiting time, by decreasing total waiting time.
    pub by_function: Vec<FunctionWaits>,
    /// Per (sender, receiver) with late-sender or late-receiver time, sorted by sender then
    /// receiver: the "waiting" metric of the communication matrix (row = sender, column =
    /// receiver, [`PairWait::waiting_s`]).
    pub by_pair: Vec<PairWait>,
    /// Messages whose receive left its call before the send was entered (unsynchronised
    /// clocks): their waiting time is bounded by the call's duration.
    #[serde(default)]
    pub clock_violations: u64,
}

impl WaitReport {
    /// The waiting matrix as dense rows (`rows[sender][receiver]`, late-sender plus
    /// late-receiver seconds), for displays of small traces; the sparse form is
    /// [`WaitReport::by_pair`].
    pub fn waiting_rows(&self, ranks: u32) -> Vec<Vec<f64>> {
        let mut rows = vec![vec![0.0; ranks as usize]; ranks as usize];
        for p in &self.by_pair {
            if let Some(row) = rows.get_mut(p.sender as usize) {
                if let Some(v) = row.get_mut(p.receiver as usize) {
                    *v += p.waiting_s();
                }
            }
        }
        rows
    }
}

/// Collective instances of a trace: the `k`-th blocking collective of each member on a
/// communicator, members in compressed rows.
#[derive(Debug, Default)]
pub(crate) struct Instances {
    pub op: Vec<CollectiveOp>,
    pub comm: Vec<CommId>,
    pub root: Vec<Rank>,
    /// `start[i]..start[i + 1]` indexes the members of instance `i`.
    pub start: Vec<usize>,
    /// (rank, call, bytes sent) of each member, by rank.
    pub members: Vec<(Rank, CallIdx, u64)>,
}

/// True for the non-blocking form of a function name (`MPI_Iallreduce`, `MPI_Ibarrier`).
pub(crate) fn is_nonblocking_collective(name: &str) -> bool {
    let n = tracelogic_model::mpi_base_name(name);
    (n.starts_with('i') && !n.starts_with("init")) || n.ends_with("_init")
}

impl Instances {
    /// The instances of `trace`, each rank's collective records numbered on their
    /// communicator by `sequence[rank][record]` when given (a restricted trace's records in the
    /// numbering of the whole trace, [`Trace::restrict_collective_sequence`]), else by counting.
    pub(crate) fn of_sequence(trace: &Trace, sequence: Option<&[Vec<u32>]>) -> Instances {
        let nonblocking: Vec<bool> = trace
            .functions
            .names()
            .iter()
            .map(|n| is_nonblocking_collective(n))
            .collect();
        // (instance, rank, call, bytes) of every blocking collective record.
        let mut key_of: HashMap<(CommId, u32), u32> = HashMap::new();
        let mut rows: Vec<(u32, Rank, CallIdx, u64)> = Vec::new();
        let mut out = Instances::default();
        let mut seq: HashMap<CommId, u32> = HashMap::new();
        for rt in &trace.ranks {
            seq.clear();
            let co = &rt.collectives;
            let len = co
                .len()
                .min(co.op.len())
                .min(co.comm.len())
                .min(co.root.len())
                .min(co.bytes_sent.len());
            for i in 0..len {
                let call = co.call[i];
                let Some(&f) = rt.calls.func.get(call as usize) else {
                    continue;
                };
                let s = seq.entry(co.comm[i]).or_insert(0);
                let mut k = *s;
                *s += 1;
                if let Some(given) = sequence.and_then(|q| q.get(rt.rank as usize)).and_then(|q| q.get(i)) {
                    k = *given;
                }
                if nonblocking.get(f as usize).copied().unwrap_or(false) {
                    continue;
                }
                let inst = *key_of.entry((co.comm[i], k)).or_insert_with(|| {
                    out.op.push(co.op[i]);
                    out.comm.push(co.comm[i]);
                    out.root.push(co.root[i]);
                    out.op.len() as u32 - 1
                });
                rows.push((inst, rt.rank, call, co.bytes_sent[i]));
            }
        }
        // Counting sort by instance, stable: members stay in rank order.
        let n = out.op.len();
        let mut start = vec![0usize; n + 1];
        for r in &rows {
            start[r.0 as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut free = start.clone();
        let mut members = vec![(0, 0, 0); rows.len()];
        for r in rows {
            members[free[r.0 as usize]] = (r.1, r.2, r.3);
            free[r.0 as usize] += 1;
        }
        out.start = start;
        out.members = members;
        out
    }

    pub(crate) fn len(&self) -> usize {
        self.op.len()
    }

    pub(crate) fn members(&self, i: usize) -> &[(Rank, CallIdx, u64)] {
        &self.members[self.start[i]..self.start[i + 1]]
    }
}

/// How a completion or blocking send call is named, for the late-receiver and late-sender
/// rules.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// `MPI_Send`, `MPI_Ssend`, `MPI_Rsend` (not `MPI_Bsend`: buffered, it never waits).
    BlockingSend,
    /// `MPI_Wait`.
    WaitOne,
    /// `MPI_Waitall`, `MPI_Waitany`, `MPI_Waitsome`.
    WaitMany,
    /// `MPI_Probe`, `MPI_Mprobe`: wait for a message without receiving it.
    BlockingProbe,
    /// `MPI_Get_count`, `MPI_Get_elements(_x)`: read a status, as between a probe and the
    /// receive of what it found.
    StatusRead,
    /// `MPI_Iprobe`, `MPI_Improbe`: ask whether a message has arrived ([`Polling`]).
    NonblockingProbe,
    /// `MPI_Test*` but `MPI_Test_cancelled`, which reads a status and tests no request; and
    /// `MPI_Request_get_status`, a test that leaves the request to a later completion call (ABySS
    /// polls its posted receive with it, then completes it with `MPI_Test`): the model records
    /// no completion for it, so it always counts as asking.
    Test,
    /// Anything else.
    Other,
}

pub(crate) fn roles(trace: &Trace) -> Vec<Role> {
    trace
        .functions
        .names()
        .iter()
        .map(|name| match tracelogic_model::mpi_base_name(name).as_str() {
            "send" | "ssend" | "rsend" => Role::BlockingSend,
            "wait" => Role::WaitOne,
            "waitall" | "waitany" | "waitsome" => Role::WaitMany,
            "probe" | "mprobe" => Role::BlockingProbe,
            "get_count" | "get_elements" | "get_elements_x" => Role::StatusRead,
            "iprobe" | "improbe" => Role::NonblockingProbe,
            n if n.starts_with("test") && n != "test_cancelled" => Role::Test,
            "request_get_status" => Role::Test,
            _ => Role::Other,
        })
        .collect()
}

/// Wait states of the part of `trace` that `selection` keeps ([`Trace::restrict`]), with the
/// messages and collective instances of the whole trace ([`Trace::restrict_matching`]).
pub fn wait_states(trace: &Trace, selection: &Selection) -> WaitReport {
    if *selection == Selection::default() {
        return wait_states_matched(trace, &match_messages(trace));
    }
    let t = selected(trace, selection);
    let matching = trace.restrict_matching(&match_messages(trace), selection);
    let sequence = trace.restrict_collective_sequence(selection);
    wait_states_paired(&t, &matching, Some(&sequence))
}

/// Per-call accumulator of waiting time, in ns.
#[derive(Default)]
struct Acc {
    by_rank: Vec<[u64; 6]>,
    by_func: Vec<[u64; 6]>,
}

/// Index of each wait state in the per-rank and per-function rows (report order); shared with
/// the parallel replay (`partial_waits`).
pub(crate) const LS: usize = 0;
pub(crate) const LR: usize = 1;
pub(crate) const NXN: usize = 2;
pub(crate) const BARRIER: usize = 3;
pub(crate) const LB: usize = 4;
pub(crate) const ER: usize = 5;

impl Acc {
    fn add(&mut self, trace: &Trace, rank: Rank, call: CallIdx, what: usize, ns: u64) {
        if ns == 0 {
            return;
        }
        self.by_rank[rank as usize][what] += ns;
        if let Some(&f) = trace.ranks[rank as usize].calls.func.get(call as usize) {
            if let Some(row) = self.by_func.get_mut(f as usize) {
                row[what] += ns;
            }
        }
    }
}

fn waits_of(ns: &[u64; 6]) -> Waits {
    Waits {
        late_sender_s: secs(ns[LS]),
        late_receiver_s: secs(ns[LR]),
        wait_nxn_s: secs(ns[NXN]),
        wait_barrier_s: secs(ns[BARRIER]),
        late_broadcast_s: secs(ns[LB]),
        early_reduce_s: secs(ns[ER]),
    }
}

fn call_times(trace: &Trace, rank: Rank, call: CallIdx) -> Option<(u64, u64)> {
    let c = &trace.ranks.get(rank as usize)?.calls;
    Some((c.enter.get(call as usize)?, c.get_exit(call as usize)?))
}

/// `min(until, exit) − enter`, or 0.
fn idle(enter: u64, exit: u64, until: u64) -> u64 {
    until.min(exit).saturating_sub(enter)
}

/// Wait states of a whole trace whose messages `matching` paired.
pub fn wait_states_matched(trace: &Trace, matching: &Matching) -> WaitReport {
    wait_states_paired(trace, matching, None)
}

/// Wait states of `trace` whose messages `matching` paired and whose collective records are
/// numbered on their communicators by `sequence` (for a restricted trace: the whole trace's
/// matching and numbering, [`Trace::restrict_matching`] and
/// [`Trace::restrict_collective_sequence`], so that a time window pairs what was recorded).
pub fn wait_states_paired(trace: &Trace, matching: &Matching, sequence: Option<&[Vec<u32>]>) -> WaitReport {
    let n = trace.ranks.len();
    let mut acc = Acc {
        by_rank: vec![[0; 6]; n],
        by_func: vec![[0; 6]; trace.functions.len()],
    };
    let roles = roles(trace);
    // Point to point: late receives as (receiver, completion call, idle, sender), reduced to
    // the largest per call below; late receivers added directly (one message per call).
    let mut late: Vec<(Rank, CallIdx, u64, Rank)> = Vec::new();
    // (sender, receiver, ns) of each late receiver, for the pairs.
    let mut late_receivers: Vec<(Rank, Rank, u64)> = Vec::new();
    let mut clock_violations = 0u64;
    for m in &matching.messages {
        let Some(w) = message_wait(trace, &roles, m) else {
            continue;
        };
        clock_violations += w.clock_violation as u64;
        if let Some((rc, w)) = w.late_sender {
            late.push((m.receiver, rc, w, m.sender));
        }
        if let Some((sc, w)) = w.late_receiver {
            acc.add(trace, m.sender, sc, LR, w);
            if w > 0 {
                late_receivers.push((m.sender, m.receiver, w));
            }
        }
    }
    late.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(b.2.cmp(&a.2)));
    // (late sender, late receiver) ns per (sender, receiver).
    let mut pairs: HashMap<(Rank, Rank), (u64, u64)> = HashMap::new();
    for &(sender, receiver, w) in &late_receivers {
        pairs.entry((sender, receiver)).or_insert((0, 0)).1 += w;
    }
    let mut last: Option<(Rank, CallIdx)> = None;
    for &(receiver, call, w, sender) in &late {
        if last == Some((receiver, call)) {
            continue; // a smaller wait of the same call
        }
        last = Some((receiver, call));
        acc.add(trace, receiver, call, LS, w);
        pairs.entry((sender, receiver)).or_insert((0, 0)).0 += w;
    }

    // Collectives.
    let inst = Instances::of_sequence(trace, sequence);
    for i in 0..inst.len() {
        let members = inst.members(i);
        let times: Vec<(u64, u64)> = members
            .iter()
            .map(|&(r, c, _)| call_times(trace, r, c).unwrap_or((0, 0)))
            .collect();
        use CollectiveOp::*;
        let op = inst.op[i];
        match op {
            Barrier | Allreduce | Allgather | Allgatherv | Alltoall | ReduceScatter | ReduceScatterBlock => {
                let what = if op == Barrier { BARRIER } else { NXN };
                let latest = times.iter().map(|t| t.0).max().unwrap_or(0);
                for (&(r, c, _), &(enter, exit)) in members.iter().zip(&times) {
                    acc.add(trace, r, c, what, idle(enter, exit, latest));
                }
            }
            Bcast | Scatter | Scatterv => {
                let root = inst.root[i];
                let Some(k) = members.iter().position(|m| m.0 == root) else {
                    continue;
                };
                let root_enter = times[k].0;
                for (j, (&(r, c, _), &(enter, exit))) in members.iter().zip(&times).enumerate() {
                    if j != k {
                        acc.add(trace, r, c, LB, idle(enter, exit, root_enter));
                    }
                }
            }
            Reduce | Gather | Gatherv => {
                let root = inst.root[i];
                let Some(k) = members.iter().position(|m| m.0 == root) else {
                    continue;
                };
                let first = times
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != k)
                    .map(|(_, t)| t.0)
                    .min();
                if let Some(first) = first {
                    let (enter, exit) = times[k];
                    acc.add(trace, root, members[k].1, ER, idle(enter, exit, first));
                }
            }
            _ => {}
        }
    }

    assemble(trace, &acc.by_rank, &acc.by_func, pairs, clock_violations)
}

/// Time spent asking whether a message has arrived, which Scalasca's wait states do not see: a
/// program that waits by polling (`MPI_Iprobe` in a loop, then `MPI_Recv` of what it found, as
/// Ray's RayPlatform does) never blocks in a receive, so its waiting is no late sender; it is
/// spread over these calls and the computation between them. Counted: every non-blocking probe
/// (`MPI_Iprobe`, `MPI_Improbe`; the model keeps no flag, so a probe that found a message counts
/// too: one per received message at most) and every `MPI_Test*` call that completed no
/// point-to-point operation (`MPI_Request_get_status`, which completes nothing, always), on ranks without non-blocking collectives (whose completions the
/// model does not record, so a test completing one cannot be told from an empty one).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Polling {
    /// Such calls over all ranks.
    pub calls: u64,
    /// Seconds inside them over all ranks.
    pub seconds: f64,
    /// Seconds inside them per world rank (every rank, in order).
    pub by_rank: Vec<f64>,
}

/// The polling calls of `trace` ([`Polling`]).
pub fn polling(trace: &Trace) -> Polling {
    polling_ns(trace, 0..trace.ranks.len() as Rank).into()
}

/// [`Polling`] in ns, of some ranks only: what one process of the MPI mode measures on the
/// ranks it owns; parts add up ([`PollingNs::add`]) to the whole trace's.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PollingNs {
    /// Polling calls of the ranks measured.
    pub calls: u64,
    /// ns inside them per world rank (every rank of the trace; 0 for ranks not measured).
    pub by_rank: Vec<u64>,
}

impl PollingNs {
    /// Add another part's counts (same number of ranks).
    pub fn add(&mut self, other: &PollingNs) {
        self.calls += other.calls;
        if self.by_rank.len() < other.by_rank.len() {
            self.by_rank.resize(other.by_rank.len(), 0);
        }
        for (a, b) in self.by_rank.iter_mut().zip(&other.by_rank) {
            *a += b;
        }
    }
}

impl From<PollingNs> for Polling {
    fn from(p: PollingNs) -> Polling {
        Polling {
            calls: p.calls,
            seconds: secs(p.by_rank.iter().sum()),
            by_rank: p.by_rank.iter().map(|&ns| secs(ns)).collect(),
        }
    }
}

/// The polling calls of the world ranks in `ranks` ([`Polling`], in ns).
pub fn polling_ns(trace: &Trace, ranks: std::ops::Range<Rank>) -> PollingNs {
    let roles = roles(trace);
    let mut out = PollingNs {
        calls: 0,
        by_rank: vec![0; trace.ranks.len()],
    };
    for (r, rt) in trace.ranks.iter().enumerate() {
        if !ranks.contains(&(r as Rank)) {
            continue;
        }
        let polls = polls(trace, &roles, rt);
        let mut ns = 0u64;
        for (i, _) in polls.iter().enumerate().filter(|(_, &p)| p) {
            out.calls += 1;
            ns += rt.calls.duration.get(i).unwrap_or(0);
        }
        out.by_rank[r] = ns;
    }
    out
}

/// The role of function `f` by [`roles`].
pub(crate) fn role_of(roles: &[Role], f: u32) -> Option<Role> {
    roles.get(f as usize).copied()
}

/// Per call of `rt`: whether it polled ([`Polling`]) — a non-blocking probe, or a test that
/// completed no point-to-point operation on a rank without non-blocking collectives.
pub(crate) fn polls(trace: &Trace, roles: &[Role], rt: &tracelogic_model::RankTrace) -> Vec<bool> {
    let c = &rt.calls;
    let tests_count = !rt.collectives.call.iter().any(|&k| {
        c.func
            .get(k as usize)
            .is_some_and(|&f| is_nonblocking_collective(trace.functions.name(f)))
    });
    let mut completing = vec![false; c.len()];
    for done in rt.p2p.completes() {
        if let Some(x) = completing.get_mut(done as usize) {
            *x = true;
        }
    }
    completing
        .iter()
        .enumerate()
        .map(|(i, &done)| match c.func.get(i).and_then(|&f| role_of(roles, f)) {
            Some(Role::NonblockingProbe) => true,
            Some(Role::Test) => tests_count && !done,
            _ => false,
        })
        .collect()
}

/// The probe that found the message whose receive call `rpost` posts: the call right before
/// it (status reads such as `MPI_Get_count` between them allowed), when that is a probe,
/// blocking or not. The late sender of a blocking probe and the critical path's probe edges
/// both start here.
pub(crate) fn probe_before(roles: &[Role], calls: &tracelogic_model::Calls, rpost: CallIdx) -> Option<(CallIdx, Role)> {
    let role = |call: CallIdx| calls.func.get(call as usize).and_then(|&f| role_of(roles, f));
    let mut q = rpost;
    while q > 0 && role(q - 1) == Some(Role::StatusRead) {
        q -= 1;
    }
    let probe = q.checked_sub(1)?;
    match role(probe)? {
        r @ (Role::BlockingProbe | Role::NonblockingProbe) => Some((probe, r)),
        _ => None,
    }
}

/// The wait states of one message ([`message_wait`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct MessageWait {
    /// Late sender: the receive's completing call and how long it waited (> 0 ns) before the
    /// send began.
    pub late_sender: Option<(CallIdx, u64)>,
    /// Late receiver: the send's blocking completion call and how long it waited before the
    /// receive was posted (may be 0: the call still counts as reaching past the receive).
    pub late_receiver: Option<(CallIdx, u64)>,
    /// The send began after the receive completed.
    pub clock_violation: bool,
}

/// Late-sender and late-receiver wait of message `m` (Scalasca's definitions, module
/// documentation); `None` when its operations are not in the trace. The report and the
/// timeline's message details both come from here.
pub(crate) fn message_wait(trace: &Trace, roles: &[Role], m: &tracelogic_model::Message) -> Option<MessageWait> {
    let role_of = |rank: Rank, call: CallIdx| {
        trace.ranks[rank as usize]
            .calls
            .func
            .get(call as usize)
            .and_then(|&f| roles.get(f as usize).copied())
    };
    let mut out = MessageWait::default();
    let (s, r) = (&trace.ranks[m.sender as usize], &trace.ranks[m.receiver as usize]);
    let (so, ro) = (m.send_op as usize, m.recv_op as usize);
    let (Some(&spost), Some(&rpost)) = (s.p2p.post.get(so), r.p2p.post.get(ro)) else {
        return None;
    };
    let (Some((send_enter, _)), Some((recv_post_enter, _))) =
        (call_times(trace, m.sender, spost), call_times(trace, m.receiver, rpost))
    else {
        return None;
    };
    // Late sender, at the receive's completion (or the probe before it).
    let rc = r.p2p.get_complete(ro).unwrap_or(NOT_COMPLETED);
    if let Some((_, exit)) = (rc != NOT_COMPLETED)
        .then(|| call_times(trace, m.receiver, rc))
        .flatten()
    {
        out.clock_violation = send_enter > exit;
    }
    out.late_sender = late_sender(trace, roles, m.receiver, rpost, rc, send_enter);
    // Late receiver, at the send's completion.
    let sc = s.p2p.get_complete(so).unwrap_or(NOT_COMPLETED);
    if sc != NOT_COMPLETED {
        let blocking = match role_of(m.sender, sc) {
            Some(Role::BlockingSend) => sc == spost,
            Some(Role::WaitOne) => true,
            _ => false,
        };
        if let (true, Some((enter, exit))) = (blocking, call_times(trace, m.sender, sc)) {
            if exit > recv_post_enter {
                out.late_receiver = Some((sc, recv_post_enter.saturating_sub(enter)));
            }
        }
    }
    Some(out)
}

/// Where and how long (ns, > 0) the receive of a message whose send was entered at
/// `send_enter` waited for it (Scalasca's late sender): at its completing call `rc` when that
/// blocks (a receive, `MPI_Wait*`), else at a blocking probe (`MPI_Probe`, `MPI_Mprobe`) right
/// before its posting call `rpost` (but for status reads between them) — the probe found the
/// message and waited for it. The serial report and the MPI mode's parts both ask here.
pub(crate) fn late_sender(
    trace: &Trace,
    roles: &[Role],
    receiver: Rank,
    rpost: CallIdx,
    rc: CallIdx,
    send_enter: u64,
) -> Option<(CallIdx, u64)> {
    let calls = &trace.ranks[receiver as usize].calls;
    let role = |call: CallIdx| calls.func.get(call as usize).and_then(|&f| role_of(roles, f));
    let waited = |call: CallIdx| {
        let (enter, exit) = call_times(trace, receiver, call)?;
        Some((call, idle(enter, exit, send_enter))).filter(|w| w.1 > 0)
    };
    if rc != NOT_COMPLETED {
        let blocks = match calls.kind.get(rc as usize).copied() {
            Some(CallKind::Recv | CallKind::SendRecv) => true,
            Some(CallKind::Completion) => matches!(role(rc), Some(Role::WaitOne | Role::WaitMany)),
            _ => false,
        };
        if let Some(w) = blocks.then(|| waited(rc)).flatten() {
            return Some(w);
        }
    }
    match probe_before(roles, calls, rpost)? {
        (probe, Role::BlockingProbe) => waited(probe),
        _ => None,
    }
}

/// Late-sender and late-receiver wait (ns) of each of `messages` (0 when it has none), as
/// [`wait_states`] counts them per message (before a call waiting for several messages keeps
/// only the longest).
pub fn message_waits<'a>(
    trace: &Trace,
    messages: impl IntoIterator<Item = &'a tracelogic_model::Message>,
) -> Vec<(u64, u64)> {
    let roles = roles(trace);
    messages
        .into_iter()
        .map(|m| {
            message_wait(trace, &roles, m).map_or((0, 0), |w| {
                (w.late_sender.map_or(0, |x| x.1), w.late_receiver.map_or(0, |x| x.1))
            })
        })
        .collect()
}

/// The report of measured ns per rank and per function id (the six states in report order),
/// (late sender, late receiver) ns per (sender, receiver) and the clock violations: totals,
/// functions with any wait by decreasing total, pairs by sender then receiver. The serial
/// analysis and the parallel replay's combination (`partial_waits`) both end here, so their
/// reports are laid out alike.
pub(crate) fn assemble(
    trace: &Trace,
    by_rank: &[[u64; 6]],
    by_func: &[[u64; 6]],
    pairs: HashMap<(Rank, Rank), (u64, u64)>,
    clock_violations: u64,
) -> WaitReport {
    let mut totals = [0u64; 6];
    for row in by_rank {
        for k in 0..6 {
            totals[k] += row[k];
        }
    }
    let mut by_function: Vec<FunctionWaits> = by_func
        .iter()
        .enumerate()
        .filter(|(_, row)| row.iter().any(|&v| v > 0))
        .map(|(f, row)| FunctionWaits {
            name: trace.functions.name(f as u32).to_owned(),
            waits: waits_of(row),
        })
        .collect();
    by_function.sort_by(|a, b| {
        b.waits
            .total_s()
            .total_cmp(&a.waits.total_s())
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut by_pair: Vec<PairWait> = pairs
        .into_iter()
        .map(|((sender, receiver), (ls, lr))| PairWait {
            sender,
            receiver,
            late_sender_s: secs(ls),
            late_receiver_s: secs(lr),
        })
        .collect();
    by_pair.sort_by_key(|p| (p.sender, p.receiver));
    WaitReport {
        totals: waits_of(&totals),
        by_rank: by_rank
            .iter()
            .enumerate()
            .map(|(r, row)| RankWaits {
                rank: r as Rank,
                waits: waits_of(row),
            })
            .collect(),
        by_function,
        by_pair,
        clock_violations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonblocking_names() {
        assert!(is_nonblocking_collective("MPI_Iallreduce"));
        assert!(is_nonblocking_collective("MPI_Ibarrier"));
        assert!(is_nonblocking_collective("MPI_Allreduce_init"));
        assert!(!is_nonblocking_collective("MPI_Allreduce"));
        assert!(!is_nonblocking_collective("MPI_Barrier"));
    }
}
