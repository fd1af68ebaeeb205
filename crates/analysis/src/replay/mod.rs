//! Network what-if (Classification poster): replay a trace with extended Lamport clocks under many network
//! configurations in one pass, break the predicted time into computation, waiting, latency and
//! bandwidth, and classify what bounds the run (compute, latency, bandwidth, load imbalance).
//!
//! Each rank advances by the compute time the trace shows between its MPI calls; messages cost
//! `α + n·β` (Hockney) or a [`MessageTable`] time under an eager protocol; collectives
//! synchronise their communicator and then cost what the [`collective`] models say. The model,
//! the attribution of time to the four terms and the classification rule are written down in
//! `docs/replay.md`.
//!
//! ```
//! use tracelogic_analysis::replay::{what_if, Network, WhatIfOptions, SEED_SCALES};
//! use tracelogic_model::{match_messages, Trace, NO_CALLPATH};
//!
//! let mut trace = Trace::new("generated", "doc", 2);
//! for r in 0..2 {
//!     trace.push_call(r, "MPI_Init", 0, 0, NO_CALLPATH, 0);
//!     trace.push_call(r, "MPI_Finalize", 1_000_000_000, 1_000_000_000, NO_CALLPATH, 0);
//! }
//! let options = WhatIfOptions::new(vec![Network::ethernet_10g()], SEED_SCALES.to_vec());
//! let report = what_if(&trace, &match_messages(&trace), &options).unwrap();
//! assert_eq!(report.classification[0].label, "Comp.");
//! ```

pub mod collective;
mod engine;
pub mod network;
pub mod parts;
pub mod pooled;

pub use network::{
    configurations, parse_bandwidth, parse_scales, parse_seconds, Configuration, MessageTable, Network, Sweep,
    SEED_SCALES,
};

use serde::{Deserialize, Serialize};
use std::fmt;
use tracelogic_model::{CallKind, Matching, Rank, Trace};

/// Most configurations one replay accepts (Classification poster runs up to 256; state is ranks × 6 × K).
pub const MAX_CONFIGURATIONS: usize = 4096;

/// Predicted time split into the four terms of Classification poster. The terms add up to the predicted time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// Time between MPI calls as the trace recorded it, plus the recorded duration of local MPI
    /// calls (queries, probes, I/O).
    pub compute_s: f64,
    /// Time blocked on a partner that had not yet sent or arrived (load imbalance), including
    /// the time a rank that ends early waits for the last one.
    pub wait_s: f64,
    /// Share of communication time due to α.
    pub latency_term_s: f64,
    /// Share of communication time due to n·β.
    pub bandwidth_term_s: f64,
    /// Recorded duration of the communication calls a selection dropped (the collectives of a
    /// `--kind p2p` replay): kept as recorded, the same under every configuration, and counted
    /// neither as computation nor as modelled communication. 0 when nothing was dropped.
    #[serde(default)]
    pub not_replayed_s: f64,
}

impl Breakdown {
    /// Sum of the terms.
    pub fn total_s(&self) -> f64 {
        self.compute_s + self.wait_s + self.latency_term_s + self.bandwidth_term_s + self.not_replayed_s
    }
}

/// The time a [selection](tracelogic_model::Selection) removed from each rank's calls, placed in
/// the gaps between the calls it kept, so that replaying the restricted trace does not count it
/// as computation.
///
/// Built by [`dropped_calls`] from the trace and its restriction. Gap `g` of a rank is the time
/// before its kept call `g` (from the previous kept call's exit, or the rank's start); the last
/// gap is after its last kept call. Empty vectors mean nothing was dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DroppedCalls {
    /// Per rank and gap: nanoseconds of dropped communication calls (point-to-point,
    /// completions, collectives). The replay keeps them at their recorded duration, as the
    /// `not_replayed_s` term.
    pub communication_ns: Vec<Vec<u64>>,
    /// Per rank and gap: nanoseconds of dropped `MPI_Init`, `MPI_Finalize` and communicator
    /// management, which the replay prices at 0 as it does when they are kept.
    pub unpriced_ns: Vec<Vec<u64>>,
}

impl DroppedCalls {
    fn gap(table: &[Vec<u64>], rank: usize, gap: usize) -> u64 {
        table.get(rank).and_then(|g| g.get(gap)).copied().unwrap_or(0)
    }

