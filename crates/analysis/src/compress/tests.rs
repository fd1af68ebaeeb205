use super::values::smallest_period;
use super::*;

fn records(functions: &[&str]) -> Vec<Record> {
    functions
        .iter()
        .enumerate()
        .map(|(i, f)| Record {
            call: LogicalCall {
                function: f.to_string(),
                kind: tracelogic_model::CallKind::Completion,
                ops: Vec::new(),
                collective: None,
                completes: Vec::new(),
                calls: None,
                only_ranks: None,
            },
            gap_ns: 0,
            duration_ns: 0,
            rank: 0,
            call_index: i as u32,
        })
        .collect()
}

/// A loop body's first records repeated before the loop and, after one other record, after
/// it (NAS LU's first exchange before its time steps; BT's error norm and last right-hand
/// side after them) join the loop as partial iterations: `I X Y Z [X Y Z W (B)]^k R X Y Z F`
/// with B in the first step only. Bound counted from the construction: I and F, the loop
/// header, the body's four records, the one-off B and R, and one arm header per run of
/// records not every iteration executes (W, B, R): 12, where the loop without partial
/// iterations needs 16 (the two copies of X Y Z outside it); constant in k.
#[test]
fn repeated_loop_prefixes_join_the_loop() {
    let mut lengths = Vec::new();
    for k in [4, 40] {
        let mut f = vec!["I", "X", "Y", "Z", "X", "Y", "Z", "W", "B"];
        for _ in 1..k {
            f.extend(["X", "Y", "Z", "W"]);
        }
        f.extend(["R", "X", "Y", "Z", "F"]);
        let p = compress(&records(&f));
        expands_exactly(&p, &f);
        assert!(
            p.compressed_length <= 12,
            "k = {k}: {}\n{}",
            p.compressed_length,
            p.text()
        );
        lengths.push(p.compressed_length);
    }
    assert_eq!(lengths[0], lengths[1]);
}

/// The breakdown counts what the program is made of, read off its construction: `I [A B
/// C]^6 [D]^3 F` with B executed by ranks 1 and 2 only and C sent to an offset direction.
#[test]
fn breakdown_counts_loops_branches_and_offsets() {
    let mut functions = vec!["I"];
    for _ in 0..6 {
        functions.extend(["A", "B", "C"]);
    }
    functions.extend(["D", "D", "D", "F"]);
    let mut recs = records(&functions);
    for r in recs.iter_mut() {
        match r.call.function.as_str() {
            "B" => r.call.only_ranks = Some(vec![1, 2]),
            "C" => {
                r.call.kind = tracelogic_model::CallKind::Send;
                r.call.ops = vec![crate::logical::Operation {
                    dir: tracelogic_model::P2pDir::Send,
                    partner: crate::logical::Partner::Direction("(+2,0)".into()),
                    tag: 0,
                    bytes: 8,
                    bytes_by_class: Vec::new(),
                    bytes_by_rank: Vec::new(),
                    absent_on: Vec::new(),
                }];
            }
            _ => {}
        }
    }
    let p = compress(&recs);
    let b = p.breakdown(&["(+2,0)".to_string(), "(0,+2)".to_string()]);
    assert_eq!(b.outside_loops, 2, "{}", p.text());
    let loops: Vec<(usize, usize)> = b.loops.iter().map(|l| (l.length, l.branch_records)).collect();
    assert_eq!(loops, vec![(4, 1), (2, 0)]);
    assert_eq!(
        b.outside_loops + loops.iter().map(|l| l.0).sum::<usize>(),
        p.compressed_length
    );
    assert_eq!(b.branches.len(), 1);
    assert_eq!((b.branches[0].ranks.clone(), b.branches[0].records), (vec![1, 2], 1));
    assert_eq!(b.offsets.len(), 1, "a direction no record uses is left out");
    assert_eq!((b.offsets[0].direction.as_str(), b.offsets[0].records), ("(+2,0)", 1));
    assert!(
        b.text().contains("2 top-level loops: 4 (x6, 1 branch), 2 (x3)"),
        "{}",
        b.text()
    );
}

/// `A [X Y]^k B` for each k of `counts`, with `tail` after B in the iterations listed.
fn outer(counts: &[usize], odd: Option<usize>) -> Vec<&'static str> {
    let mut f = vec!["Init"];
    for (i, &k) in counts.iter().enumerate() {
        f.push("A");
        for _ in 0..k {
            f.extend(["X", "Y"]);
        }
        f.push(if odd == Some(i) { "C" } else { "B" });
    }
    f.push("Finalize");
    f
}

