use super::*;
use tracelogic_model::match_messages;

fn run(b: NasBenchmark, class: NasClass, n: u32, iterations: u32) -> (Trace, NasTruth) {
    let spec = NasSpec {
        iterations: Some(iterations),
        ..NasSpec::new(b, class, n)
    };
    generate_nas(&spec).unwrap_or_else(|e| panic!("{b} {class} {n}: {e}"))
}

#[test]
fn every_message_is_received_at_every_size() {
    for (b, class, sizes) in [
        (NasBenchmark::Bt, NasClass::S, &[1u32, 4, 9][..]),
        (NasBenchmark::Sp, NasClass::A, &[4, 16, 64][..]),
        (NasBenchmark::Lu, NasClass::A, &[2, 8, 32][..]),
        (NasBenchmark::Mg, NasClass::S, &[2, 4, 8, 32, 128][..]),
        (NasBenchmark::Cg, NasClass::S, &[1, 2, 8, 16, 128][..]),
        (NasBenchmark::Ft, NasClass::S, &[1, 4, 32][..]),
        (NasBenchmark::Is, NasClass::S, &[1, 4, 32][..]),
        (NasBenchmark::Ep, NasClass::S, &[1, 4, 32, 100][..]),
    ] {
        for &n in sizes {
            let (trace, truth) = run(b, class, n, 2);
            let m = match_messages(&trace);
            assert_eq!((m.unmatched_sends, m.unmatched_recvs), (0, 0), "{b} {n}");
            assert_eq!(m.messages.len() as u64, truth.messages, "{b} {n}");
            for msg in &m.messages {
                let (s, r) = (&trace.ranks[msg.sender as usize], &trace.ranks[msg.receiver as usize]);
                let sent = s.calls.enter(s.p2p.post[msg.send_op as usize] as usize);
                let done = r.p2p.complete(msg.recv_op as usize);
                assert_ne!(done, NOT_COMPLETED, "{b} {n}: a receive never completes");
                assert!(r.calls.exit(done as usize) > sent, "{b} {n}: received before sent");
                assert_eq!(
                    s.p2p.bytes.at(msg.send_op as usize),
                    r.p2p.bytes.at(msg.recv_op as usize)
                );
            }
        }
    }
}

#[test]
fn grids_follow_the_sources() {
    assert_eq!(lu_grid(8), (4, 2));
    assert_eq!(lu_grid(32), (8, 4));
    assert_eq!(lu_grid(128), (16, 8));
    assert_eq!(mg_grid(8), [2, 2, 2]);
    assert_eq!(mg_grid(32), [2, 4, 4]);
    assert_eq!(mg_grid(128), [4, 4, 8]);
    assert_eq!(cg_grid(8), (2, 4));
    assert_eq!(cg_grid(16), (4, 4));
}

#[test]
fn mg_coarse_levels_reach_farther_processes() {
    // 32 ranks class S: level 1 has 2 points along axes of 4 processes, so half the
    // processes hold none there and the others exchange with processes 2 apart.
    assert_eq!(mg_grid(32), [2, 4, 4]);
    // Process 11 = (1, 1, 1) holds a point of level 1 on every axis; along axis 2 its
    // level-1 neighbours are (1, 3, 1) = 15 on both sides, its finest-level ones 9 and 13.
    let lv = mg_setup(11, 32, 5, 32);
    assert!(!lv.dead[0]);
    assert_eq!(lv.nbr[0][1], [15, 15]);
    assert_eq!(lv.nbr[4][1], [9, 13]);
    // Process 1 = (1, 0, 0) holds none there: it skips level 1 and takes the coarse values
    // back when level 2 is interpolated.
    let dead = mg_setup(1, 32, 5, 32);
    assert!(dead.dead[0] && !dead.dead[1]);
    assert!(dead.take_ex[1][1] && lv.give_ex[1][1]);
}

#[test]
fn bad_sizes_say_why() {
    let e = generate_nas(&NasSpec::new(NasBenchmark::Bt, NasClass::S, 8)).unwrap_err();
    assert!(e.contains("square"), "{e}");
    let e = generate_nas(&NasSpec::new(NasBenchmark::Lu, NasClass::S, 64)).unwrap_err();
    assert!(e.contains("too small"), "{e}");
    let e = generate_nas(&NasSpec::new(NasBenchmark::Mg, NasClass::S, 12)).unwrap_err();
    assert!(e.contains("power-of-two"), "{e}");
    let e = generate_nas(&NasSpec {
        iterations: Some(1_000_000),
        ..NasSpec::new(NasBenchmark::Lu, NasClass::C, 128)
    })
    .unwrap_err();
    assert!(e.contains("--iterations"), "{e}");
    assert!("dt"
        .parse::<NasBenchmark>()
        .unwrap_err()
        .contains("unknown NAS benchmark"));
    let mut slow = NasSpec::new(NasBenchmark::Mg, NasClass::S, 8);
    slow.clock.latency_ns = u64::MAX;
    assert!(generate_nas(&slow).unwrap_err().contains("2^62"));
    slow.clock = Clock {
        bandwidth: f64::MIN_POSITIVE,
        ..Clock::default()
    };
    assert!(generate_nas(&slow).unwrap_err().contains("2^62"));
    for ranks in [0, u32::MAX] {
        let e = generate_nas(&NasSpec::new(NasBenchmark::Ep, NasClass::S, ranks)).unwrap_err();
        assert!(e.contains("ranks must be"), "{e}");
    }
}

#[test]
fn numbering_permutes_processes_onto_ranks() {
    let spec = NasSpec {
        iterations: Some(1),
        numbering: Numbering::Random,
        seed: 5,
        ..NasSpec::new(NasBenchmark::Lu, NasClass::S, 8)
    };
    let (trace, truth) = generate_nas(&spec).unwrap();
    let (plain, _) = run(NasBenchmark::Lu, NasClass::S, 8, 1);
    assert!(truth.node_of_rank.iter().enumerate().any(|(r, &u)| r as u32 != u));
    for (r, &u) in truth.node_of_rank.iter().enumerate() {
        let a = &trace.ranks[r].p2p;
        let b = &plain.ranks[u as usize].p2p;
        assert_eq!(a.len(), b.len());
        for i in 0..a.len() {
            assert_eq!(truth.node_of_rank[a.peer[i] as usize], b.peer[i]);
            assert_eq!(a.bytes.at(i), b.bytes.at(i));
        }
    }
}
