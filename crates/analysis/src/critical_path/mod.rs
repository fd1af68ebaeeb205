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
//!   the timestamps show they synchronised (no rank left before the last one entered);
//! - a probe (`MPI_Probe`, `MPI_Iprobe`, `MPI_Mprobe`, `MPI_Improbe`) right before the call
//!   posting a receive (but for status reads between them, `MPI_Get_count` and
//!   `MPI_Get_elements`), for the enter of that message's send — the probe found it — when
//!   the clocks allow (the send entered before the probe left).
//!
//! **Polling.** A rank that waits by asking (non-blocking probes, or tests completing nothing,
//! in a row: [`crate::waits::Polling`]) until a probe finds a message or a test completes a
//! receive never blocks, so Böhme's rule would keep the path on it through the asking. The
//! asking is its waiting: the call that ends such a run has no program-order edge from its own
//! enter but a dependency on the enter of the run's first call, and waits from there —
//! `min(latest dependency, exit) − enter of the run`. The path then jumps to the sender when
//! the message was sent after the rank began asking, and otherwise runs through the whole
//! run as that call (the rank asked for something already there). Computation between the
//! asks counts as waiting: the trace cannot tell a rank that computed between asks from one
//! that only asked.
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

use crate::logical::per_rank::both;
use crate::profile::{secs, selected};
use crate::waits::{polls, probe_before, role_of, roles, Instances, Role};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use tracelogic_model::{match_messages, CollectiveOp, Matching, Rank, Selection, Trace, NOT_COMPLETED};

mod gain;
mod path;
mod report;

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

/// [`HappensBefore`]'s flag of a rank's first call.
const FIRST: u8 = 1;
/// [`HappensBefore`]'s flag of a call that ends a run of polling calls.
const POLL_END: u8 = 2;

/// Coarse phase timer: with `TRACELOGIC_CP_TIMES` set, each phase's wall time goes to stderr
/// (for profiling the critical path on large traces; off by default). `web_time`: `std::time`
/// panics in the browser worker (wasm32-unknown-unknown has no clock).
/// Beside the wall time, the process's CPU time (user + system, all threads) where
/// `/proc/self/stat` gives it, in 10 ms ticks: on a shared machine the wall time mostly
/// measures the other processes.
struct Phases {
    on: bool,
    t: web_time::Instant,
    cpu: Option<(f64, u64)>,
}

impl Phases {
    fn new() -> Phases {
        let on = std::env::var_os("TRACELOGIC_CP_TIMES").is_some();
        Phases {
            on,
            t: web_time::Instant::now(),
            cpu: if on { process_cpu() } else { None },
        }
    }

    fn mark(&mut self, what: &str) {
        if self.on {
            let cpu = process_cpu();
            let used = match (cpu, self.cpu) {
                (Some(b), Some(a)) => format!(" ({:.2} s CPU, {} page faults)", b.0 - a.0, b.1 - a.1),
                _ => String::new(),
            };
            eprintln!("critical path: {what}: {:.3} s{used}", self.t.elapsed().as_secs_f64());
            self.t = web_time::Instant::now();
            self.cpu = cpu;
        }
    }
}

/// User + system CPU seconds and minor page faults of this process so far, from
/// `/proc/self/stat` (Linux; `None` elsewhere). Ticks are taken as 100 a second, Linux's
/// `USER_HZ` on every architecture.
fn process_cpu() -> Option<(f64, u64)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) in parentheses: minflt is the
    // 8th of them, utime and stime the 12th and 13th.
    let f: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    let num = |i: usize| f.get(i)?.parse::<u64>().ok();
    Some(((num(11)? + num(12)?) as f64 / 100.0, num(7)?))
}

/// Work budget of the gains, in lanes × nodes swept (at least one sweep of 64 ranks):
/// the ranks with most computation on the path are done first, and those left get no gain.
pub const GAIN_WORK: u64 = 4_000_000_000;

/// Ranks whose gains one sweep computes.
const LANES: usize = 64;

