//! The timeline query against a brute-force per-column aggregation (generated traces and the
//! real samples), its lists of calls, messages and collectives against direct scans, and the
//! logical steps against hand-checked values.

use std::collections::HashMap;
use std::path::PathBuf;
use tracelogic_analysis::timeline::{
    timeline, Clock, Colour, Groups, TimelineIndex, TimelineQuery, TimelineTile, DEFAULT_MAX_MESSAGES, NONE,
};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::{match_messages, CollectiveOp, P2pDir, Trace, COMM_WORLD, NOT_COMPLETED, NO_CALLPATH, NO_ROOT};
use tracelogic_synth::{generate, CollectiveSpec, Spec, Style, TopologySpec};

fn edge(from: u64, to: u64, pixels: u32, k: u32) -> u64 {
    from + ((to - from) as u128 * k as u128 / pixels as u128) as u64
}

/// Begin and end of call `i` of rank `r` in the tile's clock.
fn span(trace: &Trace, index: &TimelineIndex, clock: Clock, r: usize, i: usize) -> (u64, u64) {
    match clock {
        Clock::Time => {
            let o = trace.span().0;
            let c = &trace.ranks[r].calls;
            (c.enter(i) - o, c.exit(i) - o)
        }
        Clock::Logical => {
            let s = index.steps().unwrap().steps[r][i] as u64;
            (s - 1, s)
        }
    }
}

/// Per lane and column: coverage per function, from every call of every rank of the lane.
fn brute(trace: &Trace, index: &TimelineIndex, tile: &TimelineTile) -> Vec<Vec<HashMap<u32, u64>>> {
    let mut out = Vec::new();
    for lane in &tile.lanes {
        let mut cols = vec![HashMap::new(); tile.pixels as usize];
        for &r in &lane.ranks {
            for i in 0..trace.ranks[r as usize].calls.len() {
                let (b, e) = span(trace, index, tile.clock, r as usize, i);
                for (k, col) in cols.iter_mut().enumerate() {
                    let x0 = edge(tile.from, tile.to, tile.pixels, k as u32);
                    let x1 = edge(tile.from, tile.to, tile.pixels, k as u32 + 1);
                    let (lo, hi) = (b.max(x0), e.min(x1));
                    if hi > lo {
                        *col.entry(trace.ranks[r as usize].calls.func[i]).or_insert(0) += hi - lo;
                    }
                }
            }
        }
        out.push(cols);
    }
    out
}

fn dominant(col: &HashMap<u32, u64>) -> u32 {
    col.iter()
        .filter(|x| *x.1 > 0)
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map_or(NONE, |x| *x.0)
}

/// The tile equals the brute-force aggregation exactly (it must have been aggregated from calls).
fn assert_exact(what: &str, trace: &Trace, index: &TimelineIndex, tile: &TimelineTile) {
    assert_eq!(tile.resolution, 0, "{what}: expected the exact path");
    let b = brute(trace, index, tile);
    for (l, lane) in b.iter().enumerate() {
        for (k, col) in lane.iter().enumerate() {
            let cell = l * tile.pixels as usize + k;
            let width = (edge(tile.from, tile.to, tile.pixels, k as u32 + 1)
                - edge(tile.from, tile.to, tile.pixels, k as u32)) as f64
                * tile.lanes[l].ranks.len() as f64;
            let busy: u64 = col.values().sum();
            let want = if width > 0.0 {
                (busy as f64 / width).min(1.0)
            } else {
                0.0
            };
            assert!(
                (tile.busy[cell] as f64 - want).abs() < 1e-5,
                "{what}: lane {l} column {k}: busy {} vs {want}",
                tile.busy[cell]
            );
            assert_eq!(tile.func[cell], dominant(col), "{what}: lane {l} column {k}: {col:?}");
        }
    }
}

