//! The `tracelogic` Python module (PyO3): one loaded trace, [`Trace`], whose methods call the
//! engine's use cases (`crates/engine`) with the CLI's default options and return its reports as
//! plain Python values, equal to what `tracelogic <subcommand> --json` prints (the engine's
//! report or its document from `tracelogic_engine::documents`, serialised with serde_json,
//! then `json.loads`). Calls and messages come as pandas
//! DataFrames when pandas is installed, else as dicts of lists.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde::Serialize;
use std::path::PathBuf;
use tracelogic_engine::documents;
use tracelogic_engine::matrix::Metric;
use tracelogic_engine::patterns::PatternOptions;
use tracelogic_engine::phases::Outside;
use tracelogic_engine::query::CallRow;
use tracelogic_engine::topology::{Threshold, TopologyOptions};
use tracelogic_engine::{Engine, FieldWords};
use tracelogic_formats::input::read_paths;
use tracelogic_formats::{read_trace_with_progress, InputFile, NoProgress};
use tracelogic_model::Selection;

/// One loaded trace (any format tracelogic reads; several files together form one trace).
#[pyclass(unsendable, module = "tracelogic")]
struct Trace {
    engine: Engine,
}

fn value_error(message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(message.to_string())
}

/// `value` as the Python value `json.loads` gives for its JSON.
fn to_python<T: Serialize>(py: Python<'_>, value: &T) -> PyResult<PyObject> {
    let text = serde_json::to_string(value).map_err(value_error)?;
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

/// `columns` (name, values) as a pandas DataFrame when pandas imports, else as a dict of lists.
fn table(py: Python<'_>, columns: Vec<(&str, Bound<'_, PyList>)>) -> PyResult<PyObject> {
    let dict = PyDict::new(py);
    for (name, values) in columns {
        dict.set_item(name, values)?;
    }
    match py.import("pandas") {
        Ok(pandas) => Ok(pandas.call_method1("DataFrame", (dict,))?.unbind()),
        Err(_) => Ok(dict.into_any().unbind()),
    }
}

fn load(files: Vec<InputFile>) -> PyResult<Trace> {
    let trace =
        read_trace_with_progress(files, &mut NoProgress).map_err(|e| value_error(format!("cannot read trace: {e}")))?;
    Ok(Trace {
        engine: Engine::new(trace, FieldWords::Flags),
    })
}

/// Read a trace from a path or a list of paths (files, folders or archives; together one
/// trace), as `tracelogic summary PATH...` does. Raises ValueError naming the file on bad input.
#[pyfunction]
fn read(py: Python<'_>, paths: &Bound<'_, PyAny>) -> PyResult<Trace> {
    let os = py.import("os")?;
    let single = paths.is_instance_of::<pyo3::types::PyString>() || paths.hasattr("__fspath__")?;
    let list: Vec<PathBuf> = if single {
        vec![os.call_method1("fspath", (paths,))?.extract()?]
    } else {
        paths
            .try_iter()?
            .map(|p| os.call_method1("fspath", (p?,))?.extract())
            .collect::<PyResult<_>>()?
    };
    if list.is_empty() {
        return Err(value_error("no trace given: name its files or folder"));
    }
    let files = read_paths(&list).map_err(|e| value_error(format!("cannot read {e}")))?;
    load(files)
}

/// Read a trace from in-memory files: a dict {name: bytes} (names as relative paths, e.g.
/// `traces/0.evt`, which tell the format apart as file names do).
#[pyfunction]
fn read_bytes(files: &Bound<'_, PyDict>) -> PyResult<Trace> {
    let mut input = Vec::new();
    for (name, bytes) in files.iter() {
        input.push(InputFile {
            name: name.extract()?,
            bytes: bytes.extract()?,
        });
    }
    if input.is_empty() {
        return Err(value_error("no trace given: pass at least one file"));
    }
    load(input)
}

#[pymethods]
impl Trace {
    /// Where the trace was read from.
    #[getter]
    fn source(&self) -> String {
        self.engine.trace().source.clone()
    }

    /// Number of ranks.
    #[getter]
    fn ranks(&self) -> u32 {
        self.engine.trace().num_ranks()
    }

    /// What is in the trace: `tracelogic summary --json`.
    fn summary(&self, py: Python<'_>) -> PyResult<PyObject> {
        to_python(py, &self.engine.summary())
    }

    /// The communication matrix: `tracelogic matrix --json` (`metric` is `--metric`, `bytes` or
    /// `messages`; `threshold_pct` is `--threshold`, entries below it removed by the filter).
    #[pyo3(signature = (metric = "bytes", threshold_pct = 5.0))]
    fn matrix(&self, py: Python<'_>, metric: &str, threshold_pct: f64) -> PyResult<PyObject> {
        let metric = match metric {
            "bytes" => Metric::Bytes,
            "messages" => Metric::Messages,
            other => {
                return Err(value_error(format!(
                    "metric must be 'bytes' or 'messages', got '{other}'"
                )))
            }
        };
        if !threshold_pct.is_finite() || !(0.0..=100.0).contains(&threshold_pct) {
            return Err(value_error(format!(
                "threshold_pct must be a percentage (0-100), got {threshold_pct}"
            )));
        }
        let report = self
            .engine
            .matrix(&Selection::all(), metric, threshold_pct)
            .map_err(value_error)?;
        to_python(py, &documents::matrix(&report))
    }

