//! Every analysis gives the same answer, up to the renumbering, whatever the rank placement.
//!
//! For every real sample in `tests/data/samples` and several permutations (reverse and seeded
//! random ones, [`Trace::renumber_ranks`]), each analysis runs through the core API on the
//! original and on the renumbered trace, and the answers are compared after renaming the
//! original's ranks:
//!
//! * communication matrix: permuted exactly (bytes and messages);
//! * topology: same family and dimensions, the renamed filtered graph, and a mapping of the
//!   renumbered run whose neighbour lists are exactly the graph's adjacency (a verified
//!   embedding, not necessarily the same automorphism);
//! * logical trace: same records (calls, gaps, durations) from the renamed rank, same accuracy,
//!   as many records from the automatic choice of rank; merged traces: the same program;
//! * patterns: the same per-rank patterns (symbols `S<peer>`/`R<peer>` renamed) with the same
//!   frequencies and positions, the same communication patterns with the same counts;
//! * phases: same sequence length and phase boundaries (positions and times);
//! * replay: same predicted times per configuration, same classification;
//! * similarity of a run with its renumbered self: θ = 1 and ε = 1.
//!
//! The logical trace under the automatic placement choice ([`logicalize_identified`]) reproduces
//! every point-to-point call by expansion whatever the numbering and the file format: generated
//! 3×3 6-point (K3,3,3) and 8-point (K9) stencil runs under random numberings and the real BT
//! sample renumbered, each written as text, DUMPI and OTF2 and read back. Those graphs have far
//! more automorphisms than the geometric ones, so identification's mapping alone names a program
//! move by different directions at different ranks (50–67 % reproduced before the placement was
//! built from first contacts).
//!
//! Merged logical traces are compared without partners (directions are named by a placement that
//! may differ by an automorphism of the topology). Samples that cannot give an analysis (no
//! point-to-point traffic, no identified topology) skip it with a printed reason; the test fails
//! if a sample disappears.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tracelogic_analysis::compress::compress;
use tracelogic_analysis::logical::{
    logicalize, logicalize_identified, logicalize_ranks, place_by_first_contacts, verify, ClassBytes, LogicalCall,
    LogicalTrace, Partner, PlacedBy, Placement,
};
use tracelogic_analysis::matrix::{CommMatrix, Metric};
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternAnalysis, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside, PhaseAnalysis};
use tracelogic_analysis::replay::{what_if, Network, WhatIf, WhatIfOptions, SEED_SCALES};
use tracelogic_analysis::similarity::{compare, CompareOptions};
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions, TopologyReport};
use tracelogic_model::renumber::{random_permutation, reverse_permutation};
use tracelogic_model::{match_messages, Rank, Selection, Trace};
use tracelogic_synth::{generate, Numbering, Spec, TopologySpec as SynthTopology};

/// Each trace among the samples: a folder is one trace, except `pipit-csv` whose two files are
/// two traces.
fn sample_traces() -> Vec<(String, Trace)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/samples");
    let mut sets: Vec<(String, Vec<PathBuf>)> = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e} (part of the repository)", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if name == "pipit-csv" {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
            files.sort();
            for f in files {
                sets.push((format!("{name}/{}", f.file_name().unwrap().to_string_lossy()), vec![f]));
            }
        } else {
            sets.push((name, vec![dir]));
        }
    }
    let traces: Vec<(String, Trace)> = sets
        .into_iter()
        .map(|(name, paths)| {
            let files = tracelogic_formats::fs::load_paths(&paths).unwrap_or_else(|e| panic!("{name}: {e}"));
            let trace = tracelogic_formats::read_trace(files).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, trace)
        })
        .collect();
    for expected in [
        "npb-bt.S.9",
        "npb-lu.S.8",
        "npb-mg.S.8",
        "sstmacro-dumpi-testbgp",
        "pipit-ping-pong-otf2",
        "pipit-csv/ping-pong-csv.csv",
        "profet-paraver-lulesh",
        "pyotf2-generated-4rank",
    ] {
        assert!(
            traces.iter().any(|(n, _)| n == expected),
            "sample {expected} is missing"
        );
    }
    traces
}

