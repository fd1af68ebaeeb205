//! `tracelogic profile`: time per MPI function, computation per rank, message sizes and bytes
//! over time (`docs/profile.md`).

use crate::common::{load_trace, print_json, working, CliError, CliResult, SelectionArgs};
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_engine::profile::ProfileOptions;
use tracelogic_engine::Engine;
use tracelogic_model::{Selection, Trace};

/// Arguments of `tracelogic profile`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Equal time bins of `bytes_over_time`.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub time_bins: u32,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// Run `tracelogic profile`.
pub fn run(args: Args) -> CliResult {
    let trace = load_trace(&args.paths)?;
    let (engine, selection) = crate::profile::engine(trace, &args.selection)?;
    let options = ProfileOptions {
        time_bins: args.time_bins as usize,
    };
    let report = working("profiling the trace", || engine.profile(&selection, &options))?;
    if args.json {
        print_json(&report)?;
    } else {
        crate::common::emit(|out| out.write_all(crate::print::profile::text(&report).as_bytes()))?;
    }
    match report.nothing_found() {
        Some(why) => Err(CliError::NothingFound(why)),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// An engine over the whole `trace` and the selection of the flags, errors prefixed with the
/// trace's source (`profile`, `waits` and `critical-path` analyse the selection as the page
/// does: on the engine's restricted copy; the imbalance of `critical-path` on the whole trace).
pub(crate) fn engine(trace: Trace, selection: &SelectionArgs) -> Result<(Engine, Selection), CliError> {
    let source = trace.source.clone();
    selection.engine(trace).map_err(|e| match e {
        CliError::Input(m) => CliError::Input(format!("{source}: {m}")),
        other => other,
    })
}
