//! Properties of whole traces, over random generated programs (random topology, numbering,
//! exchange style, iterations, message sizes, imbalance, collectives and noise):
//!
//! * message matching is invariant under renumbering the ranks (the matches of the renumbered
//!   trace are the renumbered matches), also with receives turned into `MPI_ANY_TAG`;
//! * the native text format writes and reads back every trace exactly;
//! * one replay under K network configurations gives, for each, what K separate single-configuration
//!   replays give.

use proptest::prelude::*;
use tracelogic_analysis::replay::{replay, Configuration, Sweep};
use tracelogic_formats::{text, InputFile, NoProgress};
use tracelogic_model::{match_messages, CollectiveOp, Matching, P2pDir, Rank, Trace, ANY_TAG};
use tracelogic_synth::{generate, CollectiveSpec, Family, Noise, Numbering, Spec, Style, TopologySpec};

/// A small random program: at most 36 ranks and 4 iterations, so one trace has a few thousand calls.
fn spec() -> impl Strategy<Value = Spec> {
    let topology = prop_oneof![
        (2u32..=6, 2u32..=6).prop_map(|(a, b)| TopologySpec::new(Family::Grid, vec![a, b]).unwrap()),
        (3u32..=5, 3u32..=5).prop_map(|(a, b)| TopologySpec::new(Family::Torus, vec![a, b]).unwrap()),
        (3u32..=24).prop_map(|n| TopologySpec::new(Family::Ring, vec![n]).unwrap()),
        (2u32..=5).prop_map(|d| TopologySpec::new(Family::Hypercube, vec![d]).unwrap()),
        (4u32..=20).prop_map(|n| TopologySpec::new(Family::BinaryTree, vec![n]).unwrap()),
        (3u32..=12).prop_map(|n| TopologySpec::new(Family::Star, vec![n]).unwrap()),
        (3u32..=6).prop_map(|n| TopologySpec::new(Family::AllToAll, vec![n]).unwrap()),
        (3u32..=4, 3u32..=4).prop_map(|(a, b)| TopologySpec::new(Family::Stencil8, vec![a, b]).unwrap()),
    ];
    let numbering = prop_oneof![
        Just(Numbering::RowMajor),
        Just(Numbering::Random),
        (0.1f64..0.9).prop_map(Numbering::Partial)
    ];
    let style = prop_oneof![Just(Style::Isend), Just(Style::Sendrecv), Just(Style::Blocking)];
    let collective = prop_oneof![
        (1u32..=3, 0u64..=64).prop_map(|(every, bytes)| CollectiveSpec {
            op: CollectiveOp::Allreduce,
            every,
            bytes
        }),
        (1u32..=3).prop_map(|every| CollectiveSpec {
            op: CollectiveOp::Barrier,
            every,
            bytes: 0
        }),
        (1u32..=3, 1u64..=1024).prop_map(|(every, bytes)| CollectiveSpec {
            op: CollectiveOp::Bcast,
            every,
            bytes
        }),
    ];
    let noise =
        proptest::option::of((0.1f64..0.5, 1.0f64..10.0).prop_map(|(fraction, percent)| Noise { fraction, percent }));
    (
        topology,
        numbering,
        any::<u64>(),
        1u32..=4,
        1u64..=100_000,
        0u64..=50_000,
        0.0f64..2.0,
        style,
        proptest::collection::vec(collective, 0..=2),
        noise,
    )
        .prop_map(
            |(topology, numbering, seed, iterations, bytes, compute_ns, imbalance, style, collectives, noise)| Spec {
                topology,
                numbering,
                seed,
                iterations,
                bytes,
                compute_ns,
                imbalance,
                style,
                collectives,
                noise,
                ..Spec::default()
            },
        )
}

/// A random program's trace and a random permutation of its ranks.
fn trace_and_permutation() -> impl Strategy<Value = (Trace, Vec<Rank>)> {
    spec().prop_flat_map(|spec| {
        let trace = generate(&spec).expect("the generator accepts every spec of the strategy");
        let n = trace.num_ranks();
        (Just(trace), Just((0..n).collect::<Vec<Rank>>()).prop_shuffle())
    })
}

/// `trace` with world rank r renamed `perm[r]` everywhere ([`Trace::renumber_ranks`]).
fn renumber(trace: &Trace, perm: &[Rank]) -> Trace {
    trace.renumber_ranks(perm).expect("the strategy draws permutations")
}

