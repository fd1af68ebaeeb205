//! Byte-level decoding of OTF2 buffers: OTF2's primitive encodings, record framing
//! and the chunk layout of `.def` / `.evt` files.
//!
//! Every read is bounds-checked and every failure is a [`FormatError`] naming the file and the
//! absolute byte offset, so hostile input can never panic or allocate more than it holds.

use crate::FormatError;

/// Chunk-header marker byte.
pub(crate) const CHUNK_HEADER: u8 = 0x03;
/// Record type: end of chunk; the rest of the chunk is padding.
pub(crate) const END_OF_CHUNK: u8 = 0x00;
/// Record type: end of buffer (written after [`END_OF_FILE`]).
pub(crate) const END_OF_BUFFER: u8 = 0x01;
/// Record type: end of file.
pub(crate) const END_OF_FILE: u8 = 0x02;
/// Byte-order marker of a little-endian writer.
pub(crate) const LITTLE_ENDIAN: u8 = 0x42;
/// Byte-order marker of a big-endian writer.
pub(crate) const BIG_ENDIAN: u8 = 0x23;
/// Size of a chunk header: marker, byte order, first and last event number.
pub(crate) const CHUNK_HEADER_LEN: usize = 18;

/// A read position inside one file's bytes, limited to `end`, with the byte order of the chunk
/// being read.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    /// File name for error messages.
    pub file: &'a str,
    /// The whole file.
    pub data: &'a [u8],
    /// Next byte to read.
    pub pos: usize,
    /// Reads must stay below this offset (end of record, chunk or file).
    pub end: usize,
    /// True when the current chunk was written big-endian.
    pub big_endian: bool,
}

