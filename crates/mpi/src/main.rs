//! `tracelogic-mpi`: `mpirun -n P tracelogic-mpi <analysis> TRACE [--json]` (docs/mpi.md).
//!
//! Every process reads the per-rank files of its block of ranks
//! ([`tracelogic_formats::distributed`]). `matrix` is reduced: each process builds the rows of its
//! ranks and rank 0 gathers them. `summary`, `profile`, `topology`, `waits` and `replay` gather
//! the ranks' event columns to rank 0, which runs the serial CLI's own subcommand on the trace.
//! Rank 0 prints; every process exits with rank 0's exit code.
//!
//! The CLI's argument structs, error type and printers are the CLI's own modules (the root
//! package's library, `tracelogic_cli`), so the flags, the messages and the output are those of
//! `tracelogic`.

use clap::{Parser, Subcommand};
use common::{set_stage, CliError, CliResult};
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_cli::{common, matrix, print, profile, replay, summary, topology, waits};
use tracelogic_engine::matrix::{MatrixReport, Metric};
use tracelogic_formats::distributed::{read_partial, read_partial_source, Exchange, PartialTrace};
use tracelogic_formats::input::read_paths;
use tracelogic_formats::stream::DiskFiles;

/// tracelogic's analyses as an MPI program: each process reads its share of the trace's
/// per-rank files; rank 0 prints what `tracelogic` prints.
#[derive(Parser)]
#[command(name = "tracelogic-mpi", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Threads per process for reading its files; default: TRACELOGIC_THREADS, else 1.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
}

#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// What is in a trace (gathered to rank 0).
    Summary(summary::Args),
    /// The rank-to-rank communication matrix (rows built by their ranks' processes).
    Matrix(matrix::Args),
    /// Time per MPI function, computation per rank, message sizes (gathered to rank 0).
    Profile(profile::Args),
    /// Identify the communication topology (gathered to rank 0).
    Topology(topology::Args),
    /// Wait states (gathered to rank 0).
    Waits(waits::Args),
    /// What-if replay (gathered to rank 0).
    Replay(replay::Args),
}

/// The processes of `MPI_COMM_WORLD` as the distributed reader's [`Exchange`].
struct World<'a>(&'a SimpleCommunicator);

impl Exchange for World<'_> {
    fn process(&self) -> (usize, usize) {
        (self.0.rank() as usize, self.0.size() as usize)
    }

    fn all_gather(&mut self, mine: &[u8]) -> Vec<Vec<u8>> {
        let n = self.0.size() as usize;
        let mut counts = vec![0 as Count; n];
        self.0.all_gather_into(&count(mine.len()), &mut counts[..]);
        let displs = displacements(&counts);
        let mut all = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut into = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            self.0.all_gather_varcount_into(mine, &mut into);
        }
        split(&all, &counts, &displs)
    }
}

/// A message length as MPI counts it (messages above 2 GiB are not supported).
fn count(len: usize) -> Count {
    Count::try_from(len).expect("a part of at most 2 GiB")
}

fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0 as Count, |at, &c| {
            let here = *at;
            *at += c;
            Some(here)
        })
        .collect()
}

fn split(all: &[u8], counts: &[Count], displs: &[Count]) -> Vec<Vec<u8>> {
    counts
        .iter()
        .zip(displs)
        .map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec())
        .collect()
}

/// Every process's `mine` on rank 0 (`Some` there, `None` elsewhere).
fn gather_to_root(world: &SimpleCommunicator, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
    let root = world.process_at_rank(0);
    if world.rank() == 0 {
        let n = world.size() as usize;
        let mut counts = vec![0 as Count; n];
        root.gather_into_root(&count(mine.len()), &mut counts[..]);
        let displs = displacements(&counts);
        let mut all = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut into = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(mine, &mut into);
        }
        Some(split(&all, &counts, &displs))
    } else {
        root.gather_into(&count(mine.len()));
        root.gather_varcount_into(mine);
        None
    }
}

/// Read the trace of `paths` as this process: its block's columns, everything else whole. The
/// errors are the CLI's, the same on every process.
fn read(world: &SimpleCommunicator, paths: &[PathBuf]) -> Result<PartialTrace, CliError> {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    set_stage(format!("reading {}", shown.join(" ")));
    // Files on disk are read on demand: the definitions, and the event files of this process's
    // ranks. Archives and compressed files (and paths the listing refuses, for the serial
    // reader's message) are read whole.
    let blocks = &tracelogic_mpi::partition::by_bytes;
    let read = match DiskFiles::open(paths) {
        Ok(Some(mut disk)) => read_partial_source(&mut disk, blocks, &mut World(world)),
        _ => {
            let files = read_paths(paths).map_err(|e| CliError::Input(format!("cannot read {e}")))?;
            read_partial(files, blocks, &mut World(world))
        }
    };
    read.map_err(|e| CliError::Input(format!("cannot read trace: {e}")))
}

