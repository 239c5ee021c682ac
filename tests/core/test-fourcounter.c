/*
 * fourcounter (papers/cda-credit-hpc.txt §III-B) driven by a tiny
 * synchronous driver: control messages FIFO, primaries held in transit
 * until the test delivers them. Checks the wave structure and message
 * counts, in-transit messages and busy ranks, the orphan message that fools
 * a single wave with S = R (fourcounter-onewave), episodes, dormancy and
 * rejection of unexpected messages. Randomized adversarial schedules are
 * the simulator's job (tests/sim).
 */
#include "tap.h"
#include "td_algo.h"

#include <stdlib.h>
#include <string.h>

#define MAXR 16
#define MAXQ 4096
typedef struct { int src, dst; uint8_t w[TD_WIRE_SIZE]; } pkt;
static struct world {
    int n;
    td_ctx c[MAXR];
    int rank_of[MAXR];
    uint32_t announced[MAXR];
    int nann[MAXR];
    pkt q[MAXQ];
    int head, tail;
    int errors;
} W;

static void io_send(void *u, int dest, const uint8_t *w)
{
    pkt *p = &W.q[W.tail++ % MAXQ];
    p->src = *(int *)u;
    p->dst = dest;
    memcpy(p->w, w, TD_WIRE_SIZE);
}
static void io_announce(void *u, uint32_t ep)
{
    int r = *(int *)u;
    W.announced[r] = ep;
    W.nann[r]++;
}
static void world_init(int n, const char *algo)
{
    memset(&W, 0, sizeof W);
    W.n = n;
    const td_algo *a = td_algo_find(algo);
    if (!a)
        abort();
    for (int r = 0; r < n; r++) {
        td_cfg cfg;
        td_cfg_default(&cfg, r, n);
        W.rank_of[r] = r;
        td_io io = {.user = &W.rank_of[r], .send = io_send, .announce = io_announce};
        if (td_ctx_init(&W.c[r], a, &cfg, &io) != TD_OK)
            abort();
    }
}
static void world_fini(void)
{
    for (int r = 0; r < W.n; r++)
        td_ctx_fini(&W.c[r]);
}
/* deliver one control message (FIFO); 0 when none is queued */
static int step(void)
{
    if (W.head == W.tail)
        return 0;
    pkt p = W.q[W.head++ % MAXQ];
    if (td_control(&W.c[p.dst], p.src, p.w, TD_WIRE_SIZE) < 0)
        W.errors++;
    return 1;
}
/* While a primary is in transit every algorithm keeps waving (the system
 * is not quiescent): bound the work so such tests end. */
static int drain(void)
{
    int k = 0;
    while (k < 20000 && step())
        k++;
    return k;
}
/* deliver until rank 0 learned episode ep; the counts then cover exactly
 * the detection (afterwards the next episode's waves start) */
static void until_announced(uint32_t ep)
{
    while (W.nann[0] < (int)ep && step())
        ;
}
static int all_announced(uint32_t ep)
{
    for (int r = 0; r < W.n; r++)
        if (W.announced[r] != ep || W.nann[r] != (int)ep)
            return 0;
    return 1;
}
/* a primary message in transit: counted at the sender, not yet received */
static void psend(int s, int d)
{
    if (td_primary_send(&W.c[s], d, NULL) != TD_OK)
        abort();
}
static void precv(int d, int s) { td_primary_recv(&W.c[d], s, NULL); }
static void all_passive(void)
{
    for (int r = W.n - 1; r >= 0; r--)
        td_passive(&W.c[r]);
}
static uint64_t sent_total(int algo_type)
{
    uint64_t n = 0;
    for (int r = 0; r < W.n; r++)
        n += W.c[r].stats.ctl_sent[1][algo_type];
    return n;
}

enum { STOP = 0, REPEAT = 1 };

/* Tree 0 -> {1, 2}. Rank 1 sends STOP {0, 0}; busy rank 2 sends x to rank
 * 1 (counted sent, received after rank 1's report: in transit for the
 * wave); rank 1 answers y to rank 2 (sent after its report, received before
 * rank 2's: an orphan) and stays busy. sigma_s = sigma_r = 1 in this wave.
 * Returns 1 if termination was announced while rank 1 was busy. */
static int orphan(const char *algo)
{
    world_init(3, algo);
    td_passive(&W.c[1]);
    psend(2, 1);
    precv(1, 2);
    psend(1, 2);
    precv(2, 1);
    td_passive(&W.c[2]);
    drain();
    td_passive(&W.c[0]);
    drain();
    int bad = W.nann[0] > 0 && W.c[1].active;
    world_fini();
    return bad;
}

int main(void)
{
    tap_plan(12);
    tap_ok(td_algo_find("fourcounter") && td_algo_find("fourcounter-onewave"),
           "registry has fourcounter and fourcounter-onewave");

    world_init(1, "fourcounter");
    td_passive(&W.c[0]);
    tap_ok(W.nann[0] == 1 && W.c[0].stats.waves == 2, "a single rank announces at its first poll, after two waves (%llu)",
           (unsigned long long)W.c[0].stats.waves);
    world_fini();

    world_init(7, "fourcounter");
    all_passive();
    until_announced(1);
    uint64_t stop_n = sent_total(STOP), repeat_n = sent_total(REPEAT);
    drain();
    tap_ok(all_announced(1) && W.errors == 0, "7 ranks: every rank learns episode 1 exactly once");
    tap_ok(stop_n == 12 && repeat_n == 6, "two waves with equal totals: stop %llu (12), repeat %llu (6)",
           (unsigned long long)stop_n, (unsigned long long)repeat_n);
    psend(3, 5);
    td_passive(&W.c[3]);
    drain();
    td_passive(&W.c[0]);
    drain();
    tap_ok(W.nann[0] == 1, "no announcement while a primary is in transit");
    precv(5, 3);
    drain();
    tap_ok(W.nann[0] == 1, "no announcement while its receiver is busy");
    td_passive(&W.c[5]);
    drain();
    tap_ok(all_announced(2) && W.errors == 0, "episode 2 announced once the receiver is passive");
    all_passive();
    drain();
    tap_ok(all_announced(2) && W.c[0].dormant, "quiescence without new activity leaves the root dormant");
    td_activity(&W.c[2]);
    td_passive(&W.c[2]);
    drain();
    tap_ok(all_announced(3) && W.errors == 0, "activity wakes the dormant root and episode 3 is announced");
    world_fini();

    tap_ok(!orphan("fourcounter"), "an orphan message does not fool two waves");
    tap_ok(orphan("fourcounter-onewave"), "an orphan message fools one wave with S = R (fourcounter-onewave caught)");

    world_init(3, "fourcounter");
    td_msg m = {.algo = 3, .type = REPEAT, .seq = 5};
    uint8_t w[TD_WIRE_SIZE];
    td_wire_encode(&m, w);
    int rc = td_control(&W.c[1], 2, w, sizeof w);
    tap_ok(rc == TD_EPROTO && strstr(W.c[1].errmsg, "fourcounter:"), "repeat from a non-parent is a protocol error: %s",
           W.c[1].errmsg);
    world_fini();
    return tap_done();
}
