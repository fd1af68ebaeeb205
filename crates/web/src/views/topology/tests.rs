use super::*;

fn topology(trace: &tracelogic_model::Trace) -> TopologyReport {
    let session = crate::session::Session::new(trace.clone());
    crate::session::tests::answer(session.analyse(&AnalysisRequest::Topology { threshold_pct: None }))
}

/// LAMMPS melt on 12 ranks declares its 2 by 2 by 3 processor grid (its log.lammps says so)
/// with MPI_Cart_create: the headline names it and says what identification found.
#[test]
fn the_headline_names_the_grid_lammps_declared() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps/lammps-melt-12");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("dumpi"))
        .collect();
    names.sort();
    let files = names
        .iter()
        .map(|n| tracelogic_formats::InputFile::new(n.clone(), std::fs::read(dir.join(n)).unwrap()))
        .collect();
    let report = topology(&tracelogic_formats::read_trace(files).unwrap());
    let log = std::fs::read_to_string(dir.join("log.lammps")).unwrap();
    assert!(log.contains("2 by 2 by 3 MPI processor grid"));
    let m = report.identification.matched.as_ref().expect("a match");
    assert_eq!(headline_name(&report, &m.label), "2x2x3 torus");
    assert_eq!(
        report.declared_note().unwrap(),
        format!("declared by MPI_Cart_create; identified as {}", m.label)
    );
    assert_eq!(report.declared.len(), 1);
    assert!(report.declared[0].agrees);
    assert_eq!(cliques_line(&report), None, "a match: no cliques line");
}

#[test]
fn grid_layout_puts_neighbours_one_step_apart() {
    let trace = crate::session::tests::sample_trace("npb-lu.S.8");
    let report = topology(&trace);
    assert_eq!(report.identification.matched.as_ref().unwrap().label, "4x2 grid");
    let pos = layout(&report);
    assert_eq!(pos.len(), 8);
    let distinct: BTreeSet<(i64, i64)> = pos.iter().map(|&(x, y)| ((x * 1e6) as i64, (y * 1e6) as i64)).collect();
    assert_eq!(distinct.len(), 8, "every rank has its own place");
    let d = |a: u32, b: u32| {
        let (p, q) = (pos[a as usize], pos[b as usize]);
        ((p.0 - q.0).powi(2) + (p.1 - q.1).powi(2)).sqrt()
    };
    let step = d(report.edges[0][0], report.edges[0][1]);
    for &[a, b] in &report.edges {
        assert!((d(a, b) - step).abs() < 1e-9, "edge {a}-{b} is not one grid step");
    }
    assert_eq!(neighbours(&report.edges, 0), BTreeSet::from([1, 4]));
}

/// A generated master–worker run (3 masters, 8 workers, random numbering): the match names it,
/// its masters are drawn in one row above the workers, every rank in its own place.
#[test]
fn master_worker_runs_draw_their_masters_above_their_workers() {
    use tracelogic_synth::{generate_with_truth, Numbering, Spec, TopologySpec};
    let spec = Spec {
        numbering: Numbering::Random,
        seed: 3,
        topology: TopologySpec::parse("master-worker:3x11").unwrap(),
        ..Spec::default()
    };
    let (trace, truth) = generate_with_truth(&spec).unwrap();
    let report = topology(&trace);
    let m = report.identification.matched.as_ref().expect("a match");
    assert_eq!(m.label, "11-node master-worker (3 masters, 8 workers)");
    let pos = layout(&report);
    let masters: BTreeSet<u32> = (0..11u32).filter(|&r| truth.node_of_rank[r as usize] < 3).collect();
    assert_eq!(masters.len(), 3);
    for r in 0..11u32 {
        let top = pos[r as usize].1 < 0.5;
        assert_eq!(top, masters.contains(&r), "rank {r} at {:?}", pos[r as usize]);
    }
    let distinct: BTreeSet<(i64, i64)> = pos.iter().map(|&(x, y)| ((x * 1e6) as i64, (y * 1e6) as i64)).collect();
    assert_eq!(distinct.len(), 11);
}

#[test]
fn a_selection_of_four_ranks_shows_its_component_and_the_ranks_without_traffic() {
    use tracelogic_model::{CallKind, Selection};
    let trace = crate::session::tests::sample_trace("npb-lu.S.8");
    let selection = Selection {
        ranks: Some(vec![0, 1, 2, 3]),
        kinds: Some(vec![CallKind::Send]),
        ..Selection::default()
    };
    // As the page asks it: the worker's session restricts the trace to the selection.
    let session = crate::session::Session::new(trace);
    let report: TopologyReport = crate::session::tests::answer(
        session.analyse_selected(&AnalysisRequest::Topology { threshold_pct: None }, &selection),
    );
    assert_eq!(graph_line(&report), "8 ranks, 3 edges, 4 ranks without traffic");
    assert_eq!(report.components.len(), 1);
    let c = &report.components[0];
    assert_eq!(rank_ranges(&c.ranks), "0-3");
    let m = c
        .identification
        .matched
        .as_ref()
        .expect("the 4 selected ranks form a line");
    assert!(m.family.contains("line") || m.label.contains("line"), "{}", m.label);
    assert_eq!(c.identification.mapping.len(), 4);
    assert!(components_title(&report).starts_with("The graph is disconnected: 1 component of"));
}

#[test]
fn graph_lines_agree_in_number_and_ranges_compress() {
    let trace = crate::session::tests::sample_trace("npb-lu.S.8");
    let mut report = topology(&trace);
    assert_eq!(graph_line(&report), format!("8 ranks, {} edges", report.edges.len()));
    report.edges.truncate(1);
    report.isolated_ranks = vec![5];
    assert_eq!(graph_line(&report), "8 ranks, 1 edge, 1 rank without traffic");
    // A rank whose every pair the filter removed is set apart, not silent (a master that sends
    // a worker 4 bytes, docs/topology.md §1): the page says which, as the CLI does.
    report.isolated_ranks = vec![0, 5];
    report.filter.removed = vec![tracelogic_engine::topology::PairTraffic {
        a: 0,
        b: 1,
        volume: 4,
        share: 0.0,
    }];
    assert_eq!(
        graph_line(&report),
        "8 ranks, 1 edge, 1 rank without traffic, 1 rank set apart by the filter (0)"
    );
    assert_eq!(rank_ranges(&[0, 1, 2, 5, 7, 8]), "0-2, 5, 7-8");
    assert_eq!(rank_ranges(&[]), "");
}

#[test]
fn every_sample_topology_gives_each_rank_its_own_place_in_the_box() {
    for id in ["npb-bt.S.9", "npb-mg.S.8", "pipit-ping-pong-otf2"] {
        let trace = crate::session::tests::sample_trace(id);
        let report = topology(&trace);
        let pos = layout(&report);
        assert_eq!(pos.len(), report.identification.ranks as usize, "{id}");
        assert!(
            pos.iter()
                .all(|&(x, y)| (0.0..=1.0).contains(&x) && (0.0..=1.0).contains(&y)),
            "{id}: {pos:?}"
        );
        let distinct: BTreeSet<(i64, i64)> = pos
            .iter()
            .map(|&(x, y)| ((x * 1e6).round() as i64, (y * 1e6).round() as i64))
            .collect();
        assert_eq!(distinct.len(), pos.len(), "{id}: ranks drawn on top of each other");
    }
}
