//! Reader for the dumpi format (to be implemented).

use crate::{FormatError, InputFile, ProgressSink};
use tracelogic_model::Trace;

/// Read a dumpi trace from its files.
pub fn read(files: &[InputFile], progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    let _ = (files, progress);
    Err(FormatError::new("(input)", "the dumpi reader is not implemented yet"))
}

/// Write `trace` as an SST DUMPI trace: `PREFIX.meta` and one `PREFIX-NNNN.bin` per rank.
pub fn write(trace: &Trace, prefix: &str) -> Vec<InputFile> {
    let _ = (trace, prefix);
    unimplemented!("DUMPI writer lands with the foundation issue")
}
