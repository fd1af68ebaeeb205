//! The replay itself: extended Lamport clocks over K network configurations at once.
//!
//! Every rank owns six vectors of K clocks (predicted time, its four terms, and when its network
//! interface is free). A worklist advances one rank at a time until it needs something not yet
//! known (a message whose send has not been replayed, a collective whose members have not all
//! arrived), parks it, and wakes it exactly when that input appears. Every call is visited once
//! and emits the O(K) work it needs as configuration-free instructions ([`exec`]), executed in
//! straight loops over `f64` slices, so the cost is O(calls) for the traversal, once for all
//! configurations, plus O(calls × K) for the clocks.

use super::collective::schedule;
use super::network::{Configuration, MessageTable};
use super::parts::Note;
use super::{Breakdown, ConfigurationResult, DroppedCalls, RankBreakdown, ReplayWarnings};
use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use tracelogic_model::{CallKind, CollectiveOp, CommId, Message, P2pDir, Rank, Trace, NOT_COMPLETED};

mod clock;
mod dist;
mod exec;
mod ops;
mod results;
mod shares;
mod stream;
use clock::*;
pub(super) use dist::Dist;
use exec::{Clocks, Instr, Out, Slots, CHUNK};
pub(super) use results::results;
pub use shares::replay_configurations;
#[cfg(test)]
use shares::{replay_in_shares, shares_of};
pub use stream::{shares, traverse, ShareExecutor, Traversal};

const CLOCK: usize = 0;
const COMPUTE: usize = 1;
const WAIT: usize = 2;
const LATENCY: usize = 3;
const BANDWIDTH: usize = 4;
/// When the rank's network interface has injected everything posted so far.
const NIC: usize = 5;
pub(super) const ROWS: usize = 6;
const NONE: u32 = u32::MAX;
/// Calls a rank replays before it goes to the back of the worklist, so a rank that only sends
/// cannot run far ahead of its receivers and fill the pool with messages in flight.
const QUANTUM: usize = 1024;

/// Bytes that enter the β term for an `n`-byte message: `n` under Hockney's model, a
/// message table's effective bytes otherwise (the same for every configuration).
fn effective(table: Option<&MessageTable>, bytes: f64) -> f64 {
    match table {
        Some(t) => t.effective_bytes(bytes),
        None => bytes,
    }
}

/// What a parked rank waits for.
#[derive(Clone, Copy, PartialEq)]
enum Block {
    Running,
    /// The send `(sender, op)` feeding the current receive has not been replayed yet.
    Recv(Rank, u32),
    /// Not all members reached the collective instance.
    Collective((CommId, u32)),
}

/// Where a rank is inside its current call.
#[derive(Clone, Copy, PartialEq)]
enum Stage {
    Enter,
    Collectives,
    WaitCollective((CommId, u32)),
    Post,
    Complete,
}

/// The progress stage of a replay ([`crate::progress`]).
const REPLAYING: &str = "replaying the calls on the model networks";

struct Cursor {
    call: usize,
    post: usize,
    complete: usize,
    coll: usize,
    stage: Stage,
    /// The call posted, completed or joined something the network model prices.
    modelled: bool,
    /// Give up on the receive the rank is parked on (its send never comes).
    force_recv: bool,
    block: Block,
    done: bool,
}

/// One collective instance: the `seq`-th collective on a communicator.
struct Instance {
    start: u32,
    arrived: u32,
    /// Members of the communicator (the collective's cost depends on it).
    expected: u32,
    /// Members replayed here: all of them in a serial replay.
    local_expected: u32,
    /// Other processes with members (replay by parts), whose partial arrivals complete it.
    parts_expected: u32,
    /// Partial arrivals received from those processes.
    parts_in: u32,
    /// This process's arrivals were sent to the others.
    sent: bool,
    consumed: u32,
    bytes: u64,
    op: CollectiveOp,
    waiters: Vec<Rank>,
    complete: bool,
    forced: bool,
    steps: f64,
    effective_bytes: f64,
}

