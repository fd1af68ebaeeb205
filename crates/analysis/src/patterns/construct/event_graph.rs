//! The event graph of a pattern: its events ordered by Lamport clocks, arrows from each send to
//! its receive and through collectives.

use super::*;

/// One event in an event graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphEvent {
    /// World rank (the horizontal line it sits on).
    pub rank: Rank,
    /// Index of the rank's line in [`EventGraph::ranks`].
    pub lane: usize,
    /// Index in the rank's event sequence.
    pub event: u32,
    /// Symbol, e.g. `S3`.
    pub symbol: String,
    /// Logical time (Lamport clock: after the previous event of its rank and after the send of
    /// the message it receives), starting at 0.
    pub logical: u32,
    /// Entry time of its call (ns).
    pub time: Time,
    /// Exit time of its call (ns).
    pub end: Time,
}

/// A message arrow, from a send event to its receive event (indices into [`EventGraph::events`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arrow {
    /// The send.
    pub from: usize,
    /// The receive.
    pub to: usize,
}

/// One occurrence of a communication pattern, ready to draw as the thesis' event graphs:
/// ranks as horizontal lines, events as points (x = logical order or real time), arrows from
/// each send to its receive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventGraph {
    /// Communication pattern id.
    pub pattern: usize,
    /// Which occurrence (0 = first).
    pub occurrence: usize,
    /// The lines, top to bottom.
    pub ranks: Vec<Rank>,
    /// The events, by rank then order.
    pub events: Vec<GraphEvent>,
    /// Messages inside the occurrence.
    pub arrows: Vec<Arrow>,
    /// Largest logical time + 1 (the width in logical steps).
    pub logical_width: u32,
}

/// The event graph of occurrence `occurrence` of communication pattern `pattern` (only the first
/// [`KEPT_EXAMPLES`] occurrences are kept). `None` if out of range.
pub fn event_graph(
    trace: &Trace,
    matching: &Matching,
    events: &Events,
    analysis: &CommunicationAnalysis,
    pattern: usize,
    occurrence: usize,
) -> Option<EventGraph> {
    let evs = example_events(analysis.examples.get(pattern)?.get(occurrence)?);
    let mut p2p_events: HashMap<Rank, Vec<u32>> = HashMap::new();
    let mut recv_event = |receiver: Rank, op: u32| {
        p2p_events.entry(receiver).or_insert_with(|| {
            let rt = &trace.ranks[receiver as usize];
            op_events(&events.ranks[receiver as usize], rt.p2p.len(), rt.collectives.len()).0
        })[op as usize]
    };
    Some(graph_of(
        trace,
        matching,
        events,
        &evs,
        pattern,
        occurrence,
        &mut recv_event,
    ))
}

/// The events `(rank, event index)` of a kept occurrence from its runs
/// ([`CommunicationAnalysis::examples`]), by rank then event.
pub fn example_events(runs: &[(Rank, u32, u32)]) -> Vec<(Rank, u32)> {
    runs.iter().flat_map(|&(r, a, e)| (a..e).map(move |i| (r, i))).collect()
}

/// Event graphs of the kept occurrences of every pattern (`[pattern][occurrence]`), at most
/// `per_pattern` per pattern and `max_events` events in all (patterns in id order, so the most
/// frequent come first). O(events) once for the operation tables, then O(events drawn).
pub fn event_graphs(
    trace: &Trace,
    matching: &Matching,
    events: &Events,
    analysis: &CommunicationAnalysis,
    per_pattern: usize,
    max_events: usize,
) -> Vec<Vec<EventGraph>> {
    let tables: Vec<Vec<u32>> = events
        .ranks
        .iter()
        .map(|re| {
            let rt = &trace.ranks[re.rank as usize];
            op_events(re, rt.p2p.len(), rt.collectives.len()).0
        })
        .collect();
    let mut recv_event = |receiver: Rank, op: u32| tables[receiver as usize][op as usize];
    let mut budget = max_events;
    analysis
        .examples
        .iter()
        .enumerate()
        .map(|(pattern, examples)| {
            let mut out = Vec::new();
            for (occurrence, runs) in examples.iter().take(per_pattern).enumerate() {
                let len: usize = runs.iter().map(|&(_, a, e)| (e - a) as usize).sum();
                if len > budget {
                    break;
                }
                budget -= len;
                out.push(graph_of(
                    trace,
                    matching,
                    events,
                    &example_events(runs),
                    pattern,
                    occurrence,
                    &mut recv_event,
                ));
            }
            out
        })
        .collect()
}

