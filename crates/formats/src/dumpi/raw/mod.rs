//! The low-level DUMPI layer: one `.bin` file's index, header, datatype sizes, and its stream of
//! call records with their decoded arguments, exactly as they are stored.
//!
//! Everything is big endian. The index at the end of the file locates the other sections; the
//! record stream runs from the body offset (after two `u32` time biases) to the header offset and
//! ends with an `END_OF_STREAM` label. Every length read from the file is checked against the
//! bytes that remain before anything is allocated, so a hostile file gives a [`FormatError`] with
//! the file name and byte offset, never a panic or a huge allocation.

use super::spec::{call_spec, CallSpec, FieldKind, CALLS, END_OF_STREAM};
use crate::FormatError;

/// The 8 magic bytes at the start of every `.bin` file and as the first index entry.
pub const MAGIC: [u8; 8] = [0xff, 0xaa, 0xdd, 0x44, 0x55, 0x4d, 0x50, 0x49];

/// Mask bits 0-1: statuses were recorded.
pub const MASK_STATUSES: u8 = 0x03;
/// Mask bit 2: CPU times present.
pub const MASK_CPU_TIME: u8 = 0x04;
/// Mask bit 3: wall-clock times present.
pub const MASK_WALL_TIME: u8 = 0x08;
/// Mask bit 6: thread id present.
pub const MASK_THREAD: u8 = 0x40;
/// Mask bit 7: PAPI counter values present.
pub const MASK_PERF: u8 = 0x80;

/// The section offsets from the index at the end of the file (0 = section absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Index {
    /// Number of index entries found (8 for dumpi >= 0.6.6, down to 5 for old files).
    pub entries: u8,
    /// Datatype size table.
    pub sizes: u64,
    /// Function address table (user function names).
    pub function_addresses: u64,
    /// PAPI counter labels.
    pub perf_labels: u64,
    /// Header (version, host, mesh).
    pub header: u64,
    /// Body: time biases then the record stream.
    pub body: u64,
    /// Footer (call counts).
    pub footer: u64,
    /// Key/value records (never written by libdumpi).
    pub keyval: u64,
}

/// The per-file header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
pub struct Header {
    /// DUMPI version that wrote the file (major, minor, sub).
    pub version: (u8, u8, u8),
    /// Start of tracing, seconds since the epoch.
    pub start_time: u64,
    /// Host name of the rank.
    pub hostname: String,
    /// User name.
    pub username: String,
    /// Coordinates of the rank in the machine mesh (empty when not on a mesh machine).
    pub mesh_coords: Vec<i32>,
    /// Size of the machine mesh per dimension.
    pub mesh_size: Vec<i32>,
}

/// A timestamp: seconds (bias already added) and nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Clock {
    /// Whole seconds.
    pub sec: u64,
    /// Nanoseconds within the second (as stored; not range-checked).
    pub nsec: u32,
}

impl Clock {
    /// The time in nanoseconds.
    pub fn ns(self) -> u64 {
        self.sec.saturating_mul(1_000_000_000).saturating_add(self.nsec as u64)
    }
}

/// Entry and exit time of a call on one clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Interval {
    /// Entry.
    pub start: Clock,
    /// Exit.
    pub stop: Clock,
}

/// One recorded `MPI_Status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Status {
    /// Bytes received.
    pub bytes: i32,
    /// Source rank, relative to the communicator.
    pub source: i32,
    /// Cancelled flag.
    pub cancelled: u8,
    /// Error code.
    pub error: u8,
    /// Tag (`-1` for traces older than 0.6.3, which did not store it).
    pub tag: i32,
}

/// A decoded argument value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A conditional field that is not present in this record.
    Absent,
    /// Any scalar integer or handle.
    Int(i64),
    /// An array of integers or handles.
    Ints(Vec<i32>),
    /// An array of integer arrays.
    IntRows(Vec<Vec<i32>>),
    /// A string.
    Str(String),
    /// An array of strings.
    Strs(Vec<String>),
    /// An array of string arrays.
    StrRows(Vec<Vec<String>>),
    /// Statuses: `None` when the record mask says none were recorded, an empty list when the
    /// application passed `MPI_STATUS(ES)_IGNORE`.
    Statuses(Option<Vec<Status>>),
}

