//! Every event of the phase sequence with its signature ([`Signed`]), and the bags of positions
//! and of windows built from them in one pass each (dense counts, no per-event allocation). The
//! ranks' signatures need no patterns ([`SignedRanks`]: natively found beside the pattern
//! detection).

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
    /// Each event's *role* signature id: its peer numbered in the order the rank's part of the
    /// occurrence first meets it, not the whole run (the third of a LAMMPS step's six
    /// neighbours is role 2 whoever it is after a rebalancing), for [`Signed::role_counts`].
    roles: Vec<u32>,
    /// Number of distinct role signatures.
    role_alphabet: usize,
}

/// Signature of one event (see the module docs of [`super`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Signature {
    /// 0 send, 1 receive, 2 collective.
    kind: u8,
    /// MPI function of the call that posted it.
    func: u32,
    /// For point-to-point, the peer's number in the order the rank first meets its peers
    /// (`u32::MAX` for an unresolved wildcard).
    offset: u32,
}

/// Every rank's events with their signatures, numbered per rank: what the phases read of the
/// ranks' events before the patterns are known. The peer numbering walks every event of the
/// trace, so natively the engine finds these beside the pattern detection ([`SignedRanks::of`]
/// needs the trace and its events only); [`Signed::of_ranks`] then takes the events of the
/// phase sequence's positions from them.
#[derive(Debug, Clone, Default)]
pub struct SignedRanks {
    /// Per rank ([`crate::patterns::Events::ranks`] order): each event's signature number and
    /// the signature of each number ([`rank_signatures`]).
    per_rank: Vec<(Vec<u32>, Vec<Signature>)>,
}

impl SignedRanks {
    /// Every rank's events' signatures (on every core natively).
    pub fn of(trace: &tracelogic_model::Trace, events: &crate::patterns::Events) -> SignedRanks {
        SignedRanks {
            per_rank: crate::logical::per_rank::each_index(trace.ranks.len(), |r| {
                rank_signatures(&trace.ranks[r], events.ranks.get(r))
            }),
        }
    }
}

impl Signed {
    /// Every event of the instances `idx[i]` of `comm` (the phase sequence's positions).
    pub fn of(
        trace: &tracelogic_model::Trace,
        events: &crate::patterns::Events,
        comm: &crate::patterns::CommunicationAnalysis,
        idx: &[usize],
    ) -> Signed {
        Signed::of_ranks(trace, events, comm, idx, SignedRanks::of(trace, events))
    }

