//! Helpers shared by the OTF2 tests (included with `#[path]`): sample loading, the text
//! rendering of `otf2_reference_dump.py`, temporary archives and the Python `otf2` package.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tracelogic_formats::otf2::defs::GlobalDefs;
use tracelogic_formats::otf2::events::{Event, EventKind, Value};
use tracelogic_formats::otf2::Archive;
use tracelogic_formats::InputFile;

pub fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples")
}

/// Every file of a sample folder except the reference dumps, named relative to the folder.
pub fn load(sample: &str) -> Vec<InputFile> {
    load_dir(&samples().join(sample))
}

/// Python's `repr` of a str (quotes chosen as Python does; escapes for the usual controls).
pub fn py_str(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from(q);
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

/// Python's `repr` of a float.
pub fn py_float(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{v:?}");
    let exp = if v == 0.0 { 0 } else { v.abs().log10().floor() as i32 };
    if (-4..16).contains(&exp) {
        s
    } else {
        let e = format!("{v:e}");
        let (m, x) = e.split_once('e').unwrap();
        let x: i32 = x.parse().unwrap();
        format!("{m}e{}{:02}", if x < 0 { '-' } else { '+' }, x.abs())
    }
}

const REGION_ROLES: &[&str] = &[
    "UNKNOWN",
    "FUNCTION",
    "WRAPPER",
    "LOOP",
    "CODE",
    "PARALLEL",
    "SECTIONS",
    "SECTION",
    "WORKSHARE",
    "SINGLE",
    "SINGLE_SBLOCK",
    "MASTER",
    "CRITICAL",
    "CRITICAL_SBLOCK",
    "ATOMIC",
    "BARRIER",
    "IMPLICIT_BARRIER",
    "FLUSH",
    "ORDERED",
    "ORDERED_SBLOCK",
    "TASK",
    "TASK_CREATE",
    "TASK_WAIT",
    "COLL_ONE2ALL",
    "COLL_ALL2ONE",
    "COLL_ALL2ALL",
    "COLL_OTHER",
    "FILE_IO",
    "POINT2POINT",
    "RMA",
    "DATA_TRANSFER",
    "ARTIFICIAL",
    "THREAD_CREATE",
    "THREAD_WAIT",
    "TASK_UNTIED",
    "ALLOCATE",
    "DEALLOCATE",
    "REALLOCATE",
    "FILE_IO_METADATA",
    "CANCEL",
    "KERNEL",
];
const PARADIGMS: &[&str] = &[
    "UNKNOWN",
    "USER",
    "COMPILER",
    "OPENMP",
    "MPI",
    "CUDA",
    "MEASUREMENT_SYSTEM",
    "PTHREAD",
    "HMPP",
    "OMPSS",
    "HARDWARE",
    "GASPI",
    "UPC",
    "SHMEM",
    "WINTHREAD",
    "QTTHREAD",
    "ACETHREAD",
    "TBBTHREAD",
    "OPENACC",
    "OPENCL",
    "MTAPI",
    "SAMPLING",
    "NONE",
    "HIP",
    "KOKKOS",
    "OPENMP_TARGET",
];
const GROUP_TYPES: &[&str] = &[
    "UNKNOWN",
    "LOCATIONS",
    "REGIONS",
    "METRIC",
    "COMM_LOCATIONS",
    "COMM_GROUP",
    "COMM_SELF",
    "COMM_LOCATION_GROUPS",
];
const LOCATION_TYPES: &[&str] = &["UNKNOWN", "CPU_THREAD", "ACCELERATOR_STREAM", "METRIC"];
const LOCATION_GROUP_TYPES: &[&str] = &["UNKNOWN", "PROCESS", "ACCELERATOR"];
const COLLECTIVE_OPS: &[&str] = &[
    "BARRIER",
    "BCAST",
    "GATHER",
    "GATHERV",
    "SCATTER",
    "SCATTERV",
    "ALLGATHER",
    "ALLGATHERV",
    "ALLTOALL",
    "ALLTOALLV",
    "ALLTOALLW",
    "ALLREDUCE",
    "REDUCE",
    "REDUCE_SCATTER",
    "SCAN",
    "EXSCAN",
    "REDUCE_SCATTER_BLOCK",
    "CREATE_HANDLE",
    "DESTROY_HANDLE",
    "ALLOCATE",
    "DEALLOCATE",
    "CREATE_HANDLE_AND_ALLOCATE",
    "DESTROY_HANDLE_AND_DEALLOCATE",
];

fn enum_name(class: &str, names: &[&str], v: u8) -> String {
    match names.get(v as usize) {
        Some(n) => format!("{class}.{n}"),
        None => format!("{class}({v})"),
    }
}

fn region_ref(d: &GlobalDefs, id: u32) -> String {
    let name = d.regions.get(id).map(|r| d.string(r.name)).unwrap_or("");
    format!("Region#{id}({name})")
}

fn comm_ref(d: &GlobalDefs, id: u32) -> String {
    let name = d.comms.get(id).map(|c| d.string(c.name)).unwrap_or("");
    format!("Comm#{id}({name})")
}

fn value(v: Value) -> String {
    match v {
        Value::Unsigned(u) => u.to_string(),
        Value::Signed(i) => i.to_string(),
        Value::Float(f) => py_float(f),
        Value::Ref(_, r) => r.to_string(),
    }
}

/// One event as `otf2_reference_dump.py` prints it.
pub fn render(d: &GlobalDefs, loc: u64, e: &Event) -> String {
    let mut f: Vec<String> = Vec::new();
    if !e.attributes.is_empty() {
        let attrs: Vec<String> = e
            .attributes
            .iter()
            .map(|a| {
                let name = d.attributes.get(a.attribute).map(|x| d.string(x.name)).unwrap_or("");
                format!("{name}:{}", value(a.value))
            })
            .collect();
        f.push(format!("attributes={{{}}}", attrs.join(",")));
    }
    let p2p = |f: &mut Vec<String>, peer_field: &str, peer: u32, comm: u32, tag: u32, length: u64| {
        f.push(format!("{peer_field}={peer}"));
        f.push(format!("communicator={}", comm_ref(d, comm)));
        f.push(format!("msg_tag={tag}"));
        f.push(format!("msg_length={length}"));
    };
    let name = match &e.kind {
        EventKind::Enter { region } => {
            f.push(format!("region={}", region_ref(d, *region)));
            "Enter"
        }
        EventKind::Leave { region } => {
            f.push(format!("region={}", region_ref(d, *region)));
            "Leave"
        }
        EventKind::MpiSend {
            receiver,
            comm,
            tag,
            length,
        } => {
            p2p(&mut f, "receiver", *receiver, *comm, *tag, *length);
            "MpiSend"
        }
        EventKind::MpiRecv {
            sender,
            comm,
            tag,
            length,
        } => {
            p2p(&mut f, "sender", *sender, *comm, *tag, *length);
            "MpiRecv"
        }
        EventKind::MpiIsend {
            receiver,
            comm,
            tag,
            length,
            request,
        } => {
            p2p(&mut f, "receiver", *receiver, *comm, *tag, *length);
            f.push(format!("request_id={request}"));
            "MpiIsend"
        }
        EventKind::MpiIrecv {
            sender,
            comm,
            tag,
            length,
            request,
        } => {
            p2p(&mut f, "sender", *sender, *comm, *tag, *length);
            f.push(format!("request_id={request}"));
            "MpiIrecv"
        }
        EventKind::MpiIsendComplete { request } => {
            f.push(format!("request_id={request}"));
            "MpiIsendComplete"
        }
        EventKind::MpiIrecvRequest { request } => {
            f.push(format!("request_id={request}"));
            "MpiIrecvRequest"
        }
        EventKind::MpiCollectiveBegin => "MpiCollectiveBegin",
        EventKind::MpiCollectiveEnd {
            op,
            comm,
            root,
            sent,
            received,
        } => {
            f.push(format!(
                "collective_op={}",
                enum_name("CollectiveOp", COLLECTIVE_OPS, *op)
            ));
            f.push(format!("communicator={}", comm_ref(d, *comm)));
            f.push(format!("root={root}"));
            f.push(format!("size_sent={sent}"));
            f.push(format!("size_received={received}"));
            "MpiCollectiveEnd"
        }
        EventKind::Metric { metric, values } => {
            let kind = if d.metric_classes.get(*metric).is_some() {
                "MetricClass"
            } else {
                "MetricInstance"
            };
            f.push(format!("metric={kind}#{metric}()"));
            let vals: Vec<String> = values
                .iter()
                .map(|&(ty, raw)| match ty {
                    8 => (raw as i64).to_string(),
                    10 => py_float(f64::from_bits(raw)),
                    _ => raw.to_string(),
                })
                .collect();
            f.push(format!("values=[{}]", vals.join(",")));
            "Metric"
        }
        EventKind::ProgramBegin { name, arguments } => {
            f.push(format!("program_name={}", py_str(d.string(*name))));
            let args: Vec<String> = arguments.iter().map(|a| py_str(d.string(*a))).collect();
            f.push(format!("program_arguments=[{}]", args.join(",")));
            "ProgramBegin"
        }
        EventKind::ProgramEnd { exit_status } => {
            f.push(format!("exit_status={exit_status}"));
            "ProgramEnd"
        }
        other => panic!("the samples hold no {other:?} events; extend the renderer first"),
    };
    format!("event loc={loc} t={} {name} {}", e.time, f.join(" "))
}

/// The full reference dump of an archive.
pub fn dump(files: &[InputFile]) -> Vec<String> {
    let a = Archive::open(files).expect("archive opens");
    let d = &a.defs;
    let mut out = vec![
        "# produced by PyPI otf2 3.2 reader; times are raw ticks after the library's clock-offset correction"
            .to_string(),
    ];
    let c = &d.clock;
    out.push(format!(
        "clock_properties timer_resolution={} global_offset={} trace_length={}",
        c.timer_resolution, c.global_offset, c.trace_length
    ));
    for l in &d.locations.items {
        let g = d.location_groups.get(l.group).unwrap();
        out.push(format!(
            "location {} name={} type={} group=LocationGroup#{}({}) events={}",
            l.id,
            py_str(d.string(l.name)),
            enum_name("LocationType", LOCATION_TYPES, l.kind),
            g.id,
            d.string(g.name),
            l.number_of_events
        ));
    }
    for g in &d.location_groups.items {
        out.push(format!(
            "location_group {} name={} type={}",
            g.id,
            py_str(d.string(g.name)),
            enum_name("LocationGroupType", LOCATION_GROUP_TYPES, g.kind)
        ));
    }
    for g in &d.groups.items {
        // The Python wrapper shows COMM_GROUP members (ranks) as the locations they stand for.
        let locations = d.groups.items.iter().find(|l| l.kind == 4 && l.paradigm == g.paradigm);
        let members: Vec<String> = g
            .members
            .iter()
            .map(|&m| match (g.kind, locations) {
                (5, Some(l)) => l.members.get(m as usize).copied().unwrap_or(m).to_string(),
                _ => m.to_string(),
            })
            .collect();
        out.push(format!(
            "group {} name={} type={} paradigm={} members=[{}]",
            g.id,
            py_str(d.string(g.name)),
            enum_name("GroupType", GROUP_TYPES, g.kind),
            enum_name("Paradigm", PARADIGMS, g.paradigm),
            members.join(", ")
        ));
    }
    for cm in &d.comms.items {
        let g = d.groups.get(cm.group).unwrap();
        out.push(format!(
            "comm {} name={} group=Group#{}({})",
            cm.id,
            py_str(d.string(cm.name)),
            g.id,
            d.string(g.name)
        ));
    }
    for r in &d.regions.items {
        out.push(format!(
            "region {} name={} role={} paradigm={}",
            r.id,
            py_str(d.string(r.name)),
            enum_name("RegionRole", REGION_ROLES, r.role),
            enum_name("Paradigm", PARADIGMS, r.paradigm)
        ));
    }
    let mut n = 0;
    for item in a.merged_events().expect("event files open") {
        let (loc, e) = item.expect("event decodes");
        out.push(render(d, loc, &e));
        n += 1;
    }
    out.push(format!("# {n} events"));
    out
}

/// Every file under `root` (recursively) named relative to it, skipping `expected/`.
pub fn load_dir(root: &Path) -> Vec<InputFile> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<InputFile>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            if p.is_dir() {
                if rel != "expected" {
                    walk(root, &p, out);
                }
            } else {
                out.push(InputFile::new(rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// A fresh empty directory under the system temp dir, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("tracelogic-otf2-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Write in-memory files below `dir`.
pub fn store(dir: &Path, files: &[InputFile]) {
    for f in files {
        let p = dir.join(&f.name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, &f.bytes).unwrap();
    }
}

/// True when `python3` can import `otf2`. Without it the caller skips, unless
/// `TRACELOGIC_REQUIRE_PY=1` (CI), where a missing package fails the test.
pub fn python_otf2_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import otf2"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        if std::env::var("TRACELOGIC_REQUIRE_PY").as_deref() == Ok("1") {
            panic!("TRACELOGIC_REQUIRE_PY=1 but python3 cannot import otf2 (pip install otf2==3.2)");
        }
        eprintln!("note: python3 with otf2==3.2 not found; skipping the check against the official library");
    }
    ok
}

/// Path of a tool script in `tests/tools`.
pub fn tool(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools").join(name)
}

/// Run `python3 script args...`, panicking with its stderr on failure.
pub fn run_python(script: &Path, args: &[&Path]) {
    let out = Command::new("python3")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{} failed: {}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Count events per (location, event type) with our low-level reader.
pub fn count_events(files: &[InputFile]) -> HashMap<(u64, String), u64> {
    let a = Archive::open(files).unwrap();
    let mut m = HashMap::new();
    for item in a.merged_events().unwrap() {
        let (l, e) = item.unwrap();
        let name = format!("{:?}", e.kind);
        let name = name.split([' ', '{']).next().unwrap().to_string();
        *m.entry((l, name)).or_default() += 1;
    }
    m
}
