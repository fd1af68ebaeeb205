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
