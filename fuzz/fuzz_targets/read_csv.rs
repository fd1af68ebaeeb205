//! Pipit CSV reader on the input as one `trace.csv`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracelogic_formats::{csv, InputFile, NoProgress};

fuzz_target!(|data: &[u8]| {
    let files = [InputFile::new("trace.csv", data.to_vec())];
    let _ = csv::read(&files, &mut NoProgress);
});
