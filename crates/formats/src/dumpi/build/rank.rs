//! Reading one rank's file on its own: the records, their times and threads, the calls they
//! make, into a [`RankPart`].

use super::*;

/// Read rank `rank`'s file (one of `world` ranks) into a [`RankPart`], filling `columns` (empty,
/// usually [`reserved_columns`]); `general_only` decodes every record with the generic per-field
/// loop; times are stored minus `time_base` (see [`first_time`]). `advance` is told the bytes
/// read so far now and then and cancels the read by returning false.
#[allow(clippy::too_many_arguments)]
pub(crate) fn read_rank(
    rank: Rank,
    world: Rank,
    file: &BinFile,
    columns: RankTrace,
    time_base: u64,
    general_only: bool,
    advance: &mut dyn FnMut(u64) -> bool,
) -> Result<RankPart, FormatError> {
    let mut reader = RankReader {
        rank,
        rt: RankTrace { rank, ..columns },
        st: RankState {
            callpath: NO_CALLPATH,
            unresolved: Unresolved {
                time_base,
                all_world: true,
                ..Unresolved::default()
            },
            ..RankState::default()
        },
        world,
        functions: Interner::default(),
        regions: Interner::default(),
        callpaths: Vec::new(),
        callpath_ids: HashMap::new(),
        metrics: Interner::default(),
        comms: Derivations::default(),
        warnings: HashMap::new(),
        min_time: u64::MAX,
        call_ops: vec![None; END_OF_STREAM as usize + 1],
        hot: vec![None; END_OF_STREAM as usize + 1],
        span: (u64::MAX, 0),
        function_names: file.functions.iter().cloned().collect(),
        general_only,
    };
    reader.comms.intern(Derivation::World);
    reader.read_records(file, advance)?;
    Ok(RankPart {
        rank,
        trace: reader.rt,
        unresolved: reader.st.unresolved,
        functions: reader.functions.names().to_vec(),
        regions: reader.regions.names().to_vec(),
        callpaths: reader.callpaths,
        metrics: reader.metrics.names().to_vec(),
        comms: reader.comms,
        warnings: reader.warnings,
        min_time: reader.min_time,
        members_budget: file.len().saturating_mul(4).saturating_add(1 << 16),
        header: file.header.clone(),
    })
}

/// The wall time in ns (else CPU time) of the first record of `file`, as the reader computes it,
/// or `None` when the file has no readable first record. The earliest over all rank files is
/// nearly always the trace's origin, so the reader stores times minus it from the start and
/// usually need not rewrite them once the true origin is known.
pub(crate) fn first_time(file: &BinFile) -> Option<u64> {
    let mut rec = Record::empty();
    if !file.records().head_into(&mut rec).ok()? {
        return None;
    }
    let iv = rec.wall.or(rec.cpu)?;
    Some(iv.start.ns())
}

/// The calls, point-to-point and collective operations `file`'s footer counts, or `None` when
/// it has no footer. The counts are only a hint: they are capped by what the record stream's
/// size can hold, and the columns still grow if a file has more records than its footer says.
pub(super) fn reservation(file: &BinFile) -> Option<(usize, usize, usize)> {
    let counts = file.call_counts()?;
    // No record of a call is shorter than 3 bytes plus its time stamps; 16 bytes per call keeps
    // a hostile footer from reserving more than the file can hold.
    let most = file.stream_len() / 16;
    let (mut calls, mut p2p, mut colls) = (0usize, 0usize, 0usize);
    for spec in CALLS
        .iter()
        .filter(|c| counts.get(c.id as usize).is_some_and(|&n| n > 0))
    {
        let n = counts[spec.id as usize] as usize;
        calls = calls.saturating_add(n);
        match Op::of(spec.name, &mpi_name(spec.name)) {
            Op::Send | Op::Isend | Op::Recv | Op::Irecv | Op::Start => p2p = p2p.saturating_add(n),
            Op::Sendrecv | Op::SendrecvReplace => p2p = p2p.saturating_add(n.saturating_mul(2)),
            Op::Collective(_) => colls = colls.saturating_add(n),
            _ => {}
        }
    }
    Some((calls.min(most), p2p.min(most), colls.min(most)))
}

