//! Peers outside the topology as offsets in the topology's own coordinates (ScalaTrace's
//! relative encoding of peers): NAS MG's coarse levels exchange with processes two apart on a
//! 4×2×2 torus, which is no edge of the torus but the same move `(+2,0,0)` on every rank that
//! makes it. Such a peer becomes the direction named by its offset; the expansion sends to the
//! rank at that offset (wrapping on periodic axes, only where the target lies in the grid on a
//! mesh), exactly like a direction of the topology. Like `self`, an offset direction exists
//! only at the ranks that use it ([`LogicalTrace::offset_ranks`]): the ranks that do not make
//! such an exchange (MG's ranks without points on the coarsest levels) do not see its records,
//! so the merge needs no branch to skip them.
//!
//! Names (never those of a topology direction): Cartesian families `(+2,0,0)` (one entry per
//! dimension, dimension 0 first; on a periodic axis of extent `d` the offset is taken in
//! `(-d/2, d/2]`); hypercubes the bits that differ, `bit0+bit2`; every other family the node
//! `k` further modulo the nodes, `node+5` (trees, stars, butterflies, NAS CG and process grids
//! have no translation that means the same move at every node, so that is the one relative form
//! they all have). Where ranks reach the "same" peer through different offsets, their records
//! differ, and the merge keeps them apart as classes and branches (`only_ranks`), as for any
//! other rank-dependent behaviour: nothing is dropped.

#[allow(unused_imports)]
use super::*;

/// Whether `name` is an offset direction (a peer outside the topology), not a direction of
/// any topology.
pub fn is_offset_direction(name: &str) -> bool {
    name.starts_with('(') || name.starts_with("node+") || (name.starts_with("bit") && name.contains('+'))
}

impl Placement {
    /// The offset direction from `rank` to `peer` ([`is_offset_direction`]); `None` when either is
    /// not a rank of the placement or they are the same rank.
    pub fn offset_direction(&self, rank: Rank, peer: Rank) -> Option<String> {
        let u = *self.node_of_rank.get(rank as usize)?;
        let v = *self.node_of_rank.get(peer as usize)?;
        (u != v).then(|| offset_name(&self.spec, u, v))
    }

    /// The rank at offset direction `name` from `rank`, if it exists there (a mesh has no node
    /// beyond its border).
    pub fn offset_target(&self, rank: Rank, name: &str) -> Option<Rank> {
        let u = *self.node_of_rank.get(rank as usize)?;
        let v = offset_node(&self.spec, u, name)?;
        (v != u).then(|| self.rank_of_node().get(v as usize).copied())?
    }
}

impl Placement {
    /// Per rank: direction name → rank, for the topology's directions, `self` at `self_ranks`
    /// and each offset direction ([`is_offset_direction`]) at the ranks that use it: what the
    /// expansion reads a direction through.
    pub(super) fn expansion_tables(&self, self_ranks: &[Rank], offsets: &[OffsetRanks]) -> Vec<HashMap<String, Rank>> {
        let mut tables = self.neighbour_tables_with_self(self_ranks);
        if offsets.is_empty() {
            return tables;
        }
        let rank_of_node = self.rank_of_node();
        for o in offsets {
            for &r in &o.ranks {
                let Some(&u) = self.node_of_rank.get(r as usize) else {
                    continue;
                };
                if let Some(v) = offset_node(&self.spec, u, &o.direction).filter(|&v| v != u) {
                    tables[r as usize].insert(o.direction.clone(), rank_of_node[v as usize]);
                }
            }
        }
        tables
    }
}

impl LogicalTrace {
    /// The offset directions the records use (peers outside the topology), in
    /// `topology.directions` order.
    pub fn offset_directions(&self) -> Vec<String> {
        self.topology
            .directions
            .iter()
            .filter(|d| is_offset_direction(d))
            .cloned()
            .collect()
    }

