//! The text of `tracelogic waits`: the six wait states' totals, then per function, per rank and
//! per (sender, receiver) pair, largest first.

use crate::common::table;
use tracelogic_engine::waits::{Waits, WaitsReport};

fn s6(s: f64) -> String {
    format!("{s:.6}")
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {}\n", l.trim_end())).collect()
}

/// The six wait states with their JSON names and the words shown.
pub const STATES: [(&str, &str); 6] = [
    ("late_sender_s", "late sender"),
    ("late_receiver_s", "late receiver"),
    ("wait_nxn_s", "wait at N×N"),
    ("wait_barrier_s", "wait at barrier"),
    ("late_broadcast_s", "late broadcast"),
    ("early_reduce_s", "early reduce"),
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

fn row(label: String, w: &Waits) -> Vec<String> {
    let mut r = vec![label, s6(w.total_s())];
    r.extend(values(w).iter().map(|&v| s6(v)));
    r
}

const HEADER: [&str; 8] = [
    "",
    "total s",
    "late sender",
    "late receiver",
    "N×N",
    "barrier",
    "late bcast",
    "early reduce",
];

/// The text of `tracelogic waits`, at most `top` rows per rank and per pair.
pub fn text(r: &WaitsReport, top: usize) -> String {
    let w = &r.report;
    let total = w.totals.total_s();
    let mut o = format!(
        "{}: {:.6} s waiting of {:.6} s in MPI over all ranks ({:.1}%)\n",
        r.source,
        total,
        r.mpi_s,
        if r.mpi_s > 0.0 { 100.0 * total / r.mpi_s } else { 0.0 }
    );
    let rows = STATES
        .iter()
        .zip(values(&w.totals))
        .map(|(&(_, name), v)| {
            let share = if total > 0.0 { 100.0 * v / total } else { 0.0 };
            vec![name.to_owned(), s6(v), format!("{share:.1}%")]
        })
        .collect();
    o += &indent(&table(&["wait state", "seconds", "of waiting"], rows, &[1, 2]));
    if w.clock_violations > 0 {
        o += &format!(
            "  {} messages were received before they were sent (unsynchronised clocks): their waits are bounded by the call\n",
            w.clock_violations
        );
    }
    if let Some(p) = r.polling.as_ref().filter(|p| p.calls > 0) {
        o += &format!(
            "  polling: {:.6} s ({:.1}% of the time in MPI) in {} non-blocking probes and tests that completed nothing: waiting by polling, which no wait state above counts\n",
            p.seconds,
            if r.mpi_s > 0.0 { 100.0 * p.seconds / r.mpi_s } else { 0.0 },
            p.calls
        );
    }
    if !w.by_function.is_empty() {
        o += "by MPI function\n";
        let mut h = HEADER;
        h[0] = "function";
        let rows = w.by_function.iter().map(|f| row(f.name.clone(), &f.waits)).collect();
        o += &indent(&table(&h, rows, &[1, 2, 3, 4, 5, 6, 7]));
    }
    let mut ranks: Vec<_> = w.by_rank.iter().filter(|r| r.waits.total_s() > 0.0).collect();
    if !ranks.is_empty() {
        ranks.sort_by(|a, b| {
            b.waits
                .total_s()
                .total_cmp(&a.waits.total_s())
                .then(a.rank.cmp(&b.rank))
        });
        let shown = ranks.len().min(top);
        o += &if shown < ranks.len() {
            format!("by rank (the {shown} that waited longest of {})\n", ranks.len())
        } else {
            "by rank, longest first\n".to_owned()
        };
        let mut h = HEADER;
        h[0] = "rank";
        let rows = ranks[..shown]
            .iter()
            .map(|r| row(r.rank.to_string(), &r.waits))
            .collect();
        o += &indent(&table(&h, rows, &[0, 1, 2, 3, 4, 5, 6, 7]));
    }
    let pairs = r.top_pairs(top);
    if !pairs.is_empty() {
        o += &format!(
            "late sender by pair ({} of {} pairs, longest first)\n",
            pairs.len(),
            w.by_pair.iter().filter(|p| p.late_sender_s > 0.0).count()
        );
        let rows = pairs
            .iter()
            .map(|p| vec![p.sender.to_string(), p.receiver.to_string(), s6(p.late_sender_s)])
            .collect();
        o += &indent(&table(&["sender", "receiver", "receiver waited s"], rows, &[0, 1, 2]));
    }
    o
}
