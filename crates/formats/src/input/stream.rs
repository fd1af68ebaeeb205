//! Archives and compressed files unpacked as streams.
//!
//! An [`Unpacker`] consumes each input through [`std::io::Read`]: gzip through flate2's streaming
//! decoder, zstd through ruzstd's frame decoder, tar through the `tar` crate's entry iterator,
//! zip through `Read + Seek` (the central directory sits at the end). Only the files the readers
//! need (the leaves) are held in memory; the compressed input and the intermediate streams (the
//! tar inside a `.tar.gz`) pass through in small buffers. The whole-bytes API
//! ([`super::expand_archives`]) is a thin wrapper over the same code.

use super::{archive_kind, clean_member_name, strip_common_folder, ArchiveKind, InputFile};
use super::{MAX_EXPANSION_RATIO, MAX_MEMBERS, MAX_NESTING, MAX_UNPACKED_BYTES};
use crate::FormatError;
use flate2::read::MultiGzDecoder;
use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
use std::cell::Cell;
use std::io::{self, BufRead, Cursor, Read, Seek, SeekFrom};

/// A source that can be read and repositioned: a file on disk, a browser `File`, bytes in memory.
/// Zip archives need it (their index is at the end); every other kind is read front to back.
pub trait ReadSeek: Read + Seek {}

impl<T: Read + Seek + ?Sized> ReadSeek for T {}

/// Why the cap is what it is, when the archive's size sets it.
const RATIO_REASON: &str = "200 times the archive's size";

/// Bytes looked at to recognise an archive: one tar header block.
const HEAD_BYTES: usize = 512;

/// Buffer between a zstd decoder and its source (the decoder reads each block header separately).
const ZSTD_INPUT_BUFFER: usize = 64 << 10;

/// Replaces archives by their members as they are streamed in, under the limits of
/// [`super::expand_archives`], and collects every resulting file.
///
/// Limits per top-level input of `size` bytes: the files kept may total at most
/// [`MAX_EXPANSION_RATIO`] × `size`, and so may the bytes the decompressors (gzip, zstd, zip
/// members) produce, counted as they stream through, so a bomb is refused after at most that many
/// bytes and never allocated. Over all inputs both counts stay under [`MAX_UNPACKED_BYTES`], with
/// at most [`MAX_MEMBERS`] archive members and [`MAX_NESTING`] levels of archives inside archives.
/// Member sizes recorded in tar and zip headers are checked before their bytes are read.
pub struct Unpacker {
    files: Vec<InputFile>,
    /// What the limit for all archives ([`MAX_UNPACKED_BYTES`] or lower) still allows.
    total_left: u64,
    members_left: usize,
    /// Whether the last error was that limit being crossed.
    limit_reached: bool,
}

impl Default for Unpacker {
    fn default() -> Self {
        Unpacker::new()
    }
}

impl Unpacker {
    /// An unpacker with the full limits and no file yet.
    pub fn new() -> Unpacker {
        Unpacker::with_limit(MAX_UNPACKED_BYTES)
    }

    /// An unpacker whose archives may unpack to at most `limit` bytes together (at most
    /// [`MAX_UNPACKED_BYTES`]): the web worker stops at its own input limit instead of holding
    /// twice that before refusing. [`Unpacker::limit_reached`] then tells that limit's error apart.
    pub fn with_limit(limit: u64) -> Unpacker {
        Unpacker {
            files: Vec::new(),
            total_left: limit.min(MAX_UNPACKED_BYTES),
            members_left: MAX_MEMBERS,
            limit_reached: false,
        }
    }

    /// True when the last error came from the limit for all archives together (not from the
    /// ratio to one archive's size, a corrupt archive or the source), so a caller can word it as
    /// its own size limit.
    pub fn limit_reached(&self) -> bool {
        self.limit_reached
    }

    /// Add a file already in memory: kept as it is unless its first bytes say archive, in which
    /// case its members are added instead.
    pub fn add_file(&mut self, file: InputFile) -> Result<(), FormatError> {
        if archive_kind(&file.name, &file.bytes[..file.bytes.len().min(HEAD_BYTES)]).is_none() {
            self.files.push(file);
            return Ok(());
        }
        let len = file.bytes.len() as u64;
        self.add_reader(&file.name, len, &mut Cursor::new(file.bytes))
    }

