//! The phases view: the divergence curve of the selected segment with its cut, the
//! segmentation tree (click a node for its curve), a per-rank timeline coloured by phase, an
//! `s0` slider that re-segments, and the table of phases with their patterns and routines.

use super::{pending_note, use_parsed, AnalysisState, Focus};
use crate::protocol::AnalysisRequest;
use crate::protocol::PhasesReport as PhasesResult;
use std::rc::Rc;
use tracelogic_analysis::phases::Segment;
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// Most ranks drawn as timeline lanes.
pub const MAX_LANES: usize = 512;

/// Most phases named in the timeline's legend (the table lists them all).
const MAX_LEGEND: usize = 8;

/// Colour of phase `i` (evenly spread hues, readable on light and dark backgrounds).
pub fn phase_colour(i: usize) -> String {
    format!("hsl({}, 65%, 55%)", (i * 137) % 360)
}

fn curve_plot(points: &[(usize, f64)], seg: &Segment) -> Html {
    let (w, h, m) = (560.0, 240.0, 44.0);
    if points.is_empty() {
        return html! { <p class="note">{ "This segment has a single position: no cut to draw." }</p> };
    }
    let x0 = seg.start as f64;
    let x1 = (seg.end.max(seg.start + 1)) as f64;
    let ymax = points.iter().map(|p| p.1).fold(seg.tau, f64::max).max(1e-9);
    let x = |p: f64| m + (w - 1.5 * m) * (p - x0) / (x1 - x0).max(1.0);
    let y = |v: f64| h - m - (h - 1.6 * m) * v / ymax;
    let path: Vec<String> = points
        .iter()
        .map(|&(p, d)| format!("{:.1},{:.1}", x(p as f64), y(d)))
        .collect();
    html! {
        <svg class="curve" id="phases-curve" viewBox={format!("0 0 {w} {h}")} role="img"
            aria-label={format!("Jensen–Shannon divergence over the cuts of segment {}", seg.id)} data-segment={seg.id.to_string()}>
            <line class="axis" x1={m.to_string()} y1={(h - m).to_string()} x2={(w - m / 2.0).to_string()} y2={(h - m).to_string()} />
            <line class="axis" x1={m.to_string()} y1={(m / 2.0).to_string()} x2={m.to_string()} y2={(h - m).to_string()} />
            <text class="tick" x={m.to_string()} y={(h - m + 16.0).to_string()} text-anchor="middle">{ seg.start }</text>
            <text class="tick" x={format!("{:.1}", x(x1))} y={(h - m + 16.0).to_string()} text-anchor="end">{ seg.end }</text>
            <text class="tick" x={(w / 2.0).to_string()} y={(h - 8.0).to_string()} text-anchor="middle">{ "cut position (pattern occurrences)" }</text>
            <text class="tick" x={(m - 4.0).to_string()} y={format!("{:.1}", y(ymax) + 4.0)} text-anchor="end">{ format!("{ymax:.2}") }</text>
            <text class="tick" x={(m - 4.0).to_string()} y={(h - m).to_string()} text-anchor="end">{ "0" }</text>
            <text class="tick" x="12" y={(h / 2.0).to_string()} transform={format!("rotate(-90 12 {})", h / 2.0)} text-anchor="middle">{ "D_JS (bits)" }</text>
            <polyline class="series" points={path.join(" ")} />
            <g class="legend">
                <line class="series" x1={(w - 190.0).to_string()} x2={(w - 170.0).to_string()} y1="14" y2="14" />
                <text class="tick" x={(w - 166.0).to_string()} y="18">{ "divergence" }</text>
                <line class="cut" x1={(w - 100.0).to_string()} x2={(w - 80.0).to_string()} y1="14" y2="14" />
                <text class="tick" x={(w - 76.0).to_string()} y="18">{ "cut" }</text>
                if seg.tau > 0.0 {
                    <line class="tau" x1={(w - 50.0).to_string()} x2={(w - 30.0).to_string()} y1="14" y2="14" />
                    <text class="tick" x={(w - 26.0).to_string()} y="18">{ "τ" }</text>
                }
            </g>
            if seg.tau > 0.0 {
                <line class="tau" x1={m.to_string()} x2={(w - m / 2.0).to_string()} y1={format!("{:.1}", y(seg.tau))} y2={format!("{:.1}", y(seg.tau))} />
            }
            if let Some(cut) = seg.cut {
                <line class="cut" id="phases-cut" data-cut={cut.to_string()} x1={format!("{:.1}", x(cut as f64))} x2={format!("{:.1}", x(cut as f64))}
                    y1={(m / 2.0).to_string()} y2={(h - m).to_string()} />
                <text class="tick" x={format!("{:.1}", x(cut as f64) + 4.0)} y={(m / 2.0 + 10.0).to_string()}>{ format!("cut at {cut}") }</text>
            }
        </svg>
    }
}

