//! `Trace::heap_bytes` against the sizes of the model's rows written out by hand and the row
//! counts of the official OTF2 reader (`otf2-print`, tests/data/apps/*/expected), and the
//! readers handing back columns without unused capacity.

use std::path::{Path, PathBuf};
use tracelogic_formats::{read_trace, InputFile};
use tracelogic_model::{Trace, COMM_WORLD, NOT_COMPLETED};

/// Bytes of one row of each event table in the model's current layout, column by column; the
/// columns that cost nothing while every row holds one value (locations, communicators) and the
/// columns coded against each rank's distinct values (functions, call paths, partners, tags,
/// sizes: [`coded_bytes`]) apart.
const CALL_ROW: u64 = 1 /* kind */ + 4 /* enter offset */ + 4 /* duration */;
/// The entry times' base, one per block of 64 calls of a rank.
const ENTER_BASE: u64 = 8;
const LOCATION: u64 = 2;
const P2P_ROW: u64 = 4 /* post */ + 1 /* complete */ + 1 /* dir */;
/// A duration of 2^32 - 1 or more, an entry 2^32 - 1 ns or more after its
/// block's first: its row in the column's escape table.
const ESCAPED: u64 = 16;
/// A completion 254 calls or more after its post, or before it: its row in the escape table.
const ESCAPED_COMPLETION: u64 = 8;
const COLLECTIVE_ROW: u64 = 4 /* call */ + 1 /* op */ + 4 /* root */ + 8 /* bytes_sent */ + 8 /* bytes_recv */;
const COMM: u64 = 4;

/// Bytes of a column coded against its distinct values: each distinct value once, and a code
/// per row of none (one value), 1 byte (up to 256), 2 (up to 65,536) or the value itself.
fn coded_bytes<T: Copy + Eq + std::hash::Hash>(rows: impl Iterator<Item = T>) -> u64 {
    let rows: Vec<T> = rows.collect();
    let distinct = rows.iter().collect::<std::collections::HashSet<_>>().len() as u64;
    let size = std::mem::size_of::<T>() as u64;
    match distinct {
        0..=1 => distinct * size,
        2..=256 => distinct * size + rows.len() as u64,
        257..=65_536 => distinct * size + 2 * rows.len() as u64,
        _ => size * rows.len() as u64,
    }
}

/// Bytes of the columns stored only when some row differs from their fill value, of the
/// columns coded against their distinct values, and of the rows too wide for 4 bytes, over
/// every rank, found by looking at every row.
fn sparse_bytes(t: &Trace) -> (u64, u64, u64) {
    let (mut calls, mut p2p, mut collectives) = (0, 0, 0);
    let wide = |v: u64| v >= u32::MAX as u64;
    for rt in &t.ranks {
        let n = rt.calls.len() as u64;
        calls += rt.calls.duration.iter().filter(|&d| wide(d)).count() as u64 * ESCAPED;
        let enter: Vec<u64> = rt.calls.enters().collect();
        for block in enter.chunks(64) {
            calls += ENTER_BASE;
            calls += block.iter().filter(|&&t| wide(t.wrapping_sub(block[0]))).count() as u64 * ESCAPED;
        }
        calls += coded_bytes(rt.calls.func.iter().copied()) + coded_bytes(rt.calls.callpath.iter().copied());
        p2p += coded_bytes(rt.p2p.peer.iter().copied())
            + coded_bytes(rt.p2p.tag.iter().copied())
            + coded_bytes(rt.p2p.bytes.iter());
        let far = |(post, done): (u32, u32)| done != NOT_COMPLETED && (done < post || done - post >= 254);
        p2p += rt
            .p2p
            .post
            .iter()
            .copied()
            .zip(rt.p2p.completes())
            .filter(|&pd| far(pd))
            .count() as u64
            * ESCAPED_COMPLETION;
        if rt.calls.location.iter().any(|&l| l != 0) {
            calls += n * LOCATION;
        }
        if rt.p2p.comm.iter().any(|&c| c != COMM_WORLD) {
            p2p += rt.p2p.len() as u64 * COMM;
        }
        if rt.collectives.comm.iter().any(|&c| c != COMM_WORLD) {
            collectives += rt.collectives.len() as u64 * COMM;
        }
    }
    (calls, p2p, collectives)
}

fn app(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/apps")
        .join(name)
}

fn read_app(name: &str) -> Trace {
    let file = if name.starts_with("otf2-") {
        "trace.tar.zst"
    } else {
        "dumpi.tar.zst"
    };
    let path = app(name).join(file);
    let bytes = std::fs::read(&path).expect("app trace");
    read_trace(vec![InputFile::new(format!("{name}/{file}"), bytes)]).expect("readable trace")
}

/// `key value` lines of an app's `expected/otf2-print-counts.txt`.
fn count(name: &str, key: &str) -> u64 {
    let text = std::fs::read_to_string(app(name).join("expected/otf2-print-counts.txt")).expect("counts");
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(k, _)| *k == key)
        .map(|(_, v)| v.trim().parse::<u64>().expect("a count"))
        .sum()
}

