//! The views of a loaded trace, one module each. The navigation bar lists [`View::ALL`]. The
//! analysis views receive their report typed from the worker ([`AnalysisState`], an
//! [`Answer`]) and share the selected rank, pattern and phase ([`Focus`]).

pub mod compare;
pub mod logical;
pub mod matrix;
pub mod overview;
pub mod pattern_search;
pub mod patterns;
pub mod phases;
pub mod profile;
pub mod summary;
pub mod timeline;
pub mod timeline_canvas;
pub mod topology;
pub mod tour;
pub mod waits;
pub mod whatif;

use crate::protocol::{AnalysisRequest, Answer, FromAnswer};
use std::rc::Rc;
use yew::prelude::*;

/// A view of the loaded trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// What is in the trace.
    Summary,
    /// The rank-to-rank communication matrix.
    Matrix,
    /// Time per MPI function, computation per rank, message sizes.
    Profile,
    /// Wait states and the critical path.
    Waits,
    /// The identified topology.
    Topology,
    /// The logical trace and its program.
    Logical,
    /// Communication patterns.
    Patterns,
    /// Execution phases.
    Phases,
    /// Predicted time on other networks.
    WhatIf,
    /// Similarity with a second trace.
    Compare,
    /// Every rank's calls over time.
    Timeline,
}

impl View {
    /// Every view, in navigation order.
    pub const ALL: [View; 11] = [
        View::Summary,
        View::Matrix,
        View::Profile,
        View::Waits,
        View::Topology,
        View::Logical,
        View::Patterns,
        View::Phases,
        View::WhatIf,
        View::Compare,
        View::Timeline,
    ];

    /// Name in the navigation bar.
    pub fn title(self) -> &'static str {
        match self {
            View::Summary => "Summary",
            View::Matrix => "Matrix",
            View::Profile => "Profile",
            View::Waits => "Waits",
            View::Topology => "Topology",
            View::Logical => "Logical trace",
            View::Patterns => "Patterns",
            View::Phases => "Phases",
            View::WhatIf => "What-if",
            View::Compare => "Compare",
            View::Timeline => "Timeline",
        }
    }

    /// Stable id used in the page (`#view-summary`) and by tests; also the
    /// [`AnalysisRequest::kind`] of the view's analysis.
    pub fn id(self) -> &'static str {
        match self {
            View::Summary => "summary",
            View::Matrix => "matrix",
            View::Profile => "profile",
            View::Waits => "waits",
            View::Topology => "topology",
            View::Logical => "logical",
            View::Patterns => "patterns",
            View::Phases => "phases",
            View::WhatIf => "whatif",
            View::Compare => "compare",
            View::Timeline => "timeline",
        }
    }

    /// The analysis the view runs when first shown (none for views that need user input first).
    pub fn default_request(self) -> Option<AnalysisRequest> {
        match self {
            View::Topology => Some(AnalysisRequest::Topology { threshold_pct: None }),
            View::Logical => Some(AnalysisRequest::Logical { exact_sizes: false }),
            View::Patterns => Some(AnalysisRequest::Patterns),
            View::Phases => Some(AnalysisRequest::Phases { strength: 0.0 }),
            View::WhatIf => Some(AnalysisRequest::WhatIf { custom: None }),
            View::Profile => Some(AnalysisRequest::Profile),
            View::Waits => Some(AnalysisRequest::Waits { what_if: false }),
            View::Summary | View::Matrix | View::Compare | View::Timeline => None,
        }
    }
}

/// Where a view's analysis is: the last request, whether its answer is awaited, and the answer
/// (the report or an error message).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnalysisState {
    /// Sequence number of the latest request (answers with another number are stale).
    pub seq: u64,
    /// The latest request (not kept for comparisons, which carry a whole trace).
    pub request: Option<AnalysisRequest>,
    /// True while the worker computes.
    pub pending: bool,
    /// The latest answer.
    pub result: Option<Rc<Result<Answer, String>>>,
    /// Label of a second trace being read (comparisons).
    pub loading: Option<String>,
    /// Where the worker is with the awaited answer, when the analysis reports it.
    pub working: Option<crate::protocol::WorkingReport>,
}

