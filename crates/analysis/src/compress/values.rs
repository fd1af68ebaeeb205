//! Sequences of numbers kept compactly: constant, range, cycle, runs, list, per rank, or (sizes
//! only) a histogram or statistics.

use super::*;

/// A sequence of numbers (one per occurrence of a program record, in execution order), stored
/// compactly. `value(i)` is the i-th number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "form")]
pub enum Values {
    /// The same number every time.
    Constant {
        /// The number.
        value: u64,
    },
    /// `first + step · i`.
    Range {
        /// Value of occurrence 0.
        first: u64,
        /// Difference between consecutive occurrences.
        step: i64,
    },
    /// A shorter sequence repeated: `value(i) = unit.value(i mod period)`.
    Cycle {
        /// Length of the repeated part.
        period: u32,
        /// The repeated part.
        unit: Box<Values>,
    },
    /// Every number listed.
    List {
        /// The numbers.
        values: Vec<u64>,
    },
    /// Runs of one number: `values[k]` repeated up to occurrence `ends[k]` (exclusive, increasing).
    /// Chosen over a list when it stores fewer numbers (NAS CG's 846 reduction and vector sizes
    /// are 32 runs).
    Runs {
        /// The number of each run.
        values: Vec<u64>,
        /// Occurrences up to the end of each run (cumulative).
        ends: Vec<u64>,
    },
    /// Message sizes whose order is data, summarised by how often each size occurs
    /// ([`CompressOptions::exact_sizes`] off, at most [`MAX_LISTED`] distinct sizes, but more than
    /// [`MAX_STORED`] numbers in any exact form: a phylogenetics code's likelihood reductions of 8
    /// or 16 bytes in the order its tree search takes). `value(i)` gives the sizes in blocks, in
    /// increasing size, so the expansion carries exactly the recorded sizes and volume in another
    /// order.
    Histogram {
        /// The distinct sizes, increasing.
        values: Vec<u64>,
        /// Occurrences of each.
        counts: Vec<u64>,
    },
    /// Numbers that follow no pattern, summarised ([`CompressOptions::exact_sizes`] off, more
    /// than [`MAX_LISTED`] distinct ones: message sizes that change from step to step, as a molecular
    /// dynamics code's ghost-atom exchanges). `value(i)` spreads `total` evenly over the `count`
    /// occurrences (`total / count`, one more on the first `total % count`), so the expansion
    /// carries exactly the recorded volume.
    Stats {
        /// Occurrences.
        count: u64,
        /// Smallest.
        min: u64,
        /// Mean, rounded down (`total / count`).
        mean: u64,
        /// Largest.
        max: u64,
        /// Sum over the occurrences.
        total: u64,
    },
    /// Numbers that depend on the rank (per-rank message sizes,
    /// [`crate::logical::Operation::bytes_by_rank`]): `default` on every rank not listed, and
    /// each group of ranks its own sequence.
    #[serde(rename = "by_rank")]
    ByRank {
        /// The sequence of the ranks not listed (the record's own sizes).
        default: Box<Values>,
        /// Groups of ranks with their sequence, by first rank.
        ranks: Vec<RankValues>,
    },
}

/// A sequence of numbers on some ranks ([`Values::ByRank`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RankValues {
    /// World ranks, increasing.
    pub ranks: Vec<Rank>,
    /// Their sequence.
    pub values: Values,
}

/// Most distinct message sizes a list keeps as it is when [`CompressOptions::exact_sizes`] is
/// off; a list without a pattern and with more distinct sizes becomes [`Values::Stats`]. A few
/// distinct sizes in an irregular order are the program's control flow (NAS CG's loop body
/// carries 8 B reductions and 2800 B vector pieces in the order of its phases) and stay exact;
/// a size that takes a new value at most steps (a molecular-dynamics code's ghost atoms) is
/// data, summarised, so the program does not grow with the number of steps.
pub const MAX_LISTED: usize = 16;

/// Most numbers an exact form of a message-size sequence stores when
/// [`CompressOptions::exact_sizes`] is off; beyond it the sizes become a [`Values::Histogram`]
/// (or [`Values::Stats`]), so a record's size in the program is bounded whatever the number of
/// steps. Sizes that follow the program's control flow fit well within it (NAS MG's 444 sizes
/// on 8 ranks are 147 runs, 294 numbers); sizes chosen by the data in a long run do not (the
/// 55,497 likelihood reductions of a 4-rank ExaML search are 1,859 runs).
pub const MAX_STORED: usize = 1024;

