//! Reader for Paraver traces (`.prv` with its `.pcf` and `.row`), as written by Extrae.
//!
//! Choices (also in `docs/formats.md` of the repository):
//! - **Ranks** are the tasks of the application(s) whose threads emit MPI events (event types
//!   whose `.pcf` values are named `MPI_*`), numbered in (application, task) order. Other
//!   applications — e.g. the uncore-counter readers PROFET adds as application 2 — are not
//!   ranks and are ignored. A trace without any MPI event takes application 1.
//! - **MPI calls** come from those event types: a non-zero value enters the call it names in
//!   the `.pcf`, value 0 leaves it. The id → name map is built from the `.pcf`, never assumed.
//! - **Collectives** are calls whose name is a collective; their bytes, root and communicator
//!   come from the `.pcf` types labelled `Send Size / Recv Size / Root / Communicator in MPI
//!   Global OP` in the same record. The root is a rank of that communicator.
//! - **Point-to-point** operations come from communication records (type 3): the send is
//!   attached to the call open on the sending thread at the logical send time, the receive to
//!   the receive call open at the logical receive time and completed by the call open at the
//!   physical receive time. Paraver does not record which call completed a non-blocking send:
//!   it is attached to the first later `MPI_Wait*`/`MPI_Test*` of the thread that is not a
//!   single-request wait already completing a receive.
//! - **Call paths** are the `Caller at level N` events recorded with the call (outermost
//!   first; `Unresolved` and `_NOT_Found` levels dropped), else the stack of user functions
//!   (event types whose value 0 is labelled `End`, other than sampling types).
//! - **Metrics** are hardware counters: types labelled `PAPI_*`, or in the `.pcf` gradient named
//!   "Hardware Counters" with an Extrae counter label `NAME ([description])`; values are stored
//!   as recorded (Extrae records the increment since the previous read).

use crate::{FormatError, InputFile, Progress, ProgressSink};
use std::collections::HashMap;
use tracelogic_model::{
    CallIdx, CallKind, CallpathId, CollectiveOp, CommId, Location, MetricSamples, P2pDir, Rank, RegionId, Time, Trace,
    COMM_WORLD, NOT_COMPLETED, NO_CALLPATH, NO_ROOT,
};

// ------------------------------------------------------------------------------------------
// .pcf
// ------------------------------------------------------------------------------------------

/// One event type of the `.pcf`.
#[derive(Debug, Clone)]
struct EventType {
    label: String,
    /// Gradient colour index (first column), named in `GRADIENT_NAMES`.
    gradient: u32,
    /// Index into [`Pcf::value_sets`] of the block's `VALUES`.
    values: Option<usize>,
}

/// The parts of a `.pcf` the reader needs.
#[derive(Debug, Default)]
struct Pcf {
    types: HashMap<u64, EventType>,
    value_sets: Vec<HashMap<u64, String>>,
    gradient_names: HashMap<u32, String>,
    states: HashMap<u64, String>,
}

fn parse_pcf(file: &InputFile) -> Result<Pcf, FormatError> {
    let text = String::from_utf8_lossy(&file.bytes);
    let mut pcf = Pcf::default();
    #[derive(PartialEq)]
    enum Section {
        Other,
        States,
        Gradients,
        Types,
        Values,
    }
    let mut section = Section::Other;
    let mut block_types: Vec<u64> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i as u64 + 1;
        let line = raw.trim();
        if line.is_empty() {
            if section == Section::Types || section == Section::Values {
                block_types.clear();
            }
            if section != Section::Other {
                section = Section::Other;
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let first = line.split_whitespace().next().unwrap_or("");
        if first.bytes().all(|c| c.is_ascii_uppercase() || c == b'_') && first.len() > 1 {
            match first {
                "STATES" => section = Section::States,
                "GRADIENT_NAMES" => section = Section::Gradients,
                "EVENT_TYPE" => {
                    section = Section::Types;
                    block_types.clear();
                }
                "VALUES" => {
                    if section != Section::Types {
                        return Err(FormatError::at_line(
                            &file.name,
                            line_no,
                            "VALUES outside an EVENT_TYPE block",
                        ));
                    }
                    section = Section::Values;
                    pcf.value_sets.push(HashMap::new());
                    let set = pcf.value_sets.len() - 1;
                    for t in &block_types {
                        if let Some(et) = pcf.types.get_mut(t) {
                            et.values = Some(set);
                        }
                    }
                }
                _ if section == Section::Values || section == Section::Types => {
                    // PRECISION and similar options inside a block.
                }
                _ => section = Section::Other,
            }
            continue;
        }
        let mut words = line.splitn(2, char::is_whitespace);
        let a = words.next().unwrap_or("");
        let rest = words.next().unwrap_or("").trim();
        match section {
            Section::Other => {}
            Section::States => {
                if let Ok(id) = a.parse::<u64>() {
                    pcf.states.insert(id, rest.to_owned());
                }
            }
            Section::Gradients => {
                if let Ok(id) = a.parse::<u32>() {
                    pcf.gradient_names.insert(id, rest.to_owned());
                }
            }
            Section::Types => {
                let mut w = rest.splitn(2, char::is_whitespace);
                let ty = w.next().unwrap_or("");
                let label = w.next().unwrap_or("").trim();
                let (Ok(gradient), Ok(ty)) = (a.parse::<u32>(), ty.parse::<u64>()) else {
                    return Err(FormatError::at_line(
                        &file.name,
                        line_no,
                        format!("expected `<colour> <event type> <label>` in an EVENT_TYPE block, found `{line}`"),
                    ));
                };
                block_types.push(ty);
                pcf.types.insert(
                    ty,
                    EventType {
                        label: label.to_owned(),
                        gradient,
                        values: None,
                    },
                );
            }
            Section::Values => {
                let Ok(v) = a.parse::<u64>() else {
                    return Err(FormatError::at_line(
                        &file.name,
                        line_no,
                        format!("expected `<value> <label>` after VALUES, found `{line}`"),
                    ));
                };
                let set = pcf.value_sets.len() - 1;
                pcf.value_sets[set].insert(v, rest.to_owned());
            }
        }
    }
    Ok(pcf)
}

/// What the reader does with an event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Enter (value ≠ 0) or leave (0) an MPI call named by the value.
    MpiCall,
    CollSendSize,
    CollRecvSize,
    CollRoot,
    CollComm,
    /// Caller at this level (1 = the innermost).
    Caller(u32),
    /// Hardware counter; index into [`Roles::metric_names`].
    Counter(usize),
    /// User function enter (value ≠ 0) / leave (0).
    Region,
    Ignore,
}

