//! Rank-to-rank communication matrix and low-volume filtering (Logicalization §4.1).
//!
//! The full matrix counts the point-to-point send operations of a trace (bytes and messages,
//! row = sending world rank, column = receiving world rank). The paper then removes "very low
//! level communication ... based on a threshold" (5 % in its experiments) and binarises.
//! It does not say relative to what; its example (Table 4, 16-process MG) removes entries of
//! about 0.5 % "compared to the main communication pattern", i.e. compared to the dominant
//! entries of the whole matrix. We therefore use the **largest off-diagonal entry of the whole
//! matrix** as the reference: an entry survives when it is non-zero and at least
//! `threshold_pct / 100 × max`. A per-row reference would keep the stray traffic of a rank
//! whose only traffic is stray, which is exactly what the filter is meant to drop.
//!
//! The binary matrix is **not** symmetrised: the paper's binary matrices are direct
//! thresholdings of the full matrix (which happen to be symmetric for its benchmarks). The
//! topology stage symmetrises the graph anyway. The diagonal (a rank sending to itself) is
//! counted in the full matrix but is always 0 in the binary one, since it is no edge of a
//! communication topology; its traffic counts as removed.
//!
//! **Storage.** Real MPI traffic is sparse: a rank talks to a handful of peers (or to all of
//! them in all-to-all codes). The matrix is therefore kept in compressed sparse rows by sender
//! (the layout of `petgraph::csr` and of sparse-matrix libraries): `row_start[r]..row_start[r
//! + 1]` indexes the entries of sender `r`, sorted by receiver, and only pairs that exchanged
//! at least one message are stored. Memory is O(ranks + non-zero entries) and building,
//! filtering and reading it are linear in them, where the dense `ranks²` form took 268 MB at
//! 4,096 ranks. [`Filtered`] keeps one kept-flag per stored entry. Dense rows are still
//! available ([`CommMatrix::dense_rows`]) for displays of small matrices.

use serde::{Deserialize, Serialize};
use tracelogic_model::{P2pDir, Selection, Trace};

/// Which quantity a matrix counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Bytes sent.
    Bytes,
    /// Messages sent.
    Messages,
}

/// The traffic from one rank to another: one stored (non-zero) entry of a [`CommMatrix`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Sending world rank (row).
    pub from: u32,
    /// Receiving world rank (column).
    pub to: u32,
    /// Bytes sent from `from` to `to`.
    pub bytes: u64,
    /// Messages sent from `from` to `to`.
    pub messages: u64,
}

impl Entry {
    /// The entry's value of `metric`.
    pub fn value(&self, metric: Metric) -> u64 {
        match metric {
            Metric::Bytes => self.bytes,
            Metric::Messages => self.messages,
        }
    }
}

/// Point-to-point traffic between pairs of ranks; row = sender, column = receiver. Sparse:
/// only pairs with traffic are stored, in compressed rows by sender (module documentation).
/// Absent pairs read as 0 ([`CommMatrix::get`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "SparseForm", into = "SparseForm")]
pub struct CommMatrix {
    ranks: u32,
    /// `ranks + 1` offsets: the entries of sender `r` are `row_start[r]..row_start[r + 1]`.
    row_start: Vec<usize>,
    /// Receiver of each entry, increasing within a row.
    to: Vec<u32>,
    bytes: Vec<u64>,
    messages: Vec<u64>,
}

/// The serde form of a [`CommMatrix`]: its compressed rows as plain fields, checked on the way
/// in (a hand-edited or hostile JSON must not give out-of-range indices).
#[derive(Serialize, Deserialize)]
struct SparseForm {
    ranks: u32,
    row_start: Vec<usize>,
    to: Vec<u32>,
    bytes: Vec<u64>,
    messages: Vec<u64>,
}

impl From<CommMatrix> for SparseForm {
    fn from(m: CommMatrix) -> SparseForm {
        SparseForm {
            ranks: m.ranks,
            row_start: m.row_start,
            to: m.to,
            bytes: m.bytes,
            messages: m.messages,
        }
    }
}

impl TryFrom<SparseForm> for CommMatrix {
    type Error = String;

