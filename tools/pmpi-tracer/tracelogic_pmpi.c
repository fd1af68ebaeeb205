/*
 * tracelogic_pmpi.c: a tiny PMPI interposition tracer that writes tracelogic's native text format
 * (docs/formats.md, "The native text format"). Link it into an MPI program:
 *
 *     mpicc -o app app.c tracelogic_pmpi.c
 *     TRACELOGIC_TRACE=run.txt mpirun -np 4 ./app
 *
 * Wrapped: MPI_Init, MPI_Finalize, MPI_Send, MPI_Ssend, MPI_Isend, MPI_Issend, MPI_Recv,
 * MPI_Irecv, MPI_Sendrecv, MPI_Wait, MPI_Waitall, MPI_Barrier, MPI_Bcast, MPI_Reduce,
 * MPI_Allreduce, MPI_Gather, MPI_Scatter, MPI_Allgather, MPI_Alltoall, MPI_Scan, MPI_Exscan,
 * MPI_Reduce_scatter, MPI_Reduce_scatter_block. Peers and roots are translated to MPI_COMM_WORLD ranks; message sizes
 * are count x type size; times are ns since MPI_Init returned on each rank (its MPI_Wtime minus
 * its own start). Each rank keeps its lines in memory; MPI_Finalize gathers them
 * to rank 0, which writes the file (default tracelogic-trace.txt), so one file holds the run.
 * Used by tracelogic's skeleton test to check that a generated skeleton reproduces its logical
 * trace.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *lines;
static size_t used, cap;
static int world_rank = -1, world_size;
static double start;
static MPI_Group world_group;

/* Open requests: handle -> id, for `req=` and `wait=`. */
struct open_request {
    MPI_Request handle;
    long id;
};
static struct open_request *open_reqs;
static size_t n_open, cap_open;
static long next_req = 1;

