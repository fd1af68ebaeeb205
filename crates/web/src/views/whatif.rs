//! The what-if view: predicted time of every configuration as stacked bars (compute, wait,
//! latency, bandwidth), the classification of each network with its reason, per-rank imbalance,
//! and sliders for a custom network.

use super::{pending_note, seconds, use_parsed, AnalysisProps, Focus};
use crate::protocol::AnalysisRequest;
use std::rc::Rc;
use tracelogic_analysis::replay::{waiting_note, Breakdown, Sweep, WhatIf};
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// The four parts of a predicted time, with their CSS class.
fn parts(b: &Breakdown) -> [(&'static str, &'static str, f64); 5] {
    [
        ("compute", "compute", b.compute_s),
        ("wait", "wait", b.wait_s),
        ("latency", "latency", b.latency_term_s),
        ("bandwidth", "bandwidth", b.bandwidth_term_s),
        ("not replayed", "not-replayed", b.not_replayed_s),
    ]
}

/// A sweep in the CLI's words (its `sweep` column): `base`, `scaled` (bandwidth × s and latency
/// ÷ s), `bandwidth` (bandwidth × s only), `latency` (latency ÷ s only).
pub fn sweep_name(sweep: Sweep) -> &'static str {
    match sweep {
        Sweep::Base => "base",
        Sweep::Scaled => "scaled",
        Sweep::BandwidthOnly => "bandwidth",
        Sweep::LatencyOnly => "latency",
    }
}

/// What a sweep varies, for the row's tooltip.
fn sweep_meaning(sweep: Sweep) -> &'static str {
    match sweep {
        Sweep::Base => "the network as given",
        Sweep::Scaled => "bandwidth × s and latency ÷ s together",
        Sweep::BandwidthOnly => "bandwidth × s, latency held",
        Sweep::LatencyOnly => "latency ÷ s, bandwidth held",
    }
}

/// The CLI's line on the time the model prices at 0 (MPI_Init, MPI_Finalize, communicator
/// set-up) and the error without it; `None` when the reference has no such time.
pub fn outside_model_note(r: &tracelogic_analysis::replay::Validation) -> Option<String> {
    let e = r.relative_error_inside_model.filter(|_| r.outside_model_s > 0.0)?;
    Some(format!(
        "{} of the measured time is in MPI_Init, MPI_Finalize and communicator set-up, which the model prices at 0; error without it {:+.1} %.",
        seconds(r.outside_model_s),
        100.0 * e
    ))
}

/// Index of the "not replayed" part: the recorded time of communication the selection dropped
/// (docs/replay.md §1), shown only when a selection dropped some.
const NOT_REPLAYED: usize = 4;

/// Colour of each part in the chart (the same as the bars' CSS, written out so an exported
/// figure keeps them).
const PART_COLOURS: [&str; 5] = ["#4c78a8", "#e45756", "#f2a03d", "#54a24b", "#9d9d9d"];

/// The five parts in seconds, tab-separated, for the CSV export of a bar.
fn export_parts(b: &Breakdown) -> String {
    parts(b).iter().map(|p| p.2.to_string()).collect::<Vec<_>>().join("\t")
}

/// About `n` round tick values from 0 to at least `max` (1, 2 or 5 times a power of ten apart).
pub fn ticks(max: f64, n: usize) -> Vec<f64> {
    if !(max.is_finite() && max > 0.0) {
        return vec![0.0];
    }
    let raw = max / n.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * power);
    let count = (max / step).ceil() as usize;
    (0..=count).map(|i| i as f64 * step).collect()
}

/// A tick value in the unit of the axis' end (`0`, `50 ms`, `2.5 µs`), without trailing zeros.
pub fn tick_label(t: f64, end: f64) -> String {
    if t == 0.0 {
        return "0".into();
    }
    let (scale, unit) = if end >= 1.0 {
        (1.0, "s")
    } else if end >= 1e-3 {
        (1e3, "ms")
    } else {
        (1e6, "µs")
    };
    let v = format!("{:.3}", t * scale);
    format!("{} {unit}", v.trim_end_matches('0').trim_end_matches('.'))
}

