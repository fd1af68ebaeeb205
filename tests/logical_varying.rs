//! Message sizes that change from step to step (molecular dynamics: a rank's ghost atoms, sent
//! to its six face neighbours every step): 27 ranks on a 3x3x3 torus, each step an
//! `MPI_Irecv`/`MPI_Send`/`MPI_Wait` per direction with a size drawn per sender, step and
//! direction, and an `MPI_Allreduce` every 10 steps. The structure is the same on every rank
//! and every step, so the logical trace must reproduce it exactly and fold the step loop; the
//! sizes take far more than `MAX_LISTED` values, so the compressed program keeps their
//! statistics (`Values::Stats`) and its length must not grow with the number of steps, while
//! the expansion gives every rank its volume within 1 % (and the C skeleton replays it so).

use tracelogic_analysis::compress::{compress, compress_with, CompressOptions, Node, Program, Values};
use tracelogic_analysis::logical::{
    expand_calls, logicalize, physical_calls, verify, LogicalTrace, Placement, VOLUME_TOLERANCE,
};
use tracelogic_analysis::skeleton::skeleton_c;
use tracelogic_graph::TopologySpec;
use tracelogic_model::{CollectiveOp, P2pDir, Trace, NO_CALLPATH, NO_ROOT};

mod common;

fn size(sender: u32, step: u32, dir: usize) -> u64 {
    // xorshift of (sender, step, direction): sizes 1,000..20,000 bytes.
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ ((sender as u64) << 40 | (step as u64) << 8 | dir as u64);
    for _ in 0..3 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    1000 + x % 19_000
}

fn md_trace(steps: u32) -> (Trace, Placement) {
    let spec = TopologySpec::parse("torus:3x3x3").unwrap();
    let n = spec.num_nodes();
    let dirs = spec.directions();
    let mut t = Trace::new("synthetic", "md", n);
    for r in 0..n {
        let mut clock = 0u64;
        let mut call = |t: &mut Trace, name: &str| {
            clock += 10;
            t.push_call(r, name, clock, clock + 5, NO_CALLPATH, 0)
        };
        call(&mut t, "MPI_Init");
        for step in 0..steps {
            for (k, d) in dirs.iter().enumerate() {
                let to = spec.neighbour(r, d).unwrap();
                let back = spec.opposite(r, d).unwrap();
                let from = spec.neighbour(r, &back).unwrap();
                let irecv = call(&mut t, "MPI_Irecv");
                let send = call(&mut t, "MPI_Send");
                let wait = call(&mut t, "MPI_Wait");
                t.push_p2p(r, irecv, wait, P2pDir::Recv, from, k as i32, 0, size(from, step, k));
                t.push_p2p(r, send, send, P2pDir::Send, to, k as i32, 0, size(r, step, k));
            }
            if step % 10 == 9 {
                let c = call(&mut t, "MPI_Allreduce");
                t.push_collective(r, c, CollectiveOp::Allreduce, 0, NO_ROOT, 8, 8);
            }
        }
        call(&mut t, "MPI_Finalize");
    }
    (t, Placement::identity(spec))
}

fn stats_inside(nodes: &[Node]) -> usize {
    let is_stats = |v: &Values| match v {
        Values::Stats { .. } => true,
        Values::ByRank { default, ranks } => {
            matches!(**default, Values::Stats { .. }) || ranks.iter().any(|g| matches!(g.values, Values::Stats { .. }))
        }
        _ => false,
    };
    nodes
        .iter()
        .map(|n| match n {
            Node::Call { sizes, .. } => sizes.iter().filter(|v| is_stats(v)).count(),
            Node::Loop { body, .. } => stats_inside(body),
        })
        .sum()
}

/// Per rank: bytes of the expansion of `program`.
fn program_volume(l: &LogicalTrace, program: &Program) -> Vec<u64> {
    let calls = program.expand(10_000_000).unwrap();
    (0..l.ranks)
        .map(|r| {
            let mine = expand_calls(l, calls.iter(), r).unwrap();
            physical_calls(&mine).iter().map(|c| c.bytes).sum()
        })
        .collect()
}

fn real_volume(t: &Trace) -> Vec<u64> {
    t.ranks.iter().map(|rt| rt.p2p.bytes.iter().sum()).collect()
}

#[test]
fn step_varying_sizes_keep_structure_and_volume_and_the_loop_folds() {
    let mut lengths = Vec::new();
    for steps in [50, 100] {
        let (trace, placement) = md_trace(steps);
        let l = logicalize(&trace, &placement).unwrap();
        let v = verify(&trace, &l).unwrap();
        assert_eq!(v.ranks_structure_differs, Vec::<u32>::new(), "{steps} steps");
        // The records carry every rank's own sizes.
        assert!(l.sizes_fitted && l.rank_sized_operations > 0);
        assert_eq!(v.ranks_bytes_differ, Vec::<u32>::new(), "{steps} steps");
        let program = compress(&l.records);
        assert!(
            stats_inside(&program.nodes) > 0,
            "sizes summarised:\n{}",
            program.text()
        );
        let volume = program_volume(&l, &program);
        for (r, (&got, &want)) in volume.iter().zip(&real_volume(&trace)).enumerate() {
            let err = (got as f64 - want as f64).abs() / want as f64;
            assert!(err <= VOLUME_TOLERANCE, "{steps} steps, rank {r}: {got} against {want}");
        }
        // On request the sizes stay exact, and the program expands to the records.
        let exact = compress_with(&l.records, &CompressOptions { exact_sizes: true });
        assert_eq!(
            exact.expand(10_000_000).unwrap(),
            l.records.iter().map(|r| r.call.clone()).collect::<Vec<_>>()
        );
        eprintln!(
            "{steps} steps: {} records -> {} compressed, {} summarised size sequences",
            program.raw_length,
            program.compressed_length,
            stats_inside(&program.nodes)
        );
        lengths.push(program.compressed_length);
    }
    assert_eq!(
        lengths[0], lengths[1],
        "the compressed length does not grow with the steps"
    );
    assert!(lengths[0] <= 30, "{lengths:?}: the step loop folds");
}

#[test]
fn skeleton_replays_step_varying_volume_within_one_percent() {
    let (trace, placement) = md_trace(30);
    let l = logicalize(&trace, &placement).unwrap();
    let program = compress(&l.records);
    assert!(stats_inside(&program.nodes) > 0);
    let Some(replayed) = common::replay_skeleton("md", &skeleton_c(&l, &program).unwrap(), 27) else {
        return;
    };
    // Rank r of the skeleton plays node r = rank r here (identity placement): the same
    // operations (direction and peer, in order) and each rank's volume within 1 %.
    for r in 0..27usize {
        let ops = |t: &Trace| -> Vec<(bool, u32)> {
            let p = &t.ranks[r].p2p;
            (0..p.len()).map(|i| (p.dir[i] == P2pDir::Send, p.peer[i])).collect()
        };
        assert_eq!(ops(&replayed), ops(&trace), "rank {r}");
    }
    for (r, (&got, &want)) in real_volume(&replayed).iter().zip(&real_volume(&trace)).enumerate() {
        let err = (got as f64 - want as f64).abs() / want as f64;
        assert!(err <= VOLUME_TOLERANCE, "rank {r}: {got} against {want}");
    }
}
