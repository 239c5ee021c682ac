/*
 * sigmatch: receives whose type signature does not match the send's
 * (tests/mpi/sigmatch.sh). MPI reports some of them (MPICH: a message that
 * ends inside a basic element of the receive type is MPI_ERR_TRUNCATE);
 * tdshim must report the same, through every completion call, and write
 * the same bytes. Rank 1 prints, per case and completion call, the error
 * class returned, the status's MPI_ERROR class for the multiple-completion
 * calls, and the receive buffer (not the counts: MPICH's status of a
 * failed unpack is its own). Receive entry points: Recv, Irecv completed
 * by each of the 8 completion calls, a persistent receive (Recv_init,
 * Start, Wait), Mprobe+Mrecv, Improbe+Imrecv+Wait, the receive half of
 * Sendrecv and Sendrecv_replace, an Irecv freed with MPI_Request_free
 * (no error to report: its buffer once a later message on the same tag
 * has arrived and a barrier passed), and with MPI-4.0 the receive half
 * of MPI_Isendrecv (Wait, Waitall) and MPI_Isendrecv_replace (Wait).
 * usage: sigmatch   (2 ranks)
 */
#include <mpi.h>
#include <stdio.h>

enum {
    RECV, WAIT, WAITALL, WAITANY, WAITSOME, TEST, TESTALL, TESTANY, TESTSOME, PERSISTENT, MRECV, IMRECV,
    FREED, SENDRECV, SENDRECV_REPLACE, /* the rest: rank 1 sends too (exchange()) */
    ISENDRECV, ISENDRECV_WAITALL, ISENDRECV_REPLACE, NEP
};
static const char *ep_name[NEP] = {"recv",       "wait",     "waitall",          "waitany",
                                   "waitsome",   "test",     "testall",          "testany",
                                   "testsome",   "persistent", "mprobe+mrecv",   "improbe+imrecv",
                                   "request_free", "sendrecv", "sendrecv_replace", "isendrecv",
                                   "isendrecv+waitall", "isendrecv_replace"};
#if MPI_VERSION >= 4
#define NEP_HERE ISENDRECV_REPLACE
#else
#define NEP_HERE ISENDRECV /* MPI_Isendrecv* are MPI-4.0 */
#endif

/* the entry points where rank 1 sends too (its receive half is the case) */
static int exchange(int ep)
{
    return ep >= SENDRECV;
}

