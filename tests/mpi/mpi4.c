/*
 * mpi4: the MPI-4.0 point-to-point calls (large-count MPI_*_c forms) paired
 * with the MPI-3.1 ones, both directions, between two ranks. Each case
 * sends 4 integers (or a strided type with gaps) and each receiving rank
 * prints count (MPI_Get_count_c and MPI_Get_count), error class, source,
 * tag and its whole receive buffer, gaps included (pre-filled with -1).
 * tests/mpi/mpi4.sh runs it natively and under tdshim and requires the
 * transcripts to be identical, and the report to count every message.
 *
 * Then MPI_Isendrecv(_replace)(_c) against each other and the MPI-3.1 calls
 * under each completion call (isendrecv()).
 *
 * usage: mpi4 calls          the cases above (rank 0 prints the transcript)
 *        mpi4 call NAME      one call alone (MPI_Psend_init, MPI_Precv_init:
 *                            a partitioned message whose side NAME initializes
 *                            first; MPI_Isendrecv, MPI_Isendrecv_replace)
 * Built against an MPI before 4.0 it prints "no MPI-4" and exits 0.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION < 4
int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    puts("no MPI-4");
    return 0;
}
#else

#define N 4
#define ROOM 16
static int rank, peer;
#include "say.h"

static int eclass(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

/* MPICH 4.0.2 leaves the status of an MPI_Isendrecv as it was (the
 * program's variable); tdshim gives the receive's: not compared */
static int no_status;

/* what the receiver sees: return code, counts, envelope, the whole buffer */
static void seen(const char *name, int rc, MPI_Status *st, MPI_Datatype t, const int *buf)
{
    MPI_Count cc = -2;
    int c = -2;
    if (no_status) {
        say("rank %d %s: err %d data", rank, name, eclass(rc));
        for (int i = 0; i < ROOM; i++)
            say(" %d", buf[i]);
        say("\n");
        return;
    }
    if (eclass(rc) == MPI_SUCCESS || eclass(rc) == MPI_ERR_TRUNCATE) {
        MPI_Get_count_c(st, t, &cc);
        MPI_Get_count(st, t, &c);
    }
    say("rank %d %s: err %d count_c %lld count %d src %d tag %d data", rank, name, eclass(rc), (long long)cc, c,
        st->MPI_SOURCE, st->MPI_TAG);
    for (int i = 0; i < ROOM; i++)
        say(" %d", buf[i]);
    say("\n");
}

static void fill(int *b, int tag)
{
    for (int i = 0; i < ROOM; i++)
        b[i] = rank * 1000 + tag * 10 + i;
}

static void clear(int *b)
{
    for (int i = 0; i < ROOM; i++)
        b[i] = -1;
}

/* case `tag`: rank s sends with send(), the other receives with recv() */
typedef int (*send_fn)(int *buf, int tag);
typedef int (*recv_fn)(int *buf, int tag, MPI_Status *st, MPI_Datatype *t);

static int s_send(int *b, int tag) { return MPI_Send(b, N, MPI_INT, peer, tag, MPI_COMM_WORLD); }
static int s_send_c(int *b, int tag) { return MPI_Send_c(b, N, MPI_INT, peer, tag, MPI_COMM_WORLD); }
static int s_ssend_c(int *b, int tag) { return MPI_Ssend_c(b, N, MPI_INT, peer, tag, MPI_COMM_WORLD); }
static int s_bsend_c(int *b, int tag)
{
    static char bb[4096];
    void *p;
    MPI_Count sz;
    int rc = MPI_Buffer_attach_c(bb, sizeof bb);
    if (rc == MPI_SUCCESS)
        rc = MPI_Bsend_c(b, N, MPI_INT, peer, tag, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        rc = MPI_Buffer_detach_c(&p, &sz);
    if (rc == MPI_SUCCESS && (p != bb || sz != (MPI_Count)sizeof bb))
        rc = MPI_ERR_BUFFER;
    return rc;
}
#define NONBLOCKING(fn, call)                                                                                      \
    static int fn(int *b, int tag)                                                                                 \
    {                                                                                                              \
        MPI_Request r;                                                                                             \
        int rc = call(b, N, MPI_INT, peer, tag, MPI_COMM_WORLD, &r);                                               \
        return rc == MPI_SUCCESS ? MPI_Wait(&r, MPI_STATUS_IGNORE) : rc;                                           \
    }
NONBLOCKING(s_isend_c, MPI_Isend_c)
NONBLOCKING(s_issend_c, MPI_Issend_c)
#define PERSISTENT(fn, call)                                                                                       \
    static int fn(int *b, int tag)                                                                                 \
    {                                                                                                              \
        MPI_Request r;                                                                                             \
        int rc = call(b, N, MPI_INT, peer, tag, MPI_COMM_WORLD, &r);                                               \
        if (rc == MPI_SUCCESS)                                                                                     \
            rc = MPI_Start(&r);                                                                                    \
        if (rc == MPI_SUCCESS)                                                                                     \
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);                                                                  \
        MPI_Request_free(&r);                                                                                      \
        return rc;                                                                                                 \
    }