    /// Nanoseconds of dropped communication in gap `gap` of rank `rank` (0 outside the table).
    pub fn communication(&self, rank: usize, gap: usize) -> u64 {
        Self::gap(&self.communication_ns, rank, gap)
    }

    /// Nanoseconds of dropped start-up, tear-down and communicator management in that gap.
    pub fn unpriced(&self, rank: usize, gap: usize) -> u64 {
        Self::gap(&self.unpriced_ns, rank, gap)
    }

    /// True when the selection dropped no communication and nothing priced at zero.
    pub fn is_empty(&self) -> bool {
        self.communication_ns
            .iter()
            .chain(&self.unpriced_ns)
            .flatten()
            .all(|&t| t == 0)
    }
}

/// What `restricted` (a [`Trace::restrict`] of `original`) dropped from each rank, gap by gap
/// (see [`DroppedCalls`]). Local calls dropped (queries, probes, I/O) are not recorded: they
/// stay computation, as in a full replay. A dropped call is clipped to the gap it falls in, so
/// a call cut by a time window counts only inside the window. Fails when `restricted` is not a
/// restriction of `original` (other ranks, or calls that are not a subsequence of the
/// original's), naming the rank and call.
pub fn dropped_calls(original: &Trace, restricted: &Trace) -> Result<DroppedCalls, ReplayError> {
    if original.ranks.len() != restricted.ranks.len() {
        return Err(ReplayError(format!(
            "{}: the selection has {} ranks but the trace {}",
            restricted.source,
            restricted.ranks.len(),
            original.ranks.len()
        )));
    }
    let mut out = DroppedCalls::default();
    for (rank, (full, kept)) in original.ranks.iter().zip(&restricted.ranks).enumerate() {
        let (f, k) = (&full.calls, &kept.calls);
        let kept_len = k.len().min(k.enter.len()).min(k.duration.len());
        let mut communication = vec![0u64; kept_len + 1];
        let mut unpriced = vec![0u64; kept_len + 1];
        let mut j = 0;
        let full_len = f.len().min(f.kind.len()).min(f.enter.len()).min(f.duration.len());
        for i in 0..full_len {
            if j < kept_len && f.func[i] == k.func[j] && f.enter(i) == k.enter(j) && f.exit(i) == k.exit(j) {
                j += 1;
                continue;
            }
            let table = match f.kind[i] {
                CallKind::Lifecycle | CallKind::Communicator => &mut unpriced,
                CallKind::Other | CallKind::Probe => continue,
                _ => &mut communication,
            };
            let from = match j {
                0 => kept.span.map_or(0, |s| s.0),
                _ => k.exit(j - 1),
            };
            let to = match (j < kept_len, kept.span) {
                (true, _) => k.enter(j),
                (false, Some((_, end))) => end,
                (false, None) => from,
            };
            table[j] += f.exit(i).min(to).saturating_sub(f.enter(i).max(from));
        }
        if j < kept_len {
            return Err(ReplayError(format!(
                "{}: call {j} of rank {rank} in the selection is not a call of the trace",
                restricted.source
            )));
        }
        out.communication_ns.push(communication);
        out.unpriced_ns.push(unpriced);
    }
    Ok(out)
}

/// One rank's predicted time under one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankBreakdown {
    /// World rank.
    pub rank: Rank,
    /// When the rank's last event happens.
    pub end_s: f64,
    /// Its terms, padded with waiting up to the run's predicted time.
    #[serde(flatten)]
    pub breakdown: Breakdown,
}

/// The prediction under one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigurationResult {
    /// The configuration (network, label, scale, α, bandwidth).
    #[serde(flatten)]
    pub configuration: Configuration,
    /// Predicted run time: when the last rank ends.
    pub predicted_s: f64,
    /// Mean over ranks of each rank's terms; adds up to `predicted_s`.
    #[serde(flatten)]
    pub breakdown: Breakdown,
    /// The rank that ends last.
    pub critical_rank: Rank,
    /// Per-rank terms when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<Vec<RankBreakdown>>,
}

