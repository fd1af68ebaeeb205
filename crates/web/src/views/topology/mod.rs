//! The topology view: candidate elimination stage by stage (Table 7, with ms), the filtering
//! figures with a threshold override, the identified topology drawn with every rank labelled,
//! the rank ↔ coordinates mapping, equivalents, near matches and the spectra; and the user's
//! reference library: save this run's graph as a pattern, load edge-list files, download and
//! delete patterns (every identification tries them as `custom` candidates).

use super::{pending_note, use_parsed, AnalysisState, Focus};
use crate::protocol::{AnalysisRequest, ReferenceLibrary, ReferencePattern};
use crate::text;
use std::collections::BTreeSet;
use std::rc::Rc;
use tracelogic_engine::logical::PlacedBy;
use tracelogic_engine::topology::{Component, RankPlace, Stage, TopologyReport};
use wasm_bindgen_futures::JsFuture;
use web_sys::HtmlInputElement;
use yew::prelude::*;

mod library;
pub use library::{LibraryPanel, LibraryProps};

/// Largest edge-list file the library loads (a pattern of [`MAX_NODES`](tracelogic_analysis::topology::tracelogic_graph::edgelist::MAX_NODES)
/// ranks with a few edges each fits well below).
pub const MAX_LIBRARY_FILE: f64 = 64.0 * 1024.0 * 1024.0;

/// Properties of [`TopologyView`].
#[derive(Properties, PartialEq)]
pub struct TopologyProps {
    /// The view's analysis.
    pub state: AnalysisState,
    /// Ask the worker for a new identification (threshold override).
    pub on_request: Callback<AnalysisRequest>,
    /// The shared selection.
    pub focus: Focus,
    /// Change the shared selection.
    pub on_focus: Callback<Focus>,
    /// Show the reference library panel (the page does; a static report does not).
    #[prop_or_default]
    pub manage_library: bool,
    /// The page's reference patterns.
    #[prop_or_default]
    pub library: ReferenceLibrary,
    /// Replace the page's reference patterns (the page then identifies again).
    #[prop_or_default]
    pub on_library: Callback<ReferenceLibrary>,
    /// Label of the loaded trace (the default name of a saved pattern).
    #[prop_or_default]
    pub label: String,
    /// The Matrix view's threshold in percent (its binary matrix), named beside this view's own.
    #[prop_or_default]
    pub matrix_threshold: Option<f64>,
}

/// The label the identification gives the custom candidate of `pattern`.
fn candidate_label_prefix(pattern: &ReferencePattern) -> String {
    format!("custom pattern {} (", pattern.name)
}

/// A file name for `name`: letters, digits, `-`, `_` and `.` kept, anything else `_`.
pub fn file_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = clean.trim_matches(|c| c == '_' || c == '.');
    format!("{}.txt", if clean.is_empty() { "pattern" } else { clean })
}

/// The pattern name for a loaded file: its name without the extension.
fn pattern_name(file: &str) -> String {
    match file.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_owned(),
        _ => file.to_owned(),
    }
}

/// Read the picked edge-list files into `library` (all or nothing: the first bad file stops).
async fn load_library_files(
    mut library: ReferenceLibrary,
    files: Vec<web_sys::File>,
) -> Result<ReferenceLibrary, String> {
    for file in files {
        let name = file.name();
        if file.size() > MAX_LIBRARY_FILE {
            return Err(format!(
                "{name}: {} is too large for an edge list",
                text::bytes(file.size() as u64)
            ));
        }
        let content = JsFuture::from(file.text())
            .await
            .map_err(|e| format!("cannot read {name}: {}", crate::input::js_message(&e)))?;
        let content = content
            .as_string()
            .ok_or_else(|| format!("cannot read {name}: not text"))?;
        library.save(ReferencePattern::from_edge_list(&pattern_name(&name), &content, &name)?);
    }
    Ok(library)
}

/// Most rows of the mapping table.
pub const MAX_ROWS: usize = 2048;

