/*
 * CDA (papers/cda-credit-hpc.txt §IV) driven by a small synchronous driver:
 * initial credit, split, FLUSH on idle, prefetch and forced BORROW with
 * deferred sends, overflow return, episodes (fresh credit, next-episode
 * credit arriving before TERM, dormancy and the wake round), validation of
 * control messages, and a randomized schedule with an oracle that the
 * broken variants must fail. The simulator tests (tests/sim) run the
 * adversarial schedules; this file pins the protocol down.
 *
 * The driver part (up to CREDIT_DRIVER_ONLY) is shared with test-hcda.c.
 */
#include "tap.h"
#include "td_algo.h"

#include <stdlib.h>
#include <string.h>

#define MAXR 16
#define MAXP 65536
typedef struct {
    int src, dst, ctl, ttl;
    uint8_t w[TD_WIRE_SIZE];
    uint8_t pb[TD_PB_MAX];
} pkt;
typedef struct {
    int active;       /* the driver's truth: the rank has work or is in a collective */
    int nsend;        /* primaries the running task still has to send */
    int sdst[64], sttl[64];
} rstate;
static struct world {
    int n;
    td_ctx c[MAXR];
    int rank_of[MAXR];
    uint32_t announced[MAXR];
    int nann[MAXR];
    rstate r[MAXR];
    pkt *q;
    int nq;
    int unsafe;       /* root announced while the oracle saw work */
    uint64_t rng;
} W;

