//! The per-rank passes over a logical trace at scale: verification expands the records once for
//! every rank, and the size fitting lines every rank up with them, so both cost ranks × records.
//! What makes each step constant time: the operations of the records are numbered once
//! ([`OpTable`]), with their direction as a small integer and the per-rank size tables
//! ([`Operation::bytes_by_rank`]) turned around into one list per rank, read with a cursor while a
//! rank's expansion walks the records in order (the tables list up to every rank per operation:
//! searching them per operation and rank was a sixth of the time on a 16.6 M-call run). The
//! ranks are independent, so they run on every core natively ([`each_index`]); wasm runs them in
//! order.

#[allow(unused_imports)]
use super::*;

/// A direction id of [`OpTable`] for a partner that is not a direction.
const NO_DIRECTION: u32 = u32::MAX;

/// The operations of a sequence of logical calls, numbered in order (every operation of every
/// call, whatever the call's kind).
pub(super) struct OpTable<'a> {
    /// Direction names seen in the operations, by id.
    pub names: Vec<&'a str>,
    /// Per operation: the id of its direction in `names`, or [`NO_DIRECTION`].
    pub direction: Vec<u32>,
    /// Per rank: (operation, size) of the operations whose [`Operation::bytes_by_rank`] names
    /// that rank, by increasing operation.
    own_sizes: Vec<Vec<(u32, u64)>>,
    /// Per operation: its per-rank table is not in the documented form (ranks increasing), so
    /// [`Operation::bytes_on`] answers for it as it is (a hand-written trace).
    irregular: Vec<bool>,
    /// Function names as small integers (compared for every operation of every rank): per
    /// call, its function's id; per function of the trace ([`Trace::functions`]), its id.
    pub call_function: Vec<u32>,
    pub trace_function: Vec<u32>,
    /// Ids of `MPI_Send`, `MPI_Recv` (a `MPI_Sendrecv` left with one half) and `MPI_Unknown`.
    pub send: u32,
    pub recv: u32,
    pub unknown: u32,
    /// Per call: the number of its first operation (and one past the last call's last).
    call_first: Vec<u32>,
    /// Per call: what the expansion asks of it ([`call_flags`]'s bits).
    call_flags: Vec<u8>,
    /// Per operation: its size ([`Operation::bytes`]), its peer for a world-rank partner, and
    /// [`op_flags`]'s bits. The expansion walks these few bytes per record for every rank
    /// instead of the records themselves (a record and its operation are two cache lines apart
    /// in memory: walking them for every rank of a 16.6 M-call run waited on memory), and reads
    /// a record only where a bit says it holds something rarer (branches, completions, skipped
    /// operations, per-class sizes).
    op_bytes: Vec<u64>,
    op_peer: Vec<Rank>,
    op_flags: Vec<u8>,
}

/// Bits of [`OpTable::call_flags`].
mod call_flags {
    /// A point-to-point call ([`CallKind::is_p2p`]).
    pub const P2P: u8 = 1;
    /// A completion ([`CallKind::Completion`]).
    pub const COMPLETION: u8 = 2;
    /// A `MPI_Sendrecv` ([`CallKind::SendRecv`]).
    pub const SENDRECV: u8 = 4;
    /// Executed by some ranks only ([`LogicalCall::only_ranks`]).
    pub const ONLY: u8 = 8;
    /// Completes earlier records ([`LogicalCall::completes`] not empty).
    pub const COMPLETES: u8 = 16;
}

/// Bits of [`OpTable::op_flags`].
mod op_flags {
    /// Sent (not received).
    pub const SEND: u8 = 1;
    /// Its partner is a direction.
    pub const DIRECTION: u8 = 2;
    /// Its partner is a world rank ([`OpTable::op_peer`]).
    pub const RANK: u8 = 4;
    /// Some ranks skip it ([`Operation::absent_on`] not empty).
    pub const ABSENT: u8 = 8;
    /// It has per-class sizes ([`Operation::bytes_by_class`] not empty).
    pub const CLASS: u8 = 16;
}

