//! The text of `tracelogic summary`.

use crate::common::table;
use tracelogic_engine::summary::Summary;

/// The text of `tracelogic summary`.
pub fn text(s: &Summary) -> String {
    let mut o = String::new();
    let min = s.calls_per_rank.iter().min().copied().unwrap_or(0);
    let max = s.calls_per_rank.iter().max().copied().unwrap_or(0);
    o += &format!("trace          {} ({})\n", s.source, s.format);
    o += &format!("ranks          {}\n", s.ranks);
    o += &format!("MPI calls      {} ({min}-{max} per rank)\n", s.calls);
    o += &format!("duration       {:.6} s\n", s.duration_s);
    o += &format!(
        "point-to-point {} sends, {} bytes, {} receives; {} matched, {} unmatched sends, {} unmatched receives\n",
        s.p2p_messages, s.p2p_bytes, s.p2p_receives, s.matched_messages, s.unmatched_sends, s.unmatched_recvs
    );
    o += &format!(
        "collectives    {} operations (one per rank taking part), {} bytes contributed\n",
        s.collective_ops, s.collective_bytes
    );
    if s.one_sided_calls > 0 {
        o += &format!(
            "one-sided      {} calls (MPI_Put, MPI_Get, MPI_Accumulate...): counted, not messages; their traffic is in no matrix or message analysis\n",
            s.one_sided_calls
        );
    }
    if let Some(t) = &s.threads {
        o += &format!("threads        {t}\n");
    }
    o += &format!("communicators  {}\n", s.communicators.len());
    let comms: Vec<Vec<String>> = s
        .communicators
        .iter()
        .enumerate()
        .map(|(i, c)| {
            vec![
                i.to_string(),
                c.name.clone(),
                c.size.to_string(),
                c.p2p_sends.to_string(),
                c.p2p_bytes.to_string(),
            ]
        })
        .collect();
    o += &indent(&table(
        &["id", "name", "ranks", "p2p sends", "p2p bytes"],
        comms,
        &[0, 2, 3, 4],
    ));
    let mut by_count: Vec<(&String, &u64)> = s.calls_by_kind.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    o += "calls by function\n";
    let rows = by_count
        .into_iter()
        .map(|(name, n)| vec![name.clone(), n.to_string()])
        .collect();
    o += &indent(&table(&["function", "calls"], rows, &[1]));
    o
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {}\n", l.trim_end())).collect()
}
