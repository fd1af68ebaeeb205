//! Classification of MPI functions.

use serde::{Deserialize, Serialize};

/// What an MPI call does, at the granularity analyses need. The exact function stays in
/// [`Calls::func`](crate::Calls::func).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum CallKind {
    /// Blocking send: `MPI_Send`, `MPI_Ssend`, `MPI_Bsend`, `MPI_Rsend`.
    Send,
    /// Non-blocking send: `MPI_Isend`, `MPI_Issend`, `MPI_Ibsend`, `MPI_Irsend`, `MPI_Send_init`...
    Isend,
    /// Blocking receive: `MPI_Recv`.
    Recv,
    /// Non-blocking receive: `MPI_Irecv`, `MPI_Recv_init`.
    Irecv,
    /// Combined send and receive: `MPI_Sendrecv`, `MPI_Sendrecv_replace`.
    SendRecv,
    /// Completion of requests: `MPI_Wait*`, `MPI_Test*`, `MPI_Start*`, `MPI_Request_free`.
    Completion,
    /// Probing for a message: `MPI_Probe`, `MPI_Iprobe`...
    Probe,
    /// Collective operation (blocking or not), including barriers.
    Collective,
    /// Communicator and group management: `MPI_Comm_split`, `MPI_Comm_dup`, `MPI_Group_incl`...
    Communicator,
    /// Setup and teardown: `MPI_Init*`, `MPI_Finalize`.
    Lifecycle,
    /// Anything else (queries such as `MPI_Comm_rank`, datatypes, `MPI_Wtime`, I/O, RMA...).
    Other,
}

impl CallKind {
    /// Classify an MPI function by its standard name (case-insensitive, `PMPI_` accepted).
    pub fn classify(name: &str) -> CallKind {
        let base = mpi_base_name(name);
        let n = base.as_str();
        match n {
            "send" | "ssend" | "bsend" | "rsend" => CallKind::Send,
            "isend" | "issend" | "ibsend" | "irsend" | "send_init" | "ssend_init" | "bsend_init" | "rsend_init" => {
                CallKind::Isend
            }
            "recv" | "mrecv" => CallKind::Recv,
            "irecv" | "imrecv" | "recv_init" => CallKind::Irecv,
            "sendrecv" | "sendrecv_replace" => CallKind::SendRecv,
            "probe" | "iprobe" | "mprobe" | "improbe" => CallKind::Probe,
            "init" | "init_thread" | "finalize" | "abort" => CallKind::Lifecycle,
            _ if n.starts_with("wait") || n.starts_with("test") && !n.starts_with("test_cancelled") => {
                CallKind::Completion
            }
            "start" | "startall" | "request_free" | "cancel" => CallKind::Completion,
            _ if CollectiveOp::from_name(name).is_some() => CallKind::Collective,
            _ if n.starts_with("comm_")
                && !matches!(
                    n,
                    "comm_rank"
                        | "comm_size"
                        | "comm_get_name"
                        | "comm_set_name"
                        | "comm_compare"
                        | "comm_test_inter"
                        | "comm_remote_size"
                        | "comm_get_attr"
                        | "comm_set_attr"
                        | "comm_get_info"
                        | "comm_set_errhandler"
                        | "comm_get_errhandler"
                ) =>
            {
                CallKind::Communicator
            }
            _ if n.starts_with("group_")
                || n.starts_with("cart_create")
                || n.starts_with("cart_sub")
                || n.starts_with("graph_create")
                || n.starts_with("dist_graph_create")
                || n == "intercomm_create"
                || n == "intercomm_merge" =>
            {
                CallKind::Communicator
            }
            _ => CallKind::Other,
        }
    }

    /// True for calls that post a point-to-point operation.
    pub fn is_p2p(self) -> bool {
        matches!(
            self,
            CallKind::Send | CallKind::Isend | CallKind::Recv | CallKind::Irecv | CallKind::SendRecv
        )
    }
}

