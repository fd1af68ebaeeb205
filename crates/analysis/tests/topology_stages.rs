//! The faster proof path and the reported budgets: the spectrum stage is skipped (and says
//! why) when the invariants leave one candidate or a quick isomorphism search settles them
//! all, eigenvalues are computed for display only as asked, and a near-match search that runs
//! out of steps says so instead of reporting a bare "no match".

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use tracelogic_analysis::topology::{identify_graph, SpectrumDisplay, TopologyOptions, TopologyReport};
use tracelogic_graph::invariants::spectra_agree;
use tracelogic_graph::iso::verify;
use tracelogic_graph::{Family, Graph, TopologySpec};

fn random_numbering(g: &Graph, seed: u64) -> Graph {
    let mut perm: Vec<u32> = (0..g.num_nodes()).collect();
    perm.shuffle(&mut StdRng::seed_from_u64(seed));
    g.relabel(&perm)
}

fn stage<'a>(rep: &'a TopologyReport, name: &str) -> &'a tracelogic_analysis::topology::Stage {
    rep.identification
        .stages
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no stage {name}"))
}

fn assert_proved(rep: &TopologyReport, g: &Graph) {
    let m = rep.identification.matched.as_ref().expect("a match");
    let spec = TopologySpec::new(Family::from_name(&m.family).unwrap(), m.dims.clone()).unwrap();
    let mut mapping = vec![0u32; g.num_nodes() as usize];
    for p in &rep.identification.mapping {
        mapping[p.rank as usize] = p.node;
    }
    verify(g, &spec.graph(), &mapping).unwrap();
}

#[test]
fn one_candidate_left_skips_the_spectrum_stage() {
    let g = random_numbering(&TopologySpec::parse("grid:30x20").unwrap().graph(), 1);
    let rep = identify_graph(&g, &TopologyOptions::default());
    assert_eq!(rep.identification.matched.as_ref().unwrap().label, "30x20 grid");
    assert_proved(&rep, &g);
    // The degree sequence pins a 2D grid's extents: the later invariants could only refute the
    // one candidate left, so they leave it to the proof.
    assert_eq!(stage(&rep, "degree sequence").candidates, 1);
    let eliminators = ["colour refinement", "distance profile", "spectrum"];
    for name in eliminators {
        let s = stage(&rep, name);
        assert_eq!(
            s.skipped.as_deref(),
            Some("one candidate left: the isomorphism decides"),
            "{name}"
        );
        assert_eq!((s.milliseconds, s.candidates), (0.0, 1), "{name}");
    }
    assert!(rep.identification.walk_counts.is_empty());
    // 600 ranks: above the automatic display size, so no eigenvalues unless asked for.
    assert!(rep.identification.spectrum.is_none());
    // Stages that ran are not marked skipped, and the JSON leaves the field out for them.
    assert!(stage(&rep, "isomorphism").skipped.is_none());
    let json = serde_json::to_value(&rep).unwrap();
    let stages = json["stages"].as_array().unwrap();
    assert!(stages.iter().any(|s| s["skipped"].is_string()));
    assert!(stages
        .iter()
        .filter(|s| !eliminators.iter().any(|e| s["name"] == *e))
        .all(|s| s.get("skipped").is_none()));
}

/// The paper's "unordered" numbering: two thirds of the ranks permuted among themselves.
fn partial_numbering(g: &Graph, seed: u64) -> Graph {
    let n = g.num_nodes();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut moved: Vec<u32> = (0..n).filter(|_| rng.gen_range(0..3) < 2).collect();
    let mut perm: Vec<u32> = (0..n).collect();
    let targets = {
        let mut t = moved.clone();
        t.shuffle(&mut rng);
        t
    };
    for (from, to) in moved.drain(..).zip(targets) {
        perm[from as usize] = to;
    }
    g.relabel(&perm)
}

