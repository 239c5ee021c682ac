/*
 * Small-message rate: rank 0 streams windows of --window nonblocking sends
 * of --bytes bytes to rank 1, which pre-posts matching MPI_Irecv; after
 * each window rank 1 returns a zero-byte acknowledgement, so the sender
 * never floods the receiver's unexpected queue. Reported: the median over
 * --reps batches of messages per second. Plain MPI, like pingpong.c.
 * Output: "msgrate BYTES MEDIAN_MSGS_PER_S MAX_MSGS_PER_S".
 *
 * --hand-header H: the floor of a copy piggyback, for comparison with
 * tdshim (run natively): each message carries H extra bytes in front,
 * packed by hand into a per-slot buffer before MPI_Isend and stripped by a
 * copy after MPI_Waitall, with none of tdshim's bookkeeping (request
 * table, counting, header checks). tdshim's BCJ header is 2 bytes.
 *
 * --statuses 1: MPI_Waitall fills an array of statuses (a program that
 * reads them) instead of MPI_STATUSES_IGNORE.
 *
 * --dup 1: the messages travel on a duplicate of MPI_COMM_WORLD (what
 * libraries and many programs use) instead of MPI_COMM_WORLD; --dup 2: on
 * its group in the reverse order (MPI_Comm_split: a communicator that is
 * not a copy, whose ranks a tool must translate).
 *
 * --recv probe|mprobe|test: rank 1 takes the window's messages one at a
 * time, as asynchronous programs do (issue 38), instead of pre-posting
 * them: MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) until it finds one, then
 * MPI_Recv of its source and tag; MPI_Improbe + MPI_Mrecv; or MPI_Irecv
 * (MPI_ANY_SOURCE, MPI_ANY_TAG) + MPI_Test until done. --recv testany:
 * 4 standing MPI_Irecv (MPI_ANY_SOURCE, MPI_ANY_TAG) polled by
 * MPI_Testany, the one done reposted for the next message. Not with
 * --hand-header.
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

/* --recv: one message taken the way MODE says (1 probe, 2 mprobe, 3 test) */
static void recv_one(int mode, char *b, int n, MPI_Comm comm)
{
    MPI_Status st;
    MPI_Message m;
    MPI_Request r;
    int flag = 0;
    if (mode == 1) {
        while (!flag)
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st);
        MPI_Recv(b, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm, MPI_STATUS_IGNORE);
    } else if (mode == 2) {
        while (!flag)
            MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &m, &st);
        MPI_Mrecv(b, n, MPI_BYTE, &m, MPI_STATUS_IGNORE);
    } else {
        MPI_Irecv(b, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &r);
        while (!flag)
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    }
}

/* --recv testany: a window of n messages taken through 4 standing
 * receives polled by MPI_Testany, each one done reposted while fewer than
 * n were posted (so none is left standing at the window's end) */
