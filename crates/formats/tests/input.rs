//! Input sets: archive expansion with its limits, and format detection from content.

mod common;

use common::{gzip, tar, zip};
use flate2::Compression;
use std::io::Write;
use tracelogic_formats::{detect, expand_archives, Format, InputFile};

const PARAVER_HEAD: &[u8] = b"#Paraver (01/01/2024 at 10:00):1000_ns:0:1:2(1:1,1:1)\n";
const TEXT_HEAD: &[u8] = b"#tracelogic-text 1\nranks 1\n";
const CSV_HEAD: &[u8] = b"Timestamp (ns),Event Type,Name,Process\n0,Enter,main,0\n";

fn names(files: &[InputFile]) -> Vec<&str> {
    files.iter().map(|f| f.name.as_str()).collect()
}

#[test]
fn tar_gz_of_a_folder_reads_like_the_folder() {
    let archive = gzip(&tar(&[
        ("run1/trace.prv", PARAVER_HEAD),
        ("run1/trace.pcf", b"DEFAULT_OPTIONS\n"),
        ("run1/sub/notes.txt", b"hello"),
    ]));
    let files = expand_archives(vec![InputFile::new("run1.tar.gz", archive)]).unwrap();
    assert_eq!(names(&files), ["trace.prv", "trace.pcf", "sub/notes.txt"]);
    assert_eq!(files[0].bytes, PARAVER_HEAD);
    assert_eq!(detect(&files).unwrap(), Format::Paraver);
}

#[test]
fn archives_are_recognised_by_content_not_name() {
    let archive = zip(&[("a/t.txt", TEXT_HEAD)]);
    let files = expand_archives(vec![InputFile::new("upload.bin", archive)]).unwrap();
    assert_eq!(names(&files), ["t.txt"]);
    let plain = expand_archives(vec![InputFile::new("fake.zip", TEXT_HEAD)]).unwrap();
    assert_eq!(
        plain[0].bytes, TEXT_HEAD,
        "a file named .zip that is not one stays as it is"
    );
}

#[test]
fn nested_archives_unpack_recursively_and_keep_their_folder() {
    let inner = gzip(&tar(&[("x.csv", CSV_HEAD)]));
    let outer = zip(&[("data/inner.tgz", &inner[..]), ("data/readme.md", b"notes")]);
    let files = expand_archives(vec![InputFile::new("all.zip", outer)]).unwrap();
    assert_eq!(names(&files), ["x.csv", "readme.md"]);
    assert_eq!(files[0].bytes, CSV_HEAD);
    assert_eq!(detect(&files).unwrap(), Format::PipitCsv);
}

#[test]
fn single_gz_file_loses_its_suffix() {
    let files = expand_archives(vec![InputFile::new("dir/trace.prv.gz", gzip(PARAVER_HEAD))]).unwrap();
    assert_eq!(names(&files), ["trace.prv"]);
    assert_eq!(files[0].bytes, PARAVER_HEAD);
}

#[test]
fn gz_without_suffix_takes_the_name_stored_in_its_header() {
    let mut enc = flate2::GzBuilder::new()
        .filename("trace.prv")
        .write(Vec::new(), Compression::default());
    enc.write_all(PARAVER_HEAD).unwrap();
    let files = expand_archives(vec![InputFile::new("upload", enc.finish().unwrap())]).unwrap();
    assert_eq!(names(&files), ["trace.prv"]);
    let files = expand_archives(vec![InputFile::new("blob", gzip(PARAVER_HEAD))]).unwrap();
    assert_eq!(names(&files), ["blob.unpacked"]);
}

#[test]
fn macos_metadata_entries_are_dropped() {
    let archive = zip(&[
        ("t.txt", TEXT_HEAD),
        ("__MACOSX/._t.txt", b"junk"),
        (".DS_Store", b"junk"),
    ]);
    let files = expand_archives(vec![InputFile::new("a.zip", archive)]).unwrap();
    assert_eq!(names(&files), ["t.txt"]);
}

#[test]
fn zip_bomb_is_refused_with_a_clear_error() {
    let zeros = vec![0u8; 30 << 20];
    let bomb = zip(&[("zeros.bin", &zeros[..])]);
    assert!(
        bomb.len() < (30 << 20) / 200,
        "the test bomb must compress beyond the ratio limit"
    );
    let err = expand_archives(vec![InputFile::new("bomb.zip", bomb)]).unwrap_err();
    assert_eq!(err.file, "bomb.zip");
    assert!(err.message.contains("decompression bomb"), "{err}");
}

