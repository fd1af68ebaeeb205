//! All ranks into one trace: parts merged in rank order, then peers and roots translated to
//! world ranks once the memberships are known (dropping the rows that name no member, through
//! the model's `retain_rows`), and times moved to the trace's origin.

use super::*;

impl Builder {
    pub fn new(source: &str, n: u32) -> Builder {
        let mut b = Builder {
            trace: Trace::new("dumpi", source, n),
            comms: Derivations::default(),
            ranks: (0..n).map(|_| Unresolved::default()).collect(),
            warnings: HashMap::new(),
            min_time: u64::MAX,
            callpath_ids: HashMap::new(),
            members_stored: 0,
            members_budget: 0,
            general_only: false,
        };
        b.comms.intern(Derivation::World);
        b
    }

    pub(super) fn warn(&mut self, msg: String) {
        *self.warnings.entry(msg).or_default() += 1;
    }

    /// Add a rank's part: its names, call paths, metrics and communicator derivations are
    /// interned in the part's first-use order, and its columns renumbered to the trace's ids.
    /// Parts must come in rank order for the ids to be those of a read in rank order.
    pub fn merge(&mut self, part: RankPart) {
        let functions: Vec<FuncId> = part.functions.iter().map(|n| self.trace.functions.intern(n)).collect();
        let regions: Vec<RegionId> = part.regions.iter().map(|n| self.trace.regions.intern(n)).collect();
        let callpaths: Vec<CallpathId> = part
            .callpaths
            .iter()
            .map(|local| {
                let path: Vec<RegionId> = local.iter().map(|&g| regions[g as usize]).collect();
                if let Some(&id) = self.callpath_ids.get(&path) {
                    id
                } else if self.trace.callpaths.len() < MAX_CALLPATHS {
                    let id = self.trace.callpaths.len() as CallpathId;
                    self.trace.callpaths.push(path.clone());
                    self.callpath_ids.insert(path, id);
                    id
                } else {
                    NO_CALLPATH
                }
            })
            .collect();
        let metrics: Vec<u32> = part.metrics.iter().map(|n| self.trace.metrics.intern(n)).collect();
        // A derivation's parent is always interned before it, so one pass renumbers both.
        let mut comms: Vec<u32> = Vec::with_capacity(part.comms.list.len());
        for d in part.comms.list {
            let d = match d {
                Derivation::Derived { parent, seq, how } => Derivation::Derived {
                    parent: comms[parent as usize],
                    seq,
                    how,
                },
                other => other,
            };
            comms.push(self.comms.intern(d));
        }
        for (&id, info) in comms.iter().zip(part.comms.infos) {
            let into = &mut self.comms.infos[id as usize];
            into.split.extend(info.split);
            if let Some(g) = info.group {
                into.group.get_or_insert_with(|| g.renumbered(&comms));
            }
            if let Some(s) = info.size {
                into.size.get_or_insert(s);
            }
            if let Some(d) = info.cart_dims {
                into.cart_dims.get_or_insert(d);
            }
            if let Some(p) = info.cart_periods {
                into.cart_periods.get_or_insert(p);
            }
            if info.remain_dims.is_some() {
                into.remain_dims = info.remain_dims;
            }
        }
        let mut rt = part.trace;
        renumber_coded(&mut rt.calls.func, &functions);
        // NO_CALLPATH is outside the map and stays.
        renumber_coded(&mut rt.calls.callpath, &callpaths);
        renumber_sparse(&mut rt.p2p.comm, &comms);
        renumber_sparse(&mut rt.collectives.comm, &comms);
        for m in &mut rt.metrics {
            m.metric = metrics[m.metric as usize];
        }
        for (w, count) in part.warnings {
            *self.warnings.entry(w).or_default() += count;
        }
        self.min_time = self.min_time.min(part.min_time);
        self.members_budget = self.members_budget.saturating_add(part.members_budget);
        let r = part.rank as usize;
        self.trace.ranks[r] = rt;
        self.ranks[r] = part.unresolved;
    }

