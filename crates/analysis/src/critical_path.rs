//! The critical path of a run through its happens-before graph (Böhme et al., IPDPS 2012),
//! its profile per rank and per MPI function, and what removing one rank's computation on it
//! would gain (`docs/waits.md`).
//!
//! **Graph.** Every call `c` has an enter and an exit node. Program order links each rank's
//! nodes: `exit(c−1) → enter(c)` weighs the computation between the calls, `enter(c) → exit(c)`
//! the call's duration minus the time it waited. A call waits for its dependencies:
//!
//! - a receive completion (`MPI_Recv`, `MPI_Sendrecv`, `MPI_Wait*`/`MPI_Test*`) for the enter of
//!   each matched send's posting call;
//! - a blocking send or `MPI_Wait` that waited for its receive (the late-receiver rule of
//!   [`crate::waits`]) for the enter of the receive's posting call;
//! - a blocking collective for the enters of the members it needs: all members (barrier,
//!   all-to-all, scans and the rest), the root (non-roots of 1-to-N), every non-root (the root of
//!   N-to-1), through one node per collective instance;
//! - `MPI_Init` and `MPI_Finalize`, collective over all processes, for every rank's — when
//!   the timestamps show they synchronised (no rank left before the last one entered).
//!
//! The waiting time of a call is `min(latest dependency enter, exit) − enter` (0 if negative),
//! and every dependency edge into its exit weighs what is left, `exit − max(enter, latest
//! dependency)`. A source node precedes each rank's first call by the time from the trace's
//! start; each rank's last call precedes a sink by the time to the rank's end. On a trace whose
//! clocks respect every dependency the longest path to a node is exactly its timestamp, so the
//! critical path's length is the run's length, and the path follows the rank a waiting call
//! waited for — Böhme's backward walk; where the clocks contradict a dependency the path is
//! longer than the run.
//!
//! **Order and path.** A topological order comes from Kahn's algorithm over the implicit
//! program-order edges and the explicit dependency edges (a cycle — dependencies contradicting
//! program order — is an error); the longest-path values are computed in that order and the
//! path is read backwards from the sink, staying on the same rank on ties. O(calls + edges).
//!
//! **Gain.** For each rank with computation on the path, how much shorter the longest path gets
//! with that computation set to 0. With `d = f − g` (`g` the longest path with it removed), the
//! longest path's recurrence becomes a shortest path over the edges' slack (`f(v) − f(u) −
//! w(u, v)`, nonnegative) plus the weight removed, and the gain is the sink's `d`. One sweep of
//! the topological order carries `d` for up to 64 ranks at once as vectors (`u32` lanes when
//! every rank's computation on the path fits, since `d` never exceeds it), keeping only the
//! vectors a later node reads: one per rank and one per dependency source until its last target.
//! The ranks with most computation on the path go first, within [`GAIN_WORK`] (lanes × nodes,
//! at least one sweep); ranks left get no gain (`null`).

use crate::profile::{secs, selected};
use crate::waits::{roles, Instances, Role};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use tracelogic_model::{match_messages, CollectiveOp, Matching, Rank, Selection, Trace, NOT_COMPLETED};

/// The critical path, as `tracelogic critical-path --json` prints it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CriticalPath {
    /// Length of the path in seconds (the run's length when the clocks are consistent).
    pub length_s: f64,
    /// Per world rank: its share of the path and the gain of removing its computation on it.
    pub by_rank: Vec<RankOnPath>,
    /// Per MPI function on the path: its share (the rest is computation), by decreasing share.
    pub by_function: Vec<FunctionOnPath>,
    /// The path from the start of the run, as maximal pieces of one rank and one kind.
    pub segments: Vec<Segment>,
}

/// One rank on the critical path.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankOnPath {
    /// World rank.
    pub rank: Rank,
    /// Share of the path's length spent on this rank (computation and calls).
    pub share: f64,
    /// How much shorter the longest path gets when this rank's computation on the path is 0;
    /// `None` (JSON `null`) when the work budget ran out before this rank (see [`GAIN_WORK`]).
    pub gain_s: Option<f64>,
}

