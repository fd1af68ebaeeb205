//! Answering a [`TimelineQuery`] ([`timeline`]): per lane and pixel column the dominant
//! function and busy share, from the index's bins when a column spans at least two level-0 bins
//! (level of detail) or exactly from the calls otherwise, and the calls at least a column wide.

use super::*;

/// Pixel column edges: `edge(k) = from + ⌊k·(to − from)/pixels⌋`.
pub(super) fn edge(from: u64, to: u64, pixels: u32, k: u32) -> u64 {
    from + ((to - from) as u128 * k as u128 / pixels as u128) as u64
}

/// Small per-column accumulator of (function, covered).
#[derive(Default)]
pub(super) struct Acc {
    pub(super) items: Vec<(u32, f64)>,
    pub(super) busy: f64,
}

impl Acc {
    pub(super) fn clear(&mut self) {
        self.items.clear();
        self.busy = 0.0;
    }
    pub(super) fn add(&mut self, f: u32, c: f64) {
        match self.items.iter_mut().find(|a| a.0 == f) {
            Some(a) => a.1 += c,
            None => self.items.push((f, c)),
        }
    }
    /// The function with the most coverage (lowest id on a tie), or [`NONE`].
    pub(super) fn dominant(&self) -> u32 {
        let mut best = (NONE, 0.0);
        for &(f, c) in &self.items {
            if c > best.1 || (c == best.1 && c > 0.0 && f < best.0) {
                best = (f, c);
            }
        }
        best.0
    }
}

/// Answer `query` on `trace` with `index` (built from the same trace). The logical clock needs
/// [`TimelineIndex::ensure_logical`] first; errors name what is wrong with the query.
pub fn timeline(
    trace: &Trace,
    matching: &Matching,
    index: &TimelineIndex,
    query: &TimelineQuery,
) -> Result<TimelineTile, String> {
    let clock = index
        .clock(query.clock)
        .ok_or("the logical steps are not computed (TimelineIndex::ensure_logical)")?;
    if query.pixels == 0 || query.pixels > MAX_PIXELS {
        return Err(format!(
            "pixels must be between 1 and {MAX_PIXELS}, not {}",
            query.pixels
        ));
    }
    let n = trace.num_ranks();
    if index.time.pyramids.len() != n as usize || index.messages != matching.messages.len() {
        return Err("the timeline index belongs to another trace".into());
    }
    let ranks: Vec<Rank> = if query.ranks.is_empty() {
        (0..n).collect()
    } else {
        if let Some(&bad) = query.ranks.iter().find(|&&r| r >= n) {
            return Err(format!("rank {bad} is not in the trace (it has {n} ranks)"));
        }
        query.ranks.clone()
    };
    let from = query.from;
    let to = match query.to {
        Some(t) if t > from => t,
        _ => clock.extent.max(from + 1),
    };
    let pixels = query.pixels;
    let per_lane = if query.rows == 0 || ranks.len() as u32 <= query.rows {
        1
    } else {
        ranks.len().div_ceil(query.rows as usize)
    };
    let lanes: Vec<Lane> = ranks.chunks(per_lane).map(|c| Lane { ranks: c.to_vec() }).collect();
    let pw = (to - from) as f64 / pixels as f64;
    let funcs = |r: usize, i: usize| trace.ranks[r].calls.func[i];
    let (func, busy, resolution) = aggregate(
        trace,
        index,
        query.clock,
        &clock.pyramids,
        &funcs,
        &lanes,
        from,
        to,
        pixels,
    );
    let group_index = match query.colour {
        Colour::Function => None,
        c => Some(
            index
                .groups
                .get(&c)
                .ok_or_else(|| format!("no {} of each call was given (TimelineIndex::set_groups)", c.name()))?,
        ),
    };
    let group = match group_index {
        None => Vec::new(),
        Some(g) => {
            let pyramids = match query.clock {
                Clock::Time => &g.time,
                Clock::Logical => g.logical.as_ref().ok_or("the logical steps are not computed")?,
            };
            let label = |r: usize, i: usize| g.groups.of_call[r][i];
            aggregate(trace, index, query.clock, pyramids, &label, &lanes, from, to, pixels).0
        }
    };
    let mut shown = vec![false; n as usize];
    for &r in &ranks {
        shown[r as usize] = true;
    }
    let (mut calls, calls_left_out) = wide_calls(trace, index, clock, query, &ranks, from, to, pw);
    if let Some(g) = group_index {
        for c in &mut calls {
            let (r, i) = (c.rank as usize, c.index as usize);
            c.group = g.groups.of_call[r][i];
            c.occurrence = g.groups.occurrence.get(r).map_or(NONE, |o| o[i]);
        }
    }
    let (messages, messages_left_out) = messages_in(trace, matching, index, query, &ranks, &shown, from, to);
    let (collectives, collectives_left_out) = collectives_in(index, clock, query, &shown, from, to);
    Ok(TimelineTile {
        schema: SCHEMA.into(),
        clock: query.clock,
        from,
        to,
        extent: clock.extent,
        pixels,
        lanes,
        functions: trace.functions.names().to_vec(),
        func,
        busy,
        colour: query.colour,
        group,
        groups: group_index.map(|g| g.groups.names.clone()).unwrap_or_default(),
        resolution,
        calls,
        calls_left_out,
        messages,
        messages_left_out,
        collectives,
        collectives_left_out,
    })
}

