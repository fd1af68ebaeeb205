//! `tracelogic replay`: predict the run time under other networks and classify what bounds it.

use crate::common::{
    emit, load_trace, print_json, select, set_stage, table, CliError, CliResult, Selected, SelectionArgs,
};
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_analysis::replay::{
    dropped_calls, parse_scales, waiting_note, what_if_restricted, DroppedCalls, MessageTable, Network, Sweep, WhatIf,
    WhatIfOptions, MAX_CONFIGURATIONS, SEED_SCALES,
};
use tracelogic_model::{match_messages, Selection};

/// Arguments of `tracelogic replay`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Network to predict for and classify on; repeat for several. A preset (`1GbE`, `10GbE`,
    /// `QDR`) or `alpha=5us,beta=0.8ns` / `latency=5us,bandwidth=10Gb/s`. Default: all presets.
    #[arg(long = "network", value_name = "PRESET|alpha=..,beta=..", value_parser = Network::parse)]
    pub networks: Vec<Network>,
    /// Speed-up factors of the scaled set and of the bandwidth-only and latency-only sweeps.
    #[arg(long, value_name = "LIST", default_value = "1/8,1/4,1/2,1,2,4,8", value_parser = scales_arg)]
    pub scales: Scales,
    /// Measured message times (`bytes seconds` per line) replacing Hockney's model; its own
    /// network (`table`) is added first and is taken as the recording machine's.
    #[arg(long, value_name = "FILE")]
    pub table: Option<PathBuf>,
    /// Network closest to the machine that recorded the trace (default: the first one).
    #[arg(long, value_name = "NAME")]
    pub recorded_on: Option<String>,
    /// Keep each rank's breakdown (JSON `ranks` per configuration; a table for the reference).
    #[arg(long)]
    pub per_rank: bool,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// Scale factors as one flag value (`1/8,1/4,...`).
#[derive(Debug, Clone)]
pub struct Scales(pub Vec<f64>);

fn scales_arg(text: &str) -> Result<Scales, String> {
    parse_scales(text).map(Scales)
}

/// Run `tracelogic replay`.
pub fn run(args: Args) -> CliResult {
    let Analysed {
        report,
        selection,
        calls,
        source,
    } = analyse(&args)?;
    if args.json {
        print_json(&Selected {
            report: &report,
            selection: &selection,
        })?;
    } else {
        let text = human(&report, args.per_rank);
        emit(|out| out.write_all(text.as_bytes()))?;
    }
    if calls == 0 {
        let what = if selection == Selection::all() {
            "the trace"
        } else {
            "the selection"
        };
        return Err(CliError::NothingFound(format!(
            "{source}: {what} has no MPI calls to replay"
        )));
    }
    Ok(ExitCode::SUCCESS)
}

/// What `tracelogic replay` prints, and what it needs to choose its exit code.
struct Analysed {
    report: WhatIf,
    selection: Selection,
    /// MPI calls in the (restricted) trace.
    calls: u64,
    /// The trace's source, for messages.
    source: String,
}

/// Read the trace, restrict it to the selection (keeping aside what it dropped) and replay it.
fn analyse(args: &Args) -> Result<Analysed, CliError> {
    let table = match &args.table {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::Input(format!("cannot read {}: {e}", path.display())))?;
            Some(MessageTable::parse(&text).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?)
        }
    };
    let mut networks = if args.networks.is_empty() {
        Network::presets()
    } else {
        args.networks.clone()
    };
    if let Some(t) = &table {
        networks.insert(0, t.network());
    }
    let scales: Vec<f64> = args.scales.0.clone();
    let scales = if scales.is_empty() {
        SEED_SCALES.to_vec()
    } else {
        scales
    };
    let per_network = 1 + 3 * scales.iter().filter(|&&s| (s - 1.0).abs() > 1e-12).count();
    if networks.len() * per_network > MAX_CONFIGURATIONS {
        return Err(CliError::Input(format!(
            "{} networks × {per_network} configurations each exceed the {MAX_CONFIGURATIONS} one replay holds",
            networks.len()
        )));
    }
    if let Some(name) = &args.recorded_on {
        if !networks.iter().any(|n| &n.name == name) {
            let known: Vec<&str> = networks.iter().map(|n| n.name.as_str()).collect();
            return Err(CliError::Input(format!(
                "--recorded-on: no network `{name}` among {}",
                known.join(", ")
            )));
        }
    }
    let original = load_trace(&args.paths)?;
    // A selection drops calls; what it dropped is kept aside so that their time is not taken
    // for computation. The whole trace needs no copy.
    let selects_all = args
        .selection
        .selection(&original)
        .map_or(true, |s| s == Selection::all());
    let (trace, selection, dropped) = if selects_all {
        let (trace, selection) = select(original, &args.selection)?;
        (trace, selection, DroppedCalls::default())
    } else {
        let (trace, selection) = select(original.clone(), &args.selection)?;
        set_stage("measuring the calls the selection dropped");
        let dropped = dropped_calls(&original, &trace).map_err(|e| CliError::Input(e.to_string()))?;
        drop(original);
        (trace, selection, dropped)
    };
    set_stage("matching messages");
    let matching = match_messages(&trace);
    set_stage("replaying the trace");
    let options = WhatIfOptions {
        table,
        recorded_on: args.recorded_on.clone(),
        per_rank: args.per_rank,
        ..WhatIfOptions::new(networks, scales)
    };
    let report =
        what_if_restricted(&trace, &dropped, &matching, &options).map_err(|e| CliError::Input(e.to_string()))?;
    Ok(Analysed {
        report,
        selection,
        calls: trace.num_calls(),
        source: trace.source.clone(),
    })
}

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

