//! The compare view: add runs to compare with the loaded trace (drop zone, file picker or a
//! bundled sample) and show, for the selected pair, θ per property with the two runs' observed
//! and ranked property vectors side by side (as in “An Approach for Matching Communication Patterns in Parallel Applications”, Figures 12–13), ε (exact or bound) with
//! both communication graphs drawn and the maximum common subgraph highlighted, the verdict at
//! the threshold and the (θ, ε) scatter with the similar region; with three or more runs, the
//! similarity matrix (click a cell to select its pair, remove runs from the set). Several folders
//! dropped at once are added as several runs, one after the other.
//!
//! The runs compared with a trace survive a reload: the page keeps their properties
//! ([`crate::persist::save_compared`], decided by [`keep_after`]) and, when the same trace is
//! open again, recompares from them ([`restore_request`]).

use super::{use_parsed, AnalysisState};
use crate::input::{self, Source};
use crate::protocol::{AnalysisRequest, Answer, CompareResult, LoadedTrace};
use crate::samples::{self, Sample, SAMPLES};
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;
use tracelogic_engine::compare::{Comparison, PropertyComparison, RunProperties, SimilarityMatrix};
use web_sys::{DragEvent, HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// Properties of [`CompareView`].
#[derive(Properties, PartialEq)]
pub struct CompareProps {
    /// The comparison's state.
    pub state: AnalysisState,
    /// Recompare from the runs' properties (a run removed from the set).
    pub on_request: Callback<AnalysisRequest>,
    /// Compare with a bundled sample.
    pub on_sample: Callback<&'static Sample>,
    /// Compare with dropped or picked files.
    pub on_sources: Callback<Vec<Source>>,
    /// Label of the loaded trace.
    pub label: String,
}

/// The runs of the comparison shown in `state` (empty without one); `None` when the state holds
/// an error, so the caller keeps the runs it knew.
pub fn compared_runs(state: Option<&AnalysisState>) -> Option<Vec<RunProperties>> {
    let Some(result) = state.and_then(|s| s.result.as_deref()) else {
        return Some(Vec::new());
    };
    match result.as_ref().ok()? {
        Answer::Compare(r) => Some(r.others.clone()),
        _ => None,
    }
}

/// The request that joins the answer of a comparison with a run read from files to the runs
/// compared before (`earlier`): the runs of both, recompared from their properties, with the
/// reason when the new run was refused or could not be read. `None` when there is nothing to
/// join (no earlier run, or an answer that cannot be read).
pub fn merge_request(earlier: Vec<RunProperties>, answer: &Result<Answer, String>) -> Option<AnalysisRequest> {
    if earlier.is_empty() {
        return None;
    }
    let (added, refused) = match answer {
        Ok(Answer::Compare(r)) => (r.others.clone(), r.refused.clone()),
        Ok(_) => return None,
        Err(e) => (Vec::new(), Some(e.clone())),
    };
    let mut runs = earlier;
    runs.extend(added);
    Some(AnalysisRequest::CompareRuns { runs, refused })
}

/// Which trace compared runs belong to: its label, input size, ranks and calls. Runs kept for
/// one trace come back only when a trace with the same key is open again.
pub fn owner_key(trace: &LoadedTrace) -> String {
    format!(
        "{} · {} bytes · {} ranks · {} calls",
        trace.label, trace.bytes, trace.summary.ranks, trace.summary.calls
    )
}

/// What the page does with its stored compared runs once a comparison answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Keep {
    /// Storage already holds these runs (or the answer changes nothing).
    Nothing,
    /// Store these runs (JSON of their properties) for the trace on screen.
    Save(String),
    /// The comparison of the trace on screen was emptied: drop what is stored for it.
    Forget,
}

