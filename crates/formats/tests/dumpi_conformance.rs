//! Conformance of the low-level DUMPI layer with the official `dumpi2ascii` output.
//!
//! For every rank file of the sst-macro sample traces, the reference dump in `expected/`
//! (written by `dumpi2ascii -H -S -X -f`) is parsed here and compared call by call with the
//! records [`raw::BinFile`] yields: function name, wall and CPU entry/exit times, thread, and
//! every argument `dumpi2ascii` prints; then the header and the datatype size table.

use std::path::{Path, PathBuf};
use tracelogic_formats::dumpi::raw::{BinFile, Interval, Status, Value};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples")
}

/// One call as `dumpi2ascii` printed it.
#[derive(Debug, Default)]
struct Printed {
    name: String,
    wall: (String, String),
    cpu: (String, String),
    thread: (String, String),
    /// (field name without the `[N]` suffix, printed value)
    args: Vec<(String, String)>,
}

#[derive(Debug, Default)]
struct Dump {
    header: Vec<(String, String)>,
    calls: Vec<Printed>,
    sizes: Vec<(usize, i32)>,
}

/// `MPI_Foo entering at walltime 1.5, cputime 0.2 seconds in thread 0.` → (name, wall, cpu, thread)
fn parse_edge(line: &str, verb: &str) -> Option<(String, String, String, String)> {
    let (name, rest) = line.split_once(&format!(" {verb} at walltime "))?;
    let (wall, rest) = rest.split_once(", cputime ")?;
    let (cpu, rest) = rest.split_once(" seconds in thread ")?;
    Some((name.into(), wall.into(), cpu.into(), rest.trim_end_matches('.').into()))
}

fn parse_dump(text: &str) -> Dump {
    let mut d = Dump::default();
    let mut current: Option<Printed> = None;
    for line in text.lines() {
        if let Some((name, wall, cpu, thread)) = parse_edge(line, "entering") {
            assert!(current.is_none(), "nested call in dump at {line}");
            current = Some(Printed {
                name,
                wall: (wall, String::new()),
                cpu: (cpu, String::new()),
                thread: (thread, String::new()),
                args: vec![],
            });
        } else if let Some((name, wall, cpu, thread)) = parse_edge(line, "returning") {
            let mut c = current.take().expect("returning without entering");
            assert_eq!(c.name, name);
            c.wall.1 = wall;
            c.cpu.1 = cpu;
            c.thread.1 = thread;
            d.calls.push(c);
        } else if let Some(rest) = line.strip_prefix("Datatype ") {
            let (id, rest) = rest.split_once(' ').expect("datatype id");
            let size = rest.rsplit(' ').next().expect("size");
            d.sizes.push((id.parse().expect("id"), size.parse().expect("size")));
        } else if let Some(c) = current.as_mut() {
            let (_ty, rest) = line.split_once(' ').expect("typed argument");
            let (name, value) = rest.split_once('=').expect("name=value");
            let name = name.split('[').next().expect("name");
            c.args.push((name.into(), value.into()));
        } else if let Some((k, v)) = line.split_once('=') {
            d.header.push((k.into(), v.into()));
        }
    }
    assert!(current.is_none(), "dump ends inside a call");
    d
}

fn clock(s: u64, ns: u32) -> String {
    format!("{s}.{ns:09}")
}

fn times(iv: Option<Interval>) -> (String, String) {
    let iv = iv.expect("the samples record both clocks");
    (clock(iv.start.sec, iv.start.nsec), clock(iv.stop.sec, iv.stop.nsec))
}

fn render_status(s: &Status) -> String {
    format!(
        "{{bytes={}, cancelled={}, source={}, tag={}, error={}}}",
        s.bytes, s.cancelled, s.source, s.tag, s.error
    )
}

/// Render a decoded value the way `dumpi2ascii` prints it (without the symbolic annotations).
fn render(v: &Value) -> String {
    let list = |items: Vec<String>| format!("[{}]", items.join(", "));
    match v {
        Value::Absent => "<absent>".into(),
        Value::Int(i) => i.to_string(),
        Value::Ints(a) => list(a.iter().map(|x| x.to_string()).collect()),
        Value::IntRows(rows) => list(rows.iter().map(|r| render(&Value::Ints(r.clone()))).collect()),
        Value::Str(s) => format!("\"{s}\""),
        Value::Strs(a) => list(a.iter().map(|s| format!("\"{s}\"")).collect()),
        Value::StrRows(rows) => list(rows.iter().map(|r| render(&Value::Strs(r.clone()))).collect()),
        Value::Statuses(None) => "<NOT RECORDED>".into(),
        Value::Statuses(Some(s)) if s.is_empty() => "<IGNORED>".into(),
        Value::Statuses(Some(s)) => list(s.iter().map(render_status).collect()),
    }
}

/// Drop the ` (MPI_COMM_WORLD)` style annotation and the brackets around a single request.
fn normalise(printed: &str, mine: &Value) -> String {
    let p = match printed.split_once(" (") {
        Some((head, _)) if head.parse::<i64>().is_ok() => head,
        _ => printed,
    };
    match mine {
        Value::Int(_) => p.trim_start_matches('[').trim_end_matches(']').to_owned(),
        _ => p.to_owned(),
    }
}

