use super::*;
use std::cell::RefCell;

#[test]
fn slices_cover_every_file_end_to_end_within_the_slice_size() {
    let sizes = [0, 5, 10, 11, 1, 0, 3, 2];
    let reads = plan_slices(&sizes, 5);
    let total: u64 = sizes.iter().sum();
    let mut at = 0;
    let mut seen = vec![0u64; sizes.len()];
    for r in &reads {
        assert_eq!(r.start, at, "slices follow each other without gaps");
        assert!(r.end > r.start && r.end - r.start <= 5, "{r:?} within the slice size");
        let held: u64 = r.parts.iter().map(|p| p.end - p.start).sum();
        assert_eq!(held, r.end - r.start, "{r:?}: the parts are the slice's bytes");
        for p in &r.parts {
            assert_eq!(p.start, seen[p.file], "file {} is read front to back", p.file);
            assert!(p.end > p.start && p.end <= sizes[p.file]);
            seen[p.file] = p.end;
        }
        at = r.end;
    }
    assert_eq!(at, total);
    assert_eq!(seen, sizes, "every file is read to its end");
    assert!(
        reads[..reads.len() - 1].iter().all(|r| r.end - r.start == 5),
        "only the last slice is short"
    );
    assert_eq!(reads.len() as u64, total.div_ceil(5));
    let files: Vec<usize> = reads.iter().flat_map(|r| r.parts.iter().map(|p| p.file)).collect();
    assert!(files.windows(2).all(|w| w[0] <= w[1]), "files in order");
}

#[test]
fn many_small_files_share_a_slice_and_a_large_one_spans_several() {
    let mut sizes = vec![13_000u64; 4096];
    sizes.push(20 << 20);
    let reads = plan_slices(&sizes, SLICE_BYTES);
    let small_total: u64 = 13_000 * 4096;
    // 53 MB of small files in 8 MiB slices: 7 reads rather than 4,096, then the large file.
    assert_eq!(reads.len() as u64, (small_total + (20 << 20)).div_ceil(SLICE_BYTES));
    assert!(
        reads[0].parts.len() > 600,
        "{} files in the first slice",
        reads[0].parts.len()
    );
    let large: Vec<&Chunk> = reads.iter().flat_map(|r| &r.parts).filter(|p| p.file == 4096).collect();
    assert!(large.len() >= 3, "the large file spans slices");
    assert_eq!(
        plan_slices(&[0, 0], 8),
        Vec::<SliceRead>::new(),
        "empty files need no read"
    );
}

#[test]
fn archives_are_streamed_by_their_names() {
    for name in [
        "run.tar.gz",
        "a/B.TGZ",
        "x.tar.zst",
        "t.zip",
        "plain.tar",
        "rank.bin.zstd",
    ] {
        assert!(streamed_by_name(name), "{name}");
    }
    for name in [
        "trace-0000.bin",
        "trace.meta",
        "traces/0.evt",
        "run.txt",
        "gz",
        "tar.bin",
    ] {
        assert!(!streamed_by_name(name), "{name}");
    }
}

fn reader(
    bytes: Vec<u8>,
    slice: u64,
    log: &RefCell<Vec<(u64, u64)>>,
) -> SliceReader<impl FnMut(u64, u64, &mut [u8]) -> io::Result<()> + '_> {
    SliceReader::new(bytes.len() as u64, slice, move |start, end, out: &mut [u8]| {
        log.borrow_mut().push((start, end));
        out.copy_from_slice(&bytes[start as usize..end as usize]);
        Ok(())
    })
}

#[test]
fn small_reads_come_from_one_slice_and_large_reads_go_straight_through() {
    let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    let log = RefCell::new(Vec::new());
    let mut r = reader(bytes.clone(), 4096, &log);
    let mut small = [0u8; 10];
    r.read_exact(&mut small).unwrap();
    r.read_exact(&mut small).unwrap();
    assert_eq!(&small, &bytes[10..20]);
    assert_eq!(*log.borrow(), [(0, 4096)]);
    let mut rest = Vec::new();
    r.read_to_end(&mut rest).unwrap();
    assert_eq!(rest, &bytes[20..]);
    assert!(log.borrow()[1..].iter().all(|(s, e)| e - s <= 4096));
    assert_eq!(log.borrow().last().unwrap().1, 10_000);
}

#[test]
fn seeks_reposition_and_refuse_to_go_before_the_start() {
    let bytes: Vec<u8> = (0..5000u32).map(|i| (i % 7) as u8).collect();
    let log = RefCell::new(Vec::new());
    let mut r = reader(bytes.clone(), 1000, &log);
    assert_eq!(r.seek(SeekFrom::End(-22)).unwrap(), 4978);
    let mut tail = Vec::new();
    r.read_to_end(&mut tail).unwrap();
    assert_eq!(tail, &bytes[4978..]);
    r.seek(SeekFrom::Start(0)).unwrap();
    assert_eq!(r.seek(SeekFrom::Current(1500)).unwrap(), 1500);
    let mut one = [0u8; 1];
    r.read_exact(&mut one).unwrap();
    assert_eq!(one[0], bytes[1500]);
    assert!(r.seek(SeekFrom::Current(-2000)).is_err());
    assert_eq!(r.seek(SeekFrom::Start(9000)).unwrap(), 9000);
    assert_eq!(r.read(&mut one).unwrap(), 0, "past the end reads nothing");
}

