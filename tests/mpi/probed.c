/*
 * probed: receives after a found MPI_Iprobe (issue 38; tests/mpi/probed.sh).
 * tdshim's flat MPI_Recv takes MPI's blocking receive, which cannot wait as
 * passive, for a message a found MPI_Iprobe saw while no call that can match
 * it has run since (shim/mpi/tds_flat.c, tds_probed_covers).
 *
 *   probed cases PREFIX
 *       Rank 0 sends rank 1 messages of 1..64 bytes on tags 1..4; rank 1
 *       takes them one at a time, each way in turn:
 *         0  Iprobe(ANY_SOURCE, ANY_TAG, &st), Recv(st's source, st's tag)
 *         1  Iprobe(ANY_SOURCE, ANY_TAG, &st), Recv(ANY_SOURCE, ANY_TAG)
 *         2  Iprobe(0, tag, STATUS_IGNORE), Recv(0, tag)
 *         3  Iprobe(0, ANY_TAG, STATUS_IGNORE), Recv(ANY_SOURCE, ANY_TAG)
 *         4  Iprobe(ANY_SOURCE, tag, STATUS_IGNORE), Recv(0, tag): the
 *            receive does not cover the probe's pattern (the flat entry's
 *            request and test)
 *         5  Iprobe(0, later tag) finds the second of two messages, then
 *            Recv(0, earlier tag), Recv(0, later tag)
 *         6  Probe(ANY_SOURCE, ANY_TAG, &st), Recv(st's source, st's tag)
 *         7  Iprobe(ANY_SOURCE, ANY_TAG, &st), Recv(st's source, st's tag)
 *            of MPI_INT, by the count MPI_Get_count gives (a count below
 *            the bytes: the flat entry's multiplication, flat_Recv_exact_wide),
 *            the messages a multiple of 4 bytes, after rank 1 sent itself
 *            an int (counted: tdshim's cached type is MPI_INT then)
 *         8  the same of MPI_BYTE, by a count one byte short (MPI_ERR_TRUNCATE
 *            under MPI_ERRORS_RETURN: the message is taken, truncated, and
 *            counted; each message printed with the error's class)
 *         9  Improbe(ANY_SOURCE, ANY_TAG, &m, &st), Mrecv(m) of MPI_BYTE by
 *            MPI_Get_count's count, after rank 1 sent itself a byte (the
 *            flat MPI_Mrecv's quick case)
 *        10  the same of MPI_INT as way 7 (the count below the bytes:
 *            flat_Mrecv_more)
 *       and prints each message (way, index, source, tag, count, checksum)
 *       to PREFIX.RANK; both print their totals. Output is native's byte
 *       for byte.
 *
 *   probed stale WAY
 *       Run under tdshim with TDSHIM_NOTIFY=tag:99 (no native run: nothing
 *       ends it natively). Rank 0 sends rank 1 one message (tag 5) and
 *       waits in MPI_Recv(ANY_SOURCE, ANY_TAG) for its notification. Rank 1
 *       finds the message by MPI_Iprobe(ANY_SOURCE, ANY_TAG), takes it by
 *       WAY (irecv: Irecv+Wait; sendrecv: Sendrecv with MPI_PROC_NULL;
 *       improbe: Improbe+Mrecv; persistent: Recv_init+Start+Wait; startall:
 *       Recv_init+Startall+Waitall; recv: Recv(0, 5); ignore: found again by
 *       Iprobe(0, 5, STATUS_IGNORE), then Irecv+Wait; probe: found by
 *       MPI_Probe instead, then Irecv+Wait; thread: under
 *       MPI_THREAD_SERIALIZED, received by MPI_Recv(0, 5) in another thread
 *       while this one waits for it to end) and then waits in
 *       MPI_Recv(ANY_SOURCE, ANY_TAG) for its own notification. A shim that
 *       still took the probed message for there would make that receive
 *       MPI's blocking one, which answers no detection: the job would hang.
 *       Each rank prints what its last receive got.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NMSG 24
#define NWAYS 11

static unsigned sum(const unsigned char *b, int n)
{
    unsigned s = 0;
    for (int i = 0; i < n; i++)
        s = s * 31u + b[i];
    return s;
}

static int msize(int w, int k)
{
    return 1 + (w * 13 + k * 7) % 64;
}

static void fill(unsigned char *b, int w, int k, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(w * 41 + k * 3 + i);
}

static int cases(int rank, const char *prefix)
{
    char name[4096];
    snprintf(name, sizeof name, "%s.%d", prefix, rank);
    FILE *out = fopen(name, "w");
    if (!out)
        return 1;
    unsigned char b[64], c[64];
    unsigned long sent = 0, recvd = 0, bytes = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* way 8's truncation */
    for (int w = 0; w < NWAYS; w++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (int k = 0; k < NMSG; k++) {
                int n = w == 7 || w == 10 ? 4 * (1 + k % 16) : msize(w, k), tag = 1 + k % 4;
                fill(b, w, k, n);
                MPI_Send(b, n, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
                sent++;
            }
            continue;
        }
        if (w == 7 || w == 9 || w == 10) { /* one element of the way's type to itself first: tdshim's cached type */
            int one = 1, got = 0;
            MPI_Datatype t = w == 9 ? MPI_BYTE : MPI_INT;
            MPI_Request r;
            MPI_Isend(&one, 1, t, 1, 50, MPI_COMM_WORLD, &r);
            MPI_Recv(&got, 1, t, 1, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            sent++;
            recvd++;
        }
        for (int k = 0; k < NMSG; k++) {
            MPI_Status st, rs;
            int flag = 0, n, tag = 1 + k % 4;
            switch (w) {
            case 0:
            case 1:
                while (!flag)
                    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
                MPI_Get_count(&st, MPI_BYTE, &n);
                if (w == 0)
                    MPI_Recv(c, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &rs);
                else
                    MPI_Recv(c, 64, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rs);
                break;
            case 2:
            case 3:
            case 4:
                while (!flag)
                    MPI_Iprobe(w == 4 ? MPI_ANY_SOURCE : 0, w == 3 ? MPI_ANY_TAG : tag, MPI_COMM_WORLD, &flag,
                               MPI_STATUS_IGNORE);
                MPI_Recv(c, 64, MPI_BYTE, w == 3 ? MPI_ANY_SOURCE : 0, w == 3 ? MPI_ANY_TAG : tag, MPI_COMM_WORLD,
                         &rs);
                break;
            case 7:
            case 8: {
                int e = MPI_SUCCESS;
                while (!flag)
                    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
                if (w == 7) {
                    MPI_Get_count(&st, MPI_INT, &n);
                    e = MPI_Recv(c, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &rs);
                } else {
                    MPI_Get_count(&st, MPI_BYTE, &n);
                    e = MPI_Recv(c, n - 1, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &rs);
                }
                int cls = e;
                if (e != MPI_SUCCESS)
                    MPI_Error_class(e, &cls);
                fprintf(out, "way %d message %d error class %d\n", w, k, cls);
                break;
            }
            case 9:
            case 10: {
                MPI_Message m;
                while (!flag)
                    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st);
                MPI_Get_count(&st, w == 9 ? MPI_BYTE : MPI_INT, &n);
                MPI_Mrecv(c, n, w == 9 ? MPI_BYTE : MPI_INT, &m, &rs);
                break;
            }
            case 6:
                MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &n);
                MPI_Recv(c, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &rs);
                break;
            default: /* pairs: the later one probed, the earlier one received first */
                if (k % 2 == 0) {
                    while (!flag)
                        MPI_Iprobe(0, 1 + (k + 1) % 4, MPI_COMM_WORLD, &flag, &st);
                    MPI_Recv(c, 64, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &rs);
                } else {
                    MPI_Recv(c, 64, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &rs);
                }
                break;
            }
            MPI_Get_count(&rs, MPI_BYTE, &n);
            fprintf(out, "way %d message %d source %d tag %d count %d sum %08x\n", w, k, rs.MPI_SOURCE, rs.MPI_TAG,
                    n, sum(c, n));
            recvd++;
            bytes += (unsigned long)n;
        }
    }
    fprintf(out, "rank %d: totals bytes %lu sent %lu received %lu\n", rank, bytes, sent, recvd);
    return fclose(out) != 0;
}