#[test]
fn gzip_bomb_is_refused_with_a_clear_error() {
    let bomb = gzip(&vec![0u8; 30 << 20]);
    let err = expand_archives(vec![InputFile::new("bomb.gz", bomb)]).unwrap_err();
    assert_eq!(err.file, "bomb.gz");
    assert!(err.message.contains("200 times"), "{err}");
}

#[test]
fn deep_nesting_is_refused() {
    let mut bytes = TEXT_HEAD.to_vec();
    for _ in 0..6 {
        bytes = gzip(&bytes);
    }
    let err = expand_archives(vec![InputFile::new("deep.gz", bytes)]).unwrap_err();
    assert!(err.message.contains("nested"), "{err}");
}

#[test]
fn too_many_members_are_refused() {
    let members: Vec<(String, &[u8])> = (0..100_001).map(|i| (format!("f{i}"), &b""[..])).collect();
    let refs: Vec<(&str, &[u8])> = members.iter().map(|(n, b)| (n.as_str(), *b)).collect();
    let archive = gzip(&tar(&refs));
    let err = expand_archives(vec![InputFile::new("many.tar.gz", archive)]).unwrap_err();
    assert_eq!(err.file, "many.tar.gz > many.tar");
    assert!(err.message.contains("more than 100000 files"), "{err}");
}

#[test]
fn truncated_archives_give_errors_naming_them() {
    let gz = gzip(&tar(&[("t.txt", TEXT_HEAD)]));
    let err = expand_archives(vec![InputFile::new("cut.tar.gz", &gz[..gz.len() / 2])]).unwrap_err();
    assert_eq!(err.file, "cut.tar.gz");

    let z = zip(&[("t.txt", TEXT_HEAD)]);
    let err = expand_archives(vec![InputFile::new("cut.zip", &z[..z.len() - 10])]).unwrap_err();
    assert_eq!(err.file, "cut.zip");
    assert!(err.message.contains("zip"), "{err}");

    let t = tar(&[("t.txt", &[b'x'; 5000][..])]);
    let err = expand_archives(vec![InputFile::new("cut.tar", &t[..1024])]).unwrap_err();
    assert_eq!(err.file, "cut.tar");
}

#[test]
fn detects_each_format_from_content() {
    let otf2_anchor = [&[0x03u8, 0x42][..], b"OTF2\0\x03\x02"].concat();
    let cases: Vec<(Vec<InputFile>, Format)> = vec![
        (
            vec![
                InputFile::new("MANIFEST.md", "# Score-P"),
                InputFile::new("traces.otf2", otf2_anchor.clone()),
                InputFile::new("traces/0.evt", [&[0x03u8, 0x42][..], &[0; 16]].concat()),
            ],
            Format::Otf2,
        ),
        (
            vec![
                InputFile::new("x.meta", "hostname=h\nnumprocs=2\nfileprefix=x\n"),
                InputFile::new("x-0000.bin", &b"\xff\xaa\xddDUMPI\0\0"[..]),
            ],
            Format::Dumpi,
        ),
        (vec![InputFile::new("noext", PARAVER_HEAD)], Format::Paraver),
        (
            vec![InputFile::new("t.prv", [&b"new format\n"[..], PARAVER_HEAD].concat())],
            Format::Paraver,
        ),
        (vec![InputFile::new("t.csv", CSV_HEAD)], Format::PipitCsv),
        (
            vec![InputFile::new("t", [&b"\xef\xbb\xbf"[..], TEXT_HEAD].concat())],
            Format::Text,
        ),
        (
            vec![InputFile::new("t.pcf", "DEFAULT_OPTIONS\n\nLEVEL THREAD\n")],
            Format::Paraver,
        ),
    ];
    for (files, want) in cases {
        assert_eq!(detect(&files).unwrap(), want, "{:?}", names(&files));
    }
}

#[test]
fn detects_the_real_samples() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let lulesh = format!("{dir}/paraver/profet-paraver-lulesh");
    let files: Vec<InputFile> = std::fs::read_dir(&lulesh)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            InputFile::new(p.file_name().unwrap().to_string_lossy(), std::fs::read(&p).unwrap())
        })
        .collect();
    assert_eq!(detect(&files).unwrap(), Format::Paraver);
    for csv in ["foo-bar.csv", "ping-pong-csv.csv"] {
        let f = InputFile::new(csv, std::fs::read(format!("{dir}/csv/{csv}")).unwrap());
        assert_eq!(detect(&[f]).unwrap(), Format::PipitCsv);
    }
}

#[test]
fn mixed_formats_name_both_files() {
    let files = vec![
        InputFile::new("run.meta", "numprocs=1\nfileprefix=run\n"),
        InputFile::new("run-0000.bin", &b"\xff\xaa\xddDUMPI"[..]),
        InputFile::new("other.prv", PARAVER_HEAD),
    ];
    let err = detect(&files).unwrap_err();
    assert!(
        err.message.contains("run.meta") && err.message.contains("other.prv"),
        "{err}"
    );
    assert!(
        err.message.contains("dumpi") && err.message.contains("paraver"),
        "{err}"
    );
}

