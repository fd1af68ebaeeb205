//! `tracelogic match`: search a given communication pattern approximately (thesis §4.5).

use crate::common::{load_trace, print_json, seconds, set_stage, table, CliError, CliResult};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_analysis::patterns::templates::{wavefront, Corner};
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
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "wavefront",
        conflicts_with = "wavefront"
    )]
    pub pattern: Option<PathBuf>,
    /// Instead of a file: one wavefront sweep over a COLSxROWS grid numbered row-major, from a
    /// corner (tl, tr, bl, br; default tl), receives and sends west/east before north/south
    /// (Table 4.6's order) unless `:vertical` is added, e.g. `4x4:br:vertical`.
    #[arg(long, value_name = "COLSxROWS[:CORNER][:vertical]")]
    pub wavefront: Option<String>,
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

/// Parse `--wavefront COLSxROWS[:CORNER][:vertical]` into the per-rank pattern.
pub fn wavefront_pattern(text: &str) -> Result<BTreeMap<Rank, Vec<String>>, CliError> {
    let bad = |why: &str| CliError::Input(format!("--wavefront `{text}`: {why}"));
    let mut parts = text.split(':');
    let dims = parts.next().unwrap_or("");
    let (c, r) = dims
        .split_once('x')
        .ok_or_else(|| bad("expected COLSxROWS, e.g. 4x2"))?;
    let columns: u32 = c.trim().parse().map_err(|_| bad("bad column count"))?;
    let rows: u32 = r.trim().parse().map_err(|_| bad("bad row count"))?;
    let (mut corner, mut vertical) = (Corner::TopLeft, false);
    for p in parts {
        match p.trim() {
            "tl" => corner = Corner::TopLeft,
            "tr" => corner = Corner::TopRight,
            "bl" => corner = Corner::BottomLeft,
            "br" => corner = Corner::BottomRight,
            "vertical" => vertical = true,
            other => return Err(bad(&format!("unknown option `{other}` (tl, tr, bl, br, vertical)"))),
        }
    }
    wavefront(columns, rows, corner, vertical, None).map_err(|e| bad(&e))
}

/// Run `tracelogic match`.
pub fn run(args: Args) -> CliResult {
    let pattern = match (&args.pattern, &args.wavefront) {
        (Some(path), _) => read_pattern(path)?,
        (None, Some(w)) => wavefront_pattern(w)?,
        (None, None) => return Err(CliError::Input("give --pattern FILE or --wavefront COLSxROWS".into())),
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("tracelogic-match-{}-{name}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p
    }

    fn err(r: Result<BTreeMap<Rank, Vec<String>>, CliError>) -> String {
        match r {
            Err(CliError::Input(m)) => m,
            other => panic!("expected an input error, got {other:?}"),
        }
    }

    #[test]
    fn pattern_files() {
        let ok = write("ok.json", r#"{"id": 3, "events": {"0": ["S1"], "1": ["R0", "S2"]}}"#);
        let p = read_pattern(&ok).unwrap();
        assert_eq!(p[&1], vec!["R0", "S2"]);
        let bare = write("bare.json", r#"{"2": ["S1"]}"#);
        assert_eq!(read_pattern(&bare).unwrap()[&2], vec!["S1"]);
        let bad = write("bad.json", "{\n  \"0\": [\"S1\",,]\n}");
        let m = err(read_pattern(&bad));
        assert!(m.contains("bad.json") && m.contains("line 2"), "{m}");
        let m = err(read_pattern(&write("rank.json", r#"{"zero": ["S1"]}"#)));
        assert!(m.contains("`zero` is not a rank"), "{m}");
        let m = err(read_pattern(&write("num.json", r#"{"0": [1, 2]}"#)));
        assert!(m.contains("rank 0") && m.contains("strings"), "{m}");
        let m = err(read_pattern(&write("empty.json", "{}")));
        assert!(m.contains("names no rank"), "{m}");
        let m = err(read_pattern(&PathBuf::from("/nonexistent/p.json")));
        assert!(m.contains("/nonexistent/p.json"), "{m}");
        for f in [ok, bare, bad] {
            let _ = std::fs::remove_file(f);
        }
    }

    #[test]
    fn wavefront_option() {
        let p = wavefront_pattern("4x2").unwrap();
        assert_eq!(p[&5], vec!["R4", "R1", "S6"]);
        let p = wavefront_pattern("4x2:tl:vertical").unwrap();
        assert_eq!(p[&5], vec!["R1", "R4", "S6"]);
        assert!(err(wavefront_pattern("4by2")).contains("COLSxROWS"));
        assert!(err(wavefront_pattern("4x2:up")).contains("unknown option `up`"));
        assert!(err(wavefront_pattern("0x2")).contains("at least 1x1"));
    }
}
