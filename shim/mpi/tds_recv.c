/*
 * Receives (tds_recv.h): posting, finishing a received message (its
 * header, counts, unpacking, the program's status), the flat receives'
 * slow paths and their promotion to an entry, persistent receives.
 */
#include "tds_recv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- receives */

/* A completed receive (or a probe) without tdshim's header, not a
 * truncated one (lost_header counts those: MPICH 4.0 over UCX writes nothing
 * of a truncated message, its status giving the size of the whole wire
 * message): a message from a rank not under tdshim, which MPI_Init's
 * agreement cannot see. Never fatal (README "Limitations"):
 * warned once; the status keeps MPI's error and gets the program's size
 * (the wire size less the header, as natively); the buffer is what MPI
 * left; the message is not counted, so detection may not complete (never
 * early). */
void __attribute__((noinline, cold)) tds_no_header(MPI_Status *st, size_t bytes, MPI_Comm comm)
{
    tds.m.nohdr_msgs++;
    if (!tds.warned_trunc) {
        tds.warned_trunc = 1;
        char from[MPI_MAX_OBJECT_NAME + 96];
        tds_describe_rank(from, sizeof from, comm, tds_st_source(st));
        fprintf(stderr, "tdshim: rank %d: a %zu-byte message from %s (tag %d) reached the program without "
                        "tdshim's header: from a rank not under tdshim with the same TDSHIM_ALGO; it is not "
                        "counted and detection may not complete; "
                        "warned once\n",
                tds.rank, bytes, from, tds_st_tag(st));
    }
    if (bytes >= (size_t)tds.hdr_len)
        tds_st_set_bytes(st, bytes - (size_t)tds.hdr_len);
}

/* A receive completed on a message without tdshim's header. Truncated (more
 * bytes than the receive posted: MPICH 4.0 over UCX writes nothing of such
 * a message and its status has the whole wire size; or the completion
 * call's code says so, rx_truncated), it is a message of
 * ours whose header MPI dropped: a primary counted as received, its
 * piggyback lost (td_primary_recv_lost; issue 42: left uncounted, it left
 * the rank passive, so its next send was a false contract violation, and
 * the report's unreceived count wrong), or a message of an ignored tag.
 * Else it came from a rank not under tdshim (tds_no_header): not counted, but a
 * completed receive all the same, activity. */
/* the completion call's code says this receive was truncated (tds_rx_rc) */
static int rx_truncated(const MPI_Status *st)
{
    int rc = tds_t.rx_rc;
    if (rc == MPI_ERR_IN_STATUS)
        rc = tds_st_error(st);
    return rc != MPI_SUCCESS && tds_recv_truncated(rc);
}
static void __attribute__((noinline, cold)) lost_header(tds_rq *q, MPI_Status *st, size_t bytes)
{
    MPI_Comm comm = q->cmap && q->cmap[TDS_MAP_DEAD] ? MPI_COMM_NULL : q->comm;
    size_t ub;
    if (bytes > (size_t)tds.hdr_len + q->ubytes) { /* the whole size: the program's is that less the header */
        ub = bytes - (size_t)tds.hdr_len;
        tds_st_set_bytes(st, ub);
    } else if (rx_truncated(st)) {
        /* truncated, its count not the message's (MPICH 4.0, a message
         * that came before its receive): the program's view as
         * tds_no_header gives it (MPI's count less the header: the native
         * count, tests/diff), and that many bytes counted (issue 38:
         * tests/mpi/standing.sh under MPICH found such messages uncounted) */
        ub = bytes >= (size_t)tds.hdr_len ? bytes - (size_t)tds.hdr_len : 0;
        if (bytes >= (size_t)tds.hdr_len)
            tds_st_set_bytes(st, ub);
    } else {
        tds_no_header(st, bytes, comm);
        tds_activity();
        return;
    }
    if (tds_env_kind(tds_st_source(st), tds_st_tag(st), ub, comm) == TDS_HK_IGNORED) {
        tds.m.ignored_msgs++;
        return;
    }
    td_primary_recv_lost(&tds.core, tds_q_wrank(q, tds_st_source(st))); /* as tds_recv_finish */
    if (tds.core.error)
        tds_core_failed();
    tds.m.prim_recv++;
    tds.m.prim_recv_bytes += ub;
    tds_worked();
}

