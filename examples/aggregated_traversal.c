/*
 * Level-synchronous BFS over a random directed graph, written the way
 * aggregating graph codes are: vertex v belongs to rank v % P; expanding a
 * frontier vertex appends its neighbours to a per-destination buffer that
 * is sent (MPI_Isend) when --agg entries fill it and flushed when the
 * rank's frontier is done. Receives are --recvs persistent
 * MPI_Recv_init(MPI_ANY_SOURCE, MPI_ANY_TAG) requests polled by
 * MPI_Testany every --poll-every vertices while expanding (polls while
 * busy) and in a loop while idle. A level ends when the done message
 * arrives in one of those receives (or, with --native-stop, after the
 * message count the rank computed from the ground truth); levels are
 * separated by an MPI_Allreduce of the next frontier's size.
 *
 * --seeds N traverses N graphs one after the other; every level of every
 * graph is one phase (one quiescent point, one notification). Ground
 * truth: every rank runs the whole BFS alone; each vertex a rank discovers
 * must have the level the truth gives it, and each level's discoveries on
 * each rank must be complete. Every rank records when it last ran out of
 * work and when it was notified: nobody may be notified before the last
 * rank ran out of work (ex_timeline_check).
 */
#include "ex_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct agt {
    ex_ctx x;
    int nv, degree, agg, nrecv, poll_every, seeds, pcontrol;
    uint64_t gseed;
    int *truth;    /* level of every vertex, -1 unreachable (ground truth) */
    int *level;    /* this rank's view of its own vertices */
    int64_t *front, *next;
    size_t nfront, nnext;
    int64_t **obuf; /* per destination */
    int *ocount;
    MPI_Request *sreq; /* outstanding Isends and their buffers */
    int64_t **sbuf;
    size_t nsend, capsend;
    int64_t *rbuf;     /* nrecv * agg */
    MPI_Request *rreq; /* persistent receives */
    int cur;           /* level being expanded */
    int bad;           /* wrong discoveries */
    double t_idle, t_notify;
    uint64_t msgs_sent;
} agt;

static int degree_of(const agt *g, int v) { return (int)(ex_hash(g->gseed, (uint64_t)v, 1) % (uint64_t)(2 * g->degree + 1)); }

static int neighbour(const agt *g, int v, int j)
{
    return (int)(ex_hash(g->gseed, (uint64_t)v, 10 + (uint64_t)j) % (uint64_t)g->nv);
}

/* Ground truth: the BFS alone. Returns the number of levels. */
static int bfs_truth(agt *g, int src)
{
    int *q = malloc((size_t)g->nv * sizeof *q), head = 0, tail = 0, depth = 0;
    if (!q)
        return -1;
    for (int v = 0; v < g->nv; v++)
        g->truth[v] = -1;
    g->truth[src] = 0;
    q[tail++] = src;
    while (head < tail) {
        int v = q[head++];
        if (g->truth[v] + 1 > depth)
            depth = g->truth[v] + 1;
        for (int j = 0, d = degree_of(g, v); j < d; j++) {
            int u = neighbour(g, v, j);
            if (g->truth[u] < 0) {
                g->truth[u] = g->truth[v] + 1;
                q[tail++] = u;
            }
        }
    }
    free(q);
    return depth;
}

static void discover(agt *g, int64_t u)
{
    if (u < 0 || u >= g->nv || u % g->x.size != g->x.rank) {
        g->bad++;
        return;
    }
    if (g->level[u] >= 0)
        return;
    g->level[u] = g->cur + 1;
    if (g->truth[u] != g->cur + 1)
        g->bad++;
    g->next[g->nnext++] = u;
}

