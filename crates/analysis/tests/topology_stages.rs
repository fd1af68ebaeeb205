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
    let s = stage(&rep, "spectrum");
    assert_eq!(
        s.skipped.as_deref(),
        Some("one candidate left: the isomorphism decides")
    );
    assert_eq!((s.milliseconds, s.candidates), (0.0, 1));
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
        .filter(|s| s["name"] != "spectrum")
        .all(|s| s.get("skipped").is_none()));
}

#[test]
fn a_quick_search_settles_equivalent_candidates_without_the_spectrum() {
    // A 6-cube equals several tori of 4s and 2s and the 2x2x2x2x2x2 grid: all proved quickly.
    let g = random_numbering(&TopologySpec::parse("hypercube:6").unwrap().graph(), 2);
    let rep = identify_graph(&g, &TopologyOptions::default());
    let id = &rep.identification;
    assert_eq!(id.matched.as_ref().unwrap().label, "6-dimensional hypercube");
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
