use super::super::{replay, Configuration, Network};
use tracelogic_model::{match_messages, P2pDir, Trace, NO_CALLPATH};

/// Ranks 2i and 2i+1 each receive from the other before sending: every pair deadlocks, and
/// each deadlock is broken on its own. Found while auditing the replay worklist for hostile
/// input: the scan for the next stuck rank restarted at rank 0 after every deadlock
/// (quadratic in ranks; 65,536 ranks fit a 3 MB text trace).
#[test]
fn many_independent_deadlocks_are_each_broken_once() {
    let n = 4096;
    let mut trace = Trace::new("test", "pairs", n);
    for r in 0..n {
        let peer = r ^ 1;
        let recv = trace.push_call(r, "MPI_Recv", 1_000, 2_000, NO_CALLPATH, 0);
        trace.push_p2p(r, recv, recv, P2pDir::Recv, peer, 1, 0, 8);
        let send = trace.push_call(r, "MPI_Send", 3_000, 4_000, NO_CALLPATH, 0);
        trace.push_p2p(r, send, send, P2pDir::Send, peer, 1, 0, 8);
    }
    let matching = match_messages(&trace);
    assert_eq!(matching.messages.len(), n as usize);
    let configs = [Configuration::base(&Network::ethernet_10g())];
    let result = replay(&trace, &matching, &configs, None, false).unwrap();
    assert_eq!(
        result.warnings.unresolved_recvs,
        n as u64 / 2,
        "one forced receive per pair"
    );
    assert_eq!(result.calls, 2 * n as u64);
    // Each deadlock is broken the same way by engines replaying shares of configurations.
    let configs = super::super::configurations(&Network::presets(), &[0.5, 2.0]);
    assert_eq!(configs.len(), 21);
    let one = super::replay_in_shares(
        &trace,
        &Default::default(),
        &matching,
        &configs,
        None,
        true,
        std::slice::from_ref(&(0..21)),
    );
    let three = super::replay_in_shares(
        &trace,
        &Default::default(),
        &matching,
        &configs,
        None,
        true,
        &[0..4, 4..5, 5..21],
    );
    assert_eq!(one, three);
    assert_eq!(one.warnings.unresolved_recvs, n as u64 / 2);
}

/// The 57 configurations of the what-if (three presets, seven scales) replayed by one engine
/// executing as it goes (as on wasm) and by one traversal whose instructions executors run over
/// shares of them (as on 2, 3 and 8 cores; BT's 33,777 calls span several hand-overs, and the
/// executors use AVX2 where the CPU has it) give the same results, bit for bit, in the same
/// order, per rank too; on the NPB BT and MG samples and on MG with a selection that dropped its
/// collectives.
#[test]
fn replay_in_shares_equals_one_engine() {
    use super::super::{configurations, dropped_calls, SEED_SCALES};
    use tracelogic_model::{CallKind, Selection};
    for name in ["npb-bt.S.9", "npb-mg.S.8"] {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/samples")
            .join(name);
        let trace = tracelogic_formats::read_trace(tracelogic_formats::fs::load_paths(&[dir]).unwrap()).unwrap();
        let configs = configurations(&Network::presets(), &SEED_SCALES);
        assert_eq!(configs.len(), 57);
        let p2p = Selection {
            kinds: Some(vec![
                CallKind::Send,
                CallKind::Isend,
                CallKind::Recv,
                CallKind::Irecv,
                CallKind::SendRecv,
                CallKind::Completion,
            ]),
            ..Selection::all()
        };
        let restricted = trace.restrict(&p2p);
        let dropped = dropped_calls(&trace, &restricted).unwrap();
        assert!(!dropped.is_empty(), "{name}");
        for (t, d) in [(&trace, Default::default()), (&restricted, dropped)] {
            let matching = match_messages(t);
            let whole = super::replay_in_shares(t, &d, &matching, &configs, None, true, std::slice::from_ref(&(0..57)));
            assert!(whole.configurations.iter().all(|c| c.predicted_s > 0.0), "{name}");
            for shares in [
                super::shares_of(57, 2),
                super::shares_of(57, 3),
                super::shares_of(57, 8),
            ] {
                assert!(shares.len() >= 2);
                let split = super::replay_in_shares(t, &d, &matching, &configs, None, true, &shares);
                assert_eq!(split, whole, "{name}: {shares:?}");
            }
        }
    }
    assert_eq!(super::shares_of(57, 2), vec![0..28, 28..57]);
    assert_eq!(
        super::shares_of(7, 8),
        vec![0..7],
        "fewer than 8 configurations stay on one engine"
    );
    assert_eq!(super::shares_of(1, 1), vec![0..1]);
}
