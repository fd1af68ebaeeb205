//! Time profile: where the run's time goes, per MPI function and per rank, and what sizes of
//! messages it moves when (`docs/profile.md`).
//!
//! Everything is read from the recorded enter and exit times, in one pass over the calls and
//! one over the operations (O(calls + operations)):
//!
//! * **Per function**: calls, total time (sum over ranks of exit − enter), mean time per call,
//!   share of the run (total over the ranks' run time: ranks × the run's length), and the
//!   per-rank totals' minimum, mean and maximum with the ranks where the minimum and maximum
//!   are reached (the lowest rank on ties). Every rank of the trace that recorded a call counts,
//!   a rank that never called the function with 0.
//! * **Computation per rank**: the time between consecutive MPI calls (enter of a call minus
//!   exit of the previous one), from the exit of `MPI_Init` (or of the first call, when the
//!   rank recorded no `MPI_Init`) to the entry of `MPI_Finalize` (or the last call's exit):
//!   calls made before MPI exists (`MPI_Initialized`, `MPI_Get_version`) or after it ends
//!   (`MPI_Finalized`) do not turn the program's start-up and tear-down into computation.
//! * **Message sizes**: log2 histograms of the point-to-point sends (one per message) and of the
//!   collective operations (one per rank taking part, its larger buffer): bin `k ≥ 1` holds the
//!   sizes in `[2^(k-1), 2^k)`, bin 0 the empty messages.
//! * **Bytes over time**: the bytes sent point to point (by the entry time of the posting call)
//!   and contributed to collectives, in a fixed number of equal time bins over the run.

use crate::partial::ProfilePart;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::ops::Range;
use tracelogic_model::{P2pDir, Rank, Selection, Time, Trace};

/// Options of [`profile`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileOptions {
    /// Number of equal time bins of [`ProfileReport::bytes_over_time`] (at least 1).
    pub time_bins: usize,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        ProfileOptions { time_bins: 100 }
    }
}

/// The time profile of a trace, as `tracelogic profile --json` prints it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileReport {
    /// World ranks of the trace.
    pub ranks: u32,
    /// Ranks that recorded at least one call (the denominators of shares and means).
    pub active_ranks: u32,
    /// Length of the run: first to last event of the trace, in seconds.
    pub duration_s: f64,
    /// Time in MPI calls, summed over ranks.
    pub mpi_s: f64,
    /// One entry per MPI function called, by decreasing total time (then name).
    pub functions: Vec<FunctionProfile>,
    /// Per world rank: time between its MPI calls.
    pub compute_s: Vec<f64>,
    /// Log2 histograms of message sizes.
    pub message_sizes: MessageSizes,
    /// Bytes moved over time.
    pub bytes_over_time: BytesOverTime,
}

/// One MPI function's line of the profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionProfile {
    /// MPI function, e.g. `MPI_Send`.
    pub name: String,
    /// Calls over all ranks.
    pub calls: u64,
    /// Sum over ranks and calls of exit − enter, in seconds.
    pub total_s: f64,
    /// `total_s / calls`.
    pub mean_s: f64,
    /// `total_s` over the ranks' run time (`active_ranks × duration_s`).
    pub share: f64,
    /// Smallest per-rank total.
    pub min_rank_s: f64,
    /// Mean per-rank total (over the active ranks).
    pub mean_rank_s: f64,
    /// Largest per-rank total.
    pub max_rank_s: f64,
    /// Rank of the smallest total (lowest on ties).
    pub min_rank: Rank,
    /// Rank of the largest total (lowest on ties).
    pub max_rank: Rank,
}

/// Message-size histograms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MessageSizes {
    /// Point-to-point sends, one per message.
    pub p2p: Vec<SizeBin>,
    /// Collective operations, one per rank taking part (its larger buffer).
    pub collective: Vec<SizeBin>,
}

