//! The overview of a trace computed as a fold over its ranks, one rank at a time, so that a
//! trace larger than memory is summarised without ever holding its whole event model
//! (`docs/large-traces.md`).
//!
//! [`OverviewBuilder::add_rank`] takes one rank's calls and operations (a [`RankTrace`] whose
//! function ids a name table resolves) and folds them into state whose size depends on the
//! number of ranks, functions, time bins and communicating pairs, never on the number of events:
//!
//! * **summary counts**: calls per rank and per MPI function, point-to-point sends, receives and
//!   bytes, collective operations and bytes, the run's span — the same numbers as
//!   [`crate::summary::summarize`] (which also matches messages; the overview does not);
//! * **communication matrix**: bytes and messages of the sends by (sender, receiver), sparse —
//!   the same matrix as [`CommMatrix::from_trace`];
//! * **profile of the MPI functions**: calls, total time, per-rank minimum, mean and maximum —
//!   the same [`FunctionProfile`]s as [`crate::profile::profile_trace`];
//! * **activity over time**: per rank and per time bin, the nanoseconds spent inside MPI calls,
//!   in a fixed number of bins. The bins start as the caller's expected span cut in equal parts;
//!   a rank reaching outside them doubles the bin width (pairs of bins merge) until it fits, so
//!   the memory stays ranks × bins whatever the trace, and bins never move once filled;
//! * **phase sketch**: consecutive bins with the same dominant activity (the MPI function with
//!   most time summed over the ranks, or computation when less than half of the active rank
//!   time is inside MPI), short runs merged into their neighbours.

use crate::matrix::{CommMatrix, Entry};
use crate::profile::FunctionProfile;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use tracelogic_model::{P2pDir, Rank, RankTrace, Time, Trace};

/// Default number of time bins of the activity histogram.
pub const DEFAULT_BINS: usize = 1024;
/// Most time bins a histogram may have (memory is ranks × bins × 8 bytes).
pub const MAX_BINS: usize = 1 << 16;

/// Folds ranks into an [`Overview`]. Several builders over disjoint blocks of ranks combine into
/// the builder of all of them ([`OverviewBuilder::note_span`], [`OverviewBuilder::merge`]):
/// the overview of a trace read by parts (`tracelogic-mpi overview`, docs/mpi.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OverviewBuilder {
    ranks: u32,
    bins: usize,
    /// Function names and their position in the per-function tables.
    functions: Vec<String>,
    function_index: HashMap<String, usize>,
    calls_by_function: Vec<u64>,
    total_by_function: Vec<u64>,
    /// Per function, per rank: ns inside the function.
    rank_time: Vec<Vec<u64>>,
    /// Per function, per bin: ns inside the function summed over the ranks.
    bin_time: Vec<Vec<u64>>,
    calls_per_rank: Vec<u64>,
    spans: Vec<Option<(Time, Time)>>,
    p2p_messages: u64,
    p2p_bytes: u64,
    p2p_receives: u64,
    collective_ops: u64,
    collective_bytes: u64,
    entries: Vec<Entry>,
    /// Absolute time of the first bin's start and the width of a bin (ns); `None` until a rank
    /// with events or a span hint fixed them.
    grid: Option<(Time, u64)>,
    /// Per rank, per bin: ns inside MPI calls (empty rows for ranks not added yet).
    mpi: Vec<Vec<u64>>,
    /// Scratch row: ns the rank being added sends to each receiver.
    row_bytes: Vec<u64>,
    row_messages: Vec<u64>,
}

/// One stretch of the phase sketch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SketchPhase {
    /// First bin of the stretch.
    pub first_bin: usize,
    /// Bins in the stretch.
    pub bins: usize,
    /// The dominant MPI function, or `computation`.
    pub activity: String,
    /// Per mille of the active rank time inside MPI over the stretch.
    pub mpi_permille: u16,
}

