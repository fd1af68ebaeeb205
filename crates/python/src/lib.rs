//! The `tracelogic` Python module (PyO3): one loaded trace, [`Trace`], whose methods call the
//! engine's use cases (`crates/engine`) with the CLI's default options and return its reports as
//! plain Python values, equal to what `tracelogic <subcommand> --json` prints (the engine's
//! report serialised with serde_json, then `json.loads`). Calls and messages come as pandas
//! DataFrames when pandas is installed, else as dicts of lists.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::PathBuf;
use tracelogic_engine::logical::SCHEMA;
use tracelogic_engine::matrix::{Metric, MAX_DENSE_RANKS};
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

/// `value` as a JSON value (for documents assembled here as the CLI assembles them).
fn to_value<T: Serialize>(value: &T) -> PyResult<Value> {
    serde_json::to_value(value).map_err(value_error)
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
        let (matrix, filtered) = (&report.matrix, &report.filtered);
        let n = matrix.ranks();
        // The document of `tracelogic matrix --json` (crates/cli/src/print/matrix.rs): dense
        // tables up to MAX_DENSE_RANKS ranks, the sparse entry list always.
        let entries: Vec<(u32, u32, u64, u64, u8)> = matrix
            .entries()
            .zip(filtered.kept.iter().copied())
            .map(|(e, k)| (e.from, e.to, e.bytes, e.messages, u8::from(k)))
            .collect();
        let mut doc = json!({
            "format": report.format,
            "source": report.source,
            "ranks": n,
            "metric": to_value(&report.metric)?,
            "threshold": report.threshold,
        });
        let obj = doc.as_object_mut().expect("an object");
        if n <= MAX_DENSE_RANKS {
            let dense = |cell: fn(&(u32, u32, u64, u64, u8)) -> u64| {
                let mut rows = vec![vec![0u64; n as usize]; n as usize];
                for e in &entries {
                    rows[e.0 as usize][e.1 as usize] = cell(e);
                }
                rows
            };
            obj.insert("bytes".into(), json!(dense(|e| e.2)));
            obj.insert("messages".into(), json!(dense(|e| e.3)));
            obj.insert("binary".into(), json!(dense(|e| u64::from(e.4))));
        }
        obj.insert("nonzero_entries".into(), json!(report.nonzero_entries()));
        obj.insert("entries".into(), json!(entries));
        obj.insert("kept_entries".into(), json!(filtered.kept_entries));
        obj.insert("removed_entries".into(), json!(filtered.removed_entries));
        obj.insert("removed_share".into(), json!(filtered.removed_share));
        obj.insert("total_bytes".into(), json!(matrix.total(Metric::Bytes)));
        obj.insert("total_messages".into(), json!(matrix.total(Metric::Messages)));
        to_python(py, &doc)
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
        let logical = &report.logical;
        let program = &report.program;
        // The document of `tracelogic logical --json` (crates/cli/src/print/logical.rs).
        let mut doc = json!({
            "schema": SCHEMA,
            "source": logical.source,
            "ranks": logical.ranks,
            "topology": to_value(&logical.topology)?,
        });
        let obj = doc.as_object_mut().expect("an object");
        if let Some(d) = &logical.directions_from {
            obj.insert("directions_from".into(), to_value(d)?);
        }
        obj.insert("placement".into(), to_value(&report.placement())?);
        obj.insert("ranks_used".into(), to_value(&logical.ranks_used)?);
        obj.insert("maximal".into(), json!(logical.maximal));
        obj.insert("raw_length".into(), json!(program.raw_length));
        obj.insert("compressed_length".into(), json!(program.compressed_length));
        obj.insert("ratio".into(), json!(program.ratio));
        obj.insert(
            "dropped_calls_fraction".into(),
            json!(logical.accuracy.dropped_calls_fraction),
        );
        obj.insert(
            "dropped_bytes_fraction".into(),
            json!(logical.accuracy.dropped_bytes_fraction),
        );
        obj.insert("accuracy".into(), to_value(&logical.accuracy)?);
        obj.insert("verification".into(), to_value(&report.verification)?);
        obj.insert("skipped_calls".into(), json!(logical.skipped_calls));
        if !logical.classes.is_empty() {
            obj.insert("classes".into(), to_value(&logical.classes)?);
        }
        obj.insert("merge_conflicts".into(), json!(logical.merge_conflicts));
        if !logical.self_ranks.is_empty() {
            obj.insert("self_ranks".into(), to_value(&logical.self_ranks)?);
        }
        if compress {
            obj.insert("program".into(), to_value(program)?);
        } else {
            obj.insert("records".into(), to_value(&logical.records)?);
        }
        obj.insert("selection".into(), to_value(&report.selection)?);
        to_python(py, &doc)
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
        // The document of `tracelogic patterns --json` (crates/cli/src/print/patterns.rs).
        let doc = json!({
            "events": r.events,
            "events_in_patterns": r.events_in_patterns,
            "communication_patterns": to_value(&r.patterns)?,
            "rank_patterns": to_value(&r.rank_patterns)?,
            "routine_comparison": to_value(&r.routine_comparison)?,
            "selection": to_value(&r.selection)?,
        });
        to_python(py, &doc)
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
        let mut doc = to_value(&r.analysis)?;
        match doc.as_object_mut() {
            Some(obj) => {
                obj.insert("selection".into(), to_value(&r.selection)?);
            }
            None => return Err(value_error("the phase analysis is not a JSON object")),
        }
        to_python(py, &doc)
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
            Ok(Value::String(s)) => s,
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
