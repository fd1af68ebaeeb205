//! The timeline view's geometry and pixels, apart from the page: the visible window and its
//! zoom and pan, the time axis's ticks, which lane a row of pixels shows, the rank order, the
//! colour of each MPI function and the RGBA image of a [`TimelineTile`]. Everything here is
//! plain Rust, unit-tested natively.

use tracelogic_engine::timeline::{Clock, Colour, TileCall, TileMessage, TimelineTile, NONE};

/// The window shown, in clock units (ns since the first event, or steps), as floats so that
/// zooming by small factors accumulates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    /// Left edge.
    pub from: f64,
    /// Right edge.
    pub to: f64,
}

/// Narrowest window (clock units): 16 ns, or 16 steps.
pub const MIN_SPAN: f64 = 16.0;

impl Viewport {
    /// The whole run `[0, extent]`.
    pub fn whole(extent: u64) -> Viewport {
        Viewport {
            from: 0.0,
            to: (extent.max(1)) as f64,
        }
    }

    /// Width of the window.
    pub fn span(&self) -> f64 {
        self.to - self.from
    }

    /// The x (0..width) of clock value `t`.
    pub fn x_of(&self, t: f64, width: f64) -> f64 {
        (t - self.from) / self.span() * width
    }

    /// The clock value at x (0..width).
    pub fn t_of(&self, x: f64, width: f64) -> f64 {
        self.from + x / width * self.span()
    }

    /// Zoom by `factor` (< 1 zooms in) keeping the clock value under `anchor` (0..1 of the
    /// width) in place; the window stays within `[0, extent]` and at least [`MIN_SPAN`] wide
    /// (or the whole run when it is narrower).
    pub fn zoom(&self, anchor: f64, factor: f64, extent: u64) -> Viewport {
        let extent = extent.max(1) as f64;
        let span = (self.span() * factor).clamp(MIN_SPAN.min(extent), extent);
        let pivot = self.from + anchor.clamp(0.0, 1.0) * self.span();
        let from = pivot - anchor.clamp(0.0, 1.0) * span;
        Viewport { from, to: from + span }.clamped(extent)
    }

    /// Move by `fraction` of the window's width (positive: later), within `[0, extent]`.
    pub fn pan(&self, fraction: f64, extent: u64) -> Viewport {
        let d = fraction * self.span();
        Viewport {
            from: self.from + d,
            to: self.to + d,
        }
        .clamped(extent.max(1) as f64)
    }

    fn clamped(self, extent: f64) -> Viewport {
        let span = self.span().min(extent);
        let from = self.from.clamp(0.0, extent - span);
        Viewport { from, to: from + span }
    }
}

/// Tick positions for `[from, to]`: multiples of 1, 2 or 5 × 10^k, at most `max_ticks` of
/// them (at least two when the window allows), and the step. Logical steps use integer steps.
pub fn ticks(from: f64, to: f64, max_ticks: usize, clock: Clock) -> (Vec<f64>, f64) {
    let span = (to - from).max(f64::MIN_POSITIVE);
    let max_ticks = max_ticks.max(2);
    let raw = span / max_ticks as f64;
    let mut mag = 10f64.powf(raw.log10().floor());
    if clock == Clock::Logical || mag < 1.0 {
        mag = mag.max(1.0);
    }
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= max_ticks as f64)
        .unwrap_or(10.0 * mag);
    let first = (from / step).ceil() * step;
    let mut out = Vec::new();
    let mut t = first;
    while t <= to + step * 1e-9 && out.len() <= max_ticks {
        out.push(t);
        t = first + step * out.len() as f64;
    }
    (out, step)
}

