//! A column that stores each row as a code into the rank's table of distinct values.
//!
//! One rank uses few distinct MPI functions, call paths, partners, tags and message sizes (a
//! halo exchange repeats the same few), yet a `Vec<u32>` spends 4 bytes on every row. A [`Dict`] keeps the distinct values once, in order of first appearance, and a
//! code per row whose width follows their number: none while every row holds one value, a `u8`
//! up to 256 values, a `u16` up to 65,536; past that the rows are stored whole, as a `Vec`
//! would. Reading a row is two loads and returns a reference into the table, so the column
//! indexes like a `Vec` (`col[i]`, `iter`, `get`, `contains`); rows are written by
//! [`Dict::push`], [`Dict::set`] and [`Dict::map_values`]. Serialised as the plain sequence of
//! its rows, as a `Vec` is.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;

/// A value a [`Dict`] column can hold.
pub trait DictValue: Copy + Eq + Hash + fmt::Debug {}
impl<T: Copy + Eq + Hash + fmt::Debug> DictValue for T {}

/// Distinct values up to which a new row's code is found by scanning the table; past it, by a
/// hash map built on demand.
const SCAN: usize = 16;

/// The rows, by the width their codes need.
#[derive(Clone)]
enum Codes<T> {
    /// Every row holds `values[0]` (or there is no row).
    One,
    /// Codes into `values`, up to 256 values.
    U8(Vec<u8>),
    /// Codes into `values`, up to 65,536 values.
    U16(Vec<u16>),
    /// The rows themselves (more than 65,536 distinct values; `values` is empty).
    Plain(Vec<T>),
}

/// A column of rows coded against a table of their distinct values (module documentation).
#[derive(Clone)]
pub struct Dict<T: DictValue> {
    len: usize,
    /// The distinct values, by first appearance (a value no row holds any more may remain).
    values: Vec<T>,
    codes: Codes<T>,
    /// Value → code, while writing a column with more than [`SCAN`] values (rebuilt when its
    /// length differs from the table's; dropped by [`Dict::shrink_to_fit`]).
    index: HashMap<T, u32, foldhash::fast::RandomState>,
}

impl<T: DictValue> Default for Dict<T> {
    fn default() -> Self {
        Dict {
            len: 0,
            values: Vec::new(),
            codes: Codes::One,
            index: HashMap::default(),
        }
    }
}

