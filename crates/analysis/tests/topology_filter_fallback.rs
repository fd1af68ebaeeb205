//! The automatic filter's fallback cuts (`topology::fallback_cuts`, docs/topology.md §1): when
//! the widest gap's graph matches no topology, the other qualifying cuts are tried widest gap
//! first and the first one a topology matches is taken. NAS MG class S on 128 ranks (Logicalization
//! Table 7: an 8x4x4 torus) separates its torus pairs from its coarse-level pairs by less than
//! the 5x the first cut needs, so only the fallback finds its torus.

#![cfg(not(target_arch = "wasm32"))]

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::time::Instant;
use tracelogic_analysis::matrix::{CommMatrix, Entry};
use tracelogic_analysis::topology::{
    candidate_cuts, fallback_cuts, identify_matrix, Threshold, TopologyOptions, TopologyReport, AUTO_MIN_GAP,
    FALLBACK_MIN_GAP, MAX_FALLBACK_CUTS,
};
use tracelogic_model::Selection;
use tracelogic_synth::{
    generate_nas, generate_with_truth, NasBenchmark, NasClass, NasSpec, NasTruth, Numbering, Spec, TopologySpec,
};

fn mg(class: NasClass, ranks: u32, iterations: Option<u32>, numbering: Numbering) -> (CommMatrix, NasTruth) {
    let spec = NasSpec {
        iterations,
        numbering,
        seed: 5,
        ..NasSpec::new(NasBenchmark::Mg, class, ranks)
    };
    let (trace, truth) = generate_nas(&spec).expect("MG skeleton");
    (CommMatrix::from_trace(&trace, &Selection::default()), truth)
}

fn with(threshold: Threshold) -> TopologyOptions {
    TopologyOptions {
        threshold,
        ..TopologyOptions::default()
    }
}

/// The pairs of ranks whose NAS processes are neighbours in the skeleton's process grid.
fn truth_edges(truth: &NasTruth) -> BTreeSet<[u32; 2]> {
    let grid = TopologySpec::parse(&truth.topology).unwrap().graph();
    let n = truth.node_of_rank.len() as u32;
    let mut out = BTreeSet::new();
    for a in 0..n {
        for b in a + 1..n {
            if grid.has_edge(truth.node_of_rank[a as usize], truth.node_of_rank[b as usize]) {
                out.insert([a, b]);
            }
        }
    }
    out
}

fn label(r: &TopologyReport) -> Option<&str> {
    r.identification.matched.as_ref().map(|m| m.label.as_str())
}

#[test]
fn mg_128_class_s_is_its_8x4x4_torus_through_the_fallback_cut() {
    for numbering in [Numbering::RowMajor, Numbering::Random] {
        let (m, truth) = mg(NasClass::S, 128, None, numbering);
        assert_eq!(
            truth.topology, "torus:4x4x8",
            "the process grid (Logicalization Table 7: 8x4x4 torus)"
        );
        let what = format!("MG S 128 {numbering:?}");
        let rep = identify_matrix(&m, &TopologyOptions::default());
        assert_eq!(label(&rep), Some("8x4x4 torus"), "{what}");
        // The graph is the process grid's, rank for rank: the cut removed exactly the pairs
        // outside the torus (the coarse levels' partners 2 and 4 processes apart).
        let edges: BTreeSet<[u32; 2]> = rep.edges.iter().copied().collect();
        assert_eq!(edges, truth_edges(&truth), "{what}");
        for place in &rep.identification.mapping {
            for nb in &place.neighbours {
                let (a, b) = (place.rank.min(nb.rank), place.rank.max(nb.rank));
                assert!(edges.contains(&[a, b]), "{what}: {a}-{b}");
            }
        }
        let f = &rep.filter;
        assert_eq!(f.mode, "auto");
        assert!(f.pairs_kept < f.pairs_before, "{what}: {f:?}");
        assert!(
            !f.removed.is_empty() && f.removed_share < 0.05,
            "{what}: {}",
            f.removed_share
        );
        let gap = f.gap_ratio.expect("the cut taken sits at a gap");
        assert!((FALLBACK_MIN_GAP..AUTO_MIN_GAP).contains(&gap), "{what}: {gap}");
        // The report says the widest gap (here: no gap of 5x, so every pair kept) matched
        // nothing and which cut was taken.
        let fb = f.fallback.as_ref().expect("fallback figures");
        assert_eq!(fb.widest.pairs_kept, f.pairs_before, "{what}");
        assert_eq!(
            (fb.widest.gap_ratio, fb.widest.matched.as_deref()),
            (None, None),
            "{what}"
        );
        let taken = &fb.tried[fb.taken.expect("a cut was taken")];
        assert_eq!(
            fb.taken,
            Some(fb.tried.len() - 1),
            "{what}: tries stop at the first match"
        );
        assert!(fb.tried[..fb.tried.len() - 1].iter().all(|c| c.matched.is_none()));
        assert_eq!(taken.matched.as_deref(), label(&rep), "{what}");
        assert_eq!(
            (
                taken.pairs_kept,
                taken.gap_ratio,
                taken.threshold_pct,
                taken.removed_share
            ),
            (f.pairs_kept, f.gap_ratio, f.threshold_pct, f.removed_share),
            "{what}"
        );
        assert_eq!(f.removed.len(), f.pairs_before - f.pairs_kept, "{what}");
        let said = fb.summary();
        assert!(
            said.starts_with("keeping every pair (no gap of 5x or more was cut) identified no topology"),
            "{said}"
        );
        assert!(
            said.contains(&format!("the {gap:.1}x gap ({} pairs kept", f.pairs_kept)),
            "{said}"
        );
    }
}

