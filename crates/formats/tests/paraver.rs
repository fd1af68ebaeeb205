//! Paraver reader on the two PROFET samples, checked against counts computed here directly
//! from the record lines, and on broken input.

use std::collections::HashMap;
use tracelogic_formats::{paraver, read_trace, FormatError, InputFile, NoProgress, Progress};
use tracelogic_model::{CallKind, CollectiveOp, P2pDir, Trace, COMM_WORLD, NOT_COMPLETED, NO_ROOT};

const LULESH: &str = "profet-paraver-lulesh";
const PRV: &str = "lulesh_7+1_with_uncores_sockets1+2.chop8.prv";

fn sample(dir: &str) -> Vec<InputFile> {
    let path = format!("{}/tests/data/paraver/{dir}", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<InputFile> = std::fs::read_dir(&path)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            InputFile::new(p.file_name().unwrap().to_string_lossy(), std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort_by(|a, b| a.name.cmp(&b.name));
    files
}

fn prv_text(files: &[InputFile]) -> String {
    let prv = files.iter().find(|f| f.name.ends_with(".prv")).unwrap();
    String::from_utf8(prv.bytes.clone()).unwrap()
}

fn records<'a>(text: &'a str, kind: &'a str) -> impl Iterator<Item = Vec<u64>> + 'a {
    text.lines()
        .filter(move |l| l.split(':').next() == Some(kind))
        .map(|l| l.split(':').map(|f| f.parse().unwrap()).collect())
}

fn meta<'a>(t: &'a Trace, key: &str) -> &'a str {
    &t.meta.iter().find(|(k, _)| k == key).unwrap().1
}

fn lulesh() -> (Trace, String) {
    let files = sample(LULESH);
    let text = prv_text(&files);
    (read_trace(files).unwrap(), text)
}

#[test]
fn lulesh_record_counts_and_ranks() {
    let (t, _) = lulesh();
    assert_eq!(t.format, "paraver");
    assert_eq!(meta(&t, "records of type 1"), "1704");
    assert_eq!(meta(&t, "records of type 2"), "2640");
    assert_eq!(meta(&t, "records of type 3"), "160");
    assert_eq!(meta(&t, "MPI applications"), "1");
    // 8 MPI tasks in application 1; the 12 uncore readers of application 2 are not ranks.
    assert_eq!(t.num_ranks(), 8);
    assert_eq!(t.ranks[3].locations[0].name, "THREAD 1.4.1");
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    assert!(
        t.metrics.names().iter().all(|m| !m.starts_with("skx_unc")),
        "{:?}",
        t.metrics.names()
    );
}

#[test]
fn lulesh_every_communication_record_is_accounted_for() {
    let (t, text) = lulesh();
    // (sender rank, receiver rank, bytes, tag) from the type-3 lines: tasks of application 1.
    let mut want: HashMap<(u32, u32, u64, i32), i32> = HashMap::new();
    for f in records(&text, "3") {
        assert_eq!(
            (f[2], f[8]),
            (1, 1),
            "the sample's messages are all inside application 1"
        );
        *want
            .entry((f[3] as u32 - 1, f[9] as u32 - 1, f[13], f[14] as i32))
            .or_default() += 1;
    }
    assert_eq!(want.values().sum::<i32>(), 160);
    let mut sends = want.clone();
    let mut recvs = want;
    for rt in &t.ranks {
        let p = &rt.p2p;
        for i in 0..p.len() {
            assert_eq!(p.comm[i], COMM_WORLD);
            let key = match p.dir[i] {
                P2pDir::Send => (rt.rank, p.peer[i], p.bytes.at(i), p.tag[i]),
                P2pDir::Recv => (p.peer[i], rt.rank, p.bytes.at(i), p.tag[i]),
            };
            let table = if p.dir[i] == P2pDir::Send {
                &mut sends
            } else {
                &mut recvs
            };
            *table
                .get_mut(&key)
                .unwrap_or_else(|| panic!("unexpected operation {key:?}")) -= 1;
        }
    }
    assert!(
        sends.values().all(|&n| n == 0),
        "sends not matching the records: {sends:?}"
    );
    assert!(
        recvs.values().all(|&n| n == 0),
        "receives not matching the records: {recvs:?}"
    );
    let bytes: u64 = t.ranks.iter().flat_map(|r| r.p2p.bytes.iter()).sum();
    assert!(bytes > 0);
}

