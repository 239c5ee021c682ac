/*
 * A collective between a wave's reports and its end (td_collective,
 * td_engine.c td_quiescent; issue 37). After episode 1 every rank lingers
 * passive, so the root starts a wave and ranks report passive; then every
 * rank calls a collective (an MPI_Allreduce between phases) and one rank,
 * SLOW, works on after it without receiving anything (the next phase's work
 * starts there) while the others stop. The root's own collective is the new
 * activity episode 2 needs, so a wave holding SLOW's report from before the
 * collective would announce while SLOW works. The collective is placed after
 * k control messages, for every k up to the end of the wave, on every
 * root-proving algorithm:
 *   1. the engine confirms the first proof after a collective at the root
 *      (two count waves that start after it), or, under bcj, the sweep in
 *      progress at the collective fails (bcj_on_collective): no announcement
 *      while SLOW works, one once it stops;
 *   2. with the root's collective taken for plain activity (neither: the
 *      engine before the change), bcj announces early for some k (the test
 *      can fail).
 */
#include "tap.h"

#include "world.h"

static tw_world W;
static const char *const algos[] = {"bcj", "bcjrd", "skr", "fourcounter", "termdetect", "hcda", "cda", "edod"};
#define NALGO (sizeof algos / sizeof *algos)
#define P 4
#define SLOW 3
#define KMAX 24

/* 1: announced episode 2 while SLOW worked; 0: not; -1: the setup failed */
static int run(const char *a, int k, int forget, int *fine)
{
    td_cfg cfg;
    td_cfg_default(&cfg, 0, P);
    tw_init(&W, P, td_algo_find(a), &cfg);
    tw_all_passive(&W);
    tw_until_announced(&W, 1);
    tw_drain(&W);
    if (!tw_all_announced(&W, 1)) {
        tw_fini(&W);
        return -1;
    }
    for (int r = 0; r < P; r++) { /* the program takes the notification, then lingers */
        td_notified(&W.c[r]);
        tw_passive(&W, r);
    }
    for (int i = 0; i < k && tw_step(&W); i++)
        ;
    for (int r = 0; r < P; r++) { /* the collective between the phases */
        W.active[r] = 1;
        if (forget && r == 0)
            td_activity(&W.c[r]); /* activity only: no taint, no on_collective */
        else
            td_collective(&W.c[r]);
    }
    for (int r = P - 1; r >= 0; r--)
        if (r != SLOW)
            tw_passive(&W, r);
    tw_drain(&W);
    int early = W.unsafe > 0;
    tw_passive(&W, SLOW); /* it stops: episode 2 must come, once */
    tw_drain(&W);
    /* a passive rank polls on (the shim gives the algorithm its on_passive
     * turn at every poll): bcj's root starts the sweep after a failed one there */
    for (int turn = 0; turn < 3 && !tw_all_announced(&W, 2); turn++) {
        for (int r = 0; r < P; r++)
            tw_passive(&W, r);
        tw_drain(&W);
    }
    *fine = !early && tw_all_announced(&W, 2) && !tw_errors(&W);
    tw_fini(&W);
    return early;
}

int main(void)
{
    tap_plan((int)NALGO + 2);
    for (size_t i = 0; i < NALGO; i++) {
        int bad = 0, setup = 0, fine = 1;
        for (int k = 0; k <= KMAX; k++) {
            int f = 0, e = run(algos[i], k, 0, &f);
            setup += e < 0;
            bad += e > 0;
            fine &= e < 0 || f;
        }
        tap_ok(!setup && !bad && fine,
               "%s: a collective after passive reports, one rank working on: no early announcement for k = 0..%d "
               "(early %d, setup failures %d), then one announcement",
               algos[i], KMAX, bad, setup);
    }
    static const char *const hooked[] = {"bcj", "skr"}; /* on_collective */
    for (size_t i = 0; i < 2; i++) {
        int early = 0;
        for (int k = 0; k <= KMAX; k++) {
            int f = 0;
            early += run(hooked[i], k, 1, &f) > 0;
        }
        tap_ok(early > 0, "%s with the collective forgotten at the root: early for %d of %d placements (the hazard)",
               hooked[i], early, KMAX + 1);
    }
    return tap_done();
}