struct Roles {
    by_type: HashMap<u64, Role>,
    /// Event type of each caller level.
    caller_types: HashMap<u32, u64>,
    metric_names: Vec<String>,
}

fn classify_types(pcf: &Pcf) -> Roles {
    let mut by_type = HashMap::new();
    let mut metric_names = Vec::new();
    let mut types: Vec<(&u64, &EventType)> = pcf.types.iter().collect();
    types.sort_by_key(|(t, _)| **t);
    for (&ty, et) in types {
        let label = et.label.as_str();
        let lower = label.to_ascii_lowercase();
        let values = et.values.map(|i| &pcf.value_sets[i]);
        let role = if values.is_some_and(|v| v.values().any(|l| l.starts_with("MPI_") || l.starts_with("PMPI_"))) {
            Role::MpiCall
        } else if lower.contains("global op") && lower.contains("send size") {
            Role::CollSendSize
        } else if lower.contains("global op") && lower.contains("recv size") {
            Role::CollRecvSize
        } else if lower.contains("global op") && lower.starts_with("root") {
            Role::CollRoot
        } else if lower.contains("global op") && lower.starts_with("communicator") {
            Role::CollComm
        } else if let Some(level) = lower.strip_prefix("caller at level ") {
            level.trim().parse().map(Role::Caller).unwrap_or(Role::Ignore)
        } else if let Some(name) = counter_name(label, pcf.gradient_names.get(&et.gradient)) {
            metric_names.push(name);
            Role::Counter(metric_names.len() - 1)
        } else if values.is_some_and(|v| {
            v.get(&0).is_some_and(|l| l.eq_ignore_ascii_case("end"))
                && v.iter().any(|(&k, l)| k != 0 && !l.eq_ignore_ascii_case("begin"))
        }) && !lower.contains("sampled")
            && !lower.starts_with("caller")
        {
            Role::Region
        } else {
            Role::Ignore
        };
        by_type.insert(ty, role);
    }
    let caller_types = by_type
        .iter()
        .filter_map(|(&ty, r)| match r {
            Role::Caller(l) => Some((*l, ty)),
            _ => None,
        })
        .collect();
    Roles {
        by_type,
        caller_types,
        metric_names,
    }
}

/// The counter name of a hardware-counter event type, if it is one.
fn counter_name(label: &str, gradient: Option<&String>) -> Option<String> {
    let name = label.split(" (").next().unwrap_or(label).trim();
    if name.starts_with("PAPI_") {
        return Some(name.to_owned());
    }
    let hw = gradient.is_some_and(|g| g.to_ascii_lowercase().contains("hardware counter"));
    if hw && label.contains(" ([") && !name.contains(' ') {
        return Some(name.to_owned());
    }
    None
}

// ------------------------------------------------------------------------------------------
// .row
// ------------------------------------------------------------------------------------------

/// Thread labels of the `.row` (`THREAD 1.2.1`...), in global thread order.
fn parse_row_threads(file: &InputFile) -> Result<Vec<String>, FormatError> {
    let text = String::from_utf8_lossy(&file.bytes);
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    let mut threads = Vec::new();
    while i < lines.len() {
        let line = lines[i].trim();
        i += 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        let (level, n) = match w.as_slice() {
            ["LEVEL", level, "SIZE", n] => match n.parse::<usize>() {
                Ok(n) => (*level, n),
                Err(_) => {
                    return Err(FormatError::at_line(
                        &file.name,
                        i as u64,
                        format!("bad SIZE in `{line}`"),
                    ))
                }
            },
            _ => {
                return Err(FormatError::at_line(
                    &file.name,
                    i as u64,
                    format!("expected `LEVEL <name> SIZE <n>`, found `{line}`"),
                ))
            }
        };
        if n > lines.len() - i {
            return Err(FormatError::at_line(
                &file.name,
                i as u64,
                format!(
                    "LEVEL {level} announces {n} labels but only {} lines follow",
                    lines.len() - i
                ),
            ));
        }
        if level == "THREAD" {
            threads = lines[i..i + n].iter().map(|l| l.trim().to_owned()).collect();
        }
        i += n;
    }
    Ok(threads)
}

// ------------------------------------------------------------------------------------------
// .prv header
// ------------------------------------------------------------------------------------------

/// One application of the header: for each task, its thread count.
#[derive(Debug, Clone)]
struct Application {
    threads_per_task: Vec<u32>,
}

#[derive(Debug)]
struct Header {
    date: String,
    end_time: u64,
    /// Nanoseconds per time unit of the file.
    unit_ns: u64,
    unit_name: &'static str,
    apps: Vec<Application>,
    num_comms: usize,
}

