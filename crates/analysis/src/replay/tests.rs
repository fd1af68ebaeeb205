use super::*;
use tracelogic_model::{
    match_messages, query::parse_kinds, CollectiveOp, P2pDir, Selection, Time, COMM_WORLD, NO_CALLPATH,
};

const MS: Time = 1_000_000;

/// Four ranks: `MPI_Init` (1 ms), `compute` ms of computation, an `MPI_Allreduce` of 8 bytes
/// recorded as `collective` ms on every rank, another `compute` ms, then one 8-byte message
/// from rank 0 to rank 1 (the only point-to-point traffic, negligible) and `MPI_Finalize`.
/// The collective is the run's only real communication cost.
fn collective_bound(compute: Time, collective: Time) -> Trace {
    let mut t = Trace::new("generated", "allreduce", 4);
    for r in 0..4 {
        t.push_call(r, "MPI_Init", 0, MS, NO_CALLPATH, 0);
        let enter = MS + compute;
        let c = t.push_call(r, "MPI_Allreduce", enter, enter + collective, NO_CALLPATH, 0);
        t.push_collective(r, c, CollectiveOp::Allreduce, COMM_WORLD, 0, 8, 8);
        let at = enter + collective + compute;
        match r {
            0 => {
                let s = t.push_call(r, "MPI_Send", at, at + 1000, NO_CALLPATH, 0);
                t.push_p2p(r, s, s, P2pDir::Send, 1, 0, COMM_WORLD, 8);
            }
            1 => {
                let s = t.push_call(r, "MPI_Recv", at, at + 1000, NO_CALLPATH, 0);
                t.push_p2p(r, s, s, P2pDir::Recv, 0, 0, COMM_WORLD, 8);
            }
            _ => {}
        }
        t.push_call(r, "MPI_Finalize", at + 1000, at + 1000, NO_CALLPATH, 0);
    }
    t
}

fn restricted_report(trace: &Trace, selection: &Selection) -> WhatIf {
    let restricted = trace.restrict(selection);
    let dropped = dropped_calls(trace, &restricted).unwrap();
    let options = WhatIfOptions::new(Network::presets(), SEED_SCALES.to_vec());
    what_if_restricted(&restricted, &dropped, &match_messages(&restricted), &options).unwrap()
}

fn p2p_only() -> Selection {
    Selection {
        kinds: Some(parse_kinds("p2p").unwrap()),
        ..Selection::all()
    }
}

/// Equal within 10 µs: the runs are tens of ms, and the one message costs microseconds.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-5
}

#[test]
fn a_dropped_collective_is_not_computation() {
    let trace = collective_bound(10 * MS, 40 * MS);
    let report = restricted_report(&trace, &p2p_only());
    assert_eq!(report.calls, 2, "only the send and the receive are replayed");
    for c in &report.configurations {
        let b = &c.breakdown;
        assert!(close(b.not_replayed_s, 0.040), "{}: {b:?}", c.configuration.label);
        // 2 × 10 ms of computation on every rank; `MPI_Init` costs 0 as in a full replay.
        assert!(close(b.compute_s, 0.020), "{}: {b:?}", c.configuration.label);
        assert!(
            (b.total_s() - c.predicted_s).abs() < 1e-12,
            "{b:?} vs {}",
            c.predicted_s
        );
    }
    for c in &report.classification {
        assert_eq!(c.bound, Bound::Undetermined, "{}: {}", c.network, c.reason);
        assert_eq!(c.label, "n/a");
        assert!(c.not_replayed_share > 0.6, "{c:?}");
        assert!(c.reason.contains("outside the selection"), "{}", c.reason);
    }
    let reference = report.reference.unwrap();
    assert!(close(reference.outside_model_s, 0.001), "{reference:?}");

    // The same restricted trace replayed without knowing what was dropped shows the bias
    // this corrects: the collective's 40 ms become computation, and the run "compute-bound".
    let restricted = trace.restrict(&p2p_only());
    let options = WhatIfOptions::new(Network::presets(), SEED_SCALES.to_vec());
    let blind = what_if(&restricted, &match_messages(&restricted), &options).unwrap();
    assert!(blind.configurations[0].breakdown.compute_s > 0.06);
    assert!(blind.classification.iter().all(|c| c.bound == Bound::Compute));
}