#[test]
fn a_fixed_threshold_keeps_its_meaning_and_never_falls_back() {
    let (m, _) = mg(NasClass::S, 128, Some(1), Numbering::RowMajor);
    // The paper's 5 % cuts only the lightest coarse pairs: no match, and no other cut tried.
    let five = identify_matrix(&m, &with(Threshold::Percent(5.0)));
    assert_eq!(five.filter.mode, "fixed");
    assert!(five.filter.fallback.is_none());
    assert_eq!(label(&five), None);
    let auto = identify_matrix(&m, &TopologyOptions::default());
    assert!(five.filter.pairs_kept > auto.filter.pairs_kept);
    // A fixed cut inside the same gap gives the same graph without any fallback.
    let at = auto.filter.threshold_pct;
    let fixed = identify_matrix(&m, &with(Threshold::Percent(at)));
    assert!(fixed.filter.fallback.is_none());
    assert_eq!(fixed.edges, auto.edges);
    assert_eq!(label(&fixed), label(&auto));
}

#[test]
fn a_first_cut_that_matches_tries_nothing_else() {
    // Class A on 128 ranks: a gap of more than 100x, the first cut gives the torus.
    let (m, truth) = mg(NasClass::A, 128, Some(1), Numbering::Random);
    let rep = identify_matrix(&m, &TopologyOptions::default());
    assert_eq!(label(&rep), Some("8x4x4 torus"));
    assert!(rep.filter.gap_ratio.unwrap() >= AUTO_MIN_GAP);
    assert!(rep.filter.fallback.is_none());
    assert_eq!(rep.edges.iter().copied().collect::<BTreeSet<_>>(), truth_edges(&truth));
}

#[test]
fn heavy_noise_below_five_x_is_cut_by_the_fallback_and_only_the_noise() {
    // Noise at 40 % of the message size from half the ranks: 2.5x below the pattern, so the
    // first cut keeps it and nothing matches; the fallback removes exactly the noise pairs.
    for (i, topology) in ["torus:4x4", "grid:6x4", "torus:3x3x2", "stencil8:4x4", "binary-tree:15"]
        .into_iter()
        .enumerate()
    {
        let spec = Spec {
            topology: TopologySpec::parse(topology).unwrap(),
            numbering: Numbering::Random,
            seed: 40 + i as u64,
            iterations: 3,
            noise: Some("0.5:40%".parse().unwrap()),
            ..Spec::default()
        };
        let (trace, truth) = generate_with_truth(&spec).unwrap();
        let rep = identify_matrix(
            &CommMatrix::from_trace(&trace, &Selection::default()),
            &TopologyOptions::default(),
        );
        let rank = |u: u32| truth.node_of_rank.iter().position(|&n| n == u).unwrap() as u32;
        let expected: BTreeSet<[u32; 2]> = spec
            .topology
            .graph()
            .edges()
            .map(|(u, v)| [rank(u).min(rank(v)), rank(u).max(rank(v))])
            .collect();
        let noise: BTreeSet<[u32; 2]> = truth.phases[0]
            .noise
            .iter()
            .map(|l| [l.sender.min(l.receiver), l.sender.max(l.receiver)])
            .collect();
        assert!(!noise.is_empty(), "{topology}");
        let removed: BTreeSet<[u32; 2]> = rep.filter.removed.iter().map(|p| [p.a, p.b]).collect();
        assert_eq!(removed, noise, "{topology}");
        assert_eq!(
            rep.edges.iter().copied().collect::<BTreeSet<_>>(),
            expected,
            "{topology}"
        );
        let found: Vec<&str> = rep
            .identification
            .equivalents
            .iter()
            .map(|e| e.label.as_str())
            .collect();
        assert!(found.contains(&spec.topology.label().as_str()), "{topology}: {found:?}");
        let fb = rep.filter.fallback.as_ref().expect("the first cut kept the noise");
        assert_eq!((fb.widest.gap_ratio, fb.taken), (None, Some(0)), "{topology}");
    }
}

/// Weight levels of a 6x6 torus whose two dimensions differ by 3x, with stray pairs at two
/// lower levels and one torus edge missing (so that no cut's graph is in the catalogue).
fn unmatched_torus(rng: &mut StdRng) -> CommMatrix {
    let spec = TopologySpec::parse("torus:6x6").unwrap();
    let g = spec.graph();
    let mut perm: Vec<u32> = (0..36).collect();
    perm.shuffle(rng);
    let mut entries = Vec::new();
    let mut push = |a: u32, b: u32, bytes: u64| {
        for (from, to) in [(a, b), (b, a)] {
            entries.push(Entry {
                from: perm[from as usize],
                to: perm[to as usize],
                bytes,
                messages: 1,
            });
        }
    };
    for (k, (a, b)) in g.edges().enumerate() {
        if k == 0 {
            continue;
        }
        // Row-major nodes: the pair is along dimension 0 when they share the row.
        let along_rows = spec.coords(a)[1] == spec.coords(b)[1];
        push(a, b, if along_rows { 9000 } else { 3000 });
    }
    for (i, bytes) in [(0u32, 900u64), (1, 900), (2, 90), (3, 90)] {
        push(i, i + 20, bytes);
    }
    CommMatrix::from_entries(36, entries).unwrap()
}

