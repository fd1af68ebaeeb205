//! Input sets from disk, with archives streamed from their files (native builds only; the web
//! app gets its files from the page).

use super::{archive_kind, InputFile, Unpacker};
use crate::{FormatError, NoProgress, Progress, ProgressSink};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Deepest folder nesting followed, so a symbolic-link loop ends with an error instead of
/// recursing forever.
const MAX_FOLDER_DEPTH: u32 = 32;

/// Read buffer between an archive on disk and its decompressor.
const FILE_BUFFER: usize = 1 << 20;

/// Read the files named on a command line into an input set, unpacking archives as they are read.
///
/// A file becomes one [`InputFile`] named by its file name. A folder contributes every file
/// below it, recursively, named by its path relative to that folder with `/` separators and
/// in sorted order (so results do not depend on the directory listing order). A file whose first
/// bytes say archive or compressed file (given directly or found in a folder) is read through a
/// buffered reader and unpacked by an [`Unpacker`], so only its members are held in memory, under
/// the limits of [`super::expand_archives`]; a folder shared by all names is stripped. A path that
/// does not exist or cannot be read, or a folder without files, gives an error naming it. A file
/// reached twice (the same folder given twice) is read once; two different files that would get
/// the same name are refused naming both paths.
pub fn read_paths(paths: &[PathBuf]) -> Result<Vec<InputFile>, FormatError> {
    read_paths_with_progress(paths, &mut NoProgress)
}

/// [`read_paths`], reporting progress in bytes read from disk (an archive's compressed bytes as
/// its members are unpacked) with the stage `reading NAME`, every few MB and once per file.
/// When `progress` returns false the read stops with a "cancelled" error naming the file.
pub fn read_paths_with_progress(
    paths: &[PathBuf],
    progress: &mut dyn ProgressSink,
) -> Result<Vec<InputFile>, FormatError> {
    let found = list_paths(paths)?;
    let sizes: Vec<u64> = found
        .iter()
        .map(|(_, path)| std::fs::metadata(path).map(|m| m.len()).unwrap_or(0))
        .collect();
    let total: u64 = sizes.iter().sum();
    let mut done = 0u64;
    let mut unpacker = Unpacker::new();
    for ((name, path), size) in found.into_iter().zip(sizes) {
        let start = Progress {
            stage: format!("reading {name}"),
            bytes_done: done,
            bytes_total: total,
        };
        if !progress.report(&start) {
            return Err(FormatError::cancelled(&name));
        }
        let mut file = File::open(&path).map_err(|e| io_error(&path, e))?;
        let len = file.metadata().map_err(|e| io_error(&path, e))?.len();
        let mut head = Vec::with_capacity(512);
        (&mut file)
            .take(512)
            .read_to_end(&mut head)
            .map_err(|e| io_error(&path, e))?;
        if archive_kind(&name, &head).is_some() {
            let mut reader = BufReader::with_capacity(FILE_BUFFER, file);
            std::io::Seek::rewind(&mut reader).map_err(|e| io_error(&path, e))?;
            let mut counted = Counted {
                inner: reader,
                position: 0,
                reported: 0,
                before: done,
                total,
                stage: &start.stage,
                progress: &mut *progress,
                cancelled: false,
            };
            let added = unpacker.add_reader(&name, len, &mut counted);
            if counted.cancelled {
                return Err(FormatError::cancelled(&name));
            }
            added?;
        } else {
            let mut bytes = head;
            if let Ok(extra) = usize::try_from(len.saturating_sub(bytes.len() as u64)) {
                bytes
                    .try_reserve_exact(extra)
                    .map_err(|_| FormatError::new(&name, format!("{len} bytes do not fit in this process's memory")))?;
            }
            file.read_to_end(&mut bytes).map_err(|e| io_error(&path, e))?;
            unpacker.add_file(InputFile::new(name, bytes))?;
        }
        done += size;
    }
    let end = Progress {
        stage: "read".into(),
        bytes_done: total,
        bytes_total: total,
    };
    if !progress.report(&end) {
        return Err(FormatError::cancelled("(input)"));
    }
    Ok(unpacker.finish())
}

