//! The timeline: every rank's MPI calls over time (or over logical steps), messages from send to
//! receive, collectives, at any zoom from the whole run down to single calls.
//!
//! [`TimelineIndex::build`] prepares a trace once in O(calls + messages): per rank, a pyramid
//! of time bins (level 0 about four calls a bin, each level above half as many bins; a bin keeps
//! its busy share, its dominant function and that function's share, and its longest call),
//! each point-to-point operation's message, the receives in order of completion and the
//! collective instances. [`timeline`] then answers a [`TimelineQuery`] (a window, the ranks in
//! the order drawn, a number of pixel columns and of lanes) with a [`TimelineTile`]: per lane
//! and pixel column the function covering most of the column and the busy share, plus the
//! calls at least one column wide, the messages sent or received in the window and the
//! collectives overlapping it.
//!
//! Level of detail: when a column is at least two level-0 bins wide, a column is aggregated
//! from the coarsest level whose bins are at most half a column wide (bins straddling a column
//! edge count in proportion to their overlap), so the query costs O(lanes × columns) whatever
//! the window holds; otherwise it is aggregated exactly from the calls in the window (at most
//! about eight calls per column per rank). [`TimelineTile::resolution`] says which was used.
//! From bins, the dominant function of a column is the function with the largest sum of its
//! bins' dominant shares (exact when one function covers more than two thirds of every bin it
//! shares); the busy share is exact up to the two edge bins.
//!
//! Logical time ([`Clock::Logical`]) places call `i` at `[step − 1, step)` where the steps
//! come from [`steps::logical_steps`] (Ravel's happens-before steps: a call follows the previous
//! call of its rank and the sends it receives; collectives align across participants).

mod pyramid;
pub mod steps;

use pyramid::{Pyramid, DUR_STEPS, MAX_BIN_FUNC, NO_BIN_FUNC, SHARE};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use tracelogic_model::{CallKind, Matching, P2pDir, Rank, Time, Trace, NOT_COMPLETED, NO_ROOT};

pub use steps::{logical_steps, Steps};

/// Schema tag of the JSON form of [`TimelineTile`].
pub const SCHEMA: &str = "tracelogic-timeline/1";
/// "No function" in [`TimelineTile::func`] and "no peer" in [`TileCall::peer`].
pub const NONE: u32 = u32::MAX;
/// Default caps of a query.
pub const DEFAULT_MAX_CALLS: u32 = 20_000;
/// Default cap on messages in a tile.
pub const DEFAULT_MAX_MESSAGES: u32 = 5_000;
/// Default cap on collectives in a tile.
pub const DEFAULT_MAX_COLLECTIVES: u32 = 2_000;
/// Most pixel columns a query may ask for.
pub const MAX_PIXELS: u32 = 16_384;

/// Which clock the timeline runs on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    /// Nanoseconds since the trace's first event.
    #[default]
    Time,
    /// Logical steps (call `i` occupies `[step − 1, step)`).
    Logical,
}

/// What the columns' colour stands for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Colour {
    /// The MPI function ([`TimelineTile::func`] only).
    #[default]
    Function,
    /// The communication pattern whose occurrence the call belongs to ([`TimelineTile::group`]).
    Pattern,
    /// The execution phase the call belongs to ([`TimelineTile::group`]).
    Phase,
}

impl Colour {
    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Colour::Function => "function",
            Colour::Pattern => "pattern",
            Colour::Phase => "phase",
        }
    }
}

/// What each call belongs to for a [`Colour`] other than the function: given by the caller
/// (the engine finds patterns and phases), kept in the index with its pyramids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Groups {
    /// Name of each group id (`Pattern #0`, `phase 2`).
    pub names: Vec<String>,
    /// Per rank, per call: the group id, or [`NONE`].
    pub of_call: Vec<Vec<u32>>,
    /// Per rank, per call: the occurrence of the group the call is in (a pattern's n-th
    /// occurrence), or [`NONE`]; empty when groups have no occurrences.
    pub occurrence: Vec<Vec<u32>>,
}

/// A [`Groups`] with its pyramids (bins keep the dominant group instead of the function).
#[derive(Debug, Clone)]
struct GroupIndex {
    groups: Groups,
    time: Vec<Pyramid>,
    logical: Option<Vec<Pyramid>>,
}

/// What to draw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineQuery {
    /// Clock of `from` / `to` and of every time in the answer.
    #[serde(default)]
    pub clock: Clock,
    /// What the colour of a column stands for (the function is always in the tile; a pattern
    /// or phase colouring adds [`TimelineTile::group`]).
    #[serde(default)]
    pub colour: Colour,
    /// Window start (ns since the trace's first event, or steps).
    #[serde(default)]
    pub from: u64,
    /// Window end, exclusive; `None` (or not after `from`) is the end of the run.
    #[serde(default)]
    pub to: Option<u64>,
    /// Ranks in drawing order (empty: all, by number).
    #[serde(default)]
    pub ranks: Vec<Rank>,
    /// Pixel columns.
    pub pixels: u32,
    /// Most lanes: with more ranks than this, consecutive ranks share a lane (0: one lane per rank).
    #[serde(default)]
    pub rows: u32,
    /// Most calls listed one by one.
    #[serde(default = "default_calls")]
    pub max_calls: u32,
    /// Most messages listed.
    #[serde(default = "default_messages")]
    pub max_messages: u32,
    /// Most collectives listed.
    #[serde(default = "default_collectives")]
    pub max_collectives: u32,
}

fn default_calls() -> u32 {
    DEFAULT_MAX_CALLS
}
fn default_messages() -> u32 {
    DEFAULT_MAX_MESSAGES
}
fn default_collectives() -> u32 {
    DEFAULT_MAX_COLLECTIVES
}

impl TimelineQuery {
    /// The whole run on `pixels` columns, every rank its own lane, default caps.
    pub fn whole(clock: Clock, pixels: u32) -> TimelineQuery {
        TimelineQuery {
            clock,
            colour: Colour::Function,
            from: 0,
            to: None,
            ranks: Vec::new(),
            pixels,
            rows: 0,
            max_calls: DEFAULT_MAX_CALLS,
            max_messages: DEFAULT_MAX_MESSAGES,
            max_collectives: DEFAULT_MAX_COLLECTIVES,
        }
    }
}