impl<'a> OpTable<'a> {
    /// Number the operations of `calls` for `ranks` ranks, whose trace's functions are
    /// `functions`.
    pub fn of(calls: impl IntoIterator<Item = &'a LogicalCall>, ranks: usize, functions: &'a [String]) -> OpTable<'a> {
        let mut ids: HashMap<&'a str, u32> = HashMap::new();
        let mut names = Vec::new();
        let mut direction = Vec::new();
        let mut own_sizes: Vec<Vec<(u32, u64)>> = vec![Vec::new(); ranks];
        let mut irregular = Vec::new();
        let mut fids: HashMap<&'a str, u32> = HashMap::new();
        let mut fid = |name: &'a str| {
            let next = fids.len() as u32;
            *fids.entry(name).or_insert(next)
        };
        let (send, recv, unknown) = (fid("MPI_Send"), fid("MPI_Recv"), fid("MPI_Unknown"));
        let trace_function = functions.iter().map(|f| fid(f)).collect();
        let mut call_function = Vec::new();
        let (mut call_first, mut call_flags, mut op_bytes, mut op_peer, mut op_flags) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for call in calls {
            call_function.push(fid(&call.function));
            call_first.push(direction.len() as u32);
            call_flags.push(
                if call.kind.is_p2p() { call_flags::P2P } else { 0 }
                    | if call.kind == CallKind::Completion {
                        call_flags::COMPLETION
                    } else {
                        0
                    }
                    | if call.kind == CallKind::SendRecv {
                        call_flags::SENDRECV
                    } else {
                        0
                    }
                    | if call.only_ranks.is_some() { call_flags::ONLY } else { 0 }
                    | if call.completes.is_empty() {
                        0
                    } else {
                        call_flags::COMPLETES
                    },
            );
            for o in &call.ops {
                op_bytes.push(o.bytes);
                op_peer.push(match o.partner {
                    Partner::Rank(r) => r,
                    _ => 0,
                });
                op_flags.push(
                    if o.dir == P2pDir::Send { op_flags::SEND } else { 0 }
                        | match o.partner {
                            Partner::Direction(_) => op_flags::DIRECTION,
                            Partner::Rank(_) => op_flags::RANK,
                            Partner::Any => 0,
                        }
                        | if o.absent_on.is_empty() { 0 } else { op_flags::ABSENT }
                        | if o.bytes_by_class.is_empty() {
                            0
                        } else {
                            op_flags::CLASS
                        },
                );
                let g = direction.len() as u32;
                direction.push(match &o.partner {
                    Partner::Direction(d) => *ids.entry(d.as_str()).or_insert_with(|| {
                        names.push(d.as_str());
                        names.len() as u32 - 1
                    }),
                    _ => NO_DIRECTION,
                });
                irregular.push(!add_own_sizes(o, g, &mut own_sizes));
            }
        }
        let direction_len = direction.len() as u32;
        OpTable {
            names,
            direction,
            own_sizes,
            irregular,
            call_function,
            trace_function,
            send,
            recv,
            unknown,
            call_first: {
                call_first.push(direction_len);
                call_first
            },
            call_flags,
            op_bytes,
            op_peer,
            op_flags,
        }
    }

    /// Per direction id, the neighbour of a rank whose direction → neighbour table is `table`.
    pub fn neighbours(&self, table: &HashMap<String, Rank>) -> Vec<Option<Rank>> {
        self.names.iter().map(|d| table.get(*d).copied()).collect()
    }
}

/// One point-to-point operation as verification compares it ([`PhysicalCall::key`]): function
/// ([`OpTable`]'s id), sent (not received), peer (`None` for an unresolved wildcard or a
/// direction left unexpanded) and size.
pub(super) type ExpandedKey = (u32, bool, Option<Rank>, u64);

/// Turn operation `g`'s per-rank size table ([`Operation::bytes_by_rank`]) around into
/// `own_sizes` (per rank: (operation, size), by increasing operation), the first entry naming a
/// rank being its size (`bytes_on`'s `find`). False, adding nothing, when the table's ranks are
/// not increasing: only [`Operation::bytes_on`] answers for such a table. O(ranks named).
pub(super) fn add_own_sizes<G: Copy + PartialEq>(o: &Operation, g: G, own_sizes: &mut [Vec<(G, u64)>]) -> bool {
    if !o.bytes_by_rank.iter().all(|e| e.ranks.windows(2).all(|w| w[0] < w[1])) {
        return false;
    }
    for e in &o.bytes_by_rank {
        for &r in &e.ranks {
            let Some(list) = own_sizes.get_mut(r as usize) else {
                continue;
            };
            if list.last().is_none_or(|&(last, _)| last != g) {
                list.push((g, e.bytes));
            }
        }
    }
    true
}

/// The operations the records expand to on `rank` ([`expand_with`] followed by
/// [`physical_calls`], as keys), in order, without building the calls: `neighbour` is
/// [`OpTable::neighbours`] of the rank, `here` its existing directions, sorted (for per-class
/// sizes).
#[cfg(test)]
pub(super) fn expanded_keys(
    records: &[Record],
    ops: &OpTable<'_>,
    neighbour: &[Option<Rank>],
    rank: Rank,
    here: &[&str],
) -> Vec<ExpandedKey> {
    expanded_keys_counted(records, ops, neighbour, rank, here).0
}

