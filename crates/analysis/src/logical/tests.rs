//! The verification's LCS against Myers' exact diff (the previous implementation), and the
//! representative tie-break hash pinned to fixed-width bytes.

use super::*;

/// The previous `lcs_len`: Myers over the same proportional windows of the whole sequences.
pub(super) fn myers_lcs(a: &[u32], b: &[u32]) -> u64 {
    let windows = (a.len() + b.len()).div_ceil(DIFF_WINDOW).max(1);
    let mut n = 0;
    for w in 0..windows {
        let (a0, a1) = (a.len() * w / windows, a.len() * (w + 1) / windows);
        let (b0, b1) = (b.len() * w / windows, b.len() * (w + 1) / windows);
        for op in similar::capture_diff_deadline(similar::Algorithm::Myers, a, a0..a1, b, b0..b1, None) {
            if let similar::DiffOp::Equal { len, .. } = op {
                n += len as u64;
            }
        }
    }
    n
}

/// xorshift64: reproducible pseudo-random symbols without a dependency.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn bit_parallel_lcs_equals_myers_on_random_sequences() {
    let mut s = 0x9e37_79b9_7f4a_7c15;
    for case in 0..400 {
        let alphabet = 1 + next(&mut s) % 6;
        let len_a = (next(&mut s) % 300) as usize;
        let a: Vec<u32> = (0..len_a).map(|_| (next(&mut s) % alphabet) as u32).collect();
        // Half the cases: `b` is `a` edited (shared prefix/suffix, a few changes).
        let b: Vec<u32> = if case % 2 == 0 {
            let mut b = a.clone();
            for _ in 0..next(&mut s) % 8 {
                if b.is_empty() {
                    break;
                }
                let i = (next(&mut s) as usize) % b.len();
                match next(&mut s) % 3 {
                    0 => b[i] = (next(&mut s) % alphabet) as u32,
                    1 => {
                        b.remove(i);
                    }
                    _ => b.insert(i, (next(&mut s) % alphabet) as u32),
                }
            }
            b
        } else {
            let len_b = (next(&mut s) % 300) as usize;
            (0..len_b).map(|_| (next(&mut s) % alphabet) as u32).collect()
        };
        assert_eq!(lcs_len(&a, &b), myers_lcs(&a, &b), "case {case}: {a:?} / {b:?}");
    }
}

#[test]
fn bit_parallel_lcs_equals_myers_on_real_expansions() {
    // LU 32 class A from its maximal rank alone: the boundary ranks' expansions differ
    // from their real sequences in every wavefront message (the 47 s case's shape).
    let spec = tracelogic_synth::NasSpec {
        iterations: Some(1),
        ..tracelogic_synth::NasSpec::new(tracelogic_synth::NasBenchmark::Lu, tracelogic_synth::NasClass::A, 32)
    };
    let (trace, _) = tracelogic_synth::generate_nas(&spec).unwrap();
    let placement = Placement::new(TopologySpec::parse("grid:8x4").unwrap(), 32, (0..32).map(|r| (r, r))).unwrap();
    let alone = logicalize_ranks(&trace, &placement, Some(&[9])).unwrap();
    let mut differing = 0;
    for r in 0..32 {
        let table = &placement.neighbour_tables_with_self(&[])[r as usize];
        let expanded = physical_calls(&expand_with(table, r, alone.records.iter().map(|x| &x.call)));
        let real = real_calls(&trace, &placement, r);
        let ek: Vec<_> = expanded.iter().map(PhysicalCall::key).collect();
        let rk: Vec<_> = real.iter().map(|(c, _)| c.key()).collect();
        let (sa, sb) = symbols(&ek, &rk);
        differing += usize::from(sa != sb);
        assert_eq!(lcs_len(&ek, &rk), myers_lcs(&sa, &sb), "rank {r}");
    }
    assert_eq!(differing, 20, "the 20 boundary ranks differ");
}

#[test]
fn content_key_hashes_fixed_width_bytes() {
    let mut t = Trace::new("test", "pin", 1);
    let send = t.functions.intern("MPI_Send");
    let recv = t.functions.intern("MPI_Recv");
    let rt = &mut t.ranks[0];
    rt.calls.func = vec![send, recv];
    rt.calls.kind = vec![tracelogic_model::CallKind::Send, tracelogic_model::CallKind::Recv];
    rt.p2p.dir = vec![P2pDir::Send, P2pDir::Recv];
    rt.p2p.tag = vec![7, -1];
    rt.p2p.bytes = vec![80, 1 << 33];
    // The bytes written by hand: each sequence as u64 length then its elements.
    let mut bytes: Vec<u8> = Vec::new();
    bytes.extend(2u64.to_le_bytes());
    bytes.extend(send.to_le_bytes());
    bytes.extend(recv.to_le_bytes());
    bytes.extend(2u64.to_le_bytes());
    bytes.extend((tracelogic_model::CallKind::Send as i64).to_le_bytes());
    bytes.extend((tracelogic_model::CallKind::Recv as i64).to_le_bytes());
    bytes.extend(2u64.to_le_bytes());
    bytes.extend(0i64.to_le_bytes());
    bytes.extend(1i64.to_le_bytes());
    bytes.extend(2u64.to_le_bytes());
    bytes.extend(7i32.to_le_bytes());
    bytes.extend((-1i32).to_le_bytes());
    bytes.extend(2u64.to_le_bytes());
    bytes.extend(80u64.to_le_bytes());
    bytes.extend((1u64 << 33).to_le_bytes());
    assert_eq!(bytes.len(), 8 + 8 + 8 + 16 + 8 + 16 + 8 + 8 + 8 + 16);
    let mut h = std::hash::DefaultHasher::new();
    std::hash::Hasher::write(&mut h, &bytes);
    let key = content_key(&t, 0);
    assert_eq!(key.2, std::hash::Hasher::finish(&h));
    assert_eq!(key.0 .0, 2);
    // On a 64-bit little-endian machine this is the derived hash of the slices the key used
    // before, so native answers (the CLI's representative) are unchanged.
    #[cfg(all(target_pointer_width = "64", target_endian = "little"))]
    {
        use std::hash::Hash;
        let rt = &t.ranks[0];
        let mut d = std::hash::DefaultHasher::new();
        rt.calls.func.hash(&mut d);
        rt.calls.kind.hash(&mut d);
        rt.p2p.dir.hash(&mut d);
        rt.p2p.tag.hash(&mut d);
        rt.p2p.bytes.hash(&mut d);
        assert_eq!(key.2, std::hash::Hasher::finish(&d));
    }
}
