//! Writing a [`Trace`] as SST DUMPI files in the current libdumpi layout (8-entry index).
//!
//! Every call of the model becomes the record of the same MPI function when DUMPI has one;
//! the arguments are rebuilt from the model so that reading the files back gives the same calls,
//! point-to-point operations and collectives:
//! - messages and collective buffers are written as counts of `MPI_BYTE`, so the byte sizes are
//!   exact; collective counts that MPI defines per member (`Gather`, `Alltoall`...) are divided
//!   by the communicator size;
//! - peers and roots are written relative to the communicator of the operation;
//! - non-blocking operations get request handles, and each completion call lists the requests
//!   it completed (a `MPI_Wait` that completed several is written as `MPI_Waitall`);
//! - communicators: the k-th communicator-creating call (`MPI_Comm_split`, `_dup`, `_create`,
//!   `MPI_Cart_create`, ...) of every rank is taken as one collective on `MPI_COMM_WORLD`;
//!   each communicator (without `MPI_COMM_WORLD` and `MPI_COMM_SELF`; the one that can go
//!   earliest first, ties by id) is introduced at the first such call all its members still
//!   have free, and ranks outside it get
//!   `MPI_COMM_NULL` there. The record keeps the call's name when that can express the
//!   membership (`MPI_Comm_dup` of the world, `MPI_Group_incl` + `MPI_Comm_create`, a 1-D
//!   `MPI_Cart_create` over the first ranks), else it is written as `MPI_Comm_split` (colour =
//!   communicator id, key = rank in it). When the calls do not suffice, every rank starts with
//!   one synthetic `MPI_Comm_split` per communicator instead (extra calls in the written trace);
//! - user call paths become function enter/exit records with a function-name table;
//! - not written: calls DUMPI has no record for (non-blocking collectives, MPI-3 calls),
//!   metrics, and persistent requests (an `MPI_Start` that posted operations is written as one
//!   `MPI_Isend`/`MPI_Irecv` per operation).

use super::raw::{Status, Value, MAGIC, MASK_STATUSES, MASK_THREAD, MASK_WALL_TIME};
use super::spec::{call_by_name, CallSpec, FieldKind, END_OF_STREAM, FUNCTION_ENTER, FUNCTION_EXIT};
use crate::InputFile;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use tracelogic_model::{
    CallIdx, CallKind, CollectiveOp, CommId, P2pDir, Rank, Trace, ANY_SOURCE, ANY_TAG, NOT_COMPLETED,
};

const DT_BYTE: i64 = 5;
/// `DUMPI_DATATYPE_NULL` (libdumpi's `constants.h`; size 0, no message is written with it).
const DT_NULL: i64 = 1;
const COMM_NULL: i64 = 1;
const COMM_WORLD: i64 = 2;
const COMM_SELF: i64 = 3;
const REQUEST_NULL: i64 = 1;
const PROC_NULL: i64 = -2;
const UNDEFINED: i64 = -32766;
/// Version written in the header: layout of libdumpi 8 (statuses with tags, 8-entry index).
const VERSION: (u8, u8, u8) = (8, 0, 0);
const BUILTIN_SIZES: [i32; 28] = [
    0, 0, 1, 1, 1, 1, 4, 2, 2, 4, 4, 8, 8, 4, 8, 16, 8, 8, 8, 1, 0, 0, 8, 12, 16, 6, 8, 32,
];
const CREATORS: [&str; 8] = [
    "MPI_Comm_split",
    "MPI_Comm_dup",
    "MPI_Comm_create",
    "MPI_Cart_create",
    "MPI_Graph_create",
    "MPI_Cart_sub",
    "MPI_Intercomm_create",
    "MPI_Intercomm_merge",
];

#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.u32(v as u32);
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn str16(&mut self, s: &str) {
        let b = &s.as_bytes()[..s.len().min(u16::MAX as usize)];
        self.u16(b.len() as u16);
        self.0.extend_from_slice(b);
    }
    fn str32(&mut self, s: &str) {
        self.i32(s.len() as i32);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn pos(&self) -> u64 {
        self.0.len() as u64
    }
}

