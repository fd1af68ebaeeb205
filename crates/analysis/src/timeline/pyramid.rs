//! A per-rank multi-resolution pyramid of time bins: level 0 cuts the rank's extent into bins
//! of about four calls each, every level above halves the number of bins. A bin keeps the
//! share of its width covered by calls, the function covering most of it (and that share), and
//! the longest call starting in it, each in 16 bits: 8 bytes a bin, about 4 bytes a call over
//! all levels.

/// No function covers any of the bin.
pub(crate) const NO_BIN_FUNC: u16 = u16::MAX;
/// Function ids at or above this are stored as this (and reported as no function).
pub(crate) const MAX_BIN_FUNC: u16 = u16::MAX - 1;
/// Scale of the 16-bit shares.
pub(crate) const SHARE: f64 = 65535.0;
const SHARE_STEPS: u64 = 65535;
/// Durations are stored in units of `w0 / DUR_STEPS`.
pub(crate) const DUR_STEPS: u64 = 8;
/// Average number of calls in a level-0 bin.
pub(crate) const CALLS_PER_BIN: usize = 4;
/// At most this many level-0 bins per rank.
pub(crate) const MAX_BINS: usize = 1 << 22;

/// One bin of one level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bin {
    /// Share of the bin's width covered by calls, in 1/65535.
    pub busy: u16,
    /// Share covered by `func`, in 1/65535.
    pub dom: u16,
    /// The function covering most of the bin ([`NO_BIN_FUNC`] when none).
    pub func: u16,
    /// Longest call starting in the bin, in units of `w0 / DUR_STEPS`, rounded up, saturated.
    pub maxdur: u16,
}

const EMPTY: Bin = Bin {
    busy: 0,
    dom: 0,
    func: NO_BIN_FUNC,
    maxdur: 0,
};

/// The pyramid of one rank in one clock.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pyramid {
    /// Width of a level-0 bin (clock units, ≥ 1).
    pub w0: u64,
    /// `levels[l]` has bins of width `w0 << l`.
    pub levels: Vec<Vec<Bin>>,
}

fn share(part: u64, whole: u64) -> u16 {
    if whole == 0 {
        return 0;
    }
    // Rounded to nearest (halves up) in integers: exact, and without the float division and
    // the library `round` that were most of the time spent per bin; 64 bits suffice for bins
    // under 39 hours.
    let part = part.min(whole);
    if whole < 1 << 46 {
        ((2 * part * SHARE_STEPS + whole) / (2 * whole)) as u16
    } else {
        ((2 * part as u128 * SHARE_STEPS as u128 + whole as u128) / (2 * whole as u128)) as u16
    }
}

#[inline]
fn dur_code(d: u64, w0: u64) -> u16 {
    // In 64 bits when the product fits (a 128-bit division per call was a fifth of the build).
    let steps = match d.checked_mul(DUR_STEPS) {
        Some(x) => x.div_ceil(w0),
        None => (d as u128 * DUR_STEPS as u128)
            .div_ceil(w0 as u128)
            .min(u16::MAX as u128) as u64,
    };
    steps.min(u16::MAX as u64) as u16
}

impl Pyramid {
    /// Build from `n` calls given in order of their begin (`begin(p) <= begin(p + 1)`), on a
    /// clock running from 0 to `extent`.
    pub fn build(
        n: usize,
        extent: u64,
        begin: impl Fn(usize) -> u64,
        end: impl Fn(usize) -> u64,
        func: impl Fn(usize) -> u32,
    ) -> Pyramid {
        let want = (n / CALLS_PER_BIN).clamp(1, MAX_BINS).next_power_of_two();
        let extent = extent.max(1);
        let w0 = extent.div_ceil(want as u64).max(1);
        let nbins = extent.div_ceil(w0) as usize;
        let level0 =
            streamed(n, w0, nbins, &begin, &end, &func).unwrap_or_else(|| collected(n, w0, nbins, &begin, &end, &func));
        let mut levels = vec![level0];
        while levels.last().is_some_and(|l| l.len() > 1) {
            let below = levels.last().unwrap();
            let up: Vec<Bin> = below
                .chunks(2)
                .map(|pair| {
                    let a = pair[0];
                    let b = pair.get(1).copied().unwrap_or(EMPTY);
                    merge(a, b)
                })
                .collect();
            levels.push(up);
        }
        Pyramid { w0, levels }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.levels.iter().map(|l| l.len() * std::mem::size_of::<Bin>()).sum()
    }
}

