//! The records of a `.bin` file decoded one at a time: each call record's fields read in the
//! order its [`super::CallSpec`] gives, with every length checked against what remains.

use super::*;

/// Iterator over the records of a [`BinFile`].
pub struct Records<'a, 'f> {
    pub(super) file: &'f BinFile<'a>,
    pub(super) cur: Cursor<'a>,
    pub(super) done: bool,
}

impl Records<'_, '_> {
    /// Byte offset of the next record.
    pub fn position(&self) -> usize {
        self.cur.pos
    }

    /// Decode the next record into `rec`, reusing its buffers (no allocation per record for
    /// calls without array arguments). Returns `false` at `END_OF_STREAM` and after an error.
    pub fn next_into(&mut self, rec: &mut Record) -> Result<bool, FormatError> {
        if self.done {
            return Ok(false);
        }
        match self.decode_into(rec) {
            Ok(more) => {
                self.done = !more;
                Ok(more)
            }
            Err(e) => {
                self.done = true;
                Err(e)
            }
        }
    }

    fn decode_into(&mut self, rec: &mut Record) -> Result<bool, FormatError> {
        if !self.decode_head(rec)? {
            return Ok(false);
        }
        self.decode_args(rec)?;
        Ok(true)
    }

    /// Run one decoding step; an error ends the stream like [`Records::next_into`] does.
    #[inline(always)]
    fn step<T>(&mut self, r: Result<T, FormatError>) -> Result<T, FormatError> {
        if r.is_err() {
            self.done = true;
        }
        r
    }

    /// Decode the part every record starts with (call id, mask, thread, times, PAPI values)
    /// into `rec` and clear its arguments. The arguments come next: [`Records::args_into`]
    /// decodes them with the generic per-field loop, the hot decoders ([`Records::p2p_args`],
    /// [`Records::wait_args`], [`Records::requests_args`]) the layouts met on nearly every
    /// record. Returns `false` at `END_OF_STREAM` and after an error.
    #[inline(always)]
    pub(crate) fn head_into(&mut self, rec: &mut Record) -> Result<bool, FormatError> {
        if self.done {
            return Ok(false);
        }
        let r = self.decode_head(rec);
        let more = self.step(r)?;
        self.done = !more;
        Ok(more)
    }

    /// The arguments of the record whose head [`Records::head_into`] just decoded, by the
    /// generic per-field loop over its call spec.
    pub(crate) fn args_into(&mut self, rec: &mut Record) -> Result<(), FormatError> {
        let r = self.decode_args(rec);
        self.step(r)
    }

    #[inline(always)]
    fn decode_head(&mut self, rec: &mut Record) -> Result<bool, FormatError> {
        let c = &mut self.cur;
        let offset = c.pos;
        if c.remaining() == 0 {
            return Err(c.err(offset, "call stream ends without an END_OF_STREAM record"));
        }
        let call = c.u16("call id")?;
        if call == END_OF_STREAM {
            return Ok(false);
        }
        let spec = call_spec(call).ok_or_else(|| c.err(offset, format!("unknown DUMPI call id {call}")))?;
        let mask = c.u8("record mask")?;
        let thread = if mask & MASK_THREAD != 0 {
            c.u16("thread id")?
        } else {
            0
        };
        let cpu = if mask & MASK_CPU_TIME != 0 {
            Some(c.interval(self.file.cpu_bias)?)
        } else {
            None
        };
        let wall = if mask & MASK_WALL_TIME != 0 {
            Some(c.interval(self.file.wall_bias)?)
        } else {
            None
        };
        let perf = &mut rec.perf;
        perf.clear();
        if mask & MASK_PERF != 0 {
            let n = c.u8("PAPI counter count")? as usize;
            for _ in 0..n {
                perf.push((c.u64("PAPI value")?, c.u64("PAPI value")?));
            }
        }
        rec.args.clear();
        rec.offset = offset as u64;
        rec.call = call;
        rec.mask = mask;
        rec.thread = thread;
        rec.cpu = cpu;
        rec.wall = wall;
        rec.spec = spec;
        Ok(true)
    }

    fn decode_args(&mut self, rec: &mut Record) -> Result<(), FormatError> {
        let c = &mut self.cur;
        let version = self.file.header.version;
        let mask = rec.mask;
        let args = &mut rec.args;
        args.clear();
        for field in rec.spec.fields {
            if let Some((a, b)) = field.only_if_equal {
                if args[a] != args[b] {
                    args.push(Value::Absent);
                    continue;
                }
            }
            let what = field.name;
            // Scalars first and pushed directly: most fields are scalars, and building the
            // value on the stack before the push costs a stalled copy per field.
            let x = match field.kind {
                FieldKind::I32 => c.i32(what)? as i64,
                FieldKind::U16 => c.u16(what)? as i64,
                FieldKind::U8 => c.u8(what)? as i64,
                FieldKind::U64 => c.u64(what)? as i64,
                kind => {
                    let v = Self::compound(c, kind, what, mask, version, args)?;
                    args.push(v);
                    continue;
                }
            };
            args.push(Value::Int(x));
        }
        Ok(())
    }