/// From bins: busy within the two edge bins of each column (plus 16-bit rounding), and the
/// dominant function covers part of the column.
fn assert_binned(what: &str, trace: &Trace, index: &TimelineIndex, tile: &TimelineTile) {
    assert!(tile.resolution > 0, "{what}: expected bins");
    let b = brute(trace, index, tile);
    let pw = (tile.to - tile.from) as f64 / tile.pixels as f64;
    let tol = 2.0 * tile.resolution as f64 / pw + 1e-3;
    assert!(
        tol <= 1.01 + 1e-3,
        "{what}: bins {} wider than half a column {pw}",
        tile.resolution
    );
    for (l, lane) in b.iter().enumerate() {
        for (k, col) in lane.iter().enumerate() {
            let cell = l * tile.pixels as usize + k;
            let width = (edge(tile.from, tile.to, tile.pixels, k as u32 + 1)
                - edge(tile.from, tile.to, tile.pixels, k as u32)) as f64
                * tile.lanes[l].ranks.len() as f64;
            let busy: u64 = col.values().sum();
            let want = (busy as f64 / width).min(1.0);
            assert!(
                (tile.busy[cell] as f64 - want).abs() <= tol,
                "{what}: lane {l} column {k}: busy {} vs {want} (tolerance {tol})",
                tile.busy[cell]
            );
            let f = tile.func[cell];
            if f != NONE {
                // The column's bins may reach one bin beyond each of its edges.
                let x0 = edge(tile.from, tile.to, tile.pixels, k as u32).saturating_sub(tile.resolution);
                let x1 = edge(tile.from, tile.to, tile.pixels, k as u32 + 1) + tile.resolution;
                let covers = tile.lanes[l].ranks.iter().any(|&r| {
                    (0..trace.ranks[r as usize].calls.len()).any(|i| {
                        let (cb, ce) = span(trace, index, tile.clock, r as usize, i);
                        trace.ranks[r as usize].calls.func[i] == f && cb < x1 && ce > x0
                    })
                });
                assert!(
                    covers,
                    "{what}: lane {l} column {k}: function {f} not in or near the column"
                );
            }
            // One function dominating the whole neighbourhood is the column's dominant.
            if busy > 0 && col.len() == 1 && want > tol {
                let only = *col.keys().next().unwrap();
                let x0 = edge(tile.from, tile.to, tile.pixels, k as u32).saturating_sub(tile.resolution);
                let x1 = edge(tile.from, tile.to, tile.pixels, k as u32 + 1) + tile.resolution;
                let alone = tile.lanes[l].ranks.iter().all(|&r| {
                    (0..trace.ranks[r as usize].calls.len()).all(|i| {
                        let (cb, ce) = span(trace, index, tile.clock, r as usize, i);
                        trace.ranks[r as usize].calls.func[i] == only || cb >= x1 || ce <= x0
                    })
                });
                if alone {
                    assert_eq!(f, only, "{what}: lane {l} column {k}");
                }
            }
        }
    }
}

