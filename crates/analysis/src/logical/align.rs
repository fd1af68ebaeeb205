//! Merging class sequences by alignment: the classes' sequences are aligned one after the other
//! onto a growing list of *columns* (a progressive multiple alignment, as in sequence
//! comparison), each column a record that the classes aligned on it execute. A record that no
//! other class executes at that point (a side exchange of one class, such as NAS MG's
//! redistribution at its coarsest level, which three classes do three ways) becomes a column of
//! its own, executed by its class only ([`LogicalCall::only_ranks`] when another class sees it).
//!
//! The greedy merge ([`super::merge`]) decides front to back; once a side exchange makes it
//! branch, it may pair one class's side records with the common records of another class and
//! never get back in step (every later record then a branch, iteration after iteration). The
//! alignment maximises what the classes execute together over the whole sequence, so the
//! classes meet again after each side exchange and the iterations come out alike.
//!
//! Exact by construction: a column is the record of the first class aligned on it; a class
//! is aligned on it only where that record restricted to the class's directions is the class's
//! own record (sizes aside: step 3b fits every rank's sizes), and a class that sees a column
//! without executing it is left out by `only_ranks`. A completion completes the columns its
//! classes' own completions complete; where that set would make a class complete more, each
//! class gets its own completion record.

use super::merge::{key, same, ClassTrace, Merged};
use super::{restrict_call, LogicalCall, Operation, Partner, Record};
use std::collections::HashMap;
use std::ops::Range;
use tracelogic_model::{CallKind, Rank};

/// Most cells of one alignment table (columns × records of the class aligned); above it the
/// alignment is not tried (32 MiB of `u32`).
pub const MAX_CELLS: usize = 8 << 20;

/// A record of the merged sequence under construction: the classes aligned on it, each with the
/// position of its own record.
struct Column {
    call: LogicalCall,
    exec: Vec<(usize, usize)>,
}

/// A record built from a column: its call, the columns it completes, and the class record it
/// comes from (class, position).
type Built = (LogicalCall, Vec<usize>, (usize, usize));

struct View<'a> {
    classes: &'a [&'a ClassTrace],
    /// The largest communicator the classes' collectives reach ([`is_anchor`]).
    world: u32,
    index: HashMap<&'a str, usize>,
    /// Per class: its direction names, sorted.
    dirs: Vec<Vec<&'a str>>,
}

impl View<'_> {
    fn op_visible(&self, c: usize, o: &Operation) -> bool {
        match &o.partner {
            Partner::Direction(d) => self.index.get(d.as_str()).is_some_and(|&k| self.classes[c].visible[k]),
            _ => true,
        }
    }

    fn sees(&self, c: usize, call: &LogicalCall) -> bool {
        !call.kind.is_p2p() || call.ops.iter().any(|o| self.op_visible(c, o))
    }

    /// What class `c` sees of column call `m`, computed once per column and class (not once per
    /// cell of the table): a point-to-point call restricted to the class's directions
    /// ([`restrict_call`], `None` when it sees none of them); other calls are compared whole.
    fn seen(&self, c: usize, m: &LogicalCall) -> Seen {
        if m.kind.is_p2p() {
            Seen::P2p(restrict_call(m, |o| {
                self.op_visible(c, o).then(|| o.for_class(&self.dirs[c]))
            }))
        } else {
            Seen::Whole
        }
    }

    /// How well class `c`'s record `r` executes column call `m` (`seen`: [`View::seen`] of it):
    /// 3 exactly, 2 up to sizes (or a completion of the same function and number of calls: its
    /// targets are checked when the records are built; a completion run's `calls` is the class's
    /// own, so every rank's expansion keeps its count), 0 not at all.
    fn weight(m: &LogicalCall, seen: &Seen, r: &LogicalCall, world: u32) -> u32 {
        match (m.kind, seen) {
            (CallKind::Completion, _) => {
                u32::from(r.kind == CallKind::Completion && r.function == m.function && r.calls == m.calls) * 2
            }
            (_, Seen::P2p(None)) => 0,
            (_, Seen::P2p(Some(seen))) => {
                if same(seen, r, false) {
                    3
                } else if same(seen, r, true) {
                    2
                } else {
                    // The class makes one half of the column's exchange, or the whole of a
                    // column that is one half (then the column becomes the whole: only when the
                    // column's own call is that half, not a view of a larger call).
                    u32::from(half_of(r, seen) || (m.ops.len() == 1 && half_of(seen, r)))
                }
            }
            (_, Seen::Whole) if same(m, r, true) && is_anchor(m, world) => ANCHOR_WEIGHT,
            (_, Seen::Whole) => u32::from(same(m, r, true)) * 3,
        }
    }
}

