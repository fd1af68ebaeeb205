//! Which ranks are rewritten: the process-based order of representatives and the classes of
//! ranks with the same directions and the same logical sequence.

#[allow(unused_imports)]
use super::*;

/// Hash of a rank's logical sequence without sizes and tags ([`LogicalCall::shape`]): ranks
/// with the same directions and the same hash are one class of the merge. Equality only
/// matters (classes are ordered by facts of the processes), so the derived hash is enough.
#[cfg(test)]
pub(super) fn structure_hash(records: &[Record]) -> u64 {
    use std::hash::{Hash, Hasher};
    // The fields of `LogicalCall::shape`, hashed in place (no clone per record), by a
    // multiply-rotate hash: this runs over every record of every rank, where SipHash was a
    // tenth of a 16.6 M-call logical trace.
    let mut h = FastHasher(0);
    records.len().hash(&mut h);
    for r in records {
        let c = &r.call;
        c.function.hash(&mut h);
        c.kind.hash(&mut h);
        c.ops.len().hash(&mut h);
        for o in &c.ops {
            o.dir.hash(&mut h);
            o.partner.hash(&mut h);
            o.bytes_by_class.hash(&mut h);
        }
        c.completes.hash(&mut h);
        c.collective
            .as_ref()
            .map(|k| (k.op, k.root_key(), k.comm_size))
            .hash(&mut h);
        c.only_ranks.hash(&mut h);
    }
    h.finish()
}

/// The multiply-rotate word hash of rustc's `FxHasher` (deterministic, not DoS-resistant: it
/// hashes a rank's own sequence, compared for equality only).
#[derive(Default)]
pub(crate) struct FastHasher(pub u64);

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            // The length keeps "ab" and "ab\0" apart.
            self.add(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 59));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}

/// [`content_key`]: fewest calls last, then fewest operations, then the hash.
pub type ContentKey = (std::cmp::Reverse<usize>, std::cmp::Reverse<usize>, u64);

/// What a rank's trace looks like with its peers left out: calls, point-to-point operations,
/// and a hash of the functions called and of each operation's direction, tag and size in order.
/// The same process gives the same key under any numbering of the ranks, and on every platform:
/// the hash is fed fixed-width little-endian values only ([`fixed_width_hash`]), never a `usize`
/// or a derived enum hash (whose width is the pointer's: the page on wasm32 chose other
/// representatives than the CLI when ranks tied).
pub(super) fn content_key(trace: &Trace, rank: Rank) -> ContentKey {
    let rt = &trace.ranks[rank as usize];
    (
        std::cmp::Reverse(rt.calls.len()),
        std::cmp::Reverse(rt.p2p.len()),
        fixed_width_hash(
            &rt.calls.func,
            rt.calls.kind.iter().map(|&k| k as i64),
            rt.p2p.dir.iter().map(|&d| d as i64),
            &rt.p2p.tag,
            rt.p2p.bytes.iter(),
        ),
    )
}

/// SipHash-1-3 with zero keys ([`std::hash::DefaultHasher`]) over five sequences, each as its
/// length (8 bytes) then its elements (4 bytes for functions and tags, 8 for kinds, directions
/// and sizes), little-endian: on a 64-bit little-endian machine the bytes a derived `Hash` of
/// the slices writes, so the keys there are those of earlier sessions.
pub(super) fn fixed_width_hash(
    func: &tracelogic_model::Dict<u32>,
    kind: impl ExactSizeIterator<Item = i64>,
    dir: impl ExactSizeIterator<Item = i64>,
    tag: &tracelogic_model::Dict<i32>,
    bytes: impl ExactSizeIterator<Item = u64>,
) -> u64 {
    use std::hash::Hasher;
    let mut h = std::hash::DefaultHasher::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut flush = |buf: &mut Vec<u8>| {
        h.write(buf);
        buf.clear();
    };
    buf.extend((func.len() as u64).to_le_bytes());
    func.iter().for_each(|x| buf.extend(x.to_le_bytes()));
    flush(&mut buf);
    buf.extend((kind.len() as u64).to_le_bytes());
    kind.for_each(|x| buf.extend(x.to_le_bytes()));
    flush(&mut buf);
    buf.extend((dir.len() as u64).to_le_bytes());
    dir.for_each(|x| buf.extend(x.to_le_bytes()));
    flush(&mut buf);
    buf.extend((tag.len() as u64).to_le_bytes());
    tag.iter().for_each(|x| buf.extend(x.to_le_bytes()));
    flush(&mut buf);
    buf.extend((bytes.len() as u64).to_le_bytes());
    bytes.for_each(|x| buf.extend(x.to_le_bytes()));
    flush(&mut buf);
    h.finish()
}

