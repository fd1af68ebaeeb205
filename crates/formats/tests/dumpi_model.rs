//! Model-layer semantics on hand-encoded DUMPI files: communicator membership (split colours
//! and keys, groups, dup), wildcard receives resolved from statuses, request completion,
//! collective roots and bytes, user datatypes, PAPI metrics, call paths, version quirks,
//! rank-file discovery, progress and cancellation.

#[path = "dumpi_builder.rs"]
mod builder;

use builder::{id, trace_files, Bin, A};
use tracelogic_formats::dumpi::raw::{BinFile, Value};
use tracelogic_formats::{dumpi, InputFile, NoProgress, Progress};
use tracelogic_model::{CollectiveOp, P2pDir, Trace, ANY_SOURCE, ANY_TAG, NOT_COMPLETED, NO_CALLPATH};

fn read(bins: &[Bin]) -> Trace {
    let files = trace_files(&bins.iter().map(Bin::finish).collect::<Vec<_>>());
    dumpi::read(&files, &mut NoProgress).expect("reads")
}

const WORLD: u16 = 2;
const INT: u16 = 9;
const DOUBLE: u16 = 14;

fn send(b: &mut Bin, t: u64, count: i32, dt: u16, dest: i32, tag: i32, comm: u16) {
    b.call(id::SEND, t, &[A::I(count), A::H(dt), A::I(dest), A::I(tag), A::H(comm)]);
}

#[allow(clippy::too_many_arguments)]
fn recv(b: &mut Bin, t: u64, count: i32, dt: u16, src: i32, tag: i32, comm: u16, status: Vec<(i32, i32, i32)>) {
    b.call(
        id::RECV,
        t,
        &[A::I(count), A::H(dt), A::I(src), A::I(tag), A::H(comm), A::St(status)],
    );
}

