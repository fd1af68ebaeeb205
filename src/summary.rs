//! `tracelogic summary`: what is in a trace.

use crate::common::{load_trace, print_json, set_stage, CliResult};
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_engine::{Engine, FieldWords};

/// Arguments of `tracelogic summary`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

/// Run `tracelogic summary`.
pub fn run(args: Args) -> CliResult {
    let engine = Engine::new(load_trace(&args.paths)?, FieldWords::Flags);
    set_stage("summarising the trace");
    let summary = engine.summary();
    if args.json {
        print_json(&summary)?;
    } else {
        crate::common::emit(|out| out.write_all(crate::print::summary::text(&summary).as_bytes()))?;
    }
    Ok(ExitCode::SUCCESS)
}
