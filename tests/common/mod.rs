//! Helpers shared by the end-to-end tests: the bundled samples and the `tracelogic` binary.
//!
//! The binary is the root package's own (`CARGO_BIN_EXE_tracelogic`; `TRACELOGIC_BIN` overrides
//! the path).
// Each test file uses its own subset.
#![allow(dead_code)]

pub mod apps;

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

/// Path of the `tracelogic` binary (the root package's own, which cargo builds before its
/// tests; `TRACELOGIC_BIN` overrides it).
pub fn tracelogic() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        std::env::var_os("TRACELOGIC_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_tracelogic")))
    })
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

/// Compile the C skeleton `source` with the PMPI tracer (`tools/pmpi-tracer`), run it on
/// `ranks` processes under mpirun (no compute: scale 0) and read back what the tracer
/// recorded. `None`, with a note, when mpicc or mpirun is missing; `TRACELOGIC_REQUIRE_MPI=1`
/// makes that a failure.
pub fn replay_skeleton(name: &str, source: &str, ranks: u32) -> Option<tracelogic_model::Trace> {
    let ok = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !(ok("mpicc") && ok("mpirun")) {
        assert_ne!(
            std::env::var("TRACELOGIC_REQUIRE_MPI").as_deref(),
            Ok("1"),
            "TRACELOGIC_REQUIRE_MPI=1 but mpicc/mpirun are missing (apt-get install openmpi-bin libopenmpi-dev)"
        );
        eprintln!("note: skipping the {name} skeleton run: mpicc/mpirun not found");
        return None;
    }
    let run = |cmd: &mut Command, what: &str| {
        let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            out.status.success(),
            "{what} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let exe = dir.path().join(name);
    let tracer = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/pmpi-tracer/tracelogic_pmpi.c");
    run(
        Command::new("mpicc")
            .args(["-O1", "-Wall", "-Werror", "-o"])
            .arg(&exe)
            .arg(&c)
            .arg(&tracer),
        "mpicc",
    );
    let trace_path = dir.path().join(format!("{name}.trace.txt"));
    run(
        Command::new("timeout")
            .args(["300", "mpirun", "--oversubscribe", "--allow-run-as-root", "-np"])
            .arg(ranks.to_string())
            .args(["-x", "TRACELOGIC_TRACE"])
            .arg(&exe)
            .arg("0")
            .env("TRACELOGIC_TRACE", &trace_path)
            .env("OMPI_MCA_btl", "self,vader,tcp")
            .env("OMPI_MCA_rmaps_base_oversubscribe", "1"),
        "mpirun",
    );
    let bytes = std::fs::read(&trace_path).expect("the tracer wrote its file");
    let file = format!("{name}-skeleton.trace.txt");
    Some(tracelogic_formats::read_trace(vec![tracelogic_formats::InputFile::new(&file, bytes)]).unwrap())
}

/// Rank `rank`'s point-to-point operations of `t` in order: sent (not received), peer as
/// `peer_node` names it, bytes — what a skeleton's replay is compared on (the replay's rank u
/// plays node u).
pub fn p2p_as_nodes(t: &tracelogic_model::Trace, rank: u32, peer_node: &dyn Fn(u32) -> u32) -> Vec<(bool, u32, u64)> {
    let p = &t.ranks[rank as usize].p2p;
    (0..p.len())
        .map(|i| {
            (
                p.dir[i] == tracelogic_model::P2pDir::Send,
                peer_node(p.peer[i]),
                p.bytes.at(i),
            )
        })
        .collect()
}

/// The trace of corpus run `name` (`tests/data/apps/NAME`: its packed DUMPI or OTF2 archive, or
/// its folder).
pub fn app_trace(name: &str) -> tracelogic_model::Trace {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps").join(name);
    let path: PathBuf = ["dumpi.tar.zst", "trace.tar.zst"]
        .iter()
        .map(|f| d.join(f))
        .find(|p| p.exists())
        .unwrap_or(d);
    let files = tracelogic_formats::fs::load_paths(&[path]).expect("run files");
    tracelogic_formats::read_trace(files).expect("run trace")
}
