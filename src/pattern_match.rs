//! `tracelogic match`: search a given communication pattern approximately (thesis §4.5).

use crate::common::{load_trace, narrowed, working, CliError, CliResult, SelectionArgs};
use crate::topology::threshold_arg;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_engine::patterns::{parse_pattern_file, wavefront, Corner, PatternFile, SearchRequest};
use tracelogic_engine::topology::Threshold;
use tracelogic_engine::{Engine, FieldWords};
use tracelogic_model::{Rank, Selection};
use tracelogic_synth::TopologySpec;

/// Arguments of `tracelogic match`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// JSON file with the pattern: `{"events": {"0": ["S1", "S2"], "1": ["R0"]}}` (an element
    /// of `communication_patterns` from `tracelogic patterns --json` works as is). With
    /// `"topology": "grid:3x3"` the ranks are those of that small grid and the pattern is
    /// extrapolated to the run's identified topology.
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "wavefront",
        conflicts_with = "wavefront"
    )]
    pub pattern: Option<PathBuf>,
    /// Instead of a file: one wavefront sweep over a COLSxROWS grid (placed as the logical trace
    /// places the run, else numbered row-major), from a corner (tl, tr, bl, br; default tl), receives and sends west/east before north/south
    /// (Table 4.6's order) unless `:vertical` is added, e.g. `4x4:br:vertical`.
    #[arg(long, value_name = "COLSxROWS[:CORNER][:vertical]")]
    pub wavefront: Option<String>,
    /// Edits (insertions, deletions, substitutions) allowed per rank.
    #[arg(long, default_value_t = 0)]
    pub max_edits: u32,
    /// The pattern is written for this small Cartesian topology (e.g. `grid:3x3`, rank r =
    /// node r row-major); overrides the file's `topology`. The pattern is extrapolated to the
    /// run's identified topology.
    #[arg(long, value_name = "FAMILY:DIMS", conflicts_with = "wavefront")]
    pub pattern_topology: Option<String>,
    /// Traffic threshold of the run's topology identification when extrapolating: `auto` or a
    /// percentage of the heaviest pair.
    #[arg(long, default_value = "auto", value_parser = threshold_arg)]
    pub threshold: Threshold,
    /// Include tag and size in the symbols (the pattern must use the same spelling).
    #[arg(long)]
    pub with_envelope: bool,
    /// Which part of the trace to search.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

/// Reads a pattern file (see [`parse_pattern_file`]); errors name the file.
pub fn read_pattern_file(path: &PathBuf) -> Result<PatternFile, CliError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| CliError::Input(format!("cannot read {shown}: {e}")))?;
    parse_pattern_file(&text).map_err(|e| CliError::Input(format!("{shown}: {e}")))
}

/// Parse `--wavefront COLSxROWS[:CORNER][:vertical]` into the per-rank pattern, the grid's nodes
/// played by the ranks `rank_of_node` gives (row-major ranks when `None`).
pub fn wavefront_pattern(text: &str, rank_of_node: Option<&[Rank]>) -> Result<BTreeMap<Rank, Vec<String>>, CliError> {
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
    wavefront(columns, rows, corner, vertical, rank_of_node).map_err(|e| bad(&e))
}

/// The `--wavefront` grid's columns and rows.
fn wavefront_dims(wavefront: &str) -> Option<(u32, u32)> {
    let dims = wavefront.split(':').next()?;
    let (c, r) = dims.split_once('x')?;
    Some((c.trim().parse().ok()?, r.trim().parse().ok()?))
}

/// Run `tracelogic match`.
pub fn run(args: Args) -> CliResult {
    let mut file = match (&args.pattern, &args.wavefront) {
        (Some(path), _) => read_pattern_file(path)?,
        (None, Some(w)) => PatternFile {
            events: wavefront_pattern(w, None)?,
            topology: None,
        },
        (None, None) => return Err(CliError::Input("give --pattern FILE or --wavefront COLSxROWS".into())),
    };
    if let Some(t) = &args.pattern_topology {
        file.topology = Some(TopologySpec::parse(t).map_err(|e| CliError::Input(format!("--pattern-topology: {e}")))?);
    }
    let name = args
        .pattern
        .as_ref()
        .map_or_else(|| "the pattern".to_owned(), |p| p.display().to_string());
    let mut trace = load_trace(&args.paths)?;
    if let Some(w) = &args.wavefront {
        // The grid is placed as the logical trace places the whole run.
        let engine = Engine::new(trace, FieldWords::Flags);
        let ranks = wavefront_dims(w).and_then(|(c, r)| engine.grid_ranks(c, r, args.threshold));
        match ranks {
            Some(rank_of_node) => file.events = wavefront_pattern(w, Some(&rank_of_node))?,
            None => eprintln!(
                "tracelogic: note: --wavefront takes the ranks as numbered row-major: the run is not placed as that grid (see `tracelogic logical`)"
            ),
        }
        trace = engine.into_trace();
    }
    let engine = narrowed(trace, &args.selection)?;
    let request = SearchRequest {
        pattern: file,
        name,
        max_edits: args.max_edits,
        threshold: args.threshold,
        with_envelope: args.with_envelope,
    };
    let report = working("searching the pattern", || {
        engine.pattern_search(&Selection::all(), &request)
    })?;
    crate::print::pattern_match::print(&report, args.json)?;
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

    fn read_pattern(path: &PathBuf) -> Result<BTreeMap<Rank, Vec<String>>, CliError> {
        read_pattern_file(path).map(|p| p.events)
    }

    #[test]
    fn pattern_files_with_a_topology() {
        let ok = write("topo.json", r#"{"topology": "grid:3x3", "events": {"4": ["S5"]}}"#);
        let p = read_pattern_file(&ok).unwrap();
        assert_eq!(p.topology.unwrap().dims, vec![3, 3]);
        assert_eq!(p.events[&4], vec!["S5"]);
        let top = write("topo-top.json", r#"{"topology": "torus:4x4", "0": ["S1"]}"#);
        let p = read_pattern_file(&top).unwrap();
        assert_eq!(p.events.keys().collect::<Vec<_>>(), vec![&0]);
        let m = match read_pattern_file(&write("topo-bad.json", r#"{"topology": "grid:3y3", "0": ["S1"]}"#)) {
            Err(CliError::Input(m)) => m,
            other => panic!("{other:?}"),
        };
        assert!(m.contains("topo-bad.json") && m.contains("bad dimension"), "{m}");
        let m = match read_pattern_file(&write("topo-num.json", r#"{"topology": 9, "0": ["S1"]}"#)) {
            Err(CliError::Input(m)) => m,
            other => panic!("{other:?}"),
        };
        assert!(m.contains("must be a string"), "{m}");
        for f in ["topo.json", "topo-top.json", "topo-bad.json", "topo-num.json"] {
            let _ = std::fs::remove_file(write(f, ""));
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
        let p = wavefront_pattern("4x2", None).unwrap();
        assert_eq!(p[&5], vec!["R4", "R1", "S6"]);
        let p = wavefront_pattern("4x2:tl:vertical", None).unwrap();
        assert_eq!(p[&5], vec!["R1", "R4", "S6"]);
        assert!(err(wavefront_pattern("4by2", None)).contains("COLSxROWS"));
        assert!(err(wavefront_pattern("4x2:up", None)).contains("unknown option `up`"));
        assert!(err(wavefront_pattern("0x2", None)).contains("at least 1x1"));
    }
}
