//! `tracelogic-mpi`: `mpirun -n P tracelogic-mpi <analysis> TRACE [--json]` (docs/mpi.md).
//!
//! Every process reads the per-rank files of its block of ranks
//! ([`tracelogic_formats::distributed`]). `matrix`, `summary`, `profile` and `waits` are
//! reduced: each process computes its ranks' part (matrix rows, counts, sums, wait states;
//! messages matched by routing the sends' envelopes to their receivers' process) and rank 0
//! combines the parts. `replay` is a parallel replay: each process replays its ranks, the
//! injection starts of sends and the arrivals of collectives crossing processes exchanged in
//! rounds. `topology` is identified from the gathered matrix rows; of the whole run the ranks
//! are then placed by their first contacts by parts (keys, first contacts and agreements
//! exchanged). `overview` merges the processes' overview builders.
//! Rank 0 prints; every process exits with rank 0's exit code.
//!
//! The CLI's argument structs, error type and printers are the CLI's own modules (the root
//! package's library, `tracelogic_cli`), so the flags, the messages and the output are those of
//! `tracelogic`.

use clap::{Parser, Subcommand};
use common::SelectionArgs;
use common::{set_stage, CliError, CliResult};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::cmp::Reverse;
use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_analysis::logical::{Agreement, ContactSource, ContentKey, Placement, Scoring, Step};
use tracelogic_analysis::partial::{
    combine_profile, combine_summary, profile_part, ranks_span, summary_part, MatchCounts, ProfilePart, SummaryPart,
};
use tracelogic_analysis::partial_waits::{combine_waits, instance_parts, InstancePart, Reply, WaitsAcc, WaitsPart};
use tracelogic_analysis::replay::parts::{combine_what_if, what_if_configurations, Note, ReplayPart, ReplayPartResult};
use tracelogic_analysis::replay::{dropped_calls, DroppedCalls};
use tracelogic_analysis::topology::TopologyReport;
use tracelogic_analysis::waits::{polling_ns, wait_states_matched, PollingNs};
use tracelogic_cli::{common, matrix, overview, print, profile, replay, summary, topology, waits};
use tracelogic_engine::matrix::{MatrixReport, Metric};
use tracelogic_engine::profile::{Profile, ProfileOptions};
use tracelogic_engine::replay::ReplayReport;
use tracelogic_engine::waits::WaitsReport;
use tracelogic_formats::distributed::{read_partial, read_partial_source, Exchange, PartialTrace};
use tracelogic_formats::input::read_paths;
use tracelogic_formats::stream::DiskFiles;
use tracelogic_model::{match_messages, Message, Rank, Selection, Trace};
mod comm;
mod replay_parts;
mod topology_parts;
use comm::{all_to_all, broadcast_bytes, gather_to_root, sum, World};
use replay_parts::replay_by_parts;
use topology_parts::topology;
use tracelogic_mpi::reduce::{both, match_incoming, outgoing_envelopes, received, route, to_senders};

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
    /// What is in a trace (each process counts its ranks; rank 0 adds the counts up).
    Summary(summary::Args),
    /// The rank-to-rank communication matrix (rows built by their ranks' processes).
    Matrix(matrix::Args),
    /// Time per MPI function, computation per rank, message sizes (each process sums its
    /// ranks; rank 0 adds the sums up).
    Profile(profile::Args),
    /// Identify the communication topology (from the matrix rows; of the whole run the ranks
    /// are placed by their first contacts by parts).
    Topology(topology::Args),
    /// Wait states (a parallel replay: each process measures its ranks' waits).
    Waits(waits::Args),
    /// What-if replay (a parallel replay: each process replays its ranks).
    Replay(replay::Args),
    /// What a trace larger than memory holds (each process folds its ranks into an overview
    /// builder; rank 0 merges the builders).
    Overview(overview::Args),
}

/// The reader's warnings on stderr, by rank 0 only (as the serial CLI prints them).
fn warn(world: &SimpleCommunicator, trace: &tracelogic_model::Trace) {
    if world.rank() == 0 {
        for w in &trace.warnings {
            eprintln!("tracelogic: warning: {w}");
        }
    }
}

