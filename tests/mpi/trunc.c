/*
 * trunc: truncated receives followed by sends (issue 42; tests/mpi/trunc.sh).
 *
 *   trunc ROUNDS
 *
 * Rank 0 sends rank 1 a message of 256 ints after a pause, so rank 1 waits
 * for it (a waiting rank is passive); rank 1 receives it into room for 2
 * ints (MPI_ERR_TRUNCATE) through one completion path after another
 * (Recv; Irecv completed by Wait, Test, Waitany, Waitall, Testsome; a
 * persistent receive; Mprobe+Mrecv; Improbe+Imrecv; Sendrecv; Iprobe until
 * found, then Recv: tdshim's flat receive takes MPI's blocking one for a
 * message a probe found) and then
 * sends rank 0 an empty reply. MPICH 4.0 (ch4:ucx) writes nothing of a
 * truncated message, tdshim's header included: the receive still completes
 * and makes the rank active, so the reply is no contract violation, and the
 * message counts as received. Each rank prints the error class of each
 * receive and, last, "rank R: primaries sent S received N" (what it sent and
 * received) for the script to compare with its report.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { T_RECV, T_WAIT, T_TEST, T_WAITANY, T_WAITALL, T_TESTSOME, T_PERSIST, T_MPROBE, T_IMPROBE, T_SENDRECV,
       T_IPROBE, T_N };
static const char *t_name[T_N] = {"recv",           "irecv+wait", "irecv+test",   "irecv+waitany",
                                  "irecv+waitall",  "irecv+testsome", "recv_init", "mprobe+mrecv",
                                  "improbe+imrecv", "sendrecv",   "iprobe+recv"};

static int eclass(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    int rank, size, big[256] = {0}, small[2], sent = 0, received = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rounds = argc > 1 ? atoi(argv[1]) : 2;
    for (int k = 0; size == 2 && k < rounds * T_N; k++) {
        int t = k % T_N, tag = t;
        if (rank == 0) {
            usleep(20000);
            MPI_Send(big, 256, MPI_INT, 1, tag, MPI_COMM_WORLD);
            sent++;
            if (t == T_SENDRECV) {
                MPI_Recv(NULL, 0, MPI_BYTE, 1, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                received++;
            }
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            received++;
            continue;
        }
        MPI_Request r = MPI_REQUEST_NULL;
        MPI_Message m;
        MPI_Status st;
        int rc = MPI_SUCCESS, flag = 0, idx, n, out[1];
        switch (t) {
        case T_RECV:
            rc = MPI_Recv(small, 2, MPI_INT, 0, tag, MPI_COMM_WORLD, &st);
            break;
        case T_PERSIST:
            MPI_Recv_init(small, 2, MPI_INT, 0, tag, MPI_COMM_WORLD, &r);
            MPI_Start(&r);
            rc = MPI_Wait(&r, &st);
            MPI_Request_free(&r);
            break;
        case T_MPROBE:
            MPI_Mprobe(0, tag, MPI_COMM_WORLD, &m, &st);
            rc = MPI_Mrecv(small, 2, MPI_INT, &m, &st);
            break;
        case T_IMPROBE:
            do
                MPI_Improbe(0, tag, MPI_COMM_WORLD, &flag, &m, &st);
            while (!flag);
            MPI_Imrecv(small, 2, MPI_INT, &m, &r);
            rc = MPI_Wait(&r, &st);
            break;
        case T_IPROBE:
            do
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            while (!flag);
            rc = MPI_Recv(small, 2, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
            break;
        case T_SENDRECV:
            rc = MPI_Sendrecv(NULL, 0, MPI_BYTE, 0, 200, small, 2, MPI_INT, 0, tag, MPI_COMM_WORLD, &st);
            sent++;
            break;
        default:
            MPI_Irecv(small, 2, MPI_INT, 0, tag, MPI_COMM_WORLD, &r);
            if (t == T_WAIT)
                rc = MPI_Wait(&r, &st);
            else if (t == T_TEST)
                do
                    rc = MPI_Test(&r, &flag, &st);
                while (rc == MPI_SUCCESS && !flag);
            else if (t == T_WAITANY)
                rc = MPI_Waitany(1, &r, &idx, &st);
            else if (t == T_WAITALL)
                rc = MPI_Waitall(1, &r, &st);
            else
                do
                    rc = MPI_Testsome(1, &r, &n, out, &st);
                while (rc == MPI_SUCCESS && n == 0);
            if (t == T_WAITALL || t == T_TESTSOME)
                rc = st.MPI_ERROR; /* MPI_ERR_IN_STATUS: the receive's own error */
            break;
        }
        received++;
        printf("rank 1: %s rc=%d\n", t_name[t], eclass(rc));
        MPI_Send(NULL, 0, MPI_BYTE, 0, 100, MPI_COMM_WORLD);
        sent++;
    }
    printf("rank %d: primaries sent %d received %d\n", rank, sent, received);
    MPI_Finalize();
    return 0;
}
