//! `tracelogic-bench`: the native side of `bench/run`. It times, inside one process and without
//! process start-up or output formatting, the stages the benchmark compares against the peers:
//!
//! - `ingest PATH...`: reading the files into memory (the raw byte-read floor), parsing them into
//!   the trace model, and building the communication matrix; each repeated, minimum reported.
//! - `patterns --events N`: pattern detection on a Sweep3D-like event sequence, stage by stage
//!   (suffix array, LCP array, maximal repeats, the whole per-rank detection), with the sequence
//!   written out for the suffix-array peer of `bench/peers.py`.
//! - `topology FILE`: identifying an edge-list graph, stage by stage (spectrum / invariants and
//!   isomorphism separately), with the rank → node mapping checked against the reference graph
//!   rebuilt here from the matched family, independently of the identification's own check.
//! - `stages PATH...`: every analysis stage the CLI runs, on one trace read once, for the scaling
//!   fits of `bench/run` (time against ranks and against calls per rank).
//! - `digest PATH...`: a hash of the whole parsed trace (or of the reader's error), read with the
//!   default threads and with one, so that a reader change can be checked to leave its output
//!   unchanged by comparing the digests of the binaries before and after.
//!
//! Output is one JSON object on stdout; `bench/run` collects it.

use clap::{Parser, Subcommand};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

mod clock;
mod digest;
mod ingest;
mod patterns;
mod stages;
mod topology;
use digest::digest;
use ingest::ingest;
use patterns::patterns;
use stages::stages;
use topology::topology;

#[derive(Parser)]
#[command(name = "tracelogic-bench", about = "Stage timings for bench/run (JSON on stdout)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Time reading, parsing and the communication matrix of one trace.
    Ingest {
        /// Trace files or folders (together one trace), as for `tracelogic`.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Repetitions; the minimum of each stage is reported.
        #[arg(long, default_value = "3")]
        repeat: u32,
    },
    /// Time pattern detection on a Sweep3D-like event sequence and write the sequence (u32
    /// little endian) for the suffix-array peer.
    Patterns {
        /// Events in the sequence.
        #[arg(long, default_value = "1000000")]
        events: usize,
        /// Where to write the sequence for the peer.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Repetitions; the minimum of each stage is reported.
        #[arg(long, default_value = "1")]
        repeat: u32,
        /// Skip the maximal repeats of the raw sequence (its memory grows fast with the length).
        #[arg(long)]
        skip_raw_repeats: bool,
    },
    /// Time every analysis stage the CLI runs on one trace: matrix, topology, logical trace, its
    /// verification by expansion and its loop compression, message matching, patterns, phases,
    /// what-if replay and similarity against the trace renumbered.
    Stages {
        /// Trace files or folders (together one trace), as for `tracelogic`.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Repetitions of each stage; the minimum wall and CPU time are reported.
        #[arg(long, default_value = "1")]
        repeat: u32,
    },
    /// Hash the parsed trace (its serde JSON, every column and table) or the reader's error, read
    /// with the default threads and with one thread.
    Digest {
        /// Trace files or folders (together one trace), as for `tracelogic`.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Time the identification of an edge-list graph (`n m`, then `u v` per line).
    Topology {
        /// The edge-list file.
        graph: PathBuf,
        /// Repetitions; the minimum of each stage is reported.
        #[arg(long, default_value = "1")]
        repeat: u32,
    },
}

fn main() -> ExitCode {
    // glibc raises its mmap threshold after large blocks are freed, so later repetitions would
    // read into memory the process already has while the first (and a one-shot CLI run) pays
    // a page fault per page: the byte-read floor then swung between 2 and 6 GB/s from run to
    // run. Fixing the threshold at its default gives every repetition fresh pages, as a CLI run.
    // SAFETY: mallopt only changes the allocator's tuning; called before any other thread runs.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
    let cli = Cli::parse();
    let out = match &cli.command {
        Command::Ingest { paths, repeat } => ingest(paths, *repeat).and_then(|r| to_json(&r)),
        Command::Topology { graph, repeat } => topology(graph, *repeat).and_then(|r| to_json(&r)),
        Command::Stages { paths, repeat } => stages(paths, *repeat).and_then(|r| to_json(&r)),
        Command::Digest { paths } => digest(paths).and_then(|r| to_json(&r)),
        Command::Patterns {
            events,
            out,
            repeat,
            skip_raw_repeats,
        } => patterns(*events, out.as_ref(), *repeat, !skip_raw_repeats).and_then(|r| to_json(&r)),
    };
    match out {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tracelogic-bench: {e}");
            ExitCode::from(2)
        }
    }
}

fn to_json<T: Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string(value).map_err(|e| e.to_string())
}
