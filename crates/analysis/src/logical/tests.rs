//! The verification's LCS against Myers' exact diff (the previous implementation), and the
//! representative tie-break hash pinned to fixed-width bytes.

use super::*;

/// The previous `lcs_len`: Myers over the same proportional windows of the whole sequences.
pub(super) fn myers_lcs(a: &[u32], b: &[u32]) -> u64 {
    let windows = (a.len() + b.len()).div_ceil(DIFF_WINDOW).max(1);
    let mut n = 0;
    for w in 0..windows {
        let (a0, a1) = (a.len() * w / windows, a.len() * (w + 1) / windows);
        let (b0, b1) = (b.len() * w / windows, b.len() * (w + 1) / windows);
        for op in similar::capture_diff_deadline(similar::Algorithm::Myers, a, a0..a1, b, b0..b1, None) {
            if let similar::DiffOp::Equal { len, .. } = op {
                n += len as u64;
            }
        }
    }
    n
}

/// xorshift64: reproducible pseudo-random symbols without a dependency.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn bit_parallel_lcs_equals_myers_on_random_sequences() {
    let mut s = 0x9e37_79b9_7f4a_7c15;
    for case in 0..400 {
        let alphabet = 1 + next(&mut s) % 6;
        let len_a = (next(&mut s) % 300) as usize;
        let a: Vec<u32> = (0..len_a).map(|_| (next(&mut s) % alphabet) as u32).collect();
        // Half the cases: `b` is `a` edited (shared prefix/suffix, a few changes).
        let b: Vec<u32> = if case % 2 == 0 {
            let mut b = a.clone();
            for _ in 0..next(&mut s) % 8 {
                if b.is_empty() {
                    break;
                }
                let i = (next(&mut s) as usize) % b.len();
                match next(&mut s) % 3 {
                    0 => b[i] = (next(&mut s) % alphabet) as u32,
                    1 => {
                        b.remove(i);
                    }
                    _ => b.insert(i, (next(&mut s) % alphabet) as u32),
                }
            }
            b
        } else {
            let len_b = (next(&mut s) % 300) as usize;
            (0..len_b).map(|_| (next(&mut s) % alphabet) as u32).collect()
        };
        assert_eq!(lcs_len(&a, &b), myers_lcs(&a, &b), "case {case}: {a:?} / {b:?}");
    }
}

#[test]
fn bit_parallel_lcs_equals_myers_on_real_expansions() {
    // LU 32 class A from its maximal rank alone: the boundary ranks' expansions differ
    // from their real sequences in every wavefront message (the 47 s case's shape).
    let spec = tracelogic_synth::NasSpec {
        iterations: Some(1),
        ..tracelogic_synth::NasSpec::new(tracelogic_synth::NasBenchmark::Lu, tracelogic_synth::NasClass::A, 32)
    };
    let (trace, _) = tracelogic_synth::generate_nas(&spec).unwrap();
    let placement = Placement::new(TopologySpec::parse("grid:8x4").unwrap(), 32, (0..32).map(|r| (r, r))).unwrap();
    let alone = logicalize_ranks(&trace, &placement, Some(&[9])).unwrap();
    let mut differing = 0;
    for r in 0..32 {
        let table = &placement.neighbour_tables_with_self(&[])[r as usize];
        let expanded = physical_calls(&expand_with(table, r, alone.records.iter().map(|x| &x.call)));
        let real = real_calls(&trace, &placement, r);
        let ek: Vec<_> = expanded.iter().map(PhysicalCall::key).collect();
        let rk: Vec<_> = real.iter().map(|(c, _)| c.key()).collect();
        let (sa, sb) = symbols(&ek, &rk);
        differing += usize::from(sa != sb);
        assert_eq!(lcs_len(&ek, &rk), myers_lcs(&sa, &sb), "rank {r}");
    }
    assert_eq!(differing, 20, "the 20 boundary ranks differ");
}

