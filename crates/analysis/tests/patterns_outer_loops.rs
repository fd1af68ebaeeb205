//! A repeated program step is a pattern with one occurrence per repetition, not one glued
//! occurrence: NAS MG class S on 16 ranks (OTF2, tests/data/apps/otf2-npb-mg.S.16). Its log
//! prints 4 iterations, each one V-cycle (`mg3P` + `resid`), run after one untimed V-cycle
//! (MG's source, mg.f). The V-cycle begins and ends with the fine-level halo exchange, so the
//! general form merged those exchanges across iterations and the four timed V-cycles came out
//! as one occurrence of 8,928 events. Truth: the log's iteration count and the per-rank counts
//! of the OTF2 reference reader (`expected/otf2-print-per-rank.txt`: rank, sends, bytes,
//! receives), never this code's own output.

use std::path::PathBuf;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::match_messages;

mod steps_support;

fn app(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/apps")
        .join(name)
}

#[test]
fn mg_16_v_cycle_once_per_iteration_of_the_log() {
    let dir = app("otf2-npb-mg.S.16");
    let log = std::fs::read_to_string(dir.join("stdout.txt")).unwrap();
    let iterations: usize = log
        .lines()
        .find_map(|l| l.trim().strip_prefix("Iterations:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(iterations, 4);
    // rank → (sends, receives) over the whole run, by otf2-print.
    let counts: Vec<(u64, u64)> = std::fs::read_to_string(dir.join("expected/otf2-print-per-rank.txt"))
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<u64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            (f[1], f[3])
        })
        .collect();
    assert_eq!(counts.len(), 16);

    let trace = read_trace(load_paths(&[dir]).unwrap()).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    // The default pattern (the one that explains most) is the V-cycle on every rank, once per
    // iteration the log prints, one after the other.
    let v = &a.communication_patterns[0];
    assert_eq!(v.ranks, (0..16).collect::<Vec<u32>>());
    assert_eq!(v.occurrences, iterations);
    assert!(v.positions.windows(2).all(|w| w[0] < w[1]));
    assert!(a
        .communication_patterns
        .iter()
        .all(|p| p.events_covered <= v.events_covered));
    // Each rank's part is one whole V-cycle: with the untimed one, the run holds iterations + 1
    // of them, and what is left of each rank's sends and receives (set-up: `zran3`, `resid`,
    // the norms) is the same on every rank — ranks 4–7 and 12–15, which exchange with the rank
    // two steps away on the coarsest levels (70 more sends, 50 more receives in the reader's
    // counts), carry exactly their share of that in every V-cycle.
    let kind = |rank: &u32, c: char| {
        v.events[rank]
            .iter()
            .filter(|s| s.starts_with(c) && s[1..].chars().all(|d| d.is_ascii_digit()))
            .count() as u64
    };
    let cycles = iterations as u64 + 1;
    let rest: Vec<(i64, i64)> = v
        .ranks
        .iter()
        .map(|r| {
            let (sends, recvs) = counts[*r as usize];
            (
                sends as i64 - (cycles * kind(r, 'S')) as i64,
                recvs as i64 - (cycles * kind(r, 'R')) as i64,
            )
        })
        .collect();
    assert!(rest.iter().all(|&x| x == rest[0] && x.0 > 0), "{rest:?}");
}

/// A generated solver run whose outer loop is found before the loop inside it, independent of
/// any recorded application (the shape of a finite-element code's Newton loop around PETSc's
/// CG, as GetDP runs it): four ranks with an irregular halo graph (ranks 0 and 2 have three
/// neighbours, 1 and 3 two), six linear solves of 40, 40, 31, 31, 31 and 27 CG iterations.
/// Each solve begins with a set-up (layout reductions, a barrier, a blocking exchange of halo
/// sizes) and each iteration is one halo exchange (receives posted, sends, then three
/// `Allreduce`: two dot products and the norm); after each solve a residual (one exchange, one
/// `Allreduce`).
/// Solves with the same count are exact copies on a rank, so the reduction that takes the
/// repeat starting first collapsed the copies of whole solves before the CG loop inside them,
/// and every occurrence of the iteration spanned from its copy in the first solve to its copy
/// in the last. Truth from the generator: the default pattern is the CG iteration on every
/// rank, once per iteration and at most once more per solve (the residual's exchange), and no
/// instance holds more than one iteration start on any rank. Before, the default pattern was
/// 3 occurrences of pairs of whole solves.
#[test]
fn generated_solver_iterations_found_inside_repeated_solves() {
    check_solver_iterations(&[40, 40, 31, 31, 31, 27], &["AGAGBH"], "XAAA", "XA", "", &[]);
}