impl<'a> Cursor<'a> {
    /// A cursor over all of `data`.
    pub fn new(file: &'a str, data: &'a [u8]) -> Cursor<'a> {
        Cursor {
            file,
            data,
            pos: 0,
            end: data.len(),
            big_endian: false,
        }
    }

    /// An error at the current position.
    pub fn error(&self, message: impl Into<String>) -> FormatError {
        FormatError::at_offset(self.file, self.pos as u64, message)
    }

    /// An error at byte `offset`.
    pub fn error_at(&self, offset: usize, message: impl Into<String>) -> FormatError {
        FormatError::at_offset(self.file, offset as u64, message)
    }

    /// Bytes left before `end`.
    pub fn remaining(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    /// True while bytes are left before `end`.
    pub fn has_more(&self) -> bool {
        self.pos < self.end
    }

    #[cold]
    #[inline(never)]
    fn short(&self, n: usize, what: &str) -> FormatError {
        self.error(format!(
            "{what} needs {n} bytes but only {} remain in the record/chunk (file truncated or corrupt)",
            self.remaining()
        ))
    }

    #[inline]
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], FormatError> {
        if self.remaining() < n {
            return Err(self.short(n, what));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// One raw byte.
    #[inline]
    pub fn u8(&mut self, what: &str) -> Result<u8, FormatError> {
        Ok(self.take(1, what)?[0])
    }

    #[inline]
    fn raw<const N: usize>(&mut self, what: &str) -> Result<[u8; N], FormatError> {
        let mut b: [u8; N] = self.take(N, what)?.try_into().expect("take returned N bytes");
        if self.big_endian {
            b.reverse();
        }
        Ok(b)
    }

    /// A raw 32-bit value in chunk byte order.
    pub fn u32_full(&mut self, what: &str) -> Result<u32, FormatError> {
        Ok(u32::from_le_bytes(self.raw::<4>(what)?))
    }

    /// A raw 64-bit value in chunk byte order (timestamps, `u64full`).
    #[inline]
    pub fn u64_full(&mut self, what: &str) -> Result<u64, FormatError> {
        Ok(u64::from_le_bytes(self.raw::<8>(what)?))
    }

    /// A raw 16-bit value in chunk byte order.
    pub fn u16_full(&mut self, what: &str) -> Result<u16, FormatError> {
        Ok(u16::from_le_bytes(self.raw::<2>(what)?))
    }

    /// A raw IEEE double.
    pub fn f64(&mut self, what: &str) -> Result<f64, FormatError> {
        Ok(f64::from_bits(self.u64_full(what)?))
    }

    /// A raw IEEE float.
    pub fn f32(&mut self, what: &str) -> Result<f32, FormatError> {
        Ok(f32::from_bits(self.u32_full(what)?))
    }

    /// A compressed integer of at most `max` payload bytes. The common case (a width byte of
    /// 0 to `max`, the payload inside the record and 8 bytes of file after the width byte) is
    /// decided and loaded here, inlined into the caller; everything else, errors included,
    /// goes through [`Cursor::compressed_general`] and gives exactly its result.
    #[inline(always)]
    fn compressed(&mut self, max: usize, what: &str) -> Result<u64, FormatError> {
        let (pos, remaining) = (self.pos, self.remaining());
        if let Some(&[n, b0, b1, b2, b3, b4, b5, b6, b7]) = self.data.get(pos..pos + 9) {
            let n = n as usize;
            if n <= max && n < remaining {
                self.pos = pos + 1 + n;
                let w = [b0, b1, b2, b3, b4, b5, b6, b7];
                return Ok(match n {
                    0 => 0,
                    8 if !self.big_endian => u64::from_le_bytes(w),
                    _ if self.big_endian => u64::from_be_bytes(w) >> (64 - 8 * n),
                    _ => u64::from_le_bytes(w) & ((1u64 << (8 * n)) - 1),
                });
            }
        }
        self.compressed_general(max, what)
    }

    #[inline(never)]
    fn compressed_general(&mut self, max: usize, what: &str) -> Result<u64, FormatError> {
        let at = self.pos;
        let n = self.u8(what)?;
        match n {
            0x00 => Ok(0),
            0xFF => Ok(if max == 4 { u32::MAX as u64 } else { u64::MAX }),
            n if n as usize <= max => {
                let n = n as usize;
                // Fast path: one unaligned 8-byte load and a shift or mask, no copy, when the
                // file has 8 bytes from here (the record bound is checked first either way).
                if self.remaining() >= n && self.pos + 8 <= self.data.len() {
                    let w: [u8; 8] = self.data[self.pos..self.pos + 8].try_into().expect("8 bytes");
                    self.pos += n;
                    return Ok(if self.big_endian {
                        u64::from_be_bytes(w) >> (64 - 8 * n)
                    } else if n == 8 {
                        u64::from_le_bytes(w)
                    } else {
                        u64::from_le_bytes(w) & ((1u64 << (8 * n)) - 1)
                    });
                }
                let bytes = self.take(n, what)?;
                let mut buf = [0u8; 8];
                if self.big_endian {
                    buf[8 - bytes.len()..].copy_from_slice(bytes);
                    Ok(u64::from_be_bytes(buf))
                } else {
                    buf[..bytes.len()].copy_from_slice(bytes);
                    Ok(u64::from_le_bytes(buf))
                }
            }
            n => Err(self.too_wide(at, n, max, what)),
        }
    }

    #[cold]
    #[inline(never)]
    fn too_wide(&self, at: usize, n: u8, max: usize, what: &str) -> FormatError {
        self.error_at(
            at,
            format!("{what}: compressed integer announces {n} bytes, at most {max} allowed"),
        )
    }

    /// A compressed unsigned 32-bit integer (all references but locations).
    #[inline]
    pub fn cu32(&mut self, what: &str) -> Result<u32, FormatError> {
        Ok(self.compressed(4, what)? as u32)
    }

    /// A compressed unsigned 64-bit integer.
    #[inline]
    pub fn cu64(&mut self, what: &str) -> Result<u64, FormatError> {
        self.compressed(8, what)
    }

    /// A compressed signed 64-bit integer (two's complement of the unsigned decoding).
    #[inline]
    pub fn ci64(&mut self, what: &str) -> Result<i64, FormatError> {
        Ok(self.compressed(8, what)? as i64)
    }

    /// A NUL-terminated string (invalid UTF-8 is replaced, not refused).
    pub fn cstring(&mut self, what: &str) -> Result<String, FormatError> {
        let rest = &self.data[self.pos..self.end.max(self.pos)];
        match rest.iter().position(|&b| b == 0) {
            Some(n) => {
                let s = String::from_utf8_lossy(&rest[..n]).into_owned();
                self.pos += n + 1;
                Ok(s)
            }
            None => Err(self.error(format!(
                "{what}: string is not NUL-terminated before the end of its record"
            ))),
        }
    }

    /// A count of items each at least `min_bytes` long, checked against the bytes left so that
    /// a corrupt count cannot cause a huge allocation.
    pub fn count(&mut self, value: u64, min_bytes: usize, what: &str) -> Result<usize, FormatError> {
        let room = self.remaining() / min_bytes.max(1);
        if value > room as u64 {
            return Err(self.error(format!(
                "{what}: count {value} exceeds what the remaining {} bytes can hold",
                self.remaining()
            )));
        }
        Ok(value as usize)
    }

    /// A record length: one byte, or `0xFF` followed by a raw u64.
    pub fn record_length(&mut self) -> Result<usize, FormatError> {
        let at = self.pos;
        let b = self.u8("record length")?;
        let len = if b == 0xFF {
            self.u64_full("record length")?
        } else {
            b as u64
        };
        if len > self.remaining() as u64 {
            return Err(self.error_at(
                at,
                format!(
                    "record length {len} runs past the end of its chunk ({} bytes left; truncated or corrupt)",
                    self.remaining()
                ),
            ));
        }
        Ok(len as usize)
    }

    /// A cursor limited to the next `len` bytes; `self` moves past them.
    pub fn sub(&mut self, len: usize) -> Cursor<'a> {
        let sub = Cursor {
            end: self.pos + len,
            ..self.clone()
        };
        self.pos += len;
        sub
    }
}

