/*
 * The completion calls (tds_complete.c).
 */
#ifndef TDS_COMPLETE_H
#define TDS_COMPLETE_H

#include "tds_state.h"

void tds_reap_orphans(void);

#endif
