//! The native text format: exact round trip of every model field, the hand-written tutorial
//! example, and errors with line numbers for broken input.

use tracelogic_formats::{text, FormatError, InputFile, NoProgress, Progress};
use tracelogic_model::{
    CallKind, CollectiveOp, Location, MetricSamples, P2pDir, Trace, ANY_SOURCE, ANY_TAG, NOT_COMPLETED, NO_CALLPATH,
    NO_ROOT,
};

fn read_str(name: &str, s: &str) -> Result<Trace, FormatError> {
    text::read(&[InputFile::new(name, s)], &mut NoProgress)
}

fn json(t: &Trace) -> serde_json::Value {
    serde_json::to_value(t).unwrap()
}

/// A trace that uses every column and every special value of the model.
fn every_column() -> Trace {
    let mut t = Trace::new("text", "hand built / with spaces", 3);
    let row = t.add_comm("row comm \"A\"", vec![0, 2]);
    let empty = t.add_comm("empty", vec![]);
    assert_eq!((row, empty), (1, 2));
    t.meta.push(("host".into(), "node=1 # not a comment".into()));
    t.meta.push(("clock".into(), "1 GHz".into()));
    t.warnings.push("rank 2: one receive\tnever matched".into());
    let main = t.regions.intern("int main(int, char**)");
    let solve = t.regions.intern("solve/step");
    let cp_main = t.intern_callpath(&[main]);
    let cp_solve = t.intern_callpath(&[main, solve]);
    let ins = t.metrics.intern("PAPI_TOT_INS");
    let cyc = t.metrics.intern("PAPI TOT CYC");
    t.ranks[0].locations = vec![
        Location {
            id: 0,
            name: "Master thread".into(),
        },
        Location {
            id: 7,
            name: "THREAD 1.1.2".into(),
        },
    ];
    t.ranks[1].locations = vec![Location {
        id: u64::MAX,
        name: String::new(),
    }];

    // Rank 0: blocking send, Sendrecv, Isend completed by Waitall, an Isend never completed,
    // a Bcast rooted at rank 2 on the row communicator, a collective call without a record,
    // and a call whose kind differs from its name's.
    let c = t.push_call(0, "MPI_Init", 0, 10, NO_CALLPATH, 0);
    assert_eq!(c, 0);
    let c = t.push_call(0, "MPI_Send", 20, 25, cp_main, 0);
    t.push_p2p(0, c, c, P2pDir::Send, 1, 7, 0, 1024);
    let c = t.push_call(0, "MPI_Sendrecv", 30, 40, cp_solve, 1);
    t.push_p2p(0, c, c, P2pDir::Send, 2, 3, row, 8);
    t.push_p2p(0, c, c, P2pDir::Recv, 2, 4, row, 16);
    let isend = t.push_call(0, "MPI_Isend", 41, 42, cp_solve, 1);
    let never = t.push_call(0, "MPI_Isend", 43, 44, cp_solve, 1);
    let waitall = t.push_call(0, "MPI_Waitall", 45, 60, cp_solve, 1);
    t.push_p2p(0, isend, waitall, P2pDir::Send, 1, 0, 0, 4096);
    t.push_p2p(0, never, NOT_COMPLETED, P2pDir::Send, 1, 1, 0, 1);
    let c = t.push_call(0, "MPI_Bcast", 61, 70, NO_CALLPATH, 0);
    t.push_collective(0, c, CollectiveOp::Bcast, row, 2, 0, 64);
    t.push_call(0, "MPI_Barrier", 71, 72, NO_CALLPATH, 0);
    let c = t.push_call(0, "MPI_Neighbor_alltoall", 73, 74, NO_CALLPATH, 0);
    t.push_collective(0, c, CollectiveOp::Other, 0, NO_ROOT, 5, 6);
    let c = t.push_call(0, "MPI_Finalize", 80, 80, NO_CALLPATH, 0);
    t.ranks[0].calls.kind[c as usize] = CallKind::Other;

    // Rank 1: wildcard Irecv completed by Wait, blocking Recv, Allreduce, two calls to the same
    // function, and a request completed inside the posting call's own line.
    let irecv = t.push_call(1, "MPI_Irecv", 5, 6, NO_CALLPATH, 0);
    let recv = t.push_call(1, "MPI_Recv", 7, 26, NO_CALLPATH, 0);
    let wait = t.push_call(1, "MPI_Wait", 27, 61, NO_CALLPATH, 0);
    t.push_p2p(1, irecv, wait, P2pDir::Recv, ANY_SOURCE, ANY_TAG, 0, 4096);
    t.push_p2p(1, recv, recv, P2pDir::Recv, 0, 7, 0, 1024);
    let c = t.push_call(1, "MPI_Allreduce", 62, 90, NO_CALLPATH, 0);
    t.push_collective(1, c, CollectiveOp::Allreduce, 0, NO_ROOT, 8, 8);
    let c = t.push_call(1, "MPI_Irecv", 91, 92, NO_CALLPATH, 0);
    t.push_p2p(1, c, c, P2pDir::Recv, 2, -5, 0, 0);

    // Rank 2: Sendrecv partner and the Bcast root; its span is wider than its calls.
    let c = t.push_call(2, "MPI_Sendrecv", 31, 39, NO_CALLPATH, 0);
    t.push_p2p(2, c, c, P2pDir::Send, 0, 4, row, 16);
    t.push_p2p(2, c, c, P2pDir::Recv, 0, 3, row, 8);
    let c = t.push_call(2, "MPI_Bcast", 60, 65, NO_CALLPATH, 0);
    t.push_collective(2, c, CollectiveOp::Bcast, row, 2, 64, 64);
    // A completion recorded before the post: only hand-built models do this, but it must
    // survive too.
    let c = t.push_call(2, "MPI_Irecv", 66, 67, NO_CALLPATH, 0);
    t.push_p2p(2, c, 0, P2pDir::Recv, 1, 9, 0, 2);
    t.ranks[2].span = Some((0, 1_000_000_007));

    t.ranks[0].metrics.push(MetricSamples {
        metric: ins,
        time: vec![0, 20, 80],
        value: vec![0.0, 1.5e9, 1e300],
    });
    t.ranks[0].metrics.push(MetricSamples {
        metric: cyc,
        time: vec![5],
        value: vec![-0.1],
    });
    t.ranks[1].metrics.push(MetricSamples {
        metric: cyc,
        time: vec![6, 7],
        value: vec![3.0, 0.30000000000000004],
    });
    t
}

