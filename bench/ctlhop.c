/*
 * ctlhop: what one control message costs between two ranks that poll as a
 * passive rank under tdshim does (bench/RESULTS.md, issue 28): a 48-byte
 * ping-pong on a private communicator, each receive found by a loop of
 * the program's empty MPI_Iprobe followed by tdshim's check for a control
 * message, done one of two ways:
 *   --mode probe    MPI_Iprobe + MPI_Get_count + MPI_Recv (two matches)
 *   --mode persist  MPI_Test of a persistent receive always posted, then
 *                   MPI_Start (the alternative to tds_poll_control's probe, shim/mpi/tds_progress.c)
 * Prints "ctlhop MODE HOPS us-per-hop". Run natively (no tdshim).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIRE 48
#define TAG 7

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np, persist = -1, n = 20000;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mode"))
            persist = !strcmp(argv[i + 1], "persist") ? 1 : !strcmp(argv[i + 1], "probe") ? 0 : -1;
        else if (!strcmp(argv[i], "--hops"))
            n = atoi(argv[i + 1]);
    }
    if (np != 2 || persist < 0 || n < 2) {
        if (me == 0)
            fprintf(stderr, "usage: mpirun -n 2 ctlhop --mode probe|persist [--hops N]\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm ctl;
    MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
    unsigned char out[WIRE], in[WIRE];
    memset(out, 1, sizeof out);
    MPI_Request pr;
    MPI_Recv_init(in, WIRE, MPI_BYTE, MPI_ANY_SOURCE, TAG, ctl, &pr);
    if (persist)
        MPI_Start(&pr);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if ((i & 1) == me) {
            MPI_Request s;
            MPI_Isend(out, WIRE, MPI_BYTE, 1 - me, TAG, ctl, &s);
            MPI_Wait(&s, MPI_STATUS_IGNORE);
            continue;
        }
        for (;;) {
            int f = 0;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &f, &st); /* the program's empty poll */
            if (!persist) {
                MPI_Iprobe(MPI_ANY_SOURCE, TAG, ctl, &f, &st);
                if (f) {
                    int c = 0;
                    MPI_Get_count(&st, MPI_BYTE, &c);
                    MPI_Recv(in, WIRE, MPI_BYTE, st.MPI_SOURCE, TAG, ctl, MPI_STATUS_IGNORE);
                    break;
                }
            } else {
                MPI_Test(&pr, &f, &st);
                if (f) {
                    memcpy(out, in, sizeof out);
                    MPI_Start(&pr);
                    break;
                }
            }
        }
    }
    double t = MPI_Wtime() - t0;
    if (me == 0)
        printf("ctlhop %s %d %.3f\n", persist ? "persist" : "probe", n, t / n * 1e6);
    if (persist) {
        MPI_Cancel(&pr);
        MPI_Wait(&pr, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&pr);
    MPI_Comm_free(&ctl);
    MPI_Finalize();
    return 0;
}