    fn try_from(f: SparseForm) -> Result<CommMatrix, String> {
        let nnz = f.to.len();
        if f.row_start.len() != f.ranks as usize + 1 {
            return Err(format!(
                "row_start has {} offsets, {} ranks need {}",
                f.row_start.len(),
                f.ranks,
                f.ranks as u64 + 1
            ));
        }
        if f.bytes.len() != nnz || f.messages.len() != nnz {
            return Err(format!(
                "{nnz} receivers but {} byte and {} message counts",
                f.bytes.len(),
                f.messages.len()
            ));
        }
        if f.row_start[0] != 0 || f.row_start[f.ranks as usize] != nnz {
            return Err(format!("row_start must run from 0 to {nnz}"));
        }
        for r in 0..f.ranks as usize {
            let (a, b) = (f.row_start[r], f.row_start[r + 1]);
            if a > b || b > nnz {
                return Err(format!("row_start of rank {r} is not increasing"));
            }
            let row = &f.to[a..b];
            if row.iter().any(|&t| t >= f.ranks) || row.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!("receivers of rank {r} are not increasing world ranks"));
            }
        }
        Ok(CommMatrix {
            ranks: f.ranks,
            row_start: f.row_start,
            to: f.to,
            bytes: f.bytes,
            messages: f.messages,
        })
    }
}

/// The filtered matrix: which entries survive the low-volume threshold (the binary matrix,
/// stored as one flag per entry of the [`CommMatrix`] it was filtered from), and what removing
/// the others cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Filtered {
    /// Threshold used, in percent of the largest off-diagonal entry.
    pub threshold_pct: f64,
    /// Metric the threshold applied to.
    pub metric: Metric,
    /// Kept (1 in the binary matrix) per stored entry, in the order of
    /// [`CommMatrix::entries`]; pairs without traffic are 0.
    pub kept: Vec<bool>,
    /// Entries kept: the 1s of the binary matrix.
    pub kept_entries: u64,
    /// Entries that were non-zero before filtering and are 0 after.
    pub removed_entries: u64,
    /// Share (0..1) of the metric's total carried by the removed entries.
    pub removed_share: f64,
}

/// Ranks up to which a dense `ranks × ranks` form (JSON rows, CSV grid) is still produced for
/// display: 8192² entries are 67 M numbers per table. The sparse matrix itself has no limit.
pub const MAX_DENSE_RANKS: u32 = 8_192;

/// A sender with at least `ranks / DENSE_ROW_SHARE` peers has its row read off the scratch
/// row in rank order (O(ranks)) instead of sorting its peers (O(peers log peers)).
const DENSE_ROW_SHARE: usize = 16;

/// Which world ranks `selection` selects, as [`Selection::selects_rank`] decides, in
/// O(ranks + listed ranks + communicator members) instead of a list search per rank.
fn selected_ranks(trace: &Trace, selection: &Selection) -> Vec<bool> {
    let n = trace.num_ranks() as usize;
    let mut selected = match &selection.ranks {
        None => vec![true; n],
        Some(list) => {
            let mut s = vec![false; n];
            for &r in list {
                if let Some(x) = s.get_mut(r as usize) {
                    *x = true;
                }
            }
            s
        }
    };
    if let Some(c) = selection.comm {
        let mut member = vec![false; n];
        if let Some(comm) = trace.comms.get(c as usize) {
            for &r in &comm.members {
                if let Some(x) = member.get_mut(r as usize) {
                    *x = true;
                }
            }
        }
        for (s, m) in selected.iter_mut().zip(member) {
            *s &= m;
        }
    }
    selected
}

