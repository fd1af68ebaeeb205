//! The completing call of each point-to-point operation, about 1 byte an operation.
//!
//! A blocking operation completes in the call that posted it and a non-blocking one a few
//! calls later, so a row stores the distance `complete − post` as a `u8` (0 to 253),
//! [`NOT_COMPLETED`] as 254, and anything else (a completion far away or before its post) as
//! the escape marker 255 with the call index in a side table of (row, call) sorted by row.
//! A row is read with its posting call ([`Completions::at`]); `P2p` pairs them
//! (`P2p::complete`). Dropping rows keeps the pairs aligned: call indices are not changed by
//! a row operation, and a change of the posting calls goes through `P2p::renumber_calls`.

use crate::{CallIdx, NOT_COMPLETED};

/// Row value for [`NOT_COMPLETED`].
const NONE: u8 = 254;
/// Row value that sends the reader to the escape table.
const ESCAPE: u8 = u8::MAX;

/// Completing calls stored as distances from the posting calls (module documentation).
/// Not comparable on its own: two columns compare equal only with the same posting calls
/// (compare `P2p::completes`).
#[derive(Debug, Clone, Default)]
pub struct Completions {
    rows: Vec<u8>,
    /// (row, completing call) of every escaped row, by row.
    wide: Vec<(u32, CallIdx)>,
}

/// The row value of completion `done` of an operation posted by `post`, if it fits.
#[inline]
fn code(post: CallIdx, done: CallIdx) -> Option<u8> {
    if done == NOT_COMPLETED {
        Some(NONE)
    } else {
        done.checked_sub(post).filter(|&d| d < NONE as u32).map(|d| d as u8)
    }
}

impl Completions {
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
    /// The completing call of row `i`, whose operation was posted by call `post` (panics past
    /// the end).
    #[inline]
    pub fn at(&self, i: usize, post: CallIdx) -> CallIdx {
        match self.rows[i] {
            NONE => NOT_COMPLETED,
            ESCAPE => self.escaped(i),
            d => post + d as u32,
        }
    }
    #[cold]
    fn escaped(&self, i: usize) -> CallIdx {
        let k = self
            .wide
            .binary_search_by_key(&(i as u32), |&(r, _)| r)
            .expect("an escaped row is in the escape table");
        self.wide[k].1
    }
    /// Append the completion `done` of an operation posted by `post`.
    #[inline]
    pub fn push(&mut self, post: CallIdx, done: CallIdx) {
        match code(post, done) {
            Some(c) => self.rows.push(c),
            None => {
                self.wide.push((self.rows.len() as u32, done));
                self.rows.push(ESCAPE);
            }
        }
    }
    /// Change row `i` to completion `done` of an operation posted by `post`.
    pub fn set(&mut self, i: usize, post: CallIdx, done: CallIdx) {
        let k = self.wide.binary_search_by_key(&(i as u32), |&(r, _)| r);
        match (code(post, done), k) {
            (Some(c), Ok(k)) => {
                self.wide.remove(k);
                self.rows[i] = c;
            }
            (Some(c), Err(_)) => self.rows[i] = c,
            (None, Ok(k)) => self.wide[k].1 = done,
            (None, Err(k)) => {
                self.wide.insert(k, (i as u32, done));
                self.rows[i] = ESCAPE;
            }
        }
    }
    /// Room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        self.rows.reserve(n);
    }
    /// Keep row `i` where `keep[i]` is true (rows past the end of `keep` stay).
    pub fn retain_mask(&mut self, keep: &[bool]) {
        let kept = self.select(|i| keep.get(i).copied().unwrap_or(true));
        *self = kept;
    }
    /// The rows where `keep[i]` is true (rows past the end of `keep` are dropped).
    pub fn select_mask(&self, keep: &[bool]) -> Completions {
        self.select(|i| keep.get(i).copied().unwrap_or(false))
    }
    fn select(&self, keep: impl Fn(usize) -> bool) -> Completions {
        let mut out = Completions::default();
        let mut wide = self.wide.iter().peekable();
        for (i, &r) in self.rows.iter().enumerate() {
            let escaped = if r == ESCAPE { wide.next() } else { None };
            if keep(i) {
                if let Some(&(_, done)) = escaped {
                    out.wide.push((out.rows.len() as u32, done));
                }
                out.rows.push(r);
            }
        }
        out
    }
    /// Remove every row.
    pub fn clear(&mut self) {
        self.rows.clear();
        self.wide.clear();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocking, near, far, backwards and missing completions, checked against plain pairs
    /// through push, set and row selection.
    #[test]
    fn reads_back_every_completion_as_a_vector_would() {
        let mut pairs: Vec<(u32, u32)> = vec![
            (0, 0),
            (1, 3),
            (2, NOT_COMPLETED),
            (3, 300),
            (9, 5),
            (10, 10 + 253),
            (11, 11 + 254),
            (12, NOT_COMPLETED - 1),
        ];
        let mut c = Completions::default();
        pairs.iter().for_each(|&(p, d)| c.push(p, d));
        let read = |c: &Completions, pairs: &[(u32, u32)]| -> Vec<u32> {
            pairs.iter().enumerate().map(|(i, &(p, _))| c.at(i, p)).collect()
        };
        let want = |pairs: &[(u32, u32)]| pairs.iter().map(|&(_, d)| d).collect::<Vec<_>>();
        assert_eq!(read(&c, &pairs), want(&pairs));
        assert_eq!(c.escaped_rows(), 4);
        assert_eq!(c.heap_bytes().used, 8 + 4 * 8);
        for (i, d) in [(0, 700), (3, 4), (4, 9), (2, 2), (7, NOT_COMPLETED)] {
            c.set(i, pairs[i].0, d);
            pairs[i].1 = d;
            assert_eq!(read(&c, &pairs), want(&pairs));
        }
        let keep = [true, false, true, true, false, true];
        let sel = c.select_mask(&keep);
        let kept: Vec<_> = pairs.iter().zip(&keep).filter(|(_, &k)| k).map(|(&p, _)| p).collect();
        assert_eq!(read(&sel, &kept), want(&kept));
        c.retain_mask(&keep);
        let kept: Vec<_> = pairs
            .iter()
            .enumerate()
            .filter(|&(i, _)| keep.get(i).copied().unwrap_or(true))
            .map(|(_, &p)| p)
            .collect();
        assert_eq!(read(&c, &kept), want(&kept));
    }
}
