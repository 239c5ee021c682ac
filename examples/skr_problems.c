/*
 * The four synthetic benchmarks of skr-counting-quiescence.txt §3 (Tables 1
 * and 2), with the sizes and shapes of tdsim's skrA..skrD workloads
 * (tests/sim/workload.c), so that the MPI figures of bench/run sit beside
 * the simulator's and the paper's:
 *   A  divide and conquer: a complete binary tree of --depth levels below
 *      the root; each inner node sends its two children to random ranks,
 *      each node sends its result back to its parent's rank, which combines
 *      the two halves (one task per node and one per result);
 *   B  multi-phase: --phases + 1 phases separated by MPI_Barrier, one
 *      notification each; phase 0 is A at --depth, phase 1 runs
 *      --local-tasks tasks on rank P/2 alone and sends nothing, phase k >= 2
 *      is A at depth 1 + (3k mod --depth), rooted on rank k mod P;
 *   C  a chain of --length tasks, each creating the next on a random rank;
 *   D  a directed cycle: every rank runs a task and sends to the next rank,
 *      --iters times (each rank executes --iters + 1 tasks).
 * Every message received is one task (--work-us of CPU).
 *
 * Ground truth: owners and chain steps are pure functions of the seed;
 * every rank walks the whole workload for its own tasks and messages, and
 * the root of each divide and conquer checks that the node counts its
 * children reported add up to the tree's size.
 */
#include "ex_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_SOLVE 1
#define TAG_RESULT 2
#define TAG_CHAIN 3
#define TAG_CYCLE 4
#define MAX_DEPTH 22
#define MAX_PHASES 64

typedef struct skrp {
    ex_ctx x;
    char problem;
    int depth, phases, local_tasks, length, iters;
    /* the divide and conquer of the phase running */
    int phase, pdepth;
    int64_t *acc;         /* per inner node: nodes reported by its children so far */
    unsigned char *cnt;   /* per inner node: results received (0..2) */
    int64_t root_nodes;   /* the root's rank: the tree size it assembled, -1 before */
    int64_t last_cycle;   /* D: the last iteration received from the previous rank */
} skrp;

static int64_t tree_nodes(int depth) { return ((int64_t)2 << depth) - 1; }

/* Problem B's depth of phase k (tdsim's skrB): 0 is the phase without messages. */
static int phase_depth(const skrp *s, int k)
{
    if (k == 0)
        return s->depth;
    return k == 1 ? 0 : 1 + (k * 3) % s->depth;
}

static int owner(const skrp *s, int64_t node)
{
    if (node == 0)
        return s->phase % s->x.size;
    return (int)(ex_hash(s->x.o.seed, (uint64_t)s->phase << 40 | (uint64_t)node, 1) % (uint64_t)s->x.size);
}

static int chain_rank(const skrp *s, int64_t step)
{
    return step == 0 ? 0 : (int)(ex_hash(s->x.o.seed, (uint64_t)step, 2) % (uint64_t)s->x.size);
}

static void task(skrp *s)
{
    ex_work(&s->x);
    s->x.tasks++;
}

/* A node's result (the size of its subtree) goes to its parent's rank. */
static int result(skrp *s, int64_t node, int64_t nodes)
{
    if (node == 0) {
        s->root_nodes = nodes;
        return 0;
    }
    int64_t m[3] = {s->phase, node, nodes};
    return ex_send(&s->x, m, 3, owner(s, (node - 1) / 2), TAG_RESULT);
}

/* After the node's task: a leaf answers, an inner node splits. */
static int solve(skrp *s, int64_t node)
{
    if (node >= tree_nodes(s->pdepth - 1)) /* a leaf */
        return result(s, node, 1);
    for (int64_t c = 2 * node + 1; c <= 2 * node + 2; c++) {
        int64_t m[2] = {s->phase, c};
        if (ex_send(&s->x, m, 2, owner(s, c), TAG_SOLVE) != 0)
            return -1;
    }
    return 0;
}