    /// Add a file of `len` bytes read from `reader` (positioned at its start): an archive or
    /// compressed file is unpacked as it is read, anything else is read whole.
    ///
    /// Errors name the file (`outer.tar.gz > inner.zip` for an archive inside another), and say
    /// which limit was crossed, which member could not be unpacked (at which compressed byte), or
    /// what the source reported. A source that fails with an [`io::Error`] wrapping
    /// [`FormatError::cancelled`] cancels the read: the result is then a cancelled error.
    pub fn add_reader(&mut self, name: &str, len: u64, reader: &mut dyn ReadSeek) -> Result<(), FormatError> {
        let ratio_cap = len.saturating_mul(MAX_EXPANSION_RATIO);
        let (cap, cap_reason) = if ratio_cap < self.total_left {
            (ratio_cap, RATIO_REASON)
        } else {
            (self.total_left, "the limit for all archives of one input")
        };
        let budget = Budget {
            kept_left: Cell::new(cap),
            inflated_left: Cell::new(cap),
            members_left: Cell::new(self.members_left),
            cap,
            cap_reason,
            cap_hit: Cell::new(false),
        };
        let mut source = Tracked {
            inner: reader,
            read: 0,
            error: None,
            cancelled: false,
        };
        let mut walk = Walk {
            budget: &budget,
            out: &mut self.files,
        };
        let result = walk.unpack(
            name,
            name,
            Source::Seekable {
                reader: &mut source,
                len,
            },
            0,
            Some(len),
        );
        if let Err(mut e) = result {
            self.limit_reached = budget.cap_hit.get() && cap_reason != RATIO_REASON;
            if source.cancelled {
                return Err(FormatError::cancelled(name));
            }
            if let Some(message) = source.error.take() {
                return Err(FormatError::at_offset(
                    name,
                    source.read,
                    format!("cannot read it: {message}"),
                ));
            }
            if e.file != name {
                e.file = format!("{name} > {}", e.file);
            }
            return Err(e);
        }
        let used = (cap - budget.kept_left.get()).max(cap - budget.inflated_left.get());
        self.total_left -= used;
        self.members_left = budget.members_left.get();
        Ok(())
    }

    /// The files collected, with a folder shared by every name stripped (a zipped folder reads
    /// like the folder's content).
    pub fn finish(mut self) -> Vec<InputFile> {
        strip_common_folder(&mut self.files);
        self.files
    }
}

/// What remains of the limits while one top-level input is unpacked. Cells, because the
/// decompressors' meters and the members being read below them charge the same budget.
struct Budget {
    /// Bytes the kept files may still take.
    kept_left: Cell<u64>,
    /// Bytes the decompressors may still produce.
    inflated_left: Cell<u64>,
    members_left: Cell<usize>,
    /// The cap that applies, for the error message.
    cap: u64,
    cap_reason: &'static str,
    /// Whether the cap was crossed.
    cap_hit: Cell<bool>,
}

impl Budget {
    fn exceeded(&self, archive: &str) -> FormatError {
        self.cap_hit.set(true);
        FormatError::new(
            archive,
            format!(
                "archive unpacks to more than {} bytes ({}); refusing to unpack it (possible decompression bomb)",
                self.cap, self.cap_reason
            ),
        )
    }

    fn take_member(&self, archive: &str) -> Result<(), FormatError> {
        let left = self.members_left.get();
        if left == 0 {
            return Err(FormatError::new(
                archive,
                format!("archives hold more than {MAX_MEMBERS} files; refusing to unpack them"),
            ));
        }
        self.members_left.set(left - 1);
        Ok(())
    }

    /// Charge `n` decompressed bytes; false when that crosses the cap.
    fn inflate(&self, n: usize) -> bool {
        let left = self.inflated_left.get();
        match left.checked_sub(n as u64) {
            Some(rest) => {
                self.inflated_left.set(rest);
                true
            }
            None => false,
        }
    }