    /// Compute memberships, translate peers and roots, shift times to the earliest wall time; the
    /// ranks are resolved on up to `threads` threads.
    pub fn finish(mut self, threads: usize) -> Result<Trace, FormatError> {
        let n = self.trace.num_ranks();
        // Parents are always interned before their children, so one pass in id order suffices.
        let mut comm_ids: Vec<Option<CommId>> = vec![None; self.comms.list.len()];
        // Communicators derived per rank (Cart_sub and dups of them): the collective that made
        // them, so that the ranks of one sub-grid share one communicator id.
        let mut per_rank_key: Vec<Option<Vec<u32>>> = vec![None; self.comms.list.len()];
        let mut per_rank_ids: HashMap<(Vec<u32>, Vec<Rank>), CommId> = HashMap::new();
        for i in 0..self.comms.list.len() {
            if let Derivation::Derived { parent, seq, how } = &self.comms.list[i] {
                per_rank_key[i] = match (how, &per_rank_key[*parent as usize]) {
                    (How::CartSub(_), None) => Some(vec![*parent, *seq]),
                    (How::Dup, Some(k)) => Some([k.as_slice(), &[u32::MAX, *seq]].concat()),
                    _ => None,
                };
            }
            let members = match self.comms.list[i].clone() {
                Derivation::World => Some((0..n).collect()),
                Derivation::SelfOf(r) => Some(vec![r]),
                Derivation::Unknown { .. } => None,
                Derivation::Derived { parent, how, .. } => {
                    let pm = self.comms.infos[parent as usize].members.clone();
                    let parent_per_rank = per_rank_key[parent as usize].is_some();
                    match (how, pm) {
                        (_, None) | (How::Untracked(_), _) => None,
                        (How::Dup, Some(pm)) if parent_per_rank => Some(pm),
                        (_, Some(_)) if parent_per_rank => {
                            self.warn(
                                "communicators derived from a MPI_Cart_sub result (other than dups) are not followed"
                                    .into(),
                            );
                            None
                        }
                        (How::CartSub(me), Some(pm)) => {
                            let dims = self.comms.infos[parent as usize].cart_dims.as_deref();
                            let remain = self.comms.infos[i].remain_dims.as_deref();
                            match (dims, remain) {
                                (Some(d), Some(k)) => cart_sub_members(&pm, d, k, me),
                                _ => None,
                            }
                        }
                        (How::Dup, Some(pm)) => Some(pm),
                        (How::Split(_), Some(pm)) => {
                            let mut v: Vec<(i32, usize, Rank)> = Vec::new();
                            let mut ok = true;
                            for &(key, w) in &self.comms.infos[i].split {
                                match pm.iter().position(|&m| m == w) {
                                    Some(old) => v.push((key, old, w)),
                                    None => ok = false,
                                }
                            }
                            v.sort();
                            ok.then(|| v.into_iter().map(|x| x.2).collect())
                        }
                        (How::Create, Some(_)) => self.comms.infos[i].group.as_ref().and_then(|g| self.eval(g)),
                        (How::Cart | How::Graph, Some(pm)) => {
                            let k = self.comms.infos[i].size.unwrap_or(pm.len()).min(pm.len());
                            Some(pm[..k].to_vec())
                        }
                    }
                }
            };
            let members = match members {
                Some(m) if self.members_stored.saturating_add(m.len()) > self.members_budget => {
                    self.warn(
                        "more communicator members than the input size can justify; later communicators are left out"
                            .into(),
                    );
                    None
                }
                other => other,
            };
            self.members_stored += members.as_ref().map_or(0, Vec::len);
            self.comms.infos[i].members = members.clone();
            comm_ids[i] = match (&self.comms.list[i], members) {
                (Derivation::World, _) => Some(tracelogic_model::COMM_WORLD),
                (Derivation::SelfOf(_), Some(m)) => Some(self.trace.add_comm("MPI_COMM_SELF", m)),
                (_, Some(m))
                    if per_rank_key[i]
                        .as_ref()
                        .is_some_and(|k| per_rank_ids.contains_key(&(k.clone(), m.clone()))) =>
                {
                    per_rank_key[i].clone().and_then(|k| per_rank_ids.get(&(k, m)).copied())
                }
                (d, Some(m)) => {
                    let name = match d {
                        Derivation::Derived { parent, how, .. } => {
                            let p = match comm_ids[*parent as usize] {
                                Some(tracelogic_model::COMM_WORLD) => "MPI_COMM_WORLD".to_owned(),
                                Some(c) => format!("comm {c}"),
                                None => "an unknown communicator".to_owned(),
                            };
                            let id = self.trace.comms.len();
                            match how {
                                How::Dup => format!("comm {id} (dup of {p})"),
                                How::Split(c) => format!("comm {id} (split of {p}, colour {c})"),
                                How::Create => format!("comm {id} (created from {p})"),
                                How::Cart => format!("comm {id} (cartesian, from {p})"),
                                How::Graph => format!("comm {id} (graph, from {p})"),
                                How::CartSub(_) => format!("comm {id} (sub-grid of {p})"),
                                How::Untracked(_) => format!("comm {id}"),
                            }
                        }
                        _ => format!("comm {}", self.trace.comms.len()),
                    };
                    let id = self.trace.comms.len() as CommId;
                    if let Some(k) = per_rank_key[i].clone() {
                        per_rank_ids.insert((k, m.clone()), id);
                    }
                    let declared = match d {
                        Derivation::Derived { how: How::Cart, .. } => {
                            self.comms.infos[i].cart_dims.as_ref().map(|dims| {
                                let periods = self.comms.infos[i].cart_periods.clone().unwrap_or_default();
                                let dims: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
                                let periods: Vec<bool> = periods.iter().map(|&p| p != 0).collect();
                                CartTopology::row_major(id, &dims, &periods, m.len())
                            })
                        }
                        _ => None,
                    };
                    self.trace.comms.push(Communicator { name, members: m });
                    if let Some(Err(e)) = declared.map(|t| t.and_then(|t| self.trace.add_cartesian(t))) {
                        self.warn(format!("MPI_Cart_create: {e}; the declared topology is left out"));
                    }
                    Some(id)
                }
                (_, None) => None,
            };
        }

        // Times relative to the earliest wall time of the set.
        let origin = if self.min_time == u64::MAX { 0 } else { self.min_time };
        // Each rank's operations are resolved on their own, on the readers' threads.
        let ranks: Vec<Mutex<(RankTrace, Unresolved)>> = std::mem::take(&mut self.trace.ranks)
            .into_iter()
            .zip(std::mem::take(&mut self.ranks))
            .map(Mutex::new)
            .collect();
        let sizes: Vec<u64> = ranks
            .iter()
            .map(|m| {
                let g = m.lock().unwrap_or_else(PoisonError::into_inner);
                (g.0.calls.len() + g.0.p2p.len() + g.0.collectives.len()) as u64
            })
            .collect();
        let (comm_ids, infos) = (&comm_ids, &self.comms.infos);
        let world_ranks = (!self.general_only
            && matches!(
                (&self.comms.list[0], comm_ids[0], &infos[0].members),
                (Derivation::World, Some(tracelogic_model::COMM_WORLD), Some(m))
                    if m.iter().enumerate().all(|(i, &w)| w == i as Rank)
            ))
        .then_some(n);
        let counts = map_files(
            &ranks,
            &sizes,
            threads,
            &|r| format!("resolving rank {r}"),
            &|r| format!("rank {r}"),
            &mut NoProgress,
            |r, m, _| {
                let mut g = m.lock().unwrap_or_else(PoisonError::into_inner);
                let (rt, st) = &mut *g;
                Ok(resolve_rank(
                    r as Rank,
                    rt,
                    std::mem::take(st),
                    comm_ids,
                    infos,
                    world_ranks,
                    origin,
                ))
            },
        )?;
        self.trace.ranks = ranks
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner).0)
            .collect();
        let dropped: u64 = counts.iter().map(|c| c.0).sum();
        let bad_root: u64 = counts.iter().map(|c| c.1).sum();
        if dropped > 0 {
            self.warn(format!(
                "{dropped} operation(s) left out: their communicator's members or their peer could not be determined"
            ));
        }
        if bad_root > 0 {
            self.warn(format!(
                "{bad_root} collective(s) name a root outside their communicator"
            ));
        }

        let mut warnings: Vec<(String, u64)> = self.warnings.into_iter().collect();
        warnings.sort();
        for (w, count) in warnings {
            self.trace
                .warnings
                .push(if count > 1 { format!("{w} ({count} times)") } else { w });
        }
        // Every operation is appended when its call is, so each rank's operations are already
        // in posting order (the model's `normalise_order` would only check that, on one thread).
        debug_assert!(self.trace.ranks.iter().all(|rt| {
            rt.p2p.post.windows(2).all(|w| w[0] <= w[1]) && rt.collectives.call.windows(2).all(|w| w[0] <= w[1])
        }));
        Ok(self.trace)
    }
}

