/*
 * unwrapped: a rank holds a send while the others are in a blocking call
 * tdshim does not wrap (issue 26; tests/mpi/unwrapped.sh).
 *
 * Each case pairs a blocking call that needs every rank (communicator and
 * topology constructors, every collective, nonblocking collectives' waits,
 * one-sided windows and fences, file open/close...: CALLS below) with a
 * kind of send (SENDS below). All ranks meet in a barrier; then the holder
 * (the last rank) waits DELAY ms (so that rank 0 is inside the call
 * already), polls once and finds nothing (it is passive: under cda/hcda it
 * has flushed its credit), and sends two messages of that kind (to itself
 * on a duplicate of MPI_COMM_SELF, or to its right neighbour), completing
 * them (MPI_Wait for the nonblocking and persistent ones) before it enters
 * the call itself. Their receives were posted before the barrier, so
 * natively every send completes while the others are in the call and the
 * program ends (in any MPI: nothing relies on eager buffering); a send that waited for credit only rank 0
 * can grant, while rank 0 is in a call tdshim never sees, would hang.
 *
 *   unwrapped DIR DELAY_MS ROT all          every call, send kind (call + ROT) % NSENDS
 *   unwrapped DIR DELAY_MS ROT CALL:SEND... the named cases
 *   unwrapped list                          the names
 * DIR: a directory for the file cases. Rank 0 prints one line per case
 * done (stdout is the same under tdshim as natively).
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, holder;
static MPI_Comm selfdup;
static const char *dir;

/* ---------------------------------------------------------------- objects of a case */

static MPI_Comm c1, c2, topo;
static MPI_Group grp;
static MPI_Win win;
static MPI_File fh;
static MPI_Request creq;
static int ibuf[64], obuf[64], cnts[16], displs[16], bdispls[16]; /* bdispls: in bytes */
static MPI_Aint adispls[16];
static MPI_Datatype types[16];
static void *wmem;
static char fname[512];

static void fill(void)
{
    for (int i = 0; i < 64; i++)
        ibuf[i] = rank * 100 + i, obuf[i] = -1;
    for (int i = 0; i < 16; i++)
        cnts[i] = 1, displs[i] = i, types[i] = MPI_INT, bdispls[i] = i * (int)sizeof(int),
        adispls[i] = bdispls[i];
}
static void free_c1(void) { MPI_Comm_free(&c1); }
static void free_c12(void) { MPI_Comm_free(&c1); MPI_Comm_free(&c2); }
static void free_topo(void) { MPI_Comm_free(&topo); }
static void ring(void)
{
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &topo);
}
/* two groups, rank 0 and the holder in different ones (halves of WORLD) */
static void halves(void) { MPI_Comm_split(MPI_COMM_WORLD, rank >= size / 2, rank, &c1); }
static void intercomm(void)
{
    int hi = rank >= size / 2;
    MPI_Intercomm_create(c1, 0, MPI_COMM_WORLD, hi ? 0 : size / 2, 77, &c2);
}
static void halves_inter(void) { halves(); intercomm(); }
static void world_group(void) { MPI_Comm_group(MPI_COMM_WORLD, &grp); }
static void free_group_c1(void) { MPI_Group_free(&grp); MPI_Comm_free(&c1); }
static void wfree(void) { MPI_Win_free(&win); }
static void wcreate(void) { MPI_Win_create(ibuf, sizeof ibuf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win); }
static void fopen_(void)
{
    MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                  &fh);
}
static void fclose_(void) { MPI_File_close(&fh); }
static void cwait(void) { MPI_Wait(&creq, MPI_STATUS_IGNORE); }

/* ---------------------------------------------------------------- the calls */

