//! The event loop of one location: the direct path for the hot records and the general decoder,
//! regions entered and left, MPI calls and the call paths that enclose them.

use super::*;

impl Builder<'_, '_> {
    /// The first location ending in an error: the part stops there.
    pub(super) fn fail(&mut self, index: usize, e: FormatError) {
        self.run.failed_at.fetch_min(index, Ordering::Relaxed);
        self.part.failure = Some((index, e));
    }

    #[inline]
    pub(super) fn region(&self, id: u32, file: &str, offset: u64) -> Result<usize, FormatError> {
        let shared = self.shared;
        let found = if shared.region_by_id.is_empty() {
            shared.defs.regions.position(id)
        } else {
            shared
                .region_by_id
                .get(id as usize)
                .filter(|&&p| p != u32::MAX)
                .map(|&p| p as usize)
        };
        found.ok_or_else(|| FormatError::at_offset(file, offset, format!("event refers to undefined region {id}")))
    }

    /// The region (global id) of calling context `id`, or an error naming the file.
    pub(super) fn context_region(&self, id: u32, file: &str, offset: u64) -> Result<u32, FormatError> {
        match self.shared.defs.calling_contexts.get(id) {
            Some(cc) => Ok(cc.region),
            None => Err(FormatError::at_offset(
                file,
                offset,
                format!("event refers to undefined calling context {id}"),
            )),
        }
    }

    /// The part's id of MPI function `name` and its kind, interning and classifying it once.
    pub(super) fn function(&mut self, name: &str) -> (FuncId, CallKind) {
        let part = &mut self.part;
        let f = part.functions.intern(name);
        if f as usize == part.function_kinds.len() {
            part.function_kinds.push(CallKind::classify(name));
            part.first_use.functions.push(self.at_location);
        }
        (f, part.function_kinds[f as usize])
    }

