use super::*;
use tracelogic_analysis::patterns::TimelineSpan;

#[test]
fn compact_paths_hold_one_mark_per_point_and_segment() {
    let d = dots_path([(10.0, 20.0), (30.5, 40.0)].into_iter());
    assert_eq!(
        d,
        "M6.0 20.0a4 4 0 1 0 8 0a4 4 0 1 0 -8 0M26.5 40.0a4 4 0 1 0 8 0a4 4 0 1 0 -8 0"
    );
    let s = segments_path([((1.0, 2.0), (3.0, 4.0)), ((5.0, 6.0), (7.0, 8.0))].into_iter());
    assert_eq!(s, "M1.0 2.0L3.0 4.0M5.0 6.0L7.0 8.0");
    for v in [0.0, 0.04, 1.25, 99.96, 1234.5, -3.5, -0.25, 16.7, 6553.55] {
        let mut d = String::new();
        push_tenths(&mut d, v);
        let want = format!("{:.1}", (v * 10.0f64).round() / 10.0);
        assert_eq!(d, want, "{v}");
    }
    assert_eq!(event_kind("S3"), "send");
    assert_eq!(event_kind("R12"), "recv");
    assert_eq!(event_kind("MPI_Barrier"), "other");
}

#[test]
fn rank_lists_are_ranges_cut_after_a_few() {
    let all: Vec<u32> = (0..4096).collect();
    assert_eq!(rank_list(&all, LISTED_RANK_RUNS), "0-4095");
    assert_eq!(rank_list(&[5, 0, 1, 2, 3, 8, 10, 11, 12], 12), "0-3, 5, 8, 10-12");
    assert_eq!(rank_list(&[7], 12), "7");
    assert_eq!(rank_list(&[], 12), "");
    let every_other: Vec<u32> = (0..4096).step_by(2).collect();
    let text = rank_list(&every_other, 3);
    assert_eq!(text, "0, 2, 4, … (2,048 ranks)");
    assert!(
        rank_list(&every_other, LISTED_RANK_RUNS).len() < 100,
        "a heading line, not a page"
    );
    assert_eq!(
        rank_list(&[u32::MAX - 1, u32::MAX], 12),
        format!("{}-{}", u32::MAX - 1, u32::MAX)
    );
    assert_eq!(grouped(1_234_567), "1,234,567");
    assert_eq!(grouped(999), "999");
}

#[test]
fn view_box_zooms_and_pans_inside_the_drawing() {
    assert_eq!(view_box(800.0, 200.0, 1.0, 0.7, 0.3), "0.0 0.0 800.0 200.0");
    assert_eq!(view_box(800.0, 200.0, 2.0, 0.0, 0.0), "0.0 0.0 400.0 100.0");
    assert_eq!(view_box(800.0, 200.0, 2.0, 1.0, 1.0), "400.0 100.0 400.0 100.0");
    assert_eq!(
        view_box(800.0, 200.0, 1000.0, 2.0, -1.0),
        view_box(800.0, 200.0, MAX_ZOOM, 1.0, 0.0)
    );
}

#[test]
fn lane_rects_merge_what_a_pixel_cannot_separate() {
    let span = |start, end, pattern| TimelineSpan { start, end, pattern };
    // 1000 ns over 100 px: 10 ns a pixel.
    let spans = [
        span(0, 100, 0),
        span(105, 200, 0),
        span(300, 400, 0),
        span(402, 500, 1),
        span(990, 1000, 1),
    ];
    let r = lane_rects(&spans, 0, 1000, 100.0);
    assert_eq!(
        r,
        vec![(0.0, 20.0, 0), (30.0, 40.0, 0), (40.2, 50.0, 1), (99.0, 100.0, 1)]
    );
    // A zero-length span still shows half a pixel.
    assert_eq!(lane_rects(&[span(500, 500, 3)], 0, 1000, 100.0), vec![(50.0, 50.5, 3)]);
    assert_eq!(colour(0), PALETTE[0]);
    assert_eq!(colour(10), OTHER_COLOUR);
}