/// What to store after the compare view's `state` changed, for the trace `owner` on screen,
/// given what storage holds (`kept`: owner and JSON of the runs). Only a settled answer counts:
/// one still waiting, an error or no comparison at all keeps storage as it is.
pub fn keep_after(state: Option<&AnalysisState>, owner: &str, kept: Option<(&str, &str)>) -> Keep {
    let Some(state) = state.filter(|s| !s.pending) else {
        return Keep::Nothing;
    };
    if !matches!(state.result.as_deref(), Some(Ok(_))) {
        return Keep::Nothing;
    }
    let Some(runs) = compared_runs(Some(state)) else {
        return Keep::Nothing;
    };
    if runs.is_empty() {
        return match kept {
            Some((o, _)) if o == owner => Keep::Forget,
            _ => Keep::Nothing,
        };
    }
    let Ok(json) = serde_json::to_string(&runs) else {
        return Keep::Nothing;
    };
    if kept == Some((owner, json.as_str())) {
        Keep::Nothing
    } else {
        Keep::Save(json)
    }
}

/// The request that brings back the runs stored for `kept_owner` (`runs`: JSON of their
/// properties) when the trace `owner` is on screen; `None` for another trace, no runs, or
/// runs that do not read back.
pub fn restore_request(owner: &str, kept_owner: &str, runs: &str) -> Option<AnalysisRequest> {
    if owner != kept_owner {
        return None;
    }
    let runs: Vec<RunProperties> = serde_json::from_str(runs).ok()?;
    (!runs.is_empty()).then_some(AnalysisRequest::CompareRuns { runs, refused: None })
}

/// What the selected pair's verdict rests on, under the θ–ε plot: θ and ε, ε alone, or — when
/// neither run sends a point-to-point message — the runs' sequences of collectives; and, when
/// both runs have one, the operation mix a similar verdict also needs.
pub fn basis_text(c: &Comparison, threshold: f64) -> String {
    let basis = pacpm_basis_text(c, threshold);
    match c.operation_mix_similarity {
        Some(m) => format!(
            "{basis}; the runs' sequences of operations (consecutive pairs) agree {m:.3}, and similar needs that to reach {threshold} too{}",
            if c.operation_mix_differs { ": it does not, so not similar" } else { "" }
        ),
        None => basis,
    }
}

fn pacpm_basis_text(c: &Comparison, threshold: f64) -> String {
    if c.theta.is_finite() {
        format!(
            "θ = {:.3}, ε = {:.3}; similar when both reach {threshold}",
            c.theta, c.epsilon
        )
    } else if let Some(m) = c.collective_mix_similarity {
        format!(
            "θ undefined, ε = {:.3}: neither run sends a point-to-point message, so the verdict rests on how they \
             sequence their collectives (agreement {m:.3}; similar when it reaches {threshold})",
            c.epsilon
        )
    } else {
        format!(
            "θ undefined, ε = {:.3}: the verdict rests on ε alone (similar only when ε = 1, the same graph up to renumbering)",
            c.epsilon
        )
    }
}

/// How the ranks were paired for θ, in a line, as `tracelogic compare` says it
/// ([`tracelogic_engine::compare::pairing_text`]).
pub fn pairing_text(c: &Comparison) -> String {
    format!("ranks paired {}", tracelogic_engine::compare::pairing_text(c))
}

fn fmt(v: f64) -> String {
    format!("{v:.1}")
}

