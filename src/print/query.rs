//! The text of `tracelogic query`.

use crate::common::{seconds, table};
use tracelogic_engine::query::QueryReport;

/// The text of `tracelogic query`.
pub fn text(r: &QueryReport) -> String {
    let mut o = format!("{} calls selected", r.calls_selected);
    if r.calls_selected as usize > r.calls.len() {
        o += &format!(" (first {} shown; --limit to change)", r.calls.len());
    }
    o += "\n";
    let rows = r
        .calls
        .iter()
        .map(|c| {
            vec![
                c.rank.to_string(),
                c.call.to_string(),
                c.function.clone(),
                seconds(c.enter_ns),
                seconds(c.exit_ns),
                c.bytes.to_string(),
            ]
        })
        .collect();
    o += &table(
        &["rank", "call", "function", "enter s", "exit s", "bytes"],
        rows,
        &[0, 1, 3, 4, 5],
    );
    o += &format!("\n{} messages selected", r.messages_selected);
    if r.messages_selected as usize > r.messages.len() {
        o += &format!(" (first {} shown)", r.messages.len());
    }
    o += &format!("; {} selected sends unmatched\n", r.unmatched_sends_selected);
    let rows = r
        .messages
        .iter()
        .map(|m| {
            vec![
                m.sender.to_string(),
                m.receiver.to_string(),
                m.bytes.to_string(),
                m.tag.to_string(),
                m.comm.clone(),
                format!("{} -> {}", m.send_function, m.recv_function),
                seconds(m.send_ns),
                seconds(m.recv_done_ns),
            ]
        })
        .collect();
    o += &table(
        &["from", "to", "bytes", "tag", "comm", "calls", "sent s", "received s"],
        rows,
        &[0, 1, 2, 3, 6, 7],
    );
    o += "\nfan-out / fan-in per rank (point-to-point + collective bytes)\n";
    let rows = r
        .fan
        .iter()
        .map(|f| {
            vec![
                f.rank.to_string(),
                f.bytes_out.to_string(),
                f.bytes_in.to_string(),
                f.messages_out.to_string(),
                f.messages_in.to_string(),
                f.peers_out.to_string(),
                f.peers_in.to_string(),
            ]
        })
        .collect();
    o += &table(
        &[
            "rank",
            "bytes out",
            "bytes in",
            "sends",
            "receives",
            "peers out",
            "peers in",
        ],
        rows,
        &[0, 1, 2, 3, 4, 5, 6],
    );
    o
}
