//! The critical path's report: its segments, and its share per rank and per MPI function.

use super::*;

impl HappensBefore {
    pub(super) fn report(&self, trace: &Trace) -> CriticalPath {
        let n = self.ranks();
        let pieces = self.pieces();
        let mut on_rank = vec![0u64; n];
        let mut on_func = vec![0u64; trace.functions.len()];
        let mut zeroed: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut tail_zeroed = vec![false; n];
        let mut segments: Vec<Segment> = Vec::new();
        for (i, &(r, a, b, f, c)) in pieces.iter().enumerate() {
            on_rank[r] += b - a;
            match f {
                Some(f) => {
                    if let Some(x) = on_func.get_mut(f as usize) {
                        *x += b - a;
                    }
                }
                None => {
                    if matches!(self.path[i], PathStep::ComputeAfter(_)) {
                        tail_zeroed[r] = true;
                    } else {
                        zeroed[r].push(c);
                    }
                }
            }
            if b == a {
                continue;
            }
            let kind = f.map_or("compute", |f| trace.functions.name(f));
            match segments.last_mut() {
                Some(s) if s.rank == r as Rank && s.kind == kind && (s.end_s - secs(a)).abs() < 1e-12 => {
                    s.end_s = secs(b);
                }
                _ => segments.push(Segment {
                    rank: r as Rank,
                    start_s: secs(a),
                    end_s: secs(b),
                    kind: kind.to_owned(),
                }),
            }
        }
        let len = self.length.max(1) as f64;
        // Gains, the ranks with most computation on the path first, within a work budget.
        let computes: Vec<u64> = (0..n)
            .map(|r| {
                zeroed[r].iter().map(|&c| self.gap(c)).sum::<u64>() + if tail_zeroed[r] { self.tail[r] } else { 0 }
            })
            .collect();
        let mut by_need: Vec<usize> = (0..n).filter(|&r| computes[r] > 0).collect();
        by_need.sort_by_key(|&r| (Reverse(computes[r]), r));
        let mut gains: Vec<Option<u64>> = (0..n).map(|r| (computes[r] == 0).then_some(0)).collect();
        let lanes = (GAIN_WORK / self.f.len().max(1) as u64).max(LANES as u64) as usize;
        by_need.truncate(lanes);
        let mut ph = Phases::new();
        let mut zero_bits = vec![0u64; self.calls().div_ceil(64)];
        for &r in &by_need {
            for &c in &zeroed[r] {
                zero_bits[c as usize / 64] |= 1 << (c % 64);
            }
        }
        // Sweeps of at most LANES ranks, side by side on the cores when there are several
        // (natively): the lanes are independent, so the gains do not depend on the grouping.
        // One sweep is not split to use more cores: two half-width sweeps cost about 40 % more
        // CPU than one (each walks the whole graph; measured on the LU C 128 trace).
        let sweeps = by_need.len().div_ceil(LANES).max(1);
        let groups: Vec<&[usize]> = by_need.chunks(by_need.len().div_ceil(sweeps).max(1)).collect();
        let swept = crate::logical::per_rank::each_index(groups.len(), |i| {
            let group = groups[i];
            let fits = group.iter().all(|&r| computes[r] <= u32::MAX as u64);
            match (group.len(), fits) {
                (0..=8, true) => self.deficits::<u32, 8>(group, &zero_bits, &tail_zeroed),
                (0..=8, false) => self.deficits::<u64, 8>(group, &zero_bits, &tail_zeroed),
                (9..=16, true) => self.deficits::<u32, 16>(group, &zero_bits, &tail_zeroed),
                (9..=16, false) => self.deficits::<u64, 16>(group, &zero_bits, &tail_zeroed),
                (17..=32, true) => self.deficits::<u32, 32>(group, &zero_bits, &tail_zeroed),
                (17..=32, false) => self.deficits::<u64, 32>(group, &zero_bits, &tail_zeroed),
                (_, true) => self.deficits::<u32, LANES>(group, &zero_bits, &tail_zeroed),
                (_, false) => self.deficits::<u64, LANES>(group, &zero_bits, &tail_zeroed),
            }
        });
        for (group, d) in groups.iter().zip(swept) {
            for (&r, d) in group.iter().zip(d) {
                gains[r] = Some(d);
            }
        }
        ph.mark("gains");
        let by_rank = (0..n)
            .map(|r| RankOnPath {
                rank: r as Rank,
                share: on_rank[r] as f64 / len,
                gain_s: gains[r].map(secs),
            })
            .collect();
        let mut by_function: Vec<FunctionOnPath> = on_func
            .iter()
            .enumerate()
            .filter(|(_, &t)| t > 0)
            .map(|(f, &t)| FunctionOnPath {
                name: trace.functions.name(f as u32).to_owned(),
                share: t as f64 / len,
            })
            .collect();
        by_function.sort_by(|a, b| b.share.total_cmp(&a.share).then_with(|| a.name.cmp(&b.name)));
        CriticalPath {
            length_s: secs(self.length),
            by_rank,
            by_function,
            segments,
        }
    }
}
