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
    ((part.min(whole) as f64 / whole as f64) * SHARE).round() as u16
}

fn dur_code(d: u64, w0: u64) -> u16 {
    let steps = (d as u128 * DUR_STEPS as u128).div_ceil(w0 as u128);
    steps.min(u16::MAX as u128) as u16
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
        let limit = nbins as u64 * w0;
        // Contributions (bin, function, covered), in bin order when calls are disjoint.
        let mut contrib: Vec<(u32, u16, u64)> = Vec::with_capacity(n + nbins / 4);
        let mut maxdur = vec![0u16; nbins];
        for p in 0..n {
            let s = begin(p).min(limit);
            let e = end(p).min(limit).max(s);
            let f = func(p).min(MAX_BIN_FUNC as u32) as u16;
            let first = ((s / w0) as usize).min(nbins - 1);
            maxdur[first] = maxdur[first].max(dur_code(e - s, w0));
            if e == s {
                continue;
            }
            let last = ((e - 1) / w0) as usize;
            for b in first..=last {
                let lo = s.max(b as u64 * w0);
                let hi = e.min((b as u64 + 1) * w0);
                contrib.push((b as u32, f, hi - lo));
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
                match acc.iter_mut().find(|a| a.0 == f) {
                    Some(a) => a.1 += c,
                    None => acc.push((f, c)),
                }
                i += 1;
            }
            let busy: u64 = acc.iter().map(|a| a.1).sum();
            let best = acc
                .iter()
                .copied()
                .max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0)))
                .unwrap_or((NO_BIN_FUNC, 0));
            level0[b as usize] = Bin {
                busy: share(busy, w0),
                dom: share(best.1, w0),
                func: best.0,
                maxdur: 0,
            };
        }
        for (bin, d) in level0.iter_mut().zip(&maxdur) {
            bin.maxdur = *d;
        }
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
}
