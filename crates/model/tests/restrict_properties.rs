//! Properties of [`Trace::restrict`] on generated traces with random selections:
//!
//! * the communication matrix of the restricted trace, under the same selection, is the
//!   matrix of the whole trace under that selection; without a selection it is the same
//!   matrix plus the kept sends to ranks outside the selection (which are unmatched);
//! * every link of the restricted trace names a kept call of its rank, each kept operation
//!   is an operation of the original with the same posting call, and each kept completion is
//!   its original completion;
//! * matching counts every kept send exactly once, as matched or unmatched.

use proptest::prelude::*;
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_model::{match_messages, CallKind, CollectiveOp, P2pDir, Selection, Trace, NOT_COMPLETED};
use tracelogic_synth::{generate, CollectiveSpec, Family, Noise, Numbering, Spec, Style, TopologySpec};

/// A small generated run: any topology family that fits, numbering, style, collectives, noise.
fn spec() -> impl Strategy<Value = Spec> {
    let topology = prop_oneof![
        (2u32..=4, 2u32..=4).prop_map(|(a, b)| TopologySpec::new(Family::Grid, vec![a, b]).unwrap()),
        (3u32..=4, 3u32..=4).prop_map(|(a, b)| TopologySpec::new(Family::Torus, vec![a, b]).unwrap()),
        (3u32..=10).prop_map(|n| TopologySpec::new(Family::Ring, vec![n]).unwrap()),
        (2u32..=3).prop_map(|d| TopologySpec::new(Family::Hypercube, vec![d]).unwrap()),
    ];
    let style = prop_oneof![Just(Style::Isend), Just(Style::Sendrecv), Just(Style::Blocking)];
    let collectives = proptest::collection::vec(
        (1u32..=3, 0u64..=64).prop_map(|(every, bytes)| CollectiveSpec {
            op: CollectiveOp::Allreduce,
            every,
            bytes,
        }),
        0..=1,
    );
    let noise = proptest::option::of((0.1f64..=0.5).prop_map(|fraction| Noise { fraction, percent: 2.0 }));
    (
        topology,
        any::<bool>(),
        any::<u64>(),
        1u32..=4,
        style,
        collectives,
        noise,
    )
        .prop_map(|(topology, random, seed, iterations, style, collectives, noise)| Spec {
            topology,
            numbering: if random { Numbering::Random } else { Numbering::RowMajor },
            seed,
            iterations,
            bytes: 1024,
            style,
            collectives,
            noise,
            ..Spec::default()
        })
}

/// A selection drawn as fractions, made concrete for a trace of `ranks` ranks spanning `span`.
#[derive(Debug, Clone)]
struct Draw {
    ranks: Option<Vec<bool>>,
    window: Option<(f64, f64)>,
    min_bytes: Option<u64>,
    max_bytes: Option<u64>,
    kinds: Option<Vec<CallKind>>,
}

fn draw() -> impl Strategy<Value = Draw> {
    let kinds = proptest::sample::subsequence(
        vec![
            CallKind::Send,
            CallKind::Isend,
            CallKind::Recv,
            CallKind::Irecv,
            CallKind::SendRecv,
            CallKind::Completion,
            CallKind::Collective,
            CallKind::Lifecycle,
        ],
        0..=8,
    );
    (
        proptest::option::of(proptest::collection::vec(any::<bool>(), 16)),
        proptest::option::of((0.0f64..1.0, 0.0f64..1.0)),
        proptest::option::of(prop_oneof![Just(0u64), Just(21), Just(1024), Just(2000)]),
        proptest::option::of(prop_oneof![Just(0u64), Just(20), Just(1024), Just(5000)]),
        proptest::option::of(kinds),
    )
        .prop_map(|(ranks, window, min_bytes, max_bytes, kinds)| Draw {
            ranks,
            window: window.map(|(a, b)| (a.min(b), a.max(b))),
            min_bytes,
            max_bytes,
            kinds,
        })
}