/// Split at `:` and `,` outside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ':' | ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn parse_header(line: &str, file: &str, line_no: u64) -> Result<Header, FormatError> {
    let err = |m: String| FormatError::at_line(file, line_no, m);
    let rest = line
        .strip_prefix("#Paraver (")
        .ok_or_else(|| err("the header must start with `#Paraver (`".into()))?;
    let close = rest
        .find("):")
        .ok_or_else(|| err("the header's date is not followed by `):`".into()))?;
    let date = rest[..close].to_owned();
    let fields = split_top(&rest[close + 2..]);
    if fields.len() < 3 {
        return Err(err("the header ends before the applications".into()));
    }
    let (num, unit_ns, unit_name) = if let Some(n) = fields[0].strip_suffix("_ns") {
        (n, 1, "ns")
    } else if let Some(n) = fields[0].strip_suffix("_us") {
        (n, 1_000, "us")
    } else if let Some(n) = fields[0].strip_suffix("_ms") {
        (n, 1_000_000, "ms")
    } else {
        (fields[0], 1_000, "us")
    };
    let end_time: u64 = num
        .parse()
        .map_err(|_| err(format!("end time `{}` is not a number", fields[0])))?;
    let num_apps: usize = fields[2]
        .parse()
        .map_err(|_| err(format!("application count `{}` is not a number", fields[2])))?;
    if num_apps > fields.len() - 3 {
        return Err(err(format!(
            "the header announces {num_apps} applications but describes {}",
            fields.len() - 3
        )));
    }
    let mut apps = Vec::with_capacity(num_apps);
    for (a, f) in fields[3..3 + num_apps].iter().enumerate() {
        let (n, list) = f
            .split_once('(')
            .and_then(|(n, l)| l.strip_suffix(')').map(|l| (n, l)))
            .ok_or_else(|| err(format!("application {} `{f}` is not `NTASKS(threads:node,...)`", a + 1)))?;
        let n: usize = n
            .parse()
            .map_err(|_| err(format!("application {} task count `{n}` is not a number", a + 1)))?;
        let tasks: Vec<&str> = list.split(',').collect();
        if tasks.len() != n {
            return Err(err(format!(
                "application {} announces {n} tasks but lists {}",
                a + 1,
                tasks.len()
            )));
        }
        let mut threads_per_task = Vec::with_capacity(n);
        for t in tasks {
            let threads = t.split(':').next().unwrap_or("");
            let threads: u32 = threads
                .parse()
                .ok()
                .filter(|&x| (1..=u16::MAX as u32).contains(&x))
                .ok_or_else(|| err(format!("application {} task `{t}` has a bad thread count", a + 1)))?;
            threads_per_task.push(threads);
        }
        apps.push(Application { threads_per_task });
    }
    let num_comms = match fields.get(3 + num_apps) {
        Some(c) if !c.trim().is_empty() => c
            .trim()
            .parse()
            .map_err(|_| err(format!("communicator count `{c}` is not a number")))?,
        _ => 0,
    };
    Ok(Header {
        date,
        end_time,
        unit_ns,
        unit_name,
        apps,
        num_comms,
    })
}

// ------------------------------------------------------------------------------------------
// Body
// ------------------------------------------------------------------------------------------

/// An MPI call as recorded on one thread.
#[derive(Debug, Clone)]
struct RawCall {
    func: u32,
    enter: Time,
    exit: Time,
    callpath: CallpathId,
    coll: CollAttrs,
}

#[derive(Debug, Clone, Copy, Default)]
struct CollAttrs {
    sent: Option<u64>,
    recvd: Option<u64>,
    root: Option<u64>,
    comm: Option<u64>,
}

#[derive(Debug, Default)]
struct ThreadData {
    calls: Vec<RawCall>,
    /// Open MPI calls: (event type, index into `calls`).
    open: Vec<(u64, usize)>,
    /// User-function stack: (event type, value).
    regions: Vec<(u64, u64)>,
    /// Counter samples: (metric index, time, value).
    samples: Vec<(usize, Time, f64)>,
    span: Option<(Time, Time)>,
    has_mpi: bool,
}

impl ThreadData {
    fn touch(&mut self, a: Time, b: Time) {
        self.span = Some(match self.span {
            None => (a.min(b), a.max(b)),
            Some((lo, hi)) => (lo.min(a), hi.max(b)),
        });
    }
}

/// A communication record (type 3), times already in ns.
#[derive(Debug, Clone, Copy)]
struct CommRecord {
    sender: usize,
    lsend: Time,
    receiver: usize,
    lrecv: Time,
    precv: Time,
    size: u64,
    tag: i32,
}

/// Communicator line of the header: application and member tasks (1-based).
#[derive(Debug, Clone)]
struct CommDef {
    appl: u32,
    tasks: Vec<u32>,
}

struct Body<'a> {
    file: &'a str,
    header: &'a Header,
    roles: &'a Roles,
    pcf: &'a Pcf,
    /// First global thread index of each (application, task).
    thread_base: Vec<Vec<usize>>,
    threads: Vec<ThreadData>,
    comms: Vec<CommRecord>,
    /// Trace under construction: only its interners are used while reading the body.
    trace: Trace,
    callpath_cache: HashMap<Vec<RegionId>, CallpathId>,
    /// (event type, value) → function id, for MPI calls.
    func_cache: HashMap<(u64, u64), u32>,
    unmatched_leaves: u64,
    counts: [u64; 5],
    pairs: Vec<(u64, i128)>,
}

/// Fields of a `:`-separated record, parsed on demand without allocating.
struct Fields<'a> {
    it: std::str::Split<'a, char>,
    index: usize,
}

impl<'a> Fields<'a> {
    fn next_str(&mut self) -> Option<&'a str> {
        self.index += 1;
        self.it.next()
    }
    fn num(&mut self, what: &str) -> Result<u64, String> {
        let s = self
            .next_str()
            .ok_or_else(|| format!("the record ends before its {what}"))?;
        s.trim()
            .parse()
            .map_err(|_| format!("field {} ({what}) is `{s}`, not a non-negative integer", self.index))
    }
}