/// Calls per block of `HappensBefore::rank_hint`.
const RANK_HINT_SHIFT: u32 = 6;

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
    /// Duration of each call minus its waiting time.
    active: Vec<u64>,
    /// The function of each call the path runs through, in the path's order (its `Call` and
    /// `CallAfterDependency` steps).
    func: Vec<u32>,
    /// Per rank: time from its last call to its end.
    tail: Vec<u64>,
    /// Computation before each call (from the previous exit, or the trace start for a rank's
    /// first call), and per call [`FIRST`] (its rank's first call) and [`POLL_END`] (it ends a
    /// run of polling calls: no program-order edge from its own enter, a dependency on the
    /// run's first enter instead).
    gap_ns: Vec<u64>,
    flags: Vec<u8>,
    /// Dependency edges by target (exit of a call `c` = id `c`, instance `k` = `calls + k`);
    /// sources are enters of calls (`c`) or instances (`calls + k`).
    in_start: Vec<u32>,
    in_src: Vec<u32>,
    out_start: Vec<u32>,
    out_dst: Vec<u32>,
    /// Longest-path value (ns from the trace start) of each call's exit and each instance
    /// (while Kahn's order is found, a node not yet reached holds its unmet dependencies).
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
        crate::progress::step("building the happens-before graph", 0, 0);
        HappensBefore::build_paired(trace, matching, None)
    }

    /// [`HappensBefore::build`] with the collective records numbered by `sequence` (see
    /// [`critical_path_paired`]).
    pub fn build_paired(
        trace: &Trace,
        matching: &Matching,
        sequence: Option<&[Vec<u32>]>,
    ) -> Result<HappensBefore, String> {
        if let Some(e) = crate::summary::concurrent_threads(trace) {
            return Err(format!("{e}: the critical path needs one order of calls per rank"));
        }
        let mut ph = Phases::new();
        let n = trace.ranks.len();
        let mut base = Vec::with_capacity(n + 1);
        let mut total = 0u64;
        for rt in &trace.ranks {
            base.push(total as u32);
            let c = &rt.calls;
            total += c.func.len().min(c.enter.len()).min(c.duration.len()) as u64;
        }
        if total >= (u32::MAX / 2) as u64 {
            return Err(format!("{} calls: too many for the critical path", total));
        }
        base.push(total as u32);
        let calls = total as usize;
        let (t0, _) = trace.span();
        let rank_hint: Vec<u32> = (0..calls.div_ceil(1 << RANK_HINT_SHIFT))
            .map(|i| (base.partition_point(|&b| b as usize <= i << RANK_HINT_SHIFT) - 1) as u32)
            .collect();
        let rank_of = |c: u32| {
            let mut r = rank_hint[(c >> RANK_HINT_SHIFT) as usize] as usize;
            while base[r + 1] <= c {
                r += 1;
            }
            r
        };
        // The calls' times, clamped where a rank's clock runs backwards (program order is the
        // truth); a rank whose clock never does is read in place, not copied.
        let times = Times::of(trace, &base, t0);
        let mut head = vec![0u64; n];
        let mut tail = vec![0u64; n];
        let mut gap_ns = Vec::with_capacity(calls);
        let mut flags = vec![0u8; calls];
        for (r, rt) in trace.ranks.iter().enumerate() {
            let (en, ex) = (&*times.enter[r], &*times.exit[r]);
            let Some(&last) = ex.last() else {
                continue;
            };
            head[r] = en[0] - t0;
            let end = rt.span.map_or(last, |s| s.1).max(last);
            tail[r] = end - last;
            flags[base[r] as usize] |= FIRST;
            gap_ns.push(head[r]);
            gap_ns.extend(en[1..].iter().zip(ex).map(|(&e, &x)| e - x));
        }
        let en = |r: Rank, i: u32| times.enter[r as usize][i as usize];
        let ex = |r: Rank, i: u32| times.exit[r as usize][i as usize];
        let enter_of = |c: u32| {
            let r = rank_of(c);
            times.enter[r][(c - base[r]) as usize]
        };
        let gid = |r: Rank, i: u32| base[r as usize] + i;
        ph.mark("copy calls");

        // Dependency edges as (target, source) pairs; at most two per message and per
        // collective member, reserved at once (pages never written are never touched).
        let roles = roles(trace);
        let inst = Instances::of_sequence(trace, sequence);
        let member_count: usize = (0..inst.len()).map(|k| inst.members(k).len()).sum();
        let mut deps: Vec<(u32, u32)> = Vec::with_capacity(2 * matching.messages.len() + 2 * member_count + 4 * n);
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
            let rc = r.p2p.get_complete(ro).unwrap_or(NOT_COMPLETED);
            if rc != NOT_COMPLETED && in_range(m.receiver, rc) {
                deps.push((gid(m.receiver, rc), gid(m.sender, spost)));
            }
            // The probe right before the receive found this message, if the clocks allow.
            if let Some((probe, _)) = probe_before(&roles, &r.calls, rpost) {
                if en(m.sender, spost) <= ex(m.receiver, probe) {
                    deps.push((gid(m.receiver, probe), gid(m.sender, spost)));
                }
            }
            let sc = s.p2p.get_complete(so).unwrap_or(NOT_COMPLETED);
            if sc != NOT_COMPLETED && in_range(m.sender, sc) {
                let blocking = match role_of(&roles, s.calls.func[sc as usize]) {
                    Some(Role::BlockingSend) => sc == spost,
                    Some(Role::WaitOne) => true,
                    _ => false,
                };
                if blocking && ex(m.sender, sc) > en(m.receiver, rpost) {
                    deps.push((gid(m.sender, sc), gid(m.receiver, rpost)));
                }
            }
        }
        // A non-blocking probe or a test that a message's send let return ends the run of
        // polling calls before it: it waits from the run's first enter (module docs).
        let func_of = |c: u32| {
            let r = rank_of(c);
            trace.ranks[r].calls.func[(c - base[r]) as usize]
        };
        let asks = |f: u32| matches!(role_of(&roles, f), Some(Role::NonblockingProbe | Role::Test));
        let mut poll_ends: Vec<u32> = deps
            .iter()
            .map(|&(t, _)| t)
            .filter(|&t| (t as usize) < calls && asks(func_of(t)))
            .collect();
        poll_ends.sort_unstable();
        poll_ends.dedup();
        let mut polls_of: Vec<Option<Vec<bool>>> = vec![None; n];
        for c in poll_ends {
            let r = rank_of(c);
            let rt = &trace.ranks[r];
            let i = (c - base[r]) as usize;
            let asked = polls_of[r].get_or_insert_with(|| polls(trace, &roles, rt));
            let mut p = i;
            while p > 0 && asked[p - 1] {
                p -= 1;
            }
            if p < i {
                flags[c as usize] |= POLL_END;
                deps.push((c, base[r] + p as u32));
            }
        }
        drop(polls_of);
        ph.mark("message dependencies");
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
            let mut members: Vec<(Rank, u32)> = Vec::new();
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
                    members.push((r as Rank, i));
                }
            }
            // The standard does not make them synchronise: only when the clocks show that they
            // did (no member left before the last one entered) are they a dependency.
            let latest = members.iter().map(|&(r, i)| en(r, i)).max();
            let first_exit = members.iter().map(|&(r, i)| ex(r, i)).min();
            if members.len() > 1 && latest <= first_exit {
                for &(r, i) in &members {
                    deps.push((v, gid(r, i)));
                    deps.push((gid(r, i), v));
                }
                extra += 1;
            }
        }
        let nodes = calls + inst.len() + extra;
        ph.mark("collective dependencies");
        // The dependency rows by target, then the active times from them, beside the rows by
        // source (natively on two cores: they share only the read-only pairs).
        let ((in_start, in_src, active), (out_start, out_dst)) = both(
            || {
                let (in_start, in_src) = csr(nodes, deps.iter().map(|&(t, s)| (t, s)));
                // Active time of each call: its duration minus its wait for the latest
                // dependency. The timestamp of a source: a call's enter, or an instance's
                // latest source enter.
                let inst_time: Vec<u64> = (calls..nodes)
                    .map(|v| {
                        in_src[in_start[v] as usize..in_start[v + 1] as usize]
                            .iter()
                            .map(|&s| enter_of(s))
                            .max()
                            .unwrap_or(0)
                    })
                    .collect();
                let time_of = |s: u32| {
                    if (s as usize) < calls {
                        enter_of(s)
                    } else {
                        inst_time[s as usize - calls]
                    }
                };
                let mut active: Vec<u64> = Vec::with_capacity(calls);
                // Rank by rank: each rank's first call is the number of calls before it.
                for (en, ex) in times.enter.iter().zip(&times.exit) {
                    let c0 = active.len();
                    active.extend(en.iter().zip(ex.iter()).enumerate().map(|(i, (&e, &x))| {
                        let c = c0 + i;
                        let (a, b) = (in_start[c] as usize, in_start[c + 1] as usize);
                        if a == b {
                            return x - e;
                        }
                        let dep = in_src[a..b].iter().map(|&s| time_of(s)).max().unwrap_or(0);
                        // The end of a polling run waits from the run's first enter, one of its
                        // sources, so its latest source is never before its wait begins.
                        if flags[c] & POLL_END != 0 {
                            x - dep.min(x)
                        } else {
                            x - dep.clamp(e, x)
                        }
                    }));
                }
                (in_start, in_src, active)
            },
            || csr(nodes, deps.iter().map(|&(t, s)| (s, t))),
        );
        drop(deps);
        drop(times);
        ph.mark("compressed rows, active times");

        let mut g = HappensBefore {
            base,
            active,
            func: Vec::new(),
            gap_ns,
            flags,
            tail,
            in_start,
            in_src,
            out_start,
            out_dst,
            f: vec![0; nodes],
            order: Vec::with_capacity(nodes),
            rank_hint,
            path: Vec::new(),
            length: 0,
        };
        g.longest_paths()?;
        ph.mark("Kahn order and longest path");
        g.find_path();
        g.func = g
            .path
            .iter()
            .filter_map(|s| match *s {
                PathStep::Call(c) | PathStep::CallAfterDependency(c) => Some(c),
                _ => None,
            })
            .map(|c| {
                let r = g.rank_of(c);
                trace.ranks[r].calls.func[(c - g.base[r]) as usize]
            })
            .collect();
        ph.mark("path");
        Ok(g)
    }
}

