//! Bad OTF2 input: missing files, unsupported archives, truncation and corruption at many
//! offsets, unknown records and out-of-range ids. Every failure must be a `FormatError` naming
//! the file (and the byte offset inside it), never a panic or a hang.

#[path = "otf2_support.rs"]
mod support;

use support::load;
use tracelogic_formats::otf2;
use tracelogic_formats::{FormatError, InputFile, NoProgress};
use tracelogic_model::Trace;

fn read(files: &[InputFile]) -> Result<Trace, FormatError> {
    otf2::read(files, &mut NoProgress)
}

fn without(files: &[InputFile], name: &str) -> Vec<InputFile> {
    let out: Vec<InputFile> = files.iter().filter(|f| f.name != name).cloned().collect();
    assert_eq!(out.len() + 1, files.len(), "{name} is in the sample");
    out
}

fn with_bytes(files: &[InputFile], name: &str, f: impl FnOnce(&mut Vec<u8>)) -> Vec<InputFile> {
    let mut out = files.to_vec();
    f(&mut out.iter_mut().find(|x| x.name == name).unwrap().bytes);
    out
}

fn find(bytes: &[u8], pattern: &[u8]) -> usize {
    bytes
        .windows(pattern.len())
        .position(|w| w == pattern)
        .expect("pattern present")
}

#[test]
fn missing_files_are_named() {
    let files = load("pyotf2-generated-4rank");
    let e = read(&without(&files, "traces.otf2")).unwrap_err();
    assert!(e.message.contains("anchor"), "{e}");
    let e = read(&without(&files, "traces.def")).unwrap_err();
    assert_eq!(e.file, "traces.def");
    let e = read(&without(&files, "traces/2.evt")).unwrap_err();
    assert_eq!(e.file, "traces/2.evt");
    assert!(e.message.contains("location 2"), "{e}");
    // A missing local definition file is allowed (the writer may omit it).
    let t = read(&without(&files, "traces/2.def")).unwrap();
    assert_eq!(t.ranks[2].calls.len(), 7);
}

#[test]
fn unrelated_files_are_ignored_but_two_anchors_are_refused() {
    let mut files = load("pipit-ping-pong-otf2");
    assert!(files.iter().any(|f| f.name == "MANIFEST.md"));
    read(&files).unwrap();
    files.push(InputFile::new("other/traces.otf2", files[0].bytes.clone()));
    let e = read(&files).unwrap_err();
    assert!(e.message.contains("several OTF2 anchor"), "{e}");
}

#[test]
fn compressed_and_sion_archives_are_refused() {
    let files = load("pyotf2-generated-4rank");
    // Anchor: 03 42 "OTF2\0" + 5 version bytes + 2 u64 chunk sizes = byte 28 substrate, 29 compression.
    let zlib = with_bytes(&files, "traces.otf2", |b| b[29] = 2);
    let e = read(&zlib).unwrap_err();
    assert_eq!((e.file.as_str(), e.offset), ("traces.otf2", Some(29)));
    assert!(e.message.contains("compressed"), "{e}");
    let sion = with_bytes(&files, "traces.otf2", |b| b[28] = 2);
    let e = read(&sion).unwrap_err();
    assert!(e.message.contains("SION"), "{e}");
}

#[test]
fn other_formats_are_not_taken_for_anchors() {
    let e = read(&[InputFile::new(
        "x.otf2",
        b"#Paraver (01/01/2020 at 00:00):100_ns:1(1):1:1(1:1)\n".to_vec(),
    )])
    .unwrap_err();
    assert_eq!((e.file.as_str(), e.offset), ("x.otf2", Some(0)));
    let e = read(&[InputFile::new("x.otf2", Vec::new())]).unwrap_err();
    assert_eq!(e.file, "x.otf2");
}

/// Truncating any file anywhere before its end-of-file record is an error naming that file.
fn truncations_fail(sample: &str, step: usize) {
    let files = load(sample);
    for f in files.iter().filter(|f| f.name.starts_with("traces")) {
        // The bytes after the end-of-file record (0x02) are optional.
        let needed = f.bytes.iter().rposition(|&b| b == 0x02).unwrap();
        let cuts: Vec<usize> = (0..=needed).step_by(step).chain([needed]).collect();
        for cut in cuts {
            let cut_files = with_bytes(&files, &f.name, |b| b.truncate(cut));
            match read(&cut_files) {
                Err(e) => {
                    assert_eq!(e.file, f.name, "cut at {cut}: {e}");
                    assert!(e.offset.is_some(), "cut at {cut}: {e}");
                }
                Ok(_) => panic!("{} cut to {cut} of {} bytes was accepted", f.name, f.bytes.len()),
            }
        }
        read(&with_bytes(&files, &f.name, |b| b.truncate(needed + 1))).unwrap();
    }
}

#[test]
fn truncated_files_of_the_four_rank_sample_fail_cleanly() {
    truncations_fail("pyotf2-generated-4rank", 1);
}

#[test]
fn truncated_files_of_the_score_p_sample_fail_cleanly() {
    truncations_fail("pipit-ping-pong-otf2-papi", 5);
}

#[test]
fn truncated_multichunk_event_files_fail_cleanly() {
    let files = load("pyotf2-generated-multichunk");
    for cut in [17, 18, 1000, 262_143, 262_144, 262_150, 300_000, 326_000] {
        let e = read(&with_bytes(&files, "traces/0.evt", |b| b.truncate(cut))).unwrap_err();
        assert_eq!(e.file, "traces/0.evt", "cut at {cut}");
        assert!(e.offset.is_some());
    }
}

