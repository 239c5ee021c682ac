/*
 * Receives (tds_recv.c): finding a request's entry, and the inline hot
 * paths that finish a received message (the completion calls' and the
 * flat entries'), their slow paths out of line.
 */
#ifndef TDS_RECV_H
#define TDS_RECV_H

#include "tds_progress.h"
#include "tds_req.h"
#include "tds_state.h"
#include "tds_wire.h"

/* a receive's wire type freed once MPI has it (the copy layout's MPI_BYTE
 * and the program's own type are not tdshim's): inline, as it was in one
 * file with its callers before the split (MPI_Mrecv's path: 9 instructions) */
static inline void tds_layout_done(tds_rq *q, MPI_Datatype *wtype)
{
    if (!tds.nohdr && !q->foreign && (!q->copy || *wtype != MPI_BYTE))
        PMPI_Type_free(wtype);
}

/* out of line (tds_recv.c): for the inline paths below and the files above */
void __attribute__((noinline)) tds_recv_finish(tds_rq *q, MPI_Status *st);
void __attribute__((noinline, cold)) tds_part_failed(const char *what, int rc);
void tds_saved_status(const tds_rq *q, MPI_Status *st);
void __attribute__((noinline, cold)) tds_no_header(MPI_Status *st, size_t bytes, MPI_Comm comm);

/* a plain receive's handle becomes an entry of the table (tds_recv.c) */
tds_rq *tds_hs_promote(long slot, MPI_Request r);
/* the entry of r: a plain receive gets one here, for the paths that need
 * it (the completion paths of the message rate look in the set themselves) */
static inline tds_rq *tds_rq_find(MPI_Request r)
{
    tds_rq *q = tds_rq_lookup(r);
    if (q || __builtin_expect(!tds_hs_any(), 1))
        return q;
    long i = tds_hs_find(r);
    return i < 0 ? NULL : tds_hs_promote(i, r);
}
/* q is in the table: take it out without a lookup */

static inline __attribute__((always_inline)) int tds_recv_fast_nohdr(tds_rq *q, MPI_Status *st);
static inline __attribute__((always_inline)) int tds_recv_fast(tds_rq *q, MPI_Status *st)
{
    const uint8_t *b = q->bounce;
    size_t bytes = tds_st_bytes(st), ub = bytes - (size_t)tds.hdr_len;
    if (!(q->copy & q->plain))
        return tds.nohdr ? tds_recv_fast_nohdr(q, st) : 0;
    if (bytes < (size_t)tds.hdr_len || b[0] != tds.core.hdr_in ||
        (ub != q->ubytes && (q->tsize != 1 || ub > q->ubytes)) || tds_st_cancelled(st))
        return 0;
    double t0 = tds_tstart();
    td_primary_recv(&tds.core, tds_q_wrank(q, tds_st_source(st)), b + TDS_HDR_FIXED);
    if (__builtin_expect(tds.core.error != 0, 0))
        tds_core_failed();
    tds.m.prim_recv++;
    tds.m.prim_recv_bytes += ub; /* pb_bytes_recv: derived at finalize */
    tds_worked();
    small_copy(q->buf, b + tds.hdr_len, ub);
    tds_st_set_bytes(st, ub);
    tds_tstop(TDR_CAT_RECV, t0);
    return 1;
}

/* The same for a header-free receive (README "Header-free mode"): a
 * primary message when no tag is ignored and it is not on the
 * notification's envelope; the data is in the program's buffer already and
 * the status is MPI's. */
static inline __attribute__((always_inline)) int tds_recv_fast_nohdr(tds_rq *q, MPI_Status *st)
{
    if (tds.nh_slow || q->foreign || tds_st_tag(st) == tds.nenv_tag || tds_st_cancelled(st))
        return 0;
    double t0 = tds_tstart();
    td_primary_recv(&tds.core, tds_q_wrank(q, tds_st_source(st)), NULL);
    if (__builtin_expect(tds.core.error != 0, 0))
        tds_core_failed();
    tds.m.prim_recv++;
    tds.m.prim_recv_bytes += tds_st_bytes(st);
    tds_worked();
    tds_tstop(TDR_CAT_RECV, t0);
    return 1;
}

