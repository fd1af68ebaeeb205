//! Point-to-point message matching under MPI's rules.
//!
//! Every send operation is paired with the receive operation that consumed it:
//!
//! * Receives of one rank match in that rank's posting order (the order of its [`P2p`]).
//! * Messages are non-overtaking per (communicator, sender, receiver): a receive that could
//!   take two pending sends of the same sender takes the one that sender posted first.
//! * A receive with a specific source and tag takes the earliest pending send from that source
//!   to this rank on that communicator with that tag.
//! * A wildcard receive (`peer == ANY_SOURCE` and/or `tag == ANY_TAG`) takes, among the pending
//!   sends it could match, the one posted earliest in time (entry time of the send's posting
//!   call); for one sender that is always its first eligible send (non-overtaking), ties
//!   between senders posted at the same instant go to the lower world rank. A trace records
//!   no network arrival times, so posting time is the best stand-in for "arrived first".
//!
//!   A send's posting time is taken as non-decreasing along its sender's operations (the
//!   running maximum), so a clock glitch cannot make a later send "earlier" than its sender's
//!   previous one.
//!
//! * A receive from `ANY_SOURCE` left in the trace (its status unrecorded, or a cancelled
//!   receive: hpcc's RandomAccess cancels the ones it posted ahead, and a cancel that comes
//!   too late leaves one with a message) takes only a send posted by the time its completing
//!   call returned, and only from a sender with a message to spare (more pending sends to this
//!   rank than receives still to come that name it). Under the rules above alone
//!   ([`match_messages_earliest`]) it takes the earliest pending send, often the message a
//!   later named receive took in the run, which then goes unmatched (hpcc-6: 96 cancelled
//!   receives matched, 94 named ones left; with this rule 2 and 0). [`match_messages`], the
//!   one matching of every analysis, the logical trace and the MPI-parallel mode, applies it.
//!
//! Sends are gathered in (sender, send op) order and placed by a stable counting sort on the
//! receiving rank (ranks are dense), so each receiver's sends form one slice still in
//! (sender, send op) order. Within it they are chained into FIFOs keyed by (communicator,
//! sender, tag), so a specific receive costs O(1). Wildcard receives take the top of a min-heap
//! of queue heads (per communicator, per (communicator, tag) or per (communicator, sender),
//! built only for the wildcard kinds a receiver uses, with lazy deletion), so the whole
//! matching is O(ops · log ops) whatever the mix of wildcards — a master collecting with
//! `MPI_ANY_SOURCE` from thousands of workers no longer scans every worker per receive. Each
//! send remembers its position in the gathering order, the messages are written there and read
//! back in that order: [`Matching::messages`] comes out sorted without sorting.
//!
//! Operations whose peer is not a world rank of the trace (an unresolved `MPI_PROC_NULL`, a
//! corrupt value) never match and are counted as unmatched.
//!
//! [`P2p`]: crate::P2p

use crate::{CommId, P2pDir, Rank, Trace, ANY_SOURCE, ANY_TAG};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

mod sources;
pub use sources::Sourced;

/// Maps consulted on every send and receive: foldhash instead of SipHash, seeded per map so a
/// hostile trace cannot aim at collisions.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// One matched message: the send operation and the receive operation that consumed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Message {
    /// Sending world rank.
    pub sender: Rank,
    /// Index into the sender's [`P2p`](crate::P2p).
    pub send_op: u32,
    /// Receiving world rank.
    pub receiver: Rank,
    /// Index into the receiver's [`P2p`](crate::P2p).
    pub recv_op: u32,
}

/// The result of matching a whole trace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Matching {
    /// Matched messages, ordered by sender then send operation.
    pub messages: Vec<Message>,
    /// Send operations no receive consumed.
    pub unmatched_sends: u64,
    /// Receive operations no send fed.
    pub unmatched_recvs: u64,
}