/// One call drawn on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileCall {
    /// World rank.
    pub rank: Rank,
    /// Index of the call in its rank.
    pub index: u32,
    /// Function id (index into [`TimelineTile::functions`]).
    pub func: u32,
    /// Begin (clock of the query).
    pub begin: u64,
    /// End.
    pub end: u64,
    /// Begin and end in ns since the trace's first event (equal to `begin`/`end` in time mode).
    pub time: (u64, u64),
    /// Bytes of the point-to-point operations the call posts, or of its collective (sent + received).
    pub bytes: u64,
    /// Partner of the first point-to-point operation posted ([`NONE`] when none), or the root
    /// of a rooted collective.
    pub peer: u32,
    /// With a pattern or phase colouring: the pattern or phase of the call ([`NONE`] when none
    /// or with the function colouring).
    #[serde(default = "none")]
    pub group: u32,
    /// With the pattern colouring: which occurrence of its pattern the call is in (0-based, in
    /// order of start as `patterns --json` lists `spans`), else [`NONE`].
    #[serde(default = "none")]
    pub occurrence: u32,
}

fn none() -> u32 {
    NONE
}

/// One message: from the begin of the call posting the send to the end of the call completing
/// the receive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileMessage {
    /// Sending rank.
    pub sender: Rank,
    /// Receiving rank.
    pub receiver: Rank,
    /// Send time (clock of the query).
    pub send: u64,
    /// Receive time.
    pub recv: u64,
    /// Bytes sent.
    pub bytes: u64,
    /// Tag.
    pub tag: i32,
    /// Begin of the call posting the send and end of the call completing the receive, in ns
    /// since the trace's first event (equal to `send`/`recv` in time mode).
    #[serde(default)]
    pub time: (u64, u64),
    /// Late-sender wait of the receive's completing call for this message (ns, 0 when none;
    /// docs/waits.md).
    #[serde(default)]
    pub late_sender: u64,
    /// Late-receiver wait of the send's blocking call for this message (ns, 0 when none).
    #[serde(default)]
    pub late_receiver: u64,
}

/// One collective instance (the n-th collective call of a communicator on each member).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileCollective {
    /// Function id of the first participant's call.
    pub func: u32,
    /// Communicator id.
    pub comm: u32,
    /// Earliest begin over the participants.
    pub begin: u64,
    /// Latest end.
    pub end: u64,
    /// Number of participating ranks.
    pub participants: u32,
    /// Root, or [`NONE`].
    pub root: u32,
}

/// One lane: a rank, or consecutive ranks of the drawing order when there are more ranks than rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lane {
    /// The ranks, in drawing order.
    pub ranks: Vec<Rank>,
}

/// The answer to a [`TimelineQuery`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineTile {
    /// [`SCHEMA`].
    pub schema: String,
    /// Clock of every time below.
    pub clock: Clock,
    /// Window start.
    pub from: u64,
    /// Window end (exclusive).
    pub to: u64,
    /// Length of the run in this clock (ns, or the largest step).
    pub extent: u64,
    /// Pixel columns; column `k` covers `[from + ⌊k·(to−from)/pixels⌋, from + ⌊(k+1)·(to−from)/pixels⌋)`.
    pub pixels: u32,
    /// Lanes, top to bottom.
    pub lanes: Vec<Lane>,
    /// Function names by id.
    pub functions: Vec<String>,
    /// Per lane then column (`lane · pixels + column`): the function covering most of the
    /// column, summed over the lane's ranks ([`NONE`] for an idle column).
    pub func: Vec<u32>,
    /// Per lane then column: share of the column covered by calls, averaged over the lane's ranks.
    pub busy: Vec<f32>,
    /// What [`TimelineTile::group`] stands for ([`Colour::Function`]: it is empty).
    #[serde(default)]
    pub colour: Colour,
    /// Per lane then column, with a pattern or phase colouring: the pattern or phase covering
    /// most of the column ([`NONE`]: idle, or calls in none), aggregated as `func` is.
    #[serde(default)]
    pub group: Vec<u32>,
    /// Names of the group ids (`Pattern #3`, `phase 1`), as the patterns and phases views name them.
    #[serde(default)]
    pub groups: Vec<String>,
    /// Width of the bins the columns were aggregated from (clock units; 0: exactly from the calls).
    pub resolution: u64,
    /// Calls at least one column wide in the window, by rank then begin.
    pub calls: Vec<TileCall>,
    /// Such calls beyond `max_calls`.
    pub calls_left_out: u64,
    /// Messages between drawn ranks sent or received in the window (evenly sampled beyond the cap).
    pub messages: Vec<TileMessage>,
    /// Such messages not listed.
    pub messages_left_out: u64,
    /// Collective instances overlapping the window with a drawn participant.
    pub collectives: Vec<TileCollective>,
    /// Such instances not listed.
    pub collectives_left_out: u64,
}

/// A collective instance in the index.
#[derive(Debug, Clone)]
struct Instance {
    func: u32,
    comm: u32,
    root: u32,
    /// (rank, call) of every participant.
    members: Vec<(Rank, u32)>,
}

/// What [`timeline`] needs of one clock.
#[derive(Debug, Clone, Default)]
struct ClockIndex {
    extent: u64,
    pyramids: Vec<Pyramid>,
    /// Collective instances sorted by begin, with begin/end in this clock.
    colls: Vec<(u64, u64, u32)>,
    /// Running maximum of `colls[i].1`.
    colls_max_end: Vec<u64>,
    /// Per receiving rank: the longest time from a send's begin to its receive's end, and the
    /// longest a receive ended before its send began (clock inversion), over its messages.
    latency: Vec<(u64, u64)>,
}

/// Per-trace index of the timeline (see the module documentation).
#[derive(Debug, Clone)]
pub struct TimelineIndex {
    origin: Time,
    /// Per rank: call positions in order of entry, when program order is not.
    order: Vec<Option<Vec<u32>>>,
    /// Per rank: true when calls, in order of entry, do not overlap.
    disjoint: Vec<bool>,
    /// Per rank: the longest call (ns).
    longest: Vec<u64>,
    /// Number of matched messages (to check that [`timeline`] gets the same matching).
    messages: usize,
    /// Per rank, per point-to-point operation: index into `matching.messages` or [`NONE`].
    msg_of_op: Vec<Vec<u32>>,
    /// Per rank: receive operations by completing call.
    recv_by_completion: Vec<Vec<u32>>,
    /// Per rank: `sends_before[b]` = matched send operations among operations `0..64·b`, so
    /// that the sends of a window are counted and sampled without visiting each.
    sends_before: Vec<Vec<u32>>,
    instances: Vec<Instance>,
    time: ClockIndex,
    logical: Option<(Steps, ClockIndex)>,
    /// Groups given by [`TimelineIndex::set_groups`], by colouring.
    groups: HashMap<Colour, GroupIndex>,
}