impl Instance {
    /// A collective instance nobody has arrived at yet, its clocks pooled at `start`.
    fn new(start: u32, expected: u32, local_expected: u32, parts_expected: u32, op: CollectiveOp) -> Instance {
        Instance {
            start,
            arrived: 0,
            expected,
            local_expected,
            parts_expected,
            parts_in: 0,
            sent: false,
            consumed: 0,
            bytes: 0,
            op,
            waiters: Vec::new(),
            complete: false,
            forced: false,
            steps: 0.0,
            effective_bytes: 0.0,
        }
    }
}

/// Per-rank indexes built once before the replay.
struct Plan {
    /// Calls replayed: the shortest of the call columns (they are equal in a well-formed trace).
    calls: usize,
    /// Point-to-point ops in posting order.
    post_order: Vec<u32>,
    /// Ops that complete, in completion-call order.
    complete_order: Vec<u32>,
    /// Collective records in call order.
    coll_order: Vec<u32>,
    /// For a send op: the receiver it feeds (NONE if unmatched).
    send_to: Vec<(Rank, u32)>,
    /// For a receive op: the send that feeds it (NONE if unmatched).
    recv_from: Vec<(Rank, u32)>,
}

fn sorted_by<F: Fn(u32) -> u32>(n: usize, key: F) -> Vec<u32> {
    ordered((0..n as u32).map(|i| (key(i), i)))
}

/// The indexes of `(key, index)` pairs, stably sorted by key: each key decoded once, and no
/// sort at all when they come in order (as a trace's posting and completing calls mostly do).
fn ordered(pairs: impl Iterator<Item = (u32, u32)>) -> Vec<u32> {
    let mut v: Vec<(u32, u32)> = pairs.collect();
    if !v.is_sorted_by_key(|p| p.0) {
        v.sort_by_key(|p| p.0);
    }
    // Not `into_iter().collect()`, which would keep the pairs' allocation (twice the size).
    let mut order = Vec::with_capacity(v.len());
    order.extend(v.iter().map(|p| p.1));
    order
}

pub(super) struct Engine<'a> {
    trace: &'a Trace,
    /// The ranks replayed here (all of them in a serial replay); `state` holds theirs only.
    owned: Range<Rank>,
    /// The exchange with the other processes in a replay by parts.
    pub(super) dist: Option<Dist>,
    /// Matched messages counted here: those whose receiver is replayed here (or whose sender
    /// is, when the receiver is no rank of the trace).
    received: u64,
    /// What a selection dropped; `None` when it dropped nothing the replay must account for.
    dropped: Option<&'a DroppedCalls>,
    /// Per rank: seconds of dropped communication replayed at their recorded duration (the same
    /// under every configuration, so one number per rank).
    not_replayed: Vec<f64>,
    table: Option<&'a MessageTable>,
    /// Where the clock arithmetic goes (executed at once, or gathered for executors).
    out: Out,
    /// Which pooled vectors are in use.
    slots: Slots,
    /// The ranks' indexes, built once before the replay.
    plans: Vec<Plan>,
    /// Per rank, for a send op: its pooled send-time vector once posted, else NONE.
    send_slot: Vec<Vec<u32>>,
    cursors: Vec<Cursor>,
    coll_seq: HashMap<(Rank, CommId), u32>,
    instances: HashMap<(CommId, u32), Instance>,
    comm_sizes: Vec<u32>,
    worklist: VecDeque<Rank>,
    warnings: ReplayWarnings,
}

