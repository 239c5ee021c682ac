/*
 * Completion paths (DESIGN.md §4): Wait*, Test*, Request_get_status,
 * Request_free, Cancel, Start*. Each finishes a receive of ours exactly
 * once (count it, read the piggyback, copy out, recycle the entry) through
 * tds_complete(). MPI sets the handles it frees to MPI_REQUEST_NULL, so the
 * blocking calls look handles up before calling MPI (they must know whether
 * a receive is pending) and the Test* calls save them and look up only the
 * completed ones afterwards (see save_handles). Requests that are not ours
 * (collectives, PROC_NULL operations, generalized requests) pass through.
 *
 * A blocking completion call that waits for a receive is a polling loop
 * (Test* + tds_wait_step) so the rank is passive and keeps the protocol
 * going; one that waits only for sends stays a plain PMPI call.
 */
#include "tds_complete.h"
#include "tds_flat.h"
#include "tds_part.h"
#include "tds_progress.h"
#include "tds_recv.h"
#include "tds_bodies.h"

#include <stdlib.h>
#include <string.h>

/* MPI_Testall that finds everything complete writes the statuses exactly
 * as MPI_Waitall would (Open MPI: both copy each request's status) */
#if defined(OPEN_MPI)
#define TDS_TESTALL_AS_WAITALL 1
#else
#define TDS_TESTALL_AS_WAITALL 0
#endif

/* q is a receive that has not completed yet (a started or nonpersistent
 * one, not finished early by MPI_Request_get_status), or an MPI_Isendrecv
 * whose receive has not (tds_pair.c): a call waiting for it may
 * make the rank passive. (An MPI_Isendrecv whose receive completed waits
 * for its send only: not passive, DESIGN.md §1.) */
static inline int pending_recv(const tds_rq *q)
{
    return (q->kind == TDS_RQ_RECV && (q->active || !q->persistent) && !q->finished) ||
           (q->kind == TDS_RQ_PAIR && q->rreq != MPI_REQUEST_NULL);
}
/* could a receive entry deliver work (tds_poll_scope)? pairs: their receive's tag is not kept, taken as yes */
static inline int rq_scope(tds_rq *q)
{
    if (q->kind != TDS_RQ_RECV || !tds_scoped())
        return 1;
    if (__builtin_expect(!q->scope, 0)) /* once per receive: a standing one is tested over and over */
        q->scope = (uint8_t)(1 + tds_poll_scope(q->tag, q->comm));
    return q->scope - 1;
}

/* a plain receive among the handles scanned (tds_hset): its handle is in
 * tds_t.rq_saved, taken out of the set when it completes */
static tds_rq plain_mark;
#define PLAIN (&plain_mark)

/* find the entries of the handles (the only table lookup of the call:
 * completion uses tds_t.rq_found and the handles saved in tds_t.rq_saved),
 * and say whether the set holds a pending receive of ours: 1 + the index
 * of the last one, 0 if none */
static int scan(int n, const MPI_Request *reqs, int *ours)
{
    int recv = 0;
    *ours = 0;
    tds_ensure_rq_scratch(n > 0 ? n : 1);
    unsigned gen = ++tds.scan_gen;
    for (int i = 0; i < n; i++) {
        tds_t.rq_saved[i] = reqs[i];
        tds_rq *q = tds_rq_lookup(reqs[i]);
        if (!q && tds_hs_find(reqs[i]) >= 0) {
            tds_t.rq_found[i] = PLAIN;
            (*ours)++;
            recv = i + 1;
            continue;
        }
        /* a handle shared by several immediately-completed sends (see
         * tds_rq_insert_send) has one entry: the first index claims it */
        if (q && q->scan_gen == gen)
            q = NULL;
        tds_t.rq_found[i] = q;
        if (q) {
            q->scan_gen = gen;
            (*ours)++;
            if (pending_recv(q))
                recv = i + 1;
        }
    }
    return recv;
}

/* request i of the set scanned last completed */
static inline void complete_index(int i, MPI_Status *st)
{
    tds_rq *q = tds_t.rq_found[i];
    tds_cell *fc;
    if (q == PLAIN) {
        if (tds_hs_take(tds_t.rq_saved[i], &fc))
            tds_flat_done(fc, st);
    } else if (q) {
        tds_complete(q, st);
    }
}

/* a flat receive (tds_hset): as a receive entry in tds_body_Wait; j: its
 * place near the ring's end (tds_hs_near), or -1 */
static int __attribute__((noinline)) wait_plain(long j, MPI_Request *request, MPI_Status *status)
{
    MPI_Request h = *request;
    MPI_Status st;
    tds_status_seed(&st, status);
    tds_cell *fc;
    int done = 0, rc;
    tds_wait w = tds_wait_begin(1);
    while ((rc = PMPI_Test(request, &done, &st)) == MPI_SUCCESS && !done)
        tds_wait_step(&w);
    if (done && tds_hs_take_near(h, j, &fc)) {
        if (__builtin_expect(rc != MPI_SUCCESS, 0))
            tds_flat_done_rc(rc, fc, &st);
        else
            tds_flat_done(fc, &st);
    }
    tds_status_out(status, &st);
    return rc;
}

/* a single handle: its entry, or PLAIN, or NULL (not ours) */
static inline tds_rq *find_one(MPI_Request r)
{
    tds_rq *q = tds_rq_lookup(r);
    return q || tds_hs_find(r) < 0 ? q : PLAIN;
}
/* a flat receive find_one found (PLAIN: r is in the set's slots now): in
 * the idle notions' scope, unless flat_cls_Irecv marked it out (TDS_OOS:
 * tests/mpi/busymemo.sh, mode slots) */
static inline int plain_scope(MPI_Request r)
{
    long s = tds_hs_find(r);
    return s < 0 || tds.hs.slot[s].v != TDS_OOS;
}

/* Calls with no receive of ours pass straight to MPI (under
 * MPI_THREAD_MULTIPLE they are loops that let the other threads in). */
