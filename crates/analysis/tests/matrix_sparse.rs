//! The sparse communication matrix against the dense computation it replaced: the dense
//! reference below is the previous implementation (row-major `ranks²` tables, the filter and
//! the topology's pair volumes over them), written out here so the two can be compared on
//! generated traces of every synth style, selections, self-sends, peers outside the world and
//! empty traffic. Plus a 65,536-rank torus, whose dense matrix would take 68 GB.

use tracelogic_analysis::matrix::{CommMatrix, Metric};
use tracelogic_analysis::topology::{identify_matrix, pair_volumes, PairVolume, TopologyOptions};
use tracelogic_graph::TopologySpec;
use tracelogic_model::{CallKind, P2pDir, Selection, Trace, COMM_WORLD, NO_CALLPATH};
use tracelogic_synth::{generate, CollectiveSpec, Noise, Numbering, Spec, Style};

/// The previous dense matrix: row-major `ranks × ranks` bytes and messages.
struct Dense {
    n: usize,
    bytes: Vec<u64>,
    messages: Vec<u64>,
}

fn dense(trace: &Trace, selection: &Selection) -> Dense {
    let n = trace.num_ranks() as usize;
    let mut d = Dense {
        n,
        bytes: vec![0; n * n],
        messages: vec![0; n * n],
    };
    for rt in &trace.ranks {
        if !selection.selects_rank(trace, rt.rank) {
            continue;
        }
        let p = &rt.p2p;
        for i in 0..p.len() {
            let peer = p.peer[i];
            if p.dir[i] != P2pDir::Send || peer as usize >= n || !selection.selects_rank(trace, peer) {
                continue;
            }
            if !selection.selects_p2p(trace, rt.rank, i) {
                continue;
            }
            let at = rt.rank as usize * n + peer as usize;
            d.bytes[at] = d.bytes[at].saturating_add(p.bytes.at(i));
            d.messages[at] += 1;
        }
    }
    d
}

/// The previous filter: binary table, removed entries, removed share.
fn dense_filter(d: &Dense, metric: Metric, pct: f64) -> (Vec<u8>, u64, f64) {
    let values = match metric {
        Metric::Bytes => &d.bytes,
        Metric::Messages => &d.messages,
    };
    let off_diagonal = |i: usize| i / d.n.max(1) != i % d.n.max(1);
    let max = (0..values.len())
        .filter(|&i| off_diagonal(i))
        .map(|i| values[i])
        .max()
        .unwrap_or(0);
    let cut = pct / 100.0 * max as f64;
    let mut binary = vec![0u8; values.len()];
    let (mut removed_entries, mut removed) = (0u64, 0u64);
    for (i, &v) in values.iter().enumerate() {
        if v == 0 {
            continue;
        }
        if off_diagonal(i) && v as f64 >= cut {
            binary[i] = 1;
        } else {
            removed_entries += 1;
            removed += v;
        }
    }
    let total: u64 = values.iter().sum();
    let share = if total == 0 { 0.0 } else { removed as f64 / total as f64 };
    (binary, removed_entries, share)
}

/// The previous pair volumes of the topology stage: every `i < j` of the dense table.
fn dense_pairs(d: &Dense) -> (Vec<PairVolume>, &'static str) {
    let total_bytes = d.bytes.iter().fold(0u64, |t, &b| t.saturating_add(b));
    let (vals, metric) = if total_bytes == 0 {
        (&d.messages, "messages")
    } else {
        (&d.bytes, "bytes")
    };
    let mut pairs = Vec::new();
    for i in 0..d.n {
        for j in i + 1..d.n {
            let (x, y) = (vals[i * d.n + j], vals[j * d.n + i]);
            if x > 0 || y > 0 {
                pairs.push((i as u32, j as u32, x.max(y), x.saturating_add(y)));
            }
        }
    }
    pairs.sort_by(|x, y| y.2.cmp(&x.2).then((x.0, x.1).cmp(&(y.0, y.1))));
    (pairs, metric)
}

