//! The network what-if on hand-built traces: exact predictions for ping-pong and collectives,
//! the seed's classes, monotonicity, and K-independence of every configuration's result.

use tracelogic_analysis::replay::{
    classify, configurations, replay, what_if, Bound, Configuration, MessageTable, Network, Sweep, Thresholds,
    WhatIfOptions, SEED_SCALES,
};
use tracelogic_model::{
    match_messages, CollectiveOp, P2pDir, Rank, Time, Trace, COMM_WORLD, NOT_COMPLETED, NO_CALLPATH, NO_ROOT,
};

const MS: Time = 1_000_000;
const US: Time = 1_000;

fn call(t: &mut Trace, r: Rank, f: &str, enter: Time, exit: Time) -> u32 {
    t.push_call(r, f, enter, exit, NO_CALLPATH, 0)
}

fn send(t: &mut Trace, r: Rank, to: Rank, bytes: u64, enter: Time, exit: Time) {
    let c = call(t, r, "MPI_Send", enter, exit);
    t.push_p2p(r, c, c, P2pDir::Send, to, 0, COMM_WORLD, bytes);
}

fn recv(t: &mut Trace, r: Rank, from: Rank, bytes: u64, enter: Time, exit: Time) {
    let c = call(t, r, "MPI_Recv", enter, exit);
    t.push_p2p(r, c, c, P2pDir::Recv, from, 0, COMM_WORLD, bytes);
}

fn collective(t: &mut Trace, r: Rank, op: CollectiveOp, bytes: u64, enter: Time, exit: Time) {
    let c = call(t, r, op.mpi_name(), enter, exit);
    t.push_collective(r, c, op, COMM_WORLD, NO_ROOT, bytes, bytes);
}

fn hockney(c: &Configuration, bytes: f64) -> f64 {
    c.latency_s + bytes / c.bandwidth_bytes_per_s
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
}

/// Rank 0 computes `compute` then sends `bytes` to rank 1, which waits in its receive and
/// answers at once; `k` times. The recorded MPI call durations are arbitrary: the model
/// replaces them.
fn ping_pong(k: u32, bytes: u64, compute: Time) -> Trace {
    let mut t = Trace::new("generated", "ping-pong", 2);
    call(&mut t, 0, "MPI_Init", 0, 0);
    call(&mut t, 1, "MPI_Init", 0, 0);
    let (mut now, mut rank1_free) = (0, 0);
    for _ in 0..k {
        now += compute;
        send(&mut t, 0, 1, bytes, now, now + 7 * US);
        recv(&mut t, 1, 0, bytes, rank1_free, now + 9 * US);
        send(&mut t, 1, 0, bytes, now + 9 * US, now + 16 * US);
        recv(&mut t, 0, 1, bytes, now + 7 * US, now + 20 * US);
        rank1_free = now + 16 * US;
        now += 20 * US;
    }
    t
}

#[test]
fn ping_pong_predicts_two_k_hockney_messages_plus_compute() {
    let (k, n, compute) = (25u32, 4096u64, 3 * MS);
    let trace = ping_pong(k, n, compute);
    let matching = match_messages(&trace);
    assert_eq!(matching.messages.len(), 2 * k as usize);
    let configs = configurations(&Network::presets(), &SEED_SCALES);
    let result = replay(&trace, &matching, &configs, None, true).unwrap();
    assert!(result.warnings.is_empty(), "{:?}", result.warnings);
    for c in &result.configurations {
        let expected = 2.0 * k as f64 * hockney(&c.configuration, n as f64) + k as f64 * compute as f64 * 1e-9;
        assert!(
            close(c.predicted_s, expected),
            "{}: {} vs {}",
            c.configuration.label,
            c.predicted_s,
            expected
        );
        assert!(close(c.breakdown.total_s(), c.predicted_s));
        assert!(close(c.breakdown.compute_s, k as f64 * compute as f64 * 1e-9 / 2.0));
        assert_eq!(c.critical_rank, 0);
        for r in c.ranks.as_ref().unwrap() {
            assert!(close(r.breakdown.total_s(), c.predicted_s));
        }
    }
}

