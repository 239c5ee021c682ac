/* A busy rank's polls of receives out of scope, by every way a program
 * makes them, while the rank works (tests/mpi/busymemo.sh): none may count
 * as an idle poll, whichever of tdshim's shortcuts answers it.
 *
 * Usage: busymemo WORK_S CHUNK_US DEADLINE MODE
 *
 * Every rank but 0 waits for rank 0's work message (tag 1, in scope),
 * polling it empty first, then posts a receive on tag 3 (TDSHIM_IGNORE_TAGS=3:
 * out of scope) and works WORK_S seconds of CPU in CHUNK_US pieces,
 * polling that receive between pieces, as a program that serves steal
 * requests while it works. Rank 0 sends each of them one message on tag 3
 * (a steal request: not primary) 50 ms after the work, which the rank
 * takes by that poll and answers by posting the receive again. The rank
 * then sends its result to rank 0 (tag 1), cancels the tag-3 receive, and
 * tests its notification receive (tag 2, TDSHIM_NOTIFY=tag:2) until the
 * notification comes or DEADLINE seconds pass. Rank 0 waits with
 * MPI_Waitany on the results and its notification receive together: a
 * notification before the last result is premature (a rank was judged
 * passive while it worked). MODE, how the busy rank polls:
 *   testany    MPI_Testany of {receive, MPI_REQUEST_NULL}, its work
 *              receive polled the same way before: an empty MPI_Testany
 *              asks first about the slot where the last one found a
 *              receive in scope (tds_complete.c, test_missed's memo), and
 *              the slot now holds one out of scope
 *   test       MPI_Test of the receive (the flat entries' out-of-scope
 *              tests and their steal request: flat_oos_empty,
 *              ftest_ignored)
 *   slots      MPI_Test of the first of 9 receives on tag 3: no longer
 *              near the end of tdshim's ring of flat receives, found among
 *              its slots (plain_scope)
 *   getstatus  MPI_Request_get_status, then MPI_Test once it is done: a
 *              flat receive becomes a table entry (tds_hs_promote), which
 *              must keep its scope
 * Prints per rank:
 *   busymemo rank=R before=N steal=0|1 early=0|1 notified=0|1
 * before: the empty polls of the work receive (testany: the memo set, the
 * case exercised if > 0), steal: the tag-3 message came during the work,
 * early (rank 0): notified before every result came. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    const char *m = argc > 4 ? argv[4] : "testany";
    enum { M_TESTANY, M_TEST, M_SLOTS, M_GETSTATUS } mode = M_TESTANY;
    if (strcmp(m, "test") == 0)
        mode = M_TEST;
    else if (strcmp(m, "slots") == 0)
        mode = M_SLOTS;
    else if (strcmp(m, "getstatus") == 0)
        mode = M_GETSTATUS;
    else if (strcmp(m, "testany") != 0) {
        fprintf(stderr, "busymemo: MODE: testany, test, slots or getstatus, not %s\n", m);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long before = 0;
    int early = 0, notified = 0, steal = 0;
    if (rank == 0) {
        sleep_us(5000); /* the others test their work receive empty first */
        for (int d = 1; d < size; d++)
            MPI_Send(&d, 1, MPI_INT, d, 1, MPI_COMM_WORLD);
        sleep_us(50000); /* the steal requests, while they work */
        int seven = 7;
        for (int d = 1; d < size; d++)
            MPI_Send(&seven, 1, MPI_INT, d, 3, MPI_COMM_WORLD);
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
        int v = -1, flag = 0, i, junk[9];
        MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}, q[9];
        MPI_Irecv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[0]);
        while (!flag) {
            MPI_Testany(2, r, &i, &flag, MPI_STATUS_IGNORE);
            before += !flag;
        }
        int nq = mode == M_SLOTS ? 9 : 1;
        for (int k = 0; k < nq; k++)
            MPI_Irecv(&junk[k], 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &q[k]);
        double t0 = cpu_now();
        while (cpu_now() - t0 < work_s) {
            use_cpu(chunk_s);
            flag = 0;
            if (mode == M_TESTANY) {
                r[0] = q[0];
                MPI_Testany(2, r, &i, &flag, MPI_STATUS_IGNORE);
                q[0] = r[0];
                flag = flag && i == 0;
            } else if (mode == M_GETSTATUS) {
                MPI_Request_get_status(q[0], &flag, MPI_STATUS_IGNORE);
                if (flag) {
                    int done = 0;
                    MPI_Test(&q[0], &done, MPI_STATUS_IGNORE);
                    if (!done) {
                        fprintf(stderr, "busymemo: rank %d: MPI_Test of a receive done not done\n", rank);
                        MPI_Abort(MPI_COMM_WORLD, 1);
                    }
                }
            } else {
                MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
            }
            if (flag) { /* the steal request, answered by a receive posted again */
                if (junk[0] != 7 || steal) {
                    fprintf(stderr, "busymemo: rank %d: a message on tag 3 with %d (steal %d)\n", rank, junk[0],
                            steal);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                steal = 1;
                MPI_Irecv(&junk[0], 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &q[0]);
            }
        }
        v *= 2;
        MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        for (int k = 0; k < nq; k++) {
            MPI_Cancel(&q[k]);
            MPI_Wait(&q[k], MPI_STATUS_IGNORE);
        }
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
    printf("busymemo rank=%d before=%ld steal=%d early=%d notified=%d\n", rank, before, steal, early, notified);
    MPI_Finalize();
    return 0;
}