/// Arguments of one record to write, by field name; missing fields get neutral defaults.
#[derive(Default)]
struct Args(Vec<(&'static str, Value)>);

impl Args {
    fn set(&mut self, name: &'static str, v: Value) -> &mut Self {
        self.0.push((name, v));
        self
    }
    fn int(&mut self, name: &'static str, v: i64) -> &mut Self {
        self.set(name, Value::Int(v))
    }
    fn ints(&mut self, name: &'static str, v: Vec<i32>) -> &mut Self {
        self.set(name, Value::Ints(v))
    }
    fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().rev().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

/// The value written for a field the model has no argument for. A datatype is `MPI_BYTE`,
/// except in the records that tell a reader a type's size (`MPI_Type_size`, the constructors'
/// new types): there it is the null datatype, since a reader sizes a handle from those records
/// (a traced `MPI_Type_size` written as the size 0 of `MPI_BYTE` made every message read back
/// 0 bytes: LAMMPS converted to DUMPI).
fn default_value(call: &str, field: &str, kind: FieldKind) -> Value {
    match kind {
        FieldKind::U16 if field.contains("comm") => Value::Int(COMM_WORLD),
        FieldKind::U16 if field.contains("type") && call.starts_with("Type_") => Value::Int(DT_NULL),
        FieldKind::U16 if field.contains("type") => Value::Int(DT_BYTE),
        FieldKind::I32 | FieldKind::U16 | FieldKind::U8 | FieldKind::U64 => Value::Int(0),
        FieldKind::I32Arr | FieldKind::U16Arr | FieldKind::U8Arr | FieldKind::I32ArrSince(..) => Value::Ints(vec![]),
        FieldKind::I32Arr2 => Value::IntRows(vec![]),
        FieldKind::Str => Value::Str(String::new()),
        FieldKind::StrArr | FieldKind::Argv => Value::Strs(vec![]),
        FieldKind::StrArr2 => Value::StrRows(vec![]),
        FieldKind::Status | FieldKind::Statuses => Value::Statuses(Some(vec![])),
    }
}

fn put_value(o: &mut Out, kind: FieldKind, v: &Value) {
    let int = |v: &Value| if let Value::Int(i) = v { *i } else { 0 };
    let ints = |v: &Value| if let Value::Ints(i) = v { i.clone() } else { vec![] };
    match kind {
        FieldKind::I32 => o.i32(int(v) as i32),
        FieldKind::U16 => o.u16(int(v) as u16),
        FieldKind::U8 => o.u8(int(v) as u8),
        FieldKind::U64 => o.u64(int(v) as u64),
        FieldKind::I32Arr | FieldKind::I32ArrSince(..) => {
            let a = ints(v);
            o.i32(a.len() as i32);
            a.iter().for_each(|&x| o.i32(x));
        }
        FieldKind::U16Arr => {
            let a = ints(v);
            o.i32(a.len() as i32);
            a.iter().for_each(|&x| o.u16(x as u16));
        }
        FieldKind::U8Arr => {
            let a = ints(v);
            o.i32(a.len() as i32);
            a.iter().for_each(|&x| o.u8(x as u8));
        }
        FieldKind::I32Arr2 => {
            let rows = if let Value::IntRows(r) = v { r.clone() } else { vec![] };
            o.i32(rows.len() as i32);
            for row in rows {
                o.i32(row.len() as i32);
                row.iter().for_each(|&x| o.i32(x));
            }
        }
        FieldKind::Str => o.str32(if let Value::Str(s) = v { s } else { "" }),
        FieldKind::StrArr => {
            let a = if let Value::Strs(s) = v { s.clone() } else { vec![] };
            o.i32(a.len() as i32);
            a.iter().for_each(|s| o.str32(s));
        }
        FieldKind::Argv => {
            if let Value::Strs(s) = v {
                s.iter().for_each(|s| o.str32(s));
            }
        }
        FieldKind::StrArr2 => {
            let rows = if let Value::StrRows(r) = v { r.clone() } else { vec![] };
            o.i32(rows.len() as i32);
            for row in rows {
                o.i32(row.len() as i32);
                row.iter().for_each(|s| o.str32(s));
            }
        }
        FieldKind::Status | FieldKind::Statuses => {
            let list: &[Status] = if let Value::Statuses(Some(s)) = v { s } else { &[] };
            o.i32(list.len() as i32);
            for s in list {
                o.i32(s.bytes);
                o.i32(s.source);
                o.u8(s.cancelled);
                o.u8(s.error);
                o.i32(s.tag);
            }
        }
    }
}

/// Everything one rank's stream writer needs.
struct RankWriter<'t> {
    trace: &'t Trace,
    r: Rank,
    out: Out,
    counts: Vec<u32>,
    /// Communicator id → this rank's handle.
    handles: HashMap<CommId, i64>,
    next_handle: i64,
    next_group: i64,
    /// Group handle → world ranks.
    groups: HashMap<i64, Vec<Rank>>,
    last_group: Option<i64>,
    requests: HashMap<usize, i64>,
    next_request: i64,
    stack: Vec<u32>,
    wall_bias: u32,
}

impl RankWriter<'_> {
    fn record(&mut self, spec: &CallSpec, thread: u16, enter: u64, exit: u64, args: &Args) {
        self.out.u16(spec.id);
        self.out.u8(MASK_STATUSES | MASK_WALL_TIME | MASK_THREAD);
        self.out.u16(thread);
        for t in [enter, exit] {
            // 16-bit seconds above the bias wrap like libdumpi's; the reader unwraps them.
            let s = (t / 1_000_000_000).saturating_sub(self.wall_bias as u64) as u16;
            self.out.u16(s);
            self.out.u32((t % 1_000_000_000) as u32);
        }
        let mut written: Vec<Value> = Vec::with_capacity(spec.fields.len());
        for field in spec.fields {
            let v = args
                .get(field.name)
                .cloned()
                .unwrap_or_else(|| default_value(spec.name, field.name, field.kind));
            if let Some((a, b)) = field.only_if_equal {
                if written[a] != written[b] {
                    written.push(Value::Absent);
                    continue;
                }
            }
            put_value(&mut self.out, field.kind, &v);
            written.push(v);
        }
        if (spec.id as usize) < self.counts.len() {
            self.counts[spec.id as usize] += 1;
        }
        *self.counts.last_mut().expect("counts") += 1;
    }

    fn handle(&mut self, comm: CommId) -> i64 {
        if comm == tracelogic_model::COMM_WORLD {
            return COMM_WORLD;
        }
        if let Some(&h) = self.handles.get(&comm) {
            return h;
        }
        let c = &self.trace.comms[comm as usize];
        if c.members == [self.r] && c.name == "MPI_COMM_SELF" {
            return COMM_SELF;
        }
        // Used without a creation call that introduced it: name it anyway (reader warns).
        let h = self.next_handle;
        self.next_handle += 1;
        self.handles.insert(comm, h);
        h
    }

    fn local(&self, comm: CommId, world: Rank) -> i64 {
        self.trace.comms[comm as usize]
            .local_rank(world)
            .map_or(PROC_NULL, |l| l as i64)
    }

    fn comm_size(&self, comm: CommId) -> u64 {
        self.trace.comms[comm as usize].members.len().max(1) as u64
    }

    fn request(&mut self, op: usize) -> i64 {
        *self.requests.entry(op).or_insert_with(|| {
            self.next_request += 1;
            self.next_request - 1
        })
    }

    /// Emit function enter/exit records to move from the current call path to `target`.
    fn move_to_callpath(&mut self, target: &[u32], time: u64, thread: u16) {
        let common = self.stack.iter().zip(target).take_while(|(a, b)| a == b).count();
        let exit = call_spec_of(FUNCTION_EXIT);
        let enter = call_spec_of(FUNCTION_ENTER);
        while self.stack.len() > common {
            let region = self.stack.pop().expect("non-empty");
            let mut a = Args::default();
            a.int("fn", region_address(region) as i64);
            self.record(exit, thread, time, time, &a);
        }
        for &region in &target[common..] {
            let mut a = Args::default();
            a.int("fn", region_address(region) as i64);
            self.record(enter, thread, time, time, &a);
            self.stack.push(region);
        }
    }
}

fn call_spec_of(id: u16) -> &'static CallSpec {
    super::spec::call_spec(id).expect("id from the table")
}

