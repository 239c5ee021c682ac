/*
 * termdetect (papers/sandia-termdetect-guide.txt, Algorithm 2) driven by a
 * tiny synchronous driver: control messages FIFO, primaries held in transit
 * until the test delivers them. Checks iterations and message counts, a
 * message in transit through two iterations (which fools Algorithm 2 read
 * literally: termdetect-workonly), declared work, the node states the
 * termdetect API reports, episodes and rejection of unexpected messages.
 */
#include "tap.h"
#include "td_algo.h"

#include <stdlib.h>
#include <string.h>

/* exported by termdetect.c for the termdetect API driver */
int td_termdetect_add_work(td_ctx *c, int64_t n);
int td_termdetect_state(const td_ctx *c);

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

enum { UPMSG = 0, REQUEST = 1 };
enum { S_UP = 0, S_DOWN = 1, S_TERMINATE = 2 };

/* rank 1 sends m to rank 3 and m stays in transit while every rank polls:
 * returns 1 if termination was announced with m in transit */
static int in_transit(const char *algo)
{
    world_init(4, algo);
    psend(1, 3);
    for (int i = 0; i < 4; i++) {
        all_passive();
        drain();
    }
    int bad = W.nann[0] > 0;
    world_fini();
    return bad;
}

int main(void)
{
    tap_plan(12);
    tap_ok(td_algo_find("termdetect") && td_algo_find("termdetect-workonly"),
           "registry has termdetect and termdetect-workonly");

    world_init(1, "termdetect");
    tap_ok(td_termdetect_state(&W.c[0]) == S_UP, "a node starts UP");
    td_passive(&W.c[0]);
    tap_ok(W.nann[0] == 1 && td_termdetect_state(&W.c[0]) == S_TERMINATE, "a single rank terminates at its first poll");
    world_fini();

    world_init(7, "termdetect");
    for (int r = 6; r >= 1; r--)
        td_passive(&W.c[r]);
    tap_ok(td_termdetect_state(&W.c[6]) == S_DOWN && td_termdetect_state(&W.c[1]) == S_UP,
           "a leaf that sent its counts is DOWN, an internal node waiting for a child is UP");
    td_passive(&W.c[0]);
    until_announced(1);
    uint64_t up_n = sent_total(UPMSG), req_n = sent_total(REQUEST);
    drain();
    tap_ok(all_announced(1) && W.errors == 0, "7 ranks: every rank learns the termination exactly once");
    tap_ok(up_n == 12 && req_n == 6, "two iterations with equal work: up %llu (12), request %llu (6)",
           (unsigned long long)up_n, (unsigned long long)req_n);
    tap_ok(td_termdetect_state(&W.c[4]) == S_TERMINATE, "every node ends in TERMINATE");
    world_fini();

    /* declared work between two iterations forces a third */
    world_init(3, "termdetect");
    td_passive(&W.c[1]);
    td_passive(&W.c[2]);
    td_passive(&W.c[0]);   /* iteration 1 done: request for iteration 2 */
    step();                /* request reaches rank 1 only */
    td_activity(&W.c[2]);
    tap_ok(td_termdetect_add_work(&W.c[2], 5) == TD_OK && td_termdetect_add_work(&W.c[2], -1) == TD_EINVAL,
           "work units are declared through td_termdetect_add_work");
    td_passive(&W.c[2]);
    drain();
    tap_ok(W.nann[0] == 1 && W.c[0].stats.waves == 3, "work performed during an iteration costs one more (%llu iterations)",
           (unsigned long long)W.c[0].stats.waves);
    world_fini();

    tap_ok(!in_transit("termdetect"), "a message in transit through several iterations is not missed");
    tap_ok(in_transit("termdetect-workonly"), "comparing only work counts misses it (termdetect-workonly caught)");

    world_init(3, "termdetect");
    td_msg m = {.algo = 4, .type = UPMSG, .seq = 1};
    uint8_t w[TD_WIRE_SIZE];
    td_wire_encode(&m, w);
    int rc = td_control(&W.c[2], 1, w, sizeof w);
    tap_ok(rc == TD_EPROTO && strstr(W.c[2].errmsg, "termdetect:"), "counts from a non-child are a protocol error: %s",
           W.c[2].errmsg);
    world_fini();
    return tap_done();
}
