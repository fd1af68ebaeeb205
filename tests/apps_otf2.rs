//! Real programs recorded in OTF2 (tests/data/apps/otf2-*: LAMMPS, hpcc and NAS, traced with
//! tools/otf2-tracer, which writes through the official OTF2 library in Score-P's layout:
//! communicator-local ranks, local communicator ids behind mapping tables, Cartesian topologies as
//! definitions). Each is the same program, input and rank count as a run recorded with SST DUMPI
//! (its "twin"), so every analysis must say the same of both: the two tracers, formats and readers
//! are independent, and the programs are deterministic in what they send (the message counts and
//! bytes of the twins are equal, asserted first). The counts against the official reader
//! `otf2-print` are in tests/apps_summary.rs.

mod common;
use common::{code, json, run, stderr};

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// The trace file or folder of a recorded run.
fn trace(rel: &str) -> PathBuf {
    let d = data(rel);
    ["trace.tar.zst", "dumpi.tar.zst"]
        .iter()
        .map(|f| d.join(f))
        .find(|p| p.exists())
        .unwrap_or(d)
}

fn cli(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Value {
    let o = run(args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    json(&o)
}

/// The pairs that exchange messages (either direction), from `matrix --json`'s `entries`.
fn pairs(t: &Path) -> BTreeSet<(u64, u64)> {
    let m = cli(&[&"matrix", &t, &"--json"]);
    m["entries"]
        .as_array()
        .expect("matrix entries")
        .iter()
        .map(|e| {
            let (a, b) = (e[0].as_u64().unwrap(), e[1].as_u64().unwrap());
            (a.min(b), a.max(b))
        })
        .collect()
}

struct Facts {
    messages: u64,
    bytes: u64,
    pairs: BTreeSet<(u64, u64)>,
    topology: String,
    compressed: u64,
    structure_exact: bool,
    bytes_exact: bool,
    patterns: u64,
    phases: usize,
    collective_ops: u64,
    collective_bytes: u64,
}

fn facts(t: &Path) -> Facts {
    let s = cli(&[&"summary", &t, &"--json"]);
    let l = cli(&[&"logical", &t, &"--json", &"--compress"]);
    let p = cli(&[&"patterns", &t, &"--json"]);
    let ph = cli(&[&"phases", &t, &"--json"]);
    let v = &l["verification"];
    Facts {
        messages: s["p2p_messages"].as_u64().unwrap(),
        bytes: s["p2p_bytes"].as_u64().unwrap(),
        pairs: pairs(t),
        topology: l["topology"]["label"].as_str().unwrap_or("").to_string(),
        compressed: l["compressed_length"].as_u64().unwrap(),
        structure_exact: v["ranks_structure_differs"].as_array().unwrap().is_empty(),
        bytes_exact: v["ranks_bytes_differ"].as_array().unwrap().is_empty(),
        patterns: p["shown_patterns"].as_u64().unwrap() + p["hidden_patterns"].as_u64().unwrap(),
        phases: ph["phases"].as_array().unwrap().len(),
        collective_ops: s["collective_ops"].as_u64().unwrap(),
        collective_bytes: s["collective_bytes"].as_u64().unwrap(),
    }
}

/// Everything the analyses say of the OTF2 run equals what they say of its DUMPI twin.
fn same_as_twin(otf2: &str, dumpi: &str) {
    same_as_twin_but(otf2, dumpi, true)
}

/// [`same_as_twin`], the phase count compared only when `phases` is true.
fn same_as_twin_but(otf2: &str, dumpi: &str, phases: bool) {
    let (a, b) = (facts(&trace(otf2)), facts(&trace(dumpi)));
    eprintln!(
        "{otf2}: {} messages, {} bytes, {} pairs, {}, compressed {}, {} patterns, {} phases (twin: {}, {}, {}, {}, {}, {}, {})",
        a.messages, a.bytes, a.pairs.len(), a.topology, a.compressed, a.patterns, a.phases,
        b.messages, b.bytes, b.pairs.len(), b.topology, b.compressed, b.patterns, b.phases
    );
    assert_eq!(
        (a.messages, a.bytes),
        (b.messages, b.bytes),
        "{otf2}: the twins differ in what they send"
    );
    assert_eq!(a.pairs, b.pairs, "{otf2}: communicating pairs");
    assert_eq!(a.topology, b.topology, "{otf2}: topology");
    assert!(a.structure_exact && a.bytes_exact, "{otf2}: logical trace not exact");
    assert_eq!(a.compressed, b.compressed, "{otf2}: compressed logical trace");
    assert_eq!(a.patterns, b.patterns, "{otf2}: communication patterns");
    if phases {
        assert_eq!(a.phases, b.phases, "{otf2}: phases");
    }
    // The same collectives carry the same buffers: DUMPI records the calls' counts, the OTF2
    // tracer Score-P's totals (an MPI_Allreduce of b bytes on N ranks as N·b), read back as the
    // calls' buffers.
    if a.collective_ops == b.collective_ops {
        assert_eq!(a.collective_bytes, b.collective_bytes, "{otf2}: collective bytes");
    }
}

#[test]
fn collective_bytes_are_the_calls_buffers_in_both_formats() {
    for (otf2, dumpi) in [
        ("apps/otf2-npb-bt.S.9", "samples/npb-bt.S.9"),
        ("apps/otf2-npb-lu.S.8", "samples/npb-lu.S.8"),
        ("apps/otf2-npb-mg.S.8", "samples/npb-mg.S.8"),
        ("apps/otf2-hpcc-4", "apps/hpcc-4"),
    ] {
        let (a, b) = (
            cli(&[&"summary", &trace(otf2), &"--json"]),
            cli(&[&"summary", &trace(dumpi), &"--json"]),
        );
        assert_eq!(a["collective_ops"], b["collective_ops"], "{otf2}: collectives");
        assert!(
            b["collective_bytes"].as_u64().unwrap() > 0,
            "{dumpi}: no collective bytes"
        );
        assert_eq!(a["collective_bytes"], b["collective_bytes"], "{otf2}: collective bytes");
    }
}

#[test]
fn lammps_on_a_declared_cartesian_grid_reads_as_its_dumpi_twin() {
    same_as_twin("apps/otf2-lammps-melt-8", "apps/lammps-melt-8");
    // The grid LAMMPS declares (log.lammps: "2 by 2 by 2 MPI processor grid") comes from the
    // trace's CartTopology definitions.
    let t = cli(&[&"topology", &trace("apps/otf2-lammps-melt-8"), &"--json"]);
    let text = t.to_string();
    assert!(
        text.contains("2x2x2 torus"),
        "declared grid missing: {}",
        &text[..text.len().min(2000)]
    );
}

#[test]
fn lammps_with_a_non_cartesian_rank_map_reads_as_its_dumpi_twin() {
    same_as_twin("apps/otf2-lammps-melt-12-xzy", "apps/lammps-melt-12-xzy");
}

/// NAS BT, LU and MG class S: NPB 3.4 recorded in OTF2 against NPB 3.3.1 recorded with DUMPI (the
/// bundled samples); the benchmarks send the same messages in both versions.
#[test]
fn nas_benchmarks_read_as_their_dumpi_twins() {
    same_as_twin("apps/otf2-npb-bt.S.9", "samples/npb-bt.S.9");
    same_as_twin("apps/otf2-npb-lu.S.8", "samples/npb-lu.S.8");
    // Not the phase count: MG's set-up (zran3's 40 reductions meeting the first halo exchanges)
    // is cut once in this recording and twice in the DUMPI one, whose program version and
    // tracer timing differ; the later boundaries agree (docs/phases.md, "Still not right").
    same_as_twin_but("apps/otf2-npb-mg.S.8", "samples/npb-mg.S.8", false);
}

/// hpcc creates 30 communicators (PTRANS's and HPL's row and column splits), polls with
/// MPI_Testany and cancels its last receives: point-to-point traffic on sub-communicators with
/// communicator-local ranks, resolved through the mapping tables.
#[test]
fn hpcc_with_sub_communicators_reads_as_its_dumpi_twin() {
    let (a, b) = (trace("apps/otf2-hpcc-4"), trace("apps/hpcc-4"));
    assert_eq!(pairs(&a), pairs(&b));
    let (sa, sb) = (cli(&[&"summary", &a, &"--json"]), cli(&[&"summary", &b, &"--json"]));
    assert_eq!(sa["p2p_messages"], sb["p2p_messages"], "hpcc-4: messages");
    // Twelve of hpcc's sends use derived datatypes, whose size the OTF2 tracer asks MPI for
    // (MPI_Type_size); DUMPI's size table holds the first type built on each handle, and the
    // reader follows the constructors instead (was 14,496 bytes lower): equal.
    let (ba, bb) = (sa["p2p_bytes"].as_u64().unwrap(), sb["p2p_bytes"].as_u64().unwrap());
    assert_eq!(ba, bb, "hpcc-4 bytes: OTF2 {ba}, DUMPI {bb}");
    let l = cli(&[&"logical", &a, &"--json"]);
    assert!(l["verification"]["ranks_structure_differs"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(l["verification"]["ranks_bytes_differ"].as_array().unwrap().is_empty());
}

/// Score-P writes calls as `CallingContextEnter` / `CallingContextLeave` when it unwinds the
/// stack: the run recorded so (each call's calling context names the MPI function) reads as the
/// same program recorded with plain `Enter` / `Leave`; the official reader's counts of both runs
/// are equal, and tests/apps_summary.rs checks its own against them.
#[test]
fn calls_written_as_calling_contexts_read_as_enter_and_leave() {
    same_as_twin("apps/otf2-cc-npb-lu.S.4", "apps/otf2-npb-lu.S.4");
    let s = cli(&[&"summary", &trace("apps/otf2-cc-npb-lu.S.4"), &"--json"]);
    assert_eq!(s["calls_by_kind"]["MPI_Init"], 4, "{}", s["calls_by_kind"]);
    assert_eq!(s["calls_by_kind"]["MPI_Finalize"], 4, "{}", s["calls_by_kind"]);
}

/// NAS CG on 8 ranks (no DUMPI twin at this size): every rank's logical trace expands back exactly.
#[test]
fn nas_cg_logical_trace_is_exact() {
    let l = cli(&[&"logical", &trace("apps/otf2-npb-cg.S.8"), &"--json"]);
    let v = &l["verification"];
    assert!(v["ranks_structure_differs"].as_array().unwrap().is_empty(), "{v}");
    assert!(v["ranks_bytes_differ"].as_array().unwrap().is_empty(), "{v}");
}
