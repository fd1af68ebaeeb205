//! Selections of calls and messages (thesis ch. 3, §3.5.2): by ranks, time window, message
//! size, call kind and the communicators the calls are made on. Every analysis accepts a
//! [`Selection`].
//!
//! A selection is plain data; the `selects_*` methods decide membership for one call or
//! operation, [`fan_in_out`] aggregates what the selected ranks send and receive, and the
//! `parse_*` functions read the command-line syntax (`0-3,7`, `send,isend,collective`,
//! `1.5s`, `64Ki`).

use crate::{CallIdx, CallKind, CommId, P2pDir, Rank, RankTrace, Time, Trace, ANY_SOURCE};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Which part of a trace to look at. The default selects everything.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// Only these world ranks (`None` = all).
    pub ranks: Option<Vec<Rank>>,
    /// Only ranks that are members of this communicator (intersected with `ranks`).
    #[serde(default)]
    pub comm: Option<CommId>,
    /// Only calls entered at or after this time.
    pub from: Option<Time>,
    /// Only calls entered before this time.
    pub to: Option<Time>,
    /// Only operations of at least this many bytes.
    pub min_bytes: Option<u64>,
    /// Only operations of at most this many bytes.
    pub max_bytes: Option<u64>,
    /// Only calls of these kinds (`None` = all).
    pub kinds: Option<Vec<CallKind>>,
    /// Only calls made on these communicators (`None` = all): point-to-point operations and
    /// collectives by the communicator they name. A call that posts no operation (`MPI_Wait*`,
    /// `MPI_Init`, the communicator-management calls, whose communicator the model does not
    /// record) is not selected by itself; [`Trace::restrict`] keeps the completions of the
    /// operations it keeps. Unlike `comm`, which keeps everything the member ranks do, this
    /// keeps the calls of one decomposition when a program runs two on the same ranks.
    /// Always serialised (the page and its worker exchange selections with bincode, which
    /// cannot skip fields).
    #[serde(default)]
    pub on_comms: Option<Vec<CommId>>,
}

impl Selection {
    /// The selection of everything (same as `Selection::default()`).
    pub fn all() -> Selection {
        Selection::default()
    }

    /// True when `rank` is in the rank list (if any) and a member of the communicator (if any).
    pub fn selects_rank(&self, trace: &Trace, rank: Rank) -> bool {
        if let Some(ranks) = &self.ranks {
            if !ranks.contains(&rank) {
                return false;
            }
        }
        match self.comm {
            None => true,
            Some(c) => trace.comms.get(c as usize).is_some_and(|c| c.members.contains(&rank)),
        }
    }

    /// True when time `t` is inside the window `[from, to)`.
    pub fn selects_time(&self, t: Time) -> bool {
        self.from.is_none_or(|f| t >= f) && self.to.is_none_or(|e| t < e)
    }

    /// True when a size of `bytes` is inside `[min_bytes, max_bytes]`.
    pub fn selects_bytes(&self, bytes: u64) -> bool {
        self.min_bytes.is_none_or(|m| bytes >= m) && self.max_bytes.is_none_or(|m| bytes <= m)
    }

    /// True when `kind` is one of the selected call kinds.
    pub fn selects_kind(&self, kind: CallKind) -> bool {
        self.kinds.as_ref().is_none_or(|k| k.contains(&kind))
    }

    /// True when an operation on communicator `comm` is selected by `on_comms`.
    pub fn selects_on_comm(&self, comm: CommId) -> bool {
        self.on_comms.as_ref().is_none_or(|c| c.contains(&comm))
    }

    /// True when call `call` of `rt` posts a point-to-point or collective operation on one of
    /// the `on_comms` (always true without them).
    fn posts_on_selected_comm(&self, rt: &RankTrace, call: CallIdx) -> bool {
        if self.on_comms.is_none() {
            return true;
        }
        let p = &rt.p2p;
        let a = p.post.partition_point(|&c| c < call);
        let b = p.post.partition_point(|&c| c <= call);
        let co = &rt.collectives;
        let x = co.call.partition_point(|&c| c < call);
        let y = co.call.partition_point(|&c| c <= call);
        (a..b)
            .map(|i| p.comm[i])
            .chain((x..y).map(|i| co.comm[i]))
            .any(|c| self.selects_on_comm(c))
    }

    /// True when call `call` of `rank` is selected: selected rank, entered inside the window,
    /// of a selected kind, and — when size bounds are set — moving a size inside them. The size
    /// of a call is the largest of its point-to-point operations and collective buffers; a
    /// call that moves no data (`MPI_Wait`, `MPI_Barrier`...) has size 0. Out-of-range indices
    /// are not selected.
    pub fn selects_call(&self, trace: &Trace, rank: Rank, call: CallIdx) -> bool {
        trace
            .ranks
            .get(rank as usize)
            .is_some_and(|rt| self.selects_rank(trace, rank) && self.selects_call_of(rt, call))
    }