int tds_body_Wait(MPI_Request *request, MPI_Status *status)
{
    long j = tds_hs_near(*request);
    if (j >= 0)
        return wait_plain(j, request, status);
    tds_rq *q = find_one(*request);
    int rc, done = 1;
    if (q == PLAIN)
        return wait_plain(-1, request, status);
    if (!q) {
        if (!TDS_LOOP_WAITS())
            return PMPI_Wait(request, status);
        tds_wait w = tds_wait_begin(0);
        while ((rc = PMPI_Test(request, &done, status)) == MPI_SUCCESS && !done)
            tds_wait_step(&w);
        return rc;
    }
    MPI_Status st;
    tds_status_seed(&st, status);
    if (pending_recv(q) || q->kind == TDS_RQ_PAIR || TDS_LOOP_WAITS()) {
        /* a receive, an MPI_Isendrecv (which only tdshim completes), or
         * other threads to let in: a loop that keeps the protocol going */
        tds_wait w = tds_wait_begin(q->kind == TDS_RQ_RECV || pending_recv(q));
        while ((rc = PMPI_Test(request, &done, &st)) == MPI_SUCCESS && !done)
            tds_wait_step(&w);
    } else {
        rc = PMPI_Wait(request, &st);
    }
    if (done) {
        tds_rx_rc(rc);
        tds_complete(q, &st);
        tds_rx_end(rc);
        rc = tds_recv_err(rc);
    }
    tds_status_out(status, &st);
    return rc;
}

/* MPI_Test of a flat receive near the ring's end (tds_hs_near): as
 * tds_body_Test's for PLAIN, without a lookup, and into the program's
 * status when it gave one (what tds_flat_done does to a status is what
 * tds_status_out would copy back: no copies). The flat MPI_Test takes these
 * tests first, but not under TDSHIM_IDLE=spin, where a receive's scope is
 * answered here (tests/mpi/busymemo.sh's spin runs: near-scope-lost) */
static int __attribute__((noinline)) test_near(long j, MPI_Request *request, int *flag, MPI_Status *status)
{
    MPI_Status *st = status != MPI_STATUS_IGNORE ? status : &tds_t.st_one;
    uint64_t m0 = tds_found_mark();
    MPI_Request h = *request;
    tds_cell *fc;
    int recv = tds.hs.rv[j] != TDS_OOS; /* in scope (TDS_OOS: flat_cls_Irecv) */
    int rc = PMPI_Test(request, flag, st);
    if (*flag && tds_hs_take_near(h, j, &fc)) {
        if (__builtin_expect(rc != MPI_SUCCESS, 0))
            tds_flat_done_rc(rc, fc, st);
        else
            tds_flat_done(fc, st);
        tds_found_tag(st);
    }
    return tds_idle_poll_rc(1, recv, tds_found_mark() != m0, rc);
}

static int __attribute__((noinline)) test_any(MPI_Request *request, int *flag, MPI_Status *status);
static inline int test_one(MPI_Request *request, int *flag, MPI_Status *status)
{
    long j = tds_hs_near(*request);
    if (j >= 0)
        return test_near(j, request, flag, status);
    return test_any(request, flag, status);
}
static int __attribute__((noinline, cold)) test_entered(MPI_Request *request, int *flag, MPI_Status *status)
{
    tds_poll_enter_slow();
    return test_one(request, flag, status);
}

/* The rest of an MPI_Test of q, ours (an entry or PLAIN: find_one), once
 * MPI's call returned rc and flag into st (the program's status, or
 * tds_t.st_one: what tds_complete and tds_flat_done do to a status is what
 * tds_status_out would copy back, as test_near's); h: the handle before
 * the call, recv: could it deliver work (rq_scope), m0: tds_found_mark()
 * before the call. */
static int test_rest(tds_rq *q, MPI_Request h, int rc, int flag, MPI_Status *st, int recv, uint64_t m0)
{
    tds_cell *fc;
    tds_rx_rc(rc);
    if (flag && q == PLAIN) {
        if (tds_hs_take(h, &fc))
            tds_flat_done(fc, st);
    } else if (flag) {
        tds_complete(q, st);
        rc = tds_recv_err(rc);
    }
    tds_rx_end(rc);
    if (flag)
        tds_found_tag(st);
    tds_idle_poll(1, recv, tds_found_mark() != m0);
    return rc;
}
/* the status MPI writes for a single completion call: the program's, or
 * tds_t.st_one with MPI_ERROR as tds_status_seed leaves a local one */
static inline MPI_Status *test_status(MPI_Status *status)
{
    if (status != MPI_STATUS_IGNORE)
        return status;
    tds_t.st_one.MPI_ERROR = MPI_SUCCESS;
    return &tds_t.st_one;
}

/* A busy rank's MPI_Test of a receive out of scope (issue 37: work_steal
 * tests its standing steal-request receive, its tag ignored, every 4
 * nodes; bench/msgcount --mode busy): the entry test_any found for such a
 * receive last (tds_t.busy_q) is taken while it is in the table (pprev set:
 * entries are never freed, and one out of the table has pprev NULL,
 * tds_rq_unlink, tds_rq_new) with that handle -- the table holds one entry
 * per handle: tds_rq_insert purges a stale one of a handle MPI reused,
 * tds_rq_insert_send keeps one of a handle sends share -- and was found out
 * of scope (scope 1, rq_scope: a recycled entry, reset by tds_rq_new, may
 * hold the same handle again for a receive in scope: tests/mpi/busyreuse.sh,
 * where it is the notification receive), without
 * tds_hs_near's walk of the ring or find_one's lookup. The call's common
 * case, nothing done, is test_any's for such a receive: an empty poll out
 * of scope. Anything else, a message found included, is test_rest's. */