/// Per-rank activity over time in fixed bins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Activity {
    /// Start of the first bin, ns from the run's first event (negative when the bins start
    /// before it).
    pub start_ns: i64,
    /// Width of a bin in ns.
    pub bin_ns: u64,
    /// Number of bins.
    pub bins: usize,
    /// Per bin: per mille of the ranks' active time inside MPI (all ranks together).
    pub mpi_permille: Vec<u16>,
    /// Per rank, per bin: per mille of the rank's time in the bin (while it was recording)
    /// spent inside MPI; 0 where it recorded nothing.
    pub rank_mpi_permille: Vec<Vec<u16>>,
}

/// The overview of a trace: what a streaming first pass computes (module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overview {
    /// Format it was read from.
    pub format: String,
    /// Where it came from.
    pub source: String,
    /// World ranks.
    pub ranks: u32,
    /// MPI calls.
    pub calls: u64,
    /// MPI calls per rank.
    pub calls_per_rank: Vec<u64>,
    /// MPI calls per function name.
    pub calls_by_kind: BTreeMap<String, u64>,
    /// Bytes sent point to point.
    pub p2p_bytes: u64,
    /// Point-to-point sends.
    pub p2p_messages: u64,
    /// Point-to-point receives.
    pub p2p_receives: u64,
    /// Collective operations (one per rank taking part).
    pub collective_ops: u64,
    /// Bytes contributed to collectives.
    pub collective_bytes: u64,
    /// One-sided (RMA) data-movement calls, counted but not modelled as messages (as in
    /// [`Summary::one_sided_calls`](crate::summary::Summary::one_sided_calls)).
    #[serde(default)]
    pub one_sided_calls: u64,
    /// First event (ns in the trace's clock).
    pub start_ns: u64,
    /// Last event.
    pub end_ns: u64,
    /// `end_ns - start_ns` in seconds.
    pub duration_s: f64,
    /// Ranks that made at least one call.
    pub active_ranks: u32,
    /// Time inside MPI over all ranks, s.
    pub mpi_s: f64,
    /// The MPI functions, most time first (as `profile` lists them).
    pub functions: Vec<FunctionProfile>,
    /// Point-to-point traffic by (sender, receiver).
    pub matrix: CommMatrix,
    /// Activity over time.
    pub activity: Activity,
    /// The coarse phase sketch.
    pub phases: Vec<SketchPhase>,
    /// What the reader noticed.
    pub warnings: Vec<String>,
}

impl OverviewBuilder {
    /// A builder for a trace of `ranks` ranks with `bins` time bins (clamped to 2..=[`MAX_BINS`],
    /// even). `span` is the expected span of the run (absolute ns), when the format says it
    /// up front: the bins then cut it in equal parts.
    pub fn new(ranks: u32, bins: usize, span: Option<(Time, Time)>) -> OverviewBuilder {
        let bins = (bins.clamp(2, MAX_BINS) + 1) & !1;
        let mut b = OverviewBuilder {
            ranks,
            bins,
            functions: Vec::new(),
            function_index: HashMap::new(),
            calls_by_function: Vec::new(),
            total_by_function: Vec::new(),
            rank_time: Vec::new(),
            bin_time: Vec::new(),
            calls_per_rank: vec![0; ranks as usize],
            spans: vec![None; ranks as usize],
            p2p_messages: 0,
            p2p_bytes: 0,
            p2p_receives: 0,
            collective_ops: 0,
            collective_bytes: 0,
            entries: Vec::new(),
            grid: None,
            mpi: vec![Vec::new(); ranks as usize],
            row_bytes: vec![0; ranks as usize],
            row_messages: vec![0; ranks as usize],
        };
        if let Some((a, z)) = span.filter(|(a, z)| z > a) {
            b.grid = Some((a, (z - a).div_ceil(bins as u64).max(1)));
        }
        b
    }

    /// Bytes the builder holds (its tables), for the memory claims.
    pub fn heap_bytes(&self) -> usize {
        let rows: usize = self.mpi.iter().map(|r| r.capacity() * 8).sum();
        let funcs: usize = self
            .rank_time
            .iter()
            .chain(&self.bin_time)
            .map(|r| r.capacity() * 8)
            .sum();
        rows + funcs + self.entries.capacity() * std::mem::size_of::<Entry>() + self.ranks as usize * 48
    }

