use super::*;
use crate::protocol::{AnalysisRequest, FromAnswer, PatternsReport, PhasesReport, SearchReport};
use crate::samples::{find, SAMPLES};
use std::path::Path;
use tracelogic_engine::matrix::{CommMatrix, Metric};

/// The bundled sample `id`, read.
pub(crate) fn sample_trace(id: &str) -> Trace {
    let files = sample_files(id);
    tracelogic_formats::read_trace(files.into_iter().map(|f| InputFile::new(f.name, f.bytes)).collect()).unwrap()
}

/// The report an answer carries.
pub(crate) fn answer<T: FromAnswer>(r: Result<Answer, String>) -> T {
    T::from_answer(&r.unwrap_or_else(|e| panic!("{e}"))).expect("an answer of the kind asked")
}

/// The bundled sample `id` as the worker receives it.
pub(crate) fn sample_files(id: &str) -> Vec<WireFile> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web/samples").join(id);
    find(id)
        .unwrap()
        .files
        .iter()
        .map(|f| WireFile {
            name: format!("{id}/{f}"),
            bytes: std::fs::read(root.join(f)).unwrap(),
        })
        .collect()
}

fn load(id: &str, files: Vec<WireFile>) -> (Result<Loaded, Failure>, Vec<ProgressReport>) {
    let mut reports = Vec::new();
    let result = Session::load(id, files, &MatrixRequest::default(), &mut |p| {
        reports.push(p);
        true
    });
    (result, reports)
}

#[test]
fn lu_sample_loads_with_summary_and_matrix() {
    let files = sample_files("npb-lu.S.8");
    let total: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    let (result, reports) = load("LU", files);
    let loaded = result.unwrap();
    let s = &loaded.trace.summary;
    assert_eq!(s.format, "dumpi");
    assert_eq!(s.ranks, 8);
    assert_eq!(s.calls, s.calls_per_rank.iter().sum::<u64>());
    assert_eq!(s.calls, loaded.session.trace().num_calls());
    assert_eq!((loaded.trace.files, loaded.trace.bytes), (9, total));
    let m = &loaded.matrix;
    assert_eq!((m.grid.ranks, m.grid.side, m.grid.block), (8, 8, 1));
    assert_eq!(m.request, MatrixRequest::default());
    assert_eq!(m.grid.values.iter().sum::<u64>(), s.p2p_bytes);
    let full = CommMatrix::from_trace(loaded.session.trace(), &Default::default());
    assert_eq!(m.grid.values, full.dense_rows(Metric::Bytes).concat());
    assert_eq!(m.nonzero_entries, full.entries().filter(|e| e.bytes > 0).count() as u64);
    let stages: Vec<&str> = reports.iter().map(|r| r.stage.as_str()).collect();
    let after_read = ["matching messages", "summarising", "building the matrix"];
    assert!(stages.ends_with(&after_read), "stages {stages:?}");
    assert!(reports.iter().all(|r| r.bytes_done <= r.bytes_total), "{reports:?}");
    assert_eq!(reports.last().unwrap().bytes_total, total);
}

/// "waiting (s)": the heatmap holds the waits view's waiting matrix (late sender plus late
/// receiver per pair, in ns), the binary matrix stays the bytes filter's.
#[test]
fn the_waiting_metric_colours_the_cells_by_the_wait_states() {
    let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
    let bytes = loaded.session.matrix(1, &MatrixRequest::default()).unwrap();
    let request = MatrixRequest {
        waiting: true,
        ..MatrixRequest::default()
    };
    let view = loaded.session.matrix(2, &request).unwrap();
    assert_eq!(view.grid.kept, bytes.grid.kept);
    assert_eq!(view.removed_entries, bytes.removed_entries);
    let Answer::Waits(w) = loaded
        .session
        .analyse(&AnalysisRequest::Waits { what_if: false })
        .unwrap()
    else {
        panic!("not the waits answer")
    };
    let rows = w.waits.report.waiting_rows(8);
    for s in 0..8u32 {
        for r in 0..8u32 {
            let expected = (rows[s as usize][r as usize] * 1e9).round();
            assert!((view.grid.value(s, r) as f64 - expected).abs() <= 1.0, "{s} → {r}");
        }
    }
    let total: u64 = view.grid.values.iter().sum();
    let states = w.waits.report.totals.late_sender_s + w.waits.report.totals.late_receiver_s;
    assert!((total as f64 * 1e-9 - states).abs() < 1e-6, "{total} ns, {states} s");
    assert!(view.grid.max > 0 && view.grid.min > 0);
}

