//! `tracelogic overview`: what a trace larger than memory holds, from one streaming pass.

use crate::common::{print_json, set_stage, CliError, CliResult};
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_engine::overview::{OverviewReport, DEFAULT_BINS, MAX_BINS};
use tracelogic_formats::input::read_paths;
use tracelogic_formats::stream::{DiskFiles, FileSource, MemoryFiles};
use tracelogic_formats::NoProgress;

/// Arguments of `tracelogic overview`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    /// Time bins of the activity histogram.
    #[arg(long, default_value_t = DEFAULT_BINS as u32, value_parser = clap::value_parser!(u32).range(2..=MAX_BINS as i64))]
    pub bins: u32,
}

/// The trace's files as a source read on demand: from disk when they are plain files (an OTF2
/// archive's event files are then read one rank at a time), else read whole (archives).
pub fn source(paths: &[PathBuf]) -> Result<Box<dyn FileSource>, CliError> {
    let disk = DiskFiles::open(paths).map_err(|e| CliError::Input(format!("cannot read {e}")))?;
    Ok(match disk {
        Some(d) => Box::new(d),
        None => Box::new(MemoryFiles::new(
            read_paths(paths).map_err(|e| CliError::Input(format!("cannot read {e}")))?,
        )),
    })
}

/// Run `tracelogic overview`.
pub fn run(args: Args) -> CliResult {
    let mut source = source(&args.paths)?;
    set_stage("computing the overview");
    let report = tracelogic_engine::overview::overview(source.as_mut(), args.bins as usize, &mut NoProgress)
        .map_err(|e| CliError::Input(format!("cannot read trace: {e}")))?;
    finish(&args, &report)
}

/// Print `report` as `tracelogic overview` does: its warnings on stderr, then the text or JSON
/// (`tracelogic-mpi overview` prints its merged report with it).
pub fn finish(args: &Args, report: &OverviewReport) -> CliResult {
    for w in &report.overview.warnings {
        eprintln!("tracelogic: warning: {w}");
    }
    let paths: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
    let paths = paths.join(" ");
    if args.json {
        print_json(report)?;
    } else {
        crate::common::emit(|out| out.write_all(crate::print::overview::text(report, &paths).as_bytes()))?;
    }
    Ok(ExitCode::SUCCESS)
}
