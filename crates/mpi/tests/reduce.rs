//! The analyses by parts (`tracelogic_analysis::partial`, matching by envelopes routed to
//! their receivers' process) give the serial engine's summary and profile, byte for byte as
//! JSON, on every bundled sample and app trace cut into 1 to 4 blocks of ranks.

use std::ops::Range;
use tracelogic_analysis::partial::{
    combine_profile, combine_summary, profile_part, ranks_span, summary_part, ProfilePart, SummaryPart,
};
use tracelogic_analysis::partial_waits::{combine_waits, instance_parts, InstancePart, Reply, WaitsAcc, WaitsPart};
use tracelogic_engine::profile::ProfileOptions;
use tracelogic_engine::{Engine, FieldWords};
use tracelogic_formats::input::read_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::{Rank, Selection, Trace};
use tracelogic_mpi::partition::by_count;
use tracelogic_mpi::reduce::{both, match_incoming, outgoing_envelopes, received, route};

mod common;
use common::{partial, traces};

/// The summary of `trace` computed by the processes of `blocks`.
fn summary_by_parts(trace: &Trace, blocks: &[Range<Rank>]) -> String {
    let parts: Vec<Trace> = blocks.iter().map(|b| partial(trace, b)).collect();
    let out: Vec<_> = parts
        .iter()
        .zip(blocks)
        .map(|(t, b)| outgoing_envelopes(t, b.clone(), blocks))
        .collect();
    let summaries: Vec<SummaryPart> = parts
        .iter()
        .zip(blocks)
        .enumerate()
        .map(|(p, (t, b))| {
            let incoming: Vec<Vec<u8>> = out.iter().map(|(bufs, _)| bufs[p].clone()).collect();
            let (_, received) = match_incoming(t, b.clone(), &incoming).unwrap();
            summary_part(t, b.clone(), both(out[p].1, received))
        })
        .collect();
    serde_json::to_string(&combine_summary(&parts[0], &summaries)).unwrap()
}

/// The profile of `trace` restricted to `selection` computed by the processes of `blocks`.
fn profile_by_parts(trace: &Trace, blocks: &[Range<Rank>], selection: &Selection, options: &ProfileOptions) -> String {
    let parts: Vec<Trace> = blocks
        .iter()
        .map(|b| {
            let t = partial(trace, b);
            if *selection == Selection::all() {
                t
            } else {
                t.restrict(selection)
            }
        })
        .collect();
    let span = parts
        .iter()
        .zip(blocks)
        .filter_map(|(t, b)| ranks_span(t, b.clone()))
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
        .unwrap_or((0, 0));
    let profiles: Vec<ProfilePart> = parts
        .iter()
        .zip(blocks)
        .map(|(t, b)| profile_part(t, b.clone(), span, options))
        .collect();
    serde_json::to_string(&combine_profile(&parts[0], &profiles, span, options)).unwrap()
}

