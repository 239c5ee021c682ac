/*
 * idlesleep: a rank that polls while idle and sleeps between its polls,
 * or that works between them (tests/mpi/idlesleep.sh; measure mode's
 * "polls while busy", shim/mpi/tds_progress.c busy_gap_long).
 *
 *   idlesleep sleep|burn US [N]
 *       Two ranks. Rank 0 sends rank 1 N messages (default 100) of 8 bytes
 *       on tag 1, 1 ms apart. Rank 1 takes them in an MPI_Iprobe(0, 1) +
 *       MPI_Recv loop; after each empty probe it sleeps US microseconds
 *       (sleep: nanosleep, an idle loop that spares the CPU) or uses US
 *       microseconds of its CPU time (burn: a rank that polls while it
 *       works). Rank 1 prints "idlesleep MODE got=N".
 */
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
    int burn = argc > 1 && strcmp(argv[1], "burn") == 0;
    if (argc < 3 || argc > 4 || size != 2 || (!burn && strcmp(argv[1], "sleep") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: idlesleep sleep|burn US [N] (2 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long us = atol(argv[2]);
    int n = argc > 3 ? atoi(argv[3]) : 100;
    char b[8];
    memset(b, 's', sizeof b);
    if (rank == 0) {
        for (int i = 0; i < n; i++) {
            sleep_us(1000);
            MPI_Send(b, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        }
    } else {
        int got = 0;
        while (got < n) {
            int flag = 0;
            MPI_Iprobe(0, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (flag) {
                MPI_Recv(b, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                got++;
            } else if (burn) {
                use_cpu(1e-6 * (double)us);
            } else {
                sleep_us(us);
            }
        }
        printf("idlesleep %s got=%d\n", argv[1], got);
    }
    MPI_Finalize();
    return 0;
}
