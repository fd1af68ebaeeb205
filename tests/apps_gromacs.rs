//! GROMACS molecular dynamics of a water box on 12 ranks (`tests/data/apps/gromacs-water-12`,
//! recorded by `tools/record/gromacs-water.sh`): a program nobody tuned tracelogic for, with two
//! decompositions of the same ranks (the domain grid's halo exchange and PME's pencils).
//! Checked against the application's own account: `md.log` (its domain and PME grids, its step
//! count) and the tracer's decoder (`expected/dumpi2ascii-counts.txt`).

mod common;
use common::{code, json, run};

use serde_json::Value;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps/gromacs-water-12")
}

fn trace() -> PathBuf {
    dir().join("dumpi.tar.zst")
}

fn log() -> String {
    std::fs::read_to_string(dir().join("md.log")).unwrap()
}

fn logged_grid(prefix: &str) -> Vec<usize> {
    common::apps::logged_grid(&dir().join("md.log"), prefix)
}

fn logged_steps() -> u64 {
    let log = log();
    let line = log
        .lines()
        .find_map(|l| l.trim().strip_prefix("nsteps"))
        .expect("nsteps in md.log");
    line.trim_start_matches([' ', '=']).trim().parse().unwrap()
}

/// A count from the decoder's counts file.
fn decoded(name: &str) -> u64 {
    common::apps::decoded_count(&dir(), name)
}

