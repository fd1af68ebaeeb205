//! Turning a [`Spec`] into a [`Trace`] and its [`Truth`].

use crate::numbering;
use crate::rng::SplitMix64;
use crate::spec::{topology_string, Clock, Phase, Spec, Style};
use crate::truth::{NoiseLink, PhaseTruth, Truth};
use tracelogic_graph::{Direction, Family, TopologySpec};
use tracelogic_model::{
    CallIdx, CallKind, CollectiveOp, FuncId, Location, P2pDir, Rank, Time, Trace, COMM_WORLD, NOT_COMPLETED,
    NO_CALLPATH, NO_ROOT,
};

/// The most calls (or neighbour-table entries) one generation may produce: about 6 GB of trace.
const MAX_CALLS: u64 = 200_000_000;
/// The most ranks a trace may have (an empty rank already costs about 500 bytes).
const MAX_RANKS: u32 = 1 << 20;
/// The latest time the clock model may reach, far below `u64::MAX` so no sum can overflow.
const MAX_TIME: f64 = (1u64 << 62) as f64;
/// Tag of the noise messages (no pattern message shares a sender and receiver with them).
pub(crate) const NOISE_TAG: i32 = 32767;
/// "No neighbour" in a neighbour table.
const NONE: u32 = u32::MAX;

/// Random-stream ids, so that changing one feature never reshuffles another.
const STREAM_NUMBERING: u64 = 1;
const STREAM_IMBALANCE: u64 = 2;
const STREAM_NOISE: u64 = 3;

/// Generate the trace of `spec` together with its ground truth.
pub fn generate_with_truth(spec: &Spec) -> Result<(Trace, Truth), String> {
    let plans = plan_phases(spec)?;
    let ranks = plans.iter().map(|p| p.n).max().unwrap_or(0);
    if ranks == 0 {
        return Err("the program has no ranks".into());
    }
    check_size(spec, &plans, ranks)?;

    let node_of_rank =
        numbering::node_of_rank(spec.numbering, ranks, &mut SplitMix64::new(spec.seed, STREAM_NUMBERING));
    let mut rank_of_node = vec![0u32; ranks as usize];
    for (r, &u) in node_of_rank.iter().enumerate() {
        rank_of_node[u as usize] = r as u32;
    }
    let compute_factor: Vec<f64> = if spec.imbalance > 0.0 {
        let mut rng = SplitMix64::new(spec.seed, STREAM_IMBALANCE);
        (0..ranks).map(|_| 1.0 + spec.imbalance * rng.unit()).collect()
    } else {
        Vec::new()
    };

    let source = format!("generated:{}", topology_string(&spec.topology));
    let mut b = Builder::new(
        Trace::new("generated", &source, ranks),
        spec.clock,
        rank_of_node,
        compute_factor,
    );
    // One thread per rank; id 0 is its thread number (the OTF2 writer renumbers ids globally).
    for rt in &mut b.trace.ranks {
        rt.locations.push(Location {
            id: 0,
            name: "Master thread".into(),
        });
    }
    b.trace.meta.push(("generator".into(), "tracelogic-synth".into()));
    b.trace.meta.push(("clock resolution".into(), "1 ns".into()));
    b.trace.meta.push((
        "spec".into(),
        serde_json::to_string(spec).map_err(|e| format!("cannot encode the spec: {e}"))?,
    ));

    let all: Vec<Rank> = (0..ranks).collect();
    b.lifecycle(&all, Func::Init);
    let mut noise_rng = SplitMix64::new(spec.seed, STREAM_NOISE);
    let mut phases = Vec::with_capacity(plans.len());
    for plan in &plans {
        let first_call: Vec<usize> = b.trace.ranks.iter().map(|r| r.calls.len()).collect();
        let noise = plan_noise(spec, plan, &mut noise_rng);
        let pattern = plan.messages();
        let order = (plan.style == Style::Blocking).then(|| plan.blocking_order(&pattern));
        let (pattern_ex, noise_ex) = (Exchange::new(plan.n, &pattern), Exchange::new(plan.n, &noise));
        for it in 0..plan.iterations {
            match plan.style {
                Style::Isend => {
                    b.compute(plan);
                    b.isend_exchange(&pattern_ex);
                }
                Style::Sendrecv => {
                    b.compute(plan);
                    b.sendrecv_exchange(&pattern_ex);
                }
                Style::Blocking => {
                    b.compute(plan);
                    b.blocking_exchange(&pattern, order.as_deref().unwrap_or(&[]));
                }
                Style::Wavefront => b.wavefront(plan),
            }
            if !noise.is_empty() {
                b.isend_exchange(&noise_ex);
            }
            for c in &spec.collectives {
                if (it + 1) % c.every == 0 {
                    b.collective(&all, c.op, c.bytes);
                }
            }
        }
        phases.push(phase_truth(&b, plan, &first_call, &pattern, &noise));
    }
    b.lifecycle(&all, Func::Finalize);
    b.finish_spans();

    let trace = b.trace;
    let truth = Truth {
        spec: spec.clone(),
        ranks,
        moved_ranks: node_of_rank.iter().enumerate().filter(|&(r, &u)| r as u32 != u).count() as u32,
        node_of_rank,
        compute_factor: b.compute_factor,
        calls: trace.num_calls(),
        messages: trace
            .ranks
            .iter()
            .map(|r| r.p2p.dir.iter().filter(|&&d| d == P2pDir::Send).count() as u64)
            .sum(),
        phases,
    };
    Ok((trace, truth))
}

