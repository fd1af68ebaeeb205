//! Geometry and colours of the matrix heatmap, kept apart from the DOM so they can be tested.
//!
//! Traces with many ranks would need millions of SVG cells; above [`MAX_SIDE`] ranks the
//! drawing groups ranks into equal blocks and each cell shows the sum over its block.

use serde::{Deserialize, Serialize};
use tracelogic_analysis::matrix::{CommMatrix, Filtered, Metric};

/// Most cells per side the heatmap draws.
pub const MAX_SIDE: u32 = 128;

/// The cells to draw: a `side × side` grid over the ranks, row = sender, column = receiver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    /// Number of ranks in the trace.
    pub ranks: u32,
    /// Ranks per block along each side (1 when every rank has its own cell).
    pub block: u32,
    /// Cells per side.
    pub side: u32,
    /// Metric value per cell, row-major.
    pub values: Vec<u64>,
    /// Whether any entry of the cell survives the threshold, row-major.
    pub kept: Vec<bool>,
    /// Smallest non-zero cell value (0 when all cells are 0).
    pub min: u64,
    /// Largest cell value.
    pub max: u64,
}

impl Grid {
    /// Group `matrix` (and its filtered form) into at most `max_side` cells per side.
    pub fn new(matrix: &CommMatrix, filtered: &Filtered, metric: Metric, max_side: u32) -> Grid {
        let n = matrix.ranks;
        let source = match metric {
            Metric::Bytes => &matrix.bytes,
            Metric::Messages => &matrix.messages,
        };
        let block = n.div_ceil(max_side.max(1)).max(1);
        let side = n.div_ceil(block);
        let cells = (side as usize) * (side as usize);
        let mut values = vec![0u64; cells];
        let mut kept = vec![false; cells];
        for from in 0..n as usize {
            for to in 0..n as usize {
                let i = from * n as usize + to;
                let c = (from / block as usize) * side as usize + to / block as usize;
                values[c] = values[c].saturating_add(source.get(i).copied().unwrap_or(0));
                kept[c] |= filtered.binary.get(i).is_some_and(|&b| b != 0);
            }
        }
        let min = values.iter().copied().filter(|&v| v > 0).min().unwrap_or(0);
        let max = values.iter().copied().max().unwrap_or(0);
        Grid {
            ranks: n,
            block,
            side,
            values,
            kept,
            min,
            max,
        }
    }

    /// Value of the cell at `row`, `col`.
    pub fn value(&self, row: u32, col: u32) -> u64 {
        self.values[(row * self.side + col) as usize]
    }

    /// The ranks a cell index covers along one side, as an inclusive range.
    pub fn ranks_of(&self, cell: u32) -> (u32, u32) {
        let first = cell * self.block;
        (first, (first + self.block).min(self.ranks) - 1)
    }

    /// Position 0..1 of `value` on the logarithmic colour scale from [`Grid::min`] to [`Grid::max`].
    pub fn scale(&self, value: u64) -> f64 {
        log_position(value, self.min, self.max)
    }
}

/// Position 0..1 of `value` between `min` and `max` on a log scale (1 when `min == max`).
pub fn log_position(value: u64, min: u64, max: u64) -> f64 {
    if value == 0 || max == 0 {
        return 0.0;
    }
    let (lo, hi) = ((min.max(1) as f64).ln(), (max as f64).ln());
    if hi <= lo {
        return 1.0;
    }
    (((value as f64).ln() - lo) / (hi - lo)).clamp(0.0, 1.0)
}

/// Viridis, sampled at nine points: dark blue for little traffic, yellow for the most. It stays
/// readable in greyscale and for the common colour-vision deficiencies.
const PALETTE: [(u8, u8, u8); 9] = [
    (68, 1, 84),
    (71, 45, 123),
    (59, 82, 139),
    (44, 114, 142),
    (33, 145, 140),
    (39, 173, 129),
    (92, 200, 99),
    (170, 220, 50),
    (253, 231, 37),
];

