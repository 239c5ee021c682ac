/*
 * The piggyback on the wire (tests/mpi/stampwire.sh): rank 0 and rank 1 play
 * ping-pong through the wrapped calls, polling MPI_Iprobe between messages,
 * so that bcj's sweeps run and fail while a message is in flight and its
 * sweep number (the stamp every primary carries, bcj.c) grows within the
 * episode. Rank 0 sends each value to rank 2 as well, which takes these
 * copies with the MPI library's own MPI_Iprobe and MPI_Recv (found with
 * dlsym in the library that defines MPI_Comm_rank: tdshim wraps the PMPI_
 * names too), past tdshim, and reads their header: its length
 * from a first message of no data, then the byte after the fixed one (the
 * stamp, tds_hdr.h). Rank 2 polls MPI_Iprobe on a tag nobody uses, so that
 * it answers the sweeps as an idle rank. Natively the header length is 0.
 * Prints, on rank 2: "stampwire hdr=H n=N nonzero=Z distinct=D" (Z copies
 * whose stamp byte was not 0, D different stamp values among the N).
 * Usage: stampwire [EXCHANGES] (default 2000). Needs 3 ranks.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PING = 1, COPY = 2, CAL = 3, NOBODY = 777 };

typedef int (*recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
typedef int (*iprobe_fn)(int, int, MPI_Comm, int *, MPI_Status *);
/* the MPI library's own definition of NAME (PMPI_*), past any preloaded library */
static void *mpi_own(const char *name)
{
    Dl_info in;
    void *h, *f = NULL;
    if (dladdr((void *)MPI_Comm_rank, &in) && in.dli_fname && (h = dlopen(in.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
        f = dlsym(h, name);
    if (!f) {
        fprintf(stderr, "stampwire: no %s in the MPI library\n", name);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    return f;
}

static void take(int src, int tag, int *v)
{
    int flag = 0;
    while (!flag)
        MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    MPI_Recv(v, 1, MPI_INT, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 2000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3 || n < 1) {
        if (rank == 0)
            fprintf(stderr, "stampwire: needs 3 ranks and a positive count\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
        MPI_Send(NULL, 0, MPI_INT, 2, CAL, MPI_COMM_WORLD);
        for (int i = 0; i <= n; i++) {
            int v = i < n ? i : -1, r;
            MPI_Send(&v, 1, MPI_INT, 2, COPY, MPI_COMM_WORLD);
            MPI_Send(&v, 1, MPI_INT, 1, PING, MPI_COMM_WORLD);
            if (v >= 0)
                take(1, PING, &r);
        }
    } else if (rank == 1) {
        for (;;) {
            int v;
            take(0, PING, &v);
            if (v < 0)
                break;
            MPI_Send(&v, 1, MPI_INT, 0, PING, MPI_COMM_WORLD);
        }
    } else {
        recv_fn raw_recv = (recv_fn)mpi_own("PMPI_Recv");
        iprobe_fn raw_iprobe = (iprobe_fn)mpi_own("PMPI_Iprobe");
        unsigned char w[64];
        MPI_Status st;
        int hdr = 0, got = 0, nonzero = 0, distinct = 0, seen[256] = {0};
        raw_recv(w, (int)sizeof w, MPI_BYTE, 0, CAL, MPI_COMM_WORLD, &st);
        PMPI_Get_count(&st, MPI_BYTE, &hdr);
        for (;;) {
            int flag = 0, v;
            raw_iprobe(0, COPY, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (!flag) { /* an idle poll, as tdshim sees it */
                MPI_Iprobe(MPI_ANY_SOURCE, NOBODY, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                continue;
            }
            int len = 0;
            raw_recv(w, (int)sizeof w, MPI_BYTE, 0, COPY, MPI_COMM_WORLD, &st);
            PMPI_Get_count(&st, MPI_BYTE, &len);
            if (len != hdr + (int)sizeof v) {
                fprintf(stderr, "stampwire: a copy of %d bytes, header %d\n", len, hdr);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            memcpy(&v, w + hdr, sizeof v);
            if (v < 0)
                break;
            got++;
            if (hdr >= 2) {
                nonzero += w[1] != 0;
                distinct += !seen[w[1]]++;
            }
        }
        printf("stampwire hdr=%d n=%d nonzero=%d distinct=%d\n", hdr, got, nonzero, distinct);
    }
    MPI_Finalize();
    return 0;
}
