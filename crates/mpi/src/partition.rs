//! Sharing the ranks of a trace out among processes.

use std::ops::Range;
use tracelogic_model::Rank;

/// Contiguous blocks of ranks, one per process in rank order, of about equal bytes: `sizes[r]`
/// is the bytes of rank `r`'s files. Process `p`'s block ends at the first rank where the bytes
/// so far reach `(p + 1) / processes` of the total, so no block holds more than its share plus
/// one rank's files. With no bytes at all, the ranks are shared out by count. A process may get
/// no rank (more processes than ranks).
pub fn by_bytes(sizes: &[u64], processes: usize) -> Vec<Range<Rank>> {
    assert!(processes > 0, "at least one process");
    let n = sizes.len();
    let total: u128 = sizes.iter().map(|&s| s as u128).sum();
    if total == 0 {
        return by_count(n, processes);
    }
    let mut blocks = Vec::with_capacity(processes);
    let (mut start, mut end, mut sum) = (0usize, 0usize, 0u128);
    for p in 0..processes {
        let goal = total * (p as u128 + 1);
        while end < n && sum * processes as u128 + sizes[end] as u128 * processes as u128 / 2 < goal {
            sum += sizes[end] as u128;
            end += 1;
        }
        if p + 1 == processes {
            end = n;
        }
        blocks.push(start as Rank..end as Rank);
        start = end;
    }
    blocks
}

/// Contiguous blocks of `n` ranks, one per process, sizes differing by at most one.
pub fn by_count(n: usize, processes: usize) -> Vec<Range<Rank>> {
    (0..processes)
        .map(|p| (n * p / processes) as Rank..(n * (p + 1) / processes) as Rank)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(blocks: &[Range<Rank>], n: usize) {
        let mut next = 0;
        for b in blocks {
            assert_eq!(b.start, next, "{blocks:?}");
            assert!(b.end >= b.start, "{blocks:?}");
            next = b.end;
        }
        assert_eq!(next as usize, n, "{blocks:?}");
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn equal_files_give_equal_blocks() {
        let b = by_bytes(&[10; 8], 4);
        check(&b, 8);
        assert_eq!(b, vec![0..2, 2..4, 4..6, 6..8]);
        assert_eq!(by_bytes(&[10; 8], 1), vec![0..8]);
        assert_eq!(
            by_bytes(&[10; 9], 2).iter().map(|r| r.len()).collect::<Vec<_>>(),
            vec![4, 5]
        );
    }

    #[test]
    fn blocks_balance_bytes_not_ranks() {
        // One big rank and seven small ones: the big one alone, the rest together.
        let sizes = [700, 50, 50, 50, 50, 50, 50, 0];
        let b = by_bytes(&sizes, 2);
        check(&b, 8);
        assert_eq!(b, vec![0..1, 1..8]);
        for p in 1..=10 {
            let b = by_bytes(&[3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5], p);
            assert_eq!(b.len(), p);
            check(&b, 11);
        }
    }

    #[test]
    fn more_processes_than_ranks_and_empty_traces() {
        let b = by_bytes(&[5, 5], 4);
        check(&b, 2);
        assert_eq!(b.iter().filter(|r| !r.is_empty()).count(), 2);
        assert_eq!(by_bytes(&[0, 0, 0], 2), vec![0..1, 1..3]);
        assert_eq!(by_bytes(&[], 3), vec![0..0, 0..0, 0..0]);
        assert_eq!(by_count(5, 2), vec![0..2, 2..5]);
    }
}
