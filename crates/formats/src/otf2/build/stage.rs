//! Rows staged before they reach a rank's columns, and the final order of a rank's calls and
//! operations.

use super::*;

/// Put a rank's point-to-point operations in posting order (receives whose completion came
/// before their request, and multi-threaded ranks, are out of order): a stable counting sort over the posting call indices, linear where the model's
/// `normalise_order` sorts by comparison (its check then finds them in order).
pub(super) fn p2p_in_posting_order(rt: &mut RankTrace) {
    let p = &mut rt.p2p;
    if !p.post.windows(2).any(|w| w[0] > w[1]) {
        return;
    }
    let calls = rt.calls.len();
    if p.post.len() > u32::MAX as usize || p.post.iter().any(|&c| c as usize >= calls) {
        return;
    }
    // starts[c] = first slot of the operations posted by call c.
    let mut starts = vec![0u32; calls + 1];
    for &c in &p.post {
        starts[c as usize + 1] += 1;
    }
    for c in 0..calls {
        starts[c + 1] += starts[c];
    }
    let mut perm = vec![0u32; p.post.len()];
    for (i, &c) in p.post.iter().enumerate() {
        let slot = &mut starts[c as usize];
        perm[*slot as usize] = i as u32;
        *slot += 1;
    }
    fn gather<T: Copy>(col: &mut Vec<T>, perm: &[u32]) {
        *col = perm.iter().map(|&i| col[i as usize]).collect();
    }
    let done: Vec<CallIdx> = perm.iter().map(|&i| p.complete(i as usize)).collect();
    gather(&mut p.post, &perm);
    p.set_completes(done);
    gather(&mut p.dir, &perm);
    p.peer = perm.iter().map(|&i| p.peer[i as usize]).collect();
    p.tag = perm.iter().map(|&i| p.tag[i as usize]).collect();
    p.comm = perm.iter().map(|&i| p.comm[i as usize]).collect();
    p.bytes = perm.iter().map(|&i| p.bytes.at(i as usize)).collect();
}

/// Reorder the calls of a rank with several threads by entry time (stable, so each thread
/// keeps its order) and renumber the operations that refer to them.
pub(super) fn sort_calls_by_entry(rt: &mut RankTrace) {
    let c = &mut rt.calls;
    let mut perm: Vec<usize> = (0..c.len()).collect();
    perm.sort_by_key(|&i| c.enter(i));
    if perm.iter().enumerate().all(|(a, &b)| a == b) {
        return;
    }
    let mut new_index = vec![0 as CallIdx; perm.len()];
    for (new, &old) in perm.iter().enumerate() {
        new_index[old] = new as CallIdx;
    }
    c.func = perm.iter().map(|&i| c.func[i]).collect();
    c.kind = perm.iter().map(|&i| c.kind[i]).collect();
    c.duration = perm.iter().map(|&i| c.duration.at(i)).collect();
    c.enter = perm.iter().map(|&i| c.enter(i)).collect();
    c.callpath = perm.iter().map(|&i| c.callpath[i]).collect();
    c.location = perm.iter().map(|&i| c.location[i]).collect();
    let renumber = |i: &mut CallIdx| {
        if *i != NOT_COMPLETED {
            *i = new_index[*i as usize];
        }
    };
    rt.p2p.renumber_calls(|i| new_index[i as usize]);
    rt.collectives.call.iter_mut().for_each(renumber);
}

/// Rows a [`Stage`] holds per table before it writes them to the rank's columns: 256 rows of
/// 32 bytes per table, 16 KiB together, stay in the first-level cache (64 and 2,048 rows
/// measured the same).
pub(super) const STAGE_ROWS: usize = 256;

/// One call on its way to the rank's [`Calls`](tracelogic_model::Calls) columns.
#[derive(Clone, Copy)]
pub(super) struct CallRow {
    pub(super) enter: Time,
    pub(super) exit: Time,
    pub(super) func: FuncId,
    pub(super) callpath: CallpathId,
    pub(super) location: u16,
    pub(super) kind: CallKind,
}

/// One point-to-point operation on its way to the rank's [`P2p`] columns.
#[derive(Clone, Copy)]
pub(super) struct P2pRow {
    pub(super) bytes: u64,
    pub(super) post: CallIdx,
    pub(super) complete: CallIdx,
    pub(super) peer: Rank,
    pub(super) tag: i32,
    pub(super) comm: CommId,
    pub(super) dir: P2pDir,
}