impl TimelineIndex {
    /// Index `trace` whose messages `matching` matched (`tracelogic_model::match_messages`);
    /// the same matching must be passed to [`timeline`].
    pub fn build(trace: &Trace, matching: &Matching) -> TimelineIndex {
        let (origin, last) = trace.span();
        let extent = last.saturating_sub(origin).max(1);
        let n = trace.ranks.len();
        let mut order = Vec::with_capacity(n);
        let mut disjoint = Vec::with_capacity(n);
        let mut longest = Vec::with_capacity(n);
        let mut pyramids = Vec::with_capacity(n);
        for rt in &trace.ranks {
            let c = &rt.calls;
            let ord = if c.enter.windows(2).all(|w| w[0] <= w[1]) {
                None
            } else {
                let mut o: Vec<u32> = (0..c.len() as u32).collect();
                o.sort_by_key(|&i| c.enter[i as usize]);
                Some(o)
            };
            let at = |p: usize| ord.as_ref().map_or(p, |o| o[p] as usize);
            let dis = (1..c.len()).all(|p| c.exit[at(p - 1)] <= c.enter[at(p)]);
            let long = (0..c.len()).map(|i| c.exit[i] - c.enter[i]).max().unwrap_or(0);
            pyramids.push(Pyramid::build(
                c.len(),
                extent,
                |p| c.enter[at(p)] - origin,
                |p| c.exit[at(p)] - origin,
                |p| c.func[at(p)],
            ));
            order.push(ord);
            disjoint.push(dis);
            longest.push(long);
        }
        let mut msg_of_op: Vec<Vec<u32>> = trace.ranks.iter().map(|rt| vec![NONE; rt.p2p.len()]).collect();
        for (k, m) in matching.messages.iter().enumerate() {
            msg_of_op[m.sender as usize][m.send_op as usize] = k as u32;
            msg_of_op[m.receiver as usize][m.recv_op as usize] = k as u32;
        }
        let sends_before = trace
            .ranks
            .iter()
            .zip(&msg_of_op)
            .map(|(rt, ops)| {
                let mut pre = Vec::with_capacity(ops.len() / BLOCK + 2);
                let mut n = 0u32;
                pre.push(0);
                for (chunk, dirs) in ops.chunks(BLOCK).zip(rt.p2p.dir.chunks(BLOCK)) {
                    n += chunk
                        .iter()
                        .zip(dirs)
                        .filter(|(&m, &d)| m != NONE && d == P2pDir::Send)
                        .count() as u32;
                    pre.push(n);
                }
                pre
            })
            .collect();
        let recv_by_completion = trace
            .ranks
            .iter()
            .map(|rt| {
                let p = &rt.p2p;
                let mut v: Vec<u32> = (0..p.len() as u32)
                    .filter(|&k| p.dir[k as usize] == P2pDir::Recv)
                    .collect();
                v.sort_by_key(|&k| completion(p.post[k as usize], p.complete[k as usize]));
                v
            })
            .collect();
        let instances = collective_instances(trace);
        let time = ClockIndex {
            extent,
            pyramids,
            ..Default::default()
        };
        let mut index = TimelineIndex {
            origin,
            order,
            disjoint,
            longest,
            messages: matching.messages.len(),
            msg_of_op,
            recv_by_completion,
            sends_before,
            instances,
            time,
            logical: None,
            groups: HashMap::new(),
        };
        let colls = index.instance_spans(trace, Clock::Time);
        index.time.colls_max_end = running_max(&colls);
        index.time.colls = colls;
        index.time.latency = index.latencies(trace, matching, Clock::Time);
        index
    }

    fn latencies(&self, trace: &Trace, matching: &Matching, clock: Clock) -> Vec<(u64, u64)> {
        let mut out = vec![(0u64, 0u64); trace.ranks.len()];
        for m in &matching.messages {
            let sc = trace.ranks[m.sender as usize].p2p.post[m.send_op as usize];
            let rp = &trace.ranks[m.receiver as usize].p2p;
            let rc = completion(rp.post[m.recv_op as usize], rp.complete[m.recv_op as usize]);
            let s = self.span_of(trace, clock, m.sender as usize, sc as usize).0;
            let r = self.span_of(trace, clock, m.receiver as usize, rc as usize).1;
            let l = &mut out[m.receiver as usize];
            if r >= s {
                l.0 = l.0.max(r - s);
            } else {
                l.1 = l.1.max(s - r);
            }
        }
        out
    }

    /// Compute the logical steps and their pyramids (once; later calls do nothing).
    pub fn ensure_logical(&mut self, trace: &Trace, matching: &Matching) {
        if self.logical.is_some() {
            return;
        }
        let steps = logical_steps(trace, matching);
        let extent = (steps.max_step as u64).max(1);
        let pyramids = trace
            .ranks
            .iter()
            .zip(&steps.steps)
            .map(|(rt, s)| {
                Pyramid::build(
                    s.len(),
                    extent,
                    |p| s[p] as u64 - 1,
                    |p| s[p] as u64,
                    |p| rt.calls.func[p],
                )
            })
            .collect();
        self.logical = Some((
            steps,
            ClockIndex {
                extent,
                pyramids,
                ..Default::default()
            },
        ));
        let colls = self.instance_spans(trace, Clock::Logical);
        let latency = self.latencies(trace, matching, Clock::Logical);
        let ci = &mut self.logical.as_mut().unwrap().1;
        ci.colls_max_end = running_max(&colls);
        ci.colls = colls;
        ci.latency = latency;
        let colours: Vec<Colour> = self.groups.keys().copied().collect();
        for c in colours {
            let pyr = self.group_pyramids(trace, Clock::Logical, &self.groups[&c].groups.of_call);
            self.groups.get_mut(&c).unwrap().logical = pyr;
        }
    }