    /// Read member `member` of `archive` to its end and keep it, charging its bytes; a size
    /// known from the archive's header is checked before any byte is read, and reserved exactly.
    fn keep(
        &self,
        reader: &mut dyn Read,
        size: Option<u64>,
        archive: &str,
        member: &str,
    ) -> Result<Vec<u8>, FormatError> {
        let left = self.kept_left.get();
        let mut out = Vec::new();
        if let Some(size) = size {
            if size > left {
                return Err(self.exceeded(archive));
            }
            reserve(&mut out, size, archive, member)?;
        }
        reader
            .take(left.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|e| member_error(archive, member, &e))?;
        if out.len() as u64 > left {
            return Err(self.exceeded(archive));
        }
        self.kept_left.set(left - out.len() as u64);
        Ok(out)
    }
}

fn member_error(archive: &str, member: &str, e: &io::Error) -> FormatError {
    FormatError::new(archive, format!("cannot unpack member `{member}`: {e}"))
}

/// Reserve exactly `size` bytes, or say the member does not fit (instead of an allocation abort).
fn reserve(out: &mut Vec<u8>, size: u64, archive: &str, member: &str) -> Result<(), FormatError> {
    usize::try_from(size)
        .ok()
        .and_then(|n| out.try_reserve_exact(n).ok())
        .ok_or_else(|| {
            FormatError::new(
                archive,
                format!("member `{member}` has {size} bytes, more than this process can hold in memory"),
            )
        })
}

/// Where an input's bytes come from.
enum Source<'r> {
    /// A source that can seek (top-level files, archives held in memory), positioned at its start.
    Seekable { reader: &'r mut dyn ReadSeek, len: u64 },
    /// A stream read once, front to back (a decompressor's output, a tar member).
    Stream(&'r mut dyn Read),
}

impl Source<'_> {
    fn reader(&mut self) -> &mut dyn Read {
        match self {
            Source::Seekable { reader, .. } => reader,
            Source::Stream(reader) => reader,
        }
    }
}

/// Read up to `n` bytes (fewer only at the end of the stream).
fn peek(reader: &mut dyn Read, n: usize) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(n);
    reader.take(n as u64).read_to_end(&mut head)?;
    Ok(head)
}

/// A decompressor's output, charged against the budget as it is read, remembering why it failed
/// so the error names this layer rather than the member being read through it.
struct Meter<'b, R> {
    inner: R,
    budget: &'b Budget,
    /// The decompressor's (or its source's) error, once one happened.
    error: Option<String>,
    over: bool,
    /// Compressed bytes the decompressor consumed so far, for the error's byte offset.
    consumed: Option<&'b Cell<u64>>,
}

impl<'b, R: Read> Meter<'b, R> {
    fn new(inner: R, budget: &'b Budget, consumed: Option<&'b Cell<u64>>) -> Self {
        Meter {
            inner,
            budget,
            error: None,
            over: false,
            consumed,
        }
    }

    /// The error to report for `e`, which came from reading the member `member` of `archive`
    /// through this meter: this layer's own failure (crossed limit, corrupt stream) if it had one.
    fn blame(&self, e: FormatError, archive: &str, member: &str) -> FormatError {
        if self.over {
            return self.budget.exceeded(archive);
        }
        let Some(message) = &self.error else { return e };
        let message = format!("cannot unpack member `{member}`: {message}");
        match self.consumed {
            Some(at) => FormatError::at_offset(archive, at.get(), message),
            None => FormatError::new(archive, message),
        }
    }
}

impl<R: Read> Read for Meter<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.over {
            return Err(io::Error::other("the unpacking limit was reached"));
        }
        match self.inner.read(buf) {
            Ok(n) => {
                if !self.budget.inflate(n) {
                    self.over = true;
                    return Err(io::Error::other("the unpacking limit was reached"));
                }
                Ok(n)
            }
            Err(e) => {
                if e.kind() != io::ErrorKind::Interrupted && self.error.is_none() {
                    self.error = Some(e.to_string());
                }
                Err(e)
            }
        }
    }
}

/// Counts the compressed bytes a decompressor takes from its input.
struct Counted<'c, R> {
    inner: R,
    count: &'c Cell<u64>,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

/// The top-level source: counts the bytes read and remembers its own failure, so a file that
/// cannot be read (or a read the caller cancelled) is reported as such, not as a corrupt archive.
struct Tracked<'r> {
    inner: &'r mut dyn ReadSeek,
    read: u64,
    error: Option<String>,
    cancelled: bool,
}

