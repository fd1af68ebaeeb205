//! Event records of one location (OTF2's event records and their MPI semantics), decoded with the
//! location's clock-offset correction and local→global id mapping applied, as the official
//! reader delivers them.

use super::buffer::ChunkedFile;
use super::defs::{
    LocalDefs, MAP_ATTRIBUTE, MAP_CALLING_CONTEXT, MAP_COMM, MAP_LOCATION, MAP_METRIC, MAP_REGION, MAP_STRING,
};
use crate::FormatError;

mod hot;
#[cfg(test)]
pub(crate) use hot::{decode_hot, Hot};
pub(crate) use hot::{hot_p2p, hot_single, hot_timestamp, P2pPayload, HOT_WINDOW};

/// A value of an event attribute or metric, by its OTF2 type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// UINT8/16/32/64.
    Unsigned(u64),
    /// INT8/16/32/64.
    Signed(i64),
    /// FLOAT or DOUBLE.
    Float(f64),
    /// A reference (already mapped to its global id) of the given OTF2 type.
    Ref(u8, u64),
}

impl Value {
    /// The value as a number (references give their id).
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Unsigned(v) => v as f64,
            Value::Signed(v) => v as f64,
            Value::Float(v) => v,
            Value::Ref(_, v) => v as f64,
        }
    }
}

/// One attribute attached to an event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AttributeValue {
    /// Attribute definition id (global).
    pub attribute: u32,
    /// The value.
    pub value: Value,
}

/// What happened, with every definition reference already global. Field names follow the
/// OTF2 record fields (in the order OTF2's event records store them); ranks (`receiver`, `sender`, `root`) are ranks
/// *within* `comm`, request ids are per location.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// The measurement system flushed its buffer.
    BufferFlush {
        /// When the flush ended (clock-corrected ticks).
        stop_time: u64,
    },
    /// Measurement switched on or off.
    MeasurementOnOff {
        /// 1 ON, 2 OFF.
        mode: u8,
    },
    /// A region was entered.
    Enter {
        /// Region id.
        region: u32,
    },
    /// A region was left.
    Leave {
        /// Region id.
        region: u32,
    },
    /// The region of a calling context was entered (OTF2 2.0+; Score-P writes these instead
    /// of [`EventKind::Enter`] when it unwinds the stack, `SCOREP_ENABLE_UNWINDING`).
    CallingContextEnter {
        /// Calling context id (global); its definition names the region.
        context: u32,
        /// Frames entered since the previous event of the location.
        unwind_distance: u32,
    },
    /// The region of a calling context was left (the counterpart of
    /// [`EventKind::CallingContextEnter`]).
    CallingContextLeave {
        /// Calling context id (global).
        context: u32,
    },
    /// Blocking send.
    MpiSend {
        /// Destination rank in `comm`.
        receiver: u32,
        /// Communicator id.
        comm: u32,
        /// Message tag.
        tag: u32,
        /// Message size in bytes.
        length: u64,
    },
    /// Non-blocking send posted.
    MpiIsend {
        /// Destination rank in `comm`.
        receiver: u32,
        /// Communicator id.
        comm: u32,
        /// Message tag.
        tag: u32,
        /// Message size in bytes.
        length: u64,
        /// Request id, completed by a later [`EventKind::MpiIsendComplete`].
        request: u64,
    },
    /// Non-blocking send completed.
    MpiIsendComplete {
        /// Request id of the [`EventKind::MpiIsend`].
        request: u64,
    },
    /// Non-blocking receive posted.
    MpiIrecvRequest {
        /// Request id, completed by a later [`EventKind::MpiIrecv`].
        request: u64,
    },
    /// Blocking receive completed.
    MpiRecv {
        /// Source rank in `comm`.
        sender: u32,
        /// Communicator id.
        comm: u32,
        /// Message tag.
        tag: u32,
        /// Message size in bytes.
        length: u64,
    },
    /// Non-blocking receive completed.
    MpiIrecv {
        /// Source rank in `comm`.
        sender: u32,
        /// Communicator id.
        comm: u32,
        /// Message tag.
        tag: u32,
        /// Message size in bytes.
        length: u64,
        /// Request id of the [`EventKind::MpiIrecvRequest`].
        request: u64,
    },
    /// Unsuccessful test of a request.
    MpiRequestTest {
        /// Request id.
        request: u64,
    },
    /// A request was cancelled.
    MpiRequestCancelled {
        /// Request id.
        request: u64,
    },
    /// A collective operation starts.
    MpiCollectiveBegin,
    /// A collective operation ends.
    MpiCollectiveEnd {
        /// OTF2 `CollectiveOp` (appendix C).
        op: u8,
        /// Communicator id.
        comm: u32,
        /// Root rank in `comm`, or a `CollectiveRoot` value (`u32::MAX` = none).
        root: u32,
        /// Bytes this rank sent.
        sent: u64,
        /// Bytes this rank received.
        received: u64,
    },
    /// Counter values.
    Metric {
        /// Metric class or instance id.
        metric: u32,
        /// Per member of the class: OTF2 `Type` and the raw 64-bit value.
        values: Vec<(u8, u64)>,
    },
    /// The program started.
    ProgramBegin {
        /// String id of the program name.
        name: u32,
        /// String ids of the arguments.
        arguments: Vec<u32>,
    },
    /// The program ended.
    ProgramEnd {
        /// Exit status.
        exit_status: i64,
    },
    /// A non-blocking collective was started.
    NonBlockingCollectiveRequest {
        /// Request id.
        request: u64,
    },
    /// A non-blocking collective completed.
    NonBlockingCollectiveComplete {
        /// OTF2 `CollectiveOp`.
        op: u8,
        /// Communicator id.
        comm: u32,
        /// Root rank in `comm`, or a `CollectiveRoot` value.
        root: u32,
        /// Bytes this rank sent.
        sent: u64,
        /// Bytes this rank received.
        received: u64,
        /// Request id of the [`EventKind::NonBlockingCollectiveRequest`].
        request: u64,
    },
    /// A communicator was created.
    CommCreate {
        /// Communicator id.
        comm: u32,
    },
    /// A communicator was destroyed.
    CommDestroy {
        /// Communicator id.
        comm: u32,
    },
    /// A known record this reader does not decode (OpenMP, threads, RMA, I/O...).
    Other {
        /// Record id.
        id: u8,
    },
    /// A record id this reader does not know; skipped by its length.
    Unknown {
        /// Record id.
        id: u8,
    },
}

