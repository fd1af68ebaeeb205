//! The summary view: ranks, calls, calls by MPI function, bytes, duration, communicators,
//! unmatched messages and reader warnings; and "Save trace as…", which has the worker write the
//! trace in another format (optionally renumbered) and downloads the file.

use crate::protocol::{AnalysisRequest, Answer, FromAnswer, LoadedTrace};
use crate::save::{Renumbering, SaveFormat, SavedTrace};
use crate::text;
use crate::views::AnalysisState;
use std::cell::Cell;
use std::rc::Rc;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// Properties of [`SummaryView`].
#[derive(Properties, PartialEq)]
pub struct SummaryProps {
    /// The loaded trace's summary.
    pub trace: Rc<LoadedTrace>,
    /// The latest "Save trace as…" request and its answer.
    #[prop_or_default]
    pub save: AnalysisState,
    /// Ask the worker to write the trace.
    #[prop_or_default]
    pub on_request: Callback<AnalysisRequest>,
}

thread_local! {
    /// Sequence number of the last saved trace downloaded, so that showing the view again does
    /// not download it again.
    static DOWNLOADED: Cell<u64> = const { Cell::new(0) };
}

/// Offer the worker's file for download.
fn download(saved: &SavedTrace) -> Result<(), String> {
    let bytes = crate::save::content(saved)?;
    let array = js_sys::Uint8Array::from(bytes.as_slice());
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(&saved.mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&js_sys::Array::of1(&array), &options)
        .map_err(|_| "the browser refused to build the file".to_owned())?;
    crate::export::save_blob(&saved.file_name, &blob);
    Ok(())
}

/// The "Save trace as…" form: format, renumbering, and what became of the last request.
#[function_component(SaveTrace)]
fn save_trace(props: &SummaryProps) -> Html {
    let format = use_node_ref();
    let renumber = use_node_ref();
    let seed = use_node_ref();
    let state = &props.save;
    {
        let seq = state.seq;
        use_effect_with(state.result.clone(), move |result| {
            if let Some(Ok(Answer::Saved(saved))) = result.as_deref() {
                if DOWNLOADED.with(|d| d.replace(seq)) != seq {
                    let _ = download(saved);
                }
            }
        });
    }
    let onsubmit = {
        let (format, renumber, seed) = (format.clone(), renumber.clone(), seed.clone());
        let on_request = props.on_request.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let value = |r: &NodeRef| r.cast::<HtmlSelectElement>().map(|s| s.value()).unwrap_or_default();
            let format = SaveFormat::from_id(&value(&format)).unwrap_or(SaveFormat::Text);
            let seed = seed
                .cast::<HtmlInputElement>()
                .and_then(|i| i.value().trim().parse::<u64>().ok())
                .unwrap_or(1);
            let renumbering = match value(&renumber).as_str() {
                "reverse" => Renumbering::Reverse,
                "random" => Renumbering::Random(seed),
                _ => Renumbering::Keep,
            };
            on_request.emit(AnalysisRequest::SaveAs { format, renumbering });
        })
    };
    let status = if state.pending {
        html! { <p id="save-status" class="waiting" role="status">{ "Writing the trace in the analysis worker…" }</p> }
    } else {
        match state.result.as_deref() {
            None => html! { <p id="save-status" role="status" hidden=true></p> },
            Some(Err(e)) => html! { <div id="save-status" role="status">{ crate::views::error_box(e) }</div> },
            Some(Ok(answer)) => match SavedTrace::from_answer(answer).ok_or("not a saved trace") {
                Ok(s) => html! {
                    <p id="save-status" role="status" data-file={s.file_name.clone()} data-bytes={s.bytes.to_string()}>
                        { format!("Saved {} ({}, {} ranks, {} calls{})", s.file_name, text::bytes(s.bytes),
                            s.ranks, text::count(s.calls),
                            if s.permutation.is_some() { ", ranks renumbered" } else { "" }) }
                    </p>
                },
                Err(e) => {
                    html! { <div id="save-status" role="status">{ crate::views::error_box(&format!("unreadable answer: {e}")) }</div> }
                }
            },
        }
    };
    html! {
        <form class="save-trace" id="save-trace" {onsubmit} aria-labelledby="save-trace-title">
            <h3 id="save-trace-title">{ "Save trace as…" }</h3>
            <p class="hint">{ "Writes the part of the trace the matrix view's filters select, as " }
                <code>{ "tracelogic convert" }</code>{ " does." }</p>
            <label>{ "Format " }
                <select id="save-format" ref={format}>
                    <option value="text" selected=true>{ "tracelogic text (.txt)" }</option>
                    <option value="dumpi">{ "SST DUMPI (.tar)" }</option>
                    <option value="otf2">{ "OTF2 (.tar)" }</option>
                </select>
            </label>
            <label>{ "Ranks " }
                <select id="save-renumber" ref={renumber}>
                    <option value="keep" selected=true>{ "as recorded" }</option>
                    <option value="reverse">{ "reversed (r → n−1−r)" }</option>
                    <option value="random">{ "random permutation" }</option>
                </select>
            </label>
            <label>{ "Seed " }
                <input id="save-seed" ref={seed} type="number" min="0" step="1" value="1" inputmode="numeric" />
            </label>
            <button type="submit" id="save-trace-button" disabled={state.pending}>{ "Save trace as…" }</button>
            { status }
        </form>
    }
}

