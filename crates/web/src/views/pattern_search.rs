//! The pattern-search form of the patterns view (thesis §4.5): the user writes a pattern (a
//! pattern file's JSON: rank → event symbols, optionally with the small topology it was written
//! for, docs/patterns.md) or takes the selected detected pattern, sets the edits allowed per
//! rank, and the worker searches it as `tracelogic match` does.

use super::{pending_note, seconds, use_parsed, AnalysisState, Focus};
use crate::protocol::{AnalysisRequest, Answer, SearchReport as SearchResult};
use web_sys::{HtmlInputElement, HtmlTextAreaElement};
use yew::prelude::*;

/// What the form starts with: a ping-pong between ranks 0 and 1.
pub const EXAMPLE: &str = r#"{"0": ["S1", "R1"], "1": ["R0", "S0"]}"#;
/// Matches listed (the count covers all).
pub const LISTED_MATCHES: usize = 50;

/// Properties of [`PatternSearch`].
#[derive(Properties, PartialEq)]
pub struct PatternSearchProps {
    /// The search's answer, once one was asked for.
    pub state: Option<AnalysisState>,
    /// The patterns analysis (to take the selected pattern's events).
    pub patterns: AnalysisState,
    /// The shared selection (its pattern is offered).
    pub focus: Focus,
    /// Ask the worker for a search.
    pub on_request: Callback<AnalysisRequest>,
}

/// The form and the matches of the latest search.
#[function_component(PatternSearch)]
pub fn pattern_search(props: &PatternSearchProps) -> Html {
    let text = use_state(|| EXAMPLE.to_owned());
    let max_edits = use_state(|| 0u32);
    // The patterns answer is parsed and the selected pattern written out only when it is taken:
    // on a 4,096-rank run that is a tenth of a second the page would spend on every render.
    let answered = matches!(props.patterns.result.as_deref(), Some(Ok(_)));
    let selected = props.focus.pattern.filter(|_| answered);
    let state = props.state.clone().unwrap_or_default();
    let answer = use_parsed::<SearchResult>(&state);

    let on_text = {
        let text = text.clone();
        Callback::from(move |e: InputEvent| text.set(e.target_unchecked_into::<HtmlTextAreaElement>().value()))
    };
    // On every keystroke, so that a redraw never puts the previous number back over the typed
    // one (yew refreshes a controlled input's value), as the timeline's rank filter does.
    let on_edits = {
        let max_edits = max_edits.clone();
        Callback::from(move |e: InputEvent| {
            if let Ok(k) = e.target_unchecked_into::<HtmlInputElement>().value().parse::<u32>() {
                max_edits.set(k.min(64));
            }
        })
    };
    let on_take = {
        let text = text.clone();
        let result = props.patterns.result.clone();
        Callback::from(move |_: MouseEvent| {
            if let Some(json) = selected
                .zip(result.as_deref())
                .and_then(|(id, r)| pattern_events(r.as_ref().ok()?, id))
            {
                text.set(json);
            }
        })
    };
    let on_search = {
        let (text, max_edits, on_request) = (text.clone(), max_edits.clone(), props.on_request.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            on_request.emit(AnalysisRequest::Match {
                pattern: (*text).clone(),
                max_edits: *max_edits,
            });
        })
    };
    let take_label = match selected {
        Some(id) => format!("Use pattern #{id}"),
        None => "Use the selected pattern".to_owned(),
    };

    let results = match (&props.state, answer) {
        (None, _) => Html::default(),
        (Some(_), Err(waiting_or_error)) => waiting_or_error,
        (Some(s), Ok(r)) => html! { <>{ pending_note(s) }{ search_results(&r) }</> },
    };
    html! {
        <section class="pattern-search" id="pattern-search" aria-labelledby="pattern-search-title">
            <h3 id="pattern-search-title">{ "Search a pattern (approximate, thesis §4.5)" }</h3>
            <p class="small">
                { "Per rank the events to find: " }<code>{ "S3" }</code>{ " send to rank 3, " }
                <code>{ "R5" }</code>{ " receive from rank 5, collectives by name. Add " }
                <code>{ r#""topology": "grid:3x3""# }</code>{ " and put the events under " }<code>{ "\"events\"" }</code>
                { " to write the pattern for a small grid and extrapolate it to this run's topology." }
            </p>
            <form onsubmit={on_search}>
                <textarea id="pattern-search-text" rows="4" cols="60" spellcheck="false"
                    aria-label="Pattern (JSON)" value={(*text).clone()} oninput={on_text} />
                <div class="controls">
                    <label>{ "Edits allowed per rank " }
                        <input id="pattern-search-edits" type="number" min="0" max="64"
                            value={max_edits.to_string()} oninput={on_edits} />
                    </label>
                    <button type="button" id="pattern-search-take" disabled={selected.is_none()} onclick={on_take}>
                        { take_label }
                    </button>
                    <button type="submit" id="pattern-search-run">{ "Search" }</button>
                </div>
            </form>
            { results }
        </section>
    }
}

/// The events of pattern `id` of a patterns answer, as a pattern file's JSON.
fn pattern_events(answer: &Answer, id: usize) -> Option<String> {
    let Answer::Patterns(parsed) = answer else { return None };
    let p = parsed.patterns.iter().find(|p| p.id == id)?;
    serde_json::to_string(&p.events).ok()
}

/// The count, the extrapolation and the first matches of a search.
fn search_results(r: &SearchResult) -> Html {
    let found = &r.search.search;
    let rel = |t: u64| seconds(t.saturating_sub(r.trace_start) as f64 * 1e-9);
    let extrapolated = (!r.search.from_topology.is_empty()).then(|| {
        html! {
            <p id="pattern-search-extrapolation">
                { format!("Written for {}, extrapolated to the run's {} ({} classes of ranks; occurrences per orientation tried: {:?}).",
                    r.search.from_topology, r.search.to_topology, r.search.classes.len(), r.search.orientation_matches) }
                { for r.search.directions_from.as_ref().filter(|d| d.worth_showing()).map(|d| format!(" {}", d.reason)) }
            </p>
        }
    });
    if found.matches.is_empty() {
        return html! {
            <>{ for extrapolated }<p id="pattern-search-count" data-count="0">
                { format!("Not found with at most {} edits per rank.", found.max_edits) }</p></>
        };
    }
    html! {
        <>
            { for extrapolated }
            <p id="pattern-search-count" data-count={found.matches.len().to_string()}>
                { format!("{} occurrences across {} ranks, at most {} edits per rank.",
                    found.matches.len(), found.rank_matches.len(), found.max_edits) }
            </p>
            <table class="pattern-matches" id="pattern-search-matches" data-export-name="pattern-matches">
                <thead><tr><th>{ "#" }</th><th>{ "start" }</th><th>{ "end" }</th><th>{ "edits" }</th><th>{ "ranks" }</th></tr></thead>
                <tbody>
                    { for found.matches.iter().take(LISTED_MATCHES).enumerate().map(|(i, m)| html! {
                        <tr>
                            <td>{ i + 1 }</td><td>{ rel(m.start) }</td><td>{ rel(m.end) }</td>
                            <td>{ m.edits }</td><td>{ m.windows.len() }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        </>
    }
}