/* A receive into a derived type, packed (outside Open MPI only, see
 * send_copies; a truncated message arrives without a header there, see
 * tds_no_header): its n bytes are unpacked with the program's type (a duplicate
 * of it), so only bytes the type describes are written. A message whose
 * last element arrives in part (a send type other than the receive's) gets
 * it as natively, where MPI writes the basic elements that arrived whole
 * (unpacking whole elements only left it unwritten: MPICH's DTPools tests,
 * "expected 0 at ..., but found -1"; tests/diff's cases 700000). MPICH's
 * MPI_Unpack does exactly that with the part of an element, and says how
 * many bytes it took: fewer than arrived means the message ends inside a
 * basic element of the receive type, a type signature mismatch, which
 * MPICH reports natively as MPI_ERR_TRUNCATE: so does tdshim (returned,
 * tds_recv_err; tests/mpi/mpi4.sh). An MPI_Unpack that refuses part of an
 * element (an error, returned on tds.self) gets the element packed from
 * the receive buffer, overwritten in front with what arrived and unpacked
 * back. */
static int __attribute__((noinline)) unpack_derived(tds_rq *q, size_t n)
{
    const uint8_t *in = q->bounce + tds.hdr_len;
    size_t ts = (size_t)q->tsize;
    if (ts == INT_MAX) { /* perhaps more (tds_type_bytes_slow): an MPI-4.0 large count */
        MPI_Count sz = 0;
        PMPI_Type_size_x(q->type, &sz);
        ts = (size_t)sz;
    }
    size_t whole = n / ts, part = n - whole * ts, pos = 0;
    tds_unpack_any(in, n, &pos, q->buf, whole, q->type);
    if (!part)
        return MPI_SUCCESS;
    MPI_Count lb, extent;
    PMPI_Type_get_extent_x(q->type, &lb, &extent);
    uint8_t *el = (uint8_t *)q->buf + (MPI_Aint)whole * (MPI_Aint)extent;
    pos = 0;
    if (tds_unpack_any(in + whole * ts, part, &pos, el, 1, q->type) == MPI_SUCCESS)
        return pos == part ? MPI_SUCCESS : MPI_ERR_TRUNCATE;
    uint8_t *tmp = malloc(ts);
    if (!tmp)
        tds_fatal("out of memory for a %zu-byte element", ts);
    pos = 0;
    tds_pack_any(el, 1, q->type, tmp, ts, &pos);
    memcpy(tmp, in + whole * ts, part);
    pos = 0;
    tds_unpack_any(tmp, ts, &pos, el, 1, q->type);
    free(tmp);
    return MPI_SUCCESS;
}

/* A receive completed: count it (once), unpack, and fix the status to the
 * program's view. Cancelled receives are not counted (DESIGN.md §1). */