/// The permutations tried on a run of `n` ranks.
fn permutations(n: u32) -> Vec<(String, Vec<Rank>)> {
    let mut out = vec![("reverse".to_owned(), reverse_permutation(n))];
    for seed in [1, 2, 3] {
        out.push((format!("random:{seed}"), random_permutation(n, seed)));
    }
    out
}

fn check_matrix(name: &str, a: &Trace, b: &Trace, perm: &[Rank]) {
    let ma = CommMatrix::from_trace(a, &Selection::all());
    let mb = CommMatrix::from_trace(b, &Selection::all());
    let n = ma.ranks();
    assert_eq!(n, mb.ranks(), "{name}");
    assert_eq!(ma.nonzero(), mb.nonzero(), "{name}");
    for metric in [Metric::Bytes, Metric::Messages] {
        for s in 0..n {
            for r in 0..n {
                let (ps, pr) = (perm[s as usize], perm[r as usize]);
                assert_eq!(
                    ma.value(metric, s, r),
                    mb.value(metric, ps, pr),
                    "{name}: {metric:?} {s}->{r}"
                );
            }
        }
    }
}

fn renamed_edges(report: &TopologyReport, perm: &[Rank]) -> Vec<[u32; 2]> {
    let mut edges: Vec<[u32; 2]> = report
        .edges
        .iter()
        .map(|&[a, b]| {
            let (x, y) = (perm[a as usize], perm[b as usize]);
            [x.min(y), x.max(y)]
        })
        .collect();
    edges.sort_unstable();
    edges
}

/// The renumbered run's mapping is a bijection onto the topology's nodes whose neighbour lists
/// are exactly the adjacency of its filtered graph.
fn check_mapping_verified(name: &str, report: &TopologyReport) {
    let id = &report.identification;
    let n = id.ranks as usize;
    assert_eq!(id.mapping.len(), n, "{name}: every rank is placed");
    let mut nodes: Vec<u32> = id.mapping.iter().map(|p| p.node).collect();
    nodes.sort_unstable();
    assert_eq!(
        nodes,
        (0..n as u32).collect::<Vec<_>>(),
        "{name}: mapping is a bijection"
    );
    let mut adjacency: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &[a, b] in &report.edges {
        adjacency[a as usize].push(b);
        adjacency[b as usize].push(a);
    }
    for place in &id.mapping {
        let mut neighbours: Vec<u32> = place.neighbours.iter().map(|x| x.rank).collect();
        neighbours.sort_unstable();
        neighbours.dedup();
        let mut expected = adjacency[place.rank as usize].clone();
        expected.sort_unstable();
        assert_eq!(neighbours, expected, "{name}: neighbours of rank {}", place.rank);
    }
}

fn check_topology(name: &str, ta: &TopologyReport, tb: &TopologyReport, perm: &[Rank]) {
    assert_eq!(ta.no_point_to_point, tb.no_point_to_point, "{name}");
    let expected = renamed_edges(ta, perm);
    let mut got = tb.edges.clone();
    got.sort_unstable();
    assert_eq!(got, expected, "{name}: filtered graph renamed");
    let family = |t: &TopologyReport| {
        t.identification
            .matched
            .as_ref()
            .map(|m| (m.family.clone(), m.dims.clone()))
    };
    assert_eq!(family(ta), family(tb), "{name}: same topology");
    let mut isolated: Vec<u32> = ta.isolated_ranks.iter().map(|&r| perm[r as usize]).collect();
    isolated.sort_unstable();
    assert_eq!(tb.isolated_ranks, isolated, "{name}: isolated ranks");
    if tb.identification.matched.is_some() {
        check_mapping_verified(name, tb);
    }
}

fn identity(n: usize) -> Vec<Rank> {
    (0..n as Rank).collect()
}