#[test]
fn content_key_hashes_fixed_width_bytes() {
    let mut t = Trace::new("test", "pin", 1);
    let send = t.functions.intern("MPI_Send");
    let recv = t.functions.intern("MPI_Recv");
    let rt = &mut t.ranks[0];
    rt.calls.func = vec![send, recv].into();
    rt.calls.kind = vec![tracelogic_model::CallKind::Send, tracelogic_model::CallKind::Recv];
    rt.p2p.dir = vec![P2pDir::Send, P2pDir::Recv];
    rt.p2p.tag = vec![7, -1].into();
    rt.p2p.bytes = vec![80, 1 << 33].into();
    // The bytes written by hand: each sequence as u64 length then its elements.
    let mut bytes: Vec<u8> = Vec::new();
    bytes.extend(2u64.to_le_bytes());
    bytes.extend(send.to_le_bytes());
    bytes.extend(recv.to_le_bytes());
    bytes.extend(2u64.to_le_bytes());
    bytes.extend((tracelogic_model::CallKind::Send as i64).to_le_bytes());
    bytes.extend((tracelogic_model::CallKind::Recv as i64).to_le_bytes());
    bytes.extend(2u64.to_le_bytes());
    bytes.extend(0i64.to_le_bytes());
    bytes.extend(1i64.to_le_bytes());
    bytes.extend(2u64.to_le_bytes());
    bytes.extend(7i32.to_le_bytes());
    bytes.extend((-1i32).to_le_bytes());
    bytes.extend(2u64.to_le_bytes());
    bytes.extend(80u64.to_le_bytes());
    bytes.extend((1u64 << 33).to_le_bytes());
    assert_eq!(bytes.len(), 8 + 8 + 8 + 16 + 8 + 16 + 8 + 8 + 8 + 16);
    let mut h = std::hash::DefaultHasher::new();
    std::hash::Hasher::write(&mut h, &bytes);
    let key = content_key(&t, 0);
    assert_eq!(key.2, std::hash::Hasher::finish(&h));
    assert_eq!(key.0 .0, 2);
    // On a 64-bit little-endian machine this is the derived hash of the slices the key used
    // before, so native answers (the CLI's representative) are unchanged.
    #[cfg(all(target_pointer_width = "64", target_endian = "little"))]
    {
        use std::hash::Hash;
        let rt = &t.ranks[0];
        let mut d = std::hash::DefaultHasher::new();
        rt.calls.func.to_vec().hash(&mut d);
        rt.calls.kind.hash(&mut d);
        rt.p2p.dir.hash(&mut d);
        rt.p2p.tag.to_vec().hash(&mut d);
        rt.p2p.bytes.hash(&mut d);
        assert_eq!(key.2, std::hash::Hasher::finish(&d));
    }
}

/// The operations `expanded_keys` gives a rank, named again: what [`expand_with`] and
/// [`physical_calls`] (the verification before it) give, compared by [`PhysicalCall::key`].
fn named_keys(
    keys: &[ExpandedKey],
    ops: &OpTable<'_>,
    functions: &[String],
) -> Vec<(String, String, Option<Rank>, u64)> {
    let mut name: HashMap<u32, String> = HashMap::new();
    name.insert(ops.send, "MPI_Send".into());
    name.insert(ops.recv, "MPI_Recv".into());
    name.insert(ops.unknown, "MPI_Unknown".into());
    for (f, &id) in functions.iter().zip(&ops.trace_function) {
        name.insert(id, f.clone());
    }
    keys.iter()
        .map(|&(f, send, peer, bytes)| {
            (
                name[&f].clone(),
                if send { "send" } else { "recv" }.to_owned(),
                peer,
                bytes,
            )
        })
        .collect()
}

fn reference_keys(logical: &LogicalTrace, rank: Rank) -> Vec<(String, String, Option<Rank>, u64)> {
    let table = &logical.placement.neighbour_tables_with_self(&logical.self_ranks)[rank as usize];
    physical_calls(&expand_with(table, rank, logical.records.iter().map(|x| &x.call)))
        .iter()
        .map(|c| {
            let (k, d, p, b) = c.key();
            (k.to_owned(), d.to_owned(), p, b)
        })
        .collect()
}

