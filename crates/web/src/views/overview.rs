//! The Overview view: what a trace too large to load whole holds, from one streaming pass in
//! the worker (`tracelogic overview`, `docs/large-traces.md`), and the choice of the part to load
//! in full: ranks (typed, as the other selection fields) and a time window (typed, or dragged on
//! the activity strip).
//!
//! The strip draws one pixel row per rank up to [`MAX_ROWS`] rows (more ranks share a row,
//! their MPI shares averaged) and one column per time bin, darker for more time inside MPI.

use crate::protocol::OverviewAnswer;
use crate::text;
use crate::views::matrix::check_selection;
use std::rc::Rc;
use tracelogic_model::query::{parse_ranks, parse_time};
use tracelogic_model::Selection;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, HtmlInputElement, ImageData};
use yew::prelude::*;

/// Most pixel rows of the activity strip: more ranks are averaged into rows.
pub const MAX_ROWS: usize = 1024;

/// Properties of [`OverviewView`].
#[derive(Properties, PartialEq)]
pub struct OverviewProps {
    /// The worker's overview.
    pub answer: Rc<OverviewAnswer>,
    /// Load the part the selection keeps (checked against the overview first).
    pub on_load: Callback<Selection>,
    /// A load is under way (the button waits).
    #[prop_or_default]
    pub busy: bool,
    /// The page's full-load limit in bytes: a part whose share of the input is estimated over it
    /// is refused before it is asked for.
    pub limit: u64,
}

/// The strip's rows: `(rows, first rank of each row, per row and bin the mean MPI per mille)`.
pub fn strip_rows(rank_permille: &[Vec<u16>], bins: usize, max_rows: usize) -> (usize, Vec<u32>, Vec<u16>) {
    let ranks = rank_permille.len();
    let rows = ranks.min(max_rows.max(1));
    let mut firsts = Vec::with_capacity(rows);
    let mut cells = vec![0u16; rows * bins];
    for row in 0..rows {
        let (from, to) = (
            row * ranks / rows,
            ((row + 1) * ranks / rows).max(row * ranks / rows + 1),
        );
        firsts.push(from as u32);
        for b in 0..bins {
            let sum: u32 = rank_permille[from..to]
                .iter()
                .map(|r| u32::from(r.get(b).copied().unwrap_or(0)))
                .sum();
            cells[row * bins + b] = (sum / (to - from) as u32) as u16;
        }
    }
    (rows, firsts, cells)
}

/// The colour of an MPI share (per mille): light when the ranks compute, dark blue when they
/// sit in MPI; RGBA.
pub fn shade(permille: u16) -> [u8; 4] {
    let t = f64::from(permille.min(1000)) / 1000.0;
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    [mix(238.0, 16.0), mix(242.0, 52.0), mix(247.0, 128.0), 255]
}

/// A time (ns from the run's first event) as a selection field takes it: whole µs, rounded
/// down for a window's start and up for its end.
pub fn time_field(ns: i64, up: bool) -> String {
    let ns = ns.max(0) as u64;
    let us = if up { ns.div_ceil(1000) } else { ns / 1000 };
    format!("{us}us")
}

/// The window `[a, b)` of fractions of the strip's width as times from the run's first event.
pub fn window(answer: &OverviewAnswer, a: f64, b: f64) -> (i64, i64) {
    let act = &answer.report.overview.activity;
    let span = (act.bins as u64 * act.bin_ns) as f64;
    let at = |f: f64| act.start_ns + (f.clamp(0.0, 1.0) * span) as i64;
    let (a, b) = if a <= b { (a, b) } else { (b, a) };
    (at(a), at(b))
}

/// The ranks from row fraction `a` to `b` of the strip, as a rank field takes them.
pub fn rank_field(ranks: u32, a: f64, b: f64) -> String {
    let (a, b) = if a <= b { (a, b) } else { (b, a) };
    let n = f64::from(ranks);
    let first = (a.clamp(0.0, 1.0) * n).floor().min(n - 1.0).max(0.0) as u32;
    let last = (b.clamp(0.0, 1.0) * n).ceil().max(f64::from(first) + 1.0).min(n) as u32 - 1;
    if first == last {
        first.to_string()
    } else {
        format!("{first}-{last}")
    }
}

