//! `tracelogic generate`: write a synthetic trace of a known topology, and its ground truth.
//!
//! The flags fill a [`tracelogic_synth::Spec`] (starting from `--spec FILE` when given, else
//! from the defaults), `tracelogic_synth::generate_with_truth` builds the trace, and one of the
//! format writers turns it into files. With `--nas BENCH` they fill a
//! [`tracelogic_synth::NasSpec`] instead and `tracelogic_synth::generate_nas` writes a NAS
//! Parallel Benchmark communication skeleton.

use crate::common::{emit, print_json, set_stage, CliError, CliResult};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tracelogic_model::query::{parse_bytes, parse_time};
use tracelogic_synth::{
    generate_nas, generate_with_truth, Clock, CollectiveSpec, NasBenchmark, NasClass, NasSpec, Noise, Numbering, Phase,
    Spec, Style, TopologySpec, Truth,
};

/// The formats `generate` writes.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutFormat {
    /// tracelogic's native text format: one file.
    Text,
    /// SST DUMPI: `NAME.meta` and one `NAME-RANK.bin` per rank, in the `--out` folder.
    Dumpi,
    /// OTF2 archive (`NAME.otf2`, `NAME.def`, `NAME/` with per-location files) in the `--out` folder.
    Otf2,
}

/// Per-direction message sizes: `4096` or `4096,east=8Ki,north=1Ki`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeArg {
    /// Size of every message without an override.
    pub default: Option<u64>,
    /// Overrides by direction name.
    pub by_direction: BTreeMap<String, u64>,
}

fn size_arg(text: &str) -> Result<SizeArg, String> {
    let mut out = SizeArg {
        default: None,
        by_direction: BTreeMap::new(),
    };
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.split_once('=') {
            Some((dir, size)) => {
                out.by_direction.insert(dir.trim().to_owned(), parse_bytes(size)?);
            }
            None if out.default.is_none() => out.default = Some(parse_bytes(item)?),
            None => return Err(format!("two default sizes in `{text}` (use SIZE,DIRECTION=SIZE,...)")),
        }
    }
    if out.default.is_none() && out.by_direction.is_empty() {
        return Err("empty size".into());
    }
    Ok(out)
}

fn fraction_arg(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| format!("expected a number ≥ 0, got `{text}`"))
}

fn bandwidth_arg(text: &str) -> Result<f64, String> {
    fraction_arg(text).and_then(|x| {
        if x > 0.0 {
            Ok(x)
        } else {
            Err("the bandwidth must be positive".into())
        }
    })
}