/// One call record of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Byte offset of the record's call id in the file.
    pub offset: u64,
    /// DUMPI call id.
    pub call: u16,
    /// The mask byte (which optional parts are present).
    pub mask: u8,
    /// Thread id (0 when not recorded).
    pub thread: u16,
    /// CPU time, when recorded.
    pub cpu: Option<Interval>,
    /// Wall-clock time, when recorded.
    pub wall: Option<Interval>,
    /// PAPI counter values (at entry, at exit), in the order of the file's perf labels.
    pub perf: Vec<(u64, u64)>,
    /// Argument values, aligned with the call spec's fields.
    pub args: Vec<Value>,
    spec: &'static CallSpec,
}

impl Record {
    /// A record with no call yet, to be filled by [`Records::next_into`] (which reuses its
    /// buffers from one record to the next).
    pub fn empty() -> Record {
        Record {
            offset: 0,
            call: END_OF_STREAM,
            mask: 0,
            thread: 0,
            cpu: None,
            wall: None,
            perf: Vec::new(),
            args: Vec::new(),
            spec: &CALLS[0],
        }
    }
    /// The layout of this record's call.
    pub fn spec(&self) -> &'static CallSpec {
        self.spec
    }
    /// The argument named `name`, if the call has it and it is present.
    pub fn arg(&self, name: &str) -> Option<&Value> {
        let i = self.spec().fields.iter().position(|f| f.name == name)?;
        match &self.args[i] {
            Value::Absent => None,
            v => Some(v),
        }
    }
    /// A scalar argument.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.arg(name)? {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }
    /// An integer array argument.
    pub fn ints(&self, name: &str) -> Option<&[i32]> {
        match self.arg(name)? {
            Value::Ints(v) => Some(v),
            _ => None,
        }
    }
    /// The statuses of the record (its `status` or `statuses` field), if recorded and not ignored.
    pub fn statuses(&self) -> &[Status] {
        for v in &self.args {
            if let Value::Statuses(Some(s)) = v {
                return s;
            }
        }
        &[]
    }
}

/// One parsed `.bin` file: sections decoded, records read lazily with [`BinFile::records`].
#[derive(Debug, Clone)]
pub struct BinFile<'a> {
    /// File name, for errors.
    pub name: &'a str,
    bytes: &'a [u8],
    /// Section offsets.
    pub index: Index,
    /// Header.
    pub header: Header,
    /// Byte size of every DUMPI datatype id (built-ins 0-27, user types from 28); empty when the
    /// file has no size table.
    pub type_sizes: Vec<i32>,
    /// PAPI counter names, in the order the records store their values.
    pub perf_labels: Vec<String>,
    /// User function addresses and names (for function enter/exit records).
    pub functions: Vec<(u64, String)>,
    /// Seconds added to every stored CPU time.
    pub cpu_bias: u32,
    /// Seconds added to every stored wall time.
    pub wall_bias: u32,
    stream_start: usize,
    stream_end: usize,
}

