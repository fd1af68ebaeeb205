//! An executable MPI performance skeleton in C from a compressed logical trace (Logicalization §2: the
//! paper's end goal). The program creates the topology as an MPI Cartesian communicator (grids,
//! tori, lines, stencils; dimensions reversed so MPI's row-major coordinates are tracelogic's)
//! or a distributed graph communicator (other families), then replays the compressed program:
//! loops as `for` loops, every call with its recorded function, direction, tag and message size
//! (sizes that vary inside a loop come from the same constant/range/cycle/list forms), and the
//! mean compute gap before each call as a timed busy-wait (scaled by the first command-line
//! argument, default 1; 0 replays communication only).
//!
//! Rank `r` of the skeleton plays topology node `r`. A direction produces a call only where that
//! neighbour exists (the expansion rule of [`crate::logical::expand_records`]); the direction
//! `self` ([`crate::logical::SELF_DIRECTION`]) leads a node to itself where the rank playing it
//! messaged itself, and is no edge of a graph communicator; an offset direction (a peer outside
//! the topology, [`crate::logical::is_offset_direction`]) leads to the node at that offset where
//! it exists and its rank used it, and is no edge either. Requests live in
//! a ring indexed by the logical record counter, so a completion finds the requests it completes
//! by their record offsets. Choices: `MPI_Bsend`/`MPI_Rsend` replay as `MPI_Send`, `MPI_Test*`
//! and `MPI_Wait{any,some}` as `MPI_Waitall`/`MPI_Wait` (a run of such calls, one record of the
//! logical trace, as one `MPI_Waitall` of the requests it completed), collectives on smaller
//! communicators run on communicators split off at start ([`comms`]: a grid row, a pair) or,
//! where the logical trace does not name the members, on each rank alone; reductions use
//! `MPI_BOR` on `MPI_BYTE`, v-collectives run as their regular form with the rank's own sizes.
//! Receives keep the recorded tag where the run's tags can be replayed, else match by order
//! (`MPI_ANY_TAG`), posted at the largest size when by order a recorded size would truncate
//! ([`fit`]).

use crate::compress::{call_text, Node, Program, Values};
use crate::logical::{offset_node, LogicalCall, LogicalTrace, Partner, SELF_DIRECTION};
use std::fmt::Write as _;
use tracelogic_graph::{Direction, TopologySpec};
use tracelogic_model::{CallKind, CollectiveOp, P2pDir};

mod comms;
mod fit;
mod operation;
use comms::{Placement, Subcomms};
pub use fit::{receives_fit_in_order, OrderMatching, ReceiveOp, FIT_CHECK_LIMIT};
use operation::emit_operation;

/// What the emission of one skeleton carries from call to call.
struct Emission {
    /// The split communicators collectives on smaller communicators run on.
    subs: Subcomms,
    /// Receives keep the recorded tag ([`receive_tags_kept`] and the run's tags consistent, or
    /// the program's tags match every message to a receive: [`OrderMatching::tags_match`]).
    keep_tags: bool,
    /// Receives are posted at `MAXBYTES` ([`receives_fit_in_order`] could not tell whether a
    /// recorded size would truncate, or some receives are from any source).
    receive_at_most: bool,
    /// Receive operations posted at the largest message they take, not their recorded size
    /// ([`OrderMatching::too_small_by_order`] or `too_small_by_tag`, as receives match).
    widen: std::collections::HashMap<ReceiveOp, u64>,
    /// Receives from any source are counted and those beyond each rank's matched number post
    /// from `MPI_PROC_NULL` ([`OrderMatching::any_source_matched`]).
    cancel_surplus: bool,
}

/// True when every direction has the same opposite at every node (grids, tori, stencils,
/// hypercubes, rings, all-to-all, butterflies). Then a recorded receive tag, which usually names
/// the sender's direction, means the same on every rank and the skeleton keeps it; in trees and
/// stars (a child's parent direction is the parent's left or right child direction) it does not,
/// and the skeleton receives with `MPI_ANY_TAG` (messages from one source still match in order).
/// The skeleton also receives with `MPI_ANY_TAG` when the run's tags are not the same on every
/// rank ([`LogicalTrace::tags_consistent`]; NAS BT tags messages by cell).
pub fn receive_tags_kept(spec: &TopologySpec) -> bool {
    let n = spec.num_nodes();
    spec.directions().iter().all(|d| {
        let mut seen: Option<Direction> = None;
        (0..n).filter(|&u| spec.neighbour(u, d).is_some()).all(|u| {
            let o = spec.opposite(u, d);
            match (&seen, o) {
                (None, o) => {
                    seen = o;
                    true
                }
                (Some(a), Some(b)) => *a == b,
                (Some(_), None) => false,
            }
        })
    })
}

