//! Traces with planted delays: small MPI programs run under a simple clock model, so that wait
//! states and critical paths can be computed by hand from the program and compared with what
//! the analyses measure.
//!
//! A [`Program`] gives every rank a list of [`Op`]s. [`run`] executes them with integer clocks:
//!
//! - `Compute(d)` advances the rank's clock by `d`;
//! - every MPI call lasts at least the overhead `o` after the moment it can complete;
//! - `Send` is eager: it exits at `enter + o`; its message arrives at `enter + latency +
//!   extra(link)`, where `extra` is the link's planted delay ([`Program::slow_links`]);
//! - `Ssend` is synchronous: it exits at `max(enter, receive enter) + o`;
//! - `Recv` exits at `max(enter, arrival) + o`;
//! - collectives on `MPI_COMM_WORLD`: a barrier or an all-to-all (`MPI_Allreduce`) exits at
//!   `max(all enters) + o`; a broadcast exits at `max(enter, root enter) + o` on non-roots and
//!   `enter + o` on the root; a reduce exits at `max(enter, all enters) + o` on the root and
//!   `enter + o` on the others.
//!
//! Every rank starts with `MPI_Init` entered at 0 and ends with `MPI_Finalize`, which behaves
//! as a barrier. Matching is by order per (sender, receiver), tag 0.

use tracelogic_model::{CollectiveOp, P2pDir, Rank, Time, Trace, NO_CALLPATH, NO_ROOT};

/// One step of a rank's program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Computation of this many ns.
    Compute(Time),
    /// Eager `MPI_Send` of `bytes` to a rank.
    Send { to: Rank, bytes: u64 },
    /// Synchronous `MPI_Ssend` of `bytes` to a rank.
    Ssend { to: Rank, bytes: u64 },
    /// Blocking `MPI_Recv` from a rank.
    Recv { from: Rank, bytes: u64 },
    /// `MPI_Barrier` on `MPI_COMM_WORLD`.
    Barrier,
    /// `MPI_Allreduce` of `bytes` on `MPI_COMM_WORLD`.
    Allreduce { bytes: u64 },
    /// `MPI_Bcast` of `bytes` from `root`.
    Bcast { root: Rank, bytes: u64 },
    /// `MPI_Reduce` of `bytes` to `root`.
    Reduce { root: Rank, bytes: u64 },
}

/// A program with planted delays and the clock model's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// Per rank, its steps between `MPI_Init` and `MPI_Finalize`.
    pub ranks: Vec<Vec<Op>>,
    /// Duration of every MPI call once it can complete (ns, at least 0).
    pub overhead_ns: Time,
    /// Time a message takes from its send's entry to its arrival.
    pub latency_ns: Time,
    /// Planted extra transfer time on some links: (sender, receiver, extra ns).
    pub slow_links: Vec<(Rank, Rank, Time)>,
}

