//! Merging the logical sequences of several classes of ranks into one logical trace when no rank
//! has every direction of the topology (Logicalization §4.3: "merge ranks so that each direction
//! appears").
//!
//! A class is a set of ranks with the same existing directions (a 4×2 grid has six: four corners
//! and two kinds of border ranks). Each class brings the rewritten records of one representative.
//! The merged trace `M` must satisfy, for every class `c`: the expansion of `M` for `c` (each
//! record restricted to the directions `c` has, dropped when nothing is left, exactly as
//! [`super::expand_records`] does) equals the class's own sequence, record for record.
//!
//! The merge builds `M` front to back. At each step every class offers the next record of its
//! sequence (its *head*). A candidate record `m` is valid when every class that would see `m`
//! (has one of its directions, or any class for a collective, `MPI_Init`/`MPI_Finalize` or a
//! wildcard receive; for a completion, any class that sees one of the records it completes) has
//! as head exactly `m` restricted to its directions. A head seen by a class whose head carries
//! more of the same call (a `MPI_Send` east of a corner and a `MPI_Sendrecv` east/west of a
//! border rank) grows into that larger record; a completion grows to complete every record the
//! heads of the classes that see it complete. Emitting a valid record advances exactly the
//! classes that see it, so every class keeps its order.
//!
//! Why this is exact: if some order-preserving `M` exists for the remaining sequences, the head of
//! any class seeing the first record of `M` grows into that record or into a part of it no other
//! class sees more of (records have at most two operations), and emitting that part leaves an
//! order-preserving `M` for the rest. So the merge never gets stuck while an exact merge exists,
//! whatever valid candidate it picks. Operations are the same when direction, kind and bytes
//! agree (tags may differ: a tree's left and right children receive from their parent under
//! different tags); collectives when their operation, root and communicator agree (a root and the
//! other ranks record different sizes).
//!
//! When no candidate is exact (rank-dependent behaviour), a second pass accepts candidates that
//! differ from some class only in message sizes (NAS LU's boundary ranks send one point less per
//! message), keeping the sizes of the class with the most directions; failing that, the head of
//! the class with the most directions is emitted and the classes that execute it (up to sizes) advance.
//! Each class counts the records it sees but does not execute as they are (`class_conflicts`).
//!
//! Valid candidates advance disjoint sets of classes, so the merge emits all of them at once (a
//! layer, like the Foata normal form of a trace) ordered by tag, then function and operation
//! kinds and sizes, then direction, then class: the order depends on the records only, so every loop iteration comes out the same, which loop
//! compression needs.

use super::{restrict_call, LogicalCall, Operation, Partner, Record};
use std::collections::HashMap;

/// A hash map through the multiply-rotate word hash (looked up for every operation of every
/// class at every step; keys compared for equality only).
type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<super::FastHasher>>;
use tracelogic_model::{CallKind, Rank};

mod best;
mod score;
pub(super) use best::merge_best;
pub(super) use score::score;

/// The rewritten records of one class of ranks.
pub(super) struct ClassTrace {
    /// The representative whose trace was rewritten.
    pub rank: Rank,
    /// Every rank of the class (increasing): the ranks a record executed by this class only
    /// names ([`LogicalCall::only_ranks`]).
    pub members: Vec<Rank>,
    /// Per direction (topology order): does the class have that neighbour.
    pub visible: Vec<bool>,
    /// Its records, directions as partners.
    pub records: Vec<Record>,
}

/// The merged records, and how many of them some class that sees them disagreed with.
pub(super) struct Merged {
    /// In program order, completion offsets rebuilt for the merged sequence.
    pub records: Vec<Record>,
    /// Records emitted without the agreement of every class that sees them.
    pub conflicts: u64,
    /// Per class: records it sees but does not execute as they are (other sizes, another call).
    pub class_conflicts: Vec<u64>,
    /// Per class: records of the merged trace taken from its representative.
    pub contributed: Vec<u64>,
}

/// A record of the merged sequence under construction.
struct Entry {
    record: Record,
    /// For completions: the merged records it completes (absolute positions).
    targets: Vec<usize>,
    /// Per class: does the class see this record.
    seen: Vec<bool>,
}

