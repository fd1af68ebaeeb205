//! Turning a [`Spec`] into a [`Trace`] and its [`Truth`].

use crate::numbering;
use crate::rng::SplitMix64;
use crate::spec::{topology_string, Spec, Style};
use crate::truth::{NoiseLink, PhaseTruth, Truth};
use tracelogic_model::{Location, P2pDir, Rank, Time, Trace};

mod builder;
mod plan;

use builder::*;
use plan::*;

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

fn phase_truth(b: &Builder, plan: &PhasePlan, first_call: &[usize], pattern: &[Msg], noise: &[Msg]) -> PhaseTruth {
    let mut start = Time::MAX;
    let mut end = 0;
    for (rt, &first) in b.trace.ranks.iter().zip(first_call) {
        if rt.calls.len() > first {
            start = start.min(rt.calls.enter(first));
            end = end.max(rt.calls.last_exit().unwrap_or(0));
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
