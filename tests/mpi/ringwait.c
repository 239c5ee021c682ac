/*
 * The ways a program completes nonblocking receives with MPI_Waitall
 * (tests/mpi/ringwait.sh): tdshim's flat receives go to a ring in posting
 * order and MPI_Waitall finds them by walking the ring beside the array
 * (shim/mpi/tds_complete.c, waitall_flat), or through the set's slots when
 * the array is not the ring. Each case below takes one branch of that:
 *
 *   1  a window in posting order, statuses ignored
 *   2  a window in posting order, statuses asked for
 *   3  a window in reverse order
 *   4  receives and this rank's own sends interleaved in the array
 *   5  two windows posted, completed one after the other
 *   6  a receive posted first and completed last, windows in between
 *   7  300 receives at once (more than the ring holds)
 *   8  a truncated message ending a window, errors returned (MPI_ERR_IN_STATUS)
 *   9  an empty array and an array of MPI_REQUEST_NULL
 *  10  small and large messages in one window (the large ones take tdshim's
 *      general path under a header)
 *  11  a window whose messages change type every third message (int,
 *      double, short, byte; sent by MPI_Isend and MPI_Send in turn): the
 *      flat entries' type cache changes, and the header-free sends count
 *      elements of the cached type (tds_sent_bytes_fold)
 *  12  two types in turn, every message (int, double), some sent and
 *      received blocking (tag 2): the cache's two types swap at every
 *      message (type_cache_swap) inside the flat entries
 *  13  single completion calls (MPI_Test until done, MPI_Wait) on receives
 *      in the ring, near its end (taken out where they are: tds_hs_near)
 *      and not (the ring flushed), then the rest with MPI_Waitall
 *
 * Rank 0 sends, rank 1 receives (and sends back in case 4). Rank 1 prints
 * each completed receive (case, index, source, tag, count, checksum) and
 * the return codes; both print their totals: messages and bytes sent and
 * received, which the script compares with tdshim's report. Each rank
 * writes to PREFIX.RANK (argument 1; the ranks' lines would interleave on
 * one standard output). Output is the same natively and under tdshim,
 * byte for byte.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 300
#define MAXB 400

static int rank;
static FILE *out;
static unsigned long long n_sent, b_sent, n_recv, b_recv, n_trunc, b_trunc;
static unsigned char sbuf[MAXN][MAXB], rbuf[MAXN][MAXB];
static MPI_Request rq[2 * MAXN];
static MPI_Status st[2 * MAXN];

/* the size of message k of case c, 1..cap bytes */
static int msize(int c, int k, int cap)
{
    return 1 + (int)(((unsigned)k * 37u + (unsigned)c * 11u) % (unsigned)cap);
}

static void fill(int c, int k, int n)
{
    for (int i = 0; i < n; i++)
        sbuf[k][i] = (unsigned char)(c * 31 + k * 7 + i);
}

static unsigned sum(const unsigned char *b, int n)
{
    unsigned s = 2166136261u;
    for (int i = 0; i < n; i++)
        s = (s ^ b[i]) * 16777619u;
    return s;
}

/* rank 0: messages k = 0..n-1 of case c, each of msize(c, k, cap) bytes */
static void send_case(int c, int n, int cap, int tag)
{
    for (int k = 0; k < n; k++) {
        int m = msize(c, k, cap);
        fill(c, k, m);
        MPI_Isend(sbuf[k], m, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &rq[k]);
        n_sent++;
        b_sent += (unsigned long long)m;
    }
    MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
}

/* the statuses of the next call: MPI_ERROR is set only when a multiple
 * completion call fails (MPI-3.1 §3.7.5), so it starts as MPI_SUCCESS */
static void clear_st(int n)
{
    for (int i = 0; i < n; i++)
        st[i].MPI_ERROR = MPI_SUCCESS;
}

static void post(int c, int k, int cap, int tag, MPI_Request *r)
{
    memset(rbuf[k], 0xEE, MAXB);
    MPI_Irecv(rbuf[k], cap, MPI_BYTE, 0, tag, MPI_COMM_WORLD, r);
    (void)c;
}

