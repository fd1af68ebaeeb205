//! `patterns --events N`: pattern detection on a Sweep3D-like event sequence, stage by stage.

use crate::clock::{cpu_timed, peak_rss_kb};
use serde::Serialize;
use std::path::PathBuf;
use tracelogic_analysis::patterns::suffix::{lcp_array, maximal_repeats, suffix_array};
use tracelogic_analysis::patterns::{detect, PatternOptions};

/// Pattern-detection figures of one event sequence; times are the minimum over the
/// repetitions, in milliseconds of this thread's CPU time (the machine is shared).
#[derive(Serialize)]
pub(crate) struct PatternsResult {
    /// Events in the sequence.
    events: usize,
    /// Distinct symbols.
    alphabet: u32,
    /// Suffix array alone (the stage a suffix-array peer starts with).
    suffix_array_ms: f64,
    /// LCP array from the suffix array.
    lcp_ms: f64,
    /// All maximal repeats of length ≥ 2 of the raw sequence (suffix array, LCP and the interval
    /// walk), the task of a suffix-array repeat finder; `None` when skipped.
    maximal_repeats_ms: Option<f64>,
    /// Maximal repeats found.
    maximal_repeats: usize,
    /// Per-rank pattern detection as tracelogic runs it (tandem removal, then maximal repeats of
    /// the reduced sequence, then the patterns in event positions).
    detect_ms: f64,
    /// Patterns found by the detection.
    patterns: usize,
    /// Σ i·sa[i] (wrapping), to check that the peer built the same suffix array.
    sa_checksum: u64,
    /// Σ lcp[i], to check the peer's LCP array.
    lcp_sum: u64,
    /// Peak resident memory of the process, KiB.
    peak_rss_kb: u64,
}

/// A Sweep3D-like sequence of `n` events (the one `cargo bench --bench patterns` uses): four
/// sweeps of 30 repeats of a two-event step, with a random event every few hundred steps.
pub(crate) fn sweep_sequence(n: usize) -> Vec<u32> {
    let mut x = 1u64;
    let mut lcg = move || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x >> 33
    };
    let mut seq = Vec::with_capacity(n + 2);
    let sweeps = [[0u32, 1], [0, 2], [1, 3], [0, 3]];
    while seq.len() < n {
        for s in &sweeps {
            for _ in 0..30 {
                seq.extend_from_slice(s);
                if lcg().is_multiple_of(300) {
                    seq.push(4 + (lcg() % 8) as u32);
                }
            }
        }
    }
    seq.truncate(n);
    seq
}

pub(crate) fn patterns(
    events: usize,
    out: Option<&PathBuf>,
    repeat: u32,
    raw_repeats: bool,
) -> Result<PatternsResult, String> {
    let seq = sweep_sequence(events);
    let alphabet = seq.iter().max().map_or(0, |&m| m + 1);
    if let Some(path) = out {
        let bytes: Vec<u8> = seq.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let (mut sa_ms, mut lcp_ms, mut rep_ms, mut det_ms) = (f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::INFINITY);
    let (mut sa_checksum, mut lcp_sum, mut reps, mut found) = (0, 0, 0, 0);
    for _ in 0..repeat.max(1) {
        let sa = cpu_timed(&mut sa_ms, || suffix_array(&seq, alphabet as usize));
        let lcp = cpu_timed(&mut lcp_ms, || lcp_array(&seq, &sa));
        sa_checksum = sa
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, &p)| acc.wrapping_add((i as u64).wrapping_mul(p as u64)));
        lcp_sum = lcp.iter().map(|&l| l as u64).sum();
        drop((sa, lcp));
        if raw_repeats {
            reps = cpu_timed(&mut rep_ms, || maximal_repeats(&seq, alphabet as usize, 2)).len();
        }
        found = cpu_timed(&mut det_ms, || detect(&seq, alphabet, None, &PatternOptions::default())).len();
    }
    Ok(PatternsResult {
        events,
        alphabet,
        suffix_array_ms: sa_ms,
        lcp_ms,
        maximal_repeats_ms: raw_repeats.then_some(rep_ms),
        maximal_repeats: reps,
        detect_ms: det_ms,
        patterns: found,
        sa_checksum,
        lcp_sum,
        peak_rss_kb: peak_rss_kb(),
    })
}
