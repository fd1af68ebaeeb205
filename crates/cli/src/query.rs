//! `tracelogic query`: select calls and messages by ranks, time window, size and kind.

use crate::common::{emit, load_trace, print_json, seconds, set_stage, table, CliError, CliResult, SelectionArgs};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_model::query::{call_bytes, fan_in_out, RankFan};
use tracelogic_model::{match_messages, CallKind, Selection, Trace, NOT_COMPLETED};

/// Arguments of `tracelogic query`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// List at most this many calls and this many messages (the counts cover all).
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

/// One selected call.
#[derive(Debug, Serialize)]
pub struct CallRow {
    /// World rank.
    pub rank: u32,
    /// Index of the call in the rank's calls.
    pub call: u32,
    /// MPI function.
    pub function: String,
    /// Its kind.
    pub kind: CallKind,
    /// Entry time, ns since the trace's first event.
    pub enter_ns: u64,
    /// Exit time, ns since the trace's first event.
    pub exit_ns: u64,
    /// Largest data the call moves (0 for calls that move none).
    pub bytes: u64,
}

/// One selected matched message.
#[derive(Debug, Serialize)]
pub struct MessageRow {
    /// Sending world rank.
    pub sender: u32,
    /// Receiving world rank.
    pub receiver: u32,
    /// Bytes sent.
    pub bytes: u64,
    /// Tag.
    pub tag: i32,
    /// Communicator name.
    pub comm: String,
    /// Function that posted the send.
    pub send_function: String,
    /// Function that posted the receive.
    pub recv_function: String,
    /// Entry of the send's posting call, ns since the trace's first event.
    pub send_ns: u64,
    /// Exit of the call that completed the receive (its posting call when none was
    /// recorded), ns since the trace's first event.
    pub recv_done_ns: u64,
}

/// What `tracelogic query --json` prints.
#[derive(Debug, Serialize)]
pub struct QueryReport {
    /// The selection applied (times absolute, in the trace's clock).
    pub selection: Selection,
    /// Number of selected calls.
    pub calls_selected: u64,
    /// The first `limit` selected calls, by rank then call order.
    pub calls: Vec<CallRow>,
    /// Number of selected matched messages (either end selected).
    pub messages_selected: u64,
    /// The first `limit` of them, by sender then send order.
    pub messages: Vec<MessageRow>,
    /// Selected send operations no receive matched.
    pub unmatched_sends_selected: u64,
    /// Fan-in / fan-out of every selected rank.
    pub fan: Vec<RankFan>,
    /// The listing limit used.
    pub limit: usize,
}

/// Run `tracelogic query`.
pub fn run(args: Args) -> CliResult {
    let trace = load_trace(&args.paths)?;
    let selection = args.selection.selection(&trace)?;
    set_stage("selecting calls");
    let report = query(&trace, selection, args.limit);
    if args.json {
        print_json(&report)?;
    } else {
        emit(|out| out.write_all(human(&report).as_bytes()))?;
    }
    if report.calls_selected == 0 {
        return Err(CliError::NothingFound("the selection matches no call".into()));
    }
    Ok(ExitCode::SUCCESS)
}