/// A phase with every field resolved and its neighbour table built.
struct PhasePlan {
    topology: TopologySpec,
    n: u32,
    iterations: u32,
    /// Main message size (noise sizes derive from it).
    bytes: u64,
    compute_ns: u64,
    style: Style,
    directions: Vec<Direction>,
    /// Bytes of a message sent along each direction.
    direction_bytes: Vec<u64>,
    /// `table[u × D + k]`: neighbour of node u along direction k, or [`NONE`].
    table: Vec<u32>,
}

impl PhasePlan {
    fn d(&self) -> usize {
        self.directions.len()
    }

    fn neighbour(&self, u: u32, k: usize) -> Option<u32> {
        let v = self.table[u as usize * self.d() + k];
        (v != NONE).then_some(v)
    }

    /// The pattern's messages of one iteration (in node numbers): along every direction that
    /// has a neighbour, tagged with the direction's index.
    fn messages(&self) -> Vec<Msg> {
        let mut out = Vec::new();
        for u in 0..self.n {
            for k in 0..self.d() {
                if let Some(v) = self.neighbour(u, k) {
                    out.push(Msg {
                        sender: u,
                        receiver: v,
                        tag: k as i32,
                        bytes: self.direction_bytes[k],
                    });
                }
            }
        }
        out
    }

    /// A global order of `msgs` (indices) by (direction, parity class of the sender, sender):
    /// every rank doing its blocking sends and receives in this order cannot deadlock, and the
    /// parity classes let half of each direction's messages go at once, as red-black codes do.
    fn blocking_order(&self, msgs: &[Msg]) -> Vec<u32> {
        let mut keyed: Vec<(i32, u32, u32, u32)> = msgs
            .iter()
            .enumerate()
            .map(|(i, m)| (m.tag, self.parity(m.sender, m.tag as usize), m.sender, i as u32))
            .collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, _, _, i)| i).collect()
    }

    fn parity(&self, u: u32, k: usize) -> u32 {
        match &self.directions[k] {
            Direction::Offset(o) => {
                let dim = o.iter().position(|&x| x != 0).unwrap_or(0);
                self.topology.coords(u)[dim] % 2
            }
            Direction::Bit(b) => (u >> b) & 1,
            Direction::Parent | Direction::Child(_) => self.topology.coords(u).first().copied().unwrap_or(u) % 2,
            // Any class is deadlock-free (the order stays total); parity only adds parallelism.
            _ => u % 2,
        }
    }
}

/// One point-to-point message, in node numbers.
#[derive(Debug, Clone, Copy)]
struct Msg {
    sender: u32,
    receiver: u32,
    tag: i32,
    bytes: u64,
}