/// Arguments of `tracelogic generate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Topology as FAMILY:DIMS: grid:8x8, torus:4x4x4, stencil6:4x4, hypercube:4, binary-tree:15,
    /// ring:8, all-to-all:6 ... (required unless --spec, --nas or every phase names one).
    #[arg(long, value_parser = TopologySpec::parse, value_name = "FAMILY:DIMS")]
    pub topology: Option<TopologySpec>,
    /// A NAS Parallel Benchmark communication skeleton instead of a topology program: bt, sp,
    /// lu, mg, cg, ft, is or ep (NPB 3.3 MPI partners, order and sizes; needs --ranks).
    #[arg(
        long,
        value_name = "bt|sp|lu|mg|cg|ft|is|ep",
        conflicts_with_all = ["topology", "spec", "phases_file", "phase", "bytes", "compute", "imbalance", "style", "collectives", "noise"]
    )]
    pub nas: Option<NasBenchmark>,
    /// With --nas: world ranks (a square for bt/sp, a power of two for lu, mg, cg, ft, is; any for ep).
    #[arg(long, requires = "nas", value_name = "N")]
    pub ranks: Option<u32>,
    /// With --nas: the NPB problem class, which sets the grid and message sizes [default: S].
    #[arg(long, requires = "nas", value_name = "S|W|A|B|C")]
    pub class: Option<NasClass>,
    /// Which node each rank plays: row-major (identity), random, or partial:FRACTION (that share
    /// of the ranks renumbered among themselves, e.g. partial:0.67 or partial:2/3).
    #[arg(long, value_name = "row-major|random|partial:F")]
    pub numbering: Option<Numbering>,
    /// Seed of every random choice (numbering, imbalance, noise) [default: 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Iterations of the pattern [default: 10; with --nas the class's time steps, e.g. 60 for BT S].
    #[arg(long)]
    pub iterations: Option<u32>,
    /// Message size, optionally per direction: 4096, 64Ki, 4096,east=8Ki [default: 4096].
    #[arg(long, value_parser = size_arg, value_name = "SIZE[,DIR=SIZE...]")]
    pub bytes: Option<SizeArg>,
    /// Compute time per iteration: 10us, 2ms, 500ns [default: 10us].
    #[arg(long, value_parser = parse_time, value_name = "DURATION")]
    pub compute: Option<u64>,
    /// Per-rank imbalance: rank r computes compute × (1 + F × random[0,1)) [default: 0].
    #[arg(long, value_parser = fraction_arg, value_name = "F")]
    pub imbalance: Option<f64>,
    /// Exchange style: isend (Irecv/Isend/Waitall), sendrecv, blocking, wavefront [default: isend].
    #[arg(long, value_name = "isend|sendrecv|blocking|wavefront")]
    pub style: Option<Style>,
    /// A collective on MPI_COMM_WORLD every EVERY iterations: allreduce:5, barrier:1, bcast:10:1Ki
    /// (repeatable; replaces the spec's list).
    #[arg(long = "collective", value_name = "OP:EVERY[:BYTES]")]
    pub collectives: Vec<CollectiveSpec>,
    /// Low-volume noise: FRACTION of the ranks each send PERCENT% of the message size to a fixed
    /// random non-neighbour every iteration, e.g. 0.1:2%.
    #[arg(long, value_name = "FRACTION:PERCENT%")]
    pub noise: Option<Noise>,
    /// JSON file with a list of phases (or an object with a "phases" list); each phase may set
    /// topology, iterations, bytes, direction_bytes, compute_ns, style.
    #[arg(long = "phases", value_name = "FILE")]
    pub phases_file: Option<PathBuf>,
    /// One phase, repeatable, run in order after those of --phases:
    /// topology=ring:8,iterations=5,bytes=1Ki,compute=20us,style=sendrecv.
    #[arg(long = "phase", value_name = "KEY=VALUE,...")]
    pub phase: Vec<Phase>,
    /// Start from this spec: a JSON spec, or a truth file written by --truth (its "spec").
    #[arg(long, value_name = "FILE")]
    pub spec: Option<PathBuf>,
    /// Clock model: fixed cost of every MPI call [default: 500ns].
    #[arg(long, value_parser = parse_time, value_name = "DURATION")]
    pub overhead: Option<u64>,
    /// Clock model: network latency [default: 2us].
    #[arg(long, value_parser = parse_time, value_name = "DURATION")]
    pub latency: Option<u64>,
    /// Clock model: bandwidth in GB/s (bytes per nanosecond) [default: 1].
    #[arg(long, value_parser = bandwidth_arg, value_name = "GB/S")]
    pub bandwidth: Option<f64>,
    /// Output format.
    #[arg(long, value_enum)]
    pub format: OutFormat,
    /// Where to write: the file for text, a folder (created if needed) for dumpi and otf2.
    #[arg(long, value_name = "PATH")]
    pub out: PathBuf,
    /// Base name of the DUMPI / OTF2 files [default: the --out folder's name].
    #[arg(long)]
    pub name: Option<String>,
    /// With --format otf2: write the generated run K times end to end, one rank at a time, so
    /// the trace can be far larger than memory (tens of GB from a run that fits). Calls and
    /// messages are K times the run's; the --truth file describes one repetition.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub repeat: Option<u64>,
    /// Also write the ground truth as JSON: spec, rank → node permutation, phases, noise links.
    #[arg(long, value_name = "FILE")]
    pub truth: Option<PathBuf>,
    /// Print what was written as JSON (schema in docs/cli.md) instead of the one-line summary.
    #[arg(long)]
    pub json: bool,
}

/// What `generate --json` prints.
#[derive(serde::Serialize)]
struct Written<'a, T: serde::Serialize> {
    /// What was generated (`4x4 torus`, `NAS MG class S`).
    label: String,
    ranks: u32,
    calls: u64,
    messages: u64,
    /// The files written, with their sizes.
    files: Vec<WrittenFile>,
    /// The ground truth (the `--truth` file's content).
    truth: &'a T,
}

