//! Drawing positions for topology families whose coordinates are not already a picture: a
//! hypercube as nested squares, so that each pair of bits is one square and the ranks of a
//! sub-cube sit together. Pure geometry in a `[0, 1]²` box (the view scales it), tested natively.
//!
//! Why nested squares: a `d`-cube drawn on a circle puts `d·2^(d−1)` chords through the middle
//! and nothing can be read from 32 ranks on. Placing node `v` at `Σ_k bit_k(v)·s^⌊k/2⌋·e_(k mod 2)`
//! with `s < 1/2` draws bits 0 and 1 as the outer square, bits 2 and 3 as a smaller square at
//! each of its corners, and so on: every node gets its own place (the squares shrink faster
//! than they are spaced), every edge is parallel to an axis, and the edges of one bit have one
//! length, so the dimension an edge crosses can be read off its length.

/// Shrink factor from one square to the next: below 1/2, so smaller squares never reach the
/// next corner; 0.42 leaves a gap of 16 % of the outer side between neighbouring clusters.
const SHRINK: f64 = 0.42;

/// Positions of the `2^d` nodes of a `d`-cube, indexed by node, in a `[0, 1]²` box (aspect kept:
/// an odd `d` is wider than tall, and the box's height is then below 1).
pub fn hypercube_nodes(d: u32) -> Vec<(f64, f64)> {
    let n = 1usize << d.min(20);
    let step = |k: u32| SHRINK.powi((k / 2) as i32);
    let mut pos: Vec<(f64, f64)> = (0..n)
        .map(|v| {
            let (mut x, mut y) = (0.0, 0.0);
            for k in 0..d {
                if v >> k & 1 == 1 {
                    if k % 2 == 0 {
                        x += step(k);
                    } else {
                        y += step(k);
                    }
                }
            }
            (x, y)
        })
        .collect();
    let width = pos.iter().map(|p| p.0).fold(0.0, f64::max);
    let height = pos.iter().map(|p| p.1).fold(0.0, f64::max);
    let span = width.max(height);
    if span > 0.0 {
        for p in &mut pos {
            *p = (p.0 / span, p.1 / span);
        }
    }
    pos
}

/// Positions of `n` ranks of a `d`-cube given as `(rank, node)` pairs, or `None` when
/// the nodes do not fit the cube.
pub fn hypercube(d: u32, n: usize, node_of: impl Iterator<Item = (u32, u32)>) -> Option<Vec<(f64, f64)>> {
    if d == 0 || d > 20 || n != 1usize << d {
        return None;
    }
    let nodes = hypercube_nodes(d);
    let mut pos = vec![(0.0, 0.0); n];
    let mut seen = vec![false; n];
    let mut taken = vec![false; n];
    for (rank, node) in node_of {
        let (r, v) = (rank as usize, node as usize);
        if r >= n || v >= n || seen[r] || taken[v] {
            return None;
        }
        seen[r] = true;
        taken[v] = true;
        pos[r] = nodes[v];
    }
    seen.iter().all(|&s| s).then_some(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distance(a: (f64, f64), b: (f64, f64)) -> f64 {
        ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
    }

    #[test]
    fn every_node_has_its_own_place_and_edges_are_axis_parallel_with_one_length_per_bit() {
        for d in 1..=8u32 {
            let pos = hypercube_nodes(d);
            let n = pos.len();
            // Distinct places, at least a few pixels apart in a 560 px drawing.
            for a in 0..n {
                for b in a + 1..n {
                    assert!(distance(pos[a], pos[b]) * 560.0 > 2.0, "d={d}: {a} and {b} overlap");
                }
            }
            for k in 0..d {
                let lengths: Vec<f64> = (0..n)
                    .filter(|v| v >> k & 1 == 0)
                    .map(|v| {
                        let (a, b) = (pos[v], pos[v | 1 << k]);
                        assert!(
                            (a.0 - b.0).abs() < 1e-12 || (a.1 - b.1).abs() < 1e-12,
                            "edge not axis-parallel"
                        );
                        distance(a, b)
                    })
                    .collect();
                assert!(
                    lengths.iter().all(|l| (l - lengths[0]).abs() < 1e-12),
                    "bit {k}: several lengths"
                );
                if k >= 2 {
                    // Deeper bits are shorter edges: the dimension can be read off the length.
                    let outer = distance(pos[0], pos[1 << (k - 2)]);
                    assert!(lengths[0] < outer, "bit {k} not inside bit {}", k - 2);
                }
            }
            assert!(pos
                .iter()
                .all(|p| (0.0..=1.0).contains(&p.0) && (0.0..=1.0).contains(&p.1)));
        }
    }

    #[test]
    fn ranks_take_their_nodes_places_and_a_bad_mapping_is_refused() {
        let places = hypercube(3, 8, (0..8).map(|r| (r, 7 - r))).unwrap();
        let nodes = hypercube_nodes(3);
        assert_eq!(places[0], nodes[7]);
        assert_eq!(places[7], nodes[0]);
        assert!(
            hypercube(3, 8, (0..8).map(|r| (r, 0))).is_none(),
            "two ranks on one node"
        );
        assert!(
            hypercube(3, 8, (0..7).map(|r| (r, r))).is_none(),
            "a rank without a node"
        );
        assert!(hypercube(3, 9, (0..9).map(|r| (r, r))).is_none());
        assert!(hypercube(3, 8, (0..8).map(|r| (r, r + 1))).is_none());
    }
}