/// A bounds-checked big-endian cursor over one file.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    name: &'a str,
    bytes: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(name: &'a str, bytes: &'a [u8], pos: usize, end: usize) -> Cursor<'a> {
        Cursor {
            name,
            bytes,
            pos,
            end: end.min(bytes.len()),
        }
    }
    fn err(&self, at: usize, msg: impl Into<String>) -> FormatError {
        FormatError::at_offset(self.name, at as u64, msg)
    }
    #[inline]
    fn remaining(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }
    #[cold]
    #[inline(never)]
    fn truncated(&self, n: usize, what: &str) -> FormatError {
        self.err(
            self.pos,
            format!("truncated {what}: needs {n} bytes, only {} remain", self.remaining()),
        )
    }
    #[inline]
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], FormatError> {
        if self.remaining() < n {
            return Err(self.truncated(n, what));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    /// The next `N` bytes as an array (the fixed-size reads below compile to one load each).
    #[inline]
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], FormatError> {
        if self.remaining() < N {
            return Err(self.truncated(N, what));
        }
        let b = self.bytes[self.pos..self.pos + N].try_into().expect("N bytes");
        self.pos += N;
        Ok(b)
    }
    #[inline]
    fn u8(&mut self, what: &str) -> Result<u8, FormatError> {
        Ok(self.array::<1>(what)?[0])
    }
    #[inline]
    fn u16(&mut self, what: &str) -> Result<u16, FormatError> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }
    #[inline]
    fn u32(&mut self, what: &str) -> Result<u32, FormatError> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }
    #[inline]
    fn i32(&mut self, what: &str) -> Result<i32, FormatError> {
        Ok(self.u32(what)? as i32)
    }
    #[inline]
    fn u64(&mut self, what: &str) -> Result<u64, FormatError> {
        Ok(u64::from_be_bytes(self.array(what)?))
    }
    /// A length that must be non-negative and leave room for `len * min_elem` more bytes.
    fn len(&mut self, what: &str, min_elem: usize) -> Result<usize, FormatError> {
        let at = self.pos;
        let n = self.i32(what)?;
        if n < 0 {
            return Err(self.err(at, format!("negative length {n} for {what}")));
        }
        let n = n as usize;
        if n.saturating_mul(min_elem) > self.remaining() {
            return Err(self.err(
                at,
                format!(
                    "length {n} of {what} needs at least {} bytes but only {} remain",
                    n.saturating_mul(min_elem),
                    self.remaining()
                ),
            ));
        }
        Ok(n)
    }
    fn str32(&mut self, what: &str) -> Result<String, FormatError> {
        let n = self.len(what, 1)?;
        Ok(String::from_utf8_lossy(self.take(n, what)?).into_owned())
    }
    fn str16(&mut self, what: &str) -> Result<String, FormatError> {
        let n = self.u16(what)? as usize;
        Ok(String::from_utf8_lossy(self.take(n, what)?).into_owned())
    }
    /// The next `N` bytes without consuming them, if that many remain (the hot decoders check
    /// a whole fixed layout at once).
    #[inline(always)]
    fn peek<const N: usize>(&self) -> Option<[u8; N]> {
        (self.remaining() >= N).then(|| self.bytes[self.pos..self.pos + N].try_into().expect("N bytes"))
    }
    /// One entry/exit interval of 12 bytes on a clock whose seconds are biased by `bias`.
    #[inline(always)]
    fn interval(&mut self, bias: u32) -> Result<Interval, FormatError> {
        let (s, sn, e, en) = match self.peek::<12>() {
            Some(b) => {
                self.pos += 12;
                (be_u16(b, 0), be_i32(b, 2) as u32, be_u16(b, 6), be_i32(b, 8) as u32)
            }
            None => self.interval_fields()?,
        };
        Ok(Interval {
            start: Clock {
                sec: bias as u64 + s as u64,
                nsec: sn,
            },
            stop: Clock {
                sec: bias as u64 + e as u64,
                nsec: en,
            },
        })
    }
    /// The fields of an interval one by one, when fewer than 12 bytes remain (the error says
    /// which field is cut).
    #[cold]
    fn interval_fields(&mut self) -> Result<(u16, u32, u16, u32), FormatError> {
        Ok((
            self.u16("start seconds")?,
            self.u32("start nanoseconds")?,
            self.u16("stop seconds")?,
            self.u32("stop nanoseconds")?,
        ))
    }
    /// A status field (one or an array; both are a count and that many statuses) appended to
    /// `out`. Returns `false` when the record mask says no statuses were recorded (nothing is
    /// stored then); `true` with nothing appended when the application ignored them.
    fn statuses_into(
        &mut self,
        mask: u8,
        version: (u8, u8, u8),
        what: &str,
        out: &mut Vec<Status>,
    ) -> Result<bool, FormatError> {
        if mask & MASK_STATUSES == 0 {
            return Ok(false);
        }
        let at = self.pos;
        let n = self.i32(what)?;
        let with_tag = version_at_least(version, (0, 6, 3));
        let each = if with_tag { 14 } else { 10 };
        if n > 0 && (n as usize).saturating_mul(each) > self.remaining() {
            return Err(self.err(
                at,
                format!(
                    "{n} statuses need {} bytes but only {} remain",
                    n as usize * each,
                    self.remaining()
                ),
            ));
        }
        // The count was checked against the bytes that remain: the statuses are decoded from
        // one slice.
        let n = n.max(0) as usize;
        let bytes = self.take(n * each, what)?;
        out.extend(bytes.chunks_exact(each).map(|b| Status {
            bytes: i32::from_be_bytes([b[0], b[1], b[2], b[3]]),
            source: i32::from_be_bytes([b[4], b[5], b[6], b[7]]),
            cancelled: b[8],
            error: b[9],
            tag: if with_tag {
                i32::from_be_bytes([b[10], b[11], b[12], b[13]])
            } else {
                -1
            },
        }));
        Ok(true)
    }
    fn i32s(&mut self, what: &str) -> Result<Vec<i32>, FormatError> {
        let n = self.len(what, 4)?;
        (0..n).map(|_| self.i32(what)).collect()
    }
}

