//! The JavaScript package `tracelogic` (`js/`, built by `scripts/build-js`): a thin
//! wasm-bindgen shell around [`tracelogic_engine::Engine`]. Every report is the engine's own
//! serde type, turned into a plain JS object by serde-wasm-bindgen (JSON-compatible: maps become
//! objects, 64-bit integers numbers), so a report reads exactly as the CLI's `--json` of the same
//! type. Errors are thrown as JS `Error`s carrying the engine's message.
//!
//! The crate is empty outside `wasm32`.
#![cfg(target_arch = "wasm32")]

use js_sys::{Array, Reflect, Uint8Array};
use serde::{Deserialize, Serialize};
use tracelogic_analysis::matrix::Metric;
use tracelogic_analysis::topology::{Threshold, TopologyOptions};
use tracelogic_engine::documents;
use tracelogic_engine::patterns::PatternOptions;
use tracelogic_engine::phases::Outside;
use tracelogic_engine::{Engine, FieldWords};
use tracelogic_formats::{InputFile, NoProgress};
use tracelogic_model::{Rank, Selection};
use wasm_bindgen::prelude::*;

/// A loaded trace: the engine holding it (message matching and what the analyses derive are
/// computed once and kept between calls).
#[wasm_bindgen]
pub struct Trace {
    engine: Engine,
}

/// `threshold` of the options: `"auto"` or a percentage.
#[derive(Deserialize)]
#[serde(untagged)]
enum ThresholdOpt {
    Percent(f64),
    Text(String),
}

/// The options every method takes (each reads the ones it needs; all optional).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Options {
    /// Restrict the analysis (the engine's `Selection`: `ranks`, `comm`, `from`, `to`, times
    /// relative to the trace's first event).
    selection: Option<Selection>,
    threshold: Option<ThresholdOpt>,
    /// `matrix`: `"bytes"` (default) or `"messages"`.
    metric: Option<Metric>,
    /// `logical`: build from these ranks instead of a maximal one.
    from_ranks: Vec<Rank>,
    /// `phases`: the strength s0 (default 0, the BIC criterion).
    strength: Option<f64>,
    /// `phases`: leave communication outside any pattern out of the sequence.
    skip_outside: bool,
    /// `logical`: the loop-compressed `program` instead of every record (the CLI's
    /// `--compress`).
    compress: bool,
}

fn options(value: JsValue) -> Result<Options, JsError> {
    if value.is_undefined() || value.is_null() {
        return Ok(Options::default());
    }
    // serde-wasm-bindgen reads only the fields it knows: reject a misspelt option here.
    const KNOWN: [&str; 7] = [
        "selection",
        "threshold",
        "metric",
        "fromRanks",
        "strength",
        "skipOutside",
        "compress",
    ];
    if let Some(object) = value.dyn_ref::<js_sys::Object>() {
        for key in js_sys::Object::keys(object).iter().filter_map(|k| k.as_string()) {
            if !KNOWN.contains(&key.as_str()) {
                return Err(JsError::new(&format!(
                    "bad options: unknown option `{key}` (known: {})",
                    KNOWN.join(", ")
                )));
            }
        }
    }
    serde_wasm_bindgen::from_value(value).map_err(|e| JsError::new(&format!("bad options: {e}")))
}

impl Options {
    fn selection(&self) -> Selection {
        self.selection.clone().unwrap_or_else(Selection::all)
    }

    /// The topology threshold (default `auto`, as the CLI's `--threshold`).
    fn topology_threshold(&self) -> Result<Threshold, JsError> {
        match &self.threshold {
            None => Ok(Threshold::Auto),
            Some(ThresholdOpt::Text(t)) if t == "auto" => Ok(Threshold::Auto),
            Some(ThresholdOpt::Text(t)) => Err(JsError::new(&format!(
                "threshold must be \"auto\" or a percentage, got {t:?}"
            ))),
            Some(ThresholdOpt::Percent(p)) => percent(*p),
        }
    }
}

fn percent(p: f64) -> Result<Threshold, JsError> {
    if !(0.0..=100.0).contains(&p) {
        return Err(JsError::new(&format!("threshold {p} is outside 0-100 %")));
    }
    Ok(Threshold::Percent(p))
}

/// A report as a plain JS value, equal to `JSON.parse` of the CLI's `--json` of it.
///
/// The report goes through `serde_json::Value` first: map keys become strings and non-finite
/// floats `null` exactly as the CLI writes them, and integers beyond 2^53 (the topology's
/// closed-walk counts, which wrap modulo 2^64) become the nearest double as `JSON.parse` makes
/// them, where serde-wasm-bindgen alone would refuse them. serde-wasm-bindgen
/// (JSON-compatible: plain objects, `null` for `None`) then builds the JS value.
fn to_js<T: Serialize>(report: &T) -> Result<JsValue, JsError> {
    let mut value =
        serde_json::to_value(report).map_err(|e| JsError::new(&format!("cannot encode the report: {e}")))?;
    as_js_numbers(&mut value);
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&format!("cannot encode the report: {e}")))
}

