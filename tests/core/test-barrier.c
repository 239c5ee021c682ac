/*
 * Every algorithm under a program whose notified ranks block in a
 * collective (tests/core/world.h, w->barrier): the shim takes no control
 * message inside the program's blocking collectives (gen_wrappers.py,
 * "collective") except under a symmetric algorithm whose ranks may wait
 * for an announced rank's later answer (tds_init.c, tds.coll_progress:
 * xulau, modelled by w->barrier = 2), so under every other no rank's
 * detection may wait for the answer of a rank that learned the
 * announcement and entered its next collective, or the one before
 * MPI_Finalize. Random executions (world.h's tw_random_run:
 * primaries late, 3 phases, each notified rank blocked until every rank
 * learned the episode), with control messages FIFO per channel as the
 * shim's are:
 *   - per algorithm, as configured by default: every run ends, none
 *     announces while work remained;
 *   - per algorithm, with TDSHIM_CONFIRM and ranks misjudged passive while
 *     they work (TDSHIM_IDLE=spin's error): every run ends (misjudged ranks
 *     make false announcements: counted, not asserted).
 * bcjrd meets it by telling, when it announces, the one rank that may lag
 * (TD_ALGO_TELLS, rd_new_episode; without it it hung in 56 of 20,000
 * misjudged runs, tests/core/test-bcjrd.c). xulau's laggard, a rank
 * misjudged busy again, may wait for any neighbour: without the polling
 * 9 of 4,000 misjudged runs hung, and telling every neighbour at each
 * announcement made its ranks adopt before their own last iteration
 * (Theorem 4.1's "every rank in the same iteration" lost, one message an
 * edge more an episode), so its collectives stay polled.
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
            int mode = (a->flags & (TD_ALGO_SYMMETRIC | TD_ALGO_TELLS)) == TD_ALGO_SYMMETRIC ? 2 : 1;
            int bad = tw_barrier_runs(&W, a, runs, mode, spin, &unsafe);
            const char *how = mode == 2 ? " (polled: control messages still taken)" : "";
            if (!spin)
                tap_ok(bad == 0 && unsafe == 0,
                       "%s: %d random executions at 2..9 ranks, notified ranks blocked in a collective%s: %d never "
                       "ended, %d unsafe",
                       a->name, runs, how, bad, unsafe);
            else
                tap_ok(bad == 0,
                       "%s: the same with TDSHIM_CONFIRM and ranks misjudged passive (1 in 4 steps)%s: %d of %d never "
                       "ended (%d announced early)",
                       a->name, how, bad, runs, unsafe);
        }
    }
    return tap_done();
}
