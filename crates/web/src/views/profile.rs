//! The profile view (`tracelogic profile`): time per MPI function as a table sortable by any
//! column, with each function's per-rank minimum, mean and maximum as bars; computation per
//! rank; the message-size histograms; bytes over time.

use super::whatif::{tick_label, ticks};
use super::{pending_note, seconds, use_parsed, AnalysisProps};
use crate::protocol::Profile;
use crate::text;
use tracelogic_engine::profile::{FunctionProfile, SizeBin};
use yew::prelude::*;

/// A column of the function table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// Function name.
    Name,
    /// Calls.
    Calls,
    /// Total time.
    Total,
    /// Mean time per call.
    Mean,
    /// Largest per-rank total.
    MaxRank,
}

impl Column {
    const ALL: [(Column, &'static str, &'static str); 5] = [
        (Column::Name, "name", "Function"),
        (Column::Calls, "calls", "Calls"),
        (Column::Total, "total", "Total"),
        (Column::Mean, "mean", "Mean per call"),
        (Column::MaxRank, "max-rank", "Per rank: min · mean · max"),
    ];
}

/// The functions sorted by `column`, descending (names ascending) unless `reverse`.
pub fn sorted(functions: &[FunctionProfile], column: Column, reverse: bool) -> Vec<&FunctionProfile> {
    let mut v: Vec<&FunctionProfile> = functions.iter().collect();
    v.sort_by(|a, b| {
        let o = match column {
            Column::Name => a.name.cmp(&b.name),
            Column::Calls => b.calls.cmp(&a.calls),
            Column::Total => b.total_s.total_cmp(&a.total_s),
            Column::Mean => b.mean_s.total_cmp(&a.mean_s),
            Column::MaxRank => b.max_rank_s.total_cmp(&a.max_rank_s),
        };
        o.then_with(|| a.name.cmp(&b.name))
    });
    if reverse {
        v.reverse();
    }
    v
}

/// A power of two in bytes: `64 B`, `4 KiB`, `1 MiB`.
fn power_of_two(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let (mut b, mut i) = (bytes, 0);
    while b >= 1024 && b.is_multiple_of(1024) && i + 1 < UNITS.len() {
        b /= 1024;
        i += 1;
    }
    format!("{b} {}", UNITS[i])
}

/// `[64 B, 128 B)`, the log2 bin's bounds.
fn size_range(b: &SizeBin) -> String {
    if b.hi_bytes == 0 {
        "0 B".into()
    } else if b.hi_bytes == u64::MAX {
        format!("≥ {}", power_of_two(b.lo_bytes))
    } else {
        format!("[{}, {})", power_of_two(b.lo_bytes), power_of_two(b.hi_bytes))
    }
}

/// A histogram of message sizes as horizontal bars of their counts.
fn histogram(id: &str, title: &str, bins: &[SizeBin]) -> Html {
    if bins.is_empty() {
        return html! { <p class="small" id={id.to_owned()}>{ format!("{title}: none.") }</p> };
    }
    let max = bins.iter().map(|b| b.count).max().unwrap_or(1).max(1) as f64;
    html! {
        <table class="bars" id={id.to_owned()}>
            <caption>{ title }</caption>
            <thead><tr><th scope="col">{ "Size" }</th><th scope="col" class="num">{ "Count" }</th>
                <th scope="col" class="num">{ "Bytes" }</th><th scope="col">{ "" }</th></tr></thead>
            <tbody>{ for bins.iter().map(|b| html! {
                <tr data-lo={b.lo_bytes.to_string()} data-count={b.count.to_string()} data-bytes={b.bytes.to_string()}>
                    <th scope="row">{ size_range(b) }</th><td class="num">{ b.count }</td><td class="num">{ text::bytes(b.bytes) }</td>
                    <td class="bar-cell"><div class="bar"><span class="segment compute" style={format!("width: {:.2}%", 100.0 * b.count as f64 / max)}></span></div></td>
                </tr>
            }) }</tbody>
        </table>
    }
}

