//! `tracelogic phases`: execution phases by entropic segmentation of the pattern sequence
//! (thesis ch. 5).

use crate::common::{load_trace, print_json, seconds, select, set_stage, table, CliResult, Selected, SelectionArgs};
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside, PhaseAnalysis};
use tracelogic_model::{match_messages, Trace};

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
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// Patterns, then phases (everything but printing); also the number of communication patterns.
fn build(trace: &Trace, strength: f64, outside: Outside) -> (PhaseAnalysis, usize) {
    set_stage("matching messages");
    let matching = match_messages(trace);
    set_stage("detecting patterns");
    let events = rank_events(trace, false);
    let a = analyse_events(trace, &matching, &events, &PatternOptions::default());
    set_stage("segmenting");
    let p = detect_phases(trace, &events, &a.communication, strength, outside);
    (p, a.communication_patterns.len())
}

/// Run `tracelogic phases`.
pub fn run(args: Args) -> CliResult {
    if !args.strength.is_finite() {
        return Err(crate::common::CliError::Input(format!(
            "--strength must be a number, got {}",
            args.strength
        )));
    }
    let (trace, selection) = select(load_trace(&args.paths)?, &args.selection)?;
    let outside = if args.skip_outside { Outside::Skip } else { Outside::Own };
    let (p, patterns) = build(&trace, args.strength, outside);
    if args.json {
        print_json(&Selected {
            report: &p,
            selection: &selection,
        })?;
    } else {
        let mut o = format!(
            "{} pattern occurrences ({} patterns), {} phases at s0 = {}\n",
            p.sequence_length,
            patterns,
            p.phases.len(),
            args.strength
        );
        let rows = p
            .phases
            .iter()
            .map(|ph| {
                let pats: Vec<String> = ph
                    .patterns
                    .iter()
                    .take(4)
                    .map(|(id, n)| match id {
                        Some(id) => format!("#{id}x{n}"),
                        None => format!("outside x{n}"),
                    })
                    .collect();
                let routines: Vec<String> = ph.routines.iter().take(2).map(|r| r.0.clone()).collect();
                vec![
                    ph.start.to_string(),
                    ph.end.to_string(),
                    seconds(ph.time.0),
                    seconds(ph.time.1),
                    seconds(ph.extent.1),
                    pats.join(" "),
                    routines.join(" "),
                ]
            })
            .collect();
        o += &table(
            &["start", "end", "from s", "to s", "last ends s", "patterns", "routines"],
            rows,
            &[0, 1, 2, 3, 4],
        );
        o += &skew_note(&p);
        crate::common::emit(|out| out.write_all(o.as_bytes()))?;
    }
    Ok(if p.sequence_length == 0 {
        eprintln!("tracelogic: no phases: the trace has no communication to build a pattern sequence from");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Why a phase's last occurrence can end after the next phase began: said once under the
/// table, with how many phases and by how much, so the overlap reads as rank skew, not as
/// phases out of order. Empty when no phase reaches past its interval.
fn skew_note(p: &PhaseAnalysis) -> String {
    let over: Vec<u64> = p
        .phases
        .iter()
        .map(|ph| ph.extent.1.saturating_sub(ph.time.1))
        .filter(|&d| d > 0)
        .collect();
    match over.iter().max() {
        None => String::new(),
        Some(&most) => format!(
            "from/to: the phases follow one another (each begins with its first pattern occurrence on any rank). \
             Ranks reach a phase at different times, so in {} of {} phases the last occurrence ends \
             ('last ends') after the next phase has begun on another rank, by up to {} s.\n",
            over.len(),
            p.phases.len(),
            seconds(most)
        ),
    }
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
        let trace = generate(&spec).unwrap();
        let (p, patterns) = build(&trace, 0.0, Outside::Own);
        assert_eq!(patterns, 2);
        let v = serde_json::to_value(&p).unwrap();
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
