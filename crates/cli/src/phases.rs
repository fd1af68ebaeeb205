//! `tracelogic phases`: execution phases by entropic segmentation of the pattern sequence
//! (thesis ch. 5).

use crate::common::{load_trace, print_json, seconds, set_stage, table, CliResult};
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside};
use tracelogic_model::match_messages;

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
}

/// Run `tracelogic phases`.
pub fn run(args: Args) -> CliResult {
    let trace = load_trace(&args.paths)?;
    set_stage("matching messages");
    let matching = match_messages(&trace);
    set_stage("detecting patterns");
    let opts = PatternOptions::default();
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &opts);
    set_stage("segmenting");
    let outside = if args.skip_outside { Outside::Skip } else { Outside::Own };
    let p = detect_phases(&trace, &events, &a.communication, args.strength, outside);
    if args.json {
        print_json(&p)?;
    } else {
        let mut o = format!(
            "{} pattern occurrences ({} patterns), {} phases at s0 = {}\n",
            p.sequence_length,
            a.communication_patterns.len(),
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
                    pats.join(" "),
                    routines.join(" "),
                ]
            })
            .collect();
        o += &table(
            &["start", "end", "from s", "to s", "patterns", "routines"],
            rows,
            &[0, 1, 2, 3],
        );
        crate::common::emit(|out| out.write_all(o.as_bytes()))?;
    }
    Ok(if p.sequence_length == 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