#[test]
fn grids_with_many_factorisations_are_proved_by_the_one_candidate_left() {
    // 8,100 and 5,184 ranks have 1,300-odd candidates; the degree sequence must keep exactly
    // the right grid (the corners and the boundary pin its extents), and the proof under the
    // degree colours must find it whatever the numbering.
    for (spec, extents) in [
        ("grid:90x90", [90, 90]),
        ("grid:72x72", [72, 72]),
        ("grid:2x4050", [4050, 2]),
        ("grid:2700x3", [2700, 3]),
        ("grid:45x180", [180, 45]),
    ] {
        let reference = TopologySpec::parse(spec).unwrap().graph();
        for (numbering, g) in [
            ("row-major", reference.clone()),
            ("partial", partial_numbering(&reference, 5)),
            ("random", random_numbering(&reference, 6)),
        ] {
            let rep = identify_graph(&g, &TopologyOptions::default());
            let id = &rep.identification;
            let matched = id
                .matched
                .as_ref()
                .unwrap_or_else(|| panic!("{spec} {numbering}: no match"));
            assert_eq!(
                (matched.family.as_str(), matched.dims.as_slice()),
                ("grid", &extents[..]),
                "{spec} {numbering}"
            );
            assert_eq!(id.equivalents.len(), 1, "{spec} {numbering}");
            assert_proved(&rep, &g);
            assert_eq!(stage(&rep, "degree sequence").candidates, 1, "{spec} {numbering}");
            assert!(stage(&rep, "colour refinement").skipped.is_some(), "{spec} {numbering}");
            assert!(id.gave_up.is_empty(), "{spec} {numbering}");
        }
    }
}

#[test]
fn a_look_alike_of_the_one_candidate_left_is_refuted() {
    // Two edges of a grid swapped keep its degree sequence, so the grid is the one candidate
    // left; the proof must refute it (not give up, not match) and the near matches name it.
    let grid = TopologySpec::parse("grid:30x20").unwrap().graph();
    let mut edges: Vec<(u32, u32)> = grid.edges().collect();
    let (a, b) = (edges[100], edges[700]);
    assert!(!grid.has_edge(a.0, b.1) && !grid.has_edge(b.0, a.1));
    edges[100] = (a.0, b.1);
    edges[700] = (b.0, a.1);
    let swapped = Graph::from_edges(600, edges);
    for (numbering, g) in [
        ("row-major", swapped.clone()),
        ("random", random_numbering(&swapped, 7)),
    ] {
        let rep = identify_graph(&g, &TopologyOptions::default());
        let id = &rep.identification;
        assert_eq!(stage(&rep, "degree sequence").candidates, 1, "{numbering}");
        assert!(id.matched.is_none(), "{numbering}");
        assert!(id.gave_up.is_empty(), "{numbering}: {:?}", id.gave_up);
        assert_eq!(stage(&rep, "isomorphism").candidates, 0, "{numbering}");
        if numbering == "row-major" {
            // (The bounded near-match search does not align the random numbering this far.)
            let near = &id.near_matches[0];
            assert_eq!((near.topology.label.as_str(), near.distance), ("30x20 grid", 4));
        }
    }
}

#[test]
fn a_quick_search_that_gives_up_falls_back_to_refinement_and_the_full_proof() {
    // A randomly numbered 5-dimensional butterfly is the one candidate left, and the ordered
    // search under degree colours alone does not settle it within its near-linear budget: the
    // refinement, the distance profile and the full search then run as before, and prove it.
    let g = random_numbering(&TopologySpec::parse("butterfly:5").unwrap().graph(), 8);
    let rep = identify_graph(&g, &TopologyOptions::default());
    let id = &rep.identification;
    assert_eq!(id.matched.as_ref().unwrap().family, "butterfly");
    assert_proved(&rep, &g);
    assert_eq!(stage(&rep, "degree sequence").candidates, 1);
    assert!(stage(&rep, "colour refinement").skipped.is_none());
    assert!(stage(&rep, "distance profile").skipped.is_none());
    assert_eq!(
        stage(&rep, "spectrum").skipped.as_deref(),
        Some("one candidate left: the isomorphism decides")
    );
}

