//! Archives written by the official OTF2 library (`tests/tools/otf2_gen_mpi.py`, PyPI
//! `otf2==3.2`): the model we read must equal what the generator says it wrote (its
//! `expected.json`): calls with times and threads, peers as world ranks, tags, bytes,
//! communicator members, collective roots and sizes.

#[path = "otf2_support.rs"]
mod support;

use serde_json::Value;
use support::{load_dir, python_otf2_available, run_python, tool, TempDir};
use tracelogic_formats::otf2;
use tracelogic_formats::NoProgress;
use tracelogic_model::{P2pDir, Trace, NO_ROOT};

fn generate(tag: &str, nranks: u32, bare: bool) -> Option<(Trace, Value)> {
    if !python_otf2_available() {
        return None;
    }
    let dir = TempDir::new(tag);
    let out = dir.0.join("archive");
    let n = nranks.to_string();
    let mut args = vec![out.as_path(), std::path::Path::new(&n)];
    if bare {
        args.push(std::path::Path::new("--bare"));
    }
    run_python(&tool("otf2_gen_mpi.py"), &args);
    let files = load_dir(&out);
    let expected: Value = serde_json::from_slice(&std::fs::read(out.join("expected.json")).unwrap()).unwrap();
    let trace = otf2::read(&files, &mut NoProgress).expect("generated archive reads");
    Some((trace, expected))
}

fn check(t: &Trace, want: &Value) {
    let comms = want["comms"].as_object().unwrap();
    assert_eq!(t.comms[0].name, "MPI_COMM_WORLD");
    assert_eq!(t.comms.len(), comms.len(), "{:?}", t.comms);
    for c in &t.comms {
        let members: Vec<u64> = c.members.iter().map(|&m| m as u64).collect();
        let expected: Vec<u64> = comms[&c.name]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(members, expected, "members of {}", c.name);
    }
    let ranks = want["ranks"].as_array().unwrap();
    assert_eq!(t.num_ranks() as usize, ranks.len());
    for (r, want) in ranks.iter().enumerate() {
        let rt = &t.ranks[r];
        let calls: Vec<(String, u64, u64, u64)> = (0..rt.calls.len())
            .map(|i| {
                let c = &rt.calls;
                (
                    t.call_name(r as u32, i as u32).to_string(),
                    c.enter(i),
                    c.exit(i),
                    c.location[i] as u64,
                )
            })
            .collect();
        let expected: Vec<(String, u64, u64, u64)> = want["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c[0].as_str().unwrap().to_string(),
                    c[1].as_u64().unwrap(),
                    c[2].as_u64().unwrap(),
                    c[3].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(calls, expected, "calls of rank {r}");
        let p = &rt.p2p;
        let ops: Vec<String> = (0..p.len())
            .map(|i| {
                let dir = if p.dir[i] == P2pDir::Send { "Send" } else { "Recv" };
                let comm = &t.comms[p.comm[i] as usize].name;
                format!(
                    "{} {} {dir} {} {} {comm} {}",
                    p.post[i],
                    p.complete(i),
                    p.peer[i],
                    p.tag[i],
                    p.bytes.at(i)
                )
            })
            .collect();
        let expected: Vec<String> = want["p2p"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                format!(
                    "{} {} {} {} {} {} {}",
                    o[0],
                    o[1],
                    o[2].as_str().unwrap(),
                    o[3],
                    o[4],
                    o[5].as_str().unwrap(),
                    o[6]
                )
            })
            .collect();
        assert_eq!(ops, expected, "point-to-point operations of rank {r}");
        let c = &rt.collectives;
        let colls: Vec<String> = (0..c.len())
            .map(|i| {
                let root = if c.root[i] == NO_ROOT {
                    "null".to_string()
                } else {
                    c.root[i].to_string()
                };
                let comm = &t.comms[c.comm[i] as usize].name;
                format!(
                    "{} {:?} {comm} {root} {} {}",
                    c.call[i], c.op[i], c.bytes_sent[i], c.bytes_recv[i]
                )
            })
            .collect();
        let expected: Vec<String> = want["collectives"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                format!(
                    "{} {} {} {} {} {}",
                    o[0],
                    o[1].as_str().unwrap(),
                    o[2].as_str().unwrap(),
                    o[3],
                    o[4],
                    o[5]
                )
            })
            .collect();
        assert_eq!(colls, expected, "collectives of rank {r}");
    }
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

#[test]
fn eight_rank_ring_split_and_collectives_match_the_generator() {
    let Some((t, want)) = generate("gen8", 8, false) else {
        return;
    };
    check(&t, &want);
    // Locations were defined in reverse rank order: rank 0 is location 7.
    assert_eq!(t.ranks[0].locations[0].id, 7);
    assert_eq!(t.ranks[1].locations.len(), 2);
    // Over the even/odd inter-communicator, rank 0 sends to odd rank 0 = world rank 1.
    let bridge = t.comms.iter().position(|c| c.name == "bridge").unwrap() as u32;
    let p = &t.ranks[0].p2p;
    let i = p.comm.iter().position(|&c| c == bridge).unwrap();
    assert_eq!((p.dir[i], p.peer[i]), (P2pDir::Send, 1));
}

#[test]
fn odd_rank_count_gives_uneven_split_communicators() {
    let Some((t, want)) = generate("gen5", 5, false) else {
        return;
    };
    check(&t, &want);
    assert_eq!(
        t.comms.iter().find(|c| c.name == "even").unwrap().members,
        vec![0, 2, 4]
    );
}

#[test]
fn mpi_events_without_enter_leave_become_calls_named_after_them() {
    let Some((t, want)) = generate("bare", 8, true) else {
        return;
    };
    check(&t, &want);
    assert_eq!(t.call_name(0, 0), "MPI_Irecv");
}

#[test]
fn generated_archive_round_trips_through_our_writer() {
    let Some((t, _)) = generate("gen-rt", 6, false) else {
        return;
    };
    let back = otf2::read(&otf2::write(&t, "traces"), &mut NoProgress).unwrap();
    assert_eq!(back.comms, t.comms);
    for (a, b) in t.ranks.iter().zip(&back.ranks) {
        assert_eq!(a.calls.enter, b.calls.enter);
        assert_eq!(a.p2p.peer, b.p2p.peer);
        assert_eq!(a.p2p.comm, b.p2p.comm);
        assert_eq!(a.collectives.root, b.collectives.root);
        assert_eq!(a.collectives.op, b.collectives.op);
    }
}