impl Body<'_> {
    fn thread_index(&self, cpu_appl_task_thread: [u64; 4]) -> Result<usize, String> {
        let [_, appl, task, thread] = cpu_appl_task_thread;
        let tasks = self
            .thread_base
            .get((appl as usize).wrapping_sub(1))
            .ok_or_else(|| format!("application {appl} is not in the header"))?;
        let base = *tasks
            .get((task as usize).wrapping_sub(1))
            .ok_or_else(|| format!("task {task} of application {appl} is not in the header"))?;
        let n = self.header.apps[appl as usize - 1].threads_per_task[task as usize - 1] as u64;
        if thread == 0 || thread > n {
            return Err(format!(
                "thread {thread} of task {appl}.{task} is not in the header ({n} threads)"
            ));
        }
        Ok(base + thread as usize - 1)
    }

    fn object(&self, f: &mut Fields) -> Result<usize, String> {
        let cpu = f.num("cpu")?;
        let appl = f.num("application")?;
        let task = f.num("task")?;
        let thread = f.num("thread")?;
        self.thread_index([cpu, appl, task, thread])
    }

    fn time(&self, f: &mut Fields, what: &str) -> Result<Time, String> {
        let t = f.num(what)?;
        t.checked_mul(self.header.unit_ns)
            .ok_or_else(|| format!("{what} {t} overflows when converted to ns"))
    }

    fn record(&mut self, line: &str) -> Result<(), String> {
        let mut f = Fields {
            it: line.split(':'),
            index: 0,
        };
        let kind = f.next_str().unwrap_or("");
        match kind {
            "1" => {
                self.counts[1] += 1;
                let th = self.object(&mut f)?;
                let a = self.time(&mut f, "begin time")?;
                let b = self.time(&mut f, "end time")?;
                f.num("state")?;
                self.threads[th].touch(a, b);
            }
            "2" => {
                self.counts[2] += 1;
                let th = self.object(&mut f)?;
                let t = self.time(&mut f, "time")?;
                self.pairs.clear();
                while let Some(ty) = f.next_str() {
                    let ty: u64 = ty
                        .trim()
                        .parse()
                        .map_err(|_| format!("field {} (event type) is `{ty}`, not a number", f.index))?;
                    let v = f.next_str().ok_or("an event type has no value")?;
                    let v: i128 = v
                        .trim()
                        .parse()
                        .map_err(|_| format!("field {} (event value) is `{v}`, not a number", f.index))?;
                    self.pairs.push((ty, v));
                }
                if self.pairs.is_empty() {
                    return Err("an event record has no type:value pair".into());
                }
                self.threads[th].touch(t, t);
                self.events(th, t);
            }
            "3" => {
                self.counts[3] += 1;
                let s = self.object(&mut f)?;
                let lsend = self.time(&mut f, "logical send time")?;
                let psend = self.time(&mut f, "physical send time")?;
                let r = self.object(&mut f)?;
                let lrecv = self.time(&mut f, "logical receive time")?;
                let precv = self.time(&mut f, "physical receive time")?;
                let size = f.num("size")?;
                let tag_text = f.next_str().ok_or("the record ends before its tag")?;
                let tag: i32 = tag_text
                    .trim()
                    .parse()
                    .map_err(|_| format!("field {} (tag) is `{tag_text}`, not a number", f.index))?;
                self.threads[s].touch(lsend.min(psend), lsend.max(psend));
                self.threads[r].touch(lrecv.min(precv), lrecv.max(precv));
                self.comms.push(CommRecord {
                    sender: s,
                    lsend,
                    receiver: r,
                    lrecv,
                    precv,
                    size,
                    tag,
                });
            }
            "4" => self.counts[4] += 1,
            _ => {
                return Err(format!(
                    "unknown record type `{kind}` (expected 1, 2, 3, 4 or a # comment)"
                ))
            }
        }
        Ok(())
    }

    fn events(&mut self, th: usize, t: Time) {
        let mut enter: Option<(u64, u64)> = None;
        let mut coll = CollAttrs::default();
        let mut callers: Vec<(u32, u64)> = Vec::new();
        for i in 0..self.pairs.len() {
            let (ty, v) = self.pairs[i];
            let role = self.roles.by_type.get(&ty).copied().unwrap_or(Role::Ignore);
            let uv = u64::try_from(v).unwrap_or(0);
            match role {
                Role::MpiCall => {
                    self.threads[th].has_mpi = true;
                    if uv == 0 {
                        self.leave(th, ty, t);
                    } else {
                        enter = Some((ty, uv));
                    }
                }
                Role::CollSendSize => coll.sent = Some(uv),
                Role::CollRecvSize => coll.recvd = Some(uv),
                Role::CollRoot => coll.root = Some(uv),
                Role::CollComm => coll.comm = Some(uv),
                Role::Caller(level) => {
                    if uv != 0 {
                        callers.push((level, uv));
                    }
                }
                Role::Counter(m) => self.threads[th].samples.push((m, t, v as f64)),
                Role::Region => {
                    let stack = &mut self.threads[th].regions;
                    if uv == 0 {
                        if let Some(pos) = stack.iter().rposition(|&(rt, _)| rt == ty) {
                            stack.truncate(pos);
                        }
                    } else {
                        stack.push((ty, uv));
                    }
                }
                Role::Ignore => {}
            }
        }
        if let Some((ty, v)) = enter {
            let func = self.func_id(ty, v);
            let callpath = self.callpath(th, &mut callers);
            let data = &mut self.threads[th];
            if let Some(pos) = data.open.iter().position(|&(ot, _)| ot == ty) {
                // A new call of the same type starts before the previous one left: close it.
                let (_, idx) = data.open.remove(pos);
                data.calls[idx].exit = t;
            }
            data.calls.push(RawCall {
                func,
                enter: t,
                exit: Time::MAX,
                callpath,
                coll,
            });
            let idx = data.calls.len() - 1;
            data.open.push((ty, idx));
        }
    }

    fn leave(&mut self, th: usize, ty: u64, t: Time) {
        let data = &mut self.threads[th];
        match data.open.iter().rposition(|&(ot, _)| ot == ty) {
            Some(pos) => {
                let (_, idx) = data.open.remove(pos);
                data.calls[idx].exit = t;
            }
            None => self.unmatched_leaves += 1,
        }
    }

    fn func_id(&mut self, ty: u64, v: u64) -> u32 {
        if let Some(&f) = self.func_cache.get(&(ty, v)) {
            return f;
        }
        let name = self.pcf.types[&ty]
            .values
            .and_then(|s| self.pcf.value_sets[s].get(&v))
            .cloned()
            .unwrap_or_else(|| format!("MPI_call_{ty}_{v}"));
        let f = self.trace.functions.intern(&name);
        self.func_cache.insert((ty, v), f);
        f
    }

    fn value_label(&self, ty: u64, v: u64) -> String {
        self.pcf
            .types
            .get(&ty)
            .and_then(|et| et.values)
            .and_then(|s| self.pcf.value_sets[s].get(&v))
            .cloned()
            .unwrap_or_else(|| format!("{ty}:{v}"))
    }

    fn callpath(&mut self, th: usize, callers: &mut [(u32, u64)]) -> CallpathId {
        let names: Vec<String> = if !callers.is_empty() {
            callers.sort_by_key(|c| std::cmp::Reverse(c.0));
            callers
                .iter()
                .map(|&(level, v)| self.value_label(self.roles.caller_types[&level], v))
                .filter(|n| n != "Unresolved" && n != "_NOT_Found")
                .collect()
        } else {
            self.threads[th]
                .regions
                .iter()
                .map(|&(ty, v)| self.value_label(ty, v))
                .collect()
        };
        if names.is_empty() {
            return NO_CALLPATH;
        }
        let path: Vec<RegionId> = names.iter().map(|n| self.trace.regions.intern(n)).collect();
        if let Some(&id) = self.callpath_cache.get(&path) {
            return id;
        }
        let id = self.trace.intern_callpath(&path);
        self.callpath_cache.insert(path, id);
        id
    }
}