/* A plain receive (tds_hset) completed: the header-free receive of
 * tds_recv_fast_nohdr, for a receive on MPI_COMM_WORLD (or its copy) that
 * no call site concerns (tds_fast_select; its scope in its value in the
 * set, flat_cls_Irecv); the notification's envelope, a
 * cancelled receive and the sampled call of the timer take tds_recv_finish
 * (tds_plain_slow); with messages to classify (TDSHIM_IGNORE_*) one that
 * is not primary is counted as ignored, as tds_recv_finish counts it. */
void tds_plain_slow(MPI_Status *st);
/* a message that is not primary, sent or received header-free (tds_recv_finish's
 * TDS_HK_IGNORED, make_header's): counted, the call's category too (tds_tstop's
 * count; the caller checked that the call is not the timed one) */
static inline __attribute__((always_inline)) void tds_count_ignored(int cat)
{
    tds.m.ignored_msgs++;
    tds.m.n_cat[cat]++;
}
static inline __attribute__((always_inline)) void tds_plain_done(MPI_Status *st)
{
    if (__builtin_expect(tds_st_tag(st) == tds.nenv_tag || tds_st_cancelled(st) || tds.tleft <= 1, 0)) {
        tds_plain_slow(st);
        return;
    }
    tds.tleft--;
    if (__builtin_expect(tds.cf.classify, 0) && tds_not_primary(tds_st_tag(st), tds_st_bytes(st))) {
        tds_count_ignored(TDR_CAT_RECV);
        return;
    }
    tds.m.n_cat[TDR_CAT_RECV]++; /* what tds_tstop counts; the time is sampled in tds_plain_slow */
    td_primary_recv(&tds.core, tds_st_source(st), NULL);
    if (__builtin_expect(tds.core.error != 0, 0))
        tds_core_failed();
    tds.m.prim_recv++;
    tds.m.prim_recv_bytes += tds_st_bytes(st);
    /* no tds_worked: plain receives are single-threaded (poll_run) */
}

/* Flat receives a completion call counted together (waitall_flat): the
 * counts tds_plain_done and tds_wire_done make per message, made once for
 * n messages of `bytes` user bytes in all (issue 28: per-message counting
 * was a fifth of a received message's instructions). The sampled call of
 * the timer comes at the next flat operation (tleft left at 1). The
 * core's count (c->recvd) is the caller's: tds_plain_batch, or
 * td_primary_recv_many with the piggybacks (tds_batch_end). */
static inline void tds_recv_batch(uint64_t n, uint64_t bytes)
{
    tds.tleft = tds.tleft > n ? tds.tleft - (unsigned)n : 1;
    tds.m.n_cat[TDR_CAT_RECV] += n;
    if (__builtin_expect(tds.core.error != 0, 0))
        tds_core_failed();
    tds.m.prim_recv += n;
    tds.m.prim_recv_bytes += bytes;
}
/* ...of plain receives: the core has no on_recv (tds_fast_select) */
static inline void tds_plain_batch(uint64_t n, uint64_t bytes)
{
    tds.core.recvd += n;
    if (__builtin_expect(!(tds.core.active & tds.core.dirty), 0))
        td_recv_activity(&tds.core);
    tds_recv_batch(n, bytes);
}
/* ...with a header: the messages' piggybacks, TD_PB_MAX bytes each,
 * gathered for one td_primary_recv_many (the core's on_recv once per
 * window, not once per message), or with their sources for
 * td_primary_recv_src (a core whose on_recv needs them) */
