//! The logical trace of the real application runs of `tests/data/apps` (unmodified programs
//! traced with SST DUMPI, docs/corpus.md; their truth in tests/data/apps/EXPECTED.md): NAS SP,
//! LU (two placements) and CG on 16 ranks, hpcc on 4 and 6, LAMMPS on 8 and 12 ranks in five
//! layouts and a three-stage run.
//!
//! Verification reports STRUCTURE (function, direction and peer of every point-to-point
//! operation, in order) and VOLUME (bytes) separately. Every rank's structure is exact on every
//! run; the NAS and hpcc sizes are exact; LAMMPS's ghost-atom messages change size from step to
//! step, so the compressed program keeps their statistics where a size takes more than
//! `MAX_LISTED` values, and its expansion must give every rank its volume within 1 %.
//! Independent of the logical trace: the real operations come from the trace, the truth of the
//! per-rank sequences from EXPECTED.md (one sequence on all ranks for LAMMPS, SP and CG; nine
//! classes for LU).

use std::path::Path;
use tracelogic_analysis::compress::{compress, Node, Program, Values};
use tracelogic_analysis::logical::{
    expand_calls, expand_records, logicalize_identified, physical_calls, verify, LogicalCall, LogicalTrace,
    Verification, VOLUME_TOLERANCE,
};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_model::{CollectiveOp, Selection, Trace};

mod common;

fn app(name: &str) -> Trace {
    common::app_trace(name)
}

/// Per rank, the bytes of the expansion of the compressed `program` (summarised sizes spread
/// as the program says).
fn program_volume(l: &LogicalTrace, program: &Program) -> Vec<u64> {
    let calls = program.expand(50_000_000).expect("program expands");
    (0..l.ranks)
        .map(|r| {
            let mine = expand_calls(l, calls.iter(), r).unwrap();
            physical_calls(&mine).iter().map(|c| c.bytes).sum()
        })
        .collect()
}

fn check(name: &str, bytes_exact: bool) -> (LogicalTrace, Verification, Program) {
    check_trace(name, app(name), bytes_exact)
}

/// [`check`] on a trace read by the caller (`name` for the messages).
fn check_trace(name: &str, trace: Trace, bytes_exact: bool) -> (LogicalTrace, Verification, Program) {
    let report = identify_matrix(
        &CommMatrix::from_trace(&trace, &Selection::all()),
        &TopologyOptions::default(),
    );
    let l = logicalize_identified(&trace, &report, None).expect("logical trace");
    let v = verify(&trace, &l).expect("verification");
    let program = compress(&l.records);
    let volume = program_volume(&l, &program);
    let worst = v
        .per_rank
        .iter()
        .zip(&volume)
        .map(|(p, &b)| (b as f64 - p.real_bytes as f64).abs() / (p.real_bytes.max(1) as f64))
        .fold(0.0, f64::max);
    eprintln!(
        "{name}: {} ({} classes, {} branches, {} operations with per-rank sizes), records {} -> compressed {}, structure {:.4} (ranks differing {:?}), bytes differ on {:?}, volume error of the records {:.5}, of the compressed program worst rank {worst:.5}",
        l.topology.label,
        l.classes.len(),
        l.branches,
        l.rank_sized_operations,
        program.raw_length,
        program.compressed_length,
        v.structure_share,
        v.ranks_structure_differs,
        v.ranks_bytes_differ,
        v.max_volume_error,
    );
    assert_eq!(v.ranks_structure_differs, Vec::<u32>::new(), "{name}: structure");
    assert!(v.per_rank.iter().all(|p| p.structure_exact && p.structure_share == 1.0));
    assert!(l.sizes_fitted, "{name}");
    if bytes_exact {
        assert_eq!(v.ranks_bytes_differ, Vec::<u32>::new(), "{name}: bytes");
        for (p, &b) in v.per_rank.iter().zip(&volume) {
            assert_eq!(
                b, p.real_bytes,
                "{name}: rank {} volume of the compressed program",
                p.rank
            );
        }
    }
    for (p, &b) in v.per_rank.iter().zip(&volume) {
        let err = (b as f64 - p.real_bytes as f64).abs() / (p.real_bytes.max(1) as f64);
        assert!(
            err <= VOLUME_TOLERANCE,
            "{name}: rank {} volume {b} against {} ({err})",
            p.rank,
            p.real_bytes
        );
    }
    (l, v, program)
}

#[test]
fn nas_runs_are_exact_in_structure_and_bytes() {
    for name in ["npb-sp.S.16", "npb-lu.S.16", "npb-lu.S.16-rankfile", "npb-cg.S.16"] {
        let (l, _, program) = check(name, true);
        if name.starts_with("npb-lu") {
            // EXPECTED.md: nine classes (corner, edge, interior).
            assert_eq!(l.classes.len(), 9, "{name}");
            // Logicalization Table 1 (16 processes, like these runs): LU within 63 records.
            assert!(program.compressed_length <= 63, "{name}: {}", program.compressed_length);
        }
        if name.starts_with("npb-sp") {
            // Table 1: SP within 89 records.
            assert!(program.compressed_length <= 89, "{name}: {}", program.compressed_length);
        }
    }
}

#[test]
fn hpcc_runs_are_exact_in_structure_and_bytes() {
    for name in ["hpcc-4", "hpcc-6"] {
        check(name, true);
    }
}