/// Every rank, in the order in which the automatic choice prefers them as representatives: most
/// MPI calls, then most point-to-point operations, then the most ranks with the same
/// [`content_key`] (the sequence most processes execute, so the most ranks are reproduced when
/// ranks of a class differ only in message sizes: NAS LU class B's 6- and 7-column ranks, SP's
/// cells), then the key's hash, then the node the rank sits on. All but the last are facts of
/// the processes, not of their numbers, so the same process is chosen under any numbering
/// unless several processes are indistinguishable by their traces without peers (then the node
/// in the canonical placement decides).
pub(super) fn representative_order(trace: &Trace, placement: &Placement, keys: Option<&[ContentKey]>) -> Vec<Rank> {
    let keys: Vec<ContentKey> = (0..trace.num_ranks())
        .map(|r| {
            keys.and_then(|k| k.get(r as usize).copied())
                .unwrap_or_else(|| content_key(trace, r))
        })
        .collect();
    let mut alike: HashMap<ContentKey, usize> = HashMap::new();
    for k in &keys {
        *alike.entry(*k).or_default() += 1;
    }
    let mut order: Vec<(_, _, _, u32, Rank)> = keys
        .iter()
        .enumerate()
        .map(|(r, k)| {
            (
                (k.0, k.1),
                std::cmp::Reverse(alike[k]),
                k.2,
                placement.node_of_rank[r],
                r as Rank,
            )
        })
        .collect();
    order.sort_unstable();
    order.into_iter().map(|(_, _, _, _, r)| r).collect()
}

/// The ranks with a point-to-point operation whose peer is the rank itself and whose `tables`
/// (peer → topology direction) do not reach themselves, in rank order: where [`SELF_DIRECTION`]
/// exists.
pub(super) fn ranks_messaging_themselves(trace: &Trace, tables: &[HashMap<Rank, String>]) -> Vec<Rank> {
    trace
        .ranks
        .iter()
        .filter(|rt| {
            rt.p2p.peer.contains(&rt.rank) && !tables.get(rt.rank as usize).is_some_and(|t| t.contains_key(&rt.rank))
        })
        .map(|rt| rt.rank)
        .collect()
}

/// Classes of ranks with the same existing directions (`coverage`) and the same `structure`
/// (a hash of their logical sequence without sizes and tags, [`structure_hash`]; all 0 to group
/// by directions only), each represented by its first member in `order`; classes by most directions, then most members, then their
/// representatives' order. Members in rank order.
pub(super) fn classes_in_order(order: &[Rank], coverage: &[Vec<bool>], structure: &[u64]) -> Vec<(Rank, Vec<Rank>)> {
    let mut by_cover: Vec<(&Vec<bool>, Vec<Rank>)> = Vec::new();
    let mut at: HashMap<(&Vec<bool>, u64), usize> = HashMap::new();
    for &r in order {
        let key = (&coverage[r as usize], structure.get(r as usize).copied().unwrap_or(0));
        match at.get(&key) {
            Some(&k) => by_cover[k].1.push(r),
            None => {
                at.insert(key, by_cover.len());
                by_cover.push((&coverage[r as usize], vec![r]));
            }
        }
    }
    let position: HashMap<Rank, usize> = order.iter().enumerate().map(|(i, &r)| (r, i)).collect();
    by_cover.sort_by_key(|(c, m)| {
        (
            std::cmp::Reverse(c.iter().filter(|&&x| x).count()),
            std::cmp::Reverse(m.len()),
            position[&m[0]],
        )
    });
    by_cover
        .into_iter()
        .map(|(_, mut m)| {
            let rep = m[0];
            m.sort_unstable();
            (rep, m)
        })
        .collect()
}
