//! Helpers for the tests that check loop iterations against a generator's or a log's step
//! starts (event indices where each step begins on each rank).

use tracelogic_analysis::patterns::PatternAnalysis;

/// The first three communication patterns as (occurrences, ranks, events covered), for
/// assertion messages.
pub fn summary(a: &PatternAnalysis) -> Vec<(usize, usize, u64)> {
    a.communication_patterns
        .iter()
        .take(3)
        .map(|p| (p.occurrences, p.ranks.len(), p.events_covered))
        .collect()
}

/// Asserts that rank `r` has `n` parts of the first pattern's instances, one after the other
/// (one occurrence per step on the rank, none overlapping another). `what` names the run in
/// assertion messages.
#[allow(dead_code)]
pub fn assert_first_pattern_parts(a: &PatternAnalysis, r: u32, n: usize, what: &str) {
    let mut parts: Vec<(u32, u32)> = a
        .communication
        .instances
        .iter()
        .filter(|i| i.pattern == 0)
        .flat_map(|i| &i.parts)
        .filter(|p| p.rank == r)
        .map(|p| (p.first_event, p.last_event))
        .collect();
    parts.sort_unstable();
    assert_eq!(parts.len(), n, "{what}: rank {r}");
    assert!(parts.windows(2).all(|w| w[0].1 < w[1].0), "{what}: rank {r}");
}

/// The instance part holding the most step starts: (pattern id, rank, starts inside it), `None`
/// when there are no instances. `starts[rank]` are that rank's step starts, ascending.
pub fn most_steps_in_one_part(a: &PatternAnalysis, starts: &[Vec<u32>]) -> Option<(u32, u32, usize)> {
    a.communication
        .instances
        .iter()
        .flat_map(|inst| inst.parts.iter().map(move |p| (inst.pattern, p)))
        .map(|(pattern, p)| {
            let s = &starts[p.rank as usize];
            let inside = s.partition_point(|&x| x <= p.last_event) - s.partition_point(|&x| x < p.first_event);
            (pattern, p.rank, inside)
        })
        .max_by_key(|&(_, _, inside)| inside)
}

/// Appends the messages `ops` (kind, peer; 64 bytes each, `base + 100 (j + 1) + 10 r` ns) to
/// rank `r` of `t`.
fn push_messages(t: &mut tracelogic_model::Trace, r: u32, base: u64, ops: &[(tracelogic_model::P2pDir, u32)]) {
    use tracelogic_model::{P2pDir, NO_CALLPATH};
    for (j, &(dir, peer)) in ops.iter().enumerate() {
        let at = base + 100 * (j as u64 + 1) + 10 * r as u64;
        let name = if dir == P2pDir::Send { "MPI_Send" } else { "MPI_Recv" };
        let c = t.push_call(r, name, at, at + 5, NO_CALLPATH, 0);
        t.push_p2p(r, c, c, dir, peer, 0, 0, 64);
    }
}

/// Appends one generated MD step to rank `r` of `t`: the messages `ops` (kind, peer; 64 bytes
/// each, `base + 100 (j + 1) + 10 r` ns), four `MPI_Alltoall` (transposes) and, `reduce`, an
/// energy `MPI_Allreduce`. Returns the events appended. (Not every test file using this module
/// generates steps.)
#[allow(dead_code)]
pub fn push_md_step(
    t: &mut tracelogic_model::Trace,
    r: u32,
    base: u64,
    ops: &[(tracelogic_model::P2pDir, u32)],
    reduce: bool,
) -> u32 {
    use tracelogic_model::{CollectiveOp, COMM_WORLD, NO_CALLPATH};
    push_messages(t, r, base, ops);
    let mut collective = |name: &str, op: CollectiveOp, at: u64| {
        let c = t.push_call(r, name, at, at + 5, NO_CALLPATH, 0);
        t.push_collective(r, c, op, COMM_WORLD, 0, 8, 8);
    };
    for j in 0..4 {
        collective("MPI_Alltoall", CollectiveOp::Alltoall, base + 5_000 + 10 * j);
    }
    if reduce {
        collective("MPI_Allreduce", CollectiveOp::Allreduce, base + 8_000);
    }
    ops.len() as u32 + 4 + reduce as u32
}