static int __attribute__((noinline)) test_busy(MPI_Request *request, int *flag, MPI_Status *status)
{
    MPI_Status *st = test_status(status);
    /* kept in tds_t across MPI's call, not in registers to save (a frame
     * of 6 cost the call 14 instructions): the entry is tds_t.busy_q, its
     * handle matters to test_rest only for PLAIN */
    tds_t.busy_m0 = tds_found_mark();
    int rc = PMPI_Test(request, flag, st);
    if (__builtin_expect(*flag || rc != MPI_SUCCESS || tds_found_mark() != tds_t.busy_m0, 0))
        return test_rest(tds_t.busy_q, MPI_REQUEST_NULL, rc, *flag,
                         status != MPI_STATUS_IGNORE ? status : &tds_t.st_one, 0, tds_t.busy_m0);
    tds.m.polls++;
    if (!tds_unscoped_quick(1, 0))
        tds_empty_poll(1, 0);
    return rc;
}

/* no frame of its own: the common case is a tail call (tds_poll_enter's
 * work, when there is some, in test_entered) */
int tds_body_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (__builtin_expect(tds_poll_enter_needed(), 0))
        return test_entered(request, flag, status);
    tds_rq *b = tds_t.busy_q;
    if (b && b->req == *request && b->scope == 1 && b->pprev)
        return test_busy(request, flag, status);
    return test_one(request, flag, status);
}
static int test_any(MPI_Request *request, int *flag, MPI_Status *status)
{
    tds_rq *q = find_one(*request);
    if (!q)
        return PMPI_Test(request, flag, status);
    int recv = q == PLAIN ? plain_scope(*request) : q->kind != TDS_RQ_SEND && rq_scope(q);
    if (!recv && q != PLAIN && q->kind == TDS_RQ_RECV)
        tds_t.busy_q = q; /* test_busy's next time */
    MPI_Status *st = test_status(status);
    uint64_t m0 = tds_found_mark();
    MPI_Request h = *request;
    int rc = PMPI_Test(request, flag, st);
    return test_rest(q, h, rc, *flag, st, recv, m0);
}

/* the growth out of line, and a few handles (a poll's standing receives)
 * copied in place: the call to memcpy and the check of the capacity in
 * tds_req.c were a tenth of MPI_Testany's cost (issue 38) */
static inline MPI_Request *save_handles(int n, const MPI_Request *reqs)
{
    if (__builtin_expect(n > tds_t.rq_found_cap || tds_t.rq_found_cap == 0, 0))
        tds_ensure_rq_scratch(n > 0 ? n : 1);
    MPI_Request *h = tds_t.rq_saved;
    if (n <= 8) {
        for (int i = 0; i < n; i++)
            h[i] = reqs[i];
    } else {
        memcpy(h, reqs, (size_t)n * sizeof *reqs);
    }
    return h;
}

/* a request of the array completed: finish it if it is ours */
static inline void complete_handle(MPI_Request h, MPI_Status *st)
{
    tds_rq *q = tds_rq_lookup(h);
    tds_cell *fc;
    if (q)
        tds_complete(q, st);
    else if (tds_hs_take(h, &fc))
        tds_flat_done(fc, st);
}

/* complete_handle for the one request a call completed (MPI_Testany): a
 * flat receive posted among the last TDS_HS_NEAR is taken from the ring's
 * end, as MPI_Test's (tds_hs_near; looked for after the call: its handle
 * was in the set before it and nothing in it enters tdshim), without the
 * flush of the ring into the slots and the two lookups: a program that
 * polls a few standing receives and reposts the one done (issue 38) */
static inline void complete_handle_near(MPI_Request h, MPI_Status *st)
{
    long j = tds_hs_near(h);
    tds_cell *fc;
    if (j >= 0 && tds_hs_take_near(h, j, &fc))
        tds_flat_done(fc, st);
    else
        complete_handle(h, st);
}

/* Where a multiple-completion call writes its statuses: the program's own
 * array when it gave one (a status field the library leaves alone, such
 * as MPICH's MPI_ERROR on success, then stays the program's, as natively),
 * else a scratch array (the statuses of our receives are needed). */
static inline MPI_Status *statuses_of(MPI_Status *user)
{
    return user != MPI_STATUSES_IGNORE ? user : tds_t.st_scratch;
}

/* waitall_flat's MPI_Waitall failed: a request whose status says
 * MPI_ERR_PENDING did not complete (MPI-3.1 §3.7.5: its handle stays in
 * the set), every other one did, each finished on its own */
static int __attribute__((noinline, cold)) waitall_flat_err(int rc, int count, const MPI_Request *h, MPI_Status *st)
{
    tds_cell *fc;
    tds_rx_rc(rc);
    for (int i = 0; i < count; i++)
        if (tds_st_error(&st[i]) != MPI_ERR_PENDING && tds_hs_take(h[i], &fc))
            tds_flat_done(fc, &st[i]);
    tds_rx_end(rc);
    return rc;
}

/* one flat receive of a call that completed several (waitall_flat):
 * counted into b, or finished on its own when it is not the common case.
 * plain: header-free, and the core has no on_recv (tds_plain_batch
 * counts c->recvd too) */
static inline __attribute__((always_inline)) void batch_one(int plain, tds_cell *c, MPI_Status *x, tds_batch *b)
{
    if (plain) {
        if (__builtin_expect(c != NULL || tds_st_tag(x) == tds.nenv_tag || tds_st_cancelled(x), 0)) {
            tds_flat_done(c, x);
            return;
        }
        b->n++;
        b->bytes += tds_st_bytes(x);
        return;
    }
    if (__builtin_expect(c == NULL, 0) || c == TDS_OOS) { /* header-free: an on_recv, or messages to classify */
        tds_plain_done(x);
        return;
    }
    tds_wire_one(c, x, b);
    c->next = tds.cells;
    tds.cells = c;
}
static inline void batch_end(int plain, tds_batch *b)
{
    if (plain && b->n)
        tds_plain_batch(b->n, b->bytes);
    else if (!plain)
        tds_batch_end(b);
}
#define BATCH_INIT(b) ((b).n = (b).bytes = 0, (b).k = 0)

