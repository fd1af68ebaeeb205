//! `tracelogic patterns`: per-rank repeats and communication patterns (thesis ch. 4).

use crate::common::{load_narrowed, working, CliResult, SelectionArgs};
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_engine::patterns::PatternOptions;
use tracelogic_model::Selection;

/// Arguments of `tracelogic patterns`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Keep loop counts: a run of copies is not reduced to one copy before detection (exact form).
    #[arg(long)]
    pub no_tandem: bool,
    /// Include tag, size, communicator and root in the event symbols.
    #[arg(long)]
    pub with_envelope: bool,
    /// Shortest per-rank pattern reported, in events (at least 2).
    #[arg(long, default_value_t = 2)]
    pub min_length: u32,
    /// Ignore call paths (no routine-directed detection).
    #[arg(long)]
    pub no_routines: bool,
    /// List every communication pattern (default: those covering at least 1 % of the events).
    #[arg(long)]
    pub all: bool,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

fn options(args: &Args) -> PatternOptions {
    PatternOptions {
        tandem: !args.no_tandem,
        with_envelope: args.with_envelope,
        min_length: args.min_length.max(2),
        routines: !args.no_routines,
    }
}

/// Run `tracelogic patterns`.
pub fn run(args: Args) -> CliResult {
    let engine = load_narrowed(&args.paths, &args.selection)?;
    let report = working("detecting patterns", || {
        engine.patterns(&Selection::all(), &options(&args))
    })?;
    crate::print::patterns::print(&report, args.all, args.json)?;
    Ok(match report.nothing_found() {
        Some(why) => {
            eprintln!("tracelogic: {why}");
            ExitCode::from(1)
        }
        None => ExitCode::SUCCESS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_synth::{generate, Spec, TopologySpec};

    /// The JSON contract of docs/cli.md on a generated 4x4 torus exchange of 7 iterations.
    #[test]
    fn json_contract() {
        let spec = Spec {
            topology: TopologySpec::parse("torus:4x4").unwrap(),
            iterations: 7,
            ..Default::default()
        };
        let engine = tracelogic_engine::Engine::new(generate(&spec).unwrap(), tracelogic_engine::FieldWords::Flags);
        let report = engine.patterns(&Selection::all(), &PatternOptions::default()).unwrap();
        let v = serde_json::to_value(tracelogic_engine::documents::patterns(&report)).unwrap();
        let cp = &v["communication_patterns"][0];
        assert_eq!(cp["ranks"].as_array().unwrap().len(), 16);
        assert_eq!(cp["events"]["0"].as_array().unwrap().len(), 8);
        assert_eq!(cp["occurrences"], 7);
        assert_eq!(cp["positions"].as_array().unwrap().len(), 7);
        let rp = &v["rank_patterns"]["5"][0];
        assert_eq!(rp["frequency"], 7);
        assert_eq!(rp["sequence"].as_array().unwrap().len(), 8);
        assert_eq!(rp["positions"].as_array().unwrap().len(), 7);
        assert!(v["routine_comparison"].is_null());
        let text = crate::print::patterns::text(&report, false);
        // 16 ranks x 8 events x 7 iterations, all inside the loop body.
        assert!(text.starts_with("896 events, 896 inside"), "{text}");
    }
}
