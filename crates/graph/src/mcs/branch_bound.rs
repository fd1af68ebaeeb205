//! The exact search of the maximum common edge subgraph: depth-first branch and bound over
//! bijections, within a step budget.

use super::*;

/// Depth-first branch and bound over bijections. The bound at a search node is
/// `kept + pair(mapped-neighbour counts) + ½·pair(free-neighbour counts)`, where `pair` is the
/// sorted pairing of the free nodes of both graphs (see [`degree_sequence_bound`]); the four
/// histograms are updated on every assignment.
pub(super) struct BranchAndBound<'g> {
    a: &'g Graph,
    b: &'g Graph,
    order: &'g [u32],
    map_a: Vec<u32>,
    map_b: Vec<u32>,
    /// For free nodes: neighbours already mapped (`mapped_*`) and neighbours still free (`free_*`).
    mapped_a: Vec<u32>,
    mapped_b: Vec<u32>,
    free_a: Vec<u32>,
    free_b: Vec<u32>,
    hist_mapped_a: Vec<u32>,
    hist_mapped_b: Vec<u32>,
    hist_free_a: Vec<u32>,
    hist_free_b: Vec<u32>,
    kept: usize,
    /// Edges of each graph with both ends mapped: the rest is all that can still be kept.
    decided_a: usize,
    decided_b: usize,
    pub(super) best_common: usize,
    pub(super) best: Vec<u32>,
    pub(super) steps: u64,
    scratch: Vec<u32>,
    /// Only candidates that keep every edge to mapped neighbours.
    pub(super) embed: bool,
}

impl<'g> BranchAndBound<'g> {
    pub(super) fn new(a: &'g Graph, b: &'g Graph, order: &'g [u32], best_common: usize, best: Vec<u32>) -> Self {
        let n = a.num_nodes() as usize;
        let width = a.max_degree().max(b.max_degree()) as usize + 1;
        let free_a: Vec<u32> = (0..n as u32).map(|u| a.degree(u)).collect();
        let free_b: Vec<u32> = (0..n as u32).map(|v| b.degree(v)).collect();
        let mut hist_free_a = vec![0u32; width];
        let mut hist_free_b = vec![0u32; width];
        for &d in &free_a {
            hist_free_a[d as usize] += 1;
        }
        for &d in &free_b {
            hist_free_b[d as usize] += 1;
        }
        let mut hist_mapped_a = vec![0u32; width];
        let mut hist_mapped_b = vec![0u32; width];
        hist_mapped_a[0] = n as u32;
        hist_mapped_b[0] = n as u32;
        BranchAndBound {
            a,
            b,
            order,
            map_a: vec![NONE; n],
            map_b: vec![NONE; n],
            mapped_a: vec![0; n],
            mapped_b: vec![0; n],
            free_a,
            free_b,
            hist_mapped_a,
            hist_mapped_b,
            hist_free_a,
            hist_free_b,
            kept: 0,
            decided_a: 0,
            decided_b: 0,
            best_common,
            best,
            steps: 0,
            scratch: vec![0; n],
            embed: false,
        }
    }

    fn bound(&self) -> usize {
        let paired = paired_min(&self.hist_mapped_a, &self.hist_mapped_b) as usize
            + (paired_min(&self.hist_free_a, &self.hist_free_b) / 2) as usize;
        let left = (self.a.num_edges() - self.decided_a).min(self.b.num_edges() - self.decided_b);
        self.kept + paired.min(left)
    }

    /// Move node `u` between free and mapped in one graph's bookkeeping (`on` = being mapped).
    #[allow(clippy::too_many_arguments)]
    fn toggle(
        g: &Graph,
        u: u32,
        on: bool,
        is_free: impl Fn(u32) -> bool,
        mapped: &mut [u32],
        free: &mut [u32],
        hist_mapped: &mut [u32],
        hist_free: &mut [u32],
    ) {
        let (m, f) = (mapped[u as usize] as usize, free[u as usize] as usize);
        if on {
            hist_mapped[m] -= 1;
            hist_free[f] -= 1;
        } else {
            hist_mapped[m] += 1;
            hist_free[f] += 1;
        }
        for &w in g.neighbors(u) {
            if !is_free(w) {
                continue;
            }
            let (wm, wf) = (mapped[w as usize] as usize, free[w as usize] as usize);
            hist_mapped[wm] -= 1;
            hist_free[wf] -= 1;
            let (nm, nf) = if on { (wm + 1, wf - 1) } else { (wm - 1, wf + 1) };
            mapped[w as usize] = nm as u32;
            free[w as usize] = nf as u32;
            hist_mapped[nm] += 1;
            hist_free[nf] += 1;
        }
    }

    fn assign(&mut self, u: u32, v: u32, gain: usize) {
        self.decided_a += self.mapped_a[u as usize] as usize;
        self.decided_b += self.mapped_b[v as usize] as usize;
        let map_a = &self.map_a;
        Self::toggle(
            self.a,
            u,
            true,
            |w| w != u && map_a[w as usize] == NONE,
            &mut self.mapped_a,
            &mut self.free_a,
            &mut self.hist_mapped_a,
            &mut self.hist_free_a,
        );
        let map_b = &self.map_b;
        Self::toggle(
            self.b,
            v,
            true,
            |w| w != v && map_b[w as usize] == NONE,
            &mut self.mapped_b,
            &mut self.free_b,
            &mut self.hist_mapped_b,
            &mut self.hist_free_b,
        );
        self.map_a[u as usize] = v;
        self.map_b[v as usize] = u;
        self.kept += gain;
    }

