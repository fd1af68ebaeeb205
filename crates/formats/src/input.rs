//! Input sets: files, archives, and format detection.
//!
//! A trace reaches tracelogic as a set of in-memory files: several per-rank files, the content of
//! a folder, or archives. [`expand_archives`] replaces every archive (tar, gzip, zstd, zip, in
//! any nesting) by its members, under limits that turn a decompression bomb into a clear error
//! instead of an out-of-memory abort; [`Unpacker`] does the same while reading each input as a
//! stream (a file on disk, a browser `File`), so compressed bytes are never held whole, and
//! [`read_paths`] uses it for files and folders on disk. [`detect`] then decides the format from
//! the files' content; file names only break ties.

use crate::FormatError;

#[cfg(not(target_arch = "wasm32"))]
mod paths;
mod stream;

#[cfg(not(target_arch = "wasm32"))]
pub use paths::{list_paths, read_paths, read_paths_with_progress};

/// True when a file named `name` whose first bytes are `head` (at least 512 when it is that
/// long) is an archive or a compressed file.
pub fn is_archive(name: &str, head: &[u8]) -> bool {
    archive_kind(name, head).is_some()
}
pub use stream::{ReadSeek, Unpacker};

/// One input file held in memory, named by its path relative to the input root (for an
/// archive, its path inside the archive; for a folder, its path inside the folder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputFile {
    /// Relative path with `/` separators, e.g. `traces/0.evt`.
    pub name: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
}

impl InputFile {
    /// A file from its name and content.
    pub fn new(name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> InputFile {
        InputFile {
            name: name.into(),
            bytes: bytes.into(),
        }
    }
}

/// The trace formats tracelogic reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// OTF2 archive: anchor `.otf2`, global `.def`, per-location `.evt` / `.def`.
    Otf2,
    /// SST DUMPI: `.meta` plus one `.bin` per rank.
    Dumpi,
    /// Paraver `.prv` (+ `.pcf`, `.row`).
    Paraver,
    /// Pipit's CSV export.
    PipitCsv,
    /// tracelogic's native text format (`docs/formats.md` of this repository).
    Text,
}

impl Format {
    /// Short name used in summaries and JSON (`otf2`, `dumpi`, `paraver`, `csv`, `text`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Otf2 => "otf2",
            Format::Dumpi => "dumpi",
            Format::Paraver => "paraver",
            Format::PipitCsv => "csv",
            Format::Text => "text",
        }
    }
}

/// Most bytes all archives of one input set may unpack to (2 GiB): the browser's 32-bit
/// address space cannot hold more, and no real trace archive comes close.
pub const MAX_UNPACKED_BYTES: u64 = 2 << 30;
/// Most bytes an archive may unpack to per byte of its own size. Trace data compresses about
/// 5–30×; a decompression bomb compresses about 1000×.
pub const MAX_EXPANSION_RATIO: u64 = 200;
/// Most members (files) all archives of one input set may hold together.
pub const MAX_MEMBERS: usize = 100_000;
/// Most levels of archives inside archives (a `.tar.gz` counts two: gzip, then tar).
pub const MAX_NESTING: u32 = 4;

/// The kind of archive a file is, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArchiveKind {
    Gzip,
    Zstd,
    Zip,
    Tar,
}

/// Recognise an archive from the first bytes of a file named `name` (`head` holds at least the
/// first 512 bytes when the file is that long).
fn archive_kind(name: &str, head: &[u8]) -> Option<ArchiveKind> {
    let b = head;
    if b.starts_with(&[0x1f, 0x8b]) {
        return Some(ArchiveKind::Gzip);
    }
    if b.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return Some(ArchiveKind::Zstd);
    }
    let lower = name.to_ascii_lowercase();
    // A zstd stream may open with a skippable frame (magic 0x184D2A5?, as pzstd writes); only
    // trusted when the name says zstd.
    if b.len() >= 8 && b[1..4] == [0x2a, 0x4d, 0x18] && b[0] & 0xf0 == 0x50 && is_zstd_name(&lower) {
        return Some(ArchiveKind::Zstd);
    }
    if b.starts_with(b"PK\x03\x04") || b.starts_with(b"PK\x05\x06") {
        return Some(ArchiveKind::Zip);
    }
    if b.len() >= 512 && &b[257..262] == b"ustar" {
        return Some(ArchiveKind::Tar);
    }
    // Old (v7) tar files carry no magic; accept them only when the name says tar and the
    // header checksum is right.
    if b.len() >= 512 && lower.ends_with(".tar") && tar_checksum_ok(&b[..512]) {
        return Some(ArchiveKind::Tar);
    }
    None
}