#[test]
fn nonblocking_receive_completes_at_its_wait() {
    // Rank 0 posts an Irecv, computes 1 ms, then waits; rank 1 computes `late` then sends.
    let run = |late: Time| {
        let mut t = Trace::new("generated", "irecv", 2);
        let post = call(&mut t, 0, "MPI_Irecv", 0, 0);
        let wait = call(&mut t, 0, "MPI_Wait", MS, 5 * MS);
        t.push_p2p(0, post, wait, P2pDir::Recv, 1, 0, COMM_WORLD, 1000);
        call(&mut t, 1, "MPI_Init", 0, 0);
        send(&mut t, 1, 0, 1000, late, late + US);
        let cfg = [Configuration::base(&Network::ethernet_10g())];
        let r = replay(&t, &match_messages(&t), &cfg, None, true).unwrap();
        (r.configurations[0].clone(), hockney(&cfg[0], 1000.0))
    };
    let (early, _) = run(0);
    assert!(close(early.predicted_s, 1e-3), "{}", early.predicted_s);
    let (late, cost) = run(2 * MS);
    let rank0 = &late.ranks.as_ref().unwrap()[0];
    assert!(close(rank0.end_s, 2e-3 + cost));
    assert!(close(rank0.breakdown.wait_s, 1e-3), "{:?}", rank0.breakdown);
    assert!(close(
        rank0.breakdown.latency_term_s + rank0.breakdown.bandwidth_term_s,
        cost
    ));
}

#[test]
fn collectives_synchronise_then_cost_their_model() {
    // 8 ranks reach a broadcast of n bytes at different times; binomial tree: 3 (α + nβ).
    let n = 1 << 20;
    let mut t = Trace::new("generated", "bcast", 8);
    for r in 0..8 {
        call(&mut t, r, "MPI_Init", 0, 0);
        let c = call(&mut t, r, "MPI_Bcast", r as Time * MS, 9 * MS);
        t.push_collective(r, c, CollectiveOp::Bcast, COMM_WORLD, 0, if r == 0 { n } else { 0 }, n);
    }
    let cfg: Vec<Configuration> = Network::presets().iter().map(Configuration::base).collect();
    let result = replay(&t, &match_messages(&t), &cfg, None, false).unwrap();
    for c in &result.configurations {
        let expected = 7e-3 + 3.0 * hockney(&c.configuration, n as f64);
        assert!(close(c.predicted_s, expected), "{} vs {expected}", c.predicted_s);
        // Rank r waits 7 − r ms: mean 3.5 ms.
        assert!(close(c.breakdown.wait_s, 3.5e-3));
        assert!(close(c.breakdown.latency_term_s, 3.0 * c.configuration.latency_s));
    }
}

fn compute_then_barrier(computes: &[Time], iterations: u32) -> Trace {
    let p = computes.len() as u32;
    let mut t = Trace::new("generated", "balanced", p);
    let slowest = *computes.iter().max().unwrap();
    for r in 0..p {
        call(&mut t, r, "MPI_Init", 0, 0);
        let mut now = 0;
        for _ in 0..iterations {
            let enter = now + computes[r as usize];
            now += slowest + 50 * US;
            collective(&mut t, r, CollectiveOp::Allreduce, 8, enter, now);
        }
        call(&mut t, r, "MPI_Finalize", now, now);
    }
    t
}

fn classes(trace: &Trace) -> Vec<(String, Bound, String)> {
    let options = WhatIfOptions::new(Network::presets(), SEED_SCALES.to_vec());
    let report = what_if(trace, &match_messages(trace), &options).unwrap();
    assert_eq!(report.classification.len(), 3);
    report
        .classification
        .iter()
        .map(|c| (c.network.clone(), c.bound, c.reason.clone()))
        .collect()
}

#[test]
fn balanced_compute_run_is_compute_bound_and_insensitive() {
    let trace = compute_then_barrier(&[100 * MS; 4], 10);
    let options = WhatIfOptions::new(Network::presets(), SEED_SCALES.to_vec());
    let report = what_if(&trace, &match_messages(&trace), &options).unwrap();
    for c in &report.classification {
        assert_eq!(c.bound, Bound::Compute, "{}: {}", c.network, c.reason);
        assert!(c.spread < 0.01, "{}: spread {}", c.network, c.spread);
        assert!(c.wait_share < 1e-9);
    }
    // Pure computation with no communication at all is insensitive too.
    let mut idle = Trace::new("generated", "compute-only", 3);
    for r in 0..3 {
        call(&mut idle, r, "MPI_Init", 0, 0);
        call(&mut idle, r, "MPI_Finalize", 2_000 * MS, 2_000 * MS);
    }
    let report = what_if(&idle, &match_messages(&idle), &options).unwrap();
    assert!(report.configurations.iter().all(|c| close(c.predicted_s, 2.0)));
    assert!(report
        .classification
        .iter()
        .all(|c| c.bound == Bound::Compute && c.spread == 0.0));
}

