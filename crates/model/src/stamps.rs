//! A column of timestamps that costs about 4 bytes a row: a `u64` base per block of 64 rows and
//! a `u32` offset from it per row.
//!
//! A rank's entry times rise with its calls, so the 64 calls of a block almost always lie
//! within 4.29 s of the block's first one. A row that does not (a long computation inside the
//! block, a clock that steps back) is stored as the escape marker `u32::MAX`, its value in a
//! side table of (row, value) sorted by row. Reading is by value and O(1) ([`Stamps::at`]);
//! the arithmetic wraps, so a reader that stores times minus a base with wrapping subtraction
//! and adds the base back later ([`Stamps::wrapping_add_all`]) gets its times exactly.
//! Serialised as the plain sequence of its values, as a `Vec<u64>` is.
//!
//! `Calls::enter` is stored this way (about 4 bytes a call instead of 8; docs/large-traces.md
//! "Model size").

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Row value that sends the reader to the escape table.
const ESCAPE: u32 = u32::MAX;
/// Rows per block: `1 << BLOCK_SHIFT`.
const BLOCK_SHIFT: usize = 6;

/// Timestamps stored as block bases and `u32` offsets (module documentation).
#[derive(Clone, Default)]
pub struct Stamps {
    /// The first value of each block of 64 rows.
    bases: Vec<u64>,
    rows: Vec<u32>,
    /// (row, value) of every escaped row, by row.
    wide: Vec<(u32, u64)>,
}

impl Stamps {
    /// Number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.rows.len()
    }
    /// True when there is no row.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    /// Row `i` (panics past the end, as indexing a `Vec` does).
    #[inline]
    pub fn at(&self, i: usize) -> u64 {
        let v = self.rows[i];
        if v == ESCAPE {
            self.escaped(i)
        } else {
            self.bases[i >> BLOCK_SHIFT].wrapping_add(v as u64)
        }
    }
    /// Row `i`, if there is one.
    #[inline]
    pub fn get(&self, i: usize) -> Option<u64> {
        (i < self.rows.len()).then(|| self.at(i))
    }
    /// The first row.
    pub fn first(&self) -> Option<u64> {
        self.get(0)
    }
    /// The last row.
    pub fn last(&self) -> Option<u64> {
        self.len().checked_sub(1).map(|i| self.at(i))
    }
    #[cold]
    fn escaped(&self, i: usize) -> u64 {
        let k = self
            .wide
            .binary_search_by_key(&(i as u32), |&(r, _)| r)
            .expect("an escaped row is in the escape table");
        self.wide[k].1
    }
    /// Append a row.
    #[inline]
    pub fn push(&mut self, v: u64) {
        let i = self.rows.len();
        if i & ((1 << BLOCK_SHIFT) - 1) == 0 {
            self.bases.push(v);
        }
        let d = v.wrapping_sub(self.bases[i >> BLOCK_SHIFT]);
        if d < ESCAPE as u64 {
            self.rows.push(d as u32);
        } else {
            self.wide.push((i as u32, v));
            self.rows.push(ESCAPE);
        }
    }
    /// Change row `i` (panics past the end).
    pub fn set(&mut self, i: usize, v: u64) {
        let d = v.wrapping_sub(self.bases[i >> BLOCK_SHIFT]);
        let k = self.wide.binary_search_by_key(&(i as u32), |&(r, _)| r);
        match (d < ESCAPE as u64, k) {
            (true, Ok(k)) => {
                self.wide.remove(k);
                self.rows[i] = d as u32;
            }
            (true, Err(_)) => self.rows[i] = d as u32,
            (false, Ok(k)) => self.wide[k].1 = v,
            (false, Err(k)) => {
                self.wide.insert(k, (i as u32, v));
                self.rows[i] = ESCAPE;
            }
        }
    }
    /// Add `by` to every row, wrapping (a reader's time base put back, a clock shift).
    pub fn wrapping_add_all(&mut self, by: u64) {
        self.bases.iter_mut().for_each(|b| *b = b.wrapping_add(by));
        self.wide.iter_mut().for_each(|(_, v)| *v = v.wrapping_add(by));
    }
    /// Room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        self.rows.reserve(n);
        self.bases.reserve(n >> BLOCK_SHIFT);
    }
    /// Rows in order.
    pub fn iter(&self) -> Iter<'_> {
        self.range(0..self.len())
    }
    /// Rows `range` in order (panics when it reaches past the end, as slicing a `Vec` does).
    pub fn range(&self, range: std::ops::Range<usize>) -> Iter<'_> {
        assert!(
            range.start <= range.end && range.end <= self.rows.len(),
            "rows {range:?} of a column of {}",
            self.rows.len()
        );
        Iter::new(self, range)
    }
    /// The index of the first row for which `pred` is false, the rows being partitioned by it
    /// (as `slice::partition_point`).
    pub fn partition_point(&self, mut pred: impl FnMut(u64) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.at(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
    /// The rows as a vector.
    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }
    /// Keep the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        self.rows.truncate(n);
        self.bases.truncate(n.div_ceil(1 << BLOCK_SHIFT));
        let keep = self.wide.partition_point(|&(r, _)| (r as usize) < n);
        self.wide.truncate(keep);
    }
    /// Remove every row.
    pub fn clear(&mut self) {
        self.rows.clear();
        self.bases.clear();
        self.wide.clear();
    }
    /// Keep the rows for which `keep(value)` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(u64) -> bool) {
        let kept: Stamps = self.iter().filter(|&v| keep(v)).collect();
        *self = kept;
    }
    /// Remove row `i` and return it.
    pub fn remove(&mut self, i: usize) -> u64 {
        let v = self.at(i);
        let mut k = 0;
        self.retain(|_| {
            k += 1;
            k - 1 != i
        });
        v
    }
    /// Give back unused capacity.
    pub fn shrink_to_fit(&mut self) {
        self.rows.shrink_to_fit();
        self.bases.shrink_to_fit();
        self.wide.shrink_to_fit();
    }
    /// Number of rows stored in the escape table.
    pub fn escaped_rows(&self) -> usize {
        self.wide.len()
    }
    /// Heap bytes in use and allocated (bases, rows and escape table).
    pub fn heap_bytes(&self) -> crate::Bytes {
        crate::Bytes::of(&self.bases) + crate::Bytes::of(&self.rows) + crate::Bytes::of(&self.wide)
    }
}

