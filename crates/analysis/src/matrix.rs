//! Rank-to-rank communication matrix and low-volume filtering (seed 000 §4.1).
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

/// Point-to-point traffic between every pair of ranks; row = sender, column = receiver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommMatrix {
    /// Number of ranks (the matrices are `ranks × ranks`, row-major).
    pub ranks: u32,
    /// Bytes sent from row rank to column rank.
    pub bytes: Vec<u64>,
    /// Messages sent from row rank to column rank.
    pub messages: Vec<u64>,
}

/// The binary matrix left after removing low-volume entries, and what removing them cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Filtered {
    /// Threshold used, in percent of the largest off-diagonal entry.
    pub threshold_pct: f64,
    /// Metric the threshold applied to.
    pub metric: Metric,
    /// 0/1 per entry, row-major `ranks × ranks`.
    pub binary: Vec<u8>,
    /// Entries that were non-zero before filtering and are 0 after.
    pub removed_entries: u64,
    /// Share (0..1) of the metric's total carried by the removed entries.
    pub removed_share: f64,
}

/// Most ranks a dense matrix is built for: `ranks²` entries of 16 bytes are 4 GiB at 16,384
/// ranks, all a 32-bit (WebAssembly) address space holds. A trace file of a few bytes can
/// declare more ranks than that, so the count is checked before allocating.
pub const MAX_DENSE_RANKS: u32 = 16_384;

impl CommMatrix {
    /// Build the matrix of the point-to-point sends in `selection`: a send counts when
    /// [`Selection::selects_p2p`] selects it on the sender and its receiver is a selected rank
    /// too (so a rank selection gives the traffic among those ranks). Sends to a peer that is
    /// not a world rank of the trace are ignored.
    ///
    /// Panics, with a message saying why, when the matrix cannot be allocated (see
    /// [`CommMatrix::try_from_trace`], which returns that as an error instead).
    pub fn from_trace(trace: &Trace, selection: &Selection) -> CommMatrix {
        CommMatrix::try_from_trace(trace, selection).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`CommMatrix::from_trace`], or an error when the trace has more than
    /// [`MAX_DENSE_RANKS`] ranks or the `ranks²` entries cannot be allocated.
    pub fn try_from_trace(trace: &Trace, selection: &Selection) -> Result<CommMatrix, String> {
        let n = trace.num_ranks();
        let too_large = || {
            format!(
                "a communication matrix of {n} ranks needs {} bytes ({n}² entries); at most {MAX_DENSE_RANKS} ranks \
                 are supported",
                2 * 8 * n as u128 * n as u128
            )
        };
        if n > MAX_DENSE_RANKS {
            return Err(too_large());
        }
        let size = n as usize * n as usize;
        let mut bytes = Vec::new();
        let mut messages = Vec::new();
        bytes.try_reserve_exact(size).map_err(|_| too_large())?;
        messages.try_reserve_exact(size).map_err(|_| too_large())?;
        bytes.resize(size, 0);
        messages.resize(size, 0);
        let mut m = CommMatrix {
            ranks: n,
            bytes,
            messages,
        };
        let receivers: Vec<bool> = (0..n).map(|r| selection.selects_rank(trace, r)).collect();
        for rt in &trace.ranks {
            if !receivers[rt.rank as usize] {
                continue;
            }
            let p = &rt.p2p;
            for i in 0..p.len() {
                if p.dir[i] != P2pDir::Send || p.peer[i] >= n || !receivers[p.peer[i] as usize] {
                    continue;
                }
                if !selection.selects_p2p(trace, rt.rank, i) {
                    continue;
                }
                let at = rt.rank as usize * n as usize + p.peer[i] as usize;
                // Saturating: a hostile trace may claim sizes whose sum exceeds u64.
                m.bytes[at] = m.bytes[at].saturating_add(p.bytes[i]);
                m.messages[at] += 1;
            }
        }
        Ok(m)
    }

    /// The entries of `metric`, row-major.
    pub fn values(&self, metric: Metric) -> &[u64] {
        match metric {
            Metric::Bytes => &self.bytes,
            Metric::Messages => &self.messages,
        }
    }

    /// The entries of `metric` as one `Vec` per sending rank.
    pub fn rows(&self, metric: Metric) -> Vec<Vec<u64>> {
        let n = (self.ranks as usize).max(1);
        self.values(metric).chunks(n).map(<[u64]>::to_vec).collect()
    }

    /// Sum of all entries of `metric`.
    pub fn total(&self, metric: Metric) -> u64 {
        self.values(metric).iter().sum()
    }

    /// True when the matrix holds no traffic at all.
    pub fn is_empty(&self) -> bool {
        self.messages.iter().all(|&m| m == 0)
    }

