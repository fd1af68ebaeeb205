//! Archive builders shared by the input tests: the archives a user would give, made in memory.

#![allow(dead_code)]

use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::{Cursor, Write};

/// `bytes` gzip-compressed at the default level.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// `bytes` gzip-compressed at the fastest level (a larger stream: errors partway land in the
/// gzip layer).
pub fn gzip_fast(bytes: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// `bytes` zstd-compressed at the fastest level.
pub fn zstd(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}

/// A GNU tar archive of `members` (name, content), in order.
pub fn tar<N: AsRef<str>>(members: &[(N, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, bytes) in members {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, name.as_ref(), *bytes).unwrap();
    }
    builder.into_inner().unwrap()
}

/// A zip archive of `members` (name, content), deflated, in order.
pub fn zip<N: AsRef<str>>(members: &[(N, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in members {
        writer.start_file(name.as_ref(), options).unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap().into_inner()
}
