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

/// Matching by parts (envelopes routed to their receivers) gives [`match_messages`].
fn by_envelopes(t: &Trace) -> Matching {
    let (sends, elsewhere) = send_envelopes(t, 0..t.num_ranks());
    let mut m = Matching::default();
    for r in 0..t.num_ranks() {
        let mine: Vec<SendEnvelope> = sends.iter().filter(|s| s.receiver == r).copied().collect();
        let (msgs, unmatched) = match_envelopes(t, r, &mine);
        m.messages.extend(msgs);
        m.unmatched_recvs += unmatched;
    }
    m.messages.sort();
    m.unmatched_sends = elsewhere + sends.len() as u64 - m.messages.len() as u64;
    m
}

#[test]
fn envelopes_match_as_the_whole_trace_does() {
    let mut b = B::new(4);
    b.send(0, 1, 5, 0, 10);
    b.send(2, 1, 5, 0, 5);
    b.send(0, 1, 6, 0, 20);
    b.send(3, 1, 5, 0, 30);
    b.send(3, 9, 5, 0, 31);
    b.recv(1, ANY_SOURCE, 5, 0, 40);
    b.recv(1, 0, ANY_TAG, 0, 41);
    b.recv(1, ANY_SOURCE, ANY_TAG, 0, 42);
    b.recv(1, 3, 5, 0, 43);
    b.recv(1, 2, 7, 0, 44);
    b.sendrecv(2, 3, 3, 1, 50);
    b.sendrecv(3, 2, 2, 1, 50);
    b.recv(0, ANY_SOURCE, ANY_TAG, 0, 60);
    let whole = match_messages(&b.t);
    assert!(whole.unmatched_sends > 0 && whole.unmatched_recvs > 0);
    assert_eq!(by_envelopes(&b.t), whole);
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

/// hpcc's RandomAccess in small: a receive from any source cancelled after the message of a
/// later named receive was sent takes none of that sender's, and one sent after it
/// completed not at all.
#[test]
fn any_source_takes_no_message_a_later_receive_names() {
    let mut b = B::new(3);
    let first = b.send(2, 0, 7, 0, 5);
    let spare = b.send(1, 0, 7, 0, 10);
    let after = b.send(1, 0, 7, 0, 40);
    let any = b.recv(0, ANY_SOURCE, ANY_TAG, 0, 30);
    let named = b.recv(0, 2, 7, 0, 50);
    let m = match_messages(&b.t);
    assert_eq!(m.messages, vec![msg(1, spare, 0, any), msg(2, first, 0, named)]);
    assert_eq!((m.unmatched_sends, m.unmatched_recvs), (1, 0));
    assert!(m.by_send(1, after).is_none());
}

#[test]
fn any_source_takes_no_message_sent_after_it_completed() {
    let mut b = B::new(2);
    b.recv(0, ANY_SOURCE, ANY_TAG, 0, 10);
    b.send(1, 0, 7, 0, 20);
    let m = match_messages(&b.t);
    assert!(m.messages.is_empty());
    assert_eq!((m.unmatched_sends, m.unmatched_recvs), (1, 1));
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
/// times; some receives are wildcards, some sends are never received, and some receives are
/// posted later, after other sends and receives.
fn random_trace(seed: u64, n: u32) -> Trace {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut b = B::new(n);
    let half = b.t.add_comm("half", (0..n).filter(|r| r & 1 == 0).collect());
    let mut clock = 0;
    let mut later: Vec<(Rank, Rank, i32, CommId)> = Vec::new();
    for step in 0..60 {
        if !later.is_empty() && (rng.below(3) == 0 || step == 59) {
            let (r, from, rtag, comm) = later.remove(rng.below(later.len() as u64) as usize);
            clock += 10;
            b.recv(r, from, rtag, comm, clock);
        }
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
        if rng.below(4) == 0 {
            later.push((r, from, rtag, comm));
            continue;
        }
        clock += 10;
        b.recv(r, from, rtag, comm, clock);
    }
    for (r, from, rtag, comm) in later {
        clock += 10;
        b.recv(r, from, rtag, comm, clock);
    }
    b.t
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
        let pm = match_messages(&t.renumber_ranks(&perm).unwrap());
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

/// The matching rules of the module documentation, applied by brute force: every receive
/// scans every pending send addressed to its rank; `sparing` adds the rule of
/// [`match_messages`].
fn reference_matching(t: &Trace, sparing: bool) -> Vec<Message> {
    let n = t.num_ranks();
    // (sender, send_op, receiver, comm, tag, posted_at), posting times as the running
    // maximum along the sender's operations.
    let mut pending = Vec::new();
    for rt in &t.ranks {
        let mut latest = 0;
        for i in 0..rt.p2p.len() {
            if rt.p2p.dir[i] == P2pDir::Send && rt.p2p.peer[i] < n {
                latest = u64::max(latest, rt.calls.enter(rt.p2p.post[i] as usize));
                pending.push((rt.rank, i as u32, rt.p2p.peer[i], rt.p2p.comm[i], rt.p2p.tag[i], latest));
            }
        }
    }
    let mut taken = vec![false; pending.len()];
    let mut out = Vec::new();
    for rt in &t.ranks {
        for r in 0..rt.p2p.len() {
            if rt.p2p.dir[r] != P2pDir::Recv {
                continue;
            }
            let (peer, tag, comm) = (rt.p2p.peer[r], rt.p2p.tag[r], rt.p2p.comm[r]);
            let completed = rt.p2p.get_complete(r).and_then(|c| rt.calls.get_exit(c as usize));
            // From `ANY_SOURCE`: a sender with more sends pending to this rank than receives
            // to come that name it, a send posted by the time the receive completed.
            let spare = |sender: Rank| {
                let pending = (pending.iter().enumerate())
                    .filter(|&(i, s)| !taken[i] && s.0 == sender && s.2 == rt.rank && s.3 == comm)
                    .count();
                let named = (r + 1..rt.p2p.len())
                    .filter(|&q| rt.p2p.dir[q] == P2pDir::Recv && rt.p2p.peer[q] == sender && rt.p2p.comm[q] == comm)
                    .count();
                pending > named
            };
            let eligible = |&(i, s): &(usize, &(Rank, u32, Rank, CommId, i32, u64))| {
                !taken[i]
                    && s.2 == rt.rank
                    && s.3 == comm
                    && (peer == ANY_SOURCE || s.0 == peer)
                    && (tag == ANY_TAG || s.4 == tag)
                    && (!sparing || peer != ANY_SOURCE || spare(s.0))
            };
            // Per sender its first eligible send; across senders the earliest posted.
            let best = pending
                .iter()
                .enumerate()
                .filter(eligible)
                .filter(|&(_, s)| {
                    !pending
                        .iter()
                        .enumerate()
                        .filter(eligible)
                        .any(|(_, o)| o.0 == s.0 && o.1 < s.1)
                })
                .min_by_key(|&(_, s)| (s.5, s.0))
                .filter(|&(_, s)| !sparing || peer != ANY_SOURCE || completed.is_none_or(|c| s.5 <= c));
            if let Some((i, s)) = best {
                taken[i] = true;
                out.push(msg(s.0, s.1, rt.rank, r as u32));
            }
        }
    }
    out.sort_unstable();
    out
}

#[test]
fn wildcard_matching_equals_the_brute_force_rules() {
    for seed in 1..300u64 {
        let n = 2 + (seed % 6) as u32;
        let t = random_trace(seed, n);
        assert_eq!(
            match_messages_earliest(&t).messages,
            reference_matching(&t, false),
            "seed {seed}"
        );
        assert_eq!(match_messages(&t).messages, reference_matching(&t, true), "seed {seed}");
        assert_eq!(by_envelopes(&t), match_messages(&t), "seed {seed}");
    }
}

#[test]
fn posting_times_out_of_order_do_not_reorder_one_sender() {
    // Rank 0's second send carries an earlier clock (5) than its first (12), a clock
    // glitch; rank 1 posts at 10. Once rank 0's first send is taken, the wildcard receive
    // compares rank 0's second send — posted no earlier than its first, 12 — with rank 1's
    // at 10, and takes rank 1's.
    let mut b = B::new(3);
    let a0 = b.send(0, 2, 1, 0, 12);
    let a1 = b.send(0, 2, 1, 0, 5);
    let c0 = b.send(1, 2, 1, 0, 10);
    let r0 = b.recv(2, 0, 1, 0, 20);
    let r1 = b.recv(2, ANY_SOURCE, ANY_TAG, 0, 21);
    let r2 = b.recv(2, ANY_SOURCE, 1, 0, 22);
    let m = match_messages(&b.t);
    assert_eq!(m.messages, [msg(0, a0, 2, r0), msg(0, a1, 2, r2), msg(1, c0, 2, r1)]);
    assert_eq!(m.messages, reference_matching(&b.t, false));
}

/// Scale check for wildcards (run with `--ignored --nocapture` in release): a master
/// collecting with `MPI_ANY_SOURCE` from every worker, which the former scan of every
/// queue head made quadratic.
#[test]
#[ignore]
fn any_source_master_scales() {
    for workers in [1_000u32, 10_000] {
        let n = workers + 1;
        let mut b = B::new(n);
        let rounds = 20u64;
        for round in 0..rounds {
            for w in 1..n {
                b.send(w, 0, 7, 0, round * 1_000_000 + w as u64);
            }
            for w in 1..n {
                b.recv(
                    0,
                    ANY_SOURCE,
                    if w % 2 == 0 { ANY_TAG } else { 7 },
                    0,
                    round * 1_000_000 + 500_000 + w as u64,
                );
            }
        }
        let start = std::time::Instant::now();
        let m = match_messages(&b.t);
        let took = start.elapsed();
        assert_eq!((m.unmatched_sends, m.unmatched_recvs), (0, 0));
        println!("{workers} workers x {rounds} rounds of ANY_SOURCE receives matched in {took:?}");
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