impl<T: DictValue> Dict<T> {
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
    /// Row `i`, if there is one.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| &self[i])
    }
    /// Row `i` by value (panics past the end).
    #[inline]
    pub fn at(&self, i: usize) -> T {
        self[i]
    }
    /// The first row.
    pub fn first(&self) -> Option<&T> {
        self.get(0)
    }
    /// The last row.
    pub fn last(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }
    /// Number of distinct values in the table (0 once the rows are stored whole).
    pub fn distinct(&self) -> usize {
        self.values.len()
    }
    /// Bytes a row's code takes: 0 while every row holds one value, 1, 2, or the value's size
    /// once the rows are stored whole.
    pub fn code_bytes(&self) -> usize {
        match self.codes {
            Codes::One => 0,
            Codes::U8(_) => 1,
            Codes::U16(_) => 2,
            Codes::Plain(_) => std::mem::size_of::<T>(),
        }
    }
    /// The code of `v`, adding it to the table if new; `None` when the table is full (the
    /// rows have been stored whole: `codes` is `Plain`).
    fn code(&mut self, v: T) -> Option<usize> {
        if let Codes::Plain(_) = self.codes {
            return None;
        }
        let found = if self.values.len() <= SCAN {
            self.values.iter().position(|&x| x == v)
        } else {
            if self.index.len() != self.values.len() {
                self.index = self.values.iter().enumerate().map(|(k, &x)| (x, k as u32)).collect();
            }
            self.index.get(&v).map(|&k| k as usize)
        };
        if found.is_some() {
            return found;
        }
        let k = self.values.len();
        if k == 1 << 16 {
            let rows: Vec<T> = self.iter().copied().collect();
            self.codes = Codes::Plain(rows);
            self.values = Vec::new();
            self.index = HashMap::default();
            return None;
        }
        self.values.push(v);
        if self.values.len() > SCAN {
            if self.index.len() + 1 == self.values.len() {
                self.index.insert(v, k as u32);
            } else {
                self.index.clear();
            }
        }
        // Widen the codes when the new value needs it.
        match &mut self.codes {
            Codes::One if k == 1 => self.codes = Codes::U8(vec![0; self.len]),
            Codes::U8(c) if k == 256 => self.codes = Codes::U16(c.iter().map(|&x| x as u16).collect()),
            _ => {}
        }
        Some(k)
    }
    /// Append a row.
    #[inline]
    pub fn push(&mut self, v: T) {
        // The common cases inline: the one value of the column, or a value already in a short
        // table of one-byte codes.
        match &mut self.codes {
            Codes::One if self.values.first() == Some(&v) => {
                self.len += 1;
                return;
            }
            Codes::U8(c) if self.values.len() <= SCAN => {
                if let Some(k) = self.values.iter().position(|&x| x == v) {
                    c.push(k as u8);
                    self.len += 1;
                    return;
                }
            }
            _ => {}
        }
        self.push_new(v);
    }
    /// [`Dict::push`] of a value that may be new, or into a column of another width.
    #[inline(never)]
    fn push_new(&mut self, v: T) {
        match self.code(v) {
            None => {
                if let Codes::Plain(rows) = &mut self.codes {
                    rows.push(v);
                }
            }
            Some(k) => match &mut self.codes {
                Codes::One => {}
                Codes::U8(c) => c.push(k as u8),
                Codes::U16(c) => c.push(k as u16),
                Codes::Plain(_) => unreachable!("a coded value in a plain column"),
            },
        }
        self.len += 1;
    }
    /// Change row `i` (panics past the end).
    pub fn set(&mut self, i: usize, v: T) {
        assert!(i < self.len, "row {i} of a column of {} rows", self.len);
        match self.code(v) {
            None => {
                if let Codes::Plain(rows) = &mut self.codes {
                    rows[i] = v;
                }
            }
            Some(k) => match &mut self.codes {
                Codes::One => {}
                Codes::U8(c) => c[i] = k as u8,
                Codes::U16(c) => c[i] = k as u16,
                Codes::Plain(_) => unreachable!("a coded value in a plain column"),
            },
        }
    }
    /// Replace every row `v` by `to(v)` (applied to the table, once per distinct value, while
    /// the rows are coded).
    pub fn map_values(&mut self, mut to: impl FnMut(T) -> T) {
        match &mut self.codes {
            Codes::Plain(rows) => rows.iter_mut().for_each(|v| *v = to(*v)),
            _ => {
                self.values.iter_mut().for_each(|v| *v = to(*v));
                self.index.clear();
                // Two values may now be equal: rebuild so that each value has one code.
                let mut sorted: Vec<T> = self.values.clone();
                let distinct = sorted.len();
                let mut seen = HashMap::<T, (), foldhash::fast::RandomState>::default();
                sorted.retain(|&v| seen.insert(v, ()).is_none());
                if sorted.len() != distinct {
                    let rebuilt: Dict<T> = self.iter().copied().collect();
                    *self = rebuilt;
                }
            }
        }
    }
    /// Room for `n` more rows (of the present code width).
    pub fn reserve(&mut self, n: usize) {
        match &mut self.codes {
            Codes::One => {}
            Codes::U8(c) => c.reserve(n),
            Codes::U16(c) => c.reserve(n),
            Codes::Plain(rows) => rows.reserve(n),
        }
    }
    /// Rows in order.
    #[inline]
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            col: self,
            front: 0,
            back: self.len,
        }
    }
    /// True when some row holds `v`.
    pub fn contains(&self, v: &T) -> bool {
        match &self.codes {
            Codes::Plain(rows) => rows.contains(v),
            _ => self
                .values
                .iter()
                .position(|x| x == v)
                .is_some_and(|k| match &self.codes {
                    Codes::U8(c) => c.contains(&(k as u8)),
                    Codes::U16(c) => c.contains(&(k as u16)),
                    _ => self.len > 0,
                }),
        }
    }
    /// The rows as a vector.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().copied().collect()
    }
    /// Keep the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n);
        match &mut self.codes {
            Codes::One => {}
            Codes::U8(c) => c.truncate(n),
            Codes::U16(c) => c.truncate(n),
            Codes::Plain(rows) => rows.truncate(n),
        }
    }
    /// Remove every row.
    pub fn clear(&mut self) {
        *self = Dict::default();
    }
    /// Keep the rows for which `keep(row)` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let kept: Dict<T> = self.iter().filter(|v| keep(v)).copied().collect();
        *self = kept;
    }
    /// Keep row `i` where `keep[i]` is true (rows past the end of `keep` stay); the table of
    /// values is kept as it is.
    pub fn retain_mask(&mut self, keep: &[bool]) {
        let mut it = keep.iter();
        let mut k = || *it.next().unwrap_or(&true);
        self.len = match &mut self.codes {
            Codes::One => (0..self.len).filter(|_| k()).count(),
            Codes::U8(c) => {
                c.retain(|_| k());
                c.len()
            }
            Codes::U16(c) => {
                c.retain(|_| k());
                c.len()
            }
            Codes::Plain(rows) => {
                rows.retain(|_| k());
                rows.len()
            }
        };
    }
    /// The rows where `keep[i]` is true (rows past the end of `keep` are dropped), coded
    /// against the same table of values.
    pub fn select_mask(&self, keep: &[bool]) -> Dict<T> {
        fn pick<X: Copy>(rows: &[X], keep: &[bool]) -> Vec<X> {
            rows.iter().zip(keep).filter(|(_, &k)| k).map(|(&x, _)| x).collect()
        }
        let (len, codes) = match &self.codes {
            Codes::One => (keep.iter().take(self.len).filter(|&&k| k).count(), Codes::One),
            Codes::U8(c) => {
                let c = pick(c, keep);
                (c.len(), Codes::U8(c))
            }
            Codes::U16(c) => {
                let c = pick(c, keep);
                (c.len(), Codes::U16(c))
            }
            Codes::Plain(rows) => {
                let rows = pick(rows, keep);
                (rows.len(), Codes::Plain(rows))
            }
        };
        Dict {
            len,
            values: self.values.clone(),
            codes,
            index: HashMap::default(),
        }
    }
    /// Remove row `i` and return it.
    pub fn remove(&mut self, i: usize) -> T {
        let v = self[i];
        let mut k = 0;
        self.retain(|_| {
            k += 1;
            k != i + 1
        });
        v
    }
    /// Give back unused capacity, the hash map that finds the codes of new rows, and the values
    /// no row holds any more (a value changed by [`Dict::set`], such as a receive's wildcard
    /// source once its status names the sender), recoding the rows if some went.
    pub fn shrink_to_fit(&mut self) {
        let held = |codes: &mut dyn Iterator<Item = usize>, n: usize| {
            let mut seen = vec![false; n];
            codes.for_each(|k| seen[k] = true);
            seen.iter().all(|&s| s)
        };
        let all_held = match &self.codes {
            Codes::One => self.len > 0 || self.values.is_empty(),
            Codes::U8(c) => held(&mut c.iter().map(|&k| k as usize), self.values.len()),
            Codes::U16(c) => held(&mut c.iter().map(|&k| k as usize), self.values.len()),
            Codes::Plain(_) => true,
        };
        if !all_held {
            let recoded: Dict<T> = self.iter().copied().collect();
            *self = recoded;
        }
        self.values.shrink_to_fit();
        self.index = HashMap::default();
        match &mut self.codes {
            Codes::One => {}
            Codes::U8(c) => c.shrink_to_fit(),
            Codes::U16(c) => c.shrink_to_fit(),
            Codes::Plain(rows) => rows.shrink_to_fit(),
        }
    }
    /// Heap bytes in use and allocated: codes (or rows) and the table of values, not the hash
    /// map of a column still being written.
    pub fn heap_bytes(&self) -> crate::Bytes {
        crate::Bytes::of(&self.values)
            + match &self.codes {
                Codes::One => crate::Bytes::default(),
                Codes::U8(c) => crate::Bytes::of(c),
                Codes::U16(c) => crate::Bytes::of(c),
                Codes::Plain(rows) => crate::Bytes::of(rows),
            }
    }
}