/// The same solver with the set-up GetDP runs before each solve (held-out GetDP magnet on 4
/// ranks, recorded again 4 Dec, rank 0 between two CG loops: `GAGAAAAGAGAAAGGGGGGBAAGAGAGAGG
/// AAABAAGAGAAAA`, `A` an `MPI_Allreduce`, `G` an `MPI_Allgather`, `B` a barrier, then two
/// blocking exchanges of halo sizes, one halo exchange and `AGAGAAAAGAGAAAA`). Its runs of
/// reductions and gathers are loops of their own. Truth from the generator, as above. Before,
/// the default pattern was 3 occurrences of whole solves, as on the recording: the parse's main
/// loop is then the whole solve, and with the loops found innermost first an exact solve
/// repeated three times is an iteration of a loop of its own, which did not yield to the CG
/// loop making up most of it.
#[test]
fn generated_solver_with_getdp_set_up_iterations_found_inside_solves() {
    check_solver_iterations(
        &[40, 40, 31, 31, 31, 27],
        &["GAGAAAAGAGAAAGGGGGGBAAGAGAGAGGAAABAAGAGAAAAHHXAGAGAAAAGAGAAAA"],
        "XAAA",
        "XA",
        "",
        &[],
    );
}

/// GetDP's Newton loop as recorded again on 4 ranks (4 Dec), its communication events as
/// they are in the trace (rank 0's above; on every rank the same but for its neighbours): the
/// solves need 334-336 CG iterations, and each set-up's exchange of halo sizes (`Y`) takes its
/// `MPI_ANY_SOURCE` receives in the order they took in the recording, so solves 3-4 and 5-7
/// are exact copies back to back on rank 0, more on the others: outer loops of whole solves
/// taken whole (as NAS MG's V-cycles are). Truth from the generator, as above: the CG
/// iteration. Before, the default pattern was 6 occurrences of whole solves (74.6 % of
/// events), as on the recording.
#[test]
fn generated_solver_with_solves_copies_iterations_found_inside_solves() {
    let set_up = |end: &str| format!("agagAAAagagAAAGGggggBAAgagagagGAAABAagagAAAAYYRSagagAAAagagAAAA{end}");
    let first = "DDDCCCACBccDDDGgBAagagAAAGGggggGgGgGgGGggggBAAgagagagGAAABAagagAAAAGAAAYYRSA";
    let second = format!("CC{}", set_up(""));
    check_solver_iterations(
        &[334, 334, 335, 335, 336, 336, 336, 336],
        &[first, &second, &set_up("B")],
        "AARSA",
        "A",
        &set_up("BBDDDDDD"),
        &[
            "1 3 2 1 2 3 2 1 3 1 2 3 1 3 2 1 2 3 1 3 2 1 2 3 1 3 2 1 2 3 1 3 2 1 2 3 1 3 2 1 2 3 3 1 2 1 2 3 1 3 2 1 2 3",
            "0 2 0 2 2 0 0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 2",
            "1 3 0 0 1 3 0 3 1 0 1 3 1 3 0 0 1 3 1 3 0 0 1 3 1 3 0 0 1 3 1 3 0 0 1 3 1 3 0 0 1 3 1 3 0 0 1 3 1 3 0 0 1 3",
            "2 0 0 2 2 0 0 2 2 0 0 2 2 0 0 2 2 0 0 2 2 0 0 2 2 0 0 2 2 0 0 2 2 0 0 2",
        ],
    );
}

