/*
 * Sends (tds_send.h): the blocking, nonblocking and persistent sends of
 * every mode, their header and layout, and MPI_Buffer_attach/detach.
 */
#include "tds_send.h"
#include "tds_complete.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The blocking send of a message with its header. Under
 * MPI_THREAD_MULTIPLE it is the nonblocking form completed by a loop that
 * lets the other threads in (tds_mt.c) and keeps answering control
 * messages. */
int __attribute__((noinline)) tds_send_wire_loop(int mode, const void *b, int n, MPI_Datatype t, int dest,
                                                 int tag, MPI_Comm comm)
{
    MPI_Request r;
    int rc = (*nb_send[mode])(b, n, t, dest, tag, comm, &r), done = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    tds_wait w = tds_wait_begin(0);
    while ((rc = PMPI_Test(&r, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done)
        tds_wait_step(&w);
    return rc;
}

/* Header-free: the program's message as it wrote it, counted (the
 * algorithm piggybacks nothing). No request entry: the send has no buffer
 * of tdshim's to keep. */
void __attribute__((noinline)) tds_count_nohdr(int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    double t0 = tds_tstart();
    int tsize;
    uint8_t plain, hdr[TDS_HDR_MAX];
    make_header(hdr, dest, tag, comm, type_bytes(count, type, &tsize, &plain));
    double dt = tds_tstop(TDR_CAT_SEND, t0);
    if (__builtin_expect(tds.m.sites != NULL, 0))
        tdr_site_record(&tds.m, TDR_SITE_SEND, dt);
}

/* ---------------------------------------------------------------- sends */

/* A message to another job, or to no rank at all (MPI's error), with a
 * header: it goes as the program wrote it, counted apart (tds_xjob_sent).
 * req NULL: blocking (through send_wire, which keeps answering control
 * messages where an algorithm needs it). */
int __attribute__((noinline, cold)) tds_send_as_written(int mode, const void *buf, int count, MPI_Datatype type,
                                                        int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    if (tds_comm_foreign(comm)) {
        int tsize;
        uint8_t plain;
        tds_xjob_sent(type_bytes(count, type, &tsize, &plain));
    }
    if (!req)
        return send_wire(mode, buf, count, type, dest, tag, comm);
    return (*nb_send[mode])(buf, count, type, dest, tag, comm, req);
}


/* ------------------------------------------------------- eager sends */

/* A standard send completes before its receive is posted when MPI sends it
 * eagerly, and programs rely on that: a send-send exchange (each rank
 * MPI_Sends to the other, then receives) is correct only because of it,
 * yet common. tdshim's header lengthens the message, so one of a size just
 * within an eager limit crosses it, goes by rendezvous, and the exchange
 * deadlocks where it finished natively (tests/mpi/eagerx.sh: Open MPI 4.1's
 * send-send of 4,039 bytes over shared memory, or a send of 967 to the rank
 * itself, under any header). A header must not change when a send
 * completes (a pitfall of the piggyback beside those DESIGN.md §4 lists;
 * docs/internals.md, "Eager sends"): such a send goes out
 * from a bounce buffer of its own with MPI_Isend and returns at once, as it
 * would natively. MPI_Isend returns an already complete request of MPI's
 * (to MPI_PROC_NULL) to the program; MPI_Send_init a persistent one, and
 * each MPI_Start of it sends so (tds_send_start). The real request becomes an orphan
 * (tds_reap_orphans): the next completion call, probe or waiting turn
 * finishes it, and MPI_Finalize waits for the rest (eager_finish in tds_init.c).
 *
 * Which sizes: not every MPI tells its limits. Open MPI's BTLs publish
 * theirs as MCA variables (also MPI_T's; eager_init in tds_init.c), counting the PML's header in
 * (56 bytes in ob1: vader's 4,096 leave 4,040 of data); MPICH over UCX
 * publishes none (8,255 bytes to a peer, 8,191 to itself, measured by
 * eagerx limits). So a send is taken for one that may have been eager if
 * its data is within TDS_EAGER_NEAR bytes of a published limit or of a
 * power of two from 1 KiB to 16 KiB, and its data and header would reach
 * within that distance below it. No higher: UCX's limits are 8-16 KiB, the
 * higher ones (Open MPI's TCP, 64 KiB; MPICH's ch3, 128 KiB) are published,
 * and a copy of a power-of-two message of 1 MiB, a benchmark's favourite
 * size, would cost it as much as its transfer. A standard send may always return before
 * its receive is posted (MPI-4.0 §3.4), so a size taken wrongly costs a copy
 * and an MPI_Isend, never correctness. Up to TDS_DETACH_MAX bytes are held
 * so; past that, sends block as MPI sends them. */
#define TDS_EAGER_NEAR 128
#define TDS_DETACH_MAX ((size_t)64 << 20)
#define TDS_POW_MIN ((size_t)1 << 10)
#define TDS_POW_MAX ((size_t)1 << 14)

/* the least size tds_eager_near may take (tds.eager_lo is one less) */
size_t tds_eager_floor(void)
{
    size_t e = TDS_POW_MIN;
    for (int i = 0; i < tds.neager; i++)
        if (tds.eager_lim[i] < e)
            e = tds.eager_lim[i];
    size_t below = TDS_EAGER_NEAR + (size_t)tds.hdr_len;
    return e > below ? e - below + 1 : 1;
}

int __attribute__((noinline)) tds_eager_near(size_t ub)
{
    /* a limit E with ub <= E + NEAR and ub + hdr_len > E - NEAR */
    size_t lo = ub > TDS_EAGER_NEAR ? ub - TDS_EAGER_NEAR : 1, hi = ub + (size_t)tds.hdr_len + TDS_EAGER_NEAR;
    size_t p = lo <= TDS_POW_MIN ? TDS_POW_MIN : (size_t)1 << (64 - __builtin_clzll((unsigned long long)(lo - 1)));
    if (p <= TDS_POW_MAX && p < hi)
        return 1;
    for (int i = 0; i < tds.neager; i++)
        if (tds.eager_lim[i] >= lo && tds.eager_lim[i] < hi)
            return 1;
    return 0;
}

/* A standard send of tds_eager_near's sizes (req NULL: MPI_Send, or the
 * Start of a persistent one, which must not decline). Returns -1, having
 * done nothing, when TDS_DETACH_MAX bytes are held already. */
int __attribute__((noinline)) tds_send_eager(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                                             MPI_Comm comm, MPI_Request *req, size_t ub, uint8_t plain, double t0,
                                             int must)
{
    if (tds.ndetached && (tds.detached_bytes + ub > TDS_DETACH_MAX || tds.ndetached >= tds.detach_reap)) {
        tds_reap_orphans();
        /* a sender far ahead of its receivers reaps at doubling counts */
        tds.detach_reap = tds.ndetached < 8 ? 16 : 2 * tds.ndetached;
        if (tds.detached_bytes + ub > TDS_DETACH_MAX && !must)
            return -1;
    }
    tds_rq *q = tds_rq_new();
    q->kind = TDS_RQ_SEND;
    q->copy = 1;
    q->plain = plain;
    q->ubytes = ub;
    make_header(q->hdr, dest, tag, comm, ub);
    uint8_t *b = rq_bounce(q, TDS_HDR_MAX + ub);
    int n = pack_into(b, q->hdr, buf, count, type, ub, comm, plain);
    double paused = tds_tpause(t0);
    int rc = tds_real_Isend(b, n, MPI_BYTE, dest, tag, comm, &q->req), done = 0;
    if (rc == MPI_SUCCESS && !DONE_AT_ONCE(q->req))
        rc = PMPI_Test(&q->req, &done, MPI_STATUS_IGNORE);
    else
        done = 1;
    t0 = tds_tresume(t0, paused);
    if (rc != MPI_SUCCESS || done) {
        tds_rq_release(q);
    } else {
        q->active = 1;
        q->sendmode = TDS_SEND_DETACHED;
        q->next = tds.orphans;
        tds.orphans = q;
        tds.nheld++;
        tds.ndetached++;
        tds.detached_bytes += ub;
        tds.m.eager_detached++;
    }
    if (rc == MPI_SUCCESS && req)
        rc = tds_real_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, tag, comm, req);
    double dt = tds_tstop(TDR_CAT_SEND, t0);
    if (tds.m.sites)
        tdr_site_record(&tds.m, TDR_SITE_SEND, dt);
    return rc;
}

/* the general blocking send (send_fast declined) */
int __attribute__((noinline)) tds_send_blocking(int mode, const void *buf, int count, MPI_Datatype type,
                                                int dest, int tag, MPI_Comm comm)
{
    if (dest == MPI_PROC_NULL || tds_dtnull_refused(type, 0))
        return (*blocking_send[mode])(buf, count, type, dest, tag, comm);
    if (__builtin_expect(tds_wrank(comm, dest) < 0, 0))
        return tds_send_as_written(mode, buf, count, type, dest, tag, comm, NULL);
    double t0 = tds_tstart();
    int tsize, rc;
    uint8_t plain;
    size_t ub = type_bytes(count, type, &tsize, &plain);
    if (__builtin_expect(ub > TDS_WIRE_MAX, 0) && send_copies(buf, ub, plain)) {
        /* a bounce buffer of its own (tds_send_post), not the scratch buffer,
         * which is kept; the send's own completion call (not passive) */
        MPI_Request r;
        tds_tstop(TDR_CAT_SEND, t0);
        rc = tds_send_post(mode, 0, buf, count, type, dest, tag, comm, &r);
        return rc == MPI_SUCCESS ? tds_body_Wait(&r, MPI_STATUS_IGNORE) : rc;
    }
    if (mode == MODE_STD && ub > tds.eager_lo && tds_eager_near(ub) &&
        (rc = tds_send_eager(buf, count, type, dest, tag, comm, NULL, ub, plain, t0, 0)) >= 0)
        return rc;
    uint8_t hdr[TDS_HDR_MAX];
    make_header(hdr, dest, tag, comm, ub);
    double dt;
    if (send_copies(buf, ub, plain)) {
        uint8_t *b = tds_scratch(TDS_HDR_MAX + ub);
        int n = pack_into(b, hdr, buf, count, type, ub, comm, plain);
        dt = tds_tstop(TDR_CAT_SEND, t0);
        rc = send_wire(mode, b, n, MPI_BYTE, dest, tag, comm);
    } else {
        MPI_Datatype t = tds_wire_type(hdr, buf, count, type);
        dt = tds_tstop(TDR_CAT_SEND, t0);
        rc = send_wire(mode, MPI_BOTTOM, 1, t, dest, tag, comm);
        PMPI_Type_free(&t);
    }
    if (tds.m.sites)
        tdr_site_record(&tds.m, TDR_SITE_SEND, dt);
    return rc;
}

/* A nonblocking send in the copy layout still in flight: its entry takes
 * the scratch buffer over (swapped with the entry's old bounce buffer, no
 * copy and no allocation after warm-up). */
void tds_send_keep(tds_rq *q, MPI_Request r, size_t ub)
{
    void *old = q->bounce;
    size_t oldcap = q->bounce_cap;
    q->bounce = tds_t.scratch;
    q->bounce_cap = tds_t.scratch_cap;
    tds_t.scratch = old;
    tds_t.scratch_cap = oldcap;
    q->kind = TDS_RQ_SEND;
    q->copy = 1;
    q->plain = 1;
    q->ubytes = ub;
    q->req = r;
    q->active = 1;
    if (!tds_rq_insert_send(q))
        tds_rq_release(q); /* complete already, under a shared handle */
}

/* Nonblocking send in the copy layout: packed into the scratch buffer and
 * posted; only a send still in flight gets an entry, which then takes the
 * scratch buffer over (swapped with the entry's old bounce buffer, no copy
 * and no allocation after warm-up). */
static inline __attribute__((always_inline)) int send_post_copy(int mode, const void *buf, int count,
                                                                MPI_Datatype type, int dest, int tag,
                                                                MPI_Comm comm, MPI_Request *req, size_t ub,
                                                                uint8_t plain, double t0)
{
    uint8_t hdr[TDS_HDR_MAX];
    make_header(hdr, dest, tag, comm, ub);
    uint8_t *b = tds_scratch(TDS_HDR_MAX + ub);
    int n = pack_into(b, hdr, buf, count, type, ub, comm, plain);
    MPI_Request r;
    double paused = tds_tpause(t0);
    int rc = (*nb_send[mode])(b, n, MPI_BYTE, dest, tag, comm, &r);
    t0 = tds_tresume(t0, paused);
    if (rc != MPI_SUCCESS)
        return rc;
    *req = r;
    if (!DONE_AT_ONCE(r))
        tds_send_keep(tds_rq_new(), r, ub);
    double dt = tds_tstop(TDR_CAT_SEND, t0);
    if (tds.m.sites)
        tdr_site_record(&tds.m, TDR_SITE_SEND, dt);
    return MPI_SUCCESS;
}

/* post a send (persistent: create it) and enter it in the request table */
int __attribute__((noinline)) tds_send_post(int mode, int persistent, const void *buf, int count,
                                            MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    int rc;
    if (dest == MPI_PROC_NULL || tds_dtnull_refused(type, 0))
        return (*(persistent ? persistent_send : nb_send)[mode])(buf, count, type, dest, tag, comm, req);
    int foreign = tds_wrank(comm, dest) < 0;
    if (__builtin_expect(foreign && !persistent, 0))
        return tds_send_as_written(mode, buf, count, type, dest, tag, comm, req);
    double t0 = tds_tstart();
    if (!persistent) {
        int tsize;
        uint8_t plain;
        size_t ub = type_bytes(count, type, &tsize, &plain);
        if (mode == MODE_STD && ub > tds.eager_lo && tds_eager_near(ub) &&
            (rc = tds_send_eager(buf, count, type, dest, tag, comm, req, ub, plain, t0, 0)) >= 0)
            return rc;
        if (ub <= TDS_WIRE_MAX && send_copies(buf, ub, plain))
            return send_post_copy(mode, buf, count, type, dest, tag, comm, req, ub, plain, t0);
    }
    tds_rq *q = tds_rq_new();
    q->kind = TDS_RQ_SEND;
    q->persistent = (uint8_t)persistent;
    if (persistent) { /* what every Start re-packs (tds_send_start) */
        q->buf = (void *)buf;
        q->count = count;
        q->type = type;
        q->peer = dest;
        q->tag = tag;
        q->comm = comm;
        q->sendmode = mode;
    }
    q->ubytes = type_bytes(count, type, &q->tsize, &q->plain);
    /* persistent: each Start counts it (tds_send_start), decided now (the
     * program may free the communicator before it starts the request) */
    q->foreign = !foreign ? 0 : tds_comm_foreign(comm) ? 1 : 2;
    q->copy = !tds.nohdr && !foreign && send_copies(buf, q->ubytes, q->plain);
    if (__builtin_expect(persistent && mode == MODE_STD && !foreign && !tds.nohdr && q->ubytes > tds.eager_lo, 0) &&
        tds_eager_near(q->ubytes)) {
        /* every Start sends by tds_send_eager (tds_send_start); the program
         * holds a persistent send to MPI_PROC_NULL, complete at every Start */
        q->sendmode = TDS_SEND_EAGER_START;
        if (!q->plain && q->ubytes) {
            PMPI_Type_dup(type, &q->type);
            q->owns_type |= TDS_OWN_TYPE;
        }
        rc = tds_real_Send_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, tag, comm, &q->req);
        if (rc != MPI_SUCCESS) {
            tds_rq_release(q);
            return rc;
        }
        *req = q->req;
        tds_rq_insert(q);
        tds_tstop(TDR_CAT_SEND, t0);
        return MPI_SUCCESS;
    }
    MPI_Datatype big = MPI_DATATYPE_NULL;
    if (__builtin_expect(q->copy && q->ubytes > TDS_WIRE_MAX, 0)) {
        /* its bounce buffer goes with it (TDS_OWN_BIG) */
        q->cmap = NULL;
        q->owns_type = 0;
        tds_big_bounce(q, TDS_HDR_MAX + q->ubytes);
        big = tds_big_type((MPI_Count)(tds.hdr_len + q->ubytes), MPI_BYTE);
    }
    if (persistent && q->copy && !q->plain && q->ubytes) {
        /* every Start packs in the program's type, which the program may
         * free after this call (MPI allows it; MPICH 4.0 aborted in
         * MPI_Pack, issue 42): a duplicate of tdshim's, freed with q */
        PMPI_Type_dup(type, &q->type);
        q->owns_type |= TDS_OWN_TYPE;
    }
    if (!persistent) /* persistent: at every Start */
        make_header(q->hdr, dest, tag, comm, q->ubytes);
    if (tds.nohdr || foreign) { /* only persistent sends come here so; Start counts them */
        double paused = tds_tpause(t0);
        rc = (*persistent_send[mode])(buf, count, type, dest, tag, comm, &q->req);
        t0 = tds_tresume(t0, paused);
    } else if (__builtin_expect(big != MPI_DATATYPE_NULL, 0)) {
        uint8_t *b = rq_bounce(q, TDS_HDR_MAX + q->ubytes);
        if (!persistent)
            tds_pack_big(b, q->hdr, buf, count, type, q->ubytes, q->plain);
        double paused = tds_tpause(t0);
        rc = (*(persistent ? persistent_send : nb_send)[mode])(b, 1, big, dest, tag, comm, &q->req);
        t0 = tds_tresume(t0, paused);
        PMPI_Type_free(&big);
    } else if (q->copy) {
        uint8_t *b = rq_bounce(q, TDS_HDR_MAX + q->ubytes);
        int n = persistent ? (int)(tds.hdr_len + q->ubytes)
                           : pack_into(b, q->hdr, buf, count, type, q->ubytes, comm, q->plain);
        double paused = tds_tpause(t0);
        rc = (*(persistent ? persistent_send : nb_send)[mode])(b, n, MPI_BYTE, dest, tag, comm, &q->req);
        t0 = tds_tresume(t0, paused);
    } else {
        MPI_Datatype t = tds_wire_type(q->hdr, buf, count, type);
        double paused = tds_tpause(t0);
        rc = (*(persistent ? persistent_send : nb_send)[mode])(MPI_BOTTOM, 1, t, dest, tag, comm, &q->req);
        t0 = tds_tresume(t0, paused);
        PMPI_Type_free(&t);
    }
    if (rc != MPI_SUCCESS) {
        tds_rq_release(q);
        return rc;
    }
    q->active = !persistent;
    *req = q->req;
    if (persistent)
        tds_rq_insert(q);
    else if (!tds_rq_insert_send(q))
        tds_rq_release(q); /* complete already, under a shared handle */
    double dt = tds_tstop(TDR_CAT_SEND, t0);
    if (tds.m.sites && !persistent)
        tdr_site_record(&tds.m, TDR_SITE_SEND, dt);
    return MPI_SUCCESS;
}