impl Values {
    /// The most compact form of `list` (constant, range of at least 3, cycle, or list).
    pub fn compress(list: &[u64]) -> Values {
        let Some(&first) = list.first() else {
            return Values::Constant { value: 0 };
        };
        if list.iter().all(|&v| v == first) {
            return Values::Constant { value: first };
        }
        if list.len() >= 3 {
            let step = (list[1] as i128 - first as i128) as i64;
            if list.windows(2).all(|w| w[1] as i128 - w[0] as i128 == step as i128) {
                return Values::Range { first, step };
            }
        }
        let period = smallest_period(list);
        if period * 2 <= list.len() {
            return Values::Cycle {
                period: period as u32,
                unit: Box::new(Values::compress(&list[..period])),
            };
        }
        let runs = 1 + list.windows(2).filter(|w| w[0] != w[1]).count();
        if 2 * runs < list.len() {
            let (mut values, mut ends) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
            for (i, w) in list.iter().enumerate() {
                if list.get(i + 1) != Some(w) {
                    values.push(*w);
                    ends.push(i as u64 + 1);
                }
            }
            return Values::Runs { values, ends };
        }
        Values::List { values: list.to_vec() }
    }

    /// `compress(list)` for message sizes: when `exact` is false, a list or runs with more than
    /// [`MAX_LISTED`] distinct sizes becomes [`Values::Stats`], and a form storing more than
    /// [`MAX_STORED`] numbers a [`Values::Histogram`] (or `Stats`).
    pub fn compress_sizes(list: &[u64], exact: bool) -> Values {
        let v = Values::compress(list);
        if exact {
            return v;
        }
        let many = || distinct_above(list, MAX_LISTED);
        match v {
            Values::List { .. } | Values::Runs { .. } if many() => Values::summary_of(list),
            v if v.stored() > MAX_STORED => {
                if many() {
                    Values::summary_of(list)
                } else {
                    Values::histogram_of(list)
                }
            }
            v => v,
        }
    }

    /// `list` as a [`Values::Histogram`].
    pub fn histogram_of(list: &[u64]) -> Values {
        let mut counts: std::collections::BTreeMap<u64, u64> = Default::default();
        for &v in list {
            *counts.entry(v).or_default() += 1;
        }
        Values::Histogram {
            values: counts.keys().copied().collect(),
            counts: counts.values().copied().collect(),
        }
    }

    /// Numbers this form stores (a measure of its size in the program).
    pub fn stored(&self) -> usize {
        match self {
            Values::Constant { .. } => 1,
            Values::Range { .. } => 2,
            Values::Cycle { unit, .. } => 1 + unit.stored(),
            Values::List { values } => values.len(),
            Values::Runs { values, ends } => values.len() + ends.len(),
            Values::Histogram { values, counts } => values.len() + counts.len(),
            Values::Stats { .. } => 5,
            Values::ByRank { default, ranks } => {
                default.stored() + ranks.iter().map(|g| g.ranks.len() + g.values.stored()).sum::<usize>()
            }
        }
    }

    /// `list` summarised ([`Values::Stats`]: count, extremes, total and its mean).
    pub fn summary_of(list: &[u64]) -> Values {
        let total = list.iter().fold(0u64, |a, &b| a.saturating_add(b));
        let count = list.len() as u64;
        Values::Stats {
            count,
            min: list.iter().copied().min().unwrap_or(0),
            mean: total / count.max(1),
            max: list.iter().copied().max().unwrap_or(0),
            total,
        }
    }

    /// The i-th number on rank `rank` ([`Values::ByRank`]; other forms are the same on every
    /// rank).
    pub fn value_on(&self, rank: Rank, i: u64) -> u64 {
        match self {
            Values::ByRank { default, ranks } => ranks
                .iter()
                .find(|g| g.ranks.binary_search(&rank).is_ok())
                .map_or_else(|| default.value(i), |g| g.values.value(i)),
            other => other.value(i),
        }
    }

    /// The i-th number.
    pub fn value(&self, i: u64) -> u64 {
        match self {
            Values::Stats { count, total, .. } => {
                let count = (*count).max(1);
                total / count + u64::from(i < total % count)
            }
            Values::ByRank { default, .. } => default.value(i),
            Values::Constant { value } => *value,
            Values::Range { first, step } => (*first as i128 + *step as i128 * i as i128) as u64,
            Values::Cycle { period, unit } => unit.value(i % (*period).max(1) as u64),
            Values::List { values } => values.get(i as usize).copied().unwrap_or(0),
            Values::Runs { values, ends } => {
                let k = ends.partition_point(|&e| e <= i);
                values.get(k).copied().unwrap_or(0)
            }
            Values::Histogram { values, counts } => {
                let mut end = 0u64;
                for (&v, &c) in values.iter().zip(counts) {
                    end += c;
                    if i < end {
                        return v;
                    }
                }
                0
            }
        }
    }