fn check_rank(bin_path: &Path, dump_path: &Path) -> usize {
    let bytes = std::fs::read(bin_path).expect("sample bin");
    let name = bin_path.display().to_string();
    let file = BinFile::parse(&name, &bytes).expect("sample parses");
    let dump = parse_dump(&std::fs::read_to_string(dump_path).expect("expected dump"));
    let records: Vec<_> = file.records().collect::<Result<_, _>>().expect("records decode");
    assert_eq!(records.len(), dump.calls.len(), "{name}: number of calls");
    for (i, (rec, printed)) in records.iter().zip(&dump.calls).enumerate() {
        let spec = rec.spec();
        let at = format!("{name}: call {i} ({})", printed.name);
        assert_eq!(format!("MPI_{}", spec.name), printed.name, "{at}: function");
        assert_eq!(times(rec.wall), printed.wall, "{at}: wall time");
        assert_eq!(times(rec.cpu), printed.cpu, "{at}: cpu time");
        assert_eq!(rec.thread.to_string(), printed.thread.0, "{at}: thread");
        let present: Vec<(&str, &Value)> = spec
            .fields
            .iter()
            .zip(&rec.args)
            .filter(|(_, v)| **v != Value::Absent)
            .map(|(f, v)| (f.name, v))
            .collect();
        assert_eq!(
            present.len(),
            printed.args.len(),
            "{at}: number of arguments {present:?} vs {:?}",
            printed.args
        );
        for ((field, mine), (pname, pvalue)) in present.iter().zip(&printed.args) {
            assert_eq!(field, pname, "{at}: argument order");
            assert_eq!(render(mine), normalise(pvalue, mine), "{at}: argument {field}");
        }
    }
    // Header.
    let h = &file.header;
    let get = |k: &str| {
        dump.header
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .expect(k)
    };
    assert_eq!(
        get("version"),
        format!("{}.{}.{}", h.version.0, h.version.1, h.version.2)
    );
    assert_eq!(get("hostname"), h.hostname);
    assert_eq!(get("username"), h.username);
    assert_eq!(get("meshdim"), h.mesh_coords.len().to_string());
    assert_eq!(get("meshsize"), render(&Value::Ints(h.mesh_size.clone())));
    assert_eq!(get("meshcrd"), render(&Value::Ints(h.mesh_coords.clone())));
    // Datatype sizes (dumpi2ascii prints the built-in ones).
    assert!(!dump.sizes.is_empty());
    for &(id, size) in &dump.sizes {
        assert_eq!(file.type_sizes.get(id), Some(&size), "{name}: size of datatype {id}");
    }
    records.len()
}

fn check_sample(folder: &str, stem: &str, ranks: usize) -> usize {
    let dir = samples().join(folder);
    (0..ranks)
        .map(|r| {
            let bin = dir.join(format!("{stem}-{r:04}.bin"));
            let dump = dir.join("expected").join(format!("{stem}-{r:04}.dumpi2ascii.txt"));
            check_rank(&bin, &dump)
        })
        .sum()
}

#[test]
fn testtrace_matches_dumpi2ascii_call_by_call() {
    let calls = check_sample("sstmacro-dumpi-testtrace", "testtrace", 4);
    assert_eq!(calls, 4 * 9);
}

#[test]
fn testbgp_matches_dumpi2ascii_call_by_call() {
    let calls = check_sample("sstmacro-dumpi-testbgp", "testbgp", 7);
    assert_eq!(calls, 7 * 227);
}

#[test]
fn worked_example_of_formats_md() {
    // testtrace-0000.bin @0x10: Init with argc 1 and argv "./mpi", then Comm_rank(WORLD) = 0.
    let bytes = std::fs::read(samples().join("sstmacro-dumpi-testtrace/testtrace-0000.bin")).expect("sample");
    let file = BinFile::parse("testtrace-0000.bin", &bytes).expect("parses");
    assert_eq!(file.wall_bias, 1296777956);
    let mut records = file.records();
    let init = records.next().expect("a record").expect("decodes");
    assert_eq!((init.offset, init.call, init.mask, init.thread), (0x10, 124, 0x4f, 0));
    assert_eq!(init.int("argc"), Some(1));
    assert_eq!(init.arg("argv"), Some(&Value::Strs(vec!["./mpi".into()])));
    let rank = records.next().expect("a record").expect("decodes");
    assert_eq!(rank.spec().name, "Comm_rank");
    assert_eq!((rank.int("comm"), rank.int("rank")), (Some(2), Some(0)));
}

#[path = "dumpi_builder.rs"]
mod builder;