/// The listed calls are exactly the calls at least one column wide meeting the window, and the
/// messages and collectives counted are those a direct scan finds.
fn assert_lists(what: &str, trace: &Trace, index: &TimelineIndex, tile: &TimelineTile) {
    let matching = match_messages(trace);
    let pw = ((tile.to - tile.from) as f64 / tile.pixels as f64).max(1.0);
    let drawn: Vec<u32> = tile.lanes.iter().flat_map(|l| l.ranks.iter().copied()).collect();
    let mut want = Vec::new();
    for &r in &drawn {
        for i in 0..trace.ranks[r as usize].calls.len() {
            let (b, e) = span(trace, index, tile.clock, r as usize, i);
            if b < tile.to && e > tile.from && (e - b) as f64 >= pw {
                want.push((r, i as u32));
            }
        }
    }
    let mut got: Vec<(u32, u32)> = tile.calls.iter().map(|c| (c.rank, c.index)).collect();
    want.sort_unstable();
    got.sort_unstable();
    if tile.calls_left_out == 0 {
        assert_eq!(got, want, "{what}: wide calls");
    } else {
        assert_eq!(got.len() as u64 + tile.calls_left_out, want.len() as u64, "{what}");
    }
    for c in &tile.calls {
        let (b, e) = span(trace, index, tile.clock, c.rank as usize, c.index as usize);
        assert_eq!((c.begin, c.end), (b, e), "{what}");
        assert_eq!(c.func, trace.ranks[c.rank as usize].calls.func[c.index as usize]);
    }
    // Messages between drawn ranks with the send's posting call beginning, or the receive's
    // completing call ending, in the window.
    let shown: Vec<bool> = (0..trace.num_ranks()).map(|r| drawn.contains(&r)).collect();
    let inside = |t: u64| t >= tile.from && t < tile.to;
    let mut count = 0u64;
    for msg in &matching.messages {
        if !shown[msg.sender as usize] || !shown[msg.receiver as usize] {
            continue;
        }
        let sc = trace.ranks[msg.sender as usize].p2p.post[msg.send_op as usize];
        let rp = &trace.ranks[msg.receiver as usize].p2p;
        let rc = match rp.complete(msg.recv_op as usize) {
            NOT_COMPLETED => rp.post[msg.recv_op as usize],
            c => c,
        };
        let s = span(trace, index, tile.clock, msg.sender as usize, sc as usize).0;
        let r = span(trace, index, tile.clock, msg.receiver as usize, rc as usize).1;
        if inside(s) || inside(r) {
            count += 1;
        }
    }
    assert_eq!(
        tile.messages.len() as u64 + tile.messages_left_out,
        count,
        "{what}: messages"
    );
    for msg in &tile.messages {
        assert!(inside(msg.send) || inside(msg.recv), "{what}: {msg:?}");
    }
    // Beyond the cap, exactly the cap is listed, each message once.
    if tile.messages_left_out > 0 {
        assert_eq!(tile.messages.len(), DEFAULT_MAX_MESSAGES as usize, "{what}");
    }
    let mut seen: Vec<_> = tile
        .messages
        .iter()
        .map(|m| (m.sender, m.receiver, m.send, m.recv, m.tag))
        .collect();
    seen.sort_unstable();
    let listed = seen.len();
    seen.dedup();
    assert_eq!(seen.len(), listed, "{what}: a message listed twice");
}

fn query(clock: Clock, from: u64, to: Option<u64>, pixels: u32) -> TimelineQuery {
    TimelineQuery {
        from,
        to,
        ..TimelineQuery::whole(clock, pixels)
    }
}

/// Whole run from bins, a few windows exactly, in both clocks; returns how many tiles were checked.
fn check_trace(what: &str, trace: &Trace) -> usize {
    let matching = match_messages(trace);
    let mut index = TimelineIndex::build(trace, &matching);
    index.ensure_logical(trace, &matching);
    let mut checked = 0;
    for clock in [Clock::Time, Clock::Logical] {
        let extent = index.extent(clock).unwrap();
        // Whole run: bins when the run has enough calls for columns two level-0 bins wide.
        let tile = timeline(trace, &matching, &index, &query(clock, 0, None, 64)).unwrap();
        assert_eq!(tile.lanes.len(), trace.ranks.len(), "{what}");
        if tile.resolution > 0 {
            assert_binned(&format!("{what} {clock:?} whole"), trace, &index, &tile);
        } else {
            assert_exact(&format!("{what} {clock:?} whole"), trace, &index, &tile);
        }
        assert_lists(&format!("{what} {clock:?} whole"), trace, &index, &tile);
        checked += 1;
        // Narrow windows (a few calls per column): exact.
        let calls = trace.ranks.iter().map(|r| r.calls.len()).max().unwrap_or(0).max(1);
        let width = (extent as u128 * 40 / calls as u128).max(8) as u64;
        for start in [0, extent / 3, extent / 2 + 7, extent.saturating_sub(width)] {
            let q = query(clock, start, Some(start + width), 80);
            let tile = timeline(trace, &matching, &index, &q).unwrap();
            // At most half a call per column on the busiest rank: finer than the level-0 bins.
            assert_exact(&format!("{what} {clock:?} [{start}+{width}]"), trace, &index, &tile);
            assert_lists(&format!("{what} {clock:?} [{start}+{width}]"), trace, &index, &tile);
            checked += 1;
        }
    }
    checked
}