PERSISTENT(s_send_init_c, MPI_Send_init_c)
PERSISTENT(s_ssend_init_c, MPI_Ssend_init_c)

static int r_recv(int *b, int tag, MPI_Status *st, MPI_Datatype *t)
{
    *t = MPI_INT;
    return MPI_Recv(b, 8, MPI_INT, peer, tag, MPI_COMM_WORLD, st);
}
static int r_recv_c(int *b, int tag, MPI_Status *st, MPI_Datatype *t)
{
    *t = MPI_INT;
    return MPI_Recv_c(b, 8, MPI_INT, peer, tag, MPI_COMM_WORLD, st);
}
static int r_recv_c_exact(int *b, int tag, MPI_Status *st, MPI_Datatype *t)
{
    *t = MPI_INT;
    return MPI_Recv_c(b, N, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, st);
}
static int r_recv_c_trunc(int *b, int tag, MPI_Status *st, MPI_Datatype *t)
{
    *t = MPI_INT;
    return MPI_Recv_c(b, 2, MPI_INT, peer, tag, MPI_COMM_WORLD, st);
}
static int r_irecv_c(int *b, int tag, MPI_Status *st, MPI_Datatype *t)
{
    MPI_Request r;
    *t = MPI_INT;
    int rc = MPI_Irecv_c(b, 8, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
    (void)tag;
    return rc == MPI_SUCCESS ? MPI_Wait(&r, st) : rc;
}
static int r_recv_init_c(int *b, int tag, MPI_Status *st, MPI_Datatype *t)
{
    MPI_Request r;
    *t = MPI_INT;
    int rc = MPI_Recv_init_c(b, 8, MPI_INT, peer, tag, MPI_COMM_WORLD, &r);
    if (rc == MPI_SUCCESS)
        rc = MPI_Start(&r);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&r, st);
    MPI_Request_free(&r);
    return rc;
}
static int r_mrecv_c(int *b, int tag, MPI_Status *st, MPI_Datatype *t)
{
    MPI_Message m;
    *t = MPI_INT;
    int rc = MPI_Mprobe(peer, tag, MPI_COMM_WORLD, &m, st);
    return rc == MPI_SUCCESS ? MPI_Mrecv_c(b, 8, MPI_INT, &m, st) : rc;
}
static int r_imrecv_c(int *b, int tag, MPI_Status *st, MPI_Datatype *t)
{
    MPI_Message m;
    MPI_Request r;
    int flag = 0;
    *t = MPI_INT;
    int rc = MPI_SUCCESS;
    while (rc == MPI_SUCCESS && !flag)
        rc = MPI_Improbe(peer, tag, MPI_COMM_WORLD, &flag, &m, st);
    if (rc == MPI_SUCCESS)
        rc = MPI_Imrecv_c(b, 8, MPI_INT, &m, &r);
    return rc == MPI_SUCCESS ? MPI_Wait(&r, st) : rc;
}
/* every other int of 2N, the gaps between them stay -1 */
static int r_vector_c(int *b, int tag, MPI_Status *st, MPI_Datatype *t)
{
    static MPI_Datatype v = MPI_DATATYPE_NULL;
    if (v == MPI_DATATYPE_NULL) {
        MPI_Type_vector(2, 1, 2, MPI_INT, &v);
        MPI_Type_commit(&v);
    }
    *t = v;
    return MPI_Recv_c(b, 3, v, peer, tag, MPI_COMM_WORLD, st);
}

