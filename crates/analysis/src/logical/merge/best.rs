//! The merge kept for the logical trace: of every class, in lockstep, as one block per class or
//! aligned between world collectives, or of the largest set of classes that merges without
//! conflict — whichever reproduces the run best.

use super::{merge, merge_until, score, ClassTrace, Merged};
use crate::compress::Folding;
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
        let cores = std::thread::available_parallelism().map_or(1, |t| t.get());
        let workers = if records <= PARALLEL_RECORDS {
            cores
        } else if crate::logical::memory::room_for_times_resident(2) {
            cores.min(2)
        } else {
            1
        };
        let (best, best_folding) = sized_concurrently(full, &alternatives, workers);
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

/// Candidate merges of at most this many class records in all are sized on every core at once
/// (natively). Above it, two at once when the system has at least twice the process's
/// resident size available, else one at a time. Each candidate held is a sequence of records
/// and its folding, gigabytes on a 1.6 M-record run: [`sized_concurrently`] holds the best so
/// far and one candidate per worker. Held-out LAMMPS `balance` on 8 ranks (2.5 M class
/// records, 1.7 GB resident when the merge starts): peak 3.1 GB one at a time, 4.6 GB two at
/// once (84 → 56 s). Held-out OPM Flow on 4 ranks (518,348 class records), every candidate at
/// once: peak 0.75 → 1.02 GB on 2 cores.
const PARALLEL_RECORDS: usize = 1 << 20;

/// The progress stage of sizing the candidate merges ([`crate::progress`]).
const COMPARING: &str = "comparing candidate merges by their loops";

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
    let n = alternatives.len() as u64 + 1;
    crate::progress::step(COMPARING, 0, n);
    let (mut best_size, mut best_folding) = size(&full);
    // Candidates already sized, by a hash of their records: a merge equal to one of them
    // folds the same and cannot be shorter (the aligned merge of Gerris's adaptive run is
    // the lockstep one: 1.5 of its 7 s were spent sizing it again).
    let mut sized = vec![records_hash(&full.records)];
    let mut best = full;
    for (k, make) in alternatives.iter().enumerate() {
        crate::progress::step(COMPARING, k as u64 + 1, n);
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

/// [`sized_in_turn`]'s choice with up to `workers` candidates built and sized at once, each on
/// a core of its own (natively; in turn on wasm). Sizing the candidates is most of a branched
/// run's logical trace (OPM Flow on 4 ranks: 78 % of its time in four foldings of 230,000 to
/// 520,000 records each; LAMMPS `balance` on 8 ranks: 42 of 84 s in four foldings of 1 to 2.5 M
/// records). A candidate loses as soon as it is sized against the best so far, so at most
/// `workers + 1` candidates are held. The same choice: the shortest folding, then the fewer
/// records, then the earlier candidate (`full` first); a candidate equal to an earlier one
/// already known is not sized (it could only tie and lose).
pub(super) fn sized_concurrently(
    full: Merged,
    alternatives: &[&(dyn Fn() -> Option<Merged> + Sync)],
    workers: usize,
) -> (Merged, Folding) {
    if cfg!(target_arch = "wasm32") || workers < 2 {
        return sized_in_turn(full, alternatives);
    }
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    type Best = Option<(((usize, usize), usize), Merged, Folding)>;
    let n = alternatives.len() + 1;
    let full = Mutex::new(Some(full));
    // Per candidate: its records' hash, once built.
    let hashes: Mutex<Vec<Option<u64>>> = Mutex::new(vec![None; n]);
    let best: Mutex<Best> = Mutex::new(None);
    let next = AtomicUsize::new(0);
    let compared = AtomicUsize::new(0);
    crate::progress::step(COMPARING, 0, n as u64);
    let work = || loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        if k >= n {
            break;
        }
        let candidate = if k == 0 {
            full.lock().unwrap_or_else(|e| e.into_inner()).take()
        } else {
            alternatives[k - 1]()
        };
        let Some(candidate) = candidate else {
            continue;
        };
        let hash = records_hash(&candidate.records);
        {
            let mut known = hashes.lock().unwrap_or_else(|e| e.into_inner());
            if known[..k].contains(&Some(hash)) {
                continue;
            }
            known[k] = Some(hash);
        }
        let (s, folding) = size(&candidate);
        crate::progress::step(COMPARING, compared.fetch_add(1, Ordering::Relaxed) as u64 + 1, n as u64);
        let mut best = best.lock().unwrap_or_else(|e| e.into_inner());
        if best.as_ref().is_none_or(|(key, _, _)| (s, k) < *key) {
            // The one it replaces is dropped after the lock is released.
            let _old = best.replace(((s, k), candidate, folding));
            drop(best);
        }
    };
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..workers.min(n)).map(|_| scope.spawn(work)).collect();
        for t in threads {
            t.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        }
    });
    let (_, merged, folding) = best
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .expect("the full merge is always sized");
    (merged, folding)
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
