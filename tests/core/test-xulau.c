/*
 * Xu-Lau (papers/xu-lau-edge-coloring.txt §3-4) with the count confirmation
 * of xulau.c: overlay plans (colours, colour diameter, PredefinedValue) for
 * each topology, the closed forms against the schedule simulated from every
 * source up to 600 ranks and their cost at 2^20 ranks, symmetric detection
 * (every rank in the same iteration), dormancy after a clean or announced
 * quiescence, and random executions with long primary delays and non-FIFO
 * control messages checked by an oracle; the paper's rule alone
 * (xulau-paper) must be caught announcing while a primary is in transit.
 *
 * The world (queue, ground truth, oracle, random schedule) is world.h's.
 *
 * Usage: test-xulau                          TAP tests
 *        test-xulau stats TOPO P runs         control messages / iterations
 *                                             to detection (bench/RESULTS.md)
 *        test-xulau trace SEED                replay one random execution
 */
#include "tap.h"
#include "world.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static tw_world W;

/* the default configuration with the overlay topology t (dimensions chosen
 * by xulau.c) */
static td_cfg topo_cfg(int t)
{
    td_cfg g;
    td_cfg_default(&g, 0, 1);
    g.xulau_topo = t;
    return g;
}

int td_xulau_plan(const td_cfg *cfg, int *kappa, int *cdiam, int *lag, int *pv);
int td_xulau_plan_ref(const td_cfg *cfg, int step, int *kappa, int *cdiam, int *lag, int *pv, int *bad);

static int plan_of(int t, int P, int d0, int d1, int *kappa, int *cdiam, int *lag, int *pv)
{
    td_cfg cfg;
    td_cfg_default(&cfg, 0, P);
    cfg.xulau_topo = t;
    cfg.xulau_dims[0] = d0;
    cfg.xulau_dims[1] = d1;
    return td_xulau_plan(&cfg, kappa, cdiam, lag, pv);
}

/* plan() (closed-form colour diameter, implicit overlay) against the
 * reference of xulau.c's test library (the overlay as an edge list, the
 * colour diameter simulated from every source, the count tree's BFS over
 * the edges) at ranks 0, step, 2 step, ... and P - 1; counts mismatches in
 * *nbad, the first few told. */