static const struct pair {
    const char *name;
    send_fn send;
    recv_fn recv;
} pairs[] = {
    {"Send_c>Recv", s_send_c, r_recv},
    {"Send>Recv_c", s_send, r_recv_c},
    {"Send>Recv_c(exact,ANY_SOURCE)", s_send, r_recv_c_exact},
    {"Send_c>Recv_c(truncated)", s_send_c, r_recv_c_trunc},
    {"Isend_c>Irecv_c", s_isend_c, r_irecv_c},
    {"Ssend_c>Recv_init_c", s_ssend_c, r_recv_init_c},
    {"Bsend_c>Mrecv_c", s_bsend_c, r_mrecv_c},
    {"Send_init_c>Imrecv_c", s_send_init_c, r_imrecv_c},
    {"Issend_c>Recv_c(vector)", s_issend_c, r_vector_c},
    {"Ssend_init_c>Recv", s_ssend_init_c, r_recv},
};

/* MPI_Isendrecv(_replace)(_c) against each other and against the MPI-3.1
 * calls, completed by each completion call; one exchange per case */
static void isendrecv(void)
{
    int sb[ROOM], rb[ROOM], rb2[ROOM];
    MPI_Status st, sts[2];
    MPI_Request r[2];
    no_status = 1;
    for (int k = 0; k < 9; k++) {
        int tag = 300 + k, rc, flag = 0, idx = -1, n = 0, ids[2];
        const char *name[] = {"Isendrecv+Wait<>Isendrecv+Test",     "Isendrecv_c+Waitall<>Sendrecv",
                              "Isendrecv_replace+Waitany<>Isendrecv", "Isendrecv_replace_c+Testsome<>Irecv+Send",
                              "Isendrecv+Request_get_status<>Recv+Send", "Isendrecv(vector)+Wait<>Isendrecv",
                              "Isendrecv+Testall<>Isendrecv_replace_c", "Isendrecv(2 of 4)+Wait<>Isendrecv",
                              "Isendrecv+Waitall(2)<>Isendrecv+Waitall(2)"};
        fill(sb, tag);
        clear(rb);
        clear(rb2);
        MPI_Datatype t = MPI_INT;
        switch (k) {
        case 0:
            rc = MPI_Isendrecv(sb, N, MPI_INT, peer, tag, rb, 8, MPI_INT, peer, tag, MPI_COMM_WORLD, &r[0]);
            if (rank == 0)
                rc = rc ? rc : MPI_Wait(&r[0], &st);
            else
                while (rc == MPI_SUCCESS && !flag)
                    rc = MPI_Test(&r[0], &flag, &st);
            break;
        case 1:
            if (rank == 0) {
                rc = MPI_Isendrecv_c(sb, N, MPI_INT, peer, tag, rb, 8, MPI_INT, peer, tag, MPI_COMM_WORLD, &r[0]);
                r[1] = MPI_REQUEST_NULL;
                rc = rc ? rc : MPI_Waitall(2, r, sts);
                st = sts[0];
            } else
                rc = MPI_Sendrecv(sb, N, MPI_INT, peer, tag, rb, 8, MPI_INT, peer, tag, MPI_COMM_WORLD, &st);
            break;
        case 2:
            if (rank == 0) {
                memcpy(rb, sb, N * sizeof(int));
                rc = MPI_Isendrecv_replace(rb, N, MPI_INT, peer, tag, peer, tag, MPI_COMM_WORLD, &r[0]);
                r[1] = MPI_REQUEST_NULL;
                rc = rc ? rc : MPI_Waitany(2, r, &idx, &st);
            } else {
                rc = MPI_Isendrecv(sb, N, MPI_INT, peer, tag, rb, 8, MPI_INT, peer, tag, MPI_COMM_WORLD, &r[0]);
                rc = rc ? rc : MPI_Wait(&r[0], &st);
            }
            break;
        case 3:
            if (rank == 0) {
                memcpy(rb, sb, N * sizeof(int));
                rc = MPI_Isendrecv_replace_c(rb, N, MPI_INT, peer, tag, peer, tag, MPI_COMM_WORLD, &r[0]);
                while (rc == MPI_SUCCESS && n == 0)
                    rc = MPI_Testsome(1, r, &n, ids, &st);
            } else {
                rc = MPI_Irecv(rb, 8, MPI_INT, peer, tag, MPI_COMM_WORLD, &r[0]);
                rc = rc ? rc : MPI_Send(sb, N, MPI_INT, peer, tag, MPI_COMM_WORLD);
                rc = rc ? rc : MPI_Wait(&r[0], &st);
            }
            break;
        case 4:
            if (rank == 0) {
                rc = MPI_Isendrecv(sb, N, MPI_INT, peer, tag, rb, 8, MPI_INT, peer, tag, MPI_COMM_WORLD, &r[0]);
                while (rc == MPI_SUCCESS && !flag)
                    rc = MPI_Request_get_status(r[0], &flag, &st);
                rc = rc ? rc : MPI_Wait(&r[0], MPI_STATUS_IGNORE);
            } else {
                rc = MPI_Recv(rb, 8, MPI_INT, peer, tag, MPI_COMM_WORLD, &st);
                rc = rc ? rc : MPI_Send(sb, N, MPI_INT, peer, tag, MPI_COMM_WORLD);
            }
            break;
        case 5: { /* into every other int (gaps stay -1) */
            static MPI_Datatype v = MPI_DATATYPE_NULL;
            if (v == MPI_DATATYPE_NULL) {
                MPI_Type_vector(2, 1, 2, MPI_INT, &v);
                MPI_Type_commit(&v);
            }
            t = v;
            rc = MPI_Isendrecv(sb, N, MPI_INT, peer, tag, rb, 3, v, peer, tag, MPI_COMM_WORLD, &r[0]);
            rc = rc ? rc : MPI_Wait(&r[0], &st);
            break;
        }
        case 6:
            if (rank == 0) {
                rc = MPI_Isendrecv(sb, N, MPI_INT, peer, tag, rb, 8, MPI_INT, peer, tag, MPI_COMM_WORLD, &r[0]);
                while (rc == MPI_SUCCESS && !flag)
                    rc = MPI_Testall(1, r, &flag, &st);
            } else {
                memcpy(rb, sb, N * sizeof(int));
                rc = MPI_Isendrecv_replace_c(rb, N, MPI_INT, peer, tag, peer, tag, MPI_COMM_WORLD, &r[0]);
                rc = rc ? rc : MPI_Wait(&r[0], &st);
            }
            break;
        case 7: /* room for 4, 2 sent */
            rc = MPI_Isendrecv(sb, 2, MPI_INT, peer, tag, rb, N, MPI_INT, peer, tag, MPI_COMM_WORLD, &r[0]);
            rc = rc ? rc : MPI_Wait(&r[0], &st);
            break;
        default: /* two at once on two tags, completed together */
            rc = MPI_Isendrecv(sb, N, MPI_INT, peer, tag, rb, 8, MPI_INT, peer, tag, MPI_COMM_WORLD, &r[0]);
            rc = rc ? rc : MPI_Isendrecv(sb + 8, N, MPI_INT, peer, tag + 50, rb2, 8, MPI_INT, peer, tag + 50,
                                         MPI_COMM_WORLD, &r[1]);
            rc = rc ? rc : MPI_Waitall(2, r, sts);
            st = sts[0];
            seen("Isendrecv+Waitall(2)<>Isendrecv+Waitall(2) second", rc, &sts[1], MPI_INT, rb2);
            break;
        }
        seen(name[k], rc, &st, t, rb);
    }
    no_status = 0;
}

