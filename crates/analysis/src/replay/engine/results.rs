//! The predictions read from the replay's final state.

use super::*;

/// The predictions from the final state of every rank (`ROWS × K` per rank, in rank order)
/// and each rank's dropped communication.
pub(crate) fn results(
    state: &[f64],
    k: usize,
    not_replayed: &[f64],
    configs: &[Configuration],
    per_rank: bool,
) -> Vec<ConfigurationResult> {
    let n = not_replayed.len();
    let mut predicted = vec![0.0f64; k];
    let mut critical = vec![0 as Rank; k];
    for r in 0..n {
        let clock = &state[r * ROWS * k..r * ROWS * k + k];
        for j in 0..k {
            if clock[j] > predicted[j] {
                predicted[j] = clock[j];
                critical[j] = r as Rank;
            }
        }
    }
    // Mean over ranks of each term, a rank that ends early waiting for the last one.
    let mut sums = vec![0.0f64; ROWS * k];
    for r in 0..n {
        let block = &state[r * ROWS * k..(r + 1) * ROWS * k];
        for t in COMPUTE..=BANDWIDTH {
            let (dst, src) = (&mut sums[t * k..(t + 1) * k], &block[t * k..(t + 1) * k]);
            for (d, s) in dst.iter_mut().zip(src) {
                *d += s;
            }
        }
        for j in 0..k {
            sums[WAIT * k + j] += predicted[j] - block[CLOCK * k + j];
        }
    }
    let ranks = n.max(1) as f64;
    let mean_not_replayed = not_replayed.iter().sum::<f64>() / ranks;
    let out = configs
        .iter()
        .enumerate()
        .map(|(j, c)| ConfigurationResult {
            configuration: c.clone(),
            predicted_s: predicted[j],
            breakdown: Breakdown {
                compute_s: sums[COMPUTE * k + j] / ranks,
                wait_s: sums[WAIT * k + j] / ranks,
                latency_term_s: sums[LATENCY * k + j] / ranks,
                bandwidth_term_s: sums[BANDWIDTH * k + j] / ranks,
                not_replayed_s: mean_not_replayed,
            },
            critical_rank: critical[j],
            ranks: per_rank.then(|| {
                (0..n)
                    .map(|r| {
                        let b = &state[r * ROWS * k..(r + 1) * ROWS * k];
                        RankBreakdown {
                            rank: r as Rank,
                            end_s: b[CLOCK * k + j],
                            breakdown: Breakdown {
                                compute_s: b[COMPUTE * k + j],
                                wait_s: b[WAIT * k + j] + predicted[j] - b[CLOCK * k + j],
                                latency_term_s: b[LATENCY * k + j],
                                bandwidth_term_s: b[BANDWIDTH * k + j],
                                not_replayed_s: not_replayed[r],
                            },
                        }
                    })
                    .collect()
            }),
        })
        .collect();
    out
}