/// One bin of a log2 size histogram: sizes in `[lo_bytes, hi_bytes)` (bin 0: exactly 0 bytes,
/// `lo_bytes = hi_bytes = 0`). Only non-empty bins are listed, by increasing size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeBin {
    /// Smallest size of the bin.
    pub lo_bytes: u64,
    /// One past the largest size of the bin (`u64::MAX` for the last possible bin).
    pub hi_bytes: u64,
    /// Operations in the bin.
    pub count: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// Bytes per time bin over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BytesOverTime {
    /// Start of the first bin, seconds from the trace's first event (always 0).
    pub start_s: f64,
    /// Width of a bin in seconds.
    pub bin_s: f64,
    /// Point-to-point bytes sent per bin (by entry time of the posting call).
    pub p2p_bytes: Vec<u64>,
    /// Bytes contributed to collectives per bin (by entry time of the call).
    pub collective_bytes: Vec<u64>,
}

/// The log2 bin of a size: 0 for 0 bytes, else `1 + floor(log2(bytes))`.
pub fn size_bin(bytes: u64) -> usize {
    (u64::BITS - bytes.leading_zeros()) as usize
}

fn bin_bounds(k: usize) -> (u64, u64) {
    match k {
        0 => (0, 0),
        64 => (1 << 63, u64::MAX),
        _ => (1u64 << (k - 1), 1u64 << k),
    }
}

fn histogram(counts: &[(u64, u64); 65]) -> Vec<SizeBin> {
    counts
        .iter()
        .enumerate()
        .filter(|(_, c)| c.0 > 0)
        .map(|(k, &(count, bytes))| {
            let (lo_bytes, hi_bytes) = bin_bounds(k);
            SizeBin {
                lo_bytes,
                hi_bytes,
                count,
                bytes,
            }
        })
        .collect()
}

pub(crate) fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// The trace `selection` keeps: the trace itself when it selects everything.
pub(crate) fn selected<'a>(trace: &'a Trace, selection: &Selection) -> Cow<'a, Trace> {
    if *selection == Selection::default() {
        Cow::Borrowed(trace)
    } else {
        Cow::Owned(trace.restrict(selection))
    }
}

/// The time profile of the part of `trace` that `selection` keeps ([`Trace::restrict`]).
pub fn profile(trace: &Trace, selection: &Selection, options: &ProfileOptions) -> ProfileReport {
    let trace = selected(trace, selection);
    profile_trace(&trace, options)
}

/// The time profile of a whole trace: one part holding every rank
/// ([`crate::partial::combine_profile`] of [`crate::partial::profile_part`]).
pub fn profile_trace(trace: &Trace, options: &ProfileOptions) -> ProfileReport {
    let span = trace.span();
    let all = part(trace, 0..trace.num_ranks(), span, options);
    combine(trace, std::slice::from_ref(&all), span, options)
}

/// Per function id of the trace: 1 for `MPI_Init`/`MPI_Init_thread`, 2 for `MPI_Finalize`,
/// else 0 (for [`computing_calls`]).
pub(crate) fn lifecycle_marks(trace: &Trace) -> Vec<u8> {
    (0..trace.functions.len() as u32)
        .map(
            |f| match tracelogic_model::mpi_base_name(trace.functions.name(f)).as_str() {
                "init" | "init_thread" => 1,
                "finalize" => 2,
                _ => 0,
            },
        )
        .collect()
}

/// The calls of a rank (its function ids in call order) between which its computation lies:
/// from its last `MPI_Init`/`MPI_Init_thread` to its first `MPI_Finalize` after it, both
/// included; from the first call or to the last where it recorded neither. `marks` from
/// [`lifecycle_marks`], `func(i)` the function of call `i` of `len`. O(calls).
pub(crate) fn computing_calls(marks: &[u8], len: usize, func: impl Fn(usize) -> u32) -> Range<usize> {
    let mark = |i: usize| marks.get(func(i) as usize).copied().unwrap_or(0);
    let start = (0..len).rev().find(|&i| mark(i) == 1).unwrap_or(0);
    let end = (start..len).find(|&i| mark(i) == 2).map_or(len, |i| i + 1);
    start..end
}

/// The time bins of a run of `span`: their number, their width in ns, and the bin of a time.
fn time_bins(span: (Time, Time), options: &ProfileOptions) -> (usize, f64) {
    let run_ns = span.1.saturating_sub(span.0);
    let bins = options.time_bins.max(1);
    (bins, (run_ns as f64 / bins as f64).max(f64::MIN_POSITIVE))
}

