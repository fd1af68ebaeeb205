//! The program nodes of folded items: per record, its sizes, tags, gaps, per-rank sizes and
//! presence as values over its occurrences; the length they count.

use super::*;

/// The compressed length of the program of `items` (call records plus loop headers), counted
/// as [`finish`] builds it ([`build`]'s recursion without its values): equal to its
/// `compressed_length`.
pub(super) fn length(items: &[Item]) -> usize {
    items.iter().map(|i| length_of(&[i])).sum()
}

/// Nodes of [`build`] of `occurrences` (occurrences of one symbol).
pub(super) fn length_of(occurrences: &[&Item]) -> usize {
    match occurrences[0] {
        Item::Leaf(_) => 1,
        Item::Loop(_) => {
            let period = period_of(occurrences);
            let body: usize = (0..period).map(|k| length_of(&position_in(occurrences, k))).sum();
            1 + body
        }
    }
}

/// Items in a loop body of the loop `occurrences` (iterations of one symbol's loops): the
/// length of their first iteration (0 when none ran).
fn period_of(occurrences: &[&Item]) -> usize {
    occurrences
        .iter()
        .find_map(|o| match o {
            Item::Loop(its) => its.first().map(Vec::len),
            Item::Leaf(_) => None,
        })
        .unwrap_or(0)
}

/// The `k`-th item of every iteration of the loop `occurrences`, in order.
fn position_in<'a>(occurrences: &[&'a Item], k: usize) -> Vec<&'a Item> {
    occurrences
        .iter()
        .flat_map(|o| match o {
            Item::Loop(its) => its.iter().map(move |it| &it[k]),
            Item::Leaf(_) => unreachable!("occurrences share a symbol"),
        })
        .collect()
}

/// The program of the folded `items`.
pub(super) fn finish(records: &[Record], items: &[Item], options: &CompressOptions) -> Program {
    let mut id = 0u32;
    let nodes: Vec<Node> = items.iter().map(|i| build(&[i], records, &mut id, options)).collect();
    Program::of_nodes(records.len(), nodes)
}

/// The program node of a set of occurrences of the same symbol.
pub(super) fn build(occurrences: &[&Item], records: &[Record], id: &mut u32, options: &CompressOptions) -> Node {
    let my_id = *id;
    *id += 1;
    match occurrences[0] {
        Item::Leaf(first) => {
            let recs: Vec<&Record> = occurrences
                .iter()
                .map(|o| match o {
                    Item::Leaf(i) => &records[*i],
                    Item::Loop(_) => unreachable!("occurrences share a symbol"),
                })
                .collect();
            let slots = records[*first].call.sizes().len();
            let mut per_slot: Vec<Vec<u64>> = vec![Vec::with_capacity(recs.len()); slots];
            for r in &recs {
                for (k, v) in r.call.sizes().into_iter().enumerate().take(slots) {
                    per_slot[k].push(v);
                }
            }
            let ops = records[*first].call.ops.len();
            let mut per_tag: Vec<Vec<u64>> = vec![Vec::with_capacity(recs.len()); ops];
            for r in &recs {
                for (k, t) in r.call.tags().into_iter().enumerate().take(ops) {
                    per_tag[k].push(t as u32 as u64);
                }
            }
            let gaps: Vec<u64> = recs.iter().map(|r| r.gap_ns).collect();
            let n = recs.len().max(1) as u128;
            Node::Call {
                id: my_id,
                shape: records[*first].call.shape(),
                sizes: per_slot
                    .iter()
                    .enumerate()
                    .map(|(k, v)| {
                        let default = Values::compress_sizes(v, options.exact_sizes);
                        if k < ops {
                            by_rank(&recs, k, v, default, options.exact_sizes)
                        } else {
                            default
                        }
                    })
                    .collect(),
                tags: per_tag.iter().map(|v| Values::compress(v)).collect(),
                gap: Gap {
                    mean_ns: (gaps.iter().map(|&g| g as u128).sum::<u128>() / n) as u64,
                    min_ns: gaps.iter().copied().min().unwrap_or(0),
                    max_ns: gaps.iter().copied().max().unwrap_or(0),
                },
                duration_ns: (recs.iter().map(|r| r.duration_ns as u128).sum::<u128>() / n) as u64,
                present: presence(&recs, ops),
            }
        }
        Item::Loop(_) => {
            // A variant loop's arm may run 0 times in some occurrences (`variants`).
            let period = period_of(occurrences);
            let counts: Vec<u64> = occurrences
                .iter()
                .map(|o| match o {
                    Item::Loop(its) => its.len() as u64,
                    Item::Leaf(_) => unreachable!("occurrences share a symbol"),
                })
                .collect();
            let body = (0..period)
                .map(|k| build(&position_in(occurrences, k), records, id, options))
                .collect();
            Node::Loop {
                id: my_id,
                count: Values::compress(&counts),
                body,
            }
        }
    }
}

