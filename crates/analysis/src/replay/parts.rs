//! The what-if replay by parts of the ranks, as Scalasca's parallel replay runs
//! (`tracelogic-mpi replay`, docs/mpi.md): every process replays its own ranks with the serial
//! engine and exchanges only what crosses to another process's ranks.
//!
//! * **Point to point.** When a rank posts a send whose receiver belongs to another process,
//!   the send's injection start (K clocks) and its size go to that process ([`Note::Sent`]);
//!   the receive there waits for it exactly as it waits for a local send.
//! * **Collectives.** When every member of an instance (the `k`-th collective of a member on a
//!   communicator) that this process replays has arrived, the latest of their clocks, the
//!   largest size and the operation go to every other process holding members
//!   ([`Note::Arrived`]); an instance completes when its local members and every other
//!   process's note are in.
//!
//! Each process runs its ranks until they all wait for another process ([`ReplayPart::run`]),
//! the notes are exchanged ([`ReplayPart::deliver`]), and so on until no process sends any:
//! the trace's own communication order, in rounds. Every rank then computes with the same
//! inputs as in the serial replay (a maximum of clocks does not depend on the order it is
//! taken in), so its final clocks and terms are bit for bit the serial ones, and
//! [`combine_what_if`] builds the serial report from them.
//!
//! When no process can advance and ranks are left, the serial replay breaks the wait of the
//! lowest such rank; the parts do the same ([`ReplayPart::deadlock`],
//! [`ReplayPart::break_deadlock`]) for a receive whose send never comes (a time window cuts
//! messages). What the serial replay decides by the order it visits the ranks in is detected
//! instead ([`ReplayPartResult::unreproducible`]): a collective a member never reaches
//! (completed with the members that came), instances whose members disagree on the
//! operation, and collectives called by a rank outside the communicator. `tracelogic-mpi` then
//! replays serially on rank 0.

use super::engine::{self, Dist, Engine, ROWS};
use super::{
    assemble, check_configurations, configurations, outside_model_ns, Configuration, DroppedCalls, MessageTable,
    Replay, ReplayError, ReplayWarnings, WhatIf, WhatIfOptions,
};
use serde::{Deserialize, Serialize};
use std::ops::Range;
use tracelogic_model::{CollectiveOp, CommId, Message, Rank, Time, Trace};

/// What one process's replay sends another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Note {
    /// A send to one of the other process's ranks was injected.
    Sent {
        /// Sending world rank.
        sender: Rank,
        /// Index into the sender's operations.
        send_op: u32,
        /// Receiving world rank.
        receiver: Rank,
        /// The send's size, which prices the transfer.
        bytes: u64,
        /// When the injection started, per configuration.
        at: Vec<f64>,
    },
    /// Every member of a collective instance that the sending process replays has arrived.
    Arrived {
        /// Communicator.
        comm: CommId,
        /// Which collective on it (0 for each member's first).
        seq: u32,
        /// The operation.
        op: CollectiveOp,
        /// Largest size among those members.
        bytes: u64,
        /// Latest clock among them, per configuration.
        start: Vec<f64>,
    },
}

/// One process's replay of its ranks.
pub struct ReplayPart<'a> {
    engine: Engine<'a>,
    trace: &'a Trace,
    dropped: &'a DroppedCalls,
    owned: Range<Rank>,
}

impl<'a> ReplayPart<'a> {
    /// The replay of the ranks `owned` of `trace` (of which only theirs columns are read)
    /// under `configs`, the processes' ranks being `blocks` (contiguous, in rank order).
    /// `messages` are the matched messages with at least one end in `owned`
    /// ([`tracelogic_model::match_messages`]'s, found by parts). `dropped` as for
    /// [`super::replay_restricted`].
    pub fn new(
        trace: &'a Trace,
        dropped: &'a DroppedCalls,
        messages: &[Message],
        configs: &[Configuration],
        table: Option<&'a MessageTable>,
        owned: Range<Rank>,
        blocks: &[Range<Rank>],
    ) -> Result<ReplayPart<'a>, ReplayError> {
        check_configurations(configs)?;
        if owned.end as usize > trace.ranks.len() || !blocks.contains(&owned) {
            return Err(ReplayError(format!(
                "ranks {owned:?} are not one of the blocks {blocks:?} of a {}-rank trace",
                trace.ranks.len()
            )));
        }
        let dist = Dist::new(trace, &owned, blocks);
        let engine = Engine::new(
            trace,
            dropped,
            messages,
            Some(configs),
            table,
            owned.clone(),
            Some(dist),
        );
        Ok(ReplayPart {
            engine,
            trace,
            dropped,
            owned,
        })
    }

    /// Replay every rank as far as it goes without news from other processes; the notes for
    /// each process (in process order) it produced.
    pub fn run(&mut self) -> Vec<Vec<Note>> {
        self.engine.drain();
        self.engine.take_outbox()
    }

    /// Take in what the other processes sent this one.
    pub fn deliver(&mut self, notes: impl IntoIterator<Item = Note>) {
        for n in notes {
            self.engine.deliver(n);
        }
    }

    /// When no process has anything to send: the lowest rank of this part that has not
    /// finished, as `2 × rank + 1` if it waits for a collective, `2 × rank` for a receive. The
    /// smallest over all processes goes to [`ReplayPart::break_deadlock`].
    pub fn deadlock(&self) -> Option<u64> {
        self.engine
            .lowest_open()
            .map(|(r, recv)| 2 * u64::from(r) + u64::from(!recv))
    }

    /// Break the deadlock `key` (the smallest [`ReplayPart::deadlock`] over all processes) as
    /// the serial replay does, lowest rank first: its process gives up the rank's receive.
    /// False when the rank waits for a collective, whose forced completion the parts do not
    /// reproduce: every process then marks the replay unreproducible.
    pub fn break_deadlock(&mut self, key: u64) -> bool {
        let r = (key / 2) as Rank;
        if key % 2 == 1 {
            self.engine.unreproducible(|| {
                format!("rank {r} waits for a collective that a member never reaches (the serial replay completes it with the members that came, in an order of its own)")
            });
            return false;
        }
        if self.owned.contains(&r) {
            self.engine.force_recv(r);
        }
        true
    }

    /// This part's share of the report, once no process has anything left to send.
    pub fn finish(self) -> ReplayPartResult {
        let calls = self.trace.ranks[self.owned.start as usize..self.owned.end as usize]
            .iter()
            .map(|r| r.calls.len() as u64)
            .sum();
        let span = crate::partial::ranks_span(self.trace, self.owned.clone());
        let outside_model_ns = outside_model_ns(self.trace, self.dropped, self.owned.clone());
        let mut unreproducible = self.engine.dist.as_ref().and_then(|d| d.unreproducible.clone());
        let (state, not_replayed, warnings, messages, peak, stuck) = self.engine.into_part();
        if unreproducible.is_none() && stuck {
            unreproducible = Some(format!(
                "a rank of {:?} waits for a message or a collective that never comes (the serial replay breaks such deadlocks in an order of its own)",
                self.owned
            ));
        }
        if unreproducible.is_none() && warnings.mismatched_collectives > 0 {
            unreproducible = Some("the members of a collective instance disagree on the operation".into());
        }
        ReplayPartResult {
            ranks: self.owned,
            state,
            not_replayed,
            warnings,
            calls,
            messages,
            span,
            outside_model_ns,
            peak_pooled_vectors: peak,
            unreproducible,
        }
    }
}

