//! Streaming unpacking (`input::Unpacker`, `input::read_paths`) against the whole-bytes path
//! (`expand_archives`) and the plain files: every real sample packed as .tar.gz, .tar.zst, .zip and
//! a zip inside a .tar.gz reads as the same trace; files made by the zstd and tar tools read like
//! the plain ones; truncated streams fail naming the file at every offset tried.

mod common;

use common::{gzip_fast as gzip, tar, zip, zstd};
use std::collections::BTreeMap;
use std::io::{self, Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use tracelogic_formats::input::{read_paths, read_paths_with_progress, Unpacker};
use tracelogic_formats::{expand_archives, read_trace, FormatError, InputFile, Progress};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples")
}

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(path)
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<InputFile>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        let name = format!("{prefix}{}", path.file_name().unwrap().to_string_lossy());
        if path.is_dir() {
            // Reference dumps of the real tools, not part of the traces.
            if name != "expected" {
                walk(&path, &format!("{name}/"), out);
            }
        } else {
            out.push(InputFile::new(name, std::fs::read(&path).unwrap()));
        }
    }
}

/// Every sample trace with its files named relative to its folder (each Pipit CSV is a trace).
fn sample_sets() -> Vec<(String, Vec<InputFile>)> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(samples())
        .expect("tests/data/samples beside the repository")
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut sets = Vec::new();
    for dir in dirs {
        let label = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut files = Vec::new();
        walk(&dir, "", &mut files);
        if label == "pipit-csv" {
            for f in files {
                sets.push((f.name.trim_end_matches(".csv").to_owned(), vec![f]));
            }
        } else {
            sets.push((label, files));
        }
    }
    assert!(sets.len() >= 12, "expected every sample, found {}", sets.len());
    sets
}

/// The sample's files under the folder `label/`, as archive members.
fn members<'a>(label: &str, files: &'a [InputFile]) -> Vec<(String, &'a [u8])> {
    files
        .iter()
        .map(|f| (format!("{label}/{}", f.name), &f.bytes[..]))
        .collect()
}

/// The sample packed four ways: (archive name, bytes).
fn packs(label: &str, files: &[InputFile]) -> Vec<(String, Vec<u8>)> {
    let m = members(label, files);
    let tarred = tar(&m);
    let zipped = zip(&m);
    let zip_in_tar_gz = gzip(&tar(&[("outer/inner.zip", &zipped[..])]));
    vec![
        (format!("{label}.tar.gz"), gzip(&tarred)),
        (format!("{label}.tar.zst"), zstd(&tarred)),
        (format!("{label}.zip"), zipped),
        (format!("{label}-nested.tar.gz"), zip_in_tar_gz),
    ]
}

/// A source that hands out at most `step` bytes per read, so every layer sees short reads, and
/// fails with `fail` once `fail_at` bytes were read.
struct Trickle {
    inner: Cursor<Vec<u8>>,
    step: usize,
    fail_at: Option<(u64, fn() -> io::Error)>,
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some((at, fail)) = self.fail_at {
            if self.inner.position() >= at {
                return Err(fail());
            }
        }
        let n = buf.len().min(self.step);
        self.inner.read(&mut buf[..n])
    }
}

impl Seek for Trickle {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

fn stream(name: &str, bytes: &[u8], step: usize) -> Result<Vec<InputFile>, FormatError> {
    let mut source = Trickle {
        inner: Cursor::new(bytes.to_vec()),
        step,
        fail_at: None,
    };
    let mut unpacker = Unpacker::new();
    unpacker.add_reader(name, bytes.len() as u64, &mut source)?;
    Ok(unpacker.finish())
}

fn by_name(files: &[InputFile]) -> BTreeMap<&str, &[u8]> {
    files.iter().map(|f| (f.name.as_str(), &f.bytes[..])).collect()
}

fn trace_json(files: Vec<InputFile>) -> serde_json::Value {
    serde_json::to_value(read_trace(files).unwrap()).unwrap()
}

#[test]
fn every_sample_reads_the_same_from_each_packing_streamed_or_whole() {
    for (label, files) in sample_sets() {
        let plain = trace_json(files.clone());
        for (name, packed) in packs(&label, &files) {
            let whole = expand_archives(vec![InputFile::new(&name, packed.clone())])
                .unwrap_or_else(|e| panic!("{name} whole: {e}"));
            assert_eq!(by_name(&whole), by_name(&files), "{name}: whole-bytes members");
            for step in [4093, 1 << 20] {
                let streamed = stream(&name, &packed, step).unwrap_or_else(|e| panic!("{name} streamed: {e}"));
                assert_eq!(
                    by_name(&streamed),
                    by_name(&files),
                    "{name}: streamed members, step {step}"
                );
            }
            let streamed = stream(&name, &packed, 997).unwrap();
            assert_eq!(
                trace_json(streamed),
                plain,
                "{name}: the trace differs from the plain files'"
            );
        }
    }
}

#[test]
fn files_made_by_tar_and_zstd_read_like_the_plain_ones() {
    let tar_zst = std::fs::read(data("zstd/lulesh-paraver.tar.zst")).unwrap();
    let tar_gz = std::fs::read(data("archives/lulesh-paraver.tar.gz")).unwrap();
    let mut plain = Vec::new();
    walk(&data("paraver/profet-paraver-lulesh"), "", &mut plain);
    let from_zst = stream("lulesh-paraver.tar.zst", &tar_zst, 8191).unwrap();
    assert_eq!(by_name(&from_zst), by_name(&plain));
    let from_gz = stream("lulesh-paraver.tar.gz", &tar_gz, 8191).unwrap();
    assert_eq!(by_name(&from_gz), by_name(&plain));

    // Two frames (the first with a checksum, the second without) make one file.
    let csv = std::fs::read(data("csv/ping-pong-csv.csv")).unwrap();
    let zst = std::fs::read(data("zstd/ping-pong-csv.csv.zst")).unwrap();
    let files = stream("ping-pong-csv.csv.zst", &zst, 100).unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].name, "ping-pong-csv.csv");
    assert_eq!(files[0].bytes, csv);
    let whole = expand_archives(vec![InputFile::new("upload", zst)]).unwrap();
    assert_eq!(
        whole[0].name, "upload.unpacked",
        "zstd is recognised by content, not by name"
    );
    assert_eq!(whole[0].bytes, csv);
}

