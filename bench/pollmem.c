/*
 * pollmem: a loop that polls once per item of work, as hpcc's
 * MPIRandomAccess does: each rank makes U random 8-byte updates into a
 * table of T bytes (its memory traffic evicts what a poll touches when T
 * is large), then tests its standing MPI_Irecv(ANY_SOURCE, ANY_TAG) with
 * MPI_Testany, and every 1024 polls sends an 8-byte message to the next
 * rank. At the end every message is received. Prints the slowest rank's
 * time per poll. bench/RESULTS.md, "The poll clock".
 *
 *   mpirun -n 2 bench/pollmem TABLE-BYTES POLLS [UPDATES-PER-POLL]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3 || atol(argv[1]) < 8 || atol(argv[2]) < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: pollmem TABLE-BYTES POLLS [UPDATES-PER-POLL]\n");
        MPI_Finalize();
        return 2;
    }
    size_t tsz = (size_t)atol(argv[1]) / 8;
    long polls = atol(argv[2]);
    int upd = argc > 3 ? atoi(argv[3]) : 1;
    uint64_t *t = malloc(tsz * sizeof *t);
    if (!t) {
        fprintf(stderr, "pollmem: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < tsz; i++)
        t[i] = i;
    uint64_t x = 1 + (uint64_t)rank, rbuf = 0, sbuf = 0;
    MPI_Request r, s = MPI_REQUEST_NULL;
    int idx, fl;
    long got = 0, sent = 0;
    MPI_Irecv(&rbuf, 1, MPI_UINT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < polls; i++) {
        for (int u = 0; u < upd; u++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            t[(x >> 20) % tsz] ^= x;
        }
        MPI_Testany(1, &r, &idx, &fl, MPI_STATUS_IGNORE);
        if (fl) {
            got++;
            MPI_Irecv(&rbuf, 1, MPI_UINT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
        }
        if ((i & 1023) == 0) {
            MPI_Wait(&s, MPI_STATUS_IGNORE);
            sbuf = (uint64_t)i;
            MPI_Isend(&sbuf, 1, MPI_UINT64_T, (rank + 1) % np, 1, MPI_COMM_WORLD, &s);
            sent++;
        } else if (s != MPI_REQUEST_NULL) {
            MPI_Test(&s, &fl, MPI_STATUS_IGNORE);
        }
    }
    double dt = MPI_Wtime() - t0, mx = 0;
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    /* every rank sent as many as it receives (from the rank before it) */
    while (got < sent) {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (++got < sent)
            MPI_Irecv(&rbuf, 1, MPI_UINT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
    }
    if (got > sent) { /* more arrived than were sent: cannot be */
        fprintf(stderr, "pollmem: rank %d received %ld, sent %ld\n", rank, got, sent);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (r != MPI_REQUEST_NULL) {
        MPI_Cancel(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Reduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    uint64_t cs = 0;
    for (size_t i = 0; i < tsz; i++)
        cs += t[i];
    if (rank == 0)
        printf("pollmem %.1f ns/poll (table %zu B, %ld polls, %d updates each; checksum %llx)\n", mx / (double)polls * 1e9,
               tsz * 8, polls, upd, (unsigned long long)cs);
    free(t);
    MPI_Finalize();
    return 0;
}
