//! `tracelogic`: the command-line shell over the tracelogic core. It parses arguments, loads
//! traces, calls one core function per subcommand and prints tables or JSON.
//!
//! Exit codes: 0 ok, 1 the analysis found nothing, 2 bad input or usage, 3 internal error (a
//! panic caught at this boundary and reported in one line; a bug).

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use tracelogic_cli::{
    common, compare, convert, critical_path, generate, logical, matrix, overview, pattern_match, patterns, phases,
    profile, query, replay, skeleton, summary, timeline, topology, waits,
};

/// Turn MPI communication traces into understanding.
#[derive(Parser)]
#[command(name = "tracelogic", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Threads for reading a trace's per-rank files (DUMPI, OTF2); default: TRACELOGIC_THREADS,
    /// else every core. The trace read is the same whatever the number.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
}

// Parsed once per run, so the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// What is in a trace: ranks, calls by kind, bytes, duration, communicators, unmatched messages.
    Summary(summary::Args),
    /// The rank-to-rank communication matrix and its filtered binary form.
    Matrix(matrix::Args),
    /// Select calls and messages by ranks, time window, size and kind.
    Query(query::Args),
    /// Overview of a trace larger than memory from one streaming pass: counts, matrix, topology, profile, activity over time, phase sketch.
    Overview(overview::Args),
    /// Write synthetic traces of known topologies.
    Generate(generate::Args),
    /// Identify the communication topology and the rank-to-coordinate mapping.
    Topology(topology::Args),
    /// Predict run time under other networks and classify what limits performance.
    Replay(replay::Args),
    /// Repeating communication patterns per rank and across ranks.
    Patterns(patterns::Args),
    /// Search a given communication pattern, allowing edits.
    Match(pattern_match::Args),
    /// Execution phases from the sequence of communication patterns.
    Phases(phases::Args),
    /// How similar the communication patterns of two or more runs are (θ, ε, verdict).
    Compare(compare::Args),
    /// The logical trace: one rank's calls with peers as topology directions, accuracy, verification, loop compression.
    Logical(logical::Args),
    /// Generate an MPI performance skeleton in C from the compressed logical trace.
    Skeleton(skeleton::Args),
    /// Write a trace in another format, optionally restricted and with its ranks renumbered.
    Convert(convert::Args),
    /// Time per MPI function, computation per rank, message sizes and bytes over time.
    Profile(profile::Args),
    /// Wait states (Scalasca): late sender and receiver, N×N, barrier, late broadcast, early reduce.
    Waits(waits::Args),
    /// The critical path: its length, share per rank and function, gains, and the load imbalance.
    CriticalPath(critical_path::Args),
    /// The timeline of a window: per rank and pixel column the dominant MPI function, wide calls, messages, collectives.
    Timeline(timeline::Args),
}

fn main() -> ExitCode {
    if std::env::var_os("TRACELOGIC_BACKTRACE").is_none() {
        std::panic::set_hook(Box::new(common::record_panic));
    }
    common::set_stage("parsing the command line");
    let result = common::guarded(|| {
        let cli = Cli::parse();
        if let Some(n) = cli.threads {
            tracelogic_formats::parallel::set_reader_threads(n as usize);
        }
        let name = match &cli.command {
            Command::Summary(_) => "summary",
            Command::Matrix(_) => "matrix",
            Command::Query(_) => "query",
            Command::Overview(_) => "overview",
            Command::Generate(_) => "generate",
            Command::Topology(_) => "topology",
            Command::Replay(_) => "replay",
            Command::Patterns(_) => "patterns",
            Command::Match(_) => "match",
            Command::Phases(_) => "phases",
            Command::Compare(_) => "compare",
            Command::Logical(_) => "logical",
            Command::Skeleton(_) => "skeleton",
            Command::Convert(_) => "convert",
            Command::Profile(_) => "profile",
            Command::Waits(_) => "waits",
            Command::CriticalPath(_) => "critical-path",
            Command::Timeline(_) => "timeline",
        };
        common::set_stage(format!("running `{name}`"));
        // Test-only: proves end to end that a panic inside a subcommand is caught here and
        // reported as an internal error (exit 3). Never set by users; documented in docs/cli.md.
        if std::env::var_os("TRACELOGIC_TEST_PANIC").is_some_and(|v| v == name) {
            panic!("deliberate panic requested by TRACELOGIC_TEST_PANIC={name}");
        }
        match cli.command {
            Command::Summary(a) => summary::run(a),
            Command::Matrix(a) => matrix::run(a),
            Command::Query(a) => query::run(a),
            Command::Overview(a) => overview::run(a),
            Command::Generate(a) => generate::run(a),
            Command::Topology(a) => topology::run(a),
            Command::Replay(a) => replay::run(a),
            Command::Patterns(a) => patterns::run(a),
            Command::Match(a) => pattern_match::run(a),
            Command::Phases(a) => phases::run(a),
            Command::Compare(a) => compare::run(a),
            Command::Logical(a) => logical::run(a),
            Command::Skeleton(a) => skeleton::run(a),
            Command::Convert(a) => convert::run(a),
            Command::Profile(a) => profile::run(a),
            Command::Waits(a) => waits::run(a),
            Command::CriticalPath(a) => critical_path::run(a),
            Command::Timeline(a) => timeline::run(a),
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tracelogic: {e}");
            e.exit_code()
        }
    }
}