/// True for one-sided (RMA) data movement: `MPI_Put`, `MPI_Get`, `MPI_Accumulate`,
/// `MPI_Get_accumulate`, `MPI_Fetch_and_op`, `MPI_Compare_and_swap` and their request-based
/// forms (`MPI_Rput`...). tracelogic models point-to-point and collective communication only:
/// these calls are counted (the summary says how many) but carry no message, so the matrix and
/// the analyses of messages leave their traffic out. Case-insensitive, `PMPI_` accepted.
pub fn is_one_sided(name: &str) -> bool {
    matches!(
        mpi_base_name(name).as_str(),
        "put"
            | "get"
            | "accumulate"
            | "get_accumulate"
            | "fetch_and_op"
            | "compare_and_swap"
            | "rput"
            | "rget"
            | "raccumulate"
            | "rget_accumulate"
    )
}

/// An MPI function's name without its `MPI_`/`PMPI_` prefix, lower-case (`PMPI_Isend` →
/// `isend`): what the classifications below match on.
pub fn mpi_base_name(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    match lower.strip_prefix("pmpi_").or_else(|| lower.strip_prefix("mpi_")) {
        Some(rest) => rest.to_owned(),
        None => lower,
    }
}

/// Which collective operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum CollectiveOp {
    Barrier,
    Bcast,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    Allgather,
    Allgatherv,
    Alltoall,
    Alltoallv,
    Alltoallw,
    Reduce,
    Allreduce,
    ReduceScatter,
    ReduceScatterBlock,
    Scan,
    Exscan,
    /// Neighbourhood collectives and anything else collective.
    Other,
}

impl CollectiveOp {
    /// The collective of an MPI function name (`MPI_Allreduce`, `MPI_Iallreduce`,
    /// `MPI_Allreduce_init` all give [`CollectiveOp::Allreduce`]); `None` if not a collective.
    pub fn from_name(name: &str) -> Option<CollectiveOp> {
        let base = mpi_base_name(name);
        let n = base.as_str();
        let n = n.strip_suffix("_init").unwrap_or(n);
        let base = match n {
            "ibarrier"
            | "ibcast"
            | "igather"
            | "igatherv"
            | "iscatter"
            | "iscatterv"
            | "iallgather"
            | "iallgatherv"
            | "ialltoall"
            | "ialltoallv"
            | "ialltoallw"
            | "ireduce"
            | "iallreduce"
            | "ireduce_scatter"
            | "ireduce_scatter_block"
            | "iscan"
            | "iexscan" => &n[1..],
            _ => n,
        };
        Some(match base {
            "barrier" => CollectiveOp::Barrier,
            "bcast" => CollectiveOp::Bcast,
            "gather" => CollectiveOp::Gather,
            "gatherv" => CollectiveOp::Gatherv,
            "scatter" => CollectiveOp::Scatter,
            "scatterv" => CollectiveOp::Scatterv,
            "allgather" => CollectiveOp::Allgather,
            "allgatherv" => CollectiveOp::Allgatherv,
            "alltoall" => CollectiveOp::Alltoall,
            "alltoallv" => CollectiveOp::Alltoallv,
            "alltoallw" => CollectiveOp::Alltoallw,
            "reduce" => CollectiveOp::Reduce,
            "allreduce" => CollectiveOp::Allreduce,
            "reduce_scatter" => CollectiveOp::ReduceScatter,
            "reduce_scatter_block" => CollectiveOp::ReduceScatterBlock,
            "scan" => CollectiveOp::Scan,
            "exscan" => CollectiveOp::Exscan,
            _ if base.starts_with("neighbor_") || base.starts_with("ineighbor_") => CollectiveOp::Other,
            _ => return None,
        })
    }

