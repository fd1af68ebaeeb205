//! The hot decoders against the generic per-field loop: the same files read both ways must give
//! the same trace, and the same error for every truncation.

use super::{read_on_threads, read_with, write};
use crate::{InputFile, NoProgress};
use tracelogic_model::{CollectiveOp, P2pDir, Trace, COMM_WORLD, NOT_COMPLETED, NO_CALLPATH, NO_ROOT};
use tracelogic_synth::{generate, CollectiveSpec, Spec, Style, TopologySpec};

/// The trace read both ways, as JSON (the model's serialised form: every column, name and
/// communicator), after checking both reads succeed or fail alike.
fn both_ways(files: &[InputFile]) -> (String, String) {
    let fast = read_with(files, &mut NoProgress, false).expect("hot decoders read the trace");
    let general = read_with(files, &mut NoProgress, true).expect("generic loop reads the trace");
    (
        serde_json::to_string(&fast).expect("serialises"),
        serde_json::to_string(&general).expect("serialises"),
    )
}

fn spec(topology: &str, style: Style) -> Spec {
    Spec {
        topology: TopologySpec::parse(topology).expect("topology"),
        iterations: 6,
        style,
        collectives: [
            (CollectiveOp::Allreduce, 2, 64),
            (CollectiveOp::Barrier, 3, 0),
            (CollectiveOp::Bcast, 2, 1024),
        ]
        .into_iter()
        .map(|(op, every, bytes)| CollectiveSpec { op, every, bytes })
        .collect(),
        ..Spec::default()
    }
}

#[test]
fn hot_decoders_match_the_generic_loop_on_generated_traces() {
    for (topology, style) in [
        ("torus:4x4", Style::Isend),
        ("grid:3x4", Style::Sendrecv),
        ("grid:4x3", Style::Blocking),
        ("grid:4x4", Style::Wavefront),
    ] {
        let trace = generate(&spec(topology, style)).expect("generates");
        let files = write(&trace, "t");
        let (fast, general) = both_ways(&files);
        assert_eq!(fast, general, "{topology} {style:?}: hot and generic reads differ");
        let read = read_with(&files, &mut NoProgress, false).expect("reads");
        assert_eq!(read.num_calls(), trace.num_calls(), "{topology} {style:?}");
        let p2p: usize = read.ranks.iter().map(|r| r.p2p.len()).sum();
        assert!(p2p > 0, "{topology} {style:?}: no point-to-point operation read");
    }
}

