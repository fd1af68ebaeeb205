//! Every event of the phase sequence with its signature ([`Signed`]), and the bags of positions
//! and of windows built from them in one pass each (dense counts, no per-event allocation).

use super::Bags;

/// Maps consulted per event: foldhash (nothing here depends on their iteration order).
type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// One event: its position in the phase sequence, the entry time of its call and its
/// signature id.
pub type SignedEvent = (usize, tracelogic_model::Time, u32);

/// Every event of a phase sequence's positions with its signature, computed once (the
/// per-rank peer numbering walks every event of the trace) and shared by the bags of the
/// occurrences and of every stretch's windows.
#[derive(Debug, Clone, Default)]
pub struct Signed {
    /// Entry time of each event's call, positions ascending (12 bytes an event with `sigs`).
    times: Vec<tracelogic_model::Time>,
    /// Signature id of each event, numbered in the order the events first show them.
    sigs: Vec<u32>,
    /// `times[offs[i]..offs[i + 1]]` are position `i`'s.
    offs: Vec<usize>,
    /// The signature of each id: `(kind: 0 send, 1 receive, 2 collective; MPI function; peer
    /// number)`.
    names: Vec<(u8, u32, u32)>,
    /// Every event (index into `times`) ordered by entry time, then index: the order of the
    /// events of any stretch of positions in time, found once for all stretches.
    by_time: Vec<u32>,
}

/// Signature of one event (see the module docs of [`super`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Signature {
    /// 0 send, 1 receive, 2 collective.
    kind: u8,
    /// MPI function of the call that posted it.
    func: u32,
    /// For point-to-point, the peer's number in the order the rank first meets its peers
    /// (`u32::MAX` for an unresolved wildcard).
    offset: u32,
}

impl Signed {
    /// Every event of the instances `idx[i]` of `comm` (the phase sequence's positions).
    pub fn of(
        trace: &tracelogic_model::Trace,
        events: &crate::patterns::Events,
        comm: &crate::patterns::CommunicationAnalysis,
        idx: &[usize],
    ) -> Signed {
        // Each rank's peers numbered in the order the rank first meets them over the run: the
        // *direction* of a message as the rank's own program sees it (a LAMMPS rank's six
        // neighbours are 0..5 in the order of its exchanges on every rank), whatever the ranks'
        // numbers, so the signatures do not change when the ranks are renumbered.
        // Per rank, (peer, number) by peer: a rank has few peers, found by binary search.
        let contact: Vec<Vec<(u32, u32)>> = trace
            .ranks
            .iter()
            .enumerate()
            .map(|(r, rt)| {
                let mut m: FastMap<u32, u32> = FastMap::default();
                let mut last = None;
                for ev in events.ranks.get(r).map_or(&[][..], |re| &re.events[..]) {
                    if let crate::patterns::EventRef::P2p(k) = *ev {
                        let peer = rt.p2p.peer[k as usize];
                        if last != Some(peer) {
                            let n = m.len() as u32;
                            m.entry(peer).or_insert(n);
                            last = Some(peer);
                        }
                    }
                }
                let mut v: Vec<(u32, u32)> = m.into_iter().collect();
                v.sort_unstable();
                v
            })
            .collect();
        let number = |r: usize, peer: u32| {
            let c = &contact[r];
            c.binary_search_by_key(&peer, |x| x.0).map_or(u32::MAX, |i| c[i].1)
        };
        let mut ids: FastMap<Signature, u32> = FastMap::default();
        let (mut times, mut sigs) = (Vec::new(), Vec::new());
        // Each event's index here at its place among all ranks' events (`u32::MAX`: in no
        // position), to list the events rank by rank in call order for the time order.
        let mut first_of = Vec::with_capacity(events.ranks.len() + 1);
        let mut all = 0usize;
        for re in &events.ranks {
            first_of.push(all);
            all += re.events.len();
        }
        let mut placed = vec![u32::MAX; all];
        let mut offs = Vec::with_capacity(idx.len() + 1);
        for &i in idx {
            offs.push(times.len());
            for part in &comm.instances[i].parts {
                let (r, re) = (part.rank, &events.ranks[part.rank as usize]);
                let rt = &trace.ranks[r as usize];
                for e in part.first_event..=part.last_event {
                    let e = e as usize;
                    let (Some(ev), Some(&call)) = (re.events.get(e), re.calls.get(e)) else {
                        continue;
                    };
                    let func = rt.calls.func.get(call as usize).copied().unwrap_or(u32::MAX);
                    let time = rt.calls.enter.get(call as usize).unwrap_or(part.start);
                    let sig = match *ev {
                        crate::patterns::EventRef::P2p(k) => {
                            let k = k as usize;
                            let peer = rt.p2p.peer[k];
                            let offset = if peer == tracelogic_model::ANY_SOURCE {
                                u32::MAX
                            } else {
                                number(r as usize, peer)
                            };
                            let kind = if rt.p2p.dir[k] == tracelogic_model::P2pDir::Send {
                                0
                            } else {
                                1
                            };
                            Signature { kind, func, offset }
                        }
                        crate::patterns::EventRef::Collective(_) => Signature {
                            kind: 2,
                            func,
                            offset: 0,
                        },
                    };
                    let n = ids.len() as u32;
                    times.push(time);
                    sigs.push(*ids.entry(sig).or_insert(n));
                    let slot = &mut placed[first_of[r as usize] + e];
                    if *slot == u32::MAX {
                        *slot = times.len() as u32 - 1;
                    } else {
                        // An event in two positions (parts of instances do not overlap; kept
                        // in the order anyway).
                        placed.push(times.len() as u32 - 1);
                    }
                }
            }
        }
        offs.push(times.len());
        drop(contact);
        let mut names = vec![(0u8, 0u32, 0u32); ids.len()];
        for (s, i) in ids {
            names[i as usize] = (s.kind, s.func, s.offset);
        }
        let by_time = time_order(&times, placed);
        Signed {
            times,
            sigs,
            offs,
            names,
            by_time,
        }
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.offs.len().saturating_sub(1)
    }