/// Rank `rank`'s columns with room for what `file`'s footer counts ([`read_rank`] fills them).
/// The reader makes them on the calling thread before the reading threads start: glibc gives
/// each new thread its own heap, grown one `mprotect` at a time per allocation that does not
/// fit, and those calls (about 900 for the 80 MB benchmark set) serialise against the other
/// reading thread's page faults. Reserved here, the columns come from the main heap or their
/// own mappings, made before the threads run.
pub(crate) fn reserved_columns(rank: Rank, file: &BinFile) -> RankTrace {
    let mut rt = RankTrace {
        rank,
        ..RankTrace::default()
    };
    if let Some((calls, p2p, colls)) = reservation(file) {
        rt.reserve(calls, p2p, colls);
    }
    rt
}

/// The name the trace gives a DUMPI call (`MPI_Isend`, `MPIO_File_open`).
pub(super) fn mpi_name(call: &str) -> String {
    match call.strip_prefix("DUMPIO_") {
        Some(io) => format!("MPIO_{io}"),
        None => format!("MPI_{call}"),
    }
}

impl RankReader {
    pub(super) fn warn(&mut self, msg: String) {
        *self.warnings.entry(msg).or_default() += 1;
    }

    /// Read every record of `file` into this part. `advance(bytes)` is told how far into the
    /// file the read is now and then; when it returns false the read stops as cancelled.
    pub(super) fn read_records(
        &mut self,
        file: &BinFile,
        advance: &mut dyn FnMut(u64) -> bool,
    ) -> Result<(), FormatError> {
        // The file's table, then updated by the type constructors as they come (datatypes.rs).
        let mut sizes: Vec<u64> = (0..file.type_sizes.len().max(BUILTIN_SIZES.len()))
            .map(|i| {
                let s = file.type_sizes.get(i).copied().unwrap_or(0).max(0) as u64;
                if s == 0 && i < BUILTIN_SIZES.len() {
                    BUILTIN_SIZES[i]
                } else {
                    s
                }
            })
            .collect();
        if file.type_sizes.is_empty() {
            self.warn(format!(
                "{}: no datatype size table; built-in sizes of a 64-bit machine assumed",
                file.name
            ));
        }
        self.reserve(file);
        // A slot per 64 bytes of records, at most 4096 (32 KiB): libdumpi's handles are
        // consecutive, so this many can be pending at once before two share a slot.
        self.st.pending = RequestTable::with_slots((file.stream_len() / 64).clamp(1, 4096));
        let mut records = file.records();
        let mut next_report = PROGRESS_STEP;
        let mut rec = Record::empty();
        let mut statuses: Vec<Status> = Vec::new();
        let mut requests: Vec<i32> = Vec::new();
        loop {
            if let Some(h) = records.hot_head(&self.hot) {
                let pos = records.position();
                if pos >= next_report {
                    next_report = pos + PROGRESS_STEP;
                    if !advance(pos as u64) {
                        return Err(FormatError::cancelled(file.name));
                    }
                }
                self.hot_record(&mut records, h, &sizes, &mut statuses, &mut requests)?;
                continue;
            }
            if !records.head_into(&mut rec)? {
                break;
            }
            let pos = records.position();
            if pos >= next_report {
                next_report = pos + PROGRESS_STEP;
                if !advance(pos as u64) {
                    return Err(FormatError::cancelled(file.name));
                }
            }
            let hot = match rec.call {
                FUNCTION_ENTER | FUNCTION_EXIT => None,
                _ if self.general_only => None,
                id => {
                    self.call_op(id);
                    self.hot[id as usize]
                }
            };
            // One decoder per hot layout; every other record takes the generic field loop.
            match hot {
                None => {
                    records.args_into(&mut rec)?;
                    follow_constructor(&rec, &mut sizes);
                    self.record(file, &sizes, &rec);
                }
                Some(layout) => {
                    let (op, call) = self.begin_call(file, &rec);
                    let head = HotHead {
                        call: rec.call,
                        hot: layout,
                        mask: rec.mask,
                        thread: rec.thread,
                        time: None,
                    };
                    self.hot_args(&mut records, head, op, call, &sizes, &mut statuses, &mut requests)?;
                }
            }
        }
        if self.span.0 <= self.span.1 {
            self.rt.extend_span(self.span.0, self.span.1);
        }
        let pending = self.st.pending.len() + self.st.shadowed.values().map(Vec::len).sum::<usize>();
        if pending > 0 {
            self.warn(format!(
                "rank {}: {pending} non-blocking operation(s) never completed in the trace",
                self.rank
            ));
        }
        Ok(())
    }