fn expands_exactly(p: &Program, functions: &[&str]) {
    expands_exactly_up_to(p, functions, 1000);
}

fn expands_exactly_up_to(p: &Program, functions: &[&str], limit: usize) {
    let back: Vec<String> = p.expand(limit).unwrap().into_iter().map(|c| c.function).collect();
    assert_eq!(back, functions, "{}", p.text());
}

/// The loop of the program's top level, its count and its inner loop's count.
fn outer_and_inner(p: &Program) -> Option<(&Values, &Values)> {
    p.nodes.iter().find_map(|n| match n {
        Node::Loop { count, body, .. } => body.iter().find_map(|b| match b {
            Node::Loop { count: inner, .. } => Some((count, inner)),
            Node::Call { .. } => None,
        }),
        Node::Call { .. } => None,
    })
}

#[test]
fn iterations_differing_in_inner_counts_fold() {
    for counts in [[3usize, 5, 2, 4], [3, 1, 2, 4], [2, 1, 5, 1]] {
        let f = outer(&counts, None);
        let p = compress(&records(&f));
        expands_exactly(&p, &f);
        let (count, inner) = outer_and_inner(&p).unwrap_or_else(|| panic!("{counts:?}: {}", p.text()));
        assert_eq!(*count, Values::Constant { value: 4 }, "{counts:?}: {}", p.text());
        assert_eq!(*inner, Values::compress(&counts.map(|k| k as u64)), "{counts:?}");
        // Init, loop header, A, inner header, X, Y, B, Finalize.
        assert_eq!(p.compressed_length, 8, "{counts:?}: {}", p.text());
    }
}

/// Iterations that differ in a record (`C` for `B` in one of them) are variants of one
/// loop: `[A [X Y]^k [B]^{1,1,0,1} [C]^{0,0,1,0}]^4` (before variant loops they did not fold).
/// Iterations that also differ in their inner counts are not found this way (the raw
/// iterations are all distinct, and the plain fold has already folded some of them): nested
/// variant loops find them ([`time_steps_of_varying_solves_are_one_loop`]).
#[test]
fn iterations_differing_in_a_record_fold_as_variants() {
    for counts in [[3usize, 3, 3, 3], [2, 2, 2, 2]] {
        let f = outer(&counts, Some(2));
        let p = compress(&records(&f));
        expands_exactly(&p, &f);
        let four = p.nodes.iter().find_map(|n| match n {
            Node::Loop { count, body, .. } => Some((count, body)),
            Node::Call { .. } => None,
        });
        let (count, body) = four.unwrap_or_else(|| panic!("{counts:?}: {}", p.text()));
        assert_eq!(*count, Values::Constant { value: 4 }, "{counts:?}: {}", p.text());
        // The B and C arms: run once by the iterations that execute them, 0 times by the others.
        let mut arms: Vec<(&str, Values)> = body
            .iter()
            .filter_map(|b| match b {
                Node::Loop { count, body, .. } => match body.as_slice() {
                    [Node::Call { shape, .. }] if shape.function != "X" => {
                        Some((shape.function.as_str(), count.clone()))
                    }
                    _ => None,
                },
                Node::Call { .. } => None,
            })
            .collect();
        arms.sort_by_key(|a| a.0);
        assert_eq!(
            arms,
            vec![
                ("B", Values::compress(&[1, 1, 0, 1])),
                ("C", Values::compress(&[0, 0, 1, 0]))
            ],
            "{counts:?}: {}",
            p.text()
        );
        // Init, loop header, A, inner header, X, Y, two arm headers, B, C, Finalize.
        assert_eq!(p.compressed_length, 11, "{counts:?}: {}", p.text());
    }
}

/// A step loop with two kinds of step at irregular intervals and output every third step
/// (LAMMPS's plain and reneighbouring steps, thermo output): one loop of the step count, its
/// length the same for 30 and 300 steps, expanding exactly.
#[test]
fn steps_of_a_few_kinds_fold_into_one_loop() {
    let steps = |n: usize| {
        let mut f = vec!["Init", "Setup", "Setup"];
        for step in 1..=n {
            f.push("Check");
            if (step * 7) % 11 < 3 {
                f.extend(["Exchange", "Borders", "Reverse"]);
            } else {
                f.extend(["Forward", "Reverse"]);
            }
            if step % 3 == 0 {
                f.extend(["Thermo", "Thermo"]);
            }
        }
        f.extend(["Stats", "Finalize"]);
        f
    };
    let mut lengths = Vec::new();
    for n in [30, 300] {
        let f = steps(n);
        let p = compress(&records(&f));
        expands_exactly_up_to(&p, &f, 10_000);
        let step_loop = p.nodes.iter().find_map(|node| match node {
            Node::Loop { count, body, .. }
                if matches!(&body[0], Node::Call { shape, .. } if shape.function == "Check") =>
            {
                Some(count.clone())
            }
            _ => None,
        });
        assert_eq!(
            step_loop,
            Some(Values::Constant { value: n as u64 }),
            "{n}: {}",
            p.text()
        );
        lengths.push(p.compressed_length);
    }
    assert_eq!(lengths[0], lengths[1]);
}