/// Run `program` and return its trace (format `generated`). Fails on a program that deadlocks
/// or names a rank it does not have.
pub fn run(program: &Program) -> Result<Trace, String> {
    let n = program.ranks.len();
    for (r, ops) in program.ranks.iter().enumerate() {
        for op in ops {
            let peer = match *op {
                Op::Send { to, .. } | Op::Ssend { to, .. } => Some(to),
                Op::Recv { from, .. } => Some(from),
                Op::Bcast { root, .. } | Op::Reduce { root, .. } => Some(root),
                _ => None,
            };
            if peer.is_some_and(|p| p as usize >= n) {
                return Err(format!(
                    "rank {r} names rank {} of a {n}-rank program",
                    peer.unwrap_or(0)
                ));
            }
        }
    }
    let o = program.overhead_ns;
    let extra = |s: Rank, r: Rank| {
        program
            .slow_links
            .iter()
            .filter(|l| l.0 == s && l.1 == r)
            .map(|l| l.2)
            .sum::<Time>()
    };
    // Per rank: program counter, clock, and whether it entered its current call (and when).
    let mut pc = vec![0usize; n];
    let mut clock = vec![0 as Time; n];
    let mut entered: Vec<Option<Time>> = vec![None; n];
    // Per (sender, receiver): enter times of the sends so far, in order, and whether each is
    // synchronous; per (receiver, sender): enter times of the receives posted so far. The k-th
    // send of a pair matches the k-th receive.
    let mut sent: Vec<Vec<(Time, bool)>> = vec![Vec::new(); n * n];
    let mut posted: Vec<Vec<Time>> = vec![Vec::new(); n * n];
    // Per rank and peer: sends made and receives completed so far.
    let mut nsent = vec![0usize; n * n];
    let mut nrecv = vec![0usize; n * n];
    // Collective k on every rank: enter times of those that arrived.
    let mut coll_k = vec![0usize; n];
    let mut coll_enters: Vec<Vec<Option<Time>>> = Vec::new();
    let mut trace = Trace::new("generated", "delays", n as u32);
    for (r, c) in clock.iter_mut().enumerate() {
        trace.push_call(r as Rank, "MPI_Init", 0, o, NO_CALLPATH, 0);
        *c = o;
    }
    let steps = |r: usize| program.ranks[r].len() + 1; // + MPI_Finalize
    loop {
        let mut progressed = false;
        for r in 0..n {
            while pc[r] < steps(r) {
                let op = program.ranks[r].get(pc[r]).copied();
                let rank = r as Rank;
                let enter = *entered[r].get_or_insert(clock[r]);
                let done: Option<Time> = match op {
                    Some(Op::Compute(d)) => {
                        entered[r] = None;
                        clock[r] += d;
                        pc[r] += 1;
                        progressed = true;
                        continue;
                    }
                    Some(Op::Send { to, bytes }) => {
                        sent[r * n + to as usize].push((enter, false));
                        nsent[r * n + to as usize] += 1;
                        let c = trace.push_call(rank, "MPI_Send", enter, enter + o, NO_CALLPATH, 0);
                        trace.push_p2p(rank, c, c, P2pDir::Send, to, 0, 0, bytes);
                        Some(enter + o)
                    }
                    Some(Op::Ssend { to, bytes }) => {
                        // Announce the send once, then wait for its receive to be posted.
                        let pair = r * n + to as usize;
                        let k = nsent[pair];
                        if sent[pair].len() == k {
                            sent[pair].push((enter, true));
                        }
                        match posted[to as usize * n + r].get(k).copied() {
                            Some(recv_enter) => {
                                nsent[pair] += 1;
                                let exit = enter.max(recv_enter) + o;
                                let c = trace.push_call(rank, "MPI_Ssend", enter, exit, NO_CALLPATH, 0);
                                trace.push_p2p(rank, c, c, P2pDir::Send, to, 0, 0, bytes);
                                Some(exit)
                            }
                            None => None,
                        }
                    }
                    Some(Op::Recv { from, bytes }) => {
                        let pair = r * n + from as usize;
                        let k = nrecv[pair];
                        if posted[pair].len() == k {
                            posted[pair].push(enter);
                        }
                        match sent[from as usize * n + r].get(k).copied() {
                            Some((send_enter, _)) => {
                                nrecv[pair] += 1;
                                let arrival = send_enter + program.latency_ns + extra(from, rank);
                                let exit = enter.max(arrival) + o;
                                let c = trace.push_call(rank, "MPI_Recv", enter, exit, NO_CALLPATH, 0);
                                trace.push_p2p(rank, c, c, P2pDir::Recv, from, 0, 0, bytes);
                                Some(exit)
                            }
                            None => None,
                        }
                    }
                    Some(Op::Barrier)
                    | Some(Op::Allreduce { .. })
                    | Some(Op::Bcast { .. })
                    | Some(Op::Reduce { .. })
                    | None => {
                        let k = coll_k[r];
                        if coll_enters.len() <= k {
                            coll_enters.resize(k + 1, vec![None; n]);
                        }
                        coll_enters[k][r] = Some(enter);
                        let all: Option<Vec<Time>> = coll_enters[k].iter().copied().collect();
                        let (name, cop, root, bytes) = match op {
                            Some(Op::Barrier) => ("MPI_Barrier", CollectiveOp::Barrier, NO_ROOT, 0),
                            Some(Op::Allreduce { bytes }) => ("MPI_Allreduce", CollectiveOp::Allreduce, NO_ROOT, bytes),
                            Some(Op::Bcast { root, bytes }) => ("MPI_Bcast", CollectiveOp::Bcast, root, bytes),
                            Some(Op::Reduce { root, bytes }) => ("MPI_Reduce", CollectiveOp::Reduce, root, bytes),
                            _ => ("MPI_Finalize", CollectiveOp::Barrier, NO_ROOT, 0),
                        };
                        let ready = match (cop, op) {
                            (CollectiveOp::Bcast, _) if rank == root => Some(enter),
                            (CollectiveOp::Bcast, _) => coll_enters[k][root as usize].map(|t| t.max(enter)),
                            (CollectiveOp::Reduce, _) if rank != root => Some(enter),
                            _ => all.map(|v| v.into_iter().max().unwrap_or(enter)),
                        };
                        match ready {
                            Some(t) => {
                                let exit = t + o;
                                let c = trace.push_call(rank, name, enter, exit, NO_CALLPATH, 0);
                                if op.is_some() {
                                    let sent_b = if cop == CollectiveOp::Bcast && rank != root {
                                        0
                                    } else {
                                        bytes
                                    };
                                    let recv_b = if cop == CollectiveOp::Reduce && rank != root {
                                        0
                                    } else {
                                        bytes
                                    };
                                    trace.push_collective(rank, c, cop, 0, root, sent_b, recv_b);
                                }
                                coll_k[r] += 1;
                                Some(exit)
                            }
                            None => None,
                        }
                    }
                };
                match done {
                    Some(exit) => {
                        entered[r] = None;
                        clock[r] = exit;
                        pc[r] += 1;
                        progressed = true;
                    }
                    None => break,
                }
            }
        }
        if pc.iter().enumerate().all(|(r, &p)| p >= steps(r)) {
            return Ok(trace);
        }
        if !progressed {
            let stuck: Vec<usize> = (0..n).filter(|&r| pc[r] < steps(r)).collect();
            return Err(format!("the program deadlocks (ranks {stuck:?} cannot proceed)"));
        }
    }
}