#[test]
fn sliced_files_read_whole_files_and_heads_in_slices_and_name_the_failing_file() {
    use tracelogic_formats::stream::FileSource;
    let a: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
    let b: Vec<u8> = vec![7; 10];
    let files = [a.clone(), b.clone(), Vec::new()];
    let log = RefCell::new(Vec::new());
    let mut source = SlicedFiles::new(
        vec![("t/0.evt".into(), 1000), ("t.def".into(), 10), ("empty".into(), 0)],
        300,
        |file, start, end, out: &mut [u8]| {
            log.borrow_mut().push((file, start, end));
            out.copy_from_slice(&files[file][start as usize..end as usize]);
            Ok(())
        },
    );
    assert_eq!(source.list()[1], ("t.def".to_owned(), 10));
    assert_eq!(source.read(0).unwrap(), a);
    assert_eq!(
        *log.borrow(),
        [(0, 0, 300), (0, 300, 600), (0, 600, 900), (0, 900, 1000)],
        "whole file in slices of at most 300 bytes"
    );
    log.borrow_mut().clear();
    assert_eq!(source.read_head(0, 450).unwrap(), &a[..450]);
    assert_eq!(*log.borrow(), [(0, 0, 300), (0, 300, 450)], "a head reads no further");
    assert_eq!(
        source.read_head(1, 1 << 20).unwrap(),
        b,
        "a head longer than the file is the file"
    );
    assert_eq!(source.read(2).unwrap(), Vec::<u8>::new());
    // Through the streaming trait, one rank file at a time: the CLI's reader sees the same bytes.
    let mut failing = SlicedFiles::new(vec![("t/3.evt".into(), 700)], 300, |_, start, _, _: &mut [u8]| {
        if start >= 300 {
            Err(io::Error::other("the disk went away"))
        } else {
            Ok(())
        }
    });
    let e = failing.read(0).unwrap_err().to_string();
    assert!(
        e.contains("t/3.evt") && e.contains("300") && e.contains("the disk went away"),
        "{e}"
    );
    let mut cancelled = SlicedFiles::new(vec![("x".into(), 5)], 300, |_, _, _, _: &mut [u8]| {
        Err(io::Error::other(FormatError::cancelled("x")))
    });
    assert!(cancelled.read(0).unwrap_err().cancelled);
}

#[test]
fn prefetched_files_come_from_few_joined_reads_and_are_handed_out_once() {
    use tracelogic_formats::stream::FileSource;
    let files: Vec<Vec<u8>> = vec![vec![1; 5], vec![2; 700], vec![], vec![3; 7], vec![4; 3]];
    let list = files
        .iter()
        .enumerate()
        .map(|(i, f)| (format!("f{i}"), f.len() as u64))
        .collect();
    let single = RefCell::new(0);
    let mut source = SlicedFiles::new(list, 256, |file, start, end, out: &mut [u8]| {
        *single.borrow_mut() += 1;
        out.copy_from_slice(&files[file][start as usize..end as usize]);
        Ok(())
    });
    let wanted = [0, 2, 3, 4];
    let joined: Vec<u8> = wanted.iter().flat_map(|&i| files[i].clone()).collect();
    let mut reads = 0;
    source
        .prefetch(&wanted, |start, end, out: &mut [u8]| {
            reads += 1;
            out.copy_from_slice(&joined[start as usize..end as usize]);
            Ok(())
        })
        .unwrap();
    assert_eq!(reads, 1, "15 bytes of four files in one read");
    for &i in &wanted {
        assert_eq!(source.read(i).unwrap(), files[i], "file {i}");
    }
    assert_eq!(source.read_head(1, 3).unwrap(), vec![2; 3]);
    assert_eq!(*single.borrow(), 1, "only the file not prefetched was read on its own");
    assert_eq!(source.read(3).unwrap(), files[3], "read again once handed out");
    assert_eq!(*single.borrow(), 2);
    let e = source
        .prefetch(&[1], |_, _, _: &mut [u8]| Err(io::Error::other("gone")))
        .unwrap_err()
        .to_string();
    assert!(e.contains("f1") && e.contains("gone"), "{e}");
}

