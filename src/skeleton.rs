//! `tracelogic skeleton`: an MPI performance skeleton in C generated from the compressed logical
//! trace of a run (Logicalization §2). Build it with `mpicc`, run it on as many ranks as the run had.

use crate::common::{load_narrowed, working, CliResult, SelectionArgs};
use crate::logical::write_out;
use crate::topology::threshold_arg;
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_engine::logical::CompressOptions;
use tracelogic_engine::topology::Threshold;
use tracelogic_model::{Rank, Selection};

/// Arguments of `tracelogic skeleton`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The C file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE.c", required = true)]
    pub output: PathBuf,
    /// Build the logical trace from these ranks (comma-separated) instead of the automatic
    /// choice, as `logical --from-ranks`.
    #[arg(long = "from-ranks", value_name = "R,R...", value_delimiter = ',')]
    pub from_ranks: Vec<Rank>,
    /// Filtering before topology identification: `auto` or a percentage.
    #[arg(long, default_value = "auto", value_parser = threshold_arg)]
    pub threshold: Threshold,
    /// Replay every message size as recorded (as `logical --exact-sizes`) instead of a
    /// histogram or statistics of sizes the data choose.
    #[arg(long)]
    pub exact_sizes: bool,
    /// Which part of the run the skeleton replays (e.g. `--from 2s --to 3s` for one phase).
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// Run `tracelogic skeleton`.
pub fn run(args: Args) -> CliResult {
    let engine = load_narrowed(&args.paths, &args.selection)?;
    let options = CompressOptions {
        exact_sizes: args.exact_sizes,
    };
    let skeleton = working("writing the skeleton", || {
        engine.skeleton_with(&Selection::all(), args.threshold, &args.from_ranks, &options)
    })?;
    write_out(Some(&args.output), &skeleton.source)?;
    eprintln!(
        "tracelogic: {}",
        crate::print::logical::skeleton_note(&skeleton, &args.output)
    );
    Ok(ExitCode::SUCCESS)
}
