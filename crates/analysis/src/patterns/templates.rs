//! Input patterns for a run's own topology (thesis §4.5, last paragraph): a pattern known on a
//! small grid is written for the grid the run uses, so `search_pattern` can look for it.
//!
//! The wavefront of Table 4.6 (2x4 grid, sweep from P1): every rank receives from the
//! neighbours on the corner's side and sends to those on the far side; `P6: receive from P5,
//! receive from P2, send to P7` (west before north, east before south). Programs differ in that
//! order (LU-like codes receive north first), so it is a parameter; the edit distance absorbs
//! what is left.

use std::collections::BTreeMap;
use tracelogic_model::Rank;

/// The corner a sweep starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corner {
    /// Row 0, column 0 (P1 in the thesis).
    TopLeft,
    /// Row 0, last column.
    TopRight,
    /// Last row, column 0.
    BottomLeft,
    /// Last row, last column.
    BottomRight,
}

/// The per-rank events of one wavefront sweep over a `columns × rows` grid numbered row-major
/// (node `x + columns·y`), mapped to world ranks through `rank_of_node` (identity if `None`, or
/// the topology identification's mapping). `vertical_first` puts the north/south neighbour before
/// the west/east one in both the receives and the sends (Table 4.6 has it `false`).
pub fn wavefront(
    columns: u32,
    rows: u32,
    corner: Corner,
    vertical_first: bool,
    rank_of_node: Option<&[Rank]>,
) -> Result<BTreeMap<Rank, Vec<String>>, String> {
    if columns == 0 || rows == 0 {
        return Err("a wavefront needs a grid of at least 1x1".into());
    }
    let nodes = columns as u64 * rows as u64;
    if nodes > 1 << 20 {
        return Err(format!("grid {columns}x{rows} has more than 2^20 nodes"));
    }
    if let Some(map) = rank_of_node {
        if map.len() as u64 != nodes {
            return Err(format!("mapping has {} nodes, the grid {nodes}", map.len()));
        }
    }
    let rank = |x: u32, y: u32| -> Rank {
        let node = (x + columns * y) as usize;
        rank_of_node.map_or(node as Rank, |m| m[node])
    };
    // Step towards the far side along each axis.
    let (dx, dy): (i64, i64) = match corner {
        Corner::TopLeft => (1, 1),
        Corner::TopRight => (-1, 1),
        Corner::BottomLeft => (1, -1),
        Corner::BottomRight => (-1, -1),
    };
    let inside = |x: i64, y: i64| x >= 0 && y >= 0 && x < columns as i64 && y < rows as i64;
    let mut out = BTreeMap::new();
    for y in 0..rows as i64 {
        for x in 0..columns as i64 {
            let horizontal_from = (x - dx, y);
            let vertical_from = (x, y - dy);
            let horizontal_to = (x + dx, y);
            let vertical_to = (x, y + dy);
            let (from, to) = if vertical_first {
                ([vertical_from, horizontal_from], [vertical_to, horizontal_to])
            } else {
                ([horizontal_from, vertical_from], [horizontal_to, vertical_to])
            };
            let mut events = Vec::new();
            for (px, py) in from {
                if inside(px, py) {
                    events.push(format!("R{}", rank(px as u32, py as u32)));
                }
            }
            for (px, py) in to {
                if inside(px, py) {
                    events.push(format!("S{}", rank(px as u32, py as u32)));
                }
            }
            if !events.is_empty() {
                out.insert(rank(x as u32, y as u32), events);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 4.6: the 2x4 grid (P1..P4 on the first row, P5..P8 on the second), sweep from P1.
    #[test]
    fn table_4_6() {
        let p = wavefront(4, 2, Corner::TopLeft, false, None).unwrap();
        let text: Vec<String> = p.values().map(|e| e.join(" ")).collect();
        assert_eq!(
            text,
            vec!["S1 S4", "R0 S2 S5", "R1 S3 S6", "R2 S7", "R0 S5", "R4 R1 S6", "R5 R2 S7", "R6 R3"]
        );
        // §4.5: on 5x5, P1 sends to 2 and 6 (ranks 1 and 5).
        let big = wavefront(5, 5, Corner::TopLeft, false, None).unwrap();
        assert_eq!(big[&0], vec!["S1", "S5"]);
        let back = wavefront(4, 2, Corner::BottomRight, false, None).unwrap();
        assert_eq!(back[&7], vec!["S6", "S3"]);
        assert_eq!(back[&0], vec!["R1", "R4"]);
        assert!(wavefront(2, 2, Corner::TopLeft, false, Some(&[0, 1])).is_err());
        let mapped = wavefront(2, 1, Corner::TopLeft, false, Some(&[1, 0])).unwrap();
        assert_eq!(mapped[&1], vec!["S0"]);
    }
}
