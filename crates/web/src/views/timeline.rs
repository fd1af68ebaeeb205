//! The timeline view: every rank's MPI calls over time (or over logical steps), messages from
//! send to receive, collectives, the functions in colour (docs/timeline.md).
//!
//! The worker computes tiles (`Request::Timeline`: per lane and pixel column the dominant
//! function and busy share, the calls at least a column wide, messages, collectives). The page
//! keeps the last tile as an off-screen image in the tile's own coordinates; zooming (wheel,
//! `+`/`−`, a drag on the time axis) and panning (drag, arrows) redraw that image transformed at
//! once — one `drawImage`, whatever the trace's size — and ask the worker for the tile of the new
//! window 60 ms after the last move; when it arrives it replaces the image. The main thread
//! never touches event-level data. Geometry, ticks, colours and pixels are in
//! [`super::timeline_canvas`] (unit-tested).

use super::timeline_canvas::{
    call_at, colour, colour_of, column_at, css, duration_label, lane_at, lane_of_rank, message_at, ordered_ranks,
    path_overlay, shown_ids, tick_label, ticks, tile_pixels, RankOrder, Viewport, NO_GROUP,
};
use crate::protocol::{AnalysisRequest, Answer, MatrixRequest, TimelineAnswer};
use gloo::timers::callback::Timeout;
use std::rc::Rc;
use tracelogic_engine::timeline::{Clock, Colour, TimelineQuery, TimelineTile, NONE};
use tracelogic_model::query::{parse_ranks, parse_time};
use tracelogic_model::Selection;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{
    CanvasRenderingContext2d, HtmlCanvasElement, HtmlElement, HtmlInputElement, HtmlSelectElement, ImageData,
};
use yew::prelude::*;

/// Width of the rank labels (CSS px).
const LABEL_W: f64 = 72.0;
/// Height of the time axis (CSS px).
const AXIS_H: f64 = 30.0;
/// Most pixel columns asked for.
const MAX_COLUMNS: f64 = 4096.0;
/// How close to a message line the pointer must be for its details (CSS px).
const MESSAGE_HIT_PX: f64 = 3.0;
/// Delay between the last move and the tile request (ms).
const SETTLE_MS: u32 = 60;

/// Properties of [`TimelineView`].
#[derive(Properties, PartialEq)]
pub struct TimelineProps {
    /// The latest tile from the worker.
    pub answer: Option<Rc<TimelineAnswer>>,
    /// Ask the worker for a tile.
    pub on_query: Callback<TimelineQuery>,
    /// The page's selection (its time window is shaded; "Use this window" replaces it).
    pub request: MatrixRequest,
    /// Change the page's selection.
    pub on_select: Callback<MatrixRequest>,
    /// Ranks in the trace.
    pub ranks: u32,
    /// Length of the run (ns).
    pub length_ns: u64,
    /// Node of each rank in the identified topology, once the topology view has answered.
    #[prop_or_default]
    pub topology_nodes: Option<Rc<Vec<u32>>>,
    /// The answer to [`AnalysisRequest::CriticalPathOverlay`], once asked.
    #[prop_or_default]
    pub path: Option<Rc<Result<Answer, String>>>,
    /// Ask the worker for an analysis (the critical path, when its overlay is switched on).
    #[prop_or_default]
    pub on_request: Callback<AnalysisRequest>,
}

/// Messages of [`TimelineView`].
pub enum Msg {
    Wheel(WheelEvent),
    Down(MouseEvent),
    Move(MouseEvent),
    Up(MouseEvent),
    Leave,
    Key(KeyboardEvent),
    Clock(Clock),
    /// Colour columns by function, pattern or phase.
    Colouring(Colour),
    Filter(String),
    /// Text typed in the rank filter, kept so that a redraw before the change event (a tile
    /// arriving) does not put the old text back: yew refreshes a controlled input's value.
    FilterTyped(String),
    Order(RankOrder),
    Window(String, String),
    Whole,
    UseWindow,
    ClearWindow,
    Query,
    Resized,
    /// Draw messages (`true`) or not.
    Messages(bool),
    /// Draw collectives or not.
    Collectives(bool),
    /// Overlay the critical path or not.
    Path(bool),
}

struct Drag {
    x0: f64,
    view0: Viewport,
    /// Started on the time axis: selects a range to zoom into.
    axis: bool,
    x1: f64,
}

/// The last tile, drawn off screen in its own coordinates.
struct Image {
    canvas: HtmlCanvasElement,
    answer: Rc<TimelineAnswer>,
}

/// The timeline view.
pub struct TimelineView {
    canvas: NodeRef,
    tooltip: NodeRef,
    clock: Clock,
    colouring: Colour,
    view: Option<Viewport>,
    logical_extent: Option<u64>,
    filter: Vec<u32>,
    filter_text: String,
    filter_error: Option<String>,
    order: RankOrder,
    window_error: Option<String>,
    drag: Option<Drag>,
    hover: Option<(f64, f64)>,
    image: Option<Image>,
    timer: Option<Timeout>,
    last_query: Option<TimelineQuery>,
    observer: Option<(web_sys::ResizeObserver, Closure<dyn Fn()>)>,
    show_messages: bool,
    show_collectives: bool,
    show_path: bool,
}

/// Colour of the critical path over the lanes.
const PATH_COLOUR: &str = "rgb(220, 20, 60)";

impl TimelineView {
    fn extent(&self, ctx: &Context<Self>) -> Option<u64> {
        match self.clock {
            Clock::Time => Some(ctx.props().length_ns.max(1)),
            Clock::Logical => self.logical_extent,
        }
    }

    fn ranks(&self, ctx: &Context<Self>) -> Vec<u32> {
        let p = ctx.props();
        ordered_ranks(
            p.ranks,
            &self.filter,
            self.order,
            p.topology_nodes.as_deref().map(|v| v.as_slice()),
        )
    }

    /// Canvas size in CSS px and the device pixel ratio.
    fn geometry(&self) -> Option<(HtmlCanvasElement, f64, f64, f64)> {
        let canvas = self.canvas.cast::<HtmlCanvasElement>()?;
        let rect = canvas.get_bounding_client_rect();
        let ratio = web_sys::window()?.device_pixel_ratio().max(1.0);
        Some((canvas, rect.width().max(1.0), rect.height().max(1.0), ratio))
    }