/// Things the replay had to work around; all zero on a complete, consistent trace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayWarnings {
    /// Receives no send matched: they complete at the receiver's own clock.
    pub unmatched_recvs: u64,
    /// Receives whose matched send is never reached (cyclic or truncated trace): completed at
    /// the receiver's own clock.
    pub unresolved_recvs: u64,
    /// Collective instances some member never reached: completed with the members that did.
    pub incomplete_collectives: u64,
    /// Collective instances whose members disagree on the operation.
    pub mismatched_collectives: u64,
    /// Collective calls with no collective record (priced at zero).
    pub collectives_without_record: u64,
    /// Collectives on a communicator id the trace does not define (treated as one rank).
    pub unknown_communicators: u64,
    /// Matched messages whose ranks or operations do not exist in the trace (ignored).
    pub invalid_messages: u64,
}

impl ReplayWarnings {
    /// True when nothing had to be worked around.
    pub fn is_empty(&self) -> bool {
        *self == ReplayWarnings::default()
    }
}

/// The result of one multi-configuration replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    /// One prediction per configuration, in the order given.
    pub configurations: Vec<ConfigurationResult>,
    /// Duration the trace recorded (first to last timestamp over all ranks).
    pub measured_s: f64,
    /// MPI calls replayed.
    pub calls: u64,
    /// Matched messages replayed.
    pub messages: u64,
    /// Most K-vectors (send times of messages in flight, start times of open collectives) held
    /// at once: the replay's memory beyond `ranks × 6 × K` doubles.
    pub peak_pooled_vectors: u64,
    /// What had to be worked around.
    pub warnings: ReplayWarnings,
}

/// Why a replay could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError(pub String);

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReplayError {}

/// Replay `trace` once under every configuration of `configs` (1 to [`MAX_CONFIGURATIONS`]),
/// with messages priced by Hockney's model or, if given, by `table`. `matching` must come from
/// [`tracelogic_model::match_messages`] on the same trace. Costs O(calls × K) time and
/// O(ranks × K) memory plus one K-vector per message in flight.
pub fn replay(
    trace: &Trace,
    matching: &Matching,
    configs: &[Configuration],
    table: Option<&MessageTable>,
    per_rank: bool,
) -> Result<Replay, ReplayError> {
    replay_restricted(trace, &DroppedCalls::default(), matching, configs, table, per_rank)
}

/// [`replay`] of a trace restricted to a selection, with what the selection dropped
/// ([`dropped_calls`]): dropped communication keeps its recorded duration as the
/// `not_replayed_s` term of every configuration, instead of becoming computation; dropped
/// start-up and communicator management cost 0 as in a full replay.
pub fn replay_restricted(
    trace: &Trace,
    dropped: &DroppedCalls,
    matching: &Matching,
    configs: &[Configuration],
    table: Option<&MessageTable>,
    per_rank: bool,
) -> Result<Replay, ReplayError> {
    check_configurations(configs)?;
    Ok(engine::replay_configurations(
        trace, dropped, matching, configs, table, per_rank,
    ))
}

/// Refuse what no replay can run: no configuration, too many, or a network without a
/// positive bandwidth and non-negative latency.
pub(crate) fn check_configurations(configs: &[Configuration]) -> Result<(), ReplayError> {
    if configs.is_empty() {
        return Err(ReplayError("no network configuration to replay".into()));
    }
    if configs.len() > MAX_CONFIGURATIONS {
        return Err(ReplayError(format!(
            "{} configurations requested; at most {MAX_CONFIGURATIONS} fit one replay",
            configs.len()
        )));
    }
    if let Some(c) = configs.iter().find(|c| {
        !(c.latency_s.is_finite()
            && c.latency_s >= 0.0
            && c.bandwidth_bytes_per_s.is_finite()
            && c.bandwidth_bytes_per_s > 0.0)
    }) {
        return Err(ReplayError(format!(
            "configuration {} {} has latency {} s and bandwidth {} B/s; need latency ≥ 0 and bandwidth > 0",
            c.network, c.label, c.latency_s, c.bandwidth_bytes_per_s
        )));
    }
    Ok(())
}