/// [`crate::partial::profile_part`].
pub(crate) fn part(trace: &Trace, ranks: Range<Rank>, span: (Time, Time), options: &ProfileOptions) -> ProfilePart {
    let n = ranks.len();
    let nf = trace.functions.len();
    let t0 = span.0;
    // Per function: calls and total ns; per (function, rank) total ns.
    let mut calls = vec![0u64; nf];
    let mut total = vec![0u64; nf];
    let mut per_rank = vec![0u64; nf * n];
    let mut compute = vec![0u64; n];
    let mut active = vec![false; n];
    let mut mpi = 0u64;
    let owned = || trace.ranks.iter().filter(|rt| ranks.contains(&rt.rank));
    let marks = lifecycle_marks(trace);
    for rt in owned() {
        let r = (rt.rank - ranks.start) as usize;
        let c = &rt.calls;
        let len = c.func.len().min(c.enter.len()).min(c.duration.len());
        active[r] = len > 0;
        let mut prev_exit: Option<u64> = None;
        let computing = computing_calls(&marks, len, |i| c.func[i]);
        for i in 0..len {
            let f = c.func[i] as usize;
            if f >= nf {
                continue;
            }
            let d = c.exit(i).saturating_sub(c.enter(i));
            calls[f] += 1;
            total[f] += d;
            per_rank[f * n + r] += d;
            mpi += d;
            if !computing.contains(&i) {
                continue;
            }
            if let Some(p) = prev_exit {
                compute[r] += c.enter(i).saturating_sub(p);
            }
            prev_exit = Some(prev_exit.map_or(c.exit(i), |p| p.max(c.exit(i))));
        }
    }

    // Sizes and bytes over time.
    let (bins, bin_ns) = time_bins(span, options);
    let bin_of = |t: u64| (((t.saturating_sub(t0)) as f64 / bin_ns) as usize).min(bins - 1);
    let mut p2p_sizes = vec![(0u64, 0u64); 65];
    let mut coll_sizes = vec![(0u64, 0u64); 65];
    let mut p2p_time = vec![0u64; bins];
    let mut coll_time = vec![0u64; bins];
    for rt in owned() {
        let p = &rt.p2p;
        for i in 0..p.len().min(p.dir.len()).min(p.bytes.len()) {
            if p.dir[i] != P2pDir::Send {
                continue;
            }
            let b = p.bytes.at(i);
            let s = &mut p2p_sizes[size_bin(b)];
            s.0 += 1;
            s.1 += b;
            if let Some(t) = rt.calls.enter.get(p.post[i] as usize) {
                p2p_time[bin_of(t)] += b;
            }
        }
        let co = &rt.collectives;
        for i in 0..co.len().min(co.bytes_sent.len()).min(co.bytes_recv.len()) {
            let b = co.bytes_sent[i].max(co.bytes_recv[i]);
            let s = &mut coll_sizes[size_bin(b)];
            s.0 += 1;
            s.1 += b;
            if let Some(t) = rt.calls.enter.get(co.call[i] as usize) {
                coll_time[bin_of(t)] += co.bytes_sent[i];
            }
        }
    }
    ProfilePart {
        ranks,
        calls,
        total,
        per_rank,
        compute,
        active,
        mpi,
        p2p_sizes,
        collective_sizes: coll_sizes,
        p2p_time,
        collective_time: coll_time,
    }
}