/// The selection carried between views.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Focus {
    /// Selected rank.
    pub rank: Option<u32>,
    /// Selected communication pattern id.
    pub pattern: Option<usize>,
    /// Selected phase (index in the phase list).
    pub phase: Option<usize>,
    /// The patterns view lists every pattern, also those it hides by default (kept while the
    /// user moves between views and changes the selection, until another trace is loaded).
    pub all_patterns: bool,
}

/// Properties shared by the analysis views.
#[derive(Properties, PartialEq)]
pub struct AnalysisProps {
    /// The view's analysis.
    pub state: AnalysisState,
    /// Ask the worker for a new analysis (new threshold, strength, network...).
    pub on_request: Callback<AnalysisRequest>,
    /// The shared selection.
    pub focus: Focus,
    /// Change the shared selection.
    pub on_focus: Callback<Focus>,
    /// What the page shows inside the view below its own content (the patterns view's search
    /// form); most views take none.
    #[prop_or_default]
    pub children: Html,
}

/// The report of `state`, read out of its answer once per answer (not on every hover or
/// click), or the page content standing in for it (waiting, error).
#[hook]
pub fn use_parsed<T: FromAnswer + 'static>(state: &AnalysisState) -> Result<Rc<T>, Html> {
    let parsed = use_memo(state.result.clone(), |result| match result.as_deref() {
        None => None,
        Some(Err(e)) => Some(Err(e.clone())),
        Some(Ok(Answer::NothingFound(reason))) => Some(Err(format!("{NOTHING}{reason}"))),
        Some(Ok(answer)) => Some(
            T::from_answer(answer)
                .map(Rc::new)
                .ok_or_else(|| "unreadable answer: not the report this view shows".to_owned()),
        ),
    });
    match &*parsed {
        None => Err(html! { <Computing working={state.working.as_ref().map(|w| w.text())} /> }),
        Some(Err(e)) => Err(match e.strip_prefix(NOTHING) {
            Some(reason) => html! { <p class="note nothing-found" id="nothing-found">{ reason }{ "." }</p> },
            None => error_box(e),
        }),
        Some(Ok(value)) => Ok(value.clone()),
    }
}

/// Marks a memoised "nothing to show" answer apart from an error.
const NOTHING: &str = "\u{0}nothing:";

/// An analysis error, shown in the view (the trace stays loaded).
pub fn error_box(message: &str) -> Html {
    html! {
        <div class="error view-error" role="alert">
            <p><strong>{ "The analysis failed. " }</strong>{ message }</p>
            <p class="kept">{ "The trace is still loaded; the other views work." }</p>
        </div>
    }
}

/// How long an analysis runs before [`Computing`] says for how long (as the CLI's stage line,
/// docs/cli.md).
const SHOW_SECONDS_AFTER: u32 = 2;

/// What [`Computing`] says after `seconds` of waiting, `working` being where the analysis
/// reported it is ([`crate::protocol::WorkingReport::text`]), as the CLI's stage line does.
fn computing_text(seconds: u32, after: u32, working: Option<&str>) -> String {
    let what = match working {
        Some(w) => format!("Computing in the analysis worker: {w}…"),
        None => "Computing in the analysis worker…".to_owned(),
    };
    if seconds < after {
        what
    } else {
        format!("{what} {seconds} s")
    }
}

/// Where the delay before [`Computing`] counts seconds can be changed: the page's address
/// parameter `progress-after` (seconds; tests set 0, as `TRACELOGIC_PROGRESS_AFTER_MS` for
/// the CLI).
fn show_seconds_after() -> u32 {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .and_then(|q| {
            q.trim_start_matches('?')
                .split('&')
                .find_map(|kv| kv.strip_prefix("progress-after=").and_then(|v| v.parse().ok()))
        })
        .unwrap_or(SHOW_SECONDS_AFTER)
}

