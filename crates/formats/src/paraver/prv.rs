//! The `.prv` itself: its header (applications, tasks, threads, time unit, communicators) and
//! its records (states, events, communications), gathered per thread as the calls, counter
//! samples and communication records the trace is built from ([`super::build`]).

use super::*;

/// One application of the header: for each task, its thread count.
#[derive(Debug, Clone)]
pub(super) struct Application {
    pub(super) threads_per_task: Vec<u32>,
}

#[derive(Debug)]
pub(super) struct Header {
    pub(super) date: String,
    pub(super) end_time: u64,
    /// Nanoseconds per time unit of the file.
    pub(super) unit_ns: u64,
    pub(super) unit_name: &'static str,
    pub(super) apps: Vec<Application>,
    pub(super) num_comms: usize,
}

/// Split at `:` and `,` outside parentheses.
pub(super) fn split_top(s: &str) -> Vec<&str> {
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

pub(super) fn parse_header(line: &str, file: &str, line_no: u64) -> Result<Header, FormatError> {
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

/// An MPI call as recorded on one thread.
#[derive(Debug, Clone)]
pub(super) struct RawCall {
    pub(super) func: u32,
    pub(super) enter: Time,
    pub(super) exit: Time,
    pub(super) callpath: CallpathId,
    pub(super) coll: CollAttrs,
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct CollAttrs {
    pub(super) sent: Option<u64>,
    pub(super) recvd: Option<u64>,
    pub(super) root: Option<u64>,
    pub(super) comm: Option<u64>,
}

#[derive(Debug, Default)]
pub(super) struct ThreadData {
    pub(super) calls: Vec<RawCall>,
    /// Open MPI calls: (event type, index into `calls`).
    pub(super) open: Vec<(u64, usize)>,
    /// User-function stack: (event type, value).
    pub(super) regions: Vec<(u64, u64)>,
    /// Counter samples: (metric index, time, value).
    pub(super) samples: Vec<(usize, Time, f64)>,
    pub(super) span: Option<(Time, Time)>,
    pub(super) has_mpi: bool,
}

impl ThreadData {
    pub(super) fn touch(&mut self, a: Time, b: Time) {
        self.span = Some(match self.span {
            None => (a.min(b), a.max(b)),
            Some((lo, hi)) => (lo.min(a), hi.max(b)),
        });
    }
}

/// A communication record (type 3), times already in ns.
#[derive(Debug, Clone, Copy)]
pub(super) struct CommRecord {
    pub(super) sender: usize,
    pub(super) lsend: Time,
    pub(super) receiver: usize,
    pub(super) lrecv: Time,
    pub(super) precv: Time,
    pub(super) size: u64,
    pub(super) tag: i32,
}

/// Communicator line of the header: application and member tasks (1-based).
#[derive(Debug, Clone)]
pub(super) struct CommDef {
    pub(super) appl: u32,
    pub(super) tasks: Vec<u32>,
}

pub(super) struct Body<'a> {
    pub(super) file: &'a str,
    pub(super) header: &'a Header,
    pub(super) roles: &'a Roles,
    pub(super) pcf: &'a Pcf,
    /// First global thread index of each (application, task).
    pub(super) thread_base: Vec<Vec<usize>>,
    pub(super) threads: Vec<ThreadData>,
    pub(super) comms: Vec<CommRecord>,
    /// Trace under construction: only its interners are used while reading the body.
    pub(super) trace: Trace,
    pub(super) callpath_cache: HashMap<Vec<RegionId>, CallpathId>,
    /// (event type, value) → function id, for MPI calls.
    pub(super) func_cache: HashMap<(u64, u64), u32>,
    pub(super) unmatched_leaves: u64,
    pub(super) counts: [u64; 5],
    pub(super) pairs: Vec<(u64, i128)>,
}

/// Fields of a `:`-separated record, parsed on demand without allocating.
pub(super) struct Fields<'a> {
    pub(super) it: std::str::Split<'a, char>,
    pub(super) index: usize,
}

impl<'a> Fields<'a> {
    pub(super) fn next_str(&mut self) -> Option<&'a str> {
        self.index += 1;
        self.it.next()
    }
    pub(super) fn num(&mut self, what: &str) -> Result<u64, String> {
        let s = self
            .next_str()
            .ok_or_else(|| format!("the record ends before its {what}"))?;
        s.trim()
            .parse()
            .map_err(|_| format!("field {} ({what}) is `{s}`, not a non-negative integer", self.index))
    }
}

impl Body<'_> {
    pub(super) fn thread_index(&self, cpu_appl_task_thread: [u64; 4]) -> Result<usize, String> {
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

    pub(super) fn object(&self, f: &mut Fields) -> Result<usize, String> {
        let cpu = f.num("cpu")?;
        let appl = f.num("application")?;
        let task = f.num("task")?;
        let thread = f.num("thread")?;
        self.thread_index([cpu, appl, task, thread])
    }

    pub(super) fn time(&self, f: &mut Fields, what: &str) -> Result<Time, String> {
        let t = f.num(what)?;
        t.checked_mul(self.header.unit_ns)
            .ok_or_else(|| format!("{what} {t} overflows when converted to ns"))
    }

    pub(super) fn record(&mut self, line: &str) -> Result<(), String> {
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

    pub(super) fn events(&mut self, th: usize, t: Time) {
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

    pub(super) fn leave(&mut self, th: usize, ty: u64, t: Time) {
        let data = &mut self.threads[th];
        match data.open.iter().rposition(|&(ot, _)| ot == ty) {
            Some(pos) => {
                let (_, idx) = data.open.remove(pos);
                data.calls[idx].exit = t;
            }
            None => self.unmatched_leaves += 1,
        }
    }

    pub(super) fn func_id(&mut self, ty: u64, v: u64) -> u32 {
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

    pub(super) fn value_label(&self, ty: u64, v: u64) -> String {
        self.pcf
            .types
            .get(&ty)
            .and_then(|et| et.values)
            .and_then(|s| self.pcf.value_sets[s].get(&v))
            .cloned()
            .unwrap_or_else(|| format!("{ty}:{v}"))
    }

    pub(super) fn callpath(&mut self, th: usize, callers: &mut [(u32, u64)]) -> CallpathId {
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
