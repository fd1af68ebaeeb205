//! The exactness claim on random programs: a program over some directions, projected on
//! random classes (subsets of the directions) by the expansion rule, is merged back without
//! conflict, and every class's expansion of the merge is its projection.

use super::score::{class_keys, op_keys, NamedRecords, ScoreNames};
use super::*;
use crate::logical::expand_with;
use crate::logical::tests::myers_lcs;
use tracelogic_model::{CallKind, CollectiveOp, P2pDir};

/// xorshift64*: a small deterministic generator for the cases.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) % n.max(1)
    }
}

fn op(dir: P2pDir, d: &str, bytes: u64) -> Operation {
    Operation {
        dir,
        partner: Partner::Direction(d.into()),
        tag: 0,
        bytes,
        bytes_by_class: Vec::new(),
        bytes_by_rank: Vec::new(),
        absent_on: Vec::new(),
    }
}

fn call(function: &str, kind: CallKind, ops: Vec<Operation>) -> LogicalCall {
    LogicalCall {
        function: function.into(),
        kind,
        ops,
        collective: None,
        completes: Vec::new(),
        calls: None,
        only_ranks: None,
    }
}

fn program(rng: &mut Rng, names: &[String]) -> Vec<LogicalCall> {
    let mut out: Vec<LogicalCall> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let pick = |rng: &mut Rng| names[rng.below(names.len() as u64) as usize].clone();
    for _ in 0..(10 + rng.below(40)) {
        let bytes = 8 << rng.below(3);
        let c = match rng.below(10) {
            0..=2 => call("MPI_Isend", CallKind::Isend, vec![op(P2pDir::Send, &pick(rng), bytes)]),
            3..=5 => call("MPI_Irecv", CallKind::Irecv, vec![op(P2pDir::Recv, &pick(rng), bytes)]),
            6 | 7 => call(
                "MPI_Sendrecv",
                CallKind::SendRecv,
                vec![op(P2pDir::Send, &pick(rng), bytes), op(P2pDir::Recv, &pick(rng), bytes)],
            ),
            8 if !open.is_empty() => {
                let here = out.len();
                let mut back: Vec<u32> = open.drain(..).map(|i| (here - i) as u32).collect();
                back.sort_unstable();
                LogicalCall {
                    completes: back,
                    ..call("MPI_Waitall", CallKind::Completion, Vec::new())
                }
            }
            _ => LogicalCall {
                collective: Some(super::super::Collective {
                    op: CollectiveOp::Allreduce,
                    root: None,
                    root_in_comm: None,
                    root_by_rank: Vec::new(),
                    comm_size: 8,
                    bytes_sent: 8,
                    bytes_recv: 8,
                }),
                ..call("MPI_Allreduce", CallKind::Collective, Vec::new())
            },
        };
        if matches!(c.kind, CallKind::Isend | CallKind::Irecv) {
            open.push(out.len());
        }
        out.push(c);
    }
    out
}

/// The program as a class with directions `visible` executes it, partners kept as
/// directions (the table maps each direction to its index, mapped back afterwards).
fn project(program: &[LogicalCall], names: &[String], visible: &[bool]) -> Vec<LogicalCall> {
    project_as(program, names, visible, 0)
}

/// [`project`] as rank `rank` executes it (the operations it skips left out).
fn project_as(program: &[LogicalCall], names: &[String], visible: &[bool], rank: Rank) -> Vec<LogicalCall> {
    let table: HashMap<String, Rank> = names
        .iter()
        .zip(visible)
        .enumerate()
        .filter(|(_, (_, &v))| v)
        .map(|(k, (n, _))| (n.clone(), k as Rank))
        .collect();
    expand_with(&table, rank, program.iter())
        .into_iter()
        .map(|mut c| {
            for o in &mut c.ops {
                if let Partner::Rank(k) = o.partner {
                    o.partner = Partner::Direction(names[k as usize].clone());
                }
            }
            c
        })
        .collect()
}

fn as_records(calls: Vec<LogicalCall>, rank: Rank) -> Vec<Record> {
    calls
        .into_iter()
        .enumerate()
        .map(|(i, call)| Record {
            call,
            gap_ns: 0,
            duration_ns: 0,
            rank,
            call_index: i as u32,
        })
        .collect()
}