#define RUN(name) static void run_##name(void)
RUN(comm_dup) { MPI_Comm_dup(MPI_COMM_WORLD, &c1); }
RUN(comm_dup_with_info) { MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &c1); }
RUN(comm_idup) { MPI_Comm_idup(MPI_COMM_WORLD, &c1, &creq); MPI_Wait(&creq, MPI_STATUS_IGNORE); }
RUN(comm_split) { MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c1); }
RUN(comm_split_type) { MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &c1); }
RUN(comm_create) { MPI_Comm_create(MPI_COMM_WORLD, grp, &c1); }
RUN(comm_create_group) { MPI_Comm_create_group(MPI_COMM_WORLD, grp, 5, &c1); }
RUN(comm_free) { MPI_Comm_free(&c1); }
RUN(cart_create) { ring(); }
RUN(cart_sub) { int keep[1] = {1}; MPI_Cart_sub(topo, keep, &c1); }
RUN(graph_create)
{
    int index[16], edges[32];
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + 1) % size;
        edges[2 * i + 1] = (i + size - 1) % size;
    }
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &topo);
}
RUN(dist_graph_create)
{
    int src[1] = {rank}, deg[1] = {1}, dst[1] = {(rank + 1) % size};
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, dst, deg, MPI_INFO_NULL, 0, &topo); /* weights 1 */
}
RUN(dist_graph_create_adjacent)
{
    int in[1] = {(rank + size - 1) % size}, out[1] = {(rank + 1) % size};
    int w[1] = {1};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, in, w, 1, out, w, MPI_INFO_NULL, 0,
                                   &topo);
}
RUN(intercomm_create) { intercomm(); }
RUN(intercomm_merge) { MPI_Comm merged; MPI_Intercomm_merge(c2, rank >= size / 2, &merged); MPI_Comm_free(&merged); }
RUN(barrier) { MPI_Barrier(MPI_COMM_WORLD); }
RUN(bcast) { MPI_Bcast(ibuf, 4, MPI_INT, 0, MPI_COMM_WORLD); }
RUN(reduce) { MPI_Reduce(ibuf, obuf, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD); }
RUN(allreduce) { MPI_Allreduce(ibuf, obuf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD); }
RUN(gather) { MPI_Gather(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, 0, MPI_COMM_WORLD); }
RUN(gatherv) { MPI_Gatherv(ibuf, 1, MPI_INT, obuf, cnts, displs, MPI_INT, 0, MPI_COMM_WORLD); }
RUN(scatter) { MPI_Scatter(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, 0, MPI_COMM_WORLD); }
RUN(scatterv) { MPI_Scatterv(ibuf, cnts, displs, MPI_INT, obuf, 1, MPI_INT, 0, MPI_COMM_WORLD); }
RUN(allgather) { MPI_Allgather(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, MPI_COMM_WORLD); }
RUN(allgatherv) { MPI_Allgatherv(ibuf, 1, MPI_INT, obuf, cnts, displs, MPI_INT, MPI_COMM_WORLD); }
RUN(alltoall) { MPI_Alltoall(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, MPI_COMM_WORLD); }
RUN(alltoallv) { MPI_Alltoallv(ibuf, cnts, displs, MPI_INT, obuf, cnts, displs, MPI_INT, MPI_COMM_WORLD); }
RUN(alltoallw) { MPI_Alltoallw(ibuf, cnts, bdispls, types, obuf, cnts, bdispls, types, MPI_COMM_WORLD); }
RUN(reduce_scatter) { MPI_Reduce_scatter(ibuf, obuf, cnts, MPI_INT, MPI_SUM, MPI_COMM_WORLD); }
RUN(reduce_scatter_block) { MPI_Reduce_scatter_block(ibuf, obuf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); }
RUN(scan) { MPI_Scan(ibuf, obuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD); }
RUN(exscan) { MPI_Exscan(ibuf, obuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD); }
RUN(neighbor_allgather) { MPI_Neighbor_allgather(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, topo); }
RUN(neighbor_allgatherv) { MPI_Neighbor_allgatherv(ibuf, 1, MPI_INT, obuf, cnts, displs, MPI_INT, topo); }
RUN(neighbor_alltoall) { MPI_Neighbor_alltoall(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, topo); }
RUN(neighbor_alltoallv) { MPI_Neighbor_alltoallv(ibuf, cnts, displs, MPI_INT, obuf, cnts, displs, MPI_INT, topo); }
RUN(neighbor_alltoallw) { MPI_Neighbor_alltoallw(ibuf, cnts, adispls, types, obuf, cnts, adispls, types, topo); }
RUN(ibarrier) { MPI_Ibarrier(MPI_COMM_WORLD, &creq); cwait(); }
RUN(ibcast) { MPI_Ibcast(ibuf, 4, MPI_INT, 0, MPI_COMM_WORLD, &creq); cwait(); }
RUN(iallreduce) { MPI_Iallreduce(ibuf, obuf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &creq); cwait(); }
RUN(igatherv) { MPI_Igatherv(ibuf, 1, MPI_INT, obuf, cnts, displs, MPI_INT, 0, MPI_COMM_WORLD, &creq); cwait(); }
RUN(ialltoallw) { MPI_Ialltoallw(ibuf, cnts, bdispls, types, obuf, cnts, bdispls, types, MPI_COMM_WORLD, &creq); cwait(); }
RUN(iexscan) { MPI_Iexscan(ibuf, obuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &creq); cwait(); }
RUN(ineighbor_alltoall) { MPI_Ineighbor_alltoall(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, topo, &creq); cwait(); }
RUN(win_create) { wcreate(); }
RUN(win_allocate) { MPI_Win_allocate(256, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wmem, &win); }
RUN(win_allocate_shared) { MPI_Win_allocate_shared(256, 1, MPI_INFO_NULL, c1, &wmem, &win); }
RUN(win_create_dynamic) { MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win); }
RUN(win_fence)
{
    MPI_Win_fence(0, win);
    MPI_Put(ibuf, 1, MPI_INT, (rank + 1) % size, 5, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
}
RUN(win_free) { MPI_Win_free(&win); }
RUN(file_open) { fopen_(); }
RUN(file_write_at_all) { MPI_File_write_at_all(fh, rank * 16, ibuf, 4, MPI_INT, MPI_STATUS_IGNORE); }
RUN(file_set_size) { MPI_File_set_size(fh, 4096); }
RUN(file_close) { fclose_(); }

typedef struct {
    const char *name;
    void (*setup)(void), (*run)(void), (*cleanup)(void);
} call;
#define C(name, setup, cleanup) {#name, setup, run_##name, cleanup}
static void split_shared(void) { MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c1); }
static void wfree_c1(void) { MPI_Win_free(&win); MPI_Comm_free(&c1); }
static void dup_c1(void) { MPI_Comm_dup(MPI_COMM_WORLD, &c1); }
static void ring_c1(void) { ring(); }
static void free_topo_c1(void) { MPI_Comm_free(&c1); MPI_Comm_free(&topo); }
static const call CALLS[] = {
    C(comm_dup, NULL, free_c1), C(comm_dup_with_info, NULL, free_c1), C(comm_idup, NULL, free_c1),
    C(comm_split, NULL, free_c1), C(comm_split_type, NULL, free_c1), C(comm_create, world_group, free_group_c1),
    C(comm_create_group, world_group, free_group_c1), C(comm_free, dup_c1, NULL), C(cart_create, NULL, free_topo),
    C(cart_sub, ring_c1, free_topo_c1), C(graph_create, NULL, free_topo), C(dist_graph_create, NULL, free_topo),
    C(dist_graph_create_adjacent, NULL, free_topo), C(intercomm_create, halves, free_c12),
    C(intercomm_merge, halves_inter, free_c12), C(barrier, NULL, NULL), C(bcast, NULL, NULL), C(reduce, NULL, NULL),
    C(allreduce, NULL, NULL), C(gather, NULL, NULL), C(gatherv, NULL, NULL), C(scatter, NULL, NULL),
    C(scatterv, NULL, NULL), C(allgather, NULL, NULL), C(allgatherv, NULL, NULL), C(alltoall, NULL, NULL),
    C(alltoallv, NULL, NULL), C(alltoallw, NULL, NULL), C(reduce_scatter, NULL, NULL),
    C(reduce_scatter_block, NULL, NULL), C(scan, NULL, NULL), C(exscan, NULL, NULL),
    C(neighbor_allgather, ring, free_topo), C(neighbor_allgatherv, ring, free_topo),
    C(neighbor_alltoall, ring, free_topo), C(neighbor_alltoallv, ring, free_topo),
    C(neighbor_alltoallw, ring, free_topo), C(ibarrier, NULL, NULL), C(ibcast, NULL, NULL), C(iallreduce, NULL, NULL),
    C(igatherv, NULL, NULL), C(ialltoallw, NULL, NULL), C(iexscan, NULL, NULL), C(ineighbor_alltoall, ring, free_topo),
    C(win_create, NULL, wfree), C(win_allocate, NULL, wfree), C(win_allocate_shared, split_shared, wfree_c1),
    C(win_create_dynamic, NULL, wfree), C(win_fence, wcreate, wfree), C(win_free, wcreate, NULL),
    C(file_open, NULL, fclose_), C(file_write_at_all, fopen_, fclose_), C(file_set_size, fopen_, fclose_),
    C(file_close, fopen_, NULL),
};
#define NCALLS ((int)(sizeof CALLS / sizeof CALLS[0]))