#define TDS_BATCH_PB 128
typedef struct tds_batch {
    uint64_t n, bytes;
    unsigned k;                   /* piggybacks in pb, not yet given to the core */
    uint64_t pb[TDS_BATCH_PB];
    int src[TDS_BATCH_PB];        /* their sources (world ranks: tds_flat_comm_rx), for td_primary_recv_src */
} tds_batch;
static inline void tds_batch_pbs(tds_batch *b)
{
    if (__builtin_expect(td_recv_many_ok(&tds.core), 1))
        td_primary_recv_many(&tds.core, (const uint8_t *)b->pb, sizeof b->pb[0], b->k);
    else
        td_primary_recv_src(&tds.core, (const uint8_t *)b->pb, sizeof b->pb[0], b->src, b->k);
    b->k = 0;
}
static inline void tds_batch_end(tds_batch *b)
{
    if (b->k)
        tds_batch_pbs(b);
    if (b->n)
        tds_recv_batch(b->n, b->bytes);
}

/* A flat receive with a header (tds_cell) completed: tds_recv_fast for a
 * cell, the cell returned to the free list. Anything but a whole message
 * with our header (a shorter one only into bytes, as tds_recv_fast) is
 * tds_recv_finish's (tds_cell_slow). Also the flat blocking receive's, with
 * its own wire buffer (c->wire unused then: wire given). */
void tds_cell_slow(const uint8_t *wire, void *buf, size_t cub, int tsize, MPI_Status *st);
/* tds_wire_done's common case: a whole primary with our header, not the
 * timed call (tds_wire_take's); anything else is tds_cell_slow's */
static inline __attribute__((always_inline)) int tds_wire_quick(const uint8_t *wire, size_t cub, int tsize,
                                                                const MPI_Status *st)
{
    size_t bytes = tds_st_bytes(st), ub = bytes - (size_t)tds.hdr_len;
    return __builtin_expect(!(bytes < (size_t)tds.hdr_len || wire[0] != tds.core.hdr_in ||
                              (ub != cub && (tsize != 1 || ub > cub)) || tds_st_cancelled(st) || tds.tleft <= 1),
                            1);
}
static inline __attribute__((always_inline)) void tds_wire_take(const uint8_t *wire, void *buf, MPI_Status *st)
{
    size_t ub = tds_st_bytes(st) - (size_t)tds.hdr_len;
    int src = tds_st_source(st);
    tds.tleft--;
    tds.m.n_cat[TDR_CAT_RECV]++;
    tds.m.prim_recv++;
    tds.m.prim_recv_bytes += ub;
    cell_copy(buf, wire + tds.hdr_len, ub);
    tds_st_set_bytes(st, ub);
    /* the algorithm last: nothing but the piggyback read after it, so
     * that the callers keep few values across its call */
    td_primary_recv(&tds.core, src, wire + TDS_HDR_FIXED);
    if (__builtin_expect(tds.core.error != 0, 0))
        tds_core_failed();
}
static inline __attribute__((always_inline)) void tds_wire_done(const uint8_t *wire, void *buf, size_t cub,
                                                                int tsize, MPI_Status *st)
{
    if (tds_wire_quick(wire, cub, tsize, st))
        tds_wire_take(wire, buf, st);
    else
        tds_cell_slow(wire, buf, cub, tsize, st);
}
/* tds_wire_done for a cell of a batch: counted into b (tds_batch_end
 * does the rest), or finished on its own by tds_recv_finish */
