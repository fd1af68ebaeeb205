//! Wait states computed by parts of the ranks, as Scalasca's parallel replay does
//! (`tracelogic-mpi waits`, docs/mpi.md): every process measures the waits of its ranks and
//! rank 0 adds them up into [`wait_states_matched`](crate::waits::wait_states_matched)'s report.
//!
//! * **Point to point.** The messages are matched by parts (the sends' envelopes, carrying the
//!   entry time of the posting call, routed to the receiver's process). The receiver's process
//!   measures the late senders of its ranks' receives ([`WaitsAcc::receives`]) and answers each
//!   sender's process with the entry time of the receive's posting call ([`Reply`]), from which
//!   that process measures its ranks' late receivers ([`WaitsAcc::replies`]).
//! * **Collectives.** Each process sums up its ranks' records of every instance (the `k`-th
//!   blocking collective of a member on a communicator): latest entry, the two earliest entries,
//!   the root's entry ([`instance_parts`]); every process gets every process's summaries and
//!   measures its members' waits from them ([`WaitsAcc::collectives`]).
//!
//! Every quantity is a sum of integer nanoseconds kept where it is measured, so the parts add
//! up to the serial report bit for bit, with two exceptions the parts detect instead of
//! guessing ([`WaitsAcc::ambiguous`]): a call completing several late receives whose largest
//! waits tie between different senders (the serial analysis attributes the pair by its sort),
//! and collective records of one instance that disagree on the operation or the root (the
//! serial analysis takes the lowest rank's). `tracelogic-mpi` then computes the report serially.

use crate::waits::{is_nonblocking_collective, late_sender, roles, Role, WaitReport, BARRIER, ER, LB, LR, LS, NXN};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ops::Range;
use tracelogic_model::matching::NO_TIME;
use tracelogic_model::{CallIdx, CollectiveOp, CommId, Message, Rank, Trace, NOT_COMPLETED};

/// `min(until, exit) − enter`, or 0.
fn idle(enter: u64, exit: u64, until: u64) -> u64 {
    until.min(exit).saturating_sub(enter)
}

fn call_times(trace: &Trace, rank: Rank, call: CallIdx) -> Option<(u64, u64)> {
    let c = &trace.ranks.get(rank as usize)?.calls;
    Some((c.enter.get(call as usize)?, c.get_exit(call as usize)?))
}

/// The answer of a receive's process to its send's process: the entry time of the receive's
/// posting call, for the late-receiver rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// Sending world rank.
    pub sender: Rank,
    /// Receiving world rank.
    pub receiver: Rank,
    /// Index into the sender's operations.
    pub send_op: u32,
    /// Entry time of the receive's posting call.
    pub recv_enter: u64,
}

/// One process's view of one collective instance: what its members' records say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstancePart {
    /// Communicator.
    pub comm: CommId,
    /// The instance's number on the communicator (per member, in call order).
    pub seq: u32,
    /// The lowest member rank of this part, and its record's operation and root.
    pub first: Rank,
    /// Operation of that record.
    pub op: CollectiveOp,
    /// Root of that record.
    pub root: Rank,
    /// Whether every member of this part records the same operation and root.
    pub agree: bool,
    /// Latest entry of the part's members.
    pub latest: u64,
    /// The two earliest entries with their ranks (`Rank::MAX` when fewer members).
    pub earliest: [(u64, Rank); 2],
    /// Entry of the member whose rank is the root its record names, if any.
    pub root_enter: Option<u64>,
}

/// Waits measured by one process, in ns ([`WaitsAcc::finish`] gives the [`WaitsPart`]).
#[derive(Clone)]
pub struct WaitsAcc {
    ranks: Range<Rank>,
    by_rank: Vec<[u64; 6]>,
    by_func: Vec<[u64; 6]>,
    /// (late sender, late receiver) ns per (sender, receiver): late senders measured at the
    /// receiver's process, late receivers at the sender's.
    pairs: HashMap<(Rank, Rank), (u64, u64)>,
    clock_violations: u64,
    /// True when the parts cannot reproduce the serial report ([module docs](self)).
    pub ambiguous: bool,
    roles: Vec<Role>,
}

