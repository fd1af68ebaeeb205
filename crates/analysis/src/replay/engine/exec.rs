//! The replay's arithmetic, apart from its traversal. Which rank moves when, which send feeds
//! which receive, which pooled vector holds what: none of it depends on the configurations, so
//! the traversal runs once and emits [`Instr`]uctions whose operands are the same for every
//! configuration (seconds, pooled slots, effective bytes); each [`Clocks`] executes them over
//! its own share of the configurations, in the traversal's order, with the same floating-point
//! operations in the same order as a replay that interleaves the two.

use super::clock::*;
use super::{CLOCK, COMPUTE, NIC, ROWS};
use crate::replay::network::Configuration;

/// Instructions emitted between two hand-overs to the executors (about 1 MB).
pub(super) const CHUNK: usize = 32 * 1024;

/// One step of one rank's clocks; `r` indexes the ranks the engine replays, `slot` the pool.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Instr {
    /// Computation: the clock and the compute term advance by `dt` seconds.
    Compute { r: u32, dt: f64 },
    /// Dropped communication kept at its recorded duration: the clock only.
    Frozen { r: u32, dt: f64 },
    /// A send posted: `slot` takes the clock, then the injection start ([`inject`]).
    Post { r: u32, slot: u32, eff: f64 },
    /// A send completed, its injection start in `slot` ([`complete_send`]).
    CompleteSend { r: u32, slot: u32, eff: f64 },
    /// A receive completed, its send's injection start in `slot` ([`complete_recv`]).
    CompleteRecv { r: u32, slot: u32, eff: f64 },
    /// The first arrival at a collective instance: `slot` takes the clock.
    Open { r: u32, slot: u32 },
    /// A later arrival: `slot` keeps the latest clock.
    Join { r: u32, slot: u32 },
    /// Leaving a completed instance whose latest arrival is in `slot` ([`apply_collective`]).
    Leave { r: u32, slot: u32, steps: f64, eff: f64 },
}

/// The K clocks of every rank replayed and the pooled K-vectors (send times, collective
/// starts), for one share of the configurations.
pub(crate) struct Clocks {
    k: usize,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    /// `ranks × ROWS × K`: per rank its clock, the four terms and its interface's free time
    /// (the compute term is kept in `compute` until [`Clocks::into_state`]).
    state: Vec<f64>,
    /// Per rank its compute term, the same under every configuration.
    compute: Vec<f64>,
    pool: Vec<f64>,
    recv: RecvCosts,
}

/// The receive costs of the sizes seen last ([`recv_costs`]), in a direct-mapped cache of
/// [`RecvCosts::WAYS`] sizes: a trace sends a few sizes over and over, and the costs are
/// recomputed, to the same bits, when a size comes back after another took its place.
struct RecvCosts {
    /// Per entry the effective bytes' bits (none when empty), then `K` costs and `K` shares.
    key: Vec<Option<u64>>,
    costs: Vec<f64>,
}

impl RecvCosts {
    const WAYS: usize = 64;

    fn new(k: usize) -> RecvCosts {
        RecvCosts {
            key: vec![None; Self::WAYS],
            costs: vec![0.0; Self::WAYS * 2 * k],
        }
    }

