//! Geometry and colours of the matrix heatmap, kept apart from the DOM so they can be tested.
//!
//! Traces with many ranks would need millions of cells; above [`MAX_SIDE`] ranks the drawing
//! groups ranks into equal blocks and each cell shows the sum over its block.
//!
//! The page draws the cells on a canvas: [`Grid::pixels`] gives one RGBA pixel per cell, which
//! the canvas scales up without smoothing (a 128 × 128 matrix is one 64 KiB image instead of
//! 16,384 SVG elements). [`cell_at`] maps a pointer position back to its cell, and
//! [`svg_document`] writes the same picture as a standalone SVG file from the data.

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
        let n = matrix.ranks();
        let block = n.div_ceil(max_side.max(1)).max(1);
        let side = n.div_ceil(block);
        let cells = (side as usize) * (side as usize);
        let mut values = vec![0u64; cells];
        let mut kept = vec![false; cells];
        // Only the stored (non-zero) entries: O(cells + entries), whatever the rank count.
        for (e, &k) in matrix.entries().zip(&filtered.kept) {
            let c = (e.from / block) as usize * side as usize + (e.to / block) as usize;
            values[c] = values[c].saturating_add(e.value(metric));
            kept[c] |= k;
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

    /// The same cells (blocks and kept flags) holding `entries` instead: `(sender, receiver,
    /// value)` summed per cell, with the scale's ends recomputed (the waiting metric's
    /// nanoseconds over the traffic matrix's filter).
    pub fn with_values(mut self, entries: impl IntoIterator<Item = (u32, u32, u64)>) -> Grid {
        self.values.iter_mut().for_each(|v| *v = 0);
        for (from, to, v) in entries {
            if from < self.ranks && to < self.ranks {
                let c = (from / self.block) as usize * self.side as usize + (to / self.block) as usize;
                self.values[c] = self.values[c].saturating_add(v);
            }
        }
        self.min = self.values.iter().copied().filter(|&v| v > 0).min().unwrap_or(0);
        self.max = self.values.iter().copied().max().unwrap_or(0);
        self
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

/// Smallest distance (share of the colour scale) between an inner legend label and an end.
pub const TICK_GAP: f64 = 0.12;

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

/// Red, green and blue of position `t` (0..1) on the scale.
pub fn rgb(t: f64) -> Rgb {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let x = t * (PALETTE.len() - 1) as f64;
    let i = (x.floor() as usize).min(PALETTE.len() - 2);
    let f = x - i as f64;
    let (a, b) = (PALETTE[i], PALETTE[i + 1]);
    let mix = |p: u8, q: u8| (p as f64 + (q as f64 - p as f64) * f).round() as u8;
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// CSS colour (`#rrggbb`) of position `t` (0..1) on the scale.
pub fn colour(t: f64) -> String {
    let (r, g, b) = rgb(t);
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// A colour as red, green and blue.
pub type Rgb = (u8, u8, u8);

/// `rgb(r, g, b)`, the form browsers give computed colours in.
pub fn css_rgb((r, g, b): Rgb) -> String {
    format!("rgb({r}, {g}, {b})")
}

/// A computed CSS colour (`rgb(…)`, `rgba(…)` or `#rrggbb`) as red, green and blue; `None` for
/// anything else (the caller keeps its default).
pub fn parse_css_colour(text: &str) -> Option<Rgb> {
    let text = text.trim();
    if let Some(hex) = text.strip_prefix('#') {
        if hex.len() != 6 || !hex.is_ascii() {
            return None;
        }
        let at = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
        return Some((at(0)?, at(2)?, at(4)?));
    }
    let inner = text
        .strip_prefix("rgba(")
        .or_else(|| text.strip_prefix("rgb("))?
        .strip_suffix(')')?;
    let mut parts = inner.split([',', ' ', '/']).filter(|p| !p.is_empty());
    let mut next = || {
        parts
            .next()?
            .parse::<f64>()
            .ok()
            .map(|v| v.round().clamp(0.0, 255.0) as u8)
    };
    Some((next()?, next()?, next()?))
}

/// Which of the two matrix figures a drawing is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Layer {
    /// The metric on the log colour scale.
    Heat,
    /// Kept, removed by the threshold, or no traffic.
    Binary,
}

/// The theme colours of the binary matrix (the heatmap's scale is the same in both themes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinaryColours {
    /// A pair the threshold keeps.
    pub kept: Rgb,
    /// A pair with traffic that the threshold removes.
    pub removed: Rgb,
}

impl Default for BinaryColours {
    /// The light theme's `--kept` and `--removed`.
    fn default() -> Self {
        BinaryColours {
            kept: (0x1d, 0x21, 0x26),
            removed: (0xe8, 0xa3, 0x3d),
        }
    }
}

impl Grid {
    /// Colour of cell `i` (row-major) in `layer`; `None` for a pair with no traffic, which
    /// shows the empty-cell background.
    pub fn cell_colour(&self, layer: Layer, i: usize, binary: &BinaryColours) -> Option<Rgb> {
        let value = self.values.get(i).copied().unwrap_or(0);
        match layer {
            Layer::Heat => (value > 0).then(|| rgb(self.scale(value))),
            Layer::Binary => match (value > 0, self.kept.get(i).copied().unwrap_or(false)) {
                (_, true) => Some(binary.kept),
                (true, false) => Some(binary.removed),
                (false, false) => None,
            },
        }
    }

    /// One RGBA pixel per cell, row-major: the picture the canvas scales up. Pairs with no
    /// traffic are transparent, so the canvas's own background (the theme's empty-cell colour)
    /// shows through.
    pub fn pixels(&self, layer: Layer, binary: &BinaryColours) -> Vec<u8> {
        let cells = (self.side as usize) * (self.side as usize);
        let mut out = vec![0u8; cells * 4];
        for (i, px) in out.chunks_exact_mut(4).enumerate() {
            if let Some((r, g, b)) = self.cell_colour(layer, i, binary) {
                px.copy_from_slice(&[r, g, b, 255]);
            }
        }
        out
    }
}

/// The cell under a point of a plot of `side` cells per side drawn after a margin of `margin`
/// cells on the top and left (room for rank numbers), the point given as fractions `fx`, `fy`
/// (0..1) of the plot's width and height; `None` in the margin or outside.
pub fn cell_at(fx: f64, fy: f64, side: u32, margin: f64) -> Option<(u32, u32)> {
    if !(fx.is_finite() && fy.is_finite()) || side == 0 {
        return None;
    }
    let span = side as f64 + margin;
    let (x, y) = (fx * span - margin, fy * span - margin);
    let inside = |v: f64| (0.0..side as f64).contains(&v);
    (inside(x) && inside(y)).then(|| (y.floor() as u32, x.floor() as u32))
}

/// How an exported figure looks: the page's computed colours and font.
#[derive(Debug, Clone, PartialEq)]
pub struct SvgStyle {
    /// Behind everything (the figure's background in the page).
    pub background: String,
    /// Pairs with no traffic.
    pub empty: String,
    /// Rank numbers.
    pub label: String,
    /// Font of the rank numbers.
    pub font_family: String,
    /// Binary-matrix colours.
    pub binary: BinaryColours,
}

/// `&`, `<`, `>` and `"` escaped for XML text and attribute values.
fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Rank numbers beside the cells: every `step`-th rank, in a margin of `margin` cells, in a
/// font of `font` cells. Up to 32 ranks every rank is numbered in a one-cell margin; up to 128
/// (one rank a cell) every 8th or 16th, in a margin wide enough for a readable number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankLabels {
    /// Label every `step`-th cell, starting at 0.
    pub step: u32,
    /// Width of the margin around the cells, in cells.
    pub margin: f64,
    /// Font size, in cells.
    pub font: f64,
}

/// The rank labels of a grid of `side` cells of `block` ranks each, when they can be read.
pub fn rank_labels(side: u32, block: u32) -> Option<RankLabels> {
    match (block, side) {
        (1, 1..=32) => Some(RankLabels {
            step: 1,
            margin: 1.0,
            font: 0.34,
        }),
        (1, 33..=128) => {
            let margin = f64::from(side) / 16.0;
            Some(RankLabels {
                step: if side <= 64 { 8 } else { 16 },
                margin,
                font: margin * 0.32,
            })
        }
        _ => None,
    }
}

/// The figure of `layer` as a standalone SVG document, written from the data: the cells
/// (`cells_px` wide; background, the empty-cell square, one path per colour, runs of equal
/// cells along a row merged) with axis titles (sender down, receiver across), rank numbers
/// every few ranks (or the first rank of every few blocks), and the colour scale with its
/// ticks (`legend_title` above it; the binary matrix gets its two keys instead). Its
/// `aria-label` is `title`. Returns the document and its width and height in pixels.
pub fn svg_document(
    grid: &Grid,
    layer: Layer,
    style: &SvgStyle,
    cells_px: f64,
    legend_title: &str,
    title: &str,
) -> (String, f64, f64) {
    use std::collections::BTreeMap;
    use std::fmt::Write as _;
    let side = grid.side.max(1);
    let cells_px = if cells_px.is_finite() && cells_px >= 64.0 {
        cells_px.round()
    } else {
        512.0
    };
    let (left, top, gap, bar, legend_w, bottom) = (58.0, 44.0, 18.0, 14.0, 96.0, 12.0);
    let width = left + cells_px + gap + legend_w;
    let height = top + cells_px + bottom;
    let font = xml_escape(&style.font_family);
    let ink = xml_escape(&style.label);
    let mut out = String::with_capacity(4096);
    let _ = write!(
        out,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{t}\">\n\
<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"{bg}\"/>\n\
<svg x=\"{left}\" y=\"{top}\" width=\"{cells_px}\" height=\"{cells_px}\" viewBox=\"0 0 {side} {side}\" preserveAspectRatio=\"none\" shape-rendering=\"crispEdges\">\n\
<rect x=\"0\" y=\"0\" width=\"{side}\" height=\"{side}\" style=\"fill: {empty}\"/>\n",
        t = xml_escape(title),
        bg = xml_escape(&style.background),
        empty = xml_escape(&style.empty),
    );
    let mut paths: BTreeMap<Rgb, String> = BTreeMap::new();
    for row in 0..grid.side {
        let mut col = 0;
        while col < grid.side {
            let at = |c: u32| grid.cell_colour(layer, (row * grid.side + c) as usize, &style.binary);
            let Some(c) = at(col) else {
                col += 1;
                continue;
            };
            let start = col;
            while col < grid.side && at(col) == Some(c) {
                col += 1;
            }
            let run = col - start;
            let _ = write!(paths.entry(c).or_default(), "M{start} {row}h{run}v1h-{run}z");
        }
    }
    for (c, d) in &paths {
        let _ = writeln!(out, "<path style=\"fill: {}\" d=\"{d}\"/>", css_rgb(*c));
    }
    out.push_str("</svg>\n");
    // Rank numbers: at most one every 16 px, on a round step of cells.
    let cell = cells_px / f64::from(side);
    let step = [1u32, 2, 4, 5, 8, 10, 16, 20, 32, 50, 64, 100, 128, 256, 512, 1024]
        .into_iter()
        .find(|&k| f64::from(k) * cell >= 16.0)
        .unwrap_or(side);
    let _ = writeln!(out, "<g style=\"fill: {ink}; font-family: {font}; font-size: 10px\">");
    for c in (0..grid.side).step_by(step as usize) {
        let rank = grid.ranks_of(c).0;
        let mid = (f64::from(c) + 0.5) * cell;
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{rank}</text><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" dominant-baseline=\"central\">{rank}</text>",
            left + mid,
            top - 4.0,
            left - 4.0,
            top + mid
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"14\" text-anchor=\"middle\" style=\"font-size: 12px\">receiver →</text>",
        left + cells_px / 2.0
    );
    let _ = writeln!(
        out,
        "<text x=\"14\" y=\"{y:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {y:.1})\" style=\"font-size: 12px\">sender →</text>",
        y = top + cells_px / 2.0
    );
    // The colour scale: the heatmap's log scale from its smallest to its largest value, or the
    // binary matrix's two keys.
    let lx = left + cells_px + gap;
    let _ = writeln!(
        out,
        "<text x=\"{lx}\" y=\"{:.1}\" style=\"font-size: 11px\">{}</text>",
        top - 8.0,
        xml_escape(legend_title)
    );
    match layer {
        Layer::Heat if grid.max > 0 => {
            let steps = 64;
            let h = cells_px / f64::from(steps);
            for i in 0..steps {
                let t = 1.0 - (f64::from(i) + 0.5) / f64::from(steps);
                let _ = writeln!(
                    out,
                    "<rect x=\"{lx}\" y=\"{:.2}\" width=\"{bar}\" height=\"{:.2}\" style=\"fill: {}\"/>",
                    top + f64::from(i) * h,
                    h + 0.5,
                    css_rgb(rgb(t))
                );
            }
            for v in legend_ticks(grid.min, grid.max, 6) {
                let y = top + (1.0 - grid.scale(v)) * cells_px;
                let _ = writeln!(
                    out,
                    "<text x=\"{:.1}\" y=\"{y:.1}\" dominant-baseline=\"central\">{v}</text>",
                    lx + bar + 4.0
                );
            }
        }
        Layer::Heat => {}
        Layer::Binary => {
            for (i, (colour, key)) in [(style.binary.kept, "kept"), (style.binary.removed, "removed")]
                .into_iter()
                .enumerate()
            {
                let y = top + 18.0 * i as f64;
                let _ = writeln!(
                    out,
                    "<rect x=\"{lx}\" y=\"{y}\" width=\"{bar}\" height=\"12\" style=\"fill: {}\"/><text x=\"{:.1}\" y=\"{:.1}\" dominant-baseline=\"central\">{key}</text>",
                    css_rgb(colour),
                    lx + bar + 4.0,
                    y + 6.0
                );
            }
        }
    }
    out.push_str("</g>\n</svg>\n");
    (out, width, height)
}

/// Values to label on the legend: `min`, the powers of ten strictly between, and `max`
/// (at most `max_ticks`, thinning the powers of ten evenly when there are more). A power of
/// ten closer than [`TICK_GAP`] of the scale to either end is left out, so labels never overlap.
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
        let at = log_position(p, min, max);
        if p > min && (TICK_GAP..=1.0 - TICK_GAP).contains(&at) {
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
        let messages: Vec<u64> = bytes.iter().map(|&b| u64::from(b > 0)).collect();
        CommMatrix::from_dense(n, &bytes, &messages).unwrap()
    }

    fn keep_all(m: &CommMatrix) -> Filtered {
        m.filter(Metric::Bytes, 0.0)
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
    fn pixels_colour_traffic_and_leave_empty_pairs_transparent() {
        let m = matrix(2, vec![0, 10, 1000, 0]);
        let mut f = keep_all(&m);
        f.kept[m.position(0, 1).unwrap()] = false;
        let g = Grid::new(&m, &f, Metric::Bytes, MAX_SIDE);
        let binary = BinaryColours::default();
        let heat = g.pixels(Layer::Heat, &binary);
        assert_eq!(heat.len(), 16);
        assert_eq!(heat[0..4], [0, 0, 0, 0]);
        assert_eq!(
            heat[4..8],
            [68, 1, 84, 255],
            "the smallest value is the scale's dark end"
        );
        assert_eq!(heat[8..12], [253, 231, 37, 255], "the largest is yellow");
        assert_eq!(heat[12..16], [0, 0, 0, 0]);
        let bin = g.pixels(Layer::Binary, &binary);
        let (k, r) = (binary.kept, binary.removed);
        assert_eq!(bin[4..8], [r.0, r.1, r.2, 255], "traffic below the threshold");
        assert_eq!(bin[8..12], [k.0, k.1, k.2, 255]);
        assert_eq!(bin[0..4], [0, 0, 0, 0]);
    }

    #[test]
    fn points_map_to_their_cell_and_the_margin_to_none() {
        assert_eq!(cell_at(0.0, 0.0, 4, 0.0), Some((0, 0)));
        assert_eq!(cell_at(0.999, 0.26, 4, 0.0), Some((1, 3)));
        assert_eq!(cell_at(1.0, 0.5, 4, 0.0), None);
        // With a one-cell margin the plot spans 5 cells; the first fifth is the margin.
        assert_eq!(cell_at(0.1, 0.5, 4, 1.0), None);
        assert_eq!(cell_at(0.21, 0.99, 4, 1.0), Some((3, 0)));
        assert_eq!(cell_at(f64::NAN, 0.5, 4, 0.0), None);
        assert_eq!(cell_at(-0.01, 0.5, 4, 0.0), None);
    }

    #[test]
    fn computed_colours_are_read_in_every_browser_form() {
        assert_eq!(parse_css_colour("rgb(29, 33, 38)"), Some((29, 33, 38)));
        assert_eq!(parse_css_colour("rgba(1, 2, 3, 0.5)"), Some((1, 2, 3)));
        assert_eq!(parse_css_colour(" #e8a33d"), Some((0xe8, 0xa3, 0x3d)));
        assert_eq!(parse_css_colour("rgb(1 2 3 / 50%)"), Some((1, 2, 3)));
        assert_eq!(parse_css_colour("var(--kept)"), None);
        assert_eq!(parse_css_colour("#ab"), None);
    }

    /// The cells an exported SVG paints, per colour, read back from its paths.
    fn painted(svg: &str) -> Vec<(String, u32, u32)> {
        let mut out = Vec::new();
        for line in svg.lines().filter(|l| l.starts_with("<path")) {
            let fill = line
                .split("fill: ")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .to_owned();
            let d = line.split(" d=\"").nth(1).unwrap().split('"').next().unwrap();
            for run in d.split('M').filter(|r| !r.is_empty()) {
                let (pos, rest) = run.split_once('h').unwrap();
                let (x, y) = pos.split_once(' ').unwrap();
                let len: u32 = rest.split('v').next().unwrap().parse().unwrap();
                let (x, y): (u32, u32) = (x.parse().unwrap(), y.parse().unwrap());
                out.extend((x..x + len).map(|c| (fill.clone(), y, c)));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn exported_svg_paints_every_cell_with_traffic_once() {
        let n = 5u32;
        let bytes: Vec<u64> = (0..n * n)
            .map(|i| if i % 3 == 0 { 0 } else { u64::from(i % 4) * 100 })
            .collect();
        let m = matrix(n, bytes);
        let g = Grid::new(&m, &keep_all(&m), Metric::Bytes, MAX_SIDE);
        let style = SvgStyle {
            background: "rgb(255, 255, 255)".into(),
            empty: "rgb(238, 240, 242)".into(),
            label: "rgb(90, 99, 112)".into(),
            font_family: "\"A & B\", sans-serif".into(),
            binary: BinaryColours::default(),
        };
        let (svg, w, h) = svg_document(&g, Layer::Heat, &style, 300.0, "bytes sent", "Heat <map>");
        assert!(
            svg.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"")
        );
        assert!(w > 300.0 && h > 300.0);
        assert!(svg.contains("viewBox=\"0 0 5 5\""), "the cells in cell units");
        assert!(svg.contains("aria-label=\"Heat &lt;map&gt;\""));
        assert!(svg.contains("&quot;A &amp; B&quot;"));
        assert!(
            svg.contains(">receiver →</text>") && svg.contains(">sender →</text>"),
            "axis titles"
        );
        assert!(svg.contains(">bytes sent</text>"), "legend title");
        let want: Vec<(String, u32, u32)> = {
            let mut w: Vec<_> = (0..n)
                .flat_map(|r| (0..n).map(move |c| (r, c)))
                .filter(|&(r, c)| g.value(r, c) > 0)
                .map(|(r, c)| (css_rgb(rgb(g.scale(g.value(r, c)))), r, c))
                .collect();
            w.sort();
            w
        };
        assert!(!want.is_empty());
        assert_eq!(painted(&svg), want);
        // Every rank numbered on both axes (5 cells of 60 px), and the scale's ticks.
        let ticks = legend_ticks(g.min, g.max, 6);
        assert_eq!(svg.matches("<text").count(), 2 * n as usize + 3 + ticks.len());
        for t in &ticks {
            assert!(svg.contains(&format!(">{t}</text>")), "tick {t}");
        }
        // 64 colour steps in a bar right of the cells (58 px margin + 300 px cells + 18 px gap).
        assert_eq!(svg.matches("<rect x=\"376\"").count(), 64, "64 colour steps");
        let (plain, _, _) = svg_document(&g, Layer::Binary, &style, 300.0, "binary", "b");
        assert_eq!(plain.matches("<path").count(), 1, "one colour: every pair is kept");
        assert!(
            plain.contains(">kept</text>") && plain.contains(">removed</text>"),
            "binary keys"
        );
    }

    #[test]
    fn rank_labels_are_readable_up_to_128_ranks() {
        assert_eq!(rank_labels(8, 1).unwrap().step, 1);
        assert_eq!(rank_labels(64, 1).unwrap().step, 8);
        assert_eq!(rank_labels(128, 1).unwrap().step, 16);
        assert!(rank_labels(64, 2).is_none() && rank_labels(200, 1).is_none());
        // A label's font is at least 9 px when the figure is 512 px wide.
        for side in [33u32, 64, 100, 128] {
            let l = rank_labels(side, 1).unwrap();
            let px = 512.0 / (f64::from(side) + l.margin);
            assert!(l.font * px >= 9.0, "{side}: {:.1} px", l.font * px);
            // Three digits fit the margin.
            assert!(l.margin >= 3.0 * 0.6 * l.font, "{side}");
        }
    }

    #[test]
    fn legend_ticks_are_powers_of_ten_between_the_ends() {
        assert_eq!(legend_ticks(3, 4500, 8), vec![3, 10, 100, 1000, 4500]);
        assert_eq!(legend_ticks(0, 0, 8), Vec::<u64>::new());
        assert_eq!(legend_ticks(7, 7, 8), vec![7]);
        // 100 kB sits 1 % of the scale from 98.1 kB: its label would cover the minimum's.
        assert_eq!(legend_ticks(98_100, 136_400, 6), vec![98_100, 136_400]);
        assert_eq!(
            legend_ticks(9, 1_000_000, 8),
            vec![9, 100, 1000, 10_000, 100_000, 1_000_000]
        );
        let t = legend_ticks(1, u64::MAX, 6);
        assert_eq!(t.len(), 6);
        assert!(t.windows(2).all(|w| w[0] < w[1]));
    }
}
