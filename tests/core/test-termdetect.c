/*
 * termdetect (papers/sandia-termdetect-guide.txt, Algorithm 2) driven by the
 * synchronous world of world.h: control messages FIFO, primaries held in transit
 * until the test delivers them. Checks iterations and message counts, a
 * message in transit through two iterations (which fools Algorithm 2 read
 * literally: termdetect-workonly), declared work, the node states the
 * termdetect API reports, episodes and rejection of unexpected messages.
 */
#include "tap.h"
#include "world.h"

#include <stdlib.h>
#include <string.h>

/* exported by termdetect.c for the termdetect API driver */
int td_termdetect_add_work(td_ctx *c, int64_t n);
int td_termdetect_state(const td_ctx *c);

static tw_world W;

enum { UPMSG = 0, REQUEST = 1 };
enum { S_UP = 0, S_DOWN = 1, S_TERMINATE = 2 };

/* rank 1 sends m to rank 3 and m stays in transit while every rank polls:
 * returns 1 if termination was announced with m in transit */
static int in_transit(const char *algo)
{
    tw_init(&W, 4, td_algo_find(algo), NULL);
    tw_send(&W, 1, 3, 0);
    for (int i = 0; i < 4; i++) {
        tw_all_passive(&W);
        tw_drain(&W);
    }
    int bad = W.nann[0] > 0;
    tw_fini(&W);
    return bad;
}

int main(void)
{
    tap_plan(12);
    tap_ok(td_algo_find("termdetect") && td_algo_find("termdetect-workonly"),
           "registry has termdetect and termdetect-workonly");

    tw_init(&W, 1, td_algo_find("termdetect"), NULL);
    tap_ok(td_termdetect_state(&W.c[0]) == S_UP, "a node starts UP");
    td_passive(&W.c[0]);
    tap_ok(W.nann[0] == 1 && td_termdetect_state(&W.c[0]) == S_TERMINATE, "a single rank terminates at its first poll");
    tw_fini(&W);

    tw_init(&W, 7, td_algo_find("termdetect"), NULL);
    for (int r = 6; r >= 1; r--)
        td_passive(&W.c[r]);
    tap_ok(td_termdetect_state(&W.c[6]) == S_DOWN && td_termdetect_state(&W.c[1]) == S_UP,
           "a leaf that sent its counts is DOWN, an internal node waiting for a child is UP");
    td_passive(&W.c[0]);
    tw_until_announced(&W, 1);
    uint64_t up_n = tw_sent(&W, UPMSG), req_n = tw_sent(&W, REQUEST);
    tw_drain(&W);
    tap_ok(tw_all_announced(&W, 1) && !tw_errors(&W), "7 ranks: every rank learns the termination exactly once");
    tap_ok(up_n == 12 && req_n == 6, "two iterations with equal work: up %llu (12), request %llu (6)",
           (unsigned long long)up_n, (unsigned long long)req_n);
    tap_ok(td_termdetect_state(&W.c[4]) == S_TERMINATE, "every node ends in TERMINATE");
    tw_fini(&W);

    /* declared work between two iterations forces a third */
    tw_init(&W, 3, td_algo_find("termdetect"), NULL);
    td_passive(&W.c[1]);
    td_passive(&W.c[2]);
    td_passive(&W.c[0]);   /* iteration 1 done: request for iteration 2 */
    tw_step(&W);           /* request reaches rank 1 only */
    td_activity(&W.c[2]);
    tap_ok(td_termdetect_add_work(&W.c[2], 5) == TD_OK && td_termdetect_add_work(&W.c[2], -1) == TD_EINVAL,
           "work units are declared through td_termdetect_add_work");
    td_passive(&W.c[2]);
    tw_drain(&W);
    tap_ok(W.nann[0] == 1 && W.c[0].stats.waves == 3, "work performed during an iteration costs one more (%llu iterations)",
           (unsigned long long)W.c[0].stats.waves);
    tw_fini(&W);

    tap_ok(!in_transit("termdetect"), "a message in transit through several iterations is not missed");
    tap_ok(in_transit("termdetect-workonly"), "comparing only work counts misses it (termdetect-workonly caught)");

    tw_init(&W, 3, td_algo_find("termdetect"), NULL);
    td_msg m = {.algo = 4, .type = UPMSG, .seq = 1};
    uint8_t w[TD_WIRE_SIZE];
    td_wire_encode(&m, w);
    int rc = td_control(&W.c[2], 1, w, sizeof w);
    tap_ok(rc == TD_EPROTO && strstr(W.c[2].errmsg, "termdetect:"), "counts from a non-child are a protocol error: %s",
           W.c[2].errmsg);
    tw_fini(&W);
    return tap_done();
}