/// Generates the solver run described above, each solve its set-up (`set_ups[i]` before solve
/// `i`, the last of them before each later solve), then `solves` CG iterations of `iteration`,
/// then `after`, and `end` after the last solve, where `A` is an `MPI_Allreduce`, `G` an
/// `MPI_Allgather`, `C` an `MPI_Bcast`, `D` an `MPI_Reduce`, `B` a barrier (lower case on the
/// rank's own `MPI_COMM_SELF`), `X` the halo exchange, `R` and `S` its receives and its sends
/// alone, `H` the set-up's exchange of halo sizes and `Y` the same as a nonblocking exchange,
/// its receives from the peers `any_source[rank]` lists in turn (from its neighbours in order
/// where it lists none); then checks the default pattern against the generator's iteration
/// starts.
fn check_solver_iterations(
    solves: &[u32],
    set_ups: &[&str],
    iteration: &str,
    after: &str,
    end: &str,
    any_source: &[&str],
) {
    use tracelogic_analysis::patterns::analyse;
    use tracelogic_model::{CollectiveOp, P2pDir, Trace, COMM_WORLD, NO_CALLPATH};
    let n = 4u32;
    let neighbours: [&[u32]; 4] = [&[1, 2, 3], &[0, 2], &[0, 1, 3], &[0, 2]];
    let mut t = Trace::new("text", "generated solver loop", n);
    let mut any_source: Vec<_> = any_source
        .iter()
        .map(|peers| peers.split(' ').map(|p| p.parse::<u32>().unwrap()))
        .collect();
    let own: Vec<_> = (0..n).map(|r| t.add_comm("MPI_COMM_SELF", vec![r])).collect();
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for r in 0..n {
        let mut events = 0u32;
        let mut at = 0u64;
        // `X` the halo exchange (receives posted first, as PETSc's scatter starts them), `H` the
        // set-up's exchange of halo sizes (a send and a receive per neighbour), or a collective.
        let mut push = |t: &mut Trace, events: &mut u32, c: char| {
            let ops: Vec<(P2pDir, u32)> = match c {
                'H' => neighbours[r as usize]
                    .iter()
                    .flat_map(|&p| [(P2pDir::Send, p), (P2pDir::Recv, p)])
                    .collect(),
                'X' | 'Y' | 'R' | 'S' => {
                    let each = |d| neighbours[r as usize].iter().map(move |&p| (d, p));
                    match c {
                        'R' => each(P2pDir::Recv).collect(),
                        'S' => each(P2pDir::Send).collect(),
                        'Y' => {
                            let k = neighbours[r as usize].len();
                            let from: Vec<u32> = match any_source.get_mut(r as usize) {
                                Some(peers) => peers.by_ref().take(k).collect(),
                                None => neighbours[r as usize].to_vec(),
                            };
                            let from = from.into_iter().map(|p| (P2pDir::Recv, p));
                            from.chain(each(P2pDir::Send)).collect()
                        }
                        _ => each(P2pDir::Recv).chain(each(P2pDir::Send)).collect(),
                    }
                }
                _ => {
                    let (name, op) = match c.to_ascii_uppercase() {
                        'A' => ("MPI_Allreduce", CollectiveOp::Allreduce),
                        'G' => ("MPI_Allgather", CollectiveOp::Allgather),
                        'C' => ("MPI_Bcast", CollectiveOp::Bcast),
                        'D' => ("MPI_Reduce", CollectiveOp::Reduce),
                        _ => ("MPI_Barrier", CollectiveOp::Barrier),
                    };
                    let comm = if c.is_lowercase() { own[r as usize] } else { COMM_WORLD };
                    at += 10;
                    let call = t.push_call(r, name, at, at + 5, NO_CALLPATH, 0);
                    t.push_collective(r, call, op, comm, 0, 8, 8);
                    *events += 1;
                    return;
                }
            };
            for (dir, peer) in ops {
                at += 10;
                let name = match (dir, c) {
                    (P2pDir::Send, 'H') => "MPI_Send",
                    (_, 'H') => "MPI_Recv",
                    (P2pDir::Send, _) => "MPI_Isend",
                    _ => "MPI_Irecv",
                };
                let bytes = if matches!(c, 'H' | 'Y') { 4 } else { 800 };
                let call = t.push_call(r, name, at, at + 5, NO_CALLPATH, 0);
                t.push_p2p(r, call, call, dir, peer, 0, 0, bytes);
                *events += 1;
            }
        };
        for (solve, &iterations) in solves.iter().enumerate() {
            let before = set_ups[solve.min(set_ups.len() - 1)];
            before.chars().for_each(|c| push(&mut t, &mut events, c));
            for _ in 0..iterations {
                starts[r as usize].push(events);
                iteration.chars().for_each(|c| push(&mut t, &mut events, c));
            }
            after.chars().for_each(|c| push(&mut t, &mut events, c));
        }
        end.chars().for_each(|c| push(&mut t, &mut events, c));
    }
    let total: usize = solves.iter().map(|&k| k as usize).sum();
    let a = analyse(&t, &PatternOptions::default());
    let first = &a.communication_patterns[0];
    let summary = steps_support::summary(&a);
    assert_eq!(first.ranks, (0..n).collect::<Vec<u32>>(), "{summary:?}");
    assert!(
        first.occurrences >= total && first.occurrences <= total + solves.len(),
        "{} occurrences of the default pattern for {total} iterations; {summary:?}",
        first.occurrences
    );
    // Every part of the default pattern is one iteration: its exchange and its reductions.
    for (r, names) in &first.events {
        let reductions = names.iter().filter(|s| *s == "MPI_Allreduce").count();
        assert_eq!(reductions, 3, "rank {r}: {names:?}");
        assert_eq!(
            names.len(),
            2 * neighbours[*r as usize].len() + 3,
            "rank {r}: {names:?}"
        );
    }
    let (pattern, rank, inside) = steps_support::most_steps_in_one_part(&a, &starts).unwrap();
    assert!(
        inside <= 1,
        "pattern {pattern} on rank {rank}: {inside} iterations in one occurrence"
    );
}
