//! `digest PATH...`: a hash of the whole parsed trace, with the default threads and with one.

use serde::Serialize;
use std::path::PathBuf;
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::parallel::set_reader_threads;
use tracelogic_formats::read_trace;

/// What `digest` prints: the trace's hash per thread count, and its size for a quick look.
#[derive(Serialize)]
pub(crate) struct DigestResult {
    /// FNV-1a 64 of the trace's serde JSON (or of `error: ` and the reader's message), read with
    /// the default threads.
    digest: String,
    /// The same read on one thread.
    digest_single: String,
    /// MPI calls over all ranks (0 when the read failed).
    calls: u64,
    /// Point-to-point operations over all ranks.
    p2p: u64,
}

/// An FNV-1a 64 hasher fed as a writer, so the trace's JSON is hashed without being kept.
pub(crate) struct Fnv(u64);

impl std::io::Write for Fnv {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Hash the trace under `paths` read on the default threads and on one (see [`DigestResult`]).
pub(crate) fn digest(paths: &[PathBuf]) -> Result<DigestResult, String> {
    let read = |threads: usize| -> Result<(String, u64, u64), String> {
        set_reader_threads(threads);
        let files = load_paths(paths).map_err(|e| format!("cannot read {e}"))?;
        let mut h = Fnv(0xcbf2_9ce4_8422_2325);
        let (calls, p2p) = match read_trace(files) {
            Ok(trace) => {
                serde_json::to_writer(&mut h, &trace).map_err(|e| e.to_string())?;
                (trace.num_calls(), trace.ranks.iter().map(|r| r.p2p.len() as u64).sum())
            }
            Err(e) => {
                std::io::Write::write_all(&mut h, format!("error: {e}").as_bytes()).map_err(|e| e.to_string())?;
                (0, 0)
            }
        };
        Ok((format!("{:016x}", h.0), calls, p2p))
    };
    let (digest, calls, p2p) = read(0)?;
    let (digest_single, ..) = read(1)?;
    set_reader_threads(0);
    Ok(DigestResult {
        digest,
        digest_single,
        calls,
        p2p,
    })
}
