//! The text of `tracelogic replay`.

use crate::common::table;
use tracelogic_engine::replay::{waiting_note, Sweep, WhatIf};

fn fmt_s(s: f64) -> String {
    format!("{s:.6}")
}

fn fmt_bandwidth(b: f64) -> String {
    let bits = b * 8.0;
    if bits >= 1e9 {
        format!("{:.4} Gb/s", bits / 1e9)
    } else {
        format!("{:.4} Mb/s", bits / 1e6)
    }
}

fn fmt_latency(l: f64) -> String {
    format!("{:.3} us", l * 1e6)
}

/// The text of `tracelogic replay` (with each rank's breakdown on the recording network when
/// `per_rank`).
pub fn text(r: &WhatIf, per_rank: bool) -> String {
    let mut o = String::new();
    o += &format!(
        "replayed {} MPI calls and {} messages; measured duration {:.6} s\n",
        r.calls, r.messages, r.measured_s
    );
    if let Some(v) = &r.reference {
        let err = v
            .relative_error
            .map(|e| format!("{:+.1}%", 100.0 * e))
            .unwrap_or_else(|| "n/a".into());
        o += &format!(
            "on {} (taken as the recording network) predicted {:.6} s vs measured {:.6} s: error {err}\n",
            v.network, v.predicted_s, v.measured_s
        );
        if let Some(e) = v.relative_error_inside_model.filter(|_| v.outside_model_s > 0.0) {
            o += &format!(
                "  ({:.6} s of the measured time is in MPI_Init, MPI_Finalize and communicator set-up, which the model prices at 0; error without it {:+.1}%)\n",
                v.outside_model_s,
                100.0 * e
            );
        }
        if let Some(note) = waiting_note(r) {
            o += &format!("  {note}\n");
        }
    }
    let not_replayed = r
        .configurations
        .iter()
        .map(|c| c.breakdown.not_replayed_s)
        .fold(0.0, f64::max);
    if not_replayed > 0.0 {
        o += &format!(
            "{:.6} s per rank (mean) is communication outside the selection: kept at its recorded duration under every configuration (column `not replayed s`), not counted as computation\n",
            not_replayed
        );
    }
    let mut names: Vec<&str> = Vec::new();
    for c in &r.configurations {
        if !names.contains(&c.configuration.network.as_str()) {
            names.push(&c.configuration.network);
        }
    }
    for name in names {
        o += &format!("\nnetwork {name}\n");
        let base = r
            .configurations
            .iter()
            .find(|c| c.configuration.network == name && c.configuration.sweep == Sweep::Base)
            .map(|c| c.predicted_s)
            .unwrap_or(0.0);
        let mut rows = Vec::new();
        for sweep in [Sweep::Scaled, Sweep::BandwidthOnly, Sweep::LatencyOnly] {
            let mut group: Vec<_> = r
                .configurations
                .iter()
                .filter(|c| {
                    c.configuration.network == name
                        && (c.configuration.sweep == sweep || c.configuration.sweep == Sweep::Base)
                })
                .collect();
            let only_base = r
                .configurations
                .iter()
                .all(|c| c.configuration.network != name || c.configuration.sweep == Sweep::Base);
            if group.len() < 2 && !(only_base && sweep == Sweep::Scaled) {
                continue;
            }
            group.sort_by(|a, b| a.configuration.scale.total_cmp(&b.configuration.scale));
            for c in group {
                let b = &c.breakdown;
                let change = if base > 0.0 {
                    format!("{:+.1}%", 100.0 * (c.predicted_s - base) / base)
                } else {
                    "n/a".into()
                };
                let sweep_name = match c.configuration.sweep {
                    Sweep::Base => "base",
                    Sweep::Scaled => "scaled",
                    Sweep::BandwidthOnly => "bandwidth",
                    Sweep::LatencyOnly => "latency",
                };
                let mut row = vec![
                    sweep_name.to_owned(),
                    c.configuration.label.clone(),
                    fmt_bandwidth(c.configuration.bandwidth_bytes_per_s),
                    fmt_latency(c.configuration.latency_s),
                    fmt_s(c.predicted_s),
                    change,
                    fmt_s(b.compute_s),
                    fmt_s(b.wait_s),
                    fmt_s(b.latency_term_s),
                    fmt_s(b.bandwidth_term_s),
                ];
                if not_replayed > 0.0 {
                    row.push(fmt_s(b.not_replayed_s));
                }
                rows.push(row);
            }
        }
        let mut header = vec![
            "sweep",
            "config",
            "bandwidth",
            "latency",
            "predicted s",
            "vs base",
            "compute s",
            "wait s",
            "latency s",
            "bandwidth s",
        ];
        let mut right = vec![2, 3, 4, 5, 6, 7, 8, 9];
        if not_replayed > 0.0 {
            header.push("not replayed s");
            right.push(10);
        }
        let t = table(&header, rows, &right);
        o += &indent(&t);
        if let Some(c) = r.classification.iter().find(|c| c.network == name) {
            o += &format!("  classification: {}\n  reason: {}\n", c.label, c.reason);
        } else {
            o += "  classification: n/a (it needs at least one scale factor other than 1)\n";
        }
    }
    if per_rank {
        let recorded = r.reference.as_ref().map(|v| v.network.as_str());
        if let Some(c) = r
            .configurations
            .iter()
            .find(|c| Some(c.configuration.network.as_str()) == recorded && c.configuration.sweep == Sweep::Base)
        {
            if let Some(ranks) = &c.ranks {
                o += &format!("\nper rank on {} {}\n", c.configuration.network, c.configuration.label);
                let rows = ranks
                    .iter()
                    .map(|rb| {
                        let mut row = vec![
                            rb.rank.to_string(),
                            fmt_s(rb.end_s),
                            fmt_s(rb.breakdown.compute_s),
                            fmt_s(rb.breakdown.wait_s),
                            fmt_s(rb.breakdown.latency_term_s),
                            fmt_s(rb.breakdown.bandwidth_term_s),
                        ];
                        if not_replayed > 0.0 {
                            row.push(fmt_s(rb.breakdown.not_replayed_s));
                        }
                        row
                    })
                    .collect();
                let mut header = vec!["rank", "ends s", "compute s", "wait s", "latency s", "bandwidth s"];
                let mut right = vec![0, 1, 2, 3, 4, 5];
                if not_replayed > 0.0 {
                    header.push("not replayed s");
                    right.push(6);
                }
                o += &indent(&table(&header, rows, &right));
            }
        }
    }
    let w = &r.warnings;
    if !w.is_empty() {
        o += &format!(
            "\nworked around: {} unmatched receives, {} receives whose send never came, {} incomplete collectives, {} mismatched collectives, {} collective calls without a record, {} unknown communicators, {} invalid messages\n",
            w.unmatched_recvs,
            w.unresolved_recvs,
            w.incomplete_collectives,
            w.mismatched_collectives,
            w.collectives_without_record,
            w.unknown_communicators,
            w.invalid_messages
        );
    }
    o
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {}\n", l.trim_end())).collect()
}
