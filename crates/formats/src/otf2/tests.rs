//! The direct path for the hot event records against the general decoder: the same archives
//! read both ways must give the same trace, and the same error for every truncation.

use super::{read_with, write_with_chunk_size};
use crate::{InputFile, NoProgress};
use std::path::Path;
use tracelogic_synth::{generate, CollectiveSpec, Spec, Style, TopologySpec};

fn both_ways(files: &[InputFile]) -> Result<(String, String), (String, String)> {
    let fast = read_with(files, &mut NoProgress, false, 1);
    let general = read_with(files, &mut NoProgress, true, 1);
    match (fast, general) {
        (Ok(a), Ok(b)) => Ok((
            serde_json::to_string(&a).expect("serialises"),
            serde_json::to_string(&b).expect("serialises"),
        )),
        (a, b) => Err((
            a.map(|t| t.num_calls().to_string()).unwrap_or_else(|e| e.to_string()),
            b.map(|t| t.num_calls().to_string()).unwrap_or_else(|e| e.to_string()),
        )),
    }
}

fn generated(topology: &str, style: Style) -> tracelogic_model::Trace {
    generated_for(topology, style, 5)
}

/// [`generated`] with `iterations` iterations.
fn generated_for(topology: &str, style: Style, iterations: u32) -> tracelogic_model::Trace {
    let spec = Spec {
        topology: TopologySpec::parse(topology).expect("topology"),
        iterations,
        style,
        collectives: [
            (tracelogic_model::CollectiveOp::Allreduce, 2, 64),
            (tracelogic_model::CollectiveOp::Barrier, 3, 0),
            (tracelogic_model::CollectiveOp::Bcast, 2, 256),
        ]
        .into_iter()
        .map(|(op, every, bytes)| CollectiveSpec { op, every, bytes })
        .collect(),
        ..Spec::default()
    };
    generate(&spec).expect("generates")
}

#[test]
fn hot_records_match_the_general_decoder_on_generated_traces() {
    for (topology, style) in [
        ("torus:4x4", Style::Isend),
        ("grid:3x4", Style::Sendrecv),
        ("grid:4x3", Style::Blocking),
        ("grid:4x4", Style::Wavefront),
    ] {
        let trace = generated(topology, style);
        // Small chunks too, so that records cross chunk ends on the hot path.
        for chunk in [1 << 20, 4096] {
            let files = write_with_chunk_size(&trace, "traces", chunk);
            let (fast, general) = both_ways(&files).expect("both read");
            assert_eq!(
                fast, general,
                "{topology} {style:?} chunk {chunk}: hot and general reads differ"
            );
        }
        let read = super::read(&super::write(&trace, "traces"), &mut NoProgress).expect("reads");
        assert_eq!(read.num_calls(), trace.num_calls(), "{topology} {style:?}");
        assert!(read.ranks.iter().any(|r| !r.p2p.is_empty()), "{topology} {style:?}");
    }
}

/// The files of a sample archive, named relative to its folder (`traces.otf2`, `traces/0.evt`).
fn load_dir(root: &Path, dir: &Path, out: &mut Vec<InputFile>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(|e| e.ok()) {
        let path = e.path();
        if path.is_dir() {
            if e.file_name() != "expected" {
                load_dir(root, &path, out);
            }
        } else if let Ok(bytes) = std::fs::read(&path) {
            let name = path
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .into_owned();
            out.push(InputFile::new(name, bytes));
        }
    }
}

/// The OTF2 samples under tests/data/samples that are present, by folder name, each with its
/// files in name order; fails when none is.
fn otf2_samples() -> Vec<(&'static str, Vec<InputFile>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples");
    let samples: Vec<_> = [
        "pipit-ping-pong-otf2",
        "pipit-ping-pong-otf2-papi",
        "pyotf2-generated-4rank",
        "pyotf2-generated-multichunk",
    ]
    .into_iter()
    .filter_map(|dir| {
        let mut files = Vec::new();
        load_dir(&root.join(dir), &root.join(dir), &mut files);
        files.sort_by(|a, b| a.name.cmp(&b.name));
        (!files.is_empty()).then_some((dir, files))
    })
    .collect();
    assert!(!samples.is_empty(), "no OTF2 sample found under {}", root.display());
    samples
}