/* MPI_Start of a persistent send: a new message, so a new header */
void tds_send_start(tds_rq *q)
{
    if (__builtin_expect(q->foreign, 0)) { /* as written; 2: no such rank */
        if (q->foreign == 1)
            tds_xjob_sent(q->ubytes);
        q->active = 1;
        return;
    }
    if (__builtin_expect(q->sendmode == TDS_SEND_EAGER_START, 0)) {
        tds_send_eager(q->buf, q->count, q->type, q->peer, q->tag, q->comm, NULL, q->ubytes, q->plain, tds_tstart(), 1);
        q->active = 1;
        return;
    }
    make_header(q->hdr, q->peer, q->tag, q->comm, q->ubytes);
    if (__builtin_expect(q->owns_type & TDS_OWN_BIG, 0))
        tds_pack_big(q->bounce, q->hdr, q->buf, q->count, q->type, q->ubytes, q->plain);
    else if (q->copy)
        pack_into(q->bounce, q->hdr, q->buf, q->count, q->type, q->ubytes, q->comm, q->plain);
    q->active = 1;
}

/* Each entry point tries send_fast inline (the mode a constant, the PMPI
 * call a direct one) and hands anything else to the general path; a
 * header-free job takes send_nohdr instead. The entry point itself only
 * chooses, so both of its paths are sibling calls (a jump, no frame of
 * its own: its prologue cost as much as the header-free send's work). */