/// Per lane then column of `[from, to)` on `pixels` columns: the label covering most of the
/// column (`label(rank, call)`: the function, or a group) and the busy share, from the bins of
/// `pyramids` (built with the same labels) where a column is at least two level-0 bins wide,
/// else exactly from the calls; and the widest bin width used (0: exact throughout).
#[allow(clippy::too_many_arguments)]
pub(super) fn aggregate(
    trace: &Trace,
    index: &TimelineIndex,
    clock: Clock,
    pyramids: &[Pyramid],
    label: &dyn Fn(usize, usize) -> u32,
    lanes: &[Lane],
    from: u64,
    to: u64,
    pixels: u32,
) -> (Vec<u32>, Vec<f32>, u64) {
    let pw = (to - from) as f64 / pixels as f64;
    let mut func = vec![NONE; lanes.len() * pixels as usize];
    let mut busy = vec![0f32; lanes.len() * pixels as usize];
    let mut resolution = 0u64;
    let npix = pixels as usize;
    // Column edges, found once for every lane (a 128-bit division each).
    let edges: Vec<u64> = (0..=pixels).map(|k| edge(from, to, pixels, k)).collect();
    // Per rank of a lane: per column accumulators, then summed.
    let mut accs: Vec<Acc> = (0..npix).map(|_| Acc::default()).collect();
    for (l, lane) in lanes.iter().enumerate() {
        for a in &mut accs {
            a.clear();
        }
        for &r in &lane.ranks {
            let pyr = &pyramids[r as usize];
            if (pyr.w0 as f64) <= pw / 2.0 {
                let mut level = 0;
                while level + 1 < pyr.levels.len() && ((pyr.w0 << (level + 1)) as f64) <= pw / 2.0 {
                    level += 1;
                }
                let w = pyr.w0 << level;
                resolution = resolution.max(w);
                let bins = &pyr.levels[level];
                for (k, acc) in accs.iter_mut().enumerate() {
                    let (x0, x1) = (edges[k], edges[k + 1]);
                    if x1 <= x0 {
                        continue;
                    }
                    let b0 = (x0 / w) as usize;
                    let b1 = (((x1 - 1) / w) as usize).min(bins.len().saturating_sub(1));
                    for (b, bin) in bins.iter().enumerate().take(b1 + 1).skip(b0) {
                        if bin.busy == 0 {
                            continue;
                        }
                        let lo = x0.max(b as u64 * w);
                        let hi = x1.min((b as u64 + 1) * w);
                        if hi <= lo {
                            continue;
                        }
                        let ov = (hi - lo) as f64;
                        acc.busy += bin.busy as f64 / SHARE * ov;
                        if bin.func != NO_BIN_FUNC && bin.func != MAX_BIN_FUNC {
                            acc.add(bin.func as u32, bin.dom as f64 / SHARE * ov);
                        }
                    }
                }
            } else {
                exact_rank(trace, index, clock, label, r as usize, &edges, &mut accs);
            }
        }
        for (k, acc) in accs.iter().enumerate() {
            let (x0, x1) = (edges[k], edges[k + 1]);
            let width = (x1 - x0) as f64 * lane.ranks.len() as f64;
            let cell = l * npix + k;
            if width > 0.0 {
                busy[cell] = (acc.busy / width).min(1.0) as f32;
            }
            func[cell] = acc.dominant();
        }
    }
    (func, busy, resolution)
}