/// This process's share of the matching: its ranks' sends routed to their receivers'
/// processes, its ranks' receives matched against the sends they were sent.
fn match_part(
    world: &SimpleCommunicator,
    trace: &Trace,
    owned: &Range<Rank>,
    blocks: &[Range<Rank>],
) -> (Vec<(Message, u64)>, MatchCounts) {
    set_stage("matching messages");
    let (out, sent) = outgoing_envelopes(trace, owned.clone(), blocks);
    let incoming = all_to_all(world, out);
    let (messages, received) = match_incoming(trace, owned.clone(), &incoming.parts())
        .unwrap_or_else(|e| panic!("the exchanged sends do not fit: {e}"));
    (messages, both(sent, received))
}

/// The trace of this process restricted to the selection of `args` as the serial CLI takes it
/// (errors prefixed with the trace's source), and the selection made absolute.
fn selected(partial: PartialTrace, args: &SelectionArgs) -> Result<(PartialTrace, Selection), CliError> {
    let PartialTrace { trace, owned, blocks } = partial;
    let source = trace.source.clone();
    let (engine, selection) = args.engine(trace).map_err(|e| match e {
        CliError::Input(m) => CliError::Input(format!("{source}: {m}")),
        other => other,
    })?;
    let absolute = engine.absolute(&selection)?;
    let trace = if selection == Selection::all() {
        engine.into_trace()
    } else {
        engine.into_trace().into_restricted(&absolute)
    };
    Ok((PartialTrace { trace, owned, blocks }, absolute))
}

