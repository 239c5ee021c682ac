/*
 * coldbar: what a collective costs when one rank enters it after working
 * for a while (bench/RESULTS.md, "Detection against a collective at the
 * same moment"; issue 38). Rank 0 computes for W us (a clock-reading spin,
 * no memory traffic) while the other ranks wait in MPI_Barrier; the
 * latency is the last rank's entry to the last rank's exit, on
 * CLOCK_MONOTONIC (one node: one clock), median of --reps per W. Prints
 * "coldbar W median min max" per W. Run natively (no tdshim).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, reps = 11;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int i = 1; i + 1 < argc; i += 2)
        if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
    if (reps < 1 || reps > 10000) {
        if (me == 0)
            fprintf(stderr, "usage: coldbar [--reps N (1..10000, default 11)]\n");
        MPI_Finalize();
        return 2;
    }
    static const double work_us[] = {0, 1, 10, 100, 1000, 20000};
    double *lat = malloc((size_t)reps * sizeof *lat);
    if (!lat)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t k = 0; k < sizeof work_us / sizeof work_us[0]; k++) {
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (me == 0)
                for (double t0 = now(); (now() - t0) * 1e6 < work_us[k];)
                    ;
            double in[2], out[2];
            in[0] = now();
            MPI_Barrier(MPI_COMM_WORLD);
            in[1] = now();
            MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            lat[r] = (out[1] - out[0]) * 1e6;
        }
        qsort(lat, (size_t)reps, sizeof *lat, cmp);
        if (me == 0)
            printf("coldbar %.0f %.2f %.2f %.2f\n", work_us[k], lat[reps / 2], lat[0], lat[reps - 1]);
    }
    free(lat);
    MPI_Finalize();
    return 0;
}