/// A tick value in at most about five characters: `35.6k`, `1.2M`, `0.143`.
pub fn compact(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 10.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The (θ, ε) plane: the similar region (both at least `threshold`), every pair as a point, the
/// selected one larger with the interval its ε may still take when only bounded.
fn scatter(pairs: &[Comparison], selected: usize, threshold: f64) -> Html {
    let (s, m) = (260.0, 36.0);
    // θ is a correlation: the axis extends to −1 when a pair (or the threshold) is negative.
    let lo = if pairs.iter().any(|c| c.theta < 0.0) || threshold < 0.0 {
        -1.0
    } else {
        0.0
    };
    let x = |v: f64| m + (s - 1.5 * m) * (v.clamp(lo, 1.0) - lo) / (1.0 - lo);
    let y = |v: f64| s - m - (s - 1.5 * m) * v.clamp(0.0, 1.0);
    let label = pairs
        .get(selected)
        .map(|c| basis_text(c, threshold))
        .unwrap_or_default();
    // A pair whose θ is undefined (no property orders the ranks) has no place on the θ axis: it
    // is drawn hollow on the ε axis, where its verdict (ε alone) is read.
    let points = pairs.iter().enumerate().map(|(i, c)| {
        let defined = c.theta.is_finite();
        let class = classes!(
            "pair",
            (i == selected).then_some("selected"),
            (!defined).then_some("no-theta")
        );
        let r = if i == selected { "6" } else { "4" };
        let cx = if defined { x(c.theta) } else { m };
        let title = if defined {
            format!("θ = {:.3}, ε = {:.3}", c.theta, c.epsilon)
        } else {
            format!("θ undefined (no property orders the ranks), ε = {:.3}", c.epsilon)
        };
        html! {
            <g>
                if i == selected && c.epsilon_upper > c.epsilon {
                    <line class="bound" x1={fmt(cx)} x2={fmt(cx)} y1={fmt(y(c.epsilon))} y2={fmt(y(c.epsilon_upper))} />
                }
                <circle {class} data-first={c.first.to_string()} data-second={c.second.to_string()}
                    cx={fmt(cx)} cy={fmt(y(c.epsilon))} {r}><title>{ title }</title></circle>
            </g>
        }
    });
    html! {
        <svg class="scatter" id="compare-scatter" viewBox={format!("0 0 {s} {s}")} role="img" aria-label={label}>
            <rect class="similar-region" x={fmt(x(threshold))} y={fmt(y(1.0))}
                width={fmt(x(1.0) - x(threshold))} height={fmt(y(threshold) - y(1.0))} />
            <line class="axis" x1={m.to_string()} y1={fmt(y(0.0))} x2={fmt(x(1.0))} y2={fmt(y(0.0))} />
            <line class="axis" x1={m.to_string()} y1={fmt(y(1.0))} x2={m.to_string()} y2={fmt(y(0.0))} />
            <text class="tick axis-title" x={fmt(s / 2.0)} y={(s - 6.0).to_string()} text-anchor="middle">{ "θ (correlation)" }</text>
            <text class="tick" x="12" y={fmt(y(0.5))} transform={format!("rotate(-90 12 {})", fmt(y(0.5)))} text-anchor="middle">{ "ε (common edges)" }</text>
            <text class="tick" x={m.to_string()} y={fmt(y(0.0) + 14.0)} text-anchor="middle">{ format!("{lo}") }</text>
            if lo < 0.0 {
                <line class="axis zero" x1={fmt(x(0.0))} y1={fmt(y(0.0))} x2={fmt(x(0.0))} y2={fmt(y(0.0) + 4.0)} />
                <text class="tick" x={fmt(x(0.0))} y={fmt(y(0.0) + 14.0)} text-anchor="middle">{ "0" }</text>
            }
            <text class="tick" x={fmt(x(1.0))} y={fmt(y(0.0) + 14.0)} text-anchor="middle">{ "1" }</text>
            <text class="tick" x={(m - 4.0).to_string()} y={fmt(y(1.0) + 4.0)} text-anchor="end">{ "1" }</text>
            <text class="tick" x={fmt(x(threshold))} y={fmt(y(0.0) + 14.0)} text-anchor="middle">{ format!("{threshold}") }</text>
            { for points }
        </svg>
    }
}

/// Most ranks drawn as bars (more become lines).
pub const MAX_BARS: usize = 128;

/// One property of the pair: observed values (left, lines) and ranked values (right, bars side
/// by side), one series per run, with axes and a legend (as in “An Approach for Matching Communication Patterns in Parallel Applications”, Figures 12–13).
fn property_plots(p: &PropertyComparison, names: (&str, &str)) -> Html {
    let n = p.ranked_a.len();
    if n == 0 {
        return Html::default();
    }
    let (w, h, m) = (420.0, 190.0, 40.0);
    let plot_w = w - m - 12.0;
    let x_at = |i: usize| m + plot_w * (i as f64 + 0.5) / n as f64;
    let y_of = |v: f64, top: f64| h - m + 8.0 - (h - m - 4.0) * (v / top).clamp(0.0, 1.0);
    let axes = |top: String, bottom: String, title: &str| {
        html! {
            <>
                <line class="axis" x1={m.to_string()} y1={fmt(h - m + 8.0)} x2={fmt(w - 12.0)} y2={fmt(h - m + 8.0)} />
                <line class="axis" x1={m.to_string()} y1="12" x2={m.to_string()} y2={fmt(h - m + 8.0)} />
                <text class="tick" x={(m - 4.0).to_string()} y="16" text-anchor="end">{ top }</text>
                <text class="tick" x={(m - 4.0).to_string()} y={fmt(h - m + 8.0)} text-anchor="end">{ bottom }</text>
                <text class="tick" x={fmt(x_at(0))} y={fmt(h - m + 22.0)} text-anchor="middle">{ "0" }</text>
                if n > 1 {
                    <text class="tick" x={fmt(x_at(n - 1))} y={fmt(h - m + 22.0)} text-anchor="middle">{ n - 1 }</text>
                }
                <text class="tick" x={fmt(m + plot_w / 2.0)} y={fmt(h - 4.0)} text-anchor="middle">{ title.to_owned() }</text>
            </>
        }
    };
    // Ranked: rank n (smallest value) is the shortest bar, rank 1 the tallest, so both plots
    // read the same way up.
    let top = n as f64;
    let height = |r: f64| top + 1.0 - r;
    let slot = plot_w / n as f64;
    let ranked_series = |values: &[f64], class: &'static str, offset: f64| {
        if n <= MAX_BARS {
            let bars = values.iter().enumerate().map(|(i, &r)| {
                let y = y_of(height(r), top);
                html! {
                    <rect x={fmt(m + slot * i as f64 + slot * offset)} y={fmt(y)} width={fmt(slot * 0.42)}
                        height={fmt(h - m + 8.0 - y)} data-rank={i.to_string()} data-value={r.to_string()}>
                        <title>{ format!("rank {i}: ranked {r}") }</title>
                    </rect>
                }
            });
            html! { <g class={classes!("series", class)} data-series={class}>{ for bars }</g> }
        } else {
            let points: Vec<String> = values
                .iter()
                .enumerate()
                .map(|(i, &r)| format!("{},{}", fmt(x_at(i)), fmt(y_of(height(r), top))))
                .collect();
            html! { <g class={classes!("series", class)} data-series={class}><polyline points={points.join(" ")} /></g> }
        }
    };
    let finite_max = p
        .observed_a
        .iter()
        .chain(&p.observed_b)
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let obs_top = if finite_max > 0.0 { finite_max } else { 1.0 };
    let observed_series = |values: &[Option<f64>], class: &'static str| {
        let points: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{},{}", fmt(x_at(i)), fmt(y_of(v.unwrap_or(obs_top), obs_top))))
            .collect();
        let marks = values.iter().enumerate().map(|(i, v)| {
            let (cx, cy) = (x_at(i), y_of(v.unwrap_or(obs_top), obs_top));
            let tip = match v {
                Some(v) => format!("rank {i}: {v:.4} {}", p.unit),
                None => format!("rank {i}: sends without measurable work (infinite rate)"),
            };
            html! { <circle cx={fmt(cx)} cy={fmt(cy)} r="2.5" data-rank={i.to_string()}><title>{ tip }</title></circle> }
        });
        html! {
            <g class={classes!("series", class)} data-series={class}>
                <polyline points={points.join(" ")} />
                if n <= MAX_BARS { { for marks } }
            </g>
        }
    };
    let legend = html! {
        <figcaption>
            <span class="key series-a">{ format!("■ {}", names.0) }</span>
            <span class="key series-b">{ format!(" ■ {}", names.1) }</span>
            { format!(" · θ {} = {:.3}", p.property, p.theta) }
            if let Some(note) = &p.note { <span class="small">{ format!(" ({note})") }</span> }
        </figcaption>
    };
    html! {
        <figure class="property-plots" id={format!("compare-plots-{}", p.property)} data-property={p.property.clone()}>
            <svg class="property-plot observed" id={format!("compare-observed-{}", p.property)} viewBox={format!("0 0 {w} {h}")}
                role="img" aria-label={format!("Observed {} per rank of both runs", p.property)}>
                { axes(compact(obs_top), "0".to_owned(), &format!("rank · observed {} ({})", p.property, p.unit)) }
                { observed_series(&p.observed_a, "a") }
                { observed_series(&p.observed_b, "b") }
            </svg>
            <svg class="property-plot ranked" id={format!("compare-ranked-{}", p.property)} viewBox={format!("0 0 {w} {h}")}
                role="img" aria-label={format!("Ranked {} per rank of both runs", p.property)}>
                { axes("1".to_owned(), String::new(), &format!("rank · ranked {} (tallest = 1, the largest; ties averaged)", p.property)) }
                { ranked_series(&p.ranked_a, "a", 0.08) }
                { ranked_series(&p.ranked_b, "b", 0.5) }
            </svg>
            { legend }
        </figure>
    }
}

