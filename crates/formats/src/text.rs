//! tracelogic's native text format: one MPI call per line, easy to write by hand.
//!
//! The format carries every field of the [`Trace`] model, so [`write()`] followed by [`read`]
//! gives back the same trace (same ids, same order). The complete grammar, every key and a
//! hand-written example are in `docs/formats.md` of the repository; in short:
//!
//! ```text
//! #tracelogic-text 1
//! ranks 2
//! 0 0 1.5us MPI_Send send=1 tag=7 bytes=1024
//! 1 0 2us   MPI_Recv recv=0 tag=7 bytes=1024
//! ```
//!
//! Reading is a single pass over the bytes: lines and tokens are slices of the input, and
//! names are interned once, so the only allocations are the model's own columns.

use crate::{FormatError, InputFile, Progress, ProgressSink};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use tracelogic_model::{
    CallKind, CollectiveOp, CommId, FuncId, Location, MetricSamples, P2pDir, Rank, Time, Trace, ANY_SOURCE, ANY_TAG,
    COMM_WORLD, NOT_COMPLETED, NO_CALLPATH, NO_ROOT,
};

/// Maps consulted on every call line (function names, open requests): foldhash instead of
/// SipHash, seeded per map so a hostile file still cannot choose colliding keys.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Typical length of a call line (`0 10500 11000 MPI_Irecv recv=3 tag=0 bytes=4096 req=0`), to
/// reserve the model's columns from the file size.
const CALL_LINE_BYTES: usize = 64;

/// First line of every native text trace (followed by a space and the format version).
pub const MAGIC: &str = "#tracelogic-text";
/// The format version this module reads and writes.
pub const VERSION: u32 = 1;

/// Every collective operation with the spelling used by `coll=`.
const COLLECTIVE_OPS: [(&str, CollectiveOp); 18] = [
    ("Barrier", CollectiveOp::Barrier),
    ("Bcast", CollectiveOp::Bcast),
    ("Gather", CollectiveOp::Gather),
    ("Gatherv", CollectiveOp::Gatherv),
    ("Scatter", CollectiveOp::Scatter),
    ("Scatterv", CollectiveOp::Scatterv),
    ("Allgather", CollectiveOp::Allgather),
    ("Allgatherv", CollectiveOp::Allgatherv),
    ("Alltoall", CollectiveOp::Alltoall),
    ("Alltoallv", CollectiveOp::Alltoallv),
    ("Alltoallw", CollectiveOp::Alltoallw),
    ("Reduce", CollectiveOp::Reduce),
    ("Allreduce", CollectiveOp::Allreduce),
    ("ReduceScatter", CollectiveOp::ReduceScatter),
    ("ReduceScatterBlock", CollectiveOp::ReduceScatterBlock),
    ("Scan", CollectiveOp::Scan),
    ("Exscan", CollectiveOp::Exscan),
    ("Other", CollectiveOp::Other),
];

/// Every call kind with the spelling used by `kind=`.
const CALL_KINDS: [(&str, CallKind); 11] = [
    ("Send", CallKind::Send),
    ("Isend", CallKind::Isend),
    ("Recv", CallKind::Recv),
    ("Irecv", CallKind::Irecv),
    ("SendRecv", CallKind::SendRecv),
    ("Completion", CallKind::Completion),
    ("Probe", CallKind::Probe),
    ("Collective", CallKind::Collective),
    ("Communicator", CallKind::Communicator),
    ("Lifecycle", CallKind::Lifecycle),
    ("Other", CallKind::Other),
];

fn op_name(op: CollectiveOp) -> &'static str {
    COLLECTIVE_OPS
        .iter()
        .find(|(_, o)| *o == op)
        .map(|(n, _)| *n)
        .unwrap_or("Other")
}

fn kind_name(kind: CallKind) -> &'static str {
    CALL_KINDS
        .iter()
        .find(|(_, k)| *k == kind)
        .map(|(n, _)| *n)
        .unwrap_or("Other")
}

// ------------------------------------------------------------------------------------------
// Writing
// ------------------------------------------------------------------------------------------

/// True when `s` cannot be written as a bare token.
fn needs_quotes(s: &str) -> bool {
    s.is_empty()
        || s.starts_with('#')
        || s.bytes()
            .any(|c| c.is_ascii_whitespace() || c == b'"' || c == b'=' || c == b'\\' || c.is_ascii_control())
}

/// Append `s` as a token, quoting and escaping it when needed.
fn push_token(out: &mut String, s: &str) {
    if !needs_quotes(s) {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Members as comma-separated ranks and ranges: `0-3,8,10-11`.
fn push_members(out: &mut String, members: &[Rank]) {
    if members.is_empty() {
        out.push('-');
        return;
    }
    let mut i = 0;
    while i < members.len() {
        let start = members[i];
        let mut j = i;
        while j + 1 < members.len() && members[j + 1] == members[j].wrapping_add(1) && members[j + 1] > members[j] {
            j += 1;
        }
        if i > 0 {
            out.push(',');
        }
        if j > i {
            let _ = write!(out, "{start}-{}", members[j]);
        } else {
            let _ = write!(out, "{start}");
        }
        i = j + 1;
    }
}

/// Write `trace` in the native text format (the reader reads it back unchanged).
///
/// Names are declared before use (`function`, `region`, `metric`, `callpath` lines) so ids
/// survive the round trip; calls follow rank by rank in program order, each carrying its
/// point-to-point operations (`send=`/`recv=`), collective (`coll=`) and the requests it
/// completes (`wait=`). Non-blocking operations get `req=` ids equal to their index in the
/// rank's operations. `Trace::format` is not written: a trace read back says `text`.
pub fn write(trace: &Trace) -> String {
    let mut out = String::with_capacity(64 + trace.num_calls() as usize * 48);
    let _ = writeln!(out, "{MAGIC} {VERSION}");
    out.push_str("source ");
    push_token(&mut out, &trace.source);
    out.push('\n');
    let _ = writeln!(out, "ranks {}", trace.num_ranks());
    for (k, v) in &trace.meta {
        out.push_str("meta ");
        push_token(&mut out, k);
        out.push(' ');
        push_token(&mut out, v);
        out.push('\n');
    }
    for w in &trace.warnings {
        out.push_str("warning ");
        push_token(&mut out, w);
        out.push('\n');
    }
    for (i, c) in trace.comms.iter().enumerate() {
        let _ = write!(out, "comm {i} ");
        push_token(&mut out, &c.name);
        out.push(' ');
        push_members(&mut out, &c.members);
        out.push('\n');
    }
    for (keyword, names) in [
        ("function", trace.functions.names()),
        ("region", trace.regions.names()),
        ("metric", trace.metrics.names()),
    ] {
        for (i, n) in names.iter().enumerate() {
            let _ = write!(out, "{keyword} {i} ");
            push_token(&mut out, n);
            out.push('\n');
        }
    }
    for (i, path) in trace.callpaths.iter().enumerate() {
        let _ = write!(out, "callpath {i}");
        for r in path {
            let _ = write!(out, " {r}");
        }
        out.push('\n');
    }
    for rt in &trace.ranks {
        write_rank(&mut out, trace, rt);
    }
    out
}

fn write_rank(out: &mut String, trace: &Trace, rt: &tracelogic_model::RankTrace) {
    let r = rt.rank;
    for loc in &rt.locations {
        let _ = write!(out, "location {r} {} ", loc.id);
        push_token(out, &loc.name);
        out.push('\n');
    }
    if let Some((a, b)) = rt.span {
        let _ = writeln!(out, "span {r} {a} {b}");
    }
    let calls = &rt.calls;
    let p = &rt.p2p;
    let c = &rt.collectives;
    // Operations grouped by their posting call, and the requests each call completes; the
    // model keeps operations sorted by call, but the writer does not rely on it.
    let mut p2p_by_call: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut waits: HashMap<u32, Vec<usize>> = HashMap::new();
    for i in 0..p.len() {
        p2p_by_call.entry(p.post[i]).or_default().push(i);
        if p.complete[i] > p.post[i] && p.complete[i] != NOT_COMPLETED {
            waits.entry(p.complete[i]).or_default().push(i);
        }
    }
    let mut coll_by_call: HashMap<u32, Vec<usize>> = HashMap::new();
    for i in 0..c.len() {
        coll_by_call.entry(c.call[i]).or_default().push(i);
    }
    for i in 0..calls.len() {
        let idx = i as u32;
        let func = trace.functions.name(calls.func[i]);
        let _ = write!(out, "{r} {} {} ", calls.enter[i], calls.exit[i]);
        push_token(out, func);
        let kind = calls.kind[i];
        if kind != CallKind::classify(func) {
            let _ = write!(out, " kind={}", kind_name(kind));
        }
        if calls.location[i] != 0 {
            let _ = write!(out, " loc={}", calls.location[i]);
        }
        if calls.callpath[i] != NO_CALLPATH {
            let _ = write!(out, " cp={}", calls.callpath[i]);
        }
        for &o in p2p_by_call.get(&idx).map(Vec::as_slice).unwrap_or(&[]) {
            let dir = if p.dir[o] == P2pDir::Send { "send" } else { "recv" };
            if p.peer[o] == ANY_SOURCE {
                let _ = write!(out, " {dir}=any");
            } else {
                let _ = write!(out, " {dir}={}", p.peer[o]);
            }
            if p.tag[o] == ANY_TAG {
                out.push_str(" tag=any");
            } else {
                let _ = write!(out, " tag={}", p.tag[o]);
            }
            let _ = write!(out, " bytes={}", p.bytes[o]);
            if p.comm[o] != COMM_WORLD {
                let _ = write!(out, " comm={}", p.comm[o]);
            }
            if p.complete[o] < p.post[o] {
                // Completed by an earlier call: only a model built by hand does this.
                let _ = write!(out, " done={}", p.complete[o]);
            } else if p.complete[o] != p.post[o] {
                let _ = write!(out, " req={o}");
            }
        }
        let colls = coll_by_call.get(&idx).map(Vec::as_slice).unwrap_or(&[]);
        for &o in colls {
            let _ = write!(out, " coll={}", op_name(c.op[o]));
            if c.comm[o] != COMM_WORLD {
                let _ = write!(out, " comm={}", c.comm[o]);
            }
            if c.root[o] != NO_ROOT {
                let _ = write!(out, " root={}", c.root[o]);
            }
            let _ = write!(out, " sent={} recvd={}", c.bytes_sent[o], c.bytes_recv[o]);
        }
        if colls.is_empty() && kind == CallKind::Collective {
            out.push_str(" coll=none");
        }
        if let Some(w) = waits.get(&idx) {
            out.push_str(" wait=");
            for (k, o) in w.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{o}");
            }
        }
        out.push('\n');
    }
    for m in &rt.metrics {
        let name = trace.metrics.name(m.metric);
        for (t, v) in m.time.iter().zip(&m.value) {
            let _ = write!(out, "sample {r} ");
            push_token(out, name);
            let _ = writeln!(out, " {t} {v:?}");
        }
    }
}

// ------------------------------------------------------------------------------------------
// Reading
// ------------------------------------------------------------------------------------------

/// One token of a line: a word, or `key=value`.
struct Token<'a> {
    key: Cow<'a, str>,
    value: Option<Cow<'a, str>>,
}