/// A two-rank trace with every call of the hot layouts: the blocking send variants, `MPI_Recv`
/// with a status, the non-blocking variants completed by `MPI_Wait`, `MPI_Test`,
/// `MPI_Waitall` and `MPI_Testall`, plus the general-path calls between them.
fn every_hot_call() -> Trace {
    let mut t = Trace::new("generated", "hot", 2);
    let mut now = 1_000u64;
    let mut call = |t: &mut Trace, r: u32, name: &str| {
        now += 100;
        t.push_call(r, name, now, now + 50, NO_CALLPATH, 0)
    };
    let mut tag = 0;
    for (send, recv) in [
        ("MPI_Send", "MPI_Recv"),
        ("MPI_Bsend", "MPI_Recv"),
        ("MPI_Ssend", "MPI_Recv"),
        ("MPI_Rsend", "MPI_Recv"),
    ] {
        tag += 1;
        let s = call(&mut t, 0, send);
        t.push_p2p(0, s, s, P2pDir::Send, 1, tag, COMM_WORLD, 8 * tag as u64);
        let q = call(&mut t, 1, recv);
        t.push_p2p(1, q, q, P2pDir::Recv, 0, tag, COMM_WORLD, 8 * tag as u64);
    }
    // Non-blocking sends completed one by one (Wait, Test) and together (Waitall, Testall);
    // the receives the other way round.
    for (sends, done) in [
        (&["MPI_Isend"][..], "MPI_Wait"),
        (&["MPI_Ibsend"][..], "MPI_Test"),
        (&["MPI_Issend", "MPI_Irsend"][..], "MPI_Waitall"),
        (&["MPI_Isend", "MPI_Isend"][..], "MPI_Testall"),
    ] {
        let mut posted = Vec::new();
        let mut recvs = Vec::new();
        for &name in sends {
            tag += 1;
            let s = call(&mut t, 0, name);
            t.push_p2p(0, s, NOT_COMPLETED, P2pDir::Send, 1, tag, COMM_WORLD, 100 + tag as u64);
            posted.push(t.ranks[0].p2p.len() - 1);
            let q = call(&mut t, 1, "MPI_Irecv");
            t.push_p2p(1, q, NOT_COMPLETED, P2pDir::Recv, 0, tag, COMM_WORLD, 100 + tag as u64);
            recvs.push(t.ranks[1].p2p.len() - 1);
        }
        let w = call(&mut t, 0, done);
        posted.iter().for_each(|&op| t.ranks[0].p2p.set_complete(op, w));
        let w = call(&mut t, 1, if sends.len() > 1 { "MPI_Testall" } else { "MPI_Wait" });
        recvs.iter().for_each(|&op| t.ranks[1].p2p.set_complete(op, w));
        call(&mut t, 0, "MPI_Comm_rank");
    }
    for r in 0..2 {
        let s = call(&mut t, r, "MPI_Sendrecv");
        t.push_p2p(r, s, s, P2pDir::Send, 1 - r, 77, COMM_WORLD, 16);
        t.push_p2p(r, s, s, P2pDir::Recv, 1 - r, 77, COMM_WORLD, 16);
        let b = call(&mut t, r, "MPI_Bcast");
        t.push_collective(r, b, CollectiveOp::Bcast, COMM_WORLD, 0, 32, 32);
        let b = call(&mut t, r, "MPI_Barrier");
        t.push_collective(r, b, CollectiveOp::Barrier, COMM_WORLD, NO_ROOT, 0, 0);
    }
    t
}

#[test]
fn hot_decoders_match_the_generic_loop_on_every_hot_call() {
    let files = write(&every_hot_call(), "hot");
    let (fast, general) = both_ways(&files);
    assert_eq!(fast, general);
    let read = read_with(&files, &mut NoProgress, false).expect("reads");
    for name in [
        "MPI_Send",
        "MPI_Bsend",
        "MPI_Ssend",
        "MPI_Rsend",
        "MPI_Recv",
        "MPI_Isend",
        "MPI_Ibsend",
        "MPI_Issend",
        "MPI_Irsend",
        "MPI_Irecv",
        "MPI_Wait",
        "MPI_Test",
        "MPI_Waitall",
        "MPI_Testall",
    ] {
        assert!(
            read.functions.get(name).is_some(),
            "{name} missing from the written trace"
        );
    }
    // Every non-blocking operation found its completion through the request table.
    for rt in &read.ranks {
        assert!(rt.p2p.completes().all(|c| c != NOT_COMPLETED), "rank {}", rt.rank);
    }
}

#[test]
fn hot_decoders_match_the_generic_loop_on_the_real_samples() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples");
    let mut seen = 0;
    for dir in [
        "npb-bt.S.9",
        "npb-lu.S.8",
        "npb-mg.S.8",
        "sstmacro-dumpi-testbgp",
        "sstmacro-dumpi-testtrace",
    ] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut files: Vec<InputFile> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_file())
            .filter_map(|e| {
                let bytes = std::fs::read(e.path()).ok()?;
                Some(InputFile::new(e.file_name().to_string_lossy().into_owned(), bytes))
            })
            .filter(|f| f.name.ends_with(".bin") || f.name.ends_with(".meta"))
            .collect();
        files.sort_by(|a, b| a.name.cmp(&b.name));
        let (fast, general) = both_ways(&files);
        assert_eq!(fast, general, "{dir}: hot and generic reads differ");
        seen += 1;
    }
    assert!(seen > 0, "no DUMPI sample found under {}", root.display());
}

