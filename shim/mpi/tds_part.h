/*
 * Partitioned communication (tds_part.c).
 */
#ifndef TDS_PART_H
#define TDS_PART_H

#include "tds_state.h"

/* partitioned requests (q->part; tds_part.c) */
void tds_part_start(tds_rq *q);          /* MPI_Start: the companion's round */
void tds_part_free(tds_rq *q);           /* MPI_Request_free: the companion too */

#endif
