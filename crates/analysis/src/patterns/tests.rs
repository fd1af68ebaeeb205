use super::*;

fn positions_of(patterns: &[RankPattern], symbols: &[u32]) -> Vec<u32> {
    patterns
        .iter()
        .find(|p| p.symbols == symbols)
        .map(|p| p.positions.clone())
        .unwrap_or_default()
}

/// An outer loop whose body begins and ends with the same inner loop: the general form
/// merges the inner runs across iterations; the outer loop is found with one copy per
/// iteration, starting after the set-up. A rotation with as many copies as the run is not.
#[test]
fn outer_loop_iterations_start_where_the_loop_starts() {
    // set-up 7 8, then 4 × (C C x y C C C) with C = 0 1, then 9.
    let mut s = vec![7, 8];
    for _ in 0..4 {
        s.extend([0, 1, 0, 1, 5, 6, 0, 1, 0, 1, 0, 1]);
    }
    s.push(9);
    let p = detect(&s, 10, None, &PatternOptions::default());
    let outer = outer_loops(&s, 10, &p);
    assert_eq!(outer.len(), 1, "{outer:?}");
    assert_eq!(outer[0].0, s[2..14].to_vec());
    assert_eq!(outer[0].1, vec![(2, 14), (14, 26), (26, 38), (38, 50)]);
    // The same loop entered at the inner loop's tail (`1` before it): the body still starts
    // where the periodicity starts.
    let mut t = vec![7, 1];
    t.extend_from_slice(&s[2..]);
    let p = detect(&t, 10, None, &PatternOptions::default());
    let outer = outer_loops(&t, 10, &p);
    assert_eq!(outer[0].1.len(), 4, "{outer:?}");
    // A loop without inner loops is left to the tandem runs.
    let plain: Vec<u32> = (0..6).flat_map(|_| [0, 1, 2, 3]).collect();
    let p = detect(&plain, 4, None, &PatternOptions::default());
    assert!(outer_loops(&plain, 4, &p).is_empty());
}

/// A loop body executed once between other calls is an occurrence like its runs' copies.
#[test]
fn loop_body_outside_its_runs_is_an_occurrence() {
    // 5 (0 1)x3 6 (0 1) 7 7 (0 1)x4 6
    let s = [5, 0, 1, 0, 1, 0, 1, 6, 0, 1, 7, 7, 0, 1, 0, 1, 0, 1, 0, 1, 6];
    let p = detect(&s, 8, None, &PatternOptions::default());
    assert_eq!(positions_of(&p, &[0, 1]), vec![1, 3, 5, 8, 12, 14, 16, 18]);
}

/// Inside a body that repeats more often than the unit, the unit stays part of that body.
#[test]
fn unit_inside_a_more_frequent_body_is_not_added() {
    // (0 1)x2 then (2 0 1 3)x5: `0 1` inside each step is part of the step.
    let mut s = vec![0, 1, 0, 1];
    for _ in 0..5 {
        s.extend([2, 0, 1, 3]);
    }
    let p = detect(&s, 4, None, &PatternOptions::default());
    assert_eq!(positions_of(&p, &[0, 1]), vec![0, 2]);
    assert_eq!(positions_of(&p, &[2, 0, 1, 3]).len(), 5);
}

fn pattern(symbols: Vec<u32>, occurrences: &[(u32, u32)]) -> RankPattern {
    RankPattern {
        sequence: Vec::new(),
        compact: String::new(),
        frequency: occurrences.len(),
        positions: occurrences.iter().map(|o| o.0).collect(),
        ends: occurrences.iter().map(|o| o.1).collect(),
        tandem: true,
        repeat: false,
        outer: false,
        symbols,
    }
}

/// A rare composite starting before a more frequent pattern does not swallow it; one starting
/// with the frequent pattern loses at its start; a frequent composite keeps its parts.
#[test]
fn rarer_composite_yields_to_frequent_pattern_inside() {
    // Set-up event, then a loop of 4 exchanges (2 events each), twice: the composite
    // `b (x y)` occurs twice and spans each loop.
    let composite = pattern(vec![9, 0, 1], &[(0, 9), (9, 18)]);
    let exchange = pattern(
        vec![0, 1],
        &[(1, 3), (3, 5), (5, 7), (7, 9), (10, 12), (12, 14), (14, 16), (16, 18)],
    );
    let occ = parse_occurrences(18, &[composite, exchange.clone()]);
    assert_eq!(
        occ,
        exchange
            .positions
            .iter()
            .zip(&exchange.ends)
            .map(|(&s, &e)| (s, e))
            .collect::<Vec<_>>()
    );
    // A step seen 3 times containing a part seen twice keeps the step.
    let step = pattern(vec![0, 1, 2, 3], &[(0, 4), (4, 8), (8, 12)]);
    let part = pattern(vec![1, 2], &[(1, 3), (5, 7)]);
    assert_eq!(
        parse_occurrences(12, &[step.clone(), part]),
        vec![(0, 4), (4, 8), (8, 12)]
    );
    // A loop body (three copies in a row) keeps a part counted more often elsewhere.
    let part = pattern(vec![1, 2], &[(1, 3), (5, 7), (9, 11), (12, 14), (14, 16)]);
    assert_eq!(
        parse_occurrences(16, &[step, part]),
        vec![(0, 4), (4, 8), (8, 12), (12, 14), (14, 16)]
    );
}

/// A loop body's occurrence that is no iteration of its loop — a general-form occurrence
/// standing for a whole run of the main loop — yields to the main loop; one as long as its
/// back-to-back copies does not, even where the main loop starts inside it.
#[test]
fn only_iterations_of_a_loop_body_keep_the_main_loop_inside() {
    let pattern = |frequency: usize, spans: &[(u32, u32)]| RankPattern {
        sequence: Vec::new(),
        compact: String::new(),
        frequency,
        positions: spans.iter().map(|s| s.0).collect(),
        ends: spans.iter().map(|s| s.1).collect(),
        tandem: true,
        repeat: false,
        outer: false,
        symbols: vec![0, 1],
    };
    // Main loop: 4-event copies at 40..80 and 100..140 (20 copies).
    let main: Vec<(u32, u32)> = (0..20u32)
        .map(|i| {
            let s = if i < 10 { 40 + 4 * i } else { 60 + 4 * i };
            (s, s + 4)
        })
        .collect();
    // A rarer loop body: three back-to-back copies of 5, 3 and 12 events, then one occurrence
    // of 60 events (30..90) holding ten copies of the main loop.
    let deep = [(0, 5), (5, 8), (8, 20), (30, 90)];
    let occ = parse_occurrences(150, &[pattern(20, &main), pattern(4, &deep)]);
    assert!(!occ.contains(&(30, 90)), "{occ:?}");
    assert!(occ.contains(&(40, 44)) && occ.contains(&(8, 20)), "{occ:?}");
    // An isolated copy as long as the back-to-back ones is an iteration: it stays whole.
    let deep = [(0, 5), (5, 8), (8, 20), (90, 102)];
    let occ = parse_occurrences(150, &[pattern(20, &main), pattern(4, &deep)]);
    assert!(occ.contains(&(90, 102)), "{occ:?}");
    assert!(!occ.contains(&(100, 104)), "{occ:?}");
}
