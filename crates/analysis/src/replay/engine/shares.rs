//! The configurations cut into per-core shares, one engine each (the configurations never meet,
//! so the shares' results concatenated are bit for bit those of one engine).

use super::clock::ns_to_s;
use super::Engine;
use crate::replay::network::{Configuration, MessageTable};
use crate::replay::{DroppedCalls, Replay};
use std::ops::Range;
use tracelogic_model::{Matching, Rank, Trace};

/// Replay `trace` under every configuration in `configs` at once, the communication a selection
/// dropped kept at its recorded duration (see the module docs of
/// [`super`]). `configs` must not be empty.
pub fn replay_configurations(
    trace: &Trace,
    dropped: &DroppedCalls,
    matching: &Matching,
    configs: &[Configuration],
    table: Option<&MessageTable>,
    per_rank: bool,
) -> Replay {
    replay_in_shares(
        trace,
        dropped,
        matching,
        configs,
        table,
        per_rank,
        &config_shares(configs.len()),
    )
}

/// [`replay_configurations`] with the configurations cut into `shares` (contiguous, in order,
/// covering all of them), one engine each.
pub(super) fn replay_in_shares(
    trace: &Trace,
    dropped: &DroppedCalls,
    matching: &Matching,
    configs: &[Configuration],
    table: Option<&MessageTable>,
    per_rank: bool,
    shares: &[Range<usize>],
) -> Replay {
    let all = 0..trace.ranks.len() as Rank;
    // The configurations never meet: each one's clocks depend on the trace and its own α and β
    // only, and the traversal order does not depend on them. So the plans (per-rank orders and
    // matched partners) are built once and shared, and the configurations are cut into one
    // contiguous share per core, each replayed by its own engine; the results are concatenated
    // in order, bit for bit those of one engine (in order on one thread, as on wasm).
    let engine = Engine::new(
        trace,
        dropped,
        &matching.messages,
        &configs[shares[0].clone()],
        table,
        all,
        None,
    );
    let parts = if shares.len() == 1 {
        let mut engine = engine;
        engine.run();
        vec![engine.results(&configs[shares[0].clone()], per_rank)]
    } else {
        crate::logical::per_rank::each_index(shares.len(), |i| {
            let share = &configs[shares[i].clone()];
            let mut e = engine.fork(share);
            e.run();
            e.results(share, per_rank)
        })
    };
    let mut parts = parts.into_iter();
    let (mut configurations, warnings, peak_pooled_vectors) = parts.next().expect("one share at least");
    for (more, _, _) in parts {
        configurations.extend(more);
    }
    let (start, end) = trace.span();
    Replay {
        configurations,
        measured_s: ns_to_s(end.saturating_sub(start)),
        calls: trace.num_calls(),
        messages: matching.messages.len() as u64,
        peak_pooled_vectors,
        warnings,
    }
}

/// The configurations each engine replays: contiguous shares of about equal size, one per core
/// natively (at least 4 configurations each, so a few configurations stay on one engine), one on
/// wasm.
fn config_shares(k: usize) -> Vec<Range<usize>> {
    #[cfg(not(target_arch = "wasm32"))]
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    #[cfg(target_arch = "wasm32")]
    let threads = 1;
    shares_of(k, threads)
}

pub(super) fn shares_of(k: usize, threads: usize) -> Vec<Range<usize>> {
    let n = threads.min(k / 4).max(1);
    (0..n).map(|i| i * k / n..(i + 1) * k / n).collect()
}