/// Bytes per time bin as a column chart (point to point and collectives stacked).
fn bytes_over_time(p: &Profile) -> Html {
    let bt = &p.report.bytes_over_time;
    let n = bt.p2p_bytes.len();
    let total: Vec<u64> = (0..n)
        .map(|i| bt.p2p_bytes[i] + bt.collective_bytes.get(i).copied().unwrap_or(0))
        .collect();
    let max = total.iter().copied().max().unwrap_or(0);
    if n == 0 || max == 0 {
        return html! { <p class="small" id="profile-bytes">{ "No bytes moved." }</p> };
    }
    let (w, h, left, bottom, top) = (760.0, 180.0, 60.0, 28.0, 10.0);
    let bw = (w - left - 10.0) / n as f64;
    let y = |v: u64| (h - bottom) - (h - bottom - top) * v as f64 / max as f64;
    let length = bt.bin_s * n as f64;
    let xt = ticks(length, 6);
    let x_end = xt.last().copied().unwrap_or(length).max(1e-30);
    html! {
        <svg class="whatif-chart" id="profile-bytes" viewBox={format!("0 0 {w} {h}")} role="img"
            aria-label="Bytes sent per time bin over the run: point to point and collectives"
            data-bins={n.to_string()} data-bin-s={bt.bin_s.to_string()}>
            { for (0..n).map(|i| {
                let x = left + i as f64 * bw;
                let p2p = bt.p2p_bytes[i];
                let all = total[i];
                html! {
                    <g>
                        <title>{ format!("{}–{}: {} point to point, {} collectives",
                            seconds(i as f64 * bt.bin_s), seconds((i + 1) as f64 * bt.bin_s),
                            text::bytes(p2p), text::bytes(all - p2p)) }</title>
                        <rect x={x.to_string()} y={y(all).to_string()} width={bw.max(0.5).to_string()}
                            height={(y(p2p) - y(all)).to_string()} fill="#f2a03d" />
                        <rect x={x.to_string()} y={y(p2p).to_string()} width={bw.max(0.5).to_string()}
                            height={((h - bottom) - y(p2p)).to_string()} fill="#4c78a8" />
                    </g>
                }
            }) }
            { for xt.iter().map(|&t| {
                let x = left + (w - left - 10.0) * (t / x_end).min(1.0) * (x_end / length).min(1.0);
                html! { <text class="tick" x={x.to_string()} y={(h - 8.0).to_string()} text-anchor="middle">{ tick_label(t, x_end) }</text> }
            }) }
            <text class="tick" x="4" y={(top + 8.0).to_string()}>{ text::bytes(max) }</text>
            <text class="tick" x="4" y={(h - bottom).to_string()}>{ "0" }</text>
        </svg>
    }
}

