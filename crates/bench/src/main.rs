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
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use tracelogic_analysis::compress::compress;
use tracelogic_analysis::logical::{logicalize_identified, verify};
use tracelogic_analysis::matrix::{CommMatrix, Metric};
use tracelogic_analysis::patterns::suffix::{lcp_array, maximal_repeats, suffix_array};
use tracelogic_analysis::patterns::{analyse_events, detect, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside};
use tracelogic_analysis::replay::{what_if, Network, WhatIfOptions, SEED_SCALES};
use tracelogic_analysis::similarity::{compare_runs, run_properties, CompareOptions};
use tracelogic_analysis::topology::{identify_graph, identify_matrix, TopologyOptions, TopologyReport};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::parallel::{reader_threads, set_reader_threads};
use tracelogic_formats::read_trace;
use tracelogic_graph::edgelist;
use tracelogic_graph::families::{Family, TopologySpec};
use tracelogic_graph::Graph;
use tracelogic_model::query::Selection;
use tracelogic_model::{match_messages, Rank, RankTrace};

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

/// Ingest figures of one trace; times are the minimum over the repetitions, in milliseconds.
#[derive(Serialize)]
struct IngestResult {
    /// Format detected (`otf2`, `dumpi`, `text`, ...).
    format: String,
    /// Number of files read.
    files: usize,
    /// Total bytes of those files.
    bytes: u64,
    /// World ranks.
    ranks: usize,
    /// MPI calls recorded over all ranks (the records the throughput is counted in).
    calls: u64,
    /// Point-to-point operations over all ranks.
    p2p: u64,
    /// Collective operations over all ranks.
    collectives: u64,
    /// Threads the readers used (`formats::parallel::reader_threads`: every core unless
    /// `TRACELOGIC_THREADS` says otherwise).
    threads: usize,
    /// Reading the files from the page cache into memory on one thread, no parsing.
    read_ms: f64,
    /// CPU time of that read (kernel time included): the floor to compare the parse's CPU time
    /// with, since wall time swings with the machine's load.
    read_cpu_ms: f64,
    /// Reading the same files with no parsing on `threads` threads, each file whole.
    read_threads_ms: f64,
    /// CPU time of that read, all threads.
    read_threads_cpu_ms: f64,
    /// Parsing the in-memory files into the trace model on `threads` threads.
    parse_ms: f64,
    /// CPU time of that parse, all threads.
    parse_cpu_ms: f64,
    /// Parsing them on one thread.
    parse_single_ms: f64,
    /// CPU time of the one-thread parse.
    parse_single_cpu_ms: f64,
    /// Bytes of the trace model's columns (calls, point-to-point and collective operations,
    /// metric samples), as the parse leaves them.
    model_bytes: u64,
    /// Writing that many bytes, column by column as the ranks have them, into fresh memory on
    /// one thread with no parsing: what any reader that builds this model pays at least.
    model_write_ms: f64,
    /// CPU time of that write.
    model_write_cpu_ms: f64,
    /// The same write on `threads` threads, the ranks split between them.
    model_write_threads_ms: f64,
    /// CPU time of that write, all threads.
    model_write_threads_cpu_ms: f64,
    /// Building the communication matrix from the trace.
    matrix_ms: f64,
    /// CPU time of the matrix (this thread).
    matrix_cpu_ms: f64,
    /// Sum of all matrix bytes (a checksum comparable with the peers' matrices).
    matrix_bytes: u64,
    /// Sum of all matrix messages.
    matrix_messages: u64,
    /// Peak resident memory of the process, KiB.
    peak_rss_kb: u64,
}