/// What [`Computing`] is told.
#[derive(Properties, PartialEq)]
pub struct ComputingProps {
    /// Where the analysis is, as text ("verifying by expansion, 41 %"), when it reports it.
    #[prop_or_default]
    pub working: Option<String>,
}

/// The stand-in for a view whose first answer is awaited: where the analysis is when it
/// reports it and, after two seconds, the seconds since it was shown, so that a long analysis
/// (a minute for the logical trace of a 2.5 M-record run) is visibly alive.
#[function_component(Computing)]
fn computing(props: &ComputingProps) -> Html {
    let seconds = use_state_eq(|| 0u32);
    let after = *use_memo((), |_| show_seconds_after());
    {
        let seconds = seconds.clone();
        use_effect_with((), move |_| {
            let mut count = 0u32;
            let interval = gloo::timers::callback::Interval::new(1000, move || {
                count += 1;
                seconds.set(count);
            });
            move || drop(interval)
        });
    }
    html! {
        <p class="waiting computing" role="status" data-seconds={seconds.to_string()}
            data-working={props.working.clone()}>
            { computing_text(*seconds, after, props.working.as_deref()) }
        </p>
    }
}

/// A "computing" marker while a new answer is awaited over an old one.
pub fn pending_note(state: &AnalysisState) -> Html {
    if state.pending && state.result.is_some() {
        let text = match &state.working {
            Some(w) => format!("Updating: {}…", w.text()),
            None => "Updating…".to_owned(),
        };
        html! { <p class="waiting" role="status">{ text }</p> }
    } else {
        Html::default()
    }
}

/// Offer `text` as a file named `name` (Blob and object URL: nothing leaves the page).
pub fn download(name: &str, mime: &str, text: &str) {
    use wasm_bindgen::JsCast;
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if let Ok(a) = document.create_element("a") {
        if let Ok(a) = a.dyn_into::<web_sys::HtmlAnchorElement>() {
            a.set_href(&url);
            a.set_download(name);
            a.click();
        }
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// A download button for `text`.
pub fn download_button(id: &str, label: &str, name: &'static str, mime: &'static str, text: Rc<String>) -> Html {
    let onclick = Callback::from(move |_: MouseEvent| download(name, mime, &text));
    html! { <button type="button" class="download" id={id.to_owned()} {onclick}>{ label }</button> }
}

/// Seconds shown with a unit that fits.
pub fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

/// The header cell's content of a table row that selects something when clicked: a button, so
/// the row can be reached with Tab and chosen with Enter or Space too. It has no handler of its
/// own: its click (from the pointer or the keyboard) bubbles to the row's `onclick`, so the
/// keyboard has exactly the click's effect. `pressed` tells assistive technology the row is the
/// selected one. Shared by the tables of the patterns, phases, topology, logical and what-if views.
pub fn row_button(pressed: bool, label: Html) -> Html {
    html! { <button type="button" class="row-select" aria-pressed={pressed.to_string()}>{ label }</button> }
}

#[cfg(test)]
mod tests {
    use super::computing_text;

    #[test]
    fn the_waiting_text_counts_seconds_after_two() {
        assert_eq!(computing_text(0, 2, None), "Computing in the analysis worker…");
        assert_eq!(computing_text(1, 2, None), "Computing in the analysis worker…");
        assert_eq!(computing_text(2, 2, None), "Computing in the analysis worker… 2 s");
        assert_eq!(computing_text(75, 2, None), "Computing in the analysis worker… 75 s");
        assert_eq!(computing_text(0, 0, None), "Computing in the analysis worker… 0 s");
        assert_eq!(
            computing_text(12, 2, Some("verifying by expansion, 41 %")),
            "Computing in the analysis worker: verifying by expansion, 41 %… 12 s"
        );
    }
}
