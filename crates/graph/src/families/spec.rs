//! A concrete topology ([`TopologySpec`]): its nodes, coordinates, neighbours and their directions.

use super::*;

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
    /// node; 2D or 3D for stencils; a hypercube dimension below 31; `[k, n]` for k-ary trees).
    pub fn new(family: Family, mut dims: Vec<u32>) -> Result<TopologySpec, String> {
        if family == Family::NasCg {
            dims = nas_cg_dims(&dims)?;
        }
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
            f if f.is_stencil3d() && dims.len() != 3 => {
                return Err(format!(
                    "{}: 3D stencils have 3 dimensions, got {}",
                    family.name(),
                    dims.len()
                ))
            }
            Family::ProcessGrid if dims.len() != 2 => {
                return Err("process-grid: give the rows and columns, as PxQ".into())
            }
            Family::BinaryTree
            | Family::BinomialTree
            | Family::AllToAll
            | Family::Ring
            | Family::Line
            | Family::Star
                if dims.len() != 1 =>
            {
                return Err(format!("{}: give one size n", family.name()))
            }
            Family::MasterWorker if dims.len() != 2 || dims[0] < 2 || dims[0] >= dims[1] - dims[0].min(dims[1]) => {
                return Err(
                    "master-worker: give the masters m and the size n, as MxN, with 2 ≤ m < n − m (one master is a star)"
                        .into(),
                )
            }
            Family::KaryTree if dims.len() != 2 || dims[0] < 2 || dims[0] > 255 => {
                return Err("kary-tree: give the arity k (2..=255) and the size n, as KxN".into())
            }
            Family::Butterfly if dims.len() != 1 || dims[0] > 24 => {
                return Err("butterfly: give one dimension k ((k+1)·2^k nodes, k ≤ 24)".into())
            }
            Family::Tree if dims.len() > 31 || dims.iter().any(|&b| !(2..=255).contains(&b)) => {
                return Err(
                    "tree: give the fan-out of each level from the root (2..=255 each, at most 31 levels), as 2x4"
                        .into(),
                )
            }
            _ => {}
        }
        let n = match family {
            Family::KaryTree | Family::MasterWorker => dims[1] as u64,
            Family::Butterfly => (dims[0] as u64 + 1) << dims[0],
            Family::Tree => tree_level_sizes(&dims).iter().sum(),
            _ => dims
                .iter()
                .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64))
                .unwrap_or(u64::MAX),
        };
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

    /// How many centre nodes (numbered first) a hub topology has: 1 for a star, the masters of a
    /// master–worker topology; 0 for every other family. Their ranks hand out work and wait by
    /// role (phases leave them out of the imbalance; the page draws them above the workers).
    pub fn hubs(&self) -> u32 {
        match self.family {
            Family::Star => 1,
            Family::MasterWorker => self.dims[0],
            _ => 0,
        }
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> u32 {
        match self.family {
            Family::Tree => tree_level_sizes(&self.dims).iter().sum::<u64>() as u32,
            Family::Hypercube => 1 << self.dims[0],
            Family::KaryTree | Family::MasterWorker => self.dims[1],
            Family::Butterfly => (self.dims[0] + 1) << self.dims[0],
            _ => self.dims.iter().product(),
        }
    }

    /// A human label such as `4x4 6-point stencil` or `15-node binary tree`.
    pub fn label(&self) -> String {
        let mut d = String::with_capacity(4 * self.dims.len() + 40);
        for (i, x) in self.dims.iter().enumerate() {
            if i > 0 {
                d.push('x');
            }
            push_decimal(&mut d, *x);
        }
        // The extents, then the family's words, in one string.
        let suffix = match self.family {
            Family::Grid => " grid",
            Family::Torus => " torus",
            Family::Stencil6 => " 6-point stencil",
            Family::Stencil6Mesh => " 6-point stencil (no wrap-around)",
            Family::Stencil8 => " 8-point stencil",
            Family::Stencil8Mesh => " 8-point stencil (no wrap-around)",
            // The grid it equals, as Logicalization's Table 7 names NAS MG ("2×2×2 grid").
            Family::Hypercube if self.dims[0] >= 2 => {
                let grid = vec!["2"; self.dims[0] as usize].join("x");
                return format!("{d}-dimensional hypercube ({grid} grid)");
            }
            Family::Hypercube => "-dimensional hypercube",
            Family::BinaryTree => "-node binary tree",
            Family::BinomialTree => "-node binomial tree",
            Family::AllToAll => "-node all-to-all",
            Family::Ring => "-node ring",
            Family::Line => "-node line",
            Family::Stencil7 => " 7-point stencil",
            Family::Stencil7Mesh => " 7-point stencil (no wrap-around)",
            Family::Stencil19 => " 19-point stencil",
            Family::Stencil19Mesh => " 19-point stencil (no wrap-around)",
            Family::Stencil27 => " 27-point stencil",
            Family::Stencil27Mesh => " 27-point stencil (no wrap-around)",
            Family::Star => "-node star",
            Family::KaryTree => return format!("{}-node {}-ary tree", self.dims[1], self.dims[0]),
            Family::Butterfly => return format!("{d}-dimensional butterfly ({} nodes)", self.num_nodes()),
            Family::NasCg => return format!("NAS CG {d}"),
            Family::ProcessGrid => " process grid (rows and columns)",
            Family::Tree => return format!("{}-node tree (fan-out {d} by level)", self.num_nodes()),
            Family::MasterWorker => {
                let (m, n) = (self.dims[0], self.dims[1]);
                return format!("{n}-node master-worker ({m} masters, {} workers)", n - m);
            }
        };
        d.push_str(suffix);
        d
    }

    /// Coordinates of `node`: Cartesian coordinates (dimension 0 first); hypercube bits (bit 0
    /// first); `[depth, position in level]` for trees (for a binomial tree the depth is the
    /// node's number of set bits, the position its rank among the nodes of as many, by number);
    /// `[level, row]` for butterflies; `[node]` for rings, stars and all-to-all.
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
            Family::KaryTree => {
                let k = self.dims[0] as u64;
                let (mut depth, mut first, mut width) = (0u32, 0u64, 1u64);
                while node as u64 >= first + width {
                    first += width;
                    width *= k;
                    depth += 1;
                }
                vec![depth, (node as u64 - first) as u32]
            }
            Family::Butterfly => vec![node >> self.dims[0], node & ((1 << self.dims[0]) - 1)],
            Family::Tree => {
                let (depth, pos) = self.tree_place(node);
                vec![depth as u32, pos as u32]
            }
            Family::BinomialTree => vec![node.count_ones(), binomial_level_position(node)],
            Family::NasCg | Family::ProcessGrid => vec![node / self.dims[1], node % self.dims[1]],
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

    /// The neighbour offsets of a Cartesian family (its [`Direction::Offset`]s, in direction
    /// order); empty for the other families.
    pub fn offsets(&self) -> Vec<Vec<i8>> {
        self.directions()
            .into_iter()
            .filter_map(|d| match d {
                Direction::Offset(o) => Some(o),
                _ => None,
            })
            .collect()
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
                if f.is_stencil3d() && !matches!(f, Family::Stencil7 | Family::Stencil7Mesh) {
                    let corners = matches!(f, Family::Stencil27 | Family::Stencil27Mesh);
                    for a in [1i8, -1] {
                        for b in [1i8, -1] {
                            for (i, j) in [(0, 1), (0, 2), (1, 2)] {
                                let mut o = vec![0i8; 3];
                                o[i] = a;
                                o[j] = b;
                                out.push(Direction::Offset(o));
                            }
                        }
                    }
                    if corners {
                        for a in [1i8, -1] {
                            for b in [1i8, -1] {
                                for c in [1i8, -1] {
                                    out.push(Direction::Offset(vec![a, b, c]));
                                }
                            }
                        }
                    }
                }
                if f.is_stencil2d() {
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
            Family::AllToAll | Family::Star => (1..self.dims[0]).map(Direction::Shift).collect(),
            Family::MasterWorker => (0..self.dims[0])
                .map(Direction::Master)
                .chain((0..self.dims[1] - self.dims[0]).map(Direction::Worker))
                .collect(),
            Family::KaryTree => std::iter::once(Direction::Parent)
                .chain((0..self.dims[0] as u8).map(Direction::Child))
                .collect(),
            Family::Tree => std::iter::once(Direction::Parent)
                .chain((0..self.dims.iter().copied().max().unwrap_or(0) as u8).map(Direction::Child))
                .collect(),
            // Child(j) is round j of the broadcast (+2^j), j = 0..⌈log2 n⌉.
            Family::BinomialTree => std::iter::once(Direction::Parent)
                .chain((0..bit_length(self.dims[0].saturating_sub(1)) as u8).map(Direction::Child))
                .collect(),
            Family::Butterfly => [(true, false), (true, true), (false, false), (false, true)]
                .into_iter()
                .map(|(up, cross)| Direction::Butterfly { up, cross })
                .collect(),
            Family::NasCg => (0..self.dims[1].trailing_zeros() as u8)
                .map(Direction::RowBit)
                .chain(std::iter::once(Direction::Transpose))
                .collect(),
            Family::ProcessGrid => (1..self.dims[1])
                .map(Direction::InRow)
                .chain((1..self.dims[0]).map(Direction::InColumn))
                .collect(),
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
            (Family::Star, Direction::Shift(k)) if *k < n => {
                let t = ((node as u64 + *k as u64) % n as u64) as u32;
                if node != 0 && t != 0 {
                    return None;
                }
                t
            }
            (Family::MasterWorker, Direction::Master(i)) if node >= self.dims[0] && node < n && *i < self.dims[0] => *i,
            (Family::MasterWorker, Direction::Worker(j)) if node < self.dims[0] && *j < n - self.dims[0] => {
                self.dims[0] + j
            }
            (Family::KaryTree, Direction::Parent) if node > 0 => (node - 1) / self.dims[0],
            (Family::KaryTree, Direction::Child(i)) if (*i as u32) < self.dims[0] => {
                let c = self.dims[0] as u64 * node as u64 + 1 + *i as u64;
                if c >= n as u64 {
                    return None;
                }
                c as u32
            }
            (Family::Tree, Direction::Parent) if node > 0 && node < n => {
                let (depth, pos) = self.tree_place(node);
                let parent_pos = pos / self.dims[depth - 1] as u64;
                (tree_level_sizes(&self.dims)[..depth - 1].iter().sum::<u64>() + parent_pos) as u32
            }
            (Family::Tree, Direction::Child(i)) if node < n => {
                let (depth, pos) = self.tree_place(node);
                let b = *self.dims.get(depth)? as u64;
                if *i as u64 >= b {
                    return None;
                }
                let first_below: u64 = tree_level_sizes(&self.dims)[..=depth].iter().sum();
                (first_below + pos * b + *i as u64) as u32
            }
            // The highest set bit cleared.
            (Family::BinomialTree, Direction::Parent) if node > 0 && node < n => {
                node & !(1 << (31 - node.leading_zeros()))
            }
            // Round j reaches i + 2^j from the ranks that already have the data (i < 2^j).
            (Family::BinomialTree, Direction::Child(j)) if (*j as u32) < 32 && (node as u64) < 1u64 << j => {
                let c = node as u64 + (1u64 << j);
                if c >= n as u64 {
                    return None;
                }
                c as u32
            }
            (Family::Butterfly, Direction::Butterfly { up, cross }) => {
                let k = self.dims[0];
                let (level, row) = (node >> k, node & ((1 << k) - 1));
                let (to, bit) = match up {
                    true if level < k => (level + 1, level),
                    false if level > 0 => (level - 1, level - 1),
                    _ => return None,
                };
                let row = if *cross { row ^ (1 << bit) } else { row };
                (to << k) | row
            }
            (Family::NasCg, Direction::RowBit(k)) if node < n && (1u32 << k) < self.dims[1] => node ^ (1 << k),
            (Family::NasCg, Direction::Transpose) if node < n && self.dims[1] >= 2 => {
                nas_cg_transpose(self.dims[0], self.dims[1], node)
            }
            (Family::ProcessGrid, Direction::InRow(k)) if node < n && *k < self.dims[1] => {
                let q = self.dims[1];
                node / q * q + (node % q + k) % q
            }
            (Family::ProcessGrid, Direction::InColumn(k)) if node < n && *k < self.dims[0] => {
                let (p, q) = (self.dims[0], self.dims[1]);
                (node / q + k) % p * q + node % q
            }
            _ => return None,
        };
        (target != node).then_some(target)
    }

    /// The neighbours of `node` with the first direction that reaches each, in
    /// [`TopologySpec::directions`] order, without duplicates.
    pub fn neighbours(&self, node: u32) -> Vec<(Direction, u32)> {
        if self.family == Family::Star {
            // Same answer as the loop below, without trying all n − 1 directions from a leaf.
            let n = self.num_nodes();
            return match node {
                0 => (1..n).map(|v| (Direction::Shift(v), v)).collect(),
                leaf if leaf < n => vec![(Direction::Shift(n - leaf), 0)],
                _ => Vec::new(),
            };
        }
        if self.family == Family::AllToAll {
            // Shifts 1..n reach n − 1 distinct nodes: the loop below's answer without its
            // quadratic search for duplicates (a rank-offset placement of 4,000 ranks).
            let n = self.num_nodes();
            return if node < n {
                (1..n)
                    .map(|k| (Direction::Shift(k), ((node as u64 + k as u64) % n as u64) as u32))
                    .collect()
            } else {
                Vec::new()
            };
        }
        if self.family == Family::MasterWorker {
            // The loop below's answer, without trying all n − 1 directions from a worker.
            let (m, n) = (self.dims[0], self.dims[1]);
            return match node {
                master if master < m => (m..n).map(|v| (Direction::Worker(v - m), v)).collect(),
                worker if worker < n => (0..m).map(|i| (Direction::Master(i), i)).collect(),
                _ => Vec::new(),
            };
        }
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
            Direction::Parent if self.family == Family::KaryTree => {
                Direction::Child(((node_from.max(1) - 1) % self.dims[0]) as u8)
            }
            Direction::Parent if self.family == Family::Tree => {
                let (depth, pos) = self.tree_place(node_from);
                Direction::Child((pos % self.dims[depth.max(1) - 1] as u64) as u8)
            }
            // Node i is its parent's child at +2^⌊log2 i⌋.
            Direction::Parent if self.family == Family::BinomialTree => {
                Direction::Child((31 - node_from.max(1).leading_zeros()) as u8)
            }
            Direction::Parent => Direction::Child(((node_from + 1) % 2) as u8),
            Direction::Butterfly { up, cross } => Direction::Butterfly { up: !up, cross: *cross },
            Direction::RowBit(k) => Direction::RowBit(*k),
            Direction::Transpose => Direction::Transpose,
            Direction::InRow(k) => Direction::InRow((self.dims[1] - k % self.dims[1]) % self.dims[1]),
            Direction::InColumn(k) => Direction::InColumn((self.dims[0] - k % self.dims[0]) % self.dims[0]),
            Direction::Shift(k) => Direction::Shift((self.num_nodes() - k) % self.num_nodes()),
            Direction::Master(_) => Direction::Worker(node_from.checked_sub(*self.dims.first()?)?),
            Direction::Worker(_) => Direction::Master(node_from),
        })
    }

    /// How many nodes have each degree, computed from the family's structure without building
    /// the graph (O(1) to O(3^dims)); this is what candidate elimination compares first.
    pub fn degree_histogram(&self) -> std::collections::BTreeMap<u32, u64> {
        let n = self.num_nodes() as u64;
        let mut hist = std::collections::BTreeMap::new();
        let mut add = |deg: u32, count: u64| {
            if count > 0 {
                *hist.entry(deg).or_insert(0) += count;
            }
        };
        match self.family {
            Family::Grid | Family::Torus | Family::Line | Family::Stencil7 | Family::Stencil7Mesh => {
                // Neighbours along different dimensions are distinct: the degree is a sum of
                // independent per-dimension contributions, so the histogram is a convolution.
                let periodic = self.family.periodic();
                let mut acc: std::collections::BTreeMap<u32, u64> = [(0u32, 1u64)].into();
                for &d in &self.dims {
                    let per: Vec<(u32, u64)> = match (d, periodic) {
                        (1, _) => vec![(0, 1)],
                        (2, _) => vec![(1, 2)],
                        (d, true) => vec![(2, d as u64)],
                        (d, false) => vec![(1, 2), (2, d as u64 - 2)],
                    };
                    let mut next = std::collections::BTreeMap::new();
                    for (&deg, &cnt) in &acc {
                        for &(pd, pc) in &per {
                            *next.entry(deg + pd).or_insert(0) += cnt * pc;
                        }
                    }
                    acc = next;
                }
                for (deg, cnt) in acc {
                    add(deg, cnt);
                }
            }
            f if f.is_cartesian() => {
                // Degrees depend only on whether each coordinate is first, last or inside: one
                // representative node per class, weighted by the class size.
                let classes: Vec<Vec<(u32, u64)>> = self
                    .dims
                    .iter()
                    .map(|&d| match d {
                        1 => vec![(0, 1)],
                        2 => vec![(0, 1), (1, 1)],
                        d => vec![(0, 1), (1, d as u64 - 2), (d - 1, 1)],
                    })
                    .collect();
                let offsets: Vec<Vec<i8>> = self.offsets();
                let periodic = f.periodic();
                let mut idx = vec![0usize; classes.len()];
                let mut coords = vec![0u32; classes.len()];
                let mut targets: Vec<u64> = Vec::with_capacity(offsets.len());
                loop {
                    for (k, (&i, c)) in idx.iter().zip(&classes).enumerate() {
                        coords[k] = c[i].0;
                    }
                    let weight: u64 = idx.iter().zip(&classes).map(|(&i, c)| c[i].1).product();
                    // Distinct neighbours of the representative, as packed coordinates (no
                    // per-direction allocation: candidate lists run to thousands of stencils).
                    targets.clear();
                    'offsets: for o in &offsets {
                        let mut packed = 0u64;
                        for ((&c, &d), &step) in coords.iter().zip(&self.dims).zip(o).rev() {
                            let mut x = c as i64 + step as i64;
                            if periodic {
                                x = x.rem_euclid(d as i64);
                            } else if x < 0 || x >= d as i64 {
                                continue 'offsets;
                            }
                            packed = packed * d as u64 + x as u64;
                        }
                        targets.push(packed);
                    }
                    let own = coords
                        .iter()
                        .zip(&self.dims)
                        .rev()
                        .fold(0u64, |acc, (&c, &d)| acc * d as u64 + c as u64);
                    targets.retain(|&t| t != own);
                    targets.sort_unstable();
                    targets.dedup();
                    add(targets.len() as u32, weight);
                    let mut k = 0;
                    loop {
                        if k == idx.len() {
                            return hist;
                        }
                        idx[k] += 1;
                        if idx[k] < classes[k].len() {
                            break;
                        }
                        idx[k] = 0;
                        k += 1;
                    }
                }
            }
            Family::Hypercube => add(self.dims[0], n),
            Family::Ring => add(if n <= 2 { n as u32 - 1 } else { 2 }, n),
            Family::AllToAll => add(n as u32 - 1, n),
            Family::Star => {
                add(n as u32 - 1, 1);
                add(1, n - 1);
            }
            Family::MasterWorker => {
                let m = self.dims[0];
                add(n as u32 - m, m as u64);
                add(m, n - m as u64);
            }
            Family::Butterfly => {
                let (k, rows) = (self.dims[0] as u64, 1u64 << self.dims[0]);
                if k == 0 {
                    add(0, 1);
                } else {
                    add(2, 2 * rows);
                    add(4, (k - 1) * rows);
                }
            }
            Family::NasCg => {
                let (rows, cols) = (self.dims[0] as u64, self.dims[1] as u64);
                let row_partners = cols.trailing_zeros();
                if cols < 2 {
                    add(0, n);
                } else {
                    // Ranks that are their own transpose partner: the diagonal of the square
                    // grid, or both ranks of each diagonal pair when npcols = 2·nprows.
                    let own = if rows == cols { rows } else { 2 * rows };
                    add(row_partners, own);
                    add(row_partners + 1, n - own);
                }
            }
            Family::ProcessGrid => add(self.dims[0] + self.dims[1] - 2, n),
            Family::Tree => {
                // The root has b1 children; a node at depth l (inner) a parent and b(l+1)
                // children; the leaves a parent only.
                let sizes = tree_level_sizes(&self.dims);
                add(self.dims[0], 1);
                for (l, &count) in sizes.iter().enumerate().skip(1) {
                    add(1 + self.dims.get(l).copied().unwrap_or(0), count);
                }
            }
            Family::BinomialTree => {
                // Node i has a parent unless i = 0 and a child i + 2^j for each j with
                // bits(i) ≤ j < bits(n − 1 − i) (bits: the bit length): its degree depends only
                // on bits(i) and bits(n − 1 − i), so nodes are counted by the pair of lengths.
                let n = n as u32;
                let last = n.saturating_sub(1);
                for b in 0..=bit_length(last) {
                    let (lo, hi) = bit_length_range(b);
                    let (lo, hi) = (lo, hi.min(n));
                    for c in 0..=bit_length(last) {
                        // n − 1 − i has bit length c exactly for i in (last − m_hi, last − m_lo].
                        let (m_lo, m_hi) = bit_length_range(c);
                        if m_lo > last {
                            break;
                        }
                        let i_lo = (last + 1).saturating_sub(m_hi.min(last + 1));
                        let i_hi = last - m_lo + 1;
                        let count = hi.min(i_hi).saturating_sub(lo.max(i_lo));
                        add(c.saturating_sub(b) + u32::from(b > 0), count as u64);
                    }
                }
            }
            Family::BinaryTree | Family::KaryTree => {
                let k = if self.family == Family::BinaryTree {
                    2
                } else {
                    self.dims[0] as u64
                };
                // Node i has min(k, n−1−k·i) children (when positive) and a parent unless i = 0.
                let full = if n > k { (n - 1 - k) / k + 1 } else { 0 };
                let rest = (n - 1) - k * full;
                let partial = u64::from(rest > 0);
                let leaves = n - full - partial;
                let parent = |i: u64| u32::from(i > 0);
                if full > 0 {
                    add(k as u32, 1); // the root
                    add(k as u32 + 1, full - 1);
                }
                if partial == 1 {
                    add(rest as u32 + parent(full), 1);
                }
                if leaves > 0 {
                    add(1, leaves - u64::from(n == 1));
                    if n == 1 {
                        add(0, 1);
                    }
                }
            }
            _ => unreachable!(),
        }
        hist
    }

    /// Number of edges, from [`TopologySpec::degree_histogram`] (no graph is built).
    pub fn edge_count(&self) -> u64 {
        if let Some(m) = self.closed_form_edge_count() {
            return m;
        }
        self.degree_histogram().iter().map(|(&d, &c)| d as u64 * c).sum::<u64>() / 2
    }

    /// True when every node looks the same (an automorphism maps any node to any other): the
    /// periodic Cartesian families, hypercubes, rings and all-to-all. Identification then needs
    /// to compare the graph's view from one node only.
    pub fn is_vertex_transitive(&self) -> bool {
        match self.family {
            f if f.periodic() => true,
            Family::Hypercube | Family::Ring | Family::AllToAll | Family::ProcessGrid => true,
            _ => self.num_nodes() <= 2,
        }
    }

    /// The graph of this topology. O(n · directions).
    pub fn graph(&self) -> Graph {
        let n = self.num_nodes();
        if self.family == Family::Star {
            return Graph::from_edges(n, (1..n).map(|v| (0, v)));
        }
        if self.family == Family::MasterWorker {
            let m = self.dims[0];
            return Graph::from_edges(n, (0..m).flat_map(|u| (m..n).map(move |v| (u, v))));
        }
        if self.family == Family::Hypercube {
            // Node bits are the coordinates of the 2×…×2 grid, dimension 0 the lowest bit.
            let grid = TopologySpec {
                family: Family::Grid,
                dims: vec![2; self.dims[0] as usize],
            };
            return grid.cartesian_graph();
        }
        if self.family.is_cartesian() {
            return self.cartesian_graph();
        }
        let dirs = self.directions();
        let edges = (0..n).flat_map(|u| {
            let dirs = &dirs;
            dirs.iter().filter_map(move |d| self.neighbour(u, d).map(|v| (u, v)))
        });
        Graph::from_edges(n, edges.collect::<Vec<_>>())
    }
}