/// The overlay is the whole run's path, every segment, in the timeline's clock: on the
/// sample LU it tiles [0, length] (length = the run's, DUMPI's clocks being consistent),
/// whatever the page's selection.
#[test]
fn the_path_overlay_tiles_the_run() {
    let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
    let window = Selection {
        from: Some(1_000_000),
        ..Selection::default()
    };
    let Answer::PathOverlay(o) = loaded
        .session
        .analyse_selected(&AnalysisRequest::CriticalPathOverlay, &window)
        .unwrap()
    else {
        panic!("not the overlay")
    };
    let whole = loaded.session.engine.critical_path(&Selection::all(), false).unwrap();
    assert_eq!(o.segments.len(), whole.path.segments.len());
    let (start, end) = loaded.session.trace().span();
    assert!(
        o.length_ns.abs_diff(end - start) <= 1,
        "{} vs {}",
        o.length_ns,
        end - start
    );
    assert_eq!(o.segments[0].start(), 0);
    for w in o.segments.windows(2) {
        assert!(w[0].end().abs_diff(w[1].start()) <= 1);
    }
    assert!(o.segments.last().unwrap().end().abs_diff(o.length_ns) <= 1);
    assert!(o.segments.iter().any(|s| s.compute()) && o.segments.iter().any(|s| !s.compute()));
}

#[test]
fn matrix_requests_follow_metric_and_threshold() {
    let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
    let request = MatrixRequest {
        metric: Metric::Messages,
        threshold_pct: 100.0,
        ..MatrixRequest::default()
    };
    let view = loaded.session.matrix(7, &request).unwrap();
    assert_eq!(view.seq, 7);
    let full = CommMatrix::from_trace(loaded.session.trace(), &Default::default());
    let filtered = full.filter(Metric::Messages, 100.0);
    assert_eq!(view.grid.values, full.dense_rows(Metric::Messages).concat());
    let kept: Vec<bool> = filtered.dense_rows(&full).concat().iter().map(|&b| b == 1).collect();
    assert_eq!(view.grid.kept, kept);
    assert_eq!(view.removed_entries, filtered.removed_entries);
    assert_eq!(view.removed_share, filtered.removed_share);
    let kept_at_0 = loaded
        .session
        .matrix(
            8,
            &MatrixRequest {
                threshold_pct: 0.0,
                ..request.clone()
            },
        )
        .unwrap();
    let ones = |v: &MatrixView| v.grid.kept.iter().filter(|&&k| k).count() as u64;
    assert!(ones(&kept_at_0) >= ones(&view));
    assert_eq!(ones(&view), view.kept_entries);
    assert_eq!(
        kept_at_0.kept_entries,
        kept_at_0.nonzero_entries - kept_at_0.removed_entries
    );
}

#[test]
fn matrix_selection_times_are_relative_to_the_first_event() {
    let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
    let trace = loaded.session.trace();
    let (start, end) = trace.span();
    let half = (end - start) / 2;
    let request = |selection: Selection| MatrixRequest {
        selection,
        ..MatrixRequest::default()
    };
    // Ranks: only sends by and to ranks 0 and 1.
    let ranks = loaded
        .session
        .matrix(
            1,
            &request(Selection {
                ranks: Some(vec![0, 1]),
                ..Selection::default()
            }),
        )
        .unwrap();
    let nonzero: Vec<(u32, u32)> = (0..8u32)
        .flat_map(|r| (0..8u32).map(move |c| (r, c)))
        .filter(|&(r, c)| ranks.grid.values[(r * 8 + c) as usize] > 0)
        .collect();
    assert_eq!(nonzero, vec![(0, 1), (1, 0)]);
    // Time: the first half of the run, given relative to its start, equals the absolute selection.
    let relative = loaded
        .session
        .matrix(
            2,
            &request(Selection {
                to: Some(half),
                ..Selection::default()
            }),
        )
        .unwrap();
    let absolute = CommMatrix::from_trace(
        trace,
        &Selection {
            to: Some(start + half),
            ..Selection::default()
        },
    );
    assert_eq!(relative.grid.values, absolute.dense_rows(Metric::Bytes).concat());
    let all = CommMatrix::from_trace(trace, &Selection::default());
    let sum = |v: &[u64]| v.iter().sum::<u64>();
    assert!(sum(&relative.grid.values) > 0 && sum(&relative.grid.values) < all.total(Metric::Bytes));
}

