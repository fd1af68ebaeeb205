//! The longest paths through the happens-before graph in topological order, and the critical
//! path read backwards from the sink.

use super::*;

impl HappensBefore {
    pub(super) fn calls(&self) -> usize {
        self.active.len()
    }

    pub(super) fn ranks(&self) -> usize {
        self.base.len() - 1
    }

    /// The rank holding call `c`: from the rank holding the first call of its block of
    /// `1 << RANK_HINT_SHIFT`, forward past the ranks that end before `c` (usually none).
    pub(super) fn rank_of(&self, c: u32) -> usize {
        let mut r = self.rank_hint[(c >> RANK_HINT_SHIFT) as usize] as usize;
        while self.base[r + 1] <= c {
            r += 1;
        }
        r
    }

    pub(super) fn is_first(&self, c: u32) -> bool {
        self.flags[c as usize] & FIRST != 0
    }

    /// Whether call `c` ends a run of polling calls: its value comes from its dependencies
    /// only, one of them the run's first enter (module docs, "Polling").
    pub(super) fn ends_polling(&self, c: u32) -> bool {
        self.flags[c as usize] & POLL_END != 0
    }

    /// Longest-path value of call `c`'s own enter as a route to its exit: none for the end of
    /// a polling run.
    pub(super) fn own_value(&self, c: u32, val: impl Fn(u32) -> u64, gap: impl Fn(u32) -> u64) -> Option<u64> {
        (!self.ends_polling(c)).then(|| self.enter_value(c, val, gap))
    }

    /// Computation before call `c`: from the previous exit (or the trace start).
    pub(super) fn gap(&self, c: u32) -> u64 {
        self.gap_ns[c as usize]
    }

    /// Longest-path value of the enter of call `c`, from the exit values `val`.
    pub(super) fn enter_value(&self, c: u32, val: impl Fn(u32) -> u64, gap: impl Fn(u32) -> u64) -> u64 {
        if self.is_first(c) {
            gap(c)
        } else {
            val(c - 1) + gap(c)
        }
    }

    pub(super) fn ins(&self, v: usize) -> &[u32] {
        &self.in_src[self.in_start[v] as usize..self.in_start[v + 1] as usize]
    }

    pub(super) fn outs(&self, v: usize) -> &[u32] {
        &self.out_dst[self.out_start[v] as usize..self.out_start[v + 1] as usize]
    }

    /// Kahn's algorithm with the longest-path values: each rank runs until a call's exit waits
    /// for a dependency not yet reached; enters release the dependencies they are sources of.
    pub(super) fn longest_paths(&mut self) -> Result<(), String> {
        let calls = self.calls();
        let nodes = self.f.len();
        // Until a node is reached, its value holds the number of its dependencies not yet
        // reached (no separate array of counts): a value is written only once that is 0.
        for v in 0..nodes {
            self.f[v] = (self.in_start[v + 1] - self.in_start[v]) as u64;
        }
        let n = self.ranks();
        let mut cursor: Vec<u32> = self.base[..n].to_vec();
        let mut entered = vec![false; n];
        let mut worklist: Vec<usize> = (0..n).rev().collect();
        let mut queued = vec![true; n];
        // Instances that need nobody (a broadcast whose root is outside the selection, or
        // whose root's call the time window cut off) are ready from the start, with value 0:
        // their members wait for nothing.
        let mut ready_instances: Vec<usize> = (calls..nodes).filter(|&v| self.f[v] == 0).collect();
        self.release_instances(&mut ready_instances, &cursor, &mut queued, &mut worklist);
        while let Some(r) = worklist.pop() {
            queued[r] = false;
            while cursor[r] < self.base[r + 1] {
                let c = cursor[r];
                if !entered[r] {
                    entered[r] = true;
                    for k in self.out_start[c as usize]..self.out_start[c as usize + 1] {
                        let t = self.out_dst[k as usize] as usize;
                        self.f[t] -= 1;
                        if self.f[t] == 0 {
                            if t >= calls {
                                ready_instances.push(t);
                            } else {
                                let q = self.rank_of(t as u32);
                                if !queued[q] && cursor[q] as usize == t {
                                    queued[q] = true;
                                    worklist.push(q);
                                }
                            }
                        }
                    }
                    self.release_instances(&mut ready_instances, &cursor, &mut queued, &mut worklist);
                }
                if self.f[c as usize] > 0 {
                    break;
                }
                let a = self.active[c as usize];
                let own = self.own_value(c, |x| self.f[x as usize], |x| self.gap(x)).unwrap_or(0);
                let dep = self
                    .ins(c as usize)
                    .iter()
                    .map(|&s| self.source_value(s, |x| self.f[x as usize], |x| self.gap(x)))
                    .max()
                    .unwrap_or(0);
                self.f[c as usize] = own.max(dep) + a;
                self.order.push(c);
                cursor[r] += 1;
                entered[r] = false;
            }
        }
        if let Some(r) = (0..n).find(|&r| cursor[r] < self.base[r + 1]) {
            let c = cursor[r] - self.base[r];
            return Err(format!(
                "the trace's dependencies form a cycle: call {c} of rank {r} waits for something that waits for it"
            ));
        }
        self.length = (0..n)
            .filter(|&r| self.base[r + 1] > self.base[r])
            .map(|r| self.f[self.base[r + 1] as usize - 1] + self.tail[r])
            .max()
            .unwrap_or(0);
        Ok(())
    }