#[test]
fn generated_runs_match_the_brute_force_aggregation() {
    for (topology, style) in [
        ("torus:4x4", Style::Isend),
        ("ring:6", Style::Blocking),
        ("hypercube:3", Style::Sendrecv),
        ("grid:3x3", Style::Wavefront),
    ] {
        let trace = generate(&Spec {
            topology: TopologySpec::parse(topology).unwrap(),
            style,
            iterations: 60,
            imbalance: 0.5,
            collectives: vec![CollectiveSpec {
                op: CollectiveOp::Allreduce,
                every: 7,
                bytes: 8,
            }],
            ..Default::default()
        })
        .unwrap();
        assert_eq!(check_trace(topology, &trace), 10);
    }
}

#[test]
fn the_whole_run_of_a_large_generated_run_is_aggregated_from_bins() {
    let trace = generate(&Spec {
        topology: TopologySpec::parse("torus:4x4").unwrap(),
        iterations: 400,
        imbalance: 0.3,
        ..Default::default()
    })
    .unwrap();
    let matching = match_messages(&trace);
    let index = TimelineIndex::build(&trace, &matching);
    let tile = timeline(&trace, &matching, &index, &query(Clock::Time, 0, None, 50)).unwrap();
    assert!(tile.resolution > 0);
    assert_binned("torus 400", &trace, &index, &tile);
    assert_lists("torus 400", &trace, &index, &tile);
    // Merged lanes: 16 ranks on 5 rows -> lanes of 4 ranks (the last holds 4 too).
    let q = TimelineQuery {
        rows: 5,
        ..query(Clock::Time, 0, None, 50)
    };
    let tile = timeline(&trace, &matching, &index, &q).unwrap();
    assert_eq!(tile.lanes.len(), 4);
    assert!(tile.lanes.iter().all(|l| l.ranks.len() == 4));
    assert_binned("torus 400 merged", &trace, &index, &tile);
}

#[test]
fn real_samples_match_the_brute_force_aggregation() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples");
    let mut checked = 0;
    for name in [
        "npb-lu.S.8",
        "npb-bt.S.9",
        "npb-mg.S.8",
        "sstmacro-dumpi-testbgp",
        "pipit-ping-pong-otf2",
        "pyotf2-generated-4rank",
        "profet-paraver-test1",
    ] {
        let files = load_paths(&[root.join(name)]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let trace = read_trace(files).unwrap_or_else(|e| panic!("{name}: {e}"));
        checked += check_trace(name, &trace);
    }
    assert_eq!(checked, 70);
}

#[test]
fn rank_order_and_filter_are_the_lanes() {
    let trace = generate(&Spec::default()).unwrap();
    let matching = match_messages(&trace);
    let index = TimelineIndex::build(&trace, &matching);
    let q = TimelineQuery {
        ranks: vec![5, 2, 9],
        ..query(Clock::Time, 0, None, 40)
    };
    let tile = timeline(&trace, &matching, &index, &q).unwrap();
    let lanes: Vec<Vec<u32>> = tile.lanes.iter().map(|l| l.ranks.clone()).collect();
    assert_eq!(lanes, vec![vec![5], vec![2], vec![9]]);
    assert_lists("filtered", &trace, &index, &tile);
    assert!(tile
        .messages
        .iter()
        .all(|m| [5, 2, 9].contains(&m.sender) && [5, 2, 9].contains(&m.receiver)));
    let bad = TimelineQuery {
        ranks: vec![16],
        ..q.clone()
    };
    assert!(timeline(&trace, &matching, &index, &bad)
        .unwrap_err()
        .contains("rank 16"));
    let bad = TimelineQuery { pixels: 0, ..q };
    assert!(timeline(&trace, &matching, &index, &bad).is_err());
    let logical = query(Clock::Logical, 0, None, 40);
    assert!(timeline(&trace, &matching, &index, &logical)
        .unwrap_err()
        .contains("logical"));
}

