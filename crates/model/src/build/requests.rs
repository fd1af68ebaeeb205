//! Open non-blocking requests: posted, not completed yet.
//!
//! A post (`MPI_Isend`, `MPI_Irecv`, the start of a persistent request) opens a request under
//! the handle the program got; a completion (`MPI_Wait*`, `MPI_Test*`) names the handle and
//! closes it, and learns which operation (a row of the rank's [`P2p`](crate::P2p) table, or
//! whatever value the reader keeps) it completes.

use std::collections::HashMap;
use std::hash::Hash;

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// A request handle as a format records it (DUMPI's `int`, the text format's and OTF2's
/// 64-bit ids, a CSV's integer column).
pub trait RequestKey: Copy + Eq + Hash {
    /// The bits that pick the handle's slot in a [`RequestTable`] (its low bits).
    fn slot_bits(self) -> usize;
}

impl RequestKey for i32 {
    #[inline(always)]
    fn slot_bits(self) -> usize {
        self as u32 as usize
    }
}

impl RequestKey for u64 {
    #[inline(always)]
    fn slot_bits(self) -> usize {
        self as usize
    }
}

impl RequestKey for i128 {
    #[inline(always)]
    fn slot_bits(self) -> usize {
        self as u64 as usize
    }
}

/// Slots a table without a size gets at its first request.
const FIRST_SLOTS: usize = 16;
/// A table grows (doubling its slots) while more requests than slots are in its map, up to
/// this many slots.
const MAX_GROWN_SLOTS: usize = 1 << 16;

/// The open requests of one rank, one per handle: handle → operation index.
///
/// Handles are small integers or addresses, reused soon after completion, and the few open at
/// once have distinct low bits: a direct-mapped table of slots indexed by the handle's low bits
/// serves nearly every look-up with one load and one compare, and a map takes the handles whose
/// slot another open request holds (a request never completed, handles far apart). A handle is
/// in at most one of the two. A table grows its slots while its map holds more requests than
/// it has slots, so a rank that keeps many requests open is not served by the map alone.
#[derive(Debug, Clone)]
pub struct RequestTable<K> {
    /// (handle, operation index + 1) by `handle & (slots.len() - 1)`; 0 = free slot.
    slots: Vec<(K, u32)>,
    sparse: FastMap<K, usize>,
    len: usize,
}

impl<K: RequestKey + Default> Default for RequestTable<K> {
    fn default() -> Self {
        RequestTable {
            slots: Vec::new(),
            sparse: FastMap::default(),
            len: 0,
        }
    }
}

impl<K: RequestKey + Default> RequestTable<K> {
    /// A table of `n` slots rounded up to a power of two (sized at the first request when `n`
    /// is 0), for a reader that knows how many requests a rank may keep open.
    pub fn with_slots(n: usize) -> RequestTable<K> {
        RequestTable {
            slots: if n == 0 {
                Vec::new()
            } else {
                vec![(K::default(), 0); n.next_power_of_two()]
            },
            ..RequestTable::default()
        }
    }

    /// The slot of `request`, if the table has slots.
    #[inline(always)]
    fn slot(&mut self, request: K) -> Option<&mut (K, u32)> {
        let mask = self.slots.len().wrapping_sub(1);
        self.slots.get_mut(request.slot_bits() & mask)
    }

    /// Open `request` as operation `op`: the operation it was open as before, if it was (the
    /// handle then completes `op` instead).
    #[inline]
    pub fn insert(&mut self, request: K, op: usize) -> Option<usize> {
        if self.slots.is_empty() || (self.sparse.len() >= self.slots.len() && self.slots.len() < MAX_GROWN_SLOTS) {
            self.grow();
        }
        let value = u32::try_from(op + 1).ok();
        let in_sparse = !self.sparse.is_empty();
        let slot = self.slot(request).expect("the table has slots");
        let before = match value {
            Some(v) if slot.1 != 0 && slot.0 == request => Some(std::mem::replace(&mut slot.1, v) as usize - 1),
            Some(v) if slot.1 == 0 => {
                *slot = (request, v);
                match in_sparse {
                    true => self.sparse.remove(&request),
                    false => None,
                }
            }
            _ => {
                // The slot is another request's (or the index does not fit a slot).
                let in_slot =
                    (slot.1 != 0 && slot.0 == request).then(|| std::mem::replace(&mut slot.1, 0) as usize - 1);
                let in_map = self.sparse.insert(request, op);
                in_slot.or(in_map)
            }
        };
        self.len += before.is_none() as usize;
        before
    }