/// Most ranks drawn (larger graphs are listed, not drawn).
pub const MAX_DRAWN: usize = 1024;

pub use crate::topology_layout::layout;

/// Neighbours of `rank` in the filtered graph.
pub fn neighbours(edges: &[[u32; 2]], rank: u32) -> BTreeSet<u32> {
    edges
        .iter()
        .filter_map(|&[a, b]| {
            if a == rank {
                Some(b)
            } else if b == rank {
                Some(a)
            } else {
                None
            }
        })
        .collect()
}

fn drawing(report: &TopologyReport, highlighted: Option<u32>, on_hover: Callback<Option<u32>>) -> Html {
    let n = report.identification.ranks as usize;
    if n > MAX_DRAWN {
        return html! { <p class="note">{ format!("{n} ranks: too many to draw; see the mapping table.") }</p> };
    }
    let pos = layout(report);
    let size = 560.0;
    let margin = 28.0;
    let at = |r: u32| {
        let (x, y) = pos[r as usize];
        (margin + x * (size - 2.0 * margin), margin + y * (size - 2.0 * margin))
    };
    let near = highlighted.map(|r| neighbours(&report.edges, r)).unwrap_or_default();
    let radius = if n > 256 { 5.0 } else { 13.0 };
    let length = |a: u32, b: u32| {
        let ((x1, y1), (x2, y2)) = (at(a), at(b));
        ((x2 - x1).powi(2) + (y2 - y1).powi(2)).sqrt()
    };
    let shortest = report.edges.iter().map(|&[a, b]| length(a, b)).fold(f64::MAX, f64::min);
    // The drawing's extent: every node with its circle and every bowed edge's farthest point
    // (a quadratic curve is farthest from its chord at its middle, half way to the control
    // point), so wrap-around arcs below the last row stay inside the picture.
    let (mut min_x, mut min_y, mut max_x, mut max_y) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    let mut extend = |x: f64, y: f64, pad: f64| {
        min_x = min_x.min(x - pad);
        min_y = min_y.min(y - pad);
        max_x = max_x.max(x + pad);
        max_y = max_y.max(y + pad);
    };
    for r in 0..report.identification.ranks {
        let (x, y) = at(r);
        extend(x, y, radius + 2.0);
    }
    // (rank, rank, control point of a bowed edge)
    type Edge = (u32, u32, Option<(f64, f64)>);
    let shapes: Vec<Edge> = report
        .edges
        .iter()
        .map(|&[a, b]| {
            let ((x1, y1), (x2, y2)) = (at(a), at(b));
            let len = length(a, b);
            if len > 1.5 * shortest && report.edges.len() > 1 {
                // A long (wrap-around or diagonal) edge bows sideways so it does not hide the short ones.
                let (mx, my) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
                let (nx, ny) = (-(y2 - y1) / len, (x2 - x1) / len);
                let bow = 0.18 * len;
                (a, b, Some((mx + nx * bow, my + ny * bow)))
            } else {
                (a, b, None)
            }
        })
        .collect();
    for &(a, b, control) in &shapes {
        if let Some((cx, cy)) = control {
            let ((x1, y1), (x2, y2)) = (at(a), at(b));
            extend((x1 + 2.0 * cx + x2) / 4.0, (y1 + 2.0 * cy + y2) / 4.0, 3.0);
        }
    }
    let edges = shapes.iter().map(|&(a, b, control)| {
        let ((x1, y1), (x2, y2)) = (at(a), at(b));
        let class = classes!("edge", highlighted.is_some_and(|h| h == a || h == b).then_some("hot"));
        match control {
            Some((cx, cy)) => {
                let d = format!("M {x1:.1} {y1:.1} Q {cx:.1} {cy:.1} {x2:.1} {y2:.1}");
                html! { <path {class} {d} /> }
            }
            None => html! {
                <line {class} x1={format!("{x1:.1}")} y1={format!("{y1:.1}")} x2={format!("{x2:.1}")} y2={format!("{y2:.1}")} />
            },
        }
    });
    let nodes = (0..report.identification.ranks).map(|r| {
        let (x, y) = at(r);
        let class = classes!(
            "node",
            (highlighted == Some(r)).then_some("selected"),
            near.contains(&r).then_some("neighbour")
        );
        let enter = on_hover.reform(move |_: MouseEvent| Some(r));
        let leave = on_hover.reform(|_: MouseEvent| None);
        html! {
            <g {class} data-rank={r.to_string()} onmouseenter={enter} onmouseleave={leave}>
                <circle cx={format!("{x:.1}")} cy={format!("{y:.1}")} r={radius.to_string()} />
                <text x={format!("{x:.1}")} y={format!("{:.1}", y + 4.0)} text-anchor="middle">{ r }</text>
            </g>
        }
    });
    let (x0, y0) = ((min_x - 4.0).min(0.0).floor(), (min_y - 4.0).min(0.0).floor());
    let (w, h) = ((max_x + 4.0).max(size).ceil() - x0, (max_y + 4.0).ceil() - y0);
    html! {
        <svg class="topology-graph" id="topology-graph" viewBox={format!("{x0} {y0} {w} {h}")} role="img"
            aria-label="The identified topology, every node labelled by its rank">
            { for edges }
            { for nodes }
        </svg>
    }
}

