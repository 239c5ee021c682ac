/*
 * Requests an MPI library frees without reporting them (tests/mpi/lostreq.sh).
 * Open MPI 4.1: an MPI_Testany or MPI_Waitany that returns one request's
 * error (here MPI_ERR_TRUNCATE, under MPI_ERRORS_RETURN) also frees every
 * other request of the array that completed in error, unreported. Rank 0
 * posts two receives of 5 ints, ranks 1 and 2 each send it 20 (both
 * truncated), and rank 0 makes one MPI_Testany (mode t) or MPI_Waitany (w)
 * once both are there (modes p and q: rank 1's receive completed first,
 * then a persistent receive of 5 ints that rank 1 sends 20, completed by
 * MPI_Wait or MPI_Test). Then it takes 200 windows of 6 receives of 4 ints
 * (MPI_Waitall, or MPI_Test on each in turn), whose handles MPI reuses,
 * and 6 more receives one at a time; ranks 1 and 2 send them. Printed: the
 * first call's code, index and handles, and sums over the received data
 * (order-free: the two senders' messages interleave).
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, mode = argc > 1 ? argv[1][0] : 't';
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3) {
        if (rank == 0)
            fprintf(stderr, "lostreq: run on 3 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int big[20];
    for (int i = 0; i < 20; i++)
        big[i] = rank * 100 + i;
    if (rank == 0) {
        int in[2][5], idx = -1, flag = 0, rc, arrived = 0;
        MPI_Request r[2];
        MPI_Status st;
        MPI_Irecv(in[0], 5, MPI_INT, 1, 1, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(in[1], 5, MPI_INT, 2, 1, MPI_COMM_WORLD, &r[1]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD); /* both sent (eager: 80 bytes) */
        /* both arrived: a probe for another tag progresses until the
         * senders' third message (tag 4, after the big ones) is there */
        while (!arrived)
            MPI_Iprobe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &arrived, &st);
        MPI_Recv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st);
        MPI_Recv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st);
        if (mode == 'p' || mode == 'q') {
            /* a persistent receive that truncates, completed by MPI_Wait
             * (p) or MPI_Test (q): Open MPI 4.1 frees it there too */
            MPI_Request pr;
            MPI_Wait(&r[1], &st);
            MPI_Recv_init(in[1], 5, MPI_INT, 1, 5, MPI_COMM_WORLD, &pr);
            MPI_Start(&pr);
            MPI_Send(NULL, 0, MPI_INT, 1, 6, MPI_COMM_WORLD);
            if (mode == 'p') {
                rc = MPI_Wait(&pr, &st);
            } else {
                do
                    rc = MPI_Test(&pr, &flag, &st);
                while (rc == MPI_SUCCESS && !flag);
            }
            idx = 0;
            flag = 1;
            r[1] = pr;
            if (pr != MPI_REQUEST_NULL)
                MPI_Request_free(&pr);
        } else if (mode == 't') {
            rc = MPI_Testany(2, r, &idx, &flag, &st);
        } else {
            rc = MPI_Waitany(2, r, &idx, &st);
            flag = 1;
        }
        printf("first call: %s idx=%d flag=%d null=%d,%d\n", rc == MPI_SUCCESS ? "ok" : "error", idx, flag,
               r[0] == MPI_REQUEST_NULL, r[1] == MPI_REQUEST_NULL);
        long bad = 0, sum = 0, sq = 0;
        for (int it = 0; it < 200; it++) {
            int w[6][4];
            MPI_Request q[6];
            MPI_Status s6[6];
            for (int k = 0; k < 6; k++)
                MPI_Irecv(w[k], 4, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &q[k]);
            if (it % 2) {
                MPI_Waitall(6, q, s6);
            } else {
                for (int k = 0; k < 6; k++)
                    for (int f = 0; !f;)
                        MPI_Test(&q[k], &f, &s6[k]);
            }
            for (int k = 0; k < 6; k++) {
                sum += w[k][0];
                sq += (long)w[k][0] * w[k][0];
                bad += w[k][3] != w[k][0] + 3 || s6[k].MPI_TAG != 3;
            }
        }
        printf("windows: bad=%ld sum=%ld squares=%ld\n", bad, sum, sq);
        long tail = 0;
        for (int m = 0; m < 6; m++) {
            int got[4] = {-1, -1, -1, -1}, c = -1, f = 0;
            MPI_Request q;
            MPI_Irecv(got, 4, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &q);
            while (!f)
                MPI_Test(&q, &f, &st);
            MPI_Get_count(&st, MPI_INT, &c);
            tail += c == 4 && got[3] == got[0] + 3 ? got[0] : -100000;
        }
        printf("one at a time: sum=%ld\n", tail);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(big, 20, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(NULL, 0, MPI_INT, 0, 4, MPI_COMM_WORLD);
        if ((mode == 'p' || mode == 'q') && rank == 1) {
            MPI_Recv(NULL, 0, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(big, 20, MPI_INT, 0, 5, MPI_COMM_WORLD);
        }
        for (int it = 0; it < 200; it++)
            for (int k = 0; k < 3; k++) {
                int v[4] = {it * 10 + rank, it * 10 + rank + 1, it * 10 + rank + 2, it * 10 + rank + 3};
                MPI_Send(v, 4, MPI_INT, 0, 3, MPI_COMM_WORLD);
            }
        for (int m = 0; m < 3; m++)
            MPI_Send(big + m, 4, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
