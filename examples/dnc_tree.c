/*
 * Divide and conquer across ranks (Problem A of skr-counting-quiescence.txt
 * §3; the non-deterministic binary trees of cda-credit-hpc.txt §V-B): a
 * node either splits into two subproblems, each sent to a rank drawn at
 * random, or is a leaf whose value is computed locally. A split node waits
 * for both results (replies are ordinary messages), adds them, and replies
 * to its own parent. Below --min-depth every node splits, at --max-depth
 * none does, in between a node splits with probability --lambda.
 *
 * Ground truth: the tree is a pure function of the seed; every rank walks
 * it to count the nodes and messages it will see, and rank 0 compares the
 * value at the root with the sum of the leaves.
 */
#include "ex_common.h"

#include <stdio.h>
#include <stdlib.h>

#define TAG_NODE 1
#define TAG_RESULT 2

typedef struct slot {
    int64_t parent_rank, parent_slot; /* parent_rank -1: the root */
    int64_t pending, sum, count;
} slot;

typedef struct dnc {
    ex_ctx x;
    int min_depth, max_depth;
    double lambda;
    slot *slots;
    int64_t nslots, capslots, free_head;
    int64_t root_sum, root_count; /* rank 0, when the root completes */
    int root_done;
} dnc;

static int splits(const dnc *d, uint64_t id, int64_t depth)
{
    if (depth < d->min_depth)
        return 1;
    if (depth >= d->max_depth)
        return 0;
    return ex_unif(d->x.o.seed, id, 3) < d->lambda;
}
static uint64_t child_id(const dnc *d, uint64_t id, int j) { return ex_hash(d->x.o.seed, id, 10 + (uint64_t)j); }
static int child_rank(const dnc *d, uint64_t id, int j)
{
    return (int)(ex_hash(d->x.o.seed, id, 20 + (uint64_t)j) % (uint64_t)d->x.size);
}
static int64_t leaf_value(const dnc *d, uint64_t id) { return (int64_t)(ex_hash(d->x.o.seed, id, 7) % 1000); }

static int64_t new_slot(dnc *d)
{
    if (d->free_head >= 0) {
        int64_t s = d->free_head;
        d->free_head = d->slots[s].pending; /* free list threads through pending */
        return s;
    }
    if (d->nslots == d->capslots) {
        int64_t cap = d->capslots ? 2 * d->capslots : 256;
        slot *n = realloc(d->slots, (size_t)cap * sizeof *n);
        if (!n)
            return -1;
        d->slots = n;
        d->capslots = cap;
    }
    return d->nslots++;
}

static int reply(dnc *d, int64_t prank, int64_t pslot, int64_t sum, int64_t count)
{
    if (prank < 0) {
        d->root_sum = sum;
        d->root_count = count;
        d->root_done++;
        return 0;
    }
    int64_t m[3] = {pslot, sum, count};
    return ex_send(&d->x, m, 3, (int)prank, TAG_RESULT);
}

static int run_node(dnc *d, uint64_t id, int64_t depth, int64_t prank, int64_t pslot)
{
    ex_work(&d->x);
    d->x.tasks++;
    if (!splits(d, id, depth))
        return reply(d, prank, pslot, leaf_value(d, id), 1);
    int64_t s = new_slot(d);
    if (s < 0)
        return -1;
    d->slots[s] = (slot){prank, pslot, 2, 0, 1};
    for (int j = 0; j < 2; j++) {
        int64_t m[4] = {(int64_t)child_id(d, id, j), depth + 1, d->x.rank, s};
        if (ex_send(&d->x, m, 4, child_rank(d, id, j), TAG_NODE) != 0)
            return -1;
    }
    return 0;
}

static int on_result(dnc *d, const int64_t *m)
{
    int64_t s = m[0];
    if (s < 0 || s >= d->nslots || d->slots[s].pending <= 0)
        return -1;
    slot *sl = &d->slots[s];
    sl->sum += m[1];
    sl->count += m[2];
    if (--sl->pending > 0)
        return 0;
    slot done = *sl;
    sl->pending = d->free_head;
    d->free_head = s;
    return reply(d, done.parent_rank, done.parent_slot, done.sum, done.count);
}

