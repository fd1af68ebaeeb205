//! The matrix view: a heatmap of bytes or messages between every pair of ranks on a log colour
//! scale, and next to it the binary matrix left after the low-volume threshold (seed 000 §4.1).
//!
//! Hover a cell, or focus a matrix and move with the arrow keys, to read sender, receiver and
//! value.

use crate::heatmap::{colour, legend_ticks};
use crate::protocol::{MatrixRequest, MatrixView as MatrixResult};
use crate::text;
use std::rc::Rc;
use tracelogic_analysis::matrix::Metric;
use tracelogic_model::query::{parse_bytes, parse_kinds, parse_ranks, parse_time};
use tracelogic_model::Selection;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement};
use yew::prelude::*;

/// Properties of [`MatrixView`].
#[derive(Properties, PartialEq)]
pub struct MatrixProps {
    /// The latest matrix from the worker.
    pub result: Rc<MatrixResult>,
    /// The request the controls show (may be ahead of `result` while the worker computes).
    pub request: MatrixRequest,
    /// Called when the user changes metric or threshold.
    pub on_request: Callback<MatrixRequest>,
}

/// The text of the selection filters, as typed (the same syntax as the CLI's selection flags).
#[derive(Debug, Clone, Default, PartialEq)]
struct SelectionForm {
    ranks: String,
    from: String,
    to: String,
    min_bytes: String,
    kinds: String,
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

/// Largest side that gets rank numbers along the axes.
const MAX_LABELLED: u32 = 32;

fn metric_name(m: Metric) -> &'static str {
    match m {
        Metric::Bytes => "bytes",
        Metric::Messages => "messages",
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

fn cell_of(e: &MouseEvent) -> Option<Cursor> {
    let el: Element = e.target()?.dyn_into().ok()?;
    let row = el.get_attribute("data-row")?.parse().ok()?;
    let col = el.get_attribute("data-col")?.parse().ok()?;
    Some(Cursor { row, col })
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
    let cursor = use_state(|| None::<Cursor>);
    let result = &props.result;
    let metric = result.request.metric;
    let grid = &result.grid;
    let side = grid.side;
    let cursor_now = (*cursor).filter(|c| c.row < side && c.col < side);
    // Small matrices get rank numbers in a one-cell margin above and left of the cells.
    let labelled = grid.block == 1 && side <= MAX_LABELLED;
    let margin = f64::from(u8::from(labelled));
    let span = side as f64 + margin;

    let set_metric = |m: Metric| {
        let on_request = props.on_request.clone();
        let request = props.request.clone();
        Callback::from(move |_: Event| {
            on_request.emit(MatrixRequest {
                metric: m,
                ..request.clone()
            })
        })
    };
    let form = use_state(SelectionForm::default);
    let form_error = use_state(|| None::<String>);
    let field = |set: fn(&mut SelectionForm, String)| {
        let form = form.clone();
        Callback::from(move |e: InputEvent| {
            let input: HtmlInputElement = e.target_unchecked_into();
            let mut f = (*form).clone();
            set(&mut f, input.value());
            form.set(f);
        })
    };
    let on_apply = {
        let (form, form_error) = (form.clone(), form_error.clone());
        let on_request = props.on_request.clone();
        let request = props.request.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            match form.parse() {
                Ok(selection) => {
                    form_error.set(None);
                    on_request.emit(MatrixRequest {
                        selection,
                        ..request.clone()
                    });
                }
                Err(msg) => form_error.set(Some(msg)),
            }
        })
    };
    let on_clear = {
        let (form, form_error) = (form.clone(), form_error.clone());
        let on_request = props.on_request.clone();
        let request = props.request.clone();
        Callback::from(move |_: MouseEvent| {
            form.set(SelectionForm::default());
            form_error.set(None);
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
    let on_move = {
        let cursor = cursor.clone();
        Callback::from(move |e: MouseEvent| {
            if let Some(c) = cell_of(&e) {
                cursor.set(Some(c));
            }
        })
    };
    let on_leave = {
        let cursor = cursor.clone();
        Callback::from(move |_: MouseEvent| cursor.set(None))
    };
    let on_key = {
        let cursor = cursor.clone();
        Callback::from(move |e: KeyboardEvent| {
            if let Some(next) = moved(*cursor, &e.key(), side) {
                e.prevent_default();
                cursor.set(next);
            }
        })
    };
    let on_focus = {
        let cursor = cursor.clone();
        Callback::from(move |_: FocusEvent| {
            if cursor.is_none() {
                cursor.set(Some(Cursor { row: 0, col: 0 }));
            }
        })
    };

    let tooltip = cursor_now.map(|c| {
        let value = grid.value(c.row, c.col);
        let kept = grid.kept[(c.row * side + c.col) as usize];
        let left = (c.col as f64 + margin + 1.0) / span * 100.0;
        let top = (c.row as f64 + margin + 0.5) / span * 100.0;
        let flip = c.col * 2 > side;
        let style = if flip {
            format!(
                "right: {:.3}%; top: {top:.3}%",
                100.0 - (c.col as f64 + margin) / span * 100.0
            )
        } else {
            format!("left: {left:.3}%; top: {top:.3}%")
        };
        let state = if value == 0 {
            "no traffic"
        } else if kept {
            "kept by the threshold"
        } else {
            "removed by the threshold"
        };
        html! {
            <div class="tooltip" role="status" style={style}>
                <div><span class="k">{ "Sender" }</span>{ show_ranks(grid.ranks_of(c.row)) }</div>
                <div><span class="k">{ "Receiver" }</span>{ show_ranks(grid.ranks_of(c.col)) }</div>
                <div><span class="k">{ "Value" }</span>{ show_value(metric, value) }</div>
                <div class="state">{ state }</div>
            </div>
        }
    });

    let heat_cells = (0..side)
        .flat_map(|row| (0..side).map(move |col| (row, col)))
        .map(|(row, col)| {
            let v = grid.value(row, col);
            let fill = if v == 0 {
                "var(--empty-cell)".to_owned()
            } else {
                colour(grid.scale(v))
            };
            let class = if v == 0 { "cell zero" } else { "cell" };
            html! {
                <rect class={class} x={col.to_string()} y={row.to_string()} width="1" height="1" fill={fill}
                    data-row={row.to_string()} data-col={col.to_string()} data-value={v.to_string()} />
            }
        });
    let binary_cells = (0..side)
        .flat_map(|row| (0..side).map(move |col| (row, col)))
        .map(|(row, col)| {
            let i = (row * side + col) as usize;
            let (class, kept) = match (grid.values[i] > 0, grid.kept[i]) {
                (_, true) => ("cell kept", "1"),
                (true, false) => ("cell removed", "0"),
                (false, false) => ("cell zero", "0"),
            };
            html! {
                <rect class={class} x={col.to_string()} y={row.to_string()} width="1" height="1"
                    data-row={row.to_string()} data-col={col.to_string()} data-kept={kept} />
            }
        });
    let highlight = cursor_now.map(|c| {
        html! { <rect class="cursor" x={c.col.to_string()} y={c.row.to_string()} width="1" height="1" /> }
    });

    let view_box = if labelled {
        format!("-1 -1 {} {}", side + 1, side + 1)
    } else {
        format!("0 0 {side} {side}")
    };
    let rank_labels = labelled.then(|| {
        (0..side)
            .map(|r| {
                html! {
                    <>
                        <text class="rank-label" x={format!("{}.5", r)} y="-0.3" text-anchor="middle">{ r }</text>
                        <text class="rank-label" x="-0.3" y={format!("{}.5", r)} text-anchor="end" dominant-baseline="central">{ r }</text>
                    </>
                }
            })
            .collect::<Html>()
    });
    let ticks = legend_ticks(grid.min, grid.max, 6);
    let threshold = result.request.threshold_pct;
    let pending = props.request != result.request;
    let block_note = (grid.block > 1).then(|| {
        html! { <p class="note">{ format!("{} ranks: each cell sums a block of {} × {} ranks.", grid.ranks, grid.block, grid.block) }</p> }
    });
    let figure = |id: &str, caption: &str, label: String, cells: Html| {
        html! {
            <figure class="matrix-figure" id={id.to_owned()}>
                <figcaption>{ caption.to_owned() }</figcaption>
                <div class="plot">
                    <div class="axis-x" aria-hidden="true">{ "receiver →" }</div>
                    <div class="axis-y" aria-hidden="true">{ "sender →" }</div>
                    <div class="svg-wrap">
                        <svg viewBox={view_box.clone()} preserveAspectRatio="none" shape-rendering="crispEdges"
                            role="img" aria-label={label} tabindex="0" data-side={side.to_string()}
                            onmousemove={on_move.clone()} onmouseleave={on_leave.clone()}
                            onkeydown={on_key.clone()} onfocus={on_focus.clone()}>
                            { rank_labels.clone().unwrap_or_default() }
                            { cells }
                            { highlight.clone().unwrap_or_default() }
                        </svg>
                        { tooltip.clone().unwrap_or_default() }
                    </div>
                </div>
            </figure>
        }
    };

    html! {
        <section class="view matrix" id="view-matrix" aria-labelledby="matrix-title">
            <h2 id="matrix-title">{ "Communication matrix" }</h2>
            <form class="controls" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
                <fieldset class="metric">
                    <legend>{ "Metric" }</legend>
                    <label><input type="radio" name="metric" value="bytes" checked={props.request.metric == Metric::Bytes}
                        onchange={set_metric(Metric::Bytes)} />{ " Bytes" }</label>
                    <label><input type="radio" name="metric" value="messages" checked={props.request.metric == Metric::Messages}
                        onchange={set_metric(Metric::Messages)} />{ " Messages" }</label>
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
                    <button id="sel-apply" type="submit">{ "Apply" }</button>
                    <button id="sel-clear" type="button" onclick={on_clear}>{ "Clear" }</button>
                </fieldset>
                <p id="selection-help" class="effect">
                    { "Only sends by and to these ranks, posted in [from, to) after the trace's first event, of at least this size and these call kinds (the CLI's --ranks, --from, --to, --min-bytes, --kind)." }
                </p>
                if let Some(msg) = &*form_error { <p id="sel-error" class="error" role="alert">{ msg.clone() }</p> }
            </form>
            { block_note.unwrap_or_default() }
            <div class="figures">
                { figure("heatmap", &format!("{} sent, log colour scale", metric_name(metric)),
                    format!("Heatmap of {} sent between {} ranks", metric_name(metric), grid.ranks),
                    heat_cells.collect::<Html>()) }
                { figure("binary", &format!("Binary matrix at {threshold:.1} % threshold"),
                    format!("Binary matrix after removing entries below {threshold:.1} %"),
                    binary_cells.collect::<Html>()) }
            </div>
            <div class="legends">
                <div class="legend" aria-label="Colour scale">
                    <div class="gradient"></div>
                    <div class="ticks">
                        { for ticks.iter().map(|&t| html! {
                            <span style={format!("left: {:.2}%", grid.scale(t) * 100.0)}>{ match metric {
                                Metric::Bytes => text::bytes(t),
                                Metric::Messages => text::count(t),
                            } }</span>
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
mod tests {
    use super::*;

    #[test]
    fn arrow_keys_stay_inside_the_matrix() {
        let c = |row, col| Some(Cursor { row, col });
        assert_eq!(moved(None, "ArrowRight", 4), Some(c(0, 1)));
        assert_eq!(moved(c(0, 0), "ArrowUp", 4), Some(c(0, 0)));
        assert_eq!(moved(c(3, 3), "ArrowDown", 4), Some(c(3, 3)));
        assert_eq!(moved(c(2, 2), "End", 4), Some(c(3, 3)));
        assert_eq!(moved(c(2, 2), "Escape", 4), Some(None));
        assert_eq!(moved(c(2, 2), "a", 4), None);
    }
}
