//! Matching by parts of the ranks, without MPI: each process routes the envelopes of its ranks'
//! sends to the process of their receiver ([`outgoing_envelopes`], one buffer per process, sent
//! with an all-to-all), and matches its ranks' receives against the sends it received
//! ([`match_incoming`]). Together the processes find the messages of
//! [`tracelogic_model::match_messages`] and its unmatched counts.

use std::ops::Range;
use tracelogic_analysis::partial::MatchCounts;
use tracelogic_model::matching::{match_envelopes, send_envelopes, SendEnvelope};
use tracelogic_model::{Message, Rank, Trace};

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
    let mut process_of = vec![0usize; trace.num_ranks() as usize];
    for (p, b) in blocks.iter().enumerate() {
        for r in b.clone() {
            process_of[r as usize] = p;
        }
    }
    let mut out: Vec<Vec<SendEnvelope>> = vec![Vec::new(); blocks.len()];
    for s in sends {
        out[process_of[s.receiver as usize]].push(s);
    }
    let bytes = out
        .iter()
        .map(|v| bincode::serialize(v).expect("envelopes serialise"))
        .collect();
    (bytes, counts)
}

/// The messages received by the ranks `owned` of `trace`, matched against `incoming` (what every
/// process sent this one with [`outgoing_envelopes`], in process order), in (receiver, sender,
/// send op) order, each with the entry time of its send's posting call
/// ([`SendEnvelope::enter`]); and the part's receiver-side counts. `Err` when a buffer does not
/// decode.
pub fn match_incoming(
    trace: &Trace,
    owned: Range<Rank>,
    incoming: &[Vec<u8>],
) -> Result<(Vec<(Message, u64)>, MatchCounts), String> {
    // Blocks are contiguous in rank order: the processes' envelopes, in process order, are in
    // (sender, send op) order. A stable sort by receiver keeps that order for each receiver.
    let mut all: Vec<SendEnvelope> = Vec::new();
    for (p, b) in incoming.iter().enumerate() {
        let v: Vec<SendEnvelope> =
            bincode::deserialize(b).map_err(|e| format!("envelopes of process {p} do not decode: {e}"))?;
        all.extend(v);
    }
    if let Some(s) = all.iter().find(|s| !owned.contains(&s.receiver)) {
        return Err(format!(
            "a send to rank {} reached the process of ranks {owned:?}",
            s.receiver
        ));
    }
    all.sort_by_key(|s| s.receiver);
    let mut messages = Vec::new();
    let mut counts = MatchCounts::default();
    let mut at = 0;
    for r in owned {
        let end = at + all[at..].iter().take_while(|s| s.receiver == r).count();
        let sends = &all[at..end];
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
        at = end;
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
pub fn received<T: serde::de::DeserializeOwned>(incoming: &[Vec<u8>]) -> Result<Vec<T>, String> {
    let mut all = Vec::new();
    for (p, b) in incoming.iter().enumerate() {
        let v: Vec<T> = bincode::deserialize(b).map_err(|e| format!("the items of process {p} do not decode: {e}"))?;
        all.extend(v);
    }
    Ok(all)
}