    /// Keep `groups` (what each call belongs to) for `colour` and build their pyramids, so that
    /// queries with that colouring get [`TimelineTile::group`]. Replaces earlier groups of
    /// that colouring. Errors when `groups` does not have one entry per call.
    pub fn set_groups(&mut self, trace: &Trace, colour: Colour, groups: Groups) -> Result<(), String> {
        if colour == Colour::Function {
            return Err("the function colouring needs no groups".into());
        }
        let fits = |v: &Vec<Vec<u32>>| {
            v.len() == trace.ranks.len() && v.iter().zip(&trace.ranks).all(|(g, rt)| g.len() == rt.calls.len())
        };
        if !fits(&groups.of_call) || !(groups.occurrence.is_empty() || fits(&groups.occurrence)) {
            return Err("the groups do not have one entry per call of the trace".into());
        }
        let time = self
            .group_pyramids(trace, Clock::Time, &groups.of_call)
            .unwrap_or_default();
        let logical = self.group_pyramids(trace, Clock::Logical, &groups.of_call);
        self.groups.insert(colour, GroupIndex { groups, time, logical });
        Ok(())
    }

    /// Whether [`TimelineIndex::set_groups`] gave groups for `colour`.
    pub fn has_groups(&self, colour: Colour) -> bool {
        colour == Colour::Function || self.groups.contains_key(&colour)
    }

    /// The pyramids of `clock` with each call's group in place of its function (`None` when
    /// the clock is not computed).
    fn group_pyramids(&self, trace: &Trace, clock: Clock, of_call: &[Vec<u32>]) -> Option<Vec<Pyramid>> {
        let ci = self.clock(clock)?;
        Some(
            trace
                .ranks
                .iter()
                .enumerate()
                .map(|(r, rt)| {
                    let at = |p: usize| match clock {
                        Clock::Logical => p,
                        Clock::Time => self.call_at(r, p),
                    };
                    Pyramid::build(
                        rt.calls.len(),
                        ci.extent,
                        |p| self.span_of(trace, clock, r, at(p)).0,
                        |p| self.span_of(trace, clock, r, at(p)).1,
                        |p| of_call[r][at(p)],
                    )
                })
                .collect(),
        )
    }

    /// The logical steps, once [`TimelineIndex::ensure_logical`] ran.
    pub fn steps(&self) -> Option<&Steps> {
        self.logical.as_ref().map(|l| &l.0)
    }

    /// Length of the run in `clock` (ns, or the largest step; `None` before
    /// [`TimelineIndex::ensure_logical`] for the logical clock).
    pub fn extent(&self, clock: Clock) -> Option<u64> {
        self.clock(clock).map(|c| c.extent)
    }

    /// Bytes held by the pyramids (both clocks).
    pub fn pyramid_bytes(&self) -> usize {
        let l = self
            .logical
            .as_ref()
            .map_or(0, |l| l.1.pyramids.iter().map(Pyramid::bytes).sum());
        self.time.pyramids.iter().map(Pyramid::bytes).sum::<usize>() + l
    }

    fn clock(&self, clock: Clock) -> Option<&ClockIndex> {
        match clock {
            Clock::Time => Some(&self.time),
            Clock::Logical => self.logical.as_ref().map(|l| &l.1),
        }
    }

    /// Position `p` (in order of entry) → call index of rank `r`.
    fn call_at(&self, r: usize, p: usize) -> usize {
        self.order[r].as_ref().map_or(p, |o| o[p] as usize)
    }

    fn instance_spans(&self, trace: &Trace, clock: Clock) -> Vec<(u64, u64, u32)> {
        let mut v: Vec<(u64, u64, u32)> = self
            .instances
            .iter()
            .enumerate()
            .map(|(k, inst)| {
                let mut b = u64::MAX;
                let mut e = 0;
                for &(r, c) in &inst.members {
                    let (cb, ce) = self.span_of(trace, clock, r as usize, c as usize);
                    b = b.min(cb);
                    e = e.max(ce);
                }
                (b, e, k as u32)
            })
            .collect();
        v.sort_unstable();
        v
    }

    /// Begin and end of call `i` of rank `r` in `clock`.
    fn span_of(&self, trace: &Trace, clock: Clock, r: usize, i: usize) -> (u64, u64) {
        match (clock, &self.logical) {
            (Clock::Logical, Some((s, _))) => {
                let st = s.steps[r][i] as u64;
                (st - 1, st)
            }
            _ => {
                let c = &trace.ranks[r].calls;
                (c.enter[i] - self.origin, c.exit[i] - self.origin)
            }
        }
    }
}

fn completion(post: u32, complete: u32) -> u32 {
    if complete == NOT_COMPLETED {
        post
    } else {
        complete
    }
}

fn running_max(colls: &[(u64, u64, u32)]) -> Vec<u64> {
    let mut m = 0;
    colls
        .iter()
        .map(|c| {
            m = m.max(c.1);
            m
        })
        .collect()
}

fn collective_instances(trace: &Trace) -> Vec<Instance> {
    let mut by_key: HashMap<(u32, u32), usize> = HashMap::new();
    let mut out: Vec<Instance> = Vec::new();
    for (r, rt) in trace.ranks.iter().enumerate() {
        let c = &rt.collectives;
        let mut nth: HashMap<u32, u32> = HashMap::new();
        let mut last_call = None;
        for k in 0..c.len() {
            if last_call == Some(c.call[k]) {
                continue;
            }
            last_call = Some(c.call[k]);
            let cnt = nth.entry(c.comm[k]).or_insert(0);
            let key = (c.comm[k], *cnt);
            *cnt += 1;
            let id = *by_key.entry(key).or_insert_with(|| {
                out.push(Instance {
                    func: rt.calls.func[c.call[k] as usize],
                    comm: c.comm[k],
                    root: if c.root[k] == NO_ROOT { NONE } else { c.root[k] },
                    members: Vec::new(),
                });
                out.len() - 1
            });
            out[id].members.push((r as Rank, c.call[k]));
        }
    }
    out
}

/// Operations per block of [`TimelineIndex::sends_before`].
const BLOCK: usize = 64;

impl TimelineIndex {
    fn is_send(&self, trace: &Trace, r: usize, k: usize) -> bool {
        self.msg_of_op[r][k] != NONE && trace.ranks[r].p2p.dir[k] == P2pDir::Send
    }

