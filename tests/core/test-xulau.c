/*
 * Xu-Lau (papers/xu-lau-edge-coloring.txt §3-4) with the count confirmation
 * of xulau.c: overlay plans (colours, colour diameter, PredefinedValue) for
 * each topology, symmetric detection (every rank in the same iteration),
 * dormancy after a clean or announced quiescence, and random executions
 * with long primary delays and non-FIFO control messages checked by an
 * oracle; the paper's rule alone
 * (xulau-paper) must be caught announcing while a primary is in transit.
 *
 * Usage: test-xulau                          TAP tests
 *        test-xulau stats TOPO P runs         control messages / iterations
 *                                             to detection (bench/RESULTS.md)
 *        test-xulau trace SEED                replay one random execution
 */
#include "tap.h"
#include "td_algo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int src, dst, primary; uint8_t w[TD_WIRE_SIZE]; } pkt;

static struct world {
    int n, gate;
    td_ctx *c;
    int *id;
    uint8_t *active;     /* driver's truth: the program is working */
    uint32_t *learned;   /* episodes announced to each rank */
    int *budget;         /* primaries the rank may still send in this phase */
    uint8_t *notify_due; /* learned an episode, program not yet notified */
    pkt *q;
    size_t nq, capq;
    int inflight;        /* primaries in transit */
    int unsafe;          /* announcements the oracle rejected */
    uint32_t maxep;      /* greatest episode announced so far */
    uint64_t at_first;   /* algorithm messages sent when episode 1 was announced */
    uint64_t iter_at[9]; /* iteration at which episode e was announced */
    int asym;            /* ranks that announced at another iteration */
    unsigned long long rng;
} W;

static int trace;

static unsigned rnd(unsigned n)
{
    W.rng = W.rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((W.rng >> 33) % n);
}

static void push(int src, int dst, int primary, const uint8_t *w, size_t len)
{
    if (W.nq == W.capq) {
        W.capq = W.capq ? 2 * W.capq : 256;
        W.q = realloc(W.q, W.capq * sizeof *W.q);
        if (!W.q)
            abort();
    }
    pkt *p = &W.q[W.nq++];
    p->src = src;
    p->dst = dst;
    p->primary = primary;
    memset(p->w, 0, sizeof p->w);
    memcpy(p->w, w, len);
}

static void io_send(void *u, int dest, const uint8_t *w) { push(*(int *)u, dest, 0, w, TD_WIRE_SIZE); }

static void io_announce(void *u, uint32_t ep)
{
    int r = *(int *)u;
    /* the first rank to learn episode ep must see the ground truth
     * quiescent; later ranks learn it while others already work on */
    if (trace)
        printf("  ANNOUNCE %u at %d\n", ep, r);
    if (ep > W.maxep) {
        int bad = W.inflight != 0;
        for (int i = 0; i < W.n; i++)
            bad |= W.active[i];
        W.unsafe += bad;
        W.maxep = ep;
        if (ep == 1)
            for (int i = 0; i < W.n; i++)
                for (int t = 0; t < TD_MAX_TYPES; t++)
                    W.at_first += W.c[i].stats.ctl_sent[1][t];
    }
    W.learned[r] = ep;
    W.notify_due[r] = 1;
    if (ep <= 8) {
        if (!W.iter_at[ep])
            W.iter_at[ep] = W.c[r].stats.waves;
        else if (W.iter_at[ep] != W.c[r].stats.waves)
            W.asym++;
    }
}

static int topo, dims[3];
static void world_init(int n, const char *algo, int gate, unsigned long long seed)
{
    free(W.q);
    memset(&W, 0, sizeof W);
    W.n = n;
    W.gate = gate;
    W.rng = seed * 2654435761ULL + 1;
    W.c = calloc((size_t)n, sizeof *W.c);
    W.id = calloc((size_t)n, sizeof *W.id);
    W.active = calloc((size_t)n, 1);
    W.learned = calloc((size_t)n, sizeof *W.learned);
    W.budget = calloc((size_t)n, sizeof *W.budget);
    W.notify_due = calloc((size_t)n, 1);
    for (int r = 0; r < n; r++) {
        td_cfg cfg;
        td_cfg_default(&cfg, r, n);
        cfg.gate_on_notify = gate;
        cfg.xulau_topo = topo;
        memcpy(cfg.xulau_dims, dims, sizeof dims);
        W.id[r] = r;
        W.active[r] = 1;
        td_io io = {.user = &W.id[r], .send = io_send, .announce = io_announce};
        if (td_ctx_init(&W.c[r], td_algo_find(algo), &cfg, &io) != TD_OK)
            abort();
    }
}

static void world_fini(void)
{
    for (int r = 0; r < W.n; r++)
        td_ctx_fini(&W.c[r]);
    free(W.c);
    free(W.id);
    free(W.active);
    free(W.learned);
    free(W.budget);
    free(W.notify_due);
    free(W.q);
    W.q = NULL;
}