#[test]
fn a_short_dropped_collective_leaves_a_compute_bound_run_compute_bound() {
    let trace = collective_bound(100 * MS, 4 * MS);
    let report = restricted_report(&trace, &p2p_only());
    for c in &report.classification {
        assert_eq!(c.bound, Bound::Compute, "{}: {}", c.network, c.reason);
        // 4 ms of about 205 ms.
        assert!((0.015..0.025).contains(&c.not_replayed_share), "{c:?}");
        assert!(c.reason.contains("outside the selection"), "{}", c.reason);
    }
}

/// Two ranks: rank 1 waits 20 ms for rank 0's message, then both spend `collective` ms in
/// an `MPI_Allreduce`.
fn late_sender_then_collective(collective: Time) -> Trace {
    let mut t = Trace::new("generated", "late-sender", 2);
    for r in 0..2 {
        t.push_call(r, "MPI_Init", 0, 0, NO_CALLPATH, 0);
        let (name, dir, enter) = if r == 0 {
            ("MPI_Send", P2pDir::Send, 30 * MS)
        } else {
            ("MPI_Recv", P2pDir::Recv, 10 * MS)
        };
        let p = t.push_call(r, name, enter, 30 * MS + 1000, NO_CALLPATH, 0);
        t.push_p2p(r, p, p, dir, 1 - r, 0, COMM_WORLD, 8);
        let c = t.push_call(r, "MPI_Allreduce", 31 * MS, 31 * MS + collective, NO_CALLPATH, 0);
        t.push_collective(r, c, CollectiveOp::Allreduce, COMM_WORLD, 0, 8, 8);
        t.push_call(
            r,
            "MPI_Finalize",
            31 * MS + collective,
            31 * MS + collective,
            NO_CALLPATH,
            0,
        );
    }
    t
}

#[test]
fn imbalance_is_named_only_when_waiting_outweighs_the_dropped_communication() {
    // 1 ms of collective: waiting (10 ms of about 31) decides, as without a selection.
    let short = restricted_report(&late_sender_then_collective(MS), &p2p_only());
    for c in &short.classification {
        assert_eq!(c.bound, Bound::Imbalance, "{}: {}", c.network, c.reason);
    }
    // 15 ms of collective: a third of the time is not replayed, more than the waiting.
    let long = restricted_report(&late_sender_then_collective(15 * MS), &p2p_only());
    for c in &long.classification {
        assert_eq!(c.bound, Bound::Undetermined, "{}: {}", c.network, c.reason);
        assert!(c.wait_share >= 0.2 && c.not_replayed_share > c.wait_share, "{c:?}");
        assert!(c.reason.contains("waiting"), "{}", c.reason);
    }
}

#[test]
fn the_whole_trace_has_nothing_outside_the_replay() {
    let trace = collective_bound(10 * MS, 40 * MS);
    let dropped = dropped_calls(&trace, &trace.restrict(&Selection::all())).unwrap();
    assert!(dropped.is_empty());
    let options = WhatIfOptions::new(Network::presets(), SEED_SCALES.to_vec());
    let full = what_if(&trace, &match_messages(&trace), &options).unwrap();
    assert!(full.configurations.iter().all(|c| c.breakdown.not_replayed_s == 0.0));
    assert!(full.classification.iter().all(|c| c.not_replayed_share == 0.0));
    assert!(full.classification.iter().all(|c| !c.reason.contains("selection")));
}

#[test]
fn a_window_counts_only_the_part_of_a_dropped_call_inside_it() {
    // Collective from 11 to 51 ms; the window starts at 31 ms, so the collective (entered
    // before it) is dropped and 20 ms of it lie inside the window.
    let trace = collective_bound(10 * MS, 40 * MS);
    let selection = Selection {
        from: Some(31 * MS),
        ..Selection::all()
    };
    let report = restricted_report(&trace, &selection);
    let b = &report.configurations[0].breakdown;
    assert!(close(b.not_replayed_s, 0.020), "{b:?}");
    assert!(close(b.compute_s, 0.010), "{b:?}");
}

#[test]
fn a_trace_that_is_not_the_restriction_is_refused() {
    let trace = collective_bound(10 * MS, 40 * MS);
    let other = collective_bound(11 * MS, 40 * MS);
    let err = dropped_calls(&trace, &other.restrict(&p2p_only())).unwrap_err();
    assert!(err.0.contains("rank 0") && err.0.contains("call 0"), "{err}");
    let fewer = Trace::new("generated", "two", 2);
    assert!(dropped_calls(&trace, &fewer).unwrap_err().0.contains("2 ranks"));
}