/// [`expanded_keys`], and the completion calls the expansion makes: one per completion record
/// kept, a completion run's [`LogicalCall::calls`] for a run's record. Reads `ops`' packed
/// tables ([`OpTable::call_flags`]), and a record of `records` (the calls `ops` numbers) only
/// where they say it holds something rarer.
pub(super) fn expanded_keys_counted(
    records: &[Record],
    ops: &OpTable<'_>,
    neighbour: &[Option<Rank>],
    rank: Rank,
    here: &[&str],
) -> (Vec<ExpandedKey>, u64) {
    let mut completion_calls = 0u64;
    let own = ops.own_sizes.get(rank as usize).map_or(&[][..], Vec::as_slice);
    let mut next_own = 0usize;
    let mut out: Vec<ExpandedKey> = Vec::new();
    // Per record: whether the rank executes it (its image in `expand_with`).
    let mut kept: Vec<bool> = Vec::with_capacity(records.len());
    for (here_at, rec) in records.iter().enumerate() {
        let flags = ops.call_flags[here_at];
        let (first, end) = (ops.call_first[here_at] as usize, ops.call_first[here_at + 1] as usize);
        if flags & call_flags::ONLY != 0 && !rec.call.runs_on(rank) {
            kept.push(false);
            continue;
        }
        let p2p = flags & call_flags::P2P != 0;
        // Operations the rank executes: all of a call that is not point-to-point, those with a
        // neighbour otherwise.
        let visible = |g: usize| -> bool {
            !p2p || (ops.op_flags[g] & op_flags::ABSENT == 0 || rec.call.ops[g - first].runs_on(rank))
                && match ops.direction[g] {
                    NO_DIRECTION => true,
                    d => neighbour[d as usize].is_some(),
                }
        };
        let count = (first..end).filter(|&g| visible(g)).count();
        let mut keep = !p2p || count > 0;
        if keep && flags & call_flags::COMPLETES != 0 {
            keep = rec
                .call
                .completes
                .iter()
                .any(|&k| here_at.checked_sub(k as usize).is_some_and(|j| kept[j]));
        }
        kept.push(keep);
        if !keep {
            continue;
        }
        if flags & call_flags::COMPLETION != 0 {
            completion_calls += rec.call.calls.unwrap_or(1);
        }
        let function = if flags & call_flags::SENDRECV != 0 && count == 1 && end - first == 2 {
            let g = (first..end).find(|&g| visible(g)).unwrap_or(first);
            if ops.op_flags[g] & op_flags::SEND != 0 {
                ops.send
            } else {
                ops.recv
            }
        } else {
            ops.call_function[here_at]
        };
        for g in first..end {
            if !visible(g) {
                continue;
            }
            let f = ops.op_flags[g];
            let rank_peer = (f & op_flags::RANK != 0).then(|| ops.op_peer[g]);
            let (peer, bytes) = if p2p {
                let peer = if f & op_flags::DIRECTION != 0 {
                    neighbour[ops.direction[g] as usize]
                } else {
                    rank_peer
                };
                (
                    peer,
                    own_size(
                        own,
                        &mut next_own,
                        g as u32,
                        ops,
                        || &rec.call.ops[g - first],
                        rank,
                        here,
                    ),
                )
            } else {
                // Kept as recorded (`restrict_call` keeps such calls whole).
                (rank_peer, ops.op_bytes[g])
            };
            out.push((function, f & op_flags::SEND != 0, peer, bytes));
        }
    }
    (out, completion_calls)
}

/// The size of operation `at` on `rank` ([`Operation::bytes_on`]): its entry in the rank's list
/// (`own`, read in increasing order from `next`), else its class's.
fn own_size<'o>(
    own: &[(u32, u64)],
    next: &mut usize,
    at: u32,
    ops: &OpTable<'_>,
    o: impl Fn() -> &'o Operation,
    rank: Rank,
    here: &[&str],
) -> u64 {
    if ops.irregular[at as usize] {
        return o().bytes_on(rank, here);
    }
    match own_entry(own, next, at) {
        Some(bytes) => bytes,
        None if ops.op_flags[at as usize] & op_flags::CLASS == 0 => ops.op_bytes[at as usize],
        None => o().class_bytes(here),
    }
}

/// The size `own` (a rank's (operation, size) list, [`add_own_sizes`]) gives operation `at`,
/// reading on from `next`, which it advances: operations are asked in increasing order.
pub(super) fn own_entry<G: Copy + PartialOrd>(own: &[(G, u64)], next: &mut usize, at: G) -> Option<u64> {
    while *next < own.len() && own[*next].0 < at {
        *next += 1;
    }
    own.get(*next).filter(|e| e.0 == at).map(|e| e.1)
}