/// The labels of Classification poster's Table 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Insensitive to the network, little waiting: computation dominates.
    Compute,
    /// Insensitive to the network, much waiting: load imbalance dominates.
    Imbalance,
    /// Network-dominated, mostly through latency.
    Latency,
    /// Network-dominated, mostly through bandwidth.
    Bandwidth,
    /// Network-dominated, latency and bandwidth alike.
    Communication,
    /// Sensitive to the network, with much waiting.
    ImbalanceSensitive,
    /// Sensitive to the network, mostly through latency.
    LatencySensitive,
    /// Sensitive to the network, mostly through bandwidth.
    BandwidthSensitive,
    /// Sensitive to the network, latency and bandwidth alike.
    CommunicationSensitive,
    /// Not classified: the run is insensitive to the replayed network, but the communication a
    /// selection dropped (kept at its recorded duration) takes at least as long as the
    /// computation (or, with much waiting, the waiting), so "compute-bound" ("imbalance-bound")
    /// would rest on time that was not replayed.
    Undetermined,
}

impl Bound {
    /// The short label of Classification poster's Table 1 (`Comp.`, `Imb.-s`, `Latency`, `BW-s`, ...).
    pub fn label(self) -> &'static str {
        match self {
            Bound::Compute => "Comp.",
            Bound::Imbalance => "Imb.",
            Bound::Latency => "Latency",
            Bound::Bandwidth => "BW",
            Bound::Communication => "Comm.",
            Bound::ImbalanceSensitive => "Imb.-s",
            Bound::LatencySensitive => "Latency-s",
            Bound::BandwidthSensitive => "BW-s",
            Bound::CommunicationSensitive => "Comm.-s",
            Bound::Undetermined => "n/a",
        }
    }
}

/// Thresholds of the classification rule (see `docs/replay.md`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Below this relative change of predicted time across the scaled set the run is
    /// insensitive to the network.
    pub insensitive_spread: f64,
    /// At or above this estimated network share of the run time the run is network-bound.
    pub bound_share: f64,
    /// At or above this share of waiting in the base prediction, imbalance is what matters.
    pub imbalance_wait_share: f64,
    /// One sweep's spread must be this many times the other's to name latency or bandwidth.
    pub dominance: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            insensitive_spread: 0.10,
            bound_share: 0.5,
            imbalance_wait_share: 0.2,
            dominance: 2.0,
        }
    }
}

/// The classification of a run on one network, with the numbers it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Classification {
    /// Network the classification is for.
    pub network: String,
    /// The class.
    pub bound: Bound,
    /// Its Table 1 label.
    pub label: String,
    /// Why, in words, with the figures.
    pub reason: String,
    /// (T(slowest scaled) − T(fastest scaled)) / T(base).
    pub spread: f64,
    /// Estimated share of the base time that a faster network removes (see `docs/replay.md`).
    pub network_share: f64,
    /// Spread of the bandwidth-only sweep, relative to T(base).
    pub bandwidth_spread: f64,
    /// Spread of the latency-only sweep, relative to T(base).
    pub latency_spread: f64,
    /// Waiting over predicted time in the base configuration.
    pub wait_share: f64,
    /// Computation over predicted time in the base configuration.
    pub compute_share: f64,
    /// Communication a selection dropped (kept at its recorded duration, not replayed) over
    /// predicted time in the base configuration; 0 without a selection.
    #[serde(default)]
    pub not_replayed_share: f64,
}

fn sweep_ends<'r>(
    results: &'r [ConfigurationResult],
    network: &str,
    sweep: Sweep,
    base: &'r ConfigurationResult,
) -> (&'r ConfigurationResult, &'r ConfigurationResult) {
    let mut slow = base;
    let mut fast = base;
    for r in results
        .iter()
        .filter(|r| r.configuration.network == network && r.configuration.sweep == sweep)
    {
        if r.configuration.scale < slow.configuration.scale {
            slow = r;
        }
        if r.configuration.scale > fast.configuration.scale {
            fast = r;
        }
    }
    (slow, fast)
}

