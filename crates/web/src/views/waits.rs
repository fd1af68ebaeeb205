//! The waits view (`tracelogic waits` and `tracelogic critical-path`): the six wait states'
//! totals, per function and per rank, the pairs whose receiver waited longest and the waiting
//! matrix (late-sender and late-receiver seconds per sender and receiver, also a metric of the
//! matrix view), then the critical path: its length, share per function
//! and rank, the gain of each rank's computation, the path over time, and the load imbalance.

use super::{pending_note, seconds, use_parsed, AnalysisProps};
use crate::protocol::{AnalysisRequest, WaitsAnswer, MAX_PAGE_SEGMENTS};
use tracelogic_engine::waits::Waits;
use tracelogic_engine::Engine;
use tracelogic_model::Selection;
use yew::prelude::*;

/// Most ranks whose waiting matrix the view draws cell by cell.
pub const MAX_MATRIX_RANKS: u32 = 64;

/// Rows of the per-rank and per-pair tables.
const TOP: usize = 20;

/// The worker's answer to [`AnalysisRequest::Waits`]: one engine call for the wait states and
/// one for the critical path (whose failure leaves the wait states shown), the path's segments
/// cut to the [`MAX_PAGE_SEGMENTS`] longest (kept in path order).
pub fn answer(engine: &Engine, selection: &Selection, what_if: bool) -> Result<WaitsAnswer, String> {
    let waits = engine.waits(selection)?;
    let mut segments_total = 0;
    let critical_path = engine
        .critical_path(selection, what_if)
        .map(|mut r| {
            segments_total = r.path.segments.len();
            if segments_total > MAX_PAGE_SEGMENTS {
                let mut order: Vec<usize> = (0..segments_total).collect();
                let len = |i: usize| r.path.segments[i].end_s - r.path.segments[i].start_s;
                order.sort_by(|&a, &b| len(b).total_cmp(&len(a)).then(a.cmp(&b)));
                order.truncate(MAX_PAGE_SEGMENTS);
                order.sort_unstable();
                let kept = order.iter().map(|&i| r.path.segments[i].clone()).collect();
                r.path.segments = kept;
            }
            r
        })
        .map_err(String::from);
    Ok(WaitsAnswer {
        waits,
        critical_path,
        segments_total,
    })
}

/// The six wait states: JSON name, words shown.
pub const STATES: [(&str, &str); 6] = [
    ("late_sender_s", "Late sender"),
    ("late_receiver_s", "Late receiver"),
    ("wait_nxn_s", "Wait at N×N"),
    ("wait_barrier_s", "Wait at barrier"),
    ("late_broadcast_s", "Late broadcast"),
    ("early_reduce_s", "Early reduce"),
];

fn values(w: &Waits) -> [f64; 6] {
    [
        w.late_sender_s,
        w.late_receiver_s,
        w.wait_nxn_s,
        w.wait_barrier_s,
        w.late_broadcast_s,
        w.early_reduce_s,
    ]
}

fn state_header(first: &str) -> Html {
    html! {
        <thead><tr><th scope="col">{ first.to_owned() }</th><th scope="col" class="num">{ "Total" }</th>
            { for STATES.iter().map(|s| html! { <th scope="col" class="num">{ s.1 }</th> }) }</tr></thead>
    }
}

fn state_cells(w: &Waits) -> Html {
    html! {
        <>
            <td class="num" data-total={w.total_s().to_string()}>{ seconds(w.total_s()) }</td>
            { for values(w).iter().zip(STATES).map(|(v, s)| html! { <td class="num" data-state={s.0}>{ if *v > 0.0 { seconds(*v) } else { "–".into() } }</td> }) }
        </>
    }
}

/// The waiting seconds (late sender plus late receiver) per (sender, receiver) as a shaded table.
fn waiting_matrix(a: &WaitsAnswer) -> Html {
    let n = a.waits.ranks;
    if n > MAX_MATRIX_RANKS {
        return html! { <p class="small" id="waits-matrix">{ format!("The waiting matrix is drawn up to {MAX_MATRIX_RANKS} ranks; the pairs above list the largest.") }</p> };
    }
    let rows = a.waits.report.waiting_rows(n);
    let max = rows.iter().flatten().copied().fold(0.0, f64::max);
    if max <= 0.0 {
        return html! { <p class="small" id="waits-matrix">{ "No receive waited for its sender, no send for its receiver." }</p> };
    }
    html! {
        <table class="waiting-matrix" id="waits-matrix" data-ranks={n.to_string()}>
            <caption>{ "Waiting matrix: seconds each receiver (column) waited for each late sender (row), plus each sender's wait for its late receiver" }</caption>
            <thead><tr><th scope="col">{ "sender \\ receiver" }</th>{ for (0..n).map(|c| html! { <th scope="col" class="num">{ c }</th> }) }</tr></thead>
            <tbody>{ for rows.iter().enumerate().map(|(s, row)| html! {
                <tr><th scope="row">{ s }</th>{ for row.iter().enumerate().map(|(r, &v)| {
                    let alpha = if v > 0.0 { 0.1 + 0.9 * v / max } else { 0.0 };
                    html! { <td class="num" data-sender={s.to_string()} data-receiver={r.to_string()} data-seconds={v.to_string()}
                        title={format!("ranks {s} → {r}: {} waiting", seconds(v))}
                        style={format!("background: rgba(228, 87, 86, {alpha:.3}); min-width: 1.2rem")}>{ "" }</td> }
                }) }</tr>
            }) }</tbody>
        </table>
    }
}