/// Bytes between two progress reports while an archive streams from disk.
const REPORT_STEP: u64 = 4 << 20;

/// An archive's file on disk, counting the bytes the unpacker has read for progress; a
/// cancelled report fails the next read (and is told apart from a read error by `cancelled`).
struct Counted<'p, R> {
    inner: R,
    position: u64,
    reported: u64,
    before: u64,
    total: u64,
    stage: &'p str,
    progress: &'p mut dyn ProgressSink,
    cancelled: bool,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.position >= self.reported + REPORT_STEP {
            self.reported = self.position;
            let p = Progress {
                stage: self.stage.to_owned(),
                bytes_done: (self.before + self.position).min(self.total),
                bytes_total: self.total,
            };
            if !self.progress.report(&p) {
                self.cancelled = true;
            }
        }
        if self.cancelled {
            return Err(std::io::Error::other("cancelled"));
        }
        let n = self.inner.read(buf)?;
        self.position += n as u64;
        Ok(n)
    }
}

impl<R: Seek> Seek for Counted<'_, R> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.position = self.inner.seek(to)?;
        self.reported = self.reported.min(self.position);
        Ok(self.position)
    }
}

/// The files the paths name, as [`read_paths`] names them (a folder's files by their path inside
/// it, recursively, in sorted order), each file reached twice listed once; nothing is read
/// beyond what tells two files of one name apart.
pub fn list_paths(paths: &[PathBuf]) -> Result<Vec<(String, PathBuf)>, FormatError> {
    let mut found = Vec::new();
    // Each file's path with the given path made canonical, to tell the same file given twice.
    let mut identities = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if meta.is_dir() {
            let before = found.len();
            list_folder(path, "", 0, &mut found)?;
            if found.len() == before {
                return Err(FormatError::new(
                    &path.display().to_string(),
                    "the folder holds no files (a trace's folder holds its files)",
                ));
            }
            identities.extend(found[before..].iter().map(|(name, _)| canonical.join(name)));
        } else {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string());
            found.push((name.clone(), path.clone()));
            identities.push(canonical.clone());
            // A trace named by its main file alone: the files it names are its siblings.
            if let (Some(dir), Some(cdir)) = (path.parent(), canonical.parent()) {
                let before = found.len();
                add_siblings(dir, &name, &mut found)?;
                identities.extend(found[before..].iter().map(|(n, _)| cdir.join(n)));
            }
        }
    }
    let found = distinct_files(found, identities)?;
    Ok(found)
}

/// The files a trace's main file `name` in `dir` stands for, as a tool given that one file is
/// expected to read (`otf2-print traces.otf2`, `dumpi2ascii` per rank, Vampir, Pipit): beside an
/// OTF2 anchor `X.otf2`, its global definitions `X.def` and its folder `X/` of local definitions
/// and events; beside a DUMPI `X.meta`, its rank files `X-NNNN.bin`. Named relative to `dir`, as
/// if `dir` had been given. Nothing is added when the siblings are not there (the reader then
/// says what is missing).
fn add_siblings(dir: &Path, name: &str, found: &mut Vec<(String, PathBuf)>) -> Result<(), FormatError> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if let Some(stem) = name.strip_suffix(".otf2").filter(|s| !s.is_empty()) {
        let defs = dir.join(format!("{stem}.def"));
        let folder = dir.join(stem);
        if defs.is_file() {
            found.push((format!("{stem}.def"), defs));
            if folder.is_dir() {
                list_folder(&folder, &format!("{stem}/"), 0, found)?;
            }
        }
    } else if let Some(stem) = name.strip_suffix(".meta").filter(|s| !s.is_empty()) {
        let prefix = format!("{stem}-");
        let mut bins: Vec<String> = std::fs::read_dir(dir)
            .map_err(|e| io_error(dir, e))?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&prefix) && n.ends_with(".bin"))
            .collect();
        bins.sort_unstable();
        found.extend(bins.into_iter().map(|n| (n.clone(), dir.join(n))));
    }
    Ok(())
}