    /// [`Placement::expansion_tables`] of this trace.
    pub(crate) fn expansion_tables(&self) -> Vec<HashMap<String, Rank>> {
        self.placement.expansion_tables(&self.self_ranks, &self.offset_ranks)
    }
}

/// The name of the move from node `u` to node `v` ([`is_offset_direction`]).
pub fn offset_name(spec: &TopologySpec, u: u32, v: u32) -> String {
    let f = spec.family;
    if f.is_cartesian() {
        let (a, b) = (spec.coords(u), spec.coords(v));
        let parts: Vec<String> = a
            .iter()
            .zip(&b)
            .zip(&spec.dims)
            .map(|((&x, &y), &d)| {
                let mut k = y as i64 - x as i64;
                if f.periodic() {
                    k = k.rem_euclid(d as i64);
                    if 2 * k > d as i64 {
                        k -= d as i64;
                    }
                }
                match k {
                    0 => "0".to_string(),
                    k if k > 0 => format!("+{k}"),
                    k => k.to_string(),
                }
            })
            .collect();
        format!("({})", parts.join(","))
    } else if f == Family::Hypercube {
        let m = u ^ v;
        (0..32)
            .filter(|k| m >> k & 1 == 1)
            .map(|k| format!("bit{k}"))
            .collect::<Vec<_>>()
            .join("+")
    } else {
        let n = spec.num_nodes();
        format!("node+{}", (v as u64 + n as u64 - u as u64) % n as u64)
    }
}

/// The node at offset direction `name` from node `u`, if it exists.
pub fn offset_node(spec: &TopologySpec, u: u32, name: &str) -> Option<u32> {
    let f = spec.family;
    let n = spec.num_nodes();
    if u >= n {
        return None;
    }
    if f.is_cartesian() {
        let inner = name.strip_prefix('(')?.strip_suffix(')')?;
        let steps: Vec<i64> = inner.split(',').map(|s| s.parse::<i64>().ok()).collect::<Option<_>>()?;
        if steps.len() != spec.dims.len() {
            return None;
        }
        let mut c = spec.coords(u);
        for ((x, &d), k) in c.iter_mut().zip(&spec.dims).zip(steps) {
            let mut y = *x as i64 + k;
            if f.periodic() {
                y = y.rem_euclid(d as i64);
            } else if y < 0 || y >= d as i64 {
                return None;
            }
            *x = y as u32;
        }
        spec.node_at(&c)
    } else if f == Family::Hypercube {
        let mut m = 0u32;
        for part in name.split('+') {
            let k: u32 = part.strip_prefix("bit")?.parse().ok()?;
            if k >= spec.dims[0] {
                return None;
            }
            m |= 1 << k;
        }
        Some(u ^ m)
    } else {
        let k: u64 = name.strip_prefix("node+")?.parse().ok()?;
        (k < n as u64).then(|| ((u as u64 + k) % n as u64) as u32)
    }
}

/// An offset direction and the ranks at which it exists: those that message a peer at that
/// offset ([`LogicalTrace::offset_ranks`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetRanks {
    /// The offset direction ([`is_offset_direction`]).
    pub direction: String,
    /// The ranks that use it, increasing.
    pub ranks: Vec<Rank>,
}