fn region_address(region: u32) -> u64 {
    0x1000 + region as u64 * 0x10
}

/// Write `trace` as an SST DUMPI trace: `PREFIX.meta` and one `PREFIX-NNNN.bin` per rank.
pub fn write(trace: &Trace, prefix: &str) -> Vec<InputFile> {
    let n = trace.num_ranks();
    let base = prefix.rsplit('/').next().unwrap_or(prefix);
    let meta_value = |k: &str, default: &str| {
        trace
            .meta
            .iter()
            .find(|(key, _)| key == k)
            .map_or(default.to_owned(), |(_, v)| v.clone())
    };
    let hostname = meta_value("hostname", "tracelogic");
    let username = meta_value("username", "<none>");
    let start: u64 = meta_value("start time", "0").parse().unwrap_or(0);
    let mut files = vec![InputFile::new(
        format!("{prefix}.meta"),
        format!(
            "hostname={hostname}\nnumprocs={n}\nusername={username}\nstartime={start}\nfileprefix={base}\nversion={}\nsubversion={}\nsubsubversion={}\n",
            VERSION.0, VERSION.1, VERSION.2
        ),
    )];

    // Communicators (besides WORLD and SELF) are introduced by the ranks' creation calls: the
    // k-th creation call of every rank is one collective "slot" on MPI_COMM_WORLD. Each
    // communicator takes the first slot at which all its members still have a free creation
    // call; when some member has none left, synthetic splits introduce all communicators.
    let is_self = |c: &tracelogic_model::Communicator| c.members.len() == 1 && c.name == "MPI_COMM_SELF";
    let creation_calls: Vec<usize> = (0..n as usize)
        .map(|r| {
            let f = &trace.ranks[r].calls.func;
            f.iter()
                .filter(|&&f| CREATORS.contains(&trace.functions.name(f)))
                .count()
        })
        .collect();
    let mut next_slot = vec![0usize; n as usize];
    let mut slots: Vec<HashMap<usize, CommId>> = vec![HashMap::new(); n as usize];
    let mut comms_in_slot: HashMap<usize, usize> = HashMap::new();
    let mut synthetic = false;
    // Smallest free slot first (ties by id), so that communicators made by one call on disjoint
    // ranks (rows of a grid) share that call's slot.
    let members_of = |c: CommId| -> Vec<usize> {
        let m = trace.comms[c as usize].members.iter().map(|&m| m as usize);
        m.filter(|&m| m < n as usize).collect()
    };
    let mut queue: BinaryHeap<Reverse<(usize, CommId)>> = (1..trace.comms.len() as CommId)
        .filter(|&c| !is_self(&trace.comms[c as usize]) && !trace.comms[c as usize].members.is_empty())
        .map(|c| Reverse((0, c)))
        .collect();
    while let Some(Reverse((j, c))) = queue.pop() {
        let members = members_of(c);
        let needed = members.iter().map(|&m| next_slot[m]).max().unwrap_or(0);
        if needed > j {
            queue.push(Reverse((needed, c)));
            continue;
        }
        if members.iter().any(|&m| j >= creation_calls[m]) {
            synthetic = true;
            break;
        }
        for &m in &members {
            slots[m].insert(j, c);
            next_slot[m] = j + 1;
        }
        *comms_in_slot.entry(j).or_default() += 1;
    }
    if synthetic {
        slots.iter_mut().for_each(HashMap::clear);
    }

    for r in 0..n {
        let rt = &trace.ranks[r as usize];
        let mut w = RankWriter {
            trace,
            r,
            out: Out::default(),
            counts: vec![0; 291],
            handles: HashMap::new(),
            next_handle: 4,
            next_group: 3,
            groups: HashMap::new(),
            last_group: None,
            requests: HashMap::new(),
            next_request: 2,
            stack: Vec::new(),
            wall_bias: (rt.calls.enters().min().unwrap_or(0) / 1_000_000_000).min(u32::MAX as u64) as u32,
        };
        w.out.0.extend_from_slice(&MAGIC);
        let body = w.out.pos();
        w.out.u32(0);
        w.out.u32(w.wall_bias);

        let calls = &rt.calls;
        let mut posted: HashMap<CallIdx, Vec<usize>> = HashMap::new();
        let mut completed: HashMap<CallIdx, Vec<usize>> = HashMap::new();
        for i in 0..rt.p2p.len() {
            posted.entry(rt.p2p.post[i]).or_default().push(i);
            let c = rt.p2p.complete(i);
            if c != NOT_COMPLETED && c != rt.p2p.post[i] {
                completed.entry(c).or_default().push(i);
            }
        }
        let mut colls: HashMap<CallIdx, usize> = HashMap::new();
        for i in 0..rt.collectives.len() {
            colls.entry(rt.collectives.call[i]).or_insert(i);
        }
        let thread_of = |loc: u16| -> u16 { rt.locations.get(loc as usize).map_or(loc, |l| l.id as u16) };

        let my_slots = &slots[r as usize];
        let mut slot = 0usize;
        if synthetic {
            let t = calls.enter.first().unwrap_or(0);
            let thread = calls.location.first().map_or(0, |&l| thread_of(l));
            for c in 1..trace.comms.len() as CommId {
                if is_self(&trace.comms[c as usize]) {
                    continue;
                }
                let mut a = Args::default();
                a.int("oldcomm", COMM_WORLD);
                match trace.comms[c as usize].local_rank(r) {
                    Some(l) => {
                        let h = w.next_handle;
                        w.next_handle += 1;
                        w.handles.insert(c, h);
                        a.int("color", c as i64).int("key", l as i64).int("newcomm", h);
                    }
                    None => {
                        a.int("color", UNDEFINED).int("key", 0).int("newcomm", COMM_NULL);
                    }
                }
                w.record(call_by_name("Comm_split").expect("table"), thread, t, t, &a);
            }
        }

        for i in 0..calls.len() {
            let name = trace.functions.name(calls.func[i]);
            let (enter, exit) = (calls.enter(i), calls.exit(i));
            let thread = thread_of(calls.location[i]);
            let cp = calls.callpath[i];
            let target: Vec<u32> = trace.callpaths.get(cp as usize).cloned().unwrap_or_default();
            w.move_to_callpath(&target, enter, thread);
            let ops = posted.get(&(i as CallIdx)).cloned().unwrap_or_default();
            let done = completed.get(&(i as CallIdx)).cloned().unwrap_or_default();
            let short = name
                .strip_prefix("MPI_")
                .map(str::to_owned)
                .or_else(|| name.strip_prefix("MPIO_").map(|s| format!("DUMPIO_{s}")))
                .unwrap_or_else(|| name.to_owned());
            let kind = calls.kind[i];
            // Persistent starts that posted operations: one Isend/Irecv record each.
            if matches!(short.as_str(), "Start" | "Startall") && !ops.is_empty() {
                for &op in &ops {
                    let spec = call_by_name(if rt.p2p.dir[op] == P2pDir::Send {
                        "Isend"
                    } else {
                        "Irecv"
                    })
                    .expect("table");
                    let a = p2p_args(&mut w, rt, op, true);
                    w.record(spec, thread, enter, exit, &a);
                }
                continue;
            }
            let Some(mut spec) = call_by_name(&short) else {
                continue;
            };
            let mut a = Args::default();
            match kind {
                CallKind::Send | CallKind::Isend | CallKind::Recv | CallKind::Irecv => {
                    if let Some(&op) = ops.first() {
                        a = p2p_args(&mut w, rt, op, kind == CallKind::Isend || kind == CallKind::Irecv);
                    } else {
                        a.int("dest", PROC_NULL)
                            .int("source", PROC_NULL)
                            .int("request", REQUEST_NULL);
                    }
                }
                CallKind::SendRecv => {
                    let send = ops.iter().copied().find(|&o| rt.p2p.dir[o] == P2pDir::Send);
                    let recv = ops.iter().copied().find(|&o| rt.p2p.dir[o] == P2pDir::Recv);
                    a.int("dest", PROC_NULL).int("source", PROC_NULL);
                    if let Some(o) = send {
                        let c = rt.p2p.comm[o];
                        let h = w.handle(c);
                        let dest = w.local(c, rt.p2p.peer[o]);
                        a.int("sendcount", rt.p2p.bytes.at(o) as i64)
                            .int("count", rt.p2p.bytes.at(o) as i64)
                            .int("sendtype", DT_BYTE)
                            .int("datatype", DT_BYTE)
                            .int("dest", dest)
                            .int("sendtag", rt.p2p.tag[o] as i64)
                            .int("comm", h);
                    }
                    if let Some(o) = recv {
                        let c = rt.p2p.comm[o];
                        let h = w.handle(c);
                        let src = if rt.p2p.peer[o] == ANY_SOURCE {
                            -1
                        } else {
                            w.local(c, rt.p2p.peer[o])
                        };
                        a.int("recvcount", rt.p2p.bytes.at(o) as i64)
                            .int("recvtype", DT_BYTE)
                            .int("source", src)
                            .int(
                                "recvtag",
                                if rt.p2p.tag[o] == ANY_TAG {
                                    -1
                                } else {
                                    rt.p2p.tag[o] as i64
                                },
                            )
                            .int("comm", h);
                        if short == "Sendrecv_replace" && send.is_some_and(|s| rt.p2p.bytes.at(s) != rt.p2p.bytes.at(o))
                        {
                            spec = call_by_name("Sendrecv").expect("table");
                        }
                    }
                }
                CallKind::Completion => {
                    let reqs: Vec<i32> = done.iter().map(|&op| w.request(op) as i32).collect();
                    let k = reqs.len();
                    match short.as_str() {
                        "Wait" | "Test" if k > 1 => {
                            spec = call_by_name(if short == "Wait" { "Waitall" } else { "Testall" }).expect("table");
                        }
                        _ => {}
                    }
                    a.int("request", reqs.first().map_or(REQUEST_NULL, |&q| q as i64))
                        .int("flag", (k > 0) as i64)
                        .int("count", k as i64)
                        .ints("requests", reqs.clone())
                        .int("index", if k > 0 { 0 } else { UNDEFINED })
                        .int("outcount", k as i64)
                        .ints("indices", (0..k as i32).collect());
                    if spec.name.ends_with("any") && k > 1 {
                        spec = call_by_name(if spec.name.starts_with("Wait") {
                            "Waitsome"
                        } else {
                            "Testsome"
                        })
                        .expect("table");
                    }
                }
                CallKind::Collective => {
                    if let Some(&ci) = colls.get(&(i as CallIdx)) {
                        collective_args(&mut w, rt, ci, &mut a);
                    }
                }
                _ => {
                    if CREATORS.contains(&name) {
                        let comm = my_slots.get(&slot).copied();
                        let shared = comms_in_slot.get(&slot).is_some_and(|&k| k > 1);
                        slot += 1;
                        spec = creation_args(&mut w, &short, comm, shared, &mut a);
                    } else {
                        match short.as_str() {
                            "Comm_rank" | "Comm_size" => {
                                a.int("rank", r as i64).int("size", n as i64);
                            }
                            "Comm_group" => {
                                let g = w.next_group;
                                w.next_group += 1;
                                w.groups.insert(g, (0..n).collect());
                                w.last_group = Some(g);
                                a.int("comm", COMM_WORLD).int("group", g);
                            }
                            "Group_incl" => {
                                // Include the members of the next communicator this rank creates.
                                let members = my_slots
                                    .iter()
                                    .filter(|(&s, _)| s >= slot)
                                    .min_by_key(|(&s, _)| s)
                                    .map(|(_, &c)| trace.comms[c as usize].members.clone())
                                    .unwrap_or_default();
                                let base = w.last_group.unwrap_or(0);
                                let base_members = w.groups.get(&base).cloned().unwrap_or_default();
                                let ranks: Vec<i32> = members
                                    .iter()
                                    .filter_map(|m| base_members.iter().position(|b| b == m).map(|p| p as i32))
                                    .collect();
                                let g = w.next_group;
                                w.next_group += 1;
                                w.groups.insert(g, members.clone());
                                w.last_group = Some(g);
                                a.int("group", base)
                                    .int("count", ranks.len() as i64)
                                    .ints("ranks", ranks)
                                    .int("newgroup", g);
                            }
                            "Init" | "Init_thread" => {
                                a.int("argc", 0);
                            }
                            _ => {}
                        }
                    }
                }
            }
            w.record(spec, thread, enter, exit, &a);
        }
        let end = calls.last_exit().unwrap_or(0);
        w.move_to_callpath(&[], end, 0);
        w.out.u16(END_OF_STREAM);

        // Header.
        let header = w.out.pos();
        w.out.u8(VERSION.0);
        w.out.u8(VERSION.1);
        w.out.u8(VERSION.2);
        w.out.u64(start);
        w.out.str16(&hostname);
        w.out.str16(&username);
        w.out.i32(0);
        // Footer: magic, call counts (index 290 = total), ignored counts, no overhead timers.
        let footer = w.out.pos();
        w.out.u64(0xf007_fee7);
        let counts = std::mem::take(&mut w.counts);
        counts.iter().for_each(|&c| w.out.u32(c));
        (0..291).for_each(|_| w.out.u32(0));
        w.out.u32(0);
        // Perf labels (none), datatype sizes, function names.
        let perf = w.out.pos();
        w.out.i32(0);
        let sizes = w.out.pos();
        w.out.i32(BUILTIN_SIZES.len() as i32);
        BUILTIN_SIZES.iter().for_each(|&s| w.out.i32(s));
        let funcs = w.out.pos();
        w.out.i32(trace.regions.len() as i32);
        for (i, name) in trace.regions.names().iter().enumerate() {
            w.out.u64(region_address(i as u32));
            w.out.str16(name);
        }
        w.out.0.extend_from_slice(&MAGIC);
        for off in [sizes, funcs, perf, header, body, footer, 0] {
            w.out.u64(off);
        }
        files.push(InputFile::new(format!("{prefix}-{r:04}.bin"), w.out.0));
    }
    files
}

