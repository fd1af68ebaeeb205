//! What `tracelogic generate` writes is read identically by the official readers: sst-dumpi's
//! libundumpi (PyPI `pydumpi==0.1.3`) for DUMPI and the OTF2 3.2 library (PyPI `otf2==3.2`) for
//! OTF2. Both see every call, every send and receive with its peer, tag and size, and the
//! generator's clock to the nanosecond.
//!
//! The Python packages are optional locally (the tests print a note and pass without them) and
//! required when `TRACELOGIC_REQUIRE_PY=1` (CI), where a missing package fails the test.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tracelogic_formats::InputFile;
use tracelogic_model::{P2pDir, Trace};
use tracelogic_synth::{generate, Numbering, Phase, Spec, Style, TopologySpec};

/// sst-dumpi's reader: per file, calls per function, sends and receives in record order
/// (`[peer, tag, bytes]`), and each record's wall-clock start and stop (`[s, ns, s, ns]`).
const DUMPI_SCRIPT: &str = r#"
import contextlib, json, os, sys
from pydumpi import DumpiTrace
class Ref(DumpiTrace):
    def __init__(self, path):
        self.calls, self.sends, self.recvs, self.wall = {}, [], [], []
        super().__init__(path)
    def __getattr__(self, attr):
        if not attr.startswith("on_") or attr.startswith("on_function_"):
            raise AttributeError(attr)
        short = attr[3:]
        name = "MPI_" + short[0].upper() + short[1:]
        def callback(data, thread, cpu, wall, perf):
            self.calls[name] = self.calls.get(name, 0) + 1
            self.wall.append([wall.start.sec, wall.start.nsec, wall.stop.sec, wall.stop.nsec])
            size = lambda count, dt: count * self.type_sizes[dt]
            if short in ("send", "isend"):
                self.sends.append([data.dest, data.tag, size(data.count, data.datatype)])
            elif short in ("recv", "irecv"):
                self.recvs.append([data.source, data.tag, size(data.count, data.datatype)])
            elif short == "sendrecv":
                self.sends.append([data.dest, data.sendtag, size(data.sendcount, data.sendtype)])
                self.recvs.append([data.source, data.recvtag, size(data.recvcount, data.recvtype)])
        return callback
out = []
for path in sys.argv[1:]:
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        with Ref(path) as t:
            t.read_stream()
    out.append({"calls": t.calls, "sends": t.sends, "recvs": t.recvs, "wall": t.wall})
print(json.dumps(out))
"#;

/// The OTF2 library's reader: per rank (position of its location in the COMM_LOCATIONS group),
/// region entries per name, entry times in ns, sends and receives (`[peer, tag, bytes]`) and
/// collective ends (`[op, root, sent, received]`).
const OTF2_SCRIPT: &str = r#"
import json, sys, otf2
from collections import Counter
with otf2.reader.open(sys.argv[1]) as tr:
    defs = tr.definitions
    res, off = defs.clock_properties.timer_resolution, defs.clock_properties.global_offset
    world = [g for g in defs.groups if g.group_type == otf2.GroupType.COMM_LOCATIONS][0]
    rank_of = {loc._ref: i for i, loc in enumerate(world.members)}
    out = {}
    for loc, ev in tr.events:
        r = out.setdefault(rank_of[loc._ref], {"enter": [], "regions": Counter(), "sends": [], "recvs": [], "collectives": []})
        n = type(ev).__name__
        if n == "Enter":
            r["regions"][ev.region.name] += 1
            r["enter"].append((ev.time - off) * 1_000_000_000 // res)
        elif n in ("MpiSend", "MpiIsend"):
            r["sends"].append([ev.receiver, ev.msg_tag, ev.msg_length])
        elif n in ("MpiRecv", "MpiIrecv"):
            r["recvs"].append([ev.sender, ev.msg_tag, ev.msg_length])
        elif n == "MpiCollectiveEnd":
            r["collectives"].append([str(ev.collective_op).split(".")[-1], ev.root, ev.size_sent, ev.size_received])
    print(json.dumps([out[k] for k in sorted(out)]))
"#;

/// Every style, idle ranks in a smaller phase, noise and the three collectives, on 16 ranks.
fn spec() -> Spec {
    let phase = |topology: &str, style: Style, bytes: u64| Phase {
        topology: Some(TopologySpec::parse(topology).unwrap()),
        style: Some(style),
        bytes: Some(bytes),
        ..Phase::default()
    };
    Spec {
        numbering: Numbering::Partial(2.0 / 3.0),
        seed: 77,
        iterations: 3,
        imbalance: 0.2,
        noise: Some("0.2:5%".parse().unwrap()),
        collectives: vec![
            "allreduce:2".parse().unwrap(),
            "barrier:3".parse().unwrap(),
            "bcast:3:512".parse().unwrap(),
        ],
        phases: vec![
            phase("stencil6:4x4", Style::Isend, 2048),
            phase("hypercube:3", Style::Sendrecv, 64_000),
            phase("binary-tree:15", Style::Blocking, 40),
            phase("grid:4x4", Style::Wavefront, 900),
        ],
        ..Spec::default()
    }
}

/// True when `python3` can import `module`; without it the test is skipped, unless
/// `TRACELOGIC_REQUIRE_PY=1`, where it fails.
fn python_has(module: &str, pip: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("TRACELOGIC_REQUIRE_PY").as_deref() != Ok("1"),
            "TRACELOGIC_REQUIRE_PY=1 but python3 cannot import {module} (pip install {pip})"
        );
        eprintln!("note: python3 cannot import {module} ({pip}); skipping the cross-check with the official reader");
    }
    ok
}