/// Translate rank `r`'s point-to-point peers and collective roots to world ranks and its
/// communicators to the trace's (`comm_ids` and `infos` by derivation; `world_ranks` is the
/// number of world ranks when derivation 0's members are the identity), dropping the operations
/// whose communicator or peer is unknown; fill in the collectives' bytes that depend on the
/// communicator; shift its times by `origin`. Returns the operations dropped and the collectives
/// whose root lies outside their communicator.
pub(super) fn resolve_rank(
    r: Rank,
    rt: &mut RankTrace,
    st: Unresolved,
    comm_ids: &[Option<CommId>],
    infos: &[CommInfo],
    world_ranks: Option<Rank>,
    origin: u64,
) -> (u64, u64) {
    let mut dropped = 0u64;
    let mut bad_root = 0u64;
    // Point-to-point: translate peers; drop operations whose communicator is unknown. An
    // operation on `MPI_COMM_WORLD` (derivation 0) whose peer is a world rank or the wildcard
    // stays as it is when the world's members are the identity, so the translation starts at
    // the first other one (on a trace that only uses the world, nothing is written).
    let p = &mut rt.p2p;
    let n = world_ranks.unwrap_or(0);
    let first = match world_ranks {
        Some(_) if st.all_world => p.len(),
        Some(_) => p
            .comm
            .iter()
            .zip(&p.peer)
            .position(|(&d, &peer)| d != 0 || (peer >= n && peer != DUMPI_ANY as u32))
            .unwrap_or(p.len()),
        None => 0,
    };
    let mut keep = vec![true; if first < p.len() { p.len() } else { 0 }];
    for (i, keep) in keep.iter_mut().enumerate().skip(first) {
        let local = p.peer[i] as i32;
        let d = p.comm[i] as usize;
        let members = infos[d].members.as_deref();
        match (comm_ids[d], members) {
            (Some(cid), Some(m)) => {
                p.comm[i] = cid;
                let peer = if local == DUMPI_ANY {
                    ANY_SOURCE
                } else {
                    match m.get(local as usize) {
                        Some(&w) => w,
                        // A status source outside the communicator: keep the wildcard.
                        None if st.wildcards.binary_search(&i).is_ok() => ANY_SOURCE,
                        None => {
                            *keep = false;
                            continue;
                        }
                    }
                };
                p.peer.set(i, peer);
            }
            _ => *keep = false,
        }
    }
    if keep.iter().any(|k| !k) {
        dropped += keep.iter().filter(|k| !**k).count() as u64;
        p.retain_rows(&keep);
    }
    // Collectives: roots to world ranks, bytes that depend on the communicator.
    let c = &mut rt.collectives;
    let mut keep = vec![true; c.len()];
    for (i, (root, bytes)) in st.coll_fix.into_iter().enumerate() {
        let d = c.comm[i] as usize;
        let (Some(cid), Some(m)) = (comm_ids[d], infos[d].members.as_deref()) else {
            keep[i] = false;
            continue;
        };
        c.comm[i] = cid;
        let size = m.len() as u64;
        // This rank's place in the communicator, looked for only by the collectives whose bytes
        // depend on it (a search over the members; on the identity world it is the rank).
        let me = || match world_ranks {
            Some(_) if d == 0 => Some(r as usize),
            _ => m.iter().position(|&w| w == r),
        };
        c.root[i] = if root >= 0 {
            match m.get(root as usize) {
                Some(&w) => w,
                None => {
                    bad_root += 1;
                    NO_ROOT
                }
            }
        } else {
            NO_ROOT
        };
        let (s, v) = match bytes {
            CollBytes::Plain {
                sent,
                recv,
                sent_per_member,
                recv_per_member,
            } => (
                if sent_per_member {
                    sent.saturating_mul(size)
                } else {
                    sent
                },
                if recv_per_member {
                    recv.saturating_mul(size)
                } else {
                    recv
                },
            ),
            CollBytes::ByRoot { root: at_root, other } => {
                if root >= 0 && me() == Some(root as usize) {
                    at_root
                } else {
                    other
                }
            }
            CollBytes::ReduceScatter { counts, size: ts } => {
                let total: u64 = counts.iter().map(|&x| x.max(0) as u64).sum::<u64>().saturating_mul(ts);
                let mine = me()
                    .and_then(|i| counts.get(i))
                    .map_or(0, |&x| (x.max(0) as u64).saturating_mul(ts));
                (total, mine)
            }
        };
        c.bytes_sent[i] = s;
        c.bytes_recv[i] = v;
    }
    if keep.iter().any(|k| !k) {
        dropped += keep.iter().filter(|k| !**k).count() as u64;
        c.retain_rows(&keep);
    }

    // The time columns hold each time minus the base (wrapping); every time is at least the
    // origin, so adding base - origin (wrapping) leaves each at its time minus the origin.
    let shift = st.time_base.wrapping_sub(origin);
    if shift != 0 {
        rt.calls.enter.wrapping_add_all(shift);
        for m in &mut rt.metrics {
            for t in &mut m.time {
                *t = t.wrapping_add(shift);
            }
        }
    }
    rt.span = rt
        .span
        .map(|(a, b)| (a.saturating_sub(origin), b.saturating_sub(origin)));
    (dropped, bad_root)
}