impl Matching {
    /// The message a send operation belongs to, if it was matched (binary search over
    /// [`Matching::messages`]).
    pub fn by_send(&self, sender: Rank, send_op: u32) -> Option<&Message> {
        self.messages
            .binary_search_by(|m| (m.sender, m.send_op).cmp(&(sender, send_op)))
            .ok()
            .map(|i| &self.messages[i])
    }
}

/// A pending send, as stored in the per-receiver slices.
#[derive(Debug, Clone, Copy, Default)]
struct PendingSend {
    comm: CommId,
    sender: Rank,
    tag: i32,
    send_op: u32,
    /// Position of this send in the (sender, send op) order of all matchable sends: where its
    /// receive operation is recorded.
    slot: u32,
    /// The next send of the same (communicator, sender, tag) FIFO, as an index into the
    /// receiver's slice, or [`NO_SEND`].
    next_in_queue: u32,
}

/// End of a FIFO chain, or an empty FIFO.
const NO_SEND: u32 = u32::MAX;

/// A send no receive consumed, in the receive-by-slot table.
const NO_RECV: u32 = u32::MAX;

/// One FIFO of sends sharing (receiver, communicator, sender, tag): its pending head and its
/// last send (for appending while the FIFOs are built), as indexes into the receiver's slice.
#[derive(Debug, Clone, Copy)]
struct Queue {
    head: u32,
    tail: u32,
}

/// Match the point-to-point operations of `trace` (every rule of the module documentation).
pub fn match_messages(trace: &Trace) -> Matching {
    match_all(trace, true)
}

/// [`match_messages`] without the rule for receives from `ANY_SOURCE` left in the trace: each
/// takes the earliest pending send (the matching the linear pass replaced is checked against
/// it, `tests/matching_reference.rs`).
pub fn match_messages_earliest(trace: &Trace) -> Matching {
    match_all(trace, false)
}

/// [`match_messages`], or [`match_messages_earliest`] when not `sparing`.
fn match_all(trace: &Trace, sparing: bool) -> Matching {
    let n = trace.num_ranks();
    let mut unmatched_sends = 0u64;

    // Stable counting sort of the sends by receiver: count, then place each send at its
    // receiver's next free position while walking senders and their operations in order.
    let mut first_of_receiver = vec![0usize; n as usize + 1];
    for rt in &trace.ranks {
        let p = &rt.p2p;
        for (dir, &peer) in p.dir.iter().zip(&p.peer) {
            if *dir == P2pDir::Send {
                if peer < n {
                    first_of_receiver[peer as usize + 1] += 1;
                } else {
                    unmatched_sends += 1;
                }
            }
        }
    }
    for r in 0..n as usize {
        first_of_receiver[r + 1] += first_of_receiver[r];
    }
    let total = first_of_receiver[n as usize];
    let mut sends = vec![PendingSend::default(); total];
    let mut free = first_of_receiver.clone();
    // Posting times by slot, only when some receive is a wildcard (the only receives that
    // compare them): 8 bytes a send saved at the peak of the matching otherwise.
    let wildcards = trace.ranks.iter().any(|rt| {
        let p = &rt.p2p;
        (0..p.len()).any(|i| p.dir[i] == P2pDir::Recv && (p.peer[i] == ANY_SOURCE || p.tag[i] == ANY_TAG))
    });
    let mut posted_at: Vec<u64> = Vec::with_capacity(if wildcards { total } else { 0 });
    let mut slot = 0u32;
    for rt in &trace.ranks {
        let p = &rt.p2p;
        // Posting times made non-decreasing along the sender's operations, so that "posted
        // first" never contradicts the sender's own order (clock glitches in a trace).
        let mut latest = 0u64;
        for i in 0..p.len() {
            let peer = p.peer[i];
            if p.dir[i] != P2pDir::Send || peer >= n {
                continue;
            }
            if wildcards {
                latest = latest.max(rt.calls.get_enter(p.post[i] as usize).unwrap_or(0));
                posted_at.push(latest);
            }
            let at = &mut free[peer as usize];
            sends[*at] = PendingSend {
                comm: p.comm[i],
                sender: rt.rank,
                tag: p.tag[i],
                send_op: i as u32,
                slot,
                next_in_queue: NO_SEND,
            };
            *at += 1;
            slot += 1;
        }
    }
    drop(free);

    // The receive operation that consumed each send, by slot.
    let mut recv_of_slot = vec![NO_RECV; total];
    let mut unmatched_recvs = 0u64;
    let mut matched = 0usize;
    for receiver in 0..n {
        let range = first_of_receiver[receiver as usize]..first_of_receiver[receiver as usize + 1];
        let (taken, unmatched) = match_receiver(
            trace,
            receiver,
            &mut sends[range],
            &posted_at,
            &mut recv_of_slot,
            sparing,
        );
        matched += taken;
        unmatched_recvs += unmatched;
    }
    drop(sends);
    drop(posted_at);
    drop(first_of_receiver);
    unmatched_sends += (total - matched) as u64;

    // Read the matches back in slot order, which is (sender, send op) order.
    let mut messages = Vec::with_capacity(matched);
    let mut slot = 0usize;
    for rt in &trace.ranks {
        let p = &rt.p2p;
        for i in 0..p.len() {
            let receiver = p.peer[i];
            if p.dir[i] != P2pDir::Send || receiver >= n {
                continue;
            }
            let recv_op = recv_of_slot[slot];
            slot += 1;
            if recv_op != NO_RECV {
                messages.push(Message {
                    sender: rt.rank,
                    send_op: i as u32,
                    receiver,
                    recv_op,
                });
            }
        }
    }
    Matching {
        messages,
        unmatched_sends,
        unmatched_recvs,
    }
}

