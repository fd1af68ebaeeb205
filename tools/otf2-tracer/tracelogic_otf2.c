/* tracelogic_otf2: a PMPI tracer that writes OTF2 through the official OTF2 writer library, the way
 * Score-P lays out an MPI trace, so that unmodified MPI programs (C, C++ and Fortran through Open
 * MPI's mpif.h / `use mpi` bindings) can be recorded in OTF2 by preloading it:
 *
 *   mpicc -shared -fPIC -O2 -o libtracelogic_otf2.so tracelogic_otf2.c -lotf2 -ldl
 *   TRACELOGIC_OTF2_DIR=run mpirun -x LD_PRELOAD=$PWD/libtracelogic_otf2.so -np 8 ./app
 *
 * What it writes (OTF2 3.0, the conventions of Score-P's MPI adapter; see README.md):
 * - one location per rank (id = MPI_COMM_WORLD rank), in a location group of type PROCESS;
 * - Enter/Leave around every wrapped call; MpiSend/MpiRecv, MpiIsend/MpiIsendComplete,
 *   MpiIrecvRequest/MpiIrecv (at the completing Wait/Test), MpiRequestTest for a test that did not
 *   complete; a persistent request (MPI_Send_init, MPI_Recv_init, ...; C only) as an MpiIsend or
 *   MpiIrecvRequest at each MPI_Start/MPI_Startall, completed like the others (as Score-P does);
 *   MpiCollectiveBegin/End with the operation, communicator, root and bytes;
 * - peers and roots as ranks *of the event's communicator*, communicators as *local* ids mapped
 *   to global ones by a MappingTable in each location's local definitions (as Score-P's unifier
 *   leaves them); groups of type COMM_LOCATIONS (world rank -> location) and COMM_GROUP (members
 *   as world ranks), MPI_COMM_SELF as a COMM_SELF group;
 * - CLOCK_MONOTONIC nanoseconds, ClockOffset records (0: one host) at start and end.
 * Not wrapped: Fortran persistent requests, one-sided, MPI-IO, nonblocking collectives, intercommunicators.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <otf2/otf2.h>
#define OTF2_MPI_USE_PMPI
#define OTF2_MPI_UINT64_T MPI_UINT64_T
#define OTF2_MPI_INT64_T MPI_INT64_T
#include <otf2/OTF2_MPI_Collectives.h>

/* ---------------------------------------------------------------- regions */

#define P2P OTF2_REGION_ROLE_POINT2POINT
#define FUN OTF2_REGION_ROLE_FUNCTION
#define BAR OTF2_REGION_ROLE_BARRIER
#define O2A OTF2_REGION_ROLE_COLL_ONE2ALL
#define A2O OTF2_REGION_ROLE_COLL_ALL2ONE
#define A2A OTF2_REGION_ROLE_COLL_ALL2ALL
#define COT OTF2_REGION_ROLE_COLL_OTHER
#define REGIONS(X)                                                                                 \
    X(Init, FUN) X(Init_thread, FUN) X(Finalize, FUN) X(Send, P2P) X(Ssend, P2P) X(Bsend, P2P)     \
    X(Rsend, P2P) X(Recv, P2P) X(Isend, P2P) X(Issend, P2P) X(Irecv, P2P) X(Sendrecv, P2P)         \
    X(Sendrecv_replace, P2P) X(Wait, P2P) X(Waitall, P2P) X(Waitany, P2P) X(Waitsome, P2P)         \
    X(Cancel, P2P) X(Request_free, P2P) X(Test, P2P) X(Testall, P2P) X(Testany, P2P) X(Testsome, P2P) X(Probe, P2P) X(Iprobe, P2P)     \
    X(Request_get_status, P2P)                                                                    \
    X(Barrier, BAR) X(Bcast, O2A) X(Reduce, A2O) X(Allreduce, A2A) X(Gather, A2O)                 \
    X(Gatherv, A2O) X(Scatter, O2A) X(Scatterv, O2A) X(Allgather, A2A) X(Allgatherv, A2A)         \
    X(Alltoall, A2A) X(Alltoallv, A2A) X(Reduce_scatter, A2A) X(Scan, COT) X(Comm_split, FUN)     \
    X(Comm_dup, FUN) X(Comm_create, FUN) X(Cart_create, FUN) X(Cart_sub, FUN) X(Comm_free, FUN)     \
    X(Send_init, P2P) X(Bsend_init, P2P) X(Ssend_init, P2P) X(Rsend_init, P2P)                    \
    X(Recv_init, P2P) X(Start, P2P) X(Startall, P2P)
#define ENUM(name, role) R_##name,
enum { REGIONS(ENUM) N_REGIONS };
#define NAME(name, role) "MPI_" #name,
static const char *region_name[] = {REGIONS(NAME)};
#define ROLE(name, role) role,
static const OTF2_RegionRole region_role[] = {REGIONS(ROLE)};

/* ---------------------------------------------------------------- state */

static OTF2_Archive *archive;
static OTF2_EvtWriter *evt;
static int world_rank = -1, world_size;
static int tracing;          /* between our MPI_Init and MPI_Finalize */
static uint64_t first_time, last_time;
static uint64_t next_request_id = 1;

static uint64_t now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (t <= last_time) t = last_time; /* OTF2 wants non-decreasing times per location */
    last_time = t;
    return t;
}

static void die(const char *what) {
    fprintf(stderr, "tracelogic_otf2: %s\n", what);
    PMPI_Abort(MPI_COMM_WORLD, 1);
}

static OTF2_FlushType pre_flush(void *u, OTF2_FileType ft, OTF2_LocationRef l, void *c, bool f) {
    (void)u, (void)ft, (void)l, (void)c, (void)f;
    return OTF2_FLUSH;
}
static OTF2_TimeStamp post_flush(void *u, OTF2_FileType ft, OTF2_LocationRef l) {
    (void)u, (void)ft, (void)l;
    return now();
}
static OTF2_FlushCallbacks flush_callbacks = {.otf2_pre_flush = pre_flush,
                                               .otf2_post_flush = post_flush};

/* Communicators: local id = index in this table (0 world, 1 self). A communicator's identity
 * across ranks is (world rank of its local rank 0, that rank's creation counter), which the
 * creating call broadcasts on the new communicator; members are world ranks. */
typedef struct {
    MPI_Comm handle;
    int live;
    int32_t root, serial; /* identity; world: (-1, 0), self: (-2, 0) */
    int32_t size;
    int32_t *members; /* world ranks in communicator rank order */
    int32_t ndims;    /* Cartesian communicators: dimensions, else 0 */
    int32_t crank;    /* this rank in the communicator */
    int32_t *cart;    /* dims[ndims], periods[ndims], this rank's coords[ndims] */
} Comm;
static Comm *comms;
static int n_comms, cap_comms;
static int32_t creations;

static uint32_t comm_add(MPI_Comm h, int32_t root, int32_t serial, int32_t size, int32_t *members) {
    if (n_comms == cap_comms) {
        cap_comms = cap_comms ? 2 * cap_comms : 16;
        comms = realloc(comms, (size_t)cap_comms * sizeof *comms);
        if (!comms) die("out of memory");
    }
    comms[n_comms] = (Comm){h, 1, root, serial, size, members, 0, 0, NULL};
    return (uint32_t)n_comms++;
}

static uint32_t comm_id(MPI_Comm h) {
    if (h == MPI_COMM_WORLD) return 0;
    if (h == MPI_COMM_SELF) return 1;
    for (int i = n_comms - 1; i >= 2; i--)
        if (comms[i].live && comms[i].handle == h) return (uint32_t)i;
    return OTF2_UNDEFINED_COMM; /* created before tracing or by an unwrapped call */
}