    /// True when point-to-point operation `op` of `rank` is selected: selected rank, posting
    /// call entered inside the window and of a selected kind, size inside the bounds.
    pub fn selects_p2p(&self, trace: &Trace, rank: Rank, op: usize) -> bool {
        trace
            .ranks
            .get(rank as usize)
            .is_some_and(|rt| self.selects_rank(trace, rank) && self.selects_p2p_of(rt, op))
    }

    /// True when collective operation `op` of `rank` is selected: selected rank, call entered
    /// inside the window and of a selected kind, larger of its two buffers inside the bounds.
    pub fn selects_collective(&self, trace: &Trace, rank: Rank, op: usize) -> bool {
        trace
            .ranks
            .get(rank as usize)
            .is_some_and(|rt| self.selects_rank(trace, rank) && self.selects_collective_of(rt, op))
    }

    /// [`Selection::selects_call`] on one rank's trace, the rank itself taken as selected (so a
    /// whole rank is filtered without looking its rank up once per call).
    pub fn selects_call_of(&self, rt: &RankTrace, call: CallIdx) -> bool {
        self.selects_call_sized(rt, call, || rank_call_bytes(rt, call))
    }

    /// [`Selection::selects_call_of`] with the call's size (see [`call_bytes`]) given by `size`,
    /// which is asked only when size bounds are set: a whole rank is filtered with sizes
    /// computed in one pass ([`rank_calls_bytes`]) instead of a search per call.
    pub fn selects_call_sized(&self, rt: &RankTrace, call: CallIdx, size: impl FnOnce() -> u64) -> bool {
        let c = &rt.calls;
        let i = call as usize;
        if i >= c.len()
            || !self.selects_time(c.enter(i))
            || !self.selects_kind(c.kind[i])
            || !self.posts_on_selected_comm(rt, call)
        {
            return false;
        }
        if self.min_bytes.is_none() && self.max_bytes.is_none() {
            return true;
        }
        self.selects_bytes(size())
    }

    /// [`Selection::selects_p2p`] on one rank's trace, the rank itself taken as selected.
    pub fn selects_p2p_of(&self, rt: &RankTrace, op: usize) -> bool {
        op < rt.p2p.len()
            && self.selects_on_comm(rt.p2p.comm[op])
            && self.selects_bytes(rt.p2p.bytes.at(op))
            && self.selects_posting_call(rt, rt.p2p.post[op])
    }

    /// [`Selection::selects_collective`] on one rank's trace, the rank itself taken as selected.
    pub fn selects_collective_of(&self, rt: &RankTrace, op: usize) -> bool {
        let co = &rt.collectives;
        op < co.len()
            && self.selects_on_comm(co.comm[op])
            && self.selects_bytes(co.bytes_sent[op].max(co.bytes_recv[op]))
            && self.selects_posting_call(rt, co.call[op])
    }

    /// [`Selection::check_against`] for `trace`: its ranks and the length of its run (first to
    /// last event). The selection's times must still be relative to the trace's first event.
    pub fn check(&self, trace: &Trace, words: FieldWords) -> Result<Option<String>, String> {
        let (start, end) = trace.span();
        self.check_against(Some(trace.num_ranks()), Some(end.saturating_sub(start)), words)
    }

    /// Whether this selection, its times relative to the trace's first event, can be applied to
    /// a trace of `ranks` ranks whose run lasts `length` ns: the CLI and the web page refuse and
    /// note the same selections with the same words. `Err` for one that cannot be applied (a
    /// rank the trace does not have, `from` later than `to`, a minimum size above the maximum);
    /// `Ok(Some(why))` for one that starts after the end of the run, so keeps no call, which is
    /// applied with a note; `Ok(None)` otherwise. `None` for `ranks` or `length` skips the
    /// checks that need it (a page that does not know the trace's size yet).
    pub fn check_against(
        &self,
        ranks: Option<u32>,
        length: Option<Time>,
        words: FieldWords,
    ) -> Result<Option<String>, String> {
        if let Some(n) = ranks {
            if let Some(bad) = self.ranks.iter().flatten().find(|&&r| r >= n) {
                return Err(format!(
                    "{}: rank {bad} is not in the trace (it has {n} rank{}, 0-{})",
                    words.name("ranks"),
                    if n == 1 { "" } else { "s" },
                    n.saturating_sub(1)
                ));
            }
        }
        if let (Some(f), Some(t)) = (self.from, self.to) {
            if f > t {
                return Err(format!("{} is later than {}", words.name("from"), words.name("to")));
            }
        }
        if let (Some(a), Some(b)) = (self.min_bytes, self.max_bytes) {
            if a > b {
                return Err(format!(
                    "{} is larger than {}",
                    words.name("min-bytes"),
                    words.name("max-bytes")
                ));
            }
        }
        let Some(length) = length else { return Ok(None) };
        Ok(self.from.filter(|&f| f > length).map(|f| {
            format!(
                "{} {} s is after the end of the run, which lasts {} s",
                words.name("from"),
                words.seconds(f),
                words.seconds(length)
            )
        }))
    }