fn fast_keys(logical: &LogicalTrace, functions: &[String], rank: Rank) -> Vec<(String, String, Option<Rank>, u64)> {
    let ops = OpTable::of(
        logical.records.iter().map(|x| &x.call),
        logical.ranks as usize,
        functions,
    );
    let table = &logical.placement.neighbour_tables_with_self(&logical.self_ranks)[rank as usize];
    let mut here: Vec<&str> = table.keys().map(String::as_str).collect();
    here.sort_unstable();
    let keys = expanded_keys(&logical.records, &ops, &ops.neighbours(table), rank, &here);
    named_keys(&keys, &ops, functions)
}

/// Every operation of a rank's expansion as (peer, sent, size, tag): through
/// [`ExpansionWalk`] (`walked`) and through the expanded calls ([`physical_calls`]).
type PeerOp = (Option<Rank>, bool, u64, i32);

fn walked_ops(logical: &LogicalTrace, rank: Rank) -> Vec<PeerOp> {
    let table = &logical.placement.neighbour_tables_with_self(&logical.self_ranks)[rank as usize];
    let calls: Vec<LogicalCall> = logical.records.iter().map(|x| x.call.clone()).collect();
    let mut out = Vec::new();
    ExpansionWalk::of(&calls, logical.ranks as usize).each_operation(
        table,
        rank,
        &mut Vec::new(),
        |peer, sent, bytes, tag, _| out.push((peer, sent, bytes, tag)),
    );
    out
}

fn expanded_ops(logical: &LogicalTrace, rank: Rank) -> Vec<PeerOp> {
    let table = &logical.placement.neighbour_tables_with_self(&logical.self_ranks)[rank as usize];
    physical_calls(&expand_with(table, rank, logical.records.iter().map(|x| &x.call)))
        .iter()
        .map(|c| (c.peer, c.direction == "send", c.bytes, c.tag))
        .collect()
}