#[derive(serde::Serialize)]
struct WrittenFile {
    path: String,
    bytes: u64,
}

/// Run `tracelogic generate`.
pub fn run(args: Args) -> CliResult {
    if let Some(benchmark) = args.nas {
        return run_nas(&args, benchmark);
    }
    if args.ranks.is_some() || args.class.is_some() {
        return Err(CliError::Input(
            "--ranks and --class describe a NAS skeleton: give --nas bt|sp|lu|mg|cg|ft|is|ep too (a topology's size is in --topology)".into(),
        ));
    }
    let spec = build_spec(&args)?;
    set_stage(format!("generating {}", spec.topology.label()));
    let (trace, truth) = generate_with_truth(&spec).map_err(|e| CliError::Input(format!("cannot generate: {e}")))?;
    let (written, k) = write(&args, &trace)?;
    report(
        &args,
        phases_label(&truth),
        (truth.ranks, truth.calls * k, truth.messages * k),
        &written,
        &truth,
    )
}

/// The NAS skeleton the flags describe.
fn build_nas_spec(args: &Args, benchmark: NasBenchmark) -> Result<NasSpec, CliError> {
    let ranks = args.ranks.ok_or_else(|| {
        CliError::Input(format!(
            "--nas {benchmark} needs --ranks N (e.g. --ranks {})",
            match benchmark {
                NasBenchmark::Bt | NasBenchmark::Sp => 16,
                _ => 32,
            }
        ))
    })?;
    let mut clock = Clock::default();
    if let Some(o) = args.overhead {
        clock.overhead_ns = o;
    }
    if let Some(l) = args.latency {
        clock.latency_ns = l;
    }
    if let Some(b) = args.bandwidth {
        clock.bandwidth = b;
    }
    Ok(NasSpec {
        benchmark,
        class: args.class.unwrap_or(NasClass::S),
        ranks,
        iterations: args.iterations,
        numbering: args.numbering.unwrap_or(Numbering::RowMajor),
        seed: args.seed.unwrap_or(0),
        clock,
    })
}

fn run_nas(args: &Args, benchmark: NasBenchmark) -> CliResult {
    let spec = build_nas_spec(args, benchmark)?;
    let label = format!("NAS {} class {} skeleton", benchmark.name().to_uppercase(), spec.class);
    set_stage(format!("generating {label} on {} ranks", spec.ranks));
    let (trace, truth) = generate_nas(&spec).map_err(|e| CliError::Input(format!("cannot generate: {e}")))?;
    let (written, k) = write(args, &trace)?;
    let label = match truth.topology_label.as_str() {
        "" => label,
        grid => format!("{label} ({grid} of processes)"),
    };
    report(
        args,
        label,
        (spec.ranks, truth.calls * k, truth.messages * k),
        &written,
        &truth,
    )
}

/// Write the generated trace as the flags say; with `--repeat K` (OTF2 only) streamed, K times.
/// Returns the files and K.
fn write(args: &Args, trace: &tracelogic_model::Trace) -> Result<(Vec<(PathBuf, u64)>, u64), CliError> {
    match args.repeat {
        None => Ok((
            crate::convert::write_trace(trace, args.format, &args.out, args.name.as_deref())?,
            1,
        )),
        Some(_) if args.format != OutFormat::Otf2 => {
            Err(CliError::Input("--repeat writes OTF2 only (give --format otf2)".into()))
        }
        Some(k) => Ok((
            crate::convert::write_otf2_repeated(trace, &args.out, args.name.as_deref(), k)?,
            k,
        )),
    }
}

