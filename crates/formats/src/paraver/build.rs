//! The trace from the records read: threads become ranks, MPI events become calls with their
//! collective attributes and call paths, and communication records become point-to-point
//! operations attached to the calls that posted and completed them.

use super::*;

pub(super) fn build_trace(
    mut body: Body,
    header: &Header,
    comm_defs: &HashMap<u64, CommDef>,
    row_threads: &[String],
    roles: &Roles,
) -> Result<Trace, FormatError> {
    let name = body.file.to_owned();
    // Ranks: tasks of applications whose threads emitted MPI events.
    let mut mpi_apps: Vec<usize> = (0..header.apps.len())
        .filter(|&a| {
            body.thread_base[a].iter().enumerate().any(|(t, &base)| {
                let n = header.apps[a].threads_per_task[t] as usize;
                body.threads[base..base + n].iter().any(|d| d.has_mpi)
            })
        })
        .collect();
    let mut warnings = Vec::new();
    if mpi_apps.is_empty() && !header.apps.is_empty() {
        mpi_apps.push(0);
        warnings.push("no MPI events found: the ranks are the tasks of application 1".to_owned());
    }
    // thread index → (rank, location index)
    let mut owner: Vec<Option<(Rank, u16)>> = vec![None; body.threads.len()];
    let mut rank_of_task: HashMap<(usize, usize), Rank> = HashMap::new();
    let mut locations: Vec<Vec<Location>> = Vec::new();
    for &a in &mpi_apps {
        for (t, &base) in body.thread_base[a].iter().enumerate() {
            let r = locations.len() as Rank;
            rank_of_task.insert((a, t), r);
            let n = header.apps[a].threads_per_task[t] as usize;
            let mut locs = Vec::with_capacity(n);
            for th in 0..n {
                owner[base + th] = Some((r, th as u16));
                let label = row_threads
                    .get(base + th)
                    .cloned()
                    .unwrap_or_else(|| format!("THREAD {}.{}.{}", a + 1, t + 1, th + 1));
                locs.push(Location {
                    id: th as u64 + 1,
                    name: label,
                });
            }
            locations.push(locs);
        }
    }
    let n = locations.len() as u32;
    let mut trace = std::mem::take(&mut body.trace);
    let functions = std::mem::take(&mut trace.functions);
    let regions = std::mem::take(&mut trace.regions);
    let callpaths = std::mem::take(&mut trace.callpaths);
    trace = Trace::new("paraver", &name, n);
    trace.functions = functions;
    trace.regions = regions;
    trace.callpaths = callpaths;
    trace.meta.push(("date".into(), header.date.clone()));
    trace.meta.push(("time unit".into(), header.unit_name.into()));
    trace.meta.push((
        "end time (ns)".into(),
        header.end_time.saturating_mul(header.unit_ns).to_string(),
    ));
    trace.meta.push(("applications".into(), header.apps.len().to_string()));
    trace.meta.push((
        "MPI applications".into(),
        mpi_apps
            .iter()
            .map(|a| (a + 1).to_string())
            .collect::<Vec<_>>()
            .join(","),
    ));
    for (k, c) in body.counts.iter().enumerate().skip(1) {
        trace.meta.push((format!("records of type {k}"), c.to_string()));
    }
    for (r, locs) in locations.into_iter().enumerate() {
        trace.ranks[r].locations = locs;
    }

    // Communicators are created when a collective names them.
    let mut comm_ids: HashMap<u64, CommId> = HashMap::new();
    let mut resolve_comm = |trace: &mut Trace, id: u64, warnings: &mut Vec<String>| -> CommId {
        if let Some(&c) = comm_ids.get(&id) {
            return c;
        }
        let members: Option<Vec<Rank>> = comm_defs.get(&id).and_then(|d| {
            d.tasks
                .iter()
                .map(|&t| {
                    rank_of_task
                        .get(&((d.appl as usize).wrapping_sub(1), (t as usize).wrapping_sub(1)))
                        .copied()
                })
                .collect()
        });
        let c = match members {
            Some(m) if m == trace.comms[0].members => COMM_WORLD,
            Some(m) => trace.add_comm(&format!("comm {id}"), m),
            None => {
                warnings.push(format!(
                    "communicator {id} is not defined over the MPI tasks in the header; MPI_COMM_WORLD is used"
                ));
                COMM_WORLD
            }
        };
        comm_ids.insert(id, c);
        c
    };

    // Calls: each rank's threads merged by enter time.
    // call_index[thread][raw] = CallIdx in the owning rank.
    let mut call_index: Vec<Vec<CallIdx>> = vec![Vec::new(); body.threads.len()];
    let mut open_at_end = 0u64;
    for r in 0..n {
        let ths: Vec<usize> = (0..body.threads.len())
            .filter(|&t| owner[t].map(|o| o.0) == Some(r))
            .collect();
        let mut order: Vec<(Time, usize, usize)> = Vec::new();
        for &th in &ths {
            let d = &mut body.threads[th];
            let last = d.span.map(|s| s.1).unwrap_or(0);
            for c in d.calls.iter_mut() {
                if c.exit == Time::MAX {
                    c.exit = last.max(c.enter);
                    open_at_end += 1;
                }
            }
            // Paraver files are sorted by time; sorting keeps the lookups by time right if not.
            d.calls.sort_by_key(|c| c.enter);
            call_index[th] = vec![0; d.calls.len()];
            order.extend(d.calls.iter().enumerate().map(|(i, c)| (c.enter, th, i)));
            if let Some((a, b)) = d.span {
                trace.ranks[r as usize].extend_span(a, b);
            }
        }
        order.sort();
        for (_, th, i) in order {
            let c = body.threads[th].calls[i].clone();
            let loc = owner[th].map(|o| o.1).unwrap_or(0);
            let fname = trace.functions.name(c.func).to_owned();
            let idx = trace.push_call(r, &fname, c.enter, c.exit, c.callpath, loc);
            call_index[th][i] = idx;
            if CallKind::classify(&fname) == CallKind::Collective {
                let op = CollectiveOp::from_name(&fname).unwrap_or(CollectiveOp::Other);
                let comm = match c.coll.comm {
                    Some(id) => resolve_comm(&mut trace, id, &mut warnings),
                    None => COMM_WORLD,
                };
                let root = match c.coll.root {
                    Some(local) => u32::try_from(local)
                        .ok()
                        .and_then(|l| trace.comms[comm as usize].world_rank(l))
                        .unwrap_or(NO_ROOT),
                    None => NO_ROOT,
                };
                trace.push_collective(
                    r,
                    idx,
                    op,
                    comm,
                    root,
                    c.coll.sent.unwrap_or(0),
                    c.coll.recvd.unwrap_or(0),
                );
            }
        }
        // Counter samples, per metric, in time order.
        let mut samples: Vec<(usize, Time, f64)> = ths
            .iter()
            .flat_map(|&th| body.threads[th].samples.iter().copied())
            .collect();
        samples.sort_by_key(|s| (s.0, s.1));
        for (m, t, v) in samples {
            let metric = trace.metrics.intern(&roles.metric_names[m]);
            let rt = &mut trace.ranks[r as usize];
            if rt.metrics.last().map(|s| s.metric) != Some(metric) {
                rt.metrics.push(MetricSamples {
                    metric,
                    ..Default::default()
                });
            }
            let s = rt.metrics.last_mut().expect("pushed above");
            s.time.push(t);
            s.value.push(v);
        }
    }
    if open_at_end > 0 {
        warnings.push(format!(
            "{open_at_end} MPI calls were still open at the end of their thread's records"
        ));
    }
    if body.unmatched_leaves > 0 {
        warnings.push(format!(
            "{} MPI leave events had no matching enter (the trace was probably cut)",
            body.unmatched_leaves
        ));
    }

    attach_communications(&mut trace, &body, &owner, &call_index, &mut warnings);
    trace.normalise_order();
    trace.warnings = warnings;
    Ok(trace)
}