#[test]
fn lulesh_operations_sit_in_the_right_calls() {
    let (t, _) = lulesh();
    for rt in &t.ranks {
        let p = &rt.p2p;
        let c = &rt.calls;
        for i in 0..p.len() {
            let post = p.post[i] as usize;
            let done = p.complete(i);
            assert_ne!(done, NOT_COMPLETED, "rank {} op {i} has no completion", rt.rank);
            let done_name = t.call_name(rt.rank, done);
            match p.dir[i] {
                P2pDir::Send => assert_eq!(c.kind[post], CallKind::Isend),
                P2pDir::Recv => assert_eq!(c.kind[post], CallKind::Irecv),
            }
            assert!(done as usize > post, "completion after the post");
            assert!(done_name.starts_with("MPI_Wait"), "completed by {done_name}");
        }
        assert!(p.post.windows(2).all(|w| w[0] <= w[1]), "operations ordered by call");
    }
}

#[test]
fn lulesh_calls_match_the_mpi_events() {
    let (t, text) = lulesh();
    // Enter events of the Extrae MPI types (value ≠ 0) on application 1, per task.
    let mut enters = [0usize; 8];
    let mut collectives = [0usize; 8];
    let mut counter_reads = [0usize; 8];
    for f in records(&text, "2") {
        if f[2] != 1 {
            continue;
        }
        for pair in f[6..].chunks(2) {
            if (50000001..=50000003).contains(&pair[0]) && pair[1] != 0 {
                enters[f[3] as usize - 1] += 1;
            }
            if pair[0] == 50000002 && pair[1] != 0 {
                collectives[f[3] as usize - 1] += 1;
            }
            if pair[0] == 42000050 {
                counter_reads[f[3] as usize - 1] += 1;
            }
        }
    }
    for rt in &t.ranks {
        let r = rt.rank as usize;
        assert_eq!(rt.calls.len(), enters[r], "rank {r}");
        assert_eq!(rt.collectives.len(), collectives[r], "rank {r}");
        assert!(rt.calls.enters().is_sorted());
        assert!((0..rt.calls.len()).all(|i| rt.calls.exit(i) >= rt.calls.enter(i)));
        let ins = t.metrics.get("PAPI_TOT_INS").unwrap();
        let series = rt.metrics.iter().find(|m| m.metric == ins).unwrap();
        assert_eq!(series.time.len(), counter_reads[r], "rank {r}");
        let c = &rt.collectives;
        for i in 0..c.len() {
            assert_eq!(c.op[i], CollectiveOp::Allreduce);
            assert_eq!((c.bytes_sent[i], c.bytes_recv[i]), (8, 8));
            assert_eq!(c.comm[i], COMM_WORLD, "communicator 14 lists all 8 tasks");
            assert_eq!(c.root[i], NO_ROOT);
        }
    }
    let names = t.functions.names();
    for f in [
        "MPI_Isend",
        "MPI_Irecv",
        "MPI_Wait",
        "MPI_Waitall",
        "MPI_Allreduce",
        "MPI_Comm_rank",
    ] {
        assert!(names.iter().any(|n| n == f), "{f} missing from {names:?}");
    }
}

#[test]
fn lulesh_call_paths_come_from_the_caller_events() {
    let (t, _) = lulesh();
    let rt = &t.ranks[0];
    let mut checked = 0;
    for i in 0..rt.p2p.len() {
        let call = rt.p2p.post[i] as usize;
        let cp = rt.calls.callpath[call];
        let path: Vec<&str> = t.callpaths[cp as usize].iter().map(|&r| t.regions.name(r)).collect();
        let inner = *path.last().unwrap();
        let want = if rt.p2p.dir[i] == P2pDir::Send {
            "CommSend"
        } else {
            "CommRecv"
        };
        assert_eq!(inner, want, "{path:?}");
        checked += 1;
    }
    assert_eq!(checked, 40);
}

