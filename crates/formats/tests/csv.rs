//! Pipit CSV reader on both Pipit samples (checked against values read here from the rows),
//! on non-blocking and collective events, and on broken input.

use std::collections::HashMap;
use tracelogic_formats::{csv, read_trace, FormatError, InputFile, NoProgress};
use tracelogic_model::{CallKind, CollectiveOp, P2pDir, Trace, ANY_SOURCE, COMM_WORLD, NOT_COMPLETED, NO_ROOT};

fn sample(name: &str) -> InputFile {
    let path = format!("{}/tests/data/csv/{name}", env!("CARGO_MANIFEST_DIR"));
    InputFile::new(name, std::fs::read(path).unwrap())
}

fn read_str(src: &str) -> Result<Trace, FormatError> {
    csv::read(&[InputFile::new("t.csv", src)], &mut NoProgress)
}

/// The integer after `'key': ` in a row.
fn attr(row: &str, key: &str) -> u64 {
    let at = row.find(&format!("'{key}': ")).unwrap() + key.len() + 4;
    row[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect::<String>()
        .parse()
        .unwrap()
}

fn path_names(t: &Trace, r: u32, call: usize) -> Vec<&str> {
    let cp = t.ranks[r as usize].calls.callpath[call];
    t.callpaths[cp as usize].iter().map(|&x| t.regions.name(x)).collect()
}

#[test]
fn ping_pong_sample() {
    let file = sample("ping-pong-csv.csv");
    let text = String::from_utf8(file.bytes.clone()).unwrap();
    let t = read_trace(vec![file]).unwrap();
    assert_eq!(t.format, "csv");
    assert_eq!(t.num_ranks(), 2);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);

    // Expected from the rows: MPI enters and message instants per process.
    let mut enters = [0usize; 2];
    let mut want: HashMap<(u32, P2pDir, u32, i32, u64), i32> = HashMap::new();
    for row in text.lines().skip(1) {
        let cols: Vec<&str> = row.splitn(6, ',').collect();
        let process: usize = cols[4].parse().unwrap();
        if cols[1] == "Enter" && cols[2].starts_with("MPI_") {
            enters[process] += 1;
        }
        let (dir, peer_key) = match cols[2] {
            "MpiSend" => (P2pDir::Send, "receiver"),
            "MpiRecv" => (P2pDir::Recv, "sender"),
            _ => continue,
        };
        let key = (
            process as u32,
            dir,
            attr(row, peer_key) as u32,
            attr(row, "msg_tag") as i32,
            attr(row, "msg_length"),
        );
        *want.entry(key).or_default() += 1;
    }
    assert_eq!(want.values().sum::<i32>(), 32);
    for rt in &t.ranks {
        assert_eq!(rt.calls.len(), enters[rt.rank as usize]);
        let p = &rt.p2p;
        for i in 0..p.len() {
            let key = (rt.rank, p.dir[i], p.peer[i], p.tag[i], p.bytes.at(i));
            *want.get_mut(&key).unwrap_or_else(|| panic!("unexpected {key:?}")) -= 1;
            let post = p.post[i] as usize;
            assert_eq!(
                p.complete(i) as usize,
                post,
                "blocking operations complete in their call"
            );
            let kind = rt.calls.kind[post];
            assert_eq!(
                kind,
                if p.dir[i] == P2pDir::Send {
                    CallKind::Send
                } else {
                    CallKind::Recv
                }
            );
            assert_eq!(p.comm[i], COMM_WORLD, "the one communicator name is MPI_COMM_WORLD");
        }
    }
    assert!(want.values().all(|&n| n == 0), "{want:?}");
    // 346054.77444467926 ns rounds to 346055; MPI_Init is entered inside main.
    assert_eq!(t.call_name(0, 0), "MPI_Init");
    assert_eq!(t.ranks[0].calls.enter(0), 346_055);
    assert_eq!(t.ranks[0].calls.exit(0), 193_643_138);
    assert_eq!(path_names(&t, 0, 0), ["int main(int, char**)"]);
}

#[test]
fn foo_bar_sample_in_seconds() {
    let t = read_trace(vec![sample("foo-bar.csv")]).unwrap();
    assert_eq!(t.num_ranks(), 2);
    assert_eq!(t.num_calls(), 2);
    let r0 = &t.ranks[0];
    assert_eq!(t.call_name(0, 0), "MPI_Send");
    assert_eq!((r0.calls.enter(0), r0.calls.exit(0)), (3_000_000_000, 5_000_000_000));
    assert_eq!(path_names(&t, 0, 0), ["main()", "foo()"]);
    assert_eq!(t.call_name(1, 0), "MPI_Recv");
    assert_eq!(
        path_names(&t, 1, 0),
        ["main()", "bar()"],
        "Idle was left before the receive"
    );
    assert_eq!(t.ranks[1].span, Some((0, 100_000_000_000)));
    assert!(
        t.ranks.iter().all(|r| r.p2p.is_empty()),
        "no message events in this file"
    );
}