/* Walks the whole tree: nodes and messages per rank, leaf sum. */
static int truth(const dnc *d, uint64_t *nodes, int64_t *sum, uint64_t *my_nodes, uint64_t *my_recv)
{
    typedef struct { uint64_t id; int64_t depth; int rank, prank; } item;
    size_t cap = 1024, n = 0;
    item *st = malloc(cap * sizeof *st);
    if (!st)
        return -1;
    st[n++] = (item){ex_hash(d->x.o.seed, 0, 0), 0, 0, -1};
    *nodes = *my_nodes = *my_recv = 0;
    *sum = 0;
    while (n) {
        item it = st[--n];
        (*nodes)++;
        if (it.rank == d->x.rank) {
            (*my_nodes)++;
            *my_recv += it.prank >= 0; /* the node message */
        }
        *my_recv += it.prank == d->x.rank; /* the result it sends back */
        if (!splits(d, it.id, it.depth)) {
            *sum += leaf_value(d, it.id);
            continue;
        }
        if (n + 2 > cap) {
            cap *= 2;
            item *g = realloc(st, cap * sizeof *g);
            if (!g) {
                free(st);
                return -1;
            }
            st = g;
        }
        for (int j = 0; j < 2; j++)
            st[n++] = (item){child_id(d, it.id, j), it.depth + 1, child_rank(d, it.id, j), it.rank};
    }
    free(st);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dnc d = {.min_depth = 3, .max_depth = 14, .lambda = 0.7, .free_head = -1};
    const ex_opt opts[] = {
        {"min-depth", EX_INT, &d.min_depth, 0, 40, "every node above this depth splits (default 3)"},
        {"max-depth", EX_INT, &d.max_depth, 0, 40, "no node at this depth splits (default 14)"},
        {"lambda", EX_DOUBLE, &d.lambda, 0, 1, "split probability in between (default 0.7)"},
    };
    int rc = ex_init(&d.x, "dnc_tree", "Divide and conquer task tree spawned across ranks.", argc, argv,
                     opts, sizeof opts / sizeof opts[0], 0, 0);
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    ex_ctx *x = &d.x;
    uint64_t nodes = 0, my_nodes = 0, my_recv = 0;
    int64_t sum = 0;
    int ok = truth(&d, &nodes, &sum, &my_nodes, &my_recv) == 0;

    ex_phase_begin(x, my_recv);
    if (ok && x->rank == 0)
        ok = run_node(&d, ex_hash(x->o.seed, 0, 0), 0, -1, -1) == 0;
    MPI_Status st;
    while (ok && ex_next(x, &st) == EX_WORK) {
        int64_t m[EX_MSG_WORDS];
        int n;
        if (ex_recv(x, &st, m, &n) != 0)
            ok = 0;
        else if (st.MPI_TAG == TAG_NODE && n == 4)
            ok = run_node(&d, (uint64_t)m[0], m[1], m[2], m[3]) == 0;
        else if (st.MPI_TAG == TAG_RESULT && n == 3)
            ok = on_result(&d, m) == 0;
        else
            ok = 0;
        if (!ok)
            fprintf(stderr, "dnc_tree: rank %d: bad message (tag %d)\n", x->rank, st.MPI_TAG);
    }
    if (!ex_phase_check(x, my_nodes, my_recv))
        ok = 0;
    if (x->rank == 0 && (d.root_done != 1 || d.root_sum != sum || (uint64_t)d.root_count != nodes)) {
        fprintf(stderr, "dnc_tree: root result %lld over %lld nodes (done %d), the seed says %lld over %llu\n",
                (long long)d.root_sum, (long long)d.root_count, d.root_done, (long long)sum,
                (unsigned long long)nodes);
        ok = 0;
    }
    char extra[64];
    snprintf(extra, sizeof extra, "sum=%lld", (long long)d.root_sum);
    rc = ex_result(x, ok, nodes, extra);
    free(d.slots);
    ex_fini(x);
    MPI_Finalize();
    return rc;
}