static inline __attribute__((always_inline)) void tds_wire_one(tds_cell *c, MPI_Status *st, tds_batch *b)
{
    const uint8_t *wire = c->wire;
    size_t bytes = tds_st_bytes(st), ub = bytes - (size_t)tds.hdr_len;
    if (__builtin_expect(bytes < (size_t)tds.hdr_len || wire[0] != tds.core.hdr_in ||
                             (ub != c->ub && (c->tsize != 1 || ub > c->ub)) || tds_st_cancelled(st),
                         0)) {
        tds_cell_slow(wire, c->buf, c->ub, c->tsize, st);
        return;
    }
    _Static_assert(TDS_HDR_MAX - TDS_HDR_FIXED == sizeof b->pb[0], "a piggyback is one word of tds_batch");
    memcpy(&b->pb[b->k], wire + TDS_HDR_FIXED, sizeof b->pb[0]); /* the cell has TDS_HDR_MAX header bytes */
    b->src[b->k] = tds_st_source(st);
    if (__builtin_expect(++b->k == TDS_BATCH_PB, 0))
        tds_batch_pbs(b);
    cell_copy(c->buf, wire + tds.hdr_len, ub);
    tds_st_set_bytes(st, ub);
    b->n++;
    b->bytes += ub;
}
static inline __attribute__((always_inline)) void tds_flat_done(tds_cell *c, MPI_Status *st)
{
    if (__builtin_expect(c == NULL, 1) || c == TDS_OOS) { /* header-free: no cell */
        tds_plain_done(st);
        return;
    }
    tds_wire_done(c->wire, c->buf, c->ub, c->tsize, st);
    c->next = tds.cells;
    tds.cells = c;
}
/* tds_flat_done and tds_wire_done where the completion call returned rc,
 * not MPI_SUCCESS (tds_rx_rc: a truncated message MPI wrote nothing of),
 * out of line: the common case pays one comparison */
void tds_flat_done_rc(int rc, tds_cell *c, MPI_Status *st);
void tds_wire_done_rc(int rc, const uint8_t *wire, void *buf, size_t cub, int tsize, MPI_Status *st);

/* a request of ours completed (st: the PMPI status of the wire message,
 * turned into the program's view): count, unpack, recycle. The common
 * receive inline, the rest in tds_complete_slow. */
void tds_complete_slow(tds_rq *q, MPI_Status *st);
static inline __attribute__((always_inline)) void tds_complete(tds_rq *q, MPI_Status *st)
{
    if (__builtin_expect(q->kind == TDS_RQ_RECV && !q->persistent && !q->finished, 1) && tds_recv_fast(q, st)) {
        tds_rq_unlink(q);
        tds_rq_release(q);
        return;
    }
    tds_complete_slow(q, st);
}
void tds_finish_early(tds_rq *q, MPI_Status *st);

/* A receive finished in this call found what MPI reports natively as an
 * error (a type signature mismatch, tds_recv.c unpack_derived): the call
 * returns it, as natively. tds_recv_err: a single-completion call's return
 * code; tds_recv_err_in: 1 if request st of a multiple-completion call got
 * it (its status's MPI_ERROR; the call returns MPI_ERR_IN_STATUS). */
static inline int tds_recv_err(int rc)
{
    if (__builtin_expect(tds_t.recv_err == 0, 1))
        return rc;
    rc = tds_t.recv_err;
    tds_t.recv_err = 0;
    return rc;
}
static inline int tds_recv_err_in(MPI_Status *st)
{
    if (__builtin_expect(tds_t.recv_err == 0, 1))
        return 0;
    tds_st_set_error(st, tds_t.recv_err);
    tds_t.recv_err = 0;
    return 1;
}
void tds_part_done(tds_rq *q, MPI_Status *st); /* the request completed: finished, the companion too */