/// Everything the sparse matrix answers equals the dense reference on `trace` under `selection`.
fn assert_same(trace: &Trace, selection: &Selection, what: &str) {
    let d = dense(trace, selection);
    let m = CommMatrix::from_trace(trace, selection);
    assert_eq!(m.ranks() as usize, d.n, "{what}");
    assert_eq!(m.dense_rows(Metric::Bytes).concat(), d.bytes, "{what}: bytes");
    assert_eq!(m.dense_rows(Metric::Messages).concat(), d.messages, "{what}: messages");
    let stored: Vec<usize> = m.entries().map(|e| e.from as usize * d.n + e.to as usize).collect();
    let nonzero: Vec<usize> = (0..d.n * d.n).filter(|&i| d.messages[i] > 0).collect();
    assert_eq!(
        stored, nonzero,
        "{what}: the stored entries are the non-zero ones, in row-major order"
    );
    for (k, e) in m.entries().enumerate() {
        assert_eq!(m.get(e.from, e.to), Some(e), "{what}");
        assert_eq!(m.position(e.from, e.to), Some(k), "{what}");
    }
    for from in 0..d.n as u32 {
        for to in 0..d.n as u32 {
            let i = from as usize * d.n + to as usize;
            assert_eq!(
                m.get(from, to).is_none(),
                d.messages[i] == 0,
                "{what}: get({from}, {to})"
            );
            assert_eq!(m.value(Metric::Bytes, from, to), d.bytes[i], "{what}");
        }
    }
    assert_eq!(m.total(Metric::Bytes), d.bytes.iter().sum::<u64>(), "{what}");
    assert_eq!(m.total(Metric::Messages), d.messages.iter().sum::<u64>(), "{what}");
    assert_eq!(m.is_empty(), d.messages.iter().all(|&x| x == 0), "{what}");
    for metric in [Metric::Bytes, Metric::Messages] {
        for pct in [0.0, 1.0, 5.0, 50.0, 100.0, f64::NAN] {
            let f = m.filter(metric, pct);
            let (binary, removed_entries, share) = dense_filter(&d, metric, if pct.is_nan() { 0.0 } else { pct });
            assert_eq!(f.dense_rows(&m).concat(), binary, "{what}: {metric:?} {pct}%");
            assert_eq!(f.removed_entries, removed_entries, "{what}: {metric:?} {pct}%");
            assert_eq!(f.removed_share, share, "{what}: {metric:?} {pct}%");
            assert_eq!(f.kept_entries, binary.iter().map(|&b| b as u64).sum::<u64>(), "{what}");
            let edges: Vec<usize> = f.edges(&m).map(|e| e.from as usize * d.n + e.to as usize).collect();
            let ones: Vec<usize> = (0..binary.len()).filter(|&i| binary[i] == 1).collect();
            assert_eq!(edges, ones, "{what}: {metric:?} {pct}%");
        }
    }
    assert_eq!(pair_volumes(&m), dense_pairs(&d), "{what}: pair volumes");
}

fn spec(topology: &str, style: Style, numbering: Numbering, noise: bool, seed: u64) -> Spec {
    Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        numbering,
        seed,
        iterations: 4,
        style,
        noise: noise.then_some(Noise {
            fraction: 0.3,
            percent: 2.0,
        }),
        collectives: vec![CollectiveSpec {
            op: tracelogic_model::CollectiveOp::Allreduce,
            every: 2,
            bytes: 8,
        }],
        ..Spec::default()
    }
}

fn selections(trace: &Trace) -> Vec<(&'static str, Selection)> {
    let (start, end) = trace.span();
    let n = trace.num_ranks();
    vec![
        ("everything", Selection::all()),
        (
            "every other rank, listed backwards",
            Selection {
                ranks: Some((0..n).rev().step_by(2).collect()),
                ..Default::default()
            },
        ),
        (
            "first half of the time",
            Selection {
                from: Some(start),
                to: Some(start + (end - start) / 2),
                ..Default::default()
            },
        ),
        (
            "non-blocking sends only",
            Selection {
                kinds: Some(vec![CallKind::Isend]),
                ..Default::default()
            },
        ),
        (
            "messages of at least 100 bytes",
            Selection {
                min_bytes: Some(100),
                ..Default::default()
            },
        ),
        (
            "MPI_COMM_WORLD",
            Selection {
                comm: Some(COMM_WORLD),
                ..Default::default()
            },
        ),
        (
            "a communicator that does not exist",
            Selection {
                comm: Some(999),
                ..Default::default()
            },
        ),
    ]
}