const NON_BLOCKING: &str = r#"Timestamp (ns),Event Type,Name,Thread,Process,Attributes
0,Enter,MPI_Irecv,0,1,{'region': 'R'}
1,Instant,MpiIrecvRequest,0,1,{'request_id': 7}
2,Leave,MPI_Irecv,0,1,
0,Enter,MPI_Isend,0,0,
1,Instant,MpiIsend,0,0,"{'receiver': 1, 'communicator': 'Comm 0', 'msg_tag': 3, 'msg_length': 80, 'request_id': 7}"
2,Leave,MPI_Isend,0,0,
3,Enter,MPI_Wait,0,0,
4,Instant,MpiIsendComplete,0,0,{'request_id': 7}
5,Leave,MPI_Wait,0,0,
3,Enter,MPI_Wait,0,1,
4,Instant,MpiIrecv,0,1,"{'sender': 0, 'communicator': 'Comm 0', 'msg_tag': 3, 'msg_length': 80, 'request_id': 7}"
5,Leave,MPI_Wait,0,1,
6,Enter,MPI_Bcast,0,0,
7,Instant,MpiCollectiveEnd,0,0,"{'collective_op': 'BCAST', 'communicator': 'Comm 1', 'root': 1, 'size_sent': 0, 'size_received': 64}"
8,Leave,MPI_Bcast,0,0,
6,Enter,MPI_Bcast,1,1,
7,Instant,MpiCollectiveEnd,1,1,"{'collective_op': 'BCAST', 'communicator': 'Comm 1', 'root': 1, 'size_sent': 64, 'size_received': 64}"
8,Leave,MPI_Bcast,1,1,
9,Enter,MPI_Irecv,0,1,
10,Instant,MpiIrecvRequest,0,1,{'request_id': 8}
11,Leave,MPI_Irecv,0,1,
12,Instant,MpiSend,0,1,"{'receiver': 0}"
"#;

#[test]
fn non_blocking_and_collective_events() {
    let t = read_str(NON_BLOCKING).unwrap();
    let r0 = &t.ranks[0];
    assert_eq!(r0.p2p.post, vec![0]);
    assert_eq!(
        r0.p2p.completes().collect::<Vec<_>>(),
        vec![1],
        "MpiIsendComplete inside MPI_Wait"
    );
    assert_eq!((r0.p2p.peer[0], r0.p2p.tag[0], r0.p2p.bytes.at(0)), (1, 3, 80));
    let r1 = &t.ranks[1];
    assert_eq!(r1.p2p.dir, vec![P2pDir::Recv, P2pDir::Recv]);
    assert_eq!(r1.p2p.completes().collect::<Vec<_>>(), vec![1, NOT_COMPLETED]);
    assert_eq!((r1.p2p.peer[0], r1.p2p.bytes.at(0)), (0, 80));
    assert_eq!(
        r1.p2p.peer[1], ANY_SOURCE,
        "a receive never completed keeps a wildcard source"
    );
    // Two communicator names: neither says WORLD, so both become communicators.
    assert_eq!(t.comms.len(), 3);
    let c0 = r0.p2p.comm[0] as usize;
    assert_eq!(
        (t.comms[c0].name.as_str(), &t.comms[c0].members[..]),
        ("Comm 0", &[0, 1][..])
    );
    assert_eq!(r0.collectives.op, vec![CollectiveOp::Bcast]);
    assert_eq!(r0.collectives.root, vec![1]);
    assert_eq!((r0.collectives.bytes_sent[0], r0.collectives.bytes_recv[0]), (0, 64));
    assert_ne!(r0.collectives.root[0], NO_ROOT);
    // Rank 1 made the Bcast on its second thread.
    assert_eq!(r1.locations.len(), 2);
    let bcast = r1.collectives.call[0] as usize;
    assert_eq!(r1.calls.location[bcast], 1);
    assert_eq!(t.warnings, ["1 message events were outside any MPI call; skipped"]);
}

