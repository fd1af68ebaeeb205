//! The per-trace index a timeline is answered from ([`TimelineIndex::build`]): per rank and
//! clock a pyramid of time bins, the message of each point-to-point operation, the receives in
//! order of completion, the collective instances, and the pyramids of a pattern or phase
//! colouring ([`TimelineIndex::set_groups`]).

use super::*;

/// A collective instance in the index.
#[derive(Debug, Clone)]
pub(super) struct Instance {
    pub(super) func: u32,
    pub(super) comm: u32,
    pub(super) root: u32,
    /// (rank, call) of every participant.
    pub(super) members: Vec<(Rank, u32)>,
}

/// What [`timeline`] needs of one clock.
#[derive(Debug, Clone, Default)]
pub(super) struct ClockIndex {
    pub(super) extent: u64,
    pub(super) pyramids: Vec<Pyramid>,
    /// Collective instances sorted by begin, with begin/end in this clock.
    pub(super) colls: Vec<(u64, u64, u32)>,
    /// Running maximum of `colls[i].1`.
    pub(super) colls_max_end: Vec<u64>,
    /// Per receiving rank: the longest time from a send's begin to its receive's end, and the
    /// longest a receive ended before its send began (clock inversion), over its messages.
    /// Found on the first query that looks for receives whose send is outside the window.
    pub(super) latency: OnceCell<Vec<(u64, u64)>>,
    /// The latest begin of a call over all ranks: a window from 0 past it holds every send.
    pub(super) last_begin: u64,
}

/// What finding a window's receives needs, built on the first query that needs it (not for
/// the first whole-run tile).
#[derive(Debug, Clone)]
pub(super) struct Receives {
    /// Per rank, per point-to-point operation: the message it receives, or [`NONE`].
    pub(super) msg_of_op: Vec<Vec<u32>>,
    /// Per rank: receive operations by completing call.
    pub(super) by_completion: Vec<Vec<u32>>,
}

