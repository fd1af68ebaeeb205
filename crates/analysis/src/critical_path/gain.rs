//! What removing a rank's computation on the critical path would gain: the deficits of every
//! node swept in lanes of up to 64 ranks at once.

use super::*;

/// A lane of the gains' sweep: a deficit in ns, `u32` when every rank's computation on the
/// path fits (a deficit never exceeds it), else `u64`; additions saturate.
pub(super) trait Lane: Copy + Ord + Default {
    const MAX: Self;
    fn sat(x: u64) -> Self;
    fn add(self, o: Self) -> Self;
    fn get(self) -> u64;
}

impl Lane for u32 {
    const MAX: u32 = u32::MAX;
    fn sat(x: u64) -> u32 {
        x.min(u32::MAX as u64) as u32
    }
    fn add(self, o: u32) -> u32 {
        self.saturating_add(o)
    }
    fn get(self) -> u64 {
        self as u64
    }
}

impl Lane for u64 {
    const MAX: u64 = u64::MAX;
    fn sat(x: u64) -> u64 {
        x
    }
    fn add(self, o: u64) -> u64 {
        self.saturating_add(o)
    }
    fn get(self) -> u64 {
        self
    }
}

impl HappensBefore {
    /// The gains of the ranks `lanes` (at most `N`) in one sweep of the topological order: for
    /// each node and each lane, the *deficit* `f − g`, where `g` is the longest path to the node
    /// with that lane's rank's computation on the path set to 0. The longest path `f(v) =
    /// max_u f(u) + w(u, v)` turns into `d(v) = min_u d(u) + δ(u, v) + (F − f(u) − w(u, v))` with
    /// `F = f(v)` before the node's own weight and `δ` the weight removed from the edge: a
    /// shortest path over the edges' slack, nonnegative, bounded by the rank's computation on the
    /// path (the path itself), so `u32` lanes hold it when that fits. The gain is the sink's
    /// deficit. Only the deficits a later node reads are kept: one vector per rank (its last
    /// exit), and a vector per dependency source (a call's enter, an instance) until its last
    /// target has read it.
    pub(super) fn deficits<T: Lane, const N: usize>(
        &self,
        lanes: &[usize],
        zero_bits: &[u64],
        tail_zeroed: &[bool],
    ) -> Vec<u64> {
        let calls = self.calls();
        let n = self.ranks();
        let mut lane_of = vec![NONE; n];
        for (i, &r) in lanes.iter().enumerate() {
            lane_of[r] = i as u32;
        }
        let zeroed = |c: u32| zero_bits[c as usize / 64] >> (c % 64) & 1 == 1;
        // The enter of call `c` on rank `q` from the deficits of the exit before it.
        let enter = |q: usize, c: u32, prev: &[T; N]| {
            let mut e = *prev;
            if zeroed(c) && lane_of[q] != NONE {
                let l = lane_of[q] as usize;
                e[l] = e[l].add(T::sat(self.gap(c)));
            }
            e
        };
        let mut cur: Vec<[T; N]> = vec![[T::default(); N]; n];
        let mut kept = Kept::new(self.f.len());
        let zero = [T::default(); N];
        for q in 0..n {
            let c = self.base[q];
            if c < self.base[q + 1] && !self.outs(c as usize).is_empty() {
                kept.keep(c as usize, enter(q, c, &zero), self.outs(c as usize).len());
            }
        }
        let val = |x: u32| self.f[x as usize];
        let gap = |x: u32| self.gap(x);
        for &v in &self.order {
            let vu = v as usize;
            let ins = self.ins(vu);
            if vu < calls {
                // In place on the rank's vector: the exit before becomes this call's enter,
                // then its exit.
                let q = self.rank_of(v);
                let d = &mut cur[q];
                if zeroed(v) && lane_of[q] != NONE {
                    let l = lane_of[q] as usize;
                    d[l] = d[l].add(T::sat(self.gap(v)));
                }
                if !ins.is_empty() {
                    let top = self.f[vu] - self.active[vu];
                    match self.own_value(v, val, gap) {
                        Some(own) => {
                            let es = T::sat(top - own);
                            if es != T::default() {
                                d.iter_mut().for_each(|x| *x = x.add(es));
                            }
                        }
                        // No route from its own enter: only the dependencies below.
                        None => *d = [T::MAX; N],
                    }
                    for &s in ins {
                        let es = T::sat(top - self.source_value(s, val, gap));
                        for (x, &y) in d.iter_mut().zip(kept.read(s as usize)) {
                            *x = (*x).min(y.add(es));
                        }
                    }
                }
                let next = v + 1;
                if next < self.base[q + 1] && !self.outs(next as usize).is_empty() {
                    kept.keep(next as usize, enter(q, next, d), self.outs(next as usize).len());
                }
            } else {
                let mut d = if ins.is_empty() { zero } else { [T::MAX; N] };
                for &s in ins {
                    let es = T::sat(self.f[vu] - self.enter_value(s, val, gap));
                    for (x, &y) in d.iter_mut().zip(kept.read(s as usize)) {
                        *x = (*x).min(y.add(es));
                    }
                }
                if !self.outs(vu).is_empty() {
                    kept.keep(vu, d, self.outs(vu).len());
                }
            }
        }
        // The sink: through each rank's tail, removed on the lane's own rank when on the path.
        let mut sink = [T::MAX; N];
        for q in (0..n).filter(|&q| self.base[q + 1] > self.base[q]) {
            let last = self.base[q + 1] as usize - 1;
            let es = T::sat(self.length - self.f[last] - self.tail[q]);
            for (i, x) in sink.iter_mut().enumerate() {
                let mut y = cur[q][i].add(es);
                if i < lanes.len() && lanes[i] == q && tail_zeroed[q] {
                    y = y.add(T::sat(self.tail[q]));
                }
                *x = (*x).min(y);
            }
        }
        sink[..lanes.len()].iter().map(|x| x.get()).collect()
    }
}

/// The deficit vectors of dependency sources a later node still reads, in reused slots.
struct Kept<V> {
    slots: Vec<V>,
    readers: Vec<u32>,
    free: Vec<u32>,
    /// Slot of each node while kept.
    slot_of: Vec<u32>,
}

impl<V: Copy> Kept<V> {
    fn new(nodes: usize) -> Kept<V> {
        Kept {
            slots: Vec::new(),
            readers: Vec::new(),
            free: Vec::new(),
            slot_of: vec![NONE; nodes],
        }
    }

    /// Keeps `d` for node `v` until `readers` reads.
    fn keep(&mut self, v: usize, d: V, readers: usize) {
        let k = match self.free.pop() {
            Some(k) => {
                self.slots[k as usize] = d;
                self.readers[k as usize] = readers as u32;
                k
            }
            None => {
                self.slots.push(d);
                self.readers.push(readers as u32);
                self.slots.len() as u32 - 1
            }
        };
        self.slot_of[v] = k;
    }

    /// One read of node `v`'s vector; its slot is reused after the last.
    fn read(&mut self, v: usize) -> &V {
        let k = self.slot_of[v] as usize;
        self.readers[k] -= 1;
        if self.readers[k] == 0 {
            self.free.push(k as u32);
        }
        &self.slots[k]
    }
}