#[test]
fn unknown_content_names_the_file_and_its_first_bytes() {
    let err = detect(&[InputFile::new("photo.jpg", &b"\xff\xd8\xff\xe0JFIF"[..])]).unwrap_err();
    assert_eq!(err.file, "photo.jpg");
    assert!(err.message.contains("ff d8 ff e0"), "{err}");
    let err = detect(&[InputFile::new("empty.prv", "")]).unwrap_err();
    assert!(err.message.contains("empty"), "{err}");
}

#[test]
fn a_name_alone_does_not_make_a_format() {
    let err = detect(&[InputFile::new("trace.prv", "hello world\n")]).unwrap_err();
    assert_eq!(err.file, "trace.prv");
    assert!(err.message.contains("hello world"), "{err}");
}

#[cfg(not(target_arch = "wasm32"))]
mod from_disk {
    use super::*;
    use std::path::PathBuf;
    use tracelogic_formats::fs::load_paths;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tracelogic-input-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn folders_are_read_recursively_with_relative_names() {
        let dir = scratch("folder");
        std::fs::create_dir_all(dir.join("b/c")).unwrap();
        std::fs::write(dir.join("a.prv"), PARAVER_HEAD).unwrap();
        std::fs::write(dir.join("b/c/d.pcf"), "DEFAULT_OPTIONS\n").unwrap();
        std::fs::write(
            dir.join("b/z.tar.gz"),
            gzip(&tar(&[("in/x.row", b"LEVEL NODE SIZE 0\n")])),
        )
        .unwrap();
        let files = load_paths(std::slice::from_ref(&dir)).unwrap();
        assert_eq!(names(&files), ["a.prv", "b/c/d.pcf", "b/in/x.row"]);
        assert_eq!(detect(&files).unwrap(), Format::Paraver);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn single_files_and_archives_are_loaded() {
        let dir = scratch("files");
        std::fs::write(dir.join("t.txt"), TEXT_HEAD).unwrap();
        std::fs::write(dir.join("pack.zip"), zip(&[("top/u.txt", TEXT_HEAD)])).unwrap();
        let files = load_paths(&[dir.join("t.txt"), dir.join("pack.zip")]).unwrap();
        assert_eq!(names(&files), ["t.txt", "top/u.txt"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_path_is_named() {
        let missing = std::env::temp_dir().join("tracelogic-surely-missing/trace.prv");
        let err = load_paths(std::slice::from_ref(&missing)).unwrap_err();
        assert_eq!(err.file, missing.display().to_string());
        assert!(err.message.contains("no such file"), "{err}");
    }
}

fn data(path: &str) -> InputFile {
    let full = format!("{}/tests/data/{path}", env!("CARGO_MANIFEST_DIR"));
    InputFile::new(path.rsplit('/').next().unwrap(), std::fs::read(full).unwrap())
}

#[test]
fn zip_written_by_python_reads_like_the_plain_csv() {
    let from_zip = tracelogic_formats::read_trace(vec![data("archives/pingpong-csv.zip")]).unwrap();
    let plain = tracelogic_formats::read_trace(vec![data("csv/ping-pong-csv.csv")]).unwrap();
    assert_eq!(
        serde_json::to_value(&from_zip).unwrap(),
        serde_json::to_value(&plain).unwrap()
    );
}

#[test]
fn tar_gz_written_by_gnu_tar_reads_like_the_folder() {
    let from_tar = tracelogic_formats::read_trace(vec![data("archives/lulesh-paraver.tar.gz")]).unwrap();
    let dir = "paraver/profet-paraver-lulesh";
    let plain = tracelogic_formats::read_trace(vec![
        data(&format!("{dir}/lulesh_7+1_with_uncores_sockets1+2.chop8.prv")),
        data(&format!("{dir}/lulesh_7+1_with_uncores_sockets1+2.chop8.pcf")),
        data(&format!("{dir}/lulesh_7+1_with_uncores_sockets1+2.chop8.row")),
    ])
    .unwrap();
    assert_eq!(from_tar.num_ranks(), 8);
    assert_eq!(
        serde_json::to_value(&from_tar).unwrap(),
        serde_json::to_value(&plain).unwrap()
    );
}

#[test]
fn the_tutorial_text_file_reads() {
    let t = tracelogic_formats::read_trace(vec![data("text/ping-pong.txt")]).unwrap();
    assert_eq!((t.num_ranks(), t.num_calls()), (2, 10));
}
