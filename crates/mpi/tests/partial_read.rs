//! The distributed reader without MPI: processes are threads exchanging through shared memory.
//! On every bundled sample and 1-4 processes, each process's partial trace has the serial
//! reader's definitions, and the columns of all blocks put together give the serial trace.

mod common;
use common::folders;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier, Mutex};
use tracelogic_formats::distributed::{read_partial, read_partial_source, Exchange, PartialTrace};
use tracelogic_formats::input::read_paths;
use tracelogic_formats::read_trace;
use tracelogic_formats::stream::{DiskFiles, FileSource};
use tracelogic_formats::FormatError;
use tracelogic_mpi::merge::{encode_ranks, fill_ranks};
use tracelogic_mpi::partition::by_bytes;

/// Threads as processes: each all-gather fills one slot per thread between two barriers.
struct Threads {
    me: usize,
    n: usize,
    slots: Arc<Mutex<Vec<Vec<u8>>>>,
    barrier: Arc<Barrier>,
}

impl Exchange for Threads {
    fn process(&self) -> (usize, usize) {
        (self.me, self.n)
    }

    fn all_gather(&mut self, mine: &[u8]) -> Vec<Vec<u8>> {
        self.slots.lock().unwrap()[self.me] = mine.to_vec();
        self.barrier.wait();
        let all = self.slots.lock().unwrap().clone();
        self.barrier.wait();
        all
    }
}

/// A [`FileSource`] on disk that counts the bytes it reads of each file.
struct Counted {
    disk: DiskFiles,
    read: Arc<Mutex<Vec<u64>>>,
}

impl FileSource for Counted {
    fn list(&self) -> &[(String, u64)] {
        self.disk.list()
    }
    fn read(&mut self, index: usize) -> Result<Vec<u8>, FormatError> {
        let b = self.disk.read(index)?;
        self.read.lock().unwrap()[index] += b.len() as u64;
        Ok(b)
    }
    fn read_head(&mut self, index: usize, len: u64) -> Result<Vec<u8>, FormatError> {
        let b = self.disk.read_head(index, len)?;
        self.read.lock().unwrap()[index] += b.len() as u64;
        Ok(b)
    }
}

/// Read `paths` as process `ex`: all files read first (`read_partial`), or on demand from disk
/// (`read_partial_source`), which must read no more than its share of the per-rank files.
fn read_as(paths: &[PathBuf], ex: &mut Threads, on_demand: bool) -> Result<PartialTrace, FormatError> {
    if !on_demand {
        return read_partial(read_paths(paths).unwrap(), &by_bytes, ex);
    }
    let disk = DiskFiles::open(paths).unwrap().expect("no archives in the samples");
    let list = disk.list().to_vec();
    let read = Arc::new(Mutex::new(vec![0u64; list.len()]));
    let mut source = Counted {
        disk,
        read: read.clone(),
    };
    let got = read_partial_source(&mut source, &by_bytes, ex)?;
    // Of the per-rank event files only the first bytes, except this process's ranks' files.
    let read = read.lock().unwrap();
    let whole_rank_files = list
        .iter()
        .zip(read.iter())
        .filter(|((name, size), &r)| (name.ends_with(".bin") || name.ends_with(".evt")) && *size > 4096 && r >= *size)
        .count();
    let rank_files = list
        .iter()
        .filter(|(name, size)| (name.ends_with(".bin") || name.ends_with(".evt")) && *size > 4096)
        .count();
    if ex.n > 1 && rank_files >= ex.n * 2 {
        assert!(
            whole_rank_files < rank_files,
            "process {} of {} read all {rank_files} per-rank files whole",
            ex.me,
            ex.n
        );
    }
    Ok(got)
}

#[test]
fn partial_reads_add_up_to_the_serial_trace() {
    for sample in folders("samples") {
        let paths = vec![sample.clone()];
        // A folder holding several traces (pipit-csv) is not one trace to read.
        let Ok(serial) = read_trace(read_paths(&paths).unwrap()) else {
            continue;
        };
        let serial_json = serde_json::to_string(&serial).unwrap();
        for (n, on_demand) in (1..=4usize).flat_map(|n| [(n, false), (n, true)]) {
            let slots = Arc::new(Mutex::new(vec![Vec::new(); n]));
            let barrier = Arc::new(Barrier::new(n));
            let partials: Vec<_> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..n)
                    .map(|me| {
                        let mut ex = Threads {
                            me,
                            n,
                            slots: slots.clone(),
                            barrier: barrier.clone(),
                        };
                        let paths = paths.clone();
                        s.spawn(move || read_as(&paths, &mut ex, on_demand).unwrap())
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let parts: Vec<Vec<u8>> = partials
                .iter()
                .map(|p| encode_ranks(&p.trace, p.owned.clone()))
                .collect();
            for p in &partials {
                assert_eq!(p.trace.comms, serial.comms, "{} with {n}", sample.display());
                assert_eq!(p.trace.functions.names(), serial.functions.names());
                assert_eq!(p.trace.warnings, serial.warnings, "{} with {n}", sample.display());
                let mut whole = p.trace.clone();
                fill_ranks(&mut whole, &parts).unwrap();
                assert!(
                    serde_json::to_string(&whole).unwrap() == serial_json,
                    "{} read by {n} processes (on demand: {on_demand}) differs from the serial read",
                    sample.display()
                );
            }
        }
    }
}

#[test]
fn errors_are_the_same_on_every_process() {
    let dir = tempfile_dir();
    let lu = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples/npb-lu.S.8");
    for e in std::fs::read_dir(&lu).unwrap().flatten() {
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    // Rank 5's file cut short: the serial reader's error, on both processes.
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
    let n = 2;
    for on_demand in [false, true] {
        let slots = Arc::new(Mutex::new(vec![Vec::new(); n]));
        let barrier = Arc::new(Barrier::new(n));
        let errors: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .map(|me| {
                    let mut ex = Threads {
                        me,
                        n,
                        slots: slots.clone(),
                        barrier: barrier.clone(),
                    };
                    let paths = paths.clone();
                    s.spawn(move || read_as(&paths, &mut ex, on_demand).unwrap_err().to_string())
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(errors, vec![serial.to_string(); n], "on demand: {on_demand}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn tempfile_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("tracelogic-mpi-partial-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}
