/*
 * Pairs: MPI_Sendrecv, MPI_Sendrecv_replace, and MPI_Isendrecv(_replace)
 * as generalized requests finished by tds_pairs_progress.
 */
#include "tds_pair.h"
#include "tds_recv.h"
#include "tds_send.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- combined */

int tds_body_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                      MPI_Status *status)
{
    MPI_Request sr;
    int rc = tds_body_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &sr);
    if (rc != MPI_SUCCESS)
        return rc;
    int rrc = tds_body_Recv(recvbuf, recvcount, recvtype, source, recvtag, comm, status);
    rc = tds_body_Wait(&sr, MPI_STATUS_IGNORE);
    return rrc != MPI_SUCCESS ? rrc : rc;
}

/* The data of a send-replace packed into q's bounce buffer, to be sent as
 * (q->bounce, *n, *t): MPI_PACKED, or for more than INT_MAX bytes (an
 * MPI-4.0 large count) one element of a contiguous type of them, which
 * the caller frees (*t != MPI_PACKED). */
static int pack_replace(tds_rq *q, const void *buf, int count, MPI_Datatype type, int *n, MPI_Datatype *t)
{
    size_t size, pos = 0;
    int rc;
    *t = MPI_PACKED;
#if TDS_BIG_BYTES
    MPI_Count psize = 0;
    rc = PMPI_Pack_size_c(count, type, tds.self, &psize);
#else
    int psize = 0;
    rc = PMPI_Pack_size(count, type, tds.self, &psize);
#endif
    if (rc != MPI_SUCCESS)
        return rc;
    size = psize > 0 ? (size_t)psize : 1;
    rc = tds_pack_any(buf, (size_t)count, type, size > TDS_WIRE_MAX ? tds_big_bounce(q, size) : rq_bounce(q, size), size,
                  &pos);
    *n = (int)pos;
    *t = MPI_PACKED;
    if (rc == MPI_SUCCESS && pos > INT_MAX) {
        *n = 1;
        *t = tds_big_type((MPI_Count)pos, MPI_PACKED);
    }
    return rc;
}

/* the outgoing data is packed first (a copy is unavoidable: the receive
 * overwrites the buffer), then the exchange is a Sendrecv */
int tds_body_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                              int recvtag, MPI_Comm comm, MPI_Status *status)
{
    int n;
    MPI_Datatype t;
    tds_rq *q = tds_rq_new();
    q->owns_type = 0;
    q->cmap = NULL;
    int rc = pack_replace(q, buf, count, datatype, &n, &t);
    if (rc == MPI_SUCCESS)
        rc = tds_body_Sendrecv(q->bounce, n, t, dest, sendtag, buf, count, datatype, source, recvtag, comm, status);
#ifdef MPICH_VERSION
    /* MPICH 4.0's own MPI_Sendrecv_replace sets MPI_ERROR (its MPI_Sendrecv
     * leaves it, as Open MPI's both do; tests/mpi/stalign.sh) */
    if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
        tds_st_set_error(status, MPI_SUCCESS);
#endif
    if (t != MPI_PACKED)
        PMPI_Type_free(&t);
    tds_rq_release(q);
    return rc;
}

/* ------------------------------------------------- MPI_Isendrecv (MPI-4.0) */

/*
 * "Pairs": MPI_Isendrecv and MPI_Isendrecv_replace are tdshim's own
 * MPI_Irecv and MPI_Isend (the receive posted first, as MPICH does; each
 * counted, with its header, as any other) under one generalized request
 * (MPI_Grequest_start), the handle the program holds. tds_pairs_progress,
 * run by every completion call (tds_poll_enter) and every turn of a
 * waiting loop (tds_wait_step) while a pair is pending, tests the two with
 * tdshim's completion (the receive is counted there, once) and completes
 * the generalized request when both have; the program's Wait/Test then
 * get the receive's status (as the program sees it) from pair_query. A
 * blocking completion call on a pair is a waiting loop, passive as one on
 * a receive (tds_complete.c, pending_recv); a pair the program frees
 * before it completes is finished as an orphan. Cancelling a pair does
 * not cancel it (MPI_Test_cancelled says so).
 */