/// Pattern-detection figures of one event sequence; times are the minimum over the
/// repetitions, in milliseconds of this thread's CPU time (the machine is shared).
#[derive(Serialize)]
struct PatternsResult {
    /// Events in the sequence.
    events: usize,
    /// Distinct symbols.
    alphabet: u32,
    /// Suffix array alone (the stage a suffix-array peer starts with).
    suffix_array_ms: f64,
    /// LCP array from the suffix array.
    lcp_ms: f64,
    /// All maximal repeats of length ≥ 2 of the raw sequence (suffix array, LCP and the interval
    /// walk), the task of a suffix-array repeat finder; `None` when skipped.
    maximal_repeats_ms: Option<f64>,
    /// Maximal repeats found.
    maximal_repeats: usize,
    /// Per-rank pattern detection as tracelogic runs it (tandem removal, then maximal repeats of
    /// the reduced sequence, then the patterns in event positions).
    detect_ms: f64,
    /// Patterns found by the detection.
    patterns: usize,
    /// Σ i·sa[i] (wrapping), to check that the peer built the same suffix array.
    sa_checksum: u64,
    /// Σ lcp[i], to check the peer's LCP array.
    lcp_sum: u64,
    /// Peak resident memory of the process, KiB.
    peak_rss_kb: u64,
}

/// A Sweep3D-like sequence of `n` events (the one `cargo bench --bench patterns` uses): four
/// sweeps of 30 repeats of a two-event step, with a random event every few hundred steps.
fn sweep_sequence(n: usize) -> Vec<u32> {
    let mut x = 1u64;
    let mut lcg = move || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x >> 33
    };
    let mut seq = Vec::with_capacity(n + 2);
    let sweeps = [[0u32, 1], [0, 2], [1, 3], [0, 3]];
    while seq.len() < n {
        for s in &sweeps {
            for _ in 0..30 {
                seq.extend_from_slice(s);
                if lcg().is_multiple_of(300) {
                    seq.push(4 + (lcg() % 8) as u32);
                }
            }
        }
    }
    seq.truncate(n);
    seq
}

fn cpu_timed<T>(best: &mut f64, f: impl FnOnce() -> T) -> T {
    let c = thread_cpu_ms();
    let out = f();
    *best = best.min(thread_cpu_ms() - c);
    out
}

fn patterns(events: usize, out: Option<&PathBuf>, repeat: u32, raw_repeats: bool) -> Result<PatternsResult, String> {
    let seq = sweep_sequence(events);
    let alphabet = seq.iter().max().map_or(0, |&m| m + 1);
    if let Some(path) = out {
        let bytes: Vec<u8> = seq.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let (mut sa_ms, mut lcp_ms, mut rep_ms, mut det_ms) = (f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::INFINITY);
    let (mut sa_checksum, mut lcp_sum, mut reps, mut found) = (0, 0, 0, 0);
    for _ in 0..repeat.max(1) {
        let sa = cpu_timed(&mut sa_ms, || suffix_array(&seq, alphabet as usize));
        let lcp = cpu_timed(&mut lcp_ms, || lcp_array(&seq, &sa));
        sa_checksum = sa
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, &p)| acc.wrapping_add((i as u64).wrapping_mul(p as u64)));
        lcp_sum = lcp.iter().map(|&l| l as u64).sum();
        drop((sa, lcp));
        if raw_repeats {
            reps = cpu_timed(&mut rep_ms, || maximal_repeats(&seq, alphabet as usize, 2)).len();
        }
        found = cpu_timed(&mut det_ms, || detect(&seq, alphabet, None, &PatternOptions::default())).len();
    }
    Ok(PatternsResult {
        events,
        alphabet,
        suffix_array_ms: sa_ms,
        lcp_ms,
        maximal_repeats_ms: raw_repeats.then_some(rep_ms),
        maximal_repeats: reps,
        detect_ms: det_ms,
        patterns: found,
        sa_checksum,
        lcp_sum,
        peak_rss_kb: peak_rss_kb(),
    })
}