fn tree_node(tree: &[Segment], id: usize, selected: usize, on_select: &Callback<usize>, leaves: &[usize]) -> Html {
    let Some(seg) = tree.get(id) else {
        return Html::default();
    };
    let onclick = on_select.reform(move |_: MouseEvent| id);
    let phase = leaves.iter().position(|&l| l == id);
    let label = format!(
        "#{} [{}, {}){}",
        seg.id,
        seg.start,
        seg.end,
        seg.strength.map_or(String::new(), |s| format!(" s = {s:.2}"))
    );
    html! {
        <li>
            <button type="button" class={classes!("tree-node", (id == selected).then_some("selected"))} data-segment={id.to_string()} {onclick}>
                if let Some(p) = phase { <span class="swatch" style={format!("background: {}", phase_colour(p))}></span> }
                { label }
            </button>
            if let Some((l, r)) = seg.children {
                <ul>{ tree_node(tree, l, selected, on_select, leaves) }{ tree_node(tree, r, selected, on_select, leaves) }</ul>
            }
        </li>
    }
}

/// Properties of [`PhasesView`]: those of every analysis view and the trace's start.
#[derive(Properties, PartialEq)]
pub struct PhasesProps {
    /// The view's analysis.
    pub state: AnalysisState,
    /// Ask the worker for a new segmentation (strength).
    pub on_request: Callback<AnalysisRequest>,
    /// The shared selection.
    pub focus: Focus,
    /// Change the shared selection.
    pub on_focus: Callback<Focus>,
    /// The trace's first event (ns), which phase times count from, as the patterns view and
    /// the CLI count theirs; `None`: from the first phase's start.
    #[prop_or_default]
    pub trace_start_ns: Option<u64>,
}

/// Where the view's times count from: the trace's first event when known (and not after the
/// first phase), else the first phase's start; and the axis label that says which.
pub fn time_origin(trace_start_ns: Option<u64>, first_phase_ns: u64) -> (u64, &'static str) {
    match trace_start_ns.filter(|&t| t <= first_phase_ns) {
        Some(t) => (t, "time since the trace start →"),
        None => (first_phase_ns, "time since the first phase began →"),
    }
}

/// Why the Routines column is missing: no phase names a routine, because the trace records no
/// call paths (DUMPI and the generated traces do not; OTF2 regions do).
pub fn routines_shown(phases: &[tracelogic_analysis::phases::Phase]) -> bool {
    phases.iter().any(|p| !p.routines.is_empty())
}

/// How the phases came from the thesis' leaves: `5 phases from 9 leaves (boundaries
/// significant at α = 0.01)`, as `tracelogic phases` heads its output.
pub fn merge_note(a: &tracelogic_analysis::phases::PhaseAnalysis) -> String {
    if a.significance >= 1.0 {
        "the thesis' leaves, not merged".to_string()
    } else {
        format!(
            "{} from {} ({})",
            crate::text::counted(a.phases.len() as u64, "phase", "phases"),
            crate::text::counted(a.leaves as u64, "leaf", "leaves"),
            a.boundaries_note()
        )
    }
}

