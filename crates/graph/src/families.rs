//! The reference topology families: what a grid, torus, stencil, hypercube, tree, ring or
//! all-to-all of given dimensions is, node by node, with coordinates and named directions.
//!
//! This is the one definition used by the generator (to write traces of a known topology),
//! by topology identification (to build candidate graphs and report mappings) and by the
//! logical trace (to name directions).
//!
//! Conventions:
//! - Nodes of Cartesian families are numbered row-major with dimension 0 varying fastest:
//!   `node = c0 + d0·(c1 + d1·(c2 + ...))`.
//! - In 2D, `+dim0` is `east`, `−dim0` `west`, `+dim1` `south`, `−dim1` `north` (rows grow
//!   downwards), and diagonals combine them (`southwest` = (−1, +1)). In 3D, `+dim2` is `up` and
//!   `−dim2` `down`. Beyond, directions are written `+d3`, `-d4`.
//! - `stencil6` is the 2D periodic 6-point stencil of NAS BT/SP's multi-partition scheme
//!   (seed 000, Table 5): the four axis neighbours plus the `northeast`/`southwest` diagonal,
//!   with wrap-around. `stencil8` is the periodic 8-point (Moore) neighbourhood. The `-mesh`
//!   variants do not wrap.
//! - A `binary-tree` of n nodes is heap-numbered: the children of `i` are `2i+1` and `2i+2`.
//! - A `hypercube` of dimension d is the 2×…×2 grid of 2^d nodes (neighbours differ in one bit).

