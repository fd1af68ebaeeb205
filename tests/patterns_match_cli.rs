//! End-to-end tests of `tracelogic match` with a pattern written for a small grid (extrapolated to
//! the run's identified topology), the shared selection flags, and bad pattern files.

use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;

mod common;

fn run(args: &[&str]) -> Output {
    let args: Vec<&dyn AsRef<std::ffi::OsStr>> = args.iter().map(|a| a as &dyn AsRef<std::ffi::OsStr>).collect();
    common::run(&args)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tracelogic-patterns-match-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Generate a text trace at `out` with `tracelogic generate ARGS --format text`.
fn generate(out: &std::path::Path, args: &[&str]) {
    let mut all = vec!["generate"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "text", "--out", out.to_str().unwrap()]);
    let out = run(&all);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The generator's LU-like wavefront written for the 3x3 grid: forward sweep (receive north,
/// west; send south, east) then the reverse sweep.
const LU_3X3: &str = r#"{"topology": "grid:3x3", "events": {
  "0": ["S3", "S1", "R3", "R1"],
  "1": ["R0", "S4", "S2", "R4", "R2", "S0"],
  "2": ["R1", "S5", "R5", "S1"],
  "3": ["R0", "S6", "S4", "R6", "R4", "S0"],
  "4": ["R1", "R3", "S7", "S5", "R7", "R5", "S1", "S3"],
  "5": ["R2", "R4", "S8", "R8", "S2", "S4"],
  "6": ["R3", "S7", "R7", "S3"],
  "7": ["R4", "R6", "S8", "R8", "S4", "S6"],
  "8": ["R5", "R7", "S5", "S7"]}}"#;