/// Positions (in order of entry) of the calls of rank `r` that may overlap `[from, to)`.
pub(super) fn positions(
    trace: &Trace,
    index: &TimelineIndex,
    clock: Clock,
    r: usize,
    from: u64,
    to: u64,
) -> (usize, usize) {
    let n = trace.ranks[r].calls.len();
    let begin = |p: usize| index.span_of(trace, clock, r, index.call_at(r, p)).0;
    let p1 = partition(n, |p| begin(p) < to);
    let disjoint = clock == Clock::Logical || index.disjoint[r];
    let p0 = if disjoint {
        partition(n, |p| begin(p) < from).saturating_sub(1)
    } else {
        let reach = from.saturating_sub(index.longest[r]);
        partition(n, |p| begin(p) < reach)
    };
    (p0, p1.max(p0))
}

/// First `p` in `0..n` with `!pred(p)`, for `pred` true on a prefix.
pub(super) fn partition(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Exact per-column coverage of rank `r` in `[from, to)` added to `accs`.
#[allow(clippy::too_many_arguments)]
pub(super) fn exact_rank(
    trace: &Trace,
    index: &TimelineIndex,
    clock: Clock,
    label: &dyn Fn(usize, usize) -> u32,
    r: usize,
    edges: &[u64],
    accs: &mut [Acc],
) {
    let pixels = (edges.len() - 1) as u32;
    let (from, to) = (edges[0], edges[pixels as usize]);
    let (p0, p1) = positions(trace, index, clock, r, from, to);
    let span = (to - from) as u128;
    let col = |t: u64| -> u32 { (((t - from) as u128 * pixels as u128 + pixels as u128 - 1) / span) as u32 };
    for p in p0..p1 {
        let i = index.call_at(r, p);
        let (b, e) = index.span_of(trace, clock, r, i);
        let (b, e) = (b.max(from), e.min(to));
        if e <= b {
            continue;
        }
        // Columns whose range meets [b, e): the column containing b up to the one containing e - 1.
        let mut k = col(b).min(pixels - 1);
        while k > 0 && edges[k as usize] > b {
            k -= 1;
        }
        while k < pixels {
            let (x0, x1) = (edges[k as usize], edges[k as usize + 1]);
            if x0 >= e {
                break;
            }
            let lo = b.max(x0);
            let hi = e.min(x1);
            if hi > lo {
                let acc = &mut accs[k as usize];
                acc.busy += (hi - lo) as f64;
                let f = label(r, i);
                if f != NONE {
                    acc.add(f, (hi - lo) as f64);
                }
            }
            k += 1;
        }
    }
}

/// Calls of the drawn ranks at least one column wide in the window.
#[allow(clippy::too_many_arguments)]
pub(super) fn wide_calls(
    trace: &Trace,
    index: &TimelineIndex,
    clock: &ClockIndex,
    query: &TimelineQuery,
    ranks: &[Rank],
    from: u64,
    to: u64,
    pw: f64,
) -> (Vec<TileCall>, u64) {
    let mut out = Vec::new();
    let mut left = 0u64;
    let min_len = pw.max(1.0);
    let mut push = |trace: &Trace, r: usize, i: usize, out: &mut Vec<TileCall>| {
        let (b, e) = index.span_of(trace, query.clock, r, i);
        if b >= to || e <= from || ((e - b) as f64) < min_len {
            return;
        }
        if out.len() >= query.max_calls as usize {
            left += 1;
            return;
        }
        out.push(tile_call(trace, index, r, i, b, e));
    };
    for &r in ranks {
        let r = r as usize;
        let pyr = &clock.pyramids[r];
        let exact = (pyr.w0 as f64) > pw / 2.0;
        if exact {
            let (p0, p1) = positions(trace, index, query.clock, r, from, to);
            for p in p0..p1 {
                push(trace, r, index.call_at(r, p), &mut out);
            }
            continue;
        }
        // Walk down the pyramid through bins whose longest call could reach a column.
        let top = pyr.levels.len() - 1;
        let mut stack = vec![(top, 0usize)];
        let mut level0_bins = Vec::new();
        while let Some((level, b)) = stack.pop() {
            let Some(bin) = pyr.levels[level].get(b) else { continue };
            let w = pyr.w0 << level;
            let reach = bin.maxdur as u64 * pyr.w0 / DUR_STEPS + pyr.w0;
            let longest = if bin.maxdur == u16::MAX { u64::MAX } else { reach };
            let start = b as u64 * w;
            if start >= to || start.saturating_add(w).saturating_add(longest) <= from {
                continue;
            }
            if bin.maxdur != u16::MAX && ((bin.maxdur as u64 * pyr.w0).div_ceil(DUR_STEPS) as f64) < min_len {
                continue;
            }
            if level == 0 {
                level0_bins.push(b);
            } else {
                stack.push((level - 1, 2 * b + 1));
                stack.push((level - 1, 2 * b));
            }
        }
        level0_bins.sort_unstable();
        let n = trace.ranks[r].calls.len();
        for b in level0_bins {
            let (lo, hi) = (b as u64 * pyr.w0, (b as u64 + 1) * pyr.w0);
            let begin = |p: usize| index.span_of(trace, query.clock, r, index.call_at(r, p)).0;
            let p0 = partition(n, |p| begin(p) < lo);
            let last_bin = b + 1 == pyr.levels[0].len();
            let p1 = if last_bin { n } else { partition(n, |p| begin(p) < hi) };
            for p in p0..p1 {
                push(trace, r, index.call_at(r, p), &mut out);
            }
        }
    }
    (out, left)
}

pub(super) fn tile_call(trace: &Trace, index: &TimelineIndex, r: usize, i: usize, b: u64, e: u64) -> TileCall {
    let rt = &trace.ranks[r];
    let p = &rt.p2p;
    let k0 = p.post.partition_point(|&c| (c as usize) < i);
    let k1 = p.post.partition_point(|&c| (c as usize) <= i);
    let mut bytes: u64 = p.bytes.range(k0..k1).sum();
    let mut peer = if k1 > k0 { p.peer[k0] } else { NONE };
    if rt.calls.kind[i] == CallKind::Collective {
        let c = &rt.collectives;
        let j0 = c.call.partition_point(|&x| (x as usize) < i);
        if j0 < c.len() && c.call[j0] as usize == i {
            bytes += c.bytes_sent[j0] + c.bytes_recv[j0];
            if c.root[j0] != NO_ROOT {
                peer = c.root[j0];
            }
        }
    }
    let time = index.span_of(trace, Clock::Time, r, i);
    TileCall {
        rank: r as Rank,
        index: i as u32,
        func: rt.calls.func[i],
        begin: b,
        end: e,
        time,
        bytes,
        peer,
        group: NONE,
        occurrence: NONE,
    }
}
