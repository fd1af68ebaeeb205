//! The hot decoders against the generic per-field loop: the same files read both ways must give
//! the same trace, and the same error for every truncation.

use super::{read_with, write};
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
        posted.iter().for_each(|&op| t.ranks[0].p2p.complete[op] = w);
        let w = call(&mut t, 1, if sends.len() > 1 { "MPI_Testall" } else { "MPI_Wait" });
        recvs.iter().for_each(|&op| t.ranks[1].p2p.complete[op] = w);
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
        assert!(rt.p2p.complete.iter().all(|&c| c != NOT_COMPLETED), "rank {}", rt.rank);
    }
}

#[test]
fn hot_decoders_match_the_generic_loop_on_the_real_samples() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/samples");
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