/// Level 0 in one pass over calls whose coverage comes in bin order (calls in order of begin
/// that do not overlap, as on most ranks): each bin's per-function sums are complete when the
/// next bin starts, so nothing is collected or sorted and no call costs a division. `None`
/// as soon as a call covers an earlier bin than the previous one (overlapping calls, several
/// threads): then [`collected`] does it.
fn streamed(
    n: usize,
    w0: u64,
    nbins: usize,
    begin: &impl Fn(usize) -> u64,
    end: &impl Fn(usize) -> u64,
    func: &impl Fn(usize) -> u32,
) -> Option<Vec<Bin>> {
    let limit = nbins as u64 * w0;
    let mut level0 = vec![EMPTY; nbins];
    // Longest call beginning in each bin (ns), coded once per bin at the end (the code is
    // monotonic, so the code of the longest is the largest code).
    let mut longest = vec![0u64; nbins];
    let mut acc: Vec<(u16, u64)> = Vec::new();
    // The bin being summed and its start.
    let mut cur = 0usize;
    let mut lo = 0u64;
    for p in 0..n {
        let s = begin(p).min(limit);
        let e = end(p).min(limit).max(s);
        if s < lo {
            if e > s {
                return None;
            }
            // An empty call before the bin being summed: only its length counts (0).
            continue;
        }
        while cur + 1 < nbins && s >= lo + w0 {
            if !acc.is_empty() {
                level0[cur] = bin_of(&acc, w0);
                acc.clear();
            }
            cur += 1;
            lo += w0;
        }
        longest[cur] = longest[cur].max(e - s);
        if e == s {
            continue;
        }
        let f = func(p).min(MAX_BIN_FUNC as u32) as u16;
        loop {
            let hi = lo + w0;
            accumulate(&mut acc, f, e.min(hi) - s.max(lo));
            if e <= hi {
                break;
            }
            level0[cur] = bin_of(&acc, w0);
            acc.clear();
            cur += 1;
            lo = hi;
        }
    }
    if !acc.is_empty() {
        level0[cur] = bin_of(&acc, w0);
    }
    for (bin, &d) in level0.iter_mut().zip(&longest) {
        bin.maxdur = dur_code(d, w0);
    }
    Some(level0)
}

/// Level 0 from every call's coverage of every bin it meets, collected and put in bin order.
fn collected(
    n: usize,
    w0: u64,
    nbins: usize,
    begin: &impl Fn(usize) -> u64,
    end: &impl Fn(usize) -> u64,
    func: &impl Fn(usize) -> u32,
) -> Vec<Bin> {
    let limit = nbins as u64 * w0;
    // Contributions (bin, function, covered).
    let mut contrib: Vec<(u32, u16, u64)> = Vec::with_capacity(n + nbins / 4);
    let mut maxdur = vec![0u16; nbins];
    for p in 0..n {
        let (first, last, f, s, e) = span(p, w0, limit, nbins, begin, end, func);
        maxdur[first] = maxdur[first].max(dur_code(e - s, w0));
        if e == s {
            continue;
        }
        for b in first..=last {
            contrib.push((b as u32, f, covered(b, w0, s, e)));
        }
    }
    if contrib.windows(2).any(|w| w[0].0 > w[1].0) {
        contrib.sort_by_key(|c| c.0);
    }
    let mut level0 = vec![EMPTY; nbins];
    let mut acc: Vec<(u16, u64)> = Vec::new();
    let mut i = 0;
    while i < contrib.len() {
        let b = contrib[i].0;
        acc.clear();
        while i < contrib.len() && contrib[i].0 == b {
            let (_, f, c) = contrib[i];
            accumulate(&mut acc, f, c);
            i += 1;
        }
        level0[b as usize] = bin_of(&acc, w0);
    }
    for (bin, d) in level0.iter_mut().zip(&maxdur) {
        bin.maxdur = *d;
    }
    level0
}

/// Call `p` clipped to `[0, limit)`: its first and last bin, function, begin and end.
#[inline]
fn span(
    p: usize,
    w0: u64,
    limit: u64,
    nbins: usize,
    begin: &impl Fn(usize) -> u64,
    end: &impl Fn(usize) -> u64,
    func: &impl Fn(usize) -> u32,
) -> (usize, usize, u16, u64, u64) {
    let s = begin(p).min(limit);
    let e = end(p).min(limit).max(s);
    let f = func(p).min(MAX_BIN_FUNC as u32) as u16;
    let first = ((s / w0) as usize).min(nbins - 1);
    let last = if e == s { first } else { ((e - 1) / w0) as usize };
    (first, last, f, s, e)
}

/// How much of bin `b` the interval `[s, e)` covers.
#[inline]
fn covered(b: usize, w0: u64, s: u64, e: u64) -> u64 {
    e.min((b as u64 + 1) * w0) - s.max(b as u64 * w0)
}

/// Add `c` covered by function `f` to a bin's per-function sums.
#[inline]
fn accumulate(acc: &mut Vec<(u16, u64)>, f: u16, c: u64) {
    match acc.iter_mut().find(|a| a.0 == f) {
        Some(a) => a.1 += c,
        None => acc.push((f, c)),
    }
}

/// A level-0 bin from its per-function sums (in order of first contribution; ties go to the
/// smaller function id).
fn bin_of(acc: &[(u16, u64)], w0: u64) -> Bin {
    let busy: u64 = acc.iter().map(|a| a.1).sum();
    let best = acc
        .iter()
        .copied()
        .max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0)))
        .unwrap_or((NO_BIN_FUNC, 0));
    Bin {
        busy: share(busy, w0),
        dom: share(best.1, w0),
        func: best.0,
        maxdur: 0,
    }
}

