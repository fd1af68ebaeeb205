//! `tracelogic query`: select calls and messages by ranks, time window, size and kind.

use crate::common::{emit, load_trace, print_json, set_stage, CliError, CliResult, SelectionArgs};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tracelogic query`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// List at most this many calls and this many messages (the counts cover all).
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

/// Run `tracelogic query`.
pub fn run(args: Args) -> CliResult {
    let (engine, selection) = args.selection.engine(load_trace(&args.paths)?)?;
    set_stage("selecting calls");
    let report = engine.query(&selection, args.limit)?;
    if args.json {
        print_json(&report)?;
    } else {
        emit(|out| out.write_all(crate::print::query::text(&report).as_bytes()))?;
    }
    if report.calls_selected == 0 {
        return Err(CliError::NothingFound("the selection matches no call".into()));
    }
    Ok(ExitCode::SUCCESS)
}
