/*
 * overlap: does a large message reach a receiver while its sender computes?
 * Rank 0 posts MPI_Isend of --bytes, computes --compute-us outside MPI, then
 * MPI_Wait; rank 1 posts MPI_Irecv at the same moment and calls MPI_Test
 * until it completes. Natively Open MPI's single-copy transfer (vader, CMA)
 * lets the receiver pull a rendezvous message without its sender; a
 * non-contiguous buffer on either side (tdshim's struct-datatype header
 * layout) needs the sender to progress the transfer, so the receive waits
 * for its MPI_Wait. Prints rank 1's median receive time over --iters
 * rounds: "overlap BYTES median_us". bench/RESULTS.md, "Large messages".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long bytes = 204800, iters = 9;
    double compute = 20e-3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--bytes"))
            bytes = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--compute-us"))
            compute = atof(argv[i + 1]) * 1e-6;
        else if (!strcmp(argv[i], "--iters"))
            iters = atol(argv[i + 1]);
    }
    if (size != 2 || bytes < 1 || bytes > (1L << 30) || iters < 1 || iters > 1000) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 overlap [--bytes B] [--compute-us US] [--iters N]\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = malloc((size_t)bytes);
    double *t = malloc((size_t)iters * sizeof *t);
    if (!buf || !t)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, rank, (size_t)bytes);
    for (long it = 0; it < iters; it++) {
        MPI_Request r;
        int flag = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Isend(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &r);
            while (MPI_Wtime() - t0 < compute)
                ;
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Irecv(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &r);
            while (!flag)
                MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            t[it] = 1e6 * (MPI_Wtime() - t0);
        }
    }
    if (rank == 1) {
        qsort(t, (size_t)iters, sizeof *t, cmp);
        printf("overlap %ld %.1f\n", bytes, t[iters / 2]);
    }
    free(buf);
    free(t);
    MPI_Finalize();
    return 0;
}