fn human(r: &WhatIf, per_rank: bool) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_model::{P2pDir, Trace, COMM_WORLD, NO_CALLPATH};

    fn args(table: Option<PathBuf>, recorded_on: Option<&str>) -> Args {
        Args {
            paths: vec![PathBuf::from("/nonexistent/trace")],
            networks: vec![],
            scales: Scales(SEED_SCALES.to_vec()),
            table,
            recorded_on: recorded_on.map(str::to_owned),
            per_rank: false,
            json: false,
            selection: SelectionArgs::default(),
        }
    }

    #[test]
    fn table_errors_name_the_file_and_line() {
        let path = std::env::temp_dir().join(format!("tracelogic-replay-table-{}.txt", std::process::id()));
        std::fs::write(&path, "0 1us\n1024 fast\n").unwrap();
        let err = run(args(Some(path.clone()), None)).unwrap_err().to_string();
        std::fs::remove_file(&path).ok();
        assert!(
            err.contains(&path.display().to_string()) && err.contains("line 2"),
            "{err}"
        );
        let missing = run(args(Some(PathBuf::from("/nonexistent/table.txt")), None)).unwrap_err();
        assert!(missing.to_string().contains("/nonexistent/table.txt"));
    }

    #[test]
    fn recorded_on_must_name_a_network() {
        let err = run(args(None, Some("Myrinet"))).unwrap_err().to_string();
        assert!(err.contains("Myrinet") && err.contains("10GbE"), "{err}");
    }

    /// A text trace on disk whose only communication cost is an `MPI_Allreduce` (30 ms on each
    /// of 4 ranks, after 10 ms of computation), plus one 8-byte message.
    fn collective_trace_file() -> PathBuf {
        use tracelogic_model::{CollectiveOp, Time};
        const MS: Time = 1_000_000;
        let mut t = Trace::new("generated", "allreduce", 4);
        for r in 0..4 {
            t.push_call(r, "MPI_Init", 0, MS, NO_CALLPATH, 0);
            let c = t.push_call(r, "MPI_Allreduce", 11 * MS, 41 * MS, NO_CALLPATH, 0);
            t.push_collective(r, c, CollectiveOp::Allreduce, COMM_WORLD, 0, 8, 8);
            if r < 2 {
                let (name, dir, peer) = if r == 0 {
                    ("MPI_Send", P2pDir::Send, 1)
                } else {
                    ("MPI_Recv", P2pDir::Recv, 0)
                };
                let p = t.push_call(r, name, 42 * MS, 42 * MS + 1000, NO_CALLPATH, 0);
                t.push_p2p(r, p, p, dir, peer, 0, COMM_WORLD, 8);
            }
            t.push_call(r, "MPI_Finalize", 43 * MS, 43 * MS, NO_CALLPATH, 0);
        }
        let path = std::env::temp_dir().join(format!("tracelogic-replay-p2p-{}.txt", std::process::id()));
        std::fs::write(&path, tracelogic_formats::text::write(&t)).unwrap();
        path
    }

    #[test]
    fn point_to_point_replay_keeps_the_dropped_collective_out_of_computation() {
        let path = collective_trace_file();
        let mut a = args(None, None);
        a.paths = vec![path.clone()];
        a.per_rank = true;
        let whole = analyse(&a).unwrap();
        a.selection.kinds = Some(crate::common::KindList(
            tracelogic_model::query::parse_kinds("p2p").unwrap(),
        ));
        let p2p = analyse(&a).unwrap();
        std::fs::remove_file(&path).ok();

        assert_eq!(p2p.calls, 2);
        let base = &p2p.report.configurations[0];
        // 10 ms of computation before the allreduce (MPI_Init's 1 ms costs 0), 2 ms after it
        // (less the 1 µs message on ranks 0 and 1).
        assert!((base.breakdown.compute_s - 0.012).abs() < 1e-5, "{:?}", base.breakdown);
        assert!(
            (base.breakdown.not_replayed_s - 0.030).abs() < 1e-9,
            "{:?}",
            base.breakdown
        );
        assert!(p2p.report.classification.iter().all(|c| c.label == "n/a"));
        assert!((p2p.report.reference.as_ref().unwrap().outside_model_s - 0.001).abs() < 1e-9);
        // The whole trace replays the collective instead, with nothing outside the replay.
        assert!(whole
            .report
            .configurations
            .iter()
            .all(|c| c.breakdown.not_replayed_s == 0.0));

        let text = human(&p2p.report, true);
        assert!(text.contains("communication outside the selection"), "{text}");
        assert!(text.contains("not replayed s"), "{text}");
        assert!(text.contains("classification: n/a"), "{text}");
        assert!(text.contains("0.030000"), "{text}");
        let json = serde_json::to_value(&p2p.report).unwrap();
        let not_replayed = json["configurations"][0]["not_replayed_s"].as_f64().unwrap();
        assert!((not_replayed - 0.03).abs() < 1e-9, "{not_replayed}");
        assert_eq!(json["classification"][0]["bound"], "undetermined");
        assert!(!human(&whole.report, true).contains("not replayed"));
    }

    /// Ten 1 KiB messages, each call taking `inside` ns of every `period` ns.
    fn ping_pong_waiting(inside: u64, period: u64) -> String {
        let mut t = Trace::new("generated", "ping-pong", 2);
        for i in 0..10u64 {
            let s = t.push_call(0, "MPI_Send", i * period, i * period + inside, NO_CALLPATH, 0);
            t.push_p2p(0, s, s, P2pDir::Send, 1, 0, COMM_WORLD, 1024);
            let r = t.push_call(1, "MPI_Recv", i * period, i * period + inside, NO_CALLPATH, 0);
            t.push_p2p(1, r, r, P2pDir::Recv, 0, 0, COMM_WORLD, 1024);
        }
        let options = WhatIfOptions::new(Network::presets(), SEED_SCALES.to_vec());
        let report = tracelogic_analysis::replay::what_if(&t, &match_messages(&t), &options).unwrap();
        human(&report, false)
    }

    #[test]
    fn a_run_that_waited_inside_mpi_is_explained() {
        // 99 % of every period inside MPI for a 1 KiB message: far longer than any network.
        let waited = ping_pong_waiting(990_000_000, 1_000_000_000);
        assert!(waited.contains("spent the rest inside MPI"), "{waited}");
        assert!(waited.contains("0.9% of the measured time"), "{waited}");
        // Mostly computing between short calls: the prediction is close and needs no note.
        let computed = ping_pong_waiting(20_000, 1_000_000_000);
        assert!(!computed.contains("inside MPI:"), "{computed}");
    }

    #[test]
    fn human_output_shows_every_configuration_and_the_classification() {
        let mut t = Trace::new("generated", "ping-pong", 2);
        for i in 0..10u64 {
            let s = t.push_call(0, "MPI_Send", i * 1000, i * 1000 + 10, NO_CALLPATH, 0);
            t.push_p2p(0, s, s, P2pDir::Send, 1, 0, COMM_WORLD, 1 << 20);
            let r = t.push_call(1, "MPI_Recv", i * 1000, i * 1000 + 900, NO_CALLPATH, 0);
            t.push_p2p(1, r, r, P2pDir::Recv, 0, 0, COMM_WORLD, 1 << 20);
        }
        let mut options = WhatIfOptions::new(Network::presets(), SEED_SCALES.to_vec());
        options.per_rank = true;
        let report = tracelogic_analysis::replay::what_if(&t, &match_messages(&t), &options).unwrap();
        let text = human(&report, true);
        for net in ["1GbE", "10GbE", "QDR"] {
            assert!(text.contains(&format!("network {net}\n")), "{text}");
        }
        let rows = |sweep: &str| text.lines().filter(|l| l.trim_start().starts_with(sweep)).count();
        assert_eq!(rows("scaled "), 18);
        assert_eq!(rows("bandwidth "), 18);
        assert_eq!(rows("latency "), 18);
        assert_eq!(rows("base "), 9);
        assert_eq!(text.matches("  classification: ").count(), 3);
        assert!(text.contains("per rank on 1GbE (BW, L)"));
        assert!(text.contains("taken as the recording network"));
    }
}