/// A column's call as one class sees it ([`View::seen`]).
enum Seen {
    P2p(Option<LogicalCall>),
    Whole,
}

/// A hash of what [`same`] compares up to sizes: calls with different keys are never the same,
/// so most cells of a table are decided without comparing names.
fn loose_key(call: &LogicalCall) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (call.kind, &call.function, call.ops.len()).hash(&mut h);
    for o in &call.ops {
        (&o.dir, &o.partner, &o.bytes_by_class).hash(&mut h);
    }
    if let Some(x) = &call.collective {
        (&x.op, x.root_key(), x.comm_size).hash(&mut h);
    }
    h.finish()
}

/// Whether `part` is one half of `whole`, a `MPI_Sendrecv` (up to sizes): the `MPI_Send` or
/// `MPI_Recv` a rank makes instead when it has nothing to receive or to send at that step
/// (GROMACS's halo exchange sends to or receives from a neighbour only when the count is not
/// zero). Aligned so, the column is the `MPI_Sendrecv` and the rank skips the other half
/// ([`Operation::absent_on`]); a loop then folds the steps whatever the ranks skip.
///
/// What [`same`] (up to sizes) says of `whole` restricted to `part`'s operation
/// ([`restrict_call`] names it `MPI_Send` or `MPI_Recv`), without building that call: this runs
/// for cells of the alignment table.
fn half_of(part: &LogicalCall, whole: &LogicalCall) -> bool {
    let [p] = part.ops.as_slice() else {
        return false;
    };
    let (kind, function) = match p.dir {
        tracelogic_model::P2pDir::Send => (CallKind::Send, "MPI_Send"),
        tracelogic_model::P2pDir::Recv => (CallKind::Recv, "MPI_Recv"),
    };
    whole.kind == CallKind::SendRecv
        && whole.ops.len() == 2
        && part.kind == kind
        && part.function == function
        && part.collective.is_none()
        && whole.collective.is_none()
        && whole
            .ops
            .iter()
            .any(|o| o.dir == p.dir && o.partner == p.partner && o.bytes_by_class == p.bytes_by_class)
}

/// Whether a call of loose key-class `a` may be half of `b` or the reverse ([`half_of`]),
/// decided from the kinds alone (the cells whose loose keys differ are skipped unless so).
fn may_be_halves(a: &LogicalCall, b: &LogicalCall) -> bool {
    let half = |x: &LogicalCall| matches!(x.kind, CallKind::Send | CallKind::Recv) && x.ops.len() == 1;
    let whole = |x: &LogicalCall| x.kind == CallKind::SendRecv && x.ops.len() == 2;
    (half(a) && whole(b)) || (whole(a) && half(b))
}

impl Seen {
    /// [`loose_key`] of the call compared with a class's records (`None`: nothing to compare,
    /// or a completion, compared by other fields).
    fn key(&self, m: &LogicalCall) -> Option<u64> {
        match (m.kind, self) {
            (CallKind::Completion, _) | (_, Seen::P2p(None)) => None,
            (_, Seen::P2p(Some(seen))) => Some(loose_key(seen)),
            (_, Seen::Whole) => Some(loose_key(m)),
        }
    }
}

