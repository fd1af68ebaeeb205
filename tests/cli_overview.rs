//! `tracelogic overview` and the partial loads it leads to, end to end on the real samples: the
//! streamed overview's counts and matrix are `summary`'s and `matrix`'s, and `phases --ranks` on
//! an OTF2 folder (which reads only those ranks' event files) answers as on the trace read whole.

mod common;
use common::{code, json, run, sample, stderr};

#[test]
fn overview_json_agrees_with_summary_and_matrix() {
    for id in ["pyotf2-generated-4rank", "pipit-ping-pong-otf2", "npb-lu.S.8"] {
        let dir = sample(id);
        let o = run(&[&"overview", &dir, &"--json", &"--bins", &"16"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let v = json(&o);
        let s = run(&[&"summary", &dir, &"--json"]);
        let s = json(&s);
        for field in [
            "ranks",
            "calls",
            "calls_per_rank",
            "calls_by_kind",
            "p2p_bytes",
            "p2p_messages",
            "collective_ops",
            "start_ns",
            "end_ns",
        ] {
            assert_eq!(v[field], s[field], "{id} {field}");
        }
        assert_eq!(v["streamed"], id != "npb-lu.S.8", "{id}");
        assert_eq!(v["activity"]["bins"], 16);
        assert_eq!(
            v["activity"]["rank_mpi_permille"].as_array().unwrap().len() as u64,
            v["ranks"].as_u64().unwrap()
        );
        let text = run(&[&"overview", &dir]);
        assert_eq!(code(&text), 0, "{}", stderr(&text));
        let text = String::from_utf8_lossy(&text.stdout).into_owned();
        assert!(text.contains("phase sketch") && text.contains("--ranks"), "{text}");
    }
}

#[test]
fn a_rank_selection_on_an_otf2_folder_reads_only_that_part_and_answers_the_same() {
    let dir = sample("pyotf2-generated-4rank");
    let args = |extra: &[&str]| {
        let mut a: Vec<String> = vec!["phases".into(), dir.display().to_string(), "--json".into()];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let part = args(&["--ranks", "1-2"]);
    let part: Vec<&dyn AsRef<std::ffi::OsStr>> = part.iter().map(|s| s as _).collect();
    let o = run(&part);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // The same selection through a communicator reads the trace whole.
    let whole = args(&["--ranks", "1-2", "--comm", "0"]);
    let whole: Vec<&dyn AsRef<std::ffi::OsStr>> = whole.iter().map(|s| s as _).collect();
    let w = run(&whole);
    assert_eq!(code(&w), 0, "{}", stderr(&w));
    let (mut a, mut b) = (json(&o), json(&w));
    a["selection"]["comm"] = serde_json::Value::Null;
    b["selection"]["comm"] = serde_json::Value::Null;
    assert_eq!(a, b);
}
