//! The patterns view: the communication patterns (sortable by occurrences, ranks involved and
//! length), the event graph of the selected pattern (zoomable, one occurrence at a time, laid out
//! in logical order or real time), the whole run as a timeline coloured by pattern, and JSON
//! export.

use super::{download_button, pending_note, seconds, use_parsed, AnalysisProps, Focus};
use crate::protocol::PatternsReport as PatternsResult;
use std::collections::BTreeMap;
use std::rc::Rc;
use tracelogic_analysis::patterns::neighbourhood::{neighbourhood, Neighbourhood};
use tracelogic_analysis::patterns::{CommunicationPattern, EventGraph, PatternTimeline};
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// Colours of the first patterns (by id, most frequent first) in the timeline and its legend;
/// readable on the light and the dark background.
pub const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#8cd17d",
];
/// Colour of patterns beyond the palette.
pub const OTHER_COLOUR: &str = "#9a9a9a";

/// The colour of pattern `id` in the timeline.
pub fn colour(id: u32) -> &'static str {
    PALETTE.get(id as usize).copied().unwrap_or(OTHER_COLOUR)
}

/// Horizontal placement of the event graph's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Lamport logical time: after the previous event of the rank and after the matching send.
    Logical,
    /// Entry time of each event's call, scaled to the same width.
    RealTime,
}

/// Largest zoom factor of the event graph.
pub const MAX_ZOOM: f64 = 64.0;

/// The SVG viewBox of a `w × h` drawing at `zoom` (≥ 1), panned to fractions `pan_x`, `pan_y`
/// (0 = left/top edge, 1 = right/bottom edge).
pub fn view_box(w: f64, h: f64, zoom: f64, pan_x: f64, pan_y: f64) -> String {
    let z = zoom.clamp(1.0, MAX_ZOOM);
    let (vw, vh) = (w / z, h / z);
    let x = (w - vw) * pan_x.clamp(0.0, 1.0);
    let y = (h - vh) * pan_y.clamp(0.0, 1.0);
    format!("{x:.1} {y:.1} {vw:.1} {vh:.1}")
}

/// Ranks listed in a heading or tooltip: consecutive ranks as ranges (`0-3, 8, 10-12`), at most
/// `max_runs` ranges or single ranks and then `… (N ranks)`, so a pattern on 4,096 ranks names
/// them in a line rather than a page.
pub fn rank_list(ranks: &[u32], max_runs: usize) -> String {
    let mut sorted = ranks.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let runs = tracelogic_model::query::rank_runs(sorted.iter().copied());
    let mut text = tracelogic_model::query::rank_runs_text(&runs[..runs.len().min(max_runs.max(1))]);
    if runs.len() > max_runs.max(1) {
        text.push_str(&format!(", … ({} ranks)", grouped(sorted.len())));
    }
    text
}

/// `n` with thousands separated by commas (`4,096`).
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Ranges and ranks shown in the heading of a pattern before `… (N ranks)`.
pub const LISTED_RANK_RUNS: usize = 12;

/// Spans of one lane in pixels, `(x0, x1, pattern)`: spans of one pattern less than a pixel
/// apart are drawn as one rectangle, so a lane costs at most about one rectangle per pixel.
pub fn lane_rects(
    spans: &[tracelogic_analysis::patterns::TimelineSpan],
    t0: u64,
    t1: u64,
    width: f64,
) -> Vec<(f64, f64, u32)> {
    let scale = width / (t1.saturating_sub(t0).max(1) as f64);
    let mut out: Vec<(f64, f64, u32)> = Vec::new();
    for s in spans {
        let x0 = s.start.saturating_sub(t0) as f64 * scale;
        let x1 = (s.end.saturating_sub(t0) as f64 * scale).max(x0 + 0.5);
        match out.last_mut() {
            Some(last) if last.2 == s.pattern && x0 - last.1 < 1.0 => last.1 = last.1.max(x1),
            _ => out.push((x0, x1, s.pattern)),
        }
    }
    out
}

/// Sort order of the pattern list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    /// Most events covered first (the report's order: what explains most of the run).
    Covered,
    /// Most occurrences first.
    Occurrences,
    /// Most ranks first.
    Ranks,
    /// Longest (most events) first.
    Length,
}

/// The patterns the list shows: with `all` every one, else those the report shows by default
/// (covering at least its `min_share` of the events) and `focused` when it is hidden. A report
/// without the shown/hidden counts (saved before they existed) shows every pattern.
pub fn listed(r: &PatternsResult, all: bool, focused: Option<usize>) -> Vec<&CommunicationPattern> {
    let counted = r.shown_patterns + r.hidden_patterns == r.patterns.len() && !r.patterns.is_empty();
    if all || !counted {
        return r.patterns.iter().collect();
    }
    let mut v: Vec<&CommunicationPattern> = r.shown().iter().collect();
    if let Some(p) = focused.and_then(|id| r.patterns[r.shown().len()..].iter().find(|p| p.id == id)) {
        v.push(p);
    }
    v
}

