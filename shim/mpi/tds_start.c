/*
 * MPI_Start and MPI_Startall: a persistent request begins a new round. A
 * send gets a new header (tds_send_start), a receive is active again, a
 * partitioned request's companion starts too (tds_part_start).
 */
#include "tds_part.h"
#include "tds_recv.h"
#include "tds_send.h"

/* the entry of a persistent request the program starts: a send gets its
 * header (a new message), a receive is active again */
static void start_one(MPI_Request r)
{
    tds_rq *q = tds_rq_find(r);
    if (!q)
        return;
    if (q->kind == TDS_RQ_SEND) {
        tds_send_start(q);
    } else {
        q->active = 1;
        q->finished = 0;
        if (!tds.nohdr) /* no header until MPI writes one (MPICH writes nothing when it truncates) */
            *(q->copy ? (uint8_t *)q->bounce : q->hdr) = 0;
    }
    if (__builtin_expect(q->part == 2, 0)) /* partitioned, with a header: its companion (tds_part.c) */
        tds_part_start(q);
}

int tds_body_Start(MPI_Request *request)
{
    start_one(*request);
    int rc = PMPI_Start(request);
    tds_after_body(); /* an on_send's request (td_ctx.want_poll) */
    return rc;
}

int tds_body_Startall(int count, MPI_Request array_of_requests[])
{
    for (int i = 0; i < count; i++)
        start_one(array_of_requests[i]);
    int rc = PMPI_Startall(count, array_of_requests);
    tds_after_body();
    return rc;
}