fn is_zstd_name(lower: &str) -> bool {
    lower.ends_with(".zst") || lower.ends_with(".tzst") || lower.ends_with(".zstd")
}

fn tar_checksum_ok(header: &[u8]) -> bool {
    let field = &header[148..156];
    let text: String = field
        .iter()
        .take_while(|&&c| c != 0 && c != b' ')
        .map(|&c| c as char)
        .collect();
    let Ok(stored) = u32::from_str_radix(text.trim(), 8) else {
        return false;
    };
    let sum: u32 = header
        .iter()
        .enumerate()
        .map(|(i, &c)| if (148..156).contains(&i) { b' ' as u32 } else { c as u32 })
        .sum();
    sum == stored
}

/// Replace every archive in `files` by its members (recursively), leaving other files as they are.
///
/// Archives are recognised by their first bytes, never by name: gzip (`1f 8b`) and zstd
/// (`28 b5 2f fd`; a single compressed file, named like the archive without `.gz`/`.zst`, `.tgz`
/// and `.tzst` becoming `.tar`, else for gzip by the name stored in its header, else
/// `NAME.unpacked`), zip (`PK\x03\x04`, stored or deflate members) and tar (`ustar` at byte 257).
/// A member is named by the archive's folder joined with its path inside the archive. Folders,
/// links, `__MACOSX/` and `.DS_Store` entries are dropped. Finally a folder that encloses every
/// file (`run1/` in `run1/traces.otf2`, `run1/traces.def`...) is stripped from all names, so a
/// zipped folder reads like the folder's content.
///
/// Limits, checked while unpacking and never after allocating: each top-level archive may unpack
/// to at most [`MAX_EXPANSION_RATIO`] times its own size, all of them together to at most
/// [`MAX_UNPACKED_BYTES`], with at most [`MAX_MEMBERS`] members and [`MAX_NESTING`] levels of
/// archives inside archives (details in [`Unpacker`], which this wraps: each archive is unpacked
/// as a stream over its bytes). Crossing a limit, or a corrupt archive, gives a [`FormatError`]
/// naming the archive (`outer.zip > inner.tar` for an archive inside another).
pub fn expand_archives(files: Vec<InputFile>) -> Result<Vec<InputFile>, FormatError> {
    let mut unpacker = Unpacker::new();
    for file in files {
        unpacker.add_file(file)?;
    }
    Ok(unpacker.finish())
}

/// Drop the files given twice, returning the others and a warning per name dropped.
///
/// Two inputs of one name (the same folder given twice, a folder and a file inside it, two
/// archives holding the same member) would otherwise leave it to the argument order which one a
/// reader uses. Identical copies are read once, with a warning. Copies that differ are refused
/// when the file is trace data (a DUMPI rank file of another run renamed into the set gives a
/// different answer depending on the order): the error names the file, both sizes and the first
/// byte where they differ. Files no reader recognises (`README.txt`) keep their first copy.
pub fn drop_duplicates(files: Vec<InputFile>) -> Result<(Vec<InputFile>, Vec<String>), FormatError> {
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::with_capacity(files.len());
    let mut drop = vec![false; files.len()];
    let mut copies: Vec<(usize, u32)> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let Some(&j) = first.get(f.name.as_str()) else {
            first.insert(&f.name, i);
            continue;
        };
        let kept = &files[j];
        drop[i] = true;
        if kept.bytes == f.bytes {
            match copies.iter_mut().find(|(k, _)| *k == j) {
                Some((_, n)) => *n += 1,
                None => copies.push((j, 1)),
            }
        } else if classify(f) != Evidence::Unknown || classify(kept) != Evidence::Unknown {
            let at = kept
                .bytes
                .iter()
                .zip(&f.bytes)
                .position(|(a, b)| a != b)
                .unwrap_or(kept.bytes.len().min(f.bytes.len()));
            return Err(FormatError::new(
                &f.name,
                format!(
                    "two different files of this name were given ({} and {} bytes, first differing at byte {at}): \
                     they cannot both be this trace's file; give each file once",
                    kept.bytes.len(),
                    f.bytes.len()
                ),
            ));
        }
    }
    let warnings = copies
        .iter()
        .map(|&(j, n)| {
            let times = if n == 1 {
                "twice".to_owned()
            } else {
                format!("{} times", n + 1)
            };
            format!("{} was given {times} (identical content); read once", files[j].name)
        })
        .collect();
    if copies.is_empty() && !drop.contains(&true) {
        return Ok((files, warnings));
    }
    let kept = files
        .into_iter()
        .zip(drop)
        .filter_map(|(f, d)| (!d).then_some(f))
        .collect();
    Ok((kept, warnings))
}