/// The newest calls and point-to-point operations of the rank whose location is being read,
/// row by row, written to the rank's columns one column at a time when [`STAGE_ROWS`] are
/// staged and when the location ends. Most later fields (a call's exit at its Leave, a
/// non-blocking operation's completion at its Wait) then land in the staged row, and each
/// column is written once, in one sequential run per flush: about 2 % less one-thread CPU than
/// appending every row straight to its six or seven columns (the interleaved column streams
/// themselves were not the cost: see docs/notes/performance-history.md, seventh session). Rows are numbered
/// as if appended directly (the rank's rows before the stage, then the staged ones), and a
/// later field is set wherever its row is by then.
#[derive(Default)]
pub(super) struct Stage {
    /// Calls in the rank's columns; `calls[0]` is call `calls_from`.
    pub(super) calls_from: usize,
    pub(super) calls: Vec<CallRow>,
    /// Operations in the rank's columns; `p2p[0]` is operation `p2p_from`.
    pub(super) p2p_from: usize,
    pub(super) p2p: Vec<P2pRow>,
}

impl Stage {
    /// Start staging the rows of the rank whose columns are `rt`'s (nothing may be staged).
    pub(super) fn begin(&mut self, rt: &RankTrace) {
        debug_assert!(self.calls.is_empty() && self.p2p.is_empty());
        self.calls_from = rt.calls.len();
        self.p2p_from = rt.p2p.len();
        self.calls.reserve(STAGE_ROWS);
        self.p2p.reserve(STAGE_ROWS);
    }

    /// Append a call and return its index in the rank (the span is the caller's).
    #[inline(always)]
    pub(super) fn push_call(&mut self, rt: &mut RankTrace, row: CallRow) -> CallIdx {
        if self.calls.len() == STAGE_ROWS {
            self.flush_calls(rt);
        }
        self.calls.push(row);
        (self.calls_from + self.calls.len() - 1) as CallIdx
    }

    /// Operations of the rank so far, staged ones included: the index the next one gets.
    #[inline(always)]
    pub(super) fn p2p_len(&self) -> usize {
        self.p2p_from + self.p2p.len()
    }

    /// Append a point-to-point operation.
    #[inline(always)]
    pub(super) fn push_p2p(&mut self, rt: &mut RankTrace, row: P2pRow) {
        if self.p2p.len() == STAGE_ROWS {
            self.flush_p2p(rt);
        }
        self.p2p.push(row);
    }

    /// Call `c` ends at `t` (not before its entry).
    #[inline(always)]
    pub(super) fn end_call(&mut self, rt: &mut RankTrace, c: CallIdx, t: Time) {
        match (c as usize).checked_sub(self.calls_from) {
            Some(i) => {
                let row = &mut self.calls[i];
                row.exit = t.max(row.enter);
            }
            None => {
                rt.calls.set_exit(c as usize, t);
            }
        }
    }

    /// The function of call `c`.
    pub(super) fn func(&self, rt: &RankTrace, c: CallIdx) -> FuncId {
        match (c as usize).checked_sub(self.calls_from) {
            Some(i) => self.calls[i].func,
            None => rt.calls.func[c as usize],
        }
    }

    /// Operation `op` is completed by call `call`.
    #[inline(always)]
    pub(super) fn complete(&mut self, rt: &mut RankTrace, op: usize, call: CallIdx) {
        match op.checked_sub(self.p2p_from) {
            Some(i) => self.p2p[i].complete = call,
            None => rt.p2p.set_complete(op, call),
        }
    }

    /// Receive `op` is completed by `call`, with what it received: (call, peer, tag,
    /// communicator, bytes).
    #[inline(always)]
    pub(super) fn receive(
        &mut self,
        rt: &mut RankTrace,
        op: usize,
        (call, peer, tag, comm, bytes): (CallIdx, Rank, i32, CommId, u64),
    ) {
        match op.checked_sub(self.p2p_from) {
            Some(i) => {
                let row = &mut self.p2p[i];
                row.complete = call;
                row.peer = peer;
                row.tag = tag;
                row.comm = comm;
                row.bytes = bytes;
            }
            None => {
                let p = &mut rt.p2p;
                p.set_complete(op, call);
                p.peer.set(op, peer);
                p.tag.set(op, tag);
                p.comm[op] = comm;
                p.bytes.set(op, bytes);
            }
        }
    }

