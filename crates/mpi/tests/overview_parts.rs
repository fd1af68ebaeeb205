//! The overview by parts (`OverviewBuilder::of_ranks`, merged in rank order)
//! is the serial streaming `overview`'s report, field for field (topology's timings aside), on
//! every bundled sample and app trace cut into 1 to 4 blocks of ranks, at a few bin counts.
//! Each part goes through bincode as `tracelogic-mpi overview` sends it.

use tracelogic_engine::overview::{overview, overview_of_parts, parts_head, OverviewBuilder};
use tracelogic_formats::input::read_paths;
use tracelogic_formats::read_trace;
use tracelogic_formats::stream::MemoryFiles;
use tracelogic_formats::NoProgress;
use tracelogic_mpi::partition::by_count;

mod common;
use common::{partial, strip_timings, traces};

/// A report as JSON without the timing fields of its topology (they differ between two runs).
fn untimed(report: &impl serde::Serialize) -> serde_json::Value {
    let mut v = serde_json::to_value(report).unwrap();
    strip_timings(&mut v);
    v
}

#[test]
fn the_overview_by_parts_is_the_serial_overview() {
    let mut checked = 0;
    for dir in traces() {
        let id = dir.display().to_string();
        let files = read_paths(std::slice::from_ref(&dir)).unwrap();
        let Ok(trace) = read_trace(files.clone()) else {
            continue;
        };
        let n = trace.num_ranks() as usize;
        let mut source = MemoryFiles::new(files);
        let head = parts_head(&mut source, &trace).unwrap();
        for bins in [4, 64, 1024] {
            let serial = overview(&mut MemoryFiles::new(source_files(&dir)), bins, &mut NoProgress).unwrap();
            let want = untimed(&serial);
            for processes in 1..=4.min(n.max(1)) {
                let blocks = by_count(n, processes);
                let parts: Vec<OverviewBuilder> = blocks
                    .iter()
                    .map(|b| {
                        let part = OverviewBuilder::of_ranks(&partial(&trace, b), b.clone(), bins, head.span);
                        bincode::deserialize(&bincode::serialize(&part).unwrap()).unwrap()
                    })
                    .collect();
                let got = overview_of_parts(parts, &trace, head.clone()).unwrap();
                assert_eq!(untimed(&got), want, "{id}: {bins} bins, blocks {blocks:?}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 30, "{checked} cuts checked");
}

fn source_files(dir: &std::path::Path) -> Vec<tracelogic_formats::InputFile> {
    read_paths(std::slice::from_ref(&dir.to_path_buf())).unwrap()
}

/// The overview streamed by parts (`overview_part` of each block, one rank's events at a time,
/// merged by `overview_of_stream_parts`) is the serial streaming `overview`'s report on every
/// bundled OTF2 trace cut into 1 to 4 blocks, at a few bin counts; inputs that do not stream are
/// refused by name. Each part goes through bincode as `tracelogic-mpi overview` sends it.
#[test]
fn the_overview_streamed_by_parts_is_the_serial_overview() {
    use tracelogic_engine::overview::{overview_of_stream_parts, overview_part, OverviewPart};
    let (mut checked, mut refused) = (0, 0);
    for dir in traces() {
        let id = dir.display().to_string();
        let files = source_files(&dir);
        if !tracelogic_formats::stream::streams(&MemoryFiles::new(files.clone())) {
            let e = overview_part(&mut MemoryFiles::new(files.clone()), 64, &|n| 0..n, &mut NoProgress).unwrap_err();
            assert!(e.to_string().contains("only an OTF2 trace"), "{id}: {e}");
            refused += 1;
            continue;
        }
        let Ok(trace) = read_trace(files.clone()) else {
            continue;
        };
        let n = trace.num_ranks() as usize;
        for bins in [4, 64, 1024] {
            let serial = overview(&mut MemoryFiles::new(files.clone()), bins, &mut NoProgress).unwrap();
            let want = untimed(&serial);
            for processes in 1..=4.min(n.max(1)) {
                let parts: Vec<OverviewPart> = (0..processes)
                    .map(|p| {
                        let owned = move |ranks: u32| by_count(ranks as usize, processes)[p].clone();
                        let part =
                            overview_part(&mut MemoryFiles::new(files.clone()), bins, &owned, &mut NoProgress).unwrap();
                        bincode::deserialize(&bincode::serialize(&part).unwrap()).unwrap()
                    })
                    .collect();
                let got = overview_of_stream_parts(parts).unwrap();
                assert_eq!(untimed(&got), want, "{id}: {bins} bins, {processes} parts");
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 15 && refused >= 5,
        "{checked} cuts checked, {refused} refused"
    );
}
