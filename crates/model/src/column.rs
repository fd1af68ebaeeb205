//! Columns that cost nothing while every row holds the same value.
//!
//! Most traces record no call paths and one thread per rank, so [`Calls::callpath`] is
//! [`NO_CALLPATH`] and [`Calls::location`] 0 on every row. A [`Sparse`] column stores only its
//! length while every row holds its fill value, and its rows from the first row that differs.
//! It reads like a `Vec` (indexing, `iter`, `len`, `first`...); writing through `iter_mut` or
//! an index stores the rows, and [`Sparse::compact`] (called by
//! [`RankTrace::shrink_to_fit`](crate::RankTrace::shrink_to_fit)) drops them again when they
//! all hold the fill value. Serialised as the plain sequence of its rows, as a `Vec` is.
//!
//! [`Calls::callpath`]: crate::Calls::callpath
//! [`Calls::location`]: crate::Calls::location
//! [`NO_CALLPATH`]: crate::NO_CALLPATH

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A value a [`Sparse`] column can hold, made from its `u32` fill constant.
pub trait FillValue: Copy + PartialEq + fmt::Debug {
    /// The value of the fill constant `v`.
    fn from_fill(v: u32) -> Self;
}

impl FillValue for u16 {
    fn from_fill(v: u32) -> u16 {
        v as u16
    }
}

impl FillValue for u32 {
    fn from_fill(v: u32) -> u32 {
        v
    }
}

/// A column of `len` rows, each `FILL` unless stored (module documentation).
#[derive(Clone)]
pub struct Sparse<T: FillValue, const FILL: u32> {
    len: usize,
    /// Empty while every row is the fill value; else every row.
    rows: Vec<T>,
    /// The fill value, for indexing to return a reference to.
    fill: T,
}

impl<T: FillValue, const FILL: u32> Default for Sparse<T, FILL> {
    fn default() -> Self {
        Sparse {
            len: 0,
            rows: Vec::new(),
            fill: T::from_fill(FILL),
        }
    }
}

impl<T: FillValue, const FILL: u32> Sparse<T, FILL> {
    /// Number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when there is no row.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The value every row holds unless stored.
    #[inline]
    pub fn fill(&self) -> T {
        self.fill
    }
    /// True when the rows are stored (some row is, or was, not the fill value).
    #[inline]
    pub fn is_stored(&self) -> bool {
        !self.rows.is_empty()
    }
    /// Row `i`, if there is one.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            None
        } else if self.rows.is_empty() {
            Some(&self.fill)
        } else {
            self.rows.get(i)
        }
    }
    /// The first row.
    pub fn first(&self) -> Option<&T> {
        self.get(0)
    }
    /// The last row.
    pub fn last(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }
    /// Append a row.
    #[inline]
    pub fn push(&mut self, v: T) {
        if !self.rows.is_empty() {
            self.rows.push(v);
        } else if v != self.fill {
            self.rows = vec![self.fill; self.len + 1];
            self.rows[self.len] = v;
        }
        self.len += 1;
    }
    /// Room for `n` more stored rows (nothing while no row is stored).
    pub fn reserve(&mut self, n: usize) {
        if !self.rows.is_empty() {
            self.rows.reserve(n);
        }
    }
    /// Rows in order.
    pub fn iter(&self) -> Iter<'_, T> {
        if self.rows.is_empty() {
            Iter::Fill(&self.fill, self.len)
        } else {
            Iter::Stored(self.rows.iter())
        }
    }
    /// Rows in order, to change (stores the rows).
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.store();
        self.rows.iter_mut()
    }
    /// True when some row holds `v`.
    pub fn contains(&self, v: &T) -> bool {
        self.iter().any(|x| x == v)
    }
    /// Remove row `i` and return it.
    pub fn remove(&mut self, i: usize) -> T {
        assert!(i < self.len, "row {i} of a column of {} rows", self.len);
        self.len -= 1;
        if self.rows.is_empty() {
            self.fill
        } else {
            self.rows.remove(i)
        }
    }
    /// Keep the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n);
        self.rows.truncate(n);
    }
    /// Remove every row.
    pub fn clear(&mut self) {
        self.len = 0;
        self.rows.clear();
    }
    /// Keep row `i` where `keep(row)` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        if self.rows.is_empty() {
            let fill = self.fill;
            self.len = (0..self.len).filter(|_| keep(&fill)).count();
        } else {
            self.rows.retain(keep);
            self.len = self.rows.len();
        }
    }
    /// The rows as a vector.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().copied().collect()
    }
    /// Give back unused capacity, and the rows themselves when they all hold the fill value.
    pub fn shrink_to_fit(&mut self) {
        self.compact();
        self.rows.shrink_to_fit();
    }
    /// Drop the stored rows if they all hold the fill value.
    pub fn compact(&mut self) {
        if !self.rows.is_empty() && self.rows.iter().all(|&v| v == self.fill) {
            self.rows = Vec::new();
        }
    }
    /// The stored rows, to change in place (empty while every row is the fill value: a change
    /// that keeps the fill value as it is needs no more).
    pub fn stored_mut(&mut self) -> &mut [T] {
        &mut self.rows
    }
    /// The stored rows (empty while every row is the fill value), for their heap size.
    pub fn stored(&self) -> &Vec<T> {
        &self.rows
    }
    fn store(&mut self) {
        if self.rows.is_empty() && self.len > 0 {
            self.rows = vec![self.fill; self.len];
        }
    }
}

