/*
 * eagerx: sends that complete before their receive is posted (the eager
 * protocol), which a header must not turn into a deadlock (tests/mpi/eagerx.sh).
 *
 *   eagerx limits
 *       The largest message, in bytes, whose MPI_Isend completes with no
 *       receive posted for it: to the partner rank (rank ^ 1) while the
 *       partner sends one too, and to the rank itself. Found natively with
 *       PMPI calls on a duplicate of MPI_COMM_WORLD (tdshim does not see
 *       them), by bisection between 0 and 1 MiB. Rank 0 prints
 *       "peer=N self=M".
 *   eagerx peer N...
 *       For each size N: every rank MPI_Sends N bytes to its partner and
 *       then MPI_Recvs the partner's N bytes (a send-send exchange, correct
 *       MPI only while such a send completes eagerly); then the same with
 *       MPI_Isend + MPI_Wait before the MPI_Recv, and with a persistent
 *       send (MPI_Send_init, then twice MPI_Start + MPI_Wait + MPI_Recv).
 *   eagerx self N...
 *       For each size N: MPI_Send to itself, then MPI_Recv from itself.
 *
 * Each rank checks every byte and 16 guard bytes, the status's count,
 * source and tag, and says a line per exchange (rank 0 prints them in
 * rank order).
 *
 * An even number of ranks.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "say.h"
#include "tclock.h"

#define MAXB (1 << 20)

static unsigned char pat(int rank, int n, int i)
{
    return (unsigned char)(rank * 37 + n * 11 + i * 7 + (i >> 8));
}

/* natively, by PMPI on a communicator of its own: does a send of n bytes to
 * peer complete with no receive posted for it (peer sends one back at the
 * same time unless it is this rank)? Every rank answers for its own send;
 * the answer is the job's minimum, so every rank bisects alike. */
static int completes_alone(MPI_Comm c, int rank, int peer, int n, unsigned char *sb, unsigned char *rb)
{
    MPI_Request r;
    int done = 0, all;
    PMPI_Isend(sb, n, MPI_BYTE, peer, 1, c, &r);
    double t0 = wall_now();
    while (!done && wall_now() - t0 < 0.2)
        PMPI_Test(&r, &done, MPI_STATUS_IGNORE);
    PMPI_Recv(rb, n, MPI_BYTE, peer, 1, c, MPI_STATUS_IGNORE);
    if (!done)
        PMPI_Wait(&r, MPI_STATUS_IGNORE);
    (void)rank;
    PMPI_Allreduce(&done, &all, 1, MPI_INT, MPI_MIN, c);
    return all;
}

static int limit(MPI_Comm c, int rank, int peer, unsigned char *sb, unsigned char *rb)
{
    int lo = 0, hi = MAXB; /* completes alone at lo; hi: not known to */
    if (completes_alone(c, rank, peer, hi, sb, rb))
        return hi;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (completes_alone(c, rank, peer, mid, sb, rb))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void check(const char *what, int n, int src, int rc, const MPI_Status *st, const unsigned char *rb)
{
    int cnt = -1, bad = 0;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    for (int i = 0; i < n; i++)
        bad += rb[i] != pat(src, n, i);
    for (int i = n; i < n + 16; i++)
        bad += rb[i] != 0xee;
    say("%s n=%d rc=%d count=%d src=%d tag=%d bad=%d\n", what, n, rc, cnt, st->MPI_SOURCE, st->MPI_TAG, bad);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size % 2 || argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: eagerx limits | eagerx peer|self N... (an even number of ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = rank ^ 1;
    unsigned char *sb = malloc(MAXB + 16), *rb = malloc(MAXB + 16);
    if (!sb || !rb)
        MPI_Abort(MPI_COMM_WORLD, 3);
    memset(sb, 1, MAXB);
    if (!strcmp(argv[1], "limits")) {
        MPI_Comm c;
        PMPI_Comm_dup(MPI_COMM_WORLD, &c);
        int p = limit(c, rank, peer, sb, rb), s = limit(c, rank, rank, sb, rb);
        if (rank == 0)
            printf("peer=%d self=%d\n", p, s);
        PMPI_Comm_free(&c);
    } else {
        int self = !strcmp(argv[1], "self");
        if (!self && strcmp(argv[1], "peer"))
            MPI_Abort(MPI_COMM_WORLD, 2);
        for (int a = 2; a < argc; a++) {
            int n = atoi(argv[a]);
            if (n < 0 || n > MAXB)
                MPI_Abort(MPI_COMM_WORLD, 2);
            for (int i = 0; i < n; i++)
                sb[i] = pat(rank, n, i);
            MPI_Status st;
            int rc;
            memset(rb, 0xee, (size_t)n + 16);
            if (self) {
                MPI_Send(sb, n, MPI_BYTE, rank, 5, MPI_COMM_WORLD);
                rc = MPI_Recv(rb, n, MPI_BYTE, rank, 5, MPI_COMM_WORLD, &st);
                check("self", n, rank, rc, &st, rb);
                continue;
            }
            MPI_Send(sb, n, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
            rc = MPI_Recv(rb, n, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &st);
            check("send-send", n, peer, rc, &st, rb);

            memset(rb, 0xee, (size_t)n + 16);
            MPI_Request r;
            MPI_Isend(sb, n, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            rc = MPI_Recv(rb, n, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &st);
            check("isend-wait", n, peer, rc, &st, rb);

            MPI_Send_init(sb, n, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &r);
            for (int k = 0; k < 2; k++) {
                memset(rb, 0xee, (size_t)n + 16);
                MPI_Start(&r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
                rc = MPI_Recv(rb, n, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &st);
                check("persistent", n, peer, rc, &st, rb);
            }
            MPI_Request_free(&r);
        }
        /* the transcripts, in rank order */
        int *len = malloc((size_t)size * sizeof *len), *off = malloc((size_t)size * sizeof *off), mine = (int)outn;
        MPI_Gather(&mine, 1, MPI_INT, len, 1, MPI_INT, 0, MPI_COMM_WORLD);
        int tot = 0;
        if (rank == 0)
            for (int i = 0; i < size; i++) {
                off[i] = tot;
                tot += len[i];
            }
        char *all = rank == 0 ? malloc((size_t)tot + 1) : NULL;
        MPI_Gatherv(out, mine, MPI_CHAR, all, len, off, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            fwrite(all, 1, (size_t)tot, stdout);
            free(all);
        }
        free(len);
        free(off);
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