/* what tds_recv_finish and tds_recv_fast read of a receive */
static inline void recv_fields(tds_rq *q, void *buf, MPI_Datatype type, MPI_Comm comm, size_t ub, int tsize,
                               uint8_t plain)
{
    q->kind = TDS_RQ_RECV;
    q->buf = buf;
    q->type = type;
    q->comm = comm;
    q->ubytes = ub;
    q->tsize = tsize;
    q->plain = plain;
    /* the world ranks of the communicator must survive MPI_Comm_free while
     * the receive is pending (tds_rq_drop_refs lets go); another job's
     * messages come in as written, into the program's buffer */
    q->foreign = 0;
    if (__builtin_expect(comm != MPI_COMM_WORLD, 0)) { /* q is fresh: no map held yet */
        q->cmap = tds_cmap_get(comm);
        q->foreign = (uint8_t)q->cmap[TDS_MAP_FOREIGN];
    }
    /* A derived receive type always takes the datatype layout: in a
     * contiguous bounce buffer, Open MPI 4.1.4's single-copy path (vader
     * CMA) writes a truncated rendezvous message whole, past the buffer
     * (natively it does so only into contiguous receive buffers; found by
     * tests/diff). Its struct type also keeps the program's type alive if
     * the program frees it while the receive is pending. */
    q->copy = !tds.nohdr && !q->foreign &&
              (TDS_BYTES_INTO_STRUCT ? ub <= tds.copy_max && plain : recv_copies(buf, ub));
    if (!TDS_BYTES_INTO_STRUCT && q->copy && !plain && ub) {
        /* unpacked at completion: the program may free its type before */
        PMPI_Type_dup(type, &q->type);
        q->owns_type = TDS_OWN_TYPE;
    }
}

/* recv_fields for the flat fast paths of tds_body_Irecv: a predefined
 * contiguous type whose layout they chose (copy: the bounce buffer, or the
 * program's buffer in header-free mode); on MPI_COMM_WORLD (the common
 * case) only the fields tds_recv_finish reads, without recv_fields' layout
 * choice and communicator map (issue 28: tests/perf/icount.sh) */
static inline __attribute__((always_inline)) void recv_fields_fast(tds_rq *q, void *buf, MPI_Datatype type,
                                                                   MPI_Comm comm, size_t ub, uint8_t copy)
{
    if (__builtin_expect(comm != MPI_COMM_WORLD, 0)) {
        recv_fields(q, buf, type, comm, ub, tds.tc_size, 1);
        q->copy = copy;
        return;
    }
    q->kind = TDS_RQ_RECV;
    q->buf = buf;
    q->type = type;
    q->comm = comm;
    q->ubytes = ub;
    q->tsize = tds.tc_size;
    q->plain = 1; /* q->foreign is 0 from tds_rq_new */
    q->copy = copy;
}

/* prepare q for a receive into (buf, count, type) and return what to post;
 * only what tds_recv_finish reads is stored (inlined: the fast path of every
 * receive) */
static inline __attribute__((always_inline)) void recv_layout(tds_rq *q, void *buf, int count, MPI_Datatype type,
                                                              MPI_Comm comm, void **wbuf, int *wcount,
                                                              MPI_Datatype *wtype)
{
    int tsize;
    uint8_t plain;
    size_t ub = type_bytes(count, type, &tsize, &plain);
    recv_fields(q, buf, type, comm, ub, tsize, plain);
    if (tds.nohdr || q->foreign) { /* the program's own buffer (tds_layout_done frees nothing) */
        *wbuf = buf;
        *wcount = count;
        *wtype = type;
    } else if (q->copy) {
        *wcount = (int)(tds.hdr_len + q->ubytes);
        *wtype = MPI_BYTE;
        if (__builtin_expect(q->ubytes > TDS_WIRE_MAX, 0)) { /* tds_layout_done frees the type */
            tds_big_bounce(q, TDS_HDR_MAX + q->ubytes);
            *wcount = 1;
            *wtype = tds_big_type((MPI_Count)(tds.hdr_len + q->ubytes), MPI_BYTE);
        }
        *wbuf = rq_bounce(q, TDS_HDR_MAX + q->ubytes);
        *(uint8_t *)q->bounce = 0; /* no header until MPI writes one (MPICH writes nothing when it truncates) */
    } else {
        q->hdr[0] = 0;
        *wbuf = MPI_BOTTOM;
        *wcount = 1;
        *wtype = tds_wire_type(q->hdr, buf, count, type);
    }
}