#[test]
fn hot_decoders_give_the_generic_loop_s_error_at_every_truncation() {
    let files = write(&every_hot_call(), "hot");
    let bin = files
        .iter()
        .position(|f| f.name.ends_with("-0000.bin"))
        .expect("rank 0 file");
    let whole = files[bin].bytes.clone();
    for cut in 0..whole.len() {
        let mut cut_files = files.clone();
        cut_files[bin] = InputFile::new(files[bin].name.clone(), whole[..cut].to_vec());
        let fast = read_with(&cut_files, &mut NoProgress, false).map(|t| serde_json::to_string(&t).expect("json"));
        let general = read_with(&cut_files, &mut NoProgress, true).map(|t| serde_json::to_string(&t).expect("json"));
        match (fast, general) {
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "cut at {cut}"),
            (Ok(a), Ok(b)) => assert_eq!(a, b, "cut at {cut}"),
            (a, b) => panic!("cut at {cut}: hot {:?} but generic {:?}", a.err(), b.err()),
        }
    }
}

/// Records cut inside their hot layout (the file's index rebuilt so only the stream is short):
/// both decoders name the same field at the same offset.
#[test]
fn records_cut_inside_a_hot_layout_give_the_same_error() {
    let files = write(&every_hot_call(), "hot");
    let bin = files
        .iter()
        .position(|f| f.name.ends_with("-0000.bin"))
        .expect("rank 0 file");
    let parsed = super::raw::BinFile::parse(&files[bin].name, &files[bin].bytes).expect("parses");
    let offsets: Vec<u64> = parsed.records().map(|r| r.expect("decodes").offset).collect();
    assert!(offsets.len() > 10);
    let stream_end = parsed.index.header as usize;
    for w in offsets.windows(2) {
        for cut in (w[0] as usize + 3)..(w[1] as usize) {
            // Keep the bytes after the stream where they were: overwrite the record's tail
            // with an END_OF_STREAM-free filler that makes the stream end early.
            let mut bytes = files[bin].bytes.clone();
            bytes.copy_within(stream_end.., cut);
            let shift = (stream_end - cut) as u64;
            bytes.truncate(bytes.len() - (stream_end - cut));
            let n = bytes.len();
            for e in 0..7 {
                let at = n - 8 * (7 - e);
                let off = u64::from_be_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
                if off > cut as u64 {
                    bytes[at..at + 8].copy_from_slice(&(off - shift).to_be_bytes());
                }
            }
            let mut cut_files = files.clone();
            cut_files[bin] = InputFile::new(files[bin].name.clone(), bytes);
            let fast = read_with(&cut_files, &mut NoProgress, false)
                .err()
                .map(|e| e.to_string());
            let general = read_with(&cut_files, &mut NoProgress, true)
                .err()
                .map(|e| e.to_string());
            assert_eq!(fast, general, "record at {} cut at {cut}", w[0]);
        }
    }
}

/// The trace read on one thread and on several, as JSON; both reads must succeed.
fn on_threads(files: &[InputFile], threads: usize) -> String {
    let t = read_on_threads(files, &mut NoProgress, false, Some(threads))
        .unwrap_or_else(|e| panic!("{threads} thread(s): {e}"));
    serde_json::to_string(&t).expect("serialises")
}

/// The error of a read on `threads` threads (the read must fail).
fn error_on_threads(files: &[InputFile], threads: usize) -> String {
    match read_on_threads(files, &mut NoProgress, false, Some(threads)) {
        Ok(_) => panic!("{threads} thread(s): a broken file was read"),
        Err(e) => e.to_string(),
    }
}

/// Every DUMPI trace among the bundled samples, as its files sorted by name.
fn dumpi_samples() -> Vec<(String, Vec<InputFile>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples");
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(&root) else {
        return out;
    };
    let mut dirs: Vec<_> = dirs.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    dirs.sort();
    for dir in dirs.into_iter().filter(|d| d.is_dir()) {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut files: Vec<InputFile> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_file())
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.ends_with(".bin") || n.ends_with(".meta")
            })
            .filter_map(|e| {
                let bytes = std::fs::read(e.path()).ok()?;
                Some(InputFile::new(e.file_name().to_string_lossy().into_owned(), bytes))
            })
            .collect();
        if files.iter().any(|f| f.name.ends_with(".meta")) {
            files.sort_by(|a, b| a.name.cmp(&b.name));
            out.push((
                dir.file_name().unwrap_or_default().to_string_lossy().into_owned(),
                files,
            ));
        }
    }
    out
}