/* the thread way: the probed message received by another thread */
static void *recv_thread(void *arg)
{
    MPI_Recv(arg, 8, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

static int stale(int rank, const char *way)
{
    unsigned char b[8] = {1, 2, 3, 4, 5, 6, 7, 8}, c[8];
    MPI_Status st;
    if (rank == 0) {
        MPI_Send(b, 8, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Request r;
        MPI_Message m;
        int flag = 0;
        if (!strcmp(way, "probe"))
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        else
            while (!flag)
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!strcmp(way, "irecv") || !strcmp(way, "ignore") || !strcmp(way, "probe")) {
            if (!strcmp(way, "ignore")) /* the record of a probe without a status */
                for (flag = 0; !flag;)
                    MPI_Iprobe(0, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            MPI_Irecv(c, 8, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, &st);
        } else if (!strcmp(way, "sendrecv")) {
            MPI_Sendrecv(b, 8, MPI_BYTE, MPI_PROC_NULL, 0, c, 8, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st);
        } else if (!strcmp(way, "improbe")) {
            for (flag = 0; !flag;)
                MPI_Improbe(0, 5, MPI_COMM_WORLD, &flag, &m, &st);
            MPI_Mrecv(c, 8, MPI_BYTE, &m, &st);
        } else if (!strcmp(way, "persistent") || !strcmp(way, "startall")) {
            MPI_Recv_init(c, 8, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &r);
            if (!strcmp(way, "persistent")) {
                MPI_Start(&r);
                MPI_Wait(&r, &st);
            } else {
                MPI_Startall(1, &r);
                MPI_Waitall(1, &r, &st);
            }
            MPI_Request_free(&r);
        } else if (!strcmp(way, "recv")) {
            MPI_Recv(c, 8, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st);
        } else if (!strcmp(way, "thread")) {
            pthread_t t;
            if (pthread_create(&t, NULL, recv_thread, c) != 0 || pthread_join(t, NULL) != 0)
                MPI_Abort(MPI_COMM_WORLD, 3);
        } else {
            fprintf(stderr, "probed: unknown way %s\n", way);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        printf("rank 1: %s took source %d tag %d sum %08x\n", way, st.MPI_SOURCE, st.MPI_TAG, sum(c, 8));
    }
    MPI_Recv(c, 8, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    printf("rank %d: then got source %d tag %d\n", rank, st.MPI_SOURCE, st.MPI_TAG);
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size, rc = 2, provided = 0;
    if (argc == 3 && !strcmp(argv[2], "thread")) /* the thread way: two threads call MPI, one at a time */
        MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size == 2 && argc == 3 && !strcmp(argv[1], "cases"))
        rc = cases(rank, argv[2]);
    else if (size == 2 && argc == 3 && !strcmp(argv[1], "stale"))
        rc = stale(rank, argv[2]);
    else if (rank == 0)
        fprintf(stderr, "usage (2 ranks): probed cases PREFIX | probed stale WAY\n");
    MPI_Finalize();
    return rc;
}