fn query(trace: &Trace, selection: Selection, limit: usize) -> QueryReport {
    let start = trace.span().0;
    let mut calls = Vec::new();
    let mut calls_selected = 0u64;
    for rt in &trace.ranks {
        let c = &rt.calls;
        for i in 0..c.len() as u32 {
            if !selection.selects_call(trace, rt.rank, i) {
                continue;
            }
            calls_selected += 1;
            if calls.len() < limit {
                let at = i as usize;
                calls.push(CallRow {
                    rank: rt.rank,
                    call: i,
                    function: trace.call_name(rt.rank, i).to_owned(),
                    kind: c.kind[at],
                    enter_ns: c.enter[at].saturating_sub(start),
                    exit_ns: c.exit[at].saturating_sub(start),
                    bytes: call_bytes(trace, rt.rank, i),
                });
            }
        }
    }
    set_stage("matching messages");
    let matching = match_messages(trace);
    let mut messages = Vec::new();
    let mut messages_selected = 0u64;
    let mut matched_sends = vec![Vec::new(); trace.ranks.len()];
    for m in &matching.messages {
        matched_sends[m.sender as usize].push(m.send_op);
        let send_selected = selection.selects_p2p(trace, m.sender, m.send_op as usize);
        if !send_selected && !selection.selects_p2p(trace, m.receiver, m.recv_op as usize) {
            continue;
        }
        messages_selected += 1;
        if messages.len() < limit {
            let s = &trace.ranks[m.sender as usize];
            let r = &trace.ranks[m.receiver as usize];
            let so = m.send_op as usize;
            let ro = m.recv_op as usize;
            let done = match r.p2p.complete[ro] {
                NOT_COMPLETED => r.p2p.post[ro],
                c => c,
            };
            messages.push(MessageRow {
                sender: m.sender,
                receiver: m.receiver,
                bytes: s.p2p.bytes[so],
                tag: s.p2p.tag[so],
                comm: trace
                    .comms
                    .get(s.p2p.comm[so] as usize)
                    .map(|c| c.name.clone())
                    .unwrap_or_else(|| format!("comm {}", s.p2p.comm[so])),
                send_function: trace.call_name(m.sender, s.p2p.post[so]).to_owned(),
                recv_function: trace.call_name(m.receiver, r.p2p.post[ro]).to_owned(),
                send_ns: s
                    .calls
                    .enter
                    .get(s.p2p.post[so] as usize)
                    .map_or(0, |t| t.saturating_sub(start)),
                recv_done_ns: r.calls.exit.get(done as usize).map_or(0, |t| t.saturating_sub(start)),
            });
        }
    }
    let mut unmatched_sends_selected = 0u64;
    for rt in &trace.ranks {
        let matched = &matched_sends[rt.rank as usize];
        let p = &rt.p2p;
        for i in 0..p.len() {
            if p.dir[i] == tracelogic_model::P2pDir::Send
                && selection.selects_p2p(trace, rt.rank, i)
                && matched.binary_search(&(i as u32)).is_err()
            {
                unmatched_sends_selected += 1;
            }
        }
    }
    set_stage("computing fan-in and fan-out");
    let fan = fan_in_out(trace, &selection);
    QueryReport {
        selection,
        calls_selected,
        calls,
        messages_selected,
        messages,
        unmatched_sends_selected,
        fan,
        limit,
    }
}

fn human(r: &QueryReport) -> String {
    let mut o = format!("{} calls selected", r.calls_selected);
    if r.calls_selected as usize > r.calls.len() {
        o += &format!(" (first {} shown; --limit to change)", r.calls.len());
    }
    o += "\n";
    let rows = r
        .calls
        .iter()
        .map(|c| {
            vec![
                c.rank.to_string(),
                c.call.to_string(),
                c.function.clone(),
                seconds(c.enter_ns),
                seconds(c.exit_ns),
                c.bytes.to_string(),
            ]
        })
        .collect();
    o += &table(
        &["rank", "call", "function", "enter s", "exit s", "bytes"],
        rows,
        &[0, 1, 3, 4, 5],
    );
    o += &format!("\n{} messages selected", r.messages_selected);
    if r.messages_selected as usize > r.messages.len() {
        o += &format!(" (first {} shown)", r.messages.len());
    }
    o += &format!("; {} selected sends unmatched\n", r.unmatched_sends_selected);
    let rows = r
        .messages
        .iter()
        .map(|m| {
            vec![
                m.sender.to_string(),
                m.receiver.to_string(),
                m.bytes.to_string(),
                m.tag.to_string(),
                m.comm.clone(),
                format!("{} -> {}", m.send_function, m.recv_function),
                seconds(m.send_ns),
                seconds(m.recv_done_ns),
            ]
        })
        .collect();
    o += &table(
        &["from", "to", "bytes", "tag", "comm", "calls", "sent s", "received s"],
        rows,
        &[0, 1, 2, 3, 6, 7],
    );
    o += "\nfan-out / fan-in per rank (point-to-point + collective bytes)\n";
    let rows = r
        .fan
        .iter()
        .map(|f| {
            vec![
                f.rank.to_string(),
                f.bytes_out.to_string(),
                f.bytes_in.to_string(),
                f.messages_out.to_string(),
                f.messages_in.to_string(),
                f.peers_out.to_string(),
                f.peers_in.to_string(),
            ]
        })
        .collect();
    o += &table(
        &[
            "rank",
            "bytes out",
            "bytes in",
            "sends",
            "receives",
            "peers out",
            "peers in",
        ],
        rows,
        &[0, 1, 2, 3, 4, 5, 6],
    );
    o
}
