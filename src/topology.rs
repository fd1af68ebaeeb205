//! `tracelogic topology`: identify the communication topology of a run (or of a plain graph or
//! CSV matrix), prove it with a rank → coordinates mapping, and show the elimination stages.

use crate::common::{emit, load_trace, print_json, set_stage, working, CliError, CliResult, SelectionArgs};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tracelogic_engine::matrix::{CommMatrix, Entry};
use tracelogic_engine::topology::{
    edgelist, graph_edge_list, of_graph, of_matrix, verdict, CustomPattern, Graph, SpectrumDisplay, Threshold,
    TopologyOptions, TopologyReport,
};

/// Parse `--threshold`: `auto` or a percentage (`5`, `5%`); shared by `topology` and `logical`.
pub(crate) fn threshold_arg(text: &str) -> Result<Threshold, String> {
    if text.trim().eq_ignore_ascii_case("auto") {
        return Ok(Threshold::Auto);
    }
    let v: f64 = text
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("`{text}` is neither `auto` nor a percentage"))?;
    if !(0.0..=100.0).contains(&v) {
        return Err(format!("threshold {v} is outside 0-100 %"));
    }
    Ok(Threshold::Percent(v))
}

/// Parse `--spectrum`: `auto`, `always` or `never`.
fn spectrum_arg(text: &str) -> Result<SpectrumDisplay, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "auto" => Ok(SpectrumDisplay::Auto),
        "always" => Ok(SpectrumDisplay::Always),
        "never" => Ok(SpectrumDisplay::Never),
        _ => Err(format!("`{text}`: use auto, always or never")),
    }
}

/// Arguments of `tracelogic topology`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required_unless_present_any = ["graph", "matrix"], conflicts_with_all = ["graph", "matrix"])]
    pub paths: Vec<PathBuf>,
    /// Filtering: `auto` (widest gap in the sorted pair volumes) or a percentage of the largest
    /// matrix entry (the paper used 5).
    #[arg(long, default_value = "auto", value_parser = threshold_arg)]
    pub threshold: Threshold,
    /// A user pattern as an edge list (first line `n m`, then `u v` per line, 0-based); may be
    /// repeated. A graph saved with --save-graph is such a file.
    #[arg(long = "library", value_name = "FILE")]
    pub library: Vec<PathBuf>,
    /// Identify this edge list instead of a trace (no filtering).
    #[arg(long, value_name = "FILE", conflicts_with = "matrix")]
    pub graph: Option<PathBuf>,
    /// Identify this CSV communication matrix instead of a trace (`n` rows of `n` numbers, row =
    /// sender; an optional header line and a leading label column, as `matrix --csv` writes), or
    /// the sparse list `matrix --csv --sparse` writes (header `from,to,bytes,...`; its `ranks`
    /// column gives the rank count).
    #[arg(long, value_name = "FILE")]
    pub matrix: Option<PathBuf>,
    /// Save the filtered communication graph as an edge list, to use with --library later.
    #[arg(long, value_name = "FILE")]
    pub save_graph: Option<PathBuf>,
    /// Step budget of each isomorphism search (default: 32 million + 256 per rank).
    #[arg(long)]
    pub max_steps: Option<u64>,
    /// Adjacency eigenvalues for the spectrum plot: `auto` (up to 128 ranks), `always` (up to
    /// 512 ranks) or `never`. Elimination does not need them once one candidate is left.
    #[arg(long, default_value = "auto", value_parser = spectrum_arg)]
    pub spectrum: SpectrumDisplay,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