/// Classify the run on `network` from the configurations [`configurations`] made for it.
/// `None` if the base or every scaled configuration of that network is missing, or the base
/// predicts zero time.
pub fn classify(results: &[ConfigurationResult], network: &str, thresholds: &Thresholds) -> Option<Classification> {
    let base = results
        .iter()
        .find(|r| r.configuration.network == network && r.configuration.sweep == Sweep::Base)?;
    let t1 = base.predicted_s;
    if t1 <= 0.0 {
        return None;
    }
    let (slow, fast) = sweep_ends(results, network, Sweep::Scaled, base);
    if std::ptr::eq(slow, fast) {
        return None;
    }
    let (bw_slow, bw_fast) = sweep_ends(results, network, Sweep::BandwidthOnly, base);
    let (lat_slow, lat_fast) = sweep_ends(results, network, Sweep::LatencyOnly, base);
    let spread = (slow.predicted_s - fast.predicted_s) / t1;
    let bandwidth_spread = (bw_slow.predicted_s - bw_fast.predicted_s) / t1;
    let latency_spread = (lat_slow.predicted_s - lat_fast.predicted_s) / t1;
    // If time = C + M/s, then T(1) − T(s) = M(1 − 1/s): estimate M/T(1) from the fastest
    // configuration, or from the slowest when no faster one was asked for.
    let network_share = if fast.configuration.scale > 1.0 {
        (t1 - fast.predicted_s) / (t1 * (1.0 - 1.0 / fast.configuration.scale))
    } else {
        (slow.predicted_s - t1) / (t1 * (1.0 / slow.configuration.scale - 1.0))
    };
    let wait_share = base.breakdown.wait_s / t1;
    let compute_share = base.breakdown.compute_s / t1;
    let not_replayed_share = base.breakdown.not_replayed_s / t1;
    let th = thresholds;
    let which = |bound_lat: Bound, bound_bw: Bound, bound_comm: Bound| {
        if latency_spread >= th.dominance * bandwidth_spread {
            (bound_lat, "mostly through latency")
        } else if bandwidth_spread >= th.dominance * latency_spread {
            (bound_bw, "mostly through bandwidth")
        } else {
            (bound_comm, "through latency and bandwidth alike")
        }
    };
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    let change = format!(
        "predicted time changes {} from {} to {}",
        pct(spread),
        slow.configuration.label,
        fast.configuration.label
    );
    let sweeps = format!(
        "latency-only sweep {}, bandwidth-only sweep {}",
        pct(latency_spread),
        pct(bandwidth_spread)
    );
    // Time a selection kept out of the replay does not move with the network, so it can make a
    // run look insensitive; an insensitive verdict stands only when the term it names outweighs it.
    let (named, named_share) = if wait_share >= th.imbalance_wait_share {
        ("waiting", wait_share)
    } else {
        ("computation", compute_share)
    };
    let (bound, reason) = if spread < th.insensitive_spread
        && not_replayed_share > 0.0
        && not_replayed_share >= named_share
    {
        (
            Bound::Undetermined,
            format!(
                "{change} (< {}): insensitive to the replayed network, but {} of the time is communication outside the selection, kept at its recorded duration, against {} {named}: what bounds the run cannot be told without replaying that communication",
                pct(th.insensitive_spread),
                pct(not_replayed_share),
                pct(named_share)
            ),
        )
    } else if spread < th.insensitive_spread {
        if wait_share >= th.imbalance_wait_share {
            (
                Bound::Imbalance,
                format!(
                    "{change} (< {}): insensitive to the network; ranks wait {} of the time (≥ {}): load imbalance bounds the run",
                    pct(th.insensitive_spread),
                    pct(wait_share),
                    pct(th.imbalance_wait_share)
                ),
            )
        } else {
            (
                Bound::Compute,
                format!(
                    "{change} (< {}): insensitive to the network; computation is {} and waiting {} of the time",
                    pct(th.insensitive_spread),
                    pct(compute_share),
                    pct(wait_share)
                ),
            )
        }
    } else if network_share >= th.bound_share {
        let (b, how) = which(Bound::Latency, Bound::Bandwidth, Bound::Communication);
        (
            b,
            format!(
                "{change}; a faster network removes an estimated {} of the time (≥ {}): network-bound, {how} ({sweeps})",
                pct(network_share),
                pct(th.bound_share)
            ),
        )
    } else if wait_share >= th.imbalance_wait_share {
        (
            Bound::ImbalanceSensitive,
            format!(
                "{change} (≥ {}) but the network accounts for only {}; ranks wait {} of the time (≥ {}): imbalance-sensitive",
                pct(th.insensitive_spread),
                pct(network_share),
                pct(wait_share),
                pct(th.imbalance_wait_share)
            ),
        )
    } else {
        let (b, how) = which(
            Bound::LatencySensitive,
            Bound::BandwidthSensitive,
            Bound::CommunicationSensitive,
        );
        (
            b,
            format!(
                "{change} (≥ {}) with the network accounting for {} (< {}): sensitive, {how} ({sweeps})",
                pct(th.insensitive_spread),
                pct(network_share),
                pct(th.bound_share)
            ),
        )
    };
    let reason = if not_replayed_share > 0.0 && bound != Bound::Undetermined {
        format!(
            "{reason}; {} of the time is communication outside the selection, kept at its recorded duration under every configuration",
            pct(not_replayed_share)
        )
    } else {
        reason
    };
    Some(Classification {
        network: network.to_owned(),
        bound,
        label: bound.label().to_owned(),
        reason,
        spread,
        network_share,
        bandwidth_spread,
        latency_spread,
        wait_share,
        compute_share,
        not_replayed_share,
    })
}