#[test]
fn a_quick_search_settles_equivalent_candidates_without_the_spectrum() {
    // A 6-cube equals several tori of 4s and 2s and the 2x2x2x2x2x2 grid: all proved quickly.
    let g = random_numbering(&TopologySpec::parse("hypercube:6").unwrap().graph(), 2);
    let rep = identify_graph(&g, &TopologyOptions::default());
    let id = &rep.identification;
    assert_eq!(
        id.matched.as_ref().unwrap().label,
        "6-dimensional hypercube (2x2x2x2x2x2 grid)"
    );
    assert!(id.equivalents.len() > 3, "{:?}", id.equivalents);
    assert_proved(&rep, &g);
    let s = stage(&rep, "spectrum");
    let why = s.skipped.as_deref().expect("skipped");
    assert!(why.contains("settled all"), "{why}");
    assert_eq!(s.candidates, id.equivalents.len());
}

#[test]
fn eigenvalues_for_display_as_asked() {
    let g = random_numbering(&TopologySpec::parse("torus:16x12").unwrap().graph(), 3);
    let with = |spectrum| {
        identify_graph(
            &g,
            &TopologyOptions {
                spectrum,
                ..TopologyOptions::default()
            },
        )
    };
    // 192 ranks: more than `auto` computes, within what `always` does.
    assert!(with(SpectrumDisplay::Auto).identification.spectrum.is_none());
    let always = with(SpectrumDisplay::Always);
    let id = &always.identification;
    assert_eq!(id.spectrum.as_ref().map(Vec::len), Some(192));
    // Isomorphic graphs: the same eigenvalues up to rounding.
    assert!(spectra_agree(
        id.spectrum.as_ref().unwrap(),
        id.candidate_spectrum.as_ref().unwrap()
    ));
    let small = random_numbering(&TopologySpec::parse("torus:4x4").unwrap().graph(), 4);
    let never = identify_graph(
        &small,
        &TopologyOptions {
            spectrum: SpectrumDisplay::Never,
            ..TopologyOptions::default()
        },
    );
    assert!(never.identification.spectrum.is_none());
    assert!(identify_graph(&small, &TopologyOptions::default())
        .identification
        .spectrum
        .is_some());
}

#[test]
fn near_match_search_reports_when_its_budget_ran_out() {
    // A torus with three degree-preserving edge swaps: 6 edges differ from the torus (the most
    // a near match may differ by); an alignment that far needs far more than the search's
    // budget on a randomly numbered 1,024-rank graph, and the report must say so.
    let t = TopologySpec::parse("torus:32x32").unwrap().graph();
    let mut edges: Vec<(u32, u32)> = t.edges().collect();
    let mut rng = StdRng::seed_from_u64(9);
    let mut swaps = 0;
    while swaps < 3 {
        let (i, j) = (rng.gen_range(0..edges.len()), rng.gen_range(0..edges.len()));
        let ((a, b), (c, d)) = (edges[i], edges[j]);
        let current = Graph::from_edges(1024, edges.clone());
        if [a, b].iter().any(|x| [c, d].contains(x)) || current.has_edge(a, d) || current.has_edge(c, b) {
            continue;
        }
        edges[i] = (a, d);
        edges[j] = (c, b);
        swaps += 1;
    }
    let g = random_numbering(&Graph::from_edges(1024, edges), 10);
    let rep = identify_graph(&g, &TopologyOptions::default());
    let id = &rep.identification;
    assert!(id.matched.is_none());
    let exhausted = id.near_matches.iter().any(|n| n.budget_exhausted) || !id.near_match_gave_up.is_empty();
    assert!(
        exhausted,
        "near matches {:?}, gave up {:?}",
        id.near_matches
            .iter()
            .map(|n| (&n.topology.label, n.distance))
            .collect::<Vec<_>>(),
        id.near_match_gave_up
    );
    let json = serde_json::to_value(&rep).unwrap();
    assert!(json["near_match_gave_up"].is_array());
}

#[test]
fn a_complete_near_match_search_reports_no_exhaustion() {
    let t = TopologySpec::parse("torus:6x5").unwrap().graph();
    let edges: Vec<(u32, u32)> = t.edges().skip(1).collect();
    let g = random_numbering(&Graph::from_edges(30, edges), 12);
    let rep = identify_graph(&g, &TopologyOptions::default());
    let id = &rep.identification;
    let near = &id.near_matches[0];
    assert_eq!((near.topology.label.as_str(), near.distance), ("6x5 torus", 1));
    assert!(!near.budget_exhausted);
    assert!(id.near_match_gave_up.is_empty());
}