/* Called on every rank that got a new communicator (not MPI_COMM_NULL). */
static void comm_created(MPI_Comm h) {
    if (h == MPI_COMM_NULL) return;
    int size, rank;
    PMPI_Comm_size(h, &size);
    PMPI_Comm_rank(h, &rank);
    MPI_Group world_group, group;
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Comm_group(h, &group);
    int *local = malloc((size_t)size * sizeof *local);
    int32_t *members = malloc((size_t)size * sizeof *members);
    if (!local || !members) die("out of memory");
    for (int i = 0; i < size; i++) local[i] = i;
    PMPI_Group_translate_ranks(group, size, local, world_group, (int *)members);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world_group);
    free(local);
    int32_t id[2] = {world_rank, creations};
    PMPI_Bcast(id, 2, MPI_INT32_T, 0, h);
    if (rank == 0) creations++;
    uint32_t local_id = comm_add(h, id[0], id[1], size, members);
    int topo = MPI_UNDEFINED;
    PMPI_Topo_test(h, &topo);
    if (topo == MPI_CART) {
        int nd = 0;
        PMPI_Cartdim_get(h, &nd);
        int *dims = malloc((size_t)(3 * nd + 1) * sizeof *dims);
        int32_t *cart = malloc((size_t)(3 * nd + 1) * sizeof *cart);
        if (!dims || !cart) die("out of memory");
        PMPI_Cart_get(h, nd, dims, dims + nd, dims + 2 * nd);
        for (int i = 0; i < 3 * nd; i++) cart[i] = dims[i];
        free(dims);
        comms[local_id].ndims = nd;
        comms[local_id].cart = cart;
    }
    comms[local_id].crank = rank;
}

static void comm_freed(MPI_Comm h) {
    uint32_t id = comm_id(h);
    if (id != OTF2_UNDEFINED_COMM && id >= 2) comms[id].live = 0;
}

/* Requests in flight: MPI_Request handle -> what completes it. */
typedef struct {
    MPI_Request handle;
    uint64_t id;
    int is_recv;
    uint32_t comm;
    int type_size;
} Request;
static Request *requests;
static int n_requests, cap_requests;

static void request_add(MPI_Request h, uint64_t id, int is_recv, uint32_t comm, int type_size) {
    if (n_requests == cap_requests) {
        cap_requests = cap_requests ? 2 * cap_requests : 64;
        requests = realloc(requests, (size_t)cap_requests * sizeof *requests);
        if (!requests) die("out of memory");
    }
    requests[n_requests++] = (Request){h, id, is_recv, comm, type_size};
}

static int request_find(MPI_Request h) {
    for (int i = n_requests - 1; i >= 0; i--)
        if (requests[i].handle == h) return i;
    return -1;
}

static void request_remove(int i) { requests[i] = requests[--n_requests]; }

/* Persistent requests: handle -> the operation each MPI_Start of it posts. */
typedef struct {
    MPI_Request handle;
    int is_recv, peer, tag;
    MPI_Comm comm;
    MPI_Datatype type;
    uint64_t bytes;
} Persistent;
static Persistent *persistents;
static int n_persistents, cap_persistents;

static void persistent_add(Persistent p) {
    if (n_persistents == cap_persistents) {
        cap_persistents = cap_persistents ? 2 * cap_persistents : 64;
        persistents = realloc(persistents, (size_t)cap_persistents * sizeof *persistents);
        if (!persistents) die("out of memory");
    }
    persistents[n_persistents++] = p;
}
static int persistent_find(MPI_Request h) {
    for (int i = n_persistents - 1; i >= 0; i--)
        if (persistents[i].handle == h) return i;
    return -1;
}

static int type_size(MPI_Datatype t) {
    int s = 0;
    if (t != MPI_DATATYPE_NULL) PMPI_Type_size(t, &s);
    return s;
}

/* ---------------------------------------------------------------- event helpers */

#define ON (tracing && evt)
/* TRACELOGIC_OTF2_CALLING_CONTEXTS=1: calls as CallingContextEnter/Leave, as Score-P writes them
 * with unwinding on (SCOREP_ENABLE_UNWINDING): region i's calling context is i + 1, a child of
 * context 0 ("main", a user function region), entered with unwind distance 1. */
static int calling_contexts;
static void enter_at(uint64_t t, int r) {
    if (calling_contexts)
        OTF2_EvtWriter_CallingContextEnter(evt, NULL, t, (OTF2_CallingContextRef)r + 1, 1);
    else
        OTF2_EvtWriter_Enter(evt, NULL, t, r);
}
static void enter(int r) {
    if (ON) enter_at(now(), r);
}
static void leave(int r) {
    if (!ON) return;
    if (calling_contexts)
        OTF2_EvtWriter_CallingContextLeave(evt, NULL, now(), (OTF2_CallingContextRef)r + 1);
    else
        OTF2_EvtWriter_Leave(evt, NULL, now(), r);
}
static void send_event(int dest, int tag, MPI_Comm comm, uint64_t bytes) {
    if (!ON || dest == MPI_PROC_NULL) return;
    OTF2_EvtWriter_MpiSend(evt, NULL, now(), (uint32_t)dest, comm_id(comm), (uint32_t)tag, bytes);
}
static void recv_event(const MPI_Status *st, MPI_Comm comm, MPI_Datatype t) {
    if (!ON || st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0) return;
    int count = 0;
    PMPI_Get_count(st, t, &count);
    if (count == MPI_UNDEFINED) count = 0;
    OTF2_EvtWriter_MpiRecv(evt, NULL, now(), (uint32_t)st->MPI_SOURCE, comm_id(comm),
                           (uint32_t)st->MPI_TAG, (uint64_t)count * (uint64_t)type_size(t));
}
static void isend_event(int dest, int tag, MPI_Comm comm, uint64_t bytes, MPI_Request req) {
    if (!ON || dest == MPI_PROC_NULL) return;
    uint64_t id = next_request_id++;
    OTF2_EvtWriter_MpiIsend(evt, NULL, now(), (uint32_t)dest, comm_id(comm), (uint32_t)tag, bytes,
                            id);
    request_add(req, id, 0, comm_id(comm), 0);
}
static void irecv_event(int source, MPI_Datatype t, MPI_Comm comm, MPI_Request req) {
    if (!ON || source == MPI_PROC_NULL) return;
    uint64_t id = next_request_id++;
    OTF2_EvtWriter_MpiIrecvRequest(evt, NULL, now(), id);
    request_add(req, id, 1, comm_id(comm), type_size(t));
}
/* A request `h` (its handle before the call) completed with status `st`. */
static void completed(MPI_Request h, const MPI_Status *st) {
    if (!ON || h == MPI_REQUEST_NULL) return;
    int i = request_find(h);
    if (i < 0) return;
    Request r = requests[i];
    request_remove(i);
    int cancelled = 0;
    PMPI_Test_cancelled(st, &cancelled);
    if (cancelled) { /* as Score-P: the completion of a cancelled request */
        OTF2_EvtWriter_MpiRequestCancelled(evt, NULL, now(), r.id);
        return;
    }
    if (!r.is_recv) {
        OTF2_EvtWriter_MpiIsendComplete(evt, NULL, now(), r.id);
        return;
    }
    if (st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0) return;
    int count = 0;
    PMPI_Get_count(st, MPI_BYTE, &count);
    if (count == MPI_UNDEFINED) count = 0;
    OTF2_EvtWriter_MpiIrecv(evt, NULL, now(), (uint32_t)st->MPI_SOURCE, r.comm,
                            (uint32_t)st->MPI_TAG, (uint64_t)count, r.id);
}
static void test_failed(MPI_Request h) {
    if (!ON || h == MPI_REQUEST_NULL) return;
    int i = request_find(h);
    if (i >= 0) OTF2_EvtWriter_MpiRequestTest(evt, NULL, now(), requests[i].id);
}
static void coll_begin(void) {
    if (ON) OTF2_EvtWriter_MpiCollectiveBegin(evt, NULL, now());
}
static void coll_end(OTF2_CollectiveOp op, MPI_Comm comm, int root, uint64_t sent, uint64_t recvd) {
    if (!ON) return;
    uint32_t r = root < 0 ? OTF2_UNDEFINED_UINT32 : (uint32_t)root;
    OTF2_EvtWriter_MpiCollectiveEnd(evt, NULL, now(), op, comm_id(comm), r, sent, recvd);
}
static int comm_size(MPI_Comm c) {
    int n = 1;
    PMPI_Comm_size(c, &n);
    return n;
}
static int comm_rank(MPI_Comm c) {
    int n = 0;
    PMPI_Comm_rank(c, &n);
    return n;
}