/// The serial reader's trace on rank 0 (the columns of every block gathered), `None` elsewhere.
fn gather_trace(world: &SimpleCommunicator, partial: PartialTrace) -> Option<tracelogic_model::Trace> {
    set_stage("gathering the ranks to rank 0");
    let mine = tracelogic_mpi::merge::encode_ranks(&partial.trace, partial.owned.clone());
    let parts = gather_to_root(world, &mine)?;
    let mut trace = partial.trace;
    if let Err(e) = tracelogic_mpi::merge::fill_ranks(&mut trace, &parts) {
        panic!("the gathered ranks do not fit the trace: {e}");
    }
    Some(trace)
}

/// Run a subcommand of the CLI on rank 0 with the gathered trace; the other processes only read.
fn on_root(world: &SimpleCommunicator, paths: &[PathBuf], run: impl FnOnce() -> CliResult) -> CliResult {
    let partial = read(world, paths)?;
    match gather_trace(world, partial) {
        Some(trace) => {
            common::preload(trace);
            run()
        }
        None => Ok(ExitCode::SUCCESS),
    }
}

/// `matrix`: each process builds its ranks' rows; rank 0 gathers them and prints the report.
fn matrix(world: &SimpleCommunicator, args: matrix::Args) -> CliResult {
    let partial = read(world, &args.paths)?;
    let owned = partial.owned.clone();
    // Every process checks the selection (the same answer everywhere: the definitions are whole).
    let (engine, selection) = args.selection.engine(partial.trace)?;
    let absolute = engine.absolute(&selection)?;
    set_stage("building the communication matrix");
    let mine = tracelogic_analysis::matrix::CommMatrix::from_trace(engine.trace(), &absolute);
    let rows = tracelogic_mpi::merge::encode_rows(&mine, owned);
    drop(mine);
    let Some(parts) = gather_to_root(world, &rows) else {
        return Ok(ExitCode::SUCCESS);
    };
    let trace = engine.trace();
    let matrix =
        tracelogic_mpi::merge::matrix_of_rows(trace.num_ranks(), &parts).expect("the processes' rows make one matrix");
    let metric = Metric::from(args.metric);
    let filtered = matrix.filter(metric, args.threshold);
    let report = MatrixReport {
        format: trace.format.clone(),
        source: trace.source.clone(),
        metric,
        threshold: filtered.threshold_pct,
        matrix,
        filtered,
        selection: absolute,
    };
    set_stage("writing the communication matrix");
    let csv = args.output.csv.then_some(if args.sparse {
        print::matrix::Csv::Sparse
    } else if args.binary {
        print::matrix::Csv::Binary
    } else {
        print::matrix::Csv::Metric
    });
    print::matrix::print(&report, args.output.json, csv)?;
    if let Some(why) = report.nothing_found() {
        return Err(CliError::NothingFound(why.into()));
    }
    Ok(ExitCode::SUCCESS)
}

fn run(world: &SimpleCommunicator, command: Command) -> CliResult {
    match command {
        Command::Matrix(a) => matrix(world, a),
        Command::Summary(a) => on_root(world, &a.paths.clone(), || summary::run(a)),
        Command::Profile(a) => on_root(world, &a.paths.clone(), || profile::run(a)),
        Command::Topology(a) => on_root(world, &a.paths.clone(), || topology::run(a)),
        Command::Waits(a) => on_root(world, &a.paths.clone(), || waits::run(a)),
        Command::Replay(a) => on_root(world, &a.paths.clone(), || replay::run(a)),
    }
}

/// Exit code as a number (ExitCode has no accessor).
fn code_of(result: &CliResult) -> u8 {
    match result {
        Ok(code) if *code == ExitCode::SUCCESS => 0,
        Ok(_) => 1,
        Err(CliError::NothingFound(_)) => 1,
        Err(CliError::Input(_)) => 2,
        Err(CliError::Internal(_)) => 3,
    }
}

fn main() -> ExitCode {
    let Some(universe) = mpi::initialize() else {
        eprintln!("tracelogic: MPI is already initialised");
        return ExitCode::from(3);
    };
    let world = universe.world();
    let me = world.rank();
    if std::env::var_os("TRACELOGIC_BACKTRACE").is_none() {
        std::panic::set_hook(Box::new(common::record_panic));
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Every process parses the same arguments; rank 0 alone says what is wrong.
            if me == 0 {
                let _ = e.print();
            }
            return ExitCode::from(e.exit_code().clamp(0, 255) as u8);
        }
    };
    // One reading thread per process unless asked otherwise: the processes are the parallelism.
    let threads = cli.threads.map(|n| n as usize).or_else(|| {
        std::env::var("TRACELOGIC_THREADS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .filter(|&n: &usize| n > 0)
    });
    tracelogic_formats::parallel::set_reader_threads(threads.unwrap_or(1));
    let result = common::guarded(|| run(&world, cli.command));
    if let Err(e @ CliError::Internal(_)) = &result {
        // The other processes may wait in a collective for this one: end them all.
        eprintln!("tracelogic: process {me}: {e}");
        world.abort(3);
    }
    // Every process exits with rank 0's code (errors of the read are the same everywhere).
    let mut code = code_of(&result);
    world.process_at_rank(0).broadcast_into(&mut code);
    if me == 0 {
        if let Err(e) = &result {
            eprintln!("tracelogic: {e}");
        }
    }
    drop(universe);
    ExitCode::from(code)
}