/// Application and candidate eigenvalues, by index.
fn spectrum_plot(app: &[f64], candidate: Option<&Vec<f64>>) -> Html {
    if app.is_empty() {
        return Html::default();
    }
    let all = app.iter().chain(candidate.into_iter().flatten());
    let (lo, hi) = all.fold((f64::MAX, f64::MIN), |(l, h), &v| (l.min(v), h.max(v)));
    let (lo, hi) = if hi - lo < 1e-9 { (lo - 1.0, hi + 1.0) } else { (lo, hi) };
    let (w, h, m) = (480.0, 220.0, 36.0);
    let x = |i: usize| m + (w - 2.0 * m) * i as f64 / (app.len().max(2) - 1) as f64;
    let y = |v: f64| h - m - (h - 2.0 * m) * (v - lo) / (hi - lo);
    let points = |vals: &[f64], class: &'static str| {
        vals.iter()
            .enumerate()
            .map(|(i, &v)| html! { <circle {class} cx={format!("{:.1}", x(i))} cy={format!("{:.1}", y(v))} r="3.5" /> })
            .collect::<Html>()
    };
    html! {
        <figure class="spectrum">
            <svg id="topology-spectrum" viewBox={format!("0 0 {w} {h}")} role="img" aria-label="Adjacency spectra">
                <line class="axis" x1={m.to_string()} y1={(h - m).to_string()} x2={(w - m).to_string()} y2={(h - m).to_string()} />
                <line class="axis" x1={m.to_string()} y1={m.to_string()} x2={m.to_string()} y2={(h - m).to_string()} />
                <text class="tick" x={(m - 4.0).to_string()} y={format!("{:.1}", y(hi) + 4.0)} text-anchor="end">{ format!("{hi:.2}") }</text>
                <text class="tick" x={(m - 4.0).to_string()} y={format!("{:.1}", y(lo) + 4.0)} text-anchor="end">{ format!("{lo:.2}") }</text>
                <text class="tick" x={(w / 2.0).to_string()} y={(h - 8.0).to_string()} text-anchor="middle">{ "eigenvalue index" }</text>
                { points(app, "app") }
                if let Some(c) = candidate { { points(c, "candidate") } }
            </svg>
            <figcaption>
                <span class="key app">{ "● application" }</span>
                if candidate.is_some() { <span class="key candidate">{ " ○ candidate" }</span> }
            </figcaption>
        </figure>
    }
}

/// The name the headline gives the run's topology: the declared one when the run has it
/// (`2x2x3 torus`, `2x4 process grid`), else `label` (the match, or why there is none).
pub fn headline_name(report: &TopologyReport, label: &str) -> String {
    report.name_as_declared.clone().unwrap_or_else(|| label.to_owned())
}