fn p2p_args(w: &mut RankWriter, rt: &tracelogic_model::RankTrace, op: usize, nonblocking: bool) -> Args {
    let p = &rt.p2p;
    let c = p.comm[op];
    let mut a = Args::default();
    let h = w.handle(c);
    let peer = if p.peer[op] == ANY_SOURCE {
        -1
    } else {
        w.local(c, p.peer[op])
    };
    let tag = if p.dir[op] == P2pDir::Recv && p.tag[op] == ANY_TAG {
        -1
    } else {
        p.tag[op] as i64
    };
    a.int("count", p.bytes.at(op) as i64)
        .int("datatype", DT_BYTE)
        .int("dest", peer)
        .int("source", peer)
        .int("tag", tag)
        .int("comm", h);
    if nonblocking {
        let q = w.request(op);
        a.int("request", q);
    }
    a
}

fn collective_args(w: &mut RankWriter, rt: &tracelogic_model::RankTrace, ci: usize, a: &mut Args) {
    let c = &rt.collectives;
    let comm = c.comm[ci];
    let h = w.handle(comm);
    let n = w.comm_size(comm);
    let (sent, recv) = (c.bytes_sent[ci], c.bytes_recv[ci]);
    let root = if c.root[ci] == tracelogic_model::NO_ROOT {
        0
    } else {
        w.local(comm, c.root[ci])
    };
    let me = w.local(comm, w.r);
    let first = |total: u64| -> Vec<i32> {
        let mut v = vec![0; n as usize];
        v[0] = total as i32;
        v
    };
    a.int("comm", h)
        .int("root", root)
        .int("commrank", me)
        .int("commsize", n as i64)
        .int("datatype", DT_BYTE)
        .int("sendtype", DT_BYTE)
        .int("recvtype", DT_BYTE)
        .int("op", 3);
    match c.op[ci] {
        CollectiveOp::Bcast => {
            a.int("count", sent.max(recv) as i64);
        }
        CollectiveOp::Reduce | CollectiveOp::Allreduce | CollectiveOp::Scan | CollectiveOp::Exscan => {
            a.int("count", sent as i64);
        }
        CollectiveOp::Gather | CollectiveOp::Allgather => {
            a.int("sendcount", sent as i64).int("recvcount", (recv / n) as i64);
        }
        CollectiveOp::Scatter => {
            a.int("sendcount", (sent / n) as i64).int("recvcount", recv as i64);
        }
        CollectiveOp::Alltoall => {
            a.int("sendcount", (sent / n) as i64)
                .int("recvcount", (recv / n) as i64);
        }
        CollectiveOp::Gatherv | CollectiveOp::Allgatherv => {
            a.int("sendcount", sent as i64)
                .ints("recvcounts", first(recv))
                .ints("displs", vec![0; n as usize]);
        }
        CollectiveOp::Scatterv => {
            a.int("recvcount", recv as i64)
                .ints("sendcounts", first(sent))
                .ints("displs", vec![0; n as usize]);
        }
        CollectiveOp::Alltoallv | CollectiveOp::Alltoallw => {
            a.ints("sendcounts", first(sent))
                .ints("recvcounts", first(recv))
                .ints("senddispls", vec![0; n as usize])
                .ints("recvdispls", vec![0; n as usize])
                .ints("sendtypes", vec![DT_BYTE as i32; n as usize])
                .ints("recvtypes", vec![DT_BYTE as i32; n as usize]);
        }
        CollectiveOp::ReduceScatter | CollectiveOp::ReduceScatterBlock => {
            let mut v = vec![0i32; n as usize];
            let mine = me.max(0) as usize;
            if mine < v.len() {
                v[mine] = recv as i32;
            }
            if n > 1 {
                let other = if mine == 0 { 1 } else { 0 };
                v[other] = sent.saturating_sub(recv) as i32;
            }
            a.ints("recvcounts", v);
        }
        CollectiveOp::Barrier | CollectiveOp::Other => {}
    }
}