/// Choose the `.prv`, `.pcf` and `.row` of the input set.
fn pick_files(files: &[InputFile]) -> Result<(&InputFile, Option<&InputFile>, Option<&InputFile>), FormatError> {
    let is_prv = |f: &&InputFile| {
        let b = f.bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&f.bytes);
        b.starts_with(b"#Paraver") || b.starts_with(b"new format")
    };
    let prvs: Vec<&InputFile> = files.iter().filter(is_prv).collect();
    let prv = match prvs.as_slice() {
        [p] => *p,
        [] => {
            let name = files.first().map(|f| f.name.as_str()).unwrap_or("(no input)");
            return Err(FormatError::new(
                name,
                "no Paraver .prv file (starting with `#Paraver`) was given",
            ));
        }
        [a, b, ..] => {
            return Err(FormatError::new(
                &b.name,
                format!(
                    "several .prv files were given (`{}` and `{}`); give one trace",
                    a.name, b.name
                ),
            ))
        }
    };
    let stem = prv.name.strip_suffix(".prv").unwrap_or(&prv.name);
    let companion = |ext: &str| -> Option<&InputFile> {
        let same = format!("{stem}.{ext}");
        files.iter().find(|f| f.name == same).or_else(|| {
            let all: Vec<&InputFile> = files
                .iter()
                .filter(|f| f.name.to_ascii_lowercase().ends_with(&format!(".{ext}")))
                .collect();
            if all.len() == 1 {
                Some(all[0])
            } else {
                None
            }
        })
    };
    Ok((prv, companion("pcf"), companion("row")))
}

/// Read a paraver trace from its files.
///
/// Errors name the file and 1-based line: a malformed header, record fields that are not
/// numbers, objects (application, task, thread) missing from the header, unknown record types.
pub fn read(files: &[InputFile], progress: &mut dyn ProgressSink) -> Result<Trace, FormatError> {
    let (prv, pcf_file, row_file) = pick_files(files)?;
    let pcf = match pcf_file {
        Some(f) => parse_pcf(f)?,
        None => Pcf::default(),
    };
    let row_threads = match row_file {
        Some(f) => parse_row_threads(f)?,
        None => Vec::new(),
    };
    let roles = classify_types(&pcf);
    let name = prv.name.as_str();
    let mut warnings = Vec::new();
    if pcf_file.is_none() {
        let stem = name.strip_suffix(".prv").unwrap_or(name);
        warnings.push(format!(
            "no .pcf file among the inputs ({stem}.pcf was expected next to {name}): the .pcf names the event \
             types, so without it no MPI call, collective or call path can be recognised and communication \
             records cannot be attached to calls; give the .pcf with the .prv"
        ));
    }
    let text = std::str::from_utf8(&prv.bytes).map_err(|e| {
        let line = prv.bytes[..e.valid_up_to()].iter().filter(|&&c| c == b'\n').count() as u64 + 1;
        FormatError::at_line(name, line, "not UTF-8 text")
    })?;
    let total = prv.bytes.len() as u64;
    // Extrae ends every record with an end of line: a last line without one was cut. It is read
    // as the other lines (a field cut short is then an error at its line), and reported.
    let cut = match text.rfind('\n') {
        Some(i) if !text[i + 1..].trim().is_empty() => Some(text[i + 1..].trim_end()),
        _ => None,
    };

    let mut lines = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i as u64 + 1, l.strip_suffix('\r').unwrap_or(l)));
    let (mut line_no, mut head) = lines.next().unwrap_or((1, ""));
    let head_trimmed = head.trim_start_matches('\u{feff}');
    if head_trimmed == "new format" {
        (line_no, head) = lines
            .next()
            .ok_or_else(|| FormatError::at_line(name, 2, "the file ends before the #Paraver header"))?;
    } else {
        head = head_trimmed;
    }
    let header = parse_header(head, name, line_no)?;

    let mut comm_defs: HashMap<u64, CommDef> = HashMap::new();
    for k in 0..header.num_comms {
        let (ln, l) = lines.next().ok_or_else(|| {
            FormatError::at_line(
                name,
                line_no + k as u64 + 1,
                format!(
                    "the header announces {} communicator lines but the file ends",
                    header.num_comms
                ),
            )
        })?;
        if l.trim().is_empty() {
            return Err(FormatError::at_line(
                name,
                ln,
                format!(
                    "the header announces {} communicator lines but only {k} follow",
                    header.num_comms
                ),
            ));
        }
        let fields: Vec<&str> = l.split(':').collect();
        let bad = || {
            FormatError::at_line(
                name,
                ln,
                format!("expected a communicator line `c:appl:id:n:tasks...`, found `{l}`"),
            )
        };
        if fields.len() < 4 || !matches!(fields[0], "c" | "C" | "i" | "I") {
            return Err(bad());
        }
        let appl: u32 = fields[1].parse().map_err(|_| bad())?;
        let id: u64 = fields[2].parse().map_err(|_| bad())?;
        let n: usize = fields[3].parse().map_err(|_| bad())?;
        if fields.len() != 4 + n {
            return Err(FormatError::at_line(
                name,
                ln,
                format!("communicator {id} announces {n} tasks but lists {}", fields.len() - 4),
            ));
        }
        let tasks = fields[4..]
            .iter()
            .map(|t| t.parse::<u32>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| bad())?;
        comm_defs.insert(id, CommDef { appl, tasks });
    }

    let mut thread_base = Vec::new();
    let mut next = 0usize;
    for app in &header.apps {
        let mut bases = Vec::with_capacity(app.threads_per_task.len());
        for &n in &app.threads_per_task {
            bases.push(next);
            next += n as usize;
        }
        thread_base.push(bases);
    }
    if next as u64 > total {
        return Err(FormatError::at_line(
            name,
            1,
            format!("the header declares {next} threads, more than the file can describe"),
        ));
    }
    let mut body = Body {
        file: name,
        header: &header,
        roles: &roles,
        pcf: &pcf,
        thread_base,
        threads: (0..next).map(|_| ThreadData::default()).collect(),
        comms: Vec::new(),
        trace: Trace::new("paraver", name, 0),
        callpath_cache: HashMap::new(),
        func_cache: HashMap::new(),
        unmatched_leaves: 0,
        counts: [0; 5],
        pairs: Vec::new(),
    };
    let mut done = 0u64;
    let start = Progress {
        stage: "reading records".into(),
        bytes_done: 0,
        bytes_total: total,
    };
    if !progress.report(&start) {
        return Err(FormatError::cancelled(name));
    }
    let mut next_report = 4u64 << 20;
    let mut last_line = line_no;
    for (ln, line) in lines {
        last_line = ln;
        done += line.len() as u64 + 1;
        if done >= next_report {
            next_report = done + (4 << 20);
            let p = Progress {
                stage: "reading records".into(),
                bytes_done: done.min(total),
                bytes_total: total,
            };
            if !progress.report(&p) {
                return Err(FormatError::cancelled(name));
            }
        }
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(['c', 'C', 'i', 'I']) {
            continue;
        }
        body.record(trimmed).map_err(|m| {
            let m = if cut.is_some_and(|c| std::ptr::eq(c.as_ptr(), line.as_ptr())) {
                format!("{m} (the file ends inside this line without an end of line: it looks truncated)")
            } else {
                m
            };
            FormatError::at_line(body.file, ln, m)
        })?;
    }
    warnings.extend(truncation_warning(name, last_line, cut, &header, &body.threads));
    let mut trace = build_trace(body, &header, &comm_defs, &row_threads, &roles)?;
    if !warnings.is_empty() {
        warnings.append(&mut trace.warnings);
        trace.warnings = warnings;
    }
    Ok(trace)
}

