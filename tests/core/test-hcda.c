/*
 * HCDA (papers/cda-credit-hpc.txt §III-D, Mattern's 2^-Y encoding): halving
 * exponents on the piggyback, return of message credit by active holders,
 * exact summation at rank 0, the borrow the encoding forces after
 * log2(C_init) halvings, episodes, and randomized schedules with an oracle
 * that the broken variants must fail. Uses the driver of test-cda.c.
 */
#define CREDIT_DRIVER_ONLY
#include "test-cda.c"

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
    tap_plan(15);
    tap_ok(A && A->id == 5 && A->pb_size == 5, "registry finds hcda (wire id 5, 5 piggyback bytes)");

    world_init(1, A);
    passive(0);
    passive(0);
    td_activity(&W.c[0]);
    passive(0);
    tap_ok(W.nann[0] == 2 && !errors(), "one rank: announces, not twice, again after activity");
    world_fini();

    /* P = 5: q = 3, every rank starts with 2^-3 */
    world_init(5, A);
    uint8_t pb[TD_PB_MAX];
    td_primary_send(&W.c[2], 3, pb);
    int y1 = pb[4];
    td_primary_send(&W.c[2], 3, pb);
    int y2 = pb[4];
    td_primary_send(&W.c[0], 3, pb);
    tap_ok(y1 == 4 && y2 == 5 && pb[4] == 3, "2^-q with 2^(q-1) < P <= 2^q; a send halves (%d %d); rank 0 sends 2^-q",
           y1, y2);
    world_fini();

    /* an active holder returns message credit; a passive rank adopts it */
    world_init(4, A);
    passive(3);
    drain_ctl();
    uint64_t r0 = ctl_sent(2, 0);
    primary(1, 2); /* rank 2 is active and holds 2^-2 */
    primary(1, 3); /* rank 3 is passive with nothing */
    tap_ok(ctl_sent(2, 0) == r0 + 1 && ctl_sent(3, 0) == 1, "active holder returns at once, passive receiver adopts");
    all_passive();
    drain_ctl();
    tap_ok(all_announced(1) && !errors(), "exact sum at rank 0: announced when all 2^-Y pieces are back");
    world_fini();

    /* token chain with C_init = 2^3: three halvings, then a borrow (2 messages) */
    td_cfg g = init_cfg(8);
    world_init_cfg(2, A, 0, &g);
    int defer = 0;
    for (int i = 0; i < 4; i++) {
        int rc = primary(1, 1);
        if (rc == TD_DEFER) {
            defer++;
            drain_ctl();
            rc = primary(1, 1);
        }
        if (rc != TD_OK)
            break;
    }
    tap_ok(W.c[1].stats.borrows == 1 && defer == 1 && ctl_sent(0, 2) == 1,
           "2^-Ymax cannot be split: one borrow + one grant after log2(C_init) = 3 halvings");
    passive(1);
    passive(0);
    drain_ctl();
    tap_ok(all_announced(1) && !errors(), "the borrowed credit returns: announced");
    world_fini();

    /* Theorem 1 shape: a token passed around P = 8 ranks, steps synchronous */
    world_init(8, A);
    for (int r = 1; r < 8; r++)
        passive(r);
    drain_ctl();
    uint64_t base = ctl_total();
    int holder = 0, steps = 40;
    W.rng = 7;
    for (int s = 0; s < steps; s++) {
        int d = below(8);
        if (primary(holder, d) == TD_DEFER) {
            drain_ctl();
            primary(holder, d);
        }
        if (d != holder)
            passive(holder);
        drain_ctl();
        holder = d;
    }
    uint64_t used = ctl_total() - base;
    passive(holder);
    drain_ctl();
    tap_ok(used >= (uint64_t)steps - 8 && used <= (uint64_t)steps + 2 * (steps / 31 + 1),
           "token ring: about one return per step plus 2 per borrow (%llu for %d steps)", (unsigned long long)used,
           steps);
    tap_ok(all_announced(1), "token ring: announced after the last step");
    world_fini();

    /* validation */
    world_init(3, A);
    td_msg m = {.algo = 5, .type = 0, .a = 0, .b = -1, .c = -1};
    uint8_t w[TD_WIRE_SIZE];
    td_wire_encode(&m, w);
    int bad = td_control(&W.c[0], 1, w, sizeof w) != TD_OK && strstr(W.c[0].errmsg, "less is outside");
    tap_ok(bad, "returning more than is outside rank 0 is an error: %s", W.c[0].errmsg);
    world_fini();

    int fails = 0, unsafe = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        int got = random_run(A, 2 + (int)(seed % 7), 3, 6, seed, (int)(seed & 1), NULL);
        unsafe += W.unsafe;
        if (got != 3 && fails++ < 3)
            tap_diag("seed %llu: %d phases", (unsigned long long)seed, got);
        world_fini();
    }
    tap_ok(!fails && !unsafe, "300 random schedules, 3 phases: safe and live (%d, %d)", fails, unsafe);
    fails = unsafe = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        td_cfg t = init_cfg(4);
        int got = random_run(A, 5, 2, 7, seed, (int)(seed & 1), &t);
        unsafe += W.unsafe;
        fails += got != 2;
        world_fini();
    }
    tap_ok(!fails && !unsafe, "200 schedules with C_init = 4 (borrowing often): safe and live (%d, %d)", fails,
           unsafe);
    int caught = 0;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        int got = random_run(&td_algo_hcda_eager, 5, 1, 6, seed, 0, NULL);
        caught += W.unsafe || got != 1;
        world_fini();
    }
    tap_ok(caught > 0, "broken hcda-eager is caught (%d of 100)", caught);
    /* rank 1 halves its credit 30 times while rank 2 keeps 2^-2: a float sum
     * at rank 0 rounds 2^-2 + 2^-32 to 2^-2 and announces when rank 2 returns */
    int got_float = 0, got_exact = 0;
    for (int v = 0; v < 2; v++) {
        td_cfg t = init_cfg((int64_t)1 << 40);
        world_init_cfg(3, v ? A : &td_algo_hcda_float, 0, &t);
        passive(0);
        for (int i = 0; i < 30; i++)
            primary(1, 1);
        drain_ctl();
        passive(2);
        drain_ctl();
        *(v ? &got_exact : &got_float) = W.unsafe;
        world_fini();
    }
    tap_ok(got_float && !got_exact, "broken hcda-float announces while rank 1 holds 2^-32; the exact sum does not");
    /* the exact sum passes the same schedules */
    fails = 0;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        td_cfg t = init_cfg((int64_t)1 << 40);
        int got = random_run(A, 4, 1, 12, seed, 0, &t);
        fails += W.unsafe || got != 1;
        world_fini();
    }
    tap_ok(!fails, "the exact 128-bit fixed-point sum passes them (%d failed)", fails);
    free(W.q);
    return tap_done();
}