    fn schedule(&mut self, ctx: &Context<Self>, delay: u32) {
        let link = ctx.link().clone();
        self.timer = Some(Timeout::new(delay, move || link.send_message(Msg::Query)));
    }

    fn query(&mut self, ctx: &Context<Self>) {
        let Some((_, w, h, ratio)) = self.geometry() else {
            return;
        };
        let pixels = ((w - LABEL_W) * ratio).clamp(1.0, MAX_COLUMNS) as u32;
        let rows = ((h - AXIS_H) * ratio).max(1.0) as u32;
        let (from, to) = match self.view {
            Some(v) => (v.from.max(0.0).floor() as u64, Some(v.to.ceil() as u64)),
            None => (0, None),
        };
        let q = TimelineQuery {
            colour: self.colouring,
            from,
            to,
            ranks: self.ranks(ctx),
            pixels,
            rows,
            ..TimelineQuery::whole(self.clock, pixels)
        };
        if self.last_query.as_ref() != Some(&q) {
            self.last_query = Some(q.clone());
            ctx.props().on_query.emit(q);
        }
    }

    /// Draw the last tile into its off-screen image.
    fn take(&mut self, answer: Rc<TimelineAnswer>) {
        let Ok(tile) = &answer.tile else {
            return;
        };
        if tile.clock != self.clock {
            return;
        }
        if tile.clock == Clock::Logical {
            self.logical_extent = Some(tile.extent);
            if self.view.is_none() {
                self.view = Some(Viewport::whole(tile.extent));
            }
        }
        let height = answer.query.rows.max(1);
        let Some(canvas) = offscreen(tile, height, self.show_messages, self.show_collectives) else {
            return;
        };
        self.image = Some(Image { canvas, answer });
    }

    fn draw(&self, ctx: &Context<Self>) {
        let start = now();
        let Some((canvas, w, h, ratio)) = self.geometry() else {
            return;
        };
        let (dw, dh) = ((w * ratio).round() as u32, (h * ratio).round() as u32);
        if canvas.width() != dw || canvas.height() != dh {
            canvas.set_width(dw);
            canvas.set_height(dh);
        }
        let Some(c) = context(&canvas) else { return };
        let _ = c.set_transform(ratio, 0.0, 0.0, ratio, 0.0, 0.0);
        c.clear_rect(0.0, 0.0, w, h);
        let (text, grid, shade) = theme(&canvas);
        let (px, py, pw, ph) = (LABEL_W, AXIS_H, (w - LABEL_W).max(1.0), (h - AXIS_H).max(1.0));
        let Some(view) = self.view else {
            c.set_fill_style_str(&text);
            c.set_font("13px sans-serif");
            let _ = c.fill_text("computing the timeline…", px + 8.0, py + 20.0);
            return;
        };
        c.set_image_smoothing_enabled(false);
        if let Some(img) = &self.image {
            if let Ok(tile) = &img.answer.tile {
                let x0 = view.x_of(tile.from as f64, pw);
                let x1 = view.x_of(tile.to as f64, pw);
                let _ = c.draw_image_with_html_canvas_element_and_dw_and_dh(&img.canvas, px + x0, py, x1 - x0, ph);
                let _ = canvas.set_attribute("data-tile-from", &tile.from.to_string());
                let _ = canvas.set_attribute("data-tile-to", &tile.to.to_string());
                let _ = canvas.set_attribute("data-lanes", &tile.lanes.len().to_string());
                let _ = canvas.set_attribute("data-resolution", &tile.resolution.to_string());
                let _ = canvas.set_attribute("data-pixels", &tile.pixels.to_string());
                let _ = canvas.set_attribute("data-tile-clock", clock_name(tile.clock));
                let _ = canvas.set_attribute("data-tile-colour", tile.colour.name());
                let firsts: Vec<String> = tile
                    .lanes
                    .iter()
                    .filter_map(|l| l.ranks.first())
                    .map(|r| r.to_string())
                    .collect();
                let _ = canvas.set_attribute("data-lane-ranks", &firsts.join(","));
                let drawn: usize = tile.lanes.iter().map(|l| l.ranks.len()).sum();
                let _ = canvas.set_attribute("data-ranks-drawn", &drawn.to_string());
                let _ = canvas.set_attribute("data-rows", &img.answer.query.rows.to_string());
                self.draw_path(ctx, &c, &canvas, tile, &view, (px, py, pw, ph));
                // Rank labels, at least 12 px apart.
                let lanes = tile.lanes.len().max(1);
                let lane_h = ph / lanes as f64;
                let every = (12.0 / lane_h).ceil().max(1.0) as usize;
                c.set_fill_style_str(&text);
                c.set_font("11px sans-serif");
                c.set_text_baseline("middle");
                c.set_text_align("right");
                for (l, lane) in tile.lanes.iter().enumerate().step_by(every) {
                    let label = match lane.ranks.as_slice() {
                        [r] => format!("{r}"),
                        [a, .., b] => format!("{a}–{b}"),
                        [] => String::new(),
                    };
                    let _ = c.fill_text(&label, px - 6.0, py + (l as f64 + 0.5) * lane_h);
                }
            }
        }
        // The page's selection window, shaded.
        let sel = &ctx.props().request.selection;
        if self.clock == Clock::Time && (sel.from.is_some() || sel.to.is_some()) {
            let a = view.x_of(sel.from.unwrap_or(0) as f64, pw).clamp(0.0, pw);
            let b = view.x_of(sel.to.map_or(f64::MAX, |t| t as f64), pw).clamp(0.0, pw);
            c.set_fill_style_str(&shade);
            c.fill_rect(px + a, py - 6.0, (b - a).max(1.0), 6.0);
        }
        // Time axis.
        let (ts, step) = ticks(view.from, view.to, (pw / 110.0).max(2.0) as usize, self.clock);
        c.set_stroke_style_str(&grid);
        c.set_fill_style_str(&text);
        c.set_font("11px sans-serif");
        c.set_text_align("center");
        c.set_text_baseline("alphabetic");
        c.begin_path();
        c.move_to(px, py - 0.5);
        c.line_to(px + pw, py - 0.5);
        for t in &ts {
            let x = (px + view.x_of(*t, pw)).round() + 0.5;
            c.move_to(x, py - 5.0);
            c.line_to(x, py);
            let _ = c.fill_text(&tick_label(*t, step, self.clock), x, py - 9.0);
        }
        c.stroke();
        // A range being dragged on the axis.
        if let Some(d) = self.drag.as_ref().filter(|d| d.axis) {
            c.set_fill_style_str(&shade);
            let (a, b) = (d.x0.min(d.x1), d.x0.max(d.x1));
            c.fill_rect(a, py, b - a, ph);
        }
        if let Some((x, _)) = self.hover.filter(|_| self.drag.is_none()) {
            c.set_stroke_style_str(&grid);
            c.begin_path();
            c.move_to(x.round() + 0.5, py);
            c.line_to(x.round() + 0.5, py + ph);
            c.stroke();
        }
        let _ = canvas.set_attribute("data-view-from", &format!("{}", view.from.floor() as u64));
        let _ = canvas.set_attribute("data-view-to", &format!("{}", view.to.ceil() as u64));
        let _ = canvas.set_attribute("data-draw-ms", &format!("{:.3}", now() - start));
    }

