//! The JSON document of `tracelogic matrix --json` (and of the packages' `matrix()`): the
//! dense tables and the entry list are written one row (one entry) at a time as the JSON is
//! serialised, so printing 8,192 ranks holds no `ranks²` table in memory.

use crate::matrix::{CommMatrix, Entry, Filtered, MatrixReport, Metric, PairWait, WaitingMatrix, MAX_DENSE_RANKS};
use serde::ser::SerializeSeq;
use serde::Serialize;

/// The document of `report`: the dense tables up to [`MAX_MATRIX_RANKS`] ranks, the entry
/// list always.
pub fn matrix(report: &MatrixReport) -> MatrixDocument<'_> {
    let (matrix, filtered) = (&report.matrix, &report.filtered);
    let dense = matrix.ranks() <= MAX_MATRIX_RANKS;
    let table = |cell| dense.then(|| DenseRows::new(matrix, filtered, cell));
    MatrixDocument {
        format: &report.format,
        source: &report.source,
        ranks: matrix.ranks(),
        metric: report.metric,
        threshold: report.threshold,
        bytes: table(Cell::Bytes),
        messages: table(Cell::Messages),
        binary: table(Cell::Kept),
        entries: EntryList::new(matrix, filtered),
        nonzero_entries: report.nonzero_entries(),
        kept_entries: filtered.kept_entries,
        removed_entries: filtered.removed_entries,
        removed_share: filtered.removed_share,
        total_bytes: matrix.total(Metric::Bytes),
        total_messages: matrix.total(Metric::Messages),
        waiting: report.waiting.as_ref().filter(|_| dense).map(WaitingRows),
        waiting_pairs: report.waiting.as_ref().map(|w| w.pairs.as_slice()),
        total_waiting_s: report.waiting.as_ref().map(|w| w.total_s),
    }
}

/// What `tracelogic matrix --json` prints. It borrows the sparse matrix and its filter flags:
/// the dense tables and the entry list are written one row (one entry) at a time as the JSON is
/// serialised, so printing 8,192 ranks holds no `ranks²` table in memory.
#[derive(Debug, Serialize)]
pub struct MatrixDocument<'a> {
    /// Source format name.
    pub format: &'a str,
    /// Where the trace came from.
    pub source: &'a str,
    /// Number of world ranks (rows and columns).
    pub ranks: u32,
    /// Metric the threshold applied to (`bytes` or `messages`).
    pub metric: Metric,
    /// Threshold in percent of the largest off-diagonal entry.
    pub threshold: f64,
    /// Bytes sent, one row per sending rank, one column per receiving rank; omitted above
    /// [`MAX_MATRIX_RANKS`] ranks (read `entries`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<DenseRows<'a>>,
    /// Messages sent, same layout; omitted above [`MAX_MATRIX_RANKS`] ranks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<DenseRows<'a>>,
    /// 0/1 after filtering, same layout; omitted above [`MAX_MATRIX_RANKS`] ranks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary: Option<DenseRows<'a>>,
    /// Every non-zero entry as `[from, to, bytes, messages, kept]` (kept 0/1 after filtering),
    /// sorted by sender then receiver: the matrix at any rank count.
    pub entries: EntryList<'a>,
    /// Non-zero entries (pairs, self-sends included, with at least one message).
    pub nonzero_entries: u64,
    /// Entries kept by the filter (the 1s of `binary`).
    pub kept_entries: u64,
    /// Non-zero entries the filter removed (self-traffic included).
    pub removed_entries: u64,
    /// Share (0..1) of the metric's total carried by removed entries.
    pub removed_share: f64,
    /// Sum of `bytes`.
    pub total_bytes: u64,
    /// Sum of `messages`.
    pub total_messages: u64,
    /// With `--metric waiting`: seconds waited per sender row and receiver column (late sender
    /// plus late receiver); omitted above [`MAX_MATRIX_RANKS`] ranks (read `waiting_pairs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<WaitingRows<'a>>,
    /// With `--metric waiting`: every pair with some waiting, `{sender, receiver,
    /// late_sender_s, late_receiver_s}`, by sender then receiver.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_pairs: Option<&'a [PairWait]>,
    /// With `--metric waiting`: the sum of `waiting`, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_waiting_s: Option<f64>,
}