/// Predicted time of every configuration of one network as stacked horizontal bars, with a
/// time axis and a legend.
fn chart(network: &str, configs: &[&tracelogic_analysis::replay::ConfigurationResult]) -> Html {
    let (w, row, left, top, bottom) = (760.0, 22.0, 170.0, 34.0, 40.0);
    let right = 40.0;
    let max = configs.iter().map(|c| c.breakdown.total_s()).fold(0.0, f64::max);
    let ticks = ticks(max, 5);
    let end = ticks.last().copied().unwrap_or(1.0).max(1e-30);
    let x = |v: f64| left + (w - left - right) * v / end;
    let h = top + row * configs.len() as f64 + bottom;
    let dropped = configs.iter().any(|c| c.breakdown.not_replayed_s > 0.0);
    html! {
        <svg class="whatif-chart" id="whatif-chart" viewBox={format!("0 0 {w} {h}")} role="img"
            aria-label={format!("Predicted time on {network} and its variations, split into compute, wait, latency and bandwidth")}>
            { for parts(&Breakdown::default()).iter().zip(PART_COLOURS).enumerate().filter(|(i, _)| dropped || *i != NOT_REPLAYED).map(|(i, (p, colour))| {
                let lx = left + i as f64 * 110.0;
                html! {
                    <g class="legend-key">
                        <rect x={lx.to_string()} y="8" width="12" height="12" fill={colour} />
                        <text class="tick" x={(lx + 16.0).to_string()} y="18">{ p.0 }</text>
                    </g>
                }
            }) }
            { for configs.iter().enumerate().map(|(i, c)| {
                let y = top + row * i as f64;
                let mut at = 0.0;
                html! {
                    <g class="config">
                        <text class="tick" x={(left - 6.0).to_string()} y={format!("{:.1}", y + row * 0.65)} text-anchor="end">{ &c.configuration.label }</text>
                        { for parts(&c.breakdown).iter().zip(PART_COLOURS).enumerate().filter(|&(i, (p, _))| i != NOT_REPLAYED || p.2 > 0.0).map(|(_, (p, colour))| {
                            let x0 = x(at);
                            at += p.2;
                            html! {
                                <rect class={classes!("part", p.1)} x={format!("{x0:.2}")} y={format!("{:.1}", y + 3.0)}
                                    width={format!("{:.2}", (x(at) - x0).max(0.0))} height={(row - 6.0).to_string()} fill={colour}>
                                    <title>{ format!("{}: {} {}", c.configuration.label, p.0, seconds(p.2)) }</title>
                                </rect>
                            }
                        }) }
                    </g>
                }
            }) }
            <line class="axis" x1={left.to_string()} x2={(w - right).to_string()} y1={(h - bottom).to_string()} y2={(h - bottom).to_string()} />
            { for ticks.iter().map(|&t| html! {
                <>
                    <line class="axis" x1={format!("{:.1}", x(t))} x2={format!("{:.1}", x(t))} y1={(h - bottom).to_string()} y2={(h - bottom + 4.0).to_string()} />
                    <text class="tick" x={format!("{:.1}", x(t))} y={(h - bottom + 16.0).to_string()} text-anchor="middle">{ tick_label(t, end) }</text>
                </>
            }) }
            <text class="tick axis-label" x={format!("{:.1}", (left + w - right) / 2.0)} y={(h - 6.0).to_string()} text-anchor="middle">{ "predicted time" }</text>
        </svg>
    }
}