/// Weight of aligning two anchors ([`is_anchor`]): MPI orders a communicator's collectives
/// alike on all its members, so a stretch of point-to-point records never buys a shift past
/// one (each record weighs at most 3; a table's score is at most 2,900 anchors within
/// [`MAX_CELLS`], far below `u32::MAX`).
const ANCHOR_WEIGHT: u32 = 1000;

/// Align `c`'s records `range` onto `columns` (positions stay those of the whole sequence);
/// `None` when the table would exceed [`MAX_CELLS`].
fn align_class(view: &View, columns: Vec<Column>, c: usize, range: Range<usize>) -> Option<Vec<Column>> {
    let recs = &view.classes[c].records[range.clone()];
    let (n, m) = (columns.len(), recs.len());
    if (n + 1).saturating_mul(m + 1) > MAX_CELLS {
        return None;
    }
    let w = m + 1;
    let seen: Vec<Seen> = columns.iter().map(|col| view.seen(c, &col.call)).collect();
    let column_keys: Vec<Option<u64>> = seen.iter().zip(&columns).map(|(s, col)| s.key(&col.call)).collect();
    let record_keys: Vec<u64> = recs.iter().map(|r| loose_key(&r.call)).collect();
    // Weight of cell (i, j), 0 at once where the loose keys differ.
    // (Loose keys of a `MPI_Sendrecv` and of one of its halves differ: those cells are weighed.)
    let weight = |cols: &[Column], i: usize, j: usize| -> u32 {
        let r = &recs[j - 1].call;
        match column_keys[i - 1] {
            Some(k)
                if k != record_keys[j - 1] && !matches!(&seen[i - 1], Seen::P2p(Some(s)) if may_be_halves(s, r)) =>
            {
                0
            }
            _ => View::weight(&cols[i - 1].call, &seen[i - 1], r, view.world),
        }
    };
    let mut dp = vec![0u32; (n + 1) * w];
    for i in 1..=n {
        for j in 1..=m {
            let up = dp[(i - 1) * w + j];
            let left = dp[i * w + j - 1];
            let mut best = up.max(left);
            let s = weight(&columns, i, j);
            if s > 0 {
                best = best.max(dp[(i - 1) * w + j - 1] + s);
            }
            dp[i * w + j] = best;
        }
    }
    // Back from the end: a match where it gives the score, else the column alone, else the
    // class's record alone.
    let mut out: Vec<Column> = Vec::with_capacity(n + m);
    let mut cols = columns;
    let (mut i, mut j) = (n, m);
    let own = |j: usize| Column {
        call: key(&recs[j]),
        exec: vec![(c, range.start + j)],
    };
    while i > 0 || j > 0 {
        if i > 0 && j > 0 {
            let s = weight(&cols, i, j);
            if s > 0 && dp[i * w + j] == dp[(i - 1) * w + j - 1] + s {
                let mut col = cols.pop().expect("column i - 1");
                // The class makes the whole `MPI_Sendrecv` where the column has one half: the
                // column becomes the whole, the classes before it skip the other half.
                let r = &recs[j - 1].call;
                if matches!(&seen[i - 1], Seen::P2p(Some(x)) if half_of(x, r)) && col.call.ops.len() < r.ops.len() {
                    col.call = key(&recs[j - 1]);
                }
                col.exec.push((c, range.start + j - 1));
                out.push(col);
                i -= 1;
                j -= 1;
                continue;
            }
        }
        if i > 0 && (j == 0 || dp[i * w + j] == dp[(i - 1) * w + j]) {
            out.push(cols.pop().expect("column i - 1"));
            i -= 1;
        } else {
            out.push(own(j - 1));
            j -= 1;
        }
    }
    out.reverse();
    Some(out)
}