    /// Matched sends among operations `0..k` of rank `r`.
    fn sends_upto(&self, trace: &Trace, r: usize, k: usize) -> u64 {
        let b = k / BLOCK;
        let mut n = self.sends_before[r][b] as u64;
        for i in b * BLOCK..k {
            n += self.is_send(trace, r, i) as u64;
        }
        n
    }

    /// The operation of the `j`-th matched send (0-based) of rank `r`.
    fn nth_send(&self, trace: &Trace, r: usize, j: u64) -> usize {
        let pre = &self.sends_before[r];
        let b = pre.partition_point(|&x| (x as u64) <= j) - 1;
        let mut left = j - pre[b] as u64;
        let mut k = b * BLOCK;
        loop {
            if self.is_send(trace, r, k) {
                if left == 0 {
                    return k;
                }
                left -= 1;
            }
            k += 1;
        }
    }
}

/// Pixel column edges: `edge(k) = from + ⌊k·(to − from)/pixels⌋`.
fn edge(from: u64, to: u64, pixels: u32, k: u32) -> u64 {
    from + ((to - from) as u128 * k as u128 / pixels as u128) as u64
}

/// Small per-column accumulator of (function, covered).
#[derive(Default)]
struct Acc {
    items: Vec<(u32, f64)>,
    busy: f64,
}

impl Acc {
    fn clear(&mut self) {
        self.items.clear();
        self.busy = 0.0;
    }
    fn add(&mut self, f: u32, c: f64) {
        match self.items.iter_mut().find(|a| a.0 == f) {
            Some(a) => a.1 += c,
            None => self.items.push((f, c)),
        }
    }
    /// The function with the most coverage (lowest id on a tie), or [`NONE`].
    fn dominant(&self) -> u32 {
        let mut best = (NONE, 0.0);
        for &(f, c) in &self.items {
            if c > best.1 || (c == best.1 && c > 0.0 && f < best.0) {
                best = (f, c);
            }
        }
        best.0
    }
}

/// Answer `query` on `trace` with `index` (built from the same trace). The logical clock needs
/// [`TimelineIndex::ensure_logical`] first; errors name what is wrong with the query.
pub fn timeline(
    trace: &Trace,
    matching: &Matching,
    index: &TimelineIndex,
    query: &TimelineQuery,
) -> Result<TimelineTile, String> {
    let clock = index
        .clock(query.clock)
        .ok_or("the logical steps are not computed (TimelineIndex::ensure_logical)")?;
    if query.pixels == 0 || query.pixels > MAX_PIXELS {
        return Err(format!(
            "pixels must be between 1 and {MAX_PIXELS}, not {}",
            query.pixels
        ));
    }
    let n = trace.num_ranks();
    if index.time.pyramids.len() != n as usize || index.messages != matching.messages.len() {
        return Err("the timeline index belongs to another trace".into());
    }
    let ranks: Vec<Rank> = if query.ranks.is_empty() {
        (0..n).collect()
    } else {
        if let Some(&bad) = query.ranks.iter().find(|&&r| r >= n) {
            return Err(format!("rank {bad} is not in the trace (it has {n} ranks)"));
        }
        query.ranks.clone()
    };
    let from = query.from;
    let to = match query.to {
        Some(t) if t > from => t,
        _ => clock.extent.max(from + 1),
    };
    let pixels = query.pixels;
    let per_lane = if query.rows == 0 || ranks.len() as u32 <= query.rows {
        1
    } else {
        ranks.len().div_ceil(query.rows as usize)
    };
    let lanes: Vec<Lane> = ranks.chunks(per_lane).map(|c| Lane { ranks: c.to_vec() }).collect();
    let pw = (to - from) as f64 / pixels as f64;
    let funcs = |r: usize, i: usize| trace.ranks[r].calls.func[i];
    let (func, busy, resolution) = aggregate(
        trace,
        index,
        query.clock,
        &clock.pyramids,
        &funcs,
        &lanes,
        from,
        to,
        pixels,
    );
    let group_index = match query.colour {
        Colour::Function => None,
        c => Some(
            index
                .groups
                .get(&c)
                .ok_or_else(|| format!("no {} of each call was given (TimelineIndex::set_groups)", c.name()))?,
        ),
    };
    let group = match group_index {
        None => Vec::new(),
        Some(g) => {
            let pyramids = match query.clock {
                Clock::Time => &g.time,
                Clock::Logical => g.logical.as_ref().ok_or("the logical steps are not computed")?,
            };
            let label = |r: usize, i: usize| g.groups.of_call[r][i];
            aggregate(trace, index, query.clock, pyramids, &label, &lanes, from, to, pixels).0
        }
    };
    let mut shown = vec![false; n as usize];
    for &r in &ranks {
        shown[r as usize] = true;
    }
    let (mut calls, calls_left_out) = wide_calls(trace, index, clock, query, &ranks, from, to, pw);
    if let Some(g) = group_index {
        for c in &mut calls {
            let (r, i) = (c.rank as usize, c.index as usize);
            c.group = g.groups.of_call[r][i];
            c.occurrence = g.groups.occurrence.get(r).map_or(NONE, |o| o[i]);
        }
    }
    let (messages, messages_left_out) = messages_in(trace, matching, index, query, &ranks, &shown, from, to);
    let (collectives, collectives_left_out) = collectives_in(index, clock, query, &shown, from, to);
    Ok(TimelineTile {
        schema: SCHEMA.into(),
        clock: query.clock,
        from,
        to,
        extent: clock.extent,
        pixels,
        lanes,
        functions: trace.functions.names().to_vec(),
        func,
        busy,
        colour: query.colour,
        group,
        groups: group_index.map(|g| g.groups.names.clone()).unwrap_or_default(),
        resolution,
        calls,
        calls_left_out,
        messages,
        messages_left_out,
        collectives,
        collectives_left_out,
    })
}

