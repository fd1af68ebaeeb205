//! Expansion of a logical trace for one rank (§4.3, step 6) and the rank's real operations.

#[allow(unused_imports)]
use super::*;

/// One point-to-point operation of a physical trace, as `--expand-rank` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PhysicalCall {
    /// MPI function name (`MPI_Isend`); a `MPI_Sendrecv` gives two entries.
    pub kind: String,
    /// `send` or `recv`.
    pub direction: String,
    /// World rank of the partner, `None` for an unresolved `MPI_ANY_SOURCE`.
    pub peer: Option<Rank>,
    /// Message size in bytes.
    pub bytes: u64,
    /// Message tag.
    pub tag: i32,
}

impl PhysicalCall {
    /// What reproduction compares: function, direction, peer and size (not the tag).
    #[cfg(test)]
    pub(super) fn key(&self) -> (&str, &str, Option<Rank>, u64) {
        (&self.kind, &self.direction, self.peer, self.bytes)
    }
}

pub(super) fn dir_name(d: P2pDir) -> &'static str {
    match d {
        P2pDir::Send => "send",
        P2pDir::Recv => "recv",
    }
}

/// The physical trace of `rank` generated from a logical trace: its records with directions
/// replaced by that rank's neighbours; operations along directions without a neighbour vanish,
/// a point-to-point call with no operation left vanishes, and a `MPI_Sendrecv` left with one half
/// becomes `MPI_Send` or `MPI_Recv` (what a program guarding the call by neighbour existence
/// does). Completions stay when at least one record they complete stays.
pub fn expand_records(logical: &LogicalTrace, rank: Rank) -> Result<Vec<LogicalCall>, String> {
    expand_calls(logical, logical.records.iter().map(|r| &r.call), rank)
}

/// [`expand_records`] over any sequence of calls of `logical`'s program (e.g. its decompressed
/// program), with its directions: the topology's, [`SELF_DIRECTION`] at
/// [`LogicalTrace::self_ranks`] and the offset directions at [`LogicalTrace::offset_ranks`].
pub fn expand_calls<'a>(
    logical: &LogicalTrace,
    calls: impl IntoIterator<Item = &'a LogicalCall>,
    rank: Rank,
) -> Result<Vec<LogicalCall>, String> {
    let tables = logical.expansion_tables();
    let Some(table) = tables.get(rank as usize) else {
        return Err(format!(
            "rank {rank} is out of range (the run has {} ranks)",
            tables.len()
        ));
    };
    Ok(expand_with(table, rank, calls))
}

/// Expansion with the rank's direction → neighbour table already built.
pub(super) fn expand_with<'a>(
    table: &HashMap<String, Rank>,
    rank: Rank,
    calls: impl IntoIterator<Item = &'a LogicalCall>,
) -> Vec<LogicalCall> {
    let mut directions: Vec<&str> = table.keys().map(String::as_str).collect();
    directions.sort_unstable();
    let mut out: Vec<LogicalCall> = Vec::new();
    // Index in `out` of each logical record's image, if it has one.
    let mut image: Vec<Option<usize>> = Vec::new();
    for call in calls {
        let here = image.len();
        if !call.runs_on(rank) {
            image.push(None);
            continue;
        }
        let kept = restrict_call(call, |o| {
            if !o.runs_on(rank) {
                return None;
            }
            let partner = match &o.partner {
                Partner::Direction(d) => Partner::Rank(*table.get(d)?),
                other => other.clone(),
            };
            Some(Operation {
                partner,
                ..o.for_rank(rank, &directions)
            })
        });
        let kept = kept.and_then(|mut c| {
            if call.completes.is_empty() {
                return Some(c);
            }
            let pos = out.len();
            let mut back: Vec<u32> = call
                .completes
                .iter()
                .filter_map(|&k| here.checked_sub(k as usize).and_then(|j| image[j]))
                .map(|t| (pos - t) as u32)
                .collect();
            back.sort_unstable();
            back.dedup();
            if back.is_empty() {
                return None;
            }
            c.completes = back;
            Some(c)
        });
        let kept = kept.map(|mut c| {
            c.only_ranks = None;
            if let Some(k) = c.collective.as_mut() {
                k.root = k.root_on(rank);
                k.root_by_rank.clear();
            }
            c
        });
        image.push(kept.as_ref().map(|_| out.len()));
        out.extend(kept);
    }
    out
}

