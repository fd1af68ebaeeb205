//! Restricting a trace to a [`Selection`], so that every analysis accepts one: the analysis runs
//! unchanged on the restricted trace.
//!
//! [`Trace::restrict`] returns a trace with the same world ranks, communicators and interned
//! tables (functions, regions, call paths, metrics: their ids stay valid) that keeps only what
//! the selection keeps:
//!
//! * **Ranks** (`ranks`, `comm`): a rank outside the selection keeps its rank number and its
//!   locations but gets an empty stream (no calls, operations or metric samples, no span). A
//!   selected rank's operations whose peer is outside the selection are kept.
//! * **Calls**: a call of a selected rank is kept when [`Selection::selects_call_of`] selects
//!   it (time window on the entry time, kinds, size bounds as `query` and `matrix` use them;
//!   with `on_comms`, only calls posting an operation on one of those communicators).
//! * **Operations**: a point-to-point or collective operation is kept when
//!   [`Selection::selects_p2p_of`] / [`Selection::selects_collective_of`] select it; its
//!   posting call is then kept too (an `MPI_Sendrecv` whose send is inside `--max-bytes` but
//!   whose receive is not keeps the call with the send only).
//! * **Completions follow their operations**: the call completing a kept non-blocking operation
//!   (`MPI_Wait*`, `MPI_Test*`) is kept when it is entered inside the time window, whatever the
//!   kind and size filters say, so `--kind isend` keeps the isends' waits and they still
//!   complete. A completion entered outside the window is dropped and the operation's
//!   `complete` becomes [`NOT_COMPLETED`]. A completion whose operations were all dropped stays
//!   when the selection selects it by itself, as a call that completes nothing.
//! * **Indices** (`P2p::post`, `P2p::complete`, `Collectives::call`) are renumbered to the
//!   kept calls; every kept operation's posting call is kept, and every `complete` names a kept
//!   call or is [`NOT_COMPLETED`].
//! * **Spans**: with a time window a selected rank's span is clipped to the window (widened to
//!   the exits of the calls kept), so durations and replays measure the window; without one it
//!   is unchanged. Metric samples outside the window are dropped.
//!
//! **Matching on a restricted trace.** [`match_messages`](crate::match_messages) pairs what is
//! left under MPI's rules. A send whose receive was dropped (the receiver is outside the rank
//! selection, its receive was entered outside the time window, or filtered by kind or size)
//! becomes an unmatched send and is counted in `unmatched_sends`; likewise a receive whose send
//! was dropped is counted in `unmatched_recvs`. A wildcard receive whose original send was
//! dropped may take another pending send that fits it. Nothing is matched across the window's
//! edge: the window is applied on each rank to its own calls — but a receive whose send was cut
//! off by `from` then takes the sender's next send, shifting that pair's later messages by one.
//! Analyses that measure time across ranks (wait states, critical path) therefore use
//! [`Trace::restrict_matching`] instead — the whole trace's pairs whose both operations are
//! kept — and [`Trace::restrict_collective_sequence`] for the collective instances.

use crate::query::rank_calls_bytes;
use crate::{
    CallIdx, Calls, Matching, Message, MetricSamples, P2pDir, Rank, RankTrace, Selection, Trace, NOT_COMPLETED,
};

impl Trace {
    /// This trace restricted to `selection` (see the [module docs](crate::restrict) for exactly
    /// what is kept). The original is untouched; [`Trace::into_restricted`] avoids holding
    /// both in memory.
    pub fn restrict(&self, selection: &Selection) -> Trace {
        let ranks = self
            .ranks
            .iter()
            .map(|rt| restrict_rank(rt, selection.selects_rank(self, rt.rank), selection))
            .collect();
        Trace {
            ranks,
            ..self.clone_without_ranks()
        }
    }

    /// [`Trace::restrict`] consuming the trace: ranks are restricted one at a time, so memory
    /// peaks at the trace plus one rank's restriction instead of two traces.
    pub fn into_restricted(mut self, selection: &Selection) -> Trace {
        let selected: Vec<bool> = self
            .ranks
            .iter()
            .map(|rt| selection.selects_rank(&self, rt.rank))
            .collect();
        for (rt, selected) in self.ranks.iter_mut().zip(selected) {
            let restricted = restrict_rank(rt, selected, selection);
            *rt = restricted;
        }
        self
    }

