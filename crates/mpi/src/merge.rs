//! Putting the processes' partial results together: the rows of the communication matrix and
//! the event columns of whole ranks, each sent as bytes.

use serde::{Deserialize, Serialize};
use std::ops::Range;
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_model::{Rank, RankTrace, Trace};

/// The compressed rows of a [`CommMatrix`] as its serde form has them (the same fields in the
/// same order, so the bytes of one are the bytes of the other).
#[derive(Serialize, Deserialize)]
struct Rows {
    ranks: u32,
    row_start: Vec<usize>,
    to: Vec<u32>,
    bytes: Vec<u64>,
    messages: Vec<u64>,
}

/// The bytes of the rows `block` of `m` (a process's matrix has traffic in its ranks' rows only).
pub fn encode_rows(m: &CommMatrix, block: Range<Rank>) -> Vec<u8> {
    let all: Rows = bincode::deserialize(&bincode::serialize(m).expect("a matrix serialises")).expect("same form");
    let (a, b) = (all.row_start[block.start as usize], all.row_start[block.end as usize]);
    let rows = Rows {
        ranks: all.ranks,
        row_start: all.row_start[block.start as usize..=block.end as usize]
            .iter()
            .map(|&s| s - a)
            .collect(),
        to: all.to[a..b].to_vec(),
        bytes: all.bytes[a..b].to_vec(),
        messages: all.messages[a..b].to_vec(),
    };
    bincode::serialize(&rows).expect("rows serialise")
}

/// The matrix whose rows are `parts[p]` ([`encode_rows`] of process `p`'s block), blocks in
/// rank order: every sender's row from the process that owns it. `None` when the parts do not
/// fit together (a bug in the sender).
pub fn matrix_of_rows(ranks: u32, parts: &[Vec<u8>]) -> Option<CommMatrix> {
    let mut m = Rows {
        ranks,
        row_start: vec![0],
        to: Vec::new(),
        bytes: Vec::new(),
        messages: Vec::new(),
    };
    for part in parts {
        let rows: Rows = bincode::deserialize(part).ok()?;
        if rows.ranks != ranks {
            return None;
        }
        let base = m.to.len();
        m.row_start.extend(rows.row_start[1..].iter().map(|&s| s + base));
        m.to.extend(rows.to);
        m.bytes.extend(rows.bytes);
        m.messages.extend(rows.messages);
    }
    if m.row_start.len() != ranks as usize + 1 {
        return None;
    }
    // The matrix's own serde form checks every index on the way in.
    bincode::deserialize(&bincode::serialize(&m).ok()?).ok()
}

/// The bytes of the event columns of the ranks `block` of `trace`.
pub fn encode_ranks(trace: &Trace, block: Range<Rank>) -> Vec<u8> {
    let ranks = &trace.ranks[block.start as usize..block.end as usize];
    bincode::serialize(ranks).expect("ranks serialise")
}

/// Put the ranks of `parts` ([`encode_ranks`] of each process) into `trace`, which has the same
/// definitions: the serial reader's trace again. `Err` names what did not fit.
pub fn fill_ranks(trace: &mut Trace, parts: &[Vec<u8>]) -> Result<(), String> {
    for part in parts {
        let ranks: Vec<RankTrace> = bincode::deserialize(part).map_err(|e| format!("ranks do not deserialise: {e}"))?;
        for rt in ranks {
            let slot = trace
                .ranks
                .get_mut(rt.rank as usize)
                .ok_or_else(|| format!("rank {} is not in the trace", rt.rank))?;
            *slot = rt;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_model::{P2pDir, Selection, COMM_WORLD, NO_CALLPATH};

    /// A 4-rank ring with a self-send on rank 2.
    fn ring() -> Trace {
        let mut t = Trace::new("test", "ring", 4);
        for r in 0..4u32 {
            let c = t.push_call(r, "MPI_Send", 10, 20, NO_CALLPATH, 0);
            t.push_p2p(r, c, c, P2pDir::Send, (r + 1) % 4, 0, COMM_WORLD, 100 * (r as u64 + 1));
        }
        let c = t.push_call(2, "MPI_Send", 30, 40, NO_CALLPATH, 0);
        t.push_p2p(2, c, c, P2pDir::Send, 2, 0, COMM_WORLD, 7);
        t
    }

    /// `trace` with only the columns of `block`.
    fn partial(trace: &Trace, block: Range<Rank>) -> Trace {
        let mut t = trace.clone();
        for rt in &mut t.ranks {
            if !block.contains(&rt.rank) {
                tracelogic_formats::distributed::take_columns(rt);
            }
        }
        t
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn rows_of_the_blocks_make_the_whole_matrix() {
        let t = ring();
        let whole = CommMatrix::from_trace(&t, &Selection::all());
        for blocks in [
            vec![0..4],
            vec![0..1, 1..4],
            vec![0..2, 2..2, 2..4],
            vec![0..1, 1..2, 2..3, 3..4],
        ] {
            let parts: Vec<Vec<u8>> = blocks
                .iter()
                .map(|b| {
                    encode_rows(
                        &CommMatrix::from_trace(&partial(&t, b.clone()), &Selection::all()),
                        b.clone(),
                    )
                })
                .collect();
            assert_eq!(matrix_of_rows(4, &parts).as_ref(), Some(&whole), "{blocks:?}");
        }
        assert_eq!(matrix_of_rows(5, &[encode_rows(&whole, 0..4)]), None);
    }

    #[test]
    fn ranks_of_the_blocks_make_the_whole_trace() {
        let t = ring();
        let blocks = [0..1, 1..3, 3..4];
        let mut back = partial(&t, 0..0);
        let parts: Vec<Vec<u8>> = blocks
            .iter()
            .map(|b| encode_ranks(&partial(&t, b.clone()), b.clone()))
            .collect();
        fill_ranks(&mut back, &parts).unwrap();
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&t).unwrap()
        );
    }
}
