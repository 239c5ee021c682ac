/*
 * EDOD (papers/cda-credit-hpc.txt §III-C) driven by a small randomized
 * driver: primaries are delivered in random order with long delays, control
 * messages in random order too (no FIFO), ranks work, send and poll at
 * random, and an oracle checks every announcement against the ground truth
 * (all ranks passive, no primary in transit). The broken variant edod-unacked must be caught. Also checks the
 * per-step message count of the paper's token ring (Theorem 1's model).
 *
 * Usage: test-edod                 TAP tests
 *        test-edod ring P q runs     token-ring measurement (bench/RESULTS.md)
 *        test-edod trace SEED        replay one random execution, verbosely
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
}

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
            printf("  deliver %s %d->%d seq %llu a %lld b %lld fl %u ep %u\n",
                   m.algo ? td_algo_find("edod")->type_names[m.type] : "engine", p.src, p.dst,
                   (unsigned long long)m.seq, (long long)m.a, (long long)m.b, m.flags, m.episode);
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

static void drain_control(void)
{
    for (size_t i = 0; i < W.nq;)
        if (W.q[i].primary)
            i++;
        else
            deliver(i);
}

/* The paper's token ring (§V-A): steps are synchronous (all control
 * messages are processed before the next step). Returns the control
 * messages up to detection (those of Theorem 1: algorithm messages before
 * the announcement plus the P-1 terminate broadcast); *all adds what
 * follows it (every rank reports afresh for episode 2, then the root goes
 * dormant), which Theorem 1 does not count. */
static uint64_t token_ring(int n, double q, unsigned long long seed, int *steps, uint64_t *all)
{
    world_init(n, "edod", 0, seed);
    for (int r = 1; r < n; r++) {
        W.active[r] = 0;
        td_passive(&W.c[r]);
    }
    int owner = 0;
    *steps = 0;
    for (;;) {
        while (W.nq)
            deliver(0);
        if (rnd(1u << 30) < (unsigned)(q * (1u << 30)))
            break;
        int d = (int)rnd((unsigned)n);
        send_primary(owner, d);
        W.active[owner] = 0;
        td_passive(&W.c[owner]);
        drain_control();
        for (size_t i = 0; i < W.nq; i++)
            if (W.q[i].primary) {
                deliver(i);
                break;
            }
        ++*steps;
        owner = d;
    }
    W.active[owner] = 0;
    td_passive(&W.c[owner]);
    while (W.nq)
        deliver(0);
    uint64_t total = 0;
    for (int r = 0; r < n; r++) {
        if (W.learned[r] != 1)
            total = UINT64_MAX / 2; /* not detected: make it obvious */
        for (int e = 0; e < 2; e++)
            for (int t = 0; t < TD_MAX_TYPES; t++)
                total += W.c[r].stats.ctl_sent[e][t];
    }
    if (W.unsafe || errors())
        total = UINT64_MAX / 2;
    *all = total;
    total = W.learned[0] == 1 ? W.at_first + (uint64_t)(n - 1) : UINT64_MAX / 2;
    world_fini();
    return total;
}