#[test]
fn pattern_for_3x3_extrapolated_to_generated_8x8() {
    let trace = scratch("lu8.txt");
    generate(
        &trace,
        &[
            "--topology",
            "grid:8x8",
            "--numbering",
            "random",
            "--seed",
            "3",
            "--style",
            "wavefront",
            "--iterations",
            "9",
        ],
    );
    let pattern = scratch("lu3x3.json");
    std::fs::write(&pattern, LU_3X3).unwrap();
    let (t, p) = (trace.to_str().unwrap(), pattern.to_str().unwrap());
    let out = run(&["match", t, "--pattern", p, "--max-edits", "0", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["matches"].as_array().unwrap().len(), 9);
    let x = &v["extrapolation"];
    assert_eq!(x["from_topology"], "grid:3x3");
    assert_eq!(x["to_topology"], "8x8 grid");
    assert_eq!(x["classes"].as_array().unwrap().len(), 9);
    assert_eq!(x["orientation"]["pattern"].as_object().unwrap().len(), 64);
    let best = x["orientation_matches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.as_u64() == Some(9))
        .count();
    assert_eq!(best, 1, "{}", x["orientation_matches"]);
    // Text form names the extrapolation; --pattern-topology gives the same answer for a file
    // without a topology line.
    let text = run(&["match", t, "--pattern", p, "--max-edits", "0"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("extrapolated to the run's 8x8 grid") && text.contains("9 occurrences"),
        "{text}"
    );
    let bare = scratch("lu3x3-bare.json");
    std::fs::write(&bare, LU_3X3.replace(r#""topology": "grid:3x3", "#, "")).unwrap();
    let out = run(&[
        "match",
        t,
        "--pattern",
        bare.to_str().unwrap(),
        "--pattern-topology",
        "grid:3x3",
        "--json",
    ]);
    let w: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(w["matches"], v["matches"]);
    // Without the topology the 3x3 ranks are taken as the run's own ranks: nothing matches.
    let out = run(&["match", t, "--pattern", bare.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let w: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(w.get("extrapolation").is_none());
    // Selection: only the first half of the run (by time) holds fewer iterations.
    let out = run(&["match", t, "--pattern", p, "--to", "2ms", "--json"]);
    let w: Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = w["matches"].as_array().unwrap().len();
    assert!((1..9).contains(&n), "{n}");
}

#[test]
fn bad_extrapolation_inputs_are_named() {
    let trace = scratch("t44.txt");
    generate(&trace, &["--topology", "torus:5x4", "--iterations", "3"]);
    let t = trace.to_str().unwrap();
    let not_neighbour = scratch("far.json");
    std::fs::write(&not_neighbour, r#"{"topology": "grid:3x3", "events": {"0": ["S8"]}}"#).unwrap();
    let out = run(&["match", t, "--pattern", not_neighbour.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("far.json") && err.contains("rank 8 is not a neighbour of rank 0"),
        "{err}"
    );
    let tree = scratch("tree.json");
    std::fs::write(&tree, r#"{"topology": "binary-tree:7", "events": {"0": ["S1"]}}"#).unwrap();
    let out = run(&["match", t, "--pattern", tree.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tree.json") && err.contains("Cartesian"), "{err}");
    let cube = scratch("cube.json");
    std::fs::write(&cube, r#"{"topology": "grid:3x3x3", "events": {"13": ["S14"]}}"#).unwrap();
    let out = run(&["match", t, "--pattern", cube.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("3 dimensions") && err.contains("2"), "{err}");
}

#[test]
fn a_pattern_naming_a_rank_outside_the_run_is_refused() {
    let trace = scratch("t8.txt");
    generate(&trace, &["--topology", "torus:4x2", "--iterations", "2"]);
    let t = trace.to_str().unwrap();
    let outside = scratch("s99.json");
    std::fs::write(&outside, r#"{"events": {"0": ["S1", "S99"]}}"#).unwrap();
    let out = run(&["match", t, "--pattern", outside.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("s99.json") && err.contains("`S99`") && err.contains("8 ranks"),
        "{err}"
    );
    let absent = scratch("absent.json");
    std::fs::write(
        &absent,
        r#"{"events": {"0": ["S1", "S1", "S1", "S1", "S1", "S1", "S1"]}}"#,
    )
    .unwrap();
    let out = run(&["match", t, "--pattern", absent.to_str().unwrap(), "--max-edits", "0"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not found with at most 0 edits"), "{err}");
    let inside = scratch("s1.json");
    std::fs::write(&inside, r#"{"events": {"0": ["S1"]}}"#).unwrap();
    let out = run(&["match", t, "--pattern", inside.to_str().unwrap()]);
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_wavefront_is_found_whatever_the_rank_numbering() {
    for numbering in ["row-major", "random"] {
        let trace = scratch(&format!("wf-{numbering}.txt"));
        generate(
            &trace,
            &[
                "--topology",
                "grid:4x4",
                "--style",
                "wavefront",
                "--iterations",
                "12",
                "--numbering",
                numbering,
            ],
        );
        let t = trace.to_str().unwrap();
        let out = run(&[
            "match",
            t,
            "--wavefront",
            "4x4:tl:vertical",
            "--max-edits",
            "0",
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{numbering}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["matches"].as_array().map(Vec::len), Some(12), "{numbering}");
    }
}

/// The halo exchange of a 3x3x3 torus: receive from -x, +x, -y, +y, -z, +z, then send to +x,
/// -x, +y, -y, +z, -z (the generator's order), rank `x + 3y + 9z`.
fn halo_3x3x3() -> String {
    let at = |x: i32, y: i32, z: i32| x.rem_euclid(3) + 3 * y.rem_euclid(3) + 9 * z.rem_euclid(3);
    let mut ranks = Vec::new();
    for z in 0..3 {
        for y in 0..3 {
            for x in 0..3 {
                let recv = [(-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)];
                let send = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)];
                let events: Vec<String> = recv
                    .iter()
                    .map(|(a, b, c)| format!("\"R{}\"", at(x + a, y + b, z + c)))
                    .chain(send.iter().map(|(a, b, c)| format!("\"S{}\"", at(x + a, y + b, z + c))))
                    .collect();
                ranks.push(format!("\"{}\": [{}]", at(x, y, z), events.join(", ")));
            }
        }
    }
    format!(r#"{{"topology": "torus:3x3x3", "events": {{{}}}}}"#, ranks.join(", "))
}

/// A 4x4x4 torus is isomorphic to the 6-cube, which identification reports as the match; the
/// pattern is extrapolated to the torus the ranks' directions agree on (as the logical trace
/// places it), not refused as non-Cartesian.
#[test]
fn pattern_extrapolated_to_a_torus_identified_as_its_isomorphic_hypercube() {
    let trace = scratch("t444.txt");
    generate(
        &trace,
        &[
            "--topology",
            "torus:4x4x4",
            "--numbering",
            "random",
            "--seed",
            "5",
            "--iterations",
            "3",
        ],
    );
    let pattern = scratch("halo333.json");
    std::fs::write(&pattern, halo_3x3x3()).unwrap();
    let (t, p) = (trace.to_str().unwrap(), pattern.to_str().unwrap());
    let out = run(&["match", t, "--pattern", p, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let x = &v["extrapolation"];
    assert_eq!(x["to_topology"], "4x4x4 torus");
    assert_eq!(x["directions_from"]["topology"], "4x4x4 torus");
    assert_ne!(x["directions_from"]["identified"], "4x4x4 torus");
    assert_eq!(v["matches"].as_array().unwrap().len(), 3, "{}", v["matches"]);
    assert_eq!(v["rank_matches"].as_object().unwrap().len(), 64);
    let text = run(&["match", t, "--pattern", p]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("extrapolated to the run's 4x4x4 torus"), "{text}");
    assert!(
        text.contains("hypercube"),
        "the reason names the identified match: {text}"
    );
}
