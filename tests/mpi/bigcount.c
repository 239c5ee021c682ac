/*
 * bigcount: MPI-4.0 large-count calls of more than INT_MAX elements
 * (issue 29: they must work under tdshim, as natively), between 2 ranks.
 *
 *   bigcount full    every case below, with messages of INT_MAX + 16 bytes
 *   bigcount one     the first of them (Send_c>Recv_c: one message of
 *                    INT_MAX + 16 elements of MPI_BYTE, over 2 GiB), then
 *                    the small cases: the large path end to end, quickly
 *   bigcount small   the cases whose messages are small (1000 bytes), into
 *                    receives of INT_MAX + 16 bytes: the same receive path
 *                    in seconds (the pages of the buffers stay untouched)
 *
 * One buffer of INT_MAX + 16 bytes per rank, reused by every case (2 GiB
 * per rank natively; tdshim's receive adds its bounce buffer under MPICH).
 * Each case sends from rank 0 to rank 1, which prints one line: the case,
 * the error class, MPI_Get_count_c and MPI_Get_elements_c in bytes, source,
 * tag, and the number of wrong bytes (received data against the pattern,
 * and the bytes after the message left untouched: all of them, or with
 * small the first 64 KiB). Cases (* = small):
 *   Send_c>Recv_c           the whole message into a receive of its size
 *   Isend_c>Irecv_c+Waitall the same, nonblocking
 *   Send_init_c>Recv_init_c persistent, started twice
 * * Send>Recv_c             1000 bytes into the same large receive, and
 *                           into each other receiving call: Irecv_c+Wait,
 *                           Recv_init_c, Mrecv_c, Imrecv_c, the receive
 *                           half of Sendrecv_c and Isendrecv_c
 *   Ssend_c>Recv_c(short)   a message 7 bytes shorter than the receive
 * * Buffer_attach_c/detach_c of more than INT_MAX bytes (no send: the
 *                           size given back must be the size attached)
 * Built against an MPI before 4.0 it prints "no MPI-4" and exits 0.
 */
#include <mpi.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION < 4
int main(void)
{
    puts("no MPI-4");
    return 0;
}
#else

static int rank;
static unsigned char *buf;
static MPI_Count n, span; /* the buffer's size; how much of it is cleared and checked */
static double t_case; /* when the receiver's case began (its time on stderr) */

/* the data of case `tag`: 8-byte words (fast to write and check) */
static uint64_t word(MPI_Count j, int tag)
{
    return (uint64_t)(j + 1) * 0x9e3779b97f4a7c15u ^ (uint64_t)tag;
}

static void fill(MPI_Count len, int tag)
{
    uint64_t *w = (uint64_t *)buf, last;
    MPI_Count nw = len / 8;
    for (MPI_Count j = 0; j < nw; j++)
        w[j] = word(j, tag);
    last = word(nw, tag);
    memcpy(buf + nw * 8, &last, (size_t)(len - nw * 8));
}

/* wrong bytes (counted by word) against the data of `len` bytes followed
 * by the fill of clear() */
static MPI_Count wrong(MPI_Count len, int tag)
{
    const uint64_t *w = (const uint64_t *)buf;
    MPI_Count nw = len / 8, bad = 0;
    for (MPI_Count j = 0; j < nw; j++)
        bad += w[j] != word(j, tag);
    uint64_t last = word(nw, tag);
    const unsigned char *l = (const unsigned char *)&last;
    MPI_Count b0 = nw * 8, b1 = b0 + 16 < span ? b0 + 16 : span, nwall = span / 8;
    for (MPI_Count i = b0; i < b1; i++) /* the data's last word, then fill */
        bad += buf[i] != (i < len ? l[i - b0] : 0xee);
    for (MPI_Count j = nw + 2; j < nwall; j++) /* the untouched rest, 8 bytes at a time */
        bad += w[j] != 0xeeeeeeeeeeeeeeeeu;
    for (MPI_Count i = nwall * 8 > b1 ? nwall * 8 : b1; i < span; i++)
        bad += buf[i] != 0xee;
    return bad;
}

/* the receiver's line: the first `len` bytes must be the data, the rest
 * of the buffer its fill (0xee); st NULL: no status to show (MPICH 4.0.2
 * leaves an MPI_Isendrecv's as it was, tdshim gives the receive's) */
static void seen(const char *name, int rc, MPI_Status *st, MPI_Count len, int tag)
{
    MPI_Count c = -2, e = -2;
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    else if (st) {
        MPI_Get_count_c(st, MPI_BYTE, &c);
        MPI_Get_elements_c(st, MPI_BYTE, &e);
    }
    fprintf(stderr, "bigcount: %s: %.2f s\n", name, MPI_Wtime() - t_case);
    printf("%s: err %d count_c %lld elements_c %lld src %d tag %d bad %lld\n", name, cls, (long long)c,
           (long long)e, rc == MPI_SUCCESS && st ? st->MPI_SOURCE : -1, rc == MPI_SUCCESS && st ? st->MPI_TAG : -1,
           (long long)wrong(len, tag));
    fflush(stdout);
}

