//! Folding: records as shape symbols, tandem repeats found by slice hashes and replaced by
//! loop symbols pass by pass, with the items (records and loop iterations) alongside.

use super::*;

/// Next occurrences of the same symbol tried as periods at each position.
pub(super) const CANDIDATES: usize = 8;

/// A hash map through the multiply-rotate word hash (keys compared for equality only).
pub(super) type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<crate::logical::FastHasher>>;
/// Symbols (a record's shape, a loop's body) by number.
pub(super) type SymbolTable = FastMap<Symbol, u32>;

/// A call compared and hashed as its shape ([`LogicalCall::shape`]: sizes, tags and per-rank
/// size tables left out; the per-class size tables kept) without building the shape (three
/// copies of every record).
pub(super) struct ShapeOf<'a>(&'a LogicalCall);

impl PartialEq for ShapeOf<'_> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0, other.0);
        a.function == b.function
            && a.kind == b.kind
            && a.ops.len() == b.ops.len()
            && a.ops
                .iter()
                .zip(&b.ops)
                .all(|(x, y)| x.dir == y.dir && x.partner == y.partner && x.bytes_by_class == y.bytes_by_class)
            && match (&a.collective, &b.collective) {
                (None, None) => true,
                (Some(x), Some(y)) => {
                    x.op == y.op
                        && x.root == y.root
                        && x.root_in_comm == y.root_in_comm
                        && x.root_by_rank == y.root_by_rank
                        && x.comm_size == y.comm_size
                }
                _ => false,
            }
            && a.completes == b.completes
            && a.only_ranks == b.only_ranks
    }
}

impl Eq for ShapeOf<'_> {}

impl std::hash::Hash for ShapeOf<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let c = self.0;
        c.function.hash(h);
        c.kind.hash(h);
        c.ops.len().hash(h);
        for o in &c.ops {
            o.dir.hash(h);
            o.partner.hash(h);
            o.bytes_by_class.hash(h);
        }
        if let Some(x) = &c.collective {
            (x.op, x.root, x.root_in_comm, &x.root_by_rank, x.comm_size).hash(h);
        }
        c.completes.hash(h);
        c.only_ranks.hash(h);
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Symbol {
    Leaf(u32),
    Loop(Vec<u32>),
}

/// An occurrence during folding: a record, or a loop with all its iterations.
#[derive(Clone)]
pub(super) enum Item {
    Leaf(usize),
    Loop(Vec<Vec<Item>>),
}

/// Each record's shape ([`LogicalCall::shape`]) as a number, in order of first occurrence;
/// shapes are compared without being built.
pub(super) fn shape_ids(records: &[Record]) -> Vec<u32> {
    let mut shapes: FastMap<ShapeOf, u32> = FastMap::default();
    records
        .iter()
        .map(|r| {
            let next = shapes.len() as u32;
            *shapes.entry(ShapeOf(&r.call)).or_insert(next)
        })
        .collect()
}

/// The records' symbols and items before any folding (one leaf per record).
pub(super) fn leaf_sequence(shapes: &[u32], table: &mut SymbolTable) -> (Vec<u32>, Vec<Item>) {
    let mut syms: Vec<u32> = Vec::with_capacity(shapes.len());
    for &shape in shapes {
        let next = table.len() as u32;
        syms.push(*table.entry(Symbol::Leaf(shape)).or_insert(next));
    }
    (syms, (0..shapes.len()).map(Item::Leaf).collect())
}

/// Fold tandem repeats of `syms` (and `items` alongside) until none is left. With `varying`,
/// each pass first makes the inline bodies of known loops loops of one iteration
/// ([`promote_inline_bodies`]) and postpones a run while a shorter one starts anywhere inside
/// it ([`plan_pass_with`]); returns whether `varying` promoted anything.
pub(super) fn fold(syms: &mut Vec<u32>, items: &mut Vec<Item>, table: &mut SymbolTable, varying: bool) -> bool {
    let mut promoted = false;
    let intern = |s: Symbol, table: &mut SymbolTable| {
        let next = table.len() as u32;
        *table.entry(s).or_insert(next)
    };
    loop {
        if varying && promote_inline_bodies(syms, items, table) {
            promoted = true;
        }
        let plan = plan_pass_with(syms, varying);
        if plan.is_empty() {
            break;
        }
        let mut next_syms = Vec::with_capacity(syms.len());
        let mut next_items = Vec::with_capacity(items.len());
        let mut it = std::mem::take(items).into_iter();
        let mut pos = 0usize;
        for (start, period, count) in plan {
            while pos < start {
                next_items.push(it.next().expect("plan within the sequence"));
                next_syms.push(syms[pos]);
                pos += 1;
            }
            let body = syms[start..start + period].to_vec();
            let iterations: Vec<Vec<Item>> = (0..count).map(|_| it.by_ref().take(period).collect()).collect();
            next_syms.push(intern(Symbol::Loop(body), table));
            next_items.push(Item::Loop(iterations));
            pos += period * count;
        }
        next_items.extend(it);
        next_syms.extend_from_slice(&syms[pos..]);
        *syms = next_syms;
        *items = next_items;
    }
    promoted
}

