//! `tracelogic skeleton`: an MPI performance skeleton in C generated from the compressed logical
//! trace of a run (Logicalization §2). Build it with `mpicc`, run it on as many ranks as the run had.

use crate::common::{load_trace, select, set_stage, CliError, CliResult, SelectionArgs};
use crate::logical::{build, write_out};
use crate::topology::threshold_arg;
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_analysis::compress::compress;
use tracelogic_analysis::logical::PlacedBy;
use tracelogic_analysis::skeleton::skeleton_c;
use tracelogic_analysis::topology::Threshold;
use tracelogic_model::Rank;

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
    /// Which part of the run the skeleton replays (e.g. `--from 2s --to 3s` for one phase).
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// Run `tracelogic skeleton`.
pub fn run(args: Args) -> CliResult {
    let (trace, _) = select(load_trace(&args.paths)?, &args.selection)?;
    let logical = build(&trace, args.threshold, &args.from_ranks)?;
    set_stage("compressing loops");
    let program = compress(&logical.records);
    set_stage("writing the skeleton");
    let source = skeleton_c(&logical, &program).map_err(CliError::Input)?;
    write_out(Some(&args.output), &source)?;
    let placed = match logical.directions_from.as_ref().map(|d| d.placed_by) {
        Some(PlacedBy::FirstContacts) => {
            ", ranks placed by their first contacts as `tracelogic logical` shows, not by `topology`'s mapping"
        }
        _ => "",
    };
    eprintln!(
        "tracelogic: wrote {} ({} ranks, {}{placed}, {} records compressed to {}); build with `mpicc -O2 -o skeleton {}` and run with `mpirun -np {} ./skeleton [compute-scale]`",
        args.output.display(),
        logical.ranks,
        logical.topology.label,
        program.raw_length,
        program.compressed_length,
        args.output.display(),
        logical.ranks
    );
    Ok(ExitCode::SUCCESS)
}
