//! The page's rules, checked on its state alone, with the worker's answers computed by the
//! worker's own core ([`crate::session`]) on the bundled NPB LU sample.

use super::*;
use crate::protocol::Answer;
use crate::samples;
use crate::session::tests::sample_files;
use crate::session::{Loaded, Session};
use tracelogic_engine::matrix::Metric;

type State = PageState<(), ()>;

/// The LU sample as the worker answers its load.
fn lu() -> Loaded {
    Session::load(
        "npb-lu.S.8",
        sample_files("npb-lu.S.8"),
        &MatrixRequest::default(),
        &mut |_| true,
    )
    .unwrap_or_else(|f| panic!("{}", f.message))
}

/// A page showing the LU sample, loaded as the page loads it.
fn showing_lu() -> (State, Loaded) {
    let mut s = State::default();
    let generation = s.start_load("NAS LU".into(), None, None);
    let loaded = lu();
    let changed = s.show_loaded(
        generation,
        loaded.trace.clone(),
        loaded.matrix.clone(),
        (None, vec!["reading".into()], None),
        (),
    );
    assert!(!changed);
    s.loading = None;
    (s, loaded)
}

/// What the worker answers to `request` as the page sent it.
fn answer(session: &Session, request: &Request) -> AnalysisAnswer {
    let Request::Analyse {
        seq,
        request,
        selection,
    } = request
    else {
        panic!("not an analysis request: {request:?}");
    };
    AnalysisAnswer {
        seq: *seq,
        answer: session.analyse_selected(request, selection.as_ref().unwrap()),
    }
}

fn selection_of_ranks(ranks: &[u32]) -> MatrixRequest {
    let mut m = MatrixRequest::default();
    m.selection.ranks = Some(ranks.to_vec());
    m
}

#[test]
fn the_address_names_the_whole_state_and_reads_back() {
    let mut s = State {
        sample: samples::find("npb-mg.S.8"),
        view: View::Matrix,
        ..State::default()
    };
    s.matrix_request.threshold_pct = 20.0;
    s.matrix_request.metric = Metric::Messages;
    s.focus.rank = Some(3);
    s.focus.pattern = Some(2);
    let fragment = s.route().format();
    // The fragment format of docs (README "The web app", crate::route).
    assert_eq!(
        fragment,
        "#sample=npb-mg.S.8&view=matrix&threshold=20&metric=messages&rank=3&pattern=2"
    );

    let mut other = State {
        sample: s.sample,
        ..State::default()
    };
    let matrix_changed = other.apply_route(Route::parse(&fragment));
    assert!(matrix_changed, "threshold and metric differ from the defaults");
    assert_eq!(other.route(), s.route());
    assert_eq!(other.route().format(), fragment);
    assert_eq!((other.view, other.focus.clone()), (s.view, s.focus.clone()));
    assert!(
        !other.apply_route(Route::parse(&fragment)),
        "applying it again changes no matrix"
    );
}

#[test]
fn an_empty_fragment_is_the_default_state() {
    let mut s = State::default();
    assert_eq!(s.route().format(), "");
    s.apply_route(Route::parse("#view=phases&threshold=1&metric=waiting&phase=4"));
    assert_eq!(s.view, View::Phases);
    assert!(s.matrix_request.waiting);
    assert_eq!(s.route().format(), "#view=phases&threshold=1&metric=waiting&phase=4");
    // Back to an entry without keys shows the summary with the default matrix, not the last view.
    assert!(s.apply_route(Route::parse("")));
    assert_eq!(s.view, View::Summary);
    assert_eq!(s.matrix_request, MatrixRequest::default());
    assert_eq!(s.focus, Focus::default());
    assert_eq!(s.route().format(), "");
}

#[test]
fn settings_from_storage_keep_what_they_leave_out() {
    let mut s = State {
        view: View::Topology,
        ..State::default()
    };
    s.apply_settings(&Route::parse("#metric=waiting"));
    // Waiting colours the matrix; its threshold stays on bytes.
    assert_eq!(s.view, View::Topology);
    assert!(s.matrix_request.waiting);
    assert_eq!(s.matrix_request.metric, Metric::Bytes);
}

#[test]
fn a_load_logs_each_stage_once_and_draws_progress_at_most_every_100_ms() {
    let mut s = State::default();
    let g = s.start_load("x".into(), None, None);
    assert_eq!(g, 1);
    assert!(s.is_loading(1) && !s.is_loading(2));
    let report = |stage: &str, done| ProgressReport {
        stage: stage.into(),
        bytes_done: done,
        bytes_total: 100,
    };
    assert!(s.progress(report("reading a", 10), 1000.0), "the first report is drawn");
    assert!(
        !s.progress(report("reading a", 20), 1050.0),
        "50 ms later: kept, not drawn"
    );
    assert!(s.progress(report("reading b", 30), 1100.0), "100 ms later: drawn");
    let l = s.loading.as_ref().unwrap();
    assert_eq!(l.stages, ["reading a", "reading b"]);
    assert_eq!(l.progress.bytes_done, 30);
}

