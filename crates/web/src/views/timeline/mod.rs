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
    call_at, colour, colour_of, column_at, css, duration_label, lane_at, lane_of_rank, message_at, path_overlay,
    shown_ids, tick_label, ticks, tile_pixels, Viewport, NO_GROUP,
};
use crate::protocol::{AnalysisRequest, Answer, MatrixRequest, TimelineAnswer};
use gloo::timers::callback::Timeout;
use std::rc::Rc;
use tracelogic_engine::rank_order::{ordered_ranks, phase_keys, topology_keys, OrderBy};
use tracelogic_engine::timeline::{Clock, Colour, GroupSource, TimelineQuery, TimelineTile, NONE};
use tracelogic_model::query::{parse_ranks, parse_time};
use tracelogic_model::Selection;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{
    CanvasRenderingContext2d, HtmlCanvasElement, HtmlElement, HtmlInputElement, HtmlSelectElement, ImageData,
};
use yew::prelude::*;

mod draw;
mod status;
mod tooltip;
use draw::offscreen;

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
    pub topology_nodes: Option<Rc<Vec<Option<u64>>>>,
    /// The Phases view's answer (on the page's selection and strength), once it has answered:
    /// the lanes can be ordered by when each rank enters a phase.
    #[prop_or_default]
    pub phases: Option<Rc<Result<Answer, String>>>,
    /// The answer to [`AnalysisRequest::CriticalPathOverlay`], once asked.
    #[prop_or_default]
    pub path: Option<Rc<Result<Answer, String>>>,
    /// Ask the worker for an analysis (the critical path, when its overlay is switched on).
    #[prop_or_default]
    pub on_request: Callback<AnalysisRequest>,
    /// What the pattern and phase colourings are found on: the page's selection and the
    /// Phases view's strength (the Patterns and Phases views' answer).
    #[prop_or_default]
    pub groups: GroupSource,
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
    Order(OrderBy),
    Window(String, String),
    Whole,
    UseWindow,
    ClearWindow,
    /// Zoom to the page's time selection.
    ShowSelection,
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
    order: OrderBy,
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
        // The keys the CLI's `timeline --order` sorts by (`Engine::rank_order`), from the answers
        // the Topology and Phases views hold.
        let keys = match self.order {
            OrderBy::Number => None,
            OrderBy::Topology => p.topology_nodes.as_deref().cloned(),
            OrderBy::Phase(k) => phases_of(p).and_then(|r| phase_keys(r, k, p.ranks)),
        };
        ordered_ranks(p.ranks, &self.filter, keys.as_deref())
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
        let source = match self.colouring {
            Colour::Function => GroupSource::default(),
            _ => ctx.props().groups.clone(),
        };
        let q = TimelineQuery {
            colour: self.colouring,
            source,
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
            order: OrderBy::Number,
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
        if (p.topology_nodes != old.topology_nodes && self.order == OrderBy::Topology)
            || (p.phases != old.phases && matches!(self.order, OrderBy::Phase(_)))
        {
            self.schedule(ctx, 0);
        }
        if p.groups != old.groups && self.colouring != Colour::Function {
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
            Msg::ShowSelection => {
                let sel = &ctx.props().request.selection;
                let length = ctx.props().length_ns.max(1);
                let (a, b) = (sel.from.unwrap_or(0).min(length), sel.to.unwrap_or(length).min(length));
                if self.clock != Clock::Time || b <= a {
                    return false;
                }
                let v = Viewport {
                    from: a as f64,
                    to: b as f64,
                }
                .zoom(0.5, 1.0, length);
                self.set_view(ctx, v);
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
            Msg::Order(OrderBy::parse(&v).unwrap_or_default())
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
                    <label title="What a column's colour stands for: the MPI function covering most of it, or the communication pattern or execution phase its calls belong to (as the Patterns and Phases views find them: on the page's selection, phases at the Phases view's strength)">{ "Colour by " }
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
                            <option value="number" selected={self.order == OrderBy::Number}>{ "by rank number" }</option>
                            <option value="topology" selected={self.order == OrderBy::Topology} disabled={p.topology_nodes.is_none()}>
                                { if p.topology_nodes.is_some() { "by topology coordinates" } else { "by topology coordinates (run Topology first)" } }
                            </option>
                            if let Some(r) = phases_of(p) {
                                { for (0..r.analysis.phases.len() as u32).map(|k| html! {
                                    <option value={format!("phase:{k}")} selected={self.order == OrderBy::Phase(k)}>
                                        { format!("by entry into phase {k}") }
                                    </option>
                                }) }
                            } else {
                                <option value="phase" disabled=true>{ "by entry into a phase (run Phases first)" }</option>
                            }
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
                        <button type="button" id="tl-show-selection" disabled={self.clock != Clock::Time}
                            title="Zoom to the time window every view is restricted to"
                            onclick={link.callback(|_| Msg::ShowSelection)}>{ "Show the selection" }</button>
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
pub fn topology_nodes(state: &super::AnalysisState) -> Option<Rc<Vec<Option<u64>>>> {
    let Ok(crate::protocol::Answer::Topology(report)) = state.result.as_deref()? else {
        return None;
    };
    topology_keys(report).map(Rc::new)
}

/// The phases report in the Phases view's answer, when it has answered.
fn phases_of(p: &TimelineProps) -> Option<&tracelogic_engine::phases::PhasesReport> {
    match p.phases.as_deref()? {
        Ok(Answer::Phases(r)) => Some(r),
        _ => None,
    }
}