    /// Remove entries below `threshold_pct` percent of the largest off-diagonal entry of
    /// `metric` (rule in the module documentation and `docs/cli.md`) and binarise. A threshold
    /// that is not a number counts as 0 (keep every non-zero entry).
    pub fn filter(&self, metric: Metric, threshold_pct: f64) -> Filtered {
        let n = self.ranks as usize;
        let values = self.values(metric);
        let pct = if threshold_pct.is_nan() { 0.0 } else { threshold_pct };
        let off_diagonal = |i: usize| i / n.max(1) != i % n.max(1);
        let max = (0..values.len())
            .filter(|&i| off_diagonal(i))
            .map(|i| values[i])
            .max()
            .unwrap_or(0);
        let cut = pct / 100.0 * max as f64;
        let mut binary = vec![0u8; values.len()];
        let mut removed_entries = 0u64;
        let mut removed = 0u64;
        for (i, &v) in values.iter().enumerate() {
            if v == 0 {
                continue;
            }
            if off_diagonal(i) && v as f64 >= cut {
                binary[i] = 1;
            } else {
                removed_entries += 1;
                removed += v;
            }
        }
        let total = self.total(metric);
        Filtered {
            threshold_pct: pct,
            metric,
            binary,
            removed_entries,
            removed_share: if total == 0 { 0.0 } else { removed as f64 / total as f64 },
        }
    }
}

impl Filtered {
    /// The binary matrix as one row per sending rank.
    pub fn rows(&self, ranks: u32) -> Vec<Vec<u8>> {
        let n = (ranks as usize).max(1);
        self.binary.chunks(n).map(<[u8]>::to_vec).collect()
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
    /// topology` abort on a 68 GB allocation; now the count is refused before allocating.
    #[test]
    fn too_many_ranks_for_a_dense_matrix_is_an_error_not_an_abort() {
        let huge = Trace::new("test", "test", MAX_DENSE_RANKS + 1);
        let e = CommMatrix::try_from_trace(&huge, &Selection::all()).unwrap_err();
        assert!(e.contains("16385 ranks") && e.contains("at most 16384"), "{e}");
        let caught = std::panic::catch_unwind(|| CommMatrix::from_trace(&huge, &Selection::all()));
        assert!(
            caught.is_err(),
            "from_trace must panic (catchable), not build the matrix"
        );
        let small = Trace::new("test", "test", 3);
        let m = CommMatrix::try_from_trace(&small, &Selection::all()).unwrap();
        assert_eq!((m.ranks, m.bytes.len(), m.messages.len()), (3, 9, 9));
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
        assert_eq!(m.ranks, 4);
        assert_eq!(m.rows(Metric::Bytes)[0], vec![0, 3000, 10, 0]);
        assert_eq!(m.rows(Metric::Messages)[3], vec![3, 0, 0, 0]);
        assert_eq!(m.total(Metric::Messages), 13);
        assert_eq!(m.total(Metric::Bytes), 12_010);
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
        assert_eq!(m.bytes[3 * 4], 0);
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
        assert_eq!(f.rows(4)[0], vec![0, 1, 0, 0]);
        assert_eq!(f.binary.iter().map(|&b| b as u32).sum::<u32>(), 4);
        assert_eq!(f.removed_entries, 1);
        assert!((f.removed_share - 10.0 / 12_010.0).abs() < 1e-12);
        // 10 bytes is 1/3 % of 3000: kept at 0.3 %, removed at 0.34 %.
        assert_eq!(m.filter(Metric::Bytes, 0.3).binary[2], 1);
        assert_eq!(m.filter(Metric::Bytes, 0.34).binary[2], 0);
        // By messages the stray entry is 1 of 3.
        assert_eq!(m.filter(Metric::Messages, 33.0).binary[2], 1);
        assert_eq!(m.filter(Metric::Messages, 34.0).binary[2], 0);
        assert_eq!(m.filter(Metric::Bytes, f64::NAN).removed_entries, 0);
    }

    #[test]
    fn binary_is_not_symmetrised_and_diagonal_is_zero() {
        let mut t = Trace::new("test", "test", 2);
        send(&mut t, 0, 1, 100, 1, "MPI_Send");
        send(&mut t, 1, 1, 500, 2, "MPI_Send");
        let m = CommMatrix::from_trace(&t, &Selection::all());
        let f = m.filter(Metric::Bytes, 5.0);
        assert_eq!(f.rows(2), vec![vec![0, 1], vec![0, 0]]);
        assert_eq!(f.removed_entries, 1);
        assert!((f.removed_share - 500.0 / 600.0).abs() < 1e-12);
    }

    #[test]
    fn empty_and_out_of_range_peers() {
        let mut t = Trace::new("test", "test", 2);
        send(&mut t, 0, 7, 100, 1, "MPI_Send");
        let m = CommMatrix::from_trace(&t, &Selection::all());
        assert!(m.is_empty());
        let f = m.filter(Metric::Bytes, 5.0);
        assert_eq!((f.removed_entries, f.removed_share), (0, 0.0));
        let none = CommMatrix::from_trace(&Trace::new("test", "test", 0), &Selection::all());
        assert!(none.rows(Metric::Bytes).is_empty());
    }
}