    /// Kahn's step for the instances in `ready` (all their sources reached): their values and
    /// positions, and the release of the calls waiting for them (a rank whose current call
    /// has nothing left to wait for goes back on the worklist).
    pub(super) fn release_instances(
        &mut self,
        ready: &mut Vec<usize>,
        cursor: &[u32],
        queued: &mut [bool],
        worklist: &mut Vec<usize>,
    ) {
        while let Some(v) = ready.pop() {
            let fv = self
                .ins(v)
                .iter()
                .map(|&s| self.enter_value(s, |x| self.f[x as usize], |x| self.gap(x)))
                .max()
                .unwrap_or(0);
            self.f[v] = fv;
            self.order.push(v as u32);
            for k in self.out_start[v]..self.out_start[v + 1] {
                let t = self.out_dst[k as usize] as usize;
                self.f[t] -= 1;
                if self.f[t] == 0 {
                    let q = self.rank_of(t as u32);
                    if !queued[q] && cursor[q] as usize == t {
                        queued[q] = true;
                        worklist.push(q);
                    }
                }
            }
        }
    }

    /// Value of a dependency source: the enter of a call, or an instance.
    pub(super) fn source_value(&self, s: u32, val: impl Fn(u32) -> u64 + Copy, gap: impl Fn(u32) -> u64) -> u64 {
        if (s as usize) < self.calls() {
            self.enter_value(s, val, gap)
        } else {
            val(s)
        }
    }

    /// Walks the path back from the sink: on a call's exit, stay on the rank when its own
    /// enter gives the value, else follow the dependency that does (an instance: its latest
    /// source).
    pub(super) fn find_path(&mut self) {
        let n = self.ranks();
        let Some(r) = (0..n)
            .filter(|&r| self.base[r + 1] > self.base[r])
            .find(|&r| self.f[self.base[r + 1] as usize - 1] + self.tail[r] == self.length)
        else {
            return;
        };
        let val = |x: u32| self.f[x as usize];
        let gap = |x: u32| self.gap(x);
        let mut steps = Vec::new();
        let mut c = self.base[r + 1] - 1;
        steps.push(PathStep::ComputeAfter(c));
        loop {
            let own = self.own_value(c, val, gap);
            let target = self.f[c as usize] - self.active[c as usize];
            if own == Some(target) {
                steps.push(PathStep::Call(c));
            } else {
                steps.push(PathStep::CallAfterDependency(c));
                // The dependency giving the value; an instance leads to its latest source.
                let mut s = *self
                    .ins(c as usize)
                    .iter()
                    .find(|&&s| self.source_value(s, val, gap) == target)
                    .expect("a dependency gives the value");
                if s as usize >= self.calls() {
                    s = *self
                        .ins(s as usize)
                        .iter()
                        .find(|&&x| self.enter_value(x, val, gap) == target)
                        .expect("a source gives the instance's value");
                }
                c = s;
            }
            steps.push(PathStep::ComputeBefore(c));
            if self.is_first(c) {
                break;
            }
            c -= 1;
        }
        steps.reverse();
        self.path = steps;
    }

