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
    let spec = Spec {
        topology: TopologySpec::parse(topology).expect("topology"),
        iterations: 5,
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

/// The OTF2 samples under shared/data/samples that are present, by folder name, each with its
/// files in name order; fails when none is.
fn otf2_samples() -> Vec<(&'static str, Vec<InputFile>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/samples");
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
                    p.complete[i] != tracelogic_model::NOT_COMPLETED
                        && loc[p.post[i] as usize] != loc[p.complete[i] as usize]
                })
            });
            assert!(crossed, "{what}: no request completed across locations");
        }
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
        let nonblocking = (0..p.len()).filter(|&i| p.post[i] != p.complete[i]);
        assert_eq!(nonblocking.clone().count(), 6, "rank {}", rt.rank);
        for i in nonblocking {
            assert_ne!(
                rt.calls.location[p.post[i] as usize], rt.calls.location[p.complete[i] as usize],
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
        assert!(read.callpaths.iter().map(|p| p.len() + 1).sum::<usize>() <= super::model::MAX_CALLPATH_STORAGE);
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
