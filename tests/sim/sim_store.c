/*
 * tdsim's storage: the pools of messages and task nodes (no per-event
 * malloc), the event heap and the FIFO channels (sim_int.h).
 */
#include "sim_int.h"

#include <stdlib.h>
#include <string.h>

static const int ev_class[] = {0, 1, 1, 1, 2, 1, 1};

/* ---------------------------------------------------------------- pools (no per-event malloc) */

int sim_grow(void **p, int32_t *cap, size_t elem)
{
    int32_t n = *cap ? *cap * 2 : 1024;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

int32_t sim_msg_alloc(sim *s)
{
    if (s->mfree >= 0) {
        int32_t i = s->mfree;
        s->mfree = s->msg[i].next;
        return i;
    }
    if (s->nmsg == s->capmsg && sim_grow((void **)&s->msg, &s->capmsg, sizeof *s->msg)) {
        sim_violate(s, V_RESOURCE, "out of memory for %d messages in flight", s->nmsg);
        return -1;
    }
    return s->nmsg++;
}
void sim_msg_free(sim *s, int32_t i)
{
    s->msg[i].next = s->mfree;
    s->mfree = i;
}

int32_t sim_tn_alloc(sim *s)
{
    if (s->tfree >= 0) {
        int32_t i = s->tfree;
        s->tfree = s->tn[i].next;
        return i;
    }
    if (s->ntn == s->captn && sim_grow((void **)&s->tn, &s->captn, sizeof *s->tn)) {
        sim_violate(s, V_RESOURCE, "out of memory for %d queued tasks", s->ntn);
        return -1;
    }
    return s->ntn++;
}

void sim_list_push(sim_tnode *tn, int32_t *head, int32_t *tail, int32_t i)
{
    tn[i].next = -1;
    if (*tail >= 0)
        tn[*tail].next = i;
    else
        *head = i;
    *tail = i;
}
int32_t sim_list_pop(sim_tnode *tn, int32_t *head, int32_t *tail)
{
    int32_t i = *head;
    if (i >= 0) {
        *head = tn[i].next;
        if (*head < 0)
            *tail = -1;
    }
    return i;
}

/* ---------------------------------------------------------------- event heap */

static int ev_less(const sim_ev *a, const sim_ev *b) { return a->t < b->t || (a->t == b->t && a->key < b->key); }

void sim_schedule(sim *s, double t, int kind, int32_t arg)
{
    if (s->nheap == s->capheap) {
        size_t n = s->capheap ? 2 * s->capheap : 1024;
        sim_ev *h = realloc(s->heap, n * sizeof *h);
        if (!h) {
            sim_violate(s, V_RESOURCE, "out of memory for %zu pending events", s->nheap);
            return;
        }
        s->heap = h;
        s->capheap = n;
    }
    /* class in the top bits; below it FIFO order or, adversarially, a random tie-break */
    uint64_t tie = s->rand_tie ? sim_next(&s->rng) >> 4 : s->seq++;
    sim_ev e = {t, (uint64_t)ev_class[kind] << 60 | (tie & ((1ull << 60) - 1)), kind, arg};
    size_t i = s->nheap++;
    while (i) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&e, &s->heap[p]))
            break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = e;
}

sim_ev sim_pop(sim *s)
{
    sim_ev top = s->heap[0], e = s->heap[--s->nheap];
    size_t i = 0, n = s->nheap;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && ev_less(&s->heap[l], &e))
            m = l;
        if (l + 1 < n && ev_less(&s->heap[l + 1], m == i ? &e : &s->heap[l]))
            m = l + 1;
        if (m == i)
            break;
        s->heap[i] = s->heap[m];
        i = m;
    }
    if (n)
        s->heap[i] = e;
    return top;
}

/* ---------------------------------------------------------------- FIFO channels */

/* Control channels are FIFO per (src,dst) like MPI on one communicator and
 * tag: an arrival never overtakes an earlier one on the same channel. Open
 * addressing keyed by (src,dst), so a million ranks cost only the channels
 * an algorithm actually uses. */
double *sim_channel(sim *s, int src, int dst)
{
    if (2 * (s->chn + 1) > s->chcap) {
        size_t cap = s->chcap ? 2 * s->chcap : 1024;
        uint64_t *k = malloc(cap * sizeof *k);
        double *v = malloc(cap * sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            sim_violate(s, V_RESOURCE, "out of memory for %zu FIFO channels", s->chn);
            return NULL;
        }
        memset(k, 0xff, cap * sizeof *k);
        for (size_t i = 0; i < s->chcap; i++) {
            if (s->chkey[i] == UINT64_MAX)
                continue;
            size_t j = sim_hash(s->chkey[i], 0) & (cap - 1);
            while (k[j] != UINT64_MAX)
                j = (j + 1) & (cap - 1);
            k[j] = s->chkey[i];
            v[j] = s->chlast[i];
        }
        free(s->chkey);
        free(s->chlast);
        s->chkey = k;
        s->chlast = v;
        s->chcap = cap;
    }
    uint64_t key = (uint64_t)(uint32_t)src << 32 | (uint32_t)dst;
    size_t j = sim_hash(key, 0) & (s->chcap - 1);
    while (s->chkey[j] != UINT64_MAX && s->chkey[j] != key)
        j = (j + 1) & (s->chcap - 1);
    if (s->chkey[j] == UINT64_MAX) {
        s->chkey[j] = key;
        s->chlast[j] = -1.0;
        s->chn++;
    }
    return &s->chlast[j];
}