/// Normalise a member path to `a/b/c` (no `.`, `..`, leading `/` or `\`); `None` for entries
/// that are not trace data (macOS resource forks and folder metadata).
fn clean_member_name(name: &str) -> Option<String> {
    let parts: Vec<&str> = name
        .split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .collect();
    let last = *parts.last()?;
    if parts.first() == Some(&"__MACOSX") || last == ".DS_Store" || last.starts_with("._") {
        return None;
    }
    Some(parts.join("/"))
}

/// Remove leading folders shared by every file name.
fn strip_common_folder(files: &mut [InputFile]) {
    loop {
        let Some(first) = files.first() else { return };
        let Some(slash) = first.name.find('/') else { return };
        let prefix = first.name[..=slash].to_owned();
        if !files.iter().all(|f| f.name.starts_with(&prefix)) {
            return;
        }
        for f in files.iter_mut() {
            f.name.drain(..prefix.len());
        }
    }
}

/// What the content of one file says about its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Evidence {
    /// The file alone identifies the format (an OTF2 anchor, a DUMPI `.bin` or `.meta`, a
    /// Paraver `.prv`, a Pipit CSV, a native text trace).
    Main(Format),
    /// A companion file (OTF2 `.evt`/`.def`, Paraver `.pcf`/`.row`): it decides the format
    /// only when no main file does.
    Companion(Format),
    /// Nothing recognisable.
    Unknown,
}

fn text_start(bytes: &[u8]) -> &[u8] {
    let b = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let start = b.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(b.len());
    &b[start..]
}

fn first_line(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&c| c == b'\n').unwrap_or(bytes.len());
    let line = &bytes[..end];
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// True when `head` (a file's name and first bytes) is a per-rank event file whose format its
/// first bytes alone tell, whatever follows: a DUMPI `.bin` (its magic) or an OTF2 `.evt`
/// (a chunk header). [`detect`] says the same of the head as of the whole file.
#[cfg(feature = "distributed")]
pub(crate) fn is_rank_file(head: &InputFile) -> bool {
    let lower = head.name.to_ascii_lowercase();
    match classify(head) {
        Evidence::Main(Format::Dumpi) => head.bytes.starts_with(b"\xff\xaa\xddDUMPI"),
        Evidence::Companion(Format::Otf2) => lower.ends_with(".evt"),
        _ => false,
    }
}

fn classify(file: &InputFile) -> Evidence {
    let b = &file.bytes[..];
    let lower = file.name.to_ascii_lowercase();
    if b.len() >= 7 && b[0] == 0x03 && (b[1] == 0x42 || b[1] == 0x23) {
        if &b[2..7] == b"OTF2\0" {
            return Evidence::Main(Format::Otf2);
        }
        // Chunked OTF2 files start with the 18-byte chunk header 03 <endianness> u64 u64; the
        // name breaks the tie with any other binary that happens to start alike.
        if b.len() >= 18 && (lower.ends_with(".evt") || lower.ends_with(".def")) {
            return Evidence::Companion(Format::Otf2);
        }
    }
    if b.starts_with(b"\xff\xaa\xddDUMPI") {
        return Evidence::Main(Format::Dumpi);
    }
    let t = text_start(b);
    let head = first_line(t);
    if head.starts_with(b"#tracelogic-text") {
        return Evidence::Main(Format::Text);
    }
    if head.starts_with(b"#Paraver") {
        return Evidence::Main(Format::Paraver);
    }
    if head == b"new format" && first_line(text_start(&t[head.len()..])).starts_with(b"#Paraver") {
        return Evidence::Main(Format::Paraver);
    }
    if head.starts_with(b"Timestamp (") || head.starts_with(b"\"Timestamp (") {
        return Evidence::Main(Format::PipitCsv);
    }
    let sample = &t[..t.len().min(4096)];
    if is_dumpi_meta(sample) {
        return Evidence::Main(Format::Dumpi);
    }
    if head.starts_with(b"LEVEL ") && (lower.ends_with(".row") || head.windows(6).any(|w| w == b" SIZE ")) {
        return Evidence::Companion(Format::Paraver);
    }
    if head.starts_with(b"DEFAULT_OPTIONS")
        || head.starts_with(b"DEFAULT_SEMANTIC")
        || head.starts_with(b"STATES")
        || (head.starts_with(b"EVENT_TYPE") && lower.ends_with(".pcf"))
    {
        return Evidence::Companion(Format::Paraver);
    }
    Evidence::Unknown
}

