/*
 * HCDA (papers/cda-credit-hpc.txt §III-D, Mattern's 2^-Y encoding): halving
 * exponents on the piggyback, return of message credit by active holders,
 * exact summation at rank 0, the borrow the encoding forces after
 * log2(C_init) halvings, episodes, and randomized schedules with an oracle
 * that the broken variants must fail. Driven by the world of world.h.
 */
#include "tap.h"
#include "world.h"

#include <stdlib.h>
#include <string.h>

static tw_world W;

extern const td_algo td_algo_hcda_float, td_algo_hcda_eager;

static td_cfg init_cfg(int64_t init)
{
    td_cfg g;
    td_cfg_default(&g, 0, 1);
    g.cda_init = init;
    return g;
}

int main(void)
{
    const td_algo *A = td_algo_find("hcda");
    tap_plan(16);
    tap_ok(A && A->id == 5 && A->pb_size == 5, "registry finds hcda (wire id 5, 5 piggyback bytes)");

    tw_init(&W, 1, A, NULL);
    tw_passive(&W, 0);
    tw_passive(&W, 0);
    td_activity(&W.c[0]);
    tw_passive(&W, 0);
    tap_ok(W.nann[0] == 2 && !tw_errors(&W), "one rank: announces, not twice, again after activity");
    tw_fini(&W);

    /* P = 5: q = 3, every rank starts with 2^-3 */
    tw_init(&W, 5, A, NULL);
    uint8_t pb[TD_PB_MAX];
    td_primary_send(&W.c[2], 3, pb);
    int y1 = pb[4];
    td_primary_send(&W.c[2], 3, pb);
    int y2 = pb[4];
    td_primary_send(&W.c[0], 3, pb);
    tap_ok(y1 == 4 && y2 == 5 && pb[4] == 3, "2^-q with 2^(q-1) < P <= 2^q; a send halves (%d %d); rank 0 sends 2^-q",
           y1, y2);
    tw_fini(&W);

    /* an active holder returns message credit; a passive rank adopts it */
    tw_init(&W, 4, A, NULL);
    tw_passive(&W, 3);
    tw_drain(&W);
    uint64_t r0 = W.c[2].stats.ctl_sent[1][0];
    tw_primary(&W, 1, 2); /* rank 2 is active and holds 2^-2 */
    tw_primary(&W, 1, 3); /* rank 3 is passive with nothing */
    tap_ok(W.c[2].stats.ctl_sent[1][0] == r0 + 1 && W.c[3].stats.ctl_sent[1][0] == 1, "active holder returns at once, passive receiver adopts");
    tw_all_passive(&W);
    tw_drain(&W);
    tap_ok(tw_all_announced(&W, 1) && !tw_errors(&W), "exact sum at rank 0: announced when all 2^-Y pieces are back");
    tw_fini(&W);

    /* token chain with C_init = 2^3: three halvings, then a borrow (2 messages) */
    td_cfg g = init_cfg(8);
    tw_init(&W, 2, A, &g);
    int prepaid = 0;
    for (int i = 0; i < 4; i++) {
        tw_send(&W, 1, 1, 0); /* a chain: one hop per step */
        prepaid += W.q[W.nq - 1].pb[4] == 0xff;
        tw_passive(&W, 1);
        tw_drain_all(&W);
    }
    tap_ok(W.c[1].stats.borrows == 1 && prepaid == 1 && W.c[0].stats.ctl_sent[1][2] == 1,
           "2^-Ymax cannot be split: the 4th hop goes at once, prepaid: one borrow + one grant after log2(C_init) = 3 halvings");
    tw_passive(&W, 1);
    tw_passive(&W, 0);
    tw_drain(&W);
    tap_ok(tw_all_announced(&W, 1) && !tw_errors(&W), "the borrowed credit returns: announced");
    tw_fini(&W);

    /* Theorem 1 shape: a token passed around P = 8 ranks, steps synchronous */
    tw_init(&W, 8, A, NULL);
    for (int r = 1; r < 8; r++)
        tw_passive(&W, r);
    tw_drain(&W);
    uint64_t base = tw_ctl_total(&W);
    int holder = 0, steps = 40;
    tw_seed(&W, 7);
    for (int s = 0; s < steps; s++) {
        int d = tw_rand(&W, 8);
        tw_primary(&W, holder, d);
        if (d != holder)
            tw_passive(&W, holder);
        tw_drain(&W);
        holder = d;
    }
    uint64_t used = tw_ctl_total(&W) - base;
    tw_passive(&W, holder);
    tw_drain(&W);
    tap_ok(used >= (uint64_t)steps - 8 && used <= (uint64_t)steps + 2 * (steps / 31 + 1),
           "token ring: about one return per step plus 2 per borrow (%llu for %d steps)", (unsigned long long)used,
           steps);
    tap_ok(tw_all_announced(&W, 1), "token ring: announced after the last step");
    tw_fini(&W);

    /* Rank 0's messages each carry a fresh 2^-q; those of the next episode
     * that reach a rank before its TERM are kept apart (future) and returned
     * at TERM. Four of them at P = 2 (q = 1) make 2: more than one 2^-Y
     * piece can say; returned as pieces of 2^0 (once sent as "2^1", an
     * exponent of -1 that rank 0 refused, stopping detection: found by
     * tdsim --misjudge, reachable without misjudgment since TERM and
     * primaries travel on different communicators). */
    tw_init(&W, 2, A, NULL);
    tw_passive(&W, 1);
    tw_passive(&W, 0);
    tw_until_announced(&W, 1); /* TERM to rank 1 still queued */
    tw_activity(&W, 0);
    for (int i = 0; i < 4; i++)
        tw_primary(&W, 0, 1);
    tw_drain(&W); /* TERM: rank 1 returns the 4 x 2^-1 */
    tw_passive(&W, 1);
    tw_passive(&W, 0);
    tw_drain(&W);
    tap_ok(!tw_errors(&W) && tw_all_announced(&W, 2), "next-episode credit of 2 (4 x 2^-1 before TERM) returns as 2^0 pieces");
    tw_fini(&W);

    /* validation */
    tw_init(&W, 3, A, NULL);
    td_msg m = {.algo = 5, .type = 0, .a = 0, .b = -1, .c = -1};
    uint8_t w[TD_WIRE_SIZE];
    td_wire_encode(&m, w);
    int bad = td_control(&W.c[0], 1, w, sizeof w) != TD_OK && strstr(W.c[0].errmsg, "less is outside");
    tap_ok(bad, "returning more than is outside rank 0 is an error: %s", W.c[0].errmsg);
    tw_fini(&W);

    int fails = 0, unsafe = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        int got = tw_task_run(&W, A, NULL, 2 + (int)(seed % 7), 3, 6, seed, (int)(seed & 1));
        unsafe += W.unsafe;
        if (got != 3 && fails++ < 3)
            tap_diag("seed %llu: %d phases", (unsigned long long)seed, got);
        tw_fini(&W);
    }
    tap_ok(!fails && !unsafe, "300 random schedules, 3 phases: safe and live (%d, %d)", fails, unsafe);
    fails = unsafe = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        td_cfg t = init_cfg(4);
        int got = tw_task_run(&W, A, &t, 5, 2, 7, seed, (int)(seed & 1));
        unsafe += W.unsafe;
        fails += got != 2;
        tw_fini(&W);
    }
    tap_ok(!fails && !unsafe, "200 schedules with C_init = 4 (borrowing often): safe and live (%d, %d)", fails,
           unsafe);
    int caught = 0;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        int got = tw_task_run(&W, &td_algo_hcda_eager, NULL, 5, 1, 6, seed, 0);
        caught += W.unsafe || got != 1;
        tw_fini(&W);
    }
    tap_ok(caught > 0, "broken hcda-eager is caught (%d of 100)", caught);
    /* rank 1 halves its credit 30 times while rank 2 keeps 2^-2: a float sum
     * at rank 0 rounds 2^-2 + 2^-32 to 2^-2 and announces when rank 2 returns */
    int got_float = 0, got_exact = 0;
    for (int v = 0; v < 2; v++) {
        td_cfg t = init_cfg((int64_t)1 << 40);
        tw_init(&W, 3, v ? A : &td_algo_hcda_float, &t);
        tw_passive(&W, 0);
        for (int i = 0; i < 30; i++)
            tw_primary(&W, 1, 1);
        tw_drain(&W);
        tw_passive(&W, 2);
        tw_drain(&W);
        *(v ? &got_exact : &got_float) = W.unsafe;
        tw_fini(&W);
    }
    tap_ok(got_float && !got_exact, "broken hcda-float announces while rank 1 holds 2^-32; the exact sum does not");
    /* the exact sum passes the same schedules */
    fails = 0;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        td_cfg t = init_cfg((int64_t)1 << 40);
        int got = tw_task_run(&W, A, &t, 4, 1, 12, seed, 0);
        fails += W.unsafe || got != 1;
        tw_fini(&W);
    }
    tap_ok(!fails, "the exact 128-bit fixed-point sum passes them (%d failed)", fails);
    return tap_done();
}
