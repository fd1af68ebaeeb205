//! The statement of one point-to-point operation of a record: `MPI_Send`/`MPI_Ssend`,
//! `MPI_Isend`/`MPI_Issend`, `MPI_Recv` or `MPI_Irecv`, guarded by its neighbour's existence and
//! the visit's run condition. A record posts one operation on its request slot (`slot()`,
//! `rbuf()`), except a start of several persistent requests (`MPI_Startall`, one logical record
//! of several operations, docs/logical.md), whose operation `k` is an `MPI_Isend` or `MPI_Irecv`
//! on slot `k` of the record (`slot_k(k)`, `rbuf_k(k)`), completed with the record's other slots
//! by the wait that completes the record.

use super::{dir_index, Emission};
use crate::logical::Operation;
use std::fmt::Write as _;
use tracelogic_model::{CallKind, P2pDir};

/// Emits operation `op` of a record of `kind` (`Send`, `Isend`, `Recv` or `Irecv`) whose MPI
/// function is `f` (lower case, without `MPI_`). `slot`: `Some(k)` for operation `k` of a start
/// of several, `None` for a record's one operation. `size`, `tag` and `runs` are the record's
/// per-operation C expressions.
#[allow(clippy::too_many_arguments)]
pub(super) fn emit_operation(
    kind: CallKind,
    f: &str,
    op: &Operation,
    slot: Option<usize>,
    size: &[String],
    tag: &[String],
    runs: &[String],
    names: &[String],
    pad: &str,
    out: &mut String,
    emission: &Emission,
) -> Result<(), String> {
    let k = slot.unwrap_or(0);
    let (req, buf) = match slot {
        Some(k) => (format!("slot_k({k})"), format!("rbuf_k({k})")),
        None => ("slot()".to_string(), "rbuf()".to_string()),
    };
    // `None`: from any source.
    let d = dir_index(names, &op.partner)?;
    let peer = d.map_or("MPI_ANY_SOURCE".to_string(), |d| format!("nb({d})"));
    let guard = d.map_or("1".to_string(), |d| format!("nb({d}) >= 0"));
    let guard = match runs.get(k).map(String::as_str) {
        None | Some("1") => guard,
        Some(r) => format!("{guard} && {r}"),
    };
    let receive = op.dir == P2pDir::Recv;
    let b = if receive && emission.receive_at_most {
        "MAXBYTES"
    } else {
        size.get(k).map_or("0", String::as_str)
    };
    let tag = if receive && !emission.keep_tags {
        "MPI_ANY_TAG"
    } else {
        tag.get(k).map_or("0", String::as_str)
    };
    let stmt = match kind {
        CallKind::Send => {
            let func = if f.starts_with("ssend") {
                "MPI_Ssend"
            } else {
                "MPI_Send"
            };
            format!("{func}(sendbuf, (int){b}, MPI_BYTE, {peer}, {tag}, topo);")
        }
        CallKind::Isend => {
            let func = if f.starts_with("issend") {
                "MPI_Issend"
            } else {
                "MPI_Isend"
            };
            format!("{func}(sendbuf, (int){b}, MPI_BYTE, {peer}, {tag}, topo, {req});")
        }
        CallKind::Recv => format!("MPI_Recv({buf}, (int){b}, MPI_BYTE, {peer}, {tag}, topo, MPI_STATUS_IGNORE);"),
        _ if d.is_none() && emission.cancel_surplus => {
            format!("MPI_Irecv({buf}, (int){b}, MPI_BYTE, any_peer(), {tag}, topo, {req});")
        }
        _ => format!("MPI_Irecv({buf}, (int){b}, MPI_BYTE, {peer}, {tag}, topo, {req});"),
    };
    let _ = writeln!(out, "{pad}if ({guard}) {stmt}");
    Ok(())
}