static uint64_t rnd(void)
{
    uint64_t z = (W.rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int below(int n) { return (int)(rnd() % (uint64_t)n); }

static int oracle_quiet(void)
{
    for (int r = 0; r < W.n; r++)
        if (W.r[r].active || W.r[r].nsend)
            return 0;
    for (int i = 0; i < W.nq; i++)
        if (!W.q[i].ctl)
            return 0;
    return 1;
}

static void io_send(void *u, int dest, const uint8_t *w)
{
    if (W.nq == MAXP)
        abort();
    pkt *p = &W.q[W.nq++];
    memset(p, 0, sizeof *p);
    p->src = *(int *)u;
    p->dst = dest;
    p->ctl = 1;
    memcpy(p->w, w, TD_WIRE_SIZE);
}
static void io_announce(void *u, uint32_t ep)
{
    int r = *(int *)u;
    if (r == 0 && !oracle_quiet())
        W.unsafe++;
    W.announced[r] = ep;
    W.nann[r]++;
}

static void world_init_cfg(int n, const td_algo *a, int gate, const td_cfg *base)
{
    free(W.q);
    memset(&W, 0, sizeof W);
    W.q = calloc(MAXP, sizeof *W.q);
    W.n = n;
    for (int r = 0; r < n; r++) {
        td_cfg cfg;
        if (base)
            cfg = *base;
        else
            td_cfg_default(&cfg, r, n);
        cfg.rank = r;
        cfg.size = n;
        cfg.gate_on_notify = gate;
        W.rank_of[r] = r;
        W.r[r].active = 1;
        td_io io = {.user = &W.rank_of[r], .send = io_send, .announce = io_announce};
        if (!a || td_ctx_init(&W.c[r], a, &cfg, &io) != TD_OK)
            abort();
    }
}
static void world_init(int n, const td_algo *a) { world_init_cfg(n, a, 0, NULL); }
static void world_fini(void)
{
    for (int r = 0; r < W.n; r++)
        td_ctx_fini(&W.c[r]);
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

/* take packet i out of the queue (order of the others kept: FIFO channels) */
static pkt take(int i)
{
    pkt p = W.q[i];
    memmove(&W.q[i], &W.q[i + 1], (size_t)(W.nq - i - 1) * sizeof p);
    W.nq--;
    return p;
}

static void deliver(int i)
{
    pkt p = take(i);
    if (p.ctl) {
        td_control(&W.c[p.dst], p.src, p.w, TD_WIRE_SIZE);
        return;
    }
    W.r[p.dst].active = 1;
    td_primary_recv(&W.c[p.dst], p.src, p.pb);
    /* the task the message carries: up to two more messages while ttl lasts */
    rstate *rs = &W.r[p.dst];
    if (p.ttl > 0)
        for (int k = below(3); k > 0 && rs->nsend < 64; k--) {
            rs->sdst[rs->nsend] = below(W.n);
            rs->sttl[rs->nsend++] = p.ttl - 1;
        }
}

/* deliver every control message (FIFO); returns how many */
static int drain_ctl(void)
{
    int k = 0;
    for (int i = 0; i < W.nq;)
        if (W.q[i].ctl) {
            deliver(i);
            k++;
            i = 0;
        } else {
            i++;
        }
    return k;
}

/* rank s tries to send one primary to d carrying ttl; TD_OK or TD_DEFER */
static int try_send(int s, int d, int ttl)
{
    uint8_t pb[TD_PB_MAX] = {0};
    int rc = td_primary_send(&W.c[s], d, pb);
    if (rc != TD_OK)
        return rc;
    if (W.nq == MAXP)
        abort();
    pkt *p = &W.q[W.nq++];
    memset(p, 0, sizeof *p);
    p->src = s;
    p->dst = d;
    p->ttl = ttl;
    memcpy(p->pb, pb, TD_PB_MAX);
    return TD_OK;
}
/* send and deliver at once (the receiver stays active) */
static int primary(int s, int d)
{
    int rc = try_send(s, d, 0);
    if (rc == TD_OK)
        deliver(W.nq - 1);
    return rc;
}
static void passive(int r)
{
    W.r[r].active = 0;
    td_passive(&W.c[r]);
}
static void all_passive(void)
{
    for (int r = W.n - 1; r >= 0; r--)
        passive(r);
}
static int all_announced(uint32_t ep)
{
    for (int r = 0; r < W.n; r++)
        if (W.announced[r] != ep || W.nann[r] != (int)ep)
            return 0;
    return 1;
}
static uint64_t ctl_sent(int r, int type) { return W.c[r].stats.ctl_sent[1][type]; }
static uint64_t ctl_total(void)
{
    uint64_t t = 0;
    for (int r = 0; r < W.n; r++)
        for (int e = 0; e < 2; e++)
            for (int k = 0; k < TD_MAX_TYPES; k++)
                t += W.c[r].stats.ctl_sent[e][k];
    return t;
}

/*
 * Randomized run: rank 0 starts a task tree (ttl), `phases` phases separated
 * by a collective (td_activity on every rank) once all learned the last
 * announcement. Control messages FIFO per channel, primaries in any order,
 * every interleaving drawn from the seed. Returns the number of phases
 * announced by every rank, or -1 on a protocol error.
 */
static int random_run(const td_algo *a, int n, int phases, int ttl, uint64_t seed, int gate, const td_cfg *base)
{
    world_init_cfg(n, a, gate, base);
    W.rng = seed;
    int phase = 0;
    for (int r = 0; r < n; r++)
        if (r != 0)
            W.r[r].active = below(2); /* some ranks start busy without work */
    W.r[0].nsend = 1;
    W.r[0].sdst[0] = below(n);
    W.r[0].sttl[0] = ttl;
    for (long step = 0; step < 2000000; step++) {
        if (errors())
            return -1;
        int busy = 0;
        for (int r = 0; r < n; r++)
            busy |= W.r[r].active || W.r[r].nsend;
        int done = 1;
        for (int r = 0; r < n; r++)
            done &= W.announced[r] == (uint32_t)(phase + 1);
        if (done && !busy && !W.nq) {
            if (++phase == phases)
                break;
            for (int r = 0; r < n; r++) {
                if (gate)
                    td_notified(&W.c[r]);
                W.r[r].active = 1;
                td_activity(&W.c[r]); /* the collective between phases */
            }
            int s = below(n);
            W.r[s].nsend = 1;
            W.r[s].sdst[0] = below(n);
            W.r[s].sttl[0] = ttl;
            continue;
        }
        int pick = below(4);
        if (pick < 2 && W.nq) {
            int i = below(W.nq);
            /* FIFO per control channel: deliver the oldest of i's channel */
            if (W.q[i].ctl)
                for (int j = 0; j < i; j++)
                    if (W.q[j].ctl && W.q[j].src == W.q[i].src && W.q[j].dst == W.q[i].dst) {
                        i = j;
                        break;
                    }
            deliver(i);
            continue;
        }
        int r = below(n);
        rstate *rs = &W.r[r];
        if (rs->nsend) {
            int k = rs->nsend - 1;
            if (try_send(r, rs->sdst[k], rs->sttl[k]) == TD_OK)
                rs->nsend--;
        } else if (rs->active || pick == 3) {
            passive(r);
        }
    }
    int ok = 1;
    for (int r = 0; r < n; r++)
        ok &= W.nann[r] == phase + (phase < phases);
    (void)ok;
    return errors() ? -1 : (int)W.announced[0];
}

#ifndef CREDIT_DRIVER_ONLY
extern const td_algo td_algo_cda_activeflush, td_algo_cda_dropoverflow;

static td_cfg small_cfg(int64_t init, int64_t con, int64_t wcon, int64_t borrow)
{
    td_cfg g;
    td_cfg_default(&g, 0, 1);
    g.cda_init = init;
    g.cda_con = con;
    g.cda_wcon = wcon;
    g.cda_borrow = borrow;
    return g;
}

int main(void)
{
    const td_algo *A = td_algo_find("cda");
    tap_plan(27);
    tap_ok(A && A->id == 6 && A->pb_size == 8, "registry finds cda (wire id 6, 8 piggyback bytes)");

    world_init(1, A);
    passive(0);
    tap_ok(W.nann[0] == 1, "a single rank announces at its first poll");
    passive(0);
    tap_ok(W.nann[0] == 1, "polling on after the announcement does not announce again");
    td_activity(&W.c[0]);
    passive(0);
    tap_ok(W.nann[0] == 2 && !errors(), "activity opens episode 2, announced at the next poll");
    world_fini();

    /* chain 0 -> 1 -> 2 -> 3, each stays active until told */
    world_init(4, A);
    for (int r = 1; r < 4; r++)
        passive(r);
    drain_ctl();
    tap_ok(W.c[0].stats.ctl_recv[1][0] == 3, "every idle rank flushes its initial credit once (%llu flushes)",
           (unsigned long long)W.c[0].stats.ctl_recv[1][0]);
    primary(0, 1);
    passive(0);
    primary(1, 2);
    passive(1);
    primary(2, 3);
    passive(2);
    drain_ctl();
    tap_ok(W.nann[0] == 0, "no announcement while rank 3 holds the credit of the chain");
    passive(3);
    drain_ctl();
    tap_ok(all_announced(1) && !errors(), "announced once rank 3 flushes: all ranks learn episode 1");
    tap_ok(ctl_sent(1, 1) == 0 && W.c[1].stats.deferred == 0, "C_init = 2^31: no borrow, no deferred send");
    world_fini();

    /* split: k-th emission of a step carries floor(C/(k+1)) */
    world_init(3, A);
    uint8_t pb[TD_PB_MAX];
    uint64_t w1, w2, w3;
    td_primary_send(&W.c[1], 2, pb);
    w1 = td_get32(pb + 4);
    td_primary_send(&W.c[1], 2, pb);
    w2 = td_get32(pb + 4);
    td_primary_send(&W.c[1], 2, pb);
    w3 = td_get32(pb + 4);
    uint64_t C = (uint64_t)1 << 31;
    tap_ok(w1 == C / 2 && w2 == (C - w1) / 3 && w3 == (C - w1 - w2) / 4,
           "online uniform split: %llu %llu %llu (the sender keeps C/4)", (unsigned long long)w1,
           (unsigned long long)w2, (unsigned long long)w3);
    world_fini();

    /* conservation regime and borrowing with tiny credit: C_init 8, C_con 4, W_con 1, C_borrow 3 */
    td_cfg g = small_cfg(8, 4, 1, 3);
    world_init_cfg(3, A, 0, &g);
    passive(2);
    drain_ctl();
    int deferred = 0, sent = 0;
    for (int i = 0; i < 20; i++) {
        int rc = primary(1, 2);
        if (rc == TD_DEFER) {
            deferred++;
            drain_ctl(); /* the driver keeps handling control messages, then retries */
        } else {
            sent++;
        }
    }
    tap_ok(sent >= 15 && W.c[1].stats.borrows >= 2 && deferred >= 1 && !errors(),
           "tiny credit: %d sends, %llu borrows (prefetch below C_borrow), %d deferred", sent,
           (unsigned long long)W.c[1].stats.borrows, deferred);
    tap_ok(W.c[1].stats.deferred == (uint64_t)deferred, "the engine counts deferred sends (%llu)",
           (unsigned long long)W.c[1].stats.deferred);
    passive(1);
    passive(2);
    passive(0);
    drain_ctl();
    tap_ok(all_announced(1) && !errors(), "borrowed credit comes back: episode 1 announced");
    world_fini();

    /* overflow: C_init = 2^32 - 1 = the local maximum; any credit received overflows */
    g = small_cfg(UINT32_MAX, 64, 16, 1 << 20);
    world_init_cfg(3, A, 0, &g);
    primary(1, 2);
    uint64_t of = ctl_sent(2, 0);
    passive(1);
    passive(2);
    passive(0);
    drain_ctl();
    tap_ok(of == 1 && all_announced(1) && !errors(), "overflow above 2^32-1 is returned at once (%llu flush) and counted",
           (unsigned long long)of);
    world_fini();
    g = small_cfg(UINT32_MAX, 64, 16, 1 << 20);
    world_init_cfg(3, &td_algo_cda_dropoverflow, 0, &g);
    primary(1, 2);
    all_passive();
    drain_ctl();
    all_passive();
    drain_ctl();
    tap_ok(W.nann[0] == 0, "broken cda-dropoverflow loses credit: never announces (liveness)");
    world_fini();

    /* episodes: next-episode credit arriving before TERM */
    world_init(7, A);
    for (int r = 6; r >= 0; r--)
        passive(r);
    /* deliver only what reaches rank 0 and rank 1: rank 5 has not learned episode 1 yet */
    for (int i = 0; i < W.nq;)
        if (W.q[i].dst == 0 || W.q[i].dst == 1)
            deliver(i), i = 0;
        else
            i++;
    tap_ok(W.announced[1] == 1 && W.announced[5] == 0, "rank 1 learned episode 1, rank 5 not yet");
    td_activity(&W.c[1]);
    W.r[1].active = 1;
    primary(1, 5);
    passive(1);
    passive(5);
    for (int i = 0; i < W.nq;)
        if (W.q[i].dst == 0 && W.q[i].ctl)
            deliver(i), i = 0;
        else
            i++;
    tap_ok(!errors() && W.nann[0] == 1 && W.announced[5] == 0,
           "next-episode credit at a rank still in episode 1 is kept: rank 0 waits for it");
    drain_ctl();
    tap_ok(all_announced(2) && !errors(), "episode 2 announced once rank 5 returns it after learning episode 1");
    world_fini();

    /* clean hold, COLLECT, and a send with no credit */
    world_init(5, A);
    all_passive();
    drain_ctl();
    tap_ok(all_announced(1), "5 ranks: episode 1 announced");
    uint64_t before = ctl_total();
    all_passive();
    drain_ctl();
    all_passive();
    tap_ok(drain_ctl() == 0 && ctl_total() == before && !W.c[0].dormant,
           "after the announcement an idle job sends nothing: clean ranks keep their fresh credit");
    /* phase 2 without a collective: rank 3 sends to 4; ranks 1, 2 stay clean;
     * rank 0 is busy (td_notified: active, not dirty) */
    W.r[0].active = 1;
    td_notified(&W.c[0]);
    W.r[3].active = 1;
    td_notified(&W.c[3]);
    primary(3, 4);
    passive(3);
    passive(4);
    drain_ctl();
    tap_ok(W.nann[0] == 1, "no announcement while the clean ranks 1, 2 still hold episode-2 credit");
    passive(0);
    drain_ctl();
    tap_ok(all_announced(2) && W.c[0].stats.waves == 1 && W.c[0].stats.ctl_sent[1][3] == 2,
           "rank 0 (passive, knows of activity) COLLECTs down the tree: episode 2 announced (%llu collects by rank 0)",
           (unsigned long long)W.c[0].stats.ctl_sent[1][3]);
    /* rank 2 flushes dirty, then a second collective makes it active with no
     * credit; rank 0 stays busy so the episode stays open */
    W.r[0].active = 1;
    td_notified(&W.c[0]);
    td_activity(&W.c[2]);
    W.r[2].active = 1;
    passive(2);
    drain_ctl();
    W.r[2].active = 1;
    td_activity(&W.c[2]);
    int rc = primary(2, 1);
    drain_ctl();
    if (rc == TD_DEFER)
        rc = primary(2, 1);
    tap_ok(rc == TD_OK && W.c[2].stats.borrows == 1 && W.c[2].stats.deferred == 1,
           "a rank with no credit defers and borrows");
    all_passive();
    drain_ctl();
    tap_ok(all_announced(3) && !errors(), "episode 3 announced after the borrowed credit came back");
    world_fini();

    /* validation */
    world_init(3, A);
    td_msg m = {.algo = 6, .type = 0, .a = (int64_t)1 << 40};
    uint8_t w[TD_WIRE_SIZE];
    td_wire_encode(&m, w);
    int bad = td_control(&W.c[0], 1, w, sizeof w) != TD_OK && strstr(W.c[0].errmsg, "flush");
    world_fini();
    world_init(3, A);
    m = (td_msg){.algo = 6, .type = 2, .a = (int64_t)1 << 31, .seq = 1};
    td_wire_encode(&m, w);
    bad = bad && td_control(&W.c[1], 0, w, sizeof w) != TD_OK && strstr(W.c[1].errmsg, "no borrow");
    tap_ok(bad, "more credit flushed than is out, and an unrequested grant, are errors: %s", W.c[1].errmsg);
    world_fini();

    /* randomized schedules with the oracle */
    int fails = 0, unsafe = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        int n = 2 + (int)(seed % 7);
        int got = random_run(A, n, 3, 6, seed, (int)(seed & 1), NULL);
        unsafe += W.unsafe;
        if (got != 3 && fails++ < 3)
            tap_diag("seed %llu: %d phases announced", (unsigned long long)seed, got);
        world_fini();
    }
    tap_ok(!fails && !unsafe, "300 random schedules, 3 phases: safe and live (%d failed, %d unsafe)", fails, unsafe);
    fails = unsafe = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        td_cfg t = small_cfg(4, 2, 1, 2);
        int got = random_run(A, 5, 2, 7, seed, (int)(seed & 1), &t);
        unsafe += W.unsafe;
        fails += got != 2;
        world_fini();
    }
    tap_ok(!fails && !unsafe, "200 schedules with C_init = 4 (constant borrowing): safe and live (%d, %d)", fails,
           unsafe);
    int caught = 0;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        int got = random_run(&td_algo_cda_activeflush, 5, 1, 6, seed, 0, NULL);
        caught += W.unsafe || got != 1;
        world_fini();
    }
    tap_ok(caught > 0, "broken cda-activeflush is caught (%d of 100 schedules)", caught);
    free(W.q);
    return tap_done();
}
#endif