#[test]
fn ranks_read_in_parallel_give_the_sequential_trace_on_the_real_samples() {
    let samples = dumpi_samples();
    assert!(
        samples.len() >= 5,
        "expected the five DUMPI samples, found {}",
        samples.len()
    );
    for (dir, files) in &samples {
        let one = on_threads(files, 1);
        for threads in [2, 3, 8] {
            assert!(
                one == on_threads(files, threads),
                "{dir}: {threads} threads differ from one"
            );
        }
    }
}

/// A generated trace with communicators split off `MPI_COMM_WORLD` (rows and columns of the
/// grid, a duplicate of the rows), collectives and messages on them, and names, call paths and
/// communicators first used in a different order on odd ranks, so that merging renumbers them.
fn generated_with_communicators(topology: &str, style: Style, width: u32) -> Trace {
    let mut t = generate(&spec(topology, style)).expect("generates");
    let n = t.num_ranks();
    let rows: Vec<u32> = (0..n.div_ceil(width))
        .map(|row| {
            t.add_comm(
                &format!("row {row}"),
                (row * width..((row + 1) * width).min(n)).collect(),
            )
        })
        .collect();
    let cols: Vec<u32> = (0..width)
        .map(|col| t.add_comm(&format!("column {col}"), (col..n).step_by(width as usize).collect()))
        .collect();
    let solve = t.regions.intern("solve");
    let halo = t.regions.intern("halo");
    let deep = t.intern_callpath(&[solve, halo]);
    let shallow = t.intern_callpath(&[halo]);
    for r in 0..n {
        let (row, col) = (rows[(r / width) as usize], cols[(r % width) as usize]);
        let mut now = t.ranks[r as usize].span.map_or(0, |s| s.1) + 1_000;
        let mut call = |t: &mut Trace, name: &str, callpath: u32| {
            now += 500;
            t.push_call(r, name, now, now + 200, callpath, 0)
        };
        let odd = r % 2 == 1;
        let order: [(u32, CollectiveOp, &str, u32); 2] = [
            (row, CollectiveOp::Bcast, "MPI_Bcast", deep),
            (col, CollectiveOp::Allreduce, "MPI_Allreduce", shallow),
        ];
        for i in 0..2 {
            let (comm, op, name, cp) = order[if odd { 1 - i } else { i }];
            let c = call(&mut t, name, cp);
            let members = t.comms[comm as usize].members.clone();
            let root = if op == CollectiveOp::Bcast { members[0] } else { NO_ROOT };
            let (sent, recv) = match op {
                CollectiveOp::Bcast if root == r => (256, 0),
                CollectiveOp::Bcast => (0, 256),
                _ => (64, 64),
            };
            t.push_collective(r, c, op, comm, root, sent, recv);
        }
        // A message along the row to the next member, if any, received from the previous one.
        let members = t.comms[row as usize].members.clone();
        let me = members.iter().position(|&m| m == r).expect("member of its row");
        if let Some(&next) = members.get(me + 1) {
            let s = call(&mut t, "MPI_Send", NO_CALLPATH);
            t.push_p2p(r, s, s, P2pDir::Send, next, 99, row, 48);
        }
        if me > 0 {
            let q = call(&mut t, "MPI_Recv", deep);
            t.push_p2p(r, q, q, P2pDir::Recv, members[me - 1], 99, row, 48);
        }
    }
    t
}

/// One rank's calls, point-to-point operations and collectives with every id replaced by what it
/// names (function and region names, communicator members), without the `MPI_Comm_split` calls
/// the writer adds; independent of the order in which a reader numbered anything.
type ByName = (
    Vec<(String, Vec<String>)>,
    Vec<(P2pDir, u32, i32, Vec<u32>, u64)>,
    Vec<(CollectiveOp, Vec<u32>, u32, u64, u64)>,
);