/// The cliques' name when nothing matched the whole graph (`Cliques: rows of a 2x4 process grid`).
pub fn cliques_line(report: &TopologyReport) -> Option<String> {
    match (&report.identification.matched, &report.cliques) {
        (None, Some(c)) => Some(format!("Cliques: {}", c.label)),
        _ => None,
    }
}

/// The topology view.
#[function_component(TopologyView)]
pub fn topology_view(props: &TopologyProps) -> Html {
    let hovered = use_state(|| None::<u32>);
    let threshold_input = use_node_ref();
    let typed = use_state(|| None::<String>);
    let report: Rc<TopologyReport> = match use_parsed(&props.state) {
        Ok(r) => r,
        Err(page) => return wrap(html! { <>{ page }{ library(props, None) }</> }, props),
    };
    let id = &report.identification;
    let f = &report.filter;
    let on_hover = {
        let hovered = hovered.clone();
        Callback::from(move |r: Option<u32>| hovered.set(r))
    };
    let highlighted = (*hovered).or(props.focus.rank);
    let apply = {
        let input = threshold_input.clone();
        let on_request = props.on_request.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            if let Some(v) = input.cast::<HtmlInputElement>().map(|i| i.value_as_number()) {
                if v.is_finite() && v >= 0.0 {
                    on_request.emit(AnalysisRequest::Topology { threshold_pct: Some(v) });
                }
            }
        })
    };
    let on_typed = {
        let typed = typed.clone();
        Callback::from(move |e: InputEvent| typed.set(Some(e.target_unchecked_into::<HtmlInputElement>().value())))
    };
    let auto = {
        let typed = typed.clone();
        props.on_request.reform(move |_: MouseEvent| {
            typed.set(None);
            AnalysisRequest::Topology { threshold_pct: None }
        })
    };
    let label = if report.no_point_to_point {
        "no point-to-point traffic".to_owned()
    } else {
        id.matched
            .as_ref()
            .map_or("no exact match".to_owned(), |m| m.label.clone())
    };
    let select_rank = |r: u32| {
        let on_focus = props.on_focus.clone();
        let focus = props.focus.clone();
        Callback::from(move |_: MouseEvent| {
            on_focus.emit(super::Focus {
                rank: (focus.rank != Some(r)).then_some(r),
                ..focus.clone()
            })
        })
    };
    let body = html! {
        <>
            <p class="headline">
                { if id.matched.is_none() && report.name_as_declared.is_some() { "Topology: " } else { "Identified topology: " } }
                <strong id="topology-label" data-label={label.clone()} data-declared={report.name_as_declared.clone().unwrap_or_default()}>{ headline_name(&report, &label) }</strong>
                if let Some(note) = report.declared_note() { <span id="topology-declared-name">{ format!(" ({note})") }</span> }
                if id.matched.is_some() { <span id="topology-proof">{ format!(" {PROOF}") }</span> }
                <span id="topology-graph-line" data-isolated={report.isolated_ranks.len().to_string()}>{ format!(" · {}", graph_line(&report)) }</span>
            </p>
            if !report.declared.is_empty() || !report.communicator_grids.is_empty() || !report.sub_grids.is_empty() || report.grid_search_incomplete {
                <ul class="small" id="topology-declared">
                    { for report.declared.iter().map(|d| html! {
                        <li class="declared-summary" data-agrees={d.agrees.to_string()} data-label={d.label.clone()}>{ format!("Declared: {}", d.summary) }</li>
                    }) }
                    { for report.communicator_grids.iter().map(|g| html! {
                        <li class="declared-summary" data-agrees={g.agrees.to_string()} data-label={g.label.clone()}>{ format!("Declared: {}", g.summary) }</li>
                    }) }
                    { for report.sub_grids.iter().map(|g| html! {
                        <li class="declared-summary" data-agrees="part" data-label={g.label.clone()}>{ format!("Declared: {}", g.summary) }</li>
                    }) }
                    if let Some(note) = report.grid_search_note() { <li id="topology-grid-search">{ note }</li> }
                </ul>
            }
            if let Some(c) = cliques_line(&report) {
                <p class="small" id="topology-cliques">{ c }</p>
            }
            { pending_note(&props.state) }
            <div class="filter-figures" id="topology-filter">
                <dl class="stats">
                    <div class="stat"><dt>{ "Threshold" }</dt><dd>{ format!("{} {:.2} %", f.mode, f.threshold_pct) }</dd></div>
                    <div class="stat"><dt>{ "Pairs before" }</dt><dd>{ text::count(f.pairs_before as u64) }</dd></div>
                    <div class="stat"><dt>{ "Pairs kept" }</dt><dd>{ text::count(f.pairs_kept as u64) }</dd></div>
                    <div class="stat" data-stat="removed" data-value={f.removed.len().to_string()}>
                        <dt>{ "Removed pairs" }</dt><dd>{ format!("{} ({} of {})", text::count(f.removed.len() as u64), text::percent(f.removed_share), f.metric) }</dd></div>
                    if let Some(g) = f.gap_ratio { <div class="stat"><dt>{ "Gap ratio" }</dt><dd>{ format!("{g:.1}×") }</dd></div> }
                </dl>
                if let Some(m) = props.matrix_threshold {
                    <p id="topology-threshold-other" class="note small">
                        { format!("This view's threshold ({} {:.2} %, {} pairs) is its own: the Matrix view draws its binary matrix at {m:.1} %.", f.mode, f.threshold_pct, text::count(f.pairs_kept as u64)) }
                    </p>
                }
                if let Some(fb) = &f.fallback {
                    <p id="topology-fallback" class="note small" data-taken={fb.taken.is_some().to_string()}>{ fb.summary() }</p>
                }
                if let Some(split) = &f.size_split {
                    <p id="topology-size-split" class="note small">{ split.summary() }</p>
                }
                if let Some(w) = &f.one_way {
                    <p id="topology-one-way" class="note small" data-pairs={w.pairs.len().to_string()}>{ w.summary() }</p>
                }
                <form class="controls" onsubmit={apply}>
                    <label>{ "Threshold override (% of the largest entry) " }
                        <input id="topology-threshold" ref={threshold_input} type="number" min="0" max="100" step="any"
                            value={(*typed).clone().unwrap_or_else(|| format!("{:.2}", f.threshold_pct))} oninput={on_typed} />
                    </label>
                    <button type="submit">{ "Apply" }</button>
                    <button type="button" onclick={auto}>{ "Automatic" }</button>
                </form>
            </div>
            <div class="topology-panels">
                { drawing(&report, highlighted, on_hover) }
                if id.mapping.is_empty() {
                    <p class="note" id="topology-no-mapping">{ if report.components.is_empty() {
                        if report.name_as_declared.is_some() {
                            "No proved rank ↔ coordinates: no topology of the library matches this graph (the declared grid's placement is in its line above)."
                        } else {
                            "No rank ↔ coordinates: no topology of the library matches this graph."
                        }
                    } else {
                        "No rank ↔ coordinates for the whole graph (no topology matches it); each component's are below."
                    } }</p>
                } else {
                <table class="mapping" id="topology-mapping">
                    <caption>{ if id.mapping.len() > MAX_ROWS { format!("Rank ↔ coordinates (first {MAX_ROWS} of {})", id.mapping.len()) } else { "Rank ↔ coordinates".to_owned() } }
                        if report.placed_by == PlacedBy::FirstContacts {
                            <span id="topology-placed-by" class="note small">{ " — from the ranks' first contacts, as the logical trace places them: this graph has more symmetries than the topology's geometry, so the proved isomorphism need not be the program's layout" }</span>
                        }
                    </caption>
                    <thead><tr><th>{ "Rank" }</th><th>{ "Node" }</th><th>{ "Coordinates" }</th><th>{ "Neighbours" }</th></tr></thead>
                    { mapping_rows(&id.mapping, highlighted, &select_rank) }
                </table>
                }
            </div>
            if !report.components.is_empty() {
                <section class="components" id="topology-components" aria-labelledby="topology-components-title">
                    <h3 id="topology-components-title">{ components_title(&report) }</h3>
                    { for report.components.iter().enumerate().map(|(i, c)| component(i, c, highlighted, &select_rank)) }
                </section>
            }
            <table class="stages" id="topology-stages">
                <caption>{ "Candidate elimination (Table 7)" }</caption>
                <thead><tr><th>{ "Stage" }</th><th class="num">{ "Candidates" }</th><th class="num">{ "ms" }</th><th>{ "Survivors" }</th></tr></thead>
                <tbody>
                    { for id.stages.iter().map(stage_row) }
                </tbody>
            </table>
            if !id.equivalents.is_empty() {
                <p id="topology-equivalents">{ "Equivalent candidates: " }{ id.equivalents.iter().map(|e| e.label.clone()).collect::<Vec<_>>().join(", ") }</p>
            }
            if !id.gave_up.is_empty() {
                <p class="note">{ "Search budget exhausted for: " }{ id.gave_up.join(", ") }</p>
            }
            if !id.near_matches.is_empty() {
                <table class="near" id="topology-near">
                    <caption>{ "Near matches" }</caption>
                    <thead><tr><th>{ "Candidate" }</th><th class="num">{ "Edges differing" }</th><th>{ "Extra edges" }</th><th>{ "Missing edges" }</th></tr></thead>
                    <tbody>
                        { for id.near_matches.iter().map(|m| html! {
                            <tr><th scope="row">{ &m.topology.label }</th><td class="num">{ m.distance }</td>
                                <td class="small">{ m.extra_edges.iter().map(|p| format!("{}–{}", p.a, p.b)).collect::<Vec<_>>().join(", ") }</td>
                                <td class="small">{ m.missing_edges.iter().map(|p| format!("{}–{}", p.a, p.b)).collect::<Vec<_>>().join(", ") }</td></tr>
                        }) }
                    </tbody>
                </table>
            }
            if let Some(sp) = &id.spectrum {
                <h3>{ "Spectrum: application vs candidate" }</h3>
                { spectrum_plot(sp, id.candidate_spectrum.as_ref()) }
            }
            { library(props, Some(&report)) }
        </>
    };
    wrap(body, props)
}