/// The bit-parallel LCS of the score gives the Myers alignment's count on sequences that
/// share little (a class left out of a merge), share much, or are empty, and across windows.
#[test]
fn score_lcs_equals_the_myers_alignment() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for case in 0..300 {
        let alphabet = 1 + rng.below(6);
        let n = rng.below(300) as usize;
        let a: Vec<u32> = (0..n).map(|_| rng.below(alphabet) as u32).collect();
        let mut b: Vec<u32> = a.iter().copied().filter(|_| rng.below(4) != 0).collect();
        for _ in 0..rng.below(80) {
            let at = rng.below(b.len() as u64 + 1) as usize;
            b.insert(at, rng.below(alphabet + 2) as u32);
        }
        assert_eq!(super::super::lcs_len(&a, &b), myers_lcs(&a, &b), "case {case}");
    }
    // Two windows: 46,000 symbols in all, one in 400 changed.
    let long: Vec<u32> = (0..23_000).map(|i| i % 7).collect();
    let other: Vec<u32> = (0..23_000).map(|i| if i % 400 == 0 { 9 } else { i % 7 }).collect();
    assert_eq!(super::super::lcs_len(&long, &other), myers_lcs(&long, &other));
    assert_eq!(super::super::lcs_len::<u32>(&[], &[1, 2]), 0);
}

#[test]
fn projections_of_one_program_merge_back_exactly() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut merged_records = 0;
    for case in 0..400 {
        let names: Vec<String> = (0..2 + rng.below(5)).map(|k| format!("d{k}")).collect();
        let program = program(&mut rng, &names);
        let mut classes: Vec<ClassTrace> = Vec::new();
        for c in 0..2 + rng.below(4) {
            let visible: Vec<bool> = (0..names.len()).map(|_| rng.below(2) == 1).collect();
            if !visible.iter().any(|&v| v) || classes.iter().any(|k| k.visible == visible) {
                continue;
            }
            let records = as_records(project(&program, &names, &visible), c as Rank);
            classes.push(ClassTrace {
                rank: c as Rank,
                members: vec![c as Rank],
                visible,
                records,
            });
        }
        let refs: Vec<&ClassTrace> = classes.iter().collect();
        let merged = merge(&refs, &names);
        assert_eq!(merged.conflicts, 0, "case {case}");
        let calls: Vec<LogicalCall> = merged.records.iter().map(|r| r.call.clone()).collect();
        merged_records += calls.len();
        for class in &classes {
            let own: Vec<LogicalCall> = class.records.iter().map(|r| r.call.clone()).collect();
            assert_eq!(project(&calls, &names, &class.visible), own, "case {case}");
        }
    }
    assert!(merged_records > 1000);
}

/// The program as rank `rank` (a class of that one rank) with directions `visible` executes
/// it: [`project`] with `only_ranks` honoured.
fn project_on(program: &[LogicalCall], names: &[String], visible: &[bool], rank: Rank) -> Vec<LogicalCall> {
    // Completion offsets count the records left out too: rebuild them over what is kept.
    let mut image = Vec::new();
    let mut out = Vec::new();
    for (i, c) in program.iter().enumerate() {
        image.push(c.runs_on(rank).then_some(out.len()));
        if c.runs_on(rank) {
            let mut c = LogicalCall {
                only_ranks: None,
                ..c.clone()
            };
            let here = out.len();
            let back: Vec<u32> = c
                .completes
                .iter()
                .filter_map(|&k| i.checked_sub(k as usize).and_then(|j| image[j]))
                .map(|t| (here - t) as u32)
                .collect();
            if !c.completes.is_empty() && back.is_empty() {
                image[i] = None;
                continue;
            }
            c.completes = back;
            out.push(c);
        }
    }
    project_as(&out, names, visible, rank)
}