#[test]
fn logical_downloads_come_from_the_selection_they_are_asked_with() {
    use crate::protocol::{LogicalDownload, LogicalView};
    let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
    let session = &loaded.session;
    let json = |selection: &Selection| -> serde_json::Value {
        let request = AnalysisRequest::LogicalDownload {
            which: LogicalDownload::Json,
        };
        let text: String = answer(session.analyse_selected(&request, selection));
        serde_json::from_str(&text).unwrap()
    };
    let (start, end) = session.trace().span();
    let low = Selection {
        to: Some((end - start) / 2),
        ..Selection::default()
    };
    let whole: LogicalView = answer(session.analyse(&AnalysisRequest::Logical { exact_sizes: false }));
    let kept = json(&Selection::all());
    assert_eq!(kept["records"].as_array().unwrap().len(), whole.program.raw_length);
    // Asked for another selection than the kept one, the download is that selection's.
    let part: LogicalView = answer(session.analyse_selected(&AnalysisRequest::Logical { exact_sizes: false }, &low));
    assert_ne!(part.program.raw_length, whole.program.raw_length);
    assert_eq!(json(&Selection::all()), kept);
    assert_eq!(json(&low)["records"].as_array().unwrap().len(), part.program.raw_length);
    let text: String = answer(session.analyse(&AnalysisRequest::LogicalDownload {
        which: LogicalDownload::Text,
    }));
    assert_eq!(text.lines().count(), 1 + whole.program.raw_length);
    let skeleton: String = answer(session.analyse(&AnalysisRequest::LogicalDownload {
        which: LogicalDownload::Skeleton,
    }));
    assert!(skeleton.contains("MPI_Init"));
}

#[test]
fn analyses_see_only_the_selected_ranks_whatever_matrix_came_between() {
    let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
    let session = &loaded.session;
    let patterns = |selection: &Selection| -> PatternsReport {
        answer(session.analyse_selected(&AnalysisRequest::Patterns, selection))
    };
    let low = Selection {
        ranks: Some(vec![0, 1, 2, 3]),
        ..Selection::default()
    };
    let high = Selection {
        ranks: Some(vec![4, 5, 6, 7]),
        ..Selection::default()
    };
    let first = patterns(&low);
    assert!(first.patterns.iter().all(|p| p.ranks.iter().all(|&r| r < 4)));
    // A matrix request for other ranks in between changes nothing: an analysis answers for
    // the selection it carries, not for the latest matrix's.
    session
        .matrix(
            1,
            &MatrixRequest {
                selection: high.clone(),
                ..MatrixRequest::default()
            },
        )
        .unwrap();
    assert_eq!(patterns(&low), first);
    let whole = patterns(&Selection::all());
    let last = patterns(&high);
    assert_eq!(first.events + last.events, whole.events);
}

#[test]
fn pattern_times_of_a_time_selection_count_from_the_whole_trace_start() {
    let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
    let session = &loaded.session;
    let (start, end) = session.trace().span();
    let later = Selection {
        from: Some((end - start) / 2),
        ..Selection::default()
    };
    let found: PatternsReport = answer(session.analyse_selected(&AnalysisRequest::Patterns, &later));
    assert_eq!(found.trace_start, start);
    let p = found.patterns.iter().max_by_key(|p| p.occurrences).unwrap();
    let request = AnalysisRequest::Match {
        pattern: serde_json::to_string(&p.events).unwrap(),
        max_edits: 0,
    };
    let searched: SearchReport = answer(session.analyse_selected(&request, &later));
    assert_eq!(searched.trace_start, start);
    let matches = &searched.search.search.matches;
    assert!(!matches.is_empty());
    assert!(matches.iter().all(|m| m.start >= start + (end - start) / 2));
    let whole: SearchReport = answer(session.analyse(&request));
    assert!(whole.search.search.matches.len() > matches.len());
    let bad = session.analyse(&AnalysisRequest::Match {
        pattern: "{\"0\": [\"S1\"".into(),
        max_edits: 0,
    });
    assert!(bad.unwrap_err().starts_with("the pattern: not JSON at line 1"));
}

