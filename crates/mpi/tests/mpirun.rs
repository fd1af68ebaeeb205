//! `mpirun -n {1,2,4} tracelogic-mpi <analysis> SAMPLE --json` prints what the serial
//! `tracelogic <analysis> SAMPLE --json` prints, byte for byte (timing fields aside), with the
//! same exit code, on
//! DUMPI and OTF2 samples; errors are reported once and end every process. Needs an `mpirun`:
//! Open MPI's by default, another with `TRACELOGIC_MPIRUN` (scripts/test-mpi builds both
//! binaries and runs this under Open MPI, then the topology and matrix checks under MPICH).
#![cfg(feature = "mpi")]

mod common;
use common::{folders, strip_timings};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SAMPLES: [&str; 3] = ["npb-lu.S.8", "npb-bt.S.9", "pipit-ping-pong-otf2"];
const ANALYSES: [&str; 6] = ["summary", "matrix", "profile", "topology", "waits", "replay"];

fn mpi_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tracelogic-mpi"))
}

/// The serial CLI: `TRACELOGIC_SERIAL_CLI` when set (a build without MPI serves every MPI
/// library), else the one beside this binary, built if it is not there yet.
fn serial_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("TRACELOGIC_SERIAL_CLI") {
        return PathBuf::from(path);
    }
    let path = mpi_binary().with_file_name(format!("tracelogic{}", std::env::consts::EXE_SUFFIX));
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "tracelogic"])
            .status()
            .expect("cargo runs");
        assert!(status.success() && path.exists(), "cannot build {}", path.display());
    }
    path
}

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/samples")
        .join(name)
}

/// The launcher (`TRACELOGIC_MPIRUN`, default `mpirun`) and the options it needs to start more
/// processes than cores: Open MPI's `--oversubscribe`; MPICH's Hydra oversubscribes unasked and
/// refuses that option.
fn launcher() -> &'static (String, Vec<&'static str>) {
    static LAUNCHER: std::sync::OnceLock<(String, Vec<&'static str>)> = std::sync::OnceLock::new();
    LAUNCHER.get_or_init(|| {
        let program = std::env::var("TRACELOGIC_MPIRUN").unwrap_or_else(|_| "mpirun".into());
        let version = Command::new(&program)
            .arg("--version")
            .output()
            .expect("the MPI launcher runs");
        let open_mpi = String::from_utf8_lossy(&version.stdout).contains("Open MPI");
        (program, if open_mpi { vec!["--oversubscribe"] } else { Vec::new() })
    })
}

fn mpirun(n: usize, args: &[&str]) -> Output {
    let (program, options) = launcher();
    Command::new(program)
        .args(options)
        .args(["-n", &n.to_string()])
        .arg(mpi_binary())
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("mpirun runs (an MPI installed? scripts/ensure-tools mpi)")
}

/// A JSON report without its timing fields (topology's `timings` and the `milliseconds` of its
/// stages: they differ between two serial runs too).
fn untimed(json: &[u8]) -> Option<serde_json::Value> {
    let mut v: serde_json::Value = serde_json::from_slice(json).ok()?;
    strip_timings(&mut v);
    Some(v)
}

#[test]
fn every_analysis_prints_what_the_serial_cli_prints() {
    let serial = serial_binary();
    for name in SAMPLES {
        let path = sample(name);
        let path = path.to_str().unwrap();
        for analysis in ANALYSES {
            let args = [analysis, path, "--json"];
            let want = Command::new(&serial).args(args).output().unwrap();
            assert!(!want.stdout.is_empty(), "serial {analysis} {name} printed nothing");
            for n in [1, 2, 4] {
                let got = mpirun(n, &args);
                assert!(
                    got.stdout == want.stdout || untimed(&got.stdout) == untimed(&want.stdout),
                    "{analysis} {name} on {n} processes differs from the serial CLI; stderr: {}",
                    String::from_utf8_lossy(&got.stderr)
                );
                assert_eq!(got.status.code(), want.status.code(), "{analysis} {name} on {n}");
            }
        }
    }
}

/// `mpirun -n 4 tracelogic-mpi topology|matrix SAMPLE --json` equals the serial CLI on every
/// bundled sample (every folder of tests/data/samples: DUMPI, OTF2, Paraver, Pipit CSV), exit
/// code included.
#[test]
fn topology_and_matrix_on_four_processes_equal_the_serial_cli_on_every_sample() {
    let serial = serial_binary();
    let names: Vec<String> = folders("samples")
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.len() >= 10, "the bundled samples: {names:?}");
    for name in &names {
        let path = sample(name);
        let path = path.to_str().unwrap();
        for analysis in ["topology", "matrix"] {
            let args = [analysis, path, "--json"];
            let want = Command::new(&serial).args(args).output().unwrap();
            let got = mpirun(4, &args);
            assert_eq!(got.status.code(), want.status.code(), "{analysis} {name}");
            assert!(
                got.stdout == want.stdout || untimed(&got.stdout) == untimed(&want.stdout),
                "{analysis} {name} on 4 processes differs from the serial CLI; stderr: {}",
                String::from_utf8_lossy(&got.stderr)
            );
        }
    }
}