fn by_name(t: &Trace, r: usize) -> ByName {
    let rt = &t.ranks[r];
    let members = |c: u32| t.comms[c as usize].members.clone();
    let calls = (0..rt.calls.len())
        .map(|i| {
            let path = t.callpaths.get(rt.calls.callpath[i] as usize).map_or(Vec::new(), |p| {
                p.iter().map(|&g| t.regions.name(g).to_owned()).collect()
            });
            (t.functions.name(rt.calls.func[i]).to_owned(), path)
        })
        .filter(|(f, _)| f != "MPI_Comm_split")
        .collect();
    let p = &rt.p2p;
    let p2p = (0..p.len())
        .map(|i| (p.dir[i], p.peer[i], p.tag[i], members(p.comm[i]), p.bytes.at(i)))
        .collect();
    let c = &rt.collectives;
    let colls = (0..c.len())
        .map(|i| (c.op[i], members(c.comm[i]), c.root[i], c.bytes_sent[i], c.bytes_recv[i]))
        .collect();
    (calls, p2p, colls)
}

#[test]
fn ranks_read_in_parallel_give_the_sequential_trace_on_generated_traces() {
    for (topology, style, width) in [
        ("torus:4x4", Style::Isend, 4),
        ("grid:3x4", Style::Sendrecv, 4),
        ("grid:4x3", Style::Blocking, 3),
        ("grid:4x4", Style::Wavefront, 4),
    ] {
        let trace = generated_with_communicators(topology, style, width);
        let files = write(&trace, "t");
        let one = on_threads(&files, 1);
        let read: Trace = serde_json::from_str(&one).expect("parses back");
        assert!(
            read.comms.len() > width as usize,
            "{topology}: communicators not read back"
        );
        assert!(read.callpaths.len() >= 2, "{topology}: call paths not read back");
        let on_rows = read
            .ranks
            .iter()
            .flat_map(|r| &r.collectives.comm)
            .filter(|&&c| c != COMM_WORLD);
        assert!(on_rows.count() > 0, "{topology}: no collective on a split communicator");
        // The merged parts say what the written trace said, whatever order each rank met things in.
        for r in 0..trace.ranks.len() {
            assert!(
                by_name(&trace, r) == by_name(&read, r),
                "{topology} {style:?}: rank {r} reads back otherwise"
            );
        }
        for threads in [2, 3, 8] {
            assert!(
                one == on_threads(&files, threads),
                "{topology} {style:?}: {threads} threads differ from one"
            );
        }
    }
}

/// The files of a generated 16-rank trace and the index of rank `r`'s file.
fn sixteen_rank_files() -> (Vec<InputFile>, impl Fn(&[InputFile], u32) -> usize) {
    let files = write(&generated_with_communicators("torus:4x4", Style::Isend, 4), "t");
    let at = |files: &[InputFile], r: u32| {
        files
            .iter()
            .position(|f| f.name.ends_with(&format!("-{r:04}.bin")))
            .expect("rank file")
    };
    (files, at)
}

#[test]
fn a_broken_rank_file_in_the_middle_gives_the_sequential_error_on_every_thread_count() {
    let (files, at) = sixteen_rank_files();
    let i = at(&files, 7);
    let whole = files[i].bytes.clone();
    let mut flipped = whole.clone();
    // The first record's call id: an id no DUMPI call has.
    let first = super::raw::BinFile::parse(&files[i].name, &whole)
        .expect("parses")
        .records()
        .next()
        .expect("a record")
        .expect("decodes")
        .offset as usize;
    flipped[first..first + 2].copy_from_slice(&0xfff0u16.to_be_bytes());
    for broken in [whole[..whole.len() / 2].to_vec(), whole[..40].to_vec(), flipped] {
        let mut set = files.clone();
        set[i] = InputFile::new(files[i].name.clone(), broken);
        let one = error_on_threads(&set, 1);
        assert!(one.contains("t-0007.bin"), "the error names the broken file: {one}");
        for threads in [2, 3, 8] {
            assert_eq!(one, error_on_threads(&set, threads), "{threads} threads");
        }
    }
}