/// The alignment merge of classes that share one program but each run side records of
/// their own (inserted at random places, as NAS MG's classes redistribute their coarsest
/// level three ways) expands, for every class, to exactly that class's sequence of calls,
/// peers and completions (a side record may be aligned on a record of other sizes: sizes are
/// fitted per rank afterwards, step 3b, and verified there).
#[test]
fn aligned_classes_with_side_records_expand_exactly() {
    let mut rng = Rng(0x5851_F42D_4C95_7F2D);
    let mut sides = 0;
    for case in 0..300 {
        let names: Vec<String> = (0..2 + rng.below(4)).map(|k| format!("d{k}")).collect();
        let common = program(&mut rng, &names);
        let mut classes: Vec<ClassTrace> = Vec::new();
        for c in 0..2 + rng.below(4) {
            let visible: Vec<bool> = (0..names.len()).map(|_| rng.below(2) == 1).collect();
            if !visible.iter().any(|&v| v) {
                continue;
            }
            let mut own = project(&common, &names, &visible);
            let seen: Vec<&String> = names.iter().zip(&visible).filter(|(_, &v)| v).map(|(n, _)| n).collect();
            for _ in 0..rng.below(6) {
                let at = rng.below(own.len() as u64 + 1) as usize;
                let d = seen[rng.below(seen.len() as u64) as usize];
                let side = call("MPI_Send", CallKind::Send, vec![op(P2pDir::Send, d, 1000 + c)]);
                // Completions after `at` keep completing the same records.
                for (k, later) in own.iter_mut().enumerate().skip(at) {
                    let before = k - at;
                    for b in later.completes.iter_mut() {
                        if *b as usize > before {
                            *b += 1;
                        }
                    }
                }
                own.insert(at, side);
                sides += 1;
            }
            let records = as_records(own, c as Rank);
            classes.push(ClassTrace {
                rank: c as Rank,
                members: vec![c as Rank],
                visible,
                records,
            });
        }
        if classes.is_empty() {
            continue;
        }
        let refs: Vec<&ClassTrace> = classes.iter().collect();
        let Some(merged) = crate::logical::align::aligned(&refs, &names) else {
            panic!("case {case}: small tables are aligned");
        };
        let calls: Vec<LogicalCall> = merged.records.iter().map(|r| r.call.clone()).collect();
        for class in &classes {
            let own: Vec<LogicalCall> = class.records.iter().map(|r| r.call.clone()).collect();
            let shapes = |v: Vec<LogicalCall>| v.iter().map(LogicalCall::shape).collect::<Vec<_>>();
            assert_eq!(
                shapes(project_on(&calls, &names, &class.visible, class.rank)),
                shapes(own),
                "case {case}, class {}",
                class.rank
            );
        }
    }
    assert!(sides > 500);
}

/// Iterations of a common body in which each of three classes runs its own side exchange at
/// the same point (NAS MG's coarsest level): the aligned merge keeps the classes in step, so
/// the compressed program is one loop whose body is the common records and the three side
/// blocks, whatever the iteration count; the bound is counted from the construction.
#[test]
fn side_exchanges_of_each_class_stay_inside_one_loop() {
    let names: Vec<String> = ["east", "west"].iter().map(|s| s.to_string()).collect();
    let send = |d: &str, b: u64| call("MPI_Send", CallKind::Send, vec![op(P2pDir::Send, d, b)]);
    let recv = |d: &str, b: u64| call("MPI_Recv", CallKind::Recv, vec![op(P2pDir::Recv, d, b)]);
    let before = [send("east", 64), recv("west", 64), send("west", 64), recv("east", 64)];
    let after = [send("east", 8), recv("west", 8)];
    let side = |c: u64| match c {
        0 => vec![send("east", 16), send("west", 16)],
        1 => vec![recv("east", 16), recv("west", 16)],
        _ => vec![recv("west", 16)],
    };
    let mut lengths = Vec::new();
    for iterations in [5, 40] {
        let classes: Vec<ClassTrace> = (0..3u64)
            .map(|c| {
                let mut calls = Vec::new();
                for _ in 0..iterations {
                    calls.extend(before.iter().cloned());
                    calls.extend(side(c));
                    calls.extend(after.iter().cloned());
                }
                ClassTrace {
                    rank: c as Rank,
                    members: vec![c as Rank],
                    visible: vec![true, true],
                    records: as_records(calls, c as Rank),
                }
            })
            .collect();
        let refs: Vec<&ClassTrace> = classes.iter().collect();
        let merged = crate::logical::align::aligned(&refs, &names).expect("small");
        let program = crate::compress::compress(&merged.records);
        // One loop: its header, the common records, every class's side records.
        let bound = 1 + before.len() + after.len() + (0..3).map(|c| side(c).len()).sum::<usize>();
        assert!(
            program.compressed_length <= bound,
            "{iterations} iterations: {} > {bound}\n{}",
            program.compressed_length,
            program.text()
        );
        lengths.push(program.compressed_length);
    }
    assert_eq!(lengths[0], lengths[1]);
}

