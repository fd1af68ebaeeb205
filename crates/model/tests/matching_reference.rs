//! The linear-pass matching (`match_messages_earliest`: `match_messages` without its rule
//! for receives from `ANY_SOURCE` left in the trace, which the old matching lacked) against the matching it replaced (two sorts
//! of the whole trace, kept in `matching/old.rs`): the same [`Matching`], messages in the same
//! order, on generated traces of every synth style and topology family, reshaped the ways real
//! traces differ from generated ones — ranks renumbered, split communicators, wildcard
//! receives, self-sends, peers outside the world, ranks without operations, posting times
//! tied or out of order.

#[path = "matching/old.rs"]
mod old;

use old::match_messages_with_sorts;
use proptest::prelude::*;
use tracelogic_model::{match_messages_earliest, P2p, P2pDir, Rank, Trace, ANY_SOURCE, ANY_TAG, COMM_WORLD};
use tracelogic_synth::{generate, Family, Noise, Numbering, Spec, Style, TopologySpec};

/// A small generated run of any style on a topology that style accepts.
fn spec() -> impl Strategy<Value = Spec> {
    let grid = (2u32..=4, 2u32..=4).prop_map(|(a, b)| TopologySpec::new(Family::Grid, vec![a, b]).unwrap());
    let topology = prop_oneof![
        grid.clone(),
        (3u32..=4, 3u32..=4).prop_map(|(a, b)| TopologySpec::new(Family::Torus, vec![a, b]).unwrap()),
        (3u32..=9).prop_map(|n| TopologySpec::new(Family::Ring, vec![n]).unwrap()),
        (2u32..=3).prop_map(|d| TopologySpec::new(Family::Hypercube, vec![d]).unwrap()),
        (2u32..=7).prop_map(|n| TopologySpec::new(Family::AllToAll, vec![n]).unwrap()),
        (2u32..=3).prop_map(|n| TopologySpec::new(Family::Stencil7, vec![n, n, n]).unwrap()),
    ];
    let style = prop_oneof![Just(Style::Isend), Just(Style::Sendrecv), Just(Style::Blocking)];
    // The wavefront style sweeps a 2D grid.
    let run = prop_oneof![
        3 => (topology, style),
        1 => (grid, Just(Style::Wavefront)),
    ];
    let noise = proptest::option::of((0.1f64..=0.6).prop_map(|fraction| Noise { fraction, percent: 2.0 }));
    (run, any::<bool>(), any::<u64>(), 1u32..=4, noise).prop_map(
        |((topology, style), random, seed, iterations, noise)| Spec {
            topology,
            numbering: if random { Numbering::Random } else { Numbering::RowMajor },
            seed,
            iterations,
            bytes: 512,
            style,
            noise,
            ..Spec::default()
        },
    )
}

/// How a generated trace is reshaped before matching; every share is per operation or rank.
#[derive(Debug, Clone)]
struct Reshape {
    seed: u64,
    /// Renumber the ranks by a seeded permutation.
    renumber: bool,
    /// Move the operations between ranks of the same parity to a split communicator.
    split: bool,
    /// Share of receives whose source becomes `ANY_SOURCE`, and whose tag becomes `ANY_TAG`.
    any_source: f64,
    any_tag: f64,
    /// Share of operations whose peer becomes the rank itself.
    self_peer: f64,
    /// Share of operations whose peer becomes a rank outside the world.
    outside: f64,
    /// Share of ranks whose operations are all removed.
    empty: f64,
    /// Round posting times down to this many nanoseconds (ties between senders), 1 = unchanged.
    clock_grain: u64,
    /// Share of calls whose entry time jumps back (clock glitches).
    glitch: f64,
}

fn reshape() -> impl Strategy<Value = Reshape> {
    let share = prop_oneof![Just(0.0), 0.0f64..=0.5, Just(1.0)];
    (
        any::<u64>(),
        any::<bool>(),
        any::<bool>(),
        share.clone(),
        share,
        prop_oneof![Just(0.0), 0.0f64..=0.3],
        prop_oneof![Just(0.0), 0.0f64..=0.3],
        prop_oneof![Just(0.0), 0.0f64..=0.4],
        prop_oneof![Just(1u64), Just(1_000), Just(1_000_000_000_000)],
        prop_oneof![Just(0.0), 0.0f64..=0.2],
    )
        .prop_map(
            |(seed, renumber, split, any_source, any_tag, self_peer, outside, empty, clock_grain, glitch)| Reshape {
                seed,
                renumber,
                split,
                any_source,
                any_tag,
                self_peer,
                outside,
                empty,
                clock_grain,
                glitch,
            },
        )
}