/// The profile view.
#[function_component(ProfileView)]
pub fn profile_view(props: &AnalysisProps) -> Html {
    let sort = use_state(|| (Column::Total, false));
    let parsed = use_parsed::<Profile>(&props.state);
    let p = match parsed {
        Ok(p) => p,
        Err(waiting) => return html! { <section id="view-profile"><h2>{ "Profile" }</h2>{ waiting }</section> },
    };
    let r = &p.report;
    let rank_time = r.duration_s * r.active_ranks as f64;
    let (column, reverse) = *sort;
    let widest = r.functions.iter().map(|f| f.max_rank_s).fold(0.0, f64::max).max(1e-30);
    let header = Column::ALL.iter().map(|&(c, id, label)| {
        let sort = sort.clone();
        let onclick = Callback::from(move |_: MouseEvent| {
            let (old, rev) = *sort;
            sort.set((c, if old == c { !rev } else { false }));
        });
        // Only the sorted column carries `aria-sort` (the page's style marks it).
        let state = (c == column).then_some(if reverse { "ascending" } else { "descending" });
        let class = if c == Column::Name || c == Column::MaxRank {
            ""
        } else {
            "num"
        };
        html! {
            <th scope="col" class={class} aria-sort={state}>
                <button type="button" class="sort" id={format!("profile-sort-{id}")} {onclick}>{ label }</button>
            </th>
        }
    });
    let rows = sorted(&r.functions, column, reverse).into_iter().map(|f| {
        let pct = |v: f64| format!("{:.2}%", 100.0 * v / widest);
        html! {
            <tr data-function={f.name.clone()} data-calls={f.calls.to_string()} data-total={f.total_s.to_string()}
                data-min={f.min_rank_s.to_string()} data-mean={f.mean_rank_s.to_string()} data-max={f.max_rank_s.to_string()}>
                <th scope="row">{ &f.name }</th>
                <td class="num">{ f.calls }</td>
                <td class="num">{ seconds(f.total_s) }<span class="small">{ format!(" {:.1}%", 100.0 * f.share) }</span></td>
                <td class="num">{ seconds(f.mean_s) }</td>
                <td class="bar-cell" title={format!("min {} (rank {}), mean {}, max {} (rank {})",
                    seconds(f.min_rank_s), f.min_rank, seconds(f.mean_rank_s), seconds(f.max_rank_s), f.max_rank)}>
                    <div class="bar"><span class="segment compute" style={format!("width: {}", pct(f.min_rank_s))}></span>
                        <span class="segment wait" style={format!("width: {}", pct(f.mean_rank_s - f.min_rank_s))}></span>
                        <span class="segment latency" style={format!("width: {}", pct(f.max_rank_s - f.mean_rank_s))}></span></div>
                    <span class="small">{ format!("{} · {} · {} (rank {})", seconds(f.min_rank_s), seconds(f.mean_rank_s), seconds(f.max_rank_s), f.max_rank) }</span>
                </td>
            </tr>
        }
    });
    let compute_max = r.compute_s.iter().copied().fold(0.0, f64::max).max(1e-30);
    html! {
        <section id="view-profile" data-ranks={r.ranks.to_string()} data-duration={r.duration_s.to_string()}>
            <h2>{ "Profile" }</h2>
            { pending_note(&props.state) }
            <p id="profile-line">{ format!("{} ranks over {}; {} inside MPI over all ranks ({:.1}% of their time).",
                r.ranks, seconds(r.duration_s), seconds(r.mpi_s), if rank_time > 0.0 { 100.0 * r.mpi_s / rank_time } else { 0.0 }) }</p>
            <div class="bar-legend"><span class="key compute">{ "min over ranks" }</span><span class="key wait">{ "to mean" }</span><span class="key latency">{ "to max" }</span></div>
            <table class="bars" id="profile-table">
                <caption>{ "Time per MPI function (click a column to sort)" }</caption>
                <thead><tr>{ for header }</tr></thead>
                <tbody>{ for rows }</tbody>
            </table>
            <h3>{ "Computation per rank" }</h3>
            <table class="bars" id="profile-compute">
                <thead><tr><th scope="col">{ "Rank" }</th><th scope="col" class="num">{ "Computation" }</th><th scope="col">{ "" }</th></tr></thead>
                <tbody>{ for r.compute_s.iter().enumerate().map(|(rank, &c)| html! {
                    <tr data-rank={rank.to_string()} data-compute={c.to_string()}>
                        <th scope="row">{ format!("rank {rank}") }</th><td class="num">{ seconds(c) }</td>
                        <td class="bar-cell"><div class="bar"><span class="segment compute" style={format!("width: {:.2}%", 100.0 * c / compute_max)}></span></div></td>
                    </tr>
                }) }</tbody>
            </table>
            <h3>{ "Message sizes" }</h3>
            { histogram("profile-sizes-p2p", "Point-to-point sends", &r.message_sizes.p2p) }
            { histogram("profile-sizes-collective", "Collectives (one per rank taking part)", &r.message_sizes.collective) }
            <h3>{ "Bytes over time" }</h3>
            <div class="bar-legend"><span class="key compute">{ "point to point" }</span><span class="key latency">{ "collectives" }</span></div>
            { bytes_over_time(&p) }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str, calls: u64, total_s: f64) -> FunctionProfile {
        FunctionProfile {
            name: name.into(),
            calls,
            total_s,
            mean_s: total_s / calls as f64,
            share: 0.0,
            min_rank_s: 0.0,
            mean_rank_s: 0.0,
            max_rank_s: total_s,
            min_rank: 0,
            max_rank: 0,
        }
    }

    #[test]
    fn columns_sort_descending_then_by_name_and_reverse() {
        let fs = vec![f("MPI_Send", 10, 1.0), f("MPI_Recv", 5, 2.0), f("MPI_Bcast", 10, 0.5)];
        let names = |v: Vec<&FunctionProfile>| v.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(sorted(&fs, Column::Total, false)),
            ["MPI_Recv", "MPI_Send", "MPI_Bcast"]
        );
        assert_eq!(
            names(sorted(&fs, Column::Calls, false)),
            ["MPI_Bcast", "MPI_Send", "MPI_Recv"]
        );
        assert_eq!(
            names(sorted(&fs, Column::Name, false)),
            ["MPI_Bcast", "MPI_Recv", "MPI_Send"]
        );
        assert_eq!(
            names(sorted(&fs, Column::Total, true)),
            ["MPI_Bcast", "MPI_Send", "MPI_Recv"]
        );
    }
}
