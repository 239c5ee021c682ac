/*
 * pbsize: ping-pong latency per message size, to choose the piggyback
 * layout threshold (TDS_COPY_MAX_DEFAULT in shim/mpi/tds_wire.h): run it
 * natively and under TDSHIM_PIGGYBACK=copy and =datatype and compare.
 *
 *   mpirun -n 2 ./pbsize [ITERS]      prints "bytes usec_per_roundtrip"
 *
 * Each size takes the best of 5 repetitions (noise on a shared machine
 * only ever adds time). Not a test: the benchmark engineer's drivers
 * measure the performance targets.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, iters = argc > 1 ? atoi(argv[1]) : 2000;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = calloc(1 << 20, 1);
    for (int size = 8; size <= (1 << 20); size *= 2) {
        int n = size >= 65536 ? iters / 20 + 1 : iters;
        double best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < n; i++) {
                if (rank == 0) {
                    MPI_Send(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Recv(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
            }
            double t = (MPI_Wtime() - t0) / n;
            if (t < best)
                best = t;
        }
        if (rank == 0)
            printf("%d %.3f\n", size, best * 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
