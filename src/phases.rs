//! `tracelogic phases`: execution phases by entropic segmentation of the pattern sequence
//! (thesis ch. 5).

use crate::common::{load_narrowed, working, CliResult, SelectionArgs};
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_engine::phases::{Outside, PhaseOptions};
use tracelogic_model::Selection;

/// Arguments of `tracelogic phases`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Segmentation strength threshold s0: a segment is cut only when its strength exceeds it
    /// (0 = the BIC criterion; larger = fewer, coarser phases).
    #[arg(long, default_value_t = 0.0)]
    pub strength: f64,
    /// Leave communication outside any pattern out of the sequence (default: one shared symbol).
    #[arg(long)]
    pub skip_outside: bool,
    /// Significance level α of a phase boundary: a cut is kept, and neighbouring segments stay
    /// apart, only when their mixes of communication differ at this level (1 = the thesis'
    /// leaves).
    #[arg(long, default_value_t = tracelogic_engine::phases::SIGNIFICANCE)]
    pub significance: f64,
    /// Resolution of the phases as a share of the run: the run is cut into windows of this share
    /// of its time, and a set-up or end split off the main loop holds less than this share of
    /// the events (0 = every significant change between occurrences; docs/phases.md).
    #[arg(long, default_value_t = tracelogic_engine::phases::MIN_SHARE)]
    pub min_share: f64,
    /// Show the thesis' leaves, not merged (the same as `--significance 1`).
    #[arg(long)]
    pub leaves: bool,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// Run `tracelogic phases`.
pub fn run(args: Args) -> CliResult {
    if !args.strength.is_finite() {
        return Err(crate::common::CliError::Input(format!(
            "--strength must be a number, got {}",
            args.strength
        )));
    }
    tracelogic_engine::phases::check_strength(args.strength)?;
    let significance = if args.leaves { 1.0 } else { args.significance };
    tracelogic_engine::phases::check_significance(significance)?;
    tracelogic_engine::phases::check_min_share(args.min_share)?;
    let engine = load_narrowed(&args.paths, &args.selection)?;
    let outside = if args.skip_outside { Outside::Skip } else { Outside::Own };
    let options = PhaseOptions {
        strength: args.strength,
        outside,
        significance,
        min_share: args.min_share,
        ..PhaseOptions::default()
    };
    let report = working("detecting patterns and segmenting", || {
        engine.phases_with(&Selection::all(), &options)
    })?;
    crate::print::phases::print(&report, args.json)?;
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
    use tracelogic_synth::{generate, Phase, Spec, Style, TopologySpec};

    /// The JSON contract of docs/cli.md: two generated phases (torus exchange x30, ring x40).
    #[test]
    fn json_contract() {
        let phase = |t: &str, style, iterations| Phase {
            topology: Some(TopologySpec::parse(t).unwrap()),
            iterations: Some(iterations),
            style: Some(style),
            ..Default::default()
        };
        let spec = Spec {
            phases: vec![
                phase("torus:4x4", Style::Isend, 30),
                phase("ring:16", Style::Sendrecv, 40),
            ],
            ..Default::default()
        };
        let engine = tracelogic_engine::Engine::new(generate(&spec).unwrap(), tracelogic_engine::FieldWords::Flags);
        let report = engine.phases(&Selection::all(), 0.0, Outside::Own).unwrap();
        assert_eq!(report.patterns, 2);
        let v = serde_json::to_value(&report.analysis).unwrap();
        assert_eq!(v["sequence_length"], 70);
        let root = &v["tree"][0];
        for key in ["start", "end", "djs", "cut", "tau", "strength", "parent"] {
            assert!(root.get(key).is_some(), "{key}");
        }
        assert_eq!(root["cut"], 30);
        let phases = v["phases"].as_array().unwrap();
        assert_eq!(phases.len(), 2);
        assert_eq!(
            (phases[1]["start"].clone(), phases[1]["end"].clone()),
            (30.into(), 70.into())
        );
        let t0 = phases[0]["time"][1].as_u64().unwrap();
        let t1 = phases[1]["time"][0].as_u64().unwrap();
        assert_eq!(t0, t1, "phase intervals follow one another");
        for ph in phases {
            let (time, extent) = (&ph["time"], &ph["extent"]);
            assert_eq!(time[0], extent[0]);
            assert!(extent[1].as_u64().unwrap() >= extent[0].as_u64().unwrap());
        }
    }
}