#[test]
fn one_rank_computing_twice_as_long_is_imbalance_bound() {
    for p in [2usize, 4] {
        let mut computes = vec![10 * MS; p];
        computes[0] = 20 * MS;
        for (network, bound, reason) in classes(&compute_then_barrier(&computes, 10)) {
            assert_eq!(bound, Bound::Imbalance, "p = {p}, {network}: {reason}");
        }
    }
}

#[test]
fn message_heavy_runs_are_latency_or_bandwidth_bound() {
    let small = classes(&ping_pong(200, 8, US));
    assert!(small.iter().all(|c| c.1 == Bound::Latency), "{small:?}");
    let large = classes(&ping_pong(50, 16 << 20, 10 * US));
    assert!(large.iter().all(|c| c.1 == Bound::Bandwidth), "{large:?}");
}

/// A mix of everything: imbalanced compute, a ring of Isend/Irecv/Waitall, a Sendrecv
/// exchange, an allreduce and an alltoall.
fn mixed(p: u32, iterations: u32) -> Trace {
    let mut t = Trace::new("generated", "mixed", p);
    for r in 0..p {
        let mut now: Time = 0;
        call(&mut t, r, "MPI_Init", now, now);
        for it in 0..iterations {
            now += (1 + (r + it) % 3) as Time * 200 * US;
            let bytes = 1000 * (1 + it as u64 % 5);
            let right = (r + 1) % p;
            let left = (r + p - 1) % p;
            let irecv = call(&mut t, r, "MPI_Irecv", now, now + US);
            let isend = call(&mut t, r, "MPI_Isend", now + US, now + 2 * US);
            let wait = call(&mut t, r, "MPI_Waitall", now + 3 * US, now + 40 * US);
            t.push_p2p(r, irecv, wait, P2pDir::Recv, left, 1, COMM_WORLD, bytes);
            t.push_p2p(r, isend, wait, P2pDir::Send, right, 1, COMM_WORLD, bytes);
            now += 50 * US;
            let partner = r ^ 1;
            if partner < p {
                let sr = call(&mut t, r, "MPI_Sendrecv", now, now + 30 * US);
                t.push_p2p(r, sr, sr, P2pDir::Send, partner, 2, COMM_WORLD, 64 * bytes);
                t.push_p2p(r, sr, sr, P2pDir::Recv, partner, 2, COMM_WORLD, 64 * bytes);
            }
            now += 40 * US;
            collective(&mut t, r, CollectiveOp::Allreduce, 8, now, now + 20 * US);
            now += 30 * US;
            collective(&mut t, r, CollectiveOp::Alltoall, p as u64 * bytes, now, now + 60 * US);
            now += 70 * US;
        }
        call(&mut t, r, "MPI_Finalize", now, now);
    }
    t
}

#[test]
fn predictions_are_monotone_in_latency_and_bandwidth() {
    let trace = mixed(6, 20);
    let matching = match_messages(&trace);
    assert_eq!(matching.unmatched_recvs + matching.unmatched_sends, 0);
    let latencies = [0.0, 1e-6, 5e-6, 20e-6, 100e-6, 1e-3];
    let bandwidths = [1e7, 1e8, 1e9, 1e10, 1e11];
    let mut configs = Vec::new();
    for &l in &latencies {
        for &b in &bandwidths {
            configs.push(Configuration::base(&Network {
                name: "grid".into(),
                latency_s: l,
                bandwidth_bytes_per_s: b,
            }));
        }
    }
    let result = replay(&trace, &matching, &configs, None, false).unwrap();
    assert!(result.warnings.is_empty(), "{:?}", result.warnings);
    let at = |i: usize, j: usize| result.configurations[i * bandwidths.len() + j].predicted_s;
    for i in 0..latencies.len() {
        for j in 0..bandwidths.len() {
            let c = &result.configurations[i * bandwidths.len() + j];
            assert!(close(c.breakdown.total_s(), c.predicted_s));
            if i > 0 {
                assert!(
                    at(i, j) >= at(i - 1, j),
                    "latency {} → {}",
                    latencies[i - 1],
                    latencies[i]
                );
            }
            if j > 0 {
                assert!(
                    at(i, j) <= at(i, j - 1),
                    "bandwidth {} → {}",
                    bandwidths[j - 1],
                    bandwidths[j]
                );
            }
        }
    }
    assert!(at(latencies.len() - 1, 0) > at(0, bandwidths.len() - 1));
}