#[test]
fn when_no_cut_matches_the_first_cut_is_reported_with_what_was_tried() {
    let mut rng = StdRng::seed_from_u64(7);
    let m = unmatched_torus(&mut rng);
    let rep = identify_matrix(&m, &TopologyOptions::default());
    assert_eq!(label(&rep), None);
    let f = &rep.filter;
    let fb = f.fallback.as_ref().expect("other cuts were tried");
    assert_eq!(fb.taken, None);
    assert!(fb.tried.iter().all(|c| c.matched.is_none()));
    // The report describes the first (widest-gap) cut, and its near matches are kept.
    assert_eq!((f.pairs_kept, f.gap_ratio), (fb.widest.pairs_kept, fb.widest.gap_ratio));
    assert!(!rep.identification.near_matches.is_empty());
    // The widest gap 10x (strays 900 -> 90) first, then 3.3x (torus 3000 -> strays 900), then
    // 3x between the torus' two dimensions (every rank keeps an edge of the heavier one); never
    // the strays 10x below the widest cut (keeping every pair).
    let gaps: Vec<Option<f64>> = std::iter::once(fb.widest.gap_ratio)
        .chain(fb.tried.iter().map(|c| c.gap_ratio))
        .collect();
    let said = fb.summary();
    assert!(said.starts_with("the widest gap (10.0x, "), "{said}");
    assert!(
        said.ends_with("nor did the 2 other cut(s) tried: the 3.3x gap, the 3.0x gap."),
        "{said}"
    );
    let round = |g: Option<f64>| g.map(|g| (g * 10.0).round() / 10.0);
    assert_eq!(
        gaps.into_iter().map(round).collect::<Vec<_>>(),
        [Some(10.0), Some(3.3), Some(3.0)]
    );
}

#[test]
fn cuts_come_widest_gap_first_and_keep_an_edge_at_every_rank() {
    // Pairs sorted by weight; ranks 0-5. The ring 0-1-2-3-4-5 carries 1000/1000/400/400/400/400,
    // then strays 0-3 (100), 1-4 (40), 2-5 (10).
    let weights = [1000u64, 1000, 400, 400, 400, 400, 100, 40, 10];
    let pairs = [
        (0u32, 1u32),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 5),
        (0, 5),
        (0, 3),
        (1, 4),
        (2, 5),
    ];
    // After 2 pairs ranks 3-5 have no edge: the 2.5x gap there is no cut. Equal gaps: the one
    // keeping fewer pairs first (as the first cut has always chosen).
    let cuts = candidate_cuts(&weights, &pairs, 6, FALLBACK_MIN_GAP);
    assert_eq!(cuts, [(6, 4.0), (8, 4.0), (7, 2.5)]);
    assert!(candidate_cuts(&weights, &pairs, 6, AUTO_MIN_GAP).is_empty());
    // The first cut kept everything: every gap is tried, keeping everything is not again.
    let all = fallback_cuts(&weights, &pairs, 6, weights.len());
    assert_eq!(all, [(6, Some(4.0)), (8, Some(4.0)), (7, Some(2.5))]);
    // The first cut kept 6: only cuts keeping fewer pairs (none here qualifies), never the
    // pairs below the first cut's gap, nor every pair.
    assert_eq!(fallback_cuts(&weights, &pairs, 6, 6), []);
    assert_eq!(fallback_cuts(&weights, &pairs, 6, 8), [(6, Some(4.0)), (7, Some(2.5))]);
    // Gaps under 2x are never tried.
    let smooth = [100u64, 60, 36, 22, 13];
    let ring = [(0u32, 1u32), (1, 2), (2, 3), (3, 4), (0, 4)];
    assert_eq!(fallback_cuts(&smooth, &ring, 5, 5), []);
}

#[test]
fn at_most_max_fallback_cuts_are_tried() {
    // A line 0-1-...-19 at weight 1e12 then 19 strays each 3x lighter than the previous one:
    // 19 qualifying cuts, of which only the widest MAX_FALLBACK_CUTS are tried.
    let mut weights = vec![1_000_000_000_000u64; 19];
    let mut pairs: Vec<(u32, u32)> = (0..19).map(|i| (i, i + 1)).collect();
    let mut w = 1_000_000_000_000u64 / 2;
    for i in 0..19u32 {
        weights.push(w);
        pairs.push((i, (i + 2) % 20));
        w /= 3 + u64::from(i % 2);
    }
    let cuts = fallback_cuts(&weights, &pairs, 20, weights.len());
    assert_eq!(cuts.len(), MAX_FALLBACK_CUTS);
    let gaps: Vec<f64> = cuts.iter().map(|c| c.1.unwrap()).collect();
    assert!(gaps.windows(2).all(|w| w[0] >= w[1]), "{gaps:?}");
    assert!(
        gaps.iter().all(|&g| g >= 3.9),
        "the 4x gaps come before the 3x ones: {gaps:?}"
    );
}

