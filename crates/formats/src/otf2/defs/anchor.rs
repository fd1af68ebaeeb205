//! The anchor file `NAME.otf2`: version, chunk sizes, counts and properties of the archive
//! (OTF2's anchor file).

use crate::otf2::buffer::{Cursor, BIG_ENDIAN, END_OF_FILE, LITTLE_ENDIAN};
use crate::FormatError;

/// Facts from the anchor file `NAME.otf2`.
#[derive(Debug, Clone, PartialEq)]
pub struct Anchor {
    /// Version (major, minor, bugfix) of the OTF2 library that wrote the archive.
    pub version: (u8, u8, u8),
    /// Size of every chunk of the `.evt` files but the last.
    pub chunk_size_events: u64,
    /// Size of every chunk of the `.def` files but the last.
    pub chunk_size_defs: u64,
    /// File substrate (1 POSIX, 2 SION, 3 NONE).
    pub substrate: u8,
    /// Compression (1 NONE, 2 ZLIB).
    pub compression: u8,
    /// Number of locations the writer announced.
    pub number_of_locations: u64,
    /// Number of global definition records the writer announced.
    pub number_of_global_defs: u64,
    /// Machine name.
    pub machine_name: String,
    /// Creator, e.g. `Score-P 7.1`.
    pub creator: String,
    /// Free-text description.
    pub description: String,
    /// Trace properties (`OTF2::MPI_COMMUNICATION_COMPLETE` = `true` ...).
    pub properties: Vec<(String, String)>,
    /// Random trace id.
    pub trace_id: u64,
}

/// Chunk sizes the OTF2 library accepts (256 KiB to 16 MiB).
const CHUNK_RANGE: std::ops::RangeInclusive<u64> = 256 * 1024..=16 * 1024 * 1024;

impl Anchor {
    /// Parse the anchor file; refuses SION substrates and compressed archives, which this
    /// reader does not support.
    pub fn parse(file: &str, data: &[u8]) -> Result<Anchor, FormatError> {
        let mut c = Cursor::new(file, data);
        let marker = c.u8("anchor header")?;
        let order = c.u8("anchor byte order")?;
        if marker != 0x03 || !(order == LITTLE_ENDIAN || order == BIG_ENDIAN) {
            return Err(FormatError::at_offset(
                file,
                0,
                "not an OTF2 anchor file (bad header bytes)",
            ));
        }
        c.big_endian = order != LITTLE_ENDIAN;
        let magic_at = c.pos;
        if c.cstring("magic")? != "OTF2" {
            return Err(c.error_at(magic_at, "not an OTF2 anchor file (missing \"OTF2\" magic)"));
        }
        let at = c.pos;
        let anchor_version = c.u8("anchor format")?;
        let _trace_format = c.u8("trace format")?;
        if anchor_version == 0 {
            return Err(c.error_at(at, "unsupported anchor format version 0"));
        }
        let version = (c.u8("version")?, c.u8("version")?, c.u8("version")?);
        let at = c.pos;
        let chunk_size_events = c.u64_full("event chunk size")?;
        let chunk_size_defs = c.u64_full("definition chunk size")?;
        for (v, what) in [(chunk_size_events, "event"), (chunk_size_defs, "definition")] {
            if !CHUNK_RANGE.contains(&v) {
                return Err(c.error_at(
                    at,
                    format!("{what} chunk size {v} outside the OTF2 range 256 KiB..16 MiB"),
                ));
            }
        }
        let at = c.pos;
        let substrate = c.u8("file substrate")?;
        let compression = c.u8("compression")?;
        match substrate {
            1 => {}
            2 => {
                return Err(c.error_at(
                    at,
                    "SION file substrate is not supported (only POSIX archives can be read)",
                ))
            }
            s => return Err(c.error_at(at, format!("file substrate {s} is not supported (only POSIX archives)"))),
        }
        if compression != 1 {
            return Err(c.error_at(
                at + 1,
                format!("compressed archive (compression {compression}) is not supported; decompress it with otf2 tools first"),
            ));
        }
        let number_of_locations = c.u64_full("number of locations")?;
        let number_of_global_defs = c.u64_full("number of global definitions")?;
        let machine_name = c.cstring("machine name")?;
        let creator = c.cstring("creator")?;
        let description = c.cstring("description")?;
        let n = c.u32_full("number of properties")? as u64;
        let n = c.count(n, 2, "properties")?;
        let mut properties = Vec::with_capacity(n);
        for _ in 0..n {
            properties.push((c.cstring("property name")?, c.cstring("property value")?));
        }
        let trace_id = c.u64_full("trace id")?;
        c.u32_full("number of snapshots")?;
        c.u32_full("number of thumbnails")?;
        let at = c.pos;
        if c.u8("end of file")? != END_OF_FILE {
            return Err(c.error_at(at, "anchor file does not end with the end-of-file record"));
        }
        Ok(Anchor {
            version,
            chunk_size_events,
            chunk_size_defs,
            substrate,
            compression,
            number_of_locations,
            number_of_global_defs,
            machine_name,
            creator,
            description,
            properties,
            trace_id,
        })
    }
}
