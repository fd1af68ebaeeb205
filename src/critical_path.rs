//! `tracelogic critical-path`: the longest happens-before path of the run, its shares per rank
//! and function, the gain of each rank's computation on it, and the load imbalance
//! (`docs/waits.md`).

use crate::common::{load_trace, print_json, working, CliResult, SelectionArgs};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tracelogic critical-path`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Also replay the run (what-if, first preset network) and relate its classification.
    #[arg(long)]
    pub what_if: bool,
    /// Rows of the per-rank and segment tables of the text output (JSON has all).
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// Run `tracelogic critical-path`.
pub fn run(args: Args) -> CliResult {
    let trace = load_trace(&args.paths)?;
    let (engine, selection) = crate::profile::engine(trace, &args.selection)?;
    let report = working("building the happens-before graph and its longest path", || {
        engine.critical_path(&selection, args.what_if)
    })?;
    if args.json {
        print_json(&report)?;
    } else {
        crate::common::emit(|out| out.write_all(crate::print::critical_path::text(&report, args.top).as_bytes()))?;
    }
    Ok(ExitCode::SUCCESS)
}
