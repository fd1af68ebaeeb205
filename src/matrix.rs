//! `tracelogic matrix`: the rank-to-rank communication matrix and its filtered binary form.

use crate::common::{load_trace, set_stage, working, CliError, CliResult, OutputArgs, SelectionArgs};
use crate::print;
use crate::print::matrix::Csv;
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_engine::matrix::Metric;

/// Which quantity to show and filter on.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricArg {
    /// Bytes sent.
    Bytes,
    /// Messages sent.
    Messages,
    /// Seconds waited: late-sender plus late-receiver time per (sender, receiver); the
    /// threshold and the binary matrix stay on bytes.
    Waiting,
}

impl From<MetricArg> for Metric {
    fn from(m: MetricArg) -> Metric {
        match m {
            MetricArg::Bytes | MetricArg::Waiting => Metric::Bytes,
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
    /// Remove entries below this percentage of the largest off-diagonal entry (Logicalization §4.1
    /// uses 5).
    #[arg(long, default_value = "5", value_parser = threshold_arg)]
    pub threshold: f64,
    /// With --csv: print the binary matrix instead of the metric.
    #[arg(long, requires = "csv")]
    pub binary: bool,
    /// With --csv: print one `from,to,bytes,messages,kept,ranks` line per non-zero entry instead
    /// of the grid (always so above 8,192 ranks).
    #[arg(long, requires = "csv")]
    pub sparse: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// Run `tracelogic matrix`.
pub fn run(args: Args) -> CliResult {
    let (engine, selection) = args.selection.engine(load_trace(&args.paths)?)?;
    let report = working("building the communication matrix", || {
        if args.metric == MetricArg::Waiting {
            engine.matrix_with_waiting(&selection, Metric::from(args.metric), args.threshold)
        } else {
            engine.matrix(&selection, Metric::from(args.metric), args.threshold)
        }
    })?;
    set_stage("writing the communication matrix");
    let csv = args.output.csv.then_some(if args.sparse {
        Csv::Sparse
    } else if args.binary {
        Csv::Binary
    } else {
        Csv::Metric
    });
    print::matrix::print(&report, args.output.json, csv)?;
    if let Some(why) = report.nothing_found() {
        return Err(CliError::NothingFound(why.into()));
    }
    Ok(ExitCode::SUCCESS)
}
