//! A repeated program step is a pattern with one occurrence per repetition, not one glued
//! occurrence: NAS MG class S on 16 ranks (OTF2, tests/data/apps/otf2-npb-mg.S.16). Its log
//! prints 4 iterations, each one V-cycle (`mg3P` + `resid`), run after one untimed V-cycle
//! (MG's source, mg.f). The V-cycle begins and ends with the fine-level halo exchange, so the
//! general form merged those exchanges across iterations and the four timed V-cycles came out
//! as one occurrence of 8,928 events. Truth: the log's iteration count and the per-rank counts
//! of the OTF2 reference reader (`expected/otf2-print-per-rank.txt`: rank, sends, bytes,
//! receives), never this code's own output.

use std::path::PathBuf;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::match_messages;

fn app(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/apps")
        .join(name)
}

#[test]
fn mg_16_v_cycle_once_per_iteration_of_the_log() {
    let dir = app("otf2-npb-mg.S.16");
    let log = std::fs::read_to_string(dir.join("stdout.txt")).unwrap();
    let iterations: usize = log
        .lines()
        .find_map(|l| l.trim().strip_prefix("Iterations:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(iterations, 4);
    // rank → (sends, receives) over the whole run, by otf2-print.
    let counts: Vec<(u64, u64)> = std::fs::read_to_string(dir.join("expected/otf2-print-per-rank.txt"))
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<u64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            (f[1], f[3])
        })
        .collect();
    assert_eq!(counts.len(), 16);

    let trace = read_trace(load_paths(&[dir]).unwrap()).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    // The default pattern (the one that explains most) is the V-cycle on every rank, once per
    // iteration the log prints, one after the other.
    let v = &a.communication_patterns[0];
    assert_eq!(v.ranks, (0..16).collect::<Vec<u32>>());
    assert_eq!(v.occurrences, iterations);
    assert!(v.positions.windows(2).all(|w| w[0] < w[1]));
    assert!(a
        .communication_patterns
        .iter()
        .all(|p| p.events_covered <= v.events_covered));
    // Each rank's part is one whole V-cycle: with the untimed one, the run holds iterations + 1
    // of them, and what is left of each rank's sends and receives (set-up: `zran3`, `resid`,
    // the norms) is the same on every rank — ranks 4–7 and 12–15, which exchange with the rank
    // two steps away on the coarsest levels (70 more sends, 50 more receives in the reader's
    // counts), carry exactly their share of that in every V-cycle.
    let kind = |rank: &u32, c: char| {
        v.events[rank]
            .iter()
            .filter(|s| s.starts_with(c) && s[1..].chars().all(|d| d.is_ascii_digit()))
            .count() as u64
    };
    let cycles = iterations as u64 + 1;
    let rest: Vec<(i64, i64)> = v
        .ranks
        .iter()
        .map(|r| {
            let (sends, recvs) = counts[*r as usize];
            (
                sends as i64 - (cycles * kind(r, 'S')) as i64,
                recvs as i64 - (cycles * kind(r, 'R')) as i64,
            )
        })
        .collect();
    assert!(rest.iter().all(|&x| x == rest[0] && x.0 > 0), "{rest:?}");
}
