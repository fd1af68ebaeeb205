//! The lines of a declared process grid that have communicators of their own, and the traffic
//! on them.
//!
//! A dense linear-algebra library's process grid (ScaLAPACK/BLACS in CP2K, HPL's P×Q grid)
//! talks along its rows and columns by collectives on row and column communicators
//! (`MPI_Cart_sub` keeping one dimension, or `MPI_Comm_split` by row or column). The
//! point-to-point graph never shows that traffic, so a grid declared with `MPI_Cart_create`
//! looks unused when compared with the graph alone. A *line* along dimension `k` is the set of
//! members whose coordinates agree except in `k`; a communicator whose members are exactly one
//! line is one of that dimension's line communicators, whatever created it.
//!
//! Cost: O(R) per dimension to build the lines, O(C·s log s) over the C communicators of size s
//! equal to an extent, and one pass over the operations for the traffic per communicator.
//!
//! ```
//! use tracelogic_analysis::topology::grid_lines::{line_traffic, CommTraffic};
//! use tracelogic_model::{CollectiveOp, Trace, NO_CALLPATH, NO_ROOT};
//! let mut t = Trace::new("doc", "text", 4);
//! let row = t.add_comm("row 0", vec![0, 1]);
//! for r in 0..2 {
//!     let c = t.push_call(r, "MPI_Bcast", 0, 1, NO_CALLPATH, 0);
//!     t.push_collective(r, c, CollectiveOp::Bcast, row, 0, 8, 8);
//! }
//! // A 2x2 grid, ranks row-major: rows {0, 1} and {2, 3}, columns {0, 2} and {1, 3}.
//! let coords = vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]];
//! let lines = line_traffic(&t, &[0, 1, 2, 3], &coords, &[2, 2], &CommTraffic::of(&t));
//! assert_eq!(lines[1].lines_with_communicator, 1); // dimension 1 runs along a row
//! assert_eq!(lines[1].collective_calls, 2);
//! assert_eq!(lines[0].communicators, 0);
//! ```

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use tracelogic_model::{P2pDir, Trace};

/// The line communicators of one dimension of a declared grid and what they carried.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineTraffic {
    /// The dimension (0 first, as declared).
    pub dim: usize,
    /// Its extent: the size of each line.
    pub extent: u32,
    /// Lines of the grid along it (grid ranks / extent).
    pub lines: usize,
    /// Lines with at least one communicator over exactly their members.
    pub lines_with_communicator: usize,
    /// Communicators that are such lines (a program may create several per line).
    pub communicators: usize,
    /// Collective calls made on them, counted per rank (an `MPI_Bcast` on a line of 4 is 4).
    pub collective_calls: u64,
    /// Bytes those calls contributed (send buffers).
    pub collective_bytes: u64,
    /// Point-to-point messages sent on them.
    pub p2p_messages: u64,
    /// Bytes of those messages.
    pub p2p_bytes: u64,
}

/// Operations per communicator of a trace, indexed by communicator id: collective calls and
/// their bytes, point-to-point sends and their bytes.
#[derive(Debug, Clone, Default)]
pub struct CommTraffic(Vec<[u64; 4]>);

impl CommTraffic {
    /// One pass over every rank's collectives and point-to-point sends.
    pub fn of(trace: &Trace) -> Self {
        let mut per = vec![[0u64; 4]; trace.comms.len()];
        for rt in &trace.ranks {
            let c = &rt.collectives;
            for i in 0..c.len() {
                if let Some(e) = per.get_mut(c.comm[i] as usize) {
                    e[0] += 1;
                    e[1] = e[1].saturating_add(c.bytes_sent[i]);
                }
            }
            let p = &rt.p2p;
            for i in 0..p.len() {
                if p.dir[i] == P2pDir::Send {
                    if let Some(e) = per.get_mut(p.comm[i] as usize) {
                        e[2] += 1;
                        e[3] = e[3].saturating_add(p.bytes.at(i));
                    }
                }
            }
        }
        CommTraffic(per)
    }

    /// Collective calls, their bytes, point-to-point sends and their bytes on `comm`.
    pub(crate) fn get(&self, comm: usize) -> [u64; 4] {
        self.0.get(comm).copied().unwrap_or_default()
    }
}

/// Per dimension of extent at least 2, the line communicators of the grid whose member `i`
/// (world rank `members[i]`) sits at `coords[i]` in a grid of extents `dims`. Empty when fewer
/// than two dimensions have an extent of 2 or more: a line would then be the whole grid.
pub fn line_traffic(
    trace: &Trace,
    members: &[u32],
    coords: &[Vec<u32>],
    dims: &[u32],
    traffic: &CommTraffic,
) -> Vec<LineTraffic> {
    if dims.iter().filter(|&&d| d >= 2).count() < 2 || members.len() != coords.len() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (k, &extent) in dims.iter().enumerate() {
        if extent < 2 {
            continue;
        }
        // Group the members by their coordinates without dimension k.
        let mut groups: HashMap<Vec<u32>, Vec<u32>> = HashMap::new();
        for (i, c) in coords.iter().enumerate() {
            let mut key = c.clone();
            if k < key.len() {
                key.remove(k);
            }
            groups.entry(key).or_default().push(members[i]);
        }
        let mut line_of: HashMap<Vec<u32>, usize> = HashMap::with_capacity(groups.len());
        for (i, mut g) in groups.into_values().enumerate() {
            g.sort_unstable();
            line_of.insert(g, i);
        }
        let mut found = vec![false; line_of.len()];
        let mut lt = LineTraffic {
            dim: k,
            extent,
            lines: line_of.len(),
            ..LineTraffic::default()
        };
        for (id, comm) in trace.comms.iter().enumerate() {
            if comm.members.len() != extent as usize {
                continue;
            }
            let mut m = comm.members.clone();
            m.sort_unstable();
            let Some(&line) = line_of.get(&m) else { continue };
            found[line] = true;
            lt.communicators += 1;
            let [calls, cbytes, sends, pbytes] = traffic.get(id);
            lt.collective_calls += calls;
            lt.collective_bytes = lt.collective_bytes.saturating_add(cbytes);
            lt.p2p_messages += sends;
            lt.p2p_bytes = lt.p2p_bytes.saturating_add(pbytes);
        }
        lt.lines_with_communicator = found.iter().filter(|&&f| f).count();
        out.push(lt);
    }
    out
}

/// One sentence on a dimension's line communicators, or `None` when it has none.
pub fn describe(l: &LineTraffic) -> Option<String> {
    if l.communicators == 0 {
        return None;
    }
    let mut s = format!(
        "dimension {} (extent {}): {} of its {} lines have communicators of their own ({} in all), carrying {} \
         collective calls ({} bytes)",
        l.dim, l.extent, l.lines_with_communicator, l.lines, l.communicators, l.collective_calls, l.collective_bytes
    );
    if l.p2p_messages > 0 {
        s.push_str(&format!(
            " and {} point-to-point messages ({} bytes)",
            l.p2p_messages, l.p2p_bytes
        ));
    }
    Some(s)
}
