//! The summary view: ranks, calls, calls by MPI function, bytes, duration, communicators,
//! unmatched messages and reader warnings.

use crate::protocol::LoadedTrace;
use crate::text;
use std::rc::Rc;
use yew::prelude::*;

/// Properties of [`SummaryView`].
#[derive(Properties, PartialEq)]
pub struct SummaryProps {
    /// The loaded trace's summary.
    pub trace: Rc<LoadedTrace>,
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
            </dl>
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
                    <thead><tr><th scope="col">{ "Name" }</th><th scope="col" class="num">{ "Ranks" }</th></tr></thead>
                    <tbody>
                        { for s.communicators.iter().map(|c| html! {
                            <tr><th scope="row">{ &c.name }</th><td class="num">{ c.size }</td></tr>
                        }) }
                    </tbody>
                </table>
            </div>
        </section>
    }
}
