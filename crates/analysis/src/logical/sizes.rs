//! Every rank's own message sizes read into the merged records (step 3b, `bytes_by_rank`).

#[allow(unused_imports)]
use super::*;

/// Read every rank's own message sizes into the records: for each rank, the operations its
/// expansion executes are lined up with the operations of its own logical sequence
/// (`own_ops`, read when the ranks were grouped); where every rank's line up (same count, send/receive and direction at every
/// position), each operation gets the ranks whose size differs from its `bytes`
/// ([`Operation::bytes_by_rank`], which then replaces `bytes_by_class`) and `true` is returned.
/// Otherwise the records are left as they are and `false` is returned.
/// An operation of a rank's own logical sequence: send or receive, the index of its direction
/// among the trace's direction names (`u32::MAX` for a wildcard or a rank), its size.
pub(super) type OpKey = (P2pDir, u32, u64);

pub(super) fn partner_index(p: &Partner, names: &[String]) -> u32 {
    match p {
        Partner::Direction(d) => names.iter().position(|n| n == d).map_or(u32::MAX, |k| k as u32),
        _ => u32::MAX,
    }
}

/// The operations of `records` in order, as [`OpKey`]s.
#[cfg(test)]
pub(super) fn op_keys_of(records: &[Record], names: &[String]) -> Vec<OpKey> {
    records
        .iter()
        .flat_map(|r| &r.call.ops)
        .map(|o| (o.dir, partner_index(&o.partner, names), o.bytes))
        .collect()
}

pub(super) fn fit_rank_sizes(
    records: &mut [Record],
    names: &[String],
    coverage: &[Vec<bool>],
    own_ops: &[Vec<OpKey>],
) -> bool {
    if own_ops.len() != coverage.len() {
        return false;
    }
    // The point-to-point operations of the records, numbered once (every rank walks them all).
    let mut flat: Vec<FitOp> = Vec::new();
    // Per point-to-point record: its index and its operations in `flat`.
    let mut p2p: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
    for (i, rec) in records.iter().enumerate() {
        if !rec.call.kind.is_p2p() {
            continue;
        }
        let from = flat.len();
        for (j, o) in rec.call.ops.iter().enumerate() {
            flat.push(FitOp {
                record: i,
                op: j,
                dir: o.dir,
                at: partner_index(&o.partner, names),
                direction: matches!(o.partner, Partner::Direction(_)),
                bytes: o.bytes,
            });
        }
        p2p.push((i, from..flat.len()));
    }
    let records_ref: &[Record] = records;
    // Which operations a rank executes depends on its directions alone when no record or
    // operation names ranks (`only_ranks`, `absent_on`): then they are listed once per set of
    // directions (a class), and each rank only compares its own operations with its class's.
    let rank_free = records
        .iter()
        .all(|r| r.call.only_ranks.is_none() && r.call.ops.iter().all(|o| o.absent_on.is_empty()));
    let visible_at = |o: &FitOp, cov: &[bool]| !o.direction || cov.get(o.at as usize).is_some_and(|&c| c);
    let mut class_of: Vec<usize> = Vec::new();
    let mut class_ops: Vec<Vec<u32>> = Vec::new();
    if rank_free {
        let mut seen: HashMap<&[bool], usize> = HashMap::new();
        for cov in coverage {
            let next = seen.len();
            let id = *seen.entry(cov.as_slice()).or_insert(next);
            if id == class_ops.len() {
                let visible = (0..flat.len() as u32).filter(|&g| visible_at(&flat[g as usize], cov));
                class_ops.push(visible.collect());
            }
            class_of.push(id);
        }
    }
    // Per rank: (operation in `flat`, size) where its size is not the operation's `bytes`, or
    // `None` when its operations do not line up.
    let per_rank = each_index(coverage.len(), |r| {
        let own = &own_ops[r];
        if rank_free {
            let visible = &class_ops[class_of[r]];
            if visible.len() != own.len() {
                return None;
            }
            let mut differs: Vec<(usize, u64)> = Vec::new();
            for (&g, &(dir, to, bytes)) in visible.iter().zip(own) {
                let o = &flat[g as usize];
                if dir != o.dir || to != o.at {
                    return None;
                }
                if bytes != o.bytes {
                    differs.push((g as usize, bytes));
                }
            }
            return Some(differs);
        }
        let rank = r as Rank;
        let cov = &coverage[r];
        let mut k = 0usize;
        let mut differs: Vec<(usize, u64)> = Vec::new();
        for (i, ops) in &p2p {
            if !records_ref[*i].call.runs_on(rank) {
                continue;
            }
            for (at, o) in flat[ops.clone()].iter().enumerate() {
                let visible = visible_at(o, cov) && records_ref[o.record].call.ops[o.op].runs_on(rank);
                if !visible {
                    continue;
                }
                let &(dir, to, bytes) = own.get(k)?;
                if dir != o.dir || to != o.at {
                    return None;
                }
                if bytes != o.bytes {
                    differs.push((ops.start + at, bytes));
                }
                k += 1;
            }
        }
        (k == own.len()).then_some(differs)
    });
    // (operation in `flat`) → (rank, size) where the size is not the operation's `bytes`: one
    // list for all operations, each operation's part counted first (a list per operation grown
    // rank by rank reallocated most of them several times).
    let Some(per_rank) = per_rank.into_iter().collect::<Option<Vec<_>>>() else {
        return false;
    };
    let mut start = vec![0usize; flat.len() + 1];
    for &(at, _) in per_rank.iter().flatten() {
        start[at + 1] += 1;
    }
    for g in 0..flat.len() {
        start[g + 1] += start[g];
    }
    let mut all: Vec<(Rank, u64)> = vec![(0, 0); start[flat.len()]];
    let mut fill = start.clone();
    for (r, list) in per_rank.iter().enumerate() {
        for &(at, bytes) in list {
            all[fill[at]] = (r as Rank, bytes);
            fill[at] += 1;
        }
    }

    for rec in records.iter_mut() {
        for o in &mut rec.call.ops {
            o.bytes_by_class.clear();
        }
    }
    let mut rest: &mut [(Rank, u64)] = &mut all;
    for (g, op) in flat.iter().enumerate() {
        let (list, tail) = std::mem::take(&mut rest).split_at_mut(start[g + 1] - start[g]);
        rest = tail;
        if list.is_empty() {
            continue;
        }
        list.sort_unstable_by_key(|&(r, b)| (b, r));
        // One entry per size, each sized once (grown rank by rank, most were reallocated).
        let table: Vec<RankBytes> = list
            .chunk_by(|x, y| x.1 == y.1)
            .map(|run| RankBytes {
                bytes: run[0].1,
                ranks: run.iter().map(|&(r, _)| r).collect(),
            })
            .collect();
        records[op.record].call.ops[op.op].bytes_by_rank = table;
    }
    true
}

/// A point-to-point operation of the records as [`fit_rank_sizes`] lines it up.
struct FitOp {
    record: usize,
    op: usize,
    dir: P2pDir,
    /// [`partner_index`] of its partner.
    at: u32,
    /// Its partner is a direction (visible only where the rank has it).
    direction: bool,
    bytes: u64,
}