/* ---------------------------------------------------------------- init and finalize */

static void start(void) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    int32_t *w = malloc((size_t)world_size * sizeof *w);
    if (!w) die("out of memory");
    for (int i = 0; i < world_size; i++) w[i] = i;
    comm_add(MPI_COMM_WORLD, -1, 0, world_size, w);
    comm_add(MPI_COMM_SELF, -2, 0, 0, NULL);
    const char *cc = getenv("TRACELOGIC_OTF2_CALLING_CONTEXTS");
    calling_contexts = cc && *cc && strcmp(cc, "0") != 0;
    const char *dir = getenv("TRACELOGIC_OTF2_DIR");
    if (!dir || !*dir) dir = "tracelogic-otf2";
    archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive) die("cannot open the OTF2 archive (TRACELOGIC_OTF2_DIR must not exist)");
    OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, NULL);
    if (OTF2_MPI_Archive_SetCollectiveCallbacks(archive, MPI_COMM_WORLD, MPI_COMM_NULL) !=
        OTF2_SUCCESS)
        die("OTF2_MPI_Archive_SetCollectiveCallbacks failed");
    OTF2_Archive_SetCreator(archive, "tracelogic_otf2 (PMPI, Score-P layout)");
    OTF2_Archive_SetDescription(archive, "MPI trace recorded by tools/otf2-tracer");
    OTF2_Archive_OpenEvtFiles(archive);
    evt = OTF2_Archive_GetEvtWriter(archive, (OTF2_LocationRef)world_rank);
    if (!evt) die("cannot get the event writer");
    tracing = 1;
}

/* Global string table built by rank 0. */
static uint32_t n_strings;
static uint32_t string(OTF2_GlobalDefWriter *g, const char *s) {
    OTF2_GlobalDefWriter_WriteString(g, n_strings, s);
    return n_strings++;
}