void __attribute__((noinline)) tds_recv_finish(tds_rq *q, MPI_Status *st)
{
    if (tds_st_cancelled(st)) {
        tds.m.cancelled_recvs++;
        return;
    }
    double t0 = tds_tstart();
    size_t bytes = tds_st_bytes(st);
    if (__builtin_expect(q->foreign, 0)) { /* another job's: the status is MPI's, untouched */
        tds_xjob_recv(bytes);
        tds_tstop(TDR_CAT_RECV, t0);
        return;
    }
    const uint8_t *hdr = q->copy ? q->bounce : q->hdr; /* header-free: q->hdr, of which nothing is read */
    int kind = tds.nohdr ? tds_env_kind(tds_st_source(st), tds_st_tag(st), bytes, q->comm)
                         : tds_hdr_kind(hdr, bytes, (size_t)tds.hdr_len);
    if (__builtin_expect(kind == TDS_HK_NONE, 0)) {
        lost_header(q, st, bytes);
        tds_tstop(TDR_CAT_RECV, t0);
        return;
    }
    size_t ub = bytes - (size_t)tds.hdr_len;
    if (kind == TDS_HK_NOTIFY) {
        tds.m.notifications++;
        td_notified(&tds.core);
        tds_t.me.work++; /* the thread that took the notification is active, as the rank is */
    } else if (kind == TDS_HK_IGNORED) {
        tds.m.ignored_msgs++;
    } else {
        int src = tds_q_wrank(q, tds_st_source(st));
        if (!tds.nohdr && hdr[0] != tds.core.hdr_in) /* stamped with another episode (td_engine.c) */
            td_stamp_seen(&tds.core, src, tds_st_tag(st), hdr[0]);
        td_primary_recv(&tds.core, src, hdr + TDS_HDR_FIXED);
        if (tds.core.error)
            tds_core_failed();
        tds.m.prim_recv++;
        tds.m.prim_recv_bytes += ub; /* pb_bytes_recv: derived at finalize */
        tds_worked();
    }
    /* a truncated message (MPI_ERR_TRUNCATE; the status has its whole size,
     * as natively): MPI wrote only the receive's capacity */
    size_t n = ub < q->ubytes ? ub : q->ubytes;
    if (q->copy && n && q->plain && q->tsize == 1) {
        small_copy(q->buf, q->bounce + tds.hdr_len, n); /* bytes: the common case */
    } else if (q->copy && n && q->plain) {
        /* a plain type: its data is contiguous, a partial element included
         * (count MPI_UNDEFINED: natively its bytes land in the buffer too) */
        memcpy(q->buf, q->bounce + tds.hdr_len, n);
    } else if (q->copy && n && q->tsize > 0) {
        tds_t.recv_err = unpack_derived(q, n);
    }
    if (!tds.nohdr) /* header-free: the status is MPI's, untouched */
        tds_st_set_bytes(st, ub);
    tds_tstop(TDR_CAT_RECV, t0);
}

/* a receive finished by MPI_Request_get_status completes again: the
 * program's view of its message as then, and MPI_ERROR as MPI left it in
 * this call (the one field a later call may treat differently) */
void tds_saved_status(const tds_rq *q, MPI_Status *st)
{
    int err = tds_st_error(st);
    *st = q->saved;
    tds_st_set_error(st, err);
}

/* MPI_Request_get_status: the receive is finished now, once; later
 * completion calls return the same status */
void tds_finish_early(tds_rq *q, MPI_Status *st)
{
    if (q->kind != TDS_RQ_RECV || (q->persistent && !q->active))
        return;
    if (__builtin_expect(q->part != 0, 0)) { /* partitioned: the status stays MPI's (tds_part_done) */
        if (!q->finished)
            tds_part_done(q, st);
        q->finished = 1;
        return;
    }
    if (!q->finished) {
        tds_recv_finish(q, st);
        q->finished = 1;
        q->saved = *st;
    } else {
        tds_saved_status(q, st);
    }
}

void tds_complete_slow(tds_rq *q, MPI_Status *st)
{
    if (q->persistent && !q->active)
        return; /* inactive persistent request: MPI returned an empty status */
    if (__builtin_expect(q->part != 0, 0)) { /* partitioned: the program's status is MPI's (tds_part_done) */
        if (!q->finished)
            tds_part_done(q, st);
        q->finished = q->active = 0;
        return;
    }
    if (q->kind == TDS_RQ_RECV) {
        if (q->finished)
            tds_saved_status(q, st); /* finished by MPI_Request_get_status already */
        else
            tds_recv_finish(q, st);
    } else {
        if (tds_st_cancelled(st) && !tds.warned_cancel && !q->foreign) {
            /* the core has no way to take a counted message back: the
             * algorithm will wait for a message that never arrives */
            tds.warned_cancel = 1;
            fprintf(stderr, "tdshim: rank %d: a send was cancelled; termination detection counted it and "
                            "may never announce\n", tds.rank);
        }
    }
    q->finished = 0;
    if (q->persistent) {
        q->active = 0;
        return;
    }
    tds_rq_unlink(q);
    tds_rq_release(q);
}