    /// Readable form: `480`, `8..+8`, `{8, 16, 32}`, `({8, 16})*`.
    pub fn text(&self) -> String {
        match self {
            Values::Constant { value } => value.to_string(),
            Values::Range { first, step } => format!("{first}{step:+}/iter"),
            Values::Cycle { unit, .. } => format!("({})*", unit.text()),
            Values::List { values } => {
                let shown: Vec<String> = values.iter().take(8).map(|v| v.to_string()).collect();
                let more = if values.len() > 8 {
                    format!(", … {} values", values.len())
                } else {
                    String::new()
                };
                format!("{{{}{more}}}", shown.join(", "))
            }
            Values::Runs { values, ends } => {
                let shown: Vec<String> = values
                    .iter()
                    .zip(std::iter::once(&0).chain(ends.iter()).zip(ends))
                    .take(6)
                    .map(|(v, (a, b))| format!("{v} ×{}", b - a))
                    .collect();
                let more = if values.len() > 6 {
                    format!(", … {} runs", values.len())
                } else {
                    String::new()
                };
                format!("{{{}{more}}}", shown.join(", "))
            }
            Values::Histogram { values, counts } => {
                let shown: Vec<String> = values.iter().zip(counts).map(|(v, c)| format!("{v} ×{c}")).collect();
                format!("{{{}; order not kept}}", shown.join(", "))
            }
            Values::Stats {
                count, min, mean, max, ..
            } => format!("~{mean} [{min}..{max}, {count}×]"),
            Values::ByRank { default, ranks } => {
                let mut s = default.text();
                for g in ranks.iter().take(4) {
                    s.push_str(&format!(
                        " ({} on {})",
                        g.values.text(),
                        crate::logical::ranks_text(&g.ranks)
                    ));
                }
                if ranks.len() > 4 {
                    s.push_str(&format!(" (… {} more groups of ranks)", ranks.len() - 4));
                }
                s
            }
        }
    }

    /// Largest value over the first `n` occurrences.
    pub fn max_over(&self, n: u64) -> u64 {
        match self {
            Values::Constant { value } => *value,
            Values::Range { first, step } => {
                if *step >= 0 {
                    self.value(n.saturating_sub(1))
                } else {
                    *first
                }
            }
            Values::Cycle { period, unit } => unit.max_over((*period as u64).min(n)),
            Values::List { values } => values.iter().take(n as usize).copied().max().unwrap_or(0),
            Values::Runs { values, ends } => {
                // Runs that start before occurrence n.
                let started = ends.partition_point(|&e| e < n) + 1;
                values.iter().take(started).copied().max().unwrap_or(0)
            }
            Values::Histogram { values, counts } => {
                let (mut start, mut max) = (0u64, 0u64);
                for (&v, &c) in values.iter().zip(counts) {
                    if start >= n {
                        break;
                    }
                    max = max.max(v);
                    start += c;
                }
                max
            }
            Values::Stats { count, total, max, .. } => {
                if n >= *count {
                    *max
                } else {
                    // `value` gives at most the mean rounded up.
                    (*max).min(total.div_ceil((*count).max(1)))
                }
            }
            Values::ByRank { default, ranks } => ranks
                .iter()
                .map(|g| g.values.max_over(n))
                .fold(default.max_over(n), u64::max),
        }
    }
}

/// More than `bound` distinct numbers in `values`.
pub(super) fn distinct_above(values: &[u64], bound: usize) -> bool {
    let mut seen: std::collections::HashSet<u64> = std::collections::HashSet::new();
    values.iter().any(|&v| {
        seen.insert(v);
        seen.len() > bound
    })
}

/// The prefix function of `s` (Knuth–Morris–Pratt): `pi[i]` is the length of the longest proper
/// prefix of `s[..=i]` that is also its suffix, so `s[..j]` has smallest period `j - pi[j - 1]`.
/// Shared by [`smallest_period`] and the patterns' copies of one step (`patterns::copies`).
/// O(|s|).
pub(crate) fn prefix_function<T: PartialEq>(s: &[T]) -> Vec<usize> {
    let n = s.len();
    let mut pi = vec![0usize; n];
    for i in 1..n {
        let mut k = pi[i - 1];
        while k > 0 && s[i] != s[k] {
            k = pi[k - 1];
        }
        if s[i] == s[k] {
            k += 1;
        }
        pi[i] = k;
    }
    pi
}

/// Smallest p such that `s[i] == s[i - p]` for all i ≥ p (prefix function; also the patterns'
/// copies of one step, `patterns::copies`). O(|s|).
pub(crate) fn smallest_period<T: PartialEq>(s: &[T]) -> usize {
    s.len() - prefix_function(s).last().copied().unwrap_or(0)
}
