/*
 * The global state of tdshim's PMPI layer, defined here and nowhere else
 * (tds_state.h): the process-wide `tds`, the per-thread `tds_t`, the
 * re-entry guard, whether MPI_THREAD_MULTIPLE was granted; and what every
 * layer needs under it: the sample clock and the fatal stop.
 */
#include "tds_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

tds_state tds = {.ctl = MPI_COMM_NULL, .last_comm = MPI_COMM_NULL};
__thread tds_thread tds_t __attribute__((tls_model("initial-exec")));
__thread int tds_inside __attribute__((tls_model("initial-exec")));
int tds_mt;

void tds_fatal(const char *fmt, ...)
{
    va_list ap;
    char msg[400];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "tdshim: rank %d: %s\n", tds.rank, msg);
    fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, 3);
    abort(); /* PMPI_Abort does not return; keeps noreturn honest */
}

/* gen_wrappers.py: a refused function (p2p.list "refuse", or one the MPI
 * library exports that the list lacks) at its first use */
void tds_refuse(const char *name, const char *why)
{
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (init && !fin)
        tds_fatal("%s: %s; stopping (no message may reach the wire without tdshim)", name, why);
    fprintf(stderr, "tdshim: %s: %s; stopping (no message may reach the wire without tdshim)\n", name, why);
    abort();
}


double tds_tsample(void)
{
    tds.tleft = tds.m.sites ? 1 : TDS_TSAMPLE;
    tds.nested_dt = 0.0;
    return tdr_now();
}
