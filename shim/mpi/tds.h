/*
 * Every header of shim/mpi at once (for a transition only).
 */
#ifndef TDS_H
#define TDS_H

#include "tds_state.h"
#include "tds_mt.h"
#include "tds_comm.h"
#include "tds_req.h"
#include "tds_wire.h"
#include "tds_progress.h"
#include "tds_recv.h"
#include "tds_send.h"
#include "tds_flat.h"
#include "tds_part.h"
#include "tds_pair.h"
#include "tds_complete.h"
#include "tds_preload.h"

#endif