    /// Close `request`: the operation it was open as, or `None` when it is not open.
    #[inline]
    pub fn remove(&mut self, request: K) -> Option<usize> {
        let in_sparse = !self.sparse.is_empty();
        let found = match self.slot(request) {
            Some(slot) if slot.1 != 0 && slot.0 == request => {
                let op = slot.1 as usize - 1;
                slot.1 = 0;
                Some(op)
            }
            _ if !in_sparse => None,
            _ => self.sparse.remove(&request),
        };
        self.len -= found.is_some() as usize;
        found
    }

    /// True when `request` is open.
    #[inline]
    pub fn contains(&self, request: K) -> bool {
        let mask = self.slots.len().wrapping_sub(1);
        match self.slots.get(request.slot_bits() & mask) {
            Some(&(k, v)) if v != 0 && k == request => true,
            _ => !self.sparse.is_empty() && self.sparse.contains_key(&request),
        }
    }

    /// Number of open requests.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no request is open.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Double the slots (or make the first ones) and move the map's requests into free slots.
    #[cold]
    fn grow(&mut self) {
        let n = (2 * self.slots.len()).max(FIRST_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![(K::default(), 0); n]);
        let mut sparse = std::mem::take(&mut self.sparse);
        let mask = n - 1;
        for (k, v) in old.into_iter().filter(|e| e.1 != 0) {
            let slot = &mut self.slots[k.slot_bits() & mask];
            if slot.1 == 0 {
                *slot = (k, v);
            } else {
                sparse.insert(k, v as usize - 1);
            }
        }
        sparse.retain(|&k, op| {
            let slot = &mut self.slots[k.slot_bits() & mask];
            match u32::try_from(*op + 1) {
                Ok(v) if slot.1 == 0 => {
                    *slot = (k, v);
                    false
                }
                _ => true,
            }
        });
        self.sparse = sparse;
    }
}

/// The [`RequestTable`]s of every rank of a trace read in one pass over interleaved ranks
/// (text, Pipit CSV): rank → its open requests. Ranks get a table when they first open one.
#[derive(Debug, Clone)]
pub struct RequestsByRank<K> {
    ranks: Vec<RequestTable<K>>,
}

impl<K: RequestKey + Default> Default for RequestsByRank<K> {
    fn default() -> Self {
        RequestsByRank { ranks: Vec::new() }
    }
}

impl<K: RequestKey + Default> RequestsByRank<K> {
    /// Open `request` of rank `rank` as operation `op` ([`RequestTable::insert`]).
    #[inline]
    pub fn insert(&mut self, rank: u32, request: K, op: usize) -> Option<usize> {
        if self.ranks.len() <= rank as usize {
            self.ranks.resize_with(rank as usize + 1, RequestTable::default);
        }
        self.ranks[rank as usize].insert(request, op)
    }

    /// Close `request` of rank `rank` ([`RequestTable::remove`]).
    #[inline]
    pub fn remove(&mut self, rank: u32, request: K) -> Option<usize> {
        self.ranks.get_mut(rank as usize)?.remove(request)
    }

    /// True when `request` of rank `rank` is open.
    #[inline]
    pub fn contains(&self, rank: u32, request: K) -> bool {
        self.ranks.get(rank as usize).is_some_and(|t| t.contains(request))
    }

    /// The open requests of rank `rank`, if it ever opened one.
    pub fn rank(&self, rank: u32) -> Option<&RequestTable<K>> {
        self.ranks.get(rank as usize)
    }