impl<T: DictValue> std::ops::Index<usize> for Dict<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        match &self.codes {
            Codes::U8(c) => &self.values[c[i] as usize],
            Codes::U16(c) => &self.values[c[i] as usize],
            Codes::One if i < self.len => &self.values[0],
            Codes::One => out_of_range(i, self.len),
            Codes::Plain(rows) => &rows[i],
        }
    }
}

#[cold]
#[inline(never)]
fn out_of_range(i: usize, len: usize) -> ! {
    panic!("row {i} of a column of {len} rows")
}

impl<T: DictValue> PartialEq for Dict<T> {
    fn eq(&self, o: &Self) -> bool {
        self.len == o.len && self.iter().eq(o.iter())
    }
}

impl<T: DictValue> Eq for Dict<T> {}

impl<T: DictValue> PartialEq<Vec<T>> for Dict<T> {
    fn eq(&self, o: &Vec<T>) -> bool {
        self.len == o.len() && self.iter().eq(o.iter())
    }
}

impl<T: DictValue> PartialEq<[T]> for Dict<T> {
    fn eq(&self, o: &[T]) -> bool {
        self.len == o.len() && self.iter().eq(o.iter())
    }
}

impl<T: DictValue> fmt::Debug for Dict<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: DictValue> FromIterator<T> for Dict<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut d = Dict::default();
        d.extend(iter);
        d
    }
}