/// `waits`: a parallel replay (docs/mpi.md). Each process measures its ranks' waits: late
/// senders where the receive is (the sends' entry times come with their envelopes), late
/// receivers where the send is (the receives' entry times sent back), collectives from every
/// process's summaries of each instance; rank 0 adds them up. When a part finds the serial
/// answer ambiguous (tied late senders of one call, collective records that disagree), the
/// selection's columns are gathered and rank 0 computes the serial report.
fn waits(world: &SimpleCommunicator, args: waits::Args) -> CliResult {
    let partial = read(world, &args.paths)?;
    warn(world, &partial.trace);
    let (partial, absolute) = selected(partial, &args.selection)?;
    set_stage("measuring wait states");
    let (ranks, source) = (partial.trace.num_ranks(), partial.trace.source.clone());
    let (trace, owned, blocks) = (&partial.trace, &partial.owned, &partial.blocks);
    let (messages, _) = match_part(world, trace, owned, blocks);
    let mut acc = WaitsAcc::new(trace, owned.clone());
    let replies = acc.receives(trace, &messages);
    drop(messages);
    let incoming = all_to_all(world, route(&replies, |r| r.sender, blocks));
    drop(replies);
    let replies: Vec<Reply> = received(&incoming.parts()).unwrap_or_else(|e| panic!("{e}"));
    drop(incoming);
    acc.replies(trace, &replies);
    drop(replies);
    let mine = bincode::serialize(&instance_parts(trace, owned.clone())).expect("instances serialise");
    let instances: Vec<Vec<InstancePart>> = World(world)
        .all_gather(&mine)
        .iter()
        .map(|b| bincode::deserialize(b).expect("instances deserialise"))
        .collect();
    acc.collectives(trace, &instances);
    drop(instances);
    let part = acc.finish(trace);
    // Polling calls are each rank's own: every process counts its ranks', the counts add up.
    let mine = bincode::serialize(&polling_ns(trace, owned.clone())).expect("polling serialises");
    let mut polled = PollingNs::default();
    for b in World(world).all_gather(&mine) {
        polled.add(&bincode::deserialize(&b).expect("polling deserialises"));
    }
    let ambiguous = World(world)
        .all_gather(&[part.ambiguous as u8])
        .iter()
        .any(|b| b == &[1]);
    let (report, mpi_ns) = if ambiguous {
        set_stage("gathering the ranks to rank 0 (ambiguous wait states)");
        let Some(whole) = gather_trace(world, partial) else {
            return Ok(ExitCode::SUCCESS);
        };
        let report = wait_states_matched(&whole, &match_messages(&whole));
        let mpi_ns: u64 = whole.ranks.iter().flat_map(|r| r.calls.duration.iter()).sum();
        (report, mpi_ns)
    } else {
        let bytes = bincode::serialize(&part).expect("a part serialises");
        let Some(parts) = gather_to_root(world, &bytes) else {
            return Ok(ExitCode::SUCCESS);
        };
        let parts: Vec<WaitsPart> = parts
            .iter()
            .map(|b| bincode::deserialize(b).expect("a part deserialises"))
            .collect();
        combine_waits(&partial.trace, &parts)
    };
    let report = WaitsReport {
        report,
        ranks,
        mpi_s: mpi_ns as f64 * 1e-9,
        polling: Some(polled.into()),
        source,
        selection: absolute,
    };
    if args.json {
        common::print_json(&report)?;
    } else {
        common::emit(|out| out.write_all(print::waits::text(&report, args.top).as_bytes()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `summary`: each process counts its ranks (and matches their receives); rank 0 adds the
/// counts up and prints the serial summary.
fn summary(world: &SimpleCommunicator, args: summary::Args) -> CliResult {
    let partial = read(world, &args.paths)?;
    warn(world, &partial.trace);
    let (_, counts) = match_part(world, &partial.trace, &partial.owned, &partial.blocks);
    set_stage("summarising the trace");
    let part = summary_part(&partial.trace, partial.owned.clone(), counts);
    let bytes = bincode::serialize(&part).expect("a part serialises");
    let Some(parts) = gather_to_root(world, &bytes) else {
        return Ok(ExitCode::SUCCESS);
    };
    let parts: Vec<SummaryPart> = parts
        .iter()
        .map(|b| bincode::deserialize(b).expect("a part deserialises"))
        .collect();
    let summary = combine_summary(&partial.trace, &parts);
    if args.json {
        common::print_json(&summary)?;
    } else {
        common::emit(|out| out.write_all(print::summary::text(&summary).as_bytes()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `profile`: each process sums its ranks' times and sizes (of the selection); rank 0 adds the
/// sums up and prints the serial profile.
fn profile(world: &SimpleCommunicator, args: profile::Args) -> CliResult {
    let partial = read(world, &args.paths)?;
    warn(world, &partial.trace);
    let (PartialTrace { trace, owned, .. }, absolute) = selected(partial, &args.selection)?;
    set_stage("profiling the trace");
    let options = ProfileOptions {
        time_bins: args.time_bins as usize,
    };
    // The run's span: the smallest start and largest end over every process's ranks.
    let mine = bincode::serialize(&ranks_span(&trace, owned.clone())).expect("a span serialises");
    let span = World(world)
        .all_gather(&mine)
        .iter()
        .filter_map(|b| bincode::deserialize::<Option<(u64, u64)>>(b).expect("a span deserialises"))
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
        .unwrap_or((0, 0));
    let part = profile_part(&trace, owned, span, &options);
    let bytes = bincode::serialize(&part).expect("a part serialises");
    drop(part);
    let Some(parts) = gather_to_root(world, &bytes) else {
        return Ok(ExitCode::SUCCESS);
    };
    let parts: Vec<ProfilePart> = parts
        .iter()
        .map(|b| bincode::deserialize(b).expect("a part deserialises"))
        .collect();
    let report = Profile {
        report: combine_profile(&trace, &parts, span, &options),
        source: trace.source.clone(),
        selection: absolute,
    };
    if args.json {
        common::print_json(&report)?;
    } else {
        common::emit(|out| out.write_all(print::profile::text(&report).as_bytes()))?;
    }
    match report.nothing_found() {
        Some(why) => Err(CliError::NothingFound(why)),
        None => Ok(ExitCode::SUCCESS),
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
    if world.size() == 1 {
        // Alone, the process holds every rank already.
        return Some(partial.trace);
    }
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

/// `overview`: each process folds its ranks into an overview builder, rank 0 gathers the
/// builders, merges them in rank order and prints the serial report. An OTF2 trace that
/// announces its span is streamed: each process reads its block one rank at a time and holds
/// one rank's events, as the serial `overview` does ([`overview_streamed`]). Any other input
/// is read by parts, the bins following the serial builder's (every rank's span is known to
/// every process after the read).
fn overview_by_parts(world: &SimpleCommunicator, args: overview::Args) -> CliResult {
    {
        let mut source = overview::source(&args.paths)?;
        let announced = tracelogic_formats::stream::streams(source.as_ref())
            && tracelogic_formats::stream::announced(source.as_mut()).is_ok_and(|a| a.span.is_some());
        if announced {
            return overview_streamed(world, &args, source.as_mut());
        }
    }
    let partial = read(world, &args.paths)?;
    // The serial CLI's source: its sizes, whether it streams, and OTF2's announced span.
    let mut source = overview::source(&args.paths)?;
    let head = tracelogic_engine::overview::parts_head(source.as_mut(), &partial.trace)
        .map_err(|e| CliError::Input(format!("cannot read trace: {e}")))?;
    set_stage("computing the overview");
    let PartialTrace { mut trace, owned, .. } = partial;
    let part = tracelogic_engine::overview::OverviewBuilder::of_ranks(&trace, owned, args.bins as usize, head.span);
    // Only the definitions are needed from here on.
    trace.ranks.clear();
    let bytes = bincode::serialize(&part).expect("a part serialises");
    drop(part);
    let Some(parts) = gather_to_root(world, &bytes) else {
        return Ok(ExitCode::SUCCESS);
    };
    drop(bytes);
    let parts = parts
        .into_iter()
        .map(|b| bincode::deserialize(&b).expect("a part deserialises"));
    let report = tracelogic_engine::overview::overview_of_parts(parts, &trace, head)
        .unwrap_or_else(|e| panic!("the parts do not make one overview: {e}"));
    overview::finish(&args, &report)
}

/// The streamed `overview` by parts: blocks of about equal rank counts, each process's
/// [`tracelogic_engine::overview::OverviewPart`] gathered to rank 0 and merged there. Every
/// process learns whether any failed (the first failure in process order is everyone's error).
fn overview_streamed(
    world: &SimpleCommunicator,
    args: &overview::Args,
    source: &mut dyn tracelogic_formats::stream::FileSource,
) -> CliResult {
    let (me, size) = (world.rank() as usize, world.size() as usize);
    set_stage("streaming this process's ranks for the overview");
    let owned = move |ranks: u32| tracelogic_mpi::partition::by_count(ranks as usize, size)[me].clone();
    let part = tracelogic_engine::overview::overview_part(
        source,
        args.bins as usize,
        &owned,
        &mut tracelogic_formats::NoProgress,
    );
    let failure = part.as_ref().err().map(|e| e.to_string());
    let failures = World(world).all_gather(&bincode::serialize(&failure).expect("a failure serialises"));
    if let Some(e) = failures
        .iter()
        .find_map(|b| bincode::deserialize::<Option<String>>(b).expect("a failure deserialises"))
    {
        return Err(CliError::Input(format!("cannot read trace: {e}")));
    }
    let bytes = bincode::serialize(&part.expect("no process failed")).expect("a part serialises");
    let Some(parts) = gather_to_root(world, &bytes) else {
        return Ok(ExitCode::SUCCESS);
    };
    drop(bytes);
    let parts = parts
        .into_iter()
        .map(|b| bincode::deserialize(&b).expect("a part deserialises"));
    let report = tracelogic_engine::overview::overview_of_stream_parts(parts)
        .unwrap_or_else(|e| panic!("the parts do not make one overview: {e}"));
    overview::finish(args, &report)
}

/// `matrix`: each process builds its ranks' rows; rank 0 gathers them and prints the report.
fn matrix(world: &SimpleCommunicator, args: matrix::Args) -> CliResult {
    if args.metric == matrix::MetricArg::Waiting {
        return Err(CliError::Input(
            "--metric waiting is not computed by tracelogic-mpi yet: run `tracelogic-mpi waits` (its by_pair \
             list) or the serial `tracelogic matrix --metric waiting`"
                .into(),
        ));
    }
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
        waiting: None,
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
        Command::Summary(a) => summary(world, a),
        Command::Profile(a) => profile(world, a),
        Command::Topology(a) => topology(world, a),
        // A time window pairs the messages as the whole trace pairs them, then keeps those with
        // both ends inside (the serial analysis); the parts do not reproduce that yet, so rank 0
        // runs the serial analysis on the gathered trace.
        Command::Waits(a) if a.selection.from.is_some() || a.selection.to.is_some() => {
            on_root(world, &a.paths.clone(), || waits::run(a))
        }
        Command::Waits(a) => waits(world, a),
        Command::Replay(a) => replay_by_parts(world, a),
        Command::Overview(a) => overview_by_parts(world, a),
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