/// The waits of some ranks, to be combined with [`combine_waits`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitsPart {
    /// The ranks measured.
    pub ranks: Range<Rank>,
    /// Waits per rank of the part, ns per state.
    pub by_rank: Vec<[u64; 6]>,
    /// Waits per function id, ns per state.
    pub by_func: Vec<[u64; 6]>,
    /// (sender, receiver, late-sender ns, late-receiver ns) of the part's receivers' late
    /// senders and its senders' late receivers.
    pub pairs: Vec<(Rank, Rank, u64, u64)>,
    /// Clock violations of the part's receives.
    pub clock_violations: u64,
    /// Time in MPI calls of the part's ranks, ns.
    pub mpi_ns: u64,
    /// True when the parts cannot reproduce the serial report.
    pub ambiguous: bool,
}

impl WaitsAcc {
    /// Nothing measured yet for the ranks `ranks` of `trace`.
    pub fn new(trace: &Trace, ranks: Range<Rank>) -> WaitsAcc {
        WaitsAcc {
            by_rank: vec![[0; 6]; ranks.len()],
            ranks,
            by_func: vec![[0; 6]; trace.functions.len()],
            pairs: HashMap::new(),
            clock_violations: 0,
            ambiguous: false,
            roles: roles(trace),
        }
    }

    fn add(&mut self, trace: &Trace, rank: Rank, call: CallIdx, what: usize, ns: u64) {
        if ns == 0 {
            return;
        }
        self.by_rank[(rank - self.ranks.start) as usize][what] += ns;
        if let Some(&f) = trace.ranks[rank as usize].calls.func.get(call as usize) {
            if let Some(row) = self.by_func.get_mut(f as usize) {
                row[what] += ns;
            }
        }
    }

    fn role_of(&self, trace: &Trace, rank: Rank, call: CallIdx) -> Option<Role> {
        trace.ranks[rank as usize]
            .calls
            .func
            .get(call as usize)
            .and_then(|&f| self.roles.get(f as usize).copied())
    }

