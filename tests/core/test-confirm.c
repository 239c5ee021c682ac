/*
 * Confirmation waves (td_engine.c, cfg.confirm; TDSHIM_CONFIRM): a rank that
 * a timing notion (TDSHIM_IDLE=spin) misjudged passive while it still works
 * must not produce an announcement. Driven by the synchronous world of
 * world.h, whose truth (w->active) says the rank works while its core was
 * told td_passive.
 *   1. without confirmation the misjudged rank lets every root-proving
 *      algorithm announce early (the hazard);
 *   2. with confirmation, the rank seen busy again (td_busy) before the
 *      first wave refutes the proof, once: the root then waits for that
 *      rank's wake (it sends one when it is passive again) instead of
 *      proving and refuting in a loop; once it really stops, exactly one
 *      announcement follows, safe;
 *   3. a transition between its two visits (td_busy then td_passive again)
 *      refutes the proof too, although the rank is passive at both visits;
 *   4. with nothing misjudged the proof is confirmed: one announcement, and
 *      the cost is the two waves: 4 (P - 1) engine messages;
 *   5. a rank unsure when a wave visits it (td_unsure: TDSHIM_IDLE=spin saw
 *      one long gap, maybe work) answers busy: refuted, and the root waits
 *      for its wake, which goes when it spins again (td_passive); then one
 *      safe announcement;
 *   6. a rank unsure only between the waves' two visits (an isolated long
 *      gap, the machine's noise, then it spins again) refutes nothing: no
 *      transition was counted, and it was sure at both visits.
 */
#include "tap.h"

#include "world.h"

#include <stdlib.h>
#include <string.h>

static tw_world W;
static const char *const algos[] = {"bcj", "skr", "fourcounter", "termdetect", "hcda", "cda", "edod"};
#define NALGO (sizeof algos / sizeof *algos)
#define P 5
#define SLOW 2 /* the misjudged rank */

static void start(const char *a, int confirm)
{
    td_cfg cfg;
    td_cfg_default(&cfg, 0, P);
    cfg.confirm = confirm;
    tw_init(&W, P, td_algo_find(a), &cfg);
    /* every rank but SLOW really stops; SLOW's core is told passive while
     * it still works (the truth keeps it active) */
    for (int r = P - 1; r >= 0; r--)
        if (r != SLOW)
            tw_passive(&W, r);
    td_passive(&W.c[SLOW]);
}

/* deliver control messages until cond or nothing is left */
#define STEP_UNTIL(cond)                                                                                          \
    do {                                                                                                       \
        for (int k_ = 0; k_ < 20000 && !(cond) && tw_step(&W); k_++)                                           \
            ;                                                                                                  \
    } while (0)

static uint64_t engine_sent(int type)
{
    uint64_t n = 0;
    for (int r = 0; r < P; r++)
        n += W.c[r].stats.ctl_sent[0][type];
    return n;
}

