//! Decompression bombs streamed through `input::Unpacker` are refused by the ratio limit after a
//! bounded amount of work and memory: the test binary counts every allocation and checks the peak
//! stays far below the size the bomb would unpack to. One test in this binary, so no other test's
//! allocations mix into the count.

use flate2::write::GzEncoder;
use flate2::Compression;
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Cursor, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use tracelogic_formats::input::Unpacker;
use tracelogic_formats::FormatError;

/// The system allocator, counting the bytes live and the peak since the last reset.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(live, Ordering::SeqCst);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            // Counted as the old and the new block both live, as a copying realloc has them.
            let peak = LIVE.load(Ordering::SeqCst) + new_size;
            PEAK.fetch_max(peak, Ordering::SeqCst);
            if new_size >= layout.size() {
                LIVE.fetch_add(new_size - layout.size(), Ordering::SeqCst);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::SeqCst);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Unpack `bomb` as a stream; the error and the peak of extra memory it took.
fn unpack(name: &str, bomb: Vec<u8>) -> (FormatError, usize) {
    let len = bomb.len() as u64;
    let mut source = Cursor::new(bomb);
    let base = LIVE.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    let err = Unpacker::new().add_reader(name, len, &mut source).unwrap_err();
    (err, PEAK.load(Ordering::SeqCst) - base)
}

/// A zstd frame of `blocks` RLE blocks of 128 KiB zeros: 4 bytes per block, 32768 times smaller
/// than its content (the most a zstd bomb gets).
fn zstd_rle_bomb(blocks: usize) -> Vec<u8> {
    // Magic; frame header descriptor 0 (no content size, not single-segment, no checksum); window
    // descriptor 0x38 (2^(10+7) = 128 KiB).
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38];
    for i in 0..blocks {
        let last = u32::from(i + 1 == blocks);
        let header = last | (1 << 1) | ((128 << 10) << 3);
        frame.extend_from_slice(&header.to_le_bytes()[..3]);
        frame.push(0);
    }
    frame
}

#[test]
fn zstd_and_gzip_bombs_are_refused_without_allocating_their_output() {
    // 1 GiB of zeros in 32 KiB of zstd.
    let blocks = 8192;
    let zst = zstd_rle_bomb(blocks);
    let output = blocks << 17;
    let cap = zst.len() * 200;
    let (err, peak) = unpack("zeros.bin.zst", zst);
    eprintln!("zstd bomb: peak {peak} bytes, cap {cap}, output {output}");
    assert_eq!(err.file, "zeros.bin.zst");
    assert!(
        err.message.contains("200 times") && err.message.contains("decompression bomb"),
        "{err}"
    );
    assert!(
        peak < 8 * cap + (1 << 20) && peak < output / 64,
        "the zstd bomb took {peak} bytes (it unpacks to {output}, the cap is {cap})"
    );

    // 256 MiB of zeros as 256 gzip members of 1 MiB each (about 1 KiB each).
    let member = {
        let mut enc = GzEncoder::new(Vec::new(), Compression::best());
        enc.write_all(&vec![0u8; 1 << 20]).unwrap();
        enc.finish().unwrap()
    };
    let gz = member.repeat(256);
    let output = 256usize << 20;
    let cap = gz.len() * 200;
    let (err, peak) = unpack("zeros.bin.gz", gz);
    eprintln!("gzip bomb: peak {peak} bytes, cap {cap}, output {output}");
    assert_eq!(err.file, "zeros.bin.gz");
    assert!(err.message.contains("200 times"), "{err}");
    assert!(
        peak < 3 * cap && peak < output / 2,
        "the gzip bomb took {peak} bytes (it unpacks to {output}, the cap is {cap})"
    );

    // The same bomb inside a tar inside zstd: the tar member's size is checked before reading.
    let mut header = tar::Header::new_gnu();
    header.set_size(1 << 30);
    header.set_mode(0o644);
    header.set_path("big.bin").unwrap();
    header.set_cksum();
    let mut tar = header.as_bytes().to_vec();
    tar.extend(std::iter::repeat_n(0u8, 1 << 16));
    let packed = ruzstd::encoding::compress_to_vec(&tar[..], ruzstd::encoding::CompressionLevel::Fastest);
    let (err, peak) = unpack("big.tar.zst", packed);
    assert_eq!(err.file, "big.tar.zst > big.tar");
    assert!(err.message.contains("decompression bomb"), "{err}");
    assert!(peak < 4 << 20, "the tar bomb took {peak} bytes");
}