/// A tick's label: steps as integers; times in the unit of the step (ns, µs, ms, s) with the
/// decimals the step needs.
pub fn tick_label(t: f64, step: f64, clock: Clock) -> String {
    if clock == Clock::Logical {
        return format!("{}", t.round() as i64);
    }
    let (unit, scale) = if step >= 1e9 {
        ("s", 1e9)
    } else if step >= 1e6 {
        ("ms", 1e6)
    } else if step >= 1e3 {
        ("µs", 1e3)
    } else {
        ("ns", 1.0)
    };
    // Decimals so that consecutive ticks differ in the label.
    let mut decimals = 0;
    while decimals < 6 && step / scale * 10f64.powi(decimals) < 0.999 {
        decimals += 1;
    }
    format!("{:.*} {unit}", decimals as usize, t / scale)
}

/// A duration or time in ns as people read it (`12.5 µs`, `1.234567 s`).
pub fn duration_label(ns: u64) -> String {
    let v = ns as f64;
    if ns >= 1_000_000_000 {
        format!("{:.6} s", v / 1e9)
    } else if ns >= 1_000_000 {
        format!("{:.3} ms", v / 1e6)
    } else if ns >= 1_000 {
        format!("{:.3} µs", v / 1e3)
    } else {
        format!("{ns} ns")
    }
}

/// The lane drawn at pixel row `y` of a plot `height` rows tall holding `lanes` lanes.
pub fn lane_at(y: f64, height: f64, lanes: usize) -> Option<usize> {
    if lanes == 0 || y < 0.0 || y >= height || height <= 0.0 {
        return None;
    }
    Some(((y / height * lanes as f64) as usize).min(lanes - 1))
}

/// How many ranks share a lane when `ranks` ranks are drawn on `rows` pixel rows: 1 while
/// every rank gets a row, else enough that lanes are at least one row tall (what the analysis
/// does with `TimelineQuery::rows`).
pub fn ranks_per_lane(ranks: usize, rows: usize) -> usize {
    if rows == 0 || ranks <= rows {
        1
    } else {
        ranks.div_ceil(rows)
    }
}

/// Twenty well separated colours (Tableau 20 reordered so that neighbours in the list differ
/// in hue): function `f` of a trace gets `PALETTE[f % 20]`, the same at every zoom.
pub const PALETTE: [[u8; 3]; 20] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [127, 127, 127],
    [188, 189, 34],
    [23, 190, 207],
    [174, 199, 232],
    [255, 187, 120],
    [152, 223, 138],
    [255, 152, 150],
    [197, 176, 213],
    [196, 156, 148],
    [247, 182, 210],
    [199, 199, 199],
    [219, 219, 141],
    [158, 218, 229],
];

/// The colour of function id `f`.
pub fn colour(f: u32) -> [u8; 3] {
    PALETTE[(f as usize) % PALETTE.len()]
}

/// Colour of a busy column whose calls are in no pattern or phase.
pub const NO_GROUP: [u8; 3] = [200, 200, 200];

/// The colour of id `id` under `colouring`: the function's, or the pattern's as the patterns
/// view draws it ([`super::patterns::colour`]), or the phase's as the phases view draws it
/// ([`super::phases::phase_colour`]: hue 137·k, 65 % saturation, 55 % lightness).
pub fn colour_of(colouring: Colour, id: u32) -> [u8; 3] {
    match colouring {
        Colour::Function => colour(id),
        Colour::Pattern => hex(super::patterns::colour(id)).unwrap_or(NO_GROUP),
        Colour::Phase => hsl(((id as u64 * 137) % 360) as f64, 0.65, 0.55),
    }
}

/// `#rrggbb` → RGB.
fn hex(s: &str) -> Option<[u8; 3]> {
    let s = s.strip_prefix('#')?;
    let v = u32::from_str_radix(s, 16).ok()?;
    Some([(v >> 16) as u8, (v >> 8) as u8, v as u8])
}

/// RGB of a CSS `hsl(h, s, l)` (CSS Color 4's conversion), rounded.
pub fn hsl(h: f64, s: f64, l: f64) -> [u8; 3] {
    let f = |n: f64| {
        let k = (n + h / 30.0) % 12.0;
        let a = s * l.min(1.0 - l);
        let v = l - a * (k - 3.0).min(9.0 - k).clamp(-1.0, 1.0);
        (v * 255.0).round() as u8
    };
    [f(0.0), f(8.0), f(4.0)]
}