#[test]
fn a_long_load_log_keeps_its_start_an_ellipsis_and_the_latest_stage() {
    let mut stages = Vec::new();
    for i in 0..MAX_LOG_STAGES + 5 {
        log_stage(&mut stages, &format!("file {i}"));
    }
    assert_eq!(stages.len(), MAX_LOG_STAGES);
    assert_eq!(stages[0], "file 0");
    assert_eq!(stages[MAX_LOG_STAGES - 3], format!("file {}", MAX_LOG_STAGES - 3));
    assert_eq!(stages[MAX_LOG_STAGES - 2], "…");
    assert_eq!(stages[MAX_LOG_STAGES - 1], format!("file {}", MAX_LOG_STAGES + 4));
}

#[test]
fn a_load_shows_the_trace_and_drops_the_previous_traces_state() {
    let (mut s, loaded) = showing_lu();
    let c = s.current.as_ref().unwrap();
    assert_eq!(c.trace.summary.ranks, 8);
    assert_eq!(c.matrix.seq, 0);
    assert_eq!(s.load_log, ["reading"]);
    // The page's name for the trace is the one the CLI prints.
    assert_eq!(
        c.trace.label,
        tracelogic_engine::trace_name("npb-lu.S.8", &loaded.trace.source)
    );
    let request = s.begin_analysis(AnalysisRequest::Profile).unwrap();
    assert_eq!(s.take_answer(answer(&loaded.session, &request)), Answered::Shown);
    s.focus.rank = Some(2);
    s.error = Some("earlier".into());

    // Another load, with a route (back/forward to another sample).
    let g = s.start_load("again".into(), None, Some(Route::parse("#view=topology&threshold=9")));
    let route = s.loading.take().unwrap().route;
    let changed = s.show_loaded(
        g,
        loaded.trace.clone(),
        loaded.matrix.clone(),
        (None, vec![], route),
        (),
    );
    assert!(changed, "the route's threshold is not the loaded matrix's");
    assert!(s.analyses.is_empty());
    assert_eq!(s.focus, Focus::default());
    assert_eq!(s.error, None);
    assert_eq!((s.view, s.matrix_request.threshold_pct), (View::Topology, 9.0));
    assert_eq!(s.current.as_ref().unwrap().generation, g);
}

#[test]
fn a_failed_or_cancelled_load_keeps_what_was_loaded() {
    let (mut s, loaded) = showing_lu();
    let request = s.begin_analysis(AnalysisRequest::Profile).unwrap();
    s.take_answer(answer(&loaded.session, &request));
    let shown = Rc::clone(&s.current.as_ref().unwrap().trace);
    let analyses = s.analyses.clone();

    // The worker could not read the new input.
    let g = s.start_load("broken.otf2".into(), None, None);
    let failed = s.load_failed(Failure {
        message: "broken.otf2: not an OTF2 anchor file".into(),
        cancelled: false,
    });
    assert_eq!(failed.map(|l| l.generation), Some(g));
    assert_eq!(s.error.as_deref(), Some("broken.otf2: not an OTF2 anchor file"));
    assert!(Rc::ptr_eq(&s.current.as_ref().unwrap().trace, &shown));
    assert_eq!(s.analyses, analyses);
    assert!(s.loading.is_none());

    // Cancelled in the worker: a notice, not an error; the shown trace stays.
    s.error = None;
    s.start_load("big".into(), None, None);
    s.load_failed(Failure {
        message: "cancelled".into(),
        cancelled: true,
    });
    assert_eq!(s.notice.as_deref(), Some("Loading big was cancelled."));
    assert_eq!(s.error, None);

    // Cancelled on the page.
    s.start_load("other".into(), None, None);
    assert_eq!(s.notice, None, "a new load clears the notice");
    assert!(s.cancel().is_some());
    assert_eq!(s.notice.as_deref(), Some("Loading other was cancelled."));

    // Reading failed on the page; a stale failure (an earlier load's) changes nothing.
    let g = s.start_load("folder".into(), None, None);
    assert!(!s.read_failed(g - 1, "stale".into()));
    assert!(s.is_loading(g));
    assert!(s.read_failed(g, "folder: the folder holds no files".into()));
    assert_eq!(s.error.as_deref(), Some("folder: the folder holds no files"));
    assert!(Rc::ptr_eq(&s.current.as_ref().unwrap().trace, &shown));
    assert_eq!(s.analyses, analyses);
}