#define SEND_PATHS(Name, mode, bparam)                                                                            \
    static int __attribute__((noinline)) nohdr_##Name(const void *bparam, int count, MPI_Datatype datatype,       \
                                                      int dest, int tag, MPI_Comm comm)                            \
    {                                                                                                             \
        return send_nohdr(mode, bparam, count, datatype, dest, tag, comm, NULL);                                  \
    }                                                                                                             \
    static int __attribute__((noinline)) hdr_##Name(const void *bparam, int count, MPI_Datatype datatype,         \
                                                    int dest, int tag, MPI_Comm comm)                              \
    {                                                                                                             \
        int rc;                                                                                                   \
        if (!send_fast(mode, bparam, count, datatype, dest, tag, comm, NULL, &rc))                                \
            rc = tds_send_blocking(mode, bparam, count, datatype, dest, tag, comm);                               \
        tds_after_body(); /* an on_send's request (td_ctx.want_poll) */                                          \
        return rc;                                                                                                \
    }                                                                                                             \
    int tds_body_##Name(const void *bparam, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)   \
    {                                                                                                             \
        if (tds.nohdr)                                                                                            \
            return nohdr_##Name(bparam, count, datatype, dest, tag, comm);                                        \
        return hdr_##Name(bparam, count, datatype, dest, tag, comm);                                              \
    }
