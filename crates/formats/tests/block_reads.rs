//! Blocks of ranks read on their own and merged (`read_block_source`, `merge_blocks_source`:
//! the web page's pool of workers): the serial reader's trace, ids, warnings and errors
//! included, on the bundled DUMPI and OTF2 traces, with 1 to 3 blocks.
#![cfg(feature = "distributed")]

use std::ops::Range;
use std::path::{Path, PathBuf};
use tracelogic_formats::distributed::{merge_blocks_source, read_block_source};
use tracelogic_formats::input::read_paths;
use tracelogic_formats::read_trace;
use tracelogic_formats::stream::{DiskFiles, FileSource, MemoryFiles};
use tracelogic_formats::{expand_archives, FormatError, NoProgress};
use tracelogic_model::{Rank, Trace};

/// Blocks of about equal rank counts (what the page's pool cuts).
fn by_count(sizes: &[u64], processes: usize) -> Vec<Range<Rank>> {
    let n = sizes.len();
    (0..processes)
        .map(|p| (n * p / processes) as Rank..(n * (p + 1) / processes) as Rank)
        .collect()
}

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(path)
}

/// The files of `paths` read on demand (a folder of plain files: as a worker reads the page's
/// files), or unpacked into memory (an archive).
fn source(paths: &[PathBuf]) -> Box<dyn FileSource> {
    match DiskFiles::open(paths).unwrap() {
        Some(disk) => Box::new(disk),
        None => Box::new(MemoryFiles::new(expand_archives(read_paths(paths).unwrap()).unwrap())),
    }
}

/// Every block read from its own source (as each worker reads the page's files), then merged
/// from another.
fn pooled(paths: &[PathBuf], blocks: usize) -> Result<Trace, FormatError> {
    let parts = (0..blocks)
        .map(|p| read_block_source(&mut *source(paths), &by_count, p, blocks, &mut NoProgress))
        .collect::<Result<Vec<_>, _>>()?;
    merge_blocks_source(&mut *source(paths), &by_count, parts)
}

const TRACES: &[&str] = &[
    "samples/npb-lu.S.8",
    "samples/sstmacro-dumpi-testbgp",
    "samples/sstmacro-dumpi-testtrace",
    "samples/pyotf2-generated-4rank",
    "samples/pyotf2-generated-multichunk",
    "samples/pipit-ping-pong-otf2-papi",
    "apps/npb-cg.S.16/dumpi.tar.zst",
    "apps/qe-si-8/dumpi.tar.zst",
    "apps/otf2-npb-mg.S.16/trace.tar.zst",
    "apps/otf2-lammps-melt-12-xzy/trace.tar.zst",
    "apps/otf2-hpcc-4/trace.tar.zst",
];

#[test]
fn merged_blocks_are_the_serial_trace() {
    for name in TRACES {
        let paths = vec![data(name)];
        let serial = read_trace(read_paths(&paths).unwrap()).unwrap();
        assert!(
            serial.format == "dumpi" || serial.format == "otf2",
            "{name}: {}",
            serial.format
        );
        let serial_json = serde_json::to_string(&serial).unwrap();
        for blocks in 1..=3 {
            let merged = pooled(&paths, blocks).unwrap_or_else(|e| panic!("{name} in {blocks} blocks: {e}"));
            assert!(
                serde_json::to_string(&merged).unwrap() == serial_json,
                "{name} in {blocks} blocks differs from the serial read"
            );
        }
    }
}

#[test]
fn an_error_in_one_block_is_the_serial_readers() {
    let dir = std::env::temp_dir().join(format!("tracelogic-blocks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(data("samples/npb-lu.S.8")).unwrap().flatten() {
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    // Rank 5's file cut short: it is in the last block of 2 and 3.
    let five = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("-0005.bin"))
        .unwrap();
    let bytes = std::fs::read(&five).unwrap();
    std::fs::write(&five, &bytes[..bytes.len() / 2]).unwrap();
    let paths = vec![dir.clone()];
    let serial = read_trace(read_paths(&paths).unwrap()).unwrap_err();
    assert!(serial.to_string().contains("-0005.bin"), "{serial}");
    for blocks in 1..=3 {
        let e = pooled(&paths, blocks).unwrap_err();
        assert_eq!(e.to_string(), serial.to_string(), "{blocks} blocks");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn formats_without_rank_files_are_refused_not_misread() {
    let paths = vec![data("samples/profet-paraver-test1")];
    let e = read_block_source(&mut *source(&paths), &by_count, 0, 2, &mut NoProgress).unwrap_err();
    assert!(e.to_string().contains("only DUMPI and OTF2"), "{e}");
}