#[test]
fn lammps_runs_keep_structure_and_volume() {
    for name in [
        "lammps-melt-8",
        "lammps-melt-12",
        "lammps-melt-12-xzy",
        "lammps-melt-12-1x3x4",
        "lammps-melt-phases-8",
    ] {
        let (l, v, _) = check(name, false);
        // The records carry every rank's own sizes: exact before compression.
        assert_eq!(v.ranks_bytes_differ, Vec::<u32>::new(), "{name}");
        if name != "lammps-melt-phases-8" {
            // EXPECTED.md: one (function, direction) sequence on all ranks, bytes differ on
            // every rank: no branch, and sizes per rank.
            assert_eq!(l.branches, 0, "{name}");
            assert!(l.rank_sized_operations > 0, "{name}");
        }
    }
}

/// LAMMPS `rigid` (nine rigid bodies on a periodic 2x2x2 grid, 200 steps): whether a swap
/// sends at all, and how much, depends on where the bodies are, so the ranks' sequences differ
/// (EXPECTED.md: 8 distinct (function, direction) sequences, `tools/record/direction-sequences.py`).
/// A dimension of 2 has one neighbour both ways (`procs.map`, LAMMPS's own grid), so the program
/// names it by one direction on every rank. Chosen by agreement with sizes alone, the 2x2x2 mesh
/// named it `east` at one coordinate and `west` at the other (each rank its own class of names;
/// held out at 2,000 steps: 397,538 records, 23,042 compressed, against 97,810 and 15,929).
#[test]
fn lammps_rigid_names_each_grid_dimension_by_one_direction_on_every_rank() {
    let name = "lammps-rigid-8";
    let (l, v, program) = check(name, false);
    assert_eq!(v.ranks_bytes_differ, Vec::<u32>::new(), "{name}");
    // LAMMPS's grid: rank -> 0-based (I, J, K), from procs.map (written by LAMMPS).
    let coords = common::apps::lammps_procs_map(&common::apps::app_dir(name), l.ranks as usize);
    // Every direction the logical trace gives a neighbour, by the grid dimension they differ in.
    let mut names: std::collections::BTreeMap<usize, std::collections::BTreeSet<String>> = Default::default();
    for r in 0..l.ranks {
        for direction in l.placement.direction_names() {
            let Some(peer) = l.placement.neighbour(r, &direction) else {
                continue;
            };
            let (a, b) = (&coords[r as usize], &coords[peer as usize]);
            let differ: Vec<usize> = (0..3).filter(|&d| a[d] != b[d]).collect();
            assert_eq!(differ.len(), 1, "rank {r} and {peer} are no grid neighbours");
            names.entry(differ[0]).or_default().insert(direction);
        }
    }
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names.values().all(|n| n.len() == 1),
        "a dimension named apart by rank: {names:?}"
    );
    assert!(l.classes.iter().all(|c| c.directions.len() == 3), "{:?}", l.classes);
    // The other placement, when the agreement's two counts disagreed, gave a longer program.
    let from = l.directions_from.as_ref().unwrap();
    if let Some(c) = &from.contest {
        assert!(c.kept_length <= c.other_length, "{c:?}");
    }
    eprintln!(
        "{name}: {} -> {}; {}",
        program.raw_length, program.compressed_length, from.reason
    );
}

/// Quantum ESPRESSO pw.x on 4 ranks: its point-to-point traffic (ScaLAPACK's 2x2 process grid,
/// every pair) is identified as a 4-node all-to-all; the logical trace merges the four ranks'
/// classes and must reproduce every rank's structure and bytes.
#[test]
fn quantum_espresso_is_exact_in_structure_and_bytes() {
    check("qe-si-4", true);
}

/// On 8 ranks QE's graph (the grid on ranks 0, 2, 4, 6 plus the others' messages to rank 0) is
/// no topology of the catalogue (`tests/data/apps/EXPECTED.md`). The logical trace then names
/// peers by rank offset (an all-to-all of the 8 ranks, identity placement), drops nothing and
/// must still give every rank its recorded calls, peers and bytes.
#[test]
fn a_run_without_topology_gets_rank_offset_directions() {
    let trace = app("qe-si-8");
    let report = identify_matrix(
        &CommMatrix::from_trace(&trace, &Selection::all()),
        &TopologyOptions::default(),
    );
    assert!(
        report.identification.matched.is_none(),
        "no catalogue topology fits qe-si-8"
    );
    let (l, v, _) = check("qe-si-8", true);
    let from = l.directions_from.as_ref().expect("directions_from");
    assert_eq!(from.placed_by, tracelogic_analysis::logical::PlacedBy::RankOffsets);
    assert_eq!(from.identified, "none");
    assert_eq!(l.accuracy.dropped_calls_fraction, 0.0);
    assert!(v.per_rank.iter().all(|p| p.real_bytes > 0), "every rank sends");
}

/// The steps of a LAMMPS run from its own log: `Loop time of T on P procs for N steps`.
fn logged_steps(name: &str) -> u64 {
    let log = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/apps")
            .join(name)
            .join("log.lammps"),
    )
    .expect("log.lammps");
    let steps: Vec<u64> = log
        .lines()
        .filter(|l| l.starts_with("Loop time of"))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "steps").expect("N steps") - 1;
            words[at].parse().expect("a step count")
        })
        .collect();
    assert_eq!(steps.len(), 1, "{name}: one run");
    steps[0]
}

/// The top-level loops of `program` with a constant count: (count, records with its header).
fn top_loops(program: &Program) -> Vec<(u64, usize)> {
    fn records(n: &Node) -> usize {
        match n {
            Node::Call { .. } => 1,
            Node::Loop { body, .. } => 1 + body.iter().map(records).sum::<usize>(),
        }
    }
    program
        .nodes
        .iter()
        .filter_map(|n| match n {
            Node::Loop {
                count: Values::Constant { value },
                ..
            } => Some((*value, records(n))),
            _ => None,
        })
        .collect()
}