/// Integers outside JS's safe range as the nearest double (what `JSON.parse` does with them).
fn as_js_numbers(value: &mut serde_json::Value) {
    const SAFE: u64 = (1 << 53) - 1;
    match value {
        serde_json::Value::Number(n) => {
            let big = n.as_u64().is_some_and(|u| u > SAFE) || n.as_i64().is_some_and(|i| i.unsigned_abs() > SAFE);
            if big {
                if let Some(x) = n.as_f64().and_then(serde_json::Number::from_f64) {
                    *n = x;
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(as_js_numbers),
        serde_json::Value::Object(map) => map.values_mut().for_each(as_js_numbers),
        _ => {}
    }
}

fn engine_error(e: tracelogic_engine::Error) -> JsError {
    JsError::new(e.message())
}

/// Read `files` (`[{name, bytes: Uint8Array}]`, any format tracelogic reads, archives unpacked)
/// as one trace.
#[wasm_bindgen(js_name = readTrace)]
pub fn read_trace(files: Array) -> Result<Trace, JsError> {
    let mut input = Vec::with_capacity(files.length() as usize);
    for (i, file) in files.iter().enumerate() {
        let name = Reflect::get(&file, &"name".into())
            .ok()
            .and_then(|n| n.as_string())
            .ok_or_else(|| JsError::new(&format!("file {i}: no string `name`")))?;
        let bytes = Reflect::get(&file, &"bytes".into())
            .ok()
            .and_then(|b| b.dyn_into::<Uint8Array>().ok())
            .ok_or_else(|| JsError::new(&format!("{name}: `bytes` is not a Uint8Array")))?;
        input.push(InputFile {
            name,
            bytes: bytes.to_vec(),
        });
    }
    let engine = Engine::load(input, &mut NoProgress, FieldWords::Labels)
        .map_err(|e| JsError::new(&format!("cannot read trace: {e}")))?;
    Ok(Trace { engine })
}

#[wasm_bindgen]
impl Trace {
    /// What is in the trace (the CLI's `summary --json`).
    pub fn summary(&self) -> Result<JsValue, JsError> {
        to_js(&self.engine.summary())
    }

    /// The reader's warnings (what the CLI prints as `tracelogic: warning: ...`).
    #[wasm_bindgen(getter)]
    pub fn warnings(&self) -> Vec<String> {
        self.engine.trace().warnings.clone()
    }

    /// The communication matrix (`matrix --json`); options `metric`, `threshold` (percent,
    /// default 5), `selection`.
    pub fn matrix(&self, opts: JsValue) -> Result<JsValue, JsError> {
        let o = options(opts)?;
        let threshold = match &o.threshold {
            None => 5.0,
            Some(ThresholdOpt::Percent(p)) => match percent(*p)? {
                Threshold::Percent(p) => p,
                Threshold::Auto => unreachable!(),
            },
            Some(ThresholdOpt::Text(t)) => {
                return Err(JsError::new(&format!("threshold must be a percentage, got {t:?}")))
            }
        };
        let report = self
            .engine
            .matrix(&o.selection(), o.metric.unwrap_or(Metric::Bytes), threshold);
        to_js(&documents::matrix(&report.map_err(engine_error)?))
    }

    /// The identified topology (`topology --json`); options `threshold` (`"auto"` or percent),
    /// `selection`.
    pub fn topology(&self, opts: JsValue) -> Result<JsValue, JsError> {
        let o = options(opts)?;
        let options = TopologyOptions {
            threshold: o.topology_threshold()?,
            ..TopologyOptions::default()
        };
        to_js(&self.engine.topology(&o.selection(), &options).map_err(engine_error)?)
    }

    /// The logical trace (`logical --json`; with `compress`, `logical --compress --json`);
    /// options `threshold`, `fromRanks`, `compress`, `selection`.
    pub fn logical(&self, opts: JsValue) -> Result<JsValue, JsError> {
        let o = options(opts)?;
        let report = self
            .engine
            .logical(&o.selection(), o.topology_threshold()?, &o.from_ranks);
        to_js(&documents::logical(&report.map_err(engine_error)?, o.compress))
    }

    /// The communication patterns (`patterns --json`); option `selection`.
    pub fn patterns(&self, opts: JsValue) -> Result<JsValue, JsError> {
        let o = options(opts)?;
        let report = self.engine.patterns(&o.selection(), &PatternOptions::default());
        to_js(&documents::patterns(&report.map_err(engine_error)?))
    }

    /// The phases (`phases --json`); options `strength`, `skipOutside`, `selection`.
    pub fn phases(&self, opts: JsValue) -> Result<JsValue, JsError> {
        let o = options(opts)?;
        let outside = if o.skip_outside { Outside::Skip } else { Outside::Own };
        let report = self.engine.phases(&o.selection(), o.strength.unwrap_or(0.0), outside);
        to_js(&documents::phases(&report.map_err(engine_error)?))
    }
}

/// `topology(trace, opts)`: the same as `trace.topology(opts)`.
#[wasm_bindgen(js_name = topology)]
pub fn topology_of(trace: &Trace, opts: JsValue) -> Result<JsValue, JsError> {
    trace.topology(opts)
}

/// `logical(trace, opts)`: the same as `trace.logical(opts)`.
#[wasm_bindgen(js_name = logical)]
pub fn logical_of(trace: &Trace, opts: JsValue) -> Result<JsValue, JsError> {
    trace.logical(opts)
}