impl<T: FillValue, const FILL: u32> std::ops::Index<usize> for Sparse<T, FILL> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        assert!(i < self.len, "row {i} of a column of {} rows", self.len);
        if self.rows.is_empty() {
            &self.fill
        } else {
            &self.rows[i]
        }
    }
}

impl<T: FillValue, const FILL: u32> std::ops::IndexMut<usize> for Sparse<T, FILL> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        assert!(i < self.len, "row {i} of a column of {} rows", self.len);
        self.store();
        &mut self.rows[i]
    }
}

impl<T: FillValue, const FILL: u32> PartialEq for Sparse<T, FILL> {
    fn eq(&self, o: &Self) -> bool {
        self.len == o.len && self.iter().eq(o.iter())
    }
}

impl<T: FillValue, const FILL: u32> PartialEq<Vec<T>> for Sparse<T, FILL> {
    fn eq(&self, o: &Vec<T>) -> bool {
        self.len == o.len() && self.iter().eq(o.iter())
    }
}

impl<T: FillValue, const FILL: u32> PartialEq<[T]> for Sparse<T, FILL> {
    fn eq(&self, o: &[T]) -> bool {
        self.len == o.len() && self.iter().eq(o.iter())
    }
}

impl<T: FillValue, const FILL: u32> fmt::Debug for Sparse<T, FILL> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: FillValue, const FILL: u32> FromIterator<T> for Sparse<T, FILL> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut s = Sparse::default();
        s.extend(iter);
        s
    }
}

impl<T: FillValue, const FILL: u32> Extend<T> for Sparse<T, FILL> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for v in iter {
            self.push(v);
        }
    }
}

impl<T: FillValue, const FILL: u32> From<Vec<T>> for Sparse<T, FILL> {
    fn from(rows: Vec<T>) -> Self {
        let mut s = Sparse {
            len: rows.len(),
            rows,
            fill: T::from_fill(FILL),
        };
        s.compact();
        s
    }
}

impl<'a, T: FillValue, const FILL: u32> IntoIterator for &'a Sparse<T, FILL> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T: FillValue + Serialize, const FILL: u32> Serialize for Sparse<T, FILL> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de, T: FillValue + Deserialize<'de>, const FILL: u32> Deserialize<'de> for Sparse<T, FILL> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(d).map(Sparse::from)
    }
}

/// The rows of a [`Sparse`] column.
#[derive(Clone)]
pub enum Iter<'a, T> {
    /// `n` more rows of the fill value.
    Fill(&'a T, usize),
    /// The stored rows.
    Stored(std::slice::Iter<'a, T>),
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;
    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        match self {
            Iter::Fill(v, n) => {
                if *n == 0 {
                    None
                } else {
                    *n -= 1;
                    Some(*v)
                }
            }
            Iter::Stored(it) => it.next(),
        }
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Iter::Fill(_, n) => (*n, Some(*n)),
            Iter::Stored(it) => it.size_hint(),
        }
    }
}