static int eclass(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

static int recv_by(int ep, void *buf, int n, MPI_Datatype t, int tag, MPI_Status *st)
{
    MPI_Request r;
    MPI_Message m;
    int rc, flag = 0, idx, out = 0, ids[1];
    switch (ep) {
    case RECV:
        return MPI_Recv(buf, n, t, 0, tag, MPI_COMM_WORLD, st);
    case PERSISTENT:
        MPI_Recv_init(buf, n, t, 0, tag, MPI_COMM_WORLD, &r);
        MPI_Start(&r);
        rc = MPI_Wait(&r, st);
        MPI_Request_free(&r);
        return rc;
    case MRECV:
        MPI_Mprobe(0, tag, MPI_COMM_WORLD, &m, st);
        return MPI_Mrecv(buf, n, t, &m, st);
    case IMRECV:
        do
            MPI_Improbe(0, tag, MPI_COMM_WORLD, &flag, &m, st);
        while (!flag);
        MPI_Imrecv(buf, n, t, &m, &r);
        return MPI_Wait(&r, st);
    case FREED: /* the program cannot be told: the buffer once the next message arrived */
        MPI_Irecv(buf, n, t, 0, tag, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        rc = MPI_Recv(&flag, 0, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        return rc;
    case SENDRECV:
        return MPI_Sendrecv(&flag, 0, MPI_BYTE, 0, tag, buf, n, t, 0, tag, MPI_COMM_WORLD, st);
    case SENDRECV_REPLACE:
        return MPI_Sendrecv_replace(buf, n, t, 0, tag, 0, tag, MPI_COMM_WORLD, st);
#if MPI_VERSION >= 4
    case ISENDRECV:
    case ISENDRECV_WAITALL:
        rc = MPI_Isendrecv(&idx, 0, MPI_BYTE, 0, tag, buf, n, t, 0, tag, MPI_COMM_WORLD, &r);
        if (rc != MPI_SUCCESS)
            return rc;
        return ep == ISENDRECV ? MPI_Wait(&r, st) : MPI_Waitall(1, &r, st);
    case ISENDRECV_REPLACE:
        rc = MPI_Isendrecv_replace(buf, n, t, 0, tag, 0, tag, MPI_COMM_WORLD, &r);
        return rc == MPI_SUCCESS ? MPI_Wait(&r, st) : rc;
#endif
    }
    MPI_Irecv(buf, n, t, 0, tag, MPI_COMM_WORLD, &r);
    switch (ep) {
    case WAIT:
        return MPI_Wait(&r, st);
    case WAITALL:
        return MPI_Waitall(1, &r, st);
    case WAITANY:
        return MPI_Waitany(1, &r, &idx, st);
    case WAITSOME:
        return MPI_Waitsome(1, &r, &out, ids, st);
    case TEST:
        do
            rc = MPI_Test(&r, &flag, st);
        while (rc == MPI_SUCCESS && !flag);
        return rc;
    case TESTALL:
        do
            rc = MPI_Testall(1, &r, &flag, st);
        while (rc == MPI_SUCCESS && !flag);
        return rc;
    case TESTANY:
        do
            rc = MPI_Testany(1, &r, &idx, &flag, st);
        while (rc == MPI_SUCCESS && !flag);
        return rc;
    default:
        do
            rc = MPI_Testsome(1, &r, &out, ids, st);
        while (rc == MPI_SUCCESS && out == 0);
        return rc;
    }
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype u, v;
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {4, 16};
    MPI_Datatype ty[2] = {MPI_CHAR, MPI_INT};
    MPI_Type_create_struct(2, bl, dp, ty, &u); /* a char and an int, with gaps */
    MPI_Type_commit(&u);
    MPI_Type_vector(3, 1, 2, MPI_SHORT, &v);
    MPI_Type_commit(&v);
    unsigned char sb[512], rb[1024], other[4096];
    for (int i = 0; i < 512; i++)
        sb[i] = (unsigned char)i;
    const struct {
        MPI_Datatype st;
        int sc;
        MPI_Datatype rt;
        int rc;
        const char *n;
    } c[] = {{MPI_INT, 1, u, 4, "int->char+int"},       {MPI_BYTE, 7, u, 4, "7 bytes->char+int"},
             {MPI_INT, 3, u, 4, "3 ints->char+int"},    {MPI_INT, 4, MPI_DOUBLE, 4, "4 ints->double"},
             {MPI_BYTE, 5, MPI_INT, 4, "5 bytes->int"}, {MPI_BYTE, 5, v, 4, "5 bytes->vector of short"},
             {MPI_INT, 9, u, 40, "9 ints->char+int"},   {MPI_BYTE, 2, u, 4, "2 bytes->char+int"}};
    int nc = (int)(sizeof c / sizeof c[0]);
    for (int k = 0; k < nc; k++)
        for (int ep = 0; ep < NEP_HERE; ep++) {
            int tag = k * NEP + ep;
            if (rank == 0) {
                if (exchange(ep)) /* and what rank 1 sends, as bytes */
                    MPI_Sendrecv(sb, c[k].sc, c[k].st, 1, tag, other, (int)sizeof other, MPI_BYTE, 1, tag,
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                else
                    MPI_Send(sb, c[k].sc, c[k].st, 1, tag, MPI_COMM_WORLD);
                if (ep == FREED) { /* the next message on the tag */
                    MPI_Send(other, 0, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
                    MPI_Barrier(MPI_COMM_WORLD);
                }
            } else if (rank == 1) {
                MPI_Status st;
                st.MPI_ERROR = MPI_SUCCESS;
                for (int i = 0; i < (int)sizeof rb; i++)
                    rb[i] = 0xee;
                int rc = recv_by(ep, rb, c[k].rc, c[k].rt, tag, &st);
                int multi = ep == WAITALL || ep == WAITSOME || ep == TESTALL || ep == TESTSOME ||
                            ep == ISENDRECV_WAITALL;
                printf("%s %s: rc %d serr %d buf", c[k].n, ep_name[ep], eclass(rc),
                       multi ? eclass(st.MPI_ERROR) : -1);
                for (int i = 0; i < 48; i++)
                    printf(" %02x", rb[i]);
                printf("\n");
            }
        }
    MPI_Type_free(&u);
    MPI_Type_free(&v);
    MPI_Finalize();
    return 0;
}
