//! Reader for the otf2 format (to be implemented).

use crate::{FormatError, InputFile, ProgressSink};
use tracelogic_model::Trace;

/// Read a otf2 trace from its files.
pub fn read(files: &[InputFile], progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    let _ = (files, progress);
    Err(FormatError::new("(input)", "the otf2 reader is not implemented yet"))
}

/// Write `trace` as an OTF2 archive: `NAME.otf2`, `NAME.def` and `NAME/<location>.evt`.
pub fn write(trace: &Trace, name: &str) -> Vec<InputFile> {
    let _ = (trace, name);
    unimplemented!("OTF2 writer lands with the foundation issue")
}
