//! Per-rank pattern detection, tandem removal and approximate matching against the thesis'
//! worked examples (Thesis, chapter 4).

use tracelogic_analysis::patterns::approx::{approximate_matches, ApproxMatch};
use tracelogic_analysis::patterns::tandem::reduce;
use tracelogic_analysis::patterns::{detect, name_patterns, PatternOptions, RankPattern};

/// Symbols of a whitespace-separated event list, with a shared name table.
fn symbols(text: &str, names: &mut Vec<String>) -> Vec<u32> {
    text.split_whitespace()
        .map(|t| match names.iter().position(|n| n == t) {
            Some(i) => i as u32,
            None => {
                names.push(t.to_owned());
                names.len() as u32 - 1
            }
        })
        .collect()
}

fn letters(text: &str) -> String {
    text.chars().map(|c| format!("{c} ")).collect()
}

fn run(text: &str, opts: &PatternOptions) -> Vec<RankPattern> {
    let mut names = Vec::new();
    let seq = symbols(text, &mut names);
    let mut p = detect(&seq, names.len() as u32, None, opts);
    name_patterns(&mut p, &seq, &names);
    p
}

fn expanded(p: &RankPattern, text: &str) -> String {
    let toks: Vec<&str> = text.split_whitespace().collect();
    toks[p.positions[0] as usize..p.ends[0] as usize].join("")
}

/// Figure 4.7: `S2 S3 R2` is the only pattern, 5 times at (1-based) 1, 5, 8, 11, 15.
#[test]
fn figure_4_7_reverse_lookup_example() {
    let trace = "S2 S3 R2 S5 S2 S3 R2 S2 S3 R2 S2 S3 R2 S4 S2 S3 R2";
    for opts in [
        PatternOptions::default(),
        PatternOptions {
            tandem: false,
            ..Default::default()
        },
    ] {
        let p = run(trace, &opts);
        assert_eq!(p.len(), 1, "{p:#?}");
        assert_eq!(p[0].sequence, vec!["S2", "S3", "R2"]);
        assert_eq!(p[0].frequency, 5);
        let one_based: Vec<u32> = p[0].positions.iter().map(|x| x + 1).collect();
        assert_eq!(one_based, vec![1, 5, 8, 11, 15]);
    }
}

/// Figure 4.5 (Sweep3D). The printed sequence has 70 symbols, but the figure's own counts
/// (`ad` 9, the global pattern 3) need three full copies of the 24-symbol global pattern: the
/// extraction lost the final `ad` of the first copy. Reconstruction: three copies. The valid
/// patterns are exactly ab, ac, bd, ad (9 each) and the global pattern (3), with none of the
/// suffix-tree noise (aba, dad, dada, ...).
#[test]
fn figure_4_5_sweep3d_valid_patterns() {
    let global = "abababacacacbdbdbdadadad";
    let text = letters(&global.repeat(3));
    let p = run(&text, &PatternOptions::default());
    let mut found: Vec<(String, usize)> = p.iter().map(|q| (expanded(q, &text), q.frequency)).collect();
    found.sort();
    let mut want = vec![
        ("ab".to_owned(), 9),
        ("ac".to_owned(), 9),
        ("bd".to_owned(), 9),
        ("ad".to_owned(), 9),
        (global.to_owned(), 3),
    ];
    want.sort();
    assert_eq!(found, want);
    let g = p.iter().find(|q| q.frequency == 3).unwrap();
    assert_eq!(g.positions, vec![0, 24, 48]);
    assert_eq!(g.compact, "(a b)x3 (a c)x3 (b d)x3 (a d)x3");
    // General form of the global pattern: one copy of each sweep.
    assert_eq!(g.sequence.join(""), "abacbdad");
}

/// The figure's sequence exactly as printed: the same five patterns, `ad` 8 times, and the global
/// pattern's three copies (the first one shorter by one `ad`) in general form.
#[test]
fn figure_4_5_as_printed() {
    let printed = "abababacacacbdbdbdadadabababacacacbdbdbdadadadabababacacacbdbdbdadadad";
    let text = letters(printed);
    let p = run(&text, &PatternOptions::default());
    let mut general: Vec<(String, usize)> = p.iter().map(|q| (q.sequence.join(""), q.frequency)).collect();
    general.sort();
    assert_eq!(
        general,
        vec![
            ("ab".to_owned(), 9),
            ("abacbdad".to_owned(), 3),
            ("ac".to_owned(), 9),
            ("ad".to_owned(), 8),
            ("bd".to_owned(), 9)
        ]
    );
}

/// Table 4.7 (WRF): `abcd` nine times; the suffix tree reports 8 repeats, the only pattern is
/// `abcd` with 9 occurrences at 0, 4, ..., 32.
#[test]
fn table_4_7_only_abcd() {
    let text = letters(&"abcd".repeat(9));
    for tandem in [true, false] {
        let p = run(
            &text,
            &PatternOptions {
                tandem,
                ..Default::default()
            },
        );
        assert_eq!(p.len(), 1, "{p:#?}");
        assert_eq!(p[0].sequence.join(""), "abcd");
        assert_eq!(p[0].frequency, 9);
        assert_eq!(p[0].positions, (0..9).map(|i| 4 * i).collect::<Vec<u32>>());
    }
}