/// The columns of the classes' records `ranges` (one per class) aligned progressively, class
/// after class; `None` when a table would exceed [`MAX_CELLS`].
fn align_ranges(view: &View, ranges: &[Range<usize>]) -> Option<Vec<Column>> {
    let first = ranges.first()?;
    let mut columns: Vec<Column> = first
        .clone()
        .map(|j| Column {
            call: key(&view.classes[0].records[j]),
            exec: vec![(0, j)],
        })
        .collect();
    for (c, range) in ranges.iter().enumerate().skip(1) {
        columns = align_class(view, columns, c, range.clone())?;
    }
    Some(columns)
}

/// An anchor: a record every rank executes in the same order whatever it does around it —
/// `MPI_Init`, `MPI_Finalize`, and a collective on a communicator of every rank the classes'
/// collectives reach (`world`: the largest `comm_size`). MPI orders a communicator's
/// collectives the same on all its members, so CP2K's world broadcasts and reductions cut every
/// rank's sequence at the same places, however differently its ranks exchange in between.
fn is_anchor(call: &LogicalCall, world: u32) -> bool {
    match call.kind {
        k if k.is_p2p() => false,
        CallKind::Completion => false,
        _ => call.collective.as_ref().is_none_or(|x| x.comm_size == world),
    }
}

/// Per class, the positions of the anchors all classes share, in order (the same count for
/// every class; entry `k` of every class is the same record up to sizes): the common
/// subsequence of the classes' anchors, found class after class (a longest common subsequence
/// of anchor lists). `None` when there is none or a table would exceed [`MAX_CELLS`].
fn common_anchors(view: &View) -> Option<Vec<Vec<usize>>> {
    let world = view.world;
    let anchors: Vec<Vec<usize>> = view
        .classes
        .iter()
        .map(|c| {
            (0..c.records.len())
                .filter(|&j| is_anchor(&c.records[j].call, world))
                .collect()
        })
        .collect();
    let call = |c: usize, j: usize| &view.classes[c].records[j].call;
    // Per common anchor, its position in each class seen so far.
    let mut common: Vec<Vec<usize>> = anchors.first()?.iter().map(|&j| vec![j]).collect();
    for (c, mine) in anchors.iter().enumerate().skip(1) {
        let eq = |i: usize, j: usize| same(call(0, common[i][0]), call(c, mine[j]), true);
        // What both begin and end with is common without a table (all of it, as a rule: MPI
        // orders the world's collectives alike on every rank).
        let (n, m) = (common.len(), mine.len());
        let head = (0..n.min(m)).take_while(|&k| eq(k, k)).count();
        let tail = (0..(n - head).min(m - head))
            .take_while(|&k| eq(n - 1 - k, m - 1 - k))
            .count();
        let (rn, rm) = (n - head - tail, m - head - tail);
        if (rn + 1).saturating_mul(rm + 1) > MAX_CELLS {
            return None;
        }
        let w = rm + 1;
        let mut dp = vec![0u32; (rn + 1) * w];
        let inner = |i: usize, j: usize| eq(head + i, head + j);
        for i in 1..=rn {
            for j in 1..=rm {
                dp[i * w + j] = if inner(i - 1, j - 1) {
                    dp[(i - 1) * w + j - 1] + 1
                } else {
                    dp[(i - 1) * w + j].max(dp[i * w + j - 1])
                };
            }
        }
        // Matched pairs (row of `common`, position in `mine`), in order.
        let mut pairs: Vec<(usize, usize)> = (0..head).map(|k| (k, k)).collect();
        let mut middle = Vec::new();
        let (mut i, mut j) = (rn, rm);
        while i > 0 && j > 0 {
            if inner(i - 1, j - 1) && dp[i * w + j] == dp[(i - 1) * w + j - 1] + 1 {
                middle.push((head + i - 1, head + j - 1));
                i -= 1;
                j -= 1;
            } else if dp[i * w + j] == dp[(i - 1) * w + j] {
                i -= 1;
            } else {
                j -= 1;
            }
        }
        pairs.extend(middle.into_iter().rev());
        pairs.extend((0..tail).rev().map(|k| (n - 1 - k, m - 1 - k)));
        let mut rows = common;
        common = pairs
            .into_iter()
            .map(|(i, j)| {
                let mut row = std::mem::take(&mut rows[i]);
                row.push(mine[j]);
                row
            })
            .collect();
    }
    if common.is_empty() {
        return None;
    }
    // Per class, its anchor positions.
    Some(
        (0..view.classes.len())
            .map(|c| common.iter().map(|row| row[c]).collect())
            .collect(),
    )
}