/// LAMMPS's MD steps are one loop (variant loops, docs/logical.md "Loop compression"): plain
/// steps, reneighbouring steps and thermo output are arms of one body, so the program has a
/// loop whose count is the step count the run's log reports (the neighbour-list check's 4-byte
/// `MPI_Allreduce` starts every step: `neigh_modify every 1 delay 0 check yes`), and its length
/// does not grow with the steps: the same run with steps N/2+1..N-1 cut out compresses to the
/// same length, with a loop of N/2 + 1.
#[test]
fn lammps_step_loop_runs_the_logged_steps() {
    for name in [
        "lammps-melt-8",
        "lammps-melt-12",
        "lammps-melt-12-xzy",
        "lammps-melt-12-1x3x4",
        "lammps-melt-27",
        "lammps-melt-27-reorder",
    ] {
        let steps = logged_steps(name);
        let trace = app(name);
        let report = identify_matrix(
            &CommMatrix::from_trace(&trace, &Selection::all()),
            &TopologyOptions::default(),
        );
        let l = logicalize_identified(&trace, &report, None).expect("logical trace");
        let program = compress(&l.records);
        let loops = top_loops(&program);
        eprintln!(
            "{name}: {steps} steps in the log, records {} -> compressed {}, top-level loops (count, records) {loops:?}",
            program.raw_length, program.compressed_length
        );
        let step_loop = loops.iter().find(|(c, _)| *c == steps);
        assert!(step_loop.is_some(), "{name}: no loop of {steps}:\n{}", program.text());
        // Fewer steps: cut the records of steps N/2+1..N-1 (N/2+1 steps left). Each step starts at the 4-byte
        // check MPI_Allreduce, followed by the step's ghost exchange (a point-to-point record;
        // the final statistics' 4-byte reductions are followed by other reductions).
        let checks: Vec<usize> = l
            .records
            .windows(2)
            .enumerate()
            .filter(|(_, w)| {
                w[0].call
                    .collective
                    .as_ref()
                    .is_some_and(|c| c.op == CollectiveOp::Allreduce && c.bytes_sent == 4)
                    && !w[1].call.ops.is_empty()
            })
            .map(|(i, _)| i)
            .collect();
        // One per step, and one in the set-up (its first exchange) before them.
        assert_eq!(checks.len() as u64, steps + 1, "{name}: one neighbour check per step");
        let keep = steps / 2 + 1;
        let (cut_from, cut_to) = (checks[keep as usize], checks[checks.len() - 1]);
        let fewer: Vec<_> = l.records[..cut_from]
            .iter()
            .chain(&l.records[cut_to..])
            .cloned()
            .collect();
        let shorter = compress(&fewer);
        let fewer_loops = top_loops(&shorter);
        eprintln!(
            "{name}: {keep} steps: records {} -> compressed {}, loops {fewer_loops:?}",
            shorter.raw_length, shorter.compressed_length
        );
        assert!(
            fewer_loops.iter().any(|(c, _)| *c == keep),
            "{name}:\n{}",
            shorter.text()
        );
        assert_eq!(shorter.compressed_length, program.compressed_length, "{name}");
        assert_eq!(shorter.expand(1 << 20).unwrap().len(), fewer.len());
    }
}

/// Per rank (sends, bytes sent, receives) as the tracer's own decoder counted them
/// (`expected/*-per-rank.txt`: rank, sends, bytes or -1 when the decoder cannot size a datatype,
/// receives), independently of tracelogic.
fn decoder_per_rank(name: &str, file: &str) -> Vec<(u64, Option<u64>, u64)> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/apps")
        .join(name)
        .join("expected")
        .join(file);
    decoder_per_rank_at(name, &p)
}

/// [`decoder_per_rank`] of the file `p`.
fn decoder_per_rank_at(name: &str, p: &Path) -> Vec<(u64, Option<u64>, u64)> {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            let f: Vec<i64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            assert_eq!(f[0], i as i64, "{name}: ranks in order");
            (f[1] as u64, (f[2] >= 0).then_some(f[2] as u64), f[3] as u64)
        })
        .collect()
}

/// Every rank's expansion of `l` sends, sends bytes (where the decoder counts them) and receives
/// what the decoder counted (`truth`, [`decoder_per_rank`]).
fn assert_expands_to(name: &str, l: &LogicalTrace, truth: &[(u64, Option<u64>, u64)]) {
    let expanded = expanded_per_rank(l);
    assert_eq!(truth.len(), expanded.len(), "{name}: ranks");
    for (r, (t, e)) in truth.iter().zip(&expanded).enumerate() {
        assert_eq!((t.0, t.2), (e.0, e.2), "{name}: rank {r} sends, receives");
        if let Some(b) = t.1 {
            assert_eq!(b, e.1, "{name}: rank {r} bytes sent");
        }
    }
}

/// Per rank (sends, bytes sent, receives) of the logical trace's expansion.
fn expanded_per_rank(l: &LogicalTrace) -> Vec<(u64, u64, u64)> {
    (0..l.ranks)
        .map(|r| {
            let mine = expand_calls(l, l.records.iter().map(|x| &x.call), r).unwrap();
            let calls = physical_calls(&mine);
            let sends: Vec<_> = calls.iter().filter(|c| c.direction == "send").collect();
            let recvs = calls.iter().filter(|c| c.direction == "recv").count() as u64;
            (sends.len() as u64, sends.iter().map(|c| c.bytes).sum(), recvs)
        })
        .collect()
}

