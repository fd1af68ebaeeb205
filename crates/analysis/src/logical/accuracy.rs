//! How much point-to-point traffic falls outside the topology (Logicalization §5.2), and how
//! much of it the logical trace cannot name (dropped).

#[allow(unused_imports)]
use super::*;

/// Point-to-point operations and bytes inside and outside the topology on one rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RankAccuracy {
    /// The rank.
    pub rank: Rank,
    /// Point-to-point operations (a `MPI_Sendrecv` counts two).
    pub calls: u64,
    /// Operations whose peer the logical trace cannot name (dropped from it): none on a sound
    /// trace, since a peer outside the topology is an offset ([`is_offset_direction`]); only
    /// peers beyond the run's ranks.
    pub dropped_calls: u64,
    /// Bytes of all operations.
    pub bytes: u64,
    /// Bytes of the dropped operations.
    pub dropped_bytes: u64,
    /// Operations whose peer is neither a topology neighbour nor the rank itself, kept as
    /// offset directions (before offsets, these were the dropped ones).
    #[serde(default)]
    pub offset_calls: u64,
    /// Their bytes.
    #[serde(default)]
    pub offset_bytes: u64,
}

/// How much of the point-to-point traffic falls outside the topology (Logicalization §4.3, §5.2: the
/// inaccuracy of the logical trace).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Accuracy {
    /// Operations over all ranks.
    pub calls: u64,
    /// Dropped operations over all ranks.
    pub dropped_calls: u64,
    /// Bytes over all ranks.
    pub bytes: u64,
    /// Dropped bytes over all ranks.
    pub dropped_bytes: u64,
    /// Operations outside the topology kept as offsets, over all ranks.
    #[serde(default)]
    pub offset_calls: u64,
    /// Their bytes.
    #[serde(default)]
    pub offset_bytes: u64,
    /// `dropped_calls / calls` (0 without operations).
    pub dropped_calls_fraction: f64,
    /// `dropped_bytes / bytes` (0 without bytes).
    pub dropped_bytes_fraction: f64,
    /// Per rank, in rank order.
    pub per_rank: Vec<RankAccuracy>,
}

/// Count dropped operations (peers the logical trace cannot name) and operations kept as
/// offsets (peers outside the topology) per rank under `placement`. A message of a rank to
/// itself is neither: it is a move in every topology ([`SELF_DIRECTION`]).
pub fn accuracy(trace: &Trace, placement: &Placement) -> Accuracy {
    let tables = placement.direction_tables();
    // Per rank (on every core): its neighbours as a sorted list, searched per operation.
    let per_rank = each_index(trace.ranks.len(), |k| {
        let rt = &trace.ranks[k];
        let mut ra = RankAccuracy {
            rank: rt.rank,
            ..Default::default()
        };
        let mut near: Vec<Rank> = tables
            .get(rt.rank as usize)
            .map_or_else(Vec::new, |t| t.keys().copied().collect());
        near.sort_unstable();
        for i in 0..rt.p2p.len() {
            let (peer, bytes) = (rt.p2p.peer[i], rt.p2p.bytes.at(i));
            ra.calls += 1;
            ra.bytes = ra.bytes.saturating_add(bytes);
            let inside = peer == ANY_SOURCE || peer == rt.rank || near.binary_search(&peer).is_ok();
            if !encodable(placement, peer) {
                ra.dropped_calls += 1;
                ra.dropped_bytes = ra.dropped_bytes.saturating_add(bytes);
            } else if !inside {
                ra.offset_calls += 1;
                ra.offset_bytes = ra.offset_bytes.saturating_add(bytes);
            }
        }
        ra
    });
    let mut acc = Accuracy::default();
    for ra in per_rank {
        acc.calls += ra.calls;
        acc.dropped_calls += ra.dropped_calls;
        acc.bytes = acc.bytes.saturating_add(ra.bytes);
        acc.dropped_bytes = acc.dropped_bytes.saturating_add(ra.dropped_bytes);
        acc.offset_calls += ra.offset_calls;
        acc.offset_bytes = acc.offset_bytes.saturating_add(ra.offset_bytes);
        acc.per_rank.push(ra);
    }
    acc.dropped_calls_fraction = fraction(acc.dropped_calls, acc.calls);
    acc.dropped_bytes_fraction = fraction(acc.dropped_bytes, acc.bytes);
    acc
}

pub(super) fn fraction(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}
