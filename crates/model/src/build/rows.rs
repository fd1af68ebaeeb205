//! Dropping rows from the columnar model, every column of a table at once.
//!
//! `retain_rows(keep)` keeps row `i` where `keep[i]` is true (rows past the end of `keep` are
//! kept), in place; `select_rows(keep)` returns a copy of the kept rows; `remove_rows(rows)`
//! drops the listed rows. Indices stored in the rows (a call index in `P2p::post`, say) are
//! not changed: the caller renumbers them when it also drops the rows they point to.

use crate::column::{FillValue, Sparse};
use crate::dict::{Dict, DictValue};
use crate::{Calls, Collectives, Completions, MetricSamples, Narrow, P2p, Sizes, Stamps};

/// A column rows can be dropped from.
trait RowColumn: Sized {
    /// Keep the entries whose `keep` entry is true (entries past `keep` stay).
    fn retain_mask(&mut self, keep: &[bool]);
    /// The entries whose `keep` entry is true (entries past `keep` are dropped).
    fn select_mask(&self, keep: &[bool]) -> Self;
}

impl<T: Copy> RowColumn for Vec<T> {
    #[inline]
    fn retain_mask(&mut self, keep: &[bool]) {
        let mut it = keep.iter();
        self.retain(|_| *it.next().unwrap_or(&true));
    }
    #[inline]
    fn select_mask(&self, keep: &[bool]) -> Vec<T> {
        self.iter().zip(keep).filter(|(_, &k)| k).map(|(&v, _)| v).collect()
    }
}

impl<T: FillValue, const FILL: u32> RowColumn for Sparse<T, FILL> {
    #[inline]
    fn retain_mask(&mut self, keep: &[bool]) {
        let mut it = keep.iter();
        self.retain(|_| *it.next().unwrap_or(&true));
    }
    #[inline]
    fn select_mask(&self, keep: &[bool]) -> Self {
        self.iter().zip(keep).filter(|(_, &k)| k).map(|(&v, _)| v).collect()
    }
}

/// The row operations of a `u64` column read by value ([`Narrow`], [`Stamps`]).
macro_rules! u64_rows {
    ($($t:ty),+) => {$(
        impl RowColumn for $t {
            #[inline]
            fn retain_mask(&mut self, keep: &[bool]) {
                let mut it = keep.iter();
                self.retain(|_| *it.next().unwrap_or(&true));
            }
            #[inline]
            fn select_mask(&self, keep: &[bool]) -> Self {
                self.iter().zip(keep).filter(|(_, &k)| k).map(|(v, _)| v).collect()
            }
        }
    )+};
}
u64_rows!(Narrow, Stamps);

impl<T: DictValue> RowColumn for Dict<T> {
    #[inline]
    fn retain_mask(&mut self, keep: &[bool]) {
        Dict::retain_mask(self, keep)
    }
    #[inline]
    fn select_mask(&self, keep: &[bool]) -> Self {
        Dict::select_mask(self, keep)
    }
}

impl RowColumn for Sizes {
    #[inline]
    fn retain_mask(&mut self, keep: &[bool]) {
        Sizes::retain_mask(self, keep)
    }
    #[inline]
    fn select_mask(&self, keep: &[bool]) -> Self {
        Sizes::select_mask(self, keep)
    }
}

impl RowColumn for Completions {
    #[inline]
    fn retain_mask(&mut self, keep: &[bool]) {
        Completions::retain_mask(self, keep)
    }
    #[inline]
    fn select_mask(&self, keep: &[bool]) -> Self {
        Completions::select_mask(self, keep)
    }
}

/// A mask of `len` rows with `rows` (any order, repeats allowed) false.
fn mask_without(len: usize, rows: &[usize]) -> Vec<bool> {
    let mut keep = vec![true; len];
    for &r in rows {
        if let Some(k) = keep.get_mut(r) {
            *k = false;
        }
    }
    keep
}

/// Implements the three row operations for a table by listing its columns once.
macro_rules! rows_of {
    ($table:ident { $($column:ident),+ $(,)? }) => {
        impl $table {
            /// Keep row `i` where `keep[i]` is true (rows past the end of `keep` stay), in every
            /// column.
            pub fn retain_rows(&mut self, keep: &[bool]) {
                $( self.$column.retain_mask(keep); )+
            }
            /// A copy of the rows where `keep[i]` is true, in every column.
            pub fn select_rows(&self, keep: &[bool]) -> $table {
                $table { $( $column: self.$column.select_mask(keep), )+ }
            }
            /// Drop the rows listed in `rows` (any order; out-of-range rows are ignored).
            pub fn remove_rows(&mut self, rows: &[usize]) {
                if rows.is_empty() {
                    return;
                }
                let len = self.len();
                self.retain_rows(&mask_without(len, rows));
            }
        }
    };
}

