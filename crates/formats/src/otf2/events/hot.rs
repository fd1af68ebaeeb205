//! Whole-record decoders of the hot event records (timestamps, Enter/Leave, point-to-point and
//! request records) in their common encoding, read from a fixed window of the chunk: the fast path
//! of the event loop; anything else goes through the general record reader.

/// Bytes of the chunk the whole-record decoders ([`hot_single`], [`hot_p2p`]) look at: the longest hot record
/// in its common encoding, an MpiIsend or MpiIrecv (type, length byte, three compressed 32-bit
/// and two compressed 64-bit fields), is 35 bytes, and the last field's payload is loaded as
/// 8 bytes after its width byte.
pub(crate) const HOT_WINDOW: usize = 40;

/// `MASK[n]` keeps the low `n` bytes of a little-endian 8-byte load.
const MASK: [u64; 9] = [
    0,
    0xFF,
    0xFFFF,
    0xFF_FFFF,
    0xFFFF_FFFF,
    0xFF_FFFF_FFFF,
    0xFFFF_FFFF_FFFF,
    0xFF_FFFF_FFFF_FFFF,
    u64::MAX,
];

/// A hot record decoded whole by [`decode_hot`]: references are still the location's local ids.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hot {
    /// Timestamp record (5): the raw, uncorrected time.
    Timestamp(u64),
    /// Enter (12) of a local region id.
    Enter(u32),
    /// Leave (13) of a local region id.
    Leave(u32),
    /// MpiSend (14), MpiIsend (15), MpiRecv (18) or MpiIrecv (19) by record id; the
    /// communicator is the local id.
    P2p(u8, P2pPayload),
    /// MpiIsendComplete (16) or MpiIrecvRequest (17) by record id, with the request id.
    Request(u8, u64),
}

/// A compressed integer of at most `max` payload bytes at `at` in the window, little-endian,
/// and the position after it; `None` for a width above `max` (0xFF, all ones, included).
#[inline(always)]
fn window_compressed(r: &[u8; HOT_WINDOW], at: usize, max: usize) -> Option<(u64, usize)> {
    let n = *r.get(at)? as usize;
    if n > max {
        return None;
    }
    let w: [u8; 8] = r.get(at + 1..at + 9)?.try_into().ok()?;
    Some((u64::from_le_bytes(w) & MASK[n], at + 1 + n))
}

/// The raw time of a timestamp record (5) at the start of the window, and its length.
#[inline(always)]
pub(crate) fn hot_timestamp(r: &[u8; HOT_WINDOW]) -> (u64, usize) {
    let w: [u8; 8] = [r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]];
    (u64::from_le_bytes(w), 9)
}

/// The one compressed field of an Enter or Leave (region, `max` 4) or of an MpiIsendComplete
/// or MpiIrecvRequest (request, `max` 8) at the start of the window, and the record's length;
/// `None` for a width above `max` (0xFF included).
#[inline(always)]
pub(crate) fn hot_single(r: &[u8; HOT_WINDOW], max: usize) -> Option<(u64, usize)> {
    window_compressed(r, 1, max)
}

/// The payload of an MpiSend, MpiRecv, or with `with_request` an MpiIsend or MpiIrecv, at the
/// start of a window with `room` bytes of chunk from the record on, and the record's length;
/// `None` unless the record has a one-byte length that fits the chunk and holds its fields,
/// none of them too wide or all ones.
#[inline(always)]
pub(crate) fn hot_p2p(r: &[u8; HOT_WINDOW], room: usize, with_request: bool) -> Option<(P2pPayload, usize)> {
    let len = r[1] as usize;
    let end = 2 + len;
    if len == 0xFF || end > room {
        return None;
    }
    let (peer, q) = window_compressed(r, 2, 4)?;
    let (comm, q) = window_compressed(r, q, 4)?;
    let (tag, q) = window_compressed(r, q, 4)?;
    let (length, q) = window_compressed(r, q, 8)?;
    let (request, q) = match with_request {
        true => window_compressed(r, q, 8)?,
        false => (0, q),
    };
    if q > end {
        return None;
    }
    let p = P2pPayload {
        peer: peer as u32,
        comm: comm as u32,
        tag: tag as u32,
        length,
        request,
    };
    Some((p, end))
}

/// Decode the record that starts `r`, a window of a little-endian chunk with `room` bytes
/// (at least [`HOT_WINDOW`]) left from the record to the chunk end, when it is a timestamp or
/// one of the hot event records in its common encoding (one-byte length, fields inside the
/// record, no all-ones compressed value): what it is and its length in bytes. `None` for
/// anything else, which the general path ([`super::LocationEvents`]'s `next_record` and the payload
/// readers) then decodes, with its errors; where both decode a record they agree. (The event
/// loop dispatches on the record id itself and calls the same per-record decoders.)
#[cfg(test)]
pub(crate) fn decode_hot(r: &[u8; HOT_WINDOW], room: usize) -> Option<(Hot, usize)> {
    let id = r[0];
    match id {
        0x05 => {
            let (raw, len) = hot_timestamp(r);
            Some((Hot::Timestamp(raw), len))
        }
        12 | 13 => {
            let (region, end) = hot_single(r, 4)?;
            let region = region as u32;
            Some((
                if id == 12 {
                    Hot::Enter(region)
                } else {
                    Hot::Leave(region)
                },
                end,
            ))
        }
        16 | 17 => {
            let (request, end) = hot_single(r, 8)?;
            Some((Hot::Request(id, request), end))
        }
        14 | 15 | 18 | 19 => {
            let (p, end) = hot_p2p(r, room, id == 15 || id == 19)?;
            Some((Hot::P2p(id, p), end))
        }
        _ => None,
    }
}

/// The payload of a point-to-point event record (14, 15, 18, 19).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct P2pPayload {
    /// Receiver (sends) or sender (receives), a rank of `comm`.
    pub peer: u32,
    /// Global communicator id.
    pub comm: u32,
    /// Tag.
    pub tag: u32,
    /// Message length in bytes.
    pub length: u64,
    /// Request id (non-blocking records; 0 otherwise).
    pub request: u64,
}