/// A DUMPI metafile is `key=value` lines including `numprocs` and `fileprefix`.
fn is_dumpi_meta(sample: &[u8]) -> bool {
    let mut numprocs = false;
    let mut prefix = false;
    for line in sample.split(|&c| c == b'\n') {
        numprocs |= line.starts_with(b"numprocs=");
        prefix |= line.starts_with(b"fileprefix=");
    }
    numprocs && prefix
}

/// The first bytes of a file, printable, for "what was found" messages.
fn describe_start(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "the file is empty".into();
    }
    let n = bytes.len().min(16);
    let escaped: String = bytes[..n]
        .iter()
        .flat_map(|&c| std::ascii::escape_default(c))
        .map(char::from)
        .collect();
    let hex: Vec<String> = bytes[..n].iter().map(|c| format!("{c:02x}")).collect();
    format!("it starts with \"{escaped}\" ({})", hex.join(" "))
}

/// Decide which format a set of files is in, from content first.
///
/// Each file is classified by its first bytes: OTF2 anchor (`03 42|23 "OTF2\0"`), DUMPI
/// `.bin` (`ff aa dd "DUMPI"`) or `.meta` (`numprocs=` and `fileprefix=` lines), Paraver
/// (`#Paraver` first line), Pipit CSV (`Timestamp (` header), native text
/// (`#tracelogic-text`). Companion files (OTF2 chunk files named `.evt`/`.def`, Paraver
/// `.pcf`/`.row`) decide only when no main file is present. Files nothing recognises
/// (`MANIFEST.md`, `scorep.cfg`...) are ignored when some other file identifies the format.
///
/// Errors: files of two formats (naming one file of each), or no recognisable file (naming
/// the first file and its first bytes).
pub fn detect(files: &[InputFile]) -> Result<Format, FormatError> {
    let mut main: Vec<(Format, &str)> = Vec::new();
    let mut companion: Vec<(Format, &str)> = Vec::new();
    for f in files {
        match classify(f) {
            Evidence::Main(fmt) => {
                if !main.iter().any(|(m, _)| *m == fmt) {
                    main.push((fmt, &f.name));
                }
            }
            Evidence::Companion(fmt) => {
                if !companion.iter().any(|(m, _)| *m == fmt) {
                    companion.push((fmt, &f.name));
                }
            }
            Evidence::Unknown => {}
        }
    }
    let found = if main.is_empty() { &companion } else { &main };
    match found.as_slice() {
        [(fmt, _)] => Ok(*fmt),
        [] => {
            let Some(first) = files.first() else {
                return Err(FormatError::new("(no input)", "no files were given"));
            };
            let others = if files.len() > 1 {
                match files.len() - 1 {
                    1 => " (nor is the other file)".to_owned(),
                    n => format!(" (nor any of the other {n} files)"),
                }
            } else {
                String::new()
            };
            Err(FormatError::at_offset(
                &first.name,
                0,
                format!(
                    "not a trace format tracelogic reads (OTF2, SST DUMPI, Paraver, Pipit CSV, tracelogic text){others}: {}",
                    describe_start(&first.bytes)
                ),
            ))
        }
        [(a, fa), (b, fb), ..] => Err(FormatError::new(
            fb,
            format!(
                "the input mixes trace formats: `{fa}` is {} but `{fb}` is {}; give the files of one trace only",
                a.name(),
                b.name()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_names_are_normalised() {
        assert_eq!(clean_member_name("./run1//a.evt").as_deref(), Some("run1/a.evt"));
        assert_eq!(clean_member_name("/../x/y").as_deref(), Some("x/y"));
        assert_eq!(clean_member_name("__MACOSX/run1/._a"), None);
    }

    #[test]
    fn common_folder_is_stripped_only_when_shared() {
        let mut files = vec![InputFile::new("a/b/x", ""), InputFile::new("a/b/y/z", "")];
        strip_common_folder(&mut files);
        assert_eq!(files[0].name, "x");
        assert_eq!(files[1].name, "y/z");
        let mut files = vec![InputFile::new("a/x", ""), InputFile::new("b/y", "")];
        strip_common_folder(&mut files);
        assert_eq!(files[0].name, "a/x");
    }
}