/// The selection typed in the fields, checked against the overview as the CLI checks its flags,
/// plus the page's own rule: ranks must be named, and the part's estimated share of the input
/// (its ranks' share of the calls) must fit under `limit`.
pub fn part_selection(
    answer: &OverviewAnswer,
    ranks: &str,
    from: &str,
    to: &str,
    limit: u64,
) -> Result<Selection, String> {
    let o = &answer.report.overview;
    if ranks.trim().is_empty() {
        return Err(format!(
            "Name the ranks to load (for example 0-{}): the whole trace is what does not fit.",
            o.ranks.saturating_sub(1).min(63)
        ));
    }
    let ranks = parse_ranks(ranks.trim())?;
    let time = |t: &str| -> Result<Option<u64>, String> {
        let t = t.trim();
        if t.is_empty() {
            Ok(None)
        } else {
            parse_time(t).map(Some)
        }
    };
    let selection = Selection {
        ranks: Some(ranks),
        from: time(from)?,
        to: time(to)?,
        ..Selection::default()
    };
    if let Some(note) = check_selection(&selection, o.ranks, o.end_ns.saturating_sub(o.start_ns))? {
        return Err(note);
    }
    let picked: u64 = selection
        .ranks
        .iter()
        .flatten()
        .filter_map(|&r| o.calls_per_rank.get(r as usize))
        .sum();
    if o.calls > 0 {
        let estimate = (answer.report.input_bytes as f64 * picked as f64 / o.calls as f64) as u64;
        if estimate > limit {
            return Err(format!(
                "These ranks make {} of the trace's {} MPI calls: about {} of its input, over the page's limit of {}. \
                 Pick fewer ranks (the time window is applied once the ranks are read).",
                text::count(picked),
                text::count(o.calls),
                text::bytes(estimate),
                text::bytes(limit)
            ));
        }
    }
    Ok(selection)
}

/// Draw the strip on `canvas`: one pixel per (row, bin).
fn draw(canvas: &HtmlCanvasElement, answer: &OverviewAnswer) -> Result<(), wasm_bindgen::JsValue> {
    let act = &answer.report.overview.activity;
    let (rows, _, cells) = strip_rows(&act.rank_mpi_permille, act.bins, MAX_ROWS);
    if rows == 0 || act.bins == 0 {
        return Ok(());
    }
    canvas.set_width(act.bins as u32);
    canvas.set_height(rows as u32);
    let pixels: Vec<u8> = cells.iter().flat_map(|&p| shade(p)).collect();
    let image = ImageData::new_with_u8_clamped_array_and_sh(Clamped(&pixels), act.bins as u32, rows as u32)?;
    let ctx: CanvasRenderingContext2d = canvas.get_context("2d")?.ok_or("no 2d context")?.dyn_into()?;
    ctx.put_image_data(&image, 0.0, 0.0)
}

/// A pointer's position over the strip as fractions of its width and height.
fn fractions(e: &MouseEvent) -> Option<(f64, f64)> {
    let el: web_sys::Element = e.current_target()?.dyn_into().ok()?;
    let rect = el.get_bounding_client_rect();
    (rect.width() > 0.0 && rect.height() > 0.0).then(|| {
        (
            (f64::from(e.client_x()) - rect.left()) / rect.width(),
            (f64::from(e.client_y()) - rect.top()) / rect.height(),
        )
    })
}

