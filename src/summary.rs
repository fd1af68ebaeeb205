//! `tracelogic summary`: what is in a trace.

use crate::common::CliError;
use crate::common::{load_trace, print_json, set_stage, CliResult};
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_engine::summary::ModelMemory;
use tracelogic_engine::{Engine, FieldWords};

/// Arguments of `tracelogic summary`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    /// Also report the heap the loaded trace takes, by table, and the process's resident memory.
    #[arg(long)]
    pub memory: bool,
}

/// Run `tracelogic summary`.
pub fn run(args: Args) -> CliResult {
    let engine = Engine::new(load_trace(&args.paths)?, FieldWords::Flags);
    set_stage("summarising the trace");
    let summary = engine.summary();
    let memory = args.memory.then(|| (engine.model_memory(), resident()));
    if args.json {
        match memory {
            None => print_json(&summary)?,
            Some((m, (now, peak))) => {
                let mut value = serde_json::to_value(&summary).map_err(|e| CliError::Internal(e.to_string()))?;
                if let serde_json::Value::Object(o) = &mut value {
                    let mut mem = serde_json::to_value(&m).map_err(|e| CliError::Internal(e.to_string()))?;
                    if let serde_json::Value::Object(mo) = &mut mem {
                        mo.insert("resident_bytes".into(), now.into());
                        mo.insert("peak_resident_bytes".into(), peak.into());
                    }
                    o.insert("memory".into(), mem);
                }
                print_json(&value)?;
            }
        }
    } else {
        let mut text = crate::print::summary::text(&summary);
        if let Some((m, (now, peak))) = memory {
            text += &memory_text(&m, now, peak);
        }
        crate::common::emit(|out| out.write_all(text.as_bytes()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The process's resident memory now and at its peak, in bytes (Linux `VmRSS`, `VmHWM`; `None`
/// elsewhere).
fn resident() -> (Option<u64>, Option<u64>) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The lines `--memory` adds to the text.
fn memory_text(m: &ModelMemory, now: Option<u64>, peak: Option<u64>) -> String {
    let mb = |b: u64| format!("{:.1} MB", b as f64 / 1e6);
    let t = m.model.total() + m.matching;
    let mut o = format!(
        "model memory   {} in use, {} allocated ({:.1} and {:.1} bytes per call)\n",
        mb(t.used),
        mb(t.allocated),
        m.used_per_call,
        m.allocated_per_call
    );
    for (name, b) in [
        ("calls", m.model.calls),
        ("point-to-point", m.model.p2p),
        ("collectives", m.model.collectives),
        ("metrics", m.model.metrics),
        ("other", m.model.other),
        ("matching", m.matching),
    ] {
        o += &format!("  {name:<14} {} in use, {} allocated\n", mb(b.used), mb(b.allocated));
    }
    if let (Some(now), Some(peak)) = (now, peak) {
        o += &format!("resident       {} now, {} at the peak\n", mb(now), mb(peak));
    }
    o
}
