/*
 * Sends (tds_send.c).
 */
#ifndef TDS_SEND_H
#define TDS_SEND_H

#include "tds_comm.h"
#include "tds_mt.h"
#include "tds_progress.h"
#include "tds_req.h"
#include "tds_state.h"
#include "tds_wire.h"

void tds_send_start(tds_rq *q);          /* MPI_Start of a persistent send: its header */

#include "td_algo.h"

/* out of line (tds_send.c): for the inline paths below and the files above */
void tds_send_keep(tds_rq *q, MPI_Request r, size_t ub);
int __attribute__((noinline)) tds_send_wire_loop(int mode, const void *b, int n, MPI_Datatype t, int dest,
                                                 int tag, MPI_Comm comm);
void __attribute__((noinline)) tds_count_nohdr(int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
int __attribute__((noinline)) tds_send_post(int mode, int persistent, const void *buf, int count,
                                            MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req);
int __attribute__((noinline, cold)) tds_send_as_written(int mode, const void *buf, int count, MPI_Datatype type,
                                                        int dest, int tag, MPI_Comm comm, MPI_Request *req);
size_t tds_eager_floor(void);
int __attribute__((noinline)) tds_eager_near(size_t ub);
int __attribute__((noinline)) tds_send_eager(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                                             MPI_Comm comm, MPI_Request *req, size_t ub, uint8_t plain, double t0,
                                             int must);
int __attribute__((noinline)) tds_send_blocking(int mode, const void *buf, int count, MPI_Datatype type,
                                                int dest, int tag, MPI_Comm comm);

enum { MODE_STD = 0, MODE_B, MODE_S, MODE_R };
typedef int (*tds_bsend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*tds_nbsend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
/* the next layer's functions (tds_bodies.h), resolved at load time */
static tds_bsend_fn *const blocking_send[4] = {&tds_real_Send, &tds_real_Bsend, &tds_real_Ssend, &tds_real_Rsend};
static tds_nbsend_fn *const nb_send[4] = {&tds_real_Isend, &tds_real_Ibsend, &tds_real_Issend, &tds_real_Irsend};
static tds_nbsend_fn *const persistent_send[4] = {&tds_real_Send_init, &tds_real_Bsend_init, &tds_real_Ssend_init,
                                                  &tds_real_Rsend_init};

static inline int send_wire(int mode, const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
    if (!TDS_LOOP_WAITS())
        return (*blocking_send[mode])(b, n, t, dest, tag, comm);
    return tds_send_wire_loop(mode, b, n, t, dest, tag, comm);
}

/*
 * The send of almost every small message, kept flat and apart from the
 * general path below (its frame and spills cost as much as the work):
 * the predefined type seen last, copy layout, no ignored tags, no call
 * sites, not the sampled call of the report's timer, and an active rank
 * that showed activity this episode (dirty): its algorithm has nothing to
 * do but write the piggyback (pb_out, or on_send: td_primary_send_dirty)
 * and count. Returns 1 with
 * *rc set, or 0,
 * having done nothing, for the general path to take over. The message
 * rate's budget is a few tens of instructions per message.
 */
static inline __attribute__((always_inline)) int send_fast(int mode, const void *buf, int count, MPI_Datatype type,
                                                           int dest, int tag, MPI_Comm comm, MPI_Request *req, int *rc)
{
    td_ctx *c = &tds.core;
    size_t ub = count > 0 ? (size_t)count * (size_t)tds.tc_size : 0;
    if (!(type == tds.tc_type && ub - tds.fast_min < tds.fast_lim && tds.tleft > 1 && dest >= 0 &&
          (c->active & c->dirty)))
        return 0;
    int w = tds_wrank(comm, dest);
    if (__builtin_expect(w < 0, 0))
        return 0;
    uint8_t *b = tds_scratch(TDS_HDR_MAX + ub);
    b[0] = tds.core.hdr_out;
    td_primary_send_dirty(c, w, b + TDS_HDR_FIXED); /* active and dirty, checked above */
    small_copy(b + tds.hdr_len, buf, ub);
    count_send(w, ub);
    tds.m.n_cat[TDR_CAT_SEND]++; /* what tds_tstop counts; the time is sampled on the general path */
    tds.tleft--;
    int n = tds.hdr_len + (int)ub;
    if (!req) {
        *rc = send_wire(mode, b, n, MPI_BYTE, dest, tag, comm);
        return 1;
    }
    MPI_Request r;
    *rc = (*nb_send[mode])(b, n, MPI_BYTE, dest, tag, comm, &r);
    if (*rc == MPI_SUCCESS) {
        *req = r;
        if (!DONE_AT_ONCE(r))
            tds_send_keep(tds_rq_new(), r, ub);
    }
    return 1;
}

static inline __attribute__((always_inline)) int send_nohdr(int mode, const void *buf, int count,
                                                            MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                                                            MPI_Request *req)
{
    /* almost every message: send_fast's case (the type seen last, an
     * active rank with nothing to record but the count), no tag to look at */
    td_ctx *c = &tds.core;
    int w;
    if (__builtin_expect(type == tds.tc_type && tag != tds.nenv_tag && !tds.nh_slow && dest >= 0 &&
                             tds.tleft > 1 && (c->active & c->dirty & c->pb_static) &&
                             (w = tds_wrank(comm, dest)) >= 0,
                         1)) {
        td_primary_send(c, w, NULL); /* its fast case, checked above */
        count_send(w, count > 0 ? (size_t)count * (size_t)tds.tc_size : 0);
        tds.m.n_cat[TDR_CAT_SEND]++; /* what tds_tstop counts; the time is sampled in tds_count_nohdr */
        tds.tleft--;
    } else if (dest != MPI_PROC_NULL && !tds_dtnull_refused(type, 0)) {
        tds_count_nohdr(count, type, dest, tag, comm);
    }
    if (!req)
        return send_wire(mode, buf, count, type, dest, tag, comm);
    return (*nb_send[mode])(buf, count, type, dest, tag, comm, req);
}

#endif