/// The base prediction of the network closest to the recording machine, against the
/// measured duration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    /// Network taken as the recording machine's.
    pub network: String,
    /// Its base prediction.
    pub predicted_s: f64,
    /// Duration the trace recorded.
    pub measured_s: f64,
    /// (predicted − measured) / measured; `None` when nothing was measured.
    pub relative_error: Option<f64>,
    /// Longest time any rank spent in calls the replay prices at zero although they take time
    /// in a real run: `MPI_Init`, `MPI_Finalize`, communicator management.
    pub outside_model_s: f64,
    /// (predicted − (measured − outside_model)) / (measured − outside_model): the error over
    /// the part of the run the model covers; `None` when that part is empty.
    pub relative_error_inside_model: Option<f64>,
}

/// Predictions at least this far below the measured time (relative) get [`waiting_note`].
pub const LARGE_SHORTFALL: f64 = 0.5;

/// One sentence for a prediction far below the measured time (by [`LARGE_SHORTFALL`] or more):
/// the prediction holds every rank's computation between MPI calls (the reference network's
/// base `compute_s` is their mean), so what it lacks is time the recorded run spent inside MPI
/// beyond anything the network model explains (oversubscribed cores, OS noise, a much slower
/// network than the one assumed), which a replay pricing messages by the network model alone
/// cannot reproduce: its configurations are to be compared with each other rather than with the
/// measured time. Whatever share of the time the ranks computed: 1.2 % on the NAS MG sample, 31 %
/// on Meep's 8 processes time-shared on 2 cores, whose prediction is 65 % short. `None` otherwise.
pub fn waiting_note(report: &WhatIf) -> Option<String> {
    let v = report.reference.as_ref()?;
    let error = v.relative_error?;
    let base = report
        .configurations
        .iter()
        .find(|c| c.configuration.network == v.network && c.configuration.sweep == Sweep::Base)?;
    let compute = base.breakdown.compute_s;
    let share = compute / v.measured_s;
    (error <= -LARGE_SHORTFALL && v.measured_s > 0.0).then(|| {
        format!(
            "the ranks computed for {compute:.6} s between MPI calls (mean; {:.1}% of the measured time) and spent the rest inside MPI: the recorded run waited far longer than the network model explains (oversubscribed cores, OS noise, or a much slower network than {}), so compare configurations with each other rather than with the measured time",
            100.0 * share,
            v.network
        )
    })
}

/// Longest per-rank total of recorded time in `MPI_Init`, `MPI_Finalize` and communicator
/// management calls, in nanoseconds, those a selection dropped included, over the ranks
/// `ranks`.
pub(crate) fn outside_model_ns(trace: &Trace, dropped: &DroppedCalls, ranks: std::ops::Range<Rank>) -> u64 {
    trace
        .ranks
        .iter()
        .enumerate()
        .filter(|(r, _)| ranks.contains(&(*r as Rank)))
        .map(|(r, rt)| {
            let c = &rt.calls;
            let n = c.kind.len().min(c.enter.len()).min(c.duration.len());
            let kept = (0..n)
                .filter(|&i| matches!(c.kind[i], CallKind::Lifecycle | CallKind::Communicator))
                .map(|i| c.exit(i).saturating_sub(c.enter(i)));
            let gone = dropped.unpriced_ns.get(r).into_iter().flatten().copied();
            kept.chain(gone).fold(0u64, u64::saturating_add)
        })
        .max()
        .unwrap_or(0)
}