static void clear(void)
{
    memset(buf, 0xee, (size_t)span);
    t_case = MPI_Wtime();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int one = argc > 1 && !strcmp(argv[1], "one");
    int full = one || (argc > 1 && !strcmp(argv[1], "full"));
    if (argc < 2 || (!full && strcmp(argv[1], "small"))) {
        fprintf(stderr, "usage: bigcount full | one | small\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    n = (MPI_Count)INT_MAX + 16;
    span = full ? n : 65536;
    buf = malloc((size_t)n);
    if (!buf) {
        fprintf(stderr, "bigcount: cannot allocate %lld bytes\n", (long long)n);
        MPI_Abort(MPI_COMM_WORLD, 77);
    }
    const int peer = 1 - rank;
    MPI_Status st;
    MPI_Request r[2];
    int rc, tag = 1;

    /* Send_c>Recv_c */
    if (!full)
        goto small;
    if (rank == 0) {
        fill(n, tag);
        MPI_Send_c(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
    } else {
        clear();
        rc = MPI_Recv_c(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
        seen("Send_c>Recv_c", rc, &st, n, tag);
    }
    if (one) { /* the small cases check the first 64 KiB, as with small */
        span = 65536;
        goto small;
    }

    /* Isend_c>Irecv_c+Waitall */
    tag = 2;
    if (rank == 0) {
        fill(n, tag);
        MPI_Status sts[2];
        rc = MPI_Isend_c(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]);
        r[1] = MPI_REQUEST_NULL;
        MPI_Waitall(2, r, sts);
    } else {
        MPI_Status sts[2];
        clear();
        rc = MPI_Irecv_c(buf, n, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]);
        r[1] = MPI_REQUEST_NULL;
        rc = rc ? rc : MPI_Waitall(2, r, sts);
        seen("Isend_c>Irecv_c+Waitall", rc, &sts[0], n, tag);
    }

    /* Send_init_c>Recv_init_c, two rounds */
    tag = 3;
    if (rank == 0)
        rc = MPI_Send_init_c(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]);
    else
        rc = MPI_Recv_init_c(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]);
    for (int round = 0; round < 2 && rc == MPI_SUCCESS; round++) {
        if (rank == 0)
            fill(n, tag + round);
        else
            clear();
        MPI_Barrier(MPI_COMM_WORLD); /* the sender's buffer is filled before each round starts */
        rc = MPI_Start(&r[0]);
        rc = rc ? rc : MPI_Wait(&r[0], &st);
        if (rank == 1)
            seen(round ? "Send_init_c>Recv_init_c (round 2)" : "Send_init_c>Recv_init_c", rc, &st, n, tag + round);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Request_free(&r[0]);

    /* Ssend_c>Recv_c(short): 7 bytes short of the receive */
    tag = 8;
    if (rank == 0) {
        fill(n - 7, tag);
        MPI_Ssend_c(buf, n - 7, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
    } else {
        clear();
        rc = MPI_Recv_c(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
        seen("Ssend_c>Recv_c(short)", rc, &st, n - 7, tag);
    }

small:
    /* small messages into the large receive of each receiving call */
    static const char *small_name[] = {"Send>Recv_c", "Send>Irecv_c+Wait", "Send>Recv_init_c+Start+Wait",
                                       "Send>Mprobe+Mrecv_c", "Send>Improbe+Imrecv_c+Wait",
                                       "Sendrecv>Sendrecv_c", "Sendrecv>Isendrecv_c+Wait"};
    for (int k = 0; k < 7; k++) {
        int exch = k >= 5, flag = 0; /* exch: rank 1 sends 0 bytes back */
        MPI_Message m;
        tag = 10 + k;
        if (rank == 0) {
            fill(1000, tag);
            if (exch)
                MPI_Sendrecv(buf, 1000, MPI_BYTE, peer, tag, &flag, 0, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
            else
                MPI_Send(buf, 1000, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
            continue;
        }
        clear();
        switch (k) {
        case 0:
            rc = MPI_Recv_c(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
            break;
        case 1:
            rc = MPI_Irecv_c(buf, n, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &r[0]);
            rc = rc ? rc : MPI_Wait(&r[0], &st);
            break;
        case 2:
            rc = MPI_Recv_init_c(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]);
            rc = rc ? rc : MPI_Start(&r[0]);
            rc = rc ? rc : MPI_Wait(&r[0], &st);
            MPI_Request_free(&r[0]);
            break;
        case 3:
            rc = MPI_Mprobe(peer, tag, MPI_COMM_WORLD, &m, &st);
            rc = rc ? rc : MPI_Mrecv_c(buf, n, MPI_BYTE, &m, &st);
            break;
        case 4:
            while (!flag)
                MPI_Improbe(peer, tag, MPI_COMM_WORLD, &flag, &m, &st);
            rc = MPI_Imrecv_c(buf, n, MPI_BYTE, &m, &r[0]);
            rc = rc ? rc : MPI_Wait(&r[0], &st);
            break;
        case 5:
            rc = MPI_Sendrecv_c(&flag, 0, MPI_BYTE, peer, tag, buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
            break;
        default:
            rc = MPI_Isendrecv_c(&flag, 0, MPI_BYTE, peer, tag, buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]);
            rc = rc ? rc : MPI_Wait(&r[0], &st);
            break;
        }
        seen(small_name[k], rc, k == 6 ? NULL : &st, 1000, tag);
    }

    /* Buffer_attach_c/detach_c of n bytes (the buffer is never written) */
    if (rank == 1) {
        void *p = NULL;
        MPI_Count sz = -1;
        rc = MPI_Buffer_attach_c(buf, n);
        int rc2 = MPI_Buffer_detach_c(&p, &sz);
        printf("Buffer_attach_c/detach_c: err %d %d same buffer %d size %lld\n", rc, rc2, p == buf, (long long)sz);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
#endif