    fn selects_posting_call(&self, rt: &RankTrace, call: CallIdx) -> bool {
        let c = &rt.calls;
        let i = call as usize;
        i < c.len() && self.selects_time(c.enter(i)) && self.selects_kind(c.kind[i])
    }
}

/// How [`Selection::check_against`] names the selection's fields and writes times: as the
/// CLI's flags or as the web page's form labels, so each says what its user typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FieldWords {
    /// `--ranks`, `--min-bytes`; seconds to the microsecond (`5.000000`), as the CLI's tables.
    Flags,
    /// `ranks`, `min bytes`; seconds without trailing zeros (`5`, `0.982`).
    Labels,
}

impl FieldWords {
    fn name(self, flag: &str) -> String {
        match self {
            FieldWords::Flags => format!("--{flag}"),
            FieldWords::Labels => flag.replace('-', " "),
        }
    }

    fn seconds(self, ns: Time) -> String {
        let fixed = format!("{:.6}", ns as f64 * 1e-9);
        match self {
            FieldWords::Flags => fixed,
            FieldWords::Labels => fixed.trim_end_matches('0').trim_end_matches('.').to_owned(),
        }
    }
}

/// The data a call moves: the largest of the point-to-point operations it posted and of its
/// collective buffers (0 when it moves none).
pub fn call_bytes(trace: &Trace, rank: Rank, call: CallIdx) -> u64 {
    trace.ranks.get(rank as usize).map_or(0, |rt| rank_call_bytes(rt, call))
}

/// [`call_bytes`] of call `call` of one rank's trace.
pub fn rank_call_bytes(rt: &RankTrace, call: CallIdx) -> u64 {
    let p = &rt.p2p;
    let a = p.post.partition_point(|&c| c < call);
    let b = p.post.partition_point(|&c| c <= call);
    let p2p = p.bytes.range(a..b).max().unwrap_or(0);
    let co = &rt.collectives;
    let a = co.call.partition_point(|&c| c < call);
    let b = co.call.partition_point(|&c| c <= call);
    let coll = (a..b)
        .map(|i| co.bytes_sent[i].max(co.bytes_recv[i]))
        .max()
        .unwrap_or(0);
    p2p.max(coll)
}

/// [`rank_call_bytes`] of every call of one rank, in one pass over its operations.
pub fn rank_calls_bytes(rt: &RankTrace) -> Vec<u64> {
    let mut bytes = vec![0u64; rt.calls.len()];
    let p = &rt.p2p;
    for (&call, b) in p.post.iter().zip(&p.bytes) {
        if let Some(slot) = bytes.get_mut(call as usize) {
            *slot = (*slot).max(b);
        }
    }
    let co = &rt.collectives;
    for ((&call, &sent), &recv) in co.call.iter().zip(&co.bytes_sent).zip(&co.bytes_recv) {
        if let Some(slot) = bytes.get_mut(call as usize) {
            *slot = (*slot).max(sent.max(recv));
        }
    }
    bytes
}

/// What one rank sends and receives inside a selection.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankFan {
    /// World rank.
    pub rank: Rank,
    /// Bytes of its selected point-to-point sends.
    pub p2p_bytes_out: u64,
    /// Bytes of its selected point-to-point receives.
    pub p2p_bytes_in: u64,
    /// Bytes it contributed to selected collectives (send buffers).
    pub collective_bytes_out: u64,
    /// Bytes it received from selected collectives (receive buffers).
    pub collective_bytes_in: u64,
    /// Fan-out: `p2p_bytes_out + collective_bytes_out`.
    pub bytes_out: u64,
    /// Fan-in: `p2p_bytes_in + collective_bytes_in`.
    pub bytes_in: u64,
    /// Selected point-to-point send operations.
    pub messages_out: u64,
    /// Selected point-to-point receive operations.
    pub messages_in: u64,
    /// Distinct ranks it sent to.
    pub peers_out: u32,
    /// Distinct ranks it received from (wildcard receives that were never resolved excluded).
    pub peers_in: u32,
}