__attribute__((noinline, cold)) int tds_recv_truncated(int rc)
{
    int c;
    return PMPI_Error_class(rc, &c) == MPI_SUCCESS && c == MPI_ERR_TRUNCATE;
}

/* the blocking receive of q of a message a found MPI_Iprobe saw
 * (tds_probed_covers): MPI's own, which cannot wait */
static int __attribute__((noinline)) recv_probed(tds_rq *q, void *wbuf, int wcount, MPI_Datatype wtype, int source,
                                                 int tag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Status st;
    tds_status_seed(&st, status);
    return tds_recv_blocked(q, PMPI_Recv(wbuf, wcount, wtype, source, tag, comm, &st), &st, status);
}

int tds_body_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Status *status)
{
    if (source == MPI_PROC_NULL || tds_dtnull_refused(datatype, 1))
        return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
    tds_rq *q = &tds_t.brq;
    void *wbuf;
    int wcount;
    MPI_Datatype wtype;
    MPI_Request r;
    int rc;
    recv_layout(q, buf, count, datatype, comm, &wbuf, &wcount, &wtype);
    if (!tds_mt && tds_probed_covers(source, tag, comm)) {
        rc = recv_probed(q, wbuf, wcount, wtype, source, tag, comm, status);
        tds_layout_done(q, &wtype);
        brq_done(q);
        return rc;
    }
    rc = PMPI_Irecv(wbuf, wcount, wtype, source, tag, comm, &r);
    tds_layout_done(q, &wtype);
    if (rc == MPI_SUCCESS) {
        tds_t.brq_wait = &r; /* TDSHIM_NOTIFY=exit while waiting cancels it (exit_now) */
        rc = wait_recv(q, &r, status, 1);
        tds_t.brq_wait = NULL;
    }
    brq_done(q);
    return rc;
}

static int __attribute__((noinline)) irecv_general(void *buf, int count, MPI_Datatype datatype, int source,
                                                   int tag, MPI_Comm comm, MPI_Request *request)
{
    if (source == MPI_PROC_NULL || tds_dtnull_refused(datatype, 1))
        return PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
    return recv_post(0, buf, count, datatype, source, tag, comm, NULL, request);
}

/* The receive of almost every small message, flat like send_fast: the
 * copy layout of the type seen last into a recycled entry whose bounce
 * buffer is large enough (recv_post's case, without its layout choice);
 * anything else out of line. */
int tds_body_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    size_t ub = count > 0 ? (size_t)count * (size_t)tds.tc_size : 0;
    tds_rq *q = tds.rq_free;
    if (tds.nohdr) { /* into the program's buffer: only the entry to find at completion */
        if (__builtin_expect(q == NULL || source == MPI_PROC_NULL, 0))
            return irecv_general(buf, count, datatype, source, tag, comm, request);
        q = tds_rq_new();
        recv_fields_fast(q, buf, datatype, comm, ub, 0);
        q->tag = tag;
        int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, &q->req);
        return recv_posted(q, rc, 0, request);
    }
    if (__builtin_expect(comm != MPI_COMM_WORLD, 0) && tds_comm_foreign(comm))
        return irecv_general(buf, count, datatype, source, tag, comm, request);
    if (!(datatype == tds.tc_type && ub <= tds.copy_max && q && source != MPI_PROC_NULL &&
          TDS_HDR_MAX + ub <= q->bounce_cap))
        return irecv_general(buf, count, datatype, source, tag, comm, request);
    q = tds_rq_new();
    recv_fields_fast(q, buf, datatype, comm, ub, 1);
    q->tag = tag;
    *(uint8_t *)q->bounce = 0; /* see recv_layout */
    int rc = PMPI_Irecv(q->bounce, tds.hdr_len + (int)ub, MPI_BYTE, source, tag, comm, &q->req);
    return recv_posted(q, rc, 0, request);
}

/* a flat receive with a header that is not tds_wire_done's case:
 * tds_recv_finish, on an entry describing it */