/// What each column is coloured by: its group (pattern or phase) with a group colouring, else
/// its function; and which colouring that is.
pub fn shown_ids(tile: &TimelineTile) -> (&[u32], Colour) {
    if tile.colour != Colour::Function && tile.group.len() == tile.func.len() {
        (&tile.group, tile.colour)
    } else {
        (&tile.func, Colour::Function)
    }
}

/// `#rrggbb` of a colour.
pub fn css(c: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// Opacity of a column busy `busy` (0..1) of the time: a quarter for a trace of a call, full
/// when busy throughout; idle columns are transparent.
pub fn alpha(busy: f32) -> u8 {
    if busy <= 0.0 {
        0
    } else {
        (64.0 + 191.0 * busy.clamp(0.0, 1.0)).round() as u8
    }
}

/// The RGBA pixels (`tile.pixels` wide, `height` tall) of a tile: each lane's rows take its
/// columns' function colours at the opacity of their busy share; lanes at least four rows tall
/// keep their last row empty as a separator.
pub fn tile_pixels(tile: &TimelineTile, height: u32) -> Vec<u8> {
    let w = tile.pixels as usize;
    let h = height as usize;
    let lanes = tile.lanes.len();
    let mut out = vec![0u8; w * h * 4];
    if lanes == 0 || w == 0 {
        return out;
    }
    let lane_h = h as f64 / lanes as f64;
    for y in 0..h {
        let Some(l) = lane_at(y as f64, h as f64, lanes) else {
            continue;
        };
        // Separator: the last row of a lane at least four rows tall.
        if lane_h >= 4.0 && lane_at(y as f64 + 1.0, h as f64, lanes) != Some(l) {
            continue;
        }
        let row = &mut out[y * w * 4..(y + 1) * w * 4];
        let (ids, colouring) = shown_ids(tile);
        for k in 0..w {
            let cell = l * w + k;
            let f = ids[cell];
            if f == NONE && (colouring == Colour::Function || tile.busy[cell] <= 0.0) {
                continue;
            }
            let c = if f == NONE { NO_GROUP } else { colour_of(colouring, f) };
            let a = alpha(tile.busy[cell]);
            row[k * 4..k * 4 + 4].copy_from_slice(&[c[0], c[1], c[2], a]);
        }
    }
    out
}

/// The lane of each rank of the tile (`None` for ranks not drawn).
pub fn lane_of_rank(tile: &TimelineTile, ranks: u32) -> Vec<Option<usize>> {
    let mut out = vec![None; ranks as usize];
    for (l, lane) in tile.lanes.iter().enumerate() {
        for &r in &lane.ranks {
            if let Some(x) = out.get_mut(r as usize) {
                *x = Some(l);
            }
        }
    }
    out
}

/// The listed call of lane `lane` covering clock value `t` (within `slack` units on each side:
/// a call a pixel wide is hard to hit exactly), the nearest one when several do.
pub fn call_at(tile: &TimelineTile, lane: usize, t: f64, slack: f64) -> Option<&TileCall> {
    let ranks = &tile.lanes.get(lane)?.ranks;
    tile.calls
        .iter()
        .filter(|c| ranks.contains(&c.rank))
        .filter(|c| c.begin as f64 - slack <= t && t < c.end as f64 + slack)
        .min_by(|a, b| {
            let da = dist(a, t);
            let db = dist(b, t);
            da.total_cmp(&db)
        })
}

fn dist(c: &TileCall, t: f64) -> f64 {
    if t < c.begin as f64 {
        c.begin as f64 - t
    } else if t >= c.end as f64 {
        t - c.end as f64
    } else {
        0.0
    }
}

/// The listed message whose line passes within `tolerance` px of the point (`x`, `y`) (px from
/// the plot's top left), the nearest when several do. A message is drawn from (`x_of(send)`,
/// centre of the sender's lane) to (`x_of(recv)`, centre of the receiver's lane); `lane_of`
/// gives each rank's lane ([`lane_of_rank`]), `lane_h` the lane height in px.
pub fn message_at<'a>(
    tile: &'a TimelineTile,
    lane_of: &[Option<usize>],
    x_of: impl Fn(f64) -> f64,
    lane_h: f64,
    (x, y): (f64, f64),
    tolerance: f64,
) -> Option<&'a TileMessage> {
    let centre = |r: u32| {
        lane_of
            .get(r as usize)
            .copied()
            .flatten()
            .map(|l| (l as f64 + 0.5) * lane_h)
    };
    tile.messages
        .iter()
        .filter_map(|m| {
            let (ys, yr) = (centre(m.sender)?, centre(m.receiver)?);
            let d = segment_distance((x, y), (x_of(m.send as f64), ys), (x_of(m.recv as f64), yr));
            (d <= tolerance).then_some((d, m))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, m)| m)
}

