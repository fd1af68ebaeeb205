//! `tracelogic replay`: predict the run time under other networks and classify what bounds it.

use crate::common::{load_trace, print_json, working, CliError, CliResult, Selected, SelectionArgs};
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_engine::replay::{parse_scales, MessageTable, Network, ReplayReport, ReplayRequest};

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
    let report = analyse(&args)?;
    print(&args, &report)
}

/// Print `report` as `tracelogic replay` does with `args` (also `tracelogic-mpi replay`).
pub fn print(args: &Args, report: &ReplayReport) -> CliResult {
    if args.json {
        print_json(&Selected {
            report: &report.report,
            selection: &report.selection,
        })?;
    } else {
        let text = crate::print::replay::text(&report.report, args.per_rank);
        crate::common::emit(|out| out.write_all(text.as_bytes()))?;
    }
    if let Some(why) = report.nothing_found() {
        return Err(CliError::NothingFound(why));
    }
    Ok(ExitCode::SUCCESS)
}

/// The replay the arguments ask for, checked before the trace is read.
pub fn request(args: &Args) -> Result<ReplayRequest, CliError> {
    let table = match &args.table {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::Input(format!("cannot read {}: {e}", path.display())))?;
            Some(MessageTable::parse(&text).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?)
        }
    };
    let request = ReplayRequest {
        networks: args.networks.clone(),
        scales: args.scales.0.clone(),
        table,
        recorded_on: args.recorded_on.clone(),
        per_rank: args.per_rank,
    };
    request.options()?;
    Ok(request)
}

/// Read the trace and replay the selection (what it dropped keeps its recorded time).
fn analyse(args: &Args) -> Result<ReplayReport, CliError> {
    let request = request(args)?;
    let trace = load_trace(&args.paths)?;
    let source = trace.source.clone();
    let prefixed = |e: CliError| match e {
        CliError::Input(m) => CliError::Input(format!("{source}: {m}")),
        other => other,
    };
    let (engine, selection) = args.selection.engine(trace).map_err(prefixed)?;
    if selection != tracelogic_model::Selection::all() && engine.selected_calls(&selection)? == 0 {
        let why = engine
            .past_the_end(&selection)
            .map(|w| format!(" ({w})"))
            .unwrap_or_default();
        eprintln!("tracelogic: note: the selection keeps no MPI call of {source}{why}");
    }
    Ok(working("replaying the trace", || engine.replay(&selection, &request))?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_engine::replay::SEED_SCALES;
    use tracelogic_model::{P2pDir, Selection, Trace, COMM_WORLD, NO_CALLPATH};

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

        assert_eq!(p2p.report.calls, 2);
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

        let text = crate::print::replay::text(&p2p.report, true);
        assert!(text.contains("communication outside the selection"), "{text}");
        assert!(text.contains("not replayed s"), "{text}");
        assert!(text.contains("classification: n/a"), "{text}");
        assert!(text.contains("0.030000"), "{text}");
        let json = serde_json::to_value(&p2p.report).unwrap();
        let not_replayed = json["configurations"][0]["not_replayed_s"].as_f64().unwrap();
        assert!((not_replayed - 0.03).abs() < 1e-9, "{not_replayed}");
        assert_eq!(json["classification"][0]["bound"], "undetermined");
        assert!(!crate::print::replay::text(&whole.report, true).contains("not replayed"));
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
        let request = ReplayRequest {
            per_rank: false,
            ..ReplayRequest::default()
        };
        let engine = tracelogic_engine::Engine::new(t, tracelogic_engine::FieldWords::Flags);
        let report = engine.replay(&Selection::all(), &request).unwrap().report;
        crate::print::replay::text(&report, false)
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
        // 60 % of every period inside MPI for a 1 KiB message, computing the rest (3.6 s of
        // 9.6 s), as Meep's ranks time-shared on 2 cores did (31 %): the prediction is 62.5 %
        // short, so the note is due whatever the computing share.
        let shared = ping_pong_waiting(600_000_000, 1_000_000_000);
        assert!(shared.contains("error -62."), "{shared}");
        assert!(shared.contains("spent the rest inside MPI"), "{shared}");
        assert!(shared.contains("37.5% of the measured time"), "{shared}");
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
        let engine = tracelogic_engine::Engine::new(t, tracelogic_engine::FieldWords::Flags);
        let report = engine
            .replay(&Selection::all(), &ReplayRequest::default())
            .unwrap()
            .report;
        let text = crate::print::replay::text(&report, true);
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