#[test]
fn of_two_broken_rank_files_the_first_in_rank_order_is_the_error() {
    let (files, at) = sixteen_rank_files();
    let mut set = files.clone();
    for r in [5, 12] {
        let i = at(&files, r);
        let cut = files[i].bytes.len() * 2 / 3;
        set[i] = InputFile::new(files[i].name.clone(), files[i].bytes[..cut].to_vec());
    }
    let one = error_on_threads(&set, 1);
    assert!(one.contains("t-0005.bin"), "rank 5's file is the error: {one}");
    for threads in [2, 3, 8, 16] {
        assert_eq!(one, error_on_threads(&set, threads), "{threads} threads");
    }
}

#[test]
fn a_read_cancelled_on_any_thread_count_ends_with_a_cancelled_error() {
    let (files, _) = sixteen_rank_files();
    for threads in [1, 2, 8] {
        let mut reports = 0;
        let mut cancel_at_second = |_: &crate::Progress| {
            reports += 1;
            reports < 2
        };
        let e = read_on_threads(&files, &mut cancel_at_second, false, Some(threads)).expect_err("cancelled");
        assert!(e.cancelled, "{threads} threads: {e}");
    }
}

/// Rank 0's file of `files` with the peer of its `nth` record of call `name` replaced by `peer`
/// (the argument bytes as the hot decoder reads them: count, datatype, then the peer).
fn with_peer(files: &[InputFile], name: &str, nth: usize, peer: i32) -> Vec<InputFile> {
    use super::raw::{BinFile, Record};
    let mut files = files.to_vec();
    let at = files
        .iter()
        .position(|f| f.name.ends_with("-0000.bin"))
        .expect("rank 0");
    let bin = BinFile::parse(&files[at].name, &files[at].bytes).expect("parses");
    let mut records = bin.records();
    let mut rec = Record::empty();
    let mut seen = 0;
    let mut offset = None;
    while records.head_into(&mut rec).expect("head") {
        if rec.spec().name == name {
            if seen == nth {
                offset = Some(records.position() + 6);
                break;
            }
            seen += 1;
        }
        records.args_into(&mut rec).expect("arguments");
    }
    let offset = offset.unwrap_or_else(|| panic!("no {name} number {nth} on rank 0"));
    let mut bytes = files[at].bytes.to_vec();
    bytes[offset..offset + 4].copy_from_slice(&peer.to_be_bytes());
    files[at] = InputFile::new(files[at].name.clone(), bytes);
    files
}

/// The fast paths (hot decoders, direct-mapped requests, the world's peers kept as they are)
/// against the general ones on traces with split communicators, a wildcard receive resolved from
/// its status, and peers outside the world (a send dropped with a warning, a receive whose
/// status names a source outside the world).
#[test]
fn fast_paths_match_the_general_paths_on_communicators_wildcards_and_peers_outside_the_world() {
    for (topology, style, width) in [
        ("torus:4x4", Style::Isend, 4),
        ("grid:3x4", Style::Sendrecv, 4),
        ("grid:4x3", Style::Blocking, 3),
    ] {
        let files = write(&generated_with_communicators(topology, style, width), "t");
        let (fast, general) = both_ways(&files);
        assert!(fast == general, "{topology} {style:?}: fast and general reads differ");
        assert!(
            fast.contains("split of MPI_COMM_WORLD"),
            "{topology}: split communicators not read"
        );
    }
    let files = write(&generated_with_communicators("torus:4x4", Style::Isend, 4), "t");
    for (name, nth, peer) in [
        ("Irecv", 0, -1),
        ("Irecv", 1, 16),
        ("Isend", 2, 16),
        ("Isend", 3, 1 << 30),
        ("Irecv", 4, -1),
        ("Send", 0, 17),
    ] {
        let patched = with_peer(&files, name, nth, peer);
        let (fast, general) = both_ways(&patched);
        assert!(
            fast == general,
            "{name} {nth} to peer {peer}: fast and general reads differ"
        );
        let read = read_with(&patched, &mut NoProgress, false).expect("reads");
        let before = read_with(&files, &mut NoProgress, false).expect("reads");
        let ops = |t: &Trace| t.ranks[0].p2p.len();
        match peer {
            -1 => assert_eq!(ops(&read), ops(&before), "a wildcard receive is kept"),
            _ => assert_eq!(ops(&read), ops(&before) - 1, "{name} to {peer} is left out"),
        }
    }
}