int main(void)
{
    tap_plan(6 * (int)NALGO);
    for (size_t i = 0; i < NALGO; i++) {
        const char *a = algos[i];

        start(a, 0);
        tw_drain(&W);
        tap_ok(W.unsafe > 0, "%s, no confirmation: a rank misjudged passive lets it announce early (unsafe=%d)", a,
               W.unsafe);
        tw_fini(&W);

        start(a, 1);
        STEP_UNTIL(W.c[0].confirming);
        int started = W.c[0].confirming;
        td_busy(&W.c[SLOW]); /* its next poll comes after a long gap: busy again */
        tw_drain(&W);
        int refuted = W.c[0].stats.refuted >= 1 && W.nann[0] == 0;
        tw_passive(&W, SLOW); /* now it really stops */
        tw_drain(&W);
        tap_ok(started && refuted && tw_all_announced(&W, 1) && W.unsafe == 0 && !tw_errors(&W) &&
                   W.c[0].stats.refuted == 1,
               "%s, confirmation: busy again before the waves -> refuted once (%llu: the root waits for the "
               "busy rank's wake), then one safe announcement", a, (unsigned long long)W.c[0].stats.refuted);
        tw_fini(&W);

        start(a, 1);
        STEP_UNTIL(W.c[0].confirming);
        /* round 1 has visited SLOW once its answer left: wait for round 2 */
        STEP_UNTIL((W.c[0].conf_seq & 1) || !W.c[0].confirming);
        int round2 = W.c[0].confirming && (W.c[0].conf_seq & 1);
        td_busy(&W.c[SLOW]); /* worked between the two visits... */
        td_passive(&W.c[SLOW]); /* ...and is misjudged passive again */
        /* (a new proof may start at once: stop at the refutation) */
        STEP_UNTIL(W.c[0].stats.refuted || !W.c[0].confirming);
        refuted = W.c[0].stats.refuted >= 1 && W.nann[0] == 0;
        W.active[SLOW] = 0; /* it really stops (its core already thinks so) */
        tw_drain(&W);
        tap_ok(round2 && refuted && tw_all_announced(&W, 1) && W.unsafe == 0 && !tw_errors(&W),
               "%s, confirmation: a transition between its two visits refutes the proof (round2 %d refuted %d "
               "announced %d unsafe %d)", a, round2, refuted, tw_all_announced(&W, 1), W.unsafe);
        tw_fini(&W);

        td_cfg cfg;
        td_cfg_default(&cfg, 0, P);
        cfg.confirm = 1;
        tw_init(&W, P, td_algo_find(a), &cfg);
        tw_all_passive(&W);
        tw_drain(&W);
        uint64_t conf = engine_sent(TD_EM_CONF) + engine_sent(TD_EM_CONF_ACK);
        tap_ok(tw_all_announced(&W, 1) && W.unsafe == 0 && W.c[0].stats.confirmed == 1 && conf == 4 * (P - 1),
               "%s, confirmation with nothing misjudged: confirmed once, %llu confirmation messages (4(P-1) = %d)",
               a, (unsigned long long)conf, 4 * (P - 1));
        tw_fini(&W);

        start(a, 1);
        STEP_UNTIL(W.c[0].confirming);
        started = W.c[0].confirming;
        td_unsure(&W.c[SLOW]); /* a long gap before its next poll: maybe work */
        tw_drain(&W);
        refuted = W.c[0].stats.refuted >= 1 && W.nann[0] == 0;
        tw_passive(&W, SLOW); /* it spins again, and really stops: sure, and its wake goes */
        tw_drain(&W);
        tap_ok(started && refuted && tw_all_announced(&W, 1) && W.unsafe == 0 && !tw_errors(&W) &&
                   W.c[0].stats.refuted == 1 && W.c[SLOW].stats.busy_again == 0,
               "%s, confirmation: unsure at a wave's visit -> refuted once (%llu), no transition counted, then one "
               "safe announcement", a, (unsigned long long)W.c[0].stats.refuted);
        tw_fini(&W);

        start(a, 1);
        W.active[SLOW] = 0; /* it is passive in truth: its long gaps are noise */
        STEP_UNTIL(W.c[0].confirming);
        STEP_UNTIL((W.c[0].conf_seq & 1) || !W.c[0].confirming);
        round2 = W.c[0].confirming && (W.c[0].conf_seq & 1);
        td_unsure(&W.c[SLOW]);  /* one long gap between the two visits... */
        td_passive(&W.c[SLOW]); /* ...then N short polls: sure again */
        tw_drain(&W);
        tap_ok(round2 && tw_all_announced(&W, 1) && W.unsafe == 0 && !tw_errors(&W) && W.c[0].stats.refuted == 0 &&
                   W.c[0].stats.confirmed == 1,
               "%s, confirmation: an isolated long gap between the visits refutes nothing (round2 %d refuted %llu "
               "confirmed %llu)", a, round2, (unsigned long long)W.c[0].stats.refuted,
               (unsigned long long)W.c[0].stats.confirmed);
        tw_fini(&W);
    }
    return tap_done();
}
