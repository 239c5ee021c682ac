/*
 * The MPI side of shim/report: what the shim calls with its private
 * communicator. Include after <mpi.h> (shim/mpi, shim/report only).
 */
#ifndef TDR_MPI_H
#define TDR_MPI_H

#include <mpi.h>

#include "tdr.h"

/* Tag of the clock-synchronisation ping-pongs on the private communicator.
 * The shim's control messages must use another tag. */
#define TDR_TAG_CLOCK 0x7d50

/*
 * Estimates r->t_offset, the value to add to this rank's tdr_now() to get
 * rank 0's tdr_now() (Cristian's method: rank 0 answers TDR_CLOCK_ROUNDS
 * ping-pongs from each rank in turn with its clock; each rank keeps the
 * round with the smallest round trip and assumes the answer was read
 * half-way through it, so the error is at most half that round trip).
 * Collective over comm; call once at MPI_Init, before any control traffic.
 * Returns 0, or -1 on an MPI error (t_offset is then 0). TDR_CLOCK_ROUNDS: tdr.h.
 */
int tdr_clock_sync(tdr_rank *r, MPI_Comm comm);

int tdr_write_reports(tdr_rank *r, const struct td_ctx *core, const tdr_meta *meta, MPI_Comm comm);

#endif