/// Held-out NAS runs (recorded after these analyses were written, at rank counts the
/// corpus did not have; docs/corpus.md "Held-out check"): structure and bytes exact on every
/// rank, and every rank's expansion sends and receives what the tracer's decoder counted.
/// Logicalization, Table 1: SP's compressed logical trace is within its 89 records; BT's
/// length (44 there) is printed, not asserted: it is above (docs/logical.md says which records
/// are extra); LU's 63 is asserted on the 16-rank runs
/// (`nas_runs_are_exact_in_structure_and_bytes`).
#[test]
fn held_out_nas_runs_expand_to_the_decoders_counts() {
    for (name, file) in [
        ("otf2-npb-bt.S.4", "otf2-print-per-rank.txt"),
        ("npb-sp.S.4", "dumpi2ascii-per-rank.txt"),
        ("otf2-npb-lu.S.4", "otf2-print-per-rank.txt"),
        ("otf2-npb-cg.S.4", "otf2-print-per-rank.txt"),
        ("otf2-npb-mg.S.16", "otf2-print-per-rank.txt"),
    ] {
        let (l, v, program) = check(name, true);
        assert!(v.ranks_outside_topology.is_empty(), "{name}");
        assert_expands_to(name, &l, &decoder_per_rank(name, file));
        if name.contains("sp.") {
            assert!(program.compressed_length <= 89, "{name}: {}", program.compressed_length);
        }
    }
}

/// The second held-out NAS set (`NAS_HELDOUT=DIR`, recorded outside the repository by
/// `tools/record/heldout-nas.sh`: BT, SP, LU, CG, MG at classes S and W, FT, IS, EP, DUMPI and
/// OTF2, four under a rankfile; docs/corpus.md "A second NAS set"): on every run the logical
/// trace is exact in structure and bytes on every rank, every rank's expansion sends, bytes and
/// receives what the tracer's decoder counted (`expected/*-per-rank.txt`), and
/// Logicalization Table 1's bounds hold for SP (89) and LU (63).
#[test]
#[ignore = "needs NAS_HELDOUT (held-out runs, recorded outside the repository)"]
fn nas_heldout_runs_expand_to_the_decoders_counts() {
    let root = std::path::PathBuf::from(std::env::var("NAS_HELDOUT").expect("NAS_HELDOUT=DIR"));
    let mut runs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("npb-output.txt").exists())
        .collect();
    runs.sort();
    assert!(!runs.is_empty(), "{}: no NAS runs", root.display());
    for dir in runs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let otf2 = dir.join("trace/traces.otf2");
        let path = if otf2.exists() { otf2 } else { dir.clone() };
        let files = tracelogic_formats::fs::load_paths(&[path]).expect("run files");
        let trace = tracelogic_formats::read_trace(files).expect("run trace");
        let (l, _, program) = check_trace(&name, trace, true);
        let file = ["dumpi2ascii-per-rank.txt", "otf2-print-per-rank.txt"]
            .iter()
            .map(|f| dir.join("expected").join(f))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{name}: no per-rank counts"));
        assert_expands_to(&name, &l, &decoder_per_rank_at(&name, &file));
        let bound = if name.contains("sp.") {
            89
        } else if name.contains("lu.") {
            63
        } else {
            usize::MAX
        };
        assert!(
            program.compressed_length <= bound,
            "{name}: {}",
            program.compressed_length
        );
    }
}

/// Every rank's point-to-point operations in posting order, `(send|recv, peer, bytes)`, as the
/// official OTF2 reader gives them (`expected/otf2-print-p2p.txt.zst`, tools/record/p2p-sequence.sh
/// packed with `zstd -19`), independently of tracelogic.
fn decoder_sequence(name: &str, ranks: u32) -> Vec<Vec<(String, u32, u64)>> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/apps")
        .join(name)
        .join("expected/otf2-print-p2p.txt.zst");
    let packed = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let files = tracelogic_formats::expand_archives(vec![tracelogic_formats::InputFile::new(
        "otf2-print-p2p.txt.zst",
        packed,
    )])
    .expect("the decoder's sequence unpacks");
    let text = String::from_utf8(files[0].bytes.clone()).expect("text");
    let mut out = vec![Vec::new(); ranks as usize];
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let rank: usize = f[0].parse().unwrap();
        out[rank].push((f[1].to_string(), f[2].parse().unwrap(), f[3].parse().unwrap()));
    }
    out
}