    /// Number of distinct signatures (ids `0..alphabet`).
    pub fn alphabet(&self) -> usize {
        self.names.len()
    }

    /// True without positions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every event as `(position, entry time of its call, signature id)` and each id's
    /// signature: what the phases are computed from (figures and checks).
    pub fn events(&self) -> (Vec<SignedEvent>, &[(u8, u32, u32)]) {
        let mut out = Vec::with_capacity(self.times.len());
        for (pos, w) in self.offs.windows(2).enumerate() {
            out.extend((w[0]..w[1]).map(|j| (pos, self.times[j], self.sigs[j])));
        }
        (out, &self.names)
    }

    /// The events of positions `r` as `(entry time of its call, signature id)`, with the ids
    /// of the whole sequence (those of [`Bags::of_instances`]).
    pub fn with_ids(&self, r: std::ops::Range<usize>) -> impl Iterator<Item = (tracelogic_model::Time, u32)> + '_ {
        let (a, e) = (self.offs[r.start], self.offs[r.end]);
        self.times[a..e].iter().copied().zip(self.sigs[a..e].iter().copied())
    }

    /// The ids the stretch of positions `r` gives its signatures, numbered in the order its
    /// events first show them (`local[id]`, `u32::MAX` for ids it lacks): so that its bags
    /// (and the floating-point sums over them) do not depend on what lies outside the stretch.
    fn local_ids(&self, r: std::ops::Range<usize>) -> Vec<u32> {
        let mut local = vec![u32::MAX; self.names.len()];
        let mut next = 0u32;
        for &s in &self.sigs[self.offs[r.start]..self.offs[r.end]] {
            let l = &mut local[s as usize];
            if *l == u32::MAX {
                *l = next;
                next += 1;
            }
        }
        local
    }
}

/// The events (indices into `times`) ordered by `(time, index)`, from `placed`: the events
/// listed rank by rank in call order (`u32::MAX` entries skipped). A rank's entry times rise
/// with its calls, so the sort merges one long run per rank.
fn time_order(times: &[tracelogic_model::Time], placed: Vec<u32>) -> Vec<u32> {
    let mut keyed: Vec<(tracelogic_model::Time, u32)> = Vec::with_capacity(times.len());
    keyed.extend(
        placed
            .iter()
            .filter(|&&j| j != u32::MAX)
            .map(|&j| (times[j as usize], j)),
    );
    drop(placed);
    // Keys are distinct (the index is part of them): a stable sort, merging the ranks' runs.
    keyed.sort();
    keyed.into_iter().map(|(_, j)| j).collect()
}

/// Bags filled one at a time with dense counts: each closed bag lists its signatures
/// ascending with their counts, as [`Bags::from_symbols`] makes it from the same symbols.
struct BagBuilder {
    bags: Bags,
    count: Vec<u64>,
    touched: Vec<u32>,
}

impl BagBuilder {
    fn new(alphabet: usize, positions: usize) -> BagBuilder {
        let mut offs = Vec::with_capacity(positions + 1);
        offs.push(0);
        BagBuilder {
            bags: Bags {
                offs,
                ..Default::default()
            },
            count: vec![0; alphabet],
            touched: Vec::new(),
        }
    }