/// The note under the list: `112 more patterns covering 0.8 % of events hidden`, as
/// `tracelogic patterns` prints it; `None` when nothing is hidden.
pub fn hidden_note(r: &PatternsResult) -> Option<String> {
    r.hidden_note()
}

/// Events in one occurrence of `p`, over all its ranks.
pub fn length(p: &CommunicationPattern) -> usize {
    p.events.values().map(|e| e.len()).sum()
}

/// Direction and peer of an event name such as `S4` (send to 4) or `R1` (receive from 1).
pub fn peer_of(event: &str) -> Option<(char, u32)> {
    let mut chars = event.chars();
    let dir = chars.next().filter(|c| *c == 'S' || *c == 'R')?;
    let digits: String = chars.take_while(char::is_ascii_digit).collect();
    digits.parse().ok().map(|p| (dir, p))
}

/// Send → receive arrows of one occurrence: the k-th send from `a` to `b` meets the k-th receive
/// on `b` from `a`. Each end is `(rank, event index)`.
pub fn arrows(p: &CommunicationPattern) -> Vec<((u32, usize), (u32, usize))> {
    let mut receives: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
    for (&rank, events) in &p.events {
        for (i, e) in events.iter().enumerate() {
            if let Some(('R', from)) = peer_of(e) {
                receives.entry((from, rank)).or_default().push(i);
            }
        }
    }
    let mut used: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (&rank, events) in &p.events {
        for (i, e) in events.iter().enumerate() {
            if let Some(('S', to)) = peer_of(e) {
                let k = used.entry((rank, to)).or_default();
                if let Some(&j) = receives.get(&(rank, to)).and_then(|r| r.get(*k)) {
                    out.push(((rank, i), (to, j)));
                }
                *k += 1;
            }
        }
    }
    out
}

/// Where each event of one occurrence is drawn: `(x, y)` per event of `g`, the drawing's width
/// and height.
pub fn graph_layout(g: &EventGraph, layout: Layout) -> (Vec<(f64, f64)>, f64, f64) {
    let (dx, lane, left) = (16.0, 34.0, 64.0);
    let plot = dx * (g.logical_width.max(1) as f64);
    let w = left + plot + dx;
    let h = lane * (g.ranks.len() as f64 + 0.5);
    let t0 = g.events.iter().map(|e| e.time).min().unwrap_or(0);
    let t1 = g.events.iter().map(|e| e.time).max().unwrap_or(0);
    let span = t1.saturating_sub(t0).max(1) as f64;
    let at = g
        .events
        .iter()
        .map(|e| {
            let x = match layout {
                Layout::Logical => left + dx * (e.logical as f64 + 0.5),
                Layout::RealTime => left + dx * 0.5 + (plot - dx) * ((e.time - t0) as f64 / span),
            };
            (x, lane * (e.lane as f64 + 0.75))
        })
        .collect();
    (at, w, h)
}

/// Events above which an event graph is drawn compactly: one path for all messages (no
/// arrowheads) and one per kind of event (no tooltips). An element per event and message made a
/// 64-rank occurrence (about 6,000 events, 19,500 elements) one main-thread task of a quarter of
/// a second.
pub const COMPACT_GRAPH_EVENTS: usize = 1500;

/// `v` to one decimal, as `{v:.1}` writes it, through integer formatting: a compact graph writes
/// tens of thousands of coordinates, and float formatting was most of its drawing time.
fn push_tenths(d: &mut String, v: f64) {
    let tenths = (v * 10.0).round() as i64;
    if tenths < 0 {
        d.push('-');
    }
    let mut t = tenths.unsigned_abs();
    let mut digits = [0u8; 24];
    let mut at = digits.len();
    for place in 0.. {
        if place == 1 {
            at -= 1;
            digits[at] = b'.';
        }
        at -= 1;
        digits[at] = b'0' + (t % 10) as u8;
        t /= 10;
        if t == 0 && place >= 1 {
            break;
        }
    }
    d.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

/// SVG path data of a segment from each first point to its second.
fn segments_path(segments: impl Iterator<Item = ((f64, f64), (f64, f64))>) -> String {
    let mut d = String::new();
    for ((x1, y1), (x2, y2)) in segments {
        d.push('M');
        push_tenths(&mut d, x1);
        d.push(' ');
        push_tenths(&mut d, y1);
        d.push('L');
        push_tenths(&mut d, x2);
        d.push(' ');
        push_tenths(&mut d, y2);
    }
    d
}

/// SVG path data of a dot of radius 4 at each point.
fn dots_path(points: impl Iterator<Item = (f64, f64)>) -> String {
    let mut d = String::new();
    for (x, y) in points {
        d.push('M');
        push_tenths(&mut d, x - 4.0);
        d.push(' ');
        push_tenths(&mut d, y);
        d.push_str("a4 4 0 1 0 8 0a4 4 0 1 0 -8 0");
    }
    d
}

/// The kind of an event for its colour: `send`, `recv` or `other`.
fn event_kind(symbol: &str) -> &'static str {
    match peer_of(symbol) {
        Some(('S', _)) => "send",
        Some(_) => "recv",
        None => "other",
    }
}