    /// The critical path over the lanes of `tile` (time clock only): its segments as bands
    /// across the middle of their ranks' lanes (MPI calls solid, computation lighter) and a line
    /// where it passes from one rank to another (the message or collective it follows).
    fn draw_path(
        &self,
        ctx: &Context<Self>,
        c: &CanvasRenderingContext2d,
        canvas: &HtmlCanvasElement,
        tile: &TimelineTile,
        view: &Viewport,
        (px, py, pw, ph): (f64, f64, f64, f64),
    ) {
        let overlay = match ctx.props().path.as_deref() {
            Some(Ok(Answer::PathOverlay(o))) if self.show_path && self.clock == Clock::Time => o,
            _ => {
                let _ = canvas.remove_attribute("data-path-bars");
                let _ = canvas.remove_attribute("data-path-links");
                return;
            }
        };
        let lane_of = lane_of_rank(tile, ctx.props().ranks);
        let lane_h = ph / tile.lanes.len().max(1) as f64;
        let (bars, links) = path_overlay(
            overlay.segments.iter().map(|s| (s.0, s.1, s.2, s.3)),
            view,
            pw,
            &lane_of,
        );
        let band = (lane_h * 0.4).clamp(2.0, 10.0);
        let centre = |lane: usize| py + (lane as f64 + 0.5) * lane_h;
        c.save();
        // A dark edge under the bands keeps them apart from the functions' colours.
        c.set_fill_style_str("rgba(0, 0, 0, 0.75)");
        c.set_global_alpha(1.0);
        for b in &bars {
            c.fill_rect(
                px + b.x0 - 1.0,
                centre(b.lane) - band / 2.0 - 1.0,
                (b.x1 - b.x0).max(1.0) + 2.0,
                band + 2.0,
            );
        }
        c.set_fill_style_str(PATH_COLOUR);
        for b in &bars {
            c.set_global_alpha(if b.compute { 0.45 } else { 0.95 });
            c.fill_rect(px + b.x0, centre(b.lane) - band / 2.0, (b.x1 - b.x0).max(1.0), band);
        }
        c.set_global_alpha(0.95);
        c.set_stroke_style_str(PATH_COLOUR);
        c.set_line_width(1.5);
        c.begin_path();
        for l in &links {
            let x = (px + l.x).round() + 0.5;
            c.move_to(x, centre(l.from_lane));
            c.line_to(x, centre(l.to_lane));
        }
        c.stroke();
        c.restore();
        let _ = canvas.set_attribute("data-path-bars", &bars.len().to_string());
        let _ = canvas.set_attribute("data-path-links", &links.len().to_string());
        let _ = canvas.set_attribute("data-path-segments", &overlay.segments.len().to_string());
    }

