//! The merge kept for the logical trace: of every class, in lockstep, as one block per class or
//! aligned between world collectives, or of the largest set of classes that merges without
//! conflict — whichever reproduces the run best.

use super::{merge, merge_until, score, ClassTrace, Merged};
use crate::compress::Folding;
use crate::logical::per_rank::each_index;
use crate::logical::Record;

/// [`merge`] of every class; when that leaves conflicts (rank-dependent behaviour, or a
/// placement whose direction names do not fit every rank), also the merge of the largest set of
/// classes that merges without conflict, taken greedily from the class with the most directions,
/// and the one that reproduces more point-to-point operations is kept (each class weighted by its
/// number of ranks). Returns the merge, per class whether it took part, and the merge's folding
/// when the alternatives were compared by it (kept to compress the logical trace later).
pub(in crate::logical) fn merge_best(
    classes: &[ClassTrace],
    names: &[String],
    weights: &[u64],
) -> (Merged, Vec<bool>, Option<Folding>) {
    let all: Vec<&ClassTrace> = classes.iter().collect();
    let full = merge(&all, names);
    let branched = |r: &Record| r.call.only_ranks.is_some() || r.call.ops.iter().any(|o| !o.absent_on.is_empty());
    if full.records.iter().any(branched) {
        // Branches (records of some ranks, operations some ranks skip): the classes also
        // advanced in lockstep where they disagree, and each class's sequence as a block of its own (ScalaTrace keeps rank groups whose events do not
        // align apart the same way); the one whose loops fold shortest is kept (then the one
        // with fewer records, then the merge).
        // Sized by their folding (what compression would choose, no program built); the
        // winner's folding is kept.
        let alternatives: [&(dyn Fn() -> Option<Merged> + Sync); 3] = [
            &|| Some(merge_until(&all, names, false, true)),
            &|| Some(blocks(&all)),
            &|| crate::logical::align::aligned(&all, names),
        ];
        let records: usize = classes.iter().map(|c| c.records.len()).sum();
        let (best, best_folding) = if records <= PARALLEL_RECORDS {
            sized_together(full, &alternatives)
        } else {
            sized_in_turn(full, &alternatives)
        };
        return (best, vec![true; classes.len()], Some(best_folding));
    }
    if full.conflicts == 0 || classes.len() < 2 {
        return (full, vec![true; classes.len()], None);
    }
    let dirs = |c: usize| classes[c].visible.iter().filter(|&&v| v).count();
    let mut order: Vec<usize> = (0..classes.len()).collect();
    order.sort_by_key(|&c| (std::cmp::Reverse(dirs(c)), c));
    let mut chosen = vec![order[0]];
    // The merge of the last set that merged without conflict: `sub` below when it is the final
    // set (a trial is abandoned at its first conflict).
    let mut last: Option<Merged> = None;
    for &c in &order[1..] {
        let mut trial = chosen.clone();
        trial.push(c);
        trial.sort_unstable();
        let refs: Vec<&ClassTrace> = trial.iter().map(|&i| &classes[i]).collect();
        let m = merge_until(&refs, names, true, false);
        if m.conflicts == 0 {
            chosen = trial;
            last = Some(m);
        }
    }
    let sub = last.unwrap_or_else(|| merge(&[&classes[chosen[0]]], names));
    if score(&sub.records, classes, names, weights) <= score(&full.records, classes, names, weights) {
        return (full, vec![true; classes.len()], None);
    }
    let mut included = vec![false; classes.len()];
    let mut contributed = vec![0; classes.len()];
    let mut class_conflicts = vec![0; classes.len()];
    for (k, &c) in chosen.iter().enumerate() {
        included[c] = true;
        contributed[c] = sub.contributed[k];
        class_conflicts[c] = sub.class_conflicts[k];
    }
    (
        Merged {
            records: sub.records,
            conflicts: sub.conflicts,
            class_conflicts,
            contributed,
        },
        included,
        None,
    )
}