static int errors(void)
{
    int e = 0;
    for (int r = 0; r < W.n; r++)
        if (W.c[r].error) {
            if (!e)
                tap_diag("rank %d: %s", r, W.c[r].errmsg);
            e++;
        }
    return e;
}

static void send_primary(int s, int d)
{
    uint8_t pb[TD_PB_MAX] = {0};
    if (td_primary_send(&W.c[s], d, pb) != TD_OK)
        abort();
    push(s, d, 1, pb, TD_PB_MAX);
    W.inflight++;
}

static void deliver(size_t i)
{
    pkt p = W.q[i];
    if (trace) {
        td_msg m;
        if (p.primary)
            printf("  deliver primary %d->%d\n", p.src, p.dst);
        else if (td_wire_decode(p.w, TD_WIRE_SIZE, &m, NULL, 0) == TD_OK)
            printf("  deliver %s %d->%d seq %llu a %lld b %lld fl %u ep %u\n", m.algo ? "exchange" : "engine", p.src,
                   p.dst, (unsigned long long)m.seq, (long long)m.a, (long long)m.b, m.flags, m.episode);
    }
    memmove(&W.q[i], &W.q[i + 1], (W.nq - i - 1) * sizeof p);
    W.nq--;
    if (p.primary) {
        W.inflight--;
        W.active[p.dst] = 1;
        td_primary_recv(&W.c[p.dst], p.src, p.w);
    } else {
        td_control(&W.c[p.dst], p.src, p.w, TD_WIRE_SIZE);
    }
}

/* One random event. Primaries are delayed: picked with low probability. */
static void step(void)
{
    int r = (int)rnd((unsigned)W.n);
    if (W.notify_due[r] && rnd(2)) {
        /* the program handles "done": next phase starts here */
        W.notify_due[r] = 0;
        W.active[r] = 1;
        td_notified(&W.c[r]);
        td_activity(&W.c[r]); /* the next phase starts with a collective */
        return;
    }
    if (W.active[r] && rnd(3)) {
        if (W.budget[r] > 0 && rnd(2)) {
            W.budget[r]--;
            int d = (int)rnd((unsigned)W.n);
            if (trace)
                printf("  send primary %d->%d\n", r, d);
            send_primary(r, d);
        } else {
            W.active[r] = 0;
            if (trace)
                printf("  passive %d\n", r);
            td_passive(&W.c[r]);
        }
        return;
    }
    if (!W.active[r] && rnd(4) == 0) {
        td_passive(&W.c[r]); /* polls again */
        return;
    }
    if (W.nq) {
        size_t i = rnd((unsigned)W.nq);
        if (W.q[i].primary && rnd(8))
            return; /* long delays for primaries */
        deliver(i); /* control messages too in any order: no FIFO needed */
    }
}

/* Runs a random execution of `phases` phases; returns 1 if every rank
 * learned every phase, with no protocol error; *unsafe counts the
 * announcements the oracle rejected. */
static int run_random(const char *algo, int n, int phases, int per_rank, unsigned long long seed, int *unsafe)
{
    world_init(n, algo, 1, seed);
    for (int r = 0; r < n; r++)
        W.budget[r] = per_rank;
    int ok = 1;
    for (long it = 0; it < 2000000; it++) {
        int done = 1;
        for (int r = 0; r < n; r++)
            done &= W.learned[r] >= (uint32_t)phases;
        if (done || errors())
            break;
        /* a new phase starts when a rank is notified: refill its budget */
        for (int r = 0; r < n; r++)
            if (W.notify_due[r] && W.learned[r] < (uint32_t)phases)
                W.budget[r] = per_rank;
        step();
    }
    for (int r = 0; r < n; r++)
        ok &= W.learned[r] >= (uint32_t)phases;
    ok &= !errors();
    if (!ok)
        for (int r = 0; r < n; r++)
            tap_diag("rank %d learned %u active %d/%d ready %d dormant %d budget %d notify %d nq %zu inflight %d", r,
                     W.learned[r], W.active[r], W.c[r].active, W.c[r].ready, W.c[r].dormant, W.budget[r],
                     W.notify_due[r], W.nq, W.inflight);
    *unsafe = W.unsafe;
    world_fini();
    return ok;
}


int td_xulau_plan(const td_cfg *cfg, int *kappa, int *cdiam, int *lag, int *pv);

static int plan_of(int t, int P, int d0, int d1, int *kappa, int *cdiam, int *lag, int *pv)
{
    td_cfg cfg;
    td_cfg_default(&cfg, 0, P);
    cfg.xulau_topo = t;
    cfg.xulau_dims[0] = d0;
    cfg.xulau_dims[1] = d1;
    return td_xulau_plan(&cfg, kappa, cdiam, lag, pv);
}

static uint64_t ctl_total(void)
{
    uint64_t k = 0;
    for (int r = 0; r < W.n; r++)
        k += W.c[r].stats.ctl_sent[1][0];
    return k;
}

