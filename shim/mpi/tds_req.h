/*
 * The request table and the flat receives' handle set (tds_req.c; DESIGN.md
 * §4): tdshim's state for each operation the program holds a handle of.
 */
#ifndef TDS_REQ_H
#define TDS_REQ_H

#include "tds_state.h"

/* The per-message operations are inline (each is a few instructions;
 * calls showed in profiles of the message rate); growing is not. */
static inline unsigned tds_rq_hash(MPI_Request r)
{
    uintptr_t v = (uintptr_t)r;
    v ^= v >> 17;
    v *= 0x9E3779B97F4A7C15ull;
    return (unsigned)(v >> 32);
}
void tds_hs_grow(void);               /* tds_hset: room for one more handle */
static inline void tds_hs_put(MPI_Request r, tds_cell *v);
/* tds_hs_put where the slots may be full */
static inline void tds_hs_add(MPI_Request r, tds_cell *v)
{
    if (__builtin_expect(tds.hs.n >= tds.hs.limit, 0))
        tds_hs_grow();
    tds_hs_put(r, v);
}
static inline unsigned tds_hs_home(uintptr_t k)
{
    return (unsigned)((k * 0x9E3779B97F4A7C15ull) >> 32);
}
/* the set has room (tds.hs.n < tds.hs.limit) */
static inline void tds_hs_put(MPI_Request r, tds_cell *v)
{
    uintptr_t k = (uintptr_t)r;
    tds_hslot *s = tds.hs.slot;
    unsigned m = tds.hs.mask, i = tds_hs_home(k) & m;
    while (s[i].k != TDS_HS_EMPTY)
        i = (i + 1) & m;
    s[i].k = k;
    s[i].v = v;
    tds.hs.n++;
}
/* the ring into the slots (tds_req.c) */
void tds_hs_flush(void);
/* a flat receive was posted: its handle at the end of the ring */
static inline void tds_hs_post(MPI_Request r, tds_cell *v)
{
    unsigned rn = tds.hs.rn;
    if (__builtin_expect(rn == TDS_HS_RING, 0)) {
        tds_hs_flush();
        rn = 0;
    }
    tds.hs.rk[rn] = r;
    tds.hs.rv[rn] = v;
    tds.hs.rn = rn + 1;
}
/* a flat receive is pending (in the ring or the slots) */
static inline int tds_hs_any(void)
{
    return (tds.hs.n | tds.hs.rn) != 0;
}
/* the slot of r among the slots (not the ring), or -1 */
static inline long tds_hs_find_slots(MPI_Request r)
{
    if (!tds.hs.n)
        return -1;
    uintptr_t k = (uintptr_t)r;
    const tds_hslot *s = tds.hs.slot;
    unsigned m = tds.hs.mask, i = tds_hs_home(k) & m;
    for (;;) { /* the handle at its home first: the common case */
        uintptr_t x = s[i].k;
        if (__builtin_expect(x == k, 1))
            return i;
        if (x == TDS_HS_EMPTY)
            return -1;
        i = (i + 1) & m;
    }
}
/* A single completion call (MPI_Test, MPI_Wait) on a flat receive posted
 * among the last TDS_HS_NEAR, still in the ring: what a program that posts
 * a receive and tests it until done does. Found by a walk back from the
 * ring's end and, once complete, taken out by moving the handles after it
 * (the ring keeps its posting order), instead of tds_hs_find's flush of
 * the ring into the slots and a hash lookup: bench/msgcount --mode test.
 * Returns the handle's place in the ring, or -1 (look in the whole set). */
#define TDS_HS_NEAR 8 /* also the longest ring walked, not emptied, by tds_hs_find and tds_hs_take */
static inline long tds_hs_near(MPI_Request r)
{
    unsigned rn = tds.hs.rn, lo = rn > TDS_HS_NEAR ? rn - TDS_HS_NEAR : 0;
    for (unsigned j = rn; j-- > lo;)
        if (tds.hs.rk[j] == r)
            return (long)j;
    return -1;
}
/* the slot of r, or -1. The ring is emptied into the slots first where r
 * may be in it: a long ring, or a short one (at most TDS_HS_NEAR, walked)
 * that holds it. A handle that is in neither (a send of the program's)
 * leaves a short ring as it is, so the standing receive in it stays where
 * the flat MPI_Test* find it (issue 38: hpcc's MPIRandomAccess tests its
 * MPI_Isend with MPI_Test between the MPI_Testany calls of its standing
 * receive; the first test of a send flushed the receive out of the ring,
 * and every empty MPI_Testany after it took the general entry: 184
 * instructions of tdshim a call, 519,693 of them in one run) */
static inline long tds_hs_find(MPI_Request r)
{
    unsigned rn = tds.hs.rn;
    if (__builtin_expect(rn != 0, 0) && (rn > TDS_HS_NEAR || tds_hs_near(r) >= 0))
        tds_hs_flush();
    return tds_hs_find_slots(r);
}
/* empty slot i, moving back the handles of its chain that would no
 * longer be found (Knuth's algorithm R for linear probing) */
static inline void tds_hs_drop(long slot)
{
    tds_hslot *s = tds.hs.slot;
    unsigned m = tds.hs.mask, i = (unsigned)slot, j = i;
    for (;;) {
        j = (j + 1) & m;
        if (s[j].k == TDS_HS_EMPTY)
            break;
        unsigned h = tds_hs_home(s[j].k) & m;
        /* s[j] stays if its home lies cyclically in (i, j] */
        if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
            continue;
        s[i] = s[j];
        i = j;
    }
    s[i].k = TDS_HS_EMPTY;
    tds.hs.n--;
}
/* 1 if r was a flat receive (now taken out of the set; *v its cell). A
 * short ring is walked (tds_hs_walk, below), not emptied into the slots:
 * a receive taken from it leaves the others where they were posted. */