impl Read for Tracked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.read += n as u64;
                Ok(n)
            }
            Err(e) => {
                if e.kind() != io::ErrorKind::Interrupted && self.error.is_none() {
                    self.cancelled = is_cancellation(&e);
                    self.error = Some(e.to_string());
                }
                Err(e)
            }
        }
    }
}

impl Seek for Tracked<'_> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// Whether a source's error says the caller cancelled the read: the error wraps a
/// [`FormatError::cancelled`] (see [`Unpacker::add_reader`]).
fn is_cancellation(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<FormatError>())
        .is_some_and(|f| f.cancelled)
}

/// One top-level input being unpacked.
struct Walk<'w> {
    budget: &'w Budget,
    out: &'w mut Vec<InputFile>,
}

impl Walk<'_> {
    /// Unpack `name` (a member of `parent`, or the input itself at depth 0) from `source`;
    /// `size` is its length when a header or the file system says it.
    fn unpack(
        &mut self,
        name: &str,
        parent: &str,
        mut source: Source<'_>,
        depth: u32,
        size: Option<u64>,
    ) -> Result<(), FormatError> {
        let head = peek(source.reader(), HEAD_BYTES).map_err(|e| member_error(parent, name, &e))?;
        let Some(kind) = archive_kind(name, &head) else {
            let mut rest = Cursor::new(head).chain(source.reader());
            let bytes = if depth == 0 {
                let mut bytes = Vec::new();
                reserve(&mut bytes, size.unwrap_or(0), name, name)?;
                rest.read_to_end(&mut bytes)
                    .map_err(|e| member_error(parent, name, &e))?;
                bytes
            } else {
                self.budget.keep(&mut rest, size, parent, name)?
            };
            self.out.push(InputFile::new(name, bytes));
            return Ok(());
        };
        if depth >= MAX_NESTING {
            return Err(FormatError::new(
                name,
                format!("archives are nested more than {MAX_NESTING} levels deep; refusing to unpack further"),
            ));
        }
        match kind {
            ArchiveKind::Gzip | ArchiveKind::Zstd => {
                let input = Cursor::new(head).chain(source.reader());
                self.unpack_compressed(name, kind, input, depth)
            }
            ArchiveKind::Tar => {
                let len = match &source {
                    Source::Seekable { len, .. } => Some(*len),
                    Source::Stream(_) => None,
                };
                let input = Cursor::new(head).chain(source.reader());
                self.unpack_tar(name, input, len, depth)
            }
            ArchiveKind::Zip => match source {
                Source::Seekable { reader, .. } => {
                    reader
                        .seek(SeekFrom::Start(0))
                        .map_err(|e| FormatError::new(name, format!("cannot read it: {e}")))?;
                    self.unpack_zip(name, reader, depth)
                }
                Source::Stream(reader) => {
                    // A zip read from a stream (a member of a tar or another compressed file) is
                    // held in memory, charged like a kept file, for its index at the end.
                    let mut rest = Cursor::new(head).chain(reader);
                    let bytes = self.budget.keep(&mut rest, size, parent, name)?;
                    self.unpack_zip(name, &mut Cursor::new(bytes), depth)
                }
            },
        }
    }

    /// A gzip or zstd file: one member, named like the file without its suffix.
    fn unpack_compressed(
        &mut self,
        name: &str,
        kind: ArchiveKind,
        input: impl Read,
        depth: u32,
    ) -> Result<(), FormatError> {
        let consumed = Cell::new(0);
        let counted = Counted {
            inner: input,
            count: &consumed,
        };
        if kind == ArchiveKind::Gzip {
            let mut meter = Meter::new(MultiGzDecoder::new(counted), self.budget, Some(&consumed));
            let first = peek(&mut meter, HEAD_BYTES);
            // The name stored in the gzip header, used when the file's own name does not say it.
            let stored = meter
                .inner
                .header()
                .and_then(|h| h.filename())
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .and_then(|n| clean_member_name(&n))
                .and_then(|n| n.rsplit('/').next().map(str::to_owned));
            self.unpack_single(name, kind, meter, first, stored, depth)
        } else {
            let decoder = ZstdReader::new(io::BufReader::with_capacity(ZSTD_INPUT_BUFFER, counted));
            let mut meter = Meter::new(decoder, self.budget, Some(&consumed));
            let first = peek(&mut meter, HEAD_BYTES);
            self.unpack_single(name, kind, meter, first, None, depth)
        }
    }

    /// The member of a compressed file, read from its decompressor `meter` whose first bytes
    /// (or failure) are `first`.
    fn unpack_single<R: Read>(
        &mut self,
        name: &str,
        kind: ArchiveKind,
        mut meter: Meter<'_, R>,
        first: io::Result<Vec<u8>>,
        stored: Option<String>,
        depth: u32,
    ) -> Result<(), FormatError> {
        let base = name.rsplit('/').next().unwrap_or("");
        let member = inner_name(base, kind, stored);
        let inner_head = first.map_err(|e| meter.blame(member_error(name, &member, &e), name, &member))?;
        let inner = format!("{}{member}", &name[..name.len() - base.len()]);
        self.budget.take_member(name)?;
        let mut rest = Cursor::new(inner_head).chain(&mut meter);
        let unpacked = self.unpack(&inner, name, Source::Stream(&mut rest), depth + 1, None);
        unpacked.map_err(|e| meter.blame(e, name, &member))?;
        // Whatever follows the member (a tar's padding) is still decompressed, so a corrupt or
        // truncated end of the stream is reported and its checksum is checked.
        io::copy(&mut meter, &mut io::sink())
            .map_err(|e| meter.blame(member_error(name, &member, &e), name, &member))?;
        Ok(())
    }

    fn unpack_tar(&mut self, name: &str, input: impl Read, len: Option<u64>, depth: u32) -> Result<(), FormatError> {
        let mut archive = tar::Archive::new(input);
        let entries = archive
            .entries()
            .map_err(|e| FormatError::new(name, format!("not a readable tar archive: {e}")))?;
        let folder = match name.rfind('/') {
            Some(i) => &name[..=i],
            None => "",
        };
        for entry in entries {
            let mut entry = entry.map_err(|e| FormatError::new(name, format!("corrupt tar archive: {e}")))?;
            let offset = entry.raw_header_position();
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let path = entry.path_bytes();
            let member = String::from_utf8_lossy(&path).into_owned();
            let Some(clean) = clean_member_name(&member) else {
                continue;
            };
            let size = entry.size();
            if size > self.budget.kept_left.get() {
                return Err(self.budget.exceeded(name));
            }
            if len.is_some_and(|len| size > len) {
                return Err(FormatError::at_offset(
                    name,
                    offset,
                    format!("tar member `{member}` claims {size} bytes but the archive is shorter"),
                ));
            }
            self.budget.take_member(name)?;
            self.unpack(
                &format!("{folder}{clean}"),
                name,
                Source::Stream(&mut entry),
                depth + 1,
                Some(size),
            )?;
        }
        Ok(())
    }

    fn unpack_zip(&mut self, name: &str, reader: &mut dyn ReadSeek, depth: u32) -> Result<(), FormatError> {
        let mut archive = zip::ZipArchive::new(reader)
            .map_err(|e| FormatError::new(name, format!("not a readable zip archive: {e}")))?;
        if archive.len() > self.budget.members_left.get() {
            return Err(FormatError::new(
                name,
                format!(
                    "zip archive lists {} members, more than the limit of {MAX_MEMBERS}",
                    archive.len()
                ),
            ));
        }
        let folder = match name.rfind('/') {
            Some(i) => &name[..=i],
            None => "",
        };
        for i in 0..archive.len() {
            let entry = archive
                .by_index(i)
                .map_err(|e| FormatError::new(name, format!("cannot read zip member {i}: {e}")))?;
            if !entry.is_file() {
                continue;
            }
            let member = String::from_utf8_lossy(entry.name_raw()).into_owned();
            let Some(clean) = clean_member_name(&member) else {
                continue;
            };
            let size = entry.size();
            if size > self.budget.kept_left.get() || size > self.budget.inflated_left.get() {
                return Err(self.budget.exceeded(name));
            }
            self.budget.take_member(name)?;
            let mut meter = Meter::new(entry, self.budget, None);
            let unpacked = self.unpack(
                &format!("{folder}{clean}"),
                name,
                Source::Stream(&mut meter),
                depth + 1,
                Some(size),
            );
            unpacked.map_err(|e| meter.blame(e, name, &member))?;
            // Read to the member's end, so its checksum is checked even when a nested archive
            // stopped early.
            io::copy(&mut meter, &mut io::sink())
                .map_err(|e| meter.blame(member_error(name, &member, &e), name, &member))?;
        }
        Ok(())
    }
}