/// Distance from point `p` to the segment `a`–`b`.
fn segment_distance(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (cx, cy) = (a.0 + t * dx, a.1 + t * dy);
    ((p.0 - cx).powi(2) + (p.1 - cy).powi(2)).sqrt()
}

/// The column of the tile under clock value `t` (`None` outside its window).
pub fn column_at(tile: &TimelineTile, t: f64) -> Option<usize> {
    if t < tile.from as f64 || t >= tile.to as f64 {
        return None;
    }
    let k = ((t - tile.from as f64) / (tile.to - tile.from) as f64 * tile.pixels as f64) as usize;
    Some(k.min(tile.pixels as usize - 1))
}

/// A piece of the critical path to draw on a lane: x from `x0` to `x1` (CSS px from the plot's
/// left edge, clipped to it), computation or an MPI call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathBar {
    /// Lane drawn on.
    pub lane: usize,
    /// Left edge.
    pub x0: f64,
    /// Right edge.
    pub x1: f64,
    /// Computation (else an MPI call).
    pub compute: bool,
}

/// Where the path leaves a lane for another (the dependency it follows: a message or a
/// collective), at `x`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathLink {
    /// x of the hand-over (CSS px from the plot's left edge).
    pub x: f64,
    /// Lane the path leaves.
    pub from_lane: usize,
    /// Lane it continues on.
    pub to_lane: usize,
}

