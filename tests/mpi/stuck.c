/*
 * A job that never ends on its own (tests/mpi/hang.sh): every rank but the
 * last polls for a message that never comes, the last one computes without
 * calling MPI; each stops after LIMIT seconds (default 30).
 *   stuck [LIMIT [own]]
 * Each rank writes its pid to $STUCK_PIDDIR/pid.<rank> (when set), so the
 * test can kill the ranks as a batch system does. "own": the program
 * installs its own SIGTERM handler (before MPI_Init), which says so on
 * stdout and exits 0; tdshim must leave it alone.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void own(int sig)
{
    (void)sig;
    static const char msg[] = "stuck: own SIGTERM handler\n";
    if (write(1, msg, sizeof msg - 1) < 0)
        _exit(1);
    _exit(0);
}

int main(int argc, char **argv)
{
    int rank, size, flag = 0;
    if (argc > 2 && strcmp(argv[2], "own") == 0)
        signal(SIGTERM, own);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = getenv("STUCK_PIDDIR");
    if (dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/pid.%d", dir, rank);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%ld\n", (long)getpid());
            fclose(f);
        }
    }
    double limit = argc > 1 ? atof(argv[1]) : 30, t0 = now();
    volatile double x = 0;
    while (now() - t0 < limit) {
        if (rank == size - 1)
            for (int i = 0; i < 100000; i++)
                x += i * 0.5;
        else
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
