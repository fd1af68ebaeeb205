//! The message matching of `tracelogic_model::matching` as it was before the single-sort rewrite (two sorts
//! of the whole trace), kept verbatim as the reference the linear-pass matching must equal.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use tracelogic_model::{CommId, Matching, Message, P2pDir, Rank, Trace, ANY_SOURCE, ANY_TAG};

/// A pending send, as stored in the per-receiver queues.
#[derive(Debug, Clone, Copy)]
struct PendingSend {
    receiver: Rank,
    comm: CommId,
    sender: Rank,
    tag: i32,
    send_op: u32,
    /// Entry time of the posting call, for wildcard receives.
    posted_at: u64,
}

/// One FIFO of sends sharing (receiver, communicator, sender, tag): `sends[next..end]` pending.
#[derive(Debug, Clone, Copy)]
struct Queue {
    next: usize,
    end: usize,
}

/// Match the point-to-point operations of `trace` as the model did before the single-sort rewrite: one sort of
/// all sends by (receiver, communicator, sender, tag, send op), one sort of the messages.
pub fn match_messages_with_sorts(trace: &Trace) -> Matching {
    let n = trace.num_ranks();
    let mut unmatched_sends = 0u64;
    let mut unmatched_recvs = 0u64;

    let mut sends: Vec<PendingSend> = Vec::new();
    for rt in &trace.ranks {
        let p = &rt.p2p;
        // Posting times made non-decreasing along the sender's operations, so that "posted
        // first" never contradicts the sender's own order (clock glitches in a trace).
        let mut latest = 0u64;
        for i in 0..p.len() {
            if p.dir[i] != P2pDir::Send {
                continue;
            }
            let peer = p.peer[i];
            if peer >= n {
                unmatched_sends += 1;
                continue;
            }
            latest = latest.max(rt.calls.enter.get(p.post[i] as usize).unwrap_or(0));
            let posted_at = latest;
            sends.push(PendingSend {
                receiver: peer,
                comm: p.comm[i],
                sender: rt.rank,
                tag: p.tag[i],
                send_op: i as u32,
                posted_at,
            });
        }
    }
    // Stable on send_op within a key because the key ends with it.
    sends.sort_unstable_by_key(|s| (s.receiver, s.comm, s.sender, s.tag, s.send_op));

    let mut messages = Vec::new();
    let mut start = 0;
    while start < sends.len() {
        let receiver = sends[start].receiver;
        let end = start + sends[start..].partition_point(|s| s.receiver == receiver);
        unmatched_recvs += match_receiver(trace, receiver, &sends[start..end], &mut messages);
        unmatched_sends += (end - start) as u64;
        start = end;
    }
    // Receivers nobody sends to: all their receives are unmatched.
    let mut has_senders = vec![false; n as usize];
    for s in &sends {
        has_senders[s.receiver as usize] = true;
    }
    for rt in &trace.ranks {
        if !has_senders.get(rt.rank as usize).copied().unwrap_or(true) {
            unmatched_recvs += rt.p2p.dir.iter().filter(|&&d| d == P2pDir::Recv).count() as u64;
        }
    }
    unmatched_sends -= messages.len() as u64;
    messages.sort_unstable();
    Matching {
        messages,
        unmatched_sends,
        unmatched_recvs,
    }
}

/// Match the receives of `receiver` against `sends` (all sends addressed to it, sorted by
/// communicator, sender, tag, send op). Appends to `out` and returns the unmatched receives.
fn match_receiver(trace: &Trace, receiver: Rank, sends: &[PendingSend], out: &mut Vec<Message>) -> u64 {
    let Some(rt) = trace.ranks.get(receiver as usize) else {
        return 0;
    };
    let p = &rt.p2p;
    let mut queues = Queues::new(sends);
    let recvs = (0..p.len()).filter(|&r| p.dir[r] == P2pDir::Recv);
    for r in recvs.clone() {
        queues.prepare_for(p.peer[r], p.tag[r], p.comm[r]);
    }
    let mut unmatched = 0u64;
    for r in recvs {
        match queues.take(p.peer[r], p.tag[r], p.comm[r]) {
            Some(s) => out.push(Message {
                sender: s.sender,
                send_op: s.send_op,
                receiver,
                recv_op: r as u32,
            }),
            None => unmatched += 1,
        }
    }
    unmatched
}

/// Order in which a wildcard receive prefers queue heads: earliest posting time, then lowest
/// sender rank, then lowest send op (the latter only breaks ties within one sender, where the
/// posting times are non-decreasing).
type HeadKey = (u64, Rank, u32);

/// A heap entry: a queue's head when it was pushed. Stale once that queue has moved on
/// (lazy deletion: checked against the queue's `next` when it reaches the top).
type HeapEntry = Reverse<(HeadKey, usize, usize)>;