#[inline]
fn be_i32<const N: usize>(b: [u8; N], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[inline]
fn be_u16<const N: usize>(b: [u8; N], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// The arguments of a point-to-point call of the fixed layout (`Send`, `Isend`, `Irecv`,
/// `Recv`, the persistent `*_init` calls and their buffered/synchronous/ready variants), as the
/// hot decoder [`Records::p2p_args`] returns them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct P2pArgs {
    /// Element count.
    pub count: i32,
    /// DUMPI datatype id.
    pub datatype: u16,
    /// Destination or source, relative to the communicator.
    pub peer: i32,
    /// Tag.
    pub tag: i32,
    /// Communicator handle.
    pub comm: u16,
    /// Request handle (0 for the blocking calls, which have none).
    pub request: i32,
}

/// The record layouts with a dedicated decoder: the calls nearly every record of a
/// point-to-point trace is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hot {
    /// `count, datatype, peer, tag, comm[, request][, status]`.
    P2p { with_request: bool, with_status: bool },
    /// `MPI_Wait` / `MPI_Test`: `request[, flag], status`.
    Wait { with_flag: bool },
    /// `MPI_Waitall` / `MPI_Testall`: `count, requests[, flag], statuses`.
    All { with_flag: bool },
}

/// The head of a record of a hot layout, as [`Records::hot_head`] decodes it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HotHead {
    /// DUMPI call id.
    pub call: u16,
    /// Its layout.
    pub hot: Hot,
    /// The mask byte.
    pub mask: u8,
    /// Thread id (0 when not recorded).
    pub thread: u16,
    /// Wall-clock interval when recorded, else the CPU one, else none.
    pub time: Option<Interval>,
}

fn version_at_least(v: (u8, u8, u8), want: (u8, u8, u8)) -> bool {
    v >= want
}

impl<'a> BinFile<'a> {
    /// Parse the index, header, datatype sizes, perf labels and function names of a `.bin` file.
    pub fn parse(name: &'a str, bytes: &'a [u8]) -> Result<BinFile<'a>, FormatError> {
        if bytes.len() < MAGIC.len() || bytes[..8] != MAGIC {
            return Err(FormatError::at_offset(
                name,
                0,
                "not a DUMPI .bin file: the magic bytes ff aa dd 'DUMPI' are missing",
            ));
        }
        let index = read_index(name, bytes)?;
        let file_len = bytes.len() as u64;
        let index_start = file_len - 8 * index.entries as u64;
        for (what, off) in [
            ("datatype sizes", index.sizes),
            ("function addresses", index.function_addresses),
            ("perf labels", index.perf_labels),
            ("header", index.header),
            ("body", index.body),
            ("footer", index.footer),
        ] {
            if off >= index_start && off != 0 {
                return Err(FormatError::at_offset(
                    name,
                    index_start,
                    format!("index entry for the {what} points to byte {off}, past the sections (file has {file_len} bytes)"),
                ));
            }
        }
        if index.header == 0 || index.body == 0 {
            return Err(FormatError::at_offset(
                name,
                index_start,
                "index has no header or body offset",
            ));
        }
        // libdumpi writes the body first, then the header, then the footer: offsets that break
        // this order come from a truncated or corrupted index.
        if index.header <= index.body || (index.footer != 0 && index.footer <= index.header) {
            return Err(FormatError::at_offset(
                name,
                index_start,
                format!(
                    "index offsets out of order (body {}, header {}, footer {}): truncated or corrupted index",
                    index.body, index.header, index.footer
                ),
            ));
        }
        let end = index_start as usize;
        let header = read_header(&mut Cursor::new(name, bytes, index.header as usize, end))?;

        let mut body = Cursor::new(name, bytes, index.body as usize, end);
        let cpu_bias = body.u32("CPU time bias")?;
        let wall_bias = body.u32("wall time bias")?;
        let stream_start = body.pos;
        let stream_end = if index.header as usize >= stream_start {
            index.header as usize
        } else {
            end
        };