rows_of!(Calls {
    func,
    kind,
    enter,
    duration,
    callpath,
    location
});
rows_of!(P2p {
    post,
    complete,
    dir,
    peer,
    tag,
    comm,
    bytes
});
rows_of!(Collectives {
    call,
    op,
    comm,
    root,
    bytes_sent,
    bytes_recv
});

impl MetricSamples {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.time.len()
    }
    /// True when the series has no sample.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }
    /// Keep sample `i` where `keep[i]` is true (samples past the end of `keep` stay).
    pub fn retain_rows(&mut self, keep: &[bool]) {
        self.time.retain_mask(keep);
        self.value.retain_mask(keep);
    }
    /// A copy of the samples where `keep[i]` is true, same metric.
    pub fn select_rows(&self, keep: &[bool]) -> MetricSamples {
        MetricSamples {
            metric: self.metric,
            time: self.time.select_mask(keep),
            value: self.value.select_mask(keep),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{P2pDir, ANY_TAG};

    fn p2p(n: usize) -> P2p {
        let mut p = P2p::default();
        for i in 0..n {
            p.post.push(i as u32);
            // Blocking, near, missing and far completions (the last escaped).
            let done = [i as u32, i as u32 + 3, crate::NOT_COMPLETED, i as u32 + 1000][i % 4];
            p.complete.push(i as u32, done);
            p.dir.push(if i % 2 == 0 { P2pDir::Send } else { P2pDir::Recv });
            p.peer.push(100 + i as u32);
            p.tag.push(if i == 3 { ANY_TAG } else { i as i32 });
            p.comm.push(i as u32 % 3);
            p.bytes.push(if i == 2 { 1 << 40 } else { 1000 * i as u64 });
        }
        p
    }

    /// Reference: rebuild the table row by row from the rows kept.
    fn rebuilt(p: &P2p, kept: impl Iterator<Item = usize>) -> P2p {
        let mut out = P2p::default();
        for i in kept {
            out.post.push(p.post[i]);
            out.complete.push(p.post[i], p.complete(i));
            out.dir.push(p.dir[i]);
            out.peer.push(p.peer[i]);
            out.tag.push(p.tag[i]);
            out.comm.push(p.comm[i]);
            out.bytes.push(p.bytes.at(i));
        }
        out
    }

    fn same(a: &P2p, b: &P2p) -> bool {
        a.post == b.post
            && a.completes().eq(b.completes())
            && a.dir == b.dir
            && a.peer == b.peer
            && a.tag == b.tag
            && a.comm == b.comm
            && a.bytes == b.bytes
    }

    #[test]
    fn every_mask_of_six_rows_keeps_exactly_its_rows_in_every_column() {
        let p = p2p(6);
        for bits in 0u32..64 {
            let keep: Vec<bool> = (0..6).map(|i| bits & (1 << i) != 0).collect();
            let expected = rebuilt(&p, (0..6).filter(|&i| keep[i]));
            let mut q = p.clone();
            q.retain_rows(&keep);
            assert!(same(&q, &expected), "retain {keep:?}");
            assert!(same(&p.select_rows(&keep), &expected), "select {keep:?}");
            let gone: Vec<usize> = (0..6).rev().filter(|&i| !keep[i]).collect();
            let mut q = p.clone();
            q.remove_rows(&gone);
            assert!(same(&q, &expected), "remove {gone:?}");
        }
    }

    #[test]
    fn a_short_mask_keeps_the_rows_past_it_in_place_and_drops_them_in_a_copy() {
        let p = p2p(5);
        let mut q = p.clone();
        q.retain_rows(&[false, true]);
        assert!(same(&q, &rebuilt(&p, [1, 2, 3, 4].into_iter())));
        assert!(same(&p.select_rows(&[false, true]), &rebuilt(&p, [1].into_iter())));
        let mut q = p.clone();
        q.remove_rows(&[7, 0, 0]);
        assert!(same(&q, &rebuilt(&p, 1..5)));
    }
}