/// Appends one generated step of a minimiser or an MD code with varying reductions to rank `r`
/// of `t`: the messages `ops` (kind, peer; 64 bytes each, `base + 100 (j + 1) + 10 r` ns), then
/// `reductions` `MPI_Allreduce`s. Returns the events appended. (Not every test file using this
/// module generates steps.)
#[allow(dead_code)]
pub fn push_step_with_reductions(
    t: &mut tracelogic_model::Trace,
    r: u32,
    base: u64,
    ops: &[(tracelogic_model::P2pDir, u32)],
    reductions: u32,
) -> u32 {
    use tracelogic_model::{CollectiveOp, COMM_WORLD, NO_CALLPATH};
    push_messages(t, r, base, ops);
    for j in 0..reductions {
        let at = base + 5_000 + 100 * j as u64;
        let c = t.push_call(r, "MPI_Allreduce", at, at + 5, NO_CALLPATH, 0);
        t.push_collective(r, c, CollectiveOp::Allreduce, COMM_WORLD, 0, 8, 8);
    }
    ops.len() as u32 + reductions
}

/// Asserts what a user expects of a generated MD loop of `steps` steps on ranks `0..n`: the
/// default pattern is over every rank, once per step (± 5), and no occurrence holds two step
/// starts (`starts[rank]`). (Not every test file using this module generates steps.)
#[allow(dead_code)]
pub fn assert_one_step_per_step(t: &tracelogic_model::Trace, n: u32, steps: u32, starts: &[Vec<u32>]) {
    let a = tracelogic_analysis::patterns::analyse(t, &tracelogic_analysis::patterns::PatternOptions::default());
    let first = &a.communication_patterns[0];
    let summary = summary(&a);
    assert_eq!(first.ranks, (0..n).collect::<Vec<u32>>(), "{summary:?}");
    assert!(
        first.occurrences.abs_diff(steps as usize) <= 5,
        "{} occurrences for {steps} steps; {summary:?}",
        first.occurrences
    );
    let (pattern, rank, inside) = most_steps_in_one_part(&a, starts).unwrap();
    assert!(
        inside <= 1,
        "pattern {pattern} on rank {rank}: {inside} steps in one occurrence; {summary:?}"
    );
}

/// The steps at which a generated MD run rebuilds its neighbour lists: step 0, then each next
/// one `next(last, draw)` until past `steps`; `draw(m)` is a seeded draw in `0..m` (a linear
/// congruential generator, so runs are reproducible). (Not every test file using this module
/// generates rebuilds.)
#[allow(dead_code)]
pub fn rebuild_steps(seed: u64, steps: u32, mut next: impl FnMut(u32, &mut dyn FnMut(u64) -> u64) -> u32) -> Vec<u32> {
    let mut x = seed;
    let mut draw = move |m: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    let mut rebuilds = vec![0u32];
    while *rebuilds.last().unwrap() < steps {
        let last = *rebuilds.last().unwrap();
        rebuilds.push(next(last, &mut draw));
    }
    rebuilds
}

/// Rank `r`'s partners on a generated 4×2 grid, periodic along the 4: (right, left, the other
/// row). (Not every test file using this module generates steps.)
#[allow(dead_code)]
pub fn partners_4x2(r: u32) -> (u32, u32, u32) {
    let (i, j) = (r % 4, r / 4);
    ((i + 1) % 4 + 4 * j, (i + 3) % 4 + 4 * j, i + 4 * (1 - j))
}

/// Four messages of a halo exchange: (kind, peer).
#[allow(dead_code)]
pub type Halo = [(tracelogic_model::P2pDir, u32); 4];

/// Rank `r`'s forward and reverse halo exchanges on the generated 4×2 grid of
/// [`partners_4x2`]: receive from the left and send right, then both ways with the other row;
/// the reverse the other way round. (Not every test file using this module generates steps.)
#[allow(dead_code)]
pub fn halos_4x2(r: u32) -> (Halo, Halo) {
    use tracelogic_model::P2pDir;
    let (right, left, other) = partners_4x2(r);
    (
        [
            (P2pDir::Recv, left),
            (P2pDir::Send, right),
            (P2pDir::Recv, other),
            (P2pDir::Send, other),
        ],
        [
            (P2pDir::Recv, other),
            (P2pDir::Send, other),
            (P2pDir::Recv, right),
            (P2pDir::Send, left),
        ],
    )
}