/// The reduced analyses (`summary`, `profile`, `matrix`, `waits`) as text and with selections: the same
/// stdout and exit code as the serial CLI, its stderr once (a selection the trace refuses too).
#[test]
fn reduced_analyses_print_what_the_serial_cli_prints_as_text_and_with_selections() {
    let serial = serial_binary();
    let lu = sample("npb-lu.S.8");
    let otf2 = sample("pipit-ping-pong-otf2");
    let hpcc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps/hpcc-6");
    let (lu, otf2, hpcc) = (lu.to_str().unwrap(), otf2.to_str().unwrap(), hpcc.to_str().unwrap());
    let cases: Vec<Vec<&str>> = vec![
        vec!["summary", lu],
        vec!["summary", otf2],
        vec!["profile", lu],
        vec![
            "profile", lu, "--ranks", "1-5", "--from", "1ms", "--to", "10ms", "--json",
        ],
        vec![
            "profile",
            lu,
            "--kind",
            "send,recv,isend,irecv",
            "--time-bins",
            "7",
            "--json",
        ],
        vec![
            "profile",
            lu,
            "--ranks",
            "2",
            "--from",
            "1ms",
            "--to",
            "10ms",
            "--kind",
            "collective",
        ],
        vec!["profile", lu, "--ranks", "99"],
        vec!["profile", otf2, "--ranks", "1", "--json"],
        vec!["matrix", lu, "--ranks", "0-3"],
        vec!["waits", lu],
        vec!["waits", lu, "--ranks", "0-5", "--from", "1ms", "--to", "10ms", "--json"],
        vec!["waits", otf2, "--top", "3"],
        vec!["waits", hpcc, "--json"],
        // A window where the parts find the serial answer ambiguous (tied late senders of one
        // call, or a collective instance cut by the window): rank 0 computes it serially.
        vec!["waits", hpcc, "--from", "318702235ns", "--to", "796755587ns", "--json"],
    ];
    for args in cases {
        let want = Command::new(&serial).args(&args).output().unwrap();
        for n in [1, 3] {
            let got = mpirun(n, &args);
            assert_eq!(
                String::from_utf8_lossy(&got.stdout),
                String::from_utf8_lossy(&want.stdout),
                "{args:?} on {n} processes; stderr: {}",
                String::from_utf8_lossy(&got.stderr)
            );
            assert_eq!(got.status.code(), want.status.code(), "{args:?} on {n}");
            // What the CLI says on stderr, said once (mpirun adds its own lines on a failure).
            let said = String::from_utf8_lossy(&want.stderr);
            let heard = String::from_utf8_lossy(&got.stderr);
            if !said.trim().is_empty() {
                assert_eq!(heard.matches(said.trim()).count(), 1, "{args:?} on {n}: {heard}");
            }
        }
    }
}

