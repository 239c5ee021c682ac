/*
 * burst: a passive rank that then sends many messages, to itself and to
 * another rank (issue 43; tests/mpi/burst.sh).
 *
 * Rank 1 waits in MPI_Recv for a "go" from rank 0 (it is passive there: under
 * cda and hcda it returns its credit), then sends N messages to itself
 * (MPI_Sendrecv on MPI_COMM_SELF) and N to its peer (MPI_Send to rank 2, or
 * to rank 0 at 2 ranks), alternating. The peer takes them in windows of W
 * preposted MPI_Irecv and one MPI_Waitall each (so it waits, and is passive,
 * at most N / W times), then sends rank 1 an ack. Rank 1 prints the time
 * from the go to the ack. Other ranks wait in MPI_Barrier.
 *
 * usage: burst [N] [W] [both|self|peer]    (defaults 100000 1000 both)
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* only rank 1's sending loop is counted (cgtoggle.h; tests/mpi/burst.sh's
 * instruction ratio): the wait for the go and the barrier stay out */
#include "cgtoggle.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = argc > 1 ? atol(argv[1]) : 100000;
    long win = argc > 2 ? atol(argv[2]) : 1000;
    const char *mode = argc > 3 ? argv[3] : "both";
    int self = strcmp(mode, "peer") != 0, peer = strcmp(mode, "self") != 0;
    if (size < 2 || n < 1 || win < 1 || (!self && !peer)) {
        if (rank == 0)
            fprintf(stderr, "usage: burst [N] [W] [both|self|peer], 2 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int target = size > 2 ? 2 : 0;
    int x = 0, y = 0;
    if (rank == 1) {
        MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t0 = MPI_Wtime();
        CALLGRIND_TOGGLE_COLLECT;
        for (long i = 0; i < n; i++) {
            int v = (int)i;
            if (self)
                MPI_Sendrecv(&v, 1, MPI_INT, 0, 3, &y, 1, MPI_INT, 0, 3, MPI_COMM_SELF, MPI_STATUS_IGNORE);
            if (peer)
                MPI_Send(&v, 1, MPI_INT, target, 2, MPI_COMM_WORLD);
        }
        CALLGRIND_TOGGLE_COLLECT;
        if (peer)
            MPI_Recv(&x, 1, MPI_INT, target, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t = MPI_Wtime() - t0;
        printf("burst: n=%ld window=%ld mode=%s ranks=%d seconds=%.6f\n", n, win, mode, size, t);
        fflush(stdout);
    }
    if (rank == 0)
        MPI_Send(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    if (rank == target && peer) {
        int *buf = malloc((size_t)win * sizeof *buf);
        MPI_Request *rq = malloc((size_t)win * sizeof *rq);
        if (!buf || !rq)
            MPI_Abort(MPI_COMM_WORLD, 3);
        for (long got = 0; got < n;) {
            int k = (int)(n - got < win ? n - got : win);
            for (int i = 0; i < k; i++)
                MPI_Irecv(&buf[i], 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &rq[i]);
            MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
            for (int i = 0; i < k; i++)
                if (buf[i] != (int)(got + i))
                    MPI_Abort(MPI_COMM_WORLD, 4);
            got += k;
        }
        MPI_Send(&x, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
        free(buf);
        free(rq);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
