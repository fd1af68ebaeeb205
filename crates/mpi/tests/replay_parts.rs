//! The what-if replay by parts (`tracelogic_analysis::replay::parts`: each process replays its
//! ranks, the injection starts of sends and the arrivals of collectives exchanged in rounds)
//! gives the serial engine's report, byte for byte as JSON, on every bundled sample and app
//! trace cut into 1 to 4 blocks of ranks, whole and with selections.

use std::ops::Range;
use tracelogic_analysis::replay::parts::{combine_what_if, what_if_configurations, Note, ReplayPart};
use tracelogic_analysis::replay::{dropped_calls, DroppedCalls};
use tracelogic_engine::replay::ReplayRequest;
use tracelogic_engine::{Engine, FieldWords};
use tracelogic_formats::input::read_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::query::parse_kinds;
use tracelogic_model::{Message, Rank, Selection, Trace};
use tracelogic_mpi::partition::by_count;
use tracelogic_mpi::reduce::{match_incoming, outgoing_envelopes, received, to_senders};

mod common;
use common::{partial, traces};

/// The replay report (JSON) of `trace` restricted to `selection`, computed by the processes of
/// `blocks` exchanging notes in rounds as `tracelogic-mpi` does; `Err` when the parts say they
/// cannot give the serial answer.
fn replay_by_parts(
    trace: &Trace,
    blocks: &[Range<Rank>],
    selection: &Selection,
    request: &ReplayRequest,
) -> Result<String, String> {
    let options = request.options().unwrap();
    let configs = what_if_configurations(&options).unwrap();
    let originals: Vec<Trace> = blocks.iter().map(|b| partial(trace, b)).collect();
    let whole = *selection == Selection::all();
    let restricted: Vec<Trace> = originals
        .iter()
        .map(|t| if whole { t.clone() } else { t.restrict(selection) })
        .collect();
    let dropped: Vec<DroppedCalls> = originals
        .iter()
        .zip(&restricted)
        .map(|(o, r)| {
            if whole {
                DroppedCalls::default()
            } else {
                dropped_calls(o, r).unwrap()
            }
        })
        .collect();
    // Matching by parts, then each message's sender told about it.
    let out: Vec<Vec<Vec<u8>>> = restricted
        .iter()
        .zip(blocks)
        .map(|(t, b)| outgoing_envelopes(t, b.clone(), blocks).0)
        .collect();
    let matched: Vec<Vec<(Message, u64)>> = (0..blocks.len())
        .map(|p| {
            let incoming: Vec<Vec<u8>> = out.iter().map(|bufs| bufs[p].clone()).collect();
            match_incoming(&restricted[p], blocks[p].clone(), &incoming).unwrap().0
        })
        .collect();
    let back: Vec<Vec<Vec<u8>>> = matched
        .iter()
        .zip(blocks)
        .map(|(m, b)| to_senders(m, b.clone(), blocks))
        .collect();
    let mut parts: Vec<ReplayPart> = (0..blocks.len())
        .map(|p| {
            let incoming: Vec<Vec<u8>> = back.iter().map(|bufs| bufs[p].clone()).collect();
            let mut messages: Vec<Message> = matched[p].iter().map(|(m, _)| *m).collect();
            messages.extend(received::<Message, _>(&incoming).unwrap());
            ReplayPart::new(
                &restricted[p],
                &dropped[p],
                &messages,
                &configs,
                options.table.as_ref(),
                blocks[p].clone(),
                blocks,
            )
            .unwrap()
        })
        .collect();
    let mut rounds = 0;
    loop {
        let outs: Vec<Vec<Vec<Note>>> = parts.iter_mut().map(|p| p.run()).collect();
        if outs.iter().flatten().all(|v| v.is_empty()) {
            // Nobody can advance: break the lowest rank's wait, or stop.
            let key = parts.iter().filter_map(|p| p.deadlock()).min();
            let Some(key) = key else { break };
            // Every part is told (each must mark an unbreakable deadlock), then all agree.
            let go: Vec<bool> = parts.iter_mut().map(|p| p.break_deadlock(key)).collect();
            if go.contains(&false) {
                break;
            }
            continue;
        }
        for (q, part) in parts.iter_mut().enumerate() {
            part.deliver(outs.iter().flat_map(|o| o[q].iter().cloned()));
        }
        rounds += 1;
        assert!(rounds < 1_000_000, "the rounds do not end");
    }
    let results: Vec<_> = parts.into_iter().map(|p| p.finish()).collect();
    let report = combine_what_if(&results, &options)?;
    Ok(serde_json::to_string(&report).unwrap())
}

#[test]
fn replay_by_parts_is_the_serial_one() {
    let (mut checked, mut refused) = (0, 0);
    for path in traces() {
        let Ok(trace) = read_trace(read_paths(std::slice::from_ref(&path)).unwrap()) else {
            continue;
        };
        let engine = Engine::new(trace, FieldWords::Flags);
        let trace = engine.trace();
        let n = trace.num_ranks();
        let (start, end) = trace.span();
        let window = Selection {
            ranks: Some((0..n).filter(|r| r % 3 != 1).collect()),
            from: Some((end - start) / 5),
            to: Some((end - start) / 2),
            ..Selection::default()
        };
        let p2p = Selection {
            kinds: Some(parse_kinds("p2p").unwrap()),
            ..Selection::default()
        };
        let request = ReplayRequest {
            per_rank: true,
            ..ReplayRequest::default()
        };
        for selection in [Selection::all(), window, p2p] {
            let serial = engine.replay(&selection, &request).unwrap();
            let want = serde_json::to_string(&serial.report).unwrap();
            let absolute = engine.absolute(&selection).unwrap();
            for p in 1..=4usize {
                let blocks = by_count(n as usize, p);
                match replay_by_parts(trace, &blocks, &absolute, &request) {
                    Ok(got) => {
                        assert_eq!(got, want, "replay of {} in {p} blocks, {selection:?}", path.display());
                        checked += 1;
                    }
                    Err(why) => {
                        eprintln!("{}: {p} blocks, {selection:?}: {why}", path.display());
                        refused += 1;
                    }
                }
            }
        }
    }
    eprintln!("{checked} equal, {refused} refused");
    assert!(checked >= 100, "only {checked} comparisons ({refused} refused)");
}