fn read_text(path: &Path, what: &str) -> Result<String, CliError> {
    let bytes =
        std::fs::read(path).map_err(|e| CliError::Input(format!("cannot read {what} {}: {e}", path.display())))?;
    String::from_utf8(bytes).map_err(|e| {
        CliError::Input(format!(
            "{what} {}: not UTF-8 text (byte offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

fn read_graph(path: &Path) -> Result<Graph, CliError> {
    let text = read_text(path, "edge list")?;
    edgelist::parse(&text, &path.display().to_string()).map_err(CliError::Input)
}

/// Most ranks a sparse CSV matrix may name (its offsets take 8 bytes per rank): a one-line file
/// naming rank 4,294,967,295 must not allocate 32 GiB.
const MAX_SPARSE_CSV_RANKS: u64 = 1 << 22;

/// Parse a CSV matrix: optional header (first field not a number), optional label column; or,
/// when the header starts `from,to,bytes`, the sparse list of `matrix --csv --sparse`.
pub fn parse_csv_matrix(text: &str, source: &str) -> Result<CommMatrix, String> {
    let header = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    if header.is_some_and(|h| h.replace(' ', "").starts_with("from,to,bytes")) {
        return parse_sparse_csv_matrix(text, source);
    }
    let mut rows: Vec<Vec<u64>> = Vec::new();
    let mut first = true;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if first && fields[0].parse::<f64>().is_err() {
            first = false;
            continue;
        }
        first = false;
        let values = fields
            .iter()
            .map(|f| {
                f.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .map(|v| v.round() as u64)
                    .ok_or_else(|| format!("{source}: line {}: `{f}` is not a non-negative number", i + 1))
            })
            .collect::<Result<Vec<u64>, String>>()?;
        rows.push(values);
        if rows.len() > 1 << 16 {
            return Err(format!("{source}: more than 65536 rows"));
        }
    }
    let n = rows.len();
    if n == 0 {
        return Err(format!("{source}: no matrix rows"));
    }
    let width = rows[0].len();
    if width != n && width != n + 1 {
        return Err(format!(
            "{source}: {n} rows of {width} values; a {n}-row matrix needs {n} values per row (or {} with a label)",
            n + 1
        ));
    }
    let mut entries = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        if row.len() != width {
            return Err(format!("{source}: row {r} has {} values, row 0 has {width}", row.len()));
        }
        entries.extend(
            row[width - n..]
                .iter()
                .enumerate()
                .filter(|(_, &b)| b > 0)
                .map(|(c, &b)| Entry {
                    from: r as u32,
                    to: c as u32,
                    bytes: b,
                    messages: 1,
                }),
        );
    }
    CommMatrix::from_entries(n as u32, entries).map_err(|e| format!("{source}: {e}"))
}

/// The sparse list `from,to,bytes,messages,kept,ranks` (`messages`, `kept` and `ranks`
/// optional, found by their header names; `kept` is ignored, the topology filters by its own
/// rule). `ranks`, which `matrix --csv --sparse` repeats on every line, is the run's rank count:
/// every line must give the same one and name ranks below it. Without that column (files written
/// before it existed) the run has as many ranks as the largest rank named plus one, so ranks
/// after the last one with traffic are not known.
fn parse_sparse_csv_matrix(text: &str, source: &str) -> Result<CommMatrix, String> {
    let mut entries = Vec::new();
    let mut named = 0u64;
    // The declared rank count and the line that first gave it.
    let mut declared: Option<(u64, usize)> = None;
    let mut columns: Option<(Option<usize>, Option<usize>)> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let Some((messages_at, ranks_at)) = columns else {
            let at = |name: &str| fields.iter().position(|f| f.eq_ignore_ascii_case(name));
            columns = Some((at("messages"), at("ranks")));
            continue;
        };
        let number = |k: usize, what: &str| -> Result<u64, String> {
            let f = fields
                .get(k)
                .ok_or_else(|| format!("{source}: line {}: no {what} (field {})", i + 1, k + 1))?;
            f.parse::<u64>()
                .map_err(|_| format!("{source}: line {}: {what} `{f}` is not a non-negative integer", i + 1))
        };
        let (from, to, bytes) = (number(0, "sender")?, number(1, "receiver")?, number(2, "bytes")?);
        let messages = match messages_at {
            Some(k) => number(k, "messages")?,
            None => u64::from(bytes > 0),
        };
        if let Some(k) = ranks_at {
            let ranks = number(k, "rank count")?;
            if ranks > MAX_SPARSE_CSV_RANKS {
                return Err(format!(
                    "{source}: line {}: rank count {ranks} is beyond the {MAX_SPARSE_CSV_RANKS} ranks a matrix file may name",
                    i + 1
                ));
            }
            match declared {
                None => declared = Some((ranks, i + 1)),
                Some((first, at)) if first != ranks => {
                    return Err(format!(
                        "{source}: line {}: rank count {ranks} differs from the {first} of line {at}",
                        i + 1
                    ))
                }
                Some(_) => {}
            }
            if from.max(to) >= ranks {
                return Err(format!(
                    "{source}: line {}: rank {} is outside the {ranks} ranks the file declares",
                    i + 1,
                    from.max(to)
                ));
            }
        }
        named = named.max(from.max(to).saturating_add(1));
        if named > MAX_SPARSE_CSV_RANKS {
            return Err(format!(
                "{source}: line {}: rank {} is beyond the {MAX_SPARSE_CSV_RANKS} ranks a matrix file may name",
                i + 1,
                from.max(to)
            ));
        }
        entries.push(Entry {
            from: from as u32,
            to: to as u32,
            bytes,
            messages,
        });
    }
    if entries.is_empty() {
        return Err(format!("{source}: no matrix entries"));
    }
    let ranks = declared.map_or(named, |(ranks, _)| ranks);
    CommMatrix::from_entries(ranks as u32, entries).map_err(|e| format!("{source}: {e}"))
}

/// The identification options of `args` (the pattern library read from its files).
pub fn options(args: &Args) -> Result<TopologyOptions, CliError> {
    let mut library = Vec::new();
    for path in &args.library {
        library.push(CustomPattern {
            name: path
                .file_name()
                .map_or_else(|| path.display().to_string(), |f| f.to_string_lossy().into()),
            graph: read_graph(path)?,
        });
    }
    Ok(TopologyOptions {
        threshold: args.threshold,
        library,
        max_steps: args.max_steps,
        spectrum: args.spectrum,
        ..TopologyOptions::default()
    })
}

/// Run `tracelogic topology`.
pub fn run(args: Args) -> CliResult {
    let opts = options(&args)?;
    let report = if let Some(path) = &args.graph {
        let g = read_graph(path)?;
        set_stage("identifying the topology");
        of_graph(&g, &opts)
    } else if let Some(path) = &args.matrix {
        let text = read_text(path, "matrix")?;
        let matrix = parse_csv_matrix(&text, &path.display().to_string()).map_err(CliError::Input)?;
        set_stage("identifying the topology");
        of_matrix(&matrix, &opts)
    } else {
        let (engine, selection) = args.selection.engine(load_trace(&args.paths)?)?;
        if let Some(why) = engine.past_the_end(&selection) {
            eprintln!(
                "tracelogic: note: the selection keeps no MPI call of {} ({why})",
                engine.trace().source
            );
        }
        working("identifying the topology", || engine.topology(&selection, &opts))?
    };
    finish(&args, report)
}

/// Save the graph if asked, print the report, and say why when nothing matched.
pub fn finish(args: &Args, report: TopologyReport) -> CliResult {
    if let Some(path) = &args.save_graph {
        std::fs::write(path, graph_edge_list(&report))
            .map_err(|e| CliError::Input(format!("cannot write {}: {e}", path.display())))?;
    }
    if args.json {
        print_json(&report)?;
    } else {
        let text = crate::print::topology::text(&report);
        emit(|w| w.write_all(text.as_bytes()))?;
    }
    let verdict = verdict(&report);
    if let Some(why) = &verdict.why_not {
        eprintln!("tracelogic: {why}");
    }
    Ok(if verdict.found {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_engine::matrix::Metric;

    #[test]
    fn threshold_accepts_auto_and_percentages() {
        assert_eq!(threshold_arg("auto").unwrap(), Threshold::Auto);
        assert_eq!(threshold_arg("5").unwrap(), Threshold::Percent(5.0));
        assert_eq!(threshold_arg("2.5%").unwrap(), Threshold::Percent(2.5));
        assert!(threshold_arg("150").is_err());
        assert!(threshold_arg("five").unwrap_err().contains("five"));
    }

    #[test]
    fn csv_matrix_with_header_and_labels_as_matrix_writes_it() {
        let m = parse_csv_matrix("sender,0,1,2\n0,0,3000,10\n1,0,0,3000\n2,3000,0,0\n", "m.csv").unwrap();
        assert_eq!(m.ranks(), 3);
        assert_eq!(
            m.dense_rows(Metric::Bytes).concat(),
            vec![0, 3000, 10, 0, 0, 3000, 3000, 0, 0]
        );
        assert_eq!(m.nonzero(), 4);
        let plain = parse_csv_matrix("0,1\n1,0\n", "p.csv").unwrap();
        assert_eq!(plain.dense_rows(Metric::Bytes).concat(), vec![0, 1, 1, 0]);
    }

    #[test]
    fn sparse_csv_matrix_as_matrix_csv_sparse_writes_it() {
        let text = "from,to,bytes,messages,kept\n0,1,3000,3,1\n0,2,10,1,0\n1,2,3000,3,1\n2,0,3000,3,1\n";
        let m = parse_csv_matrix(text, "s.csv").unwrap();
        let grid = parse_csv_matrix("sender,0,1,2\n0,0,3000,10\n1,0,0,3000\n2,3000,0,0\n", "m.csv").unwrap();
        assert_eq!(m.dense_rows(Metric::Bytes), grid.dense_rows(Metric::Bytes));
        assert_eq!(m.value(Metric::Messages, 0, 1), 3);
        let report = of_matrix(&m, &TopologyOptions::default());
        assert_eq!(report.edges, of_matrix(&grid, &TopologyOptions::default()).edges);
        let e = parse_csv_matrix("from,to,bytes\n0,1,5\n1,x,5\n", "s.csv").unwrap_err();
        assert!(e.contains("s.csv: line 3") && e.contains("`x`"), "{e}");
        let e = parse_csv_matrix("from,to,bytes\n4294967295,0,1\n", "s.csv").unwrap_err();
        assert!(e.contains("line 2") && e.contains("4294967295"), "{e}");
        let e = parse_csv_matrix("from,to,bytes\n0,18446744073709551615,1\n", "s.csv").unwrap_err();
        assert!(e.contains("line 2") && e.contains("18446744073709551615"), "{e}");
        let e = parse_csv_matrix("from,to,bytes\n0,1\n", "s.csv").unwrap_err();
        assert!(e.contains("no bytes"), "{e}");
        assert!(parse_csv_matrix("from,to,bytes\n", "s.csv")
            .unwrap_err()
            .contains("no matrix entries"));
    }

    /// A 4-rank ring in a run of 6 ranks: ranks 4 and 5 send and receive nothing, and only the
    /// `ranks` column says they exist.
    #[test]
    fn sparse_csv_rank_count_keeps_idle_trailing_ranks() {
        let ring = "0,1,64,1,1,6\n1,2,64,1,1,6\n2,3,64,1,1,6\n3,0,64,1,1,6\n";
        let m = parse_csv_matrix(&format!("from,to,bytes,messages,kept,ranks\n{ring}"), "r.csv").unwrap();
        assert_eq!((m.ranks(), m.nonzero()), (6, 4));
        assert_eq!(m.value(Metric::Bytes, 3, 0), 64);
        let report = of_matrix(&m, &TopologyOptions::default());
        assert_eq!(report.identification.ranks, 6);
        assert_eq!(report.isolated_ranks, vec![4, 5]);
        // Without the column (files written before it), the count is the largest rank plus one.
        let old = "from,to,bytes,messages,kept\n0,1,64,1,1\n1,2,64,1,1\n2,3,64,1,1\n3,0,64,1,1\n";
        assert_eq!(parse_csv_matrix(old, "old.csv").unwrap().ranks(), 4);
        // Columns are found by name, so `ranks` may come before `messages`.
        let moved = parse_csv_matrix("from,to,bytes,ranks,messages\n0,1,64,3,2\n", "m.csv").unwrap();
        assert_eq!((moved.ranks(), moved.value(Metric::Messages, 0, 1)), (3, 2));
    }

    #[test]
    fn sparse_csv_hostile_rank_counts_name_file_and_line() {
        let header = "from,to,bytes,messages,kept,ranks\n";
        let parse = |body: &str| parse_csv_matrix(&format!("{header}{body}"), "h.csv").unwrap_err();
        let e = parse("0,1,64,1,1,4\n1,0,64,1,1,4194305\n");
        assert!(
            e.contains("h.csv: line 3") && e.contains("rank count 4194305") && e.contains("4194304"),
            "{e}"
        );
        let e = parse("0,1,64,1,1,18446744073709551615\n");
        assert!(e.contains("h.csv: line 2") && e.contains("beyond"), "{e}");
        let e = parse("0,1,64,1,1,-4\n");
        assert!(e.contains("h.csv: line 2") && e.contains("rank count `-4`"), "{e}");
        let e = parse("0,1,64,1,1,4\n# comment\n1,0,64,1,1,5\n");
        assert!(
            e.contains("h.csv: line 4") && e.contains("rank count 5 differs from the 4 of line 2"),
            "{e}"
        );
        let e = parse("0,1,64,1,1,4\n1,4,64,1,1,4\n");
        assert!(
            e.contains("h.csv: line 3") && e.contains("rank 4 is outside the 4 ranks"),
            "{e}"
        );
        let e = parse("0,1,64,1,1,0\n");
        assert!(e.contains("line 2") && e.contains("outside the 0 ranks"), "{e}");
        let e = parse("0,1,64,1,1\n");
        assert!(e.contains("line 2") && e.contains("no rank count (field 6)"), "{e}");
        let e = parse("0,1,64,1,1,\n");
        assert!(e.contains("line 2") && e.contains("rank count ``"), "{e}");
    }

    /// Every truncation of a sparse list, and every byte of it replaced by a separator, a sign,
    /// a large digit, a line break or a letter, is read or refused with the file named: never a
    /// panic (debug builds check arithmetic overflow).
    #[test]
    fn sparse_csv_truncated_or_mangled_is_read_or_refused() {
        let text = "from,to,bytes,messages,kept,ranks\n0,1,64,1,1,6\n5,0,9,2,0,6\n";
        let check = |t: &str| {
            if let Err(e) = parse_csv_matrix(t, "m.csv") {
                assert!(e.starts_with("m.csv: "), "{t:?}: {e}");
            }
        };
        for end in 0..=text.len() {
            check(&text[..end]);
        }
        for at in 0..text.len() {
            for with in [",", "-", "9", "99999999999999999999", "\n", "x", ""] {
                check(&format!("{}{with}{}", &text[..at], &text[at + 1..]));
            }
        }
    }

    #[test]
    fn csv_matrix_errors_name_file_and_line() {
        let e = parse_csv_matrix("0,1\n1,x\n", "bad.csv").unwrap_err();
        assert!(e.contains("bad.csv") && e.contains("line 2"), "{e}");
        let e = parse_csv_matrix("0,1,2\n1,0\n", "ragged.csv").unwrap_err();
        assert!(e.contains("ragged.csv") && e.contains("row 1"), "{e}");
        let e = parse_csv_matrix("0,1,2,3\n1,0,2,3\n", "wide.csv").unwrap_err();
        assert!(e.contains("wide.csv") && e.contains("2 rows of 4 values"), "{e}");
        assert!(parse_csv_matrix("", "empty.csv")
            .unwrap_err()
            .contains("no matrix rows"));
        assert!(parse_csv_matrix("0,-1\n1,0\n", "neg.csv").is_err());
    }
}
