/*
 * Random task spawning with bursts: every rank starts --initial tasks; a
 * task works, then usually spawns zero, one or two children, and now and
 * then a burst of --burst-min..--burst-max children, each sent to a rank
 * drawn at random. Bursts make the load swing between a few busy ranks and
 * a flood of messages in flight, which is where a detector that compares
 * the wrong counts announces too early (the Charm++ QD bug of STYLE.md).
 * Uses MPI_Isend and MPI_Irecv+MPI_Test by default (--blocking to switch).
 *
 * Ground truth: the spawning is a pure function of (seed, task id); every
 * rank replays all the task trees to count its tasks and messages.
 */
#include "ex_common.h"

#include <stdio.h>
#include <stdlib.h>

#define TAG_TASK 1

typedef struct burst {
    ex_ctx x;
    int initial, burst_min, burst_max, max_depth;
    double burst_prob, spawn_prob;
} burst;

static int nchildren(const burst *b, uint64_t id, int64_t depth)
{
    if (depth >= b->max_depth)
        return 0;
    double u = ex_unif(b->x.o.seed, id, 1);
    if (u < b->burst_prob)
        return b->burst_min + (int)(ex_hash(b->x.o.seed, id, 2) % (uint64_t)(b->burst_max - b->burst_min + 1));
    if (u < b->burst_prob + b->spawn_prob)
        return 1 + (int)(ex_hash(b->x.o.seed, id, 2) & 1);
    return 0;
}
static uint64_t child_id(const burst *b, uint64_t id, int j) { return ex_hash(b->x.o.seed, id, 1000 + (uint64_t)j); }
static int child_rank(const burst *b, uint64_t id, int j)
{
    return (int)(ex_hash(b->x.o.seed, id, 100000 + (uint64_t)j) % (uint64_t)b->x.size);
}
static uint64_t root_id(const burst *b, int rank, int i) { return ex_hash(b->x.o.seed, 0x5eed0000u + (uint64_t)rank, (uint64_t)i); }

static int run_task(burst *b, uint64_t id, int64_t depth)
{
    ex_work(&b->x);
    b->x.tasks++;
    int n = nchildren(b, id, depth);
    for (int j = 0; j < n; j++) {
        int64_t m[2] = {(int64_t)child_id(b, id, j), depth + 1};
        if (ex_send(&b->x, m, 2, child_rank(b, id, j), TAG_TASK) != 0)
            return -1;
    }
    return 0;
}

static int truth(const burst *b, uint64_t *tasks, uint64_t *my_tasks, uint64_t *my_recv)
{
    typedef struct { uint64_t id; int64_t depth; int rank, msg; } item;
    size_t cap = 1024, n = 0;
    item *st = malloc(cap * sizeof *st);
    if (!st)
        return -1;
    *tasks = *my_tasks = *my_recv = 0;
    for (int r = 0; r < b->x.size; r++)
        for (int i = 0; i < b->initial; i++) {
            st[n++] = (item){root_id(b, r, i), 0, r, 0};
            while (n) {
                item it = st[--n];
                (*tasks)++;
                if (it.rank == b->x.rank) {
                    (*my_tasks)++;
                    *my_recv += it.msg;
                }
                int k = nchildren(b, it.id, it.depth);
                if (n + (size_t)k > cap) {
                    while (n + (size_t)k > cap)
                        cap *= 2;
                    item *g = realloc(st, cap * sizeof *g);
                    if (!g) {
                        free(st);
                        return -1;
                    }
                    st = g;
                }
                for (int j = 0; j < k; j++)
                    st[n++] = (item){child_id(b, it.id, j), it.depth + 1, child_rank(b, it.id, j), 1};
            }
        }
    free(st);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    burst b = {.initial = 6, .burst_min = 8, .burst_max = 32, .max_depth = 10,
               .burst_prob = 0.04, .spawn_prob = 0.35};
    const ex_opt opts[] = {
        {"initial", EX_INT, &b.initial, 0, 1 << 20, "tasks each rank starts with (default 6)"},
        {"burst-prob", EX_DOUBLE, &b.burst_prob, 0, 1, "probability that a task bursts (default 0.04)"},
        {"burst-min", EX_INT, &b.burst_min, 1, 1 << 16, "smallest burst (default 8)"},
        {"burst-max", EX_INT, &b.burst_max, 1, 1 << 16, "largest burst (default 32)"},
        {"spawn-prob", EX_DOUBLE, &b.spawn_prob, 0, 1, "probability of 1 or 2 children otherwise (default 0.35)"},
        {"max-depth", EX_INT, &b.max_depth, 0, 1000, "tasks at this depth spawn nothing (default 10)"},
    };
    int rc = ex_init(&b.x, "burst_spawn", "Random task spawning with bursts.", argc, argv, opts,
                     sizeof opts / sizeof opts[0], 1, 0);
    if (rc == 0 && (b.burst_max < b.burst_min || b.burst_prob + b.spawn_prob > 1)) {
        if (b.x.rank == 0)
            fprintf(stderr, "burst_spawn: need --burst-min <= --burst-max and --burst-prob + --spawn-prob <= 1\n");
        rc = -1;
    }
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    ex_ctx *x = &b.x;
    uint64_t tasks = 0, my_tasks = 0, my_recv = 0;
    int ok = truth(&b, &tasks, &my_tasks, &my_recv) == 0;

    ex_phase_begin(x, my_recv);
    for (int i = 0; ok && i < b.initial; i++)
        ok = run_task(&b, root_id(&b, x->rank, i), 0) == 0;
    MPI_Status st;
    while (ok && ex_next(x, &st) == EX_WORK) {
        int64_t m[EX_MSG_WORDS];
        int n;
        ok = ex_recv(x, &st, m, &n) == 0 && st.MPI_TAG == TAG_TASK && n == 2 &&
             run_task(&b, (uint64_t)m[0], m[1]) == 0;
        if (!ok)
            fprintf(stderr, "burst_spawn: rank %d: bad message (tag %d)\n", x->rank, st.MPI_TAG);
    }
    if (!ex_phase_check(x, my_tasks, my_recv))
        ok = 0;
    rc = ex_result(x, ok, tasks, "");
    ex_fini(x);
    MPI_Finalize();
    return rc;
}