#[test]
fn skippable_frames_are_skipped_and_a_stream_may_start_with_one() {
    let text = b"#tracelogic-text 1\nranks 1\n".repeat(100);
    let (a, b) = text.split_at(1000);
    let skippable = |n: u8, len: u32| {
        let mut f = vec![0x50 + n, 0x2a, 0x4d, 0x18];
        f.extend_from_slice(&len.to_le_bytes());
        f.extend(std::iter::repeat_n(0xee, len as usize));
        f
    };
    let stream_bytes = [skippable(3, 9), zstd(a), skippable(0, 0), zstd(b), skippable(15, 2)].concat();
    let files = stream("t.txt.zst", &stream_bytes, 5).unwrap();
    assert_eq!(files[0].bytes, text);
    // Without the name saying zstd, a skippable frame alone does not make a zstd file.
    let files = stream("t.bin", &stream_bytes, 5).unwrap();
    assert_eq!(files[0].bytes, stream_bytes);
}

#[test]
fn checksum_mismatches_are_reported() {
    let zst = std::fs::read(data("zstd/ping-pong-csv.csv.zst")).unwrap();
    // The first frame's content checksum is the last 4 bytes before the second frame's magic.
    let second = zst.windows(4).rposition(|w| w == [0x28, 0xb5, 0x2f, 0xfd]).unwrap();
    let mut bad = zst.clone();
    bad[second - 1] ^= 0x40;
    let err = stream("p.csv.zst", &bad, 64).unwrap_err();
    assert_eq!(err.file, "p.csv.zst");
    assert!(err.message.contains("checksum"), "{err}");

    let mut gz = gzip(&b"#tracelogic-text 1\nranks 1\n".repeat(50));
    let crc = gz.len() - 8;
    gz[crc] ^= 1;
    let err = stream("t.txt.gz", &gz, 64).unwrap_err();
    assert_eq!(err.file, "t.txt.gz");
    assert!(err.message.contains("cannot unpack member `t.txt`"), "{err}");
}

#[test]
fn truncated_streams_fail_naming_the_file_at_every_offset() {
    let sets = sample_sets();
    let (label, files) = sets.iter().find(|(l, _)| l == "sstmacro-dumpi-testtrace").unwrap();
    for (name, packed) in packs(label, files) {
        let step = (packed.len() / 400).max(1);
        let mut cuts: Vec<usize> = (0..packed.len()).step_by(step).collect();
        cuts.extend(packed.len().saturating_sub(40)..packed.len());
        for cut in cuts {
            let bytes = &packed[..cut];
            let whole = read_trace(vec![InputFile::new(&name, bytes)]);
            let streamed = stream(&name, bytes, 61).and_then(read_trace);
            for (how, result) in [("whole", whole), ("streamed", streamed)] {
                let err = match result {
                    Ok(_) => panic!("{name} cut at {cut} of {} read without error ({how})", packed.len()),
                    Err(e) => e,
                };
                assert!(
                    err.file.starts_with(&name),
                    "{name} cut at {cut} ({how}): the error names `{}`: {err}",
                    err.file
                );
            }
        }
    }
}

#[test]
fn a_source_that_fails_or_cancels_is_reported_as_such() {
    let packed = gzip(&tar(&[(
        "a/t.txt".to_owned(),
        &b"#tracelogic-text 1\n".repeat(4000)[..],
    )]));
    let mut source = Trickle {
        inner: Cursor::new(packed.clone()),
        step: 100,
        fail_at: Some((300, || io::Error::other("the disk went away"))),
    };
    let err = Unpacker::new()
        .add_reader("run.tar.gz", packed.len() as u64, &mut source)
        .unwrap_err();
    assert_eq!(err.file, "run.tar.gz");
    assert_eq!(err.offset, Some(300));
    assert!(err.message.contains("cannot read it: the disk went away"), "{err}");
    assert!(!err.cancelled);

    let mut source = Trickle {
        inner: Cursor::new(packed.clone()),
        step: 100,
        fail_at: Some((500, || io::Error::other(FormatError::cancelled("run.tar.gz")))),
    };
    let err = Unpacker::new()
        .add_reader("run.tar.gz", packed.len() as u64, &mut source)
        .unwrap_err();
    assert!(err.cancelled, "{err}");
}