/// Splits one line into tokens; `#` at the start of a token starts a comment.
struct Lexer<'a> {
    line: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn new(line: &'a str) -> Lexer<'a> {
        Lexer { line, pos: 0 }
    }

    fn quoted(&mut self) -> Result<Cow<'a, str>, String> {
        let bytes = self.line.as_bytes();
        let start = self.pos + 1;
        let mut i = start;
        let mut owned: Option<String> = None;
        loop {
            let Some(&c) = bytes.get(i) else {
                return Err("a quoted string is not closed before the end of the line".into());
            };
            match c {
                b'"' => {
                    self.pos = i + 1;
                    return Ok(match owned {
                        Some(s) => Cow::Owned(s),
                        None => Cow::Borrowed(&self.line[start..i]),
                    });
                }
                b'\\' => {
                    let s = owned.get_or_insert_with(|| self.line[start..i].to_owned());
                    let esc = match bytes.get(i + 1) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'n') => '\n',
                        Some(b't') => '\t',
                        Some(b'r') => '\r',
                        _ => return Err("unknown escape in a quoted string (use \\\" \\\\ \\n \\t \\r)".into()),
                    };
                    s.push(esc);
                    i += 2;
                }
                _ => {
                    let ch_len = utf8_len(c);
                    if let Some(s) = owned.as_mut() {
                        s.push_str(&self.line[i..i + ch_len]);
                    }
                    i += ch_len;
                }
            }
        }
    }

    fn bare(&mut self, stop_at_equals: bool) -> Result<&'a str, String> {
        let bytes = self.line.as_bytes();
        let start = self.pos;
        while let Some(&c) = bytes.get(self.pos) {
            if c == b' ' || c == b'\t' || (stop_at_equals && c == b'=') {
                break;
            }
            if c == b'"' {
                return Err(format!("unexpected `\"` inside `{}`", &self.line[start..self.pos]));
            }
            self.pos += 1;
        }
        Ok(&self.line[start..self.pos])
    }

    fn next_token(&mut self) -> Result<Option<Token<'a>>, String> {
        let bytes = self.line.as_bytes();
        while matches!(bytes.get(self.pos), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        match bytes.get(self.pos) {
            None | Some(b'#') => return Ok(None),
            Some(b'"') => {
                let word = self.quoted()?;
                return Ok(Some(Token { key: word, value: None }));
            }
            _ => {}
        }
        let key = self.bare(true)?;
        if bytes.get(self.pos) != Some(&b'=') {
            return Ok(Some(Token {
                key: Cow::Borrowed(key),
                value: None,
            }));
        }
        self.pos += 1;
        let value = if bytes.get(self.pos) == Some(&b'"') {
            self.quoted()?
        } else {
            Cow::Borrowed(self.bare(false)?)
        };
        Ok(Some(Token {
            key: Cow::Borrowed(key),
            value: Some(value),
        }))
    }

    /// The next plain word (not `key=value`), or an error naming what was expected.
    fn word(&mut self, what: &str) -> Result<Cow<'a, str>, String> {
        match self.next_token()? {
            Some(Token { key, value: None }) => Ok(key),
            Some(Token { key, value: Some(_) }) => Err(format!("expected {what}, found `{key}=...`")),
            None => Err(format!("expected {what} before the end of the line")),
        }
    }

    fn end(&mut self) -> Result<(), String> {
        match self.next_token()? {
            None => Ok(()),
            Some(t) => Err(format!("unexpected `{}` at the end of the line", t.key)),
        }
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

fn parse_u64(s: &str, what: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| format!("{what} must be a non-negative integer, found `{s}`"))
}

fn parse_u32(s: &str, what: &str) -> Result<u32, String> {
    s.parse::<u32>()
        .map_err(|_| format!("{what} must be an integer from 0 to {}, found `{s}`", u32::MAX))
}

/// A time in ns: `1500`, `1500ns`, `1.5us`, `2ms`, `0.25s`, rounded to the nearest ns.
fn parse_time(s: &str) -> Result<Time, String> {
    // Plain nanoseconds (what the writer emits): at most 19 digits cannot overflow a u64.
    if !s.is_empty() && s.len() <= 19 && s.bytes().all(|c| c.is_ascii_digit()) {
        return Ok(s.bytes().fold(0u64, |v, c| v * 10 + (c - b'0') as u64));
    }
    let digits_end = s
        .bytes()
        .position(|c| !(c.is_ascii_digit() || c == b'.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(digits_end);
    let scale: u128 = match unit {
        "" | "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return Err(format!("time `{s}` has an unknown unit (use ns, us, ms or s)")),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty() || frac.contains('.') || frac.len() > 18 {
        return Err(format!("`{s}` is not a time"));
    }
    let int_v: u128 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| format!("`{s}` is not a time"))?
    };
    let mut ns = int_v
        .checked_mul(scale)
        .ok_or_else(|| format!("time `{s}` is too large"))?;
    if !frac.is_empty() {
        let f: u128 = frac.parse().map_err(|_| format!("`{s}` is not a time"))?;
        let denom = 10u128.pow(frac.len() as u32);
        ns += (f * scale + denom / 2) / denom;
    }
    Time::try_from(ns).map_err(|_| format!("time `{s}` is too large"))
}

/// Members written as `0-3,8`; `-` for none.
fn parse_members(s: &str, num_ranks: u32) -> Result<Vec<Rank>, String> {
    let mut out = Vec::new();
    if s == "-" {
        return Ok(out);
    }
    for part in s.split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (parse_u32(a, "a member rank")?, parse_u32(b, "a member rank")?),
            None => {
                let a = parse_u32(part, "a member rank")?;
                (a, a)
            }
        };
        if a > b || b >= num_ranks {
            return Err(format!("member range `{part}` is not within ranks 0..{num_ranks}"));
        }
        if out.len() as u64 + u64::from(b - a) + 1 > u64::from(num_ranks) {
            return Err(format!("communicator lists more members than the {num_ranks} ranks"));
        }
        out.extend(a..=b);
    }
    Ok(out)
}