    /// Write the tooltip for the pointer at (x, y) (CSS px in the canvas).
    fn tooltip(&self, ctx: &Context<Self>) {
        let Some(tip) = self.tooltip.cast::<HtmlElement>() else {
            return;
        };
        let hide = || {
            let _ = tip.set_attribute("hidden", "");
        };
        let (Some((x, y)), Some(view), Some(img), Some((_, w, h, _))) =
            (self.hover, self.view, self.image.as_ref(), self.geometry())
        else {
            return hide();
        };
        let Ok(tile) = &img.answer.tile else { return hide() };
        let (pw, ph) = ((w - LABEL_W).max(1.0), (h - AXIS_H).max(1.0));
        if x < LABEL_W || y < AXIS_H || self.drag.is_some() {
            return hide();
        }
        let t = view.t_of(x - LABEL_W, pw);
        let Some(lane) = lane_at(y - AXIS_H, ph, tile.lanes.len()) else {
            return hide();
        };
        let ranks = &tile.lanes[lane].ranks;
        let who = match ranks.as_slice() {
            [r] => format!("rank {r}"),
            [a, .., b] => format!("ranks {a}–{b}"),
            [] => String::new(),
        };
        let slack = 2.0 * view.span() / pw;
        let name = |f: u32| tile.functions.get(f as usize).cloned().unwrap_or_else(|| "?".into());
        let group = |g: u32| tile.groups.get(g as usize).cloned();
        let lane_of = lane_of_rank(tile, ctx.props().ranks);
        let lane_h = ph / tile.lanes.len().max(1) as f64;
        let message = self
            .show_messages
            .then(|| {
                message_at(
                    tile,
                    &lane_of,
                    |v| view.x_of(v, pw),
                    lane_h,
                    (x - LABEL_W, y - AXIS_H),
                    MESSAGE_HIT_PX,
                )
            })
            .flatten();
        let call = call_at(tile, lane, t, slack);
        // Near its own call a message's line runs along the lane: the call is what is meant.
        let own = |m: &tracelogic_engine::timeline::TileMessage| {
            call.is_some_and(|c| (m.sender == c.rank && m.send == c.begin) || (m.receiver == c.rank && m.recv == c.end))
        };
        let message = message.filter(|m| !own(m));
        let (text, attrs): (String, Vec<(&str, String)>) = if let Some(m) = message {
            let at = |v: u64, ns: u64| match self.clock {
                Clock::Time => format!("{} ({ns} ns)", duration_label(ns)),
                Clock::Logical => format!("step {v}, {} ({ns} ns)", duration_label(ns)),
            };
            let mut s = format!(
                "message rank {} → rank {}\n{} bytes · tag {}\nsent {} (the sending call's start)\nreceived {} (the receiving call's end)",
                m.sender,
                m.receiver,
                m.bytes,
                m.tag,
                at(m.send, m.time.0),
                at(m.recv, m.time.1)
            );
            if m.late_sender > 0 {
                s += &format!("\nlate sender: the receiver waited {}", duration_label(m.late_sender));
            }
            if m.late_receiver > 0 {
                s += &format!("\nlate receiver: the sender waited {}", duration_label(m.late_receiver));
            }
            let attrs = vec![
                ("data-kind", "message".to_owned()),
                ("data-sender", m.sender.to_string()),
                ("data-receiver", m.receiver.to_string()),
                ("data-bytes", m.bytes.to_string()),
                ("data-tag", m.tag.to_string()),
                ("data-send-ns", m.time.0.to_string()),
                ("data-recv-ns", m.time.1.to_string()),
                ("data-late-sender-ns", m.late_sender.to_string()),
                ("data-late-receiver-ns", m.late_receiver.to_string()),
            ];
            (s, attrs)
        } else if let Some(call) = call {
            let (e, x) = call.time;
            let mut s = format!(
                "{} · rank {} · call {}\nstart {} ({} ns)\nduration {} ({} ns)",
                name(call.func),
                call.rank,
                call.index,
                duration_label(e),
                e,
                duration_label(x - e),
                x - e
            );
            if self.clock == Clock::Logical {
                s += &format!("\nstep {}", call.end);
            }
            if call.bytes > 0 {
                s += &format!("\n{} bytes", call.bytes);
            }
            if call.peer != NONE {
                s += &format!(" · peer {}", call.peer);
            }
            if let Some(g) = group(call.group) {
                s += &format!("\n{g}");
                if call.occurrence != NONE {
                    s += &format!(", occurrence {}", call.occurrence);
                }
            }
            let attrs = vec![
                ("data-kind", "call".to_owned()),
                ("data-rank", call.rank.to_string()),
                ("data-call", call.index.to_string()),
                ("data-enter-ns", e.to_string()),
                ("data-exit-ns", x.to_string()),
                ("data-function", name(call.func)),
            ];
            (s, attrs)
        } else if let Some(k) = column_at(tile, t) {
            let cell = lane * tile.pixels as usize + k;
            let f = tile.func[cell];
            let at = match self.clock {
                Clock::Time => duration_label(t.max(0.0) as u64),
                Clock::Logical => format!("step {}", t.max(0.0) as u64 + 1),
            };
            let mut s = if f == NONE {
                format!("{who} · {at}\nno MPI call")
            } else {
                format!(
                    "{who} · {at}\nmostly {} · busy {:.0} %",
                    name(f),
                    tile.busy[cell] * 100.0
                )
            };
            let g = tile.group.get(cell).and_then(|&g| group(g));
            if let (Some(g), true) = (&g, f != NONE) {
                s += &format!("\nmostly in {g}");
            }
            (
                s,
                vec![
                    ("data-kind", "column".to_owned()),
                    ("data-function", if f == NONE { String::new() } else { name(f) }),
                    ("data-group", g.unwrap_or_default()),
                ],
            )
        } else {
            return hide();
        };
        for a in [
            "data-kind",
            "data-rank",
            "data-call",
            "data-enter-ns",
            "data-exit-ns",
            "data-function",
            "data-group",
            "data-sender",
            "data-receiver",
            "data-bytes",
            "data-tag",
            "data-send-ns",
            "data-recv-ns",
            "data-late-sender-ns",
            "data-late-receiver-ns",
        ] {
            let _ = tip.remove_attribute(a);
        }
        for (k, v) in attrs {
            let _ = tip.set_attribute(k, &v);
        }
        tip.set_inner_text(&text);
        let style = tip.style();
        let left = if x > w * 0.6 { x - 260.0 } else { x + 14.0 };
        let _ = style.set_property("left", &format!("{left:.0}px"));
        let _ = style.set_property("top", &format!("{:.0}px", y + 14.0));
        let _ = tip.remove_attribute("hidden");
        let _ = ctx;
    }

    fn set_view(&mut self, ctx: &Context<Self>, v: Viewport) {
        if self.view != Some(v) {
            self.view = Some(v);
            self.draw(ctx);
            self.schedule(ctx, SETTLE_MS);
        }
    }

    fn zoom(&mut self, ctx: &Context<Self>, anchor: f64, factor: f64) {
        let (Some(v), Some(e)) = (self.view, self.extent(ctx)) else {
            return;
        };
        self.set_view(ctx, v.zoom(anchor, factor, e));
    }

    fn pan(&mut self, ctx: &Context<Self>, fraction: f64) {
        let (Some(v), Some(e)) = (self.view, self.extent(ctx)) else {
            return;
        };
        self.set_view(ctx, v.pan(fraction, e));
    }

    /// What the critical-path overlay is doing: computing, its error (a dependency cycle), or
    /// that it needs the time clock.
    fn path_status(&self, ctx: &Context<Self>) -> Html {
        if !self.show_path {
            return Html::default();
        }
        let text = match ctx.props().path.as_deref() {
            None => "Computing the critical path…".to_owned(),
            Some(Err(e)) => format!("No critical path: {e}"),
            Some(Ok(Answer::PathOverlay(o))) if self.clock == Clock::Time => format!(
                "Critical path of the whole run: {} over {} segments (red: MPI calls solid, computation lighter; vertical lines: the messages and collectives it follows).",
                duration_label(o.length_ns),
                o.segments.len()
            ),
            Some(Ok(_)) => "The critical path is drawn on the time clock.".to_owned(),
        };
        html! { <p id="tl-path-status" class="small" role="status">{ text }</p> }
    }