/// Topology figures of one graph; times are the minimum over the repetitions, in milliseconds.
#[derive(Serialize)]
struct TopologyResult {
    /// Nodes of the graph.
    ranks: u32,
    /// Edges of the graph.
    edges: usize,
    /// Label of the match, when one was proved.
    matched: Option<String>,
    /// Each elimination stage with its minimum time.
    stages: Vec<(String, f64)>,
    /// Time of the `spectrum` stage (eigenvalues or closed-walk counts).
    spectrum_ms: f64,
    /// Time of the `isomorphism` stage (the proof with a mapping).
    isomorphism_ms: f64,
    /// Wall time of the whole `identify_graph` call, minimum over the repetitions: every stage,
    /// the display spectrum, the rank places, the report's components and edge list.
    total_ms: f64,
    /// Sum of the elimination stages' own times (the rest of `total_ms` is outside them).
    stages_ms: f64,
    /// CPU time of the whole identification (this thread), minimum over the repetitions.
    total_cpu_ms: f64,
    /// Wall time of the whole `identify_graph` call, minimum over the repetitions.
    call_ms: f64,
    /// The identification's own total (`timings.total_ms`: stages, display spectrum, mapping).
    identification_ms: f64,
    /// Eigenvalues computed for display after the proof (`timings.display_spectrum_ms`).
    display_spectrum_ms: f64,
    /// Rank places of the match (`timings.mapping_ms`).
    mapping_ms: f64,
    /// Whether the mapping was checked here edge by edge against the rebuilt reference.
    mapping_verified: bool,
    /// Why the check failed, when it did.
    verification_error: Option<String>,
    /// Peak resident memory of the process, KiB.
    peak_rss_kb: u64,
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// CPU time this thread has run, in milliseconds (`CLOCK_THREAD_CPUTIME_ID`). Wall time alone
/// misleads when the machine is shared.
/// CPU time of the whole process (every thread, kernel time included), in ms.
fn process_cpu_ms() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// Peak resident memory of this process so far, in KiB (`VmHWM` of `/proc/self/status`; 0
/// elsewhere). Measured here because a child's `ru_maxrss` also counts its parent's memory before
/// `exec`.
fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn ingest(paths: &[PathBuf], repeat: u32) -> Result<IngestResult, String> {
    let threads = reader_threads();
    let mut best: Option<IngestResult> = None;
    let mut first_peak: Option<u64> = None;
    for _ in 0..repeat.max(1) {
        let (read_threads_ms, read_threads_cpu_ms) = read_on_threads(paths, threads)?;
        let (t, cpu) = (Instant::now(), process_cpu_ms());
        let files = load_paths(paths).map_err(|e| format!("cannot read {e}"))?;
        let (read_ms, read_cpu_ms) = (ms(t), process_cpu_ms() - cpu);
        let bytes: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
        let nfiles = files.len();
        let (t, cpu) = (Instant::now(), process_cpu_ms());
        let trace = read_trace(files).map_err(|e| format!("cannot read trace: {e}"))?;
        let (parse_ms, parse_cpu_ms) = (ms(t), process_cpu_ms() - cpu);
        let (t, cpu) = (Instant::now(), process_cpu_ms());
        let matrix = CommMatrix::from_trace(&trace, &Selection::all());
        let (matrix_ms, matrix_cpu_ms) = (ms(t), process_cpu_ms() - cpu);
        // The peak of one read + parse + matrix, as a CLI run has: taken before the one-thread
        // parse below adds whatever the reading threads' allocator arenas kept.
        let peak_rss_kb = *first_peak.get_or_insert_with(peak_rss_kb);
        let columns: Vec<Vec<usize>> = trace.ranks.iter().map(column_bytes).collect();
        let model_bytes = columns.iter().flatten().sum::<usize>() as u64;
        let (model_write_ms, model_write_cpu_ms) = write_columns(&columns, 1);
        let (model_write_threads_ms, model_write_threads_cpu_ms) = write_columns(&columns, threads);
        let (format, ranks) = (trace.format.clone(), trace.ranks.len());
        let calls = trace.ranks.iter().map(|r| r.calls.len() as u64).sum();
        let p2p = trace.ranks.iter().map(|r| r.p2p.len() as u64).sum();
        let collectives = trace.ranks.iter().map(|r| r.collectives.len() as u64).sum();
        drop(trace);
        let files = load_paths(paths).map_err(|e| format!("cannot read {e}"))?;
        set_reader_threads(1);
        let (t, cpu) = (Instant::now(), process_cpu_ms());
        let single = read_trace(files);
        let (parse_single_ms, parse_single_cpu_ms) = (ms(t), process_cpu_ms() - cpu);
        set_reader_threads(0);
        drop(single.map_err(|e| format!("cannot read trace: {e}"))?);
        let r = IngestResult {
            format,
            files: nfiles,
            bytes,
            ranks,
            calls,
            p2p,
            collectives,
            threads,
            read_ms,
            read_cpu_ms,
            read_threads_ms,
            read_threads_cpu_ms,
            parse_ms,
            parse_cpu_ms,
            parse_single_ms,
            parse_single_cpu_ms,
            model_bytes,
            model_write_ms,
            model_write_cpu_ms,
            model_write_threads_ms,
            model_write_threads_cpu_ms,
            matrix_ms,
            matrix_cpu_ms,
            matrix_bytes: matrix.total(Metric::Bytes),
            matrix_messages: matrix.total(Metric::Messages),
            peak_rss_kb,
        };
        best = Some(match best {
            None => r,
            Some(b) => IngestResult {
                read_ms: b.read_ms.min(r.read_ms),
                read_cpu_ms: b.read_cpu_ms.min(r.read_cpu_ms),
                read_threads_ms: b.read_threads_ms.min(r.read_threads_ms),
                read_threads_cpu_ms: b.read_threads_cpu_ms.min(r.read_threads_cpu_ms),
                parse_ms: b.parse_ms.min(r.parse_ms),
                parse_cpu_ms: b.parse_cpu_ms.min(r.parse_cpu_ms),
                parse_single_ms: b.parse_single_ms.min(r.parse_single_ms),
                parse_single_cpu_ms: b.parse_single_cpu_ms.min(r.parse_single_cpu_ms),
                model_write_ms: b.model_write_ms.min(r.model_write_ms),
                model_write_cpu_ms: b.model_write_cpu_ms.min(r.model_write_cpu_ms),
                model_write_threads_ms: b.model_write_threads_ms.min(r.model_write_threads_ms),
                model_write_threads_cpu_ms: b.model_write_threads_cpu_ms.min(r.model_write_threads_cpu_ms),
                matrix_ms: b.matrix_ms.min(r.matrix_ms),
                matrix_cpu_ms: b.matrix_cpu_ms.min(r.matrix_cpu_ms),
                ..r
            },
        });
    }
    best.ok_or_else(|| "no repetition ran".into())
}

/// What `digest` prints: the trace's hash per thread count, and its size for a quick look.
#[derive(Serialize)]
struct DigestResult {
    /// FNV-1a 64 of the trace's serde JSON (or of `error: ` and the reader's message), read with
    /// the default threads.
    digest: String,
    /// The same read on one thread.
    digest_single: String,
    /// MPI calls over all ranks (0 when the read failed).
    calls: u64,
    /// Point-to-point operations over all ranks.
    p2p: u64,
}

/// An FNV-1a 64 hasher fed as a writer, so the trace's JSON is hashed without being kept.
struct Fnv(u64);

impl std::io::Write for Fnv {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Hash the trace under `paths` read on the default threads and on one (see [`DigestResult`]).
fn digest(paths: &[PathBuf]) -> Result<DigestResult, String> {
    let read = |threads: usize| -> Result<(String, u64, u64), String> {
        set_reader_threads(threads);
        let files = load_paths(paths).map_err(|e| format!("cannot read {e}"))?;
        let mut h = Fnv(0xcbf2_9ce4_8422_2325);
        let (calls, p2p) = match read_trace(files) {
            Ok(trace) => {
                serde_json::to_writer(&mut h, &trace).map_err(|e| e.to_string())?;
                (trace.num_calls(), trace.ranks.iter().map(|r| r.p2p.len() as u64).sum())
            }
            Err(e) => {
                std::io::Write::write_all(&mut h, format!("error: {e}").as_bytes()).map_err(|e| e.to_string())?;
                (0, 0)
            }
        };
        Ok((format!("{:016x}", h.0), calls, p2p))
    };
    let (digest, calls, p2p) = read(0)?;
    let (digest_single, ..) = read(1)?;
    set_reader_threads(0);
    Ok(DigestResult {
        digest,
        digest_single,
        calls,
        p2p,
    })
}

/// Bytes of each column of `rt` (calls, point-to-point and collective operations, metric
/// samples), in the order a reader fills them.
fn column_bytes(rt: &RankTrace) -> Vec<usize> {
    fn b<T>(col: &[T]) -> usize {
        std::mem::size_of_val(col)
    }
    let (c, p, k) = (&rt.calls, &rt.p2p, &rt.collectives);
    let mut cols = vec![
        b(&c.func),
        b(&c.kind),
        b(&c.enter),
        b(&c.exit),
        b(&c.callpath),
        b(&c.location),
        b(&p.post),
        b(&p.complete),
        b(&p.dir),
        b(&p.peer),
        b(&p.tag),
        b(&p.comm),
        b(&p.bytes),
        b(&k.call),
        b(&k.op),
        b(&k.comm),
        b(&k.root),
        b(&k.bytes_sent),
        b(&k.bytes_recv),
    ];
    cols.extend(rt.metrics.iter().flat_map(|m| [b(&m.time), b(&m.value)]));
    cols
}

/// The model-write floor: wall and CPU ms of allocating every column of `ranks` (bytes per
/// column, per rank) and writing all its bytes, with no parsing, on `threads` threads (ranks
/// dealt round-robin). The memory is fresh as the parse's is: columns above the allocator's
/// mapping threshold come from new mappings, the rest from the heap.
fn write_columns(ranks: &[Vec<usize>], threads: usize) -> (f64, f64) {
    let threads = threads.clamp(1, ranks.len().max(1));
    let write = |k: usize| -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for cols in ranks.iter().skip(k).step_by(threads) {
            for &n in cols {
                let mut col = Vec::with_capacity(n);
                col.resize(n, 1u8);
                out.push(col);
            }
        }
        out
    };
    let (t, cpu) = (Instant::now(), process_cpu_ms());
    let written: Vec<Vec<Vec<u8>>> = match threads {
        1 => vec![write(0)],
        _ => std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads).map(|k| scope.spawn(move || write(k))).collect();
            workers.into_iter().map(|w| w.join().expect("writer thread")).collect()
        }),
    };
    let timing = (ms(t), process_cpu_ms() - cpu);
    drop(std::hint::black_box(written));
    timing
}

