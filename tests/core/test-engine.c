/*
 * Engine and BCJ driven by a tiny synchronous driver (FIFO channels):
 * announcements, episodes, dormancy and wake-up, notification gating,
 * piggyback stamping, rejection of malformed or foreign control messages.
 * The randomized and adversarial checks live in the simulator tests.
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

static void world_init(int n, const char *algo, int gate)
{
    memset(&W, 0, sizeof W);
    W.n = n;
    for (int r = 0; r < n; r++) {
        td_cfg cfg;
        td_cfg_default(&cfg, r, n);
        cfg.gate_on_notify = gate;
        W.rank_of[r] = r;
        td_io io = {.user = &W.rank_of[r], .send = io_send, .announce = io_announce};
        if (td_ctx_init(&W.c[r], td_algo_find(algo), &cfg, &io) != TD_OK)
            abort();
    }
}
static void world_fini(void)
{
    for (int r = 0; r < W.n; r++)
        td_ctx_fini(&W.c[r]);
}
/* deliver every control message; returns how many */
static int drain(void)
{
    int k = 0;
    while (W.head != W.tail) {
        pkt p = W.q[W.head++ % MAXQ];
        td_control(&W.c[p.dst], p.src, p.w, TD_WIRE_SIZE);
        k++;
    }
    return k;
}
static int all_announced(uint32_t ep)
{
    for (int r = 0; r < W.n; r++)
        if (W.announced[r] != ep || W.nann[r] != (int)ep)
            return 0;
    return 1;
}
/* rank s sends a primary to rank d; returns after delivery */
static void primary(int s, int d)
{
    uint8_t pb[TD_PB_MAX];
    if (td_primary_send(&W.c[s], d, pb) != TD_OK)
        abort();
    td_primary_recv(&W.c[d], s, pb);
}

int main(void)
{
    tap_plan(19);
    tap_ok(td_algo_find("bcj") && td_algo_find("nope") == NULL, "registry finds bcj and rejects unknown names");
    char names[256];
    td_algo_names(names, sizeof names);
    tap_ok(strstr(names, "bcj") != NULL, "algorithm list names bcj: %s", names);

    world_init(1, "bcj", 0);
    td_passive(&W.c[0]);
    tap_ok(W.nann[0] == 1 && W.announced[0] == 1, "a single rank announces at its first poll");
    td_passive(&W.c[0]);
    tap_ok(W.nann[0] == 1, "polling on after the announcement does not announce again");
    td_activity(&W.c[0]);
    td_passive(&W.c[0]);
    tap_ok(W.nann[0] == 2, "activity (a collective) opens episode 2, announced at the next poll");
    world_fini();

    world_init(7, "bcj", 0);
    for (int r = 6; r >= 1; r--)
        td_passive(&W.c[r]);
    drain();
    tap_ok(W.nann[0] == 0, "no announcement while rank 0 is active");
    td_passive(&W.c[0]);
    drain();
    tap_ok(all_announced(1), "7 ranks: every rank learns episode 1 exactly once");
    uint64_t downs = W.c[0].stats.ctl_sent[1][0];
    tap_ok(downs == 2, "root sent one down per child (%llu)", (unsigned long long)downs);
    for (int r = 0; r < 7; r++)
        td_passive(&W.c[r]);
    drain();
    tap_ok(all_announced(1) && W.c[0].dormant, "a second quiescence with no activity leaves the root dormant, not announcing");
    td_passive(&W.c[0]);
    int k = drain();
    tap_ok(k == 0, "a dormant job exchanges no control messages (%d)", k);
    /* phase 2: rank 5 sends to rank 6, both go passive */
    primary(5, 6);
    drain();
    /* both ranks were dormant: each sends its one wake (the receiver cannot know the sender woke the root) */
    tap_ok(W.c[0].stats.ctl_recv[0][TD_EM_WAKE] == 2 && W.c[5].stats.ctl_sent[0][TD_EM_WAKE] == 1,
           "activity after dormancy: one wake per dormant rank that became active");
    td_passive(&W.c[5]);
    drain();
    tap_ok(W.nann[0] == 1, "no announcement while rank 6 is still active");
    td_passive(&W.c[6]);
    drain();
    tap_ok(all_announced(2), "episode 2 is announced once rank 6 is passive");
    world_fini();

    /* gating: after the announcement nobody takes part until notified */
    world_init(3, "bcj", 1);
    for (int r = 2; r >= 0; r--)
        td_passive(&W.c[r]);
    drain();
    tap_ok(all_announced(1), "gated: episode 1 announced");
    td_activity(&W.c[1]);
    for (int r = 0; r < 3; r++)
        td_passive(&W.c[r]);
    drain();
    tap_ok(W.nann[0] == 1, "gated: no episode 2 before the notifications are consumed");
    for (int r = 0; r < 3; r++) {
        td_notified(&W.c[r]);
        td_passive(&W.c[r]);
    }
    drain();
    tap_ok(all_announced(2), "gated: episode 2 after every rank consumed its notification");
    world_fini();

    /* malformed and foreign control messages */
    world_init(2, "bcj", 0);
    td_msg m = {.algo = 99, .type = 0};
    uint8_t w[TD_WIRE_SIZE];
    td_wire_encode(&m, w);
    int rc = td_control(&W.c[1], 0, w, sizeof w);
    int ok = rc == TD_EWIRE && strstr(W.c[1].errmsg, "algorithm id 99");
    w[0] = 0;
    ok = ok && td_control(&W.c[0], 1, w, sizeof w) == TD_EWIRE && strstr(W.c[0].errmsg, "magic");
    tap_ok(ok, "foreign algorithm id and bad magic are errors with a message: %s", W.c[1].errmsg);
    world_fini();

    /* BCJ's one-byte stamp: exact in the window [r-254, r+1], never below
     * the true sweep outside it (an overestimate only fails a sweep) */
    int exact = 1, safe = 1;
    for (uint32_t r = 0; r < 1200; r++)
        for (uint32_t s = 0; s <= r + 1; s++) {
            uint32_t d = td_bcj_stamp(r, (uint8_t)s);
            if (s + 254 >= r)
                exact &= d == s;
            else
                safe &= d >= s && d <= r + 1;
        }
    tap_ok(exact, "bcj stamp decodes exactly when the sender is at most 254 sweeps behind or 1 ahead");
    tap_ok(safe, "bcj stamp of an older message never decodes below its true sweep");
    return tap_done();
}