/// Per rank, the calls' enter and exit times clamped so that program order holds (each call
/// enters no earlier than the previous one exits, exits no earlier than it enters), as plain
/// vectors (the model stores entries as [`tracelogic_model::Stamps`] and durations).
struct Times {
    enter: Vec<Vec<u64>>,
    exit: Vec<Vec<u64>>,
}

impl Times {
    fn of(trace: &Trace, base: &[u32], t0: u64) -> Times {
        let mut enter = Vec::with_capacity(trace.ranks.len());
        let mut exit = Vec::with_capacity(trace.ranks.len());
        for (r, rt) in trace.ranks.iter().enumerate() {
            let len = (base[r + 1] - base[r]) as usize;
            let mut e: Vec<u64> = rt.calls.enters().take(len).collect();
            let mut x: Vec<u64> = rt.calls.exits().take(len).collect();
            let mut last = t0;
            for (e, x) in e.iter_mut().zip(&mut x) {
                *e = (*e).max(last);
                *x = (*x).max(*e);
                last = *x;
            }
            enter.push(e);
            exit.push(x);
        }
        Times { enter, exit }
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
    // Each row's values are written from its start, which then moves to the next row's
    // start; shifting the starts back by one row restores them (no second array).
    let mut vals = vec![0u32; start[rows] as usize];
    for (r, v) in pairs {
        let k = &mut start[r as usize];
        vals[*k as usize] = v;
        *k += 1;
    }
    start.copy_within(0..rows, 1);
    start[0] = 0;
    (start, vals)
}
