/*
 * The flat entries (tds_flat.c).
 */
#ifndef TDS_FLAT_H
#define TDS_FLAT_H

#include "tds_state.h"

/* the entry points of the `fast` functions of p2p.list (gen_wrappers.py):
 * flat ones for this configuration while tds.fast, else tds_wrap_<Name> */
void tds_fast_select(void);
/* the flat MPI_Iprobe and MPI_Improbe, header-free and with a header,
 * outside measure mode and in it (tds_probe.c) */
#define TDS_FLAT_PROBES(SUFFIX)                                                                                       \
    int tds_flat##SUFFIX##_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);               \
    int tds_flat##SUFFIX##_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,             \
                                   MPI_Status *status);
TDS_FLAT_PROBES()
TDS_FLAT_PROBES(_hdr)
TDS_FLAT_PROBES(_meas)
TDS_FLAT_PROBES(_meas_hdr)
/* the flat MPI_Testany's and MPI_Testsome's work after MPI's call outside
 * their common case: the general entries' (tds_complete.c) */
int tds_ftestany_rest(int rc);
int tds_ftestsome_rest(int rc);
int tds_ftest_missed(int rc);

#endif
