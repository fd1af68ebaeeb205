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
//!   (Logicalization, Table 5): the four axis neighbours plus the `northeast`/`southwest` diagonal,
//!   with wrap-around. `stencil8` is the periodic 8-point (Moore) neighbourhood. The `-mesh`
//!   variants do not wrap.
//! - A `binary-tree` of n nodes is heap-numbered: the children of `i` are `2i+1` and `2i+2`.
//! - A `hypercube` of dimension d is the 2×…×2 grid of 2^d nodes (neighbours differ in one bit).
//! - `nas-cg` is the exchange pattern of NPB CG (cg.f, `setup_submatrix_info`): ranks on an
//!   `nprows × npcols` grid numbered `proc_row·npcols + proc_col`, each exchanging with the
//!   recursive-doubling partners of its row (`proc_col xor 2^k`) and with one transpose partner.
//! - `process-grid` is the row/column process grid of dense linear algebra (HPL, ScaLAPACK,
//!   SUMMA): `P × Q` ranks numbered `row·Q + col`, each talking to its whole row and its whole
//!   column — the rook's graph `K_P □ K_Q` ([`process_grid`] finds its rows and columns);
//!   directions are relative and cyclic, `in-row+k` and `in-col+k`.

use crate::Graph;
use serde::{Deserialize, Serialize};
use std::fmt;

mod process_grid;
pub use process_grid::{disjoint_cliques, process_grid, CliqueLayout, DisjointCliques, ProcessGridLayout};

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
    /// A path (1D grid). `dims = [n]`.
    Line,
    /// Periodic 3D 7-point stencil (the six face neighbours; the same graph as a 3D torus).
    Stencil7,
    /// Non-periodic 3D 7-point stencil (the same graph as a 3D grid).
    Stencil7Mesh,
    /// Periodic 3D 19-point stencil (faces and edges of the 3×3×3 cube around a node).
    Stencil19,
    /// Non-periodic 3D 19-point stencil.
    Stencil19Mesh,
    /// Periodic 3D 27-point stencil (the full 3×3×3 cube around a node).
    Stencil27,
    /// Non-periodic 3D 27-point stencil.
    Stencil27Mesh,
    /// Heap-numbered k-ary tree: the children of `i` are `k·i+1 ..= k·i+k`. `dims = [k, n]`.
    KaryTree,
    /// One centre (node 0) talking to every other node. `dims = [n]`.
    Star,
    /// Butterfly network of dimension k: k+1 levels of 2^k rows; node `level·2^k + row` is linked
    /// to `(level+1, row)` and `(level+1, row xor 2^level)`. `dims = [k]`.
    Butterfly,
    /// The NAS CG pattern on `nprows × npcols` ranks (both powers of two, `npcols` equal to
    /// `nprows` or twice it): row partners of a recursive-doubling reduction plus one transpose
    /// partner. `dims = [nprows, npcols]`.
    NasCg,
    /// The row/column process grid of dense linear algebra: `P × Q` ranks, each talking to
    /// every rank of its row and of its column (the rook's graph `K_P □ K_Q`). `dims = [P, Q]`
    /// (rows, columns); node `row·Q + col`.
    ProcessGrid,
}

