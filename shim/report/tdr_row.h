/*
 * The row each rank sends rank 0 for the summary and the advice
 * (tdr_record.c fills it, tdr_report.c gathers it): U_N counters then D_N
 * times per rank, and E_N numbers per episode. Plain arrays, no MPI, so
 * the advice can be computed, and tested, without it (tdr_advice.h).
 * Private to shim/report.
 */
#ifndef TDR_ROW_H
#define TDR_ROW_H

#include "tdr.h"
#include "td_core.h" /* TD_MAX_TYPES */

/* the counters: u[U_*] */
#define U_VTAG_W 7 /* words per tag of U_VTAG */

enum {
    U_PSENT, U_PSENT_B, U_PRECV, U_PRECV_B, U_PB_S, U_PB_R, U_CTLB_S, U_CTLB_R,
    U_CTL_S, U_CTL_R, U_POLLS, U_EMPTY, U_IGN, U_CANC, U_NOHDR, U_UNRECV, U_NOTIF,
    U_WAVES, U_B2I, U_I2B, U_VIOL, U_BUSYAGAIN, U_UNSAFE, U_BORROW, U_FLUSH, U_HELD, U_NEP,
    U_BUSYGAPS, U_VOTHER, U_ETESTS, U_XSENT, U_XRECV, U_THREADS, U_TLATE, U_UNSCOPED,
    U_WOTHER, /* finds on tags beyond U_WTAG's (struct tdr_rank work_tags_other) */
    U_NODER, U_NCPU, /* this job's ranks on the rank's node, its online CPUs (0: unknown) */
    U_CANDP, /* TDR_NCAND: times each candidate notion judged the rank passive (measure mode) */
    U_CANDB = U_CANDP + TDR_NCAND, /* TDR_NCAND: ...and its breaches */
    U_WERR = U_CANDB + TDR_NCAND, /* errno of this rank's failed JSON file (0: written) */
    U_UTAG, /* TDR_UNRECV_TAGS (tag + 1, 0: none) then as many message counts */
    U_VTAG = U_UTAG + 2 * TDR_UNRECV_TAGS, /* TDR_VIOL_TAGS x (tag + 1, messages, empty, bytes, min, max bytes,
                                              messages of min bytes) */
    U_WTAG = U_VTAG + U_VTAG_W * TDR_VIOL_TAGS,   /* TDR_VIOL_TAGS x (tag + 1, times, found): struct tdr_worktag */
    U_NCAT = U_WTAG + 3 * TDR_VIOL_TAGS,
    U_CTLT_S = U_NCAT + TDR_NCAT,
    U_CTLT_R = U_CTLT_S + 2 * TD_MAX_TYPES,
    U_N = U_CTLT_R + 2 * TD_MAX_TYPES
};
enum { D_WALL, D_TCAT, D_TOTAL = D_TCAT + TDR_NCAT, D_OFF, D_OFFERR, D_I2E, D_BUSYGAP, D_WAIT, D_N };

/* an episode as rank 0 sees it: aligned times relative to rank 0's MPI_Init */
enum { E_EP, E_DETECT, E_PASSIVE, E_UNSAFE, E_N };

#endif