/// NAS MG on 16 ranks (held out): on the coarsest levels ranks 4-7 and 12-15 exchange with the
/// rank two steps away along the 4-process axis (4<->12, 5<->13, 6<->14, 7<->15; the run's
/// README from otf2-print), which is no edge of the 4x2x2 torus. Those peers are offsets in the
/// torus's coordinates now, not dropped: every rank expands to exactly the operations the
/// official reader decodes — peer, bytes and order — and the operations to the rank 8 away are
/// the ones kept as offsets (before: "exact inside the topology", 320 operations left out).
#[test]
fn held_out_mg_expands_to_the_decoders_operations_on_every_rank() {
    let name = "otf2-npb-mg.S.16";
    let (l, v, program) = check(name, true);
    let truth = decoder_sequence(name, l.ranks);
    for r in 0..l.ranks {
        let mine = expand_calls(&l, l.records.iter().map(|x| &x.call), r).unwrap();
        let got: Vec<(String, u32, u64)> = physical_calls(&mine)
            .into_iter()
            .map(|c| (c.direction, c.peer.expect("a named peer"), c.bytes))
            .collect();
        assert_eq!(got.len(), truth[r as usize].len(), "{name}: rank {r} operations");
        assert_eq!(got, truth[r as usize], "{name}: rank {r}");
    }
    // The decoder's operations with the rank two steps away along the 4-process axis (8 ranks
    // further, modulo 16): 20 sends and 20 receives on each of ranks 4-7 and 12-15.
    let far: Vec<u64> = (0..l.ranks)
        .map(|r| truth[r as usize].iter().filter(|o| o.1 == (r + 8) % 16).count() as u64)
        .collect();
    let far_ranks: Vec<u32> = (0..l.ranks).filter(|&r| far[r as usize] > 0).collect();
    assert_eq!(
        far_ranks,
        vec![4, 5, 6, 7, 12, 13, 14, 15],
        "{name}: the decoder's truth"
    );
    assert_eq!(far.iter().sum::<u64>(), 320);
    assert!(v.ranks_outside_topology.is_empty(), "{name}: nothing left unnamed");
    assert_eq!(v.operations_outside_topology, 0);
    assert_eq!(v.ranks_with_offsets, far_ranks, "{name}");
    assert_eq!(v.operations_as_offsets, 320, "{name}");
    assert_eq!((l.accuracy.dropped_calls, l.accuracy.offset_calls), (0, 320), "{name}");
    let offsets = l.offset_directions();
    eprintln!(
        "{name}: offsets {offsets:?}, {} records -> {} compressed; {}",
        program.raw_length,
        program.compressed_length,
        v.structure_text()
    );
    // Two apart on the 4-process axis wraps to the same node both ways: one offset direction.
    assert_eq!(offsets.len(), 1, "{offsets:?}");
    assert!(offsets[0].contains("+2"), "{offsets:?}");
    // The classes differ only around their side exchanges (the far exchange, the coarsest
    // level's redistribution), so a merge that keeps them in step is shorter than their own
    // programs one after the other (each class's representative logicalized alone), which is
    // what the per-class blocks cost (320 records before the alignment merge); and it is within
    // Logicalization Table 1's MG (590 records for MG B on 16 ranks).
    let trace = app(name);
    let report = identify_matrix(
        &CommMatrix::from_trace(&trace, &Selection::all()),
        &TopologyOptions::default(),
    );
    assert!(l.classes.len() >= 2, "{name}: classes");
    let own: usize = l
        .classes
        .iter()
        .map(|c| {
            let alone = logicalize_identified(&trace, &report, Some(&[c.rank])).expect("class alone");
            compress(&alone.records).compressed_length
        })
        .sum();
    eprintln!(
        "{name}: compressed {} against the classes' own programs together {own}",
        program.compressed_length
    );
    assert!(
        program.compressed_length < own,
        "{} >= {own}",
        program.compressed_length
    );
    assert!(program.compressed_length <= 590, "{}", program.compressed_length);
}

/// NAS CG on 4 ranks (held out) is a 4-node line as a graph (0-1 and 2-3 row partners, 1-2 the
/// transpose; CG/cg.f), so the line's `east` was the row partner on ranks 0 and 2 and the
/// transpose partner on rank 1: four classes, each rank its own branch, 110 compressed records
/// where CG on 16 ranks needs 38. Its isomorphic equivalent NAS CG 2x2 names the program's
/// moves (row, transpose) on every rank, and its directions agree better, so it names them now.
#[test]
fn held_out_cg_4_takes_the_directions_of_its_process_grid() {
    let (l, _, program) = check("otf2-npb-cg.S.4", true);
    assert_eq!(l.topology.label, "NAS CG 2x2");
    let from = l.directions_from.as_ref().expect("directions_from");
    assert_eq!(from.placed_by, tracelogic_analysis::logical::PlacedBy::Isomorphism);
    assert!(program.compressed_length < 110, "{}", program.compressed_length);
}

/// The C skeleton of the held-out NAS MG S 16 run (OTF2 from the official writer, whose root
/// of a broadcast records the count times the communicator's size as its bytes sent) runs under
/// mpirun and replays the recorded run: every rank's collectives (function and size, in order)
/// and point-to-point operations (send or receive, peer as a node, bytes, in order) are those
/// of the recorded rank on the same node, read back through the PMPI tracer. Before, every
/// rank's broadcast count was the larger of the two sides, so the root passed 16 times the
/// others' count and the run aborted with MPI_ERR_TRUNCATE.
#[test]
fn held_out_mg_skeleton_replays_the_run() {
    use tracelogic_analysis::skeleton::skeleton_c;
    let recorded = app("otf2-npb-mg.S.16");
    let report = identify_matrix(
        &CommMatrix::from_trace(&recorded, &Selection::all()),
        &TopologyOptions::default(),
    );
    let l = logicalize_identified(&recorded, &report, None).expect("logical trace");
    let program = compress(&l.records);
    let Some(replayed) = common::replay_skeleton("mg", &skeleton_c(&l, &program).unwrap(), 16) else {
        return;
    };
    let node = |r: u32| l.placement.node_of_rank[r as usize];
    // Per rank, its collectives in order: which, and the bytes a non-root receives from a
    // broadcast (the recorded root's bytes sent are 16 times that by the writer's convention).
    let collectives = |t: &Trace, rank: u32, root_node: &dyn Fn(u32) -> u32, me: u32| -> Vec<(CollectiveOp, u64)> {
        let c = &t.ranks[rank as usize].collectives;
        (0..c.len())
            .map(|k| {
                let received = c.op[k] == CollectiveOp::Bcast && root_node(c.root[k]) != me;
                (c.op[k], if received { c.bytes_recv[k] } else { 0 })
            })
            .collect()
    };
    for w in 0..16u32 {
        let u = node(w);
        let p2p = common::p2p_as_nodes;
        assert_eq!(
            p2p(&recorded, w, &node),
            p2p(&replayed, u, &|q| q),
            "rank {w} (node {u})"
        );
        assert_eq!(
            collectives(&recorded, w, &node, u),
            collectives(&replayed, u, &|q| q, u),
            "rank {w} (node {u}): collectives"
        );
    }
}

