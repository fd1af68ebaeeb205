//! The CLI reads compressed inputs as streams: a `.tar.zst` made by GNU tar and zstd, and a
//! `.tar.gz`, give the same summary as the folder they were made from; a truncated one fails with
//! exit code 2 and a message naming it.

mod common;
use common::{code, json, run, sample, stderr};
use std::path::PathBuf;

fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("crates/formats/tests/data")
        .join(path)
}

#[test]
fn a_tar_zst_and_a_tar_gz_summarise_like_their_folder() {
    let folder = run(&[&"summary", &"--json", &data("paraver/profet-paraver-lulesh")]);
    assert_eq!(code(&folder), 0, "{}", stderr(&folder));
    let want = json(&folder);
    assert_eq!(want["format"], "paraver");
    for archive in ["zstd/lulesh-paraver.tar.zst", "archives/lulesh-paraver.tar.gz"] {
        let out = run(&[&"summary", &"--json", &data(archive)]);
        assert_eq!(code(&out), 0, "{archive}: {}", stderr(&out));
        assert_eq!(json(&out), want, "{archive}");
    }
}

/// A zstd frame holding `bytes` in raw (stored) blocks: a valid zstd file without an encoder (the
/// real compressed data of `zstd` itself is in the `.tar.zst` test above).
fn zstd_raw_frame(bytes: &[u8]) -> Vec<u8> {
    // Magic; descriptor 0 (no content size, no checksum); window descriptor 0x38 (128 KiB).
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38];
    let chunks: Vec<&[u8]> = bytes.chunks(128 << 10).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        let header = u32::from(i + 1 == chunks.len()) | ((chunk.len() as u32) << 3);
        frame.extend_from_slice(&header.to_le_bytes()[..3]);
        frame.extend_from_slice(chunk);
    }
    frame
}

#[test]
fn a_zstd_compressed_dumpi_set_in_a_folder_reads_like_the_sample() {
    let dir = tempfile::tempdir().unwrap();
    let sample_dir = sample("sstmacro-dumpi-testbgp");
    let mut plain = Vec::new();
    for entry in std::fs::read_dir(&sample_dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            plain.push(path);
        }
    }
    plain.sort();
    // Each file in a zstd frame of its own, as `zstd *` leaves them.
    for path in &plain {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap();
        std::fs::write(dir.path().join(format!("{name}.zst")), zstd_raw_frame(&bytes)).unwrap();
    }
    let want = run(&[&"summary", &"--json", &sample_dir]);
    assert_eq!(code(&want), 0, "{}", stderr(&want));
    let got = run(&[&"summary", &"--json", &dir.path()]);
    assert_eq!(code(&got), 0, "{}", stderr(&got));
    assert_eq!(json(&got), json(&want));
}

#[test]
fn a_truncated_tar_zst_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(data("zstd/lulesh-paraver.tar.zst")).unwrap();
    let cut = dir.path().join("cut.tar.zst");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = run(&[&"summary", &cut]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let message = stderr(&out);
    assert!(
        message.contains("cut.tar.zst") && message.contains("cannot unpack member"),
        "{message}"
    );
    assert_eq!(message.trim().lines().count(), 1, "{message}");
}