#[test]
fn only_the_latest_answer_of_a_view_is_shown() {
    let (mut s, loaded) = showing_lu();
    let first = s.begin_analysis(AnalysisRequest::Phases { strength: 0.0 }).unwrap();
    let second = s.begin_analysis(AnalysisRequest::Phases { strength: 0.5 }).unwrap();
    assert!(s.analyses["phases"].pending);
    assert_eq!(s.take_answer(answer(&loaded.session, &first)), Answered::Stale);
    assert!(s.analyses["phases"].pending, "a stale answer leaves the view waiting");
    let expected = answer(&loaded.session, &second);
    assert_eq!(s.take_answer(expected.clone()), Answered::Shown);
    let state = &s.analyses["phases"];
    assert!(!state.pending);
    assert_eq!(state.result.as_deref(), Some(&expected.answer));
    assert_eq!(state.request, Some(AnalysisRequest::Phases { strength: 0.5 }));
}

#[test]
fn where_the_worker_is_shows_on_the_waiting_view_until_its_answer() {
    let (mut s, loaded) = showing_lu();
    let stale = s
        .begin_analysis(AnalysisRequest::Logical { exact_sizes: false })
        .unwrap();
    let request = s
        .begin_analysis(AnalysisRequest::Logical { exact_sizes: false })
        .unwrap();
    let Request::Analyse { seq, .. } = request else {
        panic!("{request:?}")
    };
    let Request::Analyse { seq: stale_seq, .. } = stale else {
        panic!("{stale:?}")
    };
    // The engine's steps, as the worker's reporter filters them, while it computes the answer.
    let reports = Rc::new(std::cell::RefCell::new(Vec::new()));
    let sink = reports.clone();
    let mut last = None;
    let expected = tracelogic_engine::progress::watch(
        move |step: &tracelogic_engine::progress::Step| {
            if crate::worker::worth_showing(last.as_ref(), step) {
                last = Some(*step);
                sink.borrow_mut().push(WorkingReport::of(seq, step));
            }
        },
        || answer(&loaded.session, &request),
    );
    let reports = reports.take();
    assert!(
        reports.iter().any(|r| r.text() == "verifying by expansion, 100 %"),
        "{reports:?}"
    );
    let stale_report = WorkingReport {
        seq: stale_seq,
        ..reports[0].clone()
    };
    assert!(!s.working(stale_report), "a superseded request's step changes nothing");
    for r in &reports {
        assert!(s.working(r.clone()));
    }
    assert_eq!(s.analyses["logical"].working.as_ref(), reports.last());
    assert!(
        !s.working(reports.last().unwrap().clone()),
        "the same step again: no redraw"
    );
    assert_eq!(s.take_answer(expected), Answered::Shown);
    assert_eq!(s.analyses["logical"].working, None);
    assert!(
        !s.working(reports[0].clone()),
        "an answered request's step changes nothing"
    );
}

#[test]
fn analyses_are_asked_once_per_view_and_not_without_a_trace() {
    let mut s = State::default();
    assert_eq!(s.begin_analysis(AnalysisRequest::Logical { exact_sizes: false }), None);
    assert_eq!(s.analysis_seq, 0);
    let (mut s, _) = showing_lu();
    assert_eq!(s.missing_analysis(View::Summary), None);
    let request = s.missing_analysis(View::Topology).unwrap();
    assert_eq!(request.kind(), "topology");
    let sent = s.begin_analysis(request).unwrap();
    assert!(matches!(
        sent,
        Request::Analyse {
            seq: 1,
            selection: Some(_),
            ..
        }
    ));
    assert_eq!(s.missing_analysis(View::Topology), None);
}

#[test]
fn a_new_selection_drops_the_answers_of_the_previous_one() {
    let (mut s, loaded) = showing_lu();
    for request in [
        AnalysisRequest::Patterns,
        AnalysisRequest::CriticalPathOverlay,
        AnalysisRequest::Profile,
    ] {
        let sent = s.begin_analysis(request).unwrap();
        assert_eq!(s.take_answer(answer(&loaded.session, &sent)), Answered::Shown);
    }
    s.compare_failed("could not list".into());

    // A new threshold keeps every answer.
    let mut request = s.matrix_request.clone();
    request.threshold_pct = 12.0;
    let change = s.set_matrix(request.clone());
    assert!(!change.reselected);
    assert_eq!(change.send, Some(Request::Matrix { seq: 1, request }));
    assert_eq!(s.analyses.len(), 4);

    // Ranks 0-3: only the comparison and the whole run's critical path stay.
    let request = MatrixRequest {
        threshold_pct: 12.0,
        ..selection_of_ranks(&[0, 1, 2, 3])
    };
    let change = s.set_matrix(request.clone());
    assert!(change.reselected);
    assert_eq!(change.send, Some(Request::Matrix { seq: 2, request }));
    let mut kept: Vec<_> = s.analyses.keys().copied().collect();
    kept.sort();
    assert_eq!(kept, ["compare", "critical-path-overlay"]);

    // The next analysis is asked for the selection, and its answer is the selection's.
    let sent = s.begin_analysis(AnalysisRequest::Profile).unwrap();
    let Request::Analyse { selection, .. } = &sent else {
        unreachable!()
    };
    assert_eq!(selection.as_ref().unwrap().ranks, Some(vec![0, 1, 2, 3]));
    let whole = loaded.session.analyse(&AnalysisRequest::Profile);
    let part = answer(&loaded.session, &sent);
    assert_ne!(part.answer, whole, "ranks 0-3 are not the whole run");
    assert_eq!(s.take_answer(part), Answered::Shown);
}

