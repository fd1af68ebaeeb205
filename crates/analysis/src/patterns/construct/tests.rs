use super::*;

/// The least rotation against every rotation compared by brute force.
#[test]
fn least_rotation_is_the_smallest_of_all_rotations() {
    let cases: [&[u32]; 7] = [
        &[3],
        &[1, 0],
        &[0, 0, 0],
        &[2, 1, 2, 1, 2, 0],
        &[1, 0, 1, 0, 0, 1, 0, 0],
        &[5, 4, 5, 4, 5, 4, 3, 5],
        &[7, 1, 7, 1, 7, 1, 7, 1],
    ];
    for s in cases {
        let rot = |r: usize| [&s[r..], &s[..r]].concat();
        let brute = (0..s.len()).map(rot).min().unwrap();
        assert_eq!(rot(least_rotation(s)), brute, "{s:?}");
    }
}

/// NAS CG on 4 ranks: the inner loop's body parsed at two alignments (rank 0
/// `R0 S0 R1 S1 R1 S1 R1 S1` and `R1 S1 R0 S0 R1 S1 R1 S1`, the other ranks alike) is one
/// pattern; a different body on one rank, or an exchange not from per-rank patterns, is not.
#[test]
fn one_loop_body_at_two_alignments_is_one_pattern() {
    const M: u32 = u32::MAX;
    let (r0, s0, r1, s1) = (10, 11, 12, 13);
    let a = vec![M, 0, r0, s0, r1, s1, r1, s1, r1, s1, M, 1, r1, s1, r0, s0];
    let b = vec![M, 0, r1, s1, r0, s0, r1, s1, r1, s1, M, 1, r0, s0, r1, s1];
    let other = vec![M, 0, r1, s1, r1, s1, r0, s0, r0, s0, M, 1, r0, s0, r1, s1];
    let sigs = vec![a.clone(), b.clone(), other, b];
    let first = [(5, 6), (7, 8), (1, 2), (0, 1)];
    let alias = rotation_aliases(&sigs, &[true, true, true, false], &[3, 5, 9, 9], &first);
    // The most frequent of the two rotations names them; the third differs on rank 0; the
    // last is not from per-rank patterns.
    assert_eq!(alias, vec![1, 1, 2, 3]);
    assert_eq!(rotation_key(&a), rotation_key(&sigs[1]));
    // Equally frequent: the earlier first occurrence names them, whatever the order seen.
    let alias = rotation_aliases(&sigs[..2], &[true, true], &[5, 5], &[(9, 10), (3, 4)]);
    assert_eq!(alias, vec![1, 1]);
}