impl<'a> Engine<'a> {
    /// An engine replaying the ranks `owned` of `trace`, with the matched `messages` that have
    /// an end among them; `dist` when other processes replay the other ranks (then `configs`
    /// are executed as the engine goes). Without `dist` and without `configs` the engine only
    /// gathers the instructions for executors ([`Engine::run`]).
    pub(super) fn new(
        trace: &'a Trace,
        dropped: &'a DroppedCalls,
        messages: &[Message],
        configs: Option<&[Configuration]>,
        table: Option<&'a MessageTable>,
        owned: Range<Rank>,
        dist: Option<Dist>,
    ) -> Self {
        let n = trace.ranks.len();
        let mut received = 0;
        let mut warnings = ReplayWarnings::default();
        let mut plans: Vec<Plan> = trace
            .ranks
            .iter()
            .map(|rt| {
                let c = &rt.calls;
                let calls = [c.func.len(), c.kind.len(), c.enter.len(), c.duration.len()]
                    .into_iter()
                    .min()
                    .unwrap_or(0);
                let p = &rt.p2p;
                let ops = [p.post.len(), p.complete.len(), p.dir.len(), p.peer.len(), p.bytes.len()]
                    .into_iter()
                    .min()
                    .unwrap_or(0);
                let k = &rt.collectives;
                let colls = [
                    k.call.len(),
                    k.op.len(),
                    k.comm.len(),
                    k.bytes_sent.len(),
                    k.bytes_recv.len(),
                ]
                .into_iter()
                .min()
                .unwrap_or(0);
                let complete_order = ordered(
                    (0..ops as u32)
                        .map(|i| (p.complete(i as usize), i))
                        .filter(|&(c, _)| c != NOT_COMPLETED),
                );
                Plan {
                    calls,
                    post_order: sorted_by(ops, |i| p.post[i as usize]),
                    complete_order,
                    coll_order: sorted_by(colls, |i| k.call[i as usize]),
                    send_to: vec![(NONE, NONE); ops],
                    recv_from: vec![(NONE, NONE); ops],
                }
            })
            .collect();
        for m in messages {
            let (s, r) = (m.sender as usize, m.receiver as usize);
            // Each end is checked where it is replayed; a message is counted (and an invalid
            // one reported) by its receiver's process, or its sender's if the receiver is none.
            let (mine_s, mine_r) = (owned.contains(&m.sender), owned.contains(&m.receiver));
            let counted = if r < n {
                mine_r
            } else if s < n {
                mine_s
            } else {
                owned.contains(&0) || n == 0
            };
            received += u64::from(counted);
            let ok = s < n
                && r < n
                && (!mine_s
                    || ((m.send_op as usize) < plans[s].send_to.len()
                        && trace.ranks[s].p2p.dir[m.send_op as usize] == P2pDir::Send))
                && (!mine_r
                    || ((m.recv_op as usize) < plans[r].recv_from.len()
                        && trace.ranks[r].p2p.dir[m.recv_op as usize] == P2pDir::Recv));
            if !ok {
                if counted {
                    warnings.invalid_messages += 1;
                }
                continue;
            }
            if mine_s {
                plans[s].send_to[m.send_op as usize] = (m.receiver, m.recv_op);
            }
            if mine_r {
                plans[r].recv_from[m.recv_op as usize] = (m.sender, m.send_op);
            }
        }
        let comm_sizes = trace
            .comms
            .iter()
            .map(|c| {
                let mut members: Vec<Rank> = c.members.iter().copied().filter(|&m| (m as usize) < n).collect();
                members.sort_unstable();
                members.dedup();
                members.len().max(1) as u32
            })
            .collect();
        let out = match configs {
            Some(configs) => Out::Now(Clocks::new(configs, owned.len())),
            None => {
                debug_assert!(dist.is_none(), "a replay by parts executes as it goes");
                Out::Gather(Vec::with_capacity(CHUNK + 4 * QUANTUM))
            }
        };
        Engine {
            trace,
            owned: owned.clone(),
            dist,
            received,
            dropped: (!dropped.is_empty()).then_some(dropped),
            not_replayed: vec![0.0; n],
            table,
            out,
            slots: Slots::default(),
            send_slot: plans.iter().map(|p| vec![NONE; p.send_to.len()]).collect(),
            plans,
            cursors: (0..n)
                .map(|_| Cursor {
                    call: 0,
                    post: 0,
                    complete: 0,
                    coll: 0,
                    stage: Stage::Enter,
                    modelled: false,
                    force_recv: false,
                    block: Block::Running,
                    done: false,
                })
                .collect(),
            coll_seq: HashMap::new(),
            instances: HashMap::new(),
            comm_sizes,
            worklist: owned.collect(),
            warnings,
        }
    }

    /// Where rank `r` (one of `owned`) is in the clocks.
    fn at(&self, r: Rank) -> u32 {
        r - self.owned.start
    }

    /// Advance every rank that can until none can without what other processes send
    /// (replay by parts).
    pub(super) fn drain(&mut self) {
        while let Some(r) = self.worklist.pop_front() {
            self.advance_rank(r);
        }
    }

    /// The notes for each process gathered since the last call.
    pub(super) fn take_outbox(&mut self) -> Vec<Vec<Note>> {
        match &mut self.dist {
            Some(d) => {
                let n = d.outbox.len();
                std::mem::replace(&mut d.outbox, vec![Vec::new(); n])
            }
            None => Vec::new(),
        }
    }