fn stacked_bar(b: &Breakdown, max: f64) -> Html {
    html! {
        <div class="bar" role="img" aria-label={format!("compute {}, wait {}, latency {}, bandwidth {}{}",
            seconds(b.compute_s), seconds(b.wait_s), seconds(b.latency_term_s), seconds(b.bandwidth_term_s),
            if b.not_replayed_s > 0.0 { format!(", not replayed {}", seconds(b.not_replayed_s)) } else { String::new() })}>
            { for parts(b).iter().enumerate().filter(|&(i, p)| i != NOT_REPLAYED || p.2 > 0.0).map(|(_, &(name, class, v))| html! {
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
    // While the thumb is dragged the value is kept (a redraw would put the old value back:
    // yew refreshes a controlled input's value); the replay is asked for on release.
    let dragged = |state: UseStateHandle<f64>| {
        Callback::from(move |e: InputEvent| state.set(e.target_unchecked_into::<HtmlInputElement>().value_as_number()))
    };
    let on_latency = slider(latency.clone(), bandwidth.clone(), true);
    let on_bandwidth = slider(bandwidth.clone(), latency.clone(), false);
    let base = configs.iter().find(|c| c.configuration.scale == 1.0);
    let focus = props.focus.clone();
    let on_focus = props.on_focus.clone();
    let body = html! {
        <>
            <p class="headline">{ format!("Measured {} · {}, {} replayed", seconds(report.measured_s),
                crate::text::counted(report.calls, "call", "calls"), crate::text::counted(report.messages, "message", "messages")) }</p>
            if let Some(v) = &report.reference {
                <p id="whatif-reference" class="small">
                    { format!("On {} (taken as the recording network) the replay predicts {}", v.network, seconds(v.predicted_s)) }
                    { v.relative_error.map(|e| format!(" ({:+.1} % of the measured time)", 100.0 * e)).unwrap_or_default() }
                    { waiting_note(&report).map(|n| format!(": {n}.")).unwrap_or_else(|| ".".into()) }
                </p>
                if let Some(note) = outside_model_note(v) {
                    <p id="whatif-outside-model" class="small">{ note }</p>
                }
            }
            { pending_note(&props.state) }
            <table class="classification" id="whatif-classification">
                <caption>{ "Classification per network" }</caption>
                <thead><tr><th>{ "Network" }</th><th>{ "Class" }</th><th class="num">{ "Spread" }</th><th>{ "Reason" }</th></tr></thead>
                <tbody>
                    { for report.classification.iter().map(|c| html! {
                        <tr data-network={c.network.clone()} data-bound={c.label.clone()}>
                            <th scope="row">{ &c.network }</th><td class="class-cell"><strong>{ &c.label }</strong></td>
                            <td class="num">{ format!("{:.1} %", 100.0 * c.spread) }</td><td class="small">{ &c.reason }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
            <p class="small note" id="whatif-classes-explained">
                { "Comp.: a faster or slower network barely changes the predicted time. Latency, BW: the time follows that parameter of the network. Imb. (load imbalance): ranks spend at least a fifth of the predicted time waiting for a partner that is still computing, and the network barely matters; this holds even when all ranks end together, because the waiting happens inside the run, at its messages and collectives. A class ending in -s is sensitive rather than bound: the time moves with the network, but that parameter is not most of it. The classes follow “Trace-driven, MPI-based classification of performance limiting factors”, Table 1." }
            </p>
            <form class="controls" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
                <label>{ "Network " }
                    <select id="whatif-network" onchange={on_network}>
                        { for networks.iter().map(|n| html! { <option value={n.clone()} selected={*n == shown}>{ n }</option> }) }
                    </select>
                </label>
                <label>{ format!("Custom latency: {:.1} µs ", *latency) }
                    <input id="whatif-latency" type="range" min="0.5" max="100" step="0.5" value={latency.to_string()} oninput={dragged(latency.clone())} onchange={on_latency} />
                </label>
                <label>{ format!("Custom bandwidth: {:.0} Gb/s ", *bandwidth) }
                    <input id="whatif-bandwidth" type="range" min="1" max="400" step="1" value={bandwidth.to_string()} oninput={dragged(bandwidth.clone())} onchange={on_bandwidth} />
                </label>
            </form>
            <div class="bar-legend">
                <span class="key compute">{ "compute" }</span><span class="key wait">{ "wait" }</span>
                <span class="key latency">{ "latency" }</span><span class="key bandwidth">{ "bandwidth" }</span>
                if configs.iter().any(|c| c.breakdown.not_replayed_s > 0.0) {
                    <span class="key not-replayed" title="recorded time of communication the selection dropped; the same under every network">{ "not replayed" }</span>
                }
            </div>
            { chart(&shown, &configs) }
            <table class="bars" id="whatif-bars" data-network={shown.clone()}>
                <caption>{ format!("Predicted time on {shown} and its variations") }</caption>
                <thead><tr><th scope="col">{ "Configuration" }</th><th scope="col" class="num">{ "Predicted" }</th>
                    <th scope="col" data-export={"compute (s)\twait (s)\tlatency (s)\tbandwidth (s)\tnot replayed (s)"}>{ "Breakdown" }</th></tr></thead>
                <tbody>
                    { for configs.iter().map(|c| html! {
                        <tr data-config={c.configuration.label.clone()}>
                            <th scope="row" title={sweep_meaning(c.configuration.sweep)}>{ &c.configuration.label }<span class="small sweep">{ format!(" {}", sweep_name(c.configuration.sweep)) }</span></th>
                            <td class="num" data-export={c.predicted_s.to_string()}>{ seconds(c.predicted_s) }</td>
                            <td class="bar-cell" data-export={export_parts(&c.breakdown)}>{ stacked_bar(&c.breakdown, max) }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
            if let Some(ranks) = base.and_then(|b| b.ranks.as_ref()) {
                <table class="bars" id="whatif-ranks">
                    <caption>{ format!("Per-rank time on {shown} (imbalance); click a rank to select it") }</caption>
                    <thead><tr><th scope="col">{ "Rank" }</th><th scope="col" class="num">{ "End" }</th>
                        <th scope="col" data-export={"compute (s)\twait (s)\tlatency (s)\tbandwidth (s)\tnot replayed (s)"}>{ "Breakdown" }</th></tr></thead>
                    <tbody>
                        { for ranks.iter().map(|r| {
                            let rank = r.rank;
                            let f = focus.clone();
                            let onclick = on_focus.reform(move |_: MouseEvent| Focus { rank: (f.rank != Some(rank)).then_some(rank), ..f.clone() });
                            let rmax = ranks.iter().map(|x| x.breakdown.total_s()).fold(0.0, f64::max);
                            html! {
                                <tr class={classes!((focus.rank == Some(rank)).then_some("selected"))} {onclick}>
                                    <th scope="row">{ super::row_button(focus.rank == Some(rank), html! { format!("rank {rank}") }) }</th>
                                    <td class="num" data-export={r.end_s.to_string()}>{ seconds(r.end_s) }</td>
                                    <td class="bar-cell" data-export={export_parts(&r.breakdown)}>{ stacked_bar(&r.breakdown, rmax) }</td>
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_and_the_init_finalize_line_read_as_the_cli() {
        let session = crate::session::Session::new(crate::session::tests::sample_trace("npb-lu.S.8"));
        let request = crate::protocol::AnalysisRequest::WhatIf { custom: None };
        let report: WhatIf = crate::session::tests::answer(session.analyse(&request));
        let names: std::collections::BTreeSet<&str> = report
            .configurations
            .iter()
            .map(|c| sweep_name(c.configuration.sweep))
            .collect();
        assert!(
            names.is_subset(&["base", "scaled", "bandwidth", "latency"].into()),
            "{names:?}"
        );
        assert!(names.contains("base"));
        let v = report.reference.as_ref().expect("LU has a recording network");
        let note = outside_model_note(v).expect("LU spends time in MPI_Init/Finalize");
        assert!(
            note.contains("MPI_Init, MPI_Finalize and communicator set-up"),
            "{note}"
        );
        let e = 100.0 * v.relative_error_inside_model.unwrap();
        assert!(note.ends_with(&format!("error without it {e:+.1} %.")), "{note}");
        let mut none = v.clone();
        none.outside_model_s = 0.0;
        assert_eq!(outside_model_note(&none), None);
    }

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(ticks(0.0, 5), vec![0.0]);
        let t = ticks(0.0123, 5);
        assert_eq!(t.first(), Some(&0.0));
        assert!(*t.last().unwrap() >= 0.0123);
        assert!(t.len() <= 8);
        let step = t[1] - t[0];
        assert!((step - 0.005).abs() < 1e-12, "{t:?}");
        assert_eq!(ticks(10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
    }

    #[test]
    fn tick_labels_use_the_unit_of_the_axis_end() {
        assert_eq!(tick_label(0.0, 0.25), "0");
        assert_eq!(tick_label(0.05, 0.25), "50 ms");
        assert_eq!(tick_label(0.0025, 0.01), "2.5 ms");
        assert_eq!(tick_label(2e-6, 1e-5), "2 µs");
        assert_eq!(tick_label(1.5, 2.0), "1.5 s");
    }
}