void tds_cell_slow(const uint8_t *wire, void *buf, size_t cub, int tsize, MPI_Status *st)
{
    tds_rq q;
    memset(&q, 0, sizeof q);
    q.kind = TDS_RQ_RECV;
    q.copy = q.plain = 1;
    q.bounce = (void *)wire;
    q.buf = buf;
    q.ubytes = cub;
    q.tsize = tsize;
    q.type = MPI_BYTE;
    q.comm = tds_flat_rx_comm(); /* a warning's, tds_no_header: nothing else looks at it with a header */
    tds_recv_finish(&q, st);
}

void __attribute__((noinline, cold)) tds_flat_done_rc(int rc, tds_cell *c, MPI_Status *st)
{
    tds_rx_rc(rc);
    tds_flat_done(c, st);
    tds_rx_end(rc);
}
void __attribute__((noinline, cold)) tds_wire_done_rc(int rc, const uint8_t *wire, void *buf, size_t cub, int tsize,
                                                      MPI_Status *st)
{
    tds_rx_rc(rc);
    tds_wire_done(wire, buf, cub, tsize, st);
    tds_rx_end(rc);
}

void tds_plain_slow(MPI_Status *st)
{
    tds_recv_finish(&tds.plain_rq, st);
}

tds_rq *tds_hs_promote(long slot, MPI_Request r)
{
    tds_cell *c = tds.hs.slot[slot].v;
    tds_hs_drop(slot);
    tds_rq *q = tds_rq_new();
    q->scope = c == TDS_OOS ? 1 : 2; /* rq_scope's 1 + tds_poll_scope, as flat_cls_Irecv found it (busymemo.sh) */
    if (c == TDS_OOS)
        c = NULL;
    recv_fields(q, NULL, MPI_BYTE, MPI_COMM_WORLD, 0, 1, 1);
    q->comm = tds_flat_rx_comm(); /* after recv_fields: no map is looked up (the source is never translated) */
    if (c) { /* the entry reads the cell MPI writes into; its own bounce buffer waits (tds_rq_drop_refs) */
        q->buf = c->buf;
        q->ubytes = c->ub;
        q->tsize = c->tsize;
        q->copy = 1;
        q->cell = c;
        q->cell_bounce = q->bounce;
        q->cell_cap = q->bounce_cap;
        q->bounce = c->wire;
        q->bounce_cap = sizeof c->wire;
    }
    q->req = r;
    q->active = 1;
    tds_rq_insert(q);
    return q;
}

int tds_body_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                       MPI_Request *request)
{
    if (source == MPI_PROC_NULL || tds_dtnull_refused(datatype, 1))
        return PMPI_Recv_init(buf, count, datatype, source, tag, comm, request);
    return recv_post(1, buf, count, datatype, source, tag, comm, NULL, request);
}

void __attribute__((noinline, cold)) tds_part_failed(const char *what, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    PMPI_Error_string(rc, s, &n);
    tds_fatal("rank %d: %s of the header companion of a partitioned request failed: %s", tds.rank, what, s);
}

/* q completed (st: the program's status, left as MPI wrote it): its
 * companion too, and a receive is finished on a status of tdshim's */
void tds_part_done(tds_rq *q, MPI_Status *st)
{
    if (q->part == 2) {
        int rc = PMPI_Wait(&q->inner, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            tds_part_failed("completion", rc);
    }
    if (q->kind != TDS_RQ_RECV)
        return;
    MPI_Status hs = *TDS_CST4(st); /* the program's (tds_status4) */
    hs.MPI_SOURCE = q->peer;
    hs.MPI_TAG = q->tag;
    tds_st_set_bytes(&hs, q->ubytes + (q->part == 2 ? (size_t)tds.hdr_len : 0));
    tds_recv_finish(q, &hs);
}

/* the entry of r out of the table (a flat receive promoted first) */
tds_rq *tds_rq_remove(MPI_Request r)
{
    tds_rq *q = tds_rq_find(r);
    if (q)
        tds_rq_unlink(q);
    return q;
}
