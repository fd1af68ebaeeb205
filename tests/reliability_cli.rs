//! End to end: a panic inside a subcommand is caught at the CLI boundary and reported as an
//! internal error (exit 3) naming what was being done, without a Rust backtrace; Rust's own
//! report comes back only when `TRACELOGIC_BACKTRACE` asks for it.
//!
//! The panic is requested with the test-only variable `TRACELOGIC_TEST_PANIC=<subcommand>`.

use std::process::{Command, Output};

mod common;
use common::{sample, tracelogic};

fn run(subcommand: &str, panic_in: Option<&str>, backtrace: bool) -> Output {
    let mut cmd = Command::new(tracelogic());
    cmd.arg(subcommand).arg(sample("npb-lu.S.8")).arg("--json");
    cmd.env_remove("TRACELOGIC_TEST_PANIC")
        .env_remove("TRACELOGIC_BACKTRACE")
        .env_remove("RUST_BACKTRACE");
    if let Some(p) = panic_in {
        cmd.env("TRACELOGIC_TEST_PANIC", p);
    }
    if backtrace {
        cmd.env("TRACELOGIC_BACKTRACE", "1");
    }
    cmd.output().unwrap()
}

#[test]
fn a_panic_in_a_subcommand_exits_3_with_one_line_naming_the_stage() {
    for sub in ["summary", "topology", "patterns"] {
        let o = run(sub, Some(sub), false);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{sub}: stderr {err}");
        assert!(o.stdout.is_empty(), "{sub}: nothing half-printed on stdout");
        assert!(err.contains("internal error"), "{sub}: {err}");
        assert!(
            err.contains(&format!("running `{sub}`")),
            "{sub}: the stage is named: {err}"
        );
        assert!(
            err.contains("deliberate panic"),
            "{sub}: the panic message is kept: {err}"
        );
        assert!(
            !err.contains("stack backtrace") && !err.contains("RUST_BACKTRACE"),
            "{sub}: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{sub}: one line: {err}");
    }
}

#[test]
fn the_trigger_only_fires_for_its_subcommand() {
    let o = run("summary", Some("topology"), false);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(serde_json::from_slice::<serde_json::Value>(&o.stdout).is_ok());
}

#[test]
fn tracelogic_backtrace_restores_rusts_own_report() {
    let o = run("summary", Some("summary"), true);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("panicked at"), "Rust's report is printed: {err}");
}

/// Found by fuzzing (a rank count raised in a trace's header): a run of many declared ranks
/// with no identified topology made `logical` build rank-offset tables of every rank to every
/// other, ranks² entries (10,000 ranks: out of memory, an abort). Past
/// `RANK_OFFSETS_MAX_RANKS` it is a clear refusal naming the file, at once; up to it, the
/// logical trace is built.
#[test]
fn logical_refuses_rank_offsets_past_their_limit_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let limit = tracelogic_analysis::logical::RANK_OFFSETS_MAX_RANKS;
    for (ranks, refused) in [(limit + 1, true), (64, false)] {
        let path = dir.path().join(format!("pp-{ranks}.txt"));
        let text = format!(
            "#tracelogic-text 1\nranks {ranks}\n0 0 1us MPI_Init\n1 0 1us MPI_Init\n\
             0 2us 3us MPI_Send peer=1 tag=7 bytes=1024\n1 2us 3us MPI_Recv peer=0 tag=7 bytes=1024\n"
        );
        std::fs::write(&path, text).unwrap();
        let o = Command::new(tracelogic()).arg("logical").arg(&path).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        if refused {
            assert_eq!(o.status.code(), Some(1), "{err}");
            assert!(
                err.contains(&format!("pp-{ranks}.txt")) && err.contains(&format!("at most {limit} ranks")),
                "{err}"
            );
        } else {
            assert!(o.status.success(), "{err}");
        }
    }
}

/// Found by fuzzing: a trace whose receives wait for sends posted after them (each rank
/// receives before it sends) has no critical path; the error named no file.
#[test]
fn critical_path_of_a_cyclic_trace_is_an_input_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cycle.txt");
    std::fs::write(
        &path,
        "#tracelogic-text 1\nranks 2\n0 0 1us MPI_Recv peer=1 tag=7 bytes=8\n1 0 1us MPI_Recv peer=0 tag=7 bytes=8\n\
         0 2us 3us MPI_Send peer=1 tag=7 bytes=8\n1 2us 3us MPI_Send peer=0 tag=7 bytes=8\n",
    )
    .unwrap();
    let o = Command::new(tracelogic())
        .arg("critical-path")
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cycle.txt: ") && err.contains("form a cycle"), "{err}");
}
