//! Paraver reader on a file set (`.prv`, `.pcf`, `.row`) unpacked from the input.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracelogic_formats::{paraver, NoProgress};

fuzz_target!(|data: &[u8]| {
    let files = tracelogic_fuzz::unpack(data);
    let _ = paraver::read(&files, &mut NoProgress);
});
