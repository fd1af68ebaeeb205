//! The matrix view: a heatmap of bytes or messages between every pair of ranks on a log colour
//! scale, and next to it the binary matrix left after the low-volume threshold (Logicalization §4.1).
//!
//! Hover a cell, or focus a matrix and move with the arrow keys, to read sender, receiver and
//! value; a click (or Enter) selects the sender rank for the other views.
//!
//! The cells are drawn on a `<canvas>`: one pixel per cell ([`Grid::pixels`]) scaled up without
//! smoothing to the canvas's size in device pixels, so a 128 × 128 matrix costs one small image
//! instead of 16,384 SVG elements (which held the page's thread for 0.7–1 s). Over the canvas an
//! `<svg>` with the same cell coordinates carries the rank numbers, the cursor, the selected
//! rank's row, the keyboard focus and the accessible name; the pointer is mapped to its cell by
//! position ([`cell_at`]). The canvas is drawn again when its size, the screen's pixel ratio or
//! the colour theme changes. Exports write the SVG file from the data (registered with
//! [`export::register_figure`]); in the off-screen copy the HTML report takes, the cells also
//! go into the overlay as an image, since a copied canvas is blank.

use crate::export::{self, FigureWriter};
use crate::heatmap::{
    cell_at, css_rgb, legend_ticks, parse_css_colour, rank_labels, svg_document, BinaryColours, Grid, Layer,
    RankLabels, SvgStyle,
};
use crate::protocol::{MatrixRequest, MatrixView as MatrixResult};
use crate::text;
use crate::views::Focus;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use tracelogic_analysis::matrix::Metric;
use tracelogic_analysis::summary::CommunicatorInfo;
use tracelogic_model::query::{parse_bytes, parse_kinds, parse_ranks, parse_time, FieldWords};
use tracelogic_model::Selection;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, Element, HtmlCanvasElement, HtmlInputElement, ImageData};
use yew::prelude::*;

mod canvas;
use canvas::*;

/// Properties of [`MatrixView`].
#[derive(Properties, PartialEq)]
pub struct MatrixProps {
    /// The latest matrix from the worker.
    pub result: Rc<MatrixResult>,
    /// The request the controls show (may be ahead of `result` while the worker computes).
    pub request: MatrixRequest,
    /// Called when the user changes metric or threshold.
    pub on_request: Callback<MatrixRequest>,
    /// The selection shared with the other views (its rank's row is outlined).
    #[prop_or_default]
    pub focus: Focus,
    /// Called with the sender rank of a clicked cell (or of the keyboard cursor on Enter).
    #[prop_or_default]
    pub on_focus: Callback<Focus>,
    /// Ranks in the trace, which the selection's ranks are checked against (0: not checked).
    #[prop_or_default]
    pub ranks: u32,
    /// Length of the run (ns from its first to its last event), which a selection's start is
    /// compared with.
    #[prop_or_default]
    pub length_ns: u64,
    /// The Topology view's own cut, once it has run (`auto 18.33 %, 192 pairs`): the two
    /// thresholds are separate settings, and each view names the other's.
    #[prop_or_default]
    pub topology_threshold: Option<String>,
    /// The trace's communicators as the summary lists them (index = id), offered as the
    /// selection's "on communicators" choice (the CLI's `--on-comm`).
    #[prop_or_default]
    pub communicators: Vec<CommunicatorInfo>,
}

/// A selection checked against the trace by the check the CLI's selection flags go through
/// ([`Selection::check_against`], in the form's words): a rank the trace does not have, a start
/// later than the end or a minimum size above the maximum is refused; a start after the end of
/// the run is kept, with the note the CLI prints (the selection keeps no call). `ranks` 0 (the
/// trace's size not known yet) skips the rank and end-of-run checks. Times are relative to the
/// trace's first event.
pub fn check_selection(selection: &Selection, ranks: u32, length_ns: u64) -> Result<Option<String>, String> {
    let known = (ranks > 0).then_some(ranks);
    let note = selection.check_against(known, known.map(|_| length_ns), FieldWords::Labels)?;
    Ok(note.map(|why| format!("The selection keeps no MPI call: {why}.")))
}