/// Messages grouped by sender and by receiver, for the exchange styles.
struct Exchange {
    /// `sends[send_off[u]..send_off[u+1]]`: message ids sent by node u, by tag.
    send_off: Vec<u32>,
    sends: Vec<u32>,
    /// `recvs[recv_off[u]..recv_off[u+1]]`: message ids received by node u, by (tag, sender).
    recv_off: Vec<u32>,
    recvs: Vec<u32>,
    msgs: Vec<Msg>,
}

impl Exchange {
    fn new(n: u32, msgs: &[Msg]) -> Exchange {
        let group = |key: &dyn Fn(&Msg) -> (u32, i32, u32)| {
            let mut ids: Vec<u32> = (0..msgs.len() as u32).collect();
            ids.sort_unstable_by_key(|&i| key(&msgs[i as usize]));
            let mut off = vec![0u32; n as usize + 1];
            for &i in &ids {
                off[key(&msgs[i as usize]).0 as usize + 1] += 1;
            }
            for u in 0..n as usize {
                off[u + 1] += off[u];
            }
            (off, ids)
        };
        let (send_off, sends) = group(&|m| (m.sender, m.tag, m.receiver));
        let (recv_off, recvs) = group(&|m| (m.receiver, m.tag, m.sender));
        Exchange {
            send_off,
            sends,
            recv_off,
            recvs,
            msgs: msgs.to_vec(),
        }
    }

    fn n(&self) -> u32 {
        (self.send_off.len() - 1) as u32
    }

    fn sends_of(&self, u: u32) -> &[u32] {
        &self.sends[self.send_off[u as usize] as usize..self.send_off[u as usize + 1] as usize]
    }

    fn recvs_of(&self, u: u32) -> &[u32] {
        &self.recvs[self.recv_off[u as usize] as usize..self.recv_off[u as usize + 1] as usize]
    }
}

/// The MPI functions the generator calls.
#[derive(Debug, Clone, Copy)]
enum Func {
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

    fn name(self) -> &'static str {
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

    fn of_collective(op: CollectiveOp) -> Func {
        match op {
            CollectiveOp::Barrier => Func::Barrier,
            CollectiveOp::Bcast => Func::Bcast,
            _ => Func::Allreduce,
        }
    }
}

/// Appends calls to the trace's columns and keeps every rank's clock.
struct Builder {
    trace: Trace,
    clock: Clock,
    /// Current time of each world rank: when its next call may start.
    now: Vec<Time>,
    rank_of_node: Vec<Rank>,
    compute_factor: Vec<f64>,
    funcs: [Option<(FuncId, CallKind)>; Func::COUNT],
    /// Entry time of each message's send, indexed by message id (reused between exchanges).
    send_enter: Vec<Time>,
}

impl Builder {
    fn new(trace: Trace, clock: Clock, rank_of_node: Vec<Rank>, compute_factor: Vec<f64>) -> Builder {
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
    fn transfer(&self, bytes: u64) -> Time {
        (bytes as f64 / self.clock.bandwidth).ceil() as Time
    }

    /// When a message sent at `sent` arrives.
    fn arrival(&self, sent: Time, bytes: u64) -> Time {
        sent + self.clock.latency_ns + self.transfer(bytes)
    }

    fn call(&mut self, r: Rank, f: Func, enter: Time, exit: Time) -> CallIdx {
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
        c.exit.push(exit);
        c.callpath.push(NO_CALLPATH);
        c.location.push(0);
        self.now[r as usize] = exit;
        idx
    }

    #[allow(clippy::too_many_arguments)]
    fn p2p(&mut self, r: Rank, post: CallIdx, complete: CallIdx, dir: P2pDir, peer: Rank, tag: i32, bytes: u64) {
        let p = &mut self.trace.ranks[r as usize].p2p;
        p.post.push(post);
        p.complete.push(complete);
        p.dir.push(dir);
        p.peer.push(peer);
        p.tag.push(tag);
        p.comm.push(COMM_WORLD);
        p.bytes.push(bytes);
    }

    fn compute(&mut self, plan: &PhasePlan) {
        for u in 0..plan.n {
            let r = self.rank_of_node[u as usize];
            self.now[r as usize] += self.compute_time(r, plan.compute_ns);
        }
    }

    fn compute_time(&self, r: Rank, ns: u64) -> Time {
        match self.compute_factor.get(r as usize) {
            Some(f) => (ns as f64 * f).round() as Time,
            None => ns,
        }
    }

    /// Irecv from every sender, Isend to every receiver, then one Waitall completing them.
    fn isend_exchange(&mut self, ex: &Exchange) {
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
            for c in &mut p.complete[first_op[u as usize]..] {
                *c = wait;
            }
        }
    }