/// Write the truth file when asked, then the summary line or the JSON.
fn report<T: serde::Serialize>(
    args: &Args,
    label: String,
    (ranks, calls, messages): (u32, u64, u64),
    written: &[(PathBuf, u64)],
    truth: &T,
) -> CliResult {
    if let Some(path) = &args.truth {
        set_stage(format!("writing {}", path.display()));
        let json = serde_json::to_string_pretty(truth).map_err(|e| CliError::Internal(e.to_string()))?;
        fs::write(path, json + "\n").map_err(|e| CliError::Input(format!("cannot write {}: {e}", path.display())))?;
    }
    if args.json {
        print_json(&Written {
            label,
            ranks,
            calls,
            messages,
            files: written
                .iter()
                .map(|(p, b)| WrittenFile {
                    path: p.display().to_string(),
                    bytes: *b,
                })
                .collect(),
            truth,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let bytes: u64 = written.iter().map(|(_, b)| b).sum();
    emit(|out| {
        writeln!(
            out,
            "generated {label}: {ranks} ranks, {calls} calls, {messages} messages; wrote {} file(s), {bytes} bytes, to {}",
            written.len(),
            args.out.display()
        )
    })?;
    Ok(ExitCode::SUCCESS)
}

fn phases_label(truth: &Truth) -> String {
    let labels: Vec<&str> = truth.phases.iter().map(|p| p.label.as_str()).collect();
    labels.join(" then ")
}

/// The spec the flags describe: `--spec` (or the defaults), then every flag given on top.
fn build_spec(args: &Args) -> Result<Spec, CliError> {
    let mut spec = match &args.spec {
        Some(path) => read_spec(path)?,
        None => Spec::default(),
    };
    if let Some(t) = &args.topology {
        spec.topology = t.clone();
    }
    if let Some(n) = args.numbering {
        spec.numbering = n;
    }
    if let Some(s) = args.seed {
        spec.seed = s;
    }
    if let Some(i) = args.iterations {
        spec.iterations = i;
    }
    if let Some(b) = &args.bytes {
        if let Some(d) = b.default {
            spec.bytes = d;
        }
        spec.direction_bytes.extend(b.by_direction.clone());
    }
    if let Some(c) = args.compute {
        spec.compute_ns = c;
    }
    if let Some(i) = args.imbalance {
        spec.imbalance = i;
    }
    if let Some(s) = args.style {
        spec.style = s;
    }
    if !args.collectives.is_empty() {
        spec.collectives = args.collectives.clone();
    }
    if let Some(n) = args.noise {
        spec.noise = Some(n);
    }
    if let Some(o) = args.overhead {
        spec.clock.overhead_ns = o;
    }
    if let Some(l) = args.latency {
        spec.clock.latency_ns = l;
    }
    if let Some(b) = args.bandwidth {
        spec.clock.bandwidth = b;
    }
    let mut phases = Vec::new();
    if let Some(path) = &args.phases_file {
        phases.extend(read_phases(path)?);
    }
    phases.extend(args.phase.iter().cloned());
    if !phases.is_empty() {
        spec.phases = phases;
    }
    if args.topology.is_none() && args.spec.is_none() {
        match spec.phases.iter().find_map(|p| p.topology.clone()) {
            Some(first) if spec.phases.iter().all(|p| p.topology.is_some()) => spec.topology = first,
            _ => {
                return Err(CliError::Input(
                    "--topology is required (e.g. --topology torus:4x4), unless --spec or every phase names one".into(),
                ))
            }
        }
    }
    Ok(spec)
}

fn read_json(path: &Path) -> Result<serde_json::Value, CliError> {
    let text = fs::read_to_string(path).map_err(|e| CliError::Input(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| CliError::Input(format!("{}: not valid JSON: {e}", path.display())))
}

/// A spec file, or a truth file (whose `spec` field is the spec).
fn read_spec(path: &Path) -> Result<Spec, CliError> {
    let mut value = read_json(path)?;
    if value_is_truth(&value) {
        value = value["spec"].take();
    }
    serde_json::from_value(value).map_err(|e| CliError::Input(format!("{}: not a generator spec: {e}", path.display())))
}

fn value_is_truth(v: &serde_json::Value) -> bool {
    v.get("node_of_rank").is_some()
}

/// A list of phases, or an object with a `phases` list.
fn read_phases(path: &Path) -> Result<Vec<Phase>, CliError> {
    let mut value = read_json(path)?;
    if let Some(inner) = value.get_mut("phases") {
        value = inner.take();
    }
    let phases: Vec<Phase> = serde_json::from_value(value)
        .map_err(|e| CliError::Input(format!("{}: not a list of phases: {e}", path.display())))?;
    if phases.is_empty() {
        return Err(CliError::Input(format!(
            "{}: the list of phases is empty",
            path.display()
        )));
    }
    Ok(phases)
}

#[cfg(test)]
mod tests;