#[test]
fn one_configuration_equals_its_entry_in_a_256_configuration_run() {
    let trace = mixed(5, 12);
    let matching = match_messages(&trace);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let configs: Vec<Configuration> = (0..256)
        .map(|_| {
            Configuration::base(&Network {
                name: "random".into(),
                latency_s: 1e-7 * 10f64.powf(4.0 * next()),
                bandwidth_bytes_per_s: 1e7 * 10f64.powf(4.0 * next()),
            })
        })
        .collect();
    let all = replay(&trace, &matching, &configs, None, true).unwrap();
    for j in [0usize, 1, 7, 100, 255] {
        let one = replay(&trace, &matching, &configs[j..j + 1], None, true).unwrap();
        assert_eq!(one.configurations[0], all.configurations[j], "configuration {j}");
    }
}

#[test]
fn message_table_on_hockney_points_reproduces_hockney() {
    let net = Network::ethernet_10g();
    let table = MessageTable::new(
        [0u64, 1 << 10, 1 << 20]
            .iter()
            .map(|&n| (n, hockney(&Configuration::base(&net), n as f64)))
            .collect(),
    )
    .unwrap();
    let trace = mixed(4, 6);
    let matching = match_messages(&trace);
    let configs = configurations(&[net], &SEED_SCALES);
    let plain = replay(&trace, &matching, &configs, None, false).unwrap();
    let tabled = replay(&trace, &matching, &configs, Some(&table), false).unwrap();
    for (a, b) in plain.configurations.iter().zip(&tabled.configurations) {
        assert!(
            close(a.predicted_s, b.predicted_s),
            "{} vs {}",
            a.predicted_s,
            b.predicted_s
        );
    }
    // A table with a costlier mid-range only slows things down.
    let slower = MessageTable::new(vec![
        (0, 5e-6),
        (512, 50e-6),
        (1 << 20, 5e-6 + (1 << 20) as f64 * 0.8e-9),
    ])
    .unwrap();
    let slow = replay(&trace, &matching, &configs, Some(&slower), false).unwrap();
    assert!(slow.configurations[0].predicted_s > plain.configurations[0].predicted_s);
}

#[test]
fn broken_dependencies_are_counted_not_hung() {
    let mut t = Trace::new("generated", "broken", 3);
    // Rank 0 receives from rank 1, which never sends.
    call(&mut t, 0, "MPI_Init", 0, 0);
    recv(&mut t, 0, 1, 100, MS, 2 * MS);
    // Ranks 1 and 2 enter a barrier rank 0 never reaches.
    for r in 1..3 {
        call(&mut t, r, "MPI_Init", 0, 0);
        collective(&mut t, r, CollectiveOp::Barrier, 0, r as Time * MS, 3 * MS);
    }
    // Rank 2 waits on an Irecv that never completes and on a send no one receives.
    let c = call(&mut t, 2, "MPI_Irecv", 4 * MS, 4 * MS);
    t.push_p2p(2, c, NOT_COMPLETED, P2pDir::Recv, 0, 0, COMM_WORLD, 8);
    send(&mut t, 2, 0, 8, 4 * MS, 4 * MS);
    let configs = configurations(&[Network::ethernet_10g()], &SEED_SCALES);
    let result = replay(&t, &match_messages(&t), &configs, None, false).unwrap();
    assert_eq!(result.warnings.incomplete_collectives, 1);
    assert!(result.warnings.unmatched_recvs + result.warnings.unresolved_recvs >= 1);
    let base = &result.configurations[0];
    // Rank 0 completes its receive at its own clock (1 ms). Ranks 1 and 2 leave the barrier
    // when the later arrives (2 ms) plus its cost (⌈log2 3⌉ α); rank 2 then computes 1 ms and
    // injects its 8-byte send.
    let expected = 3e-3 + 2.0 * base.configuration.latency_s + 8.0 / base.configuration.bandwidth_bytes_per_s;
    assert!(close(base.predicted_s, expected), "{} vs {expected}", base.predicted_s);
    assert!(close(base.breakdown.total_s(), base.predicted_s));
}

