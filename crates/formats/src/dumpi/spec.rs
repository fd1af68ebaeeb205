//! The DUMPI call table: every call id with its argument fields in stream order.
//!
//! DUMPI records carry no length field, so a reader must know the exact layout of every call
//! that may appear. This table was transcribed from the reading routines of sst-dumpi
//! (`dumpi/common/dumpiio.c`).

/// How one argument field is encoded (all integers big endian).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// 32-bit signed integer (counts, ranks, tags, requests).
    I32,
    /// 16-bit handle (communicator, datatype, group, info, file, window, ...).
    U16,
    /// 8-bit enumeration (operation, comparison result, thread level, ...).
    U8,
    /// 64-bit integer (file offsets, function addresses).
    U64,
    /// `i32` length, then that many `i32`.
    I32Arr,
    /// `i32` length, then that many `u16` handles.
    U16Arr,
    /// `i32` length, then that many `u8` values.
    U8Arr,
    /// `i32` rows, then per row an [`FieldKind::I32Arr`].
    I32Arr2,
    /// `i32` length, then that many bytes of text.
    Str,
    /// `i32` count, then that many [`FieldKind::Str`].
    StrArr,
    /// `i32` rows, then per row a [`FieldKind::StrArr`].
    StrArr2,
    /// One status (present only when the record mask says statuses were recorded).
    Status,
    /// An array of statuses (same presence rule).
    Statuses,
    /// As many [`FieldKind::Str`] as the preceding `argc` field says (`MPI_Init`).
    Argv,
    /// An [`FieldKind::I32Arr`] from the given trace version on; a single `i32` before it.
    I32ArrSince(u8, u8, u8),
}

/// One argument field of a call record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Field name as sst-dumpi (and `dumpi2ascii`) spells it.
    pub name: &'static str,
    /// Encoding.
    pub kind: FieldKind,
    /// Present only when the fields at these two indices (earlier in the record) are equal.
    pub only_if_equal: Option<(usize, usize)>,
}

/// One call id of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallSpec {
    /// The DUMPI call id.
    pub id: u16,
    /// The function name without the `MPI_` prefix, e.g. `Isend`.
    pub name: &'static str,
    /// Argument fields in stream order.
    pub fields: &'static [Field],
}

/// Call id of a user function entry record (`fn:u64` address).
pub const FUNCTION_ENTER: u16 = 291;
/// Call id of a user function exit record.
pub const FUNCTION_EXIT: u16 = 292;
/// Call id that ends the record stream.
pub const END_OF_STREAM: u16 = 293;

/// The spec of call `id`, or `None` for ids that cannot appear in a stream (unknown ids, 128
/// `Pcontrol` which has no reader in libundumpi, 290 the `ALL_FUNCTIONS` sentinel, 293).
pub fn call_spec(id: u16) -> Option<&'static CallSpec> {
    // Ids are dense except for 128 and 290, so the entry sits at `id`, `id - 1` or `id - 2`.
    let i = id as usize;
    [i, i.wrapping_sub(1), i.wrapping_sub(2)]
        .into_iter()
        .filter_map(|j| CALLS.get(j))
        .find(|c| c.id == id)
}

/// The spec of the call named `name` (without `MPI_`), e.g. `Waitall`.
pub fn call_by_name(name: &str) -> Option<&'static CallSpec> {
    CALLS.iter().find(|c| c.name == name)
}

const fn f(name: &'static str, kind: FieldKind, only_if_equal: Option<(usize, usize)>) -> Field {
    Field {
        name,
        kind,
        only_if_equal,
    }
}

use FieldKind::*;

macro_rules! calls {
    ($(($id:expr, $name:expr, $fields:expr),)*) => {
        /// Every call id that has a record body, sorted by id.
        pub static CALLS: &[CallSpec] = &[$(CallSpec { id: $id, name: $name, fields: $fields },)*];
    };
}