    fn unassign(&mut self, u: u32, v: u32, gain: usize) {
        self.map_a[u as usize] = NONE;
        self.map_b[v as usize] = NONE;
        self.kept -= gain;
        self.decided_a -= self.mapped_a[u as usize] as usize;
        self.decided_b -= self.mapped_b[v as usize] as usize;
        let map_a = &self.map_a;
        Self::toggle(
            self.a,
            u,
            false,
            |w| w != u && map_a[w as usize] == NONE,
            &mut self.mapped_a,
            &mut self.free_a,
            &mut self.hist_mapped_a,
            &mut self.hist_free_a,
        );
        let map_b = &self.map_b;
        Self::toggle(
            self.b,
            v,
            false,
            |w| w != v && map_b[w as usize] == NONE,
            &mut self.mapped_b,
            &mut self.free_b,
            &mut self.hist_mapped_b,
            &mut self.hist_free_b,
        );
    }

    /// Candidates for `u`: free nodes of `b` with the edges they would keep, most first.
    fn candidates(&mut self, u: u32) -> Vec<(usize, u32)> {
        let (a, b) = (self.a, self.b);
        let mut list: Vec<(usize, u32)> = Vec::new();
        for &x in a.neighbors(u) {
            let img = self.map_a[x as usize];
            if img == NONE {
                continue;
            }
            for &v in b.neighbors(img) {
                if self.map_b[v as usize] == NONE {
                    if self.scratch[v as usize] == 0 {
                        list.push((0, v));
                    }
                    self.scratch[v as usize] += 1;
                }
            }
        }
        for entry in &mut list {
            entry.0 = self.scratch[entry.1 as usize] as usize;
            self.scratch[entry.1 as usize] = 0;
        }
        let needed = self.mapped_a[u as usize] as usize;
        if self.embed && needed > 0 {
            list.retain(|&(k, _)| k == needed);
            list.sort_by_key(|&(_, v)| (b.degree(v).abs_diff(a.degree(u)), v));
            return list;
        }
        // Free nodes keeping nothing come after, once each.
        let mut keeps: Vec<bool> = Vec::new();
        if list.len() < self.map_b.len() {
            keeps = vec![false; self.map_b.len()];
            for &(_, v) in &list {
                keeps[v as usize] = true;
            }
        }
        let du = a.degree(u);
        list.sort_by_key(|&(k, v)| (std::cmp::Reverse(k), b.degree(v).abs_diff(du), v));
        if !keeps.is_empty() {
            let mut rest: Vec<(usize, u32)> = (0..self.map_b.len() as u32)
                .filter(|&v| self.map_b[v as usize] == NONE && !keeps[v as usize])
                .map(|v| (0, v))
                .collect();
            rest.sort_by_key(|&(_, v)| (b.degree(v).abs_diff(du), v));
            list.extend(rest);
            // Listing every free node costs O(n): charge it, so large graphs stay within budget.
            self.steps += self.map_b.len() as u64 / 16;
        }
        list
    }

    /// Run within `budget` steps; true when the whole space was explored.
    pub(super) fn run(&mut self, budget: u64) -> bool {
        let n = self.order.len();
        let mut stack: Vec<(Vec<(usize, u32)>, usize)> = Vec::with_capacity(n);
        if n == 0 {
            return true;
        }
        let first = self.candidates(self.order[0]);
        stack.push((first, 0));
        loop {
            let depth = stack.len() - 1;
            let u = self.order[depth];
            // Undo the previous candidate tried at this depth, if any.
            let (next, previous) = {
                let (cands, next) = stack.last_mut().expect("stack holds the current depth");
                let prev = if *next > 0 { Some(cands[*next - 1]) } else { None };
                (cands.get(*next).copied(), prev)
            };
            if let Some((gain, v)) = previous {
                if self.map_a[u as usize] == v {
                    self.unassign(u, v, gain);
                }
            }
            let Some((gain, v)) = next else {
                stack.pop();
                if stack.is_empty() {
                    return true;
                }
                continue;
            };
            stack.last_mut().expect("stack holds the current depth").1 += 1;
            self.steps += 1;
            if self.steps > budget {
                return false;
            }
            self.assign(u, v, gain);
            // Assigning and bounding cost O(degree) and O(largest degree): charged, so hubs
            // (a rank talking to thousands) cannot stretch a step.
            self.steps += (self.a.degree(u) + self.b.degree(v)) as u64 / 16 + self.hist_free_a.len() as u64 / 16;
            if self.bound() <= self.best_common {
                self.unassign(u, v, gain);
                continue;
            }
            if depth + 1 == n {
                // Bound > best and everything mapped: kept equals the bound, a new best.
                self.best_common = self.kept;
                self.best = self.map_a.clone();
                self.unassign(u, v, gain);
                continue;
            }
            let cands = self.candidates(self.order[depth + 1]);
            stack.push((cands, 0));
        }
    }
}
