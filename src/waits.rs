//! `tracelogic waits`: wait states with Scalasca's definitions (`docs/waits.md`).

use crate::common::{load_trace, print_json, working, CliResult, SelectionArgs};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tracelogic waits`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Rows of the per-rank and per-pair tables of the text output (largest first; JSON has all).
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// Run `tracelogic waits`.
pub fn run(args: Args) -> CliResult {
    let trace = load_trace(&args.paths)?;
    let (engine, selection) = crate::profile::engine(trace, &args.selection)?;
    let report = working("measuring wait states", || engine.waits(&selection))?;
    if args.json {
        print_json(&report)?;
    } else {
        crate::common::emit(|out| out.write_all(crate::print::waits::text(&report, args.top).as_bytes()))?;
    }
    Ok(ExitCode::SUCCESS)
}