    fn function(&mut self, name: &str) -> usize {
        if let Some(&i) = self.function_index.get(name) {
            return i;
        }
        let i = self.functions.len();
        self.functions.push(name.to_owned());
        self.function_index.insert(name.to_owned(), i);
        self.calls_by_function.push(0);
        self.total_by_function.push(0);
        self.rank_time.push(vec![0; self.ranks as usize]);
        self.bin_time.push(vec![0; self.bins]);
        i
    }

    /// Widen the bins until `[a, b]` fits.
    fn cover(&mut self, a: Time, b: Time) {
        let bins = self.bins as u64;
        let (mut origin, mut width) = match self.grid {
            Some(g) => g,
            None => {
                let g = (a, (b - a + 1).div_ceil(bins).max(1));
                self.grid = Some(g);
                return;
            }
        };
        while a < origin || b >= origin.saturating_add(width.saturating_mul(bins)) {
            // Twice as wide; when the range must grow to the left, it moves left by the old
            // range's length (or to 0), so the old range lies inside the new one.
            let new_origin = if a < origin {
                origin.saturating_sub(width.saturating_mul(bins))
            } else {
                origin
            };
            let new_width = width.saturating_mul(2);
            let last = self.bins - 1;
            let at = |i: usize| (((origin + i as u64 * width - new_origin) / new_width) as usize).min(last);
            let merge = |row: &mut Vec<u64>| {
                if row.is_empty() {
                    return;
                }
                let mut out = vec![0u64; row.len()];
                for (i, v) in row.iter().enumerate() {
                    out[at(i)] += v;
                }
                *row = out;
            };
            self.mpi.iter_mut().for_each(merge);
            self.bin_time.iter_mut().for_each(merge);
            origin = new_origin;
            width = new_width;
        }
        self.grid = Some((origin, width));
    }

    /// Add `ns` inside function `f` over `[enter, exit)` to rank `r`'s bins.
    fn spread(&mut self, r: usize, f: usize, enter: Time, exit: Time) {
        let Some((origin, width)) = self.grid else {
            return;
        };
        let last = self.bins - 1;
        let bin = |t: Time| ((t.saturating_sub(origin) / width) as usize).min(last);
        let (first, end) = (bin(enter), bin(exit));
        let row = &mut self.mpi[r];
        let per_func = &mut self.bin_time[f];
        if first == end {
            row[first] += exit - enter;
            per_func[first] += exit - enter;
            return;
        }
        for k in first..=end {
            let lo = (origin + k as u64 * width).max(enter);
            let hi = (origin + (k as u64 + 1) * width).min(exit);
            let d = hi.saturating_sub(lo);
            row[k] += d;
            per_func[k] += d;
        }
    }

    /// The builder of the ranks `owned` of `trace`, whose other ranks only give their spans (a
    /// process of `tracelogic-mpi` holds their spans, not their events), in `bins` bins from
    /// `span`: each other rank's span is noted where the serial order adds that rank, so the
    /// builders of consecutive blocks merged in rank order ([`OverviewBuilder::merge`]) are
    /// the builder that added every rank.
    pub fn of_ranks(
        trace: &Trace,
        owned: std::ops::Range<Rank>,
        bins: usize,
        span: Option<(Time, Time)>,
    ) -> OverviewBuilder {
        let mut b = OverviewBuilder::new(trace.num_ranks(), bins, span);
        for rt in &trace.ranks {
            if owned.contains(&rt.rank) {
                b.add_rank(rt, |f| trace.functions.name(f));
            } else {
                b.note_span(rt.span);
            }
        }
        b
    }

