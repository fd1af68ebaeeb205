//! A compressed program expanded back to its calls, and as text.

use super::*;

impl Program {
    /// The calls of the uncompressed trace, rebuilt (exactly the input's calls; gaps are not
    /// part of a call). Refuses to produce more than `limit` calls (a hostile program could
    /// describe billions).
    pub fn expand(&self, limit: usize) -> Result<Vec<LogicalCall>, String> {
        let mut visits = vec![0u64; id_bound(&self.nodes)];
        let mut out = Vec::new();
        expand_into(&self.nodes, &mut visits, &mut out, &mut None, limit)?;
        Ok(out)
    }

    /// [`Program::expand`], and per expanded call the id of the [`Node::Call`] it comes from
    /// (what the skeleton's receive check reports a receive by).
    pub fn expand_with_ids(&self, limit: usize) -> Result<(Vec<LogicalCall>, Vec<u32>), String> {
        let mut visits = vec![0u64; id_bound(&self.nodes)];
        let mut out = Vec::new();
        let mut ids = Some(Vec::new());
        expand_into(&self.nodes, &mut visits, &mut out, &mut ids, limit)?;
        Ok((out, ids.unwrap_or_default()))
    }

    /// Readable text: one call per line, loops as `[` … `]^n`, indented by depth.
    pub fn text(&self) -> String {
        let mut out = String::new();
        text_into(&self.nodes, 0, &mut out);
        out
    }
}

pub(super) fn expand_into(
    nodes: &[Node],
    visits: &mut [u64],
    out: &mut Vec<LogicalCall>,
    ids: &mut Option<Vec<u32>>,
    limit: usize,
) -> Result<(), String> {
    for n in nodes {
        match n {
            Node::Call {
                id,
                shape,
                sizes,
                tags,
                present,
                ..
            } => {
                if out.len() >= limit {
                    return Err(format!("the program expands to more than {limit} records"));
                }
                let k = visits[*id as usize];
                visits[*id as usize] += 1;
                let v: Vec<u64> = sizes.iter().map(|s| s.value(k)).collect();
                let t: Vec<i32> = tags.iter().map(|s| s.value(k) as u32 as i32).collect();
                let mut call = shape.with_sizes(&v).with_tags(&t);
                if sizes.iter().any(|s| matches!(s, Values::ByRank { .. })) {
                    call = call.with_rank_tables(&rank_tables_at(sizes, shape.ops.len(), k));
                }
                if !present.is_empty() {
                    call = call.with_absent(&absent_at(present, k));
                }
                out.push(call);
                if let Some(ids) = ids {
                    ids.push(*id);
                }
            }
            Node::Loop { id, count, body } => {
                let k = visits[*id as usize];
                visits[*id as usize] += 1;
                for _ in 0..count.value(k) {
                    expand_into(body, visits, out, ids, limit)?;
                }
            }
        }
    }
    Ok(())
}

/// A call's text with its size and tag sequences in place of the sizes and tags.
pub fn call_text(shape: &LogicalCall, sizes: &[Values], tags: &[Values]) -> String {
    // Render with placeholder sizes and tags, then substitute the sequences' texts.
    let mut marked: Vec<u64> = (0..sizes.len() as u64).map(|k| u64::MAX - k).collect();
    // A collective shows one of its two sequences (`Collective::size`): the other is marked 0.
    if let (Some(c), [.., sent, recv]) = (&shape.collective, sizes) {
        let zero = |v: &Values| *v == Values::Constant { value: 0 };
        let hidden = if Collective::size_is_received(c.op, zero(sent), zero(recv)) {
            2
        } else {
            1
        };
        if let Some(at) = marked.len().checked_sub(hidden) {
            marked[at] = 0;
        }
    }
    let tag_marks: Vec<i32> = (0..tags.len() as i32).map(|k| i32::MIN + k).collect();
    let mut s = shape.with_sizes(&marked).with_tags(&tag_marks).text();
    for (k, v) in sizes.iter().enumerate() {
        s = s.replacen(&(u64::MAX - k as u64).to_string(), &v.text(), 1);
    }
    for (k, v) in tags.iter().enumerate() {
        let text = match v {
            Values::Constant { value } => (*value as u32 as i32).to_string().replace("-1", "any"),
            other => other.text(),
        };
        s = s.replacen(&(i32::MIN + k as i32).to_string(), &text, 1);
    }
    s
}

/// The operations some ranks skip in some visits ([`Node::Call`]'s `present`), as text:
/// ` skipping from west on rank 4 {1, 1, 0, …}` (1: runs, 0: skipped); empty when none is.
pub fn presence_text(shape: &LogicalCall, present: &[Values]) -> String {
    let mut s = String::new();
    for (o, v) in shape.ops.iter().zip(present) {
        let Values::ByRank { ranks, .. } = v else { continue };
        let what = match o.dir {
            tracelogic_model::P2pDir::Send => "to",
            tracelogic_model::P2pDir::Recv => "from",
        };
        for g in ranks {
            s.push_str(&format!(
                " skipping {what} {} on {} {}",
                o.partner.label(),
                crate::logical::ranks_text(&g.ranks),
                g.values.text()
            ));
        }
    }
    s
}

pub(super) fn text_into(nodes: &[Node], indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    for n in nodes {
        match n {
            Node::Call {
                shape,
                sizes,
                tags,
                present,
                ..
            } => {
                out.push_str(&pad);
                out.push_str(&call_text(shape, sizes, tags));
                out.push_str(&presence_text(shape, present));
                out.push('\n');
            }
            Node::Loop { count, body, .. } => {
                out.push_str(&pad);
                out.push_str("[\n");
                text_into(body, indent + 1, out);
                out.push_str(&pad);
                out.push_str(&format!("]^{}\n", count.text()));
            }
        }
    }
}