/// The wait states (report, time in MPI) of `trace` restricted to `selection` computed by the
/// processes of `blocks`; `None` when a part finds the serial answer ambiguous.
fn waits_by_parts(trace: &Trace, blocks: &[Range<Rank>], selection: &Selection) -> Option<String> {
    // A time window: the serial analysis pairs the messages as the whole trace does and keeps
    // those inside; `tracelogic-mpi waits` runs it on rank 0 (the parts re-match the window).
    if selection.from.is_some() || selection.to.is_some() {
        return None;
    }
    let parts: Vec<Trace> = blocks
        .iter()
        .map(|b| {
            let t = partial(trace, b);
            if *selection == Selection::all() {
                t
            } else {
                t.restrict(selection)
            }
        })
        .collect();
    let out: Vec<_> = parts
        .iter()
        .zip(blocks)
        .map(|(t, b)| outgoing_envelopes(t, b.clone(), blocks).0)
        .collect();
    let mut accs: Vec<WaitsAcc> = parts
        .iter()
        .zip(blocks)
        .map(|(t, b)| WaitsAcc::new(t, b.clone()))
        .collect();
    let replies: Vec<Vec<Vec<u8>>> = (0..blocks.len())
        .map(|p| {
            let incoming: Vec<Vec<u8>> = out.iter().map(|bufs| bufs[p].clone()).collect();
            let (messages, _) = match_incoming(&parts[p], blocks[p].clone(), &incoming).unwrap();
            let replies = accs[p].receives(&parts[p], &messages);
            route(&replies, |r| r.sender, blocks)
        })
        .collect();
    let instances: Vec<Vec<InstancePart>> = parts
        .iter()
        .zip(blocks)
        .map(|(t, b)| instance_parts(t, b.clone()))
        .collect();
    let mut waits: Vec<WaitsPart> = Vec::new();
    for (p, mut acc) in accs.into_iter().enumerate() {
        let incoming: Vec<Vec<u8>> = replies.iter().map(|bufs| bufs[p].clone()).collect();
        let mine: Vec<Reply> = received(&incoming).unwrap();
        acc.replies(&parts[p], &mine);
        acc.collectives(&parts[p], &instances);
        waits.push(acc.finish(&parts[p]));
    }
    if waits.iter().any(|w| w.ambiguous) {
        return None;
    }
    let (report, mpi_ns) = combine_waits(&parts[0], &waits);
    Some(format!(
        "{} {}",
        serde_json::to_string(&report).unwrap(),
        mpi_ns as f64 * 1e-9
    ))
}

#[test]
fn waits_by_parts_are_the_serial_ones() {
    let mut checked = 0;
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
        for selection in [Selection::all(), window] {
            let serial = engine.waits(&selection).unwrap();
            let want = format!("{} {}", serde_json::to_string(&serial.report).unwrap(), serial.mpi_s);
            let absolute = engine.absolute(&selection).unwrap();
            for p in 1..=4usize {
                let blocks = by_count(n as usize, p);
                let got = waits_by_parts(trace, &blocks, &absolute);
                if let Some(got) = got {
                    assert_eq!(got, want, "waits of {} in {p} blocks, {selection:?}", path.display());
                    checked += 1;
                } else {
                    eprintln!("{}: ambiguous in {p} blocks", path.display());
                }
            }
        }
    }
    assert!(checked >= 40, "only {checked} comparisons");
}

#[test]
fn summary_and_profile_by_parts_are_the_serial_ones() {
    let mut checked = 0;
    for path in traces() {
        let Ok(trace) = read_trace(read_paths(std::slice::from_ref(&path)).unwrap()) else {
            continue;
        };
        let engine = Engine::new(trace, FieldWords::Flags);
        let trace = engine.trace();
        let summary = serde_json::to_string(&engine.summary()).unwrap();
        let options = ProfileOptions { time_bins: 37 };
        let profile = serde_json::to_string(&engine.profile(&Selection::all(), &options).unwrap().report).unwrap();
        let n = trace.num_ranks();
        let (start, end) = trace.span();
        let window = Selection {
            ranks: Some((0..n).step_by(2).collect()),
            from: Some((end - start) / 5),
            to: Some((end - start) / 2),
            ..Selection::default()
        };
        let absolute = engine.absolute(&window).unwrap();
        let windowed = serde_json::to_string(&engine.profile(&window, &options).unwrap().report).unwrap();
        for p in 1..=4usize {
            let blocks = by_count(n as usize, p);
            let what = format!("{} in {p} blocks", path.display());
            assert_eq!(summary_by_parts(trace, &blocks), summary, "summary of {what}");
            assert_eq!(
                profile_by_parts(trace, &blocks, &Selection::all(), &options),
                profile,
                "profile of {what}"
            );
            assert_eq!(
                profile_by_parts(trace, &blocks, &absolute, &options),
                windowed,
                "windowed profile of {what}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} traces read");
}
