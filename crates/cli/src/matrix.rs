//! `tracelogic matrix`: the rank-to-rank communication matrix and its filtered binary form.

use crate::common::{
    emit, load_trace, print_csv, print_json, set_stage, table, CliError, CliResult, OutputArgs, SelectionArgs,
};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_analysis::matrix::{CommMatrix, Entry, Filtered, Metric, MAX_DENSE_RANKS};

/// Which quantity to show and filter on.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricArg {
    /// Bytes sent.
    Bytes,
    /// Messages sent.
    Messages,
}

impl From<MetricArg> for Metric {
    fn from(m: MetricArg) -> Metric {
        match m {
            MetricArg::Bytes => Metric::Bytes,
            MetricArg::Messages => Metric::Messages,
        }
    }
}

fn threshold_arg(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("`{text}` is not a percentage"))?;
    if !(0.0..=100.0).contains(&v) {
        return Err(format!("threshold {v} is outside 0-100 %"));
    }
    Ok(v)
}

/// Arguments of `tracelogic matrix`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Quantity shown (and filtered on).
    #[arg(long, value_enum, default_value = "bytes")]
    pub metric: MetricArg,
    /// Remove entries below this percentage of the largest off-diagonal entry (seed 000 §4.1
    /// uses 5).
    #[arg(long, default_value = "5", value_parser = threshold_arg)]
    pub threshold: f64,
    /// With --csv: print the binary matrix instead of the metric.
    #[arg(long, requires = "csv")]
    pub binary: bool,
    /// With --csv: print one `from,to,bytes,messages,kept` line per non-zero entry instead of
    /// the grid (always so above 8,192 ranks).
    #[arg(long, requires = "csv")]
    pub sparse: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// What `tracelogic matrix --json` prints.
#[derive(Debug, Serialize)]
pub struct MatrixReport {
    /// Source format name.
    pub format: String,
    /// Where the trace came from.
    pub source: String,
    /// Number of world ranks (rows and columns).
    pub ranks: u32,
    /// Metric the threshold applied to (`bytes` or `messages`).
    pub metric: Metric,
    /// Threshold in percent of the largest off-diagonal entry.
    pub threshold: f64,
    /// Bytes sent, one row per sending rank, one column per receiving rank; omitted above
    /// [`MAX_MATRIX_RANKS`] ranks (read `entries`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Vec<Vec<u64>>>,
    /// Messages sent, same layout; omitted above [`MAX_MATRIX_RANKS`] ranks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<Vec<u64>>>,
    /// 0/1 after filtering, same layout; omitted above [`MAX_MATRIX_RANKS`] ranks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary: Option<Vec<Vec<u8>>>,
    /// Every non-zero entry as `[from, to, bytes, messages, kept]` (kept 0/1 after filtering),
    /// sorted by sender then receiver: the matrix at any rank count.
    pub entries: Vec<(u32, u32, u64, u64, u8)>,
    /// Non-zero entries (pairs, self-sends included, with at least one message).
    pub nonzero_entries: u64,
    /// Entries kept by the filter (the 1s of `binary`).
    pub kept_entries: u64,
    /// Non-zero entries the filter removed (self-traffic included).
    pub removed_entries: u64,
    /// Share (0..1) of the metric's total carried by removed entries.
    pub removed_share: f64,
    /// Sum of `bytes`.
    pub total_bytes: u64,
    /// Sum of `messages`.
    pub total_messages: u64,
}

/// Largest rank count the dense fields (`bytes`, `messages`, `binary` rows of the JSON, the CSV
/// grid) are produced for: 8192² entries are 67 M numbers per table. Above it the JSON carries
/// `entries` only and the CSV is the sparse list.
pub const MAX_MATRIX_RANKS: u32 = MAX_DENSE_RANKS;