    /// The head of the next record when its call has a hot layout (`hot[call id]`), it carries
    /// no PAPI values and its head lies whole in the stream: call id, mask, thread and the
    /// interval the model takes (wall clock, else CPU), decoded with one bounds check. `None`
    /// (nothing consumed) for every other record, the end of the stream and any head cut short:
    /// [`Records::head_into`] then decodes it, or reports the error, as for any record.
    #[inline(always)]
    pub(crate) fn hot_head(&mut self, hot: &[Option<Hot>]) -> Option<HotHead> {
        if self.done {
            return None;
        }
        let c = &mut self.cur;
        let b = c.peek::<3>()?;
        let call = be_u16(b, 0);
        let layout = (*hot.get(call as usize)?)?;
        let mask = b[2];
        if mask & MASK_PERF != 0 {
            return None;
        }
        let with_thread = mask & MASK_THREAD != 0;
        let with_cpu = mask & MASK_CPU_TIME != 0;
        let with_wall = mask & MASK_WALL_TIME != 0;
        let len = 3 + 2 * with_thread as usize + 12 * (with_cpu as usize + with_wall as usize);
        if c.remaining() < len {
            return None;
        }
        let mut at = c.pos + 3;
        let bytes = c.bytes;
        let thread = if with_thread {
            at += 2;
            u16::from_be_bytes([bytes[at - 2], bytes[at - 1]])
        } else {
            0
        };
        let interval = |at: usize, bias: u32| {
            let b: [u8; 12] = bytes[at..at + 12].try_into().expect("12 bytes");
            Interval {
                start: Clock {
                    sec: bias as u64 + be_u16(b, 0) as u64,
                    nsec: be_i32(b, 2) as u32,
                },
                stop: Clock {
                    sec: bias as u64 + be_u16(b, 6) as u64,
                    nsec: be_i32(b, 8) as u32,
                },
            }
        };
        let time = if with_wall {
            Some(interval(at + 12 * with_cpu as usize, self.file.wall_bias))
        } else if with_cpu {
            Some(interval(at, self.file.cpu_bias))
        } else {
            None
        };
        c.pos += len;
        Some(HotHead {
            call,
            hot: layout,
            mask,
            thread,
            time,
        })
    }

    /// Hot decoder for the point-to-point layout `count, datatype, peer, tag, comm`, then
    /// `request` when `with_request` (non-blocking and persistent calls), then a status when
    /// `with_status` (`MPI_Recv`; its first status, if recorded, lands in `status`). One bounds
    /// check covers the fixed part; a record too short for it is decoded field by field so the
    /// error names the field and offset exactly as the generic loop does.
    #[inline(always)]
    pub(crate) fn p2p_args(
        &mut self,
        spec: &CallSpec,
        mask: u8,
        with_request: bool,
        with_status: bool,
        status: &mut Vec<Status>,
    ) -> Result<P2pArgs, FormatError> {
        let r = self.decode_p2p(spec, mask, with_request, with_status, status);
        self.step(r)
    }

    #[inline(always)]
    fn decode_p2p(
        &mut self,
        spec: &CallSpec,
        mask: u8,
        with_request: bool,
        with_status: bool,
        status: &mut Vec<Status>,
    ) -> Result<P2pArgs, FormatError> {
        let c = &mut self.cur;
        let args = if let Some(b) = c.peek::<20>().filter(|_| with_request) {
            c.pos += 20;
            P2pArgs {
                count: be_i32(b, 0),
                datatype: be_u16(b, 4),
                peer: be_i32(b, 6),
                tag: be_i32(b, 10),
                comm: be_u16(b, 14),
                request: be_i32(b, 16),
            }
        } else if let Some(b) = c.peek::<16>().filter(|_| !with_request) {
            c.pos += 16;
            P2pArgs {
                count: be_i32(b, 0),
                datatype: be_u16(b, 4),
                peer: be_i32(b, 6),
                tag: be_i32(b, 10),
                comm: be_u16(b, 14),
                request: 0,
            }
        } else {
            // Too short for the fixed part: the field-by-field reads report where it ends.
            let name = |i: usize| spec.fields.get(i).map_or("argument", |f| f.name);
            P2pArgs {
                count: c.i32(name(0))?,
                datatype: c.u16(name(1))?,
                peer: c.i32(name(2))?,
                tag: c.i32(name(3))?,
                comm: c.u16(name(4))?,
                request: if with_request { c.i32(name(5))? } else { 0 },
            }
        };
        status.clear();
        if with_status {
            c.statuses_into(mask, self.file.header.version, "status", status)?;
        }
        Ok(args)
    }

