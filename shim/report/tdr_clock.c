/*
 * The clock alignment (tdr_mpi.h, tdr_clock_sync): each rank's offset to
 * rank 0's CLOCK_MONOTONIC, estimated at MPI_Init, so that the reports give
 * every time on one clock. On the shim's private communicator, through
 * PMPI_*: the program never sees this traffic.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <mpi.h>

#include "tdr_mpi.h"
#ifdef TDS_IN_SHIM
/* in libtdshim: the MPI calls below go to the next layer, never to
 * tdshim's own PMPI_* entry points (gen_wrappers.py) */
#include "tds_bodies.h"
#endif

#include <math.h>

int tdr_clock_sync(tdr_rank *r, MPI_Comm comm)
{
    int rank, size, rc = MPI_SUCCESS;
    r->t_offset = 0;
    r->t_offset_err = 0;
    r->clock_rounds = 0;
    if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return -1;
    if (rank == 0) {
        /* serve the ranks one after the other so rank 0 answers at once */
        for (int peer = 1; peer < size && rc == MPI_SUCCESS; peer++)
            for (int k = 0; k < TDR_CLOCK_ROUNDS && rc == MPI_SUCCESS; k++) {
                char ping;
                rc = PMPI_Recv(&ping, 1, MPI_CHAR, peer, TDR_TAG_CLOCK, comm, MPI_STATUS_IGNORE);
                double now = tdr_now();
                if (rc == MPI_SUCCESS)
                    rc = PMPI_Send(&now, 1, MPI_DOUBLE, peer, TDR_TAG_CLOCK, comm);
            }
        if (rc != MPI_SUCCESS)
            return -1;
        r->clock_rounds = TDR_CLOCK_ROUNDS;
        return 0;
    }
    double best_rtt = INFINITY, best_off = 0;
    for (int k = 0; k < TDR_CLOCK_ROUNDS && rc == MPI_SUCCESS; k++) {
        char ping = 0;
        double t0 = tdr_now(), remote = 0;
        rc = PMPI_Send(&ping, 1, MPI_CHAR, 0, TDR_TAG_CLOCK, comm);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Recv(&remote, 1, MPI_DOUBLE, 0, TDR_TAG_CLOCK, comm, MPI_STATUS_IGNORE);
        double t1 = tdr_now();
        if (rc == MPI_SUCCESS && t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            best_off = remote - 0.5 * (t0 + t1);
        }
    }
    if (rc != MPI_SUCCESS)
        return -1;
    r->t_offset = best_off;
    r->t_offset_err = 0.5 * best_rtt;
    r->clock_rounds = TDR_CLOCK_ROUNDS;
    return 0;
}