#[test]
fn only_the_latest_matrix_and_timeline_tile_are_shown() {
    let (mut s, loaded) = showing_lu();
    let first = s.set_matrix(selection_of_ranks(&[0, 1]));
    let second = s.set_matrix(selection_of_ranks(&[2, 3]));
    let matrix = |change: MatrixChange| match change.send {
        Some(Request::Matrix { seq, request }) => loaded.session.matrix(seq, &request).unwrap(),
        other => panic!("{other:?}"),
    };
    let (old, new) = (matrix(first), matrix(second));
    assert!(!s.matrix_answer(old));
    assert!(s.matrix_answer(new.clone()));
    assert_eq!(*s.current.as_ref().unwrap().matrix, new);

    let query = TimelineQuery::whole(tracelogic_engine::timeline::Clock::Time, 200);
    assert!(matches!(
        s.timeline_request(query.clone()),
        Some(Request::Timeline { seq: 1, .. })
    ));
    assert!(matches!(
        s.timeline_request(query.clone()),
        Some(Request::Timeline { seq: 2, .. })
    ));
    let tile = |seq| TimelineAnswer {
        seq,
        query: query.clone(),
        tile: Err("no tile".into()),
    };
    assert!(!s.timeline_answer(tile(1)));
    assert!(s.timeline_answer(tile(2)));
    assert!(State::default().timeline_request(query).is_none());
}

#[test]
fn a_dead_worker_answers_the_waiting_views_and_a_stopped_one_every_later_request() {
    let (mut s, loaded) = showing_lu();
    let done = s.begin_analysis(AnalysisRequest::Profile).unwrap();
    s.take_answer(answer(&loaded.session, &done));
    s.begin_analysis(AnalysisRequest::Logical { exact_sizes: false })
        .unwrap();
    s.worker_failed("worker panicked: out of memory".into(), true);
    assert_eq!(
        s.analyses["logical"].result.as_deref(),
        Some(&Err("worker panicked: out of memory".to_owned()))
    );
    assert!(matches!(
        s.analyses["profile"].result.as_deref(),
        Some(Ok(Answer::Profile(_)))
    ));
    assert!(s.error.as_deref().unwrap().ends_with(RESTARTED));

    // The new worker could not read the trace again either.
    s.begin_analysis(AnalysisRequest::Patterns).unwrap();
    s.stop("out of memory");
    assert!(s.current.as_ref().unwrap().stopped);
    assert_eq!(s.analyses["patterns"].result.as_deref(), Some(&Err(STOPPED.to_owned())));
    assert_eq!(s.begin_analysis(AnalysisRequest::Waits { what_if: false }), None);
    let waits = &s.analyses["waits"];
    assert!(!waits.pending);
    assert_eq!(waits.result.as_deref(), Some(&Err(STOPPED.to_owned())));
    assert_eq!(s.begin_compare("other".into()), None);
    assert!(s.current.is_some(), "the trace stays on screen");
}

#[test]
fn a_comparison_marks_its_view_and_keeps_no_request() {
    let (mut s, _) = showing_lu();
    s.mark_compare_loading("npb-mg.S.8");
    assert_eq!(s.analyses["compare"].loading.as_deref(), Some("npb-mg.S.8"));
    let (seq, request) = s.begin_compare("npb-mg.S.8".into()).unwrap();
    assert_eq!(seq, s.analyses["compare"].seq);
    assert!(matches!(request, AnalysisRequest::Compare { ref label, .. } if label == "npb-mg.S.8"));
    assert!(s.analyses["compare"].pending);
    assert_eq!(s.analyses["compare"].request, None);
    s.compare_failed("npb-mg.S.8: no trace".into());
    assert!(!s.analyses["compare"].pending && s.analyses["compare"].loading.is_none());
}

#[test]
fn the_file_prefix_is_the_sample_or_the_trace_name() {
    let (mut s, _) = showing_lu();
    assert_eq!(
        s.file_prefix(),
        text::file_stem(&s.current.as_ref().unwrap().trace.label)
    );
    s.sample = samples::find("npb-lu.S.8");
    assert_eq!(s.file_prefix(), "npb-lu.S.8");
    assert_eq!(State::default().file_prefix(), "");
}