/// An edge from `(x1, y1)` to `(x2, y2)`; long ones bow sideways so they do not hide short ones.
fn edge(class: Classes, (x1, y1): (f64, f64), (x2, y2): (f64, f64), shortest: f64, data: String) -> Html {
    let len = ((x2 - x1).powi(2) + (y2 - y1).powi(2)).sqrt();
    if len > 1.5 * shortest && len > 0.0 {
        let (mx, my) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
        let (nx, ny) = (-(y2 - y1) / len, (x2 - x1) / len);
        let bow = 0.18 * len;
        let d = format!(
            "M {} {} Q {} {} {} {}",
            fmt(x1),
            fmt(y1),
            fmt(mx + nx * bow),
            fmt(my + ny * bow),
            fmt(x2),
            fmt(y2)
        );
        html! { <path {class} {d} data-edge={data} /> }
    } else {
        html! { <line {class} x1={fmt(x1)} y1={fmt(y1)} x2={fmt(x2)} y2={fmt(y2)} data-edge={data} /> }
    }
}

/// Both communication graphs of a pair, the second drawn through the correspondence of the
/// common-subgraph search (its rank `mapping[r]` where the first has rank `r`), so the common
/// subgraph sits at the same place in both: common edges, edges only in the first run and edges
/// only in the second in three styles.
fn graphs(c: &Comparison, layout: &[(f64, f64)], names: (&str, &str)) -> Html {
    let g = &c.graph;
    let n = c.ranks as usize;
    if layout.len() != n || g.mapping.len() != n {
        return html! { <p class="note">{ format!("{n} ranks: too many to draw the graphs.") }</p> };
    }
    let mut inverse = vec![u32::MAX; n];
    for (a, &b) in g.mapping.iter().enumerate() {
        if (b as usize) < n {
            inverse[b as usize] = a as u32;
        }
    }
    let common: HashSet<[u32; 2]> = g.common_edges.iter().copied().collect();
    let (size, margin) = (320.0, 20.0);
    let at = |r: u32| {
        let (x, y) = layout.get(r as usize).copied().unwrap_or((0.5, 0.5));
        (margin + x * (size - 2.0 * margin), margin + y * (size - 2.0 * margin))
    };
    let height = layout.iter().map(|p| p.1).fold(0.0, f64::max) * (size - 2.0 * margin) + 2.0 * margin;
    let dist = |(a, b): ((f64, f64), (f64, f64))| ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt();
    // Edges of each run in the first run's numbering (the second's through the correspondence).
    let a_edges: Vec<([u32; 2], [u32; 2])> = g.edges_a.iter().map(|&e| (e, e)).collect();
    let b_edges: Vec<([u32; 2], [u32; 2])> = g
        .edges_b
        .iter()
        .filter_map(|&[x, y]| {
            let (u, v) = (*inverse.get(x as usize)?, *inverse.get(y as usize)?);
            (u != u32::MAX && v != u32::MAX).then_some(([x, y], [u.min(v), u.max(v)]))
        })
        .collect();
    let shortest = a_edges
        .iter()
        .chain(&b_edges)
        .map(|(_, [u, v])| dist((at(*u), at(*v))))
        .filter(|d| *d > 0.0)
        .fold(f64::MAX, f64::min);
    let draw = |edges: &[([u32; 2], [u32; 2])], only: &'static str, id: &'static str, name: &str, second: bool| {
        let lines = edges.iter().map(|&(own, [u, v])| {
            let kind = if common.contains(&[u, v]) { "common" } else { only };
            edge(
                classes!("edge", kind),
                at(u),
                at(v),
                shortest,
                format!("{}-{}", own[0], own[1]),
            )
        });
        let nodes = (0..n as u32).map(|r| {
            let (x, y) = at(r);
            let label = if second { g.mapping[r as usize] } else { r };
            html! {
                <g class="node" data-rank={label.to_string()}>
                    <circle cx={fmt(x)} cy={fmt(y)} r={if n > 256 { "3" } else { "9" }} />
                    if n <= 256 { <text x={fmt(x)} y={fmt(y + 3.5)} text-anchor="middle">{ label }</text> }
                </g>
            }
        });
        html! {
            <figure class="compare-graph">
                <svg class="topology-graph compare-graph" id={id} viewBox={format!("0 0 {size} {}", fmt(height))}
                    role="img" aria-label={format!("Communication graph of {name}, common subgraph highlighted")}>
                    { for lines }
                    { for nodes }
                </svg>
                <figcaption>{ name.to_owned() }</figcaption>
            </figure>
        }
    };
    html! {
        <>
            <div class="compare-panels">
                { draw(&a_edges, "only-a", "compare-graph-a", names.0, false) }
                { draw(&b_edges, "only-b", "compare-graph-b", names.1, true) }
            </div>
            <p class="edge-legend">
                <span class="key common">{ format!("━ common subgraph ({} edges)", g.common) }</span>
                <span class="key only-a">{ format!(" ━ only in {} ({})", names.0, g.edges_a.len() - g.common) }</span>
                <span class="key only-b">{ format!(" ━ only in {} ({})", names.1, g.edges_b.len().saturating_sub(g.common)) }</span>
                <span class="small">{ " · the second graph is drawn through the rank correspondence the search found" }</span>
            </p>
        </>
    }
}