/// A loop's pattern names its forms with their counts; a pattern of one form has no note.
#[test]
fn variants_note_counts_each_form() {
    use tracelogic_analysis::patterns::PatternVariant;
    let form = |occurrences: usize, extra_events: i64| PatternVariant {
        occurrences,
        events: BTreeMap::new(),
        extra_events,
    };
    let mut p = CommunicationPattern {
        id: 0,
        ranks: vec![0, 1],
        events: BTreeMap::new(),
        occurrences: 50,
        positions: Vec::new(),
        spans: Vec::new(),
        first_events: BTreeMap::new(),
        from_rank_patterns: true,
        events_covered: 0,
        variants: Vec::new(),
    };
    assert_eq!(variants_note(&p), None);
    p.variants = vec![form(43, 0), form(5, 192), form(2, -4)];
    assert_eq!(
        variants_note(&p).as_deref(),
        Some("Iterations of one loop in 3 forms: 43 as listed, 5 with 192 more events, 2 with 4 fewer events.")
    );
}

/// On NAS MG with 64 ranks the list shows the patterns covering ≥ 1 % of the events
/// (counted here from the patterns' own `events_covered`), the toggle every one, and a
/// hidden pattern selected elsewhere stays listed.
#[test]
fn the_list_hides_what_covers_little_until_shown_all() {
    use tracelogic_synth::{Clock, NasBenchmark, NasClass, NasSpec, Numbering};
    let spec = NasSpec {
        benchmark: NasBenchmark::Mg,
        class: NasClass::S,
        ranks: 64,
        iterations: None,
        numbering: Numbering::RowMajor,
        seed: 0,
        clock: Clock::default(),
    };
    let session = crate::session::Session::new(tracelogic_synth::generate_nas(&spec).unwrap().0);
    let r: PatternsResult = crate::session::tests::answer(session.analyse(&crate::protocol::AnalysisRequest::Patterns));
    let big: Vec<usize> = r
        .patterns
        .iter()
        .filter(|p| p.events_covered as f64 >= 0.01 * r.events as f64)
        .map(|p| p.id)
        .collect();
    let ids = |v: Vec<&CommunicationPattern>| v.iter().map(|p| p.id).collect::<Vec<_>>();
    assert!(big.len() < r.patterns.len(), "MG on 64 ranks has one-off exchanges");
    assert_eq!(ids(listed(&r, false, None)), big);
    assert_eq!(listed(&r, true, None).len(), r.patterns.len());
    let hidden = r.patterns.iter().map(|p| p.id).find(|id| !big.contains(id)).unwrap();
    assert_eq!(ids(listed(&r, false, Some(hidden))).last(), Some(&hidden));
    let note = hidden_note(&r).unwrap();
    assert!(
        note.starts_with(&format!("{} more patterns covering ", r.patterns.len() - big.len())),
        "{note}"
    );
    // The repeating pattern that explains most comes first (the default selection).
    assert!(!r.patterns[0].repeats_no_form());
    assert!(r
        .patterns
        .iter()
        .filter(|p| !p.repeats_no_form())
        .all(|p| p.events_covered <= r.patterns[0].events_covered));
    // A report saved before the split existed lists every pattern.
    let old = PatternsResult {
        shown_patterns: 0,
        hidden_patterns: 0,
        ..r.clone()
    };
    assert_eq!(listed(&old, false, None).len(), r.patterns.len());
}

#[test]
fn arrows_pair_each_send_with_its_receive_in_order() {
    let session = crate::session::Session::new(crate::session::tests::sample_trace("npb-lu.S.8"));
    let result: PatternsResult =
        crate::session::tests::answer(session.analyse(&crate::protocol::AnalysisRequest::Patterns));
    assert!(!result.patterns.is_empty());
    for p in &result.patterns {
        for ((a, i), (b, j)) in arrows(p) {
            assert_eq!(peer_of(&p.events[&a][i]), Some(('S', b)));
            assert_eq!(peer_of(&p.events[&b][j]), Some(('R', a)));
        }
        let sends = p
            .events
            .values()
            .flatten()
            .filter(|e| matches!(peer_of(e), Some(('S', _))))
            .count();
        let recvs = p
            .events
            .values()
            .flatten()
            .filter(|e| matches!(peer_of(e), Some(('R', _))))
            .count();
        assert!(arrows(p).len() <= sends.min(recvs));
    }
    let first = &result.patterns[0];
    assert!(!arrows(first).is_empty(), "pattern 0 of LU exchanges messages");
}