    /// A record whose head [`raw::Records::hot_head`](crate::dumpi::raw::Records::hot_head) decoded:
    /// the call is appended from the head, then its arguments are decoded by the layout's
    /// decoder.
    #[inline(always)]
    pub(super) fn hot_record(
        &mut self,
        records: &mut crate::dumpi::raw::Records,
        h: HotHead,
        sizes: &[u64],
        statuses: &mut Vec<Status>,
        requests: &mut Vec<i32>,
    ) -> Result<(), FormatError> {
        let (enter, exit) = self.times_of(h.time);
        let (op, func, kind) = self.call_op(h.call);
        let loc = self.location(h.thread);
        let callpath = self.st.callpath;
        let call = self.append_call(func, kind, enter, exit, callpath, loc);
        self.hot_args(records, h, op, call, sizes, statuses, requests)
    }

    /// Decode the arguments of a hot record whose call is `call` and act on them.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn hot_args(
        &mut self,
        records: &mut crate::dumpi::raw::Records,
        h: HotHead,
        op: Op,
        call: CallIdx,
        sizes: &[u64],
        statuses: &mut Vec<Status>,
        requests: &mut Vec<i32>,
    ) -> Result<(), FormatError> {
        match h.hot {
            Hot::P2p {
                with_request,
                with_status,
            } => {
                let spec = crate::dumpi::spec::call_spec(h.call).expect("hot ids are known calls");
                let a = records.p2p_args(spec, h.mask, with_request, with_status, statuses)?;
                let recv_init = op == Op::PersistentInit && spec.name == "Recv_init";
                self.p2p_call(call, op, recv_init, a, sizes, statuses.first());
            }
            Hot::Wait { with_flag } => {
                let (request, flag) = records.wait_args(h.mask, with_flag, statuses)?;
                if flag != 0 {
                    self.complete(request, call, statuses.first());
                }
            }
            Hot::All { with_flag } => {
                let flag = records.requests_args(h.mask, with_flag, requests, statuses)?;
                if flag != 0 {
                    self.complete_all(call, requests, statuses);
                }
            }
        }
        Ok(())
    }

    /// Entry and exit of a record in ns (wall clock, else CPU clock). DUMPI stores seconds in 16
    /// bits above a per-file bias, so they wrap after 18.2 hours: a jump back by more than half
    /// the range is taken as a wrap.
    #[inline]
    pub(super) fn times(&mut self, rec: &Record) -> (u64, u64) {
        self.times_of(rec.wall.or(rec.cpu))
    }

    /// [`RankReader::times`] of the interval a record carries (wall clock, else CPU clock).
    #[inline(always)]
    pub(super) fn times_of(&mut self, interval: Option<Interval>) -> (u64, u64) {
        const WRAP: u64 = 1 << 16;
        let Some(iv) = interval else {
            let t = self.st.last_sec.saturating_mul(1_000_000_000);
            return (t, t);
        };
        let st = &mut self.st;
        let mut start = iv.start.sec + st.wrapped;
        if start + WRAP / 2 < st.last_sec {
            st.wrapped += WRAP;
            start += WRAP;
        }
        st.last_sec = start;
        let mut stop = iv.stop.sec + st.wrapped;
        if stop + WRAP / 2 < start {
            stop += WRAP;
        }
        let ns = |sec: u64, nsec: u32| sec.saturating_mul(1_000_000_000).saturating_add(nsec as u64);
        let (a, b) = (ns(start, iv.start.nsec), ns(stop, iv.stop.nsec));
        self.min_time = self.min_time.min(a);
        (a, b)
    }

    #[inline(always)]
    pub(super) fn location(&mut self, thread: u16) -> u16 {
        let st = &mut self.st;
        if let Some((t, loc)) = st.last_thread {
            if t == thread {
                return loc;
            }
        }
        let rt = &mut self.rt;
        let loc = *st.threads.entry(thread).or_insert_with(|| {
            rt.locations.push(Location {
                id: thread as u64,
                name: format!("thread {thread}"),
            });
            (rt.locations.len() - 1) as u16
        });
        st.last_thread = Some((thread, loc));
        loc
    }

    /// What to do with call id `id`, its interned MPI name and its kind (found on first use).
    #[inline]
    pub(super) fn call_op(&mut self, id: u16) -> (Op, FuncId, CallKind) {
        match self.call_ops[id as usize] {
            Some(known) => known,
            None => self.first_call_op(id),
        }
    }

    #[cold]
    pub(super) fn first_call_op(&mut self, id: u16) -> (Op, FuncId, CallKind) {
        let spec = crate::dumpi::spec::call_spec(id).expect("ids come from decoded records");
        let name = mpi_name(spec.name);
        let func = self.functions.intern(&name);
        let known = (Op::of(spec.name, &name), func, CallKind::classify(&name));
        self.call_ops[id as usize] = Some(known);
        if !self.general_only && id != FUNCTION_ENTER && id != FUNCTION_EXIT {
            self.hot[id as usize] = known.0.hot(spec.name);
        }
        known
    }

    /// Reserve the rank's columns for the calls the file's footer counts, so that they are
    /// allocated once instead of grown by doubling and copying. The counts are only a hint: they
    /// are capped by what the record stream's size can hold, and the columns still grow if a
    /// file has more records than its footer says.
    pub(super) fn reserve(&mut self, file: &BinFile) {
        let Some(counts) = file.call_counts() else { return };
        // The calls the footer counts are looked up in id order, so the part names functions
        // in the same order whatever its records hold.
        for spec in CALLS
            .iter()
            .filter(|c| counts.get(c.id as usize).is_some_and(|&n| n > 0))
        {
            self.call_op(spec.id);
        }
        let (calls, p2p, colls) = reservation(file).unwrap_or_default();
        self.rt.reserve(calls, p2p, colls);
        self.st.unresolved.coll_fix.reserve(colls);
    }

    /// Append a call to the rank's columns (what `RankTrace::push_call` does, inlined here
    /// with the span kept in two plain fields until the end of the file).
    #[inline(always)]
    pub(super) fn append_call(
        &mut self,
        func: FuncId,
        kind: CallKind,
        enter: u64,
        exit: u64,
        callpath: CallpathId,
        location: u16,
    ) -> CallIdx {
        let exit = exit.max(enter);
        let base = self.st.unresolved.time_base;
        let c = &mut self.rt.calls;
        let idx = c.func.len() as CallIdx;
        c.func.push(func);
        c.kind.push(kind);
        c.enter.push(enter.wrapping_sub(base));
        c.duration.push(exit - enter);
        c.callpath.push(callpath);
        c.location.push(location);
        self.span = (self.span.0.min(enter), self.span.1.max(exit));
        idx
    }

    /// Append the call of `rec` (head decoded) to the rank: times, thread, call path, PAPI
    /// values. Returns what to do with it and its index.
    #[inline]
    pub(super) fn begin_call(&mut self, file: &BinFile, rec: &Record) -> (Op, CallIdx) {
        let (enter, exit) = self.times(rec);
        let (op, func, kind) = self.call_op(rec.call);
        let loc = self.location(rec.thread);
        let callpath = self.st.callpath;
        let call = self.append_call(func, kind, enter, exit, callpath, loc);
        if !rec.perf.is_empty() {
            self.perf(file, rec, enter, exit.max(enter));
        }
        (op, call)
    }

    pub(super) fn record(&mut self, file: &BinFile, sizes: &[u64], rec: &Record) {
        if rec.call == FUNCTION_ENTER || rec.call == FUNCTION_EXIT {
            let (enter, _) = self.times(rec);
            self.user_function(rec, enter);
            return;
        }
        let spec = rec.spec();
        let (op, call) = self.begin_call(file, rec);
        let size = |dt: i64| -> u64 { sizes.get(dt.max(0) as usize).copied().unwrap_or(0) };
        let int = |n: &str| rec.int(n).unwrap_or(0);
        let bytes = |count: &str, dt: &str| (int(count).max(0) as u64).saturating_mul(size(int(dt)));
        let handle = |n: &str| rec.int(n).unwrap_or(0) as u16;
        let status = rec.statuses().first().copied();
        let p2p_args = |peer: &str| P2pArgs {
            count: int("count") as i32,
            datatype: int("datatype") as u16,
            peer: int(peer) as i32,
            tag: int("tag") as i32,
            comm: handle("comm"),
            request: int("request") as i32,
        };
        match op {
            Op::Send | Op::Isend | Op::Recv | Op::Irecv | Op::PersistentInit => {
                let recv = matches!(op, Op::Recv | Op::Irecv) || spec.name == "Recv_init";
                let a = p2p_args(if recv { "source" } else { "dest" });
                self.p2p_call(call, op, spec.name == "Recv_init", a, sizes, status.as_ref());
            }
            Op::Sendrecv => {
                let c = self.comm(handle("comm"));
                self.post(
                    call,
                    call,
                    P2pDir::Send,
                    int("dest") as i32,
                    int("sendtag") as i32,
                    c,
                    bytes("sendcount", "sendtype"),
                );
                let op = self.post(
                    call,
                    call,
                    P2pDir::Recv,
                    int("source") as i32,
                    int("recvtag") as i32,
                    c,
                    bytes("recvcount", "recvtype"),
                );
                if let (Some(op), Some(s)) = (op, status) {
                    self.resolve_recv(op, &s);
                }
            }
            Op::SendrecvReplace => {
                let c = self.comm(handle("comm"));
                let b = bytes("count", "datatype");
                self.post(
                    call,
                    call,
                    P2pDir::Send,
                    int("dest") as i32,
                    int("sendtag") as i32,
                    c,
                    b,
                );
                let op = self.post(
                    call,
                    call,
                    P2pDir::Recv,
                    int("source") as i32,
                    int("recvtag") as i32,
                    c,
                    b,
                );
                if let (Some(op), Some(s)) = (op, status) {
                    self.resolve_recv(op, &s);
                }
            }
            Op::Start => self.start(call, int("request") as i32),
            Op::Startall => {
                for &req in rec.ints("requests").unwrap_or(&[]) {
                    self.start(call, req);
                }
            }
            Op::Wait => self.complete(int("request") as i32, call, status.as_ref()),
            Op::Test => {
                if int("flag") != 0 {
                    self.complete(int("request") as i32, call, status.as_ref());
                }
            }
            Op::WaitOrTestAny => {
                let reqs = rec.ints("requests").unwrap_or(&[]);
                let idx = int("index");
                let done = spec.name == "Waitany" || int("flag") != 0;
                if done && idx >= 0 && (idx as usize) < reqs.len() {
                    self.complete(reqs[idx as usize], call, status.as_ref());
                }
            }
            Op::WaitOrTestAll => {
                if spec.name == "Waitall" || int("flag") != 0 {
                    self.complete_all(call, rec.ints("requests").unwrap_or(&[]), rec.statuses());
                }
            }
            Op::WaitOrTestSome => {
                let reqs = rec.ints("requests").unwrap_or(&[]);
                let st = rec.statuses();
                for (j, &i) in rec.ints("indices").unwrap_or(&[]).iter().enumerate() {
                    if i >= 0 && (i as usize) < reqs.len() {
                        self.complete(reqs[i as usize], call, st.get(j));
                    }
                }
            }
            Op::RequestFree => {
                let req = int("request") as i32;
                self.close(req);
                self.st.persistent.remove(&req);
            }
            Op::CommDup => {
                self.derive(handle("oldcomm"), handle("newcomm"), How::Dup);
            }
            Op::CommSplit => {
                let color = int("color") as i32;
                if let Some(c) = self.derive(handle("oldcomm"), handle("newcomm"), How::Split(color)) {
                    self.comms.infos[c as usize].split.push((int("key") as i32, self.rank));
                }
            }
            Op::CommCreate => {
                let g = self.group(handle("group"));
                if let Some(c) = self.derive(handle("oldcomm"), handle("newcomm"), How::Create) {
                    self.comms.infos[c as usize].group.get_or_insert(g);
                }
            }
            Op::CartCreate => {
                let dims = rec.ints("dims").unwrap_or(&[]).to_vec();
                let n = dims.iter().map(|&d| d.max(0) as u64).fold(1u64, u64::saturating_mul);
                if let Some(c) = self.derive(handle("oldcomm"), handle("newcomm"), How::Cart) {
                    self.comms.infos[c as usize]
                        .size
                        .get_or_insert(n.min(usize::MAX as u64) as usize);
                    self.comms.infos[c as usize].cart_dims.get_or_insert(dims);
                    let periods = rec.ints("periods").unwrap_or(&[]).to_vec();
                    self.comms.infos[c as usize].cart_periods.get_or_insert(periods);
                }
            }
            Op::CartSub => {
                let remain = rec.ints("remain_dims").unwrap_or(&[]).to_vec();
                if let Some(c) = self.derive(handle("oldcomm"), handle("newcomm"), How::CartSub(self.rank)) {
                    self.comms.infos[c as usize].remain_dims = Some(remain);
                }
            }
            Op::GraphCreate => {
                let n = int("nodes").max(0) as usize;
                if let Some(c) = self.derive(handle("oldcomm"), handle("newcomm"), How::Graph) {
                    self.comms.infos[c as usize].size.get_or_insert(n);
                }
            }
            Op::Untracked => {
                let (old, new) = match spec.name {
                    "Intercomm_create" => ("localcomm", "newcomm"),
                    "Intercomm_merge" => ("comm", "newcomm"),
                    _ => ("oldcomm", "newcomm"),
                };
                self.warn(format!(
                    "MPI_{} is not followed: operations on the communicators it creates are left out",
                    spec.name
                ));
                self.derive(handle(old), handle(new), How::Untracked(spec.name));
            }
            Op::CommFree => {
                let h = handle("comm");
                self.st.comms.remove(&h);
                self.st.last_comm = None;
            }
            Op::CommGroup => {
                let c = self.comm(handle("comm"));
                self.set_group(handle("group"), GroupExpr::OfComm(c));
            }
            Op::GroupInclExcl => {
                let g = Box::new(self.group(handle("group")));
                let ranks = rec.ints("ranks").unwrap_or(&[]).to_vec();
                let e = if spec.name == "Group_incl" {
                    GroupExpr::Incl(g, ranks)
                } else {
                    GroupExpr::Excl(g, ranks)
                };
                self.set_group(handle("newgroup"), e);
            }
            Op::GroupRange => {
                let g = Box::new(self.group(handle("group")));
                let ranges = match rec.arg("ranges") {
                    Some(Value::IntRows(v)) => v.clone(),
                    _ => Vec::new(),
                };
                let e = if spec.name == "Group_range_incl" {
                    GroupExpr::RangeIncl(g, ranges)
                } else {
                    GroupExpr::RangeExcl(g, ranges)
                };
                self.set_group(handle("newgroup"), e);
            }
            Op::GroupCombine => {
                let a = Box::new(self.group(handle("group1")));
                let b = Box::new(self.group(handle("group2")));
                let e = match spec.name {
                    "Group_union" => GroupExpr::Union(a, b),
                    "Group_intersection" => GroupExpr::Intersection(a, b),
                    _ => GroupExpr::Difference(a, b),
                };
                self.set_group(handle("newgroup"), e);
            }
            Op::GroupFree => {
                let h = handle("group");
                self.st.groups.remove(&h);
            }
            Op::Collective(op) => self.collective(call, op, rec, &size),
            Op::Other => {}
        }
    }
}