/// Match the receives of `receiver` against `sends` (all sends addressed to it, in sender
/// then send op order; `posted_at` their posting times by slot, read only by wildcard
/// receives). Records each consumed send's receive operation in `recv_of_slot` and returns
/// the number of matched sends and of unmatched receives; `sparing`: receives from
/// `ANY_SOURCE` as [`match_messages`] takes them (else as [`match_messages_earliest`]).
fn match_receiver(
    trace: &Trace,
    receiver: Rank,
    sends: &mut [PendingSend],
    posted_at: &[u64],
    recv_of_slot: &mut [u32],
    sparing: bool,
) -> (usize, u64) {
    let Some(rt) = trace.ranks.get(receiver as usize) else {
        return (0, 0);
    };
    let p = &rt.p2p;
    let recvs = (0..p.len()).filter(|&r| p.dir[r] == P2pDir::Recv);
    if sends.is_empty() {
        return (0, recvs.count() as u64);
    }
    let mut queues = Queues::new(sends, posted_at);
    for r in recvs.clone() {
        queues.prepare_for(p.peer[r], p.tag[r], p.comm[r]);
    }
    if sparing && (queues.by_comm.is_some() || queues.by_comm_tag.is_some()) {
        queues.count_spare(recvs.clone().map(|r| (p.comm[r], p.peer[r])));
    }
    let (mut matched, mut unmatched) = (0usize, 0u64);
    for r in recvs {
        // The exit of the completing call of a sparing receive from any source, when the trace
        // has one (looked up only then: this loop runs for every receive of every trace).
        let completed = (sparing && p.peer[r] == ANY_SOURCE)
            .then(|| p.get_complete(r).and_then(|c| rt.calls.get_exit(c as usize)))
            .flatten()
            .unwrap_or(u64::MAX);
        let taken = queues.take(p.peer[r], p.tag[r], p.comm[r], completed);
        queues.count_taken(p.peer[r], p.comm[r], taken.as_ref());
        match taken {
            Some(s) => {
                recv_of_slot[s.slot as usize] = r as u32;
                matched += 1;
            }
            None => unmatched += 1,
        }
    }
    (matched, unmatched)
}

