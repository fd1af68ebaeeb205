//! One rank's calls rewritten as records (peers as directions, or as world ranks).

#[allow(unused_imports)]
use super::*;

/// The records of one rank, with each peer rewritten by `partner` (`None`: the operation is
/// dropped). Returns the records and the number of calls left out.
pub(super) fn records_of(trace: &Trace, rank: Rank, partner: &dyn Fn(Rank) -> Option<Partner>) -> (Vec<Record>, u64) {
    let rt = &trace.ranks[rank as usize];
    let calls = &rt.calls;
    let p = &rt.p2p;
    let n = calls.len();
    // Kept operations per posting call, and the posting calls each completion completes,
    // indexed by call (vectors, not maps: this runs for every call of every rank).
    let mut ops_at: Vec<Vec<Operation>> = vec![Vec::new(); n];
    let mut completes: Vec<Vec<CallIdx>> = vec![Vec::new(); n];
    // Runs of `MPI_Waitsome`, `MPI_Test`... are one record each (completion_sets).
    let runs = completion_runs(trace, rank);
    let complete: std::borrow::Cow<[CallIdx]> = match &runs {
        Some(r) => std::borrow::Cow::Borrowed(&r.complete[..]),
        None => std::borrow::Cow::Owned(p.completes().collect()),
    };
    let mut run_cursor = 0usize;
    for (i, &c) in complete.iter().enumerate() {
        let Some(partner) = partner(p.peer[i]) else { continue };
        let post = p.post[i];
        if post as usize >= n {
            continue;
        }
        let at = &mut ops_at[post as usize];
        // Grown from one operation by doubling: `push` alone would hold room for four
        // operations (448 bytes) in every record, nearly all of which has one (a 16.6 M-call run's
        // class sequences spent a tenth of the logical trace's time in fresh pages).
        if at.len() == at.capacity() {
            at.reserve_exact(at.len().max(1));
        }
        at.push(Operation {
            dir: p.dir[i],
            partner,
            tag: p.tag[i],
            bytes: p.bytes.at(i),
            bytes_by_class: Vec::new(),
            bytes_by_rank: Vec::new(),
            absent_on: Vec::new(),
        });
        if c != post && c != NOT_COMPLETED && (c as usize) < n {
            completes[c as usize].push(post);
        }
    }
    // Per call: its collective (the last one naming it), or `NONE`.
    const NONE: u32 = u32::MAX;
    let mut coll_at: Vec<u32> = vec![NONE; n];
    for (k, &c) in rt.collectives.call.iter().enumerate() {
        if let Some(at) = coll_at.get_mut(c as usize) {
            *at = k as u32;
        }
    }
    let mut record_of_call: Vec<u32> = vec![NONE; n];
    // At most one record per call of a kind that makes records: sized once, not regrown (and
    // copied) while filled.
    let most = calls
        .kind
        .iter()
        .filter(|k| k.is_p2p() || matches!(k, CallKind::Completion | CallKind::Collective | CallKind::Lifecycle))
        .count();
    let mut out: Vec<Record> = Vec::with_capacity(most);
    let mut skipped = 0u64;
    let mut last_exit: Option<u64> = None;
    for c in 0..n as CallIdx {
        let ops = std::mem::take(&mut ops_at[c as usize]);
        let kind = record_kind(calls.kind[c as usize], ops.iter().map(|o| o.dir));
        let links = std::mem::take(&mut completes[c as usize]);
        let run = match runs.as_ref().map(|r| r.at(c, &mut run_cursor)) {
            Some(RunPosition::Starts(run)) => Some(run),
            // Part of the record of its run.
            Some(RunPosition::Inside) => continue,
            _ => None,
        };
        let keep = match kind {
            k if k.is_p2p() => !ops.is_empty(),
            CallKind::Completion => links.iter().any(|&post| record_of_call[post as usize] != NONE),
            CallKind::Collective | CallKind::Lifecycle => true,
            _ => false,
        };
        if !keep {
            skipped += 1;
            continue;
        }
        let here = out.len() as u32;
        let mut back: Vec<u32> = links
            .iter()
            .filter_map(|&post| match record_of_call[post as usize] {
                NONE => None,
                r => Some(here - r),
            })
            .collect();
        back.sort_unstable();
        back.dedup();
        let collective = (coll_at[c as usize] != NONE).then(|| {
            let k = coll_at[c as usize] as usize;
            let col = &rt.collectives;
            let comm = col.comm[k] as usize;
            let root = (col.root[k] != NO_ROOT).then_some(col.root[k]);
            Collective {
                op: col.op[k],
                root,
                root_in_comm: root_in_comm(trace, comm, root),
                root_by_rank: Vec::new(),
                comm_size: trace.comms.get(comm).map_or(0, |m| m.members.len() as u32),
                bytes_sent: col.bytes_sent[k],
                bytes_recv: col.bytes_recv[k],
            }
        });
        // A run's record lasts from its first call's entry to its last call's exit.
        let end = run.map_or(c, |r| r.last) as usize;
        let (enter, exit) = (calls.enter(c as usize), calls.exit(end));
        record_of_call[c as usize] = here;
        out.push(Record {
            call: LogicalCall {
                function: run.map_or_else(
                    || trace.functions.name(calls.func[c as usize]).to_owned(),
                    |r| r.function.clone(),
                ),
                kind,
                ops,
                collective,
                completes: back,
                calls: run.map(|r| r.calls),
                only_ranks: None,
            },
            gap_ns: last_exit.map_or(0, |e| enter.saturating_sub(e)),
            duration_ns: exit.saturating_sub(enter),
            rank,
            call_index: c,
        });
        last_exit = Some(exit);
    }
    (out, skipped)
}

