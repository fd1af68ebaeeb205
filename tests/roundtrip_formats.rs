//! Generate → write (text, DUMPI, OTF2) → read back: the model must come back unchanged in
//! calls (function, kind, order), point-to-point operations (peer, tag, bytes, communicator,
//! direction, posting and completing call), collectives and communicators, with times equal
//! within the format's resolution (all three store nanoseconds).

use tracelogic_formats::{read_trace, InputFile};
use tracelogic_model::{match_messages, Trace};
use tracelogic_synth::{generate_with_truth, Numbering, Phase, Spec, Style, TopologySpec, Truth};

/// One trace exercising every style, phases on different topologies (so some ranks idle in a
/// phase), noise, imbalance, per-direction sizes and all three collectives.
fn rich_spec() -> Spec {
    let phase = |topology: &str, style: Style, iterations: u32, bytes: u64| Phase {
        topology: Some(TopologySpec::parse(topology).unwrap()),
        style: Some(style),
        iterations: Some(iterations),
        bytes: Some(bytes),
        ..Phase::default()
    };
    let mut spec = Spec {
        topology: TopologySpec::parse("torus:4x4").unwrap(),
        numbering: Numbering::Random,
        seed: 2024,
        imbalance: 0.25,
        compute_ns: 3_333,
        noise: Some("0.25:3%".parse().unwrap()),
        collectives: vec![
            "allreduce:2".parse().unwrap(),
            "barrier:3".parse().unwrap(),
            "bcast:3:1Ki".parse().unwrap(),
        ],
        phases: vec![
            phase("torus:4x4", Style::Isend, 3, 4096),
            phase("ring:8", Style::Sendrecv, 2, 100_000),
            phase("binary-tree:15", Style::Blocking, 2, 24),
            phase("grid:4x4", Style::Wavefront, 2, 1500),
        ],
        ..Spec::default()
    };
    spec.direction_bytes.insert("west".into(), 777);
    spec
}

fn generated() -> (Trace, Truth) {
    let (trace, truth) = generate_with_truth(&rich_spec()).unwrap();
    let m = match_messages(&trace);
    assert_eq!((m.unmatched_sends, m.unmatched_recvs), (0, 0));
    (trace, truth)
}

/// Compare `back` (read from files) with `orig` (generated): everything the model promises a
/// reader fills, with times within `tolerance_ns`.
fn assert_same_model(orig: &Trace, back: &Trace, tolerance_ns: u64, format: &str) {
    assert_eq!(back.num_ranks(), orig.num_ranks(), "{format}: ranks");
    assert_eq!(back.comms.len(), orig.comms.len(), "{format}: communicators");
    for (a, b) in orig.comms.iter().zip(&back.comms) {
        assert_eq!(a.members, b.members, "{format}: members of {}", a.name);
    }
    assert_eq!(back.comms[0].name, "MPI_COMM_WORLD", "{format}");
    // Times may be rebased on the earliest event; the generator starts at 0.
    let shift = back.span().0 as i128 - orig.span().0 as i128;
    assert!(
        shift.unsigned_abs() <= tolerance_ns as u128,
        "{format}: time origin moved by {shift} ns"
    );
    for (o, b) in orig.ranks.iter().zip(&back.ranks) {
        let r = o.rank;
        let what = |x: &str| format!("{format}: rank {r}: {x}");
        assert_eq!(b.rank, r);
        assert_eq!(b.calls.len(), o.calls.len(), "{}", what("call count"));
        for i in 0..o.calls.len() {
            assert_eq!(
                back.call_name(r, i as u32),
                orig.call_name(r, i as u32),
                "{}",
                what(&format!("function of call {i}"))
            );
            assert_eq!(
                b.calls.kind[i],
                o.calls.kind[i],
                "{}",
                what(&format!("kind of call {i}"))
            );
            for (x, y, end) in [
                (b.calls.enter(i), o.calls.enter(i), "enter"),
                (b.calls.exit(i), o.calls.exit(i), "exit"),
            ] {
                assert!(
                    x.abs_diff(y) <= tolerance_ns,
                    "{}",
                    what(&format!(
                        "{end} of call {i} ({}): read {x}, wrote {y}",
                        orig.call_name(r, i as u32)
                    ))
                );
            }
        }
        let (op, bp) = (&o.p2p, &b.p2p);
        assert_eq!(bp.len(), op.len(), "{}", what("p2p count"));
        assert_eq!(bp.post, op.post, "{}", what("p2p posting calls"));
        assert_eq!(
            bp.completes().collect::<Vec<_>>(),
            op.completes().collect::<Vec<_>>(),
            "{}",
            what("p2p completing calls")
        );
        assert_eq!(bp.dir, op.dir, "{}", what("p2p directions"));
        assert_eq!(bp.peer, op.peer, "{}", what("p2p peers"));
        assert_eq!(bp.tag, op.tag, "{}", what("p2p tags"));
        assert_eq!(bp.comm, op.comm, "{}", what("p2p communicators"));
        assert_eq!(bp.bytes, op.bytes, "{}", what("p2p bytes"));
        let (oc, bc) = (&o.collectives, &b.collectives);
        assert_eq!(bc.call, oc.call, "{}", what("collective calls"));
        assert_eq!(bc.op, oc.op, "{}", what("collective ops"));
        assert_eq!(bc.comm, oc.comm, "{}", what("collective communicators"));
        assert_eq!(bc.root, oc.root, "{}", what("collective roots"));
        assert_eq!(bc.bytes_sent, oc.bytes_sent, "{}", what("collective bytes sent"));
        assert_eq!(bc.bytes_recv, oc.bytes_recv, "{}", what("collective bytes received"));
    }
    let m = match_messages(back);
    assert_eq!(
        (m.unmatched_sends, m.unmatched_recvs),
        (0, 0),
        "{format}: matching after reading"
    );
    assert_eq!(m, match_messages(orig), "{format}: matched messages");
}