/// The worst cases measured: a 16x16x16 torus (4096 ranks) with two of its dimension-0 edges
/// swapped (a-b, c-d become a-d, c-b: a regular look-alike that only the distance profile or
/// the isomorphism search refutes), plus stray pairs at six lower levels 2.5x apart. (1) The
/// three dimensions weigh 2.5x apart: the first cut keeps everything (no gap reaches 5x) and
/// MAX_FALLBACK_CUTS cuts are tried. (2) The dimensions weigh the same: the first cut keeps the
/// look-alike torus (a 15.6x gap) and its near matches are searched, then 6 other cuts are
/// tried. No cut's graph matches. Prints the cost; `cargo test --release -p tracelogic-analysis
/// --test topology_filter_fallback -- --ignored --nocapture`.
#[test]
#[ignore = "cost measurement (4096 ranks; run in release)"]
fn cost_of_the_fallback_on_4096_ranks_without_a_match() {
    for (weights, tries) in [([100_000u64, 40_000, 16_000], MAX_FALLBACK_CUTS), ([100_000; 3], 6)] {
        let m = look_alike_torus_with_strays(weights);
        let t = Instant::now();
        let rep = identify_matrix(&m, &TopologyOptions::default());
        let total = t.elapsed();
        let fb = rep.filter.fallback.as_ref().expect("fallback");
        assert_eq!(label(&rep), None);
        assert_eq!(fb.tried.len(), tries, "{weights:?}");
        println!(
            "4096 ranks, dimensions at {weights:?}, no match: {:.0} ms in all; first cut ({} pairs) {:.0} ms (near \
             matches included), tried cuts {:?} ms",
            total.as_secs_f64() * 1e3,
            fb.widest.pairs_kept,
            fb.widest.milliseconds,
            fb.tried
                .iter()
                .map(|c| (c.pairs_kept, c.milliseconds.round()))
                .collect::<Vec<_>>()
        );
    }
}

fn look_alike_torus_with_strays(weights: [u64; 3]) -> CommMatrix {
    let spec = TopologySpec::parse("torus:16x16x16").unwrap();
    let g = spec.graph();
    let mut rng = StdRng::seed_from_u64(3);
    let mut entries = Vec::new();
    let mut push = |a: u32, b: u32, bytes: u64| {
        for (from, to) in [(a, b), (b, a)] {
            entries.push(Entry {
                from,
                to,
                bytes,
                messages: 1,
            });
        }
    };
    let dim = |a: u32, b: u32| {
        let (ca, cb) = (spec.coords(a), spec.coords(b));
        (0..3).find(|&d| ca[d] != cb[d]).unwrap()
    };
    let mut edges: Vec<(u32, u32)> = g.edges().collect();
    let along0: Vec<usize> = (0..edges.len()).filter(|&k| dim(edges[k].0, edges[k].1) == 0).collect();
    let (i, j) = (along0[0], along0[along0.len() / 2]);
    let ((a, b), (c, d)) = (edges[i], edges[j]);
    assert!(!g.has_edge(a, d) && !g.has_edge(c, b));
    edges[i] = (a, d);
    edges[j] = (c, b);
    for (k, &(a, b)) in edges.iter().enumerate() {
        let level = if k == i || k == j { 0 } else { dim(a, b) };
        push(a, b, weights[level]);
    }
    for level in [6_400u64, 2_560, 1_024, 410, 164, 66] {
        for _ in 0..200 {
            let (a, b) = (rng.gen_range(0..4096), rng.gen_range(0..4096));
            if a != b && !g.has_edge(a, b) {
                push(a, b, level);
            }
        }
    }
    CommMatrix::from_entries(4096, entries).unwrap()
}

#[test]
fn one_time_transfers_as_heavy_as_the_halo_are_cut_by_message_counts() {
    // PETSc 3.18's snes tutorial ex5 (Bratu, 64x64 DMDA) on 6 ranks, recorded with SST DUMPI
    // (held out, docs/corpus.md): `-dm_view` reports a 2x3 process grid (m 2, n 3), and every
    // rank sends its part of the viewed vectors to rank 0 once — 32,792 bytes in 10 messages,
    // as heavy as a halo pair's 49,568-108,320 bytes in ~300 messages. No cut of the bytes
    // separates them (the gap is 1.5x); the message counts do (298 against 11).
    let bytes = [
        [0, 51936, 75536, 8, 8, 8],
        [84720, 0, 0, 75528, 0, 0],
        [108320, 0, 0, 49568, 75528, 0],
        [32792, 75528, 49568, 0, 0, 75528],
        [32792, 0, 75528, 0, 0, 49568],
        [32792, 0, 0, 75528, 49568, 0],
    ];
    let messages = [
        [0, 301, 300, 2, 2, 2],
        [308, 0, 1, 298, 0, 0],
        [308, 0, 0, 299, 298, 0],
        [10, 298, 298, 0, 1, 298],
        [10, 0, 298, 0, 0, 299],
        [11, 0, 0, 298, 298, 0],
    ];
    let r = identify_matrix(&matrix_of(&bytes, &messages), &with(Threshold::Auto));
    assert_eq!(label(&r), Some("3x2 grid"), "{:?}", r.filter);
    assert_eq!(r.filter.metric, "messages");
    assert_eq!(r.filter.pairs_kept, 7);
    let fb = r.filter.fallback.as_ref().expect("fallback figures");
    let taken = &fb.tried[fb.taken.expect("a cut taken")];
    assert_eq!(taken.metric, "messages");
    assert!(fb
        .tried
        .iter()
        .take(fb.taken.unwrap())
        .all(|c| c.metric == "bytes" && c.matched.is_none()));
    assert!(fb.summary().contains("in messages"), "{}", fb.summary());

    // ksp ex29 (multigrid on a 65x65 DMDA, the same 2x3 grid) on 6 ranks: every pair talks
    // (its multigrid's few messages between far ranks), so keeping every pair gives the complete
    // graph, which all-to-all matches whatever the structure; that cut comes after the count
    // cuts, and the counts give the grid (halo ~4,230 messages a pair, then 631 at most).
    let bytes = [
        [4304, 278528, 423676, 5004, 2544, 2540],
        [474292, 3920, 5000, 389896, 1256, 1252],
        [620232, 6188, 4304, 278480, 423684, 4956],
        [200504, 389760, 277540, 3920, 5000, 389944],
        [199248, 2492, 423672, 6188, 4112, 259748],
        [198008, 1252, 3752, 389920, 258784, 3760],
    ];
    let messages = [
        [36, 4236, 4244, 479, 171, 171],
        [4298, 36, 631, 4232, 159, 159],
        [4289, 621, 36, 4224, 4236, 467],
        [533, 4229, 4238, 36, 631, 4236],
        [219, 159, 4231, 621, 36, 4224],
        [220, 159, 473, 4231, 4238, 36],
    ];
    let r = identify_matrix(&matrix_of(&bytes, &messages), &with(Threshold::Auto));
    assert_eq!(label(&r), Some("3x2 grid"), "{:?}", r.filter);
    let fb = r.filter.fallback.as_ref().expect("fallback figures");
    assert!(
        fb.tried.iter().all(|c| c.gap_ratio.is_some()),
        "every pair kept is not tried before"
    );
}

