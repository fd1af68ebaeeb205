//! The distributed reader without MPI: processes are threads exchanging through shared memory.
//! On every bundled sample and 1-4 processes, each process's partial trace has the serial
//! reader's definitions, and the columns of all blocks put together give the serial trace.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier, Mutex};
use tracelogic_formats::distributed::{read_partial, Exchange};
use tracelogic_formats::input::read_paths;
use tracelogic_formats::read_trace;
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

fn samples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

#[test]
fn partial_reads_add_up_to_the_serial_trace() {
    for sample in samples() {
        let paths = vec![sample.clone()];
        // A folder holding several traces (pipit-csv) is not one trace to read.
        let Ok(serial) = read_trace(read_paths(&paths).unwrap()) else {
            continue;
        };
        let serial_json = serde_json::to_string(&serial).unwrap();
        for n in 1..=4usize {
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
                        s.spawn(move || read_partial(read_paths(&paths).unwrap(), &by_bytes, &mut ex).unwrap())
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
                    "{} read by {n} processes differs from the serial read",
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
                s.spawn(move || {
                    read_partial(read_paths(&paths).unwrap(), &by_bytes, &mut ex)
                        .unwrap_err()
                        .to_string()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(errors, vec![serial.to_string(); n]);
}

fn tempfile_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("tracelogic-mpi-partial-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}