    /// A rank added to another builder had the span `span`: widen the bins as adding it here
    /// would. A builder of some ranks that is told every other rank's span where the serial
    /// order adds that rank has the serial builder's bins at every step, so its rows are binned
    /// (and re-binned as the bins widen) exactly as there, and [`OverviewBuilder::merge`] adds
    /// the parts up to the serial builder.
    pub fn note_span(&mut self, span: Option<(Time, Time)>) {
        if let Some((a, b)) = span {
            self.cover(a, b);
        }
    }

    /// Add the ranks of `other` (a builder of other ranks, with the same ranks and bins).
    /// Merging the builders of consecutive blocks of ranks in rank order gives the builder that
    /// added every rank in rank order: the same function order (first seen first), matrix
    /// entries and sums.
    ///
    /// The two grids of bins are first widened to cover each other: exact when both builders
    /// started from the same span (an announced span, as OTF2's, or [`OverviewBuilder::note_span`]
    /// of every other rank), since their bins are then the same bins or unions of pairs of
    /// them, and a widened bin holds exactly what a bin that wide would have received. Builders
    /// whose grids still differ (spans not shared) are an error.
    pub fn merge(&mut self, mut other: OverviewBuilder) -> Result<(), String> {
        if (self.ranks, self.bins) != (other.ranks, other.bins) {
            return Err(format!(
                "a part of {} ranks and {} bins does not fit a builder of {} ranks and {} bins",
                other.ranks, other.bins, self.ranks, self.bins
            ));
        }
        if let (Some(a), Some(b)) = (self.grid, other.grid) {
            let bins = self.bins as u64;
            let end = |(origin, width): (Time, u64)| origin.saturating_add(width.saturating_mul(bins)) - 1;
            if a != b {
                self.cover(b.0, end(b));
                other.cover(a.0, end(a));
            }
        }
        match (self.grid, other.grid) {
            (Some(a), Some(b)) if a != b => {
                return Err(format!("the parts' bins differ: {a:?} and {b:?} (origin, width)"));
            }
            (None, Some(g)) => self.grid = Some(g),
            _ => {}
        }
        let n = self.ranks as usize;
        for r in 0..n {
            let taken = self.spans[r].is_some() || !self.mpi[r].is_empty();
            let theirs = other.spans[r].is_some() || !other.mpi[r].is_empty();
            if taken && theirs {
                return Err(format!("rank {r} is in two parts"));
            }
        }
        let OverviewBuilder {
            functions,
            calls_by_function,
            total_by_function,
            rank_time,
            bin_time,
            calls_per_rank,
            spans,
            mpi,
            entries,
            ..
        } = other;
        for (f, name) in functions.iter().enumerate() {
            let at = self.function(name);
            self.calls_by_function[at] += calls_by_function[f];
            self.total_by_function[at] += total_by_function[f];
            for (mine, theirs) in self.rank_time[at].iter_mut().zip(&rank_time[f]) {
                *mine += theirs;
            }
            for (mine, theirs) in self.bin_time[at].iter_mut().zip(&bin_time[f]) {
                *mine += theirs;
            }
        }
        for (r, ((calls, span), row)) in calls_per_rank.into_iter().zip(spans).zip(mpi).enumerate() {
            self.calls_per_rank[r] += calls;
            if span.is_some() {
                self.spans[r] = span;
            }
            if !row.is_empty() {
                self.mpi[r] = row;
            }
        }
        self.p2p_messages += other.p2p_messages;
        self.p2p_bytes = self.p2p_bytes.saturating_add(other.p2p_bytes);
        self.p2p_receives += other.p2p_receives;
        self.collective_ops += other.collective_ops;
        self.collective_bytes = self.collective_bytes.saturating_add(other.collective_bytes);
        self.entries.extend(entries);
        Ok(())
    }

