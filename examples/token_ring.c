/*
 * Token ring with random continuation (the kernel of cda-credit-hpc.txt
 * §V-A): token i starts on rank i mod P; at every step its owner works,
 * then with probability p hands the token to a rank drawn uniformly at
 * random, and otherwise the token dies. The job is quiescent when every
 * token has died; nothing in the program knows when that is.
 *
 * Ground truth: the token paths are pure functions of (seed, token, step),
 * so every rank replays all of them to learn how many steps it executes and
 * how many tokens it receives.
 */
#include "ex_common.h"

#include <stdio.h>
#include <stdlib.h>

#define TAG_TOKEN 1

typedef struct ring {
    ex_ctx x;
    int tokens, max_hops;
    double p;
} ring;

/* Does the token continue after step k, and to whom? */
static int next_owner(const ring *g, int64_t tok, int64_t k)
{
    if (k + 1 >= g->max_hops || ex_unif(g->x.o.seed, (uint64_t)tok, 2 * (uint64_t)k) >= g->p)
        return -1;
    return (int)(ex_hash(g->x.o.seed, (uint64_t)tok, 2 * (uint64_t)k + 1) % (uint64_t)g->x.size);
}

static int step(ring *g, int64_t tok, int64_t k)
{
    ex_work(&g->x);
    g->x.tasks++;
    int dest = next_owner(g, tok, k);
    if (dest < 0)
        return 0;
    int64_t msg[2] = {tok, k + 1};
    return ex_send(&g->x, msg, 2, dest, TAG_TOKEN);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ring g = {.tokens = 1, .max_hops = 100000, .p = 0.99};
    const ex_opt opts[] = {
        {"tokens", EX_INT, &g.tokens, 1, 1 << 20, "number of tokens (default 1)"},
        {"p", EX_DOUBLE, &g.p, 0, 0.9999, "probability that a token moves on (default 0.99)"},
        {"max-hops", EX_INT, &g.max_hops, 1, 1 << 30, "cap on a token's steps (default 100000)"},
    };
    int rc = ex_init(&g.x, "token_ring", "Token ring with random continuation (cda-credit-hpc §V-A).",
                     argc, argv, opts, sizeof opts / sizeof opts[0], 0, 0);
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    ex_ctx *x = &g.x;

    uint64_t steps_total = 0, my_steps = 0, my_recv = 0;
    for (int64_t t = 0; t < g.tokens; t++) {
        int owner = (int)(t % x->size);
        for (int64_t k = 0; owner >= 0; k++) {
            steps_total++;
            my_steps += owner == x->rank;
            int nx = next_owner(&g, t, k);
            my_recv += nx == x->rank;
            owner = nx;
        }
    }

    int ok = 1;
    ex_phase_begin(x, my_recv);
    for (int64_t t = x->rank; t < g.tokens; t += x->size)
        if (step(&g, t, 0) != 0)
            ok = 0;
    MPI_Status st;
    int ev;
    while (ok && (ev = ex_next(x, &st)) == EX_WORK) {
        int64_t m[EX_MSG_WORDS];
        int n;
        if (ex_recv(x, &st, m, &n) != 0 || st.MPI_TAG != TAG_TOKEN || n != 2 ||
            next_owner(&g, m[0], m[1] - 1) != x->rank) {
            fprintf(stderr, "token_ring: rank %d: unexpected message (tag %d)\n", x->rank, st.MPI_TAG);
            ok = 0;
            break;
        }
        if (step(&g, m[0], m[1]) != 0)
            ok = 0;
    }
    if (!ex_phase_check(x, my_steps, my_recv))
        ok = 0;
    char extra[64];
    snprintf(extra, sizeof extra, "tokens=%d", g.tokens);
    rc = ex_result(x, ok, steps_total, extra);
    ex_fini(x);
    MPI_Finalize();
    return rc;
}