/// What a rank of [`halo_merged`] runs at one pulse.
enum Pulse {
    Whole,
    SendOnly,
    RecvOnly,
}

/// A halo exchange of 4 ranks (one class each): `steps` steps of two pulses and a world
/// reduction, `pulse(rank, step, pulse)` saying where a rank runs one half alone; aligned
/// (classes in rank order), every class's expansion checked against its own calls, and the
/// merged records' compressed length returned.
fn halo_merged(steps: u64, pulse: impl Fn(u64, u64, u64) -> Pulse) -> (usize, usize) {
    let names: Vec<String> = ["east", "west"].iter().map(|s| s.to_string()).collect();
    let sendrecv = || {
        call(
            "MPI_Sendrecv",
            CallKind::SendRecv,
            vec![op(P2pDir::Send, "east", 96), op(P2pDir::Recv, "west", 96)],
        )
    };
    let send = || call("MPI_Send", CallKind::Send, vec![op(P2pDir::Send, "east", 96)]);
    let recv = || call("MPI_Recv", CallKind::Recv, vec![op(P2pDir::Recv, "west", 96)]);
    let mut reduce = call("MPI_Allreduce", CallKind::Collective, Vec::new());
    reduce.collective = Some(crate::logical::Collective {
        op: CollectiveOp::Allreduce,
        root: None,
        root_in_comm: None,
        root_by_rank: Vec::new(),
        comm_size: 4,
        bytes_sent: 8,
        bytes_recv: 8,
    });
    let classes: Vec<ClassTrace> = (0..4u64)
        .map(|r| {
            let mut calls = Vec::new();
            for i in 0..steps {
                for k in 0..2u64 {
                    calls.push(match pulse(r, i, k) {
                        Pulse::Whole => sendrecv(),
                        Pulse::SendOnly => send(),
                        Pulse::RecvOnly => recv(),
                    });
                }
                calls.push(reduce.clone());
            }
            ClassTrace {
                rank: r as Rank,
                members: vec![r as Rank],
                visible: vec![true, true],
                records: as_records(calls, r as Rank),
            }
        })
        .collect();
    let refs: Vec<&ClassTrace> = classes.iter().collect();
    let merged = crate::logical::align::aligned(&refs, &names).expect("small");
    let calls: Vec<LogicalCall> = merged.records.iter().map(|r| r.call.clone()).collect();
    // Every rank's calls, peers and order (sizes are fitted per rank afterwards, step 3b).
    for class in &classes {
        let own: Vec<LogicalCall> = class.records.iter().map(|r| r.call.shape()).collect();
        let expanded: Vec<LogicalCall> = project_on(&calls, &names, &class.visible, class.rank)
            .iter()
            .map(LogicalCall::shape)
            .collect();
        assert_eq!(expanded, own, "{steps} steps, rank {}", class.rank);
    }
    let program = crate::compress::compress(&merged.records);
    assert!(
        program.compressed_length <= 4,
        "{steps} steps: {}\n{}",
        program.compressed_length,
        program.text()
    );
    (merged.records.len(), program.compressed_length)
}

/// A halo exchange whose ranks call `MPI_Send` or `MPI_Recv` alone at the steps where they have
/// nothing to receive or to send (GROMACS's `dd_sendrecv`: a `MPI_Sendrecv` only when both
/// counts are non-zero), at steps that differ from rank to rank (two edge ranks here; the first
/// class aligned makes every exchange whole, as the maximal rank a logical trace starts from
/// does in GROMACS): the aligned merge makes each lone half the `MPI_Sendrecv` with the other
/// half skipped on that rank, so every class
/// expands to its own calls and the step loop's body does not grow with the steps (before, each
/// step's lone halves were records of their own ranks, and new combinations kept appearing).
#[test]
fn lone_halves_of_a_sendrecv_fold_into_one_step() {
    // Ranks 2 and 3 hold the domain's edge: some steps they have nothing to send or to receive
    // in some pulse. One loop of the step: its two pulses (or one pulse record in a loop of 2)
    // and the reduction.
    let lengths: Vec<usize> = [20u64, 80]
        .map(|steps| {
            halo_merged(steps, |r, i, k| {
                let edge = r >= 2;
                if edge && (i * 7 + r * 3 + k) % 5 == 0 {
                    Pulse::RecvOnly
                } else if edge && (i * 11 + r + k) % 7 == 0 {
                    Pulse::SendOnly
                } else {
                    Pulse::Whole
                }
            })
            .1
        })
        .to_vec();
    assert_eq!(lengths[0], lengths[1]);
}