    /// Hot decoder for `MPI_Wait` (`request, status`) and `MPI_Test` (`request, flag, status`,
    /// when `with_flag`): returns the request and the flag (1 for `MPI_Wait`); the recorded
    /// statuses land in `statuses` (empty when none were recorded or they were ignored).
    #[inline(always)]
    pub(crate) fn wait_args(
        &mut self,
        mask: u8,
        with_flag: bool,
        statuses: &mut Vec<Status>,
    ) -> Result<(i32, i32), FormatError> {
        let r = (|| {
            let c = &mut self.cur;
            let request = c.i32("request")?;
            let flag = if with_flag { c.i32("flag")? } else { 1 };
            statuses.clear();
            c.statuses_into(mask, self.file.header.version, "status", statuses)?;
            Ok((request, flag))
        })();
        self.step(r)
    }

    /// Hot decoder for `MPI_Waitall` (`count, requests, statuses`) and `MPI_Testall` (`count,
    /// requests, flag, statuses`, when `with_flag`): the requests land in `requests`, the
    /// recorded statuses in `statuses`; returns the flag (1 for `MPI_Waitall`).
    #[inline(always)]
    pub(crate) fn requests_args(
        &mut self,
        mask: u8,
        with_flag: bool,
        requests: &mut Vec<i32>,
        statuses: &mut Vec<Status>,
    ) -> Result<i32, FormatError> {
        let r = (|| {
            let c = &mut self.cur;
            c.i32("count")?;
            requests.clear();
            let n = c.len("requests", 4)?;
            let bytes = c.take(4 * n, "requests")?;
            requests.extend(
                bytes
                    .chunks_exact(4)
                    .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            );
            let flag = if with_flag { c.i32("flag")? } else { 1 };
            statuses.clear();
            c.statuses_into(mask, self.file.header.version, "statuses", statuses)?;
            Ok(flag)
        })();
        self.step(r)
    }

    /// Decode one array, string or status field (everything but the scalars).
    fn compound(
        c: &mut Cursor,
        kind: FieldKind,
        what: &str,
        mask: u8,
        version: (u8, u8, u8),
        args: &[Value],
    ) -> Result<Value, FormatError> {
        Ok({
            match kind {
                // Scalars are decoded by the caller.
                FieldKind::I32 | FieldKind::U16 | FieldKind::U8 | FieldKind::U64 => Value::Absent,
                FieldKind::I32Arr => Value::Ints(c.i32s(what)?),
                FieldKind::U16Arr => {
                    let n = c.len(what, 2)?;
                    Value::Ints(
                        (0..n)
                            .map(|_| c.u16(what).map(|v| v as i32))
                            .collect::<Result<_, _>>()?,
                    )
                }
                FieldKind::U8Arr => {
                    let n = c.len(what, 1)?;
                    Value::Ints((0..n).map(|_| c.u8(what).map(|v| v as i32)).collect::<Result<_, _>>()?)
                }
                FieldKind::I32Arr2 => {
                    let n = c.len(what, 4)?;
                    Value::IntRows((0..n).map(|_| c.i32s(what)).collect::<Result<_, _>>()?)
                }
                FieldKind::Str => Value::Str(c.str32(what)?),
                FieldKind::StrArr => {
                    let n = c.len(what, 4)?;
                    Value::Strs((0..n).map(|_| c.str32(what)).collect::<Result<_, _>>()?)
                }
                FieldKind::StrArr2 => {
                    let n = c.len(what, 4)?;
                    let mut rows = Vec::with_capacity(n);
                    for _ in 0..n {
                        let m = c.len(what, 4)?;
                        rows.push((0..m).map(|_| c.str32(what)).collect::<Result<_, _>>()?);
                    }
                    Value::StrRows(rows)
                }
                FieldKind::Status | FieldKind::Statuses => {
                    let mut list = Vec::new();
                    if c.statuses_into(mask, version, what, &mut list)? {
                        Value::Statuses(Some(list))
                    } else {
                        Value::Statuses(None)
                    }
                }
                FieldKind::Argv => {
                    if !version_at_least(version, (0, 6, 2)) {
                        c.i32("repeated argc")?;
                    }
                    let argc = match args.last() {
                        Some(Value::Int(n)) => *n,
                        _ => 0,
                    };
                    if argc < 0 || (argc as usize).saturating_mul(4) > c.remaining() {
                        return Err(c.err(c.pos, format!("argc {argc} does not fit in the remaining bytes")));
                    }
                    Value::Strs((0..argc).map(|_| c.str32(what)).collect::<Result<_, _>>()?)
                }
                FieldKind::I32ArrSince(a, b, d) => {
                    if version_at_least(version, (a, b, d)) {
                        Value::Ints(c.i32s(what)?)
                    } else {
                        Value::Ints(vec![c.i32(what)?])
                    }
                }
            }
        })
    }
}

impl Iterator for Records<'_, '_> {
    type Item = Result<Record, FormatError>;
    fn next(&mut self) -> Option<Self::Item> {
        let mut rec = Record::empty();
        match self.next_into(&mut rec) {
            Ok(true) => Some(Ok(rec)),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }
}