/* A window of flat receives with a header (the array exactly the ring,
 * count <= TDS_HS_RING; every one has a cell: !tds.nohdr), all completed:
 * batch_one for each, with the counts, the piggybacks and the free list
 * in registers and on the stack (tds_batch's fields through memory cost 15
 * instructions a message). A message that is not the common case is
 * finished on its own (tds_recv_finish): its on_recv may run before the
 * window's on_recv_many, which on_recv_many's contract allows (td_algo.h). */
static inline __attribute__((always_inline)) void window_cells_x(int count, MPI_Status *st, int srcs)
{
    uint64_t pb[TDS_HS_RING], bytes = 0;
    int sv[TDS_HS_RING]; /* srcs only */
    unsigned k = 0;
    size_t hl = (size_t)tds.hdr_len;
    tds_cell *fr = tds.cells;
    for (int i = 0; i < count; i++) {
        tds_cell *c = tds.hs.rv[i];
        MPI_Status *x = &st[i];
        size_t got = tds_st_bytes(x), ub = got - hl;
        if (__builtin_expect(got < hl || c->wire[0] != tds.core.hdr_in ||
                                 (ub != c->ub && (c->tsize != 1 || ub > c->ub)) || tds_st_cancelled(x),
                             0)) {
            tds.cells = fr;
            tds_flat_done(c, x); /* tds_recv_finish's, on its own */
            fr = tds.cells;
            continue;
        }
        if (srcs)
            sv[k] = tds_st_source(x); /* a world rank (tds_flat_comm_rx) */
        memcpy(&pb[k++], c->wire + TDS_HDR_FIXED, sizeof pb[0]); /* the cell has TDS_HDR_MAX header bytes */
        cell_copy(c->buf, c->wire + hl, ub);
        tds_st_set_bytes(x, ub);
        bytes += ub;
        c->next = fr;
        fr = c;
    }
    tds.cells = fr;
    if (k) {
        if (srcs)
            td_primary_recv_src(&tds.core, (const uint8_t *)pb, sizeof pb[0], sv, k);
        else
            td_primary_recv_many(&tds.core, (const uint8_t *)pb, sizeof pb[0], k);
        tds_recv_batch(k, bytes);
    }
}
/* the window's piggybacks to one on_recv_many, or each with its source to
 * on_recv (td_primary_recv_src) */
static void __attribute__((noinline)) window_cells_many(int count, MPI_Status *st) { window_cells_x(count, st, 0); }
static void __attribute__((noinline)) window_cells_src(int count, MPI_Status *st) { window_cells_x(count, st, 1); }
static inline void window_cells(int count, MPI_Status *st)
{
    if (__builtin_expect(td_recv_many_ok(&tds.core), 1))
        window_cells_many(count, st);
    else
        window_cells_src(count, st);
}

/* Where the ring's handles are in the array (tds_hset): all of them, in
 * posting order, and no handle of the array elsewhere in the set. Returns
 * how many (the ring's length), or 0 when it is not so. */
typedef struct ring_hit {
    int i;             /* index in the array */
    tds_cell *v;
} ring_hit;
static inline int ring_match(int count, const MPI_Request *h, ring_hit *hit)
{
    unsigned rn = tds.hs.rn, j = 0;
    const MPI_Request *rk = tds.hs.rk;
    if (!rn)
        return 0;
    for (int i = 0; i < count; i++) {
        if (j < rn && h[i] == rk[j]) {
            hit[j].i = i;
            hit[j].v = tds.hs.rv[j];
            j++;
        } else if (__builtin_expect(tds.hs.n != 0, 0) && tds_hs_find_slots(h[i]) >= 0) {
            return 0;
        }
    }
    return j == rn ? (int)rn : 0;
}

/* MPI_Waitall when only flat receives (tds_hset) can be ours (no request
 * entry, no MPI_Isendrecv, single-threaded: the flat entries' message
 * rate): no scan. The first of them the array holds is waited for as a
 * receive (the rank may turn passive meanwhile, the protocol kept going);
 * once it has arrived the rank is active for the rest of the call (tds_progress.h),
 * and MPI_Waitall waits for everything else, the program's own call.
 * The common case, a window of receives posted and then completed
 * together, finds them by walking the ring beside the array (ring_match:
 * no hashing); otherwise each handle leaves the set as it is counted.
 * One MPI_ERR_PENDING (not completed: MPI-3.1 §3.7.5) stays in the set. */
