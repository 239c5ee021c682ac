/*
 * worktag: measure mode's "a message on this tag brought work" (tests/mpi/
 * worktag.sh; shim/mpi/tds_progress.c, cand_judge and spin_worked; README,
 * "Measure mode and the advice": polls.work_tags).
 *
 *   worktag ROUNDS WORK_US SLEEP_US
 *       Two ranks. Rank 1 waits for messages from rank 0 in an
 *       MPI_Iprobe(0, MPI_ANY_TAG) loop, and takes each by MPI_Recv of the
 *       probed envelope. Rank 0 sends it, ROUNDS times each and in turn:
 *         tag 5, work: rank 1 uses WORK_US of its CPU time, then answers
 *                16 bytes on tag 6;
 *         tag 7, a request: rank 1 sleeps SLEEP_US (wall time, little
 *                CPU time: as a rank descheduled on a busy node), then
 *                answers 16 bytes on tag 8;
 *       each after a pause of 100 us, during which rank 1's probes find
 *       nothing, and waits for the answer in MPI_Recv. Tag 9 ends the
 *       loop. Rank 1 prints "worktag rounds=N work=W requests=R".
 *
 * Under tdshim in measure mode, rank 1's report should count tag 5 as work
 * nearly every time it was found and tag 7 never: a request answered after
 * a sleep took more wall time than TDSHIM_SPIN_GAP but little CPU time.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tclock.h"

enum { TAG_WORK = 5, TAG_RESULT = 6, TAG_REQ = 7, TAG_REPLY = 8, TAG_STOP = 9 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4 || size != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: worktag ROUNDS WORK_US SLEEP_US (2 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rounds = atoi(argv[1]);
    double work_s = 1e-6 * atof(argv[2]);
    long sleep_u = atol(argv[3]);
    char buf[16];
    memset(buf, 'w', sizeof buf);
    if (rank == 0) {
        for (int i = 0; i < 2 * rounds; i++) {
            int req = i % 2;
            double t0 = wall_now();
            while (wall_now() - t0 < 100e-6)
                ; /* rank 1 probes in vain meanwhile */
            MPI_Send(buf, 16, MPI_BYTE, 1, req ? TAG_REQ : TAG_WORK, MPI_COMM_WORLD);
            MPI_Recv(buf, 16, MPI_BYTE, 1, req ? TAG_REPLY : TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Send(buf, 0, MPI_BYTE, 1, TAG_STOP, MPI_COMM_WORLD);
    } else {
        int work = 0, requests = 0;
        for (;;) {
            int flag = 0;
            MPI_Status st;
            MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            if (!flag)
                continue;
            MPI_Recv(buf, 16, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (st.MPI_TAG == TAG_STOP)
                break;
            if (st.MPI_TAG == TAG_WORK) {
                use_cpu(work_s);
                work++;
                MPI_Send(buf, 16, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
            } else {
                sleep_us(sleep_u);
                requests++;
                MPI_Send(buf, 16, MPI_BYTE, 0, TAG_REPLY, MPI_COMM_WORLD);
            }
        }
        printf("worktag rounds=%d work=%d requests=%d\n", rounds, work, requests);
    }
    MPI_Finalize();
    return 0;
}