/// The top level (docs/phases.md, "Sections"), as `tracelogic phases` prints it under the
/// phases: `3 sections (…): phases 0–1 0.000–0.052 s (4x2 grid; MPI_Bcast ×10); phase 2
/// 0.052–0.877 s (4x2 grid); …` (each named by its own communication graph), times since
/// `t0`; empty when there are none (the thesis' leaves).
pub fn sections_note(a: &tracelogic_analysis::phases::PhaseAnalysis, t0: u64) -> String {
    if a.sections.is_empty() {
        return String::new();
    }
    let s = |t: u64| t.saturating_sub(t0) as f64 / 1e9;
    let items: Vec<String> = a
        .sections
        .iter()
        .map(|sec| {
            let (p, q) = sec.phases;
            let which = if q - p == 1 {
                format!("phase {p}")
            } else {
                format!("phases {p}–{}", q - 1)
            };
            let what = sec.summary();
            if what.is_empty() {
                format!("{which} {:.3}–{:.3} s", s(sec.time.0), s(sec.time.1))
            } else {
                format!("{which} {:.3}–{:.3} s ({what})", s(sec.time.0), s(sec.time.1))
            }
        })
        .collect();
    format!(
        "{} (phases grouped while their kind of communication does not change significantly, each at least 1 % of the run): {}",
        crate::text::counted(a.sections.len() as u64, "section", "sections"),
        items.join("; ")
    )
}

/// A phase's load imbalance for the table: `1.21 (late: 3, 7)`; empty when not measured.
pub fn imbalance_text(p: &tracelogic_analysis::phases::Phase) -> String {
    let Some(im) = &p.imbalance else {
        return String::new();
    };
    let list = |rs: &[u32]| rs.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ");
    let mut text = format!("{:.2}", im.max_over_mean);
    if !im.late.is_empty() {
        text += &format!(" (late: {})", list(&im.late));
    }
    if let Some(note) = im.left_out_note() {
        text += &format!(" {note}");
    }
    text
}