/// The columns of an alignment anchored on the records every class shares ([`common_anchors`]):
/// each anchor is one column of every class, and only the stretches between two anchors are
/// aligned, so the tables are those of one stretch (CP2K's ranks differ in every MD step
/// between world collectives; a whole alignment of its 30,000-record classes would need a
/// billion cells). A stretch too large for [`MAX_CELLS`] keeps every class's records as
/// columns of their own, one class after the other.
fn anchored_columns(view: &View) -> Option<Vec<Column>> {
    let anchors = common_anchors(view)?;
    let k = anchors[0].len();
    let mut columns = Vec::new();
    for a in 0..=k {
        let ranges: Vec<Range<usize>> = anchors
            .iter()
            .enumerate()
            .map(|(c, pos)| {
                let from = if a == 0 { 0 } else { pos[a - 1] + 1 };
                let to = if a == k { view.classes[c].records.len() } else { pos[a] };
                from..to
            })
            .collect();
        match align_ranges(view, &ranges) {
            Some(cols) => columns.extend(cols),
            None => columns.extend(ranges.iter().enumerate().flat_map(|(c, r)| {
                r.clone().map(move |j| Column {
                    call: key(&view.classes[c].records[j]),
                    exec: vec![(c, j)],
                })
            })),
        }
        if a < k {
            columns.push(Column {
                call: key(&view.classes[0].records[anchors[0][a]]),
                exec: anchors.iter().enumerate().map(|(c, pos)| (c, pos[a])).collect(),
            });
        }
    }
    Some(columns)
}