    /// Whether the operation has a root that distributes or collects for all (`MPI_Bcast`,
    /// `MPI_Reduce`, `MPI_Gather(v)`, `MPI_Scatter(v)`).
    pub fn has_root(self) -> bool {
        matches!(
            self,
            CollectiveOp::Bcast
                | CollectiveOp::Reduce
                | CollectiveOp::Gather
                | CollectiveOp::Gatherv
                | CollectiveOp::Scatter
                | CollectiveOp::Scatterv
        )
    }

    /// The MPI standard name of the blocking form, e.g. `MPI_Allreduce`.
    pub fn mpi_name(self) -> &'static str {
        match self {
            CollectiveOp::Barrier => "MPI_Barrier",
            CollectiveOp::Bcast => "MPI_Bcast",
            CollectiveOp::Gather => "MPI_Gather",
            CollectiveOp::Gatherv => "MPI_Gatherv",
            CollectiveOp::Scatter => "MPI_Scatter",
            CollectiveOp::Scatterv => "MPI_Scatterv",
            CollectiveOp::Allgather => "MPI_Allgather",
            CollectiveOp::Allgatherv => "MPI_Allgatherv",
            CollectiveOp::Alltoall => "MPI_Alltoall",
            CollectiveOp::Alltoallv => "MPI_Alltoallv",
            CollectiveOp::Alltoallw => "MPI_Alltoallw",
            CollectiveOp::Reduce => "MPI_Reduce",
            CollectiveOp::Allreduce => "MPI_Allreduce",
            CollectiveOp::ReduceScatter => "MPI_Reduce_scatter",
            CollectiveOp::ReduceScatterBlock => "MPI_Reduce_scatter_block",
            CollectiveOp::Scan => "MPI_Scan",
            CollectiveOp::Exscan => "MPI_Exscan",
            CollectiveOp::Other => "MPI_Collective",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_standard_names() {
        assert_eq!(CallKind::classify("MPI_Isend"), CallKind::Isend);
        assert_eq!(CallKind::classify("MPI_Waitall"), CallKind::Completion);
        assert_eq!(CallKind::classify("MPI_Testsome"), CallKind::Completion);
        assert_eq!(CallKind::classify("MPI_Allreduce"), CallKind::Collective);
        assert_eq!(CallKind::classify("MPI_Iallreduce"), CallKind::Collective);
        assert_eq!(CallKind::classify("MPI_Comm_split"), CallKind::Communicator);
        assert_eq!(CallKind::classify("MPI_Comm_rank"), CallKind::Other);
        assert_eq!(CallKind::classify("MPI_Sendrecv"), CallKind::SendRecv);
        assert_eq!(CallKind::classify("PMPI_Recv"), CallKind::Recv);
        assert_eq!(CallKind::classify("MPI_Init"), CallKind::Lifecycle);
        assert_eq!(CallKind::classify("MPI_Wtime"), CallKind::Other);
    }

    #[test]
    fn collectives_by_name() {
        assert_eq!(CollectiveOp::from_name("MPI_Ialltoallv"), Some(CollectiveOp::Alltoallv));
        assert_eq!(
            CollectiveOp::from_name("MPI_Reduce_scatter_block"),
            Some(CollectiveOp::ReduceScatterBlock)
        );
        assert_eq!(CollectiveOp::from_name("MPI_Send"), None);
        assert_eq!(CollectiveOp::Bcast.mpi_name(), "MPI_Bcast");
    }

    #[test]
    fn rooted_collectives_have_a_root_in_every_form() {
        let rooted = |n: &str| CollectiveOp::from_name(n).is_some_and(CollectiveOp::has_root);
        for n in [
            "MPI_Bcast",
            "PMPI_Ibcast",
            "MPI_Reduce",
            "MPI_Ireduce",
            "MPI_Gatherv",
            "MPI_Scatter_init",
        ] {
            assert!(rooted(n), "{n}");
        }
        for n in [
            "MPI_Allreduce",
            "MPI_Allgather",
            "MPI_Barrier",
            "MPI_Reduce_scatter",
            "MPI_Scan",
            "MPI_Send",
        ] {
            assert!(!rooted(n), "{n}");
        }
    }
}