    /// Ranks that have a table (one past the highest that opened a request).
    pub fn ranks_with_tables(&self) -> usize {
        self.ranks.len()
    }
}

/// Requests kept in the list of a [`LocationRequests`] before it switches to a map.
const FEW_OPEN: usize = 16;

/// Open requests of one rank whose ids are per location (thread), but which a thread may
/// complete for another: OTF2 request ids are per location, but Score-P draws them from one
/// counter per process and a thread may complete what another posted, so a completion takes
/// the request of its own location if there is one, else the earliest of the rank's.
///
/// Nearly always one open request per id: it is stored inline, and only ids open on several
/// locations at once get a list (no allocation per request on the common path).
pub struct LocationRequests<T> {
    /// While at most [`FEW_OPEN`] requests are open: (id, location, value) in posting order,
    /// searched linearly (cheaper than hashing for the handful a rank keeps open).
    few: Vec<(u64, u16, T)>,
    /// Once more were open at once, all of them by id (`few` stays empty until this empties).
    many: FastMap<u64, Open<T>>,
}

/// The requests open under one id, in posting order.
enum Open<T> {
    One(u16, T),
    Many(Vec<(u16, T)>),
}

impl<T> Open<T> {
    fn into_list(self) -> Vec<(u16, T)> {
        match self {
            Open::One(loc, v) => vec![(loc, v)],
            Open::Many(list) => list,
        }
    }
}

impl<T> Default for LocationRequests<T> {
    fn default() -> Self {
        LocationRequests {
            few: Vec::new(),
            many: FastMap::default(),
        }
    }
}

impl<T> LocationRequests<T> {
    /// Open `request` on location `loc` with `value` (after any already open under the id).
    #[inline]
    pub fn insert(&mut self, request: u64, loc: u16, value: T) {
        if self.many.is_empty() {
            if self.few.len() < FEW_OPEN {
                self.few.push((request, loc, value));
                return;
            }
            for (r, l, v) in std::mem::take(&mut self.few) {
                self.insert_many(r, l, v);
            }
        }
        self.insert_many(request, loc, value);
    }

    fn insert_many(&mut self, request: u64, loc: u16, value: T) {
        use std::collections::hash_map::Entry;
        match self.many.entry(request) {
            Entry::Vacant(e) => {
                e.insert(Open::One(loc, value));
            }
            Entry::Occupied(mut e) => {
                let open = e.get_mut();
                if let Open::Many(list) = open {
                    list.push((loc, value));
                } else {
                    let Open::One(l0, v0) = std::mem::replace(open, Open::Many(Vec::new())) else {
                        unreachable!("checked above")
                    };
                    *open = Open::Many(vec![(l0, v0), (loc, value)]);
                }
            }
        }
    }

    /// Close the request of location `loc` under this id if there is one, else the earliest.
    #[inline]
    pub fn take(&mut self, request: u64, loc: u16) -> Option<T> {
        if self.many.is_empty() {
            if self.few.is_empty() {
                return None;
            }
            let mut same_id = self.few.iter().enumerate().filter(|(_, e)| e.0 == request);
            let earliest = same_id.next()?.0;
            let i = match self.few[earliest].1 == loc {
                true => earliest,
                false => same_id.find(|(_, e)| e.1 == loc).map_or(earliest, |(i, _)| i),
            };
            return Some(self.few.remove(i).2);
        }
        if let Open::Many(list) = self.many.get_mut(&request)? {
            let i = list.iter().position(|e| e.0 == loc).unwrap_or(0);
            let (_, v) = list.remove(i);
            if !list.is_empty() {
                return Some(v);
            }
            self.many.remove(&request);
            return Some(v);
        }
        match self.many.remove(&request) {
            Some(Open::One(_, v)) => Some(v),
            _ => None,
        }
    }

    /// Number of open requests.
    pub fn len(&self) -> usize {
        self.few.len()
            + self
                .many
                .values()
                .map(|o| match o {
                    Open::One(..) => 1,
                    Open::Many(list) => list.len(),
                })
                .sum::<usize>()
    }