/// A send as its receiver's matching needs it: for matching by parts of the ranks, where each
/// process holds the operations of some ranks only ([`send_envelopes`] on the senders' side,
/// [`match_envelopes`] on the receivers').
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendEnvelope {
    /// Sending world rank.
    pub sender: Rank,
    /// Index into the sender's [`P2p`](crate::P2p).
    pub send_op: u32,
    /// Receiving world rank.
    pub receiver: Rank,
    /// Communicator.
    pub comm: CommId,
    /// Tag.
    pub tag: i32,
    /// Entry time of the posting call, made non-decreasing along the sender's sends as
    /// [`match_messages`] does.
    pub posted_at: u64,
    /// Entry time of the posting call as recorded ([`NO_TIME`] when the trace lacks the call's
    /// entry or exit): what the receiver's wait states compare with.
    pub enter: u64,
}

/// [`SendEnvelope::enter`] of a send whose posting call has no recorded entry.
pub const NO_TIME: u64 = u64::MAX;

/// The sends of the ranks `ranks` of `trace` addressed to a world rank of the trace, in (sender,
/// send op) order, and the number of sends addressed elsewhere (unmatched for good). Only the
/// operations and calls of `ranks` are read.
pub fn send_envelopes(trace: &Trace, ranks: std::ops::Range<Rank>) -> (Vec<SendEnvelope>, u64) {
    let n = trace.num_ranks();
    let mut out = Vec::new();
    let mut elsewhere = 0u64;
    for rt in trace.ranks.iter().filter(|rt| ranks.contains(&rt.rank)) {
        let p = &rt.p2p;
        let mut latest = 0u64;
        for i in 0..p.len() {
            if p.dir[i] != P2pDir::Send {
                continue;
            }
            let peer = p.peer[i];
            if peer >= n {
                elsewhere += 1;
                continue;
            }
            let post = p.post[i] as usize;
            let enter = rt.calls.get_enter(post);
            latest = latest.max(enter.unwrap_or(0));
            let enter = enter.filter(|_| rt.calls.duration.get(post).is_some());
            out.push(SendEnvelope {
                sender: rt.rank,
                send_op: i as u32,
                receiver: peer,
                comm: p.comm[i],
                tag: p.tag[i],
                posted_at: latest,
                enter: enter.unwrap_or(NO_TIME),
            });
        }
    }
    (out, elsewhere)
}

/// The receives of `receiver` (its operations in `trace`) matched against `sends`, every send
/// of the trace addressed to it in (sender, send op) order: the matched messages in that order
/// and the number of its receives no send fed. Over every receiver, the messages are those of
/// [`match_messages`] and the unmatched receives its `unmatched_recvs`; its `unmatched_sends`
/// are the sends addressed elsewhere plus the sends to ranks that no message took.
pub fn match_envelopes(trace: &Trace, receiver: Rank, sends: &[SendEnvelope]) -> (Vec<Message>, u64) {
    let mut pending: Vec<PendingSend> = sends
        .iter()
        .enumerate()
        .map(|(slot, s)| PendingSend {
            comm: s.comm,
            sender: s.sender,
            tag: s.tag,
            send_op: s.send_op,
            slot: slot as u32,
            next_in_queue: NO_SEND,
        })
        .collect();
    let mut recv_of_slot = vec![NO_RECV; sends.len()];
    let posted_at: Vec<u64> = sends.iter().map(|s| s.posted_at).collect();
    let (_, unmatched) = match_receiver(trace, receiver, &mut pending, &posted_at, &mut recv_of_slot, true);
    let messages = sends
        .iter()
        .zip(&recv_of_slot)
        .filter(|(_, &r)| r != NO_RECV)
        .map(|(s, &recv_op)| Message {
            sender: s.sender,
            send_op: s.send_op,
            receiver,
            recv_op,
        })
        .collect();
    (messages, unmatched)
}

/// Order in which a wildcard receive prefers queue heads: earliest posting time, then lowest
/// sender rank, then lowest send op (the latter only breaks ties within one sender, where the
/// posting times are non-decreasing).
type HeadKey = (u64, Rank, u32);

/// A heap entry: a queue's head when it was pushed. Stale once that queue has moved on
/// (lazy deletion: checked against the queue's `head` when it reaches the top).
type HeapEntry = Reverse<(HeadKey, usize, u32)>;