#[test]
fn the_topology_of_a_rank_selection_is_that_of_the_traffic_among_those_ranks() {
    use tracelogic_engine::topology::{of_matrix, TopologyOptions, TopologyReport};
    let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
    let trace = loaded.session.trace();
    let selection = Selection {
        ranks: Some(vec![0, 1, 2, 3]),
        ..Selection::default()
    };
    let r: TopologyReport = answer(
        loaded
            .session
            .analyse_selected(&AnalysisRequest::Topology { threshold_pct: None }, &selection),
    );
    // What `tracelogic topology --ranks 0-3` identifies: the matrix of the selection.
    let cli = of_matrix(&CommMatrix::from_trace(trace, &selection), &TopologyOptions::default());
    assert_eq!(r.edges, cli.edges);
    assert!(!r.edges.is_empty());
    assert!(r.edges.iter().all(|e| e[0] < 4 && e[1] < 4), "{:?}", r.edges);
}

#[test]
fn phases_start_from_the_pattern_analysis_of_the_same_selection() {
    let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
    let session = &loaded.session;
    let (start, end) = session.trace().span();
    let low = Selection {
        to: Some((end - start) / 2),
        ..Selection::default()
    };
    let phases = |strength: f64, selection: &Selection| -> PhasesReport {
        answer(session.analyse_selected(&AnalysisRequest::Phases { strength }, selection))
    };
    session.analyse(&AnalysisRequest::Patterns).unwrap();
    assert_eq!(session.pattern_analyses(), 1);
    for strength in [0.0, 0.5, 2.0] {
        phases(strength, &Selection::all());
        assert_eq!(session.pattern_analyses(), 1);
    }
    assert!(session
        .analyse_selected(&AnalysisRequest::Phases { strength: -1.0 }, &low)
        .unwrap_err()
        .contains("strength"));
    assert_eq!(session.pattern_analyses(), 1);
    let part = phases(0.0, &low);
    assert_eq!(session.pattern_analyses(), 2);
    for phase in &part.analysis.phases {
        assert!(
            phase.time.0 < start + (end - start) / 2,
            "phase at {:?} outside the window",
            phase.time
        );
    }
    phases(1.0, &low);
    assert_eq!(session.pattern_analyses(), 2);
}

#[test]
fn what_if_of_collectives_only_replays_no_message() {
    let loaded = load("MG", sample_files("npb-mg.S.8")).0.unwrap();
    let collectives = Selection {
        kinds: Some(vec![tracelogic_model::CallKind::Collective]),
        ..Selection::default()
    };
    let whatif: tracelogic_engine::replay::WhatIf = answer(
        loaded
            .session
            .analyse_selected(&AnalysisRequest::WhatIf { custom: None }, &collectives),
    );
    assert_eq!(whatif.messages, 0);
    assert_eq!(whatif.calls, 816);
    assert!(loaded
        .session
        .analyse(&AnalysisRequest::WhatIf {
            custom: Some((1.0, 0.0))
        })
        .is_err());
}

#[test]
fn an_empty_selection_is_an_error_for_every_analysis_not_a_panic() {
    let loaded = load("LU", sample_files("npb-lu.S.8")).0.unwrap();
    let empty = Selection {
        from: Some(3_600_000_000_000),
        ..Selection::default()
    };
    for request in [
        AnalysisRequest::Topology { threshold_pct: None },
        AnalysisRequest::Logical { exact_sizes: false },
        AnalysisRequest::Patterns,
        AnalysisRequest::Phases { strength: 0.0 },
        AnalysisRequest::WhatIf { custom: None },
    ] {
        let e = loaded.session.analyse_selected(&request, &empty).unwrap_err();
        assert!(e.contains("selection keeps no MPI call"), "{request:?}: {e}");
    }
    // Ranks the trace does not have select nothing either.
    let absent = Selection {
        ranks: Some(vec![99]),
        ..Selection::default()
    };
    assert!(loaded
        .session
        .analyse_selected(&AnalysisRequest::Patterns, &absent)
        .is_err());
}