#[test]
fn test1_sample_has_ranks_but_no_calls() {
    let t = read_trace(sample("profet-paraver-test1")).unwrap();
    assert_eq!(t.num_ranks(), 8);
    assert_eq!(meta(&t, "records of type 1"), "8");
    assert_eq!(meta(&t, "records of type 2"), "25");
    assert_eq!(t.num_calls(), 0);
    assert!(
        t.warnings.iter().any(|w| w.contains("no matching enter")),
        "{:?}",
        t.warnings
    );
    // Without THREAD labels in the .row, locations are named from the header.
    assert_eq!(t.ranks[0].locations[0].name, "THREAD 1.1.1");
    assert_eq!(t.ranks[4].span, Some((0, 147_421_126)));
}

fn with_prv(prv: &str) -> Result<Trace, FormatError> {
    let mut files = sample(LULESH);
    files.iter_mut().find(|f| f.name == PRV).unwrap().bytes = prv.as_bytes().to_vec();
    paraver::read(&files, &mut NoProgress)
}

#[test]
fn truncated_prv_gives_the_line() {
    let text = prv_text(&sample(LULESH));
    let line_start = text.match_indices("\n3:").nth(10).unwrap().0 + 1;
    let cut = &text[..line_start + 20];
    let err = with_prv(cut).unwrap_err();
    assert_eq!(err.file, PRV);
    assert_eq!(err.line, Some(cut.lines().count() as u64), "{err}");
    assert!(err.message.contains("ends before"), "{err}");
}

#[test]
fn truncation_anywhere_never_panics() {
    let text = prv_text(&sample(LULESH));
    for cut in (0..text.len()).step_by(4999) {
        if let Err(e) = with_prv(&text[..cut]) {
            assert!(e.line.is_some() || e.message.contains("no Paraver"), "{e}");
        }
    }
}

#[test]
fn broken_prv_lines_are_reported() {
    let cases: Vec<(String, u64, &str)> = vec![
        (
            "#Paraver (x):12_ns:0:1:1(1:1),3\nc:1:1:1:1\n".into(),
            3,
            "3 communicator lines",
        ),
        (
            "#Paraver (x):12_ns:0:1:1(1:1),1\nc:1:1:2:1\n".into(),
            2,
            "announces 2 tasks",
        ),
        ("#Paraver (x):abc_ns:0:1:1(1:1)\n".into(), 1, "end time"),
        ("#Paraver (x):10_ns:0:3:1(1:1)\n".into(), 1, "3 applications"),
        ("#Paraver (x):10_ns:0:1:2(1:1)\n".into(), 1, "announces 2 tasks"),
        ("#Paraver (x):10_ns:0:1:1(1:1)\n1:1:1:2:1:0:5:1\n".into(), 2, "task 2"),
        ("#Paraver (x):10_ns:0:1:1(1:1)\n1:1:1:1:3:0:5:1\n".into(), 2, "thread 3"),
        (
            "#Paraver (x):10_ns:0:1:1(1:1)\n\n7:1:1:1:1:0\n".into(),
            3,
            "unknown record type",
        ),
        (
            "#Paraver (x):10_ns:0:1:1(1:1)\n2:1:1:1:1:5:x:1\n".into(),
            2,
            "event type",
        ),
        (
            "#Paraver (x):10_ns:0:1:1(1:1)\n2:1:1:1:1:5\n".into(),
            2,
            "no type:value",
        ),
        (
            "#Paraver (x):18446744073709551615:0:1:1(1:1)\n1:1:1:1:1:0:18446744073709551615:1\n".into(),
            2,
            "overflows",
        ),
    ];
    for (prv, line, needle) in cases {
        let err = with_prv(&prv).unwrap_err();
        assert_eq!(err.file, PRV);
        assert_eq!(err.line, Some(line), "{err}");
        assert!(err.message.contains(needle), "expected `{needle}` in: {err}");
    }
}