/// Run `tracelogic matrix`.
pub fn run(args: Args) -> CliResult {
    let trace = load_trace(&args.paths)?;
    let selection = args.selection.selection(&trace)?;
    set_stage("building the communication matrix");
    let matrix = CommMatrix::from_trace(&trace, &selection);
    let metric = Metric::from(args.metric);
    set_stage("filtering the communication matrix");
    let filtered = matrix.filter(metric, args.threshold);
    let dense = matrix.ranks() <= MAX_MATRIX_RANKS;
    if args.output.json {
        let report = MatrixReport {
            format: trace.format.clone(),
            source: trace.source.clone(),
            ranks: matrix.ranks(),
            metric,
            threshold: filtered.threshold_pct,
            bytes: dense.then(|| matrix.dense_rows(Metric::Bytes)),
            messages: dense.then(|| matrix.dense_rows(Metric::Messages)),
            binary: dense.then(|| filtered.dense_rows(&matrix)),
            entries: matrix
                .entries()
                .zip(&filtered.kept)
                .map(|(e, &k)| (e.from, e.to, e.bytes, e.messages, u8::from(k)))
                .collect(),
            nonzero_entries: matrix.nonzero() as u64,
            kept_entries: filtered.kept_entries,
            removed_entries: filtered.removed_entries,
            removed_share: filtered.removed_share,
            total_bytes: matrix.total(Metric::Bytes),
            total_messages: matrix.total(Metric::Messages),
        };
        print_json(&report)?;
    } else if args.output.csv && (args.sparse || !dense) {
        let header: Vec<String> = ["from", "to", "bytes", "messages", "kept"].map(String::from).into();
        let rows: Vec<Vec<String>> = matrix
            .entries()
            .zip(&filtered.kept)
            .map(|(e, &k)| {
                vec![
                    e.from.to_string(),
                    e.to.to_string(),
                    e.bytes.to_string(),
                    e.messages.to_string(),
                    u8::from(k).to_string(),
                ]
            })
            .collect();
        print_csv(&header, &rows)?;
    } else if args.output.csv {
        let header: Vec<String> = std::iter::once("sender".to_string())
            .chain((0..matrix.ranks()).map(|r| r.to_string()))
            .collect();
        let rows: Vec<Vec<String>> = if args.binary {
            number_rows(&filtered.dense_rows(&matrix))
        } else {
            number_rows(&matrix.dense_rows(metric))
        };
        print_csv(&header, &rows)?;
    } else {
        emit(|out| out.write_all(human(&matrix, &filtered, metric).as_bytes()))?;
    }
    if matrix.is_empty() {
        return Err(CliError::NothingFound(
            "no point-to-point traffic in the trace (or in the selection)".into(),
        ));
    }
    Ok(ExitCode::SUCCESS)
}

fn number_rows<T: ToString>(rows: &[Vec<T>]) -> Vec<Vec<String>> {
    rows.iter()
        .enumerate()
        .map(|(r, row)| {
            std::iter::once(r.to_string())
                .chain(row.iter().map(T::to_string))
                .collect()
        })
        .collect()
}

/// Full grids up to this many ranks; beyond, the largest entries as a list.
const MAX_GRID_RANKS: u32 = 32;
/// Entries listed for larger matrices.
const TOP_ENTRIES: usize = 20;

fn human(m: &CommMatrix, f: &Filtered, metric: Metric) -> String {
    let n = m.ranks();
    let name = match metric {
        Metric::Bytes => "bytes",
        Metric::Messages => "messages",
    };
    let mut o = format!(
        "{n} ranks, {} messages, {} bytes (row = sender, column = receiver)\n",
        m.total(Metric::Messages),
        m.total(Metric::Bytes)
    );
    if n <= MAX_GRID_RANKS {
        let header: Vec<String> = std::iter::once(name.to_string())
            .chain((0..n).map(|r| r.to_string()))
            .collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let right: Vec<usize> = (0..=n as usize).collect();
        o += &table(&header, number_rows(&m.dense_rows(metric)), &right);
        o += "\nbinary after filtering\n";
        let binary: Vec<String> = f
            .dense_rows(m)
            .iter()
            .enumerate()
            .map(|(r, row)| {
                let cells: Vec<String> = row.iter().map(u8::to_string).collect();
                format!("{r:>5}  {}", cells.join(" "))
            })
            .collect();
        o += &binary.join("\n");
        o += "\n";
    } else {
        let mut entries: Vec<(Entry, bool)> = m
            .entries()
            .zip(f.kept.iter().copied())
            .filter(|(e, _)| e.value(metric) > 0)
            .collect();
        let count = entries.len();
        let top = TOP_ENTRIES.min(count);
        let by_value = |a: &(Entry, bool), b: &(Entry, bool)| {
            (b.0.value(metric).cmp(&a.0.value(metric))).then((a.0.from, a.0.to).cmp(&(b.0.from, b.0.to)))
        };
        if top < count {
            entries.select_nth_unstable_by(top, by_value);
            entries.truncate(top);
        }
        entries.sort_by(by_value);
        let rows = entries
            .iter()
            .map(|(e, kept)| {
                vec![
                    e.from.to_string(),
                    e.to.to_string(),
                    e.value(metric).to_string(),
                    u8::from(*kept).to_string(),
                ]
            })
            .collect();
        o += &format!("largest {top} of {count} non-zero entries\n");
        o += &table(&["sender", "receiver", name, "kept"], rows, &[0, 1, 2, 3]);
    }
    o += &format!(
        "threshold {}% of the largest entry by {name}: {} entries kept, {} removed carrying {:.3}% of the {name}\n",
        f.threshold_pct,
        f.kept_entries,
        f.removed_entries,
        100.0 * f.removed_share
    );
    o
}