/// The files found, each file on disk once (the same folder given twice, or a folder and a file
/// inside it, read it once). Two different files that would take the same name (`a/x.bin` and
/// `b/x.bin` given as folders `a` and `b`) are refused naming both paths when their content
/// differs, as only one of them can belong to the trace; identical copies are kept for
/// [`super::drop_duplicates`] to read once with a warning.
///
/// `identities` holds each file's path below its given path made canonical (one `realpath` per
/// path given, not per file): links inside a folder are not followed, so a file reached through
/// one is read twice and then dropped as an identical copy.
fn distinct_files(
    found: Vec<(String, PathBuf)>,
    identities: Vec<PathBuf>,
) -> Result<Vec<(String, PathBuf)>, FormatError> {
    let mut seen_paths = HashSet::with_capacity(found.len());
    let mut by_name: HashMap<String, PathBuf> = HashMap::with_capacity(found.len());
    let mut out = Vec::with_capacity(found.len());
    for ((name, path), identity) in found.into_iter().zip(identities) {
        if !seen_paths.insert(identity) {
            continue;
        }
        if let Some(other) = by_name.get(&name) {
            if !same_content(other, &path)? {
                return Err(FormatError::new(
                    &path.display().to_string(),
                    format!(
                        "has the same name as {} (both are read as `{name}`) but different content: only one can \
                         belong to the trace; give each file once",
                        other.display()
                    ),
                ));
            }
        } else {
            by_name.insert(name.clone(), path.clone());
        }
        out.push((name, path));
    }
    Ok(out)
}

/// Whether two files on disk hold the same bytes, compared in blocks.
fn same_content(a: &Path, b: &Path) -> Result<bool, FormatError> {
    let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).map_err(|e| io_error(p, e));
    if len(a)? != len(b)? {
        return Ok(false);
    }
    let open = |p: &Path| {
        File::open(p)
            .map(|f| BufReader::with_capacity(1 << 16, f))
            .map_err(|e| io_error(p, e))
    };
    let (mut ra, mut rb) = (open(a)?, open(b)?);
    let (mut ba, mut bb) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = read_full(&mut ra, &mut ba).map_err(|e| io_error(a, e))?;
        let m = read_full(&mut rb, &mut bb).map_err(|e| io_error(b, e))?;
        if ba[..n] != bb[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Fill `buf` from `r` as far as it goes; fewer bytes only at the end of the file.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn list_folder(dir: &Path, prefix: &str, depth: u32, found: &mut Vec<(String, PathBuf)>) -> Result<(), FormatError> {
    if depth > MAX_FOLDER_DEPTH {
        return Err(FormatError::new(
            &dir.display().to_string(),
            format!("folders nest more than {MAX_FOLDER_DEPTH} levels deep (a link loop?)"),
        ));
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| io_error(dir, e))?
        .map(|e| e.map(|e| e.path()).map_err(|e| io_error(dir, e)))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for path in entries {
        let name = format!("{prefix}{}", path.file_name().unwrap_or_default().to_string_lossy());
        let meta = std::fs::metadata(&path).map_err(|e| io_error(&path, e))?;
        if meta.is_dir() {
            list_folder(&path, &format!("{name}/"), depth + 1, found)?;
        } else if meta.is_file() {
            found.push((name, path));
        }
    }
    Ok(())
}

fn io_error(path: &Path, e: std::io::Error) -> FormatError {
    let what = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or folder".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => format!("cannot read it: {e}"),
    };
    FormatError::new(&path.display().to_string(), what)
}