/// LAMMPS with long-range electrostatics (PPPM) on 8 ranks, `tests/data/apps/lammps-pppm-8`
/// (tools/record/lammps-pppm.sh): minimisation, an NVE run and a Langevin run, whose steps the
/// log reports. PPPM's remaps complete their requests with one `MPI_Waitany` per request, in
/// the order messages arrive; a run of them is one completion record carrying its number of
/// calls (docs/logical.md, step 4), so the expansion still gives every rank its recorded
/// operations, peers and sizes, and as many `MPI_Waitany` calls as the tracer's decoder counted. Before,
/// the completion offsets changed with the arrival order and 58,136 records compressed to
/// 24,136 (ratio 2.4); each rank block's steps then folded into one loop (4,062 records; 765 since the
/// classes are aligned between world collectives,
/// `lammps_pppm_compressed_length_is_bounded_by_its_steps`).
#[test]
fn lammps_pppm_expands_to_the_decoders_counts() {
    let name = "lammps-pppm-8";
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps").join(name);
    let log = std::fs::read_to_string(dir.join("log.lammps")).expect("log.lammps");
    let steps: Vec<u64> = log
        .lines()
        .filter(|l| l.starts_with("Loop time of"))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w[w.iter().position(|x| *x == "steps").expect("N steps") - 1]
                .parse()
                .unwrap()
        })
        .collect();
    // Minimisation (3 iterations), NVE 20 steps, Langevin 10 steps: the recording's input.
    assert_eq!(steps, vec![3, 20, 10], "{name}: the log's runs");
    assert!(log.contains("2 by 2 by 2 MPI processor grid"), "{name}: the log's grid");
    let counts = std::fs::read_to_string(dir.join("expected/dumpi2ascii-counts.txt")).unwrap();
    let count = |key: &str| -> u64 {
        counts
            .lines()
            .find_map(|l| l.strip_prefix(key).map(|v| v.trim().parse().unwrap()))
            .unwrap_or_else(|| panic!("{key} in the counts"))
    };
    let (l, v, program) = check(name, false);
    assert_eq!(
        v.ranks_bytes_differ,
        Vec::<u32>::new(),
        "{name}: every size on every rank"
    );
    let expanded = expanded_per_rank(&l);
    assert_eq!(expanded.iter().map(|e| e.0).sum::<u64>(), count("p2p_sends "));
    assert_eq!(expanded.iter().map(|e| e.1).sum::<u64>(), count("p2p_send_bytes "));
    assert_eq!(expanded.iter().map(|e| e.2).sum::<u64>(), count("p2p_receives "));
    // A run of `MPI_Waitany` calls is one record carrying its number of calls.
    let waitany: u64 = (0..l.ranks)
        .map(|r| {
            let mine = expand_calls(&l, l.records.iter().map(|x| &x.call), r).unwrap();
            mine.iter()
                .filter(|c| c.function == "MPI_Waitany")
                .map(|c| c.calls.expect("a completion run's record"))
                .sum::<u64>()
        })
        .sum();
    assert_eq!(waitany, count("calls MPI_Waitany "), "{name}: Waitany calls");
    eprintln!(
        "{name}: {} ({} classes), records {} -> compressed {}",
        l.topology.label,
        l.classes.len(),
        program.raw_length,
        program.compressed_length
    );
    assert!(
        program.compressed_length * 5 <= program.raw_length,
        "{name}: {} -> {}",
        program.raw_length,
        program.compressed_length
    );
    // The text's `Compressed length:` line lists 20 loops and counts the others (1,232 here).
    let breakdown = program.breakdown(&l.offset_directions());
    let text = breakdown.text();
    assert!(breakdown.loops.len() > 20, "{name}: {}", breakdown.loops.len());
    assert_eq!(text.matches(" (x").count(), 20, "{text}");
    assert!(
        text.contains(&format!("... and {} more", breakdown.loops.len() - 20)),
        "{text}"
    );
}