/// Applies `how` to a generated trace.
fn apply(mut t: Trace, how: &Reshape) -> Trace {
    let mut rng = fastrand::Rng::with_seed(how.seed);
    let n = t.num_ranks();
    if how.renumber {
        let mut perm: Vec<Rank> = (0..n).collect();
        rng.shuffle(&mut perm);
        t = t.renumber_ranks(&perm).expect("a permutation of the world");
    }
    let split = how
        .split
        .then(|| t.add_comm("even", (0..n).filter(|r| r % 2 == 0).collect()));
    for rt in &mut t.ranks {
        let rank = rt.rank;
        if rng.f64() < how.empty {
            rt.p2p = P2p::default();
            continue;
        }
        for i in 0..rt.calls.len() {
            let mut t = rt.calls.enter(i);
            if rng.f64() < how.glitch {
                t = t.saturating_sub(rng.u64(0..1_000_000));
            }
            t -= t % how.clock_grain;
            rt.calls.enter.set(i, t);
        }
        let p = &mut rt.p2p;
        for i in 0..p.len() {
            // Both sides of a message see the same pair of ranks, so they move together.
            if let Some(split) = split {
                if rank % 2 == 0 && p.peer[i] % 2 == 0 && p.peer[i] < n {
                    p.comm[i] = split;
                }
            }
            if rng.f64() < how.self_peer {
                p.peer.set(i, rank);
            }
            if rng.f64() < how.outside {
                p.peer.set(i, [n, n + 1, u32::MAX - 1][rng.usize(0..3)]);
            }
            if p.dir[i] == P2pDir::Recv {
                if rng.f64() < how.any_source {
                    p.peer.set(i, ANY_SOURCE);
                }
                if rng.f64() < how.any_tag {
                    p.tag.set(i, ANY_TAG);
                }
            }
        }
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn linear_matching_equals_the_sorting_one(spec in spec(), how in reshape()) {
        let t = apply(generate(&spec).expect("a valid spec"), &how);
        let new = match_messages_earliest(&t);
        prop_assert_eq!(&new, &match_messages_with_sorts(&t));
        let sends = t.ranks.iter().flat_map(|r| &r.p2p.dir).filter(|&&d| d == P2pDir::Send).count();
        prop_assert_eq!(new.messages.len() as u64 + new.unmatched_sends, sends as u64);
        prop_assert!(new.messages.windows(2).all(|w| (w[0].sender, w[0].send_op) < (w[1].sender, w[1].send_op)));
    }
}

/// A master collecting from every worker with wildcards in every combination, on two
/// communicators, workers sending out of rank order and at tied times.
#[test]
fn wildcard_master_matches_as_before() {
    for workers in [1u32, 2, 7, 64] {
        let n = workers + 2;
        let mut t = Trace::new("test", "test", n);
        let dup = t.add_comm("dup", (0..n).collect());
        for round in 0..6u64 {
            for w in (1..=workers).rev() {
                for (k, comm) in [COMM_WORLD, dup].into_iter().enumerate() {
                    let at = round * 100 + (w as u64 % 3);
                    let c = t.push_call(w, "MPI_Send", at, at + 1, tracelogic_model::NO_CALLPATH, 0);
                    t.push_p2p(w, c, c, P2pDir::Send, 0, (w as i32 + k as i32) % 3, comm, 8);
                }
            }
            for i in 0..2 * workers {
                let at = round * 100 + 50 + i as u64;
                let (from, tag) = match i % 4 {
                    0 => (ANY_SOURCE, ANY_TAG),
                    1 => (ANY_SOURCE, (i % 3) as i32),
                    2 => (1 + i % workers, ANY_TAG),
                    _ => (1 + i % workers, (i % 3) as i32),
                };
                let c = t.push_call(0, "MPI_Recv", at, at + 1, tracelogic_model::NO_CALLPATH, 0);
                let comm = if i % 2 == 0 { COMM_WORLD } else { dup };
                t.push_p2p(0, c, c, P2pDir::Recv, from, tag, comm, 8);
            }
        }
        let new = match_messages_earliest(&t);
        assert_eq!(new, match_messages_with_sorts(&t), "{workers} workers");
        assert!(!new.messages.is_empty());
    }
}

/// Timing of both matchings on large generated traces (run with `cargo test --release -p
/// tracelogic-model --test matching_reference -- --ignored --nocapture`): minima of
/// alternating runs, printed, not asserted.
#[test]
#[ignore]
fn linear_matching_timing() {
    let runs = [
        (
            "torus 4x4x4 isend, 400 iterations",
            Family::Torus,
            vec![4, 4, 4],
            Style::Isend,
            0.0,
        ),
        (
            "all-to-all 64, 40 iterations",
            Family::AllToAll,
            vec![64],
            Style::Isend,
            0.0,
        ),
        (
            "all-to-all 64, 40 iterations, ANY_SOURCE",
            Family::AllToAll,
            vec![64],
            Style::Isend,
            1.0,
        ),
    ];
    for (name, family, dims, style, any_source) in runs {
        let iterations = if family == Family::AllToAll { 40 } else { 400 };
        let spec = Spec {
            topology: TopologySpec::new(family, dims).unwrap(),
            iterations,
            style,
            ..Spec::default()
        };
        let how = Reshape {
            seed: 1,
            renumber: false,
            split: false,
            any_source,
            any_tag: 0.0,
            self_peer: 0.0,
            outside: 0.0,
            empty: 0.0,
            clock_grain: 1,
            glitch: 0.0,
        };
        let t = apply(generate(&spec).unwrap(), &how);
        let (mut old_ms, mut new_ms) = (f64::MAX, f64::MAX);
        let mut messages = 0;
        for _ in 0..5 {
            let start = std::time::Instant::now();
            let a = match_messages_with_sorts(&t);
            old_ms = old_ms.min(start.elapsed().as_secs_f64() * 1e3);
            let start = std::time::Instant::now();
            let b = match_messages_earliest(&t);
            new_ms = new_ms.min(start.elapsed().as_secs_f64() * 1e3);
            assert_eq!(a, b);
            messages = b.messages.len();
        }
        println!("{name}: {messages} messages, with sorts {old_ms:.1} ms, linear {new_ms:.1} ms");
    }
}
