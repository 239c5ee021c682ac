/*
 * A small asynchronous MPI program that keeps its own books, for the
 * report tests (tests/report/test-*.sh): every rank sends `phases` rounds
 * of M messages of varying sizes to the other ranks (Isend from
 * send_work), receives as many by polling (Iprobe in poll_for_work, the
 * function TDSHIM_CALLSITES must name; every other message taken with
 * MPI_Irecv + MPI_Wait, the others with MPI_Recv), and prints what it
 * counted:
 *
 *   report-prog: rank R sent S sent_bytes B recv N recv_bytes C iprobes P
 *
 * Received bytes come from MPI_Get_count, so they are what the program
 * saw through the shim. Phases are separated by a barrier (a collective:
 * new activity for the next detection episode).
 *
 * Run: mpirun -np N report-prog [M [phases]]   (defaults 40, 2)
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG 7
#define MAXLEN 4096

typedef struct books {
    long sent, sent_bytes, recv, recv_bytes, iprobes;
} books;

/* noinline: the call-site test looks for these names */
__attribute__((noinline)) int poll_for_work(books *b, char *buf)
{
    int flag;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &flag, &st);
    b->iprobes++;
    if (!flag)
        return 0;
    int n;
    if (b->recv % 2) { /* the probed size: a copy-layout receive, the shim's MPI_Irecv fast path */
        MPI_Request r;
        MPI_Get_count(&st, MPI_BYTE, &n);
        MPI_Irecv(buf, n, MPI_BYTE, st.MPI_SOURCE, TAG, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, &st);
    } else {
        MPI_Recv(buf, MAXLEN, MPI_BYTE, st.MPI_SOURCE, TAG, MPI_COMM_WORLD, &st);
    }
    MPI_Get_count(&st, MPI_BYTE, &n);
    b->recv++;
    b->recv_bytes += n;
    return 1;
}

__attribute__((noinline)) void send_work(books *b, const char *data, int len, int dest, MPI_Request *req)
{
    MPI_Isend(data, len, MPI_BYTE, dest, TAG, MPI_COMM_WORLD, req);
    b->sent++;
    b->sent_bytes += len;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int m = argc > 1 ? atoi(argv[1]) : 40;
    int phases = argc > 2 ? atoi(argv[2]) : 2;
    int late_ms = argc > 3 ? atoi(argv[3]) : 0; /* rank 0 enters MPI_Finalize that much after the others */
    if (size < 2 || m < 1 || phases < 1) {
        if (rank == 0)
            fprintf(stderr, "report-prog: needs 2+ ranks, M >= 1, phases >= 1\n");
        MPI_Finalize();
        return 2;
    }
    books b = {0};
    char *out = malloc(MAXLEN), *in = malloc(MAXLEN);
    MPI_Request *req = malloc((size_t)m * sizeof *req);
    memset(out, rank, MAXLEN);

    for (int p = 0; p < phases; p++) {
        /* message i goes to rank + 1 + i mod (size-1): every rank receives m */
        for (int i = 0; i < m; i++) {
            int dest = (rank + 1 + i % (size - 1)) % size;
            int len = (i * 37 + rank * 11 + p) % 1500; /* zero-length messages included */
            send_work(&b, out, len, dest, &req[i]);
        }
        long want = (long)(p + 1) * m;
        while (b.recv < want)
            poll_for_work(&b, in);
        MPI_Waitall(m, req, MPI_STATUSES_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    printf("report-prog: rank %d sent %ld sent_bytes %ld recv %ld recv_bytes %ld iprobes %ld\n", rank, b.sent,
           b.sent_bytes, b.recv, b.recv_bytes, b.iprobes);
    fflush(stdout);
    free(out);
    free(in);
    free(req);
    if (rank == 0 && late_ms > 0) {
        struct timespec ts = {late_ms / 1000, (long)(late_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    MPI_Finalize();
    return 0;
}
