//! Local definitions of one location (OTF2's mapping tables and clock offsets): its local-to-global id mappings and
//! clock offsets, applied to every event record it writes.

use super::FastMap;
use crate::otf2::buffer::ChunkedFile;
use crate::FormatError;

/// Local-to-global translation of one reference type for one location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdMap {
    /// `global = map[local]`.
    Dense(Vec<u64>),
    /// Explicit pairs.
    Sparse(FastMap<u64, u64>),
}

impl IdMap {
    /// The global id of `local`; ids not in the map stay unchanged (as in the OTF2 library).
    #[inline]
    pub fn global(&self, local: u64) -> u64 {
        match self {
            IdMap::Dense(v) => v.get(local as usize).copied().unwrap_or(local),
            IdMap::Sparse(m) => m.get(&local).copied().unwrap_or(local),
        }
    }
}

/// Number of `MappingType` values (appendix C).
pub const MAPPING_TYPES: usize = 15;
/// Mapping type of string references.
pub const MAP_STRING: u8 = 0;
/// Mapping type of attribute references.
pub const MAP_ATTRIBUTE: u8 = 1;
/// Mapping type of location references.
pub const MAP_LOCATION: u8 = 2;
/// Mapping type of region references.
pub const MAP_REGION: u8 = 3;
/// Mapping type of group references.
pub const MAP_GROUP: u8 = 4;
/// Mapping type of metric references.
pub const MAP_METRIC: u8 = 5;
/// Mapping type of communicator references.
pub const MAP_COMM: u8 = 6;
/// Mapping type of calling-context references.
pub const MAP_CALLING_CONTEXT: u8 = 10;

/// A clock-offset sample: at local `time` the location's clock was `offset` ticks off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockOffset {
    /// Local time of the measurement.
    pub time: u64,
    /// Offset to add.
    pub offset: i64,
    /// Standard deviation of the measurement.
    pub stddev: f64,
}

/// The local definitions of one location: mapping tables and clock offsets.
#[derive(Debug, Clone, Default)]
pub struct LocalDefs {
    /// One optional map per mapping type.
    pub maps: Vec<Option<IdMap>>,
    /// Clock offsets in file order.
    pub clock_offsets: Vec<ClockOffset>,
}

impl LocalDefs {
    /// Parse a location's `.def` file.
    pub fn parse(file: &str, data: &[u8], chunk_size: u64) -> Result<LocalDefs, FormatError> {
        let mut defs = LocalDefs {
            maps: vec![None; MAPPING_TYPES],
            clock_offsets: Vec::new(),
        };
        let mut f = ChunkedFile::open(file, data, chunk_size)?;
        while let Some((id, at)) = f.next_type()? {
            let len = f.cur.record_length()?;
            let mut c = f.cur.sub(len);
            match id {
                5 => {
                    let kind = c.u8("mapping type")?;
                    let n = c.cu64("id map size")?;
                    let mode = c.u8("id map mode")?;
                    let map = match mode {
                        0 => {
                            let n = c.count(n, 1, "id map entries")?;
                            let mut v = Vec::with_capacity(n);
                            for _ in 0..n {
                                v.push(c.cu64("global id")?);
                            }
                            IdMap::Dense(v)
                        }
                        1 => {
                            let n = c.count(n, 2, "id map pairs")?;
                            let mut m = FastMap::with_capacity_and_hasher(n, Default::default());
                            for _ in 0..n {
                                let l = c.cu64("local id")?;
                                m.insert(l, c.cu64("global id")?);
                            }
                            IdMap::Sparse(m)
                        }
                        m => {
                            return Err(
                                c.error_at(at, format!("unknown id map mode {m} (expected 0 dense or 1 sparse)"))
                            )
                        }
                    };
                    match defs.maps.get_mut(kind as usize) {
                        Some(slot) => *slot = Some(map),
                        None => return Err(c.error_at(at, format!("unknown mapping type {kind}"))),
                    }
                }
                6 => {
                    let o = ClockOffset {
                        time: c.u64_full("clock offset time")?,
                        offset: c.ci64("clock offset")?,
                        stddev: c.f64("clock offset deviation")?,
                    };
                    defs.clock_offsets.push(o);
                }
                _ => {} // Local copies of global definitions: the global ones are authoritative.
            }
        }
        Ok(defs)
    }

    /// Translate a 32-bit reference of mapping type `kind`.
    #[inline]
    pub fn map32(&self, kind: u8, id: u32) -> u32 {
        match &self.maps[kind as usize] {
            Some(m) => m.global(id as u64) as u32,
            None => id,
        }
    }

    /// Translate a 64-bit reference of mapping type `kind`.
    #[inline]
    pub fn map64(&self, kind: u8, id: u64) -> u64 {
        match &self.maps[kind as usize] {
            Some(m) => m.global(id),
            None => id,
        }
    }

    /// Apply the clock-offset correction to a local timestamp (OTF2's clock offsets): linear
    /// interpolation between consecutive offsets, extrapolated from the first/last interval.
    pub fn correct(&self, t: u64) -> u64 {
        let o = &self.clock_offsets;
        if o.len() < 2 {
            return t;
        }
        let last = o.len() - 2;
        let i = (0..=last).find(|&i| t <= o[i + 1].time).unwrap_or(last);
        let (a, b) = (o[i], o[i + 1]);
        let dt = b.time.wrapping_sub(a.time) as i64 as f64;
        let slope = if dt == 0.0 {
            0.0
        } else {
            (b.offset - a.offset) as f64 / dt
        };
        let diff = t.wrapping_sub(a.time) as i64;
        let corr = a.offset.wrapping_add((slope * diff as f64).round() as i64);
        t.wrapping_add(corr as u64)
    }
}
