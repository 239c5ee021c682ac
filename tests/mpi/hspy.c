/*
 * libhspy.so: a PMPI layer preloaded after tdshim (tests/mpi/partitioned.sh)
 * that sees the calls tdshim makes to the MPI library for the header
 * companions of partitioned requests (shim/mpi/tds_part.c, "partitioned
 * communication"): every PMPI_Psend_init/PMPI_Precv_init of 1 partition of
 * MPI_BYTE on MPI_COMM_WORLD (the program's partitions are never that in
 * the test). It numbers them per peer in the order they are made (the
 * order in which MPI-4.0 §4.2.1 matches them: the k-th companion sent from
 * A to B is the k-th B posts for A), and logs the header bytes of each
 * round: a send's when tdshim readies its partition (PMPI_Pready), a
 * receive's when tdshim's PMPI_Wait on it returns (once started: not the
 * wait on the inactive request before it is freed). In PMPI_Finalize each
 * rank writes $HSPY_DIR/hspy-RANK.txt, one line per header:
 *
 *   S|R FROM TO K ROUND HEX
 *
 * The sent and the received lines must be the same set: every header read
 * back is the one sent for the same message.
 *
 * It also defines the MPI_ names of those functions, as a classic tool
 * does (calling PMPI_, which is tdshim's): tdshim hands its MPI_X to a
 * next layer's MPI_X when that layer's object is not the one of the next
 * PMPI_X, so a layer with PMPI_X alone would have the program's MPI_X
 * skip tdshim (gen_wrappers.py, next_tool).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4 /* else empty: partitioned.sh skips */
#define MAXC 64
#define MAXLOG 4096

static struct comp {
    MPI_Request req;
    int send, peer, k, round, len, active;
    unsigned char *buf;
} comps[MAXC];
static int ncomps;
static char *logbuf[MAXLOG];
static int nlog;

static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "hspy: no %s\n", name);
        abort();
    }
    return f;
}

static int myrank(void)
{
    int r = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static void record(struct comp *c)
{
    if (nlog == MAXLOG)
        return;
    char *s = malloc(64 + 2 * (size_t)c->len);
    int me = myrank(), n = sprintf(s, "%c %d %d %d %d ", c->send ? 'S' : 'R', c->send ? me : c->peer,
                                   c->send ? c->peer : me, c->k, c->round++);
    for (int i = 0; i < c->len; i++)
        n += sprintf(s + n, "%02x", c->buf[i]);
    logbuf[nlog++] = s;
}

static void add(int send, const void *buf, int count, int peer, MPI_Request req)
{
    if (ncomps == MAXC)
        return;
    int k = 0;
    for (int i = 0; i < ncomps; i++)
        k += comps[i].send == send && comps[i].peer == peer;
    comps[ncomps++] = (struct comp){req, send, peer, k, 0, count, 0, (unsigned char *)buf};
}

static struct comp *find(MPI_Request r)
{
    for (int i = 0; i < ncomps; i++)
        if (comps[i].req == r)
            return &comps[i];
    return NULL;
}

#define IS_COMP(partitions, type, comm) ((partitions) == 1 && (type) == MPI_BYTE && (comm) == MPI_COMM_WORLD)

int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype type, int dest, int tag,
                    MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static int (*f)(const void *, int, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Info, MPI_Request *);
    if (!f)
        f = next("PMPI_Psend_init");
    int rc = f(buf, partitions, count, type, dest, tag, comm, info, req);
    if (rc == MPI_SUCCESS && IS_COMP(partitions, type, comm))
        add(1, buf, (int)count, dest, *req);
    return rc;
}

int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype type, int source, int tag,
                    MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static int (*f)(void *, int, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Info, MPI_Request *);
    if (!f)
        f = next("PMPI_Precv_init");
    int rc = f(buf, partitions, count, type, source, tag, comm, info, req);
    if (rc == MPI_SUCCESS && IS_COMP(partitions, type, comm))
        add(0, buf, (int)count, source, *req);
    return rc;
}

int PMPI_Start(MPI_Request *req)
{
    static int (*f)(MPI_Request *);
    if (!f)
        f = next("PMPI_Start");
    struct comp *c = find(*req);
    int rc = f(req);
    if (c && rc == MPI_SUCCESS)
        c->active = 1;
    return rc;
}

int PMPI_Pready(int partition, MPI_Request req)
{
    static int (*f)(int, MPI_Request);
    if (!f)
        f = next("PMPI_Pready");
    struct comp *c = find(req);
    if (c && c->send)
        record(c);
    return f(partition, req);
}

int PMPI_Wait(MPI_Request *req, MPI_Status *st)
{
    static int (*f)(MPI_Request *, MPI_Status *);
    if (!f)
        f = next("PMPI_Wait");
    struct comp *c = find(*req);
    int rc = f(req, st);
    if (c && !c->send && c->active && rc == MPI_SUCCESS)
        record(c);
    if (c)
        c->active = 0;
    return rc;
}

int PMPI_Finalize(void)
{
    static int (*f)(void);
    if (!f)
        f = next("PMPI_Finalize");
    const char *dir = getenv("HSPY_DIR");
    if (dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/hspy-%d.txt", dir, myrank());
        FILE *o = fopen(path, "w");
        for (int i = 0; o && i < nlog; i++)
            fprintf(o, "%s\n", logbuf[i]);
        if (o)
            fclose(o);
    }
    return f();
}
int MPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype type, int dest, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    return PMPI_Psend_init(buf, partitions, count, type, dest, tag, comm, info, req);
}
int MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype type, int source, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    return PMPI_Precv_init(buf, partitions, count, type, source, tag, comm, info, req);
}
int MPI_Start(MPI_Request *req)
{
    return PMPI_Start(req);
}
int MPI_Pready(int partition, MPI_Request req)
{
    return PMPI_Pready(partition, req);
}
int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    return PMPI_Wait(req, st);
}
int MPI_Finalize(void)
{
    return PMPI_Finalize();
}
#endif