/// The pending sends addressed to one receiver, as FIFOs per (communicator, sender, tag), with
/// the indexes wildcard receives need: min-heaps of queue heads per communicator (for
/// `ANY_SOURCE` with `ANY_TAG`), per (communicator, tag) (for `ANY_SOURCE` with a tag) and per
/// (communicator, sender) (for `ANY_TAG` with a source). A heap is built only when a receive
/// of its kind exists, then kept current as heads advance; each send enters each heap at most
/// once, so matching costs O(sends · log sends) whatever the mix of wildcards.
struct Queues<'a> {
    sends: &'a [PendingSend],
    /// Posting time of each send by slot (empty when no receive is a wildcard).
    posted_at: &'a [u64],
    queues: Vec<Queue>,
    by_key: FastMap<(CommId, Rank, i32), usize>,
    by_comm: Option<FastMap<CommId, BinaryHeap<HeapEntry>>>,
    by_comm_tag: Option<FastMap<(CommId, i32), BinaryHeap<HeapEntry>>>,
    by_comm_sender: Option<FastMap<(CommId, Rank), BinaryHeap<HeapEntry>>>,
    /// Per (communicator, sender), when some receive is from `ANY_SOURCE`: its pending sends
    /// less the receives still to come that name it ([`Queues::count_spare`]).
    spare: FastMap<(CommId, Rank), i64>,
}

impl<'a> Queues<'a> {
    /// Chains `sends` (in sender then send op order) into their FIFOs, each in send op order.
    fn new(sends: &'a mut [PendingSend], posted_at: &'a [u64]) -> Self {
        let mut queues: Vec<Queue> = Vec::new();
        let mut by_key = FastMap::default();
        // Consecutive sends of one sender to one receiver mostly share communicator and tag.
        let mut last: Option<((CommId, Rank, i32), usize)> = None;
        for i in 0..sends.len() {
            let s = &sends[i];
            let key = (s.comm, s.sender, s.tag);
            let q = match last {
                Some((k, q)) if k == key => Some(q),
                _ => by_key.get(&key).copied(),
            };
            let q = match q {
                Some(q) => {
                    let tail = queues[q].tail as usize;
                    sends[tail].next_in_queue = i as u32;
                    queues[q].tail = i as u32;
                    q
                }
                None => {
                    by_key.insert(key, queues.len());
                    queues.push(Queue {
                        head: i as u32,
                        tail: i as u32,
                    });
                    queues.len() - 1
                }
            };
            last = Some((key, q));
        }
        Queues {
            sends,
            posted_at,
            queues,
            by_key,
            by_comm: None,
            by_comm_tag: None,
            by_comm_sender: None,
            spare: FastMap::default(),
        }
    }

    /// Counts, per (communicator, sender), the sends less the receives naming that sender
    /// (`receives`: every receive's communicator and peer, in posting order).
    fn count_spare(&mut self, receives: impl Iterator<Item = (CommId, Rank)>) {
        for s in self.sends.iter() {
            *self.spare.entry((s.comm, s.sender)).or_default() += 1;
        }
        for key in receives.filter(|&(_, peer)| peer != ANY_SOURCE) {
            *self.spare.entry(key).or_default() -= 1;
        }
    }

    /// Keeps [`Queues::spare`] current after a receive from `peer` on `comm` took `taken`.
    fn count_taken(&mut self, peer: Rank, comm: CommId, taken: Option<&PendingSend>) {
        if self.spare.is_empty() {
            return;
        }
        match (peer == ANY_SOURCE, taken) {
            (true, Some(s)) => *self.spare.entry((s.comm, s.sender)).or_default() -= 1,
            (false, None) => *self.spare.entry((comm, peer)).or_default() += 1,
            _ => {}
        }
    }

