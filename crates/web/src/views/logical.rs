//! The logical-trace view: accuracy figures, per-rank reproduction share (ranks below 100 %
//! highlighted), the compressed program as foldable nested loops, physical ↔ logical side by
//! side (Table 5), and downloads of the JSON, the text and the C skeleton.
//!
//! On a large run the downloads (the logical trace as JSON and as text, the skeleton) are
//! 70–80 MB on a 24 M-call run: they stay in the worker, and a button asks for its file
//! ([`AnalysisRequest::LogicalDownload`]), saved when the answer comes. The side-by-side text
//! is shown a page of lines at a time.

use super::{download, pending_note, use_parsed, AnalysisState, Focus};
use crate::protocol::{AnalysisRequest, Answer, FromAnswer, LogicalDownload};
use crate::text;
use serde::Deserialize;
use std::cell::Cell;
use std::rc::Rc;
use tracelogic_analysis::compress::{call_text, presence_text, LengthBreakdown, Node};
use tracelogic_analysis::logical::{PlacedBy, SELF_DIRECTION};
use tracelogic_engine::logical::{Accuracy, DirectionsFrom, Program, RankClass, TopologyInfo, Verification};
use yew::prelude::*;

/// What the view draws of a [`crate::protocol::LogicalView`], with the side-by-side text's lines counted once.
#[derive(Deserialize)]
struct Shown {
    topology: TopologyInfo,
    ranks_used: Vec<u32>,
    maximal: bool,
    accuracy: Accuracy,
    verification: Verification,
    program: Program,
    side_by_side: SideBySide,
    #[serde(default)]
    classes: Vec<RankClass>,
    #[serde(default)]
    merge_conflicts: u64,
    no_skeleton: Option<String>,
    #[serde(default)]
    directions_from: Option<DirectionsFrom>,
    /// Ranks that message themselves (where the direction `self` exists), when the answer
    /// carries them.
    #[serde(default)]
    self_ranks: Vec<u32>,
    /// Where the compressed length goes.
    #[serde(default)]
    length_breakdown: LengthBreakdown,
}

/// The note on the direction `self` when the logical trace uses it: a rank's messages to
/// itself, and the ranks that send them (`self_ranks` from the answer, or else the ranks of the
/// merged classes that have the direction).
fn self_note(topology: &TopologyInfo, self_ranks: &[u32], classes: &[RankClass]) -> Option<String> {
    if !topology.directions.iter().any(|d| d == SELF_DIRECTION) {
        return None;
    }
    let mut ranks = self_ranks.to_vec();
    if ranks.is_empty() {
        ranks = classes
            .iter()
            .filter(|c| c.directions.iter().any(|d| d == SELF_DIRECTION))
            .flat_map(|c| c.ranks.iter().copied())
            .collect();
        ranks.sort_unstable();
    }
    let at = if ranks.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = ranks.iter().map(u32::to_string).collect();
        format!(
            " exists at rank{} {}",
            if ranks.len() > 1 { "s" } else { "" },
            list.join(", ")
        )
    };
    Some(format!("Direction {SELF_DIRECTION} (a rank's messages to itself){at}."))
}

/// The side-by-side text and its number of lines, counted once per answer (not on every
/// render: the text is megabytes on a large run).
#[derive(Deserialize)]
#[serde(from = "String")]
struct SideBySide {
    text: String,
    lines: usize,
}

impl FromAnswer for Shown {
    fn from_answer(answer: &Answer) -> Option<Self> {
        let Answer::Logical(v) = answer else { return None };
        let v: crate::protocol::LogicalView = v.clone();
        Some(Shown {
            topology: v.topology,
            ranks_used: v.ranks_used,
            maximal: v.maximal,
            accuracy: v.accuracy,
            verification: v.verification,
            program: v.program,
            side_by_side: SideBySide::from(v.side_by_side),
            classes: v.classes,
            merge_conflicts: v.merge_conflicts,
            no_skeleton: v.no_skeleton,
            directions_from: v.directions_from,
            self_ranks: v.self_ranks,
            length_breakdown: v.length_breakdown,
        })
    }
}

impl From<String> for SideBySide {
    fn from(text: String) -> Self {
        let lines = text.lines().count();
        SideBySide { text, lines }
    }
}