impl CommMatrix {
    /// Build the matrix of the point-to-point sends in `selection`: a send counts when
    /// [`Selection::selects_p2p`] selects it on the sender and its receiver is a selected rank
    /// too (so a rank selection gives the traffic among those ranks). Sends to a peer that is
    /// not a world rank of the trace are ignored.
    ///
    /// O(sends + ranks + entries × log(peers per rank)) time, O(ranks + entries) memory: each
    /// sender's traffic is summed in a per-peer scratch row (reused, reset through the list of
    /// peers it touched) and its peers are sorted once, or read off the scratch row in order
    /// when they are a sixteenth of the ranks or more.
    pub fn from_trace(trace: &Trace, selection: &Selection) -> CommMatrix {
        let n = trace.num_ranks();
        let receivers = selected_ranks(trace, selection);
        let mut m = CommMatrix {
            ranks: n,
            row_start: Vec::with_capacity(n as usize + 1),
            to: Vec::new(),
            bytes: Vec::new(),
            messages: Vec::new(),
        };
        m.row_start.push(0);
        let mut row_bytes = vec![0u64; n as usize];
        let mut row_messages = vec![0u64; n as usize];
        let mut peers: Vec<u32> = Vec::new();
        for (sender, rt) in trace.ranks.iter().enumerate() {
            if receivers[sender] {
                let p = &rt.p2p;
                for i in 0..p.len() {
                    let peer = p.peer[i];
                    if p.dir[i] != P2pDir::Send || peer >= n || !receivers[peer as usize] {
                        continue;
                    }
                    if !selection.selects_p2p_of(rt, i) {
                        continue;
                    }
                    let at = peer as usize;
                    if row_messages[at] == 0 {
                        peers.push(peer);
                    }
                    // Saturating: a hostile trace may claim sizes whose sum exceeds u64.
                    row_bytes[at] = row_bytes[at].saturating_add(p.bytes.at(i));
                    row_messages[at] += 1;
                }
                if peers.len() >= n as usize / DENSE_ROW_SHARE {
                    // A sender that reaches a good share of the ranks (all-to-all codes): one
                    // pass over the scratch row costs less than sorting its peers.
                    peers.clear();
                    peers.extend((0..n).filter(|&peer| row_messages[peer as usize] > 0));
                } else {
                    peers.sort_unstable();
                }
                for &peer in &peers {
                    let at = peer as usize;
                    m.to.push(peer);
                    m.bytes.push(std::mem::take(&mut row_bytes[at]));
                    m.messages.push(std::mem::take(&mut row_messages[at]));
                }
                peers.clear();
            }
            m.row_start.push(m.to.len());
        }
        m
    }

    /// [`CommMatrix::from_trace`] as a `Result`, for callers written when the dense matrix
    /// refused large traces; the sparse matrix is built for any rank count, so this is always
    /// `Ok`.
    pub fn try_from_trace(trace: &Trace, selection: &Selection) -> Result<CommMatrix, String> {
        Ok(CommMatrix::from_trace(trace, selection))
    }

    /// A matrix of `ranks` ranks holding `entries` (any order; the traffic of repeated pairs is
    /// added up, entries with neither bytes nor messages are dropped). Used by readers of
    /// matrices saved by other tools and by tests. Errors name the first entry whose rank is
    /// not below `ranks`.
    pub fn from_entries(ranks: u32, entries: impl IntoIterator<Item = Entry>) -> Result<CommMatrix, String> {
        let mut list: Vec<Entry> = Vec::new();
        for (i, e) in entries.into_iter().enumerate() {
            if e.from >= ranks || e.to >= ranks {
                return Err(format!(
                    "entry {i} ({} → {}) names a rank outside the {ranks} ranks",
                    e.from, e.to
                ));
            }
            if e.bytes > 0 || e.messages > 0 {
                list.push(e);
            }
        }
        list.sort_unstable_by_key(|e| (e.from, e.to));
        let mut m = CommMatrix {
            ranks,
            row_start: vec![0; ranks as usize + 1],
            to: Vec::with_capacity(list.len()),
            bytes: Vec::with_capacity(list.len()),
            messages: Vec::with_capacity(list.len()),
        };
        let mut last: Option<(u32, u32)> = None;
        for e in list {
            if last == Some((e.from, e.to)) {
                let k = m.to.len() - 1;
                m.bytes[k] = m.bytes[k].saturating_add(e.bytes);
                m.messages[k] = m.messages[k].saturating_add(e.messages);
                continue;
            }
            last = Some((e.from, e.to));
            m.to.push(e.to);
            m.bytes.push(e.bytes);
            m.messages.push(e.messages);
            m.row_start[e.from as usize + 1] += 1;
        }
        for r in 0..ranks as usize {
            m.row_start[r + 1] += m.row_start[r];
        }
        Ok(m)
    }