/// Add to each rank's peer → direction table (`tables`, [`Placement::direction_tables`] with
/// `self`) the offset direction of every peer it messages that no direction reaches. Returns
/// the offset directions used, by name, each with the ranks that use it (they follow the
/// topology's directions and `self`).
pub(super) fn add_offset_directions(
    trace: &Trace,
    placement: &Placement,
    tables: &mut [HashMap<Rank, String>],
) -> Vec<OffsetRanks> {
    // Peers already named, as flags over the ranks (one array lookup per operation instead of a
    // hash lookup: this pass reads every operation of the run), cleared after each rank.
    let n = tables.len();
    let mut named = vec![false; n];
    for rt in &trace.ranks {
        let Some(table) = tables.get_mut(rt.rank as usize) else {
            continue;
        };
        for &p in table.keys() {
            if let Some(f) = named.get_mut(p as usize) {
                *f = true;
            }
        }
        let mut far: Vec<Rank> = Vec::new();
        for &peer in &rt.p2p.peer {
            // `MPI_ANY_SOURCE` and peers beyond the run's ranks are no indices of `named`.
            if let Some(f) = named.get_mut(peer as usize).filter(|f| !**f) {
                *f = true;
                far.push(peer);
            }
        }
        for &p in table.keys().chain(&far) {
            if let Some(f) = named.get_mut(p as usize) {
                *f = false;
            }
        }
        for peer in far {
            if let Some(name) = placement.offset_direction(rt.rank, peer) {
                table.insert(peer, name);
            }
        }
    }
    let mut used: std::collections::BTreeMap<&str, Vec<Rank>> = Default::default();
    for (r, table) in tables.iter().enumerate() {
        let mut mine: Vec<&str> = table
            .values()
            .map(String::as_str)
            .filter(|d| is_offset_direction(d))
            .collect();
        mine.sort_unstable();
        mine.dedup();
        for name in mine {
            used.entry(name).or_default().push(r as Rank);
        }
    }
    used.into_iter()
        .map(|(direction, ranks)| OffsetRanks {
            direction: direction.to_owned(),
            ranks,
        })
        .collect()
}

/// Whether the logical trace can name `peer` from `rank` under `placement` at all (a topology
/// direction, `self`, or an offset): every rank of the placement and `MPI_ANY_SOURCE`. What is
/// not (a peer beyond the run's ranks, in a damaged trace) is what [`Accuracy`] still counts
/// as dropped.
pub(super) fn encodable(placement: &Placement, peer: Rank) -> bool {
    peer == ANY_SOURCE || (peer as usize) < placement.node_of_rank.len()
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn every_pair_of_nodes_has_an_offset_that_leads_back_to_it() {
        // Brute force over every ordered pair of non-adjacent nodes of small topologies of every kind.
        for s in [
            "torus:4x2x2",
            "grid:4x3",
            "stencil6:3x3",
            "stencil27-mesh:3x3x2",
            "hypercube:3",
            "binary-tree:7",
            "nas-cg:2x4",
            "ring:5",
        ] {
            let spec = TopologySpec::parse(s).unwrap();
            let n = spec.num_nodes();
            let names: Vec<String> = spec.directions().iter().map(|d| d.name()).collect();
            for u in 0..n {
                let near: Vec<u32> = spec.neighbours(u).into_iter().map(|(_, v)| v).collect();
                for v in (0..n).filter(|&v| v != u && !near.contains(&v)) {
                    let name = offset_name(&spec, u, v);
                    assert!(is_offset_direction(&name), "{s}: {name}");
                    assert!(!names.contains(&name), "{s}: {name} is a topology direction");
                    assert_eq!(offset_node(&spec, u, &name), Some(v), "{s}: {u} -> {v} as {name}");
                }
            }
        }
    }

    #[test]
    fn offsets_wrap_on_a_torus_and_stop_at_a_mesh_border() {
        let torus = TopologySpec::parse("torus:4x2x2").unwrap();
        // Node 0 (0,0,0) to node 2 (2,0,0): two apart along x, the same move as -2.
        assert_eq!(offset_name(&torus, 0, 2), "(+2,0,0)");
        assert_eq!(offset_name(&torus, 3, 1), "(+2,0,0)");
        assert_eq!(offset_node(&torus, 3, "(+2,0,0)"), Some(1));
        let grid = TopologySpec::parse("grid:4x3").unwrap();
        assert_eq!(offset_name(&grid, 0, 2), "(+2,0)");
        assert_eq!(offset_node(&grid, 2, "(+2,0)"), None);
        assert_eq!(offset_node(&grid, 1, "(+2,0)"), Some(3));
        assert_eq!(offset_node(&grid, 0, "(+2)"), None);
        assert_eq!(offset_node(&grid, 0, "east"), None);
    }
}