    /// What another process's engine sent this one: the injection start of a send to one of
    /// its ranks, or the partial arrival of a collective instance its ranks take part in.
    pub(super) fn deliver(&mut self, note: Note) {
        match note {
            Note::Sent {
                sender,
                send_op,
                receiver,
                bytes,
                at,
            } => {
                if at.len() != self.out.now().k() || !self.owned.contains(&receiver) {
                    self.unreproducible(|| format!("a send of rank {sender} reached the wrong process"));
                    return;
                }
                let slot = self.slots.alloc(1);
                self.out.now().set_slot(slot, &at);
                if let Some(d) = &mut self.dist {
                    d.remote_sends.insert((sender, send_op), (slot, bytes));
                }
                if self.cursors[receiver as usize].block == Block::Recv(sender, send_op) {
                    self.cursors[receiver as usize].block = Block::Running;
                    self.worklist.push_back(receiver);
                }
            }
            Note::Arrived {
                comm,
                seq,
                op,
                bytes,
                start,
            } => {
                let key = (comm, seq);
                let (Some(&expected), Some(d)) = (self.comm_sizes.get(comm as usize), &self.dist) else {
                    self.unreproducible(|| format!("an instance of unknown communicator {comm} was exchanged"));
                    return;
                };
                if start.len() != self.out.now().k() {
                    self.unreproducible(|| "an exchanged collective arrival does not fit".into());
                    return;
                }
                let (local_expected, parts_expected) = (
                    d.local_members[comm as usize],
                    d.other_processes[comm as usize].len() as u32,
                );
                let inst = match self.instances.get_mut(&key) {
                    Some(inst) => {
                        self.out.now().max_slot(inst.start, &start);
                        inst
                    }
                    None => {
                        let slot = self.slots.alloc(1);
                        self.out.now().set_slot(slot, &start);
                        let start = slot;
                        self.instances.entry(key).or_insert(Instance::new(
                            start,
                            expected,
                            local_expected,
                            parts_expected,
                            op,
                        ))
                    }
                };
                let differs = inst.op != op;
                inst.bytes = inst.bytes.max(bytes);
                inst.parts_in += 1;
                let ready =
                    !inst.complete && inst.arrived >= inst.local_expected && inst.parts_in >= inst.parts_expected;
                if differs {
                    self.unreproducible(|| {
                        format!("the members of instance {seq} of communicator {comm} disagree on the operation")
                    });
                }
                if ready {
                    self.complete_instance(key, false);
                }
            }
        }
    }

    /// The lowest rank replayed here that has not finished, and whether it waits for a
    /// receive (else for a collective): once no process can advance, the serial replay breaks
    /// the lowest such rank's wait ([`Engine::run`]).
    pub(super) fn lowest_open(&self) -> Option<(Rank, bool)> {
        self.owned
            .clone()
            .find(|&r| !self.cursors[r as usize].done)
            .map(|r| (r, matches!(self.cursors[r as usize].block, Block::Recv(..))))
    }

    /// Give up rank `r`'s receive, as the serial replay does when nothing else can advance.
    pub(super) fn force_recv(&mut self, r: Rank) {
        self.warnings.unresolved_recvs += 1;
        let c = &mut self.cursors[r as usize];
        c.force_recv = true;
        c.block = Block::Running;
        self.worklist.push_back(r);
    }

    pub(super) fn unreproducible(&mut self, why: impl FnOnce() -> String) {
        if let Some(d) = &mut self.dist {
            d.unreproducible(why);
        }
    }

