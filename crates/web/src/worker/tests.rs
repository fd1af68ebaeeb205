use super::*;

fn p(stage: &str, done: u64) -> ProgressReport {
    ProgressReport {
        stage: stage.into(),
        bytes_done: done,
        bytes_total: 1000,
    }
}

#[test]
fn progress_is_throttled_to_stages_and_percent_steps() {
    assert!(worth_reporting(None, &p("reading", 0)));
    assert!(!worth_reporting(Some(&p("reading", 0)), &p("reading", 5)));
    assert!(worth_reporting(Some(&p("reading", 0)), &p("reading", 10)));
    assert!(worth_reporting(Some(&p("reading", 5)), &p("matching", 5)));
    assert!(worth_reporting(Some(&p("reading", 995)), &p("reading", 1000)));
    assert!(!worth_reporting(Some(&p("reading", 1000)), &p("reading", 1000)));
}

#[test]
fn inputs_over_the_limit_are_refused_with_both_numbers() {
    assert_eq!(too_large("t", MAX_INPUT_BYTES), None);
    let message = too_large("big.tar", MAX_INPUT_BYTES + 1).unwrap();
    assert!(
        message.starts_with(&format!(
            "big.tar: too large: {} bytes, limit {MAX_INPUT_BYTES}",
            MAX_INPUT_BYTES + 1
        )),
        "{message}"
    );
}

#[test]
fn inputs_over_the_full_load_limit_get_the_overview_when_otf2_and_are_refused_otherwise() {
    let o = OpenOptions {
        full_load_limit: 100,
        ..OpenOptions::default()
    };
    assert_eq!(o.plan("t", 100, true), Plan::Whole);
    assert_eq!(o.plan("t", 100, false), Plan::Whole);
    assert_eq!(o.plan("t", 101, true), Plan::Overview);
    let Plan::TooLarge(m) = o.plan("t", 101, false) else {
        panic!()
    };
    assert!(
        m.starts_with("t: too large: 101 bytes, limit 100") && m.contains("OTF2 folder"),
        "{m}"
    );
    let asked = OpenOptions {
        overview: true,
        ..o.clone()
    };
    assert_eq!(asked.plan("t", 10, false), Plan::Overview, "asked for, under the limit");
    assert_eq!(asked.plan("t", 1000, true), Plan::Overview);
    assert!(matches!(asked.plan("t", 1000, false), Plan::TooLarge(_)));
    let part = Selection {
        ranks: Some(vec![1]),
        ..Selection::default()
    };
    let parted = OpenOptions {
        part: Some(part.clone()),
        ..o.clone()
    };
    assert_eq!(parted.plan("t", 10_000, true), Plan::Part(part.clone()));
    assert_eq!(parted.plan("t", 10, false), Plan::Part(part));
    assert!(matches!(parted.plan("t", 10_000, false), Plan::TooLarge(_)));
    let unbounded = OpenOptions {
        full_load_limit: u64::MAX,
        ..OpenOptions::default()
    };
    assert_eq!(
        unbounded.plan("t", MAX_INPUT_BYTES + 1, true),
        Plan::Overview,
        "never over 1 GiB"
    );
}

#[test]
fn the_fatal_message_reads_back_as_a_failure_for_its_bridge() {
    #[derive(Deserialize)]
    enum Mirror {
        #[allow(dead_code)]
        WorkerLoaded,
        ProcessOutput(HandlerId, Response),
    }
    let id: HandlerId = bincode::deserialize(&7usize.to_le_bytes()).unwrap();
    let Mirror::ProcessOutput(back, Response::Failed(f)) = bincode::deserialize(&fatal_message(id)).unwrap() else {
        panic!("not a failure")
    };
    assert_eq!(back, id);
    assert_eq!(f.message, FATAL_MESSAGE);
    assert!(!f.cancelled);
}

#[test]
fn input_messages_round_trip_through_bincode() {
    let input = Input::Open {
        label: "LU".into(),
        source: FileSource::Handles {
            key: 7,
            names: vec!["a/dumpi-0000.bin".into(), "a/x.meta".into()],
        },
        matrix: MatrixRequest::default(),
        options: OpenOptions {
            part: Some(Selection {
                ranks: Some(vec![0, 3]),
                ..Selection::default()
            }),
            ..OpenOptions::default()
        },
    };
    let bytes = bincode::serialize(&input).unwrap();
    assert_eq!(bincode::deserialize::<Input>(&bytes).unwrap(), input);
}

/// The load's answer reads back on the page whatever the summary holds: its JSON skips an absent
/// `threads`, which a bincode field would not survive (every browser load failed with "invalid
/// value: integer …, expected variant index" when the field was added).
#[test]
fn loaded_answers_round_trip_through_bincode_with_and_without_optional_summary_fields() {
    use crate::protocol::{LoadedTrace, MatrixView};
    for threads in [None, Some("rank 3: 2 threads".to_string())] {
        let summary = tracelogic_engine::summary::Summary {
            threads,
            ranks: 4,
            warnings: vec!["w".into()],
            ..Default::default()
        };
        let answer = Response::Loaded {
            trace: Box::new(LoadedTrace {
                label: "t".into(),
                source: "s".into(),
                files: 1,
                bytes: 10,
                summary,
                workers: 1,
            }),
            matrix: Box::new(MatrixView {
                seq: 0,
                request: MatrixRequest::default(),
                grid: crate::heatmap::Grid {
                    ranks: 4,
                    block: 1,
                    side: 4,
                    values: vec![0; 16],
                    kept: vec![false; 16],
                    min: 0,
                    max: 0,
                },
                nonzero_entries: 0,
                kept_entries: 0,
                removed_entries: 0,
                removed_share: 0.0,
            }),
        };
        let bytes = bincode::serialize(&answer).unwrap();
        assert_eq!(bincode::deserialize::<Response>(&bytes).unwrap(), answer);
    }
}