/// The messages of `matching` with ranks renamed by `perm`, in the order matching sorts them.
fn renumbered_messages(matching: &Matching, perm: &[Rank]) -> Vec<(Rank, u32, Rank, u32)> {
    let mut out: Vec<_> = matching
        .messages
        .iter()
        .map(|m| (perm[m.sender as usize], m.send_op, perm[m.receiver as usize], m.recv_op))
        .collect();
    out.sort_unstable();
    out
}

fn messages(matching: &Matching) -> Vec<(Rank, u32, Rank, u32)> {
    matching
        .messages
        .iter()
        .map(|m| (m.sender, m.send_op, m.receiver, m.recv_op))
        .collect()
}

/// Every field of the model that a reader fills, as JSON (the model has no `PartialEq`).
fn model_json(trace: &Trace) -> serde_json::Value {
    serde_json::json!({
        "ranks": trace.ranks,
        "comms": trace.comms,
        "functions": trace.functions.names(),
        "regions": trace.regions.names(),
        "callpaths": trace.callpaths,
        "metrics": trace.metrics.names(),
        "meta": trace.meta,
        "warnings": trace.warnings,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn matching_is_invariant_under_rank_renumbering((trace, perm) in trace_and_permutation(), wildcard_every in 0usize..4) {
        // Turn every `wildcard_every`-th receive into MPI_ANY_TAG (0: none). The generator
        // tags each message with its direction, so this exercises the wildcard path while
        // the result stays defined by the per-sender order, which renumbering keeps.
        let mut trace = trace;
        if wildcard_every > 0 {
            for rt in &mut trace.ranks {
                let p = &mut rt.p2p;
                for i in (0..p.len()).filter(|&i| p.dir[i] == P2pDir::Recv && i % wildcard_every == 0) {
                    p.tag.set(i, ANY_TAG);
                }
            }
        }
        let original = match_messages(&trace);
        let renumbered = match_messages(&renumber(&trace, &perm));
        prop_assert_eq!(original.unmatched_sends, renumbered.unmatched_sends);
        prop_assert_eq!(original.unmatched_recvs, renumbered.unmatched_recvs);
        prop_assert_eq!(renumbered_messages(&original, &perm), messages(&renumbered));
        if wildcard_every == 0 {
            prop_assert_eq!(original.unmatched_sends + original.unmatched_recvs, 0, "generated traces match fully");
        }
    }

    #[test]
    fn text_write_then_read_gives_back_the_trace(spec in spec()) {
        let trace = generate(&spec).unwrap();
        let written = text::write(&trace);
        let read = text::read(&[InputFile::new("trace.txt", written.clone())], &mut NoProgress)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(model_json(&read), model_json(&trace));
        prop_assert_eq!(read.source.as_str(), trace.source.as_str());
        prop_assert_eq!(text::write(&read), written);
    }

    #[test]
    fn replay_of_k_configurations_equals_k_single_replays(
        spec in spec(),
        networks in proptest::collection::vec((1e-7f64..1e-4, 1e7f64..1e11), 1..=6),
    ) {
        let trace = generate(&spec).unwrap();
        let matching = match_messages(&trace);
        let configs: Vec<Configuration> = networks
            .iter()
            .enumerate()
            .map(|(i, &(latency_s, bandwidth_bytes_per_s))| Configuration {
                network: format!("net{i}"),
                label: "(BW, L)".into(),
                sweep: Sweep::Base,
                scale: 1.0,
                latency_s,
                bandwidth_bytes_per_s,
            })
            .collect();
        let together = replay(&trace, &matching, &configs, None, true).map_err(|e| TestCaseError::fail(e.0))?;
        prop_assert_eq!(together.configurations.len(), configs.len());
        for (k, config) in configs.iter().enumerate() {
            let alone = replay(&trace, &matching, std::slice::from_ref(config), None, true)
                .map_err(|e| TestCaseError::fail(e.0))?;
            prop_assert_eq!(&together.configurations[k], &alone.configurations[0], "configuration {}", k);
            prop_assert_eq!(together.measured_s, alone.measured_s);
            prop_assert_eq!(&together.warnings, &alone.warnings);
        }
    }
}