    /// Write the staged calls to the rank's columns, one column after the other.
    #[inline(never)]
    pub(super) fn flush_calls(&mut self, rt: &mut RankTrace) {
        let (rows, c) = (&self.calls, &mut rt.calls);
        c.func.extend(rows.iter().map(|r| r.func));
        c.kind.extend(rows.iter().map(|r| r.kind));
        c.enter.extend(rows.iter().map(|r| r.enter));
        c.duration.extend(rows.iter().map(|r| r.exit - r.enter));
        c.callpath.extend(rows.iter().map(|r| r.callpath));
        c.location.extend(rows.iter().map(|r| r.location));
        self.calls_from += rows.len();
        self.calls.clear();
    }

    /// Write the staged operations to the rank's columns, one column after the other.
    #[inline(never)]
    pub(super) fn flush_p2p(&mut self, rt: &mut RankTrace) {
        let (rows, p) = (&self.p2p, &mut rt.p2p);
        p.post.extend(rows.iter().map(|r| r.post));
        rows.iter().for_each(|r| p.complete.push(r.post, r.complete));
        p.dir.extend(rows.iter().map(|r| r.dir));
        p.peer.extend(rows.iter().map(|r| r.peer));
        p.tag.extend(rows.iter().map(|r| r.tag));
        p.comm.extend(rows.iter().map(|r| r.comm));
        p.bytes.extend(rows.iter().map(|r| r.bytes));
        self.p2p_from += rows.len();
        self.p2p.clear();
    }

    /// Write everything staged to the rank's columns.
    pub(super) fn flush(&mut self, rt: &mut RankTrace) {
        self.flush_calls(rt);
        self.flush_p2p(rt);
    }
}

#[cfg(test)]
mod posting_order_tests {
    use super::p2p_in_posting_order;
    use tracelogic_model::{P2pDir, Trace, COMM_WORLD, NOT_COMPLETED, NO_CALLPATH};

    #[test]
    fn counting_sort_gives_the_models_stable_posting_order() {
        let mut t = Trace::new("otf2", "t", 2);
        for k in 0..6u64 {
            t.push_call(0, "MPI_Irecv", 10 * k, 10 * k + 5, NO_CALLPATH, 0);
        }
        // Receives appended out of posting order, two posted by the same call (ties keep
        // their order), one never completed.
        for (i, &(post, tag)) in [(4, 1), (1, 2), (4, 3), (0, 4), (5, 5), (1, 6), (2, 7)]
            .iter()
            .enumerate()
        {
            let complete = if i == 3 { NOT_COMPLETED } else { post };
            t.push_p2p(0, post, complete, P2pDir::Recv, 1, tag, COMM_WORLD, 8 * tag as u64);
        }
        let mut by_model = t.clone();
        by_model.normalise_order();
        p2p_in_posting_order(&mut t.ranks[0]);
        assert_eq!(t.ranks[0].p2p.post, vec![0, 1, 1, 2, 4, 4, 5]);
        assert_eq!(t.ranks[0].p2p.tag, vec![4, 2, 6, 7, 1, 3, 5]);
        assert_eq!(
            serde_json::to_string(&t).expect("serialises"),
            serde_json::to_string(&by_model).expect("serialises")
        );
    }
}

#[cfg(test)]
mod posting_order_random_tests {
    use super::p2p_in_posting_order;
    use tracelogic_model::{P2pDir, Trace, NO_CALLPATH};

    #[test]
    fn counting_sort_gives_the_models_order_on_long_random_tables() {
        let mut seed = 0x9e37_79b9_u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for (calls, ops) in [(1u64, 50u32), (300, 5000), (5000, 300), (2000, 2000)] {
            let mut t = Trace::new("otf2", "t", 1);
            for k in 0..calls {
                t.push_call(0, "MPI_Irecv", k, k + 1, NO_CALLPATH, 0);
            }
            for i in 0..ops {
                let post = next(calls) as u32;
                let dir = if i % 3 == 0 { P2pDir::Send } else { P2pDir::Recv };
                t.push_p2p(
                    0,
                    post,
                    post + next(2) as u32,
                    dir,
                    i,
                    i as i32,
                    next(4) as u32,
                    i as u64,
                );
            }
            let mut by_model = t.clone();
            by_model.normalise_order();
            p2p_in_posting_order(&mut t.ranks[0]);
            assert_eq!(
                serde_json::to_string(&t).expect("serialises"),
                serde_json::to_string(&by_model).expect("serialises"),
                "{calls} calls, {ops} operations"
            );
        }
    }
}