/// Blocks of records executed by other ranks (the merge's per-class blocks, `only_ranks`), each
/// a step loop of a few kinds of step as above: every block's steps fold, so the length is
/// the same at 30 and 300 steps; compressed as one sequence only one block got its variant
/// loop and the others grew with the steps. Bound counted from the construction: a block
/// alone is `steps`'s program; three blocks are three such programs.
#[test]
fn blocks_of_other_ranks_fold_each_their_steps() {
    // Step kinds drawn by a xorshift generator, seeded per block: no period for a plain fold.
    let steps = |n: usize, seed: u64| {
        let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (seed + 1);
        let mut f = vec!["Init", "Setup", "Setup"];
        for _ in 1..=n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            f.push("Check");
            if x.is_multiple_of(4) {
                f.extend(["Exchange", "Borders", "Reverse"]);
            } else {
                f.extend(["Forward", "Reverse"]);
            }
            if (x >> 8).is_multiple_of(3) {
                f.extend(["Thermo", "Thermo"]);
            }
        }
        f.extend(["Stats", "Finalize"]);
        f
    };
    let mut lengths = Vec::new();
    for n in [30, 300] {
        let mut all: Vec<Record> = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        let mut alone = 0;
        for block in 0..3u32 {
            let f = steps(n, block as u64);
            alone += compress(&records(&f)).compressed_length;
            for mut r in records(&f) {
                r.call.only_ranks = Some(vec![block]);
                all.push(r);
            }
            names.extend(f);
        }
        let p = compress(&all);
        expands_exactly_up_to(&p, &names, 10_000);
        assert_eq!(p.compressed_length, alone, "{n}: {}", p.text());
        lengths.push(p.compressed_length);
    }
    assert_eq!(lengths[0], lengths[1]);
}

#[test]
fn values_pick_the_compact_form() {
    assert_eq!(Values::compress(&[5, 5, 5]), Values::Constant { value: 5 });
    assert_eq!(Values::compress(&[8, 16, 24, 32]), Values::Range { first: 8, step: 8 });
    let c = Values::compress(&[1, 7, 3, 1, 7, 3, 1, 7]);
    assert!(matches!(c, Values::Cycle { period: 3, .. }), "{c:?}");
    let l = Values::compress(&[4, 9, 1]);
    assert!(matches!(l, Values::List { .. }));
    // Two runs and a one: three runs store 6 numbers for 10.
    let r = Values::compress(&[3, 3, 3, 3, 5, 5, 5, 5, 5, 3]);
    assert_eq!(
        r,
        Values::Runs {
            values: vec![3, 5, 3],
            ends: vec![4, 9, 10]
        }
    );
    for list in [
        vec![3u64, 3, 3, 3, 5, 5, 5, 5, 5, 3],
        vec![9, 9, 9, 1, 1, 1, 1, 7, 7, 7, 7, 7],
    ] {
        let v = Values::compress(&list);
        assert!(matches!(v, Values::Runs { .. }), "{v:?}");
        for n in 1..=list.len() {
            assert_eq!(v.max_over(n as u64), *list[..n].iter().max().unwrap(), "{list:?} {n}");
        }
        let h = Values::histogram_of(&list);
        let back: Vec<u64> = (0..list.len() as u64).map(|i| h.value(i)).collect();
        let mut sorted = list.clone();
        sorted.sort_unstable();
        assert_eq!(back, sorted, "{h:?}");
        for n in 1..=list.len() {
            assert_eq!(h.max_over(n as u64), sorted[n - 1], "{h:?} {n}");
        }
    }
    for list in [
        vec![1u64, 7, 3, 1, 7, 3, 1, 7],
        vec![9, 8, 7, 6],
        vec![4, 9, 1],
        vec![3, 3, 5, 3, 3, 5],
        vec![3, 3, 3, 3, 5, 5, 5, 5, 5, 3],
    ] {
        let v = Values::compress(&list);
        let back: Vec<u64> = (0..list.len() as u64).map(|i| v.value(i)).collect();
        assert_eq!(back, list, "{v:?}");
    }
}