static int handle(skrp *s, int tag, const int64_t *m, int n)
{
    task(s);
    switch (tag) {
    case TAG_SOLVE:
        if (n != 2 || m[0] != s->phase || m[1] <= 0 || m[1] >= tree_nodes(s->pdepth) || owner(s, m[1]) != s->x.rank)
            return -1;
        return solve(s, m[1]);
    case TAG_RESULT: {
        int64_t p = n == 3 ? (m[1] - 1) / 2 : -1;
        if (n != 3 || m[0] != s->phase || m[1] <= 0 || m[1] >= tree_nodes(s->pdepth) || owner(s, p) != s->x.rank ||
            s->cnt[p] >= 2)
            return -1;
        s->acc[p] += m[2];
        return ++s->cnt[p] == 2 ? result(s, p, s->acc[p] + 1) : 0;
    }
    case TAG_CHAIN:
        if (n != 1 || m[0] <= 0 || m[0] >= s->length || chain_rank(s, m[0]) != s->x.rank)
            return -1;
        if (m[0] + 1 == s->length)
            return 0;
        return ex_send(&s->x, (int64_t[]){m[0] + 1}, 1, chain_rank(s, m[0] + 1), TAG_CHAIN);
    case TAG_CYCLE:
        if (n != 1 || m[0] != s->last_cycle + 1)
            return -1;
        s->last_cycle = m[0];
        if (m[0] == s->iters)
            return 0;
        return ex_send(&s->x, (int64_t[]){m[0] + 1}, 1, (s->x.rank + 1) % s->x.size, TAG_CYCLE);
    }
    return -1;
}

/* This rank's tasks and messages in the divide and conquer of s->phase. */
static void dc_truth(const skrp *s, uint64_t *my_tasks, uint64_t *my_recv)
{
    *my_tasks = *my_recv = 0;
    for (int64_t i = 0; i < tree_nodes(s->pdepth); i++) {
        int mine = owner(s, i) == s->x.rank;
        *my_tasks += mine; /* solve */
        if (i == 0)
            continue;
        int parent_mine = owner(s, (i - 1) / 2) == s->x.rank;
        *my_tasks += parent_mine;    /* its result, combined at the parent */
        *my_recv += mine + parent_mine;
    }
}

/* Runs one phase: the first task(s), then the loop until the notification
 * (or the --native-stop count); checks this rank's counts. */
static int run_phase(skrp *s, uint64_t my_tasks, uint64_t my_recv)
{
    ex_ctx *x = &s->x;
    int ok = 1;
    ex_phase_begin(x, my_recv);
    switch (s->problem) {
    case 'A':
    case 'B':
        s->root_nodes = -1;
        if (s->pdepth == 0) {
            for (int i = 0; x->rank == x->size / 2 && i < s->local_tasks; i++)
                task(s);
        } else {
            memset(s->cnt, 0, (size_t)tree_nodes(s->pdepth - 1));
            memset(s->acc, 0, (size_t)tree_nodes(s->pdepth - 1) * sizeof *s->acc);
            if (owner(s, 0) == x->rank) {
                task(s);
                ok = solve(s, 0) == 0;
            }
        }
        break;
    case 'C':
        if (x->rank == 0) {
            task(s);
            if (s->length > 1)
                ok = ex_send(x, (int64_t[]){1}, 1, chain_rank(s, 1), TAG_CHAIN) == 0;
        }
        break;
    case 'D':
        task(s);
        if (s->iters > 0)
            ok = ex_send(x, (int64_t[]){1}, 1, (x->rank + 1) % x->size, TAG_CYCLE) == 0;
        break;
    }
    MPI_Status st;
    while (ok && ex_next(x, &st) == EX_WORK) {
        int64_t m[EX_MSG_WORDS];
        int n;
        ok = ex_recv(x, &st, m, &n) == 0 && handle(s, st.MPI_TAG, m, n) == 0;
        if (!ok)
            fprintf(stderr, "skr_problems: rank %d: bad message (tag %d) in phase %d\n", x->rank, st.MPI_TAG,
                    x->phases);
    }
    ok &= ex_phase_check(x, my_tasks, my_recv);
    if (s->pdepth > 0 && owner(s, 0) == x->rank && s->root_nodes != tree_nodes(s->pdepth)) {
        fprintf(stderr, "skr_problems: phase %d: the root assembled %lld nodes of %lld\n", x->phases,
                (long long)s->root_nodes, (long long)tree_nodes(s->pdepth));
        ok = 0;
    }
    return ok;
}

/* --problem A|B|C|D is taken out of argv before ex_init (whose options are
 * numbers); returns the letter, 0 if absent, -1 if bad. */
