/*
 * The advice of the report (README, "Measure mode and the advice"): from
 * what a run showed, which TDSHIM_IDLE and ignore settings fit the program.
 * A pure function of plain arrays and the effective settings: no MPI, no
 * global state (tests/report/test-advice.c builds it with plain cc).
 * Private to shim/report.
 */
#ifndef TDR_ADVICE_H
#define TDR_ADVICE_H

#include "tdr.h"
#include "tdr_json.h"
#include "tdr_row.h"

typedef struct tdr_advice_in {
    int nranks;
    const uint64_t *u;    /* nranks rows of U_N counters (tdr_row.h) */
    const double *d;      /* nranks rows of D_N times */
    const tdr_meta *meta; /* the effective settings (config: TDSHIM_IDLE, TDSHIM_NOTIFY, TDSHIM_SPIN_GAP,
                           * TDSHIM_THREADS) and callsites_top */
} tdr_advice_in;

typedef struct tdr_advice {
    int items; /* numbered items written */
    int pick;  /* measure mode: the idle notion the run supports (TDR_CAND_*); -1 none (or not
                * measured), -2 no primary message was counted */
    int kept;  /* the closing line says the program kept the contract */
    unsigned long long passive[TDR_NCAND], breaches[TDR_NCAND]; /* the idle notions side by side, all ranks */
    char hint[512]; /* the settings suggested, in one line, for stderr (empty: nothing to change) */
} tdr_advice;

/* Appends the Advice section of summary.txt to b and fills *out. Returns 0,
 * or -1 when out of memory (the section then says it was not computed). */
int tdr_advice_write(tdr_buf *b, const tdr_advice_in *in, tdr_advice *out);

#endif
