//! The compare view: load a second trace (drop zone, file picker or a bundled sample) and show
//! θ per property, ε (exact or bound), the verdict at the threshold, and a (θ, ε) scatter with
//! the similar region.

use super::{pending_note, use_parsed, AnalysisState};
use crate::analyses::CompareResult;
use crate::input::{self, Source};
use crate::protocol::AnalysisRequest;
use crate::samples::{self, Sample, SAMPLES};
use web_sys::{DragEvent, HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// Properties of [`CompareView`].
#[derive(Properties, PartialEq)]
pub struct CompareProps {
    /// The comparison's state.
    pub state: AnalysisState,
    /// Unused by this view (comparisons start from a second trace), kept for a uniform call.
    pub on_request: Callback<AnalysisRequest>,
    /// Compare with a bundled sample.
    pub on_sample: Callback<&'static Sample>,
    /// Compare with dropped or picked files.
    pub on_sources: Callback<Vec<Source>>,
    /// Label of the loaded trace.
    pub label: String,
}

fn scatter(theta: f64, epsilon: f64, upper: f64, threshold: f64) -> Html {
    let (s, m) = (260.0, 36.0);
    let x = |v: f64| m + (s - 1.5 * m) * v.clamp(0.0, 1.0);
    let y = |v: f64| s - m - (s - 1.5 * m) * v.clamp(0.0, 1.0);
    html! {
        <svg class="scatter" id="compare-scatter" viewBox={format!("0 0 {s} {s}")} role="img"
            aria-label={format!("θ = {theta:.3}, ε = {epsilon:.3}; similar when both reach {threshold}")}>
            <rect class="similar-region" x={format!("{:.1}", x(threshold))} y={format!("{:.1}", y(1.0))}
                width={format!("{:.1}", x(1.0) - x(threshold))} height={format!("{:.1}", y(threshold) - y(1.0))} />
            <line class="axis" x1={m.to_string()} y1={format!("{:.1}", y(0.0))} x2={format!("{:.1}", x(1.0))} y2={format!("{:.1}", y(0.0))} />
            <line class="axis" x1={m.to_string()} y1={format!("{:.1}", y(1.0))} x2={m.to_string()} y2={format!("{:.1}", y(0.0))} />
            <text class="tick" x={format!("{:.1}", x(0.5))} y={(s - 6.0).to_string()} text-anchor="middle">{ "θ (communication correlation)" }</text>
            <text class="tick" x="12" y={format!("{:.1}", y(0.5))} transform={format!("rotate(-90 12 {:.1})", y(0.5))} text-anchor="middle">{ "ε (common edges)" }</text>
            <text class="tick" x={m.to_string()} y={format!("{:.1}", y(0.0) + 14.0)} text-anchor="middle">{ "0" }</text>
            <text class="tick" x={format!("{:.1}", x(1.0))} y={format!("{:.1}", y(0.0) + 14.0)} text-anchor="middle">{ "1" }</text>
            <text class="tick" x={(m - 4.0).to_string()} y={format!("{:.1}", y(1.0) + 4.0)} text-anchor="end">{ "1" }</text>
            if upper > epsilon {
                <line class="bound" x1={format!("{:.1}", x(theta))} x2={format!("{:.1}", x(theta))} y1={format!("{:.1}", y(epsilon))} y2={format!("{:.1}", y(upper))} />
            }
            <circle class="pair" cx={format!("{:.1}", x(theta))} cy={format!("{:.1}", y(epsilon))} r="5" />
        </svg>
    }
}

/// The compare view.
#[function_component(CompareView)]
pub fn compare_view(props: &CompareProps) -> Html {
    let on_sample = {
        let cb = props.on_sample.clone();
        Callback::from(move |e: Event| {
            let select: HtmlSelectElement = e.target_unchecked_into();
            if let Some(s) = samples::find(&select.value()) {
                cb.emit(s);
            }
        })
    };
    let on_pick = {
        let cb = props.on_sources.clone();
        Callback::from(move |e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            let sources = input.files().map(|f| input::sources_from_list(&f)).unwrap_or_default();
            input.set_value("");
            cb.emit(sources);
        })
    };
    let on_drop = {
        let cb = props.on_sources.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            if let Some(data) = e.data_transfer() {
                cb.emit(input::sources_from_drop(&data));
            }
        })
    };
    let on_drag_over = Callback::from(|e: DragEvent| e.prevent_default());
    let state = &props.state;
    let parsed = use_parsed::<CompareResult>(state);
    let result = match (&state.result, state.pending) {
        (None, true) => {
            html! { <p class="waiting" role="status">{ format!("Reading and comparing {}…", state.loading.clone().unwrap_or_default()) }</p> }
        }
        (None, false) => Html::default(),
        _ => match parsed {
            Err(page) => page,
            Ok(r) => {
                let c = &r.comparison;
                let verdict = if c.similar { "similar" } else { "not similar" };
                html! {
                    <>
                        { pending_note(state) }
                        <p class="headline" id="compare-verdict" data-similar={c.similar.to_string()}>
                            { format!("{} vs {}: ", props.label, r.other) }<strong>{ verdict }</strong>
                            { format!(" at threshold {}{}", c.threshold, if c.classification_certain { "" } else { " (uncertain: ε is only bounded)" }) }
                        </p>
                        <div class="compare-panels">
                            <table class="properties" id="compare-properties">
                                <caption>{ "Similarity" }</caption>
                                <tbody>
                                    { for c.properties.iter().map(|p| html! {
                                        <tr data-property={p.property.clone()} data-theta={p.theta.to_string()}>
                                            <th scope="row">{ format!("θ {}", p.property) }</th><td class="num">{ format!("{:.3}", p.theta) }</td>
                                            <td class="small">{ p.note.clone().unwrap_or_default() }</td>
                                        </tr>
                                    }) }
                                    <tr data-property="theta" data-theta={c.theta.to_string()}><th scope="row">{ "θ (combined)" }</th><td class="num"><strong>{ format!("{:.3}", c.theta) }</strong></td><td></td></tr>
                                    <tr id="compare-epsilon" data-epsilon={c.epsilon.to_string()} data-exact={c.epsilon_exact.to_string()}>
                                        <th scope="row">{ "ε" }</th>
                                        <td class="num"><strong>{ format!("{:.3}", c.epsilon) }</strong></td>
                                        <td class="small">{ if c.epsilon_exact { format!("exact ({} common edges)", c.graph.common) }
                                            else { format!("lower bound; at most {:.3}", c.epsilon_upper) } }</td>
                                    </tr>
                                </tbody>
                            </table>
                            { scatter(c.theta, c.epsilon, c.epsilon_upper, c.threshold) }
                        </div>
                    </>
                }
            }
        },
    };
    html! {
        <section class="view compare" id="view-compare" aria-labelledby="compare-title">
            <h2 id="compare-title">{ "Compare" }</h2>
            <div class="dropzone compare-drop" id="compare-dropzone" ondrop={on_drop} ondragover={on_drag_over.clone()} ondragenter={on_drag_over}>
                <p class="hint">{ format!("Compare {} with a second trace: drop it here, or", props.label) }</p>
                <div class="pickers">
                    <label class="button">{ "Choose files…" }
                        <input id="compare-pick" class="visually-hidden" type="file" multiple=true onchange={on_pick} />
                    </label>
                    <label class="sample-menu"><span>{ "a sample:" }</span>
                        <select id="compare-sample" onchange={on_sample}>
                            <option value="" selected=true>{ "choose…" }</option>
                            { for SAMPLES.iter().map(|s| html! { <option value={s.id}>{ s.title }</option> }) }
                        </select>
                    </label>
                </div>
            </div>
            { result }
        </section>
    }
}
