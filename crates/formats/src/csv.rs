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

// ------------------------------------------------------------------------------------------
// Python literals
// ------------------------------------------------------------------------------------------

/// A Python literal, as far as Pipit's attribute column needs.
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    /// `'text'` or `"text"`.
    Str(String),
    /// An integer (Python ints are unbounded; OTF2 values fit in 128 bits).
    Int(i128),
    /// A float, including `nan` / `inf` spelled as Pipit writes them.
    Float(f64),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
    /// `[...]` or `(...)`.
    List(Vec<PyValue>),
    /// `{key: value, ...}` in written order.
    Dict(Vec<(PyValue, PyValue)>),
}

impl PyValue {
    /// The value under string key `key` of a dict.
    pub fn get(&self, key: &str) -> Option<&PyValue> {
        match self {
            PyValue::Dict(items) => items
                .iter()
                .find(|(k, _)| matches!(k, PyValue::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }
    /// The value as an integer (floats with no fraction count).
    pub fn as_int(&self) -> Option<i128> {
        match self {
            PyValue::Int(i) => Some(*i),
            PyValue::Float(f) if f.fract() == 0.0 && f.is_finite() => Some(*f as i128),
            PyValue::Bool(b) => Some(*b as i128),
            _ => None,
        }
    }
    /// The value as text, for strings only.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            PyValue::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Nesting limit of literals: deeper input is hostile, not a trace.
const MAX_DEPTH: u32 = 64;

/// Parse one Python literal (the whole of `text`, surrounding spaces allowed).
pub fn parse_py_literal(text: &str) -> Result<PyValue, String> {
    let mut p = PyParser {
        s: text.as_bytes(),
        text,
        pos: 0,
    };
    let v = p.value(0)?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(format!(
            "unexpected `{}` after the value at character {}",
            p.rest(),
            p.pos + 1
        ));
    }
    Ok(v)
}

struct PyParser<'a> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
}

impl PyParser<'_> {
    fn skip_ws(&mut self) {
        while self.s.get(self.pos).is_some_and(|c| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }
    fn rest(&self) -> &str {
        let end = (self.pos + 20).min(self.text.len());
        self.text.get(self.pos..end).unwrap_or("…")
    }
    fn value(&mut self, depth: u32) -> Result<PyValue, String> {
        if depth > MAX_DEPTH {
            return Err(format!("literal nested more than {MAX_DEPTH} levels"));
        }
        self.skip_ws();
        match self.s.get(self.pos) {
            None => Err("the value ends too early".into()),
            Some(b'\'' | b'"') => self.string().map(PyValue::Str),
            Some(b'{') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_ws();
                    if self.s.get(self.pos) == Some(&b'}') {
                        self.pos += 1;
                        return Ok(PyValue::Dict(items));
                    }
                    let k = self.value(depth + 1)?;
                    self.skip_ws();
                    if self.s.get(self.pos) != Some(&b':') {
                        return Err(format!("expected `:` in a dict at character {}", self.pos + 1));
                    }
                    self.pos += 1;
                    let v = self.value(depth + 1)?;
                    items.push((k, v));
                    self.skip_ws();
                    match self.s.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {}
                        _ => return Err(format!("expected `,` or `}}` in a dict at character {}", self.pos + 1)),
                    }
                }
            }
            Some(&open @ (b'[' | b'(')) => {
                let close = if open == b'[' { b']' } else { b')' };
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_ws();
                    if self.s.get(self.pos) == Some(&close) {
                        self.pos += 1;
                        return Ok(PyValue::List(items));
                    }
                    items.push(self.value(depth + 1)?);
                    self.skip_ws();
                    match self.s.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(&c) if c == close => {}
                        _ => {
                            return Err(format!(
                                "expected `,` or `{}` at character {}",
                                close as char,
                                self.pos + 1
                            ))
                        }
                    }
                }
            }
            Some(_) => {
                let start = self.pos;
                while self
                    .s
                    .get(self.pos)
                    .is_some_and(|&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'+' | b'_'))
                {
                    self.pos += 1;
                }
                let word = &self.text[start..self.pos];
                if self.s.get(self.pos) == Some(&b'(') && word.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    // A one-argument constructor such as numpy 2's `np.int64(5)`: its value.
                    self.pos += 1;
                    let inner = self.value(depth + 1)?;
                    self.skip_ws();
                    if self.s.get(self.pos) != Some(&b')') {
                        return Err(format!("expected `)` after the argument of `{word}(`"));
                    }
                    self.pos += 1;
                    return Ok(inner);
                }
                match word {
                    "" => Err(format!("unexpected `{}`", self.rest())),
                    "True" => Ok(PyValue::Bool(true)),
                    "False" => Ok(PyValue::Bool(false)),
                    "None" => Ok(PyValue::None),
                    "nan" | "inf" | "-inf" => Ok(PyValue::Float(word.parse().expect("valid float words"))),
                    _ => {
                        let digits = word.replace('_', "");
                        if let Ok(i) = digits.parse::<i128>() {
                            Ok(PyValue::Int(i))
                        } else if let Ok(f) = digits.parse::<f64>() {
                            Ok(PyValue::Float(f))
                        } else {
                            Err(format!("`{word}` is not a Python literal"))
                        }
                    }
                }
            }
        }
    }
    fn string(&mut self) -> Result<String, String> {
        let quote = self.s[self.pos];
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(&c) = self.s.get(self.pos) else {
                return Err("a string is not closed".into());
            };
            if c == quote {
                self.pos += 1;
                return Ok(out);
            }
            if c == b'\\' {
                let e = self.s.get(self.pos + 1).copied().ok_or("a string ends with `\\`")?;
                self.pos += 2;
                match e {
                    b'n' => out.push('\n'),
                    b't' => out.push('\t'),
                    b'r' => out.push('\r'),
                    b'0' => out.push('\0'),
                    b'x' => {
                        let hex = self.text.get(self.pos..self.pos + 2).ok_or("bad \\x escape")?;
                        let v = u8::from_str_radix(hex, 16).map_err(|_| "bad \\x escape")?;
                        out.push(v as char);
                        self.pos += 2;
                    }
                    other => out.push(other as char),
                }
                continue;
            }
            let len = match c {
                0xf0..=0xff => 4,
                0xe0..=0xef => 3,
                0xc0..=0xdf => 2,
                _ => 1,
            };
            out.push_str(
                self.text
                    .get(self.pos..self.pos + len)
                    .ok_or("broken UTF-8 in a string")?,
            );
            self.pos += len;
        }
    }
}