static int pair_query(void *extra, MPI_Status *st)
{
    *st = ((tds_rq *)extra)->saved;
    return MPI_SUCCESS;
}
static int pair_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}
static int pair_cancel(void *extra, int complete)
{
    (void)extra, (void)complete;
    return MPI_SUCCESS;
}

/* one of a pair's requests: 1 once it has completed (and been finished) */
static int pair_part_done(MPI_Request *r, MPI_Status *st)
{
    if (*r == MPI_REQUEST_NULL)
        return 1;
    tds_rq *q = tds_rq_find(*r);
    int flag = 0;
    PMPI_Test(r, &flag, st);
    if (flag && q) {
        tds_complete(q, st);
        tds_recv_err(0); /* not told (README "Limitations") */
    }
    return flag;
}

void tds_pairs_progress(void)
{
    if (tds.in_pairs)
        return; /* reached again from a completion below */
    tds.in_pairs = 1;
    for (tds_rq **p = &tds.pairs; *p;) {
        tds_rq *q = *p;
        MPI_Status st;
        int rdone = pair_part_done(&q->rreq, &q->saved), sdone = pair_part_done(&q->inner, &st);
        if (!rdone || !sdone) {
            p = &q->dnext;
            continue;
        }
        *p = q->dnext;
        tds.npairs--;
        tds.nheld--;
        PMPI_Grequest_complete(q->req);
    }
    tds.in_pairs = 0;
}

/* sbuf: the data to send (for _replace, packed in the entry's bounce buffer) */
static int pair_post(tds_rq *q, const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                     int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Request *request)
{
    q->kind = TDS_RQ_PAIR;
    q->cmap = NULL;
    q->owns_type &= TDS_OWN_BIG; /* a large send-replace's bounce buffer (pack_replace) */
    q->inner = q->rreq = MPI_REQUEST_NULL;
    int rc = tds_body_Irecv(rbuf, rcount, rtype, source, rtag, comm, &q->rreq);
    if (rc == MPI_SUCCESS) {
        rc = tds_body_Isend(sbuf, scount, stype, dest, stag, comm, &q->inner);
        if (rc != MPI_SUCCESS) { /* as natively: nothing stays posted (a cancelled receive is not counted) */
            tds_body_Cancel(&q->rreq);
            tds_body_Wait(&q->rreq, MPI_STATUS_IGNORE);
        }
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Grequest_start(pair_query, pair_free, pair_cancel, q, &q->req);
    if (rc != MPI_SUCCESS) {
        tds_rq_release(q);
        return rc;
    }
    PMPI_Status_set_elements(&q->saved, MPI_BYTE, 0);
    tds_rq_insert(q);
    q->dnext = tds.pairs;
    tds.pairs = q;
    tds.npairs++;
    tds.nheld++;
    *request = q->req;
    return MPI_SUCCESS;
}

int tds_body_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                       MPI_Request *request)
{
    return pair_post(tds_rq_new(), sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                     source, recvtag, comm, request);
}

/* the data to send is packed first (as tds_body_Sendrecv_replace does), into
 * the entry's bounce buffer, which lives until the pair completes */
int tds_body_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                               int recvtag, MPI_Comm comm, MPI_Request *request)
{
    int n;
    MPI_Datatype t = MPI_PACKED;
    tds_rq *q = tds_rq_new();
    q->owns_type = 0;
    q->cmap = NULL;
    int rc = pack_replace(q, buf, count, datatype, &n, &t);
    if (rc == MPI_SUCCESS)
        rc = pair_post(q, q->bounce, n, t, dest, sendtag, buf, count, datatype, source, recvtag, comm, request);
    else
        tds_rq_release(q);
    if (t != MPI_PACKED)
        PMPI_Type_free(&t); /* the send holds it */
    return rc;
}