/// The logical view's properties: those of every analysis view, and its downloads' state.
#[derive(Properties, PartialEq)]
pub struct LogicalProps {
    /// The view's analysis.
    pub state: AnalysisState,
    /// Ask the worker for a new analysis or a download.
    pub on_request: Callback<AnalysisRequest>,
    /// The shared selection.
    pub focus: Focus,
    /// Change the shared selection.
    pub on_focus: Callback<Focus>,
    /// The last [`AnalysisRequest::LogicalDownload`] and its answer (the file's text).
    #[prop_or_default]
    pub download: Option<AnalysisState>,
    /// The trace's name as a file-name stem: downloads are `<name>-logical.json`, … (empty: no
    /// prefix).
    #[prop_or_default]
    pub name: String,
}

/// The name download `which` of trace `name` is saved as: `<name>-logical.json`,
/// `<name>-logical.txt`, `<name>-skeleton.c`.
pub fn download_name(name: &str, which: LogicalDownload) -> String {
    if name.is_empty() {
        which.file_name().to_owned()
    } else {
        format!("{name}-{}", which.file_name())
    }
}

thread_local! {
    /// Sequence number of the last download saved, so a re-render saves it only once.
    static SAVED: Cell<u64> = const { Cell::new(0) };
}

/// A button that asks the worker for download `which`.
fn download_button(
    id: &str,
    label: &str,
    which: LogicalDownload,
    on_request: &Callback<AnalysisRequest>,
    busy: bool,
) -> Html {
    let onclick = on_request.reform(move |_: MouseEvent| AnalysisRequest::LogicalDownload { which });
    html! { <button type="button" class="download" id={id.to_owned()} {onclick} disabled={busy}>{ label }</button> }
}

/// Lines of the side-by-side text shown at first, and added by each "more" click.
pub const SIDE_BY_SIDE_PAGE: usize = 500;

/// The first `lines` lines of `text` (with their line breaks), and whether there are more.
fn first_lines(text: &str, lines: usize) -> (&str, bool) {
    match text.match_indices('\n').nth(lines.saturating_sub(1)) {
        Some((at, _)) if lines > 0 => (&text[..=at], at + 1 < text.len()),
        _ if lines == 0 => ("", !text.is_empty()),
        _ => (text, false),
    }
}

fn node(n: &Node, depth: usize) -> Html {
    match n {
        Node::Call {
            id,
            shape,
            sizes,
            tags,
            gap,
            duration_ns,
            present,
        } => {
            html! {
                <li class="call" data-node={id.to_string()}>
                    <code>{ call_text(shape, sizes, tags) }{ presence_text(shape, present) }</code>
                    <span class="small">{ format!(" · compute before {} · in call {}", text::duration(gap.mean_ns as f64 * 1e-9), text::duration(*duration_ns as f64 * 1e-9)) }</span>
                </li>
            }
        }
        Node::Loop { id, count, body } => html! {
            <li class="loop" data-node={id.to_string()}>
                <details open={depth < 2}>
                    <summary>{ format!("loop × {} ({})", count.text(), text::counted(body.len() as u64, "item", "items")) }</summary>
                    <ol>{ for body.iter().map(|b| node(b, depth + 1)) }</ol>
                </details>
            </li>
        },
    }
}

/// Most ranks drawn in the reproduction chart (the table lists them all).
pub const MAX_CHART_RANKS: usize = 64;