static inline int tds_hs_walk(MPI_Request r, tds_cell **v);
static inline int tds_hs_take(MPI_Request r, tds_cell **v)
{
    if (tds.hs.rn <= TDS_HS_NEAR)
        return tds_hs_walk(r, v);
    long i = tds_hs_find(r);
    if (i < 0)
        return 0;
    *v = tds.hs.slot[i].v;
    tds_hs_drop(i);
    return 1;
}
/* tds_hs_take for a handle found at j by tds_hs_near before the MPI call
 * that completed it (nothing that call runs enters tdshim: tds_inside; the
 * ring is checked again all the same) */
/* the ring's handle at j out, its successors moved down (posting order kept) */
static inline __attribute__((always_inline)) void tds_hs_take_ring(unsigned j, tds_cell **v)
{
    unsigned rn = tds.hs.rn;
    *v = tds.hs.rv[j];
    for (unsigned i = j + 1; i < rn; i++) {
        tds.hs.rk[i - 1] = tds.hs.rk[i];
        tds.hs.rv[i - 1] = tds.hs.rv[i];
    }
    tds.hs.rn = rn - 1;
}
static inline __attribute__((always_inline)) int tds_hs_take_near(MPI_Request r, long j, tds_cell **v)
{
    unsigned rn = tds.hs.rn;
    if (__builtin_expect(j < 0 || (unsigned)j >= rn || tds.hs.rk[j] != r, 0))
        return tds_hs_take(r, v);
    tds_hs_take_ring((unsigned)j, v);
    return 1;
}
/* tds_hs_take of a short ring (tds.hs.rn <= TDS_HS_NEAR): the whole
 * ring walked from its end, then the slots */
static inline int tds_hs_walk(MPI_Request r, tds_cell **v)
{
    long j = tds_hs_near(r);
    if (j >= 0) {
        tds_hs_take_ring((unsigned)j, v);
        return 1;
    }
    long i = tds_hs_find_slots(r);
    if (i < 0)
        return 0;
    *v = tds.hs.slot[i].v;
    tds_hs_drop(i);
    return 1;
}
tds_rq *tds_rq_alloc(void);           /* free list empty: a new entry */
void tds_rq_grow(void);
static inline tds_rq *tds_rq_new(void)
{
    tds_rq *q = tds.rq_free;
    if (__builtin_expect(q == NULL, 0))
        q = tds_rq_alloc();
    else
        tds.rq_free = q->next;
    /* the callers (tds_send_post, recv_layout) set the operation's fields; a
     * full memset of the entry showed in profiles of the message rate */
    q->req = MPI_REQUEST_NULL;
    q->next = NULL;
    q->pprev = NULL;
    q->persistent = q->active = q->finished = q->foreign = q->scope = 0;
    q->sendmode = 0;
    return q;
}
void tds_rq_purge(MPI_Request r); /* tds_req.c */
static inline void tds_rq_insert(tds_rq *q)
{
    if (__builtin_expect(tds.rq_count >= tds.rq_limit, 0))
        tds_rq_grow();
    tds_rq **b = &tds.rq_hash[tds_rq_hash(q->req) & tds.rq_mask];
    /* an entry of the same handle is stale: MPI gave its handle to this
     * new request, so the request it was is gone (tds_rq_purge) */
    for (tds_rq *p = *b; p; p = p->next)
        if (__builtin_expect(p->req == q->req, 0)) {
            tds_rq_purge(q->req);
            b = &tds.rq_hash[tds_rq_hash(q->req) & tds.rq_mask];
            break;
        }
    q->next = *b;
    if (q->next)
        q->next->pprev = &q->next;
    *b = q;
    q->pprev = b;
    tds.rq_count++;
}
int tds_rq_insert_send(tds_rq *q);    /* 0: handle shared with an entry, q not inserted */
/* the entry of r in the table only (a plain receive has none) */
static inline tds_rq *tds_rq_lookup(MPI_Request r)
{
    if (!tds.rq_count || r == MPI_REQUEST_NULL)
        return NULL;
    for (tds_rq *q = tds.rq_hash[tds_rq_hash(r) & tds.rq_mask]; q; q = q->next)
        if (q->req == r)
            return q;
    return NULL;
}
static inline void tds_rq_unlink(tds_rq *q)
{
    *q->pprev = q->next;
    if (q->next)
        q->next->pprev = q->pprev;
    q->next = NULL;
    q->pprev = NULL;
    tds.rq_count--;
}
void tds_rq_drop_refs(tds_rq *q); /* cmap, owned type */
static inline void tds_rq_release(tds_rq *q)
{
    if (__builtin_expect(q->cmap != NULL || q->owns_type || q->cell, 0))
        tds_rq_drop_refs(q);
    q->next = tds.rq_free;
    tds.rq_free = q;
}
static inline int tds_rq_any(void)
{
    return (tds.rq_count | tds.hs.n | tds.hs.rn) != 0;
}
void *tds_scratch_grow(size_t n);
/* the bounce buffer of blocking calls; grows, never shrinks */
static inline void *tds_scratch(size_t n)
{
    return __builtin_expect(n <= tds_t.scratch_cap, 1) ? tds_t.scratch : tds_scratch_grow(n);
}
int tds_ensure_rq_scratch(int n);

#endif
