/*
 * tdsim workloads. Each one knows its ground truth: the number of tasks it
 * will execute is computed at init from its parameters and random draws,
 * independently of the simulation, and sim.c checks executed == created ==
 * expected at the end of every run.
 *
 *   ring   token ring, continuation probability p   (cda-credit-hpc.txt §V-A)
 *   tree   random refinement trees, lambda/Lmin/Lmax (cda-credit-hpc.txt §V-B)
 *   skrA   divide and conquer                        (skr-counting-quiescence.txt §3, A)
 *   skrB   multi-phase divide and conquer + a phase on one rank without messages (B)
 *   skrC   chain of tasks on random ranks            (C)
 *   skrD   directed cycle, fixed iterations          (D)
 *   bcj5   root <-> leaf five cycles                 (bcj-sweep-termination.txt §6)
 *   spawn  random spawning with bursts of messages
 */
#include "tdsim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const sim_workload_names[WL_N] = {"ring", "tree", "skrA", "skrB", "skrC", "skrD", "bcj5", "spawn"};

enum { K_SOLVE = 1, K_RESULT = 2, K_LOCAL = 3 };

void wl_free(sim_workload *w)
{
    free(w->owner);
    free(w->cnt);
    free(w->child);
    free(w->level);
    w->owner = w->child = w->level = NULL;
    w->cnt = NULL;
}

/* ---------------------------------------------------------------- tree generator */

/*
 * cda-credit-hpc.txt §V-B: (1) a complete tree of Lmin levels; (2) each leaf
 * at level l is refined with probability lambda^l by a complete subtree whose
 * height is uniform in 2..5 levels (2 to 30 new nodes); (3) repeat on new
 * leaves; (4) crop at Lmax levels. Tasks are labelled breadth-first; the
 * result is child[x] (first of two consecutive children, or -1) per label.
 */
int64_t wl_tree_generate(sim_workload *w, double lambda, int lmin, int lmax, uint64_t seed)
{
    sim_rng g;
    sim_rng_seed(&g, seed);
    const int64_t limit = 50000000;
    int64_t cap = 1024, n = 1, nwork = 0, capwork = 1024;
    int32_t *lc = malloc((size_t)cap * sizeof *lc), *lv = malloc((size_t)cap * sizeof *lv);
    int32_t *work = malloc((size_t)capwork * sizeof *work), *front = NULL, *nfront = NULL;
    int64_t capf = 0;
    if (!lc || !lv || !work)
        goto oom;
    lc[0] = -1;
    lv[0] = 0;
    for (int phase = 0;; phase++) {
        int32_t x, h;
        if (phase == 0) {
            x = 0;
            h = lmin;
        } else {
            if (!nwork)
                break;
            x = work[--nwork];
            if (sim_unif(&g) >= pow(lambda, lv[x]))
                continue;
            h = 2 + (int32_t)sim_below(&g, 4);
        }
        /* grow a complete subtree of h levels under x, level by level */
        int64_t nf = 1;
        if (capf < 1)
            capf = 0;
        if (capf < (int64_t)1 << h) {
            capf = (int64_t)1 << h;
            free(front);
            free(nfront);
            front = malloc((size_t)capf * sizeof *front);
            nfront = malloc((size_t)capf * sizeof *nfront);
            if (!front || !nfront)
                goto oom;
        }
        front[0] = x;
        for (int d = 1; d < h; d++) {
            int64_t nn = 0;
            for (int64_t i = 0; i < nf; i++) {
                int32_t f = front[i];
                if (lv[f] + 1 >= lmax)
                    continue; /* (4) crop */
                if (n + 2 > cap) {
                    cap *= 2;
                    if (cap > limit)
                        goto oom;
                    int32_t *a = realloc(lc, (size_t)cap * sizeof *lc), *b = realloc(lv, (size_t)cap * sizeof *lv);
                    if (a)
                        lc = a;
                    if (b)
                        lv = b;
                    if (!a || !b)
                        goto oom;
                }
                lc[f] = (int32_t)n;
                for (int k = 0; k < 2; k++) {
                    lc[n] = -1;
                    lv[n] = lv[f] + 1;
                    nfront[nn++] = (int32_t)n++;
                }
            }
            int32_t *t = front;
            front = nfront;
            nfront = t;
            nf = nn;
        }
        /* the new leaves may be refined again (3) */
        for (int64_t i = 0; i < nf; i++) {
            if (lc[front[i]] >= 0 || lv[front[i]] + 1 >= lmax)
                continue;
            if (nwork == capwork) {
                capwork *= 2;
                int32_t *a = realloc(work, (size_t)capwork * sizeof *work);
                if (!a)
                    goto oom;
                work = a;
            }
            work[nwork++] = front[i];
        }
    }
    /* breadth-first labels: children of consecutive nodes are consecutive */
    free(w->child);
    free(w->level);
    w->child = malloc((size_t)n * sizeof *w->child);
    w->level = malloc((size_t)n * sizeof *w->level);
    int32_t *order = malloc((size_t)n * sizeof *order);
    if (!w->child || !w->level || !order) {
        free(order);
        goto oom;
    }
    int64_t head = 0, tail = 0;
    order[tail++] = 0;
    while (head < tail) {
        int32_t x = order[head];
        w->level[head] = lv[x];
        if (lc[x] >= 0) {
            w->child[head] = (int32_t)tail;
            order[tail++] = lc[x];
            order[tail++] = lc[x] + 1;
        } else {
            w->child[head] = -1;
        }
        head++;
    }
    free(order);
    free(lc);
    free(lv);
    free(work);
    free(front);
    free(nfront);
    w->n = n;
    return n;
oom:
    free(lc);
    free(lv);
    free(work);
    free(front);
    free(nfront);
    return -1;
}

