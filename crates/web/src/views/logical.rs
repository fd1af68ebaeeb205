//! The logical-trace view: accuracy figures, per-rank reproduction share (ranks below 100 %
//! highlighted), the compressed program as foldable nested loops, physical ↔ logical side by
//! side (Table 5), and downloads of the JSON, the text and the C skeleton.

use super::{download_button, pending_note, use_parsed, AnalysisProps, Focus};
use crate::analyses::LogicalResult;
use crate::text;
use std::rc::Rc;
use tracelogic_analysis::compress::Node;
use yew::prelude::*;

fn node(n: &Node, depth: usize) -> Html {
    match n {
        Node::Call {
            id,
            shape,
            sizes,
            gap,
            duration_ns,
            ..
        } => {
            let sizes: Vec<String> = sizes.iter().map(|v| v.text()).collect();
            html! {
                <li class="call" data-node={id.to_string()}>
                    <code>{ shape.text() }</code>
                    if !sizes.is_empty() { <span class="small">{ format!(" sizes {}", sizes.join(", ")) }</span> }
                    <span class="small">{ format!(" · compute before {} · in call {}", text::duration(gap.mean_ns as f64 * 1e-9), text::duration(*duration_ns as f64 * 1e-9)) }</span>
                </li>
            }
        }
        Node::Loop { id, count, body } => html! {
            <li class="loop" data-node={id.to_string()}>
                <details open={depth < 2}>
                    <summary>{ format!("loop × {} ({} items)", count.text(), body.len()) }</summary>
                    <ol>{ for body.iter().map(|b| node(b, depth + 1)) }</ol>
                </details>
            </li>
        },
    }
}

/// The logical-trace view.
#[function_component(LogicalView)]
pub fn logical_view(props: &AnalysisProps) -> Html {
    let r: Rc<LogicalResult> = match use_parsed(&props.state) {
        Ok(r) => r,
        Err(page) => return wrap(page),
    };
    let v = &r.verification;
    let a = &r.accuracy;
    let p = &r.program;
    let focus = props.focus.clone();
    let used: Vec<String> = r.ranks_used.iter().map(|x| x.to_string()).collect();
    let body = html! {
        <>
            <p class="headline">
                { "Logical trace on a " }<strong id="logical-topology">{ &r.topology.label }</strong>
                { format!(" (directions {}), from rank{} {}{}", r.topology.directions.join(", "), if used.len() > 1 { "s" } else { "" },
                    used.join(", "), if r.maximal { " (a maximal rank)" } else { " (merged: no rank has every neighbour)" }) }
            </p>
            { pending_note(&props.state) }
            <dl class="stats" id="logical-figures">
                <div class="stat" data-stat="raw" data-value={p.raw_length.to_string()}><dt>{ "Records" }</dt><dd>{ p.raw_length }</dd></div>
                <div class="stat" data-stat="compressed" data-value={p.compressed_length.to_string()}><dt>{ "Compressed" }</dt><dd>{ format!("{} (ratio {:.1}, depth {})", p.compressed_length, p.ratio, p.depth) }</dd></div>
                <div class="stat"><dt>{ "Dropped calls" }</dt><dd>{ text::percent(a.dropped_calls_fraction) }</dd></div>
                <div class="stat"><dt>{ "Dropped bytes" }</dt><dd>{ text::percent(a.dropped_bytes_fraction) }</dd></div>
                <div class="stat" data-stat="reproduced" data-value={v.overall_share.to_string()}><dt>{ "Reproduced by expansion" }</dt><dd>{ text::percent(v.overall_share) }</dd></div>
            </dl>
            <p class="downloads">
                { download_button("logical-json", "Download JSON", "logical.json", "application/json", Rc::new(r.json.clone())) }
                { download_button("logical-text", "Download text", "logical.txt", "text/plain", Rc::new(r.text.clone())) }
                if let Ok(c) = &r.skeleton {
                    { download_button("logical-skeleton", "Download C skeleton", "skeleton.c", "text/x-c", Rc::new(c.clone())) }
                }
            </p>
            if let Err(e) = &r.skeleton { <p class="note">{ format!("No C skeleton: {e}") }</p> }
            <div class="logical-panels">
                <table class="reproduction" id="logical-ranks">
                    <caption>{ format!("Per-rank reproduction ({} below 100 %)", v.ranks_below_full.len()) }</caption>
                    <thead><tr><th>{ "Rank" }</th><th class="num">{ "Real calls" }</th><th class="num">{ "Expanded" }</th><th class="num">{ "Reproduced" }</th><th class="num">{ "Share" }</th></tr></thead>
                    <tbody>
                        { for v.per_rank.iter().map(|x| {
                            let rank = x.rank;
                            let f = focus.clone();
                            let onclick = props.on_focus.reform(move |_: MouseEvent| Focus { rank: (f.rank != Some(rank)).then_some(rank), ..f.clone() });
                            let class = classes!((x.share < 1.0).then_some("below"), (focus.rank == Some(rank)).then_some("selected"));
                            html! {
                                <tr {class} data-rank={rank.to_string()} data-share={x.share.to_string()} {onclick}>
                                    <th scope="row">{ rank }</th><td class="num">{ x.real_calls }</td><td class="num">{ x.expanded_calls }</td>
                                    <td class="num">{ x.reproduced }</td><td class="num">{ text::percent(x.share) }</td>
                                </tr>
                            }
                        }) }
                    </tbody>
                </table>
                <div class="program" id="logical-program">
                    <h3>{ "Compressed program" }</h3>
                    <ol>{ for p.nodes.iter().map(|n| node(n, 0)) }</ol>
                </div>
            </div>
            <h3>{ "Physical ↔ logical (Table 5)" }</h3>
            <pre class="side-by-side" id="logical-side-by-side">{ &r.side_by_side }</pre>
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