#[test]
fn sendrecv_exchange_and_empty_trace() {
    let mut t = Trace::new("generated", "sendrecv", 2);
    for r in 0..2 {
        call(&mut t, r, "MPI_Init", 0, 0);
        let c = call(&mut t, r, "MPI_Sendrecv", r as Time * MS, 3 * MS);
        t.push_p2p(r, c, c, P2pDir::Send, 1 - r, 0, COMM_WORLD, 1 << 16);
        t.push_p2p(r, c, c, P2pDir::Recv, 1 - r, 0, COMM_WORLD, 1 << 16);
    }
    let cfg = [Configuration::base(&Network::ethernet_1g())];
    let result = replay(&t, &match_messages(&t), &cfg, None, false).unwrap();
    // Rank 1 enters at 1 ms; rank 0's message from rank 1 arrives at 1 ms + α + nβ.
    assert!(close(
        result.configurations[0].predicted_s,
        1e-3 + hockney(&cfg[0], 65536.0)
    ));

    let empty = Trace::new("generated", "empty", 0);
    let result = replay(&empty, &match_messages(&empty), &cfg, None, false).unwrap();
    assert_eq!(result.configurations[0].predicted_s, 0.0);
    assert!(replay(&empty, &match_messages(&empty), &[], None, false).is_err());
    let bad = Configuration {
        bandwidth_bytes_per_s: 0.0,
        ..cfg[0].clone()
    };
    assert!(replay(&empty, &match_messages(&empty), &[bad], None, false).is_err());
}

#[test]
fn json_has_the_documented_fields() {
    let trace = ping_pong(4, 1000, MS);
    let mut options = WhatIfOptions::new(Network::presets(), SEED_SCALES.to_vec());
    options.recorded_on = Some("QDR".into());
    let report = what_if(&trace, &match_messages(&trace), &options).unwrap();
    let json = serde_json::to_value(&report).unwrap();
    let first = &json["configurations"][0];
    for key in [
        "bandwidth_bytes_per_s",
        "latency_s",
        "predicted_s",
        "compute_s",
        "wait_s",
        "latency_term_s",
        "bandwidth_term_s",
    ] {
        assert!(first[key].is_number(), "missing {key} in {first}");
    }
    assert!(json["measured_s"].is_number());
    assert_eq!(json["classification"].as_array().unwrap().len(), 3);
    assert!(json["classification"][0]["label"].is_string());
    assert!(json["classification"][0]["reason"].is_string());
    let reference = report.reference.unwrap();
    assert_eq!(reference.network, "QDR");
    assert!(close(
        reference.measured_s,
        trace.span().1 as f64 * 1e-9 - trace.span().0 as f64 * 1e-9
    ));
    let back: tracelogic_analysis::replay::WhatIf = serde_json::from_value(json).unwrap();
    assert_eq!(back.configurations.len(), report.configurations.len());
}

#[test]
fn classification_needs_a_scaled_configuration() {
    let trace = ping_pong(2, 10, MS);
    let net = Network::ethernet_10g();
    let only_base = replay(
        &trace,
        &match_messages(&trace),
        &[Configuration::base(&net)],
        None,
        false,
    )
    .unwrap();
    assert!(classify(&only_base.configurations, &net.name, &Thresholds::default()).is_none());
    let sweep_only = [
        Configuration::base(&net),
        Configuration::scaled(&net, Sweep::Scaled, 2.0),
    ];
    let r = replay(&trace, &match_messages(&trace), &sweep_only, None, false).unwrap();
    assert!(classify(&r.configurations, &net.name, &Thresholds::default()).is_some());
}