/// Least share of the header's end time the records must reach for a file with MPI calls still
/// open at its end not to be reported as truncated (Extrae and Paraver's cutter write the time of
/// the last record as the end time).
const SHORT_RUN_SHARE: f64 = 0.9;

/// The warning for a `.prv` that looks truncated: its last line has no end of line (the record
/// was cut: its last number may have lost digits), or its records end before [`SHORT_RUN_SHARE`]
/// of the run's end in the header while MPI calls are still open at the end. `last_line` is the
/// number of the file's last line (empty when the file ends with an end of line). Records ending early alone say nothing (hand-written and excerpted
/// traces keep a longer run's header), nor do open calls alone (a thread's last call may be open
/// when tracing stops).
fn truncation_warning(
    name: &str,
    last_line: u64,
    cut: Option<&str>,
    header: &Header,
    threads: &[ThreadData],
) -> Option<String> {
    let header_end = header.end_time.saturating_mul(header.unit_ns);
    let records_end = threads.iter().filter_map(|t| t.span).map(|(_, b)| b).max().unwrap_or(0);
    let open: usize = threads.iter().map(|t| t.open.len()).sum();
    let short = (records_end as f64) < SHORT_RUN_SHARE * header_end as f64;
    let secs = |ns: u64| ns as f64 / 1e9;
    let shorter = format!(
        "the records read end at {:.6} s, though the header says the run lasted {:.6} s",
        secs(records_end),
        secs(header_end)
    );
    if let Some(cut) = cut {
        let shown: String = cut.chars().take(40).collect();
        let ellipsis = if shown.len() < cut.len() { "..." } else { "" };
        let shorter = if short { format!("; {shorter}") } else { String::new() };
        return Some(format!(
            "{name} line {last_line}: the file ends in the middle of a record (`{shown}{ellipsis}` has no end of \
             line), so the file looks truncated and that record, read as it is, may have lost its last digits{shorter}"
        ));
    }
    if short && open > 0 {
        return Some(format!(
            "{name} looks truncated after line {}: {shorter}, and {open} MPI call{} still open at the end",
            last_line.saturating_sub(1),
            if open == 1 { " is" } else { "s are" }
        ));
    }
    None
}