/// One MPI function on the critical path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionOnPath {
    /// MPI function, e.g. `MPI_Allreduce`.
    pub name: String,
    /// Share of the path's length spent in it.
    pub share: f64,
}

/// A piece of the critical path on one rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// World rank.
    pub rank: Rank,
    /// Start, seconds from the trace's first event (longest-path time).
    pub start_s: f64,
    /// End, seconds from the trace's first event.
    pub end_s: f64,
    /// `compute`, or the MPI function the path runs through.
    pub kind: String,
}

/// Critical path of the part of `trace` that `selection` keeps ([`Trace::restrict`]), with the
/// messages and collective instances of the whole trace ([`Trace::restrict_matching`]). Fails
/// when the dependencies contradict program order.
pub fn critical_path(trace: &Trace, selection: &Selection) -> Result<CriticalPath, String> {
    if *selection == Selection::default() {
        return critical_path_matched(trace, &match_messages(trace));
    }
    let t = selected(trace, selection);
    let matching = trace.restrict_matching(&match_messages(trace), selection);
    let sequence = trace.restrict_collective_sequence(selection);
    critical_path_paired(&t, &matching, Some(&sequence))
}

/// Critical path of a whole trace whose messages `matching` paired.
pub fn critical_path_matched(trace: &Trace, matching: &Matching) -> Result<CriticalPath, String> {
    critical_path_paired(trace, matching, None)
}

/// Critical path of `trace` whose messages `matching` paired, collective records numbered on
/// their communicators by `sequence` when given: for a restricted trace the whole trace's
/// pairing ([`Trace::restrict_matching`], [`Trace::restrict_collective_sequence`]). Matching
/// a window again would pair a receive whose send was cut off with the sender's next send,
/// which can make a false cycle.
pub fn critical_path_paired(
    trace: &Trace,
    matching: &Matching,
    sequence: Option<&[Vec<u32>]>,
) -> Result<CriticalPath, String> {
    let g = HappensBefore::build_paired(trace, matching, sequence)?;
    Ok(g.report(trace))
}

const NONE: u32 = u32::MAX;

/// Coarse phase timer: with `TRACELOGIC_CP_TIMES` set, each phase's wall time goes to stderr
/// (for profiling the critical path on large traces; off by default). `web_time`: `std::time`
/// panics in the browser worker (wasm32-unknown-unknown has no clock).
struct Phases {
    on: bool,
    t: web_time::Instant,
}

impl Phases {
    fn new() -> Phases {
        Phases {
            on: std::env::var_os("TRACELOGIC_CP_TIMES").is_some(),
            t: web_time::Instant::now(),
        }
    }

    fn mark(&mut self, what: &str) {
        if self.on {
            eprintln!("critical path: {what}: {:.3} s", self.t.elapsed().as_secs_f64());
            self.t = web_time::Instant::now();
        }
    }
}

/// Work budget of the gains, in lanes × nodes swept (at least one sweep of 64 ranks):
/// the ranks with most computation on the path are done first, and those left get no gain.
pub const GAIN_WORK: u64 = 4_000_000_000;

/// Ranks whose gains one sweep computes.
const LANES: usize = 64;

/// Calls per block of `HappensBefore::rank_hint`.
const RANK_HINT_SHIFT: u32 = 6;

/// A lane of the gains' sweep: a deficit in ns, `u32` when every rank's computation on the
/// path fits (a deficit never exceeds it), else `u64`; additions saturate.
trait Lane: Copy + Ord + Default {
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

/// An edge of the happens-before graph in the listing [`HappensBefore::edges`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// Source node.
    pub from: u32,
    /// Target node.
    pub to: u32,
    /// Weight, ns.
    pub weight_ns: u64,
    /// The rank whose computation this edge is, for computation edges.
    pub compute_of: Option<Rank>,
}