/* One phase of random work with delayed primaries, then measure the
 * control messages and iterations from quiescence to detection. */
static int quiescence_cost(int t, int P, unsigned long long seed, uint64_t *msgs, uint64_t *iters)
{
    topo = t;
    world_init(P, "xulau", 0, seed);
    for (int r = 0; r < P; r++)
        W.budget[r] = 3;
    for (long it = 0; it < 20000000; it++) {
        int quiet = !W.inflight;
        for (int r = 0; r < P; r++)
            quiet &= !W.active[r];
        if (quiet || errors())
            break;
        step();
    }
    uint64_t m0 = ctl_total(), i0 = W.c[0].stats.waves;
    /* quiescent: only control messages remain; every rank polls */
    for (long it = 0; it < 20000000 && !W.learned[0] && !errors(); it++) {
        if (W.nq)
            deliver(rnd((unsigned)W.nq));
        else
            for (int r = 0; r < P; r++)
                td_passive(&W.c[r]);
    }
    *msgs = ctl_total() - m0;
    *iters = W.c[0].stats.waves - i0;
    int ok = W.learned[0] == 1 && !W.unsafe && !W.asym && !errors();
    world_fini();
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
        trace = 1;
        unsigned long long sd = strtoull(argv[2], NULL, 10);
        topo = (int)(sd % 4);
        return !run_random("xulau", 2 + (int)(sd % 15), 3, 4, sd, &u);
    }
    if (argc > 1 && !strcmp(argv[1], "stats"))
        return stats(argc, argv);

    tap_plan(17);
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

    /* one rank: detects alone; then dormant */
    topo = TD_TOPO_RING;
    world_init(1, "xulau", 0, 1);
    W.active[0] = 0;
    td_passive(&W.c[0]);
    tap_ok(W.learned[0] == 1, "a single rank announces at its first poll");
    world_fini();

    /* 8 ranks, mesh: announce once, then polling is silent */
    topo = TD_TOPO_MESH;
    world_init(8, "xulau", 0, 1);
    for (int r = 0; r < 8; r++) {
        W.active[r] = 0;
        td_passive(&W.c[r]);
    }
    while (W.nq)
        deliver(0);
    int all1 = 1;
    for (int r = 0; r < 8; r++)
        all1 &= W.learned[r] == 1;
    tap_ok(all1 && !W.asym && !W.unsafe, "8 ranks: every rank announces episode 1 in the same iteration (%llu)",
           (unsigned long long)W.iter_at[1]);
    uint64_t before = ctl_total();
    for (int k = 0; k < 5; k++)
        for (int r = 0; r < 8; r++)
            td_passive(&W.c[r]);
    tap_ok(W.nq == 0 && ctl_total() == before, "after the announcement, polling exchanges nothing");
    /* rank 5 works alone (a collective, no message): one wake-up flood,
     * episode 2 announced everywhere in one iteration */
    W.active[5] = 1;
    td_activity(&W.c[5]);
    W.active[5] = 0;
    td_passive(&W.c[5]);
    while (W.nq)
        deliver(rnd((unsigned)W.nq));
    int all2 = 1;
    for (int r = 0; r < 8; r++)
        all2 &= W.learned[r] == 2;
    tap_ok(all2 && !W.asym, "activity on one rank wakes the others: episode 2 announced by all in one iteration");
    world_fini();

    int okall = 1, seeds = 0, unsafe = 0;
    for (unsigned long long s = 1; s <= 2000 && okall; s++, seeds++) {
        topo = (int)(s % 4);
        okall &= run_random("xulau", 2 + (int)(s % 15), 3, 4, s, &unsafe);
        okall &= !unsafe && !W.asym;
        if (!okall)
            tap_diag("failing seed %llu, topology %s, %d ranks, unsafe %d", s, topo_names[topo], 2 + (int)(s % 15),
                     unsafe);
    }
    tap_ok(okall, "xulau: %d random executions over 4 topologies (non-FIFO, delayed primaries, 3 phases) safe and live", seeds);

    int caught = 0;
    for (unsigned long long s = 1; s <= 240 && !caught; s++) {
        topo = (int)(s % 4);
        run_random("xulau-paper", 2 + (int)(s % 15), 3, 4, s, &unsafe);
        caught = unsafe > 0;
    }
    tap_ok(caught, "xulau-paper (no count confirmation) is caught announcing with a primary in transit");

    uint64_t msgs, iters;
    int okq = quiescence_cost(TD_TOPO_TORUS, 16, 5, &msgs, &iters);
    plan_of(TD_TOPO_TORUS, 16, 0, 0, &kappa, &cdiam, &lag, &pv);
    tap_ok(okq && iters <= (uint64_t)pv + 1,
           "4x4 torus: detected %llu iterations after quiescence (PV %d), %llu messages", (unsigned long long)iters, pv,
           (unsigned long long)msgs);
    return tap_done();
}