impl<'a, T: DictValue + 'a> FromIterator<&'a T> for Dict<T> {
    fn from_iter<I: IntoIterator<Item = &'a T>>(iter: I) -> Self {
        iter.into_iter().copied().collect()
    }
}

impl<T: DictValue> Extend<T> for Dict<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for v in iter {
            self.push(v);
        }
    }
}

impl<T: DictValue> From<Vec<T>> for Dict<T> {
    fn from(rows: Vec<T>) -> Self {
        rows.into_iter().collect()
    }
}

impl<'a, T: DictValue> IntoIterator for &'a Dict<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T: DictValue + Serialize> Serialize for Dict<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de, T: DictValue + Deserialize<'de>> Deserialize<'de> for Dict<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(d).map(Dict::from)
    }
}

/// Rows `front..back` of a [`Dict`], from either end.
#[derive(Clone)]
pub struct Iter<'a, T: DictValue> {
    col: &'a Dict<T>,
    front: usize,
    back: usize,
}

impl<'a, T: DictValue> Iterator for Iter<'a, T> {
    type Item = &'a T;
    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        if self.front == self.back {
            return None;
        }
        let v = &self.col[self.front];
        self.front += 1;
        Some(v)
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }
    #[inline]
    fn nth(&mut self, n: usize) -> Option<&'a T> {
        self.front = self.front.saturating_add(n).min(self.back);
        self.next()
    }
}

impl<T: DictValue> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        Some(&self.col[self.back])
    }
}