#[cfg(not(target_arch = "wasm32"))]
#[test]
fn an_otf2_overview_over_sliced_files_equals_the_one_over_files_in_memory() {
    use tracelogic_formats::stream::{FileSource, MemoryFiles};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples/pyotf2-generated-4rank");
    let files = tracelogic_formats::input::read_paths(&[dir]).unwrap();
    let bytes: Vec<Vec<u8>> = files.iter().map(|f| f.bytes.clone()).collect();
    let list: Vec<(String, u64)> = files.iter().map(|f| (f.name.clone(), f.bytes.len() as u64)).collect();
    let mut sliced = SlicedFiles::new(list, 64, |file, start, end, out: &mut [u8]| {
        out.copy_from_slice(&bytes[file][start as usize..end as usize]);
        Ok(())
    });
    assert!(tracelogic_formats::stream::streams(&sliced));
    let mut memory = MemoryFiles::new(files);
    let nothing = &mut tracelogic_formats::NoProgress;
    let a = tracelogic_engine::overview::overview(&mut sliced, 32, nothing).unwrap();
    let b = tracelogic_engine::overview::overview(&mut memory, 32, nothing).unwrap();
    assert_eq!(a.input_bytes, b.input_bytes);
    assert_eq!(a.streamed, b.streamed);
    assert_eq!(
        a.topology.identification.matched.as_ref().map(|m| &m.label),
        b.topology.identification.matched.as_ref().map(|m| &m.label),
        "the same topology (its timings differ)"
    );
    assert_eq!(a.overview, b.overview);
    assert!(a.streamed && a.overview.calls > 0);
    let _ = sliced.list();
}

/// With a joined read, the event files the OTF2 stream announces are read several at a time
/// (here all four of a 4-rank sample in one read, the slice holding them all): no event file
/// is fetched alone, and the overview, whole or by parts, is the one over files in memory.
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn announced_event_files_are_read_together_and_give_the_same_overview() {
    use tracelogic_formats::stream::MemoryFiles;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples/pyotf2-generated-4rank");
    let files = tracelogic_formats::input::read_paths(&[dir]).unwrap();
    let bytes: std::rc::Rc<Vec<Vec<u8>>> = std::rc::Rc::new(files.iter().map(|f| f.bytes.clone()).collect());
    let list: Vec<(String, u64)> = files.iter().map(|f| (f.name.clone(), f.bytes.len() as u64)).collect();
    let events = list.iter().filter(|(n, _)| n.ends_with(".evt")).count();
    assert_eq!(events, 4);
    let nothing = &mut tracelogic_formats::NoProgress;
    let want = tracelogic_engine::overview::overview(&mut MemoryFiles::new(files.clone()), 32, nothing).unwrap();
    for parts in [1usize, 2] {
        let alone = std::rc::Rc::new(RefCell::new(Vec::new()));
        let together = std::rc::Rc::new(RefCell::new(Vec::new()));
        let mut got = Vec::new();
        for part in 0..parts {
            let (b, log) = (bytes.clone(), alone.clone());
            let sliced = SlicedFiles::new(list.clone(), 1 << 20, move |file, start, end, out: &mut [u8]| {
                log.borrow_mut().push(file);
                out.copy_from_slice(&b[file][start as usize..end as usize]);
                Ok(())
            });
            let (b, log) = (bytes.clone(), together.clone());
            let mut sliced = sliced.read_ahead_with(Box::new(move |fs: &[usize], start, end, out: &mut [u8]| {
                log.borrow_mut().push(fs.to_vec());
                let joined: Vec<u8> = fs.iter().flat_map(|&f| b[f].iter().copied()).collect();
                out.copy_from_slice(&joined[start as usize..end as usize]);
                Ok(())
            }));
            let owned = move |ranks: u32| {
                let n = ranks as usize;
                (n * part / parts) as u32..(n * (part + 1) / parts) as u32
            };
            got.push(tracelogic_engine::overview::overview_part(&mut sliced, 32, &owned, nothing).unwrap());
        }
        let alone_events = alone.borrow().iter().filter(|&&f| list[f].0.ends_with(".evt")).count();
        assert_eq!(alone_events, 0, "{parts} parts: event files fetched one by one");
        assert_eq!(together.borrow().len(), parts, "{parts} parts: one joined read each");
        let report = tracelogic_engine::overview::overview_of_stream_parts(got).unwrap();
        assert_eq!(report.overview, want.overview, "{parts} parts");
    }
}

#[test]
fn an_archive_unpacks_through_small_slices() {
    use std::io::Write;
    // Varied lines, so the gzip stays within the 200× expansion limit.
    let text: Vec<u8> = (0..3000u64)
        .flat_map(|i| format!("{i} {}\n", i * 7919 % 10007).into_bytes())
        .collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&text).unwrap();
    let packed = gz.finish().unwrap();
    let log = RefCell::new(Vec::new());
    let len = packed.len() as u64;
    let mut r = reader(packed, 300, &log);
    let mut unpacker = tracelogic_formats::input::Unpacker::new();
    unpacker.add_reader("run/t.txt.gz", len, &mut r).unwrap();
    let files = unpacker.finish();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].name, "t.txt");
    assert_eq!(files[0].bytes, text);
    assert!(log.borrow().iter().all(|(s, e)| e - s <= 300));
}