/// Replace every inline copy of a known loop's body in `syms` (outside that loop) by a loop of
/// that body run once, longest body first, left to right; whether any was replaced.
pub(super) fn promote_inline_bodies(syms: &mut Vec<u32>, items: &mut Vec<Item>, table: &SymbolTable) -> bool {
    // Loop bodies by first symbol, longest first.
    let mut bodies: HashMap<u32, Vec<(&[u32], u32)>> = HashMap::new();
    for (s, &id) in table {
        if let Symbol::Loop(body) = s {
            if let Some(&first) = body.first() {
                bodies.entry(first).or_default().push((body.as_slice(), id));
            }
        }
    }
    for v in bodies.values_mut() {
        v.sort_unstable_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.1.cmp(&b.1)));
    }
    let n = syms.len();
    let mut work = 0u64;
    let mut hits: Vec<(usize, usize, u32)> = Vec::new();
    let mut i = 0;
    while i < n {
        let found = bodies.get(&syms[i]).and_then(|cands| {
            cands.iter().find(|(body, _)| {
                work += body.len().min(n - i) as u64;
                work <= PASS_WORK && i + body.len() <= n && syms[i..i + body.len()] == **body
            })
        });
        match found {
            Some(&(body, id)) => {
                hits.push((i, body.len(), id));
                i += body.len();
            }
            None => i += 1,
        }
    }
    if hits.is_empty() {
        return false;
    }
    let mut next_syms = Vec::with_capacity(n);
    let mut next_items = Vec::with_capacity(n);
    let mut it = std::mem::take(items).into_iter();
    let mut pos = 0;
    for (start, len, id) in hits {
        while pos < start {
            next_items.push(it.next().expect("hit within the sequence"));
            next_syms.push(syms[pos]);
            pos += 1;
        }
        let iteration: Vec<Item> = it.by_ref().take(len).collect();
        pos += len;
        // Right after a loop of the same body: one more iteration of it.
        if next_syms.last() == Some(&id) {
            if let Some(Item::Loop(its)) = next_items.last_mut() {
                its.push(iteration);
                continue;
            }
        }
        next_items.push(Item::Loop(vec![iteration]));
        next_syms.push(id);
    }
    next_items.extend(it);
    next_syms.extend_from_slice(&syms[pos..]);
    *syms = next_syms;
    *items = next_items;
    true
}

/// Polynomial hashes of every slice of a symbol sequence in O(1) after O(n) set-up: equal
/// slices have equal hashes (unequal ones collide with probability about n/2^64, so a caller
/// compares the symbols before it relies on an equality).
pub(super) struct SliceHashes {
    prefix: Vec<u64>,
    power: Vec<u64>,
}

impl SliceHashes {
    const BASE: u64 = 0x9E37_79B9_7F4A_7C15 | 1;

    pub(super) fn of(syms: &[u32]) -> Self {
        let n = syms.len();
        let mut prefix = vec![0u64; n + 1];
        let mut power = vec![1u64; n + 1];
        for (k, &x) in syms.iter().enumerate() {
            prefix[k + 1] = prefix[k].wrapping_mul(Self::BASE).wrapping_add(x as u64 + 1);
            power[k + 1] = power[k].wrapping_mul(Self::BASE);
        }
        SliceHashes { prefix, power }
    }

    /// The hash of `syms[l..r]`.
    pub(super) fn of_slice(&self, l: usize, r: usize) -> u64 {
        self.prefix[r].wrapping_sub(self.prefix[l].wrapping_mul(self.power[r - l]))
    }
}

/// Runs to fold in one pass: `(start, period, copies)`, increasing and disjoint.
#[cfg(test)]
pub(super) fn plan_pass(s: &[u32]) -> Vec<(usize, usize, usize)> {
    plan_pass_with(s, false)
}

/// [`plan_pass`]; `strict` postpones a run while a shorter repeat starts anywhere inside it
/// (not only inside its first copy), so that `B A X Y B A X Y X Y` folds `[X Y]^2` first.
pub(super) fn plan_pass_with(s: &[u32], strict: bool) -> Vec<(usize, usize, usize)> {
    let n = s.len();
    let mut next_same = vec![usize::MAX; n];
    let mut last: FastMap<u32, usize> = FastMap::default();
    for i in (0..n).rev() {
        if let Some(j) = last.insert(s[i], i) {
            next_same[i] = j;
        }
    }
    // Two copies are compared by their polynomial hashes (O(1) a candidate, where comparing
    // symbols cost the length of their common prefix: long near-repeats, CP2K's, made that most
    // of the folding); a run is compared symbol by symbol before it is folded.
    let hashes = SliceHashes::of(s);
    let hash = |l: usize, r: usize| hashes.of_slice(l, r);
    // Smallest period found at each position.
    let mut work = 0u64;
    let best: Vec<usize> = (0..n)
        .map(|i| {
            let mut j = next_same[i];
            for _ in 0..CANDIDATES {
                if j == usize::MAX || work > PASS_WORK {
                    break;
                }
                let p = j - i;
                if p > MAX_PERIOD || i + 2 * p > n {
                    break;
                }
                work += 1;
                if hash(i, i + p) == hash(i + p, i + 2 * p) {
                    return p;
                }
                j = next_same[j];
            }
            usize::MAX
        })
        .collect();
    let mut plan = Vec::new();
    let mut i = 0;
    while i < n {
        let p = best[i];
        // Inner loops first: a shorter repeat lying inside the first copy folds in this pass,
        // the outer one in a later pass (otherwise `A X X A X X` would fold as `[A X X]^2`
        // before `[X]^2`, and the nesting would depend on the iteration count).
        let blocked = p != usize::MAX && (i + 1..i + p).any(|j| best[j] < p && j + 2 * best[j] <= i + p);
        if p == usize::MAX || blocked || s[i..i + p] != s[i + p..i + 2 * p] {
            i += 1;
            continue;
        }
        let mut k = 2;
        while i + (k + 1) * p <= n && s[i + k * p..i + (k + 1) * p] == s[i..i + p] {
            k += 1;
        }
        if strict && (i + 1..i + k * p).any(|j| best[j] < p) {
            i += 1;
            continue;
        }
        plan.push((i, p, k));
        i += k * p;
    }
    plan
}