    /// The path's steps as (rank, start ns, end ns, function or compute, call).
    pub(super) fn pieces(&self) -> Vec<(usize, u64, u64, Option<u32>, u32)> {
        let val = |x: u32| self.f[x as usize];
        let gap = |x: u32| self.gap(x);
        let mut func = self.func.iter();
        self.path
            .iter()
            .map(|&s| match s {
                PathStep::ComputeBefore(c) => {
                    let e = self.enter_value(c, val, gap);
                    (self.rank_of(c), e - self.gap(c), e, None, c)
                }
                PathStep::Call(c) | PathStep::CallAfterDependency(c) => {
                    let x = self.f[c as usize];
                    (
                        self.rank_of(c),
                        x - self.active[c as usize],
                        x,
                        Some(*func.next().expect("a function per call on the path")),
                        c,
                    )
                }
                PathStep::ComputeAfter(c) => {
                    let r = self.rank_of(c);
                    let x = self.f[c as usize];
                    (r, x, x + self.tail[r], None, c)
                }
            })
            .collect()
    }

    /// Length of the longest path in ns.
    pub fn length_ns(&self) -> u64 {
        self.length
    }

    /// Number of nodes (source, sink, two per call, one per collective instance).
    pub fn node_count(&self) -> usize {
        2 + 2 * self.calls() + (self.f.len() - self.calls())
    }

    /// Every edge of the graph, computation edges of the critical path marked by rank
    /// (the second value is true for those).
    pub fn edges(&self) -> Vec<(Edge, bool)> {
        let calls = self.calls();
        let on_path_compute: std::collections::HashSet<(bool, u32)> = self
            .path
            .iter()
            .filter_map(|s| match *s {
                PathStep::ComputeBefore(c) => Some((false, c)),
                PathStep::ComputeAfter(c) => Some((true, c)),
                _ => None,
            })
            .collect();
        let en = |c: u32| 2 + 2 * c;
        let ex = |c: u32| 3 + 2 * c;
        let node = |s: u32, as_source: bool| {
            if (s as usize) < calls {
                if as_source {
                    en(s)
                } else {
                    ex(s)
                }
            } else {
                (2 + 2 * calls) as u32 + (s - calls as u32)
            }
        };
        let mut out = Vec::new();
        for r in 0..self.ranks() {
            for c in self.base[r]..self.base[r + 1] {
                let from = if self.is_first(c) { 0 } else { ex(c - 1) };
                out.push((
                    Edge {
                        from,
                        to: en(c),
                        weight_ns: self.gap(c),
                        compute_of: Some(r as Rank),
                    },
                    on_path_compute.contains(&(false, c)),
                ));
                if !self.ends_polling(c) {
                    out.push((
                        Edge {
                            from: en(c),
                            to: ex(c),
                            weight_ns: self.active[c as usize],
                            compute_of: None,
                        },
                        false,
                    ));
                }
            }
            if self.base[r + 1] > self.base[r] {
                let c = self.base[r + 1] - 1;
                out.push((
                    Edge {
                        from: ex(c),
                        to: 1,
                        weight_ns: self.tail[r],
                        compute_of: Some(r as Rank),
                    },
                    on_path_compute.contains(&(true, c)),
                ));
            }
        }
        for t in 0..self.f.len() {
            for &s in self.ins(t) {
                let w = if t < calls { self.active[t] } else { 0 };
                out.push((
                    Edge {
                        from: node(s, true),
                        to: node(t as u32, false),
                        weight_ns: w,
                        compute_of: None,
                    },
                    false,
                ));
            }
        }
        out
    }
}
