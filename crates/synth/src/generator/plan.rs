//! The phases of a spec resolved into plans: neighbour tables, message lists, noise.

use crate::rng::SplitMix64;
use crate::spec::{topology_string, Phase, Spec, Style};
use tracelogic_graph::{Direction, Family, TopologySpec};

use super::*;

/// A phase with every field resolved and its neighbour table built.
pub(super) struct PhasePlan {
    pub(super) topology: TopologySpec,
    pub(super) n: u32,
    pub(super) iterations: u32,
    /// Main message size (noise sizes derive from it).
    pub(super) bytes: u64,
    pub(super) compute_ns: u64,
    pub(super) style: Style,
    pub(super) directions: Vec<Direction>,
    /// Bytes of a message sent along each direction.
    pub(super) direction_bytes: Vec<u64>,
    /// `table[u × D + k]`: neighbour of node u along direction k, or [`NONE`].
    pub(super) table: Vec<u32>,
}

impl PhasePlan {
    pub(super) fn d(&self) -> usize {
        self.directions.len()
    }

    pub(super) fn neighbour(&self, u: u32, k: usize) -> Option<u32> {
        let v = self.table[u as usize * self.d() + k];
        (v != NONE).then_some(v)
    }

    /// The pattern's messages of one iteration (in node numbers): along every direction that
    /// has a neighbour, tagged with the direction's index.
    pub(super) fn messages(&self) -> Vec<Msg> {
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
    pub(super) fn blocking_order(&self, msgs: &[Msg]) -> Vec<u32> {
        let mut keyed: Vec<(i32, u32, u32, u32)> = msgs
            .iter()
            .enumerate()
            .map(|(i, m)| (m.tag, self.parity(m.sender, m.tag as usize), m.sender, i as u32))
            .collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, _, _, i)| i).collect()
    }

    pub(super) fn parity(&self, u: u32, k: usize) -> u32 {
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
pub(super) struct Msg {
    pub(super) sender: u32,
    pub(super) receiver: u32,
    pub(super) tag: i32,
    pub(super) bytes: u64,
}

/// Messages grouped by sender and by receiver, for the exchange styles.
pub(super) struct Exchange {
    /// `sends[send_off[u]..send_off[u+1]]`: message ids sent by node u, by tag.
    pub(super) send_off: Vec<u32>,
    pub(super) sends: Vec<u32>,
    /// `recvs[recv_off[u]..recv_off[u+1]]`: message ids received by node u, by (tag, sender).
    pub(super) recv_off: Vec<u32>,
    pub(super) recvs: Vec<u32>,
    pub(super) msgs: Vec<Msg>,
}

impl Exchange {
    pub(super) fn new(n: u32, msgs: &[Msg]) -> Exchange {
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

    pub(super) fn n(&self) -> u32 {
        (self.send_off.len() - 1) as u32
    }

    pub(super) fn sends_of(&self, u: u32) -> &[u32] {
        &self.sends[self.send_off[u as usize] as usize..self.send_off[u as usize + 1] as usize]
    }

    pub(super) fn recvs_of(&self, u: u32) -> &[u32] {
        &self.recvs[self.recv_off[u as usize] as usize..self.recv_off[u as usize + 1] as usize]
    }
}

/// Resolve the phases of `spec` (one phase made of the spec itself when it lists none).
pub(super) fn plan_phases(spec: &Spec) -> Result<Vec<PhasePlan>, String> {
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
pub(super) fn check_size(spec: &Spec, plans: &[PhasePlan], ranks: u32) -> Result<(), String> {
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
pub(super) fn plan_noise(spec: &Spec, plan: &PhasePlan, rng: &mut SplitMix64) -> Vec<Msg> {
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