/// Candidate merges of at most this many class records in all are sized at once, each on a core
/// of its own (natively): every candidate and its folding are then held together (held-out OPM
/// Flow on 4 ranks, 518,348 class records: peak 0.75 → 1.02 GB on 2 cores); above it, in turn.
const PARALLEL_RECORDS: usize = 1 << 20;

/// A merge's size as the choice compares them: its folding's compressed length, then its number
/// of records; and the folding.
fn size(m: &Merged) -> ((usize, usize), Folding) {
    let folding = Folding::of(&m.records);
    ((folding.compressed_length, m.records.len()), folding)
}

/// The branched merge `full` and its `alternatives` sized one at a time, so that at most two
/// record sequences are held (the best and the one being sized): on a 1.6 M-record run each is
/// gigabytes. The shortest folding is kept, then the fewer records, then the earlier candidate.
pub(super) fn sized_in_turn(full: Merged, alternatives: &[&(dyn Fn() -> Option<Merged> + Sync)]) -> (Merged, Folding) {
    let (mut best_size, mut best_folding) = size(&full);
    // Candidates already sized, by a hash of their records: a merge equal to one of them
    // folds the same and cannot be shorter (the aligned merge of Gerris's adaptive run is
    // the lockstep one: 1.5 of its 7 s were spent sizing it again).
    let mut sized = vec![records_hash(&full.records)];
    let mut best = full;
    for make in alternatives {
        let Some(other) = make() else {
            continue;
        };
        let hash = records_hash(&other.records);
        if sized.contains(&hash) {
            continue;
        }
        sized.push(hash);
        let (s, folding) = size(&other);
        if s < best_size {
            best = other;
            best_size = s;
            best_folding = folding;
        }
    }
    (best, best_folding)
}

/// [`sized_in_turn`]'s choice with every candidate built and sized at once, on every core
/// natively ([`each_index`]; in turn on wasm). Sizing the candidates is most of a branched
/// run's logical trace (OPM Flow on 4 ranks: 78 % of its time in four foldings of 230,000 to
/// 520,000 records each). The same choice: a candidate equal to `full` is dropped, ties keep
/// the earlier candidate, which is where an equal later one loses.
pub(super) fn sized_together(full: Merged, alternatives: &[&(dyn Fn() -> Option<Merged> + Sync)]) -> (Merged, Folding) {
    let full_hash = records_hash(&full.records);
    let sized = each_index(alternatives.len() + 1, |k| {
        if k == 0 {
            let (s, folding) = size(&full);
            return Some((s, None, folding));
        }
        let other = alternatives[k - 1]()?;
        if records_hash(&other.records) == full_hash {
            return None;
        }
        let (s, folding) = size(&other);
        Some((s, Some(other), folding))
    });
    let (_, merged, folding) = sized
        .into_iter()
        .flatten()
        .enumerate()
        .min_by_key(|(k, (s, _, _))| (*s, *k))
        .map(|(_, c)| c)
        .expect("the full merge is always sized");
    (merged.unwrap_or(full), folding)
}

/// A hash of `records` as folding sees them and the merge keeps them (calls, ranks, call
/// indices; not timings).
pub(super) fn records_hash(records: &[Record]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    records.len().hash(&mut h);
    for r in records {
        r.call.hash(&mut h);
        (r.rank, r.call_index).hash(&mut h);
    }
    h.finish()
}

/// Every class's own sequence one after the other, each record executed by the class's
/// members only ([`LogicalCall::only_ranks`]): exact by construction (completion offsets stay
/// inside a class's block), and as short as the classes' own programs together when their
/// sequences do not line up (NAS CG on 8 ranks, whose directions name other moves on other
/// ranks; hpcc's all-to-all phases).
pub(super) fn blocks(classes: &[&ClassTrace]) -> Merged {
    let mut records = Vec::new();
    for c in classes {
        for r in &c.records {
            let mut r = r.clone();
            r.call.only_ranks = Some(c.members.clone());
            records.push(r);
        }
    }
    Merged {
        records,
        conflicts: 0,
        class_conflicts: vec![0; classes.len()],
        contributed: classes.iter().map(|c| c.records.len() as u64).collect(),
    }
}