static void recv_standing(char *buf, long bytes, long n, MPI_Comm comm)
{
    MPI_Request s[4];
    long posted = 0, done = 0, ns = n < 4 ? n : 4;
    for (; posted < ns; posted++)
        MPI_Irecv(buf + posted * bytes, (int)bytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &s[posted]);
    while (done < n) {
        int i = -1, flag = 0;
        MPI_Testany((int)ns, s, &i, &flag, MPI_STATUS_IGNORE);
        if (!flag || i == MPI_UNDEFINED)
            continue;
        done++;
        if (posted < n) {
            MPI_Irecv(buf + posted * bytes, (int)bytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &s[i]);
            posted++;
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long bytes = 8, window = 64, windows = 200, reps = 11, hdr = 0, stats = 0, dup = 0;
    int one = 0; /* --recv: 0 pre-posted, 1 probe, 2 mprobe, 3 test, 4 testany */
    for (int i = 1; i < argc && !bad; i++) {
        long *dst = NULL;
        if (!strcmp(argv[i], "--help")) {
            if (rank == 0)
                printf("usage: msgrate [--bytes B] [--window W] [--windows N] [--reps R] [--hand-header H]\n"
                       "               [--statuses 0|1] [--dup 0|1|2] [--recv probe|mprobe|test|testany]\n"
                       "  defaults: 8 B, windows of 64 messages, 200 windows per batch, 11 batches;\n"
                       "  --hand-header H: prepend H bytes to each message by hand (pack and unpack\n"
                       "  copies, no other work: the floor of a piggyback layer); default 0\n"
                       "  --statuses 1: MPI_Waitall fills statuses (default 0: MPI_STATUSES_IGNORE)\n"
                       "  --dup 1: on a duplicate of MPI_COMM_WORLD, 2: on its group in the reverse order\n"
                       "           (default 0: MPI_COMM_WORLD)\n"
                       "  --recv: rank 1 takes messages one at a time, MPI_Iprobe + MPI_Recv,\n"
                       "           MPI_Improbe + MPI_Mrecv, MPI_Irecv + MPI_Test, or 4 standing MPI_Irecv\n"
                       "           polled by MPI_Testany (default: pre-posted)\n"
                       "  needs 2 or more ranks (others idle)\n");
            MPI_Finalize();
            return 0;
        }
        if (!strcmp(argv[i], "--bytes"))
            dst = &bytes;
        else if (!strcmp(argv[i], "--window"))
            dst = &window;
        else if (!strcmp(argv[i], "--windows"))
            dst = &windows;
        else if (!strcmp(argv[i], "--reps"))
            dst = &reps;
        else if (!strcmp(argv[i], "--hand-header"))
            dst = &hdr;
        else if (!strcmp(argv[i], "--statuses"))
            dst = &stats;
        else if (!strcmp(argv[i], "--dup"))
            dst = &dup;
        else if (!strcmp(argv[i], "--recv") && i + 1 < argc) {
            const char *m = argv[++i];
            one = !strcmp(m, "probe")     ? 1
                  : !strcmp(m, "mprobe")  ? 2
                  : !strcmp(m, "test")    ? 3
                  : !strcmp(m, "testany") ? 4
                                          : -1;
            bad = one < 0;
        } else
            bad = 1;
        if (dst) {
            char *end;
            if (i + 1 >= argc || (*dst = strtol(argv[++i], &end, 10)) < (dst == &hdr || dst == &stats || dst == &dup ? 0 : 1) || *end)
                bad = 1;
        }
    }
    if (bad || size < 2 || bytes > (1 << 20) || window > 100000 || hdr > 64 || stats > 1 || dup > 2 || (one && hdr)) {
        if (rank == 0)
            fprintf(stderr, "msgrate: bad options or fewer than 2 ranks (try --help)\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm comm = MPI_COMM_WORLD;
    int to = 1, from = 0; /* world ranks 1 and 0 in comm */
    if (dup == 1)
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (dup == 2) { /* world rank r is size - 1 - r */
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comm);
        to = size - 2;
        from = size - 1;
    }
    char *buf = calloc((size_t)(bytes * window), 1);
    long wire = bytes + hdr; /* --hand-header: one wire buffer per slot */
    char *bounce = hdr ? calloc((size_t)(wire * window), 1) : NULL;
    MPI_Request *rq = malloc((size_t)window * sizeof *rq);
    MPI_Status *st = stats ? malloc((size_t)window * sizeof *st) : MPI_STATUSES_IGNORE;
    double *rate = malloc((size_t)reps * sizeof *rate);
    if (!buf || !rq || !rate || (hdr && !bounce) || (stats && !st))
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long r = -1; r < reps; r++) { /* r = -1: warm-up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long w = 0; w < windows && rank < 2; w++) {
            if (rank == 1 && one == 4) {
                recv_standing(buf, bytes, window, comm);
                for (long k = 0; k < window; k++)
                    rq[k] = MPI_REQUEST_NULL;
            }
            for (long k = 0; k < window && !(rank == 1 && one == 4); k++) {
                char *p = buf + k * bytes, *b = hdr ? bounce + k * wire : p;
                if (rank == 0) {
                    if (hdr) {
                        memset(b, (int)(w & 0xff), (size_t)hdr);
                        memcpy(b + hdr, p, (size_t)bytes);
                    }
                    MPI_Isend(b, (int)wire, MPI_BYTE, to, 1, comm, &rq[k]);
                } else if (one) {
                    recv_one(one, b, (int)wire, comm);
                    rq[k] = MPI_REQUEST_NULL;
                } else {
                    MPI_Irecv(b, (int)wire, MPI_BYTE, from, 1, comm, &rq[k]);
                }
            }
            MPI_Waitall((int)window, rq, st);
            for (long k = 0; hdr && rank == 1 && k < window; k++)
                memcpy(buf + k * bytes, bounce + k * wire + hdr, (size_t)bytes);
            if (rank == 0)
                MPI_Recv(NULL, 0, MPI_BYTE, to, 2, comm, MPI_STATUS_IGNORE);
            else
                MPI_Send(NULL, 0, MPI_BYTE, from, 2, comm);
        }
        if (r >= 0)
            rate[r] = (double)(window * windows) / (MPI_Wtime() - t0);
    }
    if (rank == 0) {
        qsort(rate, (size_t)reps, sizeof *rate, cmp_double);
        printf("msgrate %ld %.0f %.0f\n", bytes, rate[reps / 2], rate[reps - 1]);
    }
    free(buf);
    free(bounce);
    free(rq);
    if (stats)
        free(st);
    free(rate);
    if (dup)
        MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