fn run_python(script: &str, args: &[PathBuf]) -> Value {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "reference reader failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the reference reader prints JSON")
}

fn write_files(dir: &Path, files: &[InputFile]) {
    let _ = std::fs::remove_dir_all(dir);
    for f in files {
        let path = dir.join(&f.name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &f.bytes).unwrap();
    }
}

fn temp_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("tracelogic-e2e-{}-{name}", std::process::id()))
}

fn calls_per_function(trace: &Trace, r: usize) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for &f in &trace.ranks[r].calls.func {
        *m.entry(trace.functions.name(f).to_owned()).or_default() += 1;
    }
    m
}

fn counts(v: &Value) -> BTreeMap<String, u64> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, n)| (k.clone(), n.as_u64().unwrap()))
        .collect()
}

/// `[peer, tag, bytes]` of the rank's operations in one direction, in posting order.
fn ops(trace: &Trace, r: usize, dir: P2pDir) -> Vec<[u64; 3]> {
    let p = &trace.ranks[r].p2p;
    (0..p.len())
        .filter(|&i| p.dir[i] == dir)
        .map(|i| [p.peer[i] as u64, p.tag[i] as u64, p.bytes.at(i)])
        .collect()
}

fn triples(v: &Value) -> Vec<[u64; 3]> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let t = t.as_array().unwrap();
            [0, 1, 2].map(|i| t[i].as_u64().unwrap())
        })
        .collect()
}