    /// A matrix from dense row-major `ranks × ranks` tables of bytes and messages (the old
    /// layout; for tests and small hand-written matrices). Errors when a table's length is not
    /// `ranks²`.
    pub fn from_dense(ranks: u32, bytes: &[u64], messages: &[u64]) -> Result<CommMatrix, String> {
        let n = ranks as usize;
        if bytes.len() != n * n || messages.len() != n * n {
            return Err(format!(
                "{} byte and {} message values for {ranks} ranks (need {})",
                bytes.len(),
                messages.len(),
                n * n
            ));
        }
        let entries = (0..n * n).filter(|&i| bytes[i] > 0 || messages[i] > 0).map(|i| Entry {
            from: (i / n) as u32,
            to: (i % n) as u32,
            bytes: bytes[i],
            messages: messages[i],
        });
        CommMatrix::from_entries(ranks, entries)
    }

    /// Number of ranks (the matrix is `ranks × ranks`).
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    /// Number of stored entries: pairs (self-sends included) with any traffic.
    pub fn nonzero(&self) -> usize {
        self.to.len()
    }

    /// The stored entry from `from` to `to`, or `None` when the pair has no traffic (or a rank
    /// is out of range). A binary search in the sender's row.
    pub fn get(&self, from: u32, to: u32) -> Option<Entry> {
        self.position(from, to).map(|k| self.entry_at(from, k))
    }

    /// The value of `metric` from `from` to `to`; 0 for pairs without traffic.
    pub fn value(&self, metric: Metric, from: u32, to: u32) -> u64 {
        self.get(from, to).map_or(0, |e| e.value(metric))
    }

    /// Index (in [`CommMatrix::entries`] order) of the entry from `from` to `to`.
    pub fn position(&self, from: u32, to: u32) -> Option<usize> {
        if from >= self.ranks {
            return None;
        }
        let (a, b) = self.row_range(from);
        self.to[a..b].binary_search(&to).ok().map(|i| a + i)
    }

    fn row_range(&self, from: u32) -> (usize, usize) {
        (self.row_start[from as usize], self.row_start[from as usize + 1])
    }

    fn entry_at(&self, from: u32, k: usize) -> Entry {
        Entry {
            from,
            to: self.to[k],
            bytes: self.bytes[k],
            messages: self.messages[k],
        }
    }

    /// The entries of sender `from`, by increasing receiver (none for an out-of-range rank).
    pub fn row(&self, from: u32) -> impl Iterator<Item = Entry> + '_ {
        let (a, b) = if from < self.ranks {
            self.row_range(from)
        } else {
            (0, 0)
        };
        (a..b).map(move |k| self.entry_at(from, k))
    }

    /// Every stored entry, sorted by sender then receiver.
    pub fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        (0..self.ranks).flat_map(move |r| self.row(r))
    }

    /// The values of `metric` of the stored entries, in [`CommMatrix::entries`] order.
    pub fn entry_values(&self, metric: Metric) -> &[u64] {
        match metric {
            Metric::Bytes => &self.bytes,
            Metric::Messages => &self.messages,
        }
    }

    /// The full matrix of `metric` as one dense `Vec` per sending rank: `ranks²` values, for
    /// displays of small matrices (callers bound `ranks`, e.g. by [`MAX_DENSE_RANKS`]).
    pub fn dense_rows(&self, metric: Metric) -> Vec<Vec<u64>> {
        (0..self.ranks)
            .map(|r| {
                let mut row = vec![0; self.ranks as usize];
                for e in self.row(r) {
                    row[e.to as usize] = e.value(metric);
                }
                row
            })
            .collect()
    }

    /// Sum of all entries of `metric` (saturating: a hostile trace may claim more than u64).
    pub fn total(&self, metric: Metric) -> u64 {
        self.entry_values(metric).iter().fold(0u64, |t, &v| t.saturating_add(v))
    }

    /// The largest off-diagonal entry of `metric` (0 when there is none): the reference of the
    /// low-volume filter.
    pub fn max_off_diagonal(&self, metric: Metric) -> u64 {
        self.entries()
            .filter(|e| e.from != e.to)
            .map(|e| e.value(metric))
            .max()
            .unwrap_or(0)
    }

    /// Bytes of heap the matrix holds (its offsets, receivers and counts): O(ranks + entries),
    /// where the dense form took `16 × ranks²`.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.row_start.capacity() * size_of::<usize>()
            + self.to.capacity() * size_of::<u32>()
            + (self.bytes.capacity() + self.messages.capacity()) * size_of::<u64>()
    }

    /// True when the matrix holds no message at all.
    pub fn is_empty(&self) -> bool {
        self.messages.iter().all(|&m| m == 0)
    }

    /// Remove entries below `threshold_pct` percent of the largest off-diagonal entry of
    /// `metric` (rule in the module documentation and `docs/cli.md`) and binarise. A threshold
    /// that is not a number counts as 0 (keep every non-zero entry). O(entries).
    pub fn filter(&self, metric: Metric, threshold_pct: f64) -> Filtered {
        let pct = if threshold_pct.is_nan() { 0.0 } else { threshold_pct };
        let cut = pct / 100.0 * self.max_off_diagonal(metric) as f64;
        let mut kept = Vec::with_capacity(self.nonzero());
        let (mut kept_entries, mut removed_entries, mut removed) = (0u64, 0u64, 0u64);
        for e in self.entries() {
            let v = e.value(metric);
            let keep = v > 0 && e.from != e.to && v as f64 >= cut;
            kept.push(keep);
            if keep {
                kept_entries += 1;
            } else if v > 0 {
                removed_entries += 1;
                removed = removed.saturating_add(v);
            }
        }
        let total = self.total(metric);
        Filtered {
            threshold_pct: pct,
            metric,
            kept,
            kept_entries,
            removed_entries,
            removed_share: if total == 0 { 0.0 } else { removed as f64 / total as f64 },
        }
    }
}