#[test]
fn hot_records_match_the_general_decoder_on_the_real_samples() {
    for (dir, files) in otf2_samples() {
        let (fast, general) = both_ways(&files).unwrap_or_else(|e| panic!("{dir}: {e:?}"));
        assert_eq!(fast, general, "{dir}: hot and general reads differ");
    }
}

#[test]
fn hot_records_give_the_general_decoder_s_error_at_every_truncation() {
    let trace = generated("ring:3", Style::Isend);
    let files = write_with_chunk_size(&trace, "traces", 1 << 20);
    let evt = files
        .iter()
        .position(|f| f.name.ends_with("0.evt"))
        .expect("an event file");
    let whole = files[evt].bytes.clone();
    assert!(whole.len() > 200, "event file of {} bytes", whole.len());
    for cut in 0..whole.len() {
        let mut cut_files = files.clone();
        cut_files[evt] = InputFile::new(files[evt].name.clone(), whole[..cut].to_vec());
        match both_ways(&cut_files) {
            Ok((a, b)) => assert_eq!(a, b, "cut at {cut}"),
            Err((a, b)) => assert_eq!(a, b, "cut at {cut}"),
        }
    }
    // Corrupted bytes (every byte of the file flipped in turn) fail or succeed alike too.
    for at in 0..whole.len() {
        let mut bytes = whole.clone();
        bytes[at] ^= 0x5a;
        let mut bad = files.clone();
        bad[evt] = InputFile::new(files[evt].name.clone(), bytes);
        match both_ways(&bad) {
            Ok((a, b)) => assert_eq!(a, b, "byte {at} flipped"),
            Err((a, b)) => assert_eq!(a, b, "byte {at} flipped"),
        }
    }
}

fn json(t: &tracelogic_model::Trace) -> String {
    serde_json::to_string(t).expect("serialises")
}

/// Read `files` in one part and with 2, 3 and 8 threads: the same trace or the same error
/// (message, file and offset). The one-part result.
fn same_whatever_the_threads(files: &[InputFile], what: &str) -> Result<tracelogic_model::Trace, crate::FormatError> {
    let one = read_with(files, &mut NoProgress, false, 1);
    for threads in [2, 3, 8] {
        match (&one, read_with(files, &mut NoProgress, false, threads)) {
            (Ok(a), Ok(b)) => assert!(json(a) == json(&b), "{what}: {threads} threads give another trace"),
            (Err(a), Err(b)) => assert_eq!(a, &b, "{what}: {threads} threads give another error"),
            (a, b) => panic!(
                "{what}: one part gives {a:?}, {threads} threads {:?}",
                b.map(|t| t.num_calls())
            ),
        }
    }
    one
}

#[test]
fn threads_give_the_one_part_trace_on_the_real_samples() {
    for (dir, files) in otf2_samples() {
        let t = same_whatever_the_threads(&files, dir).unwrap_or_else(|e| panic!("{dir}: {e}"));
        assert!(t.num_ranks() > 1, "{dir}: one rank cannot be split");
    }
}

/// `trace` with its calls spread over two threads per rank, alternately, so that requests are
/// posted on one location and completed on the other.
fn two_threads_per_rank(mut trace: tracelogic_model::Trace) -> tracelogic_model::Trace {
    for rt in &mut trace.ranks {
        let r = rt.rank as u64;
        rt.locations = (0..2)
            .map(|t| tracelogic_model::Location {
                id: 2 * r + t,
                name: format!("thread {t}"),
            })
            .collect();
        for (c, l) in rt.calls.location.iter_mut().enumerate() {
            *l = (c % 2) as u16;
        }
    }
    trace
}