#[test]
fn dumpi_output_reads_the_same_in_sst_dumpi() {
    if !python_has("pydumpi", "pydumpi==0.1.3") {
        return;
    }
    let trace = generate(&spec()).unwrap();
    let dir = temp_dir("dumpi");
    let files = tracelogic_formats::dumpi::write(&trace, "gen");
    write_files(&dir, &files);
    let mut bins: Vec<PathBuf> = files
        .iter()
        .filter(|f| f.name.ends_with(".bin"))
        .map(|f| dir.join(&f.name))
        .collect();
    bins.sort();
    let reference = run_python(DUMPI_SCRIPT, &bins);
    let per_rank = reference.as_array().unwrap();
    assert_eq!(per_rank.len(), 16);
    let mut offset = None;
    for (r, got) in per_rank.iter().enumerate() {
        assert_eq!(counts(&got["calls"]), calls_per_function(&trace, r), "rank {r}: calls");
        assert_eq!(triples(&got["sends"]), ops(&trace, r, P2pDir::Send), "rank {r}: sends");
        assert_eq!(
            triples(&got["recvs"]),
            ops(&trace, r, P2pDir::Recv),
            "rank {r}: receives"
        );
        let c = &trace.ranks[r].calls;
        for (i, w) in got["wall"].as_array().unwrap().iter().enumerate() {
            let w: Vec<u64> = w.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
            let (start, stop) = (w[0] * 1_000_000_000 + w[1], w[2] * 1_000_000_000 + w[3]);
            let off = *offset.get_or_insert(start as i128 - c.enter(i) as i128);
            assert_eq!(start as i128 - off, c.enter(i) as i128, "rank {r} call {i}: entry time");
            assert_eq!(stop as i128 - off, c.exit(i) as i128, "rank {r} call {i}: exit time");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn otf2_output_reads_the_same_in_the_otf2_library() {
    if !python_has("otf2", "otf2==3.2") {
        return;
    }
    let trace = generate(&spec()).unwrap();
    let dir = temp_dir("otf2");
    let files = tracelogic_formats::otf2::write(&trace, "gen");
    write_files(&dir, &files);
    let reference = run_python(OTF2_SCRIPT, &[dir.join("gen.otf2")]);
    let per_rank = reference.as_array().unwrap();
    assert_eq!(per_rank.len(), 16);
    let mut offset = None;
    for (r, got) in per_rank.iter().enumerate() {
        assert_eq!(
            counts(&got["regions"]),
            calls_per_function(&trace, r),
            "rank {r}: calls"
        );
        assert_eq!(triples(&got["sends"]), ops(&trace, r, P2pDir::Send), "rank {r}: sends");
        // OTF2 records a non-blocking receive when it completes, so only the multiset is fixed.
        let mut recvs = triples(&got["recvs"]);
        let mut want = ops(&trace, r, P2pDir::Recv);
        recvs.sort_unstable();
        want.sort_unstable();
        assert_eq!(recvs, want, "rank {r}: receives");
        let enters: Vec<u64> = got["enter"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        let c = &trace.ranks[r].calls;
        assert_eq!(enters.len(), c.len(), "rank {r}: entries");
        for (i, &t) in enters.iter().enumerate() {
            let off = *offset.get_or_insert(t as i128 - c.enter(i) as i128);
            assert_eq!(t as i128 - off, c.enter(i) as i128, "rank {r} call {i}: entry time");
        }
        let coll = &trace.ranks[r].collectives;
        let got_coll = got["collectives"].as_array().unwrap();
        assert_eq!(got_coll.len(), coll.len(), "rank {r}: collectives");
        for (i, g) in got_coll.iter().enumerate() {
            let op = g[0].as_str().unwrap().replace('_', "").to_lowercase();
            assert_eq!(
                op,
                format!("{:?}", coll.op[i]).to_lowercase(),
                "rank {r}: collective {i}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `generate --repeat K` (`otf2::write_repeated`): the OTF2 library reads K copies of the run
/// end to end — per rank, K times the calls, sends and receives of one repetition, and entry
/// times that repeat with the period (the run's last time + 1 µs).
#[test]
fn repeated_otf2_output_reads_as_k_runs_in_the_otf2_library() {
    if !python_has("otf2", "otf2==3.2") {
        return;
    }
    let trace = generate(&spec()).unwrap();
    let dir = temp_dir("otf2-repeat");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("gen")).unwrap();
    let k = 3u64;
    tracelogic_formats::otf2::write_repeated(&trace, "gen", k, |name, bytes| std::fs::write(dir.join(name), bytes))
        .unwrap();
    let reference = run_python(OTF2_SCRIPT, &[dir.join("gen.otf2")]);
    let per_rank = reference.as_array().unwrap();
    assert_eq!(per_rank.len(), 16);
    let period = trace.span().1 + 1_000;
    let mut offset = None;
    for (r, got) in per_rank.iter().enumerate() {
        let once = calls_per_function(&trace, r);
        let want: BTreeMap<String, u64> = once.iter().map(|(f, n)| (f.clone(), n * k)).collect();
        assert_eq!(counts(&got["regions"]), want, "rank {r}: calls");
        let sends = ops(&trace, r, P2pDir::Send);
        let want_sends: Vec<[u64; 3]> = (0..k).flat_map(|_| sends.iter().copied()).collect();
        assert_eq!(triples(&got["sends"]), want_sends, "rank {r}: sends");
        assert_eq!(
            triples(&got["recvs"]).len() as u64,
            k * ops(&trace, r, P2pDir::Recv).len() as u64,
            "rank {r}: receives"
        );
        let enters: Vec<u64> = got["enter"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        let c = &trace.ranks[r].calls;
        assert_eq!(enters.len() as u64, k * c.len() as u64, "rank {r}: entries");
        for (i, &t) in enters.iter().enumerate() {
            let (rep, j) = ((i / c.len()) as u64, i % c.len());
            let want = (c.enter(j) + rep * period) as i128;
            let off = *offset.get_or_insert(t as i128 - want);
            assert_eq!(t as i128 - off, want, "rank {r} entry {i}: time");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