/// A logical call with every direction replaced by the (renamed) rank it reaches from `rank`
/// under `placement`, the collective root renamed, and class sizes reduced to their sizes.
fn resolved(call: &LogicalCall, rank: Rank, placement: &Placement, perm: &[Rank]) -> LogicalCall {
    let mut c = call.clone();
    for op in &mut c.ops {
        if let Partner::Direction(d) = &op.partner {
            if let Some(q) = placement.neighbour(rank, d) {
                op.partner = Partner::Rank(perm[q as usize]);
            }
        }
        let mut sizes: Vec<u64> = op.bytes_by_class.iter().map(|b| b.bytes).collect();
        sizes.sort_unstable();
        op.bytes_by_class = sizes
            .into_iter()
            .map(|bytes| ClassBytes {
                directions: Vec::new(),
                bytes,
            })
            .collect();
    }
    if let Some(root) = c.collective.as_mut().and_then(|k| k.root.as_mut()) {
        *root = perm[*root as usize];
    }
    // Per-rank sizes and branches name world ranks: renamed.
    let rename = |ranks: &mut Vec<Rank>| {
        ranks.iter_mut().for_each(|r| *r = perm[*r as usize]);
        ranks.sort_unstable();
    };
    for op in &mut c.ops {
        op.bytes_by_rank.iter_mut().for_each(|e| rename(&mut e.ranks));
    }
    if let Some(only) = c.only_ranks.as_mut() {
        rename(only);
    }
    c
}