impl Draw {
    fn selection(&self, t: &Trace) -> Selection {
        let (start, end) = t.span();
        let at = |f: f64| start + ((end - start) as f64 * f) as u64;
        Selection {
            ranks: self
                .ranks
                .as_ref()
                .map(|m| (0..t.num_ranks()).filter(|&r| m[r as usize % m.len()]).collect()),
            comm: None,
            from: self.window.map(|w| at(w.0)),
            to: self.window.map(|w| at(w.1)),
            min_bytes: self.min_bytes,
            max_bytes: self.max_bytes,
            kinds: self.kinds.clone(),
            on_comms: None,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn restricting_commutes_with_the_matrix(spec in spec(), d in draw()) {
        let t = generate(&spec).unwrap();
        let s = d.selection(&t);
        let r = t.restrict(&s);
        let expected = CommMatrix::from_trace(&t, &s);
        prop_assert_eq!(&CommMatrix::from_trace(&r, &s), &expected);
        // Without the selection, the restricted trace's matrix has the same entries towards
        // selected receivers; other columns hold the kept sends to unselected ranks.
        let all = CommMatrix::from_trace(&r, &Selection::all());
        let n = t.num_ranks();
        for (from, to) in (0..n).flat_map(|a| (0..n).map(move |b| (a, b))) {
            if s.selects_rank(&t, to) {
                prop_assert_eq!(all.get(from, to), expected.get(from, to), "entry {} -> {}", from, to);
            } else {
                prop_assert_eq!(expected.get(from, to), None);
            }
        }
        prop_assert_eq!(
            serde_json::to_value(t.clone().into_restricted(&s)).unwrap(),
            serde_json::to_value(&r).unwrap()
        );
    }

    #[test]
    fn links_of_the_restricted_trace_name_the_original_calls(spec in spec(), d in draw()) {
        let t = generate(&spec).unwrap();
        let s = d.selection(&t);
        let r = t.restrict(&s);
        let mut sends = 0u64;
        for (rt, orig) in r.ranks.iter().zip(&t.ranks) {
            let n = rt.calls.len();
            let id = |calls: &tracelogic_model::Calls, i: u32| (calls.func[i as usize], calls.enter(i as usize));
            // Kept calls are a subsequence of the original calls, each selected or serving a kept operation.
            let mut j = 0;
            for i in 0..n {
                while j < orig.calls.len() && (orig.calls.func[j], orig.calls.enter(j)) != id(&rt.calls, i as u32) {
                    j += 1;
                }
                prop_assert!(j < orig.calls.len(), "rank {} call {} is not an original call", rt.rank, i);
                prop_assert!(s.selects_time(rt.calls.enter(i)));
                j += 1;
            }
            // Each kept operation is an original one with the same posting call and completion.
            let mut k = 0;
            for i in 0..rt.p2p.len() {
                let (post, done) = (rt.p2p.post[i], rt.p2p.complete(i));
                prop_assert!((post as usize) < n);
                prop_assert!(done == NOT_COMPLETED || (done as usize) < n);
                while k < orig.p2p.len()
                    && !(id(&orig.calls, orig.p2p.post[k]) == id(&rt.calls, post)
                        && orig.p2p.dir[k] == rt.p2p.dir[i]
                        && orig.p2p.peer[k] == rt.p2p.peer[i]
                        && orig.p2p.tag[k] == rt.p2p.tag[i])
                {
                    k += 1;
                }
                prop_assert!(k < orig.p2p.len(), "rank {} op {} is not an original operation", rt.rank, i);
                prop_assert!(s.selects_p2p(&t, rt.rank, k));
                let od = orig.p2p.complete(k);
                if done != NOT_COMPLETED {
                    prop_assert_eq!(id(&rt.calls, done), id(&orig.calls, od));
                } else {
                    prop_assert!(od == NOT_COMPLETED || !s.selects_time(orig.calls.enter(od as usize)));
                }
                if rt.p2p.dir[i] == P2pDir::Send {
                    sends += 1;
                }
                k += 1;
            }
            for &c in &rt.collectives.call {
                prop_assert!((c as usize) < n);
            }
            let selected_ops = (0..orig.p2p.len()).filter(|&i| s.selects_p2p(&t, orig.rank, i)).count();
            prop_assert_eq!(rt.p2p.len(), selected_ops);
            let selected_coll = (0..orig.collectives.len()).filter(|&i| s.selects_collective(&t, orig.rank, i)).count();
            prop_assert_eq!(rt.collectives.len(), selected_coll);
        }
        let m = match_messages(&r);
        prop_assert_eq!(m.messages.len() as u64 + m.unmatched_sends, sends);
    }
}