/// Every rank file of `files` with its first record moved `seconds` later (entry and exit of its
/// wall-clock interval), so that the earliest first record is no longer the trace's origin.
fn first_records_later(files: &[InputFile], seconds: u16) -> Vec<InputFile> {
    use super::raw::{BinFile, Record, MASK_CPU_TIME, MASK_THREAD, MASK_WALL_TIME};
    files
        .iter()
        .map(|f| {
            if !f.name.ends_with(".bin") {
                return f.clone();
            }
            let bin = BinFile::parse(&f.name, &f.bytes).expect("parses");
            let mut rec = Record::empty();
            assert!(
                bin.records().head_into(&mut rec).expect("head"),
                "{}: no record",
                f.name
            );
            assert!(rec.mask & MASK_WALL_TIME != 0, "{}: no wall time", f.name);
            let at = rec.offset as usize
                + 3
                + 2 * (rec.mask & MASK_THREAD != 0) as usize
                + 12 * (rec.mask & MASK_CPU_TIME != 0) as usize;
            let mut bytes = f.bytes.to_vec();
            for sec in [at, at + 6] {
                let was = u16::from_be_bytes([bytes[sec], bytes[sec + 1]]);
                bytes[sec..sec + 2].copy_from_slice(&(was + seconds).to_be_bytes());
            }
            InputFile::new(f.name.clone(), bytes)
        })
        .collect()
}

/// The times are stored minus the earliest first record of the rank files and rewritten once
/// the origin is known only when it differs: a trace whose first records all come after later
/// ones reads as the general path (plain times, always rewritten) reads it.
#[test]
fn times_match_the_general_path_when_the_first_records_are_not_the_earliest() {
    let files = write(&generated_with_communicators("torus:4x4", Style::Isend, 4), "t");
    for seconds in [0, 1, 300] {
        let later = first_records_later(&files, seconds);
        let (fast, general) = both_ways(&later);
        assert!(
            fast == general,
            "first records {seconds} s later: fast and general reads differ"
        );
        let read = read_with(&later, &mut NoProgress, false).expect("reads");
        let first_enter = read.ranks[0].calls.enter(0);
        assert!(first_enter >= u64::from(seconds) * 1_000_000_000, "{seconds} s");
        assert_eq!(read.span().0, 0, "{seconds} s: the origin is the earliest time");
    }
}

/// Rank files large enough to have their columns reserved before the reading threads start
/// (`RESERVE_ON_CALLER_BYTES`) read as the general path and every thread count read them, into
/// columns of exactly the footer's size.
#[test]
fn large_rank_files_reserved_up_front_read_as_the_general_path() {
    let trace = generate(&Spec {
        iterations: 800,
        ..spec("torus:4x4", Style::Isend)
    })
    .expect("generates");
    let files = write(&trace, "big");
    let smallest = files
        .iter()
        .filter(|f| f.name.ends_with(".bin"))
        .map(|f| f.bytes.len())
        .min()
        .expect("rank files");
    assert!(
        smallest >= super::RESERVE_ON_CALLER_BYTES,
        "rank files of {smallest} bytes are too small for the test"
    );
    let (fast, general) = both_ways(&files);
    assert!(fast == general, "fast and general reads differ");
    let one = on_threads(&files, 1);
    for threads in [2, 3] {
        assert!(one == on_threads(&files, threads), "{threads} threads differ from one");
    }
    let read = read_with(&files, &mut NoProgress, false).expect("reads");
    assert_eq!(read.num_calls(), trace.num_calls());
    let calls = &read.ranks[5].calls;
    assert_eq!(
        calls.kind.capacity(),
        calls.len(),
        "columns reserved from the footer's counts"
    );
}