#[test]
fn roundtrip_text() {
    let (trace, _) = generated();
    let text = tracelogic_formats::text::write(&trace);
    let back = read_trace(vec![InputFile::new("generated.txt", text.into_bytes())]).unwrap();
    assert_eq!(back.format, "text");
    assert_same_model(&trace, &back, 0, "text");
}

#[test]
fn roundtrip_dumpi() {
    let (trace, _) = generated();
    let files = tracelogic_formats::dumpi::write(&trace, "generated");
    assert_eq!(files.iter().filter(|f| f.name.ends_with(".bin")).count(), 16);
    let back = read_trace(files).unwrap();
    assert_eq!(back.format, "dumpi");
    assert_same_model(&trace, &back, 0, "dumpi");
}

#[test]
fn roundtrip_otf2() {
    let (trace, _) = generated();
    let files = tracelogic_formats::otf2::write(&trace, "generated");
    let back = read_trace(files).unwrap();
    assert_eq!(back.format, "otf2");
    assert_same_model(&trace, &back, 0, "otf2");
}

/// Every style and every family alone, through the text format (the cheapest exact one), so a
/// mismatch names the feature that broke.
#[test]
fn roundtrip_text_each_family_and_style() {
    for family in tracelogic_synth::Family::ALL {
        let topology = [&[4u32, 3][..], &[3, 3, 2], &[3], &[2, 7], &[7]]
            .iter()
            .find_map(|d| TopologySpec::new(family, d.to_vec()).ok().filter(|t| t.num_nodes() > 1))
            .unwrap();
        for style in [Style::Isend, Style::Sendrecv, Style::Blocking] {
            let spec = Spec {
                topology: topology.clone(),
                style,
                iterations: 2,
                numbering: Numbering::Partial(0.5),
                ..Spec::default()
            };
            let (trace, _) = generate_with_truth(&spec).unwrap();
            let back = read_trace(vec![InputFile::new("t.txt", tracelogic_formats::text::write(&trace))]).unwrap();
            assert_same_model(&trace, &back, 0, &format!("text {} {style}", topology.label()));
        }
    }
}

/// The comparison itself must notice a one-field difference, or the round trips prove nothing.
#[test]
fn the_comparison_notices_single_changes() {
    let (trace, _) = generated();
    type Change = (&'static str, fn(&mut Trace));
    let changes: [Change; 5] = [
        ("tag", |t| {
            let p = &mut t.ranks[3].p2p;
            p.tag.set(2, p.tag[2] + 1)
        }),
        ("bytes", |t| {
            let p = &mut t.ranks[5].p2p;
            p.bytes.set(0, p.bytes.at(0) + 1)
        }),
        ("exit time", |t| {
            let c = &mut t.ranks[7].calls;
            c.set_exit(4, c.exit(4) + 2)
        }),
        ("completing call", |t| {
            let p = &mut t.ranks[1].p2p;
            p.set_complete(0, p.complete(0) + 1)
        }),
        ("collective root", |t| t.ranks[0].collectives.root[0] = 3),
    ];
    for (what, change) in changes {
        let mut changed = trace.clone();
        change(&mut changed);
        let caught = std::panic::catch_unwind(|| assert_same_model(&trace, &changed, 1, "mutated"));
        assert!(caught.is_err(), "a changed {what} went unnoticed");
    }
}

/// A recorded trace whose program calls `MPI_Type_size` (LAMMPS, corpus `lammps-melt-8`; its
/// reading agrees with `dumpi2ascii`, `tests/apps_summary.rs`) written as DUMPI and read back:
/// the same model. The writer used to put a traced `MPI_Type_size` down as the size 0 of
/// `MPI_BYTE`, the type it writes every message in, so every message read back as 0 bytes.
#[test]
fn roundtrip_dumpi_of_a_recorded_trace_keeps_its_bytes() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps/lammps-melt-8");
    let trace = read_trace(tracelogic_formats::fs::load_paths(&[dir]).unwrap()).unwrap();
    assert!(
        trace
            .ranks
            .iter()
            .any(|rt| (0..rt.calls.len() as u32).any(|i| trace.call_name(rt.rank, i) == "MPI_Type_size")),
        "the recording calls MPI_Type_size"
    );
    let back = read_trace(tracelogic_formats::dumpi::write(&trace, "melt")).unwrap();
    assert_same_model(&trace, &back, 0, "dumpi of lammps-melt-8");
}
