/*
 * tdprog: a tiny asynchronous program whose end only termination detection
 * can tell. Work tokens hop between ranks (each hop: a primary message to a
 * pseudo-random rank) until their hop count runs out; no rank knows when
 * the last token died. Used by tests/mpi/idle.sh and notify.sh.
 *
 *   tdprog STYLE PHASES NOTIFY_TAG DEADLINE [SPIN]
 *   tdprog threads     (MPI_Init_thread(MULTIPLE); prints the level provided)
 *
 * STYLE: how a rank waits for work, matching a TDSHIM_IDLE notion:
 *   probe    MPI_Iprobe loop               (default notion, probe:N)
 *   improbe  MPI_Improbe + MPI_Mrecv loop
 *   test     a standing MPI_Irecv polled with MPI_Test        (test)
 *   testany, testsome, testall: the same, polled with MPI_Testany,
 *            MPI_Testsome or MPI_Testall in an array after a null handle (test)
 *   blocking MPI_Recv                                         (blocking)
 *   pcontrol MPI_Iprobe; MPI_Pcontrol(0) when empty           (pcontrol)
 *   api      MPI_Iprobe; tdshim_set_passive() when empty      (api)
 *   busyprobe  MPI_Iprobe loop when idle, and each token costs 10 chunks of
 *            50 us of work with an MPI_Iprobe between them: a program that
 *            polls while busy (spin; under probe it breaks the contract)
 *   sleepy   sends one token to the next rank, then receives nothing
 *            until DEADLINE: messages left unreceived at finalize
 * PHASES: phases separated by MPI_Barrier; phase p injects p % 3 tokens
 *   at rank p % size (so some phases have no messages at all).
 * NOTIFY_TAG: the tag tdshim delivers at quiescence (TDSHIM_NOTIFY=tag:N);
 *   each phase ends when the rank receives it.
 * DEADLINE: seconds a polling rank waits for a notification before giving
 *   up ("timeout" in the output, exit 1): a missed detection fails fast.
 * After the last phase every polling rank keeps polling for SPIN seconds
 * (default 0.3) and counts extra notifications: there must be none.
 *
 * TDPROG_MARK=1 in the environment: each rank starts every phase by
 * sending itself an empty message on NOTIFY_TAG (the notification's own
 * envelope; header-free tdshim tells the two apart by their order) and
 * takes the first message on that tag after it for its own mark.
 *
 * Output (rank 0, one line per rank): "rank R: phases P notified N extra E
 * tokens_seen 0|1 episodes K" (K: tdshim_terminated(), 0 without tdshim).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tdshim.h"

#define TAG_WORK 1

static int rank, size, notify_tag, marks;
static const char *style;
static unsigned rng;

static int next_rank(void)
{
    rng = rng * 1103515245u + 12345u;
    return (int)((rng >> 16) % (unsigned)size);
}

/* one message: a token (hops left) or the notification */
static int handle(const int *msg, const MPI_Status *st, long *tokens)
{
    if (st->MPI_TAG == notify_tag && marks > 0) {
        marks--; /* this rank's own mark (TDPROG_MARK) */
        return 0;
    }
    if (st->MPI_TAG == notify_tag)
        return 1;
    int hops = msg[0];
    (*tokens)++;
    if (!strcmp(style, "busyprobe"))
        for (int chunk = 0; chunk < 10; chunk++) { /* work, polling between chunks */
            struct timespec a, b; /* 50 us of CPU (work), not of wall time */
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
            do
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
            while ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec) < 50e3);
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
    if (hops > 0) {
        int m = hops - 1;
        MPI_Send(&m, 1, MPI_INT, next_rank(), TAG_WORK, MPI_COMM_WORLD);
    }
    return 0;
}

static void idle_hint(void)
{
    if (!strcmp(style, "pcontrol"))
        MPI_Pcontrol(0);
    else if (!strcmp(style, "api"))
        TDSHIM_SET_PASSIVE();
}

/* waits for the notification, doing work meanwhile; returns notifications
 * seen (0 on deadline). With spin, polls for `spin` seconds and counts. */