#define ISEND_PATHS(IName, mode)                                                                                  \
    static int __attribute__((noinline)) nohdr_##IName(const void *buf, int count, MPI_Datatype datatype,         \
                                                       int dest, int tag, MPI_Comm comm, MPI_Request *request)    \
    {                                                                                                             \
        return send_nohdr(mode, buf, count, datatype, dest, tag, comm, request);                                  \
    }                                                                                                             \
    static int __attribute__((noinline)) hdr_##IName(const void *buf, int count, MPI_Datatype datatype,           \
                                                     int dest, int tag, MPI_Comm comm, MPI_Request *request)      \
    {                                                                                                             \
        int rc;                                                                                                   \
        if (!send_fast(mode, buf, count, datatype, dest, tag, comm, request, &rc))                                \
            rc = tds_send_post(mode, 0, buf, count, datatype, dest, tag, comm, request);                          \
        tds_after_body();                                                                                         \
        return rc;                                                                                                \
    }                                                                                                             \
    int tds_body_##IName(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,     \
                         MPI_Request *request)                                                                    \
    {                                                                                                             \
        if (tds.nohdr)                                                                                            \
            return nohdr_##IName(buf, count, datatype, dest, tag, comm, request);                                 \
        return hdr_##IName(buf, count, datatype, dest, tag, comm, request);                                       \
    }