/// The text of the selection filters, as typed (the same syntax as the CLI's selection flags).
#[derive(Debug, Clone, Default, PartialEq)]
struct SelectionForm {
    ranks: String,
    from: String,
    to: String,
    min_bytes: String,
    kinds: String,
    /// Ids of the communicators ticked under "On communicators" (empty: all).
    on_comms: Vec<u32>,
}

impl SelectionForm {
    /// The selection the fields describe; times are relative to the trace's first event.
    fn parse(&self) -> Result<Selection, String> {
        let opt = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_owned());
        Ok(Selection {
            ranks: opt(&self.ranks)
                .map(|r| parse_ranks(&r))
                .transpose()
                .map_err(|e| format!("ranks: {e}"))?,
            from: opt(&self.from)
                .map(|t| parse_time(&t))
                .transpose()
                .map_err(|e| format!("from: {e}"))?,
            to: opt(&self.to)
                .map(|t| parse_time(&t))
                .transpose()
                .map_err(|e| format!("to: {e}"))?,
            min_bytes: opt(&self.min_bytes)
                .map(|b| parse_bytes(&b))
                .transpose()
                .map_err(|e| format!("min bytes: {e}"))?,
            kinds: opt(&self.kinds)
                .map(|k| parse_kinds(&k))
                .transpose()
                .map_err(|e| format!("kinds: {e}"))?,
            on_comms: (!self.on_comms.is_empty()).then(|| {
                let mut ids = self.on_comms.clone();
                ids.sort_unstable();
                ids.dedup();
                ids
            }),
            ..Selection::default()
        })
    }
}

/// A cell under the pointer or the keyboard cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cursor {
    row: u32,
    col: u32,
}

/// Largest side whose values are also given as a (visually hidden) table for screen readers.
const MAX_TABLE: u32 = 16;

/// The two figures: the heatmap and the binary matrix, with their element ids.
const FIGURES: [(Layer, &str); 2] = [(Layer::Heat, "heatmap"), (Layer::Binary, "binary")];

fn metric_name(m: Metric) -> &'static str {
    match m {
        Metric::Bytes => "bytes",
        Metric::Messages => "messages",
    }
}

/// What the heatmap's cells hold: a traffic metric, or the waiting (ns, shown in seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// `MatrixRequest::metric`.
    Traffic(Metric),
    /// Late-sender plus late-receiver time per pair (`MatrixRequest::waiting`).
    Waiting,
}

impl Shown {
    /// What `request` colours the heatmap by.
    pub fn of(request: &MatrixRequest) -> Shown {
        if request.waiting {
            Shown::Waiting
        } else {
            Shown::Traffic(request.metric)
        }
    }

    /// The heatmap's caption: "bytes sent", "seconds waited".
    fn caption(self) -> String {
        match self {
            Shown::Traffic(m) => format!("{} sent", metric_name(m)),
            Shown::Waiting => "seconds waited (late sender + late receiver)".into(),
        }
    }

    /// A cell's value as text.
    fn value(self, v: u64) -> String {
        match self {
            Shown::Traffic(m) => show_value(m, v),
            Shown::Waiting => format!("{} waited", seconds_text(v)),
        }
    }

    /// A legend tick.
    fn tick(self, v: u64) -> String {
        match self {
            Shown::Traffic(Metric::Bytes) => text::bytes(v),
            Shown::Traffic(Metric::Messages) => text::count(v),
            Shown::Waiting => seconds_text(v),
        }
    }
}

/// Nanoseconds as seconds with a unit the size calls for (`12.3 µs`, `1.25 s`).
pub fn seconds_text(ns: u64) -> String {
    let s = ns as f64 * 1e-9;
    if ns == 0 {
        "0 s".into()
    } else if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.3} µs", s * 1e6)
    }
}