    /// Fold one rank in. `name(f)` is the name of function id `f` of the rank's calls. Each rank
    /// is added once (a rank added again is ignored).
    pub fn add_rank<'n>(&mut self, rt: &RankTrace, name: impl Fn(u32) -> &'n str) {
        let r = rt.rank as usize;
        if r >= self.ranks as usize || self.spans[r].is_some() || !self.mpi[r].is_empty() {
            return;
        }
        self.spans[r] = rt.span;
        if let Some((a, b)) = rt.span {
            self.cover(a, b);
        }
        self.mpi[r] = vec![0; self.bins];
        let c = &rt.calls;
        let len = c.func.len().min(c.enter.len()).min(c.duration.len());
        self.calls_per_rank[r] = c.func.len() as u64;
        // Function ids of this rank → positions in the tables, resolved once per id.
        let mut local: Vec<usize> = Vec::new();
        for i in 0..len {
            let id = c.func[i] as usize;
            if local.len() <= id {
                local.resize(id + 1, usize::MAX);
            }
            if local[id] == usize::MAX {
                local[id] = self.function(name(id as u32));
            }
            let f = local[id];
            let (enter, exit) = (c.enter(i), c.exit(i));
            let d = exit.saturating_sub(enter);
            self.calls_by_function[f] += 1;
            self.total_by_function[f] += d;
            self.rank_time[f][r] += d;
            if d > 0 {
                self.spread(r, f, enter, exit);
            }
        }
        // Calls beyond the shortest column count for the summary only, as there.
        for &id in c.func.iter().skip(len) {
            let id = id as usize;
            if local.len() <= id {
                local.resize(id + 1, usize::MAX);
            }
            if local[id] == usize::MAX {
                local[id] = self.function(name(id as u32));
            }
            self.calls_by_function[local[id]] += 1;
        }
        let p = &rt.p2p;
        let n = self.ranks;
        let mut peers: Vec<u32> = Vec::new();
        for i in 0..p.len() {
            match p.dir[i] {
                P2pDir::Send => {
                    self.p2p_messages += 1;
                    self.p2p_bytes = self.p2p_bytes.saturating_add(p.bytes.at(i));
                    let peer = p.peer[i];
                    if peer < n {
                        let at = peer as usize;
                        if self.row_messages[at] == 0 {
                            peers.push(peer);
                        }
                        self.row_bytes[at] = self.row_bytes[at].saturating_add(p.bytes.at(i));
                        self.row_messages[at] += 1;
                    }
                }
                P2pDir::Recv => self.p2p_receives += 1,
            }
        }
        peers.sort_unstable();
        for peer in peers {
            let at = peer as usize;
            self.entries.push(Entry {
                from: rt.rank,
                to: peer,
                bytes: self.row_bytes[at],
                messages: self.row_messages[at],
            });
            self.row_bytes[at] = 0;
            self.row_messages[at] = 0;
        }
        self.collective_ops += rt.collectives.len() as u64;
        self.collective_bytes = rt
            .collectives
            .bytes_sent
            .iter()
            .fold(self.collective_bytes, |t, &b| t.saturating_add(b));
    }

    /// The overview of the ranks added. `format`, `source` and `warnings` are the reader's.
    pub fn finish(self, format: &str, source: &str, warnings: Vec<String>) -> Overview {
        let n = self.ranks as usize;
        let (start, end) = self
            .spans
            .iter()
            .flatten()
            .copied()
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
            .unwrap_or((0, 0));
        let active: Vec<bool> = self.calls_per_rank.iter().map(|&c| c > 0).collect();
        let active_ranks = active.iter().filter(|&&a| a).count() as u32;
        let run_ns = end.saturating_sub(start);
        let rank_time_s = run_ns as f64 * 1e-9 * active_ranks as f64;
        let mut functions: Vec<FunctionProfile> = (0..self.functions.len())
            .filter(|&f| self.calls_by_function[f] > 0)
            .map(|f| {
                let row = &self.rank_time[f];
                let (mut min_rank, mut max_rank) = (Rank::MAX, Rank::MAX);
                let (mut lo, mut hi) = (u64::MAX, 0u64);
                for (r, &t) in row.iter().enumerate() {
                    if !active[r] {
                        continue;
                    }
                    if t < lo {
                        lo = t;
                        min_rank = r as Rank;
                    }
                    if t > hi || max_rank == Rank::MAX {
                        hi = t;
                        max_rank = r as Rank;
                    }
                }
                let calls = self.calls_by_function[f];
                let total_s = self.total_by_function[f] as f64 / 1e9;
                FunctionProfile {
                    name: self.functions[f].clone(),
                    calls,
                    total_s,
                    mean_s: total_s / calls as f64,
                    share: if rank_time_s > 0.0 { total_s / rank_time_s } else { 0.0 },
                    min_rank_s: lo as f64 / 1e9,
                    mean_rank_s: total_s / active_ranks.max(1) as f64,
                    max_rank_s: hi as f64 / 1e9,
                    min_rank,
                    max_rank,
                }
            })
            .collect();
        functions.sort_by(|a, b| b.total_s.total_cmp(&a.total_s).then_with(|| a.name.cmp(&b.name)));
        let calls_by_kind: BTreeMap<String, u64> = (0..self.functions.len())
            .filter(|&f| self.calls_by_function[f] > 0)
            .map(|f| (self.functions[f].clone(), self.calls_by_function[f]))
            .collect();
        let one_sided_calls = calls_by_kind
            .iter()
            .filter(|(name, _)| tracelogic_model::is_one_sided(name))
            .map(|(_, &n)| n)
            .sum();
        let matrix = CommMatrix::from_entries(self.ranks, self.entries).unwrap_or_else(|_| {
            CommMatrix::from_entries(self.ranks, std::iter::empty()).expect("an empty matrix is valid")
        });

        // Activity: per rank and bin, the MPI share of the time the rank was recording.
        let (origin, width) = self.grid.unwrap_or((start, 1));
        let bins = self.bins;
        let bounds = |k: usize| (origin + k as u64 * width, origin + (k as u64 + 1) * width);
        let permille = |num: u64, den: u64| {
            if den == 0 {
                0
            } else {
                ((num as u128 * 1000 / den as u128).min(1000)) as u16
            }
        };
        let mut live_total = vec![0u64; bins];
        let mut mpi_total = vec![0u64; bins];
        let mut rank_mpi_permille = Vec::with_capacity(n);
        for r in 0..n {
            let row = &self.mpi[r];
            let Some((a, b)) = self.spans[r].filter(|_| !row.is_empty()) else {
                rank_mpi_permille.push(vec![0; bins]);
                continue;
            };
            let mut out = vec![0u16; bins];
            for k in 0..bins {
                let (lo, hi) = bounds(k);
                let live = hi.min(b).saturating_sub(lo.max(a));
                live_total[k] += live;
                mpi_total[k] += row[k];
                out[k] = permille(row[k], live);
            }
            rank_mpi_permille.push(out);
        }
        let mpi_permille: Vec<u16> = (0..bins).map(|k| permille(mpi_total[k], live_total[k])).collect();
        let activity_of = |k: usize| -> (String, bool) {
            let live = live_total[k];
            if live == 0 {
                return ("idle".into(), false);
            }
            if mpi_total[k] * 2 < live {
                return ("computation".into(), true);
            }
            let f = (0..self.functions.len()).max_by_key(|&f| (self.bin_time[f][k], std::cmp::Reverse(f)));
            (f.map_or("computation".into(), |f| self.functions[f].clone()), true)
        };
        let phases = sketch(bins, activity_of, &mpi_total, &live_total, permille);
        Overview {
            format: format.to_owned(),
            source: source.to_owned(),
            ranks: self.ranks,
            calls: self.calls_per_rank.iter().sum(),
            calls_per_rank: self.calls_per_rank,
            calls_by_kind,
            p2p_bytes: self.p2p_bytes,
            p2p_messages: self.p2p_messages,
            p2p_receives: self.p2p_receives,
            collective_ops: self.collective_ops,
            collective_bytes: self.collective_bytes,
            one_sided_calls,
            start_ns: start,
            end_ns: end,
            duration_s: run_ns as f64 / 1e9,
            active_ranks,
            mpi_s: self.total_by_function.iter().sum::<u64>() as f64 / 1e9,
            functions,
            matrix,
            activity: Activity {
                start_ns: origin as i64 - start as i64,
                bin_ns: width,
                bins,
                mpi_permille,
                rank_mpi_permille,
            },
            phases,
            warnings,
        }
    }
}