/// `ranks` ranks each computing `compute_ns` then joining an `MPI_Allreduce`, `iterations`
/// times; rank `late` computes `extra_ns` longer every iteration (load imbalance).
pub fn late_rank(ranks: u32, iterations: u32, compute_ns: Time, late: Rank, extra_ns: Time) -> Program {
    Program {
        ranks: (0..ranks)
            .map(|r| {
                (0..iterations)
                    .flat_map(|_| {
                        let d = compute_ns + if r == late { extra_ns } else { 0 };
                        [Op::Compute(d), Op::Allreduce { bytes: 8 }]
                    })
                    .collect()
            })
            .collect(),
        overhead_ns: 1_000,
        latency_ns: 5_000,
        slow_links: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssend_waits_for_its_receive() {
        let p = Program {
            ranks: vec![
                vec![Op::Ssend { to: 1, bytes: 8 }],
                vec![Op::Compute(100), Op::Recv { from: 0, bytes: 8 }],
            ],
            overhead_ns: 1,
            latency_ns: 10,
            slow_links: vec![],
        };
        let t = run(&p).unwrap();
        // Init [0,1) on both; rank 1 enters Recv at 101; Ssend [1, 102); Recv exits at
        // max(101, 1 + 10) + 1 = 102.
        assert_eq!((t.ranks[0].calls.enter(1), t.ranks[0].calls.exit(1)), (1, 102));
        assert_eq!((t.ranks[1].calls.enter(1), t.ranks[1].calls.exit(1)), (101, 102));
    }

    #[test]
    fn deadlock_is_an_error() {
        let p = Program {
            ranks: vec![
                vec![Op::Recv { from: 1, bytes: 1 }],
                vec![Op::Recv { from: 0, bytes: 1 }],
            ],
            overhead_ns: 1,
            latency_ns: 1,
            slow_links: vec![],
        };
        assert!(run(&p).unwrap_err().contains("deadlock"));
        let bad = Program {
            ranks: vec![vec![Op::Send { to: 5, bytes: 1 }]],
            ..p
        };
        assert!(run(&bad).is_err());
    }
}