/// A record that may come next and the classes it advances.
struct Candidate {
    call: LogicalCall,
    targets: Vec<usize>,
    seen: Vec<bool>,
    advance: Vec<usize>,
    origin: usize,
    /// Emitted without the agreement of every class that sees it: a branch executed by the
    /// classes it advances only.
    forced: bool,
    /// Classes it advances that execute only some of its operations (per operation: executed),
    /// as a rank of GROMACS runs one half of a halo `MPI_Sendrecv` when it has nothing to send
    /// ([`Operation::absent_on`]).
    partial: Vec<(usize, Vec<bool>)>,
}

/// How far [`State::side_record`] looks for the same record in another class.
const SIDE_LOOKAHEAD: usize = 256;

/// [`State::direction_of`] a partner that is not a direction.
const NOT_A_DIRECTION: usize = usize::MAX;
/// [`State::direction_of`] a direction that is not one of the topology's.
const UNKNOWN_DIRECTION: usize = usize::MAX - 1;

struct State<'a> {
    classes: &'a [&'a ClassTrace],
    /// Direction name → index in topology order.
    index: FastMap<&'a str, usize>,
    /// Per class: its direction names, sorted (to pick its per-class sizes).
    dirs: Vec<Vec<&'a str>>,
    /// Per class: its direction names in topology order (to record per-class sizes).
    names: Vec<Vec<String>>,
    pos: Vec<usize>,
    /// Per class: merged position of each of its records consumed so far.
    placed: Vec<Vec<usize>>,
    out: Vec<Entry>,
    /// Whether candidates may differ from class heads in message sizes (the second pass, when
    /// no exact candidate exists).
    loose: bool,
}

/// The call of a record without its completion offsets (rebuilt by the merge).
pub(super) fn key(r: &Record) -> LogicalCall {
    LogicalCall {
        completes: Vec::new(),
        ..r.call.clone()
    }
}

/// The same operation up to tags (a tree's left and right children receive from their parent
/// under different tags; verification does not compare tags either), or (`loose`) up to message
/// sizes too. Collectives are always compared without sizes: a root and the other ranks record
/// different sizes for one `MPI_Bcast`. Completion offsets are not compared (the merge rebuilds
/// them). Compares field by field: the merge asks this for every class at every step.
pub(super) fn same(a: &LogicalCall, b: &LogicalCall, loose: bool) -> bool {
    if a.ops.len() != b.ops.len() || a.kind != b.kind || a.function != b.function {
        return false;
    }
    let sizes = !(loose || a.collective.is_some());
    let ops = a.ops.iter().zip(&b.ops).all(|(x, y)| {
        x.dir == y.dir
            && x.partner == y.partner
            && x.bytes_by_class == y.bytes_by_class
            && (!sizes || x.bytes == y.bytes)
    });
    ops && match (&a.collective, &b.collective) {
        (None, None) => true,
        (Some(x), Some(y)) => {
            x.op == y.op
                && x.root_key() == y.root_key()
                && x.comm_size == y.comm_size
                && (!sizes || (x.bytes_sent == y.bytes_sent && x.bytes_recv == y.bytes_recv))
        }
        _ => false,
    }
}

