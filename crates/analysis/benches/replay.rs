//! Replay throughput: events × configurations per second, and run time for K = 1, 16, 256.
//!
//! `cargo bench -p tracelogic-analysis --bench replay [-- RANKS ITERATIONS]` (defaults 64 and
//! 2000). The trace is a 2-D halo exchange (Irecv/Isend/Waitall with four neighbours) with
//! imbalanced compute and an allreduce every iteration, built in memory.

use std::hint::black_box;
use std::time::Instant;
use tracelogic_analysis::replay::{configurations, replay, Network, SEED_SCALES};
use tracelogic_model::{match_messages, CollectiveOp, P2pDir, Rank, Time, Trace, COMM_WORLD, NO_CALLPATH, NO_ROOT};

fn halo_trace(ranks: u32, iterations: u32) -> Trace {
    let side = (ranks as f64).sqrt() as u32;
    let ranks = side * side;
    let mut t = Trace::new("generated", "halo", ranks);
    for r in 0..ranks {
        let (x, y) = (r % side, r / side);
        let neighbours = [
            ((x + 1) % side) + y * side,
            ((x + side - 1) % side) + y * side,
            x + ((y + 1) % side) * side,
            x + ((y + side - 1) % side) * side,
        ];
        let mut now: Time = 0;
        t.push_call(r, "MPI_Init", now, now, NO_CALLPATH, 0);
        for it in 0..iterations {
            now += 100_000 + ((r * 7 + it * 13) % 17) as Time * 3_000;
            let mut posts = Vec::new();
            for (i, &n) in neighbours.iter().enumerate() {
                let c = t.push_call(r, "MPI_Irecv", now, now + 500, NO_CALLPATH, 0);
                posts.push((c, P2pDir::Recv, n, i as i32 ^ 1));
                now += 600;
            }
            for (i, &n) in neighbours.iter().enumerate() {
                let c = t.push_call(r, "MPI_Isend", now, now + 800, NO_CALLPATH, 0);
                posts.push((c, P2pDir::Send, n, i as i32));
                now += 900;
            }
            let wait = t.push_call(r, "MPI_Waitall", now, now + 20_000, NO_CALLPATH, 0);
            now += 21_000;
            for (c, dir, peer, tag) in posts {
                t.push_p2p(r, c, wait, dir, peer as Rank, tag, COMM_WORLD, 32 * 1024);
            }
            let c = t.push_call(r, "MPI_Allreduce", now, now + 30_000, NO_CALLPATH, 0);
            t.push_collective(r, c, CollectiveOp::Allreduce, COMM_WORLD, NO_ROOT, 8, 8);
            now += 31_000;
        }
        t.push_call(r, "MPI_Finalize", now, now, NO_CALLPATH, 0);
    }
    t
}

fn main() {
    let args: Vec<u32> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let ranks = args.first().copied().unwrap_or(64);
    let iterations = args.get(1).copied().unwrap_or(2000);
    let trace = halo_trace(ranks, iterations);
    let start = Instant::now();
    let matching = match_messages(&trace);
    println!(
        "trace: {} ranks, {} calls, {} messages (matching took {:.3} s)",
        trace.num_ranks(),
        trace.num_calls(),
        matching.messages.len(),
        start.elapsed().as_secs_f64()
    );
    let pool = configurations(&Network::presets(), &SEED_SCALES);
    let mut k256 = Vec::new();
    while k256.len() < 256 {
        k256.extend(pool.iter().cloned());
    }
    k256.truncate(256);
    println!(
        "{:>5} {:>10} {:>22} {:>18}",
        "K", "seconds", "events×configs / s", "events / s"
    );
    for k in [1usize, 16, 256] {
        let configs = &k256[..k];
        let reps = if k == 256 { 3 } else { 5 };
        let mut best = f64::INFINITY;
        for _ in 0..reps {
            let t0 = Instant::now();
            let r = replay(&trace, &matching, configs, None, false).expect("replay");
            best = best.min(t0.elapsed().as_secs_f64());
            black_box(r);
        }
        let events = trace.num_calls() as f64;
        println!(
            "{k:>5} {best:>10.4} {:>22.3e} {:>18.3e}",
            events * k as f64 / best,
            events / best
        );
    }
}
