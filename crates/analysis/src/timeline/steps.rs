//! Logical time: the steps of the happens-before order, as Ravel draws a trace.
//!
//! A call's step is `1 + max(step of the previous call on its rank, step of the posting call of
//! every matched send its rank receives in this call)` — the receive for a blocking receive,
//! the completing `MPI_Wait*`/`MPI_Test*` for a non-blocking one. All calls of one collective
//! instance (the n-th collective of a communicator on each of its ranks) share one step: one
//! more than the largest such bound over the participants. The first call of a rank without
//! dependencies has step 1.
//!
//! Computed once in O(calls + messages) (each rank advances as far as its dependencies allow,
//! then waits to be woken by the rank it waits for). A trace whose dependencies cannot all be
//! met (a receive completing before its send was posted, a collective some member never
//! reaches) would stall: the lowest stalled rank then goes on without the missing dependency,
//! and [`Steps::forced`] counts how often that happened.

use std::collections::{HashMap, VecDeque};
use tracelogic_model::{Matching, Trace, NOT_COMPLETED};

/// Logical steps of every call.
#[derive(Debug, Clone, Default)]
pub struct Steps {
    /// `steps[r][i]`: step of call `i` of rank `r` (≥ 1, increasing along the rank).
    pub steps: Vec<Vec<u32>>,
    /// Largest step.
    pub max_step: u32,
    /// Dependencies dropped because they could never be met.
    pub forced: u64,
}

/// A message dependency of a receiving call: (receiving call, sender, sender's posting call).
type Dep = (u32, u32, u32);

#[derive(Default, Clone)]
struct Instance {
    expected: u32,
    arrived: u32,
    bound: u32,
    step: u32,
    waiting: Vec<u32>,
}

enum Blocked {
    No,
    OnRank,
    OnInstance(u32),
}