#[test]
fn threads_give_the_one_part_trace_on_generated_traces() {
    for (topology, style) in [
        ("torus:4x4", Style::Isend),
        ("grid:3x4", Style::Sendrecv),
        ("grid:4x3", Style::Blocking),
        ("grid:4x4", Style::Wavefront),
    ] {
        let trace = generated(topology, style);
        for chunk in [1 << 20, 4096] {
            let files = write_with_chunk_size(&trace, "traces", chunk);
            let what = format!("{topology} {style:?} chunk {chunk}");
            let read = same_whatever_the_threads(&files, &what).expect("reads");
            assert!(read.ranks.iter().all(|r| !r.collectives.is_empty()), "{what}");
        }
        let threaded = two_threads_per_rank(trace);
        let files = write_with_chunk_size(&threaded, "traces", 4096);
        let what = format!("{topology} {style:?} on two threads per rank");
        let read = same_whatever_the_threads(&files, &what).expect("reads");
        assert!(read.ranks.iter().all(|r| r.locations.len() == 2), "{what}");
        if style == Style::Isend {
            // Some request is completed on the other location than the one that posted it.
            let crossed = read.ranks.iter().any(|rt| {
                let (p, loc) = (&rt.p2p, &rt.calls.location);
                (0..p.len()).any(|i| {
                    p.complete(i) != tracelogic_model::NOT_COMPLETED
                        && loc[p.post[i] as usize] != loc[p.complete(i) as usize]
                })
            });
            assert!(crossed, "{what}: no request completed across locations");
        }
    }
}

/// Ranks with enough events to have their columns reserved before the reading threads start
/// (`RESERVE_ON_CALLER_BYTES`) are read as in one part, with one or several locations.
#[test]
fn threads_give_the_one_part_trace_on_large_ranks() {
    let trace = generated_for("torus:2x2", Style::Isend, 1500);
    for (trace, what) in [
        (trace.clone(), "one location"),
        (two_threads_per_rank(trace), "two locations"),
    ] {
        let files = write_with_chunk_size(&trace, "traces", 1 << 20);
        let smallest = files
            .iter()
            .filter(|f| f.name.ends_with(".evt"))
            .map(|f| f.bytes.len())
            .min();
        let per_rank = smallest.unwrap_or(0) as u64 * trace.ranks[0].locations.len().max(1) as u64;
        assert!(
            per_rank >= super::build::RESERVE_ON_CALLER_BYTES,
            "{what}: {per_rank} bytes per rank"
        );
        let read = same_whatever_the_threads(&files, what).expect("reads");
        assert_eq!(read.ranks[0].calls.len(), trace.ranks[0].calls.len(), "{what}");
    }
}