static int bench(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    int n = atoi(argv[2]), runs = atoi(argv[4]);
    double q = atof(argv[3]);
    double sum = 0, sumall = 0, sumsteps = 0;
    for (int i = 0; i < runs; i++) {
        int steps;
        uint64_t all;
        sum += (double)token_ring(n, q, (unsigned long long)i + 1, &steps, &all);
        sumall += (double)all;
        sumsteps += steps;
    }
    double lg = log2((double)n);
    printf("P=%d q=%g runs=%d mean_steps=%.2f mean_ctl_to_detection=%.1f theorem1=%.1f per_step=%.2f 3log2P=%.2f "
           "mean_ctl_with_after=%.1f\n",
           n, q, runs, sumsteps / runs, sum / runs, 3 * lg / q + 2 * n, (sum / runs - 2 * (n - 1)) / (sumsteps / runs),
           3 * lg, sumall / runs);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "trace")) {
        int u;
        trace = 1;
        unsigned long long sd = strtoull(argv[2], NULL, 10);
        return !run_random("edod", 2 + (int)(sd % 14), 3, 4, sd, &u);
    }
    if (argc > 1 && !strcmp(argv[1], "ring"))
        return bench(argc, argv);

    tap_plan(12);
    tap_ok(td_algo_find("edod") && td_algo_find("edod")->id == 7 && td_algo_find("edod")->pb_size == 4,
           "edod is registered with wire id 7 and a 4-byte piggyback");

    /* one rank: nothing to acknowledge, announces at its first poll */
    world_init(1, "edod", 0, 1);
    W.active[0] = 0;
    td_passive(&W.c[0]);
    tap_ok(W.learned[0] == 1, "a single rank announces at its first poll");
    world_fini();

    /* the sender cannot stop while its primary is unacknowledged */
    world_init(3, "edod", 0, 1);
    W.active[1] = W.active[2] = 0;
    td_passive(&W.c[1]);
    td_passive(&W.c[2]);
    while (W.nq)
        deliver(0);
    send_primary(0, 2);
    W.active[0] = 0;
    td_passive(&W.c[0]);
    tap_ok(W.learned[0] == 0 && W.nq == 1 && W.q[0].primary,
           "root with an unacknowledged primary does not announce, and sends nothing");
    deliver(0); /* rank 2 is stopped: RESUME goes up, root answers ACK down */
    uint64_t resumes = W.c[2].stats.ctl_sent[1][1];
    while (W.nq)
        deliver(0);
    tap_ok(resumes == 0 && W.learned[0] == 0, "stopped receiver defers its RESUME while active");
    W.active[2] = 0;
    td_passive(&W.c[2]);
    while (W.nq)
        deliver(0);
    tap_ok(W.c[2].stats.ctl_sent[1][1] == 1 && W.c[0].stats.ctl_sent[1][3] == 1 &&
               W.c[2].stats.ctl_sent[1][0] == 1 && W.learned[0] == 1 && W.learned[1] == 1 && W.learned[2] == 1,
           "resume up, ack-down, ack to the sender, then every rank learns episode 1");
    td_passive(&W.c[0]);
    td_passive(&W.c[1]);
    while (W.nq)
        deliver(0);
    tap_ok(W.learned[0] == 1 && W.c[0].dormant, "a clean second quiescence leaves the root dormant");
    size_t before = W.c[0].stats.ctl_sent[1][2] + W.c[1].stats.ctl_sent[1][2];
    td_passive(&W.c[0]);
    tap_ok(W.nq == 0 && W.c[1].stats.ctl_sent[1][2] + W.c[0].stats.ctl_sent[1][2] == before,
           "a dormant job exchanges no control messages");
    /* a phase whose work stays on rank 1 (no message): still notified */
    W.active[1] = 1;
    td_activity(&W.c[1]);
    W.active[1] = 0;
    td_passive(&W.c[1]);
    while (W.nq)
        deliver(0);
    tap_ok(W.learned[0] == 2 && W.learned[1] == 2 && W.learned[2] == 2,
           "activity without messages after a clean quiescence: the root polls and announces episode 2");
    world_fini();

    int okall = 1, seeds = 0, unsafe = 0;
    for (unsigned long long s = 1; s <= 3000 && okall; s++, seeds++) {
        okall &= run_random("edod", 2 + (int)(s % 14), 3, 4, s, &unsafe);
        okall &= !unsafe;
        if (!okall)
            tap_diag("unsafe %d", unsafe);
        if (!okall)
            tap_diag("failing seed %llu, %d ranks", s, 2 + (int)(s % 14));
    }
    tap_ok(okall, "edod: %d random executions (non-FIFO, delayed primaries, 3 phases) safe and live", seeds);

    int caught = 0;
    for (unsigned long long s = 1; s <= 300 && !caught; s++) {
        run_random("edod-unacked", 2 + (int)(s % 14), 3, 4, s, &unsafe);
        caught = unsafe > 0;
    }
    tap_ok(caught, "edod-unacked (stops with unacknowledged sends) is caught announcing unsafely");

    int steps;
    uint64_t all;
    uint64_t m = token_ring(16, 0.1, 7, &steps, &all);
    tap_ok(m < UINT64_MAX / 2 && m >= (uint64_t)(2 * 15), "token ring P=16: detected, %llu control messages, %d steps",
           (unsigned long long)m, steps);
    /* per step: at most resume+ack-down over the tree path, 1 ack and the
     * sender's STOPs up to the root: bounded by 3*depth+1 */
    int depth = td_tree_depth(256, 2), tsteps = 0;
    double tm = 0;
    for (int i = 1; i <= 20; i++) {
        m = token_ring(256, 0.05, (unsigned long long)i, &steps, &all);
        tm += (double)m - 2.0 * 255;
        tsteps += steps;
    }
    double per = tm / (tsteps ? tsteps : 1);
    tap_ok(tm < 1e15 && per <= 3.0 * depth + 1, "token ring P=256: %.2f control messages per step (3*depth+1 = %d)",
           per, 3 * depth + 1);
    return tap_done();
}