/// Complementary lone halves aligned before any class makes the whole: rank 0 has nothing to
/// receive where rank 1 has nothing to send, at the same steps, and both are aligned before the
/// ranks making the `MPI_Sendrecv` (GROMACS's halo after a repartitioning). The two halves are
/// two columns of the alignment and the whole lands on one of them; joined afterwards, both are
/// the whole, and the step loop does not grow with the steps (before: 64 records at 20 steps,
/// a `MPI_Send` of rank 0 and a `MPI_Sendrecv` of the others in each such step).
#[test]
fn complementary_lone_halves_aligned_first_join_their_whole() {
    let lengths: Vec<usize> = [20u64, 80]
        .map(|steps| {
            let (records, compressed) = halo_merged(steps, |r, i, k| match (r, k == 0 && (i * 7) % 5 == 1) {
                (0, true) => Pulse::SendOnly,
                (1, true) => Pulse::RecvOnly,
                _ => Pulse::Whole,
            });
            // Every step is the two pulses of every rank and the reduction.
            assert_eq!(records as u64, 3 * steps, "{steps} steps");
            compressed
        })
        .to_vec();
    assert_eq!(lengths[0], lengths[1]);
}

/// The score's keys of a class's execution, read in one pass, are those of the calls
/// [`restrict_call`] builds (the score before it), on random programs with per-class
/// sizes, branches and `MPI_Sendrecv` halves.
#[test]
fn class_keys_are_the_restricted_calls_keys() {
    let mut rng = Rng(0x0123_4567_89AB_CDEF);
    for case in 0..300 {
        let names: Vec<String> = (0..2 + rng.below(5)).map(|k| format!("d{k}")).collect();
        let mut calls = program(&mut rng, &names);
        for c in &mut calls {
            for o in &mut c.ops {
                if rng.below(3) == 0 {
                    o.bytes_by_class = vec![super::super::ClassBytes {
                        directions: names.iter().filter(|_| rng.below(2) == 0).cloned().collect(),
                        bytes: 5,
                    }];
                }
            }
            if rng.below(5) == 0 {
                c.only_ranks = Some(vec![0, 2]);
            }
            // Some ranks skip some operations (one half of a `MPI_Sendrecv`).
            if let Some(o) = c.ops.first_mut().filter(|_| rng.below(4) == 0) {
                o.absent_on = vec![1];
            }
        }
        let records = as_records(calls, 0);
        let visible: Vec<bool> = (0..names.len()).map(|_| rng.below(2) == 1).collect();
        let see = |o: &Operation| match &o.partner {
            Partner::Direction(d) => names.iter().position(|n| n == d).is_some_and(|k| visible[k]),
            _ => true,
        };
        let mut here: Vec<&str> = names
            .iter()
            .zip(&visible)
            .filter(|(_, &v)| v)
            .map(|(n, _)| n.as_str())
            .collect();
        here.sort_unstable();
        for rank in 0..2 {
            let restricted: Vec<LogicalCall> = records
                .iter()
                .filter(|r| r.call.runs_on(rank))
                .filter_map(|r| restrict_call(&r.call, |o| (see(o) && o.runs_on(rank)).then(|| o.for_class(&here))))
                .collect();
            let mut ids = ScoreNames::default();
            let named = NamedRecords::of(&records, &mut ids);
            assert_eq!(
                class_keys(&named, rank, &|_, o| see(o), &here),
                op_keys(restricted.iter(), &mut ids),
                "case {case}, rank {rank}"
            );
        }
    }
}