static int flush(agt *g, int dest)
{
    if (g->ocount[dest] == 0)
        return 0;
    if (g->nsend == g->capsend) {
        size_t cap = g->capsend ? 2 * g->capsend : 64;
        MPI_Request *r = realloc(g->sreq, cap * sizeof *r);
        if (!r)
            return -1;
        g->sreq = r;
        int64_t **b = realloc(g->sbuf, cap * sizeof *b);
        if (!b)
            return -1;
        g->sbuf = b;
        g->capsend = cap;
    }
    /* the buffer goes to MPI until the send completes; a fresh one replaces it */
    int64_t *buf = g->obuf[dest];
    g->obuf[dest] = malloc((size_t)g->agg * sizeof *buf);
    if (!g->obuf[dest])
        return -1;
    g->sbuf[g->nsend] = buf;
    if (MPI_Isend(buf, g->ocount[dest], MPI_INT64_T, dest, 1 + g->cur % 2, MPI_COMM_WORLD,
                  &g->sreq[g->nsend]) != MPI_SUCCESS)
        return -1;
    g->nsend++;
    g->ocount[dest] = 0;
    g->msgs_sent++;
    g->x.sent++;
    return 0;
}

static int complete_sends(agt *g)
{
    if (g->nsend && MPI_Waitall((int)g->nsend, g->sreq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        return -1;
    for (size_t i = 0; i < g->nsend; i++)
        free(g->sbuf[i]);
    g->nsend = 0;
    return 0;
}

/* One Testany on the persistent receives: 1 if something was handled
 * (a buffer of vertices, or the done message: *done set), 0 if nothing
 * came, -1 on error. */
static int poll_once(agt *g, int *done)
{
    int idx = MPI_UNDEFINED, flag = 0;
    MPI_Status st;
    if (MPI_Testany(g->nrecv, g->rreq, &idx, &flag, &st) != MPI_SUCCESS)
        return -1;
    if (!flag || idx == MPI_UNDEFINED)
        return 0;
    if (st.MPI_TAG == g->x.o.done_tag) {
        *done = 1;
        g->t_notify = ex_now(&g->x);
    } else {
        int n = 0;
        MPI_Get_count(&st, MPI_INT64_T, &n);
        const int64_t *b = g->rbuf + (size_t)idx * (size_t)g->agg;
        for (int i = 0; i < n; i++)
            discover(g, b[i]);
        g->x.recvd++;
        g->x.phase_recv++;
    }
    return MPI_Start(&g->rreq[idx]) == MPI_SUCCESS ? 1 : -1;
}

/* Work messages this rank receives while level `cur` is expanded: what
 * every other rank's frontier sends it, --agg entries per message. */
static uint64_t expected_msgs(const agt *g)
{
    int P = g->x.size, me = g->x.rank;
    uint64_t *items = calloc((size_t)P, sizeof *items), m = 0;
    if (!items)
        return 0;
    for (int v = 0; v < g->nv; v++) {
        if (g->truth[v] != g->cur || v % P == me)
            continue;
        for (int j = 0, d = degree_of(g, v); j < d; j++)
            items[v % P] += neighbour(g, v, j) % P == me;
    }
    for (int r = 0; r < P; r++)
        m += (items[r] + (uint64_t)g->agg - 1) / (uint64_t)g->agg;
    free(items);
    return m;
}

/* Expands the frontier of level g->cur; returns 0 when the level ended
 * (done message, or --native-stop count reached). */
static int level(agt *g)
{
    ex_ctx *x = &g->x;
    int P = x->size, me = x->rank, done = 0, since = 0;
    g->nnext = 0;
    for (size_t i = 0; i < g->nfront; i++) {
        int v = (int)g->front[i];
        ex_work(x);
        x->tasks++;
        for (int j = 0, d = degree_of(g, v); j < d; j++) {
            int u = neighbour(g, v, j), o = u % P;
            if (o == me) {
                discover(g, u);
                continue;
            }
            g->obuf[o][g->ocount[o]++] = u;
            if (g->ocount[o] == g->agg && flush(g, o) != 0)
                return -1;
        }
        if (++since >= g->poll_every) {
            since = 0;
            int rc;
            while ((rc = poll_once(g, &done)) > 0 && !done)
                ;
            if (rc < 0)
                return -1;
            /* a done message while expanding would be an early notification:
             * finish the frontier regardless, and the timeline check fails */
        }
    }
    for (int r = 0; r < P; r++)
        if (flush(g, r) != 0)
            return -1;
    g->t_idle = ex_now(x);
    for (;;) {
        if (done) {
            x->notifications++;
            return 0;
        }
        if (x->o.native_stop && x->phase_recv >= x->expect_recv)
            return 0;
        if (g->pcontrol) /* nothing left to expand: idle until the level ends */
            MPI_Pcontrol(0);
        int rc = poll_once(g, &done);
        if (rc < 0)
            return -1;
        if (rc > 0 && !done)
            g->t_idle = ex_now(x);
    }
}

/* After the level: complete the sends, then keep polling --linger-ms;
 * anything arriving now is a message the detector overlooked or a second
 * notification. */
static int linger(agt *g)
{
    if (complete_sends(g) != 0)
        return -1;
    double until = MPI_Wtime() + g->x.o.linger_ms * 1e-3;
    while (MPI_Wtime() < until) {
        int done = 0, rc = poll_once(g, &done);
        if (rc < 0)
            return -1;
        if (rc > 0) {
            if (!done) /* work after the notification: it came early */
                g->t_idle = ex_now(&g->x);
            g->x.stray++;
            g->x.notifications += done;
            fprintf(stderr, "aggregated_traversal: rank %d: %s after level %d ended\n", g->x.rank,
                    done ? "a second done message" : "a work message", g->cur);
        }
    }
    return 0;
}

static int traverse(agt *g, int b, uint64_t *reachable)
{
    ex_ctx *x = &g->x;
    int P = x->size, me = x->rank, ok = 1;
    g->gseed = ex_hash(x->o.seed, (uint64_t)b, 0xbf5);
    int src = (int)(ex_hash(g->gseed, 0, 0) % (uint64_t)g->nv);
    if (bfs_truth(g, src) < 0)
        return 0;
    *reachable = 0;
    for (int v = 0; v < g->nv; v++) {
        *reachable += g->truth[v] >= 0;
        g->level[v] = -1;
    }
    g->nfront = 0;
    if (src % P == me) {
        g->level[src] = 0;
        g->front[g->nfront++] = src;
    }
    for (g->cur = 0;; g->cur++) {
        ex_phase_begin(x, x->o.native_stop ? expected_msgs(g) : 0);
        g->t_notify = -1;
        int bad0 = g->bad;
        if (level(g) != 0 || linger(g) != 0) {
            fprintf(stderr, "aggregated_traversal: rank %d: MPI error at level %d\n", me, g->cur);
            return 0;
        }
        ok &= ex_timeline_check(x, g->t_idle, g->t_notify);
        /* this level's discoveries on this rank must be exactly the truth's */
        uint64_t want = 0;
        for (int v = me; v < g->nv; v += P)
            want += g->truth[v] == g->cur + 1;
        if (g->bad != bad0 || want != g->nnext) {
            fprintf(stderr, "aggregated_traversal: rank %d graph %d level %d: discovered %zu (truth %llu), %d wrong\n",
                    me, b, g->cur, g->nnext, (unsigned long long)want, g->bad - bad0);
            ok = 0;
        }
        if (!x->o.native_stop && x->o.expect_notify == -2 && x->notifications != x->phases) {
            fprintf(stderr, "aggregated_traversal: rank %d: %d done message(s) by the end of phase %d\n", me,
                    x->notifications, x->phases);
            ok = 0;
        }
        uint64_t n = g->nnext, total = 0;
        MPI_Allreduce(&n, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        int64_t *t = g->front;
        g->front = g->next;
        g->next = t;
        g->nfront = g->nnext;
        if (total == 0)
            break;
    }
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    agt g = {.nv = 1024, .degree = 4, .agg = 16, .nrecv = 4, .poll_every = 4, .seeds = 1};
    const ex_opt opts[] = {
        {"seeds", EX_INT, &g.seeds, 1, 100000, "graphs traversed one after the other (default 1)"},
        {"vertices", EX_INT, &g.nv, 1, 1 << 24, "vertices per graph (default 1024)"},
        {"degree", EX_INT, &g.degree, 0, 1000, "mean out-degree; each vertex has 0..2N (default 4)"},
        {"agg", EX_INT, &g.agg, 1, 1 << 16, "vertices per message (default 16)"},
        {"recvs", EX_INT, &g.nrecv, 1, 1024, "persistent MPI_ANY_TAG receives (default 4)"},
        {"poll-every", EX_INT, &g.poll_every, 1, 1 << 20, "frontier vertices expanded between two polls (default 4)"},
        {"pcontrol", EX_FLAG, &g.pcontrol, 0, 0,
         "call MPI_Pcontrol(0) in the loop that waits once the frontier is done: the program says when it is idle "
         "(TDSHIM_IDLE=pcontrol; a no-op without a tool)"},
    };
    int rc = ex_init(&g.x, "aggregated_traversal",
                     "BFS aggregating vertices per destination; persistent MPI_ANY_TAG receives polled by MPI_Testany.",
                     argc, argv, opts, sizeof opts / sizeof opts[0], 1, 10);
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    ex_ctx *x = &g.x;
    int P = x->size;
    size_t nv = (size_t)g.nv;
    g.truth = malloc(nv * sizeof *g.truth);
    g.level = malloc(nv * sizeof *g.level);
    g.front = malloc(nv * sizeof *g.front);
    g.next = malloc(nv * sizeof *g.next);
    g.obuf = calloc((size_t)P, sizeof *g.obuf);
    g.ocount = calloc((size_t)P, sizeof *g.ocount);
    g.rbuf = malloc((size_t)g.nrecv * (size_t)g.agg * sizeof *g.rbuf);
    g.rreq = malloc((size_t)g.nrecv * sizeof *g.rreq);
    if (!g.truth || !g.level || !g.front || !g.next || !g.obuf || !g.ocount || !g.rbuf || !g.rreq)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int r = 0; r < P; r++)
        if (!(g.obuf[r] = malloc((size_t)g.agg * sizeof *g.obuf[r])))
            MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < g.nrecv; i++)
        MPI_Recv_init(g.rbuf + (size_t)i * (size_t)g.agg, g.agg, MPI_INT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG,
                      MPI_COMM_WORLD, &g.rreq[i]);
    ex_clock_sync(x);
    MPI_Startall(g.nrecv, g.rreq);
    MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted before the first send */

    int ok = 1;
    uint64_t expected = 0;
    for (int b = 0; b < g.seeds; b++) {
        uint64_t reach = 0;
        ok &= traverse(&g, b, &reach);
        expected += reach;
    }
    for (int i = 0; i < g.nrecv; i++) {
        MPI_Cancel(&g.rreq[i]);
        MPI_Wait(&g.rreq[i], MPI_STATUS_IGNORE);
        MPI_Request_free(&g.rreq[i]);
    }
    char extra[160];
    snprintf(extra, sizeof extra, "levels=%d bad=%d early=%d latency_max=%.6f", x->phases, g.bad, x->early,
             x->lat_max);
    rc = ex_result(x, ok, expected, extra);
    for (int r = 0; r < P; r++)
        free(g.obuf[r]);
    free(g.obuf);
    free(g.ocount);
    free(g.truth);
    free(g.level);
    free(g.front);
    free(g.next);
    free(g.rbuf);
    free(g.rreq);
    free(g.sreq);
    free(g.sbuf);
    ex_fini(x);
    MPI_Finalize();
    return rc;
}
