//! The configurations cut into per-core shares, one engine each (the configurations never meet,
//! so the shares' results concatenated are bit for bit those of one engine).

use super::clock::ns_to_s;
use super::exec::{Clocks, Instr};
use super::{results, Engine};
use crate::replay::network::{Configuration, MessageTable};
use crate::replay::{DroppedCalls, Replay};
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
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
    // only, and the traversal (which rank moves when, what feeds what, which pooled vector holds
    // what) does not depend on them. So one engine traverses the trace once and its
    // instructions are executed by one executor per share of the configurations, each on its
    // own thread natively, as the traversal hands them over; the results are concatenated in
    // order, bit for bit those of one engine executing as it goes (as on wasm).
    let (configurations, warnings, peak_pooled_vectors) = if shares.len() == 1 {
        let mut engine = Engine::new(trace, dropped, &matching.messages, Some(configs), table, all, None);
        engine.run(&mut |_| {});
        engine.results(configs, per_rank)
    } else {
        let ranks = trace.ranks.len();
        let mut engine = Engine::new(trace, dropped, &matching.messages, None, table, all, None);
        let per_share = executors(
            shares.len(),
            |i, rx| {
                let share = &configs[shares[i].clone()];
                let mut clocks = Clocks::new(share, ranks);
                for chunk in rx {
                    clocks.run(&chunk);
                }
                clocks
            },
            |txs| {
                // Chunks handed over, oldest first: once every executor is done with one, its
                // buffer takes the next instructions (fresh pages for each would cost the
                // kernel more than the executors' arithmetic).
                let mut handed: VecDeque<Arc<Vec<Instr>>> = VecDeque::new();
                engine.run(&mut |v| {
                    let mut next = match handed.pop_front().map(Arc::try_unwrap) {
                        Some(Ok(mut done)) => {
                            done.clear();
                            done
                        }
                        Some(Err(busy)) => {
                            handed.push_front(busy);
                            Vec::with_capacity(v.capacity())
                        }
                        None => Vec::with_capacity(v.capacity()),
                    };
                    std::mem::swap(v, &mut next);
                    let chunk = Arc::new(next);
                    for tx in txs {
                        // An executor that is gone panicked; its join reports it.
                        let _ = tx.send(chunk.clone());
                    }
                    handed.push_back(chunk);
                });
            },
        );
        let not_replayed = engine.not_replayed.clone();
        let (warnings, peak) = engine.gathered();
        let mut configurations = Vec::with_capacity(configs.len());
        for (clocks, share) in per_share.into_iter().zip(shares) {
            let k = clocks.k();
            configurations.extend(results(
                &clocks.into_state(),
                k,
                &not_replayed,
                &configs[share.clone()],
                per_rank,
            ));
        }
        (configurations, warnings, peak)
    };
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

/// Run `feed` on this thread, handing it one sender per executor; `execute(i, receiver)` runs
/// executor `i` over what arrives (on its own thread natively, after `feed` on wasm). The
/// executors' answers in order.
fn executors<T: Send>(
    n: usize,
    execute: impl Fn(usize, Receiver<Arc<Vec<Instr>>>) -> T + Sync,
    feed: impl FnOnce(&[SyncSender<Arc<Vec<Instr>>>]),
) -> Vec<T> {
    // A few chunks in flight per executor bound the memory to a few MB whatever the trace.
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..n).map(|_| sync_channel::<Arc<Vec<Instr>>>(4)).unzip();
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::thread::scope(|scope| {
            let execute = &execute;
            let workers: Vec<_> = rxs
                .into_iter()
                .enumerate()
                .map(|(i, rx)| scope.spawn(move || execute(i, rx)))
                .collect();
            feed(&txs);
            drop(txs);
            workers
                .into_iter()
                .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = (txs, rxs, execute, feed);
        unreachable!("wasm replays its configurations in one share")
    }
}