#define SEND_BODIES(Name, IName, mode)                                                                            \
    SEND_PATHS(Name, mode, buf)                                                                                   \
    ISEND_PATHS(IName, mode)                                                                                      \
    int tds_body_##Name##_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,              \
                               MPI_Comm comm, MPI_Request *request)                                               \
    {                                                                                                             \
        return tds_send_post(mode, 1, buf, count, datatype, dest, tag, comm, request);                            \
    }

SEND_BODIES(Send, Isend, MODE_STD)
SEND_BODIES(Bsend, Ibsend, MODE_B)
SEND_BODIES(Ssend, Issend, MODE_S)
/* Rsend's prototype names its buffer ibuf in Open MPI's mpi.h */
SEND_PATHS(Rsend, MODE_R, ibuf)
ISEND_PATHS(Irsend, MODE_R)
int tds_body_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                        MPI_Request *request)
{
    return tds_send_post(MODE_R, 1, buf, count, datatype, dest, tag, comm, request);
}

/* Buffered sends carry tds.hdr_len more bytes than the program sized its
 * buffer for; attach a larger buffer instead, with room for one header per
 * message that can possibly fit (each needs at least MPI_BSEND_OVERHEAD). */
/* the next layer's attach of n bytes: the MPI-4.0 form when the program
 * called it or an int cannot say n (only where the library has it:
 * buffer_attach) */