static void finish(void) {
    tracing = 0;
    uint64_t events = 0;
    OTF2_EvtWriter_GetNumberOfEvents(evt, &events);
    OTF2_Archive_CloseEvtWriter(archive, evt);
    evt = NULL;
    OTF2_Archive_CloseEvtFiles(archive);

    /* Gather every rank's communicators: [local, root, serial, size, ndims, rank in it,
     * dims, periods, coords (ndims each), members (size)]. */
    int words = 0;
    for (int i = 2; i < n_comms; i++) words += 6 + 3 * comms[i].ndims + comms[i].size;
    int32_t *mine = malloc((size_t)(words + 1) * sizeof *mine);
    if (!mine) die("out of memory");
    int k = 0;
    for (int i = 2; i < n_comms; i++) {
        mine[k++] = i;
        mine[k++] = comms[i].root;
        mine[k++] = comms[i].serial;
        mine[k++] = comms[i].size;
        mine[k++] = comms[i].ndims;
        mine[k++] = comms[i].crank;
        for (int j = 0; j < 3 * comms[i].ndims; j++) mine[k++] = comms[i].cart[j];
        for (int j = 0; j < comms[i].size; j++) mine[k++] = comms[i].members[j];
    }
    int *counts = malloc((size_t)world_size * sizeof *counts);
    int *displs = malloc((size_t)world_size * sizeof *displs);
    if (!counts || !displs) die("out of memory");
    PMPI_Allgather(&words, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < world_size; r++) displs[r] = total, total += counts[r];
    int32_t *all = malloc((size_t)(total + 1) * sizeof *all);
    if (!all) die("out of memory");
    PMPI_Allgatherv(mine, words, MPI_INT32_T, all, counts, displs, MPI_INT32_T, MPI_COMM_WORLD);

    /* Global ids: 0 world, 1 self, then every distinct (root, serial) in gather order. */
    int32_t *key_root = malloc((size_t)(total / 4 + 2) * sizeof *key_root);
    int32_t *key_serial = malloc((size_t)(total / 4 + 2) * sizeof *key_serial);
    int32_t *key_at = malloc((size_t)(total / 4 + 2) * sizeof *key_at);
    if (!key_root || !key_serial || !key_at) die("out of memory");
    int n_global = 2;
    uint64_t *map = malloc((size_t)n_comms * sizeof *map);
    if (!map) die("out of memory");
    map[0] = 0;
    map[1] = 1;
    for (int r = 0; r < world_size; r++) {
        for (int p = displs[r]; p < displs[r] + counts[r];) {
            int32_t local = all[p], root = all[p + 1], serial = all[p + 2], size = all[p + 3];
            int g = -1;
            for (int q = 2; q < n_global; q++)
                if (key_root[q] == root && key_serial[q] == serial) g = q;
            if (g < 0) {
                g = n_global++;
                key_root[g] = root;
                key_serial[g] = serial;
                key_at[g] = p;
            }
            if (r == world_rank) map[local] = (uint64_t)g;
            p += 6 + 3 * all[p + 4] + size;
        }
    }

    /* Local definitions: the communicator mapping table and clock offsets. */
    OTF2_Archive_OpenDefFiles(archive);
    OTF2_DefWriter *def = OTF2_Archive_GetDefWriter(archive, (OTF2_LocationRef)world_rank);
    OTF2_IdMap *idmap = OTF2_IdMap_CreateFromUint64Array((uint64_t)n_comms, map, false);
    if (idmap) {
        OTF2_DefWriter_WriteMappingTable(def, OTF2_MAPPING_COMM, idmap);
        OTF2_IdMap_Free(idmap);
    }
    OTF2_DefWriter_WriteClockOffset(def, first_time, 0, 0.0);
    OTF2_DefWriter_WriteClockOffset(def, last_time, 0, 0.0);
    OTF2_Archive_CloseDefWriter(archive, def);
    OTF2_Archive_CloseDefFiles(archive);

    uint64_t *all_events = malloc((size_t)world_size * sizeof *all_events);
    uint64_t t[2] = {first_time, ~last_time}, tmin[2];
    if (!all_events) die("out of memory");
    PMPI_Gather(&events, 1, MPI_UINT64_T, all_events, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    PMPI_Reduce(t, tmin, 2, MPI_UINT64_T, MPI_MIN, 0, MPI_COMM_WORLD);

    if (world_rank == 0) {
        OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(archive);
        uint64_t begin = tmin[0], end = ~tmin[1];
        OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000u, begin, end - begin + 1, 0);
        uint32_t s_empty = string(g, "");
        uint32_t s_machine = string(g, "machine"), s_node = string(g, "node");
        OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, s_machine, s_node,
                                                 OTF2_UNDEFINED_SYSTEM_TREE_NODE);
        uint32_t s_thread = string(g, "Master thread");
        for (int r = 0; r < world_size; r++) {
            char name[64];
            snprintf(name, sizeof name, "MPI Rank %d", r);
            uint32_t s = string(g, name);
            OTF2_GlobalDefWriter_WriteLocationGroup(g, (uint32_t)r, s,
                                                    OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                    OTF2_UNDEFINED_LOCATION_GROUP);
        }
        for (int r = 0; r < world_size; r++)
            OTF2_GlobalDefWriter_WriteLocation(g, (uint64_t)r, s_thread,
                                               OTF2_LOCATION_TYPE_CPU_THREAD, all_events[r],
                                               (uint32_t)r);
        for (int i = 0; i < N_REGIONS; i++) {
            uint32_t s = string(g, region_name[i]);
            OTF2_GlobalDefWriter_WriteRegion(g, (uint32_t)i, s, s, s_empty, region_role[i],
                                             OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, s_empty, 0,
                                             0);
        }
        if (calling_contexts) {
            uint32_t s = string(g, "main");
            OTF2_GlobalDefWriter_WriteRegion(g, (uint32_t)N_REGIONS, s, s, s_empty,
                                             OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_SAMPLING,
                                             OTF2_REGION_FLAG_NONE, s_empty, 0, 0);
            OTF2_GlobalDefWriter_WriteCallingContext(g, 0, (uint32_t)N_REGIONS,
                                                     OTF2_UNDEFINED_SOURCE_CODE_LOCATION,
                                                     OTF2_UNDEFINED_CALLING_CONTEXT);
            for (int i = 0; i < N_REGIONS; i++)
                OTF2_GlobalDefWriter_WriteCallingContext(g, (uint32_t)i + 1, (uint32_t)i,
                                                         OTF2_UNDEFINED_SOURCE_CODE_LOCATION, 0);
        }
        /* Group 0: world rank -> location; group 1: MPI_COMM_WORLD; group 2: COMM_SELF. */
        uint64_t *members = malloc((size_t)world_size * sizeof *members);
        if (!members) die("out of memory");
        for (int r = 0; r < world_size; r++) members[r] = (uint64_t)r;
        OTF2_GlobalDefWriter_WriteGroup(g, 0, s_empty, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                        (uint32_t)world_size, members);
        OTF2_GlobalDefWriter_WriteGroup(g, 1, s_empty, OTF2_GROUP_TYPE_COMM_GROUP,
                                        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                        (uint32_t)world_size, members);
        OTF2_GlobalDefWriter_WriteGroup(g, 2, s_empty, OTF2_GROUP_TYPE_COMM_SELF,
                                        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 0, NULL);
        OTF2_GlobalDefWriter_WriteComm(g, 0, string(g, "MPI_COMM_WORLD"), 1, OTF2_UNDEFINED_COMM,
                                       OTF2_COMM_FLAG_NONE);
        OTF2_GlobalDefWriter_WriteComm(g, 1, string(g, "MPI_COMM_SELF"), 2, OTF2_UNDEFINED_COMM,
                                       OTF2_COMM_FLAG_NONE);
        for (int c = 2; c < n_global; c++) {
            int p = key_at[c];
            int32_t size = all[p + 3];
            uint64_t *m = malloc((size_t)(size + 1) * sizeof *m);
            if (!m) die("out of memory");
            int32_t nd = all[p + 4];
            for (int j = 0; j < size; j++) m[j] = (uint64_t)all[p + 6 + 3 * nd + j];
            OTF2_GlobalDefWriter_WriteGroup(g, (uint32_t)(c + 1), s_empty,
                                            OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, (uint32_t)size, m);
            free(m);
            char name[64];
            snprintf(name, sizeof name, "Comm %d", c);
            OTF2_GlobalDefWriter_WriteComm(g, (uint32_t)c, string(g, name), (uint32_t)(c + 1),
                                           0, OTF2_COMM_FLAG_NONE);
        }
        /* Cartesian topologies, as Score-P defines them: one CartDimension per dimension, the
         * CartTopology on its communicator, and every member's CartCoordinate. */
        uint32_t n_dims = 0, n_topos = 0;
        for (int c = 2; c < n_global; c++) {
            int p = key_at[c];
            int32_t nd = all[p + 4];
            if (nd <= 0) continue;
            OTF2_CartDimensionRef dims[64];
            for (int d = 0; d < nd && d < 64; d++) {
                char name[64];
                snprintf(name, sizeof name, "Comm %d dimension %d", c, d);
                dims[d] = n_dims++;
                OTF2_GlobalDefWriter_WriteCartDimension(g, dims[d], string(g, name),
                                                        (uint32_t)all[p + 6 + d],
                                                        all[p + 6 + nd + d] ? 1 : 0);
            }
            char name[64];
            snprintf(name, sizeof name, "Comm %d topology", c);
            uint32_t topo = n_topos++;
            OTF2_GlobalDefWriter_WriteCartTopology(g, topo, string(g, name), (uint32_t)c,
                                                   (uint8_t)nd, dims);
            /* every record of this communicator carries its rank's coordinates */
            for (int r = 0; r < world_size; r++)
                for (int q = displs[r]; q < displs[r] + counts[r];) {
                    int32_t qn = all[q + 4], qsize = all[q + 3];
                    if (all[q + 1] == key_root[c] && all[q + 2] == key_serial[c] && qn == nd) {
                        uint32_t coords[64];
                        for (int d = 0; d < nd && d < 64; d++)
                            coords[d] = (uint32_t)all[q + 6 + 2 * nd + d];
                        OTF2_GlobalDefWriter_WriteCartCoordinate(g, topo, (uint32_t)all[q + 5],
                                                                 (uint8_t)nd, coords);
                    }
                    q += 6 + 3 * qn + qsize;
                }
        }
        free(members);
        OTF2_Archive_CloseGlobalDefWriter(archive, g);
    }
    OTF2_Archive_Close(archive);
    archive = NULL;
    free(mine), free(counts), free(displs), free(all), free(key_root), free(key_serial);
    free(key_at), free(map), free(all_events);
}

/* ---------------------------------------------------------------- C wrappers */

int MPI_Init(int *argc, char ***argv) {
    uint64_t t0 = now();
    int rc = PMPI_Init(argc, argv);
    start();
    first_time = t0;
    enter_at(t0, R_Init);
    leave(R_Init);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    uint64_t t0 = now();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    start();
    first_time = t0;
    enter_at(t0, R_Init_thread);
    leave(R_Init_thread);
    return rc;
}

int MPI_Finalize(void) {
    enter(R_Finalize);
    leave(R_Finalize);
    if (archive) finish();
    return PMPI_Finalize();
}

#define SEND(NAME, R)                                                                              \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) { \
        enter(R);                                                                                  \
        send_event(dest, tag, comm, (uint64_t)count * (uint64_t)type_size(t));                     \
        int rc = PMPI_##NAME(buf, count, t, dest, tag, comm);                                      \
        leave(R);                                                                                  \
        return rc;                                                                                 \
    }
SEND(Send, R_Send)
SEND(Ssend, R_Ssend)
SEND(Bsend, R_Bsend)
SEND(Rsend, R_Rsend)

int MPI_Recv(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    enter(R_Recv);
    int rc = PMPI_Recv(buf, count, t, source, tag, comm, status);
    recv_event(status, comm, t);
    leave(R_Recv);
    return rc;
}