/// The graph of one kept occurrence (`evs`: its events, by rank then order); `recv_event` gives
/// the event index of a receive operation on a rank.
pub(super) fn graph_of(
    trace: &Trace,
    matching: &Matching,
    events: &Events,
    evs: &[(Rank, u32)],
    pattern: usize,
    occurrence: usize,
    recv_event: &mut dyn FnMut(Rank, u32) -> u32,
) -> EventGraph {
    let mut ranks: Vec<Rank> = evs.iter().map(|e| e.0).collect();
    ranks.dedup();
    let index: HashMap<(Rank, u32), usize> = evs.iter().enumerate().map(|(i, &e)| (e, i)).collect();
    let mut out: Vec<GraphEvent> = evs
        .iter()
        .map(|&(r, i)| {
            let re = &events.ranks[r as usize];
            let calls = &trace.ranks[r as usize].calls;
            let call = re.calls[i as usize] as usize;
            GraphEvent {
                rank: r,
                lane: ranks.binary_search(&r).unwrap_or(0),
                event: i,
                symbol: events.names[re.symbols[i as usize] as usize].clone(),
                logical: 0,
                time: calls.enter(call),
                end: calls.exit(call),
            }
        })
        .collect();
    let mut arrows = Vec::new();
    let mut recv_from: Vec<Option<usize>> = vec![None; out.len()];
    for (k, &(r, i)) in evs.iter().enumerate() {
        if let EventRef::P2p(op) = events.ranks[r as usize].events[i as usize] {
            if let Some(m) = matching.by_send(r, op) {
                let recv_ev = recv_event(m.receiver, m.recv_op);
                if let Some(&to) = index.get(&(m.receiver, recv_ev)) {
                    arrows.push(Arrow { from: k, to });
                    recv_from[to] = Some(k);
                }
            }
        }
    }
    lamport(&mut out, &recv_from);
    let logical_width = out.iter().map(|e| e.logical + 1).max().unwrap_or(0);
    EventGraph {
        pattern,
        occurrence,
        ranks,
        events: out,
        arrows,
        logical_width,
    }
}

/// Lamport clocks of `events` (a rank's events consecutive, in order): each event after the
/// previous one of its rank and after the send of the message it receives (`recv_from`).
///
/// Events are taken in topological order (Kahn). Receives are listed where they were *posted*,
/// so a non-blocking receive posted before its partner's send (`MPI_Irecv` on both sides, then
/// `MPI_Isend`) closes a cycle; when only such receives are left, the first one waiting is placed
/// after its rank's previous event alone (its arrow then points back or straight down). O(events
/// + arrows) plus the cycle breaks.
pub(super) fn lamport(events: &mut [GraphEvent], recv_from: &[Option<usize>]) {
    let n = events.len();
    let mut sends_to: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut waiting = vec![0u8; n];
    for (k, from) in recv_from.iter().enumerate() {
        if let Some(s) = *from {
            sends_to[s].push(k);
            waiting[k] += 1;
        }
        if k > 0 && events[k - 1].rank == events[k].rank {
            waiting[k] += 1;
        }
    }
    // Per rank line: the range of its events; its first event not yet placed is its head.
    let mut heads: Vec<(usize, usize)> = Vec::new();
    for k in 0..n {
        if k == 0 || events[k - 1].rank != events[k].rank {
            heads.push((k, k));
        }
        heads.last_mut().expect("pushed").1 = k + 1;
    }
    let mut done = vec![false; n];
    let mut ready: Vec<usize> = (0..n).filter(|&k| waiting[k] == 0).rev().collect();
    let mut placed = 0;
    while placed < n {
        let k = match ready.pop() {
            Some(k) => k,
            None => {
                // A cycle through posted receives: every line's head waits for a message. Free the
                // first head (it only waits for its message: its predecessor is placed).
                let k = heads
                    .iter_mut()
                    .find_map(|(head, end)| {
                        while *head < *end && done[*head] {
                            *head += 1;
                        }
                        (*head < *end).then_some(*head)
                    })
                    .expect("events left to place");
                waiting[k] = 0;
                k
            }
        };
        if done[k] {
            continue;
        }
        let mut t = 0;
        if k > 0 && events[k - 1].rank == events[k].rank {
            t = events[k - 1].logical + 1;
        }
        if let Some(s) = recv_from[k].filter(|&s| done[s]) {
            t = t.max(events[s].logical + 1);
        }
        events[k].logical = t;
        done[k] = true;
        placed += 1;
        let next_on_rank = (k + 1 < n && events[k + 1].rank == events[k].rank).then_some(k + 1);
        for &r in sends_to[k].iter().chain(next_on_rank.iter()) {
            if !done[r] {
                waiting[r] = waiting[r].saturating_sub(1);
                if waiting[r] == 0 {
                    ready.push(r);
                }
            }
        }
    }
}