/// The critical path over time: one lane per rank, computation and MPI functions coloured.
fn strip(a: &WaitsAnswer) -> Html {
    let Ok(cp) = &a.critical_path else {
        return Html::default();
    };
    let n = cp.path.by_rank.len().max(1);
    let (w, lane, left, top) = (760.0, (220.0 / n as f64).clamp(2.0, 14.0), 50.0, 6.0);
    let h = top + lane * n as f64 + 8.0;
    let length = cp.path.length_s.max(1e-30);
    let x = |t: f64| left + (w - left - 10.0) * t / length;
    html! {
        <svg class="whatif-chart" id="cp-strip" viewBox={format!("0 0 {w} {h}")} role="img"
            aria-label="The critical path over time: which rank it runs on, computing (blue) or in MPI (red)">
            { for cp.path.segments.iter().map(|s| {
                let colour = if s.kind == "compute" { "#4c78a8" } else { "#e45756" };
                html! { <rect x={x(s.start_s).to_string()} y={(top + lane * s.rank as f64).to_string()}
                    width={(x(s.end_s) - x(s.start_s)).max(0.3).to_string()} height={lane.to_string()} fill={colour}>
                    <title>{ format!("rank {}: {} {}–{}", s.rank, s.kind, seconds(s.start_s), seconds(s.end_s)) }</title></rect> }
            }) }
            { for (0..n).filter(|r| n <= 16 || r % 8 == 0).map(|r| html! {
                <text class="tick" x="4" y={(top + lane * (r as f64 + 0.8)).to_string()}>{ format!("{r}") }</text>
            }) }
        </svg>
    }
}