static int attach(void *buffer, MPI_Count n, int large)
{
    if (large || n > INT_MAX)
        return PMPI_Buffer_attach_c(buffer, n);
    return PMPI_Buffer_attach(buffer, (int)n);
}

/* MPI_Buffer_attach and MPI_Buffer_attach_c (large) */
static int buffer_attach(void *buffer, MPI_Count size, int large)
{
    if (tds.bsend_ours || tds.nohdr || size < 0) /* MPI's own error: already attached; header-free: no extra bytes */
        return attach(buffer, size, large);
    size_t extra = ((size_t)size / MPI_BSEND_OVERHEAD + 1) * (size_t)(tds.hdr_len + 16);
    /* an int-sized buffer that the headers take over INT_MAX: MPI-4.0's
     * form where the library has it, else the program's buffer as it is */
    int fits = (size_t)size + extra <= INT_MAX || large || tds_real_Buffer_attach_c;
    void *ours = fits ? malloc((size_t)size + extra) : NULL;
    if (!ours)
        return attach(buffer, size, large);
    int rc = attach(ours, (MPI_Count)((size_t)size + extra), large);
    if (rc != MPI_SUCCESS) {
        free(ours);
        return rc;
    }
    tds.bsend_ours = ours;
    tds.bsend_user = buffer;
    tds.bsend_user_size = size;
    return rc;
}