fn build_trace(
    mut body: Body,
    header: &Header,
    comm_defs: &HashMap<u64, CommDef>,
    row_threads: &[String],
    roles: &Roles,
) -> Result<Trace, FormatError> {
    let name = body.file.to_owned();
    // Ranks: tasks of applications whose threads emitted MPI events.
    let mut mpi_apps: Vec<usize> = (0..header.apps.len())
        .filter(|&a| {
            body.thread_base[a].iter().enumerate().any(|(t, &base)| {
                let n = header.apps[a].threads_per_task[t] as usize;
                body.threads[base..base + n].iter().any(|d| d.has_mpi)
            })
        })
        .collect();
    let mut warnings = Vec::new();
    if mpi_apps.is_empty() && !header.apps.is_empty() {
        mpi_apps.push(0);
        warnings.push("no MPI events found: the ranks are the tasks of application 1".to_owned());
    }
    // thread index → (rank, location index)
    let mut owner: Vec<Option<(Rank, u16)>> = vec![None; body.threads.len()];
    let mut rank_of_task: HashMap<(usize, usize), Rank> = HashMap::new();
    let mut locations: Vec<Vec<Location>> = Vec::new();
    for &a in &mpi_apps {
        for (t, &base) in body.thread_base[a].iter().enumerate() {
            let r = locations.len() as Rank;
            rank_of_task.insert((a, t), r);
            let n = header.apps[a].threads_per_task[t] as usize;
            let mut locs = Vec::with_capacity(n);
            for th in 0..n {
                owner[base + th] = Some((r, th as u16));
                let label = row_threads
                    .get(base + th)
                    .cloned()
                    .unwrap_or_else(|| format!("THREAD {}.{}.{}", a + 1, t + 1, th + 1));
                locs.push(Location {
                    id: th as u64 + 1,
                    name: label,
                });
            }
            locations.push(locs);
        }
    }
    let n = locations.len() as u32;
    let mut trace = std::mem::take(&mut body.trace);
    let functions = std::mem::take(&mut trace.functions);
    let regions = std::mem::take(&mut trace.regions);
    let callpaths = std::mem::take(&mut trace.callpaths);
    trace = Trace::new("paraver", &name, n);
    trace.functions = functions;
    trace.regions = regions;
    trace.callpaths = callpaths;
    trace.meta.push(("date".into(), header.date.clone()));
    trace.meta.push(("time unit".into(), header.unit_name.into()));
    trace.meta.push((
        "end time (ns)".into(),
        header.end_time.saturating_mul(header.unit_ns).to_string(),
    ));
    trace.meta.push(("applications".into(), header.apps.len().to_string()));
    trace.meta.push((
        "MPI applications".into(),
        mpi_apps
            .iter()
            .map(|a| (a + 1).to_string())
            .collect::<Vec<_>>()
            .join(","),
    ));
    for (k, c) in body.counts.iter().enumerate().skip(1) {
        trace.meta.push((format!("records of type {k}"), c.to_string()));
    }
    for (r, locs) in locations.into_iter().enumerate() {
        trace.ranks[r].locations = locs;
    }

    // Communicators are created when a collective names them.
    let mut comm_ids: HashMap<u64, CommId> = HashMap::new();
    let mut resolve_comm = |trace: &mut Trace, id: u64, warnings: &mut Vec<String>| -> CommId {
        if let Some(&c) = comm_ids.get(&id) {
            return c;
        }
        let members: Option<Vec<Rank>> = comm_defs.get(&id).and_then(|d| {
            d.tasks
                .iter()
                .map(|&t| {
                    rank_of_task
                        .get(&((d.appl as usize).wrapping_sub(1), (t as usize).wrapping_sub(1)))
                        .copied()
                })
                .collect()
        });
        let c = match members {
            Some(m) if m == trace.comms[0].members => COMM_WORLD,
            Some(m) => trace.add_comm(&format!("comm {id}"), m),
            None => {
                warnings.push(format!(
                    "communicator {id} is not defined over the MPI tasks in the header; MPI_COMM_WORLD is used"
                ));
                COMM_WORLD
            }
        };
        comm_ids.insert(id, c);
        c
    };

    // Calls: each rank's threads merged by enter time.
    // call_index[thread][raw] = CallIdx in the owning rank.
    let mut call_index: Vec<Vec<CallIdx>> = vec![Vec::new(); body.threads.len()];
    let mut open_at_end = 0u64;
    for r in 0..n {
        let ths: Vec<usize> = (0..body.threads.len())
            .filter(|&t| owner[t].map(|o| o.0) == Some(r))
            .collect();
        let mut order: Vec<(Time, usize, usize)> = Vec::new();
        for &th in &ths {
            let d = &mut body.threads[th];
            let last = d.span.map(|s| s.1).unwrap_or(0);
            for c in d.calls.iter_mut() {
                if c.exit == Time::MAX {
                    c.exit = last.max(c.enter);
                    open_at_end += 1;
                }
            }
            // Paraver files are sorted by time; sorting keeps the lookups by time right if not.
            d.calls.sort_by_key(|c| c.enter);
            call_index[th] = vec![0; d.calls.len()];
            order.extend(d.calls.iter().enumerate().map(|(i, c)| (c.enter, th, i)));
            if let Some((a, b)) = d.span {
                trace.ranks[r as usize].extend_span(a, b);
            }
        }
        order.sort();
        for (_, th, i) in order {
            let c = body.threads[th].calls[i].clone();
            let loc = owner[th].map(|o| o.1).unwrap_or(0);
            let fname = trace.functions.name(c.func).to_owned();
            let idx = trace.push_call(r, &fname, c.enter, c.exit, c.callpath, loc);
            call_index[th][i] = idx;
            if CallKind::classify(&fname) == CallKind::Collective {
                let op = CollectiveOp::from_name(&fname).unwrap_or(CollectiveOp::Other);
                let comm = match c.coll.comm {
                    Some(id) => resolve_comm(&mut trace, id, &mut warnings),
                    None => COMM_WORLD,
                };
                let root = match c.coll.root {
                    Some(local) => u32::try_from(local)
                        .ok()
                        .and_then(|l| trace.comms[comm as usize].world_rank(l))
                        .unwrap_or(NO_ROOT),
                    None => NO_ROOT,
                };
                trace.push_collective(
                    r,
                    idx,
                    op,
                    comm,
                    root,
                    c.coll.sent.unwrap_or(0),
                    c.coll.recvd.unwrap_or(0),
                );
            }
        }
        // Counter samples, per metric, in time order.
        let mut samples: Vec<(usize, Time, f64)> = ths
            .iter()
            .flat_map(|&th| body.threads[th].samples.iter().copied())
            .collect();
        samples.sort_by_key(|s| (s.0, s.1));
        for (m, t, v) in samples {
            let metric = trace.metrics.intern(&roles.metric_names[m]);
            let rt = &mut trace.ranks[r as usize];
            if rt.metrics.last().map(|s| s.metric) != Some(metric) {
                rt.metrics.push(MetricSamples {
                    metric,
                    ..Default::default()
                });
            }
            let s = rt.metrics.last_mut().expect("pushed above");
            s.time.push(t);
            s.value.push(v);
        }
    }
    if open_at_end > 0 {
        warnings.push(format!(
            "{open_at_end} MPI calls were still open at the end of their thread's records"
        ));
    }
    if body.unmatched_leaves > 0 {
        warnings.push(format!(
            "{} MPI leave events had no matching enter (the trace was probably cut)",
            body.unmatched_leaves
        ));
    }

    attach_communications(&mut trace, &body, &owner, &call_index, &mut warnings);
    trace.normalise_order();
    trace.warnings = warnings;
    Ok(trace)
}