#[test]
fn the_logical_answer_names_the_ranks_that_message_themselves() {
    use crate::protocol::LogicalView;
    let spec = tracelogic_synth::NasSpec {
        iterations: Some(1),
        ..tracelogic_synth::NasSpec::new(tracelogic_synth::NasBenchmark::Mg, tracelogic_synth::NasClass::S, 4)
    };
    let (mg4, _) = tracelogic_synth::generate_nas(&spec).unwrap();
    let own: Vec<u32> = (0..4u32)
        .filter(|&rank| mg4.ranks[rank as usize].p2p.peer.contains(&rank))
        .collect();
    let r: LogicalView = answer(Session::new(mg4).analyse(&AnalysisRequest::Logical { exact_sizes: false }));
    assert!(!own.is_empty());
    assert_eq!(r.self_ranks, own);
}

#[test]
fn runs_added_one_by_one_give_the_similarity_matrix_and_drawable_graphs() {
    use crate::protocol::CompareResult;
    use crate::views::compare::merge_request;
    let session = Session::new(sample_trace("npb-lu.S.8"));
    let compare = |label: &str, id: &str| AnalysisRequest::Compare {
        label: label.into(),
        files: sample_files(id),
    };
    let first_answer = session.analyse(&compare("MG", "npb-mg.S.8"));
    let first: CompareResult = answer(first_answer.clone());
    assert!(
        merge_request(Vec::new(), &first_answer).is_none(),
        "a first run needs no merge"
    );
    // BT has 9 ranks: refused, MG stays.
    let bt = session.analyse(&compare("BT", "npb-bt.S.9"));
    let merged = merge_request(first.others.clone(), &bt).expect("a merge keeps MG");
    let refused: CompareResult = answer(session.analyse(&merged));
    assert!(refused.refused.as_deref().unwrap().contains("same number of ranks"));
    assert_eq!(refused.others.len(), 1);
    let again = session.analyse(&compare("LU again", "npb-lu.S.8"));
    let three: CompareResult = answer(session.analyse(&merge_request(refused.others.clone(), &again).unwrap()));
    assert!(three.refused.is_none());
    let m = three.matrix.as_ref().unwrap();
    assert_eq!(
        m.runs,
        vec![session.trace().source.clone(), "MG".into(), "LU again".into()]
    );
    assert_eq!(m.pairs.len(), 3);
    assert_eq!(three.layouts.len(), 3);
    assert!(three.layouts.iter().all(|l| l.len() == 8));
    // LU against MG is the same pair whether MG was alone or one of two.
    let before = first.latest().unwrap();
    let lu_mg = m.pairs.iter().find(|c| c.first == 0 && c.second == 1).unwrap();
    assert_eq!(lu_mg.epsilon, before.epsilon);
    // θ may be undefined (not a number) when every property is left out: the same then too.
    assert_eq!(lu_mg.theta.to_bits(), before.theta.to_bits());
    assert_eq!(three.latest().unwrap().second, 2);
    // A trace that could not even be fetched keeps the runs before, with the reason.
    let lost = merge_request(three.others.clone(), &Err("cannot fetch x".into())).unwrap();
    let kept: CompareResult = answer(session.analyse(&lost));
    assert_eq!(kept.others.len(), 2);
    assert_eq!(kept.refused.as_deref(), Some("cannot fetch x"));
}

#[test]
fn a_saved_graph_becomes_a_custom_candidate_of_later_identifications() {
    use crate::protocol::{ReferenceLibrary, ReferencePattern};
    use tracelogic_engine::topology::TopologyReport;
    let mg = Session::new(sample_trace("npb-mg.S.8"));
    let plain: TopologyReport = answer(mg.analyse(&AnalysisRequest::Topology { threshold_pct: None }));
    let pattern = ReferencePattern {
        name: "MG graph".into(),
        ranks: plain.identification.ranks,
        edges: plain.edges.clone(),
    };
    let text = pattern.edge_list().unwrap();
    let back = ReferencePattern::from_edge_list("MG graph", &text, "mg.txt").unwrap();
    assert_eq!(back, pattern, "the downloaded edge list reads back as the same pattern");
    let mut library = ReferenceLibrary::default();
    library.save(pattern);
    let request = AnalysisRequest::Topology { threshold_pct: None }.with_library(&library);
    let with: TopologyReport = answer(mg.analyse(&request));
    assert!(with
        .identification
        .equivalents
        .iter()
        .any(|e| e.family == "custom" && e.label.contains("MG graph")));
    assert_ne!(
        with.identification.matched.as_ref().unwrap().family,
        "custom",
        "built-ins stay simplest"
    );
    let broken = ReferenceLibrary {
        patterns: vec![ReferencePattern {
            name: "broken".into(),
            ranks: 2,
            edges: vec![[0, 5]],
        }],
    };
    let e = mg
        .analyse(&AnalysisRequest::Topology { threshold_pct: None }.with_library(&broken))
        .unwrap_err();
    assert!(e.contains("broken") && e.contains("outside"), "{e}");
}