/// The phases view.
#[function_component(PhasesView)]
pub fn phases_view(props: &PhasesProps) -> Html {
    let selected = use_state(|| 0usize);
    let strength = use_state(|| 0.0f64);
    let result: Rc<PhasesResult> = match use_parsed(&props.state) {
        Ok(r) => r,
        Err(page) => return wrap(page),
    };
    let a = &result.analysis;
    let sel = if *selected < a.tree.len() { *selected } else { 0 };
    let on_select = {
        let selected = selected.clone();
        Callback::from(move |i: usize| selected.set(i))
    };
    let on_strength = {
        let strength = strength.clone();
        let on_request = props.on_request.clone();
        let selected = selected.clone();
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlInputElement>().value_as_number();
            strength.set(v);
            selected.set(0);
            on_request.emit(AnalysisRequest::Phases { strength: v });
        })
    };
    // Kept while dragged, so that a redraw does not put the old value back; asked for on release.
    let on_strength_dragged = {
        let strength = strength.clone();
        Callback::from(move |e: InputEvent| {
            strength.set(e.target_unchecked_into::<HtmlInputElement>().value_as_number())
        })
    };
    let leaves: Vec<usize> = a.phases.iter().map(|p| p.node).collect();
    let (first, t1) = a
        .phases
        .iter()
        .fold((u64::MAX, 0u64), |(lo, hi), p| (lo.min(p.time.0), hi.max(p.time.1)));
    let (t0, axis_label) = time_origin(props.trace_start_ns, first);
    let with_routines = routines_shown(&a.phases);
    let ranks = a
        .phases
        .iter()
        .flat_map(|p| p.ranks.iter().map(|r| r.rank))
        .max()
        .map_or(0, |r| r + 1);
    let (w, lane) = (760.0, 14.0);
    let tx = |t: u64| 60.0 + (w - 70.0) * (t.saturating_sub(t0)) as f64 / (t1.saturating_sub(t0)).max(1) as f64;
    let focus = props.focus.clone();
    let on_focus = props.on_focus.clone();
    let body = html! {
        <>
            <p class="headline">
                <span id="phases-count" data-value={a.phases.len().to_string()}>{ crate::text::counted(a.phases.len() as u64, "phase", "phases") }</span>
                { format!(" from {} ({}) at s0 = {}", crate::text::counted(a.sequence_length as u64, "pattern occurrence", "pattern occurrences"),
                    crate::text::counted(result.patterns as u64, "communication pattern", "communication patterns"), a.strength_threshold) }
                <span class="small" id="phases-merge" data-leaves={a.leaves.to_string()}>{ format!(" — {}", merge_note(a)) }</span>
            </p>
            if !a.sections.is_empty() {
                <p class="small" id="phases-sections" data-value={a.sections.len().to_string()}>{ sections_note(a, t0) }</p>
            }
            { pending_note(&props.state) }
            <form class="controls" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
                <label>{ format!("Segmentation strength s0 = {:.1} ", *strength) }
                    <input id="phases-strength" type="range" min="0" max="20" step="0.5" value={strength.to_string()} oninput={on_strength_dragged} onchange={on_strength} />
                </label>
            </form>
            if a.phases.is_empty() {
                <p class="note">{ "No pattern occurrences: nothing to segment." }</p>
            }
            if ranks as usize > MAX_LANES {
                <p class="note">{ format!("{ranks} ranks: too many lanes to draw a timeline; the table lists every phase.") }</p>
            }
            if ranks > 0 && t1 > t0 && ranks as usize <= MAX_LANES {
                <h3>{ "Timeline by phase" }</h3>
                <svg class="timeline" id="phases-timeline" viewBox={format!("0 0 {w} {}", lane * ranks as f64 + 62.0)} role="img" aria-label="Each rank's time coloured by phase">
                    { for (0..ranks).map(|r| html! {
                        <text class="tick" x="52" y={format!("{:.1}", lane * r as f64 + 11.0)} text-anchor="end">{ format!("rank {r}") }</text>
                    }) }
                    { for a.phases.iter().enumerate().flat_map(|(i, p)| p.ranks.iter().map(move |s| (i, s))).map(|(i, s)| html! {
                        <rect class="phase-span" data-phase={i.to_string()} x={format!("{:.1}", tx(s.start))} y={format!("{:.1}", lane * s.rank as f64 + 1.0)}
                            width={format!("{:.2}", (tx(s.end) - tx(s.start)).max(0.8))} height={(lane - 2.0).to_string()} fill={phase_colour(i)}>
                            <title>{ format!("phase {i}, rank {}", s.rank) }</title>
                        </rect>
                    }) }
                    <text class="tick" x="60" y={format!("{:.1}", lane * ranks as f64 + 16.0)}>{ crate::text::duration(0.0) }</text>
                    <text class="tick" x={(w - 10.0).to_string()} y={format!("{:.1}", lane * ranks as f64 + 16.0)} text-anchor="end">{ crate::text::duration((t1 - t0) as f64 * 1e-9) }</text>
                    <text class="tick axis-label" x={format!("{:.1}", (60.0 + w - 10.0) / 2.0)} y={format!("{:.1}", lane * ranks as f64 + 16.0)} text-anchor="middle">{ axis_label }</text>
                    <g class="legend">
                        { for (0..a.phases.len().min(MAX_LEGEND)).map(|i| {
                            let x = 60.0 + 66.0 * i as f64;
                            let y = lane * ranks as f64 + 34.0;
                            html! {
                                <>
                                    <rect x={x.to_string()} y={y.to_string()} width="11" height="11" fill={phase_colour(i)} />
                                    <text class="tick" x={(x + 15.0).to_string()} y={(y + 10.0).to_string()}>{ format!("phase {i}") }</text>
                                </>
                            }
                        }) }
                        if a.phases.len() > MAX_LEGEND {
                            <text class="tick" x={(60.0 + 66.0 * MAX_LEGEND as f64).to_string()} y={format!("{:.1}", lane * ranks as f64 + 44.0)}>{ format!("… {} phases in all", a.phases.len()) }</text>
                        }
                    </g>
                </svg>
            }
            if let Some(f) = focus.pattern {
                <p class="note">{ format!("Phases containing pattern #{f} (selected in Patterns) are marked ●.") }</p>
            }
            <table class="phases" id="phases-table">
                <caption>{ if t0 == first && props.trace_start_ns != Some(t0) { "Phases (times from the first phase's start)" } else { "Phases (times from the trace start)" } }</caption>
                <thead><tr><th>{ "Phase" }</th><th class="num">{ "Positions" }</th><th class="num">{ "From" }</th><th class="num">{ "To" }</th><th>{ "What it does" }</th><th class="num" title="largest compute time over the mean; late ranks compute ≥ 5 % longer than the mean">{ "Imbalance" }</th><th>{ "Patterns" }</th>
                    if with_routines { <th>{ "Routines" }</th> }</tr></thead>
                <tbody>
                    { for a.phases.iter().enumerate().map(|(i, p)| {
                        let f = focus.clone();
                        let node = p.node;
                        let sel_cb = on_select.clone();
                        let onclick = on_focus.reform(move |_: MouseEvent| { sel_cb.emit(node); Focus { phase: Some(i), ..f.clone() } });
                        html! {
                            <tr class={classes!("phase-row", (focus.phase == Some(i)).then_some("selected"),
                                focus.pattern.is_some_and(|f| p.patterns.iter().any(|(id, _)| *id == Some(f))).then_some("has-pattern"))}
                                data-phase={i.to_string()} {onclick}>
                                <th scope="row">{ super::row_button(focus.phase == Some(i), html! {
                                    <><span class="swatch" style={format!("background: {}", phase_colour(i))}></span>{ i }</>
                                }) }</th>
                                <td class="num">{ format!("{}–{}", p.start, p.end) }</td>
                                <td class="num">{ crate::text::duration(p.time.0.saturating_sub(t0) as f64 * 1e-9) }</td>
                                <td class="num">{ crate::text::duration(p.time.1.saturating_sub(t0) as f64 * 1e-9) }</td>
                                <td class="phase-summary" data-topology={p.topology.as_ref().map(|t| t.label.clone()).unwrap_or_default()}
                                    data-collectives={p.collectives.iter().map(|(n, c)| format!("{n}×{c}")).collect::<Vec<_>>().join(" ")}
                                    data-stage={p.begins_a_stage().to_string()}>
                                    if p.begins_a_stage() { <span class="small">{ format!("{}. ", tracelogic_analysis::phases::STAGE_NOTE) }</span> }
                                    { p.summary() }</td>
                                <td class="num phase-imbalance" data-value={p.imbalance.as_ref().map(|im| format!("{:.4}", im.max_over_mean)).unwrap_or_default()}>{ imbalance_text(p) }</td>
                                <td class="small">{ p.patterns.iter().take(6).map(|(id, n)| match id { Some(id) => format!("#{id}×{n}"), None => format!("outside×{n}") }).collect::<Vec<_>>().join(" ") }</td>
                                if with_routines { <td class="small">{ p.routines.iter().take(3).map(|r| r.0.clone()).collect::<Vec<_>>().join(", ") }</td> }
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
            if !with_routines && !a.phases.is_empty() {
                <p class="note small" id="phases-no-routines">{ "No Routines column: this trace records no call paths (DUMPI traces have none), so no phase can name the routines its calls are made from." }</p>
            }
            // How the phases were found comes after what they are: the thesis' tree holds a node per
            // segment (hundreds on a master-worker run) and is scrolled in a box of its own.
            <h3 id="phases-method-title">{ "How the phases were found" }</h3>
            <div class="phase-panels">
                <div class="tree" id="phases-tree">
                    <h4>{ "Segmentation tree" }</h4>
                    <p class="small" id="phases-tree-help">{ format!("Each segment [start, end) of the pattern sequence with the strength s of its best cut, s = 2N·D_JS / (K·log2 N) − 1; it is cut when s > s0 = {}. A leaf at s = −1.00 has D_JS = 0: every cut leaves the same mix of patterns on both sides.", a.strength_threshold) }</p>
                    if !a.tree.is_empty() {
                        <div class="tree-scroll" tabindex="0" role="group" aria-label={format!("Segmentation tree: {} segments", a.tree.len())}>
                            <ul>{ tree_node(&a.tree, 0, sel, &on_select, &leaves) }</ul>
                        </div>
                    }
                </div>
                <div>
                    <h4>{ format!("Divergence of segment #{sel}") }</h4>
                    if let (Some(seg), Some(points)) = (a.tree.get(sel), result.curves.get(sel)) { { curve_plot(points, seg) } }
                </div>
            </div>
        </>
    };
    wrap(body)
}

fn wrap(body: Html) -> Html {
    html! {
        <section class="view phases" id="view-phases" aria-labelledby="phases-title">
            <h2 id="phases-title">{ "Phases" }</h2>
            { body }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_times_count_from_the_trace_start_as_the_patterns_do() {
        let session = crate::session::Session::new(crate::session::tests::sample_trace("npb-lu.S.8"));
        let start = session.trace().span().0;
        let request = crate::protocol::AnalysisRequest::Phases { strength: 0.0 };
        let result: PhasesResult = crate::session::tests::answer(session.analyse(&request));
        let first = result.analysis.phases.iter().map(|p| p.time.0).min().unwrap();
        assert!(
            first > start,
            "LU's first pattern occurrence comes after its first event"
        );
        assert_eq!(time_origin(Some(start), first), (start, "time since the trace start →"));
        assert_eq!(time_origin(None, first).0, first);
        assert_eq!(
            time_origin(Some(first + 1), first).0,
            first,
            "a start after the first phase is not a trace start"
        );
        assert!(!routines_shown(&result.analysis.phases), "DUMPI records no call paths");
    }

    #[test]
    fn stage_boundaries_are_said_in_the_note_as_the_cli_says_them() {
        // A LAMMPS input of three stages (tests/data/apps, the corpus's archive as a user drops it).
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/apps/lammps-melt-phases-8/dumpi.tar.zst");
        let bytes = std::fs::read(&path).unwrap();
        let trace =
            tracelogic_formats::read_trace(vec![tracelogic_formats::InputFile::new("dumpi.tar.zst", bytes)]).unwrap();
        let session = crate::session::Session::new(trace);
        let request = crate::protocol::AnalysisRequest::Phases { strength: 0.0 };
        let result: PhasesResult = crate::session::tests::answer(session.analyse(&request));
        let a = &result.analysis;
        let stages = a.phases.iter().filter(|p| p.begins_a_stage()).count();
        assert!(stages >= 2, "the gaps between the three stages");
        let note = merge_note(a);
        assert!(
            note.ends_with(&format!("; {stages} stage boundaries at a barrier every rank met)")),
            "{note}"
        );
    }

    #[test]
    fn the_table_names_what_each_phase_does_as_the_cli_does() {
        let session = crate::session::Session::new(crate::session::tests::sample_trace("npb-lu.S.8"));
        let request = crate::protocol::AnalysisRequest::Phases { strength: 0.0 };
        let result: PhasesResult = crate::session::tests::answer(session.analyse(&request));
        let a = &result.analysis;
        assert!(a.leaves >= a.phases.len());
        let note = merge_note(a);
        assert!(
            note.ends_with(&format!("{} leaves (boundaries significant at α = 0.01)", a.leaves)),
            "{note}"
        );
        // The sections line: one item per section, as many as the analysis has (LU: 4).
        let sections = sections_note(a, 0);
        assert!(!a.sections.is_empty(), "LU has sections");
        assert!(
            sections.starts_with(&crate::text::counted(a.sections.len() as u64, "section", "sections")),
            "{sections}"
        );
        assert_eq!(sections.matches("; phase").count() + 1, a.sections.len(), "{sections}");
        // Each named by its own communication graph, as the CLI names it.
        for sec in &a.sections {
            assert!(sections.contains(&format!(" s ({})", sec.summary())), "{sections}");
        }
        // The page asks for described phases: LU's ranks exchange point to point, so some phase
        // names the graph of its exchange.
        assert!(a
            .phases
            .iter()
            .any(|p| p.topology.as_ref().is_some_and(|t| t.ranks >= 2)));
        for p in &a.phases {
            match &p.imbalance {
                Some(im) => assert!(imbalance_text(p).starts_with(&format!("{:.2}", im.max_over_mean))),
                None => assert_eq!(imbalance_text(p), ""),
            }
        }
    }
}