#[test]
fn read_paths_streams_archives_from_disk_like_the_folder() {
    let dir = std::env::temp_dir().join(format!("tracelogic-streams-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let sets = sample_sets();
    let (label, files) = sets.iter().find(|(l, _)| l == "npb-mg.S.8").unwrap();
    let plain = trace_json(files.clone());
    for (name, packed) in packs(label, files) {
        let path = dir.join(&name);
        std::fs::write(&path, &packed).unwrap();
        let read = read_paths(std::slice::from_ref(&path)).unwrap();
        assert_eq!(by_name(&read), by_name(files), "{name}");
        assert_eq!(trace_json(read), plain, "{name}");
    }
    // A folder holding a compressed file: streamed too, named by its place in the folder.
    std::fs::create_dir_all(dir.join("set/run")).unwrap();
    let prv = std::fs::read(data(
        "paraver/profet-paraver-lulesh/lulesh_7+1_with_uncores_sockets1+2.chop8.prv",
    ))
    .unwrap();
    std::fs::write(dir.join("set/run/t.prv.zst"), zstd(&prv)).unwrap();
    std::fs::write(dir.join("set/run/t.row"), b"LEVEL NODE SIZE 0\n").unwrap();
    let read = read_paths(&[dir.join("set")]).unwrap();
    let names: Vec<&str> = read.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["t.prv", "t.row"]);
    assert_eq!(read[0].bytes, prv);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn read_paths_reports_progress_through_an_archive_and_can_be_cancelled() {
    let dir = std::env::temp_dir().join(format!("tracelogic-progress-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // 12 MB that no compressor shrinks, in a plain tar, next to a small file.
    let member: Vec<u8> = (0..3_000_000u32)
        .flat_map(|i| i.wrapping_mul(2_654_435_761).rotate_left(i % 29).to_le_bytes())
        .collect();
    std::fs::write(dir.join("big.tar"), tar(&[("run/a.bin", &member[..])])).unwrap();
    std::fs::write(dir.join("small.txt"), b"#tracelogic-text 1\n").unwrap();
    let paths = [dir.join("big.tar"), dir.join("small.txt")];
    let total: u64 = paths.iter().map(|p| std::fs::metadata(p).unwrap().len()).sum();

    let mut seen: Vec<(String, u64, u64)> = Vec::new();
    let files = read_paths_with_progress(&paths, &mut |p: &Progress| {
        seen.push((p.stage.clone(), p.bytes_done, p.bytes_total));
        true
    })
    .unwrap();
    assert_eq!(by_name(&files), by_name(&read_paths(&paths).unwrap()));
    assert!(seen.windows(2).all(|w| w[0].1 <= w[1].1), "{seen:?}");
    assert!(seen.iter().all(|s| s.2 == total), "{seen:?}");
    assert_eq!(seen.last().unwrap().1, total);
    let inside = seen.iter().filter(|s| s.0 == "reading big.tar" && s.1 > 0).count();
    assert!(inside >= 2, "progress inside the archive: {seen:?}");
    assert!(seen.iter().any(|s| s.0 == "reading small.txt"), "{seen:?}");

    let mut reports = 0;
    let err = read_paths_with_progress(&paths, &mut |_: &Progress| {
        reports += 1;
        reports < 3
    })
    .unwrap_err();
    assert!(err.cancelled, "{err}");
    assert_eq!(err.file, "big.tar");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_lower_limit_for_all_archives_is_told_apart_from_the_ratio() {
    // Varied bytes: gzip keeps them within the 200× ratio.
    let member: Vec<u8> = (0..20_000u32)
        .flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes())
        .collect();
    let packed = gzip(&tar(&[("run/a.bin".to_owned(), &member[..])]));
    let mut unpacker = Unpacker::with_limit(50_000);
    let err = unpacker
        .add_reader("run.tar.gz", packed.len() as u64, &mut Cursor::new(packed.clone()))
        .unwrap_err();
    assert!(unpacker.limit_reached(), "{err}");
    assert!(err.message.contains("the limit for all archives"), "{err}");

    let mut unpacker = Unpacker::with_limit(1 << 20);
    unpacker
        .add_reader("run.tar.gz", packed.len() as u64, &mut Cursor::new(packed))
        .unwrap();
    assert_eq!(unpacker.finish()[0].bytes, member);

    let bomb = gzip(&vec![0u8; 4 << 20]);
    let mut unpacker = Unpacker::with_limit(1 << 30);
    let err = unpacker
        .add_reader("zeros.gz", bomb.len() as u64, &mut Cursor::new(bomb))
        .unwrap_err();
    assert!(!unpacker.limit_reached(), "the ratio, not the limit: {err}");
}