fn critical_path(a: &WaitsAnswer, on_request: &Callback<AnalysisRequest>) -> Html {
    let cp = match &a.critical_path {
        Ok(cp) => cp,
        Err(e) => {
            return html! { <section id="critical-path"><h3>{ "Critical path" }</h3><p class="error" role="alert">{ e }</p></section> }
        }
    };
    let p = &cp.path;
    let im = &cp.imbalance;
    let mut ranks: Vec<_> = p.by_rank.iter().filter(|r| r.share > 0.0).collect();
    ranks.sort_by(|a, b| b.share.total_cmp(&a.share).then(a.rank.cmp(&b.rank)));
    let ask = {
        let on_request = on_request.clone();
        Callback::from(move |_: MouseEvent| on_request.emit(AnalysisRequest::Waits { what_if: true }))
    };
    let late = if im.late_ranks.is_empty() {
        "none".to_owned()
    } else {
        im.late_ranks
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    html! {
        <section id="critical-path" data-length={p.length_s.to_string()} data-segments={a.segments_total.to_string()}
            data-compute-share={cp.compute_share.to_string()}>
            <h3>{ "Critical path" }</h3>
            <p id="cp-line">{ format!("{} long, {} segments; {:.1}% of it computation.", seconds(p.length_s), a.segments_total, 100.0 * cp.compute_share) }
                if p.segments.len() < a.segments_total { <span class="small">{ format!(" The {} longest segments are drawn.", p.segments.len()) }</span> }</p>
            <p id="cp-relation">{ &cp.relation }</p>
            <p id="cp-imbalance" data-ratio={im.ratio.to_string()} data-late={late.clone()} data-max-rank={im.max_rank.to_string()}>
                { format!("Load imbalance{}: computation max {} (rank {}), mean {}, max/mean {:.3} ({:.1}% imbalance); late ranks: {late}.",
                    im.left_out_note().map(|n| format!(" {n}")).unwrap_or_default(),
                    seconds(im.max_s), im.max_rank, seconds(im.mean_s), im.ratio, im.imbalance_pct) }</p>
            { match &cp.what_if {
                Some(c) => html! { <p id="cp-whatif" data-label={c.label.clone()}>{ format!("What-if on {}: {} — {}", c.network, c.label, c.reason) }</p> },
                None => html! { <p><button type="button" id="cp-ask-whatif" onclick={ask}>{ "Relate to the what-if classification" }</button>
                    <span class="small">{ " (replays the run on the first preset network)" }</span></p> },
            } }
            { strip(a) }
            <div class="bar-legend"><span class="key compute">{ "computation" }</span><span class="key wait">{ "in MPI" }</span></div>
            <table class="bars" id="cp-functions">
                <caption>{ "Share of the path" }</caption>
                <thead><tr><th scope="col">{ "" }</th><th scope="col" class="num">{ "Share" }</th><th scope="col">{ "" }</th></tr></thead>
                <tbody>
                    <tr data-name="computation" data-share={cp.compute_share.to_string()}><th scope="row">{ "computation" }</th>
                        <td class="num">{ format!("{:.1}%", 100.0 * cp.compute_share) }</td>
                        <td class="bar-cell"><div class="bar"><span class="segment compute" style={format!("width: {:.2}%", 100.0 * cp.compute_share)}></span></div></td></tr>
                    { for p.by_function.iter().map(|f| html! {
                        <tr data-name={f.name.clone()} data-share={f.share.to_string()}><th scope="row">{ &f.name }</th>
                            <td class="num">{ format!("{:.1}%", 100.0 * f.share) }</td>
                            <td class="bar-cell"><div class="bar"><span class="segment wait" style={format!("width: {:.2}%", 100.0 * f.share)}></span></div></td></tr>
                    }) }
                </tbody>
            </table>
            <table class="bars" id="cp-ranks">
                <caption>{ format!("Ranks on the path ({} of {}), with the gain of removing their computation on it", ranks.len().min(TOP), ranks.len()) }</caption>
                <thead><tr><th scope="col">{ "Rank" }</th><th scope="col" class="num">{ "Share" }</th>
                    <th scope="col" class="num">{ "Computation on path" }</th><th scope="col" class="num">{ "Gain" }</th></tr></thead>
                <tbody>{ for ranks.iter().take(TOP).map(|x| {
                    let compute = cp.compute_by_rank.iter().find(|c| c.rank == x.rank).map_or(0.0, |c| c.compute_s);
                    html! {
                        <tr data-rank={x.rank.to_string()} data-share={x.share.to_string()}
                            data-gain={x.gain_s.map_or_else(|| "null".to_owned(), |g| g.to_string())}>
                            <th scope="row">{ format!("rank {}", x.rank) }</th><td class="num">{ format!("{:.1}%", 100.0 * x.share) }</td>
                            <td class="num">{ seconds(compute) }</td>
                            <td class="num">{ x.gain_s.map_or_else(|| "n/a".to_owned(), seconds) }</td>
                        </tr>
                    }
                }) }</tbody>
            </table>
        </section>
    }
}

/// The waits view.
#[function_component(WaitsView)]
pub fn waits_view(props: &AnalysisProps) -> Html {
    let a = match use_parsed::<WaitsAnswer>(&props.state) {
        Ok(a) => a,
        Err(waiting) => return html! { <section id="view-waits"><h2>{ "Waits" }</h2>{ waiting }</section> },
    };
    let w = &a.waits.report;
    let total = w.totals.total_s();
    let mut ranks: Vec<_> = w.by_rank.iter().filter(|r| r.waits.total_s() > 0.0).collect();
    ranks.sort_by(|a, b| {
        b.waits
            .total_s()
            .total_cmp(&a.waits.total_s())
            .then(a.rank.cmp(&b.rank))
    });
    let pairs = a.waits.top_pairs(TOP);
    html! {
        <section id="view-waits" data-total={total.to_string()}>
            <h2>{ "Waits" }</h2>
            { pending_note(&props.state) }
            <p id="waits-line">{ format!("{} waiting of {} inside MPI over all ranks ({:.1}%).", seconds(total), seconds(a.waits.mpi_s),
                if a.waits.mpi_s > 0.0 { 100.0 * total / a.waits.mpi_s } else { 0.0 }) }
                if w.clock_violations > 0 { <span class="small">{ format!(" {} messages were received before they were sent (unsynchronised clocks).", w.clock_violations) }</span> }</p>
            <table class="bars" id="waits-totals">
                <thead><tr><th scope="col">{ "Wait state" }</th><th scope="col" class="num">{ "Seconds" }</th><th scope="col">{ "" }</th></tr></thead>
                <tbody>{ for STATES.iter().zip(values(&w.totals)).map(|(s, v)| html! {
                    <tr data-state={s.0} data-seconds={v.to_string()}><th scope="row">{ s.1 }</th><td class="num">{ seconds(v) }</td>
                        <td class="bar-cell"><div class="bar"><span class="segment wait" style={format!("width: {:.2}%", if total > 0.0 { 100.0 * v / total } else { 0.0 })}></span></div></td></tr>
                }) }</tbody>
            </table>
            if let Some(p) = a.waits.polling.as_ref().filter(|p| p.calls > 0) {
                <p id="waits-polling" data-calls={p.calls.to_string()} data-seconds={p.seconds.to_string()}>
                    { format!("Polling: {} in {} non-blocking probes and tests that completed nothing — waiting by polling, which no wait state above counts.",
                        seconds(p.seconds), p.calls) }</p>
            }
            <table id="waits-functions">
                <caption>{ "By MPI function (the call that waited)" }</caption>
                { state_header("Function") }
                <tbody>{ for w.by_function.iter().map(|f| html! { <tr data-function={f.name.clone()}><th scope="row">{ &f.name }</th>{ state_cells(&f.waits) }</tr> }) }</tbody>
            </table>
            <table id="waits-ranks">
                <caption>{ format!("By rank, longest first ({} of {} that waited)", ranks.len().min(TOP), ranks.len()) }</caption>
                { state_header("Rank") }
                <tbody>{ for ranks.iter().take(TOP).map(|r| html! { <tr data-rank={r.rank.to_string()}><th scope="row">{ format!("rank {}", r.rank) }</th>{ state_cells(&r.waits) }</tr> }) }</tbody>
            </table>
            <table id="waits-pairs">
                <caption>{ format!("Receivers waiting longest for a late sender ({} of {} pairs)", pairs.len(), w.by_pair.iter().filter(|p| p.late_sender_s > 0.0).count()) }</caption>
                <thead><tr><th scope="col">{ "Sender" }</th><th scope="col">{ "Receiver" }</th><th scope="col" class="num">{ "Receiver waited" }</th></tr></thead>
                <tbody>{ for pairs.iter().map(|p| html! {
                    <tr data-sender={p.sender.to_string()} data-receiver={p.receiver.to_string()} data-seconds={p.late_sender_s.to_string()}>
                        <td>{ p.sender }</td><td>{ p.receiver }</td><td class="num">{ seconds(p.late_sender_s) }</td></tr>
                }) }</tbody>
            </table>
            { waiting_matrix(&a) }
            { critical_path(&a, &props.on_request) }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AnalysisRequest, Answer};
    use crate::session::tests::sample_trace;
    use crate::session::Session;

    #[test]
    fn the_answer_is_the_engines_waits_and_path_of_the_selection() {
        let session = Session::new(sample_trace("npb-lu.S.8"));
        let selection = Selection {
            ranks: Some(vec![0, 1, 2, 3]),
            ..Selection::default()
        };
        let got = match session
            .analyse_selected(&AnalysisRequest::Waits { what_if: false }, &selection)
            .unwrap()
        {
            Answer::Waits(a) => a,
            other => panic!("{other:?}"),
        };
        let engine = session.engine();
        assert_eq!(got.waits, engine.waits(&selection).unwrap());
        let path = engine.critical_path(&selection, false).unwrap();
        assert_eq!(got.segments_total, path.path.segments.len());
        let mut got = got.critical_path.unwrap();
        // The page gets the longest segments only, in path order.
        let all = &path.path.segments;
        assert!(all.len() > MAX_PAGE_SEGMENTS, "{}", all.len());
        let kept = std::mem::take(&mut got.path.segments);
        assert_eq!(kept.len(), MAX_PAGE_SEGMENTS);
        let mut rest = all.iter();
        assert!(
            kept.iter().all(|k| rest.any(|s| s == k)),
            "kept segments are in path order"
        );
        let len = |s: &tracelogic_engine::critical_path::Segment| s.end_s - s.start_s;
        let shortest_kept = kept.iter().map(len).fold(f64::INFINITY, f64::min);
        let dropped = all.iter().filter(|s| !kept.contains(s));
        assert!(dropped.map(len).all(|l| l <= shortest_kept));
        let mut whole = path.clone();
        whole.path.segments.clear();
        assert_eq!(got, whole);
        let profile = match session.analyse_selected(&AnalysisRequest::Profile, &selection).unwrap() {
            Answer::Profile(p) => p,
            other => panic!("{other:?}"),
        };
        assert_eq!(profile, engine.profile(&selection, &Default::default()).unwrap());
    }
}