impl Family {
    /// Every family, in the order candidates are listed.
    pub const ALL: [Family; 22] = [
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
        Family::Line,
        Family::Stencil7,
        Family::Stencil7Mesh,
        Family::Stencil19,
        Family::Stencil19Mesh,
        Family::Stencil27,
        Family::Stencil27Mesh,
        Family::KaryTree,
        Family::Star,
        Family::Butterfly,
        Family::NasCg,
        Family::ProcessGrid,
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
            Family::Line => "line",
            Family::Stencil7 => "stencil7",
            Family::Stencil7Mesh => "stencil7-mesh",
            Family::Stencil19 => "stencil19",
            Family::Stencil19Mesh => "stencil19-mesh",
            Family::Stencil27 => "stencil27",
            Family::Stencil27Mesh => "stencil27-mesh",
            Family::KaryTree => "kary-tree",
            Family::Star => "star",
            Family::Butterfly => "butterfly",
            Family::NasCg => "nas-cg",
            Family::ProcessGrid => "process-grid",
        }
    }

    /// Parse a family name as [`Family::name`] writes it.
    pub fn from_name(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }

    /// True for families whose nodes are Cartesian coordinates and whose directions are offsets
    /// (grids, tori, lines and the 2D/3D stencils).
    pub fn is_cartesian(self) -> bool {
        matches!(
            self,
            Family::Grid
                | Family::Torus
                | Family::Stencil6
                | Family::Stencil6Mesh
                | Family::Stencil8
                | Family::Stencil8Mesh
                | Family::Line
                | Family::Stencil7
                | Family::Stencil7Mesh
                | Family::Stencil19
                | Family::Stencil19Mesh
                | Family::Stencil27
                | Family::Stencil27Mesh
        )
    }

    /// True for Cartesian families that wrap around in every dimension.
    pub fn periodic(self) -> bool {
        matches!(
            self,
            Family::Torus
                | Family::Stencil6
                | Family::Stencil8
                | Family::Stencil7
                | Family::Stencil19
                | Family::Stencil27
        )
    }

    fn is_stencil2d(self) -> bool {
        matches!(
            self,
            Family::Stencil6 | Family::Stencil6Mesh | Family::Stencil8 | Family::Stencil8Mesh
        )
    }

    fn is_stencil3d(self) -> bool {
        matches!(
            self,
            Family::Stencil7
                | Family::Stencil7Mesh
                | Family::Stencil19
                | Family::Stencil19Mesh
                | Family::Stencil27
                | Family::Stencil27Mesh
        )
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
    /// To the node `k` places further along (mod n) in a ring or all-to-all; in a star, from the
    /// centre to leaf `k` and from leaf `i` back to the centre with `k = n − i`.
    Shift(u32),
    /// In a butterfly: to the next level (`up`) or the previous one, on the same row or across.
    Butterfly {
        /// Toward level + 1.
        up: bool,
        /// To the row that differs in the level's bit (otherwise the same row).
        cross: bool,
    },
    /// In NAS CG: to the rank of the same process row whose column differs in bit `k` (step
    /// `k` of the recursive-doubling reduction, `reduce_exch_proc`).
    RowBit(u8),
    /// In NAS CG: to the transpose partner (`exch_proc`).
    Transpose,
    /// In a process grid: `k` columns further along the same row, cyclically (name
    /// `in-row+{k}`). Relative, like a ring's shift, so every rank has every direction (the
    /// rows' increasing-ring broadcast of HPL is `in-row+1`).
    InRow(u32),
    /// In a process grid: `k` rows further along the same column, cyclically (name
    /// `in-col+{k}`).
    InColumn(u32),
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
            Direction::RowBit(k) => format!("row-bit{k}"),
            Direction::Transpose => "transpose".into(),
            Direction::InRow(k) => format!("in-row+{k}"),
            Direction::InColumn(k) => format!("in-col+{k}"),
            Direction::Butterfly { up, cross } => format!(
                "{}-{}",
                if *up { "up" } else { "down" },
                if *cross { "cross" } else { "straight" }
            ),
        }
    }
}

/// Append `x` in decimal (labels are formatted for every listed candidate of every stage; the
/// formatting machinery was most of their cost).
fn push_decimal(out: &mut String, mut x: u32) {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    out.extend(digits[i..].iter().map(|&b| b as char));
}

/// Names of the unit offsets up to three dimensions, indexed by `(x + 1) + 3 (y + 1) + 9 (z + 1)`
/// (east is +x, south +y, up +z; as [`offset_name`] spells them).
const UNIT_OFFSET_NAMES: [&str; 27] = [
    "northwest-down",
    "north-down",
    "northeast-down",
    "west-down",
    "down",
    "east-down",
    "southwest-down",
    "south-down",
    "southeast-down",
    "northwest",
    "north",
    "northeast",
    "west",
    "",
    "east",
    "southwest",
    "south",
    "southeast",
    "northwest-up",
    "north-up",
    "northeast-up",
    "west-up",
    "up",
    "east-up",
    "southwest-up",
    "south-up",
    "southeast-up",
];

/// `bit0` … `bit31` (hypercube dimensions are at most 30).
const BIT_NAMES: [&str; 32] = [
    "bit0", "bit1", "bit2", "bit3", "bit4", "bit5", "bit6", "bit7", "bit8", "bit9", "bit10", "bit11", "bit12", "bit13",
    "bit14", "bit15", "bit16", "bit17", "bit18", "bit19", "bit20", "bit21", "bit22", "bit23", "bit24", "bit25",
    "bit26", "bit27", "bit28", "bit29", "bit30", "bit31",
];

/// `row-bit0` … `row-bit31` (NAS CG's reduction steps).
const ROW_BIT_NAMES: [&str; 32] = [
    "row-bit0",
    "row-bit1",
    "row-bit2",
    "row-bit3",
    "row-bit4",
    "row-bit5",
    "row-bit6",
    "row-bit7",
    "row-bit8",
    "row-bit9",
    "row-bit10",
    "row-bit11",
    "row-bit12",
    "row-bit13",
    "row-bit14",
    "row-bit15",
    "row-bit16",
    "row-bit17",
    "row-bit18",
    "row-bit19",
    "row-bit20",
    "row-bit21",
    "row-bit22",
    "row-bit23",
    "row-bit24",
    "row-bit25",
    "row-bit26",
    "row-bit27",
    "row-bit28",
    "row-bit29",
    "row-bit30",
    "row-bit31",
];