/* MPI_Buffer_detach and MPI_Buffer_detach_c (large; *size an int otherwise) */
static int buffer_detach(void *buffer, void *size, int large)
{
    int rc;
    void *p = NULL;
    MPI_Count n = 0;
    if (!tds.bsend_ours) {
        if (large)
            return PMPI_Buffer_detach_c(buffer, size);
        return PMPI_Buffer_detach(buffer, size);
    }
    if (tds_real_Buffer_detach_c) {
        rc = PMPI_Buffer_detach_c(&p, &n);
    } else {
        int in = 0;
        rc = PMPI_Buffer_detach(&p, &in);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    free(tds.bsend_ours);
    tds.bsend_ours = NULL;
    *(void **)buffer = tds.bsend_user;
    if (large)
        *(MPI_Count *)size = tds.bsend_user_size;
    else /* attached with the MPI-4.0 form: MPI-4.0 says MPI_UNDEFINED where it does not fit */
        *(int *)size = tds.bsend_user_size > INT_MAX ? MPI_UNDEFINED : (int)tds.bsend_user_size;
    return rc;
}

int tds_body_Buffer_attach(void *buffer, int size)
{
    return buffer_attach(buffer, size, 0);
}
int tds_body_Buffer_detach(void *buffer, int *size)
{
    return buffer_detach(buffer, size, 0);
}
int tds_body_Buffer_attach_c(void *buffer, MPI_Count size)
{
    return buffer_attach(buffer, size, 1);
}
int tds_body_Buffer_detach_c(void *buffer, MPI_Count *size)
{
    return buffer_detach(buffer, size, 1);
}
