//! Tandem reduction on each sequence's own dense symbols ([`reduce`]) against the reduction on
//! the trace-wide symbol ids it replaced ([`reduce_by_trace_ids`]: a bi-gram table sized by the
//! largest id, a hash map past 2048 ids): the same reduced sequence, collapses, spans, tokens and
//! token ids, so the same patterns with the same ids, on generated traces of several sizes, on
//! the real samples and on sequences over more than 2048 scattered symbols.

use std::path::PathBuf;
use tracelogic_analysis::patterns::tandem::{reduce, reduce_by_trace_ids, BARRIER};
use tracelogic_analysis::patterns::{analyse_events, rank_events, routine_boundaries, PatternOptions, RankEvents};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::{match_messages, Trace};
use tracelogic_synth::{generate, Spec, Style, TopologySpec};

fn spec(topology: &str, style: Style, iterations: u32) -> Spec {
    Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        style,
        iterations,
        ..Default::default()
    }
}

/// Both reductions of `seq`, exact and general form, must be equal; returns the largest
/// non-barrier symbol seen.
fn assert_same_reduction(what: &str, seq: &[u32], alphabet: u32) -> u32 {
    for exact in [false, true] {
        let new = reduce(seq, alphabet, exact);
        let old = reduce_by_trace_ids(seq, alphabet, exact);
        assert_eq!(new, old, "{what}, exact {exact}");
        assert_eq!(new.expand(), seq, "{what}, exact {exact}");
    }
    seq.iter().copied().filter(|&x| x < BARRIER).max().unwrap_or(0)
}

/// Every rank's sequence as pattern detection reduces it: with and without envelope symbols,
/// with routine barriers when the trace has call paths, and the first occurrence of every
/// pattern found (the input of the compact `(unit)xK` text). Only every `every`-th rank is
/// checked among those whose ids stay within the old dense table (each level of the reference
/// zeroes a table of up to 16 MB for them). Returns the largest symbol id seen.
fn check_trace(name: &str, trace: &Trace, every: u32) -> u32 {
    let mut largest = 0;
    for with_envelope in [false, true] {
        let events = rank_events(trace, with_envelope);
        let alphabet = events.names.len() as u32;
        let checked = |re: &RankEvents| re.rank.is_multiple_of(every) || re.symbols.iter().any(|&x| x > 2048);
        for re in events.ranks.iter().filter(|re| checked(re)) {
            let what = format!("{name} rank {} envelope {with_envelope}", re.rank);
            largest = largest.max(assert_same_reduction(&what, &re.symbols, alphabet));
            if let Some(bounds) = routine_boundaries(trace, re) {
                let mut barriers = 0;
                let mut with_barriers = Vec::new();
                for (i, &x) in re.symbols.iter().enumerate() {
                    with_barriers.push(x);
                    if bounds[i] && i + 1 < re.symbols.len() {
                        with_barriers.push(BARRIER + barriers);
                        barriers += 1;
                    }
                }
                assert_same_reduction(&format!("{what} with routine barriers"), &with_barriers, alphabet);
            }
        }
        let analysis = analyse_events(trace, &match_messages(trace), &events, &PatternOptions::default());
        for re in events.ranks.iter().filter(|re| checked(re)) {
            for p in analysis.rank_patterns.get(&re.rank).into_iter().flatten() {
                let first = &re.symbols[p.positions[0] as usize..p.ends[0] as usize];
                assert_same_reduction(
                    &format!("{name} rank {} pattern {:?}", re.rank, p.compact),
                    first,
                    alphabet,
                );
            }
        }
    }
    largest
}

#[test]
fn generated_traces_of_several_sizes_reduce_the_same() {
    for (topology, style, iterations) in [
        ("torus:4x4", Style::Isend, 20),
        ("torus:4x4x4", Style::Isend, 20),
        ("grid:8x8", Style::Wavefront, 6),
        ("ring:32", Style::Blocking, 30),
        ("torus:16x16", Style::Isend, 8),
    ] {
        let trace = generate(&spec(topology, style, iterations)).unwrap();
        check_trace(topology, &trace, 1);
    }
}

/// 2304 ranks: trace-wide symbol ids pass 2048 on the later ranks, where the old reduction
/// switched from its dense table to a hash map, so both of its paths are compared.
#[test]
fn generated_trace_with_more_than_2048_symbols_reduces_the_same() {
    let trace = generate(&spec("torus:48x48", Style::Isend, 4)).unwrap();
    let largest = check_trace("torus:48x48", &trace, 64);
    assert!(largest > 2048, "largest symbol id {largest}");
}

#[test]
fn real_samples_reduce_the_same() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples");
    let mut checked = 0;
    for name in [
        "npb-lu.S.8",
        "npb-bt.S.9",
        "npb-mg.S.8",
        "sstmacro-dumpi-testbgp",
        "sstmacro-dumpi-testtrace",
        "pipit-ping-pong-otf2",
        "pyotf2-generated-4rank",
        "profet-paraver-test1",
    ] {
        let files = load_paths(&[root.join(name)]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let trace = read_trace(files).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_trace(name, &trace, 1);
        checked += 1;
    }
    assert_eq!(checked, 8);
}

/// Sequences over 3000 symbols scattered up to 2^24 (a trace-wide numbering), made of repeated
/// units, nested repeats and noise, with and without barriers.
#[test]
fn scattered_large_alphabets_reduce_the_same() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |bound: u32| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as u32
    };
    let alphabet = 1 << 24;
    let symbols: Vec<u32> = (0..3000).map(|_| next(alphabet)).collect();
    for case in 0..12 {
        let mut seq = Vec::new();
        let mut barriers = 0;
        while seq.len() < 24_000 {
            let unit: Vec<u32> = (0..1 + next(12)).map(|_| symbols[next(3000) as usize]).collect();
            let inner = 1 + next(4);
            for _ in 0..1 + next(5) {
                for _ in 0..inner {
                    seq.extend_from_slice(&unit);
                }
                seq.push(symbols[next(3000) as usize]);
            }
            if case % 2 == 1 && next(4) == 0 {
                seq.push(BARRIER + barriers);
                barriers += 1;
            }
        }
        let distinct: std::collections::HashSet<u32> = seq.iter().copied().filter(|&x| x < BARRIER).collect();
        assert!(distinct.len() > 2048, "case {case}: {} symbols", distinct.len());
        assert_same_reduction(&format!("scattered case {case}"), &seq, alphabet);
    }
}