/// `merged`: check only runs without a maximal rank (merged classes); else only the others.
fn check_logical(
    name: &str,
    a: &Trace,
    b: &Trace,
    (ta, tb): (&TopologyReport, &TopologyReport),
    perm: &[Rank],
    merged: bool,
) {
    let (pa, pb) = match (Placement::from_report(ta), Placement::from_report(tb)) {
        (Ok(pa), Ok(pb)) => (pa, pb),
        (Err(ea), Err(eb)) => {
            println!("{name}: no logical trace ({ea})");
            assert_eq!(ea, eb, "{name}");
            return;
        }
        (x, y) => panic!("{name}: placement on one side only: {x:?} / {y:?}"),
    };
    let la = match logicalize(a, &pa) {
        Ok(la) => la,
        Err(ea) => {
            println!("{name}: no logical trace ({ea})");
            assert!(
                logicalize(b, &pb).is_err(),
                "{name}: logical trace after renumbering only"
            );
            return;
        }
    };
    // The automatic choice is made from the processes' traces, not their numbers, so it picks
    // the same process or one whose trace is the same without peers (equal record counts); the
    // logical trace of the same process is compared record by record below.
    let auto = logicalize(b, &pb).unwrap_or_else(|e| panic!("{name}: no logical trace after renumbering: {e}"));
    assert_eq!(auto.maximal, la.maximal, "{name}: maximal rank found");
    if (la.ranks_used.len() > 1) != merged {
        return;
    }
    let class_sizes = |l: &tracelogic_analysis::logical::LogicalTrace| {
        let mut v: Vec<usize> = l.classes.iter().map(|c| c.ranks.len()).collect();
        v.sort_unstable();
        (v, l.branches)
    };
    // With branches (ranks of one class order their operations differently, LULESH), where
    // the merge interleaves independent branches depends on the direction names, which may
    // differ by an automorphism after renumbering: then both must reproduce their run exactly.
    if class_sizes(&la) != class_sizes(&auto) || la.branches > 0 {
        // Identification's mapping after renumbering names one move by different directions at
        // different ranks (docs/logical.md step 1: `tracelogic logical` then places the ranks by
        // their first contacts): the ranks' logical sequences differ, so they are classes of
        // their own with branches. Both logical traces must still reproduce their run exactly.
        println!("{name}: {} / {} classes", la.classes.len(), auto.classes.len());
        for (t, l) in [(a, &la), (b, &auto)] {
            let v = tracelogic_analysis::logical::verify(t, l).unwrap();
            assert!(
                v.ranks_structure_differs.is_empty(),
                "{name}: {:?}",
                v.ranks_structure_differs
            );
        }
        return;
    }
    if merged {
        // No maximal rank: classes are represented and ordered by their processes' traces, not
        // their numbers. The merged program is compared without partners: directions are named
        // by a placement that may differ by an automorphism of the topology after renumbering.
        let shape = |c: &LogicalCall| {
            let mut c = resolved(c, 0, &pa, perm);
            c.ops.iter_mut().for_each(|o| o.partner = Partner::Any);
            // Which ranks a per-rank size or a branch names follows the directions too (a
            // reflected placement gives the mirror ranks): compared by size and count.
            for o in &mut c.ops {
                o.bytes_by_rank
                    .iter_mut()
                    .for_each(|e| e.ranks = (0..e.ranks.len() as Rank).collect());
                o.bytes_by_rank.sort_by_key(|e| (e.bytes, e.ranks.len()));
            }
            if let Some(only) = c.only_ranks.as_mut() {
                *only = (0..only.len() as Rank).collect();
            }
            if let Some(k) = c.collective.as_mut() {
                k.root = None;
            }
            c
        };
        for (i, (x, y)) in la.records.iter().zip(&auto.records).enumerate() {
            assert_eq!(shape(&x.call), shape(&y.call), "{name}: merged logical record {i}");
        }
        assert_eq!(la.classes.len(), auto.classes.len(), "{name}: rank classes");
        return;
    }
    assert_eq!(
        la.records.len(),
        auto.records.len(),
        "{name}: records of the automatic choice ({:?} / {:?})",
        la.ranks_used,
        auto.ranks_used
    );
    let renamed: Vec<Rank> = la.ranks_used.iter().map(|&r| perm[r as usize]).collect();
    let lb = logicalize_ranks(b, &pb, Some(&renamed)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(la.records.len(), lb.records.len(), "{name}: record count");
    // Directions are relative to the placement, which identification and canonicalisation may
    // return under another automorphism of the topology after renumbering (east and west
    // swapped): each direction is compared by the rank it reaches.
    for (i, (x, y)) in la.records.iter().zip(&lb.records).enumerate() {
        let cx = resolved(&x.call, x.rank, &pa, perm);
        let cy = resolved(&y.call, y.rank, &pb, &identity(perm.len()));
        assert_eq!(cx, cy, "{name}: logical record {i}: {:?} / {:?}", x.call, y.call);
        assert_eq!(perm[x.rank as usize], y.rank, "{name}: record {i} rank");
        assert_eq!(
            (x.gap_ns, x.duration_ns, x.call_index),
            (y.gap_ns, y.duration_ns, y.call_index),
            "{name}: record {i} timing"
        );
    }
    let acc = |l: &tracelogic_analysis::logical::LogicalTrace| {
        let x = &l.accuracy;
        (
            x.calls,
            x.dropped_calls,
            x.bytes,
            x.dropped_bytes,
            x.offset_calls,
            x.offset_bytes,
        )
    };
    assert_eq!(acc(&la), acc(&lb), "{name}: accuracy");
    assert_eq!(acc(&la), acc(&auto), "{name}: accuracy of the automatic choice");
    for ra in &la.accuracy.per_rank {
        let rb = lb
            .accuracy
            .per_rank
            .iter()
            .find(|x| x.rank == perm[ra.rank as usize])
            .unwrap_or_else(|| panic!("{name}: rank {} has no accuracy after renumbering", ra.rank));
        assert_eq!(
            (ra.calls, ra.dropped_calls, ra.bytes, ra.dropped_bytes, ra.offset_calls),
            (rb.calls, rb.dropped_calls, rb.bytes, rb.dropped_bytes, rb.offset_calls),
            "{name}: accuracy of rank {}",
            ra.rank
        );
    }
}

/// An event symbol with its peer renamed: `S3` → `S<perm[3]>`, `R3` → `R<perm[3]>`.
fn rename_symbol(symbol: &str, perm: &[Rank]) -> String {
    for prefix in ["S", "R"] {
        if let Some(peer) = symbol.strip_prefix(prefix).and_then(|p| p.parse::<usize>().ok()) {
            return format!("{prefix}{}", perm[peer]);
        }
    }
    symbol.to_owned()
}

fn patterns_and_phases(t: &Trace) -> (PatternAnalysis, PhaseAnalysis) {
    let matching = match_messages(t);
    let events = rank_events(t, false);
    let a = analyse_events(t, &matching, &events, &PatternOptions::default());
    let p = detect_phases(t, &events, &a.communication, 0.0, Outside::Own);
    (a, p)
}

/// Per-rank patterns as (symbols, frequency, positions), renamed, sorted.
type RankPatterns = BTreeMap<Rank, Vec<(Vec<String>, usize, Vec<u32>)>>;

fn rank_patterns(a: &PatternAnalysis, perm: &[Rank]) -> RankPatterns {
    a.rank_patterns
        .iter()
        .map(|(&r, ps)| {
            let mut v: Vec<_> = ps
                .iter()
                .map(|p| {
                    (
                        p.sequence.iter().map(|s| rename_symbol(s, perm)).collect::<Vec<_>>(),
                        p.frequency,
                        p.positions.clone(),
                    )
                })
                .collect();
            v.sort();
            (perm[r as usize], v)
        })
        .collect()
}

/// Communication patterns as (ranks, events per rank, occurrences, start times), renamed, sorted.
type CommPattern = (Vec<Rank>, BTreeMap<Rank, Vec<String>>, usize, Vec<u64>);

fn communication_patterns(a: &PatternAnalysis, perm: &[Rank]) -> Vec<CommPattern> {
    let mut v: Vec<CommPattern> = a
        .communication_patterns
        .iter()
        .map(|c| {
            let mut ranks: Vec<Rank> = c.ranks.iter().map(|&r| perm[r as usize]).collect();
            ranks.sort_unstable();
            let events = c
                .events
                .iter()
                .map(|(&r, ev)| (perm[r as usize], ev.iter().map(|s| rename_symbol(s, perm)).collect()))
                .collect();
            (ranks, events, c.occurrences, c.positions.clone())
        })
        .collect();
    v.sort();
    v
}

/// Per-rank patterns; with `construction` also the communication patterns built from them and
/// the phases of their sequence.
fn check_patterns(name: &str, a: &Trace, b: &Trace, perm: &[Rank], construction: bool) {
    let (pa, fa) = patterns_and_phases(a);
    let (pb, fb) = patterns_and_phases(b);
    let identity: Vec<Rank> = (0..perm.len() as u32).collect();
    assert_eq!(pa.events, pb.events, "{name}: events");
    assert_eq!(
        rank_patterns(&pa, perm),
        rank_patterns(&pb, &identity),
        "{name}: per-rank patterns"
    );
    if !construction {
        return;
    }
    assert_eq!(
        pa.events_in_patterns, pb.events_in_patterns,
        "{name}: events in patterns"
    );
    assert_eq!(
        communication_patterns(&pa, perm),
        communication_patterns(&pb, &identity),
        "{name}: communication patterns"
    );
    assert_eq!(fa.sequence_length, fb.sequence_length, "{name}: pattern sequence");
    let bounds = |p: &PhaseAnalysis| {
        p.phases
            .iter()
            .map(|ph| (ph.start, ph.end, ph.time))
            .collect::<Vec<_>>()
    };
    assert_eq!(bounds(&fa), bounds(&fb), "{name}: phase boundaries");
}

fn replay_of(t: &Trace) -> Result<WhatIf, String> {
    let options = WhatIfOptions::new(Network::presets(), SEED_SCALES.to_vec());
    what_if(t, &match_messages(t), &options).map_err(|e| e.0)
}

fn close(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1e-9)
}

