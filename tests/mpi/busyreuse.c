/* A receive out of scope done, then the notification receive in its place
 * (tests/mpi/busyreuse.sh). Every rank but 0 posts a receive on tag 3
 * (TDSHIM_IGNORE_TAGS=3: out of scope) and tests it with MPI_Test until
 * rank 0's message comes, ROUNDS times; a busy rank's test of such a
 * receive takes the entry the last test found without the table lookup
 * (tds_complete.c, test_busy) while that entry holds the handle and is out
 * of scope. Then every rank posts its notification receive (tag 2,
 * TDSHIM_NOTIFY=tag:2: in scope), which MPI gives the handle the last
 * receive freed, and tests it until tdshim's notification comes, under
 * TDSHIM_IDLE=test: those empty tests must count as idle polls, or no rank
 * is ever judged passive and no notification comes. Prints per rank:
 *   busyreuse rank=R reused=0|1 notified=0|1 polls=N
 * reused: the notification receive has the tag-3 receive's handle (the
 * case exercised); notified=0 after DEADLINE seconds without it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "tclock.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    double deadline = argc > 2 ? atof(argv[2]) : 20.0;
    MPI_Request last = MPI_REQUEST_NULL;
    for (int k = 0; k < rounds; k++) {
        if (rank == 0) {
            use_cpu(0.002); /* the others test their receive empty first */
            for (int d = 1; d < size; d++)
                MPI_Send(&k, 1, MPI_INT, d, 3, MPI_COMM_WORLD);
        } else {
            int v = -1, flag = 0;
            MPI_Request r;
            MPI_Irecv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &r);
            last = r;
            while (!flag)
                MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            if (v != k) {
                fprintf(stderr, "busyreuse: rank %d round %d got %d\n", rank, k, v);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
    MPI_Request n;
    MPI_Irecv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &n);
    int reused = rank != 0 && n == last, flag = 0;
    long polls = 0;
    double t0 = wall_now();
    while (!flag && wall_now() - t0 < deadline) {
        MPI_Test(&n, &flag, MPI_STATUS_IGNORE);
        polls++;
    }
    if (!flag) {
        MPI_Cancel(&n);
        MPI_Wait(&n, MPI_STATUS_IGNORE);
    }
    printf("busyreuse rank=%d reused=%d notified=%d polls=%ld\n", rank, reused, flag, polls);
    MPI_Finalize();
    return 0;
}