    /// Builds the heap a receive with this envelope will need, if it is a wildcard.
    fn prepare_for(&mut self, peer: Rank, tag: i32, _comm: CommId) {
        if peer == ANY_SOURCE && tag == ANY_TAG && self.by_comm.is_none() {
            let mut m: FastMap<CommId, BinaryHeap<HeapEntry>> = FastMap::default();
            for q in 0..self.queues.len() {
                let s = &self.sends[self.queues[q].head as usize];
                m.entry(s.comm).or_default().push(self.entry(q));
            }
            self.by_comm = Some(m);
        } else if peer == ANY_SOURCE && tag != ANY_TAG && self.by_comm_tag.is_none() {
            let mut m: FastMap<(CommId, i32), BinaryHeap<HeapEntry>> = FastMap::default();
            for q in 0..self.queues.len() {
                let s = &self.sends[self.queues[q].head as usize];
                m.entry((s.comm, s.tag)).or_default().push(self.entry(q));
            }
            self.by_comm_tag = Some(m);
        } else if peer != ANY_SOURCE && tag == ANY_TAG && self.by_comm_sender.is_none() {
            let mut m: FastMap<(CommId, Rank), BinaryHeap<HeapEntry>> = FastMap::default();
            for q in 0..self.queues.len() {
                let s = &self.sends[self.queues[q].head as usize];
                m.entry((s.comm, s.sender)).or_default().push(self.entry(q));
            }
            self.by_comm_sender = Some(m);
        }
    }

    /// The heap entry for the current head of non-empty queue `q`.
    fn entry(&self, q: usize) -> HeapEntry {
        let head = self.queues[q].head;
        let s = &self.sends[head as usize];
        Reverse(((self.posted_at[s.slot as usize], s.sender, s.send_op), q, head))
    }

    /// Takes the send a receive with this envelope consumes, if any. A receive from
    /// `ANY_SOURCE` takes only a send posted at or before `completed` (the receive may have
    /// been cancelled, its status unrecorded) whose sender has one to spare for it: more sends
    /// pending than receives still to come that name it.
    fn take(&mut self, peer: Rank, tag: i32, comm: CommId, completed: u64) -> Option<PendingSend> {
        let q = if peer != ANY_SOURCE && tag != ANY_TAG {
            self.by_key.get(&(comm, peer, tag)).copied()
        } else {
            let (queues, spare) = (&self.queues, &self.spare);
            let heap = if peer == ANY_SOURCE && tag == ANY_TAG {
                self.by_comm.as_mut().and_then(|m| m.get_mut(&comm))
            } else if peer == ANY_SOURCE {
                self.by_comm_tag.as_mut().and_then(|m| m.get_mut(&(comm, tag)))
            } else {
                self.by_comm_sender.as_mut().and_then(|m| m.get_mut(&(comm, peer)))
            }?;
            let mut top = None;
            // Heads of senders with none to spare, set aside and pushed back.
            let mut spoken_for = Vec::new();
            while let Some(&Reverse(((posted, sender, _), q, at))) = heap.peek() {
                if queues[q].head != at {
                    heap.pop();
                } else if peer == ANY_SOURCE && spare.get(&(comm, sender)).is_some_and(|&n| n <= 0) {
                    spoken_for.extend(heap.pop());
                } else {
                    top = (peer != ANY_SOURCE || posted <= completed).then_some(q);
                    break;
                }
            }
            heap.extend(spoken_for);
            top
        }?;
        let head = self.queues[q].head;
        if head == NO_SEND {
            return None;
        }
        let taken = self.sends[head as usize];
        self.queues[q].head = taken.next_in_queue;
        let wildcards = self.by_comm.is_some() || self.by_comm_tag.is_some() || self.by_comm_sender.is_some();
        if taken.next_in_queue != NO_SEND && wildcards {
            let e = self.entry(q);
            if let Some(m) = &mut self.by_comm {
                m.entry(taken.comm).or_default().push(e);
            }
            if let Some(m) = &mut self.by_comm_tag {
                m.entry((taken.comm, taken.tag)).or_default().push(e);
            }
            if let Some(m) = &mut self.by_comm_sender {
                m.entry((taken.comm, taken.sender)).or_default().push(e);
            }
        }
        Some(taken)
    }
}

#[cfg(test)]
mod tests;