/// The byte-read floor on `threads` threads: every regular file under `paths` read whole into
/// memory, the files shared out in turn; (wall ms, process CPU ms). Nothing is parsed or kept.
fn read_on_threads(paths: &[PathBuf], threads: usize) -> Result<(f64, f64), String> {
    let mut files = Vec::new();
    let mut todo: Vec<PathBuf> = paths.to_vec();
    while let Some(p) = todo.pop() {
        if p.is_dir() {
            let entries = std::fs::read_dir(&p).map_err(|e| format!("cannot list {}: {e}", p.display()))?;
            for entry in entries {
                todo.push(entry.map_err(|e| format!("cannot list {}: {e}", p.display()))?.path());
            }
        } else {
            files.push(p);
        }
    }
    files.sort();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (t, cpu) = (Instant::now(), process_cpu_ms());
    let outcome: Result<Vec<Vec<Vec<u8>>>, String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                let (files, next) = (&files, &next);
                scope.spawn(move || {
                    let mut kept = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(f) = files.get(i) else { break };
                        kept.push(std::fs::read(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?);
                    }
                    Ok(kept)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("reader thread")).collect()
    });
    let timing = (ms(t), process_cpu_ms() - cpu);
    drop(outcome?);
    Ok(timing)
}

/// Check the reported rank → node mapping against the reference graph of the matched family:
/// a bijection onto the reference nodes that carries every edge onto an edge (with equal edge
/// counts, that makes it an isomorphism).
fn verify_mapping(g: &Graph, report: &TopologyReport) -> Result<(), String> {
    let m = report.identification.matched.as_ref().ok_or("no match")?;
    let family = Family::from_name(&m.family).ok_or_else(|| format!("unknown family {}", m.family))?;
    let reference = TopologySpec::new(family, m.dims.clone())?.graph();
    let n = g.num_nodes() as usize;
    if reference.num_nodes() as usize != n || reference.num_edges() != g.num_edges() {
        return Err("reference size differs".into());
    }
    let mut node_of = vec![u32::MAX; n];
    let mut used = vec![false; n];
    for p in &report.identification.mapping {
        let (r, v) = (p.rank as usize, p.node as usize);
        if r >= n || v >= n || used[v] || node_of[r] != u32::MAX {
            return Err(format!("rank {r} → node {v} is not part of a bijection"));
        }
        used[v] = true;
        node_of[r] = p.node;
    }
    if let Some(r) = node_of.iter().position(|&v| v == u32::MAX) {
        return Err(format!("rank {r} has no node"));
    }
    match g
        .edges()
        .find(|&(a, b)| !reference.has_edge(node_of[a as usize], node_of[b as usize]))
    {
        Some((a, b)) => Err(format!("edge {a}-{b} maps to a non-edge")),
        None => Ok(()),
    }
}