static void plan_matches(int *nbad, int t, int P, int d0, int d1, int d2, int step)
{
    td_cfg cfg;
    td_cfg_default(&cfg, 0, P);
    cfg.xulau_topo = t;
    cfg.xulau_dims[0] = d0;
    cfg.xulau_dims[1] = d1;
    cfg.xulau_dims[2] = d2;
    int k, d, l, pv, rk, rd, rl, rpv, bad = -1;
    int rc = td_xulau_plan(&cfg, &k, &d, &l, &pv), rrc = td_xulau_plan_ref(&cfg, step, &rk, &rd, &rl, &rpv, &bad);
    int ok = rc == TD_OK && rrc == TD_OK && k == rk && d == rd && l == rl && pv == rpv && bad == 0;
    if (!ok && ++*nbad <= 10)
        tap_diag("topology %d, P %d, dims %dx%dx%d: plan rc %d kappa %d D~ %d L %d PV %d, reference rc %d kappa %d "
                 "D~ %d L %d PV %d, %d ranks differ",
                 t, P, d0, d1, d2, rc, k, d, l, pv, rrc, rk, rd, rl, rpv, bad);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One phase of random work with delayed primaries, then measure the
 * control messages and iterations from quiescence to detection. */
static int qc_confirm; /* quiescence_cost with cfg.confirm (TDSHIM_CONFIRM) */

static int quiescence_cost(int t, int P, unsigned long long seed, uint64_t *msgs, uint64_t *iters)
{
    td_cfg g = topo_cfg(t);
    g.confirm = qc_confirm;
    tw_init(&W, P, td_algo_find("xulau"), &g);
    tw_seed(&W, seed);
    for (int r = 0; r < P; r++)
        W.budget[r] = 3;
    for (long it = 0; it < 20000000; it++) {
        int quiet = !W.inflight;
        for (int r = 0; r < P; r++)
            quiet &= !W.active[r];
        if (quiet || tw_errors(&W))
            break;
        tw_random_step(&W);
    }
    uint64_t m0 = tw_sent(&W, 0), i0 = W.c[0].stats.waves;
    /* quiescent: only control messages remain; every rank polls */
    for (long it = 0; it < 20000000 && !W.announced[0] && !tw_errors(&W); it++) {
        if (W.nq)
            tw_deliver(&W, tw_rand(&W, (unsigned)W.nq));
        else
            for (int r = 0; r < P; r++)
                td_passive(&W.c[r]);
    }
    *msgs = tw_sent(&W, 0) - m0;
    *iters = W.c[0].stats.waves - i0;
    int ok = W.announced[0] == 1 && !W.unsafe && !W.asym && !tw_errors(&W);
    tw_fini(&W);
    return ok;
}

static const char *const topo_names[] = {"ring", "mesh", "torus", "hypercube"};

static int stats(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    int t = -1, P = atoi(argv[3]), runs = atoi(argv[4]);
    for (int i = 0; i < 4; i++)
        if (!strcmp(argv[2], topo_names[i]))
            t = i;
    int kappa, cdiam, lag, pv;
    if (t < 0 || plan_of(t, P, 0, 0, &kappa, &cdiam, &lag, &pv) != TD_OK)
        return 2;
    double m = 0, it = 0;
    int bad = 0;
    for (int i = 0; i < runs; i++) {
        uint64_t msgs, iters;
        bad += !quiescence_cost(t, P, (unsigned long long)i + 1, &msgs, &iters);
        m += (double)msgs;
        it += (double)iters;
    }
    printf("%s P=%d kappa=%d colour_diameter=%d lag=%d PV=%d runs=%d failures=%d "
           "ctl_after_quiescence=%.1f per_rank=%.2f iterations_after_quiescence=%.2f\n",
           argv[2], P, kappa, cdiam, lag, pv, runs, bad, m / runs, m / runs / P, it / runs);
    return bad != 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "trace")) {
        int u;
        W.trace = 1;
        unsigned long long sd = strtoull(argv[2], NULL, 10);
        td_cfg g = topo_cfg((int)(sd % 4));
        return !tw_random_run(&W, td_algo_find("xulau"), &g, 2 + (int)(sd % 15), 3, 4, sd, &u);
    }
    if (argc > 1 && !strcmp(argv[1], "stats"))
        return stats(argc, argv);

    tap_plan(22);
    const td_algo *a = td_algo_find("xulau");
    tap_ok(a && a->id == 8 && (a->flags & TD_ALGO_SYMMETRIC) && a->pb_size == 4,
           "xulau is registered, wire id 8, symmetric, 4-byte piggyback (episode)");

    int kappa, cdiam, lag, pv;
    plan_of(TD_TOPO_RING, 16, 0, 0, &kappa, &cdiam, &lag, &pv);
    tap_ok(kappa == 2 && cdiam >= 4 && cdiam <= 5 && pv == cdiam + 1 + (cdiam - 1 > lag ? cdiam - 1 : lag),
           "ring of 16: 2 colours, colour diameter %d, lag %d, PV %d", cdiam, lag, pv);
    plan_of(TD_TOPO_RING, 15, 0, 0, &kappa, &cdiam, &lag, &pv);
    tap_ok(kappa == 3, "odd ring of 15: 3 colours (%d), colour diameter %d", kappa, cdiam);
    plan_of(TD_TOPO_MESH, 8, 4, 2, &kappa, &cdiam, &lag, &pv);
    tap_ok(kappa == 3 && cdiam == 2 && pv == 3 + (lag > 1 ? lag : 1),
           "4x2 mesh (Fig. 1a, Table 1): 3 colours, colour diameter 2 (paper's PredefinedValue 3) (%d, %d, PV %d)",
           kappa, cdiam, pv);
    plan_of(TD_TOPO_MESH, 64, 0, 0, &kappa, &cdiam, &lag, &pv);
    tap_ok(kappa == 4 && lag <= cdiam, "8x8 mesh, alternate colouring: 4 colours, colour diameter %d, lag %d", cdiam,
           lag);
    plan_of(TD_TOPO_TORUS, 64, 0, 0, &kappa, &cdiam, &lag, &pv);
    tap_ok(kappa == 4 && lag <= cdiam, "8x8 torus: 4 colours, colour diameter %d, lag %d", cdiam, lag);
    plan_of(TD_TOPO_HYPERCUBE, 64, 0, 0, &kappa, &cdiam, &lag, &pv);
    tap_ok(kappa == 6 && cdiam == 1 && lag == 0 && pv == 2,
           "6-cube: 6 colours, colour diameter 1 (dimension exchange), PV 2 (%d, %d, %d)", kappa, cdiam, pv);
    plan_of(TD_TOPO_HYPERCUBE, 12, 0, 0, &kappa, &cdiam, &lag, &pv);
    tap_ok(kappa == 4 && cdiam >= 1 && pv >= 2, "12 ranks: incomplete 4-cube, colour diameter %d", cdiam);
    plan_of(TD_TOPO_TORUS, 7, 0, 0, &kappa, &cdiam, &lag, &pv);
    tap_ok(kappa == 3, "prime P=7 as a torus is a ring of 7: 3 colours (%d)", kappa);
    tap_ok(plan_of(TD_TOPO_MESH, 12, 5, 2, &kappa, &cdiam, &lag, &pv) != TD_OK,
           "mesh dimensions that do not multiply to P are rejected");

    /* the plan's exact closed forms against the simulated schedule */
    int nbad = 0, nplans = 0;
    for (int t = 0; t < 4; t++)
        for (int P = 1; P <= 600; P++, nplans++)
            plan_matches(&nbad, t, P, 0, 0, 0, t == TD_TOPO_HYPERCUBE || P <= 128 ? 1 : P / 32);
    tap_ok(!nbad, "plan = reference (simulated colour diameter, count tree over the edge list): ring, mesh, torus, "
                  "hypercube, P = 1..600 (%d plans; links checked at every rank up to 128 ranks and in the "
                  "hypercube, else at every (P/32)th)", nplans);
    nbad = nplans = 0;
    for (int t = TD_TOPO_MESH; t <= TD_TOPO_TORUS; t++) {
        for (int x = 1; x <= 24; x++)
            for (int y = 1; y <= 24; y++, nplans++)
                plan_matches(&nbad, t, x * y, x, y, 0, x * y / 16 + 1);
        for (int x = 1; x <= 8; x++)
            for (int y = 1; y <= 8; y++)
                for (int z = 1; z <= 8; z++, nplans++)
                    plan_matches(&nbad, t, x * y * z, x, y, z, x * y * z / 16 + 1);
    }
    static const int big[][5] = {{TD_TOPO_HYPERCUBE, 4096, 0, 0, 0}, {TD_TOPO_HYPERCUBE, 3000, 0, 0, 0},
                                 {TD_TOPO_TORUS, 4096, 0, 0, 0},      {TD_TOPO_TORUS, 4095, 65, 63, 0},
                                 {TD_TOPO_TORUS, 4096, 16, 16, 16},   {TD_TOPO_MESH, 3375, 15, 15, 15},
                                 {TD_TOPO_RING, 1999, 0, 0, 0},       {TD_TOPO_TORUS, 2002, 2, 7, 143}};
    for (size_t i = 0; i < sizeof big / sizeof *big; i++, nplans++)
        plan_matches(&nbad, big[i][0], big[i][1], big[i][2], big[i][3], big[i][4], big[i][1] / 16);
    tap_ok(!nbad, "plan = reference, mesh and torus a x b (1..24), a x b x c (1..8), and 8 larger overlays (%d plans)",
           nplans);

    /* the plan's cost at scale (every rank computes it at MPI_Init) */
    static const int timed[][2] = {{TD_TOPO_HYPERCUBE, 1 << 16}, {TD_TOPO_HYPERCUBE, 1 << 20},
                                   {TD_TOPO_HYPERCUBE, (1 << 20) - 1}, {TD_TOPO_TORUS, 1 << 16},
                                   {TD_TOPO_TORUS, 1 << 20},         {TD_TOPO_RING, 1 << 16},
                                   {TD_TOPO_RING, 1 << 20},          {TD_TOPO_RING, (1 << 20) - 1}};
    int timed_ok = 1;
    for (size_t i = 0; i < sizeof timed / sizeof *timed; i++) {
        double t0 = now_ms();
        timed_ok &= plan_of(timed[i][0], timed[i][1], 0, 0, &kappa, &cdiam, &lag, &pv) == TD_OK;
        tap_diag("plan of %s, P = %d: %.1f ms (kappa %d, D~ %d, L %d, PV %d)", topo_names[timed[i][0]], timed[i][1],
                 now_ms() - t0, kappa, cdiam, lag, pv);
    }
    tap_ok(timed_ok, "plans of 2^16 and 2^20 ranks (hypercube, torus, ring) computed (times above, not judged)");

    /* one rank: detects alone; then dormant */
    td_cfg g = topo_cfg(TD_TOPO_RING);
    tw_init(&W, 1, td_algo_find("xulau"), &g);
    tw_passive(&W, 0);
    tap_ok(W.announced[0] == 1, "a single rank announces at its first poll");
    tw_fini(&W);

    /* 8 ranks, mesh: announce once, then polling is silent */
    g = topo_cfg(TD_TOPO_MESH);
    tw_init(&W, 8, td_algo_find("xulau"), &g);
    tw_seed(&W, 1);
    for (int r = 0; r < 8; r++)
        tw_passive(&W, r);
    tw_drain_all(&W);
    int all1 = 1;
    for (int r = 0; r < 8; r++)
        all1 &= W.announced[r] == 1;
    tap_ok(all1 && !W.asym && !W.unsafe, "8 ranks: every rank announces episode 1 in the same iteration (%llu)",
           (unsigned long long)W.iter_at[1]);
    uint64_t before = tw_sent(&W, 0);
    for (int k = 0; k < 5; k++)
        for (int r = 0; r < 8; r++)
            td_passive(&W.c[r]);
    tap_ok(W.nq == 0 && tw_sent(&W, 0) == before, "after the announcement, polling exchanges nothing");
    /* rank 5 works alone (a collective, no message): one wake-up flood,
     * episode 2 announced everywhere in one iteration */
    tw_activity(&W, 5);
    tw_passive(&W, 5);
    while (W.nq)
        tw_deliver(&W, tw_rand(&W, (unsigned)W.nq));
    int all2 = 1;
    for (int r = 0; r < 8; r++)
        all2 &= W.announced[r] == 2;
    tap_ok(all2 && !W.asym, "activity on one rank wakes the others: episode 2 announced by all in one iteration");
    tw_fini(&W);

    /* A laggard: after the job is quiescent, TDSHIM_IDLE=spin sees a rank
     * busy again (td_busy: its poll loop was descheduled) inside its
     * detection window, so it misses the iteration the others announce in.
     * They are dormant; its exchanges of the announced episode reach them
     * and they tell it (engine TERM): it announces episode 1 too, once,
     * and episode 2 then works for everyone. (Before: it waited for ever.) */
    int lag_made = 0, lag_bad = 0;
    for (int lag_r = 0; lag_r < 8; lag_r++) {
        g = topo_cfg(TD_TOPO_RING);
        tw_init(&W, 8, td_algo_find("xulau"), &g);
        for (int r = 0; r < 8; r++)
            tw_passive(&W, r);
        int made = 0;
        for (int k = 0; k < 100000 && !made && tw_step(&W); k++) {
            int any = 0;
            for (int r = 0; r < 8; r++)
                any |= W.announced[r] == 1;
            if (any && W.announced[lag_r] == 0) {
                td_busy(&W.c[lag_r]);
                td_passive(&W.c[lag_r]);
                made = 1;
            }
        }
        tw_drain_all(&W);
        int once = made;
        for (int r = 0; r < 8; r++)
            once &= W.announced[r] == 1 && W.nann[r] == 1;
        tw_activity(&W, 2);
        tw_passive(&W, 2);
        tw_drain_all(&W);
        int again = 1;
        for (int r = 0; r < 8; r++)
            again &= W.announced[r] == 2;
        /* made = 0: rank lag_r announced in the first batch already */
        lag_made += made;
        if (made && !(once && again && !tw_errors(&W) && !W.unsafe)) {
            lag_bad++;
            tap_diag("laggard rank %d: episode 1 once everywhere %d, episode 2 everywhere %d", lag_r, once, again);
        }
        tw_fini(&W);
    }
    tap_ok(lag_made >= 3 && !lag_bad,
           "xulau, 8-ring: a rank seen busy again after another rank announced (%d of 8 placements) is told by a "
           "neighbour and announces episode 1 once; episode 2 then reaches every rank",
           lag_made);

    int okall = 1, seeds = 0, unsafe = 0;
    for (unsigned long long s = 1; s <= 2000 && okall; s++, seeds++) {
        g = topo_cfg((int)(s % 4));
        okall &= tw_random_run(&W, td_algo_find("xulau"), &g, 2 + (int)(s % 15), 3, 4, s, &unsafe);
        okall &= !unsafe && !W.asym;
        if (!okall)
            tap_diag("failing seed %llu, topology %s, %d ranks, unsafe %d", s, topo_names[s % 4], 2 + (int)(s % 15),
                     unsafe);
    }
    tap_ok(okall, "xulau: %d random executions over 4 topologies (non-FIFO, delayed primaries, 3 phases) safe and live", seeds);

    int caught = 0;
    for (unsigned long long s = 1; s <= 240 && !caught; s++) {
        g = topo_cfg((int)(s % 4));
        tw_random_run(&W, td_algo_find("xulau-paper"), &g, 2 + (int)(s % 15), 3, 4, s, &unsafe);
        caught = unsafe > 0;
    }
    tap_ok(caught, "xulau-paper (no count confirmation) is caught announcing with a primary in transit");

    uint64_t msgs, iters;
    int okq = quiescence_cost(TD_TOPO_TORUS, 16, 5, &msgs, &iters);
    plan_of(TD_TOPO_TORUS, 16, 0, 0, &kappa, &cdiam, &lag, &pv);
    tap_ok(okq && iters <= (uint64_t)pv + 1,
           "4x4 torus: detected %llu iterations after quiescence (PV %d), %llu messages", (unsigned long long)iters, pv,
           (unsigned long long)msgs);
    /* TDSHIM_CONFIRM: no root waves for a symmetric algorithm; the idle
     * window grows by D~ + 1 iterations instead (xl_init) */
    uint64_t msgs_c, iters_c;
    qc_confirm = 1;
    int okc = quiescence_cost(TD_TOPO_TORUS, 16, 5, &msgs_c, &iters_c);
    qc_confirm = 0;
    tap_ok(okc && iters_c == iters + (uint64_t)cdiam + 1,
           "4x4 torus with confirmation: detected %llu iterations after quiescence (D~ + 1 = %d later), %llu messages",
           (unsigned long long)iters_c, cdiam + 1, (unsigned long long)msgs_c);
    return tap_done();
}