/// A hand-built trace: the calls of each rank as (function, enter, exit, op) with
/// op = `s:PEER` (blocking send), `r:PEER` (blocking receive), `b` (barrier) or `-`.
fn hand_trace(ranks: &[&[(&str, u64, u64, &str)]]) -> Trace {
    let mut t = Trace::new("generated", "hand", ranks.len() as u32);
    for (r, calls) in ranks.iter().enumerate() {
        for &(f, a, b, op) in calls.iter() {
            let i = t.push_call(r as u32, f, a, b, NO_CALLPATH, 0);
            if let Some(p) = op.strip_prefix("s:") {
                t.push_p2p(r as u32, i, i, P2pDir::Send, p.parse().unwrap(), 0, COMM_WORLD, 8);
            } else if let Some(p) = op.strip_prefix("r:") {
                t.push_p2p(r as u32, i, i, P2pDir::Recv, p.parse().unwrap(), 0, COMM_WORLD, 8);
            } else if op == "b" {
                t.push_collective(r as u32, i, CollectiveOp::Barrier, COMM_WORLD, NO_ROOT, 0, 0);
            }
        }
    }
    t
}

#[test]
fn logical_steps_of_a_pipeline_follow_the_messages() {
    // Rank 2 sends to 1, which forwards to 0 (so rank 0 must wait for ranks processed after
    // it); then all three meet in a barrier. Hand-checked steps:
    // rank 2: Init 1, Send 2
    // rank 1: Init 1, Recv 1+max(1, rank 2's Send 2) = 3, Send 4
    // rank 0: Init 1, Recv 1+max(1, rank 1's Send 4) = 5, Barrier 1+max(5, 4, 2) = 6 on
    //         every rank, Finalize 7 (so ranks 1 and 2 end Barrier 6, Finalize 7).
    let t = hand_trace(&[
        &[
            ("MPI_Init", 0, 10, "-"),
            ("MPI_Recv", 11, 90, "r:1"),
            ("MPI_Barrier", 91, 100, "b"),
            ("MPI_Finalize", 101, 110, "-"),
        ],
        &[
            ("MPI_Init", 0, 10, "-"),
            ("MPI_Recv", 11, 50, "r:2"),
            ("MPI_Send", 51, 60, "s:0"),
            ("MPI_Barrier", 61, 100, "b"),
            ("MPI_Finalize", 101, 110, "-"),
        ],
        &[
            ("MPI_Init", 0, 10, "-"),
            ("MPI_Send", 11, 20, "s:1"),
            ("MPI_Barrier", 21, 100, "b"),
            ("MPI_Finalize", 101, 110, "-"),
        ],
    ]);
    let matching = match_messages(&t);
    let mut index = TimelineIndex::build(&t, &matching);
    index.ensure_logical(&t, &matching);
    let s = index.steps().unwrap();
    assert_eq!(s.steps[0], vec![1, 5, 6, 7]);
    assert_eq!(s.steps[1], vec![1, 3, 4, 6, 7]);
    assert_eq!(s.steps[2], vec![1, 2, 6, 7]);
    assert_eq!(s.max_step, 7);
    assert_eq!(s.forced, 0);
    // The barrier is one collective spanning its participants' calls, in both clocks.
    let tile = timeline(&t, &matching, &index, &query(Clock::Logical, 0, None, 7)).unwrap();
    assert_eq!(tile.collectives.len(), 1);
    assert_eq!((tile.collectives[0].begin, tile.collectives[0].end), (5, 6));
    assert_eq!(tile.collectives[0].participants, 3);
    let tile = timeline(&t, &matching, &index, &query(Clock::Time, 0, None, 11)).unwrap();
    assert_eq!((tile.collectives[0].begin, tile.collectives[0].end), (21, 100));
    assert_eq!(tile.messages.len(), 2);
    // In logical mode each column is one step: rank 0's column 1 is idle (steps 2..4 wait).
    let tile = timeline(&t, &matching, &index, &query(Clock::Logical, 0, None, 7)).unwrap();
    let recv = t.functions.get("MPI_Recv").unwrap();
    assert_eq!(tile.func[1], NONE);
    assert_eq!(tile.func[4], recv);
    assert_eq!(tile.busy[4], 1.0);
}