/// The operations of a sequence of logical calls with their directions numbered once and their
/// per-rank sizes turned around into one list per rank, to walk the expansion of many ranks
/// ([`ExpansionWalk::each_operation`]) without looking a direction name up, or searching an
/// operation's per-rank size table, per operation and rank (as [`super::per_rank::OpTable`]
/// does for the verification: those searches were three quarters of the walk on LU C 128).
pub(crate) struct ExpansionWalk<'a> {
    calls: &'a [LogicalCall],
    /// Per call: the number of its first operation (and one past the last call's last).
    first: Vec<usize>,
    /// Per operation: the id of its direction in `names`, or `usize::MAX` for a partner that
    /// is not a direction.
    direction: Vec<usize>,
    names: Vec<&'a str>,
    /// Per rank: (operation, size) of the operations whose [`Operation::bytes_by_rank`] names
    /// that rank (its first entry naming it), by increasing operation.
    own_sizes: Vec<Vec<(usize, u64)>>,
    /// Per operation: its per-rank table is not in the documented form (ranks increasing), so
    /// [`Operation::bytes_on`] answers for it.
    irregular: Vec<bool>,
}

impl<'a> ExpansionWalk<'a> {
    /// Number the operations of `calls`, whose per-rank sizes name ranks below `ranks`.
    pub fn of(calls: &'a [LogicalCall], ranks: usize) -> ExpansionWalk<'a> {
        let mut ids: HashMap<&'a str, usize> = HashMap::new();
        let (mut first, mut direction, mut names) = (Vec::with_capacity(calls.len() + 1), Vec::new(), Vec::new());
        let mut own_sizes: Vec<Vec<(usize, u64)>> = vec![Vec::new(); ranks];
        let mut irregular = Vec::new();
        for call in calls {
            first.push(direction.len());
            for o in &call.ops {
                let g = direction.len();
                direction.push(match &o.partner {
                    Partner::Direction(d) => *ids.entry(d.as_str()).or_insert_with(|| {
                        names.push(d.as_str());
                        names.len() - 1
                    }),
                    _ => usize::MAX,
                });
                irregular.push(!super::per_rank::add_own_sizes(o, g, &mut own_sizes));
            }
        }
        first.push(direction.len());
        ExpansionWalk {
            calls,
            first,
            direction,
            names,
            own_sizes,
            irregular,
        }
    }

    /// [`Operation::bytes_on`] of operation `g` (`o`) on `rank`: its entry in the rank's list
    /// (`own`, read in increasing order from `next`), else its class's (`here`: the rank's
    /// directions, sorted).
    fn bytes_of(
        &self,
        g: usize,
        o: &Operation,
        rank: Rank,
        own: Option<&[(usize, u64)]>,
        next: &mut usize,
        here: &[&str],
    ) -> u64 {
        let Some(own) = own.filter(|_| !self.irregular[g]) else {
            return o.bytes_on(rank, here);
        };
        super::per_rank::own_entry(own, next, g).unwrap_or_else(|| o.class_bytes(here))
    }

    /// The point-to-point operations the calls expand to on `rank` (whose direction →
    /// neighbour table is `table`), in order, each as (peer, sent, size, tag): what
    /// [`physical_calls`] of [`expand_with`] lists (peer, `send`, bytes, tag), without building
    /// the calls, with where each comes from (the call's index in the walk's calls, the
    /// operation's index in the call). `kept` is scratch room (per call, whether the rank
    /// executes it).
    pub fn each_operation(
        &self,
        table: &HashMap<String, Rank>,
        rank: Rank,
        kept: &mut Vec<bool>,
        mut each: impl FnMut(Option<Rank>, bool, u64, i32, (usize, usize)),
    ) {
        let mut directions: Vec<&str> = table.keys().map(String::as_str).collect();
        directions.sort_unstable();
        let neighbour: Vec<Option<Rank>> = self.names.iter().map(|d| table.get(*d).copied()).collect();
        let own = self.own_sizes.get(rank as usize).map(Vec::as_slice);
        let mut next_own = 0usize;
        kept.clear();
        for (here, call) in self.calls.iter().enumerate() {
            if !call.runs_on(rank) {
                kept.push(false);
                continue;
            }
            let dirs = &self.direction[self.first[here]..self.first[here + 1]];
            let p2p = call.kind.is_p2p();
            // `restrict_call`: a point-to-point call keeps the operations the rank executes
            // along a direction it has a neighbour in; other calls stay whole.
            let visible = |k: usize| {
                !p2p || (call.ops[k].runs_on(rank)
                    && match dirs[k] {
                        usize::MAX => true,
                        d => neighbour[d].is_some(),
                    })
            };
            let mut keep = !p2p || (0..call.ops.len()).any(visible);
            // A completion stays when a record it completes does.
            if keep && !call.completes.is_empty() {
                keep = call
                    .completes
                    .iter()
                    .any(|&k| here.checked_sub(k as usize).is_some_and(|j| kept[j]));
            }
            kept.push(keep);
            if !keep {
                continue;
            }
            for (k, o) in call.ops.iter().enumerate() {
                if !visible(k) {
                    continue;
                }
                let mut sized = || self.bytes_of(self.first[here] + k, o, rank, own, &mut next_own, &directions);
                let (peer, bytes) = match (&o.partner, p2p) {
                    (Partner::Direction(_), true) => (neighbour[dirs[k]], sized()),
                    (Partner::Rank(r), true) => (Some(*r), sized()),
                    (Partner::Any, true) => (None, sized()),
                    (Partner::Rank(r), false) => (Some(*r), o.bytes),
                    (_, false) => (None, o.bytes),
                };
                each(peer, o.dir == P2pDir::Send, bytes, o.tag, (here, k));
            }
        }
    }
}

/// `call` as a rank executes it: each operation mapped by `keep` (`None`: that rank has no
/// neighbour in its direction, the operation vanishes). A point-to-point call left without
/// operations vanishes; a `MPI_Sendrecv` that lost one of its two halves becomes `MPI_Send` or
/// `MPI_Recv` (what a program guarding the call by neighbour existence does). Other calls are
/// kept as they are. Expansion and the merge of rank classes share this rule.
pub(crate) fn restrict_call(
    call: &LogicalCall,
    keep: impl FnMut(&Operation) -> Option<Operation>,
) -> Option<LogicalCall> {
    if !call.kind.is_p2p() {
        return Some(call.clone());
    }
    let ops: Vec<Operation> = call.ops.iter().filter_map(keep).collect();
    if ops.is_empty() {
        return None;
    }
    // Field by field: `..call.clone()` would copy the operations (and their size tables) only
    // to drop them.
    let mut out = LogicalCall {
        function: call.function.clone(),
        kind: call.kind,
        ops,
        collective: call.collective.clone(),
        completes: call.completes.clone(),
        calls: call.calls,
        only_ranks: call.only_ranks.clone(),
    };
    if call.kind == CallKind::SendRecv && out.ops.len() == 1 && call.ops.len() == 2 {
        let (function, kind) = match out.ops[0].dir {
            P2pDir::Send => ("MPI_Send", CallKind::Send),
            P2pDir::Recv => ("MPI_Recv", CallKind::Recv),
        };
        out.function = function.into();
        out.kind = kind;
    }
    Some(out)
}

/// The point-to-point operations of expanded calls, in order (the `--expand-rank` list).
pub fn physical_calls(calls: &[LogicalCall]) -> Vec<PhysicalCall> {
    calls
        .iter()
        .flat_map(|c| {
            c.ops.iter().map(move |o| PhysicalCall {
                kind: c.function.clone(),
                direction: dir_name(o.dir).into(),
                peer: match o.partner {
                    Partner::Rank(r) => Some(r),
                    _ => None,
                },
                bytes: o.bytes,
                tag: o.tag,
            })
        })
        .collect()
}

/// The real point-to-point operations of `rank`, in order, and whether the logical trace can
/// name each one's peer under `placement` (a direction of the topology, `self`
/// ([`SELF_DIRECTION`]) or an offset ([`is_offset_direction`]): every peer that is a rank of
/// the run).
pub fn real_calls(trace: &Trace, placement: &Placement, rank: Rank) -> Vec<(PhysicalCall, bool)> {
    real_with(trace, placement, rank)
}

/// [`real_calls`].
pub(super) fn real_with(trace: &Trace, placement: &Placement, rank: Rank) -> Vec<(PhysicalCall, bool)> {
    let Some(rt) = trace.ranks.get(rank as usize) else {
        return Vec::new();
    };
    let p = &rt.p2p;
    (0..p.len())
        .map(|i| {
            let peer = p.peer[i];
            let post = p.post[i];
            let kind = rt
                .calls
                .func
                .get(post as usize)
                .map_or_else(|| "MPI_Unknown".to_owned(), |&f| trace.functions.name(f).to_owned());
            let inside = encodable(placement, peer);
            (
                PhysicalCall {
                    kind,
                    direction: dir_name(p.dir[i]).into(),
                    peer: (peer != ANY_SOURCE).then_some(peer),
                    bytes: p.bytes.at(i),
                    tag: p.tag[i],
                },
                inside,
            )
        })
        .collect()
}
