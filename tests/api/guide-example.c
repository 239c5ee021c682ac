/*
 * The termdetect guide's Algorithm 1 (papers/sandia-termdetect-guide.txt §3),
 * written exactly in its shape, on a divide-and-conquer task tree spawned
 * across the ranks: a task (id, depth) spawns a deterministic number of
 * children (0..3, from a hash of its id) on hash-chosen ranks, down to
 * MAXDEPTH. Nothing but termdetect tells a rank when to stop.
 *
 * Ground truth, computed independently: rank 0 walks the same tree
 * sequentially; after termination the ranks reduce the tasks they executed
 * and the messages they sent and received; also no work message may remain
 * unreceived. Prints "guide-example: ok ..." on rank 0 and exits 0 iff all
 * of it holds.
 *
 * usage: guide-example [roots-per-rank [maxdepth]]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "termdetect.h"

#define WORK_TAG 11
#define TERM_TAG 7193

typedef struct { uint64_t id; int64_t depth; } task;
typedef struct { task *v; size_t n, cap; } queue;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
static int nkids(uint64_t id, int64_t depth, int maxdepth) { return depth >= maxdepth ? 0 : (int)(mix(id) % 4); }
static uint64_t kid(uint64_t id, int i) { return mix(id * 4 + (uint64_t)i + 1); }

static uint64_t count_tree(uint64_t id, int64_t depth, int maxdepth)
{
    uint64_t n = 1;
    for (int i = 0; i < nkids(id, depth, maxdepth); i++)
        n += count_tree(kid(id, i), depth + 1, maxdepth);
    return n;
}

static int push(queue *q, task t)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        task *v = realloc(q->v, cap * sizeof *v);
        if (!v)
            return -1;
        q->v = v;
        q->cap = cap;
    }
    q->v[q->n++] = t;
    return 0;
}

/* "There is local work": a queued task or a work message waiting. */
static int local_work(const queue *q)
{
    int flag = 0;
    if (q->n)
        return 1;
    MPI_Iprobe(MPI_ANY_SOURCE, WORK_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    return flag;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int roots = argc > 1 ? atoi(argv[1]) : 4;
    int maxdepth = argc > 2 ? atoi(argv[2]) : 7;
    queue q = {0};
    for (int i = 0; i < roots; i++)
        push(&q, (task){mix((uint64_t)(rank * 1000 + i)), 0});

    uint64_t executed = 0, sent = 0, recvd = 0;
    struct termdetect_type zz;
    termdetect_init(&zz, 1, TERM_TAG, MPI_COMM_WORLD);
    do {
        while (local_work(&q)) {
            /* do n_w units of work: run the queued tasks, collect their children */
            int nw = 0, ns = 0, nr = 0;
            task out[64];
            int nout = 0;
            while (q.n && nout + 3 <= 64) {
                task t = q.v[--q.n];
                nw++;
                for (int i = 0; i < nkids(t.id, t.depth, maxdepth); i++)
                    out[nout++] = (task){kid(t.id, i), t.depth + 1};
            }
            termdetect_update_workcount(&zz, nw);
            /* send n_s messages to other procs */
            for (int i = 0; i < nout; i++) {
                int dest = (int)(mix(out[i].id ^ 0x5555) % (uint64_t)size);
                int64_t buf[2] = {(int64_t)out[i].id, out[i].depth};
                MPI_Send(buf, 2, MPI_INT64_T, dest, WORK_TAG, MPI_COMM_WORLD);
                ns++;
            }
            termdetect_update_sendcount(&zz, ns);
            /* recv n_r messages from other procs */
            int flag = 1;
            while (flag) {
                MPI_Status st;
                MPI_Iprobe(MPI_ANY_SOURCE, WORK_TAG, MPI_COMM_WORLD, &flag, &st);
                if (flag) {
                    int64_t buf[2];
                    MPI_Recv(buf, 2, MPI_INT64_T, st.MPI_SOURCE, WORK_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    push(&q, (task){(uint64_t)buf[0], buf[1]});
                    nr++;
                }
            }
            termdetect_update_recvcount(&zz, nr);
            executed += (uint64_t)nw;
            sent += (uint64_t)ns;
            recvd += (uint64_t)nr;
        }
        termdetect_process(&zz);
    } while (!termdetect_isterminated(&zz) && termdetect_getstate(&zz) != ERROR);

    int failed = termdetect_getstate(&zz) == ERROR;
    if (failed)
        termdetect_printstatus(&zz);
    /* terminated: nothing may be left to receive */
    int left = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, WORK_TAG, MPI_COMM_WORLD, &left, MPI_STATUS_IGNORE);
    uint64_t mine[4] = {executed, sent, recvd, (uint64_t)(left || q.n)}, sum[4];
    MPI_Reduce(mine, sum, 4, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    int anyfail = 0;
    MPI_Allreduce(&failed, &anyfail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int rc = anyfail;
    if (rank == 0) {
        uint64_t expect = 0;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < roots; i++)
                expect += count_tree(mix((uint64_t)(r * 1000 + i)), 0, maxdepth);
        int ok = !anyfail && sum[0] == expect && sum[1] == sum[2] && sum[3] == 0;
        printf("guide-example: %s ranks=%d tasks=%llu expected=%llu sent=%llu received=%llu leftover=%llu\n",
               ok ? "ok" : "FAILED", size, (unsigned long long)sum[0], (unsigned long long)expect,
               (unsigned long long)sum[1], (unsigned long long)sum[2], (unsigned long long)sum[3]);
        rc = !ok;
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(q.v);
    MPI_Finalize();
    return rc;
}
