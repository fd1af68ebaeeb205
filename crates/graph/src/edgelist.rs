//! The plain edge-list format for user-defined patterns and saved graphs: a first line `n m`,
//! then `m` lines `u v` with 0-based node ids. Blank lines and lines starting with `#` are
//! ignored. This is what `--graph`, `--library` and "save this run's graph" read and write.

use crate::Graph;

/// Largest node count accepted from a file (a guard against hostile headers).
pub const MAX_NODES: u32 = 1 << 20;

/// Parse an edge list; errors name `source` and the line at fault.
pub fn parse(text: &str, source: &str) -> Result<Graph, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let (hline, header) = lines
        .next()
        .ok_or_else(|| format!("{source}: empty edge list (expected a first line `n m`)"))?;
    let nums = |line: usize, l: &str| -> Result<(u64, u64), String> {
        let mut it = l.split_whitespace();
        let mut next = || {
            it.next()
                .ok_or_else(|| format!("{source}: line {line}: expected two integers, got `{l}`"))?
                .parse::<u64>()
                .map_err(|_| format!("{source}: line {line}: expected two non-negative integers, got `{l}`"))
        };
        let (a, b) = (next()?, next()?);
        if it.next().is_some() {
            return Err(format!("{source}: line {line}: expected two integers, got `{l}`"));
        }
        Ok((a, b))
    };
    let (n, m) = nums(hline, header)?;
    if n == 0 || n > MAX_NODES as u64 {
        return Err(format!(
            "{source}: line {hline}: node count {n} must be between 1 and {MAX_NODES}"
        ));
    }
    // Every edge line takes at least 4 bytes (`0 1\n`): a larger count cannot be honest.
    if m > text.len() as u64 / 4 {
        return Err(format!(
            "{source}: line {hline}: header announces {m} edges but the file has only {} bytes",
            text.len()
        ));
    }
    let mut edges = Vec::with_capacity(m as usize);
    for (line, l) in lines.by_ref() {
        let (u, v) = nums(line, l)?;
        if u >= n || v >= n {
            return Err(format!(
                "{source}: line {line}: edge {u} {v} names a node outside 0..{n}"
            ));
        }
        if u == v {
            return Err(format!("{source}: line {line}: self-loop {u} {v}"));
        }
        edges.push((u as u32, v as u32));
        if edges.len() as u64 == m {
            break;
        }
    }
    if (edges.len() as u64) < m {
        return Err(format!(
            "{source}: header announces {m} edges but only {} follow",
            edges.len()
        ));
    }
    if let Some((line, l)) = lines.next() {
        return Err(format!(
            "{source}: line {line}: unexpected `{l}` after the {m} announced edges"
        ));
    }
    Ok(Graph::from_edges(n as u32, edges))
}

/// Write `g` as an edge list (each edge once, `u < v`), with an optional `#` comment first.
pub fn write(g: &Graph, comment: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(c) = comment {
        for l in c.lines() {
            out.push_str("# ");
            out.push_str(l);
            out.push('\n');
        }
    }
    out.push_str(&format!("{} {}\n", g.num_nodes(), g.num_edges()));
    for (u, v) in g.edges() {
        out.push_str(&format!("{u} {v}\n"));
    }
    out
}
