//! Garbled input: thousands of deterministic random mutations of real files must give a trace
//! or a located error from every reader and from archive expansion — never a panic or a hang.

use flate2::write::GzEncoder;
use std::io::Write;
use tracelogic_formats::{expand_archives, read_trace, FormatError, InputFile};

/// xorshift64*: a small deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Characters that matter to the text formats' grammars.
const INTERESTING: &[u8] = b":,\n\"'{}[]()=#-0123456789 \t\\x";

fn mutate(rng: &mut Rng, bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for _ in 0..1 + rng.below(4) {
        if out.is_empty() {
            break;
        }
        let at = rng.below(out.len());
        match rng.below(5) {
            0 => out[at] = INTERESTING[rng.below(INTERESTING.len())],
            1 => out[at] = rng.next() as u8,
            2 => {
                out.remove(at);
            }
            3 => out.insert(at, INTERESTING[rng.below(INTERESTING.len())]),
            _ => out.truncate(at),
        }
    }
    out
}

fn data(path: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn check(result: Result<tracelogic_model::Trace, FormatError>) {
    if let Err(e) = result {
        assert!(!e.file.is_empty() && !e.message.is_empty(), "{e:?}");
    }
}

/// Read `rounds` mutated copies of the start of `original` (with unchanged companion files).
fn run(name: &str, original: &[u8], companions: &[(&str, Vec<u8>)], rounds: usize, seed: u64) {
    let mut rng = Rng(seed);
    for _ in 0..rounds {
        // Work on a window so every round stays cheap on the bigger samples.
        let keep = original.len().min(6_000 + rng.below(6_000));
        let mutated = mutate(&mut rng, &original[..keep]);
        let mut files = vec![InputFile::new(name, mutated)];
        files.extend(companions.iter().map(|(n, b)| InputFile::new(*n, b.clone())));
        check(read_trace(files));
    }
}

#[test]
fn garbled_paraver_never_panics() {
    let dir = "paraver/profet-paraver-lulesh/lulesh_7+1_with_uncores_sockets1+2.chop8";
    let prv = data(&format!("{dir}.prv"));
    let pcf = data(&format!("{dir}.pcf"));
    let row = data(&format!("{dir}.row"));
    run("t.prv", &prv, &[("t.pcf", pcf.clone()), ("t.row", row.clone())], 800, 1);
    // Garbled companions with the real .prv.
    let mut rng = Rng(2);
    for _ in 0..300 {
        let files = vec![
            InputFile::new("t.prv", prv.clone()),
            InputFile::new("t.pcf", mutate(&mut rng, &pcf)),
            InputFile::new("t.row", mutate(&mut rng, &row)),
        ];
        check(read_trace(files));
    }
}

#[test]
fn garbled_csv_never_panics() {
    run("t.csv", &data("csv/ping-pong-csv.csv"), &[], 3000, 3);
    run("t.csv", &data("csv/foo-bar.csv"), &[], 1000, 4);
}

#[test]
fn garbled_text_never_panics() {
    let mut t = tracelogic_model::Trace::new("text", "x", 3);
    let c = t.push_call(0, "MPI_Isend", 0, 5, tracelogic_model::NO_CALLPATH, 0);
    let w = t.push_call(0, "MPI_Wait", 6, 9, tracelogic_model::NO_CALLPATH, 0);
    t.push_p2p(0, c, w, tracelogic_model::P2pDir::Send, 1, 3, 0, 8);
    let b = t.push_call(1, "MPI_Bcast", 1, 2, tracelogic_model::NO_CALLPATH, 0);
    t.push_collective(1, b, tracelogic_model::CollectiveOp::Bcast, 0, 2, 8, 8);
    let mut written = tracelogic_formats::text::write(&t).into_bytes();
    written.extend_from_slice(&data("text/ping-pong.txt")[19..]);
    run("t.txt", &written, &[], 3000, 5);
}

#[test]
fn garbled_archives_never_panic() {
    let mut rng = Rng(6);
    let zip = data("archives/pingpong-csv.zip");
    let tgz = data("archives/lulesh-paraver.tar.gz");
    let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&data("csv/foo-bar.csv")).unwrap();
    let gz = gz.finish().unwrap();
    for round in 0..600 {
        let (name, bytes) = match round % 3 {
            0 => ("a.zip", &zip),
            1 => ("a.tar.gz", &tgz),
            _ => ("a.csv.gz", &gz),
        };
        let mutated = mutate(&mut rng, bytes);
        match expand_archives(vec![InputFile::new(name, mutated)]) {
            Ok(files) => {
                let total: usize = files.iter().map(|f| f.bytes.len()).sum();
                assert!(total as u64 <= 200 * bytes.len() as u64 + 64);
            }
            Err(e) => assert!(e.file.starts_with(name), "{e}"),
        }
    }
}