#[test]
fn broken_rows_give_the_line() {
    let head = "Timestamp (ns),Event Type,Name,Process\n";
    let cases: Vec<(String, u64, &str)> = vec![
        ("Timestamp (ns),Event Type,Process\n".into(), 1, "`Name`"),
        ("Timestamp (h),Event Type,Name\n".into(), 1, "Timestamp"),
        (format!("{head}0,Enter,MPI_Init,0\n5,Enter\n"), 3, "fields"),
        (format!("{head}abc,Enter,MPI_Init,0\n"), 2, "timestamp"),
        (format!("{head}-5,Enter,MPI_Init,0\n"), 2, "out of range"),
        (format!("{head}0,Begin,MPI_Init,0\n"), 2, "unknown event type"),
        (format!("{head}0,Enter,MPI_Init,zero\n"), 2, "process"),
        (format!("{head}0,Enter,MPI_Init,99999999999999\n"), 2, "plausible rank"),
        (format!("{head}\n\n0,Enter,\"MPI_Init,0\n"), 4, "not closed"),
        (
            "Timestamp (ns),Event Type,Name,Process,Attributes\n0,Enter,MPI_Send,0,\n1,Instant,MpiSend,0,\"{'receiver': 1\"\n"
                .into(),
            3,
            "Attributes",
        ),
        (
            "Timestamp (ns),Event Type,Name,Process,Attributes\n0,Enter,MPI_Send,0,\n1,Instant,MpiSend,0,{'msg_tag': 1}\n"
                .into(),
            3,
            "receiver",
        ),
    ];
    for (src, line, needle) in cases {
        let err = read_str(&src).unwrap_err();
        assert_eq!(err.file, "t.csv");
        assert_eq!(err.line, Some(line), "{err}");
        assert!(err.message.contains(needle), "expected `{needle}` in: {err}");
    }
}

#[test]
fn truncation_anywhere_never_panics() {
    let text = String::from_utf8(sample("ping-pong-csv.csv").bytes).unwrap();
    for cut in (1..text.len()).step_by(13) {
        if !text.is_char_boundary(cut) {
            continue;
        }
        if let Err(e) = read_str(&text[..cut]) {
            assert!(e.line.is_some(), "{e}");
        }
    }
}

#[test]
fn hostile_attribute_nesting_is_an_error() {
    let deep = format!(
        "Timestamp (ns),Event Type,Name,Process,Attributes\n0,Enter,MPI_Send,0,\n1,Instant,MpiSend,0,\"{}\"\n",
        "[".repeat(100_000)
    );
    let err = read_str(&deep).unwrap_err();
    assert!(err.message.contains("nested"), "{err}");
}

/// Throughput on about 100 MB of generated Pipit rows. Run in release mode:
/// `cargo test --release -p tracelogic-formats --test csv -- --ignored --nocapture`.
#[test]
#[ignore]
fn csv_reader_throughput_on_100_mb() {
    use std::fmt::Write as _;
    let ranks = 32u64;
    let mut src = String::from("Timestamp (ns),Event Type,Name,Thread,Process,Attributes\n");
    let mut t = 0f64;
    let mut sends = 0usize;
    while src.len() < 100_000_000 {
        for p in 0..ranks {
            let peer = (p + 1) % ranks;
            let _ = writeln!(
                src,
                "{t},Enter,\"int main(int, char**)\",0,{p},{{'region': 'Region 3'}}"
            );
            let _ = writeln!(src, "{},Enter,MPI_Send,0,{p},{{'region': 'Region 193'}}", t + 1.5);
            let _ = writeln!(
                src,
                "{},Instant,MpiSend,0,{p},\"{{'receiver': {peer}, 'communicator': 'Comm 1', 'msg_tag': 10, 'msg_length': 16384}}\"",
                t + 2.25
            );
            let _ = writeln!(src, "{},Leave,MPI_Send,0,{p},", t + 3.125);
            let _ = writeln!(src, "{},Leave,\"int main(int, char**)\",0,{p},", t + 4.0);
            sends += 1;
        }
        t += 10.0;
    }
    let mb = src.len() as f64 / 1e6;
    let start = std::time::Instant::now();
    let trace = read_str(&src).unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(trace.ranks.iter().map(|r| r.p2p.len()).sum::<usize>(), sends);
    println!(
        "csv reader: {mb:.1} MB, {} calls in {secs:.3} s = {:.0} MB/s",
        trace.num_calls(),
        mb / secs
    );
}

#[test]
fn progress_is_reported_and_reading_can_be_cancelled() {
    let mut reports = Vec::new();
    let mut sink = |p: &tracelogic_formats::Progress| {
        reports.push((p.bytes_done, p.bytes_total));
        true
    };
    csv::read(&[sample("ping-pong-csv.csv")], &mut sink).unwrap();
    assert_eq!(reports, [(0, 8717)]);
    let mut stop = |_: &tracelogic_formats::Progress| false;
    let err = csv::read(&[sample("ping-pong-csv.csv")], &mut stop).unwrap_err();
    assert!(err.cancelled && err.file == "ping-pong-csv.csv", "{err}");
}