/// CSS colour (`#rrggbb`) of position `t` (0..1) on the scale.
pub fn colour(t: f64) -> String {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let x = t * (PALETTE.len() - 1) as f64;
    let i = (x.floor() as usize).min(PALETTE.len() - 2);
    let f = x - i as f64;
    let (a, b) = (PALETTE[i], PALETTE[i + 1]);
    let mix = |p: u8, q: u8| (p as f64 + (q as f64 - p as f64) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Values to label on the legend: `min`, the powers of ten strictly between, and `max`
/// (at most `max_ticks`, thinning the powers of ten evenly when there are more).
pub fn legend_ticks(min: u64, max: u64, max_ticks: usize) -> Vec<u64> {
    if max == 0 {
        return Vec::new();
    }
    let min = min.max(1);
    if min >= max {
        return vec![max];
    }
    let mut inner = Vec::new();
    let mut p: u64 = 10;
    while p < max {
        if p > min {
            inner.push(p);
        }
        p = match p.checked_mul(10) {
            Some(q) => q,
            None => break,
        };
    }
    let room = max_ticks.saturating_sub(2);
    if inner.len() > room {
        let n = inner.len();
        inner = (0..room)
            .map(|k| inner[(k * n) / room.max(1) + (n / room.max(1)) / 2])
            .collect();
    }
    let mut ticks = vec![min];
    ticks.extend(inner);
    ticks.push(max);
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(n: u32, bytes: Vec<u64>) -> CommMatrix {
        let messages = bytes.iter().map(|&b| u64::from(b > 0)).collect();
        CommMatrix {
            ranks: n,
            bytes,
            messages,
        }
    }

    fn keep_all(m: &CommMatrix) -> Filtered {
        Filtered {
            threshold_pct: 0.0,
            metric: Metric::Bytes,
            binary: m.bytes.iter().map(|&b| u8::from(b > 0)).collect(),
            removed_entries: 0,
            removed_share: 0.0,
        }
    }

    #[test]
    fn small_matrices_get_one_cell_per_rank() {
        let m = matrix(3, vec![0, 10, 0, 1000, 0, 5, 0, 0, 0]);
        let g = Grid::new(&m, &keep_all(&m), Metric::Bytes, MAX_SIDE);
        assert_eq!((g.block, g.side, g.min, g.max), (1, 3, 5, 1000));
        assert_eq!(g.value(1, 0), 1000);
        assert_eq!(g.kept, vec![false, true, false, true, false, true, false, false, false]);
        let gm = Grid::new(&m, &keep_all(&m), Metric::Messages, MAX_SIDE);
        assert_eq!(gm.values.iter().sum::<u64>(), 3);
    }

    #[test]
    fn large_matrices_are_grouped_into_blocks() {
        let n = 300u32;
        let mut bytes = vec![0u64; (n * n) as usize];
        let at = |from: u32, to: u32| (from * n + to) as usize;
        bytes[at(299, 0)] = 7;
        bytes[at(0, 299)] = 9;
        bytes[at(1, 2)] = 1;
        bytes[at(2, 1)] = 2;
        let m = matrix(n, bytes);
        let g = Grid::new(&m, &keep_all(&m), Metric::Bytes, 128);
        assert_eq!(g.block, 3);
        assert_eq!(g.side, 100);
        assert_eq!(g.value(0, 0), 3);
        assert_eq!(g.value(99, 0), 7);
        assert_eq!(g.value(0, 99), 9);
        assert_eq!(g.ranks_of(99), (297, 299));
        assert_eq!(g.values.iter().sum::<u64>(), 19);
    }

    #[test]
    fn uneven_blocks_end_at_the_last_rank() {
        let m = matrix(130, vec![0; 130 * 130]);
        let g = Grid::new(&m, &keep_all(&m), Metric::Bytes, 128);
        assert_eq!((g.block, g.side), (2, 65));
        assert_eq!(g.ranks_of(64), (128, 129));
        assert_eq!((g.min, g.max), (0, 0));
    }

    #[test]
    fn log_scale_spans_min_to_max() {
        assert_eq!(log_position(0, 10, 1000), 0.0);
        assert_eq!(log_position(10, 10, 1000), 0.0);
        assert!((log_position(100, 10, 1000) - 0.5).abs() < 1e-12);
        assert_eq!(log_position(1000, 10, 1000), 1.0);
        assert_eq!(log_position(5, 5, 5), 1.0);
    }

    #[test]
    fn colours_run_from_dark_to_yellow() {
        assert_eq!(colour(0.0), "#440154");
        assert_eq!(colour(1.0), "#fde725");
        assert_eq!(colour(f64::NAN), "#440154");
        assert_eq!(colour(0.5), "#21918c");
        assert_ne!(colour(0.49), colour(0.51));
    }

    #[test]
    fn legend_ticks_are_powers_of_ten_between_the_ends() {
        assert_eq!(legend_ticks(3, 4500, 8), vec![3, 10, 100, 1000, 4500]);
        assert_eq!(legend_ticks(0, 0, 8), Vec::<u64>::new());
        assert_eq!(legend_ticks(7, 7, 8), vec![7]);
        let t = legend_ticks(1, u64::MAX, 6);
        assert_eq!(t.len(), 6);
        assert!(t.windows(2).all(|w| w[0] < w[1]));
    }
}