static void calls(void)
{
    int sb[ROOM], rb[ROOM];
    int np = (int)(sizeof pairs / sizeof pairs[0]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int k = 0; k < np; k++)
        for (int s = 0; s < 2; s++) {
            int tag = 10 * k + s;
            if (rank == s) {
                fill(sb, tag);
                int rc = pairs[k].send(sb, tag);
                say("rank %d %s: send err %d\n", rank, pairs[k].name, eclass(rc));
            } else {
                MPI_Status st;
                MPI_Datatype t;
                clear(rb);
                int rc = pairs[k].recv(rb, tag, &st, &t);
                seen(pairs[k].name, rc, &st, t, rb);
            }
        }
    /* Sendrecv_c both ways, then Sendrecv_replace_c against Sendrecv */
    MPI_Status st;
    fill(sb, 200);
    clear(rb);
    int rc = MPI_Sendrecv_c(sb, N, MPI_INT, peer, 200, rb, 8, MPI_INT, peer, 200, MPI_COMM_WORLD, &st);
    seen("Sendrecv_c<>Sendrecv_c", rc, &st, MPI_INT, rb);
    clear(rb);
    fill(sb, 201);
    if (rank == 0) {
        memcpy(rb, sb, N * sizeof(int));
        rc = MPI_Sendrecv_replace_c(rb, N, MPI_INT, peer, 201, peer, 201, MPI_COMM_WORLD, &st);
    } else
        rc = MPI_Sendrecv(sb, N, MPI_INT, peer, 201, rb, 8, MPI_INT, peer, 201, MPI_COMM_WORLD, &st);
    seen("Sendrecv_replace_c<>Sendrecv", rc, &st, MPI_INT, rb);
    isendrecv();
}

