//! The generic entry point: archives (tar, gzip, zip, nested) unpacked under limits, format
//! detection, then whichever reader the detection picks.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let files = tracelogic_fuzz::unpack(data);
    let _ = tracelogic_formats::read_trace(files);
});