#define ISEND(NAME, R)                                                                             \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,   \
                   MPI_Request *req) {                                                             \
        enter(R);                                                                                  \
        int rc = PMPI_##NAME(buf, count, t, dest, tag, comm, req);                                 \
        isend_event(dest, tag, comm, (uint64_t)count * (uint64_t)type_size(t), *req);              \
        leave(R);                                                                                  \
        return rc;                                                                                 \
    }
ISEND(Isend, R_Isend)
ISEND(Issend, R_Issend)

int MPI_Irecv(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm,
              MPI_Request *req) {
    enter(R_Irecv);
    int rc = PMPI_Irecv(buf, count, t, source, tag, comm, req);
    irecv_event(source, t, comm, *req);
    leave(R_Irecv);
    return rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                 MPI_Status *status) {
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    enter(R_Sendrecv);
    send_event(dest, stag, comm, (uint64_t)scount * (uint64_t)type_size(stype));
    int rc = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                           status);
    recv_event(status, comm, rtype);
    leave(R_Sendrecv);
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype t, int dest, int stag, int source,
                         int rtag, MPI_Comm comm, MPI_Status *status) {
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    enter(R_Sendrecv_replace);
    send_event(dest, stag, comm, (uint64_t)count * (uint64_t)type_size(t));
    int rc = PMPI_Sendrecv_replace(buf, count, t, dest, stag, source, rtag, comm, status);
    recv_event(status, comm, t);
    leave(R_Sendrecv_replace);
    return rc;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    MPI_Request h = *req;
    enter(R_Wait);
    int rc = PMPI_Wait(req, status);
    completed(h, status);
    leave(R_Wait);
    return rc;
}

int MPI_Cancel(MPI_Request *req) {
    enter(R_Cancel);
    int rc = PMPI_Cancel(req);
    leave(R_Cancel);
    return rc;
}

/* A freed request is never completed by a Wait or Test: forget it. */
int MPI_Request_free(MPI_Request *req) {
    enter(R_Request_free);
    int i = request_find(*req);
    if (i >= 0) request_remove(i);
    i = persistent_find(*req);
    if (i >= 0) persistents[i] = persistents[--n_persistents];
    int rc = PMPI_Request_free(req);
    leave(R_Request_free);
    return rc;
}

/* Asks whether a request is complete without completing it (ABySS polls its posted receive
 * this way, then completes it with MPI_Test): a call of its own, no request event. */
int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status) {
    enter(R_Request_get_status);
    int rc = PMPI_Request_get_status(req, flag, status);
    leave(R_Request_get_status);
    return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    MPI_Request h = *req;
    enter(R_Test);
    int rc = PMPI_Test(req, flag, status);
    if (*flag)
        completed(h, status);
    else
        test_failed(h);
    leave(R_Test);
    return rc;
}

#define SEND_INIT(NAME, R)                                                                         \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,   \
                   MPI_Request *req) {                                                             \
        enter(R);                                                                                  \
        int rc = PMPI_##NAME(buf, count, t, dest, tag, comm, req);                                 \
        if (rc == MPI_SUCCESS)                                                                     \
            persistent_add((Persistent){*req, 0, dest, tag, comm, t,                               \
                                        (uint64_t)count * (uint64_t)type_size(t)});                \
        leave(R);                                                                                  \
        return rc;                                                                                 \
    }
SEND_INIT(Send_init, R_Send_init)
SEND_INIT(Bsend_init, R_Bsend_init)
SEND_INIT(Ssend_init, R_Ssend_init)
SEND_INIT(Rsend_init, R_Rsend_init)

int MPI_Recv_init(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm,
                  MPI_Request *req) {
    enter(R_Recv_init);
    int rc = PMPI_Recv_init(buf, count, t, source, tag, comm, req);
    if (rc == MPI_SUCCESS) persistent_add((Persistent){*req, 1, source, tag, comm, t, 0});
    leave(R_Recv_init);
    return rc;
}

/* Each start of a persistent request posts its operation anew: an MpiIsend or MpiIrecvRequest. */
static void started(MPI_Request h) {
    int i = persistent_find(h);
    if (i < 0) return;
    Persistent p = persistents[i];
    if (p.is_recv)
        irecv_event(p.peer, p.type, p.comm, h);
    else
        isend_event(p.peer, p.tag, p.comm, p.bytes, h);
}

int MPI_Start(MPI_Request *req) {
    enter(R_Start);
    int rc = PMPI_Start(req);
    if (rc == MPI_SUCCESS) started(*req);
    leave(R_Start);
    return rc;
}

int MPI_Startall(int n, MPI_Request reqs[]) {
    enter(R_Startall);
    int rc = PMPI_Startall(n, reqs);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < n; i++) started(reqs[i]);
    leave(R_Startall);
    return rc;
}

static MPI_Request *copy_requests(int n, const MPI_Request *reqs) {
    MPI_Request *c = malloc((size_t)(n + 1) * sizeof *c);
    if (!c) die("out of memory");
    memcpy(c, reqs, (size_t)n * sizeof *c);
    return c;
}
static MPI_Status *statuses_for(int n, MPI_Status *given) {
    if (given != MPI_STATUSES_IGNORE) return given;
    MPI_Status *s = malloc((size_t)(n + 1) * sizeof *s);
    if (!s) die("out of memory");
    return s;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
    MPI_Request *h = copy_requests(n, reqs);
    MPI_Status *st = statuses_for(n, statuses);
    enter(R_Waitall);
    int rc = PMPI_Waitall(n, reqs, st);
    for (int i = 0; i < n; i++) completed(h[i], &st[i]);
    leave(R_Waitall);
    if (st != statuses) free(st);
    free(h);
    return rc;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
    MPI_Request *h = copy_requests(n, reqs);
    MPI_Status *st = statuses_for(n, statuses);
    enter(R_Testall);
    int rc = PMPI_Testall(n, reqs, flag, st);
    for (int i = 0; i < n; i++) {
        if (*flag)
            completed(h[i], &st[i]);
        else
            test_failed(h[i]);
    }
    leave(R_Testall);
    if (st != statuses) free(st);
    free(h);
    return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    MPI_Request *h = copy_requests(n, reqs);
    enter(R_Waitany);
    int rc = PMPI_Waitany(n, reqs, index, status);
    if (*index != MPI_UNDEFINED) completed(h[*index], status);
    leave(R_Waitany);
    free(h);
    return rc;
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    MPI_Request *h = copy_requests(n, reqs);
    enter(R_Testany);
    int rc = PMPI_Testany(n, reqs, index, flag, status);
    if (*flag && *index != MPI_UNDEFINED)
        completed(h[*index], status);
    else if (!*flag)
        for (int i = 0; i < n; i++) test_failed(h[i]);
    leave(R_Testany);
    free(h);
    return rc;
}

static int some(int R, int (*f)(int, MPI_Request *, int *, int *, MPI_Status *), int n,
                MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    MPI_Request *h = copy_requests(n, reqs);
    MPI_Status *st = statuses_for(n, statuses);
    enter(R);
    int rc = f(n, reqs, outcount, indices, st);
    if (*outcount != MPI_UNDEFINED)
        for (int i = 0; i < *outcount; i++) completed(h[indices[i]], &st[i]);
    leave(R);
    if (st != statuses) free(st);
    free(h);
    return rc;
}
int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    return some(R_Waitsome, PMPI_Waitsome, n, reqs, outcount, indices, statuses);
}
int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    return some(R_Testsome, PMPI_Testsome, n, reqs, outcount, indices, statuses);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    enter(R_Probe);
    int rc = PMPI_Probe(source, tag, comm, status);
    leave(R_Probe);
    return rc;
}
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    enter(R_Iprobe);
    int rc = PMPI_Iprobe(source, tag, comm, flag, status);
    leave(R_Iprobe);
    return rc;
}