static int __attribute__((noinline)) waitall_flat(int count, MPI_Request *reqs, MPI_Status *user)
{
    MPI_Request *h = save_handles(count, reqs);
    MPI_Status *st = statuses_of(user);
    ring_hit hit[TDS_HS_RING];
    unsigned fl = tds.hs.flushes;
    /* (messages to classify: each its own tds_plain_done, not a batch) */
    int plain = tds.nohdr && !tds.core.on_recv && !tds.cf.classify;
    /* the array exactly the ring (a window of receives): no index to
     * keep; header-free, no cell to look at either (cells are made only
     * with a header, tds_fast_select) */
    int nr = 0, ident = 0;
    if (count > 0 && tds.hs.rn == (unsigned)count && !tds.hs.n &&
        !memcmp(h, tds.hs.rk, (size_t)count * sizeof *h)) { /* MPI_Request: a pointer or an integer */
        ident = 1;
        nr = count;
    }
    if (!ident)
        nr = ring_match(count, h, hit);
    int first = ident ? 0 : nr ? hit[0].i : -1;
    for (int i = 0; i < count && !nr && first < 0; i++)
        if (tds_hs_find(h[i]) >= 0)
            first = i;
    if (first >= 0) {
        int flag = 0;
        tds_wait w = tds_wait_begin(1);
        while (PMPI_Request_get_status(reqs[first], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag)
            tds_wait_step(&w);
    }
    int rc = PMPI_Waitall(count, reqs, st);
    tds_batch b;
    BATCH_INIT(b);
    if (nr && tds.hs.flushes == fl && tds.hs.rn >= (unsigned)nr) {
        /* the ring's first nr handles were the array's (nothing looked
         * in the set meanwhile): out of the ring, then counted */
        unsigned rest = tds.hs.rn - (unsigned)nr;
        if (ident && (rest || rc != MPI_SUCCESS || (!plain && tds.nohdr))) {
            /* not the common cases below (an error; receives posted
             * meanwhile, which a single-threaded program cannot; header-free
             * receives for an on_recv, which tds_fast_select makes none
             * of): the handles and cells as ring_match gives them, before
             * the ring moves */
            for (int i = 0; i < count; i++)
                hit[i] = (ring_hit){i, plain ? NULL : tds.hs.rv[i]};
            ident = 0;
        }
        if (rest) {
            memmove(tds.hs.rk, tds.hs.rk + nr, rest * sizeof *tds.hs.rk);
            memmove(tds.hs.rv, tds.hs.rv + nr, rest * sizeof *tds.hs.rv);
        }
        tds.hs.rn = rest;
        if (ident && !tds.nohdr) {
            /* the cells from the ring itself (nothing posts a flat receive
             * before they are read: rn is 0, rv as the window left it) */
            window_cells(count, st);
            return MPI_SUCCESS;
        }
        if (ident && plain) {
            /* the notification's envelope looked at only where it can be
             * a program's message (TDSHIM_NOTIFY=tag:N header-free) */
            int nenv = tds.nenv_tag, slow = 0;
            uint64_t bytes = 0;
            if (nenv < 0) {
                for (int i = 0; i < count; i++) {
                    if (__builtin_expect(tds_st_cancelled(&st[i]), 0)) {
                        tds_plain_done(&st[i]);
                        slow++;
                        continue;
                    }
                    bytes += tds_st_bytes(&st[i]);
                }
            } else {
                for (int i = 0; i < count; i++) {
                    if (__builtin_expect(tds_st_tag(&st[i]) == nenv || tds_st_cancelled(&st[i]), 0)) {
                        tds_plain_done(&st[i]);
                        slow++;
                        continue;
                    }
                    bytes += tds_st_bytes(&st[i]);
                }
            }
            if (count > slow)
                tds_plain_batch((uint64_t)(count - slow), bytes);
            return MPI_SUCCESS;
        }
        if (__builtin_expect(rc != MPI_SUCCESS, 0)) {
            tds_rx_rc(rc);
            for (int j = 0; j < nr; j++) {
                if (tds_st_error(&st[hit[j].i]) == MPI_ERR_PENDING)
                    tds_hs_add(h[hit[j].i], hit[j].v);
                else
                    tds_flat_done(hit[j].v, &st[hit[j].i]);
            }
            tds_rx_end(rc);
            return rc;
        }
        if (plain)
            for (int j = 0; j < nr; j++)
                batch_one(1, hit[j].v, &st[hit[j].i], &b);
        else
            for (int j = 0; j < nr; j++)
                batch_one(0, hit[j].v, &st[hit[j].i], &b);
        batch_end(plain, &b);
        return MPI_SUCCESS;
    }
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return waitall_flat_err(rc, count, h, st);
    /* every request completed: the flat receives among them counted
     * together (tds_recv_batch) */
    for (int i = 0; i < count; i++) {
        long s = tds_hs_find(h[i]);
        if (s < 0)
            continue;
        tds_cell *c = tds.hs.slot[s].v;
        tds_hs_drop(s);
        if (plain)
            batch_one(1, c, &st[i], &b);
        else
            batch_one(0, c, &st[i], &b);
    }
    batch_end(plain, &b);
    return MPI_SUCCESS;
}

int tds_body_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    int ours;
    if (!tds_rq_any() && !TDS_LOOP_WAITS())
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    if (!tds.rq_count && !tds.npairs && !TDS_LOOP_WAITS())
        return waitall_flat(count, array_of_requests, array_of_statuses);
    int recv = scan(count, array_of_requests, &ours);
    if (!ours && !TDS_LOOP_WAITS())
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    /* MPI writes the statuses (the program's own array when it gave one):
     * each library sets MPI_ERROR of its own accord here (Open MPI for
     * every request, MPICH 4.0 for the real ones only), and a field it
     * leaves must stay the program's, never come from tdshim's scratch
     * (issue 26: a stale MPI_ERROR reached the program under MPICH) */
    MPI_Status *st = statuses_of(array_of_statuses);
    int rc, all = 0;
    if ((!recv && !tds.npairs && !TDS_LOOP_WAITS()) ||
        /* everything done already (a program that completes what has
         * arrived): one call into MPI, not one per request, and no wait;
         * finished as after PMPI_Waitall, errors included (MPI reports
         * them with all requests complete). Otherwise MPI_Testall
         * modified no request (MPI-3.1 §3.7.5) and the loop below waits
         * for them (issue 28: ~45 instructions per received message).
         * Open MPI only: its Testall writes the statuses as its Waitall
         * does; MPICH 4.0's Testall sets MPI_ERROR on success, where its
         * Waitall leaves the program's value (tests/mpi/transparency.sh) */
        (TDS_TESTALL_AS_WAITALL && (rc = PMPI_Testall(count, array_of_requests, &all, st), all))) {
        if (!all)
            rc = PMPI_Waitall(count, array_of_requests, st);
        int errors = 0;
        tds_rx_rc(rc);
        for (int i = 0; i < count; i++) {
            complete_index(i, &st[i]);
            errors |= tds_recv_err_in(&st[i]); /* a signature error found at completion */
        }
        tds_rx_end(rc);
        return errors ? MPI_ERR_IN_STATUS : rc;
    }
    /* a loop that keeps the protocol going until every request is
     * complete, one request at a time as Open MPI's own wait_all does
     * (a Testall loop would rescan every request on each turn);
     * MPI_Request_get_status leaves the requests to the MPI_Waitall
     * below, which then only collects them. One wait for the whole
     * call (the passivity rule, tds_progress.h): after the last pending receive
     * (index recv - 1) only sends remain. The entries are looked up
     * again afterwards, by the handles: under MPI_THREAD_MULTIPLE the
     * loop lets other threads in, and one of them may finish an entry
     * this call found (MPICH gives every send that completes at once
     * one shared handle, tds_rq_insert_send) */
    MPI_Request *h = save_handles(count, array_of_requests);
    tds_wait w = tds_wait_begin(1);
    for (int i = 0; i < count; i++) {
        int flag = 0;
        if (i == recv)
            w.recv = 0;
        while (PMPI_Request_get_status(array_of_requests[i], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag)
            tds_wait_step(&w);
        /* A receive of ours arrived: the rank is active for the rest of
         * the call (the passivity rule, tds_progress.h), so the loop has nothing
         * left to do that MPI's own wait does not (single-threaded, no
         * MPI_Isendrecv for tdshim to complete): MPI_Waitall waits for
         * the rest, one call instead of one per request (issue 28: the
         * message rate's windows, whose messages arrive while the call
         * waits) */
        tds_rq *q = tds_t.rq_found[i];
        if (flag && !TDS_LOOP_WAITS() && !tds.npairs && (q == PLAIN || (q && q->kind == TDS_RQ_RECV && pending_recv(q))))
            break;
    }
    rc = PMPI_Waitall(count, array_of_requests, st);
    int errors = 0;
    tds_rx_rc(rc);
    for (int i = 0; i < count; i++) {
        complete_handle(h[i], &st[i]);
        errors |= tds_recv_err_in(&st[i]);
    }
    tds_rx_end(rc);
    return errors ? MPI_ERR_IN_STATUS : rc;
}

/*
 * The Test* family calls MPI first and looks up only the requests that
 * completed: a program polling a long array of requests (sends in flight,
 * say) would otherwise pay a table lookup per request on every poll. The
 * handles are saved before the call, since MPI sets those it frees to
 * MPI_REQUEST_NULL; a handle value cannot be reused in between, as no
 * request of the program is created inside the call. A finished entry
 * leaves the table, so a handle repeated in the array (several sends MPI
 * completed at once under one shared handle, tds_rq_insert_send) is
 * finished once. The requests are left untouched when nothing completed,
 * so the array is then scanned in place, and only under TDSHIM_IDLE=test,
 * the one notion that asks whether a receive was among them.
 */
/* a Test* call found nothing: a poll (kind 1) for the idle notion, in
 * scope (tds_poll_scope) if a receive among them could deliver work; the
 * set is scanned only where a notion asks (test, spin, measure mode's
 * candidates). A flat receive (PLAIN) keeps no tag: its value in the set
 * says whether it is in scope (TDS_OOS: out, flat_cls_Irecv; plain_scope,
 * missed_near), and none is taken while measure mode asks. */
/* the handle at i a receive in scope? The ring's end first, where a poll
 * of standing receives keeps them: find_one empties the ring into the
 * slots, and they would then not be found there when they complete
 * (tds_hs_near) */
static inline int missed_near(const MPI_Request *reqs, int i)
{
    long j;
    return reqs[i] != MPI_REQUEST_NULL && (j = tds_hs_near(reqs[i])) >= 0 && tds.hs.rv[j] != TDS_OOS;
}
static inline int missed_any(const MPI_Request *reqs, int i)
{
    tds_rq *q = find_one(reqs[i]);
    return q == PLAIN ? plain_scope(reqs[i]) : q && pending_recv(q) && rq_scope(q);
}
/* An empty Test* call: did its set hold a receive in scope (an idle poll
 * under test, spin and measure mode)? Any one answers yes, so the one
 * that answered at this thread's last call is asked again first: an idle
 * loop tests the same set over and over, and the scan of all (the ring's
 * end for each, then each entry: 186 instructions an empty MPI_Testany of
 * examples/work_steal's 3 receives, most of its poll besides MPI's) comes
 * down to one question (the ring's end, then the table: never the ring's
 * flush). Only where a handle sits is remembered: the question itself is
 * asked afresh, so a handle reused for another request gets its own
 * answer (a slot that held a receive in scope may hold one out of scope
 * now: tests/mpi/busymemo.sh), and a no sends the call through the whole
 * scan. */
static void test_missed(int n, const MPI_Request *reqs)
{
    int recv = 0;
    if (tds.cf.idle == TDS_IDLE_TEST || tds.cf.idle == TDS_IDLE_SPIN || tds.cf.notify == TDS_NOTIFY_NONE) {
        int m = tds_t.missed_at;
        tds_rq *q;
        if (m < n && (missed_near(reqs, m) ||
                      ((q = tds_rq_lookup(reqs[m])) && pending_recv(q) && rq_scope(q)))) { /* no flush */
            recv = 1;
        } else {
            /* a handle in the ring's end is answered there, in scope or
             * not: missed_any would find it in the ring and flush the ring
             * into the slots (tds_hs_find), after which every flat test
             * takes the general entry until a receive is posted again (an
             * idle loop whose receives are all out of scope, as
             * work_steal's after the notification: 1,676 of rank 0's 4,897
             * MPI_Testany calls in 200 phases) */
            for (int i = 0; i < n && !recv; i++) {
                long j;
                if (reqs[i] == MPI_REQUEST_NULL)
                    continue;
                if ((j = tds_hs_near(reqs[i])) >= 0)
                    recv = tds.hs.rv[j] != TDS_OOS;
                else
                    recv = missed_any(reqs, i);
                if (recv)
                    tds_t.missed_at = i;
            }
        }
    }
    tds_idle_poll(1, recv, 0);
}

/* A Test* call completed requests: it found something only if a primary
 * message or a notification arrived in it (tds_found_mark); sends that
 * completed, or messages on ignored tags (a "no work" reply), leave the
 * poll empty for the idle notion. */
static void polled(int n, const MPI_Request *reqs, uint64_t m0)
{
    if (tds_found_mark() != m0)
        tds_idle_poll(1, 0, 1);
    else
        test_missed(n, reqs);
}

int tds_body_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    tds_poll_enter();
    if (!tds_rq_any())
        return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    MPI_Request *h = save_handles(count, array_of_requests);
    MPI_Status *st = statuses_of(array_of_statuses);
    uint64_t m0 = tds_found_mark();
    int rc = PMPI_Testall(count, array_of_requests, flag, st);
    if (!*flag) {
        test_missed(count, array_of_requests);
        return rc;
    }
    int errors = 0;
    tds_rx_rc(rc);
    for (int i = 0; i < count; i++) {
        complete_handle(h[i], &st[i]);
        errors |= tds_recv_err_in(&st[i]);
    }
    tds_rx_end(rc);
    polled(count, array_of_requests, m0);
    return errors ? MPI_ERR_IN_STATUS : rc;
}

