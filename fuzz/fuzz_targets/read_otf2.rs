//! OTF2 reader on a file set (anchor, global definitions, per-location `.def`/`.evt`) unpacked
//! from the input: any error is fine, a panic, hang or huge allocation is a bug.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracelogic_formats::{otf2, NoProgress};

fuzz_target!(|data: &[u8]| {
    let files = tracelogic_fuzz::unpack(data);
    let _ = otf2::read(&files, &mut NoProgress);
});
