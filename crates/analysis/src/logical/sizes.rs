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
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(k, n)| (n.as_str(), k)).collect();
    // (record, operation) → (rank, size) where the size is not the operation's `bytes`.
    let mut differs: HashMap<(usize, usize), Vec<(Rank, u64)>> = HashMap::new();
    for (r, cov) in coverage.iter().enumerate() {
        let rank = r as Rank;
        let mut here: Vec<&str> = names
            .iter()
            .zip(cov)
            .filter(|(_, &c)| c)
            .map(|(n, _)| n.as_str())
            .collect();
        here.sort_unstable();
        let visible = |o: &Operation| match &o.partner {
            Partner::Direction(d) => index.get(d.as_str()).is_some_and(|&k| cov[k]),
            _ => true,
        };
        let own = &own_ops[r];
        let mut k = 0usize;
        for (i, rec) in records.iter().enumerate() {
            if !rec.call.kind.is_p2p() || !rec.call.runs_on(rank) {
                continue;
            }
            for (j, o) in rec.call.ops.iter().enumerate() {
                if !visible(o) {
                    continue;
                }
                let Some(&(dir, at, bytes)) = own.get(k) else {
                    return false;
                };
                if dir != o.dir || at != partner_index(&o.partner, names) {
                    return false;
                }
                if bytes != o.bytes {
                    differs.entry((i, j)).or_default().push((rank, bytes));
                }
                k += 1;
            }
        }
        if k != own.len() {
            return false;
        }
    }
    for rec in records.iter_mut() {
        for o in &mut rec.call.ops {
            o.bytes_by_class.clear();
        }
    }
    for ((i, j), mut list) in differs {
        list.sort_unstable_by_key(|&(r, b)| (b, r));
        let mut table: Vec<RankBytes> = Vec::new();
        for (r, b) in list {
            match table.last_mut() {
                Some(e) if e.bytes == b => e.ranks.push(r),
                _ => table.push(RankBytes {
                    bytes: b,
                    ranks: vec![r],
                }),
            }
        }
        records[i].call.ops[j].bytes_by_rank = table;
    }
    true
}