/// Index of the call of `calls` open at time `t` (enter ≤ t ≤ exit), preferring calls for
/// which `prefer` holds.
fn call_at(calls: &[RawCall], t: Time, prefer: impl Fn(usize) -> bool) -> Option<usize> {
    let end = calls.partition_point(|c| c.enter <= t);
    let mut found = None;
    for i in (0..end).rev() {
        let c = &calls[i];
        if c.exit >= t {
            if prefer(i) {
                return Some(i);
            }
            found.get_or_insert(i);
        }
        // Calls on one thread do not nest across MPI types for long; stop after a few.
        if end - i > 4 {
            break;
        }
    }
    found
}

fn attach_communications(
    trace: &mut Trace,
    body: &Body,
    owner: &[Option<(Rank, u16)>],
    call_index: &[Vec<CallIdx>],
    warnings: &mut Vec<String>,
) {
    let kind_of = |trace: &Trace, th: usize, i: usize| -> CallKind {
        let (r, _) = owner[th].expect("only rank threads are asked");
        trace.ranks[r as usize].calls.kind[call_index[th][i] as usize]
    };
    /// A point-to-point operation waiting to be appended in call order.
    struct Op {
        rank: Rank,
        post: CallIdx,
        complete: CallIdx,
        dir: P2pDir,
        peer: Rank,
        tag: i32,
        bytes: u64,
    }
    let mut ops: Vec<Op> = Vec::with_capacity(body.comms.len() * 2);
    let mut outside = 0u64;
    let mut unattached = 0u64;
    // Single-request completions already used by a receive: (thread, raw call).
    let mut claimed: std::collections::HashSet<(usize, usize)> = std::collections::HashSet::new();
    let mut sends: Vec<(usize, usize, Rank, CommRecord)> = Vec::new();
    for rec in &body.comms {
        let (Some((sr, _)), Some((rr, _))) = (owner[rec.sender], owner[rec.receiver]) else {
            outside += 1;
            continue;
        };
        // Receive side.
        let rcalls = &body.threads[rec.receiver].calls;
        let post = call_at(rcalls, rec.lrecv, |i| {
            matches!(
                kind_of(trace, rec.receiver, i),
                CallKind::Recv | CallKind::Irecv | CallKind::SendRecv
            )
        });
        let scalls = &body.threads[rec.sender].calls;
        let send_post = call_at(scalls, rec.lsend, |i| {
            matches!(
                kind_of(trace, rec.sender, i),
                CallKind::Send | CallKind::Isend | CallKind::SendRecv
            )
        });
        let (Some(post), Some(send_post)) = (post, send_post) else {
            unattached += 1;
            continue;
        };
        let post_kind = kind_of(trace, rec.receiver, post);
        let complete = if post_kind == CallKind::Irecv {
            match call_at(rcalls, rec.precv, |i| {
                kind_of(trace, rec.receiver, i) == CallKind::Completion
            }) {
                Some(w) if kind_of(trace, rec.receiver, w) == CallKind::Completion => {
                    let fname = trace.call_name(rr, call_index[rec.receiver][w]);
                    if fname == "MPI_Wait" || fname == "MPI_Test" {
                        claimed.insert((rec.receiver, w));
                    }
                    call_index[rec.receiver][w]
                }
                _ => NOT_COMPLETED,
            }
        } else {
            call_index[rec.receiver][post]
        };
        ops.push(Op {
            rank: rr,
            post: call_index[rec.receiver][post],
            complete,
            dir: P2pDir::Recv,
            peer: sr,
            tag: rec.tag,
            bytes: rec.size,
        });
        sends.push((rec.sender, send_post, rr, *rec));
    }
    // For each thread with sends, the next send-completing call at or after each call: a
    // Wait*/Test* not already claimed by a receive. Built once per thread, backwards.
    let mut next_completion: HashMap<usize, Vec<Option<usize>>> = HashMap::new();
    for (th, post, rr, rec) in sends {
        let (sr, _) = owner[th].expect("checked above");
        let complete = if kind_of(trace, th, post) == CallKind::Isend {
            let table = next_completion.entry(th).or_insert_with(|| {
                let n = body.threads[th].calls.len();
                let mut table = vec![None; n + 1];
                for i in (0..n).rev() {
                    let f = trace.call_name(sr, call_index[th][i]);
                    let completes = kind_of(trace, th, i) == CallKind::Completion
                        && !claimed.contains(&(th, i))
                        && (f.starts_with("MPI_Wait") || f.starts_with("MPI_Test"));
                    table[i] = if completes { Some(i) } else { table[i + 1] };
                }
                table
            });
            table[post + 1].map(|i| call_index[th][i]).unwrap_or(NOT_COMPLETED)
        } else {
            call_index[th][post]
        };
        ops.push(Op {
            rank: sr,
            post: call_index[th][post],
            complete,
            dir: P2pDir::Send,
            peer: rr,
            tag: rec.tag,
            bytes: rec.size,
        });
    }
    // Operations in call order; within a call (MPI_Sendrecv) the send first.
    ops.sort_by_key(|o| (o.rank, o.post, o.dir == P2pDir::Recv));
    for o in ops {
        trace.push_p2p(o.rank, o.post, o.complete, o.dir, o.peer, o.tag, COMM_WORLD, o.bytes);
    }
    if outside > 0 {
        warnings.push(format!(
            "{outside} communication records involve tasks that are not MPI ranks; skipped"
        ));
    }
    if unattached > 0 {
        warnings.push(format!(
            "{unattached} communication records fall outside any MPI call of their threads; skipped"
        ));
    }
}