/// What the match line adds, as the CLI prints it: the match is an isomorphism found and its
/// rank mapping checked edge by edge, not a likeness.
pub const PROOF: &str = "(proved by isomorphism, mapping verified)";

/// The filtered graph in words, as the CLI's `Graph:` line (the report's own words).
pub fn graph_line(report: &TopologyReport) -> String {
    report.graph_line()
}

/// Ranks as increasing ranges: `0-3, 6, 8-9` (`ranks` ascending).
pub fn rank_ranges(ranks: &[u32]) -> String {
    use tracelogic_model::query::{rank_runs, rank_runs_text};
    rank_runs_text(&rank_runs(ranks.iter().copied()))
}

/// The heading over the components: why they are there.
/// The body of a rank ↔ coordinates table: its first [`MAX_ROWS`] ranks, each row selecting
/// its rank when clicked.
fn mapping_rows(
    mapping: &[RankPlace],
    highlighted: Option<u32>,
    select_rank: &impl Fn(u32) -> Callback<MouseEvent>,
) -> Html {
    html! {
        <tbody>
            { for mapping.iter().take(MAX_ROWS).map(|p| {
                let chosen = highlighted == Some(p.rank);
                let nb: Vec<String> = p.neighbours.iter().map(|n| format!("{} {}", n.direction, n.rank)).collect();
                html! {
                    <tr class={classes!(chosen.then_some("selected"))} data-rank={p.rank.to_string()} onclick={select_rank(p.rank)}>
                        <th scope="row">{ super::row_button(chosen, html! { p.rank }) }</th><td>{ p.node }</td>
                        <td>{ format!("({})", p.coords.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")) }</td>
                        <td class="small">{ nb.join(", ") }</td>
                    </tr>
                }
            }) }
        </tbody>
    }
}

fn components_title(report: &TopologyReport) -> String {
    format!(
        "The graph is disconnected: {} identified alone",
        text::counted(
            report.components.len() as u64,
            "component of two or more ranks",
            "components of two or more ranks"
        )
    )
}

/// One component: its ranks, its identification and its mapping.
fn component(
    index: usize,
    c: &Component,
    highlighted: Option<u32>,
    select_rank: &impl Fn(u32) -> Callback<MouseEvent>,
) -> Html {
    let id = &c.identification;
    let label = id
        .matched
        .as_ref()
        .map_or_else(|| "no exact match".to_owned(), |m| m.label.clone());
    let near = id.near_matches.first().map(|m| {
        format!(
            "; nearest: {} ({} differing)",
            m.topology.label,
            text::counted(m.distance as u64, "edge", "edges")
        )
    });
    html! {
        <div class="component" data-component={index.to_string()} data-label={label.clone()} data-ranks={rank_ranges(&c.ranks)}>
            <p>
                { format!("Component of {} ({}): ", text::counted(c.ranks.len() as u64, "rank", "ranks"), rank_ranges(&c.ranks)) }
                <strong class="component-label">{ &label }</strong>
                { if id.matched.is_some() { format!(" {PROOF}") } else { near.unwrap_or_default() } }
            </p>
            if !id.mapping.is_empty() {
                <table class="mapping component-mapping">
                    <caption>{ if id.mapping.len() > MAX_ROWS { format!("Rank ↔ coordinates in the component (first {MAX_ROWS} of {})", id.mapping.len()) } else { "Rank ↔ coordinates in the component".to_owned() } }</caption>
                    <thead><tr><th>{ "Rank" }</th><th>{ "Node" }</th><th>{ "Coordinates" }</th><th>{ "Neighbours" }</th></tr></thead>
                    { mapping_rows(&id.mapping, highlighted, select_rank) }
                </table>
            }
        </div>
    }
}

/// One row of the elimination table; a stage the identification did not run says `skipped`
/// and why (the CLI's table), rather than a time of 0.
fn stage_row(s: &Stage) -> Html {
    match &s.skipped {
        Some(why) => html! {
            <tr class="skipped" data-skipped="true"><th scope="row">{ &s.name }</th><td class="num">{ s.candidates }</td>
                <td class="num">{ "skipped" }</td>
                <td class="small">{ format!("({why}) {}", s.survivors.join(", ")) }</td></tr>
        },
        None => html! {
            <tr><th scope="row">{ &s.name }</th><td class="num">{ s.candidates }</td>
                <td class="num">{ format!("{:.3}", s.milliseconds) }</td>
                <td class="small">{ s.survivors.join(", ") }</td></tr>
        },
    }
}

/// The library panel for `report` (without one, while the identification is computed or when it
/// failed, the library can still be managed but not saved to).
fn library(props: &TopologyProps, report: Option<&TopologyReport>) -> Html {
    if !props.manage_library {
        return Html::default();
    }
    let graph = report
        .filter(|r| !r.edges.is_empty())
        .map(|r| (r.identification.ranks, Rc::new(r.edges.clone())));
    let mut equivalents: Vec<String> = report
        .map(|r| r.identification.equivalents.iter().map(|e| e.label.clone()).collect())
        .unwrap_or_default();
    if let Some(r) = report {
        for c in &r.components {
            equivalents.extend(c.identification.equivalents.iter().map(|e| e.label.clone()));
        }
    }
    html! {
        <LibraryPanel library={props.library.clone()} on_library={props.on_library.clone()}
            {graph} equivalents={Rc::new(equivalents)} label={props.label.clone()} />
    }
}

fn wrap(body: Html, _props: &TopologyProps) -> Html {
    html! {
        <section class="view topology" id="view-topology" aria-labelledby="topology-title">
            <h2 id="topology-title">{ "Topology" }</h2>
            { body }
        </section>
    }
}

#[cfg(test)]
mod tests;