/* ---------------------------------------------------------------- helpers */

static int dc_depth_of(int64_t i)
{
    int d = 0;
    while (i > 0) {
        i = (i - 1) / 2;
        d++;
    }
    return d;
}

static int dc_alloc(sim_workload *w, int depth)
{
    int64_t n = ((int64_t)2 << depth) - 1;
    if (n > w->cap) {
        free(w->owner);
        free(w->cnt);
        w->owner = malloc((size_t)n * sizeof *w->owner);
        w->cnt = calloc((size_t)n, 1);
        if (!w->owner || !w->cnt)
            return -1;
        w->cap = n;
    }
    return 0;
}

static int spawn_children(const sim_workload *w, const sim *s, int64_t id, int gen, int *burst)
{
    if (gen >= s->o->gens)
        return 0;
    uint64_t h = sim_hash(w->hseed, (uint64_t)id);
    *burst = (h & 15) == 0; /* one task in 16 spawns a burst */
    if (*burst)
        return (s->Pw < 8 ? s->Pw : 8) + (int)((h >> 8) % 4);
    return (int)((h >> 8) % 3);
}

static int64_t spawn_child_id(int64_t id, int k) { return (int64_t)(sim_hash((uint64_t)id, (uint64_t)k + 1) >> 1); }

/* count the spawn tree without simulating it: the ground truth */
static int spawn_count(sim_workload *w, const sim *s, int roots, uint64_t *out)
{
    size_t cap = 256, n = 0;
    int64_t *ids = malloc(cap * sizeof *ids);
    int *gens = malloc(cap * sizeof *gens);
    uint64_t count = 0;
    if (!ids || !gens)
        goto fail;
    for (int k = 0; k < roots; k++) {
        ids[n] = spawn_child_id(0, k);
        gens[n++] = 0;
    }
    while (n) {
        int64_t id = ids[--n];
        int gen = gens[n], burst;
        count++;
        if (count > 10000000)
            goto fail;
        int c = spawn_children(w, s, id, gen, &burst);
        for (int k = 0; k < c; k++) {
            if (n == cap) {
                cap *= 2;
                int64_t *a = realloc(ids, cap * sizeof *ids);
                int *b = realloc(gens, cap * sizeof *gens);
                if (a)
                    ids = a;
                if (b)
                    gens = b;
                if (!a || !b)
                    goto fail;
            }
            ids[n] = spawn_child_id(id, k);
            gens[n++] = gen + 1;
        }
    }
    free(ids);
    free(gens);
    *out = count;
    return 0;
fail:
    free(ids);
    free(gens);
    return -1;
}