/// The similarity matrix of three or more runs: θ / ε per cell (similar cells marked), a click
/// selects the pair, and each added run can be removed.
fn matrix_table(
    m: &SimilarityMatrix,
    names: &[String],
    selected: (usize, usize),
    on_select: Callback<(usize, usize)>,
    on_remove: Callback<usize>,
) -> Html {
    let header = names
        .iter()
        .enumerate()
        .map(|(j, name)| html! { <th scope="col" data-run={j.to_string()}>{ format!("{j} · {name}") }</th> });
    let rows = m.matrix.iter().enumerate().map(|(i, row)| {
        let cells = row.iter().enumerate().map(|(j, cell)| {
            if i == j {
                return html! { <td class="diagonal">{ "—" }</td> };
            }
            let pair = (i.min(j), i.max(j));
            let class = classes!(cell.similar.then_some("similar"), (pair == selected).then_some("selected"));
            let onclick = on_select.reform(move |_: MouseEvent| pair);
            html! {
                <td {class} data-first={i.to_string()} data-second={j.to_string()} data-similar={cell.similar.to_string()}>
                    <button type="button" class="cell" {onclick}>
                        { format!("θ {:.2} · ε {:.2}{}", cell.theta, cell.epsilon, if cell.epsilon_exact { "" } else { "≥" }) }
                    </button>
                </td>
            }
        });
        let remove = (i > 0).then(|| {
            let onclick = on_remove.reform(move |_: MouseEvent| i);
            html! { <button type="button" class="secondary remove" {onclick} aria-label={format!("Remove {}", names[i])}>{ "×" }</button> }
        });
        html! { <tr><th scope="row">{ format!("{i} · {}", names[i]) }{ for remove }</th>{ for cells }</tr> }
    });
    html! {
        <table class="similarity-matrix" id="compare-matrix">
            <caption>{ format!("Similarity matrix (similar when θ and ε reach {}; click a cell to show its pair)", m.threshold) }</caption>
            <thead><tr><th></th>{ for header }</tr></thead>
            <tbody>{ for rows }</tbody>
        </table>
    }
}