fn check_replay(name: &str, a: &Trace, b: &Trace) {
    let (ra, rb) = match (replay_of(a), replay_of(b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(x), Err(y)) => {
            println!("{name}: no replay ({x})");
            assert_eq!(x, y, "{name}");
            return;
        }
        (x, y) => panic!("{name}: replay on one side only: {:?} / {:?}", x.err(), y.err()),
    };
    assert_eq!((ra.calls, ra.messages), (rb.calls, rb.messages), "{name}");
    assert_eq!(ra.warnings, rb.warnings, "{name}: replay warnings");
    assert_eq!(ra.configurations.len(), rb.configurations.len(), "{name}");
    for (x, y) in ra.configurations.iter().zip(&rb.configurations) {
        let label = &x.configuration.label;
        assert!(
            close(x.predicted_s, y.predicted_s),
            "{name} {label}: {} vs {}",
            x.predicted_s,
            y.predicted_s
        );
        let (bx, by) = (&x.breakdown, &y.breakdown);
        for (u, v) in [
            (bx.compute_s, by.compute_s),
            (bx.wait_s, by.wait_s),
            (bx.latency_term_s, by.latency_term_s),
            (bx.bandwidth_term_s, by.bandwidth_term_s),
        ] {
            assert!(close(u, v), "{name} {label}: breakdown {bx:?} vs {by:?}");
        }
    }
    let classes = |w: &WhatIf| {
        w.classification
            .iter()
            .map(|c| (c.network.clone(), c.label.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(classes(&ra), classes(&rb), "{name}: classification");
}

fn check_similarity(name: &str, a: &Trace, b: &Trace) {
    match compare(a, b, &CompareOptions::default()) {
        Ok(c) => {
            // θ is 1, or undefined when no property orders the ranks (then ε alone decides).
            assert!(
                c.theta.is_nan() || (c.theta - 1.0).abs() < 1e-9,
                "{name}: θ = {}",
                c.theta
            );
            assert!((c.epsilon - 1.0).abs() < 1e-9, "{name}: ε = {}", c.epsilon);
            assert!(c.similar, "{name}");
        }
        Err(e) => {
            println!("{name}: no comparison ({e})");
            assert_eq!(Err(e), compare(a, a, &CompareOptions::default()).map(|_| ()), "{name}");
        }
    }
}

/// Run `check` on every sample of two or more ranks and each of its permutations.
fn for_each_renumbering(check: impl Fn(&str, &Trace, &Trace, &[Rank])) {
    for (sample, trace) in sample_traces() {
        let n = trace.num_ranks();
        if n < 2 {
            println!("{sample}: {n} rank(s), nothing to renumber");
            continue;
        }
        for (label, perm) in permutations(n) {
            let name = format!("{sample} renumbered {label} {perm:?}");
            let renumbered = trace.renumber_ranks(&perm).unwrap();
            check(&name, &trace, &renumbered, &perm);
        }
    }
}

fn topology_of(t: &Trace) -> TopologyReport {
    identify_matrix(
        &CommMatrix::from_trace(t, &Selection::all()),
        &TopologyOptions::default(),
    )
}

#[test]
fn the_matrix_is_permuted_exactly() {
    for_each_renumbering(check_matrix);
}

#[test]
fn the_topology_is_the_same_with_a_verified_mapping() {
    for_each_renumbering(|name, a, b, perm| {
        let ta = topology_of(a);
        if ta.no_point_to_point {
            println!("{name}: no point-to-point traffic, no topology");
        }
        check_topology(name, &ta, &topology_of(b), perm);
    });
}

#[test]
fn the_logical_trace_has_the_same_records_and_accuracy() {
    for_each_renumbering(|name, a, b, perm| check_logical(name, a, b, (&topology_of(a), &topology_of(b)), perm, false));
}

#[test]
fn the_merged_logical_trace_is_the_same() {
    for_each_renumbering(|name, a, b, perm| check_logical(name, a, b, (&topology_of(a), &topology_of(b)), perm, true));
}

#[test]
fn per_rank_patterns_are_the_same() {
    for_each_renumbering(|name, a, b, perm| check_patterns(name, a, b, perm, false));
}

#[test]
fn communication_patterns_and_phases_are_the_same() {
    for_each_renumbering(|name, a, b, perm| check_patterns(name, a, b, perm, true));
}

#[test]
fn replay_times_and_classification_are_the_same() {
    for_each_renumbering(|name, a, b, _| check_replay(name, a, b));
}

#[test]
fn a_run_and_its_renumbered_self_are_identical() {
    for_each_renumbering(|name, a, b, _| check_similarity(name, a, b));
}

/// `trace` written in `format` (`text`, `dumpi`, `otf2`) and read back.
fn through_format(format: &str, trace: &Trace) -> Trace {
    let files = match format {
        "text" => vec![tracelogic_formats::InputFile::new(
            "run.txt",
            tracelogic_formats::text::write(trace).into_bytes(),
        )],
        "dumpi" => tracelogic_formats::dumpi::write(trace, "run"),
        "otf2" => tracelogic_formats::otf2::write(trace, "run"),
        other => panic!("no writer for {other}"),
    };
    tracelogic_formats::read_trace(files).unwrap_or_else(|e| panic!("{format}: {e}"))
}

/// The logical trace under the automatic placement choice, and the share of point-to-point
/// calls its expansion reproduces over all ranks.
fn logical_and_share(name: &str, trace: &Trace) -> (LogicalTrace, f64) {
    let logical = logicalize_identified(trace, &topology_of(trace), None).unwrap_or_else(|e| panic!("{name}: {e}"));
    let share = verify(trace, &logical).unwrap().overall_share;
    (logical, share)
}

const FORMATS: [&str; 3] = ["text", "dumpi", "otf2"];

#[test]
fn renumbered_complete_multipartite_stencils_are_reproduced_in_every_format() {
    for topology in ["stencil6:3x3", "stencil8:3x3"] {
        let mut lengths = Vec::new();
        let numberings = [(Numbering::RowMajor, 1)]
            .into_iter()
            .chain((1..=5).map(|seed| (Numbering::Random, seed)));
        for (numbering, seed) in numberings {
            let spec = Spec {
                topology: SynthTopology::parse(topology).unwrap(),
                numbering,
                seed,
                iterations: 3,
                ..Spec::default()
            };
            let generated = generate(&spec).unwrap();
            for format in FORMATS {
                let name = format!("{topology} {numbering:?} seed {seed} via {format}");
                let trace = through_format(format, &generated);
                let (logical, share) = logical_and_share(&name, &trace);
                let from = logical.directions_from.as_ref().expect("a chosen placement says why");
                assert_eq!(share, 1.0, "{name}: reproduced share ({})", from.reason);
                assert_eq!(logical.accuracy.dropped_calls, 0, "{name}");
                assert_eq!(from.agreement, 1.0, "{name}: {}", from.reason);
                if from.identified_agreement < 1.0 {
                    assert_eq!(from.placed_by, PlacedBy::FirstContacts, "{name}: {}", from.reason);
                }
                lengths.push((name, compress(&logical.records).compressed_length));
            }
        }
        assert!(
            lengths.iter().all(|(_, l)| *l == lengths[0].1),
            "{topology}: the compressed program differs: {lengths:?}"
        );
    }
}

#[test]
fn renumbered_bt_is_reproduced_in_every_format() {
    let (_, bt) = sample_traces()
        .into_iter()
        .find(|(name, _)| name == "npb-bt.S.9")
        .expect("the BT sample");
    let (original, share) = logical_and_share("BT", &bt);
    assert_eq!(share, 1.0, "BT as recorded");
    let program = compress(&original.records).compressed_length;
    let mut perms = permutations(bt.num_ranks());
    perms.extend((4..=6).map(|seed| (format!("random:{seed}"), random_permutation(bt.num_ranks(), seed))));
    for (label, perm) in perms {
        let renumbered = bt.renumber_ranks(&perm).unwrap();
        for format in FORMATS {
            let name = format!("BT renumbered {label} via {format}");
            let trace = through_format(format, &renumbered);
            let (logical, share) = logical_and_share(&name, &trace);
            let from = logical.directions_from.as_ref().unwrap();
            assert_eq!(share, 1.0, "{name}: reproduced share ({})", from.reason);
            assert_eq!(logical.topology.label, original.topology.label, "{name}");
            assert_eq!(compress(&logical.records).compressed_length, program, "{name}");
        }
    }
}

/// Direction → neighbour of every rank in `report`'s mapping, ranks renamed by `perm`.
fn directions_renamed(report: &TopologyReport, perm: &[Rank]) -> BTreeMap<Rank, BTreeMap<String, Rank>> {
    report
        .identification
        .mapping
        .iter()
        .map(|p| {
            let by_direction = p
                .neighbours
                .iter()
                .map(|n| (n.direction.to_string(), perm[n.rank as usize]))
                .collect();
            (perm[p.rank as usize], by_direction)
        })
        .collect()
}

/// True when one renaming of directions, the same at every rank, turns `a` into `b` (the two
/// placements differ by a symmetry of the topology's geometry, e.g. a reflection that swaps east
/// and west everywhere, and name every program move by one direction at every rank).
fn same_up_to_direction_renaming(
    a: &BTreeMap<Rank, BTreeMap<String, Rank>>,
    b: &BTreeMap<Rank, BTreeMap<String, Rank>>,
) -> bool {
    let mut renaming: BTreeMap<&str, &str> = BTreeMap::new();
    a.len() == b.len()
        && a.iter().all(|(rank, by_direction)| {
            let Some(other) = b.get(rank) else { return false };
            by_direction.len() == other.len()
                && by_direction.iter().all(|(d, neighbour)| {
                    let Some((e, _)) = other.iter().find(|(_, m)| *m == neighbour) else {
                        return false;
                    };
                    *renaming.entry(d.as_str()).or_insert(e.as_str()) == e.as_str()
                })
        })
}

/// `tracelogic topology` on a renumbered NPB BT (the 3x3 6-point stencil, K3,3,3: 1,296
/// automorphisms, few of them geometric) shows coordinates whose directions are the program's
/// whatever the numbering: every rank's neighbour in each direction is the renamed one of the
/// recorded run, up to one renaming of directions at every rank (a symmetry of the grid), where
/// identification's isomorphism alone named one move by different directions at different ranks.
#[test]
fn the_topology_mapping_follows_a_renumbered_bt() {
    let (_, bt) = sample_traces()
        .into_iter()
        .find(|(name, _)| name.starts_with("npb-bt"))
        .expect("the NPB BT sample");
    let mut recorded = topology_of(&bt);
    place_by_first_contacts(&bt, &mut recorded);
    let n = bt.num_ranks();
    let mut moved_before = 0;
    for (label, perm) in permutations(n) {
        let renumbered = bt.renumber_ranks(&perm).unwrap();
        let mut report = topology_of(&renumbered);
        let expected = directions_renamed(&recorded, &perm);
        if !same_up_to_direction_renaming(&expected, &directions_renamed(&report, &identity(n as usize))) {
            moved_before += 1;
        }
        place_by_first_contacts(&renumbered, &mut report);
        let name = format!("BT renumbered {label}");
        check_mapping_verified(&name, &report);
        let got = directions_renamed(&report, &identity(n as usize));
        assert!(
            same_up_to_direction_renaming(&expected, &got),
            "{name}: placed by {:?}\n{got:?}\nexpected, up to a renaming of directions:\n{expected:?}",
            report.placed_by
        );
    }
    assert!(
        moved_before > 0,
        "identification's mapping alone followed every renumbering: the test shows nothing"
    );
}