/// 65,536 ranks were refused when the matrix was dense (64 GiB); the sparse matrix loads
/// them, and the heatmap groups them into 512-rank blocks from the non-zero entries.
#[test]
fn a_trace_of_65536_ranks_loads_and_its_heatmap_is_grouped() {
    let text = "#tracelogic-text 1\nranks 65536\nfunction 0 MPI_Send\n\
                65535 10 20 MPI_Send send=0 tag=0 bytes=64\n\
                1 30 40 MPI_Send send=1023 tag=0 bytes=8\n";
    let files = vec![WireFile {
        name: "huge.txt".into(),
        bytes: text.as_bytes().to_vec(),
    }];
    let loaded = load("huge", files).0.unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(loaded.trace.summary.ranks, 65_536);
    let m = &loaded.matrix;
    assert_eq!((m.grid.ranks, m.grid.block, m.grid.side), (65_536, 512, 128));
    assert_eq!(
        m.grid.value(127, 0),
        64,
        "65535 → 0 lands in the last row's first block"
    );
    assert_eq!(m.grid.value(0, 1), 8, "1 → 1023 lands in the second column block");
    assert_eq!(m.grid.values.iter().sum::<u64>(), 72);
    assert_eq!((m.nonzero_entries, m.kept_entries, m.removed_entries), (2, 2, 0));
}

#[test]
fn inputs_over_the_limit_are_refused_as_given_and_once_unpacked() {
    use std::io::Write;
    let csv = sample_files("pipit-csv").remove(0);
    let size = csv.bytes.len() as u64;
    let Err(err) = Session::load_with_limit(
        "csv",
        vec![csv.clone()],
        &MatrixRequest::default(),
        &mut |_| true,
        size - 1,
    ) else {
        panic!("an input over the limit was accepted")
    };
    assert!(
        err.message
            .starts_with(&format!("csv: too large: {size} bytes, limit {}", size - 1)),
        "{}",
        err.message
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&csv.bytes).unwrap();
    let packed = WireFile {
        name: "ping-pong-csv.csv.gz".into(),
        bytes: gz.finish().unwrap(),
    };
    let packed_size = packed.bytes.len() as u64;
    assert!(packed_size < size);
    let limit = packed_size.max(size / 2);
    let Err(err) = Session::load_with_limit(
        "gz",
        vec![packed.clone()],
        &MatrixRequest::default(),
        &mut |_| true,
        limit,
    ) else {
        panic!("an archive unpacking over the limit was accepted")
    };
    assert!(
        err.message
            .starts_with(&format!("gz: too large: {size} bytes once unpacked, limit {limit}")),
        "{}",
        err.message
    );
    let loaded = Session::load_with_limit("gz", vec![packed], &MatrixRequest::default(), &mut |_| true, size)
        .unwrap_or_else(|f| panic!("{}", f.message));
    assert!(loaded.trace.summary.calls > 0);
    assert_eq!(too_large("x", MAX_INPUT_BYTES, MAX_INPUT_BYTES, ""), None);
}

#[test]
fn every_bundled_sample_loads() {
    for s in SAMPLES {
        let (result, _) = load(s.id, sample_files(s.id));
        let loaded = result.unwrap_or_else(|f| panic!("sample {} fails to load: {}", s.id, f.message));
        assert!(loaded.trace.summary.ranks > 0, "sample {}", s.id);
        assert!(loaded.trace.summary.calls > 0, "sample {}", s.id);
    }
}