    fn legend(&self) -> Html {
        let Some(Ok(tile)) = self.image.as_ref().map(|i| &i.answer.tile) else {
            return Html::default();
        };
        let (ids, colouring) = shown_ids(tile);
        if colouring != Colour::Function {
            // The groups drawn (or of a listed call), as the patterns and phases views name them.
            let mut used: Vec<u32> = ids.iter().copied().filter(|&g| g != NONE).collect();
            used.extend(tile.calls.iter().map(|c| c.group).filter(|&g| g != NONE));
            used.sort_unstable();
            used.dedup();
            let none = ids.iter().zip(&tile.busy).any(|(&g, &b)| g == NONE && b > 0.0);
            let items = used.iter().map(|&g| {
                let c = css(colour_of(colouring, g));
                let name = tile.groups.get(g as usize).cloned().unwrap_or_default();
                html! {
                    <li data-group={g.to_string()} data-colour={c.clone()} data-name={name.clone()}>
                        <span class="swatch" style={format!("background:{c}")}></span>{ name }
                    </li>
                }
            });
            let what = if colouring == Colour::Pattern {
                "Patterns"
            } else {
                "Phases"
            };
            return html! {
                <ul class="timeline-legend" id="timeline-legend" aria-label={what} data-colour-by={colouring.name()}>
                    { for items }
                    if none {
                        <li data-group="none" data-colour={css(NO_GROUP)} data-name="none">
                            <span class="swatch" style={format!("background:{}", css(NO_GROUP))}></span>
                            { if colouring == Colour::Pattern { "in no pattern" } else { "before the first phase" } }
                        </li>
                    }
                </ul>
            };
        }
        let mut used: Vec<u32> = tile.func.iter().copied().filter(|&f| f != NONE).collect();
        used.extend(tile.calls.iter().map(|c| c.func));
        used.sort_unstable();
        used.dedup();
        let items = used.iter().map(|&f| {
            let c = css(colour(f));
            let name = tile.functions.get(f as usize).cloned().unwrap_or_default();
            html! {
                <li data-func={f.to_string()} data-colour={c.clone()} data-name={name.clone()}>
                    <span class="swatch" style={format!("background:{c}")}></span>{ name }
                </li>
            }
        });
        html! { <ul class="timeline-legend" id="timeline-legend" aria-label="Functions" data-colour-by="function">{ for items }</ul> }
    }

    fn status(&self, ctx: &Context<Self>) -> Html {
        let Some(answer) = &ctx.props().answer else {
            return html! { <p class="note" id="timeline-status">{ "Computing the timeline…" }</p> };
        };
        match &answer.tile {
            Err(e) => html! { <p class="error" id="timeline-status" role="alert">{ e }</p> },
            Ok(t) => {
                let mut s = format!(
                    "{} lanes · {} · {} calls drawn one by one, {} messages, {} collectives",
                    t.lanes.len(),
                    if t.resolution == 0 {
                        "exact per column".to_owned()
                    } else {
                        format!("aggregated from bins of {}", unit(t.resolution, t.clock))
                    },
                    t.calls.len(),
                    t.messages.len(),
                    t.collectives.len()
                );
                let left = t.calls_left_out + t.messages_left_out + t.collectives_left_out;
                if left > 0 {
                    s += &format!(" ({left} more not drawn: zoom in)");
                }
                if t.lanes.iter().any(|l| l.ranks.len() > 1) {
                    s += &format!(" · {} ranks per lane", t.lanes[0].ranks.len());
                }
                html! { <p class="note" id="timeline-status" role="status">{ s }</p> }
            }
        }
    }
}

fn clock_name(clock: Clock) -> &'static str {
    match clock {
        Clock::Time => "time",
        Clock::Logical => "logical",
    }
}

fn unit(v: u64, clock: Clock) -> String {
    match clock {
        Clock::Time => duration_label(v),
        Clock::Logical => format!("{v} steps"),
    }
}

fn now() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

fn context(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas
        .get_context("2d")
        .ok()??
        .dyn_into::<CanvasRenderingContext2d>()
        .ok()
}

/// Text colour, grid colour and selection shade, from the page's CSS.
fn theme(canvas: &HtmlCanvasElement) -> (String, String, String) {
    let style = web_sys::window().and_then(|w| w.get_computed_style(canvas).ok().flatten());
    let get = |p: &str, d: &str| {
        style
            .as_ref()
            .and_then(|s| s.get_property_value(p).ok())
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| d.to_owned())
    };
    (
        get("color", "#222"),
        get("--timeline-grid", "rgba(128,128,128,0.6)"),
        get("--timeline-shade", "rgba(255,200,0,0.35)"),
    )
}