    /// True when no request is open.
    pub fn is_empty(&self) -> bool {
        self.few.is_empty() && self.many.is_empty()
    }

    /// Every open request with its location (the list's in posting order, then the map's in
    /// no particular order).
    pub fn into_all(self) -> Vec<(u16, T)> {
        let mut all: Vec<(u16, T)> = self.few.into_iter().map(|(_, l, v)| (l, v)).collect();
        all.extend(self.many.into_values().flat_map(Open::into_list));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a plain map, over random programs: handles drawn from a few shapes (counting
    /// up, small and reused, far apart, negative), slots from none to many.
    #[test]
    fn the_table_answers_as_a_plain_map_does() {
        for seed in 1..200u64 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let slots = [0, 1, 4, 64][seed as usize % 4];
            let mut t: RequestTable<i32> = RequestTable::with_slots(slots);
            let mut reference: HashMap<i32, usize> = HashMap::new();
            let mut counter = 0i32;
            for step in 0..2000usize {
                let handle = match rng.u64(..) % 4 {
                    0 => {
                        counter += 1;
                        counter
                    }
                    1 => (rng.u64(..) % 8) as i32,
                    2 => (rng.u64(..) as i32) & 0x7fff_0000,
                    _ => -((rng.u64(..) % 5) as i32),
                };
                let op = if rng.u64(..50) == 0 {
                    u32::MAX as usize + step
                } else {
                    step
                };
                match rng.u64(..) % 3 {
                    0 | 1 => assert_eq!(
                        t.insert(handle, op),
                        reference.insert(handle, op),
                        "seed {seed} step {step}"
                    ),
                    _ => assert_eq!(t.remove(handle), reference.remove(&handle), "seed {seed} step {step}"),
                }
                assert_eq!(t.contains(handle), reference.contains_key(&handle));
                assert_eq!(t.len(), reference.len());
            }
            let mut left: Vec<i32> = reference.keys().copied().collect();
            left.sort_unstable();
            for h in left {
                assert_eq!(t.remove(h), reference.remove(&h));
            }
            assert!(t.is_empty());
        }
    }

    #[test]
    fn many_requests_open_at_once_grow_the_slots() {
        let mut t: RequestTable<u64> = RequestTable::default();
        for id in 0..1000u64 {
            assert_eq!(t.insert(id, id as usize), None);
        }
        assert!(t.slots.len() >= 512, "{} slots", t.slots.len());
        assert!(t.sparse.len() < 1000);
        for id in (0..1000u64).rev() {
            assert_eq!(t.remove(id), Some(id as usize));
        }
        assert!(t.is_empty());
    }

    #[test]
    fn requests_of_different_ranks_under_one_id_are_distinct_and_ranks_get_tables_when_they_open_one() {
        let mut t: RequestsByRank<u64> = RequestsByRank::default();
        assert_eq!(t.remove(7, 0), None, "a rank that never opened a request");
        assert_eq!(t.insert(3, 5, 10), None);
        assert_eq!(t.insert(0, 5, 20), None);
        assert_eq!(t.ranks_with_tables(), 4);
        assert!(t.contains(3, 5) && t.contains(0, 5) && !t.contains(1, 5) && !t.contains(9, 5));
        assert_eq!(
            t.insert(3, 5, 11),
            Some(10),
            "the handle now completes the newer operation"
        );
        assert_eq!(t.remove(0, 5), Some(20));
        assert_eq!(t.remove(3, 5), Some(11));
        assert_eq!(t.remove(3, 5), None);
        assert!(t.rank(3).is_some_and(|r| r.is_empty()));
    }

    /// (From the DUMPI reader, whose table this was.) The table against a plain map on request handles as libdumpi numbers them
    /// (consecutive, completed soon or in batches), far apart (any `i32`, negative ones included),
    /// reused while still pending, and never completed, for table sizes from none to 4096 slots.
    #[test]
    fn pending_requests_table_answers_as_a_map() {
        for slots in [0usize, 1, 2, 3, 16, 4096] {
            for pattern in 0..4u64 {
                let mut rng = fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15 ^ (slots as u64) << 8 ^ pattern);
                let mut table = RequestTable::<i32>::with_slots(slots);
                let mut reference: HashMap<i32, usize> = HashMap::new();
                let mut next_handle = 0i32;
                let mut open: Vec<i32> = Vec::new();
                for op in 0..20_000usize {
                    let request = match pattern {
                        // Consecutive handles, about one in 50 never completed.
                        0 => {
                            next_handle += 1;
                            next_handle
                        }
                        // Anywhere in i32.
                        1 => rng.i32(..),
                        // A few handles, reused while pending.
                        2 => rng.i32(-12..12),
                        // Consecutive with jumps of a multiple of the table size.
                        _ => {
                            next_handle = next_handle.wrapping_add(1 + 4096 * (rng.u8(..8) == 0) as i32);
                            next_handle
                        }
                    };
                    assert_eq!(table.insert(request, op), reference.insert(request, op));
                    reference.insert(request, op);
                    open.push(request);
                    assert_eq!(
                        table.len(),
                        reference.len(),
                        "slots {slots}, pattern {pattern}, op {op}"
                    );
                    // Complete some open requests: the oldest, a random one, or a handle never posted.
                    let completions = rng.u32(..3);
                    for _ in 0..completions {
                        if open.is_empty() {
                            break;
                        }
                        let i = match rng.u8(..4) {
                            0 => rng.usize(..open.len()),
                            _ => 0,
                        };
                        // About one in 50 stays pending for ever.
                        if rng.u8(..50) == 0 {
                            open.remove(i);
                            continue;
                        }
                        let request = open.remove(i);
                        assert_eq!(
                            table.remove(request),
                            reference.remove(&request),
                            "slots {slots}, pattern {pattern}"
                        );
                        let stranger = rng.i32(..);
                        assert_eq!(table.remove(stranger), reference.remove(&stranger));
                        assert_eq!(table.len(), reference.len());
                    }
                }
                for (request, op) in reference.clone() {
                    assert_eq!(table.remove(request), Some(op), "slots {slots}, pattern {pattern}");
                }
                assert_eq!(table.len(), 0);
            }
        }
    }