/// A large graph's messages and events as four paths ([`COMPACT_GRAPH_EVENTS`]).
fn compact_marks(segments: String, events: &[((f64, f64), &'static str)]) -> Html {
    html! {
        <>
            <path class="message" d={segments} fill="none" />
            { for ["send", "recv", "other"].into_iter().map(|kind| {
                let d = dots_path(events.iter().filter(|e| e.1 == kind).map(|e| e.0));
                html! { <path class={format!("event {kind}")} d={d} /> }
            }) }
        </>
    }
}

/// Most ranks drawn in an event graph (the first ones): past that an occurrence is a drawing
/// thousands of lanes tall that no one reads, and its tens of thousands of events cost the page
/// half a second to draw.
pub const MAX_GRAPH_LANES: usize = 256;

/// Above this many lines an event graph fitted to the page cannot be read (at 64 lines a line is
/// 7 px): it is drawn as one rank of each kind and its partners ([`neighbourhood`]) until the
/// user asks for every line.
pub const MAX_READABLE_LANES: usize = 16;

/// Most rank labels drawn on an event graph at once.
pub const MAX_RANK_LABELS: usize = 256;

/// The rank names of a zoomed event graph, drawn last over a band at the left edge of what is
/// shown: each label sits on its rank's line and is scaled by `1 / zoom`, so zooming in spreads
/// the lines apart and pans with them without enlarging the text.
fn rank_labels(
    ranks: &[u32],
    alike: Option<&[usize]>,
    (w, h): (f64, f64),
    zoom: f64,
    pan: (f64, f64),
    left: f64,
    lane: f64,
) -> Html {
    let z = zoom.clamp(1.0, MAX_ZOOM);
    let (vw, vh) = (w / z, h / z);
    let x = (w - vw) * pan.0.clamp(0.0, 1.0);
    let top = (h - vh) * pan.1.clamp(0.0, 1.0);
    let shown = |y: f64| y >= top - lane && y <= top + vh + lane;
    let visible = ranks
        .iter()
        .enumerate()
        .filter(|&(i, _)| shown(lane * (i as f64 + 0.75)))
        .count();
    // Past a few hundred lanes on screen the labels would overlap: every `step`-th is drawn.
    let step = visible.div_ceil(MAX_RANK_LABELS).max(1);
    let name = |i: usize, r: u32| match alike.and_then(|a| a.get(i)) {
        Some(&n) if n > 1 => format!("rank {r} ×{n}"),
        _ => format!("rank {r}"),
    };
    html! {
        <g class="rank-labels">
            <rect class="label-band" x={format!("{x:.1}")} y={format!("{top:.1}")} width={format!("{:.2}", (left - 4.0) / z)} height={format!("{vh:.1}")} />
            { for ranks.iter().enumerate().map(|(i, &r)| (i, r, lane * (i as f64 + 0.75))).filter(|&(_, _, y)| shown(y)).step_by(step).map(|(i, r, y)| html! {
                <text class="tick" text-anchor="end" data-rank={r.to_string()}
                    transform={format!("translate({:.2} {y:.1}) scale({:.4})", x + (left - 8.0) / z, 1.0 / z)} y="4">{ name(i, r) }</text>
            }) }
        </g>
    }
}

/// The occurrence's event graph: ranks as lines, events as points, arrows send → receive.
fn event_graph(
    p: &CommunicationPattern,
    g: &EventGraph,
    alike: Option<&[usize]>,
    layout: Layout,
    zoom: f64,
    pan: (f64, f64),
    onwheel: Callback<WheelEvent>,
) -> Html {
    let (at, w, _) = graph_layout(g, layout);
    let lane = 34.0;
    let left = 64.0;
    let lanes = g.ranks.len().min(MAX_GRAPH_LANES);
    let h = lane * (lanes as f64 + 0.5);
    let drawn = |event: usize| g.events[event].lane < lanes;
    let compact = g.events.len() > COMPACT_GRAPH_EVENTS;
    html! {
        <svg class="event-graph" id="pattern-graph" viewBox={view_box(w, h, zoom, pan.0, pan.1)} width={format!("{w:.0}")} height={format!("{h:.0}")} role="img"
            aria-label={format!("Event graph of pattern {}, occurrence {}", p.id, g.occurrence + 1)} data-pattern={p.id.to_string()} data-compact={compact.to_string()}
            data-ranks-drawn={lanes.to_string()} data-occurrence={g.occurrence.to_string()} data-layout={if layout == Layout::Logical { "logical" } else { "time" }} {onwheel}>
            <defs>
                <marker id="arrowhead" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
                    <path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead" />
                </marker>
            </defs>
            if compact {
                <g class="rank-lines"><path d={segments_path((0..lanes).map(|i| {
                    let y = lane * (i as f64 + 0.75);
                    ((left, y), (w - 4.0, y))
                }))} /></g>
            } else {
                { for g.ranks[..lanes].iter().enumerate().map(|(i, &r)| {
                    let y = lane * (i as f64 + 0.75);
                    html! {
                        <g class="rank-line" data-rank={r.to_string()}>
                            <line x1={left.to_string()} x2={format!("{:.1}", w - 4.0)} y1={format!("{y:.1}")} y2={format!("{y:.1}")} />
                        </g>
                    }
                }) }
            }
            if compact {
                { compact_marks(
                    segments_path(g.arrows.iter().filter(|a| drawn(a.from) && drawn(a.to)).map(|a| (at[a.from], at[a.to]))),
                    &g.events.iter().zip(&at).filter(|(e, _)| e.lane < lanes).map(|(e, &xy)| (xy, event_kind(&e.symbol))).collect::<Vec<_>>(),
                ) }
            } else {
                { for g.arrows.iter().map(|a| {
                    let ((x1, y1), (x2, y2)) = (at[a.from], at[a.to]);
                    html! { <line class="message" x1={format!("{x1:.1}")} y1={format!("{y1:.1}")} x2={format!("{x2:.1}")} y2={format!("{y2:.1}")} marker-end="url(#arrowhead)" /> }
                }) }
                { for g.events.iter().zip(&at).map(|(e, &(x, y))| {
                    let class = format!("event {}", event_kind(&e.symbol));
                    html! { <circle {class} cx={format!("{x:.1}")} cy={format!("{y:.1}")} r="4"><title>{ format!("rank {}, event {}: {} (logical {}, entered {} ns)", e.rank, e.event, e.symbol, e.logical, e.time) }</title></circle> }
                }) }
            }
            { rank_labels(&g.ranks[..lanes], alike, (w, h), zoom, pan, left, lane) }
        </svg>
    }
}

/// The whole run as one lane per rank, each pattern occurrence a span in its colour.
fn timeline_view(
    t: &PatternTimeline,
    patterns: &[CommunicationPattern],
    focus: &Focus,
    on_focus: &Callback<Focus>,
) -> Html {
    let (left, lane, width) = (64.0, 14.0, 860.0);
    let h = lane * t.lanes.len() as f64 + 4.0;
    let selected = focus.pattern.map(|p| p as u32);
    let mut shown: Vec<u32> = t.lanes.iter().flat_map(|l| l.spans.iter().map(|s| s.pattern)).collect();
    shown.sort_unstable();
    shown.dedup();
    let merged = t.lanes.iter().any(|l| l.merged);
    let pick = |id: u32| {
        let focus = focus.clone();
        on_focus.reform(move |_: MouseEvent| Focus {
            pattern: Some(id as usize),
            ..focus.clone()
        })
    };
    // One listener for every span (a lane can hold a span per pixel: a closure and a listener
    // per span made drawing the view one long main-thread task).
    let on_span_click = {
        let (focus, on_focus) = (focus.clone(), on_focus.clone());
        Callback::from(move |e: MouseEvent| {
            let id = e
                .target_dyn_into::<web_sys::Element>()
                .and_then(|el| el.get_attribute("data-pattern"))
                .and_then(|v| v.parse::<usize>().ok());
            if let Some(id) = id {
                on_focus.emit(Focus {
                    pattern: Some(id),
                    ..focus.clone()
                });
            }
        })
    };
    html! {
        <div class="pattern-timeline">
            <h3>{ "The run coloured by pattern" }</h3>
            <div class="scroll">
                <svg class="timeline" id="patterns-timeline" viewBox={format!("0 0 {:.0} {h:.0}", left + width + 4.0)} width={format!("{:.0}", left + width + 4.0)} role="img"
                    aria-label="Timeline of the run, one lane per rank, coloured by communication pattern" onclick={on_span_click}>
                    { for t.lanes.iter().enumerate().map(|(i, l)| {
                        let y = lane * i as f64 + 2.0;
                        html! {
                            <g class="timeline-lane" data-rank={l.rank.to_string()}>
                                <text class="tick" x={(left - 6.0).to_string()} y={format!("{:.1}", y + lane - 4.0)} text-anchor="end">{ format!("rank {}", l.rank) }</text>
                                { for lane_rects(&l.spans, t.start, t.end, width).into_iter().map(|(x0, x1, id)| {
                                    let class = classes!("timeline-span", (selected == Some(id)).then_some("selected"));
                                    html! {
                                        <rect {class} data-pattern={id.to_string()} x={format!("{:.1}", left + x0)} y={format!("{y:.1}")} width={format!("{:.1}", x1 - x0)} height={format!("{:.1}", lane - 3.0)}
                                            fill={colour(id)}>
                                            <title>{ format!("rank {}: pattern #{id}", l.rank) }</title>
                                        </rect>
                                    }
                                }) }
                            </g>
                        }
                    }) }
                </svg>
            </div>
            <ul class="pattern-legend" id="patterns-legend">
                { for shown.iter().map(|&id| {
                    let occ = patterns.get(id as usize).map_or(0, |p| p.occurrences);
                    html! {
                        <li data-pattern={id.to_string()}>
                            <button type="button" class="legend-item" aria-pressed={(selected == Some(id)).to_string()} onclick={pick(id)}>
                                <span class="swatch" style={format!("background:{}", colour(id))}></span>{ format!("#{id} ({occ}×)") }
                            </button>
                        </li>
                    }
                }) }
                if shown.iter().any(|&id| id as usize >= PALETTE.len()) {
                    <li><span class="swatch" style={format!("background:{OTHER_COLOUR}")}></span>{ format!("patterns past #{}", PALETTE.len() - 1) }</li>
                }
            </ul>
            <p class="small">
                { "Each lane is a rank; each coloured span is the rank's part of one pattern occurrence (white: outside any pattern). Click a span, or a pattern above, to select it." }
                if merged { { " Consecutive occurrences of one pattern are merged on crowded lanes." } }
                if t.ranks_left_out > 0 { { format!(" {} more ranks are not drawn.", t.ranks_left_out) } }
            </p>
        </div>
    }
}

/// The patterns view.
#[function_component(PatternsView)]
pub fn patterns_view(props: &AnalysisProps) -> Html {
    let sort = use_state(|| SortBy::Covered);
    // (pattern id, occurrence index): stepping resets when another pattern is selected.
    let occurrence = use_state(|| (usize::MAX, 0usize));
    let zoom = use_state(|| 1.0f64);
    let pan = use_state(|| (0.0f64, 0.0f64));
    let layout = use_state(|| Layout::Logical);
    // Draw every line of a large event graph instead of one rank of each kind and its partners.
    let every_lane = use_state(|| false);
    let result: Rc<PatternsResult> = match use_parsed(&props.state) {
        Ok(r) => r,
        Err(page) => return wrap(page, props.children.clone()),
    };
    let show_all = props.focus.all_patterns;
    let mut list: Vec<&CommunicationPattern> = listed(&result, show_all, props.focus.pattern);
    match *sort {
        SortBy::Covered => list.sort_by_key(|p| (std::cmp::Reverse(p.events_covered), p.id)),
        SortBy::Occurrences => list.sort_by_key(|p| (std::cmp::Reverse(p.occurrences), p.id)),
        SortBy::Ranks => list.sort_by_key(|p| (std::cmp::Reverse(p.ranks.len()), p.id)),
        SortBy::Length => list.sort_by_key(|p| (std::cmp::Reverse(length(p)), p.id)),
    }
    let selected = props
        .focus
        .pattern
        .and_then(|id| result.patterns.iter().find(|p| p.id == id))
        .or(result.patterns.first());
    let header = |label: &str, by: SortBy| {
        let current = (*sort == by).then_some("descending");
        let sort = sort.clone();
        let onclick = Callback::from(move |_: MouseEvent| sort.set(by));
        html! { <th class="num" aria-sort={current}><button type="button" class="sort" id={format!("sort-{}", label.to_lowercase())} {onclick}>{ label }</button></th> }
    };
    let json = Rc::new(
        serde_json::to_string_pretty(&serde_json::json!({
            "events": result.events,
            "events_in_patterns": result.events_in_patterns,
            "patterns": &result.patterns,
        }))
        .unwrap_or_default(),
    );
    let detail = selected.map(|p| {
        let index = if occurrence.0 == p.id { occurrence.1.min(p.occurrences.saturating_sub(1)) } else { 0 };
        let step = |delta: isize| {
            let occurrence = occurrence.clone();
            let (id, n) = (p.id, p.occurrences);
            Callback::from(move |_: MouseEvent| {
                let next = (index as isize + delta).clamp(0, n.saturating_sub(1) as isize) as usize;
                occurrence.set((id, next));
            })
        };
        let zoom_by = |f: f64| {
            let zoom = zoom.clone();
            Callback::from(move |_: MouseEvent| zoom.set((*zoom * f).clamp(1.0, MAX_ZOOM)))
        };
        let reset = {
            let (zoom, pan) = (zoom.clone(), pan.clone());
            Callback::from(move |_: MouseEvent| {
                zoom.set(1.0);
                pan.set((0.0, 0.0));
            })
        };
        let onwheel = {
            let zoom = zoom.clone();
            Callback::from(move |e: WheelEvent| {
                e.prevent_default();
                let f = if e.delta_y() < 0.0 { 1.25 } else { 0.8 };
                zoom.set((*zoom * f).clamp(1.0, MAX_ZOOM));
            })
        };
        let pan_input = |axis: usize| {
            let pan = pan.clone();
            Callback::from(move |e: InputEvent| {
                let v = e.target_unchecked_into::<HtmlInputElement>().value_as_number() / 100.0;
                let (x, y) = *pan;
                pan.set(if axis == 0 { (v, y) } else { (x, v) });
            })
        };
        let on_layout = {
            let layout = layout.clone();
            Callback::from(move |e: Event| {
                let real = e.target_unchecked_into::<HtmlInputElement>().checked();
                layout.set(if real { Layout::RealTime } else { Layout::Logical });
            })
        };
        let t0 = result.trace_start;
        let (start, end) = p.spans.get(index).copied().unwrap_or((t0, t0));
        let rel = |t: u64| seconds(t.saturating_sub(t0) as f64 * 1e-9);
        let kept = result.graphs.get(p.id).map_or(0, Vec::len);
        let graph = result.graphs.get(p.id).and_then(|g| g.get(index));
        let reduced: Option<Neighbourhood> = graph
            .filter(|g| g.ranks.len() > MAX_READABLE_LANES)
            .and_then(|g| neighbourhood(g, MAX_READABLE_LANES));
        let (drawn, alike) = match (&reduced, *every_lane) {
            (Some(n), false) => (Some(&n.graph), Some(n.alike.as_slice())),
            _ => (graph, None),
        };
        let toggle_lanes = {
            let every_lane = every_lane.clone();
            Callback::from(move |_: MouseEvent| every_lane.set(!*every_lane))
        };
        html! {
            <div class="pattern-detail">
                <h3 id="pattern-heading">{ format!("Pattern #{}: {} occurrences on {} {}", p.id, p.occurrences,
                    if p.ranks.len() == 1 { "rank" } else { "ranks" }, rank_list(&p.ranks, LISTED_RANK_RUNS)) }</h3>
                if let Some(note) = variants_note(p) {
                    <p class="small" id="pattern-variants">{ note }</p>
                }
                <div class="graph-controls" role="group" aria-label="Occurrence and zoom">
                    <button type="button" id="pattern-prev" onclick={step(-1)} disabled={index == 0}>{ "◀ Previous" }</button>
                    <span id="pattern-occurrence" data-index={index.to_string()} data-start={start.to_string()} data-end={end.to_string()} role="status">
                        { format!("occurrence {} of {}", index + 1, p.occurrences) }
                    </span>
                    <button type="button" id="pattern-next" onclick={step(1)} disabled={index + 1 >= p.occurrences}>{ "Next ▶" }</button>
                    <span class="small" id="pattern-occurrence-time">{ format!(" {} – {} after the trace start", rel(start), rel(end)) }</span>
                </div>
                <div class="graph-controls" role="group" aria-label="Zoom">
                    <button type="button" id="pattern-zoom-out" onclick={zoom_by(0.5)} disabled={*zoom <= 1.0} aria-label="Zoom out">{ "−" }</button>
                    <span id="pattern-zoom" data-zoom={format!("{}", *zoom)}>{ format!("{:.0}%", *zoom * 100.0) }</span>
                    <button type="button" id="pattern-zoom-in" onclick={zoom_by(2.0)} disabled={*zoom >= MAX_ZOOM} aria-label="Zoom in">{ "+" }</button>
                    <button type="button" id="pattern-zoom-reset" onclick={reset}>{ "Fit" }</button>
                    <label>{ "Pan ↔ " }<input type="range" id="pattern-pan-x" min="0" max="100" value={format!("{:.0}", pan.0 * 100.0)} disabled={*zoom <= 1.0} oninput={pan_input(0)} /></label>
                    <label>{ "Pan ↕ " }<input type="range" id="pattern-pan-y" min="0" max="100" value={format!("{:.0}", pan.1 * 100.0)} disabled={*zoom <= 1.0} oninput={pan_input(1)} /></label>
                    <label><input type="checkbox" id="pattern-real-time" checked={*layout == Layout::RealTime} onchange={on_layout} />{ " Real time" }</label>
                    if let (Some(n), Some(g)) = (&reduced, graph) {
                        <button type="button" id="pattern-every-rank" aria-pressed={every_lane.to_string()} onclick={toggle_lanes}>
                            { if *every_lane { format!("One rank of each kind ({})", n.kinds) } else { format!("Every rank ({})", g.ranks.len()) } }
                        </button>
                    }
                </div>
                <div class="scroll">
                    if let Some(g) = drawn {
                        { event_graph(p, g, alike, *layout, *zoom, *pan, onwheel) }
                    } else {
                        { pattern_graph(p) }
                    }
                </div>
                <p class="small">
                    { "Ranks as horizontal lines, events in " }
                    { if *layout == Layout::Logical { "logical order (Lamport time)" } else { "real time (entry of each call)" } }
                    { ", arrows from each send to its receive. Zoom with the buttons or the mouse wheel over the graph." }
                    if graph.is_none() {
                        { format!(" Event graphs are kept for the first {kept} occurrences; this one is drawn from the pattern's events in rank order.") }
                    }
                    if let (Some(n), Some(g), false) = (&reduced, graph, *every_lane) {
                        <span id="pattern-graph-reduced" data-kinds={n.kinds.to_string()} data-lines={n.graph.ranks.len().to_string()}>
                            { format!(" Its {} ranks do {} different event sequences: one rank of each kind is drawn (×N: the ranks alike), with the ranks it exchanges messages with — {} of {} lines. \"Every rank\" draws them all.", g.ranks.len(), n.kinds, n.graph.ranks.len(), g.ranks.len()) }
                        </span>
                    }
                    if let Some(g) = drawn.filter(|g| g.ranks.len() > MAX_GRAPH_LANES) {
                        <span id="pattern-graph-cut">{ format!(" Only the first {MAX_GRAPH_LANES} of its {} ranks are drawn.", g.ranks.len()) }</span>
                    }
                    if drawn.map_or_else(|| length(p), |g| g.events.len()) > COMPACT_GRAPH_EVENTS {
                        { format!(" This occurrence has more than {COMPACT_GRAPH_EVENTS} events: it is drawn without arrowheads and without a tooltip per event, so the page stays responsive.") }
                    }
                </p>
            </div>
        }
    });
    let body = html! {
        <>
            <p class="headline">
                <span id="patterns-count" data-value={result.patterns.len().to_string()}>{ format!("{} communication patterns", result.patterns.len()) }</span>
                { format!(" · {} of {} events inside a pattern occurrence", result.events_in_patterns, result.events) }
                { " " }{ download_button("patterns-json", "Download JSON", "patterns.json", "application/json", json) }
            </p>
            { pending_note(&props.state) }
            <div class="pattern-panels">
                <table class="patterns" id="patterns-table">
                    <caption>{ "Communication patterns (click a column to sort, a row to draw it)" }</caption>
                    <thead><tr><th>{ "Pattern" }</th>{ header("Events", SortBy::Covered) }{ header("Occurrences", SortBy::Occurrences) }{ header("Ranks", SortBy::Ranks) }{ header("Length", SortBy::Length) }</tr></thead>
                    <tbody>
                        { for list.iter().map(|p| {
                            let id = p.id;
                            let focus = props.focus.clone();
                            let onclick = props.on_focus.reform(move |_: MouseEvent| Focus { pattern: Some(id), ..focus.clone() });
                            let chosen = selected.map(|s| s.id) == Some(id);
                            let class = classes!("pattern-row", chosen.then_some("selected"));
                            html! {
                                <tr {class} data-pattern={id.to_string()} data-occurrences={p.occurrences.to_string()} {onclick}>
                                    <th scope="row">{ super::row_button(chosen, html! {
                                        <><span class="swatch" style={format!("background:{}", colour(id as u32))}></span>{ format!("#{id}") }</>
                                    }) }</th>
                                    <td class="num" title="events its occurrences cover on all ranks">{ p.events_covered }</td>
                                    <td class="num">{ p.occurrences }</td>
                                    <td class="num" title={rank_list(&p.ranks, LISTED_RANK_RUNS)}>{ p.ranks.len() }</td>
                                    <td class="num">{ length(p) }</td>
                                </tr>
                            }
                        }) }
                    </tbody>
                </table>
                if result.hidden_patterns > 0 {
                    <p class="small" id="patterns-hidden" data-hidden={result.hidden_patterns.to_string()} data-shown={result.shown_patterns.to_string()}>
                        if !show_all { <>{ hidden_note(&result).unwrap_or_default() }{ " " }</> }
                        <button type="button" id="patterns-show-all" aria-pressed={show_all.to_string()}
                            onclick={{
                                let (focus, on_focus) = (props.focus.clone(), props.on_focus.clone());
                                Callback::from(move |_: MouseEvent| on_focus.emit(Focus { all_patterns: !show_all, ..focus.clone() }))
                            }}>
                            { if show_all { format!("Show the {} that repeat, covering ≥ {:.0} % of events", result.shown_patterns, 100.0 * result.min_share) } else { format!("Show all {}", result.patterns.len()) } }
                        </button>
                    </p>
                }
                { detail.unwrap_or_default() }
            </div>
            if !result.timeline.lanes.is_empty() {
                { timeline_view(&result.timeline, &result.patterns, &Focus { pattern: selected.map(|p| p.id), ..props.focus.clone() }, &props.on_focus) }
            }
        </>
    };
    wrap(body, props.children.clone())
}

/// How many occurrences of each form a pattern whose occurrences are iterations of one loop
/// has (`Iterations of one loop in 3 forms: 43 as listed, 5 with 192 more events, …`); `None`
/// when all its occurrences have the same events.
pub fn variants_note(p: &CommunicationPattern) -> Option<String> {
    if p.variants.is_empty() {
        return None;
    }
    let forms: Vec<String> = p
        .variants
        .iter()
        .map(|v| match v.extra_events {
            0 => format!("{} as listed", v.occurrences),
            e if e > 0 => format!("{} with {} more events", v.occurrences, e),
            e => format!("{} with {} fewer events", v.occurrences, -e),
        })
        .collect();
    Some(format!(
        "Iterations of one loop in {} forms: {}.",
        p.variants.len(),
        forms.join(", ")
    ))
}

/// The pattern's events in rank order without times (for occurrences whose graph was not kept).
fn pattern_graph(p: &CommunicationPattern) -> Html {
    let ranks: Vec<u32> = p.events.keys().copied().collect();
    let longest = p.events.values().map(|e| e.len()).max().unwrap_or(0);
    let (dx, lane, left) = (16.0, 34.0, 64.0);
    let w = left + dx * (longest as f64 + 1.0);
    let h = lane * (ranks.len() as f64 + 0.5);
    let row = |r: u32| ranks.iter().position(|&x| x == r).unwrap_or(0) as f64;
    let at = |(r, i): (u32, usize)| (left + dx * (i as f64 + 0.5), lane * (row(r) + 0.75));
    let compact = p.events.values().map(|e| e.len()).sum::<usize>() > COMPACT_GRAPH_EVENTS;
    html! {
        <svg class="event-graph" id="pattern-graph" viewBox={format!("0 0 {w:.0} {h:.0}")} width={format!("{w:.0}")} role="img"
            aria-label={format!("Event graph of pattern {}", p.id)} data-pattern={p.id.to_string()} data-occurrence="" data-compact={compact.to_string()}>
            <defs>
                <marker id="arrowhead" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
                    <path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead" />
                </marker>
            </defs>
            { for ranks.iter().map(|&r| {
                let y = lane * (row(r) + 0.75);
                html! {
                    <g class="rank-line">
                        <text class="tick" x={(left - 8.0).to_string()} y={format!("{:.1}", y + 4.0)} text-anchor="end">{ format!("rank {r}") }</text>
                        <line x1={left.to_string()} x2={format!("{:.1}", w - 4.0)} y1={format!("{y:.1}")} y2={format!("{y:.1}")} />
                    </g>
                }
            }) }
            if compact {
                { compact_marks(
                    segments_path(arrows(p).into_iter().map(|(a, b)| (at(a), at(b)))),
                    &p.events.iter().flat_map(|(&r, evs)| evs.iter().enumerate().map(move |(i, e)| (at((r, i)), event_kind(e)))).collect::<Vec<_>>(),
                ) }
            } else {
                { for arrows(p).into_iter().map(|(a, b)| {
                    let ((x1, y1), (x2, y2)) = (at(a), at(b));
                    html! { <line class="message" x1={format!("{x1:.1}")} y1={format!("{y1:.1}")} x2={format!("{x2:.1}")} y2={format!("{y2:.1}")} marker-end="url(#arrowhead)" /> }
                }) }
                { for p.events.iter().flat_map(|(&r, evs)| evs.iter().enumerate().map(move |(i, e)| (r, i, e))).map(|(r, i, e)| {
                    let (x, y) = at((r, i));
                    let class = format!("event {}", event_kind(e));
                    html! { <circle {class} cx={format!("{x:.1}")} cy={format!("{y:.1}")} r="4"><title>{ format!("rank {r}, event {i}: {e}") }</title></circle> }
                }) }
            }
        </svg>
    }
}

/// The view's section: its content, then what the page adds below it (the search form).
fn wrap(body: Html, below: Html) -> Html {
    html! {
        <section class="view patterns" id="view-patterns" aria-labelledby="patterns-title">
            <h2 id="patterns-title">{ "Patterns" }</h2>
            { body }
            { below }
        </section>
    }
}

#[cfg(test)]
mod tests;