#[test]
fn round_trip_keeps_every_field() {
    let original = every_column();
    let written = text::write(&original);
    let back = read_str("t.txt", &written).unwrap_or_else(|e| panic!("{e}\n{written}"));
    assert_eq!(json(&back), json(&original), "\n{written}");
    assert_eq!(text::write(&back), written);
}

#[test]
fn round_trip_of_a_trace_with_an_empty_rank_and_no_names() {
    let t = Trace::new("text", "empty", 2);
    let back = read_str("e.txt", &text::write(&t)).unwrap();
    assert_eq!(json(&back), json(&t));
}

const PING_PONG: &str = "\
#tracelogic-text 1
# Two ranks bounce a 1 KiB message twice.
ranks 2
0 0     1us    MPI_Init
1 0     1us    MPI_Init
0 2us   +500ns MPI_Send peer=1 tag=7 bytes=1024 path=main/exchange
1 2us   3us    MPI_Recv peer=0 tag=7 bytes=1024 path=main/exchange
1 3.5us 4us    MPI_Send peer=0 tag=7 bytes=1024 path=main/exchange
0 2.5us 4.2us  MPI_Recv peer=1 tag=7 bytes=1024 path=main/exchange
0 5us   6us    MPI_Barrier
1 5us   6us    MPI_Barrier
0 7us   8us    MPI_Finalize
1 7us   8us    MPI_Finalize
";

#[test]
fn hand_written_ping_pong_reads_as_expected() {
    let t = read_str("pingpong.txt", PING_PONG).unwrap();
    assert_eq!(t.format, "text");
    assert_eq!(t.source, "pingpong.txt");
    assert_eq!(t.num_ranks(), 2);
    assert_eq!(t.num_calls(), 10);
    let r0 = &t.ranks[0];
    assert_eq!(t.call_name(0, 1), "MPI_Send");
    assert_eq!((r0.calls.enter(1), r0.calls.exit(1)), (2000, 2500));
    assert_eq!(r0.calls.kind[1], CallKind::Send);
    assert_eq!(r0.p2p.dir, vec![P2pDir::Send, P2pDir::Recv]);
    assert_eq!(r0.p2p.peer, vec![1, 1]);
    assert_eq!(r0.p2p.bytes, vec![1024, 1024]);
    assert_eq!(r0.p2p.post, vec![1, 2]);
    assert_eq!(r0.p2p.completes().collect::<Vec<_>>(), vec![1, 2]);
    let cp = r0.calls.callpath[1];
    let names: Vec<&str> = t.callpaths[cp as usize].iter().map(|&r| t.regions.name(r)).collect();
    assert_eq!(names, ["main", "exchange"]);
    assert_eq!(r0.calls.callpath[0], NO_CALLPATH);
    // A collective call without keys still records its collective operation.
    assert_eq!(r0.collectives.op, vec![CollectiveOp::Barrier]);
    assert_eq!(r0.collectives.root, vec![NO_ROOT]);
    assert_eq!(t.ranks[1].span, Some((0, 8000)));
}