/// The runs of one drop: one per folder when only folders were dropped (two or more), else the
/// whole drop as one run.
fn traces_of_drop(sources: Vec<Source>) -> Vec<Vec<Source>> {
    let folders = sources.len() >= 2
        && sources
            .iter()
            .all(|s| matches!(s, Source::Entry(e) if e.is_directory()));
    if folders {
        sources.into_iter().map(|s| vec![s]).collect()
    } else {
        vec![sources]
    }
}

/// The compare view.
#[function_component(CompareView)]
pub fn compare_view(props: &CompareProps) -> Html {
    let chosen = use_state(|| None::<(usize, usize)>);
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
    // Several folders dropped at once are several runs, added one after the other.
    let queue = use_mut_ref(VecDeque::<Vec<Source>>::new);
    let on_drop = {
        let (cb, queue) = (props.on_sources.clone(), queue.clone());
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            if let Some(data) = e.data_transfer() {
                let mut traces = traces_of_drop(input::sources_from_drop(&data)).into_iter();
                if let Some(first) = traces.next() {
                    queue.borrow_mut().extend(traces);
                    cb.emit(first);
                }
            }
        })
    };
    let on_drag_over = Callback::from(|e: DragEvent| e.prevent_default());
    let state = &props.state;
    {
        let (cb, queue) = (props.on_sources.clone(), queue.clone());
        use_effect_with((state.pending, state.seq), move |&(pending, _)| {
            if !pending {
                let next = queue.borrow_mut().pop_front();
                if let Some(next) = next {
                    cb.emit(next);
                }
            }
        });
    }
    let parsed = use_parsed::<CompareResult>(state);
    let loading = match (&state.loading, state.pending) {
        (Some(label), true) => {
            html! { <p class="waiting" role="status" id="compare-progress">{ format!("Reading and comparing {label}…") }</p> }
        }
        _ => Html::default(),
    };
    let result = match (&state.result, parsed) {
        (None, _) => Html::default(),
        (Some(_), Err(page)) => page,
        (Some(_), Ok(r)) => compare_result(props, &r, &chosen),
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
            { loading }
            { result }
        </section>
    }
}