/// The number of bits of `x` (0 for 0): node `i` of a binomial tree has its children at
/// `i + 2^j` for `j ≥ bit_length(i)`.
fn bit_length(x: u32) -> u32 {
    32 - x.leading_zeros()
}

/// The numbers of bit length `b`, as a half-open range (`0..1` for 0, `2^(b−1)..2^b` otherwise).
fn bit_length_range(b: u32) -> (u32, u32) {
    match b {
        0 => (0, 1),
        32 => (1 << 31, u32::MAX),
        b => (1 << (b - 1), 1 << b),
    }
}

/// How many numbers below `node` have as many set bits: its position in its level of a
/// [`Family::BinomialTree`] (whose depth is the number of set bits). O(32²).
fn binomial_level_position(node: u32) -> u32 {
    let choose = |n: u32, k: u32| -> u64 {
        if k > n {
            return 0;
        }
        (0..k).fold(1u64, |acc, i| acc * (n - i) as u64 / (i + 1) as u64)
    };
    // For each set bit k of `node` (from the top), the numbers equal above bit k and with a 0
    // there put the ones still to place anywhere in the k bits below.
    let mut ones = node.count_ones();
    let mut below = 0u64;
    for k in (0..32).rev() {
        if node >> k & 1 == 1 {
            below += choose(k, ones);
            ones -= 1;
        }
    }
    below as u32
}

