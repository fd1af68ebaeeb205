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

/// A file source that counts how often each file is read.
struct Counting {
    inner: MemoryFiles,
    reads: Vec<usize>,
}

impl tracelogic_formats::stream::FileSource for Counting {
    fn list(&self) -> &[(String, u64)] {
        self.inner.list()
    }
    fn read(&mut self, index: usize) -> Result<Vec<u8>, tracelogic_formats::FormatError> {
        self.reads[index] += 1;
        self.inner.read(index)
    }
}

/// Each part of an OTF2 trace read by parts reads the local definitions (`NAME/<id>.def`) of
/// its own ranks' locations only: over all parts, each is read once, whatever the number of
/// parts (a part reading every `.def` made the page's workers each read 4,096 files on a
/// 4,096-rank trace). When a location with events has no `.def`, every part reads them all
/// (the archive's warning about it needs them).
#[test]
fn each_local_definition_file_is_read_by_one_part() {
    use tracelogic_engine::overview::overview_part;
    let mut checked = 0;
    for dir in traces() {
        let id = dir.display().to_string();
        let files = source_files(&dir);
        if !tracelogic_formats::stream::streams(&MemoryFiles::new(files.clone())) {
            continue;
        }
        let Ok(trace) = read_trace(files.clone()) else {
            continue;
        };
        let names: Vec<String> = files.iter().map(|f| f.name.clone()).collect();
        let anchor = names.iter().find(|n| n.ends_with(".otf2")).unwrap();
        let folder = format!("{}/", anchor.trim_end_matches(".otf2"));
        let local_defs: Vec<usize> = (0..names.len())
            .filter(|&i| names[i].starts_with(&folder) && names[i].ends_with(".def"))
            .collect();
        let all_have_defs = names
            .iter()
            .filter(|n| n.starts_with(&folder) && n.ends_with(".evt"))
            .all(|n| names.contains(&n.replace(".evt", ".def")));
        let n = trace.num_ranks() as usize;
        for processes in 1..=4.min(n) {
            let mut reads = vec![0; names.len()];
            for p in 0..processes {
                let owned = move |ranks: u32| by_count(ranks as usize, processes)[p].clone();
                let mut source = Counting {
                    inner: MemoryFiles::new(files.clone()),
                    reads: vec![0; names.len()],
                };
                overview_part(&mut source, 64, &owned, &mut NoProgress).unwrap();
                for (total, r) in reads.iter_mut().zip(source.reads) {
                    *total += r;
                }
            }
            let want = if all_have_defs { 1 } else { processes };
            for &i in &local_defs {
                assert_eq!(reads[i], want, "{id}: {} read by {processes} parts", names[i]);
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} cuts checked");
}
