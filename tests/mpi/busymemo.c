/* A slot of an MPI_Testany array that held a receive in scope, then one out
 * of scope, while the rank works (tests/mpi/busymemo.sh). An empty
 * MPI_Testany remembers the index of the receive in scope it found
 * (tds_complete.c, test_missed: tds_t.missed_at) and asks that index first
 * next time; the answer must be asked afresh, as the slot may since hold
 * a receive that cannot deliver work.
 *
 * Every rank but 0 tests {work receive (tag 1, in scope), MPI_REQUEST_NULL}
 * with MPI_Testany until rank 0's work message comes: those empty polls
 * are idle polls in scope, and the memo points at slot 0. It then posts in
 * slot 0 a receive on tag 3 (TDSHIM_IGNORE_TAGS=3: out of scope; nothing
 * is ever sent on it) and works WORK_S seconds of CPU in CHUNK_US pieces,
 * testing the array with MPI_Testany between pieces, as a program that
 * serves steal requests while it works. Those polls are out of scope: the
 * rank is busy. It then sends its result to rank 0 (tag 1), cancels the
 * tag-3 receive, and tests its notification receive (tag 2,
 * TDSHIM_NOTIFY=tag:2) until the notification comes or DEADLINE seconds
 * pass. Rank 0 sends the work, then waits with MPI_Waitany on the results
 * and its notification receive together: a notification before the last
 * result is premature (a rank was judged passive while it worked).
 * Prints per rank:
 *   busymemo rank=R before=N early=0|1 notified=0|1
 * before: the empty MPI_Testany polls before the work came (the memo set:
 * the case exercised if > 0), early (rank 0): notified before every
 * result came. */
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
    double work_s = argc > 1 ? atof(argv[1]) : 0.2;
    double chunk_s = (argc > 2 ? atof(argv[2]) : 20.0) * 1e-6;
    double deadline = argc > 3 ? atof(argv[3]) : 20.0;
    long before = 0;
    int early = 0, notified = 0;
    if (rank == 0) {
        sleep_us(5000); /* the others test their work receive empty first */
        for (int d = 1; d < size; d++)
            MPI_Send(&d, 1, MPI_INT, d, 1, MPI_COMM_WORLD);
        MPI_Request *r = malloc((size_t)size * sizeof *r);
        int *res = malloc((size_t)size * sizeof *res);
        for (int d = 1; d < size; d++)
            MPI_Irecv(&res[d], 1, MPI_INT, d, 1, MPI_COMM_WORLD, &r[d - 1]);
        MPI_Irecv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &r[size - 1]);
        int left = size - 1;
        double t0 = wall_now();
        while (left > 0 || !notified) {
            int i, flag = 0;
            if (left > 0) {
                MPI_Waitany(size, r, &i, MPI_STATUS_IGNORE);
                flag = 1;
            } else {
                MPI_Testany(size, r, &i, &flag, MPI_STATUS_IGNORE);
                if (!flag && wall_now() - t0 > deadline)
                    break;
            }
            if (!flag || i == MPI_UNDEFINED)
                continue;
            if (i == size - 1) {
                notified = 1;
                early = left > 0;
            } else {
                if (res[i + 1] != 2 * (i + 1)) {
                    fprintf(stderr, "busymemo: rank %d's result %d\n", i + 1, res[i + 1]);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                left--;
            }
        }
        if (!notified) {
            MPI_Cancel(&r[size - 1]);
            MPI_Wait(&r[size - 1], MPI_STATUS_IGNORE);
        }
        free(res);
        free(r);
    } else {
        int v = -1, flag = 0, i, junk;
        MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        MPI_Irecv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[0]);
        while (!flag) {
            MPI_Testany(2, r, &i, &flag, MPI_STATUS_IGNORE);
            before += !flag;
        }
        MPI_Irecv(&junk, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &r[0]);
        double t0 = cpu_now();
        while (cpu_now() - t0 < work_s) {
            use_cpu(chunk_s);
            MPI_Testany(2, r, &i, &flag, MPI_STATUS_IGNORE);
            if (flag) {
                fprintf(stderr, "busymemo: rank %d: a message on tag 3\n", rank);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        v *= 2;
        MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_Cancel(&r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        MPI_Request n;
        MPI_Irecv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &n);
        double w0 = wall_now();
        flag = 0;
        while (!flag && wall_now() - w0 < deadline)
            MPI_Test(&n, &flag, MPI_STATUS_IGNORE);
        if (!flag) {
            MPI_Cancel(&n);
            MPI_Wait(&n, MPI_STATUS_IGNORE);
        }
        notified = flag;
    }
    printf("busymemo rank=%d before=%ld early=%d notified=%d\n", rank, before, early, notified);
    MPI_Finalize();
    return 0;
}