fn topology(path: &PathBuf, repeat: u32) -> Result<TopologyResult, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let g = edgelist::parse(&text, &path.display().to_string())?;
    let opts = TopologyOptions::default();
    let mut stages: Vec<(String, f64)> = Vec::new();
    let mut last = None;
    let mut total_cpu_ms = f64::INFINITY;
    let (mut call_ms, mut identification_ms, mut display_spectrum_ms, mut mapping_ms) =
        (f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::INFINITY);
    for _ in 0..repeat.max(1) {
        let (t, cpu) = (Instant::now(), thread_cpu_ms());
        let report = identify_graph(&g, &opts);
        total_cpu_ms = total_cpu_ms.min(thread_cpu_ms() - cpu);
        call_ms = call_ms.min(ms(t));
        let timings = &report.identification.timings;
        identification_ms = identification_ms.min(timings.total_ms);
        display_spectrum_ms = display_spectrum_ms.min(timings.display_spectrum_ms);
        mapping_ms = mapping_ms.min(timings.mapping_ms);
        for (i, s) in report.identification.stages.iter().enumerate() {
            match stages.get_mut(i) {
                Some(entry) if entry.0 == s.name => entry.1 = entry.1.min(s.milliseconds),
                _ => stages.insert(i, (s.name.clone(), s.milliseconds)),
            }
        }
        last = Some(report);
    }
    let report = last.ok_or("no repetition ran")?;
    let stage = |name: &str| stages.iter().filter(|s| s.0 == name).map(|s| s.1).sum::<f64>();
    let verification = verify_mapping(&g, &report);
    Ok(TopologyResult {
        ranks: g.num_nodes(),
        edges: g.num_edges(),
        matched: report.identification.matched.as_ref().map(|m| m.label.clone()),
        spectrum_ms: stage("spectrum"),
        isomorphism_ms: stage("isomorphism"),
        total_ms: call_ms,
        stages_ms: stages.iter().map(|s| s.1).sum(),
        total_cpu_ms,
        call_ms,
        identification_ms,
        display_spectrum_ms,
        mapping_ms,
        stages,
        mapping_verified: verification.is_ok(),
        verification_error: verification.err(),
        peak_rss_kb: peak_rss_kb(),
    })
}