/// `replay` (a parallel replay) as text and JSON with the serial CLI's options and selections,
/// on DUMPI and OTF2 samples: the same stdout and exit code as the serial CLI, its stderr once.
/// Includes a window that cuts messages (deadlocks the parts break as the serial replay does),
/// a run whose collectives a member never reaches (`hpcc-6`: rank 0 replays serially), a
/// selection without calls and a network the CLI refuses.
#[test]
fn replay_prints_what_the_serial_cli_prints_as_text_and_with_options() {
    let serial = serial_binary();
    let (lu, bt, otf2) = (
        sample("npb-lu.S.8"),
        sample("npb-bt.S.9"),
        sample("pipit-ping-pong-otf2"),
    );
    let hpcc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps/hpcc-6");
    let (lu, bt, otf2, hpcc) = (
        lu.to_str().unwrap(),
        bt.to_str().unwrap(),
        otf2.to_str().unwrap(),
        hpcc.to_str().unwrap(),
    );
    let table = std::env::temp_dir().join(format!("tracelogic-mpi-table-{}.txt", std::process::id()));
    std::fs::write(&table, "0 2us\n1024 3us\n1048576 200us\n").unwrap();
    let table = table.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["replay", lu],
        vec!["replay", bt, "--per-rank"],
        vec!["replay", otf2],
        vec!["replay", otf2, "--per-rank", "--json"],
        vec![
            "replay",
            lu,
            "--network",
            "QDR",
            "--network",
            "alpha=3us,beta=0.2ns",
            "--scales",
            "1/2,1,2",
            "--json",
        ],
        vec!["replay", bt, "--table", table, "--recorded-on", "10GbE"],
        vec![
            "replay",
            lu,
            "--ranks",
            "0-5",
            "--from",
            "1ms",
            "--to",
            "10ms",
            "--per-rank",
            "--json",
        ],
        vec!["replay", bt, "--from", "2ms", "--to", "9ms"],
        vec!["replay", lu, "--kind", "p2p", "--json"],
        vec!["replay", hpcc, "--json"],
        vec!["replay", lu, "--from", "99s"],
        vec!["replay", lu, "--recorded-on", "Myrinet"],
    ];
    same_as_serial(&serial, &cases, &[1, 2, 4]);
    std::fs::remove_file(table).ok();
}

/// `topology` of a selection (identified from the matrix rows, no event gathered): the same
/// JSON (timings aside), stderr and exit code as the serial CLI. (The text prints each stage's
/// milliseconds, which differ between two serial runs.)
#[test]
fn topology_of_a_selection_prints_what_the_serial_cli_prints() {
    let serial = serial_binary();
    let (lu, bt, otf2) = (
        sample("npb-lu.S.8"),
        sample("npb-bt.S.9"),
        sample("pipit-ping-pong-otf2"),
    );
    let (lu, bt, otf2) = (lu.to_str().unwrap(), bt.to_str().unwrap(), otf2.to_str().unwrap());
    let cases: Vec<Vec<&str>> = vec![
        vec!["topology", lu, "--kind", "p2p", "--json"],
        vec!["topology", lu, "--ranks", "0-3", "--json"],
        vec!["topology", bt, "--from", "1ms", "--to", "20ms", "--json"],
        vec!["topology", otf2, "--kind", "p2p", "--json"],
        vec!["topology", lu, "--from", "99s", "--json"],
    ];
    same_as_serial(&serial, &cases, &[1, 3]);
}

/// Each of `cases` under `mpirun -n` each of `processes`: the serial CLI's stdout and exit
/// code, its stderr once.
fn same_as_serial(serial: &Path, cases: &[Vec<&str>], processes: &[usize]) {
    for args in cases {
        let want = Command::new(serial).args(args).output().unwrap();
        for &n in processes {
            let got = mpirun(n, args);
            // Topology's timing fields aside (they differ between two serial runs too).
            let untimed_equal = untimed(&got.stdout).is_some() && untimed(&got.stdout) == untimed(&want.stdout);
            if !untimed_equal {
                assert_eq!(
                    String::from_utf8_lossy(&got.stdout),
                    String::from_utf8_lossy(&want.stdout),
                    "{args:?} on {n} processes; stderr: {}",
                    String::from_utf8_lossy(&got.stderr)
                );
            }
            assert_eq!(got.status.code(), want.status.code(), "{args:?} on {n}");
            let said = String::from_utf8_lossy(&want.stderr);
            let heard = String::from_utf8_lossy(&got.stderr);
            if !said.trim().is_empty() {
                assert_eq!(heard.matches(said.trim()).count(), 1, "{args:?} on {n}: {heard}");
            }
        }
    }
}