/// Fan-in and fan-out of every selected rank, in rank order. Each rank's figures come from its
/// own operations (sends for fan-out, receives for fan-in), so they follow the selection's time
/// window, kinds and sizes on that rank.
pub fn fan_in_out(trace: &Trace, selection: &Selection) -> Vec<RankFan> {
    let mut out = Vec::new();
    for rt in &trace.ranks {
        let rank = rt.rank;
        if !selection.selects_rank(trace, rank) {
            continue;
        }
        let mut f = RankFan {
            rank,
            ..Default::default()
        };
        let mut peers_out = BTreeSet::new();
        let mut peers_in = BTreeSet::new();
        let p = &rt.p2p;
        for i in 0..p.len() {
            if !selection.selects_p2p(trace, rank, i) {
                continue;
            }
            match p.dir[i] {
                P2pDir::Send => {
                    f.p2p_bytes_out = f.p2p_bytes_out.saturating_add(p.bytes.at(i));
                    f.messages_out += 1;
                    peers_out.insert(p.peer[i]);
                }
                P2pDir::Recv => {
                    f.p2p_bytes_in = f.p2p_bytes_in.saturating_add(p.bytes.at(i));
                    f.messages_in += 1;
                    if p.peer[i] != ANY_SOURCE {
                        peers_in.insert(p.peer[i]);
                    }
                }
            }
        }
        let co = &rt.collectives;
        for i in 0..co.len() {
            if selection.selects_collective(trace, rank, i) {
                f.collective_bytes_out += co.bytes_sent[i];
                f.collective_bytes_in += co.bytes_recv[i];
            }
        }
        f.bytes_out = f.p2p_bytes_out + f.collective_bytes_out;
        f.bytes_in = f.p2p_bytes_in + f.collective_bytes_in;
        f.peers_out = peers_out.len() as u32;
        f.peers_in = peers_in.len() as u32;
        out.push(f);
    }
    out
}

/// Largest number of ranks one `parse_ranks` range may name, so `0-4000000000` is refused
/// instead of allocating gigabytes.
pub const MAX_RANKS_IN_LIST: u64 = 1 << 24;

/// Parse a rank list such as `3`, `0-3,7` or `0-1,4-5`: comma-separated single ranks and
/// inclusive ranges. Returns the ranks sorted without duplicates.
pub fn parse_ranks(text: &str) -> Result<Vec<Rank>, String> {
    let mut ranks = BTreeSet::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!("empty item in rank list `{text}`"));
        }
        let num = |s: &str| -> Result<Rank, String> {
            s.trim()
                .parse::<Rank>()
                .map_err(|_| format!("`{}` is not a rank (a non-negative integer) in `{text}`", s.trim()))
        };
        match part.split_once('-') {
            None => {
                ranks.insert(num(part)?);
            }
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("range `{part}` runs backwards"));
                }
                if (b - a) as u64 + ranks.len() as u64 >= MAX_RANKS_IN_LIST {
                    return Err(format!("range `{part}` names more than {MAX_RANKS_IN_LIST} ranks"));
                }
                ranks.extend(a..=b);
            }
        }
    }
    Ok(ranks.into_iter().collect())
}

/// Consecutive ranks joined into inclusive runs `[first, last]`: `[0, 1, 2, 3, 8]` gives
/// `[[0, 3], [8, 8]]`. `ranks` ascending without duplicates (a [`parse_ranks`] result, a
/// `BTreeSet`'s keys).
///
/// ```
/// use tracelogic_model::query::{parse_ranks, rank_runs, rank_runs_text};
/// let runs = rank_runs([0, 1, 2, 3, 8, 10, 11]);
/// assert_eq!(runs, vec![[0, 3], [8, 8], [10, 11]]);
/// assert_eq!(rank_runs_text(&runs), "0-3, 8, 10-11");
/// // The text is a rank list `--ranks` reads back.
/// assert_eq!(parse_ranks(&rank_runs_text(&runs)).unwrap(), vec![0, 1, 2, 3, 8, 10, 11]);
/// ```
pub fn rank_runs(ranks: impl IntoIterator<Item = Rank>) -> Vec<[Rank; 2]> {
    let mut runs: Vec<[Rank; 2]> = Vec::new();
    for r in ranks {
        match runs.last_mut() {
            Some(last) if last[1].checked_add(1) == Some(r) => last[1] = r,
            _ => runs.push([r, r]),
        }
    }
    runs
}