/// One analysis stage of `stages`: minimum wall and CPU time over the repetitions, in ms.
#[derive(Serialize)]
struct StageTime {
    /// Stage name (`matrix`, `topology`, `logical`, `verify`, `compress`, `matching`,
    /// `patterns`, `phases`, `replay`, `similarity`).
    name: String,
    /// Wall time.
    ms: f64,
    /// CPU time of this thread (the stages run on one thread).
    cpu_ms: f64,
    /// Why the stage could not run (e.g. no topology matched, so no logical trace).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Figures of every analysis stage on one trace, read once. Each stage starts from the results
/// of the earlier ones, as the CLI subcommand computes them (`tracelogic phases` = matching +
/// patterns + phases; `tracelogic logical` = matrix + topology + logical + verify + compress), so a stage's
/// time is its own cost only.
#[derive(Serialize)]
struct StagesResult {
    /// Format detected.
    format: String,
    /// Number of files read.
    files: usize,
    /// Total bytes of those files.
    bytes: u64,
    /// World ranks.
    ranks: usize,
    /// MPI calls over all ranks.
    calls: u64,
    /// Matched point-to-point messages.
    messages: usize,
    /// Reading the files into memory (page cache to memory), wall.
    read_ms: f64,
    /// Parsing them into the trace model, wall (on the readers' threads).
    parse_ms: f64,
    /// CPU time of that parse, all threads.
    parse_cpu_ms: f64,
    /// Peak resident memory once the trace is parsed, KiB (the trace and the file bytes).
    parse_peak_rss_kb: u64,
    /// The stages in the order they ran.
    stages: Vec<StageTime>,
    /// Non-zero entries of the communication matrix (pairs of ranks with traffic).
    matrix_entries: usize,
    /// Heap the sparse matrix holds, bytes: O(ranks + entries) (the dense form was 16 × ranks²).
    matrix_heap_bytes: usize,
    /// Renumbering the trace's ranks by a fixed random permutation (the second run of the
    /// similarity stage), not counted as a stage.
    renumber_ms: f64,
    /// Label of the topology identified, if any.
    topology: Option<String>,
    /// Share of the real point-to-point calls the logical trace's expansion reproduces
    /// (`Verification::overall_share`). The verification's diff costs O(calls · differences)
    /// per rank, so its time grows faster than the trace when this is below 1.
    reproduced_share: Option<f64>,
    /// Loop-compressed length of the logical trace.
    compressed_length: Option<usize>,
    /// Communication patterns found.
    communication_patterns: usize,
    /// Phases found at the CLI's default strength.
    phases: usize,
    /// Configurations the what-if replay ran.
    configurations: usize,
    /// θ of the trace against its renumbered copy (1 when the renumbering is undone).
    theta: f64,
    /// ε of the same comparison.
    epsilon: f64,
    /// Peak resident memory of the process after every stage, KiB.
    peak_rss_kb: u64,
}

/// Run `f` and keep the minimum wall and CPU time under `name` in `times`.
fn stage<T>(times: &mut Vec<StageTime>, name: &str, f: impl FnOnce() -> Result<T, String>) -> Option<T> {
    let (t, cpu) = (Instant::now(), thread_cpu_ms());
    let out = f();
    let (wall, cpu) = (ms(t), thread_cpu_ms() - cpu);
    let entry = match times.iter().position(|s| s.name == name) {
        Some(i) => &mut times[i],
        None => {
            times.push(StageTime {
                name: name.into(),
                ms: f64::INFINITY,
                cpu_ms: f64::INFINITY,
                error: None,
            });
            times.last_mut().expect("just pushed")
        }
    };
    entry.ms = entry.ms.min(wall);
    entry.cpu_ms = entry.cpu_ms.min(cpu);
    match out {
        Ok(v) => Some(v),
        Err(e) => {
            entry.error = Some(e);
            None
        }
    }
}

/// The stages of `tracelogic-bench stages` with the CLI's default options.
fn stages(paths: &[PathBuf], repeat: u32) -> Result<StagesResult, String> {
    let t = Instant::now();
    let files = load_paths(paths).map_err(|e| format!("cannot read {e}"))?;
    let read_ms = ms(t);
    let bytes: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    let nfiles = files.len();
    let (t, cpu) = (Instant::now(), process_cpu_ms());
    let trace = read_trace(files).map_err(|e| format!("cannot read trace: {e}"))?;
    let (parse_ms, parse_cpu_ms) = (ms(t), process_cpu_ms() - cpu);
    let parse_peak_rss_kb = peak_rss_kb();
    let mut times = Vec::new();
    let (mut topology, mut compressed_length, mut communication_patterns, mut phases, mut configurations) =
        (None, None, 0, 0, 0);
    let mut messages = 0;
    let (mut matrix_entries, mut matrix_heap_bytes) = (0, 0);
    let mut reproduced_share = None;
    for _ in 0..repeat.max(1) {
        let matrix = stage(&mut times, "matrix", || {
            Ok(CommMatrix::from_trace(&trace, &Selection::all()))
        });
        let matrix = matrix.expect("the matrix stage cannot fail");
        (matrix_entries, matrix_heap_bytes) = (matrix.nonzero(), matrix.heap_bytes());
        let report = stage(&mut times, "topology", || {
            Ok(identify_matrix(&matrix, &TopologyOptions::default()))
        })
        .expect("identification always reports");
        drop(matrix);
        topology = report.identification.matched.as_ref().map(|m| m.label.clone());
        let logical = stage(&mut times, "logical", || logicalize_identified(&trace, &report, None));
        drop(report);
        if let Some(logical) = logical {
            reproduced_share = stage(&mut times, "verify", || verify(&trace, &logical)).map(|v| v.overall_share);
            compressed_length = stage(&mut times, "compress", || {
                Ok(compress(&logical.records).compressed_length)
            });
        }
        let matching = stage(&mut times, "matching", || Ok(match_messages(&trace))).expect("matching cannot fail");
        messages = matching.messages.len();
        let (events, analysis) = stage(&mut times, "patterns", || {
            let events = rank_events(&trace, false);
            let analysis = analyse_events(&trace, &matching, &events, &PatternOptions::default());
            Ok((events, analysis))
        })
        .expect("pattern detection cannot fail");
        communication_patterns = analysis.communication_patterns.len();
        phases = stage(&mut times, "phases", || {
            Ok(
                detect_phases(&trace, &events, &analysis.communication, 0.0, Outside::Own)
                    .phases
                    .len(),
            )
        })
        .expect("phase detection cannot fail");
        drop((events, analysis));
        configurations = stage(&mut times, "replay", || {
            let options = WhatIfOptions::new(Network::presets(), SEED_SCALES.to_vec());
            what_if(&trace, &matching, &options)
                .map(|w| w.configurations.len())
                .map_err(|e| e.to_string())
        })
        .unwrap_or(0);
    }
    // Similarity last: the renumbered copy replaces the trace, so the peak memory is that of
    // one trace, as `tracelogic compare` holds one trace at a time.
    let opts = CompareOptions::default();
    let mut props_ms = f64::INFINITY;
    let mut props_cpu_ms = f64::INFINITY;
    let mut first = None;
    for _ in 0..repeat.max(1) {
        let (t, cpu) = (Instant::now(), thread_cpu_ms());
        first = Some(run_properties(&trace, opts.filter));
        props_ms = props_ms.min(ms(t));
        props_cpu_ms = props_cpu_ms.min(thread_cpu_ms() - cpu);
    }
    let first = first.expect("at least one repetition");
    let (ranks, calls, format) = (trace.ranks.len(), trace.num_calls(), trace.format.clone());
    let mut perm: Vec<Rank> = (0..ranks as Rank).collect();
    perm.shuffle(&mut StdRng::seed_from_u64(0x7261_6e6b));
    let t = Instant::now();
    let renumbered = trace.into_renumbered(&perm).map_err(|e| e.to_string())?;
    let renumber_ms = ms(t);
    let (mut theta, mut epsilon) = (f64::NAN, f64::NAN);
    for _ in 0..repeat.max(1) {
        if let Some(m) = stage(&mut times, "similarity", || {
            compare_runs(&[first.clone(), run_properties(&renumbered, opts.filter)], &opts)
        }) {
            (theta, epsilon) = (m.pairs[0].theta, m.pairs[0].epsilon);
        }
    }
    let similarity = times
        .iter_mut()
        .find(|s| s.name == "similarity")
        .expect("similarity ran");
    similarity.ms += props_ms;
    similarity.cpu_ms += props_cpu_ms;
    Ok(StagesResult {
        format,
        files: nfiles,
        bytes,
        ranks,
        calls,
        messages,
        read_ms,
        parse_ms,
        parse_cpu_ms,
        parse_peak_rss_kb,
        stages: times,
        matrix_entries,
        matrix_heap_bytes,
        renumber_ms,
        topology,
        reproduced_share,
        compressed_length,
        communication_patterns,
        phases,
        configurations,
        theta,
        epsilon,
        peak_rss_kb: peak_rss_kb(),
    })
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