impl<T: DictValue> ExactSizeIterator for Iter<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes, changes and mappings of a column checked row by row against a plain vector
    /// through every code width.
    fn check(d: &Dict<u32>, plain: &[u32]) {
        assert_eq!(d.len(), plain.len());
        assert_eq!(d.to_vec(), plain);
        assert!((0..plain.len()).all(|i| d[i] == plain[i] && d.get(i) == Some(&plain[i])));
        assert_eq!(d.get(plain.len()), None);
        assert!(d.iter().rev().eq(plain.iter().rev()));
        assert_eq!(d.last(), plain.last());
    }

    #[test]
    fn reads_back_every_row_written_at_every_code_width() {
        let mut d = Dict::default();
        let mut plain = vec![3; 5];
        d.extend([3; 5]);
        // One value: only the value is stored.
        assert_eq!((d.code_bytes(), d.heap_bytes().used), (0, 4));
        check(&d, &plain);
        // Up to 256, 65,536 and more distinct values, each pushed between two rows of 3.
        let mut distinct = 1;
        for (upto, width) in [(256, 1), (257, 2), (1 << 16, 2), ((1 << 16) + 1, 4)] {
            while distinct < upto {
                for x in [distinct * 7 + 3, 3] {
                    d.push(x);
                    plain.push(x);
                }
                distinct += 1;
            }
            assert_eq!(d.code_bytes(), width, "{upto} distinct values");
            check(&d, &plain);
        }
        for (i, v) in [(0, 9), (1, 1 << 30), (plain.len() - 1, 3)] {
            d.set(i, v);
            plain[i] = v;
        }
        check(&d, &plain);
    }

    #[test]
    fn set_and_map_values_move_rows_between_values() {
        let mut plain = vec![5u32; 4];
        let mut d = Dict::from(plain.clone());
        assert_eq!((d.code_bytes(), d.distinct()), (0, 1));
        d.set(2, 6);
        plain[2] = 6;
        check(&d, &plain);
        assert_eq!(d.code_bytes(), 1);
        d.map_values(|v| if v == 6 { 5 } else { v + 10 });
        plain.iter_mut().for_each(|v| *v = if *v == 6 { 5 } else { *v + 10 });
        check(&d, &plain);
        assert!(d.contains(&15) && d.contains(&5) && !d.contains(&6));
        d.retain(|&v| v != 5);
        plain.retain(|&v| v != 5);
        check(&d, &plain);
        assert_eq!(d.remove(1), 15);
        plain.remove(1);
        check(&d, &plain);
        d.truncate(1);
        plain.truncate(1);
        check(&d, &plain);
    }

    #[test]
    fn row_masks_keep_exactly_the_rows_a_vector_keeps() {
        let keep = [true, false, false, true, true];
        for rows in [
            vec![4u32; 7],
            vec![1, 2, 1, 3, 2, 9, 9],
            (0..70_000).map(|v| v * 3).collect(),
        ] {
            let d = Dict::from(rows.clone());
            let selected: Vec<u32> = rows.iter().zip(&keep).filter(|(_, &k)| k).map(|(&v, _)| v).collect();
            check(&d.select_mask(&keep), &selected);
            let mut it = keep.iter();
            let mut retained = rows.clone();
            retained.retain(|_| *it.next().unwrap_or(&true));
            let mut d = d;
            d.retain_mask(&keep);
            check(&d, &retained);
        }
    }

    #[test]
    fn shrinking_drops_the_values_no_row_holds() {
        let mut d: Dict<u32> = [7, 8, 9, 8].into_iter().collect();
        d.set(0, 8);
        d.set(2, 8);
        assert_eq!((d.distinct(), d.code_bytes()), (3, 1));
        d.shrink_to_fit();
        assert_eq!((d.distinct(), d.code_bytes(), d.heap_bytes().used), (1, 0, 4));
        check(&d, &[8, 8, 8, 8]);
    }

    #[test]
    fn serialises_as_the_plain_rows() {
        let d: Dict<i32> = [-1, 4, -1, 7].into_iter().collect();
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(json, "[-1,4,-1,7]");
        let back: Dict<i32> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, d);
        assert_eq!(back.heap_bytes().used, 4 + 3 * 4);
    }
}