#[test]
fn a_rank_that_only_sends_does_not_run_far_ahead_of_its_receiver() {
    // Rank 0 streams 100 000 messages to rank 1 without ever waiting; the replay must not hold
    // them all in flight at once.
    let messages = 100_000u64;
    let mut t = Trace::new("generated", "stream", 2);
    for i in 0..messages {
        send(&mut t, 0, 1, 64, i * US, i * US + 100);
        recv(&mut t, 1, 0, 64, i * US, i * US + 900);
    }
    let cfg = [Configuration::base(&Network::infiniband_qdr())];
    let r = replay(&t, &match_messages(&t), &cfg, None, false).unwrap();
    assert!(r.warnings.is_empty());
    assert_eq!(r.messages, messages);
    assert!(
        r.peak_pooled_vectors < 10_000,
        "{} vectors held at once",
        r.peak_pooled_vectors
    );
}

#[test]
fn inconsistent_columns_are_replayed_up_to_the_shortest() {
    let mut t = ping_pong(3, 100, MS);
    t.ranks[0].calls.duration.truncate(2);
    t.ranks[1].p2p.bytes.truncate(1);
    t.ranks[1].collectives.op.push(CollectiveOp::Bcast);
    let cfg = [Configuration::base(&Network::ethernet_10g())];
    let r = replay(&t, &match_messages(&t), &cfg, None, false).unwrap();
    // Rank 0 stops after its first send; rank 1 keeps only its first operation (the receive
    // that send feeds), so the other 5 of the 6 matched messages point at missing operations.
    let c = &r.configurations[0];
    assert!(c.predicted_s.is_finite() && c.predicted_s > 0.0);
    assert_eq!(r.warnings.invalid_messages, 5, "{:?}", r.warnings);
    assert_eq!(r.warnings.unresolved_recvs + r.warnings.unmatched_recvs, 0);
}

#[test]
fn start_up_and_tear_down_are_outside_the_model_and_reported() {
    // 1 s in MPI_Init, 0.25 s of computation, 0.5 s in MPI_Finalize on both ranks.
    let mut t = Trace::new("generated", "lifecycle", 2);
    for r in 0..2 {
        call(&mut t, r, "MPI_Init", 0, 1_000 * MS);
        call(&mut t, r, "MPI_Comm_rank", 1_000 * MS, 1_000 * MS + 10 * US);
        call(&mut t, r, "MPI_Finalize", 1_250 * MS, 1_750 * MS);
    }
    let options = WhatIfOptions::new(vec![Network::ethernet_10g()], SEED_SCALES.to_vec());
    let report = what_if(&t, &match_messages(&t), &options).unwrap();
    let v = report.reference.unwrap();
    // The query's 10 µs is local work and stays; start-up and tear-down do not.
    assert!(close(v.predicted_s, 0.25), "{}", v.predicted_s);
    assert!(close(v.measured_s, 1.75));
    assert!(close(v.outside_model_s, 1.5));
    assert!(v.relative_error_inside_model.unwrap().abs() < 1e-9);
    assert!(close(v.relative_error.unwrap(), 0.25 / 1.75 - 1.0));
}

#[test]
fn sends_share_the_rank_network_interface() {
    // Rank 0 posts four Isends of n bytes at once and waits; rank i receives one each. The
    // interface injects them one after another: message i arrives at α + (i + 1)·nβ.
    let n = 1u64 << 20;
    let mut t = Trace::new("generated", "fan-out", 5);
    let isends: Vec<u32> = (1..5).map(|_| call(&mut t, 0, "MPI_Isend", 0, 0)).collect();
    let wait = call(&mut t, 0, "MPI_Waitall", 0, MS);
    for (i, &c) in isends.iter().enumerate() {
        t.push_p2p(0, c, wait, P2pDir::Send, i as Rank + 1, 0, COMM_WORLD, n);
    }
    for r in 1..5 {
        recv(&mut t, r, 0, n, 0, MS);
    }
    let cfg = [Configuration::base(&Network::ethernet_10g())];
    let result = replay(&t, &match_messages(&t), &cfg, None, true).unwrap();
    let c = &result.configurations[0];
    let (alpha, nbeta) = (cfg[0].latency_s, n as f64 / cfg[0].bandwidth_bytes_per_s);
    let ranks = c.ranks.as_ref().unwrap();
    assert!(close(ranks[0].end_s, 4.0 * nbeta), "{}", ranks[0].end_s);
    for (r, rank) in ranks.iter().enumerate().skip(1) {
        assert!(close(rank.end_s, alpha + r as f64 * nbeta), "rank {r}: {}", rank.end_s);
    }
    assert!(close(c.predicted_s, alpha + 4.0 * nbeta));
}