        let mut type_sizes = Vec::new();
        if index.sizes != 0 {
            let mut c = Cursor::new(name, bytes, index.sizes as usize, end);
            type_sizes = c.i32s("datatype size table")?;
        }
        let mut perf_labels = Vec::new();
        if index.perf_labels != 0 {
            let mut c = Cursor::new(name, bytes, index.perf_labels as usize, end);
            let n = c.len("perf label count", 2)?;
            for _ in 0..n {
                perf_labels.push(c.str16("perf label")?);
            }
        }
        let mut functions = Vec::new();
        if index.function_addresses != 0 {
            let mut c = Cursor::new(name, bytes, index.function_addresses as usize, end);
            let n = c.len("function address count", 10)?;
            for _ in 0..n {
                let addr = c.u64("function address")?;
                functions.push((addr, c.str16("function name")?));
            }
        }
        Ok(BinFile {
            name,
            bytes,
            index,
            header,
            type_sizes,
            perf_labels,
            functions,
            cpu_bias,
            wall_bias,
            stream_start,
            stream_end,
        })
    }

    /// Size of the whole file in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True for an empty file (never the case for a parsed file).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Bytes of the record stream (between the time biases and the header).
    pub fn stream_len(&self) -> usize {
        self.stream_end.saturating_sub(self.stream_start)
    }

    /// The footer's count of records per call id (indexed by id, 0 to 290), or `None` when the
    /// file has no footer or it does not start with the footer magic. A hint for reserving
    /// memory, not a fact: nothing checks it against the records.
    pub fn call_counts(&self) -> Option<Vec<u32>> {
        const FOOTER_MAGIC: u64 = 0xf007_fee7;
        const COUNTS: usize = 291;
        if self.index.footer == 0 {
            return None;
        }
        let end = self.bytes.len() - 8 * self.index.entries as usize;
        let mut c = Cursor::new(self.name, self.bytes, self.index.footer as usize, end);
        if c.u64("footer magic").ok()? != FOOTER_MAGIC {
            return None;
        }
        let b = c.take(4 * COUNTS, "footer call counts").ok()?;
        Some(
            b.chunks_exact(4)
                .map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
                .collect(),
        )
    }

    /// The call records in stream order, stopping at `END_OF_STREAM`.
    pub fn records(&self) -> Records<'a, '_> {
        Records {
            file: self,
            cur: Cursor::new(self.name, self.bytes, self.stream_start, self.stream_end),
            done: false,
        }
    }
}

fn read_index(name: &str, bytes: &[u8]) -> Result<Index, FormatError> {
    let len = bytes.len();
    let at = |entries: usize| -> Option<usize> { len.checked_sub(entries * 8).filter(|&o| o >= 8) };
    let is_magic = |o: usize| bytes[o..o + 8] == MAGIC;
    let entries = [8usize, 7, 6, 5]
        .into_iter()
        .find(|&e| at(e).is_some_and(is_magic))
        .ok_or_else(|| {
            FormatError::at_offset(
                name,
                len.saturating_sub(64) as u64,
                format!("no DUMPI index at the end of the file (file of {len} bytes truncated or not a DUMPI trace)"),
            )
        })?;
    let base = at(entries).expect("checked");
    let e: Vec<u64> = (0..entries)
        .map(|i| u64::from_be_bytes(bytes[base + 8 * i..base + 8 * i + 8].try_into().expect("8 bytes")))
        .collect();
    // Older layouts drop the sizes, then the function addresses, then the perf labels.
    let mut idx = Index {
        entries: entries as u8,
        ..Index::default()
    };
    let rest = &e[1..];
    let skip = 8 - entries;
    let full: Vec<u64> = std::iter::repeat_n(0, skip).chain(rest.iter().copied()).collect();
    idx.sizes = full[0];
    idx.function_addresses = full[1];
    idx.perf_labels = full[2];
    idx.header = full[3];
    idx.body = full[4];
    idx.footer = full[5];
    idx.keyval = full[6];
    Ok(idx)
}

fn read_header(c: &mut Cursor) -> Result<Header, FormatError> {
    let version = (
        c.u8("header version")?,
        c.u8("header version")?,
        c.u8("header version")?,
    );
    let start_time = c.u64("header start time")?;
    let hostname = c.str16("header host name")?;
    let username = c.str16("header user name")?;
    let at = c.pos;
    let meshdim = c.i32("mesh dimension")?;
    if !(0..=64).contains(&meshdim) {
        return Err(c.err(at, format!("implausible mesh dimension {meshdim}")));
    }
    let mesh_coords = (0..meshdim)
        .map(|_| c.i32("mesh coordinate"))
        .collect::<Result<_, _>>()?;
    let mut mesh_size = Vec::new();
    if meshdim != 0 && version > (0, 4, 0) {
        mesh_size = c.i32s("mesh sizes")?;
    }
    Ok(Header {
        version,
        start_time,
        hostname,
        username,
        mesh_coords,
        mesh_size,
    })
}

mod records;
pub use records::Records;