/// The happens-before graph of a trace with its longest-path values and critical path.
///
/// Node numbering (for [`HappensBefore::edges`]): 0 is the source, 1 the sink, `2 + 2c` and
/// `3 + 2c` the enter and exit of global call `c` (calls numbered rank by rank), then one node
/// per collective instance.
pub struct HappensBefore {
    /// `base[r]`: global id of rank `r`'s first call; `base[n]` = number of calls.
    base: Vec<u32>,
    enter: Vec<u64>,
    exit: Vec<u64>,
    /// Duration of each call minus its waiting time.
    active: Vec<u64>,
    func: Vec<u32>,
    /// Per rank: time from the trace start to its first call, and from its last call to its end.
    head: Vec<u64>,
    tail: Vec<u64>,
    /// Computation before each call (from the previous exit, or the trace start for a rank's
    /// first call), and whether it is its rank's first call.
    gap_ns: Vec<u64>,
    first: Vec<bool>,
    /// Dependency edges by target (exit of a call `c` = id `c`, instance `k` = `calls + k`);
    /// sources are enters of calls (`c`) or instances (`calls + k`).
    in_start: Vec<u32>,
    in_src: Vec<u32>,
    out_start: Vec<u32>,
    out_dst: Vec<u32>,
    /// Longest-path value (ns from the trace start) of each call's exit and each instance.
    f: Vec<u64>,
    /// Call exits and instances in topological order.
    order: Vec<u32>,
    /// `rank_hint[c >> RANK_HINT_SHIFT]`: the rank holding call `c & !mask` (see `rank_of`).
    rank_hint: Vec<u32>,
    /// Critical path as (node, via) pairs from the source: calls' exits and enters, see `path`.
    path: Vec<PathStep>,
    length: u64,
}

/// A step of the critical path, walked backwards and then reversed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathStep {
    /// Computation before call `c` (on its rank), from the previous exit or the source.
    ComputeBefore(u32),
    /// The active part of call `c`, entered from its own enter.
    Call(u32),
    /// The active part of call `c`, reached from a dependency.
    CallAfterDependency(u32),
    /// Computation after call `c` up to its rank's end.
    ComputeAfter(u32),
}

impl HappensBefore {
    /// Builds the graph of `trace` and computes the longest path. Fails when the dependencies
    /// contradict program order (a cycle).
    pub fn build(trace: &Trace, matching: &Matching) -> Result<HappensBefore, String> {
        HappensBefore::build_paired(trace, matching, None)
    }