#[test]
fn a_receive_that_can_never_complete_is_forced_not_stuck() {
    // Rank 0 receives from 1 before sending to 1, and rank 1 does the same: as recorded (a
    // corrupt or reordered trace), neither receive's send comes first.
    let t = hand_trace(&[
        &[("MPI_Recv", 0, 10, "r:1"), ("MPI_Send", 11, 20, "s:1")],
        &[("MPI_Recv", 0, 10, "r:0"), ("MPI_Send", 11, 20, "s:0")],
    ]);
    let matching = match_messages(&t);
    let mut index = TimelineIndex::build(&t, &matching);
    index.ensure_logical(&t, &matching);
    let s = index.steps().unwrap();
    assert!(s.forced >= 1);
    assert!(s.steps.iter().all(|r| r.windows(2).all(|w| w[0] < w[1]) && r[0] >= 1));
}

#[test]
fn logical_steps_of_a_halo_exchange_line_up_per_iteration() {
    // Isend halo exchange on a ring with strong compute imbalance: in time the ranks drift
    // apart, in steps every rank's k-th MPI_Waitall has the same step. Hand-checked: Init is
    // step 1; each iteration is Irecv ×2, Isend ×2 (steps +1 each) and a Waitall one after
    // the neighbours' last Isend, so iteration k's Waitall is step 1 + 5k.
    let trace = generate(&Spec {
        topology: TopologySpec::parse("ring:6").unwrap(),
        style: Style::Isend,
        iterations: 12,
        imbalance: 3.0,
        ..Default::default()
    })
    .unwrap();
    let matching = match_messages(&trace);
    let mut index = TimelineIndex::build(&trace, &matching);
    index.ensure_logical(&trace, &matching);
    let s = index.steps().unwrap();
    assert_eq!(s.forced, 0);
    let waitall = trace.functions.get("MPI_Waitall").unwrap();
    let mut per_rank: Vec<Vec<u32>> = Vec::new();
    let mut time_spread = 0u64;
    for (r, rt) in trace.ranks.iter().enumerate() {
        let w: Vec<usize> = (0..rt.calls.len()).filter(|&i| rt.calls.func[i] == waitall).collect();
        per_rank.push(w.iter().map(|&i| s.steps[r][i]).collect());
        let first = &trace.ranks[0].calls;
        let w0: Vec<usize> = (0..first.len()).filter(|&i| first.func[i] == waitall).collect();
        for (a, b) in w.iter().zip(&w0) {
            time_spread = time_spread.max(rt.calls.enter(*a).abs_diff(first.enter(*b)));
        }
    }
    assert!(time_spread > 0, "the imbalance should make the ranks drift in time");
    let expected: Vec<u32> = (1..=12).map(|k| 1 + 5 * k).collect();
    for (r, steps) in per_rank.iter().enumerate() {
        assert_eq!(steps, &expected, "rank {r}");
    }
    // A receive is never before the send it completes, in steps.
    for m in &matching.messages {
        let sc = trace.ranks[m.sender as usize].p2p.post[m.send_op as usize];
        let rc = trace.ranks[m.receiver as usize].p2p.complete(m.recv_op as usize);
        assert!(s.steps[m.sender as usize][sc as usize] < s.steps[m.receiver as usize][rc as usize]);
    }
}

