//! End-to-end tests of what `tracelogic phases`, `patterns` and `topology` print of the fields
//! the analyses gained: each phase's summary, imbalance and the merge of the thesis' leaves; the
//! patterns hidden by default; the Cartesian topology a program declared. Printed lines and JSON
//! are checked against the analysis called directly (not through the CLI's printer) and against
//! the application's own log.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases_with, PhaseAnalysis, PhaseOptions};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::match_messages;

mod common;

fn run(args: &[&str]) -> Output {
    let args: Vec<&dyn AsRef<std::ffi::OsStr>> = args.iter().map(|a| a as &dyn AsRef<std::ffi::OsStr>).collect();
    common::run(&args)
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn app(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps").join(name)
}

/// The phases of `path` found by the analysis crate directly, at significance `alpha`.
fn direct_phases(path: &Path, alpha: f64) -> PhaseAnalysis {
    let trace = read_trace(load_paths(&[path.to_path_buf()]).unwrap()).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let opts = PhaseOptions {
        significance: alpha,
        ..PhaseOptions::default()
    };
    detect_phases_with(&trace, &events, &a.communication, &opts)
}

#[test]
fn phases_print_the_merge_and_what_each_phase_does() {
    let hpcc = app("hpcc-4");
    let p = hpcc.to_str().unwrap();
    let direct = direct_phases(&hpcc, 0.01);
    let text = stdout(&run(&["phases", p]));
    let header = text.lines().next().unwrap();
    assert_eq!(
        header,
        format!(
            "{} phases from {} leaves (boundaries significant at α = 0.01)",
            direct.phases.len(),
            direct.leaves
        )
    );
    assert!(direct.leaves >= direct.phases.len());
    for (k, ph) in direct.phases.iter().enumerate() {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("phase {k} [{}..{}): ", ph.start, ph.end)))
            .unwrap_or_else(|| panic!("no line for phase {k} in\n{text}"));
        let summary = ph.summary();
        if !summary.is_empty() {
            assert!(line.contains(&summary), "{line} lacks {summary}");
        }
        if let Some(im) = &ph.imbalance {
            assert!(line.contains(&format!("imbalance {:.2}", im.max_over_mean)), "{line}");
            for r in &im.late {
                assert!(line.contains(&r.to_string()), "{line} lacks late rank {r}");
            }
        }
    }
    // HPCC's own log: its LatencyBandwidth section (ping-pongs between pairs of ranks) is most
    // of the run; the phase at its middle exchanges point to point.
    let sections = std::fs::read_to_string(hpcc.join("expected/sections.tsv")).unwrap();
    let lb: Vec<f64> = sections
        .lines()
        .find(|l| l.starts_with("LatencyBandwidth\t"))
        .unwrap()
        .split('\t')
        .skip(1)
        .take(2)
        .map(|v| v.parse().unwrap())
        .collect();
    let json: Value = common::json(&run(&["phases", p, "--json"]));
    assert_eq!(json["leaves"], direct.leaves);
    assert_eq!(json["significance"], 0.01);
    let phases = json["phases"].as_array().unwrap();
    assert_eq!(phases.len(), direct.phases.len());
    for (j, ph) in phases.iter().zip(&direct.phases) {
        assert_eq!(ph_label(j), ph.topology.as_ref().map(|t| t.label.clone()));
        assert_eq!(
            j_collectives(j),
            ph.collectives.iter().map(|c| c.0.clone()).collect::<Vec<_>>()
        );
        match &ph.imbalance {
            Some(im) => assert!((j["imbalance"]["max_over_mean"].as_f64().unwrap() - im.max_over_mean).abs() < 1e-12),
            None => assert!(j["imbalance"].is_null()),
        }
    }
    // The section level (docs/phases.md, "Sections"): one text line and one JSON entry each,
    // as the analysis gives them.
    assert!(!direct.sections.is_empty() && direct.sections.len() < direct.phases.len());
    assert!(
        text.contains(&format!("{} sections (", direct.sections.len())),
        "{text}"
    );
    let js = json["sections"].as_array().unwrap();
    assert_eq!(js.len(), direct.sections.len());
    for (k, (j, s)) in js.iter().zip(&direct.sections).enumerate() {
        assert_eq!(j["phases"][0], s.phases.0);
        assert_eq!(j["phases"][1], s.phases.1);
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("section {k}: phase")))
            .unwrap_or_else(|| panic!("no line for section {k} in\n{text}"));
        // Named by its own communication graph.
        assert!(line.ends_with(&format!(": {}", s.summary())), "{line}");
        assert_eq!(
            j["topology"]["label"].as_str().map(str::to_owned),
            s.topology.as_ref().map(|t| t.label.clone())
        );
    }
    let trace_start = {
        let trace = read_trace(load_paths(std::slice::from_ref(&hpcc)).unwrap()).unwrap();
        trace.span().0
    };
    let mid = trace_start + ((lb[0] + lb[1]) / 2.0 * 1e9) as u64;
    let at_mid = direct
        .phases
        .iter()
        .find(|ph| ph.time.0 <= mid && mid < ph.time.1)
        .expect("a phase at the middle of LatencyBandwidth");
    let t = at_mid.topology.as_ref().expect("described phases");
    assert!(t.ranks >= 2 && t.messages > 0, "{:?}", at_mid.summary());
}

fn ph_label(j: &Value) -> Option<String> {
    j["topology"]["label"].as_str().map(str::to_owned)
}