/// Index of the call of `calls` open at time `t` (enter ≤ t ≤ exit), preferring calls for
/// which `prefer` holds.
pub(super) fn call_at(calls: &[RawCall], t: Time, prefer: impl Fn(usize) -> bool) -> Option<usize> {
    let end = calls.partition_point(|c| c.enter <= t);
    let mut found = None;
    for i in (0..end).rev() {
        let c = &calls[i];
        if c.exit >= t {
            if prefer(i) {
                return Some(i);
            }
            found.get_or_insert(i);
        }
        // Calls on one thread do not nest across MPI types for long; stop after a few.
        if end - i > 4 {
            break;
        }
    }
    found
}

pub(super) fn attach_communications(
    trace: &mut Trace,
    body: &Body,
    owner: &[Option<(Rank, u16)>],
    call_index: &[Vec<CallIdx>],
    warnings: &mut Vec<String>,
) {
    let kind_of = |trace: &Trace, th: usize, i: usize| -> CallKind {
        let (r, _) = owner[th].expect("only rank threads are asked");
        trace.ranks[r as usize].calls.kind[call_index[th][i] as usize]
    };
    /// A point-to-point operation waiting to be appended in call order.
    struct Op {
        rank: Rank,
        post: CallIdx,
        complete: CallIdx,
        dir: P2pDir,
        peer: Rank,
        tag: i32,
        bytes: u64,
    }
    let mut ops: Vec<Op> = Vec::with_capacity(body.comms.len() * 2);
    let mut outside = 0u64;
    let mut unattached = 0u64;
    // Single-request completions already used by a receive: (thread, raw call).
    let mut claimed: std::collections::HashSet<(usize, usize)> = std::collections::HashSet::new();
    let mut sends: Vec<(usize, usize, Rank, CommRecord)> = Vec::new();
    for rec in &body.comms {
        let (Some((sr, _)), Some((rr, _))) = (owner[rec.sender], owner[rec.receiver]) else {
            outside += 1;
            continue;
        };
        // Receive side.
        let rcalls = &body.threads[rec.receiver].calls;
        let post = call_at(rcalls, rec.lrecv, |i| {
            matches!(
                kind_of(trace, rec.receiver, i),
                CallKind::Recv | CallKind::Irecv | CallKind::SendRecv
            )
        });
        let scalls = &body.threads[rec.sender].calls;
        let send_post = call_at(scalls, rec.lsend, |i| {
            matches!(
                kind_of(trace, rec.sender, i),
                CallKind::Send | CallKind::Isend | CallKind::SendRecv
            )
        });
        let (Some(post), Some(send_post)) = (post, send_post) else {
            unattached += 1;
            continue;
        };
        let post_kind = kind_of(trace, rec.receiver, post);
        let complete = if post_kind == CallKind::Irecv {
            match call_at(rcalls, rec.precv, |i| {
                kind_of(trace, rec.receiver, i) == CallKind::Completion
            }) {
                Some(w) if kind_of(trace, rec.receiver, w) == CallKind::Completion => {
                    let fname = trace.call_name(rr, call_index[rec.receiver][w]);
                    if fname == "MPI_Wait" || fname == "MPI_Test" {
                        claimed.insert((rec.receiver, w));
                    }
                    call_index[rec.receiver][w]
                }
                _ => NOT_COMPLETED,
            }
        } else {
            call_index[rec.receiver][post]
        };
        ops.push(Op {
            rank: rr,
            post: call_index[rec.receiver][post],
            complete,
            dir: P2pDir::Recv,
            peer: sr,
            tag: rec.tag,
            bytes: rec.size,
        });
        sends.push((rec.sender, send_post, rr, *rec));
    }
    // For each thread with sends, the next send-completing call at or after each call: a
    // Wait*/Test* not already claimed by a receive. Built once per thread, backwards.
    let mut next_completion: HashMap<usize, Vec<Option<usize>>> = HashMap::new();
    for (th, post, rr, rec) in sends {
        let (sr, _) = owner[th].expect("checked above");
        let complete = if kind_of(trace, th, post) == CallKind::Isend {
            let table = next_completion.entry(th).or_insert_with(|| {
                let n = body.threads[th].calls.len();
                let mut table = vec![None; n + 1];
                for i in (0..n).rev() {
                    let f = trace.call_name(sr, call_index[th][i]);
                    let completes = kind_of(trace, th, i) == CallKind::Completion
                        && !claimed.contains(&(th, i))
                        && (f.starts_with("MPI_Wait") || f.starts_with("MPI_Test"));
                    table[i] = if completes { Some(i) } else { table[i + 1] };
                }
                table
            });
            table[post + 1].map(|i| call_index[th][i]).unwrap_or(NOT_COMPLETED)
        } else {
            call_index[th][post]
        };
        ops.push(Op {
            rank: sr,
            post: call_index[th][post],
            complete,
            dir: P2pDir::Send,
            peer: rr,
            tag: rec.tag,
            bytes: rec.size,
        });
    }
    // Operations in call order; within a call (MPI_Sendrecv) the send first.
    ops.sort_by_key(|o| (o.rank, o.post, o.dir == P2pDir::Recv));
    for o in ops {
        trace.push_p2p(o.rank, o.post, o.complete, o.dir, o.peer, o.tag, COMM_WORLD, o.bytes);
    }
    if outside > 0 {
        warnings.push(format!(
            "{outside} communication records involve tasks that are not MPI ranks; skipped"
        ));
    }
    if unattached > 0 {
        warnings.push(format!(
            "{unattached} communication records fall outside any MPI call of their threads; skipped"
        ));
    }
}