/// Per lane then column of `[from, to)` on `pixels` columns: the label covering most of the
/// column (`label(rank, call)`: the function, or a group) and the busy share, from the bins of
/// `pyramids` (built with the same labels) where a column is at least two level-0 bins wide,
/// else exactly from the calls; and the widest bin width used (0: exact throughout).
#[allow(clippy::too_many_arguments)]
fn aggregate(
    trace: &Trace,
    index: &TimelineIndex,
    clock: Clock,
    pyramids: &[Pyramid],
    label: &dyn Fn(usize, usize) -> u32,
    lanes: &[Lane],
    from: u64,
    to: u64,
    pixels: u32,
) -> (Vec<u32>, Vec<f32>, u64) {
    let pw = (to - from) as f64 / pixels as f64;
    let mut func = vec![NONE; lanes.len() * pixels as usize];
    let mut busy = vec![0f32; lanes.len() * pixels as usize];
    let mut resolution = 0u64;
    let npix = pixels as usize;
    // Per rank of a lane: per column accumulators, then summed.
    let mut accs: Vec<Acc> = (0..npix).map(|_| Acc::default()).collect();
    for (l, lane) in lanes.iter().enumerate() {
        for a in &mut accs {
            a.clear();
        }
        for &r in &lane.ranks {
            let pyr = &pyramids[r as usize];
            if (pyr.w0 as f64) <= pw / 2.0 {
                let mut level = 0;
                while level + 1 < pyr.levels.len() && ((pyr.w0 << (level + 1)) as f64) <= pw / 2.0 {
                    level += 1;
                }
                let w = pyr.w0 << level;
                resolution = resolution.max(w);
                let bins = &pyr.levels[level];
                for (k, acc) in accs.iter_mut().enumerate() {
                    let x0 = edge(from, to, pixels, k as u32);
                    let x1 = edge(from, to, pixels, k as u32 + 1);
                    if x1 <= x0 {
                        continue;
                    }
                    let b0 = (x0 / w) as usize;
                    let b1 = (((x1 - 1) / w) as usize).min(bins.len().saturating_sub(1));
                    for (b, bin) in bins.iter().enumerate().take(b1 + 1).skip(b0) {
                        if bin.busy == 0 {
                            continue;
                        }
                        let lo = x0.max(b as u64 * w);
                        let hi = x1.min((b as u64 + 1) * w);
                        if hi <= lo {
                            continue;
                        }
                        let ov = (hi - lo) as f64;
                        acc.busy += bin.busy as f64 / SHARE * ov;
                        if bin.func != NO_BIN_FUNC && bin.func != MAX_BIN_FUNC {
                            acc.add(bin.func as u32, bin.dom as f64 / SHARE * ov);
                        }
                    }
                }
            } else {
                exact_rank(trace, index, clock, label, r as usize, from, to, pixels, &mut accs);
            }
        }
        for (k, acc) in accs.iter().enumerate() {
            let x0 = edge(from, to, pixels, k as u32);
            let x1 = edge(from, to, pixels, k as u32 + 1);
            let width = (x1 - x0) as f64 * lane.ranks.len() as f64;
            let cell = l * npix + k;
            if width > 0.0 {
                busy[cell] = (acc.busy / width).min(1.0) as f32;
            }
            func[cell] = acc.dominant();
        }
    }
    (func, busy, resolution)
}

/// Positions (in order of entry) of the calls of rank `r` that may overlap `[from, to)`.
fn positions(trace: &Trace, index: &TimelineIndex, clock: Clock, r: usize, from: u64, to: u64) -> (usize, usize) {
    let n = trace.ranks[r].calls.len();
    let begin = |p: usize| index.span_of(trace, clock, r, index.call_at(r, p)).0;
    let p1 = partition(n, |p| begin(p) < to);
    let disjoint = clock == Clock::Logical || index.disjoint[r];
    let p0 = if disjoint {
        partition(n, |p| begin(p) < from).saturating_sub(1)
    } else {
        let reach = from.saturating_sub(index.longest[r]);
        partition(n, |p| begin(p) < reach)
    };
    (p0, p1.max(p0))
}