static int run(double deadline, double spin, long *tokens)
{
    double t0 = MPI_Wtime();
    int msg[1], n = 0;
    MPI_Status st;
    static MPI_Request standing = MPI_REQUEST_NULL;
    static int sbuf[1];
    for (;;) {
        double t = MPI_Wtime() - t0;
        if ((!spin && t > deadline) || (spin && t > spin))
            return n;
        if (!strcmp(style, "sleepy")) {
            continue; /* busy doing "something else": never polls */
        } else if (!strcmp(style, "blocking")) {
            if (spin)
                return n; /* a blocking rank cannot spin without hanging */
            MPI_Recv(msg, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (handle(msg, &st, tokens))
                return 1;
        } else if (!strncmp(style, "test", 4)) {
            int flag = 0;
            if (standing == MPI_REQUEST_NULL)
                MPI_Irecv(sbuf, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &standing);
            if (!strcmp(style, "test")) {
                MPI_Test(&standing, &flag, &st);
            } else {
                MPI_Request arr[2] = {MPI_REQUEST_NULL, standing};
                MPI_Status sts[2];
                int idx = -1, outc = 0, ind[2];
                if (!strcmp(style, "testany")) {
                    MPI_Testany(2, arr, &idx, &flag, &st);
                    flag = flag && idx == 1;
                } else if (!strcmp(style, "testsome")) {
                    MPI_Testsome(2, arr, &outc, ind, sts);
                    flag = outc == 1 && ind[0] == 1;
                    st = sts[0];
                } else {
                    MPI_Testall(2, arr, &flag, sts);
                    st = sts[1];
                }
                standing = arr[1];
            }
            if (flag && handle(sbuf, &st, tokens) && !spin)
                return 1;
            if (flag && st.MPI_TAG == notify_tag)
                n++;
        } else {
            int flag = 0;
            MPI_Message m;
            if (!strcmp(style, "improbe"))
                MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st);
            else
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            if (!flag) {
                idle_hint();
                continue;
            }
            if (!strcmp(style, "improbe"))
                MPI_Mrecv(msg, 1, MPI_INT, &m, &st);
            else
                MPI_Recv(msg, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
            if (handle(msg, &st, tokens)) {
                if (!spin)
                    return 1;
                n++;
            }
        }
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "threads")) {
        /* tdprog threads: asks for MPI_THREAD_MULTIPLE, prints what it got */
        int provided = -1;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            printf("provided %s\n", provided == MPI_THREAD_MULTIPLE     ? "multiple"
                                    : provided == MPI_THREAD_SERIALIZED ? "serialized"
                                    : provided == MPI_THREAD_FUNNELED   ? "funneled"
                                                                        : "single");
        MPI_Finalize();
        return 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 5) {
        if (rank == 0)
            fprintf(stderr, "usage: tdprog STYLE PHASES NOTIFY_TAG DEADLINE [SPIN]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    style = argv[1];
    int phases = atoi(argv[2]);
    notify_tag = atoi(argv[3]);
    double deadline = atof(argv[4]), spin = argc > 5 ? atof(argv[5]) : 0.3;
    rng = 12345u + 977u * (unsigned)rank;
    long tokens = 0;
    int notified = 0, timed_out = 0;
    if (!strcmp(style, "sleepy")) {
        int hops = 0;
        MPI_Send(&hops, 1, MPI_INT, (rank + 1) % size, TAG_WORK, MPI_COMM_WORLD);
    }
    const char *mk = getenv("TDPROG_MARK");
    int mark = mk && *mk == '1';
    for (int p = 0; p < phases; p++) {
        MPI_Request mr = MPI_REQUEST_NULL;
        if (mark) { /* nonblocking: MPICH does not buffer a blocking send to self */
            MPI_Isend(NULL, 0, MPI_INT, rank, notify_tag, MPI_COMM_WORLD, &mr);
            marks++;
        }
        if (rank == p % size)
            for (int k = 0; k < p % 3; k++) {
                int hops = 20 + 5 * k;
                MPI_Send(&hops, 1, MPI_INT, next_rank(), TAG_WORK, MPI_COMM_WORLD);
            }
        int got = run(deadline, 0, &tokens);
        MPI_Wait(&mr, MPI_STATUS_IGNORE);
        notified += got;
        if (!got) {
            timed_out = 1;
            break;
        }
        if (p + 1 < phases)
            MPI_Barrier(MPI_COMM_WORLD); /* activity: the next phase is a new episode */
    }
    int extra = timed_out ? 0 : run(deadline, spin, &tokens);
    char line[200];
    snprintf(line, sizeof line, "rank %d: phases %d notified %d extra %d tokens_seen %d episodes %d%s\n", rank,
             phases, notified, extra, tokens > 0, TDSHIM_TERMINATED(), timed_out ? " timeout" : "");
    /* The gather below is a collective, new activity: a rank that left its
     * spin early and entered it woke the detection while rank 0 still spun,
     * and rank 0 was rightly notified of that episode and counted it extra
     * (CI, idle.sh 9, once: rank 0 "extra 1 ... episodes 4"). A barrier
     * first: no rank shows activity until every rank has stopped counting
     * (under bcj and the other root algorithms a rank in a blocking
     * collective answers no control message, so no episode completes). */
    MPI_Barrier(MPI_COMM_WORLD);
    char *all = rank == 0 ? malloc(sizeof line * (size_t)size) : NULL;
    MPI_Gather(line, sizeof line, MPI_CHAR, all, sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < size; r++)
            fputs(all + r * sizeof line, stdout);
    fflush(stdout);
    /* how long MPI_Finalize took on this rank (notify.sh compares it) */
    struct timespec f0, f1;
    clock_gettime(CLOCK_MONOTONIC, &f0);
    MPI_Finalize();
    clock_gettime(CLOCK_MONOTONIC, &f1);
    fprintf(stderr, "tdprog: rank %d: MPI_Finalize took %.3f s\n", rank,
            (double)(f1.tv_sec - f0.tv_sec) + 1e-9 * (double)(f1.tv_nsec - f0.tv_nsec));
    return timed_out;
}
