/*
 * Contract violations as TDSHIM_IDLE=spin makes them (issue 11): a working
 * rank whose work between polls is shorter than the spin gap is taken for
 * passive, so the core sees it send while passive, until a long gap shows
 * it busy again (td_busy). No algorithm can stay safe when its passivity
 * input is wrong (false announcements are counted by the oracle and only
 * reported here), but every algorithm must stay well-behaved: no core
 * error (the shim would report it and stop detecting), and every phase
 * still announced (no hang). Random executions of world.h
 * (tw_random_run, control messages FIFO per pair as MPI delivers them)
 * with 1 in 4 active steps misjudged, with and without confirmation. The credit algorithms defer sends and need tw_task_run's
 * driver; they are covered by tdsim (test-sim-busyagain.sh) instead.
 */
#include "tap.h"
#include "world.h"

#include <stdlib.h>

static tw_world W;

int main(int argc, char **argv)
{
    static const char *const algos[] = {"bcj", "bcjrd", "edod", "xulau", "skr", "fourcounter", "termdetect"};
    int nalgos = (int)(sizeof algos / sizeof *algos);
    int runs = argc > 1 ? atoi(argv[1]) : 400;
    tap_plan(nalgos * 2);
    W.misjudge = 4;
    W.fifo = 1; /* the shim's control messages share one communicator and tag */
    for (int k = 0; k < nalgos; k++)
        for (int confirm = 0; confirm <= 1; confirm++) {
            const td_algo *a = td_algo_find(algos[k]);
            int bad = 0, unsafe_runs = 0, first = 0;
            for (int s = 1; s <= runs; s++) {
                int n = 2 + s % 14, unsafe = 0;
                td_cfg g;
                td_cfg_default(&g, 0, n);
                g.confirm = confirm;
                if (!tw_random_run(&W, a, &g, n, 3, 4, (unsigned long long)s, &unsafe)) {
                    if (!bad++)
                        first = s;
                }
                unsafe_runs += unsafe > 0;
            }
            tap_ok(a && !bad, "%s, confirm %s: %d runs with misjudged ranks, %d with no error and every phase announced "
                   "(%d with a false announcement)%s", algos[k], confirm ? "on" : "off", runs, runs - bad, unsafe_runs,
                   bad ? "" : "");
            if (bad)
                tap_diag("first failing seed %d (%d ranks)", first, 2 + first % 14);
        }
    return tap_done();
}