fn show_value(m: Metric, v: u64) -> String {
    match m {
        Metric::Bytes => format!("{} ({} B)", text::bytes(v), text::count(v)),
        Metric::Messages => format!("{} messages", text::count(v)),
    }
}

fn show_ranks(range: (u32, u32)) -> String {
    if range.0 == range.1 {
        format!("rank {}", range.0)
    } else {
        format!("ranks {}–{}", range.0, range.1)
    }
}

/// The rank numbers beside the drawing, when they can be read (up to 128 ranks, one a cell).
fn labels(grid: &Grid) -> Option<RankLabels> {
    rank_labels(grid.side, grid.block)
}

/// The margin around the cells, in cells.
fn margin_of(grid: &Grid) -> f64 {
    labels(grid).map_or(0.0, |l| l.margin)
}

/// What a cell means once the threshold is applied.
fn cell_state(value: u64, kept: bool) -> &'static str {
    if value == 0 {
        "no traffic"
    } else if kept {
        "kept by the threshold"
    } else {
        "removed by the threshold"
    }
}

/// The cell under the client point (`x`, `y`) of the overlay `svg`.
fn cell_under(svg: &Element, grid: &Grid, x: f64, y: f64) -> Option<Cursor> {
    let rect = svg.get_bounding_client_rect();
    if rect.width() <= 0.0 || rect.height() <= 0.0 {
        return None;
    }
    let margin = margin_of(grid);
    let (fx, fy) = ((x - rect.left()) / rect.width(), (y - rect.top()) / rect.height());
    cell_at(fx, fy, grid.side, margin).map(|(row, col)| Cursor { row, col })
}

/// The overlay `<svg>` a mouse event happened on (Yew delegates events, so the current target
/// is not the svg).
fn overlay_of(e: &MouseEvent) -> Option<Element> {
    let target: Element = e.target()?.dyn_into().ok()?;
    target.closest("svg[data-figure-key]").ok().flatten()
}

/// Move the keyboard cursor; `None` when the key is not a cursor key.
fn moved(cursor: Option<Cursor>, key: &str, side: u32) -> Option<Option<Cursor>> {
    let c = cursor.unwrap_or(Cursor { row: 0, col: 0 });
    let last = side.saturating_sub(1);
    Some(Some(match key {
        "ArrowUp" => Cursor {
            row: c.row.saturating_sub(1),
            ..c
        },
        "ArrowDown" => Cursor {
            row: (c.row + 1).min(last),
            ..c
        },
        "ArrowLeft" => Cursor {
            col: c.col.saturating_sub(1),
            ..c
        },
        "ArrowRight" => Cursor {
            col: (c.col + 1).min(last),
            ..c
        },
        "Home" => Cursor { row: 0, col: 0 },
        "End" => Cursor { row: last, col: last },
        "Escape" => return Some(None),
        _ => return None,
    }))
}