/// `trace` with each call's function replaced by `label(rank, call)`: the brute-force reference
/// of a group colouring is the function colouring of this trace.
fn relabelled(trace: &Trace, label: impl Fn(usize, usize) -> u32) -> Trace {
    let mut t = trace.clone();
    for (r, rt) in t.ranks.iter_mut().enumerate() {
        for i in 0..rt.calls.func.len() {
            rt.calls.func.set(i, label(r, i));
        }
    }
    t
}

#[test]
fn group_colouring_matches_the_brute_force_aggregation_of_the_groups() {
    let trace = generate(&Spec {
        topology: TopologySpec::parse("torus:4x4").unwrap(),
        style: Style::Isend,
        iterations: 300,
        imbalance: 0.4,
        ..Default::default()
    })
    .unwrap();
    let matching = match_messages(&trace);
    let mut index = TimelineIndex::build(&trace, &matching);
    // Runs of five calls in four groups, shifted per rank: groups change inside columns.
    let label = |r: usize, i: usize| ((i + r) / 5 % 4) as u32;
    let of_call: Vec<Vec<u32>> = trace
        .ranks
        .iter()
        .enumerate()
        .map(|(r, rt)| (0..rt.calls.len()).map(|i| label(r, i)).collect())
        .collect();
    let q = TimelineQuery {
        colour: Colour::Pattern,
        ..query(Clock::Time, 0, None, 60)
    };
    // Without groups the colouring is refused, with a clear error.
    let err = timeline(&trace, &matching, &index, &q).unwrap_err();
    assert!(err.contains("pattern"), "{err}");
    let groups = Groups {
        names: (0..4).map(|k| format!("g{k}")).collect(),
        of_call: of_call.clone(),
        occurrence: Vec::new(),
    };
    assert!(index
        .set_groups(
            &trace,
            Colour::Pattern,
            Groups {
                of_call: vec![vec![0]],
                ..groups.clone()
            }
        )
        .is_err());
    index.set_groups(&trace, Colour::Pattern, groups).unwrap();
    index.ensure_logical(&trace, &matching);
    let reference = relabelled(&trace, label);
    for clock in [Clock::Time, Clock::Logical] {
        let extent = index.extent(clock).unwrap();
        let calls = trace.ranks.iter().map(|r| r.calls.len()).max().unwrap();
        let width = (extent as u128 * 40 / calls as u128).max(8) as u64;
        for (from, to) in [(0, None), (extent / 3, Some(extent / 3 + width))] {
            let q = TimelineQuery {
                colour: Colour::Pattern,
                ..query(clock, from, to, 60)
            };
            let tile = timeline(&trace, &matching, &index, &q).unwrap();
            assert_eq!(tile.colour, Colour::Pattern);
            assert_eq!(tile.groups.len(), 4);
            // The function colouring is still there, unchanged.
            let plain = timeline(&trace, &matching, &index, &query(clock, from, to, 60)).unwrap();
            assert_eq!(tile.func, plain.func);
            assert!(plain.group.is_empty());
            for c in &tile.calls {
                assert_eq!(c.group, label(c.rank as usize, c.index as usize));
            }
            // The groups per column are the functions per column of the relabelled trace.
            let as_functions = TimelineTile {
                func: tile.group.clone(),
                ..tile.clone()
            };
            let what = format!("groups {clock:?} {from}");
            if tile.resolution > 0 {
                assert_binned(&what, &reference, &index, &as_functions);
            } else {
                assert_exact(&what, &reference, &index, &as_functions);
            }
        }
    }
}