/// Steps in which some classes run one half of a `MPI_Sendrecv` only, at steps drawn at random
/// (GROMACS sends no halo message when a domain has nothing to send): the merge keeps the call
/// as one record those classes' ranks run partly ([`Operation::absent_on`]), with no branch, so
/// the steps fold into one loop of the same length at 20 and 200 steps; every class's
/// expansion of the merge, and of its compressed program, is its own sequence.
#[test]
fn sendrecv_halves_skipped_in_some_steps_stay_one_record() {
    let names: Vec<String> = ["east", "west"].iter().map(|s| s.to_string()).collect();
    let sr = |b: u64| {
        call(
            "MPI_Sendrecv",
            CallKind::SendRecv,
            vec![op(P2pDir::Send, "east", b), op(P2pDir::Recv, "west", b)],
        )
    };
    let send = |b: u64| call("MPI_Send", CallKind::Send, vec![op(P2pDir::Send, "east", b)]);
    let recv = |b: u64| call("MPI_Recv", CallKind::Recv, vec![op(P2pDir::Recv, "west", b)]);
    // Direction → its index as a rank, and back: the expansion with partners kept as directions.
    let table: HashMap<String, Rank> = names.iter().enumerate().map(|(k, n)| (n.clone(), k as Rank)).collect();
    let expand = |calls: &[LogicalCall], rank: Rank| -> Vec<LogicalCall> {
        expand_with(&table, rank, calls.iter())
            .into_iter()
            .map(|mut c| {
                for o in &mut c.ops {
                    if let Partner::Rank(k) = o.partner {
                        o.partner = Partner::Direction(names[k as usize].clone());
                    }
                }
                c
            })
            .collect()
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut lengths = Vec::new();
    for steps in [20, 200] {
        let members: [Vec<Rank>; 3] = [vec![0], vec![1, 3], vec![2]];
        let mut own: [Vec<LogicalCall>; 3] = Default::default();
        for _ in 0..steps {
            let (short1, short2) = (rng.below(4) == 0, rng.below(3) == 0);
            own[0].extend([sr(64), sr(32), sr(16)]);
            own[1].extend([if short1 { send(64) } else { sr(64) }, sr(32), sr(16)]);
            own[2].extend([sr(64), if short2 { recv(32) } else { sr(32) }, sr(16)]);
        }
        let classes: Vec<ClassTrace> = (0..3)
            .map(|c| ClassTrace {
                rank: members[c][0],
                members: members[c].clone(),
                visible: vec![true, true],
                records: as_records(own[c].clone(), members[c][0]),
            })
            .collect();
        let refs: Vec<&ClassTrace> = classes.iter().collect();
        let merged = merge(&refs, &names);
        assert_eq!(merged.conflicts, 0);
        assert!(merged.records.iter().all(|r| r.call.only_ranks.is_none()), "no branch");
        assert_eq!(merged.records.len(), 3 * steps, "one record per call of a step");
        let calls: Vec<LogicalCall> = merged.records.iter().map(|r| r.call.clone()).collect();
        let program = crate::compress::compress(&merged.records);
        let unfolded = program.expand(usize::MAX).expect("bounded");
        for (c, m) in members.iter().enumerate() {
            for &rank in m {
                assert_eq!(expand(&calls, rank), own[c], "{steps} steps, rank {rank}: the merge");
                assert_eq!(
                    expand(&unfolded, rank),
                    own[c],
                    "{steps} steps, rank {rank}: the program"
                );
            }
        }
        // The three calls differ only in size (a value per visit) and in who skips what (a
        // value per visit too): one loop of one record.
        assert_eq!(program.compressed_length, 2, "{}", program.text());
        lengths.push(program.compressed_length);
    }
    assert_eq!(lengths[0], lengths[1]);
}

/// Classes that exchange differently between collectives of every rank (CP2K's ranks between
/// its world broadcasts and reductions), too long for one alignment table
/// ([`crate::logical::align::MAX_CELLS`]): the alignment anchored on the world collectives
/// expands, for every class, to exactly its own sequence, each collective is one record of
/// every rank, and the iterations fold into one loop whatever their count.
#[test]
fn classes_too_long_for_one_table_align_between_world_collectives() {
    let names: Vec<String> = ["east", "west"].iter().map(|s| s.to_string()).collect();
    let send = |d: &str, b: u64| call("MPI_Send", CallKind::Send, vec![op(P2pDir::Send, d, b)]);
    let recv = |d: &str, b: u64| call("MPI_Recv", CallKind::Recv, vec![op(P2pDir::Recv, d, b)]);
    let allreduce = LogicalCall {
        collective: Some(super::super::Collective {
            op: CollectiveOp::Allreduce,
            root: None,
            root_in_comm: None,
            root_by_rank: Vec::new(),
            comm_size: 3,
            bytes_sent: 8,
            bytes_recv: 8,
        }),
        ..call("MPI_Allreduce", CallKind::Collective, Vec::new())
    };
    let step = |c: u64| -> Vec<LogicalCall> {
        let mut v = vec![send("east", 64), recv("west", 64)];
        match c {
            0 => v.extend([send("west", 16), recv("east", 16), send("east", 32)]),
            1 => v.extend([recv("east", 16), send("west", 16)]),
            _ => v.extend([recv("west", 32), recv("west", 16), send("west", 16), send("east", 16)]),
        }
        v.push(allreduce.clone());
        v
    };
    let mut lengths = Vec::new();
    for iterations in [600usize, 1200] {
        let classes: Vec<ClassTrace> = (0..3u64)
            .map(|c| ClassTrace {
                rank: c as Rank,
                members: vec![c as Rank],
                visible: vec![true, true],
                records: as_records((0..iterations).flat_map(|_| step(c)).collect(), c as Rank),
            })
            .collect();
        let longest = classes.iter().map(|c| c.records.len()).max().unwrap_or(0);
        assert!(
            longest * longest > crate::logical::align::MAX_CELLS,
            "the case needs anchors"
        );
        let refs: Vec<&ClassTrace> = classes.iter().collect();
        let merged = crate::logical::align::aligned(&refs, &names).expect("anchored");
        let calls: Vec<LogicalCall> = merged.records.iter().map(|r| r.call.clone()).collect();
        for class in &classes {
            let own: Vec<LogicalCall> = class.records.iter().map(|r| r.call.clone()).collect();
            let shapes = |v: Vec<LogicalCall>| v.iter().map(LogicalCall::shape).collect::<Vec<_>>();
            assert_eq!(
                shapes(project_on(&calls, &names, &class.visible, class.rank)),
                shapes(own),
                "{iterations} iterations, class {}",
                class.rank
            );
        }
        let shared = calls
            .iter()
            .filter(|c| c.collective.is_some() && c.only_ranks.is_none())
            .count();
        assert_eq!(shared, iterations, "every allreduce is one record of every rank");
        let program = crate::compress::compress(&merged.records);
        // One loop: its header and at most every class's records of one step.
        let bound = 1 + (0..3).map(|c| step(c).len()).sum::<usize>();
        assert!(program.compressed_length <= bound, "{}", program.text());
        lengths.push(program.compressed_length);
    }
    assert_eq!(lengths[0], lengths[1]);
}

/// Ranks that each exchange a few messages of their own before the collectives of a set-up
/// (Code_Saturne 6.0.2 on 4 ranks): when no head is valid, the merge emits a class's own
/// point-to-point record before forcing a collective for the classes already at it, so every
/// collective stays one record of every rank (forced for three classes first, the fourth
/// executed its own copy of every later collective: the set-up twice, "only on" each half).
#[test]
fn side_messages_are_forced_before_a_collective_every_class_reaches() {
    let names: Vec<String> = ["east", "west"].iter().map(|s| s.to_string()).collect();
    let send = |d: &str, b: u64| call("MPI_Send", CallKind::Send, vec![op(P2pDir::Send, d, b)]);
    let recv = |d: &str, b: u64| call("MPI_Recv", CallKind::Recv, vec![op(P2pDir::Recv, d, b)]);
    let collective = |function: &str, op: CollectiveOp, root: Option<u32>| LogicalCall {
        collective: Some(super::super::Collective {
            op,
            root,
            root_in_comm: None,
            root_by_rank: Vec::new(),
            comm_size: 4,
            bytes_sent: 8,
            bytes_recv: 8,
        }),
        ..call(function, CallKind::Collective, Vec::new())
    };
    let set_up: Vec<LogicalCall> = vec![
        collective("MPI_Allreduce", CollectiveOp::Allreduce, None),
        collective("MPI_Bcast", CollectiveOp::Bcast, Some(0)),
        collective("MPI_Bcast", CollectiveOp::Bcast, Some(0)),
        collective("MPI_Allreduce", CollectiveOp::Allreduce, None),
    ];
    let own: [Vec<LogicalCall>; 4] = [
        vec![send("east", 4)],
        vec![recv("west", 16), send("east", 16)],
        vec![send("west", 16)],
        vec![recv("west", 4)],
    ];
    let classes: Vec<ClassTrace> = own
        .iter()
        .enumerate()
        .map(|(c, first)| ClassTrace {
            rank: c as Rank,
            members: vec![c as Rank],
            visible: vec![true, true],
            records: as_records(first.iter().chain(&set_up).cloned().collect(), c as Rank),
        })
        .collect();
    let refs: Vec<&ClassTrace> = classes.iter().collect();
    let merged = merge(&refs, &names);
    let calls: Vec<LogicalCall> = merged.records.iter().map(|r| r.call.clone()).collect();
    let shapes = |v: &[LogicalCall]| v.iter().map(LogicalCall::shape).collect::<Vec<_>>();
    for class in &classes {
        let mine: Vec<LogicalCall> = class.records.iter().map(|r| r.call.clone()).collect();
        assert_eq!(
            shapes(&project_on(&calls, &names, &class.visible, class.rank)),
            shapes(&mine),
            "class {}",
            class.rank
        );
    }
    let collectives: Vec<&LogicalCall> = calls.iter().filter(|c| c.collective.is_some()).collect();
    assert_eq!(collectives.len(), set_up.len(), "each collective once");
    assert!(collectives.iter().all(|c| c.only_ranks.is_none()), "every rank's");
}

/// The candidate merges sized on several cores choose what sizing them one at a time chooses
/// (the same records, conflicts and folding): classes of one random program, each with side sends of its own
/// so that the merge branches, 200 cases.
#[test]
fn candidates_sized_concurrently_choose_as_in_turn() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut branched = 0;
    for case in 0..200 {
        let names: Vec<String> = (0..2 + rng.below(3)).map(|k| format!("d{k}")).collect();
        let common = program(&mut rng, &names);
        let mut classes: Vec<ClassTrace> = Vec::new();
        for c in 0..2 + rng.below(3) {
            let visible: Vec<bool> = (0..names.len()).map(|_| rng.below(2) == 1).collect();
            let seen: Vec<&String> = names.iter().zip(&visible).filter(|(_, &v)| v).map(|(n, _)| n).collect();
            if seen.is_empty() {
                continue;
            }
            let mut own = project(&common, &names, &visible);
            // Side sends appended (no completion offsets to shift).
            for _ in 0..rng.below(4) {
                let d = seen[rng.below(seen.len() as u64) as usize];
                own.push(call("MPI_Send", CallKind::Send, vec![op(P2pDir::Send, d, 500 + c)]));
            }
            classes.push(ClassTrace {
                rank: c as Rank,
                members: vec![c as Rank],
                visible,
                records: as_records(own, c as Rank),
            });
        }
        if classes.is_empty() {
            continue;
        }
        let refs: Vec<&ClassTrace> = classes.iter().collect();
        let alternatives: [&(dyn Fn() -> Option<Merged> + Sync); 3] = [
            &|| Some(merge_until(&refs, &names, false, true)),
            &|| Some(super::best::blocks(&refs)),
            &|| crate::logical::align::aligned(&refs, &names),
        ];
        let (a, fa) = super::best::sized_in_turn(merge(&refs, &names), &alternatives);
        let hash = |m: &Merged| super::best::records_hash(&m.records);
        for workers in [2, 3, 4] {
            let (b, fb) = super::best::sized_concurrently(merge(&refs, &names), &alternatives, workers);
            assert_eq!(hash(&a), hash(&b), "case {case}, {workers} workers");
            assert_eq!(a.conflicts, b.conflicts, "case {case}, {workers} workers");
            assert_eq!(
                fa.compressed_length, fb.compressed_length,
                "case {case}, {workers} workers"
            );
        }
        branched += usize::from(hash(&a) != hash(&merge(&refs, &names)));
    }
    // Cases where an alternative to the lockstep merge was chosen.
    assert!(branched > 10, "{branched}");
}

/// `union_sorted` against a set's union on random ascending lists without repeats.
#[test]
fn union_of_sorted_targets_is_the_set_union() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..500 {
        let mut list = |n: u64| -> Vec<usize> {
            let set: std::collections::BTreeSet<usize> = (0..rng.below(n)).map(|_| rng.below(40) as usize).collect();
            set.into_iter().collect()
        };
        let (a, b) = (list(20), list(20));
        let want: Vec<usize> = a
            .iter()
            .chain(&b)
            .copied()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(union_sorted(&a, &b), want, "{a:?} ∪ {b:?}");
    }
}