/// An operation being built from the keys of a call line.
enum Item {
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
    fn p2p(dir: P2pDir, peer: Rank) -> Item {
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

/// The requests posted with `req=` and not yet completed by a `wait=`, per rank.
///
/// Request ids are small integers that count up per rank in practice (the writer numbers them
/// by the rank's operations) and complete soon, so most live in a window of slots over the
/// ids; ids before the window or far beyond the rank's operation count (which a hostile file
/// could use to make the window huge) and operation indices that do not fit a slot's `u32` go
/// to a map. Each open request is in exactly one of the two.
#[derive(Default)]
struct OpenRequests {
    /// Per rank, the window of slots.
    ranks: Vec<RequestWindow>,
    /// Open requests that have no slot: (rank, request id) → index into the rank's operations.
    other: FastMap<(Rank, u64), usize>,
}

/// One rank's window of request slots: slot `i` is request `first + i`.
#[derive(Default)]
struct RequestWindow {
    /// The request id of the first slot.
    first: u64,
    /// 1 + the index into the rank's p2p operations of the open request, or 0 when that request
    /// is not open.
    slots: Vec<u32>,
}

impl RequestWindow {
    /// The slot of request `id`, if the window covers it.
    #[inline(always)]
    fn slot(&mut self, id: u64) -> Option<&mut u32> {
        let i = id.checked_sub(self.first)?;
        if i < self.slots.len() as u64 {
            Some(&mut self.slots[i as usize])
        } else {
            None
        }
    }
}

/// Slots a rank's window may hold beyond twice its operations, so the first requests need no
/// map.
const REQUEST_SLOTS_SLACK: u64 = 64;

impl OpenRequests {
    /// Opens request `id` of rank `r` as its operation `op`; false (and nothing changes) when
    /// that request is already open.
    #[inline]
    fn open(&mut self, r: Rank, id: u64, op: usize) -> bool {
        if self.ranks.len() <= r as usize {
            self.ranks.resize_with(r as usize + 1, RequestWindow::default);
        }
        let window = &mut self.ranks[r as usize];
        let open_in_window = window.slot(id).map(|s| *s != 0);
        if open_in_window == Some(true) || (!self.other.is_empty() && self.other.contains_key(&(r, id))) {
            return false;
        }
        let value = u32::try_from(op).ok().and_then(|op| op.checked_add(1));
        let slot = match (value, open_in_window) {
            (Some(_), Some(_)) => window.slot(id),
            (Some(_), None) if id >= window.first => {
                // Move the window past its completed requests, then grow it by doubling, but
                // never past twice the rank's operations (each slot then stands for at least
                // half an operation line of the file).
                let done = window.slots.iter().position(|&s| s != 0).unwrap_or(window.slots.len());
                window.slots.drain(..done);
                window.first += done as u64;
                let limit = 2 * op as u64 + REQUEST_SLOTS_SLACK;
                let need = id - window.first + 1;
                if need <= limit {
                    let len = need.max((2 * window.slots.len() as u64).min(limit));
                    window.slots.resize(len as usize, 0);
                }
                window.slot(id)
            }
            _ => None,
        };
        match (slot, value) {
            (Some(slot), Some(value)) => *slot = value,
            _ => {
                self.other.insert((r, id), op);
            }
        }
        true
    }

    /// Completes request `id` of rank `r`: the index of its operation, or `None` when it is not
    /// open.
    #[inline]
    fn close(&mut self, r: Rank, id: u64) -> Option<usize> {
        if let Some(slot) = self.ranks.get_mut(r as usize).and_then(|w| w.slot(id)) {
            if *slot != 0 {
                let op = *slot as usize - 1;
                *slot = 0;
                return Some(op);
            }
        }
        if self.other.is_empty() {
            return None;
        }
        self.other.remove(&(r, id))
    }
}

/// Reader state over one file.
struct Reader<'t> {
    file: &'t str,
    trace: Trace,
    /// `ranks` was seen.
    has_ranks: bool,
    /// Call kind of each function id, so classification runs once per name.
    kinds: Vec<CallKind>,
    /// Function name → id, so a call line costs one fast hash of its name.
    func_ids: FastMap<String, FuncId>,
    /// The short function names of recent plain call lines, checked before `func_ids`.
    names: NameCache,
    /// Request ids of the current call's `wait=` list (reused from line to line).
    waits: Vec<u64>,
    /// Explicit `span` lines, applied at the end.
    spans: Vec<(Rank, Time, Time)>,
    /// Open requests: (rank, request id) → index into the rank's p2p operations.
    pending: OpenRequests,
    explicit_source: bool,
    items: Vec<Item>,
    /// Call lines the fast path read (the tests check it carries the plain lines).
    fast_lines: u64,
    /// Plain call lines go through [`Reader::fast_call`] first (off only in tests, to compare).
    fast: bool,
}

impl<'t> Reader<'t> {
    /// A reader of the file `file` before its first line; `fast` enables the plain-line path.
    fn new(file: &'t str, fast: bool) -> Reader<'t> {
        Reader {
            file,
            trace: Trace::new("text", file, 0),
            has_ranks: false,
            kinds: Vec::new(),
            func_ids: FastMap::default(),
            names: NameCache::new(),
            waits: Vec::new(),
            spans: Vec::new(),
            pending: OpenRequests::default(),
            explicit_source: false,
            items: Vec::new(),
            fast_lines: 0,
            fast,
        }
    }

    fn rank(&self, s: &str) -> Result<Rank, String> {
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

    fn peer(&self, s: &str) -> Result<Rank, String> {
        if s == "any" {
            Ok(ANY_SOURCE)
        } else {
            self.rank(s)
        }
    }

    fn comm(&self, s: &str) -> Result<CommId, String> {
        let c = parse_u32(s, "a communicator id")?;
        if c as usize >= self.trace.comms.len() {
            return Err(format!(
                "communicator {c} is not defined (define it with a `comm` line first)"
            ));
        }
        Ok(c)
    }

    fn func_id(&mut self, name: &str) -> FuncId {
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

    fn declare(&mut self, keyword: &str, lx: &mut Lexer) -> Result<(), String> {
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

    fn directive(&mut self, keyword: &str, lx: &mut Lexer, remaining: usize) -> Result<(), String> {
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

    fn call(&mut self, rank_text: &str, lx: &mut Lexer) -> Result<(), String> {
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
    fn commit(
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
        c.exit.push(exit);
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
                            if !pending.open(r, id, op) {
                                return Err(format!("request {id} of rank {r} is posted again before it completed"));
                            }
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
            let Some(op) = pending.close(r, id) else {
                return Err(format!("wait={id}: rank {r} has no open request {id}"));
            };
            rt.p2p.complete[op] = idx;
        }
        self.waits = waits;
        Ok(())
    }
}

/// A line of the file for the plain-line fast path, as the file from the line's first byte
/// on: the fast path finds the line's end itself (a `\n`, a `\r\n` or the end of the file, as
/// the general reader's line splitting), and any eight bytes are one load.
///
/// The byte that ends a line (`\r`, `\n` or none) is not a digit, a space or a letter, so a
/// digit run or key read from a word stops at the line's end by itself.
#[derive(Clone, Copy)]
struct LineWords<'a> {
    /// The file from the line's first byte on.
    rest: &'a [u8],
}

impl<'a> LineWords<'a> {
    /// The line that starts `rest`.
    fn new(rest: &'a [u8]) -> LineWords<'a> {
        LineWords { rest }
    }

    /// True when the line ends at `pos`: `\n`, `\r\n`, a `\r` ending the file, or the file's end.
    #[inline(always)]
    fn ends_at(&self, pos: usize) -> bool {
        match self.rest.get(pos) {
            None | Some(b'\n') => true,
            Some(b'\r') => matches!(self.rest.get(pos + 1), None | Some(b'\n')),
            _ => false,
        }
    }

    /// True when a token ends at `pos`: a space or the line's end.
    #[inline(always)]
    fn token_ends_at(&self, pos: usize) -> bool {
        self.rest.get(pos) == Some(&b' ') || self.ends_at(pos)
    }

    /// `pos` when the byte there is a space.
    #[inline(always)]
    fn space_at(&self, pos: usize) -> Option<usize> {
        (self.rest.get(pos) == Some(&b' ')).then_some(pos)
    }

    /// True when the line continues at `pos` with `text` (which holds no line end).
    #[inline(always)]
    fn has_at(&self, pos: usize, text: &[u8]) -> bool {
        self.rest.get(pos..).is_some_and(|r| r.starts_with(text))
    }

    /// Eight bytes of the file from the line's byte `pos` on, as a little-endian word (the
    /// first byte lowest); zero bytes past the end of the file.
    #[inline(always)]
    fn word(&self, pos: usize) -> u64 {
        match self.rest.get(pos..pos + 8) {
            Some(bytes) => {
                let mut w = [0u8; 8];
                w.copy_from_slice(bytes);
                u64::from_le_bytes(w)
            }
            None => self.last_word(pos),
        }
    }

    /// [`LineWords::word`] within eight bytes of the end of the file.
    #[cold]
    #[inline(never)]
    fn last_word(&self, pos: usize) -> u64 {
        let mut w = [0u8; 8];
        let rest = self.rest.get(pos..).unwrap_or(&[]);
        w[..rest.len()].copy_from_slice(rest);
        u64::from_le_bytes(w)
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Number of leading ASCII digits in the word `w` (0 to 8).
#[inline(always)]
fn leading_digits(w: u64) -> u32 {
    // A byte is a digit when its high nibble is 3 and stays 3 after adding 6. A carry out of a
    // byte can only come from a non-digit, so it only disturbs bytes after the first one.
    let high = w & 0xF0F0_F0F0_F0F0_F0F0;
    let high_plus_6 = w.wrapping_add(6 * ONES) & 0xF0F0_F0F0_F0F0_F0F0;
    let not_digit = (high ^ (0x30 * ONES)) | (high_plus_6 ^ (0x30 * ONES));
    not_digit.trailing_zeros() / 8
}

/// Bytes of the word `w` before its first byte below `!` (a space, a control byte such as
/// `\r` or `\n`, or the zero bytes past the end of the file); 8 when there is none.
#[inline(always)]
fn bytes_before_space_or_control(w: u64) -> u32 {
    // Exact at the lowest such byte: a borrow only comes out of a byte that is one.
    (w.wrapping_sub(0x21 * ONES) & !w & HIGH_BITS).trailing_zeros() / 8
}

/// Value of the first `n` (1 to 8) bytes of `w`, all ASCII digits, the first one most
/// significant (the eight-digit multiply-and-shift reduction).
#[inline(always)]
fn digits_value(w: u64, n: u32) -> u64 {
    // Shift the digits to the top of the word: the zero bytes below read as leading zeros.
    let w = (w << (8 * (8 - n))) & 0x0F0F_0F0F_0F0F_0F0F;
    let w = w.wrapping_mul(10 * 256 + 1) >> 8;
    let w = (w & 0x00FF_00FF_00FF_00FF).wrapping_mul(100 * 65_536 + 1) >> 16;
    (w & 0x0000_FFFF_0000_FFFF).wrapping_mul(10_000 * (1 << 32) + 1) >> 32
}

/// Powers of ten up to 10^8, to append a run of digits to a value.
const POW10: [u64; 9] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/// Digits at `pos` up to the next non-digit (1 to 19 of them, so they fit a u64), or `None`.
#[inline(always)]
fn fast_digits(b: LineWords, pos: &mut usize) -> Option<u64> {
    let w = b.word(*pos);
    let n = leading_digits(w);
    if n == 0 {
        return None;
    }
    *pos += n as usize;
    let v = digits_value(w, n);
    if n < 8 || !b.rest.get(*pos).is_some_and(u8::is_ascii_digit) {
        Some(v)
    } else {
        more_digits(b, pos, v)
    }
}

/// [`fast_digits`] past its first eight digits `v`.
#[inline(never)]
fn more_digits(b: LineWords, pos: &mut usize, mut v: u64) -> Option<u64> {
    for max in [8, 3] {
        let w = b.word(*pos);
        let n = leading_digits(w);
        if n > max {
            // A 20th digit may not fit: the general parser decides.
            return None;
        }
        if n > 0 {
            *pos += n as usize;
            v = v * POW10[n as usize] + digits_value(w, n);
        }
        if n < 8 {
            return Some(v);
        }
    }
    Some(v)
}

/// A whole value of digits ending the token (at a space or the end of the line).
#[inline(always)]
fn fast_value(b: LineWords, pos: &mut usize) -> Option<u64> {
    let v = fast_digits(b, pos)?;
    b.token_ends_at(*pos).then_some(v)
}

impl Reader<'_> {
    /// A rank of this trace written in plain digits ending the token.
    #[inline]
    fn fast_rank(&self, b: LineWords, pos: &mut usize) -> Option<Rank> {
        let r = fast_value(b, pos)?;
        (r < u64::from(self.trace.num_ranks())).then_some(r as Rank)
    }

    /// The fast path for call lines in the writer's plain form: `R ENTER EXIT FUNC` with times in
    /// plain nanoseconds, single spaces, and only the keys `send= recv= tag= bytes= req= coll=
    /// root= sent= recvd= wait=` with plain values (no quotes, units, `any` tags on collectives,
    /// comments or other keys). Fields are decoded by byte scanning into the same items the
    /// general parser builds and appended by the same [`Reader::commit`]; with the result comes
    /// the line's length (without its `\r\n` or `\n`). `None` when the line is anything else or
    /// a value the general parser would refuse: nothing has changed then, and the general parser
    /// reads the line and words any error.
    fn fast_call(&mut self, words: LineWords) -> Option<(Result<(), String>, usize)> {
        let b = words.rest;
        let mut pos = 0usize;
        // Each of the three numbers is followed by a space: the line goes on to the name.
        let r = self.fast_rank(words, &mut pos)?;
        pos = words.space_at(pos)? + 1;
        let enter = fast_value(words, &mut pos)?;
        pos = words.space_at(pos)? + 1;
        let exit = fast_value(words, &mut pos)?;
        pos = words.space_at(pos)? + 1;
        if exit < enter {
            return None;
        }
        let name_start = pos;
        let name = ShortName::at(words, pos);
        let cached = name.and_then(|n| self.names.get(&n));
        if cached.is_some() {
            // The same bytes as a name an earlier line validated.
            pos += name.map_or(0, |n| n.len as usize);
        } else {
            while !words.token_ends_at(pos) {
                let c = b[pos];
                if !(c.is_ascii_alphanumeric() || c == b'_') {
                    return None;
                }
                pos += 1;
            }
            if pos == name_start {
                return None;
            }
        }
        let name_end = pos;
        let mut waits = std::mem::take(&mut self.waits);
        waits.clear();
        self.items.clear();
        let Some(line_len) = self.fast_keys(words, pos, &mut waits) else {
            self.waits = waits;
            return None;
        };
        let (func, kind) = match cached {
            Some(hit) => hit,
            None => {
                let func_name = std::str::from_utf8(&b[name_start..name_end]).ok()?;
                let func = self.func_id(func_name);
                let kind = self.kinds[func as usize];
                if let Some(n) = name {
                    self.names.put(n, func, kind);
                }
                (func, kind)
            }
        };
        if kind == CallKind::Collective && self.items.is_empty() {
            self.items.push(Item::Coll {
                op: None,
                comm: COMM_WORLD,
                root: NO_ROOT,
                sent: 0,
                recvd: 0,
            });
        }
        self.fast_lines += 1;
        Some((self.commit(r, enter, exit, func, kind, 0, NO_CALLPATH, waits), line_len))
    }

    /// The `key=value` tokens of a plain call line from `pos` into `self.items` and `waits`, and
    /// the line's length; `None` at anything the fast path leaves to the general parser.
    fn fast_keys(&mut self, words: LineWords, mut pos: usize, waits: &mut Vec<u64>) -> Option<usize> {
        let b = words.rest;
        while !words.ends_at(pos) {
            // The space, the key and its `=` (at most 7 bytes) are compared with each key the
            // fast path takes as one integer: what follows the key is found without a search.
            let w = words.word(pos);
            let (key, key_len) = match w & LOW_6_BYTES {
                SPACED_SEND => (KEY_SEND, 6),
                SPACED_RECV => (KEY_RECV, 6),
                SPACED_WAIT => (KEY_WAIT, 6),
                SPACED_COLL => (KEY_COLL, 6),
                SPACED_ROOT => (KEY_ROOT, 6),
                SPACED_SENT => (KEY_SENT, 6),
                _ => match w & LOW_5_BYTES {
                    SPACED_TAG => (KEY_TAG, 5),
                    SPACED_REQ => (KEY_REQ, 5),
                    _ => match w & LOW_7_BYTES {
                        SPACED_BYTES => (KEY_BYTES, 7),
                        SPACED_RECVD => (KEY_RECVD, 7),
                        _ => return None,
                    },
                },
            };
            pos += key_len;
            match key {
                KEY_SEND | KEY_RECV => {
                    let peer = if words.has_at(pos, b"any") && words.token_ends_at(pos + 3) {
                        pos += 3;
                        ANY_SOURCE
                    } else {
                        self.fast_rank(words, &mut pos)?
                    };
                    let dir = if key == KEY_SEND { P2pDir::Send } else { P2pDir::Recv };
                    // The writer follows a peer with ` tag=`, ` bytes=` and, for a non-blocking
                    // call, ` req=`: take those in that order by comparing the literal keys
                    // (what the loop below would do with them, without finding each key's end).
                    let (mut tag, mut bytes, mut req) = (0, 0, None);
                    if words.word(pos) & LOW_5_BYTES == SPACED_TAG {
                        pos += 5;
                        tag = fast_tag(words, &mut pos)?;
                        if words.word(pos) & LOW_7_BYTES == SPACED_BYTES {
                            pos += 7;
                            bytes = fast_value(words, &mut pos)?;
                            if words.word(pos) & LOW_5_BYTES == SPACED_REQ {
                                pos += 5;
                                req = Some(fast_value(words, &mut pos)?);
                            }
                        }
                    }
                    self.items.push(Item::P2p {
                        dir,
                        peer,
                        tag,
                        comm: COMM_WORLD,
                        bytes,
                        req,
                        done: None,
                    });
                }
                KEY_TAG => {
                    let v = fast_tag(words, &mut pos)?;
                    match self.items.last_mut()? {
                        Item::P2p { tag, .. } => *tag = v,
                        Item::Coll { .. } => return None,
                    }
                }
                KEY_BYTES => {
                    let v = fast_value(words, &mut pos)?;
                    match self.items.last_mut()? {
                        Item::P2p { bytes, .. } => *bytes = v,
                        Item::Coll { sent, recvd, .. } => {
                            *sent = v;
                            *recvd = v;
                        }
                    }
                }
                KEY_REQ => {
                    let v = fast_value(words, &mut pos)?;
                    match self.items.last_mut()? {
                        Item::P2p { req, .. } => *req = Some(v),
                        Item::Coll { .. } => return None,
                    }
                }
                KEY_SENT | KEY_RECVD => {
                    let v = fast_value(words, &mut pos)?;
                    match self.items.last_mut()? {
                        Item::Coll { sent, .. } if key == KEY_SENT => *sent = v,
                        Item::Coll { recvd, .. } => *recvd = v,
                        Item::P2p { .. } => return None,
                    }
                }
                KEY_WAIT => loop {
                    waits.push(fast_digits(words, &mut pos)?);
                    if b.get(pos) == Some(&b',') {
                        pos += 1;
                    } else if words.token_ends_at(pos) {
                        break;
                    } else {
                        return None;
                    }
                },
                KEY_ROOT => {
                    let rank = self.fast_rank(words, &mut pos)?;
                    match self.items.last_mut()? {
                        Item::Coll { root, .. } => *root = rank,
                        Item::P2p { .. } => return None,
                    }
                }
                KEY_COLL => {
                    let mut end = pos;
                    while !words.token_ends_at(end) {
                        end += 1;
                    }
                    let name = &b[pos..end];
                    let op = COLLECTIVE_OPS.iter().find(|(n, _)| n.as_bytes() == name)?.1;
                    pos = end;
                    self.items.push(Item::Coll {
                        op: Some(op),
                        comm: COMM_WORLD,
                        root: NO_ROOT,
                        sent: 0,
                        recvd: 0,
                    });
                }
                _ => return None,
            }
        }
        Some(pos)
    }
}

/// The value of a `tag=` key: `any` or an `i32` in plain digits, ending the token.
#[inline(always)]
fn fast_tag(b: LineWords, pos: &mut usize) -> Option<i32> {
    if b.has_at(*pos, b"any") {
        *pos += 3;
        return b.token_ends_at(*pos).then_some(ANY_TAG);
    }
    i32::try_from(fast_value(b, pos)?).ok()
}

const LOW_5_BYTES: u64 = (1 << 40) - 1;
const LOW_6_BYTES: u64 = (1 << 48) - 1;
const LOW_7_BYTES: u64 = (1 << 56) - 1;

/// The bytes of a key (at most 8) as the little-endian integer [`LineWords::word`] reads them as.
const fn key_word(key: &[u8]) -> u64 {
    let mut w = 0u64;
    let mut i = 0;
    while i < key.len() {
        w |= (key[i] as u64) << (8 * i);
        i += 1;
    }
    w
}

const KEY_SEND: u64 = key_word(b"send");
const KEY_RECV: u64 = key_word(b"recv");
const KEY_TAG: u64 = key_word(b"tag");
const KEY_BYTES: u64 = key_word(b"bytes");
const KEY_REQ: u64 = key_word(b"req");
const KEY_SENT: u64 = key_word(b"sent");
const KEY_RECVD: u64 = key_word(b"recvd");
const KEY_WAIT: u64 = key_word(b"wait");
const KEY_ROOT: u64 = key_word(b"root");
const KEY_COLL: u64 = key_word(b"coll");

/// Each key with the space before it and its `=`, as [`LineWords::word`] reads them.
const SPACED_SEND: u64 = key_word(b" send=");
const SPACED_RECV: u64 = key_word(b" recv=");
const SPACED_WAIT: u64 = key_word(b" wait=");
const SPACED_COLL: u64 = key_word(b" coll=");
const SPACED_ROOT: u64 = key_word(b" root=");
const SPACED_SENT: u64 = key_word(b" sent=");
const SPACED_TAG: u64 = key_word(b" tag=");
const SPACED_REQ: u64 = key_word(b" req=");
const SPACED_BYTES: u64 = key_word(b" bytes=");
const SPACED_RECVD: u64 = key_word(b" recvd=");

/// A function name of 1 to 16 bytes as two little-endian words (zero bytes after the name)
/// and its length: the key of [`NameCache`].
#[derive(Clone, Copy, PartialEq, Eq)]
struct ShortName {
    lo: u64,
    hi: u64,
    len: u32,
}

impl ShortName {
    /// The bytes at `pos` up to the next space, control byte or the end of the file, if 1 to
    /// 16. A plain name ends at a space or the line's end, both such bytes; a cached name
    /// (letters, digits and `_`) matches only when the name is those bytes, and the caller then
    /// checks what follows.
    #[inline(always)]
    fn at(b: LineWords, pos: usize) -> Option<ShortName> {
        let below = |n: u32| if n >= 8 { u64::MAX } else { (1u64 << (8 * n)) - 1 };
        let lo = b.word(pos);
        let n = bytes_before_space_or_control(lo);
        if n < 8 {
            return (n > 0).then_some(ShortName {
                lo: lo & below(n),
                hi: 0,
                len: n,
            });
        }
        let hi = b.word(pos + 8);
        let m = bytes_before_space_or_control(hi);
        (m < 8).then_some(ShortName {
            lo,
            hi: hi & below(m),
            len: 8 + m,
        })
    }
}

/// Slots of [`NameCache`] (a power of two).
const NAME_CACHE_SLOTS: usize = 64;

/// Function names of up to 16 bytes that plain call lines used, with their id and kind,
/// direct-mapped by a hash of the name's words: a call line's name costs two word compares
/// instead of hashing and comparing its bytes in the function map. Filled only after the
/// function map answered, so it never holds a name the map does not.
struct NameCache {
    slots: [Option<(ShortName, FuncId, CallKind)>; NAME_CACHE_SLOTS],
}

impl NameCache {
    fn new() -> NameCache {
        NameCache {
            slots: [None; NAME_CACHE_SLOTS],
        }
    }

    #[inline(always)]
    fn slot(name: &ShortName) -> usize {
        let h = (name.lo ^ name.hi.rotate_left(29) ^ u64::from(name.len)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 58) as usize % NAME_CACHE_SLOTS
    }

    /// The function id and kind of `name`, if it is cached.
    #[inline(always)]
    fn get(&self, name: &ShortName) -> Option<(FuncId, CallKind)> {
        match self.slots[Self::slot(name)] {
            Some((n, func, kind)) if n == *name => Some((func, kind)),
            _ => None,
        }
    }

    /// Caches `name` as function `func` of kind `kind` (replacing whatever shared its slot).
    fn put(&mut self, name: ShortName, func: FuncId, kind: CallKind) {
        self.slots[Self::slot(&name)] = Some((name, func, kind));
    }
}

/// Read a native text trace from its files (exactly one file must start with the magic line).
///
/// Errors name the file and 1-based line: unknown keywords or keys, numbers out of range,
/// ranks, communicators, call paths or requests used before they are defined.
pub fn read(files: &[InputFile], progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    let texts: Vec<&InputFile> = files
        .iter()
        .filter(|f| {
            let b = f.bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&f.bytes);
            b.starts_with(MAGIC.as_bytes())
        })
        .collect();
    let file = match texts.as_slice() {
        [f] => *f,
        [] => {
            let name = files.first().map(|f| f.name.as_str()).unwrap_or("(no input)");
            return Err(FormatError::at_line(
                name,
                1,
                format!("the first line must be `{MAGIC} {VERSION}`"),
            ));
        }
        [a, b, ..] => {
            return Err(FormatError::new(
                &b.name,
                format!(
                    "several text traces were given (`{}` and `{}`); give one",
                    a.name, b.name
                ),
            ))
        }
    };
    read_one(file, progress)
}

fn read_one(file: &InputFile, progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    read_one_with(file, progress, true)
}

/// [`read_one`], with the plain-line fast path on or off.
fn read_one_with(file: &InputFile, progress: &mut dyn ProgressSink, fast: bool) -> Result<Trace, FormatError> {
    let name = file.name.as_str();
    let bytes = file.bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&file.bytes);
    let total = file.bytes.len() as u64;
    let mut reader = Reader::new(name, fast);
    let start = Progress {
        stage: "reading calls".into(),
        bytes_done: 0,
        bytes_total: total,
    };
    if !progress.report(&start) {
        return Err(FormatError::cancelled(name));
    }
    let mut next_report = 4u64 << 20;
    let mut pos = 0usize;
    let mut line_no = 0u64;
    while pos < bytes.len() {
        line_no += 1;
        let line_start = pos;
        if line_start as u64 >= next_report {
            next_report = line_start as u64 + (4 << 20);
            let p = Progress {
                stage: "reading calls".into(),
                bytes_done: line_start as u64,
                bytes_total: total,
            };
            if !progress.report(&p) {
                return Err(FormatError::cancelled(name));
            }
        }
        if line_no > 1 && reader.fast && reader.has_ranks && bytes[line_start].is_ascii_digit() {
            if let Some((done, len)) = reader.fast_call(LineWords::new(&bytes[line_start..])) {
                done.map_err(|m| FormatError::at_line(reader.file, line_no, m))?;
                // Past the line's `\n` or `\r\n` (the fast path stopped at one, or at the end).
                let end = line_start + len;
                pos = end + if bytes.get(end) == Some(&b'\r') { 2 } else { 1 };
                continue;
            }
        }
        let end = memchr::memchr(b'\n', &bytes[pos..])
            .map(|i| pos + i)
            .unwrap_or(bytes.len());
        let raw = &bytes[pos..end];
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        pos = end + 1;
        let line = std::str::from_utf8(raw).map_err(|e| {
            FormatError::at_line(
                name,
                line_no,
                format!("not UTF-8 text (byte {} of the line)", e.valid_up_to() + 1),
            )
        })?;
        if line_no == 1 {
            check_magic(line).map_err(|m| FormatError::at_line(name, 1, m))?;
            continue;
        }
        reader
            .line(line, bytes.len() - pos.min(bytes.len()))
            .map_err(|m| FormatError::at_line(reader.file, line_no, m))?;
    }
    if line_no == 0 {
        return Err(FormatError::at_line(name, 1, "the file is empty"));
    }
    if !reader.has_ranks {
        return Err(FormatError::at_line(name, line_no, "the file has no `ranks N` line"));
    }
    let mut trace = reader.trace;
    for (r, a, b) in reader.spans {
        trace.ranks[r as usize].span = Some((a, b));
    }
    if !reader.explicit_source {
        trace.source = name.to_owned();
    }
    Ok(trace)
}

impl Reader<'_> {
    fn line(&mut self, line: &str, remaining: usize) -> Result<(), String> {
        let mut lx = Lexer::new(line);
        let Some(first) = lx.next_token()? else {
            return Ok(());
        };
        if first.value.is_some() {
            return Err(format!("a line cannot start with `{}=`", first.key));
        }
        if first.key.as_bytes().first().is_some_and(u8::is_ascii_digit) {
            self.call(&first.key, &mut lx)
        } else {
            self.directive(&first.key, &mut lx, remaining)
        }
    }
}

fn check_magic(line: &str) -> Result<(), String> {
    let rest = line
        .strip_prefix(MAGIC)
        .ok_or_else(|| format!("the first line must be `{MAGIC} {VERSION}`"))?;
    let v = rest.trim();
    match v.parse::<u32>() {
        Ok(VERSION) => Ok(()),
        Ok(other) => Err(format!(
            "text format version {other} is not supported (this reader reads {VERSION})"
        )),
        Err(_) => Err(format!("the first line must be `{MAGIC} {VERSION}`, found `{line}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::NoProgress;
    use tracelogic_synth::{generate, CollectiveSpec, Spec, Style, TopologySpec};

    #[test]
    fn declarations_before_ranks_are_kept() {
        // Found by fuzzing: `ranks` rebuilt the trace and dropped the functions declared before
        // it, while the reader's cache still held their ids (an index panic at the first call).
        let text = "#tracelogic-text 1\nfunction 0 MPI_Init\nfunction 1 MPI_Finalize\nranks 1\n0 0 5 MPI_Init\n0 6 9 MPI_Finalize\n";
        for fast in [true, false] {
            let file = InputFile::new("t.txt", text.as_bytes().to_vec());
            let t = read_one_with(&file, &mut NoProgress, fast).unwrap();
            let c = &t.ranks[0].calls;
            let names: Vec<&str> = c.func.iter().map(|&f| t.functions.name(f)).collect();
            assert_eq!(names, ["MPI_Init", "MPI_Finalize"], "fast path {fast}");
        }
    }

    /// Every byte value at every place of a word of digits, and every pair of adjacent bytes
    /// (carries and borrows between bytes): the word scans find the first byte they look for,
    /// exactly as a byte-by-byte scan does.
    #[test]
    fn word_scans_stop_at_the_first_byte_they_look_for() {
        let scalar = |w: [u8; 8], stop: &dyn Fn(u8) -> bool| w.iter().position(|&c| stop(c)).unwrap_or(8) as u32;
        let check = |w: [u8; 8]| {
            let x = u64::from_le_bytes(w);
            assert_eq!(leading_digits(x), scalar(w, &|c| !c.is_ascii_digit()), "{w:?}");
            assert_eq!(bytes_before_space_or_control(x), scalar(w, &|c| c <= b' '), "{w:?}");
        };
        for k in 0..8 {
            for v in 0..=255u8 {
                let mut w = *b"57305730";
                w[k] = v;
                check(w);
                if k < 7 {
                    for u in 0..=255u8 {
                        w[k + 1] = u;
                        check(w);
                    }
                }
            }
        }
    }

    /// `fast_digits` against `str::parse` for every length from 1 to 21 digits, several digit
    /// patterns and every kind of byte that can follow a number.
    #[test]
    fn fast_digits_agree_with_parse_at_every_length() {
        for len in 1..=21 {
            for pattern in ["9", "0", "1", "0123456789", "5000000000", "1844674407370955161"] {
                let digits: String = pattern.chars().cycle().take(len).collect();
                for after in ["", " ", "\n", "\r\n", ",", "x", "=", "/", ":", "\u{0}"] {
                    let text = format!("{digits}{after}");
                    let mut pos = 0;
                    let got = fast_digits(LineWords::new(text.as_bytes()), &mut pos);
                    if len <= 19 {
                        assert_eq!(got, Some(digits.parse::<u64>().unwrap()), "`{text}`");
                        assert_eq!(pos, len, "`{text}`");
                    } else {
                        assert_eq!(got, None, "`{text}`: a 20th digit goes to the general parser");
                    }
                }
            }
        }
        let read = |s: &str| fast_digits(LineWords::new(s.as_bytes()), &mut 0);
        assert_eq!(read("0"), Some(0));
        assert_eq!(read("00000000"), Some(0));
        assert_eq!(read("12345678 9"), Some(12_345_678));
        assert_eq!(read(&u64::MAX.to_string()), None);
        assert_eq!(read("+5"), None);
        assert_eq!(read("-5"), None);
        assert_eq!(read(""), None);
        // The line ends at its newline: digits of the next line are not part of the value.
        assert_eq!(read("12\n34"), Some(12));
        assert_eq!(read("1234567\r\n8"), Some(1_234_567));
    }

    /// Plain call lines with numbers at the fast path's limits (19 and 20 digits, u64::MAX, i32
    /// tags at and past their range, `+` and `-` signs) read the same both ways.
    #[test]
    fn numbers_at_the_limits_read_the_same_both_ways() {
        let lines = [
            "0 0 0 MPI_Send send=1 tag=0 bytes=0",
            "0 1 9999999999999999999 MPI_Send send=1 tag=1 bytes=9999999999999999999",
            "0 1 10000000000000000000 MPI_Send send=1 tag=1 bytes=8",
            "0 1 2 MPI_Send send=1 tag=1 bytes=18446744073709551615",
            "0 1 2 MPI_Send send=1 tag=1 bytes=18446744073709551616",
            "0 1 2 MPI_Send send=1 tag=2147483647 bytes=1",
            "0 1 2 MPI_Send send=1 tag=2147483648 bytes=1",
            "0 1 2 MPI_Send send=1 tag=-1 bytes=1",
            "0 1 2 MPI_Send send=1 tag=-2147483648 bytes=1",
            "0 1 2 MPI_Send send=1 tag=+3 bytes=1",
            "0 1 2 MPI_Send send=1 tag=1 bytes=+4",
            "0 +1 2 MPI_Send send=1 tag=1 bytes=4",
            "0 1 +2 MPI_Send send=1 tag=1 bytes=4",
            "0 1 2 MPI_Send send=-1 tag=1 bytes=4",
            "00 1 2 MPI_Send send=01 tag=007 bytes=0004",
        ];
        for line in lines {
            let text = format!("{HEADER}{line}\n");
            let (fast, general) = both_ways(&text);
            assert_eq!(fast, general, "`{line}`");
        }
    }

    /// Request ids: small and dense (slots), far beyond the rank's operations, 19 digits,
    /// reused after completion, completed on another line out of order, posted twice, waited
    /// for twice or never posted, negative: the same trace or error both ways.
    #[test]
    fn request_ids_read_the_same_both_ways() {
        let ok = [
            "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=0\n0 3 4 MPI_Wait wait=0\n0 5 6 MPI_Isend send=1 tag=1 bytes=8 req=0\n0 7 8 MPI_Wait wait=0",
            "0 1 2 MPI_Irecv recv=1 tag=1 bytes=8 req=1099511627776\n0 3 4 MPI_Isend send=1 tag=1 bytes=8 req=3\n0 5 6 MPI_Waitall wait=3,1099511627776",
            "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=9999999999999999999\n0 3 4 MPI_Wait wait=9999999999999999999",
            "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=200\n0 3 4 MPI_Isend send=1 tag=1 bytes=8 req=70\n0 5 6 MPI_Isend send=1 tag=1 bytes=8 req=2\n0 7 8 MPI_Waitall wait=70,2,200",
            "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=5\n1 1 2 MPI_Irecv recv=0 tag=1 bytes=8 req=5\n1 3 4 MPI_Wait wait=5\n0 3 4 MPI_Wait wait=5",
            "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=7",
        ];
        for body in ok {
            let (fast, general) = both_ways(&format!("{HEADER}{body}\n"));
            assert_eq!(fast.as_ref().expect(body), general.as_ref().expect(body), "{body}");
        }
        let bad = [
            ("0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=4\n0 3 4 MPI_Isend send=1 tag=1 bytes=8 req=4", "posted again"),
            ("0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=1099511627776\n0 3 4 MPI_Isend send=1 tag=1 bytes=8 req=1099511627776", "posted again"),
            ("0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=4\n0 3 4 MPI_Waitall wait=4,4", "no open request 4"),
            ("0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=4\n1 3 4 MPI_Wait wait=4", "no open request 4"),
            ("0 1 2 MPI_Wait wait=18446744073709551615", "no open request"),
            ("0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=-1", "request id"),
            ("0 1 2 MPI_Wait wait=-1", "request id"),
        ];
        for (body, needle) in bad {
            let (fast, general) = both_ways(&format!("{HEADER}{body}\n"));
            let fast = fast.expect_err(body);
            assert_eq!(fast, general.expect_err(body), "{body}");
            assert!(fast.contains(needle), "{body}: {fast}");
        }
    }

    #[test]
    fn open_requests_keep_far_ids_and_huge_operation_indices_in_the_map() {
        let mut open = OpenRequests::default();
        assert!(open.open(3, 0, 0));
        assert!(open.open(3, 1, 1));
        assert!(!open.open(3, 1, 2), "request 1 is open");
        // Far beyond twice the rank's operations: no window of that size.
        assert!(open.open(3, 1 << 40, 2));
        assert!(open.ranks[3].slots.len() < 1 << 10);
        assert!(!open.open(3, 1 << 40, 3));
        // An operation index that does not fit a slot.
        assert!(open.open(0, 2, u32::MAX as usize + 5));
        assert_eq!(open.close(0, 2), Some(u32::MAX as usize + 5));
        assert_eq!(open.close(3, 1 << 40), Some(2));
        assert_eq!(open.close(3, 1 << 40), None);
        assert_eq!(open.close(3, 1), Some(1));
        assert_eq!(open.close(3, 0), Some(0));
        assert_eq!(open.close(3, 0), None);
        assert_eq!(open.close(7, 0), None, "a rank that never opened a request");
        // An id first too far for the window stays found once the window has grown past it.
        assert!(open.open(5, 100, 0));
        for op in 1..200 {
            // Dense ids 0..=99 and 101..=199, as the rank's operations count up.
            let id = if op <= 100 { op as u64 - 1 } else { op as u64 };
            assert!(open.open(5, id, op));
        }
        assert!(open.ranks[5].first == 0 && open.ranks[5].slots.len() > 100);
        assert!(!open.open(5, 100, 200), "request 100 is open (in the map)");
        assert_eq!(open.close(5, 100), Some(0));
        assert!(open.other.is_empty());
        // Requests completed soon after they are posted, as the writer's: the window moves on
        // and stays small; an id reused after the window moved past it goes to the map.
        for op in 0..100_000usize {
            assert!(open.open(9, op as u64, op));
            if op >= 3 {
                assert_eq!(open.close(9, op as u64 - 3), Some(op - 3));
            }
        }
        assert!(open.ranks[9].slots.len() <= 16, "{}", open.ranks[9].slots.len());
        assert!(open.open(9, 5, 100_000));
        assert!(!open.open(9, 5, 100_001));
        assert!(!open.open(9, 99_999, 100_001), "still open in the window");
        assert_eq!(open.close(9, 5), Some(100_000));
        assert_eq!(open.close(9, 99_999), Some(99_999));
        assert!(open.other.is_empty());
    }

    /// Function names that share prefixes, lengths, first and last bytes, at the name cache's
    /// length limits (8, 16 and 17 bytes), and more names than it has slots: every line takes
    /// the fast path and names the same function as the general parser.
    #[test]
    fn function_names_sharing_prefixes_read_the_same_both_ways() {
        let mut names: Vec<String> = [
            "MPI_Send",
            "MPI_Sendrecv",
            "MPI_Send_init",
            "MPI_Isend",
            "MPI_Ssend",
            "MPI_Bsend",
            "MPI_Recv",
            "MPI_Irecv",
            "MPI_Wait",
            "MPI_Waitall",
            "MPI_Waitany",
            "MPI_Allreduce",
            "MPI_Reduce",
            "F",
            "FF",
            "ABCDEFGH",
            "ABCDEFGX",
            "ABCDEFGHIJKLMNOP",
            "ABCDEFGHIJKLMNOQ",
            "ABCDEFGHIJKLMNOPQ",
            "ABCDEFGHIJKLMNOPR",
            "XBCDEFGHIJKLMNOP",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // More names than the cache has slots, all with the same first eight bytes: some share
        // a slot, and only their second word tells them apart.
        names.extend((0..100).map(|i| format!("ABCDEFGH_{i}")));
        names.extend((0..4).map(|i| format!("ABCDEFGHIJKLMNOP_{i}")));
        let mut body = String::new();
        for round in 0..3 {
            for (i, name) in names.iter().enumerate() {
                let t = (round * names.len() + i) * 10;
                body.push_str(&format!("{} {t} {} {name}\n", i % 2, t + 5));
            }
        }
        let text = format!("{HEADER}{body}");
        let (fast, general) = both_ways(&text);
        assert_eq!(fast.as_ref().expect("reads"), general.as_ref().expect("reads"));
        let mut reader = reader_after_header(HEADER);
        for line in body.lines() {
            let (done, len) = reader
                .fast_call(LineWords::new(line.as_bytes()))
                .unwrap_or_else(|| panic!("fast path refused `{line}`"));
            done.expect("reads");
            assert_eq!(len, line.len());
        }
        let t = &reader.trace;
        for (rank, line) in body.lines().enumerate().map(|(i, l)| (i % 2, (i, l))) {
            let (i, line) = line;
            let name = line.split(' ').nth(3).expect("a name");
            let call = i / 2;
            assert_eq!(t.functions.name(t.ranks[rank].calls.func[call]), name, "`{line}`");
        }
    }

    /// Line ends: `\r\n`, no newline at the end of the file, a `\r` inside a line or doubled,
    /// blank lines, trailing spaces, and a name or value cut by a `\r`: the same trace or error
    /// both ways, the same line numbers in errors.
    #[test]
    fn line_ends_read_the_same_both_ways() {
        let bodies = [
            "0 1 2 MPI_Send send=1 tag=1 bytes=8\r\n0 3 4 MPI_Barrier\r\n",
            "0 1 2 MPI_Send send=1 tag=1 bytes=8\n0 3 4 MPI_Barrier",
            "0 1 2 MPI_Send send=1 tag=1 bytes=8\n0 3 4 MPI_Barrier\r",
            "0 1 2 MPI_Send send=1 tag=1 bytes=8\r",
            "0 1 2 MPI_Send send=1 tag=1 bytes=8\n\n\r\n0 3 4 MPI_Wait\n",
            "0 1 2 MPI_Send send=1 tag=1 bytes=8\r\r\n",
            "0 1 2 MPI_Send send=1 tag=1 bytes=8\rx\n",
            "0 1 2 MPI_Send\r send=1 tag=1 bytes=8\n",
            "0 1 2 MPI_Send send=1\r tag=1 bytes=8\n",
            "0 1 2 MPI_Send send=1 tag=1 bytes=8 \n",
            "0 1 2 MPI_Send send=1 tag=1 bytes=8 \r\n",
            "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=1\n0 3 4 MPI_Waitall wait=1\r\n",
            "0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=1\n0 3 4 MPI_Waitall wait=1,\r\n",
            "0 1 2 MPI_Reduce coll=Reduce root=1 sent=8 recvd=0\r\n",
            "0 1 2 MPI_Reduce coll=Reduce\r root=1\n",
            "0 1 2 MPI_Send send=any tag=any bytes=8\r\n",
            "0 1 2 MPI_Recv recv=any\r\n",
            "0 1 2 MPI_Send\n0 3 4 MPI_Send\r\n0 5 6 MPI_Sen\r\n",
            "0 1 2 MPI_Send\t\n",
            "0 1 2 MPI_Send\u{0}\n",
        ];
        for body in bodies {
            let (fast, general) = both_ways(&format!("{HEADER}{body}"));
            assert_eq!(fast, general, "{body:?}");
        }
    }

    /// Call lines of every plain form with bytes replaced, inserted or removed at seeded random
    /// places (digits, spaces, line ends, signs, quotes, `=`, `,`, letters, tabs, NUL): every
    /// mutated file reads to the same trace or the same error with and without the fast path.
    #[test]
    fn mutated_call_lines_read_the_same_both_ways() {
        let body = "0 10 20 MPI_Isend send=1 tag=7 bytes=64 req=3\n\
            0 30 40 MPI_Irecv recv=any tag=any bytes=8 req=4\n\
            1 35 45 MPI_Irecv recv=0 tag=7 bytes=64 req=0\n\
            0 50 60 MPI_Waitall wait=3,4\n\
            1 50 60 MPI_Wait wait=0\n\
            0 70 12345678 MPI_Send send=1 tag=2147483647 bytes=1\n\
            1 90 100 MPI_Recv recv=0 tag=0 bytes=0\n\
            0 110 120 MPI_Sendrecv send=1 tag=1 bytes=4 recv=1 tag=1 bytes=4\n\
            0 130 140 MPI_Reduce coll=Reduce root=1 sent=8 recvd=0\n\
            0 150 160 MPI_Barrier\n\
            0 170 180 MPI_Bcast coll=Bcast bytes=16\n";
        let alphabet = b"0019 \r\n=,+-\"#\tax_\x00";
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..3000 {
            let mut bytes = body.as_bytes().to_vec();
            for _ in 0..1 + next(3) {
                let at = next(bytes.len());
                let c = alphabet[next(alphabet.len())];
                match next(3) {
                    0 => bytes[at] = c,
                    1 => bytes.insert(at, c),
                    _ => {
                        bytes.remove(at);
                    }
                }
            }
            let mut text = HEADER.as_bytes().to_vec();
            text.extend_from_slice(&bytes);
            let file = InputFile::new("t.txt", text.clone());
            let json = |fast| {
                read_one_with(&file, &mut NoProgress, fast)
                    .map(|t| serde_json::to_string(&t).expect("serialises"))
                    .map_err(|e| e.to_string())
            };
            assert_eq!(json(true), json(false), "{:?}", String::from_utf8_lossy(&text));
        }
    }

    #[test]
    fn fast_digits_take_at_most_nineteen_digits_without_overflow() {
        let read = |s: &str| fast_digits(LineWords::new(s.as_bytes()), &mut 0);
        assert_eq!(read("9999999999999999999"), Some(9_999_999_999_999_999_999));
        assert_eq!(read("0000000000000000001 x"), Some(1));
        // Twenty digits (u64::MAX has twenty) go to the general parser, which range-checks them.
        assert_eq!(read("18446744073709551615"), None);
        assert_eq!(read("99999999999999999999"), None);
        assert_eq!(read("x1"), None);
    }

    /// The file read with and without the fast path: both results (as the model's JSON, or the
    /// error's text) must be equal.
    fn both_ways(text: &str) -> (Result<String, String>, Result<String, String>) {
        let file = InputFile::new("t.txt", text.as_bytes().to_vec());
        let json = |fast| {
            read_one_with(&file, &mut NoProgress, fast)
                .map(|t| serde_json::to_string(&t).expect("serialises"))
                .map_err(|e| e.to_string())
        };
        (json(true), json(false))
    }

    /// A reader past the header lines of `text`, to try single call lines on.
    fn reader_after_header(text: &str) -> Reader<'static> {
        let mut reader = Reader::new("t.txt", true);
        for line in text.lines().skip(1) {
            reader.line(line, 0).expect("header line reads");
        }
        reader
    }

    #[test]
    fn fast_path_matches_the_general_parser_on_generated_traces() {
        for (topology, style) in [
            ("torus:4x4", Style::Isend),
            ("grid:3x4", Style::Sendrecv),
            ("grid:4x3", Style::Blocking),
            ("grid:4x4", Style::Wavefront),
        ] {
            let spec = Spec {
                topology: TopologySpec::parse(topology).expect("topology"),
                iterations: 4,
                style,
                collectives: [
                    (CollectiveOp::Allreduce, 2, 64),
                    (CollectiveOp::Barrier, 3, 0),
                    (CollectiveOp::Bcast, 2, 1024),
                    (CollectiveOp::Reduce, 3, 8),
                ]
                .into_iter()
                .map(|(op, every, bytes)| CollectiveSpec { op, every, bytes })
                .collect(),
                ..Spec::default()
            };
            let trace = generate(&spec).expect("generates");
            let text = write(&trace);
            let (fast, general) = both_ways(&text);
            let fast = fast.expect("fast path reads the trace");
            assert_eq!(
                fast,
                general.expect("general parser reads the trace"),
                "{topology} {style:?}"
            );
            // The plain call lines (all of a generated trace's) went through the fast path.
            let file = InputFile::new("t.txt", text.as_bytes().to_vec());
            let mut reader_lines = 0;
            for line in text.lines() {
                if line.as_bytes().first().is_some_and(u8::is_ascii_digit) {
                    reader_lines += 1;
                }
            }
            let read = read_one_with(&file, &mut NoProgress, true).expect("reads");
            assert_eq!(read.num_calls(), trace.num_calls());
            let mut counting = reader_after_header(&text[..text.find("\n0 ").expect("a call line") + 1]);
            for line in text
                .lines()
                .filter(|l| l.as_bytes().first().is_some_and(u8::is_ascii_digit))
            {
                counting
                    .fast_call(LineWords::new(line.as_bytes()))
                    .unwrap_or_else(|| panic!("fast path refused `{line}`"))
                    .0
                    .expect("line reads");
            }
            assert_eq!(counting.fast_lines, reader_lines, "{topology} {style:?}");
            let kinds: std::collections::BTreeSet<_> =
                read.ranks.iter().flat_map(|r| r.calls.kind.iter().copied()).collect();
            let expected: &[CallKind] = match style {
                Style::Isend => &[CallKind::Isend, CallKind::Irecv, CallKind::Completion],
                Style::Sendrecv => &[CallKind::SendRecv],
                _ => &[CallKind::Send, CallKind::Recv],
            };
            for k in expected.iter().chain(&[CallKind::Collective]) {
                assert!(kinds.contains(k), "{topology} {style:?}: no {k:?} call");
            }
        }
    }

    const HEADER: &str = "#tracelogic-text 1\nranks 2\ncomm 1 pair 0-1\n";

    #[test]
    fn plain_lines_with_every_key_take_the_fast_path() {
        let lines = [
            "0 10 20 MPI_Isend send=1 tag=7 bytes=64 req=3",
            "0 30 40 MPI_Irecv recv=any tag=any bytes=8 req=4",
            "0 50 60 MPI_Waitall wait=3,4",
            "0 70 80 MPI_Send send=1 tag=2147483647 bytes=1",
            "0 90 100 MPI_Recv recv=1 tag=0 bytes=0",
            "0 110 120 MPI_Sendrecv send=1 tag=1 bytes=4 recv=1 tag=1 bytes=4",
            "0 130 140 MPI_Reduce coll=Reduce root=1 sent=8 recvd=0",
            "0 150 160 MPI_Barrier",
            "0 170 180 MPI_Bcast coll=Bcast bytes=16",
            "0 190 190 MPI_Wait",
        ];
        let mut reader = reader_after_header(HEADER);
        for line in lines {
            assert!(
                matches!(
                    reader.fast_call(LineWords::new(line.as_bytes())),
                    Some((Ok(()), len)) if len == line.len()
                ),
                "`{line}`"
            );
        }
        let text = format!("{HEADER}{}\n", lines.join("\n"));
        let (fast, general) = both_ways(&text);
        assert_eq!(fast.expect("reads"), general.expect("reads"));
    }

    #[test]
    fn lines_the_fast_path_refuses_go_to_the_general_parser() {
        // Each line is valid but outside the fast path's plain form.
        let lines = [
            "0 10 1.5us MPI_Send send=1 tag=1 bytes=8",
            "0 2000 +10 MPI_Send send=1 tag=1 bytes=8",
            "0  2100 2200 MPI_Send send=1 tag=1 bytes=8",
            "0\t2300 2400 MPI_Send send=1 tag=1 bytes=8",
            "0 2500 2600 \"MPI Send\" kind=Send send=1 tag=1 bytes=8",
            "0 2700 2800 MPI_Send send=1 tag=1 bytes=8 # a comment",
            "0 2900 3000 MPI_Send send=1 tag=-3 bytes=8 comm=1",
            "0 3100 3200 MPI_Send peer=1 tag=1 bytes=8",
            "0 3300 3400 MPI_Send send=1 tag=1 bytes=8 done=0",
            "0 3500 3600 MPI_Allreduce sent=8 recvd=8",
            "0 3700 3800 MPI_Barrier coll=none",
            "0 3900 4000 MPI_Send send=1 tag=1 bytes=8 ",
            "0 4100 4200 MPI_Send send=+1 tag=1 bytes=8",
            "0 4300 4400 MPI_Send send=1 tag=1 bytes=18446744073709551615",
        ];
        let mut reader = reader_after_header(HEADER);
        for line in lines {
            assert!(
                reader.fast_call(LineWords::new(line.as_bytes())).is_none(),
                "fast path took `{line}`"
            );
        }
        assert_eq!(reader.trace.ranks[0].calls.len(), 0, "a refused line changed the trace");
        let text = format!("{HEADER}{}\n", lines.join("\n"));
        let (fast, general) = both_ways(&text);
        let fast = fast.expect("the general parser reads the refused lines");
        assert_eq!(fast, general.expect("reads"));
        assert!(fast.contains("MPI Send"));
    }

    #[test]
    fn errors_are_the_same_with_and_without_the_fast_path() {
        for (bad, needle) in [
            (
                "0 50 40 MPI_Send send=1 tag=1 bytes=8",
                "exit time 40 is before enter time 50",
            ),
            ("0 10 20 MPI_Send tag=1 send=1", "comes before any send="),
            ("0 10 20 MPI_Send send=2 tag=1 bytes=8", "rank 2 is out of range"),
            ("2 10 20 MPI_Send send=1 tag=1 bytes=8", "rank 2 is out of range"),
            ("0 10 20 MPI_Wait wait=9", "rank 0 has no open request 9"),
            ("0 10 20 MPI_Send send=1 tag=1 bytes=8 wait=1,,2", "a request id"),
            ("0 10 20 MPI_Send send=1 tag=2147483648", "tag must be an integer"),
            (
                "0 10 20 MPI_Isend send=1 tag=1 bytes=8 req=1",
                "request 1 of rank 0 is posted again",
            ),
            ("0 10 20 MPI_Send send=1 root=1", "does not apply to a point-to-point"),
            ("0 10 20 MPI_Send send=1 xyz=1", "unknown key `xyz`"),
        ] {
            let text = format!("{HEADER}0 1 2 MPI_Isend send=1 tag=1 bytes=8 req=1\n{bad}\n");
            let (fast, general) = both_ways(&text);
            let fast = fast.expect_err(bad);
            assert_eq!(fast, general.expect_err(bad), "`{bad}`");
            assert!(fast.contains("line 5"), "`{bad}`: {fast}");
            assert!(fast.contains(needle), "`{bad}`: {fast}");
        }
    }

    #[test]
    fn times_take_units_and_round_to_ns() {
        assert_eq!(parse_time("1500").unwrap(), 1500);
        assert_eq!(parse_time("1.5us").unwrap(), 1500);
        assert_eq!(parse_time("2ms").unwrap(), 2_000_000);
        assert_eq!(parse_time("0.25s").unwrap(), 250_000_000);
        assert_eq!(parse_time("1.0005us").unwrap(), 1001);
        assert!(parse_time("3h").is_err());
        assert!(parse_time("1.2.3").is_err());
        assert!(parse_time("99999999999999999999s").is_err());
    }

    #[test]
    fn members_use_ranges() {
        let mut s = String::new();
        push_members(&mut s, &[0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(s, "0-3,8,10-11");
        assert_eq!(parse_members(&s, 12).unwrap(), vec![0, 1, 2, 3, 8, 10, 11]);
        assert!(parse_members("0-20", 12).is_err());
    }

    #[test]
    fn tokens_quote_and_unquote() {
        let mut s = String::new();
        push_token(&mut s, "int main(int, \"char\"**)\\");
        let mut lx = Lexer::new(&s);
        assert_eq!(lx.word("x").unwrap(), "int main(int, \"char\"**)\\");
        let mut lx = Lexer::new("a=\"b c\" d=e # comment");
        let t = lx.next_token().unwrap().unwrap();
        assert_eq!((t.key.as_ref(), t.value.as_deref()), ("a", Some("b c")));
        let t = lx.next_token().unwrap().unwrap();
        assert_eq!((t.key.as_ref(), t.value.as_deref()), ("d", Some("e")));
        assert!(lx.next_token().unwrap().is_none());
    }
}