/// Each rank's real calls as a bar split into reproduced and not reproduced, with a calls
/// axis and a legend.
fn reproduction_chart(v: &Verification) -> Html {
    let ranks = &v.per_rank;
    if ranks.is_empty() || ranks.len() > MAX_CHART_RANKS {
        return Html::default();
    }
    let (w, row, left, top, bottom) = (520.0, 16.0, 64.0, 30.0, 38.0);
    let max = ranks
        .iter()
        .map(|r| r.real_calls.max(r.expanded_calls))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let ticks = super::whatif::ticks(max, 4);
    let end = ticks.last().copied().unwrap_or(max).max(1.0);
    let x = |n: f64| left + (w - left - 16.0) * n / end;
    let h = top + row * ranks.len() as f64 + bottom;
    html! {
        <svg class="reproduction-chart" id="logical-chart" viewBox={format!("0 0 {w} {h}")} role="img"
            aria-label="Point-to-point operations of each rank, split into those the expanded logical trace reproduces and the others">
            <g class="legend">
                <rect class="reproduced" x={left.to_string()} y="8" width="11" height="11" />
                <text class="tick" x={(left + 15.0).to_string()} y="18">{ "reproduced" }</text>
                <rect class="missed" x={(left + 100.0).to_string()} y="8" width="11" height="11" />
                <text class="tick" x={(left + 115.0).to_string()} y="18">{ "not reproduced" }</text>
                <line class="expanded" x1={(left + 230.0).to_string()} x2={(left + 230.0).to_string()} y1="7" y2="20" />
                <text class="tick" x={(left + 236.0).to_string()} y="18">{ "calls after expansion" }</text>
            </g>
            { for ranks.iter().enumerate().map(|(i, r)| {
                let y = top + row * i as f64;
                let done = r.reproduced.min(r.real_calls) as f64;
                html! {
                    <g class="rank-bar">
                        <text class="tick" x={(left - 6.0).to_string()} y={format!("{:.1}", y + row * 0.7)} text-anchor="end">{ format!("rank {}", r.rank) }</text>
                        <rect class="reproduced" x={left.to_string()} y={format!("{:.1}", y + 2.0)} width={format!("{:.2}", x(done) - left)} height={(row - 4.0).to_string()} />
                        <rect class="missed" x={format!("{:.2}", x(done))} y={format!("{:.1}", y + 2.0)}
                            width={format!("{:.2}", (x(r.real_calls as f64) - x(done)).max(0.0))} height={(row - 4.0).to_string()} />
                        <line class="expanded" x1={format!("{:.2}", x(r.expanded_calls as f64))} x2={format!("{:.2}", x(r.expanded_calls as f64))}
                            y1={format!("{:.1}", y + 1.0)} y2={format!("{:.1}", y + row - 1.0)} />
                        <title>{ format!("rank {}: {} point-to-point operations, {} reproduced, {} after expansion", r.rank, r.real_calls, r.reproduced, r.expanded_calls) }</title>
                    </g>
                }
            }) }
            <line class="axis" x1={left.to_string()} x2={(w - 16.0).to_string()} y1={(h - bottom).to_string()} y2={(h - bottom).to_string()} />
            { for ticks.iter().map(|&t| html! {
                <>
                    <line class="axis" x1={format!("{:.1}", x(t))} x2={format!("{:.1}", x(t))} y1={(h - bottom).to_string()} y2={(h - bottom + 4.0).to_string()} />
                    <text class="tick" x={format!("{:.1}", x(t))} y={(h - bottom + 16.0).to_string()} text-anchor="middle">{ text::count(t as u64) }</text>
                </>
            }) }
            <text class="tick axis-label" x={format!("{:.1}", (left + w - 16.0) / 2.0)} y={(h - 6.0).to_string()} text-anchor="middle">{ "MPI calls" }</text>
        </svg>
    }
}

