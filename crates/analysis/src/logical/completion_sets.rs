//! Runs of completion calls as one record: which request each `MPI_Waitsome` / `MPI_Testsome` /
//! `MPI_Waitany` / `MPI_Testany` / `MPI_Test` of a polling loop completes, and how many such
//! calls the loop needs, is the order and the moment messages arrived (timing), not the program.
//! LAMMPS's PPPM remaps post receives from 3 or 7 partners, send, then call `MPI_Waitany` once
//! per request in an order that changes every step; Meep completes its halo messages with a
//! `MPI_Waitsome` loop of 1 to several calls per exchange. Kept call by call, no two time steps
//! are equal and nothing folds. ScalaTrace aggregates such calls the same way: a run of
//! consecutive completion calls of these functions (only calls that are never records, such as
//! `MPI_Wtime` or a poll completing nothing, between them) is **one completion record** of the
//! requests the run completed ("complete these requests", as a `MPI_Waitall` of them), carrying
//! the number of calls of the run that completed a request ([`LogicalCall::calls`], a per-visit
//! value of loop compression). Which call completed which request is not reproduced.

#[allow(unused_imports)]
use super::*;

/// Whether a function is one whose completions form sets.
fn is_set_function(name: &str) -> bool {
    matches!(
        name,
        "MPI_Waitany" | "MPI_Waitsome" | "MPI_Testany" | "MPI_Testsome" | "MPI_Test"
    )
}

/// The function a run's record is named by, when its calls are of several functions: the first
/// of these present (a blocking call ends most polling loops).
const RUN_FUNCTIONS: [&str; 5] = ["MPI_Waitsome", "MPI_Waitany", "MPI_Testsome", "MPI_Testany", "MPI_Test"];

/// One run of completion calls (see the module text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CompletionRun {
    /// Its first and last call.
    pub first: CallIdx,
    pub last: CallIdx,
    /// Calls of the run that completed at least one request.
    pub calls: u64,
    /// The function of its record.
    pub function: String,
}

/// A rank's completion runs: every operation completed by a run handed to the run's first call
/// (`complete`, the model's [`tracelogic_model::P2p::complete`] otherwise), and the runs in call
/// order.
#[derive(Debug, Clone, Default)]
pub(super) struct CompletionRuns {
    pub complete: Vec<CallIdx>,
    pub runs: Vec<CompletionRun>,
}

/// Where a call stands with respect to the completion runs ([`CompletionRuns::at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RunPosition<'a> {
    /// The first call of this run: the call of its record.
    Starts(&'a CompletionRun),
    /// Another call of a run (part of the run's record).
    Inside,
    /// In no run.
    Outside,
}

impl CompletionRuns {
    /// Where call `c` stands, reading `runs` with a cursor `next` (calls asked in increasing
    /// order).
    pub fn at(&self, c: CallIdx, next: &mut usize) -> RunPosition<'_> {
        while self.runs.get(*next).is_some_and(|r| r.last < c) {
            *next += 1;
        }
        match self.runs.get(*next) {
            Some(r) if r.first == c => RunPosition::Starts(r),
            Some(r) if r.first < c => RunPosition::Inside,
            _ => RunPosition::Outside,
        }
    }
}

/// The completion runs of `rank` (see the module text). A run is broken by any call that can be
/// a record (point-to-point, another completion such as `MPI_Wait` or `MPI_Waitall`,
/// collective, lifecycle), not by queries such as `MPI_Wtime`. `None` when the rank calls none
/// of the functions (the recorded completions stand).
pub(super) fn completion_runs(trace: &Trace, rank: Rank) -> Option<CompletionRuns> {
    let rt = trace.ranks.get(rank as usize)?;
    let calls = &rt.calls;
    let p = &rt.p2p;
    let n = calls.len();
    let set_fn: Vec<bool> = trace.functions.names().iter().map(|f| is_set_function(f)).collect();
    let is_set = |c: usize| {
        calls.kind[c] == CallKind::Completion && set_fn.get(calls.func[c] as usize).copied().unwrap_or(false)
    };
    if !(0..n).any(is_set) {
        return None;
    }
    // Whether each call completed an operation it did not post.
    let mut completes_some = vec![false; n];
    for (i, c) in p.completes().enumerate() {
        if c != NOT_COMPLETED && (c as usize) < n && c != p.post[i] {
            completes_some[c as usize] = true;
        }
    }
    // The run of each call in a run (its index in `runs`).
    let mut run_of: Vec<u32> = vec![u32::MAX; n];
    let mut runs: Vec<CompletionRun> = Vec::new();
    let mut c = 0;
    while c < n {
        if !is_set(c) {
            c += 1;
            continue;
        }
        // The run: set calls, and between them calls that are never records.
        let (mut e, mut last) = (c, c);
        let mut counted = 0u64;
        let mut functions = [false; RUN_FUNCTIONS.len()];
        while e < n {
            if is_set(e) {
                last = e;
                run_of[e] = runs.len() as u32;
                if completes_some[e] {
                    counted += 1;
                    let name = trace.functions.name(calls.func[e]);
                    if let Some(k) = RUN_FUNCTIONS.iter().position(|&f| f == name) {
                        functions[k] = true;
                    }
                }
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
        let function = functions.iter().position(|&f| f).map_or_else(
            || trace.functions.name(calls.func[c]).to_owned(),
            |k| RUN_FUNCTIONS[k].to_owned(),
        );
        runs.push(CompletionRun {
            first: c as CallIdx,
            last: last as CallIdx,
            calls: counted,
            function,
        });
        c = e;
    }
    let complete = p
        .completes()
        .map(|c| match run_of.get(c as usize) {
            Some(&k) if k != u32::MAX => runs[k as usize].first,
            _ => c,
        })
        .collect();
    Some(CompletionRuns { complete, runs })
}