static void out(const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = cap - used;
        int n;
        va_start(ap, fmt);
        n = vsnprintf(lines ? lines + used : NULL, lines ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if ((size_t)n < room) {
            used += (size_t)n;
            return;
        }
        cap = (cap + (size_t)n + 1) * 2;
        lines = realloc(lines, cap);
        if (!lines) {
            fprintf(stderr, "tracelogic_pmpi: out of memory\n");
            PMPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
}

static unsigned long long now_ns(void)
{
    double t = PMPI_Wtime() - start;
    return t <= 0 ? 0 : (unsigned long long)(t * 1e9);
}

/* World rank of `rank` in `comm` (-1 for MPI_PROC_NULL / MPI_ANY_SOURCE). */
static int world_of(MPI_Comm comm, int rank)
{
    MPI_Group g;
    int w = -1, inter = 0;
    if (rank < 0) return -1;
    if (comm == MPI_COMM_WORLD) return rank;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        PMPI_Comm_remote_group(comm, &g);
    else
        PMPI_Comm_group(comm, &g);
    PMPI_Group_translate_ranks(g, 1, &rank, world_group, &w);
    PMPI_Group_free(&g);
    return w == MPI_UNDEFINED ? -1 : w;
}

static unsigned long long bytes_of(int count, MPI_Datatype type)
{
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
    PMPI_Type_size(type, &size);
    return (unsigned long long)count * (unsigned long long)(size > 0 ? size : 0);
}

static long remember(MPI_Request handle)
{
    if (handle == MPI_REQUEST_NULL) return 0;
    if (n_open == cap_open) {
        cap_open = cap_open ? cap_open * 2 : 64;
        open_reqs = realloc(open_reqs, cap_open * sizeof *open_reqs);
        if (!open_reqs) PMPI_Abort(MPI_COMM_WORLD, 3);
    }
    open_reqs[n_open].handle = handle;
    open_reqs[n_open].id = next_req;
    n_open++;
    return next_req++;
}

/* Id of an open request, removed from the table (0 if unknown). */
static long forget(MPI_Request handle)
{
    for (size_t k = n_open; k-- > 0;) {
        if (open_reqs[k].handle == handle) {
            long id = open_reqs[k].id;
            open_reqs[k] = open_reqs[--n_open];
            return id;
        }
    }
    return 0;
}

static void peer_text(const char *key, int world, char *buf, size_t len)
{
    if (world < 0)
        snprintf(buf, len, "%s=any", key);
    else
        snprintf(buf, len, "%s=%d", key, world);
}

static void tag_text(int tag, char *buf, size_t len)
{
    if (tag == MPI_ANY_TAG)
        snprintf(buf, len, "tag=any");
    else
        snprintf(buf, len, "tag=%d", tag);
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    start = PMPI_Wtime();
    out("%d 0 %llu MPI_Init\n", world_rank, now_ns());
    return rc;
}

static void p2p_line(const char *func, unsigned long long t0, int send, int world, int tag,
                     unsigned long long bytes, long req)
{
    char p[48], t[32];
    peer_text(send ? "send" : "recv", world, p, sizeof p);
    tag_text(tag, t, sizeof t);
    out("%d %llu %llu %s %s %s bytes=%llu", world_rank, t0, now_ns(), func, p, t, bytes);
    if (req) out(" req=%ld", req);
    out("\n");
}

static int send_like(const char *func, int (*pmpi)(const void *, int, MPI_Datatype, int, int, MPI_Comm),
                     const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    unsigned long long t0 = now_ns();
    int rc = pmpi(buf, count, type, dest, tag, comm);
    if (dest == MPI_PROC_NULL)
        out("%d %llu %llu %s\n", world_rank, t0, now_ns(), func);
    else
        p2p_line(func, t0, 1, world_of(comm, dest), tag, bytes_of(count, type), 0);
    return rc;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return send_like("MPI_Send", PMPI_Send, buf, count, type, dest, tag, comm);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return send_like("MPI_Ssend", PMPI_Ssend, buf, count, type, dest, tag, comm);
}

static int isend_like(const char *func,
                      int (*pmpi)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *),
                      const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    unsigned long long t0 = now_ns();
    int rc = pmpi(buf, count, type, dest, tag, comm, req);
    if (dest == MPI_PROC_NULL)
        out("%d %llu %llu %s\n", world_rank, t0, now_ns(), func);
    else
        p2p_line(func, t0, 1, world_of(comm, dest), tag, bytes_of(count, type), remember(*req));
    return rc;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return isend_like("MPI_Isend", PMPI_Isend, buf, count, type, dest, tag, comm, req);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return isend_like("MPI_Issend", PMPI_Issend, buf, count, type, dest, tag, comm, req);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Status st;
    unsigned long long t0 = now_ns();
    int rc = PMPI_Recv(buf, count, type, source, tag, comm, &st), got = 0;
    if (status != MPI_STATUS_IGNORE) *status = st;
    if (source == MPI_PROC_NULL) {
        out("%d %llu %llu MPI_Recv\n", world_rank, t0, now_ns());
        return rc;
    }
    PMPI_Get_count(&st, type, &got);
    p2p_line("MPI_Recv", t0, 0, world_of(comm, st.MPI_SOURCE), st.MPI_TAG,
             got == MPI_UNDEFINED ? bytes_of(count, type) : bytes_of(got, type), 0);
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    unsigned long long t0 = now_ns();
    int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
    if (source == MPI_PROC_NULL)
        out("%d %llu %llu MPI_Irecv\n", world_rank, t0, now_ns());
    else
        p2p_line("MPI_Irecv", t0, 0, world_of(comm, source), tag, bytes_of(count, type), remember(*req));
    return rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Status st;
    char p[48], t[32];
    unsigned long long t0 = now_ns();
    int rc = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, &st);
    if (status != MPI_STATUS_IGNORE) *status = st;
    out("%d %llu %llu MPI_Sendrecv", world_rank, t0, now_ns());
    if (dest != MPI_PROC_NULL) {
        peer_text("send", world_of(comm, dest), p, sizeof p);
        tag_text(stag, t, sizeof t);
        out(" %s %s bytes=%llu", p, t, bytes_of(scount, stype));
    }
    if (source != MPI_PROC_NULL) {
        peer_text("recv", world_of(comm, st.MPI_SOURCE), p, sizeof p);
        tag_text(st.MPI_TAG, t, sizeof t);
        out(" %s %s bytes=%llu", p, t, bytes_of(rcount, rtype));
    }
    out("\n");
    return rc;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    unsigned long long t0 = now_ns();
    long id = forget(*req);
    int rc = PMPI_Wait(req, status);
    if (id)
        out("%d %llu %llu MPI_Wait wait=%ld\n", world_rank, t0, now_ns(), id);
    else
        out("%d %llu %llu MPI_Wait\n", world_rank, t0, now_ns());
    return rc;
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    unsigned long long t0 = now_ns();
    long *ids = malloc(sizeof(long) * (size_t)(count > 0 ? count : 1));
    int rc, first = 1;
    for (int k = 0; k < count; k++) ids[k] = forget(reqs[k]);
    rc = PMPI_Waitall(count, reqs, statuses);
    out("%d %llu %llu MPI_Waitall", world_rank, t0, now_ns());
    for (int k = 0; k < count; k++) {
        if (!ids[k]) continue;
        out("%s%ld", first ? " wait=" : ",", ids[k]);
        first = 0;
    }
    out("\n");
    free(ids);
    return rc;
}

static void coll_line(const char *func, unsigned long long t0, MPI_Comm comm, int root, unsigned long long sent,
                      unsigned long long recvd)
{
    out("%d %llu %llu %s", world_rank, t0, now_ns(), func);
    if (root >= 0) out(" root=%d", world_of(comm, root));
    out(" sent=%llu recvd=%llu\n", sent, recvd);
}

