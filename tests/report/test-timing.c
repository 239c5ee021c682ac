/*
 * tdr_enter/tdr_leave charge time to the innermost open section only:
 * the categories add up exactly to the time between the first enter and
 * the last leave, a nested section's time is not also charged to its
 * parent, and calls are counted per category. (No MPI.)
 */
#include "tap.h"
#include "tdr.h"

#include <math.h>
#include <time.h>

static void spin(double seconds)
{
    double end = tdr_now() + seconds;
    while (tdr_now() < end)
        ;
}

int main(void)
{
    tap_plan(6);
    tdr_rank r = {0};
    double t0 = tdr_now();
    tdr_enter(&r, TDR_CAT_FINALIZE);      /* finalize ... */
    spin(0.002);
    tdr_enter(&r, TDR_CAT_PROGRESS);      /*   progress inside finalize ... */
    spin(0.003);
    tdr_enter(&r, TDR_CAT_CONTROL);       /*     a control message sent while progressing */
    spin(0.004);
    tdr_leave(&r);
    tdr_leave(&r);
    spin(0.001);
    tdr_leave(&r);
    double t1 = tdr_now();
    double sum = 0;
    for (int c = 0; c < TDR_NCAT; c++)
        sum += r.t_cat[c];
    tap_ok(sum <= t1 - t0 && sum > 0.0099, "categories add up to at most the elapsed time (%.6f <= %.6f)", sum, t1 - t0);
    tap_ok(r.t_cat[TDR_CAT_CONTROL] >= 0.004 && r.t_cat[TDR_CAT_PROGRESS] >= 0.003 && r.t_cat[TDR_CAT_FINALIZE] >= 0.003,
           "each section got at least its own time (control %.6f, progress %.6f, finalize %.6f)",
           r.t_cat[TDR_CAT_CONTROL], r.t_cat[TDR_CAT_PROGRESS], r.t_cat[TDR_CAT_FINALIZE]);
    /* exclusive: the parent's time excludes the child's; with inclusive
     * timing progress would be >= 0.007 and finalize >= 0.010 */
    tap_ok(fabs(sum - (r.t_cat[TDR_CAT_CONTROL] + r.t_cat[TDR_CAT_PROGRESS] + r.t_cat[TDR_CAT_FINALIZE])) < 1e-12 &&
               r.t_cat[TDR_CAT_SEND] == 0 && r.t_cat[TDR_CAT_RECV] == 0,
           "no time in sections that were not open");
    tap_ok(r.n_cat[TDR_CAT_FINALIZE] == 1 && r.n_cat[TDR_CAT_PROGRESS] == 1 && r.n_cat[TDR_CAT_CONTROL] == 1 &&
               r.tdepth == 0,
           "one call per category, all sections closed");
    /* deeper than the stack: charged to the 8th, never lost or out of bounds */
    tdr_rank d = {0};
    double a = tdr_now();
    for (int i = 0; i < 12; i++)
        tdr_enter(&d, (tdr_cat)(i % TDR_NCAT));
    spin(0.001);
    for (int i = 0; i < 12; i++)
        tdr_leave(&d);
    double b = tdr_now(), dsum = 0;
    for (int c = 0; c < TDR_NCAT; c++)
        dsum += d.t_cat[c];
    tap_ok(d.tdepth == 0 && dsum <= b - a && dsum >= 0.001, "12 nested sections: %.6f s accounted of %.6f", dsum, b - a);
    /* waiting at MPI_Finalize for the last rank (TDR_CAT_WAIT, tds_init.c
     * finish): timed, in no category, and a control message served
     * meanwhile is control time */
    tdr_rank w = {0};
    double w0 = tdr_now();
    tdr_enter(&w, TDR_CAT_FINALIZE);
    spin(0.001);
    tdr_enter(&w, TDR_CAT_WAIT);
    spin(0.003);
    tdr_enter(&w, TDR_CAT_CONTROL);
    spin(0.002);
    tdr_leave(&w);
    tdr_leave(&w);
    tdr_leave(&w);
    double w1 = tdr_now(), wsum = 0;
    for (int c = 0; c < TDR_NCAT; c++)
        wsum += w.t_cat[c];
    tap_ok(w.t_cat[TDR_CAT_WAIT] >= 0.003 && w.t_cat[TDR_CAT_CONTROL] >= 0.002 && w.t_cat[TDR_CAT_FINALIZE] >= 0.001 &&
               wsum + w.t_cat[TDR_CAT_WAIT] <= w1 - w0 &&
               fabs(wsum - w.t_cat[TDR_CAT_FINALIZE] - w.t_cat[TDR_CAT_CONTROL]) < 1e-12 && w.n_cat[TDR_CAT_WAIT] == 1,
           "the wait at MPI_Finalize: %.6f s, outside the categories (finalize %.6f, control %.6f)",
           w.t_cat[TDR_CAT_WAIT], w.t_cat[TDR_CAT_FINALIZE], w.t_cat[TDR_CAT_CONTROL]);
    return tap_done();
}