impl State<'_> {
    fn head(&self, c: usize) -> Option<&Record> {
        self.classes[c].records.get(self.pos[c])
    }

    fn op_visible(&self, c: usize, o: &Operation) -> bool {
        self.visible_at(c, self.direction_of(o))
    }

    /// The index of `o`'s direction in topology order, [`NOT_A_DIRECTION`] for a partner that
    /// is no direction (seen by every class), [`UNKNOWN_DIRECTION`] for a direction no class has.
    fn direction_of(&self, o: &Operation) -> usize {
        match &o.partner {
            Partner::Direction(d) => self.index.get(d.as_str()).copied().unwrap_or(UNKNOWN_DIRECTION),
            _ => NOT_A_DIRECTION,
        }
    }

    /// [`State::op_visible`] of an operation whose [`State::direction_of`] is `d`.
    fn visible_at(&self, c: usize, d: usize) -> bool {
        match d {
            NOT_A_DIRECTION => true,
            UNKNOWN_DIRECTION => false,
            k => self.classes[c].visible[k],
        }
    }

    /// `call` as class `c` executes it (`None`: it does not see the call).
    fn restrict(&self, call: &LogicalCall, c: usize) -> Option<LogicalCall> {
        restrict_call(call, |o| self.op_visible(c, o).then(|| o.for_class(&self.dirs[c])))
    }

    /// [`State::direction_of`] each operation of `call`, looked up once for every class and
    /// record `call` is checked against (a hash of the direction's name: looked up per class
    /// and per record of [`State::side_record`]'s look-ahead, it was a third of the merge of a
    /// run whose classes never agree, LAMMPS `balance` on 8 ranks).
    fn directions(&self, call: &LogicalCall) -> Vec<usize> {
        call.ops.iter().map(|o| self.direction_of(o)).collect()
    }

    /// Whether class `c` sees `call` (`None`: it does not), and if so whether what it sees is
    /// [`same`] as `other`: `same(&restrict(call, c)?, other, loose)` without building the
    /// restricted call when the class sees every operation and none has per-class sizes (then
    /// the restriction is the call itself), as for most records of the merge. `dirs` are
    /// `call`'s [`State::directions`].
    fn seen_same(
        &self,
        call: &LogicalCall,
        dirs: &[usize],
        c: usize,
        other: &LogicalCall,
        loose: bool,
    ) -> Option<bool> {
        if call.kind.is_p2p() && !call.ops.is_empty() {
            let visible = dirs.iter().filter(|&&d| self.visible_at(c, d)).count();
            if visible == 0 {
                return None;
            }
            if visible == call.ops.len() && call.ops.iter().all(|o| o.bytes_by_class.is_empty()) {
                return Some(same(call, other, loose));
            }
        }
        self.restrict(call, c).map(|seen| same(&seen, other, loose))
    }

    /// The merged records a completion head of class `c` completes.
    fn targets_of(&self, c: usize, head: &Record) -> Vec<usize> {
        let i = self.pos[c];
        let mut t: Vec<usize> = Vec::with_capacity(head.call.completes.len());
        t.extend(
            head.call
                .completes
                .iter()
                .filter_map(|&k| i.checked_sub(k as usize))
                .filter_map(|j| self.placed[c].get(j).copied()),
        );
        // Offsets in order name records placed in reverse order: no sort needed then.
        if t.windows(2).all(|w| w[0] > w[1]) {
            t.reverse();
        } else if !t.windows(2).all(|w| w[0] < w[1]) {
            t.sort_unstable();
            t.dedup();
        }
        t
    }

    /// The merged records of `targets` (sorted) that class `c` sees, in order; read in place
    /// (a list per class and candidate tried was most of the merge of a run completing many
    /// requests at once: held-out Meep 3-D, 12 ranks).
    fn seen_targets<'a>(&'a self, targets: &'a [usize], c: usize) -> impl Iterator<Item = usize> + 'a {
        targets.iter().copied().filter(move |&t| self.out[t].seen[c])
    }

    fn seen_by(&self, call: &LogicalCall, targets: &[usize]) -> Vec<bool> {
        let dirs = self.directions(call);
        (0..self.classes.len())
            .map(|c| match call.kind {
                k if k.is_p2p() => dirs.iter().any(|&d| self.visible_at(c, d)),
                CallKind::Completion => targets.iter().any(|&t| self.out[t].seen[c]),
                _ => true,
            })
            .collect()
    }

    /// The class whose representative executed `call` itself: among `advance`, the one with the
    /// most directions (an inner rank of a border), then the lowest.
    fn origin(&self, advance: &[usize], fits: impl Fn(usize) -> bool) -> Option<usize> {
        advance.iter().copied().filter(|&c| fits(c)).max_by_key(|&c| {
            (
                self.classes[c].visible.iter().filter(|&&v| v).count(),
                std::cmp::Reverse(c),
            )
        })
    }

    /// The valid record grown from the head of class `c0`, if any.
    fn candidate(&self, c0: usize) -> Option<Candidate> {
        let head = self.head(c0)?;
        match head.call.kind {
            k if k.is_p2p() => self.p2p_candidate(&head.call),
            CallKind::Completion => self.completion_candidate(c0, head),
            _ => {
                // [`same`] does not compare completion offsets: the head's call is its key.
                let m = &head.call;
                let advance: Vec<usize> = (0..self.classes.len()).collect();
                if advance
                    .iter()
                    .any(|&c| !self.head(c).is_some_and(|h| same(&h.call, m, self.loose)))
                {
                    return None;
                }
                // The sizes of the class that moves the most bytes (a root's, for a broadcast).
                let size = |c: usize| {
                    self.head(c)
                        .map_or(0, |h| h.call.sizes().into_iter().max().unwrap_or(0))
                };
                let best = advance.iter().map(|&c| size(c)).max().unwrap_or(0);
                let origin = self.origin(&advance, |c| size(c) == best)?;
                let m = key(self.head(origin)?);
                Some(Candidate {
                    seen: vec![true; self.classes.len()],
                    call: m,
                    targets: Vec::new(),
                    advance,
                    origin,
                    forced: false,
                    partial: Vec::new(),
                })
            }
        }
    }

    /// The valid point-to-point record grown from `m`, a class head's call (completion offsets
    /// are not compared: only the record emitted is copied, [`key`]).
    fn p2p_candidate<'s>(&'s self, mut m: &'s LogicalCall) -> Option<Candidate> {
        'grow: loop {
            let mut advance = Vec::new();
            let mut partial = Vec::new();
            let dirs = self.directions(m);
            for c in 0..self.classes.len() {
                if !dirs.iter().any(|&d| self.visible_at(c, d)) {
                    continue;
                }
                let h = &self.head(c)?.call;
                if self.seen_same(m, &dirs, c, h, self.loose) == Some(true) {
                    advance.push(c);
                    continue;
                }
                // The head carries more of the same call: `m` is its part along `m`'s directions.
                if h.kind.is_p2p() && h.ops.len() > m.ops.len() && dirs.iter().all(|&d| self.visible_at(c, d)) {
                    let partners: Vec<&Partner> = m.ops.iter().map(|o| &o.partner).collect();
                    if restrict_call(h, |o| partners.contains(&&o.partner).then(|| o.clone()))
                        .is_some_and(|part| same(&part, m, self.loose))
                    {
                        m = h;
                        continue 'grow;
                    }
                }
                // The head carries less of the same call: the class runs only some of `m`'s
                // operations here.
                if let Some(kept) = self.partial_of(m, c, h) {
                    advance.push(c);
                    partial.push((c, kept));
                    continue;
                }
                return None;
            }
            let origin = self.origin(&advance, |c| self.head(c).is_some_and(|h| same(&h.call, m, self.loose)))?;
            let call = key(self.head(origin)?);
            let seen = self.seen_by(&call, &[]);
            return Some(Candidate {
                call,
                targets: Vec::new(),
                seen,
                advance,
                origin,
                forced: false,
                partial,
            });
        }
    }

    /// When class `c`, which sees point-to-point `m`, executes a proper part of it as its head
    /// `h` (a `MPI_Send` or `MPI_Recv` where `m` is a `MPI_Sendrecv`: one half skipped), per
    /// operation of `m` whether the class executes it; `None` otherwise.
    fn partial_of(&self, m: &LogicalCall, c: usize, h: &LogicalCall) -> Option<Vec<bool>> {
        // The class runs `h.ops.len()` of `m`'s operations and fewer than it sees: none when
        // the head has as many operations as `m` (every single-operation record).
        if !h.kind.is_p2p() || h.ops.is_empty() || !m.kind.is_p2p() || h.ops.len() >= m.ops.len() {
            return None;
        }
        let visible: Vec<bool> = m.ops.iter().map(|o| self.op_visible(c, o)).collect();
        let kept: Vec<bool> = m
            .ops
            .iter()
            .zip(&visible)
            .map(|(o, &v)| v && h.ops.iter().any(|x| x.dir == o.dir && x.partner == o.partner))
            .collect();
        let n = kept.iter().filter(|&&k| k).count();
        if n == 0 || n == visible.iter().filter(|&&v| v).count() || n != h.ops.len() {
            return None;
        }
        let mut at = 0usize;
        let part = restrict_call(m, |o| {
            let k = kept[at];
            at += 1;
            k.then(|| o.for_class(&self.dirs[c]))
        })?;
        same(&part, h, self.loose).then_some(kept)
    }

    /// The completion record of the head of class `c0`: its targets grown to every class whose
    /// head completes a superset of what it sees of them, until each class seeing any completes
    /// exactly what it sees. Targets only grow, and a class that fails stays failed, so the
    /// fixpoint does not depend on the order the classes are visited in: passes over them go
    /// on after a growth instead of starting again (O(passes × classes × targets)).
    fn completion_candidate(&self, c0: usize, head: &Record) -> Option<Candidate> {
        let mut targets = self.targets_of(c0, head);
        let mut owns: Vec<Option<Vec<usize>>> = vec![None; self.classes.len()];
        loop {
            let mut advance = Vec::new();
            let mut grew = false;
            for (c, own) in owns.iter_mut().enumerate() {
                if self.seen_targets(&targets, c).next().is_none() {
                    continue;
                }
                let h = self.head(c)?;
                if h.call.kind != CallKind::Completion || h.call.function != head.call.function {
                    return None;
                }
                let own = own.get_or_insert_with(|| self.targets_of(c, h));
                if own.iter().copied().eq(self.seen_targets(&targets, c)) {
                    advance.push(c);
                    continue;
                }
                if self.seen_targets(&targets, c).all(|t| own.binary_search(&t).is_ok()) {
                    targets = union_sorted(&targets, own);
                    grew = true;
                    continue;
                }
                return None;
            }
            if grew {
                continue;
            }
            let origin = self.origin(&advance, |_| true)?;
            let origin = advance
                .iter()
                .copied()
                .max_by_key(|&c| (self.seen_targets(&targets, c).count(), c == origin))
                .unwrap_or(origin);
            let call = key(self.head(origin)?);
            let seen = self.seen_by(&call, &targets);
            return Some(Candidate {
                call,
                targets,
                seen,
                advance,
                origin,
                forced: false,
                partial: Vec::new(),
            });
        }
    }

    /// When no candidate is valid: a side record ([`State::side_record`]) before anything else
    /// (a collective is every class's: forced for some classes only, the others execute it
    /// later as a record of their own and the classes never get back in step — Code_Saturne's
    /// ranks each exchange a few set-up messages of their own before the set-up's broadcasts);
    /// then the head that the fewest classes seeing it disagree with (then from the class with
    /// the most directions), advancing the classes that execute it.
    fn forced(&self) -> Option<Candidate> {
        let dirs = |c: usize| self.classes[c].visible.iter().filter(|&&v| v).count();
        // Each candidate's side-record test once (it looks ahead in the other classes).
        let heads = self.head_targets();
        let candidates: Vec<(bool, Candidate)> = (0..self.classes.len())
            .filter_map(|c0| self.forced_from(c0, &heads))
            .map(|x| (!self.side_record(&x), x))
            .collect();
        candidates
            .into_iter()
            .min_by(|(a_not_side, a), (b_not_side, b)| {
                let against = |x: &Candidate| {
                    (0..self.classes.len())
                        .filter(|&c| x.seen[c] && !x.advance.contains(&c))
                        .count()
                };
                a_not_side
                    .cmp(b_not_side)
                    .then_with(|| against(a).cmp(&against(b)))
                    .then_with(|| dirs(b.origin).cmp(&dirs(a.origin)))
                    .then_with(|| self.progress(a.origin).total_cmp(&self.progress(b.origin)))
                    .then_with(|| a.origin.cmp(&b.origin))
            })
            .map(|(_, x)| x)
    }

    /// Whether a forced candidate is a point-to-point record of its classes alone: no other
    /// class that sees it has it before its next collective (at most [`SIDE_LOOKAHEAD`] records
    /// ahead), so it cannot be met in step later and holds nothing back by going first.
    fn side_record(&self, x: &Candidate) -> bool {
        if !x.call.kind.is_p2p() {
            return false;
        }
        let dirs = self.directions(&x.call);
        (0..self.classes.len())
            .filter(|&c| x.seen[c] && !x.advance.contains(&c))
            .all(|c| {
                self.classes[c].records[self.pos[c]..]
                    .iter()
                    .take(SIDE_LOOKAHEAD)
                    .take_while(|r| r.call.kind.is_p2p() || r.call.kind == CallKind::Completion)
                    .all(|r| self.seen_same(&x.call, &dirs, c, &r.call, true) != Some(true))
            })
    }

    /// Per class, the targets of its head when that is a completion ([`State::targets_of`]),
    /// read once for every [`State::forced_from`] of one layer.
    fn head_targets(&self) -> Vec<Option<Vec<usize>>> {
        (0..self.classes.len())
            .map(|c| {
                self.head(c)
                    .filter(|h| h.call.kind == CallKind::Completion)
                    .map(|h| self.targets_of(c, h))
            })
            .collect()
    }

    /// The head of class `c0` as it is, advancing the classes that execute it (up to sizes);
    /// `heads` are [`State::head_targets`].
    fn forced_from(&self, c0: usize, heads: &[Option<Vec<usize>>]) -> Option<Candidate> {
        let head = self.head(c0)?;
        let call = key(head);
        let targets = if call.kind == CallKind::Completion {
            heads[c0].clone().unwrap_or_default()
        } else {
            Vec::new()
        };
        let seen = self.seen_by(&call, &targets);
        let dirs = self.directions(&call);
        let advance: Vec<usize> = (0..self.classes.len())
            .filter(|&c| {
                c == c0
                    || seen[c]
                        && self.head(c).is_some_and(|h| match call.kind {
                            CallKind::Completion => {
                                h.call.kind == CallKind::Completion
                                    && h.call.function == call.function
                                    && heads[c]
                                        .as_deref()
                                        .is_some_and(|own| own.iter().copied().eq(self.seen_targets(&targets, c)))
                            }
                            _ => self.seen_same(&call, &dirs, c, &h.call, true) == Some(true),
                        })
            })
            .collect();
        // Classes whose head is one half of it run it partly, as in a valid candidate.
        let mut advance: Vec<usize> = advance;
        let mut partial = Vec::new();
        if call.kind.is_p2p() {
            for (c, &sees) in seen.iter().enumerate() {
                if !sees || advance.contains(&c) {
                    continue;
                }
                if let Some(kept) = self.head(c).and_then(|h| self.partial_of(&call, c, &h.call)) {
                    advance.push(c);
                    partial.push((c, kept));
                }
            }
            advance.sort_unstable();
        }
        Some(Candidate {
            call,
            targets,
            seen,
            advance,
            origin: c0,
            forced: true,
            partial,
        })
    }

    /// Classes that execute a point-to-point candidate with other message sizes get their own
    /// sizes recorded on its operations ([`super::Operation::bytes_by_class`]).
    fn record_class_sizes(&self, cand: &mut Candidate) {
        if !cand.call.kind.is_p2p() {
            return;
        }
        for &c in &cand.advance {
            // A class with the origin's directions would name the origin's ranks too: its sizes
            // are read per rank afterwards (step 3b) instead (GROMACS's twelve classes all
            // have every direction; such an entry changed from step to step, and with it the
            // record's shape, so the steps did not fold).
            if self.names[c] == self.names[cand.origin] {
                continue;
            }
            let kept = cand.partial.iter().find(|(p, _)| *p == c).map(|(_, k)| k);
            let runs = |j: usize| kept.is_none_or(|k| k[j]);
            // The operations the class runs of it ([`restrict_call`] with the class's sizes,
            // read without building the restricted call), lined up with its head's.
            let visible: Vec<usize> = (0..cand.call.ops.len())
                .filter(|&j| runs(j) && self.op_visible(c, &cand.call.ops[j]))
                .collect();
            let Some(h) = self.head(c) else {
                continue;
            };
            if visible.is_empty() || visible.len() != h.call.ops.len() {
                continue;
            }
            for (theirs, &j) in h.call.ops.iter().zip(&visible) {
                if cand.call.ops[j].class_bytes(&self.dirs[c]) != theirs.bytes {
                    let op = &mut cand.call.ops[j];
                    op.bytes_by_class.retain(|b| b.directions != self.names[c]);
                    op.bytes_by_class.push(super::ClassBytes {
                        directions: self.names[c].clone(),
                        bytes: theirs.bytes,
                    });
                }
            }
        }
    }

    /// Does class `c` execute `cand` as its next record (sizes aside: a class's own sizes are
    /// recorded on the operations, and every rank's by [`super::logicalize`] afterwards)?
    fn executes(&self, c: usize, cand: &Candidate) -> bool {
        self.head(c).is_some() && cand.advance.contains(&c)
    }

    fn progress(&self, c: usize) -> f64 {
        self.pos[c] as f64 / self.classes[c].records.len().max(1) as f64
    }

    /// Order inside a layer of independent candidates: lowest tag, then the call (function, then
    /// each operation's kind and size), then direction order, then class. Depends on the records
    /// only, so every loop iteration comes out the same; and the direction names come last, so
    /// a placement under another automorphism of the topology (east and west swapped, as after a
    /// renumbering of the ranks) orders candidates that differ in more than their directions the
    /// same way. Each class sees at most one candidate of a layer, so the order changes no
    /// class's expansion.
    fn priority(&self, cand: &Candidate) -> (i32, String, Vec<(bool, u64)>, usize, usize) {
        let (tag, dir) = cand.call.ops.first().map_or((i32::MIN, 0), |o| {
            let dir = match &o.partner {
                Partner::Direction(d) => self.index.get(d.as_str()).copied().unwrap_or(usize::MAX),
                _ => usize::MAX,
            };
            (o.tag, dir)
        });
        let ops = cand
            .call
            .ops
            .iter()
            .map(|o| (o.dir == tracelogic_model::P2pDir::Send, o.bytes))
            .collect();
        (tag, cand.call.function.clone(), ops, dir, cand.origin)
    }

    /// Emit a candidate: record per-class sizes, count the classes that see it but execute
    /// something else, advance the classes it stands for.
    fn take(&mut self, mut cand: Candidate, conflicts: &mut u64, class_conflicts: &mut [u64], contributed: &mut [u64]) {
        self.record_class_sizes(&mut cand);
        // Classes that run part of it: their members skip the other operations.
        for (c, kept) in &cand.partial {
            for (o, &k) in cand.call.ops.iter_mut().zip(kept) {
                if !k && self.op_visible(*c, o) {
                    o.absent_on.extend(self.classes[*c].members.iter().copied());
                    o.absent_on.sort_unstable();
                    o.absent_on.dedup();
                }
            }
        }
        // A branch: the classes that see it but do not execute it skip it
        // ([`LogicalCall::only_ranks`]).
        let skipping = (0..self.classes.len()).any(|c| cand.seen[c] && !cand.advance.contains(&c));
        if cand.forced && skipping {
            let mut ranks: Vec<Rank> = cand
                .advance
                .iter()
                .flat_map(|&c| self.classes[c].members.iter().copied())
                .collect();
            ranks.sort_unstable();
            ranks.dedup();
            cand.call.only_ranks = Some(ranks);
            for c in 0..self.classes.len() {
                if !cand.advance.contains(&c) {
                    cand.seen[c] = false;
                }
            }
        }
        let mut any = false;
        for (c, n) in class_conflicts.iter_mut().enumerate() {
            if cand.seen[c] && !self.executes(c, &cand) {
                *n += 1;
                any = true;
            }
        }
        *conflicts += u64::from(any);
        contributed[cand.origin] += 1;
        self.emit(cand);
    }

    fn emit(&mut self, cand: Candidate) {
        let here = self.out.len();
        for &c in &cand.advance {
            self.placed[c].push(here);
            self.pos[c] += 1;
        }
        let from = &self.classes[cand.origin];
        let base = from.records.get(self.pos[cand.origin].saturating_sub(1));
        let record = Record {
            call: cand.call,
            gap_ns: base.map_or(0, |b| b.gap_ns),
            duration_ns: base.map_or(0, |b| b.duration_ns),
            rank: from.rank,
            call_index: base.map_or(0, |b| b.call_index),
        };
        self.out.push(Entry {
            record,
            targets: cand.targets,
            seen: cand.seen,
        });
    }
}

