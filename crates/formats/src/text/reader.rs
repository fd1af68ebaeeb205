//! The reader's state: the trace being built, open requests, and the general path through a
//! call line.

use super::*;
use tracelogic_model::build::RequestsByRank;

/// An operation being built from the keys of a call line.
pub(super) enum Item {
    P2p {
        dir: P2pDir,
        peer: Rank,
        tag: i32,
        comm: CommId,
        bytes: u64,
        req: Option<u64>,
        done: Option<u32>,
    },
    Coll {
        op: Option<CollectiveOp>,
        comm: CommId,
        root: Rank,
        sent: u64,
        recvd: u64,
    },
}

impl Item {
    /// A point-to-point operation with `peer` as a `send=`/`recv=` key starts it: tag 0 on
    /// `MPI_COMM_WORLD`, no bytes, no request, until later keys say otherwise.
    pub(super) fn p2p(dir: P2pDir, peer: Rank) -> Item {
        Item::P2p {
            dir,
            peer,
            tag: 0,
            comm: COMM_WORLD,
            bytes: 0,
            req: None,
            done: None,
        }
    }
}

/// Reader state over one file.
pub(super) struct Reader<'t> {
    pub(super) file: &'t str,
    pub(super) trace: Trace,
    /// `ranks` was seen.
    pub(super) has_ranks: bool,
    /// Call kind of each function id, so classification runs once per name.
    pub(super) kinds: Vec<CallKind>,
    /// Function name → id, so a call line costs one fast hash of its name.
    pub(super) func_ids: FastMap<String, FuncId>,
    /// The short function names of recent plain call lines, checked before `func_ids`.
    pub(super) names: NameCache,
    /// Request ids of the current call's `wait=` list (reused from line to line).
    pub(super) waits: Vec<u64>,
    /// Explicit `span` lines, applied at the end.
    pub(super) spans: Vec<(Rank, Time, Time)>,
    /// The requests posted with `req=` and not yet completed by a `wait=`: (rank, request id)
    /// → index into the rank's p2p operations (ids count up per rank and complete soon, as the
    /// writer numbers them, so the tables' slots serve nearly every one).
    pub(super) pending: RequestsByRank<u64>,
    pub(super) explicit_source: bool,
    pub(super) items: Vec<Item>,
    /// Call lines the fast path read (the tests check it carries the plain lines).
    pub(super) fast_lines: u64,
    /// Plain call lines go through [`Reader::fast_call`] first (off only in tests, to compare).
    pub(super) fast: bool,
}

