//! The messages and collective instances a timeline tile lists: those of the window between the
//! drawn ranks, evenly sampled beyond the query's caps.

use super::*;

/// Messages between drawn ranks whose send or receive falls in the window; beyond the cap, an
/// even sample of them.
///
/// Sends: the operations posted by the calls beginning in the window (a range of calls on a
/// rank whose calls are in order of entry). Receives: those completed by calls ending in the
/// window whose send is outside it; on a rank whose calls are ordered and disjoint only the
/// receives completing within the rank's longest message latency after `from` (or its largest
/// clock inversion before `to`) can have their send outside, so only those are looked at. The
/// cost is that of the sends listed plus those receives, not of every receive in the window.
#[allow(clippy::too_many_arguments)]
pub(super) fn messages_in(
    trace: &Trace,
    matching: &Matching,
    index: &TimelineIndex,
    query: &TimelineQuery,
    ranks: &[Rank],
    shown: &[bool],
    from: u64,
    to: u64,
) -> (Vec<TileMessage>, u64) {
    let clock = query.clock;
    let Some(ci) = index.clock(clock) else {
        return (Vec::new(), 0);
    };
    let msgs = &matching.messages;
    let all_shown = shown.iter().all(|&s| s);
    let send_t = |k: usize| {
        let m = &msgs[k];
        let c = trace.ranks[m.sender as usize].p2p.post[m.send_op as usize];
        index.span_of(trace, clock, m.sender as usize, c as usize).0
    };
    let recv_t = |k: usize| {
        let m = &msgs[k];
        let p = &trace.ranks[m.receiver as usize].p2p;
        let c = completion(p.post[m.recv_op as usize], p.complete(m.recv_op as usize));
        index.span_of(trace, clock, m.receiver as usize, c as usize).1
    };
    let inside = |t: u64| t >= from && t < to;
    // Per drawn rank: the calls beginning in the window, when its calls are in order of entry.
    let begins: Vec<Option<(u32, u32)>> = ranks
        .iter()
        .map(|&r| {
            let r = r as usize;
            (clock == Clock::Logical || index.order[r].is_none()).then(|| {
                let n = trace.ranks[r].calls.len();
                let begin = |p: usize| index.span_of(trace, clock, r, p).0;
                (
                    partition(n, |p| begin(p) < from) as u32,
                    partition(n, |p| begin(p) < to) as u32,
                )
            })
        })
        .collect();
    // Per drawn rank: its operations posted in the window, and whether every matched send among
    // them is listed (calls in order of entry, every rank drawn): then they are counted and
    // sampled from `sends_before` without visiting each.
    let ops: Vec<(usize, usize, bool)> = ranks
        .iter()
        .enumerate()
        .map(|(j, &r)| {
            let p = &trace.ranks[r as usize].p2p;
            let (c0, c1) = begins[j].unwrap_or((0, trace.ranks[r as usize].calls.len() as u32));
            (
                p.post.partition_point(|&c| c < c0),
                p.post.partition_point(|&c| c < c1),
                all_shown && begins[j].is_some(),
            )
        })
        .collect();
    let counted: Vec<u64> = ranks
        .iter()
        .zip(&ops)
        .map(|(&r, &(k0, k1, fast))| {
            if fast {
                index.sends_upto(matching, r as usize, k1) - index.sends_upto(matching, r as usize, k0)
            } else {
                0
            }
        })
        .collect();
    // Receives whose send is outside the window: none when the window starts at 0 and ends
    // after every call's begin (the whole run), so the receive side of the index is not needed.
    let receives = (from > 0 || to <= ci.last_begin).then(|| {
        (
            index.receives(trace, matching),
            index.latency(trace, matching, clock, ci),
        )
    });
    // Visit every listed message once, except the counted sends: by its send when the send is
    // inside, else by its receive.
    let visit = |f: &mut dyn FnMut(usize)| {
        for (j, &r) in ranks.iter().enumerate() {
            let r = r as usize;
            let p = &trace.ranks[r].p2p;
            let exact = begins[j].is_some();
            let (k0, k1, fast) = ops[j];
            if !fast {
                for m in index.sends_in(matching, r, k0, k1) {
                    if (!all_shown && !shown[msgs[m].receiver as usize]) || (!exact && !inside(send_t(m))) {
                        continue;
                    }
                    f(m);
                }
            }
            let Some((rx, latency)) = receives else {
                continue;
            };
            let rc = &rx.by_completion[r];
            let ordered = clock == Clock::Logical || (index.order[r].is_none() && index.disjoint[r]);
            let check = |ks: &[u32], f: &mut dyn FnMut(usize)| {
                for &k in ks {
                    let m = rx.msg_of_op[r][k as usize];
                    if m == NONE {
                        continue;
                    }
                    let mm = &msgs[m as usize];
                    if !shown[mm.sender as usize] || !inside(recv_t(m as usize)) || inside(send_t(m as usize)) {
                        continue;
                    }
                    f(m as usize);
                }
            };
            if !ordered {
                check(rc, f);
                continue;
            }
            // Completing calls ending in [a, b): their ends increase with the call index.
            let n = trace.ranks[r].calls.len();
            let end = |c: usize| index.span_of(trace, clock, r, c).1;
            let range = |a: u64, b: u64| -> (usize, usize) {
                let e0 = partition(n, |c| end(c) < a) as u32;
                let e1 = partition(n, |c| end(c) < b) as u32;
                let cpl = |k: &u32| completion(p.post[*k as usize], p.complete(*k as usize));
                (rc.partition_point(|k| cpl(k) < e0), rc.partition_point(|k| cpl(k) < e1))
            };
            let (late, early) = latency[r];
            // Sends before `from`: received within `late` of their send, so ending before from + late.
            let (a0, a1) = range(from, to.min(from.saturating_add(late).saturating_add(1)));
            check(&rc[a0..a1], f);
            // Sends at or after `to` (a receive ending before its send: clock inversion).
            if early > 0 {
                let (b0, b1) = range(from.max(to.saturating_sub(early)), to);
                let b0 = b0.max(a1);
                if b0 < b1 {
                    check(&rc[b0..b1], f);
                }
            }
        }
    };
    let fast_total: u64 = counted.iter().sum();
    let mut visited = 0u64;
    visit(&mut |_| visited += 1);
    let total = fast_total + visited;
    let cap = query.max_messages as u64;
    let mut out = Vec::with_capacity(total.min(cap) as usize);
    let roles = crate::waits::roles(trace);
    let tile_message = |k: usize| {
        let m = &msgs[k];
        let sp = &trace.ranks[m.sender as usize].p2p;
        let rp = &trace.ranks[m.receiver as usize].p2p;
        let rc = completion(rp.post[m.recv_op as usize], rp.complete(m.recv_op as usize));
        let time = (
            index
                .span_of(
                    trace,
                    Clock::Time,
                    m.sender as usize,
                    sp.post[m.send_op as usize] as usize,
                )
                .0,
            index.span_of(trace, Clock::Time, m.receiver as usize, rc as usize).1,
        );
        let w = crate::waits::message_wait(trace, &roles, m).unwrap_or_default();
        TileMessage {
            sender: m.sender,
            receiver: m.receiver,
            send: send_t(k),
            recv: recv_t(k),
            bytes: sp.bytes.at(m.send_op as usize),
            tag: sp.tag[m.send_op as usize],
            time,
            late_sender: w.late_sender.map_or(0, |x| x.1),
            late_receiver: w.late_receiver.map_or(0, |x| x.1),
        }
    };
    if cap > 0 {
        // Message number `seen` (counted sends first, rank by rank, then the visited ones) is
        // kept when it starts its share of total / cap: the sample is even.
        let keep = |seen: u64| {
            total <= cap
                || (seen as u128 * cap as u128) / total as u128 != ((seen as u128 + 1) * cap as u128) / total as u128
        };
        // The first message number at or after `seen` that is kept: kept numbers are
        // ⌈(i + 1)·total / cap⌉ − 1 for i = 0, 1, ...
        let next_kept = |seen: u64| -> u64 {
            if total <= cap {
                return seen;
            }
            let (t, c) = (total as u128, cap as u128);
            let mut i = seen as u128 * c / t;
            loop {
                let s = ((i + 1) * t).div_ceil(c) - 1;
                if s >= seen as u128 {
                    return s as u64;
                }
                i += 1;
            }
        };
        let mut base = 0u64;
        for ((&r, &(k0, _, fast)), &n) in ranks.iter().zip(&ops).zip(&counted) {
            if !fast || n == 0 {
                continue;
            }
            let first = index.sends_upto(matching, r as usize, k0);
            let mut s = next_kept(base);
            while s < base + n && out.len() < cap as usize {
                out.push(tile_message(index.nth_send(r as usize, first + (s - base))));
                s = next_kept(s + 1);
            }
            base += n;
        }
        let mut seen = fast_total;
        visit(&mut |k| {
            if keep(seen) {
                out.push(tile_message(k));
            }
            seen += 1;
        });
    }
    let left = total - out.len() as u64;
    (out, left)
}

pub(super) fn collectives_in(
    index: &TimelineIndex,
    clock: &ClockIndex,
    query: &TimelineQuery,
    shown: &[bool],
    from: u64,
    to: u64,
) -> (Vec<TileCollective>, u64) {
    let start = clock.colls_max_end.partition_point(|&e| e <= from);
    let mut out = Vec::new();
    let mut left = 0;
    for &(b, e, k) in &clock.colls[start..] {
        if b >= to {
            break;
        }
        if e <= from {
            continue;
        }
        let inst = &index.instances[k as usize];
        if !inst.members.iter().any(|&(r, _)| shown[r as usize]) {
            continue;
        }
        if out.len() >= query.max_collectives as usize {
            left += 1;
            continue;
        }
        out.push(TileCollective {
            func: inst.func,
            comm: inst.comm,
            begin: b,
            end: e.max(b),
            participants: inst.members.len() as u32,
            root: inst.root,
        });
    }
    (out, left)
}
