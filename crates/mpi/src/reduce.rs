//! Matching by parts of the ranks, without MPI: each process routes the envelopes of its ranks'
//! sends to the process of their receiver ([`outgoing_envelopes`], one buffer per process, sent
//! with an all-to-all), and matches its ranks' receives against the sends it received
//! ([`match_incoming`]). Together the processes find the messages of
//! [`tracelogic_model::match_messages`] and its unmatched counts.

use std::ops::Range;
use tracelogic_analysis::partial::MatchCounts;
use tracelogic_model::matching::{match_envelopes, send_envelopes, SendEnvelope};
use tracelogic_model::{Message, Rank, Trace};

/// Bytes of one envelope on the wire: sender, send op, receiver, communicator, tag (4 bytes
/// each), posting time, entry time (8 bytes each), little-endian.
const ENVELOPE_BYTES: usize = 36;

fn put(out: &mut Vec<u8>, s: &SendEnvelope) {
    out.extend_from_slice(&s.sender.to_le_bytes());
    out.extend_from_slice(&s.send_op.to_le_bytes());
    out.extend_from_slice(&s.receiver.to_le_bytes());
    out.extend_from_slice(&s.comm.to_le_bytes());
    out.extend_from_slice(&s.tag.to_le_bytes());
    out.extend_from_slice(&s.posted_at.to_le_bytes());
    out.extend_from_slice(&s.enter.to_le_bytes());
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn get(b: &[u8]) -> SendEnvelope {
    SendEnvelope {
        sender: u32_at(b, 0),
        send_op: u32_at(b, 4),
        receiver: u32_at(b, 8),
        comm: u32_at(b, 12),
        tag: u32_at(b, 16) as i32,
        posted_at: u64_at(b, 20),
        enter: u64_at(b, 28),
    }
}

/// The envelopes of the sends of the ranks `owned` of `trace` as bytes, one buffer per process
/// of `blocks` (the process that holds each send's receiver), each in (sender, send op) order;
/// and the part's sender-side counts.
pub fn outgoing_envelopes(trace: &Trace, owned: Range<Rank>, blocks: &[Range<Rank>]) -> (Vec<Vec<u8>>, MatchCounts) {
    let (sends, elsewhere) = send_envelopes(trace, owned);
    let counts = MatchCounts {
        sends_to_ranks: sends.len() as u64,
        sends_elsewhere: elsewhere,
        ..MatchCounts::default()
    };
    let process_of = processes_of(trace.num_ranks(), blocks);
    let mut sizes = vec![0usize; blocks.len()];
    for s in &sends {
        sizes[process_of[s.receiver as usize]] += ENVELOPE_BYTES;
    }
    let mut out: Vec<Vec<u8>> = sizes.iter().map(|&n| Vec::with_capacity(n)).collect();
    for s in &sends {
        put(&mut out[process_of[s.receiver as usize]], s);
    }
    (out, counts)
}

/// The process of each rank.
fn processes_of(ranks: u32, blocks: &[Range<Rank>]) -> Vec<usize> {
    let mut process_of = vec![0usize; ranks as usize];
    for (p, b) in blocks.iter().enumerate() {
        for r in b.clone() {
            process_of[r as usize] = p;
        }
    }
    process_of
}

/// The messages received by the ranks `owned` of `trace`, matched against `incoming` (what every
/// process sent this one with [`outgoing_envelopes`], in process order), in (receiver, sender,
/// send op) order, each with the entry time of its send's posting call
/// ([`SendEnvelope::enter`]); and the part's receiver-side counts. `Err` when the buffers do not
/// hold envelopes of this part's ranks.
pub fn match_incoming<B: AsRef<[u8]>>(
    trace: &Trace,
    owned: Range<Rank>,
    incoming: &[B],
) -> Result<(Vec<(Message, u64)>, MatchCounts), String> {
    // Blocks are contiguous in rank order: the processes' envelopes, in process order, are in
    // (sender, send op) order. A counting sort by receiver keeps that order for each receiver.
    let mut first = vec![0usize; owned.len() + 1];
    for b in incoming {
        let b = b.as_ref();
        if b.len() % ENVELOPE_BYTES != 0 {
            return Err(format!("{} bytes are not whole envelopes", b.len()));
        }
        for e in b.chunks_exact(ENVELOPE_BYTES) {
            let r = u32_at(e, 8);
            if !owned.contains(&r) {
                return Err(format!("a send to rank {r} reached the process of ranks {owned:?}"));
            }
            first[(r - owned.start) as usize + 1] += 1;
        }
    }
    for i in 0..owned.len() {
        first[i + 1] += first[i];
    }
    let mut all = vec![
        SendEnvelope {
            sender: 0,
            send_op: 0,
            receiver: 0,
            comm: 0,
            tag: 0,
            posted_at: 0,
            enter: 0,
        };
        first[owned.len()]
    ];
    let mut free = first.clone();
    for b in incoming {
        for e in b.as_ref().chunks_exact(ENVELOPE_BYTES) {
            let s = get(e);
            let at = &mut free[(s.receiver - owned.start) as usize];
            all[*at] = s;
            *at += 1;
        }
    }
    let mut messages = Vec::new();
    let mut counts = MatchCounts::default();
    for (i, r) in owned.enumerate() {
        let sends = &all[first[i]..first[i + 1]];
        let (m, unmatched) = match_envelopes(trace, r, sends);
        counts.matched += m.len() as u64;
        counts.unmatched_recvs += unmatched;
        // The messages are in the order of their sends: walk both.
        let mut s = sends.iter();
        for msg in m {
            let send = s
                .find(|e| (e.sender, e.send_op) == (msg.sender, msg.send_op))
                .expect("a message's send is among the envelopes");
            messages.push((msg, send.enter));
        }
    }
    Ok((messages, counts))
}

/// The counts of two sides of a part's matching together.
pub fn both(sender: MatchCounts, receiver: MatchCounts) -> MatchCounts {
    MatchCounts {
        sends_to_ranks: sender.sends_to_ranks + receiver.sends_to_ranks,
        sends_elsewhere: sender.sends_elsewhere + receiver.sends_elsewhere,
        matched: sender.matched + receiver.matched,
        unmatched_recvs: sender.unmatched_recvs + receiver.unmatched_recvs,
    }
}

/// `items` as bytes, one buffer per process of `blocks`: each item to the process holding the
/// rank `to(item)`, in the order given.
pub fn route<T: serde::Serialize>(items: &[T], to: impl Fn(&T) -> Rank, blocks: &[Range<Rank>]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<&T>> = vec![Vec::new(); blocks.len()];
    for item in items {
        let r = to(item);
        let p = blocks.partition_point(|b| b.end <= r);
        out[p.min(blocks.len() - 1)].push(item);
    }
    out.iter()
        .map(|v| bincode::serialize(v).expect("items serialise"))
        .collect()
}

/// What [`route`] sent this process, in process order. `Err` when a buffer does not decode.
pub fn received<T: serde::de::DeserializeOwned, B: AsRef<[u8]>>(incoming: &[B]) -> Result<Vec<T>, String> {
    let mut all = Vec::new();
    for (p, b) in incoming.iter().enumerate() {
        let v: Vec<T> =
            bincode::deserialize(b.as_ref()).map_err(|e| format!("the items of process {p} do not decode: {e}"))?;
        all.extend(v);
    }
    Ok(all)
}

/// The messages this part matched (its ranks' receives) whose sender is another process's rank,
/// routed to that process (the replay needs both ends of a message: [`received`] gives each
/// process those of its ranks' sends).
pub fn to_senders(messages: &[(Message, u64)], owned: Range<Rank>, blocks: &[Range<Rank>]) -> Vec<Vec<u8>> {
    let remote: Vec<Message> = messages
        .iter()
        .map(|(m, _)| *m)
        .filter(|m| !owned.contains(&m.sender))
        .collect();
    route(&remote, |m| m.sender, blocks)
}