/// The name of the one member of a compressed file called `base`.
fn inner_name(base: &str, kind: ArchiveKind, stored: Option<String>) -> String {
    let lower = base.to_ascii_lowercase();
    let (short, long) = match kind {
        ArchiveKind::Gzip => (".tgz", ".gz"),
        _ => (".tzst", ".zst"),
    };
    if lower.ends_with(short) {
        format!("{}.tar", &base[..base.len() - short.len()])
    } else if lower.ends_with(long) && base.len() > long.len() {
        base[..base.len() - long.len()].to_owned()
    } else if let Some(n) = stored {
        n
    } else {
        format!("{base}.unpacked")
    }
}

/// A zstd stream of one or more frames, decoded as it is read: skippable frames are skipped and
/// each frame's content checksum, when it has one, is checked. The decoder's window is bounded by
/// ruzstd's default limit (128 MiB), so a frame header cannot make it allocate more.
struct ZstdReader<R> {
    source: R,
    decoder: FrameDecoder,
    in_frame: bool,
    frames: u64,
}

impl<R: BufRead> ZstdReader<R> {
    /// The error for a frame that failed to decode: a stream that ended early says so.
    fn decode_error(&mut self, e: FrameDecoderError) -> io::Error {
        if matches!(self.source.fill_buf(), Ok(rest) if rest.is_empty()) {
            io::Error::new(io::ErrorKind::UnexpectedEof, "the zstd stream ends early (truncated?)")
        } else {
            io::Error::new(io::ErrorKind::InvalidData, format!("corrupt zstd stream: {e}"))
        }
    }