/// The Overview view.
#[function_component(OverviewView)]
pub fn overview_view(props: &OverviewProps) -> Html {
    let answer = props.answer.clone();
    let o = &answer.report.overview;
    let act = &o.activity;
    let canvas = use_node_ref();
    {
        let canvas = canvas.clone();
        use_effect_with(answer.clone(), move |answer| {
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                let _ = draw(&c, answer);
            }
        });
    }
    let ranks = use_state(String::new);
    let from = use_state(String::new);
    let to = use_state(String::new);
    let error = use_state(|| None::<String>);
    // Where a drag on the strip started (fractions of its width and height), and where it is.
    let drag = use_state(|| None::<((f64, f64), (f64, f64))>);
    let field = |state: &UseStateHandle<String>| {
        let state = state.clone();
        Callback::from(move |e: InputEvent| state.set(e.target_unchecked_into::<HtmlInputElement>().value()))
    };
    let on_down = {
        let drag = drag.clone();
        Callback::from(move |e: MouseEvent| {
            if let Some(p) = fractions(&e) {
                e.prevent_default();
                drag.set(Some((p, p)));
            }
        })
    };
    let on_move = {
        let drag = drag.clone();
        Callback::from(move |e: MouseEvent| {
            if let (Some((start, _)), Some(p)) = (*drag, fractions(&e)) {
                drag.set(Some((start, p)));
            }
        })
    };
    let on_up = {
        let (drag, ranks, from, to, answer) = (drag.clone(), ranks.clone(), from.clone(), to.clone(), answer.clone());
        Callback::from(move |e: MouseEvent| {
            let Some((start, _)) = *drag else { return };
            let end = fractions(&e).unwrap_or(start);
            drag.set(None);
            if (end.0 - start.0).abs() > 0.005 {
                let (a, b) = window(&answer, start.0, end.0);
                from.set(time_field(a, false));
                to.set(time_field(b, true));
            }
            if (end.1 - start.1).abs() > 0.01 {
                ranks.set(rank_field(answer.report.overview.ranks, start.1, end.1));
            }
        })
    };
    let on_submit = {
        let (ranks, from, to, error, answer) = (ranks.clone(), from.clone(), to.clone(), error.clone(), answer.clone());
        let on_load = props.on_load.clone();
        let limit = props.limit;
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            match part_selection(&answer, &ranks, &from, &to, limit) {
                Ok(selection) => {
                    error.set(None);
                    on_load.emit(selection);
                }
                Err(message) => error.set(Some(message)),
            }
        })
    };
    // The window typed or dragged, drawn over the strip (fractions of its width).
    let span_ns = (act.bins as u64 * act.bin_ns).max(1) as f64;
    let frac = |t: &str| {
        parse_time(t.trim())
            .ok()
            .map(|ns| (ns as f64 - act.start_ns as f64) / span_ns)
    };
    let band = match *drag {
        Some((a, b)) => Some((a.0.min(b.0), a.0.max(b.0))),
        None => match (frac(&from), frac(&to)) {
            (None, None) => None,
            (a, b) => Some((a.unwrap_or(0.0), b.unwrap_or(1.0))),
        },
    }
    .map(|(a, b)| (a.clamp(0.0, 1.0), b.clamp(0.0, 1.0)))
    .filter(|(a, b)| b > a);
    let rank_share = if o.duration_s * f64::from(o.active_ranks) > 0.0 {
        o.mpi_s / (o.duration_s * f64::from(o.active_ranks))
    } else {
        0.0
    };
    let stat = |id: &'static str, label: &'static str, value: String, shown: String| {
        html! { <tr data-stat={id} data-value={value}><th scope="row">{ label }</th><td>{ shown }</td></tr> }
    };
    let (min_calls, max_calls) = (
        o.calls_per_rank.iter().min().copied().unwrap_or(0),
        o.calls_per_rank.iter().max().copied().unwrap_or(0),
    );
    let time_at = |bin: usize| (act.start_ns + (bin as u64 * act.bin_ns) as i64).max(0) as f64 / 1e9;
    let rows = o.ranks.min(MAX_ROWS as u32);
    html! {
        <section class="view overview" id="view-overview" aria-labelledby="overview-title"
            data-ranks={o.ranks.to_string()} data-calls={o.calls.to_string()} data-bins={act.bins.to_string()}
            data-worker-memory={answer.worker_memory_bytes.to_string()} data-workers={answer.workers.to_string()}>
            <h2 id="overview-title" class="visually-hidden">{ "Overview" }</h2>
            <p class="hint">{ if answer.report.streamed && answer.workers > 1 {
                format!("Read one rank at a time by {} workers, a block of ranks each: the whole trace was never in memory. Pick ranks and a time window below to load that part in full for the other views.", answer.workers)
            } else if answer.report.streamed {
                "Read one rank at a time: the whole trace was never in memory. Pick ranks and a time window below to load that part in full for the other views.".to_owned()
            } else {
                "Read whole (only OTF2 folders are read one rank at a time). Pick ranks and a time window below to load that part for the other views.".to_owned()
            } }</p>
            <table class="stats" id="overview-stats">
                <tbody>
                    { stat("format", "Format", o.format.clone(), o.format.clone()) }
                    { stat("ranks", "Ranks", o.ranks.to_string(), format!("{} ({} made MPI calls)", text::count(o.ranks.into()), text::count(o.active_ranks.into()))) }
                    { stat("calls", "MPI calls", o.calls.to_string(), format!("{} ({}–{} per rank)", text::count(o.calls), text::count(min_calls), text::count(max_calls))) }
                    { stat("duration", "Duration", format!("{}", o.duration_s), format!("{}, {} of the rank time inside MPI", text::duration(o.duration_s), text::percent(rank_share))) }
                    { stat("p2p_messages", "Point-to-point sends", o.p2p_messages.to_string(), format!("{} ({} bytes), {} receives", text::count(o.p2p_messages), text::bytes(o.p2p_bytes), text::count(o.p2p_receives))) }
                    { stat("p2p_bytes", "Point-to-point bytes", o.p2p_bytes.to_string(), text::bytes(o.p2p_bytes)) }
                    { stat("p2p_receives", "Point-to-point receives", o.p2p_receives.to_string(), text::count(o.p2p_receives)) }
                    { stat("collective_ops", "Collective operations", o.collective_ops.to_string(), format!("{} ({} contributed)", text::count(o.collective_ops), text::bytes(o.collective_bytes))) }
                    { stat("collective_bytes", "Collective bytes", o.collective_bytes.to_string(), text::bytes(o.collective_bytes)) }
                    if o.one_sided_calls > 0 {
                        { stat("one_sided_calls", "One-sided calls (not in the matrix)", o.one_sided_calls.to_string(), text::count(o.one_sided_calls)) }
                    }
                    { stat("pairs", "Communicating pairs", answer.pairs.to_string(), text::count(answer.pairs)) }
                    { stat("topology", "Topology", answer.topology.clone(), answer.topology.clone()) }
                    { stat("input_bytes", "Input", answer.report.input_bytes.to_string(), format!("{} in {}", text::bytes(answer.report.input_bytes), text::counted(answer.files.into(), "file", "files"))) }
                </tbody>
            </table>
            <h3>{ "Activity" }</h3>
            <p class="hint" id="overview-activity-help">{ format!(
                "Share of each rank's time inside MPI over time (darker: more), {} bins of {}; {}. Drag across the strip to pick a time window (and, dragging down, ranks).",
                act.bins, text::duration(act.bin_ns as f64 / 1e9),
                if o.ranks as usize > MAX_ROWS { format!("{} ranks averaged per row", o.ranks.div_ceil(rows.max(1))) } else { "one row per rank".to_owned() }) }</p>
            <div class="overview-strip" onmousedown={on_down} onmousemove={on_move} onmouseup={on_up.clone()}
                onmouseleave={on_up} style={format!("height: {}px", rows.clamp(64, 512))}>
                <canvas id="overview-activity" ref={canvas} role="img"
                    aria-label="Activity of every rank over time" aria-describedby="overview-activity-help"></canvas>
                if let Some((a, b)) = band {
                    <div class="overview-window" id="overview-window"
                        style={format!("left: {:.3}%; width: {:.3}%", a * 100.0, (b - a) * 100.0)}></div>
                }
            </div>
            <h3>{ "Phase sketch" }</h3>
            <table class="data" id="overview-phases">
                <thead><tr><th>{ "from s" }</th><th>{ "to s" }</th><th>{ "activity" }</th><th>{ "MPI share" }</th></tr></thead>
                <tbody>{ for o.phases.iter().map(|p| html! {
                    <tr data-phase={p.activity.clone()}>
                        <td>{ format!("{:.6}", time_at(p.first_bin)) }</td>
                        <td>{ format!("{:.6}", time_at(p.first_bin + p.bins).min(o.duration_s)) }</td>
                        <td>{ &p.activity }</td>
                        <td>{ format!("{:.1} %", f64::from(p.mpi_permille) / 10.0) }</td>
                    </tr>
                }) }</tbody>
            </table>
            <form class="controls selection" id="overview-part" onsubmit={on_submit}>
                <fieldset>
                    <legend>{ "Load a part" }</legend>
                    <label>{ "Ranks " }<input id="overview-ranks" type="text" placeholder={format!("e.g. 0-{}", o.ranks.saturating_sub(1).min(63))}
                        value={(*ranks).clone()} oninput={field(&ranks)} /></label>
                    <label>{ "From " }<input id="overview-from" type="text" placeholder="e.g. 20ms" value={(*from).clone()} oninput={field(&from)} /></label>
                    <label>{ "To " }<input id="overview-to" type="text" placeholder="e.g. 30ms" value={(*to).clone()} oninput={field(&to)} /></label>
                    <button type="submit" id="overview-load" disabled={props.busy}>{ "Load this part" }</button>
                </fieldset>
                <p class="hint">{ "Only the event files of these ranks are read in full; times count from the trace's first event, as in the other views." }</p>
                if let Some(e) = &*error {
                    <p class="error" role="alert" id="overview-error">{ e }</p>
                }
            </form>
            <h3>{ "MPI functions" }</h3>
            <table class="data" id="overview-functions">
                <thead><tr><th>{ "function" }</th><th>{ "calls" }</th><th>{ "total s" }</th><th>{ "share" }</th>
                    <th>{ "min/rank s" }</th><th>{ "mean/rank s" }</th><th>{ "max/rank s" }</th></tr></thead>
                <tbody>{ for o.functions.iter().map(|f| html! {
                    <tr data-overview-function={f.name.clone()} data-calls={f.calls.to_string()}>
                        <td>{ &f.name }</td><td>{ text::count(f.calls) }</td><td>{ format!("{:.6}", f.total_s) }</td>
                        <td>{ text::percent(f.share) }</td><td>{ format!("{:.6}", f.min_rank_s) }</td>
                        <td>{ format!("{:.6}", f.mean_rank_s) }</td><td>{ format!("{:.6}", f.max_rank_s) }</td>
                    </tr>
                }) }</tbody>
            </table>
            if !o.warnings.is_empty() {
                <ul class="warnings">{ for o.warnings.iter().map(|w| html! { <li>{ w }</li> }) }</ul>
            }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_average_ranks_beyond_the_row_limit() {
        let ranks: Vec<Vec<u16>> = (0..10).map(|r| vec![r * 100, 1000 - r * 100]).collect();
        let (rows, firsts, cells) = strip_rows(&ranks, 2, 4);
        assert_eq!(rows, 4);
        assert_eq!(firsts, [0, 2, 5, 7]);
        assert_eq!(&cells[..2], &[50, 950], "ranks 0 and 1 averaged");
        assert_eq!(&cells[2..4], &[300, 700], "ranks 2 to 4");
        let (rows, firsts, cells) = strip_rows(&ranks[..3], 2, 1024);
        assert_eq!((rows, firsts.len(), cells.len()), (3, 3, 6), "one row per rank");
        assert_eq!(strip_rows(&[], 5, 10).0, 0);
    }

    #[test]
    fn drags_become_selection_fields() {
        assert_eq!(rank_field(4096, 0.0, 1.0), "0-4095");
        assert_eq!(rank_field(4096, 0.5, 0.25), "1024-2047");
        assert_eq!(rank_field(8, 0.5, 0.5), "4");
        assert_eq!(rank_field(8, 1.0, 1.0), "7");
        assert_eq!(time_field(1_500_400, false), "1500us");
        assert_eq!(time_field(1_500_400, true), "1501us");
        assert_eq!(time_field(-20, false), "0us");
        assert_eq!(parse_time(&time_field(2_000_000, false)), Ok(2_000_000));
        assert_eq!(shade(0)[3], 255);
        assert!(shade(1000)[0] < shade(0)[0]);
    }
}
