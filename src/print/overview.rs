//! The text of `tracelogic overview`.

use crate::common::table;
use tracelogic_engine::overview::OverviewReport;

/// Columns of the activity strip.
const STRIP: usize = 64;

/// One character per MPI share, from none to all.
fn shade(permille: u16) -> char {
    const SHADES: &[char] = &[' ', '.', ':', '-', '=', '+', '*', '#', '%', '@'];
    SHADES[(permille as usize * (SHADES.len() - 1))
        .div_ceil(1000)
        .min(SHADES.len() - 1)]
}

/// The text of `tracelogic overview`; `paths` is how the user named the trace.
pub fn text(r: &OverviewReport, paths: &str) -> String {
    let o = &r.overview;
    let mut s = String::new();
    let min = o.calls_per_rank.iter().min().copied().unwrap_or(0);
    let max = o.calls_per_rank.iter().max().copied().unwrap_or(0);
    s += &format!("trace          {} ({})\n", o.source, o.format);
    s += &format!(
        "input          {:.1} MB, {}\n",
        r.input_bytes as f64 / 1e6,
        if r.streamed {
            "read one rank at a time"
        } else {
            "read whole (only OTF2 folders are streamed)"
        }
    );
    s += &format!("ranks          {} ({} made MPI calls)\n", o.ranks, o.active_ranks);
    s += &format!("MPI calls      {} ({min}-{max} per rank)\n", o.calls);
    s += &format!(
        "duration       {:.6} s, {:.1} % of the rank time inside MPI\n",
        o.duration_s,
        {
            let rank_s = o.duration_s * o.active_ranks as f64;
            if rank_s > 0.0 {
                100.0 * o.mpi_s / rank_s
            } else {
                0.0
            }
        }
    );
    s += &format!(
        "point-to-point {} sends, {} bytes, {} receives; {} communicating pairs\n",
        o.p2p_messages,
        o.p2p_bytes,
        o.p2p_receives,
        o.matrix.nonzero()
    );
    s += &format!(
        "collectives    {} operations (one per rank taking part), {} bytes contributed\n",
        o.collective_ops, o.collective_bytes
    );
    let topology = match &r.topology.identification.matched {
        Some(m) => m.label.clone(),
        None => tracelogic_engine::topology::verdict(&r.topology)
            .why_not
            .unwrap_or_else(|| "none identified".into()),
    };
    s += &format!("topology       {topology}\n");
    s += "MPI functions (most time first)\n";
    let rows = o
        .functions
        .iter()
        .take(12)
        .map(|f| {
            vec![
                f.name.clone(),
                f.calls.to_string(),
                format!("{:.6}", f.total_s),
                format!("{:.1}", 100.0 * f.share),
                format!("{:.6}", f.min_rank_s),
                format!("{:.6}", f.mean_rank_s),
                format!("{:.6}", f.max_rank_s),
            ]
        })
        .collect();
    s += &indent(&table(
        &[
            "function",
            "calls",
            "total s",
            "share %",
            "min/rank s",
            "mean/rank s",
            "max/rank s",
        ],
        rows,
        &[1, 2, 3, 4, 5, 6],
    ));
    let a = &o.activity;
    let per = a.bins.div_ceil(STRIP).max(1);
    let strip: String = a
        .mpi_permille
        .chunks(per)
        .map(|c| shade((c.iter().map(|&v| v as u32).sum::<u32>() / c.len() as u32) as u16))
        .collect();
    s += &format!(
        "activity       share of the rank time inside MPI, {} bins of {:.6} s from {:+.6} s ({} per column)\n",
        a.bins,
        a.bin_ns as f64 / 1e9,
        a.start_ns as f64 / 1e9,
        per
    );
    s += &format!("  |{strip}|\n");
    s += "phase sketch\n";
    let rows = o
        .phases
        .iter()
        .map(|p| {
            let from = a.start_ns as f64 + (p.first_bin as u64 * a.bin_ns) as f64;
            let to = from + (p.bins as u64 * a.bin_ns) as f64;
            vec![
                format!("{:.6}", from.max(0.0) / 1e9),
                format!("{:.6}", to.min(o.duration_s * 1e9) / 1e9),
                p.activity.clone(),
                format!("{:.1}", p.mpi_permille as f64 / 10.0),
            ]
        })
        .collect();
    s += &indent(&table(&["from s", "to s", "dominant", "MPI %"], rows, &[0, 1, 3]));
    s += "load a part in full for the event-level analyses with --ranks, --from and --to, e.g.\n";
    s += &format!(
        "  tracelogic phases {paths} --ranks 0-{} --from 0s --to {:.3}s\n",
        o.ranks.min(4).saturating_sub(1),
        o.duration_s / 10.0
    );
    s
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}