/// Lone halves joined to the whole they are half of, after the alignment: a run of columns each
/// one half of a `MPI_Sendrecv` ([`half_of`]) made by some classes, and as many `MPI_Sendrecv`
/// columns of other classes after (or before) it, in the same order, become those wholes, the
/// half classes skipping the other half. The progressive alignment cannot do it when the
/// classes making complementary halves (one a lone `MPI_Send`, another the `MPI_Recv`) are
/// aligned before any class making the whole: their halves are two columns, and the whole
/// aligns on one of them (GROMACS's halo pulses after a repartitioning, where which ranks have
/// nothing to send changes from step to step: two columns there made each such step a new
/// variant of the MD loop).
///
/// Exact: a half class's records keep their order, since the wholes are searched only up to the
/// next column such a class executes, and a whole is joined only by classes it does not
/// already have. The nearer of the two directions wins (forward on a tie); a run that finds
/// fewer wholes than halves in both is left as it is. Each run scans at most to the nearest
/// column its classes execute on either side: O(columns) per run, usually a few columns.
fn join_lone_halves(columns: Vec<Column>) -> Vec<Column> {
    let n = columns.len();
    let lone_half = |col: &Column| matches!(col.call.kind, CallKind::Send | CallKind::Recv) && col.call.ops.len() == 1;
    // Per column: the column its classes join, and the classes joining it.
    let mut into: Vec<Option<usize>> = vec![None; n];
    let mut joined: Vec<Vec<usize>> = vec![Vec::new(); n];
    let has = |col: &Column, extra: &[usize], c: usize| col.exec.iter().any(|&(x, _)| x == c) || extra.contains(&c);
    let mut i = 0;
    while i < n {
        if !lone_half(&columns[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < n && lone_half(&columns[i]) {
            i += 1;
        }
        let mut classes: Vec<usize> = columns[start..i]
            .iter()
            .flat_map(|c| c.exec.iter().map(|&(x, _)| x))
            .collect();
        classes.sort_unstable();
        classes.dedup();
        let halves: Vec<usize> = (start..i).collect();
        // The wholes for `halves` (in the order given) met along `order`, stopping at a column
        // a half class executes.
        let search = |order: &mut dyn Iterator<Item = usize>, halves: &mut dyn Iterator<Item = usize>| {
            let mut targets = Vec::new();
            let mut h = halves.next();
            for j in order {
                let Some(k) = h else { break };
                let col = &columns[j];
                // (Also a column an earlier run of these classes joined.)
                if classes.iter().any(|&c| has(col, &joined[j], c)) {
                    break;
                }
                // (So the half's classes are not in `col` either: the join adds no class twice.)
                if col.call.kind == CallKind::SendRecv && half_of(&columns[k].call, &col.call) {
                    targets.push((k, j));
                    h = halves.next();
                }
            }
            (h.is_none()).then_some(targets)
        };
        let forward = search(&mut (i..n), &mut halves.iter().copied());
        let backward = search(&mut (0..start).rev(), &mut halves.iter().rev().copied());
        let distance = |t: &Vec<(usize, usize)>| t.iter().map(|&(k, j)| k.abs_diff(j)).sum::<usize>();
        let chosen = match (forward, backward) {
            (Some(f), Some(b)) if distance(&b) < distance(&f) => Some(b),
            (Some(f), _) => Some(f),
            (None, b) => b,
        };
        for (k, j) in chosen.into_iter().flatten() {
            into[k] = Some(j);
            let add: Vec<usize> = columns[k].exec.iter().map(|&(c, _)| c).collect();
            joined[j].extend(add);
        }
    }
    if into.iter().all(Option::is_none) {
        return columns;
    }
    let mut moved: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (k, col) in columns.iter().enumerate() {
        if let Some(j) = into[k] {
            moved[j].extend(col.exec.iter().copied());
        }
    }
    columns
        .into_iter()
        .zip(moved)
        .zip(into)
        .filter_map(|((mut col, extra), to)| {
            to.is_none().then(|| {
                col.exec.extend(extra);
                col
            })
        })
        .collect()
}

/// The classes' sequences merged by alignment (in the order given), or `None` when a table
/// would be too large.
pub(super) fn aligned(classes: &[&ClassTrace], names: &[String]) -> Option<Merged> {
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(k, n)| (n.as_str(), k)).collect();
    let dirs = classes
        .iter()
        .map(|c| {
            let mut d: Vec<&str> = names
                .iter()
                .zip(&c.visible)
                .filter(|(_, &v)| v)
                .map(|(n, _)| n.as_str())
                .collect();
            d.sort_unstable();
            d
        })
        .collect();
    let world = classes
        .iter()
        .flat_map(|c| {
            c.records
                .iter()
                .filter_map(|r| r.call.collective.as_ref().map(|x| x.comm_size))
        })
        .max()
        .unwrap_or(0);
    let view = View {
        classes,
        world,
        index,
        dirs,
    };
    let whole: Vec<Range<usize>> = classes.iter().map(|c| 0..c.records.len()).collect();
    let columns = join_lone_halves(align_ranges(&view, &whole).or_else(|| anchored_columns(&view))?);
    // Where each class's records went.
    let mut placed: Vec<Vec<usize>> = classes.iter().map(|c| vec![usize::MAX; c.records.len()]).collect();
    for (k, col) in columns.iter().enumerate() {
        for &(c, j) in &col.exec {
            placed[c][j] = k;
        }
    }
    let members = |exec: &[(usize, usize)]| -> Vec<Rank> {
        let mut r: Vec<Rank> = exec
            .iter()
            .flat_map(|&(c, _)| classes[c].members.iter().copied())
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    };
    // Per column: the records it becomes (a completion may split), with their targets (columns).
    let mut built: Vec<Vec<Built>> = Vec::with_capacity(columns.len());
    let mut contributed = vec![0u64; classes.len()];
    for col in &columns {
        let origin = col.exec[0];
        let rec = |(c, j): (usize, usize)| &classes[c].records[j];
        if col.call.kind == CallKind::Completion {
            let own: Vec<Vec<usize>> = col
                .exec
                .iter()
                .map(|&(c, j)| {
                    let mut t: Vec<usize> = rec((c, j))
                        .call
                        .completes
                        .iter()
                        .filter_map(|&k| j.checked_sub(k as usize))
                        .map(|p| placed[c][p])
                        .collect();
                    t.sort_unstable();
                    t.dedup();
                    t
                })
                .collect();
            let mut all: Vec<usize> = own.iter().flatten().copied().collect();
            all.sort_unstable();
            all.dedup();
            let executes = |c: usize, t: usize| columns[t].exec.iter().any(|&(x, _)| x == c);
            let fits = col
                .exec
                .iter()
                .zip(&own)
                .all(|(&(c, _), o)| all.iter().filter(|&&t| executes(c, t)).count() == o.len());
            let seeing = (0..classes.len())
                .filter(|&c| all.iter().any(|&t| executes(c, t)))
                .count();
            if fits {
                let mut call = col.call.clone();
                if seeing > col.exec.len() {
                    call.only_ranks = Some(members(&col.exec));
                }
                built.push(vec![(call, all, origin)]);
            } else {
                built.push(
                    col.exec
                        .iter()
                        .zip(own)
                        .map(|(&e, t)| {
                            let mut call = key(rec(e));
                            call.only_ranks = Some(members(&[e]));
                            (call, t, e)
                        })
                        .collect(),
                );
            }
        } else {
            let mut call = col.call.clone();
            if call.collective.is_some() {
                // The sizes of the class that moves the most bytes (a root's, for a broadcast).
                let size = |e: (usize, usize)| rec(e).call.sizes().into_iter().max().unwrap_or(0);
                if let Some(&e) = col.exec.iter().max_by_key(|&&e| (size(e), std::cmp::Reverse(e.0))) {
                    call = key(rec(e));
                }
            }
            // Classes that make one half of a `MPI_Sendrecv` skip the other ([`half_of`]).
            if call.kind == CallKind::SendRecv {
                for &(c, j) in &col.exec {
                    let own = &rec((c, j)).call;
                    if own.kind == CallKind::SendRecv {
                        continue;
                    }
                    for o in call.ops.iter_mut() {
                        let made = own.ops.iter().any(|x| x.dir == o.dir && x.partner == o.partner);
                        if !made && view.op_visible(c, o) {
                            o.absent_on.extend(classes[c].members.iter().copied());
                            o.absent_on.sort_unstable();
                            o.absent_on.dedup();
                        }
                    }
                }
            }
            let seeing = (0..classes.len()).filter(|&c| view.sees(c, &call)).count();
            if seeing > col.exec.len() {
                call.only_ranks = Some(members(&col.exec));
            }
            built.push(vec![(call, Vec::new(), origin)]);
        }
    }
    // Columns → record positions, then the records with their completion offsets.
    let mut start = Vec::with_capacity(built.len());
    let mut n = 0usize;
    for b in &built {
        start.push(n);
        n += b.len();
    }
    let mut records = Vec::with_capacity(n);
    for b in built {
        for (mut call, targets, (c, j)) in b {
            let here = records.len();
            // A split completion's targets are columns of one record each (only completions
            // split, and a completion is no target).
            let mut back: Vec<u32> = targets
                .iter()
                .map(|&t| start[t])
                .filter(|&t| t < here)
                .map(|t| (here - t) as u32)
                .collect();
            back.sort_unstable();
            back.dedup();
            call.completes = back;
            let base = &classes[c].records[j];
            contributed[c] += 1;
            records.push(Record {
                call,
                gap_ns: base.gap_ns,
                duration_ns: base.duration_ns,
                rank: base.rank,
                call_index: base.call_index,
            });
        }
    }
    Some(Merged {
        records,
        conflicts: 0,
        class_conflicts: vec![0; classes.len()],
        contributed,
    })
}