/// The pending sends addressed to one receiver, as FIFOs per (communicator, sender, tag), with
/// the indexes wildcard receives need: min-heaps of queue heads per communicator (for
/// `ANY_SOURCE` with `ANY_TAG`), per (communicator, tag) (for `ANY_SOURCE` with a tag) and per
/// (communicator, sender) (for `ANY_TAG` with a source). A heap is built only when a receive
/// of its kind exists, then kept current as heads advance; each send enters each heap at most
/// once, so matching costs O(sends · log sends) whatever the mix of wildcards.
struct Queues<'a> {
    sends: &'a [PendingSend],
    queues: Vec<Queue>,
    by_key: HashMap<(CommId, Rank, i32), usize>,
    by_comm: Option<HashMap<CommId, BinaryHeap<HeapEntry>>>,
    by_comm_tag: Option<HashMap<(CommId, i32), BinaryHeap<HeapEntry>>>,
    by_comm_sender: Option<HashMap<(CommId, Rank), BinaryHeap<HeapEntry>>>,
}

impl<'a> Queues<'a> {
    fn new(sends: &'a [PendingSend]) -> Self {
        let mut queues = Vec::new();
        let mut by_key = HashMap::new();
        let mut i = 0;
        while i < sends.len() {
            let s = sends[i];
            let j = i + sends[i..].partition_point(|t| (t.comm, t.sender, t.tag) == (s.comm, s.sender, s.tag));
            by_key.insert((s.comm, s.sender, s.tag), queues.len());
            queues.push(Queue { next: i, end: j });
            i = j;
        }
        Queues {
            sends,
            queues,
            by_key,
            by_comm: None,
            by_comm_tag: None,
            by_comm_sender: None,
        }
    }

    /// Builds the heap a receive with this envelope will need, if it is a wildcard.
    fn prepare_for(&mut self, peer: Rank, tag: i32, _comm: CommId) {
        if peer == ANY_SOURCE && tag == ANY_TAG && self.by_comm.is_none() {
            let mut m: HashMap<CommId, BinaryHeap<HeapEntry>> = HashMap::new();
            for q in 0..self.queues.len() {
                let s = &self.sends[self.queues[q].next];
                m.entry(s.comm).or_default().push(self.entry(q));
            }
            self.by_comm = Some(m);
        } else if peer == ANY_SOURCE && tag != ANY_TAG && self.by_comm_tag.is_none() {
            let mut m: HashMap<(CommId, i32), BinaryHeap<HeapEntry>> = HashMap::new();
            for q in 0..self.queues.len() {
                let s = &self.sends[self.queues[q].next];
                m.entry((s.comm, s.tag)).or_default().push(self.entry(q));
            }
            self.by_comm_tag = Some(m);
        } else if peer != ANY_SOURCE && tag == ANY_TAG && self.by_comm_sender.is_none() {
            let mut m: HashMap<(CommId, Rank), BinaryHeap<HeapEntry>> = HashMap::new();
            for q in 0..self.queues.len() {
                let s = &self.sends[self.queues[q].next];
                m.entry((s.comm, s.sender)).or_default().push(self.entry(q));
            }
            self.by_comm_sender = Some(m);
        }
    }

    /// The heap entry for the current head of non-empty queue `q`.
    fn entry(&self, q: usize) -> HeapEntry {
        let next = self.queues[q].next;
        let s = &self.sends[next];
        Reverse(((s.posted_at, s.sender, s.send_op), q, next))
    }

    /// Takes the send a receive with this envelope consumes, if any.
    fn take(&mut self, peer: Rank, tag: i32, comm: CommId) -> Option<PendingSend> {
        let q = if peer != ANY_SOURCE && tag != ANY_TAG {
            self.by_key.get(&(comm, peer, tag)).copied()
        } else {
            let queues = &self.queues;
            let heap = if peer == ANY_SOURCE && tag == ANY_TAG {
                self.by_comm.as_mut().and_then(|m| m.get_mut(&comm))
            } else if peer == ANY_SOURCE {
                self.by_comm_tag.as_mut().and_then(|m| m.get_mut(&(comm, tag)))
            } else {
                self.by_comm_sender.as_mut().and_then(|m| m.get_mut(&(comm, peer)))
            }?;
            let mut top = None;
            while let Some(&Reverse((_, q, at))) = heap.peek() {
                if queues[q].next == at {
                    top = Some(q);
                    break;
                }
                heap.pop();
            }
            top
        }?;
        let queue = self.queues[q];
        if queue.next >= queue.end {
            return None;
        }
        let taken = self.sends[queue.next];
        self.queues[q].next += 1;
        if self.queues[q].next < queue.end {
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