/// The communication graph is the union of the two decompositions md.log reports: the domain
/// grid's halo (GROMACS numbers domain cells x-major, rank = (x·ny + y)·nz + z, neighbours ±1 in
/// each dimension, periodic) and PME's pencils (x slabs as the domain grid's, the rest of the
/// ranks of a slab along y, neighbours within a slab and across slabs at the same place). Every
/// rank then talks to its whole slab and to its place in every other slab: rows and columns,
/// which the identification names with the log's PME grid as its dimensions.
#[test]
fn the_graph_is_the_union_of_the_logged_domain_and_pme_grids() {
    let dd = logged_grid("Domain decomposition grid");
    let pme = logged_grid("PME domain decomposition:");
    assert_eq!(dd.len(), 3);
    let ranks = dd.iter().product::<usize>();
    assert_eq!(ranks, 12);
    assert_eq!(pme[0], dd[0], "PME's x slabs are the domain grid's");
    assert_eq!(pme[0] * pme[1], ranks);
    let slab = ranks / dd[0];
    let halo = common::apps::domain_grid_halo(&dd);
    let mut expected = halo.clone();
    for a in 0..ranks {
        for b in a + 1..ranks {
            if a / slab == b / slab || a % slab == b % slab {
                expected.insert((a, b));
            }
        }
    }
    let o = run(&[&"topology", &trace(), &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let edges = common::apps::topology_edges(&v);
    assert!(
        halo.is_subset(&edges),
        "halo pairs missing: {:?}",
        halo.difference(&edges).collect::<Vec<_>>()
    );
    assert_eq!(edges, expected, "the graph is the slabs' rows and columns");
    assert_eq!(v["match"]["family"], "process-grid", "{}", v["match"]);
    let dims: Vec<usize> = v["match"]["dims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(dims, pme[..2].to_vec(), "named by the log's PME grid");
    // The proved mapping puts each x slab of the domain grid on one row.
    let mapping = v["mapping"].as_array().unwrap();
    for m in mapping {
        let r = m["rank"].as_u64().unwrap() as usize;
        let row = m["coords"][0].as_u64().unwrap();
        let first = mapping
            .iter()
            .find(|n| n["rank"].as_u64().unwrap() as usize == r / slab * slab)
            .unwrap();
        assert_eq!(row, first["coords"][0].as_u64().unwrap(), "rank {r} on its slab's row");
    }
}

/// The logical trace expands back to every rank's calls and bytes as the decoder counts them, and
/// the MD steps fold into one top-level loop of about the log's step count (step 0 and the last
/// step differ from the others: the first neighbour search and the final output).
#[test]
fn the_logical_trace_is_exact_and_folds_the_md_steps() {
    let o = run(&[&"logical", &trace(), &"--compress", &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let per_rank = v["verification"]["per_rank"].as_array().unwrap();
    assert_eq!(per_rank.len(), 12);
    for r in per_rank {
        assert_eq!(r["structure_exact"], true, "{r}");
        assert_eq!(r["bytes_exact"], true, "{r}");
    }
    let calls: u64 = per_rank.iter().map(|r| r["real_calls"].as_u64().unwrap()).sum();
    let bytes: u64 = per_rank.iter().map(|r| r["real_bytes"].as_u64().unwrap()).sum();
    assert_eq!(calls, decoded("p2p_sends") + decoded("p2p_receives"));
    assert_eq!(bytes, 2 * decoded("p2p_send_bytes"));
    let steps = logged_steps();
    assert!(steps >= 20, "{steps} steps in md.log");
    let counts: Vec<u64> = v["program"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["node"] == "loop" && n["count"]["form"] == "constant")
        .map(|n| n["count"]["value"].as_u64().unwrap())
        .collect();
    assert!(
        counts.iter().any(|&c| c + 2 >= steps && c <= steps + 1),
        "a loop of about {steps} iterations (the log's MD steps); loops {counts:?}"
    );
    let (raw, compressed) = (
        v["raw_length"].as_u64().unwrap(),
        v["compressed_length"].as_u64().unwrap(),
    );
    assert!(compressed * 5 <= raw, "{raw} records -> {compressed}");
}

/// The MD steps are one phase after the set-up: every `MPI_Alltoall` (PME's FFT transposes, run in
/// every step and never in the set-up) lies in the last phase, and the first phase (reading and
/// broadcasting the run input) has none.
#[test]
fn the_md_steps_are_one_phase_after_the_set_up() {
    let o = run(&[&"phases", &trace(), &"--json"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    let phases = v["phases"].as_array().unwrap();
    assert!((2..=5).contains(&phases.len()), "{} phases", phases.len());
    let alltoall = |p: &Value| -> u64 {
        p["collectives"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c[0] == "MPI_Alltoall")
            .map(|c| c[1].as_u64().unwrap())
            .sum()
    };
    let total: u64 = phases.iter().map(alltoall).sum();
    assert!(total > 0);
    // PME's transposes run on the communicators of a slab (4 ranks) and across slabs (3 ranks):
    // each phase counts an operation once, the decoder once per rank taking part.
    assert_eq!(
        alltoall(phases.last().unwrap()),
        total,
        "every Alltoall in the last phase"
    );
    assert_eq!(alltoall(&phases[0]), 0, "the first phase is the set-up");
    assert!(decoded("calls MPI_Alltoall") >= total * 3);
}

/// GROMACS gathers on every pair of domain cells to the pair's first rank (a communicator of two
/// ranks each): the logical trace names that root by its rank in the communicator, so one
/// record stands for every pair instead of one per pair, and the expansion still gives each rank
/// the world root its own calls name. Truth: the roots in each rank's trace as read, the number
/// of `MPI_Gather` calls as the decoder counts them.
#[test]
fn pair_gathers_are_one_record_whose_expansion_gives_every_rank_its_root() {
    use tracelogic_analysis::logical::{expand_records, logicalize_identified};
    use tracelogic_analysis::matrix::CommMatrix;
    use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
    use tracelogic_model::{Selection, NO_ROOT};
    let trace = tracelogic_formats::read_trace(tracelogic_formats::fs::load_paths(&[trace()]).unwrap()).unwrap();
    let report = identify_matrix(
        &CommMatrix::from_trace(&trace, &Selection::all()),
        &TopologyOptions::default(),
    );
    let l = logicalize_identified(&trace, &report, None).unwrap();
    // Pair gathers: the records, and the pairs' distinct world roots.
    let pair_gathers: Vec<_> = l
        .records
        .iter()
        .filter_map(|r| {
            r.call
                .collective
                .as_ref()
                .filter(|c| r.call.function == "MPI_Gather" && c.comm_size == 2)
        })
        .collect();
    assert!(!pair_gathers.is_empty());
    assert!(
        pair_gathers.iter().all(|c| c.root_in_comm == Some(0)),
        "{pair_gathers:?}"
    );
    // Per rank, its calls on two-rank communicators (the trace as read), and the pairs' roots.
    let mut world_roots: Vec<u32> = Vec::new();
    let mut most = 0;
    for rt in &trace.ranks {
        let mut mine = 0;
        for (k, &comm) in rt.collectives.comm.iter().enumerate() {
            if trace.comms[comm as usize].members.len() == 2 && rt.collectives.root[k] != NO_ROOT {
                world_roots.push(rt.collectives.root[k]);
                mine += 1;
            }
        }
        most = most.max(mine);
    }
    world_roots.sort_unstable();
    world_roots.dedup();
    assert!(world_roots.len() >= 6, "pairs' roots {world_roots:?}");
    // As many records as the rank that gathers most on pairs calls, not one per pair.
    assert!(
        pair_gathers.len() <= most,
        "{} pair-gather records; a rank calls at most {most}; {} distinct roots",
        pair_gathers.len(),
        world_roots.len()
    );
    // Every rank's expansion: its own roots, in order, and the decoder's number of gathers.
    let mut gathers = 0u64;
    for rt in &trace.ranks {
        let expanded = expand_records(&l, rt.rank).unwrap();
        let roots: Vec<Option<u32>> = expanded
            .iter()
            .filter_map(|c| c.collective.as_ref())
            .map(|c| c.root)
            .collect();
        gathers += expanded.iter().filter(|c| c.function == "MPI_Gather").count() as u64;
        let mut own: Vec<(u32, Option<u32>)> = rt
            .collectives
            .call
            .iter()
            .zip(&rt.collectives.root)
            .map(|(&c, &r)| (c, (r != NO_ROOT).then_some(r)))
            .collect();
        own.dedup_by_key(|e| e.0);
        let own: Vec<Option<u32>> = own.into_iter().map(|e| e.1).collect();
        assert_eq!(roots, own, "rank {}: collective roots", rt.rank);
    }
    assert_eq!(gathers, decoded("calls MPI_Gather"));
}