/// The communication matrix of the loaded trace.
#[function_component(MatrixView)]
pub fn matrix_view(props: &MatrixProps) -> Html {
    let hover = use_state_eq(|| None::<Cursor>);
    let selected = use_state_eq(|| None::<Cursor>);
    let keys = use_memo((), |_| [export::figure_key(), export::figure_key()]);
    let canvases = [use_node_ref(), use_node_ref()];
    let snapshots = [use_node_ref(), use_node_ref()];
    let shown_result = use_mut_ref(|| None::<Rc<MatrixResult>>);
    let result = &props.result;
    let metric = result.request.metric;
    let shown = Shown::of(&result.request);
    let grid = &result.grid;
    let side = grid.side;
    let labels = labels(grid);
    let margin = margin_of(grid);
    let span = side as f64 + margin;
    let selected_now = (*selected).filter(|c| c.row < side && c.col < side);
    let cursor_now = (*hover).or(selected_now).filter(|c| c.row < side && c.col < side);

    let caption = |layer: Layer| match layer {
        Layer::Heat => format!("{}, log colour scale", shown.caption()),
        Layer::Binary => format!("Binary matrix at {:.1} % threshold", result.request.threshold_pct),
    };
    // A new answer: draw it, and export it from its data.
    {
        let (canvases, snapshots, shown_result, keys) =
            (canvases.clone(), snapshots.clone(), shown_result.clone(), keys.clone());
        let titles = FIGURES.map(|(layer, _)| caption(layer));
        use_effect_with(result.clone(), move |result| {
            *shown_result.borrow_mut() = Some(result.clone());
            for (i, (layer, _)) in FIGURES.iter().enumerate() {
                export::register_figure(keys[i], figure_writer(result.clone(), *layer, titles[i].clone()));
                DRAWN.with(|d| {
                    d.borrow_mut().insert(
                        keys[i],
                        Drawn {
                            result: result.clone(),
                            layer: *layer,
                        },
                    )
                });
                if let Some(canvas) = canvases[i].cast::<HtmlCanvasElement>() {
                    let _ = paint(&canvas, snapshots[i].cast::<Element>(), &result.grid, *layer);
                }
            }
        });
    }
    // Draw again when a canvas changes size (window, zoom, pixel ratio) or the theme changes;
    // forget the figures when the view goes.
    {
        let (canvases, snapshots, shown_result, keys) =
            (canvases.clone(), snapshots.clone(), shown_result.clone(), keys.clone());
        use_effect_with((), move |_| {
            install_cell_hook();
            let repaint = {
                let (canvases, snapshots) = (canvases.clone(), snapshots.clone());
                move || {
                    let Some(result) = shown_result.borrow().clone() else {
                        return;
                    };
                    for (i, (layer, _)) in FIGURES.iter().enumerate() {
                        if let Some(canvas) = canvases[i].cast::<HtmlCanvasElement>() {
                            let _ = paint(&canvas, snapshots[i].cast::<Element>(), &result.grid, *layer);
                        }
                    }
                }
            };
            let on_resize = Closure::<dyn Fn()>::new(repaint.clone());
            let observer = web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()).ok();
            if let Some(observer) = &observer {
                for canvas in canvases.iter().filter_map(|c| c.cast::<Element>()) {
                    observer.observe(&canvas);
                }
            }
            let on_theme = Closure::<dyn Fn()>::new(repaint);
            let scheme = web_sys::window().and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten());
            if let Some(scheme) = &scheme {
                let _ = scheme.add_event_listener_with_callback("change", on_theme.as_ref().unchecked_ref());
            }
            move || {
                if let Some(observer) = observer {
                    observer.disconnect();
                }
                if let Some(scheme) = scheme {
                    let _ = scheme.remove_event_listener_with_callback("change", on_theme.as_ref().unchecked_ref());
                }
                for key in keys.iter() {
                    export::unregister_figure(*key);
                    DRAWN.with(|d| d.borrow_mut().remove(key));
                }
                drop((on_resize, on_theme));
            }
        });
    }

    let set_metric = |m: Shown| {
        let on_request = props.on_request.clone();
        let request = props.request.clone();
        Callback::from(move |_: Event| {
            on_request.emit(match m {
                Shown::Traffic(metric) => MatrixRequest {
                    metric,
                    waiting: false,
                    ..request.clone()
                },
                // The threshold stays on bytes: waiting says nothing about who communicates.
                Shown::Waiting => MatrixRequest {
                    metric: Metric::Bytes,
                    waiting: true,
                    ..request.clone()
                },
            })
        })
    };
    let shown_asked = Shown::of(&props.request);
    let form = use_state(SelectionForm::default);
    let form_error = use_state(|| None::<String>);
    let form_note = use_state(|| None::<String>);
    let (ranks, length_ns) = (props.ranks, props.length_ns);
    let field = |set: fn(&mut SelectionForm, String)| {
        let form = form.clone();
        Callback::from(move |e: InputEvent| {
            let input: HtmlInputElement = e.target_unchecked_into();
            let mut f = (*form).clone();
            set(&mut f, input.value());
            form.set(f);
        })
    };
    let toggle_comm = |id: u32| {
        let form = form.clone();
        Callback::from(move |e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            let mut f = (*form).clone();
            f.on_comms.retain(|&c| c != id);
            if input.checked() {
                f.on_comms.push(id);
            }
            form.set(f);
        })
    };
    let comm_choice = (props.communicators.len() > 1).then(|| {
        html! {
            <details id="sel-on-comms" class="on-comms">
                <summary>{ format!("On communicators ({})", if form.on_comms.is_empty() { "all".to_owned() } else { format!("{} chosen", form.on_comms.len()) }) }</summary>
                { for props.communicators.iter().enumerate().map(|(i, c)| {
                    let id = i as u32;
                    html! {
                        <label class="on-comm">
                            <input type="checkbox" value={id.to_string()} checked={form.on_comms.contains(&id)}
                                onchange={toggle_comm(id)} />
                            { format!(" {id}: {} — {} ranks, {} point-to-point", c.name, text::count(c.size as u64), text::bytes(c.p2p_bytes)) }
                        </label>
                    }
                }) }
            </details>
        }
    });
    let on_apply = {
        let (form, form_error, form_note) = (form.clone(), form_error.clone(), form_note.clone());
        let on_request = props.on_request.clone();
        let request = props.request.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let checked = form
                .parse()
                .and_then(|s| check_selection(&s, ranks, length_ns).map(|note| (s, note)));
            match checked {
                Ok((selection, note)) => {
                    form_error.set(None);
                    form_note.set(note);
                    on_request.emit(MatrixRequest {
                        selection,
                        ..request.clone()
                    });
                }
                Err(msg) => {
                    form_note.set(None);
                    form_error.set(Some(msg));
                }
            }
        })
    };
    let on_clear = {
        let (form, form_error, form_note) = (form.clone(), form_error.clone(), form_note.clone());
        let on_request = props.on_request.clone();
        let request = props.request.clone();
        Callback::from(move |_: MouseEvent| {
            form.set(SelectionForm::default());
            form_error.set(None);
            form_note.set(None);
            on_request.emit(MatrixRequest {
                selection: Selection::default(),
                ..request.clone()
            });
        })
    };
    let on_threshold = {
        let on_request = props.on_request.clone();
        let request = props.request.clone();
        Callback::from(move |e: InputEvent| {
            let input: HtmlInputElement = e.target_unchecked_into();
            if let Ok(t) = input.value().parse::<f64>() {
                on_request.emit(MatrixRequest {
                    threshold_pct: t,
                    ..request.clone()
                });
            }
        })
    };
    let pick_rank = {
        let (on_focus, focus, result) = (props.on_focus.clone(), props.focus.clone(), result.clone());
        move |c: Cursor| {
            on_focus.emit(Focus {
                rank: Some(result.grid.ranks_of(c.row).0),
                ..focus.clone()
            })
        }
    };
    let on_move = {
        let (hover, result) = (hover.clone(), result.clone());
        Callback::from(move |e: MouseEvent| {
            let Some(svg) = overlay_of(&e) else { return };
            hover.set(cell_under(
                &svg,
                &result.grid,
                f64::from(e.client_x()),
                f64::from(e.client_y()),
            ));
        })
    };
    let on_click = {
        let (selected, result, pick_rank) = (selected.clone(), result.clone(), pick_rank.clone());
        Callback::from(move |e: MouseEvent| {
            let Some(svg) = overlay_of(&e) else { return };
            if let Some(c) = cell_under(&svg, &result.grid, f64::from(e.client_x()), f64::from(e.client_y())) {
                selected.set(Some(c));
                pick_rank(c);
            }
        })
    };
    let on_leave = {
        let hover = hover.clone();
        Callback::from(move |_: MouseEvent| hover.set(None))
    };
    let on_key = {
        let (selected, hover) = (selected.clone(), hover.clone());
        Callback::from(move |e: KeyboardEvent| {
            let key = e.key();
            if key == "Enter" || key == " " {
                if let Some(c) = *selected {
                    e.prevent_default();
                    pick_rank(c);
                }
            } else if let Some(next) = moved(*selected, &key, side) {
                e.prevent_default();
                hover.set(None);
                selected.set(next);
            }
        })
    };
    let on_focus_in = {
        let selected = selected.clone();
        Callback::from(move |_: FocusEvent| {
            if selected.is_none() {
                selected.set(Some(Cursor { row: 0, col: 0 }));
            }
        })
    };

    let tooltip = cursor_now.map(|c| {
        let value = grid.value(c.row, c.col);
        let kept = grid.kept[(c.row * side + c.col) as usize];
        let left = (c.col as f64 + margin + 1.0) / span * 100.0;
        let top = (c.row as f64 + margin + 0.5) / span * 100.0;
        let style = if c.col * 2 > side {
            format!(
                "right: {:.3}%; top: {top:.3}%",
                100.0 - (c.col as f64 + margin) / span * 100.0
            )
        } else {
            format!("left: {left:.3}%; top: {top:.3}%")
        };
        html! {
            <div class="tooltip" role="status" style={style}>
                <div><span class="k">{ "Sender" }</span>{ show_ranks(grid.ranks_of(c.row)) }</div>
                <div><span class="k">{ "Receiver" }</span>{ show_ranks(grid.ranks_of(c.col)) }</div>
                <div><span class="k">{ "Value" }</span>{ shown.value(value) }</div>
                <div class="state">{ cell_state(value, kept) }</div>
            </div>
        }
    });
    let highlight = cursor_now.map(|c| {
        html! { <rect class="cursor" x={c.col.to_string()} y={c.row.to_string()} width="1" height="1" /> }
    });
    let focus_row = props.focus.rank.filter(|&r| r < grid.ranks && side > 0).map(|r| {
        html! { <rect class="focus-row" x="0" y={(r / grid.block).to_string()} width={side.to_string()} height="1" /> }
    });
    let view_box = format!("{m} {m} {s} {s}", m = -margin, s = side as f64 + margin);
    let cells_box = {
        let at = margin / span * 100.0;
        let size = side as f64 / span * 100.0;
        format!("left: {at:.4}%; top: {at:.4}%; width: {size:.4}%; height: {size:.4}%")
    };
    let rank_labels = labels.map(|l| {
        let style = format!("font-size: {:.3}px", l.font);
        (0..side)
            .step_by(l.step as usize)
            .map(|r| {
                html! {
                    <>
                        <text class="rank-label" style={style.clone()} x={format!("{}.5", r)} y={format!("{:.3}", -0.3 * l.font / 0.34)} text-anchor="middle">{ r }</text>
                        <text class="rank-label" style={style.clone()} x={format!("{:.3}", -0.3 * l.font / 0.34)} y={format!("{}.5", r)} text-anchor="end" dominant-baseline="central">{ r }</text>
                    </>
                }
            })
            .collect::<Html>()
    });
    let with_traffic = grid.values.iter().filter(|&&v| v > 0).count();
    let kept_cells = grid.kept.iter().filter(|&&k| k).count();
    let ticks = legend_ticks(grid.min, grid.max, 6);
    let threshold = result.request.threshold_pct;
    let pending = props.request != result.request;
    let block_note = (grid.block > 1).then(|| {
        html! { <p class="note">{ format!("{} ranks: each cell sums a block of {} × {} ranks.", grid.ranks, grid.block, grid.block) }</p> }
    });
    let cursor_attr = cursor_now.map(|c| format!("{},{}", c.row, c.col));
    let figure = |i: usize| {
        let (layer, id) = FIGURES[i];
        let label = match layer {
            Layer::Heat => format!(
                "Heatmap of {} between {} ranks: {} of {} cells non-zero, largest {}. Arrow keys read the cells.",
                shown.caption(), grid.ranks, with_traffic, side * side, shown.value(grid.max)
            ),
            Layer::Binary => format!(
                "Binary matrix after removing entries below {threshold:.1} %: {kept_cells} of {} cells kept. Arrow keys read the cells.",
                side * side
            ),
        };
        html! {
            <figure class="matrix-figure" id={id}>
                <figcaption>{ caption(layer) }</figcaption>
                <div class="plot">
                    <div class="axis-x" aria-hidden="true">{ "receiver →" }</div>
                    <div class="axis-y" aria-hidden="true">{ "sender →" }</div>
                    <div class="svg-wrap">
                        <canvas class="cells" ref={canvases[i].clone()} style={cells_box.clone()} aria-hidden="true"></canvas>
                        <svg viewBox={view_box.clone()} preserveAspectRatio="none" shape-rendering="crispEdges"
                            role="img" aria-label={label} tabindex="0" data-side={side.to_string()}
                            data-figure-key={keys[i].to_string()} data-cursor={cursor_attr.clone()}
                            onmousemove={on_move.clone()} onmouseleave={on_leave.clone()} onclick={on_click.clone()}
                            onkeydown={on_key.clone()} onfocus={on_focus_in.clone()}>
                            <image ref={snapshots[i].clone()} class="cells-snapshot" x="0" y="0" width={side.to_string()}
                                height={side.to_string()} preserveAspectRatio="none" />
                            <rect class="frame" x="0" y="0" width={side.to_string()} height={side.to_string()} />
                            { rank_labels.clone().unwrap_or_default() }
                            { focus_row.clone().unwrap_or_default() }
                            { highlight.clone().unwrap_or_default() }
                        </svg>
                        { tooltip.clone().unwrap_or_default() }
                    </div>
                </div>
            </figure>
        }
    };
    let values_table = (grid.block == 1 && side <= MAX_TABLE && side > 0).then(|| {
        html! {
            <table class="visually-hidden" id="matrix-values" data-export-name={format!("matrix {}", match shown { Shown::Traffic(m) => metric_name(m), Shown::Waiting => "waiting ns" })}>
                <caption>{ match shown {
                    Shown::Traffic(m) => format!("{} sent from each rank (rows) to each rank (columns)", metric_name(m)),
                    Shown::Waiting => "Nanoseconds waited between each sender (rows) and receiver (columns)".to_owned(),
                } }</caption>
                <thead><tr><th scope="col">{ "sender \\ receiver" }</th>{ for (0..side).map(|c| html! { <th scope="col">{ c }</th> }) }</tr></thead>
                <tbody>
                    { for (0..side).map(|r| html! {
                        <tr><th scope="row">{ r }</th>{ for (0..side).map(|c| html! { <td>{ grid.value(r, c) }</td> }) }</tr>
                    }) }
                </tbody>
            </table>
        }
    });

    html! {
        <section class="view matrix" id="view-matrix" aria-labelledby="matrix-title">
            <h2 id="matrix-title">{ "Communication matrix" }</h2>
            <form class="controls" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
                <fieldset class="metric">
                    <legend>{ "Metric" }</legend>
                    <label><input type="radio" name="metric" value="bytes" checked={shown_asked == Shown::Traffic(Metric::Bytes)}
                        onchange={set_metric(Shown::Traffic(Metric::Bytes))} />{ " Bytes" }</label>
                    <label><input type="radio" name="metric" value="messages" checked={shown_asked == Shown::Traffic(Metric::Messages)}
                        onchange={set_metric(Shown::Traffic(Metric::Messages))} />{ " Messages" }</label>
                    <label title="Late-sender plus late-receiver time per sender and receiver (the waits view's wait states); the threshold stays on bytes">
                        <input type="radio" name="metric" value="waiting" checked={shown_asked == Shown::Waiting}
                        onchange={set_metric(Shown::Waiting)} />{ " Waiting (s)" }</label>
                </fieldset>
                <div class="threshold">
                    <label for="threshold">{ "Low-volume threshold" }</label>
                    <input id="threshold" type="range" min="0" max="100" step="0.5"
                        value={props.request.threshold_pct.to_string()} oninput={on_threshold}
                        aria-describedby="threshold-effect" />
                    <output for="threshold">{ format!("{:.1} %", props.request.threshold_pct) }</output>
                </div>
                <p id="threshold-effect" class="effect" aria-live="polite" data-removed={result.removed_entries.to_string()}>
                    { format!("{} non-zero entries; the threshold removes {} of them ({} of all {}), leaving {}.",
                        text::count(result.nonzero_entries), text::count(result.removed_entries), text::percent(result.removed_share),
                        metric_name(metric), text::count(result.kept_entries)) }
                    if pending { <span class="pending">{ " Updating…" }</span> }
                </p>
                <p id="threshold-other" class="small threshold-other">
                    { match &props.topology_threshold {
                        Some(t) => format!("This threshold draws the binary matrix here. The Topology view cuts the graph at its own threshold: {t} (set it there)."),
                        None => "This threshold draws the binary matrix here. The Topology view cuts the graph at its own threshold (automatic unless set there).".to_owned(),
                    } }
                </p>
            </form>
            <form class="controls selection" id="selection-form" onsubmit={on_apply} aria-describedby="selection-help">
                <fieldset>
                    <legend>{ "Selection" }</legend>
                    <label>{ "Ranks " }<input id="sel-ranks" type="text" placeholder="0-3,7" value={form.ranks.clone()}
                        oninput={field(|f, v| f.ranks = v)} /></label>
                    <label>{ "From " }<input id="sel-from" type="text" placeholder="0.1s" value={form.from.clone()}
                        oninput={field(|f, v| f.from = v)} /></label>
                    <label>{ "To " }<input id="sel-to" type="text" placeholder="200ms" value={form.to.clone()}
                        oninput={field(|f, v| f.to = v)} /></label>
                    <label>{ "Min bytes " }<input id="sel-min-bytes" type="text" placeholder="4Ki" value={form.min_bytes.clone()}
                        oninput={field(|f, v| f.min_bytes = v)} /></label>
                    <label>{ "Kinds " }<input id="sel-kinds" type="text" placeholder="send,isend" value={form.kinds.clone()}
                        oninput={field(|f, v| f.kinds = v)} /></label>
                    { comm_choice.unwrap_or_default() }
                    <button id="sel-apply" type="submit">{ "Apply" }</button>
                    <button id="sel-clear" type="button" onclick={on_clear}>{ "Clear" }</button>
                </fieldset>
                <p id="selection-help" class="effect">
                    { "Only sends by and to these ranks, posted in [from, to) after the trace's first event, of at least this size and these call kinds, made on the communicators ticked (the CLI's --ranks, --from, --to, --min-bytes, --kind, --on-comm)." }
                </p>
                if let Some(msg) = &*form_error { <p id="sel-error" class="error" role="alert">{ msg.clone() }</p> }
                if let Some(note) = &*form_note { <p id="sel-note" class="note" role="status">{ note.clone() }</p> }
            </form>
            { block_note.unwrap_or_default() }
            <div class="figures">
                { figure(0) }
                { figure(1) }
            </div>
            { values_table.unwrap_or_default() }
            <div class="legends">
                <div class="legend" aria-label="Colour scale">
                    <div class="gradient"></div>
                    <div class="ticks">
                        { for ticks.iter().map(|&t| html! {
                            <span style={format!("left: {:.2}%", grid.scale(t) * 100.0)}>{ shown.tick(t) }</span>
                        }) }
                    </div>
                </div>
                <ul class="legend-binary">
                    <li><span class="swatch kept"></span>{ "kept" }</li>
                    <li><span class="swatch removed"></span>{ "removed by the threshold" }</li>
                    <li><span class="swatch zero"></span>{ "no traffic" }</li>
                </ul>
            </div>
        </section>
    }
}

#[cfg(test)]
mod tests;