impl Direction {
    /// [`Direction::name`] without allocating, for the names that are fixed words (unit offsets
    /// of up to three dimensions, hypercube and NAS CG row bits below 32, parent, left and
    /// right child, transpose); `None` for the others. Reports with a neighbour list per rank name every neighbour, so the words are
    /// shared instead of copied.
    pub fn static_name(&self) -> Option<&'static str> {
        match self {
            Direction::Offset(o) if o.len() <= 3 && o.iter().all(|s| (-1..=1).contains(s)) => {
                let at = |k: usize| (o.get(k).copied().unwrap_or(0) + 1) as usize;
                let name = UNIT_OFFSET_NAMES[at(0) + 3 * at(1) + 9 * at(2)];
                (!name.is_empty()).then_some(name)
            }
            Direction::Bit(k) => BIT_NAMES.get(*k as usize).copied(),
            Direction::RowBit(k) => ROW_BIT_NAMES.get(*k as usize).copied(),
            Direction::Parent => Some("parent"),
            Direction::Child(0) => Some("left-child"),
            Direction::Child(1) => Some("right-child"),
            Direction::Transpose => Some("transpose"),
            _ => None,
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

/// The process grid NPB CG uses for `ranks` ranks (setparams.c `write_cg_info`): `npcols =
/// 2^⌈log2(ranks)/2⌉`, `nprows = ranks / npcols`; `None` unless `ranks` is a power of two.
pub fn nas_cg_grid(ranks: u32) -> Option<[u32; 2]> {
    if ranks == 0 || !ranks.is_power_of_two() {
        return None;
    }
    let l = ranks.trailing_zeros();
    let cols = 1u32 << l.div_ceil(2);
    Some([ranks / cols, cols])
}

/// Checks NAS CG dimensions: `[nprows, npcols]` as NPB sets them, or the shorthand `[d]` for
/// 2^d ranks on NPB's own grid (as `hypercube:d`).
fn nas_cg_dims(dims: &[u32]) -> Result<Vec<u32>, String> {
    match *dims {
        [d] if d <= 30 => Ok(nas_cg_grid(1 << d).expect("power of two").to_vec()),
        [rows, cols]
            if rows >= 1
                && rows.is_power_of_two()
                && cols.is_power_of_two()
                && (cols == rows || Some(cols) == rows.checked_mul(2))
                && rows.checked_mul(cols).is_some_and(|n| n <= 1 << 30) =>
        {
            Ok(vec![rows, cols])
        }
        _ => Err(format!(
            "nas-cg: give NPROWSxNPCOLS (powers of two, npcols = nprows or 2·nprows, e.g. 4x4 or 4x8) \
             or one exponent d for 2^d ranks; got {dims:?}"
        )),
    }
}

/// The transpose partner of `rank` in NPB CG (`exch_proc` in cg.f `setup_submatrix_info`):
/// the transposed position on a square grid; with `npcols = 2·nprows`, ranks go in pairs
/// `(2h, 2h+1)` and pair `h` is transposed on an `nprows × nprows` grid.
fn nas_cg_transpose(rows: u32, cols: u32, rank: u32) -> u32 {
    if rows == cols {
        (rank % rows) * rows + rank / rows
    } else {
        let h = rank / 2;
        2 * ((h % rows) * rows + h / rows) + rank % 2
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
            Family::BinaryTree | Family::AllToAll | Family::Ring | Family::Line | Family::Star if dims.len() != 1 => {
                return Err(format!("{}: give one size n", family.name()))
            }
            Family::KaryTree if dims.len() != 2 || dims[0] < 2 || dims[0] > 255 => {
                return Err("kary-tree: give the arity k (2..=255) and the size n, as KxN".into())
            }
            Family::Butterfly if dims.len() != 1 || dims[0] > 24 => {
                return Err("butterfly: give one dimension k ((k+1)·2^k nodes, k ≤ 24)".into())
            }
            _ => {}
        }
        let n = match family {
            Family::KaryTree => dims[1] as u64,
            Family::Butterfly => (dims[0] as u64 + 1) << dims[0],
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

    /// Number of nodes.
    pub fn num_nodes(&self) -> u32 {
        match self.family {
            Family::Hypercube => 1 << self.dims[0],
            Family::KaryTree => self.dims[1],
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
        };
        d.push_str(suffix);
        d
    }

    /// Coordinates of `node`: Cartesian coordinates (dimension 0 first); hypercube bits (bit 0
    /// first); `[depth, position in level]` for trees; `[level, row]` for butterflies; `[node]`
    /// for rings, stars and all-to-all.
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
            Family::KaryTree => std::iter::once(Direction::Parent)
                .chain((0..self.dims[0] as u8).map(Direction::Child))
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
            (Family::KaryTree, Direction::Parent) if node > 0 => (node - 1) / self.dims[0],
            (Family::KaryTree, Direction::Child(i)) if (*i as u32) < self.dims[0] => {
                let c = self.dims[0] as u64 * node as u64 + 1 + *i as u64;
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
            Direction::Parent => Direction::Child(((node_from + 1) % 2) as u8),
            Direction::Butterfly { up, cross } => Direction::Butterfly { up: !up, cross: *cross },
            Direction::RowBit(k) => Direction::RowBit(*k),
            Direction::Transpose => Direction::Transpose,
            Direction::InRow(k) => Direction::InRow((self.dims[1] - k % self.dims[1]) % self.dims[1]),
            Direction::InColumn(k) => Direction::InColumn((self.dims[0] - k % self.dims[0]) % self.dims[0]),
            Direction::Shift(k) => Direction::Shift((self.num_nodes() - k) % self.num_nodes()),
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

impl TopologySpec {
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
    fn static_names_are_the_names() {
        let mut named = 0;
        for k in 1..=4usize {
            for code in 0..3usize.pow(k as u32) {
                let o: Vec<i8> = (0..k).map(|i| (code / 3usize.pow(i as u32) % 3) as i8 - 1).collect();
                let d = Direction::Offset(o.clone());
                match d.static_name() {
                    Some(name) => {
                        assert_eq!(name, d.name(), "{o:?}");
                        named += 1;
                    }
                    None => assert!(k > 3 || o.iter().all(|&x| x == 0), "{o:?}"),
                }
            }
        }
        assert_eq!(named, 2 + 8 + 26);
        assert_eq!(Direction::Offset(vec![2, 0]).static_name(), None);
        for d in [
            Direction::Parent,
            Direction::Child(0),
            Direction::Child(1),
            Direction::Transpose,
        ] {
            assert_eq!(d.static_name(), Some(d.name().as_str()));
        }
        for k in 0..40u8 {
            for d in [Direction::Bit(k), Direction::RowBit(k)] {
                match d.static_name() {
                    Some(name) => assert_eq!(name, d.name()),
                    None => assert!(k >= 32, "{d:?}"),
                }
            }
        }
        assert_eq!(Direction::Shift(3).static_name(), None);
    }

    #[test]
    fn labels_name_the_extents_and_the_family() {
        for (s, label) in [
            ("grid:4x3", "4x3 grid"),
            ("torus:4x4x2", "4x4x2 torus"),
            ("stencil6:5x4", "5x4 6-point stencil"),
            ("stencil6-mesh:5x4", "5x4 6-point stencil (no wrap-around)"),
            ("stencil8:5x4", "5x4 8-point stencil"),
            ("stencil8-mesh:5x4", "5x4 8-point stencil (no wrap-around)"),
            ("hypercube:3", "3-dimensional hypercube (2x2x2 grid)"),
            ("hypercube:1", "1-dimensional hypercube"),
            ("binary-tree:15", "15-node binary tree"),
            ("all-to-all:6", "6-node all-to-all"),
            ("ring:9", "9-node ring"),
            ("line:7", "7-node line"),
            ("stencil7:4x3x2", "4x3x2 7-point stencil"),
            ("stencil7-mesh:4x3x2", "4x3x2 7-point stencil (no wrap-around)"),
            ("stencil19:4x3x3", "4x3x3 19-point stencil"),
            ("stencil19-mesh:4x3x3", "4x3x3 19-point stencil (no wrap-around)"),
            ("stencil27:3x3x3", "3x3x3 27-point stencil"),
            ("stencil27-mesh:3x3x3", "3x3x3 27-point stencil (no wrap-around)"),
            ("kary-tree:3x40", "40-node 3-ary tree"),
            ("star:9", "9-node star"),
            ("butterfly:3", "3-dimensional butterfly (32 nodes)"),
            ("grid:100x10", "100x10 grid"),
            ("ring:2000000000", "2000000000-node ring"),
        ] {
            assert_eq!(spec(s).label(), label, "{s}");
        }
        for x in [0, 7, 10, 99, 1005, u32::MAX] {
            let mut out = String::from("x");
            push_decimal(&mut out, x);
            assert_eq!(out, format!("x{x}"));
        }
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
