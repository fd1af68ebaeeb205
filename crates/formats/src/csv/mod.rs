//! Reader for Pipit's CSV export (`pipit.Trace.to_csv` / `from_csv`).
//!
//! Columns, found by their header names in any order: `Timestamp (s|ms|us|ns)`, `Event Type`
//! (`Enter`, `Leave`, `Instant`), `Name`, optional `Thread`, `Process` (the MPI rank; absent means
//! one rank), optional `Attributes` (a Python dict literal). Other columns are ignored.
//!
//! Choices (also in `docs/formats.md` of the repository):
//! - `Enter`/`Leave` of a name starting with `MPI_` are MPI calls; other `Enter`/`Leave` pairs
//!   are user regions, and the regions open when a call starts are its call path.
//! - `Instant` events carry the messages, inside the MPI call open on the same thread:
//!   `MpiSend`/`MpiRecv` (`receiver`/`sender`, `msg_tag`, `msg_length`, `communicator`) are
//!   blocking operations; `MpiIsend` + `MpiIsendComplete` and `MpiIrecvRequest` + `MpiIrecv`
//!   are linked by `request_id`; `MpiCollectiveEnd` (`collective_op`, `root`, `size_sent`,
//!   `size_received`) gives the collective's bytes.
//! - Peers are taken as world ranks. Communicators are known only by name: one name (or a name
//!   containing `WORLD`) is `MPI_COMM_WORLD`; any other becomes a communicator whose members
//!   are the ranks seen using it.

use crate::{FormatError, InputFile, Progress, ProgressSink};
use std::collections::HashMap;
use tracelogic_model::build::RequestsByRank;
use tracelogic_model::{
    CallIdx, CallpathId, CollectiveOp, CommId, Location, P2pDir, Rank, RankTrace, RegionId, Time, Trace, ANY_SOURCE,
    COMM_WORLD, NOT_COMPLETED, NO_CALLPATH, NO_ROOT,
};

mod py_literal;
mod scanner;

pub use py_literal::{parse_py_literal, PyValue};
use scanner::CsvScanner;

/// Column positions of the header.
struct Columns {
    time: usize,
    /// Nanoseconds per unit of the time column.
    scale: f64,
    event: usize,
    name: usize,
    thread: Option<usize>,
    process: Option<usize>,
    attributes: Option<usize>,
}

fn columns(header: &[String], file: &str) -> Result<Columns, FormatError> {
    let find = |n: &str| header.iter().position(|h| h.eq_ignore_ascii_case(n));
    let (time, scale) = header
        .iter()
        .enumerate()
        .find_map(|(i, h)| {
            let unit = h.strip_prefix("Timestamp (")?.strip_suffix(')')?;
            let scale = match unit {
                "s" => 1e9,
                "ms" => 1e6,
                "us" => 1e3,
                "ns" => 1.0,
                _ => return None,
            };
            Some((i, scale))
        })
        .ok_or_else(|| FormatError::at_line(file, 1, "no `Timestamp (s|ms|us|ns)` column in the header"))?;
    let need = |n: &str| find(n).ok_or_else(|| FormatError::at_line(file, 1, format!("no `{n}` column in the header")));
    Ok(Columns {
        time,
        scale,
        event: need("Event Type")?,
        name: need("Name")?,
        thread: find("Thread"),
        process: find("Process"),
        attributes: find("Attributes"),
    })
}

/// State of one thread while reading.
#[derive(Default)]
struct ThreadState {
    /// Location index in the rank.
    location: u16,
    /// Open MPI call (index in the rank's calls).
    open_call: Option<CallIdx>,
    /// Open user regions.
    regions: Vec<RegionId>,
}

struct Reader {
    trace: Trace,
    threads: HashMap<(Rank, i64), ThreadState>,
    /// Pending requests per rank: request id → index into the rank's p2p operations.
    requests: RequestsByRank<i128>,
    callpaths: HashMap<Vec<RegionId>, CallpathId>,
    comm_names: Vec<String>,
    /// Ranks seen using each named communicator.
    comm_users: Vec<Vec<Rank>>,
    /// p2p / collective operations to re-point once communicators are resolved: (rank, op,
    /// is_p2p, comm name index).
    comm_refs: Vec<(Rank, usize, bool, usize)>,
    outside_calls: u64,
    unmatched_leaves: u64,
    max_rank: u64,
}

impl Reader {
    fn ensure_rank(&mut self, r: i128) -> Result<Rank, String> {
        if r < 0 || r as u64 > self.max_rank {
            return Err(format!("process {r} is not a plausible rank"));
        }
        let r = r as Rank;
        while self.trace.ranks.len() <= r as usize {
            let n = self.trace.ranks.len() as Rank;
            self.trace.ranks.push(RankTrace {
                rank: n,
                ..Default::default()
            });
        }
        Ok(r)
    }