/// The steps of the LAMMPS PPPM run fold: its compressed logical trace holds no more records
/// than three time steps of the whole run need, one for each of its three stages
/// (minimisation, NVE, Langevin), whatever the step count. The bound comes from outside
/// tracelogic: the run's record-making calls (point-to-point calls, completions, collectives,
/// `MPI_Init` and `MPI_Finalize`, counted by the tracer's own decoder over all ranks,
/// `expected/dumpi2ascii-counts.txt`) over the steps its log reports (3 + 20 + 10), set-up and
/// final statistics included, so one step's share is an overestimate. A trace that grows with
/// the steps does not fit: before the blocks of the merge were compressed one by one
/// (docs/logical.md, "Loop compression"), this run compressed to 9,900 records, 5.6 steps'
/// worth; at 10 + 5 and 40 + 30 steps to 8,120 and 19,218.
#[test]
fn lammps_pppm_compressed_length_is_bounded_by_its_steps() {
    let name = "lammps-pppm-8";
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps").join(name);
    let log = std::fs::read_to_string(dir.join("log.lammps")).expect("log.lammps");
    let steps: u64 = log
        .lines()
        .filter(|l| l.starts_with("Loop time of"))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w[w.iter().position(|x| *x == "steps").expect("N steps") - 1]
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(steps, 33, "{name}: 3 + 20 + 10 steps in the log");
    let counts = std::fs::read_to_string(dir.join("expected/dumpi2ascii-counts.txt")).unwrap();
    // Calls that are records (docs/logical.md, step 4): every other call of the counts
    // (communicator set-up, queries, MPI_Wtime) is not.
    let recorded = |f: &str| {
        f.ends_with("send")
            || f.ends_with("recv")
            || f.starts_with("wait")
            || f.starts_with("test")
            || [
                "allgather",
                "allreduce",
                "alltoall",
                "barrier",
                "bcast",
                "gather",
                "reduce",
                "scan",
                "scatter",
                "init",
                "finalize",
            ]
            .iter()
            .any(|c| f.starts_with(c) || f == format!("i{c}"))
    };
    let completion = |f: &str| f.starts_with("wait") || f.starts_with("test");
    let count = |completions: bool| -> u64 {
        counts
            .lines()
            .filter_map(|l| l.strip_prefix("calls MPI_"))
            .filter_map(|l| l.split_once(' '))
            .map(|(f, n)| (f.to_lowercase(), n))
            .filter(|(f, _)| recorded(f) && !f.starts_with("comm") && completion(f) == completions)
            .map(|(_, n)| n.trim().parse::<u64>().unwrap())
            .sum()
    };
    let records = count(false) + count(true);
    let (l, v, program) = check(name, false);
    // Every rank's expansion has one record per recorded call other than completions (the
    // ranks' shared records, aligned between world collectives, are expanded for each).
    let ranks = v.per_rank.len() as u32;
    let expanded: u64 = (0..ranks)
        .map(|r| {
            expand_records(&l, r)
                .expect("expansion")
                .iter()
                .filter(|c| c.kind != tracelogic_model::CallKind::Completion)
                .count() as u64
        })
        .sum();
    assert_eq!(
        expanded,
        count(false),
        "{name}: every rank's expansion has its recorded calls"
    );
    assert_eq!(
        v.ranks_bytes_differ,
        Vec::<u32>::new(),
        "{name}: every size on every rank"
    );
    // A run of `MPI_Waitany` calls is one record carrying its number of calls (step 4).
    let folded: u64 = l.records.iter().map(|r| r.call.calls.map_or(0, |k| k - 1)).sum();
    assert!(folded > 0, "{name}: PPPM's remaps complete with runs of MPI_Waitany");
    let per_step = records as f64 / steps as f64;
    eprintln!(
        "{name}: {} classes, {records} records over {steps} steps ({per_step:.0} per step), compressed {}",
        l.classes.len(),
        program.compressed_length
    );
    assert!(
        (program.compressed_length as f64) <= 3.0 * per_step,
        "{name}: {} compressed records, more than three steps' {:.0}",
        program.compressed_length,
        3.0 * per_step
    );
}

/// Runs of `MPI_Waitany` are one completion record (docs/logical.md, step 4), checked on a
/// hand-written trace against offsets counted by hand: two ranks post two receives, send twice
/// and call `MPI_Waitany` twice per iteration, the receives completing in a different order in
/// each iteration (as arrival order does). Every iteration's records must then be equal, the
/// run's record completing both receives (4 and 3 records back) in 2 calls, so loop compression
/// folds the three iterations; an `MPI_Wtime` between the two calls does not break the run.
#[test]
fn waitany_runs_complete_in_posting_order() {
    use tracelogic_analysis::logical::rank_records;
    let mut src = String::from("#tracelogic-text 1\nranks 2\n");
    for r in 0..2u32 {
        let peer = 1 - r;
        let mut t = 0u64;
        let mut line = |s: String| {
            src.push_str(&format!("{r} {t} {} {s}\n", t + 1));
            t += 2;
        };
        for it in 0..3u32 {
            let (a, b) = (10 * it + 1, 10 * it + 2);
            line(format!("MPI_Irecv recv={peer} tag=0 bytes=8 req={a}"));
            line(format!("MPI_Irecv recv={peer} tag=1 bytes=8 req={b}"));
            line(format!("MPI_Send send={peer} tag=0 bytes=8"));
            line(format!("MPI_Send send={peer} tag=1 bytes=8"));
            // Arrival order: second receive first in iterations 0 and 2.
            let (first, second) = if it % 2 == 0 { (b, a) } else { (a, b) };
            line(format!("MPI_Waitany wait={first}"));
            line("MPI_Wtime".to_string());
            line(format!("MPI_Waitany wait={second}"));
        }
    }
    let trace = tracelogic_formats::text::read(
        &[tracelogic_formats::InputFile::new("waitany.txt", src.as_str())],
        &mut tracelogic_formats::NoProgress,
    )
    .expect("the hand-written trace reads");
    for r in 0..2 {
        let records = rank_records(&trace, r).unwrap();
        assert_eq!(records.len(), 15, "rank {r}: five records per iteration");
        let completes: Vec<(Vec<u32>, Option<u64>)> = records
            .iter()
            .filter(|x| x.call.function == "MPI_Waitany")
            .map(|x| (x.call.completes.clone(), x.call.calls))
            .collect();
        assert_eq!(completes, vec![(vec![3, 4], Some(2)); 3], "rank {r}");
        let program = compress(&records);
        assert_eq!(program.compressed_length, 6, "rank {r}:\n{}", program.text());
    }
    let v = verified_exact(&trace);
    // Six `MPI_Waitany` calls per rank, made and expanded.
    assert!(
        v.per_rank
            .iter()
            .all(|p| p.real_completion_calls == 6 && p.expanded_completion_calls == 6),
        "{:?}",
        v.per_rank
    );
}