/// Compute the steps of `trace` given its message matching.
pub fn logical_steps(trace: &Trace, matching: &Matching) -> Steps {
    let n = trace.ranks.len();
    // Message dependencies, per receiving rank, sorted by the receiving call.
    let mut deps: Vec<Vec<Dep>> = vec![Vec::new(); n];
    for m in &matching.messages {
        let (s, r) = (m.sender as usize, m.receiver as usize);
        let src = trace.ranks[s].p2p.post[m.send_op as usize];
        let rp = &trace.ranks[r].p2p;
        let dst = match rp.complete(m.recv_op as usize) {
            NOT_COMPLETED => rp.post[m.recv_op as usize],
            c => c,
        };
        if s == r && src >= dst {
            continue;
        }
        deps[r].push((dst, m.sender, src));
    }
    for d in &mut deps {
        if d.windows(2).any(|w| w[0].0 > w[1].0) {
            d.sort_by_key(|x| x.0);
        }
    }
    // Collective instances: the k-th collective call of a communicator on each rank.
    let mut inst_of: HashMap<(u32, u32), u32> = HashMap::new();
    let mut instances: Vec<Instance> = Vec::new();
    // Per rank: (call, instance) sorted by call, one entry per call.
    let mut colls: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
    for (r, rt) in trace.ranks.iter().enumerate() {
        let mut nth: HashMap<u32, u32> = HashMap::new();
        let c = &rt.collectives;
        for k in 0..c.len() {
            let call = c.call[k];
            if colls[r].last().is_some_and(|l| l.0 == call) {
                continue;
            }
            let cnt = nth.entry(c.comm[k]).or_insert(0);
            let key = (c.comm[k], *cnt);
            *cnt += 1;
            let id = *inst_of.entry(key).or_insert_with(|| {
                instances.push(Instance::default());
                instances.len() as u32 - 1
            });
            instances[id as usize].expected += 1;
            colls[r].push((call, id));
        }
        if colls[r].windows(2).any(|w| w[0].0 > w[1].0) {
            colls[r].sort_by_key(|x| x.0);
            colls[r].dedup_by_key(|x| x.0);
        }
    }

    let mut steps: Vec<Vec<u32>> = trace.ranks.iter().map(|rt| vec![0u32; rt.calls.len()]).collect();
    let mut ptr = vec![0usize; n];
    let mut dep_ptr = vec![0usize; n];
    let mut coll_ptr = vec![0usize; n];
    let mut arrived = vec![false; n];
    let mut blocked_on: Vec<Blocked> = (0..n).map(|_| Blocked::No).collect();
    let mut waiters: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut queued = vec![true; n];
    let mut queue: VecDeque<u32> = (0..n as u32).collect();
    let mut force = vec![false; n];
    let mut forced = 0u64;
    let mut unfinished = (0..n).filter(|&r| !steps[r].is_empty()).count();
    let mut lowest_unfinished = 0usize;

    loop {
        let Some(r) = queue.pop_front() else {
            // Stalled: let the lowest unfinished rank go on without what it waits for.
            while lowest_unfinished < n && ptr[lowest_unfinished] >= steps[lowest_unfinished].len() {
                lowest_unfinished += 1;
            }
            if lowest_unfinished >= n {
                break;
            }
            let r = lowest_unfinished;
            force[r] = true;
            forced += 1;
            if let Blocked::OnInstance(i) = blocked_on[r] {
                let inst = &mut instances[i as usize];
                inst.step = inst.bound + 1;
                for w in std::mem::take(&mut inst.waiting) {
                    if !queued[w as usize] {
                        queued[w as usize] = true;
                        queue.push_back(w);
                    }
                }
            }
            if !queued[r] {
                queued[r] = true;
                queue.push_back(r as u32);
            }
            continue;
        };
        let r = r as usize;
        queued[r] = false;
        blocked_on[r] = Blocked::No;
        let len = steps[r].len();
        let start = ptr[r];
        while ptr[r] < len {
            let i = ptr[r];
            let mut bound = if i > 0 { steps[r][i - 1] } else { 0 };
            let d = &deps[r];
            let mut k = dep_ptr[r];
            while k < d.len() && (d[k].0 as usize) < i {
                k += 1;
            }
            let mut wait_for = None;
            while k < d.len() && d[k].0 as usize == i {
                let (_, s, src) = d[k];
                if ptr[s as usize] > src as usize {
                    bound = bound.max(steps[s as usize][src as usize]);
                } else if !force[r] {
                    wait_for = Some(s);
                    break;
                }
                k += 1;
            }
            if let Some(s) = wait_for {
                blocked_on[r] = Blocked::OnRank;
                waiters[s as usize].push(r as u32);
                break;
            }
            let cp = coll_ptr[r];
            if cp < colls[r].len() && colls[r][cp].0 as usize == i {
                let id = colls[r][cp].1 as usize;
                let inst = &mut instances[id];
                if inst.step == 0 {
                    if !arrived[r] {
                        arrived[r] = true;
                        inst.arrived += 1;
                        inst.bound = inst.bound.max(bound);
                    }
                    if inst.arrived >= inst.expected {
                        inst.step = inst.bound + 1;
                        for w in std::mem::take(&mut inst.waiting) {
                            if w as usize != r && !queued[w as usize] {
                                queued[w as usize] = true;
                                queue.push_back(w);
                            }
                        }
                    } else {
                        inst.waiting.push(r as u32);
                        blocked_on[r] = Blocked::OnInstance(id as u32);
                        break;
                    }
                }
                steps[r][i] = inst.step.max(bound + 1);
                arrived[r] = false;
                coll_ptr[r] = cp + 1;
            } else {
                steps[r][i] = bound + 1;
            }
            force[r] = false;
            dep_ptr[r] = k;
            ptr[r] = i + 1;
        }
        if ptr[r] > start {
            if ptr[r] >= len {
                unfinished -= 1;
            }
            for w in std::mem::take(&mut waiters[r]) {
                if !queued[w as usize] {
                    queued[w as usize] = true;
                    queue.push_back(w);
                }
            }
        }
        if unfinished == 0 {
            break;
        }
    }
    let max_step = steps.iter().filter_map(|s| s.last().copied()).max().unwrap_or(0);
    Steps {
        steps,
        max_step,
        forced,
    }
}
