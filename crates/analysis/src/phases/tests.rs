use super::*;

/// Step 5 with a set-up and an end of one occurrence each, larger than `min_share` of the
/// run's events (LAMMPS with RCB balancing: the input broadcasts in one occurrence of 144 of
/// 13,802 events, the statistics' reductions in one of 282): a loop of 300 steps of four
/// exchanges, a first occurrence of 60 broadcasts and a last of 80 reductions (1.5 % and
/// 2 % of the events). Each is split off; the loop alone is not cut.
#[test]
fn set_up_and_end_of_one_large_occurrence() {
    let mut bags: Vec<Vec<u32>> = vec![vec![0; 60]];
    bags.extend(std::iter::repeat_n(vec![1, 2, 3, 4], 300));
    bags.push(vec![5; 80]);
    let occ = content::Bags::from_symbols(&bags);
    let starts: Vec<tracelogic_model::Time> = (0..bags.len() as u64).map(|i| i * 1000).collect();
    let last_end = starts.last().copied().unwrap_or(0) + 1000;
    let opts = PhaseOptions::default();
    let (b, t) = loop_edges(&occ, &starts, last_end, vec![0, bags.len()], Vec::new(), &opts);
    assert_eq!(b, vec![0, 1, bags.len() - 1, bags.len()]);
    assert!(t.iter().all(|t| t.keeps(opts.significance, opts.strength)), "{t:?}");
    let loop_only = content::Bags::from_symbols(&bags[1..301]);
    let (lb, _) = loop_edges(&loop_only, &starts[..300], 300_000, vec![0, 300], Vec::new(), &opts);
    assert_eq!(lb, vec![0, 300]);
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Worked by hand, in the spirit of the thesis' Figure 5.2: `a a a a b b b b`.
/// H = 1 bit. Cut after 4: both halves pure, D_JS = 1. K = 1 + 1 + 1 − 2 = 1,
/// τ = log2(8)·1 / 16 = 3/16, s = (2·8·1 − 3) / 3 = 13/3.
/// Cut after 3: H_r = H(1/5, 4/5) = 0.7219…, D_JS = 1 − 5/8·0.7219 = 0.5488.
#[test]
fn hand_checked_two_block_example() {
    let seq = [0, 0, 0, 0, 1, 1, 1, 1];
    let s = segment(&seq, 0.0);
    let root = &s.tree[0];
    assert!(close(root.entropy, 1.0));
    assert!(close(root.djs, 1.0));
    assert_eq!(root.cut, Some(4));
    assert!(close(root.tau, 3.0 / 16.0));
    assert!(close(root.strength.unwrap(), 13.0 / 3.0));
    let curve = divergence_curve(&seq, 0, 8);
    let h_1_5 = -(0.2f64 * 0.2f64.log2() + 0.8 * 0.8f64.log2());
    assert!(close(curve[2], 1.0 - 5.0 / 8.0 * h_1_5));
    assert!(close(curve[3], 1.0));
    // Pure halves: D_JS = 0 everywhere, K = 1, s = −1 < 0: they stay leaves.
    assert_eq!(s.phases, vec![1, 2]);
    let left = &s.tree[1];
    assert_eq!((left.start, left.end, left.parent), (0, 4, Some(0)));
    assert!(close(left.djs, 0.0));
    assert!(close(left.strength.unwrap(), -1.0));
}

/// `a b` has H = 1; the only cut gives two pure halves, D_JS = 1, K = 1 + 1 + 1 − 2 = 1,
/// τ = log2(2)/4 = 0.25, s = (4 − 1)/1 = 3: cut. A single `a a` has K = 2, τ = 0.5, s = −1.
#[test]
fn length_two_segments() {
    let s = segment(&[0, 1], 0.0);
    assert!(close(s.tree[0].tau, 0.25));
    assert!(close(s.tree[0].strength.unwrap(), 3.0));
    assert_eq!(s.phases.len(), 2);
    let s = segment(&[3, 3], 0.0);
    assert!(close(s.tree[0].tau, 0.5));
    assert!(close(s.tree[0].strength.unwrap(), -1.0));
    assert_eq!(s.phases, vec![0]);
}

#[test]
fn three_phases_found_at_their_boundaries() {
    // init (mixed symbols 0..3), a long solve loop of (4 5 6), finalise (7 8).
    let mut seq: Vec<u32> = vec![0, 1, 2, 3, 1, 0, 2, 3, 0, 1];
    let solve_start = seq.len();
    for _ in 0..200 {
        seq.extend([4, 5, 6]);
    }
    let fin_start = seq.len();
    seq.extend([7, 8, 7, 8, 7, 8, 7, 8]);
    let s = segment(&seq, 0.0);
    let bounds: Vec<usize> = s.phases.iter().map(|&p| s.tree[p].start).collect();
    assert!(bounds.contains(&solve_start), "{bounds:?}");
    assert!(bounds.contains(&fin_start), "{bounds:?}");
    // The solve loop is one homogeneous phase.
    assert!(s
        .phases
        .iter()
        .any(|&p| s.tree[p].start == solve_start && s.tree[p].end == fin_start));
}

#[test]
fn higher_threshold_gives_fewer_phases() {
    let mut seq = Vec::new();
    for block in 0..6u32 {
        for i in 0..(20 + 7 * block) {
            seq.push(block % 3 + (i % 2) * 3);
        }
    }
    let fine = segment(&seq, 0.0).phases.len();
    let coarse = segment(&seq, 2.0).phases.len();
    assert!(coarse <= fine && fine > 1, "fine {fine} coarse {coarse}");
}

#[test]
fn divergence_matches_direct_formula() {
    let seq = [2, 0, 1, 1, 0, 2, 2, 2, 1, 0, 0, 3];
    let curve = divergence_curve(&seq, 0, seq.len());
    let counts = |part: &[u32]| {
        let mut c = vec![0u64; 4];
        part.iter().for_each(|&s| c[s as usize] += 1);
        c
    };
    let n = seq.len() as f64;
    let h = entropy(&counts(&seq));
    for (j, &d) in curve.iter().enumerate() {
        let i = j + 1;
        let direct = h - i as f64 / n * entropy(&counts(&seq[..i])) - (n - i as f64) / n * entropy(&counts(&seq[i..]));
        assert!(close(d, direct), "cut {i}: {d} vs {direct}");
    }
}

#[test]
fn window_entropy_matches_direct() {
    let seq = [0, 1, 0, 2, 2, 2, 1, 0];
    let w = window_entropy(&seq, 3);
    assert_eq!(w.len(), 6);
    for (j, &e) in w.iter().enumerate() {
        let mut c = [0u64; 3];
        seq[j..j + 3].iter().for_each(|&s| c[s as usize] += 1);
        assert!(close(e, entropy(&c)));
    }
}

#[test]
fn empty_and_single() {
    let s = segment(&[], 0.0);
    assert_eq!(s.phases, vec![0]);
    let s = segment(&[5], 0.0);
    assert_eq!(s.tree[0].cut, None);
    assert_eq!(s.phases, vec![0]);
}