/* Collectives: bytes as Score-P counts them — what this rank sends and receives, the root
 * counting its messages to (from) every rank including itself. */
int MPI_Barrier(MPI_Comm comm) {
    enter(R_Barrier);
    coll_begin();
    int rc = PMPI_Barrier(comm);
    coll_end(OTF2_COLLECTIVE_OP_BARRIER, comm, -1, 0, 0);
    leave(R_Barrier);
    return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
    uint64_t b = (uint64_t)count * (uint64_t)type_size(t);
    int me = comm_rank(comm), n = comm_size(comm);
    enter(R_Bcast);
    coll_begin();
    int rc = PMPI_Bcast(buf, count, t, root, comm);
    coll_end(OTF2_COLLECTIVE_OP_BCAST, comm, root, me == root ? b * (uint64_t)n : 0, b);
    leave(R_Bcast);
    return rc;
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root,
               MPI_Comm comm) {
    uint64_t b = (uint64_t)count * (uint64_t)type_size(t);
    int me = comm_rank(comm), n = comm_size(comm);
    enter(R_Reduce);
    coll_begin();
    int rc = PMPI_Reduce(sbuf, rbuf, count, t, op, root, comm);
    coll_end(OTF2_COLLECTIVE_OP_REDUCE, comm, root, b, me == root ? b * (uint64_t)n : 0);
    leave(R_Reduce);
    return rc;
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                  MPI_Comm comm) {
    uint64_t b = (uint64_t)count * (uint64_t)type_size(t);
    uint64_t n = (uint64_t)comm_size(comm);
    enter(R_Allreduce);
    coll_begin();
    int rc = PMPI_Allreduce(sbuf, rbuf, count, t, op, comm);
    coll_end(OTF2_COLLECTIVE_OP_ALLREDUCE, comm, -1, b * n, b * n);
    leave(R_Allreduce);
    return rc;
}

int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    uint64_t b = (uint64_t)count * (uint64_t)type_size(t);
    enter(R_Scan);
    coll_begin();
    int rc = PMPI_Scan(sbuf, rbuf, count, t, op, comm);
    coll_end(OTF2_COLLECTIVE_OP_SCAN, comm, -1, b, b);
    leave(R_Scan);
    return rc;
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int counts[], MPI_Datatype t, MPI_Op op,
                       MPI_Comm comm) {
    int n = comm_size(comm), me = comm_rank(comm);
    uint64_t total = 0, s = (uint64_t)type_size(t);
    for (int i = 0; i < n; i++) total += (uint64_t)counts[i];
    enter(R_Reduce_scatter);
    coll_begin();
    int rc = PMPI_Reduce_scatter(sbuf, rbuf, counts, t, op, comm);
    coll_end(OTF2_COLLECTIVE_OP_REDUCE_SCATTER, comm, -1, total * s,
             (uint64_t)counts[me] * s * (uint64_t)n);
    leave(R_Reduce_scatter);
    return rc;
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm) {
    int me = comm_rank(comm), n = comm_size(comm);
    uint64_t sent = sbuf == MPI_IN_PLACE ? 0 : (uint64_t)scount * (uint64_t)type_size(stype);
    uint64_t recvd = me == root ? (uint64_t)rcount * (uint64_t)type_size(rtype) * (uint64_t)n : 0;
    enter(R_Gather);
    coll_begin();
    int rc = PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    coll_end(OTF2_COLLECTIVE_OP_GATHER, comm, root, sent, recvd);
    leave(R_Gather);
    return rc;
}

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm) {
    int me = comm_rank(comm), n = comm_size(comm);
    uint64_t sent = sbuf == MPI_IN_PLACE ? 0 : (uint64_t)scount * (uint64_t)type_size(stype);
    uint64_t recvd = 0;
    if (me == root)
        for (int i = 0; i < n; i++) recvd += (uint64_t)rcounts[i] * (uint64_t)type_size(rtype);
    enter(R_Gatherv);
    coll_begin();
    int rc = PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    coll_end(OTF2_COLLECTIVE_OP_GATHERV, comm, root, sent, recvd);
    leave(R_Gatherv);
    return rc;
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm) {
    int me = comm_rank(comm), n = comm_size(comm);
    uint64_t sent = me == root ? (uint64_t)scount * (uint64_t)type_size(stype) * (uint64_t)n : 0;
    uint64_t recvd = rbuf == MPI_IN_PLACE ? 0 : (uint64_t)rcount * (uint64_t)type_size(rtype);
    enter(R_Scatter);
    coll_begin();
    int rc = PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    coll_end(OTF2_COLLECTIVE_OP_SCATTER, comm, root, sent, recvd);
    leave(R_Scatter);
    return rc;
}

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
    int me = comm_rank(comm), n = comm_size(comm);
    uint64_t sent = 0;
    if (me == root)
        for (int i = 0; i < n; i++) sent += (uint64_t)scounts[i] * (uint64_t)type_size(stype);
    uint64_t recvd = rbuf == MPI_IN_PLACE ? 0 : (uint64_t)rcount * (uint64_t)type_size(rtype);
    enter(R_Scatterv);
    coll_begin();
    int rc = PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    coll_end(OTF2_COLLECTIVE_OP_SCATTERV, comm, root, sent, recvd);
    leave(R_Scatterv);
    return rc;
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm) {
    uint64_t n = (uint64_t)comm_size(comm);
    uint64_t r = (uint64_t)rcount * (uint64_t)type_size(rtype);
    uint64_t s = sbuf == MPI_IN_PLACE ? r : (uint64_t)scount * (uint64_t)type_size(stype);
    enter(R_Allgather);
    coll_begin();
    int rc = PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    coll_end(OTF2_COLLECTIVE_OP_ALLGATHER, comm, -1, s * n, r * n);
    leave(R_Allgather);
    return rc;
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
    int n = comm_size(comm), me = comm_rank(comm);
    uint64_t recvd = 0, rs = (uint64_t)type_size(rtype);
    for (int i = 0; i < n; i++) recvd += (uint64_t)rcounts[i] * rs;
    uint64_t s = sbuf == MPI_IN_PLACE ? (uint64_t)rcounts[me] * rs
                                      : (uint64_t)scount * (uint64_t)type_size(stype);
    enter(R_Allgatherv);
    coll_begin();
    int rc = PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    coll_end(OTF2_COLLECTIVE_OP_ALLGATHERV, comm, -1, s * (uint64_t)n, recvd);
    leave(R_Allgatherv);
    return rc;
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
    uint64_t n = (uint64_t)comm_size(comm);
    uint64_t r = (uint64_t)rcount * (uint64_t)type_size(rtype);
    uint64_t s = sbuf == MPI_IN_PLACE ? r : (uint64_t)scount * (uint64_t)type_size(stype);
    enter(R_Alltoall);
    coll_begin();
    int rc = PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    coll_end(OTF2_COLLECTIVE_OP_ALLTOALL, comm, -1, s * n, r * n);
    leave(R_Alltoall);
    return rc;
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm) {
    int n = comm_size(comm);
    uint64_t sent = 0, recvd = 0, ss = (uint64_t)type_size(stype), rs = (uint64_t)type_size(rtype);
    for (int i = 0; i < n; i++) {
        recvd += (uint64_t)rcounts[i] * rs;
        sent += sbuf == MPI_IN_PLACE ? (uint64_t)rcounts[i] * rs : (uint64_t)scounts[i] * ss;
    }
    enter(R_Alltoallv);
    coll_begin();
    int rc = PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
    coll_end(OTF2_COLLECTIVE_OP_ALLTOALLV, comm, -1, sent, recvd);
    leave(R_Alltoallv);
    return rc;
}

