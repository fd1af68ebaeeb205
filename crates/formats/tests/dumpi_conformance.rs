//! Conformance of the low-level DUMPI layer with the official `dumpi2ascii` output.
//!
//! For every rank file of the sst-macro sample traces, the reference dump in `expected/`
//! (written by `dumpi2ascii -H -S -X -f`) is parsed here and compared call by call with the
//! records [`raw::BinFile`] yields: function name, wall and CPU entry/exit times, thread, and
//! every argument `dumpi2ascii` prints; then the header and the datatype size table.

use std::path::{Path, PathBuf};
use tracelogic_formats::dumpi::raw::{BinFile, Interval, Status, Value};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/samples")
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
