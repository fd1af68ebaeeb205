//! What `tracelogic matrix` prints: the text tables, the CSV grid or list, and the JSON
//! document (streamed: the dense tables are written one row at a time).

use crate::common::{emit, print_csv, print_json, table, CliError};
use std::io::Write;
use tracelogic_engine::documents::{self, Cell, DenseRows, EntryList, WaitingRows, MAX_MATRIX_RANKS};
use tracelogic_engine::matrix::{CommMatrix, Entry, Filtered, MatrixReport, Metric, WaitingMatrix};

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
        print_json(&documents::matrix(report))
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
        w.write_field(text.format(row.rank()))?;
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