/// The aliases against rotating every patterned signature (no class sieve), on random
/// signatures of which many are rotations of one another, some equally frequent.
#[test]
fn rotation_aliases_equal_rotating_every_signature() {
    const M: u32 = u32::MAX;
    // A small xorshift generator: `below(n)` in `0..n`.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..200 {
        let mut sigs: Vec<Vec<u32>> = Vec::new();
        for _ in 0..1 + rng.below(12) {
            let rotate_from = (!sigs.is_empty() && rng.below(2) == 0).then(|| rng.below(sigs.len()));
            let sig = match rotate_from {
                // Every rank's string of an earlier signature rotated.
                Some(k) => {
                    let base = sigs[k].clone();
                    let mut out = Vec::new();
                    let mut i = 0;
                    while i < base.len() {
                        let end = base[i + 2..]
                            .iter()
                            .position(|&x| x == M)
                            .map_or(base.len(), |e| i + 2 + e);
                        let part = &base[i + 2..end];
                        let r = rng.below(part.len());
                        out.extend_from_slice(&base[i..i + 2]);
                        out.extend_from_slice(&part[r..]);
                        out.extend_from_slice(&part[..r]);
                        i = end;
                    }
                    out
                }
                None => {
                    let mut out = Vec::new();
                    for rank in 0..1 + rng.below(3) as u32 {
                        out.extend([M, rank]);
                        out.extend((0..1 + rng.below(5)).map(|_| rng.below(3) as u32));
                    }
                    out
                }
            };
            sigs.push(sig);
        }
        let n = sigs.len();
        let patterned: Vec<bool> = (0..n).map(|_| rng.below(5) != 0).collect();
        let count: Vec<u32> = (0..n).map(|_| 1 + rng.below(3) as u32).collect();
        let first: Vec<(Time, Time)> = (0..n).map(|_| (rng.below(4) as Time, 0)).collect();
        // Every patterned signature rotated, the best of each key kept.
        let mut best: HashMap<Vec<u32>, u32> = HashMap::new();
        for s in (0..n).filter(|&s| patterned[s]) {
            let b = best.entry(rotation_key(&sigs[s])).or_insert(s as u32);
            let (c, f) = (count[*b as usize], first[*b as usize]);
            if count[s] > c || (count[s] == c && first[s] < f) {
                *b = s as u32;
            }
        }
        let expected: Vec<u32> = (0..n)
            .map(|s| {
                if patterned[s] {
                    best[&rotation_key(&sigs[s])]
                } else {
                    s as u32
                }
            })
            .collect();
        assert_eq!(
            rotation_aliases(&sigs, &patterned, &count, &first),
            expected,
            "round {round}"
        );
        for a in &sigs {
            for b in &sigs {
                if rotation_key(a) == rotation_key(b) {
                    assert_eq!(rotation_class(a), rotation_class(b));
                }
            }
        }
    }
}

/// A one-off instance over two ranks covering more than a pattern seen three times: after
/// `repeating_first` the repeating pattern is pattern 0 and the instance pattern 1; every
/// instance still names the pattern whose events it has (checked by the events it was built
/// with), examples and step loops moved with their patterns, instances stay in time order.
#[test]
fn repeating_patterns_come_before_instances_seen_once() {
    let pattern = |id: usize, occurrences: usize, covered: u64, ranks: &[Rank]| CommunicationPattern {
        id,
        ranks: ranks.to_vec(),
        events: BTreeMap::new(),
        occurrences,
        positions: Vec::new(),
        spans: Vec::new(),
        first_events: BTreeMap::new(),
        from_rank_patterns: true,
        events_covered: covered,
        variants: Vec::new(),
    };
    let instance = |pattern: u32, start: Time| Instance {
        pattern,
        start,
        end: start + 5,
        parts: Vec::new(),
        variant: 0,
    };
    // Pattern 0: seen once over ranks 0-1, 40 events; pattern 1: three occurrences of 6 events.
    let mut c = CommunicationAnalysis {
        patterns: vec![pattern(0, 1, 40, &[0, 1]), pattern(1, 3, 18, &[0, 1])],
        instances: vec![
            instance(1, 10),
            instance(OUTSIDE, 15),
            instance(0, 20),
            instance(1, 30),
            instance(1, 40),
        ],
        examples: vec![vec![vec![(0, 0, 40)]], vec![vec![(0, 40, 43)]]],
        step_loops: vec![7, 8],
    };
    assert!(c.patterns[0].repeats_no_form() && !c.patterns[1].repeats_no_form());
    assert!(c.repeating_first());
    assert_eq!(
        c.patterns.iter().map(|p| (p.id, p.occurrences)).collect::<Vec<_>>(),
        [(0, 3), (1, 1)]
    );
    let named: Vec<(u32, Time)> = c.instances.iter().map(|i| (i.pattern, i.start)).collect();
    assert_eq!(named, [(0, 10), (OUTSIDE, 15), (1, 20), (0, 30), (0, 40)]);
    assert_eq!(c.examples, vec![vec![vec![(0, 40, 43)]], vec![vec![(0, 0, 40)]]]);
    assert_eq!(c.step_loops, [8, 7]);
    // Already in that order: nothing moves.
    let again = c.clone();
    assert!(!c.repeating_first());
    assert_eq!(c, again);
}