/// The critical path's `segments` (`(rank, start, end, compute)` in the timeline's clock, in
/// path order) as bars on their ranks' lanes (`lane_of[rank]`, [`lane_of_rank`]; ranks without a
/// lane are left out) and links where the path changes lane, for the window `view` drawn `width`
/// px wide. Segments outside the window are dropped; neighbours on one lane and of one kind
/// closer than half a pixel merge into one bar, so a path of 100,000 segments draws as at most
/// a few bars per pixel column.
pub fn path_overlay(
    segments: impl IntoIterator<Item = (u32, u64, u64, bool)>,
    view: &Viewport,
    width: f64,
    lane_of: &[Option<usize>],
) -> (Vec<PathBar>, Vec<PathLink>) {
    let mut bars: Vec<PathBar> = Vec::new();
    let mut links: Vec<PathLink> = Vec::new();
    let lane = |r: u32| lane_of.get(r as usize).copied().flatten();
    let visible = |t: f64| t >= view.from && t <= view.to;
    let mut previous: Option<(u32, u64)> = None;
    for (rank, start, end, compute) in segments {
        if let (Some((pr, pend)), Some(to_lane)) = (previous, lane(rank)) {
            if let Some(from_lane) = lane(pr).filter(|&l| l != to_lane && pr != rank) {
                let t = start.min(pend) as f64;
                if visible(t) {
                    links.push(PathLink {
                        x: view.x_of(t, width),
                        from_lane,
                        to_lane,
                    });
                }
            }
        }
        previous = Some((rank, end));
        let Some(l) = lane(rank) else { continue };
        if (end as f64) < view.from || (start as f64) > view.to {
            continue;
        }
        let x0 = view.x_of(start as f64, width).max(0.0);
        let x1 = view.x_of(end as f64, width).min(width);
        match bars.last_mut() {
            Some(b) if b.lane == l && b.compute == compute && x0 - b.x1 < 0.5 => b.x1 = b.x1.max(x1),
            _ => bars.push(PathBar {
                lane: l,
                x0,
                x1,
                compute,
            }),
        }
    }
    (bars, links)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bars and links by hand: ranks 0 and 2 on lanes 0 and 1 (rank 1 filtered out), a window
    /// of [100, 300] drawn 200 px wide (1 px per unit).
    #[test]
    fn the_path_overlay_by_hand() {
        let view = Viewport { from: 100.0, to: 300.0 };
        let lanes = [Some(0), None, Some(1)];
        let segments = [
            (0, 0, 50, true),     // before the window: dropped
            (0, 50, 150, false),  // clipped to x 0..50
            (2, 150, 200, true),  // a link at x 50 from lane 0 to lane 1
            (2, 200, 200, false), // zero-length call: merges? no, another kind
            (2, 200, 250, true),  // same lane and kind as the bar before the call: own bar
            (1, 250, 260, true),  // rank without a lane: no bar, no link
            (0, 260, 400, false), // link from rank 1 is not drawn; clipped to x 160..200
        ];
        let (bars, links) = path_overlay(segments, &view, 200.0, &lanes);
        assert_eq!(
            links,
            [PathLink {
                x: 50.0,
                from_lane: 0,
                to_lane: 1
            }]
        );
        let got: Vec<(usize, f64, f64, bool)> = bars.iter().map(|b| (b.lane, b.x0, b.x1, b.compute)).collect();
        assert_eq!(
            got,
            [
                (0, 0.0, 50.0, false),
                (1, 50.0, 100.0, true),
                (1, 100.0, 100.0, false),
                (1, 100.0, 150.0, true),
                (0, 160.0, 200.0, false),
            ]
        );
        // A path of many tiny segments on one lane merges into one bar per kind run.
        let many: Vec<(u32, u64, u64, bool)> = (0..10_000u64)
            .map(|i| (0, 100 + i / 100, 100 + (i + 1) / 100, true))
            .collect();
        let (bars, links) = path_overlay(many, &view, 200.0, &lanes);
        assert_eq!(bars.len(), 1);
        assert!(links.is_empty());
        assert_eq!((bars[0].x0, bars[0].x1), (0.0, 100.0));
    }
    use tracelogic_engine::timeline::Lane;

    fn tile(lanes: usize, pixels: u32) -> TimelineTile {
        TimelineTile {
            schema: String::new(),
            clock: Clock::Time,
            from: 1000,
            to: 2000,
            extent: 5000,
            pixels,
            lanes: (0..lanes as u32).map(|r| Lane { ranks: vec![r] }).collect(),
            functions: vec!["MPI_Send".into(), "MPI_Recv".into()],
            func: vec![NONE; lanes * pixels as usize],
            busy: vec![0.0; lanes * pixels as usize],
            colour: Colour::Function,
            group: Vec::new(),
            groups: Vec::new(),
            resolution: 0,
            calls: Vec::new(),
            calls_left_out: 0,
            messages: Vec::new(),
            messages_left_out: 0,
            collectives: Vec::new(),
            collectives_left_out: 0,
        }
    }

    #[test]
    fn zoom_keeps_the_time_under_the_cursor() {
        let v = Viewport {
            from: 100.0,
            to: 1100.0,
        };
        // The cursor at 30 % of the width is at t = 400.
        let z = v.zoom(0.3, 0.5, 10_000);
        assert!((z.span() - 500.0).abs() < 1e-9);
        assert!((z.t_of(0.3 * 800.0, 800.0) - 400.0).abs() < 1e-9);
        // Zooming out past the run gives the whole run; zooming in stops at MIN_SPAN.
        assert_eq!(v.zoom(0.5, 100.0, 5000), Viewport::whole(5000));
        let tiny = v.zoom(0.5, 1e-9, 5000);
        assert!((tiny.span() - MIN_SPAN).abs() < 1e-9);
        // x and t are inverse.
        assert!((v.x_of(v.t_of(123.0, 800.0), 800.0) - 123.0).abs() < 1e-9);
    }

    #[test]
    fn pan_stops_at_the_ends_of_the_run() {
        let v = Viewport {
            from: 100.0,
            to: 1100.0,
        };
        assert_eq!(v.pan(-0.5, 5000), Viewport { from: 0.0, to: 1000.0 });
        assert_eq!(
            v.pan(10.0, 5000),
            Viewport {
                from: 4000.0,
                to: 5000.0
            }
        );
        let p = v.pan(0.25, 5000);
        assert_eq!((p.from, p.to), (350.0, 1350.0));
    }

    #[test]
    fn ticks_are_round_and_within_the_window() {
        let (t, step) = ticks(0.0, 1_000_000_000.0, 10, Clock::Time);
        assert_eq!(step, 100_000_000.0);
        assert_eq!(t.len(), 11);
        assert_eq!(tick_label(t[3], step, Clock::Time), "300 ms");
        let (t, step) = ticks(1234.0, 1300.0, 5, Clock::Time);
        assert_eq!(step, 20.0);
        assert_eq!(t, vec![1240.0, 1260.0, 1280.0, 1300.0]);
        assert_eq!(tick_label(1_500_000_000.0, 500_000_000.0, Clock::Time), "1500 ms");
        // Steps are integers even for a window of three steps.
        let (t, step) = ticks(0.0, 3.0, 10, Clock::Logical);
        assert_eq!(step, 1.0);
        assert_eq!(t, vec![0.0, 1.0, 2.0, 3.0]);
        assert_eq!(tick_label(2.0, 1.0, Clock::Logical), "2");
        assert_eq!(duration_label(12_500), "12.500 µs");
    }

    #[test]
    fn lanes_merge_when_rows_run_out() {
        assert_eq!(ranks_per_lane(128, 600), 1);
        assert_eq!(ranks_per_lane(1024, 600), 2);
        assert_eq!(ranks_per_lane(1024, 300), 4);
        // 1,024 ranks on 600 rows: 512 lanes, each at least one row.
        let lanes = 1024usize.div_ceil(ranks_per_lane(1024, 600));
        assert!(lanes <= 600);
        assert_eq!(lane_at(0.0, 600.0, 512), Some(0));
        assert_eq!(lane_at(599.9, 600.0, 512), Some(511));
        assert_eq!(lane_at(600.0, 600.0, 512), None);
    }

    #[test]
    fn pixels_take_the_function_colour_at_the_busy_opacity() {
        let mut t = tile(2, 3);
        t.func[1] = 0;
        t.busy[1] = 1.0;
        t.func[3 + 2] = 1;
        t.busy[3 + 2] = 0.5;
        // 8 rows: lanes of 4 rows, the 4th row of each a separator.
        let p = tile_pixels(&t, 8);
        let px = |x: usize, y: usize| &p[(y * 3 + x) * 4..(y * 3 + x) * 4 + 4];
        assert_eq!(px(1, 0), &[31, 119, 180, 255]);
        assert_eq!(px(1, 2), &[31, 119, 180, 255]);
        assert_eq!(px(1, 3), &[0, 0, 0, 0], "separator");
        assert_eq!(px(0, 0), &[0, 0, 0, 0], "idle");
        assert_eq!(px(2, 5), &[255, 127, 14, alpha(0.5)]);
        assert_eq!(px(2, 1), &[0, 0, 0, 0]);
    }

    #[test]
    fn group_colouring_draws_groups_in_the_patterns_and_phases_colours() {
        // CSS Color 4 by hand: hsl(0, 65%, 55%) is rgb(215, 66, 66); hsl(137, 65%, 55%) is
        // rgb(66, 215, 108) (the browser test checks the legend against the browser's own).
        assert_eq!(hsl(0.0, 0.65, 0.55), [215, 66, 66]);
        assert_eq!(colour_of(Colour::Phase, 1), [66, 215, 108]);
        assert_eq!(colour_of(Colour::Pattern, 0), [0x4e, 0x79, 0xa7]);
        assert_eq!(
            colour_of(Colour::Pattern, 99),
            hex(super::super::patterns::OTHER_COLOUR).unwrap()
        );
        let mut t = tile(1, 3);
        t.func = vec![0, 1, 0];
        t.busy = vec![1.0, 1.0, 0.0];
        t.colour = Colour::Phase;
        t.group = vec![1, NONE, NONE];
        let p = tile_pixels(&t, 1);
        assert_eq!(&p[0..4], &[66, 215, 108, 255], "phase 1");
        assert_eq!(&p[4..8], &[200, 200, 200, 255], "busy in no phase");
        assert_eq!(&p[8..12], &[0, 0, 0, 0], "idle");
        // A tile without its groups falls back to the functions.
        t.group.clear();
        assert_eq!(shown_ids(&t), (&t.func[..], Colour::Function));
    }

    #[test]
    fn hover_finds_the_message_line() {
        let mut t = tile(2, 10);
        let m = |sender, receiver, send, recv| TileMessage {
            sender,
            receiver,
            send,
            recv,
            bytes: 8,
            tag: 0,
            time: (send, recv),
            late_sender: 0,
            late_receiver: 0,
        };
        t.messages = vec![m(0, 1, 1100, 1500), m(1, 0, 1800, 1900)];
        let lanes = lane_of_rank(&t, 2);
        let x_of = |v: f64| v - 1000.0;
        // The first line runs from (100, 5) to (500, 15).
        let at = |x, y| message_at(&t, &lanes, x_of, 10.0, (x, y), 3.0).map(|m| m.send);
        assert_eq!(at(300.0, 10.0), Some(1100));
        assert_eq!(at(99.0, 5.0), Some(1100));
        assert_eq!(at(300.0, 20.0), None);
        assert_eq!(at(850.0, 10.0), Some(1800));
        assert_eq!(at(600.0, 10.0), None);
        // A message to a rank not drawn is never found.
        let one = lane_of_rank(&t, 1);
        assert_eq!(message_at(&t, &one, x_of, 10.0, (300.0, 10.0), 3.0), None);
    }

    #[test]
    fn hover_finds_the_call_and_the_column() {
        let mut t = tile(2, 10);
        t.calls.push(TileCall {
            rank: 1,
            index: 7,
            func: 0,
            begin: 1500,
            end: 1510,
            time: (1500, 1510),
            bytes: 8,
            peer: 0,
            group: NONE,
            occurrence: NONE,
        });
        assert_eq!(call_at(&t, 1, 1505.0, 0.0).map(|c| c.index), Some(7));
        assert!(call_at(&t, 0, 1505.0, 0.0).is_none());
        assert!(call_at(&t, 1, 1520.0, 5.0).is_none());
        assert_eq!(call_at(&t, 1, 1512.0, 5.0).map(|c| c.index), Some(7));
        assert_eq!(column_at(&t, 1000.0), Some(0));
        assert_eq!(column_at(&t, 1999.0), Some(9));
        assert_eq!(column_at(&t, 2000.0), None);
        assert_eq!(lane_of_rank(&t, 3), vec![Some(0), Some(1), None]);
    }
}
