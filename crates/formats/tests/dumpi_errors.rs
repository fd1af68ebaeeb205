//! Bad DUMPI input gives a [`FormatError`] naming the file and the byte offset: truncation at
//! every offset, wrong magic, unknown call ids, absurd lengths, a corrupt index, records that
//! run past the stream, and random corruption. Never a panic, a hang or a huge allocation.

#[path = "dumpi_builder.rs"]
mod builder;

use builder::{id, trace_files, Bin, A};
use std::path::Path;
use tracelogic_formats::dumpi::raw::BinFile;
use tracelogic_formats::{dumpi, FormatError, InputFile, NoProgress};

fn sample(rel: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/samples")
        .join(rel);
    std::fs::read(p).expect("sample")
}

/// Parse the file and decode all its records; the first error, if any.
fn decode(name: &str, bytes: &[u8]) -> Result<usize, FormatError> {
    let f = BinFile::parse(name, bytes)?;
    let mut n = 0;
    for r in f.records() {
        r?;
        n += 1;
    }
    Ok(n)
}

fn single_rank(bin: Vec<u8>) -> Result<tracelogic_model::Trace, FormatError> {
    dumpi::read(&trace_files(&[bin]), &mut NoProgress)
}

#[test]
fn truncation_at_every_offset_is_an_error_with_file_and_offset() {
    for rel in [
        "sstmacro-dumpi-testtrace/testtrace-0002.bin",
        "sstmacro-dumpi-testbgp/testbgp-0004.bin",
    ] {
        let bytes = sample(rel);
        assert!(decode(rel, &bytes).is_ok());
        for cut in 0..bytes.len() {
            let e = decode(rel, &bytes[..cut]).expect_err("truncated file must not decode");
            assert_eq!(e.file, rel);
            let off = e.offset.unwrap_or_else(|| panic!("cut {cut}: no offset in {e}"));
            assert!(off <= cut as u64, "cut {cut}: offset {off} past the end ({e})");
        }
    }
}

/// SST/macro's four-rank `testtrace` sample as given: its rank files, then its `.meta`.
fn testtrace() -> Vec<InputFile> {
    let dir = "sstmacro-dumpi-testtrace";
    let mut files: Vec<InputFile> = (0..4)
        .map(|r| {
            InputFile::new(
                format!("testtrace-{r:04}.bin"),
                sample(&format!("{dir}/testtrace-{r:04}.bin")),
            )
        })
        .collect();
    files.push(InputFile::new(
        "testtrace.meta",
        sample(&format!("{dir}/testtrace.meta")),
    ));
    files
}

#[test]
fn truncated_rank_file_in_a_trace_names_that_file() {
    let mut files = testtrace();
    let len = files[2].bytes.len();
    files[2].bytes.truncate(len - 100);
    let e = dumpi::read(&files, &mut NoProgress).expect_err("truncated rank 2");
    assert_eq!(e.file, "testtrace-0002.bin");
    assert!(e.offset.is_some());
    assert!(e.to_string().starts_with("testtrace-0002.bin at byte "), "{e}");
}

#[test]
fn wrong_magic_is_reported_at_offset_zero() {
    let mut bytes = sample("sstmacro-dumpi-testtrace/testtrace-0000.bin");
    bytes[3] ^= 0xff;
    let e = decode("x.bin", &bytes).expect_err("bad magic");
    assert_eq!(e.offset, Some(0));
    assert!(e.message.contains("magic"), "{e}");
    let e = decode("text.bin", b"hostname=foo\n").expect_err("not binary");
    assert_eq!(e.offset, Some(0));
}

#[test]
fn unknown_call_ids_are_errors_at_the_record() {
    for bad in [300u16, 290, 128, 294, 0xffff] {
        let mut b = Bin::default();
        b.call(id::INIT, 0, &[A::I(0)]);
        let at = 16 + b.body.len() as u64; // magic + two time biases + the Init record
        b.body.extend_from_slice(&bad.to_be_bytes());
        b.body.extend_from_slice(&[0x4b, 0, 0]);
        let bytes = b.finish();
        let e = decode("u.bin", &bytes).expect_err("unknown id");
        assert_eq!(e.offset, Some(at), "{e}");
        assert!(e.message.contains(&format!("unknown DUMPI call id {bad}")), "{e}");
        let e = single_rank(bytes).expect_err("model read fails too");
        assert_eq!((e.file.as_str(), e.offset), ("t-0000.bin", Some(at)));
    }
}