enum { SPAWN_ROOTS = 4, BCJ5_CYCLES = 5 };

/* ---------------------------------------------------------------- init */

int wl_init(sim *s)
{
    sim_workload *w = &s->wl;
    const sim_opts *o = s->o;
    int P = s->Pw;
    w->nphases = 1;
    switch (o->workload) {
    case WL_RING: {
        /* Theorem 1: the token moves with probability p, stops with q = 1-p */
        int64_t steps = 0;
        while (sim_unif(&w->rng) < o->p && steps < 100000000)
            steps++;
        w->n = steps;
        w->expected = (uint64_t)steps + 1;
        break;
    }
    case WL_TREE: {
        uint64_t ts = o->tree_seed ? o->tree_seed : sim_next(&w->rng);
        int64_t n = wl_tree_generate(w, o->lambda, o->lmin, o->lmax, ts);
        if (n < 0) {
            fprintf(stderr, "tdsim: tree too large or out of memory (lambda %g, Lmax %d)\n", o->lambda, o->lmax);
            return -1;
        }
        w->expected = (uint64_t)n;
        if (o->mapping_random) {
            w->owner = malloc((size_t)n * sizeof *w->owner);
            if (!w->owner)
                return -1;
            for (int64_t i = 0; i < n; i++)
                w->owner[i] = (int32_t)sim_below(&w->rng, (uint64_t)P);
        }
        break;
    }
    case WL_SKRA:
        if (dc_alloc(w, o->depth))
            return -1;
        w->expected = (uint64_t)(2 * (((int64_t)2 << o->depth) - 1) - 1);
        break;
    case WL_SKRB: {
        w->nphases = o->phases + 1;
        int maxd = 0;
        for (int k = 0; k < w->nphases; k++) {
            /* parallelism swings between near-idle and full several times (§3, B);
             * phase 1 keeps its work on one rank and sends nothing */
            w->pdepth[k] = k == 1 ? 0 : 1 + (k * 3) % o->depth;
            if (k == 0)
                w->pdepth[k] = o->depth;
            if (w->pdepth[k] > maxd)
                maxd = w->pdepth[k];
            w->expected += w->pdepth[k] ? (uint64_t)(2 * (((int64_t)2 << w->pdepth[k]) - 1) - 1)
                                        : (uint64_t)o->local_tasks;
        }
        if (dc_alloc(w, maxd))
            return -1;
        break;
    }
    case WL_SKRC:
        w->expected = (uint64_t)o->length;
        break;
    case WL_SKRD:
        w->expected = (uint64_t)P * (uint64_t)(o->iters + 1);
        break;
    case WL_BCJ5:
        w->expected = (uint64_t)P + 2 * BCJ5_CYCLES;
        break;
    case WL_SPAWN:
        w->hseed = sim_next(&w->rng);
        if (spawn_count(w, s, SPAWN_ROOTS, &w->expected)) {
            fprintf(stderr, "tdsim: spawn workload too large (lower --gens)\n");
            return -1;
        }
        break;
    default:
        return -1;
    }
    return 0;
}

void wl_phase(sim *s, int phase)
{
    sim_workload *w = &s->wl;
    const sim_opts *o = s->o;
    int P = s->Pw;
    switch (o->workload) {
    case WL_RING:
        sim_spawn(s, 0, (sim_task){0, (int32_t)0, w->n}); /* token starts at process 0 */
        break;
    case WL_TREE:
        sim_spawn(s, o->mapping_random ? w->owner[0] : 0, (sim_task){0, 0, 0});
        break;
    case WL_SKRA:
    case WL_SKRB: {
        int depth = o->workload == WL_SKRA ? o->depth : w->pdepth[phase];
        int r0 = phase % P;
        if (o->workload == WL_SKRB && depth == 0) {
            sim_spawn(s, P / 2, (sim_task){K_LOCAL, o->local_tasks, 0});
            break;
        }
        w->owner[0] = r0;
        sim_spawn(s, r0, (sim_task){K_SOLVE, depth, 0});
        break;
    }
    case WL_SKRC:
        if (o->length > 0)
            sim_spawn(s, 0, (sim_task){0, o->length, 0});
        break;
    case WL_SKRD:
        for (int r = 0; r < P; r++)
            sim_spawn(s, r, (sim_task){0, 0, 0});
        break;
    case WL_BCJ5:
        for (int r = 0; r < P; r++)
            sim_spawn(s, r, (sim_task){0, 0, 0});
        break;
    case WL_SPAWN:
        for (int k = 0; k < SPAWN_ROOTS; k++)
            sim_spawn(s, 0, (sim_task){0, 0, spawn_child_id(0, k)});
        break;
    }
}