/* Open MPI 4.1 (ompi_errhandler_request_invoke): an MPI_Testany or
 * MPI_Waitany that returns one request's error also frees every other
 * request of the array that completed in error, and reports none of them
 * (docs/user-guide.md, "MPI libraries"; natively too). h: the handles
 * before the call, reqs after it, index the one reported. tdshim's entry
 * of such a request would stay for ever: a handle MPI later reuses for
 * another request could find it (a flat receive's cell taken for another
 * one's: the other's data never copied out), and its message would wait
 * to be counted. Each is taken out of tdshim's sets and its cell or entry
 * freed. Its message is not counted: its status is gone, so whether it
 * was primary, and from whom, is not known, and a count too high could
 * announce while a message is in transit (too low never announces: the
 * report shows it unreceived). Warned once. */
static void __attribute__((noinline, cold)) lost_others(int count, const MPI_Request *reqs, const MPI_Request *h,
                                                        int index)
{
    int n = 0;
    for (int i = 0; i < count; i++) {
        if (i == index || h[i] == MPI_REQUEST_NULL || reqs[i] != MPI_REQUEST_NULL)
            continue;
        tds_cell *fc;
        if (tds_hs_take(h[i], &fc)) {
            if (fc && fc != TDS_OOS) {
                fc->next = tds.cells;
                tds.cells = fc;
            }
            n++;
        } else if (tds_rq_lookup(h[i])) {
            tds_rq_purge(h[i]); /* test_busy's memo: an entry out of the table is never taken */
            n++;
        }
    }
    if (n && !tds.warned_lost) {
        tds.warned_lost = 1;
        fprintf(stderr,
                "tdshim: rank %d: the MPI library freed %d request(s) done in error without reporting them "
                "(Open MPI 4.1's MPI_Testany/MPI_Waitany after a request's error); their messages are not "
                "counted and detection may not complete; warned once\n",
                tds.rank, n);
    }
}
static inline void lost_check(int rc, int count, const MPI_Request *reqs, const MPI_Request *h, int index)
{
    if (__builtin_expect(rc != MPI_SUCCESS, 0) && count > 1)
        lost_others(count, reqs, h, index);
}