    /// The late senders of the messages received by this part's ranks (`received`: each with
    /// the entry time of its send's posting call, [`NO_TIME`] when unknown), and the replies
    /// to their senders' processes (one per message both of whose posting calls are known).
    pub fn receives(&mut self, trace: &Trace, received: &[(Message, u64)]) -> Vec<Reply> {
        let mut late: Vec<(Rank, CallIdx, u64, Rank)> = Vec::new();
        let mut replies = Vec::with_capacity(received.len());
        for &(m, send_enter) in received {
            let r = &trace.ranks[m.receiver as usize];
            let ro = m.recv_op as usize;
            let Some(&rpost) = r.p2p.post.get(ro) else { continue };
            let Some((recv_post_enter, _)) = call_times(trace, m.receiver, rpost) else {
                continue;
            };
            if send_enter == NO_TIME {
                continue;
            }
            replies.push(Reply {
                sender: m.sender,
                receiver: m.receiver,
                send_op: m.send_op,
                recv_enter: recv_post_enter,
            });
            let rc = r.p2p.get_complete(ro).unwrap_or(NOT_COMPLETED);
            if let Some((_, exit)) = (rc != NOT_COMPLETED)
                .then(|| call_times(trace, m.receiver, rc))
                .flatten()
            {
                if send_enter > exit {
                    self.clock_violations += 1;
                }
            }
            if let Some((call, w)) = late_sender(trace, &self.roles, m.receiver, rpost, rc, send_enter) {
                late.push((m.receiver, call, w, m.sender));
            }
        }
        // The largest wait of each call, once, attributed to its sender; a tie between
        // different senders is left to the serial analysis (module docs).
        late.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(b.2.cmp(&a.2)).then(a.3.cmp(&b.3)));
        let mut last: Option<(Rank, CallIdx, u64, Rank)> = None;
        for &(receiver, call, w, sender) in &late {
            if let Some((lr, lc, lw, ls)) = last {
                if (lr, lc) == (receiver, call) {
                    if lw == w && ls != sender {
                        self.ambiguous = true;
                    }
                    continue;
                }
            }
            last = Some((receiver, call, w, sender));
            self.add(trace, receiver, call, LS, w);
            self.pairs.entry((sender, receiver)).or_insert((0, 0)).0 += w;
        }
        replies
    }

    /// The late receivers of this part's ranks' sends, from the replies of their receivers'
    /// processes.
    pub fn replies(&mut self, trace: &Trace, replies: &[Reply]) {
        for rep in replies {
            let s = &trace.ranks[rep.sender as usize];
            let so = rep.send_op as usize;
            let Some(&spost) = s.p2p.post.get(so) else { continue };
            let sc = s.p2p.get_complete(so).unwrap_or(NOT_COMPLETED);
            if sc == NOT_COMPLETED {
                continue;
            }
            let blocking = match self.role_of(trace, rep.sender, sc) {
                Some(Role::BlockingSend) => sc == spost,
                Some(Role::WaitOne) => true,
                _ => false,
            };
            if let (true, Some((enter, exit))) = (blocking, call_times(trace, rep.sender, sc)) {
                if exit > rep.recv_enter {
                    let w = rep.recv_enter.saturating_sub(enter);
                    self.add(trace, rep.sender, sc, LR, w);
                    if w > 0 {
                        self.pairs.entry((rep.sender, rep.receiver)).or_insert((0, 0)).1 += w;
                    }
                }
            }
        }
    }

    /// The waits of this part's members of every collective instance, from every process's
    /// [`instance_parts`] (in process order).
    pub fn collectives(&mut self, trace: &Trace, all: &[Vec<InstancePart>]) {
        // Every instance's parts together: (first rank, op, root), latest entry, earliest two,
        // root entry.
        struct Whole {
            first: Rank,
            op: CollectiveOp,
            root: Rank,
            agree: bool,
            latest: u64,
            earliest: Vec<(u64, Rank)>,
            root_enters: Vec<(Rank, u64)>,
        }
        let mut whole: HashMap<(CommId, u32), Whole> = HashMap::new();
        for part in all.iter().flatten() {
            let w = whole.entry((part.comm, part.seq)).or_insert(Whole {
                first: part.first,
                op: part.op,
                root: part.root,
                agree: true,
                latest: 0,
                earliest: Vec::new(),
                root_enters: Vec::new(),
            });
            if (part.op, part.root) != (w.op, w.root) || !part.agree {
                w.agree = false;
            }
            if part.first < w.first {
                (w.first, w.op, w.root) = (part.first, part.op, part.root);
            }
            w.latest = w.latest.max(part.latest);
            w.earliest.extend(part.earliest.iter().filter(|e| e.1 != Rank::MAX));
            if let Some(e) = part.root_enter {
                w.root_enters.push((part.root, e));
            }
        }
        for w in whole.values() {
            if !w.agree {
                self.ambiguous = true;
            }
        }
        for (key, members) in own_records(trace, self.ranks.clone()) {
            let Some(w) = whole.get(&key) else { continue };
            use CollectiveOp::*;
            match w.op {
                Barrier | Allreduce | Allgather | Allgatherv | Alltoall | ReduceScatter | ReduceScatterBlock => {
                    let what = if w.op == Barrier { BARRIER } else { NXN };
                    for &(r, c, (enter, exit), _, _) in &members {
                        self.add(trace, r, c, what, idle(enter, exit, w.latest));
                    }
                }
                Bcast | Scatter | Scatterv => {
                    let Some(&(_, root_enter)) = w.root_enters.iter().find(|(r, _)| *r == w.root) else {
                        continue;
                    };
                    for &(r, c, (enter, exit), _, _) in &members {
                        if r != w.root {
                            self.add(trace, r, c, LB, idle(enter, exit, root_enter));
                        }
                    }
                }
                Reduce | Gather | Gatherv => {
                    let Some(&(r, c, (enter, exit), _, _)) = members.iter().find(|m| m.0 == w.root) else {
                        continue;
                    };
                    let first = w.earliest.iter().filter(|e| e.1 != w.root).map(|e| e.0).min();
                    if let Some(first) = first {
                        self.add(trace, r, c, ER, idle(enter, exit, first));
                    }
                }
                _ => {}
            }
        }
    }

    /// What was measured, with the part's time in MPI calls.
    pub fn finish(self, trace: &Trace) -> WaitsPart {
        let mpi_ns = trace
            .ranks
            .iter()
            .filter(|rt| self.ranks.contains(&rt.rank))
            .flat_map(|r| r.calls.duration.iter())
            .sum();
        let mut pairs: Vec<(Rank, Rank, u64, u64)> = self
            .pairs
            .into_iter()
            .map(|((s, r), (ls, lr))| (s, r, ls, lr))
            .collect();
        pairs.sort_unstable();
        WaitsPart {
            ranks: self.ranks,
            by_rank: self.by_rank,
            by_func: self.by_func,
            pairs,
            clock_violations: self.clock_violations,
            mpi_ns,
            ambiguous: self.ambiguous,
        }
    }
}