/// Two adjacent bins as one of twice the width: shares halve; the dominant function is the
/// one of the two that covers more (their sum when both name the same function).
fn merge(a: Bin, b: Bin) -> Bin {
    let busy = (a.busy as u32 + b.busy as u32).div_ceil(2) as u16;
    let (func, dom) = if a.func == b.func {
        (a.func, (a.dom as u32 + b.dom as u32).div_ceil(2))
    } else if b.func == NO_BIN_FUNC || (a.func != NO_BIN_FUNC && (a.dom, b.func) >= (b.dom, a.func)) {
        (a.func, (a.dom as u32).div_ceil(2))
    } else {
        (b.func, (b.dom as u32).div_ceil(2))
    };
    Bin {
        busy,
        dom: dom as u16,
        func,
        maxdur: a.maxdur.max(b.maxdur),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_over_three_bins_fills_the_middle_one() {
        // 8 calls -> 2 bins wanted; extent 100 -> w0 = 50.
        let begins = [0u64, 10, 20, 30, 40, 60, 70, 80];
        let ends = [5u64, 15, 25, 35, 55, 65, 75, 85];
        let p = Pyramid::build(8, 100, |i| begins[i], |i| ends[i], |i| (i % 2) as u32);
        assert_eq!(p.w0, 50);
        assert_eq!(p.levels.len(), 2);
        let b0 = p.levels[0][0];
        // Covered in [0, 50): 5 * 4 + 10 (call 4 up to 50) = 30 of 50.
        assert_eq!(b0.busy, share(30, 50));
        // Function 0: calls 0, 2, 4 (5 + 5 + 10 = 20); function 1: calls 1, 3 (10).
        assert_eq!(b0.func, 0);
        assert_eq!(b0.dom, share(20, 50));
        let b1 = p.levels[0][1];
        assert_eq!(b1.busy, share(20, 50));
        // Longest call starting in bin 0 is call 4 (15 long): ceil(15 * 8 / 50) = 3.
        assert_eq!(b0.maxdur, 3);
        let top = p.levels[1][0];
        assert_eq!(top.busy, (b0.busy as u32 + b1.busy as u32).div_ceil(2) as u16);
    }

    /// Level 0 against a brute force that sums each bin's coverage per function over every
    /// call (the dominant function: most covered, ties to the smaller id), on random calls
    /// that do not overlap (summed as they come) and that do (collected and sorted).
    #[test]
    fn level_zero_equals_a_brute_force_per_bin() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for overlap in [false, true] {
            for _ in 0..50 {
                let n = 1 + next(60) as usize;
                let (mut begins, mut ends, mut funcs) = (vec![], vec![], vec![]);
                let mut t = 0;
                for _ in 0..n {
                    t += next(30);
                    let len = next(if overlap { 200 } else { 40 });
                    begins.push(t);
                    ends.push(t + len);
                    funcs.push(next(4) as u32);
                    if !overlap {
                        t += len;
                    }
                }
                let extent = ends.iter().max().copied().unwrap_or(1).max(1) + next(10);
                let p = Pyramid::build(n, extent, |i| begins[i], |i| ends[i], |i| funcs[i]);
                let w0 = p.w0;
                if !overlap {
                    // Calls in order that do not overlap take the one-pass build.
                    let nbins = p.levels[0].len();
                    let one_pass = streamed(n, w0, nbins, &|i| begins[i], &|i| ends[i], &|i| funcs[i]);
                    assert_eq!(one_pass.as_ref(), Some(&p.levels[0]));
                }
                for (b, bin) in p.levels[0].iter().enumerate() {
                    let (lo, hi) = (b as u64 * w0, (b as u64 + 1) * w0);
                    let mut per = [0u64; 4];
                    let mut longest = 0u64;
                    for i in 0..n {
                        let (s, e) = (begins[i].min(p.levels[0].len() as u64 * w0), ends[i]);
                        per[funcs[i] as usize] += e.min(hi).saturating_sub(s.max(lo));
                        if (lo..hi).contains(&s) || (b == p.levels[0].len() - 1 && s >= hi) {
                            longest = longest.max(e - s);
                        }
                    }
                    let busy: u64 = per.iter().sum();
                    let best = (0..4).max_by(|&x, &y| per[x].cmp(&per[y]).then(y.cmp(&x))).unwrap();
                    let want_busy = ((busy.min(w0) as f64 / w0 as f64) * 65535.0).round() as u16;
                    assert_eq!(bin.busy, want_busy, "bin {b} busy");
                    if busy == 0 {
                        assert_eq!(bin.func, NO_BIN_FUNC);
                    } else {
                        assert_eq!(bin.func, best as u16, "bin {b} function, sums {per:?}");
                        let want_dom = ((per[best].min(w0) as f64 / w0 as f64) * 65535.0).round() as u16;
                        assert_eq!(bin.dom, want_dom, "bin {b} dominant share");
                    }
                    let want_dur = ((longest * DUR_STEPS).div_ceil(w0)).min(u16::MAX as u64) as u16;
                    assert_eq!(bin.maxdur, want_dur, "bin {b} longest call");
                }
            }
        }
    }
}
