//! A column of `u64` values that costs 4 bytes a row while they fit in 32 bits.
//!
//! Message sizes and call durations are almost always below 4 GiB / 4.29 s, yet a `u64` column
//! spends 8 bytes on every row. A [`Narrow`] column stores each row as a `u32`; a row that does
//! not fit (or equals the escape marker `u32::MAX`) is stored as the marker, and its value in
//! a side table of (row, value) sorted by row, found by binary search. Reading is by value
//! ([`Narrow::at`], [`Narrow::iter`]); writing by [`Narrow::push`] and [`Narrow::set`].
//! Serialised as the plain sequence of its values, as a `Vec<u64>` is.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Row value that sends the reader to the escape table.
const ESCAPE: u32 = u32::MAX;

/// A `u64` column stored as `u32` rows with an escape table (module documentation).
#[derive(Clone, Default)]
pub struct Narrow {
    rows: Vec<u32>,
    /// (row, value) of every escaped row, by row.
    wide: Vec<(u32, u64)>,
}

impl Narrow {
    /// An empty column with room for `n` rows.
    pub fn with_capacity(n: usize) -> Narrow {
        Narrow {
            rows: Vec::with_capacity(n),
            wide: Vec::new(),
        }
    }
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
            v as u64
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
        if v < ESCAPE as u64 {
            self.rows.push(v as u32);
        } else {
            self.wide.push((self.rows.len() as u32, v));
            self.rows.push(ESCAPE);
        }
    }
    /// Change row `i` (panics past the end).
    pub fn set(&mut self, i: usize, v: u64) {
        let was_escaped = self.rows[i] == ESCAPE;
        let k = self.wide.binary_search_by_key(&(i as u32), |&(r, _)| r);
        match (v < ESCAPE as u64, k) {
            (true, Ok(k)) => {
                self.wide.remove(k);
                self.rows[i] = v as u32;
            }
            (true, Err(_)) => self.rows[i] = v as u32,
            (false, Ok(k)) => self.wide[k].1 = v,
            (false, Err(k)) => {
                debug_assert!(!was_escaped);
                self.wide.insert(k, (i as u32, v));
                self.rows[i] = ESCAPE;
            }
        }
    }
    /// Room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        self.rows.reserve(n);
    }
    /// Rows in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter::new(self, 0..self.rows.len())
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
    /// The rows as a vector.
    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }
    /// Keep the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        self.rows.truncate(n);
        let keep = self.wide.partition_point(|&(r, _)| (r as usize) < n);
        self.wide.truncate(keep);
    }
    /// Remove every row.
    pub fn clear(&mut self) {
        self.rows.clear();
        self.wide.clear();
    }
    /// Keep the rows for which `keep(value)` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(u64) -> bool) {
        let kept: Narrow = self.iter().filter(|&v| keep(v)).collect();
        *self = kept;
    }
    /// Give back unused capacity.
    pub fn shrink_to_fit(&mut self) {
        self.rows.shrink_to_fit();
        self.wide.shrink_to_fit();
    }
    /// Number of rows stored in the escape table.
    pub fn escaped_rows(&self) -> usize {
        self.wide.len()
    }
    /// Heap bytes in use and allocated (rows and escape table).
    pub fn heap_bytes(&self) -> crate::Bytes {
        crate::Bytes::of(&self.rows) + crate::Bytes::of(&self.wide)
    }
}

/// The rows of a [`Narrow`] column, by value.
pub type Iter<'a> = crate::column::Rows<'a, Narrow>;

crate::column::u64_column_impls!(Narrow);

impl Extend<u64> for Narrow {
    fn extend<I: IntoIterator<Item = u64>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.rows.reserve(iter.size_hint().0);
        for v in iter {
            self.push(v);
        }
    }
}

impl From<Vec<u64>> for Narrow {
    fn from(v: Vec<u64>) -> Self {
        v.into_iter().collect()
    }
}

impl PartialEq for Narrow {
    fn eq(&self, o: &Self) -> bool {
        self.len() == o.len() && self.iter().eq(o.iter())
    }
}

impl PartialEq<Vec<u64>> for Narrow {
    fn eq(&self, o: &Vec<u64>) -> bool {
        self.len() == o.len() && self.iter().eq(o.iter().copied())
    }
}

impl PartialEq<[u64]> for Narrow {
    fn eq(&self, o: &[u64]) -> bool {
        self.len() == o.len() && self.iter().eq(o.iter().copied())
    }
}

impl std::hash::Hash for Narrow {
    /// As the `Vec<u64>` of the values hashes.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_usize(self.len());
        self.iter().for_each(|v| v.hash(h));
    }
}

impl fmt::Debug for Narrow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Narrow {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Narrow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<u64>::deserialize(d).map(Narrow::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values on both sides of the escape marker, checked against a plain vector.
    #[test]
    fn reads_back_every_value_written_small_or_large() {
        let values = [
            0,
            1,
            u32::MAX as u64 - 1,
            u32::MAX as u64,
            u32::MAX as u64 + 1,
            u64::MAX,
            7,
        ];
        let c: Narrow = values.iter().collect();
        assert_eq!(c.to_vec(), values.to_vec());
        assert_eq!(c.escaped_rows(), 3);
        assert_eq!(
            c.iter().rev().collect::<Vec<_>>(),
            values.iter().rev().copied().collect::<Vec<_>>()
        );
        assert_eq!((c.get(6), c.get(7), c.last()), (Some(7), None, Some(7)));
        assert_eq!(c.heap_bytes().used, 7 * 4 + 3 * 16);
    }

    #[test]
    fn set_moves_rows_in_and_out_of_the_escape_table() {
        let mut plain = vec![5u64, 6, 7, 8];
        let mut c = Narrow::from(plain.clone());
        for (i, v) in [
            (2, 1u64 << 40),
            (0, u64::MAX),
            (2, 3),
            (3, 1 << 33),
            (0, 9),
            (3, 1 << 34),
        ] {
            c.set(i, v);
            plain[i] = v;
            assert_eq!(c.to_vec(), plain);
        }
        assert_eq!(c.escaped_rows(), 1);
        c.truncate(3);
        assert_eq!((c.to_vec(), c.escaped_rows()), (vec![9, 6, 3], 0));
        c.retain(|v| v != 6);
        assert_eq!(c, vec![9, 3]);
    }

    #[test]
    fn serialises_as_the_plain_values() {
        let c: Narrow = [1u64, 1 << 40, 3].iter().collect();
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, format!("[1,{},3]", 1u64 << 40));
        let back: Narrow = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
    }
}