/// [`each_index`] reporting `stage` as items finish ([`crate::progress`]), from the calling
/// thread (natively the items finish on other threads; a watching sink sees the calling
/// thread's steps only).
pub(crate) fn each_index_counted<T: Send>(stage: &'static str, n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    if !crate::progress::watched() {
        return each_index(n, f);
    }
    crate::progress::step(stage, 0, n as u64);
    #[cfg(not(target_arch = "wasm32"))]
    {
        let (finished, arrivals) = std::sync::mpsc::channel::<()>();
        std::thread::scope(|scope| {
            let f = &f;
            let work = scope.spawn(move || {
                each_index(n, |i| {
                    let t = f(i);
                    let _ = finished.send(());
                    t
                })
            });
            // Ends when `work` is done and its sender dropped.
            for (done, ()) in arrivals.iter().enumerate() {
                crate::progress::step(stage, done as u64 + 1, n as u64);
            }
            work.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
    }
    #[cfg(target_arch = "wasm32")]
    {
        each_index(n, |i| {
            let t = f(i);
            crate::progress::step(stage, i as u64 + 1, n as u64);
            t
        })
    }
}

/// `f` of every index `0..n`, in order: on every core natively (indices handed out one at a
/// time, so uneven items balance), in order on wasm.
pub(crate) fn each_index<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).min(n);
        if threads > 1 {
            let next = std::sync::atomic::AtomicUsize::new(0);
            let mut parts: Vec<(usize, T)> = std::thread::scope(|scope| {
                let workers: Vec<_> = (0..threads)
                    .map(|_| {
                        scope.spawn(|| {
                            let mut done = Vec::new();
                            loop {
                                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                if i >= n {
                                    break done;
                                }
                                done.push((i, f(i)));
                            }
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            });
            parts.sort_unstable_by_key(|(i, _)| *i);
            return parts.into_iter().map(|(_, t)| t).collect();
        }
    }
    (0..n).map(f).collect()
}

/// `a()` and `b()`: natively `a` on a thread of its own while `b` runs on this one, in turn on
/// wasm. For two independent stretches of one computation whose results are combined in order.
pub(crate) fn both<A: Send, B>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    #[cfg(not(target_arch = "wasm32"))]
    {
        if std::thread::available_parallelism().map_or(1, |t| t.get()) > 1 {
            return std::thread::scope(|scope| {
                let other = scope.spawn(a);
                let mine = b();
                (other.join().unwrap_or_else(|e| std::panic::resume_unwind(e)), mine)
            });
        }
    }
    let first = a();
    (first, b())
}

/// What the grouping of ranks into classes needs of a rank's records ([`records_of`] with
/// `partner`), read without building them: a hash of their shape (equal for two ranks exactly
/// when [`structure_hash`] of their records is, barring collisions) and their operations as
/// [`OpKey`]s ([`op_keys_of`]). The records of every rank were built only to be hashed and
/// dropped (two fifths of a 16.6 M-call logical trace); the rule of which calls are records is
/// `records_of`'s, tested against it.
pub(super) fn shape_of(
    trace: &Trace,
    rank: Rank,
    partner: &dyn Fn(Rank) -> Option<Partner>,
    names: &[String],
) -> (u64, Vec<OpKey>) {
    use std::hash::{Hash, Hasher};
    let rt = &trace.ranks[rank as usize];
    let calls = &rt.calls;
    let p = &rt.p2p;
    let n = calls.len();
    // The kept operations of each posting call, in order, as (send/receive, partner hash,
    // direction index, size): counted, then placed (one allocation for the run).
    let mut kept: Vec<Option<(u64, u32)>> = Vec::with_capacity(p.len());
    let mut start = vec![0u32; n + 1];
    // Completion call → posting calls it completes, the same way.
    let mut done_start = vec![0u32; n + 1];
    let runs = completion_runs(trace, rank);
    let complete: std::borrow::Cow<[CallIdx]> = match &runs {
        Some(r) => std::borrow::Cow::Borrowed(&r.complete[..]),
        None => std::borrow::Cow::Owned(p.completes().collect()),
    };
    let mut run_cursor = 0usize;
    // Each peer's partner, hashed and indexed once: a rank has few peers, and resolving one
    // (a direction name looked up and copied) for every operation was half of this pass.
    let mut by_peer: std::collections::HashMap<Rank, Option<(u64, u32)>, std::hash::BuildHasherDefault<FastHasher>> =
        Default::default();
    let mut last: Option<(Rank, Option<(u64, u32)>)> = None;
    for (i, &c) in complete.iter().enumerate() {
        let post = p.post[i] as usize;
        let peer = p.peer[i];
        let part = if post >= n {
            None
        } else if let Some((_, part)) = last.filter(|&(q, _)| q == peer) {
            part
        } else {
            let part = *by_peer.entry(peer).or_insert_with(|| {
                partner(peer).map(|part| {
                    let mut h = FastHasher(0);
                    part.hash(&mut h);
                    (h.finish(), partner_index(&part, names))
                })
            });
            last = Some((peer, part));
            part
        };
        kept.push(part);
        if kept[i].is_some() {
            start[post + 1] += 1;
            if c != p.post[i] && c != NOT_COMPLETED && (c as usize) < n {
                done_start[c as usize + 1] += 1;
            }
        }
    }
    for c in 0..n {
        start[c + 1] += start[c];
        done_start[c + 1] += done_start[c];
    }
    let mut ops = vec![(P2pDir::Send, 0u64, 0u32, 0u64); start[n] as usize];
    let mut done = vec![0 as CallIdx; done_start[n] as usize];
    let (mut fill, mut done_fill) = (start.clone(), done_start.clone());
    for (i, part) in kept.iter().enumerate() {
        let Some((h, at)) = *part else { continue };
        let post = p.post[i] as usize;
        ops[fill[post] as usize] = (p.dir[i], h, at, p.bytes.at(i));
        fill[post] += 1;
        let c = complete[i];
        if c != p.post[i] && c != NOT_COMPLETED && (c as usize) < n {
            done[done_fill[c as usize] as usize] = p.post[i];
            done_fill[c as usize] += 1;
        }
    }
    let mut coll_at: Vec<u32> = vec![u32::MAX; n];
    for (k, &c) in rt.collectives.call.iter().enumerate() {
        if let Some(at) = coll_at.get_mut(c as usize) {
            *at = k as u32;
        }
    }
    const NONE: u32 = u32::MAX;
    let mut record_of_call: Vec<u32> = vec![NONE; n];
    let mut h = FastHasher(0);
    let mut records = 0u32;
    let mut keys: Vec<OpKey> = Vec::with_capacity(start[n] as usize);
    let mut back: Vec<u32> = Vec::new();
    for c in 0..n {
        let here_ops = &ops[start[c] as usize..start[c + 1] as usize];
        let kind = super::rewrite::record_kind(calls.kind[c], here_ops.iter().map(|o| o.0));
        let links = &done[done_start[c] as usize..done_start[c + 1] as usize];
        // A completion run's record is named by the run's function (`records_of`).
        let run = match runs.as_ref().map(|r| r.at(c as CallIdx, &mut run_cursor)) {
            Some(RunPosition::Starts(run)) => Some(run),
            Some(RunPosition::Inside) => continue,
            _ => None,
        };
        let keep = match kind {
            k if k.is_p2p() => !here_ops.is_empty(),
            CallKind::Completion => links.iter().any(|&post| record_of_call[post as usize] != NONE),
            CallKind::Collective | CallKind::Lifecycle => true,
            _ => false,
        };
        if !keep {
            continue;
        }
        back.clear();
        back.extend(links.iter().filter_map(|&post| match record_of_call[post as usize] {
            NONE => None,
            r => Some(records - r),
        }));
        back.sort_unstable();
        back.dedup();
        record_of_call[c] = records;
        records += 1;
        // The fields `structure_hash` reads, in its order.
        run.map_or_else(|| trace.functions.name(calls.func[c]), |r| r.function.as_str())
            .hash(&mut h);
        kind.hash(&mut h);
        here_ops.len().hash(&mut h);
        for &(dir, partner, at, bytes) in here_ops {
            dir.hash(&mut h);
            h.write_u64(partner);
            keys.push((dir, at, bytes));
        }
        back.hash(&mut h);
        let col = &rt.collectives;
        match coll_at[c] {
            NONE => None,
            k => {
                let k = k as usize;
                let comm = col.comm[k] as usize;
                let root = (col.root[k] != NO_ROOT).then_some(col.root[k]);
                let root = match super::rewrite::root_in_comm(trace, comm, root) {
                    Some(local) => (Some(local), true),
                    None => (root, false),
                };
                Some((
                    col.op[k],
                    root,
                    trace.comms.get(comm).map_or(0, |m| m.members.len() as u32),
                ))
            }
        }
        .hash(&mut h);
    }
    (records as u64).hash(&mut h);
    (h.finish(), keys)
}
