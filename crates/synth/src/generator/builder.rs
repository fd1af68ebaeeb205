//! The trace builder: MPI calls and their timing under the spec's clock, exchange by exchange.

use crate::spec::Clock;
use tracelogic_model::{
    CallIdx, CallKind, CollectiveOp, FuncId, P2pDir, Rank, Time, Trace, COMM_WORLD, NOT_COMPLETED, NO_CALLPATH, NO_ROOT,
};

use super::plan::*;

/// The MPI functions the generator calls.
#[derive(Debug, Clone, Copy)]
pub(super) enum Func {
    Init,
    Finalize,
    Irecv,
    Isend,
    Waitall,
    Send,
    Recv,
    Sendrecv,
    Allreduce,
    Barrier,
    Bcast,
}

impl Func {
    const COUNT: usize = 11;

    pub(super) fn name(self) -> &'static str {
        match self {
            Func::Init => "MPI_Init",
            Func::Finalize => "MPI_Finalize",
            Func::Irecv => "MPI_Irecv",
            Func::Isend => "MPI_Isend",
            Func::Waitall => "MPI_Waitall",
            Func::Send => "MPI_Send",
            Func::Recv => "MPI_Recv",
            Func::Sendrecv => "MPI_Sendrecv",
            Func::Allreduce => "MPI_Allreduce",
            Func::Barrier => "MPI_Barrier",
            Func::Bcast => "MPI_Bcast",
        }
    }

    pub(super) fn of_collective(op: CollectiveOp) -> Func {
        match op {
            CollectiveOp::Barrier => Func::Barrier,
            CollectiveOp::Bcast => Func::Bcast,
            _ => Func::Allreduce,
        }
    }
}

/// Appends calls to the trace's columns and keeps every rank's clock.
pub(super) struct Builder {
    pub(super) trace: Trace,
    pub(super) clock: Clock,
    /// Current time of each world rank: when its next call may start.
    pub(super) now: Vec<Time>,
    pub(super) rank_of_node: Vec<Rank>,
    pub(super) compute_factor: Vec<f64>,
    pub(super) funcs: [Option<(FuncId, CallKind)>; Func::COUNT],
    /// Entry time of each message's send, indexed by message id (reused between exchanges).
    pub(super) send_enter: Vec<Time>,
}

impl Builder {
    pub(super) fn new(trace: Trace, clock: Clock, rank_of_node: Vec<Rank>, compute_factor: Vec<f64>) -> Builder {
        let n = trace.num_ranks() as usize;
        Builder {
            trace,
            clock,
            now: vec![0; n],
            rank_of_node,
            compute_factor,
            funcs: [None; Func::COUNT],
            send_enter: Vec::new(),
        }
    }

    /// Time to copy `bytes` at the model's bandwidth.
    pub(super) fn transfer(&self, bytes: u64) -> Time {
        (bytes as f64 / self.clock.bandwidth).ceil() as Time
    }

    /// When a message sent at `sent` arrives.
    pub(super) fn arrival(&self, sent: Time, bytes: u64) -> Time {
        sent + self.clock.latency_ns + self.transfer(bytes)
    }

