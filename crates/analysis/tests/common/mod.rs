//! Helpers shared by the integration tests that read the real sample traces.

use std::path::PathBuf;
use tracelogic_model::Trace;

/// The sample trace `name` of `tests/data/samples` (NPB runs, tool samples), read as the CLI
/// reads a folder.
pub fn sample(name: &str) -> Trace {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/samples")
        .join(name);
    let files = tracelogic_formats::fs::load_paths(&[dir]).unwrap_or_else(|e| panic!("{name}: {e}"));
    tracelogic_formats::read_trace(files).unwrap_or_else(|e| panic!("{name}: {e}"))
}