/// The rows of a [`Stamps`] column, by value.
pub type Iter<'a> = crate::column::Rows<'a, Stamps>;

crate::column::u64_column_impls!(Stamps);

impl Extend<u64> for Stamps {
    fn extend<I: IntoIterator<Item = u64>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.reserve(iter.size_hint().0);
        for v in iter {
            self.push(v);
        }
    }
}

impl From<Vec<u64>> for Stamps {
    fn from(v: Vec<u64>) -> Self {
        v.into_iter().collect()
    }
}

impl PartialEq for Stamps {
    fn eq(&self, o: &Self) -> bool {
        self.len() == o.len() && self.iter().eq(o.iter())
    }
}

impl PartialEq<Vec<u64>> for Stamps {
    fn eq(&self, o: &Vec<u64>) -> bool {
        self.len() == o.len() && self.iter().eq(o.iter().copied())
    }
}

impl std::hash::Hash for Stamps {
    /// As the `Vec<u64>` of the values hashes.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_usize(self.len());
        self.iter().for_each(|v| v.hash(h));
    }
}

impl fmt::Debug for Stamps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Stamps {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Stamps {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<u64>::deserialize(d).map(Stamps::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rising times with jumps past 4.29 s inside blocks, a step back and values near the top
    /// of the range, checked against a plain vector through every operation.
    fn sample() -> Vec<u64> {
        let mut t = 1_000u64;
        (0..300u64)
            .map(|i| {
                t += match i {
                    70 => 5_000_000_000,
                    130 => 1 << 40,
                    _ => 1_000 + i,
                };
                match i {
                    200 => t - 50_000,
                    250 => u64::MAX - i,
                    _ => t,
                }
            })
            .collect()
    }

    #[test]
    fn reads_back_every_value_pushed() {
        let v = sample();
        let c: Stamps = v.iter().collect();
        assert_eq!(c.to_vec(), v);
        assert!(c.escaped_rows() >= 3, "{} escaped", c.escaped_rows());
        assert_eq!(
            c.iter().rev().collect::<Vec<_>>(),
            v.iter().rev().copied().collect::<Vec<_>>()
        );
        assert_eq!(c.range(60..140).collect::<Vec<_>>(), v[60..140].to_vec());
        assert_eq!((c.first(), c.last(), c.get(300)), (Some(v[0]), Some(v[299]), None));
        let rows = 300 * 4 + 300u64.div_ceil(64) * 8 + c.escaped_rows() as u64 * 16;
        assert_eq!(c.heap_bytes().used, rows);
    }

    #[test]
    fn set_shift_truncate_and_remove_agree_with_a_vector() {
        let mut v = sample();
        let mut c = Stamps::from(v.clone());
        for (i, x) in [(3, 1u64 << 50), (3, v[3]), (70, 7), (299, 0), (64, v[64] + 1)] {
            c.set(i, x);
            v[i] = x;
            assert_eq!(c.to_vec(), v);
        }
        c.wrapping_add_all(u64::MAX - 10);
        v.iter_mut().for_each(|x| *x = x.wrapping_add(u64::MAX - 10));
        assert_eq!(c.to_vec(), v);
        assert_eq!(c.remove(100), v.remove(100));
        assert_eq!(c.to_vec(), v);
        c.truncate(129);
        v.truncate(129);
        assert_eq!(c, v);
        c.push(1);
        v.push(1);
        assert_eq!(c, v);
    }

    #[test]
    fn partition_point_is_the_slices() {
        let v: Vec<u64> = (0..500u64).map(|i| i * i * 1000).collect();
        let c = Stamps::from(v.clone());
        for t in [0, 1, 999, 1000, 4_000_000, 249_001_000, u64::MAX] {
            assert_eq!(c.partition_point(|x| x < t), v.partition_point(|&x| x < t), "{t}");
        }
    }

    #[test]
    fn serialises_as_the_plain_values() {
        let c: Stamps = [1u64, 1 << 40, 3].iter().collect();
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, format!("[1,{},3]", 1u64 << 40));
        assert_eq!(serde_json::from_str::<Stamps>(&json).unwrap(), c);
    }
}