/// The tile's image: function colours per lane and column, then messages and collectives.
fn offscreen(tile: &TimelineTile, height: u32, messages: bool, collectives: bool) -> Option<HtmlCanvasElement> {
    let document = web_sys::window()?.document()?;
    let canvas: HtmlCanvasElement = document.create_element("canvas").ok()?.dyn_into().ok()?;
    let (w, h) = (tile.pixels, height);
    canvas.set_width(w);
    canvas.set_height(h);
    let c = context(&canvas)?;
    let pixels = tile_pixels(tile, h);
    let image = ImageData::new_with_u8_clamped_array_and_sh(Clamped(&pixels), w, h).ok()?;
    c.put_image_data(&image, 0.0, 0.0).ok()?;
    let span = (tile.to - tile.from).max(1) as f64;
    let x = |t: u64| (t as f64 - tile.from as f64) / span * w as f64;
    let lanes = tile.lanes.len().max(1) as f64;
    let lane_h = h as f64 / lanes;
    // Calls at least three columns wide: outlined, so that neighbours of one function part.
    c.set_stroke_style_str("rgba(0,0,0,0.45)");
    c.set_line_width(1.0);
    let lane_of = lane_of_rank(
        tile,
        tile.lanes
            .iter()
            .flat_map(|l| l.ranks.iter())
            .max()
            .map_or(0, |m| m + 1),
    );
    if lane_h >= 3.0 {
        for call in &tile.calls {
            let (a, b) = (x(call.begin), x(call.end));
            if b - a >= 3.0 {
                if let Some(Some(l)) = lane_of.get(call.rank as usize) {
                    c.stroke_rect(a + 0.5, *l as f64 * lane_h + 0.5, b - a - 1.0, (lane_h - 2.0).max(1.0));
                }
            }
        }
    }
    // Collectives: a dark tick at the top and bottom of the plot over their span.
    for coll in tile.collectives.iter().filter(|_| collectives) {
        let (a, b) = (x(coll.begin), x(coll.end).max(x(coll.begin) + 1.0));
        let col = colour(coll.func);
        c.set_fill_style_str(&format!("rgba({},{},{},0.18)", col[0], col[1], col[2]));
        c.fill_rect(a, 0.0, b - a, h as f64);
    }
    // Messages: a line from the send to the receive.
    c.set_stroke_style_str("rgba(0,0,0,0.55)");
    c.begin_path();
    for m in tile.messages.iter().filter(|_| messages) {
        let (Some(Some(ls)), Some(Some(lr))) = (lane_of.get(m.sender as usize), lane_of.get(m.receiver as usize))
        else {
            continue;
        };
        c.move_to(x(m.send), (*ls as f64 + 0.5) * lane_h);
        c.line_to(x(m.recv), (*lr as f64 + 0.5) * lane_h);
    }
    c.stroke();
    Some(canvas)
}

impl Component for TimelineView {
    type Message = Msg;
    type Properties = TimelineProps;

    fn create(ctx: &Context<Self>) -> Self {
        let mut v = TimelineView {
            canvas: NodeRef::default(),
            tooltip: NodeRef::default(),
            clock: Clock::Time,
            colouring: Colour::Function,
            view: Some(Viewport::whole(ctx.props().length_ns)),
            logical_extent: None,
            filter: Vec::new(),
            filter_text: String::new(),
            filter_error: None,
            order: RankOrder::Number,
            window_error: None,
            drag: None,
            hover: None,
            image: None,
            timer: None,
            last_query: None,
            observer: None,
            show_messages: true,
            show_collectives: true,
            show_path: false,
        };
        // A tile kept from an earlier visit is drawn at once (the view asks again anyway).
        if let Some(a) = ctx.props().answer.clone() {
            if let Ok(t) = &a.tile {
                if t.clock == Clock::Time {
                    v.view = Some(Viewport {
                        from: t.from as f64,
                        to: t.to as f64,
                    });
                }
            }
            v.take(a);
        }
        v
    }

