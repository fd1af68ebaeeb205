//! The segmentation's stop rule against the thesis' own numbers (Thesis, ch. 5, Table 5.8:
//! the NAS BT run, 7,446 pattern occurrences), and the behaviour of the rule on one-off symbols
//! that makes the tail of a short run split into single-occurrence phases.

use tracelogic_analysis::phases::{bic_threshold, segment, segmentation_strength};

/// Table 5.8 as printed: (segment, N, D_JS, τ, s, cut?). Rows of length 1 carry no s ("-").
/// D_JS, τ and s are rounded to two decimals (s of S1 to one).
const TABLE_5_8: &[(&str, usize, f64, f64, f64, bool)] = &[
    ("S0", 7446, 0.01, 0.01, 0.72, true),
    ("S1", 18, 0.95, 0.12, 7.2, true),
    ("S2", 7428, 0.01, 0.0, 0.49, true),
    ("S3", 6, 0.57, 0.22, 1.63, true),
    ("S4", 12, 0.24, 0.45, -0.47, false),
    ("S5", 5, -0.1, 0.46, -1.22, false),
    ("S7", 7415, 0.0, 0.01, -0.44, false),
    ("S8", 13, 1.03, 0.14, 6.23, true),
    ("S9", 6, 0.84, 0.22, 2.92, true),
    ("S10", 7, 1.01, 0.2, 4.03, true),
    ("S11", 3, -0.17, 0.53, -1.32, false),
    ("S12", 3, -0.17, 0.53, -1.32, false),
    ("S13", 3, -0.17, 0.53, -1.32, false),
    ("S14", 4, 0.69, 0.25, 1.75, true),
    ("S15", 3, 0.21, 0.53, -0.6, false),
];

/// The K (free parameters, `k_l + k_r + 1 − k`) under which τ and s of a row come out of its N
/// and D_JS within the table's rounding, if any; `log` is the logarithm used for τ.
fn consistent_k(n: usize, djs: f64, tau: f64, s: f64, log: impl Fn(f64) -> f64) -> Option<usize> {
    let half = 0.005;
    (1..=40).find(|&k| {
        let t = log(n as f64) * k as f64 / (2.0 * n as f64);
        let bic = log(n as f64) * k as f64;
        let (lo, hi) = (
            (2.0 * n as f64 * (djs - half) - bic) / bic,
            (2.0 * n as f64 * (djs + half) - bic) / bic,
        );
        let s_tol = if s.abs() >= 7.0 { 0.05 } else { half };
        (t - tau).abs() <= half + 1e-9 && s >= lo - s_tol && s <= hi + s_tol
    })
}

/// Every row's τ and s follow from its N and D_JS with log base 2 and a whole number of free
/// parameters, and a row is cut exactly when s > 0 (the BIC rule at s0 = 0). The homogeneous rows
/// (the thesis prints a negative D_JS for them, −1/2N) need K = 2, the distinct-symbol cuts K = 1,
/// as `k_l + k_r + 1 − k` gives. With natural logarithms τ would not match (N = 3: 0.37, not 0.53).
#[test]
fn table_5_8_tau_and_strength_follow_from_n_and_djs() {
    for &(name, n, djs, tau, s, cut) in TABLE_5_8 {
        let k = consistent_k(n, djs, tau, s, f64::log2).unwrap_or_else(|| panic!("{name}: no K fits"));
        // Our functions give the same numbers for that K.
        assert!((bic_threshold(n, k) - tau).abs() <= 0.005 + 1e-9, "{name}");
        // Short rows: the printed D_JS is precise enough to give s itself (for the long rows its
        // rounding to 0.01 moves s by more than 1, which `consistent_k` allows for).
        if n <= 18 {
            let ours = segmentation_strength(n, k, djs);
            assert!((ours - s).abs() <= 0.05 + 0.01 * s.abs(), "{name}: s {ours} vs {s}");
        }
        assert_eq!(s > 0.0, cut, "{name}: cut iff s > 0");
        // Short rows: K is pinned down by τ alone. 2 for the homogeneous rows and S15, 3 for S4
        // (symbols on both sides of its cut), 1 for cuts between disjoint symbol sets.
        if n <= 18 {
            let expected_k = match name {
                "S4" => 3,
                "S15" => 2,
                _ if djs < 0.0 => 2,
                _ => 1,
            };
            assert_eq!(k, expected_k, "{name}");
        }
    }
    assert_eq!(consistent_k(3, -0.17, 0.53, -1.32, f64::ln), None);
    // The thesis' negative divergences of homogeneous segments are −1/2N: the rows' s is then
    // −1/(log2(N)·K) − 1, which our strength gives for that D.
    for (n, djs) in [(3usize, -0.17), (5, -0.1)] {
        assert!((djs + 1.0 / (2.0 * n as f64)).abs() < 0.005, "N = {n}");
    }
}

/// Table 5.8's tail (S8, positions 7434–7446) ends in phases of three and one positions: the rule
/// splits short runs of different patterns. Ours does the same: a segment of pairwise distinct
/// symbols has K = k_l + k_r + 1 − k = 1 at every cut and D_JS > τ, so it is always cut, down to
/// single symbols. This is the method, not a fault: a short run's one-off exchanges (set-up,
/// final verification) become one phase each.
#[test]
fn distinct_symbols_split_into_single_phases() {
    for n in 2..40u32 {
        let seq: Vec<u32> = (0..n).collect();
        let s = segment(&seq, 0.0);
        assert_eq!(s.phases.len(), n as usize, "{n} distinct symbols");
        assert!(s
            .tree
            .iter()
            .filter(|t| t.children.is_some())
            .all(|t| t.strength.unwrap() > 0.0));
    }
    // A homogeneous run stays one phase however long, and a long loop followed by a tail of
    // five one-off symbols gives the loop plus five single phases.
    let mut seq = vec![7u32; 500];
    assert_eq!(segment(&seq, 0.0).phases.len(), 1);
    seq.extend([1, 2, 3, 4, 5]);
    let s = segment(&seq, 0.0);
    let lens: Vec<usize> = s.phases.iter().map(|&p| s.tree[p].len()).collect();
    assert_eq!(lens, vec![500, 1, 1, 1, 1, 1]);
    // A higher strength threshold keeps the tail together (its best cut, 1 2 | 3 4 5, has
    // s = 3.2) and still separates it from the loop (s = 8.0).
    let coarse = segment(&seq, 3.5);
    let lens: Vec<usize> = coarse.phases.iter().map(|&p| coarse.tree[p].len()).collect();
    assert_eq!(lens, vec![500, 5]);
}