#[test]
fn truncated_file_error_names_the_file() {
    let mut files = sample_files("npb-lu.S.8");
    let victim = files.iter_mut().find(|f| f.name.ends_with("-0003.bin")).unwrap();
    victim.bytes.truncate(victim.bytes.len() / 2);
    let name = victim.name.rsplit('/').next().unwrap().to_owned();
    let failure = load("LU", files).0.unwrap_err();
    assert!(!failure.cancelled);
    assert!(failure.message.contains(&name), "{}", failure.message);
}

#[test]
fn unknown_input_is_an_error_not_a_panic() {
    let files = vec![WireFile {
        name: "notes.txt".into(),
        bytes: b"hello, this is not a trace\n".to_vec(),
    }];
    let failure = load("notes", files).0.unwrap_err();
    assert!(!failure.cancelled);
    assert!(!failure.message.is_empty());
    let failure = load("nothing", Vec::new()).0.unwrap_err();
    assert!(!failure.message.is_empty());
}

#[test]
fn cancelling_stops_the_load() {
    for stop_at in ["matching messages", "summarising", "building the matrix"] {
        let result = Session::load("LU", sample_files("npb-lu.S.8"), &MatrixRequest::default(), &mut |p| {
            p.stage != stop_at
        });
        let failure = result.unwrap_err();
        assert!(failure.cancelled, "stopping at {stop_at}");
    }
    let result = Session::load("LU", sample_files("npb-lu.S.8"), &MatrixRequest::default(), &mut |_| {
        false
    });
    assert!(result.unwrap_err().cancelled, "stopping at the first report");
}

/// Every bundled sample's load answer, as the worker posts it (bincode, no field names), reads
/// back equal on the page: a report field skipped when empty in its JSON would break every
/// load in the browser while the native tests pass.
#[test]
fn every_samples_load_answer_reads_back_through_the_worker_channel() {
    for s in SAMPLES {
        let (result, _) = load(s.id, sample_files(s.id));
        let loaded = result.unwrap_or_else(|f| panic!("{}: {}", s.id, f.message));
        let answer = crate::protocol::Response::Loaded {
            trace: Box::new(loaded.trace),
            matrix: Box::new(loaded.matrix),
        };
        let bytes = bincode::serialize(&answer).unwrap();
        let back: crate::protocol::Response = bincode::deserialize(&bytes).unwrap_or_else(|e| panic!("{}: {e}", s.id));
        assert_eq!(back, answer, "{}", s.id);
    }
}

/// Sizes the data choose (20 distinct sizes in a scrambled order) are summarised in the view's
/// program unless the view asks for exact sizes; the downloads follow the last request.
#[test]
fn the_logical_view_keeps_every_size_when_asked() {
    use crate::protocol::{LogicalDownload, LogicalView};
    use tracelogic_synth::pair::{scrambled_sizes, sendrecv_pair};
    let t = sendrecv_pair(&scrambled_sizes(200, 20, 0x9e37_79b9_7f4a_7c15));
    let session = Session::new(t);
    let forms = |view: &LogicalView| serde_json::to_string(&view.program).unwrap();
    let summarised: LogicalView = answer(session.analyse(&AnalysisRequest::Logical { exact_sizes: false }));
    assert!(
        forms(&summarised).contains(r#""form":"stats""#),
        "{}",
        forms(&summarised)
    );
    let exact: LogicalView = answer(session.analyse(&AnalysisRequest::Logical { exact_sizes: true }));
    assert!(!forms(&exact).contains(r#""form":"stats""#), "{}", forms(&exact));
    assert_eq!(exact.program.compressed_length, summarised.program.compressed_length);
    // The skeleton download replays the exact program: its 200 sizes as a table.
    let skeleton: String = answer(session.analyse(&AnalysisRequest::LogicalDownload {
        which: LogicalDownload::Skeleton,
    }));
    assert!(skeleton.contains("[200] = {"), "{skeleton}");
    let _: LogicalView = answer(session.analyse(&AnalysisRequest::Logical { exact_sizes: false }));
    let skeleton: String = answer(session.analyse(&AnalysisRequest::LogicalDownload {
        which: LogicalDownload::Skeleton,
    }));
    assert!(!skeleton.contains("[200] = {"), "{skeleton}");
}