/// Overwrite every byte of every file with each of `values` (and the byte with one bit flipped):
/// reading must return Ok or a FormatError naming a file of the archive (or, when a corrupt
/// location id points elsewhere, the event file it expects), never panic.
fn corruption_never_panics(sample: &str, values: &[u8]) {
    let files = load(sample);
    for f in files.iter().filter(|f| f.name.starts_with("traces")) {
        for pos in 0..f.bytes.len() {
            for v in values.iter().copied().chain([f.bytes[pos] ^ 0x10]) {
                let bad = with_bytes(&files, &f.name, |b| b[pos] = v);
                if let Err(e) = read(&bad) {
                    let named = files.iter().any(|g| g.name == e.file) || e.file.starts_with("traces/");
                    assert!(named, "{} at {pos}={v}: {e}", f.name);
                }
            }
        }
    }
}

#[test]
fn corrupt_bytes_of_the_four_rank_sample_never_panic() {
    corruption_never_panics("pyotf2-generated-4rank", &[0x00, 0x02, 0x7f, 0xff]);
}

#[test]
fn corrupt_bytes_of_the_score_p_sample_never_panic() {
    corruption_never_panics("pipit-ping-pong-otf2", &[0xff]);
}

#[test]
fn huge_lengths_and_counts_are_refused_before_allocating() {
    let files = load("pyotf2-generated-4rank");
    // First group record in traces.def: `12 10 00 01 12 06 01 04` (count 4); claim 2^32-2 members.
    let defs = &files.iter().find(|f| f.name == "traces.def").unwrap().bytes;
    let at = find(defs, &[0x12, 0x10, 0x00, 0x01, 0x12, 0x06, 0x01, 0x04]);
    let bad = with_bytes(&files, "traces.def", |b| {
        b.splice(at + 6..at + 8, [0x04, 0xfe, 0xff, 0xff, 0xff]);
        b[at + 1] += 3;
    });
    let e = read(&bad).unwrap_err();
    assert_eq!(e.file, "traces.def");
    assert!(e.message.contains("count"), "{e}");
    // A record length of 2^63 after the first Enter of 0.evt.
    let bad = with_bytes(&files, "traces/0.evt", |b| {
        b.splice(29..29, [0x0e, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x80]);
    });
    let e = read(&bad).unwrap_err();
    assert_eq!((e.file.as_str(), e.offset), ("traces/0.evt", Some(30)));
}

#[test]
fn unknown_records_are_skipped_with_a_warning() {
    let files = load("pyotf2-generated-4rank");
    // An unknown event (id 200, 3 field bytes) right after the first Enter of location 0.
    let bad = with_bytes(&files, "traces/0.evt", |b| {
        b.splice(29..29, [200, 3, 1, 2, 3]);
    });
    let t = read(&bad).unwrap();
    assert!(t.warnings.iter().any(|w| w.contains("unknown ids")), "{:?}", t.warnings);
    assert_eq!(t.ranks[0].calls.len(), 7);
    // An unknown definition record right after the chunk header of the global definitions.
    let bad = with_bytes(&files, "traces.def", |b| {
        b.splice(18..18, [201, 2, 7, 7]);
    });
    let t = read(&bad).unwrap();
    assert!(
        t.warnings.iter().any(|w| w.contains("traces.def") && w.contains("201")),
        "{:?}",
        t.warnings
    );
}

#[test]
fn out_of_range_ids_are_errors_at_their_offset() {
    let files = load("pyotf2-generated-4rank");
    let evt = &files.iter().find(|f| f.name == "traces/0.evt").unwrap().bytes;
    // Enter of an undefined region.
    let enter = find(evt, &[0x0c, 0x01, 0x01]);
    let e = read(&with_bytes(&files, "traces/0.evt", |b| b[enter + 2] = 0x63)).unwrap_err();
    assert_eq!((e.file.as_str(), e.offset), ("traces/0.evt", Some(enter as u64)));
    assert!(e.message.contains("undefined region 99"), "{e}");
    // MpiSend to rank 9 of a 4-rank communicator.
    let send = find(evt, &[0x0e, 0x08, 0x01, 0x01]);
    let e = read(&with_bytes(&files, "traces/0.evt", |b| b[send + 3] = 9)).unwrap_err();
    assert_eq!((e.file.as_str(), e.offset), ("traces/0.evt", Some(send as u64)));
    assert!(e.message.contains("receiver 9"), "{e}");
    // A communicator id nobody defined.
    let bad = with_bytes(&files, "traces/0.evt", |b| {
        b.splice(send + 4..send + 5, [0x01, 0x09]);
        b[send + 1] += 1;
    });
    let e = read(&bad).unwrap_err();
    assert_eq!((e.file.as_str(), e.offset), ("traces/0.evt", Some(send as u64)));
    assert!(e.message.contains("undefined communicator 9"), "{e}");
    // A location whose group does not exist (traces.def, first Location record).
    let defs = &files.iter().find(|f| f.name == "traces.def").unwrap().bytes;
    let loc = find(defs, &[0x0e, 0x07, 0x00, 0x01, 0x08, 0x01, 0x01, 0x1c, 0x00]);
    let bad = with_bytes(&files, "traces.def", |b| {
        b.splice(loc + 8..loc + 9, [0x01, 0x07]);
        b[loc + 1] += 1;
    });
    let e = read(&bad).unwrap_err();
    assert!(e.message.contains("undefined location group 7"), "{e}");
    assert_eq!((e.file.as_str(), e.offset), ("traces.def", Some(loc as u64)), "{e}");
}