/// Largest receive-ring memory (ring slots × largest message) before the ring shares one buffer.
const RING_MEMORY_LIMIT: u64 = 256 << 20;

/// The C source of the skeleton of `logical`, replaying `program` (its compressed form).
pub fn skeleton_c(logical: &LogicalTrace, program: &Program) -> Result<String, String> {
    // Request slots per record: one, or as many as a start of several persistent requests
    // (`MPI_Startall`, one record of several operations, docs/logical.md) posts, each
    // operation then an `MPI_Isend`/`MPI_Irecv` of its own slot.
    let slots = logical
        .records
        .iter()
        .filter(|r| matches!(r.call.kind, CallKind::Isend | CallKind::Irecv))
        .map(|r| r.call.ops.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let placement = &logical.placement;
    let spec = &placement.spec;
    let n = spec.num_nodes();
    let dirs = spec.directions();
    // Nodes where `self` exists (the node of each rank that messaged itself).
    let mut self_nodes = vec![false; n as usize];
    for &r in &logical.self_ranks {
        if let Some(at) = placement
            .node_of_rank
            .get(r as usize)
            .and_then(|&u| self_nodes.get_mut(u as usize))
        {
            *at = true;
        }
    }
    let with_self = !logical.self_ranks.is_empty();
    // Offset directions (peers outside the topology), after `self`: the node at that offset,
    // at the nodes whose ranks use it.
    let offsets = &logical.offset_ranks;
    let topology_dirs = dirs.len();
    let names = direction_names(logical);
    let rank_of_node = placement.rank_of_node();
    let max_bytes = logical
        .records
        .iter()
        .flat_map(|r| {
            let by_class = r.call.ops.iter().flat_map(|o| o.bytes_by_class.iter().map(|c| c.bytes));
            r.call.sizes().into_iter().chain(by_class)
        })
        .max()
        .unwrap_or(0)
        .max(8);
    let max_offset = logical
        .records
        .iter()
        .flat_map(|r| r.call.completes.iter().copied())
        .max()
        .unwrap_or(0) as u64;
    let ring = (max_offset + 1).next_power_of_two().max(16);
    let shared_recv = ring.saturating_mul(slots as u64).saturating_mul(max_bytes) > RING_MEMORY_LIMIT;
    let coll_bytes = logical
        .records
        .iter()
        .filter_map(|r| r.call.collective.as_ref())
        .map(|c| c.bytes_sent.max(c.bytes_recv))
        .max()
        .unwrap_or(0)
        .max(8);

    let mut c = String::new();
    // A run without point-to-point calls has no topology: its placement is only the ranks in
    // their own order, so the skeleton names none and creates no Cartesian communicator.
    let collectives_only = logical.collectives_only();
    let label = logical.topology_text();
    let _ = writeln!(
        c,
        "/* MPI performance skeleton generated by tracelogic from {} ({} ranks, {}).\n * Logical trace from rank(s) {:?}; {} records, {} after loop compression.\n * Build: mpicc -O2 -o skeleton this.c    Run: mpirun -np {n} ./skeleton [compute-scale]\n */",
        sanitize(&logical.source),
        logical.ranks,
        label,
        logical.ranks_used,
        program.raw_length,
        program.compressed_length
    );
    c.push_str("#include <mpi.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n");
    let _ = writeln!(
        c,
        "#define NRANKS {n}\n#define NDIRS {}\n#define NTOPO {}\n#define RING {ring}UL\n#define SLOTS {slots}UL",
        names.len().max(1),
        topology_dirs.min(names.len().max(1))
    );
    let _ = writeln!(
        c,
        "#define MAXBYTES {max_bytes}ULL\n#define COLLBYTES {coll_bytes}ULL\n"
    );
    let _ = writeln!(c, "/* Directions: {} */", names.join(", "));
    c.push_str("static const int neighbour[NRANKS][NDIRS] = {\n");
    for u in 0..n {
        let mut row: Vec<String> = dirs
            .iter()
            .map(|d| spec.neighbour(u, d).map_or("-1".into(), |v| v.to_string()))
            .collect();
        if with_self {
            row.push(if self_nodes[u as usize] {
                u.to_string()
            } else {
                "-1".into()
            });
        }
        for o in offsets {
            let used = rank_of_node
                .get(u as usize)
                .is_some_and(|r| o.ranks.binary_search(r).is_ok());
            let target = offset_node(spec, u, &o.direction).filter(|&v| used && v != u);
            row.push(target.map_or("-1".into(), |v| v.to_string()));
        }
        if row.is_empty() {
            row.push("-1".into());
        }
        let _ = writeln!(c, "    {{{}}},", row.join(", "));
    }
    c.push_str("};\n\n");
    c.push_str(RUNTIME);
    if shared_recv {
        c.push_str("static inline char *rbuf_k(int k) { (void)k; return recvbuf; }\n");
    } else {
        c.push_str(
            "static inline char *rbuf_k(int k) { return recvbuf + (size_t)((pos % RING) * SLOTS + k) * MAXBYTES; }\n",
        );
    }
    c.push_str("static inline char *rbuf(void) { return rbuf_k(0); }\n");
    // Size tables of list-valued sequences.
    let mut tables = String::new();
    let mut body = String::new();
    let mut counters = Vec::new();
    let matching = receives_fit_in_order(logical, program);
    let keep_tags =
        logical.tags_consistent && receive_tags_kept(spec) || matching.as_ref().is_some_and(|m| m.tags_match);
    let any_matched = matching.as_ref().and_then(|m| m.any_source_matched.clone());
    let widen = match &matching {
        Some(m) if keep_tags => m.too_small_by_tag.clone(),
        Some(m) => m.too_small_by_order.clone(),
        None => Default::default(),
    };
    let mut emission = Emission {
        subs: Subcomms::default(),
        keep_tags,
        receive_at_most: !keep_tags && matching.as_ref().is_none_or(|m| m.any_source_matched.is_some()),
        widen,
        cancel_surplus: any_matched.is_some(),
    };
    emit_nodes(
        &program.nodes,
        1,
        &names,
        logical,
        &mut body,
        &mut tables,
        &mut counters,
        &mut emission,
    )?;
    if emission.receive_at_most {
        c.push_str("/* Receives match by order (MPI_ANY_TAG: the run's tags cannot be replayed), and whether a\n * recorded receive size would truncate a message was not checked (a program too large, or receives\n * from any source): receives are posted at MAXBYTES. */\n");
    } else if !emission.widen.is_empty() {
        let _ = writeln!(
            c,
            "/* {} receive(s) posted at the largest message they take: at its recorded size a message\n * would not fit (matched {}; a summarised size is sent as its mean). */",
            emission.widen.len(),
            if keep_tags { "by tag" } else { "by order, MPI_ANY_TAG" }
        );
    }
    if let Some(matched) = &any_matched {
        c.push_str(
            "/* Receives from any source a message will match, per rank (a program may cancel one posted ahead). */\n",
        );
        let _ = write!(c, "static const unsigned long long any_matched[NRANKS] = {{");
        for u in 0..n {
            let r = rank_of_node.get(u as usize).copied().unwrap_or(u);
            let _ = write!(
                c,
                "{}{}ULL",
                if u == 0 { "" } else { ", " },
                matched.get(r as usize).copied().unwrap_or(0)
            );
        }
        c.push_str("};\nstatic unsigned long long any_posted;\n");
        c.push_str("/* A receive no message will match posts from MPI_PROC_NULL: it completes at once, takes nothing. */\nstatic inline int any_peer(void) { return any_posted++ < any_matched[me] ? MPI_ANY_SOURCE : MPI_PROC_NULL; }\n");
    }
    c.push_str(&emission.subs.declarations());
    c.push_str(&tables);
    for id in &counters {
        let _ = writeln!(c, "static unsigned long long occ{id};");
    }
    c.push_str("\nint main(int argc, char **argv)\n{\n    MPI_Init(&argc, &argv);\n");
    c.push_str("    setup(argc, argv);\n");
    let cart = spec.family.is_cartesian() && !collectives_only;
    if cart {
        let dims_rev: Vec<String> = spec.dims.iter().rev().map(|d| d.to_string()).collect();
        let periodic = if spec.family.periodic() { "1" } else { "0" };
        let _ = writeln!(
            c,
            "    {{\n        int dims[{k}] = {{{}}}, periods[{k}];\n        for (int k = 0; k < {k}; k++) periods[k] = {periodic};\n        MPI_Cart_create(MPI_COMM_WORLD, {k}, dims, periods, 0, &topo);\n    }}",
            dims_rev.join(", "),
            k = spec.dims.len()
        );
    } else {
        // Every other topology lives in the `neighbour` table alone; the communicator is the
        // world's ranks in the world's order (rank r plays node r). Not a graph communicator:
        // SST DUMPI 13 does not record `MPI_Dist_graph_create_adjacent`, so a skeleton run
        // traced with it had no readable point-to-point traffic at all (NAS CG, PETSc, GROMACS).
        c.push_str("    MPI_Comm_dup(MPI_COMM_WORLD, &topo);\n");
    }
    let (create, free) = emission.subs.create_and_free();
    c.push_str(&create);
    c.push_str(&body);
    c.push_str(&free);
    c.push_str("    MPI_Comm_free(&topo);\n    free(sendbuf);\n    free(recvbuf);\n    free(collbuf);\n    MPI_Finalize();\n    return 0;\n}\n");
    Ok(c)
}

/// The skeleton's directions, the columns of its `neighbour` table: the topology's, then
/// `self` when some rank messaged itself, then the offset directions.
fn direction_names(logical: &LogicalTrace) -> Vec<String> {
    let mut names: Vec<String> = logical.placement.spec.directions().iter().map(|d| d.name()).collect();
    if !logical.self_ranks.is_empty() {
        names.push(SELF_DIRECTION.into());
    }
    names.extend(logical.offset_ranks.iter().map(|o| o.direction.clone()));
    names
}

/// Why [`skeleton_c`] of `logical` and `program` fails, or `Ok` when it succeeds, without
/// writing the source: the program's statements are emitted (the one step that can fail, and
/// whose failure does not depend on how receives match) but not the replay of the receives'
/// matching by order ([`receives_fit_in_order`]: ranks × calls of the expanded program, most of
/// the skeleton's cost on a large run). For the page's logical view, which says whether a
/// skeleton can be downloaded and writes it only when asked.
pub fn skeleton_check(logical: &LogicalTrace, program: &Program) -> Result<(), String> {
    let mut emission = Emission {
        subs: Subcomms::default(),
        keep_tags: true,
        receive_at_most: false,
        widen: Default::default(),
        cancel_surplus: false,
    };
    emit_nodes(
        &program.nodes,
        1,
        &direction_names(logical),
        logical,
        &mut String::new(),
        &mut String::new(),
        &mut Vec::new(),
        &mut emission,
    )
}

/// Shared C runtime of every skeleton.
const RUNTIME: &str = r#"static MPI_Comm topo;
static int me;
static double scale = 1.0;
static unsigned long long pos;
static MPI_Request ring[RING * SLOTS];
static char *sendbuf, *recvbuf, *collbuf, *collbuf2;

static inline void setup(int argc, char **argv)
{
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != NRANKS) {
        if (me == 0) fprintf(stderr, "skeleton: run me on %d ranks, not %d\n", NRANKS, size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argc > 1) scale = atof(argv[1]);
    sendbuf = calloc(MAXBYTES, 1);
    recvbuf = calloc(MAXBYTES, RING * SLOTS);
    collbuf = calloc(COLLBYTES, (size_t)NRANKS + 1);
    collbuf2 = calloc(COLLBYTES, (size_t)NRANKS + 1);
    if (!sendbuf || !recvbuf || !collbuf || !collbuf2) {
        fprintf(stderr, "skeleton: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (unsigned long k = 0; k < RING * SLOTS; k++) ring[k] = MPI_REQUEST_NULL;
}

/* Busy-wait `ns` nanoseconds (times the scale): the recorded compute between two calls. */
static inline void compute(double ns)
{
    double end;
    if (ns * scale <= 0) return;
    end = MPI_Wtime() + ns * scale * 1e-9;
    while (MPI_Wtime() < end) {
    }
}

static inline int nb(int d) { return neighbour[me][d]; }
/* The value of occurrence `i` of a run-length table: `v[k]` up to occurrence `e[k]` (exclusive). */
static inline unsigned long long run_at(const unsigned long long *v, const unsigned long long *e, unsigned long n, unsigned long long i)
{
    unsigned long lo = 0, hi = n;
    while (lo < hi) {
        unsigned long mid = lo + (hi - lo) / 2;
        if (e[mid] <= i) lo = mid + 1; else hi = mid;
    }
    return lo < n ? v[lo] : 0ULL;
}
/* Request slot `k` of this record (a start of several persistent requests has several). */
static inline MPI_Request *slot_k(int k) { return &ring[(pos % RING) * SLOTS + k]; }
static inline MPI_Request *slot(void) { return slot_k(0); }

/* Complete the requests of the records `back[k]` records ago, every slot of each (64 at a time). */
static inline void complete(int count, const unsigned long *back, int single)
{
    int total = count * (int)SLOTS;
    for (int k0 = 0; k0 < total; k0 += 64) {
        MPI_Request rq[64];
        int live = 0, n = total - k0 < 64 ? total - k0 : 64;
        for (int k = 0; k < n; k++) {
            int j = k0 + k;
            MPI_Request *r = &ring[((pos - back[j / SLOTS]) % RING) * SLOTS + j % SLOTS];
            rq[k] = *r;
            live += *r != MPI_REQUEST_NULL;
            *r = MPI_REQUEST_NULL;
        }
        if (!live) continue;
        if (single && total == 1)
            MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        else
            MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
    }
}

"#;

/// A C table of one value per node, `per_line` values a line, appended to `tables`.
fn node_table<T: std::fmt::Display>(tables: &mut String, ctype: &str, name: &str, values: &[T], per_line: usize) {
    let _ = write!(tables, "static const {ctype} {name}[NRANKS] = {{");
    for (k, x) in values.iter().enumerate() {
        if k % per_line == 0 {
            tables.push_str("\n    ");
        }
        let _ = write!(tables, "{x}, ");
    }
    tables.push_str("\n};\n");
}

fn sanitize(s: &str) -> String {
    s.chars().filter(|c| !matches!(c, '*' | '/' | '\n' | '\r')).collect()
}

/// C expression of the `idx`-th value of `v`; list tables go to `tables`.
fn value_expr(v: &Values, idx: &str, name: &str, tables: &mut String, node_of_rank: &[u32]) -> String {
    match v {
        Values::Stats { count, total, .. } => {
            let count = (*count).max(1);
            format!(
                "({}ULL + (({idx}) < {}ULL ? 1ULL : 0ULL))",
                total / count,
                total % count
            )
        }
        Values::ByRank { default, ranks } => {
            // Group of each node (0: the default), then one branch per group.
            let mut group = vec![0usize; node_of_rank.len()];
            for (g, rv) in ranks.iter().enumerate() {
                for &r in &rv.ranks {
                    if let Some(&u) = node_of_rank.get(r as usize) {
                        if let Some(at) = group.get_mut(u as usize) {
                            *at = g + 1;
                        }
                    }
                }
            }
            node_table(tables, "unsigned short", &format!("{name}_grp"), &group, 24);
            let mut e = value_expr(default, idx, &format!("{name}_d"), tables, node_of_rank);
            for (g, rv) in ranks.iter().enumerate().rev() {
                let inner = value_expr(&rv.values, idx, &format!("{name}_g{}", g + 1), tables, node_of_rank);
                e = format!("({name}_grp[me] == {} ? {inner} : {e})", g + 1);
            }
            e
        }
        Values::Constant { value } => format!("{value}ULL"),
        Values::Range { first, step } => format!("(unsigned long long)({first}LL + ({step}LL) * (long long)({idx}))"),
        Values::Cycle { period, unit } => {
            value_expr(unit, &format!("(({idx}) % {period}ULL)"), name, tables, node_of_rank)
        }
        Values::List { values } => {
            ull_table(tables, name, values);
            format!("{name}[{idx}]")
        }
        Values::Runs { values, ends } => {
            ull_table(tables, &format!("{name}_v"), values);
            ull_table(tables, &format!("{name}_e"), ends);
            format!("run_at({name}_v, {name}_e, {}UL, {idx})", values.len())
        }
        Values::Histogram { values, counts } => {
            // Blocks in increasing size: runs whose ends are the cumulative counts.
            let ends: Vec<u64> = counts
                .iter()
                .scan(0u64, |end, &c| {
                    *end += c;
                    Some(*end)
                })
                .collect();
            ull_table(tables, &format!("{name}_v"), values);
            ull_table(tables, &format!("{name}_e"), &ends);
            format!("run_at({name}_v, {name}_e, {}UL, {idx})", values.len())
        }
    }
}

/// A C table of unsigned long longs named `name`, appended to `tables`.
fn ull_table(tables: &mut String, name: &str, values: &[u64]) {
    let _ = write!(tables, "static const unsigned long long {name}[{}] = {{", values.len());
    for (k, x) in values.iter().enumerate() {
        if k % 12 == 0 {
            tables.push_str("\n    ");
        }
        let _ = write!(tables, "{x}ULL, ");
    }
    tables.push_str("\n};\n");
}

fn needs_counter(v: &Values) -> bool {
    !matches!(v, Values::Constant { .. })
}

fn dir_index(names: &[String], p: &Partner) -> Result<Option<usize>, String> {
    match p {
        Partner::Direction(d) => names
            .iter()
            .position(|n| n == d)
            .map(Some)
            .ok_or_else(|| format!("direction `{d}` is not a direction of the topology")),
        Partner::Any => Ok(None),
        Partner::Rank(r) => Err(format!(
            "the program names world rank {r}; a skeleton needs a logical trace"
        )),
    }
}

fn tag_expr(tag: i32) -> String {
    if tag < 0 {
        "MPI_ANY_TAG".into()
    } else {
        tag.to_string()
    }
}

#[allow(clippy::too_many_arguments)]
fn emit_nodes(
    nodes: &[Node],
    depth: usize,
    names: &[String],
    logical: &LogicalTrace,
    out: &mut String,
    tables: &mut String,
    counters: &mut Vec<u32>,
    emission: &mut Emission,
) -> Result<(), String> {
    let pad = "    ".repeat(depth);
    for node in nodes {
        match node {
            Node::Loop { id, count, body } => {
                let count_expr = if needs_counter(count) {
                    counters.push(*id);
                    value_expr(
                        count,
                        &format!("occ{id}++"),
                        &format!("count{id}"),
                        tables,
                        &logical.placement.node_of_rank,
                    )
                } else {
                    value_expr(
                        count,
                        "0",
                        &format!("count{id}"),
                        tables,
                        &logical.placement.node_of_rank,
                    )
                };
                let _ = writeln!(
                    out,
                    "{pad}for (unsigned long long it{id} = 0, n{id} = {count_expr}; it{id} < n{id}; it{id}++) {{"
                );
                emit_nodes(body, depth + 1, names, logical, out, tables, counters, emission)?;
                let _ = writeln!(out, "{pad}}}");
            }
            Node::Call {
                id,
                shape,
                sizes,
                tags,
                gap,
                present,
                ..
            } => {
                let varying = sizes.iter().chain(tags).chain(present).any(needs_counter);
                // The call with its size and tag sequences, as `logical --compress` prints it (the
                // shape alone has every size 0).
                let _ = writeln!(out, "{pad}{{ /* {} */", sanitize(&call_text(shape, sizes, tags)));
                let inner = format!("{pad}    ");
                if varying {
                    counters.push(*id);
                    let _ = writeln!(out, "{inner}unsigned long long i = occ{id}++;\n{inner}(void)i;");
                }
                let mut slot_tables = Vec::new();
                let size: Vec<String> = sizes
                    .iter()
                    .enumerate()
                    .map(|(k, v)| {
                        let name = format!("size{id}_{k}");
                        let mut t = String::new();
                        let e = value_expr(v, "i", &name, &mut t, &logical.placement.node_of_rank);
                        slot_tables.push((name, t));
                        e
                    })
                    .collect();
                // Per-class sizes of a merged trace: chosen by which neighbours the node has.
                let size: Vec<String> = size
                    .into_iter()
                    .enumerate()
                    .map(|(k, e)| match shape.ops.get(k) {
                        Some(op) => op.bytes_by_class.iter().fold(e, |e, c| {
                            let cond: Vec<String> = names
                                .iter()
                                .enumerate()
                                .map(|(i, n)| {
                                    let has = c.directions.contains(n);
                                    format!("nb({i}) {} 0", if has { ">=" } else { "<" })
                                })
                                .collect();
                            format!("(({}) ? {}ULL : {e})", cond.join(" && "), c.bytes)
                        }),
                        None => e,
                    })
                    .collect();
                // Receives a message would not fit in at their recorded size.
                let size: Vec<String> = size
                    .into_iter()
                    .enumerate()
                    .map(|(k, e)| match emission.widen.get(&(*id, k)) {
                        Some(w) if shape.ops.get(k).is_some_and(|o| o.dir == P2pDir::Recv) => format!("{w}ULL"),
                        _ => e,
                    })
                    .collect();
                let tag: Vec<String> = tags
                    .iter()
                    .enumerate()
                    .map(|(k, v)| match v {
                        Values::Constant { value } => tag_expr(*value as u32 as i32),
                        v => {
                            let name = format!("tag{id}_{k}");
                            let mut t = String::new();
                            let e = value_expr(v, "i", &name, &mut t, &logical.placement.node_of_rank);
                            slot_tables.push((name, t));
                            format!("(int)(unsigned int)({e})")
                        }
                    })
                    .collect();
                // Operations some ranks skip in some visits ([`Operation::absent_on`]): run
                // where the presence sequence is 1.
                let runs: Vec<String> = (0..shape.ops.len())
                    .map(|k| match present.get(k) {
                        None | Some(Values::Constant { value: 1 }) => "1".to_string(),
                        Some(v) => {
                            let name = format!("present{id}_{k}");
                            let mut t = String::new();
                            let e = value_expr(v, "i", &name, &mut t, &logical.placement.node_of_rank);
                            slot_tables.push((name, t));
                            format!("({e}) != 0ULL")
                        }
                    })
                    .collect();
                if gap.mean_ns > 0 {
                    let _ = writeln!(out, "{inner}compute({}.0);", gap.mean_ns);
                }
                let mut stmt = String::new();
                emit_call(
                    shape, &size, &tag, &runs, names, logical, &inner, &mut stmt, emission, tables,
                )?;
                // Only the tables a statement uses (a reduction ignores its received size).
                for (name, t) in slot_tables {
                    if stmt.contains(&format!("{name}[")) || stmt.contains(&format!("{name}_")) {
                        tables.push_str(&t);
                    }
                }
                // A branch executed by some ranks only ([`LogicalCall::only_ranks`]).
                if let Some(only) = &shape.only_ranks {
                    let mut runs = vec![0u8; logical.placement.node_of_rank.len()];
                    for &r in only {
                        if let Some(&u) = logical.placement.node_of_rank.get(r as usize) {
                            if let Some(at) = runs.get_mut(u as usize) {
                                *at = 1;
                            }
                        }
                    }
                    node_table(tables, "unsigned char", &format!("only{id}"), &runs, 32);
                    let _ = writeln!(out, "{inner}if (only{id}[me]) {{");
                    for line in stmt.lines() {
                        let _ = writeln!(out, "    {line}");
                    }
                    let _ = writeln!(out, "{inner}}}");
                } else {
                    out.push_str(&stmt);
                }
                let _ = writeln!(out, "{inner}pos++;\n{pad}}}");
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn emit_call(
    call: &LogicalCall,
    size: &[String],
    tag: &[String],
    runs: &[String],
    names: &[String],
    logical: &LogicalTrace,
    pad: &str,
    out: &mut String,
    emission: &mut Emission,
    tables: &mut String,
) -> Result<(), String> {
    let f = call.function.to_ascii_lowercase();
    let f = f.trim_start_matches("pmpi_").trim_start_matches("mpi_");
    match call.kind {
        CallKind::Isend | CallKind::Irecv if call.ops.len() > 1 => {
            for (k, op) in call.ops.iter().enumerate() {
                let kind = if op.dir == P2pDir::Send {
                    CallKind::Isend
                } else {
                    CallKind::Irecv
                };
                emit_operation(kind, "", op, Some(k), size, tag, runs, names, pad, out, emission)?;
            }
        }
        CallKind::Send | CallKind::Isend | CallKind::Recv | CallKind::Irecv => {
            if let Some(op) = call.ops.first() {
                emit_operation(call.kind, f, op, None, size, tag, runs, names, pad, out, emission)?;
            }
        }
        CallKind::SendRecv => {
            let send = call.ops.iter().position(|o| o.dir == P2pDir::Send);
            let recv = call.ops.iter().position(|o| o.dir == P2pDir::Recv);
            let (Some(s), Some(r)) = (send, recv) else {
                return Err(format!("{} without both halves", call.function));
            };
            let ds = dir_index(names, &call.ops[s].partner)?.ok_or("a send to MPI_ANY_SOURCE")?;
            let dr = dir_index(names, &call.ops[r].partner)?;
            let src = dr.map_or("MPI_ANY_SOURCE".to_string(), |d| format!("nb({d})"));
            let has_src = dr.map_or("1".to_string(), |d| format!("nb({d}) >= 0"));
            // An operation skipped in this visit behaves as a missing neighbour.
            let with = |cond: String, k: usize| match runs.get(k).map(String::as_str) {
                None | Some("1") => cond,
                Some(r) => format!("({cond} && {r})"),
            };
            let has_src = with(has_src, r);
            let has_dst = with(format!("nb({ds}) >= 0"), s);
            let bs = &size[s];
            let br = if emission.receive_at_most { "MAXBYTES" } else { &size[r] };
            let ts = tag[s].clone();
            let tr = if emission.keep_tags {
                tag[r].clone()
            } else {
                "MPI_ANY_TAG".into()
            };
            let _ = writeln!(
                out,
                "{pad}if ({has_dst} && {has_src})\n{pad}    MPI_Sendrecv(sendbuf, (int){bs}, MPI_BYTE, nb({ds}), {ts}, rbuf(), (int){br}, MPI_BYTE, {src}, {tr}, topo, MPI_STATUS_IGNORE);\n{pad}else if ({has_dst})\n{pad}    MPI_Send(sendbuf, (int){bs}, MPI_BYTE, nb({ds}), {ts}, topo);\n{pad}else if ({has_src})\n{pad}    MPI_Recv(rbuf(), (int){br}, MPI_BYTE, {src}, {tr}, topo, MPI_STATUS_IGNORE);"
            );
        }
        CallKind::Completion => {
            if call.completes.is_empty() {
                return Ok(());
            }
            let back: Vec<String> = call.completes.iter().map(|k| format!("{k}UL")).collect();
            let single = f == "wait" || f == "test";
            let _ = writeln!(
                out,
                "{pad}{{ static const unsigned long back[] = {{{}}}; complete({}, back, {}); }}",
                back.join(", "),
                back.len(),
                single as u8
            );
        }
        CallKind::Collective => {
            let Some(col) = &call.collective else {
                let _ = writeln!(
                    out,
                    "{pad}MPI_Barrier(topo); /* {} without a collective record */",
                    call.function
                );
                return Ok(());
            };
            let (sent, recvd) = (&size[size.len() - 2], &size[size.len() - 1]);
            // The communicator it runs on, its root there and its size ([`comms`]).
            let (comm, root, n, note) = match emission.subs.place(call, col, logical, tables) {
                Placement::Topo => {
                    let root = col
                        .root
                        .and_then(|r| logical.placement.node_of_rank.get(r as usize).copied())
                        .unwrap_or(0);
                    (
                        "topo".to_string(),
                        root.to_string(),
                        "NRANKS".to_string(),
                        String::new(),
                    )
                }
                Placement::Split { index, root, size } => (
                    format!("sub[{index}]"),
                    root,
                    size.to_string(),
                    format!(" /* on a communicator of {size} ranks */"),
                ),
                Placement::Alone { why } => (
                    "MPI_COMM_SELF".to_string(),
                    "0".to_string(),
                    "1".to_string(),
                    format!(" /* alone: {why} */"),
                ),
            };
            let stmt = match col.op {
                CollectiveOp::Barrier | CollectiveOp::Other => format!("MPI_Barrier({comm});"),
                // Every rank passes the same count: what a rank receives (a tracer may record
                // the root's bytes sent as the count times the communicator's size, as Score-P
                // does), the root's bytes sent where no received size is known
                // ([`Collective::size`]'s rule).
                CollectiveOp::Bcast => {
                    format!("MPI_Bcast(collbuf, (int)({recvd} > 0 ? {recvd} : {sent}), MPI_BYTE, {root}, {comm});")
                }
                CollectiveOp::Reduce => {
                    format!("MPI_Reduce(collbuf, collbuf2, (int){sent}, MPI_BYTE, MPI_BOR, {root}, {comm});")
                }
                CollectiveOp::Allreduce => {
                    format!("MPI_Allreduce(collbuf, collbuf2, (int){sent}, MPI_BYTE, MPI_BOR, {comm});")
                }
                CollectiveOp::Scan => format!("MPI_Scan(collbuf, collbuf2, (int){sent}, MPI_BYTE, MPI_BOR, {comm});"),
                CollectiveOp::Exscan => {
                    format!("MPI_Exscan(collbuf, collbuf2, (int){sent}, MPI_BYTE, MPI_BOR, {comm});")
                }
                CollectiveOp::Gather | CollectiveOp::Gatherv => format!(
                    "MPI_Gather(collbuf, (int){sent}, MPI_BYTE, collbuf2, (int){sent}, MPI_BYTE, {root}, {comm});"
                ),
                CollectiveOp::Scatter | CollectiveOp::Scatterv => format!(
                    "MPI_Scatter(collbuf, (int){recvd}, MPI_BYTE, collbuf2, (int){recvd}, MPI_BYTE, {root}, {comm});"
                ),
                CollectiveOp::Allgather | CollectiveOp::Allgatherv => format!(
                    "MPI_Allgather(collbuf, (int){sent}, MPI_BYTE, collbuf2, (int){sent}, MPI_BYTE, {comm});"
                ),
                CollectiveOp::Alltoall | CollectiveOp::Alltoallv | CollectiveOp::Alltoallw => format!(
                    "MPI_Alltoall(collbuf, (int)({sent} / {n}), MPI_BYTE, collbuf2, (int)({sent} / {n}), MPI_BYTE, {comm});"
                ),
                // The program's own function: SST DUMPI 13 records `MPI_Reduce_scatter` but not
                // `MPI_Reduce_scatter_block` (an MPI-2.2 call), so a skeleton replaying LAMMPS's
                // reduce-scatter as the block form lost it from its DUMPI trace.
                CollectiveOp::ReduceScatter => format!(
                    "{{ int rc[{n}]; for (int k = 0; k < {n}; k++) rc[k] = (int){recvd}; \
                     MPI_Reduce_scatter(collbuf, collbuf2, rc, MPI_BYTE, MPI_BOR, {comm}); }}"
                ),
                CollectiveOp::ReduceScatterBlock => format!(
                    "MPI_Reduce_scatter_block(collbuf, collbuf2, (int){recvd}, MPI_BYTE, MPI_BOR, {comm});"
                ),
            };
            // Ranks outside a split communicator skip the call.
            let guard = if comm.starts_with("sub[") {
                format!("if ({comm} != MPI_COMM_NULL) ")
            } else {
                String::new()
            };
            let _ = writeln!(out, "{pad}{guard}{stmt}{note}");
        }
        // MPI_Init / MPI_Finalize are the program's frame; nothing else becomes a record.
        _ => {}
    }
    Ok(())
}