/// One figure of the overview: label, readable value, and the exact number for tests and copy.
fn stat(id: &str, label: &str, shown: String, exact: String) -> Html {
    html! {
        <div class="stat" data-stat={id.to_owned()} data-value={exact}>
            <dt>{ label }</dt>
            <dd>{ shown }</dd>
        </div>
    }
}

/// The summary of a loaded trace.
#[function_component(SummaryView)]
pub fn summary_view(props: &SummaryProps) -> Html {
    let t = &props.trace;
    let s = &t.summary;
    let mut by_function: Vec<(&String, &u64)> = s.calls_by_kind.iter().collect();
    by_function.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let total = s.calls.max(1) as f64;
    let unmatched = s.unmatched_sends + s.unmatched_recvs;
    html! {
        <section class="view summary" id="view-summary" aria-labelledby="summary-title">
            <h2 id="summary-title">{ "Summary" }</h2>
            <dl class="stats">
                { stat("format", "Format", s.format.clone(), s.format.clone()) }
                { stat("ranks", "Ranks", text::count(s.ranks.into()), s.ranks.to_string()) }
                { stat("calls", "MPI calls", text::count(s.calls), s.calls.to_string()) }
                { stat("p2p-messages", "Point-to-point sends", text::count(s.p2p_messages), s.p2p_messages.to_string()) }
                { stat("p2p-bytes", "Point-to-point bytes", text::bytes(s.p2p_bytes), s.p2p_bytes.to_string()) }
                { stat("collective-bytes", "Collective bytes", text::bytes(s.collective_bytes), s.collective_bytes.to_string()) }
                { stat("duration", "Duration", text::duration(s.duration_s), s.duration_s.to_string()) }
                { stat("communicators", "Communicators", text::count(s.communicators.len() as u64), s.communicators.len().to_string()) }
                { stat("unmatched", "Unmatched messages",
                    format!("{} sends, {} receives", text::count(s.unmatched_sends), text::count(s.unmatched_recvs)),
                    unmatched.to_string()) }
                if s.one_sided_calls > 0 {
                    { stat("one-sided", "One-sided calls (not in the matrix)", text::count(s.one_sided_calls), s.one_sided_calls.to_string()) }
                }
            </dl>
            if let Some(t) = &s.threads {
                <div class="warnings" role="note" id="summary-threads">
                    <h3>{ "Several threads" }</h3>
                    <p>{ t }</p>
                </div>
            }
            if !s.warnings.is_empty() {
                <div class="warnings" role="note">
                    <h3>{ format!("Reader warnings ({})", s.warnings.len()) }</h3>
                    <ul>{ for s.warnings.iter().map(|w| html! { <li>{ w }</li> }) }</ul>
                </div>
            }
            <div class="tables">
                <table class="calls-by-function">
                    <caption>{ "Calls by MPI function" }</caption>
                    <thead><tr><th scope="col">{ "Function" }</th><th scope="col" class="num">{ "Calls" }</th><th scope="col" class="num">{ "Share" }</th></tr></thead>
                    <tbody>
                        { for by_function.iter().map(|(name, &n)| html! {
                            <tr data-function={(*name).clone()} data-calls={n.to_string()}>
                                <th scope="row"><code>{ *name }</code></th>
                                <td class="num" data-export={n.to_string()}>{ text::count(n) }</td>
                                <td class="num" data-export={(n as f64 / total).to_string()}>{ text::percent(n as f64 / total) }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
                <table class="calls-per-rank">
                    <caption>{ "Calls per rank" }</caption>
                    <thead><tr><th scope="col">{ "Rank" }</th><th scope="col" class="num">{ "Calls" }</th></tr></thead>
                    <tbody>
                        { for s.calls_per_rank.iter().enumerate().map(|(r, &n)| html! {
                            <tr><th scope="row">{ r }</th><td class="num" data-export={n.to_string()}>{ text::count(n) }</td></tr>
                        }) }
                    </tbody>
                </table>
                <table class="communicators">
                    <caption>{ "Communicators" }</caption>
                    <thead><tr><th scope="col">{ "Name" }</th><th scope="col" class="num">{ "Ranks" }</th><th scope="col" class="num">{ "P2P sends" }</th><th scope="col" class="num">{ "P2P bytes" }</th></tr></thead>
                    <tbody>
                        { for s.communicators.iter().map(|c| html! {
                            <tr><th scope="row">{ &c.name }</th><td class="num">{ text::count(c.size as u64) }</td>
                                <td class="num" data-export={c.p2p_sends.to_string()}>{ text::count(c.p2p_sends) }</td>
                                <td class="num" data-export={c.p2p_bytes.to_string()}>{ text::bytes(c.p2p_bytes) }</td></tr>
                        }) }
                    </tbody>
                </table>
            </div>
            <SaveTrace trace={props.trace.clone()} save={props.save.clone()} on_request={props.on_request.clone()} />
        </section>
    }
}