    /// [`Signed::of`] with every rank's signed events `ranks` found before (of the same trace
    /// and events).
    pub fn of_ranks(
        trace: &tracelogic_model::Trace,
        events: &crate::patterns::Events,
        comm: &crate::patterns::CommunicationAnalysis,
        idx: &[usize],
        ranks: SignedRanks,
    ) -> Signed {
        let per_rank = ranks.per_rank;
        // Per rank, the global id of each of its signature numbers (`u32::MAX`: not met yet).
        let mut global: Vec<Vec<u32>> = per_rank.iter().map(|(_, keys)| vec![u32::MAX; keys.len()]).collect();
        let mut ids: FastMap<Signature, u32> = FastMap::default();
        let total: usize = idx
            .iter()
            .flat_map(|&i| &comm.instances[i].parts)
            .map(|part| (part.last_event as usize + 1).saturating_sub(part.first_event as usize))
            .sum();
        let (mut times, mut sigs) = (Vec::with_capacity(total), Vec::with_capacity(total));
        let mut roles = Vec::with_capacity(total);
        let mut role_ids: FastMap<Signature, u32> = FastMap::default();
        // The part's peers (run-wide numbers) in the order it first meets them.
        let mut met: Vec<u32> = Vec::new();
        let mut offs = Vec::with_capacity(idx.len() + 1);
        for &i in idx {
            offs.push(times.len());
            for part in &comm.instances[i].parts {
                let r = part.rank as usize;
                let (re, rt) = (&events.ranks[r], &trace.ranks[r]);
                let (local, keys) = &per_rank[r];
                let to_global = &mut global[r];
                met.clear();
                for e in part.first_event..=part.last_event {
                    let e = e as usize;
                    let (Some(&l), Some(&call)) = (local.get(e), re.calls.get(e)) else {
                        continue;
                    };
                    let time = rt.calls.enter.get(call as usize).unwrap_or(part.start);
                    let g = &mut to_global[l as usize];
                    if *g == u32::MAX {
                        let n = ids.len() as u32;
                        *g = *ids.entry(keys[l as usize]).or_insert(n);
                    }
                    times.push(time);
                    sigs.push(*g);
                    let mut role = keys[l as usize];
                    if role.kind != 2 && role.offset != u32::MAX {
                        role.offset = match met.iter().position(|&o| o == role.offset) {
                            Some(k) => k as u32,
                            None => {
                                met.push(role.offset);
                                met.len() as u32 - 1
                            }
                        };
                    }
                    let n = role_ids.len() as u32;
                    roles.push(*role_ids.entry(role).or_insert(n));
                }
            }
        }
        offs.push(times.len());
        drop(per_rank);
        let mut names = vec![(0u8, 0u32, 0u32); ids.len()];
        for (s, i) in ids {
            names[i as usize] = (s.kind, s.func, s.offset);
        }
        Signed {
            times,
            sigs,
            offs,
            names,
            roles,
            role_alphabet: role_ids.len(),
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

    /// The signature of each id: `(kind: 0 send, 1 receive, 2 collective; MPI function; peer
    /// number)`.
    pub fn signatures(&self) -> &[(u8, u32, u32)] {
        &self.names
    }

    /// The events of positions `r` as `(entry time of its call, signature id)`, with the ids
    /// of the whole sequence (those of [`Bags::of_instances`]).
    pub fn with_ids(&self, r: std::ops::Range<usize>) -> impl Iterator<Item = (tracelogic_model::Time, u32)> + '_ {
        let (a, e) = (self.offs[r.start], self.offs[r.end]);
        self.times[a..e].iter().copied().zip(self.sigs[a..e].iter().copied())
    }

    /// Each stretch's events counted by *coarse* signature: a point-to-point event by its
    /// direction and peer number only (not the MPI function that posted it: a lone
    /// `MPI_Send` and the send half of an `MPI_Sendrecv` to the same peer are one), a
    /// collective by its MPI function; `bounds` cut the positions into stretches (first 0,
    /// last [`Signed::len`]). The ids are dense over the whole sequence.
    pub fn coarse_counts(&self, bounds: &[usize]) -> Vec<Vec<u64>> {
        let mut ids: std::collections::HashMap<(u8, u32), u32> = Default::default();
        let coarse: Vec<u32> = self
            .names
            .iter()
            .map(|&(kind, func, peer)| {
                let key = if kind == 2 { (kind, func) } else { (kind, peer) };
                let n = ids.len() as u32;
                *ids.entry(key).or_insert(n)
            })
            .collect();
        self.counts(bounds)
            .into_iter()
            .map(|fine| {
                let mut c = vec![0u64; ids.len()];
                for (id, n) in fine.into_iter().enumerate() {
                    c[coarse[id] as usize] += n;
                }
                c
            })
            .collect()
    }

    /// Each stretch's events counted by signature id (as [`Signed::coarse_counts`], the MPI
    /// function that posted a message kept).
    pub fn counts(&self, bounds: &[usize]) -> Vec<Vec<u64>> {
        Self::count(&self.sigs, self.names.len(), &self.offs, bounds)
    }

    /// Each stretch's events counted by role signature (peers numbered within each rank's part
    /// of an occurrence, see the field `roles`).
    pub fn role_counts(&self, bounds: &[usize]) -> Vec<Vec<u64>> {
        Self::count(&self.roles, self.role_alphabet, &self.offs, bounds)
    }

    /// The signature ids (`roles`: role signature ids) of position `pos`'s events.
    pub fn ids_at(&self, pos: usize, roles: bool) -> &[u32] {
        let ids = if roles { &self.roles } else { &self.sigs };
        &ids[self.offs[pos]..self.offs[pos + 1]]
    }

    fn count(ids: &[u32], alphabet: usize, offs: &[usize], bounds: &[usize]) -> Vec<Vec<u64>> {
        bounds
            .windows(2)
            .map(|w| {
                let mut c = vec![0u64; alphabet];
                for &id in &ids[offs[w[0]]..offs[w[1]]] {
                    c[id as usize] += 1;
                }
                c
            })
            .collect()
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

/// One rank's events' signatures: each event's signature number (in the order the rank's events
/// first show them) and the signature of each number. Each rank's peers are numbered in the
/// order the rank first meets them over the run: the *direction* of a message as the rank's own
/// program sees it (a LAMMPS rank's six neighbours are 0..5 in the order of its exchanges on
/// every rank), whatever the ranks' numbers, so the signatures do not change when the ranks are
/// renumbered.
fn rank_signatures(
    rt: &tracelogic_model::RankTrace,
    re: Option<&crate::patterns::RankEvents>,
) -> (Vec<u32>, Vec<Signature>) {
    let Some(re) = re else {
        return (Vec::new(), Vec::new());
    };
    // (peer, number) by peer: a rank has few peers, found by binary search.
    let mut m: FastMap<u32, u32> = FastMap::default();
    let mut last = None;
    for ev in &re.events {
        if let crate::patterns::EventRef::P2p(k) = *ev {
            let peer = rt.p2p.peer[k as usize];
            if last != Some(peer) {
                let n = m.len() as u32;
                m.entry(peer).or_insert(n);
                last = Some(peer);
            }
        }
    }
    let mut contact: Vec<(u32, u32)> = m.into_iter().collect();
    contact.sort_unstable();
    let number = |peer: u32| {
        contact
            .binary_search_by_key(&peer, |x| x.0)
            .map_or(u32::MAX, |i| contact[i].1)
    };
    let mut ids: FastMap<Signature, u32> = FastMap::default();
    let mut keys = Vec::new();
    let n = re.events.len().min(re.calls.len());
    let mut local = Vec::with_capacity(n);
    for (ev, &call) in re.events[..n].iter().zip(&re.calls[..n]) {
        let func = rt.calls.func.get(call as usize).copied().unwrap_or(u32::MAX);
        let sig = match *ev {
            crate::patterns::EventRef::P2p(k) => {
                let k = k as usize;
                let peer = rt.p2p.peer[k];
                let offset = if peer == tracelogic_model::ANY_SOURCE {
                    u32::MAX
                } else {
                    number(peer)
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
        local.push(*ids.entry(sig).or_insert_with(|| {
            keys.push(sig);
            keys.len() as u32 - 1
        }));
    }
    (local, keys)
}

/// `f` of the first and of the second half of `0..n`: on two cores natively.
fn halves<T: Send>(n: usize, f: impl Fn(std::ops::Range<usize>) -> T + Sync) -> (T, T) {
    let mid = n / 2;
    let (second, first) = crate::logical::per_rank::both(|| f(mid..n), || f(0..mid));
    (first, second)
}

/// The (window, signature) of events: counted in a table of windows × `kinds` signatures when
/// `counts` is not empty, else listed.
struct Tally {
    counts: Vec<u64>,
    listed: Vec<(u32, u32)>,
    kinds: usize,
}

impl Tally {
    fn add(&mut self, w: usize, s: u32) {
        if self.counts.is_empty() {
            self.listed.push((w as u32, s));
        } else {
            self.counts[w * self.kinds + s as usize] += 1;
        }
    }

    /// Adds what `other` counted or listed.
    fn absorb(&mut self, other: Tally) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
        self.listed.extend(other.listed);
    }
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
        let kinds = local.iter().filter(|&&l| l != u32::MAX).count();
        if nb.saturating_mul(kinds) <= hi - lo {
            // A table of counts by window and signature no larger than the events: counted in
            // one pass, each window's bag read off it in signature order.
            // The two halves of the events counted on two cores natively, the counts summed.
            let count = |js: std::ops::Range<usize>| {
                let mut table = vec![0u64; nb * kinds];
                for j in js {
                    table[bin(signed.times[j]) * kinds + local[signed.sigs[j] as usize] as usize] += 1;
                }
                table
            };
            let mid = lo + (hi - lo) / 2;
            let (later, mut table) = crate::logical::per_rank::both(|| count(mid..hi), || count(lo..mid));
            for (a, b) in table.iter_mut().zip(later) {
                *a += b;
            }
            let mut bags = Bags {
                offs: Vec::with_capacity(nb + 1),
                ..Default::default()
            };
            bags.offs.push(0);
            for k in 0..nb {
                let row = &table[k * kinds..(k + 1) * kinds];
                for (s, &c) in row.iter().enumerate().filter(|x| *x.1 > 0) {
                    bags.items.push((s as u32, c));
                    bags.alphabet = bags.alphabet.max(s + 1);
                }
                bags.offs.push(bags.items.len());
            }
            return bags;
        }
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
    /// within the position. Also the entry time at which each window begins (`Time::MAX` past
    /// the last event; an empty window takes the next one's).
    ///
    /// No sort of the events: the event of rank `q` in that order lies in window
    /// `q · bins / n`, so only the events at the windows' first ranks need their exact place.
    /// The events are counted in time buckets; the few buckets holding a window's first rank
    /// are sorted, every other bucket lies inside one window.
    pub fn of_event_windows(
        signed: &Signed,
        r: std::ops::Range<usize>,
        bins: usize,
        until: tracelogic_model::Time,
    ) -> (Bags, Vec<tracelogic_model::Time>) {
        let (lo, hi) = (signed.offs[r.start], signed.offs[r.end]);
        let local = signed.local_ids(r);
        let kinds = local.iter().filter(|&&l| l != u32::MAX).count();
        let times = &signed.times[lo..hi];
        let sig = |j: usize| local[signed.sigs[lo + j] as usize];
        let bins = bins.max(1);
        let mut at = vec![tracelogic_model::Time::MAX; bins + 1];
        // The passes over the events run in two halves on two cores natively; what they count
        // is summed, what they list is sorted afterwards, so the halves give what one pass does.
        let ((k0, f0, l0), (k1, f1, l1)) = halves(times.len(), |js| {
            let (mut kept, mut first, mut last) = (0usize, tracelogic_model::Time::MAX, 0);
            for &t in times[js].iter().filter(|&&t| t <= until) {
                kept += 1;
                first = first.min(t);
                last = last.max(t);
            }
            (kept, first, last)
        });
        let (kept, first, last) = (k0 + k1, f0.min(f1), l0.max(l1));
        // (window, signature) of every kept event, counted in a table of windows × signatures
        // when it is no larger than the events, else listed.
        let table = bins.saturating_mul(kinds) <= kept;
        let mut tally = Tally {
            counts: if table { vec![0u64; bins * kinds] } else { Vec::new() },
            listed: Vec::new(),
            kinds,
        };
        if kept > 0 {
            // (In u64: ranks times windows pass u32 on wasm.)
            let window = |q: usize| (q as u64 * bins as u64 / kept as u64) as usize;
            let first_rank = |w: usize| (w as u64 * kept as u64).div_ceil(bins as u64) as usize;
            // Buckets of a power-of-two time width, about 16 events each.
            let target = (kept as u64 / 16).max(1);
            let mut shift = 0u32;
            while (last - first).checked_shr(shift).unwrap_or(0) >= target {
                shift += 1;
            }
            let bucket = |t: tracelogic_model::Time| (t - first).checked_shr(shift).unwrap_or(0) as usize;
            // `start[b]`: kept events in buckets before `b` (the rank of bucket `b`'s first).
            let (mut start, later) = halves(times.len(), |js| {
                let mut start = vec![0usize; bucket(last) + 2];
                for &t in times[js].iter().filter(|&&t| t <= until) {
                    start[bucket(t) + 1] += 1;
                }
                start
            });
            for (a, b) in start.iter_mut().zip(later) {
                *a += b;
            }
            for b in 1..start.len() {
                start[b] += start[b - 1];
            }
            // The buckets holding some window's first rank (beyond rank 0) are sorted; every
            // other bucket lies inside one window, that of its first rank.
            let mut exact: Vec<u32> = vec![u32::MAX; start.len()];
            let mut exact_buckets = 0usize;
            for w in 1..bins {
                let q = first_rank(w);
                if q < kept && window(q) == w {
                    let b = start.partition_point(|&s| s <= q) - 1;
                    if exact[b] == u32::MAX {
                        exact[b] = exact_buckets as u32;
                        exact_buckets += 1;
                    }
                }
            }
            // The window of each bucket's first rank, found once a bucket (not once an event).
            let first_window: Vec<u32> = start.iter().map(|&q| window(q.min(kept - 1)) as u32).collect();
            let ((mine, mut sorted), later) = halves(times.len(), |js| {
                let mut part = Tally {
                    counts: if table { vec![0u64; bins * kinds] } else { Vec::new() },
                    listed: Vec::new(),
                    kinds,
                };
                let mut sorted: Vec<Vec<(tracelogic_model::Time, u32)>> = vec![Vec::new(); exact_buckets];
                for j in js.filter(|&j| times[j] <= until) {
                    let (t, b) = (times[j], bucket(times[j]));
                    match exact[b] {
                        u32::MAX => part.add(first_window[b] as usize, sig(j)),
                        k => sorted[k as usize].push((t, j as u32)),
                    }
                }
                (part, sorted)
            });
            tally.absorb(mine);
            tally.absorb(later.0);
            for (a, b) in sorted.iter_mut().zip(later.1) {
                a.extend(b);
            }
            at[0] = first;
            for b in (0..exact.len()).filter(|&b| exact[b] != u32::MAX) {
                let evs = &mut sorted[exact[b] as usize];
                evs.sort_unstable();
                for (i, &(t, j)) in evs.iter().enumerate() {
                    let q = start[b] + i;
                    let w = window(q);
                    if q > 0 && window(q - 1) != w {
                        at[w] = t;
                    }
                    tally.add(w, sig(j as usize));
                }
            }
        }
        for k in (0..bins).rev() {
            at[k] = at[k].min(at[k + 1]);
        }
        let mut bags = Bags {
            offs: Vec::with_capacity(bins + 1),
            ..Default::default()
        };
        bags.offs.push(0);
        let Tally { counts, mut listed, .. } = tally;
        if table {
            for w in 0..bins {
                let row = &counts[w * kinds..(w + 1) * kinds];
                for (s, &c) in row.iter().enumerate().filter(|x| *x.1 > 0) {
                    bags.items.push((s as u32, c));
                    bags.alphabet = bags.alphabet.max(s + 1);
                }
                bags.offs.push(bags.items.len());
            }
        } else {
            listed.sort_unstable();
            let mut i = 0;
            for w in 0..bins as u32 {
                while i < listed.len() && listed[i].0 == w {
                    let s = listed[i].1;
                    let n = listed[i..].iter().take_while(|x| **x == (w, s)).count();
                    bags.items.push((s, n as u64));
                    bags.alphabet = bags.alphabet.max(s as usize + 1);
                    i += n;
                }
                bags.offs.push(bags.items.len());
            }
        }
        (bags, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random events over positions (ties of entry time within and across positions, a few
    /// signatures).
    fn random_signed(seed: u64, positions: usize) -> Signed {
        let mut rng = crate::phases::merge::SplitMix(seed);
        let (mut times, mut sigs, mut offs) = (Vec::new(), Vec::new(), Vec::new());
        let mut next_id = 0u32;
        for p in 0..positions {
            offs.push(times.len());
            for _ in 0..rng.below(5) {
                times.push((p as u64) * 10 + rng.below(40) as u64);
                let s = rng.below(7) as u32;
                sigs.push(s.min(next_id));
                next_id = next_id.max(s.min(next_id) + 1);
            }
        }
        offs.push(times.len());
        Signed {
            roles: sigs.clone(),
            role_alphabet: next_id as usize,
            times,
            sigs,
            offs,
            names: vec![(0, 0, 0); next_id as usize],
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
                let (want, at) = event_windows_sorted(&s, a..e, bins, until);
                let (got, got_at) = Bags::of_event_windows(&s, a..e, bins, until);
                assert!(same(&got, &want), "seed {seed} bins {bins}");
                assert_eq!(got_at, at, "seed {seed} bins {bins}");
            }
        }
    }

    /// The windows of equal numbers of events from a stable sort of the stretch's events by
    /// (entry time, position) (brute force), and the time each window begins.
    fn event_windows_sorted(s: &Signed, r: std::ops::Range<usize>, bins: usize, until: u64) -> (Bags, Vec<u64>) {
        let mut sorted: Vec<SignedEvent> = stretch(s, r).into_iter().filter(|x| x.1 <= until).collect();
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
        (Bags::from_symbols(&by_count), at)
    }

    /// Windows of equal numbers of events without sorting them equal those of the sort, where
    /// the times crowd into one moment (ties across a window's first rank), into a few, spread
    /// over the whole range of times or sit near its top; more or fewer events than windows,
    /// many signatures (the listed counts) or few (the table).
    #[test]
    fn event_windows_equal_the_sorted_events_where_times_crowd() {
        let mut rng = crate::phases::merge::SplitMix(11);
        for case in 0..120usize {
            let positions = 1 + rng.below(400);
            let (base, spread) = match case % 5 {
                0 => (0u64, 1),
                1 => (1_000, 3),
                2 => (0, u64::MAX / 2),
                3 => (u64::MAX - 10_000, 10_000),
                _ => (5, 1 + rng.below(100_000) as u64),
            };
            let alphabet = if case % 2 == 0 { 3 } else { 500 };
            let (mut times, mut sigs, mut offs) = (Vec::new(), Vec::new(), Vec::new());
            let mut next_id = 0u32;
            for _ in 0..positions {
                offs.push(times.len());
                for _ in 0..rng.below(8) {
                    let noise = (rng.below(1 << 30) as u64) << 32 | rng.below(1 << 30) as u64;
                    // A third of the events at one moment.
                    times.push(if rng.below(3) == 0 {
                        base + spread / 2
                    } else {
                        base + noise % spread
                    });
                    let sg = (rng.below(alphabet) as u32).min(next_id);
                    sigs.push(sg);
                    next_id = next_id.max(sg + 1);
                }
            }
            offs.push(times.len());
            let s = Signed {
                roles: sigs.clone(),
                role_alphabet: next_id as usize,
                times,
                sigs,
                offs,
                names: vec![(0, 0, 0); next_id as usize],
            };
            let n = s.len();
            let a = rng.below(n.div_ceil(4));
            let until = [u64::MAX, base + spread / 2, base + spread / 3][case % 3];
            for bins in [1, 7, 100, 1000] {
                let (want, at) = event_windows_sorted(&s, a..n, bins, until);
                let (got, got_at) = Bags::of_event_windows(&s, a..n, bins, until);
                assert!(same(&got, &want), "case {case} bins {bins}");
                assert_eq!(got_at, at, "case {case} bins {bins}");
            }
        }
    }
}
