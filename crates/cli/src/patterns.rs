//! `tracelogic patterns`: per-rank repeats and communication patterns (thesis ch. 4).

use crate::common::{load_trace, print_json, select, set_stage, table, CliResult, Selected, SelectionArgs};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_analysis::patterns::{
    analyse_events, rank_events, CommunicationPattern, PatternOptions, RoutineComparison,
};
use tracelogic_model::{match_messages, Rank, Trace};

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
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// One per-rank pattern as printed.
#[derive(Serialize)]
struct RankPatternOut {
    sequence: Vec<String>,
    compact: String,
    frequency: usize,
    positions: Vec<u32>,
}

/// The JSON document of `tracelogic patterns`.
#[derive(Serialize)]
struct Report {
    events: u64,
    events_in_patterns: u64,
    communication_patterns: Vec<CommunicationPattern>,
    rank_patterns: BTreeMap<Rank, Vec<RankPatternOut>>,
    routine_comparison: Option<RoutineComparison>,
}

fn options(args: &Args) -> PatternOptions {
    PatternOptions {
        tandem: !args.no_tandem,
        with_envelope: args.with_envelope,
        min_length: args.min_length.max(2),
        routines: !args.no_routines,
    }
}

/// Detect and shape the report (everything but printing).
fn build(trace: &Trace, opts: &PatternOptions) -> Report {
    set_stage("matching messages");
    let matching = match_messages(trace);
    set_stage("detecting patterns");
    let events = rank_events(trace, opts.with_envelope);
    let a = analyse_events(trace, &matching, &events, opts);
    let rank_patterns = a
        .rank_patterns
        .iter()
        .map(|(&r, ps)| {
            let v = ps
                .iter()
                .map(|p| RankPatternOut {
                    sequence: p.sequence.clone(),
                    compact: p.compact.clone(),
                    frequency: p.frequency,
                    positions: p.positions.clone(),
                })
                .collect();
            (r, v)
        })
        .collect();
    Report {
        events: a.events,
        events_in_patterns: a.events_in_patterns,
        communication_patterns: a.communication_patterns,
        rank_patterns,
        routine_comparison: a.routine_comparison,
    }
}

/// Run `tracelogic patterns`.
pub fn run(args: Args) -> CliResult {
    let (trace, selection) = select(load_trace(&args.paths)?, &args.selection)?;
    let mut report = build(&trace, &options(&args));
    report.rank_patterns.retain(|&r, _| selection.selects_rank(&trace, r));
    if args.json {
        print_json(&Selected {
            report: &report,
            selection: &selection,
        })?;
    } else {
        crate::common::emit(|out| out.write_all(human(&report).as_bytes()))?;
    }
    Ok(
        if report.communication_patterns.is_empty() && report.rank_patterns.values().all(Vec::is_empty) {
            eprintln!(
                "tracelogic: nothing repeats in {}: no rank's events contain a repeat",
                trace.source
            );
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    )
}

fn human(r: &Report) -> String {
    let mut o = format!(
        "{} events, {} inside per-rank pattern occurrences; {} communication patterns\n",
        r.events,
        r.events_in_patterns,
        r.communication_patterns.len()
    );
    let rows = r
        .communication_patterns
        .iter()
        .take(30)
        .map(|p| {
            let n: usize = p.events.values().map(Vec::len).sum();
            vec![
                p.id.to_string(),
                p.occurrences.to_string(),
                p.ranks.len().to_string(),
                n.to_string(),
                crate::common::seconds(p.positions.first().copied().unwrap_or(0)),
            ]
        })
        .collect();
    o += &table(
        &["pattern", "occurrences", "ranks", "events", "first at s"],
        rows,
        &[0, 1, 2, 3, 4],
    );
    o += "per-rank patterns (most frequent first)\n";
    let mut rows = Vec::new();
    for (rank, ps) in &r.rank_patterns {
        for p in ps.iter().take(5) {
            let mut text = p.compact.clone();
            if text.len() > 60 {
                text.truncate(57);
                text += "...";
            }
            rows.push(vec![rank.to_string(), p.frequency.to_string(), text]);
        }
    }
    o += &table(&["rank", "frequency", "first occurrence"], rows, &[0, 1]);
    if let Some(c) = &r.routine_comparison {
        o += &format!(
            "routine-directed: {} patterns, syntactic {}, common {} (precision {:.0} %, recall {:.0} %)\n",
            c.routine_directed,
            c.syntactic,
            c.common,
            100.0 * c.precision,
            100.0 * c.recall
        );
    }
    o
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
        let trace = generate(&spec).unwrap();
        let v = serde_json::to_value(build(&trace, &PatternOptions::default())).unwrap();
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
        let text = human(&build(&trace, &PatternOptions::default()));
        // 16 ranks x 8 events x 7 iterations, all inside the loop body.
        assert!(text.starts_with("896 events, 896 inside"), "{text}");
    }
}
