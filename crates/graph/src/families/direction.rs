//! Logical directions: a Cartesian offset or a named relation, and their names (`east`, `+d3`, `in-row+2`).

use super::*;

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
    /// In a master–worker topology: from a worker to master `i` (name `master{i}`). By role,
    /// so every worker has the same directions.
    Master(u32),
    /// In a master–worker topology: from a master to worker `j`, the `j`-th worker counted
    /// from the first (name `worker{j}`), the same name from every master.
    Worker(u32),
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
            Direction::Master(i) => format!("master{i}"),
            Direction::Worker(j) => format!("worker{j}"),
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
pub(super) fn push_decimal(out: &mut String, mut x: u32) {
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

pub(super) fn offset_name(o: &[i8]) -> String {
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