#[test]
fn adversarial_near_repeats_stay_bounded() {
    // 120 copies of a 4000-symbol body whose last symbol changes every copy: every candidate
    // compares nearly 4000 symbols before it fails.
    let body: Vec<u32> = (0..3999).collect();
    let mut s = Vec::new();
    for k in 0..120u32 {
        s.extend_from_slice(&body);
        s.push(10_000 + k);
    }
    let t = std::time::Instant::now();
    assert!(plan_pass(&s).is_empty());
    assert!(t.elapsed().as_secs() < 60);
}

#[test]
fn smallest_period_of_partial_repeat() {
    assert_eq!(smallest_period(&[1, 2, 1, 2, 1]), 2);
    assert_eq!(smallest_period(&[1, 2, 3]), 3);
}

#[test]
fn plan_finds_runs() {
    // a b a b a b c
    assert_eq!(plan_pass(&[0, 1, 0, 1, 0, 1, 2]), vec![(0, 2, 3)]);
    // a b c a b c a b c with a spurious candidate inside
    assert_eq!(plan_pass(&[0, 1, 0, 0, 1, 0, 0, 1, 0]), vec![(0, 3, 3)]);
}

#[test]
fn a_folding_builds_the_program_of_records_that_differ_only_in_values() {
    use crate::logical::{Operation, Partner, RankBytes};
    // Three blocks of steps of two kinds (a variant loop each), the exchange sending 8 bytes.
    let mut pre: Vec<Record> = Vec::new();
    for block in 0..3u32 {
        let mut f = vec!["Init"];
        for step in 0..40u32 {
            f.push("Check");
            f.extend(if (step * (block + 3)) % 7 < 2 {
                &["Exchange", "Borders"][..]
            } else {
                &["Exchange"][..]
            });
        }
        f.push("Finalize");
        for mut r in records(&f) {
            r.call.only_ranks = Some(vec![block]);
            if r.call.function == "Exchange" {
                r.call.ops.push(Operation {
                    dir: tracelogic_model::P2pDir::Send,
                    partner: Partner::Direction("east".into()),
                    tag: 1,
                    bytes: 8,
                    bytes_by_class: Vec::new(),
                    bytes_by_rank: Vec::new(),
                    absent_on: Vec::new(),
                });
            }
            pre.push(r);
        }
    }
    let folding = Folding::of(&pre);
    assert_eq!(folding.compressed_length, compress(&pre).compressed_length);
    // Every rank's own sizes and the times read in afterwards: the same folding, other values.
    let mut post = pre.clone();
    for (i, r) in post.iter_mut().enumerate() {
        r.gap_ns = 100 + (i as u64 % 5) * 10;
        r.duration_ns = 7 * i as u64;
        for o in &mut r.call.ops {
            o.tag = (i % 3) as i32;
            o.bytes_by_rank = vec![RankBytes {
                bytes: 16 + (i as u64 % 2) * 8,
                ranks: vec![9],
            }];
        }
    }
    let reference = compress(&post);
    assert_ne!(reference, compress(&pre), "the values differ");
    assert_eq!(folding.program(&post), reference);
    // A record of another shape: folded anew.
    post[5].call.function = "Other".into();
    assert_eq!(folding.program(&post), compress(&post));
}

/// `Init [T [X Y]^a_i P [U V W]^b_i (Q | R) E]^n Finalize`, R in the steps listed
/// ([`time_steps_of_varying_solves_are_one_loop`]).
fn two_solves(a: &[usize], b: &[usize], odd: &[usize]) -> Vec<&'static str> {
    let mut f = vec!["Init"];
    for i in 0..a.len() {
        f.push("T");
        for _ in 0..a[i] {
            f.extend(["X", "Y"]);
        }
        f.push("P");
        for _ in 0..b[i] {
            f.extend(["U", "V", "W"]);
        }
        f.push(if odd.contains(&i) { "R" } else { "Q" });
        f.push("E");
    }
    f.push("Finalize");
    f
}

/// The loop of the program's top level: its count and its body.
fn top_loop(p: &Program) -> Option<(&Values, &[Node])> {
    p.nodes.iter().find_map(|n| match n {
        Node::Loop { count, body, .. } => Some((count, &body[..])),
        Node::Call { .. } => None,
    })
}

