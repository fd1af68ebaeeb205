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
//! Sends are grouped into queues keyed by (receiver, communicator, sender, tag), built with one
//! sort, so a specific receive costs O(1) and the whole matching O(ops · log ops). Wildcard
//! receives fall back to scanning the queue heads of their (receiver, communicator) — or
//! (receiver, communicator, sender) for `ANY_TAG` with a known source — which is linear in the
//! number of distinct (sender, tag) pairs addressing that receiver, not in the number of sends.
//!
//! Operations whose peer is not a world rank of the trace (an unresolved `MPI_PROC_NULL`, a
//! corrupt value) never match and are counted as unmatched.
//!
//! [`P2p`]: crate::P2p

use crate::{CommId, P2pDir, Rank, Trace, ANY_SOURCE, ANY_TAG};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

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

/// Match the point-to-point operations of `trace`.
pub fn match_messages(trace: &Trace) -> Matching {
    let n = trace.num_ranks();
    let mut unmatched_sends = 0u64;
    let mut unmatched_recvs = 0u64;

    let mut sends: Vec<PendingSend> = Vec::new();
    for rt in &trace.ranks {
        let p = &rt.p2p;
        for i in 0..p.len() {
            if p.dir[i] != P2pDir::Send {
                continue;
            }
            let peer = p.peer[i];
            if peer >= n {
                unmatched_sends += 1;
                continue;
            }
            let posted_at = rt.calls.enter.get(p.post[i] as usize).copied().unwrap_or(0);
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
    let mut queues: Vec<Queue> = Vec::new();
    let mut by_key: HashMap<(CommId, Rank, i32), usize> = HashMap::new();
    // Queue index ranges per communicator and per (communicator, sender), for wildcards.
    let mut by_comm: HashMap<CommId, (usize, usize)> = HashMap::new();
    let mut by_comm_sender: HashMap<(CommId, Rank), (usize, usize)> = HashMap::new();
    let mut i = 0;
    while i < sends.len() {
        let s = sends[i];
        let j = i + sends[i..].partition_point(|t| (t.comm, t.sender, t.tag) == (s.comm, s.sender, s.tag));
        let q = queues.len();
        queues.push(Queue { next: i, end: j });
        by_key.insert((s.comm, s.sender, s.tag), q);
        by_comm.entry(s.comm).or_insert((q, q)).1 = q + 1;
        by_comm_sender.entry((s.comm, s.sender)).or_insert((q, q)).1 = q + 1;
        i = j;
    }

    let Some(rt) = trace.ranks.get(receiver as usize) else {
        return 0;
    };
    let p = &rt.p2p;
    let mut unmatched = 0u64;
    for r in 0..p.len() {
        if p.dir[r] != P2pDir::Recv {
            continue;
        }
        let (peer, tag, comm) = (p.peer[r], p.tag[r], p.comm[r]);
        let chosen = if peer != ANY_SOURCE && tag != ANY_TAG {
            by_key
                .get(&(comm, peer, tag))
                .copied()
                .filter(|&q| queues[q].next < queues[q].end)
        } else {
            let range = if peer == ANY_SOURCE {
                by_comm.get(&comm).copied()
            } else {
                by_comm_sender.get(&(comm, peer)).copied()
            };
            range.and_then(|(a, b)| earliest_head(sends, &queues[a..b], tag).map(|q| a + q))
        };
        match chosen {
            Some(q) => {
                let s = sends[queues[q].next];
                queues[q].next += 1;
                out.push(Message {
                    sender: s.sender,
                    send_op: s.send_op,
                    receiver,
                    recv_op: r as u32,
                });
            }
            None => unmatched += 1,
        }
    }
    unmatched
}

/// Among `queues` (sorted by sender then tag), the queue whose head a receive with `tag`
/// (possibly [`ANY_TAG`]) takes: per sender the lowest send op, across senders the earliest
/// posting time, then the lowest rank.
fn earliest_head(sends: &[PendingSend], queues: &[Queue], tag: i32) -> Option<usize> {
    let mut best: Option<(u64, Rank, usize)> = None;
    let mut sender_best: Option<(u32, usize)> = None;
    let mut current_sender: Option<Rank> = None;
    let flush = |sender_best: Option<(u32, usize)>, best: &mut Option<(u64, Rank, usize)>| {
        if let Some((_, q)) = sender_best {
            let s = &sends[queues[q].next];
            let key = (s.posted_at, s.sender, q);
            if best.is_none_or(|b| (key.0, key.1) < (b.0, b.1)) {
                *best = Some(key);
            }
        }
    };
    for (qi, q) in queues.iter().enumerate() {
        if q.next >= q.end {
            continue;
        }
        let head = &sends[q.next];
        if tag != ANY_TAG && head.tag != tag {
            continue;
        }
        if current_sender != Some(head.sender) {
            flush(sender_best.take(), &mut best);
            current_sender = Some(head.sender);
        }
        if sender_best.is_none_or(|(op, _)| head.send_op < op) {
            sender_best = Some((head.send_op, qi));
        }
    }
    flush(sender_best, &mut best);
    best.map(|b| b.2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Trace, NOT_COMPLETED};

    /// A small builder: every op is its own call, entered at the given time.
    struct B {
        t: Trace,
    }

    impl B {
        fn new(n: u32) -> B {
            B {
                t: Trace::new("test", "test", n),
            }
        }
        fn send(&mut self, r: Rank, to: Rank, tag: i32, comm: CommId, at: u64) -> u32 {
            let c = self.t.push_call(r, "MPI_Send", at, at + 1, crate::NO_CALLPATH, 0);
            self.t.push_p2p(r, c, c, P2pDir::Send, to, tag, comm, 8);
            self.t.ranks[r as usize].p2p.len() as u32 - 1
        }
        fn recv(&mut self, r: Rank, from: Rank, tag: i32, comm: CommId, at: u64) -> u32 {
            let c = self.t.push_call(r, "MPI_Recv", at, at + 1, crate::NO_CALLPATH, 0);
            self.t.push_p2p(r, c, c, P2pDir::Recv, from, tag, comm, 8);
            self.t.ranks[r as usize].p2p.len() as u32 - 1
        }
        fn sendrecv(&mut self, r: Rank, to: Rank, from: Rank, tag: i32, at: u64) -> (u32, u32) {
            let c = self.t.push_call(r, "MPI_Sendrecv", at, at + 1, crate::NO_CALLPATH, 0);
            self.t.push_p2p(r, c, c, P2pDir::Send, to, tag, 0, 8);
            self.t.push_p2p(r, c, NOT_COMPLETED, P2pDir::Recv, from, tag, 0, 8);
            let n = self.t.ranks[r as usize].p2p.len() as u32;
            (n - 2, n - 1)
        }
    }

    fn msg(sender: Rank, send_op: u32, receiver: Rank, recv_op: u32) -> Message {
        Message {
            sender,
            send_op,
            receiver,
            recv_op,
        }
    }

    #[test]
    fn equal_tags_do_not_overtake() {
        let mut b = B::new(2);
        let s0 = b.send(0, 1, 5, 0, 10);
        let s1 = b.send(0, 1, 5, 0, 20);
        let s2 = b.send(0, 1, 5, 0, 30);
        let r0 = b.recv(1, 0, 5, 0, 1);
        let r1 = b.recv(1, 0, 5, 0, 2);
        let r2 = b.recv(1, 0, 5, 0, 3);
        let m = match_messages(&b.t);
        assert_eq!(
            m.messages,
            vec![msg(0, s0, 1, r0), msg(0, s1, 1, r1), msg(0, s2, 1, r2)]
        );
        assert_eq!((m.unmatched_sends, m.unmatched_recvs), (0, 0));
    }

    #[test]
    fn tag_selective_receive_skips_earlier_send_with_other_tag() {
        let mut b = B::new(2);
        let s_a = b.send(0, 1, 1, 0, 10);
        let s_b = b.send(0, 1, 2, 0, 20);
        let r_b = b.recv(1, 0, 2, 0, 30);
        let r_a = b.recv(1, 0, 1, 0, 40);
        let m = match_messages(&b.t);
        assert_eq!(m.messages, vec![msg(0, s_a, 1, r_a), msg(0, s_b, 1, r_b)]);
    }

    #[test]
    fn any_source_takes_the_send_posted_first() {
        let mut b = B::new(3);
        let late = b.send(1, 0, 7, 0, 50);
        let early = b.send(2, 0, 7, 0, 20);
        let r0 = b.recv(0, ANY_SOURCE, 7, 0, 60);
        let r1 = b.recv(0, ANY_SOURCE, 7, 0, 70);
        let m = match_messages(&b.t);
        assert_eq!(m.messages, vec![msg(1, late, 0, r1), msg(2, early, 0, r0)]);
    }

    #[test]
    fn any_source_respects_the_tag() {
        let mut b = B::new(3);
        let other_tag = b.send(2, 0, 9, 0, 10);
        let wanted = b.send(1, 0, 7, 0, 50);
        let r = b.recv(0, ANY_SOURCE, 7, 0, 60);
        let m = match_messages(&b.t);
        assert_eq!(m.messages, vec![msg(1, wanted, 0, r)]);
        assert_eq!((m.unmatched_sends, m.unmatched_recvs), (1, 0));
        assert!(m.by_send(2, other_tag).is_none());
    }

    #[test]
    fn any_tag_keeps_non_overtaking_order_of_one_sender() {
        let mut b = B::new(2);
        // The sender's clock says the second send came earlier (skew); order still wins.
        let first = b.send(0, 1, 3, 0, 100);
        let second = b.send(0, 1, 4, 0, 100);
        let r0 = b.recv(1, 0, ANY_TAG, 0, 200);
        let r1 = b.recv(1, ANY_SOURCE, ANY_TAG, 0, 300);
        let m = match_messages(&b.t);
        assert_eq!(m.messages, vec![msg(0, first, 1, r0), msg(0, second, 1, r1)]);
    }

    #[test]
    fn any_tag_with_source_ignores_other_senders() {
        let mut b = B::new(3);
        let other = b.send(2, 0, 1, 0, 1);
        let mine = b.send(1, 0, 2, 0, 5);
        let r = b.recv(0, 1, ANY_TAG, 0, 10);
        let m = match_messages(&b.t);
        assert_eq!(m.messages, vec![msg(1, mine, 0, r)]);
        assert_eq!(m.unmatched_sends, 1);
        assert!(m.by_send(2, other).is_none());
    }

    #[test]
    fn different_communicators_do_not_match() {
        let mut b = B::new(2);
        let dup = b.t.add_comm("dup", vec![0, 1]);
        b.send(0, 1, 0, dup, 10);
        b.recv(1, 0, 0, crate::COMM_WORLD, 20);
        let m = match_messages(&b.t);
        assert!(m.messages.is_empty());
        assert_eq!((m.unmatched_sends, m.unmatched_recvs), (1, 1));
    }

    #[test]
    fn sendrecv_pairs_match_each_other() {
        let mut b = B::new(2);
        let (s0, r0) = b.sendrecv(0, 1, 1, 0, 10);
        let (s1, r1) = b.sendrecv(1, 0, 0, 0, 10);
        let m = match_messages(&b.t);
        assert_eq!(m.messages, vec![msg(0, s0, 1, r1), msg(1, s1, 0, r0)]);
        assert_eq!((m.unmatched_sends, m.unmatched_recvs), (0, 0));
    }

    #[test]
    fn unmatched_counts() {
        let mut b = B::new(3);
        b.send(0, 1, 0, 0, 1);
        b.send(0, 1, 0, 0, 2);
        b.recv(1, 0, 0, 0, 3);
        b.recv(2, 0, 0, 0, 4); // nobody sends to rank 2
        b.recv(1, 2, 0, 0, 5); // rank 2 never sends
        b.send(0, 99, 0, 0, 6); // peer out of range
        let m = match_messages(&b.t);
        assert_eq!(m.messages.len(), 1);
        assert_eq!(m.unmatched_sends, 2);
        assert_eq!(m.unmatched_recvs, 2);
    }

    #[test]
    fn empty_trace_matches_nothing() {
        let m = match_messages(&Trace::new("test", "test", 0));
        assert_eq!(m, Matching::default());
    }

    /// Deterministic xorshift generator for the property test.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// A random trace where sends and receives are appended in a global order with distinct
    /// times; some receives are wildcards, some sends are never received.
    fn random_trace(seed: u64, n: u32) -> Trace {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut b = B::new(n);
        let half = b.t.add_comm("half", (0..n).filter(|r| r & 1 == 0).collect());
        let mut clock = 0;
        for _ in 0..60 {
            let s = rng.below(n as u64) as Rank;
            let r = rng.below(n as u64) as Rank;
            let comm = if s & 1 == 0 && r & 1 == 0 && rng.below(3) == 0 {
                half
            } else {
                0
            };
            let tag = rng.below(3) as i32;
            clock += 10;
            b.send(s, r, tag, comm, clock);
            if rng.below(8) == 0 {
                continue;
            }
            let from = if rng.below(4) == 0 { ANY_SOURCE } else { s };
            let rtag = if rng.below(4) == 0 { ANY_TAG } else { tag };
            clock += 10;
            b.recv(r, from, rtag, comm, clock);
        }
        b.t
    }

    /// The same trace with world rank `r` renamed `perm[r]` everywhere.
    fn renumber(t: &Trace, perm: &[Rank]) -> Trace {
        let mut out = t.clone();
        for rt in &t.ranks {
            let mut moved = rt.clone();
            moved.rank = perm[rt.rank as usize];
            for p in &mut moved.p2p.peer {
                if *p != ANY_SOURCE {
                    *p = perm[*p as usize];
                }
            }
            out.ranks[perm[rt.rank as usize] as usize] = moved;
        }
        for c in &mut out.comms {
            for m in &mut c.members {
                *m = perm[*m as usize];
            }
        }
        out
    }

    #[test]
    fn renumbering_ranks_permutes_the_matching() {
        for seed in 1..200u64 {
            let n = 2 + (seed % 5) as u32;
            let t = random_trace(seed, n);
            let mut rng = Rng(seed + 17);
            let mut perm: Vec<Rank> = (0..n).collect();
            for i in (1..perm.len()).rev() {
                perm.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let m = match_messages(&t);
            let pm = match_messages(&renumber(&t, &perm));
            let mut expected: Vec<Message> = m
                .messages
                .iter()
                .map(|x| msg(perm[x.sender as usize], x.send_op, perm[x.receiver as usize], x.recv_op))
                .collect();
            expected.sort_unstable();
            assert_eq!(pm.messages, expected, "seed {seed}, perm {perm:?}");
            assert_eq!(pm.unmatched_sends, m.unmatched_sends);
            assert_eq!(pm.unmatched_recvs, m.unmatched_recvs);
            let sends: u64 = t
                .ranks
                .iter()
                .map(|r| r.p2p.dir.iter().filter(|&&d| d == P2pDir::Send).count() as u64)
                .sum();
            assert_eq!(m.messages.len() as u64 + m.unmatched_sends, sends);
        }
    }

    /// Scale check (run with `cargo test --release -p tracelogic-model -- --ignored --nocapture`):
    /// a 64-rank halo exchange of `n` messages per rank, a quarter of the receives wildcards.
    #[test]
    #[ignore]
    fn large_trace_scales() {
        for per_rank in [25_000u64, 100_000] {
            let n = 64u32;
            let mut b = B::new(n);
            for step in 0..per_rank {
                for r in 0..n {
                    b.send(r, (r + 1) % n, (step % 7) as i32, 0, step * 100 + r as u64);
                }
                for r in 0..n {
                    let from = (r + n - 1) % n;
                    let (src, tag) = match step % 4 {
                        0 => (ANY_SOURCE, ANY_TAG),
                        1 => (from, ANY_TAG),
                        _ => (from, (step % 7) as i32),
                    };
                    b.recv(r, src, tag, 0, step * 100 + 50 + r as u64);
                }
            }
            let ops: usize = b.t.ranks.iter().map(|r| r.p2p.len()).sum();
            let start = std::time::Instant::now();
            let m = match_messages(&b.t);
            let took = start.elapsed();
            assert_eq!((m.unmatched_sends, m.unmatched_recvs), (0, 0));
            assert_eq!(m.messages.len() * 2, ops);
            println!("{ops} operations matched in {took:?}");
        }
    }
}