/// [`crate::partial::combine_profile`].
pub(crate) fn combine(
    trace: &Trace,
    parts: &[ProfilePart],
    span: (Time, Time),
    options: &ProfileOptions,
) -> ProfileReport {
    let n = trace.ranks.len();
    let nf = trace.functions.len();
    let (t0, t1) = span;
    let mut calls = vec![0u64; nf];
    let mut total = vec![0u64; nf];
    let mut compute = Vec::with_capacity(n);
    let mut active = Vec::with_capacity(n);
    let mut mpi = 0u64;
    let (bins, bin_ns) = time_bins(span, options);
    let mut p2p_sizes = [(0u64, 0u64); 65];
    let mut coll_sizes = [(0u64, 0u64); 65];
    let mut p2p_time = vec![0u64; bins];
    let mut coll_time = vec![0u64; bins];
    let add = |into: &mut [u64], from: &[u64]| into.iter_mut().zip(from).for_each(|(a, b)| *a += b);
    let add_pairs = |into: &mut [(u64, u64)], from: &[(u64, u64)]| {
        into.iter_mut().zip(from).for_each(|(a, b)| {
            a.0 += b.0;
            a.1 += b.1;
        })
    };
    for p in parts {
        add(&mut calls, &p.calls);
        add(&mut total, &p.total);
        compute.extend(&p.compute);
        active.extend(&p.active);
        mpi += p.mpi;
        add_pairs(&mut p2p_sizes, &p.p2p_sizes);
        add_pairs(&mut coll_sizes, &p.collective_sizes);
        add(&mut p2p_time, &p.p2p_time);
        add(&mut coll_time, &p.collective_time);
    }
    let active_ranks = active.iter().filter(|&&a| a).count() as u32;
    let run_ns = t1.saturating_sub(t0);
    let rank_time = run_ns as f64 * 1e-9 * active_ranks as f64;
    let mut functions: Vec<FunctionProfile> = (0..nf)
        .filter(|&f| calls[f] > 0)
        .map(|f| {
            let (mut min_rank, mut max_rank) = (Rank::MAX, Rank::MAX);
            let (mut lo, mut hi) = (u64::MAX, 0u64);
            for p in parts {
                let len = p.ranks.len();
                let row = &p.per_rank[f * len..(f + 1) * len];
                for (i, &t) in row.iter().enumerate() {
                    if !p.active[i] {
                        continue;
                    }
                    let r = p.ranks.start + i as Rank;
                    if t < lo {
                        lo = t;
                        min_rank = r;
                    }
                    if t > hi || max_rank == Rank::MAX {
                        hi = t;
                        max_rank = r;
                    }
                }
            }
            let total_s = secs(total[f]);
            FunctionProfile {
                name: trace.functions.name(f as u32).to_owned(),
                calls: calls[f],
                total_s,
                mean_s: total_s / calls[f] as f64,
                share: if rank_time > 0.0 { total_s / rank_time } else { 0.0 },
                min_rank_s: secs(lo),
                mean_rank_s: total_s / active_ranks.max(1) as f64,
                max_rank_s: secs(hi),
                min_rank,
                max_rank,
            }
        })
        .collect();
    functions.sort_by(|a, b| b.total_s.total_cmp(&a.total_s).then_with(|| a.name.cmp(&b.name)));
    ProfileReport {
        ranks: n as u32,
        active_ranks,
        duration_s: secs(run_ns),
        mpi_s: secs(mpi),
        functions,
        compute_s: compute.into_iter().map(secs).collect(),
        message_sizes: MessageSizes {
            p2p: histogram(&p2p_sizes),
            collective: histogram(&coll_sizes),
        },
        bytes_over_time: BytesOverTime {
            start_s: 0.0,
            bin_s: bin_ns * 1e-9,
            p2p_bytes: p2p_time,
            collective_bytes: coll_time,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_model::{CollectiveOp, NO_CALLPATH, NO_ROOT};

    #[test]
    fn size_bins_are_log2() {
        assert_eq!(size_bin(0), 0);
        assert_eq!(size_bin(1), 1);
        assert_eq!(size_bin(2), 2);
        assert_eq!(size_bin(3), 2);
        assert_eq!(size_bin(4), 3);
        assert_eq!(size_bin(1023), 10);
        assert_eq!(size_bin(1024), 11);
        assert_eq!(size_bin(u64::MAX), 64);
        for k in 1..64 {
            let (lo, hi) = bin_bounds(k);
            assert_eq!(size_bin(lo), k);
            assert_eq!(size_bin(hi - 1), k);
            assert_eq!(size_bin(hi), k + 1);
        }
    }

    /// hypre asks `MPI_Initialized` before `MPI_Init`, and SST DUMPI stamps `MPI_Init`'s entry
    /// when it returns: the start-up between the two is no computation, nor is the time between
    /// `MPI_Finalize` and a later `MPI_Finalized`. By hand: rank 0 computes 420 − 410 and
    /// 500 − 430; rank 1 (no lifecycle calls recorded) from its first call's exit on.
    #[test]
    fn computation_lies_between_init_and_finalize() {
        let mut t = Trace::new("test", "t", 2);
        t.push_call(0, "MPI_Initialized", 0, 1, NO_CALLPATH, 0);
        t.push_call(0, "MPI_Init", 400, 410, NO_CALLPATH, 0);
        let a = t.push_call(0, "MPI_Send", 420, 430, NO_CALLPATH, 0);
        t.push_p2p(0, a, a, P2pDir::Send, 1, 0, 0, 8);
        t.push_call(0, "MPI_Finalize", 500, 520, NO_CALLPATH, 0);
        t.push_call(0, "MPI_Finalized", 900, 901, NO_CALLPATH, 0);
        let b = t.push_call(1, "MPI_Recv", 300, 425, NO_CALLPATH, 0);
        t.push_p2p(1, b, b, P2pDir::Recv, 0, 0, 0, 8);
        t.push_call(1, "MPI_Barrier", 440, 441, NO_CALLPATH, 0);
        let p = profile(&t, &Selection::all(), &ProfileOptions::default());
        assert_eq!(p.compute_s, vec![80e-9, 15e-9]);
        let i = crate::imbalance::imbalance(&t, &Selection::all());
        let by_rank: Vec<f64> = i.by_rank.iter().map(|r| r.compute_s).collect();
        assert_eq!(by_rank, vec![80e-9, 15e-9]);
    }

    #[test]
    fn hand_made_profile() {
        // Rank 0: Send [0,10) compute 30 Send [40,45); rank 1: Recv [0,20) compute 5
        // Allreduce [25, 45).
        let mut t = Trace::new("test", "t", 2);
        let a = t.push_call(0, "MPI_Send", 0, 10, NO_CALLPATH, 0);
        t.push_p2p(0, a, a, P2pDir::Send, 1, 0, 0, 100);
        let b = t.push_call(0, "MPI_Send", 40, 45, NO_CALLPATH, 0);
        t.push_p2p(0, b, b, P2pDir::Send, 1, 0, 0, 1000);
        let c = t.push_call(1, "MPI_Recv", 0, 20, NO_CALLPATH, 0);
        t.push_p2p(1, c, c, P2pDir::Recv, 0, 0, 0, 100);
        let d = t.push_call(1, "MPI_Allreduce", 25, 45, NO_CALLPATH, 0);
        t.push_collective(1, d, CollectiveOp::Allreduce, 0, NO_ROOT, 8, 8);
        let p = profile_trace(&t, &ProfileOptions { time_bins: 3 });
        assert_eq!(p.active_ranks, 2);
        assert!((p.duration_s - 45e-9).abs() < 1e-18);
        let send = p.functions.iter().find(|f| f.name == "MPI_Send").unwrap();
        assert_eq!(send.calls, 2);
        assert!((send.total_s - 15e-9).abs() < 1e-18);
        assert_eq!((send.min_rank, send.max_rank), (1, 0));
        assert!((send.min_rank_s - 0.0).abs() < 1e-18);
        assert!((send.share - 15.0 / 90.0).abs() < 1e-12);
        assert_eq!(p.functions[0].name, "MPI_Allreduce"); // 20 ns, ties broken by name
        assert!((p.compute_s[0] - 30e-9).abs() < 1e-18);
        assert!((p.compute_s[1] - 5e-9).abs() < 1e-18);
        assert_eq!(
            p.message_sizes.p2p,
            vec![
                SizeBin {
                    lo_bytes: 64,
                    hi_bytes: 128,
                    count: 1,
                    bytes: 100
                },
                SizeBin {
                    lo_bytes: 512,
                    hi_bytes: 1024,
                    count: 1,
                    bytes: 1000
                },
            ]
        );
        assert_eq!(
            p.message_sizes.collective,
            vec![SizeBin {
                lo_bytes: 8,
                hi_bytes: 16,
                count: 1,
                bytes: 8
            }]
        );
        // Bins of 15 ns: sends at 0 and 40, allreduce at 25.
        assert_eq!(p.bytes_over_time.p2p_bytes, vec![100, 0, 1000]);
        assert_eq!(p.bytes_over_time.collective_bytes, vec![0, 8, 0]);
    }
}