    /// The identified topology: `tracelogic topology --json` (threshold auto).
    fn topology(&self, py: Python<'_>) -> PyResult<PyObject> {
        let report = self
            .engine
            .topology(&Selection::all(), &TopologyOptions::default())
            .map_err(value_error)?;
        to_python(py, &report)
    }

    /// The logical trace: `tracelogic logical --json` (with `compress=True`, `--compress`:
    /// the loop-compressed `program` instead of `records`).
    #[pyo3(signature = (compress = false))]
    fn logical(&self, py: Python<'_>, compress: bool) -> PyResult<PyObject> {
        let report = self
            .engine
            .logical(&Selection::all(), Threshold::Auto, &[])
            .map_err(value_error)?;
        to_python(py, &documents::logical(&report, compress))
    }

    /// Repeated communication patterns: `tracelogic patterns --json`.
    fn patterns(&self, py: Python<'_>) -> PyResult<PyObject> {
        let options = PatternOptions {
            tandem: true,
            with_envelope: false,
            min_length: 2,
            routines: true,
        };
        let r = self.engine.patterns(&Selection::all(), &options).map_err(value_error)?;
        to_python(py, &documents::patterns(&r))
    }

    /// Phases: `tracelogic phases --json` (`strength` is `--strength`, 0 = automatic).
    #[pyo3(signature = (strength = 0.0))]
    fn phases(&self, py: Python<'_>, strength: f64) -> PyResult<PyObject> {
        if !strength.is_finite() {
            return Err(value_error(format!("strength must be a number, got {strength}")));
        }
        tracelogic_engine::phases::check_strength(strength).map_err(value_error)?;
        let r = self
            .engine
            .phases(&Selection::all(), strength, Outside::Own)
            .map_err(value_error)?;
        to_python(py, &documents::phases(&r))
    }

    /// Every MPI call, one row each, by rank then call order, as the call's Enter row of Pipit's
    /// `events` after `match_events` and `calc_inc_metrics`: `Timestamp (ns)` (entry),
    /// `Event Type` ("Enter"), `Name`, `Process`, `_matching_timestamp` (exit), `time.inc`
    /// (exit - entry); then tracelogic's `Call` (index in the rank's calls), `Kind`, `Bytes`
    /// (largest data the call moves). Times count from the trace's first event.
    #[getter]
    fn calls(&self, py: Python<'_>) -> PyResult<PyObject> {
        let q = self.engine.query(&Selection::all(), usize::MAX).map_err(value_error)?;
        let rows = &q.calls;
        macro_rules! column {
            ($e:expr) => {
                PyList::new(py, rows.iter().map($e))?
            };
        }
        let kind = |r: &CallRow| match serde_json::to_value(r.kind) {
            Ok(serde_json::Value::String(s)) => s,
            Ok(other) => other.to_string(),
            Err(_) => format!("{:?}", r.kind),
        };
        table(
            py,
            vec![
                ("Timestamp (ns)", column!(|r| r.enter_ns)),
                ("Event Type", column!(|_| "Enter")),
                ("Name", column!(|r| r.function.clone())),
                ("Process", column!(|r| r.rank)),
                ("_matching_timestamp", column!(|r| r.exit_ns)),
                ("time.inc", column!(|r| r.exit_ns.saturating_sub(r.enter_ns))),
                ("Call", column!(|r| r.call)),
                ("Kind", column!(kind)),
                ("Bytes", column!(|r| r.bytes)),
            ],
        )
    }

    /// Every matched message, by sender then send order, with the names `tracelogic query
    /// --json` gives them: `sender`, `receiver`, `bytes`, `tag`, `comm`, `send_function`,
    /// `recv_function`, `send_ns` (entry of the send), `recv_done_ns` (exit of the call that
    /// completed the receive). Times count from the trace's first event.
    #[getter]
    fn messages(&self, py: Python<'_>) -> PyResult<PyObject> {
        let q = self.engine.query(&Selection::all(), usize::MAX).map_err(value_error)?;
        let m = &q.messages;
        macro_rules! column {
            ($f:ident) => {
                PyList::new(py, m.iter().map(|r| r.$f.clone()))?
            };
        }
        table(
            py,
            vec![
                ("sender", column!(sender)),
                ("receiver", column!(receiver)),
                ("bytes", column!(bytes)),
                ("tag", column!(tag)),
                ("comm", column!(comm)),
                ("send_function", column!(send_function)),
                ("recv_function", column!(recv_function)),
                ("send_ns", column!(send_ns)),
                ("recv_done_ns", column!(recv_done_ns)),
            ],
        )
    }

    fn __repr__(&self) -> String {
        let t = self.engine.trace();
        format!(
            "<tracelogic.Trace {} ({} ranks, {} calls)>",
            t.source,
            t.num_ranks(),
            t.num_calls()
        )
    }
}

/// Analyse MPI communication traces: matrix, topology, logical trace, patterns, phases.
#[pymodule]
fn tracelogic(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(read_bytes, m)?)?;
    m.add_class::<Trace>()?;
    Ok(())
}
