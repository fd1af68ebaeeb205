//! On a terminal, an analysis says which stage it is in and for how long, on one stderr line
//! that is cleared before the answer is printed; off a terminal nothing of it is printed.

mod common;
use common::{sample, tracelogic};
use std::path::Path;
use std::process::Command;

/// The stage `tracelogic logical` shows while it builds the logical trace.
const STAGE: &str = "building, verifying and compressing the logical trace… ";

#[test]
fn a_stage_is_shown_on_a_terminal_and_cleared_before_the_answer() {
    // util-linux's `script` runs the command on a pseudo-terminal (stdout and stderr both) and
    // copies what it wrote to our stdout.
    let script = Path::new("/usr/bin/script");
    assert!(
        script.exists(),
        "util-linux's script is needed (Debian: bsdutils, essential)"
    );
    let command = format!(
        "'{}' logical '{}'",
        tracelogic().display(),
        sample("npb-bt.S.9").display()
    );
    let out = Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .env("TRACELOGIC_PROGRESS_AFTER_MS", "0")
        .output()
        .expect("running script");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let shown = text.find(STAGE).unwrap_or_else(|| panic!("no stage line in {text:?}"));
    assert!(text[shown + STAGE.len()..].starts_with("0 s"), "{text:?}");
    // The answer starts on a cleared line, after the last stage line.
    let answer = text.find("Logical trace of").expect("the report");
    assert!(answer > shown, "{text:?}");
    assert!(text[..answer].ends_with("\r\x1b[2K"), "{:?}", &text[..answer]);
}

#[test]
fn nothing_of_it_is_printed_off_a_terminal() {
    let out = Command::new(tracelogic())
        .args(["logical".as_ref(), sample("npb-bt.S.9").as_os_str()])
        .env("TRACELOGIC_PROGRESS_AFTER_MS", "0")
        .output()
        .expect("running tracelogic");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("building, verifying"), "{err}");
    assert!(!err.contains('\r'), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Logical trace of"));
}