int tds_body_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    int ours;
    if (!tds_rq_any() && !TDS_LOOP_WAITS())
        return PMPI_Waitany(count, array_of_requests, index, status);
    int recv = scan(count, array_of_requests, &ours);
    if (!ours && !TDS_LOOP_WAITS())
        return PMPI_Waitany(count, array_of_requests, index, status);
    MPI_Status st;
    tds_status_seed(&st, status);
    int rc, flag = 0;
    tds_wait w = tds_wait_begin(recv != 0);
    while ((rc = PMPI_Testany(count, array_of_requests, index, &flag, &st)) == MPI_SUCCESS && !flag)
        tds_wait_step(&w);
    if (flag && *index != MPI_UNDEFINED) {
        tds_rx_rc(rc);
        complete_index(*index, &st);
        tds_rx_end(rc);
        lost_check(rc, count, array_of_requests, tds_t.rq_saved, *index);
        rc = tds_recv_err(rc);
    }
    tds_status_out(status, &st);
    return rc;
}

/* MPI_Testany after MPI's call, which wrote the status to st (h: the
 * handles before it), the general entry's work and the flat one's where
 * its common case does not hold (tds_flat.c, tds_ftestany_rest) */
static inline int testany_after(int rc, int count, const MPI_Request *reqs, const MPI_Request *h, int index,
                                int flag, MPI_Status *st, uint64_t m0)
{
    if (flag && index != MPI_UNDEFINED) {
        tds_rx_rc(rc);
        complete_handle_near(h[index], st);
        tds_rx_end(rc);
        lost_check(rc, count, reqs, h, index);
        rc = tds_recv_err(rc);
        tds_found_tag(st);
    }
    polled(count, reqs, m0);
    return rc;
}

int tds_body_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
    tds_poll_enter();
    if (!tds_rq_any())
        return PMPI_Testany(count, array_of_requests, index, flag, status);
    MPI_Request *h = save_handles(count, array_of_requests);
    MPI_Status st;
    tds_status_seed(&st, status);
    uint64_t m0 = tds_found_mark();
    int rc = PMPI_Testany(count, array_of_requests, index, flag, &st);
    rc = testany_after(rc, count, array_of_requests, h, *index, *flag, &st, m0);
    if (status != MPI_STATUS_IGNORE && *flag)
        tds_status_out(status, &st);
    return rc;
}

/* the flat MPI_Testany's and MPI_Testsome's work after MPI's call where
 * their common case does not hold (tds_flat.c): the general entries',
 * under the re-entry guard, with what they saved in tds.ftest. Nothing
 * in MPI's call entered tdshim, so the found mark taken now is the one
 * before it. */
int tds_ftestany_rest(int rc)
{
    const struct tds_ftest *a = &tds.ftest;
    tds_inside = 1;
    rc = testany_after(rc, a->n, a->reqs, a->hv, *a->index, *a->flag, a->st, tds_found_mark());
    tds_inside = 0;
    return rc;
}

