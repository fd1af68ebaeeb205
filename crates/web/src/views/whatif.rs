//! The what-if view: predicted time of every configuration as stacked bars (compute, wait,
//! latency, bandwidth), the classification of each network with its reason, per-rank imbalance,
//! and sliders for a custom network.

use super::{pending_note, seconds, use_parsed, AnalysisProps, Focus};
use crate::protocol::AnalysisRequest;
use std::rc::Rc;
use tracelogic_analysis::replay::{Breakdown, WhatIf};
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// The four parts of a predicted time, with their CSS class.
fn parts(b: &Breakdown) -> [(&'static str, &'static str, f64); 4] {
    [
        ("compute", "compute", b.compute_s),
        ("wait", "wait", b.wait_s),
        ("latency", "latency", b.latency_term_s),
        ("bandwidth", "bandwidth", b.bandwidth_term_s),
    ]
}

fn stacked_bar(b: &Breakdown, max: f64) -> Html {
    html! {
        <div class="bar" role="img" aria-label={format!("compute {}, wait {}, latency {}, bandwidth {}",
            seconds(b.compute_s), seconds(b.wait_s), seconds(b.latency_term_s), seconds(b.bandwidth_term_s))}>
            { for parts(b).iter().map(|&(name, class, v)| html! {
                <span class={classes!("segment", class)} style={format!("width: {:.3}%", 100.0 * v / max.max(1e-30))}
                    title={format!("{name}: {}", seconds(v))}></span>
            }) }
        </div>
    }
}

/// The what-if view.
#[function_component(WhatIfView)]
pub fn whatif_view(props: &AnalysisProps) -> Html {
    let network = use_state(|| None::<String>);
    let latency = use_state(|| 5.0f64);
    let bandwidth = use_state(|| 10.0f64);
    let report: Rc<WhatIf> = match use_parsed(&props.state) {
        Ok(r) => r,
        Err(page) => return wrap(page),
    };
    let networks: Vec<String> = report.classification.iter().map(|c| c.network.clone()).collect();
    let shown = (*network)
        .clone()
        .filter(|n| networks.contains(n))
        .or_else(|| networks.first().cloned())
        .unwrap_or_default();
    let configs: Vec<_> = report
        .configurations
        .iter()
        .filter(|c| c.configuration.network == shown)
        .collect();
    let max = configs.iter().map(|c| c.breakdown.total_s()).fold(0.0, f64::max);
    let on_network = {
        let network = network.clone();
        Callback::from(move |e: Event| {
            let s: HtmlSelectElement = e.target_unchecked_into();
            network.set(Some(s.value()));
        })
    };
    let slider = |state: UseStateHandle<f64>, other: UseStateHandle<f64>, is_latency: bool| {
        let on_request = props.on_request.clone();
        let network = network.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlInputElement>().value_as_number();
            state.set(v);
            let (l, b) = if is_latency { (v, *other) } else { (*other, v) };
            network.set(Some("custom".into()));
            on_request.emit(AnalysisRequest::WhatIf { custom: Some((l, b)) });
        })
    };
    let on_latency = slider(latency.clone(), bandwidth.clone(), true);
    let on_bandwidth = slider(bandwidth.clone(), latency.clone(), false);
    let base = configs.iter().find(|c| c.configuration.scale == 1.0);
    let focus = props.focus.clone();
    let on_focus = props.on_focus.clone();
    let body = html! {
        <>
            <p class="headline">{ format!("Measured {} · {} calls, {} messages replayed", seconds(report.measured_s), report.calls, report.messages) }</p>
            { pending_note(&props.state) }
            <table class="classification" id="whatif-classification">
                <caption>{ "Classification per network" }</caption>
                <thead><tr><th>{ "Network" }</th><th>{ "Class" }</th><th class="num">{ "Spread" }</th><th>{ "Reason" }</th></tr></thead>
                <tbody>
                    { for report.classification.iter().map(|c| html! {
                        <tr data-network={c.network.clone()} data-bound={c.label.clone()}>
                            <th scope="row">{ &c.network }</th><td><strong>{ &c.label }</strong></td>
                            <td class="num">{ format!("{:.1} %", 100.0 * c.spread) }</td><td class="small">{ &c.reason }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
            <form class="controls" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
                <label>{ "Network " }
                    <select id="whatif-network" onchange={on_network}>
                        { for networks.iter().map(|n| html! { <option value={n.clone()} selected={*n == shown}>{ n }</option> }) }
                    </select>
                </label>
                <label>{ format!("Custom latency: {:.1} µs ", *latency) }
                    <input id="whatif-latency" type="range" min="0.5" max="100" step="0.5" value={latency.to_string()} onchange={on_latency} />
                </label>
                <label>{ format!("Custom bandwidth: {:.0} Gb/s ", *bandwidth) }
                    <input id="whatif-bandwidth" type="range" min="1" max="400" step="1" value={bandwidth.to_string()} onchange={on_bandwidth} />
                </label>
            </form>
            <div class="bar-legend">
                <span class="key compute">{ "compute" }</span><span class="key wait">{ "wait" }</span>
                <span class="key latency">{ "latency" }</span><span class="key bandwidth">{ "bandwidth" }</span>
            </div>
            <table class="bars" id="whatif-bars" data-network={shown.clone()}>
                <caption>{ format!("Predicted time on {shown} and its variations") }</caption>
                <tbody>
                    { for configs.iter().map(|c| html! {
                        <tr data-config={c.configuration.label.clone()}>
                            <th scope="row">{ &c.configuration.label }<span class="small">{ format!(" {:?}", c.configuration.sweep) }</span></th>
                            <td class="num">{ seconds(c.predicted_s) }</td>
                            <td class="bar-cell">{ stacked_bar(&c.breakdown, max) }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
            if let Some(ranks) = base.and_then(|b| b.ranks.as_ref()) {
                <table class="bars" id="whatif-ranks">
                    <caption>{ format!("Per-rank time on {shown} (imbalance); click a rank to select it") }</caption>
                    <tbody>
                        { for ranks.iter().map(|r| {
                            let rank = r.rank;
                            let f = focus.clone();
                            let onclick = on_focus.reform(move |_: MouseEvent| Focus { rank: (f.rank != Some(rank)).then_some(rank), ..f.clone() });
                            let rmax = ranks.iter().map(|x| x.breakdown.total_s()).fold(0.0, f64::max);
                            html! {
                                <tr class={classes!((focus.rank == Some(rank)).then_some("selected"))} {onclick}>
                                    <th scope="row">{ format!("rank {rank}") }</th>
                                    <td class="num">{ seconds(r.end_s) }</td>
                                    <td class="bar-cell">{ stacked_bar(&r.breakdown, rmax) }</td>
                                </tr>
                            }
                        }) }
                    </tbody>
                </table>
            }
        </>
    };
    wrap(body)
}

fn wrap(body: Html) -> Html {
    html! {
        <section class="view whatif" id="view-whatif" aria-labelledby="whatif-title">
            <h2 id="whatif-title">{ "What-if" }</h2>
            { body }
        </section>
    }
}
