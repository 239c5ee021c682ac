/*
 * The flat entries (tds_flat.c).
 */
#ifndef TDS_FLAT_H
#define TDS_FLAT_H

#include "tds_state.h"

/* the entry points of the `fast` functions of p2p.list (gen_wrappers.py):
 * flat ones for this configuration while tds.fast, else tds_wrap_<Name> */
void tds_fast_select(void);

#endif
