//! `tracelogic match`: search a given communication pattern approximately (thesis §4.5).

use crate::common::{load_trace, print_json, seconds, set_stage, table, CliError, CliResult};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_analysis::patterns::{rank_events, search_pattern};
use tracelogic_model::{match_messages, Rank};

/// Arguments of `tracelogic match`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// JSON file with the pattern: `{"events": {"0": ["S1", "S2"], "1": ["R0"]}}` (an element
    /// of `communication_patterns` from `tracelogic patterns --json` works as is).
    #[arg(long, value_name = "FILE")]
    pub pattern: PathBuf,
    /// Edits (insertions, deletions, substitutions) allowed per rank.
    #[arg(long, default_value_t = 0)]
    pub max_edits: u32,
    /// Include tag and size in the symbols (the pattern must use the same spelling).
    #[arg(long)]
    pub with_envelope: bool,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

/// Read the pattern file: rank → symbols, under `events` or at the top level.
pub fn read_pattern(path: &PathBuf) -> Result<BTreeMap<Rank, Vec<String>>, CliError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| CliError::Input(format!("cannot read {shown}: {e}")))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        CliError::Input(format!(
            "{shown}: not JSON at line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    let obj = value.get("events").unwrap_or(&value);
    let map = obj
        .as_object()
        .ok_or_else(|| CliError::Input(format!("{shown}: expected an object of rank -> list of events")))?;
    let mut out = BTreeMap::new();
    for (k, v) in map {
        let rank: Rank = k
            .parse()
            .map_err(|_| CliError::Input(format!("{shown}: `{k}` is not a rank number")))?;
        let list = v
            .as_array()
            .ok_or_else(|| CliError::Input(format!("{shown}: rank {k}: expected a list of event symbols")))?;
        let syms = list
            .iter()
            .map(|s| {
                s.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| CliError::Input(format!("{shown}: rank {k}: events must be strings like \"S3\"")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        out.insert(rank, syms);
    }
    if out.is_empty() {
        return Err(CliError::Input(format!("{shown}: the pattern names no rank")));
    }
    Ok(out)
}

/// Run `tracelogic match`.
pub fn run(args: Args) -> CliResult {
    let pattern = read_pattern(&args.pattern)?;
    let trace = load_trace(&args.paths)?;
    set_stage("matching messages");
    let matching = match_messages(&trace);
    set_stage("searching the pattern");
    let events = rank_events(&trace, args.with_envelope);
    let found = search_pattern(&trace, &matching, &events, &pattern, args.max_edits).map_err(CliError::Input)?;
    if args.json {
        print_json(&found)?;
    } else {
        let mut o = format!(
            "{} occurrences across ranks {:?} with at most {} edits per rank\n",
            found.matches.len(),
            pattern.keys().collect::<Vec<_>>(),
            args.max_edits
        );
        let rows = found
            .matches
            .iter()
            .take(30)
            .map(|m| vec![seconds(m.start), seconds(m.end), m.edits.to_string()])
            .collect();
        o += &table(&["start s", "end s", "edits"], rows, &[0, 1, 2]);
        let rows = found
            .rank_matches
            .iter()
            .map(|(r, m)| {
                let st = found.rank_stats[r];
                vec![
                    r.to_string(),
                    m.len().to_string(),
                    st.verified.to_string(),
                    st.windows.to_string(),
                ]
            })
            .collect();
        o += &table(&["rank", "windows matched", "verified", "windows"], rows, &[0, 1, 2, 3]);
        crate::common::emit(|out| out.write_all(o.as_bytes()))?;
    }
    Ok(if found.matches.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