/// The waiting matrix as dense rows of seconds, written one row at a time from its pairs.
#[derive(Debug, Clone, Copy)]
pub struct WaitingRows<'a>(pub &'a WaitingMatrix);

impl WaitingRows<'_> {
    /// Call `row` with each sender's row of seconds, in rank order.
    pub fn for_each_row<E>(&self, mut row: impl FnMut(u32, &[f64]) -> Result<(), E>) -> Result<(), E> {
        let n = self.0.ranks as usize;
        let mut values = vec![0.0f64; n];
        let mut pairs = self.0.pairs.iter().peekable();
        for r in 0..self.0.ranks {
            values.iter_mut().for_each(|v| *v = 0.0);
            while let Some(p) = pairs.next_if(|p| p.sender <= r) {
                if p.sender == r {
                    if let Some(v) = values.get_mut(p.receiver as usize) {
                        *v += p.waiting_s();
                    }
                }
            }
            row(r, &values)?;
        }
        Ok(())
    }
}

impl Serialize for WaitingRows<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.ranks as usize))?;
        self.for_each_row(|_, values| seq.serialize_element(values))?;
        seq.end()
    }
}

/// Largest rank count the dense fields (`bytes`, `messages`, `binary` rows of the JSON, the CSV
/// grid) are produced for: 8192² entries are 67 M numbers per table (1.8 GB of pretty JSON for
/// the three). Above it the JSON carries `entries` only and the CSV is the sparse list.
pub const MAX_MATRIX_RANKS: u32 = MAX_DENSE_RANKS;

/// Which number a cell of a dense table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// Bytes sent.
    Bytes,
    /// Messages sent.
    Messages,
    /// 1 when the entry survived the filter, else 0.
    Kept,
}

impl From<Metric> for Cell {
    fn from(m: Metric) -> Cell {
        match m {
            Metric::Bytes => Cell::Bytes,
            Metric::Messages => Cell::Messages,
        }
    }
}

/// A dense `ranks × ranks` table read off the sparse matrix: serialises as one array of
/// `ranks` numbers per sending rank, exactly as a `Vec<Vec<u64>>` would, without building it.
#[derive(Debug, Clone, Copy)]
pub struct DenseRows<'a> {
    matrix: &'a CommMatrix,
    filtered: &'a Filtered,
    cell: Cell,
}

impl<'a> DenseRows<'a> {
    /// The table of `cell` of `matrix`; `filtered` must be a filter of `matrix` (its `kept` flags
    /// are read for [`Cell::Kept`]).
    pub fn new(matrix: &'a CommMatrix, filtered: &'a Filtered, cell: Cell) -> DenseRows<'a> {
        DenseRows { matrix, filtered, cell }
    }

    /// Every sending rank's row, in rank order, each as the values of its `ranks` columns.
    pub fn rows(&self) -> impl Iterator<Item = DenseRow<'a>> + 'a {
        let DenseRows { matrix, filtered, cell } = *self;
        let mut first_entry = 0usize;
        (0..matrix.ranks()).map(move |rank| {
            let stored = matrix.row(rank).count();
            let kept = filtered.kept.get(first_entry..first_entry + stored).unwrap_or(&[]);
            first_entry += stored;
            DenseRow {
                matrix,
                rank,
                kept,
                cell,
            }
        })
    }
}

impl Serialize for DenseRows<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.rows())
    }
}

/// One sending rank's row of a [`DenseRows`] table.
#[derive(Debug, Clone, Copy)]
pub struct DenseRow<'a> {
    matrix: &'a CommMatrix,
    rank: u32,
    /// The filter flags of this rank's stored entries.
    kept: &'a [bool],
    cell: Cell,
}

impl DenseRow<'_> {
    /// The sending rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// Call `cell` with the row's value for each receiving rank in order, 0 where the pair has no
    /// traffic. The zeros between stored entries are passed in a plain loop, with no lookup per
    /// cell: at 8,192 ranks a table has 67 M cells and only a few hundred thousand entries.
    pub fn for_each_value<E>(&self, mut cell: impl FnMut(u64) -> Result<(), E>) -> Result<(), E> {
        let mut next = 0u32;
        for (i, e) in self.matrix.row(self.rank).enumerate() {
            for _ in next..e.to {
                cell(0)?;
            }
            cell(match self.cell {
                Cell::Bytes => e.bytes,
                Cell::Messages => e.messages,
                Cell::Kept => u64::from(self.kept.get(i).copied().unwrap_or(false)),
            })?;
            next = e.to + 1;
        }
        for _ in next..self.matrix.ranks() {
            cell(0)?;
        }
        Ok(())
    }
}

