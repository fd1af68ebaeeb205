//! Select calls and messages by ranks, time window, size and kind (thesis §3.5.2).

use crate::{Engine, Result};
use serde::{Deserialize, Serialize};
pub use tracelogic_model::query::RankFan;
use tracelogic_model::query::{call_bytes, fan_in_out};
use tracelogic_model::{CallKind, Matching, Selection, Trace, NOT_COMPLETED};

/// One selected call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRow {
    /// World rank.
    pub rank: u32,
    /// Index of the call in the rank's calls.
    pub call: u32,
    /// MPI function.
    pub function: String,
    /// Its kind.
    pub kind: CallKind,
    /// Entry time, ns since the trace's first event.
    pub enter_ns: u64,
    /// Exit time, ns since the trace's first event.
    pub exit_ns: u64,
    /// Largest data the call moves (0 for calls that move none).
    pub bytes: u64,
}

/// One selected matched message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageRow {
    /// Sending world rank.
    pub sender: u32,
    /// Receiving world rank.
    pub receiver: u32,
    /// Bytes sent.
    pub bytes: u64,
    /// Tag.
    pub tag: i32,
    /// Communicator name.
    pub comm: String,
    /// Function that posted the send.
    pub send_function: String,
    /// Function that posted the receive.
    pub recv_function: String,
    /// Entry of the send's posting call, ns since the trace's first event.
    pub send_ns: u64,
    /// Exit of the call that completed the receive (its posting call when none was
    /// recorded), ns since the trace's first event.
    pub recv_done_ns: u64,
}

/// What `tracelogic query --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryReport {
    /// The selection applied (times absolute, in the trace's clock).
    pub selection: Selection,
    /// Number of selected calls.
    pub calls_selected: u64,
    /// The first `limit` selected calls, by rank then call order.
    pub calls: Vec<CallRow>,
    /// Number of selected matched messages (either end selected).
    pub messages_selected: u64,
    /// The first `limit` of them, by sender then send order.
    pub messages: Vec<MessageRow>,
    /// Selected send operations no receive matched.
    pub unmatched_sends_selected: u64,
    /// Fan-in / fan-out of every selected rank.
    pub fan: Vec<RankFan>,
    /// The listing limit used.
    pub limit: usize,
}

impl Engine {
    /// The calls and matched messages `selection` keeps (the first `limit` of each listed), the
    /// selected sends no receive matched, and every selected rank's fan-in and fan-out
    /// (`tracelogic query`).
    pub fn query(&self, selection: &Selection, limit: usize) -> Result<QueryReport> {
        let selection = self.absolute(selection)?;
        Ok(query(self.trace(), self.matching(), selection, limit))
    }
}

fn query(trace: &Trace, matching: &Matching, selection: Selection, limit: usize) -> QueryReport {
    let start = trace.span().0;
    let mut calls = Vec::new();
    let mut calls_selected = 0u64;
    for rt in &trace.ranks {
        let c = &rt.calls;
        for i in 0..c.len() as u32 {
            if !selection.selects_call(trace, rt.rank, i) {
                continue;
            }
            calls_selected += 1;
            if calls.len() < limit {
                let at = i as usize;
                calls.push(CallRow {
                    rank: rt.rank,
                    call: i,
                    function: trace.call_name(rt.rank, i).to_owned(),
                    kind: c.kind[at],
                    enter_ns: c.enter(at).saturating_sub(start),
                    exit_ns: c.exit(at).saturating_sub(start),
                    bytes: call_bytes(trace, rt.rank, i),
                });
            }
        }
    }
    let mut messages = Vec::new();
    let mut messages_selected = 0u64;
    let mut matched_sends = vec![Vec::new(); trace.ranks.len()];
    for m in &matching.messages {
        matched_sends[m.sender as usize].push(m.send_op);
        let send_selected = selection.selects_p2p(trace, m.sender, m.send_op as usize);
        if !send_selected && !selection.selects_p2p(trace, m.receiver, m.recv_op as usize) {
            continue;
        }
        messages_selected += 1;
        if messages.len() < limit {
            let s = &trace.ranks[m.sender as usize];
            let r = &trace.ranks[m.receiver as usize];
            let so = m.send_op as usize;
            let ro = m.recv_op as usize;
            let done = match r.p2p.complete(ro) {
                NOT_COMPLETED => r.p2p.post[ro],
                c => c,
            };
            messages.push(MessageRow {
                sender: m.sender,
                receiver: m.receiver,
                bytes: s.p2p.bytes.at(so),
                tag: s.p2p.tag[so],
                comm: trace
                    .comms
                    .get(s.p2p.comm[so] as usize)
                    .map(|c| c.name.clone())
                    .unwrap_or_else(|| format!("comm {}", s.p2p.comm[so])),
                send_function: trace.call_name(m.sender, s.p2p.post[so]).to_owned(),
                recv_function: trace.call_name(m.receiver, r.p2p.post[ro]).to_owned(),
                send_ns: s
                    .calls
                    .enter
                    .get(s.p2p.post[so] as usize)
                    .map_or(0, |t| t.saturating_sub(start)),
                recv_done_ns: r.calls.get_exit(done as usize).map_or(0, |t| t.saturating_sub(start)),
            });
        }
    }
    let mut unmatched_sends_selected = 0u64;
    for rt in &trace.ranks {
        let matched = &matched_sends[rt.rank as usize];
        let p = &rt.p2p;
        for i in 0..p.len() {
            if p.dir[i] == tracelogic_model::P2pDir::Send
                && selection.selects_p2p(trace, rt.rank, i)
                && matched.binary_search(&(i as u32)).is_err()
            {
                unmatched_sends_selected += 1;
            }
        }
    }
    let fan = fan_in_out(trace, &selection);
    QueryReport {
        selection,
        calls_selected,
        calls,
        messages_selected,
        messages,
        unmatched_sends_selected,
        fan,
        limit,
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::sample_engine;
    use tracelogic_model::Selection;

    #[test]
    fn a_rank_window_lists_its_calls_and_the_messages_touching_it() {
        let engine = sample_engine("npb-lu.S.8");
        let two = Selection {
            ranks: Some(vec![2]),
            ..Selection::default()
        };
        let r = engine.query(&two, 5).unwrap();
        assert_eq!(r.calls_selected, engine.trace().ranks[2].calls.len() as u64);
        assert_eq!(r.calls.len(), 5);
        assert!(r.calls.iter().all(|c| c.rank == 2));
        // Messages with either end on rank 2, counted from the matching.
        let touching = engine
            .matching()
            .messages
            .iter()
            .filter(|m| m.sender == 2 || m.receiver == 2)
            .count() as u64;
        assert_eq!(r.messages_selected, touching);
        assert_eq!(r.fan.len(), 1);
        assert_eq!(r.limit, 5);
    }
}
