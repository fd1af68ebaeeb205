//! `tracelogic match`: search a given communication pattern approximately (thesis §4.5).

use crate::common::{load_trace, print_json, seconds, set_stage, table, CliError, CliResult, SelectionArgs};
use crate::topology::threshold_arg;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_analysis::patterns::extrapolate::{classify, search_extrapolated, ExtrapolatedSearch};
use tracelogic_analysis::patterns::file::{parse_pattern_file, PatternFile};
use tracelogic_analysis::patterns::templates::{wavefront, Corner};
use tracelogic_analysis::patterns::{rank_events, search_pattern, PatternSearch};
use tracelogic_analysis::topology::Threshold;
use tracelogic_model::{match_messages, Rank};
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

/// The JSON of `tracelogic match`: the search, plus how the pattern was extrapolated.
#[derive(Serialize)]
struct MatchReport<'a> {
    #[serde(flatten)]
    search: &'a PatternSearch,
    #[serde(skip_serializing_if = "Option::is_none")]
    extrapolation: Option<Extrapolation<'a>>,
}

/// [`ExtrapolatedSearch`] without its search (printed beside it).
#[derive(Serialize)]
struct Extrapolation<'a> {
    from_topology: &'a str,
    to_topology: &'a str,
    classes: &'a [tracelogic_analysis::patterns::extrapolate::NeighbourClass],
    orientation_matches: &'a [usize],
    orientation: Option<&'a tracelogic_analysis::patterns::extrapolate::Orientation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    directions_from: Option<&'a tracelogic_analysis::logical::DirectionsFrom>,
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

/// The rank of each node of the `--wavefront` grid as the logical trace places the run (its
/// identified topology, placed the same whatever the rank numbering), when that placement is a
/// grid, torus or stencil of the wavefront's dimensions; `None` (row-major ranks) otherwise.
fn grid_placement(trace: &tracelogic_model::Trace, wavefront: &str, threshold: Threshold) -> Option<Vec<Rank>> {
    let dims = wavefront.split(':').next()?;
    let (c, r) = dims.split_once('x')?;
    let (columns, rows): (u32, u32) = (c.trim().parse().ok()?, r.trim().parse().ok()?);
    let (placement, _) = crate::logical::placement(trace, threshold).ok()?;
    if placement.spec.dims != [columns, rows] || placement.node_of_rank.len() != (columns * rows) as usize {
        return None;
    }
    let mut rank_of_node = vec![Rank::MAX; placement.node_of_rank.len()];
    for (rank, &node) in placement.node_of_rank.iter().enumerate() {
        *rank_of_node.get_mut(node as usize)? = rank as Rank;
    }
    (!rank_of_node.contains(&Rank::MAX)).then_some(rank_of_node)
}

/// Run `tracelogic match`.
pub fn run(args: Args) -> CliResult {
    let file = match (&args.pattern, &args.wavefront) {
        (Some(path), _) => read_pattern_file(path)?,
        (None, Some(w)) => PatternFile {
            events: wavefront_pattern(w, None)?,
            topology: None,
        },
        (None, None) => return Err(CliError::Input("give --pattern FILE or --wavefront COLSxROWS".into())),
    };
    let small_topology = match &args.pattern_topology {
        Some(t) => Some(TopologySpec::parse(t).map_err(|e| CliError::Input(format!("--pattern-topology: {e}")))?),
        None => file.topology.clone(),
    };
    let small = small_topology
        .as_ref()
        .map(|t| {
            let shown = args
                .pattern
                .as_ref()
                .map_or_else(|| "the pattern".to_owned(), |p| p.display().to_string());
            classify(&file.events, t).map_err(|e| CliError::Input(format!("{shown}: {e}")))
        })
        .transpose()?;
    let mut file = file;
    let mut trace = load_trace(&args.paths)?;
    if let Some(w) = &args.wavefront {
        match grid_placement(&trace, w, args.threshold) {
            Some(rank_of_node) => file.events = wavefront_pattern(w, Some(&rank_of_node))?,
            None => eprintln!(
                "tracelogic: note: --wavefront takes the ranks as numbered row-major: the run is not placed as that grid (see `tracelogic logical`)"
            ),
        }
    }
    let selection = args.selection.selection(&trace)?;
    if selection != tracelogic_model::Selection::all() {
        set_stage("selecting");
        trace = trace.into_restricted(&selection);
    }
    if let Some(e) = file.peer_outside(trace.num_ranks()).filter(|_| small.is_none()) {
        let shown = args
            .pattern
            .as_ref()
            .map_or_else(|| "the pattern".to_owned(), |p| p.display().to_string());
        return Err(CliError::Input(format!("{shown}: {e}")));
    }
    set_stage("matching messages");
    let matching = match_messages(&trace);
    let events = rank_events(&trace, args.with_envelope);
    let result: ExtrapolatedSearch = match &small {
        Some(small) => {
            let (placement, from) = crate::logical::placement(&trace, args.threshold)?;
            set_stage("searching the extrapolated pattern");
            let mut search = search_extrapolated(&trace, &matching, &events, small, &placement, args.max_edits)
                .map_err(|e| CliError::Input(format!("{}: {e}", trace.source)))?;
            search.directions_from = Some(from);
            search
        }
        None => {
            set_stage("searching the pattern");
            ExtrapolatedSearch {
                search: search_pattern(&trace, &matching, &events, &file.events, args.max_edits)
                    .map_err(CliError::Input)?,
                ..Default::default()
            }
        }
    };
    let found = &result.search;
    let extrapolation = small.as_ref().map(|_| Extrapolation {
        from_topology: &result.from_topology,
        to_topology: &result.to_topology,
        classes: &result.classes,
        orientation_matches: &result.orientation_matches,
        orientation: result.orientation.as_ref(),
        directions_from: result.directions_from.as_ref(),
    });
    let searched: Vec<Rank> = found.rank_matches.keys().copied().collect();
    if args.json {
        print_json(&MatchReport {
            search: found,
            extrapolation,
        })?;
    } else {
        let mut o = String::new();
        if let Some(x) = &extrapolation {
            o += &format!(
                "pattern for {} extrapolated to the run's {} ({} classes of ranks, {} orientations tried: {:?} occurrences)\n",
                x.from_topology,
                x.to_topology,
                x.classes.len(),
                x.orientation_matches.len(),
                x.orientation_matches
            );
            if let Some(d) = x.directions_from.filter(|d| d.worth_showing()) {
                o += &format!("{}\n", d.reason);
            }
            if let Some(or) = x.orientation {
                let map: Vec<String> = or.directions.iter().map(|(a, b)| format!("{a}->{b}")).collect();
                o += &format!("orientation kept: {}\n", map.join(", "));
            }
        }
        o += &format!(
            "{} occurrences across {} ranks with at most {} edits per rank\n",
            found.matches.len(),
            searched.len(),
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
            .take(64)
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
        eprintln!(
            "tracelogic: the pattern was not found with at most {} edits per rank",
            found.max_edits
        );
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