    pub(super) fn call(&mut self, r: Rank, f: Func, enter: Time, exit: Time) -> CallIdx {
        let (id, kind) = match self.funcs[f as usize] {
            Some(fk) => fk,
            None => {
                let fk = (self.trace.functions.intern(f.name()), CallKind::classify(f.name()));
                self.funcs[f as usize] = Some(fk);
                fk
            }
        };
        let c = &mut self.trace.ranks[r as usize].calls;
        let idx = c.func.len() as CallIdx;
        c.func.push(id);
        c.kind.push(kind);
        c.enter.push(enter);
        c.duration.push(exit.saturating_sub(enter));
        c.callpath.push(NO_CALLPATH);
        c.location.push(0);
        self.now[r as usize] = exit;
        idx
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn p2p(
        &mut self,
        r: Rank,
        post: CallIdx,
        complete: CallIdx,
        dir: P2pDir,
        peer: Rank,
        tag: i32,
        bytes: u64,
    ) {
        let p = &mut self.trace.ranks[r as usize].p2p;
        p.post.push(post);
        p.complete.push(post, complete);
        p.dir.push(dir);
        p.peer.push(peer);
        p.tag.push(tag);
        p.comm.push(COMM_WORLD);
        p.bytes.push(bytes);
    }

    pub(super) fn compute(&mut self, plan: &PhasePlan) {
        for u in 0..plan.n {
            let r = self.rank_of_node[u as usize];
            self.now[r as usize] += self.compute_time(r, plan.compute_ns);
        }
    }

    pub(super) fn compute_time(&self, r: Rank, ns: u64) -> Time {
        match self.compute_factor.get(r as usize) {
            Some(f) => (ns as f64 * f).round() as Time,
            None => ns,
        }
    }

    /// Irecv from every sender, Isend to every receiver, then one Waitall completing them.
    pub(super) fn isend_exchange(&mut self, ex: &Exchange) {
        self.send_enter.resize(ex.msgs.len(), 0);
        let ov = self.clock.overhead_ns;
        let mut first_op = vec![0usize; ex.n() as usize];
        for u in 0..ex.n() {
            let r = self.rank_of_node[u as usize];
            first_op[u as usize] = self.trace.ranks[r as usize].p2p.len();
            for &m in ex.recvs_of(u) {
                let msg = ex.msgs[m as usize];
                let t = self.now[r as usize];
                let c = self.call(r, Func::Irecv, t, t + ov);
                let peer = self.rank_of_node[msg.sender as usize];
                self.p2p(r, c, NOT_COMPLETED, P2pDir::Recv, peer, msg.tag, msg.bytes);
            }
            for &m in ex.sends_of(u) {
                let msg = ex.msgs[m as usize];
                let t = self.now[r as usize];
                let c = self.call(r, Func::Isend, t, t + ov + self.transfer(msg.bytes));
                self.send_enter[m as usize] = t;
                let peer = self.rank_of_node[msg.receiver as usize];
                self.p2p(r, c, NOT_COMPLETED, P2pDir::Send, peer, msg.tag, msg.bytes);
            }
        }
        for u in 0..ex.n() {
            if ex.recvs_of(u).is_empty() && ex.sends_of(u).is_empty() {
                continue;
            }
            let r = self.rank_of_node[u as usize];
            let enter = self.now[r as usize];
            let ready = ex
                .recvs_of(u)
                .iter()
                .map(|&m| {
                    let msg = ex.msgs[m as usize];
                    self.arrival(self.send_enter[m as usize], msg.bytes)
                })
                .fold(enter, Time::max);
            let wait = self.call(r, Func::Waitall, enter, ready + ov);
            let p = &mut self.trace.ranks[r as usize].p2p;
            for op in first_op[u as usize]..p.len() {
                p.set_complete(op, wait);
            }
        }
    }

    /// Per tag (direction), in increasing order: `MPI_Sendrecv` pairing the send along the
    /// direction with the first receive of that tag, `MPI_Send` / `MPI_Recv` for an unpaired
    /// side, further receives of the same tag as `MPI_Recv`.
    pub(super) fn sendrecv_exchange(&mut self, ex: &Exchange) {
        self.send_enter.resize(ex.msgs.len(), 0);
        let ov = self.clock.overhead_ns;
        let n = ex.n() as usize;
        let (mut sc, mut rc) = (vec![0usize; n], vec![0usize; n]);
        loop {
            // The next tag any node still has to handle.
            let tag = (0..ex.n())
                .flat_map(|u| {
                    let s = ex.sends_of(u).get(sc[u as usize]).map(|&m| ex.msgs[m as usize].tag);
                    let r = ex.recvs_of(u).get(rc[u as usize]).map(|&m| ex.msgs[m as usize].tag);
                    s.into_iter().chain(r)
                })
                .min();
            let Some(tag) = tag else { break };
            let take = |list: &[u32], from: usize| {
                list[from..]
                    .iter()
                    .take_while(|&&m| ex.msgs[m as usize].tag == tag)
                    .count()
            };
            // Every send of this step starts when its rank reaches the step.
            for u in 0..ex.n() {
                let r = self.rank_of_node[u as usize];
                let s = &ex.sends_of(u)[sc[u as usize]..];
                for &m in &s[..take(ex.sends_of(u), sc[u as usize])] {
                    self.send_enter[m as usize] = self.now[r as usize];
                }
            }
            for u in 0..ex.n() {
                let ui = u as usize;
                let r = self.rank_of_node[ui];
                let ns = take(ex.sends_of(u), sc[ui]);
                let nr = take(ex.recvs_of(u), rc[ui]);
                let sends = &ex.sends_of(u)[sc[ui]..sc[ui] + ns];
                let recvs = &ex.recvs_of(u)[rc[ui]..rc[ui] + nr];
                sc[ui] += ns;
                rc[ui] += nr;
                let mut recvs = recvs.iter().copied();
                for &s in sends {
                    let sm = ex.msgs[s as usize];
                    let enter = self.now[r as usize];
                    let to = self.rank_of_node[sm.receiver as usize];
                    let copied = enter + ov + self.transfer(sm.bytes);
                    match recvs.next() {
                        Some(m) => {
                            let rm = ex.msgs[m as usize];
                            let ready = self.arrival(self.send_enter[m as usize], rm.bytes).max(enter) + ov;
                            let c = self.call(r, Func::Sendrecv, enter, copied.max(ready));
                            self.p2p(r, c, c, P2pDir::Send, to, sm.tag, sm.bytes);
                            let from = self.rank_of_node[rm.sender as usize];
                            self.p2p(r, c, c, P2pDir::Recv, from, rm.tag, rm.bytes);
                        }
                        None => {
                            let c = self.call(r, Func::Send, enter, copied);
                            self.p2p(r, c, c, P2pDir::Send, to, sm.tag, sm.bytes);
                        }
                    }
                }
                for m in recvs {
                    self.blocking_recv(r, ex.msgs[m as usize], self.send_enter[m as usize]);
                }
            }
        }
    }

    pub(super) fn blocking_recv(&mut self, r: Rank, msg: Msg, sent: Time) {
        let enter = self.now[r as usize];
        let exit = self.arrival(sent, msg.bytes).max(enter) + self.clock.overhead_ns;
        let c = self.call(r, Func::Recv, enter, exit);
        let from = self.rank_of_node[msg.sender as usize];
        self.p2p(r, c, c, P2pDir::Recv, from, msg.tag, msg.bytes);
    }

    pub(super) fn blocking_send(&mut self, r: Rank, msg: Msg) -> Time {
        let enter = self.now[r as usize];
        let exit = enter + self.clock.overhead_ns + self.transfer(msg.bytes);
        let c = self.call(r, Func::Send, enter, exit);
        let to = self.rank_of_node[msg.receiver as usize];
        self.p2p(r, c, c, P2pDir::Send, to, msg.tag, msg.bytes);
        enter
    }

    /// Blocking sends and receives, every rank following the global `order` of the messages.
    pub(super) fn blocking_exchange(&mut self, msgs: &[Msg], order: &[u32]) {
        for &m in order {
            let msg = msgs[m as usize];
            let sent = self.blocking_send(self.rank_of_node[msg.sender as usize], msg);
            self.blocking_recv(self.rank_of_node[msg.receiver as usize], msg, sent);
        }
    }

    /// One LU-like iteration on a 2D grid: the forward sweep in increasing node order, then the
    /// backward sweep in decreasing order (each node's predecessors come first, so every
    /// receive finds its send's time already known).
    pub(super) fn wavefront(&mut self, plan: &PhasePlan) {
        // Direction indices of a 2D Cartesian family: east, west, south, north.
        const EAST: usize = 0;
        const WEST: usize = 1;
        const SOUTH: usize = 2;
        const NORTH: usize = 3;
        let d = plan.d();
        self.send_enter.resize(plan.n as usize * d, 0);
        let sweep = |b: &mut Builder, u: u32, from: [usize; 2], to: [usize; 2]| {
            let r = b.rank_of_node[u as usize];
            // Receive from the neighbour at `dir`: it sent along the opposite direction.
            for (dir, sent_along) in from.into_iter().map(|k| (k, k ^ 1)) {
                if let Some(w) = plan.neighbour(u, dir) {
                    let msg = Msg {
                        sender: w,
                        receiver: u,
                        tag: sent_along as i32,
                        bytes: plan.direction_bytes[sent_along],
                    };
                    let sent = b.send_enter[w as usize * d + sent_along];
                    b.blocking_recv(r, msg, sent);
                }
            }
            b.now[r as usize] += b.compute_time(r, plan.compute_ns);
            for k in to {
                if let Some(v) = plan.neighbour(u, k) {
                    let msg = Msg {
                        sender: u,
                        receiver: v,
                        tag: k as i32,
                        bytes: plan.direction_bytes[k],
                    };
                    b.send_enter[u as usize * d + k] = b.blocking_send(r, msg);
                }
            }
        };
        for u in 0..plan.n {
            sweep(self, u, [NORTH, WEST], [SOUTH, EAST]);
        }
        for u in (0..plan.n).rev() {
            sweep(self, u, [SOUTH, EAST], [NORTH, WEST]);
        }
    }

    /// A collective on `MPI_COMM_WORLD`: everyone leaves together once the last rank has
    /// entered, after `⌈log2 n⌉` rounds of latency plus transfer.
    pub(super) fn collective(&mut self, ranks: &[Rank], op: CollectiveOp, bytes: u64) {
        let rounds = (ranks.len() as u64).next_power_of_two().trailing_zeros() as u64;
        let last = ranks.iter().map(|&r| self.now[r as usize]).max().unwrap_or(0);
        let exit = last + self.clock.overhead_ns + rounds * (self.clock.latency_ns + self.transfer(bytes));
        let root = if op == CollectiveOp::Bcast { 0 } else { NO_ROOT };
        for &r in ranks {
            let c = self.call(r, Func::of_collective(op), self.now[r as usize], exit);
            let (sent, recv) = match op {
                CollectiveOp::Barrier => (0, 0),
                CollectiveOp::Bcast if r == root => (bytes, 0),
                CollectiveOp::Bcast => (0, bytes),
                _ => (bytes, bytes),
            };
            self.trace.push_collective(r, c, op, COMM_WORLD, root, sent, recv);
        }
    }

    /// `MPI_Init` (everyone at their clock) or `MPI_Finalize` (synchronising, like a barrier).
    pub(super) fn lifecycle(&mut self, ranks: &[Rank], f: Func) {
        let last = ranks.iter().map(|&r| self.now[r as usize]).max().unwrap_or(0);
        for &r in ranks {
            let enter = self.now[r as usize];
            let exit = match f {
                Func::Finalize => last + self.clock.overhead_ns,
                _ => enter + self.clock.overhead_ns,
            };
            self.call(r, f, enter, exit);
        }
    }

    pub(super) fn finish_spans(&mut self) {
        for rt in &mut self.trace.ranks {
            if let (Some(a), Some(z)) = (rt.calls.enter.first(), rt.calls.last_exit()) {
                rt.span = Some((a, z));
            }
        }
    }
}