calls! {
    (0, "Send", &[f("count", I32, None), f("datatype", U16, None), f("dest", I32, None), f("tag", I32, None), f("comm", U16, None)]),
    (1, "Recv", &[f("count", I32, None), f("datatype", U16, None), f("source", I32, None), f("tag", I32, None), f("comm", U16, None), f("status", Status, None)]),
    (2, "Get_count", &[f("status", Status, None), f("datatype", U16, None), f("count", I32, None)]),
    (3, "Bsend", &[f("count", I32, None), f("datatype", U16, None), f("dest", I32, None), f("tag", I32, None), f("comm", U16, None)]),
    (4, "Ssend", &[f("count", I32, None), f("datatype", U16, None), f("dest", I32, None), f("tag", I32, None), f("comm", U16, None)]),
    (5, "Rsend", &[f("count", I32, None), f("datatype", U16, None), f("dest", I32, None), f("tag", I32, None), f("comm", U16, None)]),
    (6, "Buffer_attach", &[f("size", I32, None)]),
    (7, "Buffer_detach", &[f("size", I32, None)]),
    (8, "Isend", &[f("count", I32, None), f("datatype", U16, None), f("dest", I32, None), f("tag", I32, None), f("comm", U16, None), f("request", I32, None)]),
    (9, "Ibsend", &[f("count", I32, None), f("datatype", U16, None), f("dest", I32, None), f("tag", I32, None), f("comm", U16, None), f("request", I32, None)]),
    (10, "Issend", &[f("count", I32, None), f("datatype", U16, None), f("dest", I32, None), f("tag", I32, None), f("comm", U16, None), f("request", I32, None)]),
    (11, "Irsend", &[f("count", I32, None), f("datatype", U16, None), f("dest", I32, None), f("tag", I32, None), f("comm", U16, None), f("request", I32, None)]),
    (12, "Irecv", &[f("count", I32, None), f("datatype", U16, None), f("source", I32, None), f("tag", I32, None), f("comm", U16, None), f("request", I32, None)]),
    (13, "Wait", &[f("request", I32, None), f("status", Status, None)]),
    (14, "Test", &[f("request", I32, None), f("flag", I32, None), f("status", Status, None)]),
    (15, "Request_free", &[f("request", I32, None)]),
    (16, "Waitany", &[f("count", I32, None), f("requests", I32Arr, None), f("index", I32, None), f("status", Status, None)]),
    (17, "Testany", &[f("count", I32, None), f("requests", I32Arr, None), f("index", I32, None), f("flag", I32, None), f("status", Status, None)]),
    (18, "Waitall", &[f("count", I32, None), f("requests", I32Arr, None), f("statuses", Statuses, None)]),
    (19, "Testall", &[f("count", I32, None), f("requests", I32Arr, None), f("flag", I32, None), f("statuses", Statuses, None)]),
    (20, "Waitsome", &[f("count", I32, None), f("requests", I32Arr, None), f("outcount", I32, None), f("indices", I32Arr, None), f("statuses", Statuses, None)]),
    (21, "Testsome", &[f("count", I32, None), f("requests", I32Arr, None), f("outcount", I32, None), f("indices", I32Arr, None), f("statuses", Statuses, None)]),
    (22, "Iprobe", &[f("source", I32, None), f("tag", I32, None), f("comm", U16, None), f("flag", I32, None), f("status", Status, None)]),
    (23, "Probe", &[f("source", I32, None), f("tag", I32, None), f("comm", U16, None), f("status", Status, None)]),
    (24, "Cancel", &[f("request", I32, None)]),
    (25, "Test_cancelled", &[f("status", Status, None), f("cancelled", I32, None)]),
    (26, "Send_init", &[f("count", I32, None), f("datatype", U16, None), f("dest", I32, None), f("tag", I32, None), f("comm", U16, None), f("request", I32, None)]),
    (27, "Bsend_init", &[f("count", I32, None), f("datatype", U16, None), f("dest", I32, None), f("tag", I32, None), f("comm", U16, None), f("request", I32, None)]),
    (28, "Ssend_init", &[f("count", I32, None), f("datatype", U16, None), f("dest", I32, None), f("tag", I32, None), f("comm", U16, None), f("request", I32, None)]),
    (29, "Rsend_init", &[f("count", I32, None), f("datatype", U16, None), f("dest", I32, None), f("tag", I32, None), f("comm", U16, None), f("request", I32, None)]),
    (30, "Recv_init", &[f("count", I32, None), f("datatype", U16, None), f("source", I32, None), f("tag", I32, None), f("comm", U16, None), f("request", I32, None)]),
    (31, "Start", &[f("request", I32, None)]),
    (32, "Startall", &[f("count", I32, None), f("requests", I32Arr, None)]),
    (33, "Sendrecv", &[f("sendcount", I32, None), f("sendtype", U16, None), f("dest", I32, None), f("sendtag", I32, None), f("recvcount", I32, None), f("recvtype", U16, None), f("source", I32, None), f("recvtag", I32, None), f("comm", U16, None), f("status", Status, None)]),
    (34, "Sendrecv_replace", &[f("count", I32, None), f("datatype", U16, None), f("dest", I32, None), f("sendtag", I32, None), f("source", I32, None), f("recvtag", I32, None), f("comm", U16, None), f("status", Status, None)]),
    (35, "Type_contiguous", &[f("count", I32, None), f("oldtype", U16, None), f("newtype", U16, None)]),
    (36, "Type_vector", &[f("count", I32, None), f("blocklength", I32, None), f("stride", I32, None), f("oldtype", U16, None), f("newtype", U16, None)]),
    (37, "Type_hvector", &[f("count", I32, None), f("blocklength", I32, None), f("stride", I32, None), f("oldtype", U16, None), f("newtype", U16, None)]),
    (38, "Type_indexed", &[f("count", I32, None), f("lengths", I32Arr, None), f("indices", I32Arr, None), f("oldtype", U16, None), f("newtype", U16, None)]),
    (39, "Type_hindexed", &[f("count", I32, None), f("lengths", I32Arr, None), f("indices", I32Arr, None), f("oldtype", U16, None), f("newtype", U16, None)]),
    (40, "Type_struct", &[f("count", I32, None), f("lengths", I32Arr, None), f("indices", I32ArrSince(0, 6, 9), None), f("oldtypes", U16Arr, None), f("newtype", U16, None)]),
    (41, "Address", &[f("address", I32, None)]),
    (42, "Type_extent", &[f("datatype", U16, None), f("extent", I32, None)]),
    (43, "Type_size", &[f("datatype", U16, None), f("size", I32, None)]),
    (44, "Type_lb", &[f("datatype", U16, None), f("lb", I32, None)]),
    (45, "Type_ub", &[f("datatype", U16, None), f("ub", I32, None)]),
    (46, "Type_commit", &[f("datatype", U16, None)]),
    (47, "Type_free", &[f("datatype", U16, None)]),
    (48, "Get_elements", &[f("status", Status, None), f("datatype", U16, None), f("elements", I32, None)]),
    (49, "Pack", &[f("incount", I32, None), f("datatype", U16, None), f("outcount", I32, None), f("position.in", I32, None), f("position.out", I32, None), f("comm", U16, None)]),
    (50, "Unpack", &[f("incount", I32, None), f("position.in", I32, None), f("position.out", I32, None), f("outcount", I32, None), f("datatype", U16, None), f("comm", U16, None)]),
    (51, "Pack_size", &[f("incount", I32, None), f("datatype", U16, None), f("comm", U16, None), f("size", I32, None)]),
    (52, "Barrier", &[f("comm", U16, None)]),
    (53, "Bcast", &[f("count", I32, None), f("datatype", U16, None), f("root", I32, None), f("comm", U16, None)]),
    (54, "Gather", &[f("commrank", I32, None), f("sendcount", I32, None), f("sendtype", U16, None), f("root", I32, None), f("comm", U16, None), f("recvcount", I32, Some((0, 3))), f("recvtype", U16, Some((0, 3)))]),
    (55, "Gatherv", &[f("commrank", I32, None), f("commsize", I32, None), f("sendcount", I32, None), f("sendtype", U16, None), f("root", I32, None), f("comm", U16, None), f("recvcounts", I32Arr, Some((0, 4))), f("displs", I32Arr, Some((0, 4))), f("recvtype", U16, None)]),
    (56, "Scatter", &[f("commrank", I32, None), f("recvcount", I32, None), f("recvtype", U16, None), f("root", I32, None), f("comm", U16, None), f("sendcount", I32, Some((0, 3))), f("sendtype", U16, Some((0, 3)))]),
    (57, "Scatterv", &[f("commrank", I32, None), f("commsize", I32, None), f("sendtype", U16, None), f("recvcount", I32, None), f("recvtype", U16, None), f("root", I32, None), f("comm", U16, None), f("sendcounts", I32Arr, Some((0, 5))), f("displs", I32Arr, Some((0, 5)))]),
    (58, "Allgather", &[f("sendcount", I32, None), f("sendtype", U16, None), f("recvcount", I32, None), f("recvtype", U16, None), f("comm", U16, None)]),
    (59, "Allgatherv", &[f("commsize", I32, None), f("sendcount", I32, None), f("sendtype", U16, None), f("recvcounts", I32Arr, None), f("displs", I32Arr, None), f("recvtype", U16, None), f("comm", U16, None)]),
    (60, "Alltoall", &[f("sendcount", I32, None), f("sendtype", U16, None), f("recvcount", I32, None), f("recvtype", U16, None), f("comm", U16, None)]),
    (61, "Alltoallv", &[f("commsize", I32, None), f("sendcounts", I32Arr, None), f("senddispls", I32Arr, None), f("sendtype", U16, None), f("recvcounts", I32Arr, None), f("recvdispls", I32Arr, None), f("recvtype", U16, None), f("comm", U16, None)]),
    (62, "Reduce", &[f("count", I32, None), f("datatype", U16, None), f("op", U8, None), f("root", I32, None), f("comm", U16, None)]),
    (63, "Op_create", &[f("commute", I32, None), f("op", U8, None)]),
    (64, "Op_free", &[f("op", U8, None)]),
    (65, "Allreduce", &[f("count", I32, None), f("datatype", U16, None), f("op", U8, None), f("comm", U16, None)]),
    (66, "Reduce_scatter", &[f("commsize", I32, None), f("recvcounts", I32Arr, None), f("datatype", U16, None), f("op", U8, None), f("comm", U16, None)]),
    (67, "Scan", &[f("count", I32, None), f("datatype", U16, None), f("op", U8, None), f("comm", U16, None)]),
    (68, "Group_size", &[f("group", U16, None), f("size", I32, None)]),
    (69, "Group_rank", &[f("group", U16, None), f("rank", I32, None)]),
    (70, "Group_translate_ranks", &[f("group1", U16, None), f("count", I32, None), f("ranks1", I32Arr, None), f("group2", U16, None), f("ranks2", I32Arr, None)]),
    (71, "Group_compare", &[f("group1", U16, None), f("group2", U16, None), f("result", U8, None)]),
    (72, "Comm_group", &[f("comm", U16, None), f("group", U16, None)]),
    (73, "Group_union", &[f("group1", U16, None), f("group2", U16, None), f("newgroup", U16, None)]),
    (74, "Group_intersection", &[f("group1", U16, None), f("group2", U16, None), f("newgroup", U16, None)]),
    (75, "Group_difference", &[f("group1", U16, None), f("group2", U16, None), f("newgroup", U16, None)]),
    (76, "Group_incl", &[f("group", U16, None), f("count", I32, None), f("ranks", I32Arr, None), f("newgroup", U16, None)]),
    (77, "Group_excl", &[f("group", U16, None), f("count", I32, None), f("ranks", I32Arr, None), f("newgroup", U16, None)]),
    (78, "Group_range_incl", &[f("group", U16, None), f("count", I32, None), f("ranges", I32Arr2, None), f("newgroup", U16, None)]),
    (79, "Group_range_excl", &[f("group", U16, None), f("count", I32, None), f("ranges", I32Arr2, None), f("newgroup", U16, None)]),
    (80, "Group_free", &[f("group", U16, None)]),
    (81, "Comm_size", &[f("comm", U16, None), f("size", I32, None)]),
    (82, "Comm_rank", &[f("comm", U16, None), f("rank", I32, None)]),
    (83, "Comm_compare", &[f("comm1", U16, None), f("comm2", U16, None), f("result", U8, None)]),
    (84, "Comm_dup", &[f("oldcomm", U16, None), f("newcomm", U16, None)]),
    (85, "Comm_create", &[f("oldcomm", U16, None), f("group", U16, None), f("newcomm", U16, None)]),
    (86, "Comm_split", &[f("oldcomm", U16, None), f("color", I32, None), f("key", I32, None), f("newcomm", U16, None)]),
    (87, "Comm_free", &[f("comm", U16, None)]),
    (88, "Comm_test_inter", &[f("comm", U16, None), f("inter", I32, None)]),
    (89, "Comm_remote_size", &[f("comm", U16, None), f("size", I32, None)]),
    (90, "Comm_remote_group", &[f("comm", U16, None), f("group", U16, None)]),
    (91, "Intercomm_create", &[f("localcomm", U16, None), f("localleader", I32, None), f("remotecomm", U16, None), f("remoteleader", I32, None), f("tag", I32, None), f("newcomm", U16, None)]),
    (92, "Intercomm_merge", &[f("comm", U16, None), f("high", I32, None), f("newcomm", U16, None)]),
    (93, "Keyval_create", &[f("key", U16, None)]),
    (94, "Keyval_free", &[f("key", U16, None)]),
    (95, "Attr_put", &[f("comm", U16, None), f("key", I32, None)]),
    (96, "Attr_get", &[f("comm", U16, None), f("key", I32, None), f("flag", I32, None)]),
    (97, "Attr_delete", &[f("comm", U16, None), f("key", I32, None)]),
    (98, "Topo_test", &[f("comm", U16, None), f("topo", U8, None)]),
    (99, "Cart_create", &[f("oldcomm", U16, None), f("ndim", I32, None), f("dims", I32Arr, None), f("periods", I32Arr, None), f("reorder", I32, None), f("newcomm", U16, None)]),
    (100, "Dims_create", &[f("nodes", I32, None), f("ndim", I32, None), f("dims.in", I32Arr, None), f("dims.out", I32Arr, None)]),
    (101, "Graph_create", &[f("numedges", I32, None), f("oldcomm", U16, None), f("nodes", I32, None), f("index", I32Arr, None), f("edges", I32Arr, None), f("reorder", I32, None), f("newcomm", U16, None)]),
    (102, "Graphdims_get", &[f("comm", U16, None), f("nodes", I32, None), f("edges", I32, None)]),
    (103, "Graph_get", &[f("totedges", I32, None), f("totnodes", I32, None), f("comm", U16, None), f("maxindex", I32, None), f("maxedges", I32, None), f("index", I32Arr, None), f("edges", I32Arr, None)]),
    (104, "Cartdim_get", &[f("comm", U16, None), f("ndim", I32, None)]),
    (105, "Cart_get", &[f("ndim", I32, None), f("comm", U16, None), f("maxdims", I32, None), f("dims", I32Arr, None), f("periods", I32Arr, None), f("coords", I32ArrSince(0, 6, 8), None)]),
    (106, "Cart_rank", &[f("ndim", I32, None), f("comm", U16, None), f("coords", I32Arr, None), f("rank", I32, None)]),
    (107, "Cart_coords", &[f("ndim", I32, None), f("comm", U16, None), f("rank", I32, None), f("maxdims", I32, None), f("coords", I32Arr, None)]),
    (108, "Graph_neighbors_count", &[f("comm", U16, None), f("rank", I32, None), f("nneigh", I32, None)]),
    (109, "Graph_neighbors", &[f("nneigh", I32, None), f("comm", U16, None), f("rank", I32, None), f("maxneighbors", I32, None), f("neighbors", I32Arr, None)]),
    (110, "Cart_shift", &[f("comm", U16, None), f("direction", I32, None), f("displ", I32, None), f("source", I32, None), f("dest", I32, None)]),
    (111, "Cart_sub", &[f("ndim", I32, None), f("oldcomm", U16, None), f("remain_dims", I32Arr, None), f("newcomm", U16, None)]),
    (112, "Cart_map", &[f("comm", U16, None), f("ndim", I32, None), f("dims", I32Arr, None), f("period", I32Arr, None), f("newrank", I32, None)]),
    (113, "Graph_map", &[f("numedges", I32, None), f("comm", U16, None), f("nodes", I32, None), f("index", I32Arr, None), f("edges", I32Arr, None), f("newrank", I32, None)]),
    (114, "Get_processor_name", &[f("name", Str, None), f("resultlen", I32, None)]),
    (115, "Get_version", &[f("version", I32, None), f("subversion", I32, None)]),
    (116, "Errhandler_create", &[f("errhandler", U16, None)]),
    (117, "Errhandler_set", &[f("comm", U16, None), f("errhandler", U16, None)]),
    (118, "Errhandler_get", &[f("comm", U16, None), f("errhandler", U16, None)]),
    (119, "Errhandler_free", &[f("errhandler", U16, None)]),
    (120, "Error_string", &[f("errorcode", I32, None), f("errorstring", Str, None), f("resultlen", I32, None)]),
    (121, "Error_class", &[f("errorcode", I32, None), f("errorclass", I32, None)]),
    (122, "Wtime", &[]),
    (123, "Wtick", &[]),
    (124, "Init", &[f("argc", I32, None), f("argv", Argv, None)]),
    (125, "Finalize", &[]),
    (126, "Initialized", &[f("result", I32, None)]),
    (127, "Abort", &[f("comm", U16, None), f("errorcode", I32, None)]),
    (129, "Close_port", &[f("portname", Str, None)]),
    (130, "Comm_accept", &[f("portname", Str, None), f("info", U16, None), f("root", I32, None), f("oldcomm", U16, None), f("newcomm", U16, None)]),
    (131, "Comm_connect", &[f("portname", Str, None), f("info", U16, None), f("root", I32, None), f("oldcomm", U16, None), f("newcomm", U16, None)]),
    (132, "Comm_disconnect", &[f("comm", U16, None)]),
    (133, "Comm_get_parent", &[f("parent", U16, None)]),
    (134, "Comm_join", &[f("fd", I32, None), f("comm", U16, None)]),
    (135, "Comm_spawn", &[f("oldcommrank", I32, None), f("root", I32, None), f("oldcomm", U16, None), f("newcomm", U16, None), f("command", Str, Some((0, 1))), f("argv", StrArr, Some((0, 1))), f("maxprocs", I32, Some((0, 1))), f("info", U16, Some((0, 1))), f("errcodes", I32Arr, Some((0, 1)))]),
    (136, "Comm_spawn_multiple", &[f("totprocs", I32, None), f("oldcommrank", I32, None), f("root", I32, None), f("oldcomm", U16, None), f("newcomm", U16, None), f("count", I32, Some((1, 2))), f("commands", StrArr, Some((1, 2))), f("argvs", StrArr2, Some((1, 2))), f("maxprocs", I32Arr, Some((1, 2))), f("info", U16Arr, Some((1, 2))), f("errcodes", I32Arr, Some((1, 2)))]),
    (137, "Lookup_name", &[f("servicename", Str, None), f("info", U16, None), f("portname", Str, None)]),
    (138, "Open_port", &[f("info", U16, None), f("portname", Str, None)]),
    (139, "Publish_name", &[f("servicename", Str, None), f("info", U16, None), f("portname", Str, None)]),
    (140, "Unpublish_name", &[f("servicename", Str, None), f("info", U16, None), f("portname", Str, None)]),
    (141, "Accumulate", &[f("origincount", I32, None), f("origintype", U16, None), f("targetrank", I32, None), f("targetdisp", I32, None), f("targetcount", I32, None), f("targettype", U16, None), f("op", U8, None), f("win", U16, None)]),
    (142, "Get", &[f("origincount", I32, None), f("origintype", U16, None), f("targetrank", I32, None), f("targetdisp", I32, None), f("targetcount", I32, None), f("targettype", U16, None), f("win", U16, None)]),
    (143, "Put", &[f("origincount", I32, None), f("origintype", U16, None), f("targetrank", I32, None), f("targetdisp", I32, None), f("targetcount", I32, None), f("targettype", U16, None), f("win", U16, None)]),
    (144, "Win_complete", &[f("win", U16, None)]),
    (145, "Win_create", &[f("size", I32, None), f("dispunit", I32, None), f("info", U16, None), f("comm", U16, None), f("win", U16, None)]),
    (146, "Win_fence", &[f("assertion", U8, None), f("win", U16, None)]),
    (147, "Win_free", &[f("win", U16, None)]),
    (148, "Win_get_group", &[f("win", U16, None), f("group", U16, None)]),
    (149, "Win_lock", &[f("locktype", U8, None), f("winrank", I32, None), f("assertion", U8, None), f("win", U16, None)]),
    (150, "Win_post", &[f("group", U16, None), f("assertion", U8, None), f("win", U16, None)]),
    (151, "Win_start", &[f("group", U16, None), f("assertion", U8, None), f("win", U16, None)]),
    (152, "Win_test", &[f("win", U16, None), f("flag", I32, None)]),
    (153, "Win_unlock", &[f("winrank", I32, None), f("win", U16, None)]),
    (154, "Win_wait", &[f("win", U16, None)]),
    (155, "Alltoallw", &[f("commsize", I32, None), f("sendcounts", I32Arr, None), f("senddispls", I32Arr, None), f("sendtypes", U16Arr, None), f("recvcounts", I32Arr, None), f("recvdispls", I32Arr, None), f("recvtypes", U16Arr, None), f("comm", U16, None)]),
    (156, "Exscan", &[f("count", I32, None), f("datatype", U16, None), f("op", U8, None), f("comm", U16, None)]),
    (157, "Add_error_class", &[f("errorclass", I32, None)]),
    (158, "Add_error_code", &[f("errorclass", I32, None), f("errorcode", I32, None)]),
    (159, "Add_error_string", &[f("errorcode", I32, None), f("errorstring", Str, None)]),
    (160, "Comm_call_errhandler", &[f("comm", U16, None), f("errorcode", I32, None)]),
    (161, "Comm_create_keyval", &[f("keyval", U16, None)]),
    (162, "Comm_delete_attr", &[f("comm", U16, None), f("keyval", U16, None)]),
    (163, "Comm_free_keyval", &[f("keyval", U16, None)]),
    (164, "Comm_get_attr", &[f("comm", U16, None), f("keyval", U16, None), f("flag", I32, None)]),
    (165, "Comm_get_name", &[f("comm", U16, None), f("name", Str, None), f("resultlen", I32, None)]),
    (166, "Comm_set_attr", &[f("comm", U16, None), f("keyval", U16, None)]),
    (167, "Comm_set_name", &[f("comm", U16, None), f("name", Str, None)]),
    (168, "File_call_errhandler", &[f("file", U16, None), f("errorcode", I32, None)]),
    (169, "Grequest_complete", &[f("request", I32, None)]),
    (170, "Grequest_start", &[f("request", I32, None)]),
    (171, "Init_thread", &[f("argc", I32, None), f("argv", Argv, None), f("required", U8, None), f("provided", U8, None)]),
    (172, "Is_thread_main", &[f("flag", I32, None)]),
    (173, "Query_thread", &[f("supported", U8, None)]),
    (174, "Status_set_cancelled", &[f("status", Status, None), f("flag", I32, None)]),
    (175, "Status_set_elements", &[f("status", Status, None), f("datatype", U16, None), f("count", I32, None)]),
    (176, "Type_create_keyval", &[f("keyval", U16, None)]),
    (177, "Type_delete_attr", &[f("datatype", U16, None), f("keyval", U16, None)]),
    (178, "Type_dup", &[f("oldtype", U16, None), f("newtype", U16, None)]),
    (179, "Type_free_keyval", &[f("keyval", U16, None)]),
    (180, "Type_get_attr", &[f("datatype", U16, None), f("keyval", U16, None), f("flag", I32, None)]),
    (181, "Type_get_contents", &[f("numdatatypes", I32, None), f("numaddresses", I32, None), f("numintegers", I32, None), f("datatype", U16, None), f("maxintegers", I32, None), f("maxaddresses", I32, None), f("maxdatatypes", I32, None), f("arrintegers", I32Arr, None), f("arraddresses", I32Arr, None), f("arrdatatypes", U16Arr, None)]),
    (182, "Type_get_envelope", &[f("datatype", U16, None), f("numintegers", I32, None), f("numaddresses", I32, None), f("numdatatypes", I32, None), f("combiner", U8, None)]),
    (183, "Type_get_name", &[f("datatype", U16, None), f("name", Str, None), f("resultlen", I32, None)]),
    (184, "Type_set_attr", &[f("datatype", U16, None), f("keyval", U16, None)]),
    (185, "Type_set_name", &[f("datatype", U16, None), f("name", Str, None)]),
    (186, "Type_match_size", &[f("typeclass", U8, None), f("size", I32, None), f("datatype", U16, None)]),
    (187, "Win_call_errhandler", &[f("win", U16, None), f("errorcode", I32, None)]),
    (188, "Win_create_keyval", &[f("keyval", U16, None)]),
    (189, "Win_delete_attr", &[f("win", U16, None), f("keyval", U16, None)]),
    (190, "Win_free_keyval", &[f("keyval", U16, None)]),
    (191, "Win_get_attr", &[f("win", U16, None), f("keyval", U16, None), f("flag", I32, None)]),
    (192, "Win_get_name", &[f("win", U16, None), f("name", Str, None), f("resultlen", I32, None)]),
    (193, "Win_set_attr", &[f("win", U16, None), f("keyval", U16, None)]),
    (194, "Win_set_name", &[f("win", U16, None), f("name", Str, None)]),
    (195, "Alloc_mem", &[f("size", I32, None), f("info", U16, None)]),
    (196, "Comm_create_errhandler", &[f("errhandler", U16, None)]),
    (197, "Comm_get_errhandler", &[f("comm", U16, None), f("errhandler", U16, None)]),
    (198, "Comm_set_errhandler", &[f("comm", U16, None), f("errhandler", U16, None)]),
    (199, "File_create_errhandler", &[f("errhandler", U16, None)]),
    (200, "File_get_errhandler", &[f("file", U16, None), f("errhandler", U16, None)]),
    (201, "File_set_errhandler", &[f("file", U16, None), f("errhandler", U16, None)]),
    (202, "Finalized", &[f("flag", I32, None)]),
    (203, "Free_mem", &[]),
    (204, "Get_address", &[f("address", I32, None)]),
    (205, "Info_create", &[f("info", U16, None)]),
    (206, "Info_delete", &[f("info", U16, None), f("key", Str, None)]),
    (207, "Info_dup", &[f("oldinfo", U16, None), f("newinfo", U16, None)]),
    (208, "Info_free", &[f("info", U16, None)]),
    (209, "Info_get", &[f("info", U16, None), f("key", Str, None), f("valuelength", I32, None), f("value", Str, None), f("flag", I32, None)]),
    (210, "Info_get_nkeys", &[f("info", U16, None), f("nkeys", I32, None)]),
    (211, "Info_get_nthkey", &[f("info", U16, None), f("n", I32, None), f("key", Str, None)]),
    (212, "Info_get_valuelen", &[f("info", U16, None), f("key", Str, None), f("valuelen", I32, None), f("flag", I32, None)]),
    (213, "Info_set", &[f("info", U16, None), f("key", Str, None), f("value", Str, None)]),
    (214, "Pack_external", &[f("datarep", Str, None), f("incount", I32, None), f("intype", U16, None), f("outcount", I32, None), f("position.in", I32, None), f("position.out", I32, None)]),
    (215, "Pack_external_size", &[f("datarep", Str, None), f("incount", I32, None), f("datatype", U16, None), f("size", I32, None)]),
    (216, "Request_get_status", &[f("request", I32, None), f("flag", I32, None), f("status", Status, None)]),
    (217, "Type_create_darray", &[f("size", I32, None), f("rank", I32, None), f("ndims", I32, None), f("gsizes", I32Arr, None), f("distribs", U8Arr, None), f("dargs", I32Arr, None), f("psizes", I32Arr, None), f("order", U8, None), f("oldtype", U16, None), f("newtype", U16, None)]),
    (218, "Type_create_hindexed", &[f("count", I32, None), f("blocklengths", I32Arr, None), f("displacements", I32Arr, None), f("oldtype", U16, None), f("newtype", U16, None)]),
    (219, "Type_create_hvector", &[f("count", I32, None), f("blocklength", I32, None), f("stride", I32, None), f("oldtype", U16, None), f("newtype", U16, None)]),
    (220, "Type_create_indexed_block", &[f("count", I32, None), f("blocklength", I32, None), f("displacments", I32Arr, None), f("oldtype", U16, None), f("newtype", U16, None)]),
    (221, "Type_create_resized", &[f("oldtype", U16, None), f("lb", I32, None), f("extent", I32, None), f("newtype", U16, None)]),
    (222, "Type_create_struct", &[f("count", I32, None), f("blocklengths", I32Arr, None), f("displacements", I32Arr, None), f("oldtypes", U16Arr, None), f("newtype", U16, None)]),
    (223, "Type_create_subarray", &[f("ndims", I32, None), f("sizes", I32Arr, None), f("subsizes", I32Arr, None), f("starts", I32Arr, None), f("order", U8, None), f("oldtype", U16, None), f("newtype", U16, None)]),
    (224, "Type_get_extent", &[f("datatype", U16, None), f("lb", I32, None), f("extent", I32, None)]),
    (225, "Type_get_true_extent", &[f("datatype", U16, None), f("lb", I32, None), f("extent", I32, None)]),
    (226, "Unpack_external", &[f("datarep", Str, None), f("insize", I32, None), f("position.in", I32, None), f("position.out", I32, None), f("outcount", I32, None), f("datatype", U16, None)]),
    (227, "Win_create_errhandler", &[f("errhandler", U16, None)]),
    (228, "Win_get_errhandler", &[f("win", U16, None), f("errhandler", U16, None)]),
    (229, "Win_set_errhandler", &[f("win", U16, None), f("errhandler", U16, None)]),
    (230, "File_open", &[f("comm", U16, None), f("filename", Str, None), f("amode", U8, None), f("info", U16, None), f("file", U16, None)]),
    (231, "File_close", &[f("file", U16, None)]),
    (232, "File_delete", &[f("filename", Str, None), f("info", U16, None)]),
    (233, "File_set_size", &[f("file", U16, None), f("size", U64, None)]),
    (234, "File_preallocate", &[f("file", U16, None), f("size", U64, None)]),
    (235, "File_get_size", &[f("file", U16, None), f("size", U64, None)]),
    (236, "File_get_group", &[f("file", U16, None), f("group", U16, None)]),
    (237, "File_get_amode", &[f("file", U16, None), f("amode", U8, None)]),
    (238, "File_set_info", &[f("file", U16, None), f("info", U16, None)]),
    (239, "File_get_info", &[f("file", U16, None), f("info", U16, None)]),
    (240, "File_set_view", &[f("file", U16, None), f("offset", U64, None), f("hosttype", U16, None), f("filetype", U16, None), f("datarep", Str, None), f("info", U16, None)]),
    (241, "File_get_view", &[f("file", U16, None), f("offset", U64, None), f("hosttype", U16, None), f("filetype", U16, None), f("datarep", Str, None)]),
    (242, "File_read_at", &[f("file", U16, None), f("offset", U64, None), f("count", I32, None), f("datatype", U16, None), f("status", Status, None)]),
    (243, "File_read_at_all", &[f("file", U16, None), f("offset", U64, None), f("count", I32, None), f("datatype", U16, None), f("status", Status, None)]),
    (244, "File_write_at", &[f("file", U16, None), f("offset", U64, None), f("count", I32, None), f("datatype", U16, None), f("status", Status, None)]),
    (245, "File_write_at_all", &[f("file", U16, None), f("offset", U64, None), f("count", I32, None), f("datatype", U16, None), f("status", Status, None)]),
    (246, "File_iread_at", &[f("file", U16, None), f("offset", U64, None), f("count", I32, None), f("datatype", U16, None), f("request", I32, None)]),
    (247, "File_iwrite_at", &[f("file", U16, None), f("offset", U64, None), f("count", I32, None), f("datatype", U16, None), f("request", I32, None)]),
    (248, "File_read", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None), f("status", Status, None)]),
    (249, "File_read_all", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None), f("status", Status, None)]),
    (250, "File_write", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None), f("status", Status, None)]),
    (251, "File_write_all", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None), f("status", Status, None)]),
    (252, "File_iread", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None), f("request", I32, None)]),
    (253, "File_iwrite", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None), f("request", I32, None)]),
    (254, "File_seek", &[f("file", U16, None), f("offset", U64, None), f("whence", U8, None)]),
    (255, "File_get_position", &[f("file", U16, None), f("offset", U64, None)]),
    (256, "File_get_byte_offset", &[f("file", U16, None), f("offset", U64, None), f("bytes", U64, None)]),
    (257, "File_read_shared", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None), f("status", Status, None)]),
    (258, "File_write_shared", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None), f("status", Status, None)]),
    (259, "File_iread_shared", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None), f("request", I32, None)]),
    (260, "File_iwrite_shared", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None), f("request", I32, None)]),
    (261, "File_read_ordered", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None), f("status", Status, None)]),
    (262, "File_write_ordered", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None), f("status", Status, None)]),
    (263, "File_seek_shared", &[f("file", U16, None), f("offset", U64, None), f("whence", U8, None)]),
    (264, "File_get_position_shared", &[f("file", U16, None), f("offset", U64, None)]),
    (265, "File_read_at_all_begin", &[f("file", U16, None), f("offset", U64, None), f("count", I32, None), f("datatype", U16, None)]),
    (266, "File_read_at_all_end", &[f("file", U16, None), f("status", Status, None)]),
    (267, "File_write_at_all_begin", &[f("file", U16, None), f("offset", U64, None), f("count", I32, None), f("datatype", U16, None)]),
    (268, "File_write_at_all_end", &[f("file", U16, None), f("status", Status, None)]),
    (269, "File_read_all_begin", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None)]),
    (270, "File_read_all_end", &[f("file", U16, None), f("status", Status, None)]),
    (271, "File_write_all_begin", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None)]),
    (272, "File_write_all_end", &[f("file", U16, None), f("status", Status, None)]),
    (273, "File_read_ordered_begin", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None)]),
    (274, "File_read_ordered_end", &[f("file", U16, None), f("status", Status, None)]),
    (275, "File_write_ordered_begin", &[f("file", U16, None), f("count", I32, None), f("datatype", U16, None)]),
    (276, "File_write_ordered_end", &[f("file", U16, None), f("status", Status, None)]),
    (277, "File_get_type_extent", &[f("file", U16, None), f("datatype", U16, None), f("extent", I32, None)]),
    (278, "Register_datarep", &[f("name", Str, None)]),
    (279, "File_set_atomicity", &[f("file", U16, None), f("flag", I32, None)]),
    (280, "File_get_atomicity", &[f("file", U16, None), f("flag", I32, None)]),
    (281, "File_sync", &[f("file", U16, None)]),
    (282, "DUMPIO_Test", &[f("request", I32, None), f("flag", I32, None), f("status", Status, None)]),
    (283, "DUMPIO_Wait", &[f("request", I32, None), f("status", Status, None)]),
    (284, "DUMPIO_Testall", &[f("count", I32, None), f("requests", I32Arr, None), f("flag", I32, None), f("statuses", Statuses, None)]),
    (285, "DUMPIO_Waitall", &[f("count", I32, None), f("requests", I32Arr, None), f("statuses", Statuses, None)]),
    (286, "DUMPIO_Testany", &[f("count", I32, None), f("requests", I32Arr, None), f("flag", I32, None), f("index", I32, None), f("statuses", Statuses, None)]),
    (287, "DUMPIO_Waitany", &[f("count", I32, None), f("requests", I32Arr, None), f("index", I32, None), f("statuses", Statuses, None)]),
    (288, "DUMPIO_Waitsome", &[f("count", I32, None), f("requests", I32Arr, None), f("outcount", I32, None), f("indices", I32Arr, None), f("statuses", Statuses, None)]),
    (289, "DUMPIO_Testsome", &[f("count", I32, None), f("requests", I32Arr, None), f("outcount", I32, None), f("indices", I32Arr, None), f("statuses", Statuses, None)]),
    (291, "Function_enter", &[f("fn", U64, None)]),
    (292, "Function_exit", &[f("fn", U64, None)]),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_finds_its_own_entry() {
        assert!(CALLS.windows(2).all(|w| w[0].id < w[1].id), "table sorted by id");
        for c in CALLS {
            assert_eq!(call_spec(c.id).map(|s| s.name), Some(c.name));
        }
        for missing in [128, 290, END_OF_STREAM, 294, u16::MAX] {
            assert!(call_spec(missing).is_none(), "{missing}");
        }
        assert_eq!(call_spec(0).map(|c| c.name), Some("Send"));
        assert_eq!(call_by_name("Waitall").map(|c| c.id), Some(18));
        assert_eq!(call_spec(FUNCTION_EXIT).map(|c| c.name), Some("Function_exit"));
    }
}