/// Labels of the runs of `r`: the loaded trace, then the added runs as the user named them.
fn run_names(props: &CompareProps, r: &CompareResult) -> Vec<String> {
    std::iter::once(props.label.clone())
        .chain(r.others.iter().map(|o| o.source.clone()))
        .collect()
}

fn compare_result(
    props: &CompareProps,
    r: &Rc<CompareResult>,
    chosen: &UseStateHandle<Option<(usize, usize)>>,
) -> Html {
    let refused = r.refused.as_ref().map(|e| {
        html! {
            <div class="error view-error" role="alert">
                <p><strong>{ "Not compared. " }</strong>{ e }</p>
                if r.matrix.is_some() { <p class="kept">{ "The runs compared before are still compared below." }</p> }
            </div>
        }
    });
    let Some(m) = &r.matrix else {
        return html! { <>{ for refused }</> };
    };
    let names = run_names(props, r);
    let latest = r.latest().map_or((0, 1), |c| (c.first, c.second));
    let selected = chosen
        .filter(|&(i, j)| m.pairs.iter().any(|c| (c.first, c.second) == (i, j)))
        .unwrap_or(latest);
    let Some(index) = m.pairs.iter().position(|c| (c.first, c.second) == selected) else {
        return html! { <>{ for refused }</> };
    };
    let c = &m.pairs[index];
    let (name_a, name_b) = (
        names.get(c.first).cloned().unwrap_or_default(),
        names.get(c.second).cloned().unwrap_or_default(),
    );
    let on_select = {
        let chosen = chosen.clone();
        Callback::from(move |pair: (usize, usize)| chosen.set(Some(pair)))
    };
    let on_remove = {
        let (others, on_request, chosen) = (r.others.clone(), props.on_request.clone(), chosen.clone());
        Callback::from(move |run: usize| {
            let mut runs = others.clone();
            if run >= 1 && run <= runs.len() {
                runs.remove(run - 1);
            }
            chosen.set(None);
            on_request.emit(AnalysisRequest::CompareRuns { runs, refused: None });
        })
    };
    let clear = {
        let (on_request, chosen) = (props.on_request.clone(), chosen.clone());
        Callback::from(move |_: MouseEvent| {
            chosen.set(None);
            on_request.emit(AnalysisRequest::CompareRuns {
                runs: Vec::new(),
                refused: None,
            })
        })
    };
    let layout = r.layouts.get(c.first).map(Vec::as_slice).unwrap_or(&[]);
    html! {
        <>
            { for refused }
            <p class="headline" id="compare-verdict" data-similar={c.similar.to_string()} data-first={c.first.to_string()} data-second={c.second.to_string()}>
                { format!("{name_a} vs {name_b}: ") }<strong>{ c.verdict.clone() }</strong>
                { format!(" · {} runs compared ", m.runs.len()) }
                <button type="button" class="secondary" id="compare-clear" onclick={clear}>{ "Clear the comparison" }</button>
            </p>
            if m.runs.len() > 2 {
                { matrix_table(m, &names, selected, on_select, on_remove) }
            }
            <div class="compare-panels">
                <table class="properties" id="compare-properties">
                    <caption>{ "Similarity" }</caption>
                    <tbody>
                        { for c.properties.iter().map(|p| html! {
                            <tr data-property={p.property.clone()} data-theta={theta_attr(p.theta)}>
                                <th scope="row">{ format!("θ {}", p.property) }</th><td class="num">{ format!("{:.3}", p.theta) }</td>
                                <td class="small">{ p.note.clone().unwrap_or_default() }</td>
                            </tr>
                        }) }
                        <tr data-property="theta" data-theta={theta_attr(c.theta)}><th scope="row">{ "θ (combined)" }</th><td class="num"><strong>{ if c.theta.is_finite() { format!("{:.3}", c.theta) } else { "undefined".to_owned() } }</strong></td>
                            <td class="small">{ format!("work: {}", c.work_measure.name()) }</td></tr>
                        <tr id="compare-pairing" data-by={serde_json::to_value(c.pairing.by).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()}
                            data-exhaustive={c.pairing.exhaustive.to_string()} data-theta-by-rank={c.pairing.theta_by_rank.to_string()}
                            data-theta-chance={c.pairing.theta_chance.map(|t| t.to_string()).unwrap_or_default()}
                            data-anchored={c.pairing.anchor.used.to_string()}>
                            <th scope="row">{ "pairing" }</th><td class="num">{ c.alignment.clone() }</td>
                            <td class="small">{ pairing_text(c) }</td></tr>
                        <tr id="compare-epsilon" data-epsilon={c.epsilon.to_string()} data-exact={c.epsilon_exact.to_string()} data-common={c.graph.common.to_string()}>
                            <th scope="row">{ "ε" }</th>
                            <td class="num"><strong>{ format!("{:.3}", c.epsilon) }</strong></td>
                            <td class="small">{ if c.epsilon_exact { format!("exact ({} common edges)", c.graph.common) }
                                else { format!("lower bound; at most {:.3}", c.epsilon_upper) } }</td>
                        </tr>
                        if let Some(mix) = c.operation_mix_similarity {
                            <tr id="compare-operations" data-mix={mix.to_string()} data-differs={c.operation_mix_differs.to_string()}>
                                <th scope="row">{ "operations" }</th>
                                <td class="num"><strong>{ format!("{mix:.3}") }</strong></td>
                                <td class="small">{ format!(
                                    "how alike the runs sequence their operations (consecutive pairs); similar needs ≥ {}{}",
                                    m.threshold,
                                    if c.operation_mix_differs { ": not reached, so not similar whatever θ and ε" } else { "" }
                                ) }</td>
                            </tr>
                        }
                    </tbody>
                </table>
                { scatter(&m.pairs, index, m.threshold) }
            </div>
            <h3>{ "Property vectors per rank: observed and ranked (as in “An Approach for Matching Communication Patterns in Parallel Applications”, Figures 12–13)" }</h3>
            <div class="property-grid">
                { for c.properties.iter().map(|p| property_plots(p, (&name_a, &name_b))) }
            </div>
            <h3>{ format!("Communication graphs and their maximum common subgraph (ε = 2·{}/({}+{}))", c.graph.common, c.graph.edges_a.len(), c.graph.edges_b.len()) }</h3>
            { graphs(c, layout, (&name_a, &name_b)) }
        </>
    }
}

/// θ as a data attribute: the number, or `null` when undefined (as the CLI's JSON writes it).
fn theta_attr(theta: f64) -> String {
    if theta.is_finite() {
        theta.to_string()
    } else {
        "null".to_owned()
    }
}

#[cfg(test)]
mod tests;