/// A matrix of `N` ranks from its bytes and messages, row = sender.
fn matrix_of<const N: usize>(bytes: &[[u64; N]; N], messages: &[[u64; N]; N]) -> CommMatrix {
    let entries = (0..N).flat_map(|a| {
        (0..N).filter(move |&b| messages[a][b] > 0).map(move |b| Entry {
            from: a as u32,
            to: b as u32,
            bytes: bytes[a][b],
            messages: messages[a][b],
        })
    });
    CommMatrix::from_entries(N as u32, entries).unwrap()
}

#[test]
fn groups_that_only_talk_among_themselves_are_found_below_light_gathers() {
    // MrBayes 3.2.7a (MPI) on 8 ranks, 2 runs of 4 chains, recorded with SST DUMPI (held out,
    // docs/corpus.md): one chain per rank, so ranks 0-3 hold run 1 and ranks 4-7 run 2, and a
    // run's chains swap states among themselves only (every pair of a run). Rank 0 also gathers
    // the other run's printed states (4,437-17,265 bytes from ranks 4-7) — 2.2x below the
    // lightest swap pair (37,557 bytes), so the first cut keeps them and nothing matches. The
    // cut under them leaves two disjoint 4-rank all-to-alls: the two runs.
    let bytes = [
        [0, 117620, 37340, 29420, 564, 564, 564, 564],
        [120245, 0, 41376, 49992, 0, 0, 0, 0],
        [58976, 41376, 0, 148696, 0, 0, 0, 0],
        [37557, 49992, 148696, 0, 0, 0, 0, 0],
        [10536, 0, 0, 0, 0, 121816, 228696, 79176],
        [6251, 0, 0, 0, 121816, 0, 95088, 117536],
        [17265, 0, 0, 0, 228696, 95088, 0, 59320],
        [4437, 0, 0, 0, 79176, 117536, 59320, 0],
    ];
    let messages = [
        [0, 2291, 836, 710, 3, 3, 3, 3],
        [2353, 0, 924, 1101, 0, 0, 0, 0],
        [1022, 924, 0, 2839, 0, 0, 0, 0],
        [808, 1101, 2839, 0, 0, 0, 0, 0],
        [109, 0, 0, 0, 0, 2359, 4287, 1605],
        [85, 0, 0, 0, 2359, 0, 1878, 2276],
        [157, 0, 0, 0, 4287, 1878, 0, 1267],
        [73, 0, 0, 0, 1605, 2276, 1267, 0],
    ];
    let r = identify_matrix(&matrix_of(&bytes, &messages), &with(Threshold::Auto));
    let cliques = r.cliques.as_ref().expect("two disjoint cliques");
    assert_eq!((cliques.count, cliques.size), (2, 4), "{:?}", r.filter);
    let groups: Vec<Vec<u32>> = r.components.iter().map(|c| c.ranks.clone()).collect();
    assert_eq!(groups, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
    assert!(r.components.iter().all(|c| c.identification.matched.is_some()));
    assert_eq!(r.filter.pairs_kept, 12);
    let fb = r.filter.fallback.as_ref().expect("fallback figures");
    let taken = &fb.tried[fb.taken.expect("a cut taken")];
    assert_eq!(taken.matched.as_deref(), Some(cliques.label.as_str()));
}

#[test]
fn one_exchange_whose_messages_differ_in_size_is_not_split_into_groups() {
    // Code_Saturne 6.0.2 (held out, docs/corpus.md), a 24x24x3 cavity split by its Morton curve
    // on 8 ranks, the time loop (1.2-3.4 s) recorded with SST DUMPI. Its partition file gives
    // each rank's face neighbours: 4 pairs share 132 faces, 12 share 12; every face pair
    // exchanges in every solver iteration (7,612-7,614 messages), the vertex-only pairs 68
    // empty messages. The 12-face pairs sit 8.9x below in bytes: cutting there left 4 disjoint
    // pairs ("4 x 2-node line") and dropped 24 % of the traffic.
    let bytes = [
        [0, 5085888, 537376, 0, 544700, 0, 0, 0],
        [5286420, 0, 559340, 595316, 581312, 573344, 0, 0],
        [537368, 537368, 0, 5085872, 0, 0, 544692, 0],
        [0, 544692, 5286420, 0, 0, 0, 581312, 573344],
        [552016, 537368, 0, 0, 0, 5085872, 537368, 0],
        [0, 566020, 0, 0, 5307748, 0, 559340, 595316],
        [0, 0, 552016, 537368, 537368, 537368, 0, 5085872],
        [0, 0, 0, 565924, 0, 529948, 5306708, 0],
    ];
    let messages = [
        [0, 7614, 7614, 68, 7614, 68, 0, 0],
        [7613, 0, 7613, 7613, 7613, 7613, 68, 68],
        [7613, 7613, 0, 7613, 68, 68, 7613, 68],
        [68, 7613, 7613, 0, 68, 68, 7613, 7613],
        [7613, 7613, 68, 68, 0, 7613, 7613, 68],
        [68, 7613, 68, 68, 7613, 0, 7613, 7613],
        [0, 68, 7613, 7613, 7613, 7613, 0, 7613],
        [0, 68, 68, 7612, 68, 7612, 7612, 0],
    ];
    // The face pairs of the partition file (partition_output/domain_number_8 and the mesh).
    let faces: BTreeSet<[u32; 2]> = [
        [0, 1],
        [0, 2],
        [0, 4],
        [1, 2],
        [1, 3],
        [1, 4],
        [1, 5],
        [2, 3],
        [2, 6],
        [3, 6],
        [3, 7],
        [4, 5],
        [4, 6],
        [5, 6],
        [5, 7],
        [6, 7],
    ]
    .into_iter()
    .collect();
    let r = identify_matrix(&matrix_of(&bytes, &messages), &with(Threshold::Auto));
    let edges: BTreeSet<[u32; 2]> = r.edges.iter().copied().collect();
    assert_eq!(edges, faces, "{:?}", r.filter);
    let split = r.filter.size_split.as_ref().expect("the 8.9x gap passed over");
    assert_eq!((split.pairs_kept, split.groups), (4, 4));
    assert!((split.gap_ratio - 8.9).abs() < 0.05, "{}", split.gap_ratio);
    assert!(split.summary().contains("4 separate groups"), "{}", split.summary());

    // The same bytes with the light pairs exchanging a tenth of the messages: traffic off the
    // pattern, cut as before.
    let mut fewer = messages;
    for (a, row) in fewer.iter_mut().enumerate() {
        for (b, m) in row.iter_mut().enumerate() {
            if *m > 1000 && bytes[a][b] < 1_000_000 {
                *m /= 10;
            }
        }
    }
    let r = identify_matrix(&matrix_of(&bytes, &fewer), &with(Threshold::Auto));
    assert!(r.filter.size_split.is_none());
    assert_eq!(r.filter.pairs_kept, 4, "{:?}", r.filter);
}

#[test]
fn a_master_that_sends_a_worker_a_few_bytes_is_set_apart_from_the_workers_grid() {
    // ESyS-Particle 2.3.5 (held out, recorded with SST DUMPI; docs/corpus.md): rank 0 is the
    // master (it drives the workers by broadcasts), ranks 1-4 the workers on the 2x2x1 grid the
    // script declares (`mpiDimList`, MPI_Cart_create); the only point-to-point message that
    // touches the master is 4 bytes from rank 1. The filter could not cut it (every rank with
    // traffic had to keep an edge), so the graph was the grid plus a pendant edge: no match.
    let bytes = [
        [0, 0, 0, 0, 0],
        [4, 0, 207712, 414592, 0],
        [0, 621472, 0, 0, 414592],
        [0, 414592, 0, 0, 331840],
        [0, 0, 414592, 993856, 0],
    ];
    let messages = [
        [0, 0, 0, 0, 0],
        [1, 0, 208, 208, 0],
        [0, 208, 0, 0, 208],
        [0, 208, 0, 0, 208],
        [0, 0, 208, 208, 0],
    ];
    let r = identify_matrix(&matrix_of(&bytes, &messages), &with(Threshold::Auto));
    assert_eq!(r.filter.pairs_kept, 4, "{:?}", r.filter);
    assert_eq!(r.isolated_ranks, vec![0]);
    assert!(r.identification.matched.is_none());
    assert_eq!(r.components.len(), 1);
    assert_eq!(r.components[0].ranks, vec![1, 2, 3, 4]);
    assert_eq!(
        r.components[0]
            .identification
            .matched
            .as_ref()
            .map(|m| m.label.as_str()),
        Some("4-node ring")
    );
    assert_eq!(r.graph_line(), "5 ranks, 4 edges, 1 rank set apart by the filter (0)");

    // The 4x1x1 grid of the same script: the master's 4 bytes made the workers' line a
    // 5-node line with the master at one end.
    let bytes = [
        [0, 0, 0, 0, 0],
        [4, 0, 832, 0, 0],
        [0, 414592, 0, 414592, 0],
        [0, 0, 414592, 0, 414592],
        [0, 0, 0, 414592, 0],
    ];
    let messages = [
        [0, 0, 0, 0, 0],
        [1, 0, 208, 0, 0],
        [0, 208, 0, 208, 0],
        [0, 0, 208, 0, 208],
        [0, 0, 0, 208, 0],
    ];
    let r = identify_matrix(&matrix_of(&bytes, &messages), &with(Threshold::Auto));
    assert_eq!(r.isolated_ranks, vec![0], "{:?}", r.filter);
    assert_eq!(
        r.components[0]
            .identification
            .matched
            .as_ref()
            .map(|m| m.label.as_str()),
        Some("4-node line")
    );

    // A rank whose heaviest pair is within 5x of the others' is part of the pattern: the
    // master's pair at a third of the line's keeps the 5-node line.
    let mut heavier = bytes;
    heavier[1][0] = 414592 / 3;
    let r = identify_matrix(&matrix_of(&heavier, &messages), &with(Threshold::Auto));
    assert!(r.isolated_ranks.is_empty());
    assert_eq!(label(&r), Some("5-node line"));
}

#[test]
fn pairs_below_the_first_cut_are_not_taken_back_to_make_a_graph_match() {
    // DOLFINx 0.5 (held out, SST DUMPI): a P1 heat equation on a 32x32 square partitioned by
    // PT-Scotch onto 4 ranks; the program's own index maps give the neighbour pairs 0-1, 0-2,
    // 0-3, 2-3 (PETSc's scatters in every CG iteration: 268-280 messages a pair). Set-up
    // messages 1-3 (63 bytes, 12 messages) and 1-2 (2 messages) sit 487x below in bytes. The
    // widest gap kept the program's 4 pairs (no library shape: a triangle and a pendant); the
    // fallback then kept 1-3 too, and named the run a `2x2 6-point stencil (no wrap-around)`.
    let bytes = [
        [3, 73132, 77812, 30708],
        [60228, 1, 2, 2],
        [69542, 2, 1, 51515],
        [18441, 63, 51114, 1],
    ];
    let messages = [[3, 277, 277, 277], [278, 1, 2, 2], [280, 2, 1, 268], [270, 12, 280, 1]];
    let r = identify_matrix(&matrix_of(&bytes, &messages), &with(Threshold::Auto));
    assert_eq!(r.edges, vec![[0, 1], [0, 2], [0, 3], [2, 3]], "{:?}", r.filter);
    assert_eq!(label(&r), None);
    let fb = r.filter.fallback.as_ref().expect("other cuts tried");
    assert!(fb.tried.iter().all(|c| c.pairs_kept <= 4), "{:?}", fb.tried);

    // MUMPS 5.5 dsimpletest on 8 ranks (held out, OTF2): the factorization's 17 pairs, then
    // eleven pairs of 8-12 bytes (170x below): keeping every pair made it an `8-node all-to-all`.
    let bytes = [
        [0, 993972, 5988, 116560, 130644, 123772, 240668, 551244],
        [613008, 0, 6472, 1487904, 8, 8, 492, 201288],
        [3240, 975876, 0, 10796, 4956, 8, 8, 982196],
        [25308, 6864, 1755120, 0, 12, 8, 6864, 8],
        [18584, 8, 501072, 8, 0, 12, 8, 8],
        [17104, 8, 8, 8, 8, 0, 925380, 8],
        [16788, 2044, 12, 872596, 12, 264788, 0, 2048],
        [30136, 5328, 494452, 8, 8, 8, 175896, 0],
    ];
    let messages = [
        [0, 10, 5, 8, 5, 5, 23, 14],
        [14, 0, 4, 6, 2, 2, 5, 14],
        [4, 5, 0, 5, 3, 2, 2, 9],
        [5, 3, 9, 0, 3, 2, 3, 2],
        [4, 2, 5, 2, 0, 3, 2, 2],
        [4, 2, 2, 2, 2, 0, 16, 2],
        [6, 4, 3, 6, 3, 7, 0, 5],
        [6, 3, 6, 2, 2, 2, 5, 0],
    ];
    let r = identify_matrix(&matrix_of(&bytes, &messages), &with(Threshold::Auto));
    assert_ne!(label(&r), Some("8-node all-to-all"), "{:?}", r.filter);
    assert_eq!(r.filter.pairs_kept, 17);
}

#[test]
fn the_first_cut_is_a_gap_in_messages_as_well_as_in_bytes() {
    // GPAW 22.8 (held out, SST DUMPI): H2O on a 2x2x1 domain decomposition; the face pairs carry
    // 11-17 MB in ~3,200 messages, the diagonal 0-3 250 KB in 62 (45x / 51x below), the diagonal
    // 1-2 4.8 KB in 27 (52x / 2.3x below 0-3). The widest byte gap kept 0-3: `2x2 6-point
    // stencil (no wrap-around)`. The gap that messages confirm keeps the faces: the 2x2 grid.
    let bytes = [
        [0, 11803976, 16570632, 224920],
        [11268104, 0, 4800, 17215328],
        [15739576, 4560, 0, 12534168],
        [250056, 16343880, 11847592, 0],
    ];
    let messages = [
        [0, 3174, 3209, 62],
        [3175, 0, 27, 3230],
        [3209, 26, 0, 3257],
        [62, 3237, 3257, 0],
    ];
    let r = identify_matrix(&matrix_of(&bytes, &messages), &with(Threshold::Auto));
    assert_eq!(r.filter.pairs_kept, 4, "{:?}", r.filter);
    assert_eq!(label(&r), Some("4-node ring"));
    // Where messages confirm both gaps (the diagonal 1-2 one message each way: 62x below 0-3),
    // the widest byte gap stands.
    let mut same = messages;
    same[1][2] = 1;
    same[2][1] = 1;
    let r = identify_matrix(&matrix_of(&bytes, &same), &with(Threshold::Auto));
    assert_eq!(r.filter.pairs_kept, 5, "{:?}", r.filter);
}

/// Held-out mplrs (lrslib 7.1) on 8 ranks, recorded with SST DUMPI: rank 0 hands out jobs
/// (0.6–0.9 % of the bytes, 157–359 messages a worker), rank 1 collects every worker's output.
/// The byte cut sets the master apart and its components match (a 7-node star on the
/// consumer); the message counts name the whole run, every rank in it, as two masters and six
/// workers. Under any rank numbering.
#[test]
fn a_master_set_apart_by_bytes_is_named_by_the_message_counts() {
    let bytes: [[u64; 8]; 8] = [
        [0, 1861, 12097, 7567, 6914, 6966, 8494, 8473],
        [0, 0, 0, 0, 0, 0, 0, 0],
        [4786, 260841, 0, 0, 0, 0, 0, 0],
        [4243, 276336, 0, 0, 0, 0, 0, 0],
        [4768, 280895, 0, 0, 0, 0, 0, 0],
        [4861, 277457, 0, 0, 0, 0, 0, 0],
        [7750, 380107, 0, 0, 0, 0, 0, 0],
        [6335, 299121, 0, 0, 0, 0, 0, 0],
    ];
    let messages: [[u64; 8]; 8] = [
        [0, 6, 318, 177, 157, 159, 205, 205],
        [0, 0, 0, 0, 0, 0, 0, 0],
        [359, 320, 0, 0, 0, 0, 0, 0],
        [249, 178, 0, 0, 0, 0, 0, 0],
        [239, 158, 0, 0, 0, 0, 0, 0],
        [239, 160, 0, 0, 0, 0, 0, 0],
        [341, 206, 0, 0, 0, 0, 0, 0],
        [303, 206, 0, 0, 0, 0, 0, 0],
    ];
    let mut rng = StdRng::seed_from_u64(8);
    for round in 0..4 {
        let mut perm: Vec<usize> = (0..8).collect();
        if round > 0 {
            perm.shuffle(&mut rng);
        }
        let (mut b, mut m) = ([[0u64; 8]; 8], [[0u64; 8]; 8]);
        for i in 0..8 {
            for j in 0..8 {
                b[perm[i]][perm[j]] = bytes[i][j];
                m[perm[i]][perm[j]] = messages[i][j];
            }
        }
        let r = identify_matrix(&matrix_of(&b, &m), &with(Threshold::Auto));
        assert_eq!(
            label(&r),
            Some("8-node master-worker (2 masters, 6 workers)"),
            "{perm:?}: {:?}",
            r.filter
        );
        assert!(r.isolated_ranks.is_empty());
        let fb = r.filter.fallback.as_ref().expect("fallback figures");
        assert_eq!(fb.set_apart, vec![perm[0] as u32]);
        assert!(fb.summary().contains("components only"), "{}", fb.summary());
        // The masters are the nodes 0 and 1 of the match, whichever ranks they are.
        let masters: BTreeSet<u32> = r
            .identification
            .mapping
            .iter()
            .filter(|p| p.node < 2)
            .map(|p| p.rank)
            .collect();
        assert_eq!(masters, BTreeSet::from([perm[0] as u32, perm[1] as u32]));
        // The 0–1 pair (6 messages) is the one cut.
        assert_eq!(r.edges.len(), 12);
    }
}

/// A master that sends each worker a few bytes once (held-out ESyS-Particle: its workers a 2x2
/// grid of 0.4–1 MB pairs) stays set apart: its pairs are as far below in messages as in bytes,
/// so no count cut keeps it, and the workers' grid is the answer.
#[test]
fn a_master_of_few_messages_stays_set_apart() {
    let mut bytes = [[0u64; 5]; 5];
    let mut messages = [[0u64; 5]; 5];
    for w in 1..5 {
        bytes[0][w] = 4;
        messages[0][w] = 1;
    }
    // Workers 1..5 on a 2x2 grid: 1-2, 3-4 rows, 1-3, 2-4 columns.
    for (a, b, v) in [(1, 2, 900_000), (3, 4, 1_000_000), (1, 3, 400_000), (2, 4, 450_000)] {
        bytes[a][b] = v;
        bytes[b][a] = v;
        messages[a][b] = 400;
        messages[b][a] = 400;
    }
    let r = identify_matrix(&matrix_of(&bytes, &messages), &with(Threshold::Auto));
    assert!(r.identification.matched.is_none(), "{:?}", r.identification.matched);
    assert_eq!(r.isolated_ranks, vec![0]);
    assert_eq!(r.components.len(), 1);
    let m = r.components[0].identification.matched.as_ref().expect("workers' match");
    assert_eq!(m.label, "4-node ring");
    assert!(r.filter.fallback.is_none());
}