/// A member's record of a collective instance: rank, call, (enter, exit), operation, root.
type Record = (Rank, CallIdx, (u64, u64), CollectiveOp, Rank);

/// The blocking collective records of the ranks `ranks` of `trace` by instance (communicator,
/// number), members in rank order, instances in the order they are first met.
fn own_records(trace: &Trace, ranks: Range<Rank>) -> Vec<((CommId, u32), Vec<Record>)> {
    let nonblocking: Vec<bool> = trace
        .functions
        .names()
        .iter()
        .map(|n| is_nonblocking_collective(n))
        .collect();
    let mut index: HashMap<(CommId, u32), usize> = HashMap::new();
    let mut out: Vec<((CommId, u32), Vec<Record>)> = Vec::new();
    let mut seq: HashMap<CommId, u32> = HashMap::new();
    for rt in trace.ranks.iter().filter(|rt| ranks.contains(&rt.rank)) {
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
            let k = *s;
            *s += 1;
            if nonblocking.get(f as usize).copied().unwrap_or(false) {
                continue;
            }
            let key = (co.comm[i], k);
            let at = *index.entry(key).or_insert_with(|| {
                out.push((key, Vec::new()));
                out.len() - 1
            });
            let times = call_times(trace, rt.rank, call).unwrap_or((0, 0));
            out[at].1.push((rt.rank, call, times, co.op[i], co.root[i]));
        }
    }
    out
}

/// This process's summaries of the collective instances its ranks `ranks` take part in, for
/// every process ([`WaitsAcc::collectives`]).
pub fn instance_parts(trace: &Trace, ranks: Range<Rank>) -> Vec<InstancePart> {
    own_records(trace, ranks)
        .into_iter()
        .map(|((comm, seq), members)| {
            // Members are pushed rank by rank: the first is the lowest.
            let &(first, _, _, op, root) = &members[0];
            let mut earliest = [(u64::MAX, Rank::MAX); 2];
            for &(r, _, (enter, _), _, _) in &members {
                if (enter, r) < earliest[0] {
                    earliest[1] = earliest[0];
                    earliest[0] = (enter, r);
                } else if (enter, r) < earliest[1] {
                    earliest[1] = (enter, r);
                }
            }
            InstancePart {
                comm,
                seq,
                first,
                op,
                root,
                agree: members.iter().all(|m| (m.3, m.4) == (op, root)),
                latest: members.iter().map(|m| m.2 .0).max().unwrap_or(0),
                earliest,
                root_enter: members.iter().find(|m| m.0 == m.4).map(|m| m.2 .0),
            }
        })
        .collect()
}

/// The wait report of `trace` (its definitions) from `parts` covering each rank once, in rank
/// order: what [`wait_states_matched`](crate::waits::wait_states_matched) gives on the whole
/// trace (unless a part is [`WaitsPart::ambiguous`]), and the time in MPI calls over all ranks
/// in ns.
pub fn combine_waits(trace: &Trace, parts: &[WaitsPart]) -> (WaitReport, u64) {
    let mut by_rank: Vec<[u64; 6]> = Vec::with_capacity(trace.ranks.len());
    let mut by_func = vec![[0u64; 6]; trace.functions.len()];
    let mut pairs: HashMap<(Rank, Rank), (u64, u64)> = HashMap::new();
    let mut clock_violations = 0;
    let mut mpi_ns = 0u64;
    for p in parts {
        by_rank.extend(&p.by_rank);
        for (a, b) in by_func.iter_mut().zip(&p.by_func) {
            for k in 0..6 {
                a[k] += b[k];
            }
        }
        for &(s, r, ls, lr) in &p.pairs {
            let e = pairs.entry((s, r)).or_insert((0, 0));
            e.0 += ls;
            e.1 += lr;
        }
        clock_violations += p.clock_violations;
        mpi_ns += p.mpi_ns;
    }
    // A pair's late senders are measured at its receiver's process, its late receivers at its
    // sender's: both were summed above, one entry per pair.
    let report = crate::waits::assemble(trace, &by_rank, &by_func, pairs, clock_violations);
    (report, mpi_ns)
}
