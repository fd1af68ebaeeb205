//! OTF2 writer (in progress).
use crate::InputFile;
use tracelogic_model::Trace;

/// Write `trace` as an OTF2 archive: `NAME.otf2`, `NAME.def` and `NAME/<location>.evt`.
pub fn write(trace: &Trace, name: &str) -> Vec<InputFile> {
    write_with_chunk_size(trace, name, 1 << 20)
}

/// [`write`] with a chosen event chunk size.
pub fn write_with_chunk_size(trace: &Trace, name: &str, chunk_size: u64) -> Vec<InputFile> {
    let _ = (trace, name, chunk_size);
    unimplemented!()
}