int MPI_Barrier(MPI_Comm comm)
{
    unsigned long long t0 = now_ns();
    int rc = PMPI_Barrier(comm);
    coll_line("MPI_Barrier", t0, comm, -1, 0, 0);
    return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    unsigned long long t0 = now_ns();
    int rc = PMPI_Bcast(buf, count, type, root, comm), me = 0;
    unsigned long long b = bytes_of(count, type);
    PMPI_Comm_rank(comm, &me);
    /* The root contributes the data, every other rank receives it. */
    coll_line("MPI_Bcast", t0, comm, root, me == root ? b : 0, me == root ? 0 : b);
    return rc;
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    unsigned long long t0 = now_ns();
    int rc = PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm), me = 0;
    unsigned long long b = bytes_of(count, type);
    PMPI_Comm_rank(comm, &me);
    coll_line("MPI_Reduce", t0, comm, root, b, me == root ? b : 0);
    return rc;
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    unsigned long long t0 = now_ns();
    int rc = PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
    unsigned long long b = bytes_of(count, type);
    coll_line("MPI_Allreduce", t0, comm, -1, b, b);
    return rc;
}

int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    unsigned long long t0 = now_ns();
    int rc = PMPI_Scan(sbuf, rbuf, count, type, op, comm);
    unsigned long long b = bytes_of(count, type);
    coll_line("MPI_Scan", t0, comm, -1, b, b);
    return rc;
}

int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    unsigned long long t0 = now_ns();
    int rc = PMPI_Exscan(sbuf, rbuf, count, type, op, comm);
    unsigned long long b = bytes_of(count, type);
    coll_line("MPI_Exscan", t0, comm, -1, b, b);
    return rc;
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
               int root, MPI_Comm comm)
{
    unsigned long long t0 = now_ns();
    int rc = PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    coll_line("MPI_Gather", t0, comm, root, bytes_of(scount, stype), bytes_of(rcount, rtype));
    return rc;
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                int root, MPI_Comm comm)
{
    unsigned long long t0 = now_ns();
    int rc = PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    coll_line("MPI_Scatter", t0, comm, root, bytes_of(scount, stype), bytes_of(rcount, rtype));
    return rc;
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm)
{
    unsigned long long t0 = now_ns();
    int rc = PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    coll_line("MPI_Allgather", t0, comm, -1, bytes_of(scount, stype), bytes_of(rcount, rtype));
    return rc;
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm)
{
    unsigned long long t0 = now_ns();
    int rc = PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    int size = 0;
    PMPI_Comm_size(comm, &size);
    coll_line("MPI_Alltoall", t0, comm, -1, bytes_of(scount, stype) * (unsigned long long)size,
              bytes_of(rcount, rtype) * (unsigned long long)size);
    return rc;
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm)
{
    unsigned long long t0 = now_ns();
    int rc = PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
    int size = 0, me = 0;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &me);
    unsigned long long total = 0;
    for (int k = 0; k < size; k++) total += bytes_of(rcounts[k], type);
    coll_line("MPI_Reduce_scatter", t0, comm, -1, total, bytes_of(rcounts[me], type));
    return rc;
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    unsigned long long t0 = now_ns();
    int rc = PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm);
    int size = 0;
    PMPI_Comm_size(comm, &size);
    coll_line("MPI_Reduce_scatter_block", t0, comm, -1, bytes_of(rcount, type) * (unsigned long long)size,
              bytes_of(rcount, type));
    return rc;
}

int MPI_Finalize(void)
{
    const char *path = getenv("TRACELOGIC_TRACE");
    int *sizes = NULL, *offsets = NULL, mine, total = 0;
    char *all = NULL;
    unsigned long long t = now_ns();
    out("%d %llu %llu MPI_Finalize\n", world_rank, t, t);
    mine = (int)used;
    if (world_rank == 0) {
        sizes = malloc(sizeof(int) * (size_t)world_size);
        offsets = malloc(sizeof(int) * (size_t)world_size);
    }
    PMPI_Gather(&mine, 1, MPI_INT, sizes, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (world_rank == 0) {
        for (int r = 0; r < world_size; r++) {
            offsets[r] = total;
            total += sizes[r];
        }
        all = malloc((size_t)total + 1);
    }
    PMPI_Gatherv(lines, mine, MPI_CHAR, all, sizes, offsets, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (world_rank == 0) {
        FILE *f = fopen(path && *path ? path : "tracelogic-trace.txt", "w");
        if (!f) {
            perror("tracelogic_pmpi: cannot write the trace");
        } else {
            fprintf(f, "#tracelogic-text 1\n# written by tools/pmpi-tracer/tracelogic_pmpi.c\nranks %d\n", world_size);
            fwrite(all, 1, (size_t)total, f);
            fclose(f);
        }
        free(all);
        free(sizes);
        free(offsets);
    }
    free(lines);
    free(open_reqs);
    PMPI_Group_free(&world_group);
    return PMPI_Finalize();
}
