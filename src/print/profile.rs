//! The text of `tracelogic profile`: a table per MPI function by total time (like mpiP's and
//! Scalasca's summaries), computation per rank, and the message-size histograms.

use crate::common::table;
use tracelogic_engine::profile::{Profile, SizeBin};

fn s6(s: f64) -> String {
    format!("{s:.6}")
}

fn pct(x: f64) -> String {
    format!("{:.2}%", 100.0 * x)
}

/// `1Ki`, `64Mi`: a power-of-two size.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let mut i = 0;
    let mut b = bytes;
    while b >= 1024 && b.is_multiple_of(1024) && i + 1 < UNITS.len() {
        b /= 1024;
        i += 1;
    }
    format!("{b}{}", UNITS[i])
}

fn sizes(title: &str, bins: &[SizeBin]) -> String {
    if bins.is_empty() {
        return format!("{title}: none\n");
    }
    let rows = bins
        .iter()
        .map(|b| {
            let range = if b.hi_bytes == 0 {
                "0".to_owned()
            } else if b.hi_bytes == u64::MAX {
                format!("[{}, 2^64)", size(b.lo_bytes))
            } else {
                format!("[{}, {})", size(b.lo_bytes), size(b.hi_bytes))
            };
            vec![range, b.count.to_string(), b.bytes.to_string()]
        })
        .collect();
    format!(
        "{title}\n{}",
        indent(&table(&["bytes", "count", "total bytes"], rows, &[1, 2]))
    )
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {}\n", l.trim_end())).collect()
}

/// The text of `tracelogic profile`.
pub fn text(p: &Profile) -> String {
    let r = &p.report;
    let mut o = String::new();
    let rank_time = r.duration_s * r.active_ranks as f64;
    let mpi_share = if rank_time > 0.0 { r.mpi_s / rank_time } else { 0.0 };
    o += &format!(
        "{}: {} ranks ({} with calls), {:.6} s; {:.6} s in MPI over all ranks ({} of rank time)\n",
        p.source,
        r.ranks,
        r.active_ranks,
        r.duration_s,
        r.mpi_s,
        pct(mpi_share)
    );
    let rows = r
        .functions
        .iter()
        .map(|f| {
            vec![
                f.name.clone(),
                f.calls.to_string(),
                s6(f.total_s),
                pct(f.share),
                format!("{:.3}", f.mean_s * 1e6),
                format!("{} ({})", s6(f.min_rank_s), f.min_rank),
                s6(f.mean_rank_s),
                format!("{} ({})", s6(f.max_rank_s), f.max_rank),
            ]
        })
        .collect();
    o += "time per MPI function, by total time\n";
    o += &indent(&table(
        &[
            "function",
            "calls",
            "total s",
            "share",
            "mean us",
            "min rank s (rank)",
            "mean rank s",
            "max rank s (rank)",
        ],
        rows,
        &[1, 2, 3, 4, 5, 6, 7],
    ));
    let active: Vec<(usize, f64)> = r
        .compute_s
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, c)| *c > 0.0)
        .collect();
    if let (Some(lo), Some(hi)) = (
        active.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
        active.iter().max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0))),
    ) {
        let mean = active.iter().map(|c| c.1).sum::<f64>() / active.len() as f64;
        o += &format!(
            "computation per rank: min {:.6} s (rank {}), mean {:.6} s, max {:.6} s (rank {}), max/mean {:.3}\n",
            lo.1,
            lo.0,
            mean,
            hi.1,
            hi.0,
            if mean > 0.0 { hi.1 / mean } else { 0.0 }
        );
    }
    o += &sizes("point-to-point message sizes", &r.message_sizes.p2p);
    o += &sizes("collective sizes (per rank taking part)", &r.message_sizes.collective);
    let bt = &r.bytes_over_time;
    let busiest = bt
        .p2p_bytes
        .iter()
        .zip(&bt.collective_bytes)
        .map(|(a, b)| a + b)
        .enumerate()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)));
    if let Some((i, bytes)) = busiest.filter(|b| b.1 > 0) {
        o += &format!(
            "bytes over time: {} bins of {:.6} s; busiest bin {} ({:.6}-{:.6} s) moved {} bytes\n",
            bt.p2p_bytes.len(),
            bt.bin_s,
            i,
            bt.start_s + i as f64 * bt.bin_s,
            bt.start_s + (i + 1) as f64 * bt.bin_s,
            bytes
        );
    }
    o
}