/// Runs of ranks ([`rank_runs`]) as a rank list: `0-3, 8, 10-11`.
pub fn rank_runs_text(runs: &[[Rank; 2]]) -> String {
    runs.iter()
        .map(|&[a, b]| if a == b { a.to_string() } else { format!("{a}-{b}") })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parse one call-kind name: `send`, `isend`, `recv`, `irecv`, `sendrecv`, `completion` (or
/// `wait`), `probe`, `collective`, `communicator`, `lifecycle`, `other`. `p2p` stands for the
/// five point-to-point kinds, hence the `Vec`.
pub fn parse_kind(name: &str) -> Result<Vec<CallKind>, String> {
    use CallKind::*;
    Ok(match name.trim().to_ascii_lowercase().as_str() {
        "send" => vec![Send],
        "isend" => vec![Isend],
        "recv" => vec![Recv],
        "irecv" => vec![Irecv],
        "sendrecv" => vec![SendRecv],
        "completion" | "wait" => vec![Completion],
        "probe" => vec![Probe],
        "collective" => vec![Collective],
        "communicator" | "comm" => vec![Communicator],
        "lifecycle" => vec![Lifecycle],
        "other" => vec![Other],
        "p2p" => vec![Send, Isend, Recv, Irecv, SendRecv],
        other => {
            return Err(format!(
                "unknown call kind `{other}` (expected send, isend, recv, irecv, sendrecv, p2p, completion, \
                 probe, collective, communicator, lifecycle, other)"
            ))
        }
    })
}

/// Parse a comma-separated list of call kinds (see [`parse_kind`]), sorted without duplicates.
pub fn parse_kinds(text: &str) -> Result<Vec<CallKind>, String> {
    let mut kinds = BTreeSet::new();
    for part in text.split(',') {
        kinds.extend(parse_kind(part)?);
    }
    Ok(kinds.into_iter().collect())
}

/// Parse a duration with a unit — `1.5s`, `200ms`, `300us` (or `µs`), `10ns` — into
/// nanoseconds. `0` needs no unit. Fractions below a nanosecond are truncated.
pub fn parse_time(text: &str) -> Result<Time, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale: u64 = match unit.trim() {
        "s" => 1_000_000_000,
        "ms" => 1_000_000,
        "us" | "µs" => 1_000,
        "ns" => 1,
        "" if !number.is_empty() && number.chars().all(|c| c == '0' || c == '.') => 1,
        "" => return Err(format!("time `{t}` needs a unit: s, ms, us or ns (e.g. `1.5s`)")),
        u => return Err(format!("unknown time unit `{u}` in `{t}` (expected s, ms, us or ns)")),
    };
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(format!("`{t}` is not a time (e.g. `1.5s`, `200ms`)"));
    }
    let whole: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| format!("`{t}` is not a time"))?
    };
    let mut ns = whole
        .checked_mul(scale)
        .ok_or_else(|| format!("time `{t}` is too large"))?;
    // Decimal fraction scaled exactly, digit by digit, without floating point.
    let mut place = scale;
    for d in frac.chars() {
        place /= 10;
        if place == 0 {
            break;
        }
        ns = ns
            .checked_add(d.to_digit(10).unwrap_or(0) as u64 * place)
            .ok_or_else(|| format!("time `{t}` is too large"))?;
    }
    Ok(ns)
}

