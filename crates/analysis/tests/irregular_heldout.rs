//! Held-out irregular applications (docs/corpus.md, "MrBayes and ABySS"), recorded outside the
//! repository by `tools/record/mrbayes.sh` and `tools/record/abyss.sh`, checked against the
//! programs' own output and the tracer's own decoder. `IRREGULAR_HELDOUT=DIR` names the folder
//! holding the runs `mrbayes-8` and `abyss-4` (DUMPI).

#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_analysis::waits::polling;
use tracelogic_formats::{fs::load_paths, read_trace};
use tracelogic_model::{P2pDir, Selection, Trace};

fn run(name: &str) -> (PathBuf, Trace) {
    let root = std::env::var("IRREGULAR_HELDOUT").expect("IRREGULAR_HELDOUT=DIR");
    let dir = Path::new(&root).join(name);
    let trace = read_trace(load_paths(&[dir.join("dumpi.tar.zst")]).unwrap()).unwrap();
    (dir, trace)
}

/// The attempted swaps of every run's "Chain swap information" table in MrBayes's output: the
/// numbers left of the diagonal (rows `  k |   a   b ...  p  q`, where the first k−1 numbers
/// are counts and the rest proportions).
fn attempted_swaps(out: &str) -> u64 {
    let mut total = 0;
    let mut in_table = false;
    for line in out.lines() {
        if line.contains("Chain swap information for run") {
            in_table = true;
            continue;
        }
        let Some((head, rest)) = line.split_once('|') else {
            if in_table && line.trim().is_empty() {
                continue;
            }
            if !line.trim_start().starts_with("--") && !line.trim_start().starts_with('1') {
                in_table = false;
            }
            continue;
        };
        if !in_table {
            continue;
        }
        let row: u64 = head.trim().parse().unwrap();
        total += rest
            .split_whitespace()
            .take(row as usize - 1)
            .map(|x| x.parse::<u64>().unwrap())
            .sum::<u64>();
    }
    total
}

/// MrBayes on 8 ranks, one chain per rank: each attempted swap sends one message of 5 doubles
/// each way, so the 40-byte sends are twice the attempts MrBayes reports; its two runs (ranks
/// 0-3, 4-7) are two disjoint 4-rank all-to-alls.
#[test]
#[ignore = "needs IRREGULAR_HELDOUT (held-out runs, recorded outside the repository)"]
fn mrbayes_swaps_are_its_messages_and_its_runs_its_groups() {
    let (dir, trace) = run("mrbayes-8");
    let attempts = attempted_swaps(&std::fs::read_to_string(dir.join("mrbayes.out")).unwrap());
    assert_eq!(attempts, 8000, "2 runs x 4,000 generations, one swap each");
    let state_messages: usize = trace
        .ranks
        .iter()
        .map(|rt| {
            (0..rt.p2p.len())
                .filter(|&i| rt.p2p.dir[i] == P2pDir::Send && rt.p2p.bytes.at(i) == 40)
                .count()
        })
        .sum();
    assert_eq!(state_messages as u64, 2 * attempts);
    let r = identify_matrix(
        &CommMatrix::from_trace(&trace, &Selection::all()),
        &TopologyOptions::default(),
    );
    let c = r.cliques.as_ref().expect("disjoint cliques");
    assert_eq!((c.count, c.size), (2, 4));
}

/// ABySS polls its posted receive with MPI_Request_get_status: every such call is polling, as
/// many as dumpi2ascii counts.
#[test]
#[ignore = "needs IRREGULAR_HELDOUT (held-out runs, recorded outside the repository)"]
fn abyss_polls_as_often_as_the_decoder_counts() {
    let (dir, trace) = run("abyss-4");
    let counts = std::fs::read_to_string(dir.join("expected/dumpi2ascii-counts.txt")).unwrap();
    let want: u64 = counts
        .lines()
        .find_map(|l| l.strip_prefix("calls MPI_Request_get_status "))
        .expect("the decoder's count")
        .trim()
        .parse()
        .unwrap();
    assert!(want > 0);
    assert_eq!(polling(&trace).calls, want);
}
