//! `c · log2 c`, the term a count contributes to an entropy sum (`H = log2 n − Σ c log2 c / n`),
//! shared by the segmentation, the content test and the merge of phases. Counts below
//! [`TABLE`] are read from a table computed once with the same formula, so the value is
//! bit-identical either way; the scans of a large run evaluate it hundreds of millions of times.

use std::sync::OnceLock;

/// Counts with a precomputed term (512 KiB of `f64`).
const TABLE: usize = 1 << 16;

/// `c · log2 c` (0 for c ≤ 1); e.g. 8 for 4, 24 for 8. O(1).
#[inline]
pub(crate) fn c_log2_c(c: u64) -> f64 {
    static TERMS: OnceLock<Vec<f64>> = OnceLock::new();
    if (c as usize) < TABLE {
        TERMS.get_or_init(|| (0..TABLE as u64).map(computed).collect())[c as usize]
    } else {
        computed(c)
    }
}

fn computed(c: u64) -> f64 {
    if c <= 1 {
        0.0
    } else {
        let c = c as f64;
        c * c.log2()
    }
}

#[cfg(test)]
mod tests {
    use super::{c_log2_c, TABLE};

    /// The table and the formula agree bit for bit, at and across the table's edge.
    #[test]
    fn table_and_formula_agree() {
        for c in [0u64, 1, 2, 3, 4, 1000, TABLE as u64 - 1, TABLE as u64, 1 << 20] {
            let expected = if c <= 1 { 0.0 } else { c as f64 * (c as f64).log2() };
            assert_eq!(c_log2_c(c).to_bits(), expected.to_bits(), "c = {c}");
        }
        assert_eq!(c_log2_c(8), 24.0);
    }
}
