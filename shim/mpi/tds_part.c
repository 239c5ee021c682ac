/*
 * Partitioned communication (MPI-4.0; tds_part.h).
 */
#include "tds_part.h"
#include "tds_recv.h"
#include "tds_send.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------- partitioned communication (MPI-4.0) */

/*
 * A partitioned message is one primary message (DESIGN.md §1), counted
 * once per round: sent when MPI_Start begins the round (the partitions
 * follow as the program readies them: counting at the start only keeps
 * the message in transit longer, never shorter), received when the
 * receive request completes (every partition arrived; MPI_Parrived on the
 * way passes through and counts nothing). MPI moves the partitions from
 * the program's buffer itself, so the message cannot carry tdshim's header
 * inline. Header-free (README "Header-free mode"), nothing more is needed:
 * the receiver derives everything from the envelope, as for any message.
 *
 * With a header (bcj, cda, hcda, edod, xulau; any algorithm under
 * TDSHIM_PIGGYBACK=copy or datatype) each partitioned request of the
 * program gets a companion: a partitioned request of tdshim's, 1 partition
 * of hdr_len bytes (q->hdr), same peer, tag and communicator, initialized
 * in the same call right after the program's. MPI-4.0 §4.2.1 (MPI_PSEND_INIT)
 * and §4.3 ("Order"): partitioned initialization calls match only
 * partitioned initialization calls, in the order they are made for a
 * (communicator, source, tag) (MPI_PRECV_INIT takes no wildcards). The
 * k-th init of each side to the other is then the program's j-th request
 * on both sides or the companion of its j-th on both: the program's
 * matching is untouched and each companion meets its request's companion,
 * whatever the partition counts (tests/mpi/partitioned.sh: two requests
 * per peer and tag each way, other partition counts on each side). Per
 * round:
 *  - MPI_Start(all) of the send: the header is made (tds_send_start:
 *    counted, the algorithm's piggyback), the companion started and its
 *    one partition readied at once, before the program can ready any of
 *    its own (tds_part_start);
 *  - MPI_Start(all) of the receive: the companion is started too;
 *  - completion of the receive (every Wait/Test call, Request_get_status):
 *    its companion is completed (it was readied at the sender's Start, so
 *    it is on its way: a few bytes) and its header taken by tds_recv_finish
 *    exactly as an ordinary message's (tds_part_done);
 *  - completion of the send: its companion is completed too.
 * MPI_Request_free of the program's (inactive: freeing an active one is
 * erroneous, MPI-4.0 §4.2.1) frees the companion (tds_part_free).
 *
 * The program's status of a partitioned receive is MPI's, untouched, in
 * both modes (no header in the message): MPICH 4.0.2's
 * MPI_Request_get_status on one that has completed writes no source, tag
 * nor count (0), and its Wait/Test calls do; so tdshim finishes it on a
 * status of its own (the source and tag it was initialized with, the
 * bytes it describes) and never replays one (tds_saved_status).
 * q->part: 1 a partitioned request, 2 one with a companion (`inner`);
 * 0 in every other entry, free ones too.
 */

/* the companion of q, the program's partitioned request just made */
static int part_companion(tds_rq *q, int send, int peer, int tag, MPI_Comm comm)
{
    int rc = send ? PMPI_Psend_init(q->hdr, 1, tds.hdr_len, MPI_BYTE, peer, tag, comm, MPI_INFO_NULL, &q->inner)
                  : PMPI_Precv_init(q->hdr, 1, tds.hdr_len, MPI_BYTE, peer, tag, comm, MPI_INFO_NULL, &q->inner);
    if (rc != MPI_SUCCESS) {
        PMPI_Request_free(&q->req);
        return rc;
    }
    q->part = 2;
    return MPI_SUCCESS;
}

/* MPI_Start of q (tds_complete.c start_one, after its header was made) */
void tds_part_start(tds_rq *q)
{
    int rc = PMPI_Start(&q->inner);
    if (rc == MPI_SUCCESS && q->kind == TDS_RQ_SEND)
        rc = PMPI_Pready(0, q->inner);
    if (rc != MPI_SUCCESS)
        tds_part_failed("MPI_Start", rc);
}

/* the program frees q: its companion goes too (waited for first, should
 * the program free an active request, which MPI forbids) */
void tds_part_free(tds_rq *q)
{
    if (q->part == 2) {
        PMPI_Wait(&q->inner, MPI_STATUS_IGNORE);
        PMPI_Request_free(&q->inner);
    }
    q->part = 0;
}

/* the user bytes of a partitioned message (partitions x count x size) */
static size_t partitioned_bytes(int partitions, MPI_Count count, MPI_Datatype type, int *tsize, uint8_t *plain)
{
    size_t one = type_bytes(1, type, tsize, plain);
    return partitions > 0 && count > 0 ? (size_t)partitions * (size_t)count * one : 0;
}

int tds_body_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    tds_rq *q = tds_rq_new();
    int rc = PMPI_Psend_init(buf, partitions, count, datatype, dest, tag, comm, info, &q->req);
    if (rc != MPI_SUCCESS || dest == MPI_PROC_NULL) {
        if (rc == MPI_SUCCESS)
            *request = q->req;
        tds_rq_release(q);
        return rc;
    }
    /* as an ordinary persistent send (tds_send_post): to another job's rank,
     * as written and no companion */
    int foreign = tds_wrank(comm, dest) < 0;
    q->foreign = !foreign ? 0 : tds_comm_foreign(comm) ? 1 : 2;
    q->part = 1;
    if (!tds.nohdr && !foreign && (rc = part_companion(q, 1, dest, tag, comm)) != MPI_SUCCESS) {
        q->part = 0;
        tds_rq_release(q);
        return rc;
    }
    q->kind = TDS_RQ_SEND;
    q->persistent = 1;
    q->copy = 0;
    q->buf = (void *)buf;
    q->type = datatype;
    q->peer = dest;
    q->tag = tag;
    q->comm = comm;
    q->ubytes = partitioned_bytes(partitions, count, datatype, &q->tsize, &q->plain);
    tds_rq_insert(q);
    *request = q->req;
    return MPI_SUCCESS;
}

int tds_body_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (source == MPI_PROC_NULL)
        return PMPI_Precv_init(buf, partitions, count, datatype, source, tag, comm, info, request);
    tds_rq *q = tds_rq_new();
    int tsize;
    uint8_t plain;
    size_t ub = partitioned_bytes(partitions, count, datatype, &tsize, &plain);
    /* the data lands in the program's buffer, MPI's doing: never a bounce
     * buffer (copy 0; "plain" so that recv_fields duplicates no type) */
    recv_fields(q, buf, datatype, comm, ub, tsize, 1);
    q->copy = 0;
    q->persistent = 1;
    q->peer = source;
    q->tag = tag;
    int rc = PMPI_Precv_init(buf, partitions, count, datatype, source, tag, comm, info, &q->req);
    if (rc == MPI_SUCCESS && !tds.nohdr && !q->foreign)
        rc = part_companion(q, 0, source, tag, comm);
    else if (rc == MPI_SUCCESS)
        q->part = 1;
    if (rc != MPI_SUCCESS)
        q->part = 0;
    return recv_posted(q, rc, 1, request);
}
