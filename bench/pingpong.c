/*
 * Ping-pong latency between ranks 0 and 1 with MPI_Send/MPI_Recv: for each
 * size, the median over --reps batches of the one-way latency (half a
 * round trip) averaged over a batch of --iters round trips. Plain MPI: the
 * same binary runs natively and under tdshim (bench/run-bench alternates).
 * Output: one line "pingpong SIZE_BYTES MEDIAN_US MIN_US" per size (the
 * minimum is the figure least disturbed by other load on a shared machine).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int usage(int rank, const char *why)
{
    if (rank == 0) {
        if (why)
            fprintf(stderr, "pingpong: %s\n", why);
        fprintf(why ? stderr : stdout,
                "usage: pingpong [--min BYTES] [--max BYTES] [--iters N] [--reps N] [--test-loop]\n"
                "  sizes double from --min (default 8) to --max (default 1048576);\n"
                "  each size: --reps (default 11) batches of --iters round trips\n"
                "  (default 1000, fewer above 64 KiB); needs 2 or more ranks (others idle)\n"
                "  --test-loop: each receive as MPI_Irecv and MPI_Test until done (how a receive\n"
                "  that must keep polling waits: tdshim's blocking receive inside), not MPI_Recv\n");
    }
    return why ? 2 : 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, rc = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long minb = 8, maxb = 1 << 20, iters = 1000, reps = 11;
    int test_loop = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        long *dst = NULL;
        if (!strcmp(argv[i], "--help"))
            rc = usage(rank, NULL);
        else if (!strcmp(argv[i], "--min"))
            dst = &minb;
        else if (!strcmp(argv[i], "--max"))
            dst = &maxb;
        else if (!strcmp(argv[i], "--iters"))
            dst = &iters;
        else if (!strcmp(argv[i], "--reps"))
            dst = &reps;
        else if (!strcmp(argv[i], "--test-loop"))
            test_loop = 1;
        else
            rc = usage(rank, "unknown option (try --help)");
        if (dst) {
            char *end;
            if (i + 1 >= argc || (*dst = strtol(argv[++i], &end, 10)) < 1 || *end)
                rc = usage(rank, "option needs a positive integer");
        }
    }
    if (rc == 0 && (size < 2 || minb > maxb || maxb > (1L << 28)))
        rc = usage(rank, "need 2+ ranks and --min <= --max <= 256 MiB");
    if (rc) {
        MPI_Finalize();
        return rc == 1 ? 0 : rc;
    }
    char *buf = calloc((size_t)maxb, 1);
    double *t = malloc((size_t)reps * sizeof *t);
    if (!buf || !t)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long n = minb; n <= maxb; n *= 2) {
        long it = n > 65536 ? (iters / 10 > 10 ? iters / 10 : 10) : iters;
        for (long r = -1; r < reps; r++) { /* r = -1: warm-up */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (rank < 2)
                for (long k = 0; k < it; k++) {
                    if (rank == 0)
                        MPI_Send(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                    if (test_loop) {
                        MPI_Request q;
                        int done = 0;
                        MPI_Irecv(buf, (int)n, MPI_BYTE, 1 - rank, 1, MPI_COMM_WORLD, &q);
                        while (!done)
                            MPI_Test(&q, &done, MPI_STATUS_IGNORE);
                    } else {
                        MPI_Recv(buf, (int)n, MPI_BYTE, 1 - rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    }
                    if (rank == 1)
                        MPI_Send(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
                }
            if (r >= 0)
                t[r] = (MPI_Wtime() - t0) / (2.0 * (double)it) * 1e6;
        }
        if (rank == 0) {
            qsort(t, (size_t)reps, sizeof *t, cmp_double);
            printf("pingpong %ld %.3f %.3f\n", n, t[reps / 2], t[0]);
            fflush(stdout);
        }
    }
    free(buf);
    free(t);
    MPI_Finalize();
    return 0;
}