/// Time steps of an iterative solver (OpenFOAM's icoFoam, in small): each step runs two solves
/// for a varying number of iterations, some converging in one, and a few steps end with
/// another record (output): `Init [T [X Y]^a_i P [U V W]^b_i (Q | R) E]^n Finalize`. Whole,
/// the sequence folds the solves' iterations across step boundaries; each step compressed on
/// its own (a nested variant loop) gives one loop of the steps. Length counted from the
/// construction: Init, the step loop's header, T, the X Y loop (3), P, the U V W loop (4), an
/// arm each for Q and R (2 + 2), E, Finalize: 17 (14 with no R), whatever n; the counts are the
/// steps' own.
#[test]
fn time_steps_of_varying_solves_are_one_loop() {
    let cases: [(&[usize], &[usize], &[usize]); 4] = [
        (&[3, 5, 2, 4], &[2, 2, 3, 1], &[2]),
        (&[3, 5, 2, 4, 3, 6, 2, 7], &[2, 2, 3, 4, 2, 2, 3, 2], &[2, 3]),
        (&[3, 5, 2, 4, 3, 6, 2, 7], &[1, 2, 3, 4, 2, 2, 3, 1], &[2, 3]),
        (
            &[3, 5, 2, 4, 3, 6, 2, 7, 4, 4, 5, 2],
            &[4, 4, 1, 2, 3, 2, 2, 2, 1, 2, 3, 3],
            &[0, 5],
        ),
    ];
    for (a, b, odd) in cases {
        let f = two_solves(a, b, odd);
        let p = compress(&records(&f));
        expands_exactly(&p, &f);
        assert_eq!(p.compressed_length, 17, "{a:?} {b:?} {odd:?}:\n{}", p.text());
        let (count, body) = top_loop(&p).unwrap_or_else(|| panic!("{}", p.text()));
        assert_eq!(*count, Values::Constant { value: a.len() as u64 }, "{}", p.text());
        let inner: Vec<&Values> = body
            .iter()
            .filter_map(|n| match n {
                Node::Loop { count, body, .. } if body.len() > 1 => Some(count),
                _ => None,
            })
            .collect();
        let counts = |v: &[usize]| Values::compress(&v.iter().map(|&k| k as u64).collect::<Vec<_>>());
        assert_eq!(inner, vec![&counts(a), &counts(b)], "{}", p.text());
    }
    let f = two_solves(&[3, 5, 2, 4, 3, 6, 2, 7], &[1, 2, 3, 4, 2, 2, 3, 1], &[]);
    let p = compress(&records(&f));
    expands_exactly(&p, &f);
    assert_eq!(p.compressed_length, 14, "{}", p.text());
}

/// A time step of five groups of the same shape — halo exchanges (`X Y`) run 8, 25, 4, 2 and 25
/// times, each followed by a few reductions (`R`), the third group's reductions 7 instead of 4
/// every tenth step (output), as Gerris's step — is one loop of the steps (the log's count),
/// not one loop of the 5 × steps groups with their counts listed; its length does not depend
/// on the steps, and the expansion is exact.
#[test]
fn steps_of_several_groups_of_one_shape_are_one_loop() {
    let mut lengths = Vec::new();
    for steps in [40usize, 100] {
        let mut f = vec!["I"];
        for s in 0..steps {
            let third = if s % 10 == 9 { 7 } else { 4 };
            for (exchanges, reductions) in [(8, 3), (25, 2), (4, third), (2, 3), (25, 2)] {
                for _ in 0..exchanges {
                    f.extend(["X", "Y"]);
                }
                f.extend(std::iter::repeat_n("R", reductions));
            }
        }
        f.push("F");
        let p = compress(&records(&f));
        expands_exactly_up_to(&p, &f, 100_000);
        let counts: Vec<&Values> = p
            .nodes
            .iter()
            .filter_map(|n| match n {
                Node::Loop { count, .. } => Some(count),
                Node::Call { .. } => None,
            })
            .collect();
        assert_eq!(
            counts,
            [&Values::Constant { value: steps as u64 }],
            "{steps}: {}",
            p.text()
        );
        lengths.push(p.compressed_length);
    }
    assert_eq!(lengths[0], lengths[1]);
}

/// A solver's iterations per step that follow no period (data) keep the loop of iterations
/// equal up to inner counts: nothing is re-rolled.
#[test]
fn inner_counts_without_a_period_are_not_rerolled() {
    let mut f = vec!["I"];
    let mut x = 7u64;
    for _ in 0..60 {
        x = x * 1_103_515_245 % 2_147_483_648 + 12_345;
        for _ in 0..(2 + x % 5) {
            f.extend(["X", "Y"]);
        }
        f.push("R");
    }
    f.push("F");
    let p = compress(&records(&f));
    expands_exactly_up_to(&p, &f, 100_000);
    let (outer, _) = outer_and_inner(&p).expect("a loop of iterations with an inner loop");
    assert_eq!(*outer, Values::Constant { value: 60 }, "{}", p.text());
}