#[test]
fn non_blocking_requests_link_to_their_wait() {
    let src = "#tracelogic-text 1\nranks 2\n\
               0 0 1 MPI_Irecv recv=any tag=any bytes=8 req=5\n\
               0 2 3 MPI_Isend send=1 tag=1 bytes=8 req=6\n\
               0 4 9 MPI_Waitall wait=6,5\n\
               0 10 11 MPI_Isend peer=1 req=5\n";
    let t = read_str("nb.txt", src).unwrap();
    let p = &t.ranks[0].p2p;
    assert_eq!(p.peer, vec![ANY_SOURCE, 1, 1]);
    assert_eq!(p.tag, vec![ANY_TAG, 1, 0]);
    assert_eq!(p.completes().collect::<Vec<_>>(), vec![2, 2, NOT_COMPLETED]);
}

fn error_of(src: &str) -> FormatError {
    read_str("bad.txt", src).unwrap_err()
}

#[test]
fn broken_input_gives_file_and_line() {
    let cases: &[(&str, u64, &str)] = &[
        ("hello\n", 1, "first line"),
        ("#tracelogic-text 9\n", 1, "version 9"),
        ("#tracelogic-text 1\n0 0 1 MPI_Init\n", 2, "ranks N"),
        ("#tracelogic-text 1\nranks 2\n0 0 1\n", 3, "MPI function"),
        (
            "#tracelogic-text 1\nranks 2\n0 0 1 MPI_Send peer=1 colour=red\n",
            3,
            "unknown key",
        ),
        (
            "#tracelogic-text 1\nranks 2\n5 0 1 MPI_Init\n",
            3,
            "rank 5 is out of range",
        ),
        ("#tracelogic-text 1\nranks 2\n0 5 1 MPI_Init\n", 3, "before enter"),
        (
            "#tracelogic-text 1\nranks 2\n0 0 1 MPI_Send peer=1 comm=3\n",
            3,
            "communicator 3",
        ),
        (
            "#tracelogic-text 1\nranks 2\n\n0 0 1 MPI_Wait wait=4\n",
            4,
            "no open request 4",
        ),
        (
            "#tracelogic-text 1\nranks 2\n0 0 1 MPI_Send tag=1\n",
            3,
            "before any send=",
        ),
        ("#tracelogic-text 1\nranks 2\nsource \"unclosed\n", 3, "not closed"),
        ("#tracelogic-text 1\nranks 2\n0 0 1h MPI_Init\n", 3, "unknown unit"),
        ("#tracelogic-text 1\nranks 4000000000\n", 2, "more than this file"),
        ("#tracelogic-text 1\nranks 2\nfrobnicate 1\n", 3, "unknown line keyword"),
        (
            "#tracelogic-text 1\nranks 2\n0 0 1 MPI_Irecv recv=1 done=0\n",
            3,
            "earlier call",
        ),
        ("#tracelogic-text 1\nranks 2\n\"\" 1\n", 3, "unknown line keyword"),
        ("#tracelogic-text 1\nranks 2\ncomm 5 x 0-1\n", 3, "count up from 0"),
        (
            "#tracelogic-text 1\nranks 2\n0 0 1 MPI_Send peer=1 tag=x\n",
            3,
            "tag must be",
        ),
        (
            "#tracelogic-text 1\nranks 2\n0 0 1 MPI_Compute coll=Sum\n",
            3,
            "unknown collective",
        ),
    ];
    for (src, line, needle) in cases {
        let err = error_of(src);
        assert_eq!(err.file, "bad.txt");
        assert_eq!(err.line, Some(*line), "{err}");
        assert!(err.message.contains(needle), "expected `{needle}` in: {err}");
    }
}

#[test]
fn truncated_round_trip_output_fails_cleanly() {
    let written = text::write(&every_column());
    // Cutting the file anywhere gives either a trace or an error with a line, never a panic.
    for cut in (0..written.len()).step_by(7) {
        let part = &written.as_bytes()[..cut];
        match text::read(&[InputFile::new("cut.txt", part)], &mut NoProgress) {
            Ok(t) => assert!(t.num_calls() <= every_column().num_calls()),
            Err(e) => assert!(e.line.is_some(), "{e}"),
        }
    }
}