/// When classes were merged (no maximal rank, or one whose trace alone misses some class's own
/// operations): which classes of ranks were merged, what each gave, and the records
/// each sees but executes otherwise (rank-dependent behaviour).
fn merged_classes(info: &Shown) -> Html {
    if info.classes.is_empty() {
        return Html::default();
    }
    html! {
        <table class="reproduction classes" id="logical-classes">
            <caption>{ format!("Merged classes of ranks (same neighbours): {} of {} merged, {} record{} not executed as such by every class that sees {}",
                info.classes.iter().filter(|c| c.merged).count(), info.classes.len(), info.merge_conflicts,
                if info.merge_conflicts == 1 { "" } else { "s" }, if info.merge_conflicts == 1 { "it" } else { "them" }) }</caption>
            <thead><tr><th>{ "Ranks" }</th><th>{ "Directions" }</th><th class="num">{ "Records given" }</th><th class="num">{ "Conflicts" }</th></tr></thead>
            <tbody>
                { for info.classes.iter().map(|c| html! {
                    <tr class={classes!((!c.merged || c.conflicts > 0).then_some("below"))} data-rank={c.rank.to_string()}>
                        <td>{ c.ranks.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ") }</td>
                        <td>{ c.directions.join(" ") }</td>
                        <td class="num">{ c.records }</td>
                        <td class="num">{ if c.merged { c.conflicts.to_string() } else { "left out".to_string() } }</td>
                    </tr>
                }) }
            </tbody>
        </table>
    }
}

/// The logical-trace view.
#[function_component(LogicalView)]
pub fn logical_view(props: &LogicalProps) -> Html {
    let side_lines = use_state(|| SIDE_BY_SIDE_PAGE);
    {
        let download_state = props.download.clone();
        let name = props.name.clone();
        use_effect_with(download_state, move |state| {
            let Some(state) = state.as_ref().filter(|s| !s.pending) else {
                return;
            };
            if let (Some(Ok(Answer::Download(text))), Some(AnalysisRequest::LogicalDownload { which })) =
                (state.result.as_deref(), &state.request)
            {
                if SAVED.with(|s| s.replace(state.seq)) != state.seq {
                    download(&download_name(&name, *which), which.mime(), text);
                }
            }
        });
    }
    let r: Rc<Shown> = match use_parsed(&props.state) {
        Ok(r) => r,
        Err(page) => return wrap(page),
    };
    let busy = props.download.as_ref().is_some_and(|d| d.pending);
    // Sizes the data choose are summarised unless the user asks for every one.
    let exact_sizes = matches!(
        props.state.request,
        Some(AnalysisRequest::Logical { exact_sizes: true })
    );
    let on_exact_sizes = props.on_request.reform(|e: Event| AnalysisRequest::Logical {
        exact_sizes: e.target_unchecked_into::<web_sys::HtmlInputElement>().checked(),
    });
    let download_error = props
        .download
        .as_ref()
        .filter(|d| !d.pending)
        .and_then(|d| d.result.as_deref())
        .and_then(|r| r.as_ref().err());
    let v = &r.verification;
    let a = &r.accuracy;
    let p = &r.program;
    let focus = props.focus.clone();
    let used: Vec<String> = r.ranks_used.iter().map(|x| x.to_string()).collect();
    let (shown_side, more_side) = first_lines(&r.side_by_side.text, *side_lines);
    let side_total = r.side_by_side.lines;
    let show_more = {
        let side_lines = side_lines.clone();
        Callback::from(move |_: MouseEvent| side_lines.set(*side_lines + SIDE_BY_SIDE_PAGE))
    };
    let body = html! {
        <>
            if r.directions_from.as_ref().is_some_and(|d| d.placed_by == PlacedBy::CollectivesOnly) {
                <p class="headline" id="logical-collectives-only">
                    { "No point-to-point traffic: the logical trace is the program's collectives (no directions), from rank " }
                    { used.join(", ") }
                </p>
            } else {
            <p class="headline">
                { "Logical trace on a " }<strong id="logical-topology">{ &r.topology.label }</strong>
                { format!(" (directions {}), from rank{} {}{}", r.topology.directions.join(", "), if used.len() > 1 { "s" } else { "" },
                    used.join(", "), if r.maximal && r.classes.is_empty() { " (a maximal rank)" } else if r.maximal { " (a maximal rank, but its trace alone does not give every class its own operations, so the classes were merged)" } else { " (merged: no rank has every neighbour)" }) }
            </p>
            }
            if let Some(d) = r.directions_from.as_ref().filter(|d| d.worth_showing() && d.placed_by != PlacedBy::CollectivesOnly) {
                <p class="note" id="logical-directions-from">{ format!("Directions from the {}", d.reason) }</p>
            }
            if let Some(note) = self_note(&r.topology, &r.self_ranks, &r.classes) {
                <p class="note" id="logical-self">{ note }</p>
            }
            { pending_note(&props.state) }
            <p class="note" id="logical-length">{ format!("Compressed length: {}.", r.length_breakdown.text()) }</p>
            <dl class="stats" id="logical-figures">
                <div class="stat" data-stat="raw" data-value={p.raw_length.to_string()}><dt>{ "Records" }</dt><dd>{ text::count(p.raw_length as u64) }</dd></div>
                <div class="stat" data-stat="compressed" data-value={p.compressed_length.to_string()}><dt>{ "Compressed" }</dt><dd>{ format!("{} (ratio {:.1}, depth {})", text::count(p.compressed_length as u64), p.ratio, p.depth) }</dd></div>
                if a.offset_calls > 0 {
                    <div class="stat" data-stat="offsets" data-value={a.offset_calls.to_string()}><dt>{ "Outside the topology, as offsets" }</dt><dd>{ format!("{} calls, {} bytes", text::count(a.offset_calls), text::count(a.offset_bytes)) }</dd></div>
                }
                <div class="stat"><dt>{ "Dropped calls" }</dt><dd>{ text::percent(a.dropped_calls_fraction) }</dd></div>
                <div class="stat"><dt>{ "Dropped bytes" }</dt><dd>{ text::percent(a.dropped_bytes_fraction) }</dd></div>
                <div class="stat" data-stat="reproduced" data-value={v.overall_share.to_string()}><dt>{ "Reproduced by expansion" }</dt><dd>{ text::percent(v.overall_share) }</dd></div>
                <div class="stat" data-stat="structure" data-value={v.structure_share.to_string()} data-differs={v.ranks_structure_differs.len().to_string()}
                    data-outside={v.operations_outside_topology.to_string()} data-offsets={v.operations_as_offsets.to_string()}>
                    <dt>{ "Structure" }</dt>
                    <dd>{ v.structure_text() }</dd>
                </div>
                <div class="stat" data-stat="volume" data-value={v.volume_error.to_string()} data-sizes-differ={v.ranks_bytes_differ.len().to_string()}>
                    <dt>{ "Volume" }</dt>
                    <dd>{ v.volume_text() }</dd>
                </div>
                if let Some(t) = v.completions_text() {
                    <div class="stat" data-stat="completions" data-value={v.real_completion_calls.to_string()} data-expanded={v.expanded_completion_calls.to_string()}>
                        <dt>{ "Completion calls" }</dt>
                        <dd>{ t }</dd>
                    </div>
                }
            </dl>
            <p class="downloads">
                <label title="Keep every message size in the program and the C skeleton (runs or lists of any length) instead of a histogram or statistics of sizes the data choose">
                    <input type="checkbox" id="logical-exact-sizes" checked={exact_sizes} onchange={on_exact_sizes} disabled={props.state.pending} />{ " Exact sizes " }
                </label>
                { download_button("logical-json", "Download JSON", LogicalDownload::Json, &props.on_request, busy) }
                { download_button("logical-text", "Download text", LogicalDownload::Text, &props.on_request, busy) }
                if r.no_skeleton.is_none() {
                    { download_button("logical-skeleton", "Download C skeleton", LogicalDownload::Skeleton, &props.on_request, busy) }
                }
                if busy { <span class="small waiting" id="logical-download-status" role="status">{ " Preparing the file in the analysis worker…" }</span> }
            </p>
            if let Some(e) = download_error { <div id="logical-download-error">{ super::error_box(e) }</div> }
            if let Some(e) = &r.no_skeleton { <p class="note">{ format!("No C skeleton: {e}") }</p> }
            if !r.classes.is_empty() { { merged_classes(&r) } }
            <div class="logical-panels">
                <table class="reproduction" id="logical-ranks">
                    <caption>{ format!("Per-rank reproduction ({} below 100 %)", v.ranks_below_full.len()) }
                        <span class="small" id="logical-counts-note">{ " · counts point-to-point operations only (each send and receive); the Summary counts every MPI call" }</span></caption>
                    <thead><tr><th>{ "Rank" }</th><th class="num" title="Point-to-point operations (sends and receives) of the rank in the trace">{ "P2P operations" }</th><th class="num">{ "Expanded" }</th><th class="num">{ "Reproduced" }</th><th class="num">{ "Share" }</th></tr></thead>
                    <tbody>
                        { for v.per_rank.iter().map(|x| {
                            let rank = x.rank;
                            let f = focus.clone();
                            let onclick = props.on_focus.reform(move |_: MouseEvent| Focus { rank: (f.rank != Some(rank)).then_some(rank), ..f.clone() });
                            let class = classes!((x.share < 1.0).then_some("below"), (focus.rank == Some(rank)).then_some("selected"));
                            html! {
                                <tr {class} data-rank={rank.to_string()} data-share={x.share.to_string()} {onclick}>
                                    <th scope="row">{ super::row_button(focus.rank == Some(rank), html! { { rank } }) }</th><td class="num">{ text::count(x.real_calls) }</td><td class="num">{ text::count(x.expanded_calls) }</td>
                                    <td class="num">{ text::count(x.reproduced) }</td><td class="num">{ text::percent(x.share) }</td>
                                </tr>
                            }
                        }) }
                    </tbody>
                </table>
                { reproduction_chart(v) }
                <div class="program" id="logical-program">
                    <h3>{ "Compressed program" }</h3>
                    <ol>{ for p.nodes.iter().map(|n| node(n, 0)) }</ol>
                </div>
            </div>
            <h3>{ "Physical ↔ logical (Table 5)" }</h3>
            <pre class="side-by-side" id="logical-side-by-side">{ shown_side }</pre>
            if more_side {
                <p class="more-lines">
                    <button type="button" class="secondary" id="logical-side-by-side-more" onclick={show_more}>
                        { format!("Show {} more lines", text::count(SIDE_BY_SIDE_PAGE as u64)) }
                    </button>
                    <span class="small">{ format!(" {} of {} lines shown; the text download has them all.",
                        text::count(*side_lines as u64), text::count(side_total as u64)) }</span>
                </p>
            }
        </>
    };
    wrap(body)
}

fn wrap(body: Html) -> Html {
    html! {
        <section class="view logical" id="view-logical" aria-labelledby="logical-title">
            <h2 id="logical-title">{ "Logical trace" }</h2>
            { body }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downloads_are_named_after_the_trace() {
        assert_eq!(
            download_name("dumpi-2026.11.22.08.59.38", LogicalDownload::Json),
            "dumpi-2026.11.22.08.59.38-logical.json"
        );
        assert_eq!(
            download_name("npb-lu.S.8", LogicalDownload::Text),
            "npb-lu.S.8-logical.txt"
        );
        assert_eq!(
            download_name("npb-lu.S.8", LogicalDownload::Skeleton),
            "npb-lu.S.8-skeleton.c"
        );
        assert_eq!(download_name("", LogicalDownload::Skeleton), "skeleton.c");
    }

    #[test]
    fn first_lines_stop_after_the_nth_line_break() {
        assert_eq!(first_lines("a\nb\nc\n", 2), ("a\nb\n", true));
        assert_eq!(first_lines("a\nb\nc\n", 3), ("a\nb\nc\n", false));
        assert_eq!(first_lines("a\nb\nc", 2), ("a\nb\n", true));
        assert_eq!(first_lines("a\nb", 5), ("a\nb", false));
        assert_eq!(first_lines("a\n", 0), ("", true));
        assert_eq!(first_lines("", 3), ("", false));
    }

    #[test]
    fn the_self_direction_is_noted_with_its_ranks() {
        let topology = |directions: &[&str]| TopologyInfo {
            family: "nas-cg".into(),
            dims: vec![4, 4],
            label: "NAS CG 4x4".into(),
            directions: directions.iter().map(|d| d.to_string()).collect(),
        };
        let class = |ranks: Vec<u32>, directions: &[&str]| RankClass {
            rank: ranks[0],
            ranks,
            directions: directions.iter().map(|d| d.to_string()).collect(),
            records: 1,
            conflicts: 0,
            merged: true,
        };
        let classes = vec![
            class(vec![1, 2, 3], &["row-bit0", "transpose"]),
            class(vec![15, 0, 5], &["row-bit0", "self"]),
        ];
        let cg = topology(&["row-bit0", "transpose", "self"]);
        assert_eq!(
            self_note(&cg, &[], &classes).as_deref(),
            Some("Direction self (a rank's messages to itself) exists at ranks 0, 5, 15.")
        );
        assert_eq!(
            self_note(&cg, &[10], &classes).as_deref(),
            Some("Direction self (a rank's messages to itself) exists at rank 10.")
        );
        assert_eq!(self_note(&topology(&["row-bit0", "transpose"]), &[], &classes), None);
    }

    #[test]
    fn the_view_reads_the_answer_and_the_downloads_stay_out_of_it() {
        let session = crate::session::Session::new(crate::session::tests::sample_trace("npb-lu.S.8"));
        let answer = session
            .analyse(&AnalysisRequest::Logical { exact_sizes: false })
            .unwrap();
        let Answer::Logical(full) = &answer else {
            panic!("{answer:?}")
        };
        let shown = Shown::from_answer(&answer).unwrap();
        assert_eq!(shown.program, full.program);
        assert_eq!(shown.verification, full.verification);
        assert_eq!(shown.side_by_side.text, full.side_by_side);
        assert_eq!(shown.side_by_side.lines, full.side_by_side.lines().count());
        assert_eq!(shown.classes, full.classes);
        assert_eq!(shown.merge_conflicts, full.merge_conflicts);
        let json: String = crate::session::tests::answer(session.analyse(&AnalysisRequest::LogicalDownload {
            which: LogicalDownload::Json,
        }));
        let answer_bytes = serde_json::to_string(&answer).unwrap().len();
        assert!(
            answer_bytes < json.len(),
            "the answer ({answer_bytes} bytes) carries no download ({} bytes)",
            json.len()
        );
        let logical: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(logical["classes"].as_array().map(Vec::len), Some(shown.classes.len()));
        assert!(
            !shown.classes.is_empty(),
            "no rank of LU S.8 has every neighbour: its classes are merged"
        );
    }
}