use crate::Graph;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A kind of topology; with dimensions it becomes a [`TopologySpec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Cartesian mesh without wrap-around, any number of dimensions.
    Grid,
    /// Cartesian mesh with wrap-around in every dimension.
    Torus,
    /// Periodic 2D 6-point stencil (axis neighbours + one diagonal pair), as NAS BT/SP.
    Stencil6,
    /// Non-periodic 2D 6-point stencil.
    Stencil6Mesh,
    /// Periodic 2D 8-point stencil (axis neighbours + both diagonals).
    Stencil8,
    /// Non-periodic 2D 8-point stencil.
    Stencil8Mesh,
    /// 2^d nodes, neighbours differ in one bit. `dims = [d]`.
    Hypercube,
    /// Heap-numbered binary tree. `dims = [n]`.
    BinaryTree,
    /// Every node talks to every other. `dims = [n]`.
    AllToAll,
    /// A cycle. `dims = [n]`.
    Ring,
}

impl Family {
    /// Every family, in the order candidates are listed.
    pub const ALL: [Family; 10] = [
        Family::Grid,
        Family::Torus,
        Family::Stencil6,
        Family::Stencil6Mesh,
        Family::Stencil8,
        Family::Stencil8Mesh,
        Family::Hypercube,
        Family::BinaryTree,
        Family::AllToAll,
        Family::Ring,
    ];

    /// The name used in JSON and on the command line (`grid`, `stencil6`, `binary-tree`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Family::Grid => "grid",
            Family::Torus => "torus",
            Family::Stencil6 => "stencil6",
            Family::Stencil6Mesh => "stencil6-mesh",
            Family::Stencil8 => "stencil8",
            Family::Stencil8Mesh => "stencil8-mesh",
            Family::Hypercube => "hypercube",
            Family::BinaryTree => "binary-tree",
            Family::AllToAll => "all-to-all",
            Family::Ring => "ring",
        }
    }

    /// Parse a family name as [`Family::name`] writes it.
    pub fn from_name(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }

    fn is_cartesian(self) -> bool {
        matches!(
            self,
            Family::Grid
                | Family::Torus
                | Family::Stencil6
                | Family::Stencil6Mesh
                | Family::Stencil8
                | Family::Stencil8Mesh
        )
    }

    fn periodic(self) -> bool {
        matches!(self, Family::Torus | Family::Stencil6 | Family::Stencil8)
    }
}

/// A logical direction from a node to one of its neighbours.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Direction {
    /// A Cartesian offset (one entry per dimension, each −1, 0 or +1).
    Offset(Vec<i8>),
    /// Toward the parent in a tree.
    Parent,
    /// Toward child `i` (0 = left, 1 = right) in a tree.
    Child(u8),
    /// Across hypercube dimension `k` (flip bit k).
    Bit(u8),
    /// To the node `k` places further along (mod n) in a ring or all-to-all.
    Shift(u32),
}

impl Direction {
    /// The name users see: `east`, `southwest`, `up`, `+d3-d4`, `parent`, `left-child`, `bit2`, `+3`.
    pub fn name(&self) -> String {
        match self {
            Direction::Offset(o) => offset_name(o),
            Direction::Parent => "parent".into(),
            Direction::Child(0) => "left-child".into(),
            Direction::Child(1) => "right-child".into(),
            Direction::Child(i) => format!("child{i}"),
            Direction::Bit(k) => format!("bit{k}"),
            Direction::Shift(k) => format!("+{k}"),
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

fn offset_name(o: &[i8]) -> String {
    if o.len() <= 3 {
        let ns = match o.get(1).copied().unwrap_or(0) {
            1 => "south",
            -1 => "north",
            _ => "",
        };
        let ew = match o.first().copied().unwrap_or(0) {
            1 => "east",
            -1 => "west",
            _ => "",
        };
        let ud = match o.get(2).copied().unwrap_or(0) {
            1 => "up",
            -1 => "down",
            _ => "",
        };
        let parts: Vec<&str> = [ns, ew, ud].into_iter().filter(|s| !s.is_empty()).collect();
        if ns.is_empty() || ew.is_empty() {
            parts.join("-")
        } else {
            // Compass diagonals read as one word: southwest, northeast.
            let mut s = format!("{ns}{ew}");
            if !ud.is_empty() {
                s.push('-');
                s.push_str(ud);
            }
            s
        }
    } else {
        o.iter()
            .enumerate()
            .filter(|(_, &d)| d != 0)
            .map(|(k, &d)| format!("{}d{k}", if d > 0 { '+' } else { '-' }))
            .collect::<Vec<_>>()
            .join("")
    }
}

/// A concrete topology: a family with its dimensions (e.g. a 4×2 grid, an 8-node binary tree).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TopologySpec {
    /// The family.
    pub family: Family,
    /// Extents per dimension for Cartesian families; `[d]` for hypercubes; `[n]` for trees,
    /// rings and all-to-all.
    pub dims: Vec<u32>,
}

impl TopologySpec {
    /// A topology from a family and its dimensions, checking they make sense (at least one
    /// node; 2D for stencils; a hypercube dimension below 31).
    pub fn new(family: Family, dims: Vec<u32>) -> Result<TopologySpec, String> {
        if dims.is_empty() || dims.contains(&0) {
            return Err(format!("{}: dimensions must be positive, got {dims:?}", family.name()));
        }
        match family {
            Family::Stencil6 | Family::Stencil6Mesh | Family::Stencil8 | Family::Stencil8Mesh if dims.len() != 2 => {
                return Err(format!(
                    "{}: stencils are 2D, got {} dimensions",
                    family.name(),
                    dims.len()
                ))
            }
            Family::Hypercube if dims.len() != 1 || dims[0] > 30 => {
                return Err("hypercube: give one dimension d (2^d nodes, d ≤ 30)".into())
            }
            Family::BinaryTree | Family::AllToAll | Family::Ring if dims.len() != 1 => {
                return Err(format!("{}: give one size n", family.name()))
            }
            _ => {}
        }
        let n = dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64))
            .unwrap_or(u64::MAX);
        if family != Family::Hypercube && n > u32::MAX as u64 / 2 {
            return Err(format!("{}: {n} nodes is too many", family.name()));
        }
        Ok(TopologySpec { family, dims })
    }

    /// Parse `family:AxBxC` (e.g. `torus:4x4x2`, `binary-tree:15`, `hypercube:3`).
    pub fn parse(s: &str) -> Result<TopologySpec, String> {
        let (fam, dims) = s
            .split_once(':')
            .ok_or_else(|| format!("expected FAMILY:DIMS (e.g. grid:4x2), got `{s}`"))?;
        let family = Family::from_name(fam.trim()).ok_or_else(|| {
            let names: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
            format!("unknown topology family `{fam}`; known: {}", names.join(", "))
        })?;
        let dims = dims
            .split(['x', 'X', '×'])
            .map(|d| {
                d.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("bad dimension `{d}` in `{s}`"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        TopologySpec::new(family, dims)
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> u32 {
        match self.family {
            Family::Hypercube => 1 << self.dims[0],
            _ => self.dims.iter().product(),
        }
    }

    /// A human label such as `4x4 6-point stencil` or `15-node binary tree`.
    pub fn label(&self) -> String {
        let d = self.dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x");
        match self.family {
            Family::Grid => format!("{d} grid"),
            Family::Torus => format!("{d} torus"),
            Family::Stencil6 => format!("{d} 6-point stencil"),
            Family::Stencil6Mesh => format!("{d} 6-point stencil (no wrap-around)"),
            Family::Stencil8 => format!("{d} 8-point stencil"),
            Family::Stencil8Mesh => format!("{d} 8-point stencil (no wrap-around)"),
            Family::Hypercube => format!("{d}-dimensional hypercube"),
            Family::BinaryTree => format!("{d}-node binary tree"),
            Family::AllToAll => format!("{d}-node all-to-all"),
            Family::Ring => format!("{d}-node ring"),
        }
    }

    /// Coordinates of `node`: Cartesian coordinates (dimension 0 first); hypercube bits (bit 0
    /// first); `[depth, position in level]` for trees; `[node]` for rings and all-to-all.
    pub fn coords(&self, node: u32) -> Vec<u32> {
        match self.family {
            f if f.is_cartesian() => {
                let mut rest = node;
                self.dims
                    .iter()
                    .map(|&d| {
                        let c = rest % d;
                        rest /= d;
                        c
                    })
                    .collect()
            }
            Family::Hypercube => (0..self.dims[0]).map(|k| (node >> k) & 1).collect(),
            Family::BinaryTree => {
                let depth = 31 - (node + 1).leading_zeros();
                vec![depth, node + 1 - (1 << depth)]
            }
            _ => vec![node],
        }
    }

    /// Node at Cartesian coordinates (dimension 0 first), if inside.
    pub fn node_at(&self, coords: &[u32]) -> Option<u32> {
        if !self.family.is_cartesian() || coords.len() != self.dims.len() {
            return None;
        }
        let mut node = 0u32;
        for (&c, &d) in coords.iter().zip(&self.dims).rev() {
            if c >= d {
                return None;
            }
            node = node * d + c;
        }
        Some(node)
    }

    /// The directions a node with every neighbour has, in a fixed order (east, west, south,
    /// north, ... for 2D; parent, left, right for trees).
    pub fn directions(&self) -> Vec<Direction> {
        match self.family {
            f if f.is_cartesian() => {
                let k = self.dims.len();
                let mut out = Vec::new();
                for dim in 0..k {
                    for s in [1i8, -1] {
                        let mut o = vec![0i8; k];
                        o[dim] = s;
                        out.push(Direction::Offset(o));
                    }
                }
                if matches!(
                    f,
                    Family::Stencil6 | Family::Stencil6Mesh | Family::Stencil8 | Family::Stencil8Mesh
                ) {
                    out.push(Direction::Offset(vec![1, -1]));
                    out.push(Direction::Offset(vec![-1, 1]));
                }
                if matches!(f, Family::Stencil8 | Family::Stencil8Mesh) {
                    out.push(Direction::Offset(vec![1, 1]));
                    out.push(Direction::Offset(vec![-1, -1]));
                }
                out
            }
            Family::Hypercube => (0..self.dims[0] as u8).map(Direction::Bit).collect(),
            Family::BinaryTree => vec![Direction::Parent, Direction::Child(0), Direction::Child(1)],
            Family::Ring => vec![Direction::Shift(1), Direction::Shift(self.dims[0] - 1)],
            Family::AllToAll => (1..self.dims[0]).map(Direction::Shift).collect(),
            _ => unreachable!(),
        }
    }

    /// The neighbour of `node` in direction `dir`, if it exists (no wrap-around on meshes, no
    /// parent at the root...). On a periodic extent of 1 or 2 a direction may lead to the node
    /// itself (none) or to the same neighbour as its opposite.
    pub fn neighbour(&self, node: u32, dir: &Direction) -> Option<u32> {
        let n = self.num_nodes();
        let target = match (self.family, dir) {
            (f, Direction::Offset(o)) if f.is_cartesian() && o.len() == self.dims.len() => {
                let mut c = self.coords(node);
                for (k, &step) in o.iter().enumerate() {
                    let d = self.dims[k] as i64;
                    let mut x = c[k] as i64 + step as i64;
                    if f.periodic() {
                        x = x.rem_euclid(d);
                    } else if x < 0 || x >= d {
                        return None;
                    }
                    c[k] = x as u32;
                }
                self.node_at(&c)?
            }
            (Family::Hypercube, Direction::Bit(k)) if (*k as u32) < self.dims[0] => node ^ (1 << k),
            (Family::BinaryTree, Direction::Parent) if node > 0 => (node - 1) / 2,
            (Family::BinaryTree, Direction::Child(i)) if *i < 2 => {
                let c = 2 * node as u64 + 1 + *i as u64;
                if c >= n as u64 {
                    return None;
                }
                c as u32
            }
            (Family::Ring | Family::AllToAll, Direction::Shift(k)) if *k < n => {
                ((node as u64 + *k as u64) % n as u64) as u32
            }
            _ => return None,
        };
        (target != node).then_some(target)
    }

    /// The neighbours of `node` with the first direction that reaches each, in
    /// [`TopologySpec::directions`] order, without duplicates.
    pub fn neighbours(&self, node: u32) -> Vec<(Direction, u32)> {
        let mut out: Vec<(Direction, u32)> = Vec::new();
        for d in self.directions() {
            if let Some(t) = self.neighbour(node, &d) {
                if !out.iter().any(|&(_, u)| u == t) {
                    out.push((d, t));
                }
            }
        }
        out
    }

    /// The direction opposite to `dir` (east ↔ west, parent ↔ child, +k ↔ +(n−k)); for a child
    /// the opposite is `parent`, for the parent of `node` it is the child `node` is.
    pub fn opposite(&self, node_from: u32, dir: &Direction) -> Option<Direction> {
        Some(match dir {
            Direction::Offset(o) => Direction::Offset(o.iter().map(|&x| -x).collect()),
            Direction::Bit(k) => Direction::Bit(*k),
            Direction::Child(_) => Direction::Parent,
            Direction::Parent => Direction::Child(((node_from + 1) % 2) as u8),
            Direction::Shift(k) => Direction::Shift((self.num_nodes() - k) % self.num_nodes()),
        })
    }

    /// The graph of this topology. O(n · directions).
    pub fn graph(&self) -> Graph {
        let n = self.num_nodes();
        let dirs = self.directions();
        let edges = (0..n).flat_map(|u| {
            let dirs = &dirs;
            dirs.iter().filter_map(move |d| self.neighbour(u, d).map(|v| (u, v)))
        });
        Graph::from_edges(n, edges.collect::<Vec<_>>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> TopologySpec {
        TopologySpec::parse(s).unwrap()
    }

    #[test]
    fn grid_and_torus_edge_counts() {
        // A×B grid: A(B−1) + B(A−1) edges; torus: 2AB when both extents exceed 2.
        assert_eq!(spec("grid:4x2").graph().num_edges(), 4 + 6);
        assert_eq!(spec("torus:4x4").graph().num_edges(), 32);
        assert_eq!(spec("torus:4x2").graph().num_edges(), 8 + 4);
        assert_eq!(spec("grid:3x3x3").graph().num_edges(), 3 * 9 * 2);
    }

    #[test]
    fn stencil6_is_six_regular_and_matches_bt_directions() {
        let s = spec("stencil6:4x4");
        let g = s.graph();
        assert!((0..16).all(|u| g.degree(u) == 6));
        // Rank 5 = (1,1): east 6, west 4, south 9, north 1, northeast (2,0)=2, southwest (0,2)=8.
        let names: Vec<(String, u32)> = s.neighbours(5).into_iter().map(|(d, v)| (d.name(), v)).collect();
        assert_eq!(
            names,
            vec![
                ("east".into(), 6),
                ("west".into(), 4),
                ("south".into(), 9),
                ("north".into(), 1),
                ("northeast".into(), 2),
                ("southwest".into(), 8)
            ]
        );
    }

    #[test]
    fn stencil8_mesh_corner_has_three_neighbours() {
        let s = spec("stencil8-mesh:5x5");
        assert_eq!(s.neighbours(0).len(), 3);
        assert_eq!(s.neighbours(12).len(), 8);
    }

    #[test]
    fn hypercube_equals_2x2x2_grid_structure() {
        let h = spec("hypercube:3").graph();
        assert_eq!(h.num_edges(), 12);
        assert!((0..8).all(|u| h.degree(u) == 3));
        assert_eq!(h, spec("grid:2x2x2").graph());
    }

    #[test]
    fn binary_tree_parent_and_children() {
        let s = spec("binary-tree:7");
        assert_eq!(s.neighbour(0, &Direction::Parent), None);
        assert_eq!(s.neighbour(2, &Direction::Child(0)), Some(5));
        assert_eq!(s.neighbour(6, &Direction::Parent), Some(2));
        assert_eq!(s.neighbour(3, &Direction::Child(0)), None);
        assert_eq!(s.coords(5), vec![2, 2]);
        assert_eq!(s.graph().num_edges(), 6);
    }

    #[test]
    fn ring_and_all_to_all() {
        assert_eq!(spec("ring:5").graph().num_edges(), 5);
        assert_eq!(spec("all-to-all:6").graph().num_edges(), 15);
        assert_eq!(spec("ring:2").graph().num_edges(), 1);
    }

    #[test]
    fn coordinates_round_trip() {
        let s = spec("torus:3x4x5");
        for u in 0..60 {
            assert_eq!(s.node_at(&s.coords(u)), Some(u));
        }
        assert_eq!(s.coords(1 + 3 * 2 + 12 * 4), vec![1, 2, 4]);
    }

    #[test]
    fn parse_errors_are_plain() {
        assert!(TopologySpec::parse("grid").unwrap_err().contains("FAMILY:DIMS"));
        assert!(TopologySpec::parse("blob:4")
            .unwrap_err()
            .contains("unknown topology family"));
        assert!(TopologySpec::parse("stencil6:4x4x4").unwrap_err().contains("2D"));
        assert!(TopologySpec::parse("grid:0x3").is_err());
    }

    #[test]
    fn opposite_directions() {
        let s = spec("grid:3x3");
        let east = Direction::Offset(vec![1, 0]);
        assert_eq!(s.opposite(4, &east).unwrap().name(), "west");
        let r = spec("ring:6");
        assert_eq!(r.opposite(0, &Direction::Shift(1)), Some(Direction::Shift(5)));
        let t = spec("binary-tree:7");
        assert_eq!(t.opposite(1, &Direction::Parent), Some(Direction::Child(0)));
        assert_eq!(t.opposite(2, &Direction::Parent), Some(Direction::Child(1)));
    }
}