    /// [`HappensBefore::build`] with the collective records numbered by `sequence` (see
    /// [`critical_path_paired`]).
    pub fn build_paired(
        trace: &Trace,
        matching: &Matching,
        sequence: Option<&[Vec<u32>]>,
    ) -> Result<HappensBefore, String> {
        let mut ph = Phases::new();
        let n = trace.ranks.len();
        let mut base = Vec::with_capacity(n + 1);
        let mut total = 0u64;
        for rt in &trace.ranks {
            base.push(total as u32);
            let c = &rt.calls;
            total += c.func.len().min(c.enter.len()).min(c.exit.len()) as u64;
        }
        if total >= (u32::MAX / 2) as u64 {
            return Err(format!("{} calls: too many for the critical path", total));
        }
        base.push(total as u32);
        let calls = total as usize;
        let (t0, _) = trace.span();
        let mut enter = Vec::with_capacity(calls);
        let mut exit = Vec::with_capacity(calls);
        let mut func = Vec::with_capacity(calls);
        let mut head = vec![0u64; n];
        let mut tail = vec![0u64; n];
        for (r, rt) in trace.ranks.iter().enumerate() {
            let c = &rt.calls;
            let len = (base[r + 1] - base[r]) as usize;
            // Clocks running backwards inside a rank are clamped: program order is the truth.
            let mut last = t0;
            for i in 0..len {
                let e = c.enter[i].max(last);
                let x = c.exit[i].max(e);
                enter.push(e);
                exit.push(x);
                func.push(c.func[i]);
                last = x;
            }
            if len > 0 {
                head[r] = enter[base[r] as usize] - t0;
                let end = rt.span.map_or(last, |s| s.1).max(last);
                tail[r] = end - last;
            }
        }
        let gid = |r: Rank, i: u32| base[r as usize] + i;
        ph.mark("copy calls");

        // Dependency edges as (target, source) pairs.
        let roles = roles(trace);
        let mut deps: Vec<(u32, u32)> = Vec::new();
        for m in &matching.messages {
            let (s, r) = (&trace.ranks[m.sender as usize], &trace.ranks[m.receiver as usize]);
            let (so, ro) = (m.send_op as usize, m.recv_op as usize);
            let (Some(&spost), Some(&rpost)) = (s.p2p.post.get(so), r.p2p.post.get(ro)) else {
                continue;
            };
            let in_range = |rank: Rank, i: u32| i < base[rank as usize + 1] - base[rank as usize];
            if !in_range(m.sender, spost) || !in_range(m.receiver, rpost) {
                continue;
            }
            let rc = r.p2p.complete.get(ro).copied().unwrap_or(NOT_COMPLETED);
            if rc != NOT_COMPLETED && in_range(m.receiver, rc) {
                deps.push((gid(m.receiver, rc), gid(m.sender, spost)));
            }
            let sc = s.p2p.complete.get(so).copied().unwrap_or(NOT_COMPLETED);
            if sc != NOT_COMPLETED && in_range(m.sender, sc) {
                let role = roles.get(s.calls.func[sc as usize] as usize).copied();
                let blocking = match role {
                    Some(Role::BlockingSend) => sc == spost,
                    Some(Role::WaitOne) => true,
                    _ => false,
                };
                let (sg, rg) = (gid(m.sender, sc), gid(m.receiver, rpost));
                if blocking && exit[sg as usize] > enter[rg as usize] {
                    deps.push((sg, rg));
                }
            }
        }
        ph.mark("message dependencies");
        let inst = Instances::of_sequence(trace, sequence);
        for k in 0..inst.len() {
            let v = (calls + k) as u32;
            let members = inst.members(k);
            let root = inst.root[k];
            // Who the instance needs (sources) and who waits for it (targets): 0 = everyone,
            // 1 = the root needs / non-roots wait (1-to-N), 2 = non-roots / the root (N-to-1).
            let form = match inst.op[k] {
                CollectiveOp::Bcast | CollectiveOp::Scatter | CollectiveOp::Scatterv => 1,
                CollectiveOp::Reduce | CollectiveOp::Gather | CollectiveOp::Gatherv => 2,
                _ => 0,
            };
            let needs = |r: Rank| match form {
                1 => r == root,
                2 => r != root,
                _ => true,
            };
            let waits = |r: Rank| match form {
                1 => r != root,
                2 => r == root,
                _ => true,
            };
            for &(r, c, _) in members {
                if c >= base[r as usize + 1] - base[r as usize] {
                    continue;
                }
                if needs(r) {
                    deps.push((v, gid(r, c)));
                }
                if waits(r) {
                    deps.push((gid(r, c), v));
                }
            }
        }
        // MPI_Init and MPI_Finalize are collective over all processes: each is one more
        // instance every rank that calls it waits for (not a wait state of `crate::waits`),
        // when the clocks show it synchronised.
        let mut extra = 0usize;
        for names in [&["mpi_init", "mpi_init_thread"][..], &["mpi_finalize"][..]] {
            let v = (calls + inst.len() + extra) as u32;
            let mut members: Vec<u32> = Vec::new();
            let named: Vec<bool> = trace
                .functions
                .names()
                .iter()
                .map(|name| names.iter().any(|n| name.eq_ignore_ascii_case(n)))
                .collect();
            if !named.contains(&true) {
                continue;
            }
            for (r, rt) in trace.ranks.iter().enumerate() {
                let len = base[r + 1] - base[r];
                let is = |i: u32| named.get(rt.calls.func[i as usize] as usize).copied().unwrap_or(false);
                let found = if names[0] == "mpi_finalize" {
                    (0..len).rev().find(|&i| is(i))
                } else {
                    (0..len).find(|&i| is(i))
                };
                if let Some(i) = found {
                    members.push(base[r] + i);
                }
            }
            // The standard does not make them synchronise: only when the clocks show that they
            // did (no member left before the last one entered) are they a dependency.
            let latest = members.iter().map(|&c| enter[c as usize]).max();
            let first_exit = members.iter().map(|&c| exit[c as usize]).min();
            if members.len() > 1 && latest <= first_exit {
                for &c in &members {
                    deps.push((v, c));
                    deps.push((c, v));
                }
                extra += 1;
            }
        }
        let nodes = calls + inst.len() + extra;
        ph.mark("collective dependencies");
        let (in_start, in_src) = csr(nodes, deps.iter().map(|&(t, s)| (t, s)));
        let (out_start, out_dst) = csr(nodes, deps.iter().map(|&(t, s)| (s, t)));
        drop(deps);
        ph.mark("compressed rows");

        // Active time of each call: its duration minus its wait for the latest dependency.
        // The timestamp of a source: a call's enter, or an instance's latest source enter.
        let inst_time: Vec<u64> = (calls..nodes)
            .map(|v| {
                in_src[in_start[v] as usize..in_start[v + 1] as usize]
                    .iter()
                    .map(|&s| enter[s as usize])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let time_of = |s: u32| {
            if (s as usize) < calls {
                enter[s as usize]
            } else {
                inst_time[s as usize - calls]
            }
        };
        let active: Vec<u64> = (0..calls)
            .map(|c| {
                let dep = in_src[in_start[c] as usize..in_start[c + 1] as usize]
                    .iter()
                    .map(|&s| time_of(s))
                    .max()
                    .unwrap_or(0);
                exit[c] - dep.clamp(enter[c], exit[c])
            })
            .collect();
        drop(inst_time);

        let mut g = HappensBefore {
            base,
            enter,
            exit,
            active,
            func,
            gap_ns: Vec::new(),
            first: Vec::new(),
            head,
            tail,
            in_start,
            in_src,
            out_start,
            out_dst,
            f: vec![0; nodes],
            order: Vec::with_capacity(nodes),
            rank_hint: Vec::new(),
            path: Vec::new(),
            length: 0,
        };
        g.rank_hint = (0..calls.div_ceil(1 << RANK_HINT_SHIFT))
            .map(|i| (g.base.partition_point(|&b| b as usize <= i << RANK_HINT_SHIFT) - 1) as u32)
            .collect();
        g.first = vec![false; calls];
        g.gap_ns = vec![0; calls];
        for r in 0..n {
            for c in g.base[r]..g.base[r + 1] {
                let cu = c as usize;
                if c == g.base[r] {
                    g.first[cu] = true;
                    g.gap_ns[cu] = g.head[r];
                } else {
                    g.gap_ns[cu] = g.enter[cu] - g.exit[cu - 1];
                }
            }
        }
        // The timestamps are in the gaps, active times and values now.
        g.enter = Vec::new();
        g.exit = Vec::new();
        ph.mark("active times and gaps");
        g.longest_paths()?;
        ph.mark("Kahn order and longest path");
        g.find_path();
        ph.mark("path");
        Ok(g)
    }

    fn calls(&self) -> usize {
        self.active.len()
    }

    fn ranks(&self) -> usize {
        self.base.len() - 1
    }

    /// The rank holding call `c`: from the rank holding the first call of its block of
    /// `1 << RANK_HINT_SHIFT`, forward past the ranks that end before `c` (usually none).
    fn rank_of(&self, c: u32) -> usize {
        let mut r = self.rank_hint[(c >> RANK_HINT_SHIFT) as usize] as usize;
        while self.base[r + 1] <= c {
            r += 1;
        }
        r
    }

    fn is_first(&self, c: u32) -> bool {
        self.first[c as usize]
    }

    /// Computation before call `c`: from the previous exit (or the trace start).
    fn gap(&self, c: u32) -> u64 {
        self.gap_ns[c as usize]
    }

    /// Longest-path value of the enter of call `c`, from the exit values `val`.
    fn enter_value(&self, c: u32, val: impl Fn(u32) -> u64, gap: impl Fn(u32) -> u64) -> u64 {
        if self.is_first(c) {
            gap(c)
        } else {
            val(c - 1) + gap(c)
        }
    }

    fn ins(&self, v: usize) -> &[u32] {
        &self.in_src[self.in_start[v] as usize..self.in_start[v + 1] as usize]
    }

    fn outs(&self, v: usize) -> &[u32] {
        &self.out_dst[self.out_start[v] as usize..self.out_start[v + 1] as usize]
    }

    /// Kahn's algorithm with the longest-path values: each rank runs until a call's exit waits
    /// for a dependency not yet reached; enters release the dependencies they are sources of.
    fn longest_paths(&mut self) -> Result<(), String> {
        let calls = self.calls();
        let nodes = self.f.len();
        let mut remaining: Vec<u32> = (0..nodes).map(|v| self.in_start[v + 1] - self.in_start[v]).collect();
        let n = self.ranks();
        let mut cursor: Vec<u32> = self.base[..n].to_vec();
        let mut entered = vec![false; n];
        let mut worklist: Vec<usize> = (0..n).rev().collect();
        let mut queued = vec![true; n];
        // Instances that need nobody (a broadcast whose root is outside the selection, or
        // whose root's call the time window cut off) are ready from the start, with value 0:
        // their members wait for nothing.
        let mut ready_instances: Vec<usize> = (calls..nodes).filter(|&v| remaining[v] == 0).collect();
        self.release_instances(
            &mut ready_instances,
            &mut remaining,
            &cursor,
            &mut queued,
            &mut worklist,
        );
        while let Some(r) = worklist.pop() {
            queued[r] = false;
            while cursor[r] < self.base[r + 1] {
                let c = cursor[r];
                if !entered[r] {
                    entered[r] = true;
                    for &t in self.outs(c as usize) {
                        let t = t as usize;
                        remaining[t] -= 1;
                        if remaining[t] == 0 {
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
                    self.release_instances(
                        &mut ready_instances,
                        &mut remaining,
                        &cursor,
                        &mut queued,
                        &mut worklist,
                    );
                }
                if remaining[c as usize] > 0 {
                    break;
                }
                let a = self.active[c as usize];
                let own = self.enter_value(c, |x| self.f[x as usize], |x| self.gap(x));
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
    fn release_instances(
        &mut self,
        ready: &mut Vec<usize>,
        remaining: &mut [u32],
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
            for &t in self.outs(v) {
                let t = t as usize;
                remaining[t] -= 1;
                if remaining[t] == 0 {
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
    fn source_value(&self, s: u32, val: impl Fn(u32) -> u64 + Copy, gap: impl Fn(u32) -> u64) -> u64 {
        if (s as usize) < self.calls() {
            self.enter_value(s, val, gap)
        } else {
            val(s)
        }
    }

    /// Walks the path back from the sink: on a call's exit, stay on the rank when its own
    /// enter gives the value, else follow the dependency that does (an instance: its latest
    /// source).
    fn find_path(&mut self) {
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
            let own = self.enter_value(c, val, gap);
            let target = self.f[c as usize] - self.active[c as usize];
            if own == target {
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
    fn pieces(&self) -> Vec<(usize, u64, u64, Option<u32>, u32)> {
        let val = |x: u32| self.f[x as usize];
        let gap = |x: u32| self.gap(x);
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
                        Some(self.func[c as usize]),
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
    fn deficits<T: Lane, const N: usize>(&self, lanes: &[usize], zero_bits: &[u64], tail_zeroed: &[bool]) -> Vec<u64> {
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
                    let es = T::sat(top - self.enter_value(v, val, gap));
                    if es != T::default() {
                        d.iter_mut().for_each(|x| *x = x.add(es));
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

    fn report(&self, trace: &Trace) -> CriticalPath {
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
        for group in by_need.chunks(LANES) {
            let fits = group.iter().all(|&r| computes[r] <= u32::MAX as u64);
            let d = match (group.len(), fits) {
                (0..=8, true) => self.deficits::<u32, 8>(group, &zero_bits, &tail_zeroed),
                (0..=8, false) => self.deficits::<u64, 8>(group, &zero_bits, &tail_zeroed),
                (_, true) => self.deficits::<u32, LANES>(group, &zero_bits, &tail_zeroed),
                (_, false) => self.deficits::<u64, LANES>(group, &zero_bits, &tail_zeroed),
            };
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

/// Compressed rows of `pairs` (row, value) over `rows` rows, values in input order per row.
fn csr(rows: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; rows + 1];
    for (r, _) in pairs.clone() {
        start[r as usize + 1] += 1;
    }
    for i in 0..rows {
        start[i + 1] += start[i];
    }
    let mut free = start.clone();
    let mut vals = vec![0u32; start[rows] as usize];
    for (r, v) in pairs {
        vals[free[r as usize] as usize] = v;
        free[r as usize] += 1;
    }
    (start, vals)
}