/* one call alone (tdshim once refused these) */
static int refused(const char *name)
{
    int sb[N] = {1, 2, 3, 4}, rb[N] = {0};
    MPI_Request r;
    int rc;
    if (!strcmp(name, "MPI_Isendrecv"))
        rc = MPI_Isendrecv(sb, N, MPI_INT, peer, 1, rb, N, MPI_INT, peer, 1, MPI_COMM_WORLD, &r);
    else if (!strcmp(name, "MPI_Isendrecv_replace"))
        rc = MPI_Isendrecv_replace(sb, N, MPI_INT, peer, 1, peer, 1, MPI_COMM_WORLD, &r);
    else if (!strcmp(name, "MPI_Psend_init") || !strcmp(name, "MPI_Precv_init")) {
        /* both sides partitioned: 2 partitions of 2 ints; the side named
         * makes its call first (the other waits in a barrier) */
        int first = !strcmp(name, "MPI_Psend_init") ? 0 : 1;
        if (rank != first)
            MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            rc = MPI_Psend_init(sb, 2, 2, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        else
            rc = MPI_Precv_init(rb, 2, 2, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        if (rank == first)
            MPI_Barrier(MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS)
            rc = MPI_Start(&r);
        if (rc == MPI_SUCCESS && rank == 0)
            rc = MPI_Pready_range(0, 1, r);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Request_free(&r);
        printf("rank %d %s: err %d data %d %d %d %d\n", rank, name, rc, rb[0], rb[1], rb[2], rb[3]);
        return rc;
    } else {
        fprintf(stderr, "mpi4: unknown call %s\n", name);
        return 1;
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    printf("rank %d %s: err %d data %d %d %d %d\n", rank, name, rc, rb[0], rb[1], rb[2], rb[3]);
    return rc;
}

int main(int argc, char **argv)
{
    int size, rc = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = 1 - rank;
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi4: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argc > 1 && !strcmp(argv[1], "calls")) {
        calls();
        if (rank == 1) {
            int n = (int)outn;
            MPI_Send(&n, 1, MPI_INT, 0, 999, MPI_COMM_WORLD);
            MPI_Send(out, n, MPI_CHAR, 0, 999, MPI_COMM_WORLD);
        } else {
            int n;
            fwrite(out, 1, outn, stdout);
            MPI_Recv(&n, 1, MPI_INT, 1, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            char *o = malloc((size_t)n);
            MPI_Recv(o, n, MPI_CHAR, 1, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            fwrite(o, 1, (size_t)n, stdout);
            free(o);
        }
    } else if (argc > 2 && !strcmp(argv[1], "call"))
        rc = refused(argv[2]);
    else {
        fprintf(stderr, "usage: mpi4 calls | call NAME\n");
        rc = 1;
    }
    MPI_Finalize();
    return rc != MPI_SUCCESS;
}
#endif