/* 1 if a receive among them got an error (tds_recv_err_in) */
static int complete_some(int outcount, const int *indices, MPI_Status *st, MPI_Status *user)
{
    int errors = 0;
    if (outcount == MPI_UNDEFINED)
        return 0;
    for (int k = 0; k < outcount; k++) {
        complete_index(indices[k], &st[k]);
        errors |= tds_recv_err_in(&st[k]);
    }
    if (user != MPI_STATUSES_IGNORE && user != st)
        memcpy(user, st, (size_t)outcount * sizeof *st);
    return errors;
}

int tds_body_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                      MPI_Status array_of_statuses[])
{
    int ours;
    if (!tds_rq_any() && !TDS_LOOP_WAITS())
        return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    int recv = scan(incount, array_of_requests, &ours);
    if (!ours && !TDS_LOOP_WAITS())
        return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    MPI_Status *st = statuses_of(array_of_statuses);
    int rc;
    tds_wait w = tds_wait_begin(recv != 0);
    while ((rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, st)) == MPI_SUCCESS &&
           *outcount == 0)
        tds_wait_step(&w);
    tds_rx_rc(rc);
    int errors = complete_some(*outcount, array_of_indices, st, array_of_statuses);
    tds_rx_end(rc);
    return errors ? MPI_ERR_IN_STATUS : rc;
}

/* MPI_Testsome after MPI's call (as testany_after): n done, their
 * statuses in st */
static inline int testsome_after(int rc, int incount, const MPI_Request *reqs, const MPI_Request *h, int n,
                                 const int *indices, MPI_Status *st, uint64_t m0)
{
    if (n == 0 || n == MPI_UNDEFINED) {
        test_missed(incount, reqs);
        return rc;
    }
    int errors = 0;
    /* the last first, near the ring's end (complete_handle_near): a poll
     * that reposts its receives in array order finds each the ring's last */
    tds_rx_rc(rc);
    for (int k = n; k-- > 0;) {
        complete_handle_near(h[indices[k]], &st[k]);
        errors |= tds_recv_err_in(&st[k]);
    }
    tds_rx_end(rc);
    tds_found_tag(&st[n - 1]);
    polled(incount, reqs, m0);
    return errors ? MPI_ERR_IN_STATUS : rc;
}

int tds_body_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                      MPI_Status array_of_statuses[])
{
    tds_poll_enter();
    if (!tds_rq_any())
        return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    MPI_Request *h = save_handles(incount, array_of_requests);
    MPI_Status *st = statuses_of(array_of_statuses);
    uint64_t m0 = tds_found_mark();
    int rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, st);
    return testsome_after(rc, incount, array_of_requests, h, *outcount, array_of_indices, st, m0);
}

/* a flat MPI_Testany's or MPI_Testsome's poll whose requests done (its
 * receives finished, under the guard) brought nothing: as the general
 * entries' (polled) */
int tds_ftest_missed(int rc)
{
    test_missed(tds.ftest.n, tds.ftest.reqs);
    return rc;
}

int tds_ftestsome_rest(int rc)
{
    const struct tds_ftest *a = &tds.ftest;
    tds_inside = 1;
    rc = testsome_after(rc, a->n, a->reqs, a->hv, *a->outcount, a->index, a->st, tds_found_mark());
    tds_inside = 0;
    return rc;
}

int tds_body_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    tds_poll_enter();
    tds_rq *q = tds_rq_find(request);
    if (!q)
        return PMPI_Request_get_status(request, flag, status);
    MPI_Status st;
    tds_status_seed(&st, status);
    uint64_t m0 = tds_found_mark();
    int rc = PMPI_Request_get_status(request, flag, &st);
    if (*flag) {
        tds_rx_rc(rc);
        tds_finish_early(q, &st);
        tds_rx_end(rc);
        rc = tds_recv_err(rc);
    }
    tds_status_out(status, &st);
    tds_idle_poll(1, q->kind != TDS_RQ_SEND && rq_scope(q), tds_found_mark() != m0);
    return rc;
}

/* An active request the program frees still completes (its buffer gets the
 * data): tdshim keeps the MPI request as an orphan and finishes it at the
 * next completion call, probe, turn of a waiting loop or collective (its
 * data is in the program's buffer then, as natively once a later message
 * from the same sender has been received: tests/mpi/sigmatch.sh), so the
 * message is still counted. */
int tds_body_Request_free(MPI_Request *request)
{
    tds_rq *q = tds_rq_find(*request);
    if (!q)
        return PMPI_Request_free(request);
    tds_rq_remove(q->req);
    if (q->persistent && !q->active) {
        if (q->part)
            tds_part_free(q);
        tds_rq_release(q);
        return PMPI_Request_free(request);
    }
    q->next = tds.orphans;
    tds.orphans = q;
    tds.nheld++;
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

void tds_reap_orphans(void)
{
    for (tds_rq **p = &tds.orphans; *p;) {
        tds_rq *q = *p;
        MPI_Status st;
        int done = 0;
        PMPI_Test(&q->req, &done, &st);
        if (!done) {
            p = &q->next;
            continue;
        }
        *p = q->next;
        tds.nheld--;
        if (q->sendmode == TDS_SEND_DETACHED) {
            tds.ndetached--;
            tds.detached_bytes -= q->ubytes;
        }
        if (q->kind == TDS_RQ_RECV)
            tds_finish_early(q, &st);
        tds_recv_err(0); /* the program freed it: no one to tell, as natively */
        if (q->persistent)
            PMPI_Request_free(&q->req);
        if (q->part)
            tds_part_free(q);
        tds_rq_release(q);
    }
}

/* A cancelled receive is not counted: the completion call sees the
 * cancelled status (tds_complete). */
int tds_body_Cancel(MPI_Request *request)
{
    return PMPI_Cancel(request);
}
