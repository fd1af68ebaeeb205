//! Reader for the csv format (to be implemented).

use crate::{FormatError, InputFile, ProgressSink};
use tracelogic_model::Trace;

/// Read a csv trace from its files.
pub fn read(files: &[InputFile], progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    let _ = (files, progress);
    Err(FormatError::new("(input)", "the csv reader is not implemented yet"))
}
