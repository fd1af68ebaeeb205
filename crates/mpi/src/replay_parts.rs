//! `replay` by parts: each process replays its ranks on every network of the what-if, the
//! injection starts of sends and the arrivals of collectives crossing processes exchanged in
//! rounds; rank 0 combines and prints.

use super::*;

/// `replay`: a parallel replay (docs/mpi.md, `tracelogic_analysis::replay::parts`). Each
/// process replays its ranks under every configuration; the injection starts of sends to other
/// processes' ranks and the arrivals of collective instances spanning processes are exchanged
/// in rounds (`MPI_Alltoallv`) until no process has any to send; rank 0 gathers each rank's
/// final clocks and terms and builds the serial report. When a part finds that the serial
/// replay decides something by its own visiting order (a deadlock it breaks, collective records
/// that disagree), the ranks' columns are gathered and rank 0 replays serially.
pub(super) fn replay_by_parts(world: &SimpleCommunicator, args: replay::Args) -> CliResult {
    let request = replay::request(&args)?;
    let options = request.options()?;
    let partial = read(world, &args.paths)?;
    warn(world, &partial.trace);
    let PartialTrace { trace, owned, blocks } = partial;
    let source = trace.source.clone();
    let (engine, selection) = args.selection.engine(trace).map_err(|e| match e {
        CliError::Input(m) => CliError::Input(format!("{source}: {m}")),
        other => other,
    })?;
    let absolute = engine.absolute(&selection)?;
    let whole = selection == Selection::all();
    let restricted = (!whole).then(|| engine.trace().restrict(&absolute));
    let rt = restricted.as_ref().unwrap_or(engine.trace());
    // The serial CLI's note on a selection without calls, from the calls of every process.
    let mine: u64 = rt.ranks[owned.start as usize..owned.end as usize]
        .iter()
        .map(|r| r.calls.len() as u64)
        .sum();
    let empty = !whole && sum(world, mine) == 0;
    let dropped = match &restricted {
        None => DroppedCalls::default(),
        Some(r) => dropped_calls(engine.trace(), r)
            .map_err(|e| CliError::from(tracelogic_engine::Error::Input(e.to_string())))?,
    };
    let configs =
        what_if_configurations(&options).map_err(|e| CliError::from(tracelogic_engine::Error::Input(e.to_string())))?;
    set_stage("matching messages");
    let (matched, _) = match_part(world, rt, &owned, &blocks);
    let back = all_to_all(world, to_senders(&matched, owned.clone(), &blocks));
    let mut messages: Vec<Message> = matched.iter().map(|(m, _)| *m).collect();
    drop(matched);
    messages.extend(received::<Message, _>(&back.parts()).unwrap_or_else(|e| panic!("{e}")));
    drop(back);
    set_stage("replaying the trace");
    let part = {
        let mut part = ReplayPart::new(
            rt,
            &dropped,
            &messages,
            &configs,
            options.table.as_ref(),
            owned.clone(),
            &blocks,
        )
        .map_err(|e| CliError::from(tracelogic_engine::Error::Input(e.to_string())))?;
        drop(messages);
        let (mut rounds, mut notes, started) = (0u64, 0u64, std::time::Instant::now());
        loop {
            let out = part.run();
            rounds += 1;
            notes += out.iter().map(|v| v.len() as u64).sum::<u64>();
            if sum(world, out.iter().map(|v| v.len() as u64).sum()) == 0 {
                // Nobody can advance: the serial replay breaks the lowest open rank's wait.
                let mut key = u64::MAX;
                world.all_reduce_into(
                    &part.deadlock().unwrap_or(u64::MAX),
                    &mut key,
                    mpi::collective::SystemOperation::min(),
                );
                if key == u64::MAX || !part.break_deadlock(key) {
                    break;
                }
                continue;
            }
            let bytes: Vec<Vec<u8>> = out
                .iter()
                .map(|v| bincode::serialize(v).expect("notes serialise"))
                .collect();
            drop(out);
            let incoming = all_to_all(world, bytes);
            for b in incoming.parts() {
                let notes: Vec<Note> = bincode::deserialize(b).expect("notes deserialise");
                part.deliver(notes);
            }
        }
        if std::env::var_os("TRACELOGIC_MPI_STATS").is_some() {
            eprintln!(
                "tracelogic-mpi: process {}: {rounds} rounds, {notes} notes sent, {:.2} s replaying",
                world.rank(),
                started.elapsed().as_secs_f64()
            );
        }
        part.finish()
    };
    let unreproducible = World(world)
        .all_gather(&[part.unreproducible.is_some() as u8])
        .iter()
        .any(|b| b == &[1]);
    if unreproducible {
        drop((part, dropped, restricted));
        set_stage("gathering the ranks to rank 0 (a replay the parts do not determine)");
        let partial = PartialTrace {
            trace: engine.into_trace(),
            owned,
            blocks,
        };
        return match gather_trace(world, partial) {
            Some(mut trace) => {
                // Printed once already, after the read; the CLI's loader would print them again.
                trace.warnings.clear();
                common::preload(trace);
                replay::run(args)
            }
            None => Ok(ExitCode::SUCCESS),
        };
    }
    let bytes = bincode::serialize(&part).expect("a part serialises");
    drop(part);
    let Some(parts) = gather_to_root(world, &bytes) else {
        return Ok(ExitCode::SUCCESS);
    };
    let parts: Vec<ReplayPartResult> = parts
        .iter()
        .map(|b| bincode::deserialize(b).expect("a part deserialises"))
        .collect();
    if empty {
        let why = engine
            .past_the_end(&selection)
            .map(|w| format!(" ({w})"))
            .unwrap_or_default();
        eprintln!("tracelogic: note: the selection keeps no MPI call of {source}{why}");
    }
    let report = combine_what_if(&parts, &options).unwrap_or_else(|e| panic!("the parts do not combine: {e}"));
    let report = ReplayReport {
        report,
        source: rt.source.clone(),
        selection: absolute,
    };
    replay::print(&args, &report)
}