impl Serialize for DenseRow<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.matrix.ranks() as usize))?;
        self.for_each_value(|v| seq.serialize_element(&v))?;
        seq.end()
    }
}

/// The stored entries with their filter flag, serialised as `[from, to, bytes, messages,
/// kept]` arrays one at a time.
#[derive(Debug, Clone, Copy)]
pub struct EntryList<'a> {
    matrix: &'a CommMatrix,
    filtered: &'a Filtered,
}

impl<'a> EntryList<'a> {
    /// The entries of `matrix` flagged by `filtered` (a filter of `matrix`).
    pub fn new(matrix: &'a CommMatrix, filtered: &'a Filtered) -> EntryList<'a> {
        EntryList { matrix, filtered }
    }

    /// `(entry, kept)` in [`CommMatrix::entries`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Entry, bool)> + 'a {
        self.matrix.entries().zip(self.filtered.kept.iter().copied())
    }
}

impl Serialize for EntryList<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.matrix.nonzero()))?;
        for (e, k) in self.iter() {
            seq.serialize_element(&(e.from, e.to, e.bytes, e.messages, u8::from(k)))?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 5 ranks: a self-send on 0, a zero-byte message 1 → 0, entries in the first and last
    /// columns, rank 2 and the last rank sending nothing, and a stray entry the filter removes.
    fn matrix() -> CommMatrix {
        let e = |from, to, bytes, messages| Entry {
            from,
            to,
            bytes,
            messages,
        };
        CommMatrix::from_entries(
            5,
            [
                e(0, 0, 500, 1),
                e(0, 4, 3000, 3),
                e(0, 1, 3000, 3),
                e(1, 0, 0, 2),
                e(1, 2, 10, 1),
                e(3, 4, 2000, 2),
                e(3, 0, 1000, 1),
            ],
        )
        .unwrap()
    }

    /// The streamed tables print exactly what the dense `Vec<Vec<_>>` tables of the analysis
    /// crate print, in pretty and compact JSON.
    #[test]
    fn streamed_tables_serialise_as_the_dense_rows() {
        let m = matrix();
        for metric in [Metric::Bytes, Metric::Messages] {
            let f = m.filter(metric, 5.0);
            // By bytes the self-send and the 10-byte entry are removed (the zero-byte one is
            // not kept either); by messages only the self-send.
            let removed = if metric == Metric::Bytes { 2 } else { 1 };
            assert_eq!(f.removed_entries, removed, "{metric:?}");
            for (cell, dense) in [
                (Cell::Bytes, m.dense_rows(Metric::Bytes)),
                (Cell::Messages, m.dense_rows(Metric::Messages)),
                (
                    Cell::Kept,
                    f.dense_rows(&m)
                        .iter()
                        .map(|r| r.iter().map(|&k| u64::from(k)).collect())
                        .collect(),
                ),
            ] {
                let streamed = DenseRows::new(&m, &f, cell);
                assert_eq!(
                    serde_json::to_string_pretty(&streamed).unwrap(),
                    serde_json::to_string_pretty(&dense).unwrap(),
                    "{metric:?} {cell:?}"
                );
                assert_eq!(
                    serde_json::to_string(&streamed).unwrap(),
                    serde_json::to_string(&dense).unwrap()
                );
            }
            let list: Vec<(u32, u32, u64, u64, u8)> = m
                .entries()
                .zip(&f.kept)
                .map(|(e, &k)| (e.from, e.to, e.bytes, e.messages, u8::from(k)))
                .collect();
            assert_eq!(list.len(), 7);
            assert_eq!(
                serde_json::to_string_pretty(&EntryList::new(&m, &f)).unwrap(),
                serde_json::to_string_pretty(&list).unwrap()
            );
        }
        let by_bytes = m.filter(Metric::Bytes, 5.0);
        let kept = DenseRows::new(&m, &by_bytes, Cell::Kept);
        assert_eq!(
            serde_json::to_string(&kept).unwrap(),
            "[[0,1,0,0,1],[0,0,0,0,0],[0,0,0,0,0],[1,0,0,0,1],[0,0,0,0,0]]"
        );
    }
}
