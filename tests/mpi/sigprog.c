/*
 * Signals and forks (tests/mpi/signals.sh, issue 26).
 *   sigprog loop PIDDIR [LIMIT]
 *     Each rank writes its pid to PIDDIR/pid.<rank> and then, until killed
 *     (or LIMIT seconds, default 60), either allocates (ranks 0 and 1 of
 *     every four: malloc and free of 2 to 66 KiB, snprintf into the heap,
 *     an MPI_Iprobe now and then) or talks (ranks 2 and 3 of every four:
 *     MPI_Sendrecv ping-pongs with each other, through tdshim's wrappers),
 *     so that a signal lands inside malloc, inside MPI or inside tdshim.
 *   sigprog fork
 *     Rank 0 makes children that are killed by SIGTERM: a fork() child
 *     that signals itself, system("kill -TERM $$") and popen of the same;
 *     each must die of SIGTERM as it would without tdshim (the rank checks
 *     the wait status). Then every rank finalizes and exits 0 (1 when a
 *     child did not die of SIGTERM).
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int died_of_term(int st, const char *what)
{
    int ok = st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM;
    printf("sigprog: %s: %s\n", what, ok ? "died of SIGTERM" : "did NOT die of SIGTERM");
    return ok;
}

static int forks(void)
{
    int ok = 1, st = -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        kill(getpid(), SIGTERM);
        for (int i = 0; i < 50; i++)
            usleep(100000);
        _exit(0);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        st = -1;
    ok &= died_of_term(st, "fork child");
    /* system: the shell's wait status */
    ok &= died_of_term(system("kill -TERM $$; sleep 5"), "system");
    FILE *p = popen("kill -TERM $$; sleep 5", "r");
    ok &= died_of_term(p ? pclose(p) : -1, "popen");
    return ok;
}

int main(int argc, char **argv)
{
    int rank, size, ok = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "fork") == 0) {
        if (rank == 0)
            ok = forks();
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return ok ? 0 : 1;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: sigprog loop PIDDIR [LIMIT] | sigprog fork\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double limit = argc > 3 ? atof(argv[3]) : 60;
    char path[4096];
    snprintf(path, sizeof path, "%s/pid.%d", argv[2], rank);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%ld\n", (long)getpid());
        fclose(f);
    }
    time_t end = time(NULL) + (time_t)limit;
    int talk = rank % 4 >= 2 && (rank ^ 1) < size;
    unsigned seed = (unsigned)rank * 2654435761u + 1;
    char *keep[64] = {0};
    char msg[64] = {0}, in[64];
    for (unsigned long it = 0; time(NULL) < end; it++) {
        if (talk) {
            MPI_Sendrecv(msg, (int)sizeof msg, MPI_CHAR, rank ^ 1, 5, in, (int)sizeof in, MPI_CHAR, rank ^ 1, 5,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            continue;
        }
        /* nearly all the time inside malloc and free, holding the arena
         * lock (sizes above glibc's lock-free tcache) */
        seed = seed * 1103515245u + 12345u;
        int k = (int)(seed >> 16) % 64;
        size_t n = 2048 + (seed >> 8) % 65536;
        free(keep[k]);
        keep[k] = malloc(n);
        if (it % 64 == 0 && keep[k])
            snprintf(keep[k], n, "%lu %d %s", it, rank, argv[0]);
        if (it % 1024 == 0) {
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
    }
    for (int k = 0; k < 64; k++)
        free(keep[k]);
    MPI_Finalize();
    return 0;
}