    fn changed(&mut self, ctx: &Context<Self>, old: &Self::Properties) -> bool {
        let p = ctx.props();
        if p.answer != old.answer {
            if let Some(a) = p.answer.clone() {
                self.take(a);
            }
        }
        if p.topology_nodes != old.topology_nodes && self.order == RankOrder::Topology {
            self.schedule(ctx, 0);
        }
        if p.path != old.path && self.show_path {
            if p.path.is_none() {
                // Dropped with the trace it was computed for: ask for the new trace's.
                p.on_request.emit(AnalysisRequest::CriticalPathOverlay);
            }
            self.draw(ctx);
        }
        true
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Self::Message) -> bool {
        let Some((_, w, h, _)) = self.geometry() else {
            return false;
        };
        let pw = (w - LABEL_W).max(1.0);
        match msg {
            Msg::Wheel(e) => {
                e.prevent_default();
                let anchor = ((f64::from(e.offset_x()) - LABEL_W) / pw).clamp(0.0, 1.0);
                let dy = match e.delta_mode() {
                    1 => e.delta_y() * 16.0,
                    2 => e.delta_y() * 400.0,
                    _ => e.delta_y(),
                };
                if e.shift_key() {
                    self.pan(ctx, dy / 1000.0);
                } else {
                    self.zoom(ctx, anchor, (dy * 0.002).exp());
                }
                false
            }
            Msg::Down(e) => {
                let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
                if let (Some(view0), true) = (self.view, x >= LABEL_W) {
                    self.drag = Some(Drag {
                        x0: x,
                        x1: x,
                        view0,
                        axis: y < AXIS_H,
                    });
                }
                if let Some(c) = self.canvas.cast::<HtmlElement>() {
                    let _ = c.focus();
                }
                false
            }
            Msg::Move(e) => {
                let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
                self.hover = Some((x, y));
                match &mut self.drag {
                    Some(d) if d.axis => {
                        d.x1 = x.clamp(LABEL_W, w);
                        self.draw(ctx);
                    }
                    Some(d) => {
                        let (view0, dx) = (d.view0, x - d.x0);
                        d.x1 = x;
                        if let Some(e) = self.extent(ctx) {
                            self.set_view(ctx, view0.pan(-dx / pw, e));
                        }
                    }
                    None => {
                        self.draw(ctx);
                        self.tooltip(ctx);
                    }
                }
                false
            }
            Msg::Up(_) => {
                if let (Some(d), Some(view)) = (self.drag.take(), self.view) {
                    if d.axis && (d.x1 - d.x0).abs() >= 3.0 {
                        let a = view.t_of(d.x0.min(d.x1) - LABEL_W, pw);
                        let b = view.t_of(d.x0.max(d.x1) - LABEL_W, pw);
                        let e = self.extent(ctx).unwrap_or(1);
                        let v = Viewport { from: a, to: b }.zoom(0.5, 1.0, e);
                        self.set_view(ctx, v);
                    }
                    self.draw(ctx);
                }
                false
            }
            Msg::Leave => {
                self.hover = None;
                if self.drag.take().is_some() {
                    self.schedule(ctx, 0);
                }
                self.draw(ctx);
                self.tooltip(ctx);
                false
            }
            Msg::Key(e) => {
                let handled = match e.key().as_str() {
                    "+" | "=" => {
                        self.zoom(ctx, 0.5, 1.0 / 1.5);
                        true
                    }
                    "-" | "_" => {
                        self.zoom(ctx, 0.5, 1.5);
                        true
                    }
                    "ArrowLeft" => {
                        self.pan(ctx, -0.1);
                        true
                    }
                    "ArrowRight" => {
                        self.pan(ctx, 0.1);
                        true
                    }
                    "Home" | "0" => {
                        if let Some(e) = self.extent(ctx) {
                            self.set_view(ctx, Viewport::whole(e));
                        }
                        true
                    }
                    _ => false,
                };
                if handled {
                    e.prevent_default();
                    e.stop_propagation();
                }
                false
            }
            Msg::Clock(c) => {
                if c == self.clock {
                    return false;
                }
                self.clock = c;
                self.image = None;
                self.view = match c {
                    Clock::Time => Some(Viewport::whole(ctx.props().length_ns)),
                    Clock::Logical => self.logical_extent.map(Viewport::whole),
                };
                self.schedule(ctx, 0);
                let _ = h;
                true
            }
            Msg::Colouring(c) => {
                if c == self.colouring {
                    return false;
                }
                self.colouring = c;
                self.schedule(ctx, 0);
                true
            }
            Msg::FilterTyped(text) => {
                self.filter_text = text;
                false
            }
            Msg::Filter(text) => {
                self.filter_text = text.clone();
                if text.trim().is_empty() {
                    self.filter.clear();
                    self.filter_error = None;
                } else {
                    match parse_ranks(text.trim()) {
                        Ok(r) if r.iter().any(|&x| x < ctx.props().ranks) => {
                            self.filter = r;
                            self.filter_error = None;
                        }
                        Ok(_) => {
                            self.filter_error = Some(format!(
                                "no rank of the list is in the trace (ranks 0–{})",
                                ctx.props().ranks.saturating_sub(1)
                            ))
                        }
                        Err(e) => self.filter_error = Some(e),
                    }
                }
                self.schedule(ctx, 0);
                true
            }
            Msg::Order(o) => {
                self.order = o;
                self.schedule(ctx, 0);
                true
            }
            Msg::Window(a, b) if a.trim().is_empty() && b.trim().is_empty() => false,
            Msg::Window(a, b) => {
                let parse = |s: &str| -> Result<u64, String> {
                    match self.clock {
                        Clock::Time => parse_time(s.trim()),
                        Clock::Logical => s.trim().parse::<u64>().map_err(|_| format!("`{s}` is not a step")),
                    }
                };
                match (parse(&a), parse(&b)) {
                    (Ok(x), Ok(y)) if y > x => {
                        self.window_error = None;
                        let e = self.extent(ctx).unwrap_or(1);
                        let v = Viewport {
                            from: x as f64,
                            to: y as f64,
                        }
                        .zoom(0.5, 1.0, e);
                        self.set_view(ctx, v);
                    }
                    (Ok(_), Ok(_)) => self.window_error = Some("the end must come after the start".into()),
                    (Err(e), _) | (_, Err(e)) => self.window_error = Some(e),
                }
                true
            }
            Msg::Whole => {
                if let Some(e) = self.extent(ctx) {
                    self.set_view(ctx, Viewport::whole(e));
                }
                false
            }
            Msg::UseWindow | Msg::ClearWindow => {
                let p = ctx.props();
                let (from, to) = match (&msg, self.view) {
                    (Msg::UseWindow, Some(v)) if self.clock == Clock::Time => {
                        (Some(v.from.max(0.0).floor() as u64), Some(v.to.ceil() as u64))
                    }
                    (Msg::UseWindow, _) => return false,
                    _ => (None, None),
                };
                p.on_select.emit(MatrixRequest {
                    selection: Selection {
                        from,
                        to,
                        ..p.request.selection.clone()
                    },
                    ..p.request.clone()
                });
                false
            }
            Msg::Query => {
                self.timer = None;
                self.query(ctx);
                false
            }
            Msg::Messages(on) | Msg::Collectives(on) => {
                if matches!(msg, Msg::Messages(_)) {
                    self.show_messages = on;
                } else {
                    self.show_collectives = on;
                }
                if let Some(answer) = self.image.take().map(|i| i.answer) {
                    self.take(answer);
                }
                self.draw(ctx);
                true
            }
            Msg::Path(on) => {
                self.show_path = on;
                if on && ctx.props().path.is_none() {
                    ctx.props().on_request.emit(AnalysisRequest::CriticalPathOverlay);
                }
                self.draw(ctx);
                true
            }
            Msg::Resized => {
                self.draw(ctx);
                self.schedule(ctx, SETTLE_MS);
                false
            }
        }
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let p = ctx.props();
        let on_clock = link.callback(|e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            Msg::Clock(if v == "logical" { Clock::Logical } else { Clock::Time })
        });
        let on_order = link.callback(|e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            Msg::Order(if v == "topology" {
                RankOrder::Topology
            } else {
                RankOrder::Number
            })
        });
        let on_colouring = link.callback(|e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            Msg::Colouring(match v.as_str() {
                "pattern" => Colour::Pattern,
                "phase" => Colour::Phase,
                _ => Colour::Function,
            })
        });
        let on_filter = link.callback(|e: Event| Msg::Filter(e.target_unchecked_into::<HtmlInputElement>().value()));
        let on_filter_typed =
            link.callback(|e: InputEvent| Msg::FilterTyped(e.target_unchecked_into::<HtmlInputElement>().value()));
        let on_window = link.callback(|e: SubmitEvent| {
            e.prevent_default();
            let doc = web_sys::window().and_then(|w| w.document());
            let get = |id: &str| {
                doc.as_ref()
                    .and_then(|d| d.get_element_by_id(id))
                    .and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
                    .map(|i| i.value())
                    .unwrap_or_default()
            };
            Msg::Window(get("tl-from"), get("tl-to"))
        });
        let sel = &p.request.selection;
        let has_window = sel.from.is_some() || sel.to.is_some();
        let height = format!(
            "height:{}px",
            (AXIS_H + (p.ranks as f64 * 14.0).clamp(160.0, 560.0)).round()
        );
        html! {
            <section class="view timeline-view" id="view-timeline" aria-labelledby="timeline-title">
                <h2 id="timeline-title">{ "Timeline" }</h2>
                <p class="effect">{ "Every rank's MPI calls over time, coloured by function, pattern or phase (a column shows the one that covers most of it, fainter when the rank is mostly outside MPI); lines are messages from send to receive (hover one for its sender, receiver, bytes, tag, times and wait), shaded bands collectives. Wheel or +/− to zoom around the cursor, drag or arrows to pan, drag on the time axis to zoom into a range, Home for the whole run. Logical steps order calls by happens-before (a receive after its send, collectives aligned) so that iterations line up across ranks." }</p>
                <form class="controls timeline-controls" onsubmit={on_window}>
                    <label>{ "Clock " }
                        <select id="tl-clock" onchange={on_clock}>
                            <option value="time" selected={self.clock == Clock::Time}>{ "time" }</option>
                            <option value="logical" selected={self.clock == Clock::Logical}>{ "logical steps" }</option>
                        </select>
                    </label>
                    <label title="What a column's colour stands for: the MPI function covering most of it, or the communication pattern or execution phase its calls belong to (as the Patterns and Phases views find them on the whole trace)">{ "Colour by " }
                        <select id="tl-colour" onchange={on_colouring}>
                            <option value="function" selected={self.colouring == Colour::Function}>{ "function" }</option>
                            <option value="pattern" selected={self.colouring == Colour::Pattern}>{ "pattern" }</option>
                            <option value="phase" selected={self.colouring == Colour::Phase}>{ "phase" }</option>
                        </select>
                    </label>
                    <label>{ "Ranks " }
                        <input id="tl-ranks" type="text" placeholder="all (e.g. 0-3,7)" value={self.filter_text.clone()} oninput={on_filter_typed} onchange={on_filter} />
                    </label>
                    <label>{ "Order " }
                        <select id="tl-order" onchange={on_order}>
                            <option value="number" selected={self.order == RankOrder::Number}>{ "by rank number" }</option>
                            <option value="topology" selected={self.order == RankOrder::Topology} disabled={p.topology_nodes.is_none()}>
                                { if p.topology_nodes.is_some() { "by topology coordinates" } else { "by topology coordinates (run Topology first)" } }
                            </option>
                        </select>
                    </label>
                    <label>{ "From " }<input id="tl-from" type="text" size="10" placeholder={if self.clock == Clock::Time { "0.1s" } else { "step" }} /></label>
                    <label>{ "To " }<input id="tl-to" type="text" size="10" /></label>
                    <button type="submit" id="tl-go">{ "Show" }</button>
                    <button type="button" id="tl-whole" onclick={link.callback(|_| Msg::Whole)}>{ "Whole run" }</button>
                    <button type="button" id="tl-use-window" disabled={self.clock != Clock::Time}
                        title="Restrict every view to the time window shown"
                        onclick={link.callback(|_| Msg::UseWindow)}>{ "Use this window" }</button>
                    <label><input id="tl-messages" type="checkbox" checked={self.show_messages}
                        onchange={link.callback(|e: Event| Msg::Messages(e.target_unchecked_into::<HtmlInputElement>().checked()))} />{ " messages" }</label>
                    <label><input id="tl-collectives" type="checkbox" checked={self.show_collectives}
                        onchange={link.callback(|e: Event| Msg::Collectives(e.target_unchecked_into::<HtmlInputElement>().checked()))} />{ " collectives" }</label>
                    <label title="The whole run's critical path (waits view): bands on the ranks it runs through, lines where it follows a message or collective to another rank">
                        <input id="tl-path" type="checkbox" checked={self.show_path}
                        onchange={link.callback(|e: Event| Msg::Path(e.target_unchecked_into::<HtmlInputElement>().checked()))} />{ " critical path" }</label>
                    if has_window {
                        <button type="button" id="tl-clear-window" onclick={link.callback(|_| Msg::ClearWindow)}>{ "Clear the time selection" }</button>
                    }
                </form>
                if let Some(e) = &self.filter_error { <p class="error" role="alert">{ e }</p> }
                if let Some(e) = &self.window_error { <p class="error" role="alert">{ e }</p> }
                { self.path_status(ctx) }
                { self.status(ctx) }
                <div class="timeline-stage">
                    <canvas id="timeline-canvas" ref={self.canvas.clone()} tabindex="0" style={height}
                        data-clock={clock_name(self.clock)}
                        aria-label="Timeline of every rank's MPI calls; arrows pan, plus and minus zoom"
                        onwheel={link.callback(Msg::Wheel)} onmousedown={link.callback(Msg::Down)}
                        onmousemove={link.callback(Msg::Move)} onmouseup={link.callback(Msg::Up)}
                        onmouseleave={link.callback(|_| Msg::Leave)} onkeydown={link.callback(Msg::Key)}></canvas>
                    <div class="timeline-tooltip" id="timeline-tooltip" ref={self.tooltip.clone()} hidden=true role="tooltip"></div>
                </div>
                { self.legend() }
            </section>
        }
    }

    fn rendered(&mut self, ctx: &Context<Self>, first: bool) {
        if first {
            let link = ctx.link().clone();
            let on_resize = Closure::<dyn Fn()>::new(move || link.send_message(Msg::Resized));
            if let (Ok(observer), Some(canvas)) = (
                web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()),
                self.canvas.cast::<web_sys::Element>(),
            ) {
                observer.observe(&canvas);
                self.observer = Some((observer, on_resize));
            }
            self.query(ctx);
        }
        self.draw(ctx);
    }

    fn destroy(&mut self, _ctx: &Context<Self>) {
        if let Some((observer, _)) = self.observer.take() {
            observer.disconnect();
        }
    }
}

/// The node of each rank in the topology the Topology view identified (`None` before it answered
/// or when nothing matched).
pub fn topology_nodes(state: &super::AnalysisState) -> Option<Rc<Vec<u32>>> {
    let Ok(crate::protocol::Answer::Topology(report)) = state.result.as_deref()? else {
        return None;
    };
    let id = &report.identification;
    id.matched.as_ref()?;
    let mut nodes = vec![u32::MAX; id.ranks as usize];
    for p in &id.mapping {
        if let Some(n) = nodes.get_mut(p.rank as usize) {
            *n = p.node;
        }
    }
    Some(Rc::new(nodes))
}