/// The union of two ascending lists without repeats, ascending and without repeats. O(|a| + |b|).
fn union_sorted(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        out.push(x);
        i += usize::from(a[i] == x);
        j += usize::from(b[j] == x);
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Merge the sequences of `classes` (directions named as in `names`, topology order) into one
/// logical sequence that every class's expansion follows in order.
pub(super) fn merge(classes: &[&ClassTrace], names: &[String]) -> Merged {
    merge_until(classes, names, false, false)
}

/// [`merge`], or with `stop_at_conflict` only until the first conflict (the records are then
/// a prefix and `conflicts` is 1): whether a set of classes merges without conflict is known
/// from the first conflicting record, and [`merge_best`] asks that of several sets.
fn merge_until(classes: &[&ClassTrace], names: &[String], stop_at_conflict: bool, lockstep: bool) -> Merged {
    let class_names: Vec<Vec<String>> = classes
        .iter()
        .map(|c| {
            names
                .iter()
                .zip(&c.visible)
                .filter(|(_, &v)| v)
                .map(|(n, _)| n.clone())
                .collect()
        })
        .collect();
    let mut st = State {
        classes,
        index: names.iter().enumerate().map(|(k, n)| (n.as_str(), k)).collect(),
        dirs: class_names
            .iter()
            .map(|v| {
                let mut d: Vec<&str> = v.iter().map(String::as_str).collect();
                d.sort_unstable();
                d
            })
            .collect(),
        names: class_names.clone(),
        pos: vec![0; classes.len()],
        placed: classes.iter().map(|c| Vec::with_capacity(c.records.len())).collect(),
        out: Vec::with_capacity(classes.iter().map(|c| c.records.len()).max().unwrap_or(0)),
        loose: false,
    };
    let mut conflicts = 0u64;
    let mut class_conflicts = vec![0u64; classes.len()];
    let mut contributed = vec![0u64; classes.len()];
    // Progress of the merge of every class (the first and longest; candidates and trials
    // report as they are compared instead).
    let counted = !stop_at_conflict && !lockstep;
    let total: u64 = classes.iter().map(|c| c.records.len() as u64).sum();
    let mut layers = 0u64;
    loop {
        layers += 1;
        if counted && layers.is_multiple_of(1024) && crate::progress::watched() {
            let done = st.pos.iter().map(|&p| p as u64).sum();
            crate::progress::step("merging the classes' sequences", done, total);
        }
        // All valid candidates at once (a layer): they advance disjoint sets of classes, so
        // each stays valid after the others; emitting them in an order that depends on their
        // content only keeps loop iterations identical.
        let mut layer: Vec<Candidate> = Vec::new();
        for loose in [false, true] {
            st.loose = loose;
            for c in 0..classes.len() {
                // A candidate always advances the class it grew from, so a class already advanced
                // by a candidate of this layer offers nothing that could join it.
                if layer.iter().any(|l| l.advance.contains(&c)) {
                    continue;
                }
                // A completion's candidate does not depend on `loose`: the strict pass found none.
                if loose && st.head(c).is_some_and(|h| h.call.kind == CallKind::Completion) {
                    continue;
                }
                let Some(cand) = st.candidate(c) else { continue };
                if !layer.iter().any(|l| l.advance.iter().any(|x| cand.advance.contains(x))) {
                    layer.push(cand);
                }
            }
            if !layer.is_empty() {
                break;
            }
        }
        if layer.is_empty() && lockstep {
            // Every class's head as a branch of the classes that execute it: classes whose
            // sequences differ throughout (NAS CG's, whose directions name other moves on every
            // rank) advance together, so each iteration of their loop comes out the same.
            let heads = st.head_targets();
            for c in 0..classes.len() {
                if layer.iter().any(|l| l.advance.contains(&c)) {
                    continue;
                }
                let Some(cand) = st.forced_from(c, &heads) else {
                    continue;
                };
                if !layer.iter().any(|l| l.advance.iter().any(|x| cand.advance.contains(x))) {
                    layer.push(cand);
                }
            }
        }
        if layer.is_empty() {
            let Some(cand) = st.forced() else { break };
            layer.push(cand);
        }
        layer.sort_by_key(|c| st.priority(c));
        for cand in layer {
            st.take(cand, &mut conflicts, &mut class_conflicts, &mut contributed);
        }
        if stop_at_conflict && conflicts > 0 {
            break;
        }
    }
    // Moved out of the entries, not copied (a copy of every merged record was a tenth of the
    // merge on a 16.6 M-call run, most of it the kernel handing out fresh pages).
    let records = std::mem::take(&mut st.out)
        .into_iter()
        .enumerate()
        .map(|(here, e)| {
            let mut rec = e.record;
            let mut back: Vec<u32> = e
                .targets
                .iter()
                .filter(|&&t| t < here)
                .map(|&t| (here - t) as u32)
                .collect();
            back.sort_unstable();
            back.dedup();
            rec.call.completes = back;
            rec
        })
        .collect();
    Merged {
        records,
        conflicts,
        class_conflicts,
        contributed,
    }
}

/// An operation as [`score`] compares it: function, sent (not received), partner
/// ([`Partner::label`]) and size, the names numbered ([`score::ScoreNames`]).
type ScoreKey = (u32, bool, u32, u64);

#[cfg(test)]
mod tests;