impl<'t> Reader<'t> {
    /// A reader of the file `file` before its first line; `fast` enables the plain-line path.
    pub(super) fn new(file: &'t str, fast: bool) -> Reader<'t> {
        Reader {
            file,
            trace: Trace::new("text", file, 0),
            has_ranks: false,
            kinds: Vec::new(),
            func_ids: FastMap::default(),
            names: NameCache::new(),
            waits: Vec::new(),
            spans: Vec::new(),
            pending: RequestsByRank::default(),
            explicit_source: false,
            items: Vec::new(),
            fast_lines: 0,
            fast,
        }
    }

    pub(super) fn rank(&self, s: &str) -> Result<Rank, String> {
        if !self.has_ranks {
            return Err("a `ranks N` line must come before anything that names a rank".into());
        }
        let r = parse_u32(s, "a rank")?;
        if r >= self.trace.num_ranks() {
            return Err(format!(
                "rank {r} is out of range (the trace has {} ranks)",
                self.trace.num_ranks()
            ));
        }
        Ok(r)
    }

    pub(super) fn peer(&self, s: &str) -> Result<Rank, String> {
        if s == "any" {
            Ok(ANY_SOURCE)
        } else {
            self.rank(s)
        }
    }

    pub(super) fn comm(&self, s: &str) -> Result<CommId, String> {
        let c = parse_u32(s, "a communicator id")?;
        if c as usize >= self.trace.comms.len() {
            return Err(format!(
                "communicator {c} is not defined (define it with a `comm` line first)"
            ));
        }
        Ok(c)
    }

    pub(super) fn func_id(&mut self, name: &str) -> FuncId {
        if let Some(&f) = self.func_ids.get(name) {
            return f;
        }
        let f = self.trace.functions.intern(name);
        self.func_ids.insert(name.to_owned(), f);
        while self.kinds.len() <= f as usize {
            let n = self.trace.functions.name(self.kinds.len() as u32);
            self.kinds.push(CallKind::classify(n));
        }
        f
    }

    pub(super) fn declare(&mut self, keyword: &str, lx: &mut Lexer) -> Result<(), String> {
        let id = parse_u32(&lx.word("an id")?, "an id")?;
        let name = lx.word("a name")?;
        lx.end()?;
        let table = match keyword {
            "function" => &mut self.trace.functions,
            "region" => &mut self.trace.regions,
            _ => &mut self.trace.metrics,
        };
        if table.get(&name).is_some() {
            return Err(format!("{keyword} `{name}` is declared twice"));
        }
        if id as usize != table.len() {
            return Err(format!(
                "{keyword} ids must count up from 0: expected {}, found {id}",
                table.len()
            ));
        }
        table.intern(&name);
        if keyword == "function" {
            self.func_id(&name);
        }
        Ok(())
    }

    pub(super) fn directive(&mut self, keyword: &str, lx: &mut Lexer, remaining: usize) -> Result<(), String> {
        match keyword {
            "ranks" => {
                if self.has_ranks {
                    return Err("`ranks` is given twice".into());
                }
                let n = parse_u32(&lx.word("the number of ranks")?, "the number of ranks")?;
                lx.end()?;
                // Every rank costs memory before any of its lines is read: refuse counts the
                // file cannot plausibly describe.
                if n as u64 > 65_536 + remaining as u64 {
                    return Err(format!("{n} ranks is more than this file can describe"));
                }
                let keep = std::mem::take(&mut self.trace);
                let mut t = Trace::new("text", &keep.source, n);
                t.meta = keep.meta;
                t.warnings = keep.warnings;
                // Functions, regions, call paths and metrics may be declared before `ranks`;
                // the reader's function cache already holds their ids.
                t.functions = keep.functions;
                t.regions = keep.regions;
                t.callpaths = keep.callpaths;
                t.metrics = keep.metrics;
                // Reserve each rank's share of the calls the rest of the file can hold (a call
                // line takes about 64 bytes, most carry one operation), so the columns are
                // allocated once instead of grown by doubling and copying.
                let calls = remaining / CALL_LINE_BYTES / (n as usize).max(1);
                for rt in &mut t.ranks {
                    rt.reserve(calls, calls, 0);
                }
                self.trace = t;
                self.has_ranks = true;
            }
            "source" => {
                self.trace.source = lx.word("the source name")?.into_owned();
                self.explicit_source = true;
                lx.end()?;
            }
            "meta" => {
                let k = lx.word("a key")?.into_owned();
                let v = lx.word("a value")?.into_owned();
                lx.end()?;
                self.trace.meta.push((k, v));
            }
            "warning" => {
                let w = lx.word("the warning text")?.into_owned();
                lx.end()?;
                self.trace.warnings.push(w);
            }
            "comm" => {
                if !self.has_ranks {
                    return Err("a `ranks N` line must come before `comm`".into());
                }
                let id = parse_u32(&lx.word("a communicator id")?, "a communicator id")?;
                let name = lx.word("a communicator name")?.into_owned();
                let members = parse_members(&lx.word("the members")?, self.trace.num_ranks())?;
                lx.end()?;
                let comm = tracelogic_model::Communicator { name, members };
                if id == COMM_WORLD && self.trace.comms.len() == 1 {
                    self.trace.comms[0] = comm;
                } else if id as usize == self.trace.comms.len() {
                    self.trace.comms.push(comm);
                } else {
                    return Err(format!(
                        "communicator ids must count up from 0: expected {}, found {id}",
                        self.trace.comms.len()
                    ));
                }
            }
            "function" | "region" | "metric" => self.declare(keyword, lx)?,
            "callpath" => {
                let id = parse_u32(&lx.word("an id")?, "an id")?;
                if id as usize != self.trace.callpaths.len() {
                    return Err(format!(
                        "callpath ids must count up from 0: expected {}, found {id}",
                        self.trace.callpaths.len()
                    ));
                }
                let mut path = Vec::new();
                while let Some(t) = lx.next_token()? {
                    let r = parse_u32(&t.key, "a region id")?;
                    if r as usize >= self.trace.regions.len() || t.value.is_some() {
                        return Err(format!("region {} is not declared", t.key));
                    }
                    path.push(r);
                }
                self.trace.callpaths.push(path);
            }
            "location" => {
                let r = self.rank(&lx.word("a rank")?)?;
                let id = parse_u64(&lx.word("a location id")?, "a location id")?;
                let name = lx.word("a location name")?.into_owned();
                lx.end()?;
                let locs = &mut self.trace.ranks[r as usize].locations;
                if locs.len() >= u16::MAX as usize {
                    return Err(format!("rank {r} has more than {} locations", u16::MAX));
                }
                locs.push(Location { id, name });
            }
            "span" => {
                let r = self.rank(&lx.word("a rank")?)?;
                let a = parse_time(&lx.word("the first time")?)?;
                let b = parse_time(&lx.word("the last time")?)?;
                lx.end()?;
                self.spans.push((r, a, b));
            }
            "sample" => {
                let r = self.rank(&lx.word("a rank")?)?;
                let name = lx.word("a metric name")?;
                let t = parse_time(&lx.word("a time")?)?;
                let v_text = lx.word("a value")?;
                let v: f64 = v_text
                    .parse()
                    .map_err(|_| format!("metric value must be a number, found `{v_text}`"))?;
                lx.end()?;
                let m = self.trace.metrics.intern(&name);
                let rt = &mut self.trace.ranks[r as usize];
                let series = match rt.metrics.iter().position(|s| s.metric == m) {
                    Some(i) => i,
                    None => {
                        rt.metrics.push(MetricSamples {
                            metric: m,
                            ..Default::default()
                        });
                        rt.metrics.len() - 1
                    }
                };
                rt.metrics[series].time.push(t);
                rt.metrics[series].value.push(v);
            }
            _ => return Err(format!("unknown line keyword `{keyword}`")),
        }
        Ok(())
    }

    pub(super) fn call(&mut self, rank_text: &str, lx: &mut Lexer) -> Result<(), String> {
        let r = self.rank(rank_text)?;
        let enter = parse_time(&lx.word("the enter time")?)?;
        let exit_text = lx.word("the exit time")?;
        let exit = match exit_text.strip_prefix('+') {
            Some(d) => enter
                .checked_add(parse_time(d)?)
                .ok_or_else(|| "exit time is too large".to_string())?,
            None => parse_time(&exit_text)?,
        };
        if exit < enter {
            return Err(format!("exit time {exit} is before enter time {enter}"));
        }
        let func_name = lx.word("an MPI function name")?;
        let func = self.func_id(&func_name);
        let mut kind = self.kinds[func as usize];
        let mut loc: u16 = 0;
        let mut cp = NO_CALLPATH;
        let mut waits = std::mem::take(&mut self.waits);
        waits.clear();
        let mut no_coll = false;
        self.items.clear();
        while let Some(tok) = lx.next_token()? {
            let key: &str = &tok.key;
            let Some(value) = tok.value else {
                return Err(format!("expected key=value, found `{key}`"));
            };
            let v: &str = &value;
            match key {
                "kind" => {
                    kind = CALL_KINDS
                        .iter()
                        .find(|(n, _)| *n == v)
                        .map(|(_, k)| *k)
                        .ok_or_else(|| format!("unknown call kind `{v}`"))?;
                }
                "loc" => {
                    loc = v
                        .parse()
                        .map_err(|_| format!("loc must be a location index, found `{v}`"))?;
                    let n = self.trace.ranks[r as usize].locations.len();
                    if n > 0 && loc as usize >= n {
                        return Err(format!(
                            "location index {loc} is not declared for rank {r} ({n} locations)"
                        ));
                    }
                }
                "cp" => {
                    cp = parse_u32(v, "a callpath id")?;
                    if cp as usize >= self.trace.callpaths.len() {
                        return Err(format!("callpath {cp} is not declared"));
                    }
                }
                "path" => {
                    let regions: Vec<u32> = v.split('/').map(|name| self.trace.regions.intern(name)).collect();
                    cp = self.trace.intern_callpath(&regions);
                }
                "wait" => {
                    for id in v.split(',') {
                        waits.push(parse_u64(id, "a request id")?);
                    }
                }
                "send" | "recv" | "peer" => {
                    let dir = match key {
                        "send" => P2pDir::Send,
                        "recv" => P2pDir::Recv,
                        _ => match kind {
                            CallKind::Send | CallKind::Isend => P2pDir::Send,
                            CallKind::Recv | CallKind::Irecv => P2pDir::Recv,
                            _ => {
                                return Err(format!(
                                    "peer= needs a send or receive call; on {func_name} write send= or recv="
                                ))
                            }
                        },
                    };
                    let peer = self.peer(v)?;
                    self.items.push(Item::p2p(dir, peer));
                }
                "coll" => {
                    if v == "none" {
                        no_coll = true;
                        continue;
                    }
                    let op = COLLECTIVE_OPS
                        .iter()
                        .find(|(n, _)| *n == v)
                        .map(|(_, o)| *o)
                        .ok_or_else(|| format!("unknown collective `{v}`"))?;
                    self.items.push(Item::Coll {
                        op: Some(op),
                        comm: COMM_WORLD,
                        root: NO_ROOT,
                        sent: 0,
                        recvd: 0,
                    });
                }
                "tag" | "bytes" | "comm" | "req" | "done" | "root" | "sent" | "recvd" => {
                    if self.items.is_empty() {
                        if kind != CallKind::Collective {
                            return Err(format!("`{key}=` comes before any send=, recv=, peer= or coll="));
                        }
                        self.items.push(Item::Coll {
                            op: None,
                            comm: COMM_WORLD,
                            root: NO_ROOT,
                            sent: 0,
                            recvd: 0,
                        });
                    }
                    let comm_id = if key == "comm" { Some(self.comm(v)?) } else { None };
                    let rank_val = if key == "root" { Some(self.rank(v)?) } else { None };
                    let item = self.items.last_mut().expect("an item was just ensured");
                    match (item, key) {
                        (Item::P2p { tag, .. }, "tag") => {
                            *tag = if v == "any" {
                                ANY_TAG
                            } else {
                                v.parse()
                                    .map_err(|_| format!("tag must be an integer or `any`, found `{v}`"))?
                            }
                        }
                        (Item::P2p { bytes, .. }, "bytes") => *bytes = parse_u64(v, "bytes")?,
                        (Item::P2p { comm, .. }, "comm") | (Item::Coll { comm, .. }, "comm") => {
                            *comm = comm_id.expect("parsed above")
                        }
                        (Item::P2p { req, .. }, "req") => *req = Some(parse_u64(v, "a request id")?),
                        (Item::P2p { done, .. }, "done") => *done = Some(parse_u32(v, "a call index")?),
                        (Item::Coll { root, .. }, "root") => *root = rank_val.expect("parsed above"),
                        (Item::Coll { sent, .. }, "sent") => *sent = parse_u64(v, "sent")?,
                        (Item::Coll { recvd, .. }, "recvd") => *recvd = parse_u64(v, "recvd")?,
                        (Item::Coll { sent, recvd, .. }, "bytes") => {
                            let b = parse_u64(v, "bytes")?;
                            *sent = b;
                            *recvd = b;
                        }
                        (Item::P2p { .. }, _) => {
                            return Err(format!("`{key}=` does not apply to a point-to-point operation"))
                        }
                        (Item::Coll { .. }, _) => return Err(format!("`{key}=` does not apply to a collective")),
                    }
                }
                _ => return Err(format!("unknown key `{key}`")),
            }
        }
        if kind == CallKind::Collective && self.items.is_empty() && !no_coll {
            self.items.push(Item::Coll {
                op: None,
                comm: COMM_WORLD,
                root: NO_ROOT,
                sent: 0,
                recvd: 0,
            });
        }

        self.commit(r, enter, exit, func, kind, loc, cp, waits)
    }

    /// Appends one call line's call, operations and completions to its rank's columns: shared by
    /// the general parser and the plain-line fast path, so both give the same trace and errors.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn commit(
        &mut self,
        r: Rank,
        enter: Time,
        exit: Time,
        func: FuncId,
        kind: CallKind,
        loc: u16,
        cp: u32,
        waits: Vec<u64>,
    ) -> Result<(), String> {
        let Reader {
            trace, items, pending, ..
        } = self;
        let rt = &mut trace.ranks[r as usize];
        let idx = rt.calls.len();
        if idx >= u32::MAX as usize - 1 {
            return Err(format!("rank {r} has more calls than the model holds"));
        }
        let idx = idx as u32;
        let c = &mut rt.calls;
        c.func.push(func);
        c.kind.push(kind);
        c.enter.push(enter);
        c.duration.push(exit.saturating_sub(enter));
        c.callpath.push(cp);
        c.location.push(loc);
        rt.extend_span(enter, exit);

        for item in items.drain(..) {
            match item {
                Item::P2p {
                    dir,
                    peer,
                    tag,
                    comm,
                    bytes,
                    req,
                    done,
                } => {
                    let op = rt.p2p.len();
                    let complete = match (req, done) {
                        (_, Some(d)) if d >= idx => {
                            return Err(format!(
                            "done={d} must name an earlier call of rank {r} (this is call {idx}); use req= and wait="
                        ))
                        }
                        (None, Some(d)) => d,
                        (Some(_), Some(_)) => return Err("give req= or done=, not both".into()),
                        (None, None) => idx,
                        (Some(id), None) => {
                            if pending.contains(r, id) {
                                return Err(format!("request {id} of rank {r} is posted again before it completed"));
                            }
                            pending.insert(r, id, op);
                            NOT_COMPLETED
                        }
                    };
                    rt.push_p2p(idx, complete, dir, peer, tag, comm, bytes);
                }
                Item::Coll {
                    op,
                    comm,
                    root,
                    sent,
                    recvd,
                } => {
                    let func_name = trace.functions.name(func);
                    let op = match op.or_else(|| CollectiveOp::from_name(func_name)) {
                        Some(op) => op,
                        None => return Err(format!("{func_name} is not a collective: give coll=<operation>")),
                    };
                    let cl = &mut rt.collectives;
                    cl.call.push(idx);
                    cl.op.push(op);
                    cl.comm.push(comm);
                    cl.root.push(root);
                    cl.bytes_sent.push(sent);
                    cl.bytes_recv.push(recvd);
                }
            }
        }
        for &id in &waits {
            let Some(op) = pending.remove(r, id) else {
                return Err(format!("wait={id}: rank {r} has no open request {id}"));
            };
            rt.p2p.set_complete(op, idx);
        }
        self.waits = waits;
        Ok(())
    }
}