#[test]
fn comm_split_orders_members_by_key_then_old_rank() {
    let colors = [0, 1, 0, 1];
    let keys = [5, 0, 1, 0];
    let mut bins: Vec<Bin> = (0..4).map(|_| Bin::default()).collect();
    for (r, b) in bins.iter_mut().enumerate() {
        b.call(id::INIT, 0, &[A::I(0)]);
        b.call(
            id::COMM_SPLIT,
            10,
            &[A::H(WORLD), A::I(colors[r]), A::I(keys[r]), A::H(4)],
        );
    }
    // colour 0 = [2, 0] (keys 1, 5); colour 1 = [1, 3] (equal keys: old rank order).
    send(&mut bins[0], 20, 3, INT, 0, 9, 4); // local 0 of [2, 0] = world 2
    recv(&mut bins[2], 20, 3, INT, 1, 9, 4, vec![]); // local 1 = world 0
    send(&mut bins[1], 20, 1, DOUBLE, 1, 9, 4); // local 1 of [1, 3] = world 3
    recv(&mut bins[3], 20, 1, DOUBLE, 0, 9, 4, vec![]);
    for (r, b) in bins.iter_mut().enumerate() {
        b.call(id::BCAST, 30, &[A::I(3), A::H(INT), A::I(0), A::H(4)]);
        b.call(id::COMM_DUP, 40, &[A::H(4), A::H(5)]);
        b.call(id::BARRIER, 50, &[A::H(5)]);
        let _ = r;
    }
    let t = read(&bins);
    assert_eq!(t.comms.len(), 5, "{:?}", t.comms);
    let c0 = t.ranks[0].p2p.comm[0];
    let c1 = t.ranks[1].p2p.comm[0];
    assert_eq!(t.comms[c0 as usize].members, vec![2, 0]);
    assert_eq!(t.comms[c1 as usize].members, vec![1, 3]);
    assert_eq!(t.ranks[2].p2p.comm[0], c0);
    assert_eq!((t.ranks[0].p2p.peer[0], t.ranks[0].p2p.bytes.at(0)), (2, 12));
    assert_eq!((t.ranks[2].p2p.peer[0], t.ranks[2].p2p.dir[0]), (0, P2pDir::Recv));
    assert_eq!((t.ranks[1].p2p.peer[0], t.ranks[1].p2p.bytes.at(0)), (3, 8));
    assert_eq!(t.ranks[3].p2p.peer[0], 1);
    // Bcast root 0 of each colour: world 2 and world 1.
    let roots: Vec<u32> = (0..4).map(|r| t.ranks[r].collectives.root[0]).collect();
    assert_eq!(roots, vec![2, 1, 2, 1]);
    let sent: Vec<(u64, u64)> = (0..4)
        .map(|r| {
            (
                t.ranks[r].collectives.bytes_sent[0],
                t.ranks[r].collectives.bytes_recv[0],
            )
        })
        .collect();
    assert_eq!(sent, vec![(0, 12), (12, 0), (12, 0), (0, 12)]);
    // Dup: a distinct communicator with the same members.
    let d0 = t.ranks[0].collectives.comm[1];
    assert_ne!(d0, c0);
    assert_eq!(t.comms[d0 as usize].members, vec![2, 0]);
    assert_eq!(t.ranks[2].collectives.comm[1], d0);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

#[test]
fn wildcard_receives_are_resolved_from_statuses_and_requests_linked() {
    let mut s = Bin::default();
    s.call(
        id::ISEND,
        0,
        &[A::I(2), A::H(DOUBLE), A::I(1), A::I(7), A::H(WORLD), A::I(2)],
    );
    s.call(
        id::ISEND,
        1,
        &[A::I(2), A::H(DOUBLE), A::I(1), A::I(8), A::H(WORLD), A::I(3)],
    );
    s.call(id::WAITALL, 2, &[A::I(2), A::Arr(vec![2, 3]), A::St(vec![])]);
    send(&mut s, 3, 1, INT, 1, 9, WORLD);
    s.call(
        id::SENDRECV,
        4,
        &[
            A::I(1),
            A::H(INT),
            A::I(1),
            A::I(4),
            A::I(5),
            A::H(INT),
            A::I(1),
            A::I(4),
            A::H(WORLD),
            A::St(vec![]),
        ],
    );
    let mut r = Bin::default();
    r.call(
        id::IRECV,
        0,
        &[A::I(10), A::H(DOUBLE), A::I(-1), A::I(-1), A::H(WORLD), A::I(5)],
    );
    r.call(
        id::IRECV,
        1,
        &[A::I(2), A::H(DOUBLE), A::I(-1), A::I(-1), A::H(WORLD), A::I(6)],
    );
    r.call(
        id::WAITANY,
        2,
        &[A::I(2), A::Arr(vec![5, 6]), A::I(1), A::St(vec![(16, 0, 8)])],
    );
    r.call(id::WAIT, 3, &[A::I(5), A::St(vec![(16, 0, 7)])]);
    r.call(
        id::IRECV,
        4,
        &[A::I(1), A::H(INT), A::I(-1), A::I(-1), A::H(WORLD), A::I(7)],
    );
    r.call(id::TEST, 5, &[A::I(7), A::I(0), A::St(vec![])]);
    r.call(id::TEST, 6, &[A::I(7), A::I(1), A::St(vec![])]);
    r.call(
        id::SENDRECV,
        7,
        &[
            A::I(5),
            A::H(INT),
            A::I(0),
            A::I(4),
            A::I(1),
            A::H(INT),
            A::I(0),
            A::I(4),
            A::H(WORLD),
            A::St(vec![]),
        ],
    );
    r.call(
        id::IRECV,
        8,
        &[A::I(1), A::H(INT), A::I(0), A::I(3), A::H(WORLD), A::I(9)],
    );
    let t = read(&[s, r]);
    let p = &t.ranks[1].p2p;
    assert_eq!(p.len(), 6);
    // First Irecv: completed by MPI_Wait (call 3), status says source 0, tag 7, 16 bytes.
    assert_eq!((p.peer[0], p.tag[0], p.bytes.at(0), p.complete(0)), (0, 7, 16, 3));
    assert_eq!((p.peer[1], p.tag[1], p.bytes.at(1), p.complete(1)), (0, 8, 16, 2));
    // Status ignored: the wildcard stays; the failed MPI_Test does not complete it.
    assert_eq!(
        (p.peer[2], p.tag[2], p.bytes.at(2), p.complete(2)),
        (ANY_SOURCE, ANY_TAG, 4, 6)
    );
    // Sendrecv: two operations posted and completed by the same call.
    assert_eq!(
        (p.dir[3], p.peer[3], p.bytes.at(3), p.post[3], p.complete(3)),
        (P2pDir::Send, 0, 20, 7, 7)
    );
    assert_eq!((p.dir[4], p.peer[4], p.bytes.at(4)), (P2pDir::Recv, 0, 4));
    assert_eq!(p.complete(5), NOT_COMPLETED);
    let q = &t.ranks[0].p2p;
    assert_eq!(q.completes().take(2).collect::<Vec<_>>(), [2, 2]);
    assert_eq!((q.complete(2), q.bytes.at(2)), (3, 4));
    assert_eq!(t.call_name(0, 2), "MPI_Waitall");
    assert!(
        t.warnings.iter().any(|w| w.contains("never completed")),
        "{:?}",
        t.warnings
    );
}

#[test]
fn comm_create_from_group_excl_and_gather_bytes() {
    let mut bins: Vec<Bin> = (0..3).map(|_| Bin::default()).collect();
    for (r, b) in bins.iter_mut().enumerate() {
        b.call(id::COMM_GROUP, 0, &[A::H(WORLD), A::H(3)]);
        b.call(id::GROUP_EXCL, 1, &[A::H(3), A::I(1), A::Arr(vec![0]), A::H(4)]);
        b.call(
            id::COMM_CREATE,
            2,
            &[A::H(WORLD), A::H(4), A::H(if r == 0 { 1 } else { 7 })],
        );
    }
    send(&mut bins[2], 3, 4, INT, 0, 1, 7);
    recv(&mut bins[1], 3, 4, INT, 1, 1, 7, vec![]);
    // Gather of one int to comm rank 0 (world 1): fields after comm only at the root.
    bins[1].call(
        id::GATHER,
        4,
        &[A::I(0), A::I(1), A::H(INT), A::I(0), A::H(7), A::I(1), A::H(INT)],
    );
    bins[2].call(id::GATHER, 4, &[A::I(1), A::I(1), A::H(INT), A::I(0), A::H(7)]);
    let t = read(&bins);
    assert_eq!(t.comms.len(), 2);
    assert_eq!(t.comms[1].members, vec![1, 2]);
    assert_eq!(
        (
            t.ranks[2].p2p.peer[0],
            t.ranks[2].p2p.comm[0],
            t.ranks[2].p2p.bytes.at(0)
        ),
        (1, 1, 16)
    );
    assert_eq!(t.ranks[1].p2p.peer[0], 2);
    let g1 = &t.ranks[1].collectives;
    let g2 = &t.ranks[2].collectives;
    assert_eq!(
        (g1.op[0], g1.root[0], g1.bytes_sent[0], g1.bytes_recv[0]),
        (CollectiveOp::Gather, 1, 4, 8)
    );
    assert_eq!((g2.root[0], g2.bytes_sent[0], g2.bytes_recv[0]), (1, 4, 0));
    assert!(t.ranks[0].collectives.is_empty());
}

#[test]
fn user_datatype_sizes_come_from_the_file_table() {
    let mut s = Bin::default();
    send(&mut s, 0, 2, 28, 1, 0, WORLD); // type 28 has 24 bytes in the builder's table
    let mut r = Bin::default();
    recv(&mut r, 0, 2, 28, 0, 0, WORLD, vec![]);
    let t = read(&[s, r]);
    assert_eq!(t.ranks[0].p2p.bytes.at(0), 48);
    assert_eq!(t.ranks[1].p2p.bytes.at(0), 48);
}

/// libdumpi registers a handle's size once, at its first use; MPI hands a freed datatype's
/// handle to the next one built (BLACS builds, sends and frees a vector per block), so the
/// file's table holds the first type's size for all of them. The constructors' records say
/// what each one is: 4 blocks of 2 doubles, then 3 blocks of 1 double, then 5 ints, all as
/// handle 29, whose table entry is the first one's 64 bytes.
#[test]
fn datatypes_built_again_on_a_freed_handle_take_their_new_size() {
    const VECTOR: u16 = 36;
    const CONTIGUOUS: u16 = 35;
    const TYPE_SIZE: u16 = 43;
    const COMMIT: u16 = 46;
    const FREE: u16 = 47;
    let table = || {
        let mut b = Bin::default();
        b.sizes.push(64); // handle 29: the first vector's 4 x 2 doubles
        b
    };
    let mut s = table();
    let build = |b: &mut Bin, t: u64, id: u16, args: &[A]| {
        b.call(id, t, args);
        b.call(COMMIT, t + 2, &[A::H(29)]);
    };
    build(&mut s, 0, VECTOR, &[A::I(4), A::I(2), A::I(10), A::H(DOUBLE), A::H(29)]);
    send(&mut s, 10, 1, 29, 1, 0, WORLD);
    s.call(FREE, 20, &[A::H(29)]);
    build(&mut s, 30, VECTOR, &[A::I(3), A::I(1), A::I(7), A::H(DOUBLE), A::H(29)]);
    send(&mut s, 40, 1, 29, 1, 0, WORLD);
    s.call(FREE, 50, &[A::H(29)]);
    build(&mut s, 60, CONTIGUOUS, &[A::I(5), A::H(INT), A::H(29)]);
    send(&mut s, 70, 2, 29, 1, 0, WORLD);
    // A recorded MPI_Type_size is the size itself.
    s.call(TYPE_SIZE, 80, &[A::H(29), A::I(12)]);
    send(&mut s, 90, 1, 29, 1, 0, WORLD);
    let mut r = table();
    recv(&mut r, 10, 8, DOUBLE, 0, 0, WORLD, vec![]);
    recv(&mut r, 40, 3, DOUBLE, 0, 0, WORLD, vec![]);
    recv(&mut r, 70, 10, INT, 0, 0, WORLD, vec![]);
    recv(&mut r, 90, 3, INT, 0, 0, WORLD, vec![]);
    let t = read(&[s, r]);
    let bytes = |rank: usize| (0..4).map(|i| t.ranks[rank].p2p.bytes.at(i)).collect::<Vec<u64>>();
    assert_eq!(bytes(0), vec![64, 24, 40, 12], "sender: each type's own size");
    assert_eq!(bytes(1), vec![64, 24, 40, 12], "receiver: built-in types");
}

#[test]
fn papi_counters_become_metrics_and_function_records_call_paths() {
    let mut b = Bin {
        perf_labels: vec!["PAPI_TOT_CYC", "PAPI_L1_DCM"],
        functions: vec![(0x400, "main"), (0x500, "solve")],
        ..Bin::default()
    };
    b.call(id::ENTER, 0, &[A::L(0x400)]);
    b.call_perf(id::INIT, 10, &[(10, 20), (1, 2)], &[A::I(0)]);
    b.call(id::ENTER, 20, &[A::L(0x500)]);
    b.call_perf(id::BARRIER, 30, &[(30, 40), (3, 4)], &[A::H(WORLD)]);
    b.call(id::EXIT, 40, &[A::L(0x500)]);
    b.call(id::FINALIZE, 50, &[]);
    b.call(id::EXIT, 60, &[A::L(0x400)]);
    let t = read(&[b]);
    let rt = &t.ranks[0];
    assert_eq!(rt.calls.len(), 3, "enter/exit records are not MPI calls");
    assert_eq!(t.metrics.names(), ["PAPI_TOT_CYC", "PAPI_L1_DCM"]);
    assert_eq!(rt.metrics[0].value, vec![10.0, 20.0, 30.0, 40.0]);
    assert_eq!(rt.metrics[1].value, vec![1.0, 2.0, 3.0, 4.0]);
    // Times in ns from the earliest record (the enter of main at 0 µs).
    assert_eq!(rt.metrics[0].time, vec![10_000, 11_000, 30_000, 31_000]);
    assert_eq!(rt.calls.enter, vec![10_000, 30_000, 50_000]);
    assert_eq!(rt.span, Some((0, 60_000)));
    let path = |i: usize| -> Vec<&str> {
        let cp = rt.calls.callpath[i];
        assert_ne!(cp, NO_CALLPATH);
        t.callpaths[cp as usize].iter().map(|&r| t.regions.name(r)).collect()
    };
    assert_eq!(path(0), ["main"]);
    assert_eq!(path(1), ["main", "solve"]);
    assert_eq!(path(2), ["main"]);
    assert_eq!(rt.locations.len(), 1);
}

#[test]
fn version_quirks_of_old_traces() {
    // Before 0.6.2 Init repeats argc; before 0.6.3 statuses have no tag.
    let mut b = Bin {
        version: (0, 6, 1),
        ..Bin::default()
    };
    b.call(id::INIT, 0, &[A::I(1), A::I(1), A::S("./a.out")]);
    b.call(
        id::RECV,
        1,
        &[
            A::I(1),
            A::H(INT),
            A::I(-1),
            A::I(3),
            A::H(WORLD),
            A::I(1),
            A::I(4),
            A::I(0),
            A::B(0),
            A::B(0),
        ],
    );
    let bytes = b.finish();
    let file = BinFile::parse("old.bin", &bytes).expect("parses");
    let recs: Vec<_> = file.records().collect::<Result<_, _>>().expect("decodes");
    assert_eq!(recs[0].arg("argv"), Some(&Value::Strs(vec!["./a.out".into()])));
    let st = recs[1].statuses();
    assert_eq!((st.len(), st[0].bytes, st[0].source, st[0].tag), (1, 4, 0, -1));
    let t = read(&[b]);
    assert_eq!((t.ranks[0].p2p.peer[0], t.ranks[0].p2p.tag[0]), (0, 3));
}

#[test]
fn rank_files_are_found_for_any_padding_and_missing_ones_named() {
    let bins: Vec<Vec<u8>> = (0..2)
        .map(|_| {
            let mut b = Bin::default();
            b.call(id::BARRIER, 0, &[A::H(WORLD)]);
            b.finish()
        })
        .collect();
    let meta = trace_files(&bins).remove(0);
    let unpadded = vec![
        InputFile::new("dir/t.meta", meta.bytes.clone()),
        InputFile::new("dir/t-0.bin", bins[0].clone()),
        InputFile::new("dir/t-1.bin", bins[1].clone()),
    ];
    let t = dumpi::read(&unpadded, &mut NoProgress).expect("unpadded rank numbers");
    assert_eq!(t.num_ranks(), 2);
    assert_eq!(t.source, "dir/t");

    let missing = vec![meta.clone(), InputFile::new("t-0000.bin", bins[0].clone())];
    let e = dumpi::read(&missing, &mut NoProgress).expect_err("rank 1 missing");
    assert_eq!(e.file, "t-0001.bin");
    assert!(e.message.contains("numprocs=2"), "{e}");

    let huge = vec![
        InputFile::new("t.meta", "numprocs=2000000000\nfileprefix=t\n"),
        InputFile::new("t-0000.bin", bins[0].clone()),
    ];
    let e = dumpi::read(&huge, &mut NoProgress).expect_err("absurd numprocs");
    assert_eq!(e.file, "t-0001.bin");

    let bad = vec![InputFile::new("t.meta", "numprocs=two\n")];
    let e = dumpi::read(&bad, &mut NoProgress).expect_err("bad numprocs");
    assert_eq!((e.file.as_str(), e.line), ("t.meta", Some(1)));
}

#[test]
fn progress_is_reported_per_rank_and_cancel_stops() {
    let bins: Vec<Vec<u8>> = (0..3)
        .map(|_| {
            let mut b = Bin::default();
            b.call(id::BARRIER, 0, &[A::H(WORLD)]);
            b.finish()
        })
        .collect();
    let files = trace_files(&bins);
    let mut seen: Vec<Progress> = Vec::new();
    let mut sink = |p: &Progress| {
        seen.push(p.clone());
        true
    };
    dumpi::read(&files, &mut sink).expect("reads");
    let total: u64 = bins.iter().map(|b| b.len() as u64).sum();
    assert!(seen.iter().all(|p| p.bytes_total == total));
    assert!(seen.windows(2).all(|w| w[0].bytes_done <= w[1].bytes_done));
    for r in 0..3 {
        assert!(seen.iter().any(|p| p.stage == format!("reading rank {r}")));
    }
    assert_eq!(seen.last().expect("reports").bytes_done, total);

    let mut calls = 0;
    let mut cancel = |_: &Progress| {
        calls += 1;
        calls < 2
    };
    let e = dumpi::read(&files, &mut cancel).expect_err("cancelled");
    assert!(e.cancelled);
    assert_eq!(e.file, "t-0001.bin");
}

#[test]
fn persistent_requests_waitsome_and_cartesian_communicators() {
    const SEND_INIT: u16 = 26;
    const RECV_INIT: u16 = 30;
    const STARTALL: u16 = 32;
    const TESTSOME: u16 = 21;
    const CART_CREATE: u16 = 99;
    let mut bins: Vec<Bin> = (0..3).map(|_| Bin::default()).collect();
    for b in bins.iter_mut() {
        // A 1-D periodic grid of 2 ranks: world rank 2 gets MPI_COMM_NULL.
        b.call(
            CART_CREATE,
            0,
            &[A::H(WORLD), A::I(1), A::Arr(vec![2]), A::Arr(vec![1]), A::I(0), A::H(6)],
        );
    }
    bins[2].body.clear();
    bins[2].call(
        CART_CREATE,
        0,
        &[A::H(WORLD), A::I(1), A::Arr(vec![2]), A::Arr(vec![1]), A::I(0), A::H(1)],
    );
    // Rank 0: persistent send and receive with rank 1 on the grid, started twice.
    let b = &mut bins[0];
    b.call(SEND_INIT, 1, &[A::I(4), A::H(INT), A::I(1), A::I(3), A::H(6), A::I(10)]);
    b.call(RECV_INIT, 2, &[A::I(4), A::H(INT), A::I(1), A::I(3), A::H(6), A::I(11)]);
    for k in 0..2u64 {
        b.call(STARTALL, 3 + 2 * k, &[A::I(2), A::Arr(vec![10, 11])]);
        b.call(
            id::WAITSOME,
            4 + 2 * k,
            &[
                A::I(2),
                A::Arr(vec![10, 11]),
                A::I(2),
                A::Arr(vec![1, 0]),
                A::St(vec![]),
            ],
        );
    }
    // Rank 1: Isend + Irecv completed by a Testsome that reports only the receive.
    let b = &mut bins[1];
    b.call(id::ISEND, 1, &[A::I(4), A::H(INT), A::I(0), A::I(3), A::H(6), A::I(20)]);
    b.call(id::IRECV, 2, &[A::I(4), A::H(INT), A::I(0), A::I(3), A::H(6), A::I(21)]);
    b.call(
        TESTSOME,
        3,
        &[
            A::I(2),
            A::Arr(vec![20, 21]),
            A::I(1),
            A::Arr(vec![1]),
            A::St(vec![(16, 0, 3)]),
        ],
    );
    b.call(id::WAIT, 4, &[A::I(20), A::St(vec![])]);
    let t = read(&bins);
    assert_eq!(t.comms.len(), 2);
    assert_eq!(t.comms[1].members, vec![0, 1]);
    let p = &t.ranks[0].p2p;
    assert_eq!(p.len(), 4, "two operations per Startall");
    assert_eq!(p.post, vec![3, 3, 5, 5]);
    assert_eq!(p.completes().collect::<Vec<_>>(), vec![4, 4, 6, 6]);
    assert_eq!((p.dir[0], p.dir[1]), (P2pDir::Send, P2pDir::Recv));
    assert!(p.peer.iter().all(|&x| x == 1) && p.bytes.iter().all(|x| x == 16) && p.comm.iter().all(|&c| c == 1));
    let q = &t.ranks[1].p2p;
    assert_eq!((q.complete(0), q.complete(1)), (4, 3));
    assert!(t.ranks[2].p2p.is_empty());
}

#[test]
fn cart_sub_splits_the_grid_into_rows_and_columns() {
    const CART_CREATE: u16 = 99;
    const CART_SUB: u16 = 111;
    // A 2x3 grid, row-major: rank = 3 * row + column.
    let mut bins: Vec<Bin> = (0..6).map(|_| Bin::default()).collect();
    for b in bins.iter_mut() {
        b.call(
            CART_CREATE,
            0,
            &[
                A::H(WORLD),
                A::I(2),
                A::Arr(vec![2, 3]),
                A::Arr(vec![0, 0]),
                A::I(0),
                A::H(5),
            ],
        );
        b.call(CART_SUB, 1, &[A::I(2), A::H(5), A::Arr(vec![0, 1]), A::H(6)]); // rows
        b.call(CART_SUB, 2, &[A::I(2), A::H(5), A::Arr(vec![1, 0]), A::H(7)]); // columns
        b.call(id::COMM_DUP, 3, &[A::H(6), A::H(8)]);
    }
    send(&mut bins[4], 4, 1, INT, 0, 0, 6); // row 1, local 0 = world 3
    recv(&mut bins[3], 4, 1, INT, 1, 0, 6, vec![]);
    send(&mut bins[1], 4, 1, INT, 1, 0, 7); // column 1, local 1 = world 4
    recv(&mut bins[4], 5, 1, INT, 0, 0, 7, vec![]);
    for b in bins.iter_mut() {
        b.call(id::BARRIER, 6, &[A::H(8)]);
    }
    let t = read(&bins);
    let members = |c: u32| t.comms[c as usize].members.clone();
    let p4 = &t.ranks[4].p2p;
    assert_eq!((p4.peer[0], members(p4.comm[0])), (3, vec![3, 4, 5]));
    assert_eq!((p4.peer[1], members(p4.comm[1])), (1, vec![1, 4]));
    assert_eq!(t.ranks[3].p2p.peer[0], 4);
    assert_eq!(t.ranks[3].p2p.comm[0], p4.comm[0], "one communicator per row");
    assert_eq!(t.ranks[1].p2p.peer[0], 4);
    // Rows, columns and the dup of each row: 2 + 3 + 2 communicators besides world and grid.
    assert_eq!(t.comms.len(), 2 + 2 + 3 + 2, "{:?}", t.comms);
    let dup_of_row0 = t.ranks[0].collectives.comm[0];
    assert_eq!(members(dup_of_row0), vec![0, 1, 2]);
    assert_eq!(t.ranks[2].collectives.comm[0], dup_of_row0);
    assert_ne!(t.ranks[3].collectives.comm[0], dup_of_row0);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);

    // Written back, the sub-grids are introduced by the same four creation calls per rank
    // (as MPI_Comm_split where the call cannot express them): no extra calls, same operations.
    let back = dumpi::read(&dumpi::write(&t, "grid"), &mut NoProgress).expect("reads back");
    for (a, b) in t.ranks.iter().zip(&back.ranks) {
        assert_eq!(a.calls.len(), b.calls.len());
        assert_eq!((&a.p2p.peer, &a.p2p.bytes), (&b.p2p.peer, &b.p2p.bytes));
        for (&x, &y) in a
            .p2p
            .comm
            .iter()
            .zip(&b.p2p.comm)
            .chain(a.collectives.comm.iter().zip(&b.collectives.comm))
        {
            assert_eq!(t.comms[x as usize].members, back.comms[y as usize].members);
        }
    }
    assert_eq!(back.call_name(0, 1), "MPI_Comm_split");
}
