//! Runs of `MPI_Waitany` / `MPI_Waitsome` as sets: which request each call of such a run
//! completes is the order in which messages arrived (timing), not the program. LAMMPS's PPPM
//! remaps post receives from 3 or 7 partners, send, then call `MPI_Waitany` once per request;
//! recorded as completed, the completion records' back-distances change from one time step to
//! the next and no loop folds. ScalaTrace aggregates `Waitany`/`Waitsome` the same way: what a
//! run of consecutive such calls completes is kept as a set, and handed to the calls of the run
//! in posting order (each call keeps how many requests it completed). The logical trace and the
//! physical records it is checked against both see this order, so an expansion completes the
//! requests of a run in posting order; which call completed which request is not reproduced.

#[allow(unused_imports)]
use super::*;

/// Whether a function is one whose completions form sets (`MPI_Waitany`, `MPI_Waitsome`).
fn is_any_or_some(name: &str) -> bool {
    matches!(name, "MPI_Waitany" | "MPI_Waitsome")
}

/// For each point-to-point operation of `rank`, the call that completes it, with the requests a
/// run of consecutive `MPI_Waitany` / `MPI_Waitsome` calls completes handed out in posting order
/// (see the module text). A run is broken by any call that can be a record (point-to-point,
/// another completion, collective, lifecycle), not by queries such as `MPI_Wtime`. `None` when
/// the rank calls neither function (the recorded completions stand).
pub(super) fn completions_as_sets(trace: &Trace, rank: Rank) -> Option<Vec<CallIdx>> {
    let rt = trace.ranks.get(rank as usize)?;
    let calls = &rt.calls;
    let p = &rt.p2p;
    let n = calls.len();
    let set_fn: Vec<bool> = trace.functions.names().iter().map(|f| is_any_or_some(f)).collect();
    let is_set = |c: usize| {
        calls.kind[c] == CallKind::Completion && set_fn.get(calls.func[c] as usize).copied().unwrap_or(false)
    };
    if !(0..n).any(is_set) {
        return None;
    }
    // Operations completed by each call, in operation order (a CSR table).
    let mut start = vec![0u32; n + 1];
    for &c in &p.complete {
        if c != NOT_COMPLETED && (c as usize) < n {
            start[c as usize + 1] += 1;
        }
    }
    for c in 0..n {
        start[c + 1] += start[c];
    }
    let mut done = vec![0u32; start[n] as usize];
    let mut fill = start.clone();
    for (i, &c) in p.complete.iter().enumerate() {
        if c != NOT_COMPLETED && (c as usize) < n {
            done[fill[c as usize] as usize] = i as u32;
            fill[c as usize] += 1;
        }
    }
    let mut complete = p.complete.clone();
    let mut c = 0;
    while c < n {
        if !is_set(c) {
            c += 1;
            continue;
        }
        // The run: set calls, and between them calls that are never records.
        let mut members: Vec<usize> = Vec::new();
        let mut e = c;
        while e < n {
            if is_set(e) {
                members.push(e);
            } else if calls.kind[e].is_p2p()
                || matches!(
                    calls.kind[e],
                    CallKind::Completion | CallKind::Collective | CallKind::Lifecycle
                )
            {
                break;
            }
            e += 1;
        }
        if members.len() > 1 {
            let mut ops: Vec<u32> = members
                .iter()
                .flat_map(|&m| done[start[m] as usize..start[m + 1] as usize].iter().copied())
                .collect();
            ops.sort_unstable_by_key(|&i| (p.post[i as usize], i));
            let mut next = ops.into_iter();
            for &m in &members {
                for _ in start[m]..start[m + 1] {
                    if let Some(i) = next.next() {
                        complete[i as usize] = m as CallIdx;
                    }
                }
            }
        }
        c = e;
    }
    Some(complete)
}
