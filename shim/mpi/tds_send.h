/*
 * Sends (tds_send.c).
 */
#ifndef TDS_SEND_H
#define TDS_SEND_H

#include "tds_state.h"

void tds_send_start(tds_rq *q);          /* MPI_Start of a persistent send: its header */

#endif
