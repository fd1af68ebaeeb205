//! `stages PATH...`: every analysis stage the CLI runs, on one trace read once.

use crate::clock::{ms, peak_rss_kb, process_cpu_ms, thread_cpu_ms};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;
use tracelogic_analysis::compress::compress;
use tracelogic_analysis::logical::{logicalize_identified, verify};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside};
use tracelogic_analysis::replay::{what_if, Network, WhatIfOptions, SEED_SCALES};
use tracelogic_analysis::similarity::{compare_runs, run_properties, CompareOptions};
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::query::Selection;
use tracelogic_model::{match_messages, Rank};

/// One analysis stage of `stages`: minimum wall and CPU time over the repetitions, in ms.
#[derive(Serialize)]
pub(crate) struct StageTime {
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
pub(crate) struct StagesResult {
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
pub(crate) fn stage<T>(times: &mut Vec<StageTime>, name: &str, f: impl FnOnce() -> Result<T, String>) -> Option<T> {
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
pub(crate) fn stages(paths: &[PathBuf], repeat: u32) -> Result<StagesResult, String> {
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