/* a completed receive of message k (status s, or its known size) */
static void done(int c, int i, int k, const MPI_Status *s, int known)
{
    int n = known, src = 0, tag = -1, err = MPI_SUCCESS;
    if (s) {
        MPI_Get_count(s, MPI_BYTE, &n);
        src = s->MPI_SOURCE;
        tag = s->MPI_TAG;
        err = s->MPI_ERROR;
    }
    int cls = MPI_SUCCESS;
    if (err != MPI_SUCCESS)
        MPI_Error_class(err, &cls);
    fprintf(out, "case %d index %d message %d source %d tag %d count %d error %d sum %08x\n", c, i, k, src, tag, n, cls,
           sum(rbuf[k], MAXB));
    n_recv++;
    b_recv += (unsigned long long)n;
    if (cls == MPI_ERR_TRUNCATE) {
        n_trunc++;
        b_trunc += (unsigned long long)n;
    }
}

static void recv_window(int c, int n, int cap, int statuses)
{
    for (int k = 0; k < n; k++)
        post(c, k, cap, 1, &rq[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    clear_st(n);
    int rc = MPI_Waitall(n, rq, statuses ? st : MPI_STATUSES_IGNORE);
    fprintf(out, "case %d waitall %d\n", c, rc);
    for (int k = 0; k < n; k++)
        done(c, k, k, statuses ? &st[k] : NULL, msize(c, k, cap));
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char name[4096];
    if (size != 2 || argc != 2 || snprintf(name, sizeof name, "%s.%d", argv[1], rank) >= (int)sizeof name ||
        !(out = fopen(name, "w"))) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -n 2 ringwait OUTPUT-PREFIX\n");
        MPI_Finalize();
        return 2;
    }
    const int W = 64;

    /* 1, 2: a window in posting order */
    for (int c = 1; c <= 2; c++) {
        if (rank == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            send_case(c, W, 100, 1);
        } else {
            recv_window(c, W, 100, c == 2);
        }
    }

    /* 3: reverse order */
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        send_case(3, W, 100, 1);
    } else {
        for (int k = 0; k < W; k++)
            post(3, k, 100, 1, &rq[W - 1 - k]);
        MPI_Barrier(MPI_COMM_WORLD);
        clear_st(W);
        int rc = MPI_Waitall(W, rq, st);
        fprintf(out, "case 3 waitall %d\n", rc);
        for (int i = 0; i < W; i++)
            done(3, i, W - 1 - i, &st[i], 0);
    }

    /* 4: receives and sends interleaved */
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        send_case(4, W, 100, 1);
        for (int k = 0; k < W; k++) {
            unsigned char b[MAXB];
            MPI_Status s;
            MPI_Recv(b, MAXB, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &s);
            int n;
            MPI_Get_count(&s, MPI_BYTE, &n);
            n_recv++;
            b_recv += (unsigned long long)n;
        }
    } else {
        for (int k = 0; k < W; k++) {
            post(4, k, 100, 1, &rq[2 * k]);
            int m = msize(40, k, 50);
            fill(40, k, m);
            MPI_Isend(sbuf[k], m, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &rq[2 * k + 1]);
            n_sent++;
            b_sent += (unsigned long long)m;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        clear_st(2 * W);
        int rc = MPI_Waitall(2 * W, rq, st);
        fprintf(out, "case 4 waitall %d\n", rc);
        for (int k = 0; k < W; k++)
            done(4, 2 * k, k, &st[2 * k], 0);
    }

    /* 5: two windows posted, completed one after the other */
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        send_case(5, 2 * W, 100, 1);
    } else {
        for (int k = 0; k < 2 * W; k++)
            post(5, k, 100, 1, &rq[k]);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int h = 0; h < 2; h++) {
            clear_st(W);
            int rc = MPI_Waitall(W, rq + h * W, st);
            fprintf(out, "case 5 waitall %d\n", rc);
            for (int k = 0; k < W; k++)
                done(5, k, h * W + k, &st[k], 0);
        }
    }

    /* 6: a receive posted first, completed last */
    if (rank == 0) {
        for (int w = 0; w < 3; w++) {
            MPI_Barrier(MPI_COMM_WORLD);
            send_case(6, W, 100, 1);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        fill(60, 0, 33);
        MPI_Send(sbuf[0], 33, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
        n_sent++;
        b_sent += 33;
    } else {
        MPI_Request lone;
        memset(rbuf[MAXN - 1], 0xEE, MAXB);
        MPI_Irecv(rbuf[MAXN - 1], MAXB, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &lone);
        for (int w = 0; w < 3; w++)
            recv_window(6, W, 100, w == 1);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Status s;
        s.MPI_ERROR = MPI_SUCCESS;
        int rc = MPI_Wait(&lone, &s);
        fprintf(out, "case 6 wait %d\n", rc);
        done(6, 0, MAXN - 1, &s, 0);
    }

    /* 7: more receives than the ring holds */
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        send_case(7, MAXN, 60, 1);
    } else {
        recv_window(7, MAXN, 60, 1);
    }

    /* 8: a truncated message, errors returned */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < 8; k++) {
            int m = k == 7 ? 90 : 20; /* the last: matched in order, it completes after the others (Open
                                       * MPI's MPI_Waitall may stop at an error and leave later requests
                                       * pending, natively too: timing, not a fixed outcome) */
            fill(8, k, m);
            MPI_Send(sbuf[k], m, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            n_sent++;
            b_sent += (unsigned long long)m;
        }
    } else {
        for (int k = 0; k < 8; k++)
            post(8, k, 40, 1, &rq[k]);
        MPI_Barrier(MPI_COMM_WORLD);
        clear_st(8);
        int rc = MPI_Waitall(8, rq, st), cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        fprintf(out, "case 8 waitall class %d\n", cls);
        for (int k = 0; k < 8; k++)
            done(8, k, k, &st[k], 0);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* 9: empty arrays */
    if (rank == 1) {
        int rc = MPI_Waitall(0, rq, st);
        for (int k = 0; k < 4; k++)
            rq[k] = MPI_REQUEST_NULL;
        int rc2 = MPI_Waitall(4, rq, st);
        fprintf(out, "case 9 waitall %d %d source %d tag %d\n", rc, rc2, st[0].MPI_SOURCE, st[0].MPI_TAG);
    }

    /* 10: small and large messages in one window */
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        send_case(10, W, MAXB, 1);
    } else {
        recv_window(10, W, MAXB, 1);
    }

    /* 11: a window of messages of changing types */
    {
        static const MPI_Datatype types[4] = {MPI_INT, MPI_DOUBLE, MPI_SHORT, MPI_BYTE};
        static const int tsz[4] = {(int)sizeof(int), (int)sizeof(double), (int)sizeof(short), 1};
        if (rank == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            for (int k = 0; k < W; k++) {
                int t = k / 3 % 4, e = msize(11, k, 40 / tsz[t]), m = e * tsz[t];
                fill(11, k, m);
                if (k % 7 < 4)
                    MPI_Isend(sbuf[k], e, types[t], 1, 1, MPI_COMM_WORLD, &rq[k]);
                else {
                    MPI_Send(sbuf[k], e, types[t], 1, 1, MPI_COMM_WORLD);
                    rq[k] = MPI_REQUEST_NULL;
                }
                n_sent++;
                b_sent += (unsigned long long)m;
            }
            MPI_Waitall(W, rq, MPI_STATUSES_IGNORE);
        } else {
            for (int k = 0; k < W; k++) {
                int t = k / 3 % 4;
                memset(rbuf[k], 0xEE, MAXB);
                MPI_Irecv(rbuf[k], 40 / tsz[t], types[t], 0, 1, MPI_COMM_WORLD, &rq[k]);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            clear_st(W);
            int rc = MPI_Waitall(W, rq, st);
            fprintf(out, "case 11 waitall %d\n", rc);
            for (int k = 0; k < W; k++)
                done(11, k, k, &st[k], 0);
        }
    }

    /* 12: two types in turn, every message (tdshim's type cache keeps the
     * one before: a swap per message, its element counts folded each time) */
    {
        static const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
        static const int tsz[2] = {(int)sizeof(int), (int)sizeof(double)};
        if (rank == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            for (int k = 0; k < W; k++) {
                int t = k % 2, e = msize(12, k, 40 / tsz[t]), m = e * tsz[t];
                fill(12, k, m);
                if (k % 5 < 3)
                    MPI_Isend(sbuf[k], e, types[t], 1, 1, MPI_COMM_WORLD, &rq[k]);
                else { /* tag 2: the receiver's blocking receives */
                    MPI_Send(sbuf[k], e, types[t], 1, k % 5 == 4 ? 2 : 1, MPI_COMM_WORLD);
                    rq[k] = MPI_REQUEST_NULL;
                }
                n_sent++;
                b_sent += (unsigned long long)m;
            }
            MPI_Waitall(W, rq, MPI_STATUSES_IGNORE);
        } else {
            for (int k = 0; k < W; k++) {
                int t = k % 2;
                memset(rbuf[k], 0xEE, MAXB);
                if (k % 5 == 4) { /* a blocking receive (tag 2) among them, after the barrier */
                    rq[k] = MPI_REQUEST_NULL;
                    continue;
                }
                MPI_Irecv(rbuf[k], 40 / tsz[t], types[t], 0, 1, MPI_COMM_WORLD, &rq[k]);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            clear_st(W);
            MPI_Status bst[64]; /* MPI_Recv leaves MPI_ERROR alone: set it, as clear_st does */
            memset(bst, 0, sizeof bst);
            for (int k = 0; k < W; k++)
                bst[k].MPI_ERROR = MPI_SUCCESS;
            for (int k = 4; k < W; k += 5)
                MPI_Recv(rbuf[k], 40 / tsz[k % 2], types[k % 2], 0, 2, MPI_COMM_WORLD, &bst[k]);
            int rc = MPI_Waitall(W, rq, st);
            fprintf(out, "case 12 waitall %d\n", rc);
            for (int k = 0; k < W; k++)
                done(12, k, k, k % 5 == 4 ? &bst[k] : &st[k], 0);
        }
    }

    /* 13: single completion calls (MPI_Test until done, MPI_Wait) on
     * receives still in the ring: tdshim takes one posted among the last
     * eight out of the ring where it is (tds_hs_near), one posted earlier
     * through the set's slots (the ring flushed); then more posted and the
     * rest completed together */
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        send_case(13, 28, 100, 1);
    } else {
        static const int order[] = {23, 20, 21, 0, 26}; /* 26: posted after 0 flushed the ring */
        MPI_Status s;
        int flag, idx = 0;
        for (int k = 0; k < 24; k++)
            post(13, k, 100, 1, &rq[k]);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int o = 0; o < 5; o++) {
            int k = order[o];
            if (k == 26)
                for (int j = 24; j < 28; j++)
                    post(13, j, 100, 1, &rq[j]);
            s.MPI_ERROR = MPI_SUCCESS;
            if (k == 21 || k == 26) { /* MPI_Wait, with and without a status */
                int rc = MPI_Wait(&rq[k], k == 21 ? &s : MPI_STATUS_IGNORE);
                fprintf(out, "case 13 wait %d\n", rc);
            } else { /* MPI_Test until done; 20: without a status */
                for (flag = 0; !flag;)
                    MPI_Test(&rq[k], &flag, k == 20 ? MPI_STATUS_IGNORE : &s);
            }
            done(13, idx++, k, k == 20 || k == 26 ? NULL : &s, msize(13, k, 100));
        }
        MPI_Request rest[28];
        int ks[28], n = 0;
        for (int k = 0; k < 28; k++)
            if (k != 23 && k != 20 && k != 21 && k != 0 && k != 26) {
                ks[n] = k;
                rest[n++] = rq[k];
            }
        clear_st(n);
        int rc = MPI_Waitall(n, rest, st);
        fprintf(out, "case 13 waitall %d\n", rc);
        for (int i = 0; i < n; i++)
            done(13, idx++, ks[i], &st[i], 0);
    }

    fprintf(out, "rank %d totals sent %llu bytes %llu received %llu bytes %llu truncated %llu bytes %llu\n", rank,
            n_sent, b_sent, n_recv, b_recv, n_trunc, b_trunc);
    fclose(out);
    MPI_Finalize();
    return 0;
}
