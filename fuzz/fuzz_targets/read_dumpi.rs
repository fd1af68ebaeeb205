//! SST DUMPI reader on a file set (`.meta` plus per-rank `.bin`) unpacked from the input.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracelogic_formats::{dumpi, NoProgress};

fuzz_target!(|data: &[u8]| {
    let files = tracelogic_fuzz::unpack(data);
    let _ = dumpi::read(&files, &mut NoProgress);
});