#[test]
fn invalid_utf8_is_reported_with_its_line() {
    let err = text::read(
        &[InputFile::new(
            "b.txt",
            &b"#tracelogic-text 1\nranks 1\n0 0 1 MPI_\xff\n"[..],
        )],
        &mut NoProgress,
    )
    .unwrap_err();
    assert_eq!(err.line, Some(3));
    assert!(err.message.contains("UTF-8"), "{err}");
}

#[test]
fn reading_can_be_cancelled() {
    let mut calls = 0;
    let mut sink = |_: &Progress| {
        calls += 1;
        false
    };
    let err = text::read(&[InputFile::new("p.txt", PING_PONG)], &mut sink).unwrap_err();
    assert!(err.cancelled);
    assert_eq!(calls, 1);
}

#[test]
fn read_trace_detects_the_text_format() {
    let t = tracelogic_formats::read_trace(vec![
        InputFile::new("README.md", "notes"),
        InputFile::new("pp.txt", PING_PONG),
    ])
    .unwrap();
    assert_eq!(t.num_calls(), 10);
}

#[test]
fn examples_in_the_format_documentation_read() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/formats.md")).unwrap();
    let examples: Vec<&str> = doc
        .split("```")
        .skip(1)
        .step_by(2)
        .map(|b| b.trim_start_matches('\n'))
        .filter(|b| b.starts_with("#tracelogic-text"))
        .collect();
    assert_eq!(examples.len(), 2);
    let ping_pong = read_str("doc1.txt", examples[0]).unwrap();
    assert_eq!(
        json(&ping_pong)["ranks"],
        json(&read_str("doc1.txt", PING_PONG).unwrap())["ranks"]
    );
    let t = read_str("doc2.txt", examples[1]).unwrap();
    let r0 = &t.ranks[0];
    assert_eq!(r0.p2p.completes().collect::<Vec<_>>(), vec![2, 2]);
    assert_eq!(r0.collectives.root, vec![2]);
    assert_eq!(r0.collectives.comm, vec![1]);
    assert_eq!(t.comms[1].members, vec![0, 2]);
}

/// Throughput of the reader on about 100 MB of generated text. Run in release mode:
/// `cargo test --release -p tracelogic-formats --test text -- --ignored --nocapture`.
#[test]
#[ignore]
fn text_reader_throughput_on_100_mb() {
    let ranks = 64;
    let mut t = Trace::new("text", "generated", ranks);
    let main = t.regions.intern("main");
    let cp = t.intern_callpath(&[main]);
    let mut time = 0u64;
    while t.num_calls() < 1_600_000 {
        for r in 0..ranks {
            let right = (r + 1) % ranks;
            let left = (r + ranks - 1) % ranks;
            let irecv = t.push_call(r, "MPI_Irecv", time, time + 150, cp, 0);
            let isend = t.push_call(r, "MPI_Isend", time + 200, time + 320, cp, 0);
            let wait = t.push_call(r, "MPI_Waitall", time + 400, time + 9_000, cp, 0);
            t.push_p2p(r, irecv, wait, P2pDir::Recv, left, 17, 0, 65_536);
            t.push_p2p(r, isend, wait, P2pDir::Send, right, 17, 0, 65_536);
            let c = t.push_call(r, "MPI_Allreduce", time + 10_000, time + 25_000, cp, 0);
            t.push_collective(r, c, CollectiveOp::Allreduce, 0, NO_ROOT, 8, 8);
        }
        time += 30_000;
    }
    let written = text::write(&t);
    let mb = written.len() as f64 / 1e6;
    let start = std::time::Instant::now();
    let back = read_str("big.txt", &written).unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(back.num_calls(), t.num_calls());
    println!(
        "text reader: {mb:.1} MB, {} calls in {secs:.3} s = {:.0} MB/s, {:.2} M calls/s",
        back.num_calls(),
        mb / secs,
        back.num_calls() as f64 / secs / 1e6
    );
}

#[test]
fn real_traces_survive_a_round_trip_through_text() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let lulesh = format!("{dir}/paraver/profet-paraver-lulesh");
    let paraver_files: Vec<InputFile> = std::fs::read_dir(&lulesh)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            InputFile::new(p.file_name().unwrap().to_string_lossy(), std::fs::read(&p).unwrap())
        })
        .collect();
    let csv_file = InputFile::new("pp.csv", std::fs::read(format!("{dir}/csv/ping-pong-csv.csv")).unwrap());
    for files in [paraver_files, vec![csv_file]] {
        let original = tracelogic_formats::read_trace(files).unwrap();
        assert!(original.num_calls() > 0);
        let back = read_str("back.txt", &text::write(&original)).unwrap();
        let mut want = json(&original);
        want["format"] = "text".into();
        assert_eq!(json(&back), want, "{}", original.format);
    }
}