/* Communicator creation: recorded as regions; the new communicator is defined at the end. */
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    enter(R_Comm_split);
    int rc = PMPI_Comm_split(comm, color, key, newcomm);
    if (tracing) comm_created(*newcomm);
    leave(R_Comm_split);
    return rc;
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
    enter(R_Comm_dup);
    int rc = PMPI_Comm_dup(comm, newcomm);
    if (tracing) comm_created(*newcomm);
    leave(R_Comm_dup);
    return rc;
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    enter(R_Comm_create);
    int rc = PMPI_Comm_create(comm, group, newcomm);
    if (tracing) comm_created(*newcomm);
    leave(R_Comm_create);
    return rc;
}
int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *newcomm) {
    enter(R_Cart_create);
    int rc = PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm);
    if (tracing) comm_created(*newcomm);
    leave(R_Cart_create);
    return rc;
}
int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *newcomm) {
    enter(R_Cart_sub);
    int rc = PMPI_Cart_sub(comm, remain, newcomm);
    if (tracing) comm_created(*newcomm);
    leave(R_Cart_sub);
    return rc;
}
int MPI_Comm_free(MPI_Comm *comm) {
    enter(R_Comm_free);
    if (tracing) comm_freed(*comm);
    int rc = PMPI_Comm_free(comm);
    leave(R_Comm_free);
    return rc;
}

/* ---------------------------------------------------------------- Fortran (mpif.h, `use mpi`) */

/* Open MPI's Fortran bindings call PMPI_* directly, so Fortran programs are traced by wrapping
 * the Fortran symbols too; each converts its handles and calls the C wrapper above. The Fortran
 * sentinels (MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS(ES)_IGNORE) are addresses of Open MPI's common
 * blocks, looked up once. */
typedef MPI_Fint F;
static void *f_in_place, *f_bottom, *f_status_ignore, *f_statuses_ignore;
static void f_sentinels(void) {
    static int done;
    if (done) return;
    done = 1;
    f_in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
    f_bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
    f_status_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_status_ignore_");
    f_statuses_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_statuses_ignore_");
}
static const void *fbuf(const void *b) {
    f_sentinels();
    if (b && b == f_in_place) return MPI_IN_PLACE;
    if (b && b == f_bottom) return MPI_BOTTOM;
    return b;
}
static void fstatus(const MPI_Status *c, F *f) {
    if ((void *)f != f_status_ignore && (void *)f != f_statuses_ignore) MPI_Status_c2f(c, f);
}
#define T(x) MPI_Type_f2c(*(x))
#define C(x) MPI_Comm_f2c(*(x))

void mpi_init_(F *ierr) {
    f_sentinels();
    *ierr = MPI_Init(NULL, NULL);
}
void mpi_init_thread_(F *required, F *provided, F *ierr) {
    int p = 0;
    f_sentinels();
    *ierr = MPI_Init_thread(NULL, NULL, *required, &p);
    *provided = p;
}
void mpi_finalize_(F *ierr) { *ierr = MPI_Finalize(); }

#define FSEND(f, c)                                                                                \
    void f(void *buf, F *count, F *t, F *dest, F *tag, F *comm, F *ierr) {                         \
        *ierr = c(fbuf(buf), *count, T(t), *dest, *tag, C(comm));                                  \
    }
FSEND(mpi_send_, MPI_Send)
FSEND(mpi_ssend_, MPI_Ssend)
FSEND(mpi_bsend_, MPI_Bsend)
FSEND(mpi_rsend_, MPI_Rsend)

void mpi_recv_(void *buf, F *count, F *t, F *source, F *tag, F *comm, F *status, F *ierr) {
    MPI_Status s;
    *ierr = MPI_Recv((void *)fbuf(buf), *count, T(t), *source, *tag, C(comm), &s);
    fstatus(&s, status);
}

#define FISEND(f, c)                                                                               \
    void f(void *buf, F *count, F *t, F *dest, F *tag, F *comm, F *req, F *ierr) {                 \
        MPI_Request r;                                                                             \
        *ierr = c(fbuf(buf), *count, T(t), *dest, *tag, C(comm), &r);                              \
        *req = MPI_Request_c2f(r);                                                                 \
    }
FISEND(mpi_isend_, MPI_Isend)
FISEND(mpi_issend_, MPI_Issend)

void mpi_irecv_(void *buf, F *count, F *t, F *source, F *tag, F *comm, F *req, F *ierr) {
    MPI_Request r;
    *ierr = MPI_Irecv((void *)fbuf(buf), *count, T(t), *source, *tag, C(comm), &r);
    *req = MPI_Request_c2f(r);
}

void mpi_sendrecv_(void *sbuf, F *scount, F *stype, F *dest, F *stag, void *rbuf, F *rcount,
                   F *rtype, F *source, F *rtag, F *comm, F *status, F *ierr) {
    MPI_Status s;
    *ierr = MPI_Sendrecv(fbuf(sbuf), *scount, T(stype), *dest, *stag, (void *)fbuf(rbuf), *rcount,
                         T(rtype), *source, *rtag, C(comm), &s);
    fstatus(&s, status);
}

void mpi_wait_(F *req, F *status, F *ierr) {
    MPI_Request r = MPI_Request_f2c(*req);
    MPI_Status s;
    *ierr = MPI_Wait(&r, &s);
    *req = MPI_Request_c2f(r);
    fstatus(&s, status);
}

void mpi_cancel_(F *req, F *ierr) {
    MPI_Request r = MPI_Request_f2c(*req);
    *ierr = MPI_Cancel(&r);
}

void mpi_test_(F *req, F *flag, F *status, F *ierr) {
    MPI_Request r = MPI_Request_f2c(*req);
    MPI_Status s;
    int fl = 0;
    *ierr = MPI_Test(&r, &fl, &s);
    *req = MPI_Request_c2f(r);
    *flag = fl;
    if (fl) fstatus(&s, status);
}

/* MUMPS polls for its messages from Fortran (MPI_Iprobe, then MPI_Recv of what it found): without
 * these the probes of a Fortran program were missing from its trace. */
void mpi_probe_(F *source, F *tag, F *comm, F *status, F *ierr) {
    MPI_Status s;
    *ierr = MPI_Probe(*source, *tag, C(comm), &s);
    fstatus(&s, status);
}
void mpi_iprobe_(F *source, F *tag, F *comm, F *flag, F *status, F *ierr) {
    MPI_Status s;
    int fl = 0;
    *ierr = MPI_Iprobe(*source, *tag, C(comm), &fl, &s);
    *flag = fl;
    if (fl) fstatus(&s, status);
}

/* Fortran's MPI_STATUS_SIZE: Open MPI's C status, in Fortran integers. */
#define F_STATUS_SIZE (sizeof(MPI_Status) / sizeof(F))

void mpi_waitall_(F *count, F *reqs, F *statuses, F *ierr) {
    int n = *count;
    MPI_Request *r = malloc((size_t)(n + 1) * sizeof *r);
    MPI_Status *s = malloc((size_t)(n + 1) * sizeof *s);
    if (!r || !s) die("out of memory");
    for (int i = 0; i < n; i++) r[i] = MPI_Request_f2c(reqs[i]);
    *ierr = MPI_Waitall(n, r, s);
    for (int i = 0; i < n; i++) {
        reqs[i] = MPI_Request_c2f(r[i]);
        if ((void *)statuses != f_statuses_ignore)
            MPI_Status_c2f(&s[i], statuses + (size_t)i * F_STATUS_SIZE);
    }
    free(r), free(s);
}