#[test]
fn microsecond_files_are_scaled_to_ns() {
    let t = with_prv("#Paraver (x):10:0:1:1(1:1)\n1:1:1:1:1:2:5:1\n").unwrap();
    assert_eq!(meta(&t, "time unit"), "us");
    assert_eq!(t.ranks[0].span, Some((2000, 5000)));
}

#[test]
fn broken_companion_files_are_reported() {
    let mut files = sample(LULESH);
    let row = files.iter_mut().find(|f| f.name.ends_with(".row")).unwrap();
    row.bytes = b"LEVEL THREAD SIZE 30\nTHREAD 1.1.1\n".to_vec();
    let err = paraver::read(&files, &mut NoProgress).unwrap_err();
    assert!(err.file.ends_with(".row") && err.line == Some(1), "{err}");

    let mut files = sample(LULESH);
    let pcf = files.iter_mut().find(|f| f.name.ends_with(".pcf")).unwrap();
    pcf.bytes = b"EVENT_TYPE\n9 notanumber MPI Point-to-point\n".to_vec();
    let err = paraver::read(&files, &mut NoProgress).unwrap_err();
    assert!(err.file.ends_with(".pcf") && err.line == Some(2), "{err}");

    let err = paraver::read(&[InputFile::new("x.pcf", "STATES\n")], &mut NoProgress).unwrap_err();
    assert!(err.message.contains("no Paraver .prv"), "{err}");
}

#[test]
fn reading_can_be_cancelled() {
    let mut sink = |_: &Progress| false;
    let err = paraver::read(&sample(LULESH), &mut sink).unwrap_err();
    assert!(err.cancelled);
}

/// Throughput on about 100 MB of generated Extrae-style records (with the lulesh .pcf). Run in
/// release mode: `cargo test --release -p tracelogic-formats --test paraver -- --ignored --nocapture`.
#[test]
#[ignore]
fn paraver_reader_throughput_on_100_mb() {
    let tasks = 64u64;
    let mut prv = format!("#Paraver (01/01/2024 at 10:00):999999999999_ns:0:1:{tasks}(");
    prv.push_str(&vec!["1:1"; tasks as usize].join(","));
    prv.push_str(")\n");
    let mut t = 0u64;
    let mut messages = 0u64;
    // Records sorted by time, as Paraver requires: per round, task k sends to k+1 at
    // [s, s+500] and receives from k-1 in an Irecv at [s+1000, s+1500].
    let mut round: Vec<(u64, String)> = Vec::new();
    while prv.len() < 100_000_000 {
        round.clear();
        for task in 1..=tasks {
            let peer = task % tasks + 1;
            let s = t + task * 10;
            let r = t + peer * 10;
            round.push((s, format!("1:{task}:1:{task}:1:{s}:{}:10", s + 500)));
            round.push((
                s,
                format!(
                    "2:{task}:1:{task}:1:{s}:50000001:3:42000050:{}:42000059:{}:70000001:9:70000002:11",
                    s * 3,
                    s * 7
                ),
            ));
            round.push((
                s + 500,
                format!("2:{task}:1:{task}:1:{}:50000001:0:42000050:12", s + 500),
            ));
            round.push((r + 1000, format!("2:{peer}:1:{peer}:1:{}:50000001:4", r + 1000)));
            round.push((r + 1500, format!("2:{peer}:1:{peer}:1:{}:50000001:0", r + 1500)));
            round.push((
                s,
                format!(
                    "3:{task}:1:{task}:1:{s}:{}:{peer}:1:{peer}:1:{}:{}:4096:7",
                    s + 500,
                    r + 1000,
                    r + 1500
                ),
            ));
            messages += 1;
        }
        round.sort_by_key(|(time, _)| *time);
        for (_, line) in &round {
            prv.push_str(line);
            prv.push('\n');
        }
        t += 10_000;
    }
    let mut files = sample(LULESH);
    files.iter_mut().find(|f| f.name == PRV).unwrap().bytes = prv.into_bytes();
    let mb = files.iter().map(|f| f.bytes.len()).sum::<usize>() as f64 / 1e6;
    let start = std::time::Instant::now();
    let trace = paraver::read(&files, &mut NoProgress).unwrap();
    let secs = start.elapsed().as_secs_f64();
    let sends: usize = trace
        .ranks
        .iter()
        .map(|r| r.p2p.dir.iter().filter(|&&d| d == P2pDir::Send).count())
        .sum();
    assert_eq!(sends as u64, messages);
    println!(
        "paraver reader: {mb:.1} MB, {} calls, {messages} messages in {secs:.3} s = {:.0} MB/s",
        trace.num_calls(),
        mb / secs
    );
}