/// Walks the records of a chunked file (`.def`, `.evt`): parses chunk headers, skips
/// end-of-chunk padding, stops at the end-of-file record and refuses a file that ends without one.
#[derive(Debug)]
pub(crate) struct ChunkedFile<'a> {
    /// Cursor whose `end` is the end of the current chunk.
    pub cur: Cursor<'a>,
    chunk_size: usize,
    chunk_start: usize,
    /// `first_event` of the current chunk's header.
    pub first_event: u64,
    /// Number of chunks started so far.
    pub chunks: u64,
    done: bool,
}

impl<'a> ChunkedFile<'a> {
    /// Open `data` (named `file`) with the chunk size from the anchor.
    pub fn open(file: &'a str, data: &'a [u8], chunk_size: u64) -> Result<ChunkedFile<'a>, FormatError> {
        let mut f = ChunkedFile {
            cur: Cursor::new(file, data),
            chunk_size: chunk_size as usize,
            chunk_start: 0,
            first_event: 0,
            chunks: 0,
            done: false,
        };
        if data.is_empty() {
            return Err(FormatError::at_offset(
                file,
                0,
                "file is empty (expected an OTF2 chunk header)",
            ));
        }
        f.start_chunk(0)?;
        Ok(f)
    }

    fn start_chunk(&mut self, at: usize) -> Result<(), FormatError> {
        let c = &mut self.cur;
        c.pos = at;
        c.end = (at + self.chunk_size).min(c.data.len());
        self.chunk_start = at;
        self.chunks += 1;
        let marker = c.u8("chunk header")?;
        if marker != CHUNK_HEADER {
            return Err(c.error_at(
                at,
                format!(
                    "expected chunk header byte 0x03, found 0x{marker:02x} (not an OTF2 buffer, or wrong chunk size)"
                ),
            ));
        }
        let order = c.u8("chunk byte order")?;
        c.big_endian = match order {
            LITTLE_ENDIAN => false,
            BIG_ENDIAN => true,
            o => {
                return Err(c.error_at(
                    at + 1,
                    format!("unknown byte-order marker 0x{o:02x} (expected 0x42 or 0x23)"),
                ))
            }
        };
        self.first_event = c.u64_full("chunk first event")?;
        c.u64_full("chunk last event")?;
        Ok(())
    }

    /// The next record-type byte, crossing chunk boundaries; `None` at the end-of-file record.
    /// Also returns the offset of that byte.
    #[inline]
    pub fn next_type(&mut self) -> Result<Option<(u8, usize)>, FormatError> {
        // An ordinary record inside the current chunk: read its type byte inline in the
        // caller's loop; chunk ends, the end of the file and errors go the out-of-line way.
        let c = &mut self.cur;
        if !self.done && c.pos < c.end {
            if let Some(&t) = c.data.get(c.pos) {
                if t > END_OF_FILE {
                    let at = c.pos;
                    c.pos += 1;
                    return Ok(Some((t, at)));
                }
            }
        }
        self.next_type_slow()
    }

    /// The bytes from the read position to the end of the current chunk, for a decoder that
    /// reads whole records at once and then moves on with [`ChunkedFile::skip`]; empty once the
    /// end-of-file record was read and in a big-endian chunk (whose records go the general way).
    #[inline]
    pub fn rest_of_chunk(&self) -> &'a [u8] {
        let c = &self.cur;
        if self.done || c.big_endian {
            return &[];
        }
        c.data.get(c.pos..c.end).unwrap_or(&[])
    }

    /// Move past `len` bytes of the current chunk that the caller decoded from
    /// [`ChunkedFile::rest_of_chunk`] (whole records only, so `len` stays inside the chunk).
    #[inline]
    pub fn skip(&mut self, len: usize) {
        debug_assert!(self.cur.pos + len <= self.cur.end, "skip past the chunk end");
        self.cur.pos += len;
    }

    #[inline(never)]
    fn next_type_slow(&mut self) -> Result<Option<(u8, usize)>, FormatError> {
        if self.done {
            return Ok(None);
        }
        loop {
            if !self.cur.has_more() {
                let at = self.cur.pos;
                return Err(self
                    .cur
                    .error_at(at, "file ends without an end-of-file record (truncated?)".to_string()));
            }
            let at = self.cur.pos;
            let t = self.cur.u8("record type")?;
            match t {
                END_OF_CHUNK => {
                    let next = self.chunk_start + self.chunk_size;
                    if next >= self.cur.data.len() {
                        return Err(self.cur.error_at(
                            at,
                            "end-of-chunk record in the last chunk: the next chunk is missing (truncated?)",
                        ));
                    }
                    self.start_chunk(next)?;
                }
                END_OF_FILE => {
                    self.done = true;
                    return Ok(None);
                }
                END_OF_BUFFER => {
                    return Err(self
                        .cur
                        .error_at(at, "end-of-buffer record before the end-of-file record"));
                }
                _ => return Ok(Some((t, at))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_integers_follow_the_documented_examples() {
        let bytes = [
            0x02, 0x00, 0x04, 0x01, 0x2a, 0x00, 0xff, 0x08, 0xe2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        ];
        let mut c = Cursor::new("x", &bytes);
        assert_eq!(c.cu32("a").unwrap(), 1024);
        assert_eq!(c.cu32("b").unwrap(), 42);
        assert_eq!(c.cu32("c").unwrap(), 0);
        assert_eq!(c.cu32("d").unwrap(), u32::MAX);
        assert_eq!(c.ci64("e").unwrap(), -30);
        assert!(!c.has_more());
    }

    #[test]
    fn big_endian_compressed_payload_is_most_significant_first() {
        let bytes = [0x02, 0x04, 0x00];
        let mut c = Cursor::new("x", &bytes);
        c.big_endian = true;
        assert_eq!(c.cu64("a").unwrap(), 1024);
    }

    #[test]
    fn compressed_fast_path_agrees_with_the_byte_copy_at_every_width() {
        for big_endian in [false, true] {
            for n in 1..=8u8 {
                let payload: Vec<u8> = (0..n).map(|i| 0x81 + 17 * i).collect();
                let expect = if big_endian {
                    payload.iter().fold(0u64, |v, &b| (v << 8) | b as u64)
                } else {
                    payload.iter().rev().fold(0u64, |v, &b| (v << 8) | b as u64)
                };
                let mut exact = vec![n];
                exact.extend(&payload);
                let mut padded = exact.clone();
                padded.extend([0xEE; 8]);
                for bytes in [&exact, &padded] {
                    let mut c = Cursor::new("x", bytes);
                    c.big_endian = big_endian;
                    assert_eq!(c.cu64("v").unwrap(), expect, "width {n}, big endian {big_endian}");
                    assert_eq!(c.pos, n as usize + 1);
                }
                // The record bound holds even when the file goes on past it.
                let mut c = Cursor::new("x", &padded);
                c.end = n as usize;
                assert_eq!(c.cu64("v").unwrap_err().offset, Some(1));
            }
        }
    }

    #[test]
    fn oversized_compressed_width_and_counts_are_errors() {
        let mut c = Cursor::new("x", &[0x05, 1, 2, 3, 4, 5]);
        let e = c.cu32("ref").unwrap_err();
        assert_eq!(e.offset, Some(0));
        let mut c = Cursor::new("x", &[1, 2, 3]);
        assert!(c.count(4, 1, "members").is_err());
        assert_eq!(c.count(3, 1, "members").unwrap(), 3);
    }

    #[test]
    fn chunked_file_without_end_record_is_truncated() {
        let mut data = vec![0x03, 0x42];
        data.extend_from_slice(&[0; 16]);
        data.push(0x0a);
        let mut f = ChunkedFile::open("t.def", &data, 1 << 20).unwrap();
        assert_eq!(f.next_type().unwrap(), Some((0x0a, 18)));
        let e = f.next_type().unwrap_err();
        assert!(e.message.contains("end-of-file"), "{e}");
    }
}