static int take_problem(int *argc, char **argv)
{
    int p = 0;
    for (int i = 1; i < *argc && p >= 0; i++) {
        const char *v = NULL;
        int used = 0;
        if (!strcmp(argv[i], "--problem")) {
            used = i + 1 < *argc ? 2 : 1;
            v = used == 2 ? argv[i + 1] : "";
        } else if (!strncmp(argv[i], "--problem=", 10)) {
            v = argv[i] + 10;
            used = 1;
        }
        if (!v)
            continue;
        p = strlen(v) == 1 && strchr("ABCDabcd", v[0]) ? v[0] & ~0x20 : -1; /* upper case */
        memmove(argv + i, argv + i + used, (size_t)(*argc - i - used + 1) * sizeof *argv);
        *argc -= used;
        i--;
    }
    return p;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    skrp s = {.depth = 0, .phases = 6, .local_tasks = 5, .length = 42, .iters = 2000};
    int prob = take_problem(&argc, argv);
    const ex_opt opts[] = {
        {"depth", EX_INT, &s.depth, 0, MAX_DEPTH,
         "A, B: levels below the root (default 0: 11 for A, 10 for B: 8188 and 11016\n"
         "                         messages, the sizes of bench/counting-figures.py; the paper's had 6389, 9036)"},
        {"phases", EX_INT, &s.phases, 1, MAX_PHASES - 1,
         "B: divide-and-conquer phases (default 6), plus the phase on one rank"},
        {"local-tasks", EX_INT, &s.local_tasks, 0, 1 << 24, "B: tasks of the phase on rank P/2 alone (default 5)"},
        {"length", EX_INT, &s.length, 1, 1 << 30, "C: tasks in the chain (default 42, the paper's)"},
        {"iters", EX_INT, &s.iters, 0, 1 << 24, "D: iterations around the cycle (default 2000, the paper's)"},
    };
    int rc = ex_init(&s.x, "skr_problems",
                     "Problems A-D of skr-counting-quiescence.txt section 3 (tdsim's skrA..skrD).\n"
                     "--problem A|B|C|D chooses one (required).",
                     argc, argv, opts, sizeof opts / sizeof opts[0], 0, 50);
    if (rc == 0 && prob <= 0) {
        if (s.x.rank == 0)
            fprintf(stderr, "skr_problems: --problem: %s (A, B, C or D)\n", prob ? "no such problem" : "missing");
        rc = -1;
    }
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    ex_ctx *x = &s.x;
    s.problem = (char)prob;
    if (s.depth == 0)
        s.depth = prob == 'A' ? 11 : 10;
    int nphases = prob == 'B' ? s.phases + 1 : 1, maxd = 0;
    for (int k = 0; prob <= 'B' && k < nphases; k++)
        maxd = phase_depth(&s, k) > maxd ? phase_depth(&s, k) : maxd;
    if (maxd > 0) {
        s.cnt = calloc((size_t)tree_nodes(maxd - 1), 1);
        s.acc = calloc((size_t)tree_nodes(maxd - 1), sizeof *s.acc);
        if (!s.cnt || !s.acc) {
            fprintf(stderr, "skr_problems: rank %d: out of memory (depth %d)\n", x->rank, maxd);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }

    uint64_t expected = 0, my_tasks = 0, my_recv = 0;
    int ok = 1;
    for (int k = 0; k < nphases; k++) {
        s.phase = k;
        switch (prob) {
        case 'A':
        case 'B':
            s.pdepth = prob == 'A' ? s.depth : phase_depth(&s, k);
            if (s.pdepth == 0) {
                my_tasks = x->rank == x->size / 2 ? (uint64_t)s.local_tasks : 0;
                my_recv = 0;
                expected += (uint64_t)s.local_tasks;
            } else {
                dc_truth(&s, &my_tasks, &my_recv);
                expected += 2 * (uint64_t)tree_nodes(s.pdepth) - 1;
            }
            break;
        case 'C':
            my_tasks = x->rank == 0;
            for (int64_t j = 1; j < s.length; j++)
                my_tasks += chain_rank(&s, j) == x->rank;
            my_recv = my_tasks - (x->rank == 0);
            expected = (uint64_t)s.length;
            break;
        case 'D':
            my_tasks = (uint64_t)s.iters + 1;
            my_recv = (uint64_t)s.iters;
            expected = (uint64_t)x->size * my_tasks;
            break;
        }
        ok &= run_phase(&s, my_tasks, my_recv);
        if (nphases > 1)
            MPI_Barrier(MPI_COMM_WORLD); /* the next phase is new activity (one notification each) */
    }
    free(s.cnt);
    free(s.acc);
    char extra[] = "problem=?";
    extra[sizeof extra - 2] = (char)prob;
    rc = ex_result(x, ok, expected, extra);
    ex_fini(x);
    MPI_Finalize();
    return rc;
}