/// The kind of the record a call makes: its own, except for a completion that posts operations,
/// `MPI_Start`/`MPI_Startall` of persistent requests (the readers post a persistent request's
/// operation at each start, as Score-P records it: PETSc's vector scatters send this way). Such a
/// call is a non-blocking post, `Irecv` when it posts receives only and `Isend` otherwise, so its
/// operations are kept, expanded and verified as `MPI_Isend`'s and `MPI_Irecv`'s are, and the
/// waits completing them keep their records. `records_of` and the per-rank structure hash
/// (`per_rank::shape_of`) both use it.
pub(super) fn record_kind(kind: CallKind, mut dirs: impl Iterator<Item = P2pDir>) -> CallKind {
    if kind != CallKind::Completion {
        return kind;
    }
    match dirs.next() {
        None => kind,
        Some(P2pDir::Recv) if dirs.all(|d| d == P2pDir::Recv) => CallKind::Irecv,
        Some(_) => CallKind::Isend,
    }
}

/// The rank of `root` in communicator `comm` when that communicator has fewer ranks than the
/// run ([`Collective::root_in_comm`]); `None` on a communicator of every rank or without a root.
pub(super) fn root_in_comm(trace: &Trace, comm: usize, root: Option<Rank>) -> Option<u32> {
    let members = &trace.comms.get(comm)?.members;
    if members.len() >= trace.num_ranks() as usize {
        return None;
    }
    members.iter().position(|&m| Some(m) == root).map(|i| i as u32)
}

/// The trace of one rank as records with peers as world ranks (`Partner::Rank`), every
/// point-to-point operation kept: what single-rank loop compression works on.
pub fn rank_records(trace: &Trace, rank: Rank) -> Result<Vec<Record>, String> {
    if rank >= trace.num_ranks() {
        return Err(format!(
            "rank {rank} is out of range (the trace has {} ranks)",
            trace.num_ranks()
        ));
    }
    let partner = |peer: Rank| {
        Some(if peer == ANY_SOURCE {
            Partner::Any
        } else {
            Partner::Rank(peer)
        })
    };
    Ok(records_of(trace, rank, &partner).0)
}

/// The records of `rank` with peers as world ranks, operations whose peer the logical trace
/// cannot name under `placement` dropped (none but peers beyond the run's ranks: a neighbour is
/// a direction, the rank itself [`SELF_DIRECTION`], any other rank an offset,
/// [`is_offset_direction`]), matched receives from any source naming their sender
/// ([`Sourced`]): what the expansion of a logical trace must give back for that rank.
pub fn physical_records<'a>(
    trace: impl Into<Sourced<'a>>,
    placement: &Placement,
    rank: Rank,
) -> Result<Vec<Record>, String> {
    let sourced = trace.into();
    let trace: &Trace = &sourced;
    if rank >= trace.num_ranks() || rank as usize >= placement.node_of_rank.len() {
        return Err(format!(
            "rank {rank} is out of range (the trace has {} ranks)",
            trace.num_ranks()
        ));
    }
    let partner = |peer: Rank| {
        if peer == ANY_SOURCE {
            Some(Partner::Any)
        } else {
            encodable(placement, peer).then_some(Partner::Rank(peer))
        }
    };
    Ok(records_of(trace, rank, &partner).0)
}