/// One process's share of a replay by parts, for [`combine_what_if`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayPartResult {
    /// The ranks replayed.
    pub ranks: Range<Rank>,
    /// Their final clocks, terms and interface times: `ROWS × K` per rank, in rank order.
    pub state: Vec<f64>,
    /// Their dropped communication kept at its recorded duration, in seconds.
    pub not_replayed: Vec<f64>,
    /// What they had to work around.
    pub warnings: ReplayWarnings,
    /// Their MPI calls.
    pub calls: u64,
    /// Matched messages they received.
    pub messages: u64,
    /// Their span.
    pub span: Option<(Time, Time)>,
    /// Their longest time in calls the model prices at zero, in nanoseconds.
    pub outside_model_ns: u64,
    /// Most K-vectors pooled at once on this process.
    pub peak_pooled_vectors: u64,
    /// Why the parts cannot give the serial answer, if they cannot.
    pub unreproducible: Option<String>,
}

/// The serial [`Replay`] from every process's part (in process order), or why the parts do not
/// determine it.
pub fn combine_replay(parts: &[ReplayPartResult], configs: &[Configuration], per_rank: bool) -> Result<Replay, String> {
    if let Some(why) = parts.iter().find_map(|p| p.unreproducible.clone()) {
        return Err(why);
    }
    let k = configs.len();
    let mut next = 0;
    for p in parts {
        if p.ranks.start != next || p.state.len() != p.ranks.len() * ROWS * k || p.not_replayed.len() != p.ranks.len() {
            return Err(format!("the part of ranks {:?} does not follow rank {next}", p.ranks));
        }
        next = p.ranks.end;
    }
    let state: Vec<f64> = parts.iter().flat_map(|p| p.state.iter().copied()).collect();
    let not_replayed: Vec<f64> = parts.iter().flat_map(|p| p.not_replayed.iter().copied()).collect();
    let configurations = engine::results(&state, k, &not_replayed, configs, per_rank);
    let mut warnings = ReplayWarnings::default();
    for w in parts.iter().map(|p| &p.warnings) {
        warnings.unmatched_recvs += w.unmatched_recvs;
        warnings.unresolved_recvs += w.unresolved_recvs;
        warnings.incomplete_collectives += w.incomplete_collectives;
        warnings.mismatched_collectives += w.mismatched_collectives;
        warnings.collectives_without_record += w.collectives_without_record;
        warnings.unknown_communicators += w.unknown_communicators;
        warnings.invalid_messages += w.invalid_messages;
    }
    let (start, end) = parts
        .iter()
        .filter_map(|p| p.span)
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
        .unwrap_or((0, 0));
    Ok(Replay {
        configurations,
        measured_s: end.saturating_sub(start) as f64 * 1e-9,
        calls: parts.iter().map(|p| p.calls).sum(),
        messages: parts.iter().map(|p| p.messages).sum(),
        peak_pooled_vectors: parts.iter().map(|p| p.peak_pooled_vectors).sum(),
        warnings,
    })
}

/// The serial [`super::what_if_restricted`] report from every process's part (in process
/// order), each replayed under `configurations(options)`; `Err` says why the parts do not
/// determine it (then replay serially).
pub fn combine_what_if(parts: &[ReplayPartResult], options: &WhatIfOptions) -> Result<WhatIf, String> {
    let configs = what_if_configurations(options).map_err(|e| e.0)?;
    let replay = combine_replay(parts, &configs, options.per_rank)?;
    let outside = parts.iter().map(|p| p.outside_model_ns).max().unwrap_or(0) as f64 * 1e-9;
    Ok(assemble(replay, outside, options))
}

/// The configurations [`super::what_if`] replays for `options`, checked as it checks them.
pub fn what_if_configurations(options: &WhatIfOptions) -> Result<Vec<Configuration>, ReplayError> {
    if options.networks.is_empty() {
        return Err(ReplayError("no network to predict for".into()));
    }
    let configs = configurations(&options.networks, &options.scales);
    check_configurations(&configs)?;
    Ok(configs)
}