#[test]
fn sparse_equals_dense_on_generated_traces_of_every_style() {
    let cases = [
        ("torus:4x4x2", Style::Isend, Numbering::Random, true),
        ("torus:6x4", Style::Sendrecv, Numbering::Partial(0.66), true),
        ("grid:5x3", Style::Blocking, Numbering::RowMajor, false),
        ("grid:4x5", Style::Wavefront, Numbering::Random, true),
        ("hypercube:5", Style::Isend, Numbering::Random, false),
        ("ring:7", Style::Sendrecv, Numbering::RowMajor, true),
        // Rows whose peers are sorted (6 of 512 ranks) and rows read in rank order (all peers).
        ("torus:8x8x8", Style::Isend, Numbering::Random, true),
        ("all-to-all:40", Style::Isend, Numbering::Random, false),
    ];
    for (seed, (topology, style, numbering, noise)) in cases.into_iter().enumerate() {
        let trace = generate(&spec(topology, style, numbering, noise, seed as u64)).unwrap();
        for (name, selection) in selections(&trace) {
            assert_same(&trace, &selection, &format!("{topology} {style:?}, {name}"));
        }
    }
}

fn send(t: &mut Trace, from: u32, to: u32, bytes: u64, at: u64) {
    let c = t.push_call(from, "MPI_Send", at, at + 1, NO_CALLPATH, 0);
    t.push_p2p(from, c, c, P2pDir::Send, to, 0, 0, bytes);
}

#[test]
fn sparse_equals_dense_on_self_sends_outside_peers_and_empty_traffic() {
    let mut t = Trace::new("test", "test", 5);
    send(&mut t, 0, 0, 4000, 1);
    send(&mut t, 0, 1, 10, 2);
    send(&mut t, 0, 1, 0, 3);
    send(&mut t, 1, 9, 500, 4);
    send(&mut t, 2, 4, 0, 5);
    send(&mut t, 4, 2, 300, 6);
    send(&mut t, 3, 3, 7, 7);
    send(&mut t, 4, u32::MAX, 7, 8);
    for (name, s) in selections(&t) {
        assert_same(&t, &s, &format!("hand-made, {name}"));
    }
    let zero_bytes = {
        let mut z = Trace::new("test", "test", 3);
        send(&mut z, 0, 1, 0, 1);
        send(&mut z, 1, 2, 0, 2);
        send(&mut z, 2, 1, 0, 3);
        z
    };
    assert_same(&zero_bytes, &Selection::all(), "zero-byte messages (pairs by messages)");
    assert_same(&Trace::new("test", "test", 6), &Selection::all(), "no traffic");
    assert_same(&Trace::new("test", "test", 0), &Selection::all(), "no ranks");
    let only_outside = {
        let mut o = Trace::new("test", "test", 2);
        send(&mut o, 1, 2, 64, 1);
        o
    };
    assert_same(&only_outside, &Selection::all(), "only a peer outside the world");
}

/// A 65,536-rank 3-D torus: the dense matrix was refused (68 GB); the sparse one holds its
/// 6 × 65,536 entries in a few MB and the topology is identified from it.
#[test]
fn a_65536_rank_torus_gets_its_matrix_and_topology() {
    let trace = generate(&Spec {
        topology: TopologySpec::parse("torus:64x32x32").unwrap(),
        iterations: 1,
        compute_ns: 1000,
        ..Spec::default()
    })
    .unwrap();
    let n = trace.num_ranks();
    assert_eq!(n, 65_536);
    let m = CommMatrix::from_trace(&trace, &Selection::all());
    assert_eq!(m.nonzero(), 6 * 65_536);
    assert!(m
        .entries()
        .all(|e| e.messages == 1 && e.bytes == 4096 && e.from != e.to));
    assert!(
        m.row(0)
            .all(|e| [1, 63, 64, 64 * 31, 64 * 32, 64 * 32 * 31].contains(&e.to)),
        "{:?}",
        m.row(0).collect::<Vec<_>>()
    );
    assert!(m.heap_bytes() < 16 << 20, "{} bytes", m.heap_bytes());
    let f = m.filter(Metric::Bytes, 5.0);
    assert_eq!((f.kept_entries, f.removed_entries), (6 * 65_536, 0));
    let report = identify_matrix(&m, &TopologyOptions::default());
    assert_eq!(report.edges.len(), 3 * 65_536);
    let matched = report.identification.matched.as_ref().expect("the torus is identified");
    assert_eq!(matched.family, "torus", "{}", matched.label);
    let mut dims = matched.dims.clone();
    dims.sort_unstable();
    assert_eq!(dims, vec![32, 32, 64]);
}