#[cfg(test)]
mod stage_tests {
    use super::{CallRow, P2pRow, Stage, STAGE_ROWS};
    use tracelogic_model::{CallKind, P2pDir, RankTrace, NOT_COMPLETED};

    /// Calls and operations appended, ended and completed through a [`Stage`] (flushed when
    /// full, between locations and at random points) leave the same columns as the same steps
    /// applied straight to the columns, whether the row changed later is still staged or
    /// already written.
    #[test]
    fn staged_rows_give_the_columns_of_direct_appends() {
        let mut seed = 0x9e37_79b9_u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let (mut staged, mut direct) = (RankTrace::default(), RankTrace::default());
        let mut stage = Stage::default();
        stage.begin(&staged);
        let (mut flushes, mut late_in_columns) = (0, 0);
        for step in 0..(12 * STAGE_ROWS as u64) {
            match next(10) {
                0..=2 => {
                    let row = CallRow {
                        enter: step * 10,
                        exit: step * 10,
                        func: next(5) as u32,
                        callpath: next(3) as u32,
                        location: next(2) as u16,
                        kind: CallKind::Isend,
                    };
                    let c = stage.push_call(&mut staged, row);
                    let d = direct.push_call(row.func, row.kind, row.enter, row.exit, row.callpath, row.location);
                    assert_eq!(c, d, "step {step}");
                }
                3..=5 => {
                    let row = P2pRow {
                        bytes: next(1 << 20),
                        post: step as u32,
                        complete: NOT_COMPLETED,
                        peer: next(64) as u32,
                        tag: next(9) as i32,
                        comm: 0,
                        dir: if next(2) == 0 { P2pDir::Send } else { P2pDir::Recv },
                    };
                    assert_eq!(stage.p2p_len(), direct.p2p.len(), "step {step}");
                    stage.push_p2p(&mut staged, row);
                    let r = row;
                    direct.push_p2p(r.post, r.complete, r.dir, r.peer, r.tag, r.comm, r.bytes);
                }
                6 if !direct.calls.is_empty() => {
                    let n = direct.calls.len() as u64;
                    let c = (n - 1 - next(n.min(2 * STAGE_ROWS as u64))) as u32;
                    late_in_columns += usize::from((c as usize) < staged.calls.len());
                    let t = (step * 10 + next(30)).saturating_sub(15);
                    stage.end_call(&mut staged, c, t);
                    direct.calls.set_exit(c as usize, t);
                    assert_eq!(stage.func(&staged, c), direct.calls.func[c as usize]);
                }
                7 | 8 if !direct.p2p.is_empty() => {
                    let n = direct.p2p.len() as u64;
                    let op = (n - 1 - next(n.min(2 * STAGE_ROWS as u64))) as usize;
                    late_in_columns += usize::from(op < staged.p2p.len());
                    let call = step as u32;
                    if next(2) == 0 {
                        stage.complete(&mut staged, op, call);
                        direct.p2p.set_complete(op, call);
                    } else {
                        let got = (call, next(64) as u32, next(9) as i32, 1, next(100));
                        stage.receive(&mut staged, op, got);
                        let p = &mut direct.p2p;
                        let (done, peer, tag, bytes);
                        (done, peer, tag, p.comm[op], bytes) = got;
                        p.peer.set(op, peer);
                        p.tag.set(op, tag);
                        p.set_complete(op, done);
                        p.bytes.set(op, bytes);
                    }
                }
                _ => {
                    if next(20) == 0 {
                        stage.flush(&mut staged);
                        stage.begin(&staged);
                        flushes += 1;
                    }
                }
            }
        }
        stage.flush(&mut staged);
        assert!(
            flushes > 3 && late_in_columns > 100,
            "{flushes} flushes, {late_in_columns} late"
        );
        let (a, b) = (&staged.calls, &direct.calls);
        assert_eq!(
            (&a.func, &a.kind, &a.enter, &a.duration),
            (&b.func, &b.kind, &b.enter, &b.duration)
        );
        assert_eq!((&a.callpath, &a.location), (&b.callpath, &b.location));
        let (a, b) = (&staged.p2p, &direct.p2p);
        assert_eq!(
            (&a.post, &a.completes().collect::<Vec<_>>(), &a.dir, &a.peer),
            (&b.post, &b.completes().collect::<Vec<_>>(), &b.dir, &b.peer)
        );
        assert_eq!((&a.tag, &a.comm, &a.bytes), (&b.tag, &b.comm, &b.bytes));
    }
}
