//! Message sizes of a rank's point-to-point operations, read by value.
//!
//! A rank sends and receives few distinct sizes (a halo exchange repeats the same few), so the
//! column is a [`Dict`] of `u64`: about 1 byte an operation where a plain `u32` took 4. It
//! reads as the `u64` columns do ([`Sizes::at`], [`Sizes::iter`] and [`Sizes::range`] by
//! value), as `P2p::bytes` did when it was a [`Narrow`](crate::Narrow) column; a rank with more
//! than 65,536 distinct sizes stores them whole, 8 bytes each. Serialised as the plain sequence
//! of its values, as a `Vec<u64>` is.

use crate::dict::Dict;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Message sizes in bytes, one row per operation (module documentation).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Sizes(Dict<u64>);

impl Sizes {
    /// Number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// True when there is no row.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Row `i` (panics past the end, as indexing a `Vec` does).
    #[inline]
    pub fn at(&self, i: usize) -> u64 {
        self.0[i]
    }
    /// Row `i`, if there is one.
    #[inline]
    pub fn get(&self, i: usize) -> Option<u64> {
        self.0.get(i).copied()
    }
    /// The first row.
    pub fn first(&self) -> Option<u64> {
        self.get(0)
    }
    /// The last row.
    pub fn last(&self) -> Option<u64> {
        self.0.last().copied()
    }
    /// Append a row.
    #[inline]
    pub fn push(&mut self, v: u64) {
        self.0.push(v);
    }
    /// Change row `i` (panics past the end).
    pub fn set(&mut self, i: usize, v: u64) {
        self.0.set(i, v);
    }
    /// Room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        self.0.reserve(n);
    }
    /// Rows in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter::new(self, 0..self.len())
    }
    /// Rows `range` in order (panics when it reaches past the end, as slicing a `Vec` does).
    pub fn range(&self, range: std::ops::Range<usize>) -> Iter<'_> {
        assert!(
            range.start <= range.end && range.end <= self.len(),
            "rows {range:?} of a column of {}",
            self.len()
        );
        Iter::new(self, range)
    }
    /// The rows as a vector.
    pub fn to_vec(&self) -> Vec<u64> {
        self.0.to_vec()
    }
    /// Keep the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        self.0.truncate(n);
    }
    /// Remove every row.
    pub fn clear(&mut self) {
        self.0.clear();
    }
    /// Keep the rows for which `keep(value)` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(u64) -> bool) {
        self.0.retain(|&v| keep(v));
    }
    /// Keep row `i` where `keep[i]` is true (rows past the end of `keep` stay).
    pub fn retain_mask(&mut self, keep: &[bool]) {
        self.0.retain_mask(keep);
    }
    /// The rows where `keep[i]` is true (rows past the end of `keep` are dropped).
    pub fn select_mask(&self, keep: &[bool]) -> Sizes {
        Sizes(self.0.select_mask(keep))
    }
    /// Give back unused capacity.
    pub fn shrink_to_fit(&mut self) {
        self.0.shrink_to_fit();
    }
    /// Number of distinct sizes in the rank's table (0 once they are stored whole).
    pub fn distinct(&self) -> usize {
        self.0.distinct()
    }
    /// Heap bytes in use and allocated (codes and table of sizes).
    pub fn heap_bytes(&self) -> crate::Bytes {
        self.0.heap_bytes()
    }
}

/// The rows of a [`Sizes`] column, by value.
pub type Iter<'a> = crate::column::Rows<'a, Sizes>;

crate::column::u64_column_impls!(Sizes);

impl Extend<u64> for Sizes {
    fn extend<I: IntoIterator<Item = u64>>(&mut self, iter: I) {
        self.0.extend(iter);
    }
}

impl From<Vec<u64>> for Sizes {
    fn from(v: Vec<u64>) -> Self {
        Sizes(Dict::from(v))
    }
}

impl PartialEq<Vec<u64>> for Sizes {
    fn eq(&self, o: &Vec<u64>) -> bool {
        self.0 == *o
    }
}

impl PartialEq<[u64]> for Sizes {
    fn eq(&self, o: &[u64]) -> bool {
        self.0 == *o
    }
}

impl std::hash::Hash for Sizes {
    /// As the `Vec<u64>` of the values hashes.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_usize(self.len());
        self.iter().for_each(|v| v.hash(h));
    }
}

impl fmt::Debug for Sizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for Sizes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Sizes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Dict::deserialize(d).map(Sizes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sizes on both sides of 32 bits, repeated, checked against a plain vector.
    #[test]
    fn reads_back_every_size_by_value() {
        let values = [0, 8, u32::MAX as u64, 8, 1 << 40, u64::MAX, 0];
        let mut c: Sizes = values.iter().collect();
        let mut plain = values.to_vec();
        assert_eq!(c.to_vec(), plain);
        assert_eq!((c.distinct(), c.heap_bytes().used), (5, 7 + 5 * 8));
        assert!(c.iter().rev().eq(plain.iter().rev().copied()));
        assert!(c.range(2..5).eq(plain[2..5].iter().copied()));
        assert_eq!(
            (c.get(6), c.get(7), c.first(), c.last()),
            (Some(0), None, Some(0), Some(0))
        );
        c.set(1, 5);
        plain[1] = 5;
        c.retain(|v| v != 8);
        plain.retain(|&v| v != 8);
        assert_eq!(c, plain);
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, serde_json::to_string(&plain).unwrap());
        assert_eq!(serde_json::from_str::<Sizes>(&json).unwrap(), c);
    }
}