#[test]
fn handmade_trace_covers_threads_regions_sendrecv_and_sub_communicators() {
    let t = read_trace(sample("handmade")).unwrap();
    // Application 2 has no MPI event: its task is not a rank.
    assert_eq!(t.num_ranks(), 3);
    let r0 = &t.ranks[0];
    let names: Vec<&str> = r0.locations.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["THREAD 1.1.1", "THREAD 1.1.2"]);
    let calls: Vec<&str> = (0..r0.calls.len() as u32).map(|i| t.call_name(0, i)).collect();
    assert_eq!(
        calls,
        ["MPI_Send", "MPI_Sendrecv", "MPI_Bcast"],
        "threads merged by enter time"
    );
    assert_eq!(r0.calls.location, vec![0, 1, 0]);
    assert_eq!((r0.calls.enter(0), r0.calls.exit(0)), (30, 40));

    // The user-function stack is the call path of calls made inside it.
    let path: Vec<&str> = t.callpaths[r0.calls.callpath[0] as usize]
        .iter()
        .map(|&r| t.regions.name(r))
        .collect();
    assert_eq!(path, ["solve", "exchange"]);
    assert!(
        !t.regions.names().iter().any(|n| n == "Begin"),
        "Begin/End types are not regions"
    );

    // Blocking send and receive; Sendrecv carries one operation each way.
    let p = &r0.p2p;
    assert_eq!(p.post, vec![0, 1, 1]);
    assert_eq!(p.completes().collect::<Vec<_>>(), vec![0, 1, 1]);
    assert_eq!(p.dir, vec![P2pDir::Send, P2pDir::Send, P2pDir::Recv]);
    assert_eq!(p.peer, vec![1, 2, 2]);
    assert_eq!(p.bytes, vec![64, 8, 16]);
    assert_eq!(p.tag, vec![5, 1, 2]);
    let r1 = &t.ranks[1].p2p;
    assert_eq!((r1.dir[0], r1.peer[0], r1.bytes.at(0)), (P2pDir::Recv, 0, 64));

    // Bcast on communicator 2 (tasks 1 and 3 = ranks 0 and 2), root 1 of that communicator.
    let c = &r0.collectives;
    assert_eq!(c.op, vec![CollectiveOp::Bcast]);
    let comm = &t.comms[c.comm[0] as usize];
    assert_eq!((comm.name.as_str(), &comm.members[..]), ("comm 2", &[0, 2][..]));
    assert_eq!(c.root, vec![2]);
    assert_eq!((c.bytes_sent[0], c.bytes_recv[0]), (0, 32));
    assert_eq!(t.ranks[2].collectives.comm, c.comm);

    // Counters: PAPI and native counters of the ranks, not the counter-set id, not application 2.
    assert_eq!(t.metrics.names(), ["PAPI_TOT_INS", "NATIVE_CTR"]);
    let ins = &r0.metrics[0];
    assert_eq!(
        (ins.time.clone(), ins.value.clone()),
        (vec![30, 70], vec![100.0, 250.0])
    );
    assert_eq!(
        t.warnings,
        ["1 communication records involve tasks that are not MPI ranks; skipped"]
    );
    assert_eq!(meta(&t, "records of type 4"), "1");
    assert_eq!(t.ranks[0].span, Some((0, 100)));
}