/// First `p` in `0..n` with `!pred(p)`, for `pred` true on a prefix.
fn partition(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Exact per-column coverage of rank `r` in `[from, to)` added to `accs`.
#[allow(clippy::too_many_arguments)]
fn exact_rank(
    trace: &Trace,
    index: &TimelineIndex,
    clock: Clock,
    label: &dyn Fn(usize, usize) -> u32,
    r: usize,
    from: u64,
    to: u64,
    pixels: u32,
    accs: &mut [Acc],
) {
    let (p0, p1) = positions(trace, index, clock, r, from, to);
    let span = (to - from) as u128;
    let col = |t: u64| -> u32 { (((t - from) as u128 * pixels as u128 + pixels as u128 - 1) / span) as u32 };
    for p in p0..p1 {
        let i = index.call_at(r, p);
        let (b, e) = index.span_of(trace, clock, r, i);
        let (b, e) = (b.max(from), e.min(to));
        if e <= b {
            continue;
        }
        // Columns whose range meets [b, e): the column containing b up to the one containing e - 1.
        let mut k = col(b).min(pixels - 1);
        while k > 0 && edge(from, to, pixels, k) > b {
            k -= 1;
        }
        while k < pixels {
            let x0 = edge(from, to, pixels, k);
            let x1 = edge(from, to, pixels, k + 1);
            if x0 >= e {
                break;
            }
            let lo = b.max(x0);
            let hi = e.min(x1);
            if hi > lo {
                let acc = &mut accs[k as usize];
                acc.busy += (hi - lo) as f64;
                let f = label(r, i);
                if f != NONE {
                    acc.add(f, (hi - lo) as f64);
                }
            }
            k += 1;
        }
    }
}

/// Calls of the drawn ranks at least one column wide in the window.
#[allow(clippy::too_many_arguments)]
fn wide_calls(
    trace: &Trace,
    index: &TimelineIndex,
    clock: &ClockIndex,
    query: &TimelineQuery,
    ranks: &[Rank],
    from: u64,
    to: u64,
    pw: f64,
) -> (Vec<TileCall>, u64) {
    let mut out = Vec::new();
    let mut left = 0u64;
    let min_len = pw.max(1.0);
    let mut push = |trace: &Trace, r: usize, i: usize, out: &mut Vec<TileCall>| {
        let (b, e) = index.span_of(trace, query.clock, r, i);
        if b >= to || e <= from || ((e - b) as f64) < min_len {
            return;
        }
        if out.len() >= query.max_calls as usize {
            left += 1;
            return;
        }
        out.push(tile_call(trace, index, r, i, b, e));
    };
    for &r in ranks {
        let r = r as usize;
        let pyr = &clock.pyramids[r];
        let exact = (pyr.w0 as f64) > pw / 2.0;
        if exact {
            let (p0, p1) = positions(trace, index, query.clock, r, from, to);
            for p in p0..p1 {
                push(trace, r, index.call_at(r, p), &mut out);
            }
            continue;
        }
        // Walk down the pyramid through bins whose longest call could reach a column.
        let top = pyr.levels.len() - 1;
        let mut stack = vec![(top, 0usize)];
        let mut level0_bins = Vec::new();
        while let Some((level, b)) = stack.pop() {
            let Some(bin) = pyr.levels[level].get(b) else { continue };
            let w = pyr.w0 << level;
            let reach = bin.maxdur as u64 * pyr.w0 / DUR_STEPS + pyr.w0;
            let longest = if bin.maxdur == u16::MAX { u64::MAX } else { reach };
            let start = b as u64 * w;
            if start >= to || start.saturating_add(w).saturating_add(longest) <= from {
                continue;
            }
            if bin.maxdur != u16::MAX && ((bin.maxdur as u64 * pyr.w0).div_ceil(DUR_STEPS) as f64) < min_len {
                continue;
            }
            if level == 0 {
                level0_bins.push(b);
            } else {
                stack.push((level - 1, 2 * b + 1));
                stack.push((level - 1, 2 * b));
            }
        }
        level0_bins.sort_unstable();
        let n = trace.ranks[r].calls.len();
        for b in level0_bins {
            let (lo, hi) = (b as u64 * pyr.w0, (b as u64 + 1) * pyr.w0);
            let begin = |p: usize| index.span_of(trace, query.clock, r, index.call_at(r, p)).0;
            let p0 = partition(n, |p| begin(p) < lo);
            let last_bin = b + 1 == pyr.levels[0].len();
            let p1 = if last_bin { n } else { partition(n, |p| begin(p) < hi) };
            for p in p0..p1 {
                push(trace, r, index.call_at(r, p), &mut out);
            }
        }
    }
    (out, left)
}

fn tile_call(trace: &Trace, index: &TimelineIndex, r: usize, i: usize, b: u64, e: u64) -> TileCall {
    let rt = &trace.ranks[r];
    let p = &rt.p2p;
    let k0 = p.post.partition_point(|&c| (c as usize) < i);
    let k1 = p.post.partition_point(|&c| (c as usize) <= i);
    let mut bytes: u64 = p.bytes[k0..k1].iter().sum();
    let mut peer = if k1 > k0 { p.peer[k0] } else { NONE };
    if rt.calls.kind[i] == CallKind::Collective {
        let c = &rt.collectives;
        let j0 = c.call.partition_point(|&x| (x as usize) < i);
        if j0 < c.len() && c.call[j0] as usize == i {
            bytes += c.bytes_sent[j0] + c.bytes_recv[j0];
            if c.root[j0] != NO_ROOT {
                peer = c.root[j0];
            }
        }
    }
    let time = index.span_of(trace, Clock::Time, r, i);
    TileCall {
        rank: r as Rank,
        index: i as u32,
        func: rt.calls.func[i],
        begin: b,
        end: e,
        time,
        bytes,
        peer,
        group: NONE,
        occurrence: NONE,
    }
}

/// Messages between drawn ranks whose send or receive falls in the window; beyond the cap, an
/// even sample of them.
///
/// Sends: the operations posted by the calls beginning in the window (a range of calls on a
/// rank whose calls are in order of entry). Receives: those completed by calls ending in the
/// window whose send is outside it; on a rank whose calls are ordered and disjoint only the
/// receives completing within the rank's longest message latency after `from` (or its largest
/// clock inversion before `to`) can have their send outside, so only those are looked at. The
/// cost is that of the sends listed plus those receives, not of every receive in the window.
#[allow(clippy::too_many_arguments)]
fn messages_in(
    trace: &Trace,
    matching: &Matching,
    index: &TimelineIndex,
    query: &TimelineQuery,
    ranks: &[Rank],
    shown: &[bool],
    from: u64,
    to: u64,
) -> (Vec<TileMessage>, u64) {
    let clock = query.clock;
    let Some(ci) = index.clock(clock) else {
        return (Vec::new(), 0);
    };
    let msgs = &matching.messages;
    let all_shown = shown.iter().all(|&s| s);
    let send_t = |k: usize| {
        let m = &msgs[k];
        let c = trace.ranks[m.sender as usize].p2p.post[m.send_op as usize];
        index.span_of(trace, clock, m.sender as usize, c as usize).0
    };
    let recv_t = |k: usize| {
        let m = &msgs[k];
        let p = &trace.ranks[m.receiver as usize].p2p;
        let c = completion(p.post[m.recv_op as usize], p.complete[m.recv_op as usize]);
        index.span_of(trace, clock, m.receiver as usize, c as usize).1
    };
    let inside = |t: u64| t >= from && t < to;
    // Per drawn rank: the calls beginning in the window, when its calls are in order of entry.
    let begins: Vec<Option<(u32, u32)>> = ranks
        .iter()
        .map(|&r| {
            let r = r as usize;
            (clock == Clock::Logical || index.order[r].is_none()).then(|| {
                let n = trace.ranks[r].calls.len();
                let begin = |p: usize| index.span_of(trace, clock, r, p).0;
                (
                    partition(n, |p| begin(p) < from) as u32,
                    partition(n, |p| begin(p) < to) as u32,
                )
            })
        })
        .collect();
    // Per drawn rank: its operations posted in the window, and whether every matched send among
    // them is listed (calls in order of entry, every rank drawn): then they are counted and
    // sampled from `sends_before` without visiting each.
    let ops: Vec<(usize, usize, bool)> = ranks
        .iter()
        .enumerate()
        .map(|(j, &r)| {
            let p = &trace.ranks[r as usize].p2p;
            let (c0, c1) = begins[j].unwrap_or((0, trace.ranks[r as usize].calls.len() as u32));
            (
                p.post.partition_point(|&c| c < c0),
                p.post.partition_point(|&c| c < c1),
                all_shown && begins[j].is_some(),
            )
        })
        .collect();
    let counted: Vec<u64> = ranks
        .iter()
        .zip(&ops)
        .map(|(&r, &(k0, k1, fast))| {
            if fast {
                index.sends_upto(trace, r as usize, k1) - index.sends_upto(trace, r as usize, k0)
            } else {
                0
            }
        })
        .collect();
    // Visit every listed message once, except the counted sends: by its send when the send is
    // inside, else by its receive.
    let visit = |f: &mut dyn FnMut(usize)| {
        for (j, &r) in ranks.iter().enumerate() {
            let r = r as usize;
            let p = &trace.ranks[r].p2p;
            let exact = begins[j].is_some();
            let (k0, k1, fast) = ops[j];
            for k in (k0..k1).filter(|_| !fast) {
                if p.dir[k] != P2pDir::Send {
                    continue;
                }
                let m = index.msg_of_op[r][k];
                if m == NONE
                    || (!all_shown && !shown[msgs[m as usize].receiver as usize])
                    || (!exact && !inside(send_t(m as usize)))
                {
                    continue;
                }
                f(m as usize);
            }
            let rc = &index.recv_by_completion[r];
            let ordered = clock == Clock::Logical || (index.order[r].is_none() && index.disjoint[r]);
            let check = |ks: &[u32], f: &mut dyn FnMut(usize)| {
                for &k in ks {
                    let m = index.msg_of_op[r][k as usize];
                    if m == NONE {
                        continue;
                    }
                    let mm = &msgs[m as usize];
                    if !shown[mm.sender as usize] || !inside(recv_t(m as usize)) || inside(send_t(m as usize)) {
                        continue;
                    }
                    f(m as usize);
                }
            };
            if !ordered {
                check(rc, f);
                continue;
            }
            // Completing calls ending in [a, b): their ends increase with the call index.
            let n = trace.ranks[r].calls.len();
            let end = |c: usize| index.span_of(trace, clock, r, c).1;
            let range = |a: u64, b: u64| -> (usize, usize) {
                let e0 = partition(n, |c| end(c) < a) as u32;
                let e1 = partition(n, |c| end(c) < b) as u32;
                let cpl = |k: &u32| completion(p.post[*k as usize], p.complete[*k as usize]);
                (rc.partition_point(|k| cpl(k) < e0), rc.partition_point(|k| cpl(k) < e1))
            };
            let (late, early) = ci.latency[r];
            // Sends before `from`: received within `late` of their send, so ending before from + late.
            let (a0, a1) = range(from, to.min(from.saturating_add(late).saturating_add(1)));
            check(&rc[a0..a1], f);
            // Sends at or after `to` (a receive ending before its send: clock inversion).
            if early > 0 {
                let (b0, b1) = range(from.max(to.saturating_sub(early)), to);
                let b0 = b0.max(a1);
                if b0 < b1 {
                    check(&rc[b0..b1], f);
                }
            }
        }
    };
    let fast_total: u64 = counted.iter().sum();
    let mut visited = 0u64;
    visit(&mut |_| visited += 1);
    let total = fast_total + visited;
    let cap = query.max_messages as u64;
    let mut out = Vec::with_capacity(total.min(cap) as usize);
    let roles = crate::waits::roles(trace);
    let tile_message = |k: usize| {
        let m = &msgs[k];
        let sp = &trace.ranks[m.sender as usize].p2p;
        let rp = &trace.ranks[m.receiver as usize].p2p;
        let rc = completion(rp.post[m.recv_op as usize], rp.complete[m.recv_op as usize]);
        let time = (
            index
                .span_of(
                    trace,
                    Clock::Time,
                    m.sender as usize,
                    sp.post[m.send_op as usize] as usize,
                )
                .0,
            index.span_of(trace, Clock::Time, m.receiver as usize, rc as usize).1,
        );
        let w = crate::waits::message_wait(trace, &roles, m).unwrap_or_default();
        TileMessage {
            sender: m.sender,
            receiver: m.receiver,
            send: send_t(k),
            recv: recv_t(k),
            bytes: sp.bytes[m.send_op as usize],
            tag: sp.tag[m.send_op as usize],
            time,
            late_sender: w.late_sender.map_or(0, |x| x.1),
            late_receiver: w.late_receiver.map_or(0, |x| x.1),
        }
    };
    if cap > 0 {
        // Message number `seen` (counted sends first, rank by rank, then the visited ones) is
        // kept when it starts its share of total / cap: the sample is even.
        let keep = |seen: u64| {
            total <= cap
                || (seen as u128 * cap as u128) / total as u128 != ((seen as u128 + 1) * cap as u128) / total as u128
        };
        // The first message number at or after `seen` that is kept: kept numbers are
        // ⌈(i + 1)·total / cap⌉ − 1 for i = 0, 1, ...
        let next_kept = |seen: u64| -> u64 {
            if total <= cap {
                return seen;
            }
            let (t, c) = (total as u128, cap as u128);
            let mut i = seen as u128 * c / t;
            loop {
                let s = ((i + 1) * t).div_ceil(c) - 1;
                if s >= seen as u128 {
                    return s as u64;
                }
                i += 1;
            }
        };
        let mut base = 0u64;
        for ((&r, &(k0, _, fast)), &n) in ranks.iter().zip(&ops).zip(&counted) {
            if !fast || n == 0 {
                continue;
            }
            let first = index.sends_upto(trace, r as usize, k0);
            let mut s = next_kept(base);
            while s < base + n && out.len() < cap as usize {
                let k = index.nth_send(trace, r as usize, first + (s - base));
                out.push(tile_message(index.msg_of_op[r as usize][k] as usize));
                s = next_kept(s + 1);
            }
            base += n;
        }
        let mut seen = fast_total;
        visit(&mut |k| {
            if keep(seen) {
                out.push(tile_message(k));
            }
            seen += 1;
        });
    }
    let left = total - out.len() as u64;
    (out, left)
}

fn collectives_in(
    index: &TimelineIndex,
    clock: &ClockIndex,
    query: &TimelineQuery,
    shown: &[bool],
    from: u64,
    to: u64,
) -> (Vec<TileCollective>, u64) {
    let start = clock.colls_max_end.partition_point(|&e| e <= from);
    let mut out = Vec::new();
    let mut left = 0;
    for &(b, e, k) in &clock.colls[start..] {
        if b >= to {
            break;
        }
        if e <= from {
            continue;
        }
        let inst = &index.instances[k as usize];
        if !inst.members.iter().any(|&(r, _)| shown[r as usize]) {
            continue;
        }
        if out.len() >= query.max_collectives as usize {
            left += 1;
            continue;
        }
        out.push(TileCollective {
            func: inst.func,
            comm: inst.comm,
            begin: b,
            end: e.max(b),
            participants: inst.members.len() as u32,
            root: inst.root,
        });
    }
    (out, left)
}