/* ---------------------------------------------------------------- the held sends */

enum { S_PSELF, S_ISELF, S_SELF, S_POTHER, S_IOTHER, S_OTHER, NSENDS };
static const char *const SENDS[NSENDS] = {"persistent-self", "isend-self", "send-self",
                                          "persistent-other", "isend-other", "send-other"};

/* the holder: passive (an empty poll), then two sends of kind k, completed */
static void hold_sends(int k, int tag)
{
    int self = k < S_POTHER, flag;
    MPI_Comm comm = self ? selfdup : MPI_COMM_WORLD;
    int dest = self ? 0 : (rank + 1) % size;
    int msg[2] = {tag, 1};
    MPI_Request r[2];
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    for (int i = 0; i < 2; i++) {
        msg[1] = i;
        switch (k) {
        case S_PSELF:
        case S_POTHER:
            MPI_Send_init(msg, 2, MPI_INT, dest, tag, comm, &r[i]);
            MPI_Start(&r[i]);
            MPI_Wait(&r[i], MPI_STATUS_IGNORE);
            MPI_Request_free(&r[i]);
            break;
        case S_ISELF:
        case S_IOTHER:
            MPI_Isend(msg, 2, MPI_INT, dest, tag, comm, &r[i]);
            MPI_Wait(&r[i], MPI_STATUS_IGNORE);
            break;
        default:
            MPI_Send(msg, 2, MPI_INT, dest, tag, comm);
        }
    }
}