/// The files of the archive `interleaved_threads.py` writes, or `None` (with a note) when the
/// Python `otf2` package is missing and `TRACELOGIC_REQUIRE_PY` is not set.
fn interleaved_threads_archive() -> Option<Vec<InputFile>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/otf2/testdata/interleaved_threads.py");
    let out = std::env::temp_dir().join(format!("tracelogic-otf2-interleaved-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = std::process::Command::new("python3").arg(&script).arg(&out).output();
    let ok = matches!(&run, Ok(o) if o.status.success());
    if !ok {
        let why = match run {
            Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
            Err(e) => e.to_string(),
        };
        if std::env::var("TRACELOGIC_REQUIRE_PY").is_ok_and(|v| v == "1") {
            panic!("TRACELOGIC_REQUIRE_PY=1 but {} failed: {why}", script.display());
        }
        eprintln!("note: skipped, the Python otf2 package (pip install otf2==3.2) is needed: {why}");
        return None;
    }
    let mut files = Vec::new();
    load_dir(&out, &out, &mut files);
    let _ = std::fs::remove_dir_all(&out);
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Some(files)
}

#[test]
fn threads_give_the_one_part_trace_when_a_rank_s_locations_are_apart() {
    let Some(files) = interleaved_threads_archive() else {
        return;
    };
    let t = same_whatever_the_threads(&files, "interleaved threads").expect("reads");
    assert_eq!(t.num_ranks(), 3);
    assert!(t.ranks.iter().all(|r| r.locations.len() == 2));
    // Every request was completed, on the other thread of its rank.
    for rt in &t.ranks {
        let p = &rt.p2p;
        let nonblocking = (0..p.len()).filter(|&i| p.post[i] != p.complete(i));
        assert_eq!(nonblocking.clone().count(), 6, "rank {}", rt.rank);
        for i in nonblocking {
            assert_ne!(
                rt.calls.location[p.post[i] as usize],
                rt.calls.location[p.complete(i) as usize],
                "rank {}",
                rt.rank
            );
        }
    }
    // The communicators created by events: MPI_COMM_SELF of rank 1 and the non-MPI group's.
    let names: Vec<&str> = t.comms.iter().map(|c| c.name.as_str()).collect();
    assert!(
        names.contains(&"MPI_COMM_SELF") && names.contains(&"sub comm"),
        "{names:?}"
    );
    // Locations are defined thread by thread: rank 1 thread 0 (the second location) fails
    // before rank 0 thread 1 (the fourth), although rank 0's part comes first.
    let mut broken = files.clone();
    for name in ["traces/1.evt", "traces/3.evt"] {
        let f = broken.iter_mut().find(|f| f.name == name).expect("event file");
        let half = f.bytes.len() / 2;
        f.bytes[half..].fill(0xff);
    }
    let e = same_whatever_the_threads(&broken, "interleaved threads, two broken").unwrap_err();
    assert_eq!(e.file, "traces/1.evt", "{e}");
}

#[test]
fn threads_give_the_one_part_error_for_broken_event_files() {
    let trace = generated("torus:4x4", Style::Isend);
    let files = write_with_chunk_size(&trace, "traces", 4096);
    let index_of = |name: &str| files.iter().position(|f| f.name == name).expect(name);
    let middle = index_of("traces/7.evt");
    let whole = files[middle].bytes.clone();
    let mut failures = 0;
    for cut in (0..whole.len()).step_by(97) {
        let mut cut_files = files.clone();
        cut_files[middle] = InputFile::new(files[middle].name.clone(), whole[..cut].to_vec());
        if let Err(e) = same_whatever_the_threads(&cut_files, &format!("cut at {cut}")) {
            assert_eq!(e.file, "traces/7.evt", "cut at {cut}: {e}");
            failures += 1;
        }
    }
    assert!(failures > 0, "no truncation failed");
    for at in (0..whole.len()).step_by(89) {
        let mut bad = files.clone();
        let mut bytes = whole.clone();
        bytes[at] ^= 0x5a;
        bad[middle] = InputFile::new(files[middle].name.clone(), bytes);
        // Must be the same, whether it fails or not.
        let _ = same_whatever_the_threads(&bad, &format!("byte {at} flipped"));
    }
    // Two broken files: the first in location order wins, whichever thread reads it.
    let mut two = files.clone();
    for name in ["traces/11.evt", "traces/5.evt"] {
        let i = index_of(name);
        let half = two[i].bytes.len() / 2;
        two[i] = InputFile::new(name.to_owned(), two[i].bytes[..half].to_vec());
    }
    let e = same_whatever_the_threads(&two, "two truncated files").unwrap_err();
    assert_eq!(e.file, "traces/5.evt", "{e}");
    assert!(e.offset.is_some(), "{e}");
}

#[test]
fn threads_give_the_one_part_trace_past_the_call_path_budget() {
    // Every rank's calls sit in 200 call paths of 3 regions: shared by all ranks in the first
    // trace (the parts together pass the budget, the trace does not), one rank's own in the
    // second (the trace passes it too and later paths are dropped).
    for own_paths in [false, true] {
        let mut t = tracelogic_model::Trace::new("generated", "paths", 8);
        let main = t.regions.intern("main");
        for r in 0..8u32 {
            for k in 0..200u64 {
                let f = t.regions.intern(&format!("f{k}"));
                let g = t.regions.intern(&format!("g{}", if own_paths { r } else { 0 }));
                let path = t.intern_callpath(&[main, f, g]);
                t.push_call(r, "MPI_Comm_rank", 10 * k, 10 * k + 5, path, 0);
            }
        }
        let files = super::write(&t, "traces");
        let read = same_whatever_the_threads(&files, "many call paths").expect("reads");
        let dropped = read.warnings.iter().any(|w| w.contains("have no call path"));
        assert_eq!(dropped, own_paths, "{:?}", read.warnings);
        assert!(read.callpaths.iter().map(|p| p.len() + 1).sum::<usize>() <= super::build::MAX_CALLPATH_STORAGE);
    }
}

#[test]
fn reading_on_threads_reports_progress_up_to_the_total_and_can_be_cancelled() {
    let files = write_with_chunk_size(&generated("torus:4x4", Style::Isend), "traces", 4096);
    let total: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    let mut seen = Vec::new();
    let mut sink = |p: &crate::Progress| {
        seen.push((p.bytes_done, p.bytes_total));
        true
    };
    read_with(&files, &mut sink, false, 3).expect("reads");
    assert!(seen.iter().all(|&(done, of)| done <= of), "{seen:?}");
    assert_eq!(seen.last(), Some(&(total, total)), "{seen:?}");
    // A sink that refuses everything after the first report: the read stops with a
    // cancelled error, or (when every part was already read) gives the whole trace, never a
    // partial one.
    let whole = json(&read_with(&files, &mut NoProgress, false, 3).expect("reads"));
    for threads in [2, 3, 8] {
        let mut reports = 0;
        let mut cancel = |_: &crate::Progress| {
            reports += 1;
            reports <= 1
        };
        match read_with(&files, &mut cancel, false, threads) {
            Err(e) => assert!(e.cancelled, "{threads} threads: {e}"),
            Ok(t) => assert!(
                json(&t) == whole,
                "{threads} threads: a cancelled read gave another trace"
            ),
        }
    }
}

/// Rank 0 posts receives A (call 0), B (call 1, never completed) and C (call 2) from rank 1
/// and a send (call 3); its Waitall (call 4) completes C before A. Rank 1 sends the three.
fn receives_out_of_completion_order() -> tracelogic_model::Trace {
    use tracelogic_model::{P2pDir, COMM_WORLD, NOT_COMPLETED};
    let mut t = tracelogic_model::Trace::new("generated", "receives", 2);
    for (k, name) in ["MPI_Irecv", "MPI_Irecv", "MPI_Irecv", "MPI_Isend", "MPI_Waitall"]
        .into_iter()
        .enumerate()
    {
        let at = 100 + 20 * k as u64;
        t.push_call(0, name, at, at + 10, tracelogic_model::NO_CALLPATH, 0);
    }
    // Rows in completion order: the writer writes a call's completions in row order.
    for (post, complete, dir, tag) in [
        (2, 4, P2pDir::Recv, 3),
        (0, 4, P2pDir::Recv, 1),
        (1, NOT_COMPLETED, P2pDir::Recv, 2),
        (3, 4, P2pDir::Send, 5),
    ] {
        t.push_p2p(0, post, complete, dir, 1, tag, COMM_WORLD, 64 * tag as u64);
    }
    for k in 0..3u32 {
        let at = 100 + 20 * k as u64;
        let c = t.push_call(1, "MPI_Send", at, at + 10, tracelogic_model::NO_CALLPATH, 0);
        t.push_p2p(1, c, c, P2pDir::Send, 0, [1, 3, 2][k as usize], COMM_WORLD, 64);
    }
    t
}

#[test]
fn receives_are_listed_in_posting_order_and_unfinished_ones_left_out() {
    let files = write_with_chunk_size(&receives_out_of_completion_order(), "traces", 1 << 20);
    let (fast, general) = both_ways(&files).expect("both read");
    assert_eq!(fast, general, "hot and general reads differ");
    let t = same_whatever_the_threads(&files, "receives").expect("reads");
    let p = &t.ranks[0].p2p;
    let rows: Vec<_> = (0..p.len())
        .map(|i| (p.post[i], p.complete(i), p.dir[i], p.peer[i], p.tag[i], p.bytes.at(i)))
        .collect();
    use tracelogic_model::P2pDir::{Recv, Send};
    assert_eq!(
        rows,
        vec![(0, 4, Recv, 1, 1, 64), (2, 4, Recv, 1, 3, 192), (3, 4, Send, 1, 5, 320)]
    );
    assert!(
        t.warnings.iter().any(|w| w.starts_with("1 receive requests")),
        "{:?}",
        t.warnings
    );
    // B's request cancelled right after it is posted: no row and no warning for it.
    let evt = files
        .iter()
        .position(|f| f.name == "traces/0.evt")
        .expect("rank 0 events");
    let request_b = [0x11, 0x01, 0x03];
    let bytes = &files[evt].bytes;
    let at: Vec<usize> = (0..bytes.len() - 2).filter(|&i| bytes[i..i + 3] == request_b).collect();
    assert_eq!(at.len(), 1, "B's MpiIrecvRequest (request 3) once in {bytes:02x?}");
    let mut cancelled = files.clone();
    cancelled[evt].bytes.splice(at[0] + 3..at[0] + 3, [0x15, 0x01, 0x03]);
    let (fast, general) = both_ways(&cancelled).expect("both read");
    assert_eq!(fast, general, "hot and general reads differ after the cancel");
    let c = same_whatever_the_threads(&cancelled, "cancelled").expect("reads");
    assert_eq!(c.ranks[0].p2p.tag, vec![1, 3, 5]);
    assert!(
        !c.warnings.iter().any(|w| w.contains("receive requests")),
        "{:?}",
        c.warnings
    );
}

/// A local definition file holding a dense region id map (`global = map[local]`).
fn local_region_map(map: &[u8]) -> Vec<u8> {
    let mut def = vec![0x03, 0x42];
    def.extend([0; 16]);
    let mut body = vec![super::defs::MAP_REGION, 1, map.len() as u8, 0];
    for &g in map {
        body.extend([1, g]);
    }
    def.push(0x05);
    def.push(body.len() as u8);
    def.extend(body);
    def.extend([0x02, 0x01]);
    def
}

#[test]
fn each_location_resolves_its_region_ids_through_its_own_map() {
    let trace = generated("ring:3", Style::Isend);
    let files = write_with_chunk_size(&trace, "traces", 1 << 20);
    let plain = super::read(&files, &mut NoProgress).expect("reads");
    let archive = super::Archive::open(&files).expect("opens");
    let regions: Vec<(u32, String)> = archive
        .defs
        .regions
        .items
        .iter()
        .map(|r| (r.id, archive.defs.string(r.name).to_owned()))
        .collect();
    let id_of = |name: &str| regions.iter().find(|r| r.1 == name).map(|r| r.0 as u8).expect(name);
    let (isend, irecv) = (id_of("MPI_Isend"), id_of("MPI_Irecv"));
    let most = regions.iter().map(|r| r.0).max().expect("regions") as u8;
    // Location 0 swaps the two regions, location 1 maps every id to itself, location 2 has no map.
    let mut swapped: Vec<u8> = (0..=most).collect();
    swapped.swap(isend as usize, irecv as usize);
    let identity: Vec<u8> = (0..=most).collect();
    let mut mapped: Vec<InputFile> = files
        .iter()
        .filter(|f| f.name != "traces/0.def" && f.name != "traces/1.def")
        .cloned()
        .collect();
    mapped.push(InputFile::new("traces/0.def", local_region_map(&swapped)));
    mapped.push(InputFile::new("traces/1.def", local_region_map(&identity)));
    mapped.sort_by(|a, b| a.name.cmp(&b.name));
    let (fast, general) = both_ways(&mapped).expect("both read");
    assert_eq!(fast, general, "hot and general reads differ");
    let t = same_whatever_the_threads(&mapped, "region maps").expect("reads");
    let names = |t: &tracelogic_model::Trace, r: u32| -> Vec<String> {
        (0..t.ranks[r as usize].calls.len() as u32)
            .map(|i| t.call_name(r, i).to_owned())
            .collect()
    };
    let swap = |n: String| match n.as_str() {
        "MPI_Isend" => "MPI_Irecv".to_owned(),
        "MPI_Irecv" => "MPI_Isend".to_owned(),
        _ => n,
    };
    let expected: Vec<String> = names(&plain, 0).into_iter().map(swap).collect();
    assert!(expected.iter().any(|n| n == "MPI_Irecv"), "{expected:?}");
    assert_eq!(names(&t, 0), expected);
    assert_eq!(names(&t, 1), names(&plain, 1));
    assert_eq!(names(&t, 2), names(&plain, 2));
    assert_eq!(json_ops(&t), json_ops(&plain));
}

fn json_ops(t: &tracelogic_model::Trace) -> String {
    let ops: Vec<_> = t.ranks.iter().map(|r| &r.p2p).collect();
    serde_json::to_string(&ops).expect("serialises")
}
