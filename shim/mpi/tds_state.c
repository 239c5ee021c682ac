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
char tds_oos_mark; /* TDS_OOS: its address only */
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

/* DESIGN.md §1, "No abort for a correct program": what the core finds
 * wrong at run time is warned once and reported, never an MPI_Abort.
 * - unsafe: evidence that an announcement was premature (a control or
 *   primary message of an announced episode arrived, or this rank sent a
 *   primary after learning it with no reason to work: td_engine.c,
 *   "Premature announcements"); the core goes on; the report marks the
 *   episode with the kinds of evidence and the first one in words
 *   (episodes[].unsafe_evidence, .unsafe_why).
 * - error: the core's state is inconsistent (sticky); this rank stops
 *   taking part in detection, so no later episode is announced; the report
 *   carries the message (detection.core_error). The program runs on. */
void tds_check_core_warn(void)
{
    if (__builtin_expect(tds.core.stats.unsafe != tds.unsafe_seen, 0)) {
        tds.unsafe_seen = tds.core.stats.unsafe;
        unsigned kinds = 0;
        for (int k = 0; k < TD_EV_N; k++)
            if (tds.core.stats.unsafe_by[k] != tds.unsafe_by_seen[k]) {
                tds.unsafe_by_seen[k] = tds.core.stats.unsafe_by[k];
                kinds |= 1u << k;
            }
        tdr_episode_unsafe(&tds.m, tds.core.stats.unsafe_episode, kinds, tds.core.unsafe_msg);
        if (!tds.warned_unsafe++)
            fprintf(stderr,
                    "tdshim: rank %d: announcement %u was premature or unsoundly proven (%s): some rank was still "
                    "active; it is marked unsafe in the report (see TDSHIM_IDLE and the contract violations "
                    "there); detection goes on\n",
                    tds.rank, tds.core.stats.unsafe_episode, tds.core.unsafe_msg);
    }
    if (__builtin_expect(tds.core.error != 0, 0) && !tds.warned_error) {
        tds.warned_error = 1;
        fprintf(stderr,
                "tdshim: rank %d: termination detection stopped: %s. The program goes on; no further "
                "termination will be announced. Reported as detection.core_error.\n",
                tds.rank, tds.core.errmsg);
    }
}

/* tds_check_core, out of the fast paths that find the core failed */
void tds_core_failed(void)
{
    tds_check_core();
}