// ------------------------------------------------------------------------------------------
// CSV records
// ------------------------------------------------------------------------------------------

/// Splits CSV text into records of fields (RFC 4180 quoting, spaces around fields trimmed),
/// reusing one buffer of field ranges.
struct CsvScanner<'a> {
    text: &'a str,
    pos: usize,
    line: u64,
}

/// A field: byte range in the text, and whether it holds doubled quotes to undo.
#[derive(Clone, Copy)]
struct Field {
    start: usize,
    end: usize,
    escaped: bool,
}

impl<'a> CsvScanner<'a> {
    fn field_text(&self, f: Field) -> std::borrow::Cow<'a, str> {
        let s = &self.text[f.start..f.end];
        if f.escaped {
            std::borrow::Cow::Owned(s.replace("\"\"", "\""))
        } else {
            std::borrow::Cow::Borrowed(s)
        }
    }

    /// Read the next record into `fields`; returns its first line number, or `None` at the end.
    fn next_record(&mut self, fields: &mut Vec<Field>) -> Result<Option<u64>, (u64, String)> {
        let b = self.text.as_bytes();
        // Skip blank lines.
        loop {
            let start = self.pos;
            while matches!(b.get(self.pos), Some(b' ' | b'\t' | b'\r')) {
                self.pos += 1;
            }
            match b.get(self.pos) {
                None => return Ok(None),
                Some(b'\n') => {
                    self.pos += 1;
                    self.line += 1;
                }
                _ => {
                    self.pos = start;
                    break;
                }
            }
        }
        fields.clear();
        let first_line = self.line;
        loop {
            while matches!(b.get(self.pos), Some(b' ' | b'\t')) {
                self.pos += 1;
            }
            if b.get(self.pos) == Some(&b'"') {
                let start = self.pos + 1;
                let mut i = start;
                let mut escaped = false;
                loop {
                    match b.get(i) {
                        None => return Err((first_line, "a quoted field is not closed".into())),
                        Some(b'"') if b.get(i + 1) == Some(&b'"') => {
                            escaped = true;
                            i += 2;
                        }
                        Some(b'"') => break,
                        Some(b'\n') => {
                            self.line += 1;
                            i += 1;
                        }
                        Some(_) => i += 1,
                    }
                }
                fields.push(Field { start, end: i, escaped });
                self.pos = i + 1;
                while matches!(b.get(self.pos), Some(b' ' | b'\t' | b'\r')) {
                    self.pos += 1;
                }
                match b.get(self.pos) {
                    Some(b',') => self.pos += 1,
                    Some(b'\n') | None => {}
                    Some(_) => {
                        return Err((
                            self.line,
                            format!("unexpected text after quoted field {}", fields.len()),
                        ))
                    }
                }
            } else {
                let start = self.pos;
                while !matches!(b.get(self.pos), Some(b',' | b'\n') | None) {
                    self.pos += 1;
                }
                let end = start + self.text[start..self.pos].trim_end().len();
                fields.push(Field {
                    start,
                    end,
                    escaped: false,
                });
                if b.get(self.pos) == Some(&b',') {
                    self.pos += 1;
                    continue;
                }
            }
            match b.get(self.pos) {
                Some(b'\n') => {
                    self.pos += 1;
                    self.line += 1;
                    return Ok(Some(first_line));
                }
                None => return Ok(Some(first_line)),
                _ => {}
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// Reader
// ------------------------------------------------------------------------------------------

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
                        let calls = &mut self.trace.ranks[r as usize].calls;
                        calls.exit[idx as usize] = time.max(calls.enter[idx as usize]);
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
                        p.complete[op] = call;
                        p.peer[op] = peer;
                        p.tag[op] = tag;
                        p.bytes[op] = bytes;
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
                    self.trace.ranks[r as usize].p2p.complete[op] = call;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_literals() {
        let v = parse_py_literal(
            "{'attributes': {'Attribute 2': 26602}, 'program_name': \"/a/b\", 'args': [], 'x': (1.5, -2, None, True), 'e': -9223372036854775808}",
        )
        .unwrap();
        assert_eq!(
            v.get("attributes").unwrap().get("Attribute 2"),
            Some(&PyValue::Int(26602))
        );
        assert_eq!(v.get("program_name").and_then(PyValue::as_str), Some("/a/b"));
        assert_eq!(v.get("args"), Some(&PyValue::List(vec![])));
        assert_eq!(
            v.get("x"),
            Some(&PyValue::List(vec![
                PyValue::Float(1.5),
                PyValue::Int(-2),
                PyValue::None,
                PyValue::Bool(true)
            ]))
        );
        assert_eq!(v.get("e").and_then(PyValue::as_int), Some(-9223372036854775808));
        assert_eq!(parse_py_literal("'it\\'s'").unwrap(), PyValue::Str("it's".into()));
        assert_eq!(
            parse_py_literal("{'receiver': np.int64(3), 'x': np.float64(2.5)}")
                .unwrap()
                .get("receiver"),
            Some(&PyValue::Int(3))
        );
        assert!(parse_py_literal("np.int64(3, 4)").is_err());
        assert!(parse_py_literal("{'a': 1").is_err());
        assert!(parse_py_literal("{'a' 1}").is_err());
        assert!(parse_py_literal("[1, 2] x").is_err());
        assert!(parse_py_literal(&"[".repeat(10_000)).is_err());
    }
}