/// Arguments of a communicator-creating call that introduces `comm` on this rank (`None`: the
/// call gives this rank `MPI_COMM_NULL`). Every creation is written on `MPI_COMM_WORLD` so that
/// the k-th creation call is the same collective on all ranks. `shared`: other communicators
/// are created by the same slot (then only `MPI_Comm_split` can express it).
fn creation_args(
    w: &mut RankWriter,
    short: &str,
    comm: Option<CommId>,
    shared: bool,
    a: &mut Args,
) -> &'static CallSpec {
    let split = call_by_name("Comm_split").expect("table");
    a.int("oldcomm", COMM_WORLD);
    let Some(c) = comm else {
        a.int("color", UNDEFINED).int("newcomm", COMM_NULL).int("group", 2);
        return call_by_name(short).unwrap_or(split);
    };
    let members = w.trace.comms[c as usize].members.clone();
    let h = w.next_handle;
    w.next_handle += 1;
    w.handles.insert(c, h);
    a.int("newcomm", h);
    let all: Vec<Rank> = (0..w.trace.num_ranks()).collect();
    let prefix_of_world = members.iter().enumerate().all(|(i, &m)| m == i as Rank);
    match short {
        "Comm_dup" if members == all => return call_by_name("Comm_dup").expect("table"),
        "Cart_create" | "Graph_create" if prefix_of_world && !shared => {
            // The declared grid when the trace has one, else a 1-D grid / graph over the first
            // ranks of MPI_COMM_WORLD, without reordering.
            let k = members.len() as i32;
            let declared = w.trace.cartesian.iter().find(|t| t.comm == c && !t.coords_recorded);
            let (dims, periods) = match declared {
                Some(t) if short == "Cart_create" => (
                    t.dims.iter().map(|&d| d as i32).collect(),
                    t.periods.iter().map(|&p| p as i32).collect(),
                ),
                _ => (vec![k], vec![0]),
            };
            a.int("ndim", dims.len() as i64)
                .ints("dims", dims)
                .ints("periods", periods)
                .int("nodes", k as i64)
                .ints("index", (0..k).collect())
                .int("numedges", 0);
            return call_by_name(short).expect("table");
        }
        "Comm_create" if !shared => {
            if let Some(g) = w.last_group.filter(|g| w.groups.get(g) == Some(&members)) {
                a.int("group", g);
                return call_by_name("Comm_create").expect("table");
            }
        }
        _ => {}
    }
    let key = members.iter().position(|&m| m == w.r).unwrap_or(0);
    a.int("color", c as i64).int("key", key as i64);
    split
}