/// Parse a byte count: a plain integer, optionally followed by `k`/`M`/`G` (powers of 1000) or
/// `Ki`/`Mi`/`Gi` (powers of 1024), with an optional trailing `B`.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim();
    let unit = unit.strip_suffix('B').unwrap_or(unit);
    let scale: u64 = match unit {
        "" => 1,
        "k" | "K" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        u => {
            return Err(format!(
                "unknown size unit `{u}` in `{t}` (expected k, M, G, Ki, Mi or Gi)"
            ))
        }
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{t}` is not a byte count (e.g. `4096` or `64Ki`)"))?;
    n.checked_mul(scale)
        .ok_or_else(|| format!("byte count `{t}` is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CollectiveOp, NO_CALLPATH, NO_ROOT};

    /// Rank 0: Send 100 B to 1 at t=10, Barrier at t=20, Isend 5000 B to 2 at t=30, Wait at t=40.
    /// Rank 1: Recv 100 B from 0 at t=15, Allreduce 8/8 B at t=25.
    /// Rank 2: Irecv 5000 B from ANY_SOURCE at t=5, Wait at t=45.
    fn trace() -> Trace {
        let mut t = Trace::new("test", "test", 3);
        let c = t.push_call(0, "MPI_Send", 10, 11, NO_CALLPATH, 0);
        t.push_p2p(0, c, c, P2pDir::Send, 1, 0, 0, 100);
        t.push_call(0, "MPI_Barrier", 20, 21, NO_CALLPATH, 0);
        let c = t.push_call(0, "MPI_Isend", 30, 31, NO_CALLPATH, 0);
        let w = t.push_call(0, "MPI_Wait", 40, 41, NO_CALLPATH, 0);
        t.push_p2p(0, c, w, P2pDir::Send, 2, 0, 0, 5000);
        let c = t.push_call(1, "MPI_Recv", 15, 16, NO_CALLPATH, 0);
        t.push_p2p(1, c, c, P2pDir::Recv, 0, 0, 0, 100);
        let c = t.push_call(1, "MPI_Allreduce", 25, 26, NO_CALLPATH, 0);
        t.push_collective(1, c, CollectiveOp::Allreduce, 0, NO_ROOT, 8, 8);
        let c = t.push_call(2, "MPI_Irecv", 5, 6, NO_CALLPATH, 0);
        let w = t.push_call(2, "MPI_Wait", 45, 46, NO_CALLPATH, 0);
        t.push_p2p(2, c, w, P2pDir::Recv, ANY_SOURCE, 0, 0, 5000);
        t
    }

    fn selected_calls(t: &Trace, s: &Selection) -> Vec<(Rank, CallIdx)> {
        let mut v = Vec::new();
        for rt in &t.ranks {
            for i in 0..rt.calls.len() as CallIdx {
                if s.selects_call(t, rt.rank, i) {
                    v.push((rt.rank, i));
                }
            }
        }
        v
    }

    #[test]
    fn default_selects_everything() {
        let t = trace();
        assert_eq!(selected_calls(&t, &Selection::all()).len(), t.num_calls() as usize);
        assert!(!Selection::all().selects_call(&t, 0, 99));
        assert!(!Selection::all().selects_call(&t, 7, 0));
        assert!(!Selection::all().selects_p2p(&t, 0, 2));
    }

    #[test]
    fn ranks_and_communicator_members() {
        let mut t = trace();
        let c = t.add_comm("pair", vec![1, 2]);
        let s = Selection {
            ranks: Some(vec![0, 1]),
            comm: Some(c),
            ..Default::default()
        };
        assert_eq!(selected_calls(&t, &s), vec![(1, 0), (1, 1)]);
        let s = Selection {
            comm: Some(42),
            ..Default::default()
        };
        assert!(selected_calls(&t, &s).is_empty());
    }

    #[test]
    fn time_window_is_half_open_on_entry() {
        let t = trace();
        let s = Selection {
            from: Some(15),
            to: Some(30),
            ..Default::default()
        };
        assert_eq!(selected_calls(&t, &s), vec![(0, 1), (1, 0), (1, 1)]);
    }

    #[test]
    fn size_bounds_use_the_data_a_call_moves() {
        let t = trace();
        let s = Selection {
            min_bytes: Some(100),
            max_bytes: Some(4999),
            ..Default::default()
        };
        assert_eq!(selected_calls(&t, &s), vec![(0, 0), (1, 0)]);
        assert!(!s.selects_p2p(&t, 0, 1));
        assert!(s.selects_p2p(&t, 0, 0));
        let small = Selection {
            max_bytes: Some(8),
            ..Default::default()
        };
        assert!(small.selects_collective(&t, 1, 0));
        assert_eq!(call_bytes(&t, 0, 3), 0);
        assert_eq!(call_bytes(&t, 0, 2), 5000);
        for rt in &t.ranks {
            let one_pass = rank_calls_bytes(rt);
            let searched: Vec<u64> = (0..rt.calls.len() as CallIdx)
                .map(|c| call_bytes(&t, rt.rank, c))
                .collect();
            assert_eq!(one_pass, searched, "rank {}", rt.rank);
        }
    }

    #[test]
    fn kinds_apply_to_the_posting_call() {
        let t = trace();
        let s = Selection {
            kinds: Some(vec![CallKind::Isend, CallKind::Collective]),
            ..Default::default()
        };
        assert_eq!(selected_calls(&t, &s), vec![(0, 1), (0, 2), (1, 1)]);
        assert!(s.selects_p2p(&t, 0, 1));
        assert!(!s.selects_p2p(&t, 0, 0));
    }

    #[test]
    fn fan_in_and_out_per_rank() {
        let t = trace();
        let f = fan_in_out(&t, &Selection::all());
        assert_eq!(f.len(), 3);
        assert_eq!(
            (f[0].bytes_out, f[0].bytes_in, f[0].messages_out, f[0].peers_out),
            (5100, 0, 2, 2)
        );
        assert_eq!(
            (f[1].p2p_bytes_in, f[1].collective_bytes_in, f[1].bytes_in),
            (100, 8, 108)
        );
        assert_eq!((f[1].bytes_out, f[1].peers_in), (8, 1));
        assert_eq!((f[2].bytes_in, f[2].peers_in), (5000, 0));
        let late = Selection {
            from: Some(20),
            ranks: Some(vec![0]),
            ..Default::default()
        };
        let f = fan_in_out(&t, &late);
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].bytes_out, f[0].messages_out), (5000, 1));
    }

    #[test]
    fn rank_lists() {
        assert_eq!(parse_ranks("0-3,7").unwrap(), vec![0, 1, 2, 3, 7]);
        assert_eq!(parse_ranks("5").unwrap(), vec![5]);
        assert_eq!(parse_ranks(" 4-5, 1 ,4").unwrap(), vec![1, 4, 5]);
        assert!(parse_ranks("3-1").unwrap_err().contains("backwards"));
        assert!(parse_ranks("0,,2").is_err());
        assert!(parse_ranks("a").unwrap_err().contains("`a`"));
        assert!(parse_ranks("-1").is_err());
        assert!(parse_ranks("0-4000000000").unwrap_err().contains("more than"));
    }

    #[test]
    fn kind_lists() {
        assert_eq!(
            parse_kinds("send,isend,collective").unwrap(),
            vec![CallKind::Send, CallKind::Isend, CallKind::Collective]
        );
        assert_eq!(parse_kinds("p2p").unwrap().len(), 5);
        assert!(parse_kinds("sends").unwrap_err().contains("sends"));
    }

    #[test]
    fn times_with_units() {
        assert_eq!(parse_time("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_time("200ms").unwrap(), 200_000_000);
        assert_eq!(parse_time("300us").unwrap(), 300_000);
        assert_eq!(parse_time("300µs").unwrap(), 300_000);
        assert_eq!(parse_time("10ns").unwrap(), 10);
        assert_eq!(parse_time("0.000000001s").unwrap(), 1);
        assert_eq!(parse_time("0").unwrap(), 0);
        assert!(parse_time("15").unwrap_err().contains("unit"));
        assert!(parse_time("2h").unwrap_err().contains("`h`"));
        assert!(parse_time("1.2.3s").is_err());
        assert!(parse_time("s").is_err());
        assert!(parse_time("99999999999999999999s").is_err());
    }

    #[test]
    fn byte_counts() {
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("64Ki").unwrap(), 65536);
        assert_eq!(parse_bytes("2MB").unwrap(), 2_000_000);
        assert!(parse_bytes("12x").is_err());
        assert!(parse_bytes("").is_err());
        assert!(parse_bytes("99999999999Gi").is_err());
    }

    #[test]
    fn a_selection_is_checked_against_the_trace_it_is_applied_to() {
        let t = trace();
        let ranks = |r: Vec<Rank>| Selection {
            ranks: Some(r),
            ..Selection::default()
        };
        assert_eq!(
            ranks(vec![0, 3]).check(&t, FieldWords::Flags),
            Err("--ranks: rank 3 is not in the trace (it has 3 ranks, 0-2)".to_owned())
        );
        assert_eq!(
            ranks(vec![12]).check_against(Some(8), None, FieldWords::Labels),
            Err("ranks: rank 12 is not in the trace (it has 8 ranks, 0-7)".to_owned())
        );
        assert_eq!(
            ranks(vec![1]).check_against(Some(1), None, FieldWords::Flags),
            Err("--ranks: rank 1 is not in the trace (it has 1 rank, 0-0)".to_owned())
        );
        assert_eq!(ranks(vec![0, 1, 2]).check(&t, FieldWords::Flags), Ok(None));
        assert_eq!(ranks(vec![12]).check_against(None, None, FieldWords::Labels), Ok(None));

        let window = |from, to| Selection {
            from,
            to,
            ..Selection::default()
        };
        assert_eq!(
            window(Some(20), Some(10)).check(&t, FieldWords::Flags),
            Err("--from is later than --to".to_owned())
        );
        assert_eq!(
            window(Some(20), Some(10)).check_against(None, None, FieldWords::Labels),
            Err("from is later than to".to_owned())
        );
        assert_eq!(window(Some(10), Some(10)).check(&t, FieldWords::Flags), Ok(None));
        let sizes = Selection {
            min_bytes: Some(9),
            max_bytes: Some(8),
            ..Selection::default()
        };
        assert_eq!(
            sizes.check(&t, FieldWords::Flags),
            Err("--min-bytes is larger than --max-bytes".to_owned())
        );
        assert_eq!(
            sizes.check_against(None, None, FieldWords::Labels),
            Err("min bytes is larger than max bytes".to_owned())
        );
    }

    #[test]
    fn a_start_after_the_end_of_the_run_is_applied_with_a_note() {
        // The run lasts from 5 ns to 46 ns: 41 ns.
        let t = trace();
        let from = |f| Selection {
            from: Some(f),
            ..Selection::default()
        };
        assert_eq!(
            from(41).check(&t, FieldWords::Flags),
            Ok(None),
            "the last event is kept"
        );
        assert_eq!(
            from(42).check(&t, FieldWords::Flags),
            Ok(Some(
                "--from 0.000000 s is after the end of the run, which lasts 0.000000 s".to_owned()
            ))
        );
        assert_eq!(
            from(5_000_000_000).check_against(Some(8), Some(982_000_000), FieldWords::Labels),
            Ok(Some(
                "from 5 s is after the end of the run, which lasts 0.982 s".to_owned()
            ))
        );
        assert_eq!(
            from(5_000_000_000).check_against(Some(8), Some(982_000_000), FieldWords::Flags),
            Ok(Some(
                "--from 5.000000 s is after the end of the run, which lasts 0.982000 s".to_owned()
            ))
        );
        assert_eq!(
            from(5_000_000_000).check_against(Some(8), None, FieldWords::Labels),
            Ok(None)
        );
    }

    /// Two decompositions on the same ranks: rank 0 sends on `rows` (comm 1) and on the world,
    /// reduces on `rows`, synchronises on the world. `on_comms` keeps each one's calls only.
    fn two_comms() -> (Trace, CommId) {
        let mut t = Trace::new("test", "test", 3);
        let rows = t.add_comm("rows", vec![0, 1]);
        t.push_call(0, "MPI_Init", 1, 2, NO_CALLPATH, 0);
        let i = t.push_call(0, "MPI_Isend", 10, 11, NO_CALLPATH, 0);
        let s = t.push_call(0, "MPI_Send", 20, 21, NO_CALLPATH, 0);
        let w = t.push_call(0, "MPI_Wait", 30, 31, NO_CALLPATH, 0);
        let a = t.push_call(0, "MPI_Allreduce", 40, 41, NO_CALLPATH, 0);
        let b = t.push_call(0, "MPI_Barrier", 50, 51, NO_CALLPATH, 0);
        t.push_p2p(0, i, w, P2pDir::Send, 1, 0, rows, 64);
        t.push_p2p(0, s, s, P2pDir::Send, 2, 0, crate::COMM_WORLD, 128);
        t.push_collective(0, a, CollectiveOp::Allreduce, rows, NO_ROOT, 8, 8);
        t.push_collective(0, b, CollectiveOp::Barrier, crate::COMM_WORLD, NO_ROOT, 0, 0);
        let r = t.push_call(1, "MPI_Recv", 12, 13, NO_CALLPATH, 0);
        t.push_p2p(1, r, r, P2pDir::Recv, 0, 0, rows, 64);
        (t, rows)
    }

    #[test]
    fn on_comms_selects_the_calls_made_on_those_communicators() {
        let (t, rows) = two_comms();
        let on = |c: CommId| Selection {
            on_comms: Some(vec![c]),
            ..Default::default()
        };
        let names = |s: &Selection| -> Vec<&str> {
            (0..t.ranks[0].calls.len() as CallIdx)
                .filter(|&c| s.selects_call(&t, 0, c))
                .map(|c| t.call_name(0, c))
                .collect()
        };
        // Init and Wait post nothing: not selected by themselves.
        assert_eq!(names(&on(rows)), vec!["MPI_Isend", "MPI_Allreduce"]);
        assert_eq!(names(&on(crate::COMM_WORLD)), vec!["MPI_Send", "MPI_Barrier"]);
        assert_eq!(names(&Selection::all()).len(), 6);
        assert!(on(rows).selects_p2p(&t, 0, 0) && !on(rows).selects_p2p(&t, 0, 1));
        assert!(on(rows).selects_collective(&t, 0, 0) && !on(rows).selects_collective(&t, 0, 1));
        // Both communicators: everything that posts an operation.
        let both = Selection {
            on_comms: Some(vec![crate::COMM_WORLD, rows]),
            ..Default::default()
        };
        assert_eq!(names(&both).len(), 4);
        // Members of `rows` (comm) keep rank 0's world calls; on_comms drops them.
        let fan = fan_in_out(&t, &on(rows));
        assert_eq!((fan[0].p2p_bytes_out, fan[0].collective_bytes_out), (64, 8));
        assert_eq!(fan[1].p2p_bytes_in, 64);
        assert_eq!(fan_in_out(&t, &on(crate::COMM_WORLD))[0].p2p_bytes_out, 128);
        // Restricting keeps the Isend's Wait (completions follow their operations).
        let r = t.restrict(&on(rows));
        let kept: Vec<&str> = (0..r.ranks[0].calls.len() as CallIdx)
            .map(|c| r.call_name(0, c))
            .collect();
        assert_eq!(kept, vec!["MPI_Isend", "MPI_Wait", "MPI_Allreduce"]);
        assert_eq!(r.call_name(0, r.ranks[0].p2p.complete(0)), "MPI_Wait");
        assert_eq!(r.ranks[1].p2p.len(), 1);
        let r = t.restrict(&on(crate::COMM_WORLD));
        assert_eq!(r.ranks[0].p2p.bytes, vec![128]);
        assert!(r.ranks[1].calls.is_empty());
        // JSON without the field (written before it existed) reads as unset.
        let old: Selection = serde_json::from_str(
            r#"{"ranks":null,"comm":null,"from":null,"to":null,"min_bytes":null,"max_bytes":null,"kinds":null}"#,
        )
        .unwrap();
        assert_eq!(old, Selection::all());
        let back: Selection = serde_json::from_str(&serde_json::to_string(&on(rows)).unwrap()).unwrap();
        assert_eq!(back, on(rows));
    }
}