/// [`renumber`] of a [`Sparse`](tracelogic_model::Sparse) column: only its stored rows when the
/// map keeps its fill value.
fn renumber_sparse<const FILL: u32>(column: &mut tracelogic_model::Sparse<u32, FILL>, map: &[u32]) {
    if map.get(FILL as usize).is_some_and(|&to| to != FILL) {
        column.iter_mut().for_each(|id| {
            if let Some(&to) = map.get(*id as usize) {
                *id = to;
            }
        });
    } else {
        renumber(column.stored_mut(), map);
    }
}

/// [`renumber`] on a column coded against its distinct values: each distinct id is mapped once.
fn renumber_coded(column: &mut tracelogic_model::Dict<u32>, map: &[u32]) {
    if map.iter().enumerate().all(|(i, &id)| id == i as u32) {
        return;
    }
    column.map_values(|id| map.get(id as usize).copied().unwrap_or(id));
}

/// Replace every id of `column` by `map[id]` (ids outside `map`, such as [`NO_CALLPATH`], stay).
/// Nothing is written when `map` is the identity, as it is for the first rank and usually for
/// the others.
pub(super) fn renumber(column: &mut [u32], map: &[u32]) {
    if map.iter().enumerate().all(|(i, &id)| id == i as u32) {
        return;
    }
    for id in column {
        if let Some(&to) = map.get(*id as usize) {
            *id = to;
        }
    }
}