/// Interspersed repeats in general form: `(ab)^3 c` and `(ab)^2 c` are both `abc`.
#[test]
fn general_form_merges_loop_counts() {
    let text = letters("abababcxababcyabc");
    let p = run(&text, &PatternOptions::default());
    let abc = p.iter().find(|q| q.sequence.join("") == "abc").expect("abc found");
    assert_eq!(abc.frequency, 3);
    assert_eq!(abc.positions, vec![0, 8, 14]);
    let exact = run(
        &text,
        &PatternOptions {
            tandem: false,
            ..Default::default()
        },
    );
    assert!(
        exact.iter().all(|q| q.sequence.join("") != "abc" || q.frequency < 3),
        "{exact:#?}"
    );
}

/// Routine boundaries stop patterns from crossing routines: `x y` repeats across a boundary only.
#[test]
fn barriers_split_patterns() {
    let mut names = Vec::new();
    let seq = symbols("a b x y a b x y", &mut names);
    let plain = detect(&seq, names.len() as u32, None, &PatternOptions::default());
    assert_eq!(plain.len(), 1);
    assert_eq!(plain[0].symbols.len(), 4);
    let mut bounds = vec![false; seq.len()];
    bounds[1] = true; // routine change after "a b"
    bounds[3] = true;
    bounds[5] = true;
    let directed = detect(&seq, names.len() as u32, Some(&bounds), &PatternOptions::default());
    let mut lens: Vec<usize> = directed.iter().map(|p| p.symbols.len()).collect();
    lens.sort();
    assert_eq!(lens, vec![2, 2], "{directed:#?}");
}

/// Figure 4.11: tandem removal is lossless and iterated to a fixpoint.
#[test]
fn tandem_removal_lossless_on_random_sequences() {
    let mut x = 7u64;
    let mut next = |m: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    for _ in 0..300 {
        let mut seq = Vec::new();
        while seq.len() < 200 {
            let unit: Vec<u32> = (0..1 + next(4)).map(|_| next(3) as u32).collect();
            for _ in 0..1 + next(4) {
                seq.extend(&unit);
            }
        }
        for exact in [false, true] {
            let r = reduce(&seq, 3, exact);
            assert_eq!(r.expand(), seq);
            // Fixpoint: reducing again changes nothing.
            if !exact {
                let again = reduce(&r.sequence, 3, false);
                assert_eq!(again.collapses(), 0);
            }
        }
    }
}

/// Figure 4.9: pattern `abcdef`, k = 1, bi-grams (threshold 3 shared): matches at windows 8,
/// 16 and 24 (0-based starts 7, 15, 23) with 1, 1 and 0 edits.
#[test]
fn figure_4_9_approximate_matching() {
    let mut names = Vec::new();
    let text = symbols(&letters("abcdmhkobcdefyeabhdefrsabcdef"), &mut names);
    let pattern = symbols(&letters("abcdef"), &mut names);
    let (m, stats) = approximate_matches(&text, &pattern, 1, 2);
    assert_eq!(
        m,
        vec![
            ApproxMatch {
                start: 7,
                len: 6,
                edits: 1
            },
            ApproxMatch {
                start: 15,
                len: 6,
                edits: 1
            },
            ApproxMatch {
                start: 23,
                len: 6,
                edits: 0
            },
        ]
    );
    // The filter spares windows the edit distance: the figure verifies 8 of its 24 windows.
    assert!(stats.verified <= 8 && stats.verified < stats.windows, "{stats:?}");
}

/// Randomised: patterns inserted among random filler are found with their exact counts.
#[test]
fn inserted_patterns_found_with_exact_counts() {
    let mut x = 99u64;
    let mut next = |m: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    for round in 0..40 {
        // Filler symbols 10.. never repeat; pattern symbols 0..10.
        let len = 3 + next(5) as usize;
        let pat: Vec<u32> = (0..len).map(|i| ((i as u64 + next(2)) % 10) as u32).collect();
        let times = 2 + next(20) as usize;
        let mut seq = Vec::new();
        let mut filler = 10u32;
        let mut starts = Vec::new();
        for _ in 0..times {
            for _ in 0..1 + next(3) {
                seq.push(filler);
                filler += 1;
            }
            starts.push(seq.len() as u32);
            seq.extend(&pat);
        }
        let alphabet = filler;
        let found = detect(&seq, alphabet, None, &PatternOptions::default());
        // The pattern itself may contain a tandem (e.g. 1 1); compare its general form.
        let general = reduce(&pat, alphabet, false).sequence;
        let hit = found
            .iter()
            .find(|p| p.symbols == general && p.positions == starts)
            .unwrap_or_else(|| panic!("round {round}: {pat:?} x{times} not found in {found:#?}"));
        assert_eq!(hit.frequency, times);
    }
}
