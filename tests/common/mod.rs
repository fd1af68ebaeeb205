//! Helpers shared by the end-to-end tests: the bundled samples and the `tracelogic` binary.
//!
//! The root package cannot name another package's binary (`CARGO_BIN_EXE_*` only exists for
//! the package's own binaries), so the first test to need it runs `cargo build -p
//! tracelogic-cli` with the same profile and uses the binary next to the test executable
//! (`TRACELOGIC_BIN` overrides the path).
// Each test file uses its own subset.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The folder of the real sample traces (`tests/data/samples`).
pub fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/samples")
}

/// One sample folder or file, which must exist.
pub fn sample(name: &str) -> PathBuf {
    let p = samples().join(name);
    assert!(p.exists(), "sample {} is missing (part of the repository)", p.display());
    p
}

/// Path of the `tracelogic` binary, built once per test run.
pub fn tracelogic() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("TRACELOGIC_BIN") {
            return Ok(PathBuf::from(p));
        }
        let exe = std::env::current_exe().expect("test executable path");
        // target/<profile>/deps/<this test> -> target/<profile>
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>")
            .to_path_buf();
        let mut build = Command::new(env!("CARGO"));
        build
            .args(["build", "--quiet", "-p", "tracelogic-cli", "--bin", "tracelogic"])
            // Build where this test lives, so the binary lands next to it whatever
            // CARGO_TARGET_DIR or --target layout the outer run used.
            .arg("--target-dir")
            .arg(profile_dir.parent().expect("target dir"))
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => {}
            Some("release") => {
                build.arg("--release");
            }
            Some(other) => {
                build.args(["--profile", other]);
            }
        }
        match build.status() {
            Ok(s) if s.success() => Ok(profile_dir.join(format!("tracelogic{}", std::env::consts::EXE_SUFFIX))),
            Ok(s) => Err(format!("cargo build -p tracelogic-cli failed ({s})")),
            Err(e) => Err(format!("cannot run cargo: {e}")),
        }
    });
    match built {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

/// Runs `tracelogic` with `args` (Rust's own panic report off, as users get it).
pub fn run(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    Command::new(tracelogic())
        .args(args.iter().map(|a| a.as_ref()))
        .env_remove("TRACELOGIC_BACKTRACE")
        .output()
        .expect("running tracelogic")
}

/// The exit code (the process was not killed by a signal).
pub fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code (not killed by a signal)")
}

/// What the run printed on stderr.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Stdout parsed as JSON (the failure shows both streams).
pub fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            stderr(o)
        )
    })
}

/// The run `spec` generates and the placement it was generated on (the synthetic ground
/// truth: every rank at its node of `spec.topology`).
pub fn run_with_truth(
    spec: &tracelogic_synth::Spec,
) -> (tracelogic_model::Trace, tracelogic_analysis::logical::Placement) {
    let (trace, truth) = tracelogic_synth::generate_with_truth(spec).unwrap();
    let placement = tracelogic_analysis::logical::Placement::new(
        spec.topology.clone(),
        truth.ranks,
        truth.node_of_rank.iter().enumerate().map(|(r, &u)| (r as u32, u)),
    )
    .unwrap();
    (trace, placement)
}

/// The dense rows of field `field` (`bytes`, `messages`, `binary`) of `tracelogic matrix --json`.
pub fn matrix_rows(v: &Value, field: &str) -> Vec<Vec<u64>> {
    v[field]
        .as_array()
        .unwrap_or_else(|| panic!("`{field}` is not an array"))
        .iter()
        .map(|row| row.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect())
        .collect()
}