/// Per-trace index of the timeline (see the module documentation).
#[derive(Debug, Clone)]
pub struct TimelineIndex {
    pub(super) origin: Time,
    /// Per rank: call positions in order of entry, when program order is not.
    pub(super) order: Vec<Option<Vec<u32>>>,
    /// Per rank: true when calls, in order of entry, do not overlap.
    pub(super) disjoint: Vec<bool>,
    /// Per rank: the longest call (ns).
    pub(super) longest: Vec<u64>,
    /// Number of matched messages (to check that [`timeline`] gets the same matching).
    pub(super) messages: usize,
    /// Per rank: its messages as sender are `matching.messages[sent[r]..sent[r + 1]]`, in
    /// order of send operation (the matching's order), so that the sends of a window are
    /// counted, sampled and found by binary search.
    pub(super) sent: Vec<u32>,
    /// The receive side, built when first needed ([`TimelineIndex::receives`]).
    pub(super) receives: OnceCell<Receives>,
    pub(super) instances: Vec<Instance>,
    pub(super) time: ClockIndex,
    pub(super) logical: Option<(Steps, ClockIndex)>,
    /// Groups given by [`TimelineIndex::set_groups`], by colouring.
    pub(super) groups: HashMap<Colour, GroupIndex>,
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
            let ord = if c.enters().is_sorted() {
                None
            } else {
                let mut o: Vec<u32> = (0..c.len() as u32).collect();
                o.sort_by_key(|&i| c.enter(i as usize));
                Some(o)
            };
            let at = |p: usize| ord.as_ref().map_or(p, |o| o[p] as usize);
            let dis = (1..c.len()).all(|p| c.exit(at(p - 1)) <= c.enter(at(p)));
            let long = (0..c.len()).map(|i| c.exit(i) - c.enter(i)).max().unwrap_or(0);
            pyramids.push(match &ord {
                None => Pyramid::build(
                    c.len(),
                    extent,
                    |p| c.enter(p) - origin,
                    |p| c.exit(p) - origin,
                    |p| c.func[p],
                ),
                Some(_) => Pyramid::build(
                    c.len(),
                    extent,
                    |p| c.enter(at(p)) - origin,
                    |p| c.exit(at(p)) - origin,
                    |p| c.func[at(p)],
                ),
            });
            order.push(ord);
            disjoint.push(dis);
            longest.push(long);
        }
        let sent = sent_ranges(n, matching);
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
            sent,
            receives: OnceCell::new(),
            instances,
            time,
            logical: None,
            groups: HashMap::new(),
        };
        let colls = index.instance_spans(trace, Clock::Time);
        index.time.colls_max_end = running_max(&colls);
        index.time.colls = colls;
        index.time.last_begin = index.last_begin(trace, Clock::Time);
        index
    }

    /// The latest begin of a call in `clock` over all ranks.
    pub(super) fn last_begin(&self, trace: &Trace, clock: Clock) -> u64 {
        (0..trace.ranks.len())
            .filter_map(|r| {
                let n = trace.ranks[r].calls.len();
                (n > 0).then(|| self.span_of(trace, clock, r, self.call_at(r, n - 1)).0)
            })
            .max()
            .unwrap_or(0)
    }

    /// The receive side of the index (built on first use, O(messages + receives)).
    pub(super) fn receives(&self, trace: &Trace, matching: &Matching) -> &Receives {
        self.receives.get_or_init(|| {
            let mut msg_of_op: Vec<Vec<u32>> = trace.ranks.iter().map(|rt| vec![NONE; rt.p2p.len()]).collect();
            for (k, m) in matching.messages.iter().enumerate() {
                msg_of_op[m.receiver as usize][m.recv_op as usize] = k as u32;
            }
            let by_completion = trace
                .ranks
                .iter()
                .map(|rt| {
                    let p = &rt.p2p;
                    let mut v: Vec<u32> = (0..p.len() as u32)
                        .filter(|&k| p.dir[k as usize] == P2pDir::Recv)
                        .collect();
                    let key = |k: &u32| completion(p.post[*k as usize], p.complete(*k as usize));
                    if !v.windows(2).all(|w| key(&w[0]) <= key(&w[1])) {
                        v.sort_by_key(key);
                    }
                    v
                })
                .collect();
            Receives {
                msg_of_op,
                by_completion,
            }
        })
    }

    /// Build now what the first zoom or pan in time would otherwise build: the receive side
    /// and the time clock's latencies (the whole-run tile needs neither). Returns whether
    /// there was anything left to build. The page's worker calls it when idle after the
    /// first tile, so that the first zoom does not wait for it.
    pub fn prepare_zoom(&self, trace: &Trace, matching: &Matching) -> bool {
        if self.receives.get().is_some() && self.time.latency.get().is_some() {
            return false;
        }
        self.receives(trace, matching);
        self.latency(trace, matching, Clock::Time, &self.time);
        true
    }

    /// Whether the receive side and the time clock's latencies are built
    /// ([`TimelineIndex::prepare_zoom`]).
    pub fn zoom_prepared(&self) -> bool {
        self.receives.get().is_some() && self.time.latency.get().is_some()
    }

    /// Per receiving rank, the longest latency and clock inversion in `ci`'s clock (found on
    /// first use).
    pub(super) fn latency<'a>(
        &self,
        trace: &Trace,
        matching: &Matching,
        clock: Clock,
        ci: &'a ClockIndex,
    ) -> &'a [(u64, u64)] {
        ci.latency.get_or_init(|| self.latencies(trace, matching, clock))
    }

    pub(super) fn latencies(&self, trace: &Trace, matching: &Matching, clock: Clock) -> Vec<(u64, u64)> {
        let mut out = vec![(0u64, 0u64); trace.ranks.len()];
        for m in &matching.messages {
            let sc = trace.ranks[m.sender as usize].p2p.post[m.send_op as usize];
            let rp = &trace.ranks[m.receiver as usize].p2p;
            let rc = completion(rp.post[m.recv_op as usize], rp.complete(m.recv_op as usize));
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
        let last_begin = self.last_begin(trace, Clock::Logical);
        let ci = &mut self.logical.as_mut().unwrap().1;
        ci.colls_max_end = running_max(&colls);
        ci.colls = colls;
        ci.last_begin = last_begin;
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
        self.set_groups_from(trace, colour, &GroupSource::default(), groups)
    }

    /// [`TimelineIndex::set_groups`], remembering what the groups were found on
    /// ([`TimelineIndex::groups_source`]).
    pub fn set_groups_from(
        &mut self,
        trace: &Trace,
        colour: Colour,
        source: &GroupSource,
        groups: Groups,
    ) -> Result<(), String> {
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
        self.groups.insert(
            colour,
            GroupIndex {
                groups,
                source: source.clone(),
                time,
                logical,
            },
        );
        Ok(())
    }

    /// What the groups kept for `colour` were found on (`None`: no groups for it).
    pub fn groups_source(&self, colour: Colour) -> Option<&GroupSource> {
        self.groups.get(&colour).map(|g| &g.source)
    }

    /// Whether [`TimelineIndex::set_groups`] gave groups for `colour`.
    pub fn has_groups(&self, colour: Colour) -> bool {
        colour == Colour::Function || self.groups.contains_key(&colour)
    }

    /// The pyramids of `clock` with each call's group in place of its function (`None` when
    /// the clock is not computed).
    pub(super) fn group_pyramids(&self, trace: &Trace, clock: Clock, of_call: &[Vec<u32>]) -> Option<Vec<Pyramid>> {
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

    pub(super) fn clock(&self, clock: Clock) -> Option<&ClockIndex> {
        match clock {
            Clock::Time => Some(&self.time),
            Clock::Logical => self.logical.as_ref().map(|l| &l.1),
        }
    }

    /// Position `p` (in order of entry) → call index of rank `r`.
    pub(super) fn call_at(&self, r: usize, p: usize) -> usize {
        self.order[r].as_ref().map_or(p, |o| o[p] as usize)
    }

    pub(super) fn instance_spans(&self, trace: &Trace, clock: Clock) -> Vec<(u64, u64, u32)> {
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
    pub(super) fn span_of(&self, trace: &Trace, clock: Clock, r: usize, i: usize) -> (u64, u64) {
        match (clock, &self.logical) {
            (Clock::Logical, Some((s, _))) => {
                let st = s.steps[r][i] as u64;
                (st - 1, st)
            }
            _ => {
                let c = &trace.ranks[r].calls;
                (c.enter(i) - self.origin, c.exit(i) - self.origin)
            }
        }
    }
}

pub(super) fn completion(post: u32, complete: u32) -> u32 {
    if complete == NOT_COMPLETED {
        post
    } else {
        complete
    }
}

pub(super) fn running_max(colls: &[(u64, u64, u32)]) -> Vec<u64> {
    let mut m = 0;
    colls
        .iter()
        .map(|c| {
            m = m.max(c.1);
            m
        })
        .collect()
}

pub(super) fn collective_instances(trace: &Trace) -> Vec<Instance> {
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

/// Per rank `r`, where its messages as sender start in `matching.messages` (sorted by sender
/// then send operation), and one more entry for the end.
fn sent_ranges(ranks: usize, matching: &Matching) -> Vec<u32> {
    let msgs = &matching.messages;
    debug_assert!(msgs
        .windows(2)
        .all(|w| (w[0].sender, w[0].send_op) < (w[1].sender, w[1].send_op)));
    (0..=ranks)
        .map(|r| msgs.partition_point(|m| (m.sender as usize) < r) as u32)
        .collect()
}

impl TimelineIndex {
    /// Matched sends among operations `0..k` of rank `r`.
    pub(super) fn sends_upto(&self, matching: &Matching, r: usize, k: usize) -> u64 {
        let (a, b) = (self.sent[r] as usize, self.sent[r + 1] as usize);
        matching.messages[a..b].partition_point(|m| (m.send_op as usize) < k) as u64
    }

    /// The message of the `j`-th matched send (0-based) of rank `r`.
    pub(super) fn nth_send(&self, r: usize, j: u64) -> usize {
        self.sent[r] as usize + j as usize
    }

    /// The messages of rank `r`'s matched sends among operations `k0..k1`.
    pub(super) fn sends_in(&self, matching: &Matching, r: usize, k0: usize, k1: usize) -> std::ops::Range<usize> {
        let a = self.sent[r] as usize;
        a + self.sends_upto(matching, r, k0) as usize..a + self.sends_upto(matching, r, k1) as usize
    }
}