impl Filtered {
    /// True when the entry from `from` to `to` of `matrix` (the matrix this was filtered from)
    /// survived the threshold: a 1 of the binary matrix.
    pub fn is_kept(&self, matrix: &CommMatrix, from: u32, to: u32) -> bool {
        matrix
            .position(from, to)
            .is_some_and(|k| self.kept.get(k).copied().unwrap_or(false))
    }

    /// The kept entries of `matrix` (the matrix this was filtered from), sorted by sender then
    /// receiver: the edges of the binary matrix.
    pub fn edges<'a>(&'a self, matrix: &'a CommMatrix) -> impl Iterator<Item = Entry> + 'a {
        matrix.entries().zip(&self.kept).filter(|(_, &k)| k).map(|(e, _)| e)
    }

    /// The binary matrix as one dense row of 0/1 per sending rank (`ranks²` values, for
    /// displays of small matrices).
    pub fn dense_rows(&self, matrix: &CommMatrix) -> Vec<Vec<u8>> {
        (0..matrix.ranks)
            .map(|r| {
                let mut row = vec![0; matrix.ranks as usize];
                let (a, b) = matrix.row_range(r);
                for k in a..b {
                    row[matrix.to[k] as usize] = u8::from(self.kept.get(k).copied().unwrap_or(false));
                }
                row
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_model::{CallKind, NO_CALLPATH};

    fn send(t: &mut Trace, from: u32, to: u32, bytes: u64, at: u64, func: &str) {
        let c = t.push_call(from, func, at, at + 1, NO_CALLPATH, 0);
        t.push_p2p(from, c, c, P2pDir::Send, to, 0, 0, bytes);
    }

    /// Regression (fuzzing): a 29-byte text trace declaring 65,536 ranks made `tracelogic
    /// topology` abort on a 68 GB allocation when the matrix was dense; the sparse matrix of
    /// such a trace holds one offset per rank and nothing else.
    #[test]
    fn many_ranks_without_traffic_take_one_offset_per_rank() {
        let huge = Trace::new("test", "test", 65_536);
        let m = CommMatrix::try_from_trace(&huge, &Selection::all()).unwrap();
        assert_eq!((m.ranks(), m.nonzero(), m.row_start.len()), (65_536, 0, 65_537));
        assert!(m.is_empty());
        assert_eq!(m.get(65_535, 0), None);
        let f = m.filter(Metric::Bytes, 5.0);
        assert_eq!((f.kept.len(), f.kept_entries, f.removed_entries), (0, 0, 0));
    }

    /// A ring of 4 ranks with 1000-byte messages, plus stray traffic 0 → 2 of 10 bytes.
    fn ring_with_noise() -> Trace {
        let mut t = Trace::new("test", "test", 4);
        for step in 0..3 {
            for r in 0..4 {
                send(&mut t, r, (r + 1) % 4, 1000, 100 * step + r as u64, "MPI_Isend");
            }
        }
        send(&mut t, 0, 2, 10, 1000, "MPI_Send");
        let c = t.push_call(1, "MPI_Recv", 5, 6, NO_CALLPATH, 0);
        t.push_p2p(1, c, c, P2pDir::Recv, 0, 0, 0, 1000);
        t
    }

    #[test]
    fn counts_sends_only() {
        let m = CommMatrix::from_trace(&ring_with_noise(), &Selection::all());
        assert_eq!(m.ranks(), 4);
        assert_eq!(m.dense_rows(Metric::Bytes)[0], vec![0, 3000, 10, 0]);
        assert_eq!(m.dense_rows(Metric::Messages)[3], vec![3, 0, 0, 0]);
        assert_eq!(m.total(Metric::Messages), 13);
        assert_eq!(m.total(Metric::Bytes), 12_010);
        assert_eq!(m.nonzero(), 5);
    }

    #[test]
    fn get_reads_stored_entries_and_zero_elsewhere() {
        let m = CommMatrix::from_trace(&ring_with_noise(), &Selection::all());
        let e = m.get(0, 2).unwrap();
        assert_eq!((e.from, e.to, e.bytes, e.messages), (0, 2, 10, 1));
        assert_eq!(m.get(1, 0), None, "1 only receives from 0");
        assert_eq!(m.get(2, 2), None);
        assert_eq!(m.get(4, 0), None, "sender out of range");
        assert_eq!(m.get(0, 99), None, "receiver out of range");
        assert_eq!(m.value(Metric::Bytes, 1, 0), 0);
        assert_eq!(m.value(Metric::Messages, 3, 0), 3);
        let row: Vec<u32> = m.row(0).map(|e| e.to).collect();
        assert_eq!(row, vec![1, 2]);
        assert_eq!(m.row(7).count(), 0);
        let all: Vec<(u32, u32)> = m.entries().map(|e| (e.from, e.to)).collect();
        assert_eq!(all, vec![(0, 1), (0, 2), (1, 2), (2, 3), (3, 0)]);
        assert_eq!(m.max_off_diagonal(Metric::Bytes), 3000);
    }

    #[test]
    fn selection_restricts_senders_receivers_time_and_kind() {
        let t = ring_with_noise();
        let among = Selection {
            ranks: Some(vec![0, 1, 2]),
            ..Default::default()
        };
        let m = CommMatrix::from_trace(&t, &among);
        assert_eq!(m.total(Metric::Messages), 3 + 3 + 1);
        assert_eq!(m.value(Metric::Bytes, 3, 0), 0);
        let early = Selection {
            to: Some(100),
            ..Default::default()
        };
        assert_eq!(CommMatrix::from_trace(&t, &early).total(Metric::Messages), 4);
        let blocking = Selection {
            kinds: Some(vec![CallKind::Send]),
            ..Default::default()
        };
        assert_eq!(CommMatrix::from_trace(&t, &blocking).total(Metric::Bytes), 10);
    }

    #[test]
    fn filter_is_relative_to_the_largest_entry() {
        let m = CommMatrix::from_trace(&ring_with_noise(), &Selection::all());
        let f = m.filter(Metric::Bytes, 5.0);
        assert_eq!(f.dense_rows(&m)[0], vec![0, 1, 0, 0]);
        assert_eq!(f.kept_entries, 4);
        assert_eq!(f.edges(&m).count(), 4);
        assert_eq!(f.removed_entries, 1);
        assert!((f.removed_share - 10.0 / 12_010.0).abs() < 1e-12);
        // 10 bytes is 1/3 % of 3000: kept at 0.3 %, removed at 0.34 %.
        assert!(m.filter(Metric::Bytes, 0.3).is_kept(&m, 0, 2));
        assert!(!m.filter(Metric::Bytes, 0.34).is_kept(&m, 0, 2));
        // By messages the stray entry is 1 of 3.
        assert!(m.filter(Metric::Messages, 33.0).is_kept(&m, 0, 2));
        assert!(!m.filter(Metric::Messages, 34.0).is_kept(&m, 0, 2));
        assert_eq!(m.filter(Metric::Bytes, f64::NAN).removed_entries, 0);
        assert!(!f.is_kept(&m, 1, 0), "absent pairs are 0");
    }

    #[test]
    fn binary_is_not_symmetrised_and_diagonal_is_zero() {
        let mut t = Trace::new("test", "test", 2);
        send(&mut t, 0, 1, 100, 1, "MPI_Send");
        send(&mut t, 1, 1, 500, 2, "MPI_Send");
        let m = CommMatrix::from_trace(&t, &Selection::all());
        let f = m.filter(Metric::Bytes, 5.0);
        assert_eq!(f.dense_rows(&m), vec![vec![0, 1], vec![0, 0]]);
        assert_eq!(f.removed_entries, 1);
        assert!((f.removed_share - 500.0 / 600.0).abs() < 1e-12);
    }

    #[test]
    fn empty_and_out_of_range_peers() {
        let mut t = Trace::new("test", "test", 2);
        send(&mut t, 0, 7, 100, 1, "MPI_Send");
        let m = CommMatrix::from_trace(&t, &Selection::all());
        assert!(m.is_empty());
        assert_eq!(m.nonzero(), 0);
        let f = m.filter(Metric::Bytes, 5.0);
        assert_eq!((f.removed_entries, f.removed_share), (0, 0.0));
        let none = CommMatrix::from_trace(&Trace::new("test", "test", 0), &Selection::all());
        assert!(none.dense_rows(Metric::Bytes).is_empty());
        assert_eq!(none.entries().count(), 0);
    }

    #[test]
    fn zero_byte_messages_are_stored_but_not_kept_by_bytes() {
        let mut t = Trace::new("test", "test", 3);
        send(&mut t, 0, 1, 0, 1, "MPI_Send");
        send(&mut t, 1, 2, 64, 2, "MPI_Send");
        let m = CommMatrix::from_trace(&t, &Selection::all());
        assert_eq!(m.nonzero(), 2);
        let by_bytes = m.filter(Metric::Bytes, 5.0);
        assert!(!by_bytes.is_kept(&m, 0, 1));
        assert_eq!((by_bytes.kept_entries, by_bytes.removed_entries), (1, 0));
        let by_messages = m.filter(Metric::Messages, 5.0);
        assert_eq!(by_messages.kept_entries, 2);
    }

    #[test]
    fn from_entries_sorts_merges_and_checks_ranks() {
        let e = |from, to, bytes| Entry {
            from,
            to,
            bytes,
            messages: 1,
        };
        let m = CommMatrix::from_entries(3, [e(2, 0, 5), e(0, 1, 7), e(2, 0, 1), e(0, 0, 0)]).unwrap();
        let all: Vec<Entry> = m.entries().collect();
        assert_eq!(
            all,
            vec![
                e(0, 0, 0),
                e(0, 1, 7),
                Entry {
                    messages: 2,
                    ..e(2, 0, 6)
                }
            ]
        );
        let nothing = Entry {
            messages: 0,
            ..e(1, 1, 0)
        };
        assert_eq!(CommMatrix::from_entries(3, [nothing]).unwrap().nonzero(), 0);
        let err = CommMatrix::from_entries(3, [e(0, 1, 1), e(1, 3, 1)]).unwrap_err();
        assert!(err.contains("entry 1") && err.contains("3 ranks"), "{err}");
        assert!(CommMatrix::from_dense(2, &[0, 1, 2], &[0, 1, 1, 0]).is_err());
    }

    #[test]
    fn serde_round_trips_and_rejects_broken_rows() {
        let m = CommMatrix::from_trace(&ring_with_noise(), &Selection::all());
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<CommMatrix>(&text).unwrap(), m);
        let broken = text.replace("\"to\":[1,2,", "\"to\":[2,1,");
        assert_ne!(broken, text);
        let e = serde_json::from_str::<CommMatrix>(&broken).unwrap_err().to_string();
        assert!(e.contains("receivers of rank 0"), "{e}");
        let short = r#"{"ranks":2,"row_start":[0,1],"to":[1],"bytes":[1],"messages":[1]}"#;
        let e = serde_json::from_str::<CommMatrix>(short).unwrap_err().to_string();
        assert!(e.contains("row_start has 2 offsets"), "{e}");
        let outside = r#"{"ranks":2,"row_start":[0,1,1],"to":[5],"bytes":[1],"messages":[1]}"#;
        assert!(serde_json::from_str::<CommMatrix>(outside).is_err());
    }
}
