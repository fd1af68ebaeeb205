//! The tour panel: the text of the current [`tour`](crate::tour) step beside the view that
//! shows it, previous / next, and the mark on the step's figure.
//!
//! The page loads the step's sample and switches to its view; the panel then waits for the
//! figure to be drawn (the analysis may still be running), marks it with
//! `data-tour-highlight` (style.css outlines it) and scrolls it into view.

use crate::samples;
use crate::tour::{TourStep, SOURCES, STEPS};
use gloo::timers::callback::Interval;
use wasm_bindgen::JsCast;
use web_sys::Element;
use yew::prelude::*;

/// Properties of [`TourPanel`].
#[derive(Properties, PartialEq)]
pub struct TourProps {
    /// Index of the step in [`STEPS`].
    pub step: usize,
    /// Go to another step (`None` ends the tour).
    pub on_step: Callback<Option<usize>>,
}

const MARK: &str = "data-tour-highlight";

fn document() -> Option<web_sys::Document> {
    web_sys::window().and_then(|w| w.document())
}

/// Remove the mark from every element.
fn clear_marks() {
    let Some(doc) = document() else { return };
    if let Ok(list) = doc.query_selector_all(&format!("[{MARK}]")) {
        for i in 0..list.length() {
            if let Some(e) = list.item(i).and_then(|n| n.dyn_into::<Element>().ok()) {
                let _ = e.remove_attribute(MARK);
            }
        }
    }
}

/// Scroll the page vertically so `figure` sits in the middle of the window (or its top near the
/// top when it is taller); never sideways, so a figure wider than the window does not push the
/// page under the tour panel.
fn scroll_to(figure: &Element) {
    let Some(window) = web_sys::window() else { return };
    let rect = figure.get_bounding_client_rect();
    let height = window.inner_height().ok().and_then(|h| h.as_f64()).unwrap_or(720.0);
    let y = window.scroll_y().unwrap_or(0.0) + rect.top() - ((height - rect.height()) / 2.0).max(80.0);
    window.scroll_to_with_x_and_y(window.scroll_x().unwrap_or(0.0), y.max(0.0));
}

/// Mark the step's figure if it is drawn and not marked yet; true once it is marked.
fn mark(step: &TourStep) -> bool {
    let Some(figure) = document().and_then(|d| d.query_selector(step.figure).ok().flatten()) else {
        return false;
    };
    if !figure.has_attribute(MARK) {
        clear_marks();
        let _ = figure.set_attribute(MARK, step.id);
        scroll_to(&figure);
    }
    true
}

/// The guided tour beside the current view.
#[function_component(TourPanel)]
pub fn tour_panel(props: &TourProps) -> Html {
    let marked = use_state_eq(|| None::<&'static str>);
    let index = props.step.min(STEPS.len() - 1);
    let step = STEPS[index];
    {
        let marked = marked.clone();
        use_effect_with(index, move |_| {
            // The figure appears once the sample is loaded and the analysis answered; a view
            // redrawn from scratch loses the mark, so keep checking while the step is shown.
            let interval = Interval::new(250, move || {
                marked.set(mark(&step).then_some(step.id));
            });
            move || {
                drop(interval);
                clear_marks();
            }
        });
    }
    let on_prev = props.on_step.reform(move |_: MouseEvent| Some(index.saturating_sub(1)));
    let last = index + 1 == STEPS.len();
    let on_next = props.on_step.reform(move |_: MouseEvent| (!last).then_some(index + 1));
    let on_close = props.on_step.reform(|_: MouseEvent| None);
    // Until the effect of a new step has run, `marked` still names the previous step.
    let shown = *marked == Some(step.id);
    let sample = samples::find(step.sample).map_or(step.sample, |s| s.title);
    // "Logicalization, §4.1" is shown as the paper's title and the section.
    let (paper, section) = SOURCES
        .iter()
        .find_map(|(key, title)| {
            step.source
                .strip_prefix(key)
                .map(|rest| (Some(*title), rest.trim_start_matches(", ")))
        })
        .unwrap_or((None, step.source));
    html! {
        <aside class="tour" id="tour" aria-label="Guided tour" data-step={step.id}
            data-figure-shown={shown.to_string()}>
            <p class="tour-progress">{ format!("Tour · step {} of {}", index + 1, STEPS.len()) }</p>
            <h2 id="tour-title">{ step.title }</h2>
            { for step.text.iter().map(|p| html! { <p>{ *p }</p> }) }
            <p class="small tour-sample">{ format!("On the sample {sample}.") }</p>
            <p class="small tour-source">
                { "Source: " }
                if let Some(t) = paper { <><cite>{ t }</cite>{ ", " }</> }
                { section }
            </p>
            if !shown { <p class="waiting" role="status">{ "Loading the figure…" }</p> }
            <div class="tour-buttons">
                <button type="button" class="secondary" id="tour-prev" onclick={on_prev} disabled={index == 0}>{ "← Previous" }</button>
                <button type="button" id="tour-next" onclick={on_next}>{ if last { "Finish" } else { "Next →" } }</button>
                <button type="button" class="secondary" id="tour-close" onclick={on_close}>{ "Close" }</button>
            </div>
        </aside>
    }
}
