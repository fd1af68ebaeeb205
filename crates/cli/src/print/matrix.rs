//! What `tracelogic matrix` prints: the text tables, the CSV grid or list, and the JSON
//! document (streamed: the dense tables are written one row at a time).

use crate::common::{emit, print_csv, print_json, table, CliError};
use serde::ser::SerializeSeq;
use serde::Serialize;
use std::io::Write;
use tracelogic_engine::matrix::{
    CommMatrix, Entry, Filtered, MatrixReport, Metric, PairWait, WaitingMatrix, MAX_DENSE_RANKS,
};

/// Which CSV `--csv` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Csv {
    /// The grid of the metric.
    Metric,
    /// The grid of the binary matrix (`--binary`).
    Binary,
    /// One line per non-zero entry (`--sparse`, and always above 8,192 ranks).
    Sparse,
}

/// Print `report` as JSON, as CSV, or as text.
pub fn print(report: &MatrixReport, json: bool, csv: Option<Csv>) -> Result<(), CliError> {
    let (matrix, filtered) = (&report.matrix, &report.filtered);
    let dense = matrix.ranks() <= MAX_MATRIX_RANKS;
    if let (Some(waiting), false) = (&report.waiting, json) {
        return print_waiting(waiting, csv, dense);
    }
    if json {
        let table = |cell| dense.then(|| DenseRows::new(matrix, filtered, cell));
        print_json(&MatrixDocument {
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
        })
    } else if let Some(csv) = csv {
        match csv {
            _ if csv == Csv::Sparse || !dense => {
                print_csv(|w| write_sparse_csv(w, EntryList::new(matrix, filtered), matrix.ranks()))
            }
            Csv::Binary => {
                print_csv(|w| write_dense_csv(w, DenseRows::new(matrix, filtered, Cell::Kept), matrix.ranks()))
            }
            _ => print_csv(|w| {
                write_dense_csv(
                    w,
                    DenseRows::new(matrix, filtered, Cell::from(report.metric)),
                    matrix.ranks(),
                )
            }),
        }
    } else {
        emit(|out| out.write_all(human(matrix, filtered, report.metric).as_bytes()))
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
    fn for_each_row<E>(&self, mut row: impl FnMut(u32, &[f64]) -> Result<(), E>) -> Result<(), E> {
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

/// `--metric waiting` as text (the grid up to 32 ranks, else the largest pairs) or CSV (the
/// grid of seconds, or with `--sparse` and above [`MAX_MATRIX_RANKS`] ranks one line per pair).
fn print_waiting(waiting: &WaitingMatrix, csv: Option<Csv>, dense: bool) -> Result<(), CliError> {
    let seconds = |v: f64| format!("{v:.6}");
    match csv {
        Some(c) if c == Csv::Sparse || !dense => print_csv(|w| {
            w.write_record(["from", "to", "waiting_s", "late_sender_s", "late_receiver_s", "ranks"])?;
            for p in &waiting.pairs {
                w.write_record([
                    p.sender.to_string(),
                    p.receiver.to_string(),
                    p.waiting_s().to_string(),
                    p.late_sender_s.to_string(),
                    p.late_receiver_s.to_string(),
                    waiting.ranks.to_string(),
                ])?;
            }
            Ok(())
        }),
        Some(_) => print_csv(|w| {
            w.write_field("sender")?;
            for r in 0..waiting.ranks {
                w.write_field(r.to_string())?;
            }
            w.write_record(None::<&[u8]>)?;
            WaitingRows(waiting).for_each_row(|r, values| {
                w.write_field(r.to_string())?;
                for v in values {
                    w.write_field(v.to_string())?;
                }
                w.write_record(None::<&[u8]>)
            })
        }),
        None => {
            let n = waiting.ranks;
            let mut o = format!(
                "{n} ranks, {} s waiting (late sender + late receiver; row = sender, column = receiver)\n",
                seconds(waiting.total_s)
            );
            if n <= MAX_GRID_RANKS {
                let header: Vec<String> = std::iter::once("waiting s".to_string())
                    .chain((0..n).map(|r| r.to_string()))
                    .collect();
                let header: Vec<&str> = header.iter().map(String::as_str).collect();
                let right: Vec<usize> = (0..=n as usize).collect();
                let rows: Vec<Vec<String>> = waiting
                    .dense_rows()
                    .iter()
                    .enumerate()
                    .map(|(r, row)| {
                        std::iter::once(r.to_string())
                            .chain(row.iter().map(|&v| if v > 0.0 { seconds(v) } else { "0".into() }))
                            .collect()
                    })
                    .collect();
                o += &table(&header, rows, &right);
            } else {
                let mut pairs = waiting.pairs.clone();
                pairs.sort_by(|a, b| {
                    b.waiting_s()
                        .total_cmp(&a.waiting_s())
                        .then((a.sender, a.receiver).cmp(&(b.sender, b.receiver)))
                });
                let count = pairs.len();
                pairs.truncate(TOP_ENTRIES);
                o += &format!("largest {} of {count} pairs with waiting\n", pairs.len());
                let rows = pairs
                    .iter()
                    .map(|p| {
                        vec![
                            p.sender.to_string(),
                            p.receiver.to_string(),
                            seconds(p.waiting_s()),
                            seconds(p.late_sender_s),
                            seconds(p.late_receiver_s),
                        ]
                    })
                    .collect();
                o += &table(
                    &["sender", "receiver", "waiting s", "late sender s", "late receiver s"],
                    rows,
                    &[0, 1, 2, 3, 4],
                );
            }
            emit(|out| out.write_all(o.as_bytes()))
        }
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

/// Header of the sparse CSV. `ranks` repeats the matrix size on every line so that a reader
/// (`topology --matrix`) knows the ranks after the last one with traffic, while spreadsheets and
/// data-frame libraries still read a plain table.
pub const SPARSE_CSV_HEADER: [&str; 6] = ["from", "to", "bytes", "messages", "kept", "ranks"];

/// Write the sparse CSV: the header, then one line per stored entry.
fn write_sparse_csv<W: Write>(w: &mut csv::Writer<W>, entries: EntryList<'_>, ranks: u32) -> csv::Result<()> {
    w.write_record(SPARSE_CSV_HEADER)?;
    let mut text = itoa::Buffer::new();
    let ranks = ranks.to_string();
    for (e, kept) in entries.iter() {
        w.write_field(text.format(e.from))?;
        w.write_field(text.format(e.to))?;
        w.write_field(text.format(e.bytes))?;
        w.write_field(text.format(e.messages))?;
        w.write_field(if kept { "1" } else { "0" })?;
        w.write_field(&ranks)?;
        w.write_record(None::<&[u8]>)?;
    }
    Ok(())
}

/// Write the CSV grid: header `sender,0,1,...`, then each sender's label and its row of `table`.
fn write_dense_csv<W: Write>(w: &mut csv::Writer<W>, table: DenseRows<'_>, ranks: u32) -> csv::Result<()> {
    let mut text = itoa::Buffer::new();
    w.write_field("sender")?;
    for r in 0..ranks {
        w.write_field(text.format(r))?;
    }
    w.write_record(None::<&[u8]>)?;
    for row in table.rows() {
        w.write_field(text.format(row.rank))?;
        row.for_each_value(|v| w.write_field(text.format(v)))?;
        w.write_record(None::<&[u8]>)?;
    }
    Ok(())
}

fn number_rows<T: ToString>(rows: &[Vec<T>]) -> Vec<Vec<String>> {
    rows.iter()
        .enumerate()
        .map(|(r, row)| {
            std::iter::once(r.to_string())
                .chain(row.iter().map(T::to_string))
                .collect()
        })
        .collect()
}

/// Full grids up to this many ranks; beyond, the largest entries as a list.
const MAX_GRID_RANKS: u32 = 32;
/// Entries listed for larger matrices.
const TOP_ENTRIES: usize = 20;

fn human(m: &CommMatrix, f: &Filtered, metric: Metric) -> String {
    let n = m.ranks();
    let name = match metric {
        Metric::Bytes => "bytes",
        Metric::Messages => "messages",
    };
    let mut o = format!(
        "{n} ranks, {} messages, {} bytes (row = sender, column = receiver)\n",
        m.total(Metric::Messages),
        m.total(Metric::Bytes)
    );
    if n <= MAX_GRID_RANKS {
        let header: Vec<String> = std::iter::once(name.to_string())
            .chain((0..n).map(|r| r.to_string()))
            .collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let right: Vec<usize> = (0..=n as usize).collect();
        o += &table(&header, number_rows(&m.dense_rows(metric)), &right);
        o += "\nbinary after filtering\n";
        let binary: Vec<String> = f
            .dense_rows(m)
            .iter()
            .enumerate()
            .map(|(r, row)| {
                let cells: Vec<String> = row.iter().map(u8::to_string).collect();
                format!("{r:>5}  {}", cells.join(" "))
            })
            .collect();
        o += &binary.join("\n");
        o += "\n";
    } else {
        let mut entries: Vec<(Entry, bool)> = m
            .entries()
            .zip(f.kept.iter().copied())
            .filter(|(e, _)| e.value(metric) > 0)
            .collect();
        let count = entries.len();
        let top = TOP_ENTRIES.min(count);
        let by_value = |a: &(Entry, bool), b: &(Entry, bool)| {
            (b.0.value(metric).cmp(&a.0.value(metric))).then((a.0.from, a.0.to).cmp(&(b.0.from, b.0.to)))
        };
        if top < count {
            entries.select_nth_unstable_by(top, by_value);
            entries.truncate(top);
        }
        entries.sort_by(by_value);
        let rows = entries
            .iter()
            .map(|(e, kept)| {
                vec![
                    e.from.to_string(),
                    e.to.to_string(),
                    e.value(metric).to_string(),
                    u8::from(*kept).to_string(),
                ]
            })
            .collect();
        o += &format!("largest {top} of {count} non-zero entries\n");
        o += &table(&["sender", "receiver", name, "kept"], rows, &[0, 1, 2, 3]);
    }
    o += &format!(
        "threshold {}% of the largest entry by {name}: {} entries kept, {} removed carrying {:.3}% of the {name}\n",
        f.threshold_pct,
        f.kept_entries,
        f.removed_entries,
        100.0 * f.removed_share
    );
    o
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

    fn csv_text(write: impl FnOnce(&mut csv::Writer<&mut Vec<u8>>) -> csv::Result<()>) -> String {
        let mut bytes = Vec::new();
        let mut w = csv::Writer::from_writer(&mut bytes);
        write(&mut w).unwrap();
        w.flush().unwrap();
        drop(w);
        String::from_utf8(bytes).unwrap()
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

    #[test]
    fn streamed_csv_grid_is_the_dense_grid() {
        let m = matrix();
        let f = m.filter(Metric::Bytes, 5.0);
        for (cell, dense) in [
            (Cell::Bytes, number_rows(&m.dense_rows(Metric::Bytes))),
            (Cell::Kept, number_rows(&f.dense_rows(&m))),
        ] {
            let text = csv_text(|w| write_dense_csv(w, DenseRows::new(&m, &f, cell), m.ranks()));
            let mut lines = text.lines();
            assert_eq!(lines.next(), Some("sender,0,1,2,3,4"));
            let expected: Vec<String> = dense.iter().map(|r| r.join(",")).collect();
            assert_eq!(lines.collect::<Vec<_>>(), expected, "{cell:?}");
        }
        assert_eq!(
            csv_text(|w| write_dense_csv(w, DenseRows::new(&m, &f, Cell::Messages), m.ranks()))
                .lines()
                .nth(2),
            Some("1,2,0,1,0,0")
        );
    }

    #[test]
    fn sparse_csv_repeats_the_rank_count_on_every_line() {
        let m = matrix();
        let f = m.filter(Metric::Bytes, 5.0);
        let text = csv_text(|w| write_sparse_csv(w, EntryList::new(&m, &f), m.ranks()));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "from,to,bytes,messages,kept,ranks");
        assert_eq!(
            lines[1..],
            [
                "0,0,500,1,0,5",
                "0,1,3000,3,1,5",
                "0,4,3000,3,1,5",
                "1,0,0,2,0,5",
                "1,2,10,1,0,5",
                "3,0,1000,1,1,5",
                "3,4,2000,2,1,5"
            ]
        );
        let none = CommMatrix::from_entries(3, []).unwrap();
        let text = csv_text(|w| write_sparse_csv(w, EntryList::new(&none, &none.filter(Metric::Bytes, 5.0)), 3));
        assert_eq!(text, "from,to,bytes,messages,kept,ranks\n");
    }
}