fn j_collectives(j: &Value) -> Vec<String> {
    j["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c[0].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn phases_leaves_flag_keeps_the_thesis_leaves() {
    let hpcc = app("hpcc-4");
    let p = hpcc.to_str().unwrap();
    let merged: Value = common::json(&run(&["phases", p, "--json"]));
    let leaves: Value = common::json(&run(&["phases", p, "--leaves", "--json"]));
    let alpha1: Value = common::json(&run(&["phases", p, "--significance", "1", "--json"]));
    assert_eq!(
        leaves["phases"].as_array().unwrap().len(),
        merged["leaves"].as_u64().unwrap() as usize
    );
    assert_eq!(leaves["significance"], 1.0);
    assert_eq!(leaves["phases"], alpha1["phases"]);
    // Every unmerged phase is one leaf; the merged phases hold them all.
    assert!(leaves["phases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|ph| ph["leaves"].as_array().unwrap().len() == 1));
    let held: usize = merged["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|ph| ph["leaves"].as_array().unwrap().len())
        .sum();
    assert_eq!(held, merged["leaves"].as_u64().unwrap() as usize);
    let text = stdout(&run(&["phases", p, "--leaves"]));
    assert!(
        text.starts_with(&format!("{} phases: the thesis' leaves, not merged", merged["leaves"])),
        "{text}"
    );
    for bad in ["0", "-0.5", "2", "nan"] {
        let flag = format!("--significance={bad}");
        let o = run(&["phases", p, &flag]);
        assert!(!o.status.success(), "--significance {bad} accepted");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("significance"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn patterns_hide_those_covering_little_of_nas_mg() {
    let dir = std::env::temp_dir().join(format!("tracelogic-cli-shells-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("mg64.txt");
    let out = run(&[
        "generate",
        "--nas",
        "mg",
        "--ranks",
        "64",
        "--format",
        "text",
        "--out",
        trace.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = trace.to_str().unwrap();
    let v: Value = common::json(&run(&["patterns", t, "--json"]));
    let all = v["communication_patterns"].as_array().unwrap();
    let events = v["events"].as_u64().unwrap();
    let (shown, hidden) = (
        v["shown_patterns"].as_u64().unwrap() as usize,
        v["hidden_patterns"].as_u64().unwrap() as usize,
    );
    assert!(hidden > 0, "NAS MG on 64 ranks has one-off exchanges between two ranks");
    assert_eq!(shown + hidden, all.len());
    // Brute force over the listed patterns: the hidden ones are exactly those covering less
    // than 1 % of the events, and they come last.
    let covered = |p: &Value| p["events_covered"].as_u64().unwrap();
    let small: Vec<&Value> = all
        .iter()
        .filter(|p| (covered(p) as f64) < 0.01 * events as f64)
        .collect();
    assert_eq!(small.len(), hidden);
    assert!(all[..shown].iter().all(|p| covered(p) as f64 >= 0.01 * events as f64));
    let hidden_events: u64 = small.iter().map(|p| covered(p)).sum();
    assert_eq!(v["hidden_events"], hidden_events);
    assert!((v["hidden_share"].as_f64().unwrap() - hidden_events as f64 / events as f64).abs() < 1e-12);
    assert_eq!(v["min_share"], 0.01);
    let text = stdout(&run(&["patterns", t]));
    let line = format!(
        "{hidden} more patterns covering {:.1} % of events hidden (--all shows them)",
        100.0 * hidden_events as f64 / events as f64
    );
    assert!(text.contains(&line), "{line} not in\n{text}");
    let ids = |text: &str| -> Vec<u64> {
        let table = text.split("per-rank patterns").next().unwrap();
        table
            .lines()
            .skip(2)
            .filter(|l| !l.contains(" more patterns covering "))
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect()
    };
    let listed = ids(&text);
    assert_eq!(listed.len(), shown.min(30));
    let every = stdout(&run(&["patterns", t, "--all"]));
    assert!(!every.contains("hidden (--all shows them)"));
    assert_eq!(ids(&every).len(), all.len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A LAMMPS input of three stages (minimisation, `run` 20, `run` 20 with a longer cutoff;
/// `expected/stages.tsv` dates them from the log's flushes, independently of the trace): the
/// stage boundaries (docs/phases.md, step 6) are said in the header, on their phases' lines and
/// in the JSON alike, and every gap between two logged stages holds one.
#[test]
fn phases_say_where_the_loop_stopped_between_the_logged_stages() {
    let dir = app("lammps-melt-phases-8");
    let p = dir.to_str().unwrap();
    let text = stdout(&run(&["phases", p]));
    let json: Value = common::json(&run(&["phases", p, "--json"]));
    let trace = read_trace(load_paths(std::slice::from_ref(&dir)).unwrap()).unwrap();
    let (t0, t1) = trace.span();
    let tol = (t1 - t0) / 100;
    let cuts: Vec<u64> = json["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|ph| ph["boundary"]["stage"] == Value::Bool(true))
        .map(|ph| ph["time"][0].as_u64().unwrap() - t0)
        .collect();
    assert!(!cuts.is_empty());
    assert!(
        text.lines().next().unwrap().ends_with(&format!(
            "; {} stage boundaries at a barrier every rank met)",
            cuts.len()
        )),
        "{text}"
    );
    let marked = text
        .lines()
        .filter(|l| l.contains("new stage: every rank met at a barrier"))
        .count();
    assert_eq!(marked, cuts.len(), "{text}");
    let stages: Vec<(u64, u64)> = std::fs::read_to_string(dir.join("expected/stages.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("stage"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let s = |i: usize| (f[i].parse::<f64>().unwrap() * 1e9) as u64;
            (s(4), s(5))
        })
        .collect();
    assert_eq!(stages.len(), 3);
    for w in stages.windows(2) {
        assert!(
            cuts.iter().any(|&c| c > w[0].0 + tol && c <= w[1].0 + tol),
            "no stage boundary between the stages beginning at {} and {} ns: {cuts:?}",
            w[0].0,
            w[1].0
        );
    }
}