    /// Per tag (direction), in increasing order: `MPI_Sendrecv` pairing the send along the
    /// direction with the first receive of that tag, `MPI_Send` / `MPI_Recv` for an unpaired
    /// side, further receives of the same tag as `MPI_Recv`.
    fn sendrecv_exchange(&mut self, ex: &Exchange) {
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

    fn blocking_recv(&mut self, r: Rank, msg: Msg, sent: Time) {
        let enter = self.now[r as usize];
        let exit = self.arrival(sent, msg.bytes).max(enter) + self.clock.overhead_ns;
        let c = self.call(r, Func::Recv, enter, exit);
        let from = self.rank_of_node[msg.sender as usize];
        self.p2p(r, c, c, P2pDir::Recv, from, msg.tag, msg.bytes);
    }

    fn blocking_send(&mut self, r: Rank, msg: Msg) -> Time {
        let enter = self.now[r as usize];
        let exit = enter + self.clock.overhead_ns + self.transfer(msg.bytes);
        let c = self.call(r, Func::Send, enter, exit);
        let to = self.rank_of_node[msg.receiver as usize];
        self.p2p(r, c, c, P2pDir::Send, to, msg.tag, msg.bytes);
        enter
    }

    /// Blocking sends and receives, every rank following the global `order` of the messages.
    fn blocking_exchange(&mut self, msgs: &[Msg], order: &[u32]) {
        for &m in order {
            let msg = msgs[m as usize];
            let sent = self.blocking_send(self.rank_of_node[msg.sender as usize], msg);
            self.blocking_recv(self.rank_of_node[msg.receiver as usize], msg, sent);
        }
    }

    /// One LU-like iteration on a 2D grid: the forward sweep in increasing node order, then the
    /// backward sweep in decreasing order (each node's predecessors come first, so every
    /// receive finds its send's time already known).
    fn wavefront(&mut self, plan: &PhasePlan) {
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
    fn collective(&mut self, ranks: &[Rank], op: CollectiveOp, bytes: u64) {
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
    fn lifecycle(&mut self, ranks: &[Rank], f: Func) {
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

    fn finish_spans(&mut self) {
        for rt in &mut self.trace.ranks {
            if let (Some(&a), Some(&z)) = (rt.calls.enter.first(), rt.calls.exit.last()) {
                rt.span = Some((a, z));
            }
        }
    }
}

/// Resolve the phases of `spec` (one phase made of the spec itself when it lists none).
fn plan_phases(spec: &Spec) -> Result<Vec<PhasePlan>, String> {
    if !(spec.clock.bandwidth.is_finite() && spec.clock.bandwidth > 0.0) {
        return Err(format!("bandwidth must be positive, got {}", spec.clock.bandwidth));
    }
    if !(spec.imbalance.is_finite() && spec.imbalance >= 0.0) {
        return Err(format!("imbalance must be 0 or more, got {}", spec.imbalance));
    }
    if let Some(c) = spec.collectives.iter().find(|c| c.every == 0) {
        return Err(format!("collective {:?}: the period must be at least 1", c.op));
    }
    if let Some(n) = &spec.noise {
        if !((0.0..=1.0).contains(&n.fraction) && n.percent.is_finite() && n.percent >= 0.0) {
            return Err(format!("noise {n}: fraction must be in [0, 1] and percent 0 or more"));
        }
    }
    let single = [Phase::default()];
    let phases: &[Phase] = if spec.phases.is_empty() { &single } else { &spec.phases };
    let mut used_keys = vec![false; spec.direction_bytes.len()];
    let mut plans = Vec::with_capacity(phases.len());
    for (i, ph) in phases.iter().enumerate() {
        let ctx = |e: String| {
            if spec.phases.is_empty() {
                e
            } else {
                format!("phase {}: {e}", i + 1)
            }
        };
        let topology = ph.topology.clone().unwrap_or_else(|| spec.topology.clone());
        let style = ph.style.unwrap_or(spec.style);
        if style == Style::Wavefront && !(topology.family == Family::Grid && topology.dims.len() == 2) {
            return Err(ctx(format!(
                "the wavefront style needs a 2D grid (e.g. grid:8x8), got {}",
                topology_string(&topology)
            )));
        }
        let n = topology.num_nodes();
        if n > MAX_RANKS {
            return Err(ctx(format!(
                "{} has {n} nodes; the generator stops at {MAX_RANKS} ranks",
                topology.label()
            )));
        }
        let directions = topology.directions();
        let iterations = ph.iterations.unwrap_or(spec.iterations);
        // Two calls per neighbour slot and iteration at most: checked before the table exists.
        let slots = n as u64 * directions.len() as u64;
        if slots.saturating_mul(2 * iterations.max(1) as u64) > MAX_CALLS {
            return Err(ctx(format!(
                "{} with {iterations} iterations could need {} calls, more than the generator's limit of {MAX_CALLS}",
                topology.label(),
                slots.saturating_mul(2 * iterations.max(1) as u64)
            )));
        }
        let bytes = ph.bytes.unwrap_or(spec.bytes);
        let mut direction_bytes = vec![bytes; directions.len()];
        let names: Vec<String> = directions.iter().map(Direction::name).collect();
        if let Some(map) = &ph.direction_bytes {
            for (name, &b) in map {
                let k = names.iter().position(|x| x == name).ok_or_else(|| {
                    ctx(format!(
                        "{} has no direction `{name}` (its directions: {})",
                        topology.label(),
                        names.join(", ")
                    ))
                })?;
                direction_bytes[k] = b;
            }
        } else {
            for (j, (name, &b)) in spec.direction_bytes.iter().enumerate() {
                if let Some(k) = names.iter().position(|x| x == name) {
                    direction_bytes[k] = b;
                    used_keys[j] = true;
                }
            }
        }
        let mut table = vec![NONE; n as usize * directions.len()];
        for u in 0..n {
            for (k, dir) in directions.iter().enumerate() {
                if let Some(v) = topology.neighbour(u, dir) {
                    table[u as usize * directions.len() + k] = v;
                }
            }
        }
        plans.push(PhasePlan {
            n,
            iterations,
            bytes,
            compute_ns: ph.compute_ns.unwrap_or(spec.compute_ns),
            style,
            directions,
            direction_bytes,
            table,
            topology,
        });
    }
    if let Some((name, _)) = spec
        .direction_bytes
        .iter()
        .zip(&used_keys)
        .find(|(_, &used)| !used)
        .map(|(kv, _)| kv)
    {
        let all: Vec<String> = plans
            .iter()
            .flat_map(|p| p.directions.iter().map(Direction::name))
            .collect();
        return Err(format!(
            "no phase's topology has a direction `{name}` (directions: {})",
            all.join(", ")
        ));
    }
    Ok(plans)
}

/// Refuse specs whose trace would not fit in memory, before allocating it.
fn check_size(spec: &Spec, plans: &[PhasePlan], ranks: u32) -> Result<(), String> {
    let mut calls: u64 = 4 * ranks as u64;
    for p in plans {
        let per_iter = 2 * p.table.iter().filter(|&&v| v != NONE).count() as u64
            + 2 * p.n as u64
            + spec.collectives.len() as u64 * ranks as u64;
        calls = calls.saturating_add(per_iter.saturating_mul(p.iterations as u64));
    }
    if calls > MAX_CALLS {
        return Err(format!(
            "this spec would generate about {calls} calls; the generator stops at {MAX_CALLS} \
             (fewer iterations or a smaller topology)"
        ));
    }
    // Every clock advance is a compute step or a call lasting at most o + 32·(L + x(b)) (32
    // collective rounds cover 2^32 ranks), so this bounds the last timestamp.
    let c = &spec.clock;
    let noise_pct = spec.noise.map_or(0.0, |n| n.percent / 100.0);
    let max_bytes = plans
        .iter()
        .flat_map(|p| {
            p.direction_bytes
                .iter()
                .map(|&b| b as f64)
                .chain([p.bytes as f64 * noise_pct.max(1.0)])
        })
        .chain(spec.collectives.iter().map(|c| c.bytes as f64))
        .fold(0.0, f64::max);
    let per_call = c.overhead_ns as f64 + 32.0 * (c.latency_ns as f64 + max_bytes / c.bandwidth + 1.0);
    let compute: f64 = plans
        .iter()
        .map(|p| 2.0 * p.iterations as f64 * p.compute_ns as f64 * (1.0 + spec.imbalance))
        .sum();
    let bound = calls as f64 * per_call + compute;
    if bound.is_nan() || bound >= MAX_TIME {
        return Err(format!(
            "the simulated clock could pass 2^62 ns (about {bound:.3e} ns): use less compute time, smaller \
             messages, fewer iterations or a higher bandwidth"
        ));
    }
    Ok(())
}

/// Choose the noise links of a phase: `round(fraction × n)` senders, each with one fixed random
/// receiver that is neither itself nor a topology neighbour (senders without any such node are
/// skipped).
fn plan_noise(spec: &Spec, plan: &PhasePlan, rng: &mut SplitMix64) -> Vec<Msg> {
    let Some(noise) = spec.noise else {
        return Vec::new();
    };
    let n = plan.n;
    let count = ((noise.fraction * n as f64).round() as usize).min(n as usize);
    let bytes = ((plan.bytes as f64 * noise.percent / 100.0).round() as u64).max(1);
    let mut senders: Vec<u32> = (0..n).collect();
    rng.shuffle(&mut senders);
    senders.truncate(count);
    senders.sort_unstable();
    let d = plan.d();
    let is_far = |u: u32, v: u32| v != u && !plan.table[u as usize * d..(u as usize + 1) * d].contains(&v);
    let mut out = Vec::with_capacity(count);
    for u in senders {
        let mut pick = None;
        for _ in 0..64 {
            let v = rng.below(n as u64) as u32;
            if is_far(u, v) {
                pick = Some(v);
                break;
            }
        }
        if pick.is_none() {
            let start = rng.below(n as u64) as u32;
            pick = (0..n).map(|i| (start + i) % n).find(|&v| is_far(u, v));
        }
        if let Some(v) = pick {
            out.push(Msg {
                sender: u,
                receiver: v,
                tag: NOISE_TAG,
                bytes,
            });
        }
    }
    out
}

fn phase_truth(b: &Builder, plan: &PhasePlan, first_call: &[usize], pattern: &[Msg], noise: &[Msg]) -> PhaseTruth {
    let mut start = Time::MAX;
    let mut end = 0;
    for (rt, &first) in b.trace.ranks.iter().zip(first_call) {
        if rt.calls.len() > first {
            start = start.min(rt.calls.enter[first]);
            end = end.max(*rt.calls.exit.last().unwrap_or(&0));
        }
    }
    // Every style sends each pattern message once per iteration (the wavefront's two sweeps
    // together cover all four directions).
    let per_iteration = pattern.len() as u64;
    PhaseTruth {
        topology: plan.topology.clone(),
        label: plan.topology.label(),
        style: plan.style,
        iterations: plan.iterations,
        bytes: plan.bytes,
        start_ns: if start == Time::MAX { 0 } else { start },
        end_ns: end,
        messages: per_iteration * plan.iterations as u64,
        noise: noise
            .iter()
            .map(|m| NoiseLink {
                sender: b.rank_of_node[m.sender as usize],
                receiver: b.rank_of_node[m.receiver as usize],
                bytes: m.bytes,
            })
            .collect(),
    }
}