    /// Replay every rank to its end; an engine that gathers hands its instructions to `hand`
    /// (which empties the buffer) every [`CHUNK`] or so, in order, and at the end.
    pub(super) fn run(&mut self, hand: &mut dyn FnMut(&mut Vec<Instr>)) {
        let mut first_open = self.owned.start as usize;
        // Progress: calls replayed of the ranks replayed here, reported every 64 Ki calls.
        let owned = self.owned.start as usize..(self.owned.end as usize).min(self.plans.len());
        let total: u64 = self.plans[owned].iter().map(|p| p.calls as u64).sum();
        let (mut replayed, mut reported) = (0u64, 0u64);
        crate::progress::step(REPLAYING, 0, total);
        loop {
            while let Some(r) = self.worklist.pop_front() {
                let before = self.cursors[r as usize].call;
                self.advance_rank(r);
                replayed += self.cursors[r as usize].call.saturating_sub(before) as u64;
                if replayed - reported >= 1 << 16 {
                    reported = replayed;
                    crate::progress::step(REPLAYING, replayed, total);
                }
                if let Out::Gather(v) = &mut self.out {
                    if v.len() >= CHUNK {
                        hand(v);
                    }
                }
            }
            // Nothing runnable: either all done, or the trace's dependencies cannot be met.
            // Ranks never become undone, so the scan resumes where the last one stopped: a
            // trace of many independent deadlocks costs O(ranks) here, not O(ranks²).
            while first_open < self.cursors.len() && self.cursors[first_open].done {
                first_open += 1;
            }
            let Some(r) = (first_open < self.cursors.len()).then_some(first_open) else {
                break;
            };
            let r = r as Rank;
            match self.cursors[r as usize].block {
                Block::Recv(..) => {
                    self.warnings.unresolved_recvs += 1;
                    let c = &mut self.cursors[r as usize];
                    c.force_recv = true;
                    c.block = Block::Running;
                    self.worklist.push_back(r);
                }
                Block::Collective(key) => {
                    self.warnings.incomplete_collectives += 1;
                    self.complete_instance(key, true);
                }
                Block::Running => self.worklist.push_back(r),
            }
        }
        if let Out::Gather(v) = &mut self.out {
            if !v.is_empty() {
                hand(v);
            }
        }
    }

    fn advance_rank(&mut self, r: Rank) {
        let trace = self.trace;
        let rt = &trace.ranks[r as usize];
        let calls = &rt.calls;
        let ncalls = self.plans[r as usize].calls;
        let first = self.cursors[r as usize].call;
        loop {
            let cur = &mut self.cursors[r as usize];
            if cur.done || cur.block != Block::Running {
                return;
            }
            let i = cur.call;
            if i >= ncalls {
                let tail = match (rt.span, ncalls.checked_sub(1).map(|l| calls.exit(l))) {
                    (Some((_, end)), Some(last)) => end.saturating_sub(last),
                    (Some((start, end)), None) => end.saturating_sub(start),
                    (None, _) => 0,
                };
                cur.done = true;
                self.gap(r, ncalls, tail);
                return;
            }
            match cur.stage {
                Stage::Enter => {
                    if i - first >= QUANTUM {
                        self.worklist.push_back(r);
                        return;
                    }
                    let prev = if i == 0 {
                        rt.span.map(|s| s.0).unwrap_or(calls.enter(0))
                    } else {
                        calls.exit(i - 1)
                    };
                    cur.stage = Stage::Collectives;
                    cur.modelled = false;
                    self.gap(r, i, calls.enter(i).saturating_sub(prev));
                }
                Stage::Collectives => {
                    let plan = &self.plans[r as usize];
                    let colls = &rt.collectives;
                    match plan.coll_order.get(cur.coll) {
                        Some(&j) if colls.call[j as usize] as usize == i => {
                            cur.modelled = true;
                            let j = j as usize;
                            let comm = colls.comm[j];
                            let seq = self.coll_seq.entry((r, comm)).or_insert(0);
                            let key = (comm, *seq);
                            *seq += 1;
                            let ready = self.arrive(r, key, colls.op[j], colls.bytes_sent[j].max(colls.bytes_recv[j]));
                            let cur = &mut self.cursors[r as usize];
                            cur.stage = Stage::WaitCollective(key);
                            if !ready {
                                cur.block = Block::Collective(key);
                                return;
                            }
                        }
                        Some(&j) if (colls.call[j as usize] as usize) < i => cur.coll += 1,
                        _ => cur.stage = Stage::Post,
                    }
                }
                Stage::WaitCollective(key) => {
                    self.leave_collective(r, key);
                    let cur = &mut self.cursors[r as usize];
                    cur.coll += 1;
                    cur.stage = Stage::Collectives;
                }
                Stage::Post => {
                    let plan = &self.plans[r as usize];
                    match plan.post_order.get(cur.post) {
                        Some(&op) if rt.p2p.post[op as usize] as usize <= i => {
                            cur.post += 1;
                            if rt.p2p.post[op as usize] as usize == i {
                                cur.modelled = true;
                                if rt.p2p.dir[op as usize] == P2pDir::Send {
                                    self.post_send(r, op);
                                }
                            }
                        }
                        _ => cur.stage = Stage::Complete,
                    }
                }
                Stage::Complete => {
                    let plan = &self.plans[r as usize];
                    let Some(&op) = plan.complete_order.get(cur.complete) else {
                        self.finish_call(r);
                        continue;
                    };
                    let at = rt.p2p.complete(op as usize) as usize;
                    if at > i {
                        self.finish_call(r);
                        continue;
                    }
                    if at < i {
                        cur.complete += 1;
                        continue;
                    }
                    cur.modelled = true;
                    if !self.complete_op(r, op) {
                        return;
                    }
                    self.cursors[r as usize].complete += 1;
                }
            }
        }
    }