#[test]
fn absurd_lengths_fail_before_allocating() {
    let huge = i32::MAX;
    let cases: Vec<(&str, Vec<A>, u16)> = vec![
        ("requests", vec![A::I(huge), A::I(huge)], id::WAITALL),
        ("negative", vec![A::I(1), A::I(-5)], id::WAITALL),
        ("statuses", vec![A::I(0), A::I(0), A::I(huge)], id::WAITALL),
        ("argv", vec![A::I(huge)], id::INIT),
        ("argv string", vec![A::I(1), A::I(huge)], id::INIT),
        ("ranks", vec![A::H(3), A::I(1), A::I(huge)], id::GROUP_EXCL),
    ];
    for (what, args, call) in cases {
        let mut b = Bin::default();
        b.call(call, 0, &args);
        let bytes = b.finish();
        let e = decode("a.bin", &bytes).expect_err(what);
        let off = e.offset.expect("offset");
        assert!((16..bytes.len() as u64).contains(&off), "{what}: {e}");
        assert!(
            e.message.contains("remain") || e.message.contains("negative"),
            "{what}: {e}"
        );
    }
}

#[test]
fn records_running_past_the_stream_or_missing_end_are_errors() {
    // A Send missing its tag and communicator: it would read into the END_OF_STREAM label.
    let mut b = Bin::default();
    b.call(id::SEND, 0, &[A::I(1), A::H(9), A::I(0)]);
    let e = decode("s.bin", &b.finish()).expect_err("short record");
    assert!(e.message.contains("truncated"), "{e}");
    assert!(e.offset.is_some());
    // A stream without END_OF_STREAM: cut the label out and shift the later offsets.
    let mut b = Bin::default();
    b.call(id::BARRIER, 0, &[A::H(2)]);
    let mut bytes = b.finish();
    let idx = bytes.len() - 64;
    let slot = |i: usize| idx + 8 * i;
    let header = u64::from_be_bytes(bytes[slot(4)..slot(4) + 8].try_into().expect("8"));
    for i in 1..7 {
        let v = u64::from_be_bytes(bytes[slot(i)..slot(i) + 8].try_into().expect("8"));
        if v >= header {
            bytes[slot(i)..slot(i) + 8].copy_from_slice(&(v - 2).to_be_bytes());
        }
    }
    bytes.drain(header as usize - 2..header as usize);
    let e = decode("s.bin", &bytes).expect_err("no end of stream");
    assert!(e.message.contains("END_OF_STREAM"), "{e}");
}

#[test]
fn corrupt_index_offsets_are_errors() {
    let good = sample("sstmacro-dumpi-testtrace/testtrace-0001.bin");
    let idx = good.len() - 64;
    for slot in 1..7 {
        for value in [u64::MAX, good.len() as u64 + 5, idx as u64 + 3] {
            let mut bytes = good.clone();
            bytes[idx + 8 * slot..idx + 8 * slot + 8].copy_from_slice(&value.to_be_bytes());
            if let Err(e) = decode("i.bin", &bytes) {
                assert_eq!(e.file, "i.bin");
                assert!(e.offset.is_some(), "{e}");
            } else {
                panic!("slot {slot} = {value} accepted");
            }
        }
    }
}

#[test]
fn random_corruption_never_panics() {
    let files = [
        sample("sstmacro-dumpi-testbgp/testbgp-0001.bin"),
        sample("npb-mg.S.8/dumpi-2026.11.22.08.59.44-0003.bin"),
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut errors = 0;
    for round in 0..600 {
        let mut bytes = files[round % 2].clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() % bytes.len() as u64) as usize;
            bytes[at] = next() as u8;
        }
        if decode("r.bin", &bytes).is_err() {
            errors += 1;
        }
        // The model layer must cope with whatever the record layer accepts.
        let _ = single_rank(bytes);
    }
    assert!(errors > 0, "some corruptions must be detected");
}

/// Found by fuzzing: a metafile line without `=` was echoed whole (100 KB of binary for a
/// corrupt file); the error names the file and line and quotes the line's start only.
#[test]
fn a_garbled_metafile_line_is_quoted_short() {
    let mut files = testtrace();
    let meta_file = files.pop().unwrap();
    let mut meta = meta_file.bytes;
    meta.extend(std::iter::repeat_n(b'x', 100_000));
    meta.push(b'\n');
    files.push(InputFile::new("testtrace.meta", meta));
    let e = dumpi::read(&files, &mut NoProgress).expect_err("a line without key=value");
    assert_eq!(e.file, "testtrace.meta");
    let text = e.to_string();
    assert!(text.contains("expected key=value") && text.contains('…'), "{text}");
    assert!(text.len() < 300, "{} characters", text.len());
}
