//! Native text reader on the input as one `trace.txt`; a trace it accepts must also survive
//! being written and read again.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracelogic_formats::{text, InputFile, NoProgress};

fuzz_target!(|data: &[u8]| {
    let files = [InputFile::new("trace.txt", data.to_vec())];
    if let Ok(trace) = text::read(&files, &mut NoProgress) {
        let again = text::write(&trace);
        let reread = text::read(&[InputFile::new("again.txt", again.clone())], &mut NoProgress)
            .unwrap_or_else(|e| panic!("a trace the reader accepted does not read back: {e}"));
        assert_eq!(text::write(&reread), again, "text write -> read -> write is not stable");
    }
});
