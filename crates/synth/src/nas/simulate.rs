//! Running the programs under the clock model: every rank's calls timed and written.

use super::*;

/// Counts the simulation gathers while writing the trace.
pub(super) struct Stats {
    pub(super) messages: u64,
    pub(super) bytes: u64,
}

/// A request of one process.
#[derive(Debug, Clone, Copy)]
pub(super) enum Request {
    /// Not posted yet, or already completed.
    Idle,
    /// A send: its operation index on the rank.
    Send(usize),
    /// A receive: message key, its sequence number on the key, its operation index.
    Recv(MsgKey, u32, usize),
}

/// Sender, receiver (NAS processes), tag, communicator index.
type MsgKey = (u32, u32, i32, u32);

/// Where a blocked process stands in its current step.
#[derive(Debug, Clone, Copy)]
pub(super) enum Blocked {
    /// A blocking receive waiting for message `seq` on its key.
    Recv(u32),
    /// A collective (or `MPI_Finalize`): its instance on the communicator and the entry time.
    Collective(u32, Time),
}

pub(super) struct ProcState {
    pc: usize,
    now: Time,
    requests: Vec<Request>,
    blocked: Option<Blocked>,
    collectives_done: HashMap<u32, u32>,
}

/// A collective instance's arrivals.
#[derive(Default)]
pub(super) struct Meeting {
    arrived: u32,
    last_entry: Time,
}