    /// Advance rank `r` over the `ns` nanoseconds before its call `call` (or after its last):
    /// computation, except the communication a selection dropped there (kept at its recorded
    /// duration, not replayed) and dropped calls priced at 0.
    fn gap(&mut self, r: Rank, call: usize, ns: u64) {
        let (frozen, unpriced) = match self.dropped {
            None => (0, 0),
            Some(d) => {
                let frozen = d.communication(r as usize, call).min(ns);
                (frozen, d.unpriced(r as usize, call).min(ns - frozen))
            }
        };
        let at = self.at(r);
        self.out.emit(Instr::Compute {
            r: at,
            dt: ns_to_s(ns - frozen - unpriced),
        });
        if frozen > 0 {
            self.out.emit(Instr::Frozen {
                r: at,
                dt: ns_to_s(frozen),
            });
            self.not_replayed[r as usize] += ns_to_s(frozen);
        }
    }

    fn finish_call(&mut self, r: Rank) {
        let trace = self.trace;
        let calls = &trace.ranks[r as usize].calls;
        let cur = &mut self.cursors[r as usize];
        let i = cur.call;
        let kind = calls.kind[i];
        // Only local work keeps its recorded duration: queries, datatypes, I/O, probes. Start-up,
        // tear-down and communicator management hide synchronisation, not computation.
        let keeps_duration = !cur.modelled && matches!(kind, CallKind::Other | CallKind::Probe);
        if kind == CallKind::Collective && !cur.modelled {
            self.warnings.collectives_without_record += 1;
        }
        cur.call += 1;
        cur.stage = Stage::Enter;
        if keeps_duration {
            let dt = ns_to_s(calls.exit(i).saturating_sub(calls.enter(i)));
            self.out.emit(Instr::Compute { r: self.at(r), dt });
        }
    }

    /// What a gathering engine found besides the clocks: its warnings and the pool's peak.
    fn gathered(self) -> (ReplayWarnings, u64) {
        (self.warnings, self.slots.peak as u64)
    }

    fn results(self, configs: &[Configuration], per_rank: bool) -> (Vec<ConfigurationResult>, ReplayWarnings, u64) {
        let Out::Now(clocks) = self.out else {
            unreachable!("an engine that gathers has no results of its own")
        };
        let out = results(
            &clocks.into_state(),
            configs.len(),
            &self.not_replayed,
            configs,
            per_rank,
        );
        (out, self.warnings, self.slots.peak as u64)
    }

    /// What a part hands to the combination: its ranks' state (`ROWS × K` per rank), their
    /// dropped communication, the warnings, the matched messages it received and the pool's
    /// peak.
    pub(super) fn into_part(self) -> (Vec<f64>, Vec<f64>, ReplayWarnings, u64, u64, bool) {
        let stuck = self.owned.clone().any(|r| !self.cursors[r as usize].done);
        let not_replayed = self.not_replayed[self.owned.start as usize..self.owned.end as usize].to_vec();
        (
            match self.out {
                Out::Now(clocks) => clocks.into_state(),
                Out::Gather(_) => Vec::new(),
            },
            not_replayed,
            self.warnings,
            self.received,
            self.slots.peak as u64,
            stuck,
        )
    }
}

#[cfg(test)]
mod tests;