    fn comm_index(&mut self, name: Option<&str>, r: Rank) -> usize {
        let name = name.unwrap_or("MPI_COMM_WORLD");
        let i = match self.comm_names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.comm_names.push(name.to_owned());
                self.comm_users.push(Vec::new());
                self.comm_names.len() - 1
            }
        };
        if !self.comm_users[i].contains(&r) {
            self.comm_users[i].push(r);
        }
        i
    }

    fn callpath(&mut self, regions: &[RegionId]) -> CallpathId {
        if regions.is_empty() {
            return NO_CALLPATH;
        }
        if let Some(&id) = self.callpaths.get(regions) {
            return id;
        }
        let id = self.trace.intern_callpath(regions);
        self.callpaths.insert(regions.to_vec(), id);
        id
    }

    #[allow(clippy::too_many_arguments)]
    fn event(
        &mut self,
        time: Time,
        kind: &str,
        name: &str,
        thread: i64,
        process: i128,
        attrs: Option<&str>,
    ) -> Result<(), String> {
        let r = self.ensure_rank(process)?;
        let next_loc = self.trace.ranks[r as usize].locations.len();
        let key = (r, thread);
        if !self.threads.contains_key(&key) {
            if next_loc >= u16::MAX as usize {
                return Err(format!("process {r} has too many threads"));
            }
            self.trace.ranks[r as usize].locations.push(Location {
                id: thread as u64,
                name: format!("thread {thread}"),
            });
            self.threads.insert(
                key,
                ThreadState {
                    location: next_loc as u16,
                    ..Default::default()
                },
            );
        }
        self.trace.ranks[r as usize].extend_span(time, time);
        let is_mpi = name.starts_with("MPI_") || name.starts_with("PMPI_");
        match kind {
            "Enter" if is_mpi => {
                let st = &self.threads[&key];
                let (loc, regions) = (st.location, st.regions.clone());
                let cp = self.callpath(&regions);
                let idx = self.trace.push_call(r, name, time, time, cp, loc);
                self.threads.get_mut(&key).expect("inserted above").open_call = Some(idx);
            }
            "Leave" if is_mpi => {
                let st = self.threads.get_mut(&key).expect("inserted above");
                match st.open_call.take() {
                    Some(idx) => {
                        self.trace.ranks[r as usize].calls.set_exit(idx as usize, time);
                    }
                    None => self.unmatched_leaves += 1,
                }
            }
            "Enter" => {
                let region = self.trace.regions.intern(name);
                self.threads.get_mut(&key).expect("inserted above").regions.push(region);
            }
            "Leave" => {
                let region = self.trace.regions.intern(name);
                let st = self.threads.get_mut(&key).expect("inserted above");
                match st.regions.iter().rposition(|&x| x == region) {
                    Some(pos) => st.regions.truncate(pos),
                    None => self.unmatched_leaves += 1,
                }
            }
            "Instant" => self.instant(r, key, name, attrs)?,
            other => {
                return Err(format!(
                    "unknown event type `{other}` (expected Enter, Leave or Instant)"
                ))
            }
        }
        Ok(())
    }

    fn instant(&mut self, r: Rank, key: (Rank, i64), name: &str, attrs: Option<&str>) -> Result<(), String> {
        if !matches!(
            name,
            "MpiSend"
                | "MpiRecv"
                | "MpiIsend"
                | "MpiIrecv"
                | "MpiIsendComplete"
                | "MpiIrecvRequest"
                | "MpiCollectiveEnd"
        ) {
            return Ok(());
        }
        let attrs = match attrs.map(str::trim).filter(|a| !a.is_empty()) {
            Some(a) => parse_py_literal(a).map_err(|e| format!("cannot read the Attributes of {name}: {e}"))?,
            None => PyValue::Dict(Vec::new()),
        };
        let int = |k: &str| attrs.get(k).and_then(PyValue::as_int);
        let Some(call) = self.threads[&key].open_call else {
            self.outside_calls += 1;
            return Ok(());
        };
        match name {
            "MpiSend" | "MpiRecv" | "MpiIsend" | "MpiIrecv" => {
                let (dir, peer_key) = if name.ends_with("Send") || name == "MpiIsend" {
                    (P2pDir::Send, "receiver")
                } else {
                    (P2pDir::Recv, "sender")
                };
                let peer = match int(peer_key) {
                    Some(p) if p >= 0 => self.ensure_rank(p)?,
                    _ if dir == P2pDir::Recv => ANY_SOURCE,
                    _ => return Err(format!("{name} has no `{peer_key}` attribute")),
                };
                let tag = int("msg_tag").unwrap_or(0).clamp(i32::MIN as i128, i32::MAX as i128) as i32;
                let bytes = int("msg_length").unwrap_or(0).clamp(0, u64::MAX as i128) as u64;
                let comm_name = attrs.get("communicator").and_then(PyValue::as_str).map(str::to_owned);
                let comm = self.comm_index(comm_name.as_deref(), r);
                let request = int("request_id");
                let p = &mut self.trace.ranks[r as usize].p2p;
                if name == "MpiIrecv" {
                    // Completes a receive posted by MpiIrecvRequest, if one is pending.
                    if let Some(op) = request.and_then(|q| self.requests.remove(r, q)) {
                        p.set_complete(op, call);
                        p.peer.set(op, peer);
                        p.tag.set(op, tag);
                        p.bytes.set(op, bytes);
                        self.comm_refs.push((r, op, true, comm));
                        return Ok(());
                    }
                }
                let op = p.len();
                let complete = if name == "MpiIsend" { NOT_COMPLETED } else { call };
                self.trace
                    .push_p2p(r, call, complete, dir, peer, tag, COMM_WORLD, bytes);
                if name == "MpiIsend" {
                    if let Some(q) = request {
                        self.requests.insert(r, q, op);
                    }
                }
                self.comm_refs.push((r, op, true, comm));
            }
            "MpiIrecvRequest" => {
                let op = self.trace.ranks[r as usize].p2p.len();
                self.trace
                    .push_p2p(r, call, NOT_COMPLETED, P2pDir::Recv, ANY_SOURCE, 0, COMM_WORLD, 0);
                if let Some(q) = int("request_id") {
                    self.requests.insert(r, q, op);
                }
            }
            "MpiIsendComplete" => {
                if let Some(op) = int("request_id").and_then(|q| self.requests.remove(r, q)) {
                    self.trace.ranks[r as usize].p2p.set_complete(op, call);
                }
            }
            _ => {
                let func = self.trace.call_name(r, call).to_owned();
                let op = attrs
                    .get("collective_op")
                    .and_then(PyValue::as_str)
                    .and_then(|s| CollectiveOp::from_name(&format!("MPI_{s}")))
                    .or_else(|| CollectiveOp::from_name(&func))
                    .unwrap_or(CollectiveOp::Other);
                let root = match int("root") {
                    Some(x) if x >= 0 && x < u32::MAX as i128 => self.ensure_rank(x)?,
                    _ => NO_ROOT,
                };
                let sent = int("size_sent").unwrap_or(0).max(0) as u64;
                let recvd = int("size_received").unwrap_or(0).max(0) as u64;
                let comm_name = attrs.get("communicator").and_then(PyValue::as_str).map(str::to_owned);
                let comm = self.comm_index(comm_name.as_deref(), r);
                let op_index = self.trace.ranks[r as usize].collectives.len();
                self.trace.push_collective(r, call, op, COMM_WORLD, root, sent, recvd);
                self.comm_refs.push((r, op_index, false, comm));
            }
        }
        Ok(())
    }

    /// Turn communicator names into communicators and point the operations at them.
    fn resolve_comms(&mut self) {
        let n = self.trace.ranks.len() as Rank;
        self.trace.comms[0].members = (0..n).collect();
        let world = if self.comm_names.len() == 1 {
            Some(0)
        } else {
            self.comm_names
                .iter()
                .position(|c| c.to_ascii_uppercase().contains("WORLD"))
        };
        let mut ids: Vec<CommId> = Vec::with_capacity(self.comm_names.len());
        for (i, name) in self.comm_names.iter().enumerate() {
            if Some(i) == world {
                ids.push(COMM_WORLD);
            } else {
                let mut members = self.comm_users[i].clone();
                members.sort_unstable();
                ids.push(self.trace.add_comm(name, members));
            }
        }
        for &(r, op, is_p2p, c) in &self.comm_refs {
            let rt = &mut self.trace.ranks[r as usize];
            if is_p2p {
                rt.p2p.comm[op] = ids[c];
            } else {
                rt.collectives.comm[op] = ids[c];
            }
        }
    }
}

