//! Where each rank sits: coordinates and neighbours by direction in the matched topology.

use super::candidate::Candidate;
use super::report::{CustomPattern, Neighbour, RankPlace};
use std::borrow::Cow;
use tracelogic_graph::{Direction, Family, TopologySpec};

/// Rank → coordinates and neighbours by direction of `spec` when world rank `r` plays node
/// `node_of_rank[r]` (a bijection onto the nodes of `spec`): the `mapping` rows of a
/// [`TopologyReport`] for a placement found some other way than identification's isomorphism.
pub fn place_ranks(spec: &TopologySpec, node_of_rank: &[u32]) -> Vec<RankPlace> {
    let ranks: Vec<u32> = (0..node_of_rank.len() as u32).collect();
    places(&Candidate::Spec(spec.clone()), node_of_rank, &ranks)
}

pub(super) fn places(c: &Candidate, mapping: &[u32], ranks: &[u32]) -> Vec<RankPlace> {
    let mut rank_of_node = vec![0u32; mapping.len()];
    for (i, &node) in mapping.iter().enumerate() {
        rank_of_node[node as usize] = ranks[i];
    }
    let s = match c {
        Candidate::Spec(s) => s,
        Candidate::Custom(p) => return custom_places(p, mapping, ranks, &rank_of_node),
    };
    if matches!(s.family, Family::Star | Family::MasterWorker) {
        return mapping
            .iter()
            .enumerate()
            .map(|(i, &node)| RankPlace {
                rank: ranks[i],
                node,
                coords: s.coords(node),
                neighbours: s
                    .neighbours(node)
                    .iter()
                    .map(|(d, v)| Neighbour {
                        direction: direction_name(d),
                        rank: rank_of_node[*v as usize],
                    })
                    .collect(),
            })
            .collect();
    }
    if s.family == Family::Hypercube {
        // Direction k flips bit k: every rank has all d neighbours, all different.
        let names: Vec<Cow<'static, str>> = s.directions().iter().map(direction_name).collect();
        return mapping
            .iter()
            .enumerate()
            .map(|(i, &node)| RankPlace {
                rank: ranks[i],
                node,
                coords: s.coords(node),
                neighbours: names
                    .iter()
                    .enumerate()
                    .map(|(k, name)| Neighbour {
                        direction: name.clone(),
                        rank: rank_of_node[(node ^ (1 << k)) as usize],
                    })
                    .collect(),
            })
            .collect();
    }
    if !s.family.is_cartesian() {
        // The directions and their names once (as `TopologySpec::neighbours`: first direction
        // reaching a node wins).
        let directions = s.directions();
        let names: Vec<Cow<'static, str>> = directions.iter().map(direction_name).collect();
        // `named_by[v] == i`: node v is already a neighbour of the i-th rank (constant time per
        // neighbour; a hypercube of 65,536 ranks has 16 per rank).
        let mut named_by = vec![u32::MAX; mapping.len()];
        return mapping
            .iter()
            .enumerate()
            .map(|(i, &node)| {
                let mut neighbours: Vec<Neighbour> = Vec::with_capacity(directions.len());
                for (d, name) in directions.iter().zip(&names) {
                    if let Some(v) = s.neighbour(node, d) {
                        if std::mem::replace(&mut named_by[v as usize], i as u32) != i as u32 {
                            neighbours.push(Neighbour {
                                direction: name.clone(),
                                rank: rank_of_node[v as usize],
                            });
                        }
                    }
                }
                RankPlace {
                    rank: ranks[i],
                    node,
                    coords: s.coords(node),
                    neighbours,
                }
            })
            .collect();
    }
    // Cartesian families: the directions and their names once, and each neighbour from the
    // node's coordinates by strides (as `TopologySpec::neighbours`: first direction reaching a
    // node wins, the node itself is not its neighbour).
    let offsets = s.offsets();
    let names: Vec<Cow<'static, str>> = offsets
        .iter()
        .map(|o| direction_name(&Direction::Offset(o.clone())))
        .collect();
    let periodic = s.family.periodic();
    let mut strides = vec![1i64; s.dims.len()];
    for k in 1..s.dims.len() {
        strides[k] = strides[k - 1] * s.dims[k - 1] as i64;
    }
    mapping
        .iter()
        .enumerate()
        .map(|(i, &node)| {
            let coords = s.coords(node);
            let mut neighbours: Vec<Neighbour> = Vec::with_capacity(offsets.len());
            'offsets: for (o, name) in offsets.iter().zip(&names) {
                let mut v = node as i64;
                for (k, &step) in o.iter().enumerate() {
                    if step == 0 {
                        continue;
                    }
                    let d = s.dims[k] as i64;
                    let x = coords[k] as i64 + step as i64;
                    let wrapped = if (0..d).contains(&x) { x } else { x.rem_euclid(d) };
                    if !periodic && wrapped != x {
                        continue 'offsets;
                    }
                    v += (wrapped - coords[k] as i64) * strides[k];
                }
                let v = v as u32;
                // Ranks and nodes are in one-to-one correspondence: a node already named has its
                // rank among the neighbours.
                let rank = rank_of_node[v as usize];
                if v != node && !neighbours.iter().any(|nb| nb.rank == rank) {
                    neighbours.push(Neighbour {
                        direction: name.clone(),
                        rank,
                    });
                }
            }
            RankPlace {
                rank: ranks[i],
                node,
                coords,
                neighbours,
            }
        })
        .collect()
}

/// A direction's name, shared when it is a fixed word.
fn direction_name(d: &Direction) -> Cow<'static, str> {
    d.static_name().map_or_else(|| Cow::Owned(d.name()), Cow::Borrowed)
}

/// Rank places of a custom pattern: its node ids are the coordinates.
fn custom_places(p: &CustomPattern, mapping: &[u32], ranks: &[u32], rank_of_node: &[u32]) -> Vec<RankPlace> {
    mapping
        .iter()
        .enumerate()
        .map(|(i, &node)| RankPlace {
            rank: ranks[i],
            node,
            coords: vec![node],
            neighbours: p
                .graph
                .neighbors(node)
                .iter()
                .map(|&v| Neighbour {
                    direction: Cow::Owned(format!("node{v}")),
                    rank: rank_of_node[v as usize],
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_graph::catalog::candidates;

    #[test]
    fn places_name_the_neighbours_of_the_family_definition() {
        // The Cartesian fast path against `TopologySpec::neighbours`, small extents included
        // (where two offsets reach the same node, or the node itself).
        let mut checked = 0;
        for n in [1u32, 2, 4, 6, 8, 9, 12, 18, 27, 36, 64] {
            for spec in candidates(n) {
                let mapping: Vec<u32> = (0..n).rev().collect();
                let ranks: Vec<u32> = (0..n).map(|r| r + 100).collect();
                let got = places(&Candidate::Spec(spec.clone()), &mapping, &ranks);
                for (i, place) in got.iter().enumerate() {
                    let node = mapping[i];
                    assert_eq!(place.rank, ranks[i]);
                    assert_eq!(place.coords, spec.coords(node), "{}", spec.label());
                    let expected: Vec<(String, u32)> = spec
                        .neighbours(node)
                        .into_iter()
                        .map(|(d, v)| (d.name(), ranks[(n - 1 - v) as usize]))
                        .collect();
                    let named: Vec<(String, u32)> = place
                        .neighbours
                        .iter()
                        .map(|nb| (nb.direction.to_string(), nb.rank))
                        .collect();
                    assert_eq!(named, expected, "{} node {node}", spec.label());
                }
                checked += 1;
            }
        }
        assert!(checked > 100, "{checked}");
    }
}
