//! Conformance of the low-level OTF2 layer with the official reader: the events of each sample
//! archive, rendered in the text format of `shared/docs/tools/otf2_reference_dump.py`, must equal
//! the dump the OTF2 3.2 library produced (`expected/otf2-3.2-reader-dump.txt`) line by line; for
//! the multi-chunk sample, the summary of `otf2_reference_summary.py`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use tracelogic_formats::otf2::defs::GlobalDefs;
use tracelogic_formats::otf2::events::{Event, EventKind, Value};
use tracelogic_formats::otf2::Archive;
use tracelogic_formats::InputFile;

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/samples")
}

/// Every file of a sample folder except the reference dumps, named relative to the folder.
fn load(sample: &str) -> Vec<InputFile> {
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
    let root = samples().join(sample);
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Python's `repr` of a str (quotes chosen as Python does; escapes for the usual controls).
fn py_str(s: &str) -> String {
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
fn py_float(v: f64) -> String {
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
        let m = if m.contains('.') { m.to_string() } else { m.to_string() };
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
fn render(d: &GlobalDefs, loc: u64, e: &Event) -> String {
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
fn dump(files: &[InputFile]) -> Vec<String> {
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
        let members: Vec<String> = g.members.iter().map(|m| m.to_string()).collect();
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

fn assert_same_lines(ours: &[String], expected_path: &Path) {
    let expected = std::fs::read_to_string(expected_path).unwrap();
    let expected: Vec<&str> = expected.lines().collect();
    for (i, (a, b)) in ours.iter().zip(&expected).enumerate() {
        assert_eq!(a, b, "line {} of {} differs", i + 1, expected_path.display());
    }
    assert_eq!(
        ours.len(),
        expected.len(),
        "line count differs from {}",
        expected_path.display()
    );
}

fn check_dump(sample: &str) {
    let files = load(sample);
    let ours = dump(&files);
    assert_same_lines(&ours, &samples().join(sample).join("expected/otf2-3.2-reader-dump.txt"));
}

#[test]
fn score_p_ping_pong_matches_the_official_reader() {
    check_dump("pipit-ping-pong-otf2");
}

#[test]
fn score_p_ping_pong_with_papi_metrics_matches_the_official_reader() {
    check_dump("pipit-ping-pong-otf2-papi");
}

#[test]
fn pyotf2_four_rank_archive_matches_the_official_reader() {
    check_dump("pyotf2-generated-4rank");
}

#[test]
fn multichunk_archive_matches_the_official_summary() {
    let files = load("pyotf2-generated-multichunk");
    let a = Archive::open(&files).unwrap();
    let d = &a.defs;
    let mut out = vec!["# produced by PyPI otf2 3.2 reader".to_string()];
    let mut counts: BTreeMap<u64, BTreeMap<&str, u64>> = BTreeMap::new();
    let mut tsum: HashMap<u64, u64> = HashMap::new();
    let mut lsum: HashMap<u64, u64> = HashMap::new();
    let mut idx: HashMap<u64, u64> = HashMap::new();
    for item in a.merged_events().unwrap() {
        let (l, e) = item.unwrap();
        let (name, extra, len) = match &e.kind {
            EventKind::Enter { region } => (
                "Enter",
                format!(" region={}", d.string(d.regions.get(*region).unwrap().name)),
                0,
            ),
            EventKind::Leave { region } => (
                "Leave",
                format!(" region={}", d.string(d.regions.get(*region).unwrap().name)),
                0,
            ),
            EventKind::MpiSend {
                receiver, tag, length, ..
            } => (
                "MpiSend",
                format!(" receiver={receiver} tag={tag} len={length}"),
                *length,
            ),
            other => panic!("unexpected event {other:?}"),
        };
        *counts.entry(l).or_default().entry(name).or_default() += 1;
        *tsum.entry(l).or_default() += e.time;
        *lsum.entry(l).or_default() += len;
        let i = idx.entry(l).or_default();
        if *i % 997 == 0 {
            out.push(format!("sample loc={l} index={i} t={} {name}{extra}", e.time));
        }
        *i += 1;
    }
    for (l, c) in &counts {
        let c: Vec<String> = c.iter().map(|(k, v)| format!("'{k}': {v}")).collect();
        out.push(format!(
            "location {l} total={} counts={{{}}} sum_time={} sum_msg_length={}",
            idx[l],
            c.join(", "),
            tsum[l],
            lsum[l]
        ));
    }
    let expected = samples().join("pyotf2-generated-multichunk/expected");
    let path = std::fs::read_dir(&expected).unwrap().next().unwrap().unwrap().path();
    assert_same_lines(&out, &path);
    // The sample exists to cross a chunk boundary: make sure it does.
    for l in &a.locations {
        let evt = &a.files[l.evt.unwrap()];
        assert!(
            evt.bytes.len() as u64 > a.anchor.chunk_size_events,
            "{} fits in one chunk",
            evt.name
        );
    }
}

#[test]
fn python_float_repr_matches_python() {
    assert_eq!(py_float(1.0), "1.0");
    assert_eq!(py_float(0.1), "0.1");
    assert_eq!(py_float(1e16), "1e+16");
    assert_eq!(py_float(1.5e-7), "1.5e-07");
    assert_eq!(py_str("it's"), "\"it's\"");
}