/// Parse a timestamp in the column's unit into ns.
fn parse_timestamp(s: &str, scale: f64) -> Result<Time, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("timestamp `{s}` is not a number"))?;
    let ns = (v * scale).round();
    if !ns.is_finite() || ns < 0.0 || ns > u64::MAX as f64 {
        return Err(format!("timestamp `{s}` is out of range"));
    }
    Ok(ns as Time)
}

/// Read a csv trace from its files.
///
/// Errors name the file and 1-based line: a header without the needed columns, rows with
/// too few fields, timestamps or processes that are not numbers, unknown event types, and
/// attributes that are not Python literals.
pub fn read(files: &[InputFile], progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    let csvs: Vec<&InputFile> = files
        .iter()
        .filter(|f| {
            let b = f.bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&f.bytes);
            let b = &b[b.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(b.len())..];
            b.starts_with(b"Timestamp (") || b.starts_with(b"\"Timestamp (")
        })
        .collect();
    let file = match csvs.as_slice() {
        [f] => *f,
        [] => {
            let name = files.first().map(|f| f.name.as_str()).unwrap_or("(no input)");
            return Err(FormatError::at_line(
                name,
                1,
                "no Pipit CSV file (header starting `Timestamp (`)",
            ));
        }
        [a, b, ..] => {
            return Err(FormatError::new(
                &b.name,
                format!(
                    "several CSV traces were given (`{}` and `{}`); give one",
                    a.name, b.name
                ),
            ))
        }
    };
    let name = file.name.as_str();
    let bytes = file.bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&file.bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&c| c == b'\n').count() as u64 + 1;
        FormatError::at_line(name, line, "not UTF-8 text")
    })?;
    let total = file.bytes.len() as u64;
    let mut scanner = CsvScanner { text, pos: 0, line: 1 };
    let mut fields = Vec::new();
    let err = |(line, m): (u64, String)| FormatError::at_line(name, line, m);
    scanner.next_record(&mut fields).map_err(err)?;
    let header: Vec<String> = fields.iter().map(|&f| scanner.field_text(f).into_owned()).collect();
    let cols = columns(&header, name)?;
    let needed = [
        Some(cols.time),
        Some(cols.event),
        Some(cols.name),
        cols.thread,
        cols.process,
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(0);

    let mut reader = Reader {
        trace: Trace::new("csv", name, 0),
        threads: HashMap::new(),
        requests: RequestsByRank::default(),
        callpaths: HashMap::new(),
        comm_names: Vec::new(),
        comm_users: Vec::new(),
        comm_refs: Vec::new(),
        outside_calls: 0,
        unmatched_leaves: 0,
        max_rank: 65_536 + total,
    };
    let start = Progress {
        stage: "reading events".into(),
        bytes_done: 0,
        bytes_total: total,
    };
    if !progress.report(&start) {
        return Err(FormatError::cancelled(name));
    }
    let mut next_report = 4u64 << 20;
    while let Some(line) = scanner.next_record(&mut fields).map_err(err)? {
        if scanner.pos as u64 >= next_report {
            next_report = scanner.pos as u64 + (4 << 20);
            let p = Progress {
                stage: "reading events".into(),
                bytes_done: scanner.pos as u64,
                bytes_total: total,
            };
            if !progress.report(&p) {
                return Err(FormatError::cancelled(name));
            }
        }
        if fields.len() <= needed {
            return Err(FormatError::at_line(
                name,
                line,
                format!("the row has {} fields, the header {}", fields.len(), header.len()),
            ));
        }
        let get = |i: usize| scanner.field_text(fields[i]);
        let time = parse_timestamp(&get(cols.time), cols.scale).map_err(|m| FormatError::at_line(name, line, m))?;
        let int_field = |col: Option<usize>, what: &str| -> Result<i128, FormatError> {
            match col {
                None => Ok(0),
                Some(c) => {
                    let s = get(c);
                    let s = s.trim();
                    s.parse::<i128>()
                        .or_else(|_| match s.parse::<f64>() {
                            Ok(f) if f.fract() == 0.0 && f.abs() < 1e18 => Ok(f as i128),
                            _ => Err(()),
                        })
                        .map_err(|_| FormatError::at_line(name, line, format!("{what} `{s}` is not an integer")))
                }
            }
        };
        let process = int_field(cols.process, "process")?;
        let thread = int_field(cols.thread, "thread")?;
        let thread = i64::try_from(thread).map_err(|_| FormatError::at_line(name, line, "thread id out of range"))?;
        let attrs = cols
            .attributes
            .and_then(|c| fields.get(c))
            .map(|&f| scanner.field_text(f));
        reader
            .event(
                time,
                &get(cols.event),
                &get(cols.name),
                thread,
                process,
                attrs.as_deref(),
            )
            .map_err(|m| FormatError::at_line(name, line, m))?;
    }
    reader.resolve_comms();
    let mut trace = reader.trace;
    if reader.outside_calls > 0 {
        trace.warnings.push(format!(
            "{} message events were outside any MPI call; skipped",
            reader.outside_calls
        ));
    }
    if reader.unmatched_leaves > 0 {
        trace.warnings.push(format!(
            "{} Leave events had no matching Enter",
            reader.unmatched_leaves
        ));
    }
    trace.normalise_order();
    Ok(trace)
}