/// One event of a location.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Timestamp in ticks after clock-offset correction.
    pub time: u64,
    /// Byte offset of the record (its id byte) in the `.evt` file.
    pub offset: u64,
    /// Attributes attached to the event.
    pub attributes: Vec<AttributeValue>,
    /// The event.
    pub kind: EventKind,
}

/// Iterates the events of one location in file order.
pub struct LocationEvents<'a> {
    file: ChunkedFile<'a>,
    local: &'a LocalDefs,
    raw_time: u64,
    time: u64,
    read: u64,
    failed: bool,
    /// Attributes of the next event (the attribute list record precedes its event).
    attributes: Vec<AttributeValue>,
    /// Number of records with an unknown id skipped so far.
    pub unknown_records: u64,
}

/// OTF2 type codes of references that are compressed 64-bit (locations) in attribute values.
const TYPE_LOCATION: u8 = 13;

impl<'a> LocationEvents<'a> {
    /// Start reading the `.evt` file `name` with the location's local definitions.
    pub fn new(
        name: &'a str,
        data: &'a [u8],
        chunk_size: u64,
        local: &'a LocalDefs,
    ) -> Result<LocationEvents<'a>, FormatError> {
        Ok(LocationEvents {
            file: ChunkedFile::open(name, data, chunk_size)?,
            local,
            raw_time: 0,
            time: local.correct(0),
            read: 0,
            failed: false,
            attributes: Vec::new(),
            unknown_records: 0,
        })
    }

    /// Name of the event file.
    pub fn file_name(&self) -> &'a str {
        self.file.cur.file
    }

    /// Number of events decoded so far.
    pub fn events_read(&self) -> u64 {
        self.read
    }

    fn attribute_list(&mut self) -> Result<Vec<AttributeValue>, FormatError> {
        let len = self.file.cur.record_length()?;
        let mut c = self.file.cur.sub(len);
        let n = c.cu32("attribute count")? as u64;
        let n = c.count(n, 3, "attributes")?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let attribute = self.local.map32(MAP_ATTRIBUTE, c.cu32("attribute id")?);
            let at = c.pos;
            let ty = c.u8("attribute type")?;
            let value = match ty {
                1 | 5 => {
                    let b = c.u8("attribute value")?;
                    if ty == 1 {
                        Value::Unsigned(b as u64)
                    } else {
                        Value::Signed(b as i8 as i64)
                    }
                }
                2 => Value::Unsigned(c.u16_full("attribute value")? as u64),
                6 => Value::Signed(c.u16_full("attribute value")? as i16 as i64),
                3 => Value::Unsigned(c.cu32("attribute value")? as u64),
                7 => Value::Signed(c.cu32("attribute value")? as i32 as i64),
                4 => Value::Unsigned(c.cu64("attribute value")?),
                8 => Value::Signed(c.ci64("attribute value")?),
                9 => Value::Float(c.f32("attribute value")? as f64),
                10 => Value::Float(c.f64("attribute value")?),
                TYPE_LOCATION => Value::Ref(ty, self.local.map64(MAP_LOCATION, c.cu64("attribute value")?)),
                // Reference types 11..=25 map with MappingType `type - 11` (appendix C).
                11..=25 => Value::Ref(ty, self.local.map32(ty - 11, c.cu32("attribute value")?) as u64),
                0 => return Err(c.error_at(at, "attribute of type NONE")),
                _ => Value::Unsigned(c.cu64("attribute value")?),
            };
            out.push(AttributeValue { attribute, value });
        }
        Ok(out)
    }

    /// The payload of an Enter (12) or Leave (13) record: the region's global id.
    #[inline(always)]
    pub(crate) fn region_payload(&mut self) -> Result<u32, FormatError> {
        Ok(self.local.map32(MAP_REGION, self.file.cur.cu32("region")?))
    }

    /// The payload of a record that carries only a request id (16 MpiIsendComplete, 17
    /// MpiIrecvRequest, 20 MpiRequestTest, 21 MpiRequestCancelled).
    #[inline(always)]
    pub(crate) fn request_payload(&mut self) -> Result<u64, FormatError> {
        self.file.cur.cu64("request id")
    }

    /// The payload of the point-to-point records 14 MpiSend and 18 MpiRecv, and of 15 MpiIsend
    /// and 19 MpiIrecv with their request id (`with_request`; 0 otherwise): the peer, the
    /// communicator's global id, the tag and the message length.
    #[inline(always)]
    pub(crate) fn p2p_payload(&mut self, id: u8, with_request: bool) -> Result<P2pPayload, FormatError> {
        let len = self.file.cur.record_length()?;
        let mut c = self.file.cur.sub(len);
        let peer_name = if id == 14 || id == 15 { "receiver" } else { "sender" };
        Ok(P2pPayload {
            peer: c.cu32(peer_name)?,
            comm: self.local.map32(MAP_COMM, c.cu32("communicator")?),
            tag: c.cu32("tag")?,
            length: c.cu64("message length")?,
            request: if with_request { c.cu64("request id")? } else { 0 },
        })
    }

    /// Decode the payload of the event record `id` (after [`LocationEvents::next_record`])
    /// into its [`EventKind`]: the general path, for every record kind.
    pub(crate) fn decode(&mut self, id: u8) -> Result<EventKind, FormatError> {
        match id {
            12 => {
                return Ok(EventKind::Enter {
                    region: self.region_payload()?,
                })
            }
            13 => {
                return Ok(EventKind::Leave {
                    region: self.region_payload()?,
                })
            }
            16 => {
                return Ok(EventKind::MpiIsendComplete {
                    request: self.request_payload()?,
                })
            }
            17 => {
                return Ok(EventKind::MpiIrecvRequest {
                    request: self.request_payload()?,
                })
            }
            14 | 18 => {
                let p = self.p2p_payload(id, false)?;
                return Ok(if id == 14 {
                    EventKind::MpiSend {
                        receiver: p.peer,
                        comm: p.comm,
                        tag: p.tag,
                        length: p.length,
                    }
                } else {
                    EventKind::MpiRecv {
                        sender: p.peer,
                        comm: p.comm,
                        tag: p.tag,
                        length: p.length,
                    }
                });
            }
            15 | 19 => {
                let p = self.p2p_payload(id, true)?;
                return Ok(if id == 15 {
                    EventKind::MpiIsend {
                        receiver: p.peer,
                        comm: p.comm,
                        tag: p.tag,
                        length: p.length,
                        request: p.request,
                    }
                } else {
                    EventKind::MpiIrecv {
                        sender: p.peer,
                        comm: p.comm,
                        tag: p.tag,
                        length: p.length,
                        request: p.request,
                    }
                });
            }
            _ => {}
        }
        let l = self.local;
        // Singletons: one compressed field and no length byte.
        let c = &mut self.file.cur;
        match id {
            20 => {
                return Ok(EventKind::MpiRequestTest {
                    request: c.cu64("request id")?,
                })
            }
            21 => {
                return Ok(EventKind::MpiRequestCancelled {
                    request: c.cu64("request id")?,
                })
            }
            24 => {
                c.cu32("requested threads")?;
                return Ok(EventKind::Other { id });
            }
            28..=30 => {
                c.cu64("task id")?;
                return Ok(EventKind::Other { id });
            }
            _ => {}
        }
        let len = c.record_length()?;
        let mut c = c.sub(len);
        let comm = |c: &mut super::buffer::Cursor| -> Result<u32, FormatError> {
            Ok(l.map32(MAP_COMM, c.cu32("communicator")?))
        };
        Ok(match id {
            10 => EventKind::BufferFlush {
                stop_time: l.correct(c.u64_full("stop time")?),
            },
            11 => EventKind::MeasurementOnOff {
                mode: c.u8("measurement mode")?,
            },
            22 => EventKind::MpiCollectiveBegin,
            23 => EventKind::MpiCollectiveEnd {
                op: c.u8("collective op")?,
                comm: comm(&mut c)?,
                root: c.cu32("root")?,
                sent: c.cu64("size sent")?,
                received: c.cu64("size received")?,
            },
            31 => {
                let metric = l.map32(MAP_METRIC, c.cu32("metric")?);
                let n = c.u8("number of metric values")? as u64;
                let n = c.count(n, 2, "metric values")?;
                let mut values = Vec::with_capacity(n);
                for _ in 0..n {
                    let ty = c.u8("metric value type")?;
                    values.push((ty, c.cu64("metric value")?));
                }
                EventKind::Metric { metric, values }
            }
            83 => {
                let name = l.map32(MAP_STRING, c.cu32("program name")?);
                let n = c.cu32("number of arguments")? as u64;
                let n = c.count(n, 1, "program arguments")?;
                let mut arguments = Vec::with_capacity(n);
                for _ in 0..n {
                    arguments.push(l.map32(MAP_STRING, c.cu32("program argument")?));
                }
                EventKind::ProgramBegin { name, arguments }
            }
            84 => EventKind::ProgramEnd {
                exit_status: c.ci64("exit status")?,
            },
            85 => EventKind::NonBlockingCollectiveRequest {
                request: c.cu64("request id")?,
            },
            86 => EventKind::NonBlockingCollectiveComplete {
                op: c.u8("collective op")?,
                comm: comm(&mut c)?,
                root: c.cu32("root")?,
                sent: c.cu64("size sent")?,
                received: c.cu64("size received")?,
                request: c.cu64("request id")?,
            },
            87 => EventKind::CommCreate { comm: comm(&mut c)? },
            88 => EventKind::CommDestroy { comm: comm(&mut c)? },
            66 => EventKind::CallingContextEnter {
                context: l.map32(MAP_CALLING_CONTEXT, c.cu32("calling context")?),
                unwind_distance: c.cu32("unwind distance")?,
            },
            67 => EventKind::CallingContextLeave {
                context: l.map32(MAP_CALLING_CONTEXT, c.cu32("calling context")?),
            },
            25..=27 | 32..=65 | 68..=82 | 89..=92 => EventKind::Other { id },
            _ => {
                self.unknown_records += 1;
                EventKind::Unknown { id }
            }
        })
    }

    /// Move to the next event record: the timestamp and attribute list records before it are
    /// consumed (the attributes are kept for [`LocationEvents::take_attributes`]). Returns the
    /// event's record id and byte offset, `None` at the end of the file; its payload is read
    /// next, by [`LocationEvents::decode`] or one of the payload readers of the hot records.
    #[inline]
    pub(crate) fn next_record(&mut self) -> Result<Option<(u8, usize)>, FormatError> {
        loop {
            let Some((id, at)) = self.file.next_type()? else {
                return Ok(None);
            };
            match id {
                0x05 => {
                    self.raw_time = self.file.cur.u64_full("timestamp")?;
                    self.time = self.local.correct(self.raw_time);
                }
                0x06 => self.attributes = self.attribute_list()?,
                0x03 | 0x04 => {
                    return Err(self
                        .file
                        .cur
                        .error_at(at, format!("unexpected buffer record 0x{id:02x} inside a chunk")))
                }
                _ => {
                    self.read += 1;
                    return Ok(Some((id, at)));
                }
            }
        }
    }

    /// The rest of the current chunk, for the whole-record decoders ([`hot_p2p`]...), and the file offset of its first
    /// byte; empty at the end of the file and in big-endian chunks.
    #[inline]
    pub(crate) fn hot_bytes(&self) -> (&'a [u8], usize) {
        (self.file.rest_of_chunk(), self.file.cur.pos)
    }

    /// The location's local definitions (id maps, clock offsets).
    #[inline]
    pub(crate) fn local_defs(&self) -> &'a LocalDefs {
        self.local
    }

    /// The raw time of the last timestamp record (0 before the first).
    #[inline]
    pub(crate) fn raw_time(&self) -> u64 {
        self.raw_time
    }

    /// Move past `len` bytes of whole records decoded by the whole-record decoders from
    /// [`LocationEvents::hot_bytes`], `events` event records among them, the last timestamp
    /// read being `raw_time` (corrected: `time`). No attribute list is among them, and none is
    /// pending: those decoders decode none, and each event drops the one before it.
    #[inline]
    pub(crate) fn skip_decoded(&mut self, len: usize, events: u64, raw_time: u64, time: u64) {
        self.file.skip(len);
        self.read += events;
        self.raw_time = raw_time;
        self.time = time;
    }

    /// Clock-corrected time of the current event, in ticks.
    #[inline]
    pub(crate) fn time(&self) -> u64 {
        self.time
    }

    /// The attributes of the current event (empty when it has none).
    pub(crate) fn take_attributes(&mut self) -> Vec<AttributeValue> {
        std::mem::take(&mut self.attributes)
    }

    /// The attribute list record of an event that the caller does not keep is dropped here,
    /// so that it does not stick to the next event.
    #[inline]
    pub(crate) fn drop_attributes(&mut self) {
        if !self.attributes.is_empty() {
            self.attributes.clear();
        }
    }

    fn next_event(&mut self) -> Result<Option<Event>, FormatError> {
        let Some((id, at)) = self.next_record()? else {
            return Ok(None);
        };
        let kind = self.decode(id)?;
        Ok(Some(Event {
            time: self.time,
            offset: at as u64,
            attributes: self.take_attributes(),
            kind,
        }))
    }
}

impl Iterator for LocationEvents<'_> {
    type Item = Result<Event, FormatError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.next_event() {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests;