/// What [`what_if`] predicts for and how.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIfOptions {
    /// Networks to classify on.
    pub networks: Vec<Network>,
    /// Scale factors of the scaled set and the two sweeps ([`SEED_SCALES`] by default).
    pub scales: Vec<f64>,
    /// Message-time table replacing Hockney's line, if any.
    pub table: Option<MessageTable>,
    /// Name of the network closest to the machine that recorded the trace (default: the first).
    pub recorded_on: Option<String>,
    /// Keep per-rank breakdowns.
    pub per_rank: bool,
    /// Classification thresholds.
    pub thresholds: Thresholds,
}

impl WhatIfOptions {
    /// Options for `networks` and `scales`, everything else default.
    pub fn new(networks: Vec<Network>, scales: Vec<f64>) -> WhatIfOptions {
        WhatIfOptions {
            networks,
            scales,
            table: None,
            recorded_on: None,
            per_rank: false,
            thresholds: Thresholds::default(),
        }
    }
}

/// The full what-if report, as `tracelogic replay --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhatIf {
    /// Every configuration replayed: per network its base, scaled set and sweeps.
    pub configurations: Vec<ConfigurationResult>,
    /// Duration the trace recorded.
    pub measured_s: f64,
    /// Prediction on the recording machine's network against `measured_s`.
    pub reference: Option<Validation>,
    /// One classification per network.
    pub classification: Vec<Classification>,
    /// MPI calls replayed.
    pub calls: u64,
    /// Matched messages replayed.
    pub messages: u64,
    /// What had to be worked around.
    pub warnings: ReplayWarnings,
}

/// Replay `trace` under every network of `options` with its scaled set and sweeps in one pass,
/// classify the run on each network and compare the recording network's prediction with the
/// measured duration.
pub fn what_if(trace: &Trace, matching: &Matching, options: &WhatIfOptions) -> Result<WhatIf, ReplayError> {
    what_if_restricted(trace, &DroppedCalls::default(), matching, options)
}

/// [`what_if`] of a trace restricted to a selection, with what the selection dropped
/// ([`dropped_calls`]): see [`replay_restricted`]. The classification reports the dropped
/// communication's share and does not call a run compute-bound on its strength.
pub fn what_if_restricted(
    trace: &Trace,
    dropped: &DroppedCalls,
    matching: &Matching,
    options: &WhatIfOptions,
) -> Result<WhatIf, ReplayError> {
    if options.networks.is_empty() {
        return Err(ReplayError("no network to predict for".into()));
    }
    let configs = configurations(&options.networks, &options.scales);
    let replay = replay_restricted(
        trace,
        dropped,
        matching,
        &configs,
        options.table.as_ref(),
        options.per_rank,
    )?;
    let outside = outside_model_ns(trace, dropped, 0..trace.ranks.len() as Rank) as f64 * 1e-9;
    Ok(assemble(replay, outside, options))
}

/// The report of a replay: the classification on every network and the reference prediction
/// against the measured time, `outside` seconds of which the model prices at zero.
pub(crate) fn assemble(replay: Replay, outside: f64, options: &WhatIfOptions) -> WhatIf {
    let classification = options
        .networks
        .iter()
        .filter_map(|n| classify(&replay.configurations, &n.name, &options.thresholds))
        .collect();
    let recorded = options.recorded_on.as_deref().unwrap_or(&options.networks[0].name);
    let inside = replay.measured_s - outside;
    let reference = replay
        .configurations
        .iter()
        .find(|c| c.configuration.network == recorded && c.configuration.sweep == Sweep::Base)
        .map(|c| Validation {
            network: recorded.to_owned(),
            predicted_s: c.predicted_s,
            measured_s: replay.measured_s,
            relative_error: (replay.measured_s > 0.0).then(|| (c.predicted_s - replay.measured_s) / replay.measured_s),
            outside_model_s: outside,
            relative_error_inside_model: (inside > 0.0).then(|| (c.predicted_s - inside) / inside),
        });
    WhatIf {
        configurations: replay.configurations,
        measured_s: replay.measured_s,
        reference,
        classification,
        calls: replay.calls,
        messages: replay.messages,
        warnings: replay.warnings,
    }
}

#[cfg(test)]
mod tests;