    /// The costs and shares of `eff` effective bytes.
    #[inline(always)]
    fn get(&mut self, alpha: &[f64], beta: &[f64], eff: f64) -> (&[f64], &[f64]) {
        let k = alpha.len();
        let bits = eff.to_bits();
        let way = ((bits ^ (bits >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize % Self::WAYS;
        let entry = &mut self.costs[way * 2 * k..(way + 1) * 2 * k];
        let (cost, share) = entry.split_at_mut(k);
        if self.key[way] != Some(bits) {
            self.key[way] = Some(bits);
            recv_costs(alpha, beta, eff, cost, share);
        }
        (cost, share)
    }
}

impl Clocks {
    /// Clocks at 0 for `ranks` ranks under `configs`.
    pub(crate) fn new(configs: &[Configuration], ranks: usize) -> Clocks {
        let k = configs.len();
        Clocks {
            k,
            alpha: configs.iter().map(|c| c.latency_s).collect(),
            beta: configs.iter().map(|c| 1.0 / c.bandwidth_bytes_per_s).collect(),
            state: vec![0.0; ranks * ROWS * k],
            compute: vec![0.0; ranks],
            pool: Vec::new(),
            recv: RecvCosts::new(k),
        }
    }

    /// The final state, `ranks × ROWS × K` (per rank its clock, the four terms and its
    /// interface's free time).
    pub(crate) fn into_state(mut self) -> Vec<f64> {
        let k = self.k;
        for (r, &c) in self.compute.iter().enumerate() {
            let at = r * ROWS * k + COMPUTE * k;
            self.state[at..at + k].fill(c);
        }
        self.state
    }

    /// Configurations replayed.
    pub(crate) fn k(&self) -> usize {
        self.k
    }

    /// Execute `chunk` in order (with 256-bit vectors where the CPU has them: the same
    /// elementwise IEEE operations, so the same bits).
    pub(crate) fn run(&mut self, chunk: &[Instr]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            unsafe { self.run_avx2(chunk) };
            return;
        }
        for i in chunk {
            self.apply(i);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2(&mut self, chunk: &[Instr]) {
        for i in chunk {
            self.apply(i);
        }
    }

    /// The pooled vector `s`.
    pub(crate) fn slot(&self, s: u32) -> &[f64] {
        let at = s as usize * self.k;
        &self.pool[at..at + self.k]
    }

    /// Pooled vector `s` set to `v` (a value another process sent).
    pub(crate) fn set_slot(&mut self, s: u32, v: &[f64]) {
        Self::slot_in(&mut self.pool, self.k, s).copy_from_slice(v);
    }

    /// Pooled vector `s` raised to `v` elementwise.
    pub(crate) fn max_slot(&mut self, s: u32, v: &[f64]) {
        max_into(Self::slot_in(&mut self.pool, self.k, s), v);
    }

    #[inline(always)]
    fn slot_in(pool: &mut Vec<f64>, k: usize, s: u32) -> &mut [f64] {
        let at = s as usize * k;
        if pool.len() < at + k {
            pool.resize(at + k, 0.0);
        }
        &mut pool[at..at + k]
    }

    /// The K-vectors of rank `r`: clock, compute, wait, latency, bandwidth, interface free time.
    #[inline(always)]
    fn terms(state: &mut [f64], k: usize, r: u32) -> [&mut [f64]; ROWS] {
        let r = r as usize;
        let block = &mut state[r * ROWS * k..(r + 1) * ROWS * k];
        let (clock, rest) = block.split_at_mut(k);
        let (compute, rest) = rest.split_at_mut(k);
        let (wait, rest) = rest.split_at_mut(k);
        let (latency, rest) = rest.split_at_mut(k);
        let (bandwidth, nic) = rest.split_at_mut(k);
        [clock, compute, wait, latency, bandwidth, nic]
    }

    #[inline(always)]
    pub(crate) fn apply(&mut self, i: &Instr) {
        let k = self.k;
        match *i {
            Instr::Compute { r, dt } => {
                let at = r as usize * ROWS * k;
                advance_clock(&mut self.state[at..at + k], dt);
                self.compute[r as usize] += dt;
            }
            Instr::Frozen { r, dt } => {
                let [clock, ..] = Self::terms(&mut self.state, k, r);
                advance_clock(clock, dt);
            }
            Instr::Post { r, slot, eff } => {
                let at = r as usize * ROWS * k;
                let start = Self::slot_in(&mut self.pool, k, slot);
                start.copy_from_slice(&self.state[at + CLOCK * k..at + (CLOCK + 1) * k]);
                inject(
                    start,
                    &mut self.state[at + NIC * k..at + (NIC + 1) * k],
                    &self.beta,
                    eff,
                );
            }
            Instr::CompleteSend { r, slot, eff } => {
                let [clock, _, _, _, bandwidth, _] = Self::terms(&mut self.state, k, r);
                complete_send(
                    clock,
                    bandwidth,
                    Self::slot_in(&mut self.pool, k, slot),
                    &self.beta,
                    eff,
                );
            }
            Instr::CompleteRecv { r, slot, eff } => {
                let [clock, _, wait, latency, bandwidth, _] = Self::terms(&mut self.state, k, r);
                let sent = Self::slot_in(&mut self.pool, k, slot);
                let (cost, share) = self.recv.get(&self.alpha, &self.beta, eff);
                complete_recv(clock, wait, latency, bandwidth, sent, cost, share);
            }
            Instr::Open { r, slot } => {
                let at = r as usize * ROWS * k;
                Self::slot_in(&mut self.pool, k, slot).copy_from_slice(&self.state[at..at + k]);
            }
            Instr::Join { r, slot } => {
                let at = r as usize * ROWS * k;
                max_into(Self::slot_in(&mut self.pool, k, slot), &self.state[at..at + k]);
            }
            Instr::Leave { r, slot, steps, eff } => {
                let [clock, _, wait, latency, bandwidth, _] = Self::terms(&mut self.state, k, r);
                let start = Self::slot_in(&mut self.pool, k, slot);
                apply_collective(
                    clock,
                    wait,
                    latency,
                    bandwidth,
                    start,
                    &self.alpha,
                    &self.beta,
                    steps,
                    eff,
                );
            }
        }
    }
}

/// Where the traversal's instructions go: executed at once (a replay by parts, which must
/// read pooled values to send them) or gathered for executors over shares of the
/// configurations.
pub(super) enum Out {
    Now(Clocks),
    Gather(Vec<Instr>),
}

impl Out {
    #[inline]
    pub(super) fn emit(&mut self, i: Instr) {
        match self {
            Out::Now(c) => c.apply(&i),
            Out::Gather(v) => v.push(i),
        }
    }

    /// The clocks of an engine that executes as it goes.
    pub(super) fn now(&mut self) -> &mut Clocks {
        match self {
            Out::Now(c) => c,
            Out::Gather(_) => unreachable!("a replay by parts executes as it goes"),
        }
    }
}

/// Pooled K-vector slots handed out through a free list, so the replay pools a vector per
/// message in flight, never per configuration; the values live in each [`Clocks`].
#[derive(Default)]
pub(super) struct Slots {
    refs: Vec<u8>,
    free: Vec<u32>,
    pub(super) peak: usize,
}

impl Slots {
    pub(super) fn alloc(&mut self, refs: u8) -> u32 {
        if let Some(s) = self.free.pop() {
            self.refs[s as usize] = refs;
            s
        } else {
            self.refs.push(refs);
            self.peak = self.peak.max(self.refs.len());
            (self.refs.len() - 1) as u32
        }
    }
    pub(super) fn release(&mut self, s: u32) {
        let r = &mut self.refs[s as usize];
        *r = r.saturating_sub(1);
        if *r == 0 {
            self.free.push(s);
        }
    }
}