pub(super) fn simulate(
    trace: &mut Trace,
    programs: &[Program],
    rank_of_process: &[Rank],
    comm_ids: &[u32],
    clock: Clock,
) -> Result<Stats, String> {
    let n = programs.len();
    let transfer = |bytes: u64| (bytes as f64 / clock.bandwidth).ceil() as Time;
    let o = clock.overhead_ns;
    let mut state: Vec<ProcState> = programs
        .iter()
        .map(|p| ProcState {
            pc: 0,
            now: 0,
            requests: vec![Request::Idle; p.requests as usize],
            blocked: None,
            collectives_done: HashMap::new(),
        })
        .collect();
    // Per message key: (send entry time, bytes) of every send so far, and receives posted.
    let mut sent: HashMap<MsgKey, Vec<(Time, u64)>> = HashMap::new();
    let mut posted: HashMap<MsgKey, u32> = HashMap::new();
    let mut meetings: HashMap<(u32, u32), Meeting> = HashMap::new();
    let mut stats = Stats { messages: 0, bytes: 0 };
    let rounds = (n as u64).next_power_of_two().trailing_zeros() as u64;
    let mut finished = 0usize;
    let mut forward = true;
    while finished < n {
        let mut progressed = false;
        let order: Vec<usize> = if forward {
            (0..n).collect()
        } else {
            (0..n).rev().collect()
        };
        forward = !forward;
        for p in order {
            let prog = &programs[p];
            let r = rank_of_process[p];
            loop {
                let st = &mut state[p];
                let Some(step) = prog.steps.get(st.pc) else { break };
                match step {
                    Step::Compute(ns) => st.now += ns,
                    Step::Plain(f) => {
                        let t = st.now;
                        trace.push_call(r, f, t, t + o, NO_CALLPATH, 0);
                        st.now = t + o;
                    }
                    &Step::Post {
                        func,
                        dir,
                        peer,
                        tag,
                        comm,
                        bytes,
                        req,
                    } => {
                        let t = st.now;
                        let peer_rank = rank_of_process[peer as usize];
                        match dir {
                            P2pDir::Send => {
                                let key = (p as u32, peer, tag, comm);
                                sent.entry(key).or_default().push((t, bytes));
                                let exit = t + o + transfer(bytes);
                                let c = trace.push_call(r, func, t, exit, NO_CALLPATH, 0);
                                let op = trace.ranks[r as usize].p2p.len();
                                let complete = if req.is_some() { NOT_COMPLETED } else { c };
                                trace.push_p2p(r, c, complete, dir, peer_rank, tag, comm_ids[comm as usize], bytes);
                                if let Some(q) = req {
                                    st.requests[q as usize] = Request::Send(op);
                                }
                                stats.messages += 1;
                                stats.bytes += bytes;
                                st.now = exit;
                            }
                            P2pDir::Recv => {
                                let key = (peer, p as u32, tag, comm);
                                if let Some(q) = req {
                                    let seq = posted.entry(key).or_insert(0);
                                    let c = trace.push_call(r, func, t, t + o, NO_CALLPATH, 0);
                                    let op = trace.ranks[r as usize].p2p.len();
                                    trace.push_p2p(
                                        r,
                                        c,
                                        NOT_COMPLETED,
                                        dir,
                                        peer_rank,
                                        tag,
                                        comm_ids[comm as usize],
                                        bytes,
                                    );
                                    st.requests[q as usize] = Request::Recv(key, *seq, op);
                                    *seq += 1;
                                    st.now = t + o;
                                } else {
                                    let seq = match st.blocked {
                                        Some(Blocked::Recv(s)) => s,
                                        _ => {
                                            let s = posted.entry(key).or_insert(0);
                                            *s += 1;
                                            *s - 1
                                        }
                                    };
                                    let Some(&(sent_at, actual)) = sent.get(&key).and_then(|v| v.get(seq as usize))
                                    else {
                                        st.blocked = Some(Blocked::Recv(seq));
                                        break;
                                    };
                                    st.blocked = None;
                                    let exit = (sent_at + clock.latency_ns + transfer(actual)).max(t) + o;
                                    let c = trace.push_call(r, func, t, exit, NO_CALLPATH, 0);
                                    trace.push_p2p(r, c, c, dir, peer_rank, tag, comm_ids[comm as usize], actual);
                                    st.now = exit;
                                }
                            }
                        }
                    }
                    Step::Wait { func, reqs } => {
                        let t = st.now;
                        let mut ready = t;
                        let mut all_there = true;
                        for &q in reqs {
                            if let Request::Recv(key, seq, _) = st.requests[q as usize] {
                                match sent.get(&key).and_then(|v| v.get(seq as usize)) {
                                    Some(&(sent_at, actual)) => {
                                        ready = ready.max(sent_at + clock.latency_ns + transfer(actual));
                                    }
                                    None => all_there = false,
                                }
                            }
                        }
                        if !all_there {
                            break;
                        }
                        let exit = ready + o;
                        let c = trace.push_call(r, func, t, exit, NO_CALLPATH, 0);
                        let rt = &mut trace.ranks[r as usize];
                        for &q in reqs {
                            match st.requests[q as usize] {
                                Request::Send(op) => rt.p2p.set_complete(op, c),
                                Request::Recv(key, seq, op) => {
                                    rt.p2p.set_complete(op, c);
                                    rt.p2p.bytes.set(op, sent[&key][seq as usize].1);
                                }
                                Request::Idle => {}
                            }
                            st.requests[q as usize] = Request::Idle;
                        }
                        st.now = exit;
                    }
                    step @ (Step::Collective { .. } | Step::Finalize) => {
                        let (comm, bytes) = match step {
                            Step::Collective { comm, bytes, .. } => (*comm, *bytes),
                            _ => (WORLD, 0),
                        };
                        let (instance, entry) = match st.blocked {
                            Some(Blocked::Collective(i, e)) => (i, e),
                            _ => {
                                let done = st.collectives_done.entry(comm).or_insert(0);
                                let i = *done;
                                *done += 1;
                                let m = meetings.entry((comm, i)).or_default();
                                m.arrived += 1;
                                m.last_entry = m.last_entry.max(st.now);
                                (i, st.now)
                            }
                        };
                        let m = &meetings[&(comm, instance)];
                        if (m.arrived as usize) < n {
                            st.blocked = Some(Blocked::Collective(instance, entry));
                            break;
                        }
                        st.blocked = None;
                        let exit = match step {
                            Step::Finalize => m.last_entry + o,
                            _ => m.last_entry + o + rounds * (clock.latency_ns + transfer(bytes)),
                        };
                        match *step {
                            Step::Collective { op, root, .. } => {
                                let c = trace.push_call(r, op.mpi_name(), entry, exit, NO_CALLPATH, 0);
                                let root_rank = root.map_or(NO_ROOT, |x| rank_of_process[x as usize]);
                                let (s, v) = match op {
                                    CollectiveOp::Barrier => (0, 0),
                                    CollectiveOp::Bcast if root_rank == r => (bytes, 0),
                                    CollectiveOp::Bcast => (0, bytes),
                                    CollectiveOp::Reduce if root_rank == r => (bytes, bytes),
                                    CollectiveOp::Reduce => (bytes, 0),
                                    _ => (bytes, bytes),
                                };
                                trace.push_collective(r, c, op, comm_ids[comm as usize], root_rank, s, v);
                            }
                            _ => {
                                trace.push_call(r, "MPI_Finalize", entry, exit, NO_CALLPATH, 0);
                            }
                        }
                        st.now = exit;
                    }
                }
                let st = &mut state[p];
                st.pc += 1;
                progressed = true;
                if st.pc == prog.steps.len() {
                    finished += 1;
                }
            }
        }
        if !progressed && finished < n {
            let stuck: Vec<String> = (0..n)
                .filter(|&p| state[p].pc < programs[p].steps.len())
                .take(4)
                .map(|p| {
                    format!(
                        "process {p} at step {} ({:?})",
                        state[p].pc, programs[p].steps[state[p].pc]
                    )
                })
                .collect();
            return Err(format!("internal error: the skeleton deadlocks: {}", stuck.join("; ")));
        }
    }
    Ok(stats)
}