    /// A copy of everything but the ranks (which are left empty).
    fn clone_without_ranks(&self) -> Trace {
        Trace {
            format: self.format.clone(),
            source: self.source.clone(),
            ranks: Vec::new(),
            comms: self.comms.clone(),
            functions: self.functions.clone(),
            regions: self.regions.clone(),
            callpaths: self.callpaths.clone(),
            metrics: self.metrics.clone(),
            meta: self.meta.clone(),
            warnings: self.warnings.clone(),
            cartesian: self.cartesian.clone(),
            kind_cache: self.kind_cache.clone(),
            callpath_index: self.callpath_index.clone(),
            comm_index: self.comm_index.clone(),
        }
    }
}

impl Trace {
    /// Per rank, whether each point-to-point operation is kept by [`Trace::restrict`] with
    /// `selection`, and its index among the kept ones (`NOT_COMPLETED` when dropped).
    fn kept_p2p_index(&self, selection: &Selection) -> Vec<Vec<u32>> {
        self.ranks
            .iter()
            .map(|rt| {
                let selected = selection.selects_rank(self, rt.rank);
                let mut next = 0u32;
                (0..rt.p2p.len())
                    .map(|i| {
                        if selected && selection.selects_p2p_of(rt, i) {
                            next += 1;
                            next - 1
                        } else {
                            NOT_COMPLETED
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// The messages of `matching` (this trace's) that [`Trace::restrict`] with `selection`
    /// keeps — both operations kept — with their operation indices renumbered to the restricted
    /// trace; kept operations whose partner was dropped count as unmatched.
    ///
    /// Matching the restricted trace again pairs what is left by MPI's order rules, which is
    /// not what happened when a time window cuts a message (the send entered before `from`, the
    /// receive after): the receive then takes the sender's *next* send, and every later message
    /// of that pair shifts by one — receives "before" their sends, false dependency cycles in
    /// the critical path. This projection keeps the recorded pairs, so analyses of a window
    /// measure the messages that really crossed inside it.
    pub fn restrict_matching(&self, matching: &Matching, selection: &Selection) -> Matching {
        let index = self.kept_p2p_index(selection);
        let at = |rank: Rank, op: u32| {
            index
                .get(rank as usize)
                .and_then(|ops| ops.get(op as usize))
                .copied()
                .filter(|&i| i != NOT_COMPLETED)
        };
        let messages: Vec<Message> = matching
            .messages
            .iter()
            .filter_map(|m| {
                Some(Message {
                    sender: m.sender,
                    send_op: at(m.sender, m.send_op)?,
                    receiver: m.receiver,
                    recv_op: at(m.receiver, m.recv_op)?,
                })
            })
            .collect();
        let (mut sends, mut recvs) = (0u64, 0u64);
        for (rt, ops) in self.ranks.iter().zip(&index) {
            for (i, &k) in ops.iter().enumerate() {
                if k != NOT_COMPLETED {
                    match rt.p2p.dir[i] {
                        P2pDir::Send => sends += 1,
                        P2pDir::Recv => recvs += 1,
                    }
                }
            }
        }
        let matched = messages.len() as u64;
        Matching {
            messages,
            unmatched_sends: sends.saturating_sub(matched),
            unmatched_recvs: recvs.saturating_sub(matched),
        }
    }

    /// For each rank of [`Trace::restrict`] with `selection`, and each of its kept collective
    /// records in order: the record's position among this rank's collectives on the same
    /// communicator in *this* (unrestricted) trace. Collective instances are the `k`-th
    /// collective of each member on a communicator; in a window that cuts an instance (some
    /// members entered it before `from`) counting `k` on the restricted trace pairs the members'
    /// different instances, these numbers pair the recorded ones.
    pub fn restrict_collective_sequence(&self, selection: &Selection) -> Vec<Vec<u32>> {
        self.ranks
            .iter()
            .map(|rt| {
                if !selection.selects_rank(self, rt.rank) {
                    return Vec::new();
                }
                let mut seq: std::collections::HashMap<crate::CommId, u32> = std::collections::HashMap::new();
                let co = &rt.collectives;
                (0..co.len())
                    .filter_map(|i| {
                        let s = seq.entry(co.comm[i]).or_insert(0);
                        let k = *s;
                        *s += 1;
                        selection.selects_collective_of(rt, i).then_some(k)
                    })
                    .collect()
            })
            .collect()
    }
}

/// One rank restricted to `selection`; `selected` says whether the rank itself is selected.
fn restrict_rank(rt: &RankTrace, selected: bool, selection: &Selection) -> RankTrace {
    if !selected {
        return RankTrace {
            rank: rt.rank,
            locations: rt.locations.clone(),
            metrics: rt
                .metrics
                .iter()
                .map(|m| MetricSamples {
                    metric: m.metric,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
    }
    let calls = &rt.calls;
    let n = calls.len();
    let sized = selection.min_bytes.is_some() || selection.max_bytes.is_some();
    let sizes = if sized { rank_calls_bytes(rt) } else { Vec::new() };
    let mut keep: Vec<bool> = (0..n as CallIdx)
        .map(|c| selection.selects_call_sized(rt, c, || sizes[c as usize]))
        .collect();
    let keep_p2p: Vec<bool> = (0..rt.p2p.len()).map(|i| selection.selects_p2p_of(rt, i)).collect();
    let keep_coll: Vec<bool> = (0..rt.collectives.len())
        .map(|i| selection.selects_collective_of(rt, i))
        .collect();
    for (i, _) in keep_p2p.iter().enumerate().filter(|(_, &k)| k) {
        keep[rt.p2p.post[i] as usize] = true;
        let done = rt.p2p.complete(i) as usize;
        if done < n && selection.selects_time(calls.enter(done)) {
            keep[done] = true;
        }
    }
    for (i, _) in keep_coll.iter().enumerate().filter(|(_, &k)| k) {
        keep[rt.collectives.call[i] as usize] = true;
    }

    let mut new_index = vec![NOT_COMPLETED; n];
    for (next, (slot, _)) in (0..).zip(new_index.iter_mut().zip(&keep).filter(|(_, &k)| k)) {
        *slot = next;
    }
    let kept_calls = calls.select_rows(&keep);

    let mut p2p = rt.p2p.select_rows(&keep_p2p);
    p2p.renumber_calls(|c| new_index.get(c as usize).copied().unwrap_or(NOT_COMPLETED));
    let mut collectives = rt.collectives.select_rows(&keep_coll);
    for c in &mut collectives.call {
        *c = new_index[*c as usize];
    }

    let windowed = selection.from.is_some() || selection.to.is_some();
    let metrics = rt
        .metrics
        .iter()
        .map(|m| {
            let inside: Vec<bool> = m.time.iter().map(|&t| selection.selects_time(t)).collect();
            m.select_rows(&inside)
        })
        .collect();
    let span = if windowed {
        clipped_span(rt.span, selection, &kept_calls)
    } else {
        rt.span
    };
    RankTrace {
        rank: rt.rank,
        locations: rt.locations.clone(),
        calls: kept_calls,
        p2p,
        collectives,
        metrics,
        span,
    }
}

/// A rank's span clipped to the selection's window, widened to cover the calls kept (a call
/// entered inside the window may leave after it); `None` when nothing of the rank is inside.
fn clipped_span(span: Option<(u64, u64)>, selection: &Selection, kept: &Calls) -> Option<(u64, u64)> {
    let clipped = span.and_then(|(lo, hi)| {
        let lo = selection.from.map_or(lo, |f| lo.max(f));
        let hi = selection.to.map_or(hi, |t| hi.min(t));
        (lo <= hi).then_some((lo, hi))
    });
    let calls = kept
        .enters()
        .zip(kept.exits())
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
    match (clipped, calls) {
        (Some(s), Some(c)) => Some((s.0.min(c.0), s.1.max(c.1))),
        (s, c) => s.or(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{match_messages, CallKind, CollectiveOp, P2pDir, Rank, Time, NO_CALLPATH, NO_ROOT};

    /// Three ranks, times in ns:
    /// rank 0: Isend 100 B to 1 at 10 (Wait at 50), Barrier at 20, Send 5000 B to 2 at 30,
    ///         Sendrecv (send 100 B to 1, receive 8000 B from 1) at 40.
    /// rank 1: Irecv 100 B from 0 at 5 (Wait at 60), Barrier at 21, Sendrecv (send 8000 B to 0,
    ///         receive 100 B from 0) at 41.
    /// rank 2: Barrier at 22, Recv 5000 B from 0 at 35, one metric sampled at 0, 25 and 70.
    fn trace() -> Trace {
        let mut t = Trace::new("test", "test", 3);
        let path = t.intern_callpath(&[0]);
        let s = t.push_call(0, "MPI_Isend", 10, 11, path, 0);
        let b = t.push_call(0, "MPI_Barrier", 20, 21, NO_CALLPATH, 0);
        t.push_collective(0, b, CollectiveOp::Barrier, 0, NO_ROOT, 0, 0);
        let c = t.push_call(0, "MPI_Send", 30, 31, NO_CALLPATH, 0);
        let sr = t.push_call(0, "MPI_Sendrecv", 40, 42, path, 0);
        let w = t.push_call(0, "MPI_Wait", 50, 51, NO_CALLPATH, 0);
        t.push_p2p(0, s, w, P2pDir::Send, 1, 7, 0, 100);
        t.push_p2p(0, c, c, P2pDir::Send, 2, 0, 0, 5000);
        t.push_p2p(0, sr, sr, P2pDir::Send, 1, 3, 0, 100);
        t.push_p2p(0, sr, sr, P2pDir::Recv, 1, 3, 0, 8000);
        let r = t.push_call(1, "MPI_Irecv", 5, 6, NO_CALLPATH, 0);
        let b = t.push_call(1, "MPI_Barrier", 21, 22, NO_CALLPATH, 0);
        t.push_collective(1, b, CollectiveOp::Barrier, 0, NO_ROOT, 0, 0);
        let sr = t.push_call(1, "MPI_Sendrecv", 41, 43, NO_CALLPATH, 0);
        let w = t.push_call(1, "MPI_Wait", 60, 61, NO_CALLPATH, 0);
        t.push_p2p(1, r, w, P2pDir::Recv, 0, 7, 0, 100);
        t.push_p2p(1, sr, sr, P2pDir::Send, 0, 3, 0, 8000);
        t.push_p2p(1, sr, sr, P2pDir::Recv, 0, 3, 0, 100);
        let b = t.push_call(2, "MPI_Barrier", 22, 23, NO_CALLPATH, 0);
        t.push_collective(2, b, CollectiveOp::Barrier, 0, NO_ROOT, 0, 0);
        let c = t.push_call(2, "MPI_Recv", 35, 36, NO_CALLPATH, 0);
        t.push_p2p(2, c, c, P2pDir::Recv, 0, 0, 0, 5000);
        let m = t.metrics.intern("PAPI_TOT_INS");
        t.ranks[2].metrics.push(MetricSamples {
            metric: m,
            time: vec![0, 25, 70],
            value: vec![1.0, 2.0, 3.0],
        });
        t.ranks[2].extend_span(0, 70);
        t
    }

    fn json<T: serde::Serialize>(v: &T) -> serde_json::Value {
        serde_json::to_value(v).unwrap()
    }

    /// (rank, function, entry time) of every call, in order.
    fn calls(t: &Trace) -> Vec<(Rank, String, Time)> {
        let mut v = Vec::new();
        for rt in &t.ranks {
            for i in 0..rt.calls.len() {
                v.push((
                    rt.rank,
                    t.call_name(rt.rank, i as CallIdx).to_owned(),
                    rt.calls.enter(i),
                ));
            }
        }
        v
    }

    /// Every kept link names a kept call of the same rank; returns the (rank, function, entry) of
    /// each operation's posting call and completion (`None` when not completed).
    #[allow(clippy::type_complexity)]
    fn links(t: &Trace) -> Vec<(Rank, (String, Time), Option<(String, Time)>)> {
        let mut v = Vec::new();
        for rt in &t.ranks {
            let n = rt.calls.len();
            let at = |i: CallIdx| (t.call_name(rt.rank, i).to_owned(), rt.calls.enter(i as usize));
            for i in 0..rt.p2p.len() {
                let (post, done) = (rt.p2p.post[i], rt.p2p.complete(i));
                assert!(
                    (post as usize) < n,
                    "rank {} op {i} posted by call {post} of {n}",
                    rt.rank
                );
                assert!(done == NOT_COMPLETED || (done as usize) < n, "rank {} op {i}", rt.rank);
                v.push((rt.rank, at(post), (done != NOT_COMPLETED).then(|| at(done))));
            }
            for &c in &rt.collectives.call {
                assert!((c as usize) < n);
            }
            assert!(rt.p2p.post.windows(2).all(|w| w[0] <= w[1]));
        }
        v
    }

    #[test]
    fn restricting_to_everything_is_the_identity() {
        let t = trace();
        let everything = Selection {
            ranks: Some(vec![0, 1, 2]),
            comm: Some(crate::COMM_WORLD),
            from: Some(0),
            to: Some(1_000),
            min_bytes: Some(0),
            max_bytes: Some(u64::MAX),
            kinds: None,
            on_comms: Some(vec![crate::COMM_WORLD]),
        };
        for s in [Selection::all(), everything] {
            let r = t.restrict(&s);
            assert_eq!(json(&r), json(&t), "{s:?}");
            assert_eq!(json(&t.clone().into_restricted(&s)), json(&t));
        }
    }

    #[test]
    fn a_rank_selection_keeps_those_streams_byte_for_byte() {
        let t = trace();
        let s = Selection {
            ranks: Some(vec![0, 2]),
            ..Default::default()
        };
        let r = t.restrict(&s);
        assert_eq!(r.num_ranks(), 3);
        assert_eq!(json(&r.ranks[0]), json(&t.ranks[0]));
        assert_eq!(json(&r.ranks[2]), json(&t.ranks[2]));
        let empty = &r.ranks[1];
        assert_eq!((empty.rank, empty.calls.len(), empty.p2p.len()), (1, 0, 0));
        assert!(empty.collectives.is_empty() && empty.span.is_none());
        assert_eq!(
            (json(&r.comms), json(&r.callpaths)),
            (json(&t.comms), json(&t.callpaths))
        );
        // Rank 0's messages to rank 1 lose their receiver: unmatched; 0 -> 2 still matches.
        let m = match_messages(&r);
        assert_eq!(m.messages.len(), 1);
        assert_eq!((m.messages[0].sender, m.messages[0].receiver), (0, 2));
        assert_eq!((m.unmatched_sends, m.unmatched_recvs), (2, 1));
        let by_comm = t.restrict(&Selection {
            comm: Some(t.clone().add_comm("pair", vec![1, 2])),
            ..Default::default()
        });
        assert!(by_comm.ranks[0].calls.is_empty());
    }

    #[test]
    fn a_time_window_keeps_exactly_the_calls_entered_inside() {
        let t = trace();
        for (from, to) in [(15, 45), (0, 10), (21, 22), (36, 1_000), (100, 200)] {
            let s = Selection {
                from: Some(from),
                to: Some(to),
                ..Default::default()
            };
            let r = t.restrict(&s);
            let expected: Vec<_> = calls(&t).into_iter().filter(|c| c.2 >= from && c.2 < to).collect();
            assert_eq!(calls(&r), expected, "[{from}, {to})");
            links(&r);
        }
        let s = Selection {
            from: Some(15),
            to: Some(45),
            ..Default::default()
        };
        let r = t.restrict(&s);
        // Rank 0: the Isend was posted before the window, its Wait (50) is after: both gone.
        assert_eq!(r.ranks[0].p2p.len(), 3);
        // Spans are the window (the last call kept, entered at 42, leaves at 43).
        assert_eq!(r.ranks[0].span, Some((15, 45)));
        assert_eq!(r.ranks[2].metrics[0].time, vec![25]);
        assert_eq!(r.ranks[2].span, Some((15, 45)));
        let narrow = t.restrict(&Selection {
            from: Some(40),
            to: Some(42),
            ..Default::default()
        });
        assert_eq!(narrow.ranks[0].span, Some((40, 42)));
        assert_eq!(narrow.ranks[1].span, Some((40, 43)));
        // Rank 1's Irecv (5) is outside, so rank 0's Isend would be unmatched had it been kept;
        // the window keeps the Sendrecv pair and the Send/Recv 0 -> 2.
        let m = match_messages(&r);
        assert_eq!((m.messages.len(), m.unmatched_sends, m.unmatched_recvs), (3, 0, 0));
        assert_eq!(
            t.restrict(&Selection {
                from: Some(100),
                ..Default::default()
            })
            .ranks[2]
                .span,
            None
        );
    }

    #[test]
    fn a_send_whose_receive_fell_outside_the_window_is_unmatched() {
        let t = trace();
        // [8, 38): rank 1's Irecv (5) is before the window, rank 0's Isend (10) inside.
        let r = t.restrict(&Selection {
            from: Some(8),
            to: Some(38),
            ..Default::default()
        });
        let m = match_messages(&r);
        assert_eq!((m.messages.len(), m.unmatched_sends, m.unmatched_recvs), (1, 1, 0));
        // The Isend's Wait (50) is outside the window: the operation is not completed.
        let l = links(&r);
        assert!(l.contains(&(0, ("MPI_Isend".into(), 10), None)), "{l:?}");
    }

    #[test]
    fn completions_follow_the_operations_they_complete() {
        let t = trace();
        let isends = t.restrict(&Selection {
            kinds: Some(vec![CallKind::Isend]),
            ..Default::default()
        });
        assert_eq!(
            calls(&isends),
            vec![(0, "MPI_Isend".into(), 10), (0, "MPI_Wait".into(), 50)]
        );
        assert_eq!(
            links(&isends),
            vec![(0, ("MPI_Isend".into(), 10), Some(("MPI_Wait".into(), 50)))]
        );
        // A Wait selected by itself whose Irecv was dropped completes nothing.
        let waits = t.restrict(&Selection {
            kinds: Some(vec![CallKind::Completion]),
            ..Default::default()
        });
        assert_eq!(waits.num_calls(), 2);
        assert!(links(&waits).is_empty());
    }

    #[test]
    fn size_bounds_apply_to_each_operation() {
        let t = trace();
        let r = t.restrict(&Selection {
            max_bytes: Some(100),
            ..Default::default()
        });
        // Rank 0's Sendrecv (100 B out, 8000 B in) keeps its call and its send only.
        let p = &r.ranks[0].p2p;
        assert_eq!((p.len(), p.bytes.to_vec()), (2, vec![100, 100]));
        assert_eq!(r.call_name(0, p.post[1]), "MPI_Sendrecv");
        assert_eq!(
            json(&r.ranks[0].calls.callpath),
            json(&vec![0, NO_CALLPATH, 0, NO_CALLPATH])
        );
        // Barriers move 0 bytes: kept by max_bytes, dropped by min_bytes.
        assert_eq!(r.ranks[2].collectives.len(), 1);
        let big = t.restrict(&Selection {
            min_bytes: Some(1000),
            ..Default::default()
        });
        assert!(big.ranks.iter().all(|rt| rt.collectives.is_empty()));
        assert_eq!(links(&big).len(), 4);
    }

    #[test]
    fn nothing_selected_gives_empty_streams() {
        let t = trace();
        for s in [
            Selection {
                ranks: Some(vec![]),
                ..Default::default()
            },
            Selection {
                kinds: Some(vec![CallKind::Probe]),
                ..Default::default()
            },
        ] {
            let r = t.restrict(&s);
            assert_eq!((r.num_ranks(), r.num_calls()), (3, 0));
            assert_eq!(match_messages(&r), crate::Matching::default());
        }
    }
}