void wl_exec(sim *s, int r, const sim_task *t)
{
    sim_workload *w = &s->wl;
    const sim_opts *o = s->o;
    int P = s->Pw;
    switch (o->workload) {
    case WL_RING:
        if (t->b > 0)
            sim_send(s, r, (int)sim_below(&w->rng, (uint64_t)P), (sim_task){0, 0, t->b - 1});
        break;
    case WL_TREE: {
        int64_t c = w->child[t->b];
        for (int64_t k = 0; c >= 0 && k < 2; k++)
            sim_send(s, r, o->mapping_random ? w->owner[c + k] : (int)((c + k) % P), (sim_task){0, 0, c + k});
        break;
    }
    case WL_SKRA:
    case WL_SKRB: {
        int64_t i = t->b;
        int depth = t->a;
        if (t->kind == K_LOCAL) {
            if (t->a > 1)
                sim_spawn(s, r, (sim_task){K_LOCAL, t->a - 1, 0});
        } else if (t->kind == K_SOLVE) {
            if (dc_depth_of(i) < depth) {
                for (int k = 1; k <= 2; k++) {
                    int dst = (int)sim_below(&w->rng, (uint64_t)P);
                    w->owner[2 * i + k] = dst;
                    sim_send(s, r, dst, (sim_task){K_SOLVE, depth, 2 * i + k});
                }
            } else if (i > 0) {
                sim_send(s, r, w->owner[(i - 1) / 2], (sim_task){K_RESULT, depth, i});
            }
        } else { /* K_RESULT: the parent combines once both halves are in */
            /* every pair completes a node, without a reset between phases:
             * phases that overlap (tdsim --misjudge: a false announcement
             * starts the next one early) still run every task once */
            int64_t p = (i - 1) / 2;
            if (++w->cnt[p] % 2 == 0 && p > 0)
                sim_send(s, r, w->owner[(p - 1) / 2], (sim_task){K_RESULT, depth, p});
        }
        break;
    }
    case WL_SKRC:
        if (t->a > 1)
            sim_send(s, r, (int)sim_below(&w->rng, (uint64_t)P), (sim_task){0, t->a - 1, 0});
        break;
    case WL_SKRD:
        if (t->a < o->iters)
            sim_send(s, r, (r + 1) % P, (sim_task){0, t->a + 1, 0});
        break;
    case WL_BCJ5:
        if (t->kind == 0 && r == 0)
            sim_send(s, r, P - 1, (sim_task){1, 1, 0});
        else if (t->kind == 1)
            sim_send(s, r, 0, (sim_task){2, t->a, 0});
        else if (t->kind == 2 && t->a < BCJ5_CYCLES)
            sim_send(s, r, P - 1, (sim_task){1, t->a + 1, 0});
        break;
    case WL_SPAWN: {
        int burst;
        int c = spawn_children(w, s, t->b, t->a, &burst);
        for (int k = 0; k < c; k++) {
            int64_t id = spawn_child_id(t->b, k);
            uint64_t h = sim_hash((uint64_t)id, 7);
            sim_task ct = {0, t->a + 1, id};
            if (!burst && h % 4 == 0)
                sim_spawn(s, r, ct); /* a local child: no message */
            else
                sim_send(s, r, (int)((h >> 2) % (uint64_t)P), ct);
        }
        break;
    }
    }
}