/* the receivers of those messages post their receives before the barrier
 * (so every send completes natively in any MPI, eager or not: a matched
 * send to a rank inside MPI_Comm_dup completes, and MPI_Send to oneself
 * with no receive posted is unsafe, MPI-4.0 §3.5) and complete them after
 * the call; returns the number of requests posted into r */
static int post_held(int k, int tag, int msg[2][2], MPI_Request r[2])
{
    int self = k < S_POTHER;
    if (self ? rank != holder : rank != (holder + 1) % size)
        return 0;
    for (int i = 0; i < 2; i++)
        MPI_Irecv(msg[i], 2, MPI_INT, self ? 0 : holder, tag, self ? selfdup : MPI_COMM_WORLD, &r[i]);
    return 2;
}
static int check_held(int n, int tag, int msg[2][2], MPI_Request r[2])
{
    int bad = 0;
    MPI_Status st[2];
    MPI_Waitall(n, r, st);
    for (int i = 0; i < n; i++)
        bad |= msg[i][0] != tag || msg[i][1] != i;
    return bad;
}

static int find_call(const char *name, size_t len)
{
    for (int i = 0; i < NCALLS; i++)
        if (strlen(CALLS[i].name) == len && !strncmp(CALLS[i].name, name, len))
            return i;
    return -1;
}
static int find_send(const char *name)
{
    for (int i = 0; i < NSENDS; i++)
        if (!strcmp(SENDS[i], name))
            return i;
    return -1;
}

static void one_case(int n, int c, int k, int delay_ms)
{
    const call *x = &CALLS[c];
    fill();
    snprintf(fname, sizeof fname, "%s/unwrapped-%d.dat", dir, n);
    if (x->setup)
        x->setup();
    int msg[2][2];
    MPI_Request r[2];
    int nr = post_held(k, 100 + n, msg, r);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == holder) {
        usleep((useconds_t)delay_ms * 1000);
        hold_sends(k, 100 + n);
    }
    x->run();
    int bad = check_held(nr, 100 + n, msg, r), all = 0;
    if (x->cleanup)
        x->cleanup();
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("case %d %s %s %s\n", n, x->name, SENDS[k], all ? "WRONG" : "ok");
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "list")) {
        for (int i = 0; i < NCALLS; i++)
            printf("%s%c", CALLS[i].name, i + 1 < NCALLS ? ' ' : '\n');
        for (int i = 0; i < NSENDS; i++)
            printf("%s%c", SENDS[i], i + 1 < NSENDS ? ' ' : '\n');
        return 0;
    }
    if (argc < 5) {
        fprintf(stderr, "usage: unwrapped DIR DELAY_MS ROT all|CALL:SEND...\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 16) {
        fprintf(stderr, "unwrapped: at most 16 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    holder = size - 1;
    MPI_Comm_dup(MPI_COMM_SELF, &selfdup);
    dir = argv[1];
    int delay = atoi(argv[2]), rot = atoi(argv[3]), n = 0;
    if (!strcmp(argv[4], "all")) {
        for (int c = 0; c < NCALLS; c++, n++)
            one_case(n, c, (c + rot) % NSENDS, delay);
    } else {
        for (int i = 4; i < argc; i++, n++) {
            const char *colon = strchr(argv[i], ':');
            int c = colon ? find_call(argv[i], (size_t)(colon - argv[i])) : -1;
            int k = colon ? find_send(colon + 1) : -1;
            if (c < 0 || k < 0) {
                if (rank == 0)
                    fprintf(stderr, "unwrapped: unknown case %s\n", argv[i]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            one_case(n, c, k, delay);
        }
    }
    MPI_Comm_free(&selfdup);
    MPI_Finalize();
    return 0;
}