/// Nodes per level of a [`Family::Tree`] with these fan-outs: 1, b1, b1·b2, … (saturating).
fn tree_level_sizes(fan_outs: &[u32]) -> Vec<u64> {
    let mut sizes = Vec::with_capacity(fan_outs.len() + 1);
    sizes.push(1u64);
    for &b in fan_outs {
        let last = *sizes.last().unwrap_or(&1);
        sizes.push(last.saturating_mul(b as u64).min(u64::MAX / 512));
    }
    sizes
}

impl TopologySpec {
    /// Depth and position within its level of `node` in a [`Family::Tree`] (O(levels)).
    fn tree_place(&self, node: u32) -> (usize, u64) {
        let mut first = 0u64;
        for (depth, size) in tree_level_sizes(&self.dims).into_iter().enumerate() {
            if (node as u64) < first + size {
                return (depth, node as u64 - first);
            }
            first += size;
        }
        (self.dims.len(), 0)
    }

    /// Breadth-first level sizes from `root` (as `invariants::distance_profile` on
    /// [`TopologySpec::graph`]) computed from coordinates, without building the graph, for
    /// Cartesian families; `None` for the others. With `expect`, stops at the first level
    /// whose size differs from it and returns the levels so far: candidate elimination only
    /// needs to know whether the profiles agree, and look-alike tori part after a few levels.
    pub fn implicit_distance_profile(&self, root: u32, expect: Option<&[u32]>) -> Option<Vec<u32>> {
        if !self.family.is_cartesian() || root >= self.num_nodes() {
            return None;
        }
        let n = self.num_nodes() as usize;
        let k = self.dims.len();
        let periodic = self.family.periodic();
        let offsets: Vec<Vec<i8>> = self.offsets();
        let mut strides = vec![1i64; k];
        for i in 1..k {
            strides[i] = strides[i - 1] * self.dims[i - 1] as i64;
        }
        let mut seen = vec![false; n];
        seen[root as usize] = true;
        let mut level = vec![root];
        let mut next = Vec::new();
        let mut profile = vec![1u32];
        let mut coords = vec![0i64; k];
        while !level.is_empty() {
            next.clear();
            for &u in &level {
                let mut rest = u;
                for (c, &d) in coords.iter_mut().zip(&self.dims) {
                    *c = (rest % d) as i64;
                    rest /= d;
                }
                'offsets: for o in &offsets {
                    let mut v = u as i64;
                    for i in 0..k {
                        if o[i] == 0 {
                            continue;
                        }
                        let d = self.dims[i] as i64;
                        let x = coords[i] + o[i] as i64;
                        let wrapped = if (0..d).contains(&x) { x } else { x.rem_euclid(d) };
                        if !periodic && wrapped != x {
                            continue 'offsets;
                        }
                        v += (wrapped - coords[i]) * strides[i];
                    }
                    if !seen[v as usize] {
                        seen[v as usize] = true;
                        next.push(v as u32);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            profile.push(next.len() as u32);
            if let Some(e) = expect {
                if e.get(profile.len() - 1) != profile.last() {
                    return Some(profile);
                }
            }
            std::mem::swap(&mut level, &mut next);
        }
        Some(profile)
    }

    /// Cartesian graphs without per-node allocation: coordinates are updated incrementally and
    /// each offset becomes a stride, with wrap-around or bounds checks per dimension.
    fn cartesian_graph(&self) -> Graph {
        let n = self.num_nodes();
        let k = self.dims.len();
        let periodic = self.family.periodic();
        let offsets: Vec<Vec<i8>> = self.offsets();
        let mut strides = vec![1i64; k];
        for i in 1..k {
            strides[i] = strides[i - 1] * self.dims[i - 1] as i64;
        }
        // The offsets come in ± pairs, so each node's list is complete: the CSR arrays are
        // filled node by node without a global sort.
        let mut coords = vec![0u32; k];
        let mut offsets_csr: Vec<u32> = Vec::with_capacity(n as usize + 1);
        let mut targets: Vec<u32> = Vec::with_capacity(n as usize * offsets.len());
        offsets_csr.push(0);
        let mut row: Vec<u32> = Vec::with_capacity(offsets.len());
        for u in 0..n {
            row.clear();
            'dirs: for o in &offsets {
                let mut v = u as i64;
                for i in 0..k {
                    let step = o[i] as i64;
                    if step == 0 {
                        continue;
                    }
                    let d = self.dims[i] as i64;
                    let x = coords[i] as i64 + step;
                    let wrapped = if (0..d).contains(&x) { x } else { x.rem_euclid(d) };
                    if !periodic && wrapped != x {
                        continue 'dirs;
                    }
                    v += (wrapped - coords[i] as i64) * strides[i];
                }
                if v != u as i64 {
                    row.push(v as u32);
                }
            }
            row.sort_unstable();
            row.dedup();
            targets.extend_from_slice(&row);
            offsets_csr.push(targets.len() as u32);
            for (c, &d) in coords.iter_mut().zip(&self.dims) {
                *c += 1;
                if *c < d {
                    break;
                }
                *c = 0;
            }
        }
        Graph {
            offsets: offsets_csr,
            targets,
        }
    }
}