/// The sizes of operation `k` over `recs` (`defaults`, compressed as `default`) with the
/// per-rank sizes of [`crate::logical::Operation::bytes_by_rank`]: each listed rank's sequence
/// (its own size where listed, else the default), ranks with equal sequences grouped.
pub(super) fn by_rank(recs: &[&Record], k: usize, defaults: &[u64], default: Values, exact: bool) -> Values {
    let mut listed: Vec<Rank> = recs
        .iter()
        .filter_map(|r| r.call.ops.get(k))
        .flat_map(|o| o.bytes_by_rank.iter().flat_map(|e| e.ranks.iter().copied()))
        .collect();
    if listed.is_empty() {
        return default;
    }
    listed.sort_unstable();
    listed.dedup();
    // Each listed rank's own sizes as (occurrence, size), read from the tables once: looking
    // every rank up in every occurrence's table was ranks × occurrences × entries binary
    // searches. Tables whose ranks are not increasing (hand-written) are looked up as before.
    let sorted = recs
        .iter()
        .filter_map(|r| r.call.ops.get(k))
        .all(|o| o.bytes_by_rank.iter().all(|e| e.ranks.windows(2).all(|w| w[0] < w[1])));
    let mut own: Vec<Vec<(usize, u64)>> = vec![Vec::new(); if sorted { listed.len() } else { 0 }];
    if sorted {
        for (i, r) in recs.iter().enumerate() {
            for e in r.call.ops.get(k).map_or(&[][..], |o| &o.bytes_by_rank[..]) {
                for rank in &e.ranks {
                    let Ok(x) = listed.binary_search(rank) else { continue };
                    // The first entry naming a rank is its size (`find` below).
                    if own[x].last().is_none_or(|&(j, _)| j != i) {
                        own[x].push((i, e.bytes));
                    }
                }
            }
        }
    }
    let mut groups: Vec<RankValues> = Vec::new();
    let mut at: FastMap<Values, usize> = FastMap::default();
    // Ranks with the same own sizes have the same sequence: compressed once (NAS LU's ranks
    // share a handful of boundary sizes).
    let mut seen: FastMap<&[(usize, u64)], Values> = FastMap::default();
    for (x, rank) in listed.into_iter().enumerate() {
        if let Some(v) = sorted.then(|| seen.get(&own[x][..])).flatten() {
            if *v != default {
                let g = at[v];
                groups[g].ranks.push(rank);
            }
            continue;
        }
        let seq: Vec<u64> = if sorted {
            let mut seq = defaults[..defaults.len().min(recs.len())].to_vec();
            for &(i, b) in &own[x] {
                if let Some(v) = seq.get_mut(i) {
                    *v = b;
                }
            }
            seq
        } else {
            recs.iter()
                .zip(defaults)
                .map(|(r, &d)| {
                    r.call
                        .ops
                        .get(k)
                        .and_then(|o| o.bytes_by_rank.iter().find(|e| e.ranks.binary_search(&rank).is_ok()))
                        .map_or(d, |e| e.bytes)
                })
                .collect()
        };
        let v = Values::compress_sizes(&seq, exact);
        if sorted {
            seen.insert(&own[x][..], v.clone());
        }
        if v == default {
            continue;
        }
        match at.get(&v) {
            Some(&g) => groups[g].ranks.push(rank),
            None => {
                at.insert(v.clone(), groups.len());
                groups.push(RankValues {
                    ranks: vec![rank],
                    values: v,
                });
            }
        }
    }
    if groups.is_empty() {
        return default;
    }
    Values::ByRank {
        default: Box::new(default),
        ranks: groups,
    }
}