impl<T> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Fill(..) => self.next(),
            Iter::Stored(it) => it.next_back(),
        }
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;

    type Col = Sparse<u32, { u32::MAX }>;

    #[test]
    fn fill_rows_are_not_stored_until_one_differs() {
        let mut c = Col::default();
        c.extend([u32::MAX; 5]);
        assert_eq!((c.len(), c.is_stored(), c[3]), (5, false, u32::MAX));
        c.push(7);
        assert!(c.is_stored());
        assert_eq!(c.to_vec(), vec![u32::MAX, u32::MAX, u32::MAX, u32::MAX, u32::MAX, 7]);
        c[5] = u32::MAX;
        c.shrink_to_fit();
        assert!(!c.is_stored());
        assert_eq!(c, Col::from(vec![u32::MAX; 6]));
        assert_eq!(c.iter().rev().count(), 6);
    }

    #[test]
    fn a_first_row_that_differs_is_stored() {
        let mut c = Col::default();
        c.push(3);
        c.push(u32::MAX);
        c.push(4);
        assert_eq!(c.to_vec(), vec![3, u32::MAX, 4]);
        let d: Col = [5, 6].into_iter().collect();
        assert_eq!((d[0], d[1], d.len()), (5, 6, 2));
    }

    #[test]
    fn serialises_as_the_plain_rows() {
        let c: Col = [u32::MAX, 3, u32::MAX].into_iter().collect();
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, serde_json::to_string(&vec![u32::MAX, 3, u32::MAX]).unwrap());
        let back: Col = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
        let empty: Col = serde_json::from_str(&format!("[{0},{0}]", u32::MAX)).unwrap();
        assert_eq!((empty.len(), empty.is_stored()), (2, false));
    }

    #[test]
    fn retain_and_remove_keep_the_length() {
        let mut c = Col::from(vec![u32::MAX; 4]);
        let mut i = 0;
        c.retain(|_| {
            i += 1;
            i % 2 == 0
        });
        assert_eq!(c.len(), 2);
        assert_eq!(c.remove(0), u32::MAX);
        assert_eq!(c.len(), 1);
    }
}

/// A column of `u64` read by row index ([`crate::Narrow`], [`crate::stamps::Stamps`]): what
/// [`Rows`] iterates.
pub trait U64Column {
    /// Row `i` (panics past the end).
    fn value_at(&self, i: usize) -> u64;
}

/// Rows `front..back` of a [`U64Column`], by value, from either end.
#[derive(Clone)]
pub struct Rows<'a, C: ?Sized> {
    col: &'a C,
    front: usize,
    back: usize,
}

impl<'a, C: U64Column + ?Sized> Rows<'a, C> {
    /// Rows `range` of `col` (the caller checks the range).
    pub(crate) fn new(col: &'a C, range: std::ops::Range<usize>) -> Self {
        Rows {
            col,
            front: range.start,
            back: range.end,
        }
    }
}

impl<C: U64Column + ?Sized> Iterator for Rows<'_, C> {
    type Item = u64;
    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.front == self.back {
            return None;
        }
        let v = self.col.value_at(self.front);
        self.front += 1;
        Some(v)
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }
}

impl<C: U64Column + ?Sized> DoubleEndedIterator for Rows<'_, C> {
    fn next_back(&mut self) -> Option<u64> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        Some(self.col.value_at(self.back))
    }
}

impl<C: U64Column + ?Sized> ExactSizeIterator for Rows<'_, C> {}

/// The standard trait impls of a `u64` column type that has `at(i)`, `iter()`, `push(v)` and
/// `Default` ([`crate::Narrow`], [`crate::stamps::Stamps`]): [`U64Column`], iteration by
/// reference and collecting from values or references (through the type's own `Extend`).
macro_rules! u64_column_impls {
    ($t:ty) => {
        impl $crate::column::U64Column for $t {
            #[inline]
            fn value_at(&self, i: usize) -> u64 {
                self.at(i)
            }
        }

        impl<'a> IntoIterator for &'a $t {
            type Item = u64;
            type IntoIter = $crate::column::Rows<'a, $t>;
            fn into_iter(self) -> Self::IntoIter {
                self.iter()
            }
        }

        impl FromIterator<u64> for $t {
            fn from_iter<I: IntoIterator<Item = u64>>(iter: I) -> Self {
                let mut c = <$t>::default();
                c.extend(iter);
                c
            }
        }

        impl<'a> FromIterator<&'a u64> for $t {
            fn from_iter<I: IntoIterator<Item = &'a u64>>(iter: I) -> Self {
                iter.into_iter().copied().collect()
            }
        }
    };
}
pub(crate) use u64_column_impls;