#[test]
fn message_waits_follow_the_late_sender_definition() {
    // Blocking receives on an imbalanced ring: a receive entered before its send began waits
    // from its entry until the send's begin (at most its own duration).
    let trace = generate(&Spec {
        topology: TopologySpec::parse("ring:6").unwrap(),
        style: Style::Blocking,
        iterations: 30,
        imbalance: 0.6,
        ..Default::default()
    })
    .unwrap();
    let matching = match_messages(&trace);
    let index = TimelineIndex::build(&trace, &matching);
    let tile = timeline(&trace, &matching, &index, &query(Clock::Time, 0, None, 100)).unwrap();
    assert_eq!(tile.messages_left_out, 0);
    let o = trace.span().0;
    let mut late = 0;
    for m in &tile.messages {
        let find = |r: u32, t: u64, at_end: bool| {
            let c = &trace.ranks[r as usize].calls;
            (0..c.len())
                .find(|&i| {
                    if at_end {
                        c.exit(i) - o == t
                    } else {
                        c.enter(i) - o == t
                    }
                })
                .unwrap()
        };
        let rc = find(m.receiver, m.recv, true);
        let sc = find(m.sender, m.send, false);
        let (rt, st) = (
            &trace.ranks[m.receiver as usize].calls,
            &trace.ranks[m.sender as usize].calls,
        );
        assert_eq!(trace.functions.name(rt.func[rc]), "MPI_Recv");
        let want = st
            .enter(sc)
            .saturating_sub(rt.enter(rc))
            .min(rt.exit(rc) - rt.enter(rc));
        assert_eq!(m.late_sender, want, "{m:?}");
        assert_eq!(m.time, (m.send, m.recv));
        late += (want > 0) as u32;
    }
    assert!(late > 0, "the imbalanced ring has late senders");
}

/// The page's worker builds the receive side of the index when idle after the first tile
/// (`TimelineIndex::prepare_zoom`): the whole-run tile must not need it, and windows answered
/// after it is built ahead must be the tiles a lazily built index gives, with the messages a
/// direct scan finds.
#[test]
fn preparing_the_zoom_ahead_changes_no_tile() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples");
    for name in ["npb-lu.S.8", "npb-mg.S.8", "sstmacro-dumpi-testbgp"] {
        let files = load_paths(&[root.join(name)]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let trace = read_trace(files).unwrap_or_else(|e| panic!("{name}: {e}"));
        let matching = match_messages(&trace);
        let ahead = TimelineIndex::build(&trace, &matching);
        let lazy = TimelineIndex::build(&trace, &matching);
        let whole = timeline(&trace, &matching, &ahead, &query(Clock::Time, 0, None, 64)).unwrap();
        assert!(
            !ahead.zoom_prepared(),
            "{name}: the whole-run tile built the receive side"
        );
        assert!(ahead.prepare_zoom(&trace, &matching), "{name}: nothing to prepare");
        assert!(ahead.zoom_prepared(), "{name}");
        assert!(!ahead.prepare_zoom(&trace, &matching), "{name}: prepared twice");
        assert_eq!(
            whole,
            timeline(&trace, &matching, &lazy, &query(Clock::Time, 0, None, 64)).unwrap(),
            "{name}"
        );
        let extent = ahead.extent(Clock::Time).unwrap();
        for (from, to) in [(extent / 3, extent / 2), (extent / 10, extent / 5), (1, extent)] {
            let q = query(Clock::Time, from, Some(to), 80);
            let tile = timeline(&trace, &matching, &ahead, &q).unwrap();
            assert_eq!(
                tile,
                timeline(&trace, &matching, &lazy, &q).unwrap(),
                "{name} [{from}, {to})"
            );
            assert_lists(&format!("{name} prepared [{from}, {to})"), &trace, &ahead, &tile);
        }
        assert!(
            lazy.zoom_prepared(),
            "{name}: a window inside the run needs the receive side"
        );
    }
}
