/*
 * MPI_Sendrecv and MPI_Isendrecv pairs (tds_pair.c).
 */
#ifndef TDS_PAIR_H
#define TDS_PAIR_H

#include "tds_state.h"

void tds_pairs_progress(void);

#endif