/// Runs of bins with one activity; runs shorter than bins / 64 join the previous run (or the
/// next one at the start); idle bins at both ends are dropped.
fn sketch(
    bins: usize,
    activity_of: impl Fn(usize) -> (String, bool),
    mpi: &[u64],
    live: &[u64],
    permille: impl Fn(u64, u64) -> u16,
) -> Vec<SketchPhase> {
    let mut runs: Vec<(usize, usize, String)> = Vec::new();
    for k in 0..bins {
        let (a, _) = activity_of(k);
        match runs.last_mut() {
            Some((_, len, act)) if *act == a => *len += 1,
            _ => runs.push((k, 1, a)),
        }
    }
    let shortest = (bins / 64).max(1);
    let mut merged: Vec<(usize, usize, String)> = Vec::new();
    for run in runs {
        match merged.last_mut() {
            Some(last) if run.1 < shortest && run.2 != "idle" => last.1 += run.1,
            Some(last) if last.1 < shortest && last.2 != "idle" && run.2 != "idle" => {
                *last = (last.0, last.1 + run.1, run.2);
            }
            Some(last) if last.2 == run.2 => last.1 += run.1,
            _ => merged.push(run),
        }
    }
    merged
        .into_iter()
        .filter(|(_, _, a)| a != "idle")
        .map(|(first, len, activity)| {
            let m: u64 = mpi[first..first + len].iter().sum();
            let l: u64 = live[first..first + len].iter().sum();
            SketchPhase {
                first_bin: first,
                bins: len,
                activity,
                mpi_permille: permille(m, l),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{profile_trace, ProfileOptions};
    use crate::summary::summarize;
    use tracelogic_model::{match_messages, CollectiveOp, Selection, Trace, NO_CALLPATH, NO_ROOT};

    fn overview_of(t: &Trace, bins: usize, hint: Option<(Time, Time)>) -> Overview {
        let mut b = OverviewBuilder::new(t.num_ranks(), bins, hint);
        // Ranks in a scrambled order: the answer must not depend on it.
        for r in [1usize, 0, 2] {
            b.add_rank(&t.ranks[r], |f| t.functions.name(f));
        }
        b.finish(&t.format, &t.source, t.warnings.clone())
    }

    fn small() -> Trace {
        let mut t = Trace::new("test", "t", 3);
        let a = t.push_call(0, "MPI_Send", 0, 10, NO_CALLPATH, 0);
        t.push_p2p(0, a, a, P2pDir::Send, 1, 0, 0, 100);
        let b = t.push_call(0, "MPI_Send", 40, 45, NO_CALLPATH, 0);
        t.push_p2p(0, b, b, P2pDir::Send, 2, 0, 0, 1000);
        let c = t.push_call(1, "MPI_Recv", 0, 20, NO_CALLPATH, 0);
        t.push_p2p(1, c, c, P2pDir::Recv, 0, 0, 0, 100);
        t.push_call(1, "MPI_Accumulate", 21, 22, NO_CALLPATH, 0);
        let d = t.push_call(1, "MPI_Allreduce", 25, 45, NO_CALLPATH, 0);
        t.push_collective(1, d, CollectiveOp::Allreduce, 0, NO_ROOT, 8, 8);
        let e = t.push_call(2, "MPI_Recv", 1000, 1400, NO_CALLPATH, 0);
        t.push_p2p(2, e, e, P2pDir::Recv, 0, 0, 0, 1000);
        t
    }

    #[test]
    fn counts_matrix_and_profile_are_the_full_analyses() {
        let t = small();
        for hint in [None, Some((0, 1400)), Some((500, 600))] {
            let o = overview_of(&t, 8, hint);
            let s = summarize(&t, &match_messages(&t));
            assert_eq!(
                (o.calls, &o.calls_per_rank, &o.calls_by_kind),
                (s.calls, &s.calls_per_rank, &s.calls_by_kind)
            );
            assert_eq!(
                (
                    o.p2p_bytes,
                    o.p2p_messages,
                    o.p2p_receives,
                    o.collective_ops,
                    o.collective_bytes
                ),
                (
                    s.p2p_bytes,
                    s.p2p_messages,
                    s.p2p_receives,
                    s.collective_ops,
                    s.collective_bytes
                )
            );
            assert_eq!((o.start_ns, o.end_ns), (s.start_ns, s.end_ns));
            assert_eq!((o.one_sided_calls, s.one_sided_calls), (1, 1));
            assert_eq!(o.matrix, CommMatrix::from_trace(&t, &Selection::all()));
            assert_eq!(o.functions, profile_trace(&t, &ProfileOptions::default()).functions);
            // The bins hold every ns inside MPI, whatever the hint.
            let (origin, width) = (o.activity.start_ns, o.activity.bin_ns);
            assert!(
                origin <= 0 && origin + (width * o.activity.bins as u64) as i64 >= 1400,
                "{hint:?}"
            );
            assert!(o.activity.bins == 8);
        }
    }

    /// The builders of consecutive blocks, told the other ranks' spans in rank order and merged
    /// in rank order, give the builder that added every rank in rank order: the same overview,
    /// bins included, also when the bins widen to the left (hint after the run) and right.
    #[test]
    fn parts_merge_to_the_serial_builder() {
        let t = small();
        for hint in [
            None,
            Some((0, 1400)),
            Some((500, 600)),
            Some((1200, 1300)),
            Some((0, 3)),
        ] {
            for bins in [2, 4, 8] {
                let mut serial = OverviewBuilder::new(t.num_ranks(), bins, hint);
                for rt in &t.ranks {
                    serial.add_rank(rt, |f| t.functions.name(f));
                }
                let serial = serial.finish(&t.format, &t.source, t.warnings.clone());
                let whole: Vec<std::ops::Range<u32>> = std::iter::once(0..3).collect();
                for cuts in [whole, vec![0..1, 1..3], vec![0..2, 2..3], vec![0..1, 1..2, 2..3]] {
                    let parts = cuts
                        .iter()
                        .map(|block| OverviewBuilder::of_ranks(&t, block.clone(), bins, hint));
                    let mut parts = parts.collect::<Vec<_>>().into_iter();
                    let mut merged = parts.next().unwrap();
                    for p in parts {
                        merged.merge(p).unwrap();
                    }
                    let merged = merged.finish(&t.format, &t.source, t.warnings.clone());
                    assert_eq!(merged, serial, "hint {hint:?}, {bins} bins, blocks {cuts:?}");
                }
            }
        }
        // A rank in two parts, and parts of different bins, are refused.
        let mut a = OverviewBuilder::new(3, 4, None);
        a.add_rank(&t.ranks[0], |f| t.functions.name(f));
        let mut b = OverviewBuilder::new(3, 4, None);
        b.add_rank(&t.ranks[0], |f| t.functions.name(f));
        assert!(a.clone().merge(b).is_err());
        assert!(a.merge(OverviewBuilder::new(3, 8, None)).is_err());
    }

    #[test]
    fn activity_and_sketch() {
        let t = small();
        let o = overview_of(&t, 4, Some((0, 1600)));
        assert_eq!(o.activity.bin_ns, 400);
        // Rank 2 is inside MPI_Recv over [1000, 1400): bins 2 (200 of 200 live ns) and 3.
        assert_eq!(o.activity.rank_mpi_permille[2], vec![0, 0, 1000, 1000]);
        // Rank 0: 15 ns of MPI over its 45 ns.
        assert_eq!(o.activity.rank_mpi_permille[0][0], 333);
        assert!(!o.phases.is_empty());
        assert_eq!(o.phases.last().unwrap().activity, "MPI_Recv");
    }
}
