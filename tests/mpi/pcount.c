/*
 * libpcount.so: a tiny PMPI tool of the kind users run beside tdshim (mpiP,
 * a tracer), for tests/mpi/stack.sh. It counts the program's calls of a
 * set of point-to-point, probe, completion and collective functions in the
 * classic way (its MPI_X calls PMPI_X) and, in MPI_Finalize, writes one
 * line per rank to $PCOUNT_DIR/pcount-RANK.txt:
 *
 *   Send=N Isend=N ... bytes_sent=B
 *
 * where bytes_sent is what the program asked its sends to carry (count x
 * type size), so that a tool after tdshim can be checked to see the
 * program's arguments, not tdshim's piggybacked ones.
 *
 * PCOUNT_RECV_BYTES=1 also counts the bytes MPI_Waitall's completed
 * requests received (MPI_Get_count of each status; a status array of its
 * own when the program passes MPI_STATUSES_IGNORE), as a tool that reports
 * received bytes must, and adds bytes_recv=B to the line: the like-for-like
 * counting tool of bench/rate-sides.sh (tdshim's report counts received
 * bytes too).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define FUNCS(X)                                                                                                  \
    X(Send) X(Isend) X(Ssend) X(Recv) X(Irecv) X(Iprobe) X(Probe) X(Improbe) X(Mrecv) X(Test) X(Testany)          \
        X(Testall) X(Testsome) X(Wait) X(Waitall) X(Waitany) X(Sendrecv) X(Barrier) X(Allreduce) X(Start)        \
            X(Request_free) X(Cancel)

enum {
#define E(f) C_##f,
    FUNCS(E)
#undef E
        NFUNCS
};
static const char *const names[] = {
#define N(f) #f,
    FUNCS(N)
#undef N
};
static long counts[NFUNCS];
static long long bytes_sent;

static void sent(int count, MPI_Datatype t)
{
    int sz = 0;
    PMPI_Type_size(t, &sz);
    bytes_sent += (long long)count * sz;
}

int MPI_Send(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c)
{
    counts[C_Send]++;
    sent(n, t);
    return PMPI_Send(b, n, t, d, tag, c);
}
int MPI_Isend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r)
{
    counts[C_Isend]++;
    sent(n, t);
    return PMPI_Isend(b, n, t, d, tag, c, r);
}
int MPI_Ssend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c)
{
    counts[C_Ssend]++;
    sent(n, t);
    return PMPI_Ssend(b, n, t, d, tag, c);
}
int MPI_Recv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st)
{
    counts[C_Recv]++;
    return PMPI_Recv(b, n, t, s, tag, c, st);
}
int MPI_Irecv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request *r)
{
    counts[C_Irecv]++;
    return PMPI_Irecv(b, n, t, s, tag, c, r);
}
int MPI_Iprobe(int s, int tag, MPI_Comm c, int *f, MPI_Status *st)
{
    counts[C_Iprobe]++;
    return PMPI_Iprobe(s, tag, c, f, st);
}
int MPI_Probe(int s, int tag, MPI_Comm c, MPI_Status *st)
{
    counts[C_Probe]++;
    return PMPI_Probe(s, tag, c, st);
}
int MPI_Improbe(int s, int tag, MPI_Comm c, int *f, MPI_Message *m, MPI_Status *st)
{
    counts[C_Improbe]++;
    return PMPI_Improbe(s, tag, c, f, m, st);
}
int MPI_Mrecv(void *b, int n, MPI_Datatype t, MPI_Message *m, MPI_Status *st)
{
    counts[C_Mrecv]++;
    return PMPI_Mrecv(b, n, t, m, st);
}
int MPI_Test(MPI_Request *r, int *f, MPI_Status *st)
{
    counts[C_Test]++;
    return PMPI_Test(r, f, st);
}
int MPI_Testany(int n, MPI_Request r[], int *i, int *f, MPI_Status *st)
{
    counts[C_Testany]++;
    return PMPI_Testany(n, r, i, f, st);
}
int MPI_Testall(int n, MPI_Request r[], int *f, MPI_Status st[])
{
    counts[C_Testall]++;
    return PMPI_Testall(n, r, f, st);
}
int MPI_Testsome(int n, MPI_Request r[], int *o, int i[], MPI_Status st[])
{
    counts[C_Testsome]++;
    return PMPI_Testsome(n, r, o, i, st);
}
int MPI_Wait(MPI_Request *r, MPI_Status *st)
{
    counts[C_Wait]++;
    return PMPI_Wait(r, st);
}
static int recv_bytes_on = -1; /* PCOUNT_RECV_BYTES, read at the first MPI_Waitall */
static long long bytes_recv;
static MPI_Status *st_scratch;
static int st_cap;
int MPI_Waitall(int n, MPI_Request r[], MPI_Status st[])
{
    counts[C_Waitall]++;
    if (recv_bytes_on < 0) {
        const char *e = getenv("PCOUNT_RECV_BYTES");
        recv_bytes_on = e && *e == '1';
    }
    if (!recv_bytes_on)
        return PMPI_Waitall(n, r, st);
    MPI_Status *s = st;
    if (st == MPI_STATUSES_IGNORE) {
        if (n > st_cap) {
            MPI_Status *g = realloc(st_scratch, (size_t)n * sizeof *g);
            if (!g)
                return PMPI_Waitall(n, r, st);
            st_scratch = g;
            st_cap = n;
        }
        s = st_scratch;
    }
    int rc = PMPI_Waitall(n, r, s);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < n; i++) {
            int c = 0;
            if (PMPI_Get_count(&s[i], MPI_BYTE, &c) == MPI_SUCCESS && c > 0)
                bytes_recv += c;
        }
    return rc;
}
int MPI_Waitany(int n, MPI_Request r[], int *i, MPI_Status *st)
{
    counts[C_Waitany]++;
    return PMPI_Waitany(n, r, i, st);
}
int MPI_Sendrecv(const void *sb, int sn, MPI_Datatype st_, int d, int stag, void *rb, int rn, MPI_Datatype rt, int s,
                 int rtag, MPI_Comm c, MPI_Status *st)
{
    counts[C_Sendrecv]++;
    sent(sn, st_);
    return PMPI_Sendrecv(sb, sn, st_, d, stag, rb, rn, rt, s, rtag, c, st);
}
int MPI_Barrier(MPI_Comm c)
{
    counts[C_Barrier]++;
    return PMPI_Barrier(c);
}
int MPI_Allreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    counts[C_Allreduce]++;
    return PMPI_Allreduce(sb, rb, n, t, op, c);
}
int MPI_Start(MPI_Request *r)
{
    counts[C_Start]++;
    return PMPI_Start(r);
}
int MPI_Request_free(MPI_Request *r)
{
    counts[C_Request_free]++;
    return PMPI_Request_free(r);
}
int MPI_Cancel(MPI_Request *r)
{
    counts[C_Cancel]++;
    return PMPI_Cancel(r);
}

int MPI_Finalize(void)
{
    const char *dir = getenv("PCOUNT_DIR");
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/pcount-%d.txt", dir, rank);
        FILE *f = fopen(path, "w");
        if (f) {
            for (int i = 0; i < NFUNCS; i++)
                fprintf(f, "%s=%ld ", names[i], counts[i]);
            fprintf(f, "bytes_sent=%lld", bytes_sent);
            if (recv_bytes_on > 0)
                fprintf(f, " bytes_recv=%lld", bytes_recv);
            fprintf(f, "\n");
            fclose(f);
        }
    }
    return PMPI_Finalize();
}