/// `overview` (each process folds its ranks into an overview builder, rank 0 merges them) on
/// every bundled sample under `mpirun -n 1`, `2` and `4`: the serial CLI's JSON (topology's
/// timings aside) with a few bin counts, its text, stderr once and exit code.
#[test]
fn overview_prints_what_the_serial_cli_prints_on_every_sample() {
    let serial = serial_binary();
    let names: Vec<String> = folders("samples")
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.len() >= 10, "the bundled samples: {names:?}");
    let paths: Vec<String> = names.iter().map(|n| sample(n).to_str().unwrap().to_owned()).collect();
    let mut cases: Vec<Vec<&str>> = Vec::new();
    for p in &paths {
        cases.push(vec!["overview", p, "--json"]);
        cases.push(vec!["overview", p, "--json", "--bins", "6"]);
        cases.push(vec!["overview", p, "--bins", "64"]);
    }
    cases.push(vec!["overview", "/nonexistent/tracelogic-mpi-trace"]);
    same_as_serial(&serial, &cases, &[1, 2, 4]);
}

/// `topology` of the whole run (matrix rows gathered, the ranks placed by their first contacts
/// by parts, the declared Cartesian topologies compared on rank 0; no event gathered) under
/// `mpirun -n 1`, `2` and `4`: the serial CLI's JSON (timings aside), stderr once and exit code,
/// on every bundled sample, the app traces that declare Cartesian topologies, and NPB BT
/// renumbered by `tracelogic convert` as DUMPI and OTF2 (placed by first contacts there).
#[test]
fn whole_run_topology_prints_what_the_serial_cli_prints() {
    let serial = serial_binary();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("samples"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for app in [
        "lammps-melt-12",
        "lammps-melt-27-reorder",
        "otf2-lammps-melt-8",
        "npb-sp.S.16",
    ] {
        dirs.push(root.join("apps").join(app));
    }
    let tmp = std::env::temp_dir().join(format!("tracelogic-mpi-topology-{}", std::process::id()));
    for format in ["dumpi", "otf2"] {
        let out = tmp.join(format!("bt-{format}"));
        let bt = sample("npb-bt.S.9");
        let status = Command::new(&serial)
            .args([
                "convert",
                bt.to_str().unwrap(),
                "--format",
                format,
                "--renumber",
                "random:7",
                "--out",
            ])
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success());
        let placed = Command::new(&serial)
            .args(["topology", out.to_str().unwrap(), "--json"])
            .output()
            .unwrap();
        let placed: serde_json::Value = serde_json::from_slice(&placed.stdout).unwrap();
        assert_eq!(
            placed["placed_by"], "first_contacts",
            "{format}: the test shows nothing"
        );
        dirs.push(out);
    }
    let paths: Vec<String> = dirs.iter().map(|d| d.to_str().unwrap().to_owned()).collect();
    let cases: Vec<Vec<&str>> = paths.iter().map(|p| vec!["topology", p, "--json"]).collect();
    same_as_serial(&serial, &cases, &[1, 2, 4]);
    std::fs::remove_dir_all(tmp).ok();
}

#[test]
fn errors_are_reported_once_and_end_every_process() {
    let missing = "/nonexistent/tracelogic-mpi-trace";
    let want = Command::new(serial_binary())
        .args(["summary", missing])
        .output()
        .unwrap();
    let got = mpirun(4, &["summary", missing]);
    assert_eq!(got.status.code(), Some(2));
    let line = String::from_utf8_lossy(&want.stderr).trim().to_owned();
    let stderr = String::from_utf8_lossy(&got.stderr);
    assert_eq!(stderr.matches(&line).count(), 1, "{stderr}");
}
