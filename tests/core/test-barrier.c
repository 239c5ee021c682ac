/*
 * Every algorithm under a program whose notified ranks block in a
 * collective (tests/core/world.h, w->barrier): the shim takes no control
 * message inside the program's blocking collectives, which are the MPI
 * library's own (gen_wrappers.py, "collective"), so no rank's detection
 * may wait for the answer of a rank that learned the announcement and
 * entered its next collective, or the one before MPI_Finalize. Random
 * executions (world.h's tw_random_run: primaries late, 3 phases, each
 * notified rank blocked until every rank learned the episode), with
 * control messages FIFO per channel as the shim's are:
 *   - per algorithm, as configured by default: every run ends, none
 *     announces while work remained;
 *   - per algorithm, with TDSHIM_CONFIRM and ranks misjudged passive while
 *     they work (TDSHIM_IDLE=spin's error): every run ends (misjudged ranks
 *     make false announcements: counted, not asserted).
 * The symmetric algorithms meet it by telling the ranks that may lag:
 * bcjrd its round-0 partner when it announces (rd_new_episode; without it
 * 56 of 20,000 misjudged runs of tests/core/test-bcjrd.c hung), xulau its
 * neighbours when the program blocks (xl_on_block; without it 3 of these
 * 1,000 misjudged runs hung).
 */
#include "tap.h"
#include "world.h"

static tw_world W;

int main(void)
{
    const td_algo *const *list = td_algo_list();
    int n = 0;
    for (int i = 0; list[i]; i++)
        n += !(list[i]->flags & (TD_ALGO_BROKEN | TD_ALGO_NODETECT | TD_ALGO_MODEL));
    tap_plan(2 * n);
    for (int i = 0; list[i]; i++) {
        const td_algo *a = list[i];
        if (a->flags & (TD_ALGO_BROKEN | TD_ALGO_NODETECT | TD_ALGO_MODEL))
            continue;
        for (int spin = 0; spin < 2; spin++) {
            int runs = 1000, unsafe = 0;
            int bad = tw_barrier_runs(&W, a, runs, 1, spin, &unsafe);
            if (!spin)
                tap_ok(bad == 0 && unsafe == 0,
                       "%s: %d random executions at 2..9 ranks, notified ranks blocked in a collective: %d never "
                       "ended, %d unsafe",
                       a->name, runs, bad, unsafe);
            else
                tap_ok(bad == 0,
                       "%s: the same with TDSHIM_CONFIRM and ranks misjudged passive (1 in 4 steps): %d of %d never "
                       "ended (%d announced early)",
                       a->name, bad, runs, unsafe);
        }
    }
    return tap_done();
}