    fn new(source: R) -> Self {
        ZstdReader {
            source,
            decoder: FrameDecoder::new(),
            in_frame: false,
            frames: 0,
        }
    }

    /// Start the next frame; false at the end of the stream (after at least one frame).
    fn next_frame(&mut self) -> io::Result<bool> {
        loop {
            let magic = peek(&mut self.source, 4)?;
            if magic.is_empty() && self.frames > 0 {
                return Ok(false);
            }
            if magic.len() < 4 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the zstd stream ends inside a frame header",
                ));
            }
            match self.decoder.init(Cursor::new(magic).chain(&mut self.source)) {
                Ok(()) => {
                    self.in_frame = true;
                    self.frames += 1;
                    return Ok(true);
                }
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame { length, .. })) => {
                    let skipped = io::copy(&mut (&mut self.source).take(length as u64), &mut io::sink())?;
                    if skipped < length as u64 {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the zstd stream ends inside a skippable frame",
                        ));
                    }
                    self.frames += 1;
                }
                Err(e) => return Err(self.decode_error(e)),
            }
        }
    }
}

impl<R: BufRead> Read for ZstdReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if !self.in_frame && !self.next_frame()? {
                return Ok(0);
            }
            while self.decoder.can_collect() == 0 && !self.decoder.is_finished() {
                self.decoder
                    .decode_blocks(&mut self.source, BlockDecodingStrategy::UptoBlocks(1))
                    .map_err(|e| self.decode_error(e))?;
            }
            let n = self.decoder.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            if self.decoder.is_finished() && self.decoder.can_collect() == 0 {
                if let (Some(stored), Some(computed)) = (
                    self.decoder.get_checksum_from_data(),
                    self.decoder.get_calculated_checksum(),
                ) {
                    if stored != computed {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            format!(
                                "zstd: frame {} checksum mismatch (stored {stored:08x}, computed {computed:08x})",
                                self.frames
                            ),
                        ));
                    }
                }
                self.in_frame = false;
            }
        }
    }
}