/// The one-pass expansion of the verification, and the walk of the skeleton's matching check
/// ([`ExpansionWalk`], with tags), give every rank the operations the expansion
/// itself gives: on NAS LU and CG (per-rank sizes, branches, `self`), on LU from its maximal
/// rank alone (boundary ranks lose operations), and on every record shape a hand-made trace
/// may hold (calls outside their ranks, sizes per class and per rank, unsorted rank lists,
/// completions of vanished requests, wildcards, operations of calls that are not
/// point-to-point).
#[test]
fn one_pass_expansion_equals_the_expansion() {
    let nas = |b, ranks, grid: &str| {
        let spec = tracelogic_synth::NasSpec {
            iterations: Some(2),
            ..tracelogic_synth::NasSpec::new(b, tracelogic_synth::NasClass::S, ranks)
        };
        let (trace, _) = tracelogic_synth::generate_nas(&spec).unwrap();
        let placement = Placement::new(TopologySpec::parse(grid).unwrap(), ranks, (0..ranks).map(|r| (r, r))).unwrap();
        (trace, placement)
    };
    let mut checked = 0;
    for (trace, placement, from) in [
        {
            let (t, p) = nas(tracelogic_synth::NasBenchmark::Lu, 8, "grid:4x2");
            (t, p, None)
        },
        {
            let (t, p) = nas(tracelogic_synth::NasBenchmark::Lu, 16, "grid:4x4");
            (t, p, Some(vec![5]))
        },
        {
            let (t, p) = nas(tracelogic_synth::NasBenchmark::Cg, 8, "grid:4x2");
            (t, p, None)
        },
    ] {
        let logical = logicalize_ranks(&trace, &placement, from.as_deref()).unwrap();
        for r in 0..trace.num_ranks() {
            assert_eq!(
                fast_keys(&logical, trace.functions.names(), r),
                reference_keys(&logical, r),
                "rank {r}"
            );
            assert_eq!(walked_ops(&logical, r), expanded_ops(&logical, r), "rank {r}");
            checked += 1;
        }
    }
    assert_eq!(checked, 32);
    // Random records over a 3x3 grid's directions.
    let placement = Placement::new(TopologySpec::parse("grid:3x3").unwrap(), 9, (0..9).map(|r| (r, r))).unwrap();
    let names: Vec<String> = placement.spec.directions().iter().map(|d| d.name()).collect();
    let functions: Vec<String> = ["MPI_Isend", "MPI_Irecv", "MPI_Sendrecv", "MPI_Waitall", "MPI_Bcast"]
        .map(String::from)
        .to_vec();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for case in 0..200 {
        let mut records = Vec::new();
        for i in 0..(5 + next(&mut state) % 60) {
            let op = |dir, state: &mut u64| {
                let partner = match next(state) % 10 {
                    0 => Partner::Any,
                    1 => Partner::Rank((next(state) % 9) as Rank),
                    _ => Partner::Direction(names[(next(state) % names.len() as u64) as usize].clone()),
                };
                let mut bytes_by_rank: Vec<RankBytes> = (0..next(state) % 3)
                    .map(|k| {
                        let mut ranks: Vec<Rank> = (0..9).filter(|_| next(state).is_multiple_of(3)).collect();
                        if next(state).is_multiple_of(8) {
                            ranks.reverse();
                        }
                        RankBytes { bytes: 100 + k, ranks }
                    })
                    .collect();
                bytes_by_rank.retain(|e| !e.ranks.is_empty());
                let bytes_by_class = if next(state).is_multiple_of(4) {
                    vec![ClassBytes {
                        directions: names
                            .iter()
                            .filter(|_| next(state).is_multiple_of(2))
                            .cloned()
                            .collect(),
                        bytes: 7,
                    }]
                } else {
                    Vec::new()
                };
                Operation {
                    dir,
                    partner,
                    tag: (next(state) % 3) as i32 - 1,
                    bytes: 8 << (next(state) % 3),
                    bytes_by_class,
                    bytes_by_rank,
                    absent_on: Vec::new(),
                }
            };
            let (function, kind, ops) = match next(&mut state) % 6 {
                0 | 1 => ("MPI_Isend", CallKind::Isend, vec![op(P2pDir::Send, &mut state)]),
                2 => ("MPI_Irecv", CallKind::Irecv, vec![op(P2pDir::Recv, &mut state)]),
                3 => (
                    "MPI_Sendrecv",
                    CallKind::SendRecv,
                    vec![op(P2pDir::Send, &mut state), op(P2pDir::Recv, &mut state)],
                ),
                4 => ("MPI_Waitall", CallKind::Completion, Vec::new()),
                // Not point-to-point, yet with an operation: kept whole.
                _ => ("MPI_Bcast", CallKind::Collective, vec![op(P2pDir::Send, &mut state)]),
            };
            let completes = if kind == CallKind::Completion {
                (1..4).filter(|_| next(&mut state).is_multiple_of(2)).collect()
            } else {
                Vec::new()
            };
            let only_ranks = (next(&mut state).is_multiple_of(5)).then(|| (0..9).filter(|r| r % 2 == 0).collect());
            records.push(Record {
                call: LogicalCall {
                    function: function.into(),
                    kind,
                    ops,
                    collective: None,
                    completes,
                    calls: None,
                    only_ranks,
                },
                gap_ns: 0,
                duration_ns: 0,
                rank: 0,
                call_index: i as u32,
            });
        }
        let mut trace = Trace::new("random", "test", 9);
        for f in &functions {
            trace.functions.intern(f);
        }
        let logical = LogicalTrace {
            records,
            self_ranks: vec![4],
            ..logicalize_ranks(&trace, &placement, Some(&[4])).unwrap()
        };
        for r in 0..9 {
            let (fast, reference) = (fast_keys(&logical, &functions, r), reference_keys(&logical, r));
            assert_eq!(fast, reference, "case {case}, rank {r}");
            assert_eq!(
                walked_ops(&logical, r),
                expanded_ops(&logical, r),
                "case {case}, rank {r}"
            );
        }
    }
}