/// Collective calls of an app by otf2-print: the `calls` lines of the MPI collectives.
fn collective_calls(name: &str) -> u64 {
    let text = std::fs::read_to_string(app(name).join("expected/otf2-print-counts.txt")).expect("counts");
    let collectives = [
        "MPI_Allreduce",
        "MPI_Barrier",
        "MPI_Bcast",
        "MPI_Reduce",
        "MPI_Allgather",
        "MPI_Alltoall",
    ];
    text.lines()
        .filter_map(|l| l.strip_prefix("calls "))
        .filter_map(|l| l.split_once(' '))
        .filter(|(f, _)| collectives.contains(f))
        .map(|(_, v)| v.trim().parse::<u64>().expect("a count"))
        .sum()
}

#[test]
fn heap_bytes_are_the_official_row_counts_times_the_row_sizes() {
    for name in ["otf2-npb-lu.S.8", "otf2-npb-cg.S.8", "otf2-npb-mg.S.8"] {
        let trace = read_app(name);
        let h = trace.heap_bytes();
        let calls = count(name, "calls_total");
        let ops = count(name, "p2p_sends") + count(name, "p2p_receives");
        let (sparse_calls, sparse_p2p, sparse_collectives) = sparse_bytes(&trace);
        assert_eq!(h.calls.used, calls * CALL_ROW + sparse_calls, "{name}: calls");
        assert_eq!(h.p2p.used, ops * P2P_ROW + sparse_p2p, "{name}: point-to-point");
        assert_eq!(
            h.collectives.used,
            collective_calls(name) * COLLECTIVE_ROW + sparse_collectives,
            "{name}: collectives"
        );
        assert!(
            h.other.used > 0
                && h.total().used == h.calls.used + h.p2p.used + h.collectives.used + h.metrics.used + h.other.used
        );
    }
}

#[test]
fn read_traces_hold_no_unused_column_capacity() {
    for name in ["otf2-npb-lu.S.8", "npb-lu.S.16", "lammps-melt-8"] {
        let trace = read_app(name);
        let h = trace.heap_bytes();
        for (table, b) in [
            ("calls", h.calls),
            ("p2p", h.p2p),
            ("collectives", h.collectives),
            ("metrics", h.metrics),
        ] {
            assert_eq!(b.allocated, b.used, "{name}: {table}");
        }
        assert!(h.calls.used > 0, "{name}");
    }
}

#[test]
fn shrinking_a_grown_trace_gives_back_exactly_the_spare_capacity() {
    let mut trace = read_app("otf2-npb-lu.S.8");
    let before = trace.heap_bytes();
    for rt in &mut trace.ranks {
        rt.reserve(1000, 100, 10);
    }
    let grown = trace.heap_bytes();
    let ranks = trace.ranks.len() as u64;
    assert!(grown.calls.allocated >= before.calls.used + ranks * 1000 * CALL_ROW);
    assert!(grown.p2p.allocated >= before.p2p.used + ranks * 100 * P2P_ROW);
    assert_eq!(grown.calls.used, before.calls.used);
    trace.shrink_to_fit();
    let shrunk = trace.heap_bytes();
    assert_eq!(
        (shrunk.calls.allocated, shrunk.p2p.allocated),
        (before.calls.used, before.p2p.used)
    );
}

/// An app's OTF2 archive unpacked into a fresh folder.
fn unpacked(name: &str) -> tempfile::TempDir {
    let bytes = std::fs::read(app(name).join("trace.tar.zst")).expect("app trace");
    let files = tracelogic_formats::expand_archives(vec![InputFile::new("trace.tar.zst", bytes)]).expect("archive");
    let dir = tempfile::tempdir().expect("temp dir");
    for f in &files {
        let p = dir.path().join(&f.name);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("folder");
        std::fs::write(p, &f.bytes).expect("write");
    }
    dir
}

#[test]
fn otf2_folders_read_rank_by_rank_give_the_trace_of_the_whole_read() {
    use tracelogic_formats::input::read_paths;
    use tracelogic_formats::stream::{read_whole, DiskFiles};
    use tracelogic_formats::NoProgress;
    // Archives with over 1 MiB of events (read on several threads), and one under it.
    for name in [
        "otf2-hpcc-4",
        "otf2-npb-cg.S.8",
        "otf2-lammps-melt-12-xzy",
        "otf2-npb-lu.S.4",
    ] {
        let dir = unpacked(name);
        let paths = vec![dir.path().to_path_buf()];
        let whole = read_trace(read_paths(&paths).expect("files")).expect("whole read");
        for threads in [2, 3] {
            tracelogic_formats::parallel::set_reader_threads(threads);
            let mut disk = DiskFiles::open(&paths).expect("listed").expect("plain files");
            let by_rank = read_whole(&mut disk, &mut NoProgress).expect("read by rank");
            tracelogic_formats::parallel::set_reader_threads(0);
            assert_eq!(
                serde_json::to_value(&by_rank).expect("json"),
                serde_json::to_value(&whole).expect("json"),
                "{name}, {threads} threads"
            );
            let h = by_rank.heap_bytes();
            assert_eq!(
                (h.calls.allocated, h.p2p.allocated),
                (h.calls.used, h.p2p.used),
                "{name}"
            );
        }
    }
}