    // (From the OTF2 reader, whose table this was.)
    /// The rule on a plain list: a completion takes the request of its own location under the
    /// id if there is one, else the earliest under the id.
    fn take_from_list(list: &mut Vec<(u64, u16, u32)>, request: u64, loc: u16) -> Option<u32> {
        let i = list
            .iter()
            .position(|e| e.0 == request && e.1 == loc)
            .or_else(|| list.iter().position(|e| e.0 == request))?;
        Some(list.remove(i).2)
    }

    #[test]
    fn few_and_many_open_requests_follow_the_same_rule() {
        let mut pending = LocationRequests::default();
        let mut list = Vec::new();
        let mut seed = 0x2545_f491_u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let mut most_open = 0;
        for step in 0..20_000u32 {
            // Phases with few and with many requests open; ids repeat across locations.
            let busy = (step / 2000) % 2 == 1;
            let (request, loc) = (next(if busy { 64 } else { 6 }), next(3) as u16);
            if next(100) < if busy { 60 } else { 45 } {
                pending.insert(request, loc, step);
                list.push((request, loc, step));
            } else {
                assert_eq!(
                    pending.take(request, loc),
                    take_from_list(&mut list, request, loc),
                    "step {step}"
                );
            }
            assert_eq!(pending.len(), list.len(), "step {step}");
            most_open = most_open.max(list.len());
        }
        assert!(most_open > 4 * FEW_OPEN, "the list never spilled: {most_open}");
        let mut all: Vec<(u16, u32)> = pending.into_all();
        let mut expected: Vec<(u16, u32)> = list.iter().map(|e| (e.1, e.2)).collect();
        all.sort_unstable();
        expected.sort_unstable();
        assert_eq!(all, expected);
    }
}