    #[inline]
    fn add(&mut self, s: u32) {
        let c = &mut self.count[s as usize];
        if *c == 0 {
            self.touched.push(s);
        }
        *c += 1;
    }

    fn close(&mut self) {
        self.touched.sort_unstable();
        for &s in &self.touched {
            let c = std::mem::take(&mut self.count[s as usize]);
            self.bags.items.push((s, c));
            self.bags.alphabet = self.bags.alphabet.max(s as usize + 1);
        }
        self.touched.clear();
        self.bags.offs.push(self.bags.items.len());
    }
}

impl Bags {
    /// The bag of every position of `signed`.
    pub fn of_instances(signed: &Signed) -> Bags {
        let n = signed.len();
        let local = signed.local_ids(0..n);
        let mut b = BagBuilder::new(signed.alphabet(), n);
        for w in signed.offs.windows(2) {
            for &s in &signed.sigs[w[0]..w[1]] {
                b.add(local[s as usize]);
            }
            b.close();
        }
        b.bags
    }

    /// The bags of `bins` equal time windows from `from` to `to` (ns): each event of the
    /// positions `r` of `signed` in the window its call was entered in.
    pub fn of_windows(
        signed: &Signed,
        r: std::ops::Range<usize>,
        (from, to): (tracelogic_model::Time, tracelogic_model::Time),
        bins: usize,
    ) -> Bags {
        let nb = bins.max(1);
        let width = (to.saturating_sub(from) as f64 / nb as f64).max(1.0);
        let bin = |t: tracelogic_model::Time| (((t.saturating_sub(from)) as f64 / width) as usize).min(nb - 1);
        let (lo, hi) = (signed.offs[r.start], signed.offs[r.end]);
        let local = signed.local_ids(r);
        // The events grouped by window (a counting sort), then each window counted.
        let mut start = vec![0usize; nb + 1];
        for &t in &signed.times[lo..hi] {
            start[bin(t) + 1] += 1;
        }
        for k in 0..nb {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut grouped = vec![0u32; hi - lo];
        for j in lo..hi {
            let slot = &mut fill[bin(signed.times[j])];
            grouped[*slot] = local[signed.sigs[j] as usize];
            *slot += 1;
        }
        drop(fill);
        let mut b = BagBuilder::new(signed.alphabet(), nb);
        for k in 0..nb {
            for &s in &grouped[start[k]..start[k + 1]] {
                b.add(s);
            }
            b.close();
        }
        b.bags
    }

    /// The bags of `bins` windows of equal numbers of events, in the order their calls were
    /// entered, of the events of the positions `r` of `signed` entered before `until` (ns): the
    /// end of the stretch's time. An occurrence that starts in the stretch can run far into the
    /// next one (hpcc on 8 ranks: an occurrence starting 40 ms before LatencyBandwidth holds
    /// 14,000 of its events, 4 times the stretch's own); those events belong in time to the
    /// next stretch. Events of one entry time come in position order, then in their order
    /// within the position.
    pub fn of_event_windows(
        signed: &Signed,
        r: std::ops::Range<usize>,
        bins: usize,
        until: tracelogic_model::Time,
    ) -> (Bags, Vec<tracelogic_model::Time>) {
        let (lo, hi) = (signed.offs[r.start], signed.offs[r.end]);
        let local = signed.local_ids(r);
        let times = &signed.times[lo..hi];
        let kept = times.iter().filter(|&&t| t <= until).count();
        let n = kept.max(1);
        let bins = bins.max(1);
        let mut b = BagBuilder::new(signed.alphabet(), bins);
        let mut at = vec![tracelogic_model::Time::MAX; bins + 1];
        // The stretch's events in time order: the run's time order from the stretch's first
        // entry time on, the other positions' events skipped.
        let first = times.iter().copied().filter(|&t| t <= until).min().unwrap_or(0);
        let by_time = &signed.by_time;
        let mut k = by_time.partition_point(|&j| signed.times[j as usize] < first);
        let (mut seen, mut open) = (0usize, 0usize);
        let mut empty = true;
        while seen < kept {
            let j = by_time[k] as usize;
            k += 1;
            if j < lo || j >= hi {
                continue;
            }
            let bin = (seen * bins / n).min(bins - 1);
            while open < bin {
                b.close();
                open += 1;
                empty = true;
            }
            if empty {
                at[bin] = signed.times[j];
                empty = false;
            }
            b.add(local[signed.sigs[j] as usize]);
            seen += 1;
        }
        while open < bins {
            b.close();
            open += 1;
        }
        for k in (0..bins).rev() {
            at[k] = at[k].min(at[k + 1]);
        }
        (b.bags, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random events over positions (ties of entry time within and across positions, a few
    /// signatures), rank by rank as `Signed::of` lists them.
    fn random_signed(seed: u64, positions: usize) -> Signed {
        let mut rng = crate::phases::merge::SplitMix(seed);
        let (mut times, mut sigs, mut offs, mut rank_of) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut next_id = 0u32;
        for p in 0..positions {
            offs.push(times.len());
            for _ in 0..rng.below(5) {
                times.push((p as u64) * 10 + rng.below(40) as u64);
                let s = rng.below(7) as u32;
                sigs.push(s.min(next_id));
                next_id = next_id.max(s.min(next_id) + 1);
                rank_of.push(rng.below(3) as u32);
            }
        }
        offs.push(times.len());
        // Ranks' events in call order: each rank's events by index here.
        let mut placed: Vec<u32> = Vec::new();
        for r in 0..3 {
            placed.extend((0..times.len() as u32).filter(|&j| rank_of[j as usize] == r));
            placed.push(u32::MAX);
        }
        let by_time = time_order(&times, placed);
        Signed {
            times,
            sigs,
            offs,
            names: vec![(0, 0, 0); next_id as usize],
            by_time,
        }
    }

    /// Every event of positions `r` with the ids of the stretch's own numbering (brute force).
    fn stretch(s: &Signed, r: std::ops::Range<usize>) -> Vec<SignedEvent> {
        let mut local = std::collections::HashMap::new();
        let mut out = Vec::new();
        for pos in r.clone() {
            for j in s.offs[pos]..s.offs[pos + 1] {
                let n = local.len() as u32;
                let l = *local.entry(s.sigs[j]).or_insert(n);
                out.push((pos - r.start, s.times[j], l));
            }
        }
        out
    }

    fn same(a: &Bags, b: &Bags) -> bool {
        a.offs == b.offs && a.items == b.items && a.alphabet == b.alphabet
    }

    /// The one-pass bags equal the bags of the same events listed and sorted from scratch:
    /// per position, per equal time window, and per window of equal numbers of events taken in
    /// (entry time, position) order, stable.
    #[test]
    fn bags_in_one_pass_equal_the_bags_sorted_from_scratch() {
        for seed in 1..60u64 {
            let s = random_signed(seed, 20 + (seed as usize * 13) % 90);
            let n = s.len();
            let whole: Vec<Vec<u32>> = (0..n)
                .map(|p| stretch(&s, 0..n).iter().filter(|e| e.0 == p).map(|e| e.2).collect())
                .collect();
            assert!(
                same(&Bags::of_instances(&s), &Bags::from_symbols(&whole)),
                "seed {seed}"
            );
            let (a, e) = ((seed as usize) % 7, n - (seed as usize) % 5);
            for bins in [1, 3, 10, 100] {
                let ev = stretch(&s, a..e);
                // Equal time windows.
                let (from, to) = (a as u64 * 10, e as u64 * 10 + 5);
                let width = (to.saturating_sub(from) as f64 / bins as f64).max(1.0);
                let mut by_time = vec![Vec::new(); bins];
                for &(_, t, l) in &ev {
                    let b = ((t.saturating_sub(from)) as f64 / width) as usize;
                    by_time[b.min(bins - 1)].push(l);
                }
                let got = Bags::of_windows(&s, a..e, (from, to), bins);
                assert!(same(&got, &Bags::from_symbols(&by_time)), "seed {seed} bins {bins}");
                // Equal numbers of events, up to a time.
                let until = (a as u64 + e as u64) * 6;
                let mut sorted: Vec<SignedEvent> = ev.iter().copied().filter(|x| x.1 <= until).collect();
                sorted.sort_by_key(|x| (x.1, x.0));
                let m = sorted.len().max(1);
                let mut by_count = vec![Vec::new(); bins];
                let mut at = vec![u64::MAX; bins + 1];
                for (j, &(_, t, l)) in sorted.iter().enumerate() {
                    let b = (j * bins / m).min(bins - 1);
                    if by_count[b].is_empty() {
                        at[b] = t;
                    }
                    by_count[b].push(l);
                }
                for b in (0..bins).rev() {
                    at[b] = at[b].min(at[b + 1]);
                }
                let (got, got_at) = Bags::of_event_windows(&s, a..e, bins, until);
                assert!(same(&got, &Bags::from_symbols(&by_count)), "seed {seed} bins {bins}");
                assert_eq!(got_at, at, "seed {seed} bins {bins}");
            }
        }
    }
}
