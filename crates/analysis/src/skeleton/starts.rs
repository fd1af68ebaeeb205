//! The operations of a start of several persistent requests (`MPI_Startall`: one logical record
//! of several operations, docs/logical.md): each becomes an `MPI_Isend` or `MPI_Irecv` on a
//! request slot of its own (`slot_k(k)`, `rbuf_k(k)`), completed with the record's other slots
//! by the wait that completes the record.

use super::{dir_index, Emission};
use crate::logical::Operation;
use std::fmt::Write as _;
use tracelogic_model::P2pDir;

/// Emits operation `k` of a multi-operation start; `size`, `tag` and `runs` are the record's
/// per-operation C expressions (as for `MPI_Sendrecv`'s two halves).
#[allow(clippy::too_many_arguments)]
pub(super) fn emit_started(
    op: &Operation,
    k: usize,
    size: &[String],
    tag: &[String],
    runs: &[String],
    names: &[String],
    pad: &str,
    out: &mut String,
    emission: &Emission,
) -> Result<(), String> {
    // `None`: a receive from any source.
    let d = dir_index(names, &op.partner)?;
    let receive = op.dir == P2pDir::Recv;
    if d.is_none() && !receive {
        return Err("a send to MPI_ANY_SOURCE".into());
    }
    let peer = d.map_or("MPI_ANY_SOURCE".to_string(), |d| format!("nb({d})"));
    let mut guard = d.map_or("1".to_string(), |d| format!("nb({d}) >= 0"));
    if let Some(r) = runs.get(k).filter(|r| r.as_str() != "1") {
        guard = format!("{guard} && {r}");
    }
    let b = if receive && emission.receive_at_most {
        "MAXBYTES"
    } else {
        size.get(k).map_or("0", String::as_str)
    };
    let t = tag.get(k).map_or("0", String::as_str);
    let stmt = if receive {
        let t = if emission.keep_tags { t } else { "MPI_ANY_TAG" };
        let peer = if d.is_none() && emission.cancel_surplus {
            "any_peer()"
        } else {
            &peer
        };
        format!("MPI_Irecv(rbuf_k({k}), (int){b}, MPI_BYTE, {peer}, {t}, topo, slot_k({k}));")
    } else {
        format!("MPI_Isend(sendbuf, (int){b}, MPI_BYTE, {peer}, {t}, topo, slot_k({k}));")
    };
    let _ = writeln!(out, "{pad}if ({guard}) {stmt}");
    Ok(())
}