/// A polling loop of `MPI_Test`, `MPI_Testsome` and `MPI_Waitsome` calls is one completion
/// record however many calls it needs (docs/logical.md, step 4), checked on a hand-written trace
/// against counts made by hand: two ranks post two receives and two sends per step and complete
/// them in 1, 2, 3 and 1 calls (a `MPI_Testsome` that completes nothing and an `MPI_Wtime` in
/// between, which neither count nor break the run; a `MPI_Wait` does break it). Each step is
/// then 4 posts and one `MPI_Waitsome` record completing the 4 requests, the 4 steps fold into
/// one loop, and verification counts the 7 completion calls of each rank apart.
#[test]
fn completion_loops_of_varying_calls_fold() {
    use tracelogic_analysis::logical::rank_records;
    let mut src = String::from("#tracelogic-text 1\nranks 2\n");
    for r in 0..2u32 {
        let peer = 1 - r;
        let mut t = 0u64;
        let mut line = |s: &str| {
            src.push_str(&format!("{r} {t} {} {s}\n", t + 1));
            t += 2;
        };
        for step in 0..4u32 {
            let q = |k: u32| 10 * step + k;
            line(&format!("MPI_Irecv recv={peer} tag=0 bytes=8 req={}", q(1)));
            line(&format!("MPI_Irecv recv={peer} tag=1 bytes=16 req={}", q(2)));
            line(&format!("MPI_Isend send={peer} tag=0 bytes=8 req={}", q(3)));
            line(&format!("MPI_Isend send={peer} tag=1 bytes=16 req={}", q(4)));
            match step {
                0 | 3 => line(&format!("MPI_Waitsome wait={},{},{},{}", q(1), q(2), q(3), q(4))),
                1 => {
                    line("MPI_Testsome");
                    line(&format!("MPI_Waitsome wait={},{}", q(4), q(1)));
                    line("MPI_Wtime");
                    line(&format!("MPI_Waitsome wait={},{}", q(2), q(3)));
                }
                _ => {
                    line(&format!("MPI_Test wait={}", q(3)));
                    line("MPI_Test");
                    line(&format!("MPI_Testsome wait={},{}", q(2), q(1)));
                    line(&format!("MPI_Waitsome wait={}", q(4)));
                }
            }
        }
        // A `MPI_Wait` after a `MPI_Waitsome` is a record of its own.
        line(&format!("MPI_Isend send={peer} tag=2 bytes=4 req=100"));
        line(&format!("MPI_Irecv recv={peer} tag=2 bytes=4 req=101"));
        line("MPI_Waitsome wait=101");
        line("MPI_Wait wait=100");
    }
    let trace = tracelogic_formats::text::read(
        &[tracelogic_formats::InputFile::new("polling.txt", src.as_str())],
        &mut tracelogic_formats::NoProgress,
    )
    .expect("the hand-written trace reads");
    for r in 0..2 {
        let records = rank_records(&trace, r).unwrap();
        assert_eq!(records.len(), 4 * 5 + 4, "rank {r}: five records per step, then four");
        let runs: Vec<(&str, Vec<u32>, Option<u64>)> = records
            .iter()
            .filter(|x| x.call.kind == tracelogic_model::CallKind::Completion)
            .map(|x| (x.call.function.as_str(), x.call.completes.clone(), x.call.calls))
            .collect();
        let step = |calls| ("MPI_Waitsome", vec![1, 2, 3, 4], Some(calls));
        assert_eq!(
            runs,
            vec![
                step(1),
                step(2),
                step(3),
                step(1),
                ("MPI_Waitsome", vec![1], Some(1)),
                ("MPI_Wait", vec![3], None),
            ],
            "rank {r}"
        );
        let program = compress(&records);
        // [4 posts, the run]^4, then 4 records.
        assert_eq!(program.compressed_length, 1 + 5 + 4, "rank {r}:\n{}", program.text());
        assert!(program.text().contains("calls {1, 2, 3, 1}"), "{}", program.text());
        let calls: Vec<LogicalCall> = records.iter().map(|x| x.call.clone()).collect();
        assert_eq!(program.expand(1000).unwrap(), calls, "rank {r}: the expansion is exact");
    }
    let v = verified_exact(&trace);
    // 1 + 2 + 3 + 1 calls of the steps' runs, the last `MPI_Waitsome` and the `MPI_Wait`.
    assert!(
        v.per_rank
            .iter()
            .all(|p| p.real_completion_calls == 9 && p.expanded_completion_calls == 9),
        "{:?}",
        v.per_rank
    );
}

/// The logical trace of `trace` on its identified topology, verified: structure and bytes exact
/// on every rank (asserted); the verification for further checks.
fn verified_exact(trace: &Trace) -> Verification {
    let report = identify_matrix(
        &CommMatrix::from_trace(trace, &Selection::all()),
        &TopologyOptions::default(),
    );
    let l = logicalize_identified(trace, &report, None).expect("logical trace");
    let v = verify(trace, &l).expect("verification");
    assert!(v.per_rank.iter().all(|p| p.structure_exact && p.bytes_exact));
    v
}