/// Per operation of `recs` (occurrences of one record, `ops` operations), whether each rank
/// runs it per occurrence ([`crate::logical::Operation::absent_on`]): `constant 1` by default
/// and, for ranks that skip it somewhere, their sequence of 1 (runs) and 0 (skips), ranks with
/// equal sequences grouped; empty when no rank skips any operation.
pub(super) fn presence(recs: &[&Record], ops: usize) -> Vec<Values> {
    if recs.iter().all(|r| r.call.ops.iter().all(|o| o.absent_on.is_empty())) {
        return Vec::new();
    }
    let always = Values::Constant { value: 1 };
    (0..ops)
        .map(|k| {
            // Per rank that skips it somewhere: the occurrences it skips.
            let mut skips: std::collections::BTreeMap<Rank, Vec<usize>> = Default::default();
            for (i, r) in recs.iter().enumerate() {
                for &rank in r.call.ops.get(k).map_or(&[][..], |o| &o.absent_on[..]) {
                    skips.entry(rank).or_default().push(i);
                }
            }
            if skips.is_empty() {
                return always.clone();
            }
            let mut groups: Vec<RankValues> = Vec::new();
            let mut at: FastMap<Vec<usize>, usize> = FastMap::default();
            for (rank, list) in skips {
                match at.get(&list) {
                    Some(&g) => groups[g].ranks.push(rank),
                    None => {
                        let mut seq = vec![1u64; recs.len()];
                        for &i in &list {
                            seq[i] = 0;
                        }
                        at.insert(list, groups.len());
                        groups.push(RankValues {
                            ranks: vec![rank],
                            values: Values::compress(&seq),
                        });
                    }
                }
            }
            Values::ByRank {
                default: Box::new(always.clone()),
                ranks: groups,
            }
        })
        .collect()
}

/// Per operation, the ranks that skip occurrence `k` of a call whose presence is `present`
/// (the inverse of [`presence`]).
pub(super) fn absent_at(present: &[Values], k: u64) -> Vec<Vec<Rank>> {
    present
        .iter()
        .map(|v| {
            let Values::ByRank { ranks, .. } = v else {
                return Vec::new();
            };
            let mut list: Vec<Rank> = ranks
                .iter()
                .filter(|g| g.values.value(k) == 0)
                .flat_map(|g| g.ranks.iter().copied())
                .collect();
            list.sort_unstable();
            list
        })
        .collect()
}

/// The per-rank size tables of occurrence `k` of a call whose sizes are `sizes` (the inverse of
/// [`by_rank`]): per operation, the ranks whose value differs from the default, by size.
pub(super) fn rank_tables_at(sizes: &[Values], ops: usize, k: u64) -> Vec<Vec<RankBytes>> {
    sizes
        .iter()
        .take(ops)
        .map(|v| {
            let Values::ByRank { default, ranks } = v else {
                return Vec::new();
            };
            let d = default.value(k);
            let mut list: Vec<(u64, Rank)> = ranks
                .iter()
                .flat_map(|g| {
                    let b = g.values.value(k);
                    g.ranks.iter().filter(move |_| b != d).map(move |&r| (b, r))
                })
                .collect();
            list.sort_unstable();
            let mut table: Vec<RankBytes> = Vec::new();
            for (b, r) in list {
                match table.last_mut() {
                    Some(e) if e.bytes == b => e.ranks.push(r),
                    _ => table.push(RankBytes {
                        bytes: b,
                        ranks: vec![r],
                    }),
                }
            }
            table
        })
        .collect()
}
