//! The phases of every corpus run and sample are a partition of each rank's events
//! (docs/phases.md, "Phases on each rank"), checked by brute force: every event of every rank
//! lies in exactly one phase's span, the spans follow one another in phase order and in time,
//! the phases' point-to-point messages add up to the trace's sends, and each boundary is where
//! the fewest of the rank's occurrence parts (at their first events) fall on the wrong side of it. Held-out runs:
//! `PARTITION_HELDOUT=DIR[:DIR…]` (recorded outside the repository).

use std::path::PathBuf;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, pattern_sequence, Outside};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::{match_messages, P2pDir};

/// Every run directory of tests/data/apps and tests/data/samples, then the held-out ones.
fn runs() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    let mut v: Vec<PathBuf> = ["apps", "samples"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .flat_map(|p| {
            // A folder of several CSV traces (pipit-csv) is one run per file.
            let mut csv: Vec<PathBuf> = std::fs::read_dir(&p)
                .unwrap()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "csv"))
                .collect();
            csv.sort();
            if csv.len() > 1 {
                csv
            } else {
                vec![p]
            }
        })
        .collect();
    v.sort();
    if let Ok(extra) = std::env::var("PARTITION_HELDOUT") {
        v.extend(extra.split(':').filter(|s| !s.is_empty()).map(PathBuf::from));
    }
    v
}

/// What one run shows: occurrence parts, parts whose first event lies outside their
/// occurrence's phase, phases.
fn check(dir: &std::path::Path) -> (u64, u64, usize) {
    let name = dir.display();
    let trace = read_trace(load_paths(&[dir.to_path_buf()]).unwrap()).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let p = detect_phases(&trace, &events, &a.communication, 0.0, Outside::Own);
    let comm = &a.communication;
    let (_, idx) = pattern_sequence(comm, Outside::Own);
    let nphases = p.phases.len();
    // The phase of the occurrence each part belongs to, at the part's first event.
    let mut label: Vec<Vec<u32>> = events.ranks.iter().map(|re| vec![u32::MAX; re.events.len()]).collect();
    for (k, ph) in p.phases.iter().enumerate() {
        for &i in &idx[ph.start..ph.end] {
            for part in &comm.instances[i].parts {
                let l = &mut label[part.rank as usize][part.first_event as usize];
                assert_eq!(
                    *l,
                    u32::MAX,
                    "{name}: two parts begin at rank {} event {}",
                    part.rank,
                    part.first_event
                );
                *l = k as u32;
            }
        }
    }
    let (mut total, mut displaced) = (0u64, 0u64);
    for (r, re) in events.ranks.iter().enumerate() {
        let n = re.events.len();
        let mut holder = vec![usize::MAX; n];
        for (k, ph) in p.phases.iter().enumerate() {
            for s in ph.ranks.iter().filter(|s| s.rank as usize == r) {
                assert!(
                    s.first_event <= s.last_event && (s.last_event as usize) < n,
                    "{name}: rank {r} phase {k}: {s:?}"
                );
                for ev in s.first_event..=s.last_event {
                    assert_eq!(
                        holder[ev as usize],
                        usize::MAX,
                        "{name}: rank {r} event {ev} in phases {} and {k}",
                        holder[ev as usize]
                    );
                    holder[ev as usize] = k;
                }
                let calls = &trace.ranks[r].calls;
                assert_eq!(
                    s.start,
                    calls.enter(re.calls[s.first_event as usize] as usize),
                    "{name}"
                );
                assert_eq!(s.end, calls.exit(re.calls[s.last_event as usize] as usize), "{name}");
            }
        }
        let labels = &label[r];
        if labels.iter().all(|&l| l == u32::MAX) {
            assert!(
                holder.iter().all(|&h| h == usize::MAX),
                "{name}: rank {r} is in no occurrence but in a phase"
            );
            continue;
        }
        assert!(
            holder.iter().all(|&h| h != usize::MAX),
            "{name}: rank {r}: an event in no phase"
        );
        assert!(
            holder.windows(2).all(|w| w[0] <= w[1]),
            "{name}: rank {r}: phases out of order"
        );
        let spans: Vec<_> = p
            .phases
            .iter()
            .flat_map(|ph| ph.ranks.iter().filter(|s| s.rank as usize == r))
            .collect();
        assert!(
            spans.windows(2).all(|w| w[0].end <= w[1].start),
            "{name}: rank {r}: spans overlap in time"
        );
        total += labels.iter().filter(|&&l| l != u32::MAX).count() as u64;
        displaced += labels
            .iter()
            .zip(&holder)
            .filter(|(&l, &h)| l != u32::MAX && l as usize != h)
            .count() as u64;
        // Each boundary: no cut puts fewer labelled events on the wrong side (cost of every cut
        // by running counts).
        // Cuts fall between calls: the events of one call (a send-receive) stay in one phase.
        let allowed = |c: usize| c == 0 || c == n || re.calls[c - 1] != re.calls[c];
        for b in 1..nphases {
            let cut = holder.partition_point(|&h| h < b);
            assert!(
                allowed(cut),
                "{name}: rank {r} boundary {b} splits a call at event {cut}"
            );
            let wrong_after: usize = labels.iter().filter(|&&l| l != u32::MAX && (l as usize) < b).count();
            let (mut before_late, mut after_early, mut least) = (0usize, wrong_after, wrong_after);
            let mut cost_at_cut = if cut == 0 { wrong_after } else { usize::MAX };
            for (i, &l) in labels.iter().enumerate() {
                if l != u32::MAX {
                    if l as usize >= b {
                        before_late += 1;
                    } else {
                        after_early -= 1;
                    }
                }
                if allowed(i + 1) {
                    least = least.min(before_late + after_early);
                }
                if i + 1 == cut {
                    cost_at_cut = before_late + after_early;
                }
            }
            assert_eq!(
                cost_at_cut, least,
                "{name}: rank {r} boundary {b} at event {cut} is not the least displacing"
            );
        }
    }
    // The phases' messages are the trace's sends, each counted once.
    let sends: u64 = trace
        .ranks
        .iter()
        .enumerate()
        .map(|(r, rt)| {
            (0..rt.p2p.len())
                .filter(|&o| {
                    rt.p2p.dir[o] == P2pDir::Send && rt.p2p.peer[o] < trace.num_ranks() && rt.p2p.peer[o] as usize != r
                })
                .count() as u64
        })
        .sum();
    let counted: u64 = p
        .phases
        .iter()
        .map(|ph| ph.topology.as_ref().map_or(0, |t| t.messages))
        .sum();
    assert_eq!(counted, sends, "{name}: phase messages against the trace's sends");
    (total, displaced, nphases)
}

#[test]
fn every_rank_s_events_are_partitioned_among_the_phases() {
    let runs = runs();
    assert!(runs.len() >= 40, "{} runs", runs.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let lines = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(dir) = runs.get(i) else { break };
                let (total, displaced, phases) = check(dir);
                let line = format!(
                    "{}: {phases} phases, {displaced} of {total} occurrence parts begin outside their phase",
                    dir.file_name().unwrap().to_string_lossy()
                );
                eprintln!("{line}");
                lines.lock().unwrap().push(line);
            });
        }
    });
    let mut lines = lines.into_inner().unwrap();
    lines.sort();
    eprintln!("{}", lines.join("\n"));
}