/* MPI's own blocking receive of q returned rc into st (seeded from the
 * program's status): finished as wait_recv's (a truncated message is
 * taken too), the program's status written. Inlined into its two callers
 * (recv_probed, tds_body_Mrecv): a call of its own cost the probe path
 * 16 instructions a message (tests/perf/icount.sh, bcjg: 379 -> 363) */
static inline __attribute__((always_inline)) int tds_recv_blocked(tds_rq *q, int rc, MPI_Status *st,
                                                                  MPI_Status *status)
{
    tds_rx_rc(rc);
    if (tds_recv_taken(rc) && !tds_recv_fast(q, st)) {
        tds_recv_finish(q, st);
        rc = tds_recv_err(rc);
    }
    tds_rx_end(rc);
    tds_status_out(status, st);
    return rc;
}
/* Blocking receive: a polling loop, so a rank waiting here is passive and
 * keeps the protocol progressing (DESIGN.md §1). */
static inline __attribute__((always_inline)) int wait_recv(tds_rq *q, MPI_Request *r, MPI_Status *status,
                                                           int passive)
{
    MPI_Status st;
    tds_status_seed(&st, status);
    int done = 0, rc;
    tds_wait w = tds_wait_begin(passive);
    while ((rc = PMPI_Test(r, &done, &st)) == MPI_SUCCESS && !done)
        tds_wait_step(&w);
    tds_rx_rc(rc);
    if (done && !tds_recv_fast(q, &st)) { /* also on truncation: the message was consumed */
        tds_recv_finish(q, &st);
        rc = tds_recv_err(rc);
    }
    tds_rx_end(rc);
    tds_status_out(status, &st);
    return rc;
}

/* the entry of blocking receives (tds_t.brq) is reused, never released: it
 * gives back the communicator's map it took (recv_fields) when the call
 * ends, so the next receive on MPI_COMM_WORLD finds none */
static inline void brq_done(tds_rq *q)
{
    if (__builtin_expect(q->cmap != NULL || q->owns_type, 0))
        tds_rq_drop_refs(q);
}

/* the receive of q was posted with result rc: enter it, or give it back */
static inline int recv_posted(tds_rq *q, int rc, int persistent, MPI_Request *request)
{
    if (__builtin_expect(rc != MPI_SUCCESS, 0)) {
        tds_rq_release(q);
        return rc;
    }
    q->active = !persistent;
    tds_rq_insert(q);
    *request = q->req;
    return MPI_SUCCESS;
}

static inline __attribute__((always_inline)) int recv_post(int persistent, void *buf, int count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Message *message, MPI_Request *request)
{
    tds_rq *q = tds_rq_new();
    void *wbuf;
    int wcount, rc;
    MPI_Datatype wtype;
    recv_layout(q, buf, count, datatype, comm, &wbuf, &wcount, &wtype);
    q->persistent = (uint8_t)persistent;
    q->tag = tag; /* the idle notions' scope (tds_poll_scope) */
    if (message)
        rc = PMPI_Imrecv(wbuf, wcount, wtype, message, &q->req);
    else if (persistent)
        rc = PMPI_Recv_init(wbuf, wcount, wtype, source, tag, comm, &q->req);
    else
        rc = PMPI_Irecv(wbuf, wcount, wtype, source, tag, comm, &q->req);
    tds_layout_done(q, &wtype);
    return recv_posted(q, rc, persistent, request);
}
tds_rq *tds_rq_remove(MPI_Request r); /* the entry of r out of the table */

/* the entry of a message MPI_Mprobe/MPI_Improbe matched (tds_probe.c
 * records its communicator there), -1: none */
static inline int tds_mprobed_find(MPI_Message m)
{
    for (int i = 0; i < tds.nmprobed; i++)
        if (tds.mprobed[i].msg == m)
            return i;
    return -1;
}

#endif