/// The classes' shapes read without records group the ranks as the records' own hash does,
/// and give the operations the records have, on every rank of NAS runs whose ranks differ in
/// directions, branches and sizes (LU, CG with its `self` messages, MG), numbered at random.
#[test]
fn shapes_read_without_records_are_the_records_shapes() {
    let (mut checked, mut differing) = (0, 0);
    for (b, ranks, grid) in [
        (tracelogic_synth::NasBenchmark::Lu, 8, "grid:4x2"),
        (tracelogic_synth::NasBenchmark::Cg, 8, "grid:4x2"),
        (tracelogic_synth::NasBenchmark::Mg, 8, "torus:2x2x2"),
    ] {
        let spec = tracelogic_synth::NasSpec {
            iterations: Some(2),
            ..tracelogic_synth::NasSpec::new(b, tracelogic_synth::NasClass::S, ranks)
        };
        let (trace, _) = tracelogic_synth::generate_nas(&spec).unwrap();
        let placement = Placement::new(TopologySpec::parse(grid).unwrap(), ranks, (0..ranks).map(|r| (r, r))).unwrap();
        let tables = placement.direction_tables();
        let names: Vec<String> = placement.spec.directions().iter().map(|d| d.name()).collect();
        let partner_of = |r: Rank| {
            let table = &tables[r as usize];
            move |peer: Rank| {
                if peer == ANY_SOURCE {
                    Some(Partner::Any)
                } else {
                    table.get(&peer).map(|d| Partner::Direction(d.clone()))
                }
            }
        };
        let mut fast = Vec::new();
        let mut slow = Vec::new();
        for r in 0..ranks {
            let (hash, keys) = shape_of(&trace, r, &partner_of(r), &names);
            let (records, _) = records_of(&trace, r, &partner_of(r));
            assert_eq!(keys, op_keys_of(&records, &names), "rank {r}");
            fast.push(hash);
            slow.push(structure_hash(&records));
            checked += 1;
        }
        for a in 0..ranks as usize {
            for b in 0..ranks as usize {
                assert_eq!(fast[a] == fast[b], slow[a] == slow[b], "ranks {a} and {b}");
            }
        }
        differing += usize::from(slow.iter().any(|&h| h != slow[0]));
    }
    assert_eq!(checked, 24);
    assert!(differing >= 2, "LU's and CG's ranks differ in shape");
}

/// The comparison of a class's directions without a copy ([`Operation::class_bytes`]) is the
/// comparison of the sorted names it replaced, on random lists with repeated, missing and extra
/// names, short and long (beyond 16 names the sorted comparison is kept).
#[test]
fn same_directions_equals_the_sorted_comparison() {
    let mut state = 0x5DEE_CE66_D1CE_4E5B_u64;
    let pool = ["east", "west", "north", "south", "up", "down", "self"];
    let mut equal = 0;
    for case in 0..4000 {
        let long = case % 10 == 0;
        let draw = |state: &mut u64| {
            let n = (next(state) % if long { 24 } else { 6 }) as usize;
            (0..n)
                .map(|_| pool[(next(state) % pool.len() as u64) as usize].to_string())
                .collect::<Vec<String>>()
        };
        let directions = draw(&mut state);
        // Half the cases compare a permutation of the same names (equal), half another list.
        let mut here: Vec<&str> = if next(&mut state) & 1 == 0 {
            directions.iter().map(String::as_str).collect()
        } else {
            draw(&mut state)
                .iter()
                .map(|s| pool.iter().find(|p| **p == s.as_str()).copied().unwrap())
                .collect()
        };
        here.sort_unstable();
        let mut sorted: Vec<&str> = directions.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        let expected = sorted == here;
        equal += usize::from(expected);
        assert_eq!(
            super::record::same_directions(&directions, &here),
            expected,
            "case {case}"
        );
    }
    assert!(equal > 1000, "{equal} equal cases");
}
