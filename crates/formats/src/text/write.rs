//! Writing a [`Trace`] as text: one line per call, every field of the model.

use super::*;

/// True when `s` cannot be written as a bare token.
pub(super) fn needs_quotes(s: &str) -> bool {
    s.is_empty()
        || s.starts_with('#')
        || s.bytes()
            .any(|c| c.is_ascii_whitespace() || c == b'"' || c == b'=' || c == b'\\' || c.is_ascii_control())
}

/// Append `s` as a token, quoting and escaping it when needed.
pub(super) fn push_token(out: &mut String, s: &str) {
    if !needs_quotes(s) {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Members as comma-separated ranks and ranges: `0-3,8,10-11`.
pub(super) fn push_members(out: &mut String, members: &[Rank]) {
    if members.is_empty() {
        out.push('-');
        return;
    }
    let mut i = 0;
    while i < members.len() {
        let start = members[i];
        let mut j = i;
        while j + 1 < members.len() && members[j + 1] == members[j].wrapping_add(1) && members[j + 1] > members[j] {
            j += 1;
        }
        if i > 0 {
            out.push(',');
        }
        if j > i {
            let _ = write!(out, "{start}-{}", members[j]);
        } else {
            let _ = write!(out, "{start}");
        }
        i = j + 1;
    }
}

/// Write `trace` in the native text format (the reader reads it back unchanged).
///
/// Names are declared before use (`function`, `region`, `metric`, `callpath` lines) so ids
/// survive the round trip; calls follow rank by rank in program order, each carrying its
/// point-to-point operations (`send=`/`recv=`), collective (`coll=`) and the requests it
/// completes (`wait=`). Non-blocking operations get `req=` ids equal to their index in the
/// rank's operations. `Trace::format` is not written: a trace read back says `text`.
pub fn write(trace: &Trace) -> String {
    let mut out = String::with_capacity(64 + trace.num_calls() as usize * 48);
    let _ = writeln!(out, "{MAGIC} {VERSION}");
    out.push_str("source ");
    push_token(&mut out, &trace.source);
    out.push('\n');
    let _ = writeln!(out, "ranks {}", trace.num_ranks());
    for (k, v) in &trace.meta {
        out.push_str("meta ");
        push_token(&mut out, k);
        out.push(' ');
        push_token(&mut out, v);
        out.push('\n');
    }
    for w in &trace.warnings {
        out.push_str("warning ");
        push_token(&mut out, w);
        out.push('\n');
    }
    for (i, c) in trace.comms.iter().enumerate() {
        let _ = write!(out, "comm {i} ");
        push_token(&mut out, &c.name);
        out.push(' ');
        push_members(&mut out, &c.members);
        out.push('\n');
    }
    for (keyword, names) in [
        ("function", trace.functions.names()),
        ("region", trace.regions.names()),
        ("metric", trace.metrics.names()),
    ] {
        for (i, n) in names.iter().enumerate() {
            let _ = write!(out, "{keyword} {i} ");
            push_token(&mut out, n);
            out.push('\n');
        }
    }
    for (i, path) in trace.callpaths.iter().enumerate() {
        let _ = write!(out, "callpath {i}");
        for r in path {
            let _ = write!(out, " {r}");
        }
        out.push('\n');
    }
    for rt in &trace.ranks {
        write_rank(&mut out, trace, rt);
    }
    out
}

pub(super) fn write_rank(out: &mut String, trace: &Trace, rt: &tracelogic_model::RankTrace) {
    let r = rt.rank;
    for loc in &rt.locations {
        let _ = write!(out, "location {r} {} ", loc.id);
        push_token(out, &loc.name);
        out.push('\n');
    }
    if let Some((a, b)) = rt.span {
        let _ = writeln!(out, "span {r} {a} {b}");
    }
    let calls = &rt.calls;
    let p = &rt.p2p;
    let c = &rt.collectives;
    // Operations grouped by their posting call, and the requests each call completes; the
    // model keeps operations sorted by call, but the writer does not rely on it.
    let mut p2p_by_call: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut waits: HashMap<u32, Vec<usize>> = HashMap::new();
    for i in 0..p.len() {
        p2p_by_call.entry(p.post[i]).or_default().push(i);
        if p.complete(i) > p.post[i] && p.complete(i) != NOT_COMPLETED {
            waits.entry(p.complete(i)).or_default().push(i);
        }
    }
    let mut coll_by_call: HashMap<u32, Vec<usize>> = HashMap::new();
    for i in 0..c.len() {
        coll_by_call.entry(c.call[i]).or_default().push(i);
    }
    for i in 0..calls.len() {
        let idx = i as u32;
        let func = trace.functions.name(calls.func[i]);
        let _ = write!(out, "{r} {} {} ", calls.enter(i), calls.exit(i));
        push_token(out, func);
        let kind = calls.kind[i];
        if kind != CallKind::classify(func) {
            let _ = write!(out, " kind={}", kind_name(kind));
        }
        if calls.location[i] != 0 {
            let _ = write!(out, " loc={}", calls.location[i]);
        }
        if calls.callpath[i] != NO_CALLPATH {
            let _ = write!(out, " cp={}", calls.callpath[i]);
        }
        for &o in p2p_by_call.get(&idx).map(Vec::as_slice).unwrap_or(&[]) {
            let dir = if p.dir[o] == P2pDir::Send { "send" } else { "recv" };
            if p.peer[o] == ANY_SOURCE {
                let _ = write!(out, " {dir}=any");
            } else {
                let _ = write!(out, " {dir}={}", p.peer[o]);
            }
            if p.tag[o] == ANY_TAG {
                out.push_str(" tag=any");
            } else {
                let _ = write!(out, " tag={}", p.tag[o]);
            }
            let _ = write!(out, " bytes={}", p.bytes.at(o));
            if p.comm[o] != COMM_WORLD {
                let _ = write!(out, " comm={}", p.comm[o]);
            }
            if p.complete(o) < p.post[o] {
                // Completed by an earlier call: only a model built by hand does this.
                let _ = write!(out, " done={}", p.complete(o));
            } else if p.complete(o) != p.post[o] {
                let _ = write!(out, " req={o}");
            }
        }
        let colls = coll_by_call.get(&idx).map(Vec::as_slice).unwrap_or(&[]);
        for &o in colls {
            let _ = write!(out, " coll={}", op_name(c.op[o]));
            if c.comm[o] != COMM_WORLD {
                let _ = write!(out, " comm={}", c.comm[o]);
            }
            if c.root[o] != NO_ROOT {
                let _ = write!(out, " root={}", c.root[o]);
            }
            let _ = write!(out, " sent={} recvd={}", c.bytes_sent[o], c.bytes_recv[o]);
        }
        if colls.is_empty() && kind == CallKind::Collective {
            out.push_str(" coll=none");
        }
        if let Some(w) = waits.get(&idx) {
            out.push_str(" wait=");
            for (k, o) in w.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{o}");
            }
        }
        out.push('\n');
    }
    for m in &rt.metrics {
        let name = trace.metrics.name(m.metric);
        for (t, v) in m.time.iter().zip(&m.value) {
            let _ = write!(out, "sample {r} ");
            push_token(out, name);
            let _ = writeln!(out, " {t} {v:?}");
        }
    }
}

// ------------------------------------------------------------------------------------------
// Reading
// ------------------------------------------------------------------------------------------
