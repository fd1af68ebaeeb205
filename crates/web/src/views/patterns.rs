//! The patterns view: the communication patterns (sortable by occurrences, ranks involved and
//! length), the event graph of the selected pattern, and JSON export.

use super::{download_button, pending_note, use_parsed, AnalysisProps, Focus};
use crate::analyses::PatternsResult;
use std::collections::BTreeMap;
use std::rc::Rc;
use tracelogic_analysis::patterns::CommunicationPattern;
use yew::prelude::*;

/// Sort order of the pattern list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    /// Most occurrences first.
    Occurrences,
    /// Most ranks first.
    Ranks,
    /// Longest (most events) first.
    Length,
}

/// Events in one occurrence of `p`, over all its ranks.
pub fn length(p: &CommunicationPattern) -> usize {
    p.events.values().map(Vec::len).sum()
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

fn event_graph(p: &CommunicationPattern) -> Html {
    let ranks: Vec<u32> = p.events.keys().copied().collect();
    let longest = p.events.values().map(Vec::len).max().unwrap_or(0);
    let (dx, lane, left) = (16.0, 34.0, 64.0);
    let w = left + dx * (longest as f64 + 1.0);
    let h = lane * (ranks.len() as f64 + 0.5);
    let row = |r: u32| ranks.iter().position(|&x| x == r).unwrap_or(0) as f64;
    let at = |(r, i): (u32, usize)| (left + dx * (i as f64 + 0.5), lane * (row(r) + 0.75));
    html! {
        <svg class="event-graph" id="pattern-graph" viewBox={format!("0 0 {w:.0} {h:.0}")} width={format!("{w:.0}")} role="img"
            aria-label={format!("Event graph of pattern {}", p.id)} data-pattern={p.id.to_string()}>
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
            { for arrows(p).into_iter().map(|(a, b)| {
                let ((x1, y1), (x2, y2)) = (at(a), at(b));
                html! { <line class="message" x1={format!("{x1:.1}")} y1={format!("{y1:.1}")} x2={format!("{x2:.1}")} y2={format!("{y2:.1}")} marker-end="url(#arrowhead)" /> }
            }) }
            { for p.events.iter().flat_map(|(&r, evs)| evs.iter().enumerate().map(move |(i, e)| (r, i, e.clone()))).map(|(r, i, e)| {
                let (x, y) = at((r, i));
                let class = match peer_of(&e) { Some(('S', _)) => "event send", Some(_) => "event recv", None => "event other" };
                html! { <circle {class} cx={format!("{x:.1}")} cy={format!("{y:.1}")} r="4"><title>{ format!("rank {r}, event {i}: {e}") }</title></circle> }
            }) }
        </svg>
    }
}

/// The patterns view.
#[function_component(PatternsView)]
pub fn patterns_view(props: &AnalysisProps) -> Html {
    let sort = use_state(|| SortBy::Occurrences);
    let result: Rc<PatternsResult> = match use_parsed(&props.state) {
        Ok(r) => r,
        Err(page) => return wrap(page),
    };
    let mut list: Vec<&CommunicationPattern> = result.patterns.iter().collect();
    match *sort {
        SortBy::Occurrences => list.sort_by_key(|p| (std::cmp::Reverse(p.occurrences), p.id)),
        SortBy::Ranks => list.sort_by_key(|p| (std::cmp::Reverse(p.ranks.len()), p.id)),
        SortBy::Length => list.sort_by_key(|p| (std::cmp::Reverse(length(p)), p.id)),
    }
    let selected = props
        .focus
        .pattern
        .and_then(|id| result.patterns.iter().find(|p| p.id == id))
        .or(list.first().copied());
    let header = |label: &str, by: SortBy| {
        let current = (*sort == by).then_some("descending");
        let sort = sort.clone();
        let onclick = Callback::from(move |_: MouseEvent| sort.set(by));
        html! { <th class="num" aria-sort={current}><button type="button" class="sort" id={format!("sort-{}", label.to_lowercase())} {onclick}>{ label }</button></th> }
    };
    let json = Rc::new(
        props
            .state
            .result
            .as_deref()
            .and_then(|r| r.as_ref().ok())
            .cloned()
            .unwrap_or_default(),
    );
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
                    <thead><tr><th>{ "Pattern" }</th>{ header("Occurrences", SortBy::Occurrences) }{ header("Ranks", SortBy::Ranks) }{ header("Length", SortBy::Length) }</tr></thead>
                    <tbody>
                        { for list.iter().map(|p| {
                            let id = p.id;
                            let focus = props.focus.clone();
                            let onclick = props.on_focus.reform(move |_: MouseEvent| Focus { pattern: Some(id), ..focus.clone() });
                            let class = classes!("pattern-row", (selected.map(|s| s.id) == Some(id)).then_some("selected"));
                            html! {
                                <tr {class} data-pattern={id.to_string()} data-occurrences={p.occurrences.to_string()} {onclick}>
                                    <th scope="row">{ format!("#{id}") }</th>
                                    <td class="num">{ p.occurrences }</td>
                                    <td class="num" title={p.ranks.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")}>{ p.ranks.len() }</td>
                                    <td class="num">{ length(p) }</td>
                                </tr>
                            }
                        }) }
                    </tbody>
                </table>
                if let Some(p) = selected {
                    <div class="pattern-detail">
                        <h3>{ format!("Pattern #{}: {} occurrences on ranks {}", p.id, p.occurrences,
                            p.ranks.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")) }</h3>
                        <div class="scroll">{ event_graph(p) }</div>
                        <p class="small">{ "Ranks as horizontal lines, events in logical order, arrows from each send to its receive." }</p>
                    </div>
                }
            </div>
        </>
    };
    wrap(body)
}

fn wrap(body: Html) -> Html {
    html! {
        <section class="view patterns" id="view-patterns" aria-labelledby="patterns-title">
            <h2 id="patterns-title">{ "Patterns" }</h2>
            { body }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrows_pair_each_send_with_its_receive_in_order() {
        let trace = crate::analyses::tests::sample_trace("npb-lu.S.8");
        let result = crate::analyses::patterns(&trace);
        assert!(!result.patterns.is_empty());
        for p in &result.patterns {
            for ((a, i), (b, j)) in arrows(p) {
                assert_eq!(peer_of(&p.events[&a][i]), Some(('S', b)));
                assert_eq!(peer_of(&p.events[&b][j]), Some(('R', a)));
            }
            let sends = p
                .events
                .values()
                .flatten()
                .filter(|e| matches!(peer_of(e), Some(('S', _))))
                .count();
            let recvs = p
                .events
                .values()
                .flatten()
                .filter(|e| matches!(peer_of(e), Some(('R', _))))
                .count();
            assert!(arrows(p).len() <= sends.min(recvs));
        }
        let first = &result.patterns[0];
        assert!(!arrows(first).is_empty(), "pattern 0 of LU exchanges messages");
    }
}