void mpi_waitany_(F *count, F *reqs, F *index, F *status, F *ierr) {
    int n = *count, idx = MPI_UNDEFINED;
    MPI_Request *r = malloc((size_t)(n + 1) * sizeof *r);
    if (!r) die("out of memory");
    for (int i = 0; i < n; i++) r[i] = MPI_Request_f2c(reqs[i]);
    MPI_Status s;
    *ierr = MPI_Waitany(n, r, &idx, &s);
    for (int i = 0; i < n; i++) reqs[i] = MPI_Request_c2f(r[i]);
    *index = idx == MPI_UNDEFINED ? MPI_UNDEFINED : idx + 1;
    if (idx != MPI_UNDEFINED) fstatus(&s, status);
    free(r);
}

void mpi_barrier_(F *comm, F *ierr) { *ierr = MPI_Barrier(C(comm)); }
void mpi_bcast_(void *buf, F *count, F *t, F *root, F *comm, F *ierr) {
    *ierr = MPI_Bcast((void *)fbuf(buf), *count, T(t), *root, C(comm));
}
void mpi_reduce_(void *sbuf, void *rbuf, F *count, F *t, F *op, F *root, F *comm, F *ierr) {
    *ierr = MPI_Reduce(fbuf(sbuf), (void *)fbuf(rbuf), *count, T(t), MPI_Op_f2c(*op), *root,
                       C(comm));
}
void mpi_allreduce_(void *sbuf, void *rbuf, F *count, F *t, F *op, F *comm, F *ierr) {
    *ierr = MPI_Allreduce(fbuf(sbuf), (void *)fbuf(rbuf), *count, T(t), MPI_Op_f2c(*op), C(comm));
}
void mpi_alltoall_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *comm,
                   F *ierr) {
    *ierr = MPI_Alltoall(fbuf(sbuf), *scount, T(stype), (void *)fbuf(rbuf), *rcount, T(rtype),
                         C(comm));
}
void mpi_alltoallv_(void *sbuf, F *scounts, F *sdispls, F *stype, void *rbuf, F *rcounts,
                    F *rdispls, F *rtype, F *comm, F *ierr) {
    *ierr = MPI_Alltoallv(fbuf(sbuf), scounts, sdispls, T(stype), (void *)fbuf(rbuf), rcounts,
                          rdispls, T(rtype), C(comm));
}
void mpi_allgather_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *comm,
                    F *ierr) {
    *ierr = MPI_Allgather(fbuf(sbuf), *scount, T(stype), (void *)fbuf(rbuf), *rcount, T(rtype),
                          C(comm));
}
void mpi_allgatherv_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts, F *displs, F *rtype,
                     F *comm, F *ierr) {
    *ierr = MPI_Allgatherv(fbuf(sbuf), *scount, T(stype), (void *)fbuf(rbuf), rcounts, displs,
                           T(rtype), C(comm));
}
void mpi_gather_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *root,
                 F *comm, F *ierr) {
    *ierr = MPI_Gather(fbuf(sbuf), *scount, T(stype), (void *)fbuf(rbuf), *rcount, T(rtype), *root,
                       C(comm));
}
void mpi_gatherv_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts, F *displs, F *rtype,
                  F *root, F *comm, F *ierr) {
    *ierr = MPI_Gatherv(fbuf(sbuf), *scount, T(stype), (void *)fbuf(rbuf), rcounts, displs,
                        T(rtype), *root, C(comm));
}
void mpi_scatter_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *root,
                  F *comm, F *ierr) {
    *ierr = MPI_Scatter(fbuf(sbuf), *scount, T(stype), (void *)fbuf(rbuf), *rcount, T(rtype),
                        *root, C(comm));
}
void mpi_scatterv_(void *sbuf, F *scounts, F *displs, F *stype, void *rbuf, F *rcount, F *rtype,
                   F *root, F *comm, F *ierr) {
    *ierr = MPI_Scatterv(fbuf(sbuf), scounts, displs, T(stype), (void *)fbuf(rbuf), *rcount,
                         T(rtype), *root, C(comm));
}
void mpi_comm_split_(F *comm, F *color, F *key, F *newcomm, F *ierr) {
    MPI_Comm c;
    *ierr = MPI_Comm_split(C(comm), *color, *key, &c);
    *newcomm = MPI_Comm_c2f(c);
}
void mpi_comm_dup_(F *comm, F *newcomm, F *ierr) {
    MPI_Comm c;
    *ierr = MPI_Comm_dup(C(comm), &c);
    *newcomm = MPI_Comm_c2f(c);
}
/* Communicators built from Fortran (CP2K's 2-D grids: MPI_Cart_create, MPI_Cart_sub for their
 * rows and columns): without these the C wrappers never see them and every message on them is
 * written with an undefined communicator. Fortran LOGICALs arrive as integers (0 = false). */
void mpi_comm_create_(F *comm, F *group, F *newcomm, F *ierr) {
    MPI_Comm c;
    *ierr = MPI_Comm_create(C(comm), MPI_Group_f2c(*group), &c);
    *newcomm = MPI_Comm_c2f(c);
}
void mpi_cart_create_(F *comm, F *ndims, F *dims, F *periods, F *reorder, F *newcomm, F *ierr) {
    int n = *ndims;
    int *d = malloc((size_t)(n + 1) * sizeof *d), *p = malloc((size_t)(n + 1) * sizeof *p);
    if (!d || !p) die("out of memory");
    for (int i = 0; i < n; i++) d[i] = dims[i], p[i] = periods[i] != 0;
    MPI_Comm c;
    *ierr = MPI_Cart_create(C(comm), n, d, p, *reorder != 0, &c);
    *newcomm = MPI_Comm_c2f(c);
    free(d), free(p);
}
void mpi_cart_sub_(F *comm, F *remain, F *newcomm, F *ierr) {
    int n = 0;
    PMPI_Cartdim_get(C(comm), &n);
    int *r = malloc((size_t)(n + 1) * sizeof *r);
    if (!r) die("out of memory");
    for (int i = 0; i < n; i++) r[i] = remain[i] != 0;
    MPI_Comm c;
    *ierr = MPI_Cart_sub(C(comm), r, &c);
    *newcomm = MPI_Comm_c2f(c);
    free(r);
}
void mpi_testall_(F *count, F *reqs, F *flag, F *statuses, F *ierr) {
    int n = *count, f = 0;
    MPI_Request *r = malloc((size_t)(n + 1) * sizeof *r);
    MPI_Status *s = malloc((size_t)(n + 1) * sizeof *s);
    if (!r || !s) die("out of memory");
    for (int i = 0; i < n; i++) r[i] = MPI_Request_f2c(reqs[i]);
    *ierr = MPI_Testall(n, r, &f, s);
    *flag = f;
    for (int i = 0; i < n; i++) {
        reqs[i] = MPI_Request_c2f(r[i]);
        if (f && (void *)statuses != f_statuses_ignore)
            MPI_Status_c2f(&s[i], statuses + (size_t)i * F_STATUS_SIZE);
    }
    free(r), free(s);
}
void mpi_comm_free_(F *comm, F *ierr) {
    MPI_Comm c = C(comm);
    *ierr = MPI_Comm_free(&c);
    *comm = MPI_Comm_c2f(c);
}