/// Encode one value of every field kind with non-trivial content (arrays of two, statuses).
fn sample_field(kind: tracelogic_formats::dumpi::spec::FieldKind, argc: i32, out: &mut Vec<builder::A>) {
    use builder::A;
    use tracelogic_formats::dumpi::spec::FieldKind as K;
    match kind {
        K::I32 => out.push(A::I(2)),
        K::U16 => out.push(A::H(3)),
        K::U8 => out.push(A::B(1)),
        K::U64 => out.push(A::L(0x1_0000_0002)),
        K::I32Arr | K::I32ArrSince(..) => out.push(A::Arr(vec![5, -6])),
        K::U16Arr => {
            out.push(A::I(2));
            out.extend([A::H(4), A::H(5)]);
        }
        K::U8Arr => {
            out.push(A::I(2));
            out.extend([A::B(6), A::B(7)]);
        }
        K::I32Arr2 => {
            out.push(A::I(2));
            out.push(A::Arr(vec![1, 2, 3]));
            out.push(A::Arr(vec![4]));
        }
        K::Str => out.push(A::S("ab")),
        K::StrArr => {
            out.push(A::I(2));
            out.extend([A::S("ab"), A::S("c")]);
        }
        K::StrArr2 => {
            out.push(A::I(2));
            out.extend([A::I(1), A::S("ab"), A::I(2), A::S("c"), A::S("d")]);
        }
        K::Status | K::Statuses => out.push(A::St(vec![(8, 1, 3), (16, 0, 4)])),
        K::Argv => (0..argc).for_each(|_| out.push(A::S("arg"))),
    }
}

#[test]
fn every_call_layout_decodes_and_agrees_with_libundumpi() {
    use tracelogic_formats::dumpi::spec::{FieldKind, CALLS};
    let mut bin = builder::Bin::default();
    let mut ids = Vec::new();
    for (k, spec) in CALLS.iter().filter(|c| c.id < 290).enumerate() {
        let mut args = Vec::new();
        for f in spec.fields {
            sample_field(f.kind, 2, &mut args);
        }
        bin.call(spec.id, k as u64, &args);
        ids.push(spec.id);
    }
    let bytes = bin.finish();
    let file = BinFile::parse("all.bin", &bytes).expect("parses");
    let records: Vec<_> = file.records().collect::<Result<_, _>>().expect("every call decodes");
    assert_eq!(records.iter().map(|r| r.call).collect::<Vec<_>>(), ids);
    for r in &records {
        for (f, v) in r.spec().fields.iter().zip(&r.args) {
            let want = match f.kind {
                FieldKind::I32 => Value::Int(2),
                FieldKind::U16 => Value::Int(3),
                FieldKind::U8 => Value::Int(1),
                FieldKind::U64 => Value::Int(0x1_0000_0002),
                FieldKind::I32Arr | FieldKind::I32ArrSince(..) => Value::Ints(vec![5, -6]),
                FieldKind::U16Arr => Value::Ints(vec![4, 5]),
                FieldKind::U8Arr => Value::Ints(vec![6, 7]),
                FieldKind::I32Arr2 => Value::IntRows(vec![vec![1, 2, 3], vec![4]]),
                FieldKind::Str => Value::Str("ab".into()),
                FieldKind::StrArr => Value::Strs(vec!["ab".into(), "c".into()]),
                FieldKind::StrArr2 => Value::StrRows(vec![vec!["ab".into()], vec!["c".into(), "d".into()]]),
                FieldKind::Status | FieldKind::Statuses => Value::Statuses(Some(vec![
                    Status {
                        bytes: 8,
                        source: 1,
                        cancelled: 0,
                        error: 0,
                        tag: 3,
                    },
                    Status {
                        bytes: 16,
                        source: 0,
                        cancelled: 0,
                        error: 0,
                        tag: 4,
                    },
                ])),
                FieldKind::Argv => Value::Strs(vec!["arg".into(), "arg".into()]),
            };
            assert_eq!(v, &want, "{} field {}", r.spec().name, f.name);
        }
    }
    // The official parser must walk the same stream record by record.
    let required = std::env::var("TRACELOGIC_REQUIRE_PY").is_ok_and(|v| v == "1");
    let has = std::process::Command::new("python3")
        .args(["-c", "import pydumpi"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        assert!(!required, "TRACELOGIC_REQUIRE_PY=1 but python3 cannot import pydumpi");
        eprintln!("note: pydumpi not installed; libundumpi does not check the call layouts");
        return;
    }
    let dir = std::env::temp_dir().join(format!("tracelogic-dumpi-layouts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("all-0000.bin");
    std::fs::write(&path, &bytes).expect("write");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/dumpi_reference.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(&path)
        .output()
        .expect("python3");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let counted: u64 = json[0]["calls"]
        .as_object()
        .expect("calls")
        .values()
        .map(|v| v.as_u64().expect("n"))
        .sum();
    assert_eq!(
        counted,
        ids.len() as u64,
        "libundumpi saw {counted} of {} records",
        ids.len()
    );
    // libundumpi decodes the send arguments where we put them: 8 sends and one Sendrecv, each
    // count 2 of datatype 3 (MPI_SIGNED_CHAR, 1 byte) to destination 2 on communicator 3.
    let sent = json[0]["sent"].as_object().expect("sent");
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent["3:2"].as_u64(), Some(18));
}