    /// Append a call of MPI function `name` to the rank in `slot`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push_named_call(
        &mut self,
        slot: usize,
        name: &str,
        enter: Time,
        exit: Time,
        path: CallpathId,
        loc: u16,
    ) -> CallIdx {
        let (f, kind) = self.function(name);
        let exit = exit.max(enter);
        let rt = &mut self.part.ranks[slot];
        rt.extend_span(enter, exit);
        self.stage.push_call(
            rt,
            CallRow {
                func: f,
                kind,
                enter,
                exit,
                callpath: path,
                location: loc,
            },
        )
    }

    /// The call path of the open user regions, interned through a hash index (the model's
    /// linear [`Trace::intern_callpath`] would be quadratic), depth- and size-limited.
    #[inline(always)]
    pub(super) fn callpath(&mut self, st: &mut LocationState) -> CallpathId {
        match st.path {
            Some(p) => p,
            None => self.new_callpath(st),
        }
    }

    /// [`Builder::callpath`] after the open user regions changed.
    #[inline(never)]
    pub(super) fn new_callpath(&mut self, st: &mut LocationState) -> CallpathId {
        let path = if st.user_path.len() > MAX_CALLPATH_DEPTH {
            self.part.counters.deep_paths += 1;
            &st.user_path[..MAX_CALLPATH_DEPTH]
        } else {
            &st.user_path[..]
        };
        let p = match self.callpath_index.get(path) {
            Some(&p) => p,
            None => {
                let need = path.len() + 1;
                let before = self.run.callpath_storage.fetch_add(need, Ordering::Relaxed);
                if before + path.len() > MAX_CALLPATH_STORAGE {
                    if self.run.several {
                        self.part.over_budget = true;
                    } else {
                        self.run.callpath_storage.fetch_sub(need, Ordering::Relaxed);
                    }
                    self.part.counters.dropped_paths += 1;
                    NO_CALLPATH
                } else {
                    let p = self.part.callpaths.len() as CallpathId;
                    self.part.callpaths.push(path.to_vec());
                    self.part.first_use.callpaths.push(self.at_location);
                    self.callpath_index.insert(path.to_vec(), p);
                    p
                }
            }
        };
        st.path = Some(p);
        p
    }

    /// The innermost open MPI call, or a new call named `name` at `t` for MPI events recorded
    /// outside any MPI region.
    #[inline(always)]
    pub(super) fn current_call(&mut self, st: &mut LocationState, here: Here, name: &str, t: Time) -> CallIdx {
        match st.open_calls.last() {
            Some(&c) => c,
            None => self.call_outside_mpi(st, here, name, t),
        }
    }

    /// [`Builder::current_call`] outside any MPI region: a call of its own.
    #[inline(never)]
    pub(super) fn call_outside_mpi(&mut self, st: &mut LocationState, here: Here, name: &str, t: Time) -> CallIdx {
        let path = self.callpath(st);
        self.push_named_call(here.slot, name, t, t, path, here.loc)
    }

    /// Read the events of location `index`, of the rank in `slot` as its location `loc`;
    /// `report` as for [`read_part`], `before` the part's bytes before this location. The
    /// rank's new rows go through [`Builder::stage`], written to its columns when it fills and
    /// when the location ends (whether it was read whole or not).
    pub(super) fn read_location(
        &mut self,
        index: usize,
        (rank, slot, loc): (Rank, usize, u16),
        report: &mut dyn FnMut(usize, Option<u64>, u64) -> bool,
        before: u64,
    ) -> Result<(), FormatError> {
        self.stage.begin(&self.part.ranks[slot]);
        let result = self.read_location_events(index, (rank, slot, loc), report, before);
        self.stage.flush(&mut self.part.ranks[slot]);
        result
    }

    /// [`Builder::read_location`] with the stage open.
    pub(super) fn read_location_events(
        &mut self,
        index: usize,
        (rank, slot, loc): (Rank, usize, u16),
        report: &mut dyn FnMut(usize, Option<u64>, u64) -> bool,
        before: u64,
    ) -> Result<(), FormatError> {
        let archive = self.shared.archive;
        let Some(mut events) = archive.events_in(index, self.files)? else {
            return Ok(());
        };
        let file = events.file_name();
        let rows = reserved_rows(self.shared, self.files, index);
        self.part.ranks[slot].reserve(rows, rows, 0);
        let mut st = LocationState::default();
        self.local_regions.clear();
        let mut seen = Seen {
            n: 0,
            first: Time::MAX,
            latest: Time::MIN,
            last: 0,
        };
        let here = Here { rank, slot, loc, file };
        let clock = self.shared.clock;
        let hot = !self.shared.general_only;
        loop {
            if hot {
                self.hot_run(&mut events, &mut st, here, &mut seen, (index, report, before))?;
            }
            let Some((id, at)) = events.next_record()? else {
                break;
            };
            let off = at as u64;
            let t = clock.ns(events.time());
            seen.event(t);
            if seen.n.is_multiple_of(PROGRESS_EVERY) && !report(index, Some(off), before) {
                return Err(FormatError::cancelled(file));
            }
            // The hot records the whole-record decoder left (chunk ends, attribute lists, rare
            // encodings) go straight from their payload to the columns; the rest through the
            // general decoder and its EventKind.
            match id {
                12 if hot => {
                    let region = events.region_payload()?;
                    self.enter(&mut st, here, region, t, off)?;
                }
                13 if hot => {
                    let region = events.region_payload()?;
                    self.leave(&mut st, here, region, t, off)?;
                }
                14 | 18 if hot => {
                    let p = events.p2p_payload(id, false)?;
                    self.blocking(&mut st, here, id == 14, p, t, off)?;
                }
                15 if hot => {
                    let p = events.p2p_payload(id, true)?;
                    self.isend(&mut st, here, p, t, off)?;
                }
                16 if hot => {
                    let request = events.request_payload()?;
                    self.isend_complete(&mut st, here, request, t);
                }
                17 if hot => {
                    let request = events.request_payload()?;
                    self.irecv_request(&mut st, here, request, t);
                }
                19 if hot => {
                    let p = events.p2p_payload(id, true)?;
                    self.irecv(&mut st, here, p, t, off)?;
                }
                _ => {
                    let kind = events.decode(id)?;
                    self.event(&mut st, here, kind, t, off)?;
                }
            }
            events.drop_attributes();
        }
        if seen.n > 0 {
            self.part.ranks[slot].extend_span(seen.first, seen.latest);
        }
        self.end_location(&mut st, index, slot, seen.last, &events);
        Ok(())
    }

    /// Decode the records of the current chunk whole, straight from its bytes, while they are
    /// timestamps and hot records in their common encoding with [`HOT_WINDOW`] bytes of chunk
    /// left; stops before the first other record (the caller reads it the general way). Each
    /// region id is resolved once per location ([`Builder::local_region`]); timestamps are
    /// converted once, not once per event.
    #[inline(never)]
    pub(super) fn hot_run(
        &mut self,
        events: &mut LocationEvents,
        st: &mut LocationState,
        here: Here,
        seen: &mut Seen,
        (index, report, before): (usize, &mut Report, u64),
    ) -> Result<(), FormatError> {
        let (bytes, base) = events.hot_bytes();
        if bytes.len() < HOT_WINDOW {
            return Ok(());
        }
        let local = events.local_defs();
        let offsets = local.clock_offsets.len() >= 2;
        let clock = self.shared.clock;
        let mut raw = events.raw_time();
        let mut ticks = events.time();
        let mut t = clock.ns(ticks);
        let mut p = 0;
        let Seen {
            mut n,
            mut first,
            mut latest,
            mut last,
        } = *seen;
        let n0 = n;
        // One event at `t`, record at `$p`: counted, its time kept, progress reported.
        macro_rules! event {
            ($p:expr) => {{
                n += 1;
                last = t;
                first = first.min(t);
                latest = latest.max(t);
                if n.is_multiple_of(PROGRESS_EVERY) && !report(index, Some((base + $p) as u64), before) {
                    break Err(FormatError::cancelled(here.file));
                }
            }};
        }
        let result = loop {
            let Some(window) = bytes.get(p..p + HOT_WINDOW) else {
                break Ok(());
            };
            let window: &[u8; HOT_WINDOW] = window.try_into().expect("HOT_WINDOW bytes");
            let off = (base + p) as u64;
            let id = window[0];
            let done = match id {
                0x05 => {
                    let (r, len) = hot_timestamp(window);
                    raw = r;
                    ticks = if offsets { local.correct(r) } else { r };
                    t = clock.ns(ticks);
                    p += len;
                    continue;
                }
                12 | 13 => {
                    let Some((region, len)) = hot_single(window, 4) else {
                        break Ok(());
                    };
                    event!(p);
                    let pos = match self.local_region(local, region as u32, here.file, off) {
                        Ok(pos) => pos,
                        Err(e) => break Err(e),
                    };
                    match id {
                        12 => self.enter_at(st, here, pos, t),
                        _ => self.leave_at(st, here, t),
                    }
                    p += len;
                    continue;
                }
                16 | 17 => {
                    let Some((request, len)) = hot_single(window, 8) else {
                        break Ok(());
                    };
                    event!(p);
                    match id {
                        16 => self.isend_complete(st, here, request, t),
                        _ => self.irecv_request(st, here, request, t),
                    }
                    p += len;
                    continue;
                }
                14 | 18 => {
                    let Some((mut payload, len)) = hot_p2p(window, bytes.len() - p, false) else {
                        break Ok(());
                    };
                    event!(p);
                    payload.comm = local.map32(MAP_COMM, payload.comm);
                    p += len;
                    self.blocking(st, here, id == 14, payload, t, off)
                }
                15 | 19 => {
                    let Some((mut payload, len)) = hot_p2p(window, bytes.len() - p, true) else {
                        break Ok(());
                    };
                    event!(p);
                    payload.comm = local.map32(MAP_COMM, payload.comm);
                    p += len;
                    match id {
                        15 => self.isend(st, here, payload, t, off),
                        _ => self.irecv(st, here, payload, t, off),
                    }
                }
                _ => break Ok(()),
            };
            if let Err(e) = done {
                break Err(e);
            }
        };
        *seen = Seen { n, first, latest, last };
        events.skip_decoded(p, n - n0, raw, ticks);
        result
    }

    /// Position in the region table of the location's local region id `id`: a table load once
    /// the location met the id, else mapped and looked up as the general path does (its error
    /// for an undefined region included).
    #[inline(always)]
    pub(super) fn local_region(
        &mut self,
        local: &LocalDefs,
        id: u32,
        file: &str,
        off: u64,
    ) -> Result<usize, FormatError> {
        match self.local_regions.get(id as usize) {
            Some(&pos) if pos != u32::MAX => Ok(pos as usize),
            _ => self.resolve_local_region(local, id, file, off),
        }
    }

    /// [`Builder::local_region`] for an id the location has not met: remembered when the id is
    /// small enough for a table (ids at most a few times the region count, as definitions
    /// number them), so that a hostile id cannot make the table huge.
    #[cold]
    #[inline(never)]
    pub(super) fn resolve_local_region(
        &mut self,
        local: &LocalDefs,
        id: u32,
        file: &str,
        off: u64,
    ) -> Result<usize, FormatError> {
        let pos = self.region(local.map32(MAP_REGION, id), file, off)?;
        let id = id as usize;
        if id < 4 * self.shared.regions.len() + 1024 {
            if self.local_regions.len() <= id {
                self.local_regions.resize(id + 1, u32::MAX);
            }
            self.local_regions[id] = pos as u32;
        }
        Ok(pos)
    }

    /// Any event, by its decoded kind (the general path).
    pub(super) fn event(
        &mut self,
        st: &mut LocationState,
        here: Here,
        kind: EventKind,
        t: Time,
        off: u64,
    ) -> Result<(), FormatError> {
        let Here { slot, loc, file, .. } = here;
        let p2p = |peer, comm, tag, length, request| P2pPayload {
            peer,
            comm,
            tag,
            length,
            request,
        };
        match kind {
            EventKind::Enter { region } => self.enter(st, here, region, t, off)?,
            EventKind::Leave { region } => self.leave(st, here, region, t, off)?,
            // As the official reader does for a reader without calling-context callbacks: the
            // enter or leave of the context's region (OTF2_GlobalEvtReader's conversion).
            EventKind::CallingContextEnter { context, .. } => {
                let region = self.context_region(context, file, off)?;
                self.enter(st, here, region, t, off)?
            }
            EventKind::CallingContextLeave { context } => {
                let region = self.context_region(context, file, off)?;
                self.leave(st, here, region, t, off)?
            }
            EventKind::MpiSend {
                receiver,
                comm,
                tag,
                length,
            } => self.blocking(st, here, true, p2p(receiver, comm, tag, length, 0), t, off)?,
            EventKind::MpiRecv {
                sender,
                comm,
                tag,
                length,
            } => self.blocking(st, here, false, p2p(sender, comm, tag, length, 0), t, off)?,
            EventKind::MpiIsend {
                receiver,
                comm,
                tag,
                length,
                request,
            } => self.isend(st, here, p2p(receiver, comm, tag, length, request), t, off)?,
            EventKind::MpiIsendComplete { request } => self.isend_complete(st, here, request, t),
            EventKind::MpiIrecvRequest { request } => self.irecv_request(st, here, request, t),
            EventKind::MpiIrecv {
                sender,
                comm,
                tag,
                length,
                request,
            } => self.irecv(st, here, p2p(sender, comm, tag, length, request), t, off)?,
            EventKind::MpiRequestCancelled { request } => {
                let reqs = &mut self.requests[slot];
                if reqs.isends.take(request, loc).is_none() {
                    if let Some(row) = reqs.irecvs.take(request, loc) {
                        reqs.cancelled_recvs.push(row);
                    }
                }
            }
            EventKind::MpiCollectiveBegin => st.collective_begin = Some(t),
            EventKind::MpiCollectiveEnd {
                op,
                comm,
                root,
                sent,
                received,
            } => {
                let begin = st.collective_begin.take().unwrap_or(t);
                let call = st.open_calls.last().copied();
                self.collective(here, st, call, begin, t, (op, comm, root, sent, received), off)?;
            }
            EventKind::NonBlockingCollectiveRequest { request } => {
                let start = (st.open_calls.last().copied(), t);
                self.requests[slot].collectives.insert(request, loc, start);
            }
            EventKind::NonBlockingCollectiveComplete {
                op,
                comm,
                root,
                sent,
                received,
                request,
            } => {
                let (call, begin) = match self.requests[slot].collectives.take(request, loc) {
                    Some((call, begin)) => (call, begin),
                    None => (st.open_calls.last().copied(), t),
                };
                self.collective(here, st, call, begin, t, (op, comm, root, sent, received), off)?;
            }
            EventKind::Metric { metric, values } => self.metric(slot, metric, &values, t, file, off)?,
            EventKind::ProgramBegin { name, arguments } if self.part.program.is_none() => {
                let defs = self.shared.defs;
                let mut cmd = defs.string(name).to_owned();
                for a in arguments {
                    cmd.push(' ');
                    cmd.push_str(defs.string(a));
                }
                self.part.program = Some((self.at_location, cmd));
            }
            EventKind::Unknown { .. } => self.part.counters.unknown_events += 1,
            _ => {}
        }
        Ok(())
    }

    /// Enter of region id `region` (global).
    #[inline]
    pub(super) fn enter(
        &mut self,
        st: &mut LocationState,
        here: Here,
        region: u32,
        t: Time,
        off: u64,
    ) -> Result<(), FormatError> {
        let pos = self.region(region, here.file, off)?;
        self.enter_at(st, here, pos, t);
        Ok(())
    }

    /// Enter of the region at `pos` in the region table: a call if the region is an MPI
    /// function, else one more level of the call path.
    #[inline]
    pub(super) fn enter_at(&mut self, st: &mut LocationState, here: Here, pos: usize, t: Time) {
        let Here { slot, loc, .. } = here;
        let shared = self.shared;
        if self.regions[pos].mpi {
            let path = self.callpath(st);
            let (func, kind) = match self.regions[pos].func {
                Some(known) => known,
                None => {
                    let known = self.function(&shared.regions[pos].name);
                    self.regions[pos].func = Some(known);
                    known
                }
            };
            let row = CallRow {
                func,
                kind,
                enter: t,
                exit: t,
                callpath: path,
                location: loc,
            };
            let c = self.stage.push_call(&mut self.part.ranks[slot], row);
            st.open_calls.push(c);
            st.stack.push(Some(c));
        } else {
            let mut rid = self.regions[pos].trace_region;
            if rid == NO_REGION {
                rid = self.part.regions.intern(&shared.regions[pos].name);
                if rid as usize == self.part.first_use.regions.len() {
                    self.part.first_use.regions.push(self.at_location);
                }
                self.regions[pos].trace_region = rid;
            }
            st.user_path.push(rid);
            st.path = None;
            st.stack.push(None);
        }
    }

    /// Leave of region id `region` (global; checked to be defined).
    #[inline]
    pub(super) fn leave(
        &mut self,
        st: &mut LocationState,
        here: Here,
        region: u32,
        t: Time,
        off: u64,
    ) -> Result<(), FormatError> {
        self.region(region, here.file, off)?;
        self.leave_at(st, here, t);
        Ok(())
    }

    /// Leave: the innermost open call ends, or one level of the call path is left.
    #[inline]
    pub(super) fn leave_at(&mut self, st: &mut LocationState, here: Here, t: Time) {
        let slot = here.slot;
        match st.stack.pop() {
            None => self.part.counters.unbalanced_leaves += 1,
            Some(Some(c)) => {
                st.open_calls.pop();
                self.stage.end_call(&mut self.part.ranks[slot], c, t);
            }
            Some(None) => {
                st.user_path.pop();
                st.path = None;
            }
        }
    }
}
